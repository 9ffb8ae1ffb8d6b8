/* IK solver: validity, exact reproduction of rigid skeletons, rotation error, speed. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am_test.h"
#include "anymove/bvh.h"
#include "anymove/ik.h"
#include "anymove/math.h"
#include "anymove/metrics.h"

/* A small rig: a root with two legs (hinge knees) and a spine. */
static am_rig *ami_test_rig(void)
{
    static const char *jn[] = {"pelvis", "chest", "head", "hipL", "kneeL", "footL", "hipR", "kneeR", "footR"};
    static const double jp[] = {0, 0, 1,   0, -0.1, 1.5,   0, -0.15, 1.8,
                                0.15, 0, 0.95,   0.15, -0.02, 0.5,   0.15, 0, 0.05,
                                -0.15, 0, 0.95,  -0.15, -0.02, 0.5,  -0.15, 0, 0.05};
    static const char *bn[] = {"spine", "neck", "hipL", "thighL", "shinL", "hipR", "thighR", "shinR"};
    static const char *bh[] = {"pelvis", "chest", "pelvis", "hipL", "kneeL", "pelvis", "hipR", "kneeR"};
    static const char *bt[] = {"chest", "head", "hipL", "kneeL", "footL", "hipR", "kneeR", "footR"};
    static const char *bp[] = {NULL, "spine", "spine", "hipL", "thighL", "spine", "hipR", "thighR"};
    am_rig_desc d = {.joint_count = 9, .joint_names = jn, .joint_pos = jp, .bone_count = 8,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    return rig;
}

/* A random-ish smooth motion of the rig (every bone, including twists). */
static am_motion *ami_test_motion(const am_rig *rig, size_t T)
{
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, T, 30, &mo, &err), &err);
    if (!mo) return NULL;
    size_t B = rig->bone_count;
    for (size_t t = 0; t < T; t++) {
        double s = (double)t / 30.0;
        double e[3] = {0.2 * sin(s), 0.1 * cos(1.3 * s), 0.3 * sin(0.7 * s)};
        am_euler_xyz_to_quat(e, mo->root_quat + t * 4);
        am_vec3_set(mo->trans + t * 3, 0.1 * s, -0.5 * s, 1 + 0.05 * sin(3 * s));
        for (size_t b = 1; b < B; b++) {
            double *eb = mo->euler + (t * B + b) * 3;
            eb[0] = 0.6 * sin(s * (1 + 0.1 * (double)b)) + 0.4;
            eb[1] = 0.3 * cos(s * 0.8 + (double)b);
            eb[2] = 0.2 * sin(s * 1.7 + 0.5 * (double)b);
            if (mo->quat) am_euler_xyz_to_quat(eb, mo->quat + (t * B + b) * 4);
        }
    }
    AM_CHECK_OK(am_motion_compute_joints(mo, rig, &err), &err);
    return mo;
}

static void ik_job_validity(void)
{
    am_error err = {0};
    am_rig *rig = ami_test_rig();
    if (!rig) return;
    am_motion *mo = ami_test_motion(rig, 3);
    if (!mo) goto done;
    am_ik_job job = {.rig = rig, .frame_count = 0, .positions = mo->joints, .out = mo};
    AM_CHECK_STATUS(am_ik_validate(&job, &err), AM_E_EMPTY);
    AM_CHECK(am_status_fault(AM_E_EMPTY) == AM_FAULT_INPUT);
    job.frame_count = 4;
    AM_CHECK_STATUS(am_ik_validate(&job, &err), AM_E_SHAPE);
    job.frame_count = 3;
    double *p = malloc(3 * rig->joint_count * 3 * sizeof *p);
    memcpy(p, mo->joints, 3 * rig->joint_count * 3 * sizeof *p);
    p[(2 * rig->joint_count + 4) * 3 + 1] = NAN;
    job.positions = p;
    AM_CHECK_STATUS(am_ik_run(&job, &err), AM_E_NONFINITE);
    AM_CHECK(strstr(err.info, "kneeL") && strstr(err.info, "frame 2"));
    uint8_t mask[9] = {1, 1, 1, 1, 0, 1, 1, 1, 1}; /* kneeL not observed: NaN ignored */
    job.joint_mask = mask;
    AM_CHECK_OK(am_ik_run(&job, &err), &err);
    free(p);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

static void ik_allocation_failures_are_clean(void)
{
    am_rig *rig = ami_test_rig();
    if (!rig) return;
    am_motion *truth = ami_test_motion(rig, 5), *pred = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, 5, 30, &pred, &err), &err);
    if (truth && pred) {
        am_ik_job job = {.rig = rig, .frame_count = 5, .positions = truth->joints, .out = pred,
                         .reference = truth};
        am_status s = AM_E_NOMEM;
        for (uint64_t lim = 1; lim < 100 && s != AM_OK; lim++) {
            am_test_alloc_limit(lim);
            s = am_ik_run(&job, &err);
            am_test_alloc_limit(0);
            AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        }
        AM_CHECK(s == AM_OK);
    }
    am_motion_free(pred);
    am_motion_free(truth);
    am_rig_free(rig);
}

static void ik_reproduces_rig_positions(void)
{
    am_rig *rig = ami_test_rig();
    if (!rig) return;
    size_t T = 90, J = rig->joint_count;
    am_motion *truth = ami_test_motion(rig, T), *pred = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, T, 30, &pred, &err), &err);
    if (!truth || !pred) goto done;
    for (int with_ref = 0; with_ref < 2; with_ref++) {
        am_ik_job job = {.rig = rig, .frame_count = T, .positions = truth->joints, .out = pred,
                         .reference = with_ref ? truth : NULL};
        AM_CHECK_OK(am_ik_run(&job, &err), &err);
        double *fk = malloc(T * J * 3 * sizeof *fk);
        am_rig_fk_clip(rig, pred, fk);
        am_stats st, rot;
        AM_CHECK_OK(am_joint_position_error(fk, truth->joints, T, J, NULL, NULL, &st, &err), &err);
        double size = am_body_size(truth->joints, J, NULL);
        AM_CHECK_MSG(st.max <= 1e-6 * size, "position error %.3g > 1e-6 of %.3g", st.max, size);
        AM_CHECK_OK(am_motion_rotation_error(rig, pred, truth, NULL, NULL, &rot, &err), &err);
        printf("  test rig %s reference: position max %.2e, rotation mean %.2f deg\n",
               with_ref ? "with" : "without", st.max / size, rot.mean);
        if (with_ref) {
            am_rot_error_opts o = {.frame_count = 1};
            AM_CHECK_OK(am_motion_rotation_error(rig, pred, truth, &o, NULL, &rot, &err), &err);
            AM_CHECK_MSG(rot.max < 1e-4, "frame 0 with reference: %.3g deg", rot.max);
        }
        free(fk);
    }
done:
    am_motion_free(pred);
    am_motion_free(truth);
    am_rig_free(rig);
}

/* A bone that stretches in the data (the foot slides 20% further along the shin) changes no
 * rotation: directions come from the observed head and tail, so the error stays local to the
 * stretched joint and shows up as FK position error only. */
static void ik_stretch_stays_local(void)
{
    am_rig *rig = ami_test_rig();
    if (!rig) return;
    size_t T = 30, J = rig->joint_count, B = rig->bone_count;
    am_motion *truth = ami_test_motion(rig, T), *a = NULL, *b = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, T, 30, &a, &err), &err);
    AM_CHECK_OK(am_motion_create(rig, T, 30, &b, &err), &err);
    double *p = malloc(T * J * 3 * sizeof *p);
    if (!truth || !a || !b || !p) goto done;
    memcpy(p, truth->joints, T * J * 3 * sizeof *p);
    int knee = am_rig_find_joint(rig, "kneeL"), foot = am_rig_find_joint(rig, "footL");
    for (size_t t = 0; t < T; t++) {
        double *k = p + (t * J + (size_t)knee) * 3, *f = p + (t * J + (size_t)foot) * 3, d[3];
        am_vec3_sub(f, k, d);
        am_vec3_madd(f, 0.2, d, f);
    }
    am_ik_job ja = {.rig = rig, .frame_count = T, .positions = truth->joints, .out = a, .reference = truth};
    am_ik_job jb = ja;
    jb.positions = p;
    jb.out = b;
    AM_CHECK_OK(am_ik_run(&ja, &err), &err);
    AM_CHECK_OK(am_ik_run(&jb, &err), &err);
    am_stats st;
    AM_CHECK_OK(am_motion_rotation_error(rig, a, b, NULL, NULL, &st, &err), &err);
    AM_CHECK_MSG(st.max < 1e-4, "stretch changed a rotation by %.3g deg", st.max);
    AM_CHECK(B == a->bone_count);
done:
    free(p);
    am_motion_free(b);
    am_motion_free(a);
    am_motion_free(truth);
    am_rig_free(rig);
}

/* Joint limits choose among the twists (free for positions): a thigh limited to +-5 degrees of
 * Euler Y (its twist) stays inside while every position is still reproduced. */
static void ik_limits_pick_the_twist(void)
{
    am_rig *base = ami_test_rig();
    if (!base) return;
    const char *jn[9], *bn[8], *bh[8], *bt[8], *bp[8];
    for (size_t j = 0; j < 9; j++) jn[j] = base->joint_names[j];
    for (size_t b = 0; b < 8; b++) {
        bn[b] = base->bone_names[b];
        bh[b] = base->joint_names[base->head_joint[b]];
        bt[b] = base->joint_names[base->tail_joint[b]];
        bp[b] = base->parent[b] < 0 ? NULL : base->bone_names[base->parent[b]];
    }
    const char *keys[] = {"thighL"};
    const double lim[] = {-90, 90, -5, 5, -90, 90};
    am_rig_desc d = {.joint_count = 9, .joint_names = jn, .joint_pos = base->joint_rest, .bone_count = 8,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp,
                     .limit_count = 1, .limit_keys = keys, .limits_deg = lim};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    size_t T = 40, J = 9;
    am_motion *truth = rig ? ami_test_motion(rig, T) : NULL, *pred = NULL, *ref = NULL;
    if (!truth) goto done;
    /* the knee stays straight, so nothing observes the thigh's twist; the reference (the
     * prior) twists it by 30 degrees, outside the limit */
    int thigh = am_rig_find_bone(rig, "thighL"), shin = am_rig_find_bone(rig, "shinL");
    size_t B = rig->bone_count;
    for (size_t t = 0; t < T; t++) {
        double *e = truth->euler + (t * B + (size_t)thigh) * 3;
        e[1] = AM_RAD(4) * sin(0.2 * (double)t);
        memset(truth->euler + (t * B + (size_t)shin) * 3, 0, 3 * sizeof(double));
    }
    AM_CHECK_OK(am_motion_compute_joints(truth, rig, &err), &err);
    ref = ami_test_motion(rig, 1);
    if (!ref) goto done;
    memcpy(ref->euler, truth->euler, B * 3 * sizeof(double));
    ref->euler[(size_t)thigh * 3 + 1] = AM_RAD(30);
    memcpy(ref->root_quat, truth->root_quat, 4 * sizeof(double));
    AM_CHECK_OK(am_motion_create(rig, T, 30, &pred, &err), &err);
    if (!pred) goto done;
    am_ik_opts free_opts = {.flags = AM_IK_NO_LIMITS};
    am_ik_job job = {.rig = rig, .frame_count = T, .positions = truth->joints, .out = pred,
                     .reference = ref};
    double worst = 0, worst_free = 0;
    for (int pass = 0; pass < 2; pass++) {
        job.opts = pass ? NULL : &free_opts;
        AM_CHECK_OK(am_ik_run(&job, &err), &err);
        for (size_t t = 0; t < T; t++) {
            double L[9], e[3];
            am_euler_xyz_to_mat3(pred->euler + (t * rig->bone_count + (size_t)thigh) * 3, L);
            am_mat3_to_euler_xyz(L, e);
            if (pass) worst = fmax(worst, fabs(e[1]));
            else worst_free = fmax(worst_free, fabs(e[1]));
        }
    }
    printf("  thigh twist: %.2f deg with limits, %.2f deg without\n", AM_DEG(worst), AM_DEG(worst_free));
    AM_CHECK_MSG(worst <= AM_RAD(5) + AM_RAD(2.5), "thigh twist %.2f deg outside +-5", AM_DEG(worst));
    double *fk = malloc(T * J * 3 * sizeof *fk);
    am_rig_fk_clip(rig, pred, fk);
    am_stats st;
    AM_CHECK_OK(am_joint_position_error(fk, truth->joints, T, J, NULL, NULL, &st, &err), &err);
    AM_CHECK(st.max < 1e-9);
    AM_CHECK(worst_free > AM_RAD(20)); /* without limits the prior's twist wins */
    free(fk);
done:
    am_motion_free(ref);
    am_motion_free(pred);
    am_motion_free(truth);
    am_rig_free(rig);
    am_rig_free(base);
}

/* Every shared BVH: rig + motion from the file, IK from its FK joints, back to positions. */
static void ami_ik_bvh_file(const char *path, const char *name, void *user)
{
    (void)user;
    am_bvh *b = NULL;
    am_rig *rig = NULL;
    am_motion *truth = NULL, *pred = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_bvh_load(path, NULL, &b, &err), &err);
    if (b) AM_CHECK_OK(am_rig_from_bvh(b, NULL, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_bvh(b, rig, NULL, &truth, NULL, &err), &err);
    if (truth) AM_CHECK_OK(am_motion_create(rig, truth->frame_count, truth->fps, &pred, &err), &err);
    if (pred) {
        size_t T = truth->frame_count, J = rig->joint_count;
        double *fk = malloc(T * J * 3 * sizeof *fk);
        for (int with_ref = 1; with_ref >= 0; with_ref--) {
            am_ik_job job = {.rig = rig, .frame_count = T, .positions = truth->joints,
                             .out = pred, .reference = with_ref ? truth : NULL};
            AM_CHECK_OK(am_ik_run(&job, &err), &err);
            am_rig_fk_clip(rig, pred, fk);
            am_stats st, rot, rot48;
            AM_CHECK_OK(am_joint_position_error(fk, truth->joints, T, J, NULL, NULL, &st, &err), &err);
            double size = am_body_size(truth->joints, J, NULL);
            AM_CHECK_MSG(st.max <= 1e-6 * size, "%s: position error %.3g of size", name,
                         st.max / size);
            am_rot_error_opts o48 = {.frame_count = 48};
            AM_CHECK_OK(am_motion_rotation_error(rig, pred, truth, NULL, NULL, &rot, &err), &err);
            AM_CHECK_OK(am_motion_rotation_error(rig, pred, truth, &o48, NULL, &rot48, &err), &err);
            printf("  %s %s ref: pos max %.1e of size, rot %.2f deg (48 frames %.2f)\n",
                   name, with_ref ? "with" : "no", st.max / size, rot.mean, rot48.mean);
        }
        free(fk);
    }
    am_motion_free(pred);
    am_motion_free(truth);
    am_rig_free(rig);
    am_bvh_free(b);
}

static void ik_reproduces_shared_bvh(void)
{
    size_t files = am_test_each_file(am_test_shared("data/bvh"), ".bvh", ami_ik_bvh_file, NULL);
    printf("  %zu BVH files\n", files);
}

/* 1,000 frames of a 50-joint rig: the benchmark figure lives in bench/RESULTS.md; here only a
 * loose bound so sanitizer builds pass. */
static void ik_speed_50_joints(void)
{
    enum { NB = 49, T = 1000 };
    const char *jn[NB + 1], *bn[NB], *bh[NB], *bt[NB], *bp[NB];
    char names[NB + 1][16], bnames[NB][16];
    double jp[(NB + 1) * 3];
    /* a root with 4 chains of 12 bones and one stub: a quadruped-like tree */
    for (int j = 0; j <= NB; j++) {
        snprintf(names[j], sizeof names[j], "j%d", j);
        jn[j] = names[j];
    }
    jp[0] = 0, jp[1] = 0, jp[2] = 1;
    for (int b = 0; b < NB; b++) {
        snprintf(bnames[b], sizeof bnames[b], "b%d", b);
        bn[b] = bnames[b];
        int chain = b == 0 ? -1 : (b - 1) / 12, k = b == 0 ? 0 : (b - 1) % 12;
        int head = b == 0 ? 0 : (k == 0 ? 1 : b);
        bh[b] = names[head];
        bt[b] = names[b + 1];
        bp[b] = b == 0 ? NULL : (k == 0 ? bnames[0] : bnames[b - 1]);
        double *p = jp + (b + 1) * 3;
        const double *ph = jp + head * 3;
        if (b == 0) {
            p[0] = 0, p[1] = -0.3, p[2] = 1.05;
        } else {
            p[0] = ph[0] + 0.05 * cos(chain * 1.6 + k), p[1] = ph[1] + 0.04 * sin(chain + k * 0.3),
            p[2] = ph[2] + (chain < 2 ? -0.07 : 0.06);
        }
    }
    am_rig_desc d = {.joint_count = NB + 1, .joint_names = jn, .joint_pos = jp, .bone_count = NB,
                     .bone_names = bn, .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    if (!rig) return;
    am_motion *truth = ami_test_motion(rig, T), *pred = NULL;
    AM_CHECK_OK(am_motion_create(rig, T, 30, &pred, &err), &err);
    if (truth && pred) {
        am_ik_job job = {.rig = rig, .frame_count = T, .positions = truth->joints, .out = pred,
                         .reference = truth};
        double best = 1e9, best_cpu = 1e9;
        for (int rep = 0; rep < 7; rep++) {
            struct timespec c0, c1;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
            double t0 = am_now();
            AM_CHECK_OK(am_ik_run(&job, &err), &err);
            double dt = am_now() - t0;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
            double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
            if (dt < best) best = dt;
            if (cpu < best_cpu) best_cpu = cpu;
        }
        printf("  1000 frames x 50 joints: %.2f ms wall, %.2f ms thread CPU (best of 7)\n",
               best * 1e3, best_cpu * 1e3);
        /* CPU time: on a shared machine the wall time measures the neighbours (607 ms wall for
         * 116 ms CPU under ASan at load 11 on 2 cores). */
        AM_CHECK_MSG(best_cpu < 0.5, "%.0f ms thread CPU", best_cpu * 1e3);
    }
    am_motion_free(pred);
    am_motion_free(truth);
    am_rig_free(rig);
}

#define AM_TESTS(X) \
    X(ik_job_validity) X(ik_allocation_failures_are_clean) X(ik_reproduces_rig_positions) X(ik_stretch_stays_local) X(ik_limits_pick_the_twist) X(ik_reproduces_shared_bvh) X(ik_speed_50_joints)
AM_TEST_MAIN(AM_TESTS)
