/* vec3 helpers (include/anymove/math.h). */
#include <math.h>

#include "anymove/math.h"

void am_vec3_set(double out[3], double x, double y, double z)
{
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void am_vec3_add(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] + b[0];
    out[1] = a[1] + b[1];
    out[2] = a[2] + b[2];
}

void am_vec3_sub(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

void am_vec3_scale(const double a[3], double s, double out[3])
{
    out[0] = a[0] * s;
    out[1] = a[1] * s;
    out[2] = a[2] * s;
}

void am_vec3_madd(const double a[3], double s, const double b[3], double out[3])
{
    out[0] = a[0] + s * b[0];
    out[1] = a[1] + s * b[1];
    out[2] = a[2] + s * b[2];
}

double am_vec3_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void am_vec3_cross(const double a[3], const double b[3], double out[3])
{
    /* Temporaries so that out may alias a or b. */
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

double am_vec3_norm(const double a[3])
{
    return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

double am_vec3_dist(const double a[3], const double b[3])
{
    double d[3];
    am_vec3_sub(a, b, d);
    return am_vec3_norm(d);
}

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
