/* Foot slide of include/anymove/metrics.h (am_foot_slide_add) against a known answer. */
#include <math.h>

#include "am_test.h"
#include "anymove/metrics.h"

/* Two joints over 10 frames. Joint 1 is planted on frames 2..5 and drifts 3 cm in x and 4 cm
 * in y over it (5 cm horizontal) while rising 12 cm (13 cm in 3D), then on frames 7..8 where it
 * drifts 1 cm in x; joint 0 moves a lot but is never planted, so it must not count. */
static void slide_of_a_known_drift(void)
{
    enum { T = 10, J = 2 };
    double P[T][J][3] = {{{0}}};
    for (int t = 0; t < T; t++) {
        P[t][0][0] = 10.0 * t;
        P[t][1][0] = 0.5; /* away from the plants: a jump the mask hides */
    }
    for (int t = 2; t <= 5; t++) {
        double f = (t - 2) / 3.0;
        P[t][1][0] = 0.03 * f, P[t][1][1] = 0.04 * f, P[t][1][2] = 0.12 * f;
    }
    P[7][1][0] = 1.0, P[8][1][0] = 1.01;
    uint8_t c[T] = {0, 0, 1, 1, 1, 1, 0, 1, 1, 0};
    am_slide_acc h = {0}, d = {0};
    am_foot_slide_add(&P[0][0][0], T, J, 1, c, true, &h);
    AM_CHECK(h.plants == 2);
    AM_CHECK_NEAR(h.max, 0.05, 1e-12);
    AM_CHECK_NEAR(h.sum / (double)h.plants, (0.05 + 0.01) / 2, 1e-12);
    am_foot_slide_add(&P[0][0][0], T, J, 1, c, false, &d);
    AM_CHECK(d.plants == 2);
    AM_CHECK_NEAR(d.max, 0.13, 1e-12);
    /* the accumulator sums feet: joint 0 planted on the same frames adds its own drifts */
    am_foot_slide_add(&P[0][0][0], T, J, 0, c, true, &h);
    AM_CHECK(h.plants == 4);
    AM_CHECK_NEAR(h.max, 30.0, 1e-9);
    /* a plant whose first frame is missing is left out; a missing frame inside one is skipped */
    P[2][1][0] = NAN;
    P[8][1][1] = NAN;
    am_slide_acc m = {0};
    am_foot_slide_add(&P[0][0][0], T, J, 1, c, true, &m);
    AM_CHECK(m.plants == 1);
    AM_CHECK(m.sum == 0);
}

#define AM_TESTS(X) X(slide_of_a_known_drift)
AM_TEST_MAIN(AM_TESTS)
