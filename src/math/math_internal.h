/* Private math helpers of the library (not in include/anymove/math.h). */
#ifndef ANYMOVE_MATH_INTERNAL_H
#define ANYMOVE_MATH_INTERNAL_H

#include <stdint.h>

/* The library's one deterministic random generator, splitmix64 (G. Steele, D. Lea, C. Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014): one word of state, passes
 * BigCrush, the same stream on every platform for a given seed. Synthetic clips and exams are
 * reproducible from their seed; nothing in the library draws from a shared generator. */
typedef struct ami_rng {
    uint64_t state; /* any value; ami_rng_seed or a brace initializer sets it */
} ami_rng;

void ami_rng_seed(ami_rng *r, uint64_t seed);
uint64_t ami_rng_next(ami_rng *r);
double ami_rng_uniform(ami_rng *r); /* (0, 1): never 0, so log() of it is safe */
double ami_rng_normal(ami_rng *r);  /* N(0, 1), Box-Muller */

#endif
