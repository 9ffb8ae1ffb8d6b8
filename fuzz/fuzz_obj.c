/* libFuzzer target for the OBJ reader: parse -> prep transform -> bind against a one-bone rig
 * spanning the mesh -> free. */
#include <stddef.h>
#include <stdint.h>

#include "anymove/bind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (64u << 10)) return 0;
    am_mesh *m = NULL;
    am_error err = {0};
    if (am_obj_read_mem((const char *)data, size, "fuzz.obj", NULL, &m, &err) == AM_OK && m->vertex_count <= 4096) {
        am_prep prep = {.length_m = 1.0, .rotz_deg = 90, .axis = 1};
        double M[16];
        if (am_prep_transform(m, &prep, M, &err) == AM_OK) {
            am_mesh_transform(m, M);
            static const char *const jn[] = {"a", "b"}, *const bn[] = {"bone"}, *const bh[] = {"a"},
                                     *const bt[] = {"b"}, *const bp[] = {NULL};
            double jp[6] = {0, -0.4, 0.1, 0, 0.4, 0.1};
            am_rig_desc d = {.joint_count = 2, .joint_names = jn, .joint_pos = jp, .bone_count = 1,
                             .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
            am_rig *rig = NULL;
            am_bind_result *r = NULL;
            if (am_rig_build(&d, &rig, &err) == AM_OK && am_bind_weights(m, rig, NULL, &r, &err) == AM_OK)
                am_bind_result_free(r);
            am_rig_free(rig);
        }
    }
    am_mesh_free(m);
    return 0;
}
