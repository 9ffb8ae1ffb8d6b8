/* `anymove score solve TRUTH.npz motion.json`: a capture solve against an exam's truth. */
#include <string.h>

#include "anymove/capture.h"
#include "cli.h"
#include "score.h"

static void ami_score_solve_help(FILE *out)
{
    fprintf(out,
            "usage: anymove score solve TRUTH.npz motion.json [--quiet]\n\n"
            "Prints one JSON object on stdout: per-joint error in cm (mean, median, p95) and in %%\n"
            "of body size (SPEC 5), geodesic local rotation error (deg; much of it is\n"
            "unobservable twist, judge by joints), reprojection per view as the solve reported\n"
            "it, the lag (true, found, recovered), contact precision / recall and foot slide\n"
            "(mm per true plant).\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --creature examples/creatures/wolf/creature.json -o out/wolf_exam\n"
            "  anymove solve out/wolf_exam/det.npz --rig examples/creatures/wolf/rig.json \\\n"
            "                --creature examples/creatures/wolf/creature.json -o out/wolf_solve\n"
            "  anymove score solve out/wolf_exam/truth.npz out/wolf_solve/motion.json\n");
}

int am_score_solve_main(int argc, char **argv)
{
    const char *truth_path = NULL, *motion_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_score_solve_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (argv[i][0] == '-') {
            return am_cli_usage("score solve", "unknown option '%s'", argv[i]);
        } else if (!truth_path) {
            truth_path = argv[i];
        } else if (!motion_path) {
            motion_path = argv[i];
        } else {
            return am_cli_usage("score solve", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!truth_path || !motion_path) return am_cli_usage("score solve", "need TRUTH.npz and motion.json");
    am_error err = {0};
    am_capture_truth *tr = NULL;
    am_motion *mo = NULL;
    am_capture_score sc;
    am_buf out = {0};
    int rc = 0;
    if (am_capture_truth_load(truth_path, &tr, &err) != AM_OK || am_motion_load(motion_path, NULL, &mo, &err) != AM_OK ||
        am_capture_score_motion(tr, mo, &sc, &err) != AM_OK) {
        am_error_set_file(&err, motion_path); /* the motion does not fit the truth */
        rc = am_cli_fail("score solve", &err);
        goto done;
    }
    am_capture_score_json(&sc, &out);
    if (out.data) fwrite(out.data, 1, out.len, stdout);
done:
    am_buf_free(&out);
    am_motion_free(mo);
    am_capture_truth_free(tr);
    return rc;
}
