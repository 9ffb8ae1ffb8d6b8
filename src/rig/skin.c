/* SPEC 4.4 linear blend skinning of points by a rig and its motion. */
#include "anymove/math.h"
#include "anymove/rig.h"
#include "core/internal.h"

am_status am_skin_reconstruct(const am_rig *rig, const am_motion *mo, size_t n, const float *rest,
                              const int32_t *bone_index, const float *weight, float *out, am_error *err)
{
    size_t B = rig->bone_count, T = mo->frame_count;
    AMI_CHECK(err, mo->bone_count == B, AM_E_SHAPE, "motion has %zu bones, rig %zu", mo->bone_count, B);
    for (size_t i = 0; i < n * 4; i++)
        AMI_CHECK(err, weight[i] == 0.0f || (bone_index[i] >= 0 && (size_t)bone_index[i] < B), AM_E_VALUE,
                  "point %zu: bone index %d out of range (%zu bones)", i / 4, (int)bone_index[i], B);
    double *pose = am_alloc_array(B * 16 * 2, sizeof(double));
    AMI_CHECK(err, pose, AM_E_NOMEM, "pose scratch of %zu bones", B);
    double *skin = pose + B * 16;
    for (size_t t = 0; t < T; t++) {
        am_motion_pose(rig, mo, t, pose);
        for (size_t b = 0; b < B; b++) am_mat4_mul(pose + b * 16, rig->rest_inv + b * 16, skin + b * 16);
        for (size_t i = 0; i < n; i++) {
            double r[3] = {rest[i * 3], rest[i * 3 + 1], rest[i * 3 + 2]}, acc[3] = {0, 0, 0};
            for (int k = 0; k < 4; k++) {
                double wk = weight[i * 4 + k];
                if (wk == 0.0) continue;
                double v[3];
                am_mat4_mul_point(skin + (size_t)bone_index[i * 4 + k] * 16, r, v);
                acc[0] += wk * v[0], acc[1] += wk * v[1], acc[2] += wk * v[2];
            }
            float *o = out + (t * n + i) * 3;
            o[0] = (float)acc[0], o[1] = (float)acc[1], o[2] = (float)acc[2];
        }
    }
    am_free(pose);
    return AM_OK;
}
