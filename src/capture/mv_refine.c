/* Whole-clip refinement of triangulated joints (AM_TRI_REFINE), as aniposelib's optim_points:
 * minimise over every joint position of a window of frames
 *   Cauchy(reprojection of the detections the per-point solve used, scaled by sqrt(conf))
 * + Huber(w_smooth * acceleration in m/s^2, per joint)
 * + (w_bone * (|X_a - X_b| - L_ab))^2 for the given edges, L_ab the edge's median length
 * through anymove/opt.h's banded Levenberg-Marquardt (parameters frame-major, 3J per frame;
 * acceleration couples three frames, so the band is 2 frames). Windows of refine_window frames
 * keep memory at O(window * (3J)^2); each window after the first holds its first two frames at
 * the previous window's result so the acceleration terms stay continuous across the seam.
 * Joints without a position enter at their interpolated track (smoothness only) and leave as
 * missing: the refinement does not invent what no camera saw. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/multiview.h"
#include "anymove/opt.h"
#include "capture/capture_internal.h"
#include "core/internal.h"

typedef struct {
    const am_mdet *det;
    const am_camera *const *cams;
    const am_triangulate_opts *o;
    const am_triangulation *tri;
    const double *length;  /* [E] */
    size_t t0, n;          /* window start, frames */
    size_t J;
} ami_refine;

static int ami_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static am_status ami_refine_eval(void *user, const double *x, am_lsq_sink *sink)
{
    const ami_refine *R = user;
    const am_mdet *d = R->det;
    const size_t C = d->camera_count, T = d->frame_count, J = R->J, P = 3 * J;
    const bool jac = am_lsq_sink_wants_jacobian(sink);
    const am_lsq_loss reproj = {AM_LSQ_LOSS_CAUCHY, R->o->refine_loss_px};
    const am_lsq_loss smooth = {AM_LSQ_LOSS_HUBER, 5.0};
    for (size_t k = 0; k < R->n; k++) {
        const size_t t = R->t0 + k;
        for (size_t j = 0; j < J; j++) {
            const double *X = x + k * P + 3 * j;
            int32_t cols[9];
            for (int q = 0; q < 3; q++) cols[q] = (int32_t)(k * P + 3 * j + (size_t)q);
            for (size_t c = 0; c < C; c++) {
                if (!R->tri->used[(c * T + t) * J + j]) continue;
                /* The used detection itself (time offsets were applied when it was read). */
                double ft = (double)t - (d->time_offset ? d->time_offset[c] : 0.0);
                size_t ts = (size_t)llround(ft < 0 ? 0 : ft);
                if (ts >= T) ts = T - 1;
                const size_t i = (c * T + ts) * J + j;
                const double uv[2] = {am_reals_at(am_mdet_uv(d), 2 * i), am_reals_at(am_mdet_uv(d), 2 * i + 1)};
                double w = sqrt(am_reals_at(am_mdet_conf(d), i));
                if (!(w > 0) || !isfinite(uv[0])) continue;
                double pr[2], Jp[6], r[2];
                am_camera_project(R->cams[c], X, pr, jac ? Jp : NULL);
                r[0] = w * (pr[0] - uv[0]);
                r[1] = w * (pr[1] - uv[1]);
                if (jac)
                    for (int q = 0; q < 6; q++) Jp[q] *= w;
                am_lsq_add(sink, 2, r, 3, cols, jac ? Jp : NULL, &reproj);
            }
            if (k >= 1 && k + 1 < R->n) {
                /* One residual per axis: a block then touches only one coordinate of the three
                 * frames, so the band stays 2 frames wide (opt.h's bandwidth hint). */
                const double s = R->o->w_smooth * R->det->fps * R->det->fps;
                const double Jm[3] = {s, -2.0 * s, s};
                for (size_t q = 0; q < 3; q++) {
                    int32_t c3[3];
                    for (size_t f = 0; f < 3; f++) c3[f] = (int32_t)((k - 1 + f) * P + 3 * j + q);
                    double r = s * (x[(k + 1) * P + 3 * j + q] - 2.0 * X[q] + x[(k - 1) * P + 3 * j + q]);
                    am_lsq_add(sink, 1, &r, 3, c3, Jm, &smooth);
                }
            }
        }
        for (size_t e = 0; e < R->o->edge_count; e++) {
            if (!isfinite(R->length[e])) continue;
            size_t a = (size_t)R->o->edges[2 * e], b = (size_t)R->o->edges[2 * e + 1];
            const double *Xa = x + k * P + 3 * a, *Xb = x + k * P + 3 * b;
            double dv[3] = {Xa[0] - Xb[0], Xa[1] - Xb[1], Xa[2] - Xb[2]};
            double len = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
            double r = R->o->w_bone * (len - R->length[e]);
            double Jb[6];
            int32_t cb[6];
            for (int q = 0; q < 3; q++) {
                double g = len > 1e-12 ? R->o->w_bone * dv[q] / len : 0.0;
                Jb[q] = g;
                Jb[3 + q] = -g;
                cb[q] = (int32_t)(k * P + 3 * a + (size_t)q);
                cb[3 + q] = (int32_t)(k * P + 3 * b + (size_t)q);
            }
            am_lsq_add(sink, 1, &r, 6, cb, Jb, NULL);
        }
    }
    return AM_OK;
}

am_status ami_tri_refine(const am_mdet *det, const am_camera *const *cams, const am_triangulate_opts *o,
                         am_triangulation *tri, am_error *err)
{
    const size_t T = tri->frame_count, J = tri->joint_count, C = tri->camera_count, P = 3 * J, E = o->edge_count;
    if (T < 3) return AM_OK;
    ami_stage stage = ami_stage_begin("refine");
    am_status st = AM_OK;
    double *track = am_alloc_array(T * P, sizeof *track), *length = am_alloc_array(E + 1, sizeof *length);
    double *tmp = am_alloc_array(T + 1, sizeof *tmp);
    const size_t W = o->refine_window < T ? o->refine_window : T;
    double *x = am_alloc_array(W * P, sizeof *x), *lo = am_alloc_array(W * P, sizeof *lo), *hi = am_alloc_array(W * P, sizeof *hi);
    uint8_t *seen = am_alloc_array(J, 1);
    am_lsq *ws = NULL;
    if (!track || !length || !tmp || !x || !lo || !hi || !seen) {
        st = AM_FAIL(err, AM_E_NOMEM, "refinement");
        goto done;
    }
    const double *pos = tri->joints->joints;
    memcpy(track, pos, T * P * sizeof *track);
    for (size_t j = 0; j < J; j++) {
        seen[j] = 1;
        for (int q = 0; q < 3; q++)
            if (!ami_fill_track(track + 3 * j + (size_t)q, T, P)) seen[j] = 0;
        /* A joint no frame has is held fixed; any finite value does (it has no residuals but a
         * zero acceleration, and is never written back), NaN bounds would not. */
        for (size_t t = 0; !seen[j] && t < T; t++) memset(track + t * P + 3 * j, 0, 3 * sizeof *track);
    }
    for (size_t e = 0; e < E; e++) {
        size_t a = (size_t)o->edges[2 * e], b = (size_t)o->edges[2 * e + 1], n = 0;
        for (size_t t = 0; t < T; t++) {
            const double *Xa = pos + (t * J + a) * 3, *Xb = pos + (t * J + b) * 3;
            if (isnan(Xa[0]) || isnan(Xb[0])) continue;
            tmp[n++] = am_vec3_dist(Xa, Xb);
        }
        if (n) qsort(tmp, n, sizeof *tmp, ami_cmp_d);
        length[e] = n ? tmp[n / 2] : NAN;
    }
    ami_refine R = {.det = det, .cams = cams, .o = o, .tri = tri, .length = length, .J = J};
    am_lsq_opts lo_opts = {.max_iterations = o->refine_iterations};
    for (size_t t0 = 0; t0 + 2 < T;) {
        /* the share done before this window: 1 is the stage's end, which ami_stage_end reports */
        if (!ami_progress("refine", (double)t0 / (double)T)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "refinement");
            goto done;
        }
        size_t n = T - t0 < W ? T - t0 : W;
        const size_t hold = t0 > 0 ? 2 : 0;
        R.t0 = t0;
        R.n = n;
        memcpy(x, track + t0 * P, n * P * sizeof *x);
        for (size_t k = 0; k < n * P; k++) {
            bool fixed = k < hold * P || !seen[(k % P) / 3];
            lo[k] = fixed ? x[k] : -INFINITY;
            hi[k] = fixed ? x[k] : INFINITY;
        }
        am_lsq_problem pb = {.param_count = n * P, .block_size = P, .block_band = 2, .bandwidth = 2 * P,
                             .lower = lo, .upper = hi, .eval = ami_refine_eval, .user = &R};
        if ((st = am_lsq_create(&pb, &ws, err)) != AM_OK) goto done;
        am_status s = am_lsq_solve(ws, x, &lo_opts, NULL, err);
        am_lsq_free(ws);
        ws = NULL;
        if (s < 0) {
            st = s;
            goto done;
        }
        memcpy(track + t0 * P, x, n * P * sizeof *x);
        if (t0 + n >= T) break;
        t0 += n - 2;
    }
    /* Write back where the per-point solve had a position, and re-measure those points. */
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < J; j++) {
            double *X = tri->joints->joints + (t * J + j) * 3;
            if (isnan(X[0])) continue;
            memcpy(X, track + t * P + 3 * j, 3 * sizeof *X);
            double se = 0;
            size_t n = 0;
            for (size_t c = 0; c < C; c++) {
                if (!tri->used[(c * T + t) * J + j]) continue;
                double ft = (double)t - (det->time_offset ? det->time_offset[c] : 0.0);
                size_t ts = (size_t)llround(ft < 0 ? 0 : ft);
                if (ts >= T) ts = T - 1;
                const size_t i = (c * T + ts) * J + j;
                const double uv[2] = {am_reals_at(am_mdet_uv(det), 2 * i), am_reals_at(am_mdet_uv(det), 2 * i + 1)};
                double pr[2];
                am_camera_project(cams[c], X, pr, NULL);
                se += hypot(pr[0] - uv[0], pr[1] - uv[1]);
                n++;
            }
            if (n) tri->reproj_px[t * J + j] = (float)(se / (double)n);
        }
    ami_stage_end(&stage);
done:
    am_lsq_free(ws);
    am_free(track);
    am_free(length);
    am_free(tmp);
    am_free(x);
    am_free(lo);
    am_free(hi);
    am_free(seen);
    return st;
}
