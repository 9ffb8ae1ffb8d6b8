/* Euler XYZ (Blender's XYZ mode): R = Rz(z) * Ry(y) * Rx(x) (include/anymove/math.h). */
#include <math.h>

#include "anymove/math.h"

/* Below this |cos y| the X and Z rotations act about the same axis (gimbal lock). */
#define AMI_GIMBAL_EPS 1e-9

void am_euler_xyz_to_mat3(const double e[3], double R[9])
{
    double cx = cos(e[0]), sx = sin(e[0]);
    double cy = cos(e[1]), sy = sin(e[1]);
    double cz = cos(e[2]), sz = sin(e[2]);
    R[0] = cy * cz;
    R[1] = sx * sy * cz - cx * sz;
    R[2] = cx * sy * cz + sx * sz;
    R[3] = cy * sz;
    R[4] = sx * sy * sz + cx * cz;
    R[5] = cx * sy * sz - sx * cz;
    R[6] = -sy;
    R[7] = sx * cy;
    R[8] = cx * cy;
}

/* Gimbal lock: with sin y = +1, R depends on x - z only; with sin y = -1, on x + z.
 * Given x, returns the z that reproduces R. */
static double ami_gimbal_z(const double R[9], double sy, double x)
{
    /* sy = +1: R01 = sin(x - z), R11 = cos(x - z). sy = -1: R01 = -sin(x + z), R11 = cos(x + z). */
    if (sy > 0.0) return x - atan2(R[1], R[4]);
    return atan2(-R[1], R[4]) - x;
}

static int ami_euler_decompose(const double R[9], double e[3], double *sy_out)
{
    double cy = sqrt(R[0] * R[0] + R[3] * R[3]);
    double s = -R[6];
    if (s > 1.0) s = 1.0;
    if (s < -1.0) s = -1.0;
    if (cy < AMI_GIMBAL_EPS) {
        double sy = s >= 0.0 ? 1.0 : -1.0;
        e[0] = 0.0;
        e[1] = sy * (AM_PI / 2.0);
        e[2] = ami_gimbal_z(R, sy, 0.0);
        *sy_out = sy;
        return 1;
    }
    e[0] = atan2(R[7], R[8]);
    e[1] = atan2(s, cy);
    e[2] = atan2(R[3], R[0]);
    *sy_out = 0.0;
    return 0;
}

void am_mat3_to_euler_xyz(const double R[9], double e[3])
{
    double sy;
    (void)ami_euler_decompose(R, e, &sy);
}

void am_euler_xyz_to_quat(const double e[3], double q[4])
{
    /* q = qz * qy * qx, expanded. */
    double cx = cos(0.5 * e[0]), sx = sin(0.5 * e[0]);
    double cy = cos(0.5 * e[1]), sy = sin(0.5 * e[1]);
    double cz = cos(0.5 * e[2]), sz = sin(0.5 * e[2]);
    double r[4];
    r[0] = cz * cy * cx + sz * sy * sx;
    r[1] = cz * cy * sx - sz * sy * cx;
    r[2] = cz * sy * cx + sz * cy * sx;
    r[3] = sz * cy * cx - cz * sy * sx;
    am_quat_canonical(r, q);
}

void am_quat_to_euler_xyz(const double q[4], double e[3])
{
    double R[9];
    am_quat_to_mat3(q, R);
    am_mat3_to_euler_xyz(R, e);
}

/* a + 2*pi*k nearest to ref. */
static double ami_wrap_near(double a, double ref)
{
    double k = floor((ref - a) / (2.0 * AM_PI) + 0.5);
    return a + 2.0 * AM_PI * k;
}

void am_mat3_to_euler_xyz_near(const double R[9], const double near[3], double e[3])
{
    double base[3], sy;
    if (ami_euler_decompose(R, base, &sy)) {
        /* Every x works at gimbal lock: keep the previous one and let z absorb the rest. */
        double x = near[0];
        e[0] = x;
        e[1] = base[1];
        e[2] = ami_wrap_near(ami_gimbal_z(R, sy, x), near[2]);
        return;
    }
    double alt[3] = {base[0] + AM_PI, AM_PI - base[1], base[2] + AM_PI};
    double best = 0.0;
    for (int c = 0; c < 2; c++) {
        const double *src = c ? alt : base;
        double cand[3], d = 0.0;
        for (int i = 0; i < 3; i++) {
            cand[i] = ami_wrap_near(src[i], near[i]);
            d += (cand[i] - near[i]) * (cand[i] - near[i]);
        }
        if (c == 0 || d < best) {
            best = d;
            e[0] = cand[0];
            e[1] = cand[1];
            e[2] = cand[2];
        }
    }
}

void am_mat3_to_joint_angles(const double R[9], const double *near, double a[3])
{
    /* Rx Rz Ry = [[cz cy, -sz, cz sy], [.., cx cz, ..], [.., sx cz, ..]]. */
    double sz = -R[1];
    if (sz > 1.0) sz = 1.0;
    if (sz < -1.0) sz = -1.0;
    double cz = sqrt(R[0] * R[0] + R[2] * R[2]);
    a[1] = atan2(sz, cz);
    if (cz < AMI_GIMBAL_EPS) {
        /* Only a combination of flexion and rotation is fixed: keep the rotation, and read the
         * flexion from M = R Ry^T = Rx Rz, whose last column is Rx (0, 0, 1) = (0, -sx, cx). */
        a[2] = near ? near[2] : 0.0;
        double c = cos(a[2]), s = sin(a[2]);
        const double RyT[9] = {c, 0, -s, 0, 1, 0, s, 0, c};
        double M[9];
        am_mat3_mul(R, RyT, M);
        a[0] = atan2(-M[5], M[8]);
    } else {
        a[0] = atan2(R[7], R[4]);
        a[2] = atan2(R[2], R[0]);
    }
    if (near) {
        a[0] = ami_wrap_near(a[0], near[0]);
        a[2] = ami_wrap_near(a[2], near[2]);
    }
}
