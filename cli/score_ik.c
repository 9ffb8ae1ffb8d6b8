/* `anymove score ik TRUE_MOTION PRED_MOTION`: pose2rot's geodesic error and the joint error. */
#include <math.h>
#include <string.h>

#include "anymove/ik.h"
#include "anymove/metrics.h"
#include "cli.h"
#include "score.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "report.h"

static void ami_score_ik_help(FILE *out)
{
    fprintf(out,
            "usage: anymove score ik TRUE_MOTION PRED_MOTION [--rig RIG.json] [--frames N] [--quiet]\n\n"
            "Prints one JSON object on stdout:\n"
            "  pose2rot: deg(arccos(clamp((tr(R_pred^T R_true) - 1)/2, -1, 1))) per bone and\n"
            "            frame on parent-local rotations, every bone with the root (root_quat),\n"
            "            the first N frames (default 48), helper bones left out;\n"
            "  all_frames, no_leaves, no_leaves_all_frames: the same over the whole clip and/or\n"
            "            without bones that have no child bone; per_bone_deg: whole-clip means;\n"
            "  position: per-joint error in cm (mean, median, p95, max) and in %% of body size\n"
            "            (SPEC 5) over the non-helper joints, from each file's joints (FK if absent).\n"
            "The rig defaults to rig.json next to TRUE_MOTION. Bones are matched by name.\n\n"
            "examples:\n"
            "  anymove convert ../shared/data/gltf/khronos_fox/Fox.glb --clip Run --scale 0.01 -o out/fox_run\n"
            "  anymove ik out/fox_run/motion.json --rig out/fox_run/rig.json -o out/fox_run_ik\n"
            "  anymove score ik out/fox_run/motion.json out/fox_run_ik/motion.json\n");
}

static void ami_stats_json(ami_jw *w, const char *key, const am_stats *s, size_t frames)
{
    ami_jw_record(w, key);
    ami_jw_int(w, "frames", (int64_t)frames);
    ami_jw_int(w, "count", (int64_t)s->count);
    ami_jw_number(w, "mean_deg", s->mean);
    ami_jw_number(w, "median_deg", s->median);
    ami_jw_number(w, "p95_deg", s->p95);
    ami_jw_number(w, "max_deg", s->max);
    ami_jw_close(w);
}

int am_score_ik_main(int argc, char **argv)
{
    const char *true_path = NULL, *pred_path = NULL, *rig_path = NULL, *v;
    long frames = 48;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_score_ik_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--frames"))) {
            if (!am_cli_long("score ik", "--frames", v, &frames)) return 2;
            if (frames < 1) return am_cli_usage("score ik", "--frames must be at least 1");
        } else if (argv[i][0] == '-') {
            return am_cli_usage("score ik", "unknown option '%s'", argv[i]);
        } else if (!true_path) {
            true_path = argv[i];
        } else if (!pred_path) {
            pred_path = argv[i];
        } else {
            return am_cli_usage("score ik", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!true_path || !pred_path) return am_cli_usage("score ik", "need TRUE_MOTION and PRED_MOTION");
    char sibling[4096];
    if (!rig_path) {
        const char *slash = strrchr(true_path, '/');
        int n = slash ? (int)(slash - true_path) + 1 : 0;
        snprintf(sibling, sizeof sibling, "%.*srig.json", n, true_path);
        rig_path = sibling;
    }
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *tr = NULL, *pr = NULL;
    uint8_t *mask = NULL;
    double *per = NULL;
    am_buf o = {0};
    int rc = 0;
    if (am_rig_load(rig_path, &rig, &err) != AM_OK || am_motion_load(true_path, rig, &tr, &err) != AM_OK ||
        am_motion_load(pred_path, rig, &pr, &err) != AM_OK)
        goto fail;
    if ((!tr->joints && am_motion_compute_joints(tr, rig, &err) != AM_OK) ||
        (!pr->joints && am_motion_compute_joints(pr, rig, &err) != AM_OK))
        goto fail;
    size_t B = rig->bone_count, J = rig->joint_count;
    size_t T = tr->frame_count < pr->frame_count ? tr->frame_count : pr->frame_count;
    size_t T48 = (size_t)frames < T ? (size_t)frames : T;
    mask = am_alloc(J);
    per = am_alloc_array(T * B, sizeof *per);
    if (!mask || !per) {
        AM_FAIL(&err, AM_E_NOMEM, "score");
        goto fail;
    }
    am_ik_default_mask(rig, mask);
    am_stats s48, sall, nl48, nlall, pos;
    am_rot_error_opts o48 = {.frame_count = T48}, oall = {0};
    am_rot_error_opts onl48 = {.flags = AM_ROTERR_SKIP_LEAVES, .frame_count = T48};
    am_rot_error_opts onlall = {.flags = AM_ROTERR_SKIP_LEAVES};
    if (am_motion_rotation_error(rig, pr, tr, &o48, NULL, &s48, &err) != AM_OK ||
        am_motion_rotation_error(rig, pr, tr, &onl48, NULL, &nl48, &err) != AM_OK ||
        am_motion_rotation_error(rig, pr, tr, &onlall, NULL, &nlall, &err) != AM_OK ||
        am_motion_rotation_error(rig, pr, tr, &oall, per, &sall, &err) != AM_OK ||
        am_joint_position_error(pr->joints, tr->joints, T, J, mask, NULL, &pos, &err) != AM_OK)
        goto fail;
    double size = am_body_size(tr->joints, J, mask);
    ami_jw w;
    ami_jw_begin(&w, &o, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    char warning[160];
    if (tr->frame_count != pr->frame_count) {
        snprintf(warning, sizeof warning, "frame counts differ (%zu true, %zu predicted): scored %zu",
                 tr->frame_count, pr->frame_count, T);
        ami_jw_string(&w, "warning", warning);
    }
    ami_stats_json(&w, "pose2rot", &s48, T48);
    ami_stats_json(&w, "all_frames", &sall, T);
    ami_stats_json(&w, "no_leaves", &nl48, T48);
    ami_stats_json(&w, "no_leaves_all_frames", &nlall, T);
    ami_jw_record(&w, "position");
    ami_jw_int(&w, "frames", (int64_t)T);
    ami_jw_int(&w, "count", (int64_t)pos.count);
    am_cli_jw_position_error(&w, &pos, size);
    ami_jw_close(&w);
    ami_jw_record(&w, "per_bone_deg");
    for (size_t b = 0; b < B; b++) {
        double sum = 0;
        size_t n = 0;
        for (size_t t = 0; t < T; t++)
            if (!isnan(per[t * B + b])) sum += per[t * B + b], n++;
        if (n) ami_jw_number(&w, rig->bone_names[b], sum / (double)n);
    }
    ami_jw_close(&w);
    ami_jw_close(&w);
    if (ami_jw_finish(&w, &err) != AM_OK) goto fail;
    fwrite(o.data, 1, o.len, stdout);
    goto done;
fail:
    rc = am_cli_fail("score ik", &err);
done:
    am_buf_free(&o);
    am_free(per);
    am_free(mask);
    am_motion_free(pr);
    am_motion_free(tr);
    am_rig_free(rig);
    return rc;
}
