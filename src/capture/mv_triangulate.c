/* Triangulation of joints seen by N calibrated cameras (anymove/multiview.h).
 *
 * This work is based on:
 * - R. Hartley, A. Zisserman, "Multiple View Geometry", 2nd ed., 12.2: linear triangulation.
 *   We solve its inhomogeneous form (X4 = 1) on rows that measure lateral offset in metres
 *   (camera.h am_camera_ray_rows), then re-weight each camera's rows by its px per metre at the
 *   point: a 3x3 weighted least squares that approximates the pixel reprojection error, twice as
 *   cheap as the SVD of the homogeneous DLT and the same for every point not at infinity.
 * - P. Karashchuk et al. 2021, "Anipose" (aniposelib triangulate_ransac, optim_points): camera
 *   subsets by RANSAC over pairs, and the whole-clip refinement with smoothness and constant
 *   limb lengths.
 * - D. Pagnon et al. 2022, "Pose2Sim": dropping the worst camera while the reprojection error
 *   stays over the threshold.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/multiview.h"
#include "anymove/opt.h"
#include "capture/capture_internal.h"
#include "core/internal.h"
#include "io/json_internal.h"

#define AMI_TRI_MAX_CAMS 64

static am_triangulate_opts ami_tri_opts_defaults(const am_triangulate_opts *in)
{
    am_triangulate_opts o = in ? *in : (am_triangulate_opts){0};
    if (o.min_conf == 0) o.min_conf = 0.1;
    if (o.min_conf < 0) o.min_conf = 0;
    if (o.ransac_px <= 0) o.ransac_px = 15.0;
    if (o.max_pairs == 0) o.max_pairs = 36;
    if (o.refine_loss_px <= 0) o.refine_loss_px = 5.0;
    if (o.w_smooth == 0) o.w_smooth = 0.05;
    if (o.w_bone == 0) o.w_bone = 300.0;
    if (o.refine_iterations == 0) o.refine_iterations = 15;
    if (o.refine_window < 8) o.refine_window = 400;
    return o;
}

void am_triangulation_free(am_triangulation *tri)
{
    if (!tri) return;
    am_joints_free(tri->joints);
    am_free(tri->reproj_px);
    am_free(tri->cameras_used);
    am_free(tri->used);
    am_free(tri->cam_seen);
    am_free(tri->cam_used);
    am_free(tri->cam_mean_px);
    am_free(tri->cam_p95_px);
    am_free(tri->cam_mean_all_px);
    am_warning_list_free(&tri->warnings);
    am_free(tri);
}

/* Weighted least squares over the observations with mask bit set; scale[k] multiplies camera
 * k's rows (1 or its px per metre). Returns false when the rays do not pin the point down. */
static bool ami_solve(const ami_obs *o, size_t n, const uint8_t *mask, const double *scale, double X[3])
{
    double A[9] = {0}, b[3] = {0};
    for (size_t k = 0; k < n; k++) {
        if (!mask[k]) continue;
        double w2 = o[k].w * scale[k];
        w2 *= w2;
        for (int r = 0; r < 2; r++) {
            const double *row = o[k].rows + 4 * r;
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j <= i; j++) A[3 * i + j] += w2 * row[i] * row[j];
                b[i] -= w2 * row[i] * row[3];
            }
        }
    }
    A[1] = A[3], A[2] = A[6], A[5] = A[7];
    double tr = A[0] + A[4] + A[8];
    double det = am_mat3_det(A);
    /* Near-parallel rays: the smallest eigenvalue is tiny against the others. */
    if (!(tr > 0) || !(det > 1e-10 * tr * tr * tr / 27.0)) return false;
    double Ai[9];
    if (!am_mat3_inverse(A, Ai)) return false;
    am_mat3_mul_vec3(Ai, b, X);
    return isfinite(X[0]) && isfinite(X[1]) && isfinite(X[2]);
}

/* Reprojection error (px) of X in every observation; INFINITY behind a camera. */
void ami_tri_errors(const ami_obs *o, size_t n, const double X[3], double *e)
{
    for (size_t k = 0; k < n; k++) {
        double uv[2];
        bool ok = am_camera_project(o[k].cam, X, uv, NULL);
        e[k] = ok ? hypot(uv[0] - o[k].uv[0], uv[1] - o[k].uv[1]) : INFINITY;
    }
}

/* Solve with conf weights, then re-weighted to pixels at the first solution. */
bool ami_tri_solve_px(const ami_obs *o, size_t n, const uint8_t *mask, double X[3])
{
    double s[AMI_TRI_MAX_CAMS] = {0};
    for (size_t k = 0; k < n; k++) s[k] = 1.0;
    if (!ami_solve(o, n, mask, s, X)) return false;
    for (size_t k = 0; k < n; k++) s[k] = am_camera_px_per_m(o[k].cam, X);
    double X2[3];
    if (!ami_solve(o, n, mask, s, X2)) return true;
    memcpy(X, X2, sizeof X2);
    return true;
}

static size_t ami_count(const uint8_t *m, size_t n)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++) c += m[k];
    return c;
}

/* The point from its observations: mask (in: all 1) ends holding the cameras used. Returns
 * false when no consistent pair of cameras sees it. */
static bool ami_point(const ami_obs *o, size_t n, const am_triangulate_opts *opt, uint64_t seed, uint8_t *mask,
                      double X[3], double *e)
{
    const double thr = opt->ransac_px;
    if (n < 2 || !ami_tri_solve_px(o, n, mask, X)) return false;
    ami_tri_errors(o, n, X, e);
    if (opt->flags & AM_TRI_NO_RANSAC) {
        /* Even without RANSAC a point behind a camera that saw it is no answer. */
        for (size_t k = 0; k < n; k++)
            if (!isfinite(e[k])) return false;
        return true;
    }
    double worst = 0;
    for (size_t k = 0; k < n; k++)
        if (e[k] > worst) worst = e[k];
    if (worst <= thr) return true;
    if (n >= 3) {
        /* Hypotheses from camera pairs; every pair when there are few, else a fixed sample. */
        size_t pairs = n * (n - 1) / 2, tries = pairs <= opt->max_pairs ? pairs : opt->max_pairs;
        size_t best_n = 0;
        double best_cost = INFINITY;
        uint8_t best[AMI_TRI_MAX_CAMS] = {0}, m[AMI_TRI_MAX_CAMS];
        double eh[AMI_TRI_MAX_CAMS], Xh[3];
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
        for (size_t h = 0; h < tries; h++) {
            size_t a, b;
            if (tries == pairs) {
                size_t idx = h;
                a = 0;
                while (idx >= n - 1 - a) {
                    idx -= n - 1 - a;
                    a++;
                }
                b = a + 1 + idx;
            } else {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                a = (size_t)(s % n);
                b = (size_t)((s >> 32) % (n - 1));
                if (b >= a) b++;
            }
            memset(m, 0, n);
            m[a] = m[b] = 1;
            if (!ami_tri_solve_px(o, n, m, Xh)) continue;
            ami_tri_errors(o, n, Xh, eh);
            if (!(eh[a] <= thr && eh[b] <= thr)) continue;
            size_t cnt = 0;
            double cost = 0;
            for (size_t k = 0; k < n; k++) {
                m[k] = eh[k] <= thr;
                cnt += m[k];
                cost += m[k] ? eh[k] : 0.0;
            }
            if (cnt > best_n || (cnt == best_n && cost < best_cost)) {
                best_n = cnt;
                best_cost = cost;
                memcpy(best, m, n);
            }
        }
        if (best_n < 2) return false;
        memcpy(mask, best, n);
        if (!ami_tri_solve_px(o, n, mask, X)) return false;
        ami_tri_errors(o, n, X, e);
    }
    /* Drop the worst camera while it is over the threshold (Pose2Sim). */
    for (;;) {
        size_t worst_k = n;
        double w = thr;
        for (size_t k = 0; k < n; k++)
            if (mask[k] && e[k] > w) w = e[k], worst_k = k;
        if (worst_k == n) return true;
        if (ami_count(mask, n) <= 2) return false;
        mask[worst_k] = 0;
        if (!ami_tri_solve_px(o, n, mask, X)) return false;
        ami_tri_errors(o, n, X, e);
    }
}

static int ami_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ami_tri_quantile(double *v, size_t n, double q)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, ami_cmp_double);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[n - 1];
}

am_status ami_triangulate(const am_mdet *det, const am_calib *cal, const am_triangulate_opts *opts_in, bool quiet,
                          am_triangulation **out, am_error *err)
{
    assert(det && cal && out);
    assert(am_reals_valid(am_mdet_uv(det)) && am_reals_valid(am_mdet_conf(det))); /* the arrays, whichever fields */
    *out = NULL;
    const am_triangulate_opts o = ami_tri_opts_defaults(opts_in);
    ami_stage stage = quiet ? (ami_stage){.t0 = am_now()} : ami_stage_begin("triangulate");
    const size_t C = det->camera_count, T = det->frame_count, J = det->joint_count;
    am_status st = AM_OK;
    am_triangulation *tri = NULL;
    const am_camera **cams = NULL;
    ami_obs *obs = NULL;
    if (C > AMI_TRI_MAX_CAMS) {
        st = AM_FAIL(err, AM_E_LIMIT, "%zu cameras (at most %d)", C, AMI_TRI_MAX_CAMS);
        goto done;
    }
    for (size_t k = 0; k < o.edge_count; k++)
        if (o.edges[2 * k] < 0 || (size_t)o.edges[2 * k] >= J || o.edges[2 * k + 1] < 0 ||
            (size_t)o.edges[2 * k + 1] >= J) {
            st = AM_FAIL(err, AM_E_ARG, "edge %zu names joint %d / %d of %zu", k, o.edges[2 * k], o.edges[2 * k + 1], J);
            goto done;
        }
    cams = am_alloc_array(C, sizeof *cams);
    tri = am_alloc(sizeof *tri);
    if (!cams || !tri) {
        st = AM_FAIL(err, AM_E_NOMEM, "triangulation");
        goto done;
    }
    for (size_t c = 0; c < C; c++) {
        int k = am_calib_find(cal, det->cameras[c]);
        if (k < 0) {
            char names[512];
            size_t n = 0;
            names[0] = '\0';
            for (size_t q = 0; q < cal->camera_count && n < sizeof names - 40; q++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s'%s'", q ? ", " : "", cal->cameras[q].name);
            st = AM_FAIL(err, AM_E_NAME, "camera '%s' of the detections is not in the calibration (it has %s)",
                         det->cameras[c], names);
            goto done;
        }
        cams[c] = &cal->cameras[k];
    }
    tri->camera_count = C;
    tri->frame_count = T;
    tri->joint_count = J;
    tri->points = T * J;
    if ((st = am_joints_create(T, J, true, &tri->joints, err)) != AM_OK) goto done;
    tri->joints->fps = det->fps;
    for (size_t j = 0; j < J; j++)
        if (!(tri->joints->names[j] = am_strdup(det->names[j]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
    tri->reproj_px = am_alloc_array(T * J, sizeof *tri->reproj_px);
    tri->cameras_used = am_alloc_array(T * J, 1);
    tri->used = am_alloc_array(C * T * J, 1);
    tri->cam_seen = am_alloc_array(C, sizeof(size_t));
    tri->cam_used = am_alloc_array(C, sizeof(size_t));
    tri->cam_mean_px = am_alloc_array(C, sizeof(double));
    tri->cam_p95_px = am_alloc_array(C, sizeof(double));
    tri->cam_mean_all_px = am_alloc_array(C, sizeof(double));
    obs = am_alloc_array(C, sizeof *obs);
    if (!tri->reproj_px || !tri->cameras_used || !tri->used || !tri->cam_seen || !tri->cam_used || !tri->cam_mean_px ||
        !tri->cam_p95_px || !tri->cam_mean_all_px || !obs) {
        st = AM_FAIL(err, AM_E_NOMEM, "triangulation of %zu x %zu x %zu", C, T, J);
        goto done;
    }
    for (size_t t = 0; t < T; t++) {
        if ((t & 255) == 0 && !ami_progress("triangulate", (double)t / (double)T)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "triangulation");
            goto done;
        }
        for (size_t j = 0; j < J; j++) {
            size_t n = 0;
            for (size_t c = 0; c < C; c++) {
                ami_obs *ob = &obs[n];
                double conf;
                if (!am_mdet_reading(det, c, t, j, ob->uv, &conf) || conf < o.min_conf) continue;
                tri->cam_seen[c]++;
                if (!am_camera_undistort(cams[c], ob->uv, ob->ab)) {
                    tri->undistort_failed++;
                    continue;
                }
                ob->cam = cams[c];
                ob->c = (int)c;
                ob->w = conf > 1e-3 ? conf : 1e-3;
                am_camera_ray_rows(cams[c], ob->ab, ob->rows);
                n++;
            }
            uint8_t mask[AMI_TRI_MAX_CAMS];
            double X[3], e[AMI_TRI_MAX_CAMS];
            memset(mask, 1, n);
            double *dst = tri->joints->joints + (t * J + j) * 3;
            size_t i = t * J + j;
            if (!ami_point(obs, n, &o, i, mask, X, e)) {
                tri->reproj_px[i] = NAN;
                tri->joints->conf[i] = 0.0;
                tri->ransac_dropped += n;
                continue;
            }
            memcpy(dst, X, sizeof X);
            double se = 0, sc = 0;
            size_t used = 0;
            for (size_t k = 0; k < n; k++) {
                if (!mask[k]) {
                    tri->ransac_dropped++;
                    continue;
                }
                tri->used[((size_t)obs[k].c * T + t) * J + j] = 1;
                se += e[k];
                sc += obs[k].w;
                used++;
            }
            tri->reproj_px[i] = (float)(se / (double)used);
            tri->cameras_used[i] = (uint8_t)used;
            tri->joints->conf[i] = sc / (double)used;
            tri->triangulated++;
        }
    }
    if ((o.flags & AM_TRI_REFINE) && (st = ami_tri_refine(det, cams, &o, tri, err)) != AM_OK) goto done;

    /* Per-camera statistics against the final points. */
    {
        size_t cap = T * J;
        double *v = am_alloc_array(cap ? cap : 1, sizeof *v), *all = am_alloc_array(C * T * J + 1, sizeof *all);
        if (!v || !all) {
            am_free(v);
            am_free(all);
            st = AM_FAIL(err, AM_E_NOMEM, "statistics");
            goto done;
        }
        size_t na = 0;
        for (size_t c = 0; c < C; c++) {
            size_t n = 0;
            double sum_all = 0;
            size_t n_all = 0;
            for (size_t t = 0; t < T; t++)
                for (size_t j = 0; j < J; j++) {
                    const double *X = tri->joints->joints + (t * J + j) * 3;
                    double uv[2], pr[2], conf;
                    if (isnan(X[0]) || !am_mdet_reading(det, c, t, j, uv, &conf) || conf < o.min_conf) continue;
                    am_camera_project(cams[c], X, pr, NULL);
                    double e = hypot(pr[0] - uv[0], pr[1] - uv[1]);
                    if (!isfinite(e)) continue;
                    sum_all += e;
                    n_all++;
                    if (tri->used[(c * T + t) * J + j]) {
                        v[n++] = e;
                        all[na++] = e;
                    }
                }
            tri->cam_used[c] = n;
            double s = 0;
            for (size_t k = 0; k < n; k++) s += v[k];
            tri->cam_mean_px[c] = n ? s / (double)n : NAN;
            tri->cam_p95_px[c] = ami_tri_quantile(v, n, 0.95);
            tri->cam_mean_all_px[c] = n_all ? sum_all / (double)n_all : NAN;
        }
        double s = 0;
        for (size_t k = 0; k < na; k++) s += all[k];
        tri->mean_px = na ? s / (double)na : NAN;
        tri->median_px = ami_tri_quantile(all, na, 0.5);
        tri->p95_px = na ? all[(size_t)(0.95 * (double)(na - 1))] : NAN;
        am_free(v);
        am_free(all);
    }
    if (tri->undistort_failed)
        ami_warn(AM_WARN_DEGRADED, "%zu detections lie where the lens model cannot be inverted and were not used",
                 tri->undistort_failed);
    if (tri->triangulated == 0)
        ami_warn(AM_WARN_MISSING_DATA, "no joint was seen by two cameras that agree: every position is missing");
    tri->seconds = quiet ? am_now() - stage.t0 : ami_stage_end(&stage);

done:
    am_free(cams);
    am_free(obs);
    if (st != AM_OK) {
        am_triangulation_free(tri);
        return st;
    }
    *out = tri;
    return AM_OK;
}

am_status am_triangulate(const am_mdet *det, const am_calib *cal, const am_triangulate_opts *opts,
                         am_triangulation **out, am_error *err)
{
    am_scope scope;
    am_scope_enter(&scope, opts ? &opts->ctx : NULL);
    am_status st = ami_triangulate(det, cal, opts, false, out, err);
    am_scope_leave(&scope, st == AM_OK ? &(*out)->warnings : NULL);
    return st;
}

/* ---- outputs ---- */
am_status am_triangulation_summary_write(const char *path, const am_triangulation *tri, const am_mdet *det,
                                         am_error *err)
{
    assert(path && tri && det);
    const size_t C = tri->camera_count, T = tri->frame_count, J = tri->joint_count;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_int(&w, "frames", (int64_t)T);
    ami_jw_int(&w, "joints", (int64_t)J);
    ami_jw_int(&w, "cameras", (int64_t)C);
    ami_jw_int(&w, "points", (int64_t)tri->points);
    ami_jw_int(&w, "triangulated", (int64_t)tri->triangulated);
    ami_jw_int(&w, "ransac_dropped", (int64_t)tri->ransac_dropped);
    ami_jw_int(&w, "undistort_failed", (int64_t)tri->undistort_failed);
    ami_jw_record(&w, "reproj_px");
    ami_jw_number_or_null(&w, "mean", tri->mean_px);
    ami_jw_number_or_null(&w, "median", tri->median_px);
    ami_jw_number_or_null(&w, "p95", tri->p95_px);
    ami_jw_close(&w);
    ami_jw_number_or_null(&w, "seconds", tri->seconds);
    ami_jw_array(&w, "per_camera");
    for (size_t c = 0; c < C; c++) {
        ami_jw_record(&w, NULL);
        ami_jw_string(&w, "name", det->cameras[c]);
        ami_jw_int(&w, "seen", (int64_t)tri->cam_seen[c]);
        ami_jw_int(&w, "used", (int64_t)tri->cam_used[c]);
        ami_jw_number_or_null(&w, "mean_px", tri->cam_mean_px[c]);
        ami_jw_number_or_null(&w, "p95_px", tri->cam_p95_px[c]);
        ami_jw_number_or_null(&w, "mean_px_all", tri->cam_mean_all_px[c]);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_array(&w, "per_joint");
    for (size_t j = 0; j < J; j++) {
        double se = 0, sc = 0;
        size_t n = 0;
        for (size_t t = 0; t < T; t++) {
            float e = tri->reproj_px[t * J + j];
            if (isnan(e)) continue;
            se += e;
            sc += tri->cameras_used[t * J + j];
            n++;
        }
        ami_jw_record(&w, NULL);
        ami_jw_string(&w, "name", det->names[j]);
        ami_jw_number(&w, "triangulated", (double)n / (double)T);
        ami_jw_number_or_null(&w, "mean_px", n ? se / (double)n : NAN);
        ami_jw_number_or_null(&w, "mean_cameras", n ? sc / (double)n : NAN);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_status st = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return st;
}

am_status am_triangulation_write(const char *path, const am_triangulation *tri, const am_mdet *det, am_error *err)
{
    size_t s_tj[2] = {tri->frame_count, tri->joint_count}, s_ctj[3] = {tri->camera_count, tri->frame_count, tri->joint_count},
           s_c[1] = {tri->camera_count}, s_j[1] = {tri->joint_count};
    am_array a[5];
    a[0] = am_array_view("reproj_px", AM_DTYPE_F32, 2, s_tj, tri->reproj_px);
    a[1] = am_array_view("cameras_used", AM_DTYPE_U8, 2, s_tj, tri->cameras_used);
    a[2] = am_array_view("used", AM_DTYPE_U8, 3, s_ctj, tri->used);
    a[3] = am_array_view("cameras", AM_DTYPE_STR, 1, s_c, det->cameras);
    a[4] = am_array_view("names", AM_DTYPE_STR, 1, s_j, det->names);
    return am_npz_write(path, a, 5, true, err);
}
