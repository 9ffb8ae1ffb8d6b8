/* vec3 helpers (include/anymove/math.h). */
#include <math.h>

#include "anymove/math.h"

double am_vec3_normalize(const double a[3], double out[3])
{
    double n = am_vec3_norm(a);
    if (n > 0.0) {
        am_vec3_scale(a, 1.0 / n, out);
    } else {
        am_vec3_set(out, 0.0, 0.0, 0.0);
    }
    return n;
}

void am_vec3_perpendicular(const double a[3], double out[3])
{
    double ax = fabs(a[0]), ay = fabs(a[1]), az = fabs(a[2]);
    if (!(ax + ay + az > 0.0)) {
        am_vec3_set(out, 1.0, 0.0, 0.0);
        return;
    }
    /* Crossing with the world axis least aligned with a keeps the result well conditioned. */
    double e[3] = {0.0, 0.0, 0.0};
    if (ax <= ay && ax <= az) {
        e[0] = 1.0;
    } else if (ay <= az) {
        e[1] = 1.0;
    } else {
        e[2] = 1.0;
    }
    double c[3];
    am_vec3_cross(a, e, c);
    am_vec3_normalize(c, out);
}
