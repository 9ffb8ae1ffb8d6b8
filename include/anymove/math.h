/* anymove math: vectors, quaternions, matrices, Euler angles, 6D rotations, Procrustes.
 *
 * CONVENTIONS (SPEC.md section 1, STYLE.md section 5)
 * - double precision everywhere in this header; arrays are plain `double[n]`.
 * - World: metres, radians, Z up, the creature faces -Y, +X is its left.
 * - Quaternions are (w, x, y, z), unit, Hamilton product; where a sign must be chosen, w >= 0.
 * - Matrices are row-major in memory and act on column vectors: p' = M p, M[r*n + c].
 *   3x3 = double[9], 4x4 = double[16] (last row 0 0 0 1 for rigid transforms).
 * - Euler XYZ (Blender's XYZ mode) applies X first: R = Rz(z) * Ry(y) * Rx(x).
 * - 6D rotation (Zhou et al. 2019): the first two columns of R, stored (c0x,c0y,c0z,c1x,c1y,c1z).
 * - Outputs come last and may alias inputs unless a function says otherwise.
 * None of these functions allocates or fails; none takes an am_error.
 *
 *     double q[4], R[9], e[3] = {0.1, -0.2, 0.3};
 *     am_euler_xyz_to_mat3(e, R);
 *     am_quat_from_mat3(R, q);
 */
#ifndef ANYMOVE_MATH_H
#define ANYMOVE_MATH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AM_PI 3.14159265358979323846
#define AM_DEG(rad) ((rad) * (180.0 / AM_PI))
#define AM_RAD(deg) ((deg) * (AM_PI / 180.0))

/* ---- vec3 ---- */
void am_vec3_set(double out[3], double x, double y, double z);
void am_vec3_add(const double a[3], const double b[3], double out[3]);
void am_vec3_sub(const double a[3], const double b[3], double out[3]);
void am_vec3_scale(const double a[3], double s, double out[3]);
/* out = a + s * b */
void am_vec3_madd(const double a[3], double s, const double b[3], double out[3]);
double am_vec3_dot(const double a[3], const double b[3]);
void am_vec3_cross(const double a[3], const double b[3], double out[3]);
double am_vec3_norm(const double a[3]);
double am_vec3_dist(const double a[3], const double b[3]);
/* Returns the original length; a zero vector stays zero. */
double am_vec3_normalize(const double a[3], double out[3]);
/* Any unit vector perpendicular to a (a need not be unit; zero a gives (1,0,0)). */
void am_vec3_perpendicular(const double a[3], double out[3]);

/* ---- quaternions (w, x, y, z) ---- */
void am_quat_identity(double out[4]);
void am_quat_mul(const double a[4], const double b[4], double out[4]);
void am_quat_conj(const double q[4], double out[4]);
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
void am_mat3_identity(double R[9]);
void am_mat3_mul(const double A[9], const double B[9], double out[9]);
/* out = A^T B */
void am_mat3_tmul(const double A[9], const double B[9], double out[9]);
void am_mat3_transpose(const double A[9], double out[9]);
void am_mat3_mul_vec3(const double A[9], const double v[3], double out[3]);
double am_mat3_det(const double A[9]);
/* Returns 0 and leaves out unspecified if |det| < 1e-300. Else 1. */
int am_mat3_inverse(const double A[9], double out[9]);
/* Geodesic angle of A^T B for rotations, radians: acos(clamp((tr(A^T B) - 1) / 2)). */
double am_mat3_angle_between(const double A[9], const double B[9]);
void am_mat3_rot_x(double a, double R[9]);
void am_mat3_rot_y(double a, double R[9]);
void am_mat3_rot_z(double a, double R[9]);

/* ---- 4x4 ---- */
void am_mat4_identity(double M[16]);
void am_mat4_mul(const double A[16], const double B[16], double out[16]);
/* General inverse (cofactors). Returns 0 if singular. */
int am_mat4_inverse(const double A[16], double out[16]);
/* M = [R | t] with last row 0 0 0 1. */
void am_mat4_from_rt(const double R[9], const double t[3], double M[16]);
void am_mat4_get_rot(const double M[16], double R[9]);
void am_mat4_get_trans(const double M[16], double t[3]);
void am_mat4_mul_point(const double M[16], const double p[3], double out[3]);
void am_mat4_mul_dir(const double M[16], const double v[3], double out[3]);

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
/* Symmetric eigen-decomposition of an n x n matrix (n <= 16) by cyclic Jacobi.
 * A is overwritten; eigenvalues in evals (descending), eigenvectors as columns of V. */
void am_sym_eigen(double *A, size_t n, double *evals, double *V);

#ifdef __cplusplus
}
#endif
#endif
