/* det.npz for N cameras (SPEC 4.2.1), and the two-view file of 4.2 read as two cameras.
 *
 * Decisions: uv fixes C, T and J; a NaN pixel means "not seen" (SPEC 4.2.1) and its confidence
 * becomes 0 whatever the file said; a NaN confidence is refused (a tracker that cannot score a
 * point should say 0). No camera, frame or joint is AM_E_EMPTY. fps satisfies am_fps_valid (rig.h).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/mocap.h"
#include "core/internal.h"
#include "io/npy_internal.h"

am_status am_mdet_create(size_t C, size_t T, size_t J, am_mdet **out, am_error *err)
{
    assert(out);
    *out = NULL;
    AMI_CHECK(err, C && T && J, AM_E_EMPTY, "det with %zu cameras, %zu frames, %zu joints", C, T, J);
    AMI_CHECK(err, C < (1u << 16) && T < (1u << 28) && J < (1u << 16), AM_E_LIMIT, "det of %zu x %zu x %zu", C, T, J);
    AMI_TRY(AMI_BUDGET_CHECK(err, NULL, ami_points_bytes((double)C * (double)T * (double)J, 12.0, (double)(C + J)),
                             AMI_POINTS_MAX_BYTES, "det of %zu cameras x %zu frames x %zu joints", C, T, J));
    am_mdet *d = am_alloc(sizeof *d);
    if (!d) return AM_FAIL(err, AM_E_NOMEM, "det");
    d->camera_count = C;
    d->frame_count = T;
    d->joint_count = J;
    d->uv = am_alloc_array(C * T * J * 2, sizeof *d->uv);
    d->conf = am_alloc_array(C * T * J, sizeof *d->conf);
    d->cameras = am_alloc_array(C, sizeof *d->cameras);
    d->names = am_alloc_array(J, sizeof *d->names);
    d->fps = 30.0;
    if (!d->uv || !d->conf || !d->cameras || !d->names) {
        am_mdet_free(d);
        return AM_FAIL(err, AM_E_NOMEM, "det of %zu x %zu x %zu", C, T, J);
    }
    for (size_t i = 0; i < C * T * J * 2; i++) d->uv[i] = NAN;
    *out = d;
    return AM_OK;
}

void am_mdet_free(am_mdet *d)
{
    if (!d) return;
    am_free(d->uv);
    am_free(d->conf);
    ami_strings_free(d->cameras, d->cameras ? d->camera_count : 0);
    ami_strings_free(d->names, d->names ? d->joint_count : 0);
    am_free(d->time_offset);
    am_free(d);
}

int am_mdet_find_camera(const am_mdet *d, const char *name)
{
    for (size_t c = 0; c < d->camera_count; c++)
        if (d->cameras[c] && strcmp(d->cameras[c], name) == 0) return (int)c;
    return -1;
}

int am_mdet_find_joint(const am_mdet *d, const char *name)
{
    for (size_t j = 0; j < d->joint_count; j++)
        if (d->names[j] && strcmp(d->names[j], name) == 0) return (int)j;
    return -1;
}

/* time_offset shifts camera c's own frame index onto the common clock. */
/* a + f (b - a) in the arithmetic of the stored type: float32 samples are subtracted as
 * floats, as the loaders' float arrays always were (a and b are exact in a double). */
static double ami_lerp(am_dtype t, double a, double b, double f)
{
    double d = t == AM_DTYPE_F32 ? (double)((float)b - (float)a) : b - a;
    return a + f * d;
}

bool am_mdet_reading(const am_mdet *d, size_t c, size_t t, size_t j, double uv[2], double *conf)
{
    const size_t T = d->frame_count, J = d->joint_count;
    const am_reals U = am_mdet_uv(d), K = am_mdet_conf(d);
    double ft = (double)t - (d->time_offset ? d->time_offset[c] : 0.0);
    if (ft < -1e-9 || ft > (double)(T - 1) + 1e-9) return false;
    double fl = floor(ft + 1e-9);
    size_t t0 = (size_t)(fl < 0 ? 0 : fl);
    double f = ft - (double)t0;
    const size_t i0 = (c * T + t0) * J + j;
    const double u0 = am_reals_at(U, 2 * i0), v0 = am_reals_at(U, 2 * i0 + 1), c0 = am_reals_at(K, i0);
    if (f < 1e-9 || t0 + 1 >= T) {
        uv[0] = u0, uv[1] = v0, *conf = c0;
        return c0 > 0 && isfinite(u0) && isfinite(v0);
    }
    const size_t i1 = i0 + J;
    const double u1 = am_reals_at(U, 2 * i1), v1 = am_reals_at(U, 2 * i1 + 1), c1 = am_reals_at(K, i1);
    bool s0 = c0 > 0 && isfinite(u0), s1 = c1 > 0 && isfinite(u1);
    if (s0 && s1) {
        uv[0] = ami_lerp(U.dtype, u0, u1, f);
        uv[1] = ami_lerp(U.dtype, v0, v1, f);
        *conf = ami_lerp(K.dtype, c0, c1, f);
        return true;
    }
    /* One side only: the nearer frame if it is the one seen. */
    bool near0 = f < 0.5;
    uv[0] = near0 ? u0 : u1, uv[1] = near0 ? v0 : v1, *conf = near0 ? c0 : c1;
    return near0 ? s0 : s1;
}

static am_status ami_mdet_names(am_mdet *d, const char *const *cams, const char *const *names, am_error *err)
{
    for (size_t c = 0; c < d->camera_count; c++)
        if (!(d->cameras[c] = am_strdup(cams[c]))) return AM_FAIL(err, AM_E_NOMEM, "camera names");
    for (size_t j = 0; j < d->joint_count; j++)
        if (!(d->names[j] = am_strdup(names[j]))) return AM_FAIL(err, AM_E_NOMEM, "joint names");
    return AM_OK;
}

am_status am_mdet_from_two_view(const am_det *det, am_mdet **out, am_error *err)
{
    assert(det && out);
    const size_t T = det->frame_count, J = det->joint_count;
    AMI_TRY(am_mdet_create(2, T, J, out, err));
    am_mdet *d = *out;
    static const char *const cams[2] = {"front", "side"};
    am_status st = ami_mdet_names(d, cams, (const char *const *)det->names, err);
    if (st != AM_OK) {
        am_mdet_free(d);
        *out = NULL;
        return st;
    }
    for (int v = 0; v < 2; v++) {
        const am_reals U = am_det_uv(det, v), K = am_det_conf(det, v);
        for (size_t i = 0; i < T * J; i++) {
            /* the det.npz of SPEC 4.2 is float32: a caller's float64 view narrows here */
            float c = (float)am_reals_at(K, i), u = (float)am_reals_at(U, 2 * i), w = (float)am_reals_at(U, 2 * i + 1);
            bool seen = c > 0 && isfinite(u) && isfinite(w);
            d->conf[(size_t)v * T * J + i] = seen ? c : 0.0f;
            d->uv[((size_t)v * T * J + i) * 2] = seen ? u : NAN;
            d->uv[((size_t)v * T * J + i) * 2 + 1] = seen ? w : NAN;
        }
    }
    d->fps = det->fps;
    d->two_view = true;
    return AM_OK;
}

/* The two-view layout (SPEC 4.2) has front_uv and no uv. */
static bool ami_mdet_is_two_view(const am_npz *z)
{
    return !am_npz_find(z, "uv") && am_npz_find(z, "front_uv");
}

/* Every dtype and shape, from the headers alone (no array has data yet). */
static am_status ami_mdet_check(const am_npz *z, const char *path, am_error *err)
{
    if (ami_mdet_is_two_view(z)) return ami_det_check(z, path, err);
    char sh[128];
    const am_array *uv = NULL, *a = NULL;
    static const char *const dims[3] = {"cameras", "frames", "joints"};
    AMI_TRY(ami_npz_need_lead(path, z, "uv", 4, 2, "[C,T,J,2]", dims, &uv, err));
    const size_t C = uv->shape[0], T = uv->shape[1], J = uv->shape[2];
    AMI_TRY(ami_npz_need_float(path, z, "conf", &a, err));
    const size_t want[3] = {C, T, J};
    if (!ami_shape_is_n(a, 3, want)) {
        ami_npy_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "conf has shape %s, expected [%zu,%zu,%zu] to match uv", sh, C,
                          T, J);
    }
    AMI_TRY(ami_npz_need_strings(path, z, "cameras", C, &a, err));
    AMI_TRY(ami_npz_need_strings(path, z, "names", J, &a, err));
    AMI_TRY(ami_npz_need_scalar(path, z, "fps", &a, err));
    const am_array *to = am_npz_find(z, "time_offset");
    if (to && (to->dtype == AM_DTYPE_STR || to->ndim != 1 || to->shape[0] != C)) {
        ami_npy_shape_str(to, sh, sizeof sh);
        return AM_FAIL_AT(err, to->dtype == AM_DTYPE_STR ? AM_E_DTYPE : AM_E_SHAPE, path, 0, 0,
                          "time_offset has shape %s, expected [%zu] numbers", sh, C);
    }
    return AM_OK;
}

/* The values a det may hold, for a loaded file (path) and a caller's arrays alike: conf in
 * [0, 1] (NaN refused), no infinite pixel. */
static am_status ami_mdet_values(const am_mdet *d, const char *path, am_error *err)
{
    const size_t T = d->frame_count, J = d->joint_count, n = d->camera_count * T * J;
    const am_reals U = am_mdet_uv(d), K = am_mdet_conf(d);
    for (size_t i = 0; i < n; i++) {
        double c = am_reals_at(K, i);
        if (!(c >= 0.0 && c <= 1.0)) {
            size_t cam = i / (T * J), t = i / J % T, j = i % J;
            return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0, "conf[%zu][%zu][%zu] = %g is outside [0, 1] (camera '%s', joint '%s')",
                              cam, t, j, c, d->cameras[cam], d->names[j]);
        }
        if (isinf(am_reals_at(U, 2 * i)) || isinf(am_reals_at(U, 2 * i + 1))) {
            size_t cam = i / (T * J), t = i / J % T, j = i % J;
            return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0, "uv[%zu][%zu][%zu] is infinite", cam, t, j);
        }
    }
    return AM_OK;
}

static am_status ami_names_distinct(char *const *names, size_t n, const char *what, am_error *err)
{
    for (size_t a = 0; a < n; a++) {
        AMI_CHECK(err, names[a] && names[a][0], AM_E_NAME, "%s %zu has no name", what, a);
        for (size_t b = 0; b < a; b++)
            AMI_CHECK(err, strcmp(names[a], names[b]) != 0, AM_E_DUPLICATE, "%s '%s' appears twice", what, names[a]);
    }
    return AM_OK;
}

am_status am_mdet_validate(const am_mdet *d, am_error *err)
{
    assert(d && d->cameras && d->names);
    assert(am_reals_valid(am_mdet_uv(d)) && am_reals_valid(am_mdet_conf(d)));
    const size_t C = d->camera_count, T = d->frame_count, J = d->joint_count;
    AMI_CHECK(err, C && T && J, AM_E_EMPTY, "det with %zu cameras, %zu frames, %zu joints", C, T, J);
    AMI_CHECK(err, C < (1u << 16) && T < (1u << 28) && J < (1u << 16), AM_E_LIMIT, "det of %zu x %zu x %zu", C, T, J);
    AMI_CHECK(err, am_fps_valid(d->fps), AM_E_VALUE, "fps = %g is outside [%g, %g]", d->fps, AM_FPS_MIN, AM_FPS_MAX);
    AMI_TRY(ami_names_distinct(d->cameras, C, "camera", err));
    AMI_TRY(ami_names_distinct(d->names, J, "joint", err));
    for (size_t c = 0; d->time_offset && c < C; c++)
        AMI_CHECK(err, isfinite(d->time_offset[c]) && fabs(d->time_offset[c]) < 1e7, AM_E_NONFINITE,
                  "time_offset[%zu] = %g", c, d->time_offset[c]);
    return ami_mdet_values(d, NULL, err);
}

am_status am_det_validate(const am_det *det, am_error *err)
{
    assert(det && det->names);
    for (int v = 0; v < 2; v++) assert(am_reals_valid(am_det_uv(det, v)) && am_reals_valid(am_det_conf(det, v)));
    const size_t T = det->frame_count, J = det->joint_count;
    AMI_CHECK(err, T && J, AM_E_EMPTY, "det with %zu frames, %zu joints", T, J);
    AMI_CHECK(err, T < (1u << 28) && J < (1u << 16), AM_E_LIMIT, "det of %zu x %zu", T, J);
    AMI_CHECK(err, am_fps_valid(det->fps), AM_E_VALUE, "fps = %g is outside [%g, %g]", det->fps, AM_FPS_MIN,
              AM_FPS_MAX);
    AMI_TRY(ami_names_distinct(det->names, J, "joint", err));
    return ami_det_values(det, NULL, err);
}

/* The values, once ami_mdet_check passed. */
static am_status ami_mdet_fill(const char *path, const am_npz *z, am_mdet **out, am_error *err)
{
    const am_array *uv = am_npz_find(z, "uv");
    const size_t C = uv->shape[0], T = uv->shape[1], J = uv->shape[2];
    double fps = 0;
    /* fps first: a file that no clip can have comes back before any of its arrays is used. */
    AMI_TRY(ami_npz_scalar_in(path, z, "fps", AM_FPS_MIN, AM_FPS_MAX, &fps, err));
    am_status st = am_mdet_create(C, T, J, out, err);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        return st;
    }
    am_mdet *d = *out;
    d->fps = fps;
    AMI_TRY(am_array_to_f32(uv, d->uv, err));
    AMI_TRY(am_array_to_f32(am_npz_find(z, "conf"), d->conf, err));
    ami_strings_free(d->cameras, C);
    ami_strings_free(d->names, J);
    d->cameras = d->names = NULL;
    size_t n = C;
    AMI_TRY(ami_npz_strings(path, z, "cameras", &n, &d->cameras, err));
    n = J;
    AMI_TRY(ami_npz_strings(path, z, "names", &n, &d->names, err));
    const am_array *to = am_npz_find(z, "time_offset");
    if (to) {
        d->time_offset = am_alloc_array(C, sizeof *d->time_offset);
        if (!d->time_offset) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "time_offset");
        AMI_TRY(am_array_to_f64(to, d->time_offset, err));
        for (size_t c = 0; c < C; c++)
            if (!(isfinite(d->time_offset[c]) && fabs(d->time_offset[c]) < 1e7))
                return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0, "time_offset[%zu] = %g", c, d->time_offset[c]);
    }
    AMI_TRY(ami_mdet_values(d, path, err));
    /* the one normal form of "not seen": NaN pixels with confidence 0 */
    for (size_t i = 0; i < C * T * J; i++) {
        float *p = d->uv + 2 * i;
        if (!(isfinite(p[0]) && isfinite(p[1]))) {
            p[0] = p[1] = NAN;
            d->conf[i] = 0.0f;
        } else if (d->conf[i] == 0.0f) {
            p[0] = p[1] = NAN;
        }
    }
    return AM_OK;
}

am_status am_mdet_load(const char *path, am_mdet **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(ami_npz_load_checked(path, NULL, ami_mdet_check, &z, err));
    am_status st;
    if (ami_mdet_is_two_view(z)) {
        am_det *det = NULL;
        st = ami_det_from_npz(path, z, &det, err);
        if (st == AM_OK) st = am_mdet_from_two_view(det, out, err);
        am_det_free(det);
    } else {
        st = ami_mdet_fill(path, z, out, err);
    }
    ami_warn_list(&z->warnings); /* the loader runs in the caller's scope */
    am_npz_free(z);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_mdet_free(*out);
        *out = NULL;
    }
    return st;
}

am_status am_mdet_write(const char *path, const am_mdet *d, am_error *err)
{
    assert(path && d);
    const size_t C = d->camera_count, T = d->frame_count, J = d->joint_count;
    AMI_CHECK(err, am_fps_valid(d->fps), AM_E_VALUE, "fps = %g, expected %g to %g", d->fps, AM_FPS_MIN, AM_FPS_MAX);
    size_t s_uv[4] = {C, T, J, 2}, s_c[3] = {C, T, J}, s_cam[1] = {C}, s_n[1] = {J};
    double fps = d->fps;
    am_array a[6];
    size_t n = 0;
    a[n++] = am_array_view("uv", AM_DTYPE_F32, 4, s_uv, d->uv);
    a[n++] = am_array_view("conf", AM_DTYPE_F32, 3, s_c, d->conf);
    a[n++] = am_array_view("cameras", AM_DTYPE_STR, 1, s_cam, d->cameras);
    a[n++] = am_array_view("names", AM_DTYPE_STR, 1, s_n, d->names);
    a[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    if (d->time_offset) a[n++] = am_array_view("time_offset", AM_DTYPE_F64, 1, s_cam, d->time_offset);
    return am_npz_write(path, a, n, true, err);
}

am_status am_mdet_stack(const am_mdet *const *parts, const char *const *sources, size_t n,
                        const char *const *camera_names, am_mdet **out, am_error *err)
{
    assert(parts && out && n > 0);
    *out = NULL;
    const am_mdet *p0 = parts[0];
    const size_t T = p0->frame_count, J = p0->joint_count;
    size_t C = 0;
    for (size_t k = 0; k < n; k++) {
        const am_mdet *p = parts[k];
        const char *src = sources ? sources[k] : NULL;
        if (p->frame_count != T)
            return AM_FAIL_AT(err, AM_E_SHAPE, src, 0, 0, "%zu frames, but %s has %zu: cameras must cover the same frames",
                              p->frame_count, sources ? sources[0] : "the first input", T);
        if (p->joint_count != J)
            return AM_FAIL_AT(err, AM_E_SHAPE, src, 0, 0, "%zu joints, but %s has %zu", p->joint_count,
                              sources ? sources[0] : "the first input", J);
        if (fabs(p->fps - p0->fps) > 1e-6 * p0->fps)
            return AM_FAIL_AT(err, AM_E_VALUE, src, 0, 0, "fps %g, but %s has %g", p->fps,
                              sources ? sources[0] : "the first input", p0->fps);
        C += p->camera_count;
    }
    AMI_TRY(am_mdet_create(C, T, J, out, err));
    am_mdet *d = *out;
    d->fps = p0->fps;
    am_status st = AM_OK;
    int32_t *map = am_alloc_array(J, sizeof *map);
    if (!map) st = AM_FAIL(err, AM_E_NOMEM, "joint map");
    for (size_t j = 0; j < J && st == AM_OK; j++)
        if (!(d->names[j] = am_strdup(p0->names[j]))) st = AM_FAIL(err, AM_E_NOMEM, "names");
    size_t c = 0;
    for (size_t k = 0; k < n && st == AM_OK; k++) {
        const am_mdet *p = parts[k];
        for (size_t j = 0; j < J && st == AM_OK; j++) {
            map[j] = -1;
            for (size_t i = 0; i < J; i++)
                if (strcmp(p->names[j], p0->names[i]) == 0) map[j] = (int32_t)i;
            if (map[j] < 0)
                st = AM_FAIL_AT(err, AM_E_NAME, sources ? sources[k] : NULL, 0, 0,
                                "joint '%s' is not in %s: every camera must track the same joints", p->names[j],
                                sources ? sources[0] : "the first input");
        }
        for (size_t pc = 0; pc < p->camera_count && st == AM_OK; pc++, c++) {
            const char *name = camera_names && camera_names[c] ? camera_names[c] : p->cameras[pc];
            if (!(d->cameras[c] = am_strdup(name))) {
                st = AM_FAIL(err, AM_E_NOMEM, "camera names");
                break;
            }
            for (size_t q = 0; q < c; q++)
                if (strcmp(d->cameras[q], name) == 0) {
                    st = AM_FAIL_AT(err, AM_E_DUPLICATE, sources ? sources[k] : NULL, 0, 0,
                                    "camera name '%s' is used twice (--camera NAME=FILE names them)", name);
                    break;
                }
            for (size_t t = 0; t < T && st == AM_OK; t++)
                for (size_t j = 0; j < J; j++) {
                    size_t src = (pc * T + t) * J + j, dst = (c * T + t) * J + (size_t)map[j];
                    d->conf[dst] = p->conf[src];
                    d->uv[2 * dst] = p->uv[2 * src];
                    d->uv[2 * dst + 1] = p->uv[2 * src + 1];
                }
        }
    }
    am_free(map);
    if (st != AM_OK) {
        am_mdet_free(d);
        *out = NULL;
    }
    return st;
}
