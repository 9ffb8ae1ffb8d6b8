/* Track2Rig start: the smoothness graph (faces or k nearest neighbours) and the initial bones
 * by rigid-fit clustering of point trajectories with bone splitting.
 *
 * This work is based on:
 * - B. H. Le and Z. Deng, "Robust and Accurate Skeletal Rigging from Mesh Sequences", 2014:
 *   grow the bone set by splitting where the current bones explain the motion worst, and
 *   refine by k-means in which a "centre" is a rigid motion and the distance is how badly it
 *   moves the point's trajectory.
 * The clustering runs on at most AMI_INIT_FRAMES frames and fits each bone on at most
 * AMI_INIT_POINTS points: it only has to start the alternation well.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "decompose_internal.h"
#include "core/internal.h"

#define AMI_INIT_FRAMES 32
#define AMI_INIT_SUBSET 2000 /* points the k-means rounds run on */
#define AMI_INIT_POINTS 1500
#define AMI_KMEANS_ROUNDS 4

/* ---- neighbour graph ---- */

typedef struct {
    double d;
    int32_t i;
} ami_cand;

static int ami_cand_cmp(const void *a, const void *b)
{
    const ami_cand *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d ? 1 : (x->i > y->i) - (x->i < y->i);
}

static int ami_i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* k nearest neighbours of every rest point through a uniform grid, searching rings of cells
 * outwards until the k-th distance is inside the searched radius (exact). */
static am_status ami_knn(ami_dec *d, size_t k, am_error *err)
{
    size_t N = d->N;
    if (k > N - 1) k = N - 1;
    d->nb_off = am_alloc_array(N + 1, sizeof(int32_t));
    d->nb = am_alloc_array(N * (k ? k : 1), sizeof(int32_t));
    AMI_CHECK(err, d->nb_off && d->nb, AM_E_NOMEM, "neighbour graph");
    if (k == 0) return AM_OK;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t n = 0; n < N; n++)
        for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], d->rest[n * 3 + i]), hi[i] = fmax(hi[i], d->rest[n * 3 + i]);
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    /* the finest grid of at most ~4N cells: the box of a rest pose is often long and thin
     * (points hidden in the reference frame start where they were seen, metres away on a walk),
     * and the old diag * sqrt(k / N) cell then held hundreds of points (synthetic quadruped
     * walk: 2,500 distance tests per point at N = 5,000, 8,500 at 20,000; now ~100). The
     * result is exact for any cell size. */
    double h = 0.1 * diag * sqrt((double)k / (double)N);
    if (!(h > 0.0)) h = 1.0;
    size_t dim[3];
    for (;;) {
        for (int i = 0; i < 3; i++) dim[i] = (size_t)((hi[i] - lo[i]) / h) + 1;
        if (dim[0] * dim[1] * dim[2] <= 4 * N + 64) break;
        h *= 1.5;
    }
    size_t cells = dim[0] * dim[1] * dim[2];
    int32_t *start = am_alloc_array(cells + 1, sizeof(int32_t));
    int32_t *items = am_alloc_array(N, sizeof(int32_t));
    size_t *cell_of = am_alloc_array(N, sizeof(size_t));
    ami_cand *cand = am_alloc_array(N, sizeof(ami_cand));
    if (!start || !items || !cell_of || !cand) {
        am_free(start), am_free(items), am_free(cell_of), am_free(cand);
        return AM_FAIL(err, AM_E_NOMEM, "neighbour grid");
    }
    for (size_t n = 0; n < N; n++) {
        size_t c[3];
        for (int i = 0; i < 3; i++) {
            c[i] = (size_t)((d->rest[n * 3 + i] - lo[i]) / h);
            if (c[i] >= dim[i]) c[i] = dim[i] - 1;
        }
        cell_of[n] = (c[2] * dim[1] + c[1]) * dim[0] + c[0];
        start[cell_of[n] + 1]++;
    }
    for (size_t c = 0; c < cells; c++) start[c + 1] += start[c];
    int32_t *fill = am_alloc_array(cells, sizeof(int32_t));
    if (!fill) {
        am_free(start), am_free(items), am_free(cell_of), am_free(cand);
        return AM_FAIL(err, AM_E_NOMEM, "neighbour grid");
    }
    for (size_t n = 0; n < N; n++) items[start[cell_of[n]] + fill[cell_of[n]]++] = (int32_t)n;
    am_free(fill);
    for (size_t n = 0; n < N; n++) {
        const double *p = d->rest + n * 3;
        long c0[3];
        for (int i = 0; i < 3; i++) {
            c0[i] = (long)((p[i] - lo[i]) / h);
            if (c0[i] >= (long)dim[i]) c0[i] = (long)dim[i] - 1;
        }
        size_t nc = 0;
        for (long ring = 0;; ring++) {
            /* add the shell of cells at Chebyshev distance `ring` */
            for (long z = c0[2] - ring; z <= c0[2] + ring; z++) {
                if (z < 0 || z >= (long)dim[2]) continue;
                for (long y = c0[1] - ring; y <= c0[1] + ring; y++) {
                    if (y < 0 || y >= (long)dim[1]) continue;
                    /* inside the shell's y-z faces only its two x ends are new cells */
                    bool face = labs(y - c0[1]) == ring || labs(z - c0[2]) == ring;
                    long xstep = face || ring == 0 ? 1 : 2 * ring;
                    for (long x = c0[0] - ring; x <= c0[0] + ring; x += xstep) {
                        if (x < 0 || x >= (long)dim[0]) continue;
                        size_t c = ((size_t)z * dim[1] + (size_t)y) * dim[0] + (size_t)x;
                        for (int32_t e = start[c]; e < start[c + 1]; e++) {
                            size_t m = (size_t)items[e];
                            if (m == n) continue;
                            const double *q = d->rest + m * 3;
                            double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
                            double dd = dx * dx + dy * dy + dz * dz;
                            /* insertion into the sorted best-k list (ties by index) */
                            if (nc == k && !(dd < cand[k - 1].d ||
                                             (dd == cand[k - 1].d && (int32_t)m < cand[k - 1].i)))
                                continue;
                            size_t pos = nc < k ? nc++ : k - 1;
                            while (pos > 0 && (cand[pos - 1].d > dd ||
                                               (cand[pos - 1].d == dd && cand[pos - 1].i > (int32_t)m))) {
                                cand[pos] = cand[pos - 1];
                                pos--;
                            }
                            cand[pos].d = dd;
                            cand[pos].i = (int32_t)m;
                        }
                    }
                }
            }
            bool covered = ring >= (long)dim[0] && ring >= (long)dim[1] && ring >= (long)dim[2];
            if (nc >= k) {
                double r = (double)ring * h;
                if (covered || cand[k - 1].d <= r * r) break;
            } else if (covered) {
                break;
            }
        }
        size_t take = nc < k ? nc : k;
        d->nb_off[n + 1] = d->nb_off[n] + (int32_t)take;
        for (size_t j = 0; j < take; j++) d->nb[(size_t)d->nb_off[n] + j] = cand[j].i;
    }
    am_free(start), am_free(items), am_free(cell_of), am_free(cand);
    return AM_OK;
}

/* Face edges as the graph (each edge both ways, duplicates removed). */
static am_status ami_face_graph(ami_dec *d, const int32_t *faces, size_t F, am_error *err)
{
    size_t N = d->N;
    d->nb_off = am_alloc_array(N + 1, sizeof(int32_t));
    int32_t *deg = am_alloc_array(N + 1, sizeof(int32_t));
    int32_t *tmp = am_alloc_array(F * 6 + 1, sizeof(int32_t));
    if (!d->nb_off || !deg || !tmp) {
        am_free(deg), am_free(tmp);
        return AM_FAIL(err, AM_E_NOMEM, "face graph");
    }
    for (size_t f = 0; f < F; f++)
        for (int e = 0; e < 3; e++) deg[faces[f * 3 + e]] += 2;
    int32_t *off = am_alloc_array(N + 1, sizeof(int32_t));
    if (!off) {
        am_free(deg), am_free(tmp);
        return AM_FAIL(err, AM_E_NOMEM, "face graph");
    }
    for (size_t n = 0; n < N; n++) off[n + 1] = off[n] + deg[n];
    memset(deg, 0, sizeof(int32_t) * (N + 1));
    for (size_t f = 0; f < F; f++) {
        for (int e = 0; e < 3; e++) {
            int32_t a = faces[f * 3 + e], b = faces[f * 3 + (e + 1) % 3], c = faces[f * 3 + (e + 2) % 3];
            tmp[off[a] + deg[a]++] = b;
            tmp[off[a] + deg[a]++] = c;
        }
    }
    size_t total = 0;
    for (size_t n = 0; n < N; n++) {
        int32_t *row = tmp + off[n];
        qsort(row, (size_t)deg[n], sizeof(int32_t), ami_i32_cmp);
        int32_t u = 0;
        for (int32_t i = 0; i < deg[n]; i++)
            if ((i == 0 || row[i] != row[i - 1]) && (size_t)row[i] != n) row[u++] = row[i];
        deg[n] = u;
        total += (size_t)u;
    }
    d->nb = am_alloc_array(total + 1, sizeof(int32_t));
    if (!d->nb) {
        am_free(deg), am_free(tmp), am_free(off);
        return AM_FAIL(err, AM_E_NOMEM, "face graph");
    }
    for (size_t n = 0; n < N; n++) {
        d->nb_off[n + 1] = d->nb_off[n] + deg[n];
        memcpy(d->nb + d->nb_off[n], tmp + off[n], sizeof(int32_t) * (size_t)deg[n]);
    }
    am_free(deg), am_free(tmp), am_free(off);
    return AM_OK;
}

am_status ami_dec_graph(ami_dec *d, const int32_t *faces, size_t face_count, size_t knn, am_error *err)
{
    if (faces && face_count) return ami_face_graph(d, faces, face_count, err);
    return ami_knn(d, knn, err);
}

/* ---- rigid-fit clustering ---- */

typedef struct {
    ami_dec *d;
    size_t nf;
    size_t frames[AMI_INIT_FRAMES];
    double *Gs;        /* [nf][bs][12] */
    size_t bs;         /* bone stride of Gs: the target bone count */
    int32_t *assign;   /* [N] */
    double *perr;      /* [N] error under the assigned bone (NaN: never visible in the subset) */
    double *p, *q;     /* Kabsch buffers [AMI_INIT_POINTS][3] */
    size_t stride;     /* k-means rounds use points n % stride == 0 */
    size_t fstep;      /* point errors use every fstep-th subset frame */
    size_t cap;        /* points per Kabsch fit */
    /* the subset frames' observations frame-major, [nf][N][3] and [nf][N] (1 = seen): every
     * fit reads one frame of many points, which point-major data spreads over a cache line
     * per point. Lives in the pseudo-observation buffer, unused until the alternation. */
    const float *gobs;
    const uint8_t *gvis;
} ami_clu;

/* Fit a bone from the given member list (strided to c->cap points), with point n's position
 * at obs[n * ostride * 3] and its visibility at vis[n * vstride]. */
static bool ami_fit_at(ami_clu *c, const int32_t *members, size_t count, const float *obs, size_t ostride,
                       const uint8_t *vis, size_t vstride, double *G)
{
    ami_dec *d = c->d;
    size_t seen = 0;
    for (size_t i = 0; i < count; i++) seen += vis[(size_t)members[i] * vstride] != 0;
    if (seen < 3) return false;
    size_t stride = (seen + c->cap - 1) / c->cap, m = 0, s = 0;
    for (size_t i = 0; i < count && m < c->cap; i++) {
        size_t n = (size_t)members[i];
        if (!vis[n * vstride]) continue;
        if (s++ % stride) continue;
        memcpy(c->p + m * 3, d->rest + n * 3, 3 * sizeof(double));
        const float *o = obs + n * ostride * 3;
        c->q[m * 3] = o[0], c->q[m * 3 + 1] = o[1], c->q[m * 3 + 2] = o[2];
        m++;
    }
    double R[9], tr[3];
    am_kabsch(c->p, c->q, NULL, m, R, tr);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) G[i * 4 + j] = R[i * 3 + j];
        G[i * 4 + 3] = tr[i];
    }
    return true;
}

/* at frame t of the clip */
static bool ami_fit(ami_clu *c, const int32_t *members, size_t count, size_t t, double *G)
{
    ami_dec *d = c->d;
    return ami_fit_at(c, members, count, d->obs + t * 3, d->T, d->vis + t, d->T, G);
}

/* at subset frame f */
static bool ami_fit_sub(ami_clu *c, const int32_t *members, size_t count, size_t f, double *G)
{
    size_t N = c->d->N;
    return ami_fit_at(c, members, count, c->gobs + f * N * 3, 1, c->gvis + f * N, 1, G);
}

/* Sum of the distances over the point's visible subset frames (a mean once divided by their
 * count, which does not depend on the bone). Stops early, returning a value > bound, once the
 * partial sum exceeds bound: the terms are >= 0, so the full sum could not be below it. */
static double ami_point_err_sum(const ami_clu *c, size_t n, size_t k, double bound)
{
    ami_dec *d = c->d;
    size_t N = d->N;
    double s = 0.0;
    const double *r = d->rest + n * 3;
    for (size_t f = 0; f < c->nf; f += c->fstep) {
        if (!c->gvis[f * N + n]) continue;
        double v[3];
        am_mat34_apply(c->Gs + (f * c->bs + k) * 12, r, v);
        const float *o = c->gobs + (f * N + n) * 3;
        s += sqrt((v[0] - o[0]) * (v[0] - o[0]) + (v[1] - o[1]) * (v[1] - o[1]) + (v[2] - o[2]) * (v[2] - o[2]));
        if (s > bound) return s;
    }
    return s;
}

/* Refit every bone on its members over the subset frames. members: scratch [N]. */
static void ami_refit(ami_clu *c, size_t B, int32_t *members)
{
    ami_dec *d = c->d;
    for (size_t k = 0; k < B; k++) {
        size_t cnt = 0;
        for (size_t n = 0; n < d->N; n += c->stride)
            if (c->assign[n] == (int32_t)k) members[cnt++] = (int32_t)n;
        for (size_t f = 0; f < c->nf; f++) ami_fit_sub(c, members, cnt, f, c->Gs + (f * c->bs + k) * 12);
    }
}

static double ami_assign(ami_clu *c, size_t B, size_t stride)
{
    ami_dec *d = c->d;
    double sum = 0.0;
    size_t cnt = 0;
    for (size_t n = 0; n < d->N; n += stride) {
        size_t seen = 0;
        for (size_t f = 0; f < c->nf; f += c->fstep) seen += c->gvis[f * d->N + n];
        if (!seen) { /* never visible in the subset: keeps its bone, if that bone still exists
                      * (auto may pick fewer bones than the largest clustering had) */
            if (c->assign[n] < 0 || (size_t)c->assign[n] >= B) c->assign[n] = 0;
            c->perr[n] = NAN;
            continue;
        }
        /* the point's current bone first: its sum bounds the others', most stop early. The
         * result is the first bone of smallest mean, as with a plain scan over k. */
        int32_t bk = c->assign[n];
        double bs = INFINITY;
        if (bk >= 0 && (size_t)bk < B) bs = ami_point_err_sum(c, n, (size_t)bk, INFINITY);
        for (size_t k = 0; k < B; k++) {
            if ((int32_t)k == bk) continue;
            /* the margin keeps a stopped sum's mean strictly above the best one after rounding */
            double s = ami_point_err_sum(c, n, k, bs * (1.0 + 0x1p-40));
            /* equal means: the lower index wins, as with the scan */
            if (s / (double)seen < bs / (double)seen || (s / (double)seen == bs / (double)seen && (int32_t)k < bk))
                bs = s, bk = (int32_t)k;
        }
        double best = bs / (double)seen;
        c->assign[n] = bk;
        c->perr[n] = isfinite(best) ? best : NAN;
        if (isfinite(best)) sum += best, cnt++;
    }
    return cnt ? sum / (double)cnt : 0.0;
}

/* Every point's best error on a few frames: what steers the next split. */
static void ami_coarse_err(ami_clu *c, size_t B)
{
    c->fstep = 4;
    ami_assign(c, B, 1);
    c->fstep = 1;
}

/* Split (bisection): the cluster with the largest total error is cut in two around its
 * worst point (neighbourhood-averaged error, so one bad track cannot attract it): the half of
 * its members nearest to that point in the rest pose seeds bone `nb`, the other half refits
 * the old bone. Halving never leaves a degenerate sliver, unlike seeding from a small ball. */
static void ami_split(ami_clu *c, size_t B, size_t nb, int32_t *members, ami_cand *dist)
{
    ami_dec *d = c->d;
    size_t N = d->N;
    double tot[AMI_MAXB] = {0};
    size_t cnt[AMI_MAXB] = {0};
    for (size_t n = 0; n < N; n++) {
        if (c->assign[n] < 0 || (size_t)c->assign[n] >= B) continue;
        cnt[c->assign[n]]++;
        if (isfinite(c->perr[n])) tot[c->assign[n]] += c->perr[n];
    }
    size_t ck = 0;
    for (size_t k = 1; k < B; k++)
        if (cnt[k] >= 6 && (cnt[ck] < 6 || tot[k] > tot[ck])) ck = k;
    size_t seed = SIZE_MAX;
    double best = -1.0;
    for (size_t n = 0; n < N; n++) {
        if (c->assign[n] != (int32_t)ck || !isfinite(c->perr[n])) continue;
        double sm = c->perr[n];
        size_t nn = 1;
        for (int32_t e = d->nb_off[n]; e < d->nb_off[n + 1]; e++) {
            double v = c->perr[d->nb[e]];
            if (isfinite(v)) sm += v, nn++;
        }
        sm /= (double)nn;
        if (sm > best) best = sm, seed = n;
    }
    if (seed == SIZE_MAX) return;
    size_t m = 0;
    for (size_t n = 0; n < N; n++) {
        if (c->assign[n] != (int32_t)ck) continue;
        double dx = d->rest[n * 3] - d->rest[seed * 3], dy = d->rest[n * 3 + 1] - d->rest[seed * 3 + 1],
               dz = d->rest[n * 3 + 2] - d->rest[seed * 3 + 2];
        dist[m].d = dx * dx + dy * dy + dz * dz;
        dist[m].i = (int32_t)n;
        m++;
    }
    qsort(dist, m, sizeof *dist, ami_cand_cmp);
    size_t half = m / 2 ? m / 2 : 1;
    for (size_t i = 0; i < m; i++) {
        members[i] = dist[i].i;
        c->assign[dist[i].i] = i < half ? (int32_t)nb : (int32_t)ck;
    }
    for (size_t f = 0; f < c->nf; f++) {
        double *G = c->Gs + (f * c->bs + nb) * 12;
        if (!ami_fit_sub(c, members, half, f, G)) /* too few seen: start as the old bone */
            memcpy(G, c->Gs + (f * c->bs + ck) * 12, 12 * sizeof(double));
        if (m > half) ami_fit_sub(c, members + half, m - half, f, c->Gs + (f * c->bs + ck) * 12);
    }
}

am_status ami_dec_init(ami_dec *d, size_t bones, size_t max_bones, double noise_pct, double **auto_err,
                       size_t *auto_count, size_t *chosen, am_error *err)
{
    size_t N = d->N, T = d->T;
    size_t target = bones ? bones : max_bones;
    if (target > N) target = N;
    if (target > AMI_MAXB) target = AMI_MAXB;
    if (target > d->bcap) target = d->bcap; /* the same cap: the buffers were sized for it */
    ami_clu c = {0};
    c.d = d;
    c.cap = AMI_INIT_POINTS;
    c.nf = T < AMI_INIT_FRAMES ? T : AMI_INIT_FRAMES;
    for (size_t f = 0; f < c.nf; f++) c.frames[f] = c.nf == T ? f : (f * (T - 1)) / (c.nf - 1);
    c.bs = target;
    c.Gs = am_alloc_array(c.nf * c.bs * 12, sizeof(double));
    c.assign = am_alloc_array(N, sizeof(int32_t));
    c.perr = am_alloc_array(N, sizeof(double));
    c.p = am_alloc_array(AMI_INIT_POINTS * 3, sizeof(double));
    c.q = am_alloc_array(AMI_INIT_POINTS * 3, sizeof(double));
    int32_t *members = am_alloc_array(N, sizeof(int32_t));
    ami_cand *dist = am_alloc_array(N, sizeof(ami_cand));
    double *snap = am_alloc_array(c.nf * c.bs * 12 * target, sizeof(double)); /* Gs per B */
    double *curve = am_alloc_array(target + 1, sizeof(double));
    /* both methods cluster on the visible entries only */
    float *gobs = d->pstar; /* [nf][N][3] <= [N][T][3]: the buffer is free until the alternation */
    uint8_t *gvis = NULL, *gvis_own = NULL;
    if (13 * c.nf <= 12 * T) /* the flags fit behind the positions */
        gvis = (uint8_t *)(gobs + c.nf * N * 3);
    else
        gvis = gvis_own = am_alloc_array(c.nf * N, 1);
    am_status st = AM_OK;
    if (!c.Gs || !c.assign || !c.perr || !c.p || !c.q || !members || !dist || !snap || !curve || !gvis) {
        st = AM_FAIL(err, AM_E_NOMEM, "clustering");
        goto done;
    }
    for (size_t n = 0; n < N; n++)
        for (size_t f = 0; f < c.nf; f++) {
            size_t t = c.frames[f];
            memcpy(gobs + (f * N + n) * 3, d->obs + (n * T + t) * 3, 3 * sizeof(float));
            gvis[f * N + n] = d->vis[n * T + t];
        }
    c.gobs = gobs;
    c.gvis = gvis;
    c.stride = N > AMI_INIT_SUBSET ? (N + AMI_INIT_SUBSET - 1) / AMI_INIT_SUBSET : 1;
    c.fstep = 1;
    ami_refit(&c, 1, members);
    ami_assign(&c, 1, 1);
    {
        double s = 0.0;
        size_t cnt = 0;
        for (size_t n = 0; n < N; n++)
            if (isfinite(c.perr[n])) s += c.perr[n], cnt++;
        curve[0] = cnt ? 100.0 * s / (double)cnt / d->body : 0.0;
    }
    memcpy(snap, c.Gs, sizeof(double) * c.nf * c.bs * 12);
    size_t B = 1;
    while (B < target) {
        ami_split(&c, B, B, members, dist);
        B++;
        double e = 0.0;
        for (int round = 0; round < AMI_KMEANS_ROUNDS; round++) {
            e = ami_assign(&c, B, c.stride);
            /* a bone that lost every point is re-seeded where the error is worst */
            for (size_t k = 0; k < B; k++) {
                size_t cnt = 0;
                for (size_t n = 0; n < N; n += c.stride) cnt += c.assign[n] == (int32_t)k;
                if (cnt == 0) ami_split(&c, B, k, members, dist);
            }
            ami_refit(&c, B, members);
        }
        e = ami_assign(&c, B, c.stride);
        curve[B - 1] = 100.0 * e / d->body;
        memcpy(snap + (B - 1) * c.nf * c.bs * 12, c.Gs, sizeof(double) * c.nf * c.bs * 12);
        if (B < target) ami_coarse_err(&c, B);
    }
    size_t pick = B;
    if (!bones) {
        pick = ami_dec_auto_pick(curve, B, noise_pct, N);
        *auto_err = curve;
        *auto_count = B;
        curve = NULL;
    }
    memcpy(c.Gs, snap + (pick - 1) * c.nf * c.bs * 12, sizeof(double) * c.nf * c.bs * 12);
    ami_assign(&c, pick, 1);
    /* transforms for every frame from the chosen clustering: a start only (the alternation
     * refines them), so a few hundred points per fit are enough */
    c.cap = 256;
    for (size_t k = 0; k < pick; k++) {
        size_t cnt = 0;
        for (size_t n = 0; n < N; n++)
            if (c.assign[n] == (int32_t)k) members[cnt++] = (int32_t)n;
        size_t last = SIZE_MAX;
        for (size_t t = 0; t < T; t++) {
            double *G = d->G + (t * d->gs + k) * 12;
            if (ami_fit(&c, members, cnt, t, G)) {
                if (last == SIZE_MAX)
                    for (size_t u = 0; u < t; u++) memcpy(d->G + (u * d->gs + k) * 12, G, 12 * sizeof(double));
                last = t;
            } else if (last != SIZE_MAX) {
                memcpy(G, d->G + (last * d->gs + k) * 12, 12 * sizeof(double));
            }
        }
        if (last == SIZE_MAX)
            for (size_t t = 0; t < T; t++) {
                double *G = d->G + (t * d->gs + k) * 12;
                memset(G, 0, 12 * sizeof(double));
                G[0] = G[5] = G[10] = 1.0;
            }
    }
    for (size_t n = 0; n < N; n++) {
        for (int k = 0; k < AMI_K; k++) d->idx[n * AMI_K + k] = c.assign[n], d->w[n * AMI_K + k] = 0.0;
        d->w[n * AMI_K] = 1.0;
    }
    *chosen = pick;
done:
    am_free(c.Gs), am_free(c.assign), am_free(c.perr), am_free(c.p), am_free(c.q);
    am_free(members), am_free(dist), am_free(snap), am_free(curve), am_free(gvis_own);
    return st;
}
