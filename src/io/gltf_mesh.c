/* The triangle meshes of a glTF document as one mesh in world axes: what `bind` skins and what
 * its benchmark compares. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/math.h"
#include "core/internal.h"

void am_gltf_meshes_free(am_gltf_meshes *m)
{
    if (!m) return;
    am_free(m->mesh.positions);
    am_free(m->mesh.triangles);
    am_free(m->parts);
    am_free(m->skin_joint);
    am_free(m->skin_weight);
    am_free(m->normals);
    am_free(m->texcoords);
    am_free(m->texcoords1);
    am_free(m->tangents);
    am_free(m->colors);
    for (size_t u = 0; u < AM_GLTF_MAX_TEXCOORDS - 2; u++) am_free(m->texcoords_extra[u]);
    am_free(m->targets);
    am_free(m);
}

static const am_gltf_accessor *ami_acc(const am_gltf *doc, int32_t i, size_t comps)
{
    if (i < 0 || (size_t)i >= doc->accessor_count) return NULL;
    const am_gltf_accessor *a = &doc->accessors[i];
    return a->components == comps && a->data ? a : NULL;
}

/* Whether every morph target of pr has the attribute (acc: its per-target accessors) as a VEC3
 * covering the primitive's n vertices. */
static bool ami_targets_have(const am_gltf *doc, const am_gltf_primitive *pr, const int32_t *acc, size_t n)
{
    for (size_t t = 0; t < pr->target_count; t++) {
        const am_gltf_accessor *a = ami_acc(doc, acc ? acc[t] : -1, 3);
        if (!a || a->count < n) return false;
    }
    return pr->target_count > 0;
}

/* Morph deltas of one attribute of a primitive into out ([targets][n][3], world axes): each
 * delta d goes by L (the matrix its base attribute goes by), over norm[v] (the length the base
 * attribute had before it was normalised, 1 for positions), so that base + delta moves as the
 * base does to first order. A target without the attribute has zero deltas. */
static void ami_gather_deltas(const am_gltf *doc, const am_gltf_primitive *pr, const int32_t *acc, size_t n,
                              const double L[9], const double *norm, float *out)
{
    for (size_t t = 0; t < pr->target_count; t++) {
        const am_gltf_accessor *a = ami_acc(doc, acc ? acc[t] : -1, 3);
        for (size_t v = 0; v < n; v++) {
            float *o = out + (t * n + v) * 3;
            if (!a || a->count < n) {
                o[0] = o[1] = o[2] = 0;
                continue;
            }
            double q[3] = {a->data[v * 3], a->data[v * 3 + 1], a->data[v * 3 + 2]}, r[3], w[3];
            am_mat3_mul_vec3(L, q, r);
            am_gltf_to_world(r, w);
            double k = norm && norm[v] > 0 ? 1.0 / norm[v] : 1.0;
            for (int c = 0; c < 3; c++) o[c] = (float)(w[c] * k);
        }
    }
}

/* A node's linear part L (for positions and tangents, which lie in the surface) and the inverse
 * transpose N (for normals, which must stay perpendicular to it under non-uniform scale). */
static void ami_node_linear_parts(const double W[16], double L[9], double N[9])
{
    const double A[9] = {W[0], W[1], W[2], W[4], W[5], W[6], W[8], W[9], W[10]};
    double Ai[9];
    memcpy(L, A, sizeof A);
    if (!am_mat3_inverse(A, Ai)) am_mat3_identity(Ai);
    am_mat3_transpose(Ai, N);
}

/* Directions (normals or tangents) turned by M into world axes and made unit; a direction that
 * vanishes becomes fallback_axis. Its length before normalising is kept in len so that morph
 * deltas of the same direction can be scaled alike. */
static void ami_turn_directions(const float *src, size_t src_stride, size_t n, const double M[9],
                                int fallback_axis, float *dst, size_t dst_stride, double *len)
{
    for (size_t v = 0; v < n; v++) {
        const float *s = src + v * src_stride;
        double q[3] = {s[0], s[1], s[2]}, r[3], w[3];
        am_mat3_mul_vec3(M, q, r);
        am_gltf_to_world(r, w);
        len[v] = am_vec3_norm(w);
        if (len[v] > 0) am_vec3_scale(w, 1.0 / len[v], w);
        else w[fallback_axis] = 1;
        for (int k = 0; k < 3; k++) dst[v * dst_stride + (size_t)k] = (float)w[k];
    }
}

am_status am_gltf_meshes_gather(const am_gltf *doc, am_gltf_meshes **out, am_error *err)
{
    assert(doc && out);
    *out = NULL;
    am_gltf_meshes *g = am_alloc(sizeof *g);
    double *local = am_alloc_array(doc->node_count ? doc->node_count * 16 : 1, sizeof *local);
    double *world = am_alloc_array(doc->node_count ? doc->node_count * 16 : 1, sizeof *world);
    am_status st = AM_OK;
    double *nlen = NULL, *tlen = NULL; /* [vertices of the largest primitive] */
    float *next_target = NULL;
    if (!g || !local || !world) goto nomem;
    size_t V = 0, F = 0, P = 0, skipped = 0, target_floats = 0, max_n = 0;
    bool all_normals = true, all_tangents = true, any_uv = false, any_uv1 = false, any_color = false;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t n = 0; n < doc->node_count; n++) {
            int32_t mi = doc->nodes[n].mesh;
            if (mi < 0 || (size_t)mi >= doc->mesh_count) continue;
            const am_gltf_mesh *me = &doc->meshes[mi];
            for (size_t p = 0; p < me->primitive_count; p++) {
                const am_gltf_primitive *pr = &me->primitives[p];
                const am_gltf_accessor *pa = ami_acc(doc, pr->position, 3);
                if (!pa || pr->mode != 4) {
                    skipped += pass == 0;
                    continue;
                }
                const am_gltf_accessor *ia = pr->indices >= 0 && (size_t)pr->indices < doc->accessor_count
                                                 ? &doc->accessors[pr->indices] : NULL;
                size_t nf = (ia ? ia->count : pa->count) / 3;
                const am_gltf_accessor *na = ami_acc(doc, pr->normal, 3), *ta = ami_acc(doc, pr->texcoord0, 2),
                                       *t1 = ami_acc(doc, pr->texcoord1, 2), *tg = ami_acc(doc, pr->tangent, 4);
                if (na && na->count < pa->count) na = NULL;
                if (ta && ta->count < pa->count) ta = NULL;
                if (t1 && t1->count < pa->count) t1 = NULL;
                if (tg && tg->count < pa->count) tg = NULL;
                const am_gltf_accessor *ca = ami_acc(doc, pr->color0, 4);
                if (!ca) ca = ami_acc(doc, pr->color0, 3);
                if (ca && ca->count < pa->count) ca = NULL;
                if (pass == 0) {
                    all_normals &= na != NULL;
                    all_tangents &= tg != NULL;
                    any_uv |= ta != NULL;
                    any_uv1 |= t1 != NULL;
                    any_color |= ca != NULL;
                    for (size_t u = 2; u < AM_GLTF_MAX_TEXCOORDS; u++) {
                        const am_gltf_accessor *tu = ami_acc(doc, pr->texcoord[u], 2);
                        if (tu && tu->count >= pa->count && u - 1 > g->texcoord_extra_count) g->texcoord_extra_count = u - 1;
                    }
                    if (pa->count > max_n) max_n = pa->count;
                    /* the counts of the first pass are checked below before any allocation */
                    if (pr->target_count && pa->count <= SIZE_MAX / 9 / pr->target_count)
                        target_floats += pr->target_count * pa->count * 9;
                    else if (pr->target_count) target_floats = SIZE_MAX;
                }
                if (pass == 1) {
                    g->parts[P] = (am_gltf_part){(int32_t)n, mi, p, V, pa->count, F, nf, pr->material,
                                                 pr->target_count, NULL, NULL, NULL};
                    const double *W = world + n * 16;
                    for (size_t v = 0; v < pa->count; v++) nlen[v] = tlen[v] = 1;
                    double L[9], N[9];
                    ami_node_linear_parts(W, L, N);
                    if (g->normals) ami_turn_directions(na->data, 3, pa->count, N, 2, g->normals + V * 3, 3, nlen);
                    if (g->tangents) {
                        /* w (the bitangent's handedness) flips when the node's linear part mirrors */
                        float *o = g->tangents + V * 4;
                        ami_turn_directions(tg->data, 4, pa->count, L, 0, o, 4, tlen);
                        double flip = am_mat3_det(L) < 0 ? -1 : 1;
                        for (size_t v = 0; v < pa->count; v++) o[v * 4 + 3] = (float)(tg->data[v * 4 + 3] * flip < 0 ? -1 : 1);
                    }
                    if (pr->target_count) {
                        am_gltf_part *gp = &g->parts[P];
                        size_t block = pr->target_count * pa->count * 3;
                        gp->target_positions = next_target, next_target += block;
                        ami_gather_deltas(doc, pr, pr->target_position, pa->count, L, NULL, gp->target_positions);
                        if (g->normals && ami_targets_have(doc, pr, pr->target_normal, pa->count)) {
                            gp->target_normals = next_target, next_target += block;
                            ami_gather_deltas(doc, pr, pr->target_normal, pa->count, N, nlen, gp->target_normals);
                        }
                        if (g->tangents && ami_targets_have(doc, pr, pr->target_tangent, pa->count)) {
                            gp->target_tangents = next_target, next_target += block;
                            ami_gather_deltas(doc, pr, pr->target_tangent, pa->count, L, tlen, gp->target_tangents);
                        }
                    }
                    if (g->colors)
                        for (size_t v = 0; v < pa->count; v++)
                            for (size_t k = 0; k < 4; k++)
                                g->colors[(V + v) * 4 + k] = !ca ? 1.0f : k < ca->components ? ca->data[v * ca->components + k] : 1.0f;
                    for (size_t u = 0; u < g->texcoord_extra_count; u++) {
                        const am_gltf_accessor *tu = ami_acc(doc, pr->texcoord[u + 2], 2);
                        if (tu && tu->count >= pa->count)
                            memcpy(g->texcoords_extra[u] + V * 2, tu->data, pa->count * 2 * sizeof(float));
                    }
                    if (g->texcoords && ta) memcpy(g->texcoords + V * 2, ta->data, pa->count * 2 * sizeof(float));
                    if (g->texcoords1 && t1) memcpy(g->texcoords1 + V * 2, t1->data, pa->count * 2 * sizeof(float));
                    for (size_t v = 0; v < pa->count; v++) {
                        double q[3] = {pa->data[v * 3], pa->data[v * 3 + 1], pa->data[v * 3 + 2]}, r[3], w[3];
                        am_mat4_mul_point(W, q, r);
                        am_gltf_to_world(r, w);
                        for (int k = 0; k < 3; k++) g->mesh.positions[(V + v) * 3 + (size_t)k] = (float)w[k];
                    }
                    for (size_t f = 0; f < nf; f++)
                        for (size_t k = 0; k < 3; k++) {
                            size_t i = f * 3 + k;
                            double vi = ia ? (ia->ints ? (double)ia->ints[i] : (double)ia->data[i]) : (double)i;
                            if (!(vi >= 0 && vi < (double)pa->count)) {
                                st = AM_FAIL(err, AM_E_VALUE, "mesh %d primitive %zu: index %g out of range (%zu vertices)",
                                             (int)mi, p, vi, pa->count);
                                goto fail;
                            }
                            g->mesh.triangles[(F + f) * 3 + k] = (int32_t)(V + (size_t)vi);
                        }
                    const am_gltf_accessor *ja = pr->joints0 >= 0 && (size_t)pr->joints0 < doc->accessor_count
                                                     ? &doc->accessors[pr->joints0] : NULL;
                    const am_gltf_accessor *wa = ami_acc(doc, pr->weights0, 4);
                    if (g->skin_joint && doc->nodes[n].skin == 0 && ja && wa && ja->components == 4 &&
                        ja->count >= pa->count && wa->count >= pa->count)
                        for (size_t i = 0; i < pa->count * 4; i++) {
                            g->skin_joint[V * 4 + i] = ja->ints ? (int32_t)ja->ints[i] : (int32_t)ja->data[i];
                            g->skin_weight[V * 4 + i] = wa->data[i];
                        }
                }
                V += pa->count;
                F += nf;
                P++;
            }
        }
        if (pass == 1) break;
        if (V == 0) {
            st = AM_FAIL(err, AM_E_EMPTY, "the model has no triangle mesh");
            goto fail;
        }
        if (V >= INT32_MAX / 4 || F >= INT32_MAX / 4 || target_floats >= SIZE_MAX / sizeof(float)) {
            st = AM_FAIL(err, AM_E_LIMIT, "mesh too large (%zu vertices, %zu morph delta values)", V, target_floats);
            goto fail;
        }
        g->mesh.vertex_count = V, g->mesh.triangle_count = F, g->part_count = P;
        g->mesh.positions = am_alloc_array(V * 3, sizeof(float));
        g->mesh.triangles = am_alloc_array(F ? F * 3 : 1, sizeof(int32_t));
        g->parts = am_alloc_array(P, sizeof *g->parts);
        if (doc->skin_count) {
            g->skin_joint = am_alloc_array(V * 4, sizeof(int32_t));
            g->skin_weight = am_alloc_array(V * 4, sizeof(float));
            if (!g->skin_joint || !g->skin_weight) goto nomem;
        }
        if (all_normals && !(g->normals = am_alloc_array(V * 3, sizeof(float)))) goto nomem;
        /* glTF ignores tangents given without normals */
        if (all_normals && all_tangents && !(g->tangents = am_alloc_array(V * 4, sizeof(float)))) goto nomem;
        /* glTF's UV sets are numbered without gaps: a set brings every lower one (zeros) */
        any_uv1 |= g->texcoord_extra_count > 0;
        any_uv |= any_uv1;
        if (any_uv && !(g->texcoords = am_alloc_array(V * 2, sizeof(float)))) goto nomem;
        if (g->texcoords) memset(g->texcoords, 0, V * 2 * sizeof(float));
        if (any_uv1 && !(g->texcoords1 = am_alloc_array(V * 2, sizeof(float)))) goto nomem;
        if (g->texcoords1) memset(g->texcoords1, 0, V * 2 * sizeof(float));
        if (!g->mesh.positions || !g->mesh.triangles || !g->parts) goto nomem;
        if (any_color && !(g->colors = am_alloc_array(V * 4, sizeof(float)))) goto nomem;
        for (size_t u = 0; u < g->texcoord_extra_count; u++)
            if (!(g->texcoords_extra[u] = am_alloc_array(V * 2, sizeof(float)))) goto nomem;
        if (target_floats && !(g->targets = am_alloc_array(target_floats, sizeof(float)))) goto nomem;
        next_target = g->targets;
        nlen = am_alloc_array(max_n, sizeof *nlen);
        tlen = am_alloc_array(max_n, sizeof *tlen);
        if (!nlen || !tlen) goto nomem;
        am_gltf_sample_local(doc, -1, 0.0, local);
        am_gltf_world_from_local(doc, local, world);
        V = F = P = 0;
    }
    if (skipped)
        ami_warn(AM_WARN_UNSUPPORTED, "%zu mesh primitives are not indexed triangle lists (points, lines, strips): left out",
                 skipped);
    am_free(local), am_free(world), am_free(nlen), am_free(tlen);
    *out = g;
    return AM_OK;
nomem:
    st = AM_FAIL(err, AM_E_NOMEM, "gathering the meshes");
fail:
    am_free(local), am_free(world), am_free(nlen), am_free(tlen);
    am_gltf_meshes_free(g);
    return st;
}
