/* anymove math: vectors, quaternions, matrices, Euler angles, 6D rotations, Procrustes.
 *
 * CONVENTIONS (SPEC.md section 1, STYLE.md section 5)
 * - double precision everywhere in this header; arrays are plain `double[n]` (the body size
 *   also reads the float point arrays of tracks).
 * - World: metres, radians, Z up, the creature faces -Y, +X is its left.
 * - Quaternions are (w, x, y, z), unit, Hamilton product; where a sign must be chosen, w >= 0.
 * - Matrices are row-major in memory and act on column vectors: p' = M p, M[r*n + c].
 *   3x3 = double[9], 4x4 = double[16] (last row 0 0 0 1 for rigid transforms).
 * - Euler XYZ (Blender's XYZ mode) applies X first: R = Rz(z) * Ry(y) * Rx(x).
 * - 6D rotation (Zhou et al. 2019): the first two columns of R, stored (c0x,c0y,c0z,c1x,c1y,c1z).
 * - 3x4 transforms [A | t] = double[12], row-major: the top three rows of a 4x4 whose last row
 *   is 0 0 0 1 (a 4x4 may be passed wherever a 3x4 is read).
 * - Outputs come last and may alias inputs unless a function says otherwise.
 * None of these functions allocates or fails; none takes an am_error. The small kernels (vec3,
 * 3x3, 3x4 and 4x4 products) are `static inline` here: FK, IK and the decomposition call them
 * per bone and frame, where a call into another translation unit cost more than the
 * arithmetic. Solvers use these and never keep copies of their own.
 *
 *     double q[4], R[9], e[3] = {0.1, -0.2, 0.3};
 *     am_euler_xyz_to_mat3(e, R);
 *     am_quat_from_mat3(R, q);
 */
#ifndef ANYMOVE_MATH_H
#define ANYMOVE_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AM_PI 3.14159265358979323846
#define AM_DEG(rad) ((rad) * (180.0 / AM_PI))
#define AM_RAD(deg) ((deg) * (AM_PI / 180.0))

/* Forced inlining where the compiler allows it: the decomposition's kernels are cloned for AVX2
 * at load time, and a call from a clone into baseline code spills every vector register. */
#if defined(__GNUC__) || defined(__clang__)
#define AM_INLINE static inline __attribute__((always_inline))
#else
#define AM_INLINE static inline
#endif

/* ---- vec3 ---- */
AM_INLINE void am_vec3_set(double out[3], double x, double y, double z)
{
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

AM_INLINE void am_vec3_add(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] + b[0];
    out[1] = a[1] + b[1];
    out[2] = a[2] + b[2];
}

AM_INLINE void am_vec3_sub(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

AM_INLINE void am_vec3_scale(const double a[3], double s, double out[3])
{
    out[0] = a[0] * s;
    out[1] = a[1] * s;
    out[2] = a[2] * s;
}

/* out = a + s * b */
AM_INLINE void am_vec3_madd(const double a[3], double s, const double b[3], double out[3])
{
    out[0] = a[0] + s * b[0];
    out[1] = a[1] + s * b[1];
    out[2] = a[2] + s * b[2];
}

AM_INLINE double am_vec3_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

AM_INLINE void am_vec3_cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

AM_INLINE double am_vec3_norm(const double a[3])
{
    return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

AM_INLINE double am_vec3_dist(const double a[3], const double b[3])
{
    double d[3];
    am_vec3_sub(a, b, d);
    return am_vec3_norm(d);
}

/* Returns the original length; a zero vector stays zero. */
double am_vec3_normalize(const double a[3], double out[3]);
/* Any unit vector perpendicular to a (a need not be unit; zero a gives (1,0,0)). */
void am_vec3_perpendicular(const double a[3], double out[3]);

/* ---- quaternions (w, x, y, z) ---- */
AM_INLINE void am_quat_identity(double out[4])
{
    out[0] = 1.0;
    out[1] = out[2] = out[3] = 0.0;
}

AM_INLINE void am_quat_mul(const double a[4], const double b[4], double out[4])
{
    double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    out[0] = w;
    out[1] = x;
    out[2] = y;
    out[3] = z;
}

AM_INLINE void am_quat_conj(const double q[4], double out[4])
{
    out[0] = q[0];
    out[1] = -q[1];
    out[2] = -q[2];
    out[3] = -q[3];
}

/* The rotation matrix of a quaternion already known to be unit (no renormalization; the hot
 * loops' version of am_quat_to_mat3). R must not alias q. */
AM_INLINE void am_quat_unit_to_mat3(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1.0 - 2.0 * (y * y + z * z);
    R[1] = 2.0 * (x * y - w * z);
    R[2] = 2.0 * (x * z + w * y);
    R[3] = 2.0 * (x * y + w * z);
    R[4] = 1.0 - 2.0 * (x * x + z * z);
    R[5] = 2.0 * (y * z - w * x);
    R[6] = 2.0 * (x * z - w * y);
    R[7] = 2.0 * (y * z + w * x);
    R[8] = 1.0 - 2.0 * (x * x + y * y);
}

/* Normalize; a zero quaternion becomes identity. */
void am_quat_normalize(const double q[4], double out[4]);
/* Flip the sign so that w >= 0 (on w == 0, the first non-zero of x, y, z is made positive). */
void am_quat_canonical(const double q[4], double out[4]);
void am_quat_from_axis_angle(const double axis[3], double angle, double out[4]);
/* Angle in [0, pi] and unit axis ((1,0,0) for identity). */
double am_quat_to_axis_angle(const double q[4], double axis[3]);
/* Rotation vector (axis * angle) <-> quaternion. */
void am_quat_from_rotvec(const double v[3], double out[4]);
void am_quat_to_rotvec(const double q[4], double out[3]);
/* Normalizes q first (a zero quaternion is the identity). */
void am_quat_to_mat3(const double q[4], double R[9]);
/* Robust (Shepperd) for a rotation matrix; a nearly orthonormal R gives the nearest rotation's
 * quaternion to first order. Result canonical (w >= 0). */
void am_quat_from_mat3(const double R[9], double out[4]);
void am_quat_rotate(const double q[4], const double v[3], double out[3]);
/* Shortest-path spherical interpolation, t in [0,1]. */
void am_quat_slerp(const double a[4], const double b[4], double t, double out[4]);
/* Geodesic angle between two rotations, radians in [0, pi]. */
double am_quat_angle_between(const double a[4], const double b[4]);
/* Minimal rotation (swing) taking direction a onto direction b (need not be unit).
 * Antiparallel vectors: 180 degrees about an axis perpendicular to a. */
void am_quat_from_two_vectors(const double a[3], const double b[3], double out[4]);
/* q = swing * twist, twist about the unit axis `axis`, swing perpendicular to it. */
void am_quat_swing_twist(const double q[4], const double axis[3], double swing[4],
                         double twist[4]);

/* ---- 3x3 ---- */
AM_INLINE void am_mat3_identity(double R[9])
{
    for (int i = 0; i < 9; i++) R[i] = i % 4 == 0 ? 1.0 : 0.0;
}

AM_INLINE void am_mat3_mul(const double A[9], const double B[9], double out[9])
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[i * 3 + j] = A[i * 3] * B[j] + A[i * 3 + 1] * B[3 + j] + A[i * 3 + 2] * B[6 + j];
    for (int i = 0; i < 9; i++) out[i] = r[i];
}

/* out = A^T B */
AM_INLINE void am_mat3_tmul(const double A[9], const double B[9], double out[9])
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[i * 3 + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    for (int i = 0; i < 9; i++) out[i] = r[i];
}

AM_INLINE void am_mat3_transpose(const double A[9], double out[9])
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[j * 3 + i] = A[i * 3 + j];
    for (int i = 0; i < 9; i++) out[i] = r[i];
}

AM_INLINE void am_mat3_mul_vec3(const double A[9], const double v[3], double out[3])
{
    double r0 = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    double r1 = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    double r2 = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    out[0] = r0;
    out[1] = r1;
    out[2] = r2;
}

AM_INLINE double am_mat3_det(const double A[9])
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* Returns 0 and leaves out unspecified if |det| < 1e-300. Else 1. */
int am_mat3_inverse(const double A[9], double out[9]);
/* Geodesic angle of A^T B for rotations, radians: acos(clamp((tr(A^T B) - 1) / 2)). */
double am_mat3_angle_between(const double A[9], const double B[9]);
void am_mat3_rot_x(double a, double R[9]);
void am_mat3_rot_y(double a, double R[9]);
void am_mat3_rot_z(double a, double R[9]);

/* ---- 3x4 ---- */
/* out = A B as rigid/affine transforms. */
AM_INLINE void am_mat34_mul(const double A[12], const double B[12], double out[12])
{
    double r[12];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++)
            r[i * 4 + j] = A[i * 4] * B[j] + A[i * 4 + 1] * B[4 + j] + A[i * 4 + 2] * B[8 + j];
        r[i * 4 + 3] += A[i * 4 + 3];
    }
    for (int i = 0; i < 12; i++) out[i] = r[i];
}

/* out = A p + t */
AM_INLINE void am_mat34_apply(const double M[12], const double p[3], double out[3])
{
    double x = p[0], y = p[1], z = p[2];
    out[0] = M[0] * x + M[1] * y + M[2] * z + M[3];
    out[1] = M[4] * x + M[5] * y + M[6] * z + M[7];
    out[2] = M[8] * x + M[9] * y + M[10] * z + M[11];
}

/* ---- 4x4 ---- */
AM_INLINE void am_mat4_identity(double M[16])
{
    for (int i = 0; i < 16; i++) M[i] = i % 5 == 0 ? 1.0 : 0.0;
}

AM_INLINE void am_mat4_mul(const double A[16], const double B[16], double out[16])
{
    double r[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            r[i * 4 + j] = A[i * 4] * B[j] + A[i * 4 + 1] * B[4 + j] + A[i * 4 + 2] * B[8 + j] +
                           A[i * 4 + 3] * B[12 + j];
    for (int i = 0; i < 16; i++) out[i] = r[i];
}

/* out = A [R | 0] for a rigid A: FK's per-bone product (the last row stays 0 0 0 1). */
AM_INLINE void am_mat4_mul_rot(const double A[16], const double R[9], double out[16])
{
    double r[16];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            r[i * 4 + j] = A[i * 4] * R[j] + A[i * 4 + 1] * R[3 + j] + A[i * 4 + 2] * R[6 + j];
        r[i * 4 + 3] = A[i * 4 + 3];
    }
    r[12] = r[13] = r[14] = 0.0;
    r[15] = 1.0;
    for (int i = 0; i < 16; i++) out[i] = r[i];
}

/* General inverse (cofactors). Returns 0 if singular. */
int am_mat4_inverse(const double A[16], double out[16]);

/* M = [R | t] with last row 0 0 0 1. */
AM_INLINE void am_mat4_from_rt(const double R[9], const double t[3], double M[16])
{
    double r[16] = {R[0], R[1], R[2], t[0], R[3], R[4], R[5], t[1],
                    R[6], R[7], R[8], t[2], 0.0,  0.0,  0.0,  1.0};
    for (int i = 0; i < 16; i++) M[i] = r[i];
}

AM_INLINE void am_mat4_get_rot(const double M[16], double R[9])
{
    double r[9] = {M[0], M[1], M[2], M[4], M[5], M[6], M[8], M[9], M[10]};
    for (int i = 0; i < 9; i++) R[i] = r[i];
}

AM_INLINE void am_mat4_get_trans(const double M[16], double t[3])
{
    am_vec3_set(t, M[3], M[7], M[11]);
}

AM_INLINE void am_mat4_mul_point(const double M[16], const double p[3], double out[3])
{
    am_mat34_apply(M, p, out);
}

AM_INLINE void am_mat4_mul_dir(const double M[16], const double v[3], double out[3])
{
    double x = v[0], y = v[1], z = v[2];
    out[0] = M[0] * x + M[1] * y + M[2] * z;
    out[1] = M[4] * x + M[5] * y + M[6] * z;
    out[2] = M[8] * x + M[9] * y + M[10] * z;
}

/* ---- Euler XYZ (R = Rz * Ry * Rx) ---- */
void am_euler_xyz_to_mat3(const double e[3], double R[9]);
/* Inverse of the above with y in [-pi/2, pi/2]. At gimbal lock (|cos y| < 1e-9) the
 * answer is defined as x = 0 and all of the remaining rotation put into z. */
void am_mat3_to_euler_xyz(const double R[9], double e[3]);
void am_euler_xyz_to_quat(const double e[3], double q[4]);
void am_quat_to_euler_xyz(const double q[4], double e[3]);
/* Of the Euler triples equivalent to R, the one nearest `near` (componentwise wrap by 2*pi and
 * the (x+pi, pi-y, z+pi) alternative): keeps animation curves continuous. */
void am_mat3_to_euler_xyz_near(const double R[9], const double near[3], double e[3]);

/* Joint angles of a local rotation about a bone's rest axes (the joint coordinate system of
 * Grood & Suntay, as OpenSim's and anipose's angle tables use it): R = Rx(a[0]) Rz(a[1]) Ry(a[2])
 * (intrinsic X, then the floating Z, then the bone's own Y): a[0] flexion about the bone's X,
 * a[1] abduction, a[2] rotation about the bone's long axis; a[1] in [-pi/2, pi/2]. near (may be
 * NULL): a[0] and a[2] are wrapped to within pi of it (continuous curves). At gimbal lock
 * (|cos a[1]| < 1e-9) a[2] is near's (or 0) and a[0] takes the rest. */
void am_mat3_to_joint_angles(const double R[9], const double *near, double a[3]);

/* ---- 6D rotation ---- */
void am_rot6d_from_mat3(const double R[9], double d6[6]);
/* Gram-Schmidt; a degenerate input gives identity. */
void am_rot6d_to_mat3(const double d6[6], double R[9]);

/* ---- Procrustes ---- */
/* Weighted Kabsch: the rotation R and translation t minimizing
 * sum_i w_i |R p_i + t - q_i|^2. p, q: [n][3]; w: [n] or NULL for all ones.
 * Proper rotation (det +1) always. Uses Horn's quaternion method (a 4x4 symmetric
 * eigenproblem solved by Jacobi sweeps). Returns the weighted RMS residual.
 * With fewer than 3 non-collinear points the rotation is the minimal one that fits. */
double am_kabsch(const double *p, const double *q, const double *w, size_t n, double R[9],
                 double t[3]);
/* The rotation of the polar decomposition A = R S (S symmetric positive semidefinite), i.e. the
 * rotation maximizing tr(R^T A), refined from the rotation already in R (a warm start: the
 * previous solution in an alternation, else e.g. am_quat_from_mat3 of A scaled to det 1) by at
 * most max_steps steps, stopping after a step that turned R by less than tol radians (0: until
 * R stops changing), then re-orthonormalized. Always proper: a mirrored A (det < 0) gives the
 * nearest rotation, not a reflection. A zero A leaves R as it is. */
void am_mat3_polar_rotation(const double A[9], int max_steps, double tol, double R[9]);
/* Symmetric eigen-decomposition of an n x n matrix (n <= 16) by cyclic Jacobi.
 * A is overwritten; eigenvalues in evals (descending), eigenvectors as columns of V. */
void am_sym_eigen(double *A, size_t n, double *evals, double *V);

/* ---- point sets ---- */
/* SPEC 5 body size: the diagonal of the axis-aligned box of the points [n][3] with mask[i] != 0
 * (mask NULL = all), leaving out points with a non-finite coordinate; 0 when none is left. Every
 * "% of body size" of the library and its scores is relative to this. */
double am_body_size(const double *points, size_t n, const uint8_t *mask);
double am_body_size_f32(const float *points, size_t n, const uint8_t *mask);

#ifdef __cplusplus
}
#endif
#endif
