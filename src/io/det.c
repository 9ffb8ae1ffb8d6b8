/* det.npz (SPEC.md 4.2): joints detected in the front and side views, the input of
 * `anymove solve`.
 *
 * front_uv fixes T (frames) and J (joints); every other array must agree with it, and each
 * failure names the file and the array ("front_conf has shape [10,5], expected [10,6] to match
 * front_uv") because det files are written by external detectors that get shapes wrong.
 * Decisions: fps and names are required (SPEC 4.2 marks only calib optional); fps satisfies
 * am_fps_valid (1e-300 is positive, and solve would run on it for seconds before the animation
 * writer choked); names are non-empty and unique; no frames or no joints is AM_E_EMPTY; a NaN
 * pixel is allowed only where its confidence is exactly 0. Dtypes and shapes are checked from
 * the members' headers before any array is inflated (ami_npz_load_checked).
 */
#include "anymove/io.h"
#include "core/internal.h"
#include "io/npy_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static am_status ami_det_shape(const char *path, const am_array *a, const char *name, size_t T,
                               size_t J, int ndim, am_error *err)
{
    const size_t want[3] = {T, J, 2};
    if (!ami_shape_is_n(a, ndim, want)) {
        char sh[128];
        ami_npy_shape_str(a, sh, sizeof sh);
        if (ndim == 3)
            return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0,
                              "%s has shape %s, expected [%zu,%zu,2] to match front_uv", name, sh,
                              T, J);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0,
                          "%s has shape %s, expected [%zu,%zu] to match front_uv", name, sh, T, J);
    }
    return AM_OK;
}

static am_status ami_det_float(const char *path, const am_array *a, const char *name,
                               float **out, am_error *err)
{
    *out = am_alloc_array(a->count, sizeof **out);
    if (!*out) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%s", name);
    return am_array_to_f32(a, *out, err);
}

/* The values a det may hold, for a loaded file (path) and a caller's views alike:
 * confidences in [0, 1], a finite pixel wherever the confidence is > 0. */
am_status ami_det_values(const am_det *det, const char *path, am_error *err)
{
    const size_t T = det->frame_count, J = det->joint_count;
    for (int v = 0; v < 2; v++) {
        const char *view = v == 0 ? "front" : "side";
        const am_reals U = am_det_uv(det, v), K = am_det_conf(det, v);
        for (size_t t = 0; t < T; t++) {
            for (size_t j = 0; j < J; j++) {
                double c = am_reals_at(K, t * J + j);
                if (!(c >= 0.0 && c <= 1.0))
                    return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0, "%s_conf[%zu][%zu] = %g is outside [0, 1]", view,
                                      t, j, c);
                double u = am_reals_at(U, (t * J + j) * 2), w = am_reals_at(U, (t * J + j) * 2 + 1);
                if (c > 0.0 && !(isfinite(u) && isfinite(w)))
                    return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0,
                                      "%s_uv[%zu][%zu] = (%g, %g) is not finite but %s_conf is %g", view, t, j, u, w,
                                      view, c);
            }
        }
    }
    return AM_OK;
}

am_status ami_det_check(const am_npz *z, const char *path, am_error *err)
{
    char sh[128];
    const am_array *fuv = NULL, *a = NULL;
    static const char *const dims[2] = {"frames", "joints"};
    AMI_TRY(ami_npz_need_lead(path, z, "front_uv", 3, 2, "[T,J,2]", dims, &fuv, err));
    size_t T = fuv->shape[0], J = fuv->shape[1];
    static const char *const others[3] = {"side_uv", "front_conf", "side_conf"};
    for (int k = 0; k < 3; k++) {
        AMI_TRY(ami_npz_need_float(path, z, others[k], &a, err));
        AMI_TRY(ami_det_shape(path, a, others[k], T, J, k == 0 ? 3 : 2, err));
    }
    AMI_TRY(ami_npz_need_scalar(path, z, "fps", &a, err));
    AMI_TRY(ami_npz_need_strings(path, z, "names", J, &a, err));
    const am_array *calib = am_npz_find(z, "calib");
    if (calib) {
        if (calib->dtype != AM_DTYPE_F32 && calib->dtype != AM_DTYPE_F64)
            return AM_FAIL_AT(err, AM_E_DTYPE, path, 0, 0,
                              "calib has dtype %s, expected float32 or float64",
                              am_dtype_name(calib->dtype));
        if (!ami_shape_is_n(calib, 2, (const size_t[2]){2, 3})) {
            ami_npy_shape_str(calib, sh, sizeof sh);
            return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "calib has shape %s, expected [2,3]", sh);
        }
    }
    return AM_OK;
}

/* The values, once ami_det_check passed. */
static am_status ami_det_fill(const char *path, const am_npz *z, am_det *det, am_error *err)
{
    const am_array *fuv = am_npz_find(z, "front_uv");
    size_t T = fuv->shape[0], J = fuv->shape[1];
    /* fps first: a file that no clip can have comes back before any of its arrays is used. */
    AMI_TRY(ami_npz_scalar_in(path, z, "fps", AM_FPS_MIN, AM_FPS_MAX, &det->fps, err));
    det->frame_count = T;
    det->joint_count = J;
    AMI_TRY(ami_det_float(path, fuv, "front_uv", &det->front_uv, err));
    AMI_TRY(ami_det_float(path, am_npz_find(z, "side_uv"), "side_uv", &det->side_uv, err));
    AMI_TRY(ami_det_float(path, am_npz_find(z, "front_conf"), "front_conf", &det->front_conf,
                          err));
    AMI_TRY(ami_det_float(path, am_npz_find(z, "side_conf"), "side_conf", &det->side_conf, err));
    AMI_TRY(ami_det_values(det, path, err));
    size_t n = J;
    AMI_TRY(ami_npz_strings(path, z, "names", &n, &det->names, err));

    const am_array *calib = am_npz_find(z, "calib");
    if (calib) {
        AMI_TRY(am_array_to_f64(calib, det->calib, err));
        for (int i = 0; i < 6; i++)
            if (!isfinite(det->calib[i]))
                return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0, "calib[%d][%d] is not finite",
                                  i / 3, i % 3);
        det->has_calib = true;
    }
    return AM_OK;
}

am_status ami_det_from_npz(const char *path, const am_npz *z, am_det **out, am_error *err)
{
    am_det *det = am_alloc(sizeof *det);
    am_status st = det ? ami_det_fill(path, z, det, err)
                       : AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "det");
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_det_free(det);
        return st;
    }
    *out = det;
    return AM_OK;
}

am_status am_det_load(const char *path, am_det **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(ami_npz_load_checked(path, NULL, ami_det_check, &z, err));
    am_status st = ami_det_from_npz(path, z, out, err);
    ami_warn_list(&z->warnings); /* the loader runs in the caller's scope */
    am_npz_free(z);
    return st;
}

am_status am_det_write(const char *path, const am_det *det, am_error *err)
{
    assert(path && det);
    size_t T = det->frame_count, J = det->joint_count;
    assert(T * J == 0 || (det->front_uv && det->side_uv && det->front_conf && det->side_conf));
    assert(J == 0 || det->names);
    /* What the reader refuses is not written. */
    AMI_CHECK(err, am_fps_valid(det->fps), AM_E_ARG, "fps %g is outside [%g, %g]", det->fps,
              AM_FPS_MIN, AM_FPS_MAX);
    size_t s_uv[3] = {T, J, 2}, s_conf[2] = {T, J}, s_names[1] = {J}, s_calib[2] = {2, 3};
    double fps = det->fps;
    am_array arrs[7];
    size_t n = 0;
    arrs[n++] = am_array_view("front_uv", AM_DTYPE_F32, 3, s_uv, det->front_uv);
    arrs[n++] = am_array_view("side_uv", AM_DTYPE_F32, 3, s_uv, det->side_uv);
    arrs[n++] = am_array_view("front_conf", AM_DTYPE_F32, 2, s_conf, det->front_conf);
    arrs[n++] = am_array_view("side_conf", AM_DTYPE_F32, 2, s_conf, det->side_conf);
    arrs[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    arrs[n++] = am_array_view("names", AM_DTYPE_STR, 1, s_names, det->names);
    if (det->has_calib) arrs[n++] = am_array_view("calib", AM_DTYPE_F64, 2, s_calib, det->calib);
    return am_npz_write(path, arrs, n, true, err);
}

void am_det_free(am_det *det)
{
    if (!det) return;
    am_free(det->front_uv);
    am_free(det->side_uv);
    am_free(det->front_conf);
    am_free(det->side_conf);
    if (det->names)
        for (size_t j = 0; j < det->joint_count; j++) am_free(det->names[j]);
    am_free(det->names);
    am_free(det);
}
