/* Retargeting (issue 13): identity, bijective round trips in both pose modes, the SPEC 5
 * closure (a rig re-posed, renamed: world joints equal), composition A->B->C == A->C, the
 * names and role table, map.json, bad inputs, and the feet. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "anymove/retarget.h"

/* ---- a test creature: a biped with a tail ---------------------------------------------------
 * Bones are listed once; joint positions come from a table, so variants re-pose it (FK of a
 * pose gives the rest of B), rename it and stretch it. */
#define NJ 27
#define NB 23
static const char *const ami_jn[NJ] = {
    "pelvis", "spine1", "chest", "neck", "head", "headtop", "hipL", "kneeL", "ankleL", "toeL", "hipR", "kneeR",
    "ankleR", "toeR", "clavL", "shoulderL", "elbowL", "wristL", "tipL", "clavR", "shoulderR", "elbowR", "wristR",
    "tipR", "tail1", "tail2", "tail3"};
static const double ami_jp[NJ][3] = {
    {0, 0, 1.0},      {0, 0.02, 1.2},    {0, 0, 1.45},       {0, -0.02, 1.6},   {0, -0.04, 1.75},  {0, -0.06, 1.95},
    {0.1, 0, 0.95},   {0.11, -0.03, 0.52}, {0.11, 0.02, 0.08}, {0.12, -0.14, 0.0}, {-0.1, 0, 0.95}, {-0.11, -0.03, 0.52},
    {-0.11, 0.02, 0.08}, {-0.12, -0.14, 0.0}, {0.04, 0, 1.5}, {0.2, 0.02, 1.5}, {0.48, 0.04, 1.48}, {0.74, 0.02, 1.47},
    {0.9, 0.0, 1.46}, {-0.04, 0, 1.5},  {-0.2, 0.02, 1.5}, {-0.48, 0.04, 1.48}, {-0.74, 0.02, 1.47}, {-0.9, 0.0, 1.46},
    {0, 0.3, 0.9},    {0, 0.5, 0.85},    {0, 0.7, 0.86}};
/* name, head, tail, parent (indices; -1 root) */
static const char *const ami_bn[NB] = {"hips",   "spine",  "chest",   "neck",    "head",   "thigh_L", "shin_L", "foot_L",
                                       "thigh_R", "shin_R", "foot_R", "clav_L", "upper_L", "fore_L", "hand_L", "clav_R",
                                       "upper_R", "fore_R", "hand_R", "tail_a",  "tail_b", "tail_c", "jaw"};
static const int ami_bh[NB] = {0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 0, 24, 25, 4};
static const int ami_bt[NB] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17, 18, 20, 21, 22, 23, 24, 25, 26, 3};
static const int ami_bp[NB] = {-1, 0, 1, 2, 3, 0, 5, 6, 0, 8, 9, 2, 11, 12, 13, 2, 15, 16, 17, 0, 19, 20, 4};

/* A rig from joint positions jp [NJ][3]; names prefixed (NULL: the table's). The jaw hangs
 * from the head back toward the neck so that one bone points down. */
static am_rig *ami_make_rig(const double *jp, const char *prefix)
{
    static char names[NB][32], jnames[NJ][32];
    const char *bn[NB], *bh[NB], *bt[NB], *bp[NB], *jn[NJ];
    for (int j = 0; j < NJ; j++) {
        snprintf(jnames[j], sizeof jnames[j], "%s%s", prefix ? prefix : "", ami_jn[j]);
        jn[j] = jnames[j];
    }
    for (int b = 0; b < NB; b++) {
        if (prefix) snprintf(names[b], sizeof names[b], "%s%02d", prefix, (b * 7) % NB);
        else snprintf(names[b], sizeof names[b], "%s", ami_bn[b]);
    }
    for (int b = 0; b < NB; b++) {
        bn[b] = names[b];
        bh[b] = jn[ami_bh[b]];
        bt[b] = jn[ami_bt[b]];
        bp[b] = ami_bp[b] < 0 ? NULL : names[ami_bp[b]];
    }
    /* the jaw's tail would be the neck joint: give it its own */
    static double pos[NJ + 1][3];
    memcpy(pos, jp, NJ * 3 * sizeof(double));
    static char jaw_tip[40];
    snprintf(jaw_tip, sizeof jaw_tip, "%sjawtip", prefix ? prefix : "");
    const char *jn2[NJ + 1];
    memcpy(jn2, jn, sizeof jn);
    jn2[NJ] = jaw_tip;
    for (int k = 0; k < 3; k++) pos[NJ][k] = jp[4 * 3 + k] + (k == 1 ? -0.08 : k == 2 ? -0.05 : 0.0);
    bt[NB - 1] = jaw_tip;
    am_rig_desc d = {.joint_count = NJ + 1, .joint_names = jn2, .joint_pos = &pos[0][0], .bone_count = NB,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    return rig;
}

static am_rig *ami_rig_a(void) { return ami_make_rig(&ami_jp[0][0], NULL); }

/* The rest of `rig` posed by local rotations (Euler XYZ per bone of the table, by table index)
 * and stretched by `stretch` along each bone: joint positions [NJ][3] in table order. */
static void ami_posed_joints(const am_rig *rig, const double (*euler)[3], double stretch, double *jp)
{
    size_t B = rig->bone_count;
    double *rot = calloc(B * 9, sizeof *rot), *pose = calloc(B * 16, sizeof *pose);
    for (size_t b = 0; b < B; b++) {
        double e[3] = {0, 0, 0};
        if (euler) memcpy(e, euler[b], sizeof e);
        am_euler_xyz_to_mat3(e, rot + 9 * b);
    }
    double q[4] = {1, 0, 0, 0}, head[3];
    am_mat4_get_trans(rig->rest_mat, head);
    am_rig_fk_rot(rig, head, q, rot, pose);
    /* every table joint is the head or the tail of some bone (keypoints, in rig.json order) */
    double *joints = calloc(rig->joint_count * 3, sizeof *joints);
    am_rig_keypoints(rig, pose, joints);
    memcpy(jp, joints, NJ * 3 * sizeof(double));
    if (stretch != 1.0)
        for (int j = 0; j < NJ; j++)
            for (int k = 0; k < 3; k++) jp[3 * j + k] = joints[3 * 0 + k] + stretch * (joints[3 * j + k] - joints[3 * 0 + k]);
    free(joints);
    free(rot);
    free(pose);
}

/* A smooth motion of a rig with every bone moving. */
static am_motion *ami_motion(const am_rig *rig, size_t T, double seed)
{
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, T, 30, &mo, &err), &err);
    if (!mo) return NULL;
    size_t B = rig->bone_count;
    mo->quat = am_alloc_array(T * B * 4, sizeof(double));
    double head[3];
    am_mat4_get_trans(rig->rest_mat, head);
    for (size_t t = 0; t < T; t++) {
        double s = (double)t / 30.0 + seed;
        double e[3] = {0.2 * sin(s), 0.1 * cos(1.3 * s), 0.6 * sin(0.7 * s)};
        am_euler_xyz_to_quat(e, mo->root_quat + t * 4);
        am_vec3_set(mo->trans + t * 3, head[0] + 0.1 * s, head[1] - 0.5 * s, head[2] + 0.05 * sin(3 * s));
        for (size_t b = 1; b < B; b++) {
            double *eb = mo->euler + (t * B + b) * 3;
            eb[0] = 0.5 * sin(s * (1 + 0.1 * (double)b)) + 0.2;
            eb[1] = 0.3 * cos(s * 0.8 + (double)b);
            eb[2] = 0.25 * sin(s * 1.7 + 0.5 * (double)b);
            am_euler_xyz_to_quat(eb, mo->quat + (t * B + b) * 4);
        }
    }
    return mo;
}

/* Retarget src (on rig s) onto rig t with options; a new motion bound to t. */
static am_motion *ami_run(const am_rig *s, const am_motion *src, const am_rig *t, const am_retarget_opts *o,
                          am_retarget_map **keep_map, am_retarget_report *rep)
{
    am_error err = {0};
    am_retarget_map *map = NULL;
    am_motion *out = NULL;
    AM_CHECK_OK(am_retarget_map_build(s, t, NULL, &map, &err), &err);
    if (!map) return NULL;
    AM_CHECK_OK(am_motion_create(t, src->frame_count, src->fps, &out, &err), &err);
    if (out) {
        out->quat = am_alloc_array(src->frame_count * t->bone_count * 4, sizeof(double));
        am_retarget_job job = {.source_rig = s, .source = src, .target_rig = t, .map = map, .opts = o, .out = out,
                               .report = rep};
        AM_CHECK_OK(am_retarget_run(&job, &err), &err);
    }
    if (keep_map) *keep_map = map;
    else am_retarget_map_free(map);
    return out;
}

/* Largest geodesic angle between two motions' local rotations and root rotations, radians. */
static double ami_rot_diff(const am_motion *a, const am_motion *b)
{
    double worst = 0.0;
    size_t B = a->bone_count;
    for (size_t t = 0; t < a->frame_count; t++) {
        double d = am_quat_angle_between(a->root_quat + 4 * t, b->root_quat + 4 * t);
        if (d > worst) worst = d;
        for (size_t k = 1; k < B; k++) {
            double qa[4], qb[4];
            am_euler_xyz_to_quat(a->euler + (t * B + k) * 3, qa);
            am_euler_xyz_to_quat(b->euler + (t * B + k) * 3, qb);
            if (a->quat) memcpy(qa, a->quat + (t * B + k) * 4, sizeof qa);
            if (b->quat) memcpy(qb, b->quat + (t * B + k) * 4, sizeof qb);
            d = am_quat_angle_between(qa, qb);
            if (d > worst) worst = d;
        }
    }
    return worst;
}

static double ami_trans_diff(const am_motion *a, const am_motion *b)
{
    double worst = 0.0;
    for (size_t t = 0; t < a->frame_count; t++) {
        double d = am_vec3_dist(a->trans + 3 * t, b->trans + 3 * t);
        if (d > worst) worst = d;
    }
    return worst;
}

static const am_retarget_opts ami_no_ik[AM_RETARGET_POSE_COUNT] = {
    {.pose = AM_RETARGET_POSE_ALIGN, .flags = AM_RETARGET_NO_IK},
    {.pose = AM_RETARGET_POSE_DELTA, .flags = AM_RETARGET_NO_IK}};

/* ---- identity and round trips ----------------------------------------------------------------- */

static void retarget_identity(void)
{
    am_rig *a = ami_rig_a();
    am_motion *mo = a ? ami_motion(a, 40, 0.3) : NULL;
    for (int pose = 0; mo && pose < AM_RETARGET_POSE_COUNT; pose++) {
        am_retarget_map *map = NULL;
        am_motion *out = ami_run(a, mo, a, &ami_no_ik[pose], &map, NULL);
        if (!out) break;
        for (size_t g = 0; g < a->bone_count; g++)
            AM_CHECK_MSG(map->source[g] == (int32_t)g && map->rule[g] == AM_RETARGET_RULE_NAME, "bone %s mapped to %d",
                         a->bone_names[g], map->source[g]);
        double dr = ami_rot_diff(mo, out), dt = ami_trans_diff(mo, out);
        AM_CHECK_MSG(dr <= 1e-9, "pose %d: A->A rotations differ by %.3g rad", pose, dr);
        AM_CHECK_MSG(dt <= 1e-9, "pose %d: A->A root differs by %.3g m", pose, dt);
        am_retarget_map_free(map);
        am_motion_free(out);
    }
    am_motion_free(mo);
    am_rig_free(a);
}

/* B differs from A in everything but its topology: names, proportions (x1.3), a re-posed bind
 * (legs and arms turned by tens of degrees, the tail curled). A->B->A gives A's motion back. */
static void retarget_bijective_round_trip(void)
{
    am_rig *a = ami_rig_a();
    if (!a) return;
    double (*e)[3] = calloc(a->bone_count, sizeof *e);
    int thigh = am_rig_find_bone(a, "thigh_L"), shin = am_rig_find_bone(a, "shin_R"),
        up = am_rig_find_bone(a, "upper_L"), upr = am_rig_find_bone(a, "upper_R"), fore = am_rig_find_bone(a, "fore_L"),
        tail = am_rig_find_bone(a, "tail_b");
    am_vec3_set(e[thigh], 0.3, 0.2, 0.5);
    am_vec3_set(e[shin], -0.6, 0.0, 0.1);
    am_vec3_set(e[up], 0.1, 0.6, -0.7);
    am_vec3_set(e[upr], -0.2, -0.4, 0.8);
    am_vec3_set(e[fore], 0.5, 0.3, 0.0);
    am_vec3_set(e[tail], 0.7, 0.2, 0.0);
    double jp[NJ * 3];
    ami_posed_joints(a, (const double(*)[3])e, 1.3, jp);
    am_rig *b = ami_make_rig(jp, "zz");
    if (getenv("AMI_DBG") && b) {
        am_error e2 = {0};
        if (am_rig_write(a, "/tmp/rtdev/a.json", &e2) || am_rig_write(b, "/tmp/rtdev/b.json", &e2)) printf("write failed\n");
    }
    am_motion *mo = ami_motion(a, 40, 1.1);
    for (int pose = 0; b && mo && pose < AM_RETARGET_POSE_COUNT; pose++) {
        am_retarget_map *map = NULL;
        am_motion *ab = ami_run(a, mo, b, &ami_no_ik[pose], &map, NULL);
        if (!ab) break;
        /* the map is the bijection, found from the structure alone */
        size_t wrong = 0;
        for (size_t g = 0; g < b->bone_count; g++) {
            char want[32];
            int ai = -1;
            for (int k = 0; k < NB; k++) {
                snprintf(want, sizeof want, "zz%02d", (k * 7) % NB);
                if (strcmp(want, b->bone_names[g]) == 0) ai = am_rig_find_bone(a, ami_bn[k]);
            }
            if (map->source[g] != ai || map->source_b[g] >= 0) {
                wrong++;
                if (getenv("AMI_DBG"))
                    printf("  %s (want %s) <- %s %s\n", b->bone_names[g], ai >= 0 ? a->bone_names[ai] : "-",
                           map->source[g] >= 0 ? a->bone_names[map->source[g]] : "-", map->why[g]);
            }
        }
        AM_CHECK_MSG(wrong == 0, "pose %d: %zu bones of B mapped wrong", pose, wrong);
        am_motion *aba = ami_run(b, ab, a, &ami_no_ik[pose], NULL, NULL);
        if (aba) {
            double dr = ami_rot_diff(mo, aba), dt = ami_trans_diff(mo, aba);
            AM_CHECK_MSG(dr <= 1e-9, "pose %d: A->B->A rotations differ by %.3g rad", pose, dr);
            AM_CHECK_MSG(dt <= 1e-9, "pose %d: A->B->A root differs by %.3g m", pose, dt);
        }
        am_motion_free(aba);
        am_motion_free(ab);
        am_retarget_map_free(map);
    }
    am_motion_free(mo);
    am_rig_free(b);
    am_rig_free(a);
    free(e);
}

/* SPEC 5 retarget closure: B is A with only its bind pose (arms and legs re-posed by tens of
 * degrees) and names changed; with --pose align, B's world joints equal A's. */
static void retarget_closure_world_joints(void)
{
    am_rig *a = ami_rig_a();
    if (!a) return;
    double (*e)[3] = calloc(a->bone_count, sizeof *e);
    am_vec3_set(e[am_rig_find_bone(a, "thigh_L")], 0.4, 0.0, 0.35);  /* 23 deg forward, 20 out */
    am_vec3_set(e[am_rig_find_bone(a, "thigh_R")], -0.3, 0.2, -0.5);
    am_vec3_set(e[am_rig_find_bone(a, "shin_L")], -0.7, 0.0, 0.0);   /* a bent knee */
    am_vec3_set(e[am_rig_find_bone(a, "upper_L")], 0.0, 0.3, -0.75); /* T-pose -> A-pose */
    am_vec3_set(e[am_rig_find_bone(a, "upper_R")], 0.2, -0.3, 0.75);
    am_vec3_set(e[am_rig_find_bone(a, "fore_R")], 0.6, 0.0, 0.3);
    am_vec3_set(e[am_rig_find_bone(a, "hand_L")], 0.0, 0.0, 0.5);
    double jp[NJ * 3];
    ami_posed_joints(a, (const double(*)[3])e, 1.0, jp);
    am_rig *b = ami_make_rig(jp, "bone");
    am_motion *mo = b ? ami_motion(a, 50, 2.0) : NULL;
    am_motion *ab = mo ? ami_run(a, mo, b, &ami_no_ik[AM_RETARGET_POSE_ALIGN], NULL, NULL) : NULL;
    if (ab) {
        double *pa = calloc(a->bone_count * 16, sizeof *pa), *pb = calloc(b->bone_count * 16, sizeof *pb);
        double *ha = calloc(a->bone_count * 6, sizeof *ha), *hb = calloc(b->bone_count * 6, sizeof *hb);
        double size = am_body_size(a->joint_rest, a->joint_count, NULL), worst = 0.0;
        for (size_t t = 0; t < mo->frame_count; t++) {
            am_motion_pose(a, mo, t, pa);
            am_motion_pose(b, ab, t, pb);
            am_rig_bone_ends(a, pa, ha, ha + 3 * a->bone_count);
            am_rig_bone_ends(b, pb, hb, hb + 3 * b->bone_count);
            for (int k = 0; k < NB; k++) {
                char nm[32];
                snprintf(nm, sizeof nm, "bone%02d", (k * 7) % NB);
                int ia = am_rig_find_bone(a, ami_bn[k]), ib = am_rig_find_bone(b, nm);
                for (int end = 0; end < 2; end++) {
                    double d = am_vec3_dist(ha + 3 * (end * a->bone_count + (size_t)ia),
                                            hb + 3 * (end * b->bone_count + (size_t)ib));
                    if (d > worst) worst = d;
                }
            }
        }
        AM_CHECK_MSG(worst / size <= 1e-9, "closure: world joints differ by %.3g of the body size", worst / size);
        /* and back: A's local rotations */
        am_motion *aba = ami_run(b, ab, a, &ami_no_ik[AM_RETARGET_POSE_ALIGN], NULL, NULL);
        if (aba) AM_CHECK_MSG(ami_rot_diff(mo, aba) <= 1e-9, "closure back: %.3g rad", ami_rot_diff(mo, aba));
        am_motion_free(aba);
        free(pa);
        free(pb);
        free(ha);
        free(hb);
    }
    am_motion_free(ab);
    am_motion_free(mo);
    am_rig_free(b);
    am_rig_free(a);
    free(e);
}

/* A->B->C equals A->C on rotations: in DELTA mode for any proportions, in ALIGN mode for rigs
 * that differ in bind pose. */
static void retarget_composes(void)
{
    am_rig *a = ami_rig_a();
    if (!a) return;
    double (*e1)[3] = calloc(a->bone_count, sizeof *e1), (*e2)[3] = calloc(a->bone_count, sizeof *e2);
    am_vec3_set(e1[am_rig_find_bone(a, "thigh_L")], 0.3, 0.0, 0.4);
    am_vec3_set(e1[am_rig_find_bone(a, "upper_R")], 0.2, -0.3, 0.7);
    am_vec3_set(e2[am_rig_find_bone(a, "upper_L")], -0.2, 0.4, -0.6);
    am_vec3_set(e2[am_rig_find_bone(a, "shin_R")], -0.5, 0.1, 0.0);
    for (int pose = 0; pose < AM_RETARGET_POSE_COUNT; pose++) {
        double stretch_b = pose == AM_RETARGET_POSE_DELTA ? 1.4 : 1.0, stretch_c = pose == AM_RETARGET_POSE_DELTA ? 0.7 : 1.0;
        double jb[NJ * 3], jc[NJ * 3];
        ami_posed_joints(a, (const double(*)[3])e1, stretch_b, jb);
        ami_posed_joints(a, (const double(*)[3])e2, stretch_c, jc);
        am_rig *b = ami_make_rig(jb, "b"), *c = ami_make_rig(jc, "c");
        am_motion *mo = ami_motion(a, 30, 0.7);
        am_motion *ab = b && c && mo ? ami_run(a, mo, b, &ami_no_ik[pose], NULL, NULL) : NULL;
        am_motion *abc = ab ? ami_run(b, ab, c, &ami_no_ik[pose], NULL, NULL) : NULL;
        am_motion *ac = abc ? ami_run(a, mo, c, &ami_no_ik[pose], NULL, NULL) : NULL;
        if (ac) {
            double dr = ami_rot_diff(abc, ac);
            AM_CHECK_MSG(dr <= 1e-9, "pose %d: A->B->C vs A->C %.3g rad", pose, dr);
            AM_CHECK_MSG(ami_trans_diff(abc, ac) <= 1e-9, "pose %d: roots %.3g m", pose, ami_trans_diff(abc, ac));
        }
        am_motion_free(ac);
        am_motion_free(abc);
        am_motion_free(ab);
        am_motion_free(mo);
        am_rig_free(b);
        am_rig_free(c);
    }
    free(e1);
    free(e2);
    am_rig_free(a);
}

#define AM_TESTS(X) X(retarget_identity) X(retarget_bijective_round_trip) X(retarget_closure_world_joints) \
    X(retarget_composes)
AM_TEST_MAIN(AM_TESTS)
