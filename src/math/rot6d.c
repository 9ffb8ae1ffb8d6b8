/* 6D rotation representation (Zhou et al., "On the Continuity of Rotation Representations in
 * Neural Networks", CVPR 2019): the first two columns of R. */
#include <math.h>

#include "anymove/math.h"

void am_rot6d_from_mat3(const double R[9], double d6[6])
{
    double c0x = R[0], c0y = R[3], c0z = R[6], c1x = R[1], c1y = R[4], c1z = R[7];
    d6[0] = c0x;
    d6[1] = c0y;
    d6[2] = c0z;
    d6[3] = c1x;
    d6[4] = c1y;
    d6[5] = c1z;
}

void am_rot6d_to_mat3(const double d6[6], double R[9])
{
    double a[3] = {d6[0], d6[1], d6[2]}, b[3] = {d6[3], d6[4], d6[5]};
    double x[3], y[3], z[3];
    double na = am_vec3_normalize(a, x);
    if (!(na > 1e-300) || !isfinite(na)) {
        am_mat3_identity(R);
        return;
    }
    am_vec3_madd(b, -am_vec3_dot(x, b), x, y);
    double nb = am_vec3_normalize(y, y);
    if (!(nb > 1e-12 * am_vec3_norm(b)) || !(nb > 1e-300) || !isfinite(nb)) {
        am_mat3_identity(R);
        return;
    }
    am_vec3_cross(x, y, z);
    R[0] = x[0]; R[1] = y[0]; R[2] = z[0];
    R[3] = x[1]; R[4] = y[1]; R[5] = z[1];
    R[6] = x[2]; R[7] = y[2]; R[8] = z[2];
}
