/* Internal to src/io: npy parsing that takes over the caller's buffer (npz.c), and what the
 * shape-checked stage files (tracks, det, joints) share. */
#ifndef AM_IO_NPY_INTERNAL_H
#define AM_IO_NPY_INTERNAL_H

#include "anymove/io.h"

/* am_npy_parse on *buf (len bytes, allocated with am_alloc). When the data is C-ordered and in
 * host byte order the buffer itself becomes arr->data (moved down over the header and trimmed)
 * and *buf is set to NULL; otherwise the data is copied and *buf is left to the caller. */
AM_NODISCARD am_status ami_npy_parse_adopt(unsigned char **buf, size_t len, const am_npz_opts *opts,
                                           am_array *arr, am_error *err);

/* An array's shape as "[2,3,4]" for messages (truncated to size). */
void ami_npy_shape_str(const am_array *a, char *buf, size_t size);

/* ---- checks the stage-file readers share (npz_check.c); their errors name the file, the
 * array and its shape because external tools write these files. The shape test and the
 * ami_npz_need_* checks read only what the headers say, so a typed loader's
 * ami_npz_load_checked check can run them before any member is inflated ---- */
/* The array has ndim dimensions equal to d[0..ndim). */
bool ami_shape_is_n(const am_array *a, int ndim, const size_t *d);
/* The named float array (float32/float64), or AM_E_SCHEMA (missing) / AM_E_DTYPE. */
AM_NODISCARD am_status ami_npz_need_float(const char *path, const am_npz *z, const char *name,
                                          const am_array **out, am_error *err);
/* The named float array that gives a stage file its sizes: ndim dimensions, the last of them
 * `last`, no other 0. AM_E_SHAPE "name has shape [..], expected want"; AM_E_EMPTY "name has
 * shape [..]: no dims[k]" for the first leading dimension k that is 0 (dims: "frames", ...). */
AM_NODISCARD am_status ami_npz_need_lead(const char *path, const am_npz *z, const char *name, int ndim,
                                         size_t last, const char *want, const char *const *dims,
                                         const am_array **out, am_error *err);
/* The named string array, of shape [n] (n = 0: any length): AM_E_SCHEMA, AM_E_DTYPE, AM_E_SHAPE. */
AM_NODISCARD am_status ami_npz_need_strings(const char *path, const am_npz *z, const char *name,
                                            size_t n, const am_array **out, am_error *err);
/* The named number scalar (or one-element array): AM_E_SCHEMA, AM_E_DTYPE, AM_E_SHAPE. */
AM_NODISCARD am_status ami_npz_need_scalar(const char *path, const am_npz *z, const char *name,
                                           const am_array **out, am_error *err);
/* The two below need the data; they run their need_* check again first. */
/* A string array of shape [*n] (*n = 0: any length, written back), copied into *out; names
 * must be non-empty (AM_E_VALUE) and unique (AM_E_DUPLICATE, found by hash). */
AM_NODISCARD am_status ami_npz_strings(const char *path, const am_npz *z, const char *name,
                                       size_t *n, char ***out, am_error *err);
/* A number scalar (or one-element array) in [lo, hi] (AM_E_VALUE, NaN included). */
AM_NODISCARD am_status ami_npz_scalar_in(const char *path, const am_npz *z, const char *name,
                                         double lo, double hi, double *out, am_error *err);

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
/* am_npz_load and am_npz_read_mem with such a check between the headers and the data. */
AM_NODISCARD am_status ami_npz_load_checked(const char *path, const am_npz_opts *opts,
                                            ami_npz_check_fn check, am_npz **out,
                                            am_error *err);
AM_NODISCARD am_status ami_npz_read_mem_checked(const void *buf, size_t len, const char *source,
                                                const am_npz_opts *opts, ami_npz_check_fn check,
                                                am_npz **out, am_error *err);

/* What one am_joints or am_mdet may hold (am_joints_create, am_mdet_create): 2 GiB, or the
 * calling scope's max_bytes when smaller; more is AM_E_LIMIT before anything is allocated. An
 * hour of 100 markers at 240 Hz is 2.1 GB of joints. */
#define AMI_POINTS_MAX_BYTES ((uint64_t)2 << 30)
/* Bytes of `elements` values of `size` bytes plus `names` names (a pointer and an allocation
 * each), saturating. */
uint64_t ami_points_bytes(double elements, double size, double names);

/* The two-view det.npz (SPEC 4.2, det.c), for the N-camera reader that also takes it (mdet.c):
 * its ami_npz_load_checked check, and the values once that passed (errors name path). */
AM_NODISCARD am_status ami_det_check(const am_npz *headers, const char *path, am_error *err);
/* det.c's value checks, shared by am_det_load and am_det_validate. */
AM_NODISCARD am_status ami_det_values(const am_det *det, const char *path, am_error *err);
AM_NODISCARD am_status ami_det_from_npz(const char *path, const am_npz *z, am_det **out,
                                        am_error *err);

#endif
