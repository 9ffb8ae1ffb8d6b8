/* libFuzzer target: one .npz buffer -> read -> write (stored) to a temporary file -> read back
 * and compare -> run the typed tracks/det loaders on the copy -> free. */
#include "anymove/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Caps keep the fuzzer's memory bounded: archives up to 4 MiB, arrays up to 16 MiB. */
    if (size > ((size_t)4 << 20)) return 0;
    am_npz_opts opts = {.max_bytes = (uint64_t)16 << 20};
    am_npz *z = NULL;
    if (am_npz_read_mem(data, size, "fuzz.npz", &opts, &z, NULL) != AM_OK) return 0;
    for (size_t i = 0; i < z->count; i++) {
        const am_array *a = &z->arrays[i];
        double s;
        if (a->dtype != AM_DTYPE_STR && a->count == 1 && am_array_scalar(a, &s, NULL) != AM_OK)
            abort();
    }
    char path[128];
    snprintf(path, sizeof path, "/tmp/anymove_fuzz_npz_%ld.npz", (long)getpid());
    /* Writing may refuse odd member names (too long for us, not UTF-8 for libzip). */
    if (am_npz_write(path, z->arrays, z->count, false, NULL) == AM_OK) {
        am_npz *back = NULL;
        if (am_npz_load(path, &opts, &back, NULL) != AM_OK) abort();
        if (back->count != z->count) abort();
        am_npz_free(back);
        am_tracks *tr = NULL;
        if (am_tracks_load(path, &tr, NULL) == AM_OK && (!tr->points || !tr->visible)) abort();
        am_tracks_free(tr);
        am_det *det = NULL;
        if (am_det_load(path, &det, NULL) == AM_OK && !det->names) abort();
        am_det_free(det);
        remove(path);
    }
    am_npz_free(z);
    return 0;
}
