/* `anymove exam --rig RIG -o DIR`: a random motion within a rig's limits (or a given one,
 * --motion), read in two views or (--cameras, exam_cameras.c) by N calibrated cameras. */
#include <string.h>

#include "anymove/capture.h"
#include "cli.h"
#include "core/internal.h"
#include "exam_cameras.h"

static void ami_exam_help(FILE *out)
{
    fprintf(out,
            "usage: anymove exam --rig RIG.json [--creature CREATURE.json] [--seed S] [--frames T]\n"
            "                    [--fps F] [--noise PX] [--dropout P] [--swap P] [--lag L]\n"
            "                    [--outliers P] [--squash F] [--motion MOTION.json] -o DIR [--quiet]\n"
            "       anymove exam --rig RIG.json --cameras N|CALIB.toml [--scale S] [--offsets MAX]\n"
            "                    [--hide-offsets] [--occlusion] [the options above but --lag] -o DIR\n\n"
            "Writes DIR/det.npz (a random motion within the rig's limits read in both views of\n"
            "SPEC 3, with the degradations asked for) and DIR/truth.npz (joints, euler, trans,\n"
            "root_quat, contacts, lag). Defaults: seed 0, 150 frames at 30 fps, noise 3 px,\n"
            "dropout 0.02, swap 0.01, lag 0, outliers 0, squash 0.\n"
            "--motion: read this motion of the rig (any file `convert` writes: motion.json, or a clip\n"
            "synthesised by `synth gait`) instead of a random one; its frames and fps are used, and the\n"
            "creature's contact joints are planted where they are on the ground and still. Two views\n"
            "only. To test the capture pipeline on your own clip: exam it, solve it, score it.\n\n");
    ami_exam_cameras_help(out);
    fprintf(out,
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --creature examples/creatures/wolf/creature.json \\\n"
            "               --seed 1 --lag 3 -o out/wolf_exam\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 --outliers 0.02 --occlusion \\\n"
            "               --offsets 2 -o out/wolf_exam4\n"
            "  anymove synth gait --rig examples/creatures/wolf/rig.json --gait trot --frames 120 -o out/trot.json\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --creature examples/creatures/wolf/creature.json \\\n"
            "               --motion out/trot.json -o out/trot_exam\n");
}

int am_cmd_exam(int argc, char **argv)
{
    const char *rig_path = NULL, *cr_path = NULL, *dir = NULL, *motion_path = NULL, *v;
    am_exam_opts o = {.frames = 150, .fps = 30, .noise_px = 3.0, .dropout = 0.02, .swap = 0.01};
    ami_exam_cameras_args cams = {0};
    bool lag_given = false, timing_given = false;
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
            timing_given = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            motion_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--lag"))) {
            if (!am_cli_long("exam", "--lag", v, &l)) return 2;
            o.lag = (int)l;
            lag_given = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("exam", "--fps", v, &o.fps)) return 2;
            if (!am_fps_valid(o.fps))
                return am_cli_usage("exam", "--fps must lie in [%g, %g]", AM_FPS_MIN, AM_FPS_MAX);
            timing_given = true;
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
    if (!ami_exam_cameras_check(&cams, lag_given)) return 2;
    if (motion_path && cams.spec) return am_cli_usage("exam", "--motion is read in the two views only, not with --cameras");
    if (motion_path && timing_given) return am_cli_usage("exam", "--motion gives the frames and fps: not with --frames or --fps");
    if (!am_cli_out_dir("exam", dir, "det.npz, calibration.toml, truth.npz")) return 2;
    am_outset *set = NULL;
    int rc = am_cli_outputs("exam", dir, ami_exam_outputs, AMI_EXAM_OUTPUT_COUNT, &set);
    if (rc) return rc;
    o.ctx = am_cli_context();
    if (cams.spec) return ami_exam_cameras_run(&cams, rig_path, cr_path, dir, &o, set);
    /* calibration.toml belongs to the N-camera set: a two-view run into that folder removes it */
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_exam *ex = NULL;
    am_motion *given = NULL;
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && motion_path) s = am_motion_load(motion_path, rig, &given, &err);
    o.motion = given;
    if (s == AM_OK && (s = am_exam_generate(rig, cr, &o, &ex, &err)) != AM_OK)
        am_error_set_file(&err, given ? motion_path : cr ? cr_path : rig_path);
    if (s == AM_OK) am_cli_print_warnings("exam", &ex->warnings);
    if (s != AM_OK ||
        am_det_write(am_outset_path(set, "det.npz"), ex->det, &err) != AM_OK ||
        am_exam_write_truth(ex, am_outset_path(set, "truth.npz"), &err) != AM_OK) {
        rc = am_cli_fail_out("exam", set, &err);
    } else if ((rc = am_cli_commit("exam", set)) == 0) {
        am_cli_log("exam: %zu frames, %zu joints, body size %.3f m, lag %d -> %s/{det,truth}.npz", ex->det->frame_count,
                   ex->det->joint_count, ex->body_size, ex->lag, dir);
    }
    am_exam_free(ex);
    am_motion_free(given);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
