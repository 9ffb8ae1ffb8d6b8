/* The shared least-squares solver: validity, classic problems, robust losses, bounds, and the
 * banded path agreeing with the dense one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/opt.h"

/* ---- Rosenbrock: r = (10 (x1 - x0^2), 1 - x0), minimum at (1, 1). ---- */
typedef struct {
    const double *lo, *hi;
    int out_of_bounds;
} ami_rosen;

static am_status ami_rosen_eval(void *user, const double *x, am_lsq_sink *s)
{
    ami_rosen *u = user;
    for (int i = 0; i < 2; i++)
        if ((u->lo && x[i] < u->lo[i]) || (u->hi && x[i] > u->hi[i])) u->out_of_bounds++;
    const int32_t c01[2] = {0, 1}, c0[1] = {0};
    double r1 = 10.0 * (x[1] - x[0] * x[0]), J1[2] = {-20.0 * x[0], 10.0};
    double r2 = 1.0 - x[0], J2[1] = {-1.0};
    am_lsq_add(s, 1, &r1, 2, c01, J1, NULL);
    am_lsq_add(s, 1, &r2, 1, c0, J2, NULL);
    return AM_OK;
}

static am_status ami_null_eval(void *user, const double *x, am_lsq_sink *s)
{
    (void)user;
    (void)x;
    (void)s;
    return AM_OK;
}

static void lsq_rejects_invalid_problems(void)
{
    am_lsq *ws = NULL;
    am_error err = {0};
    am_lsq_problem pb = {.param_count = 0, .eval = ami_null_eval};
    AM_CHECK_STATUS(am_lsq_create(&pb, &ws, &err), AM_E_ARG);
    AM_CHECK(ws == NULL);
    double lo[2] = {0, 1}, hi[2] = {1, 0};
    pb.param_count = 2;
    pb.lower = lo;
    pb.upper = hi;
    AM_CHECK_STATUS(am_lsq_create(&pb, &ws, &err), AM_E_ARG);
    AM_CHECK(strstr(err.info, "parameter 1") != NULL);
    am_lsq_free(NULL);
}

static void lsq_solves_rosenbrock(void)
{
    ami_rosen u = {0};
    am_lsq_problem pb = {.param_count = 2, .eval = ami_rosen_eval, .user = &u};
    am_lsq *ws = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_lsq_create(&pb, &ws, &err), &err);
    double x[2] = {-1.2, 1.0};
    am_lsq_report rep;
    AM_CHECK_STATUS(am_lsq_solve(ws, x, NULL, &rep, &err), AM_OK);
    AM_CHECK_NEAR(x[0], 1.0, 1e-8);
    AM_CHECK_NEAR(x[1], 1.0, 1e-8);
    AM_CHECK(rep.final_cost < 1e-20);
    AM_CHECK(rep.initial_cost > 1.0);
    AM_CHECK(rep.iterations < 60);
    /* Out of iterations: informational status, x still improved. */
    double y[2] = {-1.2, 1.0};
    am_lsq_opts o = {.max_iterations = 2};
    AM_CHECK_STATUS(am_lsq_solve(ws, y, &o, &rep, &err), AM_NOT_CONVERGED);
    AM_CHECK(rep.final_cost <= rep.initial_cost);
    AM_CHECK(rep.iterations == 2);
    am_lsq_free(ws);
}

static void lsq_respects_bounds(void)
{
    /* Bound x0 <= 0.5: the constrained minimum is (0.5, 0.25). */
    double lo[2] = {-2.0, -1.0}, hi[2] = {0.5, 2.0};
    ami_rosen u = {.lo = lo, .hi = hi};
    am_lsq_problem pb = {.param_count = 2, .eval = ami_rosen_eval, .user = &u, .lower = lo, .upper = hi};
    am_lsq *ws = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_lsq_create(&pb, &ws, &err), &err);
    double x[2] = {-1.2, 1.0};
    AM_CHECK_STATUS(am_lsq_solve(ws, x, NULL, NULL, &err), AM_OK);
    AM_CHECK_NEAR(x[0], 0.5, 1e-9);
    AM_CHECK_NEAR(x[1], 0.25, 1e-7);
    AM_CHECK(u.out_of_bounds == 0);
    /* A start outside the box is clamped first. */
    double z[2] = {3.0, -5.0};
    AM_CHECK_STATUS(am_lsq_solve(ws, z, NULL, NULL, &err), AM_OK);
    AM_CHECK_NEAR(z[0], 0.5, 1e-9);
    AM_CHECK(u.out_of_bounds == 0);
    am_lsq_free(ws);
}

/* ---- curve fit: y = a exp(-b t) + c, known solution; optional gross outliers. ---- */
typedef struct {
    size_t m;
    const double *t, *y;
    am_lsq_loss loss;
} ami_curve;

static am_status ami_curve_eval(void *user, const double *x, am_lsq_sink *s)
{
    const ami_curve *c = user;
    const int32_t cols[3] = {0, 1, 2};
    for (size_t i = 0; i < c->m; i++) {
        double e = exp(-x[1] * c->t[i]);
        double r = x[0] * e + x[2] - c->y[i];
        double J[3] = {e, -x[0] * c->t[i] * e, 1.0};
        am_lsq_add(s, 1, &r, 3, cols, J, &c->loss);
    }
    return AM_OK;
}

static void lsq_fits_curve_and_rejects_outliers(void)
{
    enum { M = 60 };
    double t[M], y[M];
    const double a = 2.5, b = 1.3, c0 = 0.4;
    for (int i = 0; i < M; i++) {
        t[i] = 0.05 * i;
        y[i] = a * exp(-b * t[i]) + c0 + 0.001 * sin(7.0 * i);
    }
    ami_curve cu = {.m = M, .t = t, .y = y};
    am_lsq_problem pb = {.param_count = 3, .eval = ami_curve_eval, .user = &cu};
    am_lsq *ws = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_lsq_create(&pb, &ws, &err), &err);
    double x[3] = {1.0, 0.5, 0.0};
    AM_CHECK_OK(am_lsq_solve(ws, x, NULL, NULL, &err), &err);
    AM_CHECK_NEAR(x[0], a, 5e-3);
    AM_CHECK_NEAR(x[1], b, 5e-3);
    AM_CHECK_NEAR(x[2], c0, 5e-3);

    /* Every 7th sample off by +3: squared loss is dragged away, Cauchy and Huber hold. */
    for (int i = 0; i < M; i += 7) y[i] += 3.0;
    double xs[3] = {1.0, 0.5, 0.0};
    AM_CHECK_OK(am_lsq_solve(ws, xs, NULL, NULL, &err), &err);
    AM_CHECK(fabs(xs[2] - c0) > 0.1);
    cu.loss = (am_lsq_loss){AM_LSQ_LOSS_CAUCHY, 0.05};
    double xc[3] = {1.0, 0.5, 0.0};
    am_status st = am_lsq_solve(ws, xc, NULL, NULL, &err);
    AM_CHECK(st >= 0);
    AM_CHECK_NEAR(xc[0], a, 0.02);
    AM_CHECK_NEAR(xc[1], b, 0.02);
    AM_CHECK_NEAR(xc[2], c0, 0.02);
    cu.loss = (am_lsq_loss){AM_LSQ_LOSS_HUBER, 0.05};
    double xh[3] = {1.0, 0.5, 0.0};
    st = am_lsq_solve(ws, xh, NULL, NULL, &err);
    AM_CHECK(st >= 0);
    AM_CHECK(fabs(xh[2] - c0) < fabs(xs[2] - c0));
    am_lsq_free(ws);
}

static void lsq_loss_functions(void)
{
    double d;
    AM_CHECK_NEAR(am_lsq_loss_rho(NULL, 4.0, &d), 4.0, 0);
    AM_CHECK_NEAR(d, 1.0, 0);
    am_lsq_loss h = {AM_LSQ_LOSS_HUBER, 1.0};
    AM_CHECK_NEAR(am_lsq_loss_rho(&h, 0.25, &d), 0.25, 1e-15);
    AM_CHECK_NEAR(am_lsq_loss_rho(&h, 4.0, &d), 3.0, 1e-15);
    AM_CHECK_NEAR(d, 0.5, 1e-15);
    am_lsq_loss c = {AM_LSQ_LOSS_CAUCHY, 2.0};
    AM_CHECK_NEAR(am_lsq_loss_rho(&c, 4.0, &d), 4.0 * log(2.0), 1e-15);
    AM_CHECK_NEAR(d, 0.5, 1e-15);
    /* Numerical derivative agrees. */
    double e = 1e-6, r0 = am_lsq_loss_rho(&c, 3.0, &d);
    AM_CHECK_NEAR((am_lsq_loss_rho(&c, 3.0 + e, NULL) - r0) / e, d, 1e-5);
}

/* ---- a chain in time: T blocks of P parameters, nonlinear data terms per block, velocity
 * (band 1) and acceleration (band 2) couplings. ---- */
enum { CH_T = 40, CH_P = 3 };
typedef struct {
    double target[CH_T][CH_P];
} ami_chain;

static am_status ami_chain_eval(void *user, const double *x, am_lsq_sink *s)
{
    const ami_chain *c = user;
    for (int t = 0; t < CH_T; t++) {
        const double *b = x + t * CH_P;
        int32_t cols[CH_P];
        for (int i = 0; i < CH_P; i++) cols[i] = t * CH_P + i;
        /* r = (sin(x0) + x1 x2, x0 + x1^3, x2 - 0.5 x0 x1) - target */
        double r[3] = {sin(b[0]) + b[1] * b[2] - c->target[t][0],
                       b[0] + b[1] * b[1] * b[1] - c->target[t][1],
                       b[2] - 0.5 * b[0] * b[1] - c->target[t][2]};
        double J[9] = {cos(b[0]), b[2], b[1],
                       1.0, 3.0 * b[1] * b[1], 0.0,
                       -0.5 * b[1], -0.5 * b[0], 1.0};
        am_lsq_add(s, 3, r, 3, cols, J, NULL);
        for (int i = 0; i < CH_P; i++) {
            if (t + 1 < CH_T) {
                int32_t cv[2] = {t * CH_P + i, (t + 1) * CH_P + i};
                double rv = 0.7 * (x[cv[1]] - x[cv[0]]), Jv[2] = {-0.7, 0.7};
                am_lsq_add(s, 1, &rv, 2, cv, Jv, NULL);
            }
            if (t + 2 < CH_T) {
                int32_t ca[3] = {t * CH_P + i, (t + 1) * CH_P + i, (t + 2) * CH_P + i};
                double ra = 1.5 * (x[ca[0]] - 2.0 * x[ca[1]] + x[ca[2]]), Ja[3] = {1.5, -3.0, 1.5};
                am_lsq_add(s, 1, &ra, 3, ca, Ja, NULL);
            }
        }
    }
    return AM_OK;
}

static void lsq_banded_equals_dense(void)
{
    static ami_chain c;
    for (int t = 0; t < CH_T; t++)
        for (int i = 0; i < CH_P; i++) c.target[t][i] = 0.8 * sin(0.3 * t + i) + 0.1 * i;
    double xb[CH_T * CH_P], xd[CH_T * CH_P];
    for (int i = 0; i < CH_T * CH_P; i++) xb[i] = xd[i] = 0.1;
    am_error err = {0};
    am_lsq *wb = NULL, *wd = NULL;
    am_lsq_problem pb = {.param_count = CH_T * CH_P, .block_size = CH_P, .block_band = 2,
                         .eval = ami_chain_eval, .user = &c};
    AM_CHECK_OK(am_lsq_create(&pb, &wb, &err), &err);
    am_lsq_report rb, rd;
    AM_CHECK_STATUS(am_lsq_solve(wb, xb, NULL, &rb, &err), AM_OK);
    pb.block_size = 0;
    AM_CHECK_OK(am_lsq_create(&pb, &wd, &err), &err);
    AM_CHECK_STATUS(am_lsq_solve(wd, xd, NULL, &rd, &err), AM_OK);
    am_test_diff d = {0};
    for (int i = 0; i < CH_T * CH_P; i++) am_test_diff_add(&d, xb[i], xd[i]);
    AM_CHECK_MSG(d.max < 1e-7, "banded vs dense: mean %.3g max %.3g", am_test_diff_mean(&d), d.max);
    AM_CHECK_NEAR(rb.final_cost, rd.final_cost, 1e-10);
    /* A band too narrow for the residuals is refused, not silently wrong. */
    am_lsq *wn = NULL;
    pb.block_size = CH_P;
    pb.block_band = 1;
    AM_CHECK_OK(am_lsq_create(&pb, &wn, &err), &err);
    AM_CHECK_STATUS(am_lsq_solve(wn, xb, NULL, NULL, &err), AM_E_ARG);
    am_lsq_free(wn);
    am_lsq_free(wb);
    am_lsq_free(wd);
}

/* Bands narrower and wider than the factor's four-column groups (w = 4, 13, 37: the groups,
 * their tails and rows shorter than the band all run): L L^T gives A back and the solve its
 * right-hand side. */
static void band_cholesky_solves_spd(void)
{
    static const int cases[][2] = {{30, 4}, {61, 13}, {90, 37}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int N = cases[c][0], W = cases[c][1];
        double *ab = calloc((size_t)N * (size_t)(W + 1), sizeof(double));
        double *dense = calloc((size_t)N * (size_t)N, sizeof(double));
        double *b = calloc((size_t)N, sizeof(double)), *x = calloc((size_t)N, sizeof(double));
        AM_CHECK(ab && dense && b && x);
        for (int i = 0; i < N; i++)
            for (int j = (i > W ? i - W : 0); j <= i; j++) {
                double v = (i == j) ? 10.0 + i : 1.0 / (1.0 + i + 2 * j);
                ab[i * (W + 1) + (j - i + W)] = v;
                dense[i * N + j] = dense[j * N + i] = v;
            }
        for (int i = 0; i < N; i++) b[i] = x[i] = cos(i);
        am_error err = {0};
        AM_CHECK_OK(am_band_cholesky(ab, (size_t)N, (size_t)W, &err), &err);
        double lerr = 0.0;
        for (int i = 0; i < N; i++)
            for (int j = (i > W ? i - W : 0); j <= i; j++) {
                double s = 0.0;
                for (int k = (i > W ? i - W : 0); k <= j; k++) s += ab[i * (W + 1) + (k - i + W)] * ab[j * (W + 1) + (k - j + W)];
                lerr = fmax(lerr, fabs(s - dense[i * N + j]));
            }
        AM_CHECK_MSG(lerr < 1e-12, "N %d W %d: |L L^T - A| %g", N, W, lerr);
        am_band_cholesky_solve(ab, (size_t)N, (size_t)W, x);
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (int j = 0; j < N; j++) s += dense[i * N + j] * x[j];
            AM_CHECK_NEAR(s, b[i], 1e-12);
        }
        free(ab);
        free(dense);
        free(b);
        free(x);
    }
    double bad[4] = {0, 1, 0, -1};
    am_error err = {0};
    AM_CHECK_STATUS(am_band_cholesky(bad, 2, 1, &err), AM_E_DEGENERATE);
}

/* ---- one problem in two forms: the same normal equations ---- */

/* What a 3-parameter problem gives from one start: its gradient there, its solve's status,
 * minimum, iterations and final cost. */
typedef struct {
    double gradient[3], x[3], cost;
    uint32_t iterations;
    am_status status;
} ami_solved3;

/* The prologue the form tests share: `eval` with user = &form, its gradient at x0 and its
 * solve from there. */
static ami_solved3 ami_solve3(am_lsq_eval_fn eval, int form, const double x0[3])
{
    ami_solved3 out = {0};
    am_lsq_problem pb = {.param_count = 3, .eval = eval, .user = &form};
    am_lsq *ws = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_lsq_create(&pb, &ws, &err), &err);
    memcpy(out.x, x0, sizeof out.x);
    AM_CHECK_OK(am_lsq_gradient(ws, out.x, out.gradient, &err), &err);
    am_lsq_report rep = {0};
    out.status = am_lsq_solve(ws, out.x, NULL, &rep, &err);
    out.iterations = rep.iterations;
    out.cost = rep.final_cost;
    am_lsq_free(ws);
    return out;
}

/* The same steps, not just the same minimum: equal iterations, gradients and minima. */
static void ami_check_same_steps(const ami_solved3 r[2], double gradient_tol, double x_tol)
{
    AM_CHECK(r[0].iterations == r[1].iterations);
    for (int i = 0; i < 3; i++) {
        AM_CHECK_NEAR(r[0].gradient[i], r[1].gradient[i], gradient_tol);
        AM_CHECK_NEAR(r[0].x[i], r[1].x[i], x_tol);
    }
}

/* A block may list its columns in any order, and one column twice: the normal equations are
 * those of the merged column. */
static am_status ami_dup_eval(void *user, const double *x, am_lsq_sink *s)
{
    const int *merged = user;
    double r[2] = {x[0] + 2.0 * x[2] - 1.0, x[1] - 3.0 * x[2] + 0.5};
    if (*merged) {
        const int32_t c[3] = {2, 0, 1};
        const double J[6] = {2.0, 1.0, 0.0, -3.0, 0.0, 1.0};
        am_lsq_add(s, 2, r, 3, c, J, NULL);
    } else {
        const int32_t c[4] = {2, 0, 2, 1};
        const double J[8] = {1.5, 1.0, 0.5, 0.0, -1.0, 0.0, -2.0, 1.0};
        am_lsq_add(s, 2, r, 4, c, J, NULL);
    }
    double r3 = x[2] - 0.25, J3 = 1.0;
    const int32_t c3 = 2;
    am_lsq_add(s, 1, &r3, 1, &c3, &J3, NULL);
    return AM_OK;
}

static void lsq_add_any_column_order(void)
{
    static const int merged[2] = {1, 0};
    static const double x0[3] = {0.3, -0.2, 0.7};
    ami_solved3 r[2];
    for (int m = 0; m < 2; m++) {
        r[m] = ami_solve3(ami_dup_eval, merged[m], x0);
        AM_CHECK_STATUS(r[m].status, AM_OK);
        AM_CHECK_NEAR(r[m].x[2], 0.25, 1e-9);
        AM_CHECK_NEAR(r[m].x[0], 0.5, 1e-9);
        AM_CHECK_NEAR(r[m].x[1], 0.25, 1e-9);
    }
    ami_check_same_steps(r, 1e-14, 1e-14);
}

/* The dense factor solves the same system as the band one with w = n - 1, and leaves the strict
 * upper triangle alone. */
static void dense_cholesky_solves_spd(void)
{
    enum { N = 12 };
    double a[N * N], ab[N * N], b[N], x[N], y[N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double v = (i == j) ? 4.0 + i : 1.0 / (1.0 + i + j);
            a[i * N + j] = v;
            if (j <= i) ab[i * N + (j - i + N - 1)] = v;
        }
    a[0 * N + 5] = 99.0; /* upper triangle: not read */
    for (int i = 0; i < N; i++) b[i] = x[i] = y[i] = sin(1.0 + i);
    am_error err = {0};
    AM_CHECK_OK(am_dense_cholesky(a, N, &err), &err);
    AM_CHECK(a[0 * N + 5] == 99.0);
    am_dense_cholesky_solve(a, N, x);
    AM_CHECK_OK(am_band_cholesky(ab, N, N - 1, &err), &err);
    am_band_cholesky_solve(ab, N, N - 1, y);
    for (int i = 0; i < N; i++) AM_CHECK_NEAR(x[i], y[i], 1e-13);
    double r = 0.0;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++) s += (i == j ? 4.0 + i : 1.0 / (1.0 + i + j)) * x[j];
        r = fmax(r, fabs(s - b[i]));
    }
    AM_CHECK_MSG(r < 1e-13, "residual %g", r);
    double bad[4] = {1, 2, 2, 1};
    AM_CHECK_STATUS(am_dense_cholesky(bad, 2, &err), AM_E_DEGENERATE);
    AM_CHECK_STATUS(am_dense_cholesky(bad, 2, NULL), AM_E_DEGENERATE);
}

/* am_lsq_add_gram of blocks reduced to y = G x equals am_lsq_add of each block: two 2D
 * residuals r_i = A_i y - b_i under a Cauchy loss, and a 3D one under Huber. */
static am_status ami_gram_eval(void *user, const double *x, am_lsq_sink *s)
{
    const int *gram = user;
    static const double G[9] = {1.0, 0.5, 0.0, -0.3, 1.0, 0.2, 0.1, 0.0, 2.0};
    static const double A[2][6] = {{1.0, 0.2, -0.5, 0.0, 1.0, 0.3}, {-0.4, 1.0, 0.0, 0.7, 0.1, 1.0}};
    static const double bb[2][2] = {{0.5, -1.0}, {2.0, 0.25}};
    const am_lsq_loss cauchy = {AM_LSQ_LOSS_CAUCHY, 0.5}, huber = {AM_LSQ_LOSS_HUBER, 0.3};
    const int32_t cols[3] = {2, 0, 1};
    double y[3], jac[9]; /* y and d y / d x[cols] */
    for (int e = 0; e < 3; e++) {
        y[e] = G[3 * e] * x[0] + G[3 * e + 1] * x[1] + G[3 * e + 2] * x[2];
        jac[e * 3 + 0] = G[3 * e + 2];
        jac[e * 3 + 1] = G[3 * e];
        jac[e * 3 + 2] = G[3 * e + 1];
    }
    double M[9] = {0}, v[3] = {0}, cost = 0.0;
    for (int i = 0; i < 2; i++) {
        double r[2], Jr[6];
        for (int d = 0; d < 2; d++) {
            r[d] = A[i][3 * d] * y[0] + A[i][3 * d + 1] * y[1] + A[i][3 * d + 2] * y[2] - bb[i][d];
            for (int k = 0; k < 3; k++)
                Jr[d * 3 + k] = A[i][3 * d] * jac[k] + A[i][3 * d + 1] * jac[3 + k] + A[i][3 * d + 2] * jac[6 + k];
        }
        if (!*gram) {
            am_lsq_add(s, 2, r, 3, cols, Jr, &cauchy);
            continue;
        }
        double wgt;
        cost += 0.5 * am_lsq_loss_rho(&cauchy, r[0] * r[0] + r[1] * r[1], &wgt);
        for (int a = 0; a < 3; a++) {
            v[a] += wgt * (A[i][a] * r[0] + A[i][3 + a] * r[1]);
            for (int b = 0; b < 3; b++) M[3 * a + b] += wgt * (A[i][a] * A[i][b] + A[i][3 + a] * A[i][3 + b]);
        }
    }
    double r3[3] = {y[0] - 0.1, y[1] + 0.2, y[2] - 0.3};
    if (!*gram) {
        am_lsq_add(s, 3, r3, 3, cols, jac, &huber);
        return AM_OK;
    }
    double wgt;
    cost += 0.5 * am_lsq_loss_rho(&huber, r3[0] * r3[0] + r3[1] * r3[1] + r3[2] * r3[2], &wgt);
    for (int a = 0; a < 3; a++) {
        v[a] += wgt * r3[a];
        M[4 * a] += wgt;
    }
    am_lsq_add_gram(s, cost, 3, M, v, 3, cols, am_lsq_sink_wants_jacobian(s) ? jac : NULL);
    return AM_OK;
}

static void lsq_add_gram_equals_blocks(void)
{
    static const double x0[3] = {1.0, -2.0, 0.5};
    ami_solved3 r[2];
    for (int gram = 0; gram < 2; gram++) {
        r[gram] = ami_solve3(ami_gram_eval, gram, x0);
        AM_CHECK(r[gram].status >= 0);
    }
    AM_CHECK_NEAR(r[0].cost, r[1].cost, 1e-12);
    ami_check_same_steps(r, 1e-12, 1e-10);
}

#define AM_TESTS(X) X(lsq_rejects_invalid_problems) X(lsq_solves_rosenbrock) X(lsq_respects_bounds) \
    X(lsq_fits_curve_and_rejects_outliers) X(lsq_loss_functions) X(lsq_banded_equals_dense) \
    X(band_cholesky_solves_spd) X(dense_cholesky_solves_spd) X(lsq_add_any_column_order) X(lsq_add_gram_equals_blocks)
AM_TEST_MAIN(AM_TESTS)
