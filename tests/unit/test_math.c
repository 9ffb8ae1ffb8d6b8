/* Unit tests of include/anymove/math.h. */
#include <stdint.h>
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "math/math_internal.h"

/* The library's generator, seeded, so failures reproduce. */
static ami_rng g_rng = {0x9E3779B97F4A7C15ull};

static double ami_rand01(void) { return ami_rng_uniform(&g_rng); }

static double ami_rand_range(double a, double b)
{
    return a + (b - a) * ami_rand01();
}

static double ami_rand_normal(void) { return ami_rng_normal(&g_rng); }

static void ami_rand_quat(double q[4])
{
    double r[4] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal(), ami_rand_normal()};
    am_quat_normalize(r, q);
}

static double ami_mat_maxdiff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= m)) m = d;
    }
    return m;
}

static double ami_quat_dist(const double a[4], const double b[4])
{
    /* q and -q are the same rotation. */
    double dp = 0.0, dm = 0.0;
    for (int i = 0; i < 4; i++) {
        dp = fmax(dp, fabs(a[i] - b[i]));
        dm = fmax(dm, fabs(a[i] + b[i]));
    }
    return fmin(dp, dm);
}

static void vec3_basics(void)
{
    double a[3] = {1, 2, 3}, b[3] = {-2, 0.5, 4}, c[3];
    am_vec3_cross(a, b, c);
    AM_CHECK_NEAR(am_vec3_dot(a, c), 0.0, 1e-12);
    AM_CHECK_NEAR(am_vec3_dot(b, c), 0.0, 1e-12);
    am_vec3_cross(a, b, a); /* aliasing is allowed */
    AM_CHECK(ami_mat_maxdiff(a, c, 3) == 0.0);
    double z[3] = {0, 0, 0}, n[3];
    AM_CHECK(am_vec3_normalize(z, n) == 0.0);
    AM_CHECK(n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0);
    AM_CHECK_NEAR(am_vec3_normalize(b, n), sqrt(4 + 0.25 + 16), 1e-12);
    AM_CHECK_NEAR(am_vec3_norm(n), 1.0, 1e-15);
    am_vec3_perpendicular(z, n);
    AM_CHECK(n[0] == 1.0 && n[1] == 0.0 && n[2] == 0.0);
    for (int i = 0; i < 100; i++) {
        double v[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()}, p[3];
        if (i == 0) am_vec3_set(v, 0, 0, 5);
        am_vec3_perpendicular(v, p);
        AM_CHECK_NEAR(am_vec3_norm(p), 1.0, 1e-14);
        AM_CHECK_NEAR(am_vec3_dot(v, p), 0.0, 1e-12);
    }
    double m[3];
    am_vec3_madd(a, 2.0, b, m);
    AM_CHECK_NEAR(m[2], a[2] + 8.0, 1e-12);
    AM_CHECK_NEAR(am_vec3_dist(b, b), 0.0, 0.0);
}

static void quat_mat3_roundtrip(void)
{
    for (int i = 0; i < 2000; i++) {
        double q[4], R[9], q2[4], R2[9], qc[4];
        ami_rand_quat(q);
        if (i == 0) am_quat_identity(q);
        if (i == 1) { q[0] = 0; q[1] = 1; q[2] = 0; q[3] = 0; } /* 180 degrees */
        if (i == 2) { q[0] = 0; q[1] = 0; q[2] = -0.6; q[3] = 0.8; }
        am_quat_to_mat3(q, R);
        AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
        double RtR[9], I[9];
        am_mat3_tmul(R, R, RtR);
        am_mat3_identity(I);
        AM_CHECK(ami_mat_maxdiff(RtR, I, 9) < 1e-14);
        am_quat_from_mat3(R, q2);
        AM_CHECK(q2[0] >= 0.0);
        AM_CHECK_MSG(ami_quat_dist(q, q2) < 1e-12, "case %d: quat differs by %g", i,
                     ami_quat_dist(q, q2));
        am_quat_to_mat3(q2, R2);
        AM_CHECK(ami_mat_maxdiff(R, R2, 9) < 1e-13);
        am_quat_canonical(q, qc);
        AM_CHECK(qc[0] > 0.0 || (qc[0] == 0.0 && (qc[1] > 0 || (qc[1] == 0 && qc[2] >= 0))));
        /* Rotating by the quaternion equals multiplying by its matrix. */
        double v[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()}, a[3], b[3];
        am_quat_rotate(q, v, a);
        am_mat3_mul_vec3(R, v, b);
        AM_CHECK(ami_mat_maxdiff(a, b, 3) < 1e-13);
        /* Composition: R(a*b) = R(a) R(b). */
        double p[4], pq[4], Rp[9], Rpq[9], RpR[9];
        ami_rand_quat(p);
        am_quat_mul(p, q, pq);
        am_quat_to_mat3(p, Rp);
        am_quat_to_mat3(pq, Rpq);
        am_mat3_mul(Rp, R, RpR);
        AM_CHECK(ami_mat_maxdiff(Rpq, RpR, 9) < 1e-13);
    }
    double qz[4] = {0, 0, 0, 0}, n[4];
    am_quat_normalize(qz, n);
    AM_CHECK(n[0] == 1.0 && n[1] == 0.0);
}

static void quat_axis_angle_rotvec(void)
{
    double axis[3] = {0, 0, 2}, q[4], R[9], Rz[9];
    am_quat_from_axis_angle(axis, 0.7, q);
    am_quat_to_mat3(q, R);
    am_mat3_rot_z(0.7, Rz);
    AM_CHECK(ami_mat_maxdiff(R, Rz, 9) < 1e-15);
    for (int i = 0; i < 500; i++) {
        double v[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()}, q1[4], v2[3];
        double ang = ami_rand_range(0.0, AM_PI - 1e-6);
        if (i == 0) ang = 1e-9;
        am_vec3_normalize(v, v);
        am_vec3_scale(v, ang, v);
        am_quat_from_rotvec(v, q1);
        AM_CHECK_NEAR(sqrt(q1[0] * q1[0] + q1[1] * q1[1] + q1[2] * q1[2] + q1[3] * q1[3]), 1.0,
                      1e-15);
        am_quat_to_rotvec(q1, v2);
        AM_CHECK_MSG(ami_mat_maxdiff(v, v2, 3) < 1e-12 * fmax(1.0, ang), "rotvec %d", i);
        double ax[3];
        AM_CHECK_NEAR(am_quat_to_axis_angle(q1, ax), ang, 1e-12);
    }
    double id[4] = {1, 0, 0, 0}, ax[3], rv[3];
    AM_CHECK(am_quat_to_axis_angle(id, ax) == 0.0 && ax[0] == 1.0);
    am_quat_to_rotvec(id, rv);
    AM_CHECK(rv[0] == 0.0 && rv[1] == 0.0 && rv[2] == 0.0);
    /* A negative-w quaternion is the same rotation: angle stays in [0, pi]. */
    double qn[4] = {-0.9, 0.1, -0.2, 0.3}, qp[4];
    am_quat_normalize(qn, qn);
    am_quat_canonical(qn, qp);
    double a1 = am_quat_to_axis_angle(qn, ax);
    AM_CHECK(a1 >= 0.0 && a1 <= AM_PI);
    AM_CHECK_NEAR(a1, am_quat_to_axis_angle(qp, ax), 1e-15);
}

static void euler_roundtrip_random(void)
{
    for (int i = 0; i < 3000; i++) {
        double e[3] = {ami_rand_range(-AM_PI, AM_PI), ami_rand_range(-AM_PI / 2, AM_PI / 2),
                       ami_rand_range(-AM_PI, AM_PI)};
        double R[9], e2[3], R2[9];
        am_euler_xyz_to_mat3(e, R);
        /* The product is Rz * Ry * Rx (Blender's XYZ). */
        double Rx[9], Ry[9], Rz[9], T[9];
        am_mat3_rot_x(e[0], Rx);
        am_mat3_rot_y(e[1], Ry);
        am_mat3_rot_z(e[2], Rz);
        am_mat3_mul(Ry, Rx, T);
        am_mat3_mul(Rz, T, T);
        AM_CHECK(ami_mat_maxdiff(R, T, 9) < 1e-15);
        am_mat3_to_euler_xyz(R, e2);
        AM_CHECK(e2[1] >= -AM_PI / 2 && e2[1] <= AM_PI / 2);
        am_euler_xyz_to_mat3(e2, R2);
        AM_CHECK_MSG(ami_mat_maxdiff(R, R2, 9) < 1e-12, "euler %d", i);
        if (fabs(fabs(e[1]) - AM_PI / 2) > 1e-4) {
            AM_CHECK(ami_mat_maxdiff(e, e2, 3) < 1e-11);
        }
        /* Via quaternions. */
        double q[4], qR[4], e3[3];
        am_euler_xyz_to_quat(e, q);
        am_quat_from_mat3(R, qR);
        AM_CHECK(ami_quat_dist(q, qR) < 1e-13);
        AM_CHECK(q[0] >= 0.0);
        am_quat_to_euler_xyz(q, e3);
        am_euler_xyz_to_mat3(e3, R2);
        /* Euler angles near gimbal lock are conditioned by 1 / cos y: the quaternion's rounding
         * (about 1e-16) comes back that much larger (1.05e-12 at cos y = 3.2e-4). */
        double tol = 1e-12 + 1e-15 / fabs(cos(e[1]));
        AM_CHECK_MSG(ami_mat_maxdiff(R, R2, 9) < tol, "euler %d: y %.17g, off by %g", i, e[1],
                     ami_mat_maxdiff(R, R2, 9));
    }
}

static void euler_gimbal_lock_as_documented(void)
{
    const double ys[2] = {AM_PI / 2, -AM_PI / 2};
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 50; i++) {
            double e[3] = {ami_rand_range(-3, 3), ys[s], ami_rand_range(-3, 3)};
            double R[9], e2[3], R2[9];
            am_euler_xyz_to_mat3(e, R);
            am_mat3_to_euler_xyz(R, e2);
            AM_CHECK(e2[0] == 0.0);
            AM_CHECK_NEAR(e2[1], ys[s], 1e-12);
            am_euler_xyz_to_mat3(e2, R2);
            AM_CHECK_MSG(ami_mat_maxdiff(R, R2, 9) < 1e-12, "gimbal y=%g case %d: %g", ys[s], i,
                         ami_mat_maxdiff(R, R2, 9));
            /* Pure Z then: with x = 0 the z angle is the combined one. */
            double want_z = s == 0 ? e[2] - e[0] : e[2] + e[0];
            double dz = remainder(e2[2] - want_z, 2 * AM_PI);
            AM_CHECK_NEAR(dz, 0.0, 1e-12);
            /* _near keeps x where it was and still reproduces R. */
            double near[3] = {e[0] + 0.01, e[1], e[2]}, e3[3];
            am_mat3_to_euler_xyz_near(R, near, e3);
            AM_CHECK_NEAR(e3[0], near[0], 0.0);
            am_euler_xyz_to_mat3(e3, R2);
            AM_CHECK(ami_mat_maxdiff(R, R2, 9) < 1e-12);
        }
    }
}

static void euler_near_keeps_continuity(void)
{
    for (int i = 0; i < 500; i++) {
        double e[3] = {ami_rand_range(-10, 10), ami_rand_range(-3, 3), ami_rand_range(-10, 10)};
        double R[9], e2[3], R2[9];
        am_euler_xyz_to_mat3(e, R);
        double near[3] = {e[0] + ami_rand_range(-0.1, 0.1), e[1] + ami_rand_range(-0.1, 0.1),
                          e[2] + ami_rand_range(-0.1, 0.1)};
        am_mat3_to_euler_xyz_near(R, near, e2);
        am_euler_xyz_to_mat3(e2, R2);
        AM_CHECK(ami_mat_maxdiff(R, R2, 9) < 1e-11);
        /* The triple we started from is a candidate and within 0.18 of near. */
        double d = 0.0;
        for (int k = 0; k < 3; k++) d += (e2[k] - near[k]) * (e2[k] - near[k]);
        AM_CHECK_MSG(sqrt(d) < 0.18, "case %d: chose a triple %g away", i, sqrt(d));
        if (fabs(cos(e[1])) > 1e-3) AM_CHECK(ami_mat_maxdiff(e, e2, 3) < 1e-9);
    }
}

static void rot6d_roundtrip(void)
{
    for (int i = 0; i < 1000; i++) {
        double q[4], R[9], d6[6], R2[9];
        ami_rand_quat(q);
        am_quat_to_mat3(q, R);
        am_rot6d_from_mat3(R, d6);
        AM_CHECK(d6[0] == R[0] && d6[1] == R[3] && d6[2] == R[6]);
        AM_CHECK(d6[3] == R[1] && d6[4] == R[4] && d6[5] == R[7]);
        am_rot6d_to_mat3(d6, R2);
        AM_CHECK(ami_mat_maxdiff(R, R2, 9) < 1e-14);
        /* Scaled and skewed input: Gram-Schmidt keeps column 0's direction. */
        double d7[6];
        for (int k = 0; k < 3; k++) {
            d7[k] = 3.0 * d6[k];
            d7[3 + k] = 0.5 * d6[3 + k] + 0.3 * d6[k];
        }
        am_rot6d_to_mat3(d7, R2);
        AM_CHECK(ami_mat_maxdiff(R, R2, 9) < 1e-13);
    }
    double zero[6] = {0}, par[6] = {1, 0, 0, 2, 0, 0}, R[9], I[9];
    am_mat3_identity(I);
    am_rot6d_to_mat3(zero, R);
    AM_CHECK(ami_mat_maxdiff(R, I, 9) == 0.0);
    am_rot6d_to_mat3(par, R);
    AM_CHECK(ami_mat_maxdiff(R, I, 9) == 0.0);
}

static void slerp_endpoints_and_midpoint(void)
{
    for (int i = 0; i < 200; i++) {
        double a[4], b[4], o[4];
        ami_rand_quat(a);
        ami_rand_quat(b);
        am_quat_slerp(a, b, 0.0, o);
        AM_CHECK(ami_quat_dist(a, o) < 1e-14);
        am_quat_slerp(a, b, 1.0, o);
        AM_CHECK(ami_quat_dist(b, o) < 1e-14);
        am_quat_slerp(a, b, 0.5, o);
        double ang = am_quat_angle_between(a, b);
        AM_CHECK(ang >= 0.0 && ang <= AM_PI + 1e-15);
        AM_CHECK_NEAR(am_quat_angle_between(a, o), 0.5 * ang, 1e-12);
        AM_CHECK_NEAR(am_quat_angle_between(o, b), 0.5 * ang, 1e-12);
        double t = ami_rand01();
        am_quat_slerp(a, b, t, o);
        AM_CHECK_NEAR(am_quat_angle_between(a, o), t * ang, 1e-11);
        /* Agrees with the matrix geodesic. */
        double Ra[9], Rb[9];
        am_quat_to_mat3(a, Ra);
        am_quat_to_mat3(b, Rb);
        AM_CHECK_NEAR(am_mat3_angle_between(Ra, Rb), ang, 1e-7);
    }
    /* Nearly equal quaternions take the linear path and stay unit. */
    double a[4] = {1, 0, 0, 0}, b[4], o[4], ax[3] = {0, 1, 0};
    am_quat_from_axis_angle(ax, 1e-4, b);
    am_quat_slerp(a, b, 0.5, o);
    AM_CHECK_NEAR(am_quat_angle_between(a, o), 0.5e-4, 1e-12);
    /* Shortest path: b and -b give the same result. */
    double nb[4] = {-b[0], -b[1], -b[2], -b[3]};
    am_quat_slerp(a, nb, 0.5, o);
    AM_CHECK_NEAR(am_quat_angle_between(a, o), 0.5e-4, 1e-12);
}

static void swing_twist_recomposes(void)
{
    for (int i = 0; i < 500; i++) {
        double q[4], axis[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()};
        double sw[4], tw[4], r[4];
        ami_rand_quat(q);
        am_vec3_normalize(axis, axis);
        am_quat_swing_twist(q, axis, sw, tw);
        am_quat_mul(sw, tw, r);
        AM_CHECK(ami_quat_dist(q, r) < 1e-13);
        /* The twist turns about axis; the swing moves axis without turning about it. */
        double tv[3] = {tw[1], tw[2], tw[3]}, c[3];
        am_vec3_cross(tv, axis, c);
        AM_CHECK(am_vec3_norm(c) < 1e-13);
        AM_CHECK_NEAR(am_vec3_dot(sw + 1, axis), 0.0, 1e-13);
        /* The swing is the minimal rotation taking axis to q(axis). */
        double qa[3], ms[4];
        am_quat_rotate(q, axis, qa);
        am_quat_from_two_vectors(axis, qa, ms);
        AM_CHECK_MSG(ami_quat_dist(sw, ms) < 1e-9, "swing %d differs %g", i,
                     ami_quat_dist(sw, ms));
    }
    /* A pure twist has an identity swing. */
    double ax[3] = {0, 0, 1}, q[4], sw[4], tw[4];
    am_quat_from_axis_angle(ax, 1.2, q);
    am_quat_swing_twist(q, ax, sw, tw);
    AM_CHECK_NEAR(fabs(sw[0]), 1.0, 1e-15);
    AM_CHECK(ami_quat_dist(q, tw) < 1e-15);
    /* A 180-degree swing leaves the twist undetermined: identity. */
    double ay[3] = {0, 1, 0};
    am_quat_from_axis_angle(ay, AM_PI, q);
    am_quat_swing_twist(q, ax, sw, tw);
    AM_CHECK_NEAR(tw[0], 1.0, 1e-12);
    double r[4];
    am_quat_mul(sw, tw, r);
    AM_CHECK(ami_quat_dist(q, r) < 1e-13);
}

static void two_vectors_including_antiparallel(void)
{
    for (int i = 0; i < 500; i++) {
        double a[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()};
        double b[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()};
        if (i == 1) am_vec3_scale(a, 2.5, b);
        if (i == 2) am_vec3_scale(a, -0.3, b);
        if (i == 3) { am_vec3_set(a, 0, -1, 0); am_vec3_set(b, 0, 1, 0); }
        if (i == 4) { am_vec3_set(a, 1, 1e-9, 0); am_vec3_set(b, -1, 0, 0); }
        double q[4], ra[3], ua[3], ub[3];
        am_quat_from_two_vectors(a, b, q);
        am_quat_rotate(q, a, ra);
        am_vec3_normalize(ra, ua);
        am_vec3_normalize(b, ub);
        AM_CHECK_MSG(ami_mat_maxdiff(ua, ub, 3) < 1e-9, "two vectors %d: %g", i,
                     ami_mat_maxdiff(ua, ub, 3));
        /* Minimal: the angle of the rotation equals the angle between a and b. */
        double ax[3];
        double ang = am_quat_to_axis_angle(q, ax);
        double want = acos(fmax(-1.0, fmin(1.0, am_vec3_dot(a, b) / am_vec3_norm(a) / am_vec3_norm(b))));
        AM_CHECK_NEAR(ang, want, 1e-7);
        /* The axis is perpendicular to a. */
        if (ang > 1e-6) AM_CHECK_NEAR(am_vec3_dot(ax, a) / am_vec3_norm(a), 0.0, 1e-9);
    }
    double z[3] = {0, 0, 0}, x[3] = {1, 0, 0}, q[4];
    am_quat_from_two_vectors(z, x, q);
    AM_CHECK(q[0] == 1.0);
}

static void mat3_and_mat4_inverse(void)
{
    for (int i = 0; i < 300; i++) {
        double A[16], Ai[16], P[16], I[16];
        for (int k = 0; k < 16; k++) A[k] = ami_rand_normal();
        am_mat4_identity(I);
        AM_CHECK(am_mat4_inverse(A, Ai) == 1);
        am_mat4_mul(A, Ai, P);
        AM_CHECK_MSG(ami_mat_maxdiff(P, I, 16) < 1e-9, "mat4 inverse %d: %g", i,
                     ami_mat_maxdiff(P, I, 16));
        am_mat4_mul(Ai, A, P);
        AM_CHECK(ami_mat_maxdiff(P, I, 16) < 1e-9);
        double B[9], Bi[9], Q[9], I3[9];
        for (int k = 0; k < 9; k++) B[k] = ami_rand_normal();
        am_mat3_identity(I3);
        AM_CHECK(am_mat3_inverse(B, Bi) == 1);
        am_mat3_mul(B, Bi, Q);
        AM_CHECK(ami_mat_maxdiff(Q, I3, 9) < 1e-9);
        /* Rigid: the inverse is [R^T | -R^T t]. */
        double q[4], R[9], t[3] = {ami_rand_normal(), ami_rand_normal(), ami_rand_normal()};
        double M[16], Mi[16], Rt[9], mt[3], W[16];
        ami_rand_quat(q);
        am_quat_to_mat3(q, R);
        am_mat4_from_rt(R, t, M);
        AM_CHECK(am_mat4_inverse(M, Mi) == 1);
        am_mat3_transpose(R, Rt);
        am_mat3_mul_vec3(Rt, t, mt);
        am_vec3_scale(mt, -1.0, mt);
        am_mat4_from_rt(Rt, mt, W);
        AM_CHECK(ami_mat_maxdiff(Mi, W, 16) < 1e-14);
        double p[3] = {1, 2, 3}, pw[3], pb[3], d[3], dw[3];
        am_mat4_mul_point(M, p, pw);
        am_mat4_mul_point(Mi, pw, pb);
        AM_CHECK(ami_mat_maxdiff(p, pb, 3) < 1e-14);
        am_mat4_mul_dir(M, p, d);
        am_mat3_mul_vec3(R, p, dw);
        AM_CHECK(ami_mat_maxdiff(d, dw, 3) < 1e-15);
        double R2[9], t2[3];
        am_mat4_get_rot(M, R2);
        am_mat4_get_trans(M, t2);
        AM_CHECK(ami_mat_maxdiff(R, R2, 9) == 0.0 && ami_mat_maxdiff(t, t2, 3) == 0.0);
    }
    double S[16] = {1, 2, 3, 4, 2, 4, 6, 8, 0, 0, 1, 0, 0, 0, 0, 1}, Si[16];
    AM_CHECK(am_mat4_inverse(S, Si) == 0);
    double S3[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1}, S3i[9];
    AM_CHECK(am_mat3_inverse(S3, S3i) == 0);
    AM_CHECK_NEAR(am_mat3_det(S3), 0.0, 0.0);
}

static void sym_eigen_diagonalizes(void)
{
    for (size_t n = 1; n <= 16; n += 3) {
        double A[256], A0[256], ev[16], V[256];
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j <= i; j++) A[i * n + j] = A[j * n + i] = ami_rand_normal();
        }
        memcpy(A0, A, n * n * sizeof *A);
        am_sym_eigen(A, n, ev, V);
        for (size_t k = 0; k + 1 < n; k++) AM_CHECK(ev[k] >= ev[k + 1]);
        double worst = 0.0;
        for (size_t k = 0; k < n; k++) {
            for (size_t i = 0; i < n; i++) {
                double av = 0.0;
                for (size_t j = 0; j < n; j++) av += A0[i * n + j] * V[j * n + k];
                worst = fmax(worst, fabs(av - ev[k] * V[i * n + k]));
            }
            for (size_t l = 0; l < n; l++) {
                double d = 0.0;
                for (size_t i = 0; i < n; i++) d += V[i * n + k] * V[i * n + l];
                worst = fmax(worst, fabs(d - (k == l ? 1.0 : 0.0)));
            }
        }
        AM_CHECK_MSG(worst < 1e-12, "n = %zu: residual %g", n, worst);
    }
}

static void ami_random_cloud(double *p, size_t n)
{
    for (size_t i = 0; i < 3 * n; i++) p[i] = ami_rand_range(-1.0, 1.0);
}

static void kabsch_exact_without_noise(void)
{
    for (int trial = 0; trial < 50; trial++) {
        enum { N = 100 };
        double p[N * 3], q[N * 3], w[N], qt[4], R0[9], t0[3], R[9], t[3];
        ami_random_cloud(p, N);
        ami_rand_quat(qt);
        if (trial == 0) { qt[0] = 0; qt[1] = 0; qt[2] = 0; qt[3] = 1; } /* 180 degrees */
        am_quat_to_mat3(qt, R0);
        am_vec3_set(t0, ami_rand_normal(), ami_rand_normal(), ami_rand_normal());
        for (size_t i = 0; i < N; i++) {
            am_mat3_mul_vec3(R0, p + 3 * i, q + 3 * i);
            am_vec3_add(q + 3 * i, t0, q + 3 * i);
            w[i] = ami_rand_range(0.1, 2.0);
        }
        double rms = am_kabsch(p, q, trial % 2 ? w : NULL, N, R, t);
        AM_CHECK(rms < 1e-12);
        AM_CHECK_MSG(ami_mat_maxdiff(R, R0, 9) < 1e-12, "trial %d: R off by %g", trial,
                     ami_mat_maxdiff(R, R0, 9));
        AM_CHECK(ami_mat_maxdiff(t, t0, 3) < 1e-12);
        AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
    }
}

static void kabsch_recovers_rotation_under_noise(void)
{
    double worst = 0.0;
    for (int trial = 0; trial < 50; trial++) {
        enum { N = 100 };
        double p[N * 3], q[N * 3], w[N], qt[4], R0[9], t0[3], R[9], t[3];
        ami_random_cloud(p, N);
        ami_rand_quat(qt);
        am_quat_to_mat3(qt, R0);
        am_vec3_set(t0, ami_rand_normal(), ami_rand_normal(), ami_rand_normal());
        for (size_t i = 0; i < N; i++) {
            am_mat3_mul_vec3(R0, p + 3 * i, q + 3 * i);
            am_vec3_add(q + 3 * i, t0, q + 3 * i);
            for (int k = 0; k < 3; k++) q[3 * i + k] += 1e-3 * ami_rand_normal();
            w[i] = ami_rand_range(0.1, 2.0);
        }
        /* A wild outlier with zero weight must not matter. */
        for (int k = 0; k < 3; k++) q[3 * 7 + k] += 50.0;
        w[7] = 0.0;
        double rms = am_kabsch(p, q, w, N, R, t);
        AM_CHECK(rms < 5e-3);
        double ang = am_mat3_angle_between(R, R0);
        worst = fmax(worst, ang);
        AM_CHECK_MSG(ang < 1e-2, "trial %d: angle error %g", trial, ang);
        AM_CHECK(am_vec3_dist(t, t0) < 1e-2);
        AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
    }
    AM_CHECK(worst < 1e-2);
}

static void kabsch_degenerate_inputs(void)
{
    double R[9], t[3], I[9];
    am_mat3_identity(I);
    /* No points. */
    AM_CHECK(am_kabsch(NULL, NULL, NULL, 0, R, t) == 0.0);
    AM_CHECK(ami_mat_maxdiff(R, I, 9) == 0.0 && t[0] == 0.0);
    /* One point: pure translation. */
    double p1[3] = {1, 2, 3}, q1[3] = {4, 4, 4};
    AM_CHECK(am_kabsch(p1, q1, NULL, 1, R, t) < 1e-15);
    AM_CHECK(ami_mat_maxdiff(R, I, 9) == 0.0);
    AM_CHECK_NEAR(t[0], 3.0, 1e-15);
    /* Collinear points: the minimal rotation taking the line onto the target line. */
    double p[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0}, q[9] = {0, 0, 5, 0, 1, 5, 0, 2, 5};
    double rms = am_kabsch(p, q, NULL, 3, R, t);
    AM_CHECK(rms < 1e-12);
    double qz[4], Rz[9], ax[3] = {0, 0, 1};
    am_quat_from_axis_angle(ax, AM_PI / 2, qz);
    am_quat_to_mat3(qz, Rz);
    AM_CHECK_MSG(ami_mat_maxdiff(R, Rz, 9) < 1e-12, "collinear: off by %g",
                 ami_mat_maxdiff(R, Rz, 9));
    /* Reflected point sets still give a proper rotation. */
    double a[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, b[12];
    for (int i = 0; i < 12; i++) b[i] = (i % 3 == 0) ? -a[i] : a[i];
    am_kabsch(a, b, NULL, 4, R, t);
    AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
}

/* The inline 3x4 and 4x4 kernels agree with the general 4x4 product they specialize. */
static void mat34_and_mul_rot_match_mat4(void)
{
    double qa[4], qb[4], Ra[9], Rb[9], ta[3] = {0.3, -1.2, 2.0}, tb[3] = {-0.7, 0.1, 0.4};
    ami_rand_quat(qa), ami_rand_quat(qb);
    am_quat_to_mat3(qa, Ra), am_quat_to_mat3(qb, Rb);
    double A[16], B[16], AB[16], AR[16], C[12];
    am_mat4_from_rt(Ra, ta, A);
    am_mat4_from_rt(Rb, tb, B);
    am_mat4_mul(A, B, AB);
    am_mat34_mul(A, B, C);
    AM_CHECK(ami_mat_maxdiff(AB, C, 12) < 1e-15);
    double B0[16], zero[3] = {0, 0, 0};
    am_mat4_from_rt(Rb, zero, B0);
    am_mat4_mul(A, B0, AB);
    am_mat4_mul_rot(A, Rb, AR);
    AM_CHECK(ami_mat_maxdiff(AB, AR, 16) < 1e-15);
    double p[3] = {0.5, 2.0, -1.0}, u[3], v[3];
    am_mat4_mul_point(A, p, u);
    am_mat34_apply(A, p, v);
    AM_CHECK(ami_mat_maxdiff(u, v, 3) == 0.0);
    double Ru[9];
    am_quat_unit_to_mat3(qa, Ru);
    AM_CHECK(ami_mat_maxdiff(Ru, Ra, 9) < 1e-15);
}

/* The polar rotation of R0 S (S symmetric positive definite, sheared and unevenly scaled) is R0,
 * from a cold start; a mirrored matrix still gives a proper rotation. */
static void polar_rotation_recovers_rotation(void)
{
    for (int k = 0; k < 50; k++) {
        double q[4], R0[9], S[9], A[9], R[9];
        ami_rand_quat(q);
        am_quat_to_mat3(q, R0);
        double d[3] = {ami_rand_range(0.3, 3.0), ami_rand_range(0.3, 3.0), ami_rand_range(0.3, 3.0)};
        double s01 = ami_rand_range(-0.2, 0.2), s02 = ami_rand_range(-0.2, 0.2), s12 = ami_rand_range(-0.2, 0.2);
        double Sv[9] = {d[0], s01, s02, s01, d[1], s12, s02, s12, d[2]};
        memcpy(S, Sv, sizeof S);
        am_mat3_mul(R0, S, A);
        double qs[4], X[9], c = cbrt(am_mat3_det(A));
        for (int i = 0; i < 9; i++) X[i] = A[i] / c;
        am_quat_from_mat3(X, qs);
        am_quat_to_mat3(qs, R);
        am_mat3_polar_rotation(A, 64, 0.0, R);
        AM_CHECK_MSG(ami_mat_maxdiff(R, R0, 9) < 1e-9, "case %d: off by %g", k, ami_mat_maxdiff(R, R0, 9));
    }
    double M[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1}, R[9];
    am_mat3_identity(R);
    am_mat3_polar_rotation(M, 64, 0.0, R);
    AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
    double Z[9] = {0}, keep[9];
    am_mat3_rot_z(0.4, R);
    memcpy(keep, R, sizeof keep);
    am_mat3_polar_rotation(Z, 8, 0.0, R);
    AM_CHECK(ami_mat_maxdiff(R, keep, 9) == 0.0);
}

/* SPEC 5 body size: box diagonal, same answer for float and double, mask and non-finite
 * points left out. */
static void body_size_both_types(void)
{
    double p[12] = {0, 0, 0, 1, 2, 2, NAN, 5, 5, 50, 50, 50};
    float pf[12];
    for (int i = 0; i < 12; i++) pf[i] = (float)p[i];
    uint8_t mask[4] = {1, 1, 1, 0};
    AM_CHECK_NEAR(am_body_size(p, 4, mask), 3.0, 1e-15);
    AM_CHECK_NEAR(am_body_size_f32(pf, 4, mask), 3.0, 1e-15);
    AM_CHECK_NEAR(am_body_size(p, 4, NULL), sqrt(3.0) * 50.0, 1e-12);
    AM_CHECK(am_body_size_f32(pf, 0, NULL) == 0.0);
    uint8_t none[4] = {0, 0, 0, 0};
    AM_CHECK(am_body_size(p, 4, none) == 0.0);
}

/* The generator: reproducible from its seed, uniform in (0, 1), normal with unit variance. */
static void rng_reproducible_and_distributed(void)
{
    ami_rng a = {42}, b;
    ami_rng_seed(&b, 42);
    double mean = 0.0, var = 0.0, lo = 1.0, hi = 0.0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = ami_rng_uniform(&a);
        AM_CHECK(u == ami_rng_uniform(&b));
        lo = fmin(lo, u), hi = fmax(hi, u);
        double g = ami_rng_normal(&a);
        (void)ami_rng_normal(&b);
        mean += g, var += g * g;
    }
    mean /= n, var = var / n - mean * mean;
    AM_CHECK(lo > 0.0 && hi < 1.0 && lo < 1e-4 && hi > 1.0 - 1e-4);
    AM_CHECK_NEAR(mean, 0.0, 0.01);
    AM_CHECK_NEAR(var, 1.0, 0.02);
    /* splitmix64's published first output for seed 0 */
    ami_rng z = {0};
    AM_CHECK(ami_rng_next(&z) == 0xE220A8397B1DCDAFull);
}

#define AM_TESTS(X)                                                                            \
    X(vec3_basics) X(quat_mat3_roundtrip) X(quat_axis_angle_rotvec) X(euler_roundtrip_random) \
    X(euler_gimbal_lock_as_documented) X(euler_near_keeps_continuity) X(rot6d_roundtrip)       \
    X(slerp_endpoints_and_midpoint) X(swing_twist_recomposes)                                  \
    X(two_vectors_including_antiparallel) X(mat3_and_mat4_inverse) X(sym_eigen_diagonalizes)   \
    X(kabsch_exact_without_noise) X(kabsch_recovers_rotation_under_noise)                      \
    X(kabsch_degenerate_inputs) X(mat34_and_mul_rot_match_mat4) X(polar_rotation_recovers_rotation) \
    X(body_size_both_types) X(rng_reproducible_and_distributed)
AM_TEST_MAIN(AM_TESTS)
