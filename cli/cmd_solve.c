/* `anymove solve DET.npz --rig RIG -o DIR`: a rig fitted to joints read in two views. */
#include <string.h>

#include "anymove/capture.h"
#include "cli.h"
#include "core/internal.h"
#include "scene.h"

static void ami_solve_help(FILE *out)
{
    fprintf(out,
            "usage: anymove solve DET.npz --rig RIG.json [--creature CREATURE.json] -o DIR\n"
            "                     [--no-warp] [--no-swap-repair] [--no-contacts] [--no-foot-lock]\n"
            "                     [--iterations N] [--report] [--render] [--quiet]\n\n"
            "Fits the rig to joints read in two views (det.npz, SPEC 4.2): sync check, front\n"
            "left/right swap repair, triangulation, Kabsch + analytic IK start, a banded\n"
            "Levenberg-Marquardt fit with a Cauchy reprojection loss annealed 40 -> 6 px,\n"
            "contacts and foot lock. Writes DIR/motion.json (SPEC 4.3 with reproj_px, sync,\n"
            "contacts), DIR/animation.glb and DIR/report.txt (quality-gate verdicts, also\n"
            "printed on stdout unless --quiet). Without --creature the wolf layout of SPEC 3 is\n"
            "used; stderr says which. --report adds DIR/report.html (quality gates, plots, a 3D\n"
            "viewer; see `anymove report`), --render DIR/render_layout.png and\n"
            "DIR/render_three_quarter.png (the middle frame). Exit code 2 on bad input.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --seed 1 -o out/wolf_exam\n"
            "  anymove solve out/wolf_exam/det.npz --rig examples/creatures/wolf/rig.json \\\n"
            "                --creature examples/creatures/wolf/creature.json -o out/wolf_solve\n");
}

int am_cmd_solve(int argc, char **argv)
{
    const char *det_path = NULL, *rig_path = NULL, *cr_path = NULL, *dir = NULL, *v;
    bool quiet = false;
    am_cli_pictures pic = {.glb = "animation.glb"};
    am_capture_opts o = {0};
    long l;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_solve_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
            quiet = true;
        } else if (am_cli_flag(argv[i], "--no-warp")) {
            o.flags |= AM_CAPTURE_NO_WARP;
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
    if (!am_cli_out_dir("solve", dir, "motion.json, animation.glb, report.txt")) return 2;
    /* --report and --render add their files to the set */
    const char *names[7] = {"motion.json", "animation.glb", "report.txt"};
    size_t name_count = 3;
    am_cli_picture_names(&pic, names, &name_count);
    am_outset *set = NULL;
    int rc = am_cli_outputs("solve", dir, names, name_count, &set);
    if (rc) return rc;

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
    if (s == AM_OK) s = am_motion_write(res->motion, am_outset_path(set, "motion.json"), &err);
    if (s == AM_OK) {
        const am_motion *clips[1] = {res->motion};
        const char *clip_names[1] = {"capture"};
        s = am_cli_write_animation(AM_CLI_FMT_GLB, rig, clips, clip_names, 1, NULL, am_outset_path(set, "animation.glb"), &err);
    }
    if (s == AM_OK) {
        am_capture_report(res, &rep);
        s = rep.failed ? AM_FAIL(&err, AM_E_NOMEM, "report") : am_file_write(am_outset_path(set, "report.txt"), rep.data, rep.len, &err);
    }
    if (s == AM_OK) {
        pic.title = det_path, pic.rig = rig, pic.motion = res->motion, pic.det = det, pic.creature = cr;
        pic.gate_text = rep.data;
        s = am_cli_write_pictures("solve", &pic, set, &err);
    }
    if (s != AM_OK) {
        rc = am_cli_fail_out("solve", set, &err);
    } else if ((rc = am_cli_commit("solve", set)) == 0) {
        if (!quiet) fwrite(rep.data, 1, rep.len, stdout);
        am_cli_stage_end(t0, "solve");
    }
    am_buf_free(&rep);
    am_capture_result_free(res);
    am_det_free(det);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
