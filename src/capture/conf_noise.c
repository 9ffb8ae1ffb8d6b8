/* What a view's confidences say about its pixel noise, measured on the clip itself.
 *
 * The fit weights a reading's squared residual by its confidence. That is right only when the
 * noise's variance falls as 1 / conf; a reader's confidence may say much more (exam.py's noise
 * grows ~3x over its confidences 1 -> 0.7: the best weights then span ~10x) or nothing at all
 * (anymove exam's confidences are drawn apart from its noise). So each view's noise is measured
 * against its confidence: every reading whose track is seen two frames either side is compared
 * with the cubic through those four (exact on any cubic motion, so what is left is noise),
 *     r = uv_t - (-uv_{t-2} + 4 uv_{t-1} + 4 uv_{t+1} - uv_{t+2}) / 6,
 *     E[r^2] = sigma_t^2 + (1 + 16 + 16 + 1) / 36 * E[sigma^2],
 * the readings are cut by confidence into AMI_CN_BINS bins of equal count, each bin's variance
 * is its median r^2 less the neighbours' share, and log variance is fitted by a line in the
 * confidence (two numbers from thousands of readings: a flat line where the confidence says
 * nothing). Each reading's weight is then 1 / variance, exp(slope (1 - conf)) (slope <= 0:
 * never raising a less confident reading over a surer one), scaled to the confidences' mean and
 * capped at 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

#define AMI_CN_BINS 6
/* fewer readings than this per bin and the view keeps its confidences */
#define AMI_CN_MIN_PER_BIN 30

typedef struct ami_cn_sample {
    double c, r2;
} ami_cn_sample;

static int ami_cn_cmp(const void *a, const void *b)
{
    double x = ((const ami_cn_sample *)a)->c, y = ((const ami_cn_sample *)b)->c;
    return (x > y) - (x < y);
}

am_status ami_conf_noise_weights(const double *uv, double *conf, size_t T, size_t J, double *slope_out,
                                 am_error *err)
{
    *slope_out = NAN;
    if (T < 5) return AM_OK;
    ami_cn_sample *s = am_alloc_array(T * J, sizeof *s);
    double *v = am_alloc_array(T * J, sizeof *v);
    if (!s || !v) {
        am_free(s);
        am_free(v);
        return AM_FAIL(err, AM_E_NOMEM, "confidence weights of %zu frames", T);
    }
    size_t n = 0;
    for (size_t t = 2; t + 2 < T; t++)
        for (size_t j = 0; j < J; j++) {
            const size_t nb[4] = {t - 2, t - 1, t + 1, t + 2};
            const double k[4] = {-1.0 / 6.0, 4.0 / 6.0, 4.0 / 6.0, -1.0 / 6.0};
            if (!(conf[t * J + j] > 0)) continue;
            bool seen = true;
            for (int q = 0; q < 4; q++) seen &= conf[nb[q] * J + j] > 0;
            if (!seen) continue;
            double r2 = 0.0;
            for (int a = 0; a < 2; a++) {
                double p = 0.0;
                for (int q = 0; q < 4; q++) p += k[q] * uv[(nb[q] * J + j) * 2 + (size_t)a];
                double r = uv[(t * J + j) * 2 + (size_t)a] - p;
                r2 += 0.5 * r * r;
            }
            s[n++] = (ami_cn_sample){conf[t * J + j], r2};
        }
    if (n < AMI_CN_BINS * AMI_CN_MIN_PER_BIN) goto done;
    for (size_t i = 0; i < n; i++) v[i] = s[i].r2;
    /* medians, not means: swapped labels and gross misreadings are in these residuals too */
    const double all = ami_tri_quantile(v, n, 0.5);
    const double share = (34.0 / 36.0) * all / (1.0 + 34.0 / 36.0), floor = 0.1 * (all - share);
    if (!(all > 0)) goto done;
    qsort(s, n, sizeof *s, ami_cn_cmp);
    double bc[AMI_CN_BINS], bl[AMI_CN_BINS];
    for (size_t b = 0; b < AMI_CN_BINS; b++) {
        size_t i0 = n * b / AMI_CN_BINS, i1 = n * (b + 1) / AMI_CN_BINS;
        for (size_t i = i0; i < i1; i++) v[i - i0] = s[i].c;
        bc[b] = ami_tri_quantile(v, i1 - i0, 0.5);
        for (size_t i = i0; i < i1; i++) v[i - i0] = s[i].r2;
        double var = ami_tri_quantile(v, i1 - i0, 0.5) - share;
        bl[b] = log(var > floor ? var : floor);
    }
    double mc = 0.0, ml = 0.0, sxx = 0.0, sxy = 0.0;
    for (size_t b = 0; b < AMI_CN_BINS; b++) {
        mc += bc[b] / AMI_CN_BINS;
        ml += bl[b] / AMI_CN_BINS;
    }
    for (size_t b = 0; b < AMI_CN_BINS; b++) {
        sxx += (bc[b] - mc) * (bc[b] - mc);
        sxy += (bc[b] - mc) * (bl[b] - ml);
    }
    /* one confidence for every reading: nothing to tell apart */
    if (!(sxx > 1e-12)) goto done;
    double slope = sxy / sxx;
    if (slope > 0) slope = 0; /* noise that grows with the confidence: keep the readings equal */
    *slope_out = slope;
    /* The weights' mean stays the confidences' (the level the fit's smoothness was weighed
     * against: lower weights all round would smooth more, a different setting), capped at 1. */
    double sum_c = 0.0, sum_w = 0.0;
    for (size_t i = 0; i < T * J; i++)
        if (conf[i] > 0) {
            sum_c += conf[i];
            sum_w += exp(slope * (1.0 - conf[i]));
        }
    const double level = sum_c / sum_w;
    for (size_t i = 0; i < T * J; i++)
        if (conf[i] > 0) {
            double w = level * exp(slope * (1.0 - conf[i]));
            conf[i] = w < 1.0 ? w : 1.0;
        }
done:
    am_free(s);
    am_free(v);
    return AM_OK;
}
