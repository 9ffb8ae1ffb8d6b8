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

#endif
