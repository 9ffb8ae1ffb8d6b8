/* Track2Rig's driver: am_decompose_run / am_decompose_take. It validates the tracks, lays
 * them out point-major, places the rest pose, then runs the stages in order: the trajectory
 * clustering (init.c), the alternating decomposition passes (ssdr.c) and the skeleton with
 * its articulated refit (skeleton.c). The passes never call back into the driver. */
#include <assert.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "decompose_internal.h"

void am_decompose_opts_defaults(const am_decompose_opts *in, am_decompose_opts *out)
{
    am_decompose_opts o = {0};
    if (in) o = *in;
    if ((int)o.method < 0 || o.method >= AM_DECOMPOSE_METHOD_COUNT) o.method = AM_DECOMPOSE_OURS;
    if ((int)o.rig_mode < 0 || o.rig_mode >= AM_RIG_MODE_COUNT) o.rig_mode = AM_RIG_AUTO;
    if (o.max_bones == 0) o.max_bones = 16;
    if (o.max_bones > AMI_MAXB) o.max_bones = AMI_MAXB;
    if (o.iterations == 0) o.iterations = 30;
    if (o.knn == 0) o.knn = 8;
    if (o.smooth == 0.0) o.smooth = 1.0;
    if (o.smooth < 0.0) o.smooth = 0.0;
    if (!(o.huber > 0.0)) o.huber = 2.5;
    if (o.threads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = c > 0 ? (size_t)c : 1;
    }
    if (o.threads > AMI_MAXT) o.threads = AMI_MAXT;
    *out = o;
}

am_status am_decompose_validate(const am_tracks *tr, const am_decompose_opts *opts, am_error *err)
{
    assert(tr);
    am_decompose_opts o;
    am_decompose_opts_defaults(opts, &o);
    size_t T = tr->frame_count, N = tr->point_count;
    AMI_CHECK(err, T >= 2, AM_E_SHAPE, "need at least 2 frames, got %zu", T);
    AMI_CHECK(err, N >= 1, AM_E_EMPTY, "no points");
    AMI_CHECK(err, o.bones <= AMI_MAXB, AM_E_ARG, "at most %d bones, got %zu", AMI_MAXB, o.bones);
    size_t usable = 0, vis_total = 0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t n = 0; n < N; n++) {
        size_t cnt = 0;
        for (size_t t = 0; t < T; t++) {
            if (tr->visible && !tr->visible[t * N + n]) continue;
            const float *p = tr->points + (t * N + n) * 3;
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
                return AM_FAIL(err, AM_E_NONFINITE, "visible entry at frame %zu, point %zu is not finite", t, n);
            for (int i = 0; i < 3; i++) {
                if (p[i] < lo[i]) lo[i] = p[i];
                if (p[i] > hi[i]) hi[i] = p[i];
            }
            cnt++;
        }
        vis_total += cnt;
        if (cnt >= 3) usable++;
    }
    AMI_CHECK(err, vis_total > 0, AM_E_EMPTY, "every entry is hidden: nothing to decompose");
    size_t need = o.bones ? o.bones : 2;
    AMI_CHECK(err, usable >= need, AM_E_VALUE,
              "%zu points are visible in >= 3 frames; %zu bones need at least that many", usable, need);
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    AMI_CHECK(err, diag > 0.0, AM_E_DEGENERATE, "all visible points coincide");
    /* static clip: no point moves between its visible frames */
    double maxmove = 0.0;
    for (size_t n = 0; n < N && maxmove <= 1e-6 * diag; n++) {
        const float *first = NULL;
        for (size_t t = 0; t < T; t++) {
            if (tr->visible && !tr->visible[t * N + n]) continue;
            const float *p = tr->points + (t * N + n) * 3;
            if (!first) {
                first = p;
                continue;
            }
            double dx = p[0] - first[0], dy = p[1] - first[1], dz = p[2] - first[2];
            double dd = sqrt(dx * dx + dy * dy + dz * dz);
            if (dd > maxmove) maxmove = dd;
        }
    }
    AMI_CHECK(err, maxmove > 1e-6 * diag, AM_E_DEGENERATE,
              "static clip: no point moves (max displacement %.3g m), so no bones can be found", maxmove);
    return AM_OK;
}

void am_decomposition_free(am_decomposition *d)
{
    if (!d) return;
    am_free(d->rest);
    am_free(d->bone_index);
    am_free(d->weight);
    am_free(d->xform);
    am_free(d->auto_err);
    am_free(d->translating);
    am_warning_list_free(&d->warnings);
    am_rig_free(d->rig);
    am_motion_free(d->motion);
    am_free(d);
}

static void ami_dec_release(ami_dec *d)
{
    am_free((void *)d->obs);
    am_free((void *)d->vis);
    am_free(d->pstar);
    am_free(d->rest);
    am_free(d->idx);
    am_free(d->w);
    am_free(d->w_old);
    am_free(d->idx_old);
    am_free(d->G);
    am_free(d->cn);
    am_free(d->mres);
    am_free(d->nb_off);
    am_free(d->nb);
    am_free(d->F);
    am_free(d->sup);
    am_free(d->Gt);
    am_free(d->work);
    am_free(d->Fw);
    am_free(d->Hw);
    am_free(d->H);
    am_free(d->S);
    am_free(d->U);
    am_free(d->C);
}

/* release: the same tracks, whose points and visible arrays are taken (and set to NULL) as
 * soon as they are copied into the solver's point-major layout (am_decompose_take): visible
 * is freed, points becomes the pseudo-observation buffer (same size) and is freed with it. */
static am_status ami_decompose(const am_tracks *tr, am_tracks *release, const am_decompose_opts *opts,
                               am_decomposition **out, am_error *err)
{
    assert(out);
    *out = NULL;
    AMI_TRY(am_decompose_validate(tr, opts, err));
    am_decompose_opts o;
    am_decompose_opts_defaults(opts, &o);
    bool ours = o.method == AM_DECOMPOSE_OURS;
    size_t T = tr->frame_count, N = tr->point_count;
    double t0 = am_now();
    ami_stage stage = ami_stage_begin("rig: initialise bones");

    ami_dec d = {0};
    d.T = T;
    d.N = N;
    /* buffers per bone are sized for the clustering's target, not AMI_MAXB: at 6 bones the
     * AMI_MAXB-sized ones were ~6 MB, i.e. most of the fixed overhead of a small clip */
    d.bcap = o.bones ? o.bones : o.max_bones;
    if (d.bcap > N) d.bcap = N;
    if (d.bcap > AMI_MAXB) d.bcap = AMI_MAXB;
    size_t bc = d.bcap;
    d.gs = bc;
    am_decomposition *res = am_alloc(sizeof *res);
    /* not zeroed (am_realloc of NULL): the transposition below writes every entry */
    float *obs = am_realloc_array(NULL, N * T * 3, sizeof(float));
    uint8_t *vis = am_realloc_array(NULL, N * T, 1);
    d.obs = obs;
    d.vis = vis;
    d.rest = am_alloc_array(N * 3, sizeof(double));
    d.idx = am_alloc_array(N * AMI_K, sizeof(int32_t));
    d.w = am_alloc_array(N * AMI_K, sizeof(double));
    d.w_old = am_alloc_array(N * AMI_K, sizeof(double));
    d.idx_old = am_alloc_array(N * AMI_K, sizeof(int32_t));
    d.G = am_alloc_array(T * bc * 12, sizeof(double));
    d.cn = am_alloc_array(N, sizeof(double));
    d.mres = am_alloc_array(N, sizeof(double));
    d.F = am_alloc_array(bc * T * 12, sizeof(double));
    d.sup = am_alloc_array(bc * T, sizeof(double));
    d.Gt = am_alloc_array((T + 3) / 4 * bc * 48, sizeof(double)); /* ami_quads */
    d.threads = o.threads;
    d.work = ami_dec_work_alloc(d.threads);
    if (d.threads > 1) {
        d.Fw = am_alloc_array((d.threads - 1) * bc * T * 12, sizeof(double));
        d.Hw = am_alloc_array((d.threads - 1) * bc * bc * 16, sizeof(double));
    }
    d.H = am_alloc_array(bc * bc * 16, sizeof(double));
    d.S = am_alloc_array(bc * AMI_MAXB * 9, sizeof(double));
    d.U = am_alloc_array(bc * AMI_MAXB * 3, sizeof(double));
    d.C = am_alloc_array(bc * AMI_MAXB, sizeof(double));
    am_status st = AM_OK;
    if (!res || !obs || !vis || !d.rest || !d.idx || !d.w || !d.w_old || !d.idx_old ||
        !d.G || !d.Gt || !d.work || (d.threads > 1 && (!d.Fw || !d.Hw)) || !d.cn || !d.mres || !d.sup || !d.F || !d.H || !d.S || !d.U || !d.C) {
        st = AM_FAIL(err, AM_E_NOMEM, "decomposition of %zu points x %zu frames", N, T);
        goto fail;
    }
    /* point-major copy; hidden entries held from the nearest visible frame (the baseline's
     * fill, and only a starting value for ours) */
    size_t ref = 0, refcount = 0;
    for (size_t t = 0; t < T; t++) {
        size_t c = 0;
        for (size_t n = 0; n < N; n++) c += !tr->visible || tr->visible[t * N + n];
        if (c > refcount) refcount = c, ref = t;
    }
    /* transpose in blocks of points so both sides stream through whole cache lines */
    for (size_t n0 = 0; n0 < N; n0 += 64) {
        size_t n1 = n0 + 64 < N ? n0 + 64 : N;
        for (size_t t = 0; t < T; t++) {
            const float *src = tr->points + (t * N + n0) * 3;
            const uint8_t *sv = tr->visible ? tr->visible + t * N + n0 : NULL;
            for (size_t n = n0; n < n1; n++, src += 3) {
                vis[n * T + t] = sv ? sv[n - n0] != 0 : 1;
                memcpy(obs + (n * T + t) * 3, src, 3 * sizeof(float));
            }
        }
    }
    float *taken = NULL;
    if (release) { /* the caller's copy is no longer needed: free it before the solver's buffers */
        /* its points buffer has the size of pstar and is overwritten before pstar is read:
         * reusing it spares 12 bytes per entry of fresh pages (faults and zeroing) */
        taken = release->points;
        am_free(release->visible);
        release->points = NULL;
        release->visible = NULL;
    }
    for (size_t n = 0; n < N; n++) {
        size_t last = SIZE_MAX;
        float *po = obs + n * T * 3;
        const uint8_t *v = vis + n * T;
        for (size_t t = 0; t < T; t++) {
            if (v[t]) {
                if (last == SIZE_MAX)
                    for (size_t u = 0; u < t; u++) memcpy(po + u * 3, po + t * 3, 12);
                last = t;
            } else if (last != SIZE_MAX) {
                memcpy(po + t * 3, po + last * 3, 12);
            }
        }
        if (last == SIZE_MAX) /* never seen: filled after the rest pose exists */
            for (size_t t = 0; t < T; t++) po[t * 3] = NAN;
    }
    d.pstar = taken ? taken : am_alloc_array(N * T * 3, sizeof(float));
    if (!d.pstar) {
        st = AM_FAIL(err, AM_E_NOMEM, "decomposition of %zu points x %zu frames", N, T);
        goto fail;
    }
    /* body size: frame-0 box of the visible points (else the reference frame's) */
    size_t bf = 0;
    for (int pass = 0; pass < 2; pass++) {
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        size_t c = 0;
        for (size_t n = 0; n < N; n++) {
            if (!vis[n * T + bf]) continue;
            const float *p = obs + (n * T + bf) * 3;
            for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], p[i]), hi[i] = fmax(hi[i], p[i]);
            c++;
        }
        double dg = c >= 2 ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                  (hi[2] - lo[2]) * (hi[2] - lo[2]))
                           : 0.0;
        if (dg > 0.0) {
            d.body = dg;
            break;
        }
        bf = ref;
    }
    if (!(d.body > 0.0)) d.body = 1.0;

    /* rest: the reference frame (ours: the frame with the most visible points; the baseline:
     * frame 0); points hidden there are carried over from their nearest visible frame and
     * then moved with their neighbours (after the graph exists) */
    size_t rf = ours ? ref : 0;
    size_t unseen = 0;
    for (size_t n = 0; n < N; n++) {
        const float *p = obs + (n * T + rf) * 3;
        if (isnan(p[0])) {
            unseen++;
            continue;
        }
        for (int i = 0; i < 3; i++) d.rest[n * 3 + i] = p[i];
    }
    if (unseen) { /* points never visible: park them at the centroid (documented) */
        double cen[3] = {0, 0, 0};
        size_t c = 0;
        for (size_t n = 0; n < N; n++) {
            if (isnan(obs[n * T * 3])) continue;
            for (int i = 0; i < 3; i++) cen[i] += d.rest[n * 3 + i];
            c++;
        }
        for (size_t n = 0; n < N; n++) {
            if (!isnan(obs[n * T * 3])) continue;
            for (size_t t = 0; t < T; t++)
                for (int i = 0; i < 3; i++) obs[(n * T + t) * 3 + i] = (float)(cen[i] / (double)c);
            for (int i = 0; i < 3; i++) d.rest[n * 3 + i] = cen[i] / (double)c;
        }
    }
    if ((st = ami_dec_graph(&d, tr->faces, tr->face_count, o.knn, err)) < 0) goto fail;
    if (ours) { /* neighbour transfer of rest positions hidden in the reference frame */
        for (size_t n = 0; n < N; n++) {
            if (vis[n * T + rf]) continue;
            size_t best = SIZE_MAX, bd = SIZE_MAX;
            for (size_t t = 0; t < T; t++)
                if (vis[n * T + t]) {
                    size_t dd = t > rf ? t - rf : rf - t;
                    if (dd < bd) bd = dd, best = t;
                }
            if (best == SIZE_MAX) continue;
            double sh[3] = {0, 0, 0};
            size_t c = 0;
            for (int32_t e = d.nb_off[n]; e < d.nb_off[n + 1]; e++) {
                size_t m = (size_t)d.nb[e];
                if (!vis[m * T + rf] || !vis[m * T + best]) continue;
                for (int i = 0; i < 3; i++) sh[i] += obs[(m * T + rf) * 3 + i] - obs[(m * T + best) * 3 + i];
                c++;
            }
            for (int i = 0; i < 3; i++)
                d.rest[n * 3 + i] = obs[(n * T + best) * 3 + i] + (c ? sh[i] / (double)c : 0.0);
        }
    }
    double noise = ami_dec_noise_floor(&d);
    res->noise_floor = 100.0 * noise / d.body;
    for (size_t n = 0; n < N; n++) d.cn[n] = 1.0;

    size_t B = 0;
    if ((st = ami_dec_init(&d, o.bones, o.max_bones, res->noise_floor, o.bones ? NULL : &res->auto_err,
                           &res->auto_count, &B, err)) < 0)
        goto fail;
    d.B = B;
    /* repack G to the final bone count: the passes stream it once per point */
    for (size_t t = 0; t < T; t++) memmove(d.G + t * B * 12, d.G + t * bc * 12, sizeof(double) * B * 12);
    d.gs = B;
    if (ours && ami_dec_place_hidden(&d, rf) && !(tr->faces && tr->face_count)) {
        /* the kNN graph was built on the carried-over positions: rebuild it on the placed ones */
        am_free(d.nb_off), am_free(d.nb);
        d.nb_off = d.nb = NULL;
        if ((st = ami_dec_graph(&d, NULL, 0, o.knn, err)) < 0) goto fail;
    }
    /* visible support of each bone and frame from the clustering (it hardly changes later):
     * frames below AMI_MINSUP get interpolated transforms */
    for (size_t n = 0; n < N; n++)
        for (size_t t = 0; t < T; t++) d.sup[(size_t)d.idx[n * AMI_K] * T + t] += vis[n * T + t];
    double t1 = am_now();
    res->time_init = t1 - t0;
    ami_stage_end(&stage);
    stage = ami_stage_begin("rig: fit bones");

    d.robust = ours;
    d.em = ours;
    d.rest_update = ours;
    d.alpha = ours ? o.smooth : 0.0;
    d.huber = o.huber;
    d.med_res = 0.0;
    if (!ours) /* the baseline fits the filled observations as they are */
        memcpy(d.pstar, d.obs, sizeof(float) * N * T * 3);
    for (size_t it = 0; it < o.iterations; it++) {
        if (!ami_progress(stage.name, (double)it / (double)o.iterations)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "decomposition stopped at iteration %zu", it);
            goto fail;
        }
        /* the first sweep measures residuals before any Huber clipping is trusted */
        ami_dec_pass_weights(&d, ours, true, d.rest_update && it > 0);
        ami_dec_pass_transforms(&d, 1);
    }
    res->iterations = o.iterations;
    res->polish = -1;
    double err_vis = -1.0; /* the polish measured it on the state it left (the pass below keeps G, w, rest) */
    if (ours) {
        bool kept = false, pass_done = false;
        if ((st = ami_dec_polish(&d, AMI_POLISH_ROUNDS, &kept, &pass_done, &err_vis, err)) < 0) goto fail;
        res->polish = kept ? 1 : 0;
        if (!pass_done) ami_dec_pass_weights(&d, true, false, false); /* track weights for the refit */
    }
    if (!(err_vis >= 0.0)) err_vis = ami_dec_error_visible(&d, d.G);
    res->err_visible_free = 100.0 * err_vis / d.body;
    double t2 = am_now();
    res->time_solve = t2 - t1;
    ami_stage_end(&stage);
    stage = ami_stage_begin("rig: skeleton");

    res->frame_count = T;
    res->point_count = N;
    res->bone_count = B;
    res->fps = tr->fps > 0.0 ? tr->fps : 30.0;
    res->body_size = d.body;
    res->rig_mode = o.rig_mode;
    res->err_visible_articulated = -1.0;
    if (!(o.flags & AM_DECOMPOSE_NO_SKELETON)) {
        /* every sweep lowers the articulated objective (ami_dec_pass_articulated); 3 rounds of 4
         * sweeps get most of the gain (synthetic quadruped walk 0.61 -> 0.35%) for ~8% of the
         * command: the weight re-solve between rounds is what costs at large N */
        if ((st = ami_dec_skeleton(&d, 3, o.rig_mode, res->err_visible_free, res, err)) < 0) goto fail;
    } else {
        res->rest = am_alloc_array(N * 3, sizeof(float));
        res->bone_index = am_alloc_array(N * AMI_K, sizeof(int32_t));
        res->weight = am_alloc_array(N * AMI_K, sizeof(float));
        res->xform = am_alloc_array(T * B * 12, sizeof(double));
        if (!res->rest || !res->bone_index || !res->weight || !res->xform) {
            st = AM_FAIL(err, AM_E_NOMEM, "decomposition output");
            goto fail;
        }
        for (size_t n = 0; n < N; n++) {
            for (int i = 0; i < 3; i++) res->rest[n * 3 + i] = (float)d.rest[n * 3 + i];
            for (int k = 0; k < AMI_K; k++) {
                res->bone_index[n * AMI_K + k] = d.idx[n * AMI_K + k];
                res->weight[n * AMI_K + k] = (float)d.w[n * AMI_K + k];
            }
        }
        for (size_t t = 0; t < T; t++)
            memcpy(res->xform + t * B * 12, d.G + t * d.gs * 12, sizeof(double) * B * 12);
        res->err_visible = res->err_visible_free;
    }
    res->time_skeleton = am_now() - t2;
    ami_stage_end(&stage);
    ami_dec_release(&d);
    *out = res;
    return AM_OK;
fail:
    ami_dec_release(&d);
    am_decomposition_free(res);
    return st;
}

/* The call's scope: everything above allocates, warns and reports into it. */
static am_status ami_decompose_scoped(const am_tracks *tr, am_tracks *release,
                                      const am_decompose_opts *opts, am_decomposition **out,
                                      am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_decompose(tr, release, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_decompose_run(const am_tracks *tr, const am_decompose_opts *opts,
                           am_decomposition **out, am_error *err)
{
    return ami_decompose_scoped(tr, NULL, opts, out, err);
}

am_status am_decompose_take(am_tracks *tr, const am_decompose_opts *opts, am_decomposition **out,
                            am_error *err)
{
    return ami_decompose_scoped(tr, tr, opts, out, err);
}
