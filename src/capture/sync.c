/* Do the two views tell one story? A joint sits on the same row in both halves (SPEC 3), so
 * heights compare directly: per-foot paw agreement (Pearson of v over the clip), the height
 * gap, the constant lag that minimises it (front time-warped onto side when that cuts the gap
 * by 15% or more), and the front/side height ratio (a video model may squash one view).
 * One measurement (ami_sync_measure) serves both the public check on a det as read
 * (am_sync_check, what `takes` recomputes) and the solve, which then edits its reading. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

/* Front row i as the solve fits it: divided by k about the ground row when rescaled. */
static double ami_front_v(const ami_cap *c, size_t i, double k)
{
    double v = c->fuv[2 * i + 1];
    return k == 1.0 ? v : c->L.ground_v - (c->L.ground_v - v) / k;
}

/* Height gap with the front shifted by lag (and its heights divided by k): mean over frames of
 * the per-frame mean |dv|, and the worst frame. Returns the number of frames compared. */
static size_t ami_gap(const ami_cap *c, int lag, double k, double *mean, double *worst)
{
    size_t frames = 0;
    double sum = 0.0, w = 0.0;
    for (size_t t = 0; t < c->T; t++) {
        long tf = (long)t + lag;
        if (tf < 0 || tf >= (long)c->T) continue;
        double s = 0.0;
        size_t n = 0;
        for (size_t j = 0; j < c->J; j++) {
            size_t a = (size_t)tf * c->J + j, b = t * c->J + j;
            if (c->fconf[a] <= 0.0 || c->sconf[b] <= 0.0) continue;
            s += fabs(ami_front_v(c, a, k) - c->suv[2 * b + 1]);
            n++;
        }
        if (!n) continue;
        s /= (double)n;
        sum += s;
        if (s > w) w = s;
        frames++;
    }
    *mean = frames ? sum / (double)frames : INFINITY;
    *worst = frames ? w : INFINITY;
    return frames;
}

static int ami_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pearson correlation of joint j's row between the views over the frames seen in both; NaN
 * when seen in fewer than 3, or when it barely moves (std < 2 px in both views: it says
 * nothing). */
static double ami_paw(const ami_cap *c, size_t j)
{
    double sf = 0, ss = 0, sff = 0, sss = 0, sfs = 0;
    size_t n = 0;
    for (size_t t = 0; t < c->T; t++) {
        size_t i = t * c->J + j;
        if (c->fconf[i] <= 0 || c->sconf[i] <= 0) continue;
        double a = c->fuv[2 * i + 1], b = c->suv[2 * i + 1];
        sf += a;
        ss += b;
        sff += a * a;
        sss += b * b;
        sfs += a * b;
        n++;
    }
    if (n < 3) return NAN;
    double mf = sf / (double)n, ms = ss / (double)n;
    double vf = sff / (double)n - mf * mf, vs = sss / (double)n - ms * ms, cv = sfs / (double)n - mf * ms;
    if ((vf < 4.0 && vs < 4.0) || vf <= 0 || vs <= 0) return NAN;
    return cv / sqrt(vf * vs);
}

am_status ami_sync_measure(const ami_cap *c, const long *foot_joint, size_t foot_count, double *paw,
                           am_sync_stats *s, am_error *err)
{
    const size_t T = c->T, J = c->J;
    double sum = 0.0;
    size_t n_ok = 0;
    for (size_t f = 0; f < foot_count; f++) {
        paw[f] = foot_joint[f] >= 0 && (size_t)foot_joint[f] < J ? ami_paw(c, (size_t)foot_joint[f]) : NAN;
        if (isfinite(paw[f])) sum += paw[f], n_ok++;
    }
    s->paw_score = n_ok ? sum / (double)n_ok : NAN;
    /* Height gap as read. */
    ami_gap(c, 0, 1.0, &s->gap_mean_px, &s->gap_worst_px);
    /* Front/side height ratio: median of h_front / h_side over joints well above the ground.
     * Applied before the lag search: a squashed front view would otherwise swamp the gap that a
     * lag produces. */
    s->front_height_scale = 1.0;
    s->rescale = false;
    double *ratios = am_alloc_array(T * J + 1, sizeof(double));
    if (!ratios) return AM_FAIL(err, AM_E_NOMEM, "sync check: %zu heights", T * J);
    size_t n = 0;
    double minh = 0.1 / c->L.m_per_px; /* 10 cm: ratios of tiny heights are noise */
    for (size_t i = 0; i < T * J; i++) {
        if (c->fconf[i] <= 0 || c->sconf[i] <= 0) continue;
        double hf = c->L.ground_v - c->fuv[2 * i + 1], hs = c->L.ground_v - c->suv[2 * i + 1];
        if (hs > minh) ratios[n++] = hf / hs;
    }
    if (n > 10) {
        qsort(ratios, n, sizeof *ratios, ami_cmp_double);
        double k = ratios[n / 2];
        s->front_height_scale = k;
        s->rescale = fabs(k - 1.0) > 0.03 && k > 0.3 && k < 3.0;
    }
    am_free(ratios);
    const double k = s->rescale ? s->front_height_scale : 1.0;
    int maxlag = c->o.max_lag;
    if (maxlag > (int)T / 4) maxlag = (int)T / 4;
    double gap0, worst;
    ami_gap(c, 0, k, &gap0, &worst);
    double best = gap0;
    s->best_lag = 0;
    for (int L = -maxlag; L <= maxlag; L++) {
        double m;
        if (ami_gap(c, L, k, &m, &worst) < T / 2) continue;
        /* Ties keep the smaller shift. */
        if (m < best - 1e-9 || (fabs(m - best) <= 1e-9 && abs(L) < abs(s->best_lag))) {
            best = m;
            s->best_lag = L;
        }
    }
    s->gap_best_px = best;
    s->warp = s->best_lag != 0 && best <= 0.85 * gap0;
    return AM_OK;
}

am_status ami_sync_check(ami_cap *c, am_capture_sync *sy, am_error *err)
{
    const size_t T = c->T, J = c->J;
    long *fj = am_alloc_array(sy->foot_count + 1, sizeof *fj);
    if (!fj) return AM_FAIL(err, AM_E_NOMEM, "sync check");
    for (size_t f = 0; f < sy->foot_count; f++) fj[f] = am_rig_find_joint(c->rig, sy->feet[f]);
    am_sync_stats s;
    am_status st = ami_sync_measure(c, fj, sy->foot_count, sy->paw_agreement, &s, err);
    am_free(fj);
    if (st < 0) return st;
    sy->paw_score = s.paw_score;
    sy->gap_mean_px = s.gap_mean_px;
    sy->gap_worst_px = s.gap_worst_px;
    sy->best_lag = s.best_lag;
    sy->gap_best_px = s.gap_best_px;
    sy->front_height_scale = s.front_height_scale;
    if (s.rescale) {
        for (size_t i = 0; i < T * J; i++) c->fuv[2 * i + 1] = ami_front_v(c, i, s.front_height_scale);
        sy->height_rescaled = true;
    }
    if (s.warp && !(c->o.flags & AM_CAPTURE_NO_WARP)) {
        /* Warp: front'(t) = front(t + lag); frames shifted in from outside are unseen. */
        int L = s.best_lag;
        double *fu = am_alloc_array(T * J * 2, sizeof(double)), *fc = am_alloc_array(T * J, sizeof(double));
        if (!fu || !fc) {
            am_free(fu);
            am_free(fc);
            return AM_FAIL(err, AM_E_NOMEM, "time warp of %zu frames", T);
        }
        for (size_t t = 0; t < T; t++) {
            long tf = (long)t + L;
            for (size_t j = 0; j < J; j++) {
                size_t i = t * J + j;
                if (tf < 0 || tf >= (long)T) {
                    fc[i] = 0.0;
                    fu[2 * i] = fu[2 * i + 1] = 0.0;
                } else {
                    size_t q = (size_t)tf * J + j;
                    fc[i] = c->fconf[q];
                    fu[2 * i] = c->fuv[2 * q];
                    fu[2 * i + 1] = c->fuv[2 * q + 1];
                }
            }
        }
        memcpy(c->fuv, fu, T * J * 2 * sizeof(double));
        memcpy(c->fconf, fc, T * J * sizeof(double));
        sy->time_warped = true;
        am_free(fu);
        am_free(fc);
    }
    return AM_OK;
}

static am_status ami_sync_check_det(const am_det *det, const am_layout *layout, const char *const *feet,
                                    size_t foot_count, const am_sync_opts *opts, double *paw, am_sync_stats *out,
                                    am_error *err)
{
    AMI_TRY(am_det_validate(det, err));
    ami_cap c = {.T = det->frame_count, .J = det->joint_count};
    if (layout) c.L = *layout;
    else am_layout_default(&c.L);
    AMI_CHECK(err, c.L.m_per_px > 0 && isfinite(c.L.m_per_px) && isfinite(c.L.ground_v), AM_E_VALUE,
              "layout M_PER_PX must be positive and GROUND_V finite");
    c.o.max_lag = opts && opts->max_lag > 0 ? opts->max_lag : 12;
    const size_t T = c.T, J = c.J;
    c.fuv = am_alloc_array(T * J * 2, sizeof(double));
    c.suv = am_alloc_array(T * J * 2, sizeof(double));
    c.fconf = am_alloc_array(T * J, sizeof(double));
    c.sconf = am_alloc_array(T * J, sizeof(double));
    long *fj = am_alloc_array(foot_count + 1, sizeof *fj);
    am_status st = AM_OK;
    if (!c.fuv || !c.suv || !c.fconf || !c.sconf || !fj) {
        st = AM_FAIL(err, AM_E_NOMEM, "sync check of %zu frames", T);
    } else {
        /* Seen = confidence > 0, as the solve reads a det (am_det_validate has checked that
         * those pixels are finite). */
        const am_reals FU = am_det_uv(det, 0), SU = am_det_uv(det, 1), FK = am_det_conf(det, 0), SK = am_det_conf(det, 1);
        for (size_t i = 0; i < T * J; i++) {
            c.fconf[i] = am_reals_at(FK, i);
            c.sconf[i] = am_reals_at(SK, i);
            for (size_t q = 0; q < 2; q++) {
                c.fuv[2 * i + q] = c.fconf[i] > 0 ? am_reals_at(FU, 2 * i + q) : 0.0;
                c.suv[2 * i + q] = c.sconf[i] > 0 ? am_reals_at(SU, 2 * i + q) : 0.0;
            }
        }
        for (size_t f = 0; f < foot_count; f++) {
            fj[f] = -1;
            for (size_t j = 0; j < J && feet[f]; j++)
                if (strcmp(det->names[j], feet[f]) == 0) fj[f] = (long)j;
        }
        st = ami_sync_measure(&c, fj, foot_count, paw, out, err);
    }
    am_free(fj);
    am_free(c.fuv);
    am_free(c.suv);
    am_free(c.fconf);
    am_free(c.sconf);
    return st;
}

am_status am_sync_check(const am_det *det, const am_layout *layout, const char *const *feet, size_t foot_count,
                        const am_sync_opts *opts, double *paw_agreement, am_sync_stats *out, am_error *err)
{
    assert(det && out && (foot_count == 0 || (feet && paw_agreement)));
    double none;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_sync_check_det(det, layout, feet, foot_count, opts, paw_agreement ? paw_agreement : &none,
                                      out, err);
    am_scope_leave(&sc, NULL);
    return st;
}
