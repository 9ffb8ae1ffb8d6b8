/* Track2Rig decomposition: validity, recovery of a known articulated chain, hidden entries,
 * the skeleton and the SPEC 4.4 reconstruction. */
#include <math.h>
#include <string.h>

#include "am_test.h"
#include "anymove/decompose.h"
#include "anymove/math.h"
#include "anymove/metrics.h"
#include "anymove/synth.h"
#include "decompose/decompose_internal.h"

/* A chain of `bones` segments along +X (length 0.3 m each), points on a tube of radius 4 cm,
 * smooth weights across each joint; joint k bends about Z and Y with its own phase. */
/* slide > 0: the joint of the last segment also slides along the chain by slide * sin(0.13 t)
 * metres (a telescoping leaf: no fixed pivot, so only translation channels reproduce it). */
static am_tracks *ami_chain_slide(size_t bones, size_t per_bone, size_t T, double noise, double hide,
                                  double slide, float **truth_out)
{
    size_t N = bones * per_bone;
    am_tracks *tr = am_alloc(sizeof *tr);
    tr->frame_count = T;
    tr->point_count = N;
    tr->fps = 30.0;
    tr->points = am_alloc_array(T * N * 3, sizeof(float));
    tr->visible = am_alloc_array(T * N, 1);
    float *truth = am_alloc_array(T * N * 3, sizeof(float));
    uint32_t rng = 12345u;
    for (size_t t = 0; t < T; t++) {
        /* world transform of each segment: chain of rotations about the joints */
        double Rw[8][9] = {{0}}, Tw[8][3] = {{0}}; /* zeroed: -O3 cannot see bone 0 set them */
        for (size_t b = 0; b < bones; b++) {
            double e[3] = {0.0, 0.4 * sin(0.11 * (double)t + (double)b), 0.7 * sin(0.07 * (double)t + 1.3 * (double)b)},
                   Rl[9], j[3] = {0.3 * (double)b, 0, 0};
            am_euler_xyz_to_mat3(e, Rl);
            if (b == 0) {
                memcpy(Rw[0], Rl, sizeof Rl);
                double tt[3] = {0.01 * (double)t, 0.0, 0.5};
                memcpy(Tw[0], tt, sizeof tt);
            } else {
                am_mat3_mul(Rw[b - 1], Rl, Rw[b]);
                double jw[3], rj[3], js[3] = {j[0], 0, 0};
                if (b + 1 == bones) js[0] += slide * sin(0.13 * (double)t);
                am_mat3_mul_vec3(Rw[b - 1], js, jw);
                am_vec3_add(jw, Tw[b - 1], jw); /* joint in world through the parent */
                am_mat3_mul_vec3(Rw[b], j, rj);
                am_vec3_sub(jw, rj, Tw[b]);
            }
        }
        for (size_t n = 0; n < N; n++) {
            size_t b = n / per_bone, i = n % per_bone;
            double x = 0.3 * ((double)b + ((double)i + 0.5) / (double)per_bone);
            double ang = 2.399963 * (double)n;
            double rest[3] = {x, 0.04 * cos(ang), 0.04 * sin(ang)}, acc[3] = {0, 0, 0};
            double wsum = 0.0;
            for (size_t k = 0; k < bones; k++) {
                double c = 0.3 * ((double)k + 0.5), dd = fabs(x - c) - 0.15;
                double w = dd <= 0.0 ? 1.0 : exp(-(dd * dd) / (2.0 * 0.02 * 0.02));
                if (w < 1e-3) continue;
                double v[3];
                am_mat3_mul_vec3(Rw[k], rest, v);
                am_vec3_add(v, Tw[k], v);
                am_vec3_madd(acc, w, v, acc);
                wsum += w;
            }
            float *o = tr->points + (t * N + n) * 3, *g = truth + (t * N + n) * 3;
            for (int a = 0; a < 3; a++) {
                g[a] = (float)(acc[a] / wsum);
                rng = rng * 1664525u + 1013904223u;
                double u1 = ((rng >> 8) + 0.5) / 16777216.0;
                rng = rng * 1664525u + 1013904223u;
                double u2 = ((rng >> 8) + 0.5) / 16777216.0;
                o[a] = (float)(g[a] + noise * sqrt(-2.0 * log(u1)) * cos(6.283185307 * u2));
            }
            rng = rng * 1664525u + 1013904223u;
            bool hidden = ((rng >> 8) / 16777216.0) < hide;
            tr->visible[t * N + n] = !hidden;
            if (hidden) o[0] = o[1] = o[2] = NAN;
        }
    }
    if (truth_out)
        *truth_out = truth;
    else
        am_free(truth);
    return tr;
}

static am_tracks *ami_chain(size_t bones, size_t per_bone, size_t T, double noise, double hide,
                            float **truth_out)
{
    return ami_chain_slide(bones, per_bone, T, noise, hide, 0.0, truth_out);
}

static double ami_mean_err(const float *a, const float *b, size_t count, const am_tracks *tr, int which)
{
    double s = 0.0;
    size_t c = 0;
    for (size_t i = 0; i < count; i++) {
        if (which == 1 && !tr->visible[i]) continue;
        if (which == 2 && tr->visible[i]) continue;
        double dx = a[i * 3] - b[i * 3], dy = a[i * 3 + 1] - b[i * 3 + 1], dz = a[i * 3 + 2] - b[i * 3 + 2];
        s += sqrt(dx * dx + dy * dy + dz * dz);
        c++;
    }
    return c ? s / (double)c : 0.0;
}

static void decompose_validity(void)
{
    am_error err = {0};
    am_decomposition *d = NULL;
    am_tracks *tr = ami_chain(2, 40, 10, 0.0, 0.0, NULL);
    tr->frame_count = 1;
    AM_CHECK_STATUS(am_decompose_run(tr, NULL, &d, &err), AM_E_SHAPE);
    tr->frame_count = 10;
    am_decompose_opts o = {.bones = 200};
    AM_CHECK_STATUS(am_decompose_run(tr, &o, &d, &err), AM_E_ARG);
    o.bones = 50;
    am_tracks small = *tr;
    small.point_count = 20; /* a prefix of every frame is not the same layout; only sizes matter */
    AM_CHECK_STATUS(am_decompose_validate(&small, &o, &err), AM_E_VALUE);
    tr->points[5 * 3 + 1] = NAN; /* visible NaN */
    AM_CHECK_STATUS(am_decompose_run(tr, NULL, &d, &err), AM_E_NONFINITE);
    AM_CHECK(strstr(err.info, "frame 0, point 5") != NULL);
    memset(tr->visible, 0, tr->frame_count * tr->point_count);
    AM_CHECK_STATUS(am_decompose_run(tr, NULL, &d, &err), AM_E_EMPTY);
    memset(tr->visible, 1, tr->frame_count * tr->point_count);
    for (size_t t = 1; t < tr->frame_count; t++) /* static */
        memcpy(tr->points + t * tr->point_count * 3, tr->points, tr->point_count * 3 * sizeof(float));
    tr->points[5 * 3 + 1] = 0.0f;
    for (size_t t = 1; t < tr->frame_count; t++) tr->points[(t * tr->point_count + 5) * 3 + 1] = 0.0f;
    AM_CHECK_STATUS(am_decompose_run(tr, NULL, &d, &err), AM_E_DEGENERATE);
    AM_CHECK(d == NULL);
    am_tracks_free(tr);
}

static void decompose_recovers_chain(void)
{
    float *truth = NULL;
    am_tracks *tr = ami_chain(3, 200, 60, 0.002, 0.15, &truth);
    am_error err = {0};
    am_decomposition *d = NULL, *base = NULL;
    am_decompose_opts o = {.bones = 3};
    AM_CHECK_OK(am_decompose_run(tr, &o, &d, &err), &err);
    o.method = AM_DECOMPOSE_SSDR;
    AM_CHECK_OK(am_decompose_run(tr, &o, &base, &err), &err);
    if (!d || !base) goto done;
    AM_CHECK(d->bone_count == 3 && d->rig && d->rig->bone_count == 3 && d->motion);
    size_t T = tr->frame_count, N = tr->point_count;
    float *rec = am_alloc_array(T * N * 3, sizeof(float));
    AM_CHECK_OK(am_skin_reconstruct(d->rig, d->motion, N, d->rest, d->bone_index, d->weight, rec, &err), &err);
    double e_all = 100.0 * ami_mean_err(rec, truth, T * N, tr, 0) / d->body_size;
    double e_hid = 100.0 * ami_mean_err(rec, truth, T * N, tr, 2) / d->body_size;
    AM_CHECK_OK(am_skin_reconstruct(base->rig, base->motion, N, base->rest, base->bone_index, base->weight, rec, &err),
                &err);
    double b_all = 100.0 * ami_mean_err(rec, truth, T * N, tr, 0) / base->body_size;
    printf("  chain: ours %.3f%% (hidden %.3f%%, visible %.3f%%, free %.3f%%), ssdr %.3f%%, noise %.3f%%\n", e_all,
           e_hid, d->err_visible, d->err_visible_free, b_all, d->noise_floor);
    AM_CHECK_MSG(e_all < 1.0, "reconstruction error %.3f%% of body size", e_all);
    AM_CHECK_MSG(e_hid < 1.5, "hidden-entry error %.3f%% of body size", e_hid);
    AM_CHECK(e_all < b_all);
    for (size_t n = 0; n < N; n++) {
        double s = 0.0;
        for (int k = 0; k < 4; k++) {
            AM_CHECK(d->weight[n * 4 + k] >= 0.0f);
            s += d->weight[n * 4 + k];
        }
        AM_CHECK_NEAR(s, 1.0, 1e-5);
    }
    am_free(rec);
done:
    am_decomposition_free(d);
    am_decomposition_free(base);
    am_tracks_free(tr);
    am_free(truth);
}

/* The articulated refit must cost little against free bones on a creature that is articulated:
 * each subtree-aware sweep lowers the error (the first refit, one bone at a time, left a walking
 * quadruped at 2-3x its free-bone error (here 1.23% vs 0.47%, all entries 1.6%) and drifted when repeated). Also checks the rest
 * placement of points hidden in the reference frame: the walk leaves the body far from them. */
static void decompose_articulated_refit_walk(void)
{
    am_error err = {0};
    am_synth_opts so = {.plan = AM_SYNTH_QUADRUPED, .motion = AM_SYNTH_WALK, .seed = 1000, .points = 800, .frames = 60};
    am_synth_clip *c = NULL;
    AM_CHECK_OK(am_synth_tracks(&so, &c, &err), &err);
    if (!c) return;
    am_decomposition *d = NULL;
    am_decompose_opts o = {.bones = c->bone_count, .rig_mode = AM_RIG_ARTICULATED};
    AM_CHECK_OK(am_decompose_run(c->tracks, &o, &d, &err), &err);
    if (d) {
        AM_CHECK(d->translating_count == 0 && !d->motion->loc);
        size_t T = c->tracks->frame_count, N = c->tracks->point_count;
        float *rec = am_alloc_array(T * N * 3, sizeof(float));
        AM_CHECK_OK(am_skin_reconstruct(d->rig, d->motion, N, d->rest, d->bone_index, d->weight, rec, &err), &err);
        double e_all = 100.0 * ami_mean_err(rec, c->truth, T * N, c->tracks, 0) / c->body_size;
        printf("  quadruped walk: articulated %.3f%% visible, free bones %.3f%%; all entries vs truth %.3f%%\n",
               d->err_visible, d->err_visible_free, e_all);
        AM_CHECK_MSG(d->err_visible < 2.0 * d->err_visible_free + 0.05, "articulated %.3f%% vs free %.3f%%",
                     d->err_visible, d->err_visible_free);
        AM_CHECK_MSG(e_all < 1.3, "reconstruction error %.3f%% of body size", e_all);
        am_free(rec);
    }
    am_decomposition_free(d);
    am_synth_clip_free(c);
}

static void decompose_auto_bones(void)
{
    am_tracks *tr = ami_chain(4, 120, 50, 0.001, 0.0, NULL);
    am_error err = {0};
    am_decomposition *d = NULL;
    AM_CHECK_OK(am_decompose_run(tr, NULL, &d, &err), &err);
    if (d) {
        printf("  auto: %zu bones; curve", d->bone_count);
        for (size_t i = 0; i < d->auto_count; i++) printf(" %.4f", d->auto_err[i]);
        printf("\n");
        AM_CHECK_MSG(d->bone_count >= 4 && d->bone_count <= 6, "auto chose %zu bones for a 4-bone chain",
                     d->bone_count);
    }
    am_decomposition_free(d);
    am_tracks_free(tr);
}

/* The --bones auto criterion on hand-made curves (docs/track2rig.md): each case is one property
 * the rule must have, independent of the clustering that produces real curves. */
static void decompose_auto_pick_curves(void)
{
    const size_t N = 2000; /* points: the degrees-of-freedom correction is negligible here */
    /* a clear knee: halving down to 4 bones, then ~2% per bone */
    const double knee[] = {10.0, 5.0, 2.5, 1.2, 1.18, 1.16, 1.14, 1.12, 1.10, 1.08};
    AM_CHECK_MSG(ami_dec_auto_pick(knee, 10, 0.5, N) == 4, "knee: %zu", ami_dec_auto_pick(knee, 10, 0.5, N));
    /* pure noise: one bone already sits at the noise floor; and with the floor underestimated
     * or unknown, the 0.6% a split buys by fitting noise is still not worth a bone */
    const double noise[] = {0.50, 0.497, 0.494, 0.491, 0.488, 0.485, 0.482, 0.479};
    AM_CHECK(ami_dec_auto_pick(noise, 8, 0.5, N) == 1);
    AM_CHECK(ami_dec_auto_pick(noise, 8, 0.3, N) == 1);
    AM_CHECK(ami_dec_auto_pick(noise, 8, 0.0, N) == 1);
    /* a plateau, then a drop (the first split cut across a limb pair, the third separates it):
     * a first-plateau stop picks 2; the global criterion crosses the plateau */
    const double plateau[] = {4.0, 2.0, 1.97, 1.94, 1.0, 0.98, 0.97, 0.96};
    AM_CHECK_MSG(ami_dec_auto_pick(plateau, 8, 0.3, N) == 5, "plateau: %zu", ami_dec_auto_pick(plateau, 8, 0.3, N));
    /* the slow tail of the hard clustering (3.5% per bone: blend regions at joints) buys no
     * bone; this is the curve of decompose_auto_bones' 4-bone chain */
    const double chain[] = {5.9941, 2.1192, 1.3865, 0.2952, 0.2850, 0.2782, 0.2708, 0.2624,
                            0.2453, 0.2399, 0.2356, 0.2319, 0.2298, 0.2158, 0.2130, 0.2105};
    AM_CHECK(ami_dec_auto_pick(chain, 16, 0.13, 480) == 4);
    /* the noise floor ends the candidates: what is below it is not worth a bone */
    const double floor_hit[] = {4.0, 2.0, 1.0, 0.5, 0.25, 0.12};
    AM_CHECK(ami_dec_auto_pick(floor_hit, 6, 1.0, N) == 3);
    AM_CHECK(ami_dec_auto_pick(floor_hit, 6, 0.0, N) == 6);
    /* the cap: a curve still halving at max-bones picks max-bones */
    AM_CHECK(ami_dec_auto_pick(floor_hit, 4, 0.0, N) == 4);
    /* tiny input (the 10-vertex Khronos SimpleSkin's curve): the third bone's 7% is less than
     * what 6 more parameters per frame take out of 30 observations by fitting noise */
    const double tiny[] = {8.96, 3.75, 3.50, 3.50, 3.50};
    AM_CHECK_MSG(ami_dec_auto_pick(tiny, 5, 0.46, 10) == 2, "tiny: %zu", ami_dec_auto_pick(tiny, 5, 0.46, 10));
    AM_CHECK(ami_dec_auto_pick(tiny, 5, 0.46, 0) == 3); /* unknown point count: no correction */
    /* degenerate curves: an exact fit, missing entries, one count, no count */
    const double exact[] = {1.0, 0.0, 0.0, 0.0};
    AM_CHECK(ami_dec_auto_pick(exact, 4, 0.0, N) == 2);
    const double gaps[] = {NAN, 3.0, INFINITY, 1.0};
    AM_CHECK(ami_dec_auto_pick(gaps, 4, 0.1, N) == 4);
    AM_CHECK(ami_dec_auto_pick(knee, 1, 0.5, N) == 1);
    AM_CHECK(ami_dec_auto_pick(knee, 0, 0.5, N) == 1);
    AM_CHECK(ami_dec_auto_pick(knee, 10, 0.5, 4) == 1); /* 4 points: 2 bones fit as many parameters as data */
}

/* Mean |reconstruction - observation| over the visible entries, % of body size, from the rig
 * and motion as written (FK with loc, am_skin_reconstruct): what `score rig` measures. */
static double ami_rig_err_visible(const am_decomposition *d, const am_tracks *tr)
{
    size_t T = tr->frame_count, N = tr->point_count;
    float *rec = am_alloc_array(T * N * 3, sizeof(float));
    am_error err = {0};
    double e = INFINITY;
    if (rec && am_skin_reconstruct(d->rig, d->motion, N, d->rest, d->bone_index, d->weight, rec, &err) == AM_OK)
        e = 100.0 * ami_mean_err(rec, tr->points, T * N, tr, 1) / d->body_size;
    am_free(rec);
    return e;
}

/* Known solution for translation channels: a 4-segment chain whose leaf telescopes (its joint
 * slides 6 cm, 5% of the body, along the chain) under 2 mm noise. Articulated, no pivot can
 * follow it; auto must give channels to exactly that bone and reconstruct like free bones;
 * hierarchical and free reproduce the free-bone fit exactly; every rig's files (FK with loc)
 * reproduce the error the run reports. */
static void decompose_rig_modes_sliding_leaf(void)
{
    am_tracks *tr = ami_chain_slide(4, 150, 60, 0.002, 0.0, 0.06, NULL);
    am_error err = {0};
    am_decomposition *d[AM_RIG_MODE_COUNT] = {NULL};
    for (int m = 0; m < AM_RIG_MODE_COUNT; m++) {
        am_decompose_opts o = {.bones = 4, .rig_mode = (am_rig_mode)m};
        AM_CHECK_OK(am_decompose_run(tr, &o, &d[m], &err), &err);
    }
    am_decomposition *au = d[AM_RIG_AUTO], *ar = d[AM_RIG_ARTICULATED], *hi = d[AM_RIG_HIERARCHICAL],
                     *fr = d[AM_RIG_FREE];
    if (!au || !ar || !hi || !fr) goto done;
    printf("  sliding leaf: free %.4f%%, articulated %.4f%%, auto %.4f%% (%zu translating), hierarchical %.6f%%, "
           "free rig %.6f%%\n",
           au->err_visible_free, ar->err_visible, au->err_visible, au->translating_count, hi->err_visible,
           fr->err_visible);
    for (int m = 0; m < AM_RIG_MODE_COUNT; m++) {
        AM_CHECK(d[m]->rig_mode == (am_rig_mode)m);
        /* the same decomposition before the rig: the modes differ only in the refit */
        AM_CHECK_NEAR(d[m]->err_visible_free, au->err_visible_free, 1e-12);
        double files = ami_rig_err_visible(d[m], tr);
        AM_CHECK_MSG(fabs(files - d[m]->err_visible) < 1e-4 * d[m]->err_visible + 1e-6,
                     "mode %d: rig + motion reconstruct at %.6f%%, the run says %.6f%%", m, files, d[m]->err_visible);
        AM_CHECK(d[m]->translating && (d[m]->translating_count > 0) == (d[m]->motion->loc != NULL));
    }
    /* articulated: no channels, and it cannot follow the slide */
    AM_CHECK(ar->translating_count == 0 && ar->err_visible_articulated >= 0.0);
    AM_CHECK_MSG(ar->err_visible > 2.0 * ar->err_visible_free, "articulated %.4f%% vs free %.4f%%", ar->err_visible,
                 ar->err_visible_free);
    /* hierarchical and free: every non-root bone translates, the free fit exactly */
    AM_CHECK(hi->translating_count == 3 && fr->translating_count == 3);
    AM_CHECK_NEAR(hi->err_visible, hi->err_visible_free, 1e-6);
    AM_CHECK_NEAR(fr->err_visible, fr->err_visible_free, 1e-6);
    for (size_t b = 0; b < fr->rig->bone_count; b++) /* free: every bone a child of the root */
        AM_CHECK(fr->rig->parent[b] < 0 || fr->rig->parent[fr->rig->parent[b]] < 0);
    /* auto: one channel set, on the bone that holds the telescoping leaf's points */
    AM_CHECK_MSG(au->translating_count == 1, "auto gave %zu bones translation", au->translating_count);
    AM_CHECK_MSG(au->err_visible <= AM_RIG_AUTO_TOLERANCE * au->err_visible_free * 1.02, "auto %.4f%% vs free %.4f%%",
                 au->err_visible, au->err_visible_free);
    size_t on_leaf = 0, leaf = 0;
    for (size_t n = 3 * 150; n < 4 * 150; n++) {
        int dom = 0;
        for (int k = 1; k < 4; k++)
            if (au->weight[n * 4 + k] > au->weight[n * 4 + dom]) dom = k;
        on_leaf += au->translating[au->bone_index[n * 4 + dom]] != 0;
        leaf++;
    }
    AM_CHECK_MSG(on_leaf > leaf * 3 / 4, "%zu of the leaf's %zu points on the translating bone", on_leaf, leaf);
    /* loc: zero on pinned bones, and it really moves on the translating one */
    double span = 0.0;
    size_t B = au->bone_count, T = tr->frame_count;
    for (size_t b = 0; au->motion->loc && b < B; b++) {
        double lo = INFINITY, hi_v = -INFINITY;
        for (size_t t = 0; t < T; t++) {
            const double *l = au->motion->loc + (t * B + b) * 3;
            if (!au->translating[b]) AM_CHECK(l[0] == 0.0 && l[1] == 0.0 && l[2] == 0.0);
            double v = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
            lo = fmin(lo, v), hi_v = fmax(hi_v, v);
        }
        if (au->translating[b]) span = hi_v - lo;
    }
    AM_CHECK_MSG(span > 0.03, "the translating bone's loc spans %.4f m (the slide spans 0.12 m)", span);
done:
    for (int m = 0; m < AM_RIG_MODE_COUNT; m++) am_decomposition_free(d[m]);
    am_tracks_free(tr);
}

/* Hidden entries of lost tracks (issue 10 item 4): on a walking quadruped with tracks lost for
 * good and occluders (15% hidden), a bone whose points are seen in a few frames only must move
 * with the body in the others. Held in world space (before ami_fill_unsupported carried it by
 * a supported bone, and before a quarter of the bone's points counted as support) its points
 * stayed behind while the body walked on: hidden entries 6.9% of body size against 0.3% for
 * the visible ones (points seen in frames 67-78 only: 1.06 body sizes off at frame 0); now 3.3%.
 * Far from the 1.5x of visible, but points seen in a handful of frames (2% of the
 * points here) dominate what is left, and 5 points are never seen at all. */
static void decompose_hidden_lost_tracks(void)
{
    am_error err = {0};
    am_synth_opts so = {.plan = AM_SYNTH_QUADRUPED, .motion = AM_SYNTH_WALK, .seed = 21, .points = 1500, .frames = 90};
    am_synth_clip *c = NULL;
    AM_CHECK_OK(am_synth_tracks(&so, &c, &err), &err);
    if (!c) return;
    am_decomposition *d = NULL;
    am_decompose_opts o = {.bones = 12, .rig_mode = AM_RIG_ARTICULATED};
    AM_CHECK_OK(am_decompose_run(c->tracks, &o, &d, &err), &err);
    if (d) {
        size_t T = c->tracks->frame_count, N = c->tracks->point_count;
        float *rec = am_alloc_array(T * N * 3, sizeof(float));
        AM_CHECK_OK(am_skin_reconstruct(d->rig, d->motion, N, d->rest, d->bone_index, d->weight, rec, &err), &err);
        double e_vis = 100.0 * ami_mean_err(rec, c->truth, T * N, c->tracks, 1) / c->body_size;
        double e_hid = 100.0 * ami_mean_err(rec, c->truth, T * N, c->tracks, 2) / c->body_size;
        printf("  lost tracks: visible %.3f%%, hidden %.3f%% of body size vs truth\n", e_vis, e_hid);
        AM_CHECK_MSG(e_hid < 4.5, "hidden entries %.3f%% of body size (6.9%% when held in world space)", e_hid);
        AM_CHECK(e_vis < 0.5);
        am_free(rec);
    }
    am_decomposition_free(d);
    am_synth_clip_free(c);
}

/* An exact-LBS clip (no noise, nothing hidden) whose bind pose is in no frame: the chain's joints
 * are bent in every frame, so the rest must be fitted, not read off a frame. The robust
 * weighting (Huber clip, track weights) treated the blend regions' residuals as outliers and
 * held the fit back; the least-squares polish (polish.c) lowers it by a third. Measured on
 * the written rig (FK of rig + motion, skin), every bone translating as in Dem Bones, and on
 * the auto rig. (Not to ~0.01 %: this chain converges slowly, at 200 iterations still 0.15 %.) */
static void decompose_clean_polish(void)
{
    float *truth = NULL;
    am_tracks *tr = ami_chain(4, 120, 40, 0.0, 0.0, &truth);
    am_error err = {0};
    size_t T = tr->frame_count, N = tr->point_count;
    float *rec = am_alloc_array(T * N * 3, sizeof(float));
    am_rig_mode modes[2] = {AM_RIG_FREE, AM_RIG_AUTO};
    for (int m = 0; m < 2; m++) {
        am_decomposition *d = NULL;
        am_decompose_opts o = {.bones = 4, .rig_mode = modes[m]};
        AM_CHECK_OK(am_decompose_run(tr, &o, &d, &err), &err);
        if (!d) continue;
        AM_CHECK_OK(am_skin_reconstruct(d->rig, d->motion, N, d->rest, d->bone_index, d->weight, rec, &err), &err);
        double e = 100.0 * ami_mean_err(rec, truth, T * N, tr, 0) / d->body_size;
        printf("  clean chain (%s): %.5f%% of body size, polish %d, free bones %.5f%%\n", m ? "auto" : "free", e,
               d->polish, d->err_visible_free);
        AM_CHECK(d->polish == 1);
        /* robust fit alone (the code before the polish): 0.260% free, 0.259% auto; now 0.179%, 0.172% */
        AM_CHECK_MSG(e < 0.2, "clean exact-LBS chain: %.5f%% of body size (0.26%% without the polish)", e);
        am_decomposition_free(d);
    }
    /* noisy data keeps the robust fit: the polish is not run */
    am_tracks *nz = ami_chain(4, 120, 40, 0.003, 0.0, NULL);
    am_decomposition *d = NULL;
    am_decompose_opts o = {.bones = 4};
    AM_CHECK_OK(am_decompose_run(nz, &o, &d, &err), &err);
    if (d) AM_CHECK(d->polish == 0);
    am_decomposition_free(d);
    am_tracks_free(nz);
    am_free(rec);
    am_tracks_free(tr);
    am_free(truth);
}

static void synth_deterministic_and_degraded(void)
{
    am_error err = {0};
    for (int p = 0; p < AM_SYNTH_PLAN_COUNT; p++) {
        am_synth_opts o = {.plan = (am_synth_plan)p, .motion = AM_SYNTH_WALK, .seed = 5, .points = 300, .frames = 30};
        am_synth_clip *a = NULL, *b = NULL;
        AM_CHECK_OK(am_synth_tracks(&o, &a, &err), &err);
        AM_CHECK_OK(am_synth_tracks(&o, &b, &err), &err);
        if (!a || !b) {
            am_synth_clip_free(a);
            am_synth_clip_free(b);
            continue;
        }
        size_t TN = 30 * 300, hidden = 0;
        AM_CHECK(memcmp(a->truth, b->truth, TN * 3 * sizeof(float)) == 0);
        AM_CHECK(memcmp(a->tracks->visible, b->tracks->visible, TN) == 0);
        for (size_t i = 0; i < TN; i++) {
            bool nan = isnan(a->tracks->points[i * 3]);
            AM_CHECK(nan == !a->tracks->visible[i]);
            hidden += nan;
        }
        AM_CHECK_MSG(hidden > TN / 20 && hidden < TN / 3, "plan %d: %zu of %zu hidden", p, hidden, TN);
        AM_CHECK(a->bone_count >= 10 && a->joint_count > a->bone_count / 2 && a->body_size > 0.1);
        for (size_t j = 0; j < a->joint_count; j++) AM_CHECK(a->parents[j] < (int32_t)j);
        am_synth_clip_free(a);
        am_synth_clip_free(b);
    }
    am_synth_opts bad = {.plan = AM_SYNTH_PLAN_COUNT};
    am_synth_clip *c = NULL;
    AM_CHECK_STATUS(am_synth_tracks(&bad, &c, &err), AM_E_ARG);
}

static void metrics_recon_and_chamfer(void)
{
    /* two frames, two points; the prediction is off by 1 cm everywhere */
    float truth[12] = {0, 0, 0, 3, 4, 0, 0, 0, 1, 3, 4, 1}, pred[12];
    for (int i = 0; i < 12; i++) pred[i] = truth[i] + (i % 3 == 0 ? 0.01f : 0.0f);
    uint8_t vis[4] = {1, 0, 1, 1};
    am_track_errors te;
    am_error err = {0};
    AM_CHECK_OK(am_track_recon_error(pred, truth, vis, 2, 2, &te, &err), &err);
    AM_CHECK_NEAR(te.body_size, 5.0, 1e-9);
    AM_CHECK_NEAR(te.recon_all, 100.0 * 0.01 / 5.0, 1e-6);
    AM_CHECK_NEAR(te.recon_hidden, 100.0 * 0.01 / 5.0, 1e-6);
    AM_CHECK(te.hidden_count == 1);
    pred[4] = NAN;
    AM_CHECK_STATUS(am_track_recon_error(pred, truth, vis, 2, 2, &te, &err), AM_E_NONFINITE);
    /* chamfer: one true joint, predicted at distance 1 and 3: 0.5 * (1 + (1 + 3) / 2) = 1.5 */
    double pj[6] = {1, 0, 0, 3, 0, 0};
    float tj[3] = {0, 0, 0};
    AM_CHECK_NEAR(am_joint_chamfer(pj, 2, tj, 1, 1), 1.5, 1e-12);
    AM_CHECK(isnan(am_joint_chamfer(pj, 2, tj, 0, 1)));
}

#define AM_TESTS(X) X(decompose_validity) X(decompose_recovers_chain) X(decompose_articulated_refit_walk) X(decompose_auto_bones) X(decompose_auto_pick_curves) \
    X(decompose_rig_modes_sliding_leaf) X(decompose_hidden_lost_tracks) X(decompose_clean_polish) \
    X(synth_deterministic_and_degraded) X(metrics_recon_and_chamfer)
AM_TEST_MAIN(AM_TESTS)
