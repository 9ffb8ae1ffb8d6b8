/* The fit: every frame's root and Euler angles at once, through the banded Levenberg-Marquardt
 * of anymove/opt.h. Residuals (in pixels, or pixel-equivalents through the weights):
 * - reprojection of every seen joint in both views, sqrt(confidence)-weighted, under a Cauchy
 *   loss whose scale the caller anneals (40 px -> 6 px); the front view's vertical residual is
 *   down-weighted (its heights are the less reliable ones);
 * - acceleration of the root translation, root rotation and Euler angles (frames t-1, t, t+1:
 *   block band 2; left out of the early, coarse stages) under a Huber loss, each angle's
 *   weight scaled by the square root of its bone's lever (head to farthest keypoint), and the
 *   Euler angles' velocity;
 * - a small pull of every angle to rest (it also fixes unobservable twists);
 * - a one-sided ground term (no joint below z = 0);
 * - with contacts: a planted joint moves with the ground between consecutive planted frames
 *   and stays at its plant height.
 * Jacobians are analytic: d p / d e = omega x (p - head) for each Euler partial's world axis
 * omega, and the exp-map left Jacobian for the root rotation. */
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

void ami_cap_root_quat(const ami_cap *c, const double *x, size_t t, double q[4])
{
    double dq[4];
    am_quat_from_rotvec(x + t * c->P + 3, dq);
    am_quat_mul(dq, c->q0 + 4 * t, q);
}

void ami_cap_fk_all(ami_cap *c, const double *x, bool with_axes)
{
    for (size_t t = 0; t < c->T; t++) {
        const double *xt = x + t * c->P;
        double q[4];
        ami_cap_root_quat(c, x, t, q);
        /* euler is [B][3] with the root entry ignored: the block's w sits where it would be. */
        ami_fk_frame(c->rig, xt, q, xt + AMI_CAP_ROOT_PARAMS - 3, c->pose + t * c->B * 16,
                     with_axes ? c->axes + t * c->B * 9 : NULL, c->joints + t * c->J * 3);
    }
}

/* log(q0[t+1] q0[t]^-1) as a rotation vector, for the rotation's smoothness terms. */
static void ami_cap_update_d(ami_cap *c)
{
    for (size_t t = 0; t + 1 < c->T; t++) {
        double inv[4], rel[4];
        am_quat_conj(c->q0 + 4 * t, inv);
        am_quat_mul(c->q0 + 4 * (t + 1), inv, rel);
        am_quat_to_rotvec(rel, c->d + 3 * t);
    }
    if (c->T) memset(c->d + 3 * (c->T - 1), 0, 3 * sizeof(double));
}

void ami_cap_recenter(ami_cap *c)
{
    for (size_t t = 0; t < c->T; t++) {
        double q[4];
        ami_cap_root_quat(c, c->x, t, q);
        am_quat_normalize(q, c->q0 + 4 * t);
        memset(c->x + t * c->P + 3, 0, 3 * sizeof(double));
    }
    ami_cap_update_d(c);
}

static am_status ami_cap_eval(void *user, const double *x, am_lsq_sink *s)
{
    ami_cap *c = user;
    const am_rig *rig = c->rig;
    const size_t T = c->T, J = c->J, B = c->B, P = c->P;
    const bool wj = am_lsq_sink_wants_jacobian(s);
    const double im = 1.0 / c->L.m_per_px, fvw = c->o.front_v_weight;
    const am_lsq_loss cauchy = {AM_LSQ_LOSS_CAUCHY, c->scale};
    /* Huber on the acceleration: quiet frames stay smooth, a real quick step is not flattened. */
    const am_lsq_loss accel_loss = {AM_LSQ_LOSS_HUBER, c->o.accel_huber_px};
    ami_cap_fk_all(c, x, wj);

    int32_t cols[2 * (AMI_CAP_ROOT_PARAMS + 3 * 64) + 8];
    const size_t maxc = AMI_CAP_ROOT_PARAMS + 3 * 64;
    double jac[3 * (AMI_CAP_ROOT_PARAMS + 3 * 64)], jr[2 * (AMI_CAP_ROOT_PARAMS + 3 * 64)];
    for (size_t t = 0; t < T; t++) {
        const double *xt = x + t * P, *jt = c->joints + t * J * 3;
        for (size_t j = 0; j < J; j++) {
            size_t i = t * J + j;
            const double *p = jt + 3 * j;
            bool ground = p[2] < 0.0;
            if (c->fconf[i] <= 0 && c->sconf[i] <= 0 && !ground) continue;
            size_t nc = (size_t)c->ch.col_count[j];
            if (nc > maxc) return AM_E_LIMIT;
            if (wj) {
                ami_joint_jacobian(rig, &c->ch, j, c->pose + t * B * 16, c->axes + t * B * 9, jt, xt, xt + 3, cols, jac);
                for (size_t k = 0; k < nc; k++) cols[k] += (int32_t)(t * P);
            } else {
                for (size_t k = 0; k < nc; k++) cols[k] = (int32_t)(t * P + k);
            }
            if (c->fconf[i] > 0) {
                double uv[2], sw = sqrt(c->fconf[i]);
                ami_project_front(&c->L, p, uv);
                double r[2] = {sw * (uv[0] - c->fuv[2 * i]), sw * fvw * (uv[1] - c->fuv[2 * i + 1])};
                if (wj)
                    for (size_t k = 0; k < nc; k++) {
                        jr[k] = sw * im * jac[0 * nc + k];
                        jr[nc + k] = -sw * fvw * im * jac[2 * nc + k];
                    }
                am_lsq_add(s, 2, r, nc, cols, wj ? jr : NULL, &cauchy);
            }
            if (c->sconf[i] > 0) {
                double uv[2], sw = sqrt(c->sconf[i]);
                ami_project_side(&c->L, p, uv);
                double r[2] = {sw * (uv[0] - c->suv[2 * i]), sw * (uv[1] - c->suv[2 * i + 1])};
                if (wj)
                    for (size_t k = 0; k < nc; k++) {
                        jr[k] = -sw * im * jac[1 * nc + k];
                        jr[nc + k] = -sw * im * jac[2 * nc + k];
                    }
                am_lsq_add(s, 2, r, nc, cols, wj ? jr : NULL, &cauchy);
            }
            if (ground) {
                double r = c->o.w_ground * p[2];
                if (wj)
                    for (size_t k = 0; k < nc; k++) jr[k] = c->o.w_ground * jac[2 * nc + k];
                am_lsq_add(s, 1, &r, nc, cols, wj ? jr : NULL, NULL);
            }
        }
    }

    /* Smoothness: second differences of every parameter, first differences of the angles. */
    for (size_t t = 0; t < T; t++) {
        for (size_t k = 0; k < P; k++) {
            bool is_trans = k < 3, is_rot = k >= 3 && k < 6;
            if (t + 2 < T && c->temporal >= 2) {
                double wa = is_trans ? c->o.w_accel_trans : c->o.w_accel;
                /* A long bone's angle moves more of the body: scale by sqrt(lever / 25 cm)
                 * (measured: the square root beat both 1 and the full ratio). */
                if (k >= AMI_CAP_ROOT_PARAMS) wa *= sqrt(c->lever[(k - AMI_CAP_ROOT_PARAMS) / 3 + 1] / 0.25);
                int32_t cc[3] = {(int32_t)(t * P + k), (int32_t)((t + 1) * P + k), (int32_t)((t + 2) * P + k)};
                double r = x[cc[0]] - 2.0 * x[cc[1]] + x[cc[2]];
                if (is_rot) r += c->d[3 * (t + 1) + (k - 3)] - c->d[3 * t + (k - 3)];
                r *= wa;
                double Ja[3] = {wa, -2.0 * wa, wa};
                am_lsq_add(s, 1, &r, 3, cc, Ja, &accel_loss);
            }
            if (t + 1 < T && !is_trans) {
                double wv = c->o.w_vel;
                int32_t cc[2] = {(int32_t)(t * P + k), (int32_t)((t + 1) * P + k)};
                double r = x[cc[1]] - x[cc[0]];
                if (is_rot) r += c->d[3 * t + (k - 3)];
                r *= wv;
                double Jv[2] = {-wv, wv};
                am_lsq_add(s, 1, &r, 2, cc, Jv, NULL);
            }
            if (k >= AMI_CAP_ROOT_PARAMS) {
                int32_t cc = (int32_t)(t * P + k);
                double r = c->o.w_rest * x[cc], Jr = c->o.w_rest;
                am_lsq_add(s, 1, &r, 1, &cc, &Jr, NULL);
            }
        }
    }

    /* Plants: still relative to the ground, at the plant's height. */
    if (c->use_contacts) {
        const double wc = c->o.w_contact, dt = 1.0 / c->fps;
        double ja[3 * (AMI_CAP_ROOT_PARAMS + 3 * 64)], jb[3 * (AMI_CAP_ROOT_PARAMS + 3 * 64)];
        int32_t ca[AMI_CAP_ROOT_PARAMS + 3 * 64], cb[AMI_CAP_ROOT_PARAMS + 3 * 64];
        double jj[3 * 2 * (AMI_CAP_ROOT_PARAMS + 3 * 64)];
        for (size_t ci = 0; ci < c->C; ci++) {
            size_t j = (size_t)c->cj[ci];
            size_t nc = (size_t)c->ch.col_count[j];
            if (nc > maxc) return AM_E_LIMIT;
            for (size_t t = 0; t < T; t++) {
                if (!c->plant[t * c->C + ci]) continue;
                const double *pa = c->joints + (t * J + j) * 3;
                if (wj) {
                    ami_joint_jacobian(rig, &c->ch, j, c->pose + t * B * 16, c->axes + t * B * 9, c->joints + t * J * 3,
                                       x + t * P, x + t * P + 3, ca, ja);
                    for (size_t k = 0; k < nc; k++) ca[k] += (int32_t)(t * P);
                } else {
                    for (size_t k = 0; k < nc; k++) ca[k] = (int32_t)(t * P + k);
                }
                double rz = wc * (pa[2] - c->plant_z[t * c->C + ci]);
                if (wj)
                    for (size_t k = 0; k < nc; k++) jr[k] = wc * ja[2 * nc + k];
                am_lsq_add(s, 1, &rz, nc, ca, wj ? jr : NULL, NULL);
                if (t + 1 >= T || !c->plant[(t + 1) * c->C + ci]) continue;
                const double *pb = c->joints + ((t + 1) * J + j) * 3;
                double r[3];
                for (int k = 0; k < 3; k++) r[k] = wc * (pb[k] - pa[k] - c->vg[k] * dt);
                if (wj) {
                    ami_joint_jacobian(rig, &c->ch, j, c->pose + (t + 1) * B * 16, c->axes + (t + 1) * B * 9,
                                       c->joints + (t + 1) * J * 3, x + (t + 1) * P, x + (t + 1) * P + 3, cb, jb);
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

am_status ami_cap_fit(ami_cap *c, double scale, int temporal, uint32_t iterations, uint32_t *iters_done,
                      am_error *err)
{
    c->scale = scale;
    c->temporal = temporal;
    ami_cap_update_d(c);
    /* Blocks two frames apart couple only parameter k to parameter k (acceleration), and
     * neighbours densely only through plants (chain columns): half-bandwidth 2P, not 3P - 1. */
    am_lsq_problem pb = {.param_count = c->T * c->P, .block_size = c->P, .block_band = (size_t)temporal,
                         .bandwidth = (size_t)temporal * c->P,
                         .lower = c->lower, .upper = c->upper, .eval = ami_cap_eval, .user = c};
    /* Workspaces are tens of MB for long clips: build each once, reuse it every stage. */
    if (!c->ws[temporal]) AMI_TRY(am_lsq_create(&pb, &c->ws[temporal], err));
    am_lsq_opts o = {.max_iterations = iterations, .ftol = 1e-7};
    am_lsq_report rep = {0};
    am_status st = am_lsq_solve(c->ws[temporal], c->x, &o, &rep, err);
    if (iters_done) *iters_done += rep.iterations;
    if (st < 0) return st;
    ami_cap_recenter(c);
    return AM_OK;
}

void ami_cap_reproj(ami_cap *c, double *front, double *front_x, double *side)
{
    ami_cap_fk_all(c, c->x, false);
    double sf = 0, sfx = 0, ss = 0;
    size_t nf = 0, ns = 0;
    for (size_t i = 0; i < c->T * c->J; i++) {
        const double *p = c->joints + 3 * i;
        double uv[2];
        if (c->fconf[i] > 0) {
            ami_project_front(&c->L, p, uv);
            double du = uv[0] - c->fuv[2 * i], dv = uv[1] - c->fuv[2 * i + 1];
            sf += sqrt(du * du + dv * dv);
            sfx += fabs(du);
            nf++;
        }
        if (c->sconf[i] > 0) {
            ami_project_side(&c->L, p, uv);
            double du = uv[0] - c->suv[2 * i], dv = uv[1] - c->suv[2 * i + 1];
            ss += sqrt(du * du + dv * dv);
            ns++;
        }
    }
    *front = nf ? sf / (double)nf : NAN;
    *front_x = nf ? sfx / (double)nf : NAN;
    *side = ns ? ss / (double)ns : NAN;
}
