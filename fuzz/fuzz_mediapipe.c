/* libFuzzer target for MediaPipe landmarks (protobuf text, JSON, CSV by their first bytes). */
#include <stddef.h>
#include <stdint.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256u << 10)) return 0;
    am_mdet *d = NULL;
    am_error err = {0};
    am_import_opts o = {.width = 640, .height = 480, .fps = 30};
    am_status s1 = am_import_2d_mem(data, size, "fuzz.pbtxt", AM_TRACK_MEDIAPIPE, &o, &d, &err);
    (void)s1;
    am_mdet_free(d);
    return 0;
}
