/* `anymove exam --cameras N|CALIB.toml` (exam_cameras.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/multiview.h"
#include "exam_cameras.h"

const char *const ami_exam_outputs[AMI_EXAM_OUTPUT_COUNT] = {"det.npz", "calibration.toml", "truth.npz"};

void ami_exam_cameras_help(FILE *out)
{
    fprintf(out,
            "N cameras (SPEC 4.2.1): --cameras N places N perspective cameras (1280x720, 60 degrees, mild\n"
            "barrel distortion) in a ring around the motion; --cameras CALIB.toml uses a calibration\n"
            "(--scale S: its length unit in metres, 0.001 for mm). The noise, dropout, swap and outlier\n"
            "options then apply to each camera (outliers are 20-80 px off); --lag is replaced by:\n"
            "  --offsets MAX    per-camera frame offsets drawn in [-MAX, MAX], camera 0 keeping the\n"
            "                   truth's clock (written as time_offset)\n"
            "  --hide-offsets   leave time_offset out of det.npz (for a solver that finds the sync)\n"
            "  --occlusion      hide joints behind the body (bone capsules)\n"
            "It writes DIR/det.npz, DIR/calibration.toml and DIR/truth.npz.\n\n");
}

bool ami_exam_cameras_arg(int argc, char **argv, int *i, ami_exam_cameras_args *a)
{
    const char *v;
    long l;
    if ((v = am_cli_value(argc, argv, i, "--cameras"))) {
        a->spec = v;
    } else if ((v = am_cli_value(argc, argv, i, "--scale"))) {
        a->bad = !am_cli_scale("exam", v, &a->scale);
    } else if ((v = am_cli_value(argc, argv, i, "--offsets"))) {
        if (!am_cli_long("exam", "--offsets", v, &l)) {
            a->bad = true;
        } else if (l < 0 || l > 100000) {
            am_cli_usage("exam", "--offsets must lie in [0, 100000]");
            a->bad = true;
        }
        a->max_offset = (int)l;
    } else if (am_cli_flag(argv[*i], "--occlusion")) {
        a->occlusion = true;
    } else if (am_cli_flag(argv[*i], "--hide-offsets")) {
        a->hide_offsets = true;
    } else {
        return false;
    }
    return true;
}

/* The N of --cameras N (SIZE_MAX when out of range), or 0 for a calibration file. */
static size_t ami_camera_count(const char *spec)
{
    char *end = NULL;
    long n = strtol(spec, &end, 10);
    if (end == spec || *end != '\0') return 0;
    return n < 1 ? SIZE_MAX : (size_t)n;
}

bool ami_exam_cameras_check(const ami_exam_cameras_args *a, bool lag_given)
{
    if (a->spec) {
        if (lag_given) {
            am_cli_usage("exam", "--lag is the two-view exam's; with --cameras give --offsets MAX");
            return false;
        }
        size_t n = ami_camera_count(a->spec);
        if (n && (n < 2 || n > 64)) {
            am_cli_usage("exam", "--cameras N needs 2 to 64 cameras");
            return false;
        }
        return true;
    }
    const char *lone = a->scale ? "--scale" : a->max_offset ? "--offsets" : a->occlusion ? "--occlusion"
                                                          : a->hide_offsets            ? "--hide-offsets"
                                                                                       : NULL;
    if (!lone) return true;
    am_cli_usage("exam", "%s needs --cameras N|CALIB.toml", lone);
    return false;
}

int ami_exam_cameras_run(const ami_exam_cameras_args *a, const char *rig_path, const char *cr_path, const char *dir,
                         const am_exam_opts *o, am_outset *set)
{
    am_mexam_opts mo = {.motion = *o, .noise_px = o->noise_px, .dropout = o->dropout, .outliers = o->outliers,
                        .swap = o->swap, .max_offset = a->max_offset, .occlusion = a->occlusion, .ctx = o->ctx};
    mo.cameras = ami_camera_count(a->spec);
    bool count = mo.cameras != 0;
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_calib *given = NULL;
    am_mexam *ex = NULL;
    int rc = 0;
    am_calib_read_opts ro = {.scale = a->scale};
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && !count) s = am_calib_load(a->spec, &ro, &given, &err);
    if (s == AM_OK && (s = am_mexam_generate(rig, cr, given, &mo, &ex, &err)) != AM_OK)
        am_error_set_file(&err, given ? a->spec : cr ? cr_path : rig_path);
    if (s == AM_OK) {
        am_cli_print_warnings("exam", &ex->warnings);
        if (a->hide_offsets) {
            am_free(ex->det->time_offset);
            ex->det->time_offset = NULL;
        }
        s = am_mdet_write(am_outset_path(set, "det.npz"), ex->det, &err);
    }
    if (s == AM_OK) s = am_calib_write(ex->cameras, am_outset_path(set, "calibration.toml"), &err);
    if (s == AM_OK) s = am_exam_write_truth(ex->exam, am_outset_path(set, "truth.npz"), &err);
    if (s != AM_OK) {
        rc = am_cli_fail_out("exam", set, &err);
    } else if ((rc = am_cli_commit("exam", set)) == 0) {
        am_cli_log("exam: %zu cameras, %zu frames, %zu joints, body size %.3f m, %zu detections hidden by the body -> "
                   "%s/{det.npz,calibration.toml,truth.npz}",
                   ex->det->camera_count, ex->det->frame_count, ex->det->joint_count, ex->exam->body_size,
                   ex->occluded, dir);
    }
    am_mexam_free(ex);
    am_calib_free(given);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
