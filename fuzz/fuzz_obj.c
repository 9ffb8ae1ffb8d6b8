/* libFuzzer target for the OBJ reader: parse as a model (v/vt/vn corners split into vertices,
 * usemtl groups; no folder, so no .mtl is read) -> check the model's invariants -> prep
 * transform -> bind on the positions against a one-bone rig spanning the mesh -> spread the
 * weights to every vertex -> free. The plain reader (positions only) runs on the same input
 * and must agree on positions and faces. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/bind.h"
#include "anymove/gltf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The model keeps what its header promises; anything else is a bug worth a crash report. */
static void check_model(const am_obj_model *m, const am_mesh *plain)
{
    size_t V = m->mesh.vertex_count, P = m->position_count;
    if (P > V || !plain || plain->vertex_count != P || plain->triangle_count != m->mesh.triangle_count) abort();
    for (size_t i = 0; i < V; i++) {
        int32_t p = m->position_index[i];
        if (p < 0 || (size_t)p >= P || (i < P && (size_t)p != i)) abort();
        if (memcmp(m->mesh.positions + i * 3, plain->positions + (size_t)p * 3, 3 * sizeof(float)) != 0) abort();
        if (m->normals) {
            const float *n = m->normals + i * 3;
            if (!(fabs(sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]) - 1) < 1e-4)) abort();
        }
    }
    for (size_t k = 0; k < m->mesh.triangle_count * 3; k++) {
        int32_t v = m->mesh.triangles[k];
        if (v < 0 || (size_t)v >= V || m->position_triangles[k] != m->position_index[v]) abort();
    }
    if (m->look || m->part_count || m->material_count) abort(); /* no folder: no materials */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (64u << 10)) return 0;
    am_obj_model *m = NULL;
    am_mesh *plain = NULL;
    am_error err = {0};
    am_status s = am_obj_model_read_mem((const char *)data, size, "fuzz.obj", NULL, NULL, &m, &err);
    am_status s2 = am_obj_read_mem((const char *)data, size, "fuzz.obj", NULL, &plain, &err);
    if ((s == AM_OK) != (s2 == AM_OK)) abort();
    if (s == AM_OK) check_model(m, plain);
    if (s == AM_OK && m->mesh.vertex_count <= 4096) {
        am_prep prep = {.length_m = 1.0, .rotz_deg = 90, .axis = 1};
        double M[16];
        am_mesh on_positions = {m->position_count, m->mesh.triangle_count, m->mesh.positions, m->position_triangles};
        if (am_prep_transform(&m->mesh, &prep, M, &err) == AM_OK) {
            am_mesh_transform(&m->mesh, M);
            static const char *const jn[] = {"a", "b"}, *const bn[] = {"bone"}, *const bh[] = {"a"},
                                     *const bt[] = {"b"}, *const bp[] = {NULL};
            double jp[6] = {0, -0.4, 0.1, 0, 0.4, 0.1};
            am_rig_desc d = {.joint_count = 2, .joint_names = jn, .joint_pos = jp, .bone_count = 1,
                             .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
            am_rig *rig = NULL;
            am_bind_result *r = NULL;
            if (am_rig_build(&d, &rig, &err) == AM_OK && am_bind_weights(&on_positions, rig, NULL, &r, &err) == AM_OK) {
                float *w = malloc(m->mesh.vertex_count * 4 * sizeof *w + 1);
                if (w) am_obj_model_spread(m, r->weight, 4 * sizeof *w, w);
                free(w);
                am_bind_result_free(r);
            }
            am_rig_free(rig);
        }
    }
    am_obj_model_free(m);
    am_mesh_free(plain);
    return 0;
}
