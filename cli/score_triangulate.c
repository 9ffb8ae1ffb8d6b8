/* `anymove score triangulate TRUTH.npz joints.npz`: triangulated joints against an exam's truth. */
#include <math.h>
#include <string.h>

#include "anymove/capture.h"
#include "anymove/metrics.h"
#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "score.h"

static void ami_score_triangulate_help(FILE *out)
{
    fprintf(out,
            "usage: anymove score triangulate TRUTH.npz joints.npz [--quiet]\n\n"
            "Prints one JSON object on stdout: the per-joint position error of the triangulated\n"
            "joints (matched by name, frames where both exist) in cm (mean, median, p95) and in %%\n"
            "of body size (SPEC 5), and the fraction of points left missing.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o out/wolf_exam4\n"
            "  anymove triangulate out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml -o out/wolf_tri4\n"
            "  anymove score triangulate out/wolf_exam4/truth.npz out/wolf_tri4/joints.npz\n");
}

/* Distances [*n] between the joints of jt and the truth's joints of the same name. */
static am_status ami_match_errors(const am_capture_truth *tr, const am_joints *jt, const char *joints_path,
                                  double *e, size_t *n, size_t *compared, size_t *missing, am_error *err)
{
    const size_t T = tr->frame_count, J = jt->joint_count;
    *n = *compared = *missing = 0;
    for (size_t j = 0; j < J; j++) {
        int k = -1;
        for (size_t q = 0; q < tr->joint_count && k < 0; q++)
            if (strcmp(tr->names[q], jt->names[j]) == 0) k = (int)q;
        if (k < 0) continue;
        for (size_t t = 0; t < T; t++) {
            const double *p = jt->joints + (t * J + j) * 3, *q = tr->joints + (t * tr->joint_count + (size_t)k) * 3;
            (*compared)++;
            if (isnan(p[0])) (*missing)++;
            else e[(*n)++] = am_vec3_dist(p, q);
        }
    }
    AMI_CHECK(err, *compared > 0, AM_E_NAME, "no joint of %s is a joint of the truth", joints_path);
    return AM_OK;
}

int am_score_triangulate_main(int argc, char **argv)
{
    const char *truth_path = NULL, *joints_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_score_triangulate_help(stdout);
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
    am_buf o = {0};
    int rc = 0;
    if (am_capture_truth_load(truth_path, &tr, &err) != AM_OK || am_joints_load(joints_path, &jt, &err) != AM_OK)
        goto fail;
    if (jt->frame_count != tr->frame_count) {
        AM_FAIL_AT(&err, AM_E_SHAPE, joints_path, 0, 0, "%zu frames, but the truth %s has %zu", jt->frame_count,
                   truth_path, tr->frame_count);
        goto fail;
    }
    e = am_alloc_array(tr->frame_count * jt->joint_count + 1, sizeof *e);
    if (!e) {
        AM_FAIL(&err, AM_E_NOMEM, "errors");
        goto fail;
    }
    size_t n = 0, compared = 0, missing = 0;
    am_stats st;
    if (ami_match_errors(tr, jt, joints_path, e, &n, &compared, &missing, &err) != AM_OK ||
        am_stats_compute(e, n, &st, &err) != AM_OK) {
        am_error_set_file(&err, joints_path);
        goto fail;
    }
    const double bs = tr->body_size;
    ami_jw w;
    ami_jw_begin(&w, &o, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_int(&w, "points", (int64_t)compared);
    ami_jw_int(&w, "missing", (int64_t)missing);
    ami_jw_number(&w, "missing_pct", 100.0 * (double)missing / (double)compared);
    ami_jw_number(&w, "body_size_m", bs);
    ami_jw_number_or_null(&w, "joint_mean_cm", n ? 100 * st.mean : NAN);
    ami_jw_number_or_null(&w, "joint_median_cm", n ? 100 * st.median : NAN);
    ami_jw_number_or_null(&w, "joint_p95_cm", n ? 100 * st.p95 : NAN);
    ami_jw_number_or_null(&w, "joint_mean_pct", n && bs > 0 ? 100 * st.mean / bs : NAN);
    ami_jw_number_or_null(&w, "joint_p95_pct", n && bs > 0 ? 100 * st.p95 / bs : NAN);
    ami_jw_close(&w);
    if (ami_jw_finish(&w, &err) != AM_OK) goto fail;
    fwrite(o.data, 1, o.len, stdout);
    goto done;
fail:
    rc = am_cli_fail("score triangulate", &err);
done:
    am_buf_free(&o);
    am_free(e);
    am_joints_free(jt);
    am_capture_truth_free(tr);
    return rc;
}
