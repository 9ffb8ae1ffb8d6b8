/* Mesh preparation (creature.json "prep") and limb paint (creature.json "paint"). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/bind.h"
#include "anymove/math.h"
#include "core/internal.h"

am_status am_prep_transform(const am_mesh *mesh, const am_prep *prep, double M[16], am_error *err)
{
    assert(mesh && prep && M);
    AMI_CHECK(err, mesh->vertex_count > 0, AM_E_EMPTY, "the mesh has no vertices");
    AMI_CHECK(err, prep->axis >= 0 && prep->axis <= 2, AM_E_VALUE, "prep axis %d", prep->axis);
    double R[9];
    am_mat3_rot_z(AM_RAD(prep->rotz_deg), R);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        double p[3] = {mesh->positions[v * 3], mesh->positions[v * 3 + 1], mesh->positions[v * 3 + 2]}, q[3];
        am_mat3_mul_vec3(R, p, q);
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], q[k]), hi[k] = fmax(hi[k], q[k]);
    }
    for (int k = 0; k < 3; k++)
        AMI_CHECK(err, isfinite(lo[k]) && isfinite(hi[k]), AM_E_NONFINITE, "the mesh has non-finite vertices");
    double ext = hi[prep->axis] - lo[prep->axis], s = 1.0;
    if (prep->length_m > 0) {
        AMI_CHECK(err, ext > 0, AM_E_DEGENERATE, "the mesh has no extent along %c: it cannot be scaled to %g m",
                  'x' + prep->axis, prep->length_m);
        s = prep->length_m / ext;
    }
    double t[3] = {-s * 0.5 * (lo[0] + hi[0]), -s * 0.5 * (lo[1] + hi[1]), -s * lo[2]};
    am_mat4_identity(M);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) M[r * 4 + c] = s * R[r * 3 + c];
        M[r * 4 + 3] = t[r];
    }
    return AM_OK;
}

void am_mesh_transform(am_mesh *mesh, const double M[16])
{
    assert(mesh && M);
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        double p[3] = {mesh->positions[v * 3], mesh->positions[v * 3 + 1], mesh->positions[v * 3 + 2]}, q[3];
        am_mat4_mul_point(M, p, q);
        for (int k = 0; k < 3; k++) mesh->positions[v * 3 + (size_t)k] = (float)q[k];
    }
}

am_status am_bind_paint(const am_rig *rig, const am_creature *creature, const am_bind_result *b, float *colors,
                        am_error *err)
{
    assert(rig && creature && b && colors);
    int32_t *group = am_alloc_array(rig->bone_count, sizeof *group);
    AMI_CHECK(err, group, AM_E_NOMEM, "paint");
    for (size_t i = 0; i < rig->bone_count; i++) group[i] = -1;
    for (size_t g = 0; g < creature->paint_count; g++)
        for (size_t k = 0; k < creature->paint[g].bone_count; k++) {
            int bone = am_rig_find_bone(rig, creature->paint[g].bones[k]);
            if (bone < 0) {
                am_free(group);
                return AM_FAIL(err, AM_E_NAME, "paint group '%s': '%s' is no bone of the rig", creature->paint[g].name,
                               creature->paint[g].bones[k]);
            }
            group[bone] = (int32_t)g;
        }
    for (size_t v = 0; v < b->vertex_count; v++) {
        float c[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) {
            float w = b->weight[v * 4 + (size_t)k];
            int32_t g = group[b->bone_index[v * 4 + (size_t)k]];
            for (int i = 0; i < 4; i++) c[i] += w * (g >= 0 ? creature->paint[g].color[i] : 1.0f);
        }
        for (int i = 0; i < 4; i++) colors[v * 4 + (size_t)i] = c[i] < 0 ? 0 : c[i] > 1 ? 1 : c[i];
    }
    am_free(group);
    return AM_OK;
}
