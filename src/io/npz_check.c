/* Checks the stage-file readers share (det.npz, tracks.npz, joints.npz, N-camera det.npz):
 * npy_internal.h. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "io/npy_internal.h"

bool ami_shape_is_n(const am_array *a, int ndim, const size_t *d)
{
    if (a->ndim != ndim) return false;
    for (int k = 0; k < ndim; k++)
        if (a->shape[k] != d[k]) return false;
    return true;
}

am_status ami_npz_need_float(const char *path, const am_npz *z, const char *name, const am_array **out,
                             am_error *err)
{
    const am_array *a = am_npz_find(z, name);
    if (!a) return AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "missing array '%s'", name);
    if (a->dtype != AM_DTYPE_F32 && a->dtype != AM_DTYPE_F64)
        return AM_FAIL_AT(err, AM_E_DTYPE, path, 0, 0, "%s has dtype %s, expected float32 or float64", name,
                          am_dtype_name(a->dtype));
    *out = a;
    return AM_OK;
}

am_status ami_npz_need_lead(const char *path, const am_npz *z, const char *name, int ndim, size_t last,
                            const char *want, const char *const *dims, const am_array **out, am_error *err)
{
    assert(ndim >= 1 && ndim <= AM_MAX_DIMS && want && dims);
    char sh[128];
    const am_array *a = NULL;
    AMI_TRY(ami_npz_need_float(path, z, name, &a, err));
    if (a->ndim != ndim || a->shape[ndim - 1] != last) {
        ami_npy_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "%s has shape %s, expected %s", name, sh, want);
    }
    for (int k = 0; k + 1 < ndim; k++)
        if (a->shape[k] == 0) {
            ami_npy_shape_str(a, sh, sizeof sh);
            return AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "%s has shape %s: no %s", name, sh, dims[k]);
        }
    *out = a;
    return AM_OK;
}

am_status ami_npz_need_strings(const char *path, const am_npz *z, const char *name, size_t n,
                               const am_array **out, am_error *err)
{
    const am_array *a = am_npz_find(z, name);
    if (!a) return AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "missing array '%s'", name);
    if (a->dtype != AM_DTYPE_STR)
        return AM_FAIL_AT(err, AM_E_DTYPE, path, 0, 0, "%s has dtype %s, expected strings", name,
                          am_dtype_name(a->dtype));
    if (a->ndim != 1 || (n && a->shape[0] != n)) {
        char sh[96];
        ami_npy_shape_str(a, sh, sizeof sh);
        if (n) return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "%s has shape %s, expected [%zu]", name, sh, n);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "%s has shape %s, expected one dimension", name, sh);
    }
    *out = a;
    return AM_OK;
}

am_status ami_npz_strings(const char *path, const am_npz *z, const char *name, size_t *n, char ***out,
                          am_error *err)
{
    *out = NULL;
    const am_array *a = NULL;
    AMI_TRY(ami_npz_need_strings(path, z, name, *n, &a, err));
    size_t count = a->shape[0];
    for (size_t k = 0; k < count; k++)
        if (!a->strings[k][0]) return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0, "%s[%zu] is empty", name, k);
    ami_names seen;
    size_t first = 0, again = 0;
    am_status st = ami_names_index(&seen, (const char *const *)a->strings, count, &first, &again);
    ami_names_free(&seen);
    if (st == AM_E_DUPLICATE)
        return AM_FAIL_AT(err, AM_E_DUPLICATE, path, 0, 0, "%s[%zu] = '%s' repeats %s[%zu]", name, again,
                          a->strings[again], name, first);
    if (st != AM_OK) return AM_FAIL_AT(err, st, path, 0, 0, "%s: %zu names", name, count);
    char **s = am_alloc_array(count ? count : 1, sizeof *s);
    if (!s) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%s", name);
    for (size_t k = 0; k < count; k++)
        if (!(s[k] = am_strdup(a->strings[k]))) {
            ami_strings_free(s, k);
            return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%s", name);
        }
    *n = count;
    *out = s;
    return AM_OK;
}

am_status ami_npz_need_scalar(const char *path, const am_npz *z, const char *name, const am_array **out,
                              am_error *err)
{
    const am_array *a = am_npz_find(z, name);
    if (!a) return AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "missing array '%s'", name);
    if (a->dtype == AM_DTYPE_STR || a->count != 1) {
        char sh[96];
        ami_npy_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, a->dtype == AM_DTYPE_STR ? AM_E_DTYPE : AM_E_SHAPE, path, 0, 0,
                          "%s has dtype %s and shape %s, expected a number", name, am_dtype_name(a->dtype), sh);
    }
    *out = a;
    return AM_OK;
}

am_status ami_npz_scalar_in(const char *path, const am_npz *z, const char *name, double lo, double hi, double *out,
                            am_error *err)
{
    const am_array *a = NULL;
    AMI_TRY(ami_npz_need_scalar(path, z, name, &a, err));
    AMI_TRY(am_array_scalar(a, out, err));
    if (!(*out >= lo && *out <= hi))
        return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0, "%s = %g, expected %g to %g", name, *out, lo, hi);
    return AM_OK;
}

uint64_t ami_points_bytes(double elements, double size, double names)
{
    /* Each name: its pointer, one allocation and a short string. */
    double need = elements * size + names * (8.0 + AMI_ALLOC_OVERHEAD);
    return need >= 1.8e19 ? UINT64_MAX : (uint64_t)need;
}
