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
 * array and its shape because external tools write these files ---- */
/* The array has ndim dimensions equal to d[0..ndim). */
bool ami_shape_is_n(const am_array *a, int ndim, const size_t *d);
/* The named float array (float32/float64), or AM_E_SCHEMA (missing) / AM_E_DTYPE. */
AM_NODISCARD am_status ami_npz_need_float(const char *path, const am_npz *z, const char *name,
                                          const am_array **out, am_error *err);
/* A string array of shape [*n] (*n = 0: any length, written back), copied into *out; names
 * must be non-empty (AM_E_VALUE) and unique (AM_E_DUPLICATE). */
AM_NODISCARD am_status ami_npz_strings(const char *path, const am_npz *z, const char *name,
                                       size_t *n, char ***out, am_error *err);
/* A number scalar (or one-element array) in [lo, hi] (AM_E_VALUE, NaN included). */
AM_NODISCARD am_status ami_npz_scalar_in(const char *path, const am_npz *z, const char *name,
                                         double lo, double hi, double *out, am_error *err);

#endif
