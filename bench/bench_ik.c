/* IK solve time: bench_ik RIG.json MOTION.json [REPEATS [FLAGS [full]]]. FLAGS: am_ik_flags
 * as a number (e.g. 4 = no temporal prior). The motion's joints are the input,
 * its frame 0 the reference. Prints the best and median wall and thread-CPU time of
 * am_ik_run over the repeats (I/O excluded), for bench/ik.sh. "full" times what the Python
 * binding's anymove.ik asks of the library instead (bench/python_ik.sh): a new motion,
 * am_ik_run, FK of the result and the position error against the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anymove/ik.h"
#include "anymove/io.h"
#include "anymove/metrics.h"

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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_ik RIG.json MOTION.json [REPEATS]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 9;
    if (reps < 1 || reps > 1000) reps = 9;
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *truth = NULL, *out = NULL;
    char msg[600];
    if (am_rig_load(argv[1], &rig, &err) != AM_OK || am_motion_load(argv[2], rig, &truth, &err) != AM_OK ||
        (!truth->joints && am_motion_compute_joints(truth, rig, &err) != AM_OK) ||
        am_motion_create(rig, truth->frame_count, truth->fps, &out, &err) != AM_OK) {
        fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
        return 1;
    }
    am_ik_opts opts = {.flags = argc > 4 ? (uint32_t)atoi(argv[4]) : 0};
    am_ik_job job = {.rig = rig, .frame_count = truth->frame_count, .positions = truth->joints,
                     .reference = truth, .opts = &opts, .out = out};
    bool full = argc > 5 && strcmp(argv[5], "full") == 0;
    size_t J = rig->joint_count;
    double *per = malloc(J * sizeof *per);
    uint8_t *mask = malloc(J);
    if (!per || !mask) return 1;
    am_ik_default_mask(rig, mask);
    double wall[1000], cpu[1000];
    for (int r = 0; r < reps; r++) {
        double w0 = am_now(), c0 = ami_cpu();
        am_motion *mo = NULL;
        am_stats st;
        if (full) {
            am_ik_job fj = job;
            fj.joint_mask = mask;
            if (am_motion_create(rig, truth->frame_count, truth->fps, &mo, &err) != AM_OK ||
                (fj.out = mo, am_ik_run(&fj, &err)) != AM_OK ||
                am_motion_compute_joints(mo, rig, &err) != AM_OK ||
                am_joint_position_error(mo->joints, truth->joints, truth->frame_count, J, mask, per, &st,
                                        &err) != AM_OK) {
                fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
                return 1;
            }
            (void)am_body_size(truth->joints, J, mask);
            am_motion_free(mo);
        } else if (am_ik_run(&job, &err) != AM_OK) {
            fprintf(stderr, "%s\n", am_error_format(msg, sizeof msg, &err));
            return 1;
        }
        cpu[r] = ami_cpu() - c0;
        wall[r] = am_now() - w0;
    }
    qsort(wall, (size_t)reps, sizeof wall[0], ami_cmp);
    qsort(cpu, (size_t)reps, sizeof cpu[0], ami_cmp);
    free(per);
    free(mask);
    printf("%sframes %zu bones %zu joints %zu: wall best %.2f ms median %.2f ms, thread cpu best %.2f ms median %.2f ms\n",
           full ? "full: " : "", truth->frame_count, rig->bone_count, rig->joint_count, 1e3 * wall[0], 1e3 * wall[reps / 2],
           1e3 * cpu[0], 1e3 * cpu[reps / 2]);
    am_motion_free(out);
    am_motion_free(truth);
    am_rig_free(rig);
    return 0;
}
