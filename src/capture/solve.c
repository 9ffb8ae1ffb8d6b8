/* The capture pipeline (am_capture_solve) and its report. Stages and their order are
 * described in anymove/capture.h and docs/capture.md. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

static am_capture_opts ami_capture_opts_defaults(const am_capture_opts *in)
{
    am_capture_opts o = in ? *in : (am_capture_opts){0};
    if (o.scale_start_px <= 0) o.scale_start_px = 40.0;
    if (o.scale_end_px <= 0) o.scale_end_px = 6.0;
    if (o.w_accel <= 0) o.w_accel = 150.0;
    if (o.w_accel_trans <= 0) o.w_accel_trans = 2000.0;
    if (o.w_vel <= 0) o.w_vel = 1.0;
    if (o.w_rest <= 0) o.w_rest = 0.5;
    if (o.w_ground <= 0) o.w_ground = 2000.0;
    if (o.w_contact <= 0) o.w_contact = 3000.0;
    if (o.front_v_weight <= 0) o.front_v_weight = 1.0;
    if (o.accel_huber_px <= 0) o.accel_huber_px = 1.0;
    if (o.max_lag <= 0) o.max_lag = 12;
    if (o.iterations == 0) o.iterations = 2;
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
    am_free(res);
}

static void ami_cap_free(ami_cap *c)
{
    ami_chains_free(&c->ch);
    am_free(c->fuv);
    am_free(c->suv);
    am_free(c->fconf);
    am_free(c->sconf);
    am_free(c->x);
    am_free(c->q0);
    am_free(c->d);
    am_free(c->lower);
    am_free(c->upper);
    am_free(c->pose);
    am_free(c->axes);
    am_free(c->joints);
    am_free(c->cj);
    am_free(c->plant);
    am_free(c->plant_z);
    am_free(c->pairs);
    am_free(c->lever);
    for (int k = 0; k < 3; k++) am_lsq_free(c->ws[k]);
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
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < DJ; k++) {
            size_t src = t * DJ + k, dst = t * J + (size_t)map[k];
            double cf = det->front_conf[src], cs = det->side_conf[src];
            if (!isfinite(cf) || !isfinite(cs) || cf < 0 || cf > 1 || cs < 0 || cs > 1) {
                am_free(map);
                return AM_FAIL(err, isfinite(cf) && isfinite(cs) ? AM_E_VALUE : AM_E_NONFINITE,
                               "frame %zu joint '%s': confidence out of [0, 1]", t, det->names[k]);
            }
            const float *fu = det->front_uv + 2 * src, *su = det->side_uv + 2 * src;
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

static void ami_json_num(am_buf *b, double v)
{
    if (isfinite(v)) am_buf_printf(b, "%.6g", v);
    else am_buf_printf(b, "null");
}

static void ami_json_str(am_buf *b, const char *s)
{
    am_buf_append(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') am_buf_append(b, "\\", 1);
        if ((unsigned char)*s < 0x20) am_buf_printf(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else am_buf_append(b, s, 1);
    }
    am_buf_append(b, "\"", 1);
}

static void ami_cap_extra_json(const am_capture_result *r, size_t T, am_buf *b)
{
    const am_capture_sync *s = &r->sync;
    am_buf_printf(b, "{\"reproj_px\": {\"front\": ");
    ami_json_num(b, r->reproj_front);
    am_buf_printf(b, ", \"front_x_only\": ");
    ami_json_num(b, r->reproj_front_x);
    am_buf_printf(b, ", \"side\": ");
    ami_json_num(b, r->reproj_side);
    am_buf_printf(b, "},\n \"sync\": {\"paw_agreement\": {");
    for (size_t f = 0; f < s->foot_count; f++) {
        ami_json_str(b, s->feet[f]);
        am_buf_printf(b, ": ");
        ami_json_num(b, s->paw_agreement[f]);
        am_buf_printf(b, ", ");
    }
    am_buf_printf(b, "\"score\": ");
    ami_json_num(b, s->paw_score);
    am_buf_printf(b, "}, \"height_gap_px\": {\"mean\": ");
    ami_json_num(b, s->gap_mean_px);
    am_buf_printf(b, ", \"worst\": ");
    ami_json_num(b, s->gap_worst_px);
    am_buf_printf(b, "}, \"best_lag_frames\": %d, \"time_warped\": %s, \"front_height_scale\": ", s->best_lag,
                  s->time_warped ? "true" : "false");
    ami_json_num(b, s->front_height_scale);
    am_buf_printf(b, ", \"height_rescaled\": %s, \"swaps_repaired\": %zu},\n \"contacts\": {",
                  s->height_rescaled ? "true" : "false", s->swaps_repaired);
    for (size_t c = 0; c < r->contact_count; c++) {
        if (c) am_buf_printf(b, ", ");
        ami_json_str(b, r->contact_names[c]);
        am_buf_printf(b, ": [");
        bool first = true;
        for (size_t t = 0; t < T;) {
            if (!r->contact[t * r->contact_count + c]) {
                t++;
                continue;
            }
            size_t e = t;
            while (e + 1 < T && r->contact[(e + 1) * r->contact_count + c]) e++;
            am_buf_printf(b, "%s[%zu, %zu]", first ? "" : ", ", t, e);
            first = false;
            t = e + 1;
        }
        am_buf_printf(b, "]");
    }
    am_buf_printf(b, "},\n \"ground_velocity\": [");
    for (int k = 0; k < 3; k++) {
        if (k) am_buf_printf(b, ", ");
        ami_json_num(b, r->ground_vel[k]);
    }
    am_buf_printf(b, "],\n \"foot_slide_mm\": {\"mean\": ");
    ami_json_num(b, r->slide_mean_mm);
    am_buf_printf(b, ", \"max\": ");
    ami_json_num(b, r->slide_max_mm);
    am_buf_printf(b, ", \"plants\": %zu}}", r->plant_count);
    am_buf_append(b, "", 1);
}

am_status am_capture_solve(const am_det *det, const am_rig *rig, const am_creature *cr,
                           const am_capture_opts *opts, am_capture_result **out, am_error *err)
{
    assert(det && rig && out);
    *out = NULL;
    double t_start = am_now();
    ami_cap c = {0};
    c.rig = rig;
    c.o = ami_capture_opts_defaults(opts);
    if (cr) c.L = cr->layout;
    else am_layout_default(&c.L);
    AMI_CHECK(err, c.L.m_per_px > 0 && isfinite(c.L.m_per_px), AM_E_VALUE, "layout M_PER_PX must be positive");
    c.T = det->frame_count;
    c.J = rig->joint_count;
    c.B = rig->bone_count;
    c.P = ami_cap_block(rig);
    c.fps = det->fps > 0 && isfinite(det->fps) ? det->fps : 30.0;
    const size_t T = c.T, J = c.J, B = c.B, P = c.P;
    am_status st = AM_OK;
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
    c.x = am_alloc_array(T * P, sizeof(double));
    c.q0 = am_alloc_array(T * 4, sizeof(double));
    c.d = am_alloc_array(T * 3, sizeof(double));
    c.lower = am_alloc_array(T * P, sizeof(double));
    c.upper = am_alloc_array(T * P, sizeof(double));
    c.pose = am_alloc_array(T * B * 16, sizeof(double));
    c.axes = am_alloc_array(T * B * 9, sizeof(double));
    c.joints = am_alloc_array(T * J * 3, sizeof(double));
    c.pairs = am_alloc_array(J * 2 + 2, sizeof(int32_t));
    if (!c.fuv || !c.suv || !c.fconf || !c.sconf || !c.x || !c.q0 || !c.d || !c.lower || !c.upper || !c.pose ||
        !c.axes || !c.joints || !c.pairs) {
        st = AM_FAIL(err, AM_E_NOMEM, "capture buffers for %zu frames", T);
        goto done;
    }
    if ((st = ami_chains_build(rig, &c.ch, err)) < 0) goto done;
    c.lever = am_alloc_array(B, sizeof(double));
    if (!c.lever) {
        st = AM_FAIL(err, AM_E_NOMEM, "levers");
        goto done;
    }
    for (size_t j = 0; j < J; j++)
        for (int32_t k = c.ch.start[j]; k < c.ch.start[j + 1]; k++) {
            size_t b = (size_t)c.ch.bones[k];
            double d = am_vec3_dist(rig->joint_rest + 3 * j, rig->joint_rest + 3 * (size_t)rig->head_joint[b]);
            if (d > c.lever[b]) c.lever[b] = d;
        }
    if ((st = ami_cap_load_obs(&c, det, err)) < 0) goto done;
    c.np = ami_lr_pairs(rig, c.pairs);
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < P; k++) {
            double lo = -INFINITY, hi = INFINITY;
            if (k >= AMI_CAP_ROOT_PARAMS) {
                size_t b = (k - AMI_CAP_ROOT_PARAMS) / 3 + 1, a = (k - AMI_CAP_ROOT_PARAMS) % 3;
                lo = rig->limits[b * 6 + a * 2];
                hi = rig->limits[b * 6 + a * 2 + 1];
            }
            c.lower[t * P + k] = lo;
            c.upper[t * P + k] = hi;
        }

    /* Feet (paw agreement) and contacts from the creature; unknown names are skipped with a note. */
    size_t nfeet = cr ? cr->feet_count : 0, ncont = cr ? cr->contact_count : 0;
    res->sync.feet = am_alloc_array(nfeet + 1, sizeof(char *));
    res->sync.paw_agreement = am_alloc_array(nfeet + 1, sizeof(double));
    c.cj = am_alloc_array(ncont + 1, sizeof(int32_t));
    c.plant = am_alloc_array(T * (ncont + 1), 1);
    c.plant_z = am_alloc_array(T * (ncont + 1), sizeof(double));
    res->contact_names = am_alloc_array(ncont + 1, sizeof(char *));
    if (!res->sync.feet || !res->sync.paw_agreement || !c.cj || !c.plant || !c.plant_z || !res->contact_names) {
        st = AM_FAIL(err, AM_E_NOMEM, "feet");
        goto done;
    }
    for (size_t f = 0; f < nfeet; f++) {
        if (am_rig_find_joint(rig, cr->feet[f]) < 0) {
            ami_warn(AM_WARN_IGNORED_NAME, "creature foot '%s' is not a joint of the rig: skipped", cr->feet[f]);
            continue;
        }
        res->sync.feet[res->sync.foot_count++] = am_strdup(cr->feet[f]);
    }
    for (size_t k = 0; k < ncont; k++) {
        int j = am_rig_find_joint(rig, cr->contacts[k]);
        if (j < 0) {
            ami_warn(AM_WARN_IGNORED_NAME, "creature contact '%s' is not a joint of the rig: skipped", cr->contacts[k]);
            continue;
        }
        res->contact_names[c.C] = am_strdup(cr->contacts[k]);
        c.cj[c.C++] = j;
    }

    /* 1. sync check, 2. swap repair, 3-4. triangulation and init. */
    ami_sync_check(&c, cr, &res->sync);
    if (!(c.o.flags & AM_CAPTURE_NO_SWAP_REPAIR)) res->sync.swaps_repaired += ami_swap_repair(&c, NULL);
    if ((st = ami_cap_init(&c, err)) < 0) goto done;
    ami_cap_recenter(&c);

    /* 5. the fit, annealing the Cauchy scale geometrically from start to end. */
    double t_fit = am_now();
    const int stages = 4;
    for (int k = 0; k < stages; k++) {
        double f = (double)k / (double)(stages - 1);
        double scale = c.o.scale_start_px * pow(c.o.scale_end_px / c.o.scale_start_px, f);
        uint32_t it = k == stages - 1 ? 2 * c.o.iterations : c.o.iterations;
        /* Coarse stages smooth by velocity alone (4x cheaper factorizations); the last adds
         * acceleration. */
        int temporal = k == stages - 1 ? 2 : 1;
        if (temporal == 2 && c.ws[1]) {
            am_lsq_free(c.ws[1]); /* the coarse stages' workspace is not needed again */
            c.ws[1] = NULL;
        }
        if ((st = ami_cap_fit(&c, scale, temporal, it, &res->lm_iterations, err)) < 0) goto done;
        if (k == 1 && !(c.o.flags & AM_CAPTURE_NO_SWAP_REPAIR) && c.np) {
            /* A swapped pair is worse in every fit: test each against the fit's own projection. */
            double *pred = am_alloc_array(T * J * 2, sizeof(double));
            if (!pred) {
                st = AM_FAIL(err, AM_E_NOMEM, "swap check");
                goto done;
            }
            ami_cap_fk_all(&c, c.x, false);
            for (size_t i = 0; i < T * J; i++) ami_project_front(&c.L, c.joints + 3 * i, pred + 2 * i);
            res->sync.swaps_repaired += ami_swap_repair(&c, pred);
            am_free(pred);
        }
    }
    /* 6. contacts, second fit holding plants, 7. foot lock. */
    if (c.C && !(c.o.flags & AM_CAPTURE_NO_CONTACTS)) {
        if ((st = ami_cap_find_contacts(&c, AMI_GROW_FIT, err)) < 0) goto done;
        c.use_contacts = true;
        if ((st = ami_cap_fit(&c, c.o.scale_end_px, 2, c.o.iterations, &res->lm_iterations, err)) < 0) goto done;
        /* Plants again from the better fit (the first can miss a plant it got a few cm wrong). */
        if ((st = ami_cap_find_contacts(&c, AMI_GROW_FIT, err)) < 0) goto done;
        if ((st = ami_cap_fit(&c, c.o.scale_end_px, 2, c.o.iterations, &res->lm_iterations, err)) < 0) goto done;
        /* The lock's plants: the same, grown a little further (a landing frame the fit placed
         * 2-3 cm off still belongs to the plant, and a frame left free slides). */
        if ((st = ami_cap_find_contacts(&c, AMI_GROW_LOCK, err)) < 0) goto done;
        double mean, mx;
        ami_cap_foot_lock(&c, !(c.o.flags & AM_CAPTURE_NO_FOOT_LOCK), &mean, &mx, &res->plant_count);
        res->slide_mean_mm = 1000.0 * mean;
        res->slide_max_mm = 1000.0 * mx;
    }
    res->seconds_fit = am_now() - t_fit;
    memcpy(res->ground_vel, c.vg, sizeof c.vg);
    ami_cap_reproj(&c, &res->reproj_front, &res->reproj_front_x, &res->reproj_side);

    /* Outputs: the motion (rig order) with the extra keys. */
    res->contact_count = c.C;
    res->contact_joint = c.cj;
    res->contact = c.plant;
    c.cj = NULL;
    c.plant = NULL;
    if ((st = am_motion_create(rig, T, c.fps, &res->motion, err)) < 0) goto done;
    for (size_t t = 0; t < T; t++) {
        const double *xt = c.x + t * P;
        memcpy(res->motion->trans + 3 * t, xt, 3 * sizeof(double));
        ami_cap_root_quat(&c, c.x, t, res->motion->root_quat + 4 * t);
        am_quat_canonical(res->motion->root_quat + 4 * t, res->motion->root_quat + 4 * t);
        double *e = res->motion->euler + t * B * 3;
        e[0] = e[1] = e[2] = 0.0;
        memcpy(e + 3, xt + AMI_CAP_ROOT_PARAMS, (B - 1) * 3 * sizeof(double));
    }
    if ((st = am_motion_compute_joints(res->motion, rig, err)) < 0) goto done;
    {
        am_buf b = {0};
        ami_cap_extra_json(res, T, &b);
        if (b.failed || !b.data) {
            am_buf_free(&b);
            st = AM_FAIL(err, AM_E_NOMEM, "motion extra keys");
            goto done;
        }
        am_free(res->motion->extra_json);
        res->motion->extra_json = b.data;
    }
    res->seconds_total = am_now() - t_start;

done:
    ami_cap_free(&c);
    if (st < 0) {
        am_capture_result_free(res);
        return st;
    }
    *out = res;
    return AM_OK;
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
    am_buf_printf(b, "contacts: %zu plants, ground velocity (%.3f, %.3f) m/s, foot slide per plant: mean %.2f mm, max %.2f mm%s\n",
                  r->plant_count, r->ground_vel[0], r->ground_vel[1], r->slide_mean_mm, r->slide_max_mm,
                  r->plant_count == 0 ? "" : r->slide_max_mm < 2.0 ? " (locked)" : " (over 2 mm)");
    am_buf_printf(b, "fit: %u LM iterations, %.3f s (total %.3f s)\n", r->lm_iterations, r->seconds_fit, r->seconds_total);
}
