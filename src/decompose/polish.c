/* Track2Rig least-squares polish: after the robust alternations, more rounds of weights, per-
 * point rest positions and transforms on the plain least-squares objective (no Huber clipping
 * of the pseudo-observations, every track weight 1), kept only if the data looks clean.
 *
 * Why: on exact-LBS clips the robust weighting is what held ours above the plain SSDR anchor.
 * The residuals of a clean clip are not noise but the fit's own error, concentrated where
 * bones blend; the Huber clip (2.5 median residuals) and the Cauchy track weights (3 median
 * track residuals) treat exactly those points as outliers, so the blend regions stop steering
 * the weights, rests and bones (glTF dev clips, free bones: robust 0.0172 %, least squares from
 * the start 0.0111 %; docs/track2rig.md). On clips with drifting or swapped tracks the robust
 * fit is what keeps the bones, so the polish must be undone there.
 *
 * The test, before the polish: the robust fit's median visible residual below
 * AMI_POLISH_MAX_MED of the body size. That is far below any measurement noise (the degraded
 * dev clips, 0.3 % Gaussian noise per axis: medians 0.27-0.72 %; the clean ones 0.000002-0.024 %),
 * so what the robust weights clip there is the fit's own blend error. Above it (noisy data)
 * the polish is not run: Huber at 2.5 medians rarely clips Gaussian noise and the track weights
 * stay near 1, so it would change little, and it would drop the outlier protection where real
 * trackers need it. After the polish, a guard: if the mean visible error did not drop, the
 * robust state is put back as it was (transforms, weights, rests, track weights). Kept, the
 * decomposition stays on least squares for the skeleton's refit too (ami_dec.plain).
 */
#include <string.h>

#include "core/internal.h"
#include "decompose_internal.h"

/* median visible residual, share of the body size, below which the residuals are model error
 * (about the log-midpoint of the dev clips' 0.024 % clean and 0.27 % degraded extremes) */
#define AMI_POLISH_MAX_MED 1e-3

am_status ami_dec_polish(ami_dec *d, size_t rounds, bool *kept, bool *pass_done, double *err_vis, am_error *err)
{
    *kept = false;
    *pass_done = false;
    *err_vis = -1.0;
    if (!rounds || !d->robust) return AM_OK; /* the baseline is least squares already */
    size_t N = d->N, T = d->T, B = d->B;
    size_t ng = T * d->gs * 12;
    double *G = am_alloc_array(ng, sizeof(double));
    double *rest = am_alloc_array(N * 3, sizeof(double));
    double *w = am_alloc_array(N * AMI_K, sizeof(double));
    int32_t *idx = am_alloc_array(N * AMI_K, sizeof(int32_t));
    double *cn = am_alloc_array(N, sizeof(double));
    am_status st = AM_OK;
    if (!G || !rest || !w || !idx || !cn) {
        st = AM_FAIL(err, AM_E_NOMEM, "least-squares polish of %zu points x %zu frames x %zu bones", N, T, B);
        goto done;
    }
    /* the robust fit's median residual, measured on its final transforms */
    ami_dec_pass_weights(d, true, false, false);
    double med_robust = d->med_res;
    double err_robust = ami_dec_error_visible(d, d->G);
    *err_vis = err_robust;
    if (!(med_robust < AMI_POLISH_MAX_MED * d->body)) {
        /* noisy data: the robust fit as it was, and the pass just run is the one the caller
         * would run next from the same state (p*, the track weights and the median for the
         * refit): it is not run twice, results equal the code without the polish */
        *pass_done = true;
        goto done;
    }
    memcpy(G, d->G, ng * sizeof(double));
    memcpy(rest, d->rest, N * 3 * sizeof(double));
    memcpy(w, d->w, N * AMI_K * sizeof(double));
    memcpy(idx, d->idx, N * AMI_K * sizeof(int32_t));
    memcpy(cn, d->cn, N * sizeof(double));
    d->plain = true;
    for (size_t it = 0; it < rounds; it++) {
        if (!ami_progress("rig: fit bones", 0.99)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "least-squares polish stopped at round %zu", it);
            goto done;
        }
        ami_dec_pass_weights(d, true, true, d->rest_update);
        ami_dec_pass_transforms(d, 1);
    }
    ami_dec_pass_weights(d, true, false, false);
    double err_plain = ami_dec_error_visible(d, d->G);
    if (!(err_plain <= err_robust)) {
        d->plain = false;
        memcpy(d->G, G, ng * sizeof(double));
        memcpy(d->rest, rest, N * 3 * sizeof(double));
        memcpy(d->w, w, N * AMI_K * sizeof(double));
        memcpy(d->idx, idx, N * AMI_K * sizeof(int32_t));
        memcpy(d->cn, cn, N * sizeof(double));
        d->med_res = med_robust;
        d->f_ready = false; /* F and H summed the polish's weights */
    } else {
        *kept = true;
        *err_vis = err_plain;
    }
done:
    am_free(G);
    am_free(rest);
    am_free(w);
    am_free(idx);
    am_free(cn);
    return st;
}
