/* `anymove overlay DET.npz -o overlay.mp4`: joints and the fitted rig over the clip. */
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "scene.h"

static void ami_overlay_help(FILE *out)
{
    fprintf(out,
            "usage: anymove overlay DET.npz -o OUT.mp4|OUT.png|DIR [--video CLIP.mp4] [--fit DIR|RIG.json]\n"
            "                       [--motion motion.json] [--creature CREATURE.json]\n"
            "                       [--cameras CALIB.toml] [--quiet]\n\n"
            "Draws the detections (discs coloured by confidence, red 0 -> green 1) and the fitted rig\n"
            "reprojected (white bones) over the clip's frames (decoded with FFmpeg, mapped onto the\n"
            "1280 x 720 layout by det.npz's calib affine; a clip of another shape needs it), else\n"
            "over the studio, with the frame's reprojection error (px) in each view's corner.\n"
            "An N-camera det.npz (SPEC 4.2.1) with --cameras gives a grid of the views.\n"
            "--fit: the rig + motion (a solve/ik folder with --motion, or a rig.json).\n"
            "Exit code 2 for a clip whose size does not fit the layout without a calib.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --seed 2 --frames 20 -o out/ov_exam\n"
            "  anymove overlay out/ov_exam/det.npz -o out/ov_exam/overlay.mp4\n");
}

int am_cmd_overlay(int argc, char **argv)
{
    const char *det_path = NULL, *out = NULL, *video = NULL, *fit = NULL, *cr_path = NULL, *cal_path = NULL, *v;
    am_cli_scene_opts so = {0};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_overlay_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--video"))) {
            video = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--fit"))) {
            fit = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            so.rig = v;
            if (!fit) fit = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            so.motion = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("overlay", "unknown option '%s'", argv[i]);
        } else if (!det_path) {
            det_path = argv[i];
        } else {
            return am_cli_usage("overlay", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!det_path) return am_cli_usage("overlay", "missing DET.npz");
    if (!out) return am_cli_usage("overlay", "missing -o OUT.mp4|OUT.png|DIR");
    so.no_mesh = true;
    am_error err = {0};
    am_cli_scene sc = {0};
    am_det *det = NULL;
    am_mdet *mdet = NULL;
    am_calib *cal = NULL;
    am_creature *cr = NULL;
    am_status s = AM_OK;
    if (cal_path) {
        s = am_mdet_load(det_path, &mdet, &err);
        if (s == AM_OK) s = am_calib_load(cal_path, NULL, &cal, &err);
    } else {
        s = am_det_load(det_path, &det, &err);
    }
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && (fit || so.motion)) s = am_cli_scene_load("overlay", fit ? fit : so.motion, &so, &sc, &err);
    /* the clip's shape is checked before any output is opened */
    if (s == AM_OK && video && det) {
        am_video_reader *vr = NULL;
        am_video_info vi;
        s = am_video_reader_open(video, &vr, &vi, &err);
        am_layout L;
        if (cr) L = cr->layout;
        else am_layout_default(&L);
        double A[6];
        if (s == AM_OK) s = am_clip_affine(&vi, det->has_calib ? det->calib : NULL, (int)(L.w_front + L.w_side), 720, video, A, &err);
        am_video_reader_close(vr);
    }
    int rc = 0;
    if (s != AM_OK) {
        rc = am_cli_fail("overlay", &err);
    } else {
        am_outset *set = NULL;
        char staged[4096];
        rc = am_cli_picture_outputs("overlay", out, det ? det->frame_count : mdet->frame_count, &set, staged, sizeof staged);
        if (!rc) {
            const char *videos[1] = {video};
            am_overlay_job job = {.det = det, .rig = sc.rig, .motion = sc.motion, .layout = cr ? &cr->layout : NULL,
                                  .video = det ? video : NULL, .mdet = mdet, .cameras = cal,
                                  .camera_video = mdet && video && mdet->camera_count == 1 ? videos : NULL,
                                  .path = staged, .ctx = am_cli_context()};
            s = am_overlay_clip(&job, &err);
            if (s != AM_OK) rc = am_cli_fail_out("overlay", set, &err);
            else if ((rc = am_cli_commit("overlay", set)) == 0) am_cli_log("overlay: wrote %s", out);
        }
    }
    am_cli_scene_free(&sc);
    am_creature_free(cr);
    am_calib_free(cal);
    am_mdet_free(mdet);
    am_det_free(det);
    return rc;
}
