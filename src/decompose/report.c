/* report.json of a Track2Rig run (`anymove rig`): what was asked, what came out, how long it
 * took. One JSON writer and number format like every file we write. */
#include <assert.h>

#include "anymove/decompose.h"
#include "core/internal.h"
#include "decompose/decompose_internal.h"
#include "io/json_internal.h"

am_status am_decompose_report_write(const am_decompose_report *r, const char *path,
                                    am_error *err)
{
    assert(r && r->result && path);
    const am_decomposition *d = r->result;
    am_decompose_opts o;
    am_decompose_opts_defaults(r->opts, &o);
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "method", o.method == AM_DECOMPOSE_SSDR ? "ssdr" : "ours");
    ami_jw_int(&w, "bones", (int64_t)d->bone_count);
    ami_jw_string(&w, "bones_requested", o.bones ? "fixed" : "auto");
    ami_jw_int(&w, "points", (int64_t)d->point_count);
    ami_jw_int(&w, "frames", (int64_t)d->frame_count);
    ami_jw_int(&w, "faces", (int64_t)r->face_count);
    ami_jw_number(&w, "hidden_share", r->hidden_share);
    ami_jw_number(&w, "body_size_m", d->body_size);
    ami_jw_number(&w, "recon_visible_pct", d->err_visible);
    ami_jw_number(&w, "recon_visible_free_bones_pct", d->err_visible_free);
    ami_jw_number(&w, "noise_floor_pct", d->noise_floor);
    if (d->polish >= 0) /* polish.c: least squares kept (clean data), or not (noisy data: not run, or undone) */
        ami_jw_string(&w, "least_squares_polish", d->polish ? "kept" : "not kept");
    if (d->rig) {
        static const char *const modes[AM_RIG_MODE_COUNT] = {"auto", "articulated", "hierarchical", "free"};
        ami_jw_object(&w, "rig");
        ami_jw_string(&w, "mode", modes[d->rig_mode]);
        if (d->rig_mode == AM_RIG_AUTO) {
            char criterion[256];
            snprintf(criterion, sizeof criterion,
                     "the fewest bones with translation channels (greedy, by the fit objective they "
                     "remove) whose visible reconstruction is <= %g x the free-bone error",
                     AM_RIG_AUTO_TOLERANCE);
            ami_jw_string(&w, "criterion", criterion);
            ami_jw_number(&w, "tolerance", AM_RIG_AUTO_TOLERANCE);
        }
        ami_jw_int(&w, "translating_bones", (int64_t)d->translating_count);
        ami_jw_row(&w, "translating");
        for (size_t k = 0; k < d->rig->bone_count; k++)
            if (d->translating && d->translating[k]) ami_jw_string(&w, NULL, d->rig->bone_names[k]);
        ami_jw_close(&w);
        ami_jw_number(&w, "recon_visible_free_bones_pct", d->err_visible_free);
        if (d->err_visible_articulated >= 0.0)
            ami_jw_number(&w, "recon_visible_articulated_pct", d->err_visible_articulated);
        ami_jw_number(&w, "recon_visible_pct", d->err_visible);
        ami_jw_close(&w);
    }
    ami_jw_int(&w, "iterations", (int64_t)d->iterations);
    if (d->auto_count) {
        char criterion[320];
        snprintf(criterion, sizeof criterion,
                 "bone count B minimising ln E'(B) + %g (B - 1), E' = the clustering error E over "
                 "sqrt(1 - 2B/points); candidates end at the first B with E <= the noise floor",
                 AMI_AUTO_BONE_COST);
        ami_jw_object(&w, "auto");
        ami_jw_string(&w, "criterion", criterion);
        ami_jw_number(&w, "bone_cost", AMI_AUTO_BONE_COST);
        ami_jw_numbers(&w, "clustering_error_pct", d->auto_err, 1, &d->auto_count);
        ami_jw_close(&w);
    }
    ami_jw_record(&w, "timings_s");
    ami_jw_number(&w, "load", r->seconds_load);
    ami_jw_number(&w, "init", d->time_init);
    ami_jw_number(&w, "solve", d->time_solve);
    ami_jw_number(&w, "skeleton", d->time_skeleton);
    ami_jw_number(&w, "write", r->seconds_write);
    ami_jw_number(&w, "total", r->seconds_total);
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_status s = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return s;
}
