/* `anymove bake MODEL.glb -o OUT`: an animated glTF as point tracks + truth. */
#include <string.h>

#include "anymove/synth.h"
#include "cli.h"
#include "core/internal.h"

static void ami_bake_help(FILE *out)
{
    fprintf(out,
            "usage: anymove bake MODEL.glb|.gltf -o OUT [--clip NAME] [--fps F]\n"
            "                    [--noise X] [--hidden H] [--seed S] [--quiet]\n\n"
            "Evaluates a skinned and/or morph-target animation at F frames per second (default\n"
            "30) and writes OUT.tracks.npz (every vertex, SPEC 4.1, with faces; all visible unless\n"
            "--noise/--hidden degrade it as `synth` does) and OUT.truth.npz (points: clean,\n"
            "joints [T,J,3] of the deforming joints only, parents [J], bones = J, visible).\n");
}

int am_cmd_bake(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *v;
    am_bake_opts o = {0};
    double dv;
    long lv;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_bake_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            o.clip = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("bake", "--fps", v, &dv)) return 2;
            if (!(dv > 0.0 && dv <= 1000.0)) return am_cli_usage("bake", "--fps must be in (0, 1000]");
            o.fps = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--noise"))) {
            if (!am_cli_double("bake", "--noise", v, &dv)) return 2;
            if (!(dv >= 0.0 && dv <= 1.0)) return am_cli_usage("bake", "--noise must be in [0, 1]");
            o.noise = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--hidden"))) {
            if (!am_cli_double("bake", "--hidden", v, &dv)) return 2;
            if (!(dv >= 0.0 && dv <= 0.9)) return am_cli_usage("bake", "--hidden must be in [0, 0.9]");
            o.hidden = dv;
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("bake", "--seed", v, &lv)) return 2;
            if (lv < 0 || lv > 0xFFFFFFFFL) return am_cli_usage("bake", "--seed must be 0..4294967295");
            o.seed = (uint32_t)lv;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("bake", "unknown option or missing value '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("bake", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in) return am_cli_usage("bake", "missing MODEL.glb");
    if (!out) return am_cli_usage("bake", "missing -o OUT");
    char tp[4096], gp[4096];
    snprintf(tp, sizeof tp, "%s.tracks.npz", out);
    snprintf(gp, sizeof gp, "%s.truth.npz", out);
    am_error err = {0};
    am_gltf *doc = NULL;
    am_synth_clip *c = NULL;
    int rc = 0;
    am_gltf_opts go = {.ctx = am_cli_context()};
    if (am_gltf_load(in, &go, &doc, &err) != AM_OK) {
        rc = am_cli_fail("bake", &err);
        goto done;
    }
    am_cli_print_warnings("bake", &doc->warnings);
    o.ctx = am_cli_context();
    if (am_bake_gltf(doc, &o, &c, &err) != AM_OK) {
        am_error_set_file(&err, in);
        rc = am_cli_fail("bake", &err);
        goto done;
    }
    am_cli_print_warnings("bake", &c->warnings);
    if (am_synth_write(c, tp, gp, &err) != AM_OK) {
        rc = am_cli_fail("bake", &err);
        goto done;
    }
    am_cli_log("bake: %zu vertices x %zu frames, %zu faces, %zu deforming joints -> %s, %s", c->tracks->point_count,
           c->tracks->frame_count, c->tracks->face_count, c->joint_count, tp, gp);
done:
    am_synth_clip_free(c);
    am_gltf_free(doc);
    return rc;
}
