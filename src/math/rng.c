/* The library's random generator (src/math/math_internal.h). */
#include <math.h>

#include "anymove/math.h"
#include "math/math_internal.h"

void ami_rng_seed(ami_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t ami_rng_next(ami_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double ami_rng_uniform(ami_rng *r)
{
    /* the top 53 bits, centred in their interval of width 2^-53 */
    return ((double)(ami_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

double ami_rng_normal(ami_rng *r)
{
    double u1 = ami_rng_uniform(r), u2 = ami_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * AM_PI * u2);
}
