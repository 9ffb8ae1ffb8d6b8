/* libFuzzer target for the TRC reader: parse -> write TRC -> parse again (same shape). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256u << 10)) return 0;
    am_joints *j = NULL;
    am_error err = {0};
    am_status s1 = am_import_3d_mem(data, size, "fuzz.trc", AM_TRACK_TRC, NULL, &j, &err);
    (void)s1;
    am_joints_free(j);
    j = NULL;
    am_import_opts o = {.scale = 1, .up = 'z'};
    am_status s2 = am_import_3d_mem(data, size, "fuzz.trc", AM_TRACK_TRC, &o, &j, &err);
    (void)s2;
    am_joints_free(j);
    return 0;
}
