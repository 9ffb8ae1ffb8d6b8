/* Bone heat skin weights (anymove/bind.h has the method and its sources): weld, cotangent
 * Laplacian, nearest visible bone through a triangle BVH, one sparse Cholesky, one solve per
 * bone, top-4. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/bind.h"
#include "anymove/math.h"
#include "anymove/opt.h"
#include "core/internal.h"

void am_bind_result_free(am_bind_result *r)
{
    if (!r) return;
    am_free(r->bone_index);
    am_free(r->weight);
    am_warning_list_free(&r->warnings);
    am_free(r);
}

/* ---- welding: a hash grid of cell `tol`, union-find over the 27 neighbouring cells ---- */

static int32_t ami_find(int32_t *up, int32_t i)
{
    while (up[i] != i) {
        up[i] = up[up[i]];
        i = up[i];
    }
    return i;
}

static void ami_union(int32_t *up, int32_t a, int32_t b)
{
    a = ami_find(up, a), b = ami_find(up, b);
    if (a == b) return;
    if (a < b) up[b] = a;
    else up[a] = b;
}

static uint64_t ami_cell_hash(int64_t x, int64_t y, int64_t z)
{
    uint64_t h = (uint64_t)x * 0x9E3779B97F4A7C15ull ^ (uint64_t)y * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)z * 0x165667B19E3779F9ull;
    return h ^ (h >> 29);
}

/* rep[v]: the welded vertex of v (dense 0..*count-1, in order of first appearance). */
static am_status ami_weld(const double *p, size_t V, double tol, int32_t *rep, size_t *count, am_error *err)
{
    int32_t *up = am_alloc_array(V, sizeof *up);
    size_t hn = 1;
    while (hn < 2 * V) hn <<= 1;
    int32_t *head = am_alloc_array(hn, sizeof *head), *next = am_alloc_array(V, sizeof *next);
    int64_t *cell = am_alloc_array(V * 3, sizeof *cell);
    if (!up || !head || !next || !cell) {
        am_free(up), am_free(head), am_free(next), am_free(cell);
        return AM_FAIL(err, AM_E_NOMEM, "welding %zu vertices", V);
    }
    for (size_t i = 0; i < hn; i++) head[i] = -1;
    for (size_t v = 0; v < V; v++) {
        up[v] = (int32_t)v;
        for (int k = 0; k < 3; k++) cell[v * 3 + (size_t)k] = tol > 0 ? (int64_t)floor(p[v * 3 + (size_t)k] / tol) : 0;
    }
    if (tol > 0) {
        for (size_t v = 0; v < V; v++) {
            const int64_t *c = cell + v * 3;
            for (int dx = -1; dx <= 1; dx++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dz = -1; dz <= 1; dz++) {
                        size_t h = ami_cell_hash(c[0] + dx, c[1] + dy, c[2] + dz) & (hn - 1);
                        for (int32_t u = head[h]; u >= 0; u = next[u]) {
                            const int64_t *cu = cell + (size_t)u * 3;
                            if (cu[0] != c[0] + dx || cu[1] != c[1] + dy || cu[2] != c[2] + dz) continue;
                            if (am_vec3_dist(p + v * 3, p + (size_t)u * 3) <= tol) ami_union(up, (int32_t)v, u);
                        }
                    }
            size_t h = ami_cell_hash(c[0], c[1], c[2]) & (hn - 1);
            next[v] = head[h];
            head[h] = (int32_t)v;
        }
    }
    size_t n = 0;
    for (size_t v = 0; v < V; v++) rep[v] = -1;
    for (size_t v = 0; v < V; v++) {
        int32_t r = ami_find(up, (int32_t)v);
        if (rep[r] < 0) rep[r] = (int32_t)n++;
        rep[v] = rep[r];
    }
    *count = n;
    am_free(up), am_free(head), am_free(next), am_free(cell);
    return AM_OK;
}

/* ---- a bounding volume hierarchy over the triangles, for the visibility rays ---- */

typedef struct {
    float lo[3], hi[3];
    int32_t left;   /* inner: first child (the second is left + 1); leaf: -1 */
    int32_t first, count;
} ami_bvh_node;

typedef struct {
    const double *p;     /* welded positions */
    const int32_t *tri;  /* [F][3] welded */
    int32_t *order;      /* [F] triangle ids, leaves index ranges of it */
    double *centre;      /* [F][3] */
    ami_bvh_node *node;
    size_t node_count;
} ami_bvh;

typedef struct {
    double key;
    int32_t id;
} ami_keyed;

static int ami_keyed_cmp(const void *a, const void *b)
{
    double x = ((const ami_keyed *)a)->key, y = ((const ami_keyed *)b)->key;
    return x < y ? -1 : x > y ? 1 : 0;
}

static void ami_bvh_bounds(const ami_bvh *h, int32_t first, int32_t count, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    for (int32_t i = first; i < first + count; i++) {
        const int32_t *t = h->tri + (size_t)h->order[i] * 3;
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++) {
                float x = (float)h->p[(size_t)t[c] * 3 + (size_t)k];
                if (x < lo[k]) lo[k] = x;
                if (x > hi[k]) hi[k] = x;
            }
    }
    /* float rounding must never let a ray slip past a triangle at the box's edge */
    for (int k = 0; k < 3; k++) {
        float pad = 1e-6f * (fabsf(lo[k]) + fabsf(hi[k]) + 1e-6f);
        lo[k] -= pad, hi[k] += pad;
    }
}

/* Median split along the longest axis of the centres, down to leaves of at most 4. */
static am_status ami_bvh_build(ami_bvh *h, size_t F, am_error *err)
{
    h->order = am_alloc_array(F, sizeof *h->order);
    h->centre = am_alloc_array(F * 3, sizeof *h->centre);
    h->node = am_alloc_array(2 * F + 1, sizeof *h->node);
    ami_keyed *keys = am_alloc_array(F, sizeof *keys);
    int32_t *stack = am_alloc_array(2 * F + 1, sizeof *stack);
    if (!h->order || !h->centre || !h->node || !keys || !stack) {
        am_free(keys), am_free(stack);
        return AM_FAIL(err, AM_E_NOMEM, "visibility tree of %zu triangles", F);
    }
    for (size_t f = 0; f < F; f++) {
        h->order[f] = (int32_t)f;
        for (int k = 0; k < 3; k++) {
            double s = 0;
            for (int c = 0; c < 3; c++) s += h->p[(size_t)h->tri[f * 3 + (size_t)c] * 3 + (size_t)k];
            h->centre[f * 3 + (size_t)k] = s / 3.0;
        }
    }
    h->node_count = 1;
    h->node[0] = (ami_bvh_node){.left = -1, .first = 0, .count = (int32_t)F};
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp) {
        ami_bvh_node *nd = &h->node[stack[--sp]];
        ami_bvh_bounds(h, nd->first, nd->count, nd->lo, nd->hi);
        if (nd->count <= 4) continue;
        double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int32_t i = nd->first; i < nd->first + nd->count; i++)
            for (int k = 0; k < 3; k++) {
                double c = h->centre[(size_t)h->order[i] * 3 + (size_t)k];
                clo[k] = fmin(clo[k], c), chi[k] = fmax(chi[k], c);
            }
        int ax = 0;
        for (int k = 1; k < 3; k++)
            if (chi[k] - clo[k] > chi[ax] - clo[ax]) ax = k;
        for (int32_t i = 0; i < nd->count; i++) {
            int32_t id = h->order[nd->first + i];
            keys[i] = (ami_keyed){h->centre[(size_t)id * 3 + (size_t)ax], id};
        }
        qsort(keys, (size_t)nd->count, sizeof *keys, ami_keyed_cmp);
        for (int32_t i = 0; i < nd->count; i++) h->order[nd->first + i] = keys[i].id;
        int32_t half = nd->count / 2, l = (int32_t)h->node_count;
        h->node[l] = (ami_bvh_node){.left = -1, .first = nd->first, .count = half};
        h->node[l + 1] = (ami_bvh_node){.left = -1, .first = nd->first + half, .count = nd->count - half};
        nd->left = l;
        h->node_count += 2;
        stack[sp++] = l;
        stack[sp++] = l + 1;
    }
    am_free(keys);
    am_free(stack);
    return AM_OK;
}

static bool ami_ray_box(const double o[3], const double inv[3], double tmax, const float lo[3], const float hi[3])
{
    double t0 = 0.0, t1 = tmax;
    for (int k = 0; k < 3; k++) {
        double a = ((double)lo[k] - o[k]) * inv[k], b = ((double)hi[k] - o[k]) * inv[k];
        if (a > b) {
            double s = a;
            a = b, b = s;
        }
        if (a > t0) t0 = a;
        if (b < t1) t1 = b;
        if (t0 > t1) return false;
    }
    return true;
}

/* Moeller-Trumbore: hit parameter along d, or -1. */
static double ami_ray_tri(const double o[3], const double d[3], const double *a, const double *b, const double *c)
{
    double e1[3], e2[3], pv[3], tv[3], qv[3];
    am_vec3_sub(b, a, e1);
    am_vec3_sub(c, a, e2);
    am_vec3_cross(d, e2, pv);
    double det = am_vec3_dot(e1, pv);
    if (fabs(det) < 1e-300) return -1;
    double inv = 1.0 / det;
    am_vec3_sub(o, a, tv);
    double u = am_vec3_dot(tv, pv) * inv;
    if (u < 0.0 || u > 1.0) return -1;
    am_vec3_cross(tv, e1, qv);
    double v = am_vec3_dot(d, qv) * inv;
    if (v < 0.0 || u + v > 1.0) return -1;
    return am_vec3_dot(e2, qv) * inv;
}

/* Does the segment from vertex `from` to point q enter a triangle (other than those around the
 * vertex itself) through its front? Only a front-facing crossing blocks, as in Blender's bone
 * heat: the ray from a skin vertex to a bone inside the body leaves its own shell through the
 * back of faces (the skin around the bone, an inner mouth or eyelid, the body where a leg's
 * surface dips into it), and is blocked only where it enters another shell from outside (an arm
 * pressed against the body). Seen two-sided, the Trex's interpenetrating legs and inner faces hid
 * its own bones from 86 of 908 vertices. Triangles are wound outwards (ami_heat_areas). */
static bool ami_blocked(const ami_bvh *h, int32_t from, const double q[3], int32_t *stack)
{
    const double *o = h->p + (size_t)from * 3;
    double d[3], inv[3];
    am_vec3_sub(q, o, d);
    for (int k = 0; k < 3; k++) inv[k] = 1.0 / d[k];
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const ami_bvh_node *nd = &h->node[stack[--sp]];
        if (!ami_ray_box(o, inv, 1.0, nd->lo, nd->hi)) continue;
        if (nd->left >= 0) {
            stack[sp++] = nd->left;
            stack[sp++] = nd->left + 1;
            continue;
        }
        for (int32_t i = nd->first; i < nd->first + nd->count; i++) {
            const int32_t *t = h->tri + (size_t)h->order[i] * 3;
            if (t[0] == from || t[1] == from || t[2] == from) continue;
            const double *a = h->p + (size_t)t[0] * 3, *b = h->p + (size_t)t[1] * 3, *c = h->p + (size_t)t[2] * 3;
            double s = ami_ray_tri(o, d, a, b, c);
            if (!(s > 1e-6 && s < 1.0 - 1e-9)) continue;
            double e1[3], e2[3], n[3];
            am_vec3_sub(b, a, e1);
            am_vec3_sub(c, a, e2);
            am_vec3_cross(e1, e2, n);
            if (am_vec3_dot(n, d) < -1e-5 * am_vec3_norm(n) * am_vec3_norm(d)) return true;
        }
    }
    return false;
}

/* Closest point of segment [a, b] to p; returns the distance. */
static double ami_segment_closest(const double p[3], const double a[3], const double b[3], double q[3])
{
    double ab[3], ap[3];
    am_vec3_sub(b, a, ab);
    am_vec3_sub(p, a, ap);
    double l2 = am_vec3_dot(ab, ab), t = l2 > 0 ? am_vec3_dot(ap, ab) / l2 : 0.0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int k = 0; k < 3; k++) q[k] = a[k] + t * ab[k];
    return am_vec3_dist(p, q);
}

/* Blender's refinement of the heat distance: a bone behind the surface (the vertex normal points
 * away from it) counts as up to 2000 times farther, so the skin of a thigh pressed against the
 * belly is not heated by the belly's bones. */
static double ami_heat_distance(const double p[3], const double n[3], const double *seg, double q[3])
{
    double d = ami_segment_closest(p, seg, seg + 3, q);
    if (!(d > 0)) return 0;
    double u[3];
    am_vec3_sub(p, q, u);
    double c = am_vec3_dot(u, n) / d;
    return d / (0.5 * (c + 1.001));
}

/* ---- the solve ---- */

typedef struct {
    size_t V, W, F, B;        /* mesh vertices, welded vertices, welded triangles, deforming bones */
    int32_t *rep;             /* [V] welded vertex */
    double *p;                /* [W][3] */
    int32_t *tri;             /* [F][3] */
    int32_t *bone;            /* [B] rig bone of deforming bone i */
    double *seg;              /* [B][6] head, tail */
    int32_t *comp;            /* [W] connected piece */
    double *area;             /* [W] lumped area */
    double *nrm;              /* [W][3] area-weighted vertex normals */
    double *H;                /* [W] */
    double *rhs;              /* [B][W] A H p_b, then the weights */
} ami_heat;

static void ami_heat_free(ami_heat *h)
{
    am_free(h->rep), am_free(h->p), am_free(h->tri), am_free(h->bone), am_free(h->seg);
    am_free(h->comp), am_free(h->area), am_free(h->nrm), am_free(h->H), am_free(h->rhs);
}

static am_status ami_check_inputs(const am_mesh *m, const am_rig *rig, am_error *err)
{
    AMI_CHECK(err, m->vertex_count > 0, AM_E_EMPTY, "the mesh has no vertices");
    AMI_CHECK(err, m->triangle_count > 0, AM_E_EMPTY,
              "the mesh has no faces (%zu vertices): bone heat needs a surface", m->vertex_count);
    AMI_CHECK(err, m->vertex_count < INT32_MAX / 8 && m->triangle_count < INT32_MAX / 16, AM_E_LIMIT,
              "mesh too large (%zu vertices, %zu triangles)", m->vertex_count, m->triangle_count);
    for (size_t i = 0; i < m->vertex_count * 3; i++)
        AMI_CHECK(err, isfinite(m->positions[i]), AM_E_NONFINITE, "mesh vertex %zu: position is not finite", i / 3);
    for (size_t i = 0; i < m->triangle_count * 3; i++)
        AMI_CHECK(err, m->triangles[i] >= 0 && (size_t)m->triangles[i] < m->vertex_count, AM_E_VALUE,
                  "mesh triangle %zu: vertex %d out of range (%zu vertices)", i / 3, (int)m->triangles[i],
                  m->vertex_count);
    size_t deform = 0;
    for (size_t b = 0; b < rig->bone_count; b++) deform += !rig->is_helper[b];
    AMI_CHECK(err, deform > 0, AM_E_EMPTY, "the rig has no deforming bone (all are helpers)");
    /* The rig must sit on the mesh: a rig authored on the prepared mesh, bound to the raw one,
     * would heat everything from the nearest bone end and look plausible in no pose. */
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int k = 0; k < 3; k++) {
            float x = m->positions[v * 3 + (size_t)k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    size_t inside = 0, ends = 0;
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->is_helper[b]) continue;
        for (int e = 0; e < 2; e++) {
            const double *j = rig->joint_rest + (size_t)(e ? rig->tail_joint[b] : rig->head_joint[b]) * 3;
            bool in = true;
            for (int k = 0; k < 3; k++) {
                double g = 0.1 * (hi[k] - lo[k]) + 1e-9;
                in &= j[k] >= lo[k] - g && j[k] <= hi[k] + g;
            }
            inside += in;
            ends++;
        }
    }
    AMI_CHECK(err, 2 * inside >= ends, AM_E_VALUE,
              "the rig does not overlap the mesh: %zu of %zu bone ends lie within the mesh's box "
              "[%.3g %.3g %.3g] .. [%.3g %.3g %.3g] (was the rig authored on the prepared mesh? creature.json "
              "\"prep\", units)",
              inside, ends, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    return AM_OK;
}

/* Welded geometry, pieces and the cotangent system (L + A H). */
static am_status ami_heat_mesh(ami_heat *h, const am_mesh *m, double tol, am_error *err)
{
    size_t V = m->vertex_count;
    double *pv = am_alloc_array(V * 3, sizeof *pv);
    h->rep = am_alloc_array(V, sizeof *h->rep);
    if (!pv || !h->rep) {
        am_free(pv);
        return AM_FAIL(err, AM_E_NOMEM, "%zu vertices", V);
    }
    for (size_t i = 0; i < V * 3; i++) pv[i] = m->positions[i];
    am_status st = ami_weld(pv, V, tol, h->rep, &h->W, err);
    if (st != AM_OK) {
        am_free(pv);
        return st;
    }
    h->p = am_alloc_array(h->W * 3, sizeof *h->p);
    h->tri = am_alloc_array(m->triangle_count * 3, sizeof *h->tri);
    h->comp = am_alloc_array(h->W, sizeof *h->comp);
    if (!h->p || !h->tri || !h->comp) {
        am_free(pv);
        return AM_FAIL(err, AM_E_NOMEM, "%zu vertices", V);
    }
    /* a welded vertex sits at the first of its originals (within tol of the others) */
    uint8_t *seen = am_alloc_array(h->W, 1);
    if (!seen) {
        am_free(pv);
        return AM_FAIL(err, AM_E_NOMEM, "%zu vertices", V);
    }
    for (size_t v = 0; v < V; v++)
        if (!seen[h->rep[v]]) {
            seen[h->rep[v]] = 1;
            memcpy(h->p + (size_t)h->rep[v] * 3, pv + v * 3, sizeof(double) * 3);
        }
    am_free(seen);
    am_free(pv);
    h->F = 0;
    for (size_t f = 0; f < m->triangle_count; f++) {
        int32_t a = h->rep[m->triangles[f * 3]], b = h->rep[m->triangles[f * 3 + 1]], c = h->rep[m->triangles[f * 3 + 2]];
        if (a == b || b == c || a == c) continue;
        h->tri[h->F * 3] = a, h->tri[h->F * 3 + 1] = b, h->tri[h->F * 3 + 2] = c;
        h->F++;
    }
    AMI_CHECK(err, h->F > 0, AM_E_DEGENERATE, "every face of the mesh collapses when coincident vertices are welded");
    for (size_t w = 0; w < h->W; w++) h->comp[w] = (int32_t)w;
    for (size_t f = 0; f < h->F; f++) {
        ami_union(h->comp, h->tri[f * 3], h->tri[f * 3 + 1]);
        ami_union(h->comp, h->tri[f * 3], h->tri[f * 3 + 2]);
    }
    for (size_t w = 0; w < h->W; w++) h->comp[w] = ami_find(h->comp, (int32_t)w);
    return AM_OK;
}

/* The heat constant c of H = c / d^2 (Pinocchio's paper uses 1 with the standard cotangent
 * Laplacian; Blender's Laplacian is half of it, heat 2 against its mixed Voronoi areas). Chosen
 * on the dev half of bench/bind_split.txt with the visibility rules below (c = 1, 2, 4, 8: Trex
 * 0.194, 0.118, 0.054, 0.112 %; c = 2, 4, 8: Fox 0.113, 0.092, 0.096 %, Husky 0.065, 0.038,
 * 0.041 %): a stronger pull to the nearest bone, weights that change over a narrower band at
 * the joints, as artists paint them. */
#define AMI_HEAT_C 4.0

/* Nearest visible bone per welded vertex: H and the right-hand sides A H p_b. */
static am_status ami_heat_sources(ami_heat *h, am_bind_result *res, double size, am_error *err)
{
    size_t W = h->W, B = h->B;
    ami_bvh bvh = {.p = h->p, .tri = h->tri};
    am_status st = ami_bvh_build(&bvh, h->F, err);
    double *dist = am_alloc_array(B, sizeof *dist), *close = am_alloc_array(B * 3, sizeof *close);
    ami_keyed *by = am_alloc_array(B, sizeof *by);
    int32_t *stack = am_alloc_array(2 * h->F + 2, sizeof *stack);
    uint8_t *vis = am_alloc_array(B, 1), *comp_seen = am_alloc_array(W, 1);
    h->H = am_alloc_array(W, sizeof *h->H);
    h->rhs = am_alloc_array(B * W, sizeof *h->rhs);
    if (st == AM_OK && (!dist || !close || !by || !stack || !vis || !comp_seen || !h->H || !h->rhs))
        st = AM_FAIL(err, AM_E_NOMEM, "heat sources of %zu vertices x %zu bones", W, B);
    double dmin = 1e-6 * size;
    for (size_t w = 0; st == AM_OK && w < W; w++) {
        if (w % 512 == 0 && !ami_progress("bind: visibility", (double)w / (double)W)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "bind stopped at vertex %zu", w);
            break;
        }
        const double *pw = h->p + w * 3;
        for (size_t b = 0; b < B; b++) {
            dist[b] = ami_heat_distance(pw, h->nrm + w * 3, h->seg + b * 6, close + b * 3);
            by[b] = (ami_keyed){dist[b], (int32_t)b};
        }
        qsort(by, B, sizeof *by, ami_keyed_cmp);
        /* The nearest bone heats the vertex only if it is visible (Blender's rule, and Pinocchio's
         * "the nearest bone, if visible"): a vertex whose nearest bone is hidden gets no heat and
         * takes its weights from its neighbours through the Laplacian. Falling back to the nearest
         * visible bone instead (the rule before) heated a Trex's flank from a bone farther away
         * (with one-sided rays and c = 4: 0.221 % against 0.054 %). Bones within a relative 1e-4 of the nearest share (ties). */
        double best = by[0].key;
        size_t nvis = 0;
        memset(vis, 0, B);
        for (size_t i = 0; i < B; i++) {
            int32_t b = by[i].id;
            if (dist[b] > best * (1 + 1e-4) + 1e-12) break;
            if (ami_blocked(&bvh, (int32_t)w, close + (size_t)b * 3, stack)) continue;
            vis[b] = 1;
            nvis++;
        }
        if (nvis == 0) {
            res->blind_count++;
            h->H[w] = 0;
            continue;
        }
        comp_seen[h->comp[w]] = 1;
        size_t k = nvis;
        double d = fmax(best, dmin);
        h->H[w] = AMI_HEAT_C * (double)k / (d * d);
        for (size_t b = 0; b < B; b++)
            if (vis[b]) h->rhs[b * W + w] = h->area[w] * h->H[w] / (double)k;
    }
    /* A piece that sees no bone (an eye inside the head, a closed shell around a loose bone)
     * would have no heat at all and a singular system: the nearest bones heat it instead. */
    for (size_t w = 0; st == AM_OK && w < W; w++) {
        if (comp_seen[h->comp[w]]) continue;
        if (w == (size_t)h->comp[w]) res->fallback_count++;
        double best = INFINITY;
        for (size_t b = 0; b < B; b++) {
            dist[b] = ami_heat_distance(h->p + w * 3, h->nrm + w * 3, h->seg + b * 6, close + b * 3);
            best = fmin(best, dist[b]);
        }
        size_t k = 0;
        for (size_t b = 0; b < B; b++) k += dist[b] <= best * (1 + 1e-4) + 1e-12;
        double d = fmax(best, dmin);
        h->H[w] = AMI_HEAT_C * (double)k / (d * d);
        for (size_t b = 0; b < B; b++)
            if (dist[b] <= best * (1 + 1e-4) + 1e-12) h->rhs[b * W + w] = h->area[w] * h->H[w] / (double)k;
    }
    am_free(bvh.order), am_free(bvh.centre), am_free(bvh.node);
    am_free(dist), am_free(close), am_free(by), am_free(stack), am_free(vis), am_free(comp_seen);
    return st;
}

/* cot of the angle at a between b and c (0 on a degenerate corner, as it adds no stiffness). */
static double ami_cot(const double *a, const double *b, const double *c)
{
    double u[3], v[3], x[3];
    am_vec3_sub(b, a, u);
    am_vec3_sub(c, a, v);
    am_vec3_cross(u, v, x);
    double s = am_vec3_norm(x);
    return s > 1e-300 ? am_vec3_dot(u, v) / s : 0.0;
}

/* A triangle's three cotangents, bounded so that slivers cannot dominate: scaled together, never
 * clamped one by one. A triangle's cotangent form is positive semi-definite only through the
 * balance of its three cotangents (cot A cot B + cot B cot C + cot C cot A = 1); clamping the two
 * large positive ones of a sliver and not its large negative one made the Trex's Laplacian
 * indefinite (eigenvalue -51) and the factorisation fail. A common positive factor keeps it. */
#define AMI_COT_MAX 1e3
static void ami_triangle_cots(const double *p, const int32_t t[3], double cot[3])
{
    double big = 0;
    for (int c = 0; c < 3; c++) {
        cot[c] = ami_cot(p + (size_t)t[c] * 3, p + (size_t)t[(c + 1) % 3] * 3, p + (size_t)t[(c + 2) % 3] * 3);
        big = fmax(big, fabs(cot[c]));
    }
    if (big > AMI_COT_MAX)
        for (int c = 0; c < 3; c++) cot[c] *= AMI_COT_MAX / big;
}

static am_status ami_heat_areas(ami_heat *h, am_error *err)
{
    h->area = am_alloc_array(h->W, sizeof *h->area);
    h->nrm = am_alloc_array(h->W * 3, sizeof *h->nrm);
    AMI_CHECK(err, h->area && h->nrm, AM_E_NOMEM, "vertex areas");
    /* an inside-out piece (negative signed volume) would see every bone from behind: its
     * triangles are wound outwards, for the normals and the one-sided visibility test */
    double *vol = am_alloc_array(h->W, sizeof *vol);
    AMI_CHECK(err, vol, AM_E_NOMEM, "piece volumes");
    for (size_t f = 0; f < h->F; f++) {
        const double *a = h->p + (size_t)h->tri[f * 3] * 3, *b = h->p + (size_t)h->tri[f * 3 + 1] * 3,
                     *c = h->p + (size_t)h->tri[f * 3 + 2] * 3;
        double x[3];
        am_vec3_cross(b, c, x);
        vol[h->comp[h->tri[f * 3]]] += am_vec3_dot(a, x) / 6.0;
    }
    for (size_t f = 0; f < h->F; f++)
        if (vol[h->comp[h->tri[f * 3]]] < 0) {
            int32_t t = h->tri[f * 3 + 1];
            h->tri[f * 3 + 1] = h->tri[f * 3 + 2], h->tri[f * 3 + 2] = t;
        }
    am_free(vol);
    double total = 0;
    for (size_t f = 0; f < h->F; f++) {
        const int32_t *t = h->tri + f * 3;
        double u[3], v[3], x[3];
        am_vec3_sub(h->p + (size_t)t[1] * 3, h->p + (size_t)t[0] * 3, u);
        am_vec3_sub(h->p + (size_t)t[2] * 3, h->p + (size_t)t[0] * 3, v);
        am_vec3_cross(u, v, x);
        double a = 0.5 * am_vec3_norm(x);
        for (int c = 0; c < 3; c++) {
            h->area[t[c]] += a / 3.0;
            for (int k = 0; k < 3; k++) h->nrm[(size_t)t[c] * 3 + (size_t)k] += x[k];
        }
        total += a;
    }
    /* vertices in no face (or only in slivers) keep a little area, so their heat still counts */
    double floor_a = 1e-6 * total / (double)h->W;
    AMI_CHECK(err, total > 0, AM_E_DEGENERATE, "the mesh's faces have no area");
    for (size_t w = 0; w < h->W; w++) {
        h->area[w] = fmax(h->area[w], floor_a);
        am_vec3_normalize(h->nrm + w * 3, h->nrm + w * 3);
    }
    return AM_OK;
}

static am_status ami_heat_solve(ami_heat *h, am_error *err)
{
    /* per face, each of its 3 edges adds one off-diagonal and two diagonal entries */
    size_t W = h->W, nnz = h->F * 9 + W, k = 0;
    int32_t *ri = am_alloc_array(nnz, sizeof *ri), *ci = am_alloc_array(nnz, sizeof *ci);
    double *val = am_alloc_array(nnz, sizeof *val);
    if (!ri || !ci || !val) {
        am_free(ri), am_free(ci), am_free(val);
        return AM_FAIL(err, AM_E_NOMEM, "Laplacian of %zu vertices", W);
    }
    for (size_t f = 0; f < h->F; f++) {
        const int32_t *t = h->tri + f * 3;
        double cot[3];
        ami_triangle_cots(h->p, t, cot);
        for (int c = 0; c < 3; c++) {
            /* the edge (a, b) is weighted by the angle at the third corner o */
            int32_t a = t[c], b = t[(c + 1) % 3];
            double wt = 0.5 * cot[(c + 2) % 3];
            ri[k] = a > b ? a : b, ci[k] = a > b ? b : a, val[k++] = -wt;
            ri[k] = a, ci[k] = a, val[k++] = wt;
            ri[k] = b, ci[k] = b, val[k++] = wt;
        }
    }
    for (size_t w = 0; w < W; w++) ri[k] = ci[k] = (int32_t)w, val[k++] = h->area[w] * h->H[w];
    am_sparse_chol *fac = NULL;
    am_status st = am_sparse_cholesky(W, k, ri, ci, val, &fac, err);
    am_free(ri), am_free(ci), am_free(val);
    if (st != AM_OK) return st;
    /* one factorisation; the bones' right-hand sides are solved in one call, column by column */
    st = am_sparse_cholesky_solve(fac, h->B, h->rhs, err);
    am_sparse_cholesky_free(fac);
    return st;
}

/* Top-4 of a vertex's weights (the welded vertex's), renormalised; rigid: the strongest alone. */
static void ami_pick(const ami_heat *h, size_t w, const am_rig *rig, bool rigid, int32_t bi[4], float wt[4])
{
    (void)rig;
    double top[4] = {0, 0, 0, 0};
    int32_t id[4] = {-1, -1, -1, -1};
    for (size_t b = 0; b < h->B; b++) {
        double x = h->rhs[b * h->W + w];
        if (!(x > 1e-6)) continue;
        int s = 4;
        while (s > 0 && x > top[s - 1]) s--;
        if (s >= 4) continue;
        for (int j = 3; j > s; j--) top[j] = top[j - 1], id[j] = id[j - 1];
        top[s] = x, id[s] = (int32_t)b;
    }
    int n = rigid ? (id[0] >= 0) : 4;
    double sum = 0;
    for (int s = 0; s < n; s++) sum += id[s] >= 0 ? top[s] : 0;
    for (int s = 0; s < 4; s++) bi[s] = 0, wt[s] = 0.0f;
    if (!(sum > 0)) {
        /* no heat reached it (cannot happen on a solved piece, kept for safety): nearest bone */
        double best = INFINITY, q[3];
        for (size_t b = 0; b < h->B; b++) {
            double d = ami_segment_closest(h->p + w * 3, h->seg + b * 6, h->seg + b * 6 + 3, q);
            if (d < best) best = d, bi[0] = h->bone[b];
        }
        wt[0] = 1.0f;
        return;
    }
    float acc = 0.0f;
    for (int s = 0; s < n; s++) {
        if (id[s] < 0) break;
        bi[s] = h->bone[id[s]];
        wt[s] = (float)(top[s] / sum);
    }
    /* exact float sum 1 in slot order, as the glTF validator adds them */
    int last = 0;
    for (int s = 0; s < 4; s++)
        if (wt[s] > 0) last = s;
    for (int s = 0; s < last; s++) acc += wt[s];
    wt[last] = 1.0f - acc;
}

static am_status ami_bind(const am_mesh *mesh, const am_rig *rig, const am_bind_opts *opts, am_bind_result *res,
                          am_error *err)
{
    AMI_TRY(ami_check_inputs(mesh, rig, err));
    am_bind_opts o = {0};
    if (opts) o = *opts;
    if (o.weld == 0) o.weld = 1e-4;
    double size = am_body_size_f32(mesh->positions, mesh->vertex_count, NULL);
    ami_heat h = {.V = mesh->vertex_count};
    am_status st = ami_heat_mesh(&h, mesh, o.weld > 0 ? o.weld * size : 0, err);
    for (size_t b = 0; b < rig->bone_count; b++) h.B += !rig->is_helper[b];
    h.bone = am_alloc_array(h.B, sizeof *h.bone);
    h.seg = am_alloc_array(h.B * 6, sizeof *h.seg);
    if (st == AM_OK && (!h.bone || !h.seg)) st = AM_FAIL(err, AM_E_NOMEM, "bones");
    for (size_t b = 0, i = 0; st == AM_OK && b < rig->bone_count; b++) {
        if (rig->is_helper[b]) continue;
        h.bone[i] = (int32_t)b;
        memcpy(h.seg + i * 6, rig->joint_rest + (size_t)rig->head_joint[b] * 3, sizeof(double) * 3);
        memcpy(h.seg + i * 6 + 3, rig->joint_rest + (size_t)rig->tail_joint[b] * 3, sizeof(double) * 3);
        i++;
    }
    res->vertex_count = mesh->vertex_count;
    res->welded_count = h.W;
    res->deform_bones = h.B;
    if (st == AM_OK) {
        for (size_t w = 0; w < h.W; w++) res->component_count += h.comp[w] == (int32_t)w;
        st = ami_heat_areas(&h, err);
    }
    ami_stage vis = ami_stage_begin("bind: visibility");
    if (st == AM_OK) st = ami_heat_sources(&h, res, size, err);
    res->seconds_visibility = ami_stage_end(&vis);
    ami_stage sol = ami_stage_begin("bind: heat");
    if (st == AM_OK) st = ami_heat_solve(&h, err);
    res->seconds_solve = ami_stage_end(&sol);
    if (st == AM_OK) {
        res->bone_index = am_alloc_array(h.V * 4, sizeof *res->bone_index);
        res->weight = am_alloc_array(h.V * 4, sizeof *res->weight);
        if (!res->bone_index || !res->weight) st = AM_FAIL(err, AM_E_NOMEM, "weights of %zu vertices", h.V);
    }
    for (size_t v = 0; st == AM_OK && v < h.V; v++)
        ami_pick(&h, (size_t)h.rep[v], rig, (o.flags & AM_BIND_RIGID) != 0, res->bone_index + v * 4, res->weight + v * 4);
    if (st == AM_OK && res->fallback_count)
        ami_warn(AM_WARN_APPROXIMATED, "%zu of %zu mesh pieces see no bone from any vertex: heated by the nearest bones",
                 res->fallback_count, res->component_count);
    ami_heat_free(&h);
    return st;
}

am_status am_bind_weights(const am_mesh *mesh, const am_rig *rig, const am_bind_opts *opts, am_bind_result **out,
                          am_error *err)
{
    assert(mesh && rig && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_bind_result *r = am_alloc(sizeof *r);
    am_status st = r ? ami_bind(mesh, rig, opts, r, err) : AM_FAIL(err, AM_E_NOMEM, "bind result");
    if (st != AM_OK) {
        am_bind_result_free(r);
        am_scope_leave(&sc, NULL);
        return st;
    }
    am_scope_leave(&sc, &r->warnings);
    *out = r;
    return AM_OK;
}
