/* libFuzzer target for the BVH reader: parse -> rig -> motion -> BVH -> text -> free. */
#include <stddef.h>
#include <stdint.h>

#include "anymove/bvh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Cap the size: larger inputs only add frames, not new paths. */
    if (size > (64u << 10)) return 0;
    am_bvh *b = NULL, *back = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    if (am_bvh_parse((const char *)data, size, "fuzz.bvh", &b, &err) == AM_OK &&
        b->frame_count * b->joint_count <= 200000 &&
        am_rig_from_bvh(b, NULL, &rig, &err) == AM_OK &&
        am_motion_from_bvh(b, rig, NULL, &mo, &err) == AM_OK &&
        am_bvh_from_motion(rig, mo, NULL, &back, &err) == AM_OK) {
        am_buf o = {0};
        if (am_bvh_to_buf(back, &o, &err) != AM_OK) o.len = 0;
        am_buf_free(&o);
    }
    am_bvh_free(back);
    am_motion_free(mo);
    am_rig_free(rig);
    am_bvh_free(b);
    return 0;
}
