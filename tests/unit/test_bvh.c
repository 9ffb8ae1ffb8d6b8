/* BVH reader, writer and rig/motion conversion. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/bvh.h"
#include "anymove/math.h"

/* Three joints, mixed channel orders, lower-case keywords, a position channel on a child. */
static const char ami_small[] =
    "HIERARCHY\n"
    "ROOT hips\n"
    "{\n"
    "\tOFFSET 0 1 0\n"
    "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "\tjoint spine\n"
    "\t{\n"
    "\t\toffset 0 2 0\n"
    "\t\tchannels 3 Xrotation Yrotation Zrotation\n"
    "\t\tend site\n"
    "\t\t{\n"
    "\t\t\tOFFSET 0 1 0\n"
    "\t\t}\n"
    "\t}\n"
    "\tJOINT leg\n"
    "\t{\n"
    "\t\tOFFSET 1 -1 0\n"
    "\t\tCHANNELS 4 Xposition Yrotation Xrotation Zrotation\n"
    "\t\tEnd Site\n"
    "\t\t{\n"
    "\t\t\tOFFSET 0 -2 0.5\n"
    "\t\t}\n"
    "\t}\n"
    "}\n"
    "MOTION\n"
    "Frames: 2\n"
    "Frame Time: 0.04\n"
    "0 1 0 10 20 30 5 6 7 1 -10 20 30\n"
    "0.5 1 0 -40 50 -60 15 -25 35 1.2 80 -70 10\n";

static am_status ami_parse_str(const char *s, am_bvh **out, am_error *err)
{
    return am_bvh_parse(s, strlen(s), "t.bvh", out, err);
}

static void bvh_parses_small_file(void)
{
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (!b) return;
    AM_CHECK(b->joint_count == 3);
    AM_CHECK(b->channel_count == 13);
    AM_CHECK(b->frame_count == 2);
    AM_CHECK_NEAR(b->frame_time, 0.04, 0);
    AM_CHECK(strcmp(b->joints[1].name, "spine") == 0 && b->joints[1].parent == 0);
    AM_CHECK(b->joints[2].parent == 0 && b->joints[2].has_end);
    AM_CHECK(b->joints[0].channels[3] == AM_BVH_ZROT && b->joints[0].channels[4] == AM_BVH_XROT);
    AM_CHECK(b->joints[2].channel_start == 9 && b->joints[2].channel_count == 4);
    AM_CHECK_NEAR(b->frames[13 + 12], 10, 0);
    AM_CHECK_NEAR(am_bvh_rest_size(b), sqrt(1 + 36 + 0.25), 1e-12);
    am_bvh_free(b);
}

/* "Zrotation Xrotation Yrotation" multiplies as Rz * Rx * Ry. */
static void bvh_rotations_multiply_in_file_order(void)
{
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (!b) return;
    double R[9], A[9], Bm[9], Cm[9], W[9];
    am_bvh_joint_rotation(b, 0, 0, R);
    am_mat3_rot_z(AM_RAD(10), A);
    am_mat3_rot_x(AM_RAD(20), Bm);
    am_mat3_rot_y(AM_RAD(30), Cm);
    am_mat3_mul(A, Bm, W);
    am_mat3_mul(W, Cm, W);
    for (int k = 0; k < 9; k++) AM_CHECK_NEAR(R[k], W[k], 1e-12);
    /* leg: position channel replaces offset x; rotations Y X Z */
    double rot[27], pos[9], ends[9];
    am_bvh_frame_positions(b, 1, rot, pos, ends);
    AM_CHECK_NEAR(pos[0], 0.5, 1e-12);
    double Rr[9], d[3], want[3];
    am_bvh_joint_rotation(b, 1, 0, Rr);
    double off[3] = {1.2, -1, 0};
    am_mat3_mul_vec3(Rr, off, d);
    am_vec3_add(pos, d, want);
    for (int k = 0; k < 3; k++) AM_CHECK_NEAR(pos[6 + k], want[k], 1e-12);
    am_bvh_free(b);
}

typedef struct {
    const char *text;
    am_status code;
    uint32_t line, col;
} ami_bad_case;

static void bvh_rejects_malformed_input(void)
{
    const ami_bad_case cases[] = {
        /* missing MOTION: the error sits at the end of the file */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
         "End Site\n{\nOFFSET 0 1 0\n}\n}\n", AM_E_SYNTAX, 11, 1},
        /* CHANNELS 3 followed by two names */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation\nEnd Site\n",
         AM_E_SYNTAX, 6, 1},
        /* 7 channels */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 7 Xrotation\n", AM_E_VALUE, 5, 10},
        /* frame line too short */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 2 Xrotation Yrotation\nEnd Site\n{\n"
         "OFFSET 0 1 0\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n1 2\n3\n", AM_E_SHAPE, 15, 2},
        /* frame line too long */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 2 Xrotation Yrotation\nEnd Site\n{\n"
         "OFFSET 0 1 0\n}\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1 2 3\n", AM_E_SHAPE, 14, 5},
        /* NaN */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 2 Xrotation Yrotation\nEnd Site\n{\n"
         "OFFSET 0 1 0\n}\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1 nan\n", AM_E_NONFINITE, 14, 3},
        /* T = 0 */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 2 Xrotation Yrotation\nEnd Site\n{\n"
         "OFFSET 0 1 0\n}\n}\nMOTION\nFrames: 0\nFrame Time: 0.1\n", AM_E_EMPTY, 12, 9},
        /* fewer frame lines than Frames: */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\nEnd Site\n{\n"
         "OFFSET 0 1 0\n}\n}\nMOTION\nFrames: 3\nFrame Time: 0.1\n1\n2\n", AM_E_TRUNCATED, 0, 0},
        /* frame time 0 */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\n"
         "Frame Time: 0\n1\n", AM_E_VALUE, 9, 13},
        /* unknown channel */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Wrotation\n}\n", AM_E_SYNTAX, 5, 12},
        /* duplicate joint */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\nJOINT a\n", AM_E_DUPLICATE, 6, 7},
        {"", AM_E_SYNTAX, 1, 1},
        /* two skeletons */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nROOT b\n", AM_E_UNSUPPORTED, 7, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        am_bvh *b = NULL;
        am_error err = {0};
        am_status s = ami_parse_str(cases[i].text, &b, &err);
        char msg[600];
        AM_CHECK_MSG(s == cases[i].code, "case %zu: %s, want %s (%s)", i, am_status_name(s),
                     am_status_name(cases[i].code), am_error_format(msg, sizeof msg, &err));
        AM_CHECK(am_status_fault(s) == AM_FAULT_INPUT);
        if (cases[i].line)
            AM_CHECK_MSG(err.line == cases[i].line && err.col == cases[i].col,
                         "case %zu: at %u:%u, want %u:%u (%s)", i, err.line, err.col,
                         cases[i].line, cases[i].col, am_error_format(msg, sizeof msg, &err));
        AM_CHECK(b == NULL);
    }
}

/* Every prefix of a valid file is a clean error (or, for whole-file prefixes, success). */
static void bvh_prefixes_fail_cleanly(void)
{
    size_t n = strlen(ami_small);
    for (size_t len = 0; len < n; len++) {
        am_bvh *b = NULL;
        am_error err = {0};
        am_status s = am_bvh_parse(ami_small, len, "p.bvh", &b, &err);
        /* a cut inside the last number of the last frame still reads as a number */
        if (len > (size_t)(strrchr(ami_small, ' ') - ami_small) && s == AM_OK) {
            am_bvh_free(b);
            continue;
        }
        AM_CHECK_MSG(s < 0, "prefix %zu parsed", len);
        AM_CHECK(b == NULL);
    }
}

static void bvh_allocation_failures_are_clean(void)
{
    for (uint64_t lim = 1; lim < 64; lim++) {
        am_test_alloc_limit(lim);
        am_bvh *b = NULL;
        am_error err = {0};
        am_status s = ami_parse_str(ami_small, &b, &err);
        am_test_alloc_limit(0);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        am_bvh_free(b);
        if (s == AM_OK) break;
    }
}

/* Conversions under every allocation limit: AM_E_NOMEM (never a crash or a leak), until the
 * limit is high enough. */
static void bvh_conversions_survive_allocation_failures(void)
{
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (!b) return;
    bool done = false;
    for (uint64_t lim = 1; lim < 400 && !done; lim++) {
        am_rig *rig = NULL;
        am_motion *mo = NULL;
        am_bvh *back = NULL;
        am_test_alloc_limit(lim);
        am_status s = am_rig_from_bvh(b, NULL, &rig, &err);
        if (s == AM_OK) s = am_motion_from_bvh(b, rig, NULL, &mo, NULL, &err);
        if (s == AM_OK) s = am_bvh_from_motion(rig, mo, NULL, &back, &err);
        am_test_alloc_limit(0);
        AM_CHECK_MSG(s == AM_OK || s == AM_E_NOMEM, "limit %llu: %s", (unsigned long long)lim, am_status_name(s));
        done = s == AM_OK;
        am_bvh_free(back);
        am_motion_free(mo);
        am_rig_free(rig);
    }
    AM_CHECK(done);
    am_bvh_free(b);
}

static void bvh_write_then_parse_is_identical(void)
{
    am_bvh *b = NULL, *c = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (!b) return;
    am_buf o = {0}, o2 = {0};
    AM_CHECK_OK(am_bvh_to_buf(b, &o, &err), &err);
    AM_CHECK_OK(am_bvh_parse(o.data, o.len, "w.bvh", &c, &err), &err);
    if (c) {
        AM_CHECK(c->joint_count == b->joint_count && c->channel_count == b->channel_count);
        for (size_t i = 0; i < b->frame_count * b->channel_count; i++)
            AM_CHECK_NEAR(c->frames[i], b->frames[i], 0);
        AM_CHECK_OK(am_bvh_to_buf(c, &o2, &err), &err);
        AM_CHECK(o.len == o2.len && memcmp(o.data, o2.data, o.len) == 0); /* deterministic */
    }
    am_buf_free(&o);
    am_buf_free(&o2);
    am_bvh_free(c);
    am_bvh_free(b);
}

/* BVH -> rig + motion -> BVH: the rig's FK equals the BVH's positions in world axes, and the
 * written BVH reproduces every joint position. Returns the worst error / size. */
static double ami_check_roundtrip(const am_bvh *b, am_bvh_axes axes, size_t frame_step)
{
    am_error err = {0};
    am_bvh_opts o = {.axes = axes};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_bvh *back = NULL;
    double worst = INFINITY;
    size_t dropped = 0;
    AM_CHECK_OK(am_rig_from_bvh(b, &o, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_bvh(b, rig, &o, &mo, &dropped, &err), &err);
    o.like = b;
    o.axes = axes == AM_BVH_AXES_AUTO ? am_bvh_detect_axes(b) : axes;
    if (mo) AM_CHECK_OK(am_bvh_from_motion(rig, mo, &o, &back, &err), &err);
    if (!back) goto done;
    AM_CHECK(dropped == 0);
    AM_CHECK(back->joint_count == b->joint_count && back->frame_count == b->frame_count);
    size_t J = b->joint_count;
    double size = am_bvh_rest_size(b), C[9];
    if (o.axes == AM_BVH_AXES_Z_UP) am_mat3_identity(C);
    else {
        static const double yup[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
        memcpy(C, yup, sizeof C);
    }
    double *rot = malloc(J * 9 * sizeof(double)), *p = malloc(J * 3 * sizeof(double));
    double *q = malloc(J * 3 * sizeof(double)), *e1 = malloc(J * 3 * sizeof(double));
    double *e2 = malloc(J * 3 * sizeof(double));
    am_test_diff fk = {0}, rt = {0};
    worst = 0;
    for (size_t t = 0; t < b->frame_count; t += frame_step) {
        am_bvh_frame_positions(b, t, rot, p, e1);
        am_bvh_frame_positions(back, t, rot, q, e2);
        for (size_t j = 0; j < J; j++) {
            for (int k = 0; k < 3; k++) am_test_diff_add(&rt, p[j * 3 + k], q[j * 3 + k]);
            if (b->joints[j].has_end)
                for (int k = 0; k < 3; k++) am_test_diff_add(&rt, e1[j * 3 + k], e2[j * 3 + k]);
            /* the rig's keypoint of BVH joint j, against the file position mapped to world */
            int jj = am_rig_find_joint(rig, b->joints[j].name);
            double w[3];
            am_mat3_mul_vec3(C, p + j * 3, w);
            const double *kp = mo->joints + (t * rig->joint_count + (size_t)jj) * 3;
            for (int k = 0; k < 3; k++) am_test_diff_add(&fk, kp[k], w[k]);
        }
    }
    AM_CHECK_MSG(fk.max <= 1e-6 * size, "rig FK vs BVH: max %.3g (size %.3g)", fk.max, size);
    AM_CHECK_MSG(rt.max <= 1e-6 * size, "round trip: max %.3g (size %.3g)", rt.max, size);
    worst = fmax(fk.max, rt.max) / size;
    free(rot);
    free(p);
    free(q);
    free(e1);
    free(e2);
done:
    am_bvh_free(back);
    am_motion_free(mo);
    am_rig_free(rig);
    return worst;
}

static void bvh_rig_roundtrip_small(void)
{
    am_bvh *b = NULL;
    am_error err = {0};
    /* ami_small without the leg's position channel: a rigid rig cannot slide a joint */
    char *txt = strdup(ami_small);
    char *p4 = strstr(txt, "CHANNELS 4 Xposition");
    memcpy(p4, "CHANNELS 3          ", 20);
    char *f1 = strstr(txt, "7 1 -10");
    memmove(f1 + 2, f1 + 4, strlen(f1 + 4) + 1);
    char *f2 = strstr(txt, "35 1.2 80");
    memmove(f2 + 3, f2 + 7, strlen(f2 + 7) + 1);
    AM_CHECK_OK(ami_parse_str(txt, &b, &err), &err);
    if (b) {
        ami_check_roundtrip(b, AM_BVH_AXES_Y_UP, 1);
        ami_check_roundtrip(b, AM_BVH_AXES_Z_UP, 1);
    }
    am_bvh_free(b);
    free(txt);
}

/* Every channel order survives the writer's Euler decomposition, including gimbal lock. */
static void bvh_every_rotation_order_roundtrips(void)
{
    static const char *orders[6] = {"Xrotation Yrotation Zrotation", "Xrotation Zrotation Yrotation",
                                    "Yrotation Xrotation Zrotation", "Yrotation Zrotation Xrotation",
                                    "Zrotation Xrotation Yrotation", "Zrotation Yrotation Xrotation"};
    for (int o = 0; o < 6; o++) {
        char txt[2048];
        snprintf(txt, sizeof txt,
                 "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition %s\n"
                 "JOINT a\n{\nOFFSET 0 1 0\nCHANNELS 3 %s\nJOINT b\n{\nOFFSET 0.3 1 0.2\n"
                 "CHANNELS 3 %s\nEnd Site\n{\nOFFSET 0 0 1\n}\n}\n}\n}\nMOTION\nFrames: 4\n"
                 "Frame Time: 0.01\n"
                 "0 0 0 10 20 30 40 50 60 -70 80 -90\n"
                 "1 2 3 170 -89.99 10 90 90 90 -90 90 -90\n"
                 "0 0 0 0 90 0 45 -90 0 0 0 0\n"
                 "-1 0 2 200 100 -300 33 44 55 66 77 88\n",
                 orders[o], orders[(o + 1) % 6], orders[(o + 2) % 6]);
        am_bvh *b = NULL;
        am_error err = {0};
        AM_CHECK_OK(ami_parse_str(txt, &b, &err), &err);
        if (b) ami_check_roundtrip(b, AM_BVH_AXES_Y_UP, 1);
        am_bvh_free(b);
    }
}

/* Any rig (not from a BVH: unconnected children, bones in any direction) -> BVH -> rig + motion:
 * every bone head follows the same path. */
static void bvh_from_any_rig_keeps_bone_heads(void)
{
    static const char *jn[] = {"pelvis", "chest", "head", "hipL", "kneeL", "footL", "hipR", "kneeR", "footR"};
    static const double jp[] = {0, 0, 1,   0, -0.1, 1.5,   0, -0.15, 1.8,
                                0.15, 0, 0.95,   0.15, -0.02, 0.5,   0.15, 0, 0.05,
                                -0.15, 0, 0.95,  -0.15, -0.02, 0.5,  -0.15, 0, 0.05};
    static const char *bn[] = {"spine", "neck", "thighL", "shinL", "thighR", "shinR"};
    static const char *bh[] = {"pelvis", "chest", "hipL", "kneeL", "hipR", "kneeR"};
    static const char *bt[] = {"chest", "head", "kneeL", "footL", "kneeR", "footR"};
    static const char *bp[] = {NULL, "spine", "spine", "thighL", "spine", "thighR"};
    am_rig_desc d = {.joint_count = 9, .joint_names = jn, .joint_pos = jp, .bone_count = 6,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL, *rig2 = NULL;
    am_motion *mo = NULL, *mo2 = NULL;
    am_bvh *b = NULL, *b2 = NULL;
    am_error err = {0};
    am_buf o = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    if (!rig) return;
    size_t T = 20, B = rig->bone_count;
    AM_CHECK_OK(am_motion_create(rig, T, 25, &mo, &err), &err);
    if (!mo) goto done;
    for (size_t t = 0; t < T; t++) {
        double e[3] = {0.3 * sin(0.3 * (double)t), 0.2, -0.4 * cos(0.2 * (double)t)};
        am_euler_xyz_to_quat(e, mo->root_quat + t * 4);
        am_vec3_set(mo->trans + t * 3, 0.01 * (double)t, 0, 1);
        for (size_t bb = 1; bb < B; bb++)
            am_vec3_set(mo->euler + (t * B + bb) * 3, 0.5 * sin((double)(t + bb)), 0.3 * cos((double)t),
                        0.2 * (double)bb - 0.4);
    }
    AM_CHECK_OK(am_motion_compute_joints(mo, rig, &err), &err);
    am_bvh_opts bo = {.axes = AM_BVH_AXES_Y_UP};
    AM_CHECK_OK(am_bvh_from_motion(rig, mo, &bo, &b, &err), &err);
    if (b) AM_CHECK_OK(am_bvh_to_buf(b, &o, &err), &err);
    if (o.data) AM_CHECK_OK(am_bvh_parse(o.data, o.len, "any.bvh", &b2, &err), &err);
    if (b2) AM_CHECK_OK(am_rig_from_bvh(b2, &bo, &rig2, &err), &err);
    if (rig2) AM_CHECK_OK(am_motion_from_bvh(b2, rig2, &bo, &mo2, NULL, &err), &err);
    if (!mo2) goto done;
    double *p1 = malloc(B * 16 * sizeof *p1), *p2 = malloc(rig2->bone_count * 16 * sizeof *p2);
    double *h1 = malloc(B * 3 * sizeof *h1), *h2 = malloc(rig2->bone_count * 3 * sizeof *h2);
    double *t1 = malloc(B * 3 * sizeof *t1), *t2 = malloc(rig2->bone_count * 3 * sizeof *t2);
    am_test_diff diff = {0};
    for (size_t t = 0; t < T; t++) {
        am_rig_fk(rig, mo->trans + t * 3, mo->root_quat + t * 4, mo->euler + t * B * 3, p1);
        am_rig_fk(rig2, mo2->trans + t * 3, mo2->root_quat + t * 4, mo2->euler + t * rig2->bone_count * 3, p2);
        am_rig_bone_ends(rig, p1, h1, t1);
        am_rig_bone_ends(rig2, p2, h2, t2);
        for (size_t bb = 0; bb < B; bb++) {
            int k = am_rig_find_bone(rig2, rig->bone_names[bb]);
            AM_CHECK(k >= 0);
            if (k < 0) continue;
            for (int c = 0; c < 3; c++) am_test_diff_add(&diff, h1[bb * 3 + c], h2[(size_t)k * 3 + c]);
            bool leaf = true;
            for (size_t cb = 0; cb < B; cb++) leaf &= rig->parent[cb] != (int32_t)bb;
            if (leaf) /* leaves keep their tails as End Sites */
                for (int c = 0; c < 3; c++) am_test_diff_add(&diff, t1[bb * 3 + c], t2[(size_t)k * 3 + c]);
        }
    }
    AM_CHECK_MSG(diff.max < 1e-6 * 1.8, "bone heads moved by %.3g (mean %.3g)", diff.max, am_test_diff_mean(&diff));
    free(p1), free(p2), free(h1), free(h2), free(t1), free(t2);
done:
    am_buf_free(&o);
    am_motion_free(mo2);
    am_motion_free(mo);
    am_rig_free(rig2);
    am_rig_free(rig);
    am_bvh_free(b2);
    am_bvh_free(b);
}

static void ami_roundtrip_file(const char *path, const char *name, void *user)
{
    (void)user;
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_bvh_load(path, NULL, &b, &err), &err);
    if (b) {
        double w = ami_check_roundtrip(b, AM_BVH_AXES_AUTO, 7);
        printf("  %s: %zu joints, %zu frames, worst %.2e of size\n", name, b->joint_count,
               b->frame_count, w);
    }
    am_bvh_free(b);
}

static void bvh_shared_data_roundtrips(void)
{
    size_t files = am_test_each_file(am_test_shared("data/bvh"), ".bvh", ami_roundtrip_file, NULL);
    printf("  %zu shared BVH files\n", files);
}

static void bvh_axes_detection(void)
{
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (b) AM_CHECK(am_bvh_detect_axes(b) == AM_BVH_AXES_Y_UP);
    am_bvh_free(b);
}

#define AM_TESTS(X)                                                                            \
    X(bvh_parses_small_file) X(bvh_rotations_multiply_in_file_order)                            \
    X(bvh_rejects_malformed_input) X(bvh_prefixes_fail_cleanly)                                 \
    X(bvh_allocation_failures_are_clean) X(bvh_conversions_survive_allocation_failures)      \
    X(bvh_write_then_parse_is_identical)                                                        \
    X(bvh_rig_roundtrip_small) X(bvh_every_rotation_order_roundtrips)                           \
    X(bvh_shared_data_roundtrips) X(bvh_axes_detection) X(bvh_from_any_rig_keeps_bone_heads)
AM_TEST_MAIN(AM_TESTS)
