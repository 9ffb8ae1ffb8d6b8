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
    am_free(m);
}

static const am_gltf_accessor *ami_acc(const am_gltf *doc, int32_t i, size_t comps)
{
    if (i < 0 || (size_t)i >= doc->accessor_count) return NULL;
    const am_gltf_accessor *a = &doc->accessors[i];
    return a->components == comps && a->data ? a : NULL;
}

am_status am_gltf_meshes_gather(const am_gltf *doc, am_gltf_meshes **out, am_error *err)
{
    assert(doc && out);
    *out = NULL;
    am_gltf_meshes *g = am_alloc(sizeof *g);
    double *local = am_alloc_array(doc->node_count ? doc->node_count * 16 : 1, sizeof *local);
    double *world = am_alloc_array(doc->node_count ? doc->node_count * 16 : 1, sizeof *world);
    am_status st = AM_OK;
    if (!g || !local || !world) goto nomem;
    size_t V = 0, F = 0, P = 0, skipped = 0;
    bool all_normals = true, all_tangents = true, any_uv = false, any_uv1 = false;
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
                if (pass == 0) {
                    all_normals &= na != NULL;
                    all_tangents &= tg != NULL;
                    any_uv |= ta != NULL;
                    any_uv1 |= t1 != NULL;
                }
                if (pass == 1) {
                    g->parts[P] = (am_gltf_part){(int32_t)n, mi, p, V, pa->count, F, nf, pr->material};
                    const double *W = world + n * 16;
                    if (g->normals) {
                        /* normals go by the inverse transpose of the node's linear part */
                        double A[9] = {W[0], W[1], W[2], W[4], W[5], W[6], W[8], W[9], W[10]}, Ai[9], N[9];
                        if (!am_mat3_inverse(A, Ai)) am_mat3_identity(Ai);
                        am_mat3_transpose(Ai, N);
                        for (size_t v = 0; v < pa->count; v++) {
                            double q[3] = {na->data[v * 3], na->data[v * 3 + 1], na->data[v * 3 + 2]}, r[3], w[3];
                            am_mat3_mul_vec3(N, q, r);
                            am_gltf_to_world(r, w);
                            double len = am_vec3_norm(w);
                            if (len > 0) am_vec3_scale(w, 1.0 / len, w);
                            else w[2] = 1;
                            for (int k = 0; k < 3; k++) g->normals[(V + v) * 3 + (size_t)k] = (float)w[k];
                        }
                    }
                    if (g->tangents) {
                        /* a tangent lies in the surface: it goes by the node's linear part itself;
                         * w (the bitangent's handedness) flips when that part mirrors */
                        double A[9] = {W[0], W[1], W[2], W[4], W[5], W[6], W[8], W[9], W[10]};
                        double flip = am_mat3_det(A) < 0 ? -1 : 1;
                        for (size_t v = 0; v < pa->count; v++) {
                            const float *t = tg->data + v * 4;
                            double q[3] = {t[0], t[1], t[2]}, r[3], w[3];
                            am_mat3_mul_vec3(A, q, r);
                            am_gltf_to_world(r, w);
                            double len = am_vec3_norm(w);
                            if (len > 0) am_vec3_scale(w, 1.0 / len, w);
                            else w[0] = 1;
                            float *o = g->tangents + (V + v) * 4;
                            for (int k = 0; k < 3; k++) o[k] = (float)w[k];
                            o[3] = (float)(t[3] * flip < 0 ? -1 : 1);
                        }
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
        AMI_CHECK(err, V > 0, AM_E_EMPTY, "the model has no triangle mesh");
        AMI_CHECK(err, V < INT32_MAX / 4 && F < INT32_MAX / 4, AM_E_LIMIT, "mesh too large (%zu vertices)", V);
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
        if (any_uv && !(g->texcoords = am_alloc_array(V * 2, sizeof(float)))) goto nomem;
        if (g->texcoords) memset(g->texcoords, 0, V * 2 * sizeof(float));
        if (any_uv1 && !(g->texcoords1 = am_alloc_array(V * 2, sizeof(float)))) goto nomem;
        if (g->texcoords1) memset(g->texcoords1, 0, V * 2 * sizeof(float));
        if (!g->mesh.positions || !g->mesh.triangles || !g->parts) goto nomem;
        am_gltf_sample_local(doc, -1, 0.0, local);
        am_gltf_world_from_local(doc, local, world);
        V = F = P = 0;
    }
    if (skipped)
        ami_warn(AM_WARN_UNSUPPORTED, "%zu mesh primitives are not indexed triangle lists (points, lines, strips): left out",
                 skipped);
    am_free(local), am_free(world);
    *out = g;
    return AM_OK;
nomem:
    st = AM_FAIL(err, AM_E_NOMEM, "gathering the meshes");
fail:
    am_free(local), am_free(world);
    am_gltf_meshes_free(g);
    return st;
}
