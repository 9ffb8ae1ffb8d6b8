/* Internal to src/io: shape checks shared by the stage-file readers (det.npz, joints.npz, ...),
 * whose errors name the array and its shape because external tools write these files. */
#ifndef AMI_IO_NPZ_CHECK_INTERNAL_H
#define AMI_IO_NPZ_CHECK_INTERNAL_H

#include "anymove/io.h"

/* "[10,5,2]" (truncated to fit). */
void ami_shape_str(const am_array *a, char *buf, size_t size);
/* The array has ndim dimensions equal to d[0..ndim). */
bool ami_shape_is_n(const am_array *a, int ndim, const size_t *d);
/* The named float array (float32/float64), or AM_E_SCHEMA (missing) / AM_E_DTYPE. */
AM_NODISCARD am_status ami_npz_need_float(const char *path, const am_npz *z, const char *name,
                                          const am_array **out, am_error *err);
/* A string array of shape [n] (n = 0: any length, written back), copied into *out. */
AM_NODISCARD am_status ami_npz_strings(const char *path, const am_npz *z, const char *name, size_t *n,
                                       char ***out, am_error *err);
/* A number scalar (or one-element array) in [lo, hi]. */
AM_NODISCARD am_status ami_npz_scalar_in(const char *path, const am_npz *z, const char *name, double lo,
                                         double hi, double *out, am_error *err);

#endif
