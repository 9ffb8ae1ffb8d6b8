/* What a fit tells its user: the motion.json keys (through the one JSON writer) and report.txt. */
#include <math.h>

#include "core/internal.h"
#include "fit_internal.h"
#include "fit_json.h"
#include "io/json_internal.h"

void ami_fit_json_plants(ami_jw *w, const ami_plants_json *p)
{
    const size_t T = p->frame_count, C = p->contact_count;
    ami_jw_object(w, "contacts");
    for (size_t c = 0; c < C; c++) {
        ami_jw_array(w, p->contact_names[c]);
        for (size_t t = 0; t < T;) {
            if (!p->contact[t * C + c]) {
                t++;
                continue;
            }
            size_t e = t;
            while (e + 1 < T && p->contact[(e + 1) * C + c]) e++;
            ami_jw_row(w, NULL);
            ami_jw_int(w, NULL, (int64_t)t);
            ami_jw_int(w, NULL, (int64_t)e);
            ami_jw_close(w);
            t = e + 1;
        }
        ami_jw_close(w);
    }
    ami_jw_close(w);
    ami_jw_row(w, "ground_velocity");
    for (int k = 0; k < 3; k++) ami_jw_number_or_null(w, NULL, p->ground_vel[k]);
    ami_jw_close(w);
    ami_jw_record(w, "foot_slide_mm");
    ami_jw_number_or_null(w, "mean", p->slide_mean_mm);
    ami_jw_number_or_null(w, "max", p->slide_max_mm);
    ami_jw_number_or_null(w, "before_lock_mean", p->fit_slide_mean_mm);
    ami_jw_number_or_null(w, "before_lock_max", p->fit_slide_max_mm);
    ami_jw_int(w, "plants", (int64_t)p->plant_count);
    ami_jw_close(w);
}

am_status ami_fit_extra_json(const am_fit_result *r, const double *offsets, bool offsets_found, char **out,
                             am_error *err)
{
    const size_t T = r->motion->frame_count;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    if (r->camera_count) {
        ami_jw_record(&w, "reproj_px");
        for (size_t c = 0; c < r->camera_count; c++) ami_jw_number_or_null(&w, r->camera_names[c], r->reproj_px[c]);
        ami_jw_close(&w);
        ami_jw_record(&w, "reproj_p95_px");
        for (size_t c = 0; c < r->camera_count; c++) ami_jw_number_or_null(&w, r->camera_names[c], r->reproj_p95_px[c]);
        ami_jw_close(&w);
    }
    if (offsets) {
        ami_jw_record(&w, "time_offsets");
        for (size_t c = 0; c < r->camera_count; c++) ami_jw_number(&w, r->camera_names[c], offsets[c]);
        ami_jw_close(&w);
        ami_jw_bool(&w, "time_offsets_found", offsets_found);
    }
    if (isfinite(r->points_mean_m)) {
        ami_jw_record(&w, "points_error_m");
        ami_jw_number(&w, "mean", r->points_mean_m);
        ami_jw_number(&w, "p95", r->points_p95_m);
        ami_jw_number(&w, "noise", r->point_noise);
        ami_jw_bool(&w, "noise_estimated", r->point_noise_estimated);
        ami_jw_close(&w);
    }
    ami_jw_int(&w, "swaps_repaired", (int64_t)r->swaps_repaired);
    ami_fit_json_plants(&w, &(ami_plants_json){.frame_count = T, .contact_count = r->contact_count,
                                               .plant_count = r->plant_count, .contact_names = r->contact_names,
                                               .contact = r->contact, .ground_vel = r->ground_vel,
                                               .slide_mean_mm = r->slide_mean_mm, .slide_max_mm = r->slide_max_mm,
                                               .fit_slide_mean_mm = r->fit_slide_mean_mm,
                                               .fit_slide_max_mm = r->fit_slide_max_mm});
    ami_jw_record(&w, "fit");
    ami_jw_int(&w, "windows", (int64_t)r->windows);
    /* No timing here: the motion is a result, and a rerun (or a batch) must give the same bytes;
     * the time is in the reports. */
    ami_jw_int(&w, "lm_iterations", (int64_t)r->lm_iterations);
    if (r->smooth_points > 0) {
        ami_jw_number(&w, "smooth", r->smooth_points);
        ami_jw_bool(&w, "smooth_auto", r->smooth_auto);
    }
    ami_jw_close(&w);
    ami_jw_close(&w);
    return ami_jw_take_string(&w, out, err);
}

void am_fit_report(const am_fit_result *r, am_buf *b)
{
    am_buf_printf(b, "anymove fit report\n\n");
    for (size_t c = 0; c < r->camera_count; c++) {
        double m = r->reproj_px[c];
        /* The capture skill's rule of thumb: single-digit pixels is a good fit. */
        am_buf_printf(b, "camera %s: reprojection mean %.2f px, p95 %.2f px: %s\n", r->camera_names[c], m,
                      r->reproj_p95_px[c], !isfinite(m) ? "n/a" : m <= 8.0 ? "good" : m <= 15.0 ? "look at it" : "bad: check the reading or the calibration");
    }
    if (isfinite(r->points_mean_m))
        am_buf_printf(b, "3D joints: mean distance %.2f cm, p95 %.2f cm (noise %s %.2f cm per axis)\n", 100 * r->points_mean_m,
                      100 * r->points_p95_m, r->point_noise_estimated ? "estimated from bone lengths:" : "given:",
                      100 * r->point_noise);
    if (r->smooth_points > 0)
        am_buf_printf(b, "smoothness: x%.3g %s\n", r->smooth_points,
                      r->smooth_auto ? "(chosen by cross-validation over the observed joints)" : "(fixed)");
    am_buf_printf(b, "left/right swaps repaired: %zu\n", r->swaps_repaired);
    am_buf_printf(b, "contacts: %zu plants found, ground velocity (%.3f, %.3f) m/s\n", r->plant_count, r->ground_vel[0],
                  r->ground_vel[1]);
    if (r->plant_count) {
        am_buf_printf(b, "foot slide per plant found, fit before the foot lock: mean %.2f mm, max %.2f mm\n",
                      r->fit_slide_mean_mm, r->fit_slide_max_mm);
        if (r->foot_locked) {
            am_buf_printf(b, "foot lock moved each contact over its plant frames:");
            for (size_t k = 0; k < r->contact_count; k++)
                am_buf_printf(b, "%s %s mean %.2f mm, max %.2f mm", k ? ";" : "", r->contact_names[k],
                              r->lock_moved_mean_mm[k], r->lock_moved_max_mm[k]);
            am_buf_printf(b, "\nfoot slide per plant found, after the lock: mean %.2f mm, max %.2f mm (pinned)\n",
                          r->slide_mean_mm, r->slide_max_mm);
        } else {
            am_buf_printf(b, "foot lock: off\n");
        }
    }
    am_buf_printf(b, "fit: %zu window(s), %u LM iterations, %.3f s\n", r->windows, r->lm_iterations, r->seconds);
}
