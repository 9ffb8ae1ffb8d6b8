/* --bones auto: the bone count chosen from the clustering error curve (docs/track2rig.md). */
#include <math.h>

#include "decompose_internal.h"

/* The count minimising
 *     ln E'(B) + AMI_AUTO_BONE_COST * (B - 1),   E'(B) = E(B) / sqrt(1 - 2B / N),
 * over B = 1..B_max, the candidates ending at the first count whose error is already at the
 * noise floor. E' is the error corrected for the degrees of freedom the B rigid fits spend
 * (6 per bone and frame against 3 per point and frame): what a split gains by fitting noise
 * alone, which only matters for tiny inputs (10 points: 18% at the third bone).
 * A global minimum, not the first count where a split gains little: the hard clustering often
 * needs two splits to separate a limb pair (the first cut lands across it), so the curve has
 * short plateaus followed by a drop, and stopping on the first plateau left whole limbs
 * unexplained. The log makes the rule scale-free (body size and units do not matter). */
size_t ami_dec_auto_pick(const double *curve, size_t B, double noise_pct, size_t points)
{
    if (B == 0 || !curve) return 1;
    /* an exact fit (E = 0, noise-free rigid input) must not give -inf: below a millionth of
     * the one-bone error every count fits equally well and the cost decides */
    double tiny = isfinite(curve[0]) && curve[0] > 0.0 ? 1e-6 * curve[0] : 1e-12;
    size_t best = 1;
    double best_cost = INFINITY;
    for (size_t b = 1; b <= B; b++) {
        double e = curve[b - 1];
        if (!isfinite(e)) continue; /* no measurement for this count: not a candidate */
        double dof = points ? 1.0 - 2.0 * (double)b / (double)points : 1.0;
        if (dof <= 0.0) break; /* as many parameters as data: nothing is measured any more */
        double cost = log(e > tiny ? e : tiny) - 0.5 * log(dof) + AMI_AUTO_BONE_COST * (double)(b - 1);
        if (cost < best_cost) best_cost = cost, best = b;
        /* a perfect model leaves about the noise: below it a split can only fit noise */
        if (noise_pct > 0.0 && e <= noise_pct) break;
    }
    return best;
}
