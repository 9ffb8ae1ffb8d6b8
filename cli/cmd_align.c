/* `anymove align TRACKS.npz -o ALIGNED.npz`: tracks of any tracker into the world of SPEC 1,
 * and the similarity transform used beside them (ALIGNED.align.json). */
#include <string.h>

#include "anymove/align.h"
#include "cli.h"
#include "core/internal.h"

static void ami_align_help(FILE *out)
{
    fprintf(out,
            "usage: anymove align TRACKS.npz -o ALIGNED.npz [--height M | --length M]\n"
            "                     [--up auto|ground|path|+x|-x|+y|-y|+z|-z] [--forward auto|travel|axis]\n"
            "                     [--seed S] [--quiet]\n\n"
            "Puts 3D point tracks from any tracker (any axes, units and origin) into the world of\n"
            "SPEC 1: metres, Z up, the creature facing -Y, the ground at z = 0 and the origin on the\n"
            "ground under the body at frame 0. Writes ALIGNED.npz (SPEC 4.1) and ALIGNED.align.json\n"
            "beside it: scale, rotation, quaternion and translation with\n"
            "p_world = scale * rotation * p_input + translation, and the cues used (docs/align.md).\n"
            "--up: the input's up axis when you know it (a Y-up tracker: +y), else found from the\n"
            "ground contacts (ground) or the plane of the root's path (path); auto tries ground,\n"
            "then path. The search is a guess: check it, and give the axis when you can.\n"
            "--forward: the direction of travel, else the body's axis in its mirror plane (the\n"
            "sign from the gait, else the higher end is the head; docs/align.md).\n"
            "--height / --length: metres from the ground to the top / along forward (medians over\n"
            "frames); without them the scale stays 1, so a tracker in millimetres stays 1000x\n"
            "(a warning says so when the body is not 5 cm - 20 m across).\n"
            "Exit 2 for a static clip, no ground contact and no usable path, or all points hidden.\n\n"
            "examples:\n"
            "  anymove synth tracks --plan quadruped --motion walk --seed 3 --points 600 --frames 90 -o out/walk\n"
            "  anymove align out/walk/tracks.npz --up +z --height 0.3 -o out/walk_aligned.npz\n");
}

static bool ami_axis(const char *v, double axis[3])
{
    if (strlen(v) != 2 || (v[0] != '+' && v[0] != '-') || v[1] < 'x' || v[1] > 'z') return false;
    axis[0] = axis[1] = axis[2] = 0;
    axis[v[1] - 'x'] = v[0] == '+' ? 1.0 : -1.0;
    return true;
}

int am_cmd_align(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *v;
    am_align_opts o = {0};
    double dv;
    long lv;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_align_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--height"))) {
            if (!am_cli_double("align", "--height", v, &dv)) return 2;
            if (!(dv > 0.0 && dv < 1e6)) return am_cli_usage("align", "--height must be metres > 0");
            o.height = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--length"))) {
            if (!am_cli_double("align", "--length", v, &dv)) return 2;
            if (!(dv > 0.0 && dv < 1e6)) return am_cli_usage("align", "--length must be metres > 0");
            o.length = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (!ami_axis(v, o.up_axis) && !am_align_up_from_name(v, &o.up))
                return am_cli_usage("align", "--up must be auto, ground, path or an axis (+x -x +y -y +z -z), not '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--forward"))) {
            if (!am_align_forward_from_name(v, &o.forward))
                return am_cli_usage("align", "--forward must be auto, travel or axis, not '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("align", "--seed", v, &lv)) return 2;
            if (lv < 0 || lv > 0xFFFFFFFFL) return am_cli_usage("align", "--seed must be 0..4294967295");
            o.seed = (uint32_t)lv;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return am_cli_usage("align", "unknown option or missing value '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("align", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in) return am_cli_usage("align", "missing TRACKS.npz");
    if (!out) return am_cli_usage("align", "missing -o ALIGNED.npz");
    if (o.height > 0 && o.length > 0) return am_cli_usage("align", "give --height or --length, not both");
    if (am_cli_out_file("align", out, AM_CLI_FMT(AM_CLI_FMT_NPZ)) == AM_CLI_FMT_NONE) return 2;
    /* the transform goes beside the tracks: ALIGNED.npz -> ALIGNED.align.json */
    size_t stem = strlen(out) - 4;
    char *json = am_alloc(stem + 12);
    if (!json) return am_cli_usage("align", "out of memory");
    memcpy(json, out, stem);
    memcpy(json + stem, ".align.json", 12);
    am_outset *set = NULL, *jset = NULL;
    int rc = am_cli_outputs("align", out, NULL, 0, &set);
    if (!rc) rc = am_cli_outputs("align", json, NULL, 0, &jset);
    if (rc) {
        am_outset_abort(set);
        am_free(json);
        return rc;
    }
    am_error err = {0};
    am_tracks *tr = NULL;
    am_align_result *r = NULL;
    am_status s = am_tracks_load(in, &tr, &err);
    if (s == AM_OK) {
        o.ctx = am_cli_context();
        s = am_align_run(tr, &o, &r, &err);
        if (s != AM_OK) am_error_set_file(&err, in);
    }
    if (s == AM_OK) {
        am_cli_print_warnings("align", &r->warnings);
        s = am_tracks_write(am_outset_path(set, NULL), r->tracks, &err);
        if (s == AM_OK) s = am_align_write_json(r, in, am_outset_path(jset, NULL), &err);
        am_outset_blame(set, &err);
        am_outset_blame(jset, &err);
    }
    if (s != AM_OK) {
        am_outset_abort(jset);
        rc = am_cli_fail_out("align", set, &err);
    } else if ((rc = am_cli_commit("align", set)) != 0) {
        am_outset_abort(jset); /* commit freed set, not jset */
    } else if ((rc = am_cli_commit("align", jset)) == 0) {
        if (r->up_from != AM_ALIGN_UP_GIVEN)
            am_cli_warn("align", "%s: up was found from the %s (a guess): check %s, or give --up with the tracker's axis",
                        in, am_align_up_name(r->up_from), out);
        am_cli_log("align: %s -> %s (+ %s): scale %.6g, up from %s, forward from %s (sign: %s), height %.3g m, "
                   "length %.3g m",
                   in, out, json, r->scale, am_align_up_name(r->up_from), am_align_forward_name(r->forward_from),
                   am_align_sign_name(r->sign_from), r->height, r->length);
    }
    am_align_result_free(r);
    am_tracks_free(tr);
    am_free(json);
    return rc;
}
