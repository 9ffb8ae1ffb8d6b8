/* `anymove synth tracks ...`: procedural creatures as degraded 3D point tracks + truth. */
#include <stdio.h>
#include <string.h>

#include "anymove/synth.h"
#include "cli.h"
#include "core/internal.h"

static void ami_synth_help(FILE *out)
{
    fprintf(out,
            "usage: anymove synth gait --rig RIG.json --gait walk|trot|pace|canter|gallop|hop\n"
            "                          [--offsets LF,RF,LH,RH] [--period S] [--frames T] -o MOTION.json\n"
            "       anymove synth tracks --plan quadruped|snake|arthropod|bird|biped|chimera\n"
            "                            --motion idle|walk --seed S -o DIR\n"
            "                            [--frames T] [--points N] [--fps F] [--noise X] [--hidden H]\n\n"
            "gait: a motion of RIG (four feet: its lowest leaf bones) walking forward with the feet's\n"
            "touchdowns at the named gait's phase offsets (or --offsets, in cycles): the truth the\n"
            "locomotion summary of `anymove pack` is checked against. Default 61 frames at 30 fps,\n"
            "a 1 s cycle.\n"
            "tracks: writes DIR/tracks.npz (SPEC 4.1: points with hidden entries NaN, visible, fps) and\n"
            "DIR/truth.npz (points: the clean tracks, joints [T,J,3], parents [J], bones, fps,\n"
            "body_size). Degradations: Gaussian noise of X body sizes per axis (default 0.003),\n"
            "and a hidden share H (default 0.15) split between two occluders sweeping across the\n"
            "body, dropout bursts of 1-5 frames and tracks lost for the rest of the clip.\n"
            "Defaults: 120 frames, 2000 points, 30 fps. Deterministic for a given seed.\n\n"
            "examples:\n"
            "  anymove synth tracks --plan quadruped --motion walk --seed 14 --points 800 --frames 90 -o out/grison\n"
            "  anymove rig out/grison/tracks.npz -o out/grison/rig\n"
            "  anymove synth gait --rig examples/creatures/capsule_wolf/rig.json --gait trot -o out/trot.json\n");
}

/* `anymove synth gait --rig R --gait NAME|--offsets LF,RF,LH,RH -o MOTION.json`. */
static int ami_synth_gait(int argc, char **argv)
{
    const char *rig_path = NULL, *out = NULL, *gait = NULL, *v;
    am_synth_gait_opts o = {0};
    bool have = false;
    long lv;
    for (int i = 2; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_synth_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--gait"))) {
            if (!am_synth_gait_offsets(v, o.offsets))
                return am_cli_usage("synth", "unknown gait '%s' (walk, trot, pace, canter, gallop, hop)", v);
            gait = v, have = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--offsets"))) {
            if (sscanf(v, "%lf,%lf,%lf,%lf", &o.offsets[0], &o.offsets[1], &o.offsets[2], &o.offsets[3]) != 4)
                return am_cli_usage("synth", "--offsets wants LF,RF,LH,RH in cycles, got '%s'", v);
            have = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--period"))) {
            if (!am_cli_double("synth", "--period", v, &o.period_s)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--frames"))) {
            if (!am_cli_long("synth", "--frames", v, &lv)) return 2;
            if (lv < 4 || lv > 100000) return am_cli_usage("synth", "--frames must be in [4, 100000]");
            o.frames = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else {
            return am_cli_usage("synth", "unknown option or missing value '%s'", argv[i]);
        }
    }
    if (!rig_path || !out || !have) return am_cli_usage("synth", "synth gait needs --rig, --gait (or --offsets) and -o");
    if (am_cli_out_file("synth", out, AM_CLI_FMT(AM_CLI_FMT_JSON)) == AM_CLI_FMT_NONE) return 2;
    am_outset *set = NULL;
    int rc = am_cli_outputs("synth", out, NULL, 0, &set);
    if (rc) return rc;
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK && (s = am_synth_gait(rig, &o, &mo, &err)) != AM_OK) am_error_set_file(&err, rig_path);
    if (s == AM_OK) s = am_motion_write(mo, am_outset_path(set, NULL), &err);
    if (s != AM_OK) rc = am_cli_fail_out("synth", set, &err);
    else if ((rc = am_cli_commit("synth", set)) == 0)
        am_cli_log("synth: %s gait (LF %.3g, RF %.3g, LH %.3g, RH %.3g) -> %s", gait ? gait : "custom", o.offsets[0],
                   o.offsets[1], o.offsets[2], o.offsets[3], out);
    am_motion_free(mo);
    am_rig_free(rig);
    return rc;
}

int am_cmd_synth(int argc, char **argv)
{
    if (argc < 2 || am_cli_is_help(argv[1])) {
        ami_synth_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "gait") == 0) return ami_synth_gait(argc, argv);
    if (strcmp(argv[1], "tracks") != 0) return am_cli_usage("synth", "unknown kind '%s' (want: tracks, gait)", argv[1]);
    am_synth_opts o = {0};
    const char *out = NULL, *v;
    long lv;
    double dv;
    bool have_plan = false;
    for (int i = 2; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_synth_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--plan"))) {
            if (!am_synth_plan_from_name(v, &o.plan)) return am_cli_usage("synth", "unknown plan '%s'", v);
            have_plan = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            if (!am_synth_motion_from_name(v, &o.motion)) return am_cli_usage("synth", "unknown motion '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("synth", "--seed", v, &lv)) return 2;
            if (lv < 0 || lv > 0xFFFFFFFFL) return am_cli_usage("synth", "--seed must be 0..4294967295");
            o.seed = (uint32_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--frames"))) {
            if (!am_cli_long("synth", "--frames", v, &lv)) return 2;
            if (lv < 1 || lv > 100000) return am_cli_usage("synth", "--frames must be 1..100000");
            o.frames = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--points"))) {
            if (!am_cli_long("synth", "--points", v, &lv)) return 2;
            if (lv < 1 || lv > 10000000) return am_cli_usage("synth", "--points must be 1..10000000");
            o.points = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("synth", "--fps", v, &dv)) return 2;
            if (!(dv > 0.0 && dv <= 1000.0)) return am_cli_usage("synth", "--fps must be in (0, 1000]");
            o.fps = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--noise"))) {
            if (!am_cli_double("synth", "--noise", v, &dv)) return 2;
            if (!(dv >= 0.0 && dv <= 1.0)) return am_cli_usage("synth", "--noise must be in [0, 1]");
            o.noise = dv > 0.0 ? dv : -1.0;
        } else if ((v = am_cli_value(argc, argv, &i, "--hidden"))) {
            if (!am_cli_double("synth", "--hidden", v, &dv)) return 2;
            if (!(dv >= 0.0 && dv <= 0.9)) return am_cli_usage("synth", "--hidden must be in [0, 0.9]");
            o.hidden = dv > 0.0 ? dv : -1.0;
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else {
            return am_cli_usage("synth", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!have_plan) return am_cli_usage("synth", "missing --plan");
    if (!out) return am_cli_usage("synth", "missing -o DIR");
    if (!am_cli_out_dir("synth", out, "tracks.npz, truth.npz")) return 2;
    static const char *const names[] = {"tracks.npz", "truth.npz"};
    am_outset *set = NULL;
    int rc = am_cli_outputs("synth", out, names, 2, &set);
    if (rc) return rc;
    am_error err = {0};
    am_synth_clip *c = NULL;
    o.ctx = am_cli_context();
    am_status s = am_synth_tracks(&o, &c, &err);
    if (s == AM_OK) {
        am_cli_print_warnings("synth", &c->warnings);
        s = am_synth_write(c, am_outset_path(set, "tracks.npz"), am_outset_path(set, "truth.npz"), &err);
    }
    if (s != AM_OK) {
        rc = am_cli_fail_out("synth", set, &err);
    } else if ((rc = am_cli_commit("synth", set)) == 0) {
        am_cli_log("synth: %s %s seed %u: %zu points x %zu frames, %zu bones, %zu joints, %.1f%% hidden -> %s/{tracks,truth}.npz",
                   am_synth_plan_name(o.plan), am_synth_motion_name(o.motion), o.seed, c->tracks->point_count,
                   c->tracks->frame_count, c->bone_count, c->joint_count, 100.0 * c->hidden_share, out);
    }
    am_synth_clip_free(c);
    return rc;
}
