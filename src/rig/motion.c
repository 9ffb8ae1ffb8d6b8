/* Motions as data (SPEC 4.3): creation, freeing and FK keypoints. motion.json lives in
 * src/io/motion_json.c. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/rig.h"
#include "core/internal.h"
#include "rig/rig_internal.h"

void am_motion_free(am_motion *mo)
{
    if (!mo) return;
    ami_strings_free(mo->bone_names, mo->bone_count);
    ami_strings_free(mo->joint_names, mo->joint_count);
    am_free(mo->trans);
    am_free(mo->root_quat);
    am_free(mo->euler);
    am_free(mo->quat);
    am_free(mo->loc);
    am_free(mo->joints);
    am_free(mo->extra_json);
    am_free(mo);
}

char **ami_copy_names(char *const *names, size_t n)
{
    if (n == 0) return NULL;
    char **out = am_alloc_array(n, sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        out[i] = am_strdup(names[i]);
        if (!out[i]) {
            ami_strings_free(out, i);
            return NULL;
        }
    }
    return out;
}

void ami_quat_fill_identity(double *q, size_t count)
{
    for (size_t i = 0; i < count; i++) am_quat_identity(q + 4 * i);
}

bool am_fps_valid(double fps) { return isfinite(fps) && fps >= AM_FPS_MIN && fps <= AM_FPS_MAX; }

uint64_t am_motion_bytes(const am_rig *rig, size_t frame_count)
{
    /* loc is optional but counted: BVH, glTF and motion.json add it after am_motion_create. */
    uint64_t per_frame = 3 + 4 + 10 * (uint64_t)rig->bone_count + 3 * (uint64_t)rig->joint_count;
    if (frame_count && per_frame > UINT64_MAX / 8 / frame_count) return UINT64_MAX;
    return (uint64_t)frame_count * per_frame * 8;
}

am_status am_motion_create(const am_rig *rig, size_t frame_count, double fps, am_motion **out,
                           am_error *err)
{
    assert(rig && out);
    *out = NULL;
    AMI_CHECK(err, frame_count > 0, AM_E_EMPTY, "a motion needs at least one frame");
    AMI_CHECK(err, am_fps_valid(fps), AM_E_ARG, "fps %g is outside [%g, %g]", fps, AM_FPS_MIN,
              AM_FPS_MAX);
    AMI_TRY(AMI_BUDGET_CHECK(err, NULL, am_motion_bytes(rig, frame_count), AM_MOTION_MAX_BYTES,
                             "a motion of %zu frames x %zu bones", frame_count, rig->bone_count));
    size_t T = frame_count, B = rig->bone_count;
    am_motion *mo = am_alloc(sizeof *mo);
    AMI_CHECK(err, mo, AM_E_NOMEM, "motion");
    mo->frame_count = T;
    mo->fps = fps;
    mo->bone_names = ami_copy_names(rig->bone_names, B);
    if (mo->bone_names) mo->bone_count = B;
    mo->trans = am_alloc_array(T, 3 * sizeof(double));
    mo->root_quat = am_alloc_array(T, 4 * sizeof(double));
    mo->euler = B ? am_alloc_array(T, B * 3 * sizeof(double)) : NULL;
    if ((B && !mo->bone_names) || !mo->trans || !mo->root_quat || (B && !mo->euler)) {
        am_motion_free(mo);
        return AM_FAIL(err, AM_E_NOMEM, "motion of %zu frames x %zu bones", T, B);
    }
    ami_quat_fill_identity(mo->root_quat, T);
    *out = mo;
    return AM_OK;
}

am_status am_motion_compute_joints(am_motion *mo, const am_rig *rig, am_error *err)
{
    assert(mo && rig);
    AMI_CHECK(err, mo->bone_count == rig->bone_count, AM_E_ARG,
              "motion has %zu bones, rig %zu: bind it with am_motion_parse(..., rig, ...)",
              mo->bone_count, rig->bone_count);
    for (size_t b = 0; b < mo->bone_count; b++)
        AMI_CHECK(err, strcmp(mo->bone_names[b], rig->bone_names[b]) == 0, AM_E_ARG,
                  "motion bone %zu is '%s', the rig's is '%s'", b, mo->bone_names[b],
                  rig->bone_names[b]);
    size_t T = mo->frame_count, J = rig->joint_count;
    char **names = ami_copy_names(rig->joint_names, J);
    AMI_CHECK(err, names || J == 0, AM_E_NOMEM, "joint names");
    if (!mo->joints || mo->joint_count != J) {
        double *joints = am_alloc_array(T, (J ? J : 1) * 3 * sizeof(double));
        if (!joints) {
            ami_strings_free(names, J);
            return AM_FAIL(err, AM_E_NOMEM, "joints of %zu frames x %zu joints", T, J);
        }
        am_free(mo->joints);
        mo->joints = joints;
    }
    ami_strings_free(mo->joint_names, mo->joint_count);
    mo->joint_names = names;
    mo->joint_count = J;
    am_rig_fk_clip(rig, mo, mo->joints);
    return AM_OK;
}

void am_motion_scale(am_motion *mo, double s)
{
    assert(mo && s > 0.0);
    for (size_t i = 0; i < mo->frame_count * 3; i++) mo->trans[i] *= s;
    if (mo->loc)
        for (size_t i = 0; i < mo->frame_count * mo->bone_count * 3; i++) mo->loc[i] *= s;
    if (mo->joints)
        for (size_t i = 0; i < mo->frame_count * mo->joint_count * 3; i++) mo->joints[i] *= s;
}

size_t am_motion_uncovered(const am_motion *unbound, const am_rig *rig, uint8_t *missing)
{
    assert(unbound && rig && missing);
    memset(missing, 1, rig->bone_count);
    size_t n = rig->bone_count;
    for (size_t k = 0; k < unbound->bone_count; k++) {
        int b = am_rig_find_bone(rig, unbound->bone_names[k]);
        if (b >= 0 && missing[b]) {
            missing[b] = 0;
            n--;
        }
    }
    return n;
}
