#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "anymove/capture.h"
#include "cli.h"
#include "exam_cameras.h"
#include "core/internal.h"

static void ami_exam_help(FILE *out)
{
    fprintf(out,
            "usage: anymove exam --rig RIG.json [--creature CREATURE.json] [--seed S] [--frames T]\n"
            "                    [--fps F] [--noise PX] [--dropout P] [--swap P] [--lag L]\n"
            "                    [--outliers P] [--squash F] -o DIR [--quiet]\n\n"
            "Writes DIR/det.npz (a random motion within the rig's limits read in both views of\n"
            "SPEC 3, with the degradations asked for) and DIR/truth.npz (joints, euler, trans,\n"
            "root_quat, contacts, lag). Defaults: seed 0, 150 frames at 30 fps, noise 3 px,\n"
            "dropout 0.02, swap 0.01, lag 0, outliers 0, squash 0.\n\n");
    ami_exam_cameras_help(out);
}

int am_cmd_exam(int argc, char **argv)
{
    const char *rig_path = NULL, *cr_path = NULL, *dir = NULL, *v;
    am_exam_opts o = {.frames = 150, .fps = 30, .noise_px = 3.0, .dropout = 0.02, .swap = 0.01};
    ami_exam_cameras_args cams = {0};
    long l;
    double d;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_exam_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            dir = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("exam", "--seed", v, &l) || l < 0) return 2;
            o.seed = (uint64_t)l;
        } else if ((v = am_cli_value(argc, argv, &i, "--frames"))) {
            if (!am_cli_long("exam", "--frames", v, &l)) return 2;
            if (l < 3) return am_cli_usage("exam", "--frames must be at least 3");
            o.frames = (size_t)l;
        } else if ((v = am_cli_value(argc, argv, &i, "--lag"))) {
            if (!am_cli_long("exam", "--lag", v, &l)) return 2;
            o.lag = (int)l;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("exam", "--fps", v, &o.fps) || o.fps <= 0) return am_cli_usage("exam", "--fps must be > 0");
        } else if ((v = am_cli_value(argc, argv, &i, "--noise"))) {
            if (!am_cli_double("exam", "--noise", v, &o.noise_px)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--dropout"))) {
            if (!am_cli_double("exam", "--dropout", v, &o.dropout)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--swap"))) {
            if (!am_cli_double("exam", "--swap", v, &o.swap)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--outliers"))) {
            if (!am_cli_double("exam", "--outliers", v, &o.outliers)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--squash"))) {
            if (!am_cli_double("exam", "--squash", v, &d)) return 2;
            o.squash = d;
        } else if (ami_exam_cameras_arg(argc, argv, &i, &cams)) {
            if (cams.bad) return 2;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("exam", "unknown option '%s'", argv[i]);
        } else {
            return am_cli_usage("exam", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!rig_path) return am_cli_usage("exam", "missing --rig RIG.json");
    if (!dir) return am_cli_usage("exam", "missing -o DIR");
    if (cams.spec) return ami_exam_cameras_run(&cams, rig_path, cr_path, dir, &o);
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_exam *ex = NULL;
    int rc = 0;
    char path[4096];
    if (am_rig_load(rig_path, &rig, &err) != AM_OK || (cr_path && am_creature_load(cr_path, &cr, &err) != AM_OK) ||
        am_exam_generate(rig, cr, &o, &ex, &err) != AM_OK) {
        rc = am_cli_fail("exam", &err);
        goto done;
    }
    if (am_cli_mkdir_p(dir, &err) != AM_OK) {
        rc = am_cli_fail("exam", &err);
        goto done;
    }
    snprintf(path, sizeof path, "%s/det.npz", dir);
    if (am_det_write(path, ex->det, &err) != AM_OK) {
        rc = am_cli_fail("exam", &err);
        goto done;
    }
    snprintf(path, sizeof path, "%s/truth.npz", dir);
    if (am_exam_write_truth(ex, path, &err) != AM_OK) {
        rc = am_cli_fail("exam", &err);
        goto done;
    }
    am_cli_log("exam: %zu frames, %zu joints, body size %.3f m, lag %d -> %s/{det,truth}.npz", ex->det->frame_count,
           ex->det->joint_count, ex->body_size, ex->lag, dir);
done:
    am_exam_free(ex);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
