/* `anymove convert`: glTF / BVH -> rig.json + motion.json (or straight to .glb / .bvh), and
 * motion.json + rig -> BVH / glTF. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "anymove/bvh.h"
#include "cli.h"
#include "core/internal.h"

static void ami_convert_help(FILE *out)
{
    fprintf(out,
            "usage: anymove convert MODEL.glb|MODEL.gltf [--clip NAME|INDEX] [--fps F] [--scale S] -o OUT\n"
            "       anymove convert MODEL.glb --list-clips\n"
            "       anymove convert CLIP.bvh [--up y|z] [--scale S] -o OUT\n"
            "       anymove convert motion.json --rig rig.json [--scale S] -o OUT.bvh|OUT.glb\n\n"
            "glTF: the rig of the first skin (helper bones that carry no skin weight are listed\n"
            "under \"helpers\" in rig.json) and one clip sampled at --fps (default 30).\n"
            "BVH: one bone per joint (docs/bvh.md); read Y up, --up z for a Z-up file; written\n"
            "Y up; exact frame times.\n"
            "OUT is a folder (DIR/rig.json and DIR/motion.json: quat, euler and joints), or a\n"
            "file whose extension picks the format: .glb (animated skeleton) or .bvh. From a\n"
            "glTF, rig.json records the model (\"model\"), so `export` of this rig's motions\n"
            "drives that character, mesh and materials kept.\n\n"
            "options:\n"
            "  --clip NAME|INDEX  the clip: its name, the name without the armature prefix\n"
            "                     ('Rat_Run' for 'RatArmature|Rat_Run'), an index, or the end of\n"
            "                     one name ('Run'); default the first. --list-clips lists them\n"
            "  --scale S          metres per file unit (0.01 for a file in centimetres); the\n"
            "                     body size is printed and an implausible one is warned about\n"
            "  --quiet, -q        no progress on stderr\n\n"
            "examples:\n"
            "  anymove convert ../shared/data/gltf/khronos_fox/Fox.glb --list-clips\n"
            "  anymove convert ../shared/data/gltf/khronos_fox/Fox.glb --clip Walk --scale 0.01 -o out/fox\n"
            "  anymove convert out/fox/motion.json --rig out/fox/rig.json -o out/fox_walk.bvh\n"
            "  anymove convert out/fox_walk.bvh -o out/fox_walk.glb\n"
            "  anymove convert ../shared/data/bvh/animated_drawings/dab.bvh --up z --scale 0.01 -o out/dab\n");
}

static const char *const ami_convert_names[] = {"rig.json", "motion.json"};

/* A model without a skin has no skeleton to convert; its motion (morph targets, moving nodes)
 * is still usable as points. */
static void ami_explain_no_skin(const char *in, am_error *err)
{
    if (err->code != AM_E_EMPTY) return;
    snprintf(err->file, sizeof err->file, "%s", in);
    snprintf(err->info, sizeof err->info,
             "no skin, so no skeleton to convert; for its animation as points and a rig made from "
             "them: anymove bake %s -o DIR && anymove rig DIR/tracks.npz -o DIR/rig",
             in);
}

static am_status ami_read_gltf(const char *in, const char *clip, double fps, am_rig **rig, am_motion **mo,
                               am_error *err)
{
    am_gltf *doc = NULL;
    int anim = -1;
    am_gltf_opts go = {.ctx = am_cli_context()};
    am_status s = am_gltf_load(in, &go, &doc, err);
    if (s == AM_OK) {
        am_cli_print_warnings("convert", &doc->warnings);
        s = am_rig_from_gltf(doc, -1, rig, err);
        if (s != AM_OK) ami_explain_no_skin(in, err);
    }
    if (s == AM_OK) s = am_cli_pick_clip(doc, in, clip, &anim, err);
    if (s == AM_OK) s = am_motion_from_gltf(doc, -1, *rig, anim, fps, mo, err);
    am_error_set_file(err, in);
    am_gltf_free(doc);
    return s;
}

static am_status ami_read_bvh(const char *in, const am_bvh_opts *bo, am_rig **rig, am_motion **mo, am_error *err)
{
    am_bvh *bvh = NULL;
    am_status s = am_bvh_load(in, bo, &bvh, err);
    if (s == AM_OK) am_cli_print_warnings("convert", &bvh->warnings);
    if (s == AM_OK) s = am_rig_from_bvh(bvh, bo, rig, err);
    if (s == AM_OK) s = am_motion_from_bvh(bvh, *rig, bo, mo, err);
    am_error_set_file(err, in);
    am_bvh_free(bvh);
    return s;
}

static am_status ami_write_dir(const am_outset *set, const am_rig *rig, am_motion *mo, am_error *err)
{
    AMI_TRY(am_rig_write(rig, am_outset_path(set, "rig.json"), err));
    if (!mo->joints) AMI_TRY(am_motion_compute_joints(mo, rig, err));
    return am_motion_write(mo, am_outset_path(set, "motion.json"), err);
}

int am_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *rig_path = NULL, *clip = NULL, *v;
    double fps = 30, scale = 1;
    bool list = false;
    am_bvh_axes axes = AM_BVH_AXES_Y_UP;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_convert_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            clip = v;
        } else if (am_cli_flag(argv[i], "--list-clips")) {
            list = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("convert", "--fps", v, &fps)) return 2;
            if (!(fps >= 1e-3 && fps <= 1e4)) return am_cli_usage("convert", "--fps must be in [0.001, 10000]");
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("convert", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcmp(v, "y") == 0 || strcmp(v, "Y") == 0) axes = AM_BVH_AXES_Y_UP;
            else if (strcmp(v, "z") == 0 || strcmp(v, "Z") == 0) axes = AM_BVH_AXES_Z_UP;
            else return am_cli_usage("convert", "--up is y or z, got '%s'", v);
        } else if (argv[i][0] == '-') {
            return am_cli_usage("convert", "unknown option or missing value '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("convert", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in) return am_cli_usage("convert", "missing input file");
    struct stat st;
    if (stat(in, &st) == 0 && S_ISDIR(st.st_mode))
        return am_cli_usage("convert",
                            "'%s' is a folder; convert reads one file: MODEL.glb, CLIP.bvh, or a motion.json with "
                            "its rig (anymove convert %s/motion.json --rig %s/rig.json -o OUT.bvh)",
                            in, in, in);
    const char *ext = am_cli_ext(in);
    bool is_gltf = ext && (strcasecmp(ext, ".glb") == 0 || strcasecmp(ext, ".gltf") == 0);
    bool is_bvh = ext && strcasecmp(ext, ".bvh") == 0;
    bool is_motion = ext && strcasecmp(ext, ".json") == 0;
    if (!is_gltf && !is_bvh && !is_motion)
        return am_cli_usage("convert", "%s: convert reads .glb, .gltf, .bvh or a motion.json (with --rig)", in);
    if (list) {
        if (!is_gltf) return am_cli_usage("convert", "--list-clips lists the clips of a .glb or .gltf");
        return am_cli_list_clips("convert", in);
    }
    if (clip && !is_gltf) return am_cli_usage("convert", "--clip picks a clip of a .glb or .gltf; %s has one", in);
    if (is_motion && !rig_path) return am_cli_usage("convert", "a motion needs the rig it animates: --rig rig.json");
    if (!is_motion && rig_path) return am_cli_usage("convert", "--rig goes with a motion.json input");
    if (!out) return am_cli_usage("convert", "missing -o OUT");
    am_cli_format fmt = am_cli_format_of(out);
    if (is_motion || am_cli_ext(out)) {
        fmt = am_cli_out_file("convert", out, AM_CLI_FMT(AM_CLI_FMT_GLB) | AM_CLI_FMT(AM_CLI_FMT_BVH));
        if (fmt == AM_CLI_FMT_NONE) return 2;
    }

    am_outset *set = NULL;
    int rc = fmt == AM_CLI_FMT_NONE ? am_cli_outputs("convert", out, ami_convert_names, 2, &set)
                                    : am_cli_outputs("convert", out, NULL, 0, &set);
    if (rc) return rc;
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_status s;
    if (is_gltf) {
        s = ami_read_gltf(in, clip, fps, &rig, &mo, &err);
        if (s == AM_OK && scale != 1.0) {
            am_rig_scale(rig, scale);
            am_motion_scale(mo, scale);
        }
    } else if (is_bvh) {
        am_bvh_opts bo = {.axes = axes, .scale = scale, .ctx = am_cli_context()};
        s = ami_read_bvh(in, &bo, &rig, &mo, &err);
    } else {
        s = am_rig_load(rig_path, &rig, &err);
        if (s == AM_OK) s = am_motion_load(in, rig, &mo, &err);
        if (s == AM_OK && scale != 1.0) {
            am_rig_scale(rig, scale);
            am_motion_scale(mo, scale);
        }
    }
    if (s == AM_OK && is_gltf && fmt == AM_CLI_FMT_NONE) s = am_cli_record_model(rig, in, &err);
    if (s == AM_OK) am_cli_body_size("convert", is_motion ? rig_path : in, am_cli_rig_size(rig));
    if (s == AM_OK) {
        if (fmt == AM_CLI_FMT_NONE) {
            s = ami_write_dir(set, rig, mo, &err);
        } else {
            const am_motion *clips[1] = {mo};
            s = am_cli_write_animation(fmt, rig, clips, NULL, 1, NULL, am_outset_path(set, NULL), &err);
        }
    }
    if (s != AM_OK) {
        /* a conversion refused for the content names the input; a write names its file */
        am_outset_blame(set, &err);
        am_error_set_file(&err, in);
        rc = am_cli_fail_out("convert", set, &err);
    } else if ((rc = am_cli_commit("convert", set)) == 0) {
        char f[32];
        if (fmt == AM_CLI_FMT_NONE)
            am_cli_log("wrote %s/rig.json (%zu bones) and motion.json (%zu frames at %s fps)", out, rig->bone_count,
                       mo->frame_count, am_cli_fps(mo->fps, f));
        else
            am_cli_log("wrote %s (%zu bones, %zu frames at %s fps)", out, rig->bone_count, mo->frame_count,
                       am_cli_fps(mo->fps, f));
    }
    am_motion_free(mo);
    am_rig_free(rig);
    return rc;
}
