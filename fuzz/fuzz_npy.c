/* libFuzzer target: one .npy buffer -> parse -> serialize -> parse again -> compare -> free.
 * A parsed array must always serialize, and the copy must read back identical: the writer
 * and the reader agree on every input the reader accepts. */
#include "anymove/io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ami_same(const am_array *a, const am_array *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->count != b->count) return false;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return false;
    if (a->dtype == AM_DTYPE_STR) {
        for (size_t i = 0; i < a->count; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return false;
        return true;
    }
    return a->count == 0 || memcmp(a->data, b->data, a->count * am_dtype_size(a->dtype)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Caps keep the fuzzer's memory bounded: inputs up to 1 MiB, arrays up to 16 MiB. */
    if (size > ((size_t)1 << 20)) return 0;
    am_npz_opts opts = {.max_bytes = (uint64_t)16 << 20};
    am_array a;
    if (am_npy_parse(data, size, &opts, &a, NULL) != AM_OK) return 0;
    if (a.dtype != AM_DTYPE_STR && a.count > 0) {
        double *v = malloc(a.count * sizeof *v);
        if (v && am_array_to_f64(&a, v, NULL) != AM_OK) abort();
        free(v);
    }
    am_buf b = {0};
    if (am_npy_serialize(&a, &b, NULL) != AM_OK) abort();
    am_array back;
    if (am_npy_parse(b.data, b.len, &opts, &back, NULL) != AM_OK) abort();
    if (!ami_same(&a, &back)) abort();
    am_array_clear(&back);
    am_buf_free(&b);
    am_array_clear(&a);
    return 0;
}
