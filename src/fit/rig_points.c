/* A rig for a keypoint skeleton (am_rig_from_points): bones are the skeleton's edges, rooted at
 * the most central keypoint; each bone's length is the median of its observed lengths; the rest
 * pose is the median pose with every frame turned to face -Y along its direction of travel,
 * rebuilt from the root with those lengths and put on the ground. Limits stay free unless given.
 *
 * The frame's heading: where the root keypoint travels (its displacement over +-AMI_HEADING_HALF
 * frames) when it moves at least 2% of the body a second; otherwise the clip's overall travel
 * (first tenth to last tenth), and for a clip that goes nowhere the direction of the root bone
 * (the skeleton's own front). The rig is built through rig.json's parser, so every check of a
 * hand-written rig (limit keys, zero-length bones) applies. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "fit_internal.h"
#include "io/json_internal.h"

#define AMI_HEADING_HALF 15

static int ami_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v [n] with NaNs left out (v is reordered); NaN when none. */
static double ami_median_nan(double *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) v[m++] = v[i];
    if (!m) return NAN;
    qsort(v, m, sizeof *v, ami_cmp_d);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static bool ami_seen(const double *p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

/* Horizontal heading (unit) of the root keypoint's travel over frames [a, b]: medians of the
 * first and last tenth. False when it moves less than min_dist. */
static bool ami_travel(const am_joints *jt, size_t root, size_t a, size_t b, double min_dist, double *buf, double h[2])
{
    const size_t J = jt->joint_count;
    size_t n = b - a + 1, k = n / 10 ? n / 10 : 1;
    double p[2][2];
    for (int end = 0; end < 2; end++)
        for (int d = 0; d < 2; d++) {
            for (size_t i = 0; i < k; i++) {
                size_t t = end ? b - i : a + i;
                const double *q = jt->joints + (t * J + root) * 3;
                buf[i] = ami_seen(q) ? q[d] : NAN;
            }
            p[end][d] = ami_median_nan(buf, k);
        }
    double dx = p[1][0] - p[0][0], dy = p[1][1] - p[0][1], len = hypot(dx, dy);
    if (!(len >= min_dist)) return false;
    h[0] = dx / len;
    h[1] = dy / len;
    return true;
}

am_status am_rig_from_points(const am_joints *jt, const am_skeleton *sk, const am_rig_points_opts *opts, am_rig **out,
                             am_error *err)
{
    assert(jt && sk && out);
    *out = NULL;
    const am_rig_points_opts o = opts ? *opts : (am_rig_points_opts){0};
    const size_t T = jt->frame_count, J = jt->joint_count, E = sk->edge_count;
    AMI_CHECK(err, E > 0, AM_E_EMPTY, "the skeleton has no edges");
    am_status st = AM_OK;
    int32_t *ea = am_alloc_array(E, sizeof *ea), *eb = am_alloc_array(E, sizeof *eb);
    int32_t *par = am_alloc_array(J, sizeof *par), *pedge = am_alloc_array(J, sizeof *pedge);
    int32_t *order = am_alloc_array(J, sizeof *order), *depth = am_alloc_array(J, sizeof *depth);
    uint8_t *used = am_alloc_array(E, 1), *in_sk = am_alloc_array(J, 1);
    double *len = am_alloc_array(J, sizeof *len), *dir = am_alloc_array(J * 3, sizeof *dir);
    double *buf = am_alloc_array(T + 1, sizeof *buf), *head = am_alloc_array(T * 2, sizeof *head);
    double *rest = am_alloc_array(J * 3, sizeof *rest);
    am_buf names = {0}, js = {0};
    if (!ea || !eb || !par || !pedge || !order || !depth || !used || !in_sk || !len || !dir || !buf || !head || !rest) {
        st = AM_FAIL(err, AM_E_NOMEM, "rig of %zu edges", E);
        goto done;
    }
    size_t unknown = 0;
    for (size_t e = 0; e < E; e++) {
        int a = -1, b = -1;
        for (size_t j = 0; j < J; j++) {
            if (strcmp(jt->names[j], sk->a[e]) == 0) a = (int)j;
            if (strcmp(jt->names[j], sk->b[e]) == 0) b = (int)j;
        }
        if (a < 0 || b < 0) {
            for (int side = 0; side < 2; side++) {
                const char *nm = side ? sk->b[e] : sk->a[e];
                if ((side ? b : a) >= 0) continue;
                bool listed = false;
                for (size_t q = 0; q < e && !listed; q++) listed = strcmp(sk->a[q], nm) == 0 || strcmp(sk->b[q], nm) == 0;
                if (listed || names.len > 400) continue;
                am_buf_printf(&names, "%s'%s'", unknown++ ? ", " : "", nm);
            }
            if (!unknown) unknown = 1;
            continue;
        }
        if (a == b) {
            st = AM_FAIL(err, AM_E_VALUE, "edge %s-%s joins a keypoint to itself", sk->a[e], sk->b[e]);
            goto done;
        }
        ea[e] = a;
        eb[e] = b;
        in_sk[a] = in_sk[b] = 1;
    }
    if (unknown) {
        am_buf_append(&names, "", 1);
        st = AM_FAIL(err, AM_E_NAME, "skeleton name(s) that are not keypoints of the positions: %s",
                     names.data ? names.data : "?");
        goto done;
    }
    /* Root: the named one, else the keypoint whose farthest keypoint is fewest edges away (the
     * centre of the tree), ties to the one of most edges. */
    int root = -1;
    if (o.root) {
        for (size_t j = 0; j < J; j++)
            if (strcmp(jt->names[j], o.root) == 0) root = (int)j;
        if (root < 0 || !in_sk[root]) {
            st = AM_FAIL(err, AM_E_NAME, "root '%s' is no keypoint of the skeleton", o.root);
            goto done;
        }
    } else {
        int best_ecc = 1 << 30, best_deg = -1;
        for (size_t r = 0; r < J; r++) {
            if (!in_sk[r]) continue;
            for (size_t j = 0; j < J; j++) depth[j] = -1;
            depth[r] = 0;
            size_t head_i = 0, tail_i = 0;
            order[tail_i++] = (int32_t)r;
            int ecc = 0;
            while (head_i < tail_i) {
                int32_t u = order[head_i++];
                for (size_t e = 0; e < E; e++) {
                    int32_t v = ea[e] == u ? eb[e] : eb[e] == u ? ea[e] : -1;
                    if (v < 0 || depth[v] >= 0) continue;
                    depth[v] = depth[u] + 1;
                    if (depth[v] > ecc) ecc = depth[v];
                    order[tail_i++] = v;
                }
            }
            int deg = 0;
            for (size_t e = 0; e < E; e++) deg += ea[e] == (int32_t)r || eb[e] == (int32_t)r;
            if (ecc < best_ecc || (ecc == best_ecc && deg > best_deg)) best_ecc = ecc, best_deg = deg, root = (int)r;
        }
    }
    /* Breadth first from the root: every edge that reaches a new keypoint is a bone; one that
     * closes a cycle (trackers draw triangles) is left out with a warning. */
    for (size_t j = 0; j < J; j++) par[j] = pedge[j] = depth[j] = -1;
    size_t n_order = 0, qh = 0;
    order[n_order++] = root;
    depth[root] = 0;
    while (qh < n_order) {
        int32_t u = order[qh++];
        for (size_t e = 0; e < E; e++) {
            if (used[e]) continue;
            int32_t v = ea[e] == u ? eb[e] : eb[e] == u ? ea[e] : -1;
            if (v < 0) continue;
            used[e] = 1;
            if (depth[v] >= 0) {
                ami_warn(AM_WARN_IGNORED_NAME, "edge %s-%s closes a cycle of the skeleton: left out of the rig", sk->a[e],
                         sk->b[e]);
                continue;
            }
            depth[v] = depth[u] + 1;
            par[v] = u;
            pedge[v] = (int32_t)e;
            order[n_order++] = v;
        }
    }
    for (size_t j = 0; j < J; j++)
        if (in_sk[j] && depth[j] < 0) {
            st = AM_FAIL(err, AM_E_VALUE, "keypoint '%s' is not connected to '%s' through the skeleton's edges",
                         jt->names[j], jt->names[root]);
            goto done;
        }
    for (size_t j = 0; j < J; j++)
        if (!in_sk[j]) ami_warn(AM_WARN_IGNORED_NAME, "keypoint '%s' is on no edge: left out of the rig", jt->names[j]);
    if (n_order < 2) {
        st = AM_FAIL(err, AM_E_EMPTY, "the skeleton makes no bone");
        goto done;
    }
    /* Lengths: the median over the frames that see both ends. */
    double size = am_body_size(jt->joints, J, NULL);
    for (size_t k = 1; k < n_order; k++) {
        int32_t v = order[k], u = par[v];
        for (size_t t = 0; t < T; t++) {
            const double *p = jt->joints + (t * J + (size_t)u) * 3, *q = jt->joints + (t * J + (size_t)v) * 3;
            buf[t] = ami_seen(p) && ami_seen(q) ? am_vec3_dist(p, q) : NAN;
        }
        len[v] = ami_median_nan(buf, T);
        if (!(len[v] > 0)) {
            st = AM_FAIL(err, AM_E_DEGENERATE, "edge %s-%s: both ends are never seen in one frame (or always coincide)",
                         jt->names[u], jt->names[v]);
            goto done;
        }
    }
    /* Headings per frame. */
    double global[2] = {0.0, -1.0};
    bool have_global = ami_travel(jt, (size_t)root, 0, T - 1, 0.1 * (size > 0 ? size : 1.0), buf, global);
    if (!have_global) {
        /* Nowhere to go: the skeleton's front is its first bone from the root, seen from the root. */
        int32_t c = n_order > 1 ? order[1] : root;
        double s[2] = {0, 0};
        for (size_t t = 0; t < T; t++) {
            const double *p = jt->joints + (t * J + (size_t)root) * 3, *q = jt->joints + (t * J + (size_t)c) * 3;
            if (ami_seen(p) && ami_seen(q)) s[0] += q[0] - p[0], s[1] += q[1] - p[1];
        }
        double l = hypot(s[0], s[1]);
        if (l > 0) global[0] = s[0] / l, global[1] = s[1] / l;
    }
    const double fps = am_fps_valid(jt->fps) ? jt->fps : 30.0;
    for (size_t t = 0; t < T; t++) {
        size_t a = t > AMI_HEADING_HALF ? t - AMI_HEADING_HALF : 0, b = t + AMI_HEADING_HALF < T ? t + AMI_HEADING_HALF : T - 1;
        double h[2];
        double min_dist = 0.02 * (size > 0 ? size : 1.0) * (double)(b - a) / fps;
        if (b <= a || !ami_travel(jt, (size_t)root, a, b, min_dist, buf, h)) memcpy(h, global, sizeof h);
        memcpy(head + 2 * t, h, sizeof h);
    }
    /* Median direction of every bone, each frame turned so its heading is -Y. */
    for (size_t k = 1; k < n_order; k++) {
        int32_t v = order[k], u = par[v];
        for (int d = 0; d < 3; d++) {
            for (size_t t = 0; t < T; t++) {
                const double *p = jt->joints + (t * J + (size_t)u) * 3, *q = jt->joints + (t * J + (size_t)v) * 3;
                if (!ami_seen(p) || !ami_seen(q)) {
                    buf[t] = NAN;
                    continue;
                }
                double w[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]}, l = am_vec3_norm(w);
                /* Turn the heading (hx, hy) onto (0, -1): a rotation about Z. */
                double hx = head[2 * t], hy = head[2 * t + 1];
                double r[3] = {-hy * w[0] + hx * w[1], -hx * w[0] - hy * w[1], w[2]};
                buf[t] = l > 0 ? r[d] / l : NAN;
            }
            dir[3 * v + (size_t)d] = ami_median_nan(buf, T);
        }
        double l = am_vec3_norm(dir + 3 * v);
        if (!(l > 0)) {
            st = AM_FAIL(err, AM_E_DEGENERATE, "edge %s-%s has no median direction", jt->names[u], jt->names[v]);
            goto done;
        }
        am_vec3_scale(dir + 3 * v, 1.0 / l, dir + 3 * v);
    }
    /* The pose from the root out, lowest keypoint on the ground, root above the origin. */
    memset(rest, 0, J * 3 * sizeof *rest);
    double zmin = 0.0;
    for (size_t k = 1; k < n_order; k++) {
        int32_t v = order[k], u = par[v];
        am_vec3_madd(rest + 3 * u, len[v], dir + 3 * v, rest + 3 * v);
        if (rest[3 * v + 2] < zmin) zmin = rest[3 * v + 2];
    }
    for (size_t k = 0; k < n_order; k++) rest[3 * (size_t)order[k] + 2] -= zmin;

    /* rig.json text, through its parser. The root bone is the root's first edge (toward the
     * keypoint it reaches first); the root's other edges hang from the root bone. */
    ami_jw w;
    ami_jw_begin(&w, &js, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "name", o.name ? o.name : "points");
    ami_jw_object(&w, "joints");
    for (size_t k = 0; k < n_order; k++) {
        size_t j = (size_t)order[k];
        ami_jw_row(&w, jt->names[j]);
        for (int d = 0; d < 3; d++) ami_jw_number(&w, NULL, rest[3 * j + (size_t)d]);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_array(&w, "bones");
    int32_t first = order[1];
    for (size_t k = 1; k < n_order; k++) {
        int32_t v = order[k], u = par[v];
        ami_jw_row(&w, NULL);
        ami_jw_string(&w, NULL, jt->names[v]);
        ami_jw_string(&w, NULL, jt->names[u]);
        ami_jw_string(&w, NULL, jt->names[v]);
        if (v == first) ami_jw_null(&w, NULL);
        else ami_jw_string(&w, NULL, u == root ? jt->names[first] : jt->names[u]);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_close(&w);
    char *text = NULL;
    if ((st = ami_jw_take_string(&w, &text, err)) < 0) goto done;
    if (o.limits_json) {
        /* Limits as given, spliced in as rig.json's "limits_deg" (the parser checks them). */
        size_t n = strlen(text);
        am_buf full = {0};
        am_buf_append(&full, text, n - 1);
        am_buf_printf(&full, ",\"limits_deg\":%s}", o.limits_json);
        am_buf_append(&full, "", 1);
        am_free(text);
        text = full.failed ? NULL : full.data;
        if (!text) {
            am_buf_free(&full);
            st = AM_FAIL(err, AM_E_NOMEM, "rig text");
            goto done;
        }
    }
    st = am_rig_parse(text, strlen(text), o.limits_source ? o.limits_source : "rig-from-points", out, err);
    am_free(text);
done:
    am_buf_free(&names);
    am_buf_free(&js);
    am_free(ea);
    am_free(eb);
    am_free(par);
    am_free(pedge);
    am_free(order);
    am_free(depth);
    am_free(used);
    am_free(in_sk);
    am_free(len);
    am_free(dir);
    am_free(buf);
    am_free(head);
    am_free(rest);
    return st;
}
