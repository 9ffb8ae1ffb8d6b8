/* Weighted absolute orientation and the symmetric eigen-solver it needs.
 *
 * This work is based on:
 * - B. K. P. Horn, "Closed-form solution of absolute orientation using unit quaternions",
 *   JOSA A 4(4), 1987: the optimal rotation is the eigenvector of the largest eigenvalue of a
 *   4x4 symmetric matrix built from the cross-covariance. Always a proper rotation, no SVD
 *   reflection fix-up.
 * - The cyclic Jacobi eigenvalue method (Golub & Van Loan, "Matrix Computations", 8.5).
 * - M. Mueller, J. Bender, N. Chentanez, M. Macklin, "A Robust Method to Extract the
 *   Rotational Part of Deformations", MIG 2016: the warm-started polar rotation.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"

#define AMI_EIGEN_MAX_N 16
#define AMI_JACOBI_SWEEPS 64

void am_sym_eigen(double *A, size_t n, double *evals, double *V)
{
    if (n == 0) return;
    assert(n <= AMI_EIGEN_MAX_N && A && evals && V);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) V[i * n + j] = i == j ? 1.0 : 0.0;
    }
    for (int sweep = 0; sweep < AMI_JACOBI_SWEEPS; sweep++) {
        double off = 0.0, diag = 0.0;
        for (size_t i = 0; i < n; i++) {
            diag += A[i * n + i] * A[i * n + i];
            for (size_t j = i + 1; j < n; j++) off += A[i * n + j] * A[i * n + j];
        }
        if (!(off > 1e-30 * diag) || off == 0.0) break;
        for (size_t p = 0; p < n; p++) {
            for (size_t q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (apq == 0.0) continue;
                double app = A[p * n + p], aqq = A[q * n + q];
                /* Rotation angle that zeroes A[p][q]; the smaller root of
                 * t^2 + 2 theta t - 1 = 0 keeps the rotation below 45 degrees (stable). */
                double theta = (aqq - app) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (size_t k = 0; k < n; k++) {
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (size_t k = 0; k < n; k++) {
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (size_t k = 0; k < n; k++) {
                    double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    for (size_t i = 0; i < n; i++) evals[i] = A[i * n + i];
    /* Selection sort, descending, moving eigenvector columns along. */
    for (size_t i = 0; i < n; i++) {
        size_t m = i;
        for (size_t j = i + 1; j < n; j++) {
            if (evals[j] > evals[m]) m = j;
        }
        if (m == i) continue;
        double tmp = evals[i];
        evals[i] = evals[m];
        evals[m] = tmp;
        for (size_t k = 0; k < n; k++) {
            tmp = V[k * n + i];
            V[k * n + i] = V[k * n + m];
            V[k * n + m] = tmp;
        }
    }
}

static double ami_weight(const double *w, size_t i)
{
    return w ? w[i] : 1.0;
}

double am_kabsch(const double *p, const double *q, const double *w, size_t n, double R[9],
                 double t[3])
{
    double wsum = 0.0, pc[3] = {0, 0, 0}, qc[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double wi = ami_weight(w, i);
        wsum += wi;
        am_vec3_madd(pc, wi, p + 3 * i, pc);
        am_vec3_madd(qc, wi, q + 3 * i, qc);
    }
    am_mat3_identity(R);
    if (!(wsum > 0.0)) {
        am_vec3_set(t, 0.0, 0.0, 0.0);
        return 0.0;
    }
    am_vec3_scale(pc, 1.0 / wsum, pc);
    am_vec3_scale(qc, 1.0 / wsum, qc);

    /* S[a][b] = sum w (p - pc)_a (q - qc)_b; C = the covariance of p, to detect collinearity. */
    double S[9] = {0}, C[9] = {0};
    for (size_t i = 0; i < n; i++) {
        double wi = ami_weight(w, i), a[3], b[3];
        am_vec3_sub(p + 3 * i, pc, a);
        am_vec3_sub(q + 3 * i, qc, b);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) {
                S[r * 3 + c] += wi * a[r] * b[c];
                C[r * 3 + c] += wi * a[r] * a[c];
            }
        }
    }
    double cev[3], cvec[9];
    am_sym_eigen(C, 3, cev, cvec);
    if (cev[0] > 0.0 && cev[1] <= 1e-12 * cev[0]) {
        /* Collinear p: the twist about the line is free. The best direction for the line is
         * sum w a_i (q_i - qc); the minimal rotation takes the line onto it. */
        double d[3] = {cvec[0], cvec[3], cvec[6]}, target[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            double a[3], b[3];
            am_vec3_sub(p + 3 * i, pc, a);
            am_vec3_sub(q + 3 * i, qc, b);
            am_vec3_madd(target, ami_weight(w, i) * am_vec3_dot(a, d), b, target);
        }
        /* d's sign is arbitrary; the projection weights above already carry it. */
        if (am_vec3_norm(target) > 0.0) {
            double qr[4];
            am_quat_from_two_vectors(d, target, qr);
            am_quat_to_mat3(qr, R);
        }
    } else if (cev[0] > 0.0) {
        double Sxx = S[0], Sxy = S[1], Sxz = S[2], Syx = S[3], Syy = S[4], Syz = S[5];
        double Szx = S[6], Szy = S[7], Szz = S[8];
        double N[16] = {
            Sxx + Syy + Szz, Syz - Szy,        Szx - Sxz,        Sxy - Syx,
            Syz - Szy,       Sxx - Syy - Szz,  Sxy + Syx,        Szx + Sxz,
            Szx - Sxz,       Sxy + Syx,        -Sxx + Syy - Szz, Syz + Szy,
            Sxy - Syx,       Szx + Sxz,        Syz + Szy,        -Sxx - Syy + Szz,
        };
        double ev[4], V[16];
        am_sym_eigen(N, 4, ev, V);
        double qr[4] = {V[0], V[4], V[8], V[12]};
        am_quat_normalize(qr, qr);
        am_quat_to_mat3(qr, R);
    }
    double rp[3];
    am_mat3_mul_vec3(R, pc, rp);
    am_vec3_sub(qc, rp, t);

    double err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double x[3];
        am_mat3_mul_vec3(R, p + 3 * i, x);
        am_vec3_add(x, t, x);
        am_vec3_sub(x, q + 3 * i, x);
        err += ami_weight(w, i) * am_vec3_dot(x, x);
    }
    return sqrt(err / wsum);
}

/* Mueller et al.'s iteration rotates R towards A's columns; from a good start it converges in
 * 1-3 steps, and it never returns a reflection. */
void am_mat3_polar_rotation(const double A[9], int max_steps, double tol, double R[9])
{
    double scale = 0.0;
    for (int i = 0; i < 9; i++) scale += A[i] * A[i];
    if (!(scale > 1e-300)) return;
    double eps = 1e-12 * sqrt(scale);
    double M[9];
    memcpy(M, R, sizeof M);
    for (int it = 0; it < max_steps; it++) {
        /* omega = sum_c col_c(M) x col_c(A) / |sum_c col_c(M).col_c(A)| */
        double o0 = 0, o1 = 0, o2 = 0, dot = 0;
        for (int c = 0; c < 3; c++) {
            double m0 = M[c], m1 = M[3 + c], m2 = M[6 + c], a0 = A[c], a1 = A[3 + c], a2 = A[6 + c];
            o0 += m1 * a2 - m2 * a1;
            o1 += m2 * a0 - m0 * a2;
            o2 += m0 * a1 - m1 * a0;
            dot += m0 * a0 + m1 * a1 + m2 * a2;
        }
        double den = fabs(dot) + eps;
        double v[3] = {o0 / den, o1 / den, o2 / den};
        double ang = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (ang < 1e-13) break;
        /* Rodrigues: Rd = I + sin(a) K + (1 - cos(a)) K^2 for the unit axis k = v / a */
        double kx = v[0] / ang, ky = v[1] / ang, kz = v[2] / ang, sa = sin(ang), ca = 1.0 - cos(ang);
        double Rd[9] = {1.0 - ca * (ky * ky + kz * kz), -sa * kz + ca * kx * ky, sa * ky + ca * kx * kz,
                        sa * kz + ca * kx * ky, 1.0 - ca * (kx * kx + kz * kz), -sa * kx + ca * ky * kz,
                        -sa * ky + ca * kx * kz, sa * kx + ca * ky * kz, 1.0 - ca * (kx * kx + ky * ky)};
        am_mat3_mul(Rd, M, M);
        if (ang < tol) break;
    }
    /* re-orthonormalize (drift over many products) through a quaternion */
    double q[4];
    am_quat_from_mat3(M, q);
    am_quat_normalize(q, q);
    am_quat_to_mat3(q, R);
}
