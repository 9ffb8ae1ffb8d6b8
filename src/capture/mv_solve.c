/* A rig fitted to joints read in N calibrated cameras: per-camera time offsets (found the way
 * the two-view solve finds its lag), a triangulation for the start, then the one fitter
 * (anymove/fit.h).
 *
 * Offsets. The two-view lag is the shift that best lines up the heights of both views, which
 * is the epipolar constraint of SPEC 3's orthographic pair. For any two calibrated cameras the
 * same test is: triangulate each joint from the pair and see how far the point reprojects from
 * both detections. Against a reference camera (the one that saw most), each camera's shift in
 * +-max_offset frames is the one with the smallest mean of these gaps (each capped at 40 px, so
 * a swapped label or an outlier counts once), kept when it cuts the gap by 15% or more (the
 * two-view rule); shifts that leave less than half the clip overlapping are not tried. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

#define AMI_GAP_CAP_PX 40.0
#define AMI_OFFSET_GAIN 0.015

void am_mv_solve_result_free(am_mv_solve_result *r)
{
    if (!r) return;
    am_fit_result_free(r->fit);
    am_free(r->offsets);
    am_free(r->gap_px);
    am_free(r->gap0_px);
    am_warning_list_free(&r->warnings);
    am_free(r);
}

/* The two-camera gap of one joint: camera a's ray at ab_a and camera b's at ab_b, triangulated
 * by least squares on their ray rows; the mean of the two reprojection errors in pixels, or
 * NaN when the rays are (nearly) parallel or the point is behind a camera. */
static double ami_pair_gap(const am_camera *ca, const double ab_a[2], const double uv_a[2], const am_camera *cb,
                           const double ab_b[2], const double uv_b[2])
{
    double rows[16];
    am_camera_ray_rows(ca, ab_a, rows);
    am_camera_ray_rows(cb, ab_b, rows + 8);
    double A[9] = {0}, r[3] = {0};
    for (int k = 0; k < 4; k++) {
        const double *w = rows + 4 * k;
        for (int i = 0; i < 3; i++) {
            r[i] -= w[i] * w[3];
            for (int j = 0; j < 3; j++) A[3 * i + j] += w[i] * w[j];
        }
    }
    double L[9];
    memcpy(L, A, sizeof L);
    if (am_dense_cholesky(L, 3, NULL) != AM_OK) return NAN;
    /* Near-parallel rays: the smallest pivot is tiny against the largest. */
    if (L[8] * L[8] < 1e-10 * (A[0] + A[4] + A[8])) return NAN;
    am_dense_cholesky_solve(L, 3, r);
    double pa[2], pb[2];
    if (!am_camera_project(ca, r, pa, NULL) || !am_camera_project(cb, r, pb, NULL)) return NAN;
    return 0.5 * (hypot(pa[0] - uv_a[0], pa[1] - uv_a[1]) + hypot(pb[0] - uv_b[0], pb[1] - uv_b[1]));
}

/* Mean capped gap between camera a (frame t) and camera b (own frame t - k), or NaN when fewer
 * than half the frames overlap; per_frame [T] (may be NULL) gets each frame's mean (NaN where
 * no joint was seen by both). ab [C][T][J][2] undistorted, NaN where not seen. */
static double ami_offset_gap(const am_mdet *d, const am_camera *const *cams, const double *ab, size_t a, size_t b, int k,
                             double *per_frame)
{
    const size_t T = d->frame_count, J = d->joint_count;
    double sum = 0.0;
    size_t n = 0, frames = 0;
    for (size_t t = 0; t < T; t++) {
        long tb = (long)t - k;
        if (per_frame) per_frame[t] = NAN;
        if (tb < 0 || tb >= (long)T) continue;
        frames++;
        double fs = 0.0;
        size_t fn = 0;
        for (size_t j = 0; j < J; j++) {
            size_t ia = (a * T + t) * J + j, ib = (b * T + (size_t)tb) * J + j;
            if (isnan(ab[2 * ia]) || isnan(ab[2 * ib])) continue;
            const am_reals U = am_mdet_uv(d);
            double ua[2] = {am_reals_at(U, 2 * ia), am_reals_at(U, 2 * ia + 1)};
            double ub[2] = {am_reals_at(U, 2 * ib), am_reals_at(U, 2 * ib + 1)};
            double g = ami_pair_gap(cams[a], ab + 2 * ia, ua, cams[b], ab + 2 * ib, ub);
            if (isnan(g)) continue;
            g = g < AMI_GAP_CAP_PX ? g : AMI_GAP_CAP_PX;
            fs += g;
            fn++;
        }
        sum += fs;
        n += fn;
        if (per_frame && fn) per_frame[t] = fs / (double)fn;
    }
    return frames * 2 >= T && n ? sum / (double)n : NAN;
}

/* Is the gap at shift k clearly below the one at shift 0 (per-frame means g0, gk)? Detection
 * noise adds the same floor to every shift, so a one-frame offset of a slow motion lowers the
 * mean gap by a few percent only (the two-view lag's 15% rule would miss it) and still beyond
 * doubt: the mean over the frames both see must drop by AMI_OFFSET_GAIN of itself. (A paired
 * test over frames is weaker than it looks here: the gain is all in the frames that move, so
 * the frame-to-frame spread is mostly signal.) On a still scene every shift ties. */
static bool ami_offset_significant(const double *g0, const double *gk, size_t T)
{
    double s0 = 0.0, sk = 0.0;
    size_t n = 0;
    for (size_t t = 0; t < T; t++) {
        if (isnan(g0[t]) || isnan(gk[t])) continue;
        s0 += g0[t];
        sk += gk[t];
        n++;
    }
    return n >= 10 && s0 - sk > AMI_OFFSET_GAIN * s0;
}

/* Camera c's gap at shift k against 3D points X [T][J][3] (NaN = missing) triangulated from the
 * other cameras: its detection at its own frame t - k reprojected against X(t), capped; the mean
 * (NaN when under half the frames overlap) and per-frame means. */
static double ami_loo_gap(const am_mdet *d, const am_camera *cam, size_t c, const double *X, int k, double *per_frame)
{
    const size_t T = d->frame_count, J = d->joint_count;
    double sum = 0.0;
    size_t n = 0, frames = 0;
    for (size_t t = 0; t < T; t++) {
        long f = (long)t - k;
        if (per_frame) per_frame[t] = NAN;
        if (f < 0 || f >= (long)T) continue;
        frames++;
        double fs = 0.0;
        size_t fn = 0;
        for (size_t j = 0; j < J; j++) {
            const double *p = X + (t * J + j) * 3;
            size_t i = (c * T + (size_t)f) * J + j;
            const am_reals U = am_mdet_uv(d);
            const double o[2] = {am_reals_at(U, 2 * i), am_reals_at(U, 2 * i + 1)};
            if (isnan(p[0]) || !(am_reals_at(am_mdet_conf(d), i) > 0) || !isfinite(o[0])) continue;
            double uv[2];
            if (!am_camera_project(cam, p, uv, NULL)) continue;
            double g = hypot(uv[0] - o[0], uv[1] - o[1]);
            fs += g < AMI_GAP_CAP_PX ? g : AMI_GAP_CAP_PX;
            fn++;
        }
        sum += fs;
        n += fn;
        if (per_frame && fn) per_frame[t] = fs / (double)fn;
    }
    return frames * 2 >= T && n ? sum / (double)n : NAN;
}

/* The shift of camera c in +-K with the smallest gap by `gap` (pairwise or leave-one-out). */
typedef double (*ami_gap_fn)(void *u, int k, double *per_frame);
static int ami_best_shift(ami_gap_fn gap, void *u, int K)
{
    double best = NAN;
    int bk = 0;
    for (int k = -K; k <= K; k++) {
        double g = gap(u, k, NULL);
        /* Ties keep the smaller shift. */
        if (isfinite(g) && (!isfinite(best) || g < best - 1e-9 || (fabs(g - best) <= 1e-9 && abs(k) < abs(bk)))) {
            best = g;
            bk = k;
        }
    }
    return bk;
}

/* Keep shift k only when clearly better than none; the gaps at k and at 0 for the report. */
static double ami_gate_shift(ami_gap_fn gap, void *u, int k, size_t T, double *pf0, double *pfk, double *g_at,
                             double *g_zero)
{
    *g_zero = gap(u, 0, pf0);
    *g_at = *g_zero;
    if (k == 0) return 0.0;
    double gk = gap(u, k, pfk);
    if (!ami_offset_significant(pf0, pfk, T)) return 0.0;
    *g_at = gk;
    return (double)k;
}

typedef struct {
    const am_mdet *d;
    const am_camera *const *cams;
    const double *ab, *X;
    size_t a, b;
} ami_gap_args;
static double ami_pair_gap_k(void *u, int k, double *pf)
{
    const ami_gap_args *g = u;
    return ami_offset_gap(g->d, g->cams, g->ab, g->a, g->b, k, pf);
}
static double ami_loo_gap_k(void *u, int k, double *pf)
{
    const ami_gap_args *g = u;
    return ami_loo_gap(g->d, g->cams[g->b], g->b, g->X, k, pf);
}

/* The det without camera c, the others shifted by offsets (a view: arrays copied in their own
 * element type, names shared). */
static am_status ami_mdet_without(const am_mdet *d, size_t c, const double *offsets, am_mdet *out, am_error *err)
{
    const size_t C = d->camera_count, TJ = d->frame_count * d->joint_count;
    const am_reals U = am_mdet_uv(d), K = am_mdet_conf(d);
    const size_t su = U.dtype == AM_DTYPE_F32 ? sizeof(float) : sizeof(double);
    const size_t sk = K.dtype == AM_DTYPE_F32 ? sizeof(float) : sizeof(double);
    *out = *d;
    out->camera_count = C - 1;
    out->uv = NULL;
    out->conf = NULL;
    char *u = am_alloc_array((C - 1) * TJ * 2, su), *k8 = am_alloc_array((C - 1) * TJ, sk);
    out->uv_view = (am_reals){u, U.dtype};
    out->conf_view = (am_reals){k8, K.dtype};
    out->cameras = am_alloc_array(C - 1, sizeof(char *));
    out->time_offset = am_alloc_array(C - 1, sizeof(double));
    if (!u || !k8 || !out->cameras || !out->time_offset) return AM_FAIL(err, AM_E_NOMEM, "offset search");
    for (size_t q = 0, k = 0; q < C; q++) {
        if (q == c) continue;
        memcpy(u + k * TJ * 2 * su, (const char *)U.data + q * TJ * 2 * su, TJ * 2 * su);
        memcpy(k8 + k * TJ * sk, (const char *)K.data + q * TJ * sk, TJ * sk);
        out->cameras[k] = d->cameras[q];
        out->time_offset[k] = offsets[q];
        k++;
    }
    return AM_OK;
}

static void ami_mdet_without_free(am_mdet *v)
{
    am_free((void *)v->uv_view.data);
    am_free((void *)v->conf_view.data);
    am_free(v->cameras);
    am_free(v->time_offset);
}

/* Offsets. With three cameras or more, each camera against the joints the others triangulate
 * (every direction of a misplaced detection counts, and the others outvote an outlier), in two
 * passes so each camera is judged against the others' corrected clocks. With two, only the
 * pairwise gap is there: a time shift moves a point along the epipolar line too, where no
 * second camera sees it, so small offsets of slow motions can go unnoticed. */
static am_status ami_find_offsets(const am_mdet *d, const am_calib *cal, const am_camera *const *cams, int max_offset,
                                  am_mv_solve_result *res, am_error *err)
{
    const size_t C = d->camera_count, T = d->frame_count, J = d->joint_count;
    double *ab = NULL, *X = NULL, *pf0 = am_alloc_array(T, sizeof(double)), *pfk = am_alloc_array(T, sizeof(double));
    am_status st = AM_OK;
    if (!pf0 || !pfk) {
        st = AM_FAIL(err, AM_E_NOMEM, "offset search");
        goto done;
    }
    if (max_offset > (int)T / 4) max_offset = (int)T / 4;
    for (size_t c = 0; c < C; c++) res->offsets[c] = 0.0, res->gap_px[c] = res->gap0_px[c] = NAN;
    /* Every pair's best shift, then the offsets that agree with them best (weighted least
     * squares, camera 0 fixed): a start that no single reference camera's view can bias. */
    ab = am_alloc_array(C * T * J * 2, sizeof(double));
    double *A = am_alloc_array(C * C, sizeof(double)), *rhs = am_alloc_array(C, sizeof(double));
    if (!ab || !A || !rhs) {
        am_free(A);
        am_free(rhs);
        st = AM_FAIL(err, AM_E_NOMEM, "offset search");
        goto done;
    }
    for (size_t q = 0; q < C * T * J; q++) {
        double uv[2] = {am_reals_at(am_mdet_uv(d), 2 * q), am_reals_at(am_mdet_uv(d), 2 * q + 1)};
        ab[2 * q] = ab[2 * q + 1] = NAN;
        if (am_reals_at(am_mdet_conf(d), q) > 0 && isfinite(uv[0]) && isfinite(uv[1]) && !am_camera_undistort(cams[q / (T * J)], uv, ab + 2 * q))
            ab[2 * q] = ab[2 * q + 1] = NAN;
    }
    for (size_t a = 0; a < C; a++)
        for (size_t b = a + 1; b < C; b++) {
            if (!ami_progress("solve: offsets", 0.3 * (double)(a * C + b) / (double)(C * C))) {
                am_free(A);
                am_free(rhs);
                st = AM_FAIL(err, AM_E_CANCELLED, "offset search stopped");
                goto done;
            }
            ami_gap_args g = {d, cams, ab, NULL, a, b};
            int k = ami_best_shift(ami_pair_gap_k, &g, max_offset);
            double g0 = ami_pair_gap_k(&g, 0, NULL), gk = ami_pair_gap_k(&g, k, NULL);
            if (C == 2) {
                res->offsets[1] = ami_gate_shift(ami_pair_gap_k, &g, k, T, pf0, pfk, &res->gap_px[1], &res->gap0_px[1]);
                continue;
            }
            /* A pair whose gap hardly depends on the shift (parallel views, a still scene) says
             * little: weight by how much the shift lowers it (o_b - o_a = k). */
            double w = isfinite(g0) && isfinite(gk) && g0 > gk ? g0 - gk : 0.0;
            if (k == 0) w = isfinite(g0) ? 0.1 * g0 : 0.0;
            A[a * C + a] += w;
            A[b * C + b] += w;
            A[a * C + b] -= w;
            A[b * C + a] -= w;
            rhs[b] += w * k;
            rhs[a] -= w * k;
        }
    if (C >= 3) {
        /* Fix camera 0 (row and column 0 become the identity, o_0 = 0). */
        for (size_t q = 0; q < C; q++) A[q] = A[q * C] = 0.0;
        A[0] = 1.0;
        rhs[0] = 0.0;
        for (size_t q = 1; q < C; q++) A[q * C + q] += 1e-9;
        if (am_dense_cholesky(A, C, NULL) == AM_OK) {
            am_dense_cholesky_solve(A, C, rhs);
            for (size_t q = 0; q < C; q++) res->offsets[q] = round(rhs[q]);
        }
    }
    am_free(A);
    am_free(rhs);
    if (C >= 3) {
        /* Each camera against the others (argmin), twice, so each is judged against the others'
         * corrected clocks; then every shift that is not clearly better than none goes. */
        X = am_alloc_array(T * J * 3, sizeof(double));
        if (!X) {
            st = AM_FAIL(err, AM_E_NOMEM, "offset search");
            goto done;
        }
        am_triangulate_opts to = {0};
        for (int pass = 0; pass < 3; pass++)
            for (size_t c = 0; c < C; c++) {
                if (!ami_progress("solve: offsets", (pass * C + c) / (3.0 * (double)C))) {
                    st = AM_FAIL(err, AM_E_CANCELLED, "offset search stopped at camera %zu", c);
                    goto done;
                }
                am_mdet sub;
                am_triangulation *tri = NULL;
                if ((st = ami_mdet_without(d, c, res->offsets, &sub, err)) == AM_OK)
                    st = ami_triangulate(&sub, cal, &to, true, &tri, err);
                ami_mdet_without_free(&sub);
                if (st < 0) {
                    am_triangulation_free(tri);
                    goto done;
                }
                memcpy(X, tri->joints->joints, T * J * 3 * sizeof(double));
                am_triangulation_free(tri);
                ami_gap_args g = {d, cams, NULL, X, 0, c};
                if (pass < 2) res->offsets[c] = (double)ami_best_shift(ami_loo_gap_k, &g, max_offset);
                else
                    res->offsets[c] = ami_gate_shift(ami_loo_gap_k, &g, (int)res->offsets[c], T, pf0, pfk, &res->gap_px[c],
                                                     &res->gap0_px[c]);
            }
    }
    /* The fit's clock is camera 0's (as the two-view solve's is the side view's). */
    for (size_t c = C; c-- > 0;) res->offsets[c] -= res->offsets[0];
    res->offsets_found = true;
done:
    am_free(ab);
    am_free(X);
    am_free(pf0);
    am_free(pfk);
    return st;
}

/* Each camera's shift against the fitted joints (a motion bound to the rig), gated as in the
 * search; offsets normalised to camera 0 again. *moved when any changed. */
static am_status ami_refine_offsets(const am_mdet *det, const am_rig *rig, const am_camera *const *cams,
                                    const am_motion *mo, int max_offset, am_mv_solve_result *res, bool *moved,
                                    am_error *err)
{
    const size_t C = det->camera_count, T = det->frame_count, J = det->joint_count, RJ = rig->joint_count;
    double *X = am_alloc_array(T * J * 3, sizeof(double)), *pf0 = am_alloc_array(T, sizeof(double));
    double *pfk = am_alloc_array(T, sizeof(double));
    if (!X || !pf0 || !pfk) {
        am_free(X);
        am_free(pf0);
        am_free(pfk);
        return AM_FAIL(err, AM_E_NOMEM, "offset check");
    }
    for (size_t j = 0; j < J; j++) {
        int r = am_rig_find_joint(rig, det->names[j]);
        for (size_t t = 0; t < T; t++)
            for (int a = 0; a < 3; a++)
                X[(t * J + j) * 3 + (size_t)a] = r < 0 ? NAN : mo->joints[(t * RJ + (size_t)r) * 3 + (size_t)a];
    }
    if (max_offset > (int)T / 4) max_offset = (int)T / 4;
    /* The det as read (its own frames): the gap is against the fitted clock directly. */
    am_mdet plain = *det;
    plain.time_offset = NULL;
    double *now = am_alloc_array(C, sizeof(double));
    if (now) {
        for (size_t c = 0; c < C; c++) {
            ami_gap_args g = {&plain, cams, NULL, X, 0, c};
            int k = ami_best_shift(ami_loo_gap_k, &g, max_offset);
            now[c] = ami_gate_shift(ami_loo_gap_k, &g, k, T, pf0, pfk, &res->gap_px[c], &res->gap0_px[c]);
        }
        for (size_t c = C; c-- > 0;) now[c] -= now[0];
        for (size_t c = 0; c < C; c++) {
            if (now[c] != res->offsets[c]) *moved = true;
            res->offsets[c] = now[c];
        }
    }
    am_free(now);
    am_free(X);
    am_free(pf0);
    am_free(pfk);
    return now ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "offset check");
}

static am_status ami_mv_solve(const am_mdet *det_in, const am_calib *cal, const am_rig *rig, const am_creature *cr,
                              const am_mv_solve_opts *o, am_mv_solve_result **out, am_error *err)
{
    assert(det_in && cal && rig && out);
    assert(am_reals_valid(am_mdet_uv(det_in)) && am_reals_valid(am_mdet_conf(det_in)));
    *out = NULL;
    const size_t C = det_in->camera_count, T = det_in->frame_count;
    AMI_CHECK(err, T >= 3, AM_E_VALUE, "det has %zu frames; the fit needs at least 3", T);
    AMI_CHECK(err, C >= 1, AM_E_EMPTY, "det has no camera");
    am_status st = AM_OK;
    am_mdet det = *det_in;
    am_triangulation *tri = NULL;
    const am_camera **cams = am_alloc_array(C, sizeof *cams);
    am_mv_solve_result *res = am_alloc(sizeof *res);
    if (res) {
        res->offsets = am_alloc_array(C, sizeof(double));
        res->gap_px = am_alloc_array(C, sizeof(double));
        res->gap0_px = am_alloc_array(C, sizeof(double));
    }
    if (!cams || !res || !res->offsets || !res->gap_px || !res->gap0_px) {
        st = AM_FAIL(err, AM_E_NOMEM, "solve of %zu cameras", C);
        goto done;
    }
    res->camera_count = C;
    /* The input checks the fit also makes, before the offsets and the triangulation spend time
     * on a det that cannot be fitted. */
    for (size_t c = 0; c < C; c++) {
        int k = am_calib_find(cal, det.cameras[c]);
        if (k < 0) {
            st = AM_FAIL(err, AM_E_NAME, "camera '%s' of the detections is not in the calibration", det.cameras[c]);
            goto done;
        }
        cams[c] = &cal->cameras[k];
        size_t seen = 0;
        for (size_t i = c * T * det.joint_count; i < (c + 1) * T * det.joint_count; i++)
            seen += am_reals_at(am_mdet_conf(&det), i) > 0 && isfinite(am_reals_at(am_mdet_uv(&det), 2 * i)) &&
                    isfinite(am_reals_at(am_mdet_uv(&det), 2 * i + 1));
        if (!seen) {
            st = AM_FAIL(err, AM_E_EMPTY, "camera '%s' sees nothing: no detection has confidence > 0 and finite coordinates",
                         det.cameras[c]);
            goto done;
        }
    }
    size_t known = 0;
    for (size_t j = 0; j < det.joint_count; j++) known += am_rig_find_joint(rig, det.names[j]) >= 0;
    if (!known) {
        st = AM_FAIL(err, AM_E_NAME, "none of the %zu detected joint names is a joint of the rig (e.g. '%s')",
                     det.joint_count, det.joint_count ? det.names[0] : "");
        goto done;
    }
    if (det.time_offset && !(o->flags & AM_MV_SEARCH_OFFSETS)) {
        memcpy(res->offsets, det.time_offset, C * sizeof(double));
        for (size_t c = 0; c < C; c++) res->gap_px[c] = res->gap0_px[c] = NAN;
    } else if (o->max_offset >= 0 && C >= 2) {
        am_mdet plain = det;
        plain.time_offset = NULL;
        if ((st = ami_find_offsets(&plain, cal, cams, o->max_offset ? o->max_offset : 12, res, err)) < 0) goto done;
    }
    det.time_offset = res->offsets;
    ami_stage stage = ami_stage_begin("solve: triangulate");
    if ((st = am_triangulate(&det, cal, &o->tri, &tri, err)) < 0) goto done;
    ami_warn_list(&tri->warnings);
    ami_stage_end(&stage);
    am_fit_input in = {.rig = rig, .creature = cr, .det = &det, .calib = cal, .init = tri->joints};
    if ((st = am_fit(&in, &o->fit, &res->fit, err)) < 0) goto done;
    if (res->offsets_found && C >= 2) {
        /* The fitted joints are several times closer to the truth than the triangulation the
         * search judged by: check each camera's shift against them, and fit again if one moves. */
        bool moved = false;
        if ((st = ami_refine_offsets(&det, rig, cams, res->fit->motion, o->max_offset ? o->max_offset : 12, res, &moved,
                                     err)) < 0)
            goto done;
        if (moved) {
            am_fit_result_free(res->fit);
            res->fit = NULL;
            if ((st = am_fit(&in, &o->fit, &res->fit, err)) < 0) goto done;
        }
    }
    ami_warn_list(&res->fit->warnings);
    {
        char *extra = NULL;
        if ((st = ami_fit_extra_json(res->fit, res->offsets, res->offsets_found, &extra, err)) < 0) goto done;
        am_free(res->fit->motion->extra_json);
        res->fit->motion->extra_json = extra;
    }
done:
    am_free(cams);
    am_triangulation_free(tri);
    if (st < 0) {
        am_mv_solve_result_free(res);
        return st;
    }
    *out = res;
    return AM_OK;
}

am_status am_mv_solve(const am_mdet *det, const am_calib *cal, const am_rig *rig, const am_creature *cr,
                      const am_mv_solve_opts *opts, am_mv_solve_result **out, am_error *err)
{
    am_mv_solve_opts o = opts ? *opts : (am_mv_solve_opts){0};
    am_scope sc;
    am_scope_enter(&sc, &o.ctx);
    /* The inner jobs run in this call's scope and report their warnings through it. */
    o.fit.ctx = o.tri.ctx = (am_context){0};
    am_status st = ami_mv_solve(det, cal, rig, cr, &o, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}
