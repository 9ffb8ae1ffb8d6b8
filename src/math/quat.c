/* Quaternions (w, x, y, z), Hamilton product (include/anymove/math.h). */
#include <math.h>

#include "anymove/math.h"

void am_quat_normalize(const double q[4], double out[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0.0) || !isfinite(n)) {
        am_quat_identity(out);
        return;
    }
    double s = 1.0 / n;
    for (int i = 0; i < 4; i++) out[i] = q[i] * s;
}

void am_quat_canonical(const double q[4], double out[4])
{
    double s = 1.0;
    if (q[0] < 0.0) {
        s = -1.0;
    } else if (q[0] == 0.0) {
        for (int i = 1; i < 4; i++) {
            if (q[i] != 0.0) {
                s = q[i] < 0.0 ? -1.0 : 1.0;
                break;
            }
        }
    }
    for (int i = 0; i < 4; i++) out[i] = s * q[i];
}

void am_quat_from_axis_angle(const double axis[3], double angle, double out[4])
{
    double u[3];
    if (am_vec3_normalize(axis, u) == 0.0) {
        am_quat_identity(out);
        return;
    }
    double s = sin(0.5 * angle);
    out[0] = cos(0.5 * angle);
    out[1] = u[0] * s;
    out[2] = u[1] * s;
    out[3] = u[2] * s;
}

double am_quat_to_axis_angle(const double q[4], double axis[3])
{
    double c[4];
    am_quat_canonical(q, c);
    double s = sqrt(c[1] * c[1] + c[2] * c[2] + c[3] * c[3]);
    if (!(s > 0.0)) {
        am_vec3_set(axis, 1.0, 0.0, 0.0);
        return 0.0;
    }
    /* atan2 stays accurate for small angles, where acos(w) does not. */
    double angle = 2.0 * atan2(s, c[0]);
    am_vec3_set(axis, c[1] / s, c[2] / s, c[3] / s);
    return angle;
}

void am_quat_from_rotvec(const double v[3], double out[4])
{
    double angle = am_vec3_norm(v);
    /* sin(a/2)/a by its series near 0 so tiny rotation vectors keep full precision. */
    double k = angle < 1e-6 ? 0.5 - angle * angle / 48.0 : sin(0.5 * angle) / angle;
    out[0] = cos(0.5 * angle);
    out[1] = v[0] * k;
    out[2] = v[1] * k;
    out[3] = v[2] * k;
}

void am_quat_to_rotvec(const double q[4], double out[3])
{
    double axis[3];
    double angle = am_quat_to_axis_angle(q, axis);
    if (angle == 0.0) {
        am_vec3_set(out, 0.0, 0.0, 0.0);
        return;
    }
    am_vec3_scale(axis, angle, out);
}

void am_quat_to_mat3(const double q[4], double R[9])
{
    double n[4];
    am_quat_normalize(q, n);
    am_quat_unit_to_mat3(n, R);
}

void am_quat_from_mat3(const double R[9], double out[4])
{
    /* Shepperd: solve for the largest of |w|,|x|,|y|,|z| first, so no division by a small
     * number happens. */
    double tr = R[0] + R[4] + R[8];
    double q[4];
    if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
        double s = 2.0 * sqrt(1.0 + tr);
        q[0] = 0.25 * s;
        q[1] = (R[7] - R[5]) / s;
        q[2] = (R[2] - R[6]) / s;
        q[3] = (R[3] - R[1]) / s;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s;
        q[1] = 0.25 * s;
        q[2] = (R[1] + R[3]) / s;
        q[3] = (R[2] + R[6]) / s;
    } else if (R[4] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s;
        q[1] = (R[1] + R[3]) / s;
        q[2] = 0.25 * s;
        q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s;
        q[1] = (R[2] + R[6]) / s;
        q[2] = (R[5] + R[7]) / s;
        q[3] = 0.25 * s;
    }
    am_quat_normalize(q, q);
    am_quat_canonical(q, out);
}

void am_quat_rotate(const double q[4], const double v[3], double out[3])
{
    /* v' = v + 2 w (u x v) + 2 u x (u x v), u the vector part: no matrix needed. */
    double u[3] = {q[1], q[2], q[3]}, t[3], c[3];
    am_vec3_cross(u, v, t);
    am_vec3_scale(t, 2.0, t);
    am_vec3_cross(u, t, c);
    double r[3];
    for (int i = 0; i < 3; i++) r[i] = v[i] + q[0] * t[i] + c[i];
    am_vec3_set(out, r[0], r[1], r[2]);
}

void am_quat_slerp(const double a[4], const double b[4], double t, double out[4])
{
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    double bb[4] = {b[0], b[1], b[2], b[3]};
    if (d < 0.0) {
        d = -d;
        for (int i = 0; i < 4; i++) bb[i] = -bb[i];
    }
    double ka, kb;
    if (d > 0.9995) {
        /* Nearly equal: sin(theta) is tiny, linear interpolation is exact enough. */
        ka = 1.0 - t;
        kb = t;
    } else {
        double theta = acos(d), s = sin(theta);
        ka = sin((1.0 - t) * theta) / s;
        kb = sin(t * theta) / s;
    }
    double r[4];
    for (int i = 0; i < 4; i++) r[i] = ka * a[i] + kb * bb[i];
    am_quat_normalize(r, out);
}

double am_quat_angle_between(const double a[4], const double b[4])
{
    double ca[4], r[4];
    am_quat_conj(a, ca);
    am_quat_mul(ca, b, r);
    double s = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    return 2.0 * atan2(s, fabs(r[0]));
}

void am_quat_from_two_vectors(const double a[3], const double b[3], double out[4])
{
    double ua[3], ub[3];
    if (am_vec3_normalize(a, ua) == 0.0 || am_vec3_normalize(b, ub) == 0.0) {
        am_quat_identity(out);
        return;
    }
    double d = am_vec3_dot(ua, ub), c[3];
    am_vec3_cross(ua, ub, c);
    double s = am_vec3_norm(c);
    if (d > 0.0 && !(s > 0.0)) {
        am_quat_identity(out);
        return;
    }
    if (d < 0.0 && !(s > 1e-14)) {
        /* Antiparallel: the cross product is rounding noise, not a direction. */
        double p[3];
        am_vec3_perpendicular(ua, p);
        out[0] = 0.0;
        out[1] = p[0];
        out[2] = p[1];
        out[3] = p[2];
        return;
    }
    /* atan2 of (sin, cos) keeps the angle exact near 180 degrees, where (1 + cos, sin * axis)
     * loses every digit of 1 + cos. */
    double half = 0.5 * atan2(s, d), k = sin(half) / s;
    out[0] = cos(half);
    out[1] = c[0] * k;
    out[2] = c[1] * k;
    out[3] = c[2] * k;
}

void am_quat_swing_twist(const double q[4], const double axis[3], double swing[4],
                         double twist[4])
{
    double u[3];
    am_vec3_normalize(axis, u);
    double p = q[1] * u[0] + q[2] * u[1] + q[3] * u[2];
    double t[4] = {q[0], p * u[0], p * u[1], p * u[2]};
    double n2 = t[0] * t[0] + p * p;
    if (n2 < 1e-24) {
        /* A 180-degree swing: the twist is undetermined, take none. */
        am_quat_identity(t);
    } else {
        am_quat_normalize(t, t);
    }
    double ct[4], s[4];
    am_quat_conj(t, ct);
    am_quat_mul(q, ct, s);
    for (int i = 0; i < 4; i++) {
        swing[i] = s[i];
        twist[i] = t[i];
    }
}
