#include <string.h>
#include <strings.h>

#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"

/* A rig from rig.json, or from the skeleton of a skinned .glb/.gltf (users bring their rigs). */
static am_status ami_fk_load_rig(const char *path, am_rig **rig, am_error *err)
{
    size_t n = strlen(path);
    bool gltf = (n >= 4 && strcasecmp(path + n - 4, ".glb") == 0) ||
                (n >= 5 && strcasecmp(path + n - 5, ".gltf") == 0);
    if (!gltf) return am_rig_load(path, rig, err);
    am_gltf *doc = NULL;
    am_gltf_opts go = {.ctx = am_cli_context()};
    am_status s = am_gltf_load(path, &go, &doc, err);
    if (s == AM_OK) {
        am_cli_print_warnings("fk", &doc->warnings);
        s = am_rig_from_gltf(doc, -1, rig, err);
        am_error_set_file(err, path);
    }
    am_gltf_free(doc);
    return s;
}

static void ami_fk_help(FILE *out)
{
    fprintf(out,
            "usage: anymove fk RIG [--motion motion.json] [--scale S] [--quiet]\n\n"
            "Prints {\"joint_names\": [...], \"joints\": [T][J][3]} on stdout: the rig's joints\n"
            "(SPEC 2.3 keypoints, metres, Z up) for every frame of the motion, or the rest pose\n"
            "as one frame without --motion. RIG is a rig.json or a skinned .glb/.gltf (its skeleton).\n"
            "--scale S: metres per unit of RIG (0.01 for centimetres); the body size is noted on\n"
            "stderr and an implausible one is warned about.\n\n"
            "examples:\n"
            "  anymove fk examples/walker/rig.json\n"
            "  anymove fk examples/walker/rig.json --motion examples/walker/walk.json\n"
            "  anymove fk ../shared/data/gltf/khronos_fox/Fox.glb --scale 0.01\n");
}

int am_cmd_fk(int argc, char **argv)
{
    const char *rig_path = NULL, *motion_path = NULL, *v;
    double scale = 1;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_fk_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            motion_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("fk", v, &scale)) return 2;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("fk", "unknown option '%s'", argv[i]);
        } else if (!rig_path) {
            rig_path = argv[i];
        } else {
            return am_cli_usage("fk", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!rig_path) return am_cli_usage("fk", "missing RIG");

    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    double *joints = NULL;
    int rc = 0;
    if (ami_fk_load_rig(rig_path, &rig, &err) != AM_OK ||
        (motion_path && am_motion_load(motion_path, rig, &mo, &err) != AM_OK)) {
        rc = am_cli_fail("fk", &err);
        goto done;
    }
    if (scale != 1.0) {
        am_rig_scale(rig, scale);
        if (mo) am_motion_scale(mo, scale);
    }
    am_cli_body_size("fk", rig_path, am_cli_rig_size(rig));
    size_t frames = mo ? mo->frame_count : 1, nj = rig->joint_count;
    joints = am_alloc_array(frames * nj * 3, sizeof *joints);
    double *pose = am_alloc_array(rig->bone_count * 16, sizeof *pose);
    if (!joints || !pose) {
        am_free(pose);
        AM_FAIL(&err, AM_E_NOMEM, "joints for %zu frames", frames);
        rc = am_cli_fail("fk", &err);
        goto done;
    }
    if (mo) {
        am_rig_fk_clip(rig, mo, joints);
    } else {
        am_rig_rest_pose(rig, pose);
        am_rig_keypoints(rig, pose, joints);
    }
    am_free(pose);
    am_buf out = {0};
    ami_jw w;
    ami_jw_begin(&w, &out, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_strings(&w, "joint_names", (const char *const *)rig->joint_names, nj);
    size_t shape[3] = {frames, nj, 3};
    ami_jw_numbers(&w, "joints", joints, 3, shape);
    ami_jw_close(&w);
    if (ami_jw_finish(&w, &err) == AM_OK) fwrite(out.data, 1, out.len, stdout);
    else rc = am_cli_fail("fk", &err);
    am_buf_free(&out);
done:
    am_free(joints);
    am_motion_free(mo);
    am_rig_free(rig);
    return rc;
}
