/* anymove opt: the one shared nonlinear least-squares solver of the project
 * (Levenberg-Marquardt with analytic Jacobians, box bounds, robust losses, block-banded
 * normal equations) and its Cholesky factorizations. Every iterative fit of the library goes
 * through it (today the capture fit and its per-frame IK pin); no module keeps a solver or a
 * factorization of its own. The stages that are not fits use closed forms: IK solves each bone
 * analytically (docs/ik.md), and the decomposition alternates closed-form sub-problems
 * (Procrustes, am_mat3_polar_rotation, small SPD systems through am_dense_cholesky).
 *
 * Problem: minimise  cost(x) = 1/2 * sum_blocks rho_b(|r_b(x)|^2)  over x in [lower, upper],
 * where each residual block r_b has `dim` rows (e.g. one 2D reprojection = 2 rows) and
 * rho_b is its loss (squared, Huber or Cauchy with a scale in the residual's own units).
 *
 * The user's callback streams residual blocks into a sink, each with the (few) parameter
 * columns it depends on and its analytic Jacobian over those columns. The solver never
 * stores J: it accumulates J^T W J and J^T W r directly (IRLS weights W = rho'(|r|^2)), so
 * memory is O(n * band) and not O(m * n).
 *
 * Structure: with block_size = p and block_band = k, parameters are laid out in time blocks
 * (x[t*p + i]) and every residual block may only touch columns within k+1 consecutive
 * blocks. J^T J is then banded with half-bandwidth w = (k+1)*p - 1 and is factored by a
 * banded Cholesky in O(n * w^2) = O(T * p * ((k+1)*p)^2). block_size = 0 (or a problem
 * small enough that the band covers it) uses the dense path (w = n - 1).
 *
 *     static am_status eval(void *user, const double *x, am_lsq_sink *s) {
 *         (void)user;
 *         double r[1] = {10.0 * (x[1] - x[0] * x[0])}, J[2] = {-20.0 * x[0], 10.0};
 *         int32_t cols[2] = {0, 1};
 *         am_lsq_add(s, 1, r, 2, cols, J, NULL);
 *         ...
 *         return AM_OK;
 *     }
 *     am_lsq_problem pb = {.param_count = 2, .eval = eval};
 *     am_lsq *ws = NULL;
 *     if (am_lsq_create(&pb, &ws, &err) == AM_OK) {
 *         st = am_lsq_solve(ws, x, NULL, &report, &err);   // AM_OK or AM_NOT_CONVERGED
 *     }
 *     am_lsq_free(ws);
 *
 * Pairs: am_lsq_create -> am_lsq_free. A workspace may be solved many times (e.g. while a
 * robust scale is annealed through the user pointer); it is not thread-safe.
 *
 * This work is based on:
 * - K. Levenberg 1944, D. Marquardt 1963: damped Gauss-Newton with diagonal scaling.
 * - H. B. Nielsen 1999, "Damping parameter in Marquardt's method" (the lambda update rule).
 * - B. Triggs et al. 2000, "Bundle adjustment - a modern synthesis" (robust losses as
 *   iteratively reweighted least squares: weight rho'(s) on the normal equations).
 * - Box bounds by projection with an active set (Bertsekas 1982, projected Newton):
 *   a parameter at a bound whose gradient pushes it outward is frozen for that step, the
 *   step of the rest is solved, and the trial point is clamped into the box.
 * - Banded Cholesky: Golub & Van Loan, "Matrix Computations", section 4.3.
 */
#ifndef ANYMOVE_OPT_H
#define ANYMOVE_OPT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_lsq_loss_kind {
    AM_LSQ_LOSS_SQUARED, /* rho(s) = s */
    AM_LSQ_LOSS_HUBER,   /* rho(s) = s if s <= c^2, else 2 c sqrt(s) - c^2 */
    AM_LSQ_LOSS_CAUCHY,  /* rho(s) = c^2 log(1 + s / c^2) */
    AM_LSQ_LOSS_COUNT
} am_lsq_loss_kind;

/* A robust loss on one residual block's squared norm s = |r|^2. NULL or {0} = squared. */
typedef struct am_lsq_loss {
    am_lsq_loss_kind kind;
    double scale; /* c, in the residual's units (e.g. px); <= 0 means squared */
} am_lsq_loss;

/* rho(s) and rho'(s) of a loss (NULL = squared). */
double am_lsq_loss_rho(const am_lsq_loss *loss, double s, double *drho);

/* Where residuals go; opaque. */
typedef struct am_lsq_sink am_lsq_sink;

/* Add one residual block: r [dim], the parameter columns it depends on cols [nnz] (any order,
 * no duplicates, each < param_count, all within the declared band), and its Jacobian
 * jac [dim][nnz] (d r[d] / d x[cols[k]] at jac[d * nnz + k]). jac may be NULL when
 * am_lsq_sink_wants_jacobian() is false (trial points only need the cost). loss may be NULL.
 * Non-finite residuals make the evaluation fail with AM_E_NONFINITE. */
void am_lsq_add(am_lsq_sink *sink, size_t dim, const double *r, size_t nnz, const int32_t *cols,
                const double *jac, const am_lsq_loss *loss);
/* Add residual blocks that depend on the parameters only through m quantities y (m <= 8; a
 * joint's world position, m = 3), already reduced there by the caller: their total cost (the
 * 1/2 sum of rho, e.g. from am_lsq_loss_rho), M [m][m] = sum_i w_i J_i^T J_i and
 * v [m] = sum_i w_i J_i^T r_i in y's terms (w_i the robust weights), and jac [m][nnz] = d y /
 * d x[cols]. The normal equations get jac^T M jac and jac^T v: what am_lsq_add of each block
 * would add (to rounding), formed once for all of them (every camera seeing a joint, its 3D
 * point, the ground). cols as am_lsq_add's; jac may be NULL when no Jacobian is wanted. */
void am_lsq_add_gram(am_lsq_sink *sink, double cost, size_t m, const double *M, const double *v, size_t nnz,
                     const int32_t *cols, const double *jac);
/* False when the solver only needs the cost: callbacks may skip computing Jacobians. */
bool am_lsq_sink_wants_jacobian(const am_lsq_sink *sink);

/* Evaluate every residual block at x into the sink. Return AM_OK, or a negative status to
 * abort the solve (it is passed through). */
typedef am_status (*am_lsq_eval_fn)(void *user, const double *x, am_lsq_sink *sink);

typedef struct am_lsq_problem {
    size_t param_count;   /* n >= 1 */
    size_t block_size;    /* p: parameters per time block; 0 = dense (no structure) */
    size_t block_band;    /* k: a residual block spans at most k+1 consecutive time blocks */
    size_t bandwidth;     /* half-bandwidth w override; 0 = (k+1)*p - 1 from the blocks. HINT: when
                             blocks more than one apart couple only parameter i to parameter i
                             (smoothness terms), w = k*p suffices and costs (k/(k+1))^2 less */
    const double *lower;  /* [n] lower bounds or NULL (-inf allowed); copied at create */
    const double *upper;  /* [n] upper bounds or NULL (+inf allowed); copied at create */
    am_lsq_eval_fn eval;
    void *user;
} am_lsq_problem;

/* Options; NULL or all-zero gives every default. */
typedef struct am_lsq_opts {
    uint32_t max_iterations; /* accepted + rejected LM steps; default 100 */
    double ftol;             /* stop when the relative cost decrease of an accepted step is
                                below this; default 1e-10 */
    double xtol;             /* stop when |dx| <= xtol * (|x| + xtol); default 1e-10 */
    double gtol;             /* stop when max |projected gradient| <= gtol; default 1e-12 */
    double lambda0;          /* initial damping, relative to the diagonal; default 1e-4 */
    double min_diag;         /* floor of the Marquardt scaling diagonal; default 1e-9 */
    am_context ctx;          /* allocator, limits; a cancelled call stops at the next
                                iteration with AM_E_CANCELLED. zero = inherited (core.h) */
} am_lsq_opts;

typedef struct am_lsq_report {
    uint32_t iterations;     /* LM steps tried */
    uint32_t evaluations;    /* callback calls */
    double initial_cost, final_cost;
    double lambda;           /* final damping */
    double solve_seconds;    /* time in factorizations */
    am_status status;        /* AM_OK (converged) or AM_NOT_CONVERGED */
} am_lsq_report;

typedef struct am_lsq am_lsq;

/* Validate the problem and allocate the workspace: O(n * (w + 1)) doubles, in the caller's
 * scope (core.h). AM_E_ARG for n == 0 or lower > upper (a NULL problem or callback is a
 * programmer error: assert). */
AM_NODISCARD am_status am_lsq_create(const am_lsq_problem *problem, am_lsq **out, am_error *err);
/* Minimise from x [n] (clamped into the bounds first), in place. Returns AM_OK when a tolerance
 * was met, AM_NOT_CONVERGED when max_iterations ran out (x is still the best point found),
 * or the callback's / the sink's failure. report may be NULL. */
AM_NODISCARD am_status am_lsq_solve(am_lsq *ws, double *x, const am_lsq_opts *opts,
                                    am_lsq_report *report, am_error *err);
/* Cost at x (1/2 sum rho), without Jacobians. */
AM_NODISCARD am_status am_lsq_cost(am_lsq *ws, const double *x, double *cost, am_error *err);
/* Gradient of the cost at x into grad [n] (J^T W r). */
AM_NODISCARD am_status am_lsq_gradient(am_lsq *ws, const double *x, double *grad, am_error *err);
void am_lsq_free(am_lsq *ws);

/* ---- banded symmetric positive definite matrices (the solver's kernel, public for reuse) ----
 * Storage: row i holds entries A(i, j) for j in [i - w, i] at ab[i * (w + 1) + (j - i + w)]
 * (entries left of column 0 are unused). w = n - 1 is a dense lower triangle. */
/* In place A = L L^T (L in the same storage). Returns AM_E_DEGENERATE if not positive
 * definite (a pivot <= 0), naming the row in err. O(n w^2), no allocation. */
AM_NODISCARD am_status am_band_cholesky(double *ab, size_t n, size_t w, am_error *err);
/* Solve L L^T x = b in place (b [n] becomes x). */
void am_band_cholesky_solve(const double *ab, size_t n, size_t w, double *b);

/* ---- small dense symmetric positive definite systems (row-major n x n) ----
 * For many tiny systems (the decomposition's per-point skin weights over at most a few dozen
 * candidate bones), where the band storage and its unrolled sums do not pay. In place A = L L^T in the lower triangle (the strict
 * upper triangle is not read or written); AM_E_DEGENERATE if not positive definite (err may be
 * NULL where that is an expected outcome). O(n^3), no allocation. */
AM_NODISCARD am_status am_dense_cholesky(double *a, size_t n, am_error *err);
/* Solve L L^T x = b in place with am_dense_cholesky's factor (b [n] becomes x). */
void am_dense_cholesky_solve(const double *l, size_t n, double *b);

/* ---- sparse symmetric positive definite systems (CHOLMOD, Debian's SuiteSparse) ----
 * For matrices with the sparsity of a mesh (bone heat's Laplacian): analysed and factored once
 * (fill-reducing ordering, supernodal), then solved for any number of right-hand sides. */
typedef struct am_sparse_chol am_sparse_chol;
/* Factor the n x n matrix given by nnz triplets (rows[k], cols[k], vals[k]) of either triangle
 * (each entry is mirrored into the lower one; repeated entries are summed). AM_E_DEGENERATE
 * when it is not positive definite, AM_E_VALUE for an entry outside the matrix, AM_E_NONFINITE.
 * CHOLMOD's own memory is not counted against the call's limits (its hooks are process-wide). */
AM_NODISCARD am_status am_sparse_cholesky(size_t n, size_t nnz, const int32_t *rows,
                                          const int32_t *cols, const double *vals,
                                          am_sparse_chol **out, am_error *err);
/* Solve A x = b for nrhs right-hand sides in place: b [nrhs][n], one column after another.
 * The factor's workspace changes: one factor is used by one thread at a time. */
AM_NODISCARD am_status am_sparse_cholesky_solve(am_sparse_chol *f, size_t nrhs, double *b,
                                                am_error *err);
void am_sparse_cholesky_free(am_sparse_chol *f);

#ifdef __cplusplus
}
#endif
#endif
