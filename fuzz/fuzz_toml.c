/* libFuzzer target for the calibration reader (TOML): parse -> write -> parse again -> the two
 * agree camera for camera. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/camera.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256u << 10)) return 0;
    am_calib *cal = NULL, *back = NULL;
    am_error err = {0};
    if (am_calib_parse((const char *)data, size, "fuzz.toml", NULL, &cal, &err) == AM_OK) {
        am_calib_check(cal);
        am_buf b = {0};
        if (am_calib_to_toml(cal, &b, &err) == AM_OK &&
            am_calib_parse(b.data, b.len, "fuzz-back.toml", NULL, &back, &err) == AM_OK) {
            if (back->camera_count != cal->camera_count) abort();
            for (size_t c = 0; c < cal->camera_count; c++)
                if (memcmp(back->cameras[c].K, cal->cameras[c].K, sizeof cal->cameras[c].K) != 0 ||
                    memcmp(back->cameras[c].t, cal->cameras[c].t, sizeof cal->cameras[c].t) != 0)
                    abort();
        }
        am_buf_free(&b);
    }
    am_calib_free(back);
    am_calib_free(cal);
    return 0;
}
