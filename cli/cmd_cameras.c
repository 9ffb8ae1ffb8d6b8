/* `anymove cameras info|convert|layout`: what a calibration holds, and calibrations written. */
#include <math.h>
#include <string.h>

#include "anymove/camera.h"
#include "anymove/math.h"
#include "anymove/multiview.h"
#include "cli.h"

static void ami_cameras_help(FILE *out)
{
    fprintf(out,
            "usage: anymove cameras info CALIB.toml [--scale S] [--quiet]\n"
            "       anymove cameras convert CALIB.toml [--scale S] -o OUT.toml [--quiet]\n"
            "       anymove cameras layout [--creature C.json] -o OUT.toml [--quiet]\n"
            "       anymove cameras adjust DET.npz --cameras CALIB.toml [--scale S] -o OUT.toml\n"
            "                      [--focal] [--distortion] [--rounds N] [--min-conf C] [--seed N] [--quiet]\n\n"
            "info prints each camera's model, image size, centre (m), look direction, field of view and\n"
            "focal length, then warns about degenerate calibrations: two cameras with identical\n"
            "parameters, cameras at one point, a principal point off the image, and a scale that makes\n"
            "the scene absurd for metres (\"is this in millimetres? --scale 0.001\").\n"
            "convert reads an anipose calibration.toml or a Pose2Sim Calib*.toml and writes anipose's\n"
            "layout in metres (--scale S: the input's units in metres). layout writes the two\n"
            "orthographic cameras of SPEC 3 (front, side) for a creature's layout.\n"
            "adjust re-fits the cameras to the 2D points of a det.npz (bundle adjustment as aniposelib's\n"
            "bundle_adjust_iter: rounds of a shrinking outlier threshold, 15 -> 1 px, on points sampled per\n"
            "camera pair, then one final fit); the det's first camera is held, and the scale by the mean\n"
            "distance of the other centres from it. Extrinsics only unless --focal (one focal scale per\n"
            "camera) or --distortion (k1, k2). Prints the median per-point reprojection error before and\n"
            "after (aniposelib's statistic) and how far each camera moved; writes OUT.toml in metres.\n\n"
            "examples:\n"
            "  anymove cameras info ../shared/data/formats/anipose/calibration_7cam-allen-mouse.toml --scale 0.001\n"
            "  anymove cameras convert ../shared/data/formats/pose2sim_calib/Sports2D_Calib_demo.toml -o out/demo.toml\n"
            "  anymove cameras layout --creature examples/creatures/wolf/creature.json -o out/wolf_views.toml\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o out/wolf_exam4\n"
            "  anymove cameras adjust out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml \\\n"
            "      -o out/wolf_exam4_adjusted.toml\n");
}

static const char *ami_model_name(am_camera_model m)
{
    return m == AM_CAMERA_FISHEYE ? "fisheye" : m == AM_CAMERA_ORTHOGRAPHIC ? "orthographic" : "pinhole";
}

int am_cmd_cameras(int argc, char **argv)
{
    const char *verb = NULL, *in = NULL, *outp = NULL, *cr_path = NULL, *cal_path = NULL, *v;
    am_calib_read_opts ro = {0};
    am_adjust_opts ao = {0};
    bool adjust_opt = false;
    long lv;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_cameras_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            outp = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("cameras", v, &ro.scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if (am_cli_flag(argv[i], "--focal")) {
            ao.flags |= AM_ADJUST_FOCAL, adjust_opt = true;
        } else if (am_cli_flag(argv[i], "--distortion")) {
            ao.flags |= AM_ADJUST_DISTORTION, adjust_opt = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--rounds"))) {
            if (!am_cli_long("cameras", "--rounds", v, &lv)) return 2;
            if (lv < 1 || lv > 1000) return am_cli_usage("cameras", "--rounds wants 1 to 1000, got %ld", lv);
            ao.rounds = (uint32_t)lv, adjust_opt = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("cameras", "--seed", v, &lv)) return 2;
            if (lv < 0) return am_cli_usage("cameras", "--seed wants a number >= 0, got %ld", lv);
            ao.seed = (uint64_t)lv, adjust_opt = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--min-conf"))) {
            if (!am_cli_double("cameras", "--min-conf", v, &ao.min_conf)) return 2;
            if (ao.min_conf == 0) ao.min_conf = -1; /* 0 asks for "every detection" */
            adjust_opt = true;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("cameras", "unknown option '%s'", argv[i]);
        } else if (!verb) {
            verb = argv[i];
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("cameras", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!verb) return am_cli_usage("cameras", "missing info, convert, layout or adjust");
    bool info = strcmp(verb, "info") == 0, conv = strcmp(verb, "convert") == 0, lay = strcmp(verb, "layout") == 0;
    bool adj = strcmp(verb, "adjust") == 0;
    if (!info && !conv && !lay && !adj)
        return am_cli_usage("cameras", "unknown sub-command '%s' (info, convert, layout, adjust)", verb);
    if (adj && !in) return am_cli_usage("cameras", "missing DET.npz");
    if (adj && !cal_path) return am_cli_usage("cameras", "adjust needs --cameras CALIB.toml");
    if (!adj && (cal_path || adjust_opt))
        return am_cli_usage("cameras", "--cameras, --focal, --distortion, --rounds, --seed and --min-conf are for adjust");
    if (!lay && !in) return am_cli_usage("cameras", "missing CALIB.toml");
    if ((conv || lay || adj) && !outp) return am_cli_usage("cameras", "missing -o OUT.toml");
    if (info && outp) return am_cli_usage("cameras", "info prints on stdout: it takes no -o");
    if (lay && (in || ro.scale)) return am_cli_usage("cameras", "layout reads no calibration (only --creature)");
    if (!lay && cr_path) return am_cli_usage("cameras", "--creature is for layout");
    am_outset *set = NULL;
    if (outp) {
        if (am_cli_out_file("cameras", outp, AM_CLI_FMT(AM_CLI_FMT_TOML)) == AM_CLI_FMT_NONE) return 2;
        int orc = am_cli_outputs("cameras", outp, NULL, 0, &set);
        if (orc) return orc;
    }
    am_error err = {0};
    am_calib *cal = NULL;
    am_creature *cr = NULL;
    am_mdet *det = NULL;
    am_adjustment *adjusted = NULL;
    int rc = 0;
    if (adj) {
        if (am_mdet_load(in, &det, &err) != AM_OK || am_calib_load(cal_path, &ro, &cal, &err) != AM_OK) goto fail;
        ao.ctx = am_cli_context();
        if (am_cameras_adjust(det, cal, &ao, &adjusted, &err) != AM_OK) {
            if (err.code == AM_E_NAME || err.code == AM_E_DUPLICATE) am_error_set_file(&err, cal_path);
            else am_error_set_file(&err, in);
            goto fail;
        }
        am_cli_print_warnings("cameras", &adjusted->warnings);
        if (am_calib_write(adjusted->cameras, am_outset_path(set, NULL), &err) != AM_OK) goto fail;
        rc = am_cli_commit("cameras", set);
        set = NULL;
        if (rc == 0) {
            am_cli_log("cameras: adjusted %zu cameras to %zu points of %s in %u rounds (final threshold %.2f px), "
                       "%.2f s -> %s",
                       adjusted->camera_count, adjusted->points, in, adjusted->rounds, adjusted->final_mu_px,
                       adjusted->seconds, outp);
            am_cli_log("cameras: median per-point reprojection error %.2f px -> %.2f px (%zu -> %zu points triangulated)",
                       adjusted->before_px, adjusted->after_px, adjusted->scored_before, adjusted->scored_after);
            for (size_t c = 0; c < adjusted->camera_count; c++)
                am_cli_log("  %-12s mean %8.2f px -> %8.2f px, centre moved %.4f m, turned %.3f deg%s", det->cameras[c],
                           adjusted->cam_before_px[c], adjusted->cam_after_px[c], adjusted->moved_m[c],
                           adjusted->turned_deg[c], c == 0 ? " (held)" : "");
        }
        goto done;
    }
    if (lay) {
        if ((cr_path && am_creature_load(cr_path, &cr, &err) != AM_OK) ||
            am_cameras_from_layout(cr ? &cr->layout : NULL, &cal, &err) != AM_OK)
            goto fail;
    } else if (am_calib_load(in, &ro, &cal, &err) != AM_OK) {
        goto fail;
    }
    am_calib_check(cal); /* its warnings join the command's, printed at the end */
    if (info) {
        printf("%zu camera%s in %s%s\n", cal->camera_count, cal->camera_count == 1 ? "" : "s", in,
               ro.scale ? " (scaled)" : "");
        printf("%-12s %-12s %-11s %-29s %-25s %-15s %s\n", "name", "model", "size", "centre (m)", "looks along",
               "fov x/y (deg)", "focal (px)");
        for (size_t c = 0; c < cal->camera_count; c++) {
            const am_camera *cam = &cal->cameras[c];
            am_camera_info ci;
            am_camera_get_info(cam, &ci);
            char size[32], ctr[64], ax[64], fov[32];
            snprintf(size, sizeof size, "%gx%g", cam->width, cam->height);
            snprintf(ctr, sizeof ctr, "(%.3f, %.3f, %.3f)", ci.centre[0], ci.centre[1], ci.centre[2]);
            snprintf(ax, sizeof ax, "(%.3f, %.3f, %.3f)", ci.axis[0], ci.axis[1], ci.axis[2]);
            if (isnan(ci.fov_x)) snprintf(fov, sizeof fov, "-");
            else snprintf(fov, sizeof fov, "%.1f / %.1f", AM_DEG(ci.fov_x), AM_DEG(ci.fov_y));
            printf("%-12s %-12s %-11s %-29s %-25s %-15s %.1f\n", cam->name, ami_model_name(cam->model), size, ctr, ax, fov,
                   ci.focal_px);
        }
        goto done;
    }
    if (am_calib_write(cal, am_outset_path(set, NULL), &err) != AM_OK) goto fail;
    rc = am_cli_commit("cameras", set);
    set = NULL;
    if (rc == 0) am_cli_log("cameras: %zu cameras -> %s", cal->camera_count, outp);
    goto done;
fail:
    rc = am_cli_fail_out("cameras", set, &err);
done:
    am_adjustment_free(adjusted);
    am_mdet_free(det);
    am_calib_free(cal);
    am_creature_free(cr);
    return rc;
}
