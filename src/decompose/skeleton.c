/* Track2Rig skeleton: joints where neighbouring bones pivot, a minimum spanning tree over
 * joint cost, a central root, and the articulated refit (children rotate about their joint,
 * only the root translates), then the rig + motion that reproduce the refit transforms.
 *
 * This work is based on:
 * - B. H. Le and Z. Deng, "Robust and Accurate Skeletal Rigging from Mesh Sequences", 2014:
 *   the joint of bones i and j is the point that moves rigidly with both,
 *   argmin_c sum_t |G_it c - G_jt c|^2, regularised towards the points the two bones share
 *   (a hinge fixes only an axis); the tree is a minimum spanning tree of the joint costs.
 * - R. C. Prim, "Shortest connection networks", 1957.
 * The pivot's normal equations come from the frame sums S, U, C of ssdr.c in O(1) per pair.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "decompose_internal.h"
#include "core/internal.h"

#define AMI_NONADJ_COST 10.0 /* in body sizes: bones that share no points join only if forced */

typedef struct {
    double pivot[AMI_MAXB][AMI_MAXB][3];
    double cost[AMI_MAXB][AMI_MAXB];
    double adj[AMI_MAXB][AMI_MAXB];
    double bnd[AMI_MAXB][AMI_MAXB][4]; /* weighted boundary centroid sum + weight */
    double cen[AMI_MAXB][4];           /* dominant-point centroid sum + count */
    double wcen[AMI_MAXB][4];          /* weighted centroid sum + weight */
} ami_skel;

/* Where bone k's points are: the centroid of the points it dominates, or, for a bone that
 * dominates none (it only blends), of the points it influences by weight. (A bone without
 * dominant points used to get its leaf tip at the world origin.) */
static void ami_bone_centroid(const ami_skel *s, size_t k, double out[3])
{
    const double *c = s->cen[k][3] > 0.0 ? s->cen[k] : s->wcen[k];
    for (int a = 0; a < 3; a++) out[a] = c[3] > 0.0 ? c[a] / c[3] : 0.0;
}

static void ami_pivot(const ami_dec *d, ami_skel *s, size_t i, size_t j)
{
    size_t T = d->T;
    const double *Sij = d->S + (i * AMI_MAXB + j) * 9, *Sji = d->S + (j * AMI_MAXB + i) * 9;
    double A[9], g[3];
    for (int a = 0; a < 9; a++) A[a] = -Sij[a] - Sji[a];
    A[0] += 2.0 * (double)T, A[4] += 2.0 * (double)T, A[8] += 2.0 * (double)T;
    const double *Uii = d->U + (i * AMI_MAXB + i) * 3, *Uij = d->U + (i * AMI_MAXB + j) * 3,
                 *Uji = d->U + (j * AMI_MAXB + i) * 3, *Ujj = d->U + (j * AMI_MAXB + j) * 3;
    for (int a = 0; a < 3; a++) g[a] = Uii[a] - Uij[a] - Uji[a] + Ujj[a];
    double ee = d->C[i * AMI_MAXB + i] - 2.0 * d->C[i * AMI_MAXB + j] + d->C[j * AMI_MAXB + j];
    double m[3];
    if (s->bnd[i][j][3] > 0.0) {
        for (int a = 0; a < 3; a++) m[a] = s->bnd[i][j][a] / s->bnd[i][j][3];
    } else { /* no shared points: between the two centroids */
        double ci[3], cj[3];
        ami_bone_centroid(s, i, ci);
        ami_bone_centroid(s, j, cj);
        for (int a = 0; a < 3; a++) m[a] = 0.5 * (ci[a] + cj[a]);
    }
    /* regularise towards the shared points: along a hinge axis the data says nothing */
    /* A ~ sum_t theta_t^2 (I - a a^T) for a relative rotation theta about axis a: relative
     * motion below ~0.1 rad says little about where the pivot is, so the prior weighs as
     * much as 0.1 rad of rotation in every frame. */
    double mu = 1e-2 * (double)T + 1e-2 * (A[0] + A[4] + A[8]) / 3.0;
    double Ar[9], Ai[9], rhs[3], c[3];
    memcpy(Ar, A, sizeof Ar);
    Ar[0] += mu, Ar[4] += mu, Ar[8] += mu;
    for (int a = 0; a < 3; a++) rhs[a] = -g[a] + mu * m[a];
    if (am_mat3_inverse(Ar, Ai)) {
        am_mat3_mul_vec3(Ai, rhs, c);
    } else {
        memcpy(c, m, sizeof c);
    }
    double Ac[3];
    am_mat3_mul_vec3(A, c, Ac);
    double res = am_vec3_dot(c, Ac) + 2.0 * am_vec3_dot(c, g) + ee;
    double rms = sqrt(fmax(res, 0.0) / (double)T);
    double off = am_vec3_dist(c, m);
    /* ours: when even the best point does not move rigidly with both bones (residual well
     * above the fit's median point residual), the pair is weak evidence of a pivot and the
     * least-squares point can land far outside the body. The data term then gets the Cauchy
     * weight 1 / (1 + (rms / 3 median)^2) of the track weights, i.e. the prior weighs
     * (1 + (rms / 3 median)^2) times more. The tree cost keeps the unweighted rms and offset:
     * this moves where a joint sits, not which bones are joined. Not on data the polish judged
     * clean (polish.c): there the residual is the fit's own error, not noise, and the
     * unweighted pivot is the better joint (glTF dev clips: joints 3.25 -> 2.80 %). */
    if (d->robust && !d->plain && d->med_res > 0.0) {
        double r = rms / (3.0 * d->med_res), mu2 = mu * (1.0 + r * r);
        memcpy(Ar, A, sizeof Ar);
        Ar[0] += mu2, Ar[4] += mu2, Ar[8] += mu2;
        for (int a = 0; a < 3; a++) rhs[a] = -g[a] + mu2 * m[a];
        if (am_mat3_inverse(Ar, Ai)) am_mat3_mul_vec3(Ai, rhs, c);
    }
    memcpy(s->pivot[i][j], c, sizeof c);
    memcpy(s->pivot[j][i], c, sizeof c);
    double cost = (rms + 0.1 * off) / d->body;
    if (!(s->adj[i][j] > 0.0)) cost += AMI_NONADJ_COST;
    s->cost[i][j] = s->cost[j][i] = cost;
}

static am_status ami_build_rig(ami_dec *d, const int32_t *order, const int32_t *par, const double *head,
                               const uint8_t *loc, const ami_skel *s, am_rig **out, am_error *err)
{
    size_t B = d->B;
    /* names in rig order; joints: one head per bone, plus tips for bones without a child to
     * point at */
    char bname[AMI_MAXB][32], jname[2 * AMI_MAXB][40];
    const char *bn[AMI_MAXB], *bh[AMI_MAXB], *bt[AMI_MAXB], *bp[AMI_MAXB], *jn[2 * AMI_MAXB];
    double jp[2 * AMI_MAXB][3];
    size_t J = 0;
    int32_t rig_of[AMI_MAXB];
    for (size_t i = 0; i < B; i++) rig_of[order[i]] = (int32_t)i;
    for (size_t i = 0; i < B; i++) {
        snprintf(bname[i], sizeof bname[i], "bone%02zu", i);
        bn[i] = bname[i];
    }
    size_t head_j[AMI_MAXB];
    for (size_t i = 0; i < B; i++) {
        size_t k = (size_t)order[i];
        if (par[k] < 0)
            snprintf(jname[J], sizeof jname[J], "root");
        else
            snprintf(jname[J], sizeof jname[J], "j_bone%02zu", i);
        memcpy(jp[J], head + k * 3, sizeof jp[J]);
        head_j[i] = J++;
    }
    for (size_t i = 0; i < B; i++) {
        size_t k = (size_t)order[i];
        bh[i] = jname[head_j[i]];
        bp[i] = par[k] < 0 ? NULL : bn[rig_of[par[k]]];
        /* tail: the farthest child joint, else a tip at the centroid of the bone's own points
         * (not twice as far, as before: a leaf cluster's points surround its end, so the
         * doubled tip overshot the true leaf joints; mean joint error on the baked real
         * models -17% for both methods, synthetic clips no worse) */
        double best = 1e-3 * d->body;
        size_t tj = SIZE_MAX, tc = SIZE_MAX;
        for (size_t c = 0; c < B; c++) {
            if (par[c] != (int32_t)k) continue;
            double dd = am_vec3_dist(head + c * 3, head + k * 3);
            if (dd > best) best = dd, tj = head_j[rig_of[c]], tc = c;
        }
        if (tj != SIZE_MAX && loc[tc]) {
            /* a child that translates leaves the parent's end: the parent gets its own tail
             * joint there (SPEC 2.3 reads a joint from the bone ending at it, so a shared one
             * would show the parent's end, not where the sliding child's head is) */
            snprintf(jname[J], sizeof jname[J], "end_bone%02zu", i);
            memcpy(jp[J], head + tc * 3, sizeof jp[J]);
            tj = J++;
        }
        if (tj == SIZE_MAX) {
            double cen[3], dir[3], len;
            ami_bone_centroid(s, k, cen);
            am_vec3_sub(cen, head + k * 3, dir);
            len = am_vec3_normalize(dir, dir);
            /* ours: a short leaf keeps its short tip towards its points (the fixed 0.1 body
             * sizes "up" put the tips of small leaves far from any joint: real-model joint
             * error -1.7%, synthetic unchanged); the baseline keeps the old rule */
            if (len < (d->robust ? 1e-4 : 0.02) * d->body) { /* centred on its joint: point up by a small length */
                dir[0] = 0, dir[1] = 0, dir[2] = 1;
                len = 0.1 * d->body;
            }
            snprintf(jname[J], sizeof jname[J], "tip_bone%02zu", i);
            am_vec3_madd(head + k * 3, len, dir, jp[J]);
            tj = J++;
        }
        bt[i] = jname[tj];
    }
    for (size_t j = 0; j < J; j++) jn[j] = jname[j];
    am_rig_desc desc = {0};
    desc.joint_count = J;
    desc.joint_names = jn;
    desc.joint_pos = &jp[0][0];
    desc.bone_count = B;
    desc.bone_names = bn;
    desc.bone_head = bh;
    desc.bone_tail = bt;
    desc.bone_parent = bp;
    desc.extra_json = "{\"name\": \"track2rig\"}";
    desc.source = "track2rig";
    return am_rig_build(&desc, out, err);
}

/* AM_RIG_AUTO: greedy backward elimination from the free bones (every bone translating, the
 * free-bone error). Pin (take the channels from) the translating bone whose channels are
 * worth least (ami_dec_loc_gain, re-ranked after each pin: pinning a parent changes what its
 * children need), refit the transforms with the weights fixed (F and H stay valid), measure
 * the visible error; a pin that takes it over lim is undone and that bone keeps its
 * channels. Ends when AMI_LOC_MISSES pins in a row failed or every bone is pinned: what is
 * left is the fewest channels greedy finds within lim. Then the rig is settled (transforms,
 * then the weights they imply) and, if the pass pinned any bone, another pass runs (at most
 * AMI_LOC_PASSES). Pins are judged before the settle, which only lowers the fit's objective,
 * so the result stays within lim up to the robust weighting. Starting from the free bones, not from the articulated refit,
 * matters: adding channels to an articulated fit leaves it in the articulated fit's basin
 * (the Dem Bones sample at 10 bones: every bone translating and still 3x the free error). */
#define AMI_LOC_MISSES 2
#define AMI_LOC_PASSES 3
static am_status ami_choose_loc(ami_dec *d, double lim, size_t rounds, uint8_t *loc, am_error *err)
{
    size_t B = d->B, n = d->T * d->gs * 12;
    double *snap = am_alloc_array(n, sizeof(double));
    AMI_CHECK(err, snap, AM_E_NOMEM, "translation choice (%zu transforms)", d->T * B);
    double gain[AMI_MAXB];
    size_t pinned = 0, settled = 0;
    am_status st = AM_OK;
    /* passes: after a settle the weights fit the pinned rig, and a bone refused with the free
     * bones' weights may now pin (a walk at 8 bones: 1 channel left after one pass, although
     * the articulated rig was already within the tolerance) */
    for (size_t pass = 0; pass < AMI_LOC_PASSES && st == AM_OK; pass++) {
        uint8_t tried[AMI_MAXB] = {0};
        size_t misses = 0, now = 0;
        while (misses < AMI_LOC_MISSES) {
            if (!ami_progress("rig: skeleton", (double)pinned / (double)B)) {
                st = AM_FAIL(err, AM_E_CANCELLED, "translation choice stopped after %zu pinned bones", pinned);
                break;
            }
            ami_dec_loc_gain(d, gain);
            size_t best = SIZE_MAX;
            for (size_t k = 0; k < B; k++)
                if (loc[k] && !tried[k] && (best == SIZE_MAX || gain[k] < gain[best])) best = k;
            if (best == SIZE_MAX) break;
            tried[best] = 1;
            memcpy(snap, d->G, n * sizeof(double));
            loc[best] = 0;
            ami_dec_pass_articulated(d, 2);
            d->f_ready = true; /* weights unchanged: F and H still hold their sums */
            double e = 100.0 * ami_dec_error_visible(d, d->G) / d->body;
            if (e > lim) {
                loc[best] = 1;
                memcpy(d->G, snap, n * sizeof(double));
                misses++;
            } else {
                pinned++, now++;
                misses = 0;
            }
        }
        if (st != AM_OK || !now) break;
        /* settle the rig chosen so far: transforms, then the weights they imply */
        ami_dec_pass_articulated(d, 4);
        ami_dec_pass_weights(d, d->robust, true, d->rest_update);
        settled++;
    }
    am_free(snap);
    /* a rig with pinned bones gets as many settling rounds as the articulated refit (a snake
     * pinned everywhere after one settle: 0.610% vs the articulated refit's 0.594%) */
    for (; st == AM_OK && pinned && settled < rounds; settled++) {
        if (!ami_progress("rig: skeleton", 0.99)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "rig settling stopped at round %zu", settled);
            break;
        }
        ami_dec_pass_articulated(d, 4);
        ami_dec_pass_weights(d, d->robust, true, d->rest_update);
    }
    return st;
}

static am_status ami_dec_skeleton_with(ami_dec *d, size_t refit_rounds, am_rig_mode mode,
                                       double err_free, am_decomposition *out, ami_skel *s, am_error *err)
{
    size_t B = d->B, N = d->N, T = d->T;
    for (size_t n = 0; n < N; n++) {
        const int32_t *ix = d->idx + n * AMI_K;
        const double *w = d->w + n * AMI_K, *r = d->rest + n * 3;
        int dom = 0;
        for (int a = 1; a < AMI_K; a++)
            if (w[a] > w[dom]) dom = a;
        double *cn = s->cen[ix[dom]];
        cn[0] += r[0], cn[1] += r[1], cn[2] += r[2], cn[3] += 1.0;
        for (int a = 0; a < AMI_K; a++) {
            if (!(w[a] > 0.0)) continue;
            double *wc = s->wcen[ix[a]];
            wc[0] += w[a] * r[0], wc[1] += w[a] * r[1], wc[2] += w[a] * r[2], wc[3] += w[a];
        }
        for (int a = 0; a < AMI_K; a++)
            for (int b = 0; b < AMI_K; b++) {
                if (a == b || !(w[a] > 0.05) || !(w[b] > 0.05)) continue;
                double m = fmin(w[a], w[b]);
                double *bd = s->bnd[ix[a]][ix[b]];
                bd[0] += m * r[0], bd[1] += m * r[1], bd[2] += m * r[2], bd[3] += m;
                s->adj[ix[a]][ix[b]] += m;
            }
        /* graph edges across a dominant-bone boundary also make bones neighbours */
        for (int32_t e = d->nb_off[n]; e < d->nb_off[n + 1]; e++) {
            size_t o = (size_t)d->nb[e];
            const double *wo = d->w + o * AMI_K;
            int od = 0;
            for (int a = 1; a < AMI_K; a++)
                if (wo[a] > wo[od]) od = a;
            int32_t bi = ix[dom], bj = d->idx[o * AMI_K + od];
            if (bi == bj) continue;
            double *bd = s->bnd[bi][bj];
            for (int a = 0; a < 3; a++) bd[a] += 0.25 * (r[a] + d->rest[o * 3 + a]);
            bd[3] += 0.5;
            s->adj[bi][bj] += 0.5;
        }
    }
    ami_dec_stats(d);
    for (size_t i = 0; i < B; i++)
        for (size_t j = i + 1; j < B; j++) {
            double a = s->adj[i][j] + s->adj[j][i];
            s->adj[i][j] = s->adj[j][i] = a;
            for (int c = 0; c < 4; c++) {
                double v = s->bnd[i][j][c] + s->bnd[j][i][c];
                s->bnd[i][j][c] = s->bnd[j][i][c] = v;
            }
            ami_pivot(d, s, i, j);
        }
    /* Prim's minimum spanning tree */
    int32_t tpar[AMI_MAXB];
    bool in[AMI_MAXB] = {false};
    double key[AMI_MAXB];
    for (size_t i = 0; i < B; i++) key[i] = INFINITY, tpar[i] = -1;
    key[0] = 0.0;
    for (size_t it = 0; it < B; it++) {
        size_t u = SIZE_MAX;
        for (size_t i = 0; i < B; i++)
            if (!in[i] && (u == SIZE_MAX || key[i] < key[u])) u = i;
        in[u] = true;
        for (size_t v = 0; v < B; v++)
            if (!in[v] && s->cost[u][v] < key[v]) key[v] = s->cost[u][v], tpar[v] = (int32_t)u;
    }
    /* root: the tree centre (least eccentricity in hops), ties to the bone with most points */
    size_t root = 0;
    int best_ecc = 1 << 30;
    for (size_t r = 0; r < B; r++) {
        int dist[AMI_MAXB];
        for (size_t i = 0; i < B; i++) dist[i] = -1;
        int32_t queue[AMI_MAXB];
        size_t qh = 0, qt = 0;
        queue[qt++] = (int32_t)r;
        dist[r] = 0;
        int ecc = 0;
        while (qh < qt) {
            size_t u = (size_t)queue[qh++];
            if (dist[u] > ecc) ecc = dist[u];
            for (size_t v = 0; v < B; v++) {
                bool edge = tpar[v] == (int32_t)u || tpar[u] == (int32_t)v;
                if (edge && dist[v] < 0) dist[v] = dist[u] + 1, queue[qt++] = (int32_t)v;
            }
        }
        if (ecc < best_ecc || (ecc == best_ecc && s->cen[r][3] > s->cen[root][3])) best_ecc = ecc, root = r;
    }
    /* orient the tree from the root, breadth first: rig order */
    int32_t order[AMI_MAXB], par[AMI_MAXB];
    bool seen[AMI_MAXB] = {false};
    size_t qh = 0, qt = 0;
    order[qt++] = (int32_t)root;
    seen[root] = true;
    par[root] = -1;
    while (qh < qt) {
        size_t u = (size_t)order[qh++];
        for (size_t v = 0; v < B; v++) {
            bool edge = tpar[v] == (int32_t)u || tpar[u] == (int32_t)v;
            if (edge && !seen[v]) seen[v] = true, par[v] = (int32_t)u, order[qt++] = (int32_t)v;
        }
    }
    double head[AMI_MAXB * 3];
    for (size_t k = 0; k < B; k++) {
        if (par[k] < 0) {
            ami_bone_centroid(s, k, head + k * 3);
        } else {
            memcpy(head + k * 3, s->pivot[k][par[k]], 3 * sizeof(double));
        }
    }
    /* ours: a root with a single child is the end of a chain, and its centroid sits inside the
     * limb; its head goes halfway to the joint with that child (the root translates freely,
     * so this moves a keypoint only: reconstruction unchanged). Real-model joint error -4.3%,
     * synthetic quick check (8 clips) unchanged. */
    if (d->robust) {
        size_t r = (size_t)order[0], bc = SIZE_MAX;
        int nch = 0;
        for (size_t c = 0; c < B; c++)
            if (par[c] == (int32_t)r) nch++, bc = c;
        if (nch == 1)
            for (int a = 0; a < 3; a++) head[r * 3 + a] += 0.5 * (head[bc * 3 + a] - head[r * 3 + a]);
    }
    /* free: Dem Bones' layout, every bone a child of the root (heads stay at the tree's
     * joints, where an animator expects them; they only place the bones' rest frames) */
    if (mode == AM_RIG_FREE) {
        size_t r = (size_t)order[0], o = 1;
        for (size_t k = 0; k < B; k++)
            if (k != r) order[o++] = (int32_t)k, par[k] = (int32_t)r;
    }
    /* which bones translate (loc) */
    uint8_t loc[AMI_MAXB] = {0};
    out->err_visible_articulated = -1.0;
    d->order = order;
    d->par = par;
    d->pivot = head;
    d->loc = loc;
    am_status st = AM_OK;
    if (mode != AM_RIG_ARTICULATED) {
        /* every bone free: the free-bone transforms are the optimum of this rig already (any
         * rigid transform per bone is reachable), so no refit; the motion reproduces them */
        for (size_t k = 0; k < B; k++) loc[k] = par[k] >= 0;
        if (mode == AM_RIG_AUTO) st = ami_choose_loc(d, AM_RIG_AUTO_TOLERANCE * err_free, refit_rounds, loc, err);
    } else {
        /* articulated refit: transforms constrained to rotate about the joints, then weights */
        for (size_t round = 0; round < refit_rounds; round++) {
            if (!ami_progress("rig: skeleton", (double)round / (double)refit_rounds)) {
                st = AM_FAIL(err, AM_E_CANCELLED, "articulated refit stopped at round %zu", round);
                goto refit_done;
            }
            ami_dec_pass_articulated(d, 4);
            ami_dec_pass_weights(d, d->robust || round == 0, true, d->rest_update);
        }
        out->err_visible_articulated = 100.0 * ami_dec_error_visible(d, d->G) / d->body;
    }
refit_done:
    d->order = NULL;
    d->par = NULL;
    d->pivot = NULL;
    d->loc = NULL;
    if (st < 0) return st;

    am_rig *rig = NULL;
    AMI_TRY(ami_build_rig(d, order, par, head, loc, s, &rig, err));
    int32_t rig_of[AMI_MAXB];
    for (size_t k = 0; k < B; k++) {
        char nm[32];
        size_t i = 0;
        while ((size_t)order[i] != k) i++;
        snprintf(nm, sizeof nm, "bone%02zu", i);
        rig_of[k] = am_rig_find_bone(rig, nm);
        if (rig_of[k] < 0) {
            am_rig_free(rig);
            return AM_FAIL(err, AM_E_INTERNAL, "rig lost bone %s", nm);
        }
    }
    am_motion *mo = NULL;
    st = am_motion_create(rig, T, out->fps, &mo, err);
    if (st < 0) {
        am_rig_free(rig);
        return st;
    }
    mo->quat = am_alloc_array(T * B * 4, sizeof(double));
    double *P = am_alloc_array(B * 16, sizeof(double));
    double *fkpose = am_alloc_array(B * 16, sizeof(double));
    double *lrot = am_alloc_array(B * 9, sizeof(double));
    out->rest = am_alloc_array(N * 3, sizeof(float));
    out->bone_index = am_alloc_array(N * AMI_K, sizeof(int32_t));
    out->weight = am_alloc_array(N * AMI_K, sizeof(float));
    out->xform = am_alloc_array(T * B * 12, sizeof(double));
    out->translating = am_alloc(B);
    if (!mo->quat || !P || !fkpose || !lrot || !out->rest || !out->bone_index || !out->weight || !out->xform ||
        !out->translating) {
        st = AM_FAIL(err, AM_E_NOMEM, "skeleton output");
        goto fail;
    }
    out->translating_count = 0;
    for (size_t k = 0; k < B; k++) {
        out->translating[rig_of[k]] = loc[k];
        out->translating_count += loc[k];
    }
    if (out->translating_count) {
        mo->loc = am_alloc_array(T * B * 3, sizeof(double)); /* zero: the pinned bones' */
        if (!mo->loc) {
            st = AM_FAIL(err, AM_E_NOMEM, "skeleton output");
            goto fail;
        }
    }
    for (size_t t = 0; t < T; t++) {
        const double *g = d->G + t * d->gs * 12;
        for (size_t k = 0; k < B; k++) { /* P(b) = G_b M_rest(b) */
            double G4[16] = {0};
            memcpy(G4, g + k * 12, 12 * sizeof(double));
            G4[15] = 1.0;
            am_mat4_mul(G4, rig->rest_mat + (size_t)rig_of[k] * 16, P + (size_t)rig_of[k] * 16);
        }
        /* local channels top-down against the parents' poses as FK will build them (fkpose),
         * so that a translating bone's loc puts it exactly where its transform is */
        for (size_t b = 0; b < B; b++) {
            double *q = mo->quat + (t * B + b) * 4, R[9];
            if (rig->parent[b] < 0) {
                double Rp[9], Rt[9], Qm[9], Rw[9];
                am_mat4_get_rot(P + b * 16, Rp);
                am_mat3_transpose(rig->rest_rot + b * 9, Rt); /* Q = Rp R_rest^T */
                am_mat3_mul(Rp, Rt, R);
                am_quat_from_mat3(R, mo->root_quat + t * 4);
                am_mat4_get_trans(P + b * 16, mo->trans + t * 3);
                am_quat_identity(q);
                memset(mo->euler + (t * B + b) * 3, 0, 3 * sizeof(double));
                am_mat3_identity(lrot + b * 9);
                am_quat_to_mat3(mo->root_quat + t * 4, Qm);
                am_mat3_mul(Qm, rig->rest_rot + b * 9, Rw);
                am_mat4_from_rt(Rw, mo->trans + t * 3, fkpose + b * 16);
                continue;
            }
            double Tm[16], Ti[16], L[16];
            am_mat4_mul(fkpose + (size_t)rig->parent[b] * 16, rig->offset + b * 16, Tm);
            am_mat4_inverse(Tm, Ti);
            am_mat4_mul(Ti, P + b * 16, L); /* [R | loc] = (P(parent) O(b))^-1 P(b) */
            am_mat4_get_rot(L, R);
            am_quat_from_mat3(R, q);
            am_quat_to_mat3(q, lrot + b * 9);
            double *e = mo->euler + (t * B + b) * 3;
            if (t > 0)
                am_mat3_to_euler_xyz_near(lrot + b * 9, mo->euler + ((t - 1) * B + b) * 3, e);
            else
                am_mat3_to_euler_xyz(lrot + b * 9, e);
            double *lc = out->translating[b] ? mo->loc + (t * B + b) * 3 : NULL;
            if (lc) am_mat4_get_trans(L, lc);
            am_mat4_mul_rot(Tm, lrot + b * 9, fkpose + b * 16);
            if (lc)
                for (int i = 0; i < 3; i++)
                    fkpose[b * 16 + i * 4 + 3] += Tm[i * 4] * lc[0] + Tm[i * 4 + 1] * lc[1] + Tm[i * 4 + 2] * lc[2];
        }
        /* the skinning transforms the files imply: P_fk(b) M_rest(b)^-1 */
        am_rig_fk_rot_loc(rig, mo->trans + t * 3, mo->root_quat + t * 4, lrot, mo->loc ? mo->loc + t * B * 3 : NULL,
                          fkpose);
        for (size_t b = 0; b < B; b++) {
            double S4[16];
            am_mat4_mul(fkpose + b * 16, rig->rest_inv + b * 16, S4);
            memcpy(out->xform + (t * B + b) * 12, S4, 12 * sizeof(double));
        }
        for (size_t k = 0; k < B; k++) memcpy(d->G + (t * d->gs + k) * 12, out->xform + (t * B + (size_t)rig_of[k]) * 12, 12 * sizeof(double));
    }
    if ((st = am_motion_compute_joints(mo, rig, err)) < 0) goto fail;
    for (size_t n = 0; n < N; n++) {
        for (int a = 0; a < 3; a++) out->rest[n * 3 + a] = (float)d->rest[n * 3 + a];
        for (int k = 0; k < AMI_K; k++) {
            double wk = d->w[n * AMI_K + k];
            out->bone_index[n * AMI_K + k] = wk > 0.0 ? rig_of[d->idx[n * AMI_K + k]] : 0;
            out->weight[n * AMI_K + k] = wk > 0.0 ? (float)wk : 0.0f;
        }
    }
    out->err_visible = 100.0 * ami_dec_error_visible(d, d->G) / d->body;
    am_free(P), am_free(fkpose), am_free(lrot);
    out->rig = rig;
    out->motion = mo;
    return AM_OK;
fail:
    am_free(P), am_free(fkpose), am_free(lrot);
    am_motion_free(mo);
    am_rig_free(rig);
    return st;
}

am_status ami_dec_skeleton(ami_dec *d, size_t refit_rounds, am_rig_mode mode, double err_free,
                           am_decomposition *out, am_error *err)
{
    /* ~0.5 MB of per-bone-pair sums: on the heap, per call */
    ami_skel *s = am_alloc(sizeof *s);
    AMI_CHECK(err, s, AM_E_NOMEM, "skeleton sums (%zu bytes)", sizeof *s);
    am_status st = ami_dec_skeleton_with(d, refit_rounds, mode, err_free, out, s, err);
    am_free(s);
    return st;
}
