/* BVH reader, writer and rig/motion conversion. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/bvh.h"
#include "anymove/gltf.h"
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
        /* a positive frame time outside the frame rates every loader accepts (am_fps_valid) */
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\n"
         "Frame Time: 1e300\n1\n", AM_E_VALUE, 9, 13},
        {"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\n"
         "Frame Time: 1e-5\n1\n", AM_E_VALUE, 9, 13},
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
        if (s == AM_OK) s = am_motion_from_bvh(b, rig, NULL, &mo, &err);
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

static void ami_axes_of(am_bvh_axes axes, double C[9])
{
    static const double yup[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
    if (axes == AM_BVH_AXES_Z_UP) am_mat3_identity(C);
    else memcpy(C, yup, sizeof yup);
}

/* BVH -> rig + motion -> BVH: the rig's FK equals the BVH's positions in world axes, and the
 * written BVH (always Y up) reproduces every joint and End Site position in world axes.
 * Returns the worst error / size. */
static double ami_check_roundtrip(const am_bvh *b, am_bvh_axes axes, size_t frame_step)
{
    am_error err = {0};
    am_bvh_opts o = {.axes = axes};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_bvh *back = NULL;
    double worst = INFINITY;
    AM_CHECK_OK(am_rig_from_bvh(b, &o, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_bvh(b, rig, &o, &mo, &err), &err);
    o.like = b;
    if (mo) AM_CHECK_OK(am_bvh_from_motion(rig, mo, &o, &back, &err), &err);
    if (!back) goto done;
    AM_CHECK(back->joint_count == b->joint_count && back->frame_count == b->frame_count);
    AM_CHECK(back->frame_time == b->frame_time);
    size_t J = b->joint_count;
    double size = am_bvh_rest_size(b), C[9], Cy[9];
    ami_axes_of(axes, C);
    ami_axes_of(AM_BVH_AXES_Y_UP, Cy);
    double *rot = malloc(J * 9 * sizeof(double)), *p = malloc(J * 3 * sizeof(double));
    double *q = malloc(J * 3 * sizeof(double)), *e1 = malloc(J * 3 * sizeof(double));
    double *e2 = malloc(J * 3 * sizeof(double));
    am_test_diff fk = {0}, rt = {0};
    worst = 0;
    for (size_t t = 0; t < b->frame_count; t += frame_step) {
        am_bvh_frame_positions(b, t, rot, p, e1);
        am_bvh_frame_positions(back, t, rot, q, e2);
        for (size_t j = 0; j < J; j++) {
            double wp[3], wq[3];
            am_mat3_mul_vec3(C, p + j * 3, wp);
            am_mat3_mul_vec3(Cy, q + j * 3, wq);
            for (int k = 0; k < 3; k++) am_test_diff_add(&rt, wp[k], wq[k]);
            if (b->joints[j].has_end) {
                am_mat3_mul_vec3(C, e1 + j * 3, wp);
                am_mat3_mul_vec3(Cy, e2 + j * 3, wq);
                for (int k = 0; k < 3; k++) am_test_diff_add(&rt, wp[k], wq[k]);
            }
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

/* A position channel on a child joint (ami_small's leg) is that bone's loc: FK follows the
 * file exactly and the written BVH carries it back as position channels. */
static void bvh_sliding_joint_becomes_loc(void)
{
    am_bvh *b = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (!b) return;
    ami_check_roundtrip(b, AM_BVH_AXES_Y_UP, 1);
    ami_check_roundtrip(b, AM_BVH_AXES_Z_UP, 1);
    AM_CHECK_OK(am_rig_from_bvh(b, NULL, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_bvh(b, rig, NULL, &mo, &err), &err);
    if (mo) {
        int leg = am_rig_find_bone(rig, "leg"), spine = am_rig_find_bone(rig, "spine");
        size_t B = rig->bone_count;
        AM_CHECK(mo->loc != NULL && leg > 0 && spine > 0);
        /* Frame 1 moves the leg 0.2 along file x = world x: loc is that, in the leg's frame. */
        double w[3];
        if (mo->loc) {
            am_mat3_mul_vec3(rig->rest_rot + 9 * (size_t)leg, mo->loc + (B + (size_t)leg) * 3, w);
            AM_CHECK_NEAR(w[0], 0.2, 1e-12);
            AM_CHECK_NEAR(w[1], 0, 1e-12);
            AM_CHECK_NEAR(w[2], 0, 1e-12);
            AM_CHECK(mo->loc[(size_t)leg * 3] == 0 && mo->loc[(B + (size_t)spine) * 3] == 0);
        }
        /* The hips' bone does not end at the sliding leg: it points at the spine. */
        AM_CHECK(strcmp(rig->joint_names[rig->tail_joint[0]], "spine") == 0);
    }
    am_motion_free(mo);
    am_rig_free(rig);
    am_bvh_free(b);
}

/* Frame times come back exactly: 1 / fps is written so that it reads back as the same double. */
static void bvh_frame_time_is_exact(void)
{
    static const double fps[] = {24, 25, 29.97, 30, 50, 60, 100.0 / 3.0, 120, 119.88};
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    for (size_t i = 0; b && i < sizeof fps / sizeof fps[0]; i++) {
        b->frame_time = 1.0 / fps[i];
        am_buf o = {0};
        am_bvh *c = NULL;
        am_rig *rig = NULL;
        am_motion *mo = NULL;
        AM_CHECK_OK(am_bvh_to_buf(b, &o, &err), &err);
        if (o.data) AM_CHECK_OK(am_bvh_parse(o.data, o.len, "ft.bvh", &c, &err), &err);
        if (c) AM_CHECK_MSG(c->frame_time == b->frame_time, "%.17g fps: frame time %.17g != %.17g", fps[i],
                            c->frame_time, b->frame_time);
        if (c) AM_CHECK_OK(am_rig_from_bvh(c, NULL, &rig, &err), &err);
        if (rig) AM_CHECK_OK(am_motion_from_bvh(c, rig, NULL, &mo, &err), &err);
        if (mo) AM_CHECK(mo->fps == 1.0 / b->frame_time);
        am_motion_free(mo);
        am_rig_free(rig);
        am_bvh_free(c);
        am_buf_free(&o);
    }
    am_bvh_free(b);
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
    if (rig2) AM_CHECK_OK(am_motion_from_bvh(b2, rig2, &bo, &mo2, &err), &err);
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

/* Read with its axes, a human stands up: the head above the feet in world z. */
static void ami_check_upright(const am_bvh *b, am_bvh_axes axes, const char *name)
{
    am_bvh_opts o = {.axes = axes};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_from_bvh(b, &o, &rig, &err), &err);
    if (!rig) return;
    double head = -1e300, low = 1e300;
    for (size_t j = 0; j < rig->joint_count; j++) {
        const char *n = rig->joint_names[j];
        double z = rig->joint_rest[3 * j + 2];
        if (strstr(n, "Head") || strstr(n, "head")) head = fmax(head, z);
        low = fmin(low, z);
    }
    AM_CHECK_MSG(head > low + 0.5 * am_bvh_rest_size(b) * 0.5, "%s: not upright (head %g, lowest %g)", name,
                 head, low);
    am_rig_free(rig);
}

static void ami_roundtrip_file(const char *path, const char *name, void *user)
{
    (void)user;
    int z = am_test_bvh_z_up(name);
    AM_CHECK_MSG(z >= 0, "%s: up axis unknown to the tests (am_test_bvh_z_up)", path);
    if (z < 0) return;
    am_bvh_axes axes = z ? AM_BVH_AXES_Z_UP : AM_BVH_AXES_Y_UP;
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_bvh_load(path, NULL, &b, &err), &err);
    if (b) {
        ami_check_upright(b, axes, name);
        double w = ami_check_roundtrip(b, axes, 7);
        printf("  %s: %zu joints, %zu frames, worst %.2e of size\n", name, b->joint_count,
               b->frame_count, w);
    }
    am_bvh_free(b);
}

/* Every BVH in shared/data: read with its axes -> rig + motion -> BVH (Y up) -> every joint
 * and End Site to 1e-6 of the skeleton size. */
static void bvh_shared_data_roundtrips(void)
{
    size_t files = am_test_each_file(am_test_shared("data/bvh"), ".bvh", ami_roundtrip_file, NULL);
    printf("  %zu shared BVH files\n", files);
    AM_CHECK(files == 7);
}

/* Read Y up by default: no guess. The small file's spine points up in the file (y) and up in
 * the world (z); asked for Z_UP, the same file's spine points along world y. */
static void bvh_reads_y_up_by_default(void)
{
    am_bvh *b = NULL;
    am_rig *rig = NULL, *zr = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_parse_str(ami_small, &b, &err), &err);
    if (b) AM_CHECK_OK(am_rig_from_bvh(b, NULL, &rig, &err), &err);
    am_bvh_opts z = {.axes = AM_BVH_AXES_Z_UP};
    if (b) AM_CHECK_OK(am_rig_from_bvh(b, &z, &zr, &err), &err);
    if (rig && zr) {
        int s1 = am_rig_find_joint(rig, "spine"), s2 = am_rig_find_joint(zr, "spine");
        AM_CHECK_NEAR(rig->joint_rest[3 * s1 + 2], 3, 1e-12);
        AM_CHECK_NEAR(zr->joint_rest[3 * s2 + 1], 3, 1e-12);
    }
    am_rig_free(rig);
    am_rig_free(zr);
    am_bvh_free(b);
}

/* Every creature of shared/data/gltf: its rig and clips (loc where joints slide) -> BVH text
 * (Y up) -> read back with the default axes -> rig + motion: every bone head and every leaf
 * tail follows the same path, to 1e-6 of the body size. The fox does not come back standing
 * on its tail. */
static void bvh_gltf_creatures_roundtrip(void)
{
    static const char *const models[] = {
        "data/gltf/quaternius/Fox.glb",    "data/gltf/quaternius/Husky.glb",
        "data/gltf/quaternius/Spider.glb", "data/gltf/quaternius/Snake.glb",
        "data/gltf/quaternius/Frog.glb",   "data/gltf/quaternius/Trex.glb",
        "data/gltf/quaternius/Dolphin.glb", "data/gltf/quaternius/KnightCharacter.glb",
        "data/gltf/khronos_fox/Fox.glb",   "data/gltf/khronos_simpleskin/simple_skin.gltf"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        am_error err = {0};
        am_gltf *doc = NULL;
        am_rig *rig = NULL;
        AM_CHECK_OK(am_gltf_load(am_test_shared(models[m]), NULL, &doc, &err), &err);
        if (doc) AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
        if (!rig) {
            am_gltf_free(doc);
            continue;
        }
        size_t B = rig->bone_count, clips = doc->animation_count ? doc->animation_count : 1;
        double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
        for (size_t j = 0; j < rig->joint_count; j++)
            for (int k = 0; k < 3; k++) {
                lo[k] = fmin(lo[k], rig->joint_rest[3 * j + (size_t)k]);
                hi[k] = fmax(hi[k], rig->joint_rest[3 * j + (size_t)k]);
            }
        double size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
        am_test_diff d = {0};
        size_t with_loc = 0;
        for (size_t c = 0; c < clips; c++) {
            am_motion *mo = NULL, *mo2 = NULL;
            am_bvh *b = NULL, *b2 = NULL;
            am_rig *rig2 = NULL;
            am_buf text = {0};
            AM_CHECK_OK(am_motion_from_gltf(doc, -1, rig, doc->animation_count ? (int)c : -1, 30, &mo, &err), &err);
            if (mo) AM_CHECK_OK(am_bvh_from_motion(rig, mo, NULL, &b, &err), &err);
            if (b) AM_CHECK_OK(am_bvh_to_buf(b, &text, &err), &err);
            if (text.data) AM_CHECK_OK(am_bvh_parse(text.data, text.len, "creature.bvh", &b2, &err), &err);
            if (b2) AM_CHECK_OK(am_rig_from_bvh(b2, NULL, &rig2, &err), &err);
            if (rig2) AM_CHECK_OK(am_motion_from_bvh(b2, rig2, NULL, &mo2, &err), &err);
            if (mo2) {
                with_loc += mo->loc != NULL;
                AM_CHECK(mo2->fps == mo->fps && mo2->frame_count == mo->frame_count);
                size_t B2 = rig2->bone_count;
                double *p1 = malloc(B * 16 * sizeof *p1), *p2 = malloc(B2 * 16 * sizeof *p2);
                double *h1 = malloc(B * 3 * sizeof *h1), *h2 = malloc(B2 * 3 * sizeof *h2);
                double *t1 = malloc(B * 3 * sizeof *t1), *t2 = malloc(B2 * 3 * sizeof *t2);
                int32_t *map = malloc(B * sizeof *map);
                for (size_t bb = 0; bb < B; bb++) {
                    map[bb] = am_rig_find_bone(rig2, rig->bone_names[bb]);
                    AM_CHECK(map[bb] >= 0);
                }
                for (size_t t = 0; t < mo->frame_count; t++) {
                    am_motion_pose(rig, mo, t, p1);
                    am_motion_pose(rig2, mo2, t, p2);
                    am_rig_bone_ends(rig, p1, h1, t1);
                    am_rig_bone_ends(rig2, p2, h2, t2);
                    for (size_t bb = 0; bb < B; bb++) {
                        if (map[bb] < 0) continue;
                        size_t k = (size_t)map[bb];
                        for (int i = 0; i < 3; i++) am_test_diff_add(&d, h1[bb * 3 + (size_t)i], h2[k * 3 + (size_t)i]);
                        bool leaf = true;
                        for (size_t cb = 0; cb < B; cb++) leaf &= rig->parent[cb] != (int32_t)bb;
                        for (int i = 0; leaf && i < 3; i++) am_test_diff_add(&d, t1[bb * 3 + (size_t)i], t2[k * 3 + (size_t)i]);
                    }
                }
                free(p1), free(p2), free(h1), free(h2), free(t1), free(t2), free(map);
            }
            am_buf_free(&text);
            am_motion_free(mo);
            am_motion_free(mo2);
            am_rig_free(rig2);
            am_bvh_free(b);
            am_bvh_free(b2);
        }
        /* 2e-6, not rounding: a bone within 6 degrees of -Y (the fox's and the snake's torso)
         * has roll-0 axes orthonormal only to ~4e-6 (SPEC 2.3), so FK shears what hangs below
         * it by that times the rotation, which BVH's rotation channels cannot carry. */
        AM_CHECK_MSG(d.max <= 2e-6 * size, "%s: BVH round trip moves joints by %.3g (size %.3g, mean %.3g)",
                     models[m], d.max, size, am_test_diff_mean(&d));
        printf("  %s: %zu clips (%zu with loc), worst %.2e of size\n", models[m], clips, with_loc, d.max / size);
        am_rig_free(rig);
        am_gltf_free(doc);
    }
}

#define AM_TESTS(X)                                                                            \
    X(bvh_parses_small_file) X(bvh_rotations_multiply_in_file_order)                            \
    X(bvh_rejects_malformed_input) X(bvh_prefixes_fail_cleanly)                                 \
    X(bvh_allocation_failures_are_clean) X(bvh_conversions_survive_allocation_failures)      \
    X(bvh_write_then_parse_is_identical)                                                        \
    X(bvh_rig_roundtrip_small) X(bvh_every_rotation_order_roundtrips)                           \
    X(bvh_sliding_joint_becomes_loc) X(bvh_frame_time_is_exact) X(bvh_gltf_creatures_roundtrip)                                 \
    X(bvh_shared_data_roundtrips) X(bvh_reads_y_up_by_default) X(bvh_from_any_rig_keeps_bone_heads)
AM_TEST_MAIN(AM_TESTS)
