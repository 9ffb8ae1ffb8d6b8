/* motion.json (SPEC 4.3): parse, bind to a rig, write. */
#include "anymove/math.h"
#include "anymove/io.h"
#include "io/json_internal.h"
#include "core/internal.h"
#include "rig/rig_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* A long capture at 60 fps with 60 bones is ~100 MB of JSON; jansson needs about ten times
 * the text in memory, so refuse what would not fit a workstation anyway. */
#define AMI_MOTION_JSON_MAX_BYTES ((size_t)512 << 20)

/* Below this norm a quaternion has no direction to normalize to. */
#define AMI_QUAT_MIN_NORM 1e-6

static const char *const ami_motion_known_keys[] = {
    "fps", "bones", "joint_names", "trans", "root_quat", "quat", "euler", "loc", "joints", NULL};

/* Normalize every quaternion of a [count][4] array in place; a (near) zero one has no
 * rotation to recover and is refused, naming it as path[i] (or path[t][b] with inner > 0). */
static am_status ami_normalize_quats(double *q, size_t count, size_t inner, const char *path,
                                     am_error *err)
{
    for (size_t i = 0; i < count; i++) {
        double *p = q + 4 * i;
        /* Scale by the largest component first: squares of 1e200 would overflow to inf. */
        double m = fmax(fmax(fabs(p[0]), fabs(p[1])), fmax(fabs(p[2]), fabs(p[3])));
        double n = 0, r = 1;
        if (m > 0) {
            double a = p[0] / m, b = p[1] / m, c = p[2] / m, d = p[3] / m;
            r = sqrt(a * a + b * b + c * c + d * d); /* in [1, 2] */
            n = m * r; /* may be inf for huge input: still a direction */
        }
        if (!(n >= AMI_QUAT_MIN_NORM)) {
            if (inner)
                return AM_FAIL(err, AM_E_VALUE, "%s[%zu][%zu]: zero quaternion", path, i / inner,
                               i % inner);
            return AM_FAIL(err, AM_E_VALUE, "%s[%zu]: zero quaternion", path, i);
        }
        /* Leave (numerically) unit quaternions bit-exact so write -> parse is lossless. */
        if (fabs(n - 1.0) > 1e-12)
            for (int k = 0; k < 4; k++) p[k] = (p[k] / m) / r;
    }
    return AM_OK;
}

/* Euler angles that say the same rotation as q are kept (they may carry continuity beyond pi
 * that a quaternion can't); otherwise the quaternion wins (SPEC: quat wins if both). */
static bool ami_euler_matches_quat(const double e[3], const double q[4])
{
    double qe[4];
    am_euler_xyz_to_quat(e, qe);
    double d = fabs(qe[0] * q[0] + qe[1] * q[1] + qe[2] * q[2] + qe[3] * q[3]);
    return 1.0 - d < 1e-12;
}

typedef struct ami_motion_tmp {
    char **file_bones;
    size_t file_bone_count;
    int32_t *map; /* [F] file bone -> motion bone */
    size_t map_count; /* F, the file's bone count */
    double *euler, *quat, *loc;
    char **file_joints;
    size_t file_joint_count;
    double *joints;
} ami_motion_tmp;

static void ami_motion_tmp_free(ami_motion_tmp *t)
{
    ami_strings_free(t->file_bones, t->file_bone_count);
    am_free(t->map);
    am_free(t->euler);
    am_free(t->quat);
    am_free(t->loc);
    ami_strings_free(t->file_joints, t->file_joint_count);
    am_free(t->joints);
}

static am_status ami_check_unique(char *const *names, size_t n, const char *path, am_error *err)
{
    ami_names m;
    size_t first = 0, second = 0;
    am_status s = ami_names_index(&m, (const char *const *)names, n, &first, &second);
    ami_names_free(&m);
    if (s == AM_E_DUPLICATE)
        return AM_FAIL(err, AM_E_DUPLICATE, "%s[%zu]: '%s' repeats %s[%zu]", path, second,
                       names[second], path, first);
    AMI_CHECK(err, s == AM_OK, s, "%s: %zu names", path, n);
    return AM_OK;
}

static am_status ami_motion_bones(const json_t *doc, const am_rig *rig, am_motion *mo,
                                  ami_motion_tmp *t, am_error *err)
{
    json_t *v = NULL;
    AMI_TRY(ami_json_member(doc, "", "bones", true, &v, err));
    AMI_TRY(ami_json_strings(v, "bones", &t->file_bones, &t->file_bone_count, err));
    size_t F = t->file_bone_count;
    AMI_CHECK(err, F > 0, AM_E_EMPTY, "bones: no bones");
    AMI_TRY(ami_check_unique(t->file_bones, F, "bones", err));
    t->map = am_alloc_array(F, sizeof *t->map);
    AMI_CHECK(err, t->map, AM_E_NOMEM, "bones");
    for (size_t f = 0; f < F; f++) {
        int b = rig ? am_rig_find_bone(rig, t->file_bones[f]) : (int)f;
        AMI_CHECK(err, b >= 0, AM_E_NAME, "bones[%zu]: bone '%s' is not in the rig", f,
                  t->file_bones[f]);
        t->map[f] = b;
    }
    t->map_count = F;
    if (rig) {
        mo->bone_names = ami_copy_names(rig->bone_names, rig->bone_count);
        AMI_CHECK(err, mo->bone_names || rig->bone_count == 0, AM_E_NOMEM, "bone names");
        mo->bone_count = rig->bone_count;
    } else {
        mo->bone_names = t->file_bones;
        mo->bone_count = F;
        t->file_bones = NULL;
        t->file_bone_count = 0;
    }
    return AM_OK;
}

static am_status ami_motion_rotations(const json_t *doc, const am_rig *rig, am_motion *mo,
                                      ami_motion_tmp *t, am_error *err)
{
    size_t T = mo->frame_count, F = t->map_count, B = mo->bone_count;
    json_t *ev = NULL, *qv = NULL;
    AMI_TRY(ami_json_member(doc, "", "euler", false, &ev, err));
    AMI_TRY(ami_json_member(doc, "", "quat", false, &qv, err));
    AMI_CHECK(err, ev || qv, AM_E_SCHEMA, "document: needs 'euler' or 'quat' (or both)");
    if (ev) {
        size_t shape[3] = {T, F, 3};
        AMI_TRY(ami_json_numbers_alloc(ev, "euler", 3, shape, &t->euler, err));
    }
    if (qv) {
        size_t shape[3] = {T, F, 4};
        AMI_TRY(ami_json_numbers_alloc(qv, "quat", 3, shape, &t->quat, err));
        AMI_TRY(ami_normalize_quats(t->quat, T * F, F, "quat", err));
    }
    mo->euler = am_alloc_array(T, B * 3 * sizeof(double));
    AMI_CHECK(err, mo->euler, AM_E_NOMEM, "euler of %zu frames x %zu bones", T, B);
    if (t->quat) {
        mo->quat = am_alloc_array(T, B * 4 * sizeof(double));
        AMI_CHECK(err, mo->quat, AM_E_NOMEM, "quat of %zu frames x %zu bones", T, B);
        ami_quat_fill_identity(mo->quat, T * B);
    }
    for (size_t fr = 0; fr < T; fr++) {
        for (size_t f = 0; f < F; f++) {
            size_t b = (size_t)t->map[f];
            double *e = mo->euler + 3 * (fr * B + b);
            const double *fe = t->euler ? t->euler + 3 * (fr * F + f) : NULL;
            if (t->quat) {
                const double *fq = t->quat + 4 * (fr * F + f);
                memcpy(mo->quat + 4 * (fr * B + b), fq, 4 * sizeof(double));
                if (fe && ami_euler_matches_quat(fe, fq))
                    memcpy(e, fe, 3 * sizeof(double));
                else
                    am_quat_to_euler_xyz(fq, e);
            } else {
                memcpy(e, fe, 3 * sizeof(double));
            }
        }
        /* SPEC 4.3: the root's entry is identity (root_quat carries its rotation). */
        if (rig && B > 0) {
            memset(mo->euler + 3 * fr * B, 0, 3 * sizeof(double));
            if (mo->quat) am_quat_identity(mo->quat + 4 * fr * B);
        }
    }
    return AM_OK;
}

/* Optional loc [T][F][3] (SPEC 2.3, 4.3): bones the file does not list, and the root (trans
 * places it), have none. */
static am_status ami_motion_loc(const json_t *doc, const am_rig *rig, am_motion *mo,
                                ami_motion_tmp *t, am_error *err)
{
    json_t *lv = NULL;
    AMI_TRY(ami_json_member(doc, "", "loc", false, &lv, err));
    if (!lv) return AM_OK;
    size_t T = mo->frame_count, F = t->map_count, B = mo->bone_count;
    size_t shape[3] = {T, F, 3};
    AMI_TRY(ami_json_numbers_alloc(lv, "loc", 3, shape, &t->loc, err));
    mo->loc = am_alloc_array(T, B * 3 * sizeof(double));
    AMI_CHECK(err, mo->loc, AM_E_NOMEM, "loc of %zu frames x %zu bones", T, B);
    for (size_t fr = 0; fr < T; fr++) {
        for (size_t f = 0; f < F; f++)
            memcpy(mo->loc + 3 * (fr * B + (size_t)t->map[f]), t->loc + 3 * (fr * F + f),
                   3 * sizeof(double));
        if (rig && B > 0) memset(mo->loc + 3 * fr * B, 0, 3 * sizeof(double));
    }
    return AM_OK;
}

static am_status ami_motion_joints(const json_t *doc, const am_rig *rig, am_motion *mo,
                                   ami_motion_tmp *t, am_error *err)
{
    json_t *jv = NULL, *nv = NULL;
    AMI_TRY(ami_json_member(doc, "", "joints", false, &jv, err));
    /* Names without positions describe nothing; they are dropped with the (absent) joints. */
    if (!jv) return AM_OK;
    AMI_TRY(ami_json_member(doc, "", "joint_names", false, &nv, err));
    AMI_CHECK(err, nv, AM_E_SCHEMA, "joints: needs 'joint_names' to say which joint is which");
    AMI_TRY(ami_json_strings(nv, "joint_names", &t->file_joints, &t->file_joint_count, err));
    size_t T = mo->frame_count, J = t->file_joint_count;
    AMI_CHECK(err, J > 0, AM_E_EMPTY, "joint_names: no joints");
    AMI_TRY(ami_check_unique(t->file_joints, J, "joint_names", err));
    size_t shape[3] = {T, J, 3};
    AMI_TRY(ami_json_numbers_alloc(jv, "joints", 3, shape, &t->joints, err));
    bool reorder = false;
    if (rig) {
        for (size_t j = 0; j < J; j++)
            AMI_CHECK(err, am_rig_find_joint(rig, t->file_joints[j]) >= 0, AM_E_NAME,
                      "joint_names[%zu]: joint '%s' is not in the rig", j, t->file_joints[j]);
        /* Unique and all known: the same count means the same set, so use the rig's order. */
        reorder = J == rig->joint_count;
    }
    if (!reorder) {
        mo->joint_names = t->file_joints;
        mo->joint_count = J;
        mo->joints = t->joints;
        t->file_joints = NULL;
        t->file_joint_count = 0;
        t->joints = NULL;
        return AM_OK;
    }
    mo->joint_names = ami_copy_names(rig->joint_names, J);
    AMI_CHECK(err, mo->joint_names, AM_E_NOMEM, "joint names");
    mo->joint_count = J;
    mo->joints = am_alloc_array(T * J, 3 * sizeof(double));
    AMI_CHECK(err, mo->joints, AM_E_NOMEM, "joints");
    for (size_t j = 0; j < J; j++) {
        size_t r = (size_t)am_rig_find_joint(rig, t->file_joints[j]);
        for (size_t fr = 0; fr < T; fr++)
            memcpy(mo->joints + 3 * (fr * J + r), t->joints + 3 * (fr * J + j),
                   3 * sizeof(double));
    }
    return AM_OK;
}

static am_status ami_motion_fill(const json_t *doc, const am_rig *rig, am_motion *mo,
                                 ami_motion_tmp *t, am_error *err)
{
    AMI_TRY(ami_json_expect(doc, JSON_OBJECT, "", err));
    AMI_TRY(ami_json_get_number(doc, "", "fps", true, &mo->fps, err));
    AMI_CHECK(err, am_fps_valid(mo->fps), AM_E_VALUE, "fps: %g is outside [%g, %g]", mo->fps,
              AM_FPS_MIN, AM_FPS_MAX);
    AMI_TRY(ami_motion_bones(doc, rig, mo, t, err));

    json_t *v = NULL;
    AMI_TRY(ami_json_member(doc, "", "trans", true, &v, err));
    size_t tshape[2] = {0, 3};
    AMI_TRY(ami_json_numbers_alloc(v, "trans", 2, tshape, &mo->trans, err));
    mo->frame_count = tshape[0];
    AMI_CHECK(err, mo->frame_count > 0, AM_E_EMPTY, "trans: the clip has no frames");
    size_t T = mo->frame_count;

    AMI_TRY(ami_json_member(doc, "", "root_quat", true, &v, err));
    size_t qshape[2] = {T, 4};
    AMI_TRY(ami_json_numbers_alloc(v, "root_quat", 2, qshape, &mo->root_quat, err));
    AMI_TRY(ami_normalize_quats(mo->root_quat, T, 0, "root_quat", err));

    AMI_TRY(ami_motion_rotations(doc, rig, mo, t, err));
    AMI_TRY(ami_motion_loc(doc, rig, mo, t, err));
    AMI_TRY(ami_motion_joints(doc, rig, mo, t, err));
    return ami_json_extra_collect(doc, ami_motion_known_keys, &mo->extra_json, err);
}

/* An ami_json_reader: user is the rig, out an am_motion **. */
static am_status ami_motion_from_doc(const json_t *doc, const void *user, void *out_, am_error *err)
{
    const am_rig *rig = user;
    am_motion **out = out_;
    am_motion *mo = am_alloc(sizeof *mo);
    AMI_CHECK(err, mo, AM_E_NOMEM, "motion");
    ami_motion_tmp t = {0};
    am_status s = ami_motion_fill(doc, rig, mo, &t, err);
    ami_motion_tmp_free(&t);
    if (s != AM_OK) {
        am_motion_free(mo);
        return s;
    }
    *out = mo;
    return AM_OK;
}

am_status am_motion_parse(const char *text, size_t len, const char *source, const am_rig *rig,
                          am_motion **out, am_error *err)
{
    *out = NULL;
    return ami_json_parse_into(text, len, source, ami_motion_from_doc, rig, out, err);
}

am_status am_motion_load(const char *path, const am_rig *rig, am_motion **out, am_error *err)
{
    *out = NULL;
    return ami_json_load_into(path, AMI_MOTION_JSON_MAX_BYTES, ami_motion_from_doc, rig, out, err);
}

/* motion.json in SPEC 4.3's order, then the kept extra keys. quat [T][B][4] and euler
 * [T][B][3] are both written (SPEC 4.3), one of them possibly derived by the caller. */
static void ami_motion_to_jw(const am_motion *mo, const double *quat, const double *euler,
                             ami_jw *w)
{
    size_t T = mo->frame_count, B = mo->bone_count, J = mo->joint_count;
    size_t s3[2] = {T, 3}, s4[2] = {T, 4}, sb4[3] = {T, B, 4}, sb3[3] = {T, B, 3},
           sj3[3] = {T, J, 3};
    bool joints = mo->joints && J;
    ami_jw_object(w, NULL);
    ami_jw_number(w, "fps", mo->fps);
    ami_jw_strings(w, "bones", (const char *const *)mo->bone_names, B);
    if (joints) ami_jw_strings(w, "joint_names", (const char *const *)mo->joint_names, J);
    ami_jw_numbers(w, "trans", mo->trans, 2, s3);
    ami_jw_numbers(w, "root_quat", mo->root_quat, 2, s4);
    if (B) {
        ami_jw_numbers(w, "quat", quat, 3, sb4);
        ami_jw_numbers(w, "euler", euler, 3, sb3);
        if (mo->loc) ami_jw_numbers(w, "loc", mo->loc, 3, sb3);
    }
    if (joints) ami_jw_numbers(w, "joints", mo->joints, 3, sj3);
    ami_jw_extra(w, mo->extra_json, ami_motion_known_keys);
    ami_jw_close(w);
}

/* Write mo into w; the derived rotation form lives only during the call. */
static am_status ami_motion_write_jw(const am_motion *mo, ami_jw *w, am_error *err)
{
    size_t T = mo->frame_count, B = mo->bone_count;
    AMI_CHECK(err, T > 0, AM_E_EMPTY, "a motion needs at least one frame");
    assert(mo->trans && mo->root_quat && (B == 0 || mo->euler || mo->quat));
    double *derived = NULL;
    if (B && (!mo->quat || !mo->euler)) {
        derived = am_alloc_array(T * B, (mo->quat ? 3 : 4) * sizeof(double));
        AMI_CHECK(err, derived, AM_E_NOMEM, "rotations of %zu frames x %zu bones", T, B);
        for (size_t i = 0; i < T * B; i++) {
            if (mo->quat) am_quat_to_euler_xyz(mo->quat + 4 * i, derived + 3 * i);
            else am_euler_xyz_to_quat(mo->euler + 3 * i, derived + 4 * i);
        }
    }
    ami_motion_to_jw(mo, mo->quat ? mo->quat : derived, mo->euler ? mo->euler : derived, w);
    am_free(derived);
    return AM_OK;
}

am_status am_motion_to_json(const am_motion *mo, char **out, am_error *err)
{
    assert(mo && out);
    *out = NULL;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    am_status s = ami_motion_write_jw(mo, &w, err);
    if (s == AM_OK) return ami_jw_take_string(&w, out, err);
    am_buf_free(&b);
    return s;
}

am_status am_motion_write(const am_motion *mo, const char *path, am_error *err)
{
    assert(mo && path);
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    am_status s = ami_motion_write_jw(mo, &w, err);
    if (s == AM_OK) s = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return s;
}
