/* Procedural creatures and tracker degradations for Track2Rig (include/anymove/synth.h).
 *
 * A creature is a tree of capsule bones with per-bone rotation channels about world-rest
 * axes through the bone's head; walk cycles give every limb a phase in the gait (lateral
 * sequence for four legs, alternating tetrapods for eight, alternating for two), snakes a
 * travelling wave. Skin weights fall off with the distance to each capsule's surface, so
 * points near a joint blend its two bones smoothly, as a skinned character does.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/synth.h"
#include "core/internal.h"
#include "math/math_internal.h"

#define AMI_SB 48 /* max bones of a plan */

typedef struct {
    double axis[3];
    double amp, phase, bias, freq; /* angle = bias + amp * wave(freq * cycle + phase) */
    int rect;                       /* 1: only the positive half of the wave (knees) */
} ami_chan;

typedef struct {
    double head[3], tail[3], radius;
    int parent;
    int nch;
    ami_chan ch[3];
} ami_sbone;

typedef struct {
    ami_sbone b[AMI_SB];
    int n;
    double speed;   /* m/s along -Y when walking */
    double freq;    /* cycles per second */
    double bob;     /* root vertical bob amplitude, metres */
    double yaw_amp; /* root heading sway, radians */
} ami_creature;

static double ami_jit(ami_rng *r, double rel) { return 1.0 + rel * (2.0 * ami_rng_uniform(r) - 1.0); }

static int ami_bone(ami_creature *c, int parent, double hx, double hy, double hz, double tx, double ty, double tz,
                    double radius)
{
    ami_sbone *b = &c->b[c->n];
    memset(b, 0, sizeof *b);
    b->head[0] = hx, b->head[1] = hy, b->head[2] = hz;
    b->tail[0] = tx, b->tail[1] = ty, b->tail[2] = tz;
    b->radius = radius;
    b->parent = parent;
    return c->n++;
}

static void ami_chan_add(ami_creature *c, int bone, double ax, double ay, double az, double amp, double phase,
                         double bias, double freq, int rect)
{
    ami_sbone *b = &c->b[bone];
    if (b->nch >= 3) return;
    ami_chan *ch = &b->ch[b->nch++];
    double a[3] = {ax, ay, az};
    am_vec3_normalize(a, ch->axis);
    ch->amp = amp, ch->phase = phase, ch->bias = bias, ch->freq = freq, ch->rect = rect;
}

/* A leg of two bones hanging from `attach` to the ground at (x, y); gait phase in cycles. */
static void ami_leg(ami_creature *c, int parent, double x0, double y0, double z0, double x, double y, double knee_y,
                    double r, double phase, bool walk, ami_rng *rng)
{
    double kz = 0.5 * z0;
    int up = ami_bone(c, parent, x0, y0, z0, 0.5 * (x0 + x), knee_y, kz, r);
    int lo = ami_bone(c, up, 0.5 * (x0 + x), knee_y, kz, x, y, 0.0, 0.75 * r);
    if (walk) {
        ami_chan_add(c, up, 1, 0, 0, 0.45 * ami_jit(rng, 0.2), phase, 0.0, 1.0, 0);
        ami_chan_add(c, lo, 1, 0, 0, -0.7 * ami_jit(rng, 0.2), phase + 0.25, 0.0, 1.0, 1);
    } else {
        ami_chan_add(c, up, 1, 0, 0, 0.06 * ami_jit(rng, 0.3), phase, 0.0, 0.5, 0);
        ami_chan_add(c, lo, 1, 0, 0, -0.08 * ami_jit(rng, 0.3), phase, 0.0, 0.5, 1);
    }
}

/* A spider leg of two bones reaching out sideways (side = +1 left, -1 right). */
static void ami_spider_leg(ami_creature *c, int parent, double side, double y0, double z0, double reach, double r,
                           double phase, bool walk, ami_rng *rng)
{
    double yo = y0 * 2.2;
    int fe = ami_bone(c, parent, side * 0.3 * r * 4, y0, z0, side * reach * 0.5, yo, z0 + 0.35 * reach, r);
    int ti = ami_bone(c, fe, side * reach * 0.5, yo, z0 + 0.35 * reach, side * reach, yo * 1.3, 0.0, 0.8 * r);
    if (walk) {
        ami_chan_add(c, fe, 0, 0, 1, 0.3 * ami_jit(rng, 0.2), phase, 0.0, 1.0, 0);
        ami_chan_add(c, fe, 0, side, 0, -0.25 * ami_jit(rng, 0.2), phase + 0.25, 0.0, 1.0, 1);
        ami_chan_add(c, ti, 0, side, 0, 0.2 * ami_jit(rng, 0.2), phase + 0.25, 0.0, 1.0, 1);
    } else {
        ami_chan_add(c, fe, 0, 0, 1, 0.05 * ami_jit(rng, 0.3), phase, 0.0, 0.4, 0);
        ami_chan_add(c, ti, 0, side, 0, 0.08 * ami_jit(rng, 0.3), phase, 0.0, 0.6, 0);
    }
}

static void ami_plan(am_synth_plan plan, bool walk, ami_rng *rng, ami_creature *c)
{
    memset(c, 0, sizeof *c);
    double s = ami_jit(rng, 0.15); /* overall size */
    c->freq = (walk ? 1.4 : 0.25) * ami_jit(rng, 0.15);
    switch (plan) {
    case AM_SYNTH_QUADRUPED: { /* a mustelid: long low body, short legs, long tail */
        double L = 0.6 * s, H = 0.16 * s * ami_jit(rng, 0.1), rb = 0.05 * s;
        int pel = ami_bone(c, -1, 0, 0.25 * L, H, 0, 0.05 * L, H + 0.01 * s, rb);
        int spi = ami_bone(c, pel, 0, 0.05 * L, H + 0.01 * s, 0, -0.15 * L, H + 0.015 * s, rb);
        int che = ami_bone(c, spi, 0, -0.15 * L, H + 0.015 * s, 0, -0.3 * L, H + 0.01 * s, rb);
        int nek = ami_bone(c, che, 0, -0.3 * L, H + 0.01 * s, 0, -0.42 * L, H + 0.06 * s, 0.035 * s);
        int hed = ami_bone(c, nek, 0, -0.42 * L, H + 0.06 * s, 0, -0.56 * L, H + 0.05 * s, 0.035 * s);
        int ta1 = ami_bone(c, pel, 0, 0.25 * L, H, 0, 0.45 * L, H + 0.02 * s, 0.025 * s);
        int ta2 = ami_bone(c, ta1, 0, 0.45 * L, H + 0.02 * s, 0, 0.68 * L, H - 0.01 * s, 0.018 * s);
        double ph[4] = {0.25, 0.75, 0.0, 0.5}; /* LF RF LH RH: lateral sequence walk */
        for (int i = 0; i < 4; i++) {
            double x = (i % 2 ? -1.0 : 1.0) * 0.045 * s, y = i < 2 ? -0.27 * L : 0.22 * L;
            ami_leg(c, i < 2 ? che : pel, x, y, H - 0.02 * s, x * 1.1, y - 0.02 * L, y + 0.02 * L, 0.02 * s, ph[i],
                    walk, rng);
        }
        if (walk) {
            c->speed = 0.9 * L * c->freq;
            c->bob = 0.006 * s;
            ami_chan_add(c, spi, 0, 0, 1, 0.08, 0.0, 0.0, 1.0, 0);
            ami_chan_add(c, che, 0, 0, 1, -0.08, 0.0, 0.0, 1.0, 0);
            ami_chan_add(c, nek, 1, 0, 0, 0.06, 0.1, 0.0, 2.0, 0);
            ami_chan_add(c, ta1, 0, 0, 1, 0.25, 0.3, 0.0, 1.0, 0);
            ami_chan_add(c, ta2, 0, 0, 1, 0.35, 0.45, 0.0, 1.0, 0);
        } else {
            ami_chan_add(c, spi, 1, 0, 0, 0.04, 0.0, 0.0, 1.0, 0);
            ami_chan_add(c, nek, 0, 0, 1, 0.5 * ami_jit(rng, 0.2), 0.1, 0.0, 0.7, 0);
            ami_chan_add(c, nek, 1, 0, 0, 0.25, 0.3, 0.0, 1.1, 0);
            ami_chan_add(c, hed, 1, 0, 0, 0.25, 0.5, 0.0, 1.3, 0);
            ami_chan_add(c, ta1, 0, 0, 1, 0.4, 0.0, 0.0, 1.7, 0);
            ami_chan_add(c, ta2, 0, 0, 1, 0.5, 0.2, 0.0, 1.7, 0);
            ami_chan_add(c, ta1, 1, 0, 0, -0.2, 0.0, 0.0, 0.9, 0);
        }
        break;
    }
    case AM_SYNTH_SNAKE: {
        double L = 1.2 * s, r = 0.03 * s;
        int nseg = 10, prev = -1;
        for (int i = 0; i < nseg; i++) {
            double y0 = -0.5 * L + L * i / nseg, y1 = -0.5 * L + L * (i + 1) / nseg;
            double rr = r * (i < nseg - 3 ? 1.0 : 1.0 - 0.2 * (i - nseg + 4));
            int b = ami_bone(c, prev, 0, y0, r, 0, y1, r, rr);
            if (walk) {
                ami_chan_add(c, b, 0, 0, 1, (i ? 0.45 : 0.2) * ami_jit(rng, 0.1), -0.11 * i, 0.0, 1.0, 0);
            } else {
                ami_chan_add(c, b, 0, 0, 1, (i ? 0.2 : 0.4) * ami_jit(rng, 0.2), -0.08 * i, 0.0, 1.0, 0);
                if (i < 3) ami_chan_add(c, b, 1, 0, 0, -0.25 + 0.1 * i, 0.2, -0.15, 0.7, 0);
            }
            prev = b;
        }
        if (walk) c->speed = 0.5 * L * c->freq;
        break;
    }
    case AM_SYNTH_ARTHROPOD: {
        double L = 0.25 * s, H = 0.07 * s, r = 0.012 * s;
        int cep = ami_bone(c, -1, 0, -0.09 * L, H, 0, 0.03 * L, H, 0.045 * L * 4);
        int abd = ami_bone(c, cep, 0, 0.03 * L, H, 0, 0.3 * L, H + 0.01 * s, 0.09 * L * 2.2);
        for (int i = 0; i < 8; i++) {
            double side = i % 2 ? -1.0 : 1.0, y0 = (-0.08 + 0.03 * (i / 2)) * L;
            double phase = ((i / 2 + i % 2) % 2) ? 0.5 : 0.0; /* alternating tetrapods */
            ami_spider_leg(c, cep, side, y0, H, 0.55 * L * (i / 2 == 0 || i / 2 == 3 ? 1.1 : 0.95), r, phase, walk,
                           rng);
        }
        if (walk) {
            c->speed = 0.8 * L * c->freq;
            c->bob = 0.002 * s;
            ami_chan_add(c, abd, 0, 0, 1, 0.08, 0.0, 0.0, 1.0, 0);
        } else {
            ami_chan_add(c, abd, 1, 0, 0, 0.15, 0.0, 0.0, 1.0, 0);
            ami_chan_add(c, abd, 0, 0, 1, 0.12, 0.3, 0.0, 0.6, 0);
        }
        break;
    }
    case AM_SYNTH_BIRD:
    case AM_SYNTH_CHIMERA: { /* a pelican-like wader; the chimera stands on spider legs */
        bool chim = plan == AM_SYNTH_CHIMERA;
        double H = (chim ? 0.3 : 0.55) * s, rb = 0.09 * s;
        int bod = ami_bone(c, -1, 0, 0.12 * s, H, 0, -0.1 * s, H + 0.05 * s, rb);
        int nk1 = ami_bone(c, bod, 0, -0.1 * s, H + 0.05 * s, 0, -0.15 * s, H + 0.25 * s, 0.035 * s);
        int nk2 = ami_bone(c, nk1, 0, -0.15 * s, H + 0.25 * s, 0, -0.1 * s, H + 0.42 * s, 0.03 * s);
        int hed = ami_bone(c, nk2, 0, -0.1 * s, H + 0.42 * s, 0, -0.35 * s, H + 0.4 * s, 0.028 * s);
        int tal = ami_bone(c, bod, 0, 0.12 * s, H, 0, 0.26 * s, H - 0.02 * s, 0.03 * s);
        int wing[2][2];
        for (int w = 0; w < 2; w++) {
            double sd = w ? -1.0 : 1.0;
            wing[w][0] = ami_bone(c, bod, sd * 0.07 * s, -0.04 * s, H + 0.06 * s, sd * 0.28 * s, 0.02 * s, H + 0.08 * s,
                                  0.035 * s);
            wing[w][1] = ami_bone(c, wing[w][0], sd * 0.28 * s, 0.02 * s, H + 0.08 * s, sd * 0.5 * s, 0.1 * s,
                                  H + 0.05 * s, 0.025 * s);
            double flap = walk ? 0.12 : 0.5;
            ami_chan_add(c, wing[w][0], 0, 1, 0, -sd * flap, 0.0, 0.0, walk ? 1.0 : 1.5, 0);
            ami_chan_add(c, wing[w][1], 0, 1, 0, -sd * flap * 0.8, 0.15, 0.0, walk ? 1.0 : 1.5, 0);
        }
        if (chim) {
            for (int i = 0; i < 6; i++) {
                double side = i % 2 ? -1.0 : 1.0, y0 = (-0.06 + 0.06 * (i / 2)) * s;
                double phase = ((i / 2 + i % 2) % 2) ? 0.5 : 0.0; /* alternating tripods */
                ami_spider_leg(c, bod, side, y0, H - 0.03 * s, 0.45 * s, 0.018 * s, phase, walk, rng);
            }
        } else {
            for (int i = 0; i < 2; i++) {
                double x = (i ? -1.0 : 1.0) * 0.06 * s;
                ami_leg(c, bod, x, 0.02 * s, H - 0.05 * s, x, 0.0, 0.05 * s, 0.02 * s, i ? 0.5 : 0.0, walk, rng);
            }
        }
        if (walk) {
            c->speed = (chim ? 0.25 : 0.35) * s * c->freq;
            c->bob = 0.01 * s;
            ami_chan_add(c, nk1, 1, 0, 0, 0.15, 0.0, 0.0, 2.0, 0);
            ami_chan_add(c, hed, 1, 0, 0, -0.12, 0.1, 0.0, 2.0, 0);
            ami_chan_add(c, tal, 0, 0, 1, 0.15, 0.0, 0.0, 1.0, 0);
        } else {
            ami_chan_add(c, nk1, 0, 0, 1, 0.4, 0.0, 0.0, 0.8, 0);
            ami_chan_add(c, nk2, 1, 0, 0, 0.3, 0.2, 0.0, 1.1, 0);
            ami_chan_add(c, hed, 0, 0, 1, 0.4, 0.4, 0.0, 1.3, 0);
            ami_chan_add(c, tal, 1, 0, 0, 0.2, 0.0, 0.0, 1.5, 0);
        }
        break;
    }
    case AM_SYNTH_BIPED:
    default: {
        double h = 1.0 * s;
        int hip = ami_bone(c, -1, 0, 0, 0.95 * h, 0, 0, 1.18 * h, 0.13 * h);
        int spi = ami_bone(c, hip, 0, 0, 1.18 * h, 0, 0, 1.4 * h, 0.13 * h);
        int nek = ami_bone(c, spi, 0, 0, 1.4 * h, 0, 0, 1.52 * h, 0.05 * h);
        int hed = ami_bone(c, nek, 0, 0, 1.52 * h, 0, -0.02 * h, 1.72 * h, 0.09 * h);
        for (int a = 0; a < 2; a++) {
            double sd = a ? -1.0 : 1.0;
            int ua = ami_bone(c, spi, sd * 0.2 * h, 0, 1.38 * h, sd * 0.22 * h, 0, 1.1 * h, 0.045 * h);
            int fa = ami_bone(c, ua, sd * 0.22 * h, 0, 1.1 * h, sd * 0.23 * h, -0.02 * h, 0.84 * h, 0.035 * h);
            double ph = a ? 0.0 : 0.5;
            ami_chan_add(c, ua, 1, 0, 0, walk ? 0.35 : 0.05, ph, 0.0, walk ? 1.0 : 0.5, 0);
            ami_chan_add(c, ua, 0, 1, 0, walk ? 0.0 : sd * 0.3, 0.0, 0.0, 0.4, 0);
            ami_chan_add(c, fa, 1, 0, 0, walk ? 0.4 : 0.5, ph, 0.0, walk ? 1.0 : 0.6, 1);
            ami_leg(c, hip, sd * 0.1 * h, 0, 0.95 * h, sd * 0.1 * h, 0.0, -0.02 * h, 0.06 * h, a ? 0.0 : 0.5, walk, rng);
        }
        if (walk) {
            c->speed = 0.9 * h * c->freq;
            c->bob = 0.02 * h;
            ami_chan_add(c, spi, 0, 0, 1, 0.1, 0.0, 0.0, 1.0, 0);
        } else {
            ami_chan_add(c, spi, 1, 0, 0, 0.05, 0.0, 0.0, 1.0, 0);
            ami_chan_add(c, hed, 0, 0, 1, 0.5, 0.0, 0.0, 0.8, 0);
            ami_chan_add(c, nek, 1, 0, 0, 0.2, 0.3, 0.0, 1.2, 0);
        }
        break;
    }
    }
    /* per-seed phase shift of every channel so that two seeds never look alike */
    double shift = ami_rng_uniform(rng);
    for (int b = 0; b < c->n; b++)
        for (int k = 0; k < c->b[b].nch; k++) {
            c->b[b].ch[k].phase += shift * c->b[b].ch[k].freq;
            c->b[b].ch[k].amp *= ami_jit(rng, 0.1);
        }
    c->yaw_amp = walk ? 0.05 : 0.2;
}

/* World transforms [n][12] (3x4) of every bone at time t seconds. */
static void ami_pose(const ami_creature *c, bool walk, double t, double *M)
{
    double cyc = c->freq * t;
    for (int b = 0; b < c->n; b++) {
        const ami_sbone *bn = &c->b[b];
        double R[9];
        am_mat3_identity(R);
        for (int k = 0; k < bn->nch; k++) {
            const ami_chan *ch = &bn->ch[k];
            double w = sin(2.0 * AM_PI * (ch->freq * cyc + ch->phase));
            if (ch->rect) w = w > 0.0 ? w : 0.0;
            double q[4], Rk[9], Rn[9];
            am_quat_from_axis_angle(ch->axis, ch->bias + ch->amp * w, q);
            am_quat_to_mat3(q, Rk);
            am_mat3_mul(R, Rk, Rn);
            memcpy(R, Rn, sizeof R);
        }
        /* local = T(h) R T(-h) */
        double L[12], Rh[3];
        am_mat3_mul_vec3(R, bn->head, Rh);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) L[i * 4 + j] = R[i * 3 + j];
            L[i * 4 + 3] = bn->head[i] - Rh[i];
        }
        double *W = M + b * 12;
        if (bn->parent < 0) {
            double yaw = c->yaw_amp * sin(2.0 * AM_PI * (walk ? 0.5 : 0.15) * t), Rz[9], RL[12];
            am_mat3_rot_z(yaw, Rz);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 4; j++) RL[i * 4 + j] = Rz[i * 3] * L[j] + Rz[i * 3 + 1] * L[4 + j] + Rz[i * 3 + 2] * L[8 + j];
            /* yaw about the root head, then travel along -Y with a vertical bob */
            double Rzh[3];
            am_mat3_mul_vec3(Rz, bn->head, Rzh);
            for (int i = 0; i < 3; i++) RL[i * 4 + 3] += bn->head[i] - Rzh[i];
            RL[7] -= c->speed * t;
            RL[11] += c->bob * sin(4.0 * AM_PI * cyc);
            memcpy(W, RL, sizeof RL);
        } else {
            am_mat34_mul(M + bn->parent * 12, L, W);
        }
    }
}

static double ami_seg_dist(const double p[3], const double a[3], const double b[3])
{
    double ab[3], ap[3];
    am_vec3_sub(b, a, ab);
    am_vec3_sub(p, a, ap);
    double l2 = am_vec3_dot(ab, ab), u = l2 > 0.0 ? am_vec3_dot(ap, ab) / l2 : 0.0;
    u = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
    double q[3];
    am_vec3_madd(a, u, ab, q);
    return am_vec3_dist(p, q);
}

/* ---- degradations ---- */

am_status am_synth_degrade(am_tracks *tr, double body, double noise, double hidden, uint32_t seed,
                           double *hidden_share, am_error *err)
{
    size_t T = tr->frame_count, N = tr->point_count;
    AMI_CHECK(err, T > 0 && N > 0, AM_E_EMPTY, "no tracks to degrade");
    if (hidden < 0.0) hidden = 0.0;
    if (hidden > 0.9) hidden = 0.9;
    if (noise < 0.0) noise = 0.0;
    if (!tr->visible) {
        tr->visible = am_alloc_array(T * N, 1);
        AMI_CHECK(err, tr->visible, AM_E_NOMEM, "visible");
    }
    memset(tr->visible, 1, T * N);
    ami_rng rng = {0x5EEDull * 7919u + seed * 104729ull + 17};
    /* lost for good: ~30% of the budget; a lost track ends uniformly in [0.3 T, T) */
    double f_lost = hidden > 0.0 ? 0.3 * hidden / 0.35 : 0.0;
    for (size_t n = 0; n < N; n++) {
        if (ami_rng_uniform(&rng) >= f_lost) continue;
        size_t cut = (size_t)((0.3 + 0.7 * ami_rng_uniform(&rng)) * (double)T);
        for (size_t t = cut; t < T; t++) tr->visible[t * N + n] = 0;
    }
    /* dropout bursts of 1-5 frames: ~30% */
    double p_start = hidden > 0.0 ? 0.3 * hidden / 3.0 : 0.0;
    for (size_t n = 0; n < N; n++)
        for (size_t t = 0; t < T; t++) {
            if (ami_rng_uniform(&rng) >= p_start) continue;
            size_t len = 1 + (size_t)(ami_rng_uniform(&rng) * 5.0);
            for (size_t u = t; u < T && u < t + len; u++) tr->visible[u * N + n] = 0;
        }
    /* two occluders sweeping across the body: ~40%, radius found by bisection */
    if (hidden > 0.0) {
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t n = 0; n < N; n++)
            for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], tr->points[n * 3 + i]), hi[i] = fmax(hi[i], tr->points[n * 3 + i]);
        double a[2][3], b[2][3];
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 3; i++) {
                a[k][i] = lo[i] + (hi[i] - lo[i]) * ami_rng_uniform(&rng);
                b[k][i] = lo[i] + (hi[i] - lo[i]) * ami_rng_uniform(&rng);
            }
        /* occluders follow the body's travel: offsets relative to the frame centroid */
        double *cen = am_alloc_array(T * 3, sizeof(double));
        AMI_CHECK(err, cen, AM_E_NOMEM, "occluders");
        double c0[3] = {0, 0, 0};
        for (size_t t = 0; t < T; t++) {
            for (size_t n = 0; n < N; n++)
                for (int i = 0; i < 3; i++) cen[t * 3 + i] += tr->points[(t * N + n) * 3 + i];
            for (int i = 0; i < 3; i++) cen[t * 3 + i] /= (double)N;
        }
        memcpy(c0, cen, sizeof c0);
        double want = 0.4 * hidden, rlo = 0.0, rhi = body;
        for (int it = 0; it < 14; it++) {
            double r = 0.5 * (rlo + rhi);
            size_t cnt = 0;
            for (size_t t = 0; t < T; t += 4)
                for (size_t n = 0; n < N; n += 3) {
                    double u = T > 1 ? (double)t / (double)(T - 1) : 0.0;
                    for (int k = 0; k < 2; k++) {
                        double cc[3], dd = 0.0;
                        for (int i = 0; i < 3; i++) {
                            cc[i] = a[k][i] + u * (b[k][i] - a[k][i]) + cen[t * 3 + i] - c0[i];
                            double e = tr->points[(t * N + n) * 3 + i] - cc[i];
                            dd += e * e;
                        }
                        if (dd < r * r) {
                            cnt++;
                            break;
                        }
                    }
                }
            double share = (double)cnt / (double)(((T + 3) / 4) * ((N + 2) / 3));
            if (share < want) rlo = r; else rhi = r;
        }
        double r = 0.5 * (rlo + rhi);
        for (size_t t = 0; t < T; t++) {
            double u = T > 1 ? (double)t / (double)(T - 1) : 0.0;
            for (size_t n = 0; n < N; n++)
                for (int k = 0; k < 2; k++) {
                    double dd = 0.0;
                    for (int i = 0; i < 3; i++) {
                        double e = tr->points[(t * N + n) * 3 + i] - (a[k][i] + u * (b[k][i] - a[k][i]) + cen[t * 3 + i] - c0[i]);
                        dd += e * e;
                    }
                    if (dd < r * r) tr->visible[t * N + n] = 0;
                }
        }
        am_free(cen);
    }
    size_t hid = 0;
    double sigma = noise * body;
    for (size_t i = 0; i < T * N; i++) {
        float *p = tr->points + i * 3;
        if (!tr->visible[i]) {
            p[0] = p[1] = p[2] = NAN;
            hid++;
            continue;
        }
        for (int k = 0; k < 3; k++) p[k] = (float)(p[k] + sigma * ami_rng_normal(&rng));
    }
    if (hidden_share) *hidden_share = (double)hid / (double)(T * N);
    return AM_OK;
}

/* ---- names ---- */
static const char *const ami_plan_names[AM_SYNTH_PLAN_COUNT] = {"quadruped", "snake", "arthropod", "bird", "biped",
                                                                "chimera"};
static const char *const ami_motion_names[AM_SYNTH_MOTION_COUNT] = {"idle", "walk"};

bool am_synth_plan_from_name(const char *name, am_synth_plan *out)
{
    for (int i = 0; i < AM_SYNTH_PLAN_COUNT; i++)
        if (strcmp(name, ami_plan_names[i]) == 0) return *out = (am_synth_plan)i, true;
    return false;
}

bool am_synth_motion_from_name(const char *name, am_synth_motion *out)
{
    for (int i = 0; i < AM_SYNTH_MOTION_COUNT; i++)
        if (strcmp(name, ami_motion_names[i]) == 0) return *out = (am_synth_motion)i, true;
    return false;
}

const char *am_synth_plan_name(am_synth_plan p) { return (unsigned)p < AM_SYNTH_PLAN_COUNT ? ami_plan_names[p] : "?"; }
const char *am_synth_motion_name(am_synth_motion m)
{
    return (unsigned)m < AM_SYNTH_MOTION_COUNT ? ami_motion_names[m] : "?";
}

void am_synth_clip_free(am_synth_clip *c)
{
    if (!c) return;
    am_tracks_free(c->tracks);
    am_free(c->truth);
    am_free(c->joints);
    am_free(c->parents);
    if (c->joint_names)
        for (size_t j = 0; j < c->joint_count; j++) am_free(c->joint_names[j]);
    am_free(c->joint_names);
    am_warning_list_free(&c->warnings);
    am_free(c);
}

static am_status ami_synth_tracks_with(const am_synth_opts *opts, ami_creature *crp, am_synth_clip **out,
                                      am_error *err)
{
    assert(out);
    *out = NULL;
    am_synth_opts o = {0};
    if (opts) o = *opts;
    AMI_CHECK(err, (unsigned)o.plan < AM_SYNTH_PLAN_COUNT, AM_E_ARG, "unknown plan %d", (int)o.plan);
    AMI_CHECK(err, (unsigned)o.motion < AM_SYNTH_MOTION_COUNT, AM_E_ARG, "unknown motion %d", (int)o.motion);
    if (o.frames == 0) o.frames = 120;
    if (o.fps == 0.0) o.fps = 30.0;
    AMI_CHECK(err, am_fps_valid(o.fps), AM_E_ARG, "fps %g is outside [%g, %g]", o.fps, AM_FPS_MIN,
              AM_FPS_MAX);
    if (o.points == 0) o.points = 2000;
    if (o.noise == 0.0) o.noise = 0.003;
    if (o.hidden == 0.0) o.hidden = 0.15;
    AMI_CHECK(err, o.frames <= 100000 && o.points <= 10000000, AM_E_LIMIT, "clip too large");
    bool walk = o.motion == AM_SYNTH_WALK;
    ami_rng rng = {(uint64_t)o.seed * 0x2545F4914F6CDD1Dull + (uint64_t)o.plan * 977 + (uint64_t)o.motion * 31 + 1};
    ami_plan(o.plan, walk, &rng, crp);
    size_t T = o.frames, N = o.points, B = (size_t)crp->n;

    am_synth_clip *c = am_alloc(sizeof *c);
    am_tracks *tr = am_alloc(sizeof *tr);
    float *rest = am_alloc_array(N * 3, sizeof(float));
    int32_t *bi = am_alloc_array(N * 4, sizeof(int32_t));
    float *bw = am_alloc_array(N * 4, sizeof(float));
    double *M = am_alloc_array(B * 12, sizeof(double));
    if (c) c->tracks = tr;
    if (!c || !tr || !rest || !bi || !bw || !M) {
        am_free(rest), am_free(bi), am_free(bw), am_free(M);
        if (c) am_synth_clip_free(c); else am_free(tr);
        return AM_FAIL(err, AM_E_NOMEM, "synthetic clip");
    }
    tr->frame_count = T;
    tr->point_count = N;
    tr->fps = o.fps;
    tr->points = am_alloc_array(T * N * 3, sizeof(float));
    c->truth = am_alloc_array(T * N * 3, sizeof(float));
    /* joints: root head, every tail, and heads not on their parent's tail */
    size_t J = 0;
    int32_t jhead[AMI_SB], jtail[AMI_SB];
    double jrest[2 * AMI_SB][3];
    int32_t jpar[2 * AMI_SB], jbone[2 * AMI_SB];
    for (int b = 0; b < crp->n; b++) {
        const ami_sbone *bn = &crp->b[b];
        if (bn->parent >= 0 && am_vec3_dist(bn->head, crp->b[bn->parent].tail) < 1e-9) {
            jhead[b] = jtail[bn->parent];
        } else {
            memcpy(jrest[J], bn->head, sizeof jrest[J]);
            jpar[J] = bn->parent < 0 ? -1 : jhead[bn->parent];
            jbone[J] = b;
            jhead[b] = (int32_t)J++;
        }
        memcpy(jrest[J], bn->tail, sizeof jrest[J]);
        jpar[J] = jhead[b];
        jbone[J] = b;
        jtail[b] = (int32_t)J++;
    }
    c->joint_count = J;
    c->joints = am_alloc_array(T * J * 3, sizeof(float));
    c->parents = am_alloc_array(J, sizeof(int32_t));
    c->joint_names = am_alloc_array(J, sizeof(char *));
    c->bone_count = B;
    if (!tr->points || !c->truth || !c->joints || !c->parents || !c->joint_names) goto nomem;
    for (size_t j = 0; j < J; j++) {
        char nm[32];
        snprintf(nm, sizeof nm, "j%02zu", j);
        c->joint_names[j] = am_strdup(nm);
        if (!c->joint_names[j]) goto nomem;
        c->parents[j] = jpar[j];
    }
    /* surface points on the capsules, area-proportional; skin by distance falloff */
    double area[AMI_SB], atot = 0.0;
    for (int b = 0; b < crp->n; b++) {
        double len = am_vec3_dist(crp->b[b].head, crp->b[b].tail), r = crp->b[b].radius;
        area[b] = 2.0 * AM_PI * r * len + 2.0 * AM_PI * r * r;
        atot += area[b];
    }
    for (size_t n = 0; n < N; n++) {
        double u = ami_rng_uniform(&rng) * atot;
        int b = 0;
        while (b < crp->n - 1 && u > area[b]) u -= area[b++];
        const ami_sbone *bn = &crp->b[b];
        double ax[3], e1[3], e2[3];
        am_vec3_sub(bn->tail, bn->head, ax);
        double len = am_vec3_normalize(ax, ax);
        am_vec3_perpendicular(ax, e1);
        am_vec3_cross(ax, e1, e2);
        double r = bn->radius;
        /* along the axis, extended by the radius at both ends with a rounded profile */
        double s = -r + ami_rng_uniform(&rng) * (len + 2.0 * r), rr = r;
        if (s < 0.0) rr = sqrt(fmax(r * r - s * s, 0.0));
        if (s > len) rr = sqrt(fmax(r * r - (s - len) * (s - len), 0.0));
        double th = 2.0 * AM_PI * ami_rng_uniform(&rng), p[3];
        for (int i = 0; i < 3; i++) p[i] = bn->head[i] + s * ax[i] + rr * (cos(th) * e1[i] + sin(th) * e2[i]);
        for (int i = 0; i < 3; i++) rest[n * 3 + i] = (float)p[i];
        double dsurf[AMI_SB], dmin = INFINITY;
        for (int k = 0; k < crp->n; k++) {
            dsurf[k] = ami_seg_dist(p, crp->b[k].head, crp->b[k].tail) - crp->b[k].radius;
            if (dsurf[k] < dmin) dmin = dsurf[k];
        }
        double tau = 0.6 * bn->radius, wk[4] = {0, 0, 0, 0};
        int ik[4] = {b, b, b, b};
        for (int k = 0; k < crp->n; k++) {
            double e = (dsurf[k] - dmin) / tau, w = exp(-e * e);
            if (w < 1e-3) continue;
            for (int s2 = 0; s2 < 4; s2++) /* keep the top 4 */
                if (w > wk[s2]) {
                    for (int q = 3; q > s2; q--) wk[q] = wk[q - 1], ik[q] = ik[q - 1];
                    wk[s2] = w, ik[s2] = k;
                    break;
                }
        }
        double ws = wk[0] + wk[1] + wk[2] + wk[3];
        for (int s2 = 0; s2 < 4; s2++) bi[n * 4 + s2] = ik[s2], bw[n * 4 + s2] = (float)(wk[s2] / ws);
    }
    ami_stage stage = ami_stage_begin("synth: pose frames");
    for (size_t t = 0; t < T; t++) {
        if (t % 16 == 0 && !ami_progress(stage.name, (double)t / (double)T)) {
            am_free(rest), am_free(bi), am_free(bw), am_free(M);
            am_synth_clip_free(c);
            return AM_FAIL(err, AM_E_CANCELLED, "synthesis stopped at frame %zu", t);
        }
        ami_pose(crp, walk, (double)t / o.fps, M);
        for (size_t n = 0; n < N; n++) {
            double r[3] = {rest[n * 3], rest[n * 3 + 1], rest[n * 3 + 2]}, acc[3] = {0, 0, 0};
            for (int s2 = 0; s2 < 4; s2++) {
                double w = bw[n * 4 + s2];
                if (w <= 0.0) continue;
                double v[3];
                am_mat34_apply(M + bi[n * 4 + s2] * 12, r, v);
                for (int i = 0; i < 3; i++) acc[i] += w * v[i];
            }
            for (int i = 0; i < 3; i++) c->truth[(t * N + n) * 3 + i] = (float)acc[i];
        }
        for (size_t j = 0; j < J; j++) {
            double v[3];
            am_mat34_apply(M + jbone[j] * 12, jrest[j], v);
            for (int i = 0; i < 3; i++) c->joints[(t * J + j) * 3 + i] = (float)v[i];
        }
    }
    c->body_size = am_body_size_f32(c->truth, N, NULL);
    ami_stage_end(&stage);
    memcpy(tr->points, c->truth, sizeof(float) * T * N * 3);
    stage = ami_stage_begin("synth: degrade");
    am_status st = am_synth_degrade(tr, c->body_size, o.noise, o.hidden, o.seed, &c->hidden_share, err);
    ami_stage_end(&stage);
    am_free(rest), am_free(bi), am_free(bw), am_free(M);
    if (st < 0) {
        am_synth_clip_free(c);
        return st;
    }
    *out = c;
    return AM_OK;
nomem:
    am_free(rest), am_free(bi), am_free(bw), am_free(M);
    am_synth_clip_free(c);
    return AM_FAIL(err, AM_E_NOMEM, "synthetic clip of %zu points x %zu frames", N, T);
}

am_status am_synth_tracks(const am_synth_opts *opts, am_synth_clip **out, am_error *err)
{
    if (out) *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    /* ~40 KB of creature description: on the heap, per call */
    ami_creature *cr = am_alloc(sizeof *cr);
    am_status st = cr ? ami_synth_tracks_with(opts, cr, out, err)
                      : AM_FAIL(err, AM_E_NOMEM, "synthetic creature");
    am_free(cr);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_synth_write(const am_synth_clip *c, const char *tracks_path, const char *truth_path, am_error *err)
{
    const am_tracks *tr = c->tracks;
    ami_stage stage = ami_stage_begin("synth: write");
    if (tracks_path) AMI_TRY(am_tracks_write(tracks_path, tr, err));
    if (!truth_path) return AM_OK;
    if (tracks_path) (void)ami_progress(stage.name, 0.5);
    size_t T = tr->frame_count, N = tr->point_count, J = c->joint_count;
    size_t sp[3] = {T, N, 3}, sj[3] = {T, J, 3}, spar[1] = {J};
    int32_t bones = (int32_t)c->bone_count;
    double fps = tr->fps, body = c->body_size;
    size_t svis[2] = {T, N};
    am_array arr[7];
    arr[0] = am_array_view("points", AM_DTYPE_F32, 3, sp, c->truth);
    arr[1] = am_array_view("joints", AM_DTYPE_F32, 3, sj, c->joints);
    arr[2] = am_array_view("parents", AM_DTYPE_I32, 1, spar, c->parents);
    arr[3] = am_array_view("bones", AM_DTYPE_I32, 0, NULL, &bones);
    arr[4] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    arr[5] = am_array_view("body_size", AM_DTYPE_F64, 0, NULL, &body);
    arr[6] = am_array_view("visible", AM_DTYPE_BOOL, 2, svis, tr->visible);
    AMI_TRY(am_npz_write(truth_path, arr, tr->visible ? 7 : 6, true, err));
    ami_stage_end(&stage);
    return AM_OK;
}

void am_synth_clip_scale(am_synth_clip *c, double s)
{
    assert(c && s > 0.0);
    am_tracks_scale(c->tracks, s);
    size_t TN = c->tracks->frame_count * c->tracks->point_count, TJ = c->tracks->frame_count * c->joint_count;
    for (size_t i = 0; c->truth && i < TN * 3; i++) c->truth[i] = (float)(c->truth[i] * s);
    for (size_t i = 0; c->joints && i < TJ * 3; i++) c->joints[i] = (float)(c->joints[i] * s);
    c->body_size *= s;
}
