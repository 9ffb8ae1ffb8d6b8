/* 3x3 and 4x4 matrices, row-major, acting on column vectors (include/anymove/math.h). */
#include <math.h>
#include <string.h>

#include "anymove/math.h"

int am_mat3_inverse(const double A[9], double out[9])
{
    double det = am_mat3_det(A);
    if (!(fabs(det) >= 1e-300) || !isfinite(det)) return 0;
    double k = 1.0 / det, r[9];
    r[0] = (A[4] * A[8] - A[5] * A[7]) * k;
    r[1] = (A[2] * A[7] - A[1] * A[8]) * k;
    r[2] = (A[1] * A[5] - A[2] * A[4]) * k;
    r[3] = (A[5] * A[6] - A[3] * A[8]) * k;
    r[4] = (A[0] * A[8] - A[2] * A[6]) * k;
    r[5] = (A[2] * A[3] - A[0] * A[5]) * k;
    r[6] = (A[3] * A[7] - A[4] * A[6]) * k;
    r[7] = (A[1] * A[6] - A[0] * A[7]) * k;
    r[8] = (A[0] * A[4] - A[1] * A[3]) * k;
    memcpy(out, r, sizeof r);
    return 1;
}

double am_mat3_angle_between(const double A[9], const double B[9])
{
    double tr = 0.0;
    for (int i = 0; i < 9; i++) tr += A[i] * B[i]; /* trace(A^T B) */
    double c = 0.5 * (tr - 1.0);
    if (c > 1.0) c = 1.0;
    if (c < -1.0) c = -1.0;
    return acos(c);
}

void am_mat3_rot_x(double a, double R[9])
{
    double c = cos(a), s = sin(a);
    R[0] = 1.0; R[1] = 0.0; R[2] = 0.0;
    R[3] = 0.0; R[4] = c;   R[5] = -s;
    R[6] = 0.0; R[7] = s;   R[8] = c;
}

void am_mat3_rot_y(double a, double R[9])
{
    double c = cos(a), s = sin(a);
    R[0] = c;   R[1] = 0.0; R[2] = s;
    R[3] = 0.0; R[4] = 1.0; R[5] = 0.0;
    R[6] = -s;  R[7] = 0.0; R[8] = c;
}

void am_mat3_rot_z(double a, double R[9])
{
    double c = cos(a), s = sin(a);
    R[0] = c;   R[1] = -s;  R[2] = 0.0;
    R[3] = s;   R[4] = c;   R[5] = 0.0;
    R[6] = 0.0; R[7] = 0.0; R[8] = 1.0;
}

int am_mat4_inverse(const double A[16], double out[16])
{
    /* Laplace expansion by complementary 2x2 minors of the top two and bottom two rows. */
    double s0 = A[0] * A[5] - A[4] * A[1];
    double s1 = A[0] * A[6] - A[4] * A[2];
    double s2 = A[0] * A[7] - A[4] * A[3];
    double s3 = A[1] * A[6] - A[5] * A[2];
    double s4 = A[1] * A[7] - A[5] * A[3];
    double s5 = A[2] * A[7] - A[6] * A[3];
    double c5 = A[10] * A[15] - A[14] * A[11];
    double c4 = A[9] * A[15] - A[13] * A[11];
    double c3 = A[9] * A[14] - A[13] * A[10];
    double c2 = A[8] * A[15] - A[12] * A[11];
    double c1 = A[8] * A[14] - A[12] * A[10];
    double c0 = A[8] * A[13] - A[12] * A[9];
    double det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    if (!(fabs(det) >= 1e-300) || !isfinite(det)) return 0;
    double k = 1.0 / det, r[16];
    r[0] = (A[5] * c5 - A[6] * c4 + A[7] * c3) * k;
    r[1] = (-A[1] * c5 + A[2] * c4 - A[3] * c3) * k;
    r[2] = (A[13] * s5 - A[14] * s4 + A[15] * s3) * k;
    r[3] = (-A[9] * s5 + A[10] * s4 - A[11] * s3) * k;
    r[4] = (-A[4] * c5 + A[6] * c2 - A[7] * c1) * k;
    r[5] = (A[0] * c5 - A[2] * c2 + A[3] * c1) * k;
    r[6] = (-A[12] * s5 + A[14] * s2 - A[15] * s1) * k;
    r[7] = (A[8] * s5 - A[10] * s2 + A[11] * s1) * k;
    r[8] = (A[4] * c4 - A[5] * c2 + A[7] * c0) * k;
    r[9] = (-A[0] * c4 + A[1] * c2 - A[3] * c0) * k;
    r[10] = (A[12] * s4 - A[13] * s2 + A[15] * s0) * k;
    r[11] = (-A[8] * s4 + A[9] * s2 - A[11] * s0) * k;
    r[12] = (-A[4] * c3 + A[5] * c1 - A[6] * c0) * k;
    r[13] = (A[0] * c3 - A[1] * c1 + A[2] * c0) * k;
    r[14] = (-A[12] * s3 + A[13] * s1 - A[14] * s0) * k;
    r[15] = (A[8] * s3 - A[9] * s1 + A[10] * s0) * k;
    memcpy(out, r, sizeof r);
    return 1;
}

