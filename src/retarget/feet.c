/* Feet (docs/retarget.md, "Feet"). The source's plants are found as the capture fit finds its
 * own (am_plants_find of fit.h, thresholds scaled from the wolf's body to the source's);
 * on the target each plant is held still in the ground's frame (a treadmill clip's ground
 * moves at the source's ground speed times the leg ratio), the frames either side blend from
 * the held spot back to the transferred motion, and no contact sinks below its floor. The IK
 * moves the leg above the foot, the foot keeping its world orientation: a thigh and a shin are
 * solved in closed form with the knee kept in its plane; longer legs (a dog's hock) by the
 * shared least-squares solver (anymove/opt.h) with a small pull toward the transferred pose.
 *
 * This work is based on:
 * - The two-bone analytic IK (law of cosines, the pole kept in the leg's plane), as in
 *   Unreal's Two Bone IK and Blender's IK with a pole target.
 * - The left Jacobian of SO(3) for the rotation-vector parametrisation (J. Sola, J. Deray,
 *   D. Atchuthan, "A micro Lie theory for state estimation in robotics", 2018).
 */
#include <math.h>
#include <string.h>

#include "anymove/fit.h"
#include "anymove/math.h"
#include "anymove/opt.h"
#include "core/internal.h"
#include "retarget_internal.h"

#define AMI_MAX_IK_BONES 8
/* The capture fit's plant thresholds are for a body the wolf's size. */
#define AMI_WOLF_SIZE 2.1

typedef struct ami_contact {
    int32_t chain;
    int32_t foot;          /* target bone whose end is the contact */
    int32_t ankle;         /* target bone at the top of the foot segment (keeps its orientation) */
    bool use_head;         /* the contact is the foot bone's head (its tail points up) */
    int32_t sfoot;         /* source bone of foot */
    int32_t ik[AMI_MAX_IK_BONES]; /* IK bones, hip first */
    size_t nik;
    double floor;
    bool is_leg;
} ami_contact;

/* A contact point of a rig's frame: head, or tail = head + G (rest tail - rest head). */
static void ami_end_point(const ami_skel *sk, const double *g, const double *h, int32_t b, bool head, double out[3])
{
    memcpy(out, h + 3 * (size_t)b, 3 * sizeof(double));
    if (head) return;
    double d[3], v[3];
    am_vec3_sub(sk->tails + 3 * (size_t)b, sk->heads + 3 * (size_t)b, d);
    am_quat_rotate(g + 4 * (size_t)b, d, v);
    am_vec3_add(out, v, out);
}

bool ami_contact_on_head(const ami_skel *st, int32_t foot)
{
    return st->heads[3 * (size_t)foot + 2] < st->tails[3 * (size_t)foot + 2] - 0.02 * st->height;
}

static bool ami_has_driver(const am_retarget_map *map, int32_t g)
{
    return map->source[g] >= 0 && map->rule[g] != AM_RETARGET_RULE_CHAIN;
}

/* The legs (and arms with IK_HANDS) the pass works on. */
static size_t ami_contacts(const ami_run *r, ami_contact *out, size_t cap)
{
    const am_retarget_map *map = r->map;
    const ami_skel *st = &r->st;
    size_t n = 0;
    for (size_t c = 0; c < map->chain_count && n < cap; c++) {
        const am_retarget_chain *ch = &map->chains[c];
        if (ch->foot < 0 || !(ch->is_leg || (ch->is_arm && (r->opts.flags & AM_RETARGET_IK_HANDS)))) continue;
        ami_contact k = {.chain = (int32_t)c, .foot = ch->foot, .sfoot = map->source[ch->foot], .is_leg = ch->is_leg};
        k.use_head = ami_contact_on_head(st, ch->foot);
        /* The foot segment: the bones at the end of the limb whose heads sit in the lowest
         * quarter of the leg (foot, toes) keep their world orientation; for an arm, the last
         * bone alone (the hand). */
        k.ankle = ch->foot;
        double top = st->heads[3 * (size_t)ch->target_first + 2] - st->min_z;
        if (ch->is_leg)
            while (k.ankle != ch->target_first) {
                int32_t p = st->spar[k.ankle];
                if (p < 0 || st->heads[3 * (size_t)p + 2] - st->min_z > 0.25 * top) break;
                k.ankle = p;
            }
        /* IK bones: the mapped bones above the ankle, up to the first without a driver */
        int32_t tmp[AMI_MAX_IK_BONES];
        size_t m = 0;
        for (int32_t b = k.ankle; b != ch->target_first && m < AMI_MAX_IK_BONES;) {
            b = st->spar[b];
            if (b < 0 || !ami_has_driver(map, b)) break;
            tmp[m++] = b;
        }
        for (size_t i = 0; i < m; i++) k.ik[i] = tmp[m - 1 - i];
        k.nik = m;
        /* a short girdle bone at the top (a dog's shoulder blade, a hip bone) stays with the
         * body */
        if (k.nik >= 3) {
            double total = 0.0;
            for (size_t i = 0; i < k.nik; i++) total += r->T->length[k.ik[i]];
            if (r->T->length[k.ik[0]] < 0.2 * total) {
                memmove(k.ik, k.ik + 1, (k.nik - 1) * sizeof *k.ik);
                k.nik--;
            }
        }
        /* the contact's height when the target stands on its ground: its height in the
         * reference pose above that pose's lowest foot (a toe's tip 0, an ankle its own height) */
        double ref[3];
        ami_end_point(st, r->tref, r->tref_heads, k.foot, k.use_head, ref);
        k.floor = ref[2] - r->feet_ref > 0 ? ref[2] - r->feet_ref : 0.0;
        out[n++] = k;
    }
    return n;
}

/* ---- IK ------------------------------------------------------------------------------------ */

/* Two bones b1 (hip to knee) and b2 (knee to ankle): the ankle to `goal`, the knee in the plane
 * of hip, knee and ankle. Returns the distance left (beyond reach). */
static double ami_two_bone(ami_run *r, size_t t, const ami_contact *k, const double goal[3])
{
    const ami_skel *st = &r->st;
    size_t B = st->B;
    double *g = r->gt + t * B * 4, *h = r->ht + t * B * 3;
    int32_t b1 = k->ik[0], b2 = k->ik[1];
    double h0[3], kn[3], an[3];
    memcpy(h0, h + 3 * (size_t)b1, sizeof h0);
    memcpy(kn, h + 3 * (size_t)b2, sizeof kn);
    memcpy(an, h + 3 * (size_t)k->ankle, sizeof an);
    if (r->disp) am_vec3_sub(an, r->disp + (t * B + (size_t)k->ankle) * 3, an);
    double l1 = am_vec3_dist(st->heads + 3 * (size_t)b2, st->heads + 3 * (size_t)b1);
    double l2 = am_vec3_dist(st->heads + 3 * (size_t)k->ankle, st->heads + 3 * (size_t)b2);
    double d[3], u[3];
    am_vec3_sub(goal, h0, d);
    double dist = am_vec3_normalize(d, u);
    if (!(dist > 0) || !(l1 > 0) || !(l2 > 0)) return am_vec3_dist(an, goal);
    double lo = fabs(l1 - l2) * 1.000001, hi = (l1 + l2) * 0.999999;
    double dc = dist < lo ? lo : dist > hi ? hi : dist;
    /* the knee's side: its offset from the hip-ankle line now */
    double kk[3], perp[3];
    am_vec3_sub(kn, h0, kk);
    am_vec3_madd(kk, -am_vec3_dot(kk, u), u, perp);
    if (am_vec3_normalize(perp, perp) < 1e-9 * l1) {
        double ak[3], n[3];
        am_vec3_sub(an, h0, ak);
        am_vec3_cross(ak, kk, n);
        if (am_vec3_normalize(n, n) < 1e-12) am_vec3_perpendicular(u, perp);
        else am_vec3_cross(n, u, perp);
    }
    double ca = (l1 * l1 + dc * dc - l2 * l2) / (2 * l1 * dc);
    ca = ca > 1 ? 1 : ca < -1 ? -1 : ca;
    double sa = sqrt(1 - ca * ca), kn2[3];
    for (int i = 0; i < 3; i++) kn2[i] = h0[i] + l1 * (ca * u[i] + sa * perp[i]);
    double s1[4], s2[4], a0[3], a1[3], reach[3];
    am_vec3_sub(kn2, h0, a1);
    am_quat_from_two_vectors(kk, a1, s1);
    am_quat_mul(s1, g + 4 * (size_t)b1, g + 4 * (size_t)b1);
    am_quat_normalize(g + 4 * (size_t)b1, g + 4 * (size_t)b1);
    am_vec3_sub(an, kn, a0);
    am_vec3_madd(h0, dc, u, reach);
    am_vec3_sub(reach, kn2, a1);
    am_quat_from_two_vectors(a0, a1, s2);
    am_quat_mul(s2, g + 4 * (size_t)b2, g + 4 * (size_t)b2);
    am_quat_normalize(g + 4 * (size_t)b2, g + 4 * (size_t)b2);
    return fabs(dist - dc);
}

/* Longer legs: rotation vectors d_i on each bone's world delta, the ankle to the goal, a small
 * pull to the transferred pose. */
typedef struct ami_lm_leg {
    size_t n;
    double h0[3], goal[3];
    double v[AMI_MAX_IK_BONES][3]; /* segment vectors of the transferred pose */
    double scale;                  /* 1 / leg length */
} ami_lm_leg;

#define AMI_IK_PULL 0.002

static void ami_left_jacobian(const double d[3], double J[9])
{
    double th = am_vec3_norm(d), K[9] = {0, -d[2], d[1], d[2], 0, -d[0], -d[1], d[0], 0}, K2[9];
    am_mat3_mul(K, K, K2);
    double a, b;
    if (th < 1e-6) {
        a = 0.5 - th * th / 24;
        b = 1.0 / 6 - th * th / 120;
    } else {
        a = (1 - cos(th)) / (th * th);
        b = (th - sin(th)) / (th * th * th);
    }
    for (int i = 0; i < 9; i++) J[i] = (i % 4 == 0 ? 1.0 : 0.0) + a * K[i] + b * K2[i];
}

static am_status ami_lm_eval(void *user, const double *x, am_lsq_sink *sink)
{
    const ami_lm_leg *L = user;
    size_t n = L->n;
    double a[3], w[AMI_MAX_IK_BONES][3];
    memcpy(a, L->h0, sizeof a);
    for (size_t i = 0; i < n; i++) {
        double q[4];
        am_quat_from_rotvec(x + 3 * i, q);
        am_quat_rotate(q, L->v[i], w[i]);
        am_vec3_add(a, w[i], a);
    }
    double res[3];
    for (int k = 0; k < 3; k++) res[k] = L->scale * (a[k] - L->goal[k]);
    int32_t cols[3 * AMI_MAX_IK_BONES];
    double jac[3 * 3 * AMI_MAX_IK_BONES];
    for (size_t c = 0; c < 3 * n; c++) cols[c] = (int32_t)c;
    bool want = am_lsq_sink_wants_jacobian(sink);
    if (want)
        for (size_t i = 0; i < n; i++) {
            /* d(exp(d) v)/dd = -[w]x J_l(d) */
            double Jl[9], S[9] = {0, -w[i][2], w[i][1], w[i][2], 0, -w[i][0], -w[i][1], w[i][0], 0}, M[9];
            ami_left_jacobian(x + 3 * i, Jl);
            am_mat3_mul(S, Jl, M);
            for (int rr = 0; rr < 3; rr++)
                for (int cc = 0; cc < 3; cc++) jac[(size_t)rr * 3 * n + 3 * i + (size_t)cc] = -L->scale * M[rr * 3 + cc];
        }
    am_lsq_add(sink, 3, res, 3 * n, cols, want ? jac : NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        double rr[3] = {AMI_IK_PULL * x[3 * i], AMI_IK_PULL * x[3 * i + 1], AMI_IK_PULL * x[3 * i + 2]};
        double J[9] = {AMI_IK_PULL, 0, 0, 0, AMI_IK_PULL, 0, 0, 0, AMI_IK_PULL};
        int32_t c3[3] = {(int32_t)(3 * i), (int32_t)(3 * i + 1), (int32_t)(3 * i + 2)};
        am_lsq_add(sink, 3, rr, 3, c3, want ? J : NULL, NULL);
    }
    return AM_OK;
}

static am_status ami_lm_solve(ami_run *r, size_t t, const ami_contact *k, const double goal[3], am_lsq **ws,
                              ami_lm_leg *L, double *left, am_error *err)
{
    const ami_skel *st = &r->st;
    size_t B = st->B, n = k->nik;
    double *g = r->gt + t * B * 4, *h = r->ht + t * B * 3;
    L->n = n;
    memcpy(L->h0, h + 3 * (size_t)k->ik[0], sizeof L->h0);
    memcpy(L->goal, goal, sizeof L->goal);
    double len = 0.0;
    for (size_t i = 0; i < n; i++) {
        int32_t nxt = i + 1 < n ? k->ik[i + 1] : k->ankle;
        am_vec3_sub(h + 3 * (size_t)nxt, h + 3 * (size_t)k->ik[i], L->v[i]);
        if (r->disp) am_vec3_sub(L->v[i], r->disp + (t * B + (size_t)nxt) * 3, L->v[i]);
        len += am_vec3_norm(L->v[i]);
    }
    L->scale = len > 0 ? 1.0 / len : 1.0;
    if (!*ws) {
        am_lsq_problem pb = {.param_count = 3 * n, .eval = ami_lm_eval, .user = L};
        AMI_TRY(am_lsq_create(&pb, ws, err));
    }
    double x[3 * AMI_MAX_IK_BONES] = {0};
    am_lsq_opts lo = {.max_iterations = 30, .ftol = 1e-14, .xtol = 1e-12, .gtol = 1e-14};
    am_status s = am_lsq_solve(*ws, x, &lo, NULL, err);
    if (s < 0) return s;
    double a[3];
    memcpy(a, L->h0, sizeof a);
    for (size_t i = 0; i < n; i++) {
        double q[4], w[3];
        am_quat_from_rotvec(x + 3 * i, q);
        am_quat_rotate(q, L->v[i], w);
        am_vec3_add(a, w, a);
        double *G = g + 4 * (size_t)k->ik[i];
        am_quat_mul(q, G, G);
        am_quat_normalize(G, G);
    }
    *left = am_vec3_dist(a, goal);
    return AM_OK;
}

/* Bones without a driver follow their parent again once the IK moved it. */
static void ami_refollow(ami_run *r, size_t t)
{
    const ami_skel *st = &r->st;
    size_t B = st->B;
    double *g = r->gt + t * B * 4;
    for (size_t i = 1; i < B; i++) {
        size_t b = (size_t)st->order[i];
        int32_t p = r->T->parent[b];
        if (r->map->source[b] >= 0 || p < 0) continue;
        double pi[4], rel[4];
        am_quat_conj(r->tref + 4 * (size_t)p, pi);
        am_quat_mul(pi, r->tref + 4 * b, rel);
        am_quat_mul(g + 4 * (size_t)p, rel, g + 4 * b);
    }
}

/* 0 -> 0, 1 -> 1, flat at both ends. */
static double ami_smooth(double x) { return x <= 0 ? 0 : x >= 1 ? 1 : x * x * (3 - 2 * x); }

am_status ami_feet(ami_run *r, am_error *err)
{
    const ami_skel *ss = &r->ss, *st = &r->st;
    size_t T = r->frames, Bs = ss->B, Bt = st->B;
    ami_contact *ks = am_alloc_array(r->map->chain_count + 1, sizeof *ks);
    AMI_CHECK(err, ks, AM_E_NOMEM, "contacts");
    size_t C = ami_contacts(r, ks, r->map->chain_count);
    double *cs = am_alloc_array(T * C * 3 + 1, sizeof *cs), *ct = am_alloc_array(T * C * 3 + 1, sizeof *ct);
    double *floor_s = am_alloc_array(C + 1, sizeof *floor_s), *plant_z = am_alloc_array(T * C + 1, sizeof *plant_z);
    uint8_t *plant = am_alloc_array(T * C + 1, 1);
    int32_t *idx = am_alloc_array(C + 1, sizeof *idx);
    am_lsq **ws = am_alloc_array(C + 1, sizeof *ws);
    ami_lm_leg *legs = am_alloc_array(C + 1, sizeof *legs);
    am_status s = AM_OK;
    am_retarget_report *rep = r->report;
    if (!cs || !ct || !floor_s || !plant_z || !plant || !idx || !ws || !legs) {
        s = AM_FAIL(err, AM_E_NOMEM, "feet of %zu frames", T);
        goto done;
    }
    /* contact points of both rigs over the clip */
    for (size_t t = 0; t < T; t++)
        for (size_t c = 0; c < C; c++) {
            ami_end_point(ss, r->gs + t * Bs * 4, r->hs + t * Bs * 3, ks[c].sfoot, ks[c].use_head, cs + (t * C + c) * 3);
            ami_end_point(st, r->gt + t * Bt * 4, r->ht + t * Bt * 3, ks[c].foot, ks[c].use_head, ct + (t * C + c) * 3);
        }
    /* Floors of the source: a foot's lowest point in the clip; hands plant only on the
     * feet's ground. */
    double ground = INFINITY;
    for (size_t c = 0; c < C; c++) {
        idx[c] = (int32_t)c;
        floor_s[c] = INFINITY;
        for (size_t t = 0; t < T; t++)
            if (cs[(t * C + c) * 3 + 2] < floor_s[c]) floor_s[c] = cs[(t * C + c) * 3 + 2];
        if (ks[c].is_leg && floor_s[c] < ground) ground = floor_s[c];
    }
    if (!isfinite(ground)) ground = ss->min_z;
    for (size_t c = 0; c < C; c++)
        if (!ks[c].is_leg) floor_s[c] = ground;
    double k = ss->size / AMI_WOLF_SIZE;
    am_plant_opts po = {.height = AM_PLANT_HEIGHT * k, .speed = AM_PLANT_SPEED * k, .grow = 0.03 * k,
                        .grow_height = AM_PLANT_GROW_HEIGHT * k, .still = AM_PLANT_STILL * k};
    double vgs[3] = {0, 0, 0}, vgt[3];
    if (C && (s = am_plants_find(cs, T, C, r->fps, idx, floor_s, C, &po, plant, plant_z, vgs, err)) != AM_OK) goto done;
    for (int d = 0; d < 3; d++) vgt[d] = r->scale[d] * vgs[d];
    vgt[2] = 0.0;
    size_t ik_frames = 0;
    double ik_left = 0.0;
    if (!(r->opts.flags & AM_RETARGET_NO_IK) && C) {
        ami_stage stage = ami_stage_begin("retarget: feet");
        /* Goals: the held spot inside a plant (moving with the ground), a blend back to the
         * transferred motion either side, the floor everywhere. held [T][C][3] with weight
         * [T][C] (0: the transferred position). */
        size_t nb = (size_t)fmax(2.0, round(0.1 * r->fps));
        double *held = am_alloc_array(T * C * 3, sizeof *held), *wgt = am_alloc_array(T * C, sizeof *wgt);
        double *drop = am_alloc_array(T, sizeof *drop), *drop_s = am_alloc_array(T, sizeof *drop_s);
        if (!held || !wgt || !drop || !drop_s) {
            am_free(held);
            am_free(wgt);
            am_free(drop);
            am_free(drop_s);
            s = AM_FAIL(err, AM_E_NOMEM, "feet");
            goto done;
        }
        for (size_t c = 0; c < C; c++) {
            for (size_t t0 = 0; t0 < T;) {
                if (!plant[t0 * C + c]) {
                    t0++;
                    continue;
                }
                size_t t1 = t0;
                while (t1 + 1 < T && plant[(t1 + 1) * C + c]) t1++;
                double spot[3];
                am_plant_spot(ct, C, r->fps, vgt, c, t0, t1, spot);
                /* as high over the target's floor as the source's plant is over its own,
                 * scaled. A leg's own floor is its contact's height when the source stands on
                 * the ground the root's height is measured from (z = 0, r->sfloor), not its
                 * lowest point in the clip: in a standing clip that is the plant itself, and a
                 * toe joint that stands 5 cm over the ground inside its paw was pulled 5 cm into
                 * it, the pelvis dropped to let the legs reach (docs/retarget.md, "Feet"). */
                double own = ks[c].is_leg ? r->sfloor[ks[c].chain] : floor_s[c];
                spot[2] = ks[c].floor + r->scale[2] * (plant_z[t0 * C + c] - own);
                long lo = (long)t0 - (long)nb, hi = (long)t1 + (long)nb;
                for (long t = lo < 0 ? 0 : lo; t <= hi && t < (long)T; t++) {
                    double w = 1.0;
                    if (t < (long)t0) w = ami_smooth((double)(t - lo) / (double)(nb + 1));
                    else if (t > (long)t1) w = ami_smooth((double)(hi - t) / (double)(nb + 1));
                    /* a neighbouring plant's own frames are its own, and of two blends the
                     * stronger wins */
                    if ((t < (long)t0 || t > (long)t1) && (plant[(size_t)t * C + c] || wgt[(size_t)t * C + c] >= w)) continue;
                    wgt[(size_t)t * C + c] = w;
                    for (int d = 0; d < 3; d++)
                        held[((size_t)t * C + c) * 3 + (size_t)d] = spot[d] + vgt[d] * ((double)t - (double)t0) / r->fps;
                }
                t0 = t1 + 1;
            }
        }
        /* The pelvis comes down where a leg cannot reach its goal straight (a shorter-legged
         * target, a source whose plants drift): the least drop that lets every leg reach,
         * spread smoothly over the neighbouring frames. */
        for (size_t t = 0; t < T; t++) {
            drop[t] = 0.0;
            for (size_t c = 0; c < C; c++) {
                if (ks[c].nik < 2) continue;
                double gp[3], a_goal[3], off[3];
                const double *fr = ct + (t * C + c) * 3, *hp = held + (t * C + c) * 3;
                double w = wgt[t * C + c];
                for (int d = 0; d < 3; d++) gp[d] = w * hp[d] + (1 - w) * fr[d];
                if (gp[2] < ks[c].floor) gp[2] = ks[c].floor;
                if (am_vec3_dist(gp, fr) <= 1e-9 * st->size) continue;
                am_vec3_sub(fr, r->ht + (t * Bt + (size_t)ks[c].ankle) * 3, off);
                am_vec3_sub(gp, off, a_goal);
                if (r->disp) am_vec3_sub(a_goal, r->disp + (t * Bt + (size_t)ks[c].ankle) * 3, a_goal);
                const double *h0 = r->ht + (t * Bt + (size_t)ks[c].ik[0]) * 3;
                double reach = 0.0;
                for (size_t i = 0; i < ks[c].nik; i++) {
                    int32_t nxt = i + 1 < ks[c].nik ? ks[c].ik[i + 1] : ks[c].ankle;
                    reach += am_vec3_dist(st->heads + 3 * (size_t)nxt, st->heads + 3 * (size_t)ks[c].ik[i]);
                }
                reach *= 0.999;
                double dxy = hypot(a_goal[0] - h0[0], a_goal[1] - h0[1]);
                double dz = h0[2] - a_goal[2] - sqrt(fmax(0.0, reach * reach - dxy * dxy));
                if (dz > drop[t]) drop[t] = dz;
            }
        }
        size_t win = (size_t)fmax(2.0, round(0.15 * r->fps));
        for (size_t t = 0; t < T; t++) {
            drop_s[t] = 0.0;
            size_t a = t > win ? t - win : 0, b = t + win < T ? t + win : T - 1;
            for (size_t u = a; u <= b; u++) {
                double f = ami_smooth(1.0 - fabs((double)u - (double)t) / (double)(win + 1));
                if (drop[u] * f > drop_s[t]) drop_s[t] = drop[u] * f;
            }
            if (drop_s[t] <= 0.0) continue;
            for (size_t g = 0; g < Bt; g++) r->ht[(t * Bt + g) * 3 + 2] -= drop_s[t];
            for (size_t c = 0; c < C; c++) ct[(t * C + c) * 3 + 2] -= drop_s[t];
        }
        for (size_t t = 0; t < T && s == AM_OK; t++) {
            if ((t & 63) == 0 && !ami_progress("retarget: feet", (double)t / (double)T)) {
                s = AM_FAIL(err, AM_E_CANCELLED, "retarget stopped at frame %zu", t);
                break;
            }
            bool moved = false;
            for (size_t c = 0; c < C && s == AM_OK; c++) {
                double gp[3];
                const double *fr = ct + (t * C + c) * 3, *hp = held + (t * C + c) * 3;
                double w = wgt[t * C + c];
                for (int d = 0; d < 3; d++) gp[d] = w * hp[d] + (1 - w) * fr[d];
                if (gp[2] < ks[c].floor) gp[2] = ks[c].floor;
                if (am_vec3_dist(gp, fr) <= 1e-9 * st->size || ks[c].nik < 2) continue;
                /* the ankle where the contact goes, the foot turning as transferred */
                double off[3], a_goal[3], left = 0.0;
                am_vec3_sub(fr, r->ht + (t * Bt + (size_t)ks[c].ankle) * 3, off);
                am_vec3_sub(gp, off, a_goal);
                /* the chain's end is the ankle less its slide off it */
                if (r->disp) am_vec3_sub(a_goal, r->disp + (t * Bt + (size_t)ks[c].ankle) * 3, a_goal);
                if (ks[c].nik == 2) left = ami_two_bone(r, t, &ks[c], a_goal);
                else s = ami_lm_solve(r, t, &ks[c], a_goal, &ws[c], &legs[c], &left, err);
                if (left > ik_left) ik_left = left;
                ik_frames++;
                moved = true;
            }
            if (moved) {
                ami_refollow(r, t);
                ami_target_heads(r, t);
                for (size_t c = 0; c < C; c++)
                    ami_end_point(st, r->gt + t * Bt * 4, r->ht + t * Bt * 3, ks[c].foot, ks[c].use_head,
                                  ct + (t * C + c) * 3);
            }
        }
        am_free(held);
        am_free(wgt);
        am_free(drop);
        am_free(drop_s);
        ami_stage_end(&stage);
        if (s != AM_OK) goto done;
    }
    if (rep) {
        rep->contact_count = C;
        rep->contact_source = am_alloc_array(C + 1, sizeof *rep->contact_source);
        rep->contact_target = am_alloc_array(C + 1, sizeof *rep->contact_target);
        rep->floor = am_alloc_array(C + 1, sizeof *rep->floor);
        rep->below_max = am_alloc_array(C + 1, sizeof *rep->below_max);
        size_t np = 0;
        for (size_t c = 0; c < C; c++)
            for (size_t t = 0; t < T; t++) np += plant[t * C + c] && (t == 0 || !plant[(t - 1) * C + c]);
        rep->plants = am_alloc_array(np + 1, sizeof *rep->plants);
        if (!rep->contact_source || !rep->contact_target || !rep->floor || !rep->below_max || !rep->plants) {
            s = AM_FAIL(err, AM_E_NOMEM, "report");
            goto done;
        }
        for (size_t c = 0; c < C; c++) {
            rep->contact_source[c] = ks[c].use_head ? r->S->head_joint[ks[c].sfoot] : r->S->tail_joint[ks[c].sfoot];
            rep->contact_target[c] = ks[c].use_head ? r->T->head_joint[ks[c].foot] : r->T->tail_joint[ks[c].foot];
            rep->floor[c] = ks[c].floor;
            rep->below_max[c] = 0.0;
            for (size_t t = 0; t < T; t++) {
                double below = ks[c].floor - ct[(t * C + c) * 3 + 2];
                if (below > rep->below_max[c]) rep->below_max[c] = below;
            }
            for (size_t t0 = 0; t0 < T;) {
                if (!plant[t0 * C + c]) {
                    t0++;
                    continue;
                }
                size_t t1 = t0;
                while (t1 + 1 < T && plant[(t1 + 1) * C + c]) t1++;
                rep->plants[rep->plant_count++] =
                    (am_retarget_plant){.contact = (uint32_t)c, .first = (uint32_t)t0, .last = (uint32_t)t1,
                                        .source_slide = am_plant_drift(cs, C, r->fps, vgs, c, t0, t1),
                                        .target_slide = am_plant_drift(ct, C, r->fps, vgt, c, t0, t1)};
                t0 = t1 + 1;
            }
        }
        memcpy(rep->ground_vel_source, vgs, sizeof vgs);
        memcpy(rep->ground_vel_target, vgt, sizeof vgt);
        rep->ik_frames = ik_frames;
        rep->ik_residual_max = ik_left;
        /* chain directions: from the head of the first bone with a driver of its own to the head
         * of the last (a leaf's tail may be a guess), both rigs */
        double sum = 0.0, mx = 0.0;
        size_t cnt = 0;
        const am_retarget_map *map = r->map;
        for (size_t c = 0; c < map->chain_count; c++) {
            const am_retarget_chain *ch = &map->chains[c];
            int32_t g1 = -1, g2 = -1;
            for (int32_t g = ch->target_last; g >= 0; g = st->spar[g]) {
                if (ami_has_driver(map, g)) {
                    if (g2 < 0) g2 = g;
                    g1 = g;
                }
                if (g == ch->target_first) break;
            }
            if (g1 < 0 || map->source[g1] == map->source[g2]) continue;
            for (size_t t = 0; t < T; t++) {
                double a0[3], a1[3], b0[3], b1[3], va[3], vb[3];
                ami_end_point(ss, r->gs + t * Bs * 4, r->hs + t * Bs * 3, map->source[g1], true, a0);
                ami_end_point(ss, r->gs + t * Bs * 4, r->hs + t * Bs * 3, map->source[g2], true, a1);
                ami_end_point(st, r->gt + t * Bt * 4, r->ht + t * Bt * 3, g1, true, b0);
                ami_end_point(st, r->gt + t * Bt * 4, r->ht + t * Bt * 3, g2, true, b1);
                am_vec3_sub(a1, a0, va);
                am_vec3_sub(b1, b0, vb);
                double na = am_vec3_norm(va), nb2 = am_vec3_norm(vb);
                if (!(na > 0) || !(nb2 > 0)) continue;
                double cosang = am_vec3_dot(va, vb) / (na * nb2);
                double ang = AM_DEG(acos(cosang > 1 ? 1 : cosang < -1 ? -1 : cosang));
                sum += ang;
                cnt++;
                if (ang > mx) mx = ang;
            }
        }
        rep->chain_angle_mean_deg = cnt ? sum / (double)cnt : 0.0;
        rep->chain_angle_max_deg = mx;
    }
done:
    for (size_t c = 0; ws && c < C; c++) am_lsq_free(ws[c]);
    am_free(ws);
    am_free(legs);
    am_free(ks);
    am_free(cs);
    am_free(ct);
    am_free(floor_s);
    am_free(plant_z);
    am_free(plant);
    am_free(idx);
    return s;
}
