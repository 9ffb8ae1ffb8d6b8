/* Shaping a motion into a game clip: trim, loop (period, start, seam blend), facing, ground,
 * root motion. The method is described in anymove/shape.h. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/shape.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "shape/shape_internal.h"

void am_shape_result_free(am_shape_result *r)
{
    if (!r) return;
    am_motion_free(r->clip);
    am_free(r->root_motion);
    am_warning_list_free(&r->warnings);
    am_free(r);
}

void ami_local_quat(const am_motion *mo, size_t t, size_t b, double q[4])
{
    size_t B = mo->bone_count;
    if (mo->quat) memcpy(q, mo->quat + (t * B + b) * 4, sizeof(double) * 4);
    else if (mo->euler) am_euler_xyz_to_quat(mo->euler + (t * B + b) * 3, q);
    else am_quat_identity(q);
}

double ami_yaw_of(const double q[4])
{
    /* the heading of the rest's -Y (the way the creature faces, SPEC 1) after the root rotation */
    double h[3], f[3] = {0.0, -1.0, 0.0};
    am_quat_rotate(q, f, h);
    return atan2(h[0], -h[1]);
}

static double ami_wrap(double a)
{
    while (a > AM_PI) a -= 2 * AM_PI;
    while (a < -AM_PI) a += 2 * AM_PI;
    return a;
}

am_status ami_motion_slice(const am_rig *rig, const am_motion *mo, size_t begin, size_t count, am_motion **out,
                           am_error *err)
{
    AMI_TRY(am_motion_create(rig, count, mo->fps, out, err));
    am_motion *c = *out;
    size_t B = rig->bone_count;
    c->quat = am_alloc_array(count * B * 4, sizeof(double));
    if (mo->loc) c->loc = am_alloc_array(count * B * 3, sizeof(double));
    if (!c->quat || (mo->loc && !c->loc)) {
        am_motion_free(c);
        *out = NULL;
        return AM_FAIL(err, AM_E_NOMEM, "clip of %zu frames", count);
    }
    for (size_t t = 0; t < count; t++) {
        size_t s = begin + t;
        memcpy(c->trans + t * 3, mo->trans + s * 3, sizeof(double) * 3);
        memcpy(c->root_quat + t * 4, mo->root_quat + s * 4, sizeof(double) * 4);
        for (size_t b = 0; b < B; b++) ami_local_quat(mo, s, b, c->quat + (t * B + b) * 4);
        if (mo->loc) memcpy(c->loc + t * B * 3, mo->loc + s * B * 3, sizeof(double) * B * 3);
    }
    if (mo->extra_json) {
        c->extra_json = am_strdup(mo->extra_json);
        if (!c->extra_json) {
            am_motion_free(c);
            *out = NULL;
            return AM_FAIL(err, AM_E_NOMEM, "motion keys");
        }
    }
    return AM_OK;
}

/* euler from quat (continuous curves) and the FK joints. */
am_status ami_motion_finish(const am_rig *rig, am_motion *c, am_error *err)
{
    size_t B = rig->bone_count;
    for (size_t t = 0; t < c->frame_count; t++)
        for (size_t b = 0; b < B; b++) {
            double R[9], *e = c->euler + (t * B + b) * 3, *q = c->quat + (t * B + b) * 4;
            am_quat_normalize(q, q);
            if (b == 0) {
                am_quat_identity(q);
                e[0] = e[1] = e[2] = 0;
                continue;
            }
            am_quat_to_mat3(q, R);
            double zero[3] = {0, 0, 0};
            am_mat3_to_euler_xyz_near(R, t ? c->euler + ((t - 1) * B + b) * 3 : zero, e);
        }
    for (size_t t = 0; t < c->frame_count; t++) am_quat_normalize(c->root_quat + t * 4, c->root_quat + t * 4);
    am_free(c->joints);
    c->joints = NULL;
    return am_motion_compute_joints(c, rig, err);
}

void ami_loop_error(const double *joints, size_t T, size_t J, const double d[3], double size, am_loop_error *e,
                    double *mean_step, double *mean_accel)
{
    double step = 0, pj = 0, vj = 0, ms = 0, ma = 0;
    for (size_t j = 0; j < J; j++) {
        const double *x0 = joints + j * 3, *x1 = joints + (J + j) * 3, *xl = joints + ((T - 1) * J + j) * 3,
                     *xm = joints + ((T - 2) * J + j) * 3;
        double u[3], v[3], w[3];
        for (int k = 0; k < 3; k++) {
            double n0 = x0[k] + d[k];
            u[k] = n0 - xl[k];
            v[k] = n0 - (2 * xl[k] - xm[k]);
            w[k] = (x1[k] - x0[k]) - (xl[k] - xm[k]);
        }
        step += am_vec3_norm(u), pj += am_vec3_norm(v), vj += am_vec3_norm(w);
    }
    for (size_t t = 0; t + 1 < T; t++)
        for (size_t j = 0; j < J; j++) {
            double u[3];
            am_vec3_sub(joints + ((t + 1) * J + j) * 3, joints + (t * J + j) * 3, u);
            ms += am_vec3_norm(u) / (double)((T - 1) * J);
            if (t >= 1 && T > 2) {
                for (int k = 0; k < 3; k++)
                    u[k] = joints[((t + 1) * J + j) * 3 + (size_t)k] - 2 * joints[(t * J + j) * 3 + (size_t)k] +
                           joints[((t - 1) * J + j) * 3 + (size_t)k];
                ma += am_vec3_norm(u) / (double)((T - 2) * J);
            }
        }
    double s = 100.0 / size / (double)J;
    e->step_pct = step * s;
    e->position_jump_pct = pj * s;
    e->velocity_jump_pct = vj * s;
    if (mean_step) *mean_step = ms * 100.0 / size;
    if (mean_accel) *mean_accel = ma * 100.0 / size;
}

/* The median time between touchdowns of the same joint in motion.json "contacts" (frames), or 0. */
static double ami_contact_period(const am_motion *mo, size_t begin, size_t end)
{
    if (!mo->extra_json) return 0;
    json_t *doc = json_loads(mo->extra_json, 0, NULL);
    json_t *c = json_object_get(doc, "contacts");
    double gaps[256];
    size_t n = 0;
    const char *key;
    json_t *list;
    if (json_is_object(c))
        json_object_foreach(c, key, list) {
            double prev = -1;
            for (size_t i = 0; i < json_array_size(list) && n < 256; i++) {
                double s0 = json_number_value(json_array_get(json_array_get(list, i), 0));
                if (s0 < (double)begin || s0 >= (double)end) continue;
                if (prev >= 0 && s0 > prev) gaps[n++] = s0 - prev;
                prev = s0;
            }
        }
    json_decref(doc);
    if (n == 0) return 0;
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && gaps[k - 1] > gaps[k]; k--) {
            double t = gaps[k];
            gaps[k] = gaps[k - 1], gaps[k - 1] = t;
        }
    return gaps[n / 2];
}

/* Joints of frames [begin, end) relative to the root, turned by the root's yaw: the pose
 * features (a gait repeats in the body's frame even when the body sways or turns). */
static void ami_features(const am_motion *mo, size_t begin, size_t end, double *f)
{
    size_t J = mo->joint_count;
    for (size_t t = begin; t < end; t++) {
        double yaw = ami_yaw_of(mo->root_quat + t * 4), c = cos(yaw), s = sin(yaw);
        for (size_t j = 0; j < J; j++) {
            const double *x = mo->joints + (t * J + j) * 3, *r = mo->trans + t * 3;
            double *o = f + ((t - begin) * J + j) * 3, dx = x[0] - r[0], dy = x[1] - r[1];
            o[0] = c * dx + s * dy, o[1] = -s * dx + c * dy, o[2] = x[2] - r[2];
        }
    }
}

static double ami_fdist(const double *f, size_t J, size_t a, size_t b)
{
    double s = 0;
    for (size_t i = 0; i < J * 3; i++) {
        double x = f[a * J * 3 + i] - f[b * J * 3 + i];
        s += x * x;
    }
    return s / (double)J;
}

size_t ami_pose_period(const double *f, size_t T, size_t J)
{
    double best = INFINITY;
    double *D = am_alloc_array(T, sizeof *D);
    if (!D) return 0;
    for (size_t P = 4; P + 1 <= T; P++) {
        double s = 0;
        for (size_t t = 0; t + P < T; t++) s += ami_fdist(f, J, t + P, t);
        D[P] = s / (double)(T - P);
        best = fmin(best, D[P]);
    }
    /* the shortest lag about as self-similar as the best (a clip of two strides also matches at
     * two periods) that is a local minimum */
    double var = 0;
    for (size_t t = 0; t < T; t++) var += ami_fdist(f, J, t, 0) / (double)T;
    size_t pick = 0;
    for (size_t P = 4; P + 1 <= T && !pick; P++) {
        bool local = (P == 4 || D[P] <= D[P - 1]) && (P + 2 > T || D[P] <= D[P + 1]);
        if (local && D[P] <= 1.25 * best + 1e-6 * var) pick = P;
    }
    am_free(D);
    return pick;
}

typedef struct {
    double dp[3], dv[3];
} ami_gap;

/* c_i = -dp i / P + beta i (P - i) / P^2 with beta = dv P^2 / (2 (P - 1)): closes the pose gap
 * dp = x_P - x_0 and the velocity gap dv = (x_P - x_{P-1}) - (x_1 - x_0) exactly. */
static void ami_correction(const ami_gap *g, size_t i, size_t P, double c[3])
{
    double u = (double)i / (double)P, w = (double)i * (double)(P - i) / ((double)P * (double)P);
    for (int k = 0; k < 3; k++) c[k] = -g->dp[k] * u + g->dv[k] * (double)P * (double)P / (2.0 * (double)(P - 1)) * w;
}

static void ami_vec_gap(const double *x0, const double *x1, const double *xm, const double *xp, ami_gap *g)
{
    for (int k = 0; k < 3; k++) g->dp[k] = xp[k] - x0[k], g->dv[k] = (xp[k] - xm[k]) - (x1[k] - x0[k]);
}

/* A rotation channel: gaps as rotation vectors of left-multiplied differences. */
static void ami_rot_gap(const double *q0, const double *q1, const double *qm, const double *qp, ami_gap *g)
{
    double inv[4], d[4], ve[3], vs[3];
    am_quat_conj(q0, inv);
    am_quat_mul(qp, inv, d);
    am_quat_to_rotvec(d, g->dp);
    am_quat_conj(qm, inv);
    am_quat_mul(qp, inv, d);
    am_quat_to_rotvec(d, ve);
    am_quat_conj(q0, inv);
    am_quat_mul(q1, inv, d);
    am_quat_to_rotvec(d, vs);
    for (int k = 0; k < 3; k++) g->dv[k] = ve[k] - vs[k];
}

static void ami_rot_apply(const double c[3], double q[4])
{
    double e[4], r[4];
    am_quat_from_rotvec(c, e);
    am_quat_mul(e, q, r);
    am_quat_normalize(r, q);
}

static void ami_rotz_quat(double a, double q[4])
{
    double z[3] = {0, 0, 1};
    am_quat_from_axis_angle(z, a, q);
}

/* Cycle [s, s + P) of c (which holds frames [s, s + P], P + 1 of them) made seamless. */
static void ami_blend_cycle(const am_rig *rig, am_motion *c, size_t P, double travel[3], double *turn)
{
    size_t B = rig->bone_count;
    double *tr = c->trans;
    for (int k = 0; k < 2; k++) travel[k] = tr[P * 3 + (size_t)k] - tr[(size_t)k];
    travel[2] = 0;
    *turn = ami_wrap(ami_yaw_of(c->root_quat + P * 4) - ami_yaw_of(c->root_quat));
    /* translation: the travel ramp off, the seam closed, the ramp back */
    double *res = am_alloc_array((P + 1) * 3, sizeof *res);
    double *rq = am_alloc_array((P + 1) * 4, sizeof *rq);
    if (!res || !rq) {
        am_free(res), am_free(rq);
        return;
    }
    for (size_t i = 0; i <= P; i++) {
        double u = (double)i / (double)P;
        for (int k = 0; k < 3; k++) res[i * 3 + (size_t)k] = tr[i * 3 + (size_t)k] - travel[k] * u;
        double z[4];
        ami_rotz_quat(-*turn * u, z);
        am_quat_mul(z, c->root_quat + i * 4, rq + i * 4);
        if (i && am_vec3_dot(rq + i * 4, rq + (i - 1) * 4) + rq[i * 4] * rq[(i - 1) * 4] < 0)
            for (int k = 0; k < 4; k++) rq[i * 4 + (size_t)k] = -rq[i * 4 + (size_t)k];
    }
    ami_gap g;
    ami_vec_gap(res, res + 3, res + (P - 1) * 3, res + P * 3, &g);
    ami_gap gr;
    ami_rot_gap(rq, rq + 4, rq + (P - 1) * 4, rq + P * 4, &gr);
    for (size_t i = 0; i < P; i++) {
        double u = (double)i / (double)P, cc[3];
        ami_correction(&g, i, P, cc);
        for (int k = 0; k < 3; k++) tr[i * 3 + (size_t)k] = res[i * 3 + (size_t)k] + cc[k] + travel[k] * u;
        ami_correction(&gr, i, P, cc);
        ami_rot_apply(cc, rq + i * 4);
        double z[4];
        ami_rotz_quat(*turn * u, z);
        am_quat_mul(z, rq + i * 4, c->root_quat + i * 4);
    }
    for (size_t b = 1; b < B; b++) {
        double *q = c->quat;
        for (size_t i = 1; i <= P; i++) {
            double *a = q + (i * B + b) * 4, *p = q + ((i - 1) * B + b) * 4;
            if (a[0] * p[0] + a[1] * p[1] + a[2] * p[2] + a[3] * p[3] < 0)
                for (int k = 0; k < 4; k++) a[k] = -a[k];
        }
        ami_rot_gap(q + b * 4, q + (B + b) * 4, q + ((P - 1) * B + b) * 4, q + (P * B + b) * 4, &gr);
        for (size_t i = 0; i < P; i++) {
            double cc[3];
            ami_correction(&gr, i, P, cc);
            ami_rot_apply(cc, q + (i * B + b) * 4);
        }
        if (c->loc) {
            double *l = c->loc;
            ami_vec_gap(l + b * 3, l + (B + b) * 3, l + ((P - 1) * B + b) * 3, l + (P * B + b) * 3, &g);
            for (size_t i = 0; i < P; i++) {
                double cc[3];
                ami_correction(&g, i, P, cc);
                for (int k = 0; k < 3; k++) l[(i * B + b) * 3 + (size_t)k] += cc[k];
            }
        }
    }
    am_free(res), am_free(rq);
    c->frame_count = P; /* the frame after the cycle goes: it is the first one again */
}

static double ami_median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
            double t = v[k];
            v[k] = v[k - 1], v[k - 1] = t;
        }
    return n ? v[n / 2] : 0;
}

static am_status ami_shape(const am_rig *rig, const am_motion *mo, const am_shape_opts *o, am_shape_result *r,
                           am_error *err)
{
    size_t T = mo->frame_count, J = rig->joint_count, B = rig->bone_count;
    am_shape_report *rep = &r->report;
    rep->input_frames = T;
    size_t begin = 0, end = T;
    if (o->has_range) {
        AMI_CHECK(err, o->range_begin < o->range_end, AM_E_ARG,
                  "range %zu:%zu is empty or reversed (A:B keeps frames A to B-1)", o->range_begin, o->range_end);
        AMI_CHECK(err, o->range_end <= T, AM_E_ARG, "range %zu:%zu runs past the motion's %zu frames",
                  o->range_begin, o->range_end, T);
        begin = o->range_begin, end = o->range_end;
    }
    AMI_CHECK(err, end - begin >= 2, AM_E_VALUE, "a clip needs at least 2 frames, the range keeps %zu", end - begin);
    rep->begin = begin, rep->end = end;
    rep->body_size = am_body_size(rig->joint_rest, J, NULL);
    double size = rep->body_size > 0 ? rep->body_size : 1.0;
    /* the input's joints (FK), for the features */
    am_motion *src = NULL;
    AMI_TRY(ami_motion_slice(rig, mo, 0, T, &src, err));
    am_status st = ami_motion_finish(rig, src, err);
    size_t n = end - begin, s = begin, P = n;
    double *f = NULL;
    if (st == AM_OK && o->loop) {
        if (n < 8) {
            st = AM_FAIL(err, AM_E_VALUE, "%zu frames are too short to loop: a loop needs at least 8 (two cycles of 4)", n);
            goto done;
        }
        f = am_alloc_array(n * J * 3, sizeof *f);
        if (!f) {
            st = AM_FAIL(err, AM_E_NOMEM, "pose features");
            goto done;
        }
        ami_features(src, begin, end, f);
        double cp = ami_contact_period(mo, begin, end);
        size_t per = cp >= 4 && cp + 1 <= (double)n ? (size_t)lround(cp) : 0;
        rep->period_from = per ? "contacts" : "pose";
        if (!per) per = ami_pose_period(f, n, J);
        if (!per) {
            st = AM_FAIL(err, AM_E_VALUE, "no cycle found in %zu frames: the pose never comes back (is it a loop?)", n);
            goto done;
        }
        P = per;
        /* the start whose pose and velocity one period later match best */
        double best = INFINITY;
        for (size_t a = 0; a + P < n; a++) {
            double c = ami_fdist(f, J, a + P, a);
            if (a + P + 1 < n) {
                double dv = 0;
                for (size_t i = 0; i < J * 3; i++) {
                    double x = (f[(a + P + 1) * J * 3 + i] - f[(a + P) * J * 3 + i]) - (f[(a + 1) * J * 3 + i] - f[a * J * 3 + i]);
                    dv += x * x;
                }
                c += dv / (double)J;
            }
            if (c < best) best = c, s = begin + a;
        }
        rep->cycle_start = s;
        rep->period_frames = P;
        /* the raw cycle's seam */
        double d[3] = {src->trans[(s + P) * 3] - src->trans[s * 3], src->trans[(s + P) * 3 + 1] - src->trans[s * 3 + 1], 0};
        ami_loop_error(src->joints + s * J * 3, P, J, d, size, &rep->before, NULL, NULL);
        st = ami_motion_slice(rig, src, s, P + 1, &r->clip, err);
        if (st == AM_OK) {
            double turn;
            ami_blend_cycle(rig, r->clip, P, rep->travel_per_cycle, &turn);
            rep->turn_deg_per_cycle = AM_DEG(turn);
        }
    } else if (st == AM_OK) {
        rep->cycle_start = begin;
        rep->period_frames = n;
        st = ami_motion_slice(rig, src, begin, n, &r->clip, err);
        if (st == AM_OK) {
            for (int k = 0; k < 2; k++) rep->travel_per_cycle[k] = src->trans[(end - 1) * 3 + (size_t)k] - src->trans[begin * 3 + (size_t)k];
            rep->turn_deg_per_cycle = AM_DEG(ami_wrap(ami_yaw_of(src->root_quat + (end - 1) * 4) - ami_yaw_of(src->root_quat + begin * 4)));
        }
    }
    if (st != AM_OK) goto done;
    am_motion *c = r->clip;
    size_t N = c->frame_count;
    /* facing -Y at the start, starting above the origin */
    double yaw0 = o->keep_facing ? 0.0 : ami_yaw_of(c->root_quat);
    rep->facing_turn_deg = AM_DEG(-yaw0);
    double z[4], x0 = c->trans[0], y0 = c->trans[1];
    ami_rotz_quat(-yaw0, z);
    for (size_t t = 0; t < N; t++) {
        double p[3] = {c->trans[t * 3] - x0, c->trans[t * 3 + 1] - y0, c->trans[t * 3 + 2]}, q[4];
        am_quat_rotate(z, p, c->trans + t * 3);
        am_quat_mul(z, c->root_quat + t * 4, q);
        memcpy(c->root_quat + t * 4, q, sizeof q);
    }
    double tv[3];
    am_quat_rotate(z, rep->travel_per_cycle, tv);
    memcpy(rep->travel_per_cycle, tv, sizeof tv);
    double dur = (double)(o->loop ? N : (N > 1 ? N - 1 : 1)) / c->fps;
    rep->speed_mps = hypot(tv[0], tv[1]) / dur;
    if ((st = ami_motion_finish(rig, c, err)) != AM_OK) goto done;
    /* feet on the ground: the median frame's lowest joint where the rest pose has its lowest */
    if (!o->keep_height) {
        double *low = am_alloc_array(N, sizeof *low), rest_low = INFINITY;
        if (!low) {
            st = AM_FAIL(err, AM_E_NOMEM, "heights");
            goto done;
        }
        for (size_t j = 0; j < J; j++) rest_low = fmin(rest_low, rig->joint_rest[j * 3 + 2]);
        for (size_t t = 0; t < N; t++) {
            low[t] = INFINITY;
            for (size_t j = 0; j < J; j++) low[t] = fmin(low[t], c->joints[(t * J + j) * 3 + 2]);
        }
        rep->ground_shift_m = rest_low - ami_median(low, N);
        am_free(low);
        for (size_t t = 0; t < N; t++) c->trans[t * 3 + 2] += rep->ground_shift_m;
        for (size_t i = 0; i < N * J; i++) c->joints[i * 3 + 2] += rep->ground_shift_m;
    }
    /* root motion: in place, the travel path comes off the root (a ramp for a loop, else a
     * moving average over half a second) */
    if (o->root_motion != AM_ROOT_MOTION_BONE) {
        double *path = am_alloc_array(N * 2, sizeof *path);
        if (!path) {
            st = AM_FAIL(err, AM_E_NOMEM, "root motion");
            goto done;
        }
        size_t half = (size_t)(0.25 * c->fps);
        for (size_t t = 0; t < N; t++)
            for (int k = 0; k < 2; k++) {
                if (o->loop) {
                    path[t * 2 + (size_t)k] = tv[k] * (double)t / (double)N;
                    continue;
                }
                size_t a = t > half ? t - half : 0, b = t + half + 1 < N ? t + half + 1 : N;
                double m = 0;
                for (size_t i = a; i < b; i++) m += c->trans[i * 3 + (size_t)k];
                path[t * 2 + (size_t)k] = m / (double)(b - a);
            }
        for (size_t t = 0; t < N; t++)
            for (int k = 0; k < 2; k++) {
                c->trans[t * 3 + (size_t)k] -= path[t * 2 + (size_t)k];
                for (size_t j = 0; j < J; j++) c->joints[(t * J + j) * 3 + (size_t)k] -= path[t * 2 + (size_t)k];
            }
        if (o->root_motion == AM_ROOT_MOTION_INPLACE) r->root_motion = path;
        else am_free(path);
    }
    /* the seam of the result (travel back on for the measure) */
    {
        double d[3] = {o->root_motion == AM_ROOT_MOTION_BONE ? tv[0] : 0, o->root_motion == AM_ROOT_MOTION_BONE ? tv[1] : 0, 0};
        if (o->root_motion == AM_ROOT_MOTION_BONE || o->loop)
            ami_loop_error(c->joints, N, J, d, size, o->loop ? &rep->after : &rep->before, &rep->mean_step_pct,
                           &rep->mean_accel_pct);
        if (!o->loop) rep->after = rep->before;
    }
    (void)B;
done:
    am_free(f);
    am_motion_free(src);
    return st;
}

am_status am_shape_run(const am_rig *rig, const am_motion *mo, const am_shape_opts *opts, am_shape_result **out,
                       am_error *err)
{
    assert(rig && mo && out);
    *out = NULL;
    am_shape_opts o = {0};
    if (opts) o = *opts;
    am_scope sc;
    am_scope_enter(&sc, &o.ctx);
    am_shape_result *r = am_alloc(sizeof *r);
    am_status st = r ? ami_shape(rig, mo, &o, r, err) : AM_FAIL(err, AM_E_NOMEM, "shape result");
    if (st != AM_OK) {
        am_shape_result_free(r);
        am_scope_leave(&sc, NULL);
        return st;
    }
    am_scope_leave(&sc, &r->warnings);
    *out = r;
    return AM_OK;
}
