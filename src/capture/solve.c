/* The capture pipeline (am_capture_solve) and its report. Stages and their order are
 * described in anymove/capture.h and docs/capture.md. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"
#include "fit/fit_json.h"
#include "io/json_internal.h"

static am_capture_opts ami_capture_opts_defaults(const am_capture_opts *in)
{
    am_capture_opts o = in ? *in : (am_capture_opts){0};
    /* The fit's weights and iterations pass through as given: zero takes am_fit's defaults. */
    if (o.front_v_weight <= 0) o.front_v_weight = 1.0;
    if (o.max_lag <= 0) o.max_lag = 12;
    /* Two views smooth a little more than am_fit's default (150, the 3D points'): chosen on the
     * dev creatures of both exam generators with the noise-following weights (bench/RESULTS.md,
     * "Issue 12: accuracy"); the weights' level is the confidences', as before. */
    if (o.w_accel <= 0) o.w_accel = 225.0;
    return o;
}

void am_capture_result_free(am_capture_result *res)
{
    if (!res) return;
    am_motion_free(res->motion);
    if (res->sync.feet)
        for (size_t f = 0; f < res->sync.foot_count; f++) am_free(res->sync.feet[f]);
    am_free(res->sync.feet);
    am_free(res->sync.paw_agreement);
    if (res->contact_names)
        for (size_t c = 0; c < res->contact_count; c++) am_free(res->contact_names[c]);
    am_free(res->contact_names);
    am_free(res->contact_joint);
    am_free(res->contact);
    am_warning_list_free(&res->warnings);
    am_free(res->lock_moved_mean_mm);
    am_free(res->lock_moved_max_mm);
    am_free(res);
}

static void ami_cap_free(ami_cap *c)
{
    am_free(c->fuv);
    am_free(c->suv);
    am_free(c->fconf);
    am_free(c->sconf);
}

/* Map the det's joints onto the rig's and check the input (every problem is an input fault). */
static am_status ami_cap_load_obs(ami_cap *c, const am_det *det, am_error *err)
{
    const size_t T = det->frame_count, J = c->J, DJ = det->joint_count;
    AMI_CHECK(err, T >= 3, AM_E_VALUE, "det has %zu frames; the fit needs at least 3", T);
    AMI_CHECK(err, DJ > 0 && det->names, AM_E_EMPTY, "det has no joints");
    int32_t *map = am_alloc_array(DJ, sizeof *map);
    if (!map) return AM_FAIL(err, AM_E_NOMEM, "joint map");
    am_buf unknown = {0};
    size_t n_unknown = 0;
    for (size_t k = 0; k < DJ; k++) {
        map[k] = am_rig_find_joint(c->rig, det->names[k]);
        if (map[k] < 0) {
            am_buf_printf(&unknown, "%s'%s'", n_unknown ? ", " : "", det->names[k]);
            n_unknown++;
        }
    }
    if (n_unknown) {
        am_buf_append(&unknown, "", 1);
        am_status st = AM_FAIL(err, AM_E_NAME, "%zu det joint name(s) not in the rig: %s", n_unknown,
                               unknown.data ? unknown.data : "?");
        am_buf_free(&unknown);
        am_free(map);
        return st;
    }
    am_buf_free(&unknown);
    size_t seen = 0;
    /* a loaded det's float32 arrays or a caller's views (float32 or float64), read in place */
    const am_reals FU = am_det_uv(det, 0), SU = am_det_uv(det, 1), FK = am_det_conf(det, 0), SK = am_det_conf(det, 1);
    assert(am_reals_valid(FU) && am_reals_valid(SU) && am_reals_valid(FK) && am_reals_valid(SK));
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < DJ; k++) {
            size_t src = t * DJ + k, dst = t * J + (size_t)map[k];
            double cf = am_reals_at(FK, src), cs = am_reals_at(SK, src);
            if (!isfinite(cf) || !isfinite(cs) || cf < 0 || cf > 1 || cs < 0 || cs > 1) {
                am_free(map);
                return AM_FAIL(err, isfinite(cf) && isfinite(cs) ? AM_E_VALUE : AM_E_NONFINITE,
                               "frame %zu joint '%s': confidence out of [0, 1]", t, det->names[k]);
            }
            const double fu[2] = {am_reals_at(FU, 2 * src), am_reals_at(FU, 2 * src + 1)};
            const double su[2] = {am_reals_at(SU, 2 * src), am_reals_at(SU, 2 * src + 1)};
            if ((cf > 0 && (!isfinite(fu[0]) || !isfinite(fu[1]))) || (cs > 0 && (!isfinite(su[0]) || !isfinite(su[1])))) {
                am_free(map);
                return AM_FAIL(err, AM_E_NONFINITE, "frame %zu joint '%s': non-finite position with confidence > 0", t,
                               det->names[k]);
            }
            c->fconf[dst] = cf;
            c->sconf[dst] = cs;
            c->fuv[2 * dst] = fu[0];
            c->fuv[2 * dst + 1] = fu[1];
            c->suv[2 * dst] = su[0];
            c->suv[2 * dst + 1] = su[1];
            seen += cf > 0 || cs > 0;
        }
    am_free(map);
    AMI_CHECK(err, seen > 0, AM_E_EMPTY, "every confidence in the det is zero: nothing was seen");
    if (DJ < J) ami_warn(AM_WARN_MISSING_DATA, "%zu rig joint(s) not in the det: fitted from the others", J - DJ);
    return AM_OK;
}

/* The motion.json keys of a solve (SPEC 4.3: reproj_px, sync, contacts, and ours), as JSON
 * object text. Values a solve could not compute are null. */
static am_status ami_cap_extra_json(const am_capture_result *r, size_t T, char **out, am_error *err)
{
    const am_capture_sync *s = &r->sync;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    ami_jw_record(&w, "reproj_px");
    ami_jw_number_or_null(&w, "front", r->reproj_front);
    ami_jw_number_or_null(&w, "front_x_only", r->reproj_front_x);
    ami_jw_number_or_null(&w, "side", r->reproj_side);
    ami_jw_close(&w);
    ami_jw_object(&w, "sync");
    ami_jw_record(&w, "paw_agreement");
    for (size_t f = 0; f < s->foot_count; f++) ami_jw_number_or_null(&w, s->feet[f], s->paw_agreement[f]);
    ami_jw_number_or_null(&w, "score", s->paw_score);
    ami_jw_close(&w);
    ami_jw_record(&w, "height_gap_px");
    ami_jw_number_or_null(&w, "mean", s->gap_mean_px);
    ami_jw_number_or_null(&w, "worst", s->gap_worst_px);
    ami_jw_close(&w);
    ami_jw_int(&w, "best_lag_frames", s->best_lag);
    ami_jw_bool(&w, "time_warped", s->time_warped);
    ami_jw_number_or_null(&w, "front_height_scale", s->front_height_scale);
    ami_jw_bool(&w, "height_rescaled", s->height_rescaled);
    ami_jw_int(&w, "swaps_repaired", (int64_t)s->swaps_repaired);
    ami_jw_close(&w);
    ami_fit_json_plants(&w, &(ami_plants_json){.frame_count = T, .contact_count = r->contact_count,
                                               .plant_count = r->plant_count, .contact_names = r->contact_names,
                                               .contact = r->contact, .ground_vel = r->ground_vel,
                                               .slide_mean_mm = r->slide_mean_mm, .slide_max_mm = r->slide_max_mm,
                                               .fit_slide_mean_mm = r->fit_slide_mean_mm,
                                               .fit_slide_max_mm = r->fit_slide_max_mm});
    ami_jw_close(&w);
    return ami_jw_take_string(&w, out, err);
}

/* The two views as a two-camera det in the rig's joint order (what the sync check left). */
static am_status ami_cap_mdet(const ami_cap *c, am_mdet **out, am_error *err)
{
    const size_t T = c->T, J = c->J;
    AMI_TRY(am_mdet_create(2, T, J, out, err));
    am_mdet *d = *out;
    const char *cams[2] = {"front", "side"};
    for (size_t k = 0; k < 2; k++)
        if (!(d->cameras[k] = am_strdup(cams[k]))) return AM_FAIL(err, AM_E_NOMEM, "det");
    for (size_t j = 0; j < J; j++)
        if (!(d->names[j] = am_strdup(c->rig->joint_names[j]))) return AM_FAIL(err, AM_E_NOMEM, "det");
    d->fps = 30.0;
    d->two_view = true;
    for (size_t i = 0; i < T * J; i++) {
        const double *uv[2] = {c->fuv + 2 * i, c->suv + 2 * i};
        const double conf[2] = {c->fconf[i], c->sconf[i]};
        for (size_t k = 0; k < 2; k++) {
            float *o = d->uv + (k * T * J + i) * 2;
            d->conf[k * T * J + i] = (float)conf[k];
            o[0] = conf[k] > 0 ? (float)uv[k][0] : NAN;
            o[1] = conf[k] > 0 ? (float)uv[k][1] : NAN;
        }
    }
    return AM_OK;
}

static am_status ami_capture_solve(const am_det *det, const am_rig *rig, const am_creature *cr,
                                   const am_capture_opts *opts, am_capture_result **out,
                                   am_error *err)
{
    assert(det && rig && out);
    *out = NULL;
    double t_start = am_now();
    ami_cap c = {.rig = rig, .o = ami_capture_opts_defaults(opts)};
    if (cr) c.L = cr->layout;
    else am_layout_default(&c.L);
    AMI_CHECK(err, c.L.m_per_px > 0 && isfinite(c.L.m_per_px), AM_E_VALUE, "layout M_PER_PX must be positive");
    c.T = det->frame_count;
    c.J = rig->joint_count;
    const size_t T = c.T, J = c.J;
    am_status st = AM_OK;
    am_mdet *md = NULL;
    am_calib *cal = NULL;
    am_triangulation *tri = NULL;
    am_fit_result *fr = NULL;
    am_capture_result *res = am_alloc(sizeof *res);
    if (!res) return AM_FAIL(err, AM_E_NOMEM, "capture result");
    if (T < 3) {
        st = AM_FAIL(err, AM_E_VALUE, "det has %zu frames; the fit needs at least 3", T);
        goto done;
    }
    c.fuv = am_alloc_array(T * J * 2, sizeof(double));
    c.suv = am_alloc_array(T * J * 2, sizeof(double));
    c.fconf = am_alloc_array(T * J, sizeof(double));
    c.sconf = am_alloc_array(T * J, sizeof(double));
    if (!c.fuv || !c.suv || !c.fconf || !c.sconf) {
        st = AM_FAIL(err, AM_E_NOMEM, "capture buffers for %zu frames", T);
        goto done;
    }
    if ((st = ami_cap_load_obs(&c, det, err)) < 0) goto done;

    /* Feet (paw agreement) from the creature; unknown names are skipped with a note. */
    size_t nfeet = cr ? cr->feet_count : 0;
    res->sync.feet = am_alloc_array(nfeet + 1, sizeof(char *));
    res->sync.paw_agreement = am_alloc_array(nfeet + 1, sizeof(double));
    if (!res->sync.feet || !res->sync.paw_agreement) {
        st = AM_FAIL(err, AM_E_NOMEM, "feet");
        goto done;
    }
    for (size_t f = 0; f < nfeet; f++) {
        if (am_rig_find_joint(rig, cr->feet[f]) < 0) {
            ami_warn(AM_WARN_IGNORED_NAME, "creature foot '%s' is not a joint of the rig: skipped", cr->feet[f]);
            continue;
        }
        if (!(res->sync.feet[res->sync.foot_count++] = am_strdup(cr->feet[f]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "feet");
            goto done;
        }
    }

    /* 1. sync check, then the two views as two orthographic cameras (SPEC 3), triangulated for
     * the fit's start. */
    ami_stage stage = ami_stage_begin("solve: sync and init");
    if ((st = ami_sync_check(&c, &res->sync, err)) < 0) goto done;
    if ((st = ami_cap_mdet(&c, &md, err)) < 0) goto done;
    md->fps = det->fps > 0 && isfinite(det->fps) ? det->fps : 30.0;
    if ((st = am_cameras_from_layout(&c.L, &cal, err)) < 0) goto done;
    am_triangulate_opts to = {0};
    if ((st = am_triangulate(md, cal, &to, &tri, err)) < 0) goto done;
    ami_warn_list(&tri->warnings);
    ami_stage_end(&stage);

    /* 2. the fit (src/fit): annealed reprojection, swap repair, contacts, foot lock. */
    uint32_t ff = 0;
    if (c.o.flags & AM_CAPTURE_NO_SWAP_REPAIR) ff |= AM_FIT_NO_SWAP_REPAIR;
    if (c.o.flags & AM_CAPTURE_NO_FOOT_LOCK) ff |= AM_FIT_NO_FOOT_LOCK;
    if (c.o.flags & AM_CAPTURE_NO_CONTACTS) ff |= AM_FIT_NO_CONTACTS;
    am_fit_opts fo = {.flags = ff, .scale_start_px = c.o.scale_start_px, .scale_end_px = c.o.scale_end_px,
                      .w_accel = c.o.w_accel, .w_accel_trans = c.o.w_accel_trans, .w_vel = c.o.w_vel,
                      .w_rest = c.o.w_rest, .w_ground = c.o.w_ground, .w_contact = c.o.w_contact,
                      .accel_huber_px = c.o.accel_huber_px, .iterations = c.o.iterations,
                      .window = c.o.window};
    const double vw[2] = {c.o.front_v_weight, 1.0};
    am_fit_input in = {.rig = rig, .creature = cr, .det = md, .calib = cal, .v_weight = vw, .init = tri->joints};
    double t_fit = am_now();
    if ((st = am_fit(&in, &fo, &fr, err)) < 0) goto done;
    ami_warn_list(&fr->warnings);
    res->seconds_fit = am_now() - t_fit;

    /* Outputs. */
    res->motion = fr->motion;
    fr->motion = NULL;
    res->reproj_front = fr->reproj_px[0];
    res->reproj_side = fr->reproj_px[1];
    {
        double sx = 0.0;
        size_t n = 0;
        for (size_t i = 0; i < T * J; i++) {
            if (c.fconf[i] <= 0) continue;
            double uv[2];
            ami_project_front(&c.L, res->motion->joints + 3 * i, uv);
            sx += fabs(uv[0] - c.fuv[2 * i]);
            n++;
        }
        res->reproj_front_x = n ? sx / (double)n : NAN;
    }
    res->sync.swaps_repaired += fr->swaps_repaired;
    res->contact_count = fr->contact_count;
    res->contact_names = fr->contact_names;
    res->contact_joint = fr->contact_joint;
    res->contact = fr->contact;
    fr->contact_names = NULL;
    fr->contact_joint = NULL;
    fr->contact = NULL;
    fr->contact_count = 0;
    memcpy(res->ground_vel, fr->ground_vel, sizeof res->ground_vel);
    res->plant_count = fr->plant_count;
    res->fit_slide_mean_mm = fr->fit_slide_mean_mm;
    res->fit_slide_max_mm = fr->fit_slide_max_mm;
    res->slide_mean_mm = fr->slide_mean_mm;
    res->slide_max_mm = fr->slide_max_mm;
    res->foot_locked = fr->foot_locked;
    res->lock_moved_mean_mm = fr->lock_moved_mean_mm;
    res->lock_moved_max_mm = fr->lock_moved_max_mm;
    fr->lock_moved_mean_mm = fr->lock_moved_max_mm = NULL;
    res->lm_iterations = fr->lm_iterations;
    {
        char *extra = NULL;
        if ((st = ami_cap_extra_json(res, T, &extra, err)) < 0) goto done;
        am_free(res->motion->extra_json);
        res->motion->extra_json = extra;
    }
    res->seconds_total = am_now() - t_start;

done:
    ami_cap_free(&c);
    am_fit_result_free(fr);
    am_triangulation_free(tri);
    am_calib_free(cal);
    am_mdet_free(md);
    if (st < 0) {
        am_capture_result_free(res);
        return st;
    }
    *out = res;
    return AM_OK;
}

am_status am_capture_solve(const am_det *det, const am_rig *rig, const am_creature *cr,
                           const am_capture_opts *opts, am_capture_result **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_capture_solve(det, rig, cr, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

static const char *ami_paw_verdict(double score)
{
    if (!isfinite(score)) return "no verdict (no foot moved enough: judge by the reprojection error)";
    if (score >= 0.8) return "keep (the views tell one story)";
    if (score >= 0.5) return "look at it (often one limb is off)";
    return "reroll (the views were animated differently)";
}

void am_capture_report(const am_capture_result *r, am_buf *b)
{
    const am_capture_sync *s = &r->sync;
    am_buf_printf(b, "anymove capture report\n\n");
    am_buf_printf(b, "paw height agreement between views:");
    for (size_t f = 0; f < s->foot_count; f++) {
        if (isfinite(s->paw_agreement[f])) am_buf_printf(b, " %s %.2f", s->feet[f], s->paw_agreement[f]);
        else am_buf_printf(b, " %s null", s->feet[f]);
    }
    if (isfinite(s->paw_score)) am_buf_printf(b, "  score %.2f\n", s->paw_score);
    else am_buf_printf(b, "  score null\n");
    am_buf_printf(b, "verdict: %s\n", ami_paw_verdict(s->paw_score));
    am_buf_printf(b, "sync as generated: mean height gap %.1f px, worst %.1f px, best constant lag %d frames (gap %.1f px)\n",
                  s->gap_mean_px, s->gap_worst_px, s->best_lag, s->gap_best_px);
    am_buf_printf(b, "time warp: %s\n", s->time_warped ? "front view shifted onto the side view" : "none (rule: only when it cuts the gap by 15%+)");
    am_buf_printf(b, "front/side height ratio: %.3f%s\n", s->front_height_scale,
                  s->height_rescaled ? " (front heights rescaled)" : "");
    am_buf_printf(b, "front left/right swaps repaired: %zu\n", s->swaps_repaired);
    am_buf_printf(b, "reprojection error px: front %.2f, front_x_only %.2f, side %.2f\n", r->reproj_front, r->reproj_front_x,
                  r->reproj_side);
    /* The capture skill's rule of thumb: single-digit pixels is a good fit. */
    double worst = r->reproj_front > r->reproj_side ? r->reproj_front : r->reproj_side;
    am_buf_printf(b, "reprojection verdict: %s\n", !isfinite(worst) ? "n/a" : worst <= 8.0 ? "good (single-digit px in both views)" :
                                                  worst <= 15.0 ? "look at it" : "bad: check the reading or reroll");
    am_buf_printf(b, "contacts: %zu plants found, ground velocity (%.3f, %.3f) m/s\n", r->plant_count, r->ground_vel[0],
                  r->ground_vel[1]);
    if (r->plant_count) {
        /* The lock pins the plants it found, so the slide after it is near 0 by construction;
         * the fit's own slide and the size of the correction say how good the motion was. */
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
            am_buf_printf(b, "foot lock: off (--no-foot-lock)\n");
        }
        am_buf_printf(b, "(slide over the plants this fit found; `anymove score solve` measures it over the true ones)\n");
    }
    am_buf_printf(b, "fit: %u LM iterations, %.3f s (total %.3f s)\n", r->lm_iterations, r->seconds_fit, r->seconds_total);
}
