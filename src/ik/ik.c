/* Positions -> rotations for any rig (docs/ik.md).
 *
 * Per frame, parents first, each bone's world delta G_b (rest vector -> posed vector) is fitted
 * to the points that move rigidly with it: its tail and the heads of its children, as vectors
 * from its (observed) head.
 * - Several non-collinear points: a rigid fit through the head (swing + closed-form twist,
 *   exact for rigid data; weighted Kabsch via am_kabsch when the data is not rigid).
 * - One direction: the minimal rotation (swing) taking the prior's direction onto the observed
 *   one, then a twist about the bone resolved from the grandchildren: the twist that minimizes
 *   the bone's own twist away from its prior plus the swings its child then needs (chordal
 *   costs, closed form). Positions cannot see this twist; grandchildren can.
 * - No observed point: the prior.
 * The prior of a bone is its reference local rotation (frame 0 of the reference motion, else
 * rest), blended towards the previous frame's solution (temporal smoothness). Joint limits
 * choose among the twists, which leave positions untouched.
 *
 * This work is based on:
 * - B. K. P. Horn, "Closed-form solution of absolute orientation using unit quaternions",
 *   JOSA A 4(4), 1987 (the Kabsch step, via am_kabsch).
 * - The swing-twist decomposition of rotations (e.g. Dobrowolski 2015, "Swing-twist
 *   decomposition in Clifford algebra").
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/ik.h"
#include "anymove/math.h"
#include "core/internal.h"

typedef struct ami_pt {
    int32_t joint;
    double r[3];   /* rest vector from the owning bone's head */
} ami_pt;

typedef struct ami_ik_ws {
    size_t B, J;
    int32_t *child_start, *child_list;  /* CSR children of each bone: [B+1], [B] */
    int32_t *pt_start;                   /* [B+1] into pts */
    ami_pt *pts;                         /* attached observed points of every bone */
    uint8_t *single;                     /* [B] 1: the points are collinear (one direction) */
    int32_t *main_pt;                    /* [B] index into pts of the direction point */
    double *Rinv;                        /* [B][9] rest rotation inverses */
    double *ref_w;                       /* [B][4] prior local as a world-delta quat */
    double *prev_w;                      /* [B][4] previous frame's solution, same form */
    double *prior_m;                     /* [B][9] this frame's prior, world-delta matrices */
    double *G;                           /* [B][9] world deltas of the current frame */
    double *head;                        /* [B][3] posed heads of the current frame */
    double *kp, *kq, *kw;                /* Kabsch scratch, [2 * maxpts][3] / [2 * maxpts] */
    size_t max_pts;
    am_reals points;                     /* the job's positions, whichever field held them */
    double *frame;                       /* [J][3] one frame of float32 points as doubles */
} ami_ik_ws;

static void ami_ik_opts_defaults(const am_ik_opts *in, am_ik_opts *o)
{
    am_ik_opts d = {0};
    if (in) d = *in;
    if (!(d.temporal > 0 && d.temporal <= 1)) d.temporal = 0.5;
    if (d.flags & AM_IK_NO_TEMPORAL) d.temporal = 0;
    if (!(d.twist_weight > 0)) d.twist_weight = 1.0;
    *o = d;
}

void am_ik_default_mask(const am_rig *rig, uint8_t *mask)
{
    memset(mask, 0, rig->joint_count);
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->is_helper && rig->is_helper[b]) continue;
        mask[rig->head_joint[b]] = 1;
        mask[rig->tail_joint[b]] = 1;
    }
}

/* The one prologue of validate and run: the positions as a typed view, whichever field the
 * caller set (a float64 array through positions, or either type through points). */
static am_reals ami_ik_points(const am_ik_job *job)
{
    assert(job && job->rig && job->out);
    assert(!job->positions != !job->points.data); /* exactly one of the two */
    am_reals v = job->positions ? (am_reals){job->positions, AM_DTYPE_F64} : job->points;
    assert(am_reals_valid(v));
    return v;
}

am_status am_ik_validate(const am_ik_job *job, am_error *err)
{
    const am_reals pts = ami_ik_points(job);
    assert(job->out->euler && job->out->trans && job->out->root_quat);
    const am_rig *rig = job->rig;
    AMI_CHECK(err, job->frame_count > 0, AM_E_EMPTY, "no frames (T = 0)");
    AMI_CHECK(err, job->out->bone_count == rig->bone_count && job->out->frame_count == job->frame_count,
              AM_E_SHAPE, "output motion has %zu frames x %zu bones, want %zu x %zu",
              job->out->frame_count, job->out->bone_count, job->frame_count, rig->bone_count);
    if (job->reference) {
        AMI_CHECK(err, job->reference->bone_count == rig->bone_count &&
                       job->reference->frame_count > 0 && job->reference->euler,
                  AM_E_SHAPE, "reference motion has %zu bones, the rig %zu",
                  job->reference->bone_count, rig->bone_count);
    }
    size_t J = rig->joint_count;
    for (size_t t = 0; t < job->frame_count; t++)
        for (size_t j = 0; j < J; j++) {
            if (job->joint_mask && !job->joint_mask[j]) continue;
            const size_t i = (t * J + j) * 3;
            if (!isfinite(am_reals_at(pts, i)) || !isfinite(am_reals_at(pts, i + 1)) ||
                !isfinite(am_reals_at(pts, i + 2)))
                return AM_FAIL(err, AM_E_NONFINITE, "position of joint '%s' at frame %zu",
                               rig->joint_names[j], t);
        }
    return AM_OK;
}

static void ami_ws_free(ami_ik_ws *w)
{
    am_free(w->child_start);
    am_free(w->child_list);
    am_free(w->pt_start);
    am_free(w->pts);
    am_free(w->single);
    am_free(w->main_pt);
    am_free(w->Rinv);
    am_free(w->ref_w);
    am_free(w->prev_w);
    am_free(w->prior_m);
    am_free(w->G);
    am_free(w->head);
    am_free(w->kp);
    am_free(w->kq);
    am_free(w->kw);
    am_free(w->frame);
}

/* World-delta form of a local rotation: R_rest L R_rest^-1, as a quaternion. */
static void ami_local_to_world_delta(const ami_ik_ws *w, const am_rig *rig, size_t b,
                                     const double L[9], double q[4])
{
    double T[9], M[9];
    am_mat3_mul(rig->rest_rot + b * 9, L, T);
    am_mat3_mul(T, w->Rinv + b * 9, M);
    am_quat_from_mat3(M, q);
}

static am_status ami_ws_init(ami_ik_ws *w, const am_ik_job *job, const uint8_t *mask,
                             am_error *err)
{
    const am_rig *rig = job->rig;
    size_t B = rig->bone_count, J = rig->joint_count;
    w->B = B;
    w->J = J;
    w->child_start = am_alloc_array(B + 1, sizeof(int32_t));
    w->child_list = am_alloc_array(B, sizeof(int32_t));
    w->pt_start = am_alloc_array(B + 1, sizeof(int32_t));
    w->pts = am_alloc_array(2 * B, sizeof(ami_pt));
    w->single = am_alloc_array(B, 1);
    w->main_pt = am_alloc_array(B, sizeof(int32_t));
    w->Rinv = am_alloc_array(B, 9 * sizeof(double));
    w->ref_w = am_alloc_array(B, 4 * sizeof(double));
    w->prev_w = am_alloc_array(B, 4 * sizeof(double));
    w->prior_m = am_alloc_array(B, 9 * sizeof(double));
    w->G = am_alloc_array(B, 9 * sizeof(double));
    w->head = am_alloc_array(B, 3 * sizeof(double));
    w->points = ami_ik_points(job);
    /* float64 frames are read where they are; a float32 frame is widened into one [J][3] */
    if (w->points.dtype == AM_DTYPE_F32 && !(w->frame = am_alloc_array(J ? J : 1, 3 * sizeof(double))))
        return AM_FAIL(err, AM_E_NOMEM, "IK workspace for %zu joints", J);
    if (!w->child_start || !w->child_list || !w->pt_start || !w->pts || !w->single ||
        !w->main_pt || !w->Rinv || !w->ref_w || !w->prev_w || !w->prior_m || !w->G || !w->head)
        return AM_FAIL(err, AM_E_NOMEM, "IK workspace for %zu bones", B);
    /* children (CSR, in bone order) */
    for (size_t b = 1; b < B; b++) w->child_start[rig->parent[b] + 1]++;
    for (size_t b = 0; b < B; b++) w->child_start[b + 1] += w->child_start[b];
    {
        int32_t *fill = am_alloc_array(B + 1, sizeof(int32_t));
        if (!fill) return AM_FAIL(err, AM_E_NOMEM, "IK workspace");
        memcpy(fill, w->child_start, (B + 1) * sizeof(int32_t));
        for (size_t b = 1; b < B; b++) w->child_list[fill[rig->parent[b]]++] = (int32_t)b;
        am_free(fill);
    }
    /* attached observed points: the tail, then child heads that are elsewhere */
    size_t n = 0, max_pts = 1;
    for (size_t b = 0; b < B; b++) {
        am_mat4_get_rot(rig->rest_inv + b * 16, w->Rinv + b * 9);
        w->pt_start[b] = (int32_t)n;
        const double *h = rig->joint_rest + (size_t)rig->head_joint[b] * 3;
        double eps = 1e-6 * rig->length[b];
        int32_t cand_first = -1;
        for (int32_t k = -1; k < w->child_start[b + 1] - w->child_start[b]; k++) {
            int32_t jt = k < 0 ? rig->tail_joint[b] : rig->head_joint[w->child_list[w->child_start[b] + k]];
            if (!mask[jt]) continue;
            bool dup = false;
            for (size_t i = (size_t)w->pt_start[b]; i < n; i++) dup |= w->pts[i].joint == jt;
            if (dup) continue;
            ami_pt pt = {.joint = jt};
            am_vec3_sub(rig->joint_rest + (size_t)jt * 3, h, pt.r);
            if (am_vec3_norm(pt.r) <= eps) continue;
            if (cand_first < 0) cand_first = (int32_t)n;
            w->pts[n++] = pt;
        }
        size_t cnt = n - (size_t)w->pt_start[b];
        if (cnt > max_pts) max_pts = cnt;
        w->main_pt[b] = cand_first;
        /* collinear? (then Kabsch could not fix the twist and one direction is all we have) */
        w->single[b] = 1;
        if (cnt >= 2) {
            double d0[3];
            am_vec3_normalize(w->pts[cand_first].r, d0);
            for (size_t i = (size_t)w->pt_start[b] + 1; i < n; i++) {
                double di[3], c[3];
                am_vec3_normalize(w->pts[i].r, di);
                am_vec3_cross(d0, di, c);
                if (am_vec3_norm(c) > 1e-5) w->single[b] = 0;
            }
        }
    }
    w->pt_start[B] = (int32_t)n;
    w->max_pts = max_pts;
    w->kp = am_alloc_array(2 * max_pts, 3 * sizeof(double));
    w->kq = am_alloc_array(2 * max_pts, 3 * sizeof(double));
    w->kw = am_alloc_array(2 * max_pts, sizeof(double));
    if (!w->kp || !w->kq || !w->kw) return AM_FAIL(err, AM_E_NOMEM, "IK workspace");
    /* priors from the reference's frame 0, else rest */
    for (size_t b = 0; b < B; b++) {
        const am_motion *ref = job->reference;
        if (b == 0 || rig->parent[b] < 0) {
            if (ref) am_quat_normalize(ref->root_quat, w->ref_w + b * 4);
            else am_quat_identity(w->ref_w + b * 4);
            continue;
        }
        double L[9];
        if (!ref) {
            am_quat_identity(w->ref_w + b * 4);
            continue;
        }
        if (ref->quat) am_quat_to_mat3(ref->quat + b * 4, L);
        else am_euler_xyz_to_mat3(ref->euler + b * 3, L);
        ami_local_to_world_delta(w, rig, b, L, w->ref_w + b * 4);
    }
    return AM_OK;
}

/* Every bone's prior local rotation in world-delta form, for frame t: the reference (or
 * rest), blended towards the previous frame's solution. NOTE: nlerp, not slerp: the two are
 * close and the blend weight is a tuning knob, not a time. */
static void ami_priors(ami_ik_ws *w, const am_ik_opts *o, size_t t)
{
    if (t == 0 || !(o->temporal > 0)) {
        if (t == 0)
            for (size_t b = 0; b < w->B; b++) am_quat_unit_to_mat3(w->ref_w + b * 4, w->prior_m + b * 9);
        return; /* the reference priors do not change from frame to frame */
    }
    double a = o->temporal;
    for (size_t b = 0; b < w->B; b++) {
        const double *r = w->ref_w + b * 4, *p = w->prev_w + b * 4;
        double d = r[0] * p[0] + r[1] * p[1] + r[2] * p[2] + r[3] * p[3];
        double sp = d < 0 ? -a : a, q[4], n2 = 0;
        for (int k = 0; k < 4; k++) {
            q[k] = (1 - a) * r[k] + sp * p[k];
            n2 += q[k] * q[k];
        }
        double inv = n2 > 0 ? 1.0 / sqrt(n2) : 0;
        for (int k = 0; k < 4; k++) q[k] *= inv;
        if (!(n2 > 0)) q[0] = 1;
        am_quat_unit_to_mat3(q, w->prior_m + b * 9);
    }
}

/* Rotation about the unit axis d by angle a, as a 3x3. */
static void ami_axis_rot(const double d[3], double a, double R[9])
{
    /* Rodrigues: R = c I + s [d]x + (1 - c) d d^T */
    double c = cos(a), s = sin(a), k = 1 - c;
    R[0] = c + k * d[0] * d[0], R[1] = k * d[0] * d[1] - s * d[2], R[2] = k * d[0] * d[2] + s * d[1];
    R[3] = k * d[1] * d[0] + s * d[2], R[4] = c + k * d[1] * d[1], R[5] = k * d[1] * d[2] - s * d[0];
    R[6] = k * d[2] * d[0] - s * d[1], R[7] = k * d[2] * d[1] + s * d[0], R[8] = c + k * d[2] * d[2];
}

/* The minimal rotation taking direction a onto unit direction d, as a 3x3. Away from
 * antiparallel, R = I + [x]x + [x]x^2 / (1 + c) with x = u x d, c = u . d (no trigonometry);
 * near it, the math library's careful version. */
static void ami_swing(const double a[3], const double d[3], double R[9])
{
    double u[3];
    double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    if (!(n > 0)) {
        memcpy(R, (const double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9 * sizeof(double));
        return;
    }
    u[0] = a[0] / n, u[1] = a[1] / n, u[2] = a[2] / n;
    double c = u[0] * d[0] + u[1] * d[1] + u[2] * d[2];
    if (c < -0.9) {
        double q[4];
        am_quat_from_two_vectors(u, d, q);
        am_quat_to_mat3(q, R);
        return;
    }
    double x = u[1] * d[2] - u[2] * d[1], y = u[2] * d[0] - u[0] * d[2], z = u[0] * d[1] - u[1] * d[0];
    double h = 1.0 / (1.0 + c);
    R[0] = 1 - h * (y * y + z * z), R[1] = -z + h * x * y, R[2] = y + h * x * z;
    R[3] = z + h * x * y, R[4] = 1 - h * (x * x + z * z), R[5] = -x + h * y * z;
    R[6] = -y + h * x * z, R[7] = x + h * y * z, R[8] = 1 - h * (x * x + y * y);
}

/* The twist about the unit axis d that turns a onto o, as |a_p||o_p| (sin, cos) of the angle
 * between their projections a_p, o_p onto the plane normal to d. */
static void ami_twist_terms(const double a[3], const double o[3], const double d[3], double *s,
                            double *c)
{
    double ap[3], op[3], x[3];
    am_vec3_madd(a, -am_vec3_dot(a, d), d, ap);
    am_vec3_madd(o, -am_vec3_dot(o, d), d, op);
    am_vec3_cross(ap, op, x);
    *s = am_vec3_dot(d, x);
    *c = am_vec3_dot(ap, op);
}

/* The twist about the unit axis d for a single-direction bone, from its grandchildren.
 * Twisting the bone by th turns each child point k, predicted with the child's prior local
 * rotation, about d; the child then needs a swing psi_k(th) to reach its observation. We take
 * the th minimizing the chordal cost  w (2 - 2 cos th) + sum_k (2 - 2 cos psi_k(th)) : the least
 * total rotation away from the priors (chordal ~ angle^2 for moderate angles). With
 * cos psi_k = (par_k + perp_k cos(th - phi_k)) / len_k the minimum is closed-form:
 *     th = atan2(sum_k s_k sin phi_k, w + sum_k s_k cos phi_k),  s_k = perp_k / len_k,
 * a weighted circular mean of "keep the prior" (0, weight w) and each point's plane-aligning
 * angle phi_k, weighted by how far the child bends out of line (s_k in [0, 1]). A hinge pulls
 * th to the plane of its bend; a straight child leaves the prior's twist. */
static double ami_grandchild_twist(const ami_ik_ws *w, const am_ik_opts *o,
                                   const am_rig *rig, const double *P, const uint8_t *mask,
                                   size_t b, const double G0[9], const double d[3],
                                   const double head_b[3])
{
    double sum_s = 0, sum_c = 0;
    bool any = false;
    for (int32_t ci = w->child_start[b]; ci < w->child_start[b + 1]; ci++) {
        size_t c = (size_t)w->child_list[ci];
        double Gc[9];
        am_mat3_mul(G0, w->prior_m + c * 9, Gc);
        double hc[3];
        int32_t hj = rig->head_joint[c];
        if (mask[hj]) {
            memcpy(hc, P + (size_t)hj * 3, sizeof hc);
        } else {
            double r[3], v[3];
            am_vec3_sub(rig->joint_rest + (size_t)hj * 3, rig->joint_rest + (size_t)rig->head_joint[b] * 3, r);
            am_mat3_mul_vec3(G0, r, v);
            am_vec3_add(head_b, v, hc);
        }
        for (int32_t i = w->pt_start[c]; i < w->pt_start[c + 1]; i++) {
            double a[3], ob[3], ts, tc;
            am_mat3_mul_vec3(Gc, w->pts[i].r, a);
            am_vec3_sub(P + (size_t)w->pts[i].joint * 3, hc, ob);
            double len = am_vec3_norm(a) * am_vec3_norm(ob);
            if (!(len > 0)) continue;
            /* s_k sin phi_k and s_k cos phi_k without the trigonometry */
            ami_twist_terms(a, ob, d, &ts, &tc);
            sum_s += ts / len;
            sum_c += tc / len;
            any = true;
        }
    }
    if (!any) return 0;
    return atan2(sum_s, o->twist_weight + sum_c);
}

/* Fast path of the several-points fit: swing onto the first point, then the closed-form twist
 * about it that best fits the others. Exact when the points keep their rest geometry; returns
 * false (the caller then runs Kabsch, the least-squares answer) when any point misses by
 * more than 1e-7 of its distance from the head, i.e. when the data is not rigid. */
static bool ami_fit_rigid_fast(const ami_ik_ws *w, size_t b, const double *P, const double h[3],
                               const double Gbase[9], double G[9])
{
    int32_t i0 = w->pt_start[b], i1 = w->pt_start[b + 1];
    const ami_pt *m = &w->pts[i0];
    double a[3], v[3], d[3], S[9];
    am_mat3_mul_vec3(Gbase, m->r, a);
    am_vec3_sub(P + (size_t)m->joint * 3, h, v);
    if (am_vec3_normalize(v, d) <= 0) return false;
    ami_swing(a, d, S);
    am_mat3_mul(S, Gbase, G);
    double sc = 0, cc = 0;
    for (int32_t i = i0 + 1; i < i1; i++) {
        double x[3], o[3], ts, tc;
        am_mat3_mul_vec3(G, w->pts[i].r, x);
        am_vec3_sub(P + (size_t)w->pts[i].joint * 3, h, o);
        ami_twist_terms(x, o, d, &ts, &tc);
        sc += ts;
        cc += tc;
    }
    double R[9];
    ami_axis_rot(d, atan2(sc, cc), R);
    am_mat3_mul(R, G, G);
    for (int32_t i = i0; i < i1; i++) {
        double x[3], o[3];
        am_mat3_mul_vec3(G, w->pts[i].r, x);
        am_vec3_sub(P + (size_t)w->pts[i].joint * 3, h, o);
        double e2 = (x[0] - o[0]) * (x[0] - o[0]) + (x[1] - o[1]) * (x[1] - o[1]) + (x[2] - o[2]) * (x[2] - o[2]);
        double r2 = am_vec3_dot(w->pts[i].r, w->pts[i].r);
        if (e2 > 1e-14 * r2) return false;
    }
    return true;
}

/* Squared distance of Euler angles e outside the box of limits lim [3][2]. */
static double ami_limit_violation(const double e[3], const double *lim)
{
    double v = 0;
    for (int k = 0; k < 3; k++) {
        double lo = lim[k * 2], hi = lim[k * 2 + 1];
        if (e[k] < lo) v += (lo - e[k]) * (lo - e[k]);
        else if (e[k] > hi) v += (e[k] - hi) * (e[k] - hi);
    }
    return v;
}

static void ami_local_from_g(const ami_ik_ws *w, const am_rig *rig, size_t b, const double Gp[9],
                             const double G[9], double L[9])
{
    double T[9];
    am_mat3_tmul(Gp, G, T);
    am_mat3_mul(w->Rinv + b * 9, T, L);
    am_mat3_mul(L, rig->rest_rot + b * 9, L);
}

static void ami_solve_frame(ami_ik_ws *w, const am_ik_job *job, const am_ik_opts *o,
                            const uint8_t *mask, size_t t)
{
    const am_rig *rig = job->rig;
    size_t B = w->B, J = w->J;
    const double *P = w->frame;
    if (w->points.dtype == AM_DTYPE_F64) {
        P = (const double *)w->points.data + t * J * 3;
    } else {
        const float *p32 = (const float *)w->points.data + t * J * 3;
        for (size_t k = 0; k < J * 3; k++) w->frame[k] = p32[k];
    }
    am_motion *mo = job->out;
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (size_t b = 0; b < B; b++) {
        int32_t p = rig->parent[b];
        const double *Gp = p < 0 ? I3 : w->G + (size_t)p * 9;
        /* prior: reference (or rest), slerped towards the previous frame */
        double Gbase[9];
        am_mat3_mul(Gp, w->prior_m + b * 9, Gbase);
        /* posed head */
        double *h = w->head + b * 3;
        int32_t hj = rig->head_joint[b];
        if (mask[hj]) {
            memcpy(h, P + (size_t)hj * 3, sizeof(double) * 3);
        } else if (p >= 0) {
            double r[3], v[3];
            am_vec3_sub(rig->joint_rest + (size_t)hj * 3, rig->joint_rest + (size_t)rig->head_joint[p] * 3, r);
            am_mat3_mul_vec3(Gp, r, v);
            am_vec3_add(w->head + (size_t)p * 3, v, h);
        } else if (job->reference) {
            memcpy(h, job->reference->trans, sizeof(double) * 3);
        } else {
            memcpy(h, rig->joint_rest + (size_t)hj * 3, sizeof(double) * 3);
        }
        double *G = w->G + b * 9;
        int32_t n = w->pt_start[b + 1] - w->pt_start[b];
        if (n == 0) {
            memcpy(G, Gbase, sizeof(double) * 9);
        } else if (w->single[b]) {
            const ami_pt *pt = &w->pts[w->main_pt[b]];
            double a[3], v[3], S[9], d[3];
            am_mat3_mul_vec3(Gbase, pt->r, a);
            am_vec3_sub(P + (size_t)pt->joint * 3, h, v);
            if (am_vec3_normalize(v, d) <= 1e-12) {
                memcpy(G, Gbase, sizeof(double) * 9); /* the point sits on the head */
            } else {
                ami_swing(a, d, S);
                am_mat3_mul(S, Gbase, G);
                double th = 0;
                if (!(o->flags & AM_IK_NO_GRANDCHILD_TWIST))
                    th = ami_grandchild_twist(w, o, rig, P, mask, b, G, d, h);
                if (!(o->flags & AM_IK_NO_LIMITS) && p >= 0 && rig->has_limit && rig->has_limit[b]) {
                    /* the twist is free for positions: among 72 twists, take the one nearest
                     * th whose Euler angles violate the limits least */
                    double best = INFINITY, best_th = th;
                    for (int k = 0; k < 72; k++) {
                        double cand = th + (k % 2 ? -1 : 1) * ((k + 1) / 2) * (AM_PI / 36);
                        double R[9], Gc[9], L[9], e[3];
                        ami_axis_rot(d, cand, R);
                        am_mat3_mul(R, G, Gc);
                        ami_local_from_g(w, rig, b, Gp, Gc, L);
                        am_mat3_to_euler_xyz(L, e);
                        double viol = ami_limit_violation(e, rig->limits + b * 6);
                        if (viol < best - 1e-12) {
                            best = viol;
                            best_th = cand;
                        }
                        if (best == 0) break;
                    }
                    th = best_th;
                }
                if (th != 0) {
                    double R[9];
                    ami_axis_rot(d, th, R);
                    am_mat3_mul(R, G, G);
                }
            }
        } else if (!ami_fit_rigid_fast(w, b, P, h, Gbase, G)) {
            /* Kabsch through the head: each vector and its negation, so the centroid is the
             * head and the translation vanishes. */
            size_t k = 0;
            for (int32_t i = w->pt_start[b]; i < w->pt_start[b + 1]; i++) {
                const ami_pt *pt = &w->pts[i];
                double v[3];
                am_vec3_sub(P + (size_t)pt->joint * 3, h, v);
                for (int s = 0; s < 2; s++, k++) {
                    double sg = s ? -1.0 : 1.0;
                    am_vec3_scale(pt->r, sg, w->kp + k * 3);
                    am_vec3_scale(v, sg, w->kq + k * 3);
                    w->kw[k] = 1.0;
                }
            }
            double tr[3];
            am_kabsch(w->kp, w->kq, w->kw, k, G, tr);
        }
        /* outputs */
        if (p < 0) {
            memcpy(mo->trans + t * 3, h, sizeof(double) * 3);
            am_quat_from_mat3(G, mo->root_quat + t * 4);
            memcpy(w->prev_w + b * 4, mo->root_quat + t * 4, sizeof(double) * 4);
            double *e = mo->euler + (t * B + b) * 3;
            e[0] = e[1] = e[2] = 0;
            if (mo->quat) am_quat_identity(mo->quat + (t * B + b) * 4);
            continue;
        }
        double Lw[9], L[9];
        am_mat3_tmul(Gp, G, Lw);
        am_mat3_mul(w->Rinv + b * 9, Lw, L);
        am_mat3_mul(L, rig->rest_rot + b * 9, L);
        double *e = mo->euler + (t * B + b) * 3;
        if (t == 0) am_mat3_to_euler_xyz(L, e);
        else am_mat3_to_euler_xyz_near(L, mo->euler + ((t - 1) * B + b) * 3, e);
        if (mo->quat) am_quat_from_mat3(L, mo->quat + (t * B + b) * 4);
        if (o->temporal > 0) am_quat_from_mat3(Lw, w->prev_w + b * 4);
    }
}

static am_status ami_ik_run(const am_ik_job *job, am_error *err)
{
    AMI_TRY(am_ik_validate(job, err));
    am_ik_opts o;
    ami_ik_opts_defaults(job->opts, &o);
    const am_rig *rig = job->rig;
    uint8_t *mask_own = NULL;
    const uint8_t *mask = job->joint_mask;
    if (!mask) {
        mask_own = am_alloc(rig->joint_count);
        if (!mask_own) return AM_FAIL(err, AM_E_NOMEM, "IK mask");
        am_ik_default_mask(rig, mask_own);
        mask = mask_own;
    }
    ami_ik_ws w = {0};
    am_status st = ami_ws_init(&w, job, mask, err);
    if (st == AM_OK) {
        memcpy(w.prev_w, w.ref_w, w.B * 4 * sizeof(double));
        ami_stage stage = ami_stage_begin("ik: solve frames");
        for (size_t t = 0; t < job->frame_count; t++) {
            if (t % 64 == 0 && !ami_progress(stage.name, (double)t / (double)job->frame_count)) {
                st = AM_FAIL(err, AM_E_CANCELLED, "IK stopped at frame %zu", t);
                break;
            }
            ami_priors(&w, &o, t);
            ami_solve_frame(&w, job, &o, mask, t);
        }
        if (st == AM_OK) ami_stage_end(&stage);
    }
    ami_ws_free(&w);
    am_free(mask_own);
    return st;
}

am_status am_ik_run(const am_ik_job *job, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, job && job->opts ? &job->opts->ctx : NULL);
    am_status st = ami_ik_run(job, err);
    am_scope_leave(&sc, job ? job->warnings : NULL);
    return st;
}
