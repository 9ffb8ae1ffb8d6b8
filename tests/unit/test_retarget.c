/* Retargeting (issue 13): identity, bijective round trips in both pose modes, the SPEC 5
 * closure (a rig re-posed, renamed: world joints equal), composition A->B->C == A->C, the
 * names and role table, map.json, bad inputs, and the feet. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/retarget.h"
#include "retarget/retarget_internal.h"

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
static am_motion *ami_go(const am_rig *s, const am_motion *src, const am_rig *t, const am_retarget_opts *o,
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
        am_motion *out = ami_go(a, mo, a, &ami_no_ik[pose], &map, NULL);
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
    am_motion *mo = ami_motion(a, 40, 1.1);
    for (int pose = 0; b && mo && pose < AM_RETARGET_POSE_COUNT; pose++) {
        am_retarget_map *map = NULL;
        am_motion *ab = ami_go(a, mo, b, &ami_no_ik[pose], &map, NULL);
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
                am_test_fail(__FILE__, __LINE__, "%s (B's copy of %s) <- %s: %s", b->bone_names[g],
                             ai >= 0 ? a->bone_names[ai] : "-", map->source[g] >= 0 ? a->bone_names[map->source[g]] : "-",
                             map->why[g]);
            }
        }
        AM_CHECK_MSG(wrong == 0, "pose %d: %zu bones of B mapped wrong", pose, wrong);
        am_motion *aba = ami_go(b, ab, a, &ami_no_ik[pose], NULL, NULL);
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
    am_motion *ab = mo ? ami_go(a, mo, b, &ami_no_ik[AM_RETARGET_POSE_ALIGN], NULL, NULL) : NULL;
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
        am_motion *aba = ami_go(b, ab, a, &ami_no_ik[AM_RETARGET_POSE_ALIGN], NULL, NULL);
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
    /* the left thigh in three rests: its twist and its shin's (one direction each, which the
     * joints do not fix) compose only by the transport along the chain (a smallest swing
     * between three directions turns by their holonomy) */
    am_vec3_set(e2[am_rig_find_bone(a, "thigh_L")], -0.4, 0.2, -0.5);
    for (int pose = 0; pose < AM_RETARGET_POSE_COUNT; pose++) {
        double stretch_b = pose == AM_RETARGET_POSE_DELTA ? 1.4 : 1.0, stretch_c = pose == AM_RETARGET_POSE_DELTA ? 0.7 : 1.0;
        double jb[NJ * 3], jc[NJ * 3];
        ami_posed_joints(a, (const double(*)[3])e1, stretch_b, jb);
        ami_posed_joints(a, (const double(*)[3])e2, stretch_c, jc);
        am_rig *b = ami_make_rig(jb, "b"), *c = ami_make_rig(jc, "c");
        am_motion *mo = ami_motion(a, 30, 0.7);
        am_motion *ab = b && c && mo ? ami_go(a, mo, b, &ami_no_ik[pose], NULL, NULL) : NULL;
        am_motion *abc = ab ? ami_go(b, ab, c, &ami_no_ik[pose], NULL, NULL) : NULL;
        am_motion *ac = abc ? ami_go(a, mo, c, &ami_no_ik[pose], NULL, NULL) : NULL;
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


/* ---- names and the role table ------------------------------------------------------------- */

typedef struct ami_name_case {
    const char *name, *norm;
    int side;
    ami_role role;
    int ordinal;
    int helper, end;
} ami_name_case;

/* A chain rig of the names (a rig's names decide its family rules together). */
static void ami_check_names(const char *family, const ami_name_case *cases, size_t n)
{
    const char *jn[40], *bn[40], *bh[40], *bt[40], *bp[40];
    static char jbuf[40][8];
    double jp[40][3];
    for (size_t j = 0; j <= n; j++) {
        snprintf(jbuf[j], sizeof jbuf[j], "j%zu", j);
        jn[j] = jbuf[j];
        am_vec3_set(jp[j], 0, 0, 0.1 * (double)j);
    }
    for (size_t b = 0; b < n; b++) {
        bn[b] = cases[b].name;
        bh[b] = jn[b];
        bt[b] = jn[b + 1];
        bp[b] = b ? cases[b - 1].name : NULL;
    }
    am_rig_desc d = {.joint_count = n + 1, .joint_names = jn, .joint_pos = &jp[0][0], .bone_count = n,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    if (!rig) return;
    ami_bone_name out[40];
    ami_names_analyse(rig, out);
    for (size_t i = 0; i < n; i++) {
        int b = am_rig_find_bone(rig, cases[i].name);
        const ami_bone_name *o = &out[b];
        AM_CHECK_MSG(strcmp(o->norm, cases[i].norm) == 0 && o->side == cases[i].side && o->role == cases[i].role &&
                         o->ordinal == cases[i].ordinal && o->helper == cases[i].helper && o->end == cases[i].end,
                     "%s '%s': norm '%s' side %d role %s ordinal %d helper %d end %d; want '%s' %d %s %d %d %d", family,
                     cases[i].name, o->norm, o->side, ami_role_name(o->role), o->ordinal, o->helper, o->end,
                     cases[i].norm, cases[i].side, ami_role_name(cases[i].role), cases[i].ordinal, cases[i].helper,
                     cases[i].end);
    }
    am_rig_free(rig);
}

#define N_(a) (sizeof a / sizeof a[0])
static void retarget_names_and_roles(void)
{
    static const ami_name_case mixamo[] = {
        {"mixamorig:Hips", "hips", 0, AMI_ROLE_HIPS, -1, 0, 0},
        {"mixamorig:Spine2", "spine2", 0, AMI_ROLE_SPINE, 2, 0, 0},
        {"mixamorig:LeftShoulder", "shoulder", 1, AMI_ROLE_CLAVICLE, -1, 0, 0},
        {"mixamorig:LeftArm", "arm", 1, AMI_ROLE_UPPERARM, -1, 0, 0},
        {"mixamorig:LeftForeArm", "forearm", 1, AMI_ROLE_FOREARM, -1, 0, 0},
        {"mixamorig:LeftHandThumb1", "handthumb1", 1, AMI_ROLE_FINGER, 1, 0, 0},
        {"mixamorig:LeftUpLeg", "upleg", 1, AMI_ROLE_THIGH, -1, 0, 0},
        {"mixamorig:LeftLeg", "leg", 1, AMI_ROLE_SHIN, -1, 0, 0},
        {"mixamorig:LeftToeBase", "toebase", 1, AMI_ROLE_TOE, -1, 0, 0},
        {"mixamorig:HeadTop_End", "headtopend", 0, AMI_ROLE_HEAD, -1, 0, 1}};
    static const ami_name_case unreal[] = {
        {"pelvis", "pelvis", 0, AMI_ROLE_HIPS, -1, 0, 0},
        {"spine_03", "spine3", 0, AMI_ROLE_SPINE, 3, 0, 0},
        {"clavicle_l", "clavicle", 1, AMI_ROLE_CLAVICLE, -1, 0, 0},
        {"upperarm_twist_01_l", "upperarmtwist1", 1, AMI_ROLE_TWIST, 1, 0, 0},
        {"thigh_l", "thigh", 1, AMI_ROLE_THIGH, -1, 0, 0},
        {"calf_r", "calf", -1, AMI_ROLE_SHIN, -1, 0, 0},
        {"ball_l", "ball", 1, AMI_ROLE_TOE, -1, 0, 0},
        {"ik_foot_l", "ikfoot", 1, AMI_ROLE_FOOT, -1, 1, 0}};
    static const ami_name_case rigify[] = {
        {"DEF-spine.003", "spine3", 0, AMI_ROLE_SPINE, 3, 0, 0},
        {"DEF-upper_arm.L", "upperarm", 1, AMI_ROLE_UPPERARM, -1, 0, 0},
        {"ORG-shin.R", "shin", -1, AMI_ROLE_SHIN, -1, 0, 0},
        {"MCH-foot_ik.L", "footik", 1, AMI_ROLE_FOOT, -1, 1, 0}};
    static const ami_name_case smpl[] = {
        {"Pelvis", "pelvis", 0, AMI_ROLE_HIPS, -1, 0, 0},     {"L_Hip", "hip", 1, AMI_ROLE_THIGH, -1, 0, 0},
        {"L_Knee", "knee", 1, AMI_ROLE_SHIN, -1, 0, 0},       {"L_Ankle", "ankle", 1, AMI_ROLE_FOOT, -1, 0, 0},
        {"L_Foot", "foot", 1, AMI_ROLE_TOE, -1, 0, 0},        {"left_collar", "collar", 1, AMI_ROLE_CLAVICLE, -1, 0, 0},
        {"L_Shoulder", "shoulder", 1, AMI_ROLE_UPPERARM, -1, 0, 0}, {"L_Elbow", "elbow", 1, AMI_ROLE_FOREARM, -1, 0, 0},
        {"L_Wrist", "wrist", 1, AMI_ROLE_HAND, -1, 0, 0},     {"L_Hand", "hand", 1, AMI_ROLE_FINGER, -1, 0, 0}};
    static const ami_name_case cmu[] = {
        {"Hips", "hips", 0, AMI_ROLE_HIPS, -1, 0, 0},           {"LHipJoint", "hipjoint", 1, AMI_ROLE_HIPBONE, -1, 0, 0},
        {"LeftUpLeg", "upleg", 1, AMI_ROLE_THIGH, -1, 0, 0},    {"LowerBack", "lowerback", 0, AMI_ROLE_SPINE, -1, 0, 0},
        {"Neck1", "neck1", 0, AMI_ROLE_NECK, 1, 0, 0},          {"LThumb", "thumb", 1, AMI_ROLE_FINGER, -1, 0, 0},
        {"lShldr", "shldr", 1, AMI_ROLE_UPPERARM, -1, 0, 0},    {"rButtock", "buttock", -1, AMI_ROLE_HIPBONE, -1, 0, 0},
        {"RightHandEnd", "handend", -1, AMI_ROLE_HAND, -1, 0, 1}};
    static const ami_name_case biped[] = {
        {"Bip01 Pelvis", "pelvis", 0, AMI_ROLE_HIPS, -1, 0, 0},     {"Bip01 L Thigh", "thigh", 1, AMI_ROLE_THIGH, -1, 0, 0},
        {"Bip01 R Calf", "calf", -1, AMI_ROLE_SHIN, -1, 0, 0},      {"Bip01 L HorseLink", "horselink", 1, AMI_ROLE_SHIN, -1, 0, 0},
        {"Bip01 Tail1", "tail1", 0, AMI_ROLE_TAIL, 1, 0, 0},        {"UpperArm_L", "upperarm", 1, AMI_ROLE_UPPERARM, -1, 0, 0},
        {"LowerLeg_R", "lowerleg", -1, AMI_ROLE_SHIN, -1, 0, 0},    {"Toes_L", "toes", 1, AMI_ROLE_TOE, -1, 0, 0}};
    static const ami_name_case quaternius[] = {
        {"Body", "body", 0, AMI_ROLE_NONE, -1, 0, 0},
        {"FrontUpperLeg.L", "frontupperleg", 1, AMI_ROLE_UPPERARM, -1, 0, 0},
        {"BackLowerLeg.R", "backlowerleg", -1, AMI_ROLE_SHIN, -1, 0, 0},
        {"BackShoulder.L", "backshoulder", 1, AMI_ROLE_HIPBONE, -1, 0, 0},
        {"IKBackLeg.L", "ikbackleg", 1, AMI_ROLE_LEG, -1, 1, 0},
        {"PoleTarget.L", "poletarget", 1, AMI_ROLE_NONE, -1, 1, 0},
        {"Palm.L", "palm", 1, AMI_ROLE_HAND, -1, 0, 0},
        {"Ear3.R", "ear3", -1, AMI_ROLE_FACE, 3, 0, 0},
        {"Bone.001", "bone1", 0, AMI_ROLE_NONE, 1, 0, 0}};
    /* glTF sample rigs number every bone once: the number is not an ordinal */
    static const ami_name_case khronos[] = {
        {"b_Root_00", "root", 0, AMI_ROLE_ROOT, -1, 0, 0},          {"b_Hip_01", "hip", 0, AMI_ROLE_HIPS, -1, 0, 0},
        {"b_Spine01_02", "spine1", 0, AMI_ROLE_SPINE, 1, 0, 0},     {"b_Neck_04", "neck", 0, AMI_ROLE_NECK, -1, 0, 0},
        {"b_LeftForeArm_010", "forearm", 1, AMI_ROLE_FOREARM, -1, 0, 0},
        {"b_RightLeg01_019", "leg1", -1, AMI_ROLE_LEG, 1, 0, 0}};
    ami_check_names("mixamo", mixamo, N_(mixamo));
    ami_check_names("unreal", unreal, N_(unreal));
    ami_check_names("rigify", rigify, N_(rigify));
    ami_check_names("smpl", smpl, N_(smpl));
    ami_check_names("cmu", cmu, N_(cmu));
    ami_check_names("biped", biped, N_(biped));
    ami_check_names("quaternius", quaternius, N_(quaternius));
    ami_check_names("khronos", khronos, N_(khronos));
}

/* ---- map.json and overrides --------------------------------------------------------------- */

static void retarget_map_json_round_trip_and_errors(void)
{
    am_error err = {0};
    am_bone_map *m = NULL;
    static const char good[] = "{\"bones\": {\"hips\": \"pelvis\", \"tail_a\": null, \"jaw\": \"jaw\"},"
                               " \"rules\": {\"pelvis\": \"name\"}, \"other\": 1}";
    AM_CHECK_OK(am_bone_map_parse(good, strlen(good), "m.json", &m, &err), &err);
    if (m) {
        AM_CHECK(m->count == 3 && strcmp(m->source[0], "hips") == 0 && strcmp(m->target[0], "pelvis") == 0);
        AM_CHECK(m->target[1] == NULL && m->rule_count == 1 && strcmp(m->rule_text[0], "name") == 0);
        char *a = NULL, *b = NULL;
        AM_CHECK_OK(am_bone_map_to_json(m, &a, &err), &err);
        am_bone_map *m2 = NULL;
        AM_CHECK_OK(am_bone_map_parse(a, strlen(a), "m2.json", &m2, &err), &err);
        if (m2) AM_CHECK_OK(am_bone_map_to_json(m2, &b, &err), &err);
        AM_CHECK(a && b && strcmp(a, b) == 0);
        am_free(a);
        am_free(b);
        am_bone_map_free(m2);
    }
    am_bone_map_free(m);
    static const struct {
        const char *text;
        am_status want;
        const char *says;
    } bad[] = {
        {"[]", AM_E_SCHEMA, "expected an object"},
        {"{\"rules\": {}}", AM_E_SCHEMA, "bones"},
        {"{\"bones\": {\"a\": 3}}", AM_E_SCHEMA, "bones.a"},
        {"{\"bones\": {\"a\": \"\"}}", AM_E_VALUE, "empty"},
        {"{\"bones\": {\"\": \"x\"}}", AM_E_VALUE, "empty bone name"},
        {"{\"bones\": {\"a\": \"t\", \"b\": \"t\"}}", AM_E_DUPLICATE, "'a' and 'b' both drive target bone 't'"},
        {"{\"bones\": {\"a\": \"t\", \"a\": \"u\"}}", AM_E_DUPLICATE, NULL},
        {"{\"bones\": {\"a\": \"t\"}, \"rules\": {\"t\": 1}}", AM_E_SCHEMA, "rules.t"},
        {"{\"bones\": {\"a\": \"t\"", AM_E_SYNTAX, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m = NULL;
        err = (am_error){0};
        am_status st = am_bone_map_parse(bad[i].text, strlen(bad[i].text), "bad.json", &m, &err);
        AM_CHECK_MSG(st == bad[i].want, "%s: %s, want %s", bad[i].text, am_status_name(st), am_status_name(bad[i].want));
        AM_CHECK_MSG(!bad[i].says || strstr(err.info, bad[i].says), "%s: message '%s'", bad[i].text, err.info);
        AM_CHECK(strcmp(err.file, "bad.json") == 0 && !m);
    }
    /* every prefix of a valid file is a clean error or the file */
    for (size_t len = 0; len < sizeof good - 1; len++) {
        m = NULL;
        am_status st = am_bone_map_parse(good, len, "p.json", &m, &err);
        AM_CHECK(st != AM_OK || m);
        am_bone_map_free(m);
    }
}

static void retarget_overrides_and_their_errors(void)
{
    am_rig *a = ami_rig_a();
    if (!a) return;
    am_error err = {0};
    /* the tail's tip drives the jaw, the jaw drives nothing */
    char *src[2] = {"tail_c", "jaw"}, *dst[2] = {"jaw", NULL};
    am_bone_map ov = {.count = 2, .source = src, .target = dst};
    am_retarget_map_opts o = {.overrides = &ov};
    am_retarget_map *map = NULL;
    AM_CHECK_OK(am_retarget_map_build(a, a, &o, &map, &err), &err);
    if (map) {
        int jaw = am_rig_find_bone(a, "jaw"), tc = am_rig_find_bone(a, "tail_c");
        AM_CHECK(map->source[jaw] == tc && map->rule[jaw] == AM_RETARGET_RULE_USER);
        AM_CHECK(map->source[tc] < 0 && map->rule[tc] == AM_RETARGET_RULE_NONE);
        am_bone_map *names = NULL;
        AM_CHECK_OK(am_retarget_map_names(map, a, a, &names, &err), &err);
        bool found = false;
        for (size_t i = 0; names && i < names->count; i++)
            if (strcmp(names->source[i], "tail_c") == 0) found = names->target[i] && strcmp(names->target[i], "jaw") == 0;
        AM_CHECK(found);
        am_bone_map_free(names);
    }
    am_retarget_map_free(map);
    /* unknown bones: every one named */
    char *s2[3] = {"hips", "nope", "spine"}, *d2[3] = {"hips", "spine", "gone"};
    am_bone_map bad = {.count = 3, .source = s2, .target = d2};
    o.overrides = &bad;
    map = NULL;
    AM_CHECK_STATUS(am_retarget_map_build(a, a, &o, &map, &err), AM_E_NAME);
    AM_CHECK_MSG(strstr(err.info, "'nope'") && strstr(err.info, "'gone'"), "%s", err.info);
    AM_CHECK(!map && am_status_fault(AM_E_NAME) == AM_FAULT_INPUT);
    am_rig_free(a);
}

/* A source sharing no name and little structure with the target: a lone prop (one bone) onto
 * the biped is refused, naming the bones; the biped onto the prop is a map (its one bone). */
static void retarget_refuses_unmatched_target(void)
{
    am_rig *a = ami_rig_a();
    static const char *jn[] = {"p", "q"};
    static const double jp[] = {0, 0, 0, 0, 0.3, 0.1};
    static const char *bn[] = {"stick"}, *bh[] = {"p"}, *bt[] = {"q"}, *bp[] = {NULL};
    am_rig_desc d = {.joint_count = 2, .joint_names = jn, .joint_pos = jp, .bone_count = 1, .bone_names = bn,
                     .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *prop = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &prop, &err), &err);
    if (a && prop) {
        am_retarget_map *map = NULL;
        AM_CHECK_OK(am_retarget_map_build(a, prop, NULL, &map, &err), &err);
        am_retarget_map_free(map);
        map = NULL;
        AM_CHECK_STATUS(am_retarget_map_build(prop, a, NULL, &map, &err), AM_E_EMPTY);
        AM_CHECK_MSG(strstr(err.info, "stick") && strstr(err.info, "thigh_L"), "%s", err.info);
        AM_CHECK(!map);
    }
    am_rig_free(prop);
    am_rig_free(a);
}

static void retarget_job_validity(void)
{
    am_rig *a = ami_rig_a();
    am_motion *mo = a ? ami_motion(a, 5, 0.0) : NULL;
    am_retarget_map *map = NULL;
    am_error err = {0};
    if (!mo) goto done;
    AM_CHECK_OK(am_retarget_map_build(a, a, NULL, &map, &err), &err);
    am_motion *out = NULL;
    AM_CHECK_OK(am_motion_create(a, 5, 30, &out, &err), &err);
    if (!map || !out) goto done2;
    am_retarget_job job = {.source_rig = a, .source = mo, .target_rig = a, .map = map, .out = out};
    AM_CHECK_OK(am_retarget_validate(&job, &err), &err);
    size_t T = mo->frame_count;
    mo->frame_count = 0;
    AM_CHECK_STATUS(am_retarget_run(&job, &err), AM_E_EMPTY);
    AM_CHECK(strstr(err.info, "0 frames"));
    mo->frame_count = T;
    out->frame_count = 4;
    AM_CHECK_STATUS(am_retarget_run(&job, &err), AM_E_SHAPE);
    out->frame_count = 5;
    am_retarget_opts o = {.scale_horizontal = -1};
    job.opts = &o;
    AM_CHECK_STATUS(am_retarget_run(&job, &err), AM_E_ARG);
    o = (am_retarget_opts){.source_pose = mo, .source_pose_frame = 9};
    AM_CHECK_STATUS(am_retarget_run(&job, &err), AM_E_ARG);
    o = (am_retarget_opts){.pose = AM_RETARGET_POSE_COUNT};
    AM_CHECK_STATUS(am_retarget_run(&job, &err), AM_E_ARG);
    /* every allocation failing in turn: a clean AM_E_NOMEM, never a leak (ASan) or a crash */
    job.opts = NULL;
    bool ok = false;
    for (uint64_t lim = 1; lim < 400 && !ok; lim++) {
        am_retarget_map *m2 = NULL;
        am_retarget_report rep = {0};
        am_test_alloc_limit(lim);
        am_status st = am_retarget_map_build(a, a, NULL, &m2, &err);
        if (st == AM_OK) {
            job.map = m2;
            job.report = &rep;
            st = am_retarget_run(&job, &err);
        }
        am_test_alloc_limit(0);
        AM_CHECK_MSG(st == AM_OK || st == AM_E_NOMEM, "limit %llu: %s", (unsigned long long)lim, am_status_name(st));
        ok = st == AM_OK;
        am_retarget_report_free(&rep);
        am_retarget_map_free(m2);
    }
    AM_CHECK(ok);
done2:
    am_motion_free(out);
done:
    am_retarget_map_free(map);
    am_motion_free(mo);
    am_rig_free(a);
}

/* ---- feet on real clips -------------------------------------------------------------------- */

static bool ami_load_model(const char *rel, int clip, double scale, am_rig **rig, am_motion **mo)
{
    am_error err = {0};
    am_gltf *doc = NULL;
    am_status st = am_gltf_load(am_test_shared(rel), NULL, &doc, &err);
    if (st == AM_OK) st = am_rig_from_gltf(doc, -1, rig, &err);
    if (st == AM_OK && mo) st = am_motion_from_gltf(doc, -1, *rig, clip, 24, mo, &err);
    am_gltf_free(doc);
    AM_CHECK_OK(st, &err);
    if (st == AM_OK && scale != 1.0) {
        am_rig_scale(*rig, scale);
        if (mo) am_motion_scale(*mo, scale);
    }
    return st == AM_OK;
}

/* The Quaternius Fox's walk onto the Husky and onto the Khronos Fox: the fox's plants are
 * found, each is held on the target (slide under a micrometre against the source's own
 * centimetres), no foot sinks below the ground. */
static void retarget_feet_hold_plants(void)
{
    static const struct {
        const char *target;
        double scale;
        size_t legs;
    } cases[] = {{"data/gltf/quaternius/Husky.glb", 1.0, 4}, {"data/gltf/khronos_fox/Fox.glb", 0.01, 4}};
    am_rig *fox = NULL;
    am_motion *walk = NULL;
    if (!ami_load_model("data/gltf/quaternius/Fox.glb", 11, 1.0, &fox, &walk)) return;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        am_rig *dst = NULL;
        if (!ami_load_model(cases[k].target, -1, cases[k].scale, &dst, NULL)) continue;
        am_retarget_report rep = {0};
        am_motion *out = ami_go(fox, walk, dst, NULL, NULL, &rep);
        if (out) {
            AM_CHECK_MSG(rep.contact_count == cases[k].legs, "%s: %zu contacts", cases[k].target, rep.contact_count);
            AM_CHECK_MSG(rep.plant_count >= 6, "%s: %zu plants", cases[k].target, rep.plant_count);
            double src = 0.0, dst_slide = 0.0, below = 0.0;
            for (size_t i = 0; i < rep.plant_count; i++) {
                if (rep.plants[i].source_slide > src) src = rep.plants[i].source_slide;
                if (rep.plants[i].target_slide > dst_slide) dst_slide = rep.plants[i].target_slide;
            }
            for (size_t c = 0; c < rep.contact_count; c++)
                if (rep.below_max[c] > below) below = rep.below_max[c];
            AM_CHECK_MSG(dst_slide < 1e-5 && src > 1e-3, "%s: slide %.3g m on the target, %.3g on the source",
                         cases[k].target, dst_slide, src);
            AM_CHECK_MSG(below < 1e-5, "%s: a foot %.3g m below the ground", cases[k].target, below);
            /* the FK of the written motion agrees with the run's own positions */
            AM_CHECK_OK(am_motion_compute_joints(out, dst, &(am_error){0}), &(am_error){0});
        }
        am_retarget_report_free(&rep);
        am_motion_free(out);
        am_rig_free(dst);
    }
    am_motion_free(walk);
    am_rig_free(fox);
}

#define AM_TESTS(X) X(retarget_identity) X(retarget_bijective_round_trip) X(retarget_closure_world_joints) \
    X(retarget_composes) X(retarget_names_and_roles) X(retarget_map_json_round_trip_and_errors) \
    X(retarget_overrides_and_their_errors) X(retarget_refuses_unmatched_target) X(retarget_job_validity) \
    X(retarget_feet_hold_plants)
AM_TEST_MAIN(AM_TESTS)
