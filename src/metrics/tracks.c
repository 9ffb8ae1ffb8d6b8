/* SPEC 5 metrics of point tracks and skeletons (Track2Rig): body size, reconstruction error
 * over all / hidden / visible entries, and the symmetric-chamfer joint error. */
#include <math.h>

#include "anymove/metrics.h"
#include "core/internal.h"

am_status am_track_recon_error(const float *pred, const float *truth, const uint8_t *visible, size_t T,
                               size_t N, am_track_errors *out, am_error *err)
{
    AMI_CHECK(err, T > 0 && N > 0, AM_E_EMPTY, "no entries to compare");
    double body = am_body_size_f32(truth, N, NULL);
    AMI_CHECK(err, body > 0.0, AM_E_DEGENERATE, "true points at frame 0 have zero extent");
    double s_all = 0.0, s_hid = 0.0;
    size_t n_hid = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++) {
            const float *a = pred + (t * N + n) * 3, *b = truth + (t * N + n) * 3;
            if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]))
                return AM_FAIL(err, AM_E_NONFINITE, "prediction at frame %zu, point %zu", t, n);
            double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
            double e = sqrt(dx * dx + dy * dy + dz * dz);
            s_all += e;
            if (visible && !visible[t * N + n]) s_hid += e, n_hid++;
        }
    size_t total = T * N;
    out->body_size = body;
    out->recon_all = 100.0 * s_all / (double)total / body;
    out->recon_hidden = n_hid ? 100.0 * s_hid / (double)n_hid / body : 0.0;
    out->recon_visible = total > n_hid ? 100.0 * (s_all - s_hid) / (double)(total - n_hid) / body : 0.0;
    out->hidden_count = n_hid;
    return AM_OK;
}

static double ami_dist2(const double p[3], const float q[3])
{
    double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

double am_joint_chamfer(const double *pred, size_t P, const float *truth, size_t J, size_t T)
{
    if (!P || !J || !T) return NAN;
    double sum = 0.0;
    for (size_t t = 0; t < T; t++) {
        const double *pp = pred + t * P * 3;
        const float *tt = truth + t * J * 3;
        double a = 0.0, b = 0.0;
        for (size_t j = 0; j < J; j++) {
            double best = INFINITY;
            for (size_t p = 0; p < P; p++) best = fmin(best, ami_dist2(pp + p * 3, tt + j * 3));
            a += sqrt(best);
        }
        for (size_t p = 0; p < P; p++) {
            double best = INFINITY;
            for (size_t j = 0; j < J; j++) best = fmin(best, ami_dist2(pp + p * 3, tt + j * 3));
            b += sqrt(best);
        }
        sum += 0.5 * (a / (double)J + b / (double)P);
    }
    return sum / (double)T;
}
