/* Track2Rig core: the passes of the alternating linear-blend-skinning decomposition (the driver
 * that runs them is decompose.c).
 *
 * This work is based on:
 * - B. H. Le and Z. Deng, "Smooth Skinning Decomposition with Rigid Bones" (SSDR),
 *   ACM TOG 31(6), 2012: alternate per-bone rigid transforms (weighted Procrustes, one bone
 *   at a time with the others fixed) and per-point sparse convex weights.
 * - B. H. Le and Z. Deng, "Robust and Accurate Skeletal Rigging from Mesh Sequences",
 *   ACM TOG 33(4), 2014: bone splitting, Laplacian weight smoothness, joints where bones pivot.
 * - P. J. Huber, "Robust Statistics", 1981: Huber M-estimation by pseudo-observations
 *   (residuals winsorized at the threshold), which keeps every sub-problem least squares.
 * - A. P. Dempster, N. M. Laird, D. B. Rubin, EM, 1977: hidden entries are replaced by the
 *   current model's prediction, so the solvers see complete data and converge to a fixed point
 *   of the missing-data objective.
 * - M. Mueller, J. Bender, N. Chentanez, M. Macklin, "A Robust Method to Extract the
 *   Rotational Part of Deformations", MIG 2016: warm-started rotation extraction.
 *
 * Speed (docs/track2rig.md): the transform step never touches the per-frame data of a point
 * more than once. The Procrustes problem of bone k at frame t only needs
 *   F_kt = sum_n c_n w_nk p*_tn [r_n;1]^T        (3x4, one streaming pass over the data)
 *   H_jk = sum_n c_n w_nj w_nk [r_n;1][r_n;1]^T  (4x4, frame independent)
 * because the other bones' contribution is sum_j G_jt H_jk; so Gauss-Seidel sweeps over bones
 * cost O(B^2 T) instead of O(nnz T). Likewise the weight step's Gram matrix of point n over
 * its candidate bones comes from frame sums S_jk = sum_t R_j^T R_k, U_jk = sum_t R_j^T t_k,
 * C_jk = sum_t t_j.t_k in O(B^2) per point; only the right-hand side sum_t R_k^T p*_tn needs
 * the point's frames. Data is stored float and point-major; sums are double.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "anymove/math.h"
#include "anymove/opt.h"
#include "decompose_internal.h"
#include "core/internal.h"

#define AMI_HB 1024 /* log-histogram bins for medians */
#define AMI_WMIN 0.02 /* smallest skin weight kept */
#define AMI_MINSUP 3.0 /* visible weight mass below which a bone's frame is interpolated */
/* Rotation extraction steps per bone and frame: capped, as it is warm-started from the previous
 * alternation's rotation and so keeps converging across iterations. */
#define AMI_POLAR_STEPS 6

/* Forced inlining for the small helpers of the hot kernels: a call out of an AVX2 clone into
 * baseline code spills every live vector register (ami_hist_add showed as 6% of the time). */
#if defined(__GNUC__) || defined(__clang__)
#define AMI_INLINE static inline __attribute__((always_inline))
#else
#define AMI_INLINE static inline
#endif

/* ---- log histogram medians ---- */
typedef struct {
    double lo, lhi, inv_lo, scale; /* scale = AMI_HB / lhi */
    double count[AMI_HB];
} ami_hist;

/* log2 by exponent + linear mantissa (monotone, exact at powers of two): no libm call per entry */
AMI_INLINE double ami_flog2(double x)
{
    /* x = M 2^E, M in [1, 2): E + (M - 1), read from the bits (same as frexp for the positive
     * normal numbers this gets; a libm call per sample showed in profiles) */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if (!(x > 0.0) || x < 2.2250738585072014e-308 || !isfinite(x)) {
        int e;
        double m = frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
        return (double)(e - 1) + (2.0 * m - 1.0);
    }
    int E = (int)((u >> 52) & 0x7FF) - 1023;
    return (double)E + (double)(u & 0xFFFFFFFFFFFFFull) * 0x1p-52;
}

static double ami_fexp2(double l)
{
    double e = floor(l);
    return ldexp(1.0 + (l - e), (int)e);
}

static void ami_hist_init(ami_hist *h, double body)
{
    memset(h, 0, sizeof *h);
    h->lo = 1e-8 * body;
    h->lhi = ami_flog2(1e9); /* hi = 10 * body */
    h->inv_lo = 1.0 / h->lo;
    h->scale = AMI_HB / h->lhi;
}

AMI_INLINE void ami_hist_add(ami_hist *h, double x)
{
    int b = 0;
    if (x > h->lo) {
        b = (int)(ami_flog2(x * h->inv_lo) * h->scale); /* no divisions per sample */
        if (b >= AMI_HB) b = AMI_HB - 1;
    }
    h->count[b] += 1.0; /* total: summed once in ami_hist_quantile, not per sample */
}

static double ami_hist_quantile(const ami_hist *h, double q)
{
    double total = 0.0; /* counts are small integers: the sum is exact in any order */
    for (int b = 0; b < AMI_HB; b++) total += h->count[b];
    if (total <= 0.0) return 0.0;
    double acc = 0.0, want = q * total;
    for (int b = 0; b < AMI_HB; b++) {
        acc += h->count[b];
        if (acc >= want) return h->lo * ami_fexp2(((double)b + 0.5) / AMI_HB * h->lhi);
    }
    return h->lo * ami_fexp2(h->lhi);
}

AMI_HOT static void ami_accum_point(ami_dec *d, size_t n, double *Fs, double *Hs);
static void ami_accum_clear(ami_dec *d);
static void ami_fill_unsupported(ami_dec *d);
static void ami_quads(const ami_dec *d, const double *G);

/* ---- frame sums of the transforms ---- */
void ami_dec_stats(ami_dec *d)
{
    size_t B = d->B, T = d->T;
    memset(d->S, 0, sizeof(double) * d->bcap * AMI_MAXB * 9);
    memset(d->U, 0, sizeof(double) * d->bcap * AMI_MAXB * 3);
    memset(d->C, 0, sizeof(double) * d->bcap * AMI_MAXB);
    for (size_t t = 0; t < T; t++) {
        const double *g = d->G + t * d->gs * 12;
        for (size_t j = 0; j < B; j++) {
            const double *gj = g + j * 12;
            for (size_t k = 0; k < B; k++) {
                const double *gk = g + k * 12;
                double *S = d->S + (j * AMI_MAXB + k) * 9, *U = d->U + (j * AMI_MAXB + k) * 3;
                for (int a = 0; a < 3; a++) {
                    for (int b = 0; b < 3; b++)
                        S[a * 3 + b] += gj[a] * gk[b] + gj[4 + a] * gk[4 + b] + gj[8 + a] * gk[8 + b];
                    U[a] += gj[a] * gk[3] + gj[4 + a] * gk[7] + gj[8 + a] * gk[11];
                }
                d->C[j * AMI_MAXB + k] += gj[3] * gk[3] + gj[7] * gk[7] + gj[11] * gk[11];
            }
        }
    }
}

/* min w^T E w + lam |w - wb|^2  s.t. sum w = 1, w >= 0, at most kmax non-zero.
 * Active set: solve the equality-constrained problem on the active bones, drop the most
 * negative weight until all are >= 0, then drop the smallest until at most kmax remain. */
static void ami_weights_qp(const double *E, size_t m, double lam, const double *wb, size_t kmax,
                           double *w)
{
    bool act[AMI_MAXC];
    double tr = 0.0;
    for (size_t i = 0; i < m; i++) {
        act[i] = true;
        tr += E[i * m + i];
    }
    double ridge = 1e-9 * (tr / (double)m) + 1e-30;
    for (;;) {
        size_t ia[AMI_MAXC], na = 0;
        for (size_t i = 0; i < m; i++)
            if (act[i]) ia[na++] = i;
        for (size_t i = 0; i < m; i++) w[i] = 0.0;
        if (na == 1) {
            w[ia[0]] = 1.0;
            return;
        }
        double Hm[AMI_MAXC * AMI_MAXC], g[AMI_MAXC], one[AMI_MAXC];
        for (size_t a = 0; a < na; a++) {
            for (size_t b = 0; b < na; b++) Hm[a * na + b] = E[ia[a] * m + ia[b]];
            Hm[a * na + a] += lam + ridge;
            g[a] = lam * wb[ia[a]];
            one[a] = 1.0;
        }
        if (am_dense_cholesky(Hm, na, NULL) != AM_OK) { /* numerically singular: keep the single best bone */
            size_t best = ia[0];
            for (size_t a = 1; a < na; a++)
                if (E[ia[a] * m + ia[a]] < E[best * m + best]) best = ia[a];
            w[best] = 1.0;
            return;
        }
        am_dense_cholesky_solve(Hm, na, g);
        am_dense_cholesky_solve(Hm, na, one);
        double s1 = 0.0, sg = 0.0;
        for (size_t a = 0; a < na; a++) s1 += one[a], sg += g[a];
        double nu = (1.0 - sg) / s1;
        size_t worst = SIZE_MAX;
        double wv = 0.0;
        for (size_t a = 0; a < na; a++) {
            double v = g[a] + nu * one[a];
            w[ia[a]] = v;
            if (v < wv) wv = v, worst = a;
        }
        if (worst != SIZE_MAX) {
            act[ia[worst]] = false;
            continue;
        }
        size_t sm = 0;
        for (size_t a = 1; a < na; a++)
            if (w[ia[a]] < w[ia[sm]]) sm = a;
        /* at most kmax, and none below AMI_WMIN: a 1% influence changes the fit by less than
         * the noise, but costs a bone in every frame of the point's work */
        if (na > kmax || w[ia[sm]] < AMI_WMIN) {
            act[ia[sm]] = false;
            continue;
        }
        return;
    }
}

typedef struct ami_work {
    ami_dec *d;
    size_t n0, n1;                /* points [n0, n1) */
    bool update_pstar, solve_weights, update_rest;
    double delta, delta2, lam;
    ami_hist hist, thist;         /* residual norms (1/8 sample), track RMS residuals */
    double *F, *H;                /* this worker's sums (worker 0: d->F, d->H) */
    am_scope *caller;             /* the call's scope, which worker threads join */
} ami_work;

ami_work *ami_dec_work_alloc(size_t threads) { return am_alloc_array(threads, sizeof(ami_work)); }

/* One frame loop over point n: the reconstruction from its active bones, the pseudo-
 * observations (Huber-clipped, EM-filled), their residual statistics, and the right-hand
 * sides sum_t G_ct^T p*_t of the first MC weight candidates (MC a constant, so their
 * accumulators stay in registers). Same operations in the same order as separate loops.
 *
 * Four frames at a time, one vector per coordinate (structure of arrays): the per-entry work
 * (reconstruction, residual, Huber factor, float rounding) is element-wise, so each lane
 * sees the scalar loop's operations exactly; only the sums that run along the frames (the
 * statistics, the candidates' right-hand sides) are taken lane by lane in frame order. The
 * scalar form was ~45 instructions per entry on one lane, most of the pass. */
typedef float ami_f4 __attribute__((vector_size(16)));
typedef int64_t ami_m4 __attribute__((vector_size(32))); /* lane masks: all ones or zero */

/* lane l all ones where bit l is set */
#define AMI_M(b) (-(int64_t)((b) & 1))
#define AMI_MROW(i) {AMI_M(i), AMI_M((i) >> 1), AMI_M((i) >> 2), AMI_M((i) >> 3)}
static const ami_m4 ami_lane_mask[16] = {AMI_MROW(0),  AMI_MROW(1),  AMI_MROW(2),  AMI_MROW(3),
                                         AMI_MROW(4),  AMI_MROW(5),  AMI_MROW(6),  AMI_MROW(7),
                                         AMI_MROW(8),  AMI_MROW(9),  AMI_MROW(10), AMI_MROW(11),
                                         AMI_MROW(12), AMI_MROW(13), AMI_MROW(14), AMI_MROW(15)};
#undef AMI_MROW
#undef AMI_M

/* bit l = visibility flag l (flags are 0 or 1) */
AMI_INLINE unsigned ami_vis_bits(const uint8_t *vi)
{
    uint32_t u;
    memcpy(&u, vi, sizeof u);
    return (u * 0x01020408u) >> 24; /* byte 3 of the product = f0 + 2 f1 + 4 f2 + 8 f3 */
}

/* lanes of a where m is set, else of b (a macro: a function returning a 32-byte vector
 * changes the ABI of the baseline clone) */
#define AMI_SEL(m, a, b) ((ami_v4)((((ami_m4)(a)) & (m)) | (((ami_m4)(b)) & ~(m))))

/* 12 floats x y z of four frames -> three double vectors (conversion is exact) */
AMI_INLINE void ami_load_xyz4(const float *o, ami_v4 *x, ami_v4 *y, ami_v4 *z)
{
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
    ami_f4 A, B, C;
    memcpy(&A, o, sizeof A);
    memcpy(&B, o + 4, sizeof B);
    memcpy(&C, o + 8, sizeof C);
    ami_f4 X = __builtin_shufflevector(__builtin_shufflevector(A, B, 0, 3, 6, 7), C, 0, 1, 2, 5);
    ami_f4 Y = __builtin_shufflevector(__builtin_shufflevector(A, B, 1, 4, 7, 7), C, 0, 1, 2, 6);
    ami_f4 Z = __builtin_shufflevector(__builtin_shufflevector(A, B, 2, 5, 5, 5), C, 0, 1, 4, 7);
    *x = __builtin_convertvector(X, ami_v4);
    *y = __builtin_convertvector(Y, ami_v4);
    *z = __builtin_convertvector(Z, ami_v4);
#else
    *x = (ami_v4){o[0], o[3], o[6], o[9]};
    *y = (ami_v4){o[1], o[4], o[7], o[10]};
    *z = (ami_v4){o[2], o[5], o[8], o[11]};
#endif
}

/* the reconstruction of four frames from NA (1-4; 0: na) bones: per coordinate i,
 * r_i += ((w0 G_i0 + w1 G_i1) + w2 G_i2) + w3 G_i3, as the column form did lane by lane.
 * q[a]: bone a's block of Gq (12 vectors (i, j) over the four frames). */
AMI_INLINE void ami_recon4(const double *const *q, const ami_v4 *wx, size_t na, const int NA, ami_v4 *r0,
                           ami_v4 *r1, ami_v4 *r2)
{
    ami_v4 z = {0, 0, 0, 0}, x = z, y = z, w = z;
    for (size_t a = 0; a < (NA > 0 ? (size_t)NA : na); a++) {
        const double *Q = q[a];
        double w0 = wx[a][0], w1 = wx[a][1], w2 = wx[a][2], w3 = wx[a][3];
        ami_v4 g0, g1, g2, g3; /* one row at a time: a local array of all 12 was copied */
#define AMI_ROW(i, acc)                                                                            \
    memcpy(&g0, Q + (i) * 16, sizeof g0);                                                          \
    memcpy(&g1, Q + (i) * 16 + 4, sizeof g1);                                                      \
    memcpy(&g2, Q + (i) * 16 + 8, sizeof g2);                                                      \
    memcpy(&g3, Q + (i) * 16 + 12, sizeof g3);                                                     \
    acc += w0 * g0 + w1 * g1 + w2 * g2 + w3 * g3;
        AMI_ROW(0, x)
        AMI_ROW(1, y)
        AMI_ROW(2, w)
#undef AMI_ROW
    }
    *r0 = x, *r1 = y, *r2 = w;
}

typedef struct {
    size_t T, n, na;
    const double *const *gq;   /* [na] Gq blocks of the active bones, frames 0-3 */
    const ami_v4 *wx;          /* [na] w_a [r;1] */
    size_t qstride;            /* doubles from one block of four frames to the next */
    const double *const *gc;   /* [MC] G rows of the candidates, frame 0 */
    size_t gstride;
    const float *ob;
    const uint8_t *vi;
    float *ps;
    bool em;
    double delta, delta2;
    ami_hist *hist;
} ami_pass_in;

/* Frames t0 .. t0 + nl - 1 (nl <= 4; o, v hold 4 frames, lanes >= nl unseen) of the frame
 * loop: see ami_pstar_frames. */
AMI_INLINE void ami_pstar_block(const ami_pass_in *in, const int NA, const int MC, size_t t0, const int nl,
                                const float *o, const uint8_t *v, float *ps, const double *const *q,
                                ami_v4 *a0, ami_v4 *a1, ami_v4 *a2, ami_v4 *a3, double *msum, size_t *mcount,
                                double *p2sum)
{
    ami_v4 rc0, rc1, rc2, o0, o1, o2;
    ami_recon4(q, in->wx, in->na, NA, &rc0, &rc1, &rc2);
    ami_load_xyz4(o, &o0, &o1, &o2);
    unsigned vb = ami_vis_bits(v);
    ami_m4 vm = ami_lane_mask[vb];
    ami_v4 e0 = o0 - rc0, e1 = o1 - rc1, e2 = o2 - rc2;
    ami_v4 e2n = e0 * e0 + e1 * e1 + e2 * e2; /* squared: no sqrt per entry */
    if (vb) {
        /* a 1/8 sample is plenty: frames with (t + n) % 8 == 0, at most one per block */
        unsigned l = (unsigned)((8 - ((t0 + in->n) & 7)) & 7);
        if (l < (unsigned)nl && (vb >> l & 1)) ami_hist_add(in->hist, sqrt(e2n[l]));
        ami_v4 zero = {0, 0, 0, 0}, ms = AMI_SEL(vm, e2n, zero); /* + 0.0 leaves the sum as it is */
        *msum += ms[0];
        *msum += ms[1];
        *msum += ms[2];
        *msum += ms[3];
        *mcount += (size_t)__builtin_popcount(vb);
    }
    ami_v4 f = {1.0, 1.0, 1.0, 1.0};
    unsigned hb = 0;
    ami_m4 over = (ami_m4)(e2n > in->delta2) & vm;
    for (int l = 0; l < 4; l++) hb |= over[l] ? 1u << l : 0u;
    if (hb)
        for (int l = 0; l < 4; l++)
            if (hb >> l & 1) f[l] = in->delta / sqrt(e2n[l]);
    ami_v4 p0 = rc0 + f * e0, p1 = rc1 + f * e1, p2 = rc2 + f * e2;
    if (!in->em) rc0 = o0, rc1 = o1, rc2 = o2; /* hidden entries: the filled observations */
    p0 = AMI_SEL(vm, p0, rc0), p1 = AMI_SEL(vm, p1, rc1), p2 = AMI_SEL(vm, p2, rc2);
    ami_f4 f0 = __builtin_convertvector(p0, ami_f4), f1 = __builtin_convertvector(p1, ami_f4);
    ami_f4 f2 = __builtin_convertvector(p2, ami_f4);
    if (nl == 4) {
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
        ami_f4 A = __builtin_shufflevector(__builtin_shufflevector(f0, f1, 0, 4, 1, 5), f2, 0, 1, 4, 2);
        ami_f4 B = __builtin_shufflevector(__builtin_shufflevector(f1, f2, 1, 5, 2, 6), f0, 0, 1, 6, 2);
        ami_f4 C = __builtin_shufflevector(__builtin_shufflevector(f0, f1, 3, 7, 3, 7), f2, 6, 0, 1, 7);
        memcpy(ps, &A, sizeof A);
        memcpy(ps + 4, &B, sizeof B);
        memcpy(ps + 8, &C, sizeof C);
#else
        for (int l = 0; l < 4; l++) ps[l * 3] = f0[l], ps[l * 3 + 1] = f1[l], ps[l * 3 + 2] = f2[l];
#endif
    } else {
        for (int l = 0; l < nl; l++) ps[l * 3] = f0[l], ps[l * 3 + 1] = f1[l], ps[l * 3 + 2] = f2[l];
    }
    /* (Y, z) += R^T p, t.p: rows of G times p, the float-rounded p* as stored */
    ami_v4 q0 = __builtin_convertvector(f0, ami_v4), q1 = __builtin_convertvector(f1, ami_v4);
    ami_v4 q2 = __builtin_convertvector(f2, ami_v4);
    ami_v4 pp = q0 * q0 + q1 * q1 + q2 * q2;
    for (int l = 0; l < nl; l++) {
        *p2sum += pp[l];
        double s0 = q0[l], s1 = q1[l], s2 = q2[l];
        size_t t = t0 + (size_t)l;
#define AMI_YACC(i, ai)                                                                            \
    if (MC > i) {                                                                                  \
        const double *G = in->gc[i] + t * in->gstride;                                             \
        ami_v4 g0, g1, g2;                                                                         \
        memcpy(&g0, G, sizeof g0);                                                                 \
        memcpy(&g1, G + 4, sizeof g1);                                                             \
        memcpy(&g2, G + 8, sizeof g2);                                                             \
        *ai += s0 * g0 + s1 * g1 + s2 * g2;                                                        \
    }
        AMI_YACC(0, a0)
        AMI_YACC(1, a1)
        AMI_YACC(2, a2)
        AMI_YACC(3, a3)
#undef AMI_YACC
    }
}

AMI_INLINE void ami_pstar_frames(const ami_pass_in *in, const int NA, const int MC, ami_v4 *acc,
                                 double *msum_out, size_t *mcount_out, double *p2sum_out)
{
    size_t T = in->T, na = in->na;
    double msum = 0.0, p2sum = 0.0;
    size_t mcount = 0;
    ami_v4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    const double *q[AMI_K];
    for (size_t a = 0; a < na; a++) q[a] = in->gq[a];
    size_t t0 = 0;
    for (; t0 + 4 <= T; t0 += 4) {
        ami_pstar_block(in, NA, MC, t0, 4, in->ob + t0 * 3, in->vi + t0, in->ps + t0 * 3, q, &a0, &a1, &a2, &a3,
                        &msum, &mcount, &p2sum);
        for (size_t a = 0; a < na; a++) q[a] += in->qstride;
    }
    if (t0 < T) { /* the last frames, from copies padded to four (the padding lanes unseen) */
        float o[12] = {0};
        uint8_t v[4] = {0};
        memcpy(o, in->ob + t0 * 3, (T - t0) * 3 * sizeof(float));
        memcpy(v, in->vi + t0, T - t0);
        ami_pstar_block(in, NA, MC, t0, (int)(T - t0), o, v, in->ps + t0 * 3, q, &a0, &a1, &a2, &a3, &msum,
                        &mcount, &p2sum);
    }
    if (MC > 0) acc[0] = a0;
    if (MC > 1) acc[1] = a1;
    if (MC > 2) acc[2] = a2;
    if (MC > 3) acc[3] = a3;
    *msum_out = msum;
    *mcount_out = mcount;
    *p2sum_out = p2sum;
}

/* The per-point work of a pass over points [n0, n1): pseudo-observations, weights, rest,
 * then the point's F/H contributions while its frames are in cache. Workers share only
 * read-only state; each point's outputs are its own. */
AMI_HOT static void *ami_weights_worker(void *arg)
{
    ami_work *w = arg;
    ami_dec *d = w->d;
    size_t T = d->T;
    bool update_pstar = w->update_pstar, solve_weights = w->solve_weights, update_rest = w->update_rest;
    double delta = w->delta, delta2 = w->delta2, lam = w->lam;
    for (size_t n = w->n0; n < w->n1; n++) {
        /* the neighbours' previous weights are scattered over the point order (the kNN graph
         * of unordered tracks): fetch those of a point two ahead while this one computes (their
         * load was ~4% of `rig` at 5,000 points, a cache miss per neighbour) */
        if (solve_weights && n + 2 < w->n1)
            for (int32_t e = d->nb_off[n + 2]; e < d->nb_off[n + 3]; e++) {
                __builtin_prefetch(d->w_old + (size_t)d->nb[e] * AMI_K);
                __builtin_prefetch(d->idx_old + (size_t)d->nb[e] * AMI_K);
            }
        double *r = d->rest + n * 3;
        int32_t *ix = d->idx + n * AMI_K;
        double *wn = d->w + n * AMI_K;
        /* candidate bones: the point's own and its neighbours' */
        int32_t cand[AMI_MAXC];
        size_t m = 0;
        if (solve_weights) {
            for (int k = 0; k < AMI_K; k++)
                if (wn[k] > 0.0) cand[m++] = ix[k];
            for (int32_t e = d->nb_off[n]; e < d->nb_off[n + 1] && m < AMI_MAXC; e++) {
                int32_t o = d->nb[e];
                for (int k = 0; k < AMI_K && m < AMI_MAXC; k++) {
                    if (!(d->w_old[(size_t)o * AMI_K + k] > 0.0)) continue;
                    int32_t b = d->idx_old[(size_t)o * AMI_K + k];
                    bool have = false;
                    for (size_t c = 0; c < m; c++) have = have || cand[c] == b;
                    if (!have) cand[m++] = b;
                }
            }
        }
        double Y[AMI_MAXC][3], z[AMI_MAXC], P2 = 0.0, msum = 0.0, p2sum = 0.0;
        size_t mcount = 0;
        memset(Y, 0, sizeof Y);
        memset(z, 0, sizeof z);
        const float *ob = d->obs + n * T * 3;
        const uint8_t *vi = d->vis + n * T;
        float *ps = d->pstar + n * T * 3;
        /* the point's active bones, hoisted out of the frame loop */
        const double *gb[AMI_K];
        double aw[AMI_K];
        size_t na = 0;
        for (int k = 0; k < AMI_K; k++)
            if (wn[k] > 0.0) gb[na] = d->G + (size_t)ix[k] * 12, aw[na] = wn[k], na++;
        size_t gstride = d->gs * 12, qstride = d->gs * 48;
        const double *gq[AMI_K];
        for (size_t a = 0; a < na; a++) gq[a] = d->Gt + (size_t)(gb[a] - d->G) / 12 * 48;
        ami_v4 wx[AMI_K];
        for (size_t a = 0; a < na; a++) wx[a] = (ami_v4){aw[a] * r[0], aw[a] * r[1], aw[a] * r[2], aw[a]};
        const double *gc[AMI_MAXC];
        ami_v4 acc[AMI_MAXC];
        for (size_t c = 0; c < m; c++) gc[c] = d->G + (size_t)cand[c] * 12, acc[c] = (ami_v4){0, 0, 0, 0};
        size_t done = 0; /* candidates whose sums the frame loop already made */
        if (update_pstar) {
            ami_pass_in in = {T, n, na, gq, wx, qstride, gc, gstride, ob, vi, ps, d->em, delta, delta2, &w->hist};
            size_t mc = solve_weights ? (m < 4 ? m : 4) : 0;
            /* constant bone and candidate counts: everything per point in registers (points
             * blend 1-2 bones on occluded clips, 3 on clean ones: 1.8 vs 2.9 on average) */
            size_t nk = na >= 1 && na <= AMI_K ? na : 0;
            switch (nk * 8 + mc) {
#define AMI_CASE(NA, MC)                                                                           \
    case NA * 8 + MC: ami_pstar_frames(&in, NA, MC, acc, &msum, &mcount, &p2sum); break;
            AMI_CASE(0, 0) AMI_CASE(0, 1) AMI_CASE(0, 2) AMI_CASE(0, 3) AMI_CASE(0, 4)
            AMI_CASE(1, 0) AMI_CASE(1, 1) AMI_CASE(1, 2) AMI_CASE(1, 3) AMI_CASE(1, 4)
            AMI_CASE(2, 0) AMI_CASE(2, 1) AMI_CASE(2, 2) AMI_CASE(2, 3) AMI_CASE(2, 4)
            AMI_CASE(3, 0) AMI_CASE(3, 1) AMI_CASE(3, 2) AMI_CASE(3, 3) AMI_CASE(3, 4)
            AMI_CASE(4, 0) AMI_CASE(4, 1) AMI_CASE(4, 2) AMI_CASE(4, 3) AMI_CASE(4, 4)
#undef AMI_CASE
            default: break;
            }
            done = mc;
        }
        if (solve_weights) {
            /* the remaining candidates: candidates outside, frames inside, one accumulator in
             * registers while the point's frames (T * 12 bytes) stay in L1 */
            size_t cc = done;
            /* two at a time: p* is read and widened once for both (same sums per candidate) */
            for (; cc + 2 <= m; cc += 2) {
                ami_v4 a4 = {0, 0, 0, 0}, b4 = a4;
                const double *G = gc[cc], *G2 = gc[cc + 1];
                for (size_t t = 0; t < T; t++, G += gstride, G2 += gstride) {
                    double p0 = ps[t * 3], p1 = ps[t * 3 + 1], p2 = ps[t * 3 + 2];
                    ami_v4 g0, g1, g2, h0, h1, h2;
                    memcpy(&g0, G, sizeof g0);
                    memcpy(&g1, G + 4, sizeof g1);
                    memcpy(&g2, G + 8, sizeof g2);
                    memcpy(&h0, G2, sizeof h0);
                    memcpy(&h1, G2 + 4, sizeof h1);
                    memcpy(&h2, G2 + 8, sizeof h2);
                    a4 += p0 * g0 + p1 * g1 + p2 * g2;
                    b4 += p0 * h0 + p1 * h1 + p2 * h2;
                }
                acc[cc] = a4;
                acc[cc + 1] = b4;
            }
            for (size_t c = cc; c < m; c++) { /* (Y, z) += R^T p, t.p: rows of G times p */
                ami_v4 a4 = {0, 0, 0, 0};
                const double *G = gc[c];
                for (size_t t = 0; t < T; t++, G += gstride) {
                    double p0 = ps[t * 3], p1 = ps[t * 3 + 1], p2 = ps[t * 3 + 2];
                    ami_v4 g0, g1, g2;
                    memcpy(&g0, G, sizeof g0);
                    memcpy(&g1, G + 4, sizeof g1);
                    memcpy(&g2, G + 8, sizeof g2);
                    a4 += p0 * g0 + p1 * g1 + p2 * g2;
                }
                acc[c] = a4;
            }
            if (update_pstar) {
                P2 = p2sum;
            } else { /* four partial sums: -O2 does not vectorize a plain FP reduction */
                ami_v4 q4 = {0, 0, 0, 0};
                size_t t3 = 0;
                for (; t3 + 4 <= 3 * T; t3 += 4) {
                    ami_v4 v = {ps[t3], ps[t3 + 1], ps[t3 + 2], ps[t3 + 3]};
                    q4 += v * v;
                }
                P2 = q4[0] + q4[1] + q4[2] + q4[3];
                for (; t3 < 3 * T; t3++) P2 += (double)ps[t3] * ps[t3];
            }
            for (size_t c = 0; c < m; c++) Y[c][0] = acc[c][0], Y[c][1] = acc[c][1], Y[c][2] = acc[c][2], z[c] = acc[c][3];
        }
        if (update_pstar) {
            d->mres[n] = mcount ? sqrt(msum / (double)mcount) : -1.0; /* RMS; track weight below */
            if (mcount && (n & 3) == 0) ami_hist_add(&w->thist, d->mres[n]);
        }
        if (!solve_weights || m == 0) {
            ami_accum_point(d, n, w->F, w->H); /* while its data is in cache */
            continue;
        }
        /* E_jk = sum_t (G_j r - p_t).(G_k r - p_t): the residual Gram matrix (PSD, origin-free). */
        double E[AMI_MAXC * AMI_MAXC], bv[AMI_MAXC], wb[AMI_MAXC], wsol[AMI_MAXC];
        for (size_t a = 0; a < m; a++) bv[a] = am_vec3_dot(r, Y[a]) + z[a];
        for (size_t a = 0; a < m; a++) {
            for (size_t b = a; b < m; b++) {
                size_t j = (size_t)cand[a], k = (size_t)cand[b];
                const double *S = d->S + (j * AMI_MAXB + k) * 9;
                double Sr[3];
                am_mat3_mul_vec3(S, r, Sr);
                double M = am_vec3_dot(r, Sr) + am_vec3_dot(r, d->U + (j * AMI_MAXB + k) * 3) +
                           am_vec3_dot(r, d->U + (k * AMI_MAXB + j) * 3) + d->C[j * AMI_MAXB + k];
                double v = M - bv[a] - bv[b] + P2;
                E[a * m + b] = E[b * m + a] = v;
            }
        }
        for (size_t a = 0; a < m; a++) wb[a] = 0.0;
        double nbw = 0.0;
        for (int32_t e = d->nb_off[n]; e < d->nb_off[n + 1]; e++) {
            int32_t o = d->nb[e];
            for (int k = 0; k < AMI_K; k++) {
                double v = d->w_old[(size_t)o * AMI_K + k];
                if (!(v > 0.0)) continue;
                for (size_t c = 0; c < m; c++)
                    if (cand[c] == d->idx_old[(size_t)o * AMI_K + k]) wb[c] += v;
            }
            nbw += 1.0;
        }
        if (nbw > 0.0)
            for (size_t a = 0; a < m; a++) wb[a] /= nbw;
        /* ours: E counts the hidden frames at the model's own prediction (EM), which only
         * says "stay"; the evidence is the visible frames, so the smoothness weighs T / visible
         * times more for a point seen in few frames, whose weights then lean on its
         * neighbours' (hidden entries of the baked degraded Spider 1.08 -> 0.98 %, Khronos Fox
         * 0.39 -> 0.36 %, synthetic biped 1.11 -> 1.05 %) */
        double lam_n = lam;
        if (d->em) {
            size_t nv = mcount; /* the frame loop counted the visible frames (flags are 0 or 1) */
            if (!update_pstar) {
                nv = 0;
                for (size_t t = 0; t < T; t++) nv += vi[t];
            }
            lam_n = lam * (double)T / (double)(nv ? nv : 1);
        }
        ami_weights_qp(E, m, nbw > 0.0 ? lam_n : 0.0, wb, AMI_K, wsol);
        size_t slot = 0;
        for (int k = 0; k < AMI_K; k++) ix[k] = cand[0], wn[k] = 0.0;
        for (size_t a = 0; a < m && slot < AMI_K; a++) {
            if (wsol[a] > 0.0) {
                ix[slot] = cand[a];
                wn[slot] = wsol[a];
                slot++;
            }
        }
        double ssum = 0.0;
        for (int k = 0; k < AMI_K; k++) ssum += wn[k];
        if (ssum > 0.0)
            for (int k = 0; k < AMI_K; k++) wn[k] /= ssum;
        else
            wn[0] = 1.0;
        if (update_rest) {
            /* r = (sum_jk w_j w_k S_jk)^-1 (sum_k w_k Y_k - sum_jk w_j w_k U_jk) */
            double A[9] = {0}, rhs[3] = {0, 0, 0};
            for (int a = 0; a < AMI_K; a++) {
                if (!(wn[a] > 0.0)) continue;
                size_t ca = 0;
                while (ca < m && cand[ca] != ix[a]) ca++;
                for (int i = 0; i < 3; i++) rhs[i] += wn[a] * Y[ca][i];
                for (int b = 0; b < AMI_K; b++) {
                    if (!(wn[b] > 0.0)) continue;
                    size_t j = (size_t)ix[a], k = (size_t)ix[b];
                    const double *S = d->S + (j * AMI_MAXB + k) * 9;
                    const double *U = d->U + (j * AMI_MAXB + k) * 3;
                    double ww = wn[a] * wn[b];
                    for (int i = 0; i < 9; i++) A[i] += ww * S[i];
                    for (int i = 0; i < 3; i++) rhs[i] -= ww * U[i];
                }
            }
            double Ai[9], nr[3];
            if (am_mat3_inverse(A, Ai) && am_mat3_det(A) > 1e-6 * (double)T * (double)T * (double)T) {
                am_mat3_mul_vec3(Ai, rhs, nr);
                if (isfinite(nr[0]) && isfinite(nr[1]) && isfinite(nr[2])) memcpy(r, nr, sizeof nr);
            }
        }
        ami_accum_point(d, n, w->F, w->H);
    }
    return NULL;
}

/* A worker thread runs inside the caller's scope: its allocations, warnings and limits are
 * the call's (the per-point work allocates nothing today; the join keeps it so if it does). */
static void *ami_weights_thread(void *arg)
{
    ami_work *w = arg;
    am_scope sc;
    if (w->caller) am_scope_join(&sc, w->caller);
    ami_weights_worker(w);
    if (w->caller) am_scope_leave(&sc, NULL);
    return NULL;
}

static void ami_accum_clear_buf(const ami_dec *d, double *F, double *H)
{
    memset(F, 0, sizeof(double) * d->B * d->T * 12);
    for (size_t j = 0; j < d->B; j++) memset(H + j * d->bcap * 16, 0, sizeof(double) * d->B * 16);
}

void ami_dec_pass_weights(ami_dec *d, bool update_pstar, bool solve_weights, bool update_rest)
{
    size_t T = d->T, N = d->N, B = d->B;
    size_t nt = d->threads ? d->threads : 1;
    if (nt > AMI_MAXT) nt = AMI_MAXT;
    if (nt > N / 64 + 1) nt = N / 64 + 1; /* tiny inputs: not worth a thread */
    if (solve_weights) {
        memcpy(d->w_old, d->w, sizeof(double) * N * AMI_K);
        memcpy(d->idx_old, d->idx, sizeof(int32_t) * N * AMI_K);
        ami_dec_stats(d);
    }
    if (update_pstar) ami_quads(d, d->G); /* G in blocks of four frames for the reconstruction */
    double delta = (d->robust && !d->plain && d->med_res > 0.0) ? d->huber * d->med_res : INFINITY;
    double delta2 = delta * delta;
    double lam = d->alpha * (double)T * d->med_res * d->med_res;
    ami_work *wk = d->work;
    for (size_t i = 0; i < nt; i++) {
        ami_work *w = &wk[i];
        w->d = d;
        w->n0 = N * i / nt;
        w->n1 = N * (i + 1) / nt;
        w->update_pstar = update_pstar, w->solve_weights = solve_weights, w->update_rest = update_rest;
        w->delta = delta, w->delta2 = delta2, w->lam = lam;
        w->caller = am_scope_current();
        ami_hist_init(&w->hist, d->body);
        ami_hist_init(&w->thist, d->body);
        w->F = i ? d->Fw + (i - 1) * d->bcap * T * 12 : d->F;
        w->H = i ? d->Hw + (i - 1) * d->bcap * d->bcap * 16 : d->H;
        ami_accum_clear_buf(d, w->F, w->H);
    }
    pthread_t th[AMI_MAXT];
    bool started[AMI_MAXT] = {false};
    for (size_t i = 1; i < nt; i++) started[i] = pthread_create(&th[i], NULL, ami_weights_thread, &wk[i]) == 0;
    ami_weights_worker(&wk[0]);
    for (size_t i = 1; i < nt; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            ami_weights_worker(&wk[i]); /* no thread: do its share here */
    }
    /* reduce in a fixed order: results depend on the thread count, never on timing */
    ami_hist hist = wk[0].hist, thist = wk[0].thist;
    for (size_t i = 1; i < nt; i++) {
        for (int b = 0; b < AMI_HB; b++) hist.count[b] += wk[i].hist.count[b], thist.count[b] += wk[i].thist.count[b];
        for (size_t x = 0; x < B * T * 12; x++) d->F[x] += wk[i].F[x];
        for (size_t j = 0; j < B; j++)
            for (size_t x = 0; x < B * 16; x++) d->H[j * d->bcap * 16 + x] += wk[i].H[j * d->bcap * 16 + x];
    }
    d->f_ready = true;
    if (update_pstar) {
        d->med_res = ami_hist_quantile(&hist, 0.5);
        double tmed = ami_hist_quantile(&thist, 0.5);
        for (size_t n = 0; n < N; n++) {
            double mres = d->mres[n];
            if (!d->robust || d->plain || mres < 0.0 || !(tmed > 0.0)) {
                d->cn[n] = 1.0;
            } else {
                /* Cauchy weight on the track's mean residual: a track that is bad for most of
                 * the clip (a swapped or drifting track) stops steering the bones. */
                double u = mres / (3.0 * tmed);
                d->cn[n] = 1.0 / (1.0 + u * u);
            }
        }
    }
}

/* F rows of NA (1-4; 0: any count) active bones in one frame loop: p* is read once */
AMI_INLINE void ami_accum_frames(const float *ps, size_t T, const int NA, size_t na, double *const *Fb,
                                 const ami_v4 *vb)
{
#define AMI_FROW(F, v)                                                                             \
    do {                                                                                           \
        ami_v4 f0, f1, f2;                                                                         \
        memcpy(&f0, F, sizeof f0);                                                                 \
        memcpy(&f1, F + 4, sizeof f1);                                                             \
        memcpy(&f2, F + 8, sizeof f2);                                                             \
        f0 += p0 * v;                                                                              \
        f1 += p1 * v;                                                                              \
        f2 += p2 * v;                                                                              \
        memcpy(F, &f0, sizeof f0);                                                                 \
        memcpy(F + 4, &f1, sizeof f1);                                                             \
        memcpy(F + 8, &f2, sizeof f2);                                                             \
    } while (0)
    ami_v4 v0 = vb[0], v1 = NA > 1 ? vb[1] : vb[0], v2 = NA > 2 ? vb[2] : vb[0], v3 = NA > 3 ? vb[3] : vb[0];
    double *F0 = Fb[0], *F1 = NA > 1 ? Fb[1] : Fb[0], *F2 = NA > 2 ? Fb[2] : Fb[0], *F3 = NA > 3 ? Fb[3] : Fb[0];
    for (size_t t = 0; t < T; t++) {
        double p0 = ps[t * 3], p1 = ps[t * 3 + 1], p2 = ps[t * 3 + 2];
        if (NA > 0) {
            AMI_FROW(F0 + t * 12, v0);
            if (NA > 1) AMI_FROW(F1 + t * 12, v1);
            if (NA > 2) AMI_FROW(F2 + t * 12, v2);
            if (NA > 3) AMI_FROW(F3 + t * 12, v3);
        } else {
            for (size_t a = 0; a < na; a++) AMI_FROW(Fb[a] + t * 12, vb[a]);
        }
    }
#undef AMI_FROW
}

/* F and H contributions of point n (its current weights, rest and pseudo-observations). */
AMI_HOT static void ami_accum_point(ami_dec *d, size_t n, double *Fs, double *Hs)
{
    size_t T = d->T;
    const double *r = d->rest + n * 3;
    const int32_t *ix = d->idx + n * AMI_K;
    const double *wn = d->w + n * AMI_K;
    double x[4] = {r[0], r[1], r[2], 1.0}, c = d->cn[n];
    const float *ps = d->pstar + n * T * 3;
    double *Fb[AMI_K];
    ami_v4 vb[AMI_K];
    size_t na = 0;
    for (int a = 0; a < AMI_K; a++) {
        if (!(wn[a] > 0.0)) continue;
        double cw = c * wn[a];
        ami_v4 v = {cw * x[0], cw * x[1], cw * x[2], cw};
        Fb[na] = Fs + (size_t)ix[a] * T * 12, vb[na] = v, na++;
        for (int b = 0; b < AMI_K; b++) {
            if (!(wn[b] > 0.0)) continue;
            double *H = Hs + ((size_t)ix[a] * d->bcap + (size_t)ix[b]) * 16;
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) H[i * 4 + j] += v[i] * wn[b] * x[j];
        }
    }
    /* the slots in order per frame: a bone held by two slots gets its sums in the same order */
    if (na == 1)
        ami_accum_frames(ps, T, 1, 1, Fb, vb);
    else if (na == 2)
        ami_accum_frames(ps, T, 2, 2, Fb, vb);
    else if (na == 3)
        ami_accum_frames(ps, T, 3, 3, Fb, vb);
    else if (na == 4)
        ami_accum_frames(ps, T, 4, 4, Fb, vb);
    else if (na > 0)
        ami_accum_frames(ps, T, 0, na, Fb, vb);
}

static void ami_accum_clear(ami_dec *d)
{
    memset(d->F, 0, sizeof(double) * d->B * d->T * 12);
    for (size_t j = 0; j < d->B; j++) memset(d->H + j * d->bcap * 16, 0, sizeof(double) * d->B * 16);
}

/* The rigid transform G (3x4, warm start in) minimising tr(G H G^T) - 2 tr(G Q^T): a weighted
 * Procrustes problem in sums. Free (h0 == NULL): any translation. Pinned: G x = R (x - h0) + h1,
 * a rotation about the joint h0 whose image h1 the parent fixes. */
static void ami_fit_bone(const double Q[12], const double H[16], const double *h0, const double *h1, double G[12])
{
    double sw = H[15], a[3] = {H[3], H[7], H[11]}, q[3] = {Q[3], Q[7], Q[11]}, Cm[9], R[9], tr[3];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++) R[i * 3 + c] = G[i * 4 + c];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            Cm[i * 3 + c] = h0 ? Q[i * 4 + c] - h1[i] * a[c] + sw * h1[i] * h0[c] - q[i] * h0[c]
                               : Q[i * 4 + c] - q[i] * a[c] / sw;
    am_mat3_polar_rotation(Cm, AMI_POLAR_STEPS, 1e-9, R);
    double v[3];
    am_mat3_mul_vec3(R, h0 ? h0 : a, v);
    for (int i = 0; i < 3; i++) tr[i] = h0 ? h1[i] - v[i] : (q[i] - v[i]) / sw;
    for (int i = 0; i < 3; i++) {
        for (int c = 0; c < 3; c++) G[i * 4 + c] = R[i * 3 + c];
        G[i * 4 + 3] = tr[i];
    }
}

/* F and H for the current weights: left by the fused per-point pass, else summed here. A bone
 * step consumes them (it changes the transforms the next pass reads). */
static void ami_sums_take(ami_dec *d)
{
    if (!d->f_ready) {
        ami_accum_clear(d);
        for (size_t n = 0; n < d->N; n++) ami_accum_point(d, n, d->F, d->H);
    }
    d->f_ready = false;
}

void ami_dec_pass_transforms(ami_dec *d, int sweeps)
{
    size_t T = d->T, B = d->B;
    ami_sums_take(d);
    bool fill = d->em; /* ours */
    /* which bone pairs couple (H_jk != 0); 4 KB on the stack keeps the pass re-entrant */
    uint8_t coupled[AMI_MAXB][AMI_MAXB];
    for (size_t j = 0; j < B; j++)
        for (size_t k = 0; k < B; k++) coupled[j][k] = j != k && d->H[(j * d->bcap + k) * 16 + 15] > 0.0;
    for (size_t t = 0; t < T; t++) {
        double *g = d->G + t * d->gs * 12;
        for (int s = 0; s < sweeps; s++) {
            for (size_t oi = 0; oi < B; oi++) {
                size_t k = oi;
                const double *Hkk = d->H + (k * d->bcap + k) * 16;
                double sw = Hkk[15];
                if (!(sw > 1e-300)) continue;
                double Q[12];
                memcpy(Q, d->F + (k * T + t) * 12, sizeof Q);
                for (size_t j = 0; j < B; j++) {
                    if (!coupled[j][k]) continue;
                    const double *Gj = g + j * 12, *Hjk = d->H + (j * d->bcap + k) * 16;
                    for (int i = 0; i < 3; i++)
                        for (int c = 0; c < 4; c++)
                            Q[i * 4 + c] -= Gj[i * 4] * Hjk[c] + Gj[i * 4 + 1] * Hjk[4 + c] +
                                            Gj[i * 4 + 2] * Hjk[8 + c] + Gj[i * 4 + 3] * Hjk[12 + c];
                }
                ami_fit_bone(Q, Hkk, NULL, NULL, g + k * 12);
            }
        }
    }
    if (fill) ami_fill_unsupported(d);
}

/* The articulated sweep: bone k rotates about its joint and carries its whole subtree along
 * (descendants keep their transforms relative to k), so each block update minimises the full
 * objective and a sweep can only lower it. Fitting k to its own points alone, as the free
 * sweep does, ignores that its rotation swings every descendant's joint: repeated rounds of
 * that drifted. With G_j = G_k L_j for j in the subtree S, the objective in G_k keeps the form
 * of one bone's with
 *   H_S = sum_{j,i in S} L_j H_ji L_i^T   and   Q_S = sum_{j in S} (F_j - sum_{i not in S} G_i H_ij) L_j^T
 * (L as 4x4 homogeneous), so the same pinned Procrustes solves it. A bone with translation
 * channels (d->loc[k]) takes the unpinned Procrustes instead: its subtree still follows it. */
typedef struct {
    uint64_t sub[AMI_MAXB];             /* bone k and its descendants */
    uint8_t coupled[AMI_MAXB][AMI_MAXB]; /* H_jk != 0 (or j == k) */
    double L[AMI_MAXB][16];             /* 4x4 homogeneous G_k^-1 G_j, row-major */
} ami_artic;

static void ami_artic_init(const ami_dec *d, ami_artic *a)
{
    size_t B = d->B;
    memset(a->sub, 0, sizeof a->sub);
    for (size_t k = 0; k < B; k++) a->sub[k] = (uint64_t)1 << k;
    for (size_t oi = B; oi-- > 0;) {
        size_t k = (size_t)d->order[oi];
        if (d->par[k] >= 0) a->sub[d->par[k]] |= a->sub[k];
    }
    for (size_t j = 0; j < B; j++)
        for (size_t k = 0; k < B; k++) a->coupled[j][k] = j == k || d->H[(j * d->bcap + k) * 16 + 15] > 0.0;
}

/* H_S and Q_S of bone k's subtree at frame t (g = the frame's transforms); fills a->L. */
static void ami_artic_sums(const ami_dec *d, ami_artic *a, const double *g, size_t t, size_t k, double Hs[16],
                           double Q[12])
{
    size_t T = d->T, B = d->B;
    uint64_t S = a->sub[k];
    const double *Gk = g + k * 12;
    for (size_t j = 0; j < B; j++) {
        if (!(S >> j & 1)) continue;
        const double *Gj = g + j * 12;
        double *Lj = a->L[j];
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 4; c++) {
                double v = 0.0;
                for (int m = 0; m < 3; m++) v += Gk[m * 4 + r] * (Gj[m * 4 + c] - (c == 3 ? Gk[m * 4 + 3] : 0.0));
                Lj[r * 4 + c] = v;
            }
        }
        Lj[12] = Lj[13] = Lj[14] = 0.0, Lj[15] = 1.0;
    }
    memset(Hs, 0, 16 * sizeof(double));
    memset(Q, 0, 12 * sizeof(double));
    for (size_t j = 0; j < B; j++) {
        if (!(S >> j & 1)) continue;
        double Qj[12];
        memcpy(Qj, d->F + (j * T + t) * 12, sizeof Qj);
        for (size_t i = 0; i < B; i++) {
            if (!a->coupled[i][j]) continue;
            const double *Hij = d->H + (i * d->bcap + j) * 16;
            if (S >> i & 1) { /* inside: L_j H_ji L_i^T, H_ji = H_ij^T */
                double M[16];
                const double *Li = a->L[i];
                for (int r = 0; r < 4; r++) /* M = L_j H_ij^T */
                    for (int c = 0; c < 4; c++) {
                        double v = 0.0;
                        for (int m = 0; m < 4; m++) v += a->L[j][r * 4 + m] * Hij[c * 4 + m];
                        M[r * 4 + c] = v;
                    }
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++) {
                        double v = 0.0;
                        for (int m = 0; m < 4; m++) v += M[r * 4 + m] * Li[c * 4 + m];
                        Hs[r * 4 + c] += v;
                    }
            } else { /* outside: its current prediction is part of the target */
                const double *Gi = g + i * 12;
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 4; c++)
                        Qj[r * 4 + c] -= Gi[r * 4] * Hij[c] + Gi[r * 4 + 1] * Hij[4 + c] + Gi[r * 4 + 2] * Hij[8 + c] +
                                         Gi[r * 4 + 3] * Hij[12 + c];
            }
        }
        for (int r = 0; r < 3; r++) /* Q += Qj L_j^T */
            for (int c = 0; c < 4; c++) {
                double v = 0.0;
                for (int m = 0; m < 4; m++) v += Qj[r * 4 + m] * a->L[j][c * 4 + m];
                Q[r * 4 + c] += v;
            }
    }
}

/* tr(G H G^T) - 2 tr(G Q^T): the block objective of one bone (3x4 G, H 4x4, Q 3x4). */
static double ami_block_objective(const double G[12], const double H[16], const double Q[12])
{
    double e = 0.0;
    for (int r = 0; r < 3; r++) {
        const double *g = G + r * 4;
        for (int i = 0; i < 4; i++) {
            double hg = 0.0;
            for (int j = 0; j < 4; j++) hg += H[i * 4 + j] * g[j];
            e += g[i] * hg - 2.0 * g[i] * Q[r * 4 + i];
        }
    }
    return e;
}

void ami_dec_pass_articulated(ami_dec *d, int sweeps)
{
    size_t T = d->T, B = d->B;
    ami_sums_take(d);
    ami_artic a; /* ~41 KB on the stack, as the pass's own state: re-entrant */
    ami_artic_init(d, &a);
    for (size_t t = 0; t < T; t++) {
        double *g = d->G + t * d->gs * 12;
        for (int sw_i = 0; sw_i < sweeps; sw_i++) {
            for (size_t oi = 0; oi < B; oi++) {
                size_t k = (size_t)d->order[oi];
                uint64_t S = a.sub[k];
                double *Gk = g + k * 12, Hs[16], Q[12];
                ami_artic_sums(d, &a, g, t, k, Hs, Q);
                bool pinned = d->par[k] >= 0 && !(d->loc && d->loc[k]);
                double h0[3], h1[3];
                if (pinned) {
                    memcpy(h0, d->pivot + k * 3, sizeof h0);
                    am_mat34_apply(g + (size_t)d->par[k] * 12, h0, h1);
                }
                if (Hs[15] > 1e-300) {
                    ami_fit_bone(Q, Hs, pinned ? h0 : NULL, h1, Gk);
                } else if (pinned) { /* no data in the subtree: keep its rotation, ride on the joint */
                    double Rh[3], R[9];
                    for (int i = 0; i < 3; i++)
                        for (int c = 0; c < 3; c++) R[i * 3 + c] = Gk[i * 4 + c];
                    am_mat3_mul_vec3(R, h0, Rh);
                    for (int i = 0; i < 3; i++) Gk[i * 4 + 3] = h1[i] - Rh[i];
                } else {
                    continue; /* no data anywhere in the subtree: leave it */
                }
                for (size_t j = 0; j < B; j++) { /* the subtree follows: G_j = G_k L_j */
                    if (j == k || !(S >> j & 1)) continue;
                    double *Gj = g + j * 12;
                    const double *Lj = a.L[j];
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 4; c++)
                            Gj[r * 4 + c] = Gk[r * 4] * Lj[c] + Gk[r * 4 + 1] * Lj[4 + c] + Gk[r * 4 + 2] * Lj[8 + c] +
                                            (c == 3 ? Gk[r * 4 + 3] : 0.0);
                }
            }
        }
    }
}

/* What translation channels are worth to each bone, from the current transforms: per frame,
 * the block objective of the bone (its subtree carried along, everything else fixed) at its
 * best pinned transform minus at its best free one, summed over frames. In the units of the
 * fit's objective (track-weighted squared distances): gain[k] >= 0, 0 for the root. For a
 * pinned bone, what channels would buy; for a translating one, what pinning it would cost
 * before the rest of the rig adapts. One articulated sweep's work, no change to G. */
void ami_dec_loc_gain(ami_dec *d, double *gain)
{
    size_t T = d->T, B = d->B;
    ami_sums_take(d);
    d->f_ready = true; /* G is not changed here: the sums stay the current weights' */
    ami_artic a;
    ami_artic_init(d, &a);
    for (size_t k = 0; k < B; k++) gain[k] = 0.0;
    for (size_t t = 0; t < T; t++) {
        const double *g = d->G + t * d->gs * 12;
        for (size_t k = 0; k < B; k++) {
            if (d->par[k] < 0) continue;
            double Hs[16], Q[12], Gp[12], Gf[12], h0[3], h1[3];
            ami_artic_sums(d, &a, g, t, k, Hs, Q);
            if (!(Hs[15] > 1e-300)) continue;
            memcpy(h0, d->pivot + k * 3, sizeof h0);
            am_mat34_apply(g + (size_t)d->par[k] * 12, h0, h1);
            memcpy(Gp, g + k * 12, sizeof Gp);
            memcpy(Gf, Gp, sizeof Gf);
            ami_fit_bone(Q, Hs, h0, h1, Gp);
            ami_fit_bone(Q, Hs, NULL, NULL, Gf);
            double e = ami_block_objective(Gp, Hs, Q) - ami_block_objective(Gf, Hs, Q);
            if (e > 0.0) gain[k] += e;
        }
    }
}

/* Frames where a bone has almost no visible points (an occluder covers the limb, or the
 * bone's tracks exist only in a few frames) carry no information about its transform: EM
 * alone would freeze it there. Fill them from the nearest supported frames, relative to a
 * reference bone that is supported there: the bone it shares most points with (H_jk), else
 * the best-supported one. The relative transform G_ref^-1 G_k is interpolated across a gap
 * (slerp + lerp) or held at the ends and carried by the reference's motion. Holding the
 * bone in world space instead left it where it was while the body walked on: a bone made of
 * points seen only in frames 67-78 of a 90-frame walk sat 1.06 body sizes off at frame 0
 * (hidden entries of the synthetic quadruped 7% of body size, its visible ones 0.3%). */
static void ami_rel(const double *Gr, const double *Gk, double q[4], double tr[3])
{
    double R[9], v[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) /* Rr^T Rk */
            R[i * 3 + j] = Gr[i] * Gk[j] + Gr[4 + i] * Gk[4 + j] + Gr[8 + i] * Gk[8 + j];
    for (int i = 0; i < 3; i++) v[i] = Gk[i * 4 + 3] - Gr[i * 4 + 3];
    for (int i = 0; i < 3; i++) tr[i] = Gr[i] * v[0] + Gr[4 + i] * v[1] + Gr[8 + i] * v[2];
    am_quat_from_mat3(R, q);
}

static void ami_fill_unsupported(ami_dec *d)
{
    size_t T = d->T, B = d->B;
    double total[AMI_MAXB];
    for (size_t k = 0; k < B; k++) {
        total[k] = 0.0;
        for (size_t t = 0; t < T; t++) total[k] += d->sup[k * T + t];
    }
    for (size_t k = 0; k < B; k++) {
        const double *sup = d->sup + k * T;
        /* the reference: most shared weight, else most support; -1 = world (the old hold) */
        int32_t ref = -1;
        double best = 0.0;
        for (size_t j = 0; j < B; j++) {
            double h = j == k ? 0.0 : d->H[(j * d->bcap + k) * 16 + 15];
            if (h > best) best = h, ref = (int32_t)j;
        }
        if (ref < 0)
            for (size_t j = 0; j < B; j++)
                if (j != k && total[j] > best) best = total[j], ref = (int32_t)j;
        /* supported: AMI_MINSUP visible points and a quarter of the bone's most visible frame
         * (two points of a bone of 18 pin neither its rotation nor the other 16) */
        double most = 0.0;
        for (size_t t = 0; t < T; t++) most = fmax(most, sup[t]);
        double need = fmax(AMI_MINSUP, 0.25 * most);
        size_t prev = SIZE_MAX;
        for (size_t t = 0; t <= T; t++) {
            if (t < T && !(sup[t] >= need)) continue;
            if (t > (prev == SIZE_MAX ? 0 : prev + 1)) { /* a gap (prev, t) */
                size_t lo = prev, hi = t < T ? t : SIZE_MAX;
                if (lo == SIZE_MAX && hi == SIZE_MAX) break; /* never supported: leave it */
                size_t fa = lo != SIZE_MAX ? lo : hi, fb = hi != SIZE_MAX ? hi : lo;
                const double *Ga = d->G + (fa * d->gs + k) * 12, *Gb = d->G + (fb * d->gs + k) * 12;
                static const double I34[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
                const double *Ra = ref >= 0 ? d->G + (fa * d->gs + (size_t)ref) * 12 : I34;
                const double *Rb = ref >= 0 ? d->G + (fb * d->gs + (size_t)ref) * 12 : I34;
                double qa[4], qb[4], ta[3], tb[3];
                ami_rel(Ra, Ga, qa, ta);
                ami_rel(Rb, Gb, qb, tb);
                for (size_t u = (lo == SIZE_MAX ? 0 : lo + 1); u < (hi == SIZE_MAX ? T : hi); u++) {
                    double f = (lo != SIZE_MAX && hi != SIZE_MAX) ? (double)(u - lo) / (double)(hi - lo) : 0.0;
                    double q[4], R[9], tl[3];
                    am_quat_slerp(qa, qb, f, q);
                    am_quat_to_mat3(q, R);
                    for (int i = 0; i < 3; i++) tl[i] = (1.0 - f) * ta[i] + f * tb[i];
                    const double *Gr = ref >= 0 ? d->G + (u * d->gs + (size_t)ref) * 12 : I34;
                    double *G = d->G + (u * d->gs + k) * 12;
                    for (int i = 0; i < 3; i++) { /* G = G_ref(u) [R | tl] */
                        for (int j = 0; j < 3; j++)
                            G[i * 4 + j] = Gr[i * 4] * R[j] + Gr[i * 4 + 1] * R[3 + j] + Gr[i * 4 + 2] * R[6 + j];
                        G[i * 4 + 3] = Gr[i * 4] * tl[0] + Gr[i * 4 + 1] * tl[1] + Gr[i * 4 + 2] * tl[2] + Gr[i * 4 + 3];
                    }
                }
            }
            prev = t;
        }
    }
}

/* G into d->Gt in the layout the reconstruction kernels read: blocks of four frames, per
 * bone 12 vectors (entry (i, j) of [R | t] over the four frames), the last block padded with
 * zeros. Only the passes that read Gt write it, each before reading, so it is scratch
 * between them. */
static void ami_quads(const ami_dec *d, const double *G)
{
    size_t T = d->T, gs = d->gs;
    for (size_t t = 0; t < (T + 3) / 4 * 4; t++)
        for (size_t k = 0; k < d->B; k++) {
            double *Q = d->Gt + (t / 4 * gs + k) * 48 + t % 4;
            const double *g = G + (t * gs + k) * 12;
            for (int e = 0; e < 12; e++) Q[e * 4] = t < T ? g[e] : 0.0;
        }
}

/* Visible residual norms of four frames (lanes >= nl unseen) added in frame order. */
AMI_INLINE void ami_err_block(const double *const *q, const ami_v4 *wx, size_t na, const int NA, const float *o,
                              const uint8_t *v, double *sum, size_t *cnt)
{
    unsigned vb = ami_vis_bits(v);
    if (!vb) return;
    ami_v4 r0, r1, r2, o0, o1, o2;
    ami_recon4(q, wx, na, NA, &r0, &r1, &r2);
    ami_load_xyz4(o, &o0, &o1, &o2);
    ami_v4 e0 = o0 - r0, e1 = o1 - r1, e2 = o2 - r2;
    ami_v4 e2n = e0 * e0 + e1 * e1 + e2 * e2;
    for (int l = 0; l < 4; l++)
        if (vb >> l & 1) *sum += sqrt(e2n[l]);
    *cnt += (size_t)__builtin_popcount(vb);
}

/* Sum of visible residual norms of one point with NA (1-4; 0: any count) active bones: the
 * reconstruction of ami_pstar_frames (ami_recon4), four frames at a time. */
AMI_INLINE double ami_err_frames(const double *const *gq, const ami_v4 *wx, size_t na, const int NA, size_t T,
                                 size_t qstride, const float *o, const uint8_t *vi, size_t *cnt)
{
    double sum = 0.0;
    const double *q[AMI_K];
    for (size_t a = 0; a < na; a++) q[a] = gq[a];
    size_t t0 = 0;
    for (; t0 + 4 <= T; t0 += 4) {
        ami_err_block(q, wx, na, NA, o + t0 * 3, vi + t0, &sum, cnt);
        for (size_t a = 0; a < na; a++) q[a] += qstride;
    }
    if (t0 < T) {
        float ob[12] = {0};
        uint8_t v[4] = {0};
        memcpy(ob, o + t0 * 3, (T - t0) * 3 * sizeof(float));
        memcpy(v, vi + t0, T - t0);
        ami_err_block(q, wx, na, NA, ob, v, &sum, cnt);
    }
    return sum;
}

/* One data pass; the --rig auto choice runs it after every pin it tries, so it has the
 * reconstruction kernel of the weight pass (was 13% of `rig` at 5,000 points x 200 frames). */
AMI_HOT static double ami_error_visible_kernel(const ami_dec *d, const double *G)
{
    size_t T = d->T, N = d->N, qstride = d->gs * 48;
    ami_quads(d, G);
    double sum = 0.0;
    size_t cnt = 0;
    for (size_t n = 0; n < N; n++) {
        const double *r = d->rest + n * 3;
        const int32_t *ix = d->idx + n * AMI_K;
        const double *wn = d->w + n * AMI_K;
        const double *gq[AMI_K];
        ami_v4 wx[AMI_K];
        size_t na = 0;
        for (int k = 0; k < AMI_K; k++)
            if (wn[k] > 0.0) {
                gq[na] = d->Gt + (size_t)ix[k] * 48;
                wx[na] = (ami_v4){wn[k] * r[0], wn[k] * r[1], wn[k] * r[2], wn[k]};
                na++;
            }
        const uint8_t *vi = d->vis + n * T;
        const float *o = d->obs + n * T * 3;
        switch (na) {
        case 1: sum += ami_err_frames(gq, wx, na, 1, T, qstride, o, vi, &cnt); break;
        case 2: sum += ami_err_frames(gq, wx, na, 2, T, qstride, o, vi, &cnt); break;
        case 3: sum += ami_err_frames(gq, wx, na, 3, T, qstride, o, vi, &cnt); break;
        case 4: sum += ami_err_frames(gq, wx, na, 4, T, qstride, o, vi, &cnt); break;
        default: sum += ami_err_frames(gq, wx, na, 0, T, qstride, o, vi, &cnt); break;
        }
    }
    return cnt ? sum / (double)cnt : 0.0;
}

/* Exported through a plain function: Clang resolves a target_clones function only inside its
 * own translation unit (the callers elsewhere see an undecorated declaration). */
double ami_dec_error_visible(const ami_dec *d, const double *G)
{
    return ami_error_visible_kernel(d, G);
}

/* A point hidden in the reference frame has no rest position of its own: the fill carried it
 * over from another frame, where the body stood elsewhere. Once the clustering has given every
 * bone a transform in every frame, place it from its own visible frames instead: for each bone,
 * the rest position that bone maps best onto the observations (the mean of G^-1 p, exact for a
 * rigid point); the bone is the clustering's unless another explains the track clearly
 * better (its assignment was made with the carried-over position). The rest update of the
 * alternation cannot repair a far-off start by itself: it sees winsorized residuals and, in
 * hidden frames, its own prediction. Returns how many points were placed. */
size_t ami_dec_place_hidden(ami_dec *d, size_t rf)
{
    size_t T = d->T, N = d->N, B = d->B, placed = 0;
    for (size_t n = 0; n < N; n++) {
        const uint8_t *v = d->vis + n * T;
        if (v[rf]) continue;
        const float *o = d->obs + n * T * 3;
        double best = INFINITY, br[3] = {0, 0, 0}, kerr = INFINITY, kr[3] = {0, 0, 0};
        int32_t bk = -1, k0 = d->idx[n * AMI_K];
        for (size_t k = 0; k < B; k++) {
            double r[3] = {0, 0, 0};
            size_t c = 0;
            for (size_t t = 0; t < T; t++) {
                if (!v[t]) continue;
                const double *G = d->G + (t * d->gs + k) * 12;
                double e[3] = {o[t * 3] - G[3], o[t * 3 + 1] - G[7], o[t * 3 + 2] - G[11]};
                for (int i = 0; i < 3; i++) r[i] += G[i] * e[0] + G[4 + i] * e[1] + G[8 + i] * e[2];
                c++;
            }
            if (!c) break; /* never visible: stays parked (documented) */
            for (int i = 0; i < 3; i++) r[i] /= (double)c;
            double err = 0.0;
            for (size_t t = 0; t < T; t++) {
                if (!v[t]) continue;
                double q[3];
                am_mat34_apply(d->G + (t * d->gs + k) * 12, r, q);
                err += (q[0] - o[t * 3]) * (q[0] - o[t * 3]) + (q[1] - o[t * 3 + 1]) * (q[1] - o[t * 3 + 1]) +
                       (q[2] - o[t * 3 + 2]) * (q[2] - o[t * 3 + 2]);
            }
            if (err < best) best = err, bk = (int32_t)k, memcpy(br, r, sizeof br);
            if ((int32_t)k == k0) kerr = err, memcpy(kr, r, sizeof kr);
        }
        if (bk < 0) continue;
        /* the clustering's bone stays unless another explains the track clearly better: where
         * bones move alike (idle clips) the best fit is a coin toss that scatters neighbours */
        if (kerr <= 3.0 * best) bk = k0, memcpy(br, kr, sizeof br);
        memcpy(d->rest + n * 3, br, sizeof br);
        for (int k = 0; k < AMI_K; k++) d->idx[n * AMI_K + k] = bk, d->w[n * AMI_K + k] = 0.0;
        d->w[n * AMI_K] = 1.0;
        placed++;
    }
    return placed;
}

/* Median |p(t+1) - 2 p(t) + p(t-1)| / sqrt(6) over visible triples: for white noise of
 * per-axis sigma that is the median residual norm the model would leave (smooth motion
 * adds little at 30 fps, and the median ignores the fast minority). */
double ami_dec_noise_floor(const ami_dec *d)
{
    ami_hist h; /* 8 KB on the stack: re-entrant */
    ami_hist_init(&h, d->body);
    size_t T = d->T;
    for (size_t n = 0; n < d->N; n++) {
        /* only the sampled frames, (t + n) % 4 == 0, are visited: the same samples in order */
        for (size_t t = 1 + ((4 - ((1 + n) & 3)) & 3); t + 1 < T; t += 4) {
            const uint8_t *v = d->vis + n * T;
            if (!v[t - 1] || !v[t] || !v[t + 1]) continue;
            const float *p = d->obs + (n * T + t) * 3;
            double e[3] = {p[3] - 2.0 * p[0] + p[-3], p[4] - 2.0 * p[1] + p[-2], p[5] - 2.0 * p[2] + p[-1]};
            ami_hist_add(&h, sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]));
        }
    }
    return ami_hist_quantile(&h, 0.5) / sqrt(6.0);
}
