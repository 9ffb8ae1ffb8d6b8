/* Scoring a capture solve against an exam's truth (SPEC 5): per-joint error, geodesic local
 * rotation error, reprojection (as the solve reported it), lag recovered, contact precision /
 * recall, and foot slide over every true plant. Joints and bones are matched by name. */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/camera.h"
#include "anymove/capture.h"
#include "anymove/metrics.h"
#include "anymove/math.h"
#include "anymove/mocap.h"
#include "core/internal.h"
#include "io/json_internal.h"

static int ami_cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int ami_find_name(char *const *names, size_t n, const char *s)
{
    if (!names) return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return (int)i;
    return -1;
}

static double ami_json_real(json_t *o, const char *a, const char *b)
{
    json_t *v = o ? json_object_get(o, a) : NULL;
    if (v && b) v = json_object_get(v, b);
    return v && json_is_number(v) ? json_number_value(v) : NAN;
}

am_status am_capture_score_motion(const am_capture_truth *tr, const am_motion *mo, am_capture_score *out,
                                  am_error *err)
{
    assert(tr && mo && out);
    memset(out, 0, sizeof *out);
    AMI_CHECK(err, mo->joints && mo->joint_names, AM_E_SCHEMA, "motion.json has no joints to score");
    AMI_CHECK(err, mo->frame_count == tr->frame_count, AM_E_SHAPE, "motion has %zu frames, truth %zu", mo->frame_count,
              tr->frame_count);
    const size_t T = tr->frame_count, J = tr->joint_count, MJ = mo->joint_count;
    int *map = am_alloc((J + 1) * sizeof *map);
    double *errs = am_alloc((T * J + 1) * sizeof *errs);
    if (!map || !errs) {
        am_free(map);
        am_free(errs);
        return AM_FAIL(err, AM_E_NOMEM, "score");
    }
    size_t matched = 0;
    for (size_t j = 0; j < J; j++) {
        map[j] = ami_find_name(mo->joint_names, MJ, tr->names[j]);
        matched += map[j] >= 0;
    }
    if (!matched) {
        am_free(map);
        am_free(errs);
        return AM_FAIL(err, AM_E_NAME, "no joint of the motion matches the truth's joint names");
    }
    size_t n = 0;
    double sum = 0.0;
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < J; j++) {
            if (map[j] < 0) continue;
            const double *a = tr->joints + (t * J + j) * 3, *b = mo->joints + (t * MJ + (size_t)map[j]) * 3;
            double d = am_vec3_dist(a, b);
            errs[n++] = d;
            sum += d;
        }
    qsort(errs, n, sizeof *errs, ami_cmp_dbl);
    out->frames = T;
    out->joints = matched;
    out->body_size = tr->body_size;
    out->joint_mean_cm = 100.0 * sum / (double)n;
    out->joint_median_cm = 100.0 * (n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]));
    size_t k95 = (size_t)ceil(0.95 * (double)n);
    out->joint_p95_cm = 100.0 * errs[k95 > 0 ? k95 - 1 : 0];
    out->joint_mean_pct = tr->body_size > 0 ? out->joint_mean_cm / tr->body_size : NAN;
    out->joint_p95_pct = tr->body_size > 0 ? out->joint_p95_cm / tr->body_size : NAN;
    am_free(errs);

    /* Geodesic local rotation error of the non-root bones (root entry of euler is identity). */
    out->geodesic_deg = NAN;
    if (tr->euler && tr->bones && mo->euler) {
        double gs = 0.0;
        size_t gn = 0;
        for (size_t b = 0; b < tr->bone_count; b++) {
            int mb = ami_find_name(mo->bone_names, mo->bone_count, tr->bones[b]);
            if (mb <= 0 || b == 0) continue;
            for (size_t t = 0; t < T; t++) {
                double Ra[9], Rb[9];
                am_euler_xyz_to_mat3(tr->euler + (t * tr->bone_count + b) * 3, Ra);
                am_euler_xyz_to_mat3(mo->euler + (t * mo->bone_count + (size_t)mb) * 3, Rb);
                gs += am_mat3_angle_between(Ra, Rb);
                gn++;
            }
        }
        if (gn) out->geodesic_deg = AM_DEG(gs / (double)gn);
    }

    /* What the solve reported about itself. */
    json_t *extra = mo->extra_json ? json_loads(mo->extra_json, 0, NULL) : NULL;
    out->reproj_front = ami_json_real(extra, "reproj_px", "front");
    out->reproj_front_x = ami_json_real(extra, "reproj_px", "front_x_only");
    out->reproj_side = ami_json_real(extra, "reproj_px", "side");
    double lag = ami_json_real(extra, "sync", "best_lag_frames");
    json_t *sync = extra ? json_object_get(extra, "sync") : NULL;
    json_t *warped = sync ? json_object_get(sync, "time_warped") : NULL;
    out->lag_true = tr->lag;
    out->lag_found = isfinite(lag) && (!warped || json_is_true(warped)) ? (int)lround(lag) : 0;
    out->lag_recovered = out->lag_found == out->lag_true;

    /* Contacts: per (frame, contact joint), predicted intervals vs the truth's. */
    out->contact_precision = out->contact_recall = NAN;
    json_t *contacts = extra ? json_object_get(extra, "contacts") : NULL;
    size_t tp = 0, fp = 0, fn = 0;
    am_slide_acc slide = {0};
    const size_t C = tr->contact_count;
    uint8_t *pred = am_alloc(T + 1);
    for (size_t ci = 0; ci < C && pred; ci++) {
        memset(pred, 0, T + 1);
        json_t *iv = contacts ? json_object_get(contacts, tr->contact_names[ci]) : NULL;
        size_t k;
        json_t *pair;
        if (iv && json_is_array(iv)) json_array_foreach(iv, k, pair)
            {
                double a = json_number_value(json_array_get(pair, 0)), b = json_number_value(json_array_get(pair, 1));
                for (long t = lround(a); t <= lround(b) && t < (long)T; t++)
                    if (t >= 0) pred[t] = 1;
            }
        for (size_t t = 0; t < T; t++) {
            bool truth = tr->contact[t * C + ci];
            tp += truth && pred[t];
            fp += !truth && pred[t];
            fn += truth && !pred[t];
        }
        /* Slide over the true plants: the predicted joint's farthest excursion from the plant's start (3D). */
        int j = ami_find_name(tr->names, J, tr->contact_names[ci]);
        int mj = j >= 0 ? map[j] : -1;
        if (mj < 0) continue;
        for (size_t t = 0; t < T; t++) pred[t] = tr->contact[t * C + ci];
        am_foot_slide_add(mo->joints, T, MJ, (size_t)mj, pred, false, &slide);
    }
    am_free(pred);
    if (tp + fp) out->contact_precision = (double)tp / (double)(tp + fp);
    if (tp + fn) out->contact_recall = (double)tp / (double)(tp + fn);
    out->plants = slide.plants;
    out->slide_mean_mm = slide.plants ? 1000.0 * slide.sum / (double)slide.plants : NAN;
    out->slide_max_mm = slide.plants ? 1000.0 * slide.max : NAN;
    json_decref(extra);
    am_free(map);
    return AM_OK;
}

void am_capture_score_json(const am_capture_score *s, am_buf *b)
{
    ami_jw w;
    ami_jw_begin(&w, b, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_int(&w, "frames", (int64_t)s->frames);
    ami_jw_int(&w, "joints", (int64_t)s->joints);
    ami_jw_number_or_null(&w, "body_size_m", s->body_size);
    ami_jw_record(&w, "joint_error_cm");
    ami_jw_number_or_null(&w, "mean", s->joint_mean_cm);
    ami_jw_number_or_null(&w, "median", s->joint_median_cm);
    ami_jw_number_or_null(&w, "p95", s->joint_p95_cm);
    ami_jw_close(&w);
    ami_jw_record(&w, "joint_error_pct_body");
    ami_jw_number_or_null(&w, "mean", s->joint_mean_pct);
    ami_jw_number_or_null(&w, "p95", s->joint_p95_pct);
    ami_jw_close(&w);
    ami_jw_number_or_null(&w, "geodesic_deg", s->geodesic_deg);
    ami_jw_record(&w, "reproj_px");
    ami_jw_number_or_null(&w, "front", s->reproj_front);
    ami_jw_number_or_null(&w, "front_x_only", s->reproj_front_x);
    ami_jw_number_or_null(&w, "side", s->reproj_side);
    ami_jw_close(&w);
    ami_jw_record(&w, "lag");
    ami_jw_int(&w, "true", s->lag_true);
    ami_jw_int(&w, "found", s->lag_found);
    ami_jw_bool(&w, "recovered", s->lag_recovered);
    ami_jw_close(&w);
    ami_jw_record(&w, "contacts");
    ami_jw_number_or_null(&w, "precision", s->contact_precision);
    ami_jw_number_or_null(&w, "recall", s->contact_recall);
    ami_jw_close(&w);
    ami_jw_record(&w, "foot_slide_mm");
    ami_jw_int(&w, "plants", (int64_t)s->plants);
    ami_jw_number_or_null(&w, "mean", s->slide_mean_mm);
    ami_jw_number_or_null(&w, "max", s->slide_max_mm);
    ami_jw_close(&w);
    ami_jw_close(&w);
    /* Only an allocation can fail here (no strings, no non-finite numbers): the buffer says so. */
    if (ami_jw_finish(&w, NULL) != AM_OK) b->failed = true;
}

void am_foot_slide_add(const double *joints, size_t frames, size_t joint_count, size_t joint,
                       const uint8_t *contact, bool horizontal, am_slide_acc *acc)
{
    assert(joints && contact && acc && joint < joint_count);
    for (size_t s = 0; s < frames;) {
        if (!contact[s]) {
            s++;
            continue;
        }
        size_t e = s;
        while (e + 1 < frames && contact[e + 1]) e++;
        const double *p0 = joints + (s * joint_count + joint) * 3;
        if (isfinite(p0[0]) && isfinite(p0[1]) && isfinite(p0[2])) {
            double drift = 0.0;
            for (size_t t = s; t <= e; t++) {
                const double *p = joints + (t * joint_count + joint) * 3;
                double d = horizontal ? hypot(p[0] - p0[0], p[1] - p0[1]) : am_vec3_dist(p, p0);
                if (d > drift) drift = d; /* NaN (a missing frame) never compares greater */
            }
            acc->sum += drift;
            if (drift > acc->max) acc->max = drift;
            acc->plants++;
        }
        s = e + 1;
    }
}

am_status am_reproj_cameras(const am_mdet *d, const am_calib *cal, const double *joints, size_t T,
                            const char *const *joint_names, size_t J, const double *offsets, double *mean_px,
                            double *series, am_error *err)
{
    assert(d && cal && mean_px && (joints || !T));
    size_t C = d->camera_count, DT = d->frame_count, DJ = d->joint_count;
    int32_t *rj = am_alloc_array(DJ + 1, sizeof(int32_t));
    if (!rj) return AM_FAIL(err, AM_E_NOMEM, "reprojection");
    for (size_t j = 0; j < DJ; j++) {
        rj[j] = -1;
        for (size_t k = 0; k < J && rj[j] < 0; k++)
            if (strcmp(joint_names[k], d->names[j]) == 0) rj[j] = (int32_t)k;
    }
    am_reals uvs = am_mdet_uv(d), cfs = am_mdet_conf(d);
    for (size_t c = 0; c < C; c++) {
        int ci = am_calib_find(cal, d->cameras[c]);
        double off = offsets ? offsets[c] : d->time_offset ? d->time_offset[c] : 0.0, all = 0.0;
        size_t seen = 0;
        mean_px[c] = NAN;
        for (size_t t = 0; t < T; t++) {
            if (series) series[c * T + t] = NAN;
            double k = round((double)t - off), ft = k + off;
            if (ci < 0 || k < 0 || k >= (double)DT || ft < 0 || ft > (double)(T - 1)) continue;
            size_t f0 = (size_t)floor(ft), f1 = f0 + 1 < T ? f0 + 1 : f0;
            double w = ft - (double)f0, sum = 0.0;
            size_t n = 0;
            for (size_t j = 0; j < DJ; j++) {
                size_t at = (c * DT + (size_t)k) * DJ + j;
                double uv[2] = {am_reals_at(uvs, 2 * at), am_reals_at(uvs, 2 * at + 1)}, p[3], pu[2];
                if (rj[j] < 0 || !(am_reals_at(cfs, at) > 0) || !isfinite(uv[0] + uv[1])) continue;
                for (int e = 0; e < 3; e++)
                    p[e] = (1 - w) * joints[(f0 * J + (size_t)rj[j]) * 3 + e] + w * joints[(f1 * J + (size_t)rj[j]) * 3 + e];
                if (!isfinite(p[0] + p[1] + p[2]) || !am_camera_project(&cal->cameras[ci], p, pu, NULL)) continue;
                sum += hypot(uv[0] - pu[0], uv[1] - pu[1]);
                n++;
            }
            if (n && series) series[c * T + t] = sum / (double)n;
            all += sum, seen += n;
        }
        if (seen) mean_px[c] = all / (double)seen;
    }
    am_free(rj);
    return AM_OK;
}
