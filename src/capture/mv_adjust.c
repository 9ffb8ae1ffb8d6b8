/* Camera bundle adjustment (am_cameras_adjust, anymove/multiview.h).
 *
 * Block alternation rather than one joint sparse problem: with P points and C cameras the
 * joint normal equations are an arrowhead (every residual couples one camera to one point), which
 * anymove/opt.h's banded solver can only hold densely, O((3P + 6C)^2) for P in the tens of
 * thousands. With the points fixed the cameras decouple into C problems of 6 to 9 parameters
 * (dense am_lsq, cheap); with the cameras fixed the points decouple into the per-point
 * triangulation the library already has. Alternating the two is block coordinate descent on the
 * same reprojection cost; it needs more sweeps than a Schur-complement solver near the optimum,
 * but each sweep costs milliseconds.
 *
 * This work is based on:
 * - P. Karashchuk et al. 2021, "Anipose" (aniposelib CameraGroup.bundle_adjust_iter): points
 *   sampled per camera pair, the threshold schedule between the pairs' 15th and 75th percentiles.
 * - Q.-Y. Zhou, J. Park, V. Koltun 2016, "Fast Global Registration" (the shrinking threshold
 *   that aniposelib's loop follows).
 * - B. Triggs et al. 2000, "Bundle adjustment - a modern synthesis": the gauge (one camera and
 *   the scale held), block methods and robust losses.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/multiview.h"
#include "anymove/opt.h"
#include "capture/capture_internal.h"
#include "core/internal.h"

#define AMI_ADJ_MAX_CAMS 64
#define AMI_ADJ_MIN_POINTS 8
#define AMI_ADJ_MIN_CAM_POINTS 6

static am_adjust_opts ami_adj_defaults(const am_adjust_opts *in)
{
    am_adjust_opts o = in ? *in : (am_adjust_opts){0};
    if (o.min_conf == 0) o.min_conf = 0.1;
    if (o.min_conf < 0) o.min_conf = 0;
    if (o.rounds == 0) o.rounds = 10;
    if (!(o.start_px > 0)) o.start_px = 15.0;
    if (!(o.end_px > 0)) o.end_px = 1.0;
    if (!(o.stop_px > 0)) o.stop_px = 0.3;
    if (o.score_samples == 0) o.score_samples = 1000;
    if (o.fit_samples == 0) o.fit_samples = 200;
    if (o.alternations == 0) o.alternations = 40;
    if (o.lm_iterations == 0) o.lm_iterations = 20;
    return o;
}

void am_adjustment_free(am_adjustment *adj)
{
    if (!adj) return;
    am_calib_free(adj->cameras);
    am_free(adj->cam_before_px);
    am_free(adj->cam_after_px);
    am_free(adj->moved_m);
    am_free(adj->turned_deg);
    am_warning_list_free(&adj->warnings);
    am_free(adj);
}

/* A point seen by two cameras or more. */
typedef struct {
    uint32_t t, j;
    uint64_t seen; /* bit c: camera c read it */
} ami_cand;

/* The working state of one call. */
typedef struct {
    const am_mdet *det;
    const am_adjust_opts *o;
    size_t C;
    am_camera **cams;          /* [C] the det's cameras in the copy being adjusted */
    ami_cand *cand;            /* [N] */
    size_t N;
    /* a point set: indices into cand, their positions and per-camera errors */
    size_t *set, *scratch;     /* [N] */
    double *X;                 /* [N][3] NaN = not triangulated */
    double *err;               /* [N][C] px, NaN = not seen */
    double *mean;              /* [N] per-point mean error, INFINITY = not triangulated */
    double *tmp;               /* [N] */
    uint8_t *pick;             /* [N] */
    ami_obs *obs;              /* [C] */
    ami_rng rng;
    double scale_ref;          /* mean centre distance from the fixed camera */
    uint64_t thin_warned;      /* bit c: camera c was warned about */
} ami_adj;

static size_t ami_popcount(uint64_t v)
{
    size_t n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

/* Every point seen by two cameras or more, counted first so the array is exact. */
static am_status ami_adj_candidates(ami_adj *A, am_error *err)
{
    const am_mdet *d = A->det;
    const size_t T = d->frame_count, J = d->joint_count;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < J; j++) {
                uint64_t seen = 0;
                for (size_t c = 0; c < A->C; c++) {
                    double uv[2], conf;
                    if (am_mdet_reading(d, c, t, j, uv, &conf) && conf >= A->o->min_conf) seen |= 1ull << c;
                }
                if (ami_popcount(seen) < 2) continue;
                if (pass == 1) A->cand[n] = (ami_cand){(uint32_t)t, (uint32_t)j, seen};
                n++;
            }
        if (pass == 0) {
            if (n < AMI_ADJ_MIN_POINTS)
                return AM_FAIL(err, AM_E_EMPTY, "%zu points are seen by two cameras or more (at least %d needed)", n,
                               AMI_ADJ_MIN_POINTS);
            A->N = n;
            A->cand = am_alloc_array(n, sizeof *A->cand);
            A->set = am_alloc_array(n, sizeof *A->set);
            A->scratch = am_alloc_array(n, sizeof *A->scratch);
            A->X = am_alloc_array(n * 3, sizeof *A->X);
            A->err = am_alloc_array(n * A->C, sizeof *A->err);
            A->mean = am_alloc_array(n, sizeof *A->mean);
            A->tmp = am_alloc_array(n, sizeof *A->tmp);
            A->pick = am_alloc_array(n, 1);
            if (!A->cand || !A->set || !A->scratch || !A->X || !A->err || !A->mean || !A->tmp || !A->pick)
                return AM_FAIL(err, AM_E_NOMEM, "camera adjustment of %zu points", n);
        }
    }
    return AM_OK;
}

/* Triangulate point i (an index into cand) with every camera that reads it; fills X, err and
 * mean. */
static void ami_adj_point(ami_adj *A, size_t i)
{
    const ami_cand *p = &A->cand[i];
    double *X = A->X + 3 * i, *e = A->err + i * A->C;
    size_t n = 0;
    for (size_t c = 0; c < A->C; c++) {
        e[c] = NAN;
        if (!(p->seen >> c & 1)) continue;
        ami_obs *ob = &A->obs[n];
        double conf;
        if (!am_mdet_reading(A->det, c, p->t, p->j, ob->uv, &conf) || !am_camera_undistort(A->cams[c], ob->uv, ob->ab))
            continue;
        ob->cam = A->cams[c];
        ob->c = (int)c;
        ob->w = conf > 1e-3 ? conf : 1e-3;
        am_camera_ray_rows(A->cams[c], ob->ab, ob->rows);
        n++;
    }
    uint8_t mask[AMI_ADJ_MAX_CAMS];
    double ek[AMI_ADJ_MAX_CAMS];
    memset(mask, 1, sizeof mask);
    A->mean[i] = INFINITY;
    X[0] = X[1] = X[2] = NAN;
    if (n < 2 || !ami_tri_solve_px(A->obs, n, mask, X)) {
        X[0] = X[1] = X[2] = NAN;
        return;
    }
    ami_tri_errors(A->obs, n, X, ek);
    double s = 0;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(ek[k])) {
            X[0] = X[1] = X[2] = NAN;
            return;
        }
        e[A->obs[k].c] = ek[k];
        s += ek[k];
    }
    A->mean[i] = s / (double)n;
}

/* Triangulate a set [n]; false when cancelled. */
static bool ami_adj_triangulate(ami_adj *A, const size_t *set, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if ((k & 4095) == 4095 && ami_cancelled()) return false;
        ami_adj_point(A, set[k]);
    }
    return !ami_cancelled();
}

/* Sort indices by descending key (qsort has no context argument: keys ride along). */
typedef struct {
    double key;
    size_t i;
} ami_keyed;

static int ami_keyed_cmp(const void *a, const void *b)
{
    double x = ((const ami_keyed *)a)->key, y = ((const ami_keyed *)b)->key;
    return x > y ? -1 : x < y;
}

/* aniposelib's resample_points: for every camera pair, up to `per_pair` of the points of from [n]
 * that both cameras see, those seen by more cameras first (ties in random order). The union goes
 * to out (in cand order); returns its size. */
static size_t ami_adj_sample(ami_adj *A, const size_t *from, size_t n, size_t per_pair, size_t *out,
                             ami_keyed *order, uint32_t *quota)
{
    const size_t C = A->C;
    for (size_t k = 0; k < n; k++)
        order[k] = (ami_keyed){(double)ami_popcount(A->cand[from[k]].seen) + ami_rng_uniform(&A->rng), from[k]};
    qsort(order, n, sizeof *order, ami_keyed_cmp);
    memset(quota, 0, C * C * sizeof *quota);
    memset(A->pick, 0, A->N);
    for (size_t k = 0; k < n; k++) {
        uint64_t s = A->cand[order[k].i].seen;
        bool take = false;
        for (size_t a = 0; a < C && !take; a++) {
            if (!(s >> a & 1)) continue;
            for (size_t b = a + 1; b < C; b++)
                if ((s >> b & 1) && quota[a * C + b] < per_pair) {
                    take = true;
                    break;
                }
        }
        if (!take) continue;
        /* A point taken counts for every pair it serves, as in aniposelib's union of sets. */
        for (size_t a = 0; a < C; a++)
            if (s >> a & 1)
                for (size_t b = a + 1; b < C; b++)
                    if (s >> b & 1) quota[a * C + b]++;
        A->pick[order[k].i] = 1;
    }
    size_t m = 0;
    for (size_t i = 0; i < A->N; i++)
        if (A->pick[i]) out[m++] = i;
    return m;
}

/* The threshold bounds of aniposelib's get_error_dict over a triangulated set: per camera pair
 * with more than 10 common points, the 15th and 75th percentiles of the pair's mean error;
 * lo = the largest 15th, hi = the largest 75th. */
static void ami_adj_bounds(ami_adj *A, const size_t *set, size_t n, double *lo, double *hi)
{
    const size_t C = A->C;
    *lo = 0, *hi = 0;
    for (size_t a = 0; a < C; a++)
        for (size_t b = a + 1; b < C; b++) {
            size_t m = 0;
            for (size_t k = 0; k < n; k++) {
                const double *e = A->err + set[k] * C;
                if (isfinite(A->mean[set[k]]) && !isnan(e[a]) && !isnan(e[b])) A->tmp[m++] = 0.5 * (e[a] + e[b]);
            }
            if (m <= 10) continue;
            double q15 = ami_tri_quantile(A->tmp, m, 0.15), q75 = ami_tri_quantile(A->tmp, m, 0.75);
            if (q15 > *lo) *lo = q15;
            if (q75 > *hi) *hi = q75;
        }
}

/* Median of the per-point mean errors of a triangulated set (NaN when none triangulated). */
static double ami_adj_median(ami_adj *A, const size_t *set, size_t n, size_t *scored)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (isfinite(A->mean[set[k]])) A->tmp[m++] = A->mean[set[k]];
    if (scored) *scored = m;
    return ami_tri_quantile(A->tmp, m, 0.5);
}

/* ---- one camera against fixed points ---- */
typedef struct {
    const am_camera *base;     /* the pose the solve starts from (x = 0) */
    uint32_t flags;
    const double *X;           /* [n][3] */
    const double *uv;          /* [n][2] */
    const double *w;           /* [n] sqrt(conf) */
    size_t n;
    am_lsq_loss loss;
} ami_cam_fit;

/* Parameters: [w 3][dt 3] then optionally [focal scale m] and [k1 k2]: R = exp(w) R0, t = t0 + dt,
 * K = K0 with fx, fy, skew times (1 + m), dist[0..1] = k0 + dk (fisheye: dist[0..1] as well). */
static size_t ami_cam_params(uint32_t flags)
{
    return 6 + ((flags & AM_ADJUST_FOCAL) ? 1 : 0) + ((flags & AM_ADJUST_DISTORTION) ? 2 : 0);
}

static void ami_cam_apply(const am_camera *base, uint32_t flags, const double *x, am_camera *cam)
{
    *cam = *base;
    double dR[9];
    am_rodrigues_to_mat3(x, dR);
    am_mat3_mul(dR, base->R, cam->R);
    am_rodrigues_from_mat3(cam->R, cam->rvec);
    for (int i = 0; i < 3; i++) cam->t[i] = base->t[i] + x[3 + i];
    size_t k = 6;
    if (flags & AM_ADJUST_FOCAL) {
        double s = 1.0 + x[k++];
        cam->K[0] = base->K[0] * s, cam->K[1] = base->K[1] * s, cam->K[4] = base->K[4] * s;
    }
    if (flags & AM_ADJUST_DISTORTION) {
        cam->dist[0] = base->dist[0] + x[k];
        cam->dist[1] = base->dist[1] + x[k + 1];
    }
}

static am_status ami_cam_eval(void *user, const double *x, am_lsq_sink *sink)
{
    const ami_cam_fit *F = user;
    const bool jac = am_lsq_sink_wants_jacobian(sink);
    const size_t P = ami_cam_params(F->flags);
    am_camera cam;
    ami_cam_apply(F->base, F->flags, x, &cam);
    double Jl[9];
    ami_rotvec_left_jacobian(x, Jl);
    int32_t cols[9];
    for (size_t k = 0; k < P; k++) cols[k] = (int32_t)k;
    for (size_t i = 0; i < F->n; i++) {
        const double *X = F->X + 3 * i;
        double pr[2], Jp[6], r[2], Jr[18];
        am_camera_project(&cam, X, pr, jac ? Jp : NULL);
        const double w = F->w[i];
        r[0] = w * (pr[0] - F->uv[2 * i]);
        r[1] = w * (pr[1] - F->uv[2 * i + 1]);
        if (jac) {
            /* d uv / d x_cam = Jp R^T (Jp = d uv / d X = d uv / d x_cam R). */
            double Dx[6];
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 3; b++)
                    Dx[3 * a + b] = Jp[3 * a] * cam.R[3 * b] + Jp[3 * a + 1] * cam.R[3 * b + 1] + Jp[3 * a + 2] * cam.R[3 * b + 2];
            /* x_cam = exp(w) R0 X + t: d x_cam / d w = -[R X]_x J_l(w), d x_cam / d dt = I. */
            double y[3];
            am_mat3_mul_vec3(cam.R, X, y);
            const double Yx[9] = {0, -y[2], y[1], y[2], 0, -y[0], -y[1], y[0], 0};
            double YJ[9];
            am_mat3_mul(Yx, Jl, YJ);
            for (int a = 0; a < 2; a++) {
                for (int b = 0; b < 3; b++) {
                    double g = 0;
                    for (int q = 0; q < 3; q++) g -= Dx[3 * a + q] * YJ[3 * q + b];
                    Jr[a * P + (size_t)b] = w * g;
                    Jr[a * P + 3 + (size_t)b] = w * Dx[3 * a + b];
                }
            }
            size_t k = 6;
            if (F->flags & (AM_ADJUST_FOCAL | AM_ADJUST_DISTORTION)) {
                double xc[3], ab[2] = {0, 0}, abd[2];
                am_camera_to_cam(&cam, X, xc);
                if (cam.model == AM_CAMERA_ORTHOGRAPHIC) ab[0] = xc[0], ab[1] = xc[1];
                else if (xc[2] > 1e-9) ab[0] = xc[0] / xc[2], ab[1] = xc[1] / xc[2];
                am_camera_distort(&cam, ab, abd, NULL);
                if (F->flags & AM_ADJUST_FOCAL) {
                    /* u = fx0 (1 + m) a' + s0 (1 + m) b' + cx, v = fy0 (1 + m) b' + cy */
                    Jr[k] = w * (F->base->K[0] * abd[0] + F->base->K[1] * abd[1]);
                    Jr[P + k] = w * F->base->K[4] * abd[1];
                    k++;
                }
                if (F->flags & AM_ADJUST_DISTORTION) {
                    /* d(a', b') / d k_n: pinhole (a, b) r2^n; fisheye (a, b) theta^(2n+1) / r. */
                    double r2 = ab[0] * ab[0] + ab[1] * ab[1], g1 = 0, g2 = 0;
                    if (cam.model == AM_CAMERA_PINHOLE) {
                        g1 = r2, g2 = r2 * r2;
                    } else if (cam.model == AM_CAMERA_FISHEYE && r2 > 1e-24) {
                        double rad = sqrt(r2), th = atan(rad);
                        g1 = th * th * th / rad, g2 = g1 * th * th;
                    }
                    for (int q = 0; q < 2; q++) {
                        double g = q ? g2 : g1;
                        Jr[k + (size_t)q] = w * g * (cam.K[0] * ab[0] + cam.K[1] * ab[1]);
                        Jr[P + k + (size_t)q] = w * g * cam.K[4] * ab[1];
                    }
                }
            }
        }
        am_lsq_add(sink, 2, r, P, cols, jac ? Jr : NULL, &F->loss);
    }
    return AM_OK;
}

/* Fit camera c to the points of set [n] whose mean error is under mu. */
static am_status ami_adj_fit_camera(ami_adj *A, size_t c, const size_t *set, size_t n, double mu, double *buf,
                                    am_error *err)
{
    const am_mdet *d = A->det;
    size_t m = 0;
    double *X = buf, *uv = buf + 3 * n, *w = buf + 5 * n;
    for (size_t k = 0; k < n; k++) {
        size_t i = set[k];
        if (!isfinite(A->mean[i]) || !(A->mean[i] < mu) || isnan(A->err[i * A->C + c])) continue;
        double conf;
        if (!am_mdet_reading(d, c, A->cand[i].t, A->cand[i].j, uv + 2 * m, &conf)) continue;
        memcpy(X + 3 * m, A->X + 3 * i, 3 * sizeof *X);
        w[m] = sqrt(conf > 1e-3 ? conf : 1e-3);
        m++;
    }
    if (m < AMI_ADJ_MIN_CAM_POINTS) {
        if (!(A->thin_warned >> c & 1)) {
            ami_warn(AM_WARN_DEGRADED, "camera '%s' had %zu points under %.1f px to fit: its pose was kept there",
                     A->cams[c]->name, m, mu);
            A->thin_warned |= 1ull << c;
        }
        return AM_OK;
    }
    const size_t P = ami_cam_params(A->o->flags);
    am_camera base = *A->cams[c];
    ami_cam_fit F = {.base = &base, .flags = A->o->flags, .X = X, .uv = uv, .w = w, .n = m,
                     .loss = {AM_LSQ_LOSS_HUBER, mu}};
    double lo[9], hi[9], x[9] = {0};
    for (size_t k = 0; k < P; k++) lo[k] = -INFINITY, hi[k] = INFINITY;
    /* A rotation step beyond pi would leave the Rodrigues chart; focal within a factor 2. */
    for (int k = 0; k < 3; k++) lo[k] = -3.0, hi[k] = 3.0;
    size_t k = 6;
    if (A->o->flags & AM_ADJUST_FOCAL) lo[k] = -0.5, hi[k] = 1.0, k++;
    if (A->o->flags & AM_ADJUST_DISTORTION) lo[k] = lo[k + 1] = -2.0, hi[k] = hi[k + 1] = 2.0;
    am_lsq_problem pb = {.param_count = P, .lower = lo, .upper = hi, .eval = ami_cam_eval, .user = &F};
    am_lsq *ws = NULL;
    AMI_TRY(am_lsq_create(&pb, &ws, err));
    am_lsq_opts lo_opts = {.max_iterations = A->o->lm_iterations, .ftol = 1e-8, .xtol = 1e-10};
    am_status st = am_lsq_solve(ws, x, &lo_opts, NULL, err);
    am_lsq_free(ws);
    if (st < 0) return st;
    ami_cam_apply(&base, A->o->flags, x, A->cams[c]);
    am_camera_update(A->cams[c]);
    return AM_OK;
}

static double ami_adj_spread(ami_adj *A)
{
    double c0[3], s = 0;
    am_camera_centre(A->cams[0], c0);
    for (size_t c = 1; c < A->C; c++) {
        double ci[3];
        am_camera_centre(A->cams[c], ci);
        s += am_vec3_dist(ci, c0);
    }
    return s / (double)(A->C - 1);
}

/* The scale gauge: the other centres scaled about the fixed camera's back to the given spread. */
static void ami_adj_rescale(ami_adj *A)
{
    double spread = ami_adj_spread(A);
    if (!(spread > 0) || !(A->scale_ref > 0)) return;
    double s = A->scale_ref / spread, c0[3];
    am_camera_centre(A->cams[0], c0);
    for (size_t c = 1; c < A->C; c++) {
        am_camera *cam = A->cams[c];
        double ci[3], cn[3];
        am_camera_centre(cam, ci);
        for (int q = 0; q < 3; q++) cn[q] = c0[q] + s * (ci[q] - c0[q]);
        for (int q = 0; q < 3; q++) cam->t[q] = -(cam->R[3 * q] * cn[0] + cam->R[3 * q + 1] * cn[1] + cam->R[3 * q + 2] * cn[2]);
    }
}

/* Alternate points and cameras on set [n] with threshold mu until the set's median stops
 * improving. */
static am_status ami_adj_fit(ami_adj *A, const size_t *set, size_t n, double mu, am_error *err)
{
    double *buf = am_alloc_array(6 * n + 1, sizeof *buf);
    if (!buf) return AM_FAIL(err, AM_E_NOMEM, "camera fit of %zu points", n);
    am_status st = AM_OK;
    double prev = INFINITY;
    for (uint32_t a = 0; a < A->o->alternations; a++) {
        if (!ami_adj_triangulate(A, set, n)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "camera adjustment");
            break;
        }
        /* The cost the camera step lowers: Huber over the points kept. */
        double cost = 0;
        for (size_t k = 0; k < n; k++) {
            const double *e = A->err + set[k] * A->C;
            if (!(A->mean[set[k]] < mu)) continue;
            for (size_t c = 0; c < A->C; c++) {
                if (isnan(e[c])) continue;
                am_lsq_loss l = {AM_LSQ_LOSS_HUBER, mu};
                cost += am_lsq_loss_rho(&l, e[c] * e[c], NULL);
            }
        }
        if (a > 0 && !(cost < prev * (1.0 - 1e-4))) break;
        prev = cost;
        for (size_t c = 1; c < A->C && st == AM_OK; c++) st = ami_adj_fit_camera(A, c, set, n, mu, buf, err);
        if (st != AM_OK) break;
        ami_adj_rescale(A);
    }
    am_free(buf);
    return st;
}

/* Score every candidate: before/after and per camera means. */
static bool ami_adj_score(ami_adj *A, double *median, size_t *scored, double *cam_mean)
{
    for (size_t i = 0; i < A->N; i++) A->set[i] = i;
    if (!ami_adj_triangulate(A, A->set, A->N)) return false;
    *median = ami_adj_median(A, A->set, A->N, scored);
    for (size_t c = 0; c < A->C; c++) {
        double s = 0;
        size_t m = 0;
        for (size_t i = 0; i < A->N; i++) {
            double e = A->err[i * A->C + c];
            if (isfinite(A->mean[i]) && !isnan(e)) s += e, m++;
        }
        cam_mean[c] = m ? s / (double)m : NAN;
    }
    return true;
}

static am_status ami_calib_copy(const am_calib *cal, am_calib **out, am_error *err)
{
    AMI_TRY(am_calib_create(cal->camera_count, out, err));
    am_calib *cp = *out;
    memcpy(cp->cameras, cal->cameras, cal->camera_count * sizeof *cp->cameras);
    if (cal->meta_count) {
        cp->meta = am_alloc_array(cal->meta_count, sizeof *cp->meta);
        if (!cp->meta) return AM_FAIL(err, AM_E_NOMEM, "calibration metadata");
        for (size_t k = 0; k < cal->meta_count; k++) {
            cp->meta[k].key = am_strdup(cal->meta[k].key);
            cp->meta[k].value = am_strdup(cal->meta[k].value);
            cp->meta_count = k + 1;
            if (!cp->meta[k].key || !cp->meta[k].value) return AM_FAIL(err, AM_E_NOMEM, "calibration metadata");
        }
    }
    return AM_OK;
}

am_status am_cameras_adjust(const am_mdet *det, const am_calib *cal, const am_adjust_opts *opts_in,
                            am_adjustment **out, am_error *err)
{
    assert(det && cal && out);
    *out = NULL;
    const am_adjust_opts o = ami_adj_defaults(opts_in);
    am_scope scope;
    am_scope_enter(&scope, &o.ctx);
    ami_stage stage = ami_stage_begin("adjust cameras");
    const size_t C = det->camera_count;
    am_status st = AM_OK;
    am_adjustment *res = NULL;
    ami_adj A = {.det = det, .o = &o, .C = C};
    ami_keyed *order = NULL;
    uint32_t *quota = NULL;
    size_t *full = NULL;
    ami_rng_seed(&A.rng, o.seed);
    if (C > AMI_ADJ_MAX_CAMS) {
        st = AM_FAIL(err, AM_E_LIMIT, "%zu cameras (at most %d)", C, AMI_ADJ_MAX_CAMS);
        goto done;
    }
    if (C < 2) {
        st = AM_FAIL(err, AM_E_ARG, "the detections hold %zu camera: adjusting needs two or more", C);
        goto done;
    }
    res = am_alloc(sizeof *res);
    A.cams = am_alloc_array(C, sizeof *A.cams);
    A.obs = am_alloc_array(C, sizeof *A.obs);
    if (!res || !A.cams || !A.obs) {
        st = AM_FAIL(err, AM_E_NOMEM, "camera adjustment");
        goto done;
    }
    res->camera_count = C;
    if ((st = ami_calib_copy(cal, &res->cameras, err)) != AM_OK) goto done;
    for (size_t c = 0; c < C; c++) {
        int k = am_calib_find(cal, det->cameras[c]);
        if (k < 0) {
            st = AM_FAIL(err, AM_E_NAME, "camera '%s' of the detections is not in the calibration", det->cameras[c]);
            goto done;
        }
        for (size_t q = 0; q < c; q++)
            if (A.cams[q] == &res->cameras->cameras[k]) {
                st = AM_FAIL(err, AM_E_DUPLICATE, "cameras %zu and %zu of the detections are both '%s'", q, c,
                             det->cameras[c]);
                goto done;
            }
        A.cams[c] = &res->cameras->cameras[k];
    }
    res->cam_before_px = am_alloc_array(C, sizeof(double));
    res->cam_after_px = am_alloc_array(C, sizeof(double));
    res->moved_m = am_alloc_array(C, sizeof(double));
    res->turned_deg = am_alloc_array(C, sizeof(double));
    if (!res->cam_before_px || !res->cam_after_px || !res->moved_m || !res->turned_deg) {
        st = AM_FAIL(err, AM_E_NOMEM, "camera adjustment");
        goto done;
    }
    if ((st = ami_adj_candidates(&A, err)) != AM_OK) goto done;
    res->points = A.N;
    order = am_alloc_array(A.N, sizeof *order);
    quota = am_alloc_array(C * C, sizeof *quota);
    full = am_alloc_array(A.N, sizeof *full);
    if (!order || !quota || !full) {
        st = AM_FAIL(err, AM_E_NOMEM, "camera adjustment of %zu points", A.N);
        goto done;
    }
    A.scale_ref = ami_adj_spread(&A);
    if (!ami_progress("adjust cameras", 0.02) ||
        !ami_adj_score(&A, &res->before_px, &res->scored_before, res->cam_before_px)) {
        st = AM_FAIL(err, AM_E_CANCELLED, "camera adjustment");
        goto done;
    }
    for (uint32_t r = 0; r <= o.rounds; r++) {
        if (!ami_progress("adjust cameras", 0.05 + 0.9 * (double)r / (double)(o.rounds + 1))) {
            st = AM_FAIL(err, AM_E_CANCELLED, "camera adjustment");
            goto done;
        }
        for (size_t i = 0; i < A.N; i++) A.set[i] = i;
        size_t nf = ami_adj_sample(&A, A.set, A.N, o.score_samples, full, order, quota);
        if (!ami_adj_triangulate(&A, full, nf)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "camera adjustment");
            goto done;
        }
        double lo, hi;
        ami_adj_bounds(&A, full, nf, &lo, &hi);
        const bool last = r == o.rounds;
        double mu;
        if (last) {
            mu = fmax(fmax(hi, o.end_px), lo);
        } else {
            double sched = o.rounds > 1 ? exp(log(o.start_px) + (log(o.end_px) - log(o.start_px)) * r / (o.rounds - 1))
                                        : o.start_px;
            mu = fmax(fmin(hi, sched), lo);
            if (ami_adj_median(&A, full, nf, NULL) < o.stop_px) {
                r = o.rounds - 1; /* straight to the final fit */
                continue;
            }
        }
        if (!(mu > 0)) mu = o.end_px;
        size_t ng = 0;
        for (size_t k = 0; k < nf; k++)
            if (A.mean[full[k]] < mu) A.scratch[ng++] = full[k];
        size_t nfit = ng;
        if (!last) nfit = ami_adj_sample(&A, A.scratch, ng, o.fit_samples, A.set, order, quota);
        else memcpy(A.set, A.scratch, ng * sizeof *A.set);
        /* ami_adj_fit triangulates A.set again, so mean / err of the fitted points stay current. */
        if ((st = ami_adj_fit(&A, A.set, nfit, mu, err)) != AM_OK) goto done;
        if (!last) res->rounds = r + 1;
        res->final_mu_px = mu;
    }
    if (!ami_adj_score(&A, &res->after_px, &res->scored_after, res->cam_after_px)) {
        st = AM_FAIL(err, AM_E_CANCELLED, "camera adjustment");
        goto done;
    }
    for (size_t c = 0; c < C; c++) {
        int k = am_calib_find(cal, det->cameras[c]);
        double a[3], b[3], Rt[9], D[9];
        am_camera_centre(&cal->cameras[k], a);
        am_camera_centre(A.cams[c], b);
        res->moved_m[c] = am_vec3_dist(a, b);
        am_mat3_transpose(cal->cameras[k].R, Rt);
        am_mat3_mul(A.cams[c]->R, Rt, D);
        double tr = (D[0] + D[4] + D[8] - 1.0) / 2.0;
        res->turned_deg[c] = AM_DEG(acos(tr > 1 ? 1 : tr < -1 ? -1 : tr));
    }
    if (res->after_px > 1.01 * res->before_px)
        ami_warn(AM_WARN_DEGRADED, "the adjusted cameras reproject worse than the given ones (%.2f px against %.2f px)",
                 res->after_px, res->before_px);
    res->seconds = ami_stage_end(&stage);

done:
    am_free(order);
    am_free(quota);
    am_free(full);
    am_free(A.cams);
    am_free(A.obs);
    am_free(A.cand);
    am_free(A.set);
    am_free(A.scratch);
    am_free(A.X);
    am_free(A.err);
    am_free(A.mean);
    am_free(A.tmp);
    am_free(A.pick);
    if (st != AM_OK) {
        am_adjustment_free(res);
        am_scope_leave(&scope, NULL);
        return st;
    }
    am_scope_leave(&scope, &res->warnings);
    *out = res;
    return AM_OK;
}
