/* libFuzzer target for the DeepLabCut CSV reader: parse -> rename -> free. */
#include <stddef.h>
#include <stdint.h>

#include "anymove/mocap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256u << 10)) return 0;
    am_mdet *d = NULL;
    am_error err = {0};
    am_import_opts o = {.fps = 30};
    if (am_import_2d_mem(data, size, "fuzz.csv", AM_TRACK_DLC_CSV, &o, &d, &err) == AM_OK) {
        char *from[1] = {d->names[0]}, *to[1] = {NULL};
        am_name_map m = {1, from, to};
        am_status s = d->joint_count > 1 ? am_mdet_rename(d, &m, &err) : AM_OK;
        (void)s;
    }
    am_mdet_free(d);
    return 0;
}
