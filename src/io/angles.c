/* Joint angles for researchers: a long CSV (one row per frame and bone, the table anipose's
 * `angles` and gait labs read) and OpenSim's .mot (one column per bone and axis, degrees). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/mocap.h"
#include "core/internal.h"
#include "io/json_internal.h"

static am_status ami_angles_of(const am_rig *rig, const am_motion *mo, double **out, am_error *err)
{
    *out = am_alloc_array(mo->frame_count * rig->bone_count * 3 + 1, sizeof(double));
    if (!*out) return AM_FAIL(err, AM_E_NOMEM, "joint angles of %zu frames", mo->frame_count);
    am_motion_joint_angles(rig, mo, *out);
    return AM_OK;
}

static void ami_num(am_buf *b, double v)
{
    char num[40];
    ami_json_format_double(v, num, sizeof num);
    am_buf_printf(b, "%s", num);
}

/* Names go into CSV cells and .mot headers unquoted: refuse the characters that would break them. */
static am_status ami_check_names(const am_rig *rig, const char *bad, const char *what, am_error *err)
{
    for (size_t b = 0; b < rig->bone_count; b++)
        if (strpbrk(rig->bone_names[b], bad))
            return AM_FAIL(err, AM_E_VALUE, "bone name '%s' holds a character %s cannot store", rig->bone_names[b], what);
    return AM_OK;
}

am_status am_angles_csv_write(const char *path, const am_rig *rig, const am_motion *mo, am_error *err)
{
    assert(path && rig && mo && mo->bone_count == rig->bone_count);
    AMI_TRY(ami_check_names(rig, ",\"\n\r", "a CSV cell", err));
    double *a = NULL;
    AMI_TRY(ami_angles_of(rig, mo, &a, err));
    const size_t T = mo->frame_count, B = rig->bone_count;
    am_buf b = {0};
    am_buf_printf(&b, "frame,time_s,bone,flexion_deg,abduction_deg,rotation_deg,euler_x_deg,euler_y_deg,euler_z_deg\n");
    const double r2d = 180.0 / AM_PI;
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < B; k++) {
            const double *g = a + (t * B + k) * 3;
            double e[3];
            if (k == 0) {
                /* The root's Euler XYZ: of its world rotation in its rest frame, as its angles. */
                double R[9], q[4], Q[9], Tm[9];
                am_quat_normalize(mo->root_quat + 4 * t, q);
                am_quat_to_mat3(q, Q);
                am_mat3_mul(Q, rig->rest_rot, Tm);
                am_mat3_tmul(rig->rest_rot, Tm, R);
                am_mat3_to_euler_xyz(R, e);
            } else if (mo->euler) {
                memcpy(e, mo->euler + (t * B + k) * 3, sizeof e);
            } else {
                am_quat_to_euler_xyz(mo->quat + (t * B + k) * 4, e);
            }
            am_buf_printf(&b, "%zu,", t);
            ami_num(&b, (double)t / mo->fps);
            am_buf_printf(&b, ",%s", rig->bone_names[k]);
            for (int i = 0; i < 3; i++) am_buf_printf(&b, ","), ami_num(&b, g[i] * r2d);
            for (int i = 0; i < 3; i++) am_buf_printf(&b, ","), ami_num(&b, e[i] * r2d);
            am_buf_append(&b, "\n", 1);
        }
    am_free(a);
    am_status st = b.failed ? AM_FAIL(err, AM_E_NOMEM, "angles.csv text") : am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}

am_status am_angles_mot_write(const char *path, const am_rig *rig, const am_motion *mo, am_error *err)
{
    assert(path && rig && mo && mo->bone_count == rig->bone_count);
    AMI_TRY(ami_check_names(rig, "\t\n\r ", "a .mot column label", err));
    double *a = NULL;
    AMI_TRY(ami_angles_of(rig, mo, &a, err));
    const size_t T = mo->frame_count, B = rig->bone_count;
    am_buf b = {0};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* OpenSim's storage header; coordinates in degrees, the root's translation in metres on
     * OpenSim's axes (X forward, Y up, Z right), as the TRC writer puts joints. */
    am_buf_printf(&b, "%s\nversion=1\nnRows=%zu\nnColumns=%zu\ninDegrees=yes\nendheader\ntime", base, T, 1 + 3 * B + 3);
    static const char *const axis[3] = {"flexion", "abduction", "rotation"};
    for (size_t k = 0; k < B; k++)
        for (int i = 0; i < 3; i++) am_buf_printf(&b, "\t%s_%s", rig->bone_names[k], axis[i]);
    am_buf_printf(&b, "\t%s_tx\t%s_ty\t%s_tz\n", rig->bone_names[0], rig->bone_names[0], rig->bone_names[0]);
    const double r2d = 180.0 / AM_PI;
    for (size_t t = 0; t < T; t++) {
        ami_num(&b, (double)t / mo->fps);
        for (size_t k = 0; k < B; k++)
            for (int i = 0; i < 3; i++) am_buf_printf(&b, "\t"), ami_num(&b, a[(t * B + k) * 3 + (size_t)i] * r2d);
        const double *p = mo->trans + 3 * t;
        const double q[3] = {-p[1], p[2], -p[0]};
        for (int i = 0; i < 3; i++) am_buf_printf(&b, "\t"), ami_num(&b, q[i]);
        am_buf_append(&b, "\n", 1);
    }
    am_free(a);
    am_status st = b.failed ? AM_FAIL(err, AM_E_NOMEM, ".mot text") : am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}
