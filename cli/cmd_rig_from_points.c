/* `anymove rig-from-points POSITIONS --edges A-B,... | --skeleton FILE -o rig.json`: a rig for a
 * keypoint skeleton (am_rig_from_points). */
#include <string.h>

#include "anymove/fit.h"
#include "anymove/mocap.h"
#include "cli.h"
#include "core/internal.h"

static void ami_rfp_help(FILE *out)
{
    fprintf(out,
            "usage: anymove rig-from-points POSITIONS (--edges A-B,B-C,... | --skeleton FILE) -o RIG.json\n"
            "                               [--root NAME] [--limits LIMITS.json] [--name NAME]\n"
            "                               [--scale S] [--up y|z] [--fps F] [--quiet]\n\n"
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
            "DeepLabCut config.yaml or a SLEAP analysis .h5 carries.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o out/wolf_exam4\n"
            "  anymove triangulate out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml -o out/wolf_tri4\n"
            "  anymove rig-from-points out/wolf_tri4/joints.npz -o out/wolf_points_rig.json \\\n"
            "      --edges hips-chest,chest-neck,neck-head,hips-tail_a,tail_a-tail_b\n");
}

int am_cmd_rig_from_points(int argc, char **argv)
{
    const char *pos_path = NULL, *out_path = NULL, *edges = NULL, *sk_path = NULL, *lim_path = NULL, *v;
    am_rig_points_opts ro = {0};
    am_import_opts io = {0};
    double scale = 0;
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
    int rc = am_cli_outputs("rig-from-points", out_path, NULL, 0, &set);
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
    if (s == AM_OK) s = am_rig_write(rig, am_outset_path(set, NULL), &err);
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
