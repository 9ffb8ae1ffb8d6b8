/* Kinematics for the fit: FK that also returns the world axes of every Euler partial, so joint
 * Jacobians are analytic (d p / d e_k = omega_k x (p - head)), the per-frame IK pin used by the
 * exam's planted feet and by the foot lock, and small helpers the fit shares. */
#include <math.h>
#include <string.h>

#include "fit_internal.h"
#include "core/internal.h"

am_status ami_chains_build(const am_rig *rig, ami_chains *ch, am_error *err)
{
    memset(ch, 0, sizeof *ch);
    size_t J = rig->joint_count, B = rig->bone_count;
    ch->joint_count = J;
    ch->bone_count = B;
    ch->start = am_alloc_array(J + 1, sizeof *ch->start);
    ch->col_count = am_alloc_array(J, sizeof *ch->col_count);
    ch->bones = am_alloc_array(J * B + 1, sizeof *ch->bones);
    if (!ch->start || !ch->bones || !ch->col_count) {
        ami_chains_free(ch);
        return AM_FAIL(err, AM_E_NOMEM, "joint chains");
    }
    int32_t n = 0;
    for (size_t j = 0; j < J; j++) {
        ch->start[j] = n;
        int32_t kb = rig->kp_bone[j];
        /* A head keypoint does not move with its own bone's rotation. */
        int32_t b = rig->kp_is_tail[j] ? kb : (kb >= 0 ? rig->parent[kb] : -1);
        while (b > 0) {
            ch->bones[n++] = b;
            b = rig->parent[b];
        }
        ch->col_count[j] = AMI_FIT_ROOT_PARAMS + 3 * (n - ch->start[j]);
    }
    ch->start[J] = n;
    return AM_OK;
}

void ami_chains_free(ami_chains *ch)
{
    if (!ch) return;
    am_free(ch->start);
    am_free(ch->bones);
    am_free(ch->col_count);
    memset(ch, 0, sizeof *ch);
}

void ami_fk_frame(const am_rig *rig, const double trans[3], const double q[4], const double *euler,
                  double *pose, double *axes, double *joints)
{
    double Rq[9], R0[9];
    am_quat_to_mat3(q, Rq);
    am_mat3_mul(Rq, rig->rest_rot, R0);
    am_mat4_from_rt(R0, trans, pose);
    for (size_t b = 1; b < rig->bone_count; b++) {
        double G[16], Re[9];
        am_mat4_mul(pose + 16 * (size_t)rig->parent[b], rig->offset + 16 * b, G);
        const double *e = euler + 3 * b;
        am_euler_xyz_to_mat3(e, Re);
        am_mat4_mul_rot(G, Re, pose + 16 * b);
        if (axes) {
            double Gr[9], Rz[9], Ry[9], GRz[9], GRzRy[9];
            am_mat4_get_rot(G, Gr);
            am_mat3_rot_z(e[2], Rz);
            am_mat3_rot_y(e[1], Ry);
            am_mat3_mul(Gr, Rz, GRz);
            am_mat3_mul(GRz, Ry, GRzRy);
            double *ax = axes + 9 * b;
            for (int i = 0; i < 3; i++) {
                ax[0 * 3 + i] = GRzRy[i * 3 + 0];
                ax[1 * 3 + i] = GRz[i * 3 + 1];
                ax[2 * 3 + i] = Gr[i * 3 + 2];
            }
        }
    }
    if (joints) am_rig_keypoints(rig, pose, joints);
}

void ami_rotvec_left_jacobian(const double w[3], double Jl[9])
{
    double th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2], th = sqrt(th2);
    double a, b;
    if (th < 1e-6) {
        a = 0.5 - th2 / 24.0;
        b = 1.0 / 6.0 - th2 / 120.0;
    } else {
        a = (1.0 - cos(th)) / th2;
        b = (th - sin(th)) / (th2 * th);
    }
    const double K[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
    double K2[9];
    am_mat3_mul(K, K, K2);
    for (int i = 0; i < 9; i++) Jl[i] = (i % 4 == 0 ? 1.0 : 0.0) + a * K[i] + b * K2[i];
}

size_t ami_joint_jacobian(const am_rig *rig, const ami_chains *ch, size_t j, const double *pose,
                          const double *axes, const double *joints, const double trans[3],
                          const double w[3], int32_t *cols, double *jac)
{
    (void)rig;
    const size_t nc = (size_t)ch->col_count[j];
    const double *p = joints + 3 * j;
    double Jl[9];
    ami_rotvec_left_jacobian(w, Jl);
    double rel[3];
    am_vec3_sub(p, trans, rel);
    for (size_t c = 0; c < 3; c++) {
        cols[c] = (int32_t)c;
        for (size_t r = 0; r < 3; r++) jac[r * nc + c] = r == c ? 1.0 : 0.0;
        double om[3] = {Jl[0 * 3 + c], Jl[1 * 3 + c], Jl[2 * 3 + c]}, d[3];
        am_vec3_cross(om, rel, d);
        cols[3 + c] = (int32_t)(3 + c);
        for (size_t r = 0; r < 3; r++) jac[r * nc + 3 + c] = d[r];
    }
    size_t c = AMI_FIT_ROOT_PARAMS;
    for (int32_t k = ch->start[j]; k < ch->start[j + 1]; k++) {
        size_t b = (size_t)ch->bones[k];
        const double *P = pose + 16 * b;
        double head[3] = {P[3], P[7], P[11]};
        am_vec3_sub(p, head, rel);
        for (size_t a = 0; a < 3; a++, c++) {
            double d[3];
            am_vec3_cross(axes + 9 * b + 3 * a, rel, d);
            cols[c] = (int32_t)ami_fit_euler_col(b, a);
            for (size_t r = 0; r < 3; r++) jac[r * nc + c] = d[r];
        }
    }
    return nc;
}

/* "_L" / ".L" suffix -> index of the matching "_R" / ".R" joint. */
size_t ami_lr_pairs(const am_rig *rig, int32_t *pairs)
{
    size_t n = 0;
    for (size_t j = 0; j < rig->joint_count; j++) {
        const char *nm = rig->joint_names[j];
        size_t len = strlen(nm);
        if (len < 3 || (nm[len - 2] != '_' && nm[len - 2] != '.') || nm[len - 1] != 'L') continue;
        for (size_t k = 0; k < rig->joint_count; k++) {
            const char *o = rig->joint_names[k];
            if (k != j && strlen(o) == len && strncmp(o, nm, len - 1) == 0 && o[len - 1] == 'R') {
                pairs[2 * n] = (int32_t)j;
                pairs[2 * n + 1] = (int32_t)k;
                n++;
                break;
            }
        }
    }
    return n;
}

/* ---- IK pin ---- */
typedef struct {
    const am_rig *rig;
    const ami_chains *ch;
    size_t j, depth;
    const double *trans, *q, *target;
    double *euler, *pose, *axes, *joints;
    double e0[12];
} ami_pin;

static am_status ami_pin_eval(void *user, const double *x, am_lsq_sink *s)
{
    ami_pin *u = user;
    const am_rig *rig = u->rig;
    const int32_t *bones = u->ch->bones + u->ch->start[u->j];
    for (size_t k = 0; k < u->depth; k++)
        for (int a = 0; a < 3; a++) u->euler[3 * (size_t)bones[k] + (size_t)a] = x[3 * k + (size_t)a];
    bool wj = am_lsq_sink_wants_jacobian(s);
    ami_fk_frame(rig, u->trans, u->q, u->euler, u->pose, wj ? u->axes : NULL, u->joints);
    /* Millimetres, so the pin dominates the weak pull toward the current pose. */
    const double k_mm = 1000.0, k_pull = 0.05;
    double r[3];
    const double *p = u->joints + 3 * u->j;
    for (int i = 0; i < 3; i++) r[i] = k_mm * (p[i] - u->target[i]);
    int32_t cols[12];
    double jac[36];
    size_t n = 3 * u->depth;
    for (size_t c = 0; c < n; c++) cols[c] = (int32_t)c;
    if (wj) {
        for (size_t k = 0; k < u->depth; k++) {
            size_t b = (size_t)bones[k];
            const double *P = u->pose + 16 * b;
            double rel[3] = {p[0] - P[3], p[1] - P[7], p[2] - P[11]};
            for (int a = 0; a < 3; a++) {
                double d[3];
                am_vec3_cross(u->axes + 9 * b + 3 * a, rel, d);
                for (int i = 0; i < 3; i++) jac[(size_t)i * n + 3 * k + (size_t)a] = k_mm * d[i];
            }
        }
    }
    am_lsq_add(s, 3, r, n, cols, wj ? jac : NULL, NULL);
    for (size_t c = 0; c < n; c++) {
        double rp = k_pull * (x[c] - u->e0[c]), jp = k_pull;
        am_lsq_add(s, 1, &rp, 1, cols + c, &jp, NULL);
    }
    return AM_OK;
}

double ami_pin_joint(const am_rig *rig, const ami_chains *ch, size_t j, size_t depth,
                     const double trans[3], const double q[4], double *euler, const double target[3],
                     double *pose_scratch, double *axes_scratch, double *joints_scratch)
{
    size_t len = (size_t)(ch->start[j + 1] - ch->start[j]);
    if (depth > len) depth = len;
    if (depth > 4) depth = 4;
    ami_pin u = {rig, ch, j, depth, trans, q, target, euler, pose_scratch, axes_scratch, joints_scratch, {0}};
    double x[12], lo[12], hi[12];
    const int32_t *bones = ch->bones + ch->start[j];
    for (size_t k = 0; k < depth; k++)
        for (int a = 0; a < 3; a++) {
            size_t b = (size_t)bones[k];
            x[3 * k + (size_t)a] = u.e0[3 * k + (size_t)a] = euler[3 * b + (size_t)a];
            ami_fit_axis_bounds(rig, b, (size_t)a, &lo[3 * k + (size_t)a], &hi[3 * k + (size_t)a]);
        }
    if (depth > 0) {
        am_lsq_problem pb = {.param_count = 3 * depth, .lower = lo, .upper = hi, .eval = ami_pin_eval, .user = &u};
        am_lsq *ws = NULL;
        if (am_lsq_create(&pb, &ws, NULL) != AM_OK) return NAN; /* out of memory */
        am_lsq_opts o = {.max_iterations = 30, .ftol = 1e-12};
        am_status st = am_lsq_solve(ws, x, &o, NULL, NULL);
        am_lsq_free(ws);
        if (st == AM_E_CANCELLED) return NAN;
        /* otherwise best effort: x is the best point found either way */
        for (size_t k = 0; k < depth; k++)
            for (int a = 0; a < 3; a++) euler[3 * (size_t)bones[k] + (size_t)a] = x[3 * k + (size_t)a];
    }
    ami_fk_frame(rig, trans, q, euler, pose_scratch, NULL, joints_scratch);
    return am_vec3_dist(joints_scratch + 3 * j, target);
}

bool ami_fill_track(double *v, size_t T, size_t stride)
{
    long prev = -1;
    for (size_t t = 0; t < T; t++) {
        if (isnan(v[t * stride])) continue;
        if (prev < 0) {
            for (size_t k = 0; k < t; k++) v[k * stride] = v[t * stride];
        } else if ((size_t)prev + 1 < t) {
            double a = v[(size_t)prev * stride], b = v[t * stride];
            for (size_t k = (size_t)prev + 1; k < t; k++)
                v[k * stride] = a + (b - a) * (double)(k - (size_t)prev) / (double)(t - (size_t)prev);
        }
        prev = (long)t;
    }
    if (prev < 0) return false;
    for (size_t k = (size_t)prev + 1; k < T; k++) v[k * stride] = v[(size_t)prev * stride];
    return true;
}

void ami_fit_axis_bounds(const am_rig *rig, size_t bone, size_t axis, double *lo, double *hi)
{
    *lo = rig->limits[bone * 6 + axis * 2];
    *hi = rig->limits[bone * 6 + axis * 2 + 1];
    if (*hi - *lo >= 2.0 * AM_PI - 1e-9) {
        *lo = -INFINITY;
        *hi = INFINITY;
    }
}
