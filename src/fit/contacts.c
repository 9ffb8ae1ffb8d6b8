/* Contacts. From a first fit: where each contact joint is low and slow it is planted; the
 * ground's own velocity is the median velocity of the low joints (on an on-the-spot clip the
 * planted feet ride backwards together, so "still" means "still relative to that ground").
 * The second fit holds plants (fit.c); the foot lock then pins each plant exactly with a
 * per-frame IK pass over the leg (beyond the seed, whose feet slid 1-2 cm a step). Plants
 * start where a joint is low and slow and grow (hysteresis) over the neighbouring frames that
 * are as low and near the spot: the first fit jitters ~1 cm a frame, so speed alone cuts
 * landing frames off. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/fit.h"
#include "fit_internal.h"
#include "core/internal.h"

/* A plant's spot in the ground's frame: the mean over frames s..e of joint j, each frame
 * carried back to frame s by the ground velocity (the ground moves only in x and y). */
void am_plant_spot(const double *joints, size_t J, double fps, const double ground_vel[3], size_t j,
                   size_t s, size_t e, double spot[3])
{
    spot[0] = spot[1] = spot[2] = 0.0;
    for (size_t t = s; t <= e; t++) {
        const double *p = joints + (t * J + j) * 3;
        double back = (double)(t - s) / fps;
        spot[0] += p[0] - ground_vel[0] * back;
        spot[1] += p[1] - ground_vel[1] * back;
        spot[2] += p[2];
    }
    for (int d = 0; d < 3; d++) spot[d] /= (double)(e - s + 1);
}

/* The run of planted frames of contact ci that holds frame t: [*s, *e]. */
static void ami_plant_run(const uint8_t *plant, size_t T, size_t C, size_t ci, size_t t, size_t *s, size_t *e)
{
    size_t a = t, b = t;
    while (a > 0 && plant[(a - 1) * C + ci]) a--;
    while (b + 1 < T && plant[(b + 1) * C + ci]) b++;
    *s = a;
    *e = b;
}

/* Whether the plants of contact ci holding frames ta and tb are one spot: their spots, both
 * carried to frame ta by the ground, within `grow` of each other. Growing plants meet across
 * the few frames of a shuffle (a foot that slides low along the ground from one spot to the
 * next): merged into one run, the foot lock pinned both at their mean, centimetres from each. */
static bool ami_same_spot(const double *joints, size_t J, double fps, const double vg[3], size_t j,
                          const uint8_t *plant, size_t T, size_t C, size_t ci, size_t ta, size_t tb, double grow)
{
    size_t sa, ea, sb, eb;
    double pa[3], pb[3];
    ami_plant_run(plant, T, C, ci, ta, &sa, &ea);
    ami_plant_run(plant, T, C, ci, tb, &sb, &eb);
    am_plant_spot(joints, J, fps, vg, j, sa, ea, pa);
    am_plant_spot(joints, J, fps, vg, j, sb, eb, pb);
    double dx = pb[0] + vg[0] * ((double)sb - (double)sa) / fps - pa[0];
    double dy = pb[1] + vg[1] * ((double)sb - (double)sa) / fps - pa[1];
    return hypot(dx, dy) <= grow;
}

static int ami_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

am_status am_plants_find(const double *joints, size_t T, size_t J, double fps, const int32_t *joint,
                         const double *floor_z, size_t C, const am_plant_opts *opts, uint8_t *plant,
                         double *plant_z, double ground_vel[3], am_error *err)
{
    assert(joints && joint && floor_z && plant && plant_z && ground_vel);
    am_plant_opts o = opts ? *opts : (am_plant_opts){0};
    if (!(o.height > 0)) o.height = AM_PLANT_HEIGHT;
    if (!(o.speed > 0)) o.speed = AM_PLANT_SPEED;
    if (!(o.grow > 0)) o.grow = AM_PLANT_GROW;
    if (!(o.grow_height > 0)) o.grow_height = AM_PLANT_GROW_HEIGHT;
    if (!(o.still > 0)) o.still = AM_PLANT_STILL;
    double *vg = ground_vel;
    memset(vg, 0, 3 * sizeof *vg);
    if (!C || !T) return AM_OK;
    double *vel = am_alloc_array(T * C * 3, sizeof(double)), *buf = am_alloc_array(T * C + 1, sizeof(double));
    uint8_t *low = am_alloc_array(T * C, 1);
    if (!vel || !buf || !low) {
        am_free(vel);
        am_free(buf);
        am_free(low);
        return AM_FAIL(err, AM_E_NOMEM, "contacts");
    }
    for (size_t ci = 0; ci < C; ci++) {
        size_t j = (size_t)joint[ci];
        double rz = floor_z[ci];
        for (size_t t = 0; t < T; t++) {
            size_t a = t > 0 ? t - 1 : 0, b = t + 1 < T ? t + 1 : T - 1;
            const double *pa = joints + (a * J + j) * 3, *pb = joints + (b * J + j) * 3;
            for (int k = 0; k < 3; k++) vel[(t * C + ci) * 3 + (size_t)k] = b > a ? (pb[k] - pa[k]) * fps / (double)(b - a) : 0.0;
            low[t * C + ci] = joints[(t * J + j) * 3 + 2] - rz < o.height;
        }
    }
    /* Ground velocity: componentwise median of the low joints' horizontal velocity, then again
     * over those that move with that estimate (lifting and landing feet are low too, and would
     * bias it). */
    for (int pass = 0; pass < 2; pass++) {
        double v[2] = {0.0, 0.0};
        for (int k = 0; k < 2; k++) {
            size_t n = 0;
            for (size_t i = 0; i < T * C; i++) {
                if (!low[i]) continue;
                if (pass && hypot(vel[3 * i] - vg[0], vel[3 * i + 1] - vg[1]) > o.speed) continue;
                buf[n++] = vel[3 * i + (size_t)k];
            }
            if (n >= 5) {
                qsort(buf, n, sizeof *buf, ami_cmp_d);
                v[k] = buf[n / 2];
            }
        }
        vg[0] = v[0];
        vg[1] = v[1];
    }
    /* Slower than `still` it is the noise of a still ground, not a treadmill. */
    if (hypot(vg[0], vg[1]) < o.still) vg[0] = vg[1] = 0.0;
    for (size_t ci = 0; ci < C; ci++) {
        size_t j = (size_t)joint[ci];
        for (size_t t = 0; t < T; t++) {
            size_t i = t * C + ci;
            /* The slower of the two one-sided speeds: a plant's first and last frames are still
             * on one side, and central differences would trim them. */
            double dv = INFINITY;
            for (int side = -1; side <= 1; side += 2) {
                long u = (long)t + side;
                if (u < 0 || u >= (long)T) continue;
                const double *pa = joints + (t * J + j) * 3, *pb = joints + ((size_t)u * J + j) * 3;
                double sv = hypot((pb[0] - pa[0]) * fps * side - vg[0], (pb[1] - pa[1]) * fps * side - vg[1]);
                if (sv < dv) dv = sv;
            }
            plant[i] = low[i] && dv < o.speed;
        }
        /* Hysteresis: grow each plant over the neighbouring frames that sit as low as the
         * plant itself (within grow_height of its mean height) and near its spot (within
         * grow). Speeds at a plant's edges mix in the swing and the first fit's
         * frame-to-frame jitter, heights do not: a foot lands and lifts through the air. */
        for (size_t t = 0; t < T;) {
            if (!plant[t * C + ci]) {
                t++;
                continue;
            }
            size_t e = t;
            while (e + 1 < T && plant[(e + 1) * C + ci]) e++;
            double spot[3];
            am_plant_spot(joints, J, fps, vg, j, t, e, spot);
            for (int dir = -1; dir <= 1; dir += 2) {
                long k = dir < 0 ? (long)t - 1 : (long)e + 1;
                for (; k >= 0 && k < (long)T && !plant[(size_t)k * C + ci]; k += dir) {
                    const double *p = joints + ((size_t)k * J + j) * 3;
                    double dx = p[0] - vg[0] * ((double)k - (double)t) / fps - spot[0];
                    double dy = p[1] - vg[1] * ((double)k - (double)t) / fps - spot[1];
                    if (p[2] - spot[2] > o.grow_height || hypot(dx, dy) > o.grow) break;
                    /* Joining the next plant over: only if it is the same spot (a gap of one
                     * free frame keeps two spots two plants). */
                    long nx = k + dir;
                    if (nx >= 0 && nx < (long)T && plant[(size_t)nx * C + ci] &&
                        !ami_same_spot(joints, J, fps, vg, j, plant, T, C, ci, t, (size_t)nx, o.grow))
                        break;
                    plant[(size_t)k * C + ci] = 1;
                }
            }
            t = e + 1;
            while (t < T && plant[t * C + ci]) t++;
        }
        /* Fill one-frame holes of one spot, then drop plants shorter than 3 frames. */
        for (size_t t = 1; t + 1 < T; t++)
            if (!plant[t * C + ci] && plant[(t - 1) * C + ci] && plant[(t + 1) * C + ci] &&
                ami_same_spot(joints, J, fps, vg, j, plant, T, C, ci, t - 1, t + 1, o.grow))
                plant[t * C + ci] = 1;
        for (size_t t = 0; t < T;) {
            if (!plant[t * C + ci]) {
                t++;
                continue;
            }
            size_t e = t;
            while (e + 1 < T && plant[(e + 1) * C + ci]) e++;
            double zs = 0.0;
            for (size_t k = t; k <= e; k++) zs += joints[(k * J + j) * 3 + 2];
            zs /= (double)(e - t + 1);
            for (size_t k = t; k <= e; k++) {
                if (e - t + 1 < 3) plant[k * C + ci] = 0;
                plant_z[k * C + ci] = zs;
            }
            t = e + 1;
        }
    }
    am_free(vel);
    am_free(buf);
    am_free(low);
    return AM_OK;
}

am_status ami_fit_find_contacts(ami_fit *f, double grow, am_error *err)
{
    if (!f->Cc) return AM_OK;
    ami_fit_fk_all(f, f->x, false);
    double *floor_z = am_alloc_array(f->Cc, sizeof(double));
    if (!floor_z) return AM_FAIL(err, AM_E_NOMEM, "contacts");
    for (size_t ci = 0; ci < f->Cc; ci++) floor_z[ci] = f->rig->joint_rest[3 * (size_t)f->cj[ci] + 2];
    am_plant_opts o = {.grow = grow};
    am_status st = am_plants_find(f->joints, f->T, f->J, f->fps, f->cj, floor_z, f->Cc, &o, f->plant, f->plant_z,
                                  f->vg, err);
    am_free(floor_z);
    return st;
}

double am_plant_drift(const double *joints, size_t J, double fps, const double ground_vel[3], size_t j,
                      size_t s, size_t e)
{
    const double dt = 1.0 / fps;
    double drift = 0.0;
    const double *p0 = joints + (s * J + j) * 3;
    for (size_t t = s; t <= e; t++) {
        const double *p = joints + (t * J + j) * 3;
        double d[3];
        for (int k = 0; k < 3; k++) d[k] = p[k] - p0[k] - ground_vel[k] * dt * (double)(t - s);
        double n = am_vec3_norm(d);
        if (n > drift) drift = n;
    }
    return drift;
}

am_status ami_fit_foot_lock(ami_fit *f, bool lock, ami_lock_stats *out, am_error *err)
{
    const size_t T = f->T, J = f->J, C = f->Cc, P = f->P, B = f->B;
    const double dt = 1.0 / f->fps;
    double *pose = am_alloc_array(B * 16, sizeof(double)), *axes = am_alloc_array(B * 9, sizeof(double));
    double *jt = am_alloc_array(J * 3, sizeof(double)), *eul = am_alloc_array(B * 3, sizeof(double));
    am_status st = AM_OK;
    if (!pose || !axes || !jt || !eul) {
        st = AM_FAIL(err, AM_E_NOMEM, "foot lock of %zu bones", B);
        goto done;
    }
    ami_fit_fk_all(f, f->x, false);
    for (size_t ci = 0; ci < C; ci++) {
        if (!ami_progress("fit: contacts", (double)ci / (double)C)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "foot lock stopped at contact %zu", ci);
            goto done;
        }
        size_t j = (size_t)f->cj[ci];
        for (size_t s = 0; s < T;) {
            if (!f->plant[s * C + ci]) {
                s++;
                continue;
            }
            size_t e = s;
            while (e + 1 < T && f->plant[(e + 1) * C + ci]) e++;
            /* A plant that began in the frames the previous window fixed was counted there and
             * keeps the spot those frames hold; one that begins after this window's committed
             * frames is the next window's. */
            bool counted = s >= f->fixed && s < f->commit;
            double spot[3];
            if (s < f->fixed) {
                const double *p = f->joints + ((f->fixed - 1) * J + j) * 3;
                for (int k = 0; k < 3; k++) spot[k] = p[k] - f->vg[k] * dt * (double)(f->fixed - 1 - s);
            } else {
                am_plant_spot(f->joints, J, f->fps, f->vg, j, s, e, spot);
            }
            if (counted) {
                double fit_drift = am_plant_drift(f->joints, J, f->fps, f->vg, j, s, e);
                out->fit_sum += fit_drift;
                if (fit_drift > out->fit_max) out->fit_max = fit_drift;
            }
            if (lock) {
                /* Pin inside the plant only. A ramp of partial pins either side (as before) pulled
                 * swing frames several cm toward the spot: 0.03% of body size on the mean
                 * per-joint error, 0.1% on its p95. The plants are grown to their whole low,
                 * near-the-spot span instead (ami_fit_find_contacts). */
                for (size_t t = s < f->fixed ? f->fixed : s; t <= e; t++) {
                    double q[4], goal[3];
                    for (int k = 0; k < 3; k++) goal[k] = spot[k] + f->vg[k] * dt * ((double)t - (double)s);
                    double *xt = f->x + t * P;
                    ami_fit_root_quat(f, f->x, t, q);
                    memcpy(eul, xt + AMI_FIT_ROOT_PARAMS - 3, B * 3 * sizeof(double));
                    if (isnan(ami_pin_joint(f->rig, f->ch, j, 4, xt, q, eul, goal, pose, axes, jt))) {
                        st = ami_cancelled() ? AM_FAIL(err, AM_E_CANCELLED, "foot lock stopped")
                                             : AM_FAIL(err, AM_E_NOMEM, "foot lock pin");
                        goto done;
                    }
                    memcpy(xt + AMI_FIT_ROOT_PARAMS, eul + 3, (B - 1) * 3 * sizeof(double));
                    double d[3];
                    for (int k = 0; k < 3; k++) d[k] = jt[j * 3 + (size_t)k] - f->joints[(t * J + j) * 3 + (size_t)k];
                    double moved = am_vec3_norm(d);
                    if (t < f->commit) {
                        out->moved_sum[ci] += moved;
                        out->moved_n[ci]++;
                        if (moved > out->moved_max[ci]) out->moved_max[ci] = moved;
                    }
                    memcpy(f->joints + t * J * 3, jt, J * 3 * sizeof(double));
                }
            }
            if (counted) {
                double drift = am_plant_drift(f->joints, J, f->fps, f->vg, j, s, e);
                out->sum += drift;
                if (drift > out->max) out->max = drift;
                out->plants++;
            }
            s = e + 1;
        }
    }
done:
    am_free(pose);
    am_free(axes);
    am_free(jt);
    am_free(eul);
    return st;
}
