/* One window of the fit: every frame's root and Euler angles at once, through the banded
 * Levenberg-Marquardt of anymove/opt.h. Residuals (in pixels, or pixel-equivalents through the
 * weights):
 * - reprojection of every seen joint in every camera (am_camera_project and its analytic
 *   derivative), weighted by conf^conf_power on the square, under a Cauchy loss whose scale the
 *   caller anneals (40 px -> 6 px);
 * - the distance to every observed 3D joint, point_px pixels per noise sigma, under the same loss;
 * - acceleration of the root translation, root rotation and Euler angles (frames t-1, t, t+1:
 *   block band 2; left out of the early, coarse stages) under a Huber loss, and the angles'
 *   velocity, each angle's weight growing with the square root of its bone's lever (head to
 *   farthest keypoint; run.c sets the weights);
 * - a small pull of every angle to its prior (the rest pose, or the start's analytic IK pose
 *   for 3D input: it also settles twists no joint can see);
 * - a one-sided ground term (no joint below z = 0);
 * - with contacts: a planted joint moves with the ground between consecutive planted frames
 *   and stays at its plant height.
 * Jacobians are analytic: d p / d e = omega x (p - head) for each Euler partial's world axis
 * omega, the exp-map left Jacobian for the root rotation, chained with each camera's
 * d(u, v) / d p. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "fit_internal.h"

void ami_fit_root_quat(const ami_fit *f, const double *x, size_t t, double q[4])
{
    double dq[4];
    am_quat_from_rotvec(x + t * f->P + 3, dq);
    am_quat_mul(dq, f->q0 + 4 * t, q);
}

void ami_fit_fk_all(ami_fit *f, const double *x, bool with_axes)
{
    for (size_t t = 0; t < f->T; t++) {
        const double *xt = x + t * f->P;
        double q[4];
        ami_fit_root_quat(f, x, t, q);
        /* euler is [B][3] with the root entry ignored: the block's w sits where it would be. */
        ami_fk_frame(f->rig, xt, q, xt + AMI_FIT_ROOT_PARAMS - 3, f->pose + t * f->B * 16,
                     with_axes ? f->axes + t * f->B * 9 : NULL, f->joints + t * f->J * 3);
    }
}

/* log(q0[t+1] q0[t]^-1) as a rotation vector, for the rotation's smoothness terms. */
static void ami_fit_update_d(ami_fit *f)
{
    for (size_t t = 0; t + 1 < f->T; t++) {
        double inv[4], rel[4];
        am_quat_conj(f->q0 + 4 * t, inv);
        am_quat_mul(f->q0 + 4 * (t + 1), inv, rel);
        am_quat_to_rotvec(rel, f->d + 3 * t);
    }
    if (f->T) memset(f->d + 3 * (f->T - 1), 0, 3 * sizeof(double));
}

void ami_fit_recenter(ami_fit *f)
{
    for (size_t t = 0; t < f->T; t++) {
        double q[4];
        ami_fit_root_quat(f, f->x, t, q);
        am_quat_normalize(q, f->q0 + 4 * t);
        memset(f->x + t * f->P + 3, 0, 3 * sizeof(double));
    }
    ami_fit_update_d(f);
}

static am_status ami_fit_eval(void *user, const double *x, am_lsq_sink *s)
{
    ami_fit *f = user;
    const am_rig *rig = f->rig;
    const size_t T = f->T, J = f->J, B = f->B, P = f->P, C = f->C, Tc = f->Tc;
    const bool wj = am_lsq_sink_wants_jacobian(s);
    const am_lsq_loss cauchy = {AM_LSQ_LOSS_CAUCHY, f->scale};
    /* 3D points: Huber, not Cauchy. Their noise is estimated (or floored) in metres; a Cauchy
     * tail at a few sigma would let the smoothness drag an exactly observed joint centimetres
     * away at a logarithmic cost. */
    const am_lsq_loss huber = {AM_LSQ_LOSS_HUBER, f->scale};
    /* Huber on the acceleration: quiet frames stay smooth, a real quick step is not flattened. */
    const am_lsq_loss accel_loss = {AM_LSQ_LOSS_HUBER, f->o.accel_huber_px};
    ami_fit_fk_all(f, x, wj);

    int32_t cols[2 * AMI_FIT_MAX_COLS + 8];
    double jac[3 * AMI_FIT_MAX_COLS], jr[3 * AMI_FIT_MAX_COLS];
    for (size_t t = 0; t < T; t++) {
        const size_t tc = f->t0 + t;
        const double *xt = x + t * P, *jt = f->joints + t * J * 3;
        for (size_t j = 0; j < J; j++) {
            const double *p = jt + 3 * j;
            bool ground = p[2] < 0.0 && f->o.w_ground > 0.0, any = ground;
            for (size_t c = 0; c < C && !any; c++) any = f->conf[(c * Tc + tc) * J + j] > 0;
            const double pw = f->pw ? f->pw[tc * J + j] : 0.0;
            any |= pw > 0;
            if (!any) continue;
            size_t nc = (size_t)f->ch->col_count[j];
            if (nc > AMI_FIT_MAX_COLS) return AM_E_LIMIT;
            if (wj) {
                ami_joint_jacobian(rig, f->ch, j, f->pose + t * B * 16, f->axes + t * B * 9, jt, xt, xt + 3, cols, jac);
                for (size_t k = 0; k < nc; k++) cols[k] += (int32_t)(t * P);
            } else {
                for (size_t k = 0; k < nc; k++) cols[k] = (int32_t)(t * P + k);
            }
            /* Every term of this joint depends on the frame's parameters through its position
             * p alone: reduce them to p's 3 x 3 Gauss-Newton matrix M and gradient v, then add
             * jac^T M jac once (not once per camera: the column pairs are most of the work). */
            double M[9] = {0}, v[3] = {0}, cost = 0.0;
            for (size_t c = 0; c < C; c++) {
                size_t i = (c * Tc + tc) * J + j;
                if (f->conf[i] <= 0) continue;
                double uv[2], D[6], sw = sqrt(f->conf[i]), vw = f->v_weight ? f->v_weight[c] : 1.0;
                am_camera_project(f->cams[c], p, uv, wj ? D : NULL);
                double su = sw, sv = sw * vw;
                double r[2] = {su * (uv[0] - f->uv[2 * i]), sv * (uv[1] - f->uv[2 * i + 1])}, wgt;
                cost += 0.5 * am_lsq_loss_rho(&cauchy, r[0] * r[0] + r[1] * r[1], &wgt);
                if (!wj || wgt == 0.0) continue;
                /* rows of the residual's Jacobian in p: su D[0..2], sv D[3..5] */
                for (int a = 0; a < 3; a++) {
                    v[a] += wgt * (su * D[a] * r[0] + sv * D[3 + a] * r[1]);
                    for (int b = 0; b < 3; b++)
                        M[3 * a + b] += wgt * (su * su * D[a] * D[b] + sv * sv * D[3 + a] * D[3 + b]);
                }
            }
            if (pw > 0) {
                const double *o = f->pts + (tc * J + j) * 3, k3 = sqrt(pw) * f->point_scale;
                double r[3] = {k3 * (p[0] - o[0]), k3 * (p[1] - o[1]), k3 * (p[2] - o[2])}, wgt;
                cost += 0.5 * am_lsq_loss_rho(&huber, r[0] * r[0] + r[1] * r[1] + r[2] * r[2], &wgt);
                for (int a = 0; a < 3; a++) {
                    v[a] += wgt * k3 * r[a];
                    M[4 * a] += wgt * k3 * k3;
                }
            }
            if (ground) {
                double r = f->o.w_ground * p[2];
                cost += 0.5 * r * r;
                v[2] += f->o.w_ground * r;
                M[8] += f->o.w_ground * f->o.w_ground;
            }
            am_lsq_add_gram(s, cost, 3, M, v, nc, cols, wj ? jac : NULL);
        }
    }

    /* Smoothness: second differences of every parameter, first differences of the angles. */
    for (size_t t = 0; t < T; t++) {
        for (size_t k = 0; k < P; k++) {
            bool is_trans = k < 3, is_rot = k >= 3 && k < 6;
            const size_t bone = k < AMI_FIT_ROOT_PARAMS ? 0 : (k - AMI_FIT_ROOT_PARAMS) / 3 + 1;
            if (t + 2 < T && f->temporal >= 2) {
                double wa = (is_trans ? f->acc_w_trans : f->acc_w[bone]) * (f->smooth_t ? f->smooth_t[(f->t0 + t + 1) * B + bone] : 1.0);
                int32_t cc[3] = {(int32_t)(t * P + k), (int32_t)((t + 1) * P + k), (int32_t)((t + 2) * P + k)};
                double r = x[cc[0]] - 2.0 * x[cc[1]] + x[cc[2]];
                if (is_rot) r += f->d[3 * (t + 1) + (k - 3)] - f->d[3 * t + (k - 3)];
                r *= wa;
                double Ja[3] = {wa, -2.0 * wa, wa};
                am_lsq_add(s, 1, &r, 3, cc, Ja, &accel_loss);
            }
            if (t + 1 < T && !is_trans) {
                double wv = f->vel_w[bone] * (f->smooth_t ? fmin(f->smooth_t[(f->t0 + t) * B + bone], f->smooth_t[(f->t0 + t + 1) * B + bone]) : 1.0);
                int32_t cc[2] = {(int32_t)(t * P + k), (int32_t)((t + 1) * P + k)};
                double r = x[cc[1]] - x[cc[0]];
                if (is_rot) r += f->d[3 * t + (k - 3)];
                r *= wv;
                double Jv[2] = {-wv, wv};
                am_lsq_add(s, 1, &r, 2, cc, Jv, NULL);
            }
            if (k >= AMI_FIT_ROOT_PARAMS) {
                int32_t cc = (int32_t)(t * P + k);
                double target = 0.0, wr = f->o.w_rest;
                if (f->prior) {
                    /* The start's pose, as stiff as a tenth of what one point at the bone's lever
                     * tells (w_prior_points): where the points see the angle they decide; where
                     * nothing sees it (a twist) the start's choice stays unless the motion's
                     * smoothness outweighs it, which it does only as the points get noisy. */
                    target = f->prior[(f->t0 + t) * P + k];
                    wr = f->o.w_prior_points * f->lever[(k - AMI_FIT_ROOT_PARAMS) / 3 + 1] * f->point_scale;
                }
                double r = wr * (x[cc] - target), Jr = wr;
                am_lsq_add(s, 1, &r, 1, &cc, &Jr, NULL);
            }
        }
    }

    /* Plants: still relative to the ground, at the plant's height. */
    if (f->use_contacts) {
        const double wc = f->o.w_contact, dt = 1.0 / f->fps;
        double ja[3 * AMI_FIT_MAX_COLS], jb[3 * AMI_FIT_MAX_COLS];
        int32_t ca[AMI_FIT_MAX_COLS], cb[AMI_FIT_MAX_COLS];
        double jj[3 * 2 * AMI_FIT_MAX_COLS];
        for (size_t ci = 0; ci < f->Cc; ci++) {
            size_t j = (size_t)f->cj[ci];
            size_t nc = (size_t)f->ch->col_count[j];
            if (nc > AMI_FIT_MAX_COLS) return AM_E_LIMIT;
            for (size_t t = 0; t < T; t++) {
                if (!f->plant[t * f->Cc + ci]) continue;
                const double *pa = f->joints + (t * J + j) * 3;
                if (wj) {
                    ami_joint_jacobian(rig, f->ch, j, f->pose + t * B * 16, f->axes + t * B * 9, f->joints + t * J * 3,
                                       x + t * P, x + t * P + 3, ca, ja);
                    for (size_t k = 0; k < nc; k++) ca[k] += (int32_t)(t * P);
                } else {
                    for (size_t k = 0; k < nc; k++) ca[k] = (int32_t)(t * P + k);
                }
                double rz = wc * (pa[2] - f->plant_z[t * f->Cc + ci]);
                if (wj)
                    for (size_t k = 0; k < nc; k++) jr[k] = wc * ja[2 * nc + k];
                am_lsq_add(s, 1, &rz, nc, ca, wj ? jr : NULL, NULL);
                if (t + 1 >= T || !f->plant[(t + 1) * f->Cc + ci]) continue;
                const double *pb = f->joints + ((t + 1) * J + j) * 3;
                double r[3];
                for (int k = 0; k < 3; k++) r[k] = wc * (pb[k] - pa[k] - f->vg[k] * dt);
                if (wj) {
                    ami_joint_jacobian(rig, f->ch, j, f->pose + (t + 1) * B * 16, f->axes + (t + 1) * B * 9,
                                       f->joints + (t + 1) * J * 3, x + (t + 1) * P, x + (t + 1) * P + 3, cb, jb);
                    for (size_t k = 0; k < nc; k++) cb[k] += (int32_t)((t + 1) * P);
                    for (size_t k = 0; k < nc; k++) {
                        cols[k] = ca[k];
                        cols[nc + k] = cb[k];
                    }
                    for (int d = 0; d < 3; d++)
                        for (size_t k = 0; k < nc; k++) {
                            jj[(size_t)d * 2 * nc + k] = -wc * ja[(size_t)d * nc + k];
                            jj[(size_t)d * 2 * nc + nc + k] = wc * jb[(size_t)d * nc + k];
                        }
                } else {
                    for (size_t k = 0; k < nc; k++) {
                        cols[k] = ca[k];
                        cols[nc + k] = (int32_t)((t + 1) * P + k);
                    }
                }
                am_lsq_add(s, 3, r, 2 * nc, cols, wj ? jj : NULL, NULL);
            }
        }
    }
    return AM_OK;
}

am_status ami_fit_solve(ami_fit *f, double scale, int temporal, uint32_t iterations, am_error *err)
{
    f->scale = scale;
    f->temporal = temporal;
    ami_fit_update_d(f);
    /* Blocks two frames apart couple only parameter k to parameter k (acceleration), and
     * neighbours densely only through plants (chain columns): half-bandwidth 2P, not 3P - 1. */
    am_lsq_problem pb = {.param_count = f->T * f->P, .block_size = f->P, .block_band = (size_t)temporal,
                         .bandwidth = (size_t)temporal * f->P,
                         .lower = f->lower, .upper = f->upper, .eval = ami_fit_eval, .user = f};
    /* Workspaces are tens of MB: build each once per window, reuse it every stage. */
    if (!f->ws[temporal]) AMI_TRY(am_lsq_create(&pb, &f->ws[temporal], err));
    am_lsq_opts o = {.max_iterations = iterations, .ftol = 1e-7};
    am_lsq_report rep = {0};
    am_status st = am_lsq_solve(f->ws[temporal], f->x, &o, &rep, err);
    f->iterations_done += rep.iterations;
    if (st < 0) return st;
    ami_fit_recenter(f);
    return AM_OK;
}

static double ami_median_small(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
            double t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Where joint j of window frame t is expected in camera c: a 9-frame temporal median of the
 * track (swaps last 1-3 frames, so the median ignores them), or the fit's projection. */
static bool ami_expected(ami_fit *f, size_t c, size_t t, size_t j, bool use_fit, double e[2])
{
    const size_t J = f->J, Tc = f->Tc;
    if (use_fit) {
        am_camera_project(f->cams[c], f->joints + (t * J + j) * 3, e, NULL);
        return isfinite(e[0]) && isfinite(e[1]);
    }
    for (int k = 0; k < 2; k++) {
        double v[9];
        size_t n = 0;
        for (long u = (long)t - 4; u <= (long)t + 4; u++) {
            if (u < 0 || u >= (long)f->T) continue;
            size_t i = (c * Tc + f->t0 + (size_t)u) * J + j;
            if (f->conf[i] > 0) v[n++] = f->uv[2 * i + (size_t)k];
        }
        if (!n) return false;
        e[k] = ami_median_small(v, n);
    }
    return true;
}

size_t ami_fit_swap_repair(ami_fit *f, bool use_fit, uint8_t *frames)
{
    const size_t J = f->J, Tc = f->Tc;
    size_t swapped = 0;
    if (frames) memset(frames, 0, f->T);
    if (use_fit) ami_fit_fk_all(f, f->x, false);
    for (size_t c = 0; c < f->C; c++)
        for (size_t p = 0; p < f->np; p++) {
            size_t a = (size_t)f->pairs[2 * p], b = (size_t)f->pairs[2 * p + 1];
            for (size_t t = f->fixed; t < f->T; t++) {
                size_t ia = (c * Tc + f->t0 + t) * J + a, ib = (c * Tc + f->t0 + t) * J + b;
                if (f->conf[ia] <= 0 || f->conf[ib] <= 0) continue;
                double pa[2], pb[2];
                if (!ami_expected(f, c, t, a, use_fit, pa) || !ami_expected(f, c, t, b, use_fit, pb)) continue;
                const double *oa = f->uv + 2 * ia, *ob = f->uv + 2 * ib;
                double keep = 0, swap = 0;
                for (int k = 0; k < 2; k++) {
                    keep += (oa[k] - pa[k]) * (oa[k] - pa[k]) + (ob[k] - pb[k]) * (ob[k] - pb[k]);
                    swap += (oa[k] - pb[k]) * (oa[k] - pb[k]) + (ob[k] - pa[k]) * (ob[k] - pa[k]);
                }
                /* Only a clear win: near-coincident pairs stay as read. */
                if (!(swap < 0.25 * keep && keep > 100.0)) continue;
                for (int k = 0; k < 2; k++) {
                    double tmp = f->uv[2 * ia + (size_t)k];
                    f->uv[2 * ia + (size_t)k] = f->uv[2 * ib + (size_t)k];
                    f->uv[2 * ib + (size_t)k] = tmp;
                }
                double tc = f->conf[ia];
                f->conf[ia] = f->conf[ib];
                f->conf[ib] = tc;
                if (frames) frames[t] = 1;
                swapped++;
            }
        }
    return swapped;
}

void ami_fit_restart_frames(ami_fit *f, const uint8_t *frames)
{
    const size_t T = f->T, P = f->P;
    for (size_t t = f->fixed; t < T;) {
        if (!frames[t]) {
            t++;
            continue;
        }
        size_t e = t;
        while (e + 1 < T && frames[e + 1]) e++;
        /* Neighbours that were read right: the frame before the run (fixed frames included: they
         * are the previous window's result) and the one after it. */
        bool has_a = t > 0, has_b = e + 1 < T;
        size_t ta = has_a ? t - 1 : 0, tb = has_b ? e + 1 : 0;
        if (has_a || has_b) {
            for (size_t u = t; u <= e; u++) {
                double s = !has_a ? 1.0 : !has_b ? 0.0 : (double)(u - ta) / (double)(tb - ta);
                const double *xa = f->x + (has_a ? ta : tb) * P, *xb = f->x + (has_b ? tb : ta) * P;
                double *xu = f->x + u * P;
                double qa[4], qb[4];
                ami_fit_root_quat(f, f->x, has_a ? ta : tb, qa);
                ami_fit_root_quat(f, f->x, has_b ? tb : ta, qb);
                for (size_t p = 0; p < P; p++) {
                    double v = (1.0 - s) * xa[p] + s * xb[p];
                    /* Both ends lie inside the box, so does the blend; the clamp only absorbs
                     * rounding. */
                    if (v < f->lower[u * P + p]) v = f->lower[u * P + p];
                    if (v > f->upper[u * P + p]) v = f->upper[u * P + p];
                    xu[p] = v;
                }
                am_quat_slerp(qa, qb, s, f->q0 + 4 * u);
                xu[3] = xu[4] = xu[5] = 0.0;
            }
        }
        t = e + 1;
    }
    ami_fit_update_d(f);
}
