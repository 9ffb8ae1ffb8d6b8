/* am_align_run: tracks of any tracker into the world of SPEC 1 by one similarity transform
 * (include/anymove/align.h has the cues; docs/align.md the reasons and the measured accuracy).
 *
 * Everything here is a closed form or a sampled search (no iterative fit, so nothing goes
 * through src/opt): planes and axes are eigenvectors of small covariances (am_sym_eigen), the
 * ground a search over a Fibonacci grid of directions refined by least-squares planes.
 *
 * This work is based on:
 * - Ground contact as the lowest points that rest and lift (foot-plant detection by height and
 *   speed, the usual heuristic of motion-capture clean-up), forward from travel.
 * - Bilateral symmetry: a mirror-symmetric body's mirror normal is an eigenvector of its
 *   covariance (the lateral axis among the horizontal principal axes).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/align.h"
#include "anymove/math.h"
#include "core/internal.h"
#include "math/math_internal.h"

#define AMI_AL_SAMPLE 4000     /* entries kept for the plane search and its checks */
#define AMI_AL_SLOW 0.05       /* share of the entries that are slow: planted feet */
#define AMI_AL_TRACKS 300      /* tracks of the contact search */
#define AMI_AL_FLOOR_Q 0.25    /* the floor: this quantile over frames of their lowest points (a run is in
                                  the air for part of its frames) */
#define AMI_AL_DIRS 2000       /* directions of the floor search */
#define AMI_AL_STILL_DIRS 600  /* directions of the resting-contact search */
#define AMI_AL_MIRROR_PTS 400  /* points per frame in the mirror test */
#define AMI_AL_MIRROR_FRAMES 6 /* frames in the mirror test */

static const char *const ami_up_names[AM_ALIGN_UP_COUNT] = {"auto", "ground", "path", "given"};
static const char *const ami_fw_names[AM_ALIGN_FORWARD_COUNT] = {"auto", "travel", "axis"};
static const char *const ami_sign_names[AM_ALIGN_SIGN_COUNT] = {"travel", "gait", "height"};

const char *am_align_up_name(am_align_up up) { return (unsigned)up < AM_ALIGN_UP_COUNT ? ami_up_names[up] : "?"; }
const char *am_align_forward_name(am_align_forward f)
{
    return (unsigned)f < AM_ALIGN_FORWARD_COUNT ? ami_fw_names[f] : "?";
}
const char *am_align_sign_name(am_align_sign s) { return (unsigned)s < AM_ALIGN_SIGN_COUNT ? ami_sign_names[s] : "?"; }

bool am_align_up_from_name(const char *name, am_align_up *out)
{
    for (int i = 0; i < AM_ALIGN_UP_GIVEN; i++)
        if (name && strcmp(name, ami_up_names[i]) == 0) {
            *out = (am_align_up)i;
            return true;
        }
    return false;
}

bool am_align_forward_from_name(const char *name, am_align_forward *out)
{
    for (int i = 0; i < AM_ALIGN_FORWARD_COUNT; i++)
        if (name && strcmp(name, ami_fw_names[i]) == 0) {
            *out = (am_align_forward)i;
            return true;
        }
    return false;
}

/* ---- small helpers ---- */

static int ami_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted in place), n > 0. */
static double ami_quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, ami_cmp_double);
    double k = q * (double)(n - 1);
    size_t i = (size_t)k;
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (k - (double)i) * (v[i + 1] - v[i]);
}

static void ami_load(const am_tracks *tr, size_t t, size_t n, double p[3])
{
    const float *s = tr->points + (t * tr->point_count + n) * 3;
    p[0] = s[0];
    p[1] = s[1];
    p[2] = s[2];
}

static bool ami_vis(const am_tracks *tr, size_t t, size_t n)
{
    size_t i = t * tr->point_count + n;
    const float *s = tr->points + i * 3;
    return (!tr->visible || tr->visible[i]) && isfinite(s[0]) && isfinite(s[1]) && isfinite(s[2]);
}

static void ami_normalize(double v[3])
{
    double l = am_vec3_norm(v);
    if (l > 0) am_vec3_scale(v, 1.0 / l, v);
}

/* Eigenvectors of a 3x3 symmetric matrix, columns of V by descending eigenvalue. */
static void ami_eigen3(const double C[9], double ev[3], double V[9])
{
    double A[9];
    memcpy(A, C, sizeof A);
    am_sym_eigen(A, 3, ev, V);
}

static void ami_column(const double V[9], int c, double out[3])
{
    out[0] = V[c];
    out[1] = V[3 + c];
    out[2] = V[6 + c];
}

/* ---- the workspace of one call ---- */

typedef struct ami_al {
    const am_tracks *tr;
    size_t T, N;
    double size;        /* body size of the input (its units) */
    float *vel;         /* [T][N][3] velocity per frame, NaN where unknown */
    double *path;       /* [T][3] root path */
    double *rootv;      /* [T][3] root velocity (displacement per frame) */
    double *slow;       /* [ns][3] sampled slow entries */
    float *slow_speed;  /* [ns] */
    size_t ns;
    double *all;        /* [na][3] sampled visible entries */
    float *all_speed;   /* [na] speed, NaN where unknown */
    size_t na;
    double *pdev;       /* [N] motion of each point over the clip (ami_motion), NaN if unknown */
    double *pmean;      /* [N][3] each point's mean position */
    double *tp;         /* [T][np][3] the tracks of np points spread over the body (NaN hidden) */
    size_t np;
    bool slow_moves_less; /* the least-moving points move much less than the body (planted) */
    ami_rng rng;
} ami_al;

static void ami_al_free(ami_al *a)
{
    am_free(a->vel);
    am_free(a->path);
    am_free(a->rootv);
    am_free(a->slow);
    am_free(a->slow_speed);
    am_free(a->all);
    am_free(a->all_speed);
    am_free(a->pdev);
    am_free(a->pmean);
    am_free(a->tp);
}

static am_status ami_cancel(am_error *err, double f)
{
    if (!ami_progress("align", f)) return AM_FAIL(err, AM_E_CANCELLED, "align stopped");
    return AM_OK;
}

/* Body size at the frame with the most visible points. */
static double ami_size(const am_tracks *tr)
{
    size_t best = 0, bt = 0, N = tr->point_count;
    for (size_t t = 0; t < tr->frame_count; t++) {
        size_t c = 0;
        for (size_t n = 0; n < N; n++) c += ami_vis(tr, t, n);
        if (c > best) best = c, bt = t;
    }
    return am_body_size_f32(tr->points + bt * N * 3, N, tr->visible ? tr->visible + bt * N : NULL);
}

/* The motion of each point over the clip: the RMS deviation of its 9-frame means from its clip
 * mean (the tracker's noise averaged down by 3), into a->pdev and a->pmean; *out is the 90th
 * percentile over points, how much the body moves. */
static am_status ami_motion(ami_al *a, double *out, am_error *err)
{
    const am_tracks *tr = a->tr;
    size_t T = a->T, N = a->N, W = T < 9 ? T : 9;
    a->pdev = am_alloc_array(N, sizeof(double));
    a->pmean = am_alloc_array(N, 3 * sizeof(double));
    double *dev = am_alloc_array(N, sizeof(double));
    if (!a->pdev || !a->pmean || !dev) {
        am_free(dev);
        return AM_FAIL(err, AM_E_NOMEM, "align: motion");
    }
    size_t nd = 0;
    for (size_t n = 0; n < N; n++) {
        double m[3] = {0, 0, 0}, p[3];
        size_t c = 0;
        a->pdev[n] = NAN;
        for (size_t t = 0; t < T; t++)
            if (ami_vis(tr, t, n)) {
                ami_load(tr, t, n, p);
                am_vec3_add(m, p, m);
                c++;
            }
        if (c < W || 2 * c < T) continue;
        am_vec3_scale(m, 1.0 / (double)c, m);
        memcpy(a->pmean + 3 * n, m, sizeof m);
        double ss = 0;
        size_t nw = 0;
        for (size_t t0 = 0; t0 + W <= T; t0++) {
            double w[3] = {0, 0, 0};
            size_t k = 0;
            for (size_t t = t0; t < t0 + W; t++)
                if (ami_vis(tr, t, n)) {
                    ami_load(tr, t, n, p);
                    am_vec3_add(w, p, w);
                    k++;
                }
            if (2 * k < W) continue;
            am_vec3_scale(w, 1.0 / (double)k, w);
            double d = am_vec3_dist(w, m);
            ss += d * d;
            nw++;
        }
        if (!nw) continue;
        a->pdev[n] = sqrt(ss / (double)nw);
        dev[nd++] = a->pdev[n];
    }
    *out = nd ? ami_quantile(dev, nd, 0.9) : 0.0;
    am_free(dev);
    return AM_OK;
}

/* Velocities (central differences, else one-sided) and the root path: the mean displacement of
 * the points seen in both frames, integrated from the centroid of the first frame with points. */
static am_status ami_kinematics(ami_al *a, am_error *err)
{
    const am_tracks *tr = a->tr;
    size_t T = a->T, N = a->N;
    a->vel = am_alloc_array(T * N, 3 * sizeof(float));
    a->path = am_alloc_array(T, 3 * sizeof(double));
    a->rootv = am_alloc_array(T, 3 * sizeof(double));
    if (!a->vel || !a->path || !a->rootv) return AM_FAIL(err, AM_E_NOMEM, "align: velocities");
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++) {
            float *v = a->vel + (t * N + n) * 3;
            double p0[3], p1[3];
            bool has = false;
            if (!ami_vis(tr, t, n)) {
            } else if (t > 0 && t + 1 < T && ami_vis(tr, t - 1, n) && ami_vis(tr, t + 1, n)) {
                ami_load(tr, t - 1, n, p0);
                ami_load(tr, t + 1, n, p1);
                am_vec3_sub(p1, p0, p1);
                am_vec3_scale(p1, 0.5, p1);
                has = true;
            } else if (t + 1 < T && ami_vis(tr, t + 1, n)) {
                ami_load(tr, t, n, p0);
                ami_load(tr, t + 1, n, p1);
                am_vec3_sub(p1, p0, p1);
                has = true;
            } else if (t > 0 && ami_vis(tr, t - 1, n)) {
                ami_load(tr, t - 1, n, p0);
                ami_load(tr, t, n, p1);
                am_vec3_sub(p1, p0, p1);
                has = true;
            }
            for (int k = 0; k < 3; k++) v[k] = has ? (float)p1[k] : NAN;
        }
    size_t t0 = 0;
    for (; t0 < T; t0++) {
        double c[3] = {0, 0, 0}, p[3];
        size_t k = 0;
        for (size_t n = 0; n < N; n++)
            if (ami_vis(tr, t0, n)) {
                ami_load(tr, t0, n, p);
                am_vec3_add(c, p, c);
                k++;
            }
        if (k) {
            am_vec3_scale(c, 1.0 / (double)k, a->path + 3 * t0);
            break;
        }
    }
    assert(t0 < T); /* the caller checked some entry is visible */
    for (size_t t = t0; t-- > 0;) memcpy(a->path + 3 * t, a->path + 3 * t0, 3 * sizeof(double));
    for (size_t t = t0 + 1; t < T; t++) {
        double d[3] = {0, 0, 0}, p0[3], p1[3];
        size_t k = 0;
        for (size_t n = 0; n < N; n++)
            if (ami_vis(tr, t - 1, n) && ami_vis(tr, t, n)) {
                ami_load(tr, t - 1, n, p0);
                ami_load(tr, t, n, p1);
                am_vec3_sub(p1, p0, p1);
                am_vec3_add(d, p1, d);
                k++;
            }
        if (k) am_vec3_scale(d, 1.0 / (double)k, d);
        memcpy(a->rootv + 3 * t, d, sizeof d);
        am_vec3_add(a->path + 3 * (t - 1), d, a->path + 3 * t);
    }
    if (T > 1) memcpy(a->rootv, a->rootv + 3, 3 * sizeof(double));
    return AM_OK;
}

/* Speed over up to 4 frames either side: a tracker's noise, which swamps the frame-to-frame
 * speed of a standing foot, is divided by the span. NaN without a visible neighbour. */
static double ami_slowness(const ami_al *a, size_t t, size_t n)
{
    size_t lo = t, hi = t;
    for (size_t k = 1; k <= 4 && k <= t; k++)
        if (ami_vis(a->tr, t - k, n)) lo = t - k;
    for (size_t k = 1; k <= 4 && t + k < a->T; k++)
        if (ami_vis(a->tr, t + k, n)) hi = t + k;
    if (hi == lo) return NAN;
    double p0[3], p1[3];
    ami_load(a->tr, lo, n, p0);
    ami_load(a->tr, hi, n, p1);
    return am_vec3_dist(p0, p1) / (double)(hi - lo);
}


/* Samples: up to AMI_AL_SAMPLE visible entries (uniform, with their speed over a few frames);
 * the least-moving 5 % of the points (their clip means: the planted feet of a body that stands);
 * and up to AMI_AL_FRAME_PTS points in each of AMI_AL_FRAMES frames spread over the clip. */
static am_status ami_samples(ami_al *a, am_error *err)
{
    size_t T = a->T, N = a->N;
    size_t nv = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++) nv += ami_vis(a->tr, t, n);
    a->all = am_alloc_array(AMI_AL_SAMPLE, 3 * sizeof(double));
    a->all_speed = am_alloc_array(AMI_AL_SAMPLE, sizeof(float));
    a->slow = am_alloc_array(N, 3 * sizeof(double));
    a->slow_speed = am_alloc_array(N, sizeof(float));
    double *dv = am_alloc_array(N, sizeof(double));
    if (!a->all || !a->all_speed || !a->slow || !a->slow_speed || !dv) {
        am_free(dv);
        return AM_FAIL(err, AM_E_NOMEM, "align: samples");
    }
    /* Every k-th entry with a random phase is a uniform sample without a reservoir. */
    size_t step = nv / AMI_AL_SAMPLE + 1, phase = (size_t)(ami_rng_uniform(&a->rng) * (double)step) % step, i = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++) {
            if (!ami_vis(a->tr, t, n)) continue;
            if (i++ % step != phase || a->na >= AMI_AL_SAMPLE) continue;
            ami_load(a->tr, t, n, a->all + 3 * a->na);
            a->all_speed[a->na++] = (float)ami_slowness(a, t, n);
        }
    size_t nd = 0;
    for (size_t n = 0; n < N; n++)
        if (isfinite(a->pdev[n])) dv[nd++] = a->pdev[n];
    if (nd) {
        double med = ami_quantile(dv, nd, 0.5), thr = ami_quantile(dv, nd, AMI_AL_SLOW);
        double slow_med = ami_quantile(dv, (size_t)((double)nd * AMI_AL_SLOW) + 1, 0.5);
        a->slow_moves_less = slow_med < 0.3 * med;
        for (size_t n = 0; n < N; n++)
            if (isfinite(a->pdev[n]) && a->pdev[n] <= thr) {
                memcpy(a->slow + 3 * a->ns, a->pmean + 3 * n, 3 * sizeof(double));
                a->slow_speed[a->ns++] = (float)a->pdev[n];
            }
    }
    am_free(dv);
    a->np = N < AMI_AL_TRACKS ? N : AMI_AL_TRACKS;
    a->tp = am_alloc_array(T * a->np, 3 * sizeof(double));
    if (!a->tp) return AM_FAIL(err, AM_E_NOMEM, "align: samples");
    for (size_t k = 0; k < a->np; k++) {
        size_t n = k * N / a->np;
        for (size_t t = 0; t < T; t++) {
            double *q = a->tp + 3 * (t * a->np + k);
            if (ami_vis(a->tr, t, n))
                ami_load(a->tr, t, n, q);
            else
                q[0] = q[1] = q[2] = NAN;
        }
    }
    return AM_OK;
}

/* The plane u.x = g through the inliers' centroid with the normal of least variance. */
static void ami_fit_plane(const double *pts, const uint8_t *in, size_t n, double u[3], double *g)
{
    double c[3] = {0, 0, 0}, C[9] = {0};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i]) {
            am_vec3_add(c, pts + 3 * i, c);
            k++;
        }
    if (k < 3) return;
    am_vec3_scale(c, 1.0 / (double)k, c);
    for (size_t i = 0; i < n; i++)
        if (in[i]) {
            double d[3];
            am_vec3_sub(pts + 3 * i, c, d);
            for (int r = 0; r < 3; r++)
                for (int s = 0; s < 3; s++) C[3 * r + s] += d[r] * d[s];
        }
    double ev[3], V[9], nn[3];
    ami_eigen3(C, ev, V);
    ami_column(V, 2, nn);
    if (am_vec3_dot(nn, u) < 0) am_vec3_scale(nn, -1.0, nn);
    memcpy(u, nn, sizeof nn);
    *g = am_vec3_dot(u, c);
}

/* The support of the samples along n: their k-th lowest n.x (k = 0.25 % of them), a floor that a
 * few stray points do not lower. */
static double ami_support(const ami_al *a, const double n[3])
{
    enum { K_MAX = 32 };
    double low[K_MAX];
    size_t k = a->na / 400 + 1, have = 0;
    if (k > K_MAX) k = K_MAX;
    for (size_t i = 0; i < a->na; i++) {
        double h = am_vec3_dot(n, a->all + 3 * i);
        if (have == k && h >= low[k - 1]) continue;
        size_t j = have < k ? have++ : k - 1;
        for (; j > 0 && low[j - 1] > h; j--) low[j] = low[j - 1];
        low[j] = h;
    }
    return low[have - 1];
}

/* The two lowest heights seen so far (a single stray point under the floor is not the floor). */
static inline void ami_two_lowest(double h, double *lo1, double *lo2)
{
    if (h < *lo1) {
        *lo2 = *lo1;
        *lo1 = h;
    } else if (h < *lo2) {
        *lo2 = h;
    }
}

/* The floor along n: a low quantile over frames of each frame's second-lowest tracked point. */
static double ami_floor(const ami_al *a, const double n[3], double *tmp)
{
    size_t k = 0;
    for (size_t t = 0; t < a->T; t++) {
        double lo1 = INFINITY, lo2 = INFINITY;
        for (size_t i = 0; i < a->np; i++) {
            const double *p = a->tp + 3 * (t * a->np + i);
            if (isfinite(p[0])) ami_two_lowest(am_vec3_dot(n, p), &lo1, &lo2);
        }
        if (lo2 < INFINITY) tmp[k++] = lo2;
    }
    return k ? ami_quantile(tmp, k, AMI_AL_FLOOR_Q) : NAN;
}

/* The floor along n from every point: a low quantile over frames of each frame's second-lowest. */
static double ami_floor_all(const ami_al *a, const double n[3], double *tmp)
{
    size_t k = 0;
    for (size_t t = 0; t < a->T; t++) {
        double lo1 = INFINITY, lo2 = INFINITY, p[3];
        for (size_t i = 0; i < a->N; i++) {
            if (!ami_vis(a->tr, t, i)) continue;
            ami_load(a->tr, t, i, p);
            ami_two_lowest(am_vec3_dot(n, p), &lo1, &lo2);
        }
        if (lo2 < INFINITY) tmp[k++] = lo2;
    }
    return k ? ami_quantile(tmp, k, AMI_AL_FLOOR_Q) : NAN;
}

/* Ground contact along n: the entries on the floor (within eps) of points that also leave it
 * (rise 4 % of the body size above it at some frame): feet that plant and lift. A body's side
 * or back is touched by the same points all the time and they never leave, so it scores 0; a
 * floor with more than 1 % of the entries below it is not under the body. in (may be NULL):
 * marks those entries. */
static double ami_contact_score(const ami_al *a, const double n[3], double F, uint8_t *in)
{
    double eps = 0.015 * a->size, lift = 0.04 * a->size;
    size_t below = 0, total = 0, score = 0;
    for (size_t i = 0; i < a->np; i++) {
        size_t c = 0;
        double top = -INFINITY;
        for (size_t t = 0; t < a->T; t++) {
            const double *p = a->tp + 3 * (t * a->np + i);
            if (!isfinite(p[0])) continue;
            double h = am_vec3_dot(n, p) - F;
            total++;
            below += h < -2.0 * eps;
            c += fabs(h) < eps;
            top = fmax(top, h);
        }
        bool lifts = c >= 2 && top > lift;
        if (lifts) score += c;
        if (in)
            for (size_t t = 0; t < a->T; t++) {
                const double *p = a->tp + 3 * (t * a->np + i);
                in[t * a->np + i] = lifts && isfinite(p[0]) && fabs(am_vec3_dot(n, p) - F) < eps;
            }
    }
    return 100 * below > total ? 0.0 : (double)score;
}

/* Velocity of track i of a->tp at frame t over 4 frames either side (a tracker's noise divided
 * by the span); false when either end is hidden or outside the clip. */
static bool ami_tp_vel(const ami_al *a, size_t t, size_t i, double v[3])
{
    if (t < 4 || t + 4 >= a->T) return false;
    const double *p0 = a->tp + 3 * ((t - 4) * a->np + i), *p1 = a->tp + 3 * ((t + 4) * a->np + i);
    if (!isfinite(p0[0]) || !isfinite(p1[0])) return false;
    am_vec3_sub(p1, p0, v);
    am_vec3_scale(v, 1.0 / 8.0, v);
    return true;
}

/* Resting contact along n for a body that does not step by ami_contact_score's rule: the
 * entries on the floor F (within eps) that move with one common velocity w (the per-axis median
 * of theirs: a ground at rest, or the treadmill of an in-place clip), within a quarter of the
 * body's mean speed relative to w, times the share of frames touching the floor; 0 when more
 * than 1 % of the entries lie under it (not under the body). in (may be NULL) marks them. The
 * prototype's DEV figures are in bench/RESULTS.md. */
static double ami_still_score(const ami_al *a, const double n[3], double F, double *tmp, uint8_t *in)
{
    double eps = 0.015 * a->size;
    size_t npts = a->T * a->np, k = 0, below = 0, total = 0, touch = 0;
    double *vx = tmp, *vy = tmp + npts, *vz = tmp + 2 * npts;
    for (size_t t = 0; t < a->T; t++) {
        double lo1 = INFINITY, lo2 = INFINITY;
        for (size_t i = 0; i < a->np; i++) {
            const double *p = a->tp + 3 * (t * a->np + i);
            if (!isfinite(p[0])) continue;
            double h = am_vec3_dot(n, p) - F, v[3];
            ami_two_lowest(h, &lo1, &lo2);
            total++;
            below += h < -2.0 * eps;
            if (fabs(h) < eps && ami_tp_vel(a, t, i, v)) vx[k] = v[0], vy[k] = v[1], vz[k] = v[2], k++;
        }
        touch += fabs(lo2) < eps;
    }
    if (in) memset(in, 0, npts);
    if (k < 5 || 100 * below > total) return 0.0;
    double w[3] = {ami_quantile(vx, k, 0.5), ami_quantile(vy, k, 0.5), ami_quantile(vz, k, 0.5)};
    double body = 0;
    size_t nb = 0;
    for (size_t t = 0; t < a->T; t++)
        for (size_t i = 0; i < a->np; i++) {
            double v[3];
            if (!ami_tp_vel(a, t, i, v)) continue;
            body += am_vec3_dist(v, w);
            nb++;
        }
    double lim = 0.25 * (nb ? body / (double)nb : 0.0), still = 0;
    for (size_t t = 0; t < a->T; t++)
        for (size_t i = 0; i < a->np; i++) {
            const double *p = a->tp + 3 * (t * a->np + i);
            double v[3];
            if (!isfinite(p[0]) || !(fabs(am_vec3_dot(n, p) - F) < eps) || !ami_tp_vel(a, t, i, v)) continue;
            if (am_vec3_dist(v, w) < lim) {
                still++;
                if (in) in[t * a->np + i] = 1;
            }
        }
    return still * (double)touch / (double)a->T;
}

/* Direction i of a Fibonacci grid of count directions over the sphere (near-uniform, no poles). */
static void ami_sphere_dir(int i, int count, double n[3])
{
    const double golden = 3.14159265358979323846 * (3.0 - sqrt(5.0));
    double z = 1.0 - (2.0 * i + 1.0) / count, rr = sqrt(fmax(0.0, 1.0 - z * z)), ph = golden * i;
    n[0] = rr * cos(ph), n[1] = rr * sin(ph), n[2] = z;
}

/* The ground. Two cues of the lowest, slowest points:
 * - a body that steps: the plane on which points rest for a while and which they leave (feet
 *   that plant and lift), searched over a Fibonacci grid of directions, then refined by
 *   least-squares planes through the contact entries;
 * - a body that stands: the plane of the points that move least over the clip (its planted
 *   feet), refined by planes through those near the body's floor.
 * found false when neither holds (nothing rests on a ground: a tumbling or swimming body, or
 * feet that slide without ever lifting). */
static am_status ami_ground(ami_al *a, double u[3], double *g, size_t *inliers, double *rms, bool *found,
                            am_error *err)
{
    *found = false;
    if (a->na < 30 || a->np < 3) return AM_OK;
    double *tmp = am_alloc_array(a->T, sizeof(double));
    size_t npts = a->T * a->np;
    uint8_t *in = am_alloc(npts > a->ns ? npts : a->ns + 1);
    if (!tmp || !in) {
        am_free(tmp);
        am_free(in);
        return AM_FAIL(err, AM_E_NOMEM, "align: ground");
    }
    double best = 0, bn[3] = {0, 0, 1};
    for (int i = 0; i < AMI_AL_DIRS; i++) {
        if ((i & 255) == 0 && !ami_progress("align", 0.3 + 0.3 * i / (double)AMI_AL_DIRS)) {
            am_free(tmp);
            am_free(in);
            return AM_FAIL(err, AM_E_CANCELLED, "align stopped");
        }
        double n[3];
        ami_sphere_dir(i, AMI_AL_DIRS, n);
        double F = ami_floor(a, n, tmp);
        double sc = isfinite(F) ? ami_contact_score(a, n, F, NULL) : 0.0;
        if (sc > best) {
            best = sc;
            memcpy(bn, n, sizeof n);
        }
    }
    bool stepping = best >= 2.0 * (double)a->T / 3.0; /* two feet planted for a third of the clip */
    double n[3], d = 0;
    bool resting = false;
    {
        /* no feet that plant and lift: points that rest on a common ground */
        double *vt = am_alloc_array(3 * npts + 1, sizeof(double));
        if (!vt) {
            am_free(tmp);
            am_free(in);
            return AM_FAIL(err, AM_E_NOMEM, "align: ground");
        }
        double bs = 0;
        for (int i = 0; i < AMI_AL_STILL_DIRS; i++) {
            double m[3];
            ami_sphere_dir(i, AMI_AL_STILL_DIRS, m);
            double F = ami_floor(a, m, tmp);
            double sc = isfinite(F) ? ami_still_score(a, m, F, vt, NULL) : 0.0;
            if (sc > bs) bs = sc, memcpy(n, m, sizeof m);
        }
        /* A side or the top also has extreme points that plant and lift (a swinging tail, a
         * head): a stepping floor stands only when its contacts also rest about as well as the
         * best resting floor's (half as many still contact entries). */
        if (stepping && bs > 0) {
            double F = ami_floor(a, bn, tmp);
            stepping = isfinite(F) && ami_still_score(a, bn, F, vt, NULL) >= 0.5 * bs;
        }
        resting = !stepping && bs >= (double)a->T / 3.0; /* one contact entry for a third of the frames */
        for (int round = 0; resting && round < 6; round++) {
            double F = ami_floor(a, n, tmp);
            ami_still_score(a, n, F, vt, in);
            size_t k = 0;
            for (size_t i = 0; i < npts; i++) k += in[i];
            if (k < 3) break;
            double dd;
            ami_fit_plane(a->tp, in, npts, n, &dd);
        }
        if (resting) {
            d = ami_floor(a, n, tmp);
            ami_still_score(a, n, d, vt, in);
        }
        am_free(vt);
    }
    const double *pts = stepping || resting ? a->tp : a->slow;
    size_t count = stepping || resting ? npts : a->ns;
    if (resting) {
    } else if (stepping) {
        memcpy(n, bn, sizeof n);
        for (int round = 0; round < 6; round++) {
            double F = ami_floor(a, n, tmp);
            ami_contact_score(a, n, F, in);
            size_t k = 0;
            for (size_t i = 0; i < npts; i++) k += in[i];
            if (k < 3) break;
            double dd;
            ami_fit_plane(a->tp, in, npts, n, &dd);
        }
        d = ami_floor(a, n, tmp);
        ami_contact_score(a, n, d, in);
    } else {
        if (!a->slow_moves_less || a->ns < 10) {
            am_free(tmp);
            am_free(in);
            return AM_OK;
        }
        memset(in, 1, a->ns);
        am_vec3_set(n, 0, 0, 1);
        ami_fit_plane(a->slow, in, a->ns, n, &d);
        double m[3] = {0, 0, 0};
        for (size_t i = 0; i < a->na; i++) am_vec3_add(m, a->all + 3 * i, m);
        am_vec3_scale(m, 1.0 / (double)a->na, m);
        if (am_vec3_dot(n, m) - d < 0) am_vec3_scale(n, -1.0, n);
        static const double bands[] = {0.04, 0.03, 0.02, 0.015, 0.01, 0.01, 0.01, 0.01};
        for (size_t round = 0; round <= sizeof bands / sizeof *bands; round++) {
            d = ami_support(a, n);
            size_t k = 0;
            for (size_t i = 0; i < a->ns; i++) {
                in[i] = am_vec3_dot(n, a->slow + 3 * i) - d < (round < 8 ? bands[round] : 0.01) * a->size;
                k += in[i];
            }
            if (k < 3 || round == sizeof bands / sizeof *bands) break;
            double dd;
            ami_fit_plane(a->slow, in, a->ns, n, &dd);
        }
    }
    am_free(tmp);
    /* The contacts must spread over an area, not a line or a point (a rolling log, one paw). */
    double c[3] = {0, 0, 0}, C[9] = {0}, ss = 0;
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (in[i]) am_vec3_add(c, pts + 3 * i, c), k++;
    if (k) am_vec3_scale(c, 1.0 / (double)k, c);
    for (size_t i = 0; i < count; i++)
        if (in[i]) {
            double dv[3], h = am_vec3_dot(n, pts + 3 * i) - d;
            ss += h * h;
            am_vec3_sub(pts + 3 * i, c, dv);
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++) C[3 * r + q] += dv[r] * dv[q] / (double)k;
        }
    am_free(in);
    AMI_TRY(ami_cancel(err, 0.6));
    double ev[3], V[9];
    ami_eigen3(C, ev, V);
    if (k < 10 || !(sqrt(fmax(ev[1], 0)) > 0.03 * a->size)) return AM_OK;
    memcpy(u, n, sizeof n);
    *g = d;
    *inliers = k;
    *rms = k ? sqrt(ss / (double)k) : 0.0;
    *found = true;
    return AM_OK;
}

/* Up from the plane of the root path; its sign puts the slower extreme below. */
static bool ami_path_up(const ami_al *a, double u[3], double *g, double *quality)
{
    size_t T = a->T;
    double c[3] = {0, 0, 0}, C[9] = {0};
    for (size_t t = 0; t < T; t++) am_vec3_add(c, a->path + 3 * t, c);
    am_vec3_scale(c, 1.0 / (double)T, c);
    for (size_t t = 0; t < T; t++) {
        double d[3];
        am_vec3_sub(a->path + 3 * t, c, d);
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) C[3 * r + s] += d[r] * d[s] / (double)T;
    }
    double ev[3], V[9];
    ami_eigen3(C, ev, V);
    *quality = ev[1] > 0 ? ev[2] / ev[1] : 1.0;
    /* the path must span a plane: a line (or a point) leaves up undetermined */
    if (!(sqrt(fmax(ev[1], 0)) > 0.1 * a->size) || !(ev[2] < 0.1 * ev[1])) return false;
    ami_column(V, 2, u);
    /* sign: the extreme along u whose points are slower is the ground side */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < a->na; i++) {
        double h = am_vec3_dot(u, a->all + 3 * i);
        lo = fmin(lo, h);
        hi = fmax(hi, h);
    }
    double s_lo = 0, s_hi = 0;
    size_t n_lo = 0, n_hi = 0;
    for (size_t i = 0; i < a->na; i++) {
        double h = am_vec3_dot(u, a->all + 3 * i), s = a->all_speed[i];
        if (!isfinite(s)) continue;
        if (h < lo + 0.1 * (hi - lo)) s_lo += s, n_lo++;
        if (h > hi - 0.1 * (hi - lo)) s_hi += s, n_hi++;
    }
    if (n_lo && n_hi && s_lo / (double)n_lo > s_hi / (double)n_hi) am_vec3_scale(u, -1.0, u);
    *g = 0; /* set from the heights by the caller */
    return true;
}

/* An orthonormal pair spanning the plane normal to u. */
static void ami_plane_basis(const double u[3], double e1[3], double e2[3])
{
    double ref[3] = {1, 0, 0};
    if (fabs(u[0]) > 0.8) am_vec3_set(ref, 0, 1, 0);
    am_vec3_cross(u, ref, e1);
    ami_normalize(e1);
    am_vec3_cross(u, e1, e2);
}

/* Mean distance from each point of a frame mirrored across the plane through its centroid
 * normal to L, to the nearest point of the frame. */
static am_status ami_mirror_error(const ami_al *a, const double L[3], double *out, am_error *err)
{
    const am_tracks *tr = a->tr;
    size_t T = a->T, N = a->N;
    double *p = am_alloc_array(AMI_AL_MIRROR_PTS, 3 * sizeof(double));
    if (!p) return AM_FAIL(err, AM_E_NOMEM, "align: mirror test");
    double sum = 0;
    size_t cnt = 0;
    size_t frames = T < AMI_AL_MIRROR_FRAMES ? T : AMI_AL_MIRROR_FRAMES;
    for (size_t f = 0; f < frames; f++) {
        size_t t = frames > 1 ? f * (T - 1) / (frames - 1) : 0;
        size_t nv = 0;
        for (size_t n = 0; n < N; n++) nv += ami_vis(tr, t, n);
        if (nv < 10) continue;
        size_t step = nv / AMI_AL_MIRROR_PTS + 1, k = 0, i = 0;
        double c[3] = {0, 0, 0};
        for (size_t n = 0; n < N; n++) {
            if (!ami_vis(tr, t, n)) continue;
            if (i++ % step || k >= AMI_AL_MIRROR_PTS) continue;
            ami_load(tr, t, n, p + 3 * k);
            am_vec3_add(c, p + 3 * k, c);
            k++;
        }
        am_vec3_scale(c, 1.0 / (double)k, c);
        for (size_t j = 0; j < k; j++) {
            double q[3], d[3];
            am_vec3_sub(p + 3 * j, c, d);
            am_vec3_madd(p + 3 * j, -2.0 * am_vec3_dot(d, L), L, q);
            double best = INFINITY;
            for (size_t m = 0; m < k; m++) {
                double e = am_vec3_dist(q, p + 3 * m);
                if (e < best) best = e;
            }
            sum += best;
            cnt++;
        }
    }
    am_free(p);
    *out = cnt ? sum / (double)cnt : 0.0;
    return AM_OK;
}

/* The horizontal axes of the body: eigenvectors of the covariance of points about their
 * frame's root, projected on the plane normal to u. */
static void ami_body_axes(const ami_al *a, const double u[3], double major[3], double minor[3])
{
    double e1[3], e2[3], C[4] = {0, 0, 0, 0};
    ami_plane_basis(u, e1, e2);
    const am_tracks *tr = a->tr;
    for (size_t t = 0; t < a->T; t++) {
        double c[3] = {0, 0, 0}, p[3];
        size_t k = 0;
        for (size_t n = 0; n < a->N; n++)
            if (ami_vis(tr, t, n)) {
                ami_load(tr, t, n, p);
                am_vec3_add(c, p, c);
                k++;
            }
        if (!k) continue;
        am_vec3_scale(c, 1.0 / (double)k, c);
        for (size_t n = 0; n < a->N; n++)
            if (ami_vis(tr, t, n)) {
                ami_load(tr, t, n, p);
                am_vec3_sub(p, c, p);
                double x = am_vec3_dot(p, e1), y = am_vec3_dot(p, e2);
                C[0] += x * x;
                C[1] += x * y;
                C[3] += y * y;
            }
    }
    C[2] = C[1];
    double ev[2], V[4];
    am_sym_eigen(C, 2, ev, V);
    for (int k = 0; k < 3; k++) {
        major[k] = V[0] * e1[k] + V[2] * e2[k];
        minor[k] = V[1] * e1[k] + V[3] * e2[k];
    }
    ami_normalize(major);
    ami_normalize(minor);
}

/* Correlation of the velocity along f (less the root's) with the height among the low entries:
 * feet move forward while lifted, backward (or not at all) while planted. */
static double ami_gait_corr(const ami_al *a, const double u[3], double g, const double f[3])
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < a->na; i++) {
        double h = am_vec3_dot(u, a->all + 3 * i) - g;
        lo = fmin(lo, h);
        hi = fmax(hi, h);
    }
    double cut = lo + 0.2 * (hi - lo);
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    size_t k = 0;
    for (size_t t = 0; t < a->T; t++)
        for (size_t n = 0; n < a->N; n++) {
            if (!ami_vis(a->tr, t, n)) continue;
            const float *v = a->vel + (t * a->N + n) * 3;
            if (!isfinite(v[0])) continue;
            double p[3];
            ami_load(a->tr, t, n, p);
            double h = am_vec3_dot(u, p) - g;
            if (h > cut) continue;
            double vv[3] = {v[0] - a->rootv[3 * t], v[1] - a->rootv[3 * t + 1], v[2] - a->rootv[3 * t + 2]};
            double x = am_vec3_dot(vv, f);
            sx += x, sy += h, sxx += x * x, syy += h * h, sxy += x * h;
            k++;
        }
    if (k < 10) return 0.0;
    double kk = (double)k, cxy = sxy / kk - sx * sy / (kk * kk), cxx = sxx / kk - sx * sx / (kk * kk),
           cyy = syy / kk - sy * sy / (kk * kk);
    return cxx > 0 && cyy > 0 ? cxy / sqrt(cxx * cyy) : 0.0;
}

/* The mean height of the sampled entries at the two ends (10 %) of the body along f: positive
 * when the +f end is higher. Used for clips that do not travel, so the ends of the samples are
 * the ends of the body. */
static am_status ami_end_heights(const ami_al *a, const double u[3], const double f[3], double *out,
                                 am_error *err)
{
    double *x = am_alloc_array(a->na, sizeof(double));
    if (!x) return AM_FAIL(err, AM_E_NOMEM, "align: body ends");
    for (size_t i = 0; i < a->na; i++) x[i] = am_vec3_dot(f, a->all + 3 * i);
    double q0 = ami_quantile(x, a->na, 0.1), q1 = ami_quantile(x, a->na, 0.9);
    am_free(x);
    double hf = 0, hb = 0;
    size_t nf = 0, nb = 0;
    for (size_t i = 0; i < a->na; i++) {
        double h = am_vec3_dot(u, a->all + 3 * i), xi = am_vec3_dot(f, a->all + 3 * i);
        if (xi >= q1) hf += h, nf++;
        if (xi <= q0) hb += h, nb++;
    }
    *out = nf && nb ? hf / (double)nf - hb / (double)nb : 0.0;
    return AM_OK;
}

static double ami_median_frames(double *v, size_t n) { return n ? ami_quantile(v, n, 0.5) : 0.0; }

/* Height (top above the ground) and length (extent along f), medians over frames, input units. */
static am_status ami_dims(const ami_al *a, const double u[3], double g, const double f[3], double *height,
                          double *length, am_error *err)
{
    double *hv = am_alloc_array(a->T, sizeof(double)), *lv = am_alloc_array(a->T, sizeof(double));
    if (!hv || !lv) {
        am_free(hv);
        am_free(lv);
        return AM_FAIL(err, AM_E_NOMEM, "align: body dimensions");
    }
    size_t k = 0;
    for (size_t t = 0; t < a->T; t++) {
        double top = -INFINITY, lo = INFINITY, hi = -INFINITY, p[3];
        for (size_t n = 0; n < a->N; n++) {
            if (!ami_vis(a->tr, t, n)) continue;
            ami_load(a->tr, t, n, p);
            top = fmax(top, am_vec3_dot(u, p) - g);
            double x = am_vec3_dot(f, p);
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
        if (top == -INFINITY) continue;
        hv[k] = top;
        lv[k] = hi - lo;
        k++;
    }
    *height = ami_median_frames(hv, k);
    *length = ami_median_frames(lv, k);
    am_free(hv);
    am_free(lv);
    return AM_OK;
}

static am_status ami_align(const am_tracks *tr, const am_align_opts *o, am_align_result *r, am_error *err)
{
    size_t T = tr->frame_count, N = tr->point_count;
    AMI_CHECK(err, o->height >= 0 && isfinite(o->height), AM_E_ARG, "--height must be a length in metres > 0");
    AMI_CHECK(err, o->length >= 0 && isfinite(o->length), AM_E_ARG, "--length must be a length in metres > 0");
    AMI_CHECK(err, !(o->height > 0 && o->length > 0), AM_E_ARG, "give --height or --length, not both");
    AMI_CHECK(err, (unsigned)o->up < AM_ALIGN_UP_COUNT && (unsigned)o->forward < AM_ALIGN_FORWARD_COUNT, AM_E_ARG,
              "unknown up or forward cue");
    AMI_CHECK(err, T > 0 && N > 0, AM_E_EMPTY, "no frames or no points to align");
    size_t nv = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++) nv += ami_vis(tr, t, n);
    AMI_CHECK(err, nv > 0, AM_E_EMPTY, "every point is hidden in every frame: nothing to align");
    AMI_CHECK(err, nv >= 10, AM_E_EMPTY, "only %zu visible entries: too few to align", nv);

    ami_stage stage = ami_stage_begin("align");
    ami_al a = {.tr = tr, .T = T, .N = N};
    ami_rng_seed(&a.rng, 0x616c69676eull ^ o->seed);
    am_status st = AM_OK;
    a.size = ami_size(tr);
    if (!(a.size > 0)) {
        st = AM_FAIL(err, AM_E_DEGENERATE, "the points have no extent (body size 0)");
        goto done;
    }
    r->body_size_in = a.size;
    double motion = 0;
    if ((st = ami_motion(&a, &motion, err)) != AM_OK) goto done;
    if (T < 3 || motion < 0.003 * a.size) {
        st = AM_FAIL(err, AM_E_DEGENERATE,
                     "static clip: the points move %.2g %% of the body size (%zu frames); up, forward and their "
                     "signs are read from motion, so a still body cannot be aligned",
                     100.0 * motion / a.size, T);
        goto done;
    }
    if ((st = ami_cancel(err, 0.1)) != AM_OK) goto done;
    if ((st = ami_kinematics(&a, err)) != AM_OK) goto done;
    if ((st = ami_samples(&a, err)) != AM_OK) goto done;
    if ((st = ami_cancel(err, 0.2)) != AM_OK) goto done;

    /* up */
    double u[3] = {0, 0, 1}, g = 0;
    bool found = false;
    double hint = am_vec3_norm(o->up_axis);
    if (hint > 0) {
        /* the tracker's up is known: only the ground's height is read from the data */
        AMI_CHECK(err, isfinite(hint), AM_E_ARG, "the up axis must be finite");
        am_vec3_scale(o->up_axis, 1.0 / hint, u);
        double *tmp = am_alloc_array(a.T, sizeof(double));
        if (!tmp) {
            st = AM_FAIL(err, AM_E_NOMEM, "align: floor");
            goto done;
        }
        g = ami_floor_all(&a, u, tmp);
        am_free(tmp);
        r->up_from = AM_ALIGN_UP_GIVEN;
        found = isfinite(g);
    }
    if (!found && o->up != AM_ALIGN_UP_PATH && hint == 0) {
        if ((st = ami_ground(&a, u, &g, &r->ground_inliers, &r->ground_rms, &found, err)) != AM_OK) goto done;
        if (found) r->up_from = AM_ALIGN_UP_GROUND;
    }
    if (!found && o->up != AM_ALIGN_UP_GROUND && hint == 0) {
        double q = 1;
        found = ami_path_up(&a, u, &g, &q);
        if (found) {
            r->up_from = AM_ALIGN_UP_PATH;
            if (o->up == AM_ALIGN_UP_AUTO)
                ami_warn(AM_WARN_DEGRADED, "no ground contact found: up from the plane of the root path");
            double *h = am_alloc_array(a.na, sizeof(double));
            if (!h) {
                st = AM_FAIL(err, AM_E_NOMEM, "align: ground height");
                goto done;
            }
            for (size_t i = 0; i < a.na; i++) h[i] = am_vec3_dot(u, a.all + 3 * i);
            g = ami_quantile(h, a.na, 0.005);
            am_free(h);
        }
    }
    if (!found) {
        st = AM_FAIL(err, AM_E_DEGENERATE, "%s",
                     o->up == AM_ALIGN_UP_PATH
                         ? "the root path does not span a plane (it stays on a line or in place): no up direction; "
                           "try --up ground"
                     : o->up == AM_ALIGN_UP_GROUND
                         ? "no ground contact: no points rest on a plane under the body (feet that plant and lift, or stand still); try --up path, or give the up axis"
                         : "no ground contact (no points rest on a plane under the body) and the root path does not "
                           "span a plane: no up direction; give the up axis");
        goto done;
    }
    if ((st = ami_cancel(err, 0.7)) != AM_OK) goto done;

    /* forward */
    double f[3] = {0, 0, 0};
    {
        /* mean horizontal velocity: least-squares slope of the path against time */
        double tm = 0.5 * (double)(T - 1), stt = 0, v[3] = {0, 0, 0};
        for (size_t t = 0; t < T; t++) {
            double dt = (double)t - tm, d[3];
            am_vec3_sub(a.path + 3 * t, a.path, d);
            am_vec3_madd(v, dt, d, v);
            stt += dt * dt;
        }
        if (stt > 0) am_vec3_scale(v, 1.0 / stt, v);
        am_vec3_madd(v, -am_vec3_dot(v, u), u, v);
        double travel = am_vec3_norm(v) * (double)(T - 1);
        r->travel = travel;
        bool travels = travel >= 0.5 * a.size;
        if (o->forward == AM_ALIGN_FORWARD_TRAVEL && !travels) {
            st = AM_FAIL(err, AM_E_DEGENERATE,
                         "the root travels %.3g (%.0f %% of the body size), too little for --forward travel; try "
                         "--forward axis",
                         travel, 100.0 * travel / a.size);
            goto done;
        }
        if (travels && o->forward != AM_ALIGN_FORWARD_AXIS) {
            memcpy(f, v, sizeof f);
            ami_normalize(f);
            r->forward_from = AM_ALIGN_FORWARD_TRAVEL;
            r->sign_from = AM_ALIGN_SIGN_TRAVEL;
        } else {
            /* Of the two horizontal principal axes, the lateral one is the normal of the better
             * mirror plane (a bilaterally symmetric body's mirror normal is an eigenvector of its
             * covariance); forward is the other. */
            double major[3], minor[3], em = 0, en = 0;
            ami_body_axes(&a, u, major, minor);
            if ((st = ami_mirror_error(&a, major, &em, err)) != AM_OK) goto done;
            if ((st = ami_mirror_error(&a, minor, &en, err)) != AM_OK) goto done;
            memcpy(f, em <= en ? minor : major, sizeof f);
            r->mirror_ratio = em <= en ? (en > 0 ? em / en : 1.0) : em / en;
            if (r->mirror_ratio > 0.8)
                ami_warn(AM_WARN_DEGRADED,
                         "the body's mirror plane is unclear (mirror errors %.3g and %.3g): forward may be off by "
                         "90 degrees; check the result",
                         em, en);
            r->forward_from = AM_ALIGN_FORWARD_AXIS;
            double gc = ami_gait_corr(&a, u, g, f);
            r->gait_corr = fabs(gc);
            if (fabs(gc) >= 0.15) {
                if (gc < 0) am_vec3_scale(f, -1.0, f);
                r->sign_from = AM_ALIGN_SIGN_GAIT;
            } else {
                double dh = 0;
                if ((st = ami_end_heights(&a, u, f, &dh, err)) != AM_OK) goto done;
                if (dh < 0) am_vec3_scale(f, -1.0, f);
                r->sign_from = AM_ALIGN_SIGN_HEIGHT;
                ami_warn(AM_WARN_DEGRADED,
                         "no travel and no stepping: forward's sign taken from the body's shape (the higher end "
                         "is the head); check the result");
            }
        }
    }
    if ((st = ami_cancel(err, 0.8)) != AM_OK) goto done;

    /* the transform: rows of R are the world axes in input coordinates */
    double xw[3], yw[3];
    am_vec3_scale(f, -1.0, yw);
    am_vec3_cross(u, f, xw);
    ami_normalize(xw);
    am_vec3_cross(u, xw, yw); /* exactly orthonormal: y = z x x = -f */
    double R[9] = {xw[0], xw[1], xw[2], yw[0], yw[1], yw[2], u[0], u[1], u[2]};
    double height = 0, length = 0;
    if ((st = ami_dims(&a, u, g, f, &height, &length, err)) != AM_OK) goto done;
    double s = 1.0;
    if (o->height > 0) {
        if (!(height > 0)) {
            st = AM_FAIL(err, AM_E_DEGENERATE, "the body has no height above the ground to scale by");
            goto done;
        }
        s = o->height / height;
    } else if (o->length > 0) {
        if (!(length > 0)) {
            st = AM_FAIL(err, AM_E_DEGENERATE, "the body has no length along forward to scale by");
            goto done;
        }
        s = o->length / length;
    }
    double c0[3], org[3];
    memcpy(c0, a.path, sizeof c0);
    am_vec3_madd(c0, g - am_vec3_dot(u, c0), u, org);
    double t[3];
    am_mat3_mul_vec3(R, org, t);
    am_vec3_scale(t, -s, t);
    memcpy(r->rotation, R, sizeof R);
    am_quat_from_mat3(R, r->quat);
    if (r->quat[0] < 0)
        for (int k = 0; k < 4; k++) r->quat[k] = -r->quat[k];
    memcpy(r->translation, t, sizeof t);
    r->scale = s;
    am_mat4_identity(r->matrix);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) r->matrix[4 * i + j] = s * R[3 * i + j];
        r->matrix[4 * i + 3] = t[i];
    }
    r->height = s * height;
    r->length = s * length;
    r->ground_rms *= s;
    r->travel *= s;
    double size_out = s * a.size;
    if (size_out > 20.0 || size_out < 0.05)
        ami_warn(AM_WARN_UNITS,
                 "the aligned body is %.3g m across, implausible in metres: give --height or --length in metres",
                 size_out);

    /* the aligned copy */
    am_tracks *out = am_alloc(sizeof *out);
    if (!out) {
        st = AM_FAIL(err, AM_E_NOMEM, "align: tracks");
        goto done;
    }
    r->tracks = out;
    out->frame_count = T;
    out->point_count = N;
    out->fps = tr->fps;
    out->points = am_alloc_array(T * N, 3 * sizeof(float));
    if (tr->visible) out->visible = am_alloc_array(T, N);
    if (tr->face_count) out->faces = am_alloc_array(tr->face_count, 3 * sizeof(int32_t));
    if (!out->points || (tr->visible && !out->visible) || (tr->face_count && !out->faces)) {
        st = AM_FAIL(err, AM_E_NOMEM, "align: tracks");
        goto done;
    }
    if (tr->visible) memcpy(out->visible, tr->visible, T * N);
    if (tr->face_count) {
        memcpy(out->faces, tr->faces, tr->face_count * 3 * sizeof(int32_t));
        out->face_count = tr->face_count;
    }
    for (size_t tt = 0; tt < T; tt++)
        for (size_t n = 0; n < N; n++) {
            float *q = out->points + (tt * N + n) * 3;
            if (!ami_vis(tr, tt, n)) {
                q[0] = q[1] = q[2] = NAN;
                continue;
            }
            double p[3], w[3];
            ami_load(tr, tt, n, p);
            am_mat4_mul_point(r->matrix, p, w);
            for (int k = 0; k < 3; k++) q[k] = (float)w[k];
        }
    ami_stage_end(&stage);
done:
    ami_al_free(&a);
    return st;
}

am_status am_align_run(const am_tracks *tracks, const am_align_opts *opts, am_align_result **out, am_error *err)
{
    assert(tracks && out);
    *out = NULL;
    am_align_opts o = {0};
    if (opts) o = *opts;
    am_scope sc;
    am_scope_enter(&sc, &o.ctx);
    am_align_result *r = am_alloc(sizeof *r);
    am_status st = r ? ami_align(tracks, &o, r, err) : AM_FAIL(err, AM_E_NOMEM, "align result");
    if (st != AM_OK) {
        am_align_result_free(r);
        am_scope_leave(&sc, NULL);
        return st;
    }
    am_scope_leave(&sc, &r->warnings);
    *out = r;
    return AM_OK;
}

void am_align_result_free(am_align_result *r)
{
    if (!r) return;
    am_tracks_free(r->tracks);
    am_warning_list_free(&r->warnings);
    am_free(r);
}
