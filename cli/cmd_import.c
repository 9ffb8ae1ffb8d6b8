/* `anymove import INPUT... -o OUT`: trackers' files to det.npz, 3D points to joints.npz or TRC. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/camera.h"
#include "anymove/mocap.h"
#include "cli.h"
#include "core/internal.h"

static void ami_import_help(FILE *out)
{
    fprintf(out,
            "usage: anymove import INPUT... -o DET.npz [--cameras CALIB.toml [--scale S]] [--camera NAME=INPUT]\n"
            "                      [--names MAP.json] [--fps F] [--individual NAME] [--track N] [--person N]\n"
            "                      [--size W H] [--skeleton body25b] [--quiet]\n"
            "       anymove import INPUT -o JOINTS.npz|OUT.trc [--scale S] [--up y|z] [--names MAP.json] [--fps F]\n\n"
            "Trackers' files to SPEC 4.2.1 det.npz, one camera per input file or folder:\n"
            "  DeepLabCut CSV (single or multi-animal, labeled-data), SLEAP analysis .h5, an OpenPose folder\n"
            "  of *_keypoints.json (or one file), MediaPipe pose landmarks (.pbtxt, .json, .csv, or a folder)\n"
            "and 3D points to SPEC 4.2.3 joints.npz (-o *.npz) or an OpenSim TRC in metres (-o *.trc):\n"
            "TRC, C3D, anipose 3D CSV, sleap-anipose points3d.h5. The body size of 3D points is noted, with\n"
            "a warning when it is implausible in metres.\n\n"
            "Cameras are named after their input (file name without extension); with --cameras each must\n"
            "match a calibration camera: by name, else the one calibration name inside the file name; give\n"
            "--camera NAME=INPUT where that fails. All cameras must track the same joints over the same frames.\n"
            "  --names MAP.json   rename joints: {\"tracker name\": \"rig name\" | null (drop)}\n"
            "  --fps F            frame rate when the files have none (default 30, with a warning)\n"
            "  --individual NAME  DeepLabCut multi-animal: the individual (default: the best tracked)\n"
            "  --track N          SLEAP / points3d.h5: track N (1-based; default: the most occupied)\n"
            "  --person N         OpenPose: people[N-1] (default: per frame the most confident person)\n"
            "  --size W H         MediaPipe: the image size for its normalised coordinates (required)\n"
            "  --skeleton body25b OpenPose BODY_25B names (25 keypoints are BODY_25 by default)\n"
            "  --scale S          3D: metres per file unit (default: the file's units, mm / cm / m)\n"
            "                     with --cameras: the calibration's units in metres\n"
            "  --up y|z           3D: the file's up axis (default: TRC y as OpenSim, others z)\n\n"
            "examples:\n"
            "  anymove import ../shared/data/formats/deeplabcut/deepof_single_topview_DLC_resnet50.csv --fps 25 \\\n"
            "      -o out/dlc_det.npz\n"
            "  anymove import ../shared/data/formats/openpose/sign-language-sample -o out/op_det.npz\n"
            "  anymove import ../shared/data/formats/mediapipe/pose_landmarks.pbtxt --size 1280 720 -o out/mp_det.npz\n"
            "  anymove import ../shared/data/formats/c3d/walking5.c3d -o out/walking5_joints.npz\n"
            "  anymove import ../shared/data/formats/trc/std_walking5_markers.trc -o out/walking5.trc\n");
}

/* The calibration camera for an input: exact stem, else the one calibration name found in it. */
static const char *ami_match_camera(const am_calib *cal, const char *stem, const char *path)
{
    int k = am_calib_find(cal, stem);
    if (k >= 0) return cal->cameras[k].name;
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    const char *best = NULL;
    size_t best_len = 0, hits = 0;
    for (size_t c = 0; c < cal->camera_count; c++) {
        const char *n = cal->cameras[c].name;
        size_t l = strlen(n);
        if (!strstr(base, n)) continue;
        if (l > best_len) {
            best = n;
            best_len = l;
            hits = 1;
        } else if (l == best_len) {
            hits++;
        }
    }
    return hits == 1 ? best : NULL;
}

int am_cmd_import(int argc, char **argv)
{
    const char *outp = NULL, *cal_path = NULL, *map_path = NULL, *v;
    const char *inputs[256];
    const char *forced[256][2];
    size_t ni = 0, nf = 0;
    am_import_opts io = {0};
    double scale = 0;
    for (int i = 1; i < argc; i++) {
        long l;
        if (am_cli_is_help(argv[i])) {
            ami_import_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            outp = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--names"))) {
            map_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--camera"))) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1]) return am_cli_usage("import", "--camera wants NAME=INPUT, got '%s'", v);
            if (nf == 256 || ni == 256) return am_cli_usage("import", "at most 256 inputs");
            forced[nf][0] = v;
            forced[nf][1] = eq + 1;
            nf++;
            inputs[ni++] = eq + 1;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("import", "--fps", v, &io.fps)) return 2;
            if (!am_fps_valid(io.fps))
                return am_cli_usage("import", "--fps must lie in [%g, %g]", AM_FPS_MIN, AM_FPS_MAX);
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("import", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--individual"))) {
            io.individual = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--track"))) {
            if (!am_cli_long("import", "--track", v, &l)) return 2;
            if (l < 1) return am_cli_usage("import", "--track counts from 1");
            io.track = l;
        } else if ((v = am_cli_value(argc, argv, &i, "--person"))) {
            if (!am_cli_long("import", "--person", v, &l)) return 2;
            if (l < 1) return am_cli_usage("import", "--person counts from 1");
            io.person = l;
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcmp(v, "y") && strcmp(v, "z")) return am_cli_usage("import", "--up is y or z");
            io.up = v[0];
        } else if ((v = am_cli_value(argc, argv, &i, "--skeleton"))) {
            if (strcmp(v, "body25b") && strcmp(v, "body25")) return am_cli_usage("import", "--skeleton is body25 or body25b");
            io.skeleton = v;
        } else if (am_cli_flag(argv[i], "--size")) {
            if (i + 2 >= argc || !am_cli_double("import", "--size", argv[i + 1], &io.width) ||
                !am_cli_double("import", "--size", argv[i + 2], &io.height))
                return am_cli_usage("import", "--size wants W H");
            if (!(io.width > 0 && io.height > 0)) return am_cli_usage("import", "--size must be positive");
            i += 2;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("import", "unknown option '%s'", argv[i]);
        } else if (ni == 256) {
            return am_cli_usage("import", "at most 256 inputs");
        } else {
            inputs[ni++] = argv[i];
        }
    }
    if (!ni) return am_cli_usage("import", "no input files");
    if (!outp) return am_cli_usage("import", "missing -o DET.npz, -o JOINTS.npz or -o OUT.trc");
    /* What the inputs are decides what -o may be, so both are checked before any work. */
    am_track_format fmts[256];
    for (size_t k = 0; k < ni; k++) fmts[k] = am_track_format_guess(inputs[k]);
    bool is3d = am_track_format_is_3d(fmts[0]);
    for (size_t k = 1; k < ni; k++)
        if (am_track_format_is_3d(fmts[k]) || is3d)
            return am_cli_usage("import", "%s holds 3D points (%s): it is imported alone",
                                am_track_format_is_3d(fmts[k]) ? inputs[k] : inputs[0],
                                am_track_format_name(am_track_format_is_3d(fmts[k]) ? fmts[k] : fmts[0]));
    if (is3d && (cal_path || nf))
        return am_cli_usage("import", "%s holds 3D points: --cameras and --camera are for 2D detections", inputs[0]);
    am_cli_format fmt = am_cli_out_file(
        "import", outp, AM_CLI_FMT(AM_CLI_FMT_NPZ) | (is3d ? AM_CLI_FMT(AM_CLI_FMT_TRC) : 0u));
    if (fmt == AM_CLI_FMT_NONE) return 2;
    if (!is3d && scale && !cal_path)
        return am_cli_usage("import", "--scale of 2D detections is the calibration's unit: it needs --cameras");
    am_outset *set = NULL;
    int rc = am_cli_outputs("import", outp, NULL, 0, &set);
    if (rc) return rc;
    am_error err = {0};
    am_name_map *map = NULL;
    am_calib *cal = NULL;
    am_mdet **parts = NULL, *det = NULL;
    am_joints *jt = NULL;
    const char **names = NULL;
    io.ctx = am_cli_context();
    if (map_path && am_name_map_load(map_path, &map, &err) != AM_OK) goto fail;
    if (is3d) {
        io.scale = scale;
        if (am_import_3d(inputs[0], fmts[0], &io, &jt, &err) != AM_OK) goto fail;
        if (map && am_joints_rename(jt, map, &err) != AM_OK) {
            am_error_set_file(&err, map_path);
            goto fail;
        }
        am_cli_body_size("import", inputs[0], am_cli_joints_size(jt));
        am_status s = fmt == AM_CLI_FMT_TRC ? am_trc_write(am_outset_path(set, NULL), jt, &err)
                                            : am_joints_write(am_outset_path(set, NULL), jt, &err);
        if (s != AM_OK) goto fail;
        if ((rc = am_cli_commit("import", set)) != 0) goto done;
        size_t seen = 0;
        for (size_t k = 0; k < jt->frame_count * jt->joint_count; k++) seen += !isnan(jt->joints[3 * k]);
        char f[32];
        am_cli_log("import: %s (%s): %zu frames, %zu joints, %.1f %% present, %s fps -> %s", inputs[0],
                   am_track_format_name(fmts[0]), jt->frame_count, jt->joint_count,
                   100.0 * (double)seen / (double)(jt->frame_count * jt->joint_count), am_cli_fps(jt->fps, f), outp);
        goto done;
    }
    if (cal_path) {
        am_calib_read_opts ro = {.scale = scale};
        if (am_calib_load(cal_path, &ro, &cal, &err) != AM_OK) goto fail;
    }
    parts = am_alloc_array(ni, sizeof *parts);
    names = am_alloc_array(ni, sizeof *names);
    if (!parts || !names) {
        AM_FAIL(&err, AM_E_NOMEM, "inputs");
        goto fail;
    }
    for (size_t k = 0; k < ni; k++) {
        if (am_import_2d(inputs[k], fmts[k], &io, &parts[k], &err) != AM_OK) goto fail;
        names[k] = parts[k]->cameras[0];
        for (size_t q = 0; q < nf; q++)
            if (forced[q][1] == inputs[k]) {
                size_t l = (size_t)(strchr(forced[q][0], '=') - forced[q][0]);
                char *nm = am_strndup(forced[q][0], l);
                if (!nm) {
                    AM_FAIL(&err, AM_E_NOMEM, "camera name");
                    goto fail;
                }
                am_free(parts[k]->cameras[0]);
                parts[k]->cameras[0] = nm;
                names[k] = nm;
            }
        if (cal) {
            const char *m = ami_match_camera(cal, names[k], inputs[k]);
            if (!m) {
                char list[512];
                size_t n = 0;
                list[0] = '\0';
                for (size_t c = 0; c < cal->camera_count && n < sizeof list - 40; c++)
                    n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", c ? ", " : "", cal->cameras[c].name);
                AM_FAIL_AT(&err, AM_E_NAME, inputs[k], 0, 0,
                           "camera '%s' is not in the calibration %s (it has %s); use --camera NAME=%s", names[k],
                           cal_path, list, inputs[k]);
                goto fail;
            }
            names[k] = m;
        }
    }
    if (am_mdet_stack((const am_mdet *const *)parts, inputs, ni, names, &det, &err) != AM_OK) goto fail;
    if (map && am_mdet_rename(det, map, &err) != AM_OK) {
        am_error_set_file(&err, map_path);
        goto fail;
    }
    if (am_mdet_write(am_outset_path(set, NULL), det, &err) != AM_OK) goto fail;
    if ((rc = am_cli_commit("import", set)) != 0) goto done;
    {
        size_t seen = 0, all = det->camera_count * det->frame_count * det->joint_count;
        for (size_t k = 0; k < all; k++) seen += det->conf[k] > 0;
        char f[32];
        am_cli_log("import: %zu camera%s, %zu frames, %zu joints, %.1f %% seen, %s fps -> %s", det->camera_count,
                   det->camera_count == 1 ? "" : "s", det->frame_count, det->joint_count,
                   100.0 * (double)seen / (double)all, am_cli_fps(det->fps, f), outp);
    }
    goto done;
fail:
    rc = am_cli_fail_out("import", set, &err);
done:
    for (size_t k = 0; parts && k < ni; k++) am_mdet_free(parts[k]);
    am_free(parts);
    am_free(names);
    am_mdet_free(det);
    am_joints_free(jt);
    am_calib_free(cal);
    am_name_map_free(map);
    return rc;
}
