/* `anymove report DIR -o report.html`: one page per result, quality gates first. */
#include <string.h>
#include <strings.h>

#include "anymove/capture.h"
#include "core/internal.h"
#include "scene.h"

static void ami_report_help(FILE *out)
{
    fprintf(out,
            "usage: anymove report DIR -o REPORT.html [--det det.npz [--cameras CALIB.toml]] [--truth truth.npz]\n"
            "                      [--rig RIG.json] [--creature CREATURE.json] [--motion motion.json]\n"
            "                      [--quiet]\n\n"
            "One page that works from a file:// URL with no network: the quality-gate verdicts\n"
            "first (paw agreement keep / look / reroll, reprojection per view, DIR/report.txt as\n"
            "written), inline SVG plots (reprojection per frame and view, paw heights in both views,\n"
            "contacts, per-joint error against --truth, per-bone angles, foot slide per plant) and\n"
            "a three.js viewer playing DIR's animation.glb (play/pause, frame scrub, joints toggle).\n"
            "three.js (npm, installed by scripts/deps.sh into .deps/npm; AM_THREE_DIR overrides) is\n"
            "copied beside the page as REPORT_three.js. DIR is an output folder of solve, ik, rig\n"
            "or convert (DIR/det.npz is used when it is there); --rig names the rig of a solve.\n"
            "--cameras: det.npz holds N cameras' detections (SPEC 4.2.1), plotted per camera.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --seed 1 --frames 30 -o out/wolf_exam\n"
            "  anymove solve out/wolf_exam/det.npz --rig examples/creatures/wolf/rig.json -o out/wolf_solve\n"
            "  anymove report out/wolf_solve --rig examples/creatures/wolf/rig.json --det out/wolf_exam/det.npz \\\n"
            "                 --truth out/wolf_exam/truth.npz -o out/wolf_solve/report.html\n");
}

int am_cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *det_path = NULL, *truth_path = NULL, *cr_path = NULL, *cal_path = NULL, *v;
    am_cli_scene_opts so = {0};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_report_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--det"))) {
            det_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--truth"))) {
            truth_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            so.rig = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            so.motion = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("report", "unknown option '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
        } else {
            return am_cli_usage("report", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!dir) return am_cli_usage("report", "missing DIR (an output folder of solve, ik, rig or convert)");
    if (!out) return am_cli_usage("report", "missing -o REPORT.html");
    const char *ext = am_cli_ext(out);
    if (!ext || strcasecmp(ext, ".html") != 0) return am_cli_usage("report", "-o %s: give a file name ending in .html", out);
    /* the page and its three.js script, together */
    char parent[4096], html_name[512], script_name[600];
    const char *slash = strrchr(out, '/');
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
    snprintf(html_name, sizeof html_name, "%s", slash ? slash + 1 : out);
    snprintf(script_name, sizeof script_name, "%.*s_three.js", (int)(strlen(html_name) - 5), html_name);
    const char *names[2] = {html_name, script_name};
    am_outset *set = NULL;
    int rc = am_cli_outputs("report", parent, names, 2, &set);
    if (rc) return rc;

    am_error err = {0};
    am_cli_scene sc;
    am_det *det = NULL;
    am_mdet *mdet = NULL;
    am_calib *cal = NULL;
    am_creature *cr = NULL;
    am_capture_truth *truth = NULL;
    double *tj = NULL;
    char *gate = NULL;
    size_t gate_len = 0;
    char buf[4096];
    am_status s = am_cli_scene_load("report", dir, &so, &sc, &err);
    if (s == AM_OK && !sc.motion) s = AM_FAIL_AT(&err, AM_E_READ, dir, 0, 0, "no motion to report (motion.json or an animated GLB)");
    if (s == AM_OK && !det_path) det_path = am_cli_find_file(dir, "det.npz", buf, sizeof buf);
    if (s == AM_OK && det_path && !cal_path) s = am_det_load(det_path, &det, &err);
    if (s == AM_OK && cal_path) s = am_calib_load(cal_path, NULL, &cal, &err);
    if (s == AM_OK && det_path && cal_path) s = am_mdet_load(det_path, &mdet, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && truth_path) s = am_capture_truth_load(truth_path, &truth, &err);
    if (s == AM_OK && truth) {
        size_t T = sc.motion->frame_count, J = sc.rig->joint_count;
        tj = am_alloc_array(T * J * 3, sizeof(double));
        if (!tj) s = AM_FAIL(&err, AM_E_NOMEM, "truth");
        for (size_t i = 0; tj && i < T * J * 3; i++) tj[i] = NAN;
        for (size_t j = 0; tj && j < truth->joint_count; j++) {
            int rj = am_rig_find_joint(sc.rig, truth->names[j]);
            for (size_t t = 0; rj >= 0 && t < T && t < truth->frame_count; t++)
                memcpy(tj + (t * J + (size_t)rj) * 3, truth->joints + (t * truth->joint_count + j) * 3, 3 * sizeof(double));
        }
    }
    char rp[4096];
    if (s == AM_OK && am_cli_find_file(dir, "report.txt", rp, sizeof rp)) s = am_file_read(rp, 0, &gate, &gate_len, &err);
    if (s == AM_OK) {
        am_cli_pictures pic = {.title = dir, .rig = sc.rig, .motion = sc.motion, .det = det, .mdet = mdet, .cameras = cal,
                               .creature = cr, .truth = tj, .gate_text = gate};
        s = am_cli_html_report("report", &pic, sc.glb, am_outset_path(set, html_name), am_outset_path(set, script_name), &err);
    }
    if (s != AM_OK) rc = am_cli_fail_out("report", set, &err);
    else if ((rc = am_cli_commit("report", set)) == 0) am_cli_log("report: wrote %s", out);
    am_free(gate);
    am_free(tj);
    am_capture_truth_free(truth);
    am_creature_free(cr);
    am_det_free(det);
    am_mdet_free(mdet);
    am_calib_free(cal);
    am_cli_scene_free(&sc);
    return rc;
}
