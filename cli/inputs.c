/* Inputs of the CLI convention (README "Clips" and "Units"): --clip, --scale, body sizes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/metrics.h"
#include "cli.h"
#include "core/internal.h"

am_status am_cli_pick_clip(const am_gltf *doc, const char *file, const char *clip, int *anim, am_error *err)
{
    *anim = doc->animation_count ? 0 : -1;
    if (clip) {
        am_status s = am_gltf_find_clip(doc, clip, anim, err);
        am_error_set_file(err, file);
        AMI_TRY(s);
    }
    if (*anim >= 0) {
        const am_gltf_animation *an = &doc->animations[*anim];
        am_cli_log("%s: clip %d '%s' (%.3f s)", file, *anim, an->name ? an->name : "", an->t_max - an->t_min);
    } else {
        am_cli_log("%s: no animation: the rest pose only", file);
    }
    return AM_OK;
}

int am_cli_list_clips(const char *cmd, const char *file)
{
    am_error err = {0};
    am_gltf *doc = NULL;
    if (am_gltf_load(file, NULL, &doc, &err) != AM_OK) return am_cli_fail(cmd, &err);
    am_cli_print_warnings(cmd, &doc->warnings);
    for (size_t a = 0; a < doc->animation_count; a++)
        printf("%zu\t%s\t%.3f s\n", a, doc->animations[a].name ? doc->animations[a].name : "",
               doc->animations[a].t_max - doc->animations[a].t_min);
    am_gltf_free(doc);
    return 0;
}

bool am_cli_scale(const char *cmd, const char *value, double *scale)
{
    if (!am_cli_double(cmd, "--scale", value, scale)) return false;
    if (*scale > 0 && *scale < 1e6) return true;
    am_cli_usage(cmd, "--scale is metres per file unit, a positive number (0.01 for centimetres), got '%s'", value);
    return false;
}

double am_cli_rig_size(const am_rig *rig) { return am_body_size(rig->joint_rest, rig->joint_count, NULL); }

double am_cli_joints_size(const am_joints *jt)
{
    size_t best = 0, best_n = 0, J = jt->joint_count;
    for (size_t t = 0; t < jt->frame_count && best_n < J; t++) {
        size_t n = 0;
        for (size_t j = 0; j < J; j++) n += !isnan(jt->joints[(t * J + j) * 3]);
        if (n > best_n) {
            best = t;
            best_n = n;
        }
    }
    return am_body_size(jt->joints + best * J * 3, J, NULL);
}
