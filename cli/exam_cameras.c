#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/multiview.h"
#include "exam_cameras.h"

void ami_exam_cameras_help(FILE *out)
{
    fprintf(out,
            "N cameras (SPEC 4.2.1): --cameras N places N perspective cameras (1280x720, 60 degrees, mild\n"
            "barrel distortion) in a ring around the motion; --cameras CALIB.toml uses a calibration\n"
            "(with --scale). The noise, dropout, swap and outlier options then apply to each camera\n"
            "(outliers are 20-80 px off); --lag is replaced by:\n"
            "  --offsets MAX    per-camera frame offsets drawn in [-MAX, MAX] (written as time_offset)\n"
            "  --hide-offsets   leave time_offset out of det.npz (for a solver that finds the sync)\n"
            "  --occlusion      hide joints behind the body (bone capsules)\n"
            "It writes DIR/det.npz, DIR/calibration.toml and DIR/truth.npz.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/wolf/rig.json -o /tmp/exam2\n"
            "  anymove exam --rig examples/wolf/rig.json --cameras 4 --outliers 0.02 --occlusion -o /tmp/exam4\n");
}

bool ami_exam_cameras_arg(int argc, char **argv, int *i, ami_exam_cameras_args *a)
{
    const char *v;
    long l;
    if ((v = am_cli_value(argc, argv, i, "--cameras"))) {
        a->spec = v;
    } else if ((v = am_cli_value(argc, argv, i, "--scale"))) {
        if (!am_cli_double("exam", "--scale", v, &a->scale) || !(a->scale > 0)) {
            if (a->scale <= 0) am_cli_usage("exam", "--scale must be positive");
            a->bad = true;
        }
    } else if ((v = am_cli_value(argc, argv, i, "--offsets"))) {
        if (!am_cli_long("exam", "--offsets", v, &l) || l < 0 || l > 100000) {
            if (l < 0) am_cli_usage("exam", "--offsets must be >= 0");
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

int ami_exam_cameras_run(const ami_exam_cameras_args *a, const char *rig_path, const char *cr_path, const char *dir,
                         const am_exam_opts *o)
{
    am_mexam_opts mo = {.motion = *o, .noise_px = o->noise_px, .dropout = o->dropout, .outliers = o->outliers,
                        .swap = o->swap, .max_offset = a->max_offset, .occlusion = a->occlusion};
    char *end = NULL;
    long n = strtol(a->spec, &end, 10);
    bool count = end != a->spec && *end == '\0';
    if (count && (n < 2 || n > 64)) return am_cli_usage("exam", "--cameras N needs 2 to 64 cameras");
    if (count) mo.cameras = (size_t)n;
    am_error err = {0};
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_calib *given = NULL;
    am_mexam *ex = NULL;
    int rc = 0;
    char path[4096];
    am_calib_read_opts ro = {.scale = a->scale};
    if (am_cli_mkdir_p(dir, &err) != AM_OK || am_rig_load(rig_path, &rig, &err) != AM_OK ||
        (cr_path && am_creature_load(cr_path, &cr, &err) != AM_OK) ||
        (!count && am_calib_load(a->spec, &ro, &given, &err) != AM_OK) ||
        am_mexam_generate(rig, cr, given, &mo, &ex, &err) != AM_OK)
        goto fail;
    if (a->hide_offsets) {
        am_free(ex->det->time_offset);
        ex->det->time_offset = NULL;
    }
    snprintf(path, sizeof path, "%s/det.npz", dir);
    if (am_mdet_write(path, ex->det, &err) != AM_OK) goto fail;
    snprintf(path, sizeof path, "%s/calibration.toml", dir);
    if (am_calib_write(ex->cameras, path, &err) != AM_OK) goto fail;
    snprintf(path, sizeof path, "%s/truth.npz", dir);
    if (am_exam_write_truth(ex->exam, path, &err) != AM_OK) goto fail;
    am_cli_log("exam: %zu cameras, %zu frames, %zu joints, body size %.3f m, %zu detections hidden by the body -> "
               "%s/{det.npz,calibration.toml,truth.npz}",
               ex->det->camera_count, ex->det->frame_count, ex->det->joint_count, ex->exam->body_size, ex->occluded, dir);
    goto done;
fail:
    rc = am_cli_fail("exam", &err);
done:
    am_mexam_free(ex);
    am_calib_free(given);
    am_creature_free(cr);
    am_rig_free(rig);
    return rc;
}
