/* Two-view capture: the FK and Jacobians the fit relies on, the exam generator, the solve on
 * an exam, bad input, and the score. Clips are short so the sanitizer build stays quick. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/capture.h"
#include "anymove/math.h"
#include "capture/capture_internal.h"

static am_rig *ami_load_rig(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "examples/creatures/%s/rig.json", name);
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_load(am_test_source(rel), &rig, &err), &err);
    return rig;
}

static am_creature *ami_load_creature(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "examples/creatures/%s/creature.json", name);
    am_creature *cr = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_creature_load(am_test_source(rel), &cr, &err), &err);
    return cr;
}

static void ami_random_frame(const am_rig *rig, ami_rng *r, double trans[3], double q[4], double *euler)
{
    double w[3];
    for (int k = 0; k < 3; k++) {
        trans[k] = ami_rng_uniform(r) - 0.5;
        w[k] = 2.0 * ami_rng_uniform(r) - 1.0;
    }
    am_quat_from_rotvec(w, q);
    for (size_t b = 0; b < rig->bone_count; b++)
        for (size_t a = 0; a < 3; a++) {
            double lo = rig->limits[b * 6 + a * 2], hi = rig->limits[b * 6 + a * 2 + 1];
            euler[3 * b + a] = b == 0 ? 0.0 : lo + (hi - lo) * ami_rng_uniform(r);
        }
}

static void capture_fk_matches_rig_fk(void)
{
    const char *names[3] = {"wolf", "dino", "spider"};
    for (int n = 0; n < 3; n++) {
        am_rig *rig = ami_load_rig(names[n]);
        if (!rig) continue;
        size_t B = rig->bone_count, J = rig->joint_count;
        double pose_a[64 * 16], pose_b[64 * 16], ja[64 * 3], jb[64 * 3], euler[64 * 3], tr[3], q[4];
        AM_CHECK(B <= 64 && J <= 64);
        ami_rng r;
        ami_rng_seed(&r, 7);
        am_test_diff d = {0};
        for (int it = 0; it < 5; it++) {
            ami_random_frame(rig, &r, tr, q, euler);
            am_rig_fk(rig, tr, q, euler, pose_a);
            am_rig_keypoints(rig, pose_a, ja);
            ami_fk_frame(rig, tr, q, euler, pose_b, NULL, jb);
            for (size_t i = 0; i < J * 3; i++) am_test_diff_add(&d, ja[i], jb[i]);
        }
        AM_CHECK_MSG(d.max < 1e-12, "%s: FK differs from am_rig_fk by %.3g", names[n], d.max);
        am_rig_free(rig);
    }
}

static void capture_joint_jacobian_matches_numeric(void)
{
    am_rig *rig = ami_load_rig("wolf");
    if (!rig) return;
    ami_chains ch;
    am_error err = {0};
    AM_CHECK_OK(ami_chains_build(rig, &ch, &err), &err);
    const size_t B = rig->bone_count, J = rig->joint_count, P = ami_fit_block(rig);
    double x[6 + 3 * 64], pose[64 * 16], axes[64 * 9], jt[64 * 3], jt2[64 * 3], q0[4], tr[3];
    ami_rng r;
    ami_rng_seed(&r, 3);
    double euler[64 * 3];
    ami_random_frame(rig, &r, tr, q0, euler);
    memcpy(x, tr, sizeof tr);
    x[3] = 0.3;
    x[4] = -0.2;
    x[5] = 0.1;
    memcpy(x + 6, euler + 3, (B - 1) * 3 * sizeof(double));
    /* The frame's FK as the fit sees it: root rotation exp(w) * q0. */
    double q[4], dq[4];
    am_quat_from_rotvec(x + 3, dq);
    am_quat_mul(dq, q0, q);
    ami_fk_frame(rig, x, q, x + 3, pose, axes, jt);
    am_test_diff d = {0};
    int32_t cols[6 + 3 * 64];
    double jac[3 * (6 + 3 * 64)];
    for (size_t j = 0; j < J; j++) {
        size_t nc = ami_joint_jacobian(rig, &ch, j, pose, axes, jt, x, x + 3, cols, jac);
        for (size_t k = 0; k < nc; k++) {
            double xs[6 + 3 * 64], h = 1e-6;
            memcpy(xs, x, P * sizeof(double));
            xs[cols[k]] += h;
            am_quat_from_rotvec(xs + 3, dq);
            am_quat_mul(dq, q0, q);
            ami_fk_frame(rig, xs, q, xs + 3, pose + 0, NULL, jt2);
            for (int a = 0; a < 3; a++) am_test_diff_add(&d, (jt2[3 * j + (size_t)a] - jt[3 * j + (size_t)a]) / h, jac[(size_t)a * nc + k]);
            /* restore the axes-bearing pose */
            am_quat_from_rotvec(x + 3, dq);
            am_quat_mul(dq, q0, q);
            ami_fk_frame(rig, x, q, x + 3, pose, axes, jt);
        }
        /* Columns not in the chain really do not move the joint. */
        size_t probe = P - 1;
        bool listed = false;
        for (size_t k = 0; k < nc; k++) listed |= (size_t)cols[k] == probe;
        if (!listed) {
            double xs[6 + 3 * 64];
            memcpy(xs, x, P * sizeof(double));
            xs[probe] += 0.1;
            am_quat_from_rotvec(xs + 3, dq);
            am_quat_mul(dq, q0, q);
            ami_fk_frame(rig, xs, q, xs + 3, pose, NULL, jt2);
            AM_CHECK(am_vec3_dist(jt2 + 3 * j, jt + 3 * j) < 1e-12);
            am_quat_from_rotvec(x + 3, dq);
            am_quat_mul(dq, q0, q);
            ami_fk_frame(rig, x, q, x + 3, pose, axes, jt);
        }
    }
    AM_CHECK_MSG(d.max < 1e-5, "analytic vs numeric Jacobian: mean %.3g max %.3g over %zu", am_test_diff_mean(&d), d.max, d.count);
    ami_chains_free(&ch);
    am_rig_free(rig);
}

static void exam_is_deterministic_and_within_limits(void)
{
    am_rig *rig = ami_load_rig("wolf");
    am_creature *cr = ami_load_creature("wolf");
    if (!rig || !cr) goto out;
    am_exam_opts o = {.seed = 5, .frames = 60, .noise_px = 3, .dropout = 0.05, .swap = 0.02, .lag = 2, .outliers = 0.03, .squash = 0.1};
    am_exam *a = NULL, *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_exam_generate(rig, cr, &o, &a, &err), &err);
    AM_CHECK_OK(am_exam_generate(rig, cr, &o, &b, &err), &err);
    if (!a || !b) goto free_exams;
    size_t T = 60, J = rig->joint_count, B = rig->bone_count;
    AM_CHECK(a->det->frame_count == T && a->det->joint_count == J);
    AM_CHECK(memcmp(a->det->front_uv, b->det->front_uv, T * J * 2 * sizeof(float)) == 0);
    AM_CHECK(memcmp(a->det->side_conf, b->det->side_conf, T * J * sizeof(float)) == 0);
    size_t outside = 0, zero_conf = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t bb = 1; bb < B; bb++)
            for (size_t k = 0; k < 3; k++) {
                double e = a->truth->euler[(t * B + bb) * 3 + k];
                if (e < rig->limits[bb * 6 + k * 2] - 1e-9 || e > rig->limits[bb * 6 + k * 2 + 1] + 1e-9) outside++;
            }
    for (size_t i = 0; i < T * J; i++) zero_conf += a->det->front_conf[i] == 0.0f;
    AM_CHECK_MSG(outside == 0, "%zu angles outside the limits", outside);
    AM_CHECK(zero_conf > 0);
    AM_CHECK(a->body_size > 1.0 && a->body_size < 4.0);
    /* Planted contacts stand still in the truth. */
    size_t C = a->contact_count, planted = 0;
    double worst = 0.0;
    for (size_t c = 0; c < C; c++) {
        size_t j = (size_t)a->contact_joint[c];
        for (size_t t = 0; t + 1 < T; t++) {
            if (!a->contact[t * C + c] || !a->contact[(t + 1) * C + c]) continue;
            planted++;
            double d = am_vec3_dist(a->truth->joints + (t * J + j) * 3, a->truth->joints + ((t + 1) * J + j) * 3);
            if (d > worst) worst = d;
        }
    }
    AM_CHECK(planted > 0);
    AM_CHECK_MSG(worst < 3e-3, "a planted truth contact moved %.4f m in a frame", worst);
    /* truth.npz round trip. */
    char path[512];
    snprintf(path, sizeof path, "%s/truth.npz", am_test_tmpdir());
    AM_CHECK_OK(am_exam_write_truth(a, path, &err), &err);
    am_capture_truth *tr = NULL;
    AM_CHECK_OK(am_capture_truth_load(path, &tr, &err), &err);
    if (tr) {
        AM_CHECK(tr->frame_count == T && tr->joint_count == J && tr->bone_count == B && tr->contact_count == C);
        AM_CHECK(tr->lag == 2);
        AM_CHECK_NEAR(tr->body_size, a->body_size, 1e-12);
        am_capture_score sc;
        AM_CHECK_OK(am_capture_score_motion(tr, a->truth, &sc, &err), &err);
        AM_CHECK_NEAR(sc.joint_mean_cm, 0.0, 1e-9);
        AM_CHECK_NEAR(sc.geodesic_deg, 0.0, 1e-4);
        am_capture_truth_free(tr);
    }
free_exams:
    am_exam_free(a);
    am_exam_free(b);
out:
    am_creature_free(cr);
    am_rig_free(rig);
}

static void solve_recovers_exam(void)
{
    am_rig *rig = ami_load_rig("wolf");
    am_creature *cr = ami_load_creature("wolf");
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_error err = {0};
    if (!rig || !cr) goto out;
    am_exam_opts o = {.seed = 1, .frames = 48, .noise_px = 2, .dropout = 0.02, .swap = 0.02, .lag = 3};
    AM_CHECK_OK(am_exam_generate(rig, cr, &o, &ex, &err), &err);
    if (!ex) goto out;
    AM_CHECK_OK(am_capture_solve(ex->det, rig, cr, NULL, &res, &err), &err);
    if (!res) goto out;
    AM_CHECK(res->sync.best_lag == 3);
    AM_CHECK(res->sync.time_warped);
    AM_CHECK(res->reproj_side < 5.0 && res->reproj_front < 6.0);
    AM_CHECK(res->motion->joints != NULL);
    am_capture_truth tr = {.frame_count = 48, .joint_count = rig->joint_count, .bone_count = rig->bone_count,
                           .contact_count = ex->contact_count, .joints = ex->truth->joints, .euler = ex->truth->euler,
                           .names = ex->truth->joint_names, .bones = ex->truth->bone_names,
                           .contact_names = ex->contact_names, .contact = ex->contact, .lag = 3, .fps = 30,
                           .body_size = ex->body_size};
    am_capture_score sc;
    AM_CHECK_OK(am_capture_score_motion(&tr, res->motion, &sc, &err), &err);
    AM_CHECK_MSG(sc.joint_mean_pct < 0.5, "mean per-joint error %.3f%% of body size", sc.joint_mean_pct);
    AM_CHECK(sc.lag_recovered);
    /* Contacts: the hysteresis keeps every true plant frame (a frame left out is where the
     * foot slides), and the true plants hold still (issue 4: < 2 mm a plant). This short clip
     * has 8 plants; precision is lower than on the 150-frame suite (0.88 here). About one seed
     * in ten of this clip has a plant the fit misses (recall < 0.9): seeds 5 and 11. */
    AM_CHECK(sc.plants > 0);
    AM_CHECK_MSG(sc.contact_recall >= 0.9, "contact recall %.3f", sc.contact_recall);
    AM_CHECK_MSG(sc.contact_precision >= 0.7, "contact precision %.3f", sc.contact_precision);
    AM_CHECK_MSG(sc.slide_mean_mm < 2.0, "foot slide over true plants %.2f mm", sc.slide_mean_mm);
    /* Euler angles stay inside the limits. */
    size_t B = rig->bone_count, outside = 0;
    for (size_t t = 0; t < 48; t++)
        for (size_t b = 1; b < B; b++)
            for (size_t k = 0; k < 3; k++) {
                double e = res->motion->euler[(t * B + b) * 3 + k];
                outside += e < rig->limits[b * 6 + k * 2] - 1e-9 || e > rig->limits[b * 6 + k * 2 + 1] + 1e-9;
            }
    AM_CHECK(outside == 0);
    /* The report carries the quality gates. */
    am_buf rep = {0};
    am_capture_report(res, &rep);
    am_buf_append(&rep, "", 1);
    AM_CHECK(rep.data && strstr(rep.data, "verdict") && strstr(rep.data, "reprojection error px"));
    am_buf_free(&rep);
    AM_CHECK(res->motion->extra_json && strstr(res->motion->extra_json, "\"paw_agreement\""));
    /* The solve's sync numbers are the public check's on the det as read (one measurement:
     * the swaps in this det are repaired after it). */
    double paw[8];
    am_sync_stats st;
    AM_CHECK(cr->feet_count <= 8 && cr->feet_count == res->sync.foot_count);
    AM_CHECK_OK(am_sync_check(ex->det, &cr->layout, (const char *const *)cr->feet, cr->feet_count, NULL, paw, &st, &err),
                &err);
    AM_CHECK(st.best_lag == 3 && st.warp && st.rescale == res->sync.height_rescaled);
    for (size_t f = 0; f < cr->feet_count; f++)
        AM_CHECK(isnan(paw[f]) ? isnan(res->sync.paw_agreement[f]) : fabs(paw[f] - res->sync.paw_agreement[f]) < 1e-12);
    AM_CHECK_NEAR(st.paw_score, res->sync.paw_score, 1e-12);
    AM_CHECK_NEAR(st.gap_mean_px, res->sync.gap_mean_px, 1e-9);
    AM_CHECK_NEAR(st.gap_worst_px, res->sync.gap_worst_px, 1e-9);
    AM_CHECK_NEAR(st.gap_best_px, res->sync.gap_best_px, 1e-9);
    AM_CHECK_NEAR(st.front_height_scale, res->sync.front_height_scale, 1e-12);
out:
    am_capture_result_free(res);
    am_exam_free(ex);
    am_creature_free(cr);
    am_rig_free(rig);
}

static void solve_detects_squashed_front(void)
{
    am_rig *rig = ami_load_rig("wolf");
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_error err = {0};
    if (!rig) return;
    am_exam_opts o = {.seed = 4, .frames = 24, .noise_px = 1, .squash = 0.15};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &o, &ex, &err), &err);
    am_capture_opts co = {.iterations = 1};
    if (ex) AM_CHECK_OK(am_capture_solve(ex->det, rig, NULL, &co, &res, &err), &err);
    if (res) {
        AM_CHECK_NEAR(res->sync.front_height_scale, 0.85, 0.02);
        AM_CHECK(res->sync.height_rescaled);
    }
    am_capture_result_free(res);
    am_exam_free(ex);
    am_rig_free(rig);
}

static void solve_rejects_bad_input(void)
{
    am_rig *rig = ami_load_rig("wolf");
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_error err = {0};
    if (!rig) return;
    am_exam_opts o = {.seed = 1, .frames = 5};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &o, &ex, &err), &err);
    if (!ex) goto out;
    am_det *d = ex->det;
    size_t J = d->joint_count;
    /* T < 3 */
    d->frame_count = 2;
    AM_CHECK_STATUS(am_capture_solve(d, rig, NULL, NULL, &res, &err), AM_E_VALUE);
    d->frame_count = 5;
    /* a name not in the rig, said by name */
    char *saved = d->names[3];
    d->names[3] = "tentacle";
    AM_CHECK_STATUS(am_capture_solve(d, rig, NULL, NULL, &res, &err), AM_E_NAME);
    AM_CHECK(strstr(err.info, "tentacle") != NULL);
    d->names[3] = saved;
    /* NaN where the reader claims to see */
    float keep = d->side_uv[7];
    d->side_uv[7] = NAN;
    d->side_conf[3] = 0.9f;
    AM_CHECK_STATUS(am_capture_solve(d, rig, NULL, NULL, &res, &err), AM_E_NONFINITE);
    d->side_uv[7] = keep;
    /* nothing seen at all */
    for (size_t i = 0; i < 5 * J; i++) d->front_conf[i] = d->side_conf[i] = 0.0f;
    AM_CHECK_STATUS(am_capture_solve(d, rig, NULL, NULL, &res, &err), AM_E_EMPTY);
    AM_CHECK(res == NULL);
out:
    am_exam_free(ex);
    am_rig_free(rig);
}

static void solve_survives_garbage_readings(void)
{
    /* A reader gone wrong: random positions far off the canvas, random confidences. The solve
     * must finish with finite output (or a clean error), never crash or emit NaN. */
    am_rig *rig = ami_load_rig("wolf");
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_error err = {0};
    if (!rig) return;
    am_exam_opts o = {.seed = 9, .frames = 12};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &o, &ex, &err), &err);
    if (!ex) goto out;
    ami_rng r;
    ami_rng_seed(&r, 99);
    am_det *d = ex->det;
    for (size_t i = 0; i < d->frame_count * d->joint_count; i++) {
        for (int k = 0; k < 2; k++) {
            d->front_uv[2 * i + (size_t)k] = (float)(2e4 * ami_rng_uniform(&r) - 1e4);
            d->side_uv[2 * i + (size_t)k] = (float)(2e4 * ami_rng_uniform(&r) - 1e4);
        }
        d->front_conf[i] = ami_rng_uniform(&r) < 0.3 ? 0.0f : (float)ami_rng_uniform(&r);
        d->side_conf[i] = ami_rng_uniform(&r) < 0.3 ? 0.0f : (float)ami_rng_uniform(&r);
    }
    am_capture_opts co = {.iterations = 1};
    am_status st = am_capture_solve(d, rig, NULL, &co, &res, &err);
    AM_CHECK_MSG(st == AM_OK, "garbage reading: %s (%s)", am_status_name(st), err.info);
    if (res) {
        size_t bad = 0, n = res->motion->frame_count * res->motion->joint_count * 3;
        for (size_t i = 0; i < n; i++) bad += !isfinite(res->motion->joints[i]);
        AM_CHECK(bad == 0);
    }
out:
    am_capture_result_free(res);
    am_exam_free(ex);
    am_rig_free(rig);
}

/* A tracker that mixes up left and right does it for the whole body at once (the seed fit's own
 * exam generator swaps every pair of a frame; ours swaps pairs one by one). On a spider the
 * swapped frame's start, triangulated from the labels as read, has every leg crossed to the other
 * side: the repair must also move the start, or the fit stays there (the seed generator's spider
 * seed 3: 0.90 % of the body, 44 cm mean on its swapped frame 129; 0.38 % with the repair). */
static void solve_repairs_whole_frame_swaps(void)
{
    am_rig *rig = ami_load_rig("spider");
    am_creature *cr = ami_load_creature("spider");
    am_exam *ex = NULL;
    am_capture_result *res = NULL;
    am_error err = {0};
    int32_t *pairs = NULL;
    if (!rig || !cr) goto out;
    const size_t T = 60, J = rig->joint_count;
    /* Seeds 2 and 9 of this clip left the swapped frames at 33 % and 27 % of the body before the
     * start was repaired (0.36 % and 0.34 % now; the other frames 0.35 % and 0.31 %). */
    am_exam_opts o = {.seed = 2, .frames = T, .noise_px = 3, .dropout = 0.02};
    AM_CHECK_OK(am_exam_generate(rig, cr, &o, &ex, &err), &err);
    pairs = am_alloc_array(J * 2 + 2, sizeof *pairs);
    if (!ex || !pairs) goto out;
    size_t np = ami_lr_pairs(rig, pairs);
    AM_CHECK(np >= 12);
    const size_t swapped[] = {20, 21, 41};
    for (size_t k = 0; k < sizeof swapped / sizeof *swapped; k++)
        for (size_t p = 0; p < np; p++) {
            size_t a = swapped[k] * J + (size_t)pairs[2 * p], b = swapped[k] * J + (size_t)pairs[2 * p + 1];
            for (int c = 0; c < 2; c++) {
                float u = ex->det->front_uv[2 * a + (size_t)c];
                ex->det->front_uv[2 * a + (size_t)c] = ex->det->front_uv[2 * b + (size_t)c];
                ex->det->front_uv[2 * b + (size_t)c] = u;
            }
            float cf = ex->det->front_conf[a];
            ex->det->front_conf[a] = ex->det->front_conf[b];
            ex->det->front_conf[b] = cf;
        }
    AM_CHECK_OK(am_capture_solve(ex->det, rig, cr, NULL, &res, &err), &err);
    if (!res) goto out;
    AM_CHECK(res->sync.swaps_repaired >= 3 * np / 2);
    double worst_swapped = 0.0, others = 0.0;
    for (size_t t = 0; t < T; t++) {
        double e = 0.0;
        for (size_t j = 0; j < J; j++)
            e += am_vec3_dist(res->motion->joints + (t * J + j) * 3, ex->truth->joints + (t * J + j) * 3);
        e /= (double)J * ex->body_size;
        bool sw = t == 20 || t == 21 || t == 41;
        if (sw && e > worst_swapped) worst_swapped = e;
        if (!sw) others += e / (double)(T - 3);
    }
    AM_CHECK_MSG(worst_swapped < 2.0 * others && worst_swapped < 0.01,
                 "swapped frames %.3f %% of the body, the others %.3f %%", 100 * worst_swapped, 100 * others);
out:
    am_free(pairs);
    am_capture_result_free(res);
    am_exam_free(ex);
    am_creature_free(cr);
    am_rig_free(rig);
}

/* A synthetic two-view det over caller-owned double arrays [T][J][2] / [T][J] (the views path of
 * am_det), all seen; names "j0".. unless given. */
typedef struct {
    am_det d;
    double fuv[64 * 8 * 2], suv[64 * 8 * 2], fc[64 * 8], sc[64 * 8];
    char *names[8];
    char buf[8][8];
} ami_sync_det;

static void ami_sync_det_init(ami_sync_det *x, size_t T, size_t J)
{
    memset(x, 0, sizeof *x);
    AM_CHECK(T <= 64 && J <= 8);
    for (size_t j = 0; j < J && j < 8; j++) {
        x->buf[j][0] = 'j', x->buf[j][1] = (char)('0' + j), x->buf[j][2] = 0; /* J <= 8 */
        x->names[j] = x->buf[j];
    }
    for (size_t i = 0; i < T * J; i++) x->fc[i] = x->sc[i] = 1.0;
    x->d = (am_det){.frame_count = T, .joint_count = J, .fps = 30, .names = x->names};
    x->d.uv_view[0] = (am_reals){x->fuv, AM_DTYPE_F64};
    x->d.uv_view[1] = (am_reals){x->suv, AM_DTYPE_F64};
    x->d.conf_view[0] = (am_reals){x->fc, AM_DTYPE_F64};
    x->d.conf_view[1] = (am_reals){x->sc, AM_DTYPE_F64};
}

/* Known correlations: over whole periods sin and cos are orthogonal, so a front row of
 * sin + cos against a side row of sin correlates 1/sqrt(2) exactly; the same row gives 1, its
 * mirror -1, a foot that moves 1 px gives null, and so does a foot the det does not have. */
static void sync_check_known_correlation(void)
{
    ami_sync_det x;
    const size_t T = 40, J = 4;
    ami_sync_det_init(&x, T, J);
    for (size_t t = 0; t < T; t++) {
        double a = 2 * AM_PI * (double)t / 20.0, s = sin(a), c = cos(a);
        const double side[4] = {300 + 30 * s, 300 + 30 * s, 300 + 30 * s, 300 + 1 * s};
        const double front[4] = {300 + 30 * s, 300 - 30 * s, 300 + 30 * (s + c), 300 + 1 * s};
        for (size_t j = 0; j < J; j++) {
            x.suv[2 * (t * J + j) + 1] = side[j];
            x.fuv[2 * (t * J + j) + 1] = front[j];
        }
    }
    const char *feet[5] = {"j0", "j1", "j2", "j3", "tail"};
    double paw[5];
    am_sync_stats st;
    am_error err = {0};
    AM_CHECK_OK(am_sync_check(&x.d, NULL, feet, 5, NULL, paw, &st, &err), &err);
    AM_CHECK_NEAR(paw[0], 1.0, 1e-9);
    AM_CHECK_NEAR(paw[1], -1.0, 1e-9);
    AM_CHECK_NEAR(paw[2], 1.0 / sqrt(2.0), 1e-9);
    AM_CHECK(isnan(paw[3]) && isnan(paw[4]));
    AM_CHECK_NEAR(st.paw_score, (1.0 - 1.0 + 1.0 / sqrt(2.0)) / 3.0, 1e-9);
    /* no foot: no score */
    AM_CHECK_OK(am_sync_check(&x.d, NULL, NULL, 0, NULL, NULL, &st, &err), &err);
    AM_CHECK(isnan(st.paw_score));
}

/* Known lag: the front is the side k frames late (front(t) = side(t - k), its first k frames
 * unseen), so the gap vanishes at lag k; five still joints at one height (ratio 1, or the
 * squash exactly) hold the front/side height ratio's median; a squashed front is found and the
 * lag searched on the rescaled heights, as the solve does. */
static void sync_check_known_lag(void)
{
    const int lags[3] = {4, -3, 2};
    const double squash[3] = {1.0, 1.0, 0.8};
    const size_t T = 48, J = 8;
    const am_layout *L = NULL;
    am_layout wolf;
    am_layout_default(&wolf);
    for (int c = 0; c < 3; c++) {
        ami_sync_det x;
        ami_sync_det_init(&x, T, J);
        int k = lags[c];
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < J; j++) {
                size_t i = t * J + j;
                double side = j < 3 ? 400 + 40 * sin(0.23 * (double)t + (double)j) + 12 * cos(0.61 * (double)t) : 300.0;
                long ts = (long)t - k;
                double front = j < 3 ? 400 + 40 * sin(0.23 * (double)ts + (double)j) + 12 * cos(0.61 * (double)ts) : 300.0;
                x.suv[2 * i + 1] = side;
                x.fuv[2 * i + 1] = wolf.ground_v - (wolf.ground_v - front) * squash[c];
                if (ts < 0 || ts >= (long)T) x.fc[i] = 0.0;
            }
        const char *feet[1] = {"j0"};
        double paw[1];
        am_sync_stats st;
        am_error err = {0};
        AM_CHECK_OK(am_sync_check(&x.d, L, feet, 1, NULL, paw, &st, &err), &err);
        AM_CHECK_MSG(st.best_lag == k, "lag %d found %d", k, st.best_lag);
        AM_CHECK_NEAR(st.gap_best_px, 0.0, 1e-6);
        AM_CHECK(st.gap_mean_px > 5.0 && st.gap_worst_px >= st.gap_mean_px);
        AM_CHECK(st.warp);
        AM_CHECK_NEAR(st.front_height_scale, squash[c], 1e-9);
        AM_CHECK(st.rescale == (squash[c] != 1.0));
        /* a search range short of the lag finds a smaller one, no zero gap */
        am_sync_opts o = {.max_lag = 1};
        AM_CHECK_OK(am_sync_check(&x.d, L, feet, 1, &o, paw, &st, &err), &err);
        AM_CHECK(abs(st.best_lag) <= 1 && st.gap_best_px > 1e-3);
    }
}

/* Bad data is a status; the det is checked as a file is. */
static void sync_check_rejects_bad_data(void)
{
    ami_sync_det x;
    ami_sync_det_init(&x, 10, 2);
    am_sync_stats st;
    am_error err = {0};
    x.fc[3] = 1.5;
    AM_CHECK_STATUS(am_sync_check(&x.d, NULL, NULL, 0, NULL, NULL, &st, &err), AM_E_VALUE);
    x.fc[3] = 1.0;
    x.suv[5] = NAN;
    AM_CHECK_STATUS(am_sync_check(&x.d, NULL, NULL, 0, NULL, NULL, &st, &err), AM_E_NONFINITE);
    x.suv[5] = 0.0;
    am_layout bad;
    am_layout_default(&bad);
    bad.m_per_px = 0;
    AM_CHECK_STATUS(am_sync_check(&x.d, &bad, NULL, 0, NULL, NULL, &st, &err), AM_E_VALUE);
    AM_CHECK_OK(am_sync_check(&x.d, NULL, NULL, 0, NULL, NULL, &st, &err), &err);
    /* the opts' context is the call's: each allocation that fails is a status, nothing leaks
     * (the sanitizer build), and enough of them succeed */
    size_t failed = 0;
    for (uint64_t n = 1; n <= 8; n++) {
        am_sync_opts o = {.ctx = {.max_allocs = n}};
        am_status s = am_sync_check(&x.d, NULL, NULL, 0, &o, NULL, &st, &err);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        failed += s == AM_E_NOMEM;
        if (n == 8) AM_CHECK(s == AM_OK);
    }
    AM_CHECK(failed >= 5); /* the four views' copies and the ratios */
}

/* A foot that plants, shuffles low along the ground 9 cm in a few frames and plants again is two
 * plants. Grown toward each other over the shuffle, they met (or left a one-frame hole that was
 * filled) into one run, whose single spot (their mean) the foot lock then pinned both halves to,
 * ~5 cm from each (exam.py's dino seed 3: toe_R 3 % of the body off over 11 frames). */
static void plants_do_not_merge_across_a_shuffle(void)
{
    enum { T = 40, J = 1 };
    /* the shuffle's frames 18, 19 (and 20): the plants grow over their ends, 1.5 cm from
     * their spots (x = 0 and x = 0.09); in the first, the middle frame is a one-frame hole */
    const double shuffle[2][3] = {{0.015, 0.045, 0.075}, {0.015, 0.075, 0.09}};
    for (int v = 0; v < 2; v++) {
        double joints[T * J * 3];
        for (int t = 0; t < T; t++) {
            joints[3 * t] = t < 18 ? 0.0 : t > 20 ? 0.09 : shuffle[v][t - 18];
            joints[3 * t + 1] = 0.0;
            joints[3 * t + 2] = 0.004;
        }
        const int32_t joint[1] = {0};
        const double floor_z[1] = {0.0};
        uint8_t plant[T];
        double plant_z[T], vg[3];
        am_error err = {0};
        AM_CHECK_OK(am_plants_find(joints, T, J, 30.0, joint, floor_z, 1, NULL, plant, plant_z, vg, &err), &err);
        AM_CHECK(vg[0] == 0.0 && vg[1] == 0.0);
        AM_CHECK(plant[0] && plant[17] && plant[21] && plant[T - 1]);
        /* two runs, every frame within the grow distance of its own plant's spot */
        size_t runs = 0;
        for (size_t t = 0; t < T; t++) {
            if (!plant[t] || (t > 0 && plant[t - 1])) continue;
            size_t e = t;
            while (e + 1 < T && plant[e + 1]) e++;
            double spot[3];
            am_plant_spot(joints, J, 30.0, vg, 0, t, e, spot);
            for (size_t k = t; k <= e; k++)
                AM_CHECK_MSG(fabs(joints[3 * k] - spot[0]) <= AM_PLANT_GROW + 1e-12,
                             "variant %d: frame %zu is %.3f m from its plant's spot", v, k, fabs(joints[3 * k] - spot[0]));
            runs++;
        }
        AM_CHECK_MSG(runs == 2, "variant %d: %zu plants, 2 expected", v, runs);
        /* a one-frame hole inside one spot is still filled */
        joints[3 * 8 + 2] = 0.05;
        AM_CHECK_OK(am_plants_find(joints, T, J, 30.0, joint, floor_z, 1, NULL, plant, plant_z, vg, &err), &err);
        AM_CHECK(plant[7] && plant[8] && plant[9]);
    }
}

/* The two-view solve smooths the angles at 225 px per rad/frame^2 by default (am_fit's 150 is
 * the 3D points'): chosen on the dev creatures (bench/RESULTS.md, issue 12 accuracy). */
static void solve_default_angle_smoothing(void)
{
    am_rig *rig = ami_load_rig("wolf");
    am_exam *ex = NULL;
    am_error err = {0};
    if (!rig) return;
    am_exam_opts o = {.seed = 2, .frames = 24, .noise_px = 2};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &o, &ex, &err), &err);
    const double w[3] = {0.0, 225.0, 150.0};
    am_capture_result *res[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && ex; k++) {
        am_capture_opts co = {.iterations = 1, .w_accel = w[k]};
        AM_CHECK_OK(am_capture_solve(ex->det, rig, NULL, &co, &res[k], &err), &err);
    }
    if (res[0] && res[1] && res[2]) {
        size_t n = 24 * rig->joint_count * 3 * sizeof(double);
        AM_CHECK(memcmp(res[0]->motion->joints, res[1]->motion->joints, n) == 0);
        AM_CHECK(memcmp(res[0]->motion->joints, res[2]->motion->joints, n) != 0);
    }
    for (int k = 0; k < 3; k++) am_capture_result_free(res[k]);
    am_exam_free(ex);
    am_rig_free(rig);
}

#define AM_TESTS(X) X(capture_fk_matches_rig_fk) X(capture_joint_jacobian_matches_numeric) \
    X(exam_is_deterministic_and_within_limits) X(solve_recovers_exam) X(solve_detects_squashed_front) \
    X(solve_rejects_bad_input) X(solve_survives_garbage_readings) X(solve_repairs_whole_frame_swaps) \
    X(sync_check_known_correlation) X(sync_check_known_lag) X(sync_check_rejects_bad_data) \
    X(plants_do_not_merge_across_a_shuffle) X(solve_default_angle_smoothing)
AM_TEST_MAIN(AM_TESTS)
