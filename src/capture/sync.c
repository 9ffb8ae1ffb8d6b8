/* Do the two views tell one story? A joint sits on the same row in both halves (SPEC 3), so
 * heights compare directly: per-foot paw agreement (Pearson of v over the clip), the height
 * gap, the constant lag that minimises it (front time-warped onto side when that cuts the gap
 * by 15% or more), and the front/side height ratio (a video model may squash one view). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

/* Height gap with the front shifted by lag: mean over frames of the per-frame mean |dv|, and
 * the worst frame. Returns the number of frames compared. */
static size_t ami_gap(const ami_cap *c, int lag, double *mean, double *worst)
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
            s += fabs(c->fuv[2 * a + 1] - c->suv[2 * b + 1]);
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

void ami_sync_check(ami_cap *c, const am_creature *cr, am_capture_sync *sy)
{
    const size_t T = c->T, J = c->J;
    /* Paw agreement per foot. */
    sy->paw_score = NAN;
    if (sy->foot_count) {
        double sum = 0.0;
        size_t n_ok = 0;
        for (size_t f = 0; f < sy->foot_count; f++) {
            sy->paw_agreement[f] = NAN;
            int j = am_rig_find_joint(c->rig, sy->feet[f]);
            if (j < 0) continue;
            double sf = 0, ss = 0, sff = 0, sss = 0, sfs = 0;
            size_t n = 0;
            for (size_t t = 0; t < T; t++) {
                size_t i = t * J + (size_t)j;
                if (c->fconf[i] <= 0 || c->sconf[i] <= 0) continue;
                double a = c->fuv[2 * i + 1], b = c->suv[2 * i + 1];
                sf += a;
                ss += b;
                sff += a * a;
                sss += b * b;
                sfs += a * b;
                n++;
            }
            if (n < 3) continue;
            double mf = sf / n, ms = ss / n;
            double vf = sff / n - mf * mf, vs = sss / n - ms * ms, cv = sfs / n - mf * ms;
            /* A foot that barely moves (std < 2 px in both views) says nothing: null. */
            if (vf < 4.0 && vs < 4.0) continue;
            if (vf <= 0 || vs <= 0) continue;
            sy->paw_agreement[f] = cv / sqrt(vf * vs);
            sum += sy->paw_agreement[f];
            n_ok++;
        }
        if (n_ok) sy->paw_score = sum / (double)n_ok;
    }
    (void)cr;
    /* Height gap as read, and the best constant lag. */
    double worst;
    ami_gap(c, 0, &sy->gap_mean_px, &sy->gap_worst_px);
    /* Front/side height ratio: median of h_front / h_side over joints well above the ground.
     * Corrected before the lag search: a squashed front view would otherwise swamp the gap
     * that a lag produces. */
    sy->front_height_scale = 1.0;
    double *ratios = am_alloc_array(T * J + 1, sizeof(double));
    if (ratios) {
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
            sy->front_height_scale = k;
            if (fabs(k - 1.0) > 0.03 && k > 0.3 && k < 3.0) {
                for (size_t i = 0; i < T * J; i++)
                    c->fuv[2 * i + 1] = c->L.ground_v - (c->L.ground_v - c->fuv[2 * i + 1]) / k;
                sy->height_rescaled = true;
            }
        }
        am_free(ratios);
    }
    int maxlag = c->o.max_lag;
    if (maxlag > (int)T / 4) maxlag = (int)T / 4;
    double gap0;
    ami_gap(c, 0, &gap0, &worst);
    double best = gap0;
    sy->best_lag = 0;
    for (int L = -maxlag; L <= maxlag; L++) {
        double m;
        if (ami_gap(c, L, &m, &worst) < T / 2) continue;
        /* Ties keep the smaller shift. */
        if (m < best - 1e-9 || (fabs(m - best) <= 1e-9 && abs(L) < abs(sy->best_lag))) {
            best = m;
            sy->best_lag = L;
        }
    }
    sy->gap_best_px = best;
    if (sy->best_lag != 0 && !(c->o.flags & AM_CAPTURE_NO_WARP) && best <= 0.85 * gap0) {
        /* Warp: front'(t) = front(t + lag); frames shifted in from outside are unseen. */
        int L = sy->best_lag;
        double *fu = am_alloc_array(T * J * 2, sizeof(double)), *fc = am_alloc_array(T * J, sizeof(double));
        if (fu && fc) {
            for (size_t t = 0; t < T; t++) {
                long tf = (long)t + L;
                for (size_t j = 0; j < J; j++) {
                    size_t i = t * J + j;
                    if (tf < 0 || tf >= (long)T) {
                        fc[i] = 0.0;
                        fu[2 * i] = fu[2 * i + 1] = 0.0;
                    } else {
                        size_t k = (size_t)tf * J + j;
                        fc[i] = c->fconf[k];
                        fu[2 * i] = c->fuv[2 * k];
                        fu[2 * i + 1] = c->fuv[2 * k + 1];
                    }
                }
            }
            memcpy(c->fuv, fu, T * J * 2 * sizeof(double));
            memcpy(c->fconf, fc, T * J * sizeof(double));
            sy->time_warped = true;
        }
        am_free(fu);
        am_free(fc);
    }
}
