/* `anymove solve DET.npz --rig RIG [--cameras CALIB] -o DIR`: a rig fitted to joints read in two
 * views (SPEC 3) or in N calibrated cameras. */
#include <math.h>
#include <string.h>

#include "anymove/capture.h"
#include "anymove/multiview.h"
#include "cli.h"
#include "core/internal.h"
#include "scene.h"

static void ami_solve_help(FILE *out)
{
    fprintf(out,
            "usage: anymove solve DET.npz --rig RIG.json [--creature CREATURE.json] -o DIR\n"
            "                     [--cameras CALIB.toml [--scale S] [--max-offset N | --no-offsets]\n"
            "                      [--search-offsets]]\n"
            "                     [--no-warp] [--no-swap-repair] [--no-contacts] [--no-foot-lock]\n"
            "                     [--iterations N] [--window N] [--report] [--render] [--quiet]\n\n"
            "Fits the rig to joints read in two views (det.npz, SPEC 4.2): sync check, front\n"
            "left/right swap repair, triangulation, Kabsch + analytic IK start, a banded\n"
            "Levenberg-Marquardt fit with a Cauchy reprojection loss annealed 40 -> 6 px,\n"
            "contacts and foot lock. Writes DIR/motion.json (SPEC 4.3 with reproj_px, sync,\n"
            "contacts), DIR/animation.glb, DIR/angles.csv (per frame and bone: flexion, abduction and\n"
            "rotation about the bone's rest axes and the Euler XYZ, degrees), DIR/angles.mot (OpenSim)\n"
            "and DIR/report.txt (quality-gate verdicts, also\n"
            "printed on stdout unless --quiet). Without --creature the wolf layout of SPEC 3 is\n"
            "used; stderr says which. --report adds DIR/report.html (quality gates, plots, a 3D\n"
            "viewer; see `anymove report`), --render DIR/render_layout.png and\n"
            "DIR/render_three_quarter.png (the middle frame; with --cameras render_cameras.png, the\n"
            "rig through every calibrated camera in a grid, instead of the layout). Exit code 2\n"
            "on bad input.\n\n"
            "With --cameras, DET.npz holds joints read in N calibrated cameras (SPEC 4.2.1): each\n"
            "camera's time offset is found against the camera that saw most (shifts of up to\n"
            "--max-offset frames, default 12, kept when they cut the two-camera gap by 15%%; a det\n"
            "that carries time_offset keeps its own unless --search-offsets), the joints are\n"
            "triangulated for the start, and the rig is fitted to every camera's detections through\n"
            "its lens model (the same fit as the two-view solve). --creature then only names the\n"
            "contact joints. report.txt gives the reprojection per camera and the offsets; the\n"
            "report's plot is per frame and camera.\n"
            "Long clips are solved in overlapping windows (--window N frames, default: the whole clip\n"
            "up to 600 frames, else 400), so memory stays flat however long the take.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --seed 1 -o out/wolf_exam\n"
            "  anymove solve out/wolf_exam/det.npz --rig examples/creatures/wolf/rig.json \\\n"
            "                --creature examples/creatures/wolf/creature.json -o out/wolf_solve\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 --offsets 3 --hide-offsets \\\n"
            "               -o out/wolf_exam4\n"
            "  anymove solve out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml \\\n"
            "                --rig examples/creatures/wolf/rig.json -o out/wolf_solve4\n");
}

/* What both solves write from their motion: motion.json, the angles (csv and mot) and
 * animation.glb. */
static am_status ami_solve_write_motion(const am_rig *rig, const am_motion *mo, am_outset *set, am_error *err)
{
    am_status s = am_motion_write(mo, am_outset_path(set, "motion.json"), err);
    if (s == AM_OK) s = am_angles_csv_write(am_outset_path(set, "angles.csv"), rig, mo, err);
    if (s == AM_OK) s = am_angles_mot_write(am_outset_path(set, "angles.mot"), rig, mo, err);
    if (s == AM_OK) {
        const am_motion *clips[1] = {mo};
        const char *clip_names[1] = {"capture"};
        s = am_cli_write_animation(AM_CLI_FMT_GLB, rig, clips, clip_names, 1, NULL, am_outset_path(set, "animation.glb"), err);
    }
    return s;
}

/* Both solves' end, from the status so far: report.txt and the pictures (pic filled but for
 * the gate text, the report), then the outputs committed and the report printed, or the
 * failure reported and the outputs dropped. The exit code. */
static int ami_solve_finish(am_status s, const am_buf *rep, am_cli_pictures *pic, am_outset *set, bool quiet, double t0,
                            am_error *err)
{
    if (s == AM_OK)
        s = rep->failed ? AM_FAIL(err, AM_E_NOMEM, "report") : am_file_write(am_outset_path(set, "report.txt"), rep->data, rep->len, err);
    if (s == AM_OK) {
        pic->gate_text = rep->data;
        s = am_cli_write_pictures("solve", pic, set, err);
    }
    int rc;
    if (s != AM_OK) {
        rc = am_cli_fail_out("solve", set, err);
    } else if ((rc = am_cli_commit("solve", set)) == 0) {
        if (!quiet) fwrite(rep->data, 1, rep->len, stdout);
        am_cli_stage_end(t0, "solve");
    }
    return rc;
}

/* The N-camera solve: det.npz (either layout) and a calibration. */
static int ami_solve_cameras(const char *det_path, const char *cal_path, const am_calib_read_opts *ro, const char *rig_path,
                             const char *cr_path, const am_capture_opts *co, am_mv_solve_opts *mo, am_cli_pictures *pic,
                             am_outset *set, bool quiet)
{
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_mdet *det = NULL;
    am_calib *cal = NULL;
    am_mv_solve_result *res = NULL;
    am_buf rep = {0};
    double t0 = am_now();
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK) s = am_calib_load(cal_path, ro, &cal, &err);
    if (s == AM_OK) s = am_mdet_load(det_path, &det, &err);
    if (s == AM_OK) {
        uint32_t ff = 0;
        if (co->flags & AM_CAPTURE_NO_SWAP_REPAIR) ff |= AM_FIT_NO_SWAP_REPAIR;
        if (co->flags & AM_CAPTURE_NO_FOOT_LOCK) ff |= AM_FIT_NO_FOOT_LOCK;
        if (co->flags & AM_CAPTURE_NO_CONTACTS) ff |= AM_FIT_NO_CONTACTS;
        mo->fit.flags = ff;
        mo->fit.iterations = co->iterations;
        mo->fit.window = co->window;
        mo->ctx = am_cli_context();
        s = am_mv_solve(det, cal, rig, cr, mo, &res, &err);
        if (s != AM_OK && !err.file[0]) am_error_set_file(&err, det_path);
        if (s == AM_OK) am_cli_print_warnings("solve", &res->warnings);
    }
    if (s == AM_OK) s = ami_solve_write_motion(rig, res->fit->motion, set, &err);
    if (s == AM_OK) {
        am_fit_report(res->fit, &rep);
        am_buf_printf(&rep, "time offsets (frames added to each camera's index, %s):", res->offsets_found ? "found" : "as given");
        for (size_t c = 0; c < res->camera_count; c++) {
            am_buf_printf(&rep, " %s %+g", res->fit->camera_names[c], res->offsets[c]);
            if (isfinite(res->gap_px[c])) am_buf_printf(&rep, " (gap %.1f px, %.1f unshifted)", res->gap_px[c], res->gap0_px[c]);
        }
        am_buf_printf(&rep, "\n");
        /* reprojection per camera; the renders through the calibrated cameras and in 3/4 */
        pic->title = det_path, pic->rig = rig, pic->motion = res->fit->motion, pic->mdet = det, pic->cameras = cal;
        pic->creature = cr;
    }
    int rc = ami_solve_finish(s, &rep, pic, set, quiet, t0, &err);
    am_buf_free(&rep);
    am_mv_solve_result_free(res);
    am_mdet_free(det);
    am_calib_free(cal);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}

int am_cmd_solve(int argc, char **argv)
{
    const char *det_path = NULL, *rig_path = NULL, *cr_path = NULL, *dir = NULL, *cal_path = NULL, *v;
    bool quiet = false, two_view_only = false;
    am_cli_pictures pic = {.glb = "animation.glb"};
    am_capture_opts o = {0};
    am_mv_solve_opts mo = {0};
    am_calib_read_opts ro = {0};
    long l;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_solve_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
            quiet = true;
        } else if (am_cli_flag(argv[i], "--no-warp")) {
            o.flags |= AM_CAPTURE_NO_WARP;
            two_view_only = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("solve", v, &ro.scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--max-offset"))) {
            if (!am_cli_long("solve", "--max-offset", v, &l)) return 2;
            if (l < 1 || l > 1000) return am_cli_usage("solve", "--max-offset must be in 1..1000");
            mo.max_offset = (int)l;
        } else if (am_cli_flag(argv[i], "--no-offsets")) {
            mo.max_offset = -1;
        } else if (am_cli_flag(argv[i], "--search-offsets")) {
            mo.flags |= AM_MV_SEARCH_OFFSETS;
        } else if (am_cli_flag(argv[i], "--no-swap-repair")) {
            o.flags |= AM_CAPTURE_NO_SWAP_REPAIR;
        } else if (am_cli_flag(argv[i], "--no-contacts")) {
            o.flags |= AM_CAPTURE_NO_CONTACTS;
        } else if (am_cli_flag(argv[i], "--report")) {
            pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            pic.render = true;
        } else if (am_cli_flag(argv[i], "--no-foot-lock")) {
            o.flags |= AM_CAPTURE_NO_FOOT_LOCK;
        } else if ((v = am_cli_value(argc, argv, &i, "--iterations"))) {
            if (!am_cli_long("solve", "--iterations", v, &l)) return 2;
            if (l < 1 || l > 1000) return am_cli_usage("solve", "--iterations must be in 1..1000");
            o.iterations = (uint32_t)l;
        } else if ((v = am_cli_value(argc, argv, &i, "--window"))) {
            if (!am_cli_long("solve", "--window", v, &l)) return 2;
            if (l < 8 || l > 100000) return am_cli_usage("solve", "--window must be in 8..100000 frames");
            o.window = (size_t)l;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            dir = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("solve", "unknown option '%s'", argv[i]);
        } else if (!det_path) {
            det_path = argv[i];
        } else {
            return am_cli_usage("solve", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!det_path) return am_cli_usage("solve", "missing DET.npz");
    if (!rig_path) return am_cli_usage("solve", "missing --rig RIG.json");
    if (!dir) return am_cli_usage("solve", "missing -o DIR");
    if (cal_path && two_view_only) return am_cli_usage("solve", "--no-warp is the two-view lag's; with --cameras use --no-offsets");
    if (!cal_path && (ro.scale || mo.max_offset || mo.flags))
        return am_cli_usage("solve", "--scale and the offset options are for N cameras: they need --cameras");
    if (!am_cli_out_dir("solve", dir, "motion.json, animation.glb, angles.csv, angles.mot, report.txt")) return 2;
    /* --report and --render add their files to the set */
    const char *names[9] = {"motion.json", "animation.glb", "angles.csv", "angles.mot", "report.txt"};
    size_t name_count = 5;
    pic.through_cameras = cal_path != NULL; /* render_cameras.png, not render_layout.png */
    am_cli_picture_names(&pic, names, &name_count);
    am_outset *set = NULL;
    int rc = am_cli_outputs("solve", dir, names, name_count, &set);
    if (rc) return rc;

    if (cal_path) return ami_solve_cameras(det_path, cal_path, &ro, rig_path, cr_path, &o, &mo, &pic, set, quiet);
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_det *det = NULL;
    am_capture_result *res = NULL;
    am_buf rep = {0};
    double t0 = am_now();
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK) s = am_det_load(det_path, &det, &err);
    if (s == AM_OK) {
        am_layout lay;
        if (cr) lay = cr->layout;
        else am_layout_default(&lay);
        /* Views laid out differently from the wolf's fit badly without a word: always say it. */
        if (cr)
            am_cli_log("solve: the layout of %s: W_FRONT %g, W_SIDE %g, GROUND_V %g, M_PER_PX %g", cr_path,
                       lay.w_front, lay.w_side, lay.ground_v, lay.m_per_px);
        else
            am_cli_warn("solve", "no --creature: the wolf layout of SPEC 3 (W_FRONT %g, W_SIDE %g, GROUND_V %g, "
                        "M_PER_PX %g) and no feet, so no contacts or foot lock", lay.w_front, lay.w_side, lay.ground_v,
                        lay.m_per_px);
        o.ctx = am_cli_context();
        s = am_capture_solve(det, rig, cr, &o, &res, &err);
        if (s != AM_OK && !err.file[0]) am_error_set_file(&err, det_path);
        if (s == AM_OK) am_cli_print_warnings("solve", &res->warnings);
    }
    if (s == AM_OK) s = ami_solve_write_motion(rig, res->motion, set, &err);
    if (s == AM_OK) {
        am_capture_report(res, &rep);
        pic.title = det_path, pic.rig = rig, pic.motion = res->motion, pic.det = det, pic.creature = cr;
    }
    rc = ami_solve_finish(s, &rep, &pic, set, quiet, t0, &err);
    am_buf_free(&rep);
    am_capture_result_free(res);
    am_det_free(det);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
