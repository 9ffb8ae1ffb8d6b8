/* `anymove rig-from-points POSITIONS --edges A-B,... | --skeleton FILE -o rig.json`: a rig for a
 * keypoint skeleton (am_rig_from_points). */
#include <math.h>
#include <string.h>

#include "anymove/fit.h"
#include "anymove/mocap.h"
#include "cli.h"
#include "core/internal.h"
#include "scene.h"

static void ami_rfp_help(FILE *out)
{
    fprintf(out,
            "usage: anymove rig-from-points POSITIONS (--edges A-B,B-C,... | --skeleton FILE) -o RIG.json\n"
            "                               [--root NAME] [--limits LIMITS.json] [--name NAME]\n"
            "                               [--scale S] [--up y|z] [--fps F] [--report] [--render] [--quiet]\n\n"
            "Builds a rig for keypoints tracked in 3D, so a lab's keypoints can be fitted without\n"
            "authoring a rig: one bone per edge of the skeleton (named after the keypoint it ends\n"
            "at), hanging from the most central keypoint (--root to choose); each bone's length is\n"
            "the median of its observed lengths; the rest pose is the median pose with every frame\n"
            "turned to face -Y along its direction of travel, put on the ground. Edges that close a\n"
            "cycle (trackers draw triangles) are left out with a warning, keypoints on no edge too.\n"
            "Angles are free unless --limits gives rig.json's \"limits_deg\" object (bone or stem ->\n"
            "[[min, max], [min, max], [min, max]] degrees).\n"
            "POSITIONS: joints.npz (SPEC 4.2.3) or a 3D tracker file (TRC, C3D, anipose CSV,\n"
            "points3d.h5; --scale, --up and --fps as in import). --skeleton reads the edges a\n"
            "DeepLabCut config.yaml or a SLEAP analysis .h5 carries.\n"
            "--report writes report.html beside RIG.json (the rig fitted through POSITIONS as `ik`\n"
            "would: per-joint error against them, per-bone angles, a 3D viewer), --render\n"
            "render_layout.png and render_three_quarter.png there (the middle frame); they and\n"
            "RIG.json appear together.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o out/wolf_exam4\n"
            "  anymove triangulate out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml -o out/wolf_tri4\n"
            "  anymove rig-from-points out/wolf_tri4/joints.npz -o out/wolf_points_rig.json \\\n"
            "      --edges hips-chest,chest-neck,neck-head,hips-tail_a,tail_a-tail_b\n");
}

/* --report and --render: the rig is the result, so the page shows it doing what it was made
 * for: fitted through the points and their confidences (am_fit, as `anymove ik` does), the points the truth of the
 * per-joint plot (NaN where missing), played from a GLB written beside the page and dropped
 * (the viewer embeds it: the set stays RIG.json and the pictures). */
static am_status ami_pictures(am_cli_pictures *pic, const char *pos_path, const am_joints *jt, const am_rig *rig,
                              am_outset *set, am_error *err)
{
    const size_t T = jt->frame_count, J = rig->joint_count;
    double *pos = am_alloc_array(T * J * 3 + 1, sizeof(double));
    double *conf = jt->conf ? am_alloc_array(T * J + 1, sizeof(double)) : NULL;
    am_status s = pos && (conf || !jt->conf) ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "report");
    for (size_t j = 0; s == AM_OK && j < J; j++) {
        size_t q = 0;
        while (q < jt->joint_count && strcmp(jt->names[q], rig->joint_names[j]) != 0) q++;
        for (size_t t = 0; t < T; t++) {
            for (int c = 0; c < 3; c++)
                pos[(t * J + j) * 3 + c] = q < jt->joint_count ? jt->joints[(t * jt->joint_count + q) * 3 + c] : NAN;
            if (conf) conf[t * J + j] = q < jt->joint_count ? jt->conf[t * jt->joint_count + q] : 0.0;
        }
    }
    am_joints view = {.frame_count = T, .joint_count = J, .joints = pos, .names = rig->joint_names,
                      .fps = am_fps_valid(jt->fps) ? jt->fps : 30.0, .conf = conf};
    am_fit_input in = {.rig = rig, .points = &view};
    /* ik's default: the smoothness chosen by cross-validation */
    am_fit_opts fo = {.flags = AM_FIT_SMOOTH_AUTO, .ctx = am_cli_context()};
    am_fit_result *fit = NULL;
    if (s == AM_OK) s = am_fit(&in, &fo, &fit, err);
    if (s != AM_OK && !err->file[0]) am_error_set_file(err, pos_path);
    char glb[4200], text[512];
    glb[0] = '\0';
    if (s == AM_OK) {
        am_cli_print_warnings("rig-from-points", &fit->warnings);
        double size = am_cli_rig_size(rig);
        snprintf(text, sizeof text,
                 "%zu bones, %zu joints, root '%s', body size %.3g m.\n"
                 "Fitted through %s (as `anymove ik` would):\n"
                 "mean distance to the points %.3g cm (%.3g %% of the body size), p95 %.3g cm.\n",
                 rig->bone_count, J, rig->joint_names[rig->head_joint[0]], size, pos_path, 100 * fit->points_mean_m,
                 size > 0 ? 100 * fit->points_mean_m / size : 0.0, 100 * fit->points_p95_m);
        am_tmp_path(glb, sizeof glb, am_outset_path(set, "report.html"));
        const am_motion *clips[1] = {fit->motion};
        if (pic->report) s = am_cli_write_animation(AM_CLI_FMT_GLB, rig, clips, NULL, 1, NULL, glb, err);
    }
    if (s == AM_OK) {
        pic->title = pos_path, pic->rig = rig, pic->motion = fit->motion, pic->truth = pos, pic->gate_text = text;
        pic->glb_path = pic->report ? glb : NULL, pic->frame_layout = true;
        s = am_cli_write_pictures("rig-from-points", pic, set, err);
    }
    if (glb[0]) am_file_discard(glb);
    am_fit_result_free(fit);
    am_free(conf);
    am_free(pos);
    return s;
}

/* With --report or --render the set is the folder of RIG.json: RIG.json and the pictures. */
static int ami_open(const char *out_path, const am_cli_pictures *pic, am_outset **set)
{
    if (!pic->report && !pic->render) return am_cli_outputs("rig-from-points", out_path, NULL, 0, set);
    const char *slash = strrchr(out_path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == out_path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - out_path), out_path);
    const char *names[6] = {slash ? slash + 1 : out_path};
    size_t count = 1;
    am_cli_picture_names(pic, names, &count);
    for (size_t i = 1; i < count; i++)
        if (strcmp(names[0], names[i]) == 0) return am_cli_usage("rig-from-points", "-o %s: --report writes that name", out_path);
    return am_cli_outputs("rig-from-points", dir, names, count, set);
}

int am_cmd_rig_from_points(int argc, char **argv)
{
    const char *pos_path = NULL, *out_path = NULL, *edges = NULL, *sk_path = NULL, *lim_path = NULL, *v;
    am_rig_points_opts ro = {0};
    am_import_opts io = {0};
    double scale = 0;
    am_cli_pictures pic = {0};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_rfp_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--edges"))) {
            edges = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--skeleton"))) {
            sk_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--root"))) {
            ro.root = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--name"))) {
            ro.name = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--limits"))) {
            lim_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("rig-from-points", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("rig-from-points", "--fps", v, &io.fps)) return 2;
            if (!am_fps_valid(io.fps)) return am_cli_usage("rig-from-points", "--fps must be a frame rate");
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcmp(v, "y") != 0 && strcmp(v, "z") != 0) return am_cli_usage("rig-from-points", "--up is y or z");
            io.up = v[0];
        } else if (am_cli_flag(argv[i], "--report")) {
            pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            pic.render = true;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("rig-from-points", "unknown option '%s'", argv[i]);
        } else if (!pos_path) {
            pos_path = argv[i];
        } else {
            return am_cli_usage("rig-from-points", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!pos_path) return am_cli_usage("rig-from-points", "missing POSITIONS");
    if (!out_path) return am_cli_usage("rig-from-points", "missing -o RIG.json");
    if (!edges == !sk_path) return am_cli_usage("rig-from-points", "give --edges or --skeleton (one of them)");
    if (am_cli_out_file("rig-from-points", out_path, AM_CLI_FMT(AM_CLI_FMT_JSON)) == AM_CLI_FMT_NONE) return 2;
    am_outset *set = NULL;
    int rc = ami_open(out_path, &pic, &set);
    if (rc) return rc;
    am_error err = {0};
    am_joints *jt = NULL;
    am_skeleton *sk = NULL;
    am_rig *rig = NULL;
    char *limits = NULL;
    size_t n = strlen(pos_path);
    am_status s;
    if (n > 4 && strcmp(pos_path + n - 4, ".npz") == 0) {
        s = am_joints_load(pos_path, &jt, &err);
        if (s == AM_OK && scale > 0)
            for (size_t k = 0; k < jt->frame_count * jt->joint_count * 3; k++) jt->joints[k] *= scale;
    } else {
        io.scale = scale;
        io.ctx = am_cli_context();
        s = am_import_3d(pos_path, AM_TRACK_AUTO, &io, &jt, &err);
    }
    if (s == AM_OK) am_cli_body_size("rig-from-points", pos_path, am_cli_joints_size(jt));
    if (s == AM_OK) s = edges ? am_skeleton_parse(edges, &sk, &err) : am_skeleton_load(sk_path, &sk, &err);
    if (s != AM_OK && edges && !err.file[0]) am_error_set_file(&err, "--edges");
    if (s == AM_OK && lim_path) {
        size_t len = 0;
        s = am_file_read(lim_path, 0, &limits, &len, &err);
        ro.limits_json = limits;
        ro.limits_source = lim_path;
    }
    if (s == AM_OK) {
        s = am_rig_from_points(jt, sk, &ro, &rig, &err);
        if (s != AM_OK && !err.file[0]) am_error_set_file(&err, pos_path);
    }
    const char *base = strrchr(out_path, '/');
    base = pic.report || pic.render ? (base ? base + 1 : out_path) : NULL;
    if (s == AM_OK) s = am_rig_write(rig, am_outset_path(set, base), &err);
    if (s == AM_OK && (pic.report || pic.render)) s = ami_pictures(&pic, pos_path, jt, rig, set, &err);
    if (s != AM_OK) {
        rc = am_cli_fail_out("rig-from-points", set, &err);
    } else if ((rc = am_cli_commit("rig-from-points", set)) == 0) {
        am_cli_log("rig-from-points: %zu bones, %zu joints, root '%s' -> %s", rig->bone_count, rig->joint_count,
                   rig->joint_names[rig->head_joint[0]], out_path);
    }
    am_free(limits);
    am_rig_free(rig);
    am_skeleton_free(sk);
    am_joints_free(jt);
    return rc;
}
