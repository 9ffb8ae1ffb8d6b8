/* Retarget speed: bench_retarget SHARED_DATA [REPEATS [transfer|feet|glb [CASE]]]. The source is
 * AnimatedDrawings' dab.bvh (27 joints, Z up) cycled to 1,000 frames; the target a 60-bone
 * character built here (Mixamo-style names: a ground root, hips, three spine bones, neck, head,
 * jaw, eyes, clavicles, arms, five three-bone fingers a hand, legs with toes, a four-bone
 * tail). The map is built once; am_retarget_run is timed with the IK off and with feet IK
 * (the default), the GLB write of the result apart. Best and median of the repeats, wall and
 * thread CPU time, one thread. A second case puts that motion of the character onto the
 * character stretched by 1.2, every bone driven. The optional CASE (1 or 2) runs one case only
 * (for callgrind). For bench/retarget.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anymove/bvh.h"
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/retarget.h"

static double ami_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int ami_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAXB 64
typedef struct ami_builder {
    size_t nj, nb;
    char jn[MAXB * 2][80], bn[MAXB][144], bh[MAXB][80], bt[MAXB][80], bp[MAXB][144];
    double jp[MAXB * 2][3];
} ami_builder;

static void ami_joint(ami_builder *r, const char *name, double x, double y, double z)
{
    snprintf(r->jn[r->nj], sizeof r->jn[0], "%s", name);
    am_vec3_set(r->jp[r->nj++], x, y, z);
}

static void ami_bone(ami_builder *r, const char *name, const char *head, const char *tail, const char *parent)
{
    snprintf(r->bn[r->nb], sizeof r->bn[0], "mixamorig:%s", name);
    snprintf(r->bh[r->nb], sizeof r->bh[0], "%s", head);
    snprintf(r->bt[r->nb], sizeof r->bt[0], "%s", tail);
    if (parent) snprintf(r->bp[r->nb], sizeof r->bp[0], "mixamorig:%s", parent);
    else r->bp[r->nb][0] = '\0';
    r->nb++;
}

/* The 60-bone character, 1.8 m tall, T-pose, facing -Y. */
static am_rig *ami_character(am_error *err)
{
    static ami_builder r;
    memset(&r, 0, sizeof r);
    ami_joint(&r, "ground", 0, 0, 0);
    ami_joint(&r, "pelvis", 0, 0, 1.0);
    ami_joint(&r, "s1", 0, 0.01, 1.12);
    ami_joint(&r, "s2", 0, 0.01, 1.25);
    ami_joint(&r, "s3", 0, 0, 1.38);
    ami_joint(&r, "neck", 0, -0.01, 1.52);
    ami_joint(&r, "head", 0, -0.02, 1.62);
    ami_joint(&r, "headtop", 0, -0.02, 1.8);
    ami_joint(&r, "jaw", 0, -0.08, 1.6);
    ami_bone(&r, "Root", "ground", "pelvis", NULL);
    ami_bone(&r, "Hips", "pelvis", "s1", "Root");
    ami_bone(&r, "Spine", "s1", "s2", "Hips");
    ami_bone(&r, "Spine1", "s2", "s3", "Spine");
    ami_bone(&r, "Spine2", "s3", "neck", "Spine1");
    ami_bone(&r, "Neck", "neck", "head", "Spine2");
    ami_bone(&r, "Head", "head", "headtop", "Neck");
    ami_bone(&r, "Jaw", "head", "jaw", "Head");
    for (int side = 0; side < 2; side++) {
        double sx = side ? -1 : 1;
        const char *S = side ? "Right" : "Left", *s = side ? "r" : "l";
        char n[64], h[64], t[64], p[64];
#define J(name, x, y, z) (snprintf(n, sizeof n, "%s_%s", name, s), ami_joint(&r, n, sx * (x), y, z))
#define B(name, head, tail, parent)                                                                          \
    (snprintf(n, sizeof n, "%s%s", S, name), snprintf(h, sizeof h, "%s_%s", head, s),                         \
     snprintf(t, sizeof t, "%s_%s", tail, s), snprintf(p, sizeof p, "%s%s", S, parent),                       \
     ami_bone(&r, n, h, t, (parent)[0] == '!' ? &(parent)[1] : p))
        J("eye", 0.03, -0.08, 1.68);
        J("eyetip", 0.03, -0.11, 1.68);
        B("Eye", "eye", "eyetip", "!Head");
        J("clav", 0.02, 0, 1.45);
        J("shoulder", 0.17, 0.01, 1.45);
        J("elbow", 0.45, 0.02, 1.45);
        J("wrist", 0.72, 0.0, 1.45);
        J("palm", 0.8, 0.0, 1.45);
        B("Shoulder", "clav", "shoulder", "!Spine2");
        B("Arm", "shoulder", "elbow", "Shoulder");
        B("ForeArm", "elbow", "wrist", "Arm");
        B("Hand", "wrist", "palm", "ForeArm");
        static const char *const fingers[5] = {"Thumb", "Index", "Middle", "Ring", "Pinky"};
        for (int f = 0; f < 5; f++) {
            double fy = -0.04 + 0.02 * f, fx = f ? 0.8 : 0.74;
            char a[32], b2[32], c[32], d[32];
            snprintf(a, sizeof a, "%s0", fingers[f]);
            snprintf(b2, sizeof b2, "%s1", fingers[f]);
            snprintf(c, sizeof c, "%s2", fingers[f]);
            snprintf(d, sizeof d, "%s3", fingers[f]);
            J(a, fx, fy, 1.45);
            J(b2, fx + 0.04, fy, 1.45);
            J(c, fx + 0.07, fy, 1.45);
            J(d, fx + 0.09, fy, 1.45);
            char name[3][40], parent[40];
            for (int k = 0; k < 3; k++) snprintf(name[k], sizeof name[k], "Hand%s%d", fingers[f], k + 1);
            snprintf(parent, sizeof parent, "Hand");
            B(name[0], a, b2, parent);
            B(name[1], b2, c, name[0]);
            B(name[2], c, d, name[1]);
        }
        J("hip", 0.1, 0, 0.95);
        J("knee", 0.1, -0.02, 0.52);
        J("ankle", 0.1, 0.02, 0.09);
        J("ball", 0.1, -0.1, 0.02);
        J("toe", 0.1, -0.17, 0.02);
        B("UpLeg", "hip", "knee", "!Hips");
        B("Leg", "knee", "ankle", "UpLeg");
        B("Foot", "ankle", "ball", "Leg");
        B("ToeBase", "ball", "toe", "Foot");
#undef J
#undef B
    }
    ami_joint(&r, "t0", 0, 0.1, 0.98);
    ami_joint(&r, "t1", 0, 0.25, 0.9);
    ami_joint(&r, "t2", 0, 0.4, 0.85);
    ami_joint(&r, "t3", 0, 0.55, 0.84);
    ami_joint(&r, "t4", 0, 0.7, 0.86);
    ami_bone(&r, "Tail1", "t0", "t1", "Hips");
    ami_bone(&r, "Tail2", "t1", "t2", "Tail1");
    ami_bone(&r, "Tail3", "t2", "t3", "Tail2");
    ami_bone(&r, "Tail4", "t3", "t4", "Tail3");
    const char *jn[MAXB * 2], *bn[MAXB], *bh[MAXB], *bt[MAXB], *bp[MAXB];
    for (size_t j = 0; j < r.nj; j++) jn[j] = r.jn[j];
    for (size_t b = 0; b < r.nb; b++) {
        bn[b] = r.bn[b];
        bh[b] = r.bh[b];
        bt[b] = r.bt[b];
        bp[b] = r.bp[b][0] ? r.bp[b] : NULL;
    }
    am_rig_desc d = {.joint_count = r.nj, .joint_names = jn, .joint_pos = &r.jp[0][0], .bone_count = r.nb,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    if (am_rig_build(&d, &rig, err) != AM_OK) return NULL;
    return rig;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_retarget SHARED_DATA [REPEATS [transfer|feet|glb [CASE]]]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (reps < 1 || reps > 1000) reps = 7;
    const char *only = argc > 3 ? argv[3] : NULL;
    int only_case = argc > 4 ? atoi(argv[4]) : 0;
    char path[1024], msg[600];
    snprintf(path, sizeof path, "%s/bvh/animated_drawings/dab.bvh", argv[1]);
    am_error err = {0};
    am_bvh *bvh = NULL;
    am_rig *src = NULL, *dst = NULL;
    am_motion *clip = NULL, *mo = NULL, *out = NULL;
    am_retarget_map *map = NULL;
    am_bvh_opts bo = {.axes = AM_BVH_AXES_Z_UP, .scale = 0.01};
    if (am_bvh_load(path, &bo, &bvh, &err) != AM_OK || am_rig_from_bvh(bvh, &bo, &src, &err) != AM_OK ||
        am_motion_from_bvh(bvh, src, &bo, &clip, &err) != AM_OK || !(dst = ami_character(&err)) ||
        am_retarget_map_build(src, dst, NULL, &map, &err) != AM_OK) {
        fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
        return 1;
    }
    /* the clip cycled to 1,000 frames */
    const size_t T = 1000, Bs = src->bone_count, Bt = dst->bone_count;
    if (am_motion_create(src, T, clip->fps, &mo, &err) != AM_OK ||
        am_motion_create(dst, T, clip->fps, &out, &err) != AM_OK) {
        fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
        return 1;
    }
    mo->quat = am_alloc_array(T * Bs * 4, sizeof(double));
    out->quat = am_alloc_array(T * Bt * 4, sizeof(double));
    for (size_t t = 0; t < T; t++) {
        size_t u = t % clip->frame_count;
        memcpy(mo->trans + 3 * t, clip->trans + 3 * u, 3 * sizeof(double));
        memcpy(mo->root_quat + 4 * t, clip->root_quat + 4 * u, 4 * sizeof(double));
        memcpy(mo->euler + t * Bs * 3, clip->euler + u * Bs * 3, Bs * 3 * sizeof(double));
        memcpy(mo->quat + t * Bs * 4, clip->quat + u * Bs * 4, Bs * 4 * sizeof(double));
    }
    size_t direct = 0;
    for (size_t g = 0; g < Bt; g++) direct += map->source[g] >= 0;
    printf("source dab.bvh cycled: %zu frames x %zu bones; target %zu bones (%zu with a driver)\n", T, Bs, Bt, direct);
    /* the second case: that motion of the character onto the character stretched by 1.2, every
     * one of the 60 bones driven */
    am_rig *big = ami_character(&err);
    am_motion *full = NULL, *out2 = NULL;
    am_retarget_map *map2 = NULL;
    if (!big) {
        fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
        return 1;
    }
    am_rig_scale(big, 1.2);
    if (only_case != 1) {
        am_retarget_job job = {.source_rig = src, .source = mo, .target_rig = dst, .map = map, .out = out};
        if (am_retarget_run(&job, &err) != AM_OK || am_motion_create(dst, T, clip->fps, &full, &err) != AM_OK ||
            am_motion_create(big, T, clip->fps, &out2, &err) != AM_OK ||
            am_retarget_map_build(dst, big, NULL, &map2, &err) != AM_OK) {
            fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
            return 1;
        }
        full->quat = am_alloc_array(T * Bt * 4, sizeof(double));
        out2->quat = am_alloc_array(T * Bt * 4, sizeof(double));
        memcpy(full->trans, out->trans, T * 3 * sizeof(double));
        memcpy(full->root_quat, out->root_quat, T * 4 * sizeof(double));
        memcpy(full->euler, out->euler, T * Bt * 3 * sizeof(double));
        memcpy(full->quat, out->quat, T * Bt * 4 * sizeof(double));
        /* the fingers curl and the tail sways: every bone of the source moves */
        for (size_t t = 0; t < T; t++)
            for (size_t b = 1; b < Bt; b++)
                if (map->source[b] < 0) {
                    double e[3] = {0.3 * sin(0.05 * (double)t + (double)b), 0.1 * cos(0.07 * (double)t), 0.2 * sin(0.03 * (double)t)};
                    memcpy(full->euler + (t * Bt + b) * 3, e, sizeof e);
                    am_euler_xyz_to_quat(e, full->quat + (t * Bt + b) * 4);
                }
    }
    static const char *const modes[2] = {"transfer", "feet"};
    for (int c = 0; c < 2; c++)
    for (int m = 0; m < 2; m++) {
        if ((only && strcmp(only, modes[m]) != 0) || (only_case && only_case != c + 1)) continue;
        am_retarget_opts o = {.flags = m == 0 ? AM_RETARGET_NO_IK : 0u};
        am_retarget_report rep = {0};
        am_retarget_job job = {.source_rig = c ? dst : src, .source = c ? full : mo, .target_rig = c ? big : dst,
                               .map = c ? map2 : map, .opts = &o, .out = c ? out2 : out, .report = &rep};
        if (m == 0) printf("%s\n", c ? "case 2: the 60-bone character onto itself x1.2, all 60 bones driven"
                                     : "case 1: dab.bvh (27 bones) onto the 60-bone character");
        double wall[1000], cpu[1000];
        for (int r = 0; r < reps; r++) {
            double w0 = am_now(), c0 = ami_cpu();
            if (am_retarget_run(&job, &err) != AM_OK) {
                fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
                return 1;
            }
            cpu[r] = ami_cpu() - c0;
            wall[r] = am_now() - w0;
        }
        qsort(wall, (size_t)reps, sizeof wall[0], ami_cmp);
        qsort(cpu, (size_t)reps, sizeof cpu[0], ami_cmp);
        printf("%-8s (ik %s): wall best %.2f ms median %.2f ms, thread cpu best %.2f ms median %.2f ms; %zu plants, "
               "%zu IK moves\n",
               modes[m], m ? "feet" : "off", 1e3 * wall[0], 1e3 * wall[reps / 2], 1e3 * cpu[0], 1e3 * cpu[reps / 2],
               rep.plant_count, rep.ik_frames);
        am_retarget_report_free(&rep);
    }
    if (!only || strcmp(only, "glb") == 0) {
        double best = 1e30;
        for (int r = 0; r < (reps < 3 ? reps : 3); r++) {
            am_buf b = {0};
            const am_motion *clips[1] = {out};
            am_gltf_export ex = {.rig = dst, .clip_count = 1, .clips = clips};
            double c0 = ami_cpu();
            if (am_motion_compute_joints(out, dst, &err) != AM_OK || am_gltf_write_mem(&ex, &b, &err) != AM_OK) {
                fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
                return 1;
            }
            double c = ami_cpu() - c0;
            if (c < best) best = c;
            am_buf_free(&b);
        }
        printf("GLB of the result (FK joints + bone-shape GLB, apart): thread cpu best %.1f ms\n", 1e3 * best);
    }
    am_motion_free(out2);
    am_motion_free(full);
    am_retarget_map_free(map2);
    am_rig_free(big);
    am_motion_free(out);
    am_motion_free(mo);
    am_motion_free(clip);
    am_retarget_map_free(map);
    am_rig_free(dst);
    am_rig_free(src);
    am_bvh_free(bvh);
    return 0;
}
