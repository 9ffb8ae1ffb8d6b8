/* The FK golden vectors of /work/shared/golden/fk (checked against Blender, see its README):
 * rig.json loading, rest frames, lengths, resolved limits, FK of 6 frames, motion.json
 * loading, and rig.json write -> parse keeping FK identical. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "anymove/io.h"

static json_t *load_golden(const char *rel)
{
    json_error_t je;
    json_t *doc = json_load_file(am_test_shared(rel), 0, &je);
    AM_CHECK_MSG(doc, "%s: %s", rel, je.text);
    return doc;
}

static am_rig *load_rig(void)
{
    am_error err = {0};
    am_rig *rig = NULL;
    AM_CHECK_OK(am_rig_load(am_test_shared("golden/fk/testrig.json"), &rig, &err), &err);
    return rig;
}

static double num_at(const json_t *arr, size_t i) { return json_number_value(json_array_get(arr, i)); }

static void report(const char *what, const am_test_diff *d, double tol)
{
    printf("     %s: count %zu, mean %.3g, max %.3g (tol %.0e)\n", what, d->count,
           am_test_diff_mean(d), d->max, tol);
    AM_CHECK_MSG(d->count > 0 && d->max <= tol, "%s: max error %.3g > %.3g (count %zu)", what,
                 d->max, tol, d->count);
}

/* Joints of frame f of testrig_fk.json, FK'd from its euler-by-bone-name: [J][3]. */
static void fk_frame(const am_rig *rig, const json_t *frame, double *joints)
{
    size_t B = rig->bone_count;
    double *euler = calloc(B * 3, sizeof *euler);
    double *pose = calloc(B * 16, sizeof *pose);
    double trans[3], rq[4];
    const json_t *tj = json_object_get(frame, "trans"), *qj = json_object_get(frame, "root_quat");
    for (size_t k = 0; k < 3; k++) trans[k] = num_at(tj, k);
    for (size_t k = 0; k < 4; k++) rq[k] = num_at(qj, k);
    const char *name;
    json_t *e;
    json_object_foreach(json_object_get(frame, "euler"), name, e) {
        int b = am_rig_find_bone(rig, name);
        AM_CHECK_MSG(b >= 0, "frame names unknown bone '%s'", name);
        if (b < 0) continue;
        for (size_t k = 0; k < 3; k++) euler[3 * b + k] = num_at(e, k);
    }
    am_rig_fk(rig, trans, rq, euler, pose);
    am_rig_keypoints(rig, pose, joints);
    free(euler);
    free(pose);
}

static void fk_golden_rig_structure(void)
{
    am_rig *rig = load_rig();
    json_t *g = load_golden("golden/fk/testrig_fk.json");
    if (!rig || !g) goto done;
    const json_t *order = json_object_get(g, "bone_order");
    AM_CHECK(json_array_size(order) == rig->bone_count);
    for (size_t b = 0; b < rig->bone_count && b < json_array_size(order); b++) {
        const char *want = json_string_value(json_array_get(order, b));
        AM_CHECK_MSG(strcmp(rig->bone_names[b], want) == 0, "bone %zu is '%s', want '%s'", b,
                     rig->bone_names[b], want);
        AM_CHECK(rig->parent[b] < (int32_t)b);
    }
    const json_t *jorder = json_object_get(g, "joint_order");
    AM_CHECK(json_array_size(jorder) == rig->joint_count);
    for (size_t j = 0; j < rig->joint_count && j < json_array_size(jorder); j++)
        AM_CHECK(strcmp(rig->joint_names[j], json_string_value(json_array_get(jorder, j))) == 0);
    AM_CHECK(rig->name && strcmp(rig->name, "fk-test-creature") == 0);

    am_test_diff dr = {0}, dl = {0};
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(g, "rest_frames_columns_XYZ"), name, v) {
        int b = am_rig_find_bone(rig, name);
        AM_CHECK_MSG(b >= 0, "unknown bone '%s'", name);
        if (b < 0) continue;
        /* The golden holds the matrix whose columns are the X, Y, Z axes, written row by row
         * (numpy's layout), which is rest_rot's row-major layout too. */
        for (size_t r = 0; r < 3; r++)
            for (size_t c = 0; c < 3; c++)
                am_test_diff_add(&dr, rig->rest_rot[9 * b + 3 * r + c],
                                 num_at(json_array_get(v, r), c));
    }
    json_object_foreach(json_object_get(g, "bone_lengths"), name, v) {
        int b = am_rig_find_bone(rig, name);
        if (b >= 0) am_test_diff_add(&dl, rig->length[b], json_number_value(v));
    }
    report("rest frames", &dr, 1e-9);
    report("lengths", &dl, 1e-9);
    AM_CHECK(dr.count == 9 * rig->bone_count && dl.count == rig->bone_count);

    size_t seen = 0;
    json_object_foreach(json_object_get(g, "resolved_limits_deg"), name, v) {
        int b = am_rig_find_bone(rig, name);
        if (b < 0) continue;
        seen++;
        if (json_is_null(v)) {
            AM_CHECK_MSG(!rig->has_limit[b], "bone '%s' should be free", name);
            continue;
        }
        AM_CHECK_MSG(rig->has_limit[b], "bone '%s' should be limited", name);
        for (size_t a = 0; a < 3; a++)
            for (size_t k = 0; k < 2; k++) {
                double got = AM_DEG(rig->limits[6 * b + 2 * a + k]);
                double want = num_at(json_array_get(v, a), k);
                AM_CHECK_MSG(fabs(got - want) <= 1e-12, "limit %s[%zu][%zu] = %.17g, want %g",
                             name, a, k, got, want);
            }
    }
    AM_CHECK(seen == rig->bone_count);
done:
    json_decref(g);
    am_rig_free(rig);
}

static void fk_golden_frames(void)
{
    am_rig *rig = load_rig();
    json_t *g = load_golden("golden/fk/testrig_fk.json");
    if (!rig || !g) goto done;
    const json_t *frames = json_object_get(g, "frames");
    AM_CHECK(json_array_size(frames) == 6);
    double *joints = calloc(rig->joint_count * 3, sizeof *joints);
    am_test_diff d = {0};
    for (size_t f = 0; f < json_array_size(frames); f++) {
        const json_t *frame = json_array_get(frames, f);
        fk_frame(rig, frame, joints);
        const char *name;
        json_t *v;
        size_t seen = 0;
        json_object_foreach(json_object_get(frame, "joints"), name, v) {
            int j = am_rig_find_joint(rig, name);
            AM_CHECK_MSG(j >= 0, "unknown joint '%s'", name);
            if (j < 0) continue;
            seen++;
            for (size_t k = 0; k < 3; k++) am_test_diff_add(&d, joints[3 * j + k], num_at(v, k));
        }
        AM_CHECK(seen == rig->joint_count);
    }
    report("joint positions of 6 frames", &d, 1e-6);
    free(joints);
done:
    json_decref(g);
    am_rig_free(rig);
}

static void fk_golden_motion_json(void)
{
    am_rig *rig = load_rig();
    am_motion *mo = NULL;
    am_error err = {0};
    json_t *g = load_golden("golden/fk/testrig_motion.json");
    if (!rig || !g) goto done;
    AM_CHECK_OK(am_motion_load(am_test_shared("golden/fk/testrig_motion.json"), rig, &mo, &err),
                &err);
    if (!mo) goto done;
    AM_CHECK(mo->frame_count == 6 && mo->bone_count == rig->bone_count);
    AM_CHECK_NEAR(mo->fps, 30, 0);
    size_t T = mo->frame_count, J = rig->joint_count;
    double *joints = calloc(T * J * 3, sizeof *joints);
    am_rig_fk_clip(rig, mo, joints);
    /* Compare with the file's own joints, matched by name (not through the loader). */
    const json_t *names = json_object_get(g, "joint_names"), *fj = json_object_get(g, "joints");
    am_test_diff d = {0}, dl = {0};
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < json_array_size(names); i++) {
            int j = am_rig_find_joint(rig, json_string_value(json_array_get(names, i)));
            AM_CHECK(j >= 0);
            if (j < 0) continue;
            const json_t *p = json_array_get(json_array_get(fj, t), i);
            for (size_t k = 0; k < 3; k++) {
                am_test_diff_add(&d, joints[3 * (t * J + (size_t)j) + k], num_at(p, k));
                /* The loader kept the joints too, reordered into the rig's order. */
                if (mo->joints)
                    am_test_diff_add(&dl, mo->joints[3 * (t * J + (size_t)j) + k], num_at(p, k));
            }
        }
    report("motion.json FK vs its joints", &d, 1e-6);
    report("motion.json joints as loaded", &dl, 0);
    /* am_motion_compute_joints agrees with am_rig_fk_clip. */
    AM_CHECK_OK(am_motion_compute_joints(mo, rig, &err), &err);
    am_test_diff dc = {0};
    for (size_t i = 0; i < T * J * 3; i++) am_test_diff_add(&dc, mo->joints[i], joints[i]);
    report("compute_joints vs fk_clip", &dc, 0);
    free(joints);
done:
    json_decref(g);
    am_motion_free(mo);
    am_rig_free(rig);
}

/* FK of every golden frame for a rig: [6][J][3]. */
static double *fk_all(const am_rig *rig, const json_t *g)
{
    const json_t *frames = json_object_get(g, "frames");
    size_t J = rig->joint_count, F = json_array_size(frames);
    double *out = calloc(F * J * 3, sizeof *out);
    for (size_t f = 0; f < F; f++) fk_frame(rig, json_array_get(frames, f), out + f * J * 3);
    return out;
}

static void rig_json_roundtrip_keeps_fk(void)
{
    am_rig *rig = load_rig(), *back = NULL, *back2 = NULL;
    am_error err = {0};
    char *text = NULL, *text2 = NULL;
    json_t *g = load_golden("golden/fk/testrig_fk.json");
    if (!rig || !g) goto done;
    AM_CHECK_OK(am_rig_to_json(rig, &text, &err), &err);
    if (!text) goto done;
    AM_CHECK_OK(am_rig_parse(text, strlen(text), "roundtrip.json", &back, &err), &err);
    if (!back) goto done;
    AM_CHECK(back->bone_count == rig->bone_count && back->joint_count == rig->joint_count);
    for (size_t b = 0; b < rig->bone_count; b++) {
        AM_CHECK(strcmp(back->bone_names[b], rig->bone_names[b]) == 0);
        AM_CHECK(back->parent[b] == rig->parent[b]);
        AM_CHECK(back->has_limit[b] == rig->has_limit[b]);
        for (size_t k = 0; k < 6; k++) AM_CHECK(back->limits[6 * b + k] == rig->limits[6 * b + k]);
    }
    AM_CHECK(back->name && strcmp(back->name, "fk-test-creature") == 0);
    /* Resolved per-bone limits replace the stem key; the mirrored side is explicit now. */
    AM_CHECK(strstr(text, "\"forearm_R\"") && !strstr(text, "\"forearm\""));
    double *a = fk_all(rig, g), *b2 = fk_all(back, g);
    size_t n = json_array_size(json_object_get(g, "frames")) * rig->joint_count * 3;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) differ += a[i] != b2[i];
    AM_CHECK_MSG(differ == 0, "%zu of %zu FK coordinates changed after write -> parse", differ, n);
    free(a);
    free(b2);

    /* Writing is deterministic: the re-parsed rig writes the same bytes; the file path too. */
    AM_CHECK_OK(am_rig_to_json(back, &text2, &err), &err);
    AM_CHECK(text2 && strcmp(text, text2) == 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/rig_rt.json", am_test_tmpdir());
    AM_CHECK_OK(am_rig_write(rig, path, &err), &err);
    AM_CHECK_OK(am_rig_load(path, &back2, &err), &err);
    AM_CHECK(back2 && back2->bone_count == rig->bone_count);
done:
    am_free(text);
    am_free(text2);
    json_decref(g);
    am_rig_free(back);
    am_rig_free(back2);
    am_rig_free(rig);
}

static void rig_json_keeps_extra_keys(void)
{
    static const char text[] =
        "{\"name\": \"stick\", \"skin\": {\"file\": \"skin.npz\", \"n\": 3},\n"
        " \"joints\": {\"a\": [0, 0, 0], \"b\": [0, 0, 1], \"c\": [0, 0, 2]},\n"
        " \"bones\": [[\"upper\", \"b\", \"c\", \"lower\"], [\"lower\", \"a\", \"b\", null]],\n"
        " \"version\": 2}";
    am_rig *rig = NULL, *back = NULL;
    am_error err = {0};
    char *out = NULL;
    AM_CHECK_OK(am_rig_parse(text, sizeof text - 1, "stick.json", &rig, &err), &err);
    if (!rig) return;
    AM_CHECK(rig->name && strcmp(rig->name, "stick") == 0);
    AM_CHECK(strcmp(rig->bone_names[0], "lower") == 0);
    AM_CHECK_OK(am_rig_to_json(rig, &out, &err), &err);
    if (out) {
        AM_CHECK(strstr(out, "\"skin\": {") && strstr(out, "\"skin.npz\"") &&
                 strstr(out, "\"version\": 2") && strstr(out, "\"name\": \"stick\""));
        AM_CHECK(strstr(out, "[\"lower\", \"a\", \"b\", null]"));
        AM_CHECK(!strstr(out, "limits_deg"));
        AM_CHECK_OK(am_rig_parse(out, strlen(out), "out.json", &back, &err), &err);
    }
    am_free(out);
    am_rig_free(back);
    am_rig_free(rig);
}

/* SPEC 2.3 with loc, against a hand computation. Bone a: (0,0,0) -> (0,0,1), roll-0 axes
 * X = (1,0,0), Y = (0,0,1), Z = (0,-1,0). Bone b: (0,0,1) -> (1,0,1), axes X = (0,-1,0),
 * Y = (1,0,0), Z = (0,0,1). loc_b = (0.1, 0.2, 0.3) in b's rest frame moves b's head by
 * 0.1 X + 0.2 Y + 0.3 Z = (0.2, -0.1, 0.3): head (0.2, -0.1, 1.3), tail (1.2, -0.1, 1.3).
 * Frame 1 also turns the root 90 degrees about world Z ((x, y) -> (-y, x)) and b 90 degrees
 * about its own X: [R | loc] translates first, so b's head is Rz(90) (0.2, -0.1, 1.3) =
 * (0.1, 0.2, 1.3), and its Y axis turns onto its Z axis (0,0,1): tail (0.1, 0.2, 2.3). */
static void fk_loc_matches_hand_computation(void)
{
    static const char rig_text[] =
        "{\"joints\": {\"o\": [0, 0, 0], \"p\": [0, 0, 1], \"q\": [1, 0, 1]},"
        " \"bones\": [[\"a\", \"o\", \"p\", null], [\"b\", \"p\", \"q\", \"a\"]]}";
    static const double want_head[2][3] = {{0.2, -0.1, 1.3}, {0.1, 0.2, 1.3}};
    static const double want_tail[2][3] = {{1.2, -0.1, 1.3}, {0.1, 0.2, 2.3}};
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    AM_CHECK_OK(am_rig_parse(rig_text, strlen(rig_text), "loc.json", &rig, &err), &err);
    if (!rig) return;
    AM_CHECK_OK(am_motion_create(rig, 2, 30, &mo, &err), &err);
    if (!mo) goto done;
    mo->loc = am_alloc_array(2 * 2 * 3, sizeof *mo->loc);
    for (size_t t = 0; t < 2; t++) {
        double *l = mo->loc + (t * 2 + 1) * 3;
        l[0] = 0.1, l[1] = 0.2, l[2] = 0.3;
        /* the root's loc is ignored: trans places it */
        mo->loc[t * 6] = 5.0;
    }
    double h = sqrt(0.5);
    double rq[4] = {h, 0, 0, h};
    memcpy(mo->root_quat + 4, rq, sizeof rq);
    mo->euler[(1 * 2 + 1) * 3 + 0] = AM_PI / 2;
    double pose[2 * 16], pose2[2 * 16], heads[6], tails[6], joints[2 * 3 * 3];
    am_test_diff d = {0};
    am_rig_fk_clip(rig, mo, joints);
    for (size_t t = 0; t < 2; t++) {
        am_motion_pose(rig, mo, t, pose);
        am_rig_bone_ends(rig, pose, heads, tails);
        for (int k = 0; k < 3; k++) {
            am_test_diff_add(&d, heads[3 + k], want_head[t][k]);
            am_test_diff_add(&d, tails[3 + k], want_tail[t][k]);
            /* the keypoint of joint q is b's tail; p is a's tail, which loc does not move */
            am_test_diff_add(&d, joints[(t * 3 + 2) * 3 + (size_t)k], want_tail[t][k]);
        }
        AM_CHECK_NEAR(joints[(t * 3 + 1) * 3 + 2], 1.0, 1e-15);
        /* The other entry points agree bit for bit. */
        am_rig_fk_loc(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + 6 * t, mo->loc + 6 * t, pose2);
        AM_CHECK(memcmp(pose, pose2, sizeof pose) == 0);
        double rot[18];
        for (size_t b = 0; b < 2; b++) am_euler_xyz_to_mat3(mo->euler + 6 * t + 3 * b, rot + 9 * b);
        am_rig_fk_rot_loc(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, rot, mo->loc + 6 * t, pose2);
        AM_CHECK(memcmp(pose, pose2, sizeof pose) == 0);
        /* loc NULL is the plain FK: b's head back at (0, 0, 1) (turned by the root). */
        am_rig_fk_loc(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + 6 * t, NULL, pose2);
        am_rig_fk(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + 6 * t, pose);
        AM_CHECK(memcmp(pose, pose2, sizeof pose) == 0);
        AM_CHECK_NEAR(pose[16 + 11], 1.0, 1e-15);
    }
    report("FK with loc vs hand computation", &d, 1e-15);
    /* Skinning follows loc: a point on b at rest (0.5, 0, 1) rides with b's frame. */
    float rest[3] = {0.5f, 0.0f, 1.0f}, out[6], w[4] = {1, 0, 0, 0};
    int32_t bi[4] = {1, 0, 0, 0};
    AM_CHECK_OK(am_skin_reconstruct(rig, mo, 1, rest, bi, w, out, &err), &err);
    AM_CHECK_NEAR(out[0], 0.7, 1e-6);
    AM_CHECK_NEAR(out[1], -0.1, 1e-6);
    AM_CHECK_NEAR(out[2], 1.3, 1e-6);
    AM_CHECK_NEAR(out[3], 0.1, 1e-6); /* frame 1: along b's turned Y axis, world Z */
    AM_CHECK_NEAR(out[4], 0.2, 1e-6);
    AM_CHECK_NEAR(out[5], 1.8, 1e-6);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

#define AM_TESTS(X) \
    X(fk_golden_rig_structure) X(fk_golden_frames) X(fk_golden_motion_json) \
    X(rig_json_roundtrip_keeps_fk) X(rig_json_keeps_extra_keys) \
    X(fk_loc_matches_hand_computation)
AM_TEST_MAIN(AM_TESTS)
