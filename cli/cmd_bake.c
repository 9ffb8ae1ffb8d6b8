/* `anymove bake MODEL.glb -o DIR`: an animated glTF as point tracks + truth. */
#include <string.h>

#include "anymove/synth.h"
#include "cli.h"
#include "core/internal.h"

static void ami_bake_help(FILE *out)
{
    fprintf(out,
            "usage: anymove bake MODEL.glb|.gltf -o DIR [--clip NAME|INDEX] [--fps F] [--scale S]\n"
            "                    [--noise X] [--hidden H] [--seed S] [--quiet]\n"
            "       anymove bake MODEL.glb --list-clips\n\n"
            "Evaluates a skinned and/or morph-target animation at F frames per second (default\n"
            "30) and writes DIR/tracks.npz (every vertex, SPEC 4.1, with faces; all visible unless\n"
            "--noise/--hidden degrade it as `synth` does) and DIR/truth.npz (points: clean,\n"
            "joints [T,J,3] of the deforming joints only, parents [J], bones = J, visible).\n"
            "--clip: a name, the name without the armature prefix, an index or the end of one\n"
            "name (as for convert); default the first. --scale: metres per file unit.\n\n"
            "examples:\n"
            "  anymove bake ../shared/data/gltf/Flamingo.glb --fps 10 -o out/flamingo\n"
            "  anymove bake ../shared/data/gltf/khronos_fox/Fox.glb --clip Walk --scale 0.01 -o out/fox_points\n");
}

int am_cmd_bake(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *v;
    am_bake_opts o = {0};
    double dv, scale = 1;
    long lv;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_bake_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            o.clip = v;
        } else if (am_cli_flag(argv[i], "--list-clips")) {
            list = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("bake", v, &scale)) return 2;
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
    if (list) return am_cli_list_clips("bake", in);
    if (!out) return am_cli_usage("bake", "missing -o DIR");
    if (!am_cli_out_dir("bake", out, "tracks.npz, truth.npz")) return 2;
    static const char *const names[] = {"tracks.npz", "truth.npz"};
    am_outset *set = NULL;
    int rc = am_cli_outputs("bake", out, names, 2, &set);
    if (rc) return rc;
    am_error err = {0};
    am_gltf *doc = NULL;
    am_synth_clip *c = NULL;
    int anim = -1;
    char index[24];
    am_gltf_opts go = {.ctx = am_cli_context()};
    am_status s = am_gltf_load(in, &go, &doc, &err);
    if (s == AM_OK) am_cli_print_warnings("bake", &doc->warnings);
    if (s == AM_OK && doc->animation_count == 0)
        s = AM_FAIL_AT(&err, AM_E_VALUE, in, 0, 0, "the model has no animation to bake");
    if (s == AM_OK) s = am_cli_pick_clip(doc, in, o.clip, &anim, &err);
    if (s == AM_OK) {
        /* the library resolves the clip by the same rule: hand it what names the one chosen */
        const char *nm = doc->animations[anim].name;
        int back = -1;
        snprintf(index, sizeof index, "%d", anim);
        o.clip = nm && am_gltf_find_clip(doc, nm, &back, NULL) == AM_OK && back == anim ? nm : index;
        o.ctx = am_cli_context();
        s = am_bake_gltf(doc, &o, &c, &err);
        am_error_set_file(&err, in);
    }
    if (s == AM_OK) am_cli_print_warnings("bake", &c->warnings);
    if (s == AM_OK && scale != 1.0) am_synth_clip_scale(c, scale);
    if (s == AM_OK) {
        am_cli_body_size("bake", in, c->body_size);
        s = am_synth_write(c, am_outset_path(set, "tracks.npz"), am_outset_path(set, "truth.npz"), &err);
    }
    if (s != AM_OK) {
        rc = am_cli_fail_out("bake", set, &err);
    } else if ((rc = am_cli_commit("bake", set)) == 0) {
        am_cli_log("bake: %zu vertices x %zu frames, %zu faces, %zu deforming joints -> %s/{tracks,truth}.npz",
                   c->tracks->point_count, c->tracks->frame_count, c->tracks->face_count, c->joint_count, out);
    }
    am_synth_clip_free(c);
    am_gltf_free(doc);
    return rc;
}
