/* SPEC 5 body size (include/anymove/math.h). */
#include <math.h>

#include "anymove/math.h"

/* One loop for both element types: exactly one of pd, pf is set. */
static double ami_box_diagonal(const double *pd, const float *pf, size_t n, const uint8_t *mask)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = pd ? pd[i * 3 + (size_t)k] : (double)pf[i * 3 + (size_t)k];
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) continue;
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
        used++;
    }
    if (!used) return 0.0;
    double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    return am_vec3_norm(d);
}

double am_body_size(const double *points, size_t n, const uint8_t *mask)
{
    return ami_box_diagonal(points, NULL, n, mask);
}

double am_body_size_f32(const float *points, size_t n, const uint8_t *mask)
{
    return ami_box_diagonal(NULL, points, n, mask);
}
