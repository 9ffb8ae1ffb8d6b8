/* Triangulation and the N-view exam: exact recovery from exact detections (perspective with
 * distortion, and the orthographic two-view layout), RANSAC against a gross outlier, time
 * offsets, the refinement's gain on noisy data, bad calibrations, allocation failures. */
#include "am_test.h"

#include "anymove/math.h"
#include "anymove/multiview.h"

#include <stdlib.h>
#include <string.h>

static am_calib *ring(size_t C)
{
    am_calib *cal = NULL;
    am_error err = {0};
    if (am_calib_create(C, &cal, &err) != AM_OK) return NULL;
    for (size_t c = 0; c < C; c++) {
        double a = 2 * AM_PI * (double)c / (double)C;
        double pos[3] = {4 * cos(a), 4 * sin(a), 1.0 + 0.5 * (double)(c % 2)}, tgt[3] = {0, 0, 0.5}, up[3] = {0, 0, 1};
        char name[32];
        snprintf(name, sizeof name, "c%zu", c);
        am_camera_look_at(&cal->cameras[c], name, pos, tgt, up, 1280, 720, AM_RAD(60));
        cal->cameras[c].dist[0] = -0.08;
        cal->cameras[c].dist[1] = 0.01;
        cal->cameras[c].dist[2] = 0.001;
    }
    return cal;
}

static am_mdet *project_points(const am_calib *cal, const double *X, size_t T, size_t J)
{
    am_mdet *d = NULL;
    am_error err = {0};
    if (am_mdet_create(cal->camera_count, T, J, &d, &err) != AM_OK) return NULL;
    for (size_t c = 0; c < cal->camera_count; c++) d->cameras[c] = am_strdup(cal->cameras[c].name);
    for (size_t j = 0; j < J; j++) {
        char n[32];
        snprintf(n, sizeof n, "j%zu", j);
        d->names[j] = am_strdup(n);
    }
    for (size_t c = 0; c < cal->camera_count; c++)
        for (size_t i = 0; i < T * J; i++) {
            double uv[2];
            if (!am_camera_project(&cal->cameras[c], X + 3 * i, uv, NULL)) continue;
            d->uv[(c * T * J + i) * 2] = (float)uv[0];
            d->uv[(c * T * J + i) * 2 + 1] = (float)uv[1];
            d->conf[c * T * J + i] = 0.9f;
        }
    return d;
}

static double *random_points(size_t n, uint64_t seed)
{
    double *X = malloc(3 * n * sizeof *X);
    uint64_t s = seed;
    for (size_t i = 0; i < 3 * n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        X[i] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * (i % 3 == 2 ? 1.0 : 1.6) + (i % 3 == 2 ? 0.5 : 0);
    }
    return X;
}

static void triangulate_recovers_exact_points(void)
{
    am_calib *cal = ring(4);
    const size_t T = 20, J = 5;
    double *X = random_points(T * J, 7);
    am_mdet *d = project_points(cal, X, T, J);
    am_triangulation *tri = NULL;
    am_error err = {0};
    for (int ransac = 0; ransac < 2; ransac++) {
        am_triangulate_opts o = {.flags = ransac ? 0 : AM_TRI_NO_RANSAC};
        AM_CHECK_OK(am_triangulate(d, cal, &o, &tri, &err), &err);
        if (!tri) continue;
        AM_CHECK(tri->triangulated == T * J);
        am_test_diff diff = {0};
        for (size_t i = 0; i < 3 * T * J; i++) am_test_diff_add(&diff, tri->joints->joints[i], X[i]);
        /* float32 pixels: ~3e-5 px, a few micrometres at 4 m. */
        AM_CHECK_MSG(diff.max < 2e-5, "max error %g m", diff.max);
        AM_CHECK_MSG(tri->p95_px < 1e-3, "p95 reprojection %g px", tri->p95_px);
        AM_CHECK(tri->cameras_used[0] == 4 && tri->cam_used[3] == T * J);
        am_triangulation_free(tri);
        tri = NULL;
    }
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

static void ransac_rejects_an_outlier_camera(void)
{
    am_calib *cal = ring(4);
    const size_t T = 10, J = 3;
    double *X = random_points(T * J, 11);
    am_mdet *d = project_points(cal, X, T, J);
    /* Camera 2 reads joint 1 60 px off in every frame. */
    for (size_t t = 0; t < T; t++) d->uv[((2 * T + t) * J + 1) * 2] += 60.0f;
    am_triangulation *tri = NULL;
    am_error err = {0};
    am_triangulate_opts o = {0};
    AM_CHECK_OK(am_triangulate(d, cal, &o, &tri, &err), &err);
    if (tri) {
        for (size_t t = 0; t < T; t++) {
            size_t i = t * J + 1;
            AM_CHECK(tri->used[(2 * T + t) * J + 1] == 0 && tri->cameras_used[i] == 3);
            AM_CHECK_NEAR(am_vec3_dist(tri->joints->joints + 3 * i, X + 3 * i), 0, 2e-5);
        }
        AM_CHECK(tri->ransac_dropped == T);
        am_triangulation_free(tri);
    }
    o.flags = AM_TRI_NO_RANSAC;
    AM_CHECK_OK(am_triangulate(d, cal, &o, &tri, &err), &err);
    if (tri) {
        AM_CHECK(am_vec3_dist(tri->joints->joints + 3, X + 3) > 5e-3);
        am_triangulation_free(tri);
    }
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

static void triangulate_refuses_unknown_cameras(void)
{
    am_calib *cal = ring(3);
    double *X = random_points(4, 3);
    am_mdet *d = project_points(cal, X, 2, 2);
    am_free(d->cameras[1]);
    d->cameras[1] = am_strdup("missing_cam");
    am_triangulation *tri = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_triangulate(d, cal, NULL, &tri, &err), AM_E_NAME);
    AM_CHECK(strstr(err.info, "missing_cam") && strstr(err.info, "'c2'") && !tri);
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

static am_rig *load_rig(void)
{
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_load(am_test_source("examples/creatures/wolf/rig.json"), &rig, &err), &err);
    return rig;
}

/* The two views of SPEC 3 are two orthographic cameras: the exam's clean reading triangulates to
 * its truth. */
static void two_view_reading_triangulates_through_the_same_path(void)
{
    am_rig *rig = load_rig();
    if (!rig) return;
    am_exam *ex = NULL;
    am_error err = {0};
    am_exam_opts eo = {.frames = 30};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &eo, &ex, &err), &err);
    am_mdet *d = NULL;
    am_calib *cal = NULL;
    am_triangulation *tri = NULL;
    if (ex) AM_CHECK_OK(am_mdet_from_two_view(ex->det, &d, &err), &err);
    AM_CHECK_OK(am_cameras_from_layout(NULL, &cal, &err), &err);
    if (d && cal) AM_CHECK_OK(am_triangulate(d, cal, NULL, &tri, &err), &err);
    if (tri) {
        am_test_diff diff = {0};
        for (size_t i = 0; i < 30 * rig->joint_count * 3; i++) am_test_diff_add(&diff, tri->joints->joints[i], ex->truth->joints[i]);
        AM_CHECK_MSG(diff.max < 1e-5 && tri->triangulated == 30 * rig->joint_count, "max %g m, %zu points", diff.max,
                     tri->triangulated);
    }
    am_triangulation_free(tri);
    am_calib_free(cal);
    am_mdet_free(d);
    am_exam_free(ex);
    am_rig_free(rig);
}

static double mean_error(const am_triangulation *tri, const double *truth, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const double *p = tri->joints->joints + 3 * i;
        if (isnan(p[0])) continue;
        s += am_vec3_dist(p, truth + 3 * i);
        k++;
    }
    return k ? s / (double)k : INFINITY;
}

static void mexam_offsets_occlusion_and_refinement(void)
{
    am_rig *rig = load_rig();
    if (!rig) return;
    am_error err = {0};
    am_mexam *ex = NULL;
    am_mexam_opts mo = {.motion = {.frames = 90, .seed = 3}, .cameras = 4, .max_offset = 3};
    AM_CHECK_OK(am_mexam_generate(rig, NULL, NULL, &mo, &ex, &err), &err);
    if (!ex) goto out;
    const size_t T = 90, J = rig->joint_count;
    bool shifted = false;
    for (size_t c = 0; c < 4; c++) shifted |= ex->offsets[c] != 0;
    AM_CHECK(shifted && ex->det->time_offset && ex->cameras->camera_count == 4);
    am_triangulation *tri = NULL;
    AM_CHECK_OK(am_triangulate(ex->det, ex->cameras, NULL, &tri, &err), &err);
    if (tri) {
        /* With the offsets applied the clean reading is exact (frames every camera covers). */
        double e = 0;
        size_t n = 0;
        for (size_t t = 3; t < T - 3; t++)
            for (size_t j = 0; j < J; j++) {
                const double *p = tri->joints->joints + (t * J + j) * 3;
                if (isnan(p[0])) continue;
                double d = am_vec3_dist(p, ex->exam->truth->joints + (t * J + j) * 3);
                if (d > e) e = d;
                n++;
            }
        AM_CHECK_MSG(e < 1e-4 && n > (T - 6) * J * 9 / 10, "max %g m over %zu points", e, n);
        am_triangulation_free(tri);
    }
    am_mexam_free(ex);
    ex = NULL;
    /* Noise, outliers, occlusion: RANSAC and then the refinement each help. */
    am_mexam_opts noisy = {.motion = {.frames = 90, .seed = 5}, .cameras = 4, .noise_px = 3, .outliers = 0.05,
                           .dropout = 0.02, .occlusion = true};
    AM_CHECK_OK(am_mexam_generate(rig, NULL, NULL, &noisy, &ex, &err), &err);
    if (!ex) goto out;
    AM_CHECK_MSG(ex->occluded > 0, "no joint hidden by the body");
    am_triangulation *a = NULL, *b = NULL, *r = NULL;
    int32_t *edges = malloc(2 * rig->bone_count * sizeof *edges);
    size_t ne = 0;
    for (size_t k = 0; k < rig->bone_count; k++)
        if (rig->head_joint[k] != rig->tail_joint[k]) {
            edges[2 * ne] = rig->head_joint[k];
            edges[2 * ne + 1] = rig->tail_joint[k];
            ne++;
        }
    am_triangulate_opts no = {.flags = AM_TRI_NO_RANSAC}, yes = {0},
                        ref = {.flags = AM_TRI_REFINE, .edges = edges, .edge_count = ne, .refine_window = 40};
    AM_CHECK_OK(am_triangulate(ex->det, ex->cameras, &no, &a, &err), &err);
    AM_CHECK_OK(am_triangulate(ex->det, ex->cameras, &yes, &b, &err), &err);
    AM_CHECK_OK(am_triangulate(ex->det, ex->cameras, &ref, &r, &err), &err);
    if (a && b && r) {
        double ea = mean_error(a, ex->exam->truth->joints, T * J), eb = mean_error(b, ex->exam->truth->joints, T * J),
               er = mean_error(r, ex->exam->truth->joints, T * J);
        AM_CHECK_MSG(eb < 0.8 * ea && er < 0.95 * eb, "mean error: all cameras %.4f m, RANSAC %.4f m, refined %.4f m", ea, eb, er);
    }
    free(edges);
    am_triangulation_free(a);
    am_triangulation_free(b);
    am_triangulation_free(r);
out:
    am_mexam_free(ex);
    am_rig_free(rig);
}

static void triangulate_survives_allocation_failures(void)
{
    am_calib *cal = ring(3);
    double *X = random_points(6, 5);
    am_mdet *d = project_points(cal, X, 3, 2);
    am_triangulation *tri = NULL;
    am_error err = {0};
    am_test_alloc_limit(0);
    am_triangulate_opts o = {.flags = AM_TRI_REFINE};
    AM_CHECK_OK(am_triangulate(d, cal, &o, &tri, &err), &err);
    am_triangulation_free(tri);
    uint64_t need = am_test_alloc_count();
    for (uint64_t k = 1; k < need; k++) {
        am_test_alloc_limit(k);
        tri = NULL;
        am_status s = am_triangulate(d, cal, &o, &tri, &err);
        AM_CHECK_MSG(s == AM_E_NOMEM && !tri, "limit %llu: %s", (unsigned long long)k, am_status_name(s));
        am_triangulation_free(tri);
    }
    am_test_alloc_limit(0);
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

/* A joint no camera ever saw stays missing through the refinement, which holds it fixed
 * (NaN bounds once made the solver refuse the whole clip), and the edges it ends are skipped. */
static void refinement_holds_a_joint_never_seen(void)
{
    am_calib *cal = ring(3);
    const size_t T = 12, J = 4;
    /* a body gliding at constant speed: no acceleration for the smoothness term to remove */
    double *P = random_points(J, 11), *X = malloc(T * J * 3 * sizeof *X);
    for (size_t t = 0; X && t < T; t++)
        for (size_t i = 0; i < 3 * J; i++) X[t * J * 3 + i] = P[i] + (i % 3 == 0 ? 0.01 : i % 3 == 1 ? -0.02 : 0.0) * (double)t;
    am_mdet *d = X ? project_points(cal, X, T, J) : NULL;
    am_triangulation *tri = NULL;
    am_error err = {0};
    for (size_t c = 0; d && c < cal->camera_count; c++)
        for (size_t t = 0; t < T; t++) d->conf[(c * T + t) * J + 2] = 0.0f;
    const int32_t edges[4] = {0, 1, 1, 2};
    am_triangulate_opts o = {.flags = AM_TRI_REFINE, .edges = edges, .edge_count = 2};
    if (d) AM_CHECK_OK(am_triangulate(d, cal, &o, &tri, &err), &err);
    if (tri) {
        AM_CHECK(tri->triangulated == T * (J - 1));
        am_test_diff diff = {0};
        for (size_t i = 0; i < T * J; i++) {
            if (i % J == 2) {
                AM_CHECK(isnan(tri->joints->joints[3 * i]) && isnan(tri->reproj_px[i]));
                continue;
            }
            for (int q = 0; q < 3; q++) am_test_diff_add(&diff, tri->joints->joints[3 * i + (size_t)q], X[3 * i + (size_t)q]);
        }
        /* exact detections of a smooth motion: the refinement keeps every point where it was */
        AM_CHECK_MSG(diff.max < 1e-4, "max error %g m", diff.max);
    }
    am_triangulation_free(tri);
    free(P);
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

/* ---- camera bundle adjustment ---- */

/* Rotate camera c by a small rotation and shift it; focal times f. */
static void perturb_camera(am_camera *cam, const double dw[3], const double dt[3], double f)
{
    double dR[9], R[9];
    am_rodrigues_to_mat3(dw, dR);
    am_mat3_mul(dR, cam->R, R);
    am_rodrigues_from_mat3(R, cam->rvec);
    for (int i = 0; i < 3; i++) cam->t[i] += dt[i];
    cam->K[0] *= f, cam->K[4] *= f;
    am_camera_update(cam);
}

/* Worst rotation (deg) and centre error (m) of cal against the truth, after scaling the truth's
 * centres about camera 0 to cal's spread: the adjustment keeps the spread it is given. */
static void pose_errors(const am_calib *truth, const am_calib *cal, double *rot_deg, double *centre_m)
{
    const size_t C = truth->camera_count;
    double t0[3], a0[3], st = 0, sa = 0;
    am_camera_centre(&truth->cameras[0], t0);
    am_camera_centre(&cal->cameras[0], a0);
    for (size_t c = 1; c < C; c++) {
        double ct[3], ca[3];
        am_camera_centre(&truth->cameras[c], ct);
        am_camera_centre(&cal->cameras[c], ca);
        st += am_vec3_dist(ct, t0);
        sa += am_vec3_dist(ca, a0);
    }
    *rot_deg = 0, *centre_m = 0;
    for (size_t c = 0; c < C; c++) {
        double ct[3], ca[3], Rt[9], D[9];
        am_camera_centre(&truth->cameras[c], ct);
        am_camera_centre(&cal->cameras[c], ca);
        for (int q = 0; q < 3; q++) ct[q] = t0[q] + (ct[q] - t0[q]) * sa / st;
        double dc = am_vec3_dist(ct, ca);
        am_mat3_transpose(truth->cameras[c].R, Rt);
        am_mat3_mul(cal->cameras[c].R, Rt, D);
        double tr = (D[0] + D[4] + D[8] - 1) / 2;
        double ang = AM_DEG(acos(tr > 1 ? 1 : tr < -1 ? -1 : tr));
        if (ang > *rot_deg) *rot_deg = ang;
        if (dc > *centre_m) *centre_m = dc;
    }
}

static am_calib *copy_ring(const am_calib *src)
{
    am_calib *cal = NULL;
    am_error err = {0};
    if (am_calib_create(src->camera_count, &cal, &err) != AM_OK) return NULL;
    memcpy(cal->cameras, src->cameras, src->camera_count * sizeof *cal->cameras);
    return cal;
}

/* Exact detections seen by a known ring; cameras 1..C-1 perturbed by ~2 degrees and ~10 cm:
 * the adjustment brings back every pose (up to the kept scale) and the reprojection error to
 * the float pixels' noise; camera 0 does not move. With AM_ADJUST_FOCAL a 4 % focal error is
 * recovered too. */
static void adjust_recovers_perturbed_cameras(void)
{
    const size_t C = 5, T = 60, J = 4;
    am_calib *truth = ring(C);
    double *X = random_points(T * J, 11);
    am_mdet *d = project_points(truth, X, T, J);
    for (int focal = 0; focal < 2; focal++) {
        am_calib *cal = copy_ring(truth);
        if (!cal || !d) break;
        for (size_t c = 1; c < C; c++) {
            double s = (double)c;
            double dw[3] = {0.03 * sin(s), -0.025 * cos(2 * s), 0.02 * sin(3 * s)};
            double dt[3] = {0.1 * cos(s), 0.08 * sin(2 * s), -0.06 * cos(3 * s)};
            perturb_camera(&cal->cameras[c], dw, dt, focal ? 1.0 + 0.04 * sin(5 * s) : 1.0);
        }
        double rot0, ctr0;
        pose_errors(truth, cal, &rot0, &ctr0);
        am_adjust_opts o = {.flags = focal ? AM_ADJUST_FOCAL : 0};
        am_adjustment *adj = NULL;
        am_error err = {0};
        AM_CHECK_OK(am_cameras_adjust(d, cal, &o, &adj, &err), &err);
        if (adj) {
            double rot, ctr;
            pose_errors(truth, adj->cameras, &rot, &ctr);
            AM_CHECK_MSG(rot0 > 1.0 && ctr0 > 0.1, "the perturbation is %g deg, %g m", rot0, ctr0);
            AM_CHECK_MSG(rot < 0.01 && ctr < 2e-3, "focal %d: poses off by %g deg, %g m (from %g deg, %g m)", focal, rot,
                         ctr, rot0, ctr0);
            AM_CHECK_MSG(adj->before_px > 10 && adj->after_px < 0.01, "median %g px -> %g px", adj->before_px,
                         adj->after_px);
            AM_CHECK(adj->points == T * J && adj->scored_after == T * J && adj->moved_m[0] == 0 &&
                     adj->turned_deg[0] == 0);
            AM_CHECK(memcmp(adj->cameras->cameras[0].t, cal->cameras[0].t, sizeof cal->cameras[0].t) == 0);
            for (size_t c = 1; c < C && focal; c++)
                /* focal against depth is the weakest direction of a ring this small: 0.3 % is
                 * what the alternation reaches of the 4 % error */
                AM_CHECK_MSG(fabs(adj->cameras->cameras[c].K[0] / truth->cameras[c].K[0] - 1) < 5e-3,
                             "camera %zu: focal %g for %g", c, adj->cameras->cameras[c].K[0], truth->cameras[c].K[0]);
            AM_CHECK(adj->warnings.count == 0);
        }
        am_adjustment_free(adj);
        am_calib_free(cal);
    }
    free(X);
    am_mdet_free(d);
    am_calib_free(truth);
}

/* Bad input: a camera missing from the calibration, one camera, too few points; every
 * allocation failure gives AM_E_NOMEM and nothing left behind. */
static void adjust_refuses_bad_input_and_survives_allocation_failures(void)
{
    am_calib *cal = ring(3);
    double *X = random_points(40, 3);
    am_mdet *d = project_points(cal, X, 10, 4);
    am_adjustment *adj = NULL;
    am_error err = {0};
    if (!d) goto done;
    snprintf(cal->cameras[2].name, sizeof cal->cameras[2].name, "renamed");
    AM_CHECK_STATUS(am_cameras_adjust(d, cal, NULL, &adj, &err), AM_E_NAME);
    AM_CHECK(adj == NULL && strstr(err.info, "c2") != NULL);
    snprintf(cal->cameras[2].name, sizeof cal->cameras[2].name, "c2");
    /* a det reading 3 points in two cameras or more */
    for (size_t c = 1; c < 3; c++)
        for (size_t i = 3; i < 40; i++) d->conf[c * 40 + i] = 0;
    AM_CHECK_STATUS(am_cameras_adjust(d, cal, NULL, &adj, &err), AM_E_EMPTY);
    AM_CHECK(adj == NULL && am_status_fault(AM_E_EMPTY) == AM_FAULT_INPUT);
    for (size_t c = 1; c < 3; c++)
        for (size_t i = 3; i < 40; i++) d->conf[c * 40 + i] = 0.9f;
    am_adjust_opts o = {.rounds = 2, .alternations = 2};
    am_test_alloc_limit(0);
    AM_CHECK_OK(am_cameras_adjust(d, cal, &o, &adj, &err), &err);
    am_adjustment_free(adj);
    uint64_t need = am_test_alloc_count();
    AM_CHECK(need > 10);
    for (uint64_t k = 1; k < need; k++) {
        am_test_alloc_limit(k);
        adj = NULL;
        am_status s = am_cameras_adjust(d, cal, &o, &adj, &err);
        AM_CHECK_MSG(s == AM_E_NOMEM && !adj, "limit %llu: %s", (unsigned long long)k, am_status_name(s));
        am_adjustment_free(adj);
    }
    am_test_alloc_limit(0);
done:
    free(X);
    am_mdet_free(d);
    am_calib_free(cal);
}

#define AM_TESTS(X)                                                                                                \
    X(triangulate_recovers_exact_points) X(ransac_rejects_an_outlier_camera) X(triangulate_refuses_unknown_cameras) \
    X(two_view_reading_triangulates_through_the_same_path) X(mexam_offsets_occlusion_and_refinement)               \
    X(triangulate_survives_allocation_failures) X(refinement_holds_a_joint_never_seen)                            \
    X(adjust_recovers_perturbed_cameras) X(adjust_refuses_bad_input_and_survives_allocation_failures)
AM_TEST_MAIN(AM_TESTS)
