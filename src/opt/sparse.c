/* Sparse symmetric positive definite systems through CHOLMOD (Debian's SuiteSparse): one
 * symbolic analysis with a fill-reducing ordering, one numeric factorisation, then any number
 * of solves. Used where a matrix has the sparsity of a mesh (bone heat's Laplacian).
 *
 * This work is based on:
 * - Y. Chen, T. A. Davis, W. W. Hager, S. Rajamanickam 2008, "Algorithm 887: CHOLMOD,
 *   supernodal sparse Cholesky factorization and update/downdate".
 *
 * NOTE: CHOLMOD allocates with SuiteSparse's process-wide malloc hooks, which we leave alone
 * (as jansson's): installing am_alloc there would change every other user of the library in
 * the process. What it will hold is counted instead: the symbolic analysis gives the factor's
 * exact size before the numeric work allocates it, and that size (plus the matrix copies and
 * CHOLMOD's n-sized workspace) is charged to the calling context (ami_foreign_charge), so a
 * context's max_bytes refuses a factor that would not fit, and its peak shows it. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include <suitesparse/cholmod.h>

#include "anymove/opt.h"
#include "core/internal.h"

struct am_sparse_chol {
    size_t n;
    cholmod_common cm;  /* one per factor: CHOLMOD's workspace is not shared between calls */
    cholmod_factor *L;
    ami_foreign charge; /* the factor's bytes, counted against the call that made it */
};

void am_sparse_cholesky_free(am_sparse_chol *f)
{
    if (!f) return;
    if (f->L) cholmod_free_factor(&f->L, &f->cm);
    cholmod_finish(&f->cm);
    ami_foreign_refund(&f->charge);
    am_free(f);
}

am_status am_sparse_cholesky(size_t n, size_t nnz, const int32_t *rows, const int32_t *cols,
                             const double *vals, am_sparse_chol **out, am_error *err)
{
    assert(out && (nnz == 0 || (rows && cols && vals)));
    *out = NULL;
    AMI_CHECK(err, n > 0, AM_E_EMPTY, "sparse system of size 0");
    AMI_CHECK(err, n < INT32_MAX && nnz < INT32_MAX, AM_E_LIMIT, "sparse system too large (%zu rows, %zu entries)",
              n, nnz);
    for (size_t k = 0; k < nnz; k++) {
        AMI_CHECK(err, rows[k] >= 0 && cols[k] >= 0 && (size_t)rows[k] < n && (size_t)cols[k] < n, AM_E_VALUE,
                  "sparse entry %zu at (%d, %d) outside %zu x %zu", k, (int)rows[k], (int)cols[k], n, n);
        AMI_CHECK(err, isfinite(vals[k]), AM_E_NONFINITE, "sparse entry %zu at (%d, %d)", k, (int)rows[k],
                  (int)cols[k]);
    }
    am_sparse_chol *f = am_alloc(sizeof *f);
    AMI_CHECK(err, f, AM_E_NOMEM, "sparse factor");
    f->n = n;
    cholmod_start(&f->cm);
    f->cm.print = 0;
    f->cm.error_handler = NULL;
    /* LL' always (supernodal): a simplicial LDL' would factor an indefinite matrix without a word */
    f->cm.supernodal = CHOLMOD_SUPERNODAL;
    cholmod_triplet *T = cholmod_allocate_triplet(n, n, nnz, -1 /* lower triangle */, CHOLMOD_REAL, &f->cm);
    cholmod_sparse *A = NULL;
    am_status st = AM_OK;
    if (!T) goto nomem;
    int *ti = T->i, *tj = T->j;
    double *tx = T->x;
    for (size_t k = 0; k < nnz; k++) {
        /* either triangle may be given: each entry goes to the lower one (CHOLMOD sums repeats) */
        int r = rows[k], c = cols[k];
        ti[k] = r >= c ? r : c;
        tj[k] = r >= c ? c : r;
        tx[k] = vals[k];
    }
    T->nnz = nnz;
    A = cholmod_triplet_to_sparse(T, nnz, &f->cm);
    if (!A) goto nomem;
    f->L = cholmod_analyze(A, &f->cm);
    if (!f->L) goto nomem;
    {
        /* supernodal L: xsize doubles and ssize ints; the input copies (A and T) and CHOLMOD's
         * workspace (a few n-sized int and double arrays) live during the factorisation too */
        uint64_t need = (uint64_t)f->L->xsize * sizeof(double) + (uint64_t)f->L->ssize * sizeof(int) +
                        (uint64_t)nnz * 2 * (sizeof(double) + 2 * sizeof(int)) + (uint64_t)n * 8 * sizeof(double);
        if (!ami_foreign_charge(&f->charge, need)) {
            st = AMI_BUDGET_CHECK(err, NULL, need, 0, "the sparse Cholesky factor of %zu x %zu (%.0f nonzeros)", n,
                                  n, f->cm.lnz);
            if (st == AM_OK) st = AM_FAIL(err, AM_E_LIMIT, "the sparse Cholesky factor of %zu x %zu: over the call's allocation limit", n, n);
            goto done;
        }
    }
    if (!cholmod_factorize(A, f->L, &f->cm) && f->cm.status != CHOLMOD_NOT_POSDEF) goto nomem;
    if (f->cm.status == CHOLMOD_NOT_POSDEF || f->L->minor < n) {
        st = AM_FAIL(err, AM_E_DEGENERATE, "sparse matrix not positive definite (column %zu)", (size_t)f->L->minor);
        goto done;
    }
    goto done;
nomem:
    st = AM_FAIL(err, f->cm.status == CHOLMOD_OUT_OF_MEMORY ? AM_E_NOMEM : AM_E_INTERNAL,
                 "sparse Cholesky of %zu x %zu (CHOLMOD status %d)", n, n, f->cm.status);
done:
    if (A) cholmod_free_sparse(&A, &f->cm);
    if (T) cholmod_free_triplet(&T, &f->cm);
    if (st != AM_OK) {
        am_sparse_cholesky_free(f);
        return st;
    }
    *out = f;
    return AM_OK;
}

am_status am_sparse_cholesky_solve(am_sparse_chol *f, size_t nrhs, double *b, am_error *err)
{
    assert(f && (nrhs == 0 || b));
    if (nrhs == 0) return AM_OK;
    cholmod_dense B = {0};
    B.nrow = f->n;
    B.ncol = nrhs;
    B.nzmax = f->n * nrhs;
    B.d = f->n;
    B.x = b;
    B.xtype = CHOLMOD_REAL;
    B.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *X = cholmod_solve(CHOLMOD_A, f->L, &B, &f->cm);
    AMI_CHECK(err, X, f->cm.status == CHOLMOD_OUT_OF_MEMORY ? AM_E_NOMEM : AM_E_INTERNAL,
              "sparse solve of %zu right-hand sides (CHOLMOD status %d)", nrhs, f->cm.status);
    memcpy(b, X->x, sizeof(double) * f->n * nrhs);
    cholmod_free_dense(&X, &f->cm);
    return AM_OK;
}
