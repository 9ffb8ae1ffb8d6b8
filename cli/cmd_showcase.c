/* `anymove showcase DIR -o showcase.mp4`: input | rig in 3/4 | input vs rig. */
#include <string.h>

#include "core/internal.h"
#include "scene.h"

static void ami_showcase_help(FILE *out)
{
    fprintf(out,
            "usage: anymove showcase DIR [--det det.npz] [--video CLIP.mp4] -o SHOWCASE.mp4\n"
            "                        [--rig RIG.json] [--mesh MODEL.glb] [--creature CREATURE.json]\n"
            "                        [--source SCENE [--source-clip NAME]] [--height PX] [--quiet]\n\n"
            "The seed's side-by-side video, one output frame per clip frame: the input with its\n"
            "detections | the rig in 3/4 | the input with the rig drawn through the same (side)\n"
            "camera. DIR is the output of solve, rig or retarget (rig.json + motion.json, or\n"
            "animation.glb; --rig names the rig of a solve). Without --video the studio stands in\n"
            "for the clip; DIR/det.npz is used when there is no --det. Panels are 16:9, --height\n"
            "px high (360).\n"
            "After a retarget, --source names what was retargeted (a GLB with --source-clip, a\n"
            "folder, or a rig.json with --source-motion): the panels are then the source in 3/4 |\n"
            "the result in 3/4 | the source see-through over the result through the same camera.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --seed 3 --frames 20 -o out/sc_exam\n"
            "  anymove solve out/sc_exam/det.npz --rig examples/creatures/wolf/rig.json -o out/sc_solve\n"
            "  anymove showcase out/sc_solve --rig examples/creatures/wolf/rig.json --det out/sc_exam/det.npz \\\n"
            "                   -o out/sc_solve/showcase.mp4\n"
            "  anymove retarget ../shared/data/gltf/quaternius/Fox.glb --clip Walk --to ../shared/data/gltf/quaternius/Husky.glb \\\n"
            "                   -o out/sc_retarget -q\n"
            "  anymove showcase out/sc_retarget --source ../shared/data/gltf/quaternius/Fox.glb --source-clip Walk \\\n"
            "                   -o out/sc_retarget/showcase.mp4\n");
}

int am_cmd_showcase(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *det_path = NULL, *video = NULL, *cr_path = NULL, *v;
    am_cli_scene_opts so = {0}, src_opts = {0};
    const char *source = NULL;
    long height = 0;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_showcase_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--det"))) {
            det_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--video"))) {
            video = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            so.rig = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--mesh"))) {
            so.mesh = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            so.motion = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--source"))) {
            source = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--source-clip"))) {
            src_opts.clip = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--source-motion"))) {
            src_opts.motion = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--height"))) {
            if (!am_cli_long("showcase", "--height", v, &height)) return 2;
            if (height < 90 || height > 2160) return am_cli_usage("showcase", "--height must be in 90..2160");
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("showcase", "unknown option '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
        } else {
            return am_cli_usage("showcase", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!dir) return am_cli_usage("showcase", "missing DIR (the output of solve, rig or retarget)");
    if (!source && (src_opts.clip || src_opts.motion))
        return am_cli_usage("showcase", "--source-clip and --source-motion need --source");
    if (source && (det_path || video))
        return am_cli_usage("showcase", "--source (a retarget's showcase) takes no --det or --video");
    if (!out) return am_cli_usage("showcase", "missing -o SHOWCASE.mp4");
    if (!am_cli_ext(out) || strcmp(am_cli_ext(out), ".png") == 0)
        return am_cli_usage("showcase", "-o %s: the showcase is a video (.mp4, .mkv, .avi, .webm)", out);
    am_error err = {0};
    am_cli_scene sc, src = {0};
    am_det *det = NULL;
    am_creature *cr = NULL;
    am_orbit orbit = {0};
    am_paint paint = {0};
    char buf[4096];
    am_status s = am_cli_scene_load("showcase", dir, &so, &sc, &err);
    if (s == AM_OK && source) s = am_cli_scene_load("showcase", source, &src_opts, &src, &err);
    if (s == AM_OK && source && !src.motion)
        s = AM_FAIL_AT(&err, AM_E_VALUE, source, 0, 0, "the source has no motion to show (--source-clip, --source-motion)");
    if (s == AM_OK && !det_path && !source) det_path = am_cli_find_file(dir, "det.npz", buf, sizeof buf);
    if (s == AM_OK && det_path) s = am_det_load(det_path, &det, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && cr_path) s = am_orbit_load(cr_path, &orbit, &err);
    if (s == AM_OK && cr_path) s = am_paint_load(cr_path, sc.rig, &paint, &err);
    if (s == AM_OK && video) {
        am_video_reader *vr = NULL;
        am_video_info vi;
        am_layout L;
        if (cr) L = cr->layout;
        else am_layout_default(&L);
        double A[6];
        s = am_video_reader_open(video, &vr, &vi, &err);
        if (s == AM_OK) s = am_clip_affine(&vi, det && det->has_calib ? det->calib : NULL, (int)(L.w_front + L.w_side), 720, video, A, &err);
        am_video_reader_close(vr);
    }
    int rc = 0;
    am_outset *set = NULL;
    if (s != AM_OK) {
        rc = am_cli_fail("showcase", &err);
    } else if ((rc = am_cli_outputs("showcase", out, NULL, 0, &set)) == 0) {
        if (paint.painted_count) am_render_model_paint(sc.model, paint.colour, paint.painted);
        am_showcase_job job = {.model = sc.model, .motion = sc.motion, .det = det, .video = video,
                               .layout = cr ? &cr->layout : NULL, .orbit = &orbit, .panel_height = (int)height,
                               .source_model = source ? src.model : NULL, .source_motion = src.motion,
                               .path = am_outset_path(set, NULL), .ctx = am_cli_context()};
        s = am_showcase_clip(&job, &err);
        if (s != AM_OK) rc = am_cli_fail_out("showcase", set, &err);
        else if ((rc = am_cli_commit("showcase", set)) == 0) am_cli_log("showcase: wrote %s", out);
    }
    am_paint_free(&paint);
    am_creature_free(cr);
    am_det_free(det);
    am_cli_scene_free(&sc);
    if (source) am_cli_scene_free(&src);
    return rc;
}
