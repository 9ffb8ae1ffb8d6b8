/* Levenberg-Marquardt over streamed residual blocks, with box bounds, IRLS robust losses and
 * a banded Cholesky for time-structured problems, and the dense Cholesky of small systems.
 * Sources are listed in anymove/opt.h. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/opt.h"
#include "core/internal.h"

struct am_lsq_sink {
    bool want_jac;
    am_status status;   /* first failure inside am_lsq_add */
    double cost;        /* 1/2 sum rho */
    size_t n, w;
    double *ab;         /* [n][w+1] J^T W J, banded lower storage */
    double *g;          /* [n] J^T W r */
};

struct am_lsq {
    am_lsq_problem pb;
    size_t n, w;
    double *lower, *upper;  /* [n] */
    double *A, *g;          /* normal equations at the current point */
    double *L;              /* [n][w+1] damped copy, factored */
    double *dx, *xt, *tmp;  /* [n] */
    double *inv;            /* [n] the factor's reciprocal diagonal */
    uint8_t *active;        /* [n] frozen at a bound this step */
};

double am_lsq_loss_rho(const am_lsq_loss *loss, double s, double *drho)
{
    double c = loss ? loss->scale : 0.0;
    if (!loss || c <= 0.0 || loss->kind == AM_LSQ_LOSS_SQUARED) {
        if (drho) *drho = 1.0;
        return s;
    }
    double c2 = c * c;
    if (loss->kind == AM_LSQ_LOSS_HUBER) {
        if (s <= c2) {
            if (drho) *drho = 1.0;
            return s;
        }
        double r = sqrt(s);
        if (drho) *drho = c / r;
        return 2.0 * c * r - c2;
    }
    /* Cauchy */
    double q = 1.0 + s / c2;
    if (drho) *drho = 1.0 / q;
    return c2 * log(q);
}

bool am_lsq_sink_wants_jacobian(const am_lsq_sink *sink)
{
    return sink->want_jac;
}

#if defined(__GNUC__) || defined(__clang__)
#define AMI_LSQ_INLINE static inline __attribute__((always_inline))
#else
#define AMI_LSQ_INLINE static inline
#endif

/* J^T W J and J^T W r of one block into the band. Each unordered pair of the block's columns is
 * formed once and lands in the lower triangle (row max, column min), so the columns need no
 * order and no test per pair. Inlined with dim a constant: the sums over d unroll. */
AMI_LSQ_INLINE void ami_lsq_add_jac(am_lsq_sink *sink, size_t dim, const double *r, size_t nnz,
                                    const int32_t *cols, const double *jac, double wgt)
{
    const size_t w = sink->w, ld = w + 1;
    double *ab = sink->ab, *g = sink->g;
    for (size_t a = 0; a < nnz; a++) {
        const size_t ca = (size_t)cols[a];
        double ga = 0.0;
        for (size_t d = 0; d < dim; d++) ga += jac[d * nnz + a] * r[d];
        g[ca] += wgt * ga;
        for (size_t b = 0; b <= a; b++) {
            const size_t cb = (size_t)cols[b];
            double h = 0.0;
            for (size_t d = 0; d < dim; d++) h += jac[d * nnz + a] * jac[d * nnz + b];
            double v = wgt * h;
            /* a column listed twice: both orders of the pair are the same entry */
            if (ca == cb && b != a) v += v;
            const size_t hi = ca > cb ? ca : cb, lo = ca > cb ? cb : ca;
            ab[hi * ld + lo + w - hi] += v;
        }
    }
}

/* cols inside the parameters and the band, else the sink's status is set. */
static bool ami_lsq_cols_ok(am_lsq_sink *sink, size_t nnz, const int32_t *cols)
{
    int32_t cmin = cols[0], cmax = cols[0];
    for (size_t a = 0; a < nnz; a++) {
        if (cols[a] < 0 || (size_t)cols[a] >= sink->n) {
            sink->status = AM_E_ARG;
            return false;
        }
        if (cols[a] < cmin) cmin = cols[a];
        if (cols[a] > cmax) cmax = cols[a];
    }
    /* A block reaching outside the declared band is a programming error of the caller's
     * structure; refuse it rather than silently drop coupling. */
    if ((size_t)(cmax - cmin) > sink->w) {
        sink->status = AM_E_ARG;
        return false;
    }
    return true;
}

void am_lsq_add(am_lsq_sink *sink, size_t dim, const double *r, size_t nnz, const int32_t *cols,
                const double *jac, const am_lsq_loss *loss)
{
    if (sink->status < 0) return;
    double s = 0.0;
    for (size_t d = 0; d < dim; d++) s += r[d] * r[d];
    if (!isfinite(s)) {
        sink->status = AM_E_NONFINITE;
        return;
    }
    double wgt;
    sink->cost += 0.5 * am_lsq_loss_rho(loss, s, &wgt);
    if (!sink->want_jac || !jac || wgt == 0.0 || nnz == 0) return;
    if (!ami_lsq_cols_ok(sink, nnz, cols)) return;
    switch (dim) {
    case 1: ami_lsq_add_jac(sink, 1, r, nnz, cols, jac, wgt); break;
    case 2: ami_lsq_add_jac(sink, 2, r, nnz, cols, jac, wgt); break;
    case 3: ami_lsq_add_jac(sink, 3, r, nnz, cols, jac, wgt); break;
    default: ami_lsq_add_jac(sink, dim, r, nnz, cols, jac, wgt); break;
    }
}

/* jac^T M jac and jac^T v into the band, each unordered column pair once (as ami_lsq_add_jac):
 * (M jac)[.][a] is formed once per column, then m products per pair. */
AMI_LSQ_INLINE void ami_lsq_add_gram_jac(am_lsq_sink *sink, size_t m, const double *M, const double *v, size_t nnz,
                                         const int32_t *cols, const double *jac)
{
    const size_t w = sink->w, ld = w + 1;
    double *ab = sink->ab, *g = sink->g;
    for (size_t a = 0; a < nnz; a++) {
        const size_t ca = (size_t)cols[a];
        double ka[8], ga = 0.0;
        for (size_t e = 0; e < m; e++) {
            double t = 0.0;
            for (size_t d = 0; d < m; d++) t += M[e * m + d] * jac[d * nnz + a];
            ka[e] = t;
            ga += jac[e * nnz + a] * v[e];
        }
        g[ca] += ga;
        for (size_t b = 0; b <= a; b++) {
            const size_t cb = (size_t)cols[b];
            double h = 0.0;
            for (size_t e = 0; e < m; e++) h += ka[e] * jac[e * nnz + b];
            if (ca == cb && b != a) h += h;
            const size_t hi = ca > cb ? ca : cb, lo = ca > cb ? cb : ca;
            ab[hi * ld + lo + w - hi] += h;
        }
    }
}

void am_lsq_add_gram(am_lsq_sink *sink, double cost, size_t m, const double *M, const double *v, size_t nnz,
                     const int32_t *cols, const double *jac)
{
    if (sink->status < 0) return;
    if (!isfinite(cost)) {
        sink->status = AM_E_NONFINITE;
        return;
    }
    sink->cost += cost;
    if (!sink->want_jac || !jac || nnz == 0) return;
    if (m == 0 || m > 8) {
        sink->status = AM_E_ARG;
        return;
    }
    if (!ami_lsq_cols_ok(sink, nnz, cols)) return;
    if (m == 3)
        ami_lsq_add_gram_jac(sink, 3, M, v, nnz, cols, jac);
    else
        ami_lsq_add_gram_jac(sink, m, M, v, nnz, cols, jac);
}

/* Macros, not functions: a vector-returning helper outside the AVX2 clone changes the ABI, and
 * a call out of the clone spills every vector register. AMI_LOAD4 reads 4 doubles from any
 * address (band rows start at any offset). */
#define AMI_LOAD4(v, p) memcpy(&(v), (p), sizeof(ami_v4))
#define AMI_HSUM4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))

/* Row by row (left-looking): L(i, j) = (A(i, j) - sum_k L(i, k) L(j, k)) / L(j, j) over the band.
 * The dot products are most of the cost of the solver, so four columns j..j+3 are taken at
 * once: their common part (k < j) shares each load of row i and runs four doubles a step, then
 * the small triangle among the four finishes one by one. That triangle is a chain through the
 * whole row, so it multiplies by the diagonal's reciprocals (inv) rather than divide: a division
 * waits 3-4 times longer. L(i, k) sits at ri[k + w - i], L(j, k) at rj[k + w - j]: both
 * contiguous in k. */
/* sum_{k in [k0, k1)} u[k] v[k], four partial sums (one would wait on each addition). */
AMI_LSQ_INLINE double ami_band_dot(const double *u, const double *v, size_t k0, size_t k1)
{
    ami_v4 a = {0.0, 0.0, 0.0, 0.0};
    size_t k = k0;
    for (; k + 4 <= k1; k += 4) {
        ami_v4 p, q;
        AMI_LOAD4(p, u + k);
        AMI_LOAD4(q, v + k);
        a += p * q;
    }
    double s = AMI_HSUM4(a);
    for (; k < k1; k++) s += u[k] * v[k];
    return s;
}

/* What the LM step factors: A + lambda diag(max(A_ii, min_diag)) with the rows and columns of
 * the active parameters replaced by the identity. */
typedef struct ami_band_damp {
    double lambda, min_diag;
    const uint8_t *active; /* [n] */
    bool any_active;
} ami_band_damp;

/* src: where row i is read from just before it is factored (NULL: ab already holds A), damped
 * and frozen per dp (may be NULL); b (may be NULL) is forward-substituted (L y = b) as each row
 * completes. One pass over the band, each row still in cache from its factorization: copying,
 * factoring and the forward solve as separate sweeps read the whole band (tens of MB for a
 * long window) three times. */
AMI_HOT static void ami_band_cholesky_rows(const double *src, double *ab, size_t n, size_t w,
                                           const ami_band_damp *dp, double *b, double *inv, size_t *bad)
{
    const size_t ld = w + 1;
    const ami_v4 zero = {0.0, 0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        double *li = ab + i * ld + w - i; /* li[k] = L(i, k), k in [j0, i] */
        const size_t j0 = i > w ? i - w : 0;
        if (src) memcpy(ab + i * ld, src + i * ld, ld * sizeof(double));
        if (dp) {
            if (dp->any_active && dp->active[i]) {
                /* Freeze: row and column i become the identity (right-hand side 0). */
                for (size_t k = j0; k < i; k++) li[k] = 0.0;
                li[i] = 1.0;
                inv[i] = 1.0;
                if (b) b[i] = 0.0;
                continue;
            }
            if (dp->any_active)
                for (size_t k = j0; k < i; k++)
                    if (dp->active[k]) li[k] = 0.0;
            li[i] += dp->lambda * (li[i] < dp->min_diag ? dp->min_diag : li[i]);
        }
        size_t j = j0;
        for (; j + 4 <= i; j += 4) {
            const double *l0 = ab + j * ld + w - j, *l1 = l0 + w, *l2 = l1 + w, *l3 = l2 + w;
            ami_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            size_t k = j0;
            for (; k + 4 <= j; k += 4) {
                ami_v4 v, u0, u1, u2, u3;
                AMI_LOAD4(v, li + k);
                AMI_LOAD4(u0, l0 + k);
                AMI_LOAD4(u1, l1 + k);
                AMI_LOAD4(u2, l2 + k);
                AMI_LOAD4(u3, l3 + k);
                a0 += v * u0;
                a1 += v * u1;
                a2 += v * u2;
                a3 += v * u3;
            }
            double s0 = AMI_HSUM4(a0), s1 = AMI_HSUM4(a1), s2 = AMI_HSUM4(a2), s3 = AMI_HSUM4(a3);
            for (; k < j; k++) {
                s0 += li[k] * l0[k];
                s1 += li[k] * l1[k];
                s2 += li[k] * l2[k];
                s3 += li[k] * l3[k];
            }
            double t1 = li[j + 1] - s1, t2 = li[j + 2] - s2, t3 = li[j + 3] - s3;
            double x0 = (li[j] - s0) * inv[j];
            t1 -= x0 * l1[j];
            t2 -= x0 * l2[j];
            t3 -= x0 * l3[j];
            double x1 = t1 * inv[j + 1];
            t2 -= x1 * l2[j + 1];
            t3 -= x1 * l3[j + 1];
            double x2 = t2 * inv[j + 2];
            t3 -= x2 * l3[j + 2];
            li[j] = x0;
            li[j + 1] = x1;
            li[j + 2] = x2;
            li[j + 3] = t3 * inv[j + 3];
        }
        for (; j < i; j++) {
            const double *lj = ab + j * ld + w - j;
            double s = 0.0;
            for (size_t k = j0; k < j; k++) s += li[k] * lj[k];
            li[j] = (li[j] - s) * inv[j];
        }
        double s = li[i] - ami_band_dot(li, li, j0, i);
        if (!(s > 0.0)) {
            *bad = i;
            return;
        }
        li[i] = sqrt(s);
        inv[i] = 1.0 / li[i];
        if (b) b[i] = (b[i] - ami_band_dot(li, b, j0, i)) / li[i];
    }
    *bad = n;
}

am_status am_band_cholesky(double *ab, size_t n, size_t w, am_error *err)
{
    double *inv = am_alloc_array(n ? n : 1, sizeof(double));
    if (!inv) return AM_FAIL(err, AM_E_NOMEM, "banded Cholesky of %zu rows", n);
    size_t bad;
    ami_band_cholesky_rows(NULL, ab, n, w, NULL, NULL, inv, &bad);
    am_free(inv);
    if (bad < n) return AM_FAIL(err, AM_E_DEGENERATE, "matrix not positive definite at row %zu", bad);
    return AM_OK;
}

/* L^T x = y, in place. */
AMI_HOT static void ami_band_backward(const double *ab, size_t n, size_t w, double *b)
{
    const size_t ld = w + 1;
    for (size_t i = n; i-- > 0;) {
        const double *li = ab + i * ld + w - i;
        size_t j0 = i > w ? i - w : 0;
        double xi = b[i] / li[i];
        b[i] = xi;
        for (size_t k = j0; k < i; k++) b[k] -= li[k] * xi;
    }
}

AMI_HOT static void ami_band_solve_kernel(const double *ab, size_t n, size_t w, double *b)
{
    const size_t ld = w + 1;
    for (size_t i = 0; i < n; i++) {
        const double *li = ab + i * ld + w - i;
        b[i] = (b[i] - ami_band_dot(li, b, i > w ? i - w : 0, i)) / li[i];
    }
    ami_band_backward(ab, n, w, b);
}

/* Exported through a plain function: Clang resolves a target_clones function only inside its
 * own translation unit (the callers elsewhere see an undecorated declaration). */
void am_band_cholesky_solve(const double *ab, size_t n, size_t w, double *b)
{
    ami_band_solve_kernel(ab, n, w, b);
}

am_status am_dense_cholesky(double *a, size_t n, am_error *err)
{
    for (size_t j = 0; j < n; j++) {
        double s = a[j * n + j];
        for (size_t k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
        if (!(s > 0.0)) return AM_FAIL(err, AM_E_DEGENERATE, "matrix not positive definite at row %zu", j);
        s = sqrt(s);
        a[j * n + j] = s;
        for (size_t i = j + 1; i < n; i++) {
            double v = a[i * n + j];
            for (size_t k = 0; k < j; k++) v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / s;
        }
    }
    return AM_OK;
}

void am_dense_cholesky_solve(const double *l, size_t n, double *b)
{
    for (size_t i = 0; i < n; i++) {
        double v = b[i];
        for (size_t k = 0; k < i; k++) v -= l[i * n + k] * b[k];
        b[i] = v / l[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double v = b[i];
        for (size_t k = i + 1; k < n; k++) v -= l[k * n + i] * b[k];
        b[i] = v / l[i * n + i];
    }
}

/* y = A h for the symmetric banded A. */
static void ami_band_symv(const double *ab, size_t n, size_t w, const double *h, double *y)
{
    const size_t ld = w + 1;
    memset(y, 0, n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        const double *ri = ab + i * ld;
        size_t j0 = i > w ? i - w : 0;
        double s = ri[w] * h[i];
        for (size_t j = j0; j < i; j++) {
            double a = ri[j + w - i];
            s += a * h[j];
            y[j] += a * h[i];
        }
        y[i] += s;
    }
}

static am_lsq_opts ami_lsq_opts_defaults(const am_lsq_opts *in)
{
    am_lsq_opts o = in ? *in : (am_lsq_opts){0};
    if (o.max_iterations == 0) o.max_iterations = 100;
    if (o.ftol <= 0.0) o.ftol = 1e-10;
    if (o.xtol <= 0.0) o.xtol = 1e-10;
    if (o.gtol <= 0.0) o.gtol = 1e-12;
    if (o.lambda0 <= 0.0) o.lambda0 = 1e-4;
    if (o.min_diag <= 0.0) o.min_diag = 1e-9;
    return o;
}

void am_lsq_free(am_lsq *ws)
{
    if (!ws) return;
    am_free(ws->lower);
    am_free(ws->upper);
    am_free(ws->A);
    am_free(ws->g);
    am_free(ws->L);
    am_free(ws->dx);
    am_free(ws->xt);
    am_free(ws->tmp);
    am_free(ws->inv);
    am_free(ws->active);
    am_free(ws);
}

am_status am_lsq_create(const am_lsq_problem *pb, am_lsq **out, am_error *err)
{
    assert(pb && pb->eval && out);
    *out = NULL;
    AMI_CHECK(err, pb->param_count > 0, AM_E_ARG, "least-squares problem with no parameters");
    size_t n = pb->param_count;
    size_t w = n - 1;
    if (pb->block_size > 0) {
        size_t span = (pb->block_band + 1) * pb->block_size;
        if (span - 1 < w) w = span - 1;
    }
    if (pb->bandwidth > 0 && pb->bandwidth < w) w = pb->bandwidth;
    AMI_CHECK(err, w + 1 <= SIZE_MAX / n / sizeof(double) / 4, AM_E_LIMIT,
              "least-squares problem too large: %zu parameters, band %zu", n, w);
    am_lsq *ws = am_alloc(sizeof *ws);
    if (!ws) return AM_FAIL(err, AM_E_NOMEM, "least-squares workspace");
    ws->pb = *pb;
    ws->n = n;
    ws->w = w;
    ws->pb.lower = ws->pb.upper = NULL;
    ws->lower = am_alloc_array(n, sizeof(double));
    ws->upper = am_alloc_array(n, sizeof(double));
    /* Only one copy of the normal equations (plus the factor): trial points are evaluated for
     * their cost alone and the Jacobian recomputed once a step is accepted. Evaluations are
     * cheap next to the factorization, and for long clips memory is what runs out. */
    ws->A = am_alloc_array(n * (w + 1), sizeof(double));
    ws->g = am_alloc_array(n, sizeof(double));
    ws->L = am_alloc_array(n * (w + 1), sizeof(double));
    ws->dx = am_alloc_array(n, sizeof(double));
    ws->xt = am_alloc_array(n, sizeof(double));
    ws->tmp = am_alloc_array(n, sizeof(double));
    ws->inv = am_alloc_array(n, sizeof(double));
    ws->active = am_alloc_array(n, 1);
    if (!ws->lower || !ws->upper || !ws->A || !ws->g || !ws->L ||
        !ws->dx || !ws->xt || !ws->tmp || !ws->inv || !ws->active) {
        am_lsq_free(ws);
        return AM_FAIL(err, AM_E_NOMEM, "least-squares workspace: %zu parameters, band %zu", n, w);
    }
    for (size_t i = 0; i < n; i++) {
        ws->lower[i] = pb->lower ? pb->lower[i] : -INFINITY;
        ws->upper[i] = pb->upper ? pb->upper[i] : INFINITY;
        if (!(ws->lower[i] <= ws->upper[i])) {
            double lo = ws->lower[i], hi = ws->upper[i];
            am_lsq_free(ws);
            return AM_FAIL(err, AM_E_ARG, "parameter %zu: lower bound %g above upper bound %g", i, lo, hi);
        }
    }
    *out = ws;
    return AM_OK;
}

/* Evaluate at x into A, g (with_jac) or the cost only. */
static am_status ami_lsq_eval(am_lsq *ws, const double *x, bool with_jac, double *cost, am_error *err)
{
    am_lsq_sink s = {.want_jac = with_jac, .n = ws->n, .w = ws->w};
    if (with_jac) {
        s.ab = ws->A;
        s.g = ws->g;
        memset(s.ab, 0, ws->n * (ws->w + 1) * sizeof(double));
        memset(s.g, 0, ws->n * sizeof(double));
    }
    am_status st = ws->pb.eval(ws->pb.user, x, &s);
    if (st < 0) {
        if (err && err->code == AM_OK) AM_FAIL(err, st, "least-squares callback failed");
        return st;
    }
    if (s.status < 0) {
        if (s.status == AM_E_NONFINITE) return AM_FAIL(err, s.status, "non-finite residual");
        return AM_FAIL(err, s.status, "residual block with a column outside the parameters or the band (n %zu, w %zu)",
                       ws->n, ws->w);
    }
    *cost = s.cost;
    return AM_OK;
}

am_status am_lsq_cost(am_lsq *ws, const double *x, double *cost, am_error *err)
{
    return ami_lsq_eval(ws, x, false, cost, err);
}

am_status am_lsq_gradient(am_lsq *ws, const double *x, double *grad, am_error *err)
{
    double cost;
    AMI_TRY(ami_lsq_eval(ws, x, true, &cost, err));
    memcpy(grad, ws->g, ws->n * sizeof *grad);
    return AM_OK;
}

static am_status ami_lsq_solve(am_lsq *ws, double *x, const am_lsq_opts *opts_in,
                               am_lsq_report *report, am_error *err)
{
    const am_lsq_opts o = ami_lsq_opts_defaults(opts_in);
    const size_t n = ws->n, w = ws->w;
    am_lsq_report rep = {0};
    for (size_t i = 0; i < n; i++) {
        if (x[i] < ws->lower[i]) x[i] = ws->lower[i];
        if (x[i] > ws->upper[i]) x[i] = ws->upper[i];
    }
    double cost;
    am_status st = ami_lsq_eval(ws, x, true, &cost, err);
    rep.evaluations = 1;
    if (st < 0) return st;
    rep.initial_cost = cost;
    double lambda = o.lambda0, nu = 2.0;
    am_status result = AM_NOT_CONVERGED;
    while (rep.iterations < o.max_iterations) {
        if (ami_cancelled())
            return AM_FAIL(err, AM_E_CANCELLED, "least squares stopped after %u iterations",
                           rep.iterations);
        const double *A = ws->A, *g = ws->g;
        /* Active set: at a bound with the gradient pushing outward, the parameter stays. */
        double gmax = 0.0;
        for (size_t i = 0; i < n; i++) {
            bool act = (x[i] <= ws->lower[i] && g[i] > 0.0) || (x[i] >= ws->upper[i] && g[i] < 0.0);
            ws->active[i] = act;
            if (!act && fabs(g[i]) > gmax) gmax = fabs(g[i]);
        }
        if (gmax <= o.gtol) {
            result = AM_OK;
            break;
        }
        rep.iterations++;
        bool any_active = false;
        for (size_t i = 0; i < n; i++) {
            ws->dx[i] = -g[i];
            any_active |= ws->active[i];
        }
        const ami_band_damp dp = {.lambda = lambda, .min_diag = o.min_diag, .active = ws->active,
                                  .any_active = any_active};
        double t0 = am_now();
        size_t bad;
        ami_band_cholesky_rows(A, ws->L, n, w, &dp, ws->dx, ws->inv, &bad);
        am_status fs = bad < n ? AM_E_DEGENERATE : AM_OK;
        if (fs == AM_OK) ami_band_backward(ws->L, n, w, ws->dx);
        rep.solve_seconds += am_now() - t0;
        if (fs != AM_OK) {
            lambda *= nu;
            nu *= 2.0;
            if (lambda > 1e20) break;
            continue;
        }
        double hn = 0.0, xn = 0.0;
        for (size_t i = 0; i < n; i++) {
            double v = x[i] + ws->dx[i];
            if (v < ws->lower[i]) v = ws->lower[i];
            if (v > ws->upper[i]) v = ws->upper[i];
            ws->xt[i] = v;
            ws->dx[i] = v - x[i];
            hn += ws->dx[i] * ws->dx[i];
            xn += x[i] * x[i];
        }
        hn = sqrt(hn);
        xn = sqrt(xn);
        if (hn <= o.xtol * (xn + o.xtol)) {
            result = AM_OK;
            break;
        }
        /* Predicted decrease of the undamped quadratic model along the (clamped) step. */
        ami_band_symv(A, n, w, ws->dx, ws->tmp);
        double gh = 0.0, hAh = 0.0;
        for (size_t i = 0; i < n; i++) {
            gh += g[i] * ws->dx[i];
            hAh += ws->dx[i] * ws->tmp[i];
        }
        double pred = -(gh + 0.5 * hAh);
        double cost_t;
        am_error terr = {0};
        st = ami_lsq_eval(ws, ws->xt, false, &cost_t, &terr);
        rep.evaluations++;
        if (st < 0 && st != AM_E_NONFINITE) {
            if (err) *err = terr;
            return st;
        }
        if (st == AM_OK && cost_t < cost) {
            double rho = pred > 0.0 ? (cost - cost_t) / pred : 0.5;
            double rel = (cost - cost_t) / (cost > 0.0 ? cost : 1.0);
            memcpy(x, ws->xt, n * sizeof *x);
            cost = cost_t;
            double f = 1.0 - pow(2.0 * rho - 1.0, 3.0);
            lambda *= f > 1.0 / 3.0 ? f : 1.0 / 3.0;
            if (lambda < 1e-12) lambda = 1e-12;
            nu = 2.0;
            if (rel < o.ftol) {
                result = AM_OK;
                break;
            }
            st = ami_lsq_eval(ws, x, true, &cost_t, err);
            rep.evaluations++;
            if (st < 0) return st;
        } else {
            lambda *= nu;
            nu *= 2.0;
            /* No step of any length decreases the cost: x is a (local) minimum to precision. */
            if (lambda > 1e20) {
                result = AM_OK;
                break;
            }
        }
    }
    rep.final_cost = cost;
    rep.lambda = lambda;
    rep.status = result;
    if (report) *report = rep;
    return result;
}

am_status am_lsq_solve(am_lsq *ws, double *x, const am_lsq_opts *opts, am_lsq_report *report,
                       am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_lsq_solve(ws, x, opts, report, err);
    am_scope_leave(&sc, NULL);
    return st;
}
