/* --bones auto: the bone count chosen from the clustering error curve (docs/track2rig.md). */
#include "decompose_internal.h"

/* The smallest count whose clustering error is within 1.5x the noise floor, or that neither of
 * the next two splits improves by 10% / 15%: a bone must buy a real share of what is left. */
size_t ami_dec_auto_pick(const double *curve, size_t B, double noise_pct)
{
    for (size_t b = 1; b <= B; b++) {
        double e = curve[b - 1];
        double g1 = b + 1 <= B ? 1.0 - curve[b] / e : 0.0;
        double g2 = b + 2 <= B ? 1.0 - curve[b + 1] / e : g1;
        if (e <= 1.5 * noise_pct || (g1 < 0.10 && g2 < 0.15)) return b;
    }
    return B;
}
