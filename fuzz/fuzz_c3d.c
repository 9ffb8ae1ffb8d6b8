/* libFuzzer target for the C3D reader (header, parameters, integer and float frames). */
#include <stddef.h>
#include <stdint.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    am_joints *j = NULL;
    am_error err = {0};
    am_status s1 = am_import_3d_mem(data, size, "fuzz.c3d", AM_TRACK_C3D, NULL, &j, &err);
    (void)s1;
    am_joints_free(j);
    return 0;
}
