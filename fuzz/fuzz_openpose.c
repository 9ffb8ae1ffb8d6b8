/* libFuzzer target for one OpenPose frame (JSON): parse -> free, both person rules. */
#include <stddef.h>
#include <stdint.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256u << 10)) return 0;
    for (long person = 0; person < 3; person += 2) {
        am_mdet *d = NULL;
        am_error err = {0};
        am_import_opts o = {.person = person};
        am_status s1 = am_import_2d_mem(data, size, "fuzz.json", AM_TRACK_OPENPOSE, &o, &d, &err);
        (void)s1;
        am_mdet_free(d);
    }
    return 0;
}
