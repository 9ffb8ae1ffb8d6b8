/* Internal to src/io: npy parsing that takes over the caller's buffer (npz.c). */
#ifndef AM_IO_NPY_INTERNAL_H
#define AM_IO_NPY_INTERNAL_H

#include "anymove/io.h"

/* am_npy_parse on *buf (len bytes, allocated with am_alloc). When the data is C-ordered and in
 * host byte order the buffer itself becomes arr->data (moved down over the header and trimmed)
 * and *buf is set to NULL; otherwise the data is copied and *buf is left to the caller. */
AM_NODISCARD am_status ami_npy_parse_adopt(unsigned char **buf, size_t len, const am_npz_opts *opts,
                                           am_array *arr, am_error *err);

/* Bytes the header occupies (magic through padding), from the first 10 or 12 bytes of len;
 * AM_E_TRUNCATED when fewer, AM_E_FORMAT/UNSUPPORTED/LIMIT for a bad magic, version or length. */
AM_NODISCARD am_status ami_npy_header_bytes(const unsigned char *b, size_t len, size_t *need,
                                            am_error *err);

/* What an .npy header promises, parsed and budgeted without touching the data. */
typedef struct ami_npy_head {
    am_dtype dtype;
    int ndim;
    size_t shape[AM_MAX_DIMS];
    size_t count, str_chars, item;   /* item: bytes per element in the file */
    bool fortran, big;
    bool in_place;                   /* numbers already in C order and host byte order: the
                                        buffer holding them can become the array */
    uint64_t data_ofs, data_bytes;   /* the data: where it starts and how long it is */
    uint64_t cost;                   /* bytes decoding allocates besides the input (numbers:
                                        data_bytes; strings: their real per-element cost) */
    char descr[40];
} ami_npy_head;

/* Parse the header in b[0..len) (len >= ami_npy_header_bytes; the data need not follow) and
 * check its cost against opts->max_bytes (default 4 GiB) and the scope's budget: AM_E_LIMIT. */
AM_NODISCARD am_status ami_npy_head_parse(const unsigned char *b, size_t len,
                                          const am_npz_opts *opts, ami_npy_head *head,
                                          am_error *err);

/* A typed loader's look at an archive before any member is inflated: the arrays have their
 * names, dtypes and shapes, no data. A status other than AM_OK stops the load. */
typedef am_status (*ami_npz_check_fn)(const am_npz *headers, const char *source, am_error *err);
/* am_npz_load with such a check between the headers and the data. */
AM_NODISCARD am_status ami_npz_load_checked(const char *path, const am_npz_opts *opts,
                                            ami_npz_check_fn check, am_npz **out,
                                            am_error *err);

#endif
