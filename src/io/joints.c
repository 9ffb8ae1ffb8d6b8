/* joints.npz (SPEC.md 4.2.3): 3D joint positions over time, the input of `anymove ik` and the
 * output of triangulation and of the 3D importers (mocap.h).
 *
 * `joints` fixes T (frames) and J (joints); names and conf must agree with it, and each failure
 * names the file and the array. Decisions:
 * - fps is required (SPEC 4.2.3 marks only conf optional) and must satisfy am_fps_valid
 *   (rig.h): a clip of one frame per 1000 s or 10,000 frames a second is a unit error.
 * - A missing joint is NaN in all three coordinates; one or two NaN coordinates, or an
 *   infinity, is a broken file (AM_E_NONFINITE names frame and joint).
 * - conf is in [0, 1]; NaN is allowed only where the joint is missing.
 * - Names are non-empty and unique (a repeated name makes the binding ambiguous).
 * - Unknown extra arrays are ignored so producers can add diagnostics.
 * - Dtypes and shapes are checked from the members' headers before any array is inflated
 *   (ami_npz_load_checked), then fps, then the values.
 */
#include "anymove/io.h"
#include "core/internal.h"
#include "io/npy_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Reader and writer agree: a point is three finite numbers or missing (NaN x 3). */
static am_status ami_joints_check_points(const char *path, const double *joints, size_t T, size_t J,
                                         am_error *err)
{
    for (size_t i = 0; i < T * J; i++) {
        const double *p = joints + 3 * i;
        bool missing = isnan(p[0]) && isnan(p[1]) && isnan(p[2]);
        if (!missing && !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0,
                              "joints[%zu][%zu] = (%g, %g, %g): a missing joint is NaN in all "
                              "three coordinates (frame %zu, joint %zu)",
                              i / J, i % J, p[0], p[1], p[2], i / J, i % J);
    }
    return AM_OK;
}

/* Every dtype and shape, from the headers alone (no array has data yet). */
static am_status ami_joints_check(const am_npz *z, const char *path, am_error *err)
{
    char sh[128];
    const am_array *a = NULL;
    static const char *const dims[2] = {"frames", "joints"};
    AMI_TRY(ami_npz_need_lead(path, z, "joints", 3, 3, "[T,J,3]", dims, &a, err));
    size_t T = a->shape[0], J = a->shape[1];
    AMI_TRY(ami_npz_need_strings(path, z, "names", J, &a, err));
    AMI_TRY(ami_npz_need_scalar(path, z, "fps", &a, err));
    if (!am_npz_find(z, "conf")) return AM_OK;
    AMI_TRY(ami_npz_need_float(path, z, "conf", &a, err));
    if (!ami_shape_is_n(a, 2, (const size_t[2]){T, J})) {
        ami_npy_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0,
                          "conf has shape %s, expected [%zu,%zu] to match joints", sh, T, J);
    }
    return AM_OK;
}

/* The values, once ami_joints_check passed. */
static am_status ami_joints_fill(const char *path, const am_npz *z, am_joints *jt, am_error *err)
{
    const am_array *a = am_npz_find(z, "joints");
    size_t T = a->shape[0], J = a->shape[1];
    /* fps first: a file that no clip can have comes back before any of its arrays is used. */
    AMI_TRY(ami_npz_scalar_in(path, z, "fps", AM_FPS_MIN, AM_FPS_MAX, &jt->fps, err));
    jt->joints = am_alloc_array(a->count, sizeof *jt->joints);
    if (!jt->joints)
        return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "joints of %zu x %zu", T, J);
    jt->frame_count = T;
    jt->joint_count = J;
    AMI_TRY(am_array_to_f64(a, jt->joints, err));
    AMI_TRY(ami_joints_check_points(path, jt->joints, T, J, err));
    size_t n = J;
    AMI_TRY(ami_npz_strings(path, z, "names", &n, &jt->names, err));
    const am_array *c = am_npz_find(z, "conf");
    if (!c) return AM_OK;
    jt->conf = am_alloc_array(T * J, sizeof *jt->conf);
    if (!jt->conf) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "conf of %zu x %zu", T, J);
    AMI_TRY(am_array_to_f64(c, jt->conf, err));
    for (size_t i = 0; i < T * J; i++) {
        double v = jt->conf[i];
        if (isnan(v) && isnan(jt->joints[3 * i])) continue;
        if (!(v >= 0.0 && v <= 1.0))
            return AM_FAIL_AT(err, isnan(v) ? AM_E_NONFINITE : AM_E_VALUE, path, 0, 0,
                              "conf[%zu][%zu] = %g is outside [0, 1]", i / J, i % J, v);
    }
    return AM_OK;
}

static am_status ami_joints_from_npz(const char *path, const am_npz *z, am_joints **out,
                                     am_error *err)
{
    am_joints *jt = am_alloc(sizeof *jt);
    am_status st = jt ? ami_joints_fill(path, z, jt, err)
                      : AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "joints");
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_joints_free(jt);
        return st;
    }
    *out = jt;
    return AM_OK;
}

am_status am_joints_create(size_t frame_count, size_t joint_count, bool with_conf, am_joints **out,
                            am_error *err)
{
    assert(out);
    *out = NULL;
    size_t T = frame_count, J = joint_count;
    AMI_CHECK(err, T && J, AM_E_EMPTY, "joints with %zu frames and %zu joints", T, J);
    AMI_TRY(AMI_BUDGET_CHECK(err, NULL,
                             ami_points_bytes((double)T * (double)J, with_conf ? 32.0 : 24.0, (double)J),
                             AMI_POINTS_MAX_BYTES, "joints of %zu frames x %zu joints", T, J));
    am_joints *jt = am_alloc(sizeof *jt);
    if (!jt) return AM_FAIL(err, AM_E_NOMEM, "joints");
    jt->frame_count = T;
    jt->joint_count = J;
    jt->fps = 30.0;
    jt->joints = am_alloc_array(T * J * 3, sizeof *jt->joints);
    jt->names = am_alloc_array(J, sizeof *jt->names);
    if (with_conf) jt->conf = am_alloc_array(T * J, sizeof *jt->conf);
    if (!jt->joints || !jt->names || (with_conf && !jt->conf)) {
        am_joints_free(jt);
        return AM_FAIL(err, AM_E_NOMEM, "joints of %zu x %zu", T, J);
    }
    for (size_t i = 0; i < T * J * 3; i++) jt->joints[i] = NAN;
    *out = jt;
    return AM_OK;
}

am_status am_joints_read_mem(const void *buf, size_t len, const char *source, am_joints **out,
                             am_error *err)
{
    assert(out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(ami_npz_read_mem_checked(buf, len, source, NULL, ami_joints_check, &z, err));
    am_status st = ami_joints_from_npz(source, z, out, err);
    ami_warn_list(&z->warnings); /* the loader runs in the caller's scope */
    am_npz_free(z);
    return st;
}

am_status am_joints_load(const char *path, am_joints **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(ami_npz_load_checked(path, NULL, ami_joints_check, &z, err));
    am_status st = ami_joints_from_npz(path, z, out, err);
    ami_warn_list(&z->warnings);
    am_npz_free(z);
    return st;
}

am_status am_joints_write(const char *path, const am_joints *jt, am_error *err)
{
    assert(path && jt);
    size_t T = jt->frame_count, J = jt->joint_count;
    AMI_CHECK(err, T > 0 && J > 0, AM_E_EMPTY, "%zu frames x %zu joints", T, J);
    AMI_CHECK(err, jt->joints && jt->names, AM_E_ARG, "joints without positions or names");
    AMI_TRY(ami_joints_check_points(path, jt->joints, T, J, err));
    AMI_CHECK(err, am_fps_valid(jt->fps), AM_E_VALUE, "fps = %g, expected %g to %g", jt->fps,
              AM_FPS_MIN, AM_FPS_MAX);
    double fps = jt->fps;
    size_t s_j[3] = {T, J, 3}, s_n[1] = {J}, s_c[2] = {T, J};
    am_array arrs[4] = {am_array_view("joints", AM_DTYPE_F64, 3, s_j, jt->joints),
                        am_array_view("names", AM_DTYPE_STR, 1, s_n, jt->names),
                        am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps),
                        am_array_view("conf", AM_DTYPE_F64, 2, s_c, jt->conf)};
    return am_npz_write(path, arrs, jt->conf ? 4 : 3, true, err);
}

am_status am_joints_bind(const am_joints *jt, const am_rig *rig, double *pos, uint8_t *given,
                         am_error *err)
{
    assert(jt && rig && pos && given);
    size_t T = jt->frame_count, J = jt->joint_count, RJ = rig->joint_count;
    memset(given, 0, RJ);
    memset(pos, 0, T * RJ * 3 * sizeof *pos);
    for (size_t j = 0; j < J; j++) {
        int r = am_rig_find_joint(rig, jt->names[j]);
        AMI_CHECK(err, r >= 0, AM_E_NAME, "joint '%s' is not a joint of the rig", jt->names[j]);
        AMI_CHECK(err, !given[r], AM_E_DUPLICATE, "joint '%s' twice", jt->names[j]);
        given[r] = 1;
        for (size_t t = 0; t < T; t++)
            memcpy(pos + (t * RJ + (size_t)r) * 3, jt->joints + (t * J + j) * 3, 3 * sizeof *pos);
    }
    return AM_OK;
}

void am_joints_free(am_joints *jt)
{
    if (!jt) return;
    am_free(jt->joints);
    ami_strings_free(jt->names, jt->names ? jt->joint_count : 0);
    am_free(jt->conf);
    am_free(jt);
}
