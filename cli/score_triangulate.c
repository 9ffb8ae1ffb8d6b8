/* `anymove score triangulate TRUTH.npz joints.npz`: triangulated joints against an exam's truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/capture.h"
#include "anymove/mocap.h"
#include "cli.h"
#include "score.h"

static int ami_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int am_score_triangulate_main(int argc, char **argv)
{
    const char *truth_path = NULL, *joints_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            printf("usage: anymove score triangulate TRUTH.npz joints.npz [--quiet]\n\n"
                   "Prints one JSON object on stdout: the per-joint position error of the triangulated\n"
                   "joints (matched by name, frames where both exist) in cm (mean, median, p95) and in %%\n"
                   "of body size (SPEC 5), and the fraction of points left missing.\n\n"
                   "example:\n"
                   "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o /tmp/ex4\n"
                   "  anymove triangulate /tmp/ex4/det.npz --cameras /tmp/ex4/calibration.toml -o /tmp/tri4\n"
                   "  anymove score triangulate /tmp/ex4/truth.npz /tmp/tri4/joints.npz\n");
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (argv[i][0] == '-') {
            return am_cli_usage("score triangulate", "unknown option '%s'", argv[i]);
        } else if (!truth_path) {
            truth_path = argv[i];
        } else if (!joints_path) {
            joints_path = argv[i];
        } else {
            return am_cli_usage("score triangulate", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!truth_path || !joints_path) return am_cli_usage("score triangulate", "need TRUTH.npz and joints.npz");
    am_error err = {0};
    am_capture_truth *tr = NULL;
    am_joints *jt = NULL;
    double *e = NULL;
    int rc = 0;
    if (am_capture_truth_load(truth_path, &tr, &err) != AM_OK || am_joints_load(joints_path, &jt, &err) != AM_OK) {
        rc = am_cli_fail("score triangulate", &err);
        goto done;
    }
    if (jt->frame_count != tr->frame_count) {
        fprintf(stderr, "anymove score triangulate: %s has %zu frames, %s %zu\n", joints_path, jt->frame_count,
                truth_path, tr->frame_count);
        rc = 2;
        goto done;
    }
    const size_t T = tr->frame_count, J = jt->joint_count;
    e = malloc((T * J + 1) * sizeof *e);
    if (!e) {
        rc = 1;
        goto done;
    }
    size_t n = 0, missing = 0, compared = 0;
    for (size_t j = 0; j < J; j++) {
        int k = -1;
        for (size_t q = 0; q < tr->joint_count; q++)
            if (strcmp(tr->names[q], jt->names[j]) == 0) k = (int)q;
        if (k < 0) continue;
        for (size_t t = 0; t < T; t++) {
            const double *p = jt->joints + (t * J + j) * 3, *q = tr->joints + (t * tr->joint_count + (size_t)k) * 3;
            compared++;
            if (isnan(p[0])) {
                missing++;
                continue;
            }
            e[n++] = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
        }
    }
    if (!compared) {
        fprintf(stderr, "anymove score triangulate: no joint of %s is in %s\n", joints_path, truth_path);
        rc = 2;
        goto done;
    }
    double s = 0;
    for (size_t k = 0; k < n; k++) s += e[k];
    qsort(e, n, sizeof *e, ami_cmp);
    double mean = n ? s / (double)n : NAN, med = n ? e[n / 2] : NAN, p95 = n ? e[(size_t)(0.95 * (double)(n - 1))] : NAN;
    double bs = tr->body_size;
    printf("{\"points\": %zu, \"missing\": %zu, \"missing_pct\": %.3f, \"body_size_m\": %.4f,\n"
           " \"joint_mean_cm\": %.4f, \"joint_median_cm\": %.4f, \"joint_p95_cm\": %.4f,\n"
           " \"joint_mean_pct\": %.4f, \"joint_p95_pct\": %.4f}\n",
           compared, missing, 100.0 * (double)missing / (double)compared, bs, 100 * mean, 100 * med, 100 * p95,
           100 * mean / bs, 100 * p95 / bs);
done:
    free(e);
    am_joints_free(jt);
    am_capture_truth_free(tr);
    return rc;
}
