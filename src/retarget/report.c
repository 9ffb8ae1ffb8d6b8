/* report.json of a retarget run, through the one JSON writer. */
#include <math.h>
#include <string.h>

#include "anymove/retarget.h"
#include "io/json_internal.h"

static const char *const ami_pose_words[AM_RETARGET_POSE_COUNT] = {"align", "delta"};
static const char *const ami_root_words[AM_RETARGET_ROOT_COUNT] = {"scale", "keep"};

void am_retarget_report_json(const am_retarget_report *rep, const am_retarget_map *map, const am_rig *source,
                             const am_rig *target, am_buf *out)
{
    ami_jw w;
    ami_jw_begin(&w, out, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "pose", (unsigned)rep->pose < AM_RETARGET_POSE_COUNT ? ami_pose_words[rep->pose] : "?");
    if (rep->pose == AM_RETARGET_POSE_ALIGN) ami_jw_number(&w, "align_min_deg", rep->align_min_deg);
    ami_jw_string(&w, "root", (unsigned)rep->root < AM_RETARGET_ROOT_COUNT ? ami_root_words[rep->root] : "?");
    ami_jw_string(&w, "ik", (rep->flags & AM_RETARGET_NO_IK) ? "none"
                            : (rep->flags & AM_RETARGET_IK_HANDS) ? "feet+hands" : "feet");
    ami_jw_record(&w, "map");
    ami_jw_int(&w, "source_bones", (int64_t)map->source_count);
    ami_jw_int(&w, "target_bones", (int64_t)map->target_count);
    for (int rule = 0; rule < AM_RETARGET_RULE_COUNT; rule++) {
        int64_t n = 0;
        for (size_t g = 0; g < map->target_count; g++) n += map->rule[g] == (am_retarget_rule)rule;
        ami_jw_int(&w, am_retarget_rule_name((am_retarget_rule)rule), n);
    }
    ami_jw_close(&w);
    ami_jw_record(&w, "root_motion");
    ami_jw_number(&w, "leg_source_m", rep->leg_source);
    ami_jw_number(&w, "leg_target_m", rep->leg_target);
    ami_jw_number(&w, "scale_horizontal", rep->scale_horizontal);
    ami_jw_number(&w, "scale_vertical", rep->scale_vertical);
    ami_jw_close(&w);
    double below = 0.0, ss = 0.0, ts = 0.0, smax = 0.0, tmax = 0.0;
    for (size_t c = 0; c < rep->contact_count; c++)
        if (rep->below_max[c] > below) below = rep->below_max[c];
    for (size_t i = 0; i < rep->plant_count; i++) {
        ss += rep->plants[i].source_slide;
        ts += rep->plants[i].target_slide;
        if (rep->plants[i].source_slide > smax) smax = rep->plants[i].source_slide;
        if (rep->plants[i].target_slide > tmax) tmax = rep->plants[i].target_slide;
    }
    double np = rep->plant_count ? (double)rep->plant_count : 1.0;
    ami_jw_record(&w, "foot_slide_mm");
    ami_jw_int(&w, "plants", (int64_t)rep->plant_count);
    ami_jw_number(&w, "source_mean", 1e3 * ss / np);
    ami_jw_number(&w, "source_max", 1e3 * smax);
    ami_jw_number(&w, "target_mean", 1e3 * ts / np);
    ami_jw_number(&w, "target_max", 1e3 * tmax);
    ami_jw_close(&w);
    ami_jw_number(&w, "feet_below_ground_max_mm", 1e3 * below);
    ami_jw_record(&w, "chain_direction_deg");
    ami_jw_number(&w, "mean", rep->chain_angle_mean_deg);
    ami_jw_number(&w, "max", rep->chain_angle_max_deg);
    ami_jw_close(&w);
    ami_jw_record(&w, "ik");
    ami_jw_int(&w, "moves", (int64_t)rep->ik_frames);
    ami_jw_number(&w, "residual_max_mm", 1e3 * rep->ik_residual_max);
    ami_jw_close(&w);
    ami_jw_numbers(&w, "ground_velocity_source", rep->ground_vel_source, 1, (size_t[1]){3});
    ami_jw_numbers(&w, "ground_velocity_target", rep->ground_vel_target, 1, (size_t[1]){3});
    ami_jw_array(&w, "contacts");
    for (size_t c = 0; c < rep->contact_count; c++) {
        ami_jw_record(&w, NULL);
        ami_jw_string(&w, "source", source->joint_names[rep->contact_source[c]]);
        ami_jw_string(&w, "target", target->joint_names[rep->contact_target[c]]);
        ami_jw_number(&w, "floor_m", rep->floor[c]);
        ami_jw_number(&w, "below_ground_max_mm", 1e3 * rep->below_max[c]);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_array(&w, "plants");
    for (size_t i = 0; i < rep->plant_count; i++) {
        const am_retarget_plant *p = &rep->plants[i];
        ami_jw_record(&w, NULL);
        ami_jw_string(&w, "contact", target->joint_names[rep->contact_target[p->contact]]);
        ami_jw_int(&w, "first", p->first);
        ami_jw_int(&w, "last", p->last);
        ami_jw_number(&w, "source_slide_mm", 1e3 * p->source_slide);
        ami_jw_number(&w, "target_slide_mm", 1e3 * p->target_slide);
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_record(&w, "seconds");
    ami_jw_number(&w, "transfer", rep->transfer_seconds);
    ami_jw_number(&w, "feet", rep->ik_seconds);
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_error err;
    if (ami_jw_finish(&w, &err) != AM_OK) out->failed = true;
}
