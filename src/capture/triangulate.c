/* Triangulation and the starting pose of the fit.
 * x comes from the front view, y from the side view, the height from both, weighted 0.25
 * front / 1 side by confidence (the front view's heights are the less reliable: squash, and
 * the reader sees legs end-on). Gaps are filled by linear interpolation in time so every bone
 * has a target. The root rotation is a weighted Kabsch fit of the points riding on the root
 * bone; each other bone, parents first, gets the rotation (Kabsch through its head) that aims
 * its rigid points (tail, children's heads) at their triangulated positions, clamped into its
 * limits: an analytic IK pose. */
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

/* Fill the NaN entries of one coordinate track [T] (stride) by linear interpolation, holding
 * the ends. Returns false if no entry is known. */
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

am_status ami_cap_init(ami_cap *c, am_error *err)
{
    const am_rig *rig = c->rig;
    const size_t T = c->T, J = c->J, B = c->B, P = c->P;
    const double m = c->L.m_per_px;
    double *tri = am_alloc_array(T * J * 3, sizeof(double)), *tw = am_alloc_array(T * J, sizeof(double));
    uint8_t *known = am_alloc_array(J, 1);
    size_t maxpts = J + 2;
    double *pp = am_alloc_array(maxpts * 3, sizeof(double)), *qq = am_alloc_array(maxpts * 3, sizeof(double));
    double *ww = am_alloc_array(maxpts, sizeof(double));
    double *pose = am_alloc_array(B * 16, sizeof(double));
    am_status st = AM_OK;
    if (!tri || !tw || !known || !pp || !qq || !ww || !pose) {
        st = AM_FAIL(err, AM_E_NOMEM, "triangulation of %zu frames x %zu joints", T, J);
        goto done;
    }
    for (size_t i = 0; i < T * J; i++) {
        double cf = c->fconf[i], cs = c->sconf[i];
        double *p = tri + 3 * i;
        p[0] = cf > 0 ? (c->fuv[2 * i] - c->L.front_cx) * m : NAN;
        p[1] = cs > 0 ? -(c->suv[2 * i] - c->L.side_cx) * m : NAN;
        double wf = 0.25 * cf, ws = cs;
        double zf = (c->L.ground_v - c->fuv[2 * i + 1]) * m, zs = (c->L.ground_v - c->suv[2 * i + 1]) * m;
        p[2] = wf + ws > 0 ? ((wf > 0 ? wf * zf : 0.0) + (ws > 0 ? ws * zs : 0.0)) / (wf + ws) : NAN;
        tw[i] = cf > 0 && cs > 0 ? (cf < cs ? cf : cs) : 0.05 * (cf + cs); /* one view: a weak target */
    }
    for (size_t j = 0; j < J; j++) {
        known[j] = 1;
        for (int k = 0; k < 3; k++)
            if (!ami_fill_track(tri + 3 * j + (size_t)k, T, J * 3)) known[j] = 0;
    }

    /* Points rigid with bone b: its head, its tail, and its children's heads. Root first. */
    double qprev[4] = {1, 0, 0, 0};
    for (size_t t = 0; t < T; t++) {
        double *x = c->x + t * P;
        const double *tr = tri + t * J * 3;
        const double *wt = tw + t * J;
        /* Root: Kabsch over rest positions -> triangulated positions. */
        size_t n = 0;
        for (size_t j = 0; j < J; j++) {
            bool rigid = (int32_t)j == rig->head_joint[0] || (int32_t)j == rig->tail_joint[0];
            for (size_t b = 1; b < B && !rigid; b++)
                if (rig->parent[b] == 0 && rig->head_joint[b] == (int32_t)j) rigid = true;
            if (!rigid || !known[j]) continue;
            memcpy(pp + 3 * n, rig->joint_rest + 3 * j, 3 * sizeof(double));
            memcpy(qq + 3 * n, tr + 3 * j, 3 * sizeof(double));
            ww[n++] = wt[j] + 1e-3;
        }
        double R[9], tv[3], q[4];
        if (n >= 2) {
            am_kabsch(pp, qq, ww, n, R, tv);
            am_quat_from_mat3(R, q);
            if (q[0] * qprev[0] + q[1] * qprev[1] + q[2] * qprev[2] + q[3] * qprev[3] < 0)
                for (int k = 0; k < 4; k++) q[k] = -q[k];
            double hr[3];
            am_mat3_mul_vec3(R, rig->joint_rest + 3 * (size_t)rig->head_joint[0], hr);
            am_vec3_add(hr, tv, x);
        } else {
            memcpy(q, qprev, sizeof q);
            if (t > 0) memcpy(x, x - P, 3 * sizeof(double));
            else memcpy(x, rig->joint_rest + 3 * (size_t)rig->head_joint[0], 3 * sizeof(double));
        }
        memcpy(c->q0 + 4 * t, q, sizeof q);
        memcpy(qprev, q, sizeof q);
        x[3] = x[4] = x[5] = 0.0;
        /* Root pose, then bones parents-first. */
        double Rq[9], R0[9];
        am_quat_to_mat3(q, Rq);
        am_mat3_mul(Rq, rig->rest_rot, R0);
        am_mat4_from_rt(R0, x, pose);
        for (size_t b = 1; b < B; b++) {
            double G[16], Gr[9], head[3];
            am_mat4_mul(pose + 16 * (size_t)rig->parent[b], rig->offset + 16 * b, G);
            am_mat4_get_rot(G, Gr);
            am_mat4_get_trans(G, head);
            double *e = x + ami_cap_euler_col(b, 0);
            const double *eprev = t > 0 ? e - P : NULL;
            n = 0;
            double wsum = 0.0;
            for (size_t j = 0; j < J; j++) {
                bool rigid = (int32_t)j == rig->tail_joint[b];
                for (size_t k = b + 1; k < B && !rigid; k++)
                    if (rig->parent[k] == (int32_t)b && rig->head_joint[k] == (int32_t)j && rig->head_joint[k] != rig->head_joint[b])
                        rigid = true;
                if (!rigid || !known[j]) continue;
                am_mat4_mul_point(rig->rest_inv + 16 * b, rig->joint_rest + 3 * j, pp + 3 * n);
                double d[3];
                am_vec3_sub(tr + 3 * j, head, d);
                double Grt[9];
                am_mat3_transpose(Gr, Grt);
                am_mat3_mul_vec3(Grt, d, qq + 3 * n);
                ww[n] = wt[j] + 1e-3;
                wsum += ww[n++];
            }
            double Re[9];
            if (n > 0) {
                /* The head is a fixed point of the bone's rotation: pin it with a heavy weight. */
                memset(pp + 3 * n, 0, 3 * sizeof(double));
                memset(qq + 3 * n, 0, 3 * sizeof(double));
                ww[n++] = 100.0 * wsum;
                double tz[3];
                am_kabsch(pp, qq, ww, n, Re, tz);
                static const double zero3[3] = {0, 0, 0};
                am_mat3_to_euler_xyz_near(Re, eprev ? eprev : zero3, e);
            } else if (eprev) {
                memcpy(e, eprev, 3 * sizeof(double));
            } else {
                e[0] = e[1] = e[2] = 0.0;
            }
            for (int k = 0; k < 3; k++) {
                double lo = c->lower[t * P + ami_cap_euler_col(b, (size_t)k)], hi = c->upper[t * P + ami_cap_euler_col(b, (size_t)k)];
                if (e[k] < lo) e[k] = lo;
                if (e[k] > hi) e[k] = hi;
            }
            am_euler_xyz_to_mat3(e, Re);
            am_mat4_mul_rot(G, Re, pose + 16 * b);
        }
    }
done:
    am_free(pose);
    am_free(tri);
    am_free(tw);
    am_free(known);
    am_free(pp);
    am_free(qq);
    am_free(ww);
    return st;
}
