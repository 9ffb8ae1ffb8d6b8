/* `anymove triangulate DET.npz --cameras CALIB.toml -o DIR`: N-camera detections to 3D joints. */
#include <math.h>
#include <string.h>

#include "anymove/multiview.h"
#include "cli.h"
#include "core/internal.h"
#include "scene.h"

static void ami_tri_help(FILE *out)
{
    fprintf(out,
            "usage: anymove triangulate DET.npz [--cameras CALIB.toml [--scale S]] -o DIR\n"
            "                           [--threshold PX] [--no-ransac] [--min-conf C] [--refine]\n"
            "                           [--rig RIG.json | --edges A-B,C-D,...] [--creature C.json]\n"
            "                           [--report] [--render] [--quiet]\n\n"
            "Joints read in N calibrated cameras (det.npz, SPEC 4.2.1) to 3D joints: per joint and\n"
            "frame a confidence-weighted linear triangulation of the undistorted detections, the\n"
            "camera subset that agrees within --threshold px (RANSAC over camera pairs, then the\n"
            "worst camera dropped while it is over; --no-ransac uses every camera), and with\n"
            "--refine a whole-clip refinement (robust reprojection + smoothness + constant length\n"
            "of the rig's bones or the --edges pairs). A two-view det.npz (SPEC 4.2) needs no\n"
            "--cameras: its views are the orthographic cameras of SPEC 3 (--creature gives the layout).\n\n"
            "Writes DIR/joints.npz (SPEC 4.2.3), DIR/joints.trc (OpenSim, Y up, metres),\n"
            "DIR/triangulation.npz (reproj_px [T,J], cameras_used [T,J], used [C,T,J]) and\n"
            "DIR/summary.json (mean / median / p95 reprojection error, per camera and per joint).\n"
            "--report adds DIR/report.html (summary.json, the reprojection per frame and camera, a 3D\n"
            "viewer of the points joined by the --rig's bones or --edges; see `anymove report`),\n"
            "--render DIR/render_cameras.png (the middle frame's detections with the points\n"
            "reprojected, a grid of the cameras).\n\n"
            "  --cameras CALIB  anipose calibration.toml or Pose2Sim Calib*.toml\n"
            "  --scale S        calibration units in metres (0.001 for mm); default 1\n"
            "  --threshold PX   reprojection threshold of RANSAC and the camera drop; default 15\n"
            "  --min-conf C     detections below this confidence are ignored; default 0.1\n"
            "The body size of the result is noted, with a warning when it is implausible in metres\n"
            "(a calibration in mm read without --scale 0.001).\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --cameras 4 -o out/wolf_exam4\n"
            "  anymove triangulate out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml -o out/wolf_tri4\n"
            "  anymove triangulate out/wolf_exam4/det.npz --cameras out/wolf_exam4/calibration.toml --refine \\\n"
            "      --rig examples/creatures/wolf/rig.json -o out/wolf_tri4r\n");
}

/* "a-b,c-d": joint names joined by '-' (a name holding '-' can be given through --rig). */
static int ami_parse_edges(const char *spec, const am_mdet *d, int32_t **edges, size_t *count)
{
    size_t cap = 1;
    for (const char *s = spec; *s; s++) cap += *s == ',';
    *edges = am_alloc_array(cap * 2, sizeof **edges);
    if (!*edges) return 1;
    char buf[512];
    const char *s = spec;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n >= sizeof buf) return am_cli_usage("triangulate", "--edges entry too long");
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *dash = strchr(buf, '-');
        if (!dash) return am_cli_usage("triangulate", "--edges wants A-B pairs, got '%s'", buf);
        *dash = '\0';
        int a = am_mdet_find_joint(d, buf), b = am_mdet_find_joint(d, dash + 1);
        if (a < 0 || b < 0) return am_cli_usage("triangulate", "--edges: '%s' is not a joint of the det", a < 0 ? buf : dash + 1);
        (*edges)[2 * *count] = a;
        (*edges)[2 * *count + 1] = b;
        (*count)++;
        s += n + (e ? 1 : 0);
    }
    return 0;
}

int am_cmd_triangulate(int argc, char **argv)
{
    const char *det_path = NULL, *cal_path = NULL, *dir = NULL, *rig_path = NULL, *edge_spec = NULL, *cr_path = NULL, *v;
    am_triangulate_opts o = {0};
    am_calib_read_opts ro = {0};
    am_cli_pictures pic = {0};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_tri_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--cameras"))) {
            cal_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            dir = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("triangulate", v, &ro.scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--threshold"))) {
            if (!am_cli_double("triangulate", "--threshold", v, &o.ransac_px)) return 2;
            if (!(o.ransac_px > 0)) return am_cli_usage("triangulate", "--threshold must be positive");
        } else if ((v = am_cli_value(argc, argv, &i, "--min-conf"))) {
            if (!am_cli_double("triangulate", "--min-conf", v, &o.min_conf)) return 2;
            if (o.min_conf == 0) o.min_conf = -1; /* 0 asks for "every detection" */
        } else if (am_cli_flag(argv[i], "--report")) {
            pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            pic.render = true;
        } else if (am_cli_flag(argv[i], "--no-ransac")) {
            o.flags |= AM_TRI_NO_RANSAC;
        } else if (am_cli_flag(argv[i], "--refine")) {
            o.flags |= AM_TRI_REFINE;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--edges"))) {
            edge_spec = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("triangulate", "unknown option '%s'", argv[i]);
        } else if (!det_path) {
            det_path = argv[i];
        } else {
            return am_cli_usage("triangulate", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!det_path) return am_cli_usage("triangulate", "missing DET.npz");
    if (!dir) return am_cli_usage("triangulate", "missing -o DIR");
    if (rig_path && edge_spec) return am_cli_usage("triangulate", "give --rig or --edges, not both");
    if (cal_path && cr_path) return am_cli_usage("triangulate", "--creature gives the two-view layout; with --cameras it has no use");
    if (ro.scale && !cal_path) return am_cli_usage("triangulate", "--scale is the calibration's unit: it needs --cameras");
    if (!am_cli_out_dir("triangulate", dir, "joints.npz, joints.trc, triangulation.npz, summary.json")) return 2;
    const char *names[8] = {"joints.npz", "joints.trc", "triangulation.npz", "summary.json"};
    size_t name_count = 4;
    pic.points_only = true; /* its pictures: the points (set below), no rig */
    am_cli_picture_names(&pic, names, &name_count);
    am_outset *set = NULL;
    int rc = am_cli_outputs("triangulate", dir, names, name_count, &set);
    if (rc) return rc;
    am_error err = {0};
    am_mdet *det = NULL;
    am_calib *cal = NULL;
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_triangulation *tri = NULL;
    int32_t *edges = NULL;
    size_t ne = 0;
    if (am_mdet_load(det_path, &det, &err) != AM_OK) goto fail;
    if (cal_path) {
        if (am_calib_load(cal_path, &ro, &cal, &err) != AM_OK) goto fail;
    } else if (det->two_view) {
        if (cr_path && am_creature_load(cr_path, &cr, &err) != AM_OK) goto fail;
        if (am_cameras_from_layout(cr ? &cr->layout : NULL, &cal, &err) != AM_OK) goto fail;
    } else {
        am_outset_abort(set);
        set = NULL;
        rc = am_cli_usage("triangulate", "%s holds %zu cameras: give their calibration with --cameras", det_path,
                          det->camera_count);
        goto done;
    }
    if (rig_path) {
        if (am_rig_load(rig_path, &rig, &err) != AM_OK) goto fail;
        edges = am_alloc_array(rig->bone_count * 2 + 2, sizeof *edges);
        if (!edges) {
            AM_FAIL(&err, AM_E_NOMEM, "edges");
            goto fail;
        }
        for (size_t b = 0; b < rig->bone_count; b++) {
            int a = am_mdet_find_joint(det, rig->joint_names[rig->head_joint[b]]);
            int c = am_mdet_find_joint(det, rig->joint_names[rig->tail_joint[b]]);
            if (a >= 0 && c >= 0 && a != c) {
                edges[2 * ne] = a;
                edges[2 * ne + 1] = c;
                ne++;
            }
        }
        am_cli_log("triangulate: %zu bones of %s join joints of the det", ne, rig_path);
    } else if (edge_spec && (rc = ami_parse_edges(edge_spec, det, &edges, &ne)) != 0) {
        am_outset_abort(set);
        set = NULL;
        goto done;
    }
    o.edges = edges;
    o.edge_count = ne;
    o.ctx = am_cli_context();
    am_calib_check(cal); /* its warnings join the command's */
    if (am_triangulate(det, cal, &o, &tri, &err) != AM_OK) {
        am_error_set_file(&err, cal_path ? cal_path : det_path);
        goto fail;
    }
    am_cli_print_warnings("triangulate", &tri->warnings);
    am_cli_body_size("triangulate", det_path, am_cli_joints_size(tri->joints));
    if (am_joints_write(am_outset_path(set, "joints.npz"), tri->joints, &err) != AM_OK ||
        am_trc_write(am_outset_path(set, "joints.trc"), tri->joints, &err) != AM_OK ||
        am_triangulation_write(am_outset_path(set, "triangulation.npz"), tri, det, &err) != AM_OK ||
        am_triangulation_summary_write(am_outset_path(set, "summary.json"), tri, det, &err) != AM_OK)
        goto fail;
    if (pic.report || pic.render) {
        /* the page shows summary.json as written */
        char *text = NULL;
        size_t len = 0;
        am_status ps = pic.report ? am_file_read(am_outset_path(set, "summary.json"), 0, &text, &len, &err) : AM_OK;
        pic.title = det_path, pic.points = tri->joints, pic.edges = edges, pic.edge_count = ne;
        pic.mdet = det, pic.cameras = cal, pic.gate_text = text;
        if (ps == AM_OK) ps = am_cli_write_pictures("triangulate", &pic, set, &err);
        am_free(text);
        if (ps != AM_OK) goto fail;
    }
    rc = am_cli_commit("triangulate", set);
    set = NULL;
    if (rc == 0)
        am_cli_log("triangulate: %zu cameras, %zu frames, %zu joints: %zu of %zu points (%.1f %%), reprojection mean "
                   "%.2f px, median %.2f px, p95 %.2f px, %.3f s -> %s/",
                   det->camera_count, det->frame_count, det->joint_count, tri->triangulated, tri->points,
                   100.0 * (double)tri->triangulated / (double)tri->points, tri->mean_px, tri->median_px, tri->p95_px,
                   tri->seconds, dir);
    goto done;
fail:
    rc = am_cli_fail_out("triangulate", set, &err);
done:
    am_free(edges);
    am_triangulation_free(tri);
    am_rig_free(rig);
    am_creature_free(cr);
    am_calib_free(cal);
    am_mdet_free(det);
    return rc;
}
