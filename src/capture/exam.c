/* The exam: a random motion within the joint limits, with planted feet, read in two views
 * with the degradations a real reader and a real video model produce.
 *
 * Motion: every Euler angle is a sum of slow sinusoids in an unbounded space, mapped into
 * its limits by a tanh on each side of a centre (smooth, and never outside the limits), plus
 * "big pose" events (a raised-cosine bump that drives a random subset of bones far toward
 * their limits: sit, rear, head slam). The root walks and turns; its height follows the
 * lowest contact joint onto the ground; low contact joints are then pinned by IK so a plant
 * really stands still (truth contacts are the frames where the pin holds). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "capture_internal.h"
#include "core/internal.h"

typedef struct {
    double amp[3], freq[3], phase[3];
} ami_wave;

static void ami_wave_init(ami_wave *w, ami_rng *r, double amp, double fmin, double fmax)
{
    for (int i = 0; i < 3; i++) {
        w->amp[i] = amp * (0.3 + 0.7 * ami_rng_uniform(r)) / 1.5;
        w->freq[i] = fmin + (fmax - fmin) * ami_rng_uniform(r);
        w->phase[i] = 2.0 * AM_PI * ami_rng_uniform(r);
    }
}

static double ami_wave_at(const ami_wave *w, double s)
{
    double v = 0.0;
    for (int i = 0; i < 3; i++) v += w->amp[i] * sin(2.0 * AM_PI * w->freq[i] * s + w->phase[i]);
    return v;
}

/* Map u (unbounded, 0 = centre) into (lo, hi) smoothly. */
static double ami_soft_limit(double u, double c, double up, double dn)
{
    return u >= 0.0 ? c + up * tanh(u / up) : c + dn * tanh(u / dn);
}

typedef struct {
    double center, width;
    double pitch;
    uint8_t *on;       /* [B] bone takes part */
    double *target;    /* [B][3] u-space push */
} ami_event;

static am_exam_opts ami_exam_opts_defaults(const am_exam_opts *in)
{
    am_exam_opts o = in ? *in : (am_exam_opts){0};
    if (o.frames == 0) o.frames = 150;
    if (o.fps <= 0.0) o.fps = 30.0;
    return o;
}

void am_exam_free(am_exam *ex)
{
    if (!ex) return;
    am_motion_free(ex->truth);
    am_det_free(ex->det);
    if (ex->contact_names)
        for (size_t c = 0; c < ex->contact_count; c++) am_free(ex->contact_names[c]);
    am_free(ex->contact_names);
    am_free(ex->contact_joint);
    am_free(ex->contact);
    am_warning_list_free(&ex->warnings);
    am_free(ex);
}

/* Plants: runs of low frames, split so no plant lasts over 12 frames (a step), with 6-frame
 * steps between them inside a run: the foot lifts (6 cm arc) and moves to the next plant
 * smoothly. alpha [T] is 1 where the pin target applies (plants and steps) and ramps over 2
 * frames at a run's ends; candidate [T] marks plant frames. */
static void ami_exam_plants(const uint8_t *low, size_t T, const double *free_pos, double rest_z,
                            double *alpha, double *target, uint8_t *candidate)
{
    for (size_t t = 0; t < T; t++) {
        alpha[t] = 0.0;
        candidate[t] = 0;
    }
    size_t t = 0;
    while (t < T) {
        if (!low[t]) {
            t++;
            continue;
        }
        size_t e = t;
        while (e + 1 < T && low[e + 1]) e++;
        if (e - t + 1 < 3) {
            t = e + 1;
            continue;
        }
        size_t s = t, prev_e = 0;
        double prevP[3] = {0, 0, 0};
        bool have_prev = false;
        while (s <= e) {
            size_t len = e - s + 1;
            if (len < 3) break;
            size_t pe = len > 12 ? s + 9 : e;
            size_t mid = (s + pe) / 2;
            double P[3] = {free_pos[3 * mid], free_pos[3 * mid + 1], rest_z};
            for (size_t k = s; k <= pe; k++) {
                alpha[k] = 1.0;
                memcpy(target + 3 * k, P, sizeof P);
                candidate[k] = 1;
            }
            if (have_prev) {
                for (size_t k = prev_e + 1; k < s; k++) {
                    double u = (double)(k - prev_e) / (double)(s - prev_e), sm = u * u * (3.0 - 2.0 * u);
                    alpha[k] = 1.0;
                    for (int d = 0; d < 3; d++) target[3 * k + (size_t)d] = prevP[d] + sm * (P[d] - prevP[d]);
                    target[3 * k + 2] += 0.06 * sin(AM_PI * u);
                }
            } else {
                for (size_t k = (s >= 2 ? s - 2 : 0); k < s; k++) {
                    alpha[k] = (double)(3 - (s - k)) / 3.0;
                    memcpy(target + 3 * k, P, sizeof P);
                }
            }
            memcpy(prevP, P, sizeof P);
            prev_e = pe;
            have_prev = true;
            s = pe + 7;
        }
        if (have_prev)
            for (size_t k = prev_e + 1; k <= prev_e + 2 && k < T; k++) {
                double a = (double)(3 - (k - prev_e)) / 3.0;
                if (a > alpha[k]) {
                    alpha[k] = a;
                    memcpy(target + 3 * k, prevP, sizeof prevP);
                }
            }
        t = e + 1;
    }
}

/* A plant shorter than 3 frames is not a plant: contact [T][C], column c. */
static void ami_exam_drop_short_plants(uint8_t *contact, size_t T, size_t C, size_t c)
{
    for (size_t t = 0; t < T;) {
        if (!contact[t * C + c]) {
            t++;
            continue;
        }
        size_t e = t;
        while (e + 1 < T && contact[(e + 1) * C + c]) e++;
        if (e - t + 1 < 3)
            for (size_t k = t; k <= e; k++) contact[k * C + c] = 0;
        t = e + 1;
    }
}

/* A given motion as the truth (exam --motion): copied, and each contact planted where it is on
 * the ground (within 1.5 cm of its rest height) and still (under 2 mm a frame) for 3 frames or
 * more, the exam's own rule for a plant. */
static am_status ami_exam_given_truth(const am_rig *rig, const am_motion *given, am_exam *ex, am_error *err)
{
    am_motion *mo = ex->truth;
    const size_t T = mo->frame_count, B = rig->bone_count, J = rig->joint_count, C = ex->contact_count;
    memcpy(mo->trans, given->trans, T * 3 * sizeof(double));
    memcpy(mo->root_quat, given->root_quat, T * 4 * sizeof(double));
    if (B) memcpy(mo->euler, given->euler, T * B * 3 * sizeof(double));
    if (given->quat) {
        if (!(mo->quat = am_alloc_array(T * B, 4 * sizeof(double)))) return AM_FAIL(err, AM_E_NOMEM, "exam motion");
        memcpy(mo->quat, given->quat, T * B * 4 * sizeof(double));
    }
    if (given->loc) {
        if (!(mo->loc = am_alloc_array(T * B, 3 * sizeof(double)))) return AM_FAIL(err, AM_E_NOMEM, "exam motion");
        memcpy(mo->loc, given->loc, T * B * 3 * sizeof(double));
    }
    AMI_TRY(am_motion_compute_joints(mo, rig, err));
    for (size_t c = 0; c < C; c++) {
        size_t j = (size_t)ex->contact_joint[c];
        double rz = rig->joint_rest[3 * j + 2];
        for (size_t t = 0; t < T; t++) {
            const double *p = mo->joints + (t * J + j) * 3, *q = mo->joints + ((t ? t - 1 : t + 1) * J + j) * 3;
            ex->contact[t * C + c] = p[2] - rz < 0.015 && hypot(hypot(p[0] - q[0], p[1] - q[1]), p[2] - q[2]) < 2e-3;
        }
        ami_exam_drop_short_plants(ex->contact, T, C, c);
    }
    return AM_OK;
}

/* The exam's own truth: per-angle waves and events within the limits, a wandering root, and
 * the contacts pinned where they run low (ex->truth created, ex->contact sized); joints filled. */
static am_status ami_exam_random_truth(const am_rig *rig, am_exam *ex, ami_rng *rng, am_error *err)
{
    am_motion *mo = ex->truth;
    const size_t T = mo->frame_count, B = rig->bone_count, J = rig->joint_count, C = ex->contact_count;
    const double dt = 1.0 / mo->fps;
    am_status st = AM_OK;
    ami_chains ch = {0};
    ami_wave *waves = am_alloc_array(B * 3, sizeof *waves);
    size_t nev = (size_t)(T * dt / 2.0) + 1;
    ami_event *ev = am_alloc_array(nev, sizeof *ev);
    double *pose = am_alloc_array(B * 16, sizeof(double)), *axes = am_alloc_array(B * 9, sizeof(double));
    double *jt = am_alloc_array(J * 3, sizeof(double));
    double *freep = am_alloc_array(T * 3, sizeof(double)), *alpha = am_alloc_array(T, sizeof(double));
    double *target = am_alloc_array(T * 3, sizeof(double));
    uint8_t *low = am_alloc_array(T, 1), *cand = am_alloc_array(T, 1);
    if (!cand || !waves || !ev || !pose || !axes || !jt || !freep || !alpha || !target || !low) {
        st = AM_FAIL(err, AM_E_NOMEM, "exam buffers");
        goto done;
    }
    for (size_t e = 0; e < nev; e++) {
        ev[e].on = am_alloc_array(B, 1);
        ev[e].target = am_alloc_array(B * 3, sizeof(double));
        if (!ev[e].on || !ev[e].target) {
            st = AM_FAIL(err, AM_E_NOMEM, "exam events");
            goto done;
        }
    }
    if ((st = ami_chains_build(rig, &ch, err)) < 0) goto done;

    /* Per-angle waves, amplitude in the unbounded space. The twist (Y) of a bone gets less:
     * real limbs twist little, and it is mostly unobservable. */
    for (size_t b = 1; b < B; b++)
        for (int a = 0; a < 3; a++) ami_wave_init(&waves[3 * b + (size_t)a], rng, a == 1 ? 0.12 : 0.35, 0.15, 1.1);
    for (size_t e = 0; e < nev; e++) {
        ev[e].center = (T * dt) * ami_rng_uniform(rng);
        ev[e].width = 0.5 + 0.7 * ami_rng_uniform(rng);
        ev[e].pitch = ami_rng_uniform(rng) < 0.5 ? (ami_rng_uniform(rng) - 0.5) * 0.9 : 0.0;
        for (size_t b = 1; b < B; b++) {
            ev[e].on[b] = ami_rng_uniform(rng) < 0.4;
            for (int a = 0; a < 3; a++)
                ev[e].target[3 * b + (size_t)a] = (ami_rng_uniform(rng) < 0.5 ? -1.0 : 1.0) *
                                                   (0.3 + 0.7 * ami_rng_uniform(rng)) * (a == 1 ? 0.3 : 1.0);
        }
    }
    ami_wave turn, speed, pitchw, rollw;
    ami_wave_init(&turn, rng, 0.5, 0.05, 0.4);
    ami_wave_init(&speed, rng, 0.3, 0.05, 0.3);
    ami_wave_init(&pitchw, rng, 0.08, 0.1, 0.6);
    ami_wave_init(&rollw, rng, 0.05, 0.1, 0.6);
    double yaw = 2.0 * AM_PI * ami_rng_uniform(rng), pos[2] = {0.0, 0.0};
    const double *rest_root = rig->joint_rest + 3 * (size_t)rig->head_joint[0];

    for (size_t t = 0; t < T; t++) {
        double s = (double)t * dt;
        double *e = mo->euler + t * B * 3;
        double pitch = ami_wave_at(&pitchw, s), roll = ami_wave_at(&rollw, s);
        for (size_t b = 1; b < B; b++) {
            for (int a = 0; a < 3; a++) {
                double u = ami_wave_at(&waves[3 * b + (size_t)a], s);
                for (size_t k = 0; k < nev; k++) {
                    double d = fabs(s - ev[k].center);
                    if (ev[k].on[b] && d < ev[k].width) u += 0.5 * (1.0 + cos(AM_PI * d / ev[k].width)) * ev[k].target[3 * b + (size_t)a];
                }
                double lo = rig->limits[b * 6 + (size_t)a * 2], hi = rig->limits[b * 6 + (size_t)a * 2 + 1];
                double c, up, dn;
                if (!rig->has_limit[b] || hi - lo >= 2.0 * AM_PI - 1e-9) {
                    c = 0.0;
                    up = dn = 0.6;
                } else {
                    double m = 0.1 * (hi - lo);
                    c = 0.0 < lo + m ? lo + m : (0.0 > hi - m ? hi - m : 0.0);
                    up = hi - c;
                    dn = c - lo;
                }
                if (up > 1.5) up = 1.5;
                if (dn > 1.5) dn = 1.5;
                e[3 * b + (size_t)a] = up > 1e-9 && dn > 1e-9 ? ami_soft_limit(u, c, up, dn) : c;
            }
        }
        for (size_t k = 0; k < nev; k++) {
            double d = fabs(s - ev[k].center);
            if (d < ev[k].width) pitch += 0.5 * (1.0 + cos(AM_PI * d / ev[k].width)) * ev[k].pitch;
        }
        /* Root: heading from the integrated turn rate, pitch / roll small but with events. */
        double qz[4], qx[4], qy[4], tmp[4];
        static const double Z[3] = {0, 0, 1}, X[3] = {1, 0, 0}, Y[3] = {0, 1, 0};
        am_quat_from_axis_angle(Z, yaw, qz);
        am_quat_from_axis_angle(X, pitch, qx);
        am_quat_from_axis_angle(Y, roll, qy);
        am_quat_mul(qz, qx, tmp);
        am_quat_mul(tmp, qy, mo->root_quat + 4 * t);
        double v = 0.25 + ami_wave_at(&speed, s);
        if (v < 0.0) v = 0.0;
        if (v > 0.6) v = 0.6;
        pos[0] += v * dt * sin(yaw);
        pos[1] += -v * dt * cos(yaw);
        yaw += ami_wave_at(&turn, s) * dt;
        double *tr = mo->trans + 3 * t;
        tr[0] = pos[0];
        tr[1] = pos[1];
        tr[2] = rest_root[2];
        ami_fk_frame(rig, tr, mo->root_quat + 4 * t, e, pose, NULL, jt);
        double off = INFINITY;
        for (size_t c = 0; c < C; c++) {
            size_t j = (size_t)ex->contact_joint[c];
            double h = jt[3 * j + 2] - rig->joint_rest[3 * j + 2];
            if (h < off) off = h;
        }
        if (C == 0) {
            off = 0.0;
            for (size_t j = 0; j < J; j++)
                if (jt[3 * j + 2] < off) off = jt[3 * j + 2];
        }
        tr[2] -= off;
        /* Nothing goes under the ground: a tail or a head that dips below it lifts the body
         * (the contacts then hover for those frames). Truths that pierced the ground asked the
         * fit, whose ground term forbids it, for the impossible: most of the dino clips that
         * failed (issue 12) had a tail tip 30 cm down. */
        ami_fk_frame(rig, tr, mo->root_quat + 4 * t, e, pose, NULL, jt);
        double low_z = 0.0;
        for (size_t j = 0; j < J; j++)
            if (jt[3 * j + 2] < low_z) low_z = jt[3 * j + 2];
        tr[2] -= low_z;
    }

    /* Plant the contacts: pin each low contact at one spot for the frames of its plant. */
    for (size_t c = 0; c < C; c++) {
        if (!ami_progress("exam", (double)c / (double)C)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "exam stopped at contact %zu", c);
            goto done;
        }
        size_t j = (size_t)ex->contact_joint[c];
        double rz = rig->joint_rest[3 * j + 2];
        for (size_t t = 0; t < T; t++) {
            ami_fk_frame(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + t * B * 3, pose, NULL, jt);
            memcpy(freep + 3 * t, jt + 3 * j, 3 * sizeof(double));
            low[t] = jt[3 * j + 2] - rz < 0.015;
        }
        ami_exam_plants(low, T, freep, rz, alpha, target, cand);
        for (size_t t = 0; t < T; t++) {
            if (alpha[t] <= 0.0) continue;
            double goal[3];
            for (int k = 0; k < 3; k++) goal[k] = alpha[t] * target[3 * t + (size_t)k] + (1.0 - alpha[t]) * freep[3 * t + (size_t)k];
            double miss = ami_pin_joint(rig, &ch, j, 3, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + t * B * 3,
                                        goal, pose, axes, jt);
            if (isnan(miss)) {
                st = ami_cancelled() ? AM_FAIL(err, AM_E_CANCELLED, "exam stopped")
                                     : AM_FAIL(err, AM_E_NOMEM, "contact pin");
                goto done;
            }
            ex->contact[t * C + c] = cand[t] && miss < 1.5e-3;
        }
        /* after the reach test */
        ami_exam_drop_short_plants(ex->contact, T, C, c);
    }
    st = am_motion_compute_joints(mo, rig, err);
done:
    for (size_t e = 0; ev && e < nev; e++) {
        am_free(ev[e].on);
        am_free(ev[e].target);
    }
    am_free(ev);
    am_free(waves);
    am_free(pose);
    am_free(axes);
    am_free(jt);
    am_free(freep);
    am_free(alpha);
    am_free(target);
    am_free(low);
    am_free(cand);
    ami_chains_free(&ch);
    return st;
}

static am_status ami_exam_generate(const am_rig *rig, const am_creature *cr,
                                   const am_exam_opts *opts_in, am_exam **out, am_error *err)
{
    assert(rig && out);
    *out = NULL;
    const am_exam_opts o = ami_exam_opts_defaults(opts_in);
    const am_motion *given = o.motion;
    if (given) {
        AMI_CHECK(err, given->bone_count == rig->bone_count && given->euler && given->trans && given->root_quat,
                  AM_E_ARG, "exam motion: not bound to the rig (%zu bones, the rig %zu)", given->bone_count, rig->bone_count);
        AMI_CHECK(err, am_fps_valid(given->fps), AM_E_VALUE, "exam motion: fps %g", given->fps);
    }
    const size_t T = given ? given->frame_count : o.frames;
    const double fps = given ? given->fps : o.fps;
    AMI_CHECK(err, T >= 3 && T <= 1000000, AM_E_ARG, "exam frames %zu (need 3..1e6)", T);
    AMI_CHECK(err, o.noise_px >= 0 && o.dropout >= 0 && o.dropout <= 1 && o.swap >= 0 && o.swap <= 1 &&
                       o.outliers >= 0 && o.outliers <= 1 && o.squash >= 0 && o.squash < 1,
              AM_E_ARG, "exam degradations out of range (probabilities in [0,1], squash in [0,1))");
    AMI_CHECK(err, o.lag > -(int)T / 2 && o.lag < (int)T / 2, AM_E_ARG, "lag %d too large for %zu frames", o.lag, T);
    am_layout L;
    if (cr) L = cr->layout;
    else am_layout_default(&L);
    const size_t J = rig->joint_count;
    ami_rng rng;
    ami_rng_seed(&rng, o.seed * 0x2545F4914F6CDD1Dull + 17);

    am_status st = AM_OK;
    am_exam *ex = am_alloc(sizeof *ex);
    if (!ex) return AM_FAIL(err, AM_E_NOMEM, "exam");
    ex->lag = o.lag;
    if ((st = am_motion_create(rig, T, fps, &ex->truth, err)) < 0) goto done;

    /* Contacts from the creature (default: its feet), as rig joints. */
    if (cr && cr->contact_count) {
        ex->contact_names = am_alloc_array(cr->contact_count, sizeof(char *));
        ex->contact_joint = am_alloc_array(cr->contact_count, sizeof(int32_t));
        if (!ex->contact_names || !ex->contact_joint) {
            st = AM_FAIL(err, AM_E_NOMEM, "contacts");
            goto done;
        }
        for (size_t c = 0; c < cr->contact_count; c++) {
            int j = am_rig_find_joint(rig, cr->contacts[c]);
            if (j < 0) {
                st = AM_FAIL(err, AM_E_NAME, "creature contact '%s' is not a joint of the rig", cr->contacts[c]);
                goto done;
            }
            ex->contact_names[ex->contact_count] = am_strdup(cr->contacts[c]);
            ex->contact_joint[ex->contact_count++] = (int32_t)j;
        }
    }
    const size_t C = ex->contact_count;
    ex->contact = am_alloc_array(T * (C ? C : 1), 1);
    if (!ex->contact) {
        st = AM_FAIL(err, AM_E_NOMEM, "contacts");
        goto done;
    }

    st = given ? ami_exam_given_truth(rig, given, ex, err) : ami_exam_random_truth(rig, ex, &rng, err);
    if (st < 0) goto done;
    am_motion *mo = ex->truth; /* joints filled by either truth */
    ex->body_size = am_body_size(mo->joints, J, NULL);

    /* The reading. */
    am_det *det = am_alloc(sizeof *det);
    ex->det = det;
    if (!det) {
        st = AM_FAIL(err, AM_E_NOMEM, "det");
        goto done;
    }
    det->frame_count = T;
    det->joint_count = J;
    det->fps = fps;
    det->front_uv = am_alloc_array(T * J * 2, sizeof(float));
    det->side_uv = am_alloc_array(T * J * 2, sizeof(float));
    det->front_conf = am_alloc_array(T * J, sizeof(float));
    det->side_conf = am_alloc_array(T * J, sizeof(float));
    det->names = am_alloc_array(J, sizeof(char *));
    if (!det->front_uv || !det->side_uv || !det->front_conf || !det->side_conf || !det->names) {
        st = AM_FAIL(err, AM_E_NOMEM, "det arrays");
        goto done;
    }
    for (size_t j = 0; j < J; j++)
        if (!(det->names[j] = am_strdup(rig->joint_names[j]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "det names");
            goto done;
        }
    for (size_t t = 0; t < T; t++) {
        long tf = (long)t - o.lag;
        if (tf < 0) tf = 0;
        if (tf >= (long)T) tf = (long)T - 1;
        for (size_t j = 0; j < J; j++) {
            for (int view = 0; view < 2; view++) {
                double uv[2];
                const double *p = mo->joints + ((view == 0 ? (size_t)tf : t) * J + j) * 3;
                if (view == 0) {
                    ami_project_front(&L, p, uv);
                    uv[1] = L.ground_v - (L.ground_v - uv[1]) * (1.0 - o.squash);
                } else {
                    ami_project_side(&L, p, uv);
                }
                uv[0] += o.noise_px * ami_rng_normal(&rng);
                uv[1] += o.noise_px * ami_rng_normal(&rng);
                if (o.outliers > 0 && ami_rng_uniform(&rng) < o.outliers) {
                    double ang = 2.0 * AM_PI * ami_rng_uniform(&rng), d = 15.0 + 45.0 * ami_rng_uniform(&rng);
                    uv[0] += d * cos(ang);
                    uv[1] += d * sin(ang);
                }
                double conf = 0.7 + 0.3 * ami_rng_uniform(&rng);
                if (o.dropout > 0 && ami_rng_uniform(&rng) < o.dropout) conf = 0.0;
                float *dst = (view == 0 ? det->front_uv : det->side_uv) + (t * J + j) * 2;
                dst[0] = (float)uv[0];
                dst[1] = (float)uv[1];
                (view == 0 ? det->front_conf : det->side_conf)[t * J + j] = (float)conf;
            }
        }
    }
    if (o.swap > 0) {
        int32_t *pairs = am_alloc_array(J * 2 + 2, sizeof *pairs);
        if (!pairs) {
            st = AM_FAIL(err, AM_E_NOMEM, "pairs");
            goto done;
        }
        size_t np = ami_lr_pairs(rig, pairs);
        for (size_t k = 0; k < np; k++) {
            for (size_t t = 0; t < T; t++) {
                if (ami_rng_uniform(&rng) >= o.swap) continue;
                size_t len = 1 + (size_t)(3.0 * ami_rng_uniform(&rng));
                for (size_t u = t; u < t + len && u < T; u++) {
                    size_t a = u * J + (size_t)pairs[2 * k], b = u * J + (size_t)pairs[2 * k + 1];
                    float tmp[2] = {det->front_uv[2 * a], det->front_uv[2 * a + 1]}, tc = det->front_conf[a];
                    det->front_uv[2 * a] = det->front_uv[2 * b];
                    det->front_uv[2 * a + 1] = det->front_uv[2 * b + 1];
                    det->front_conf[a] = det->front_conf[b];
                    det->front_uv[2 * b] = tmp[0];
                    det->front_uv[2 * b + 1] = tmp[1];
                    det->front_conf[b] = tc;
                }
                t += len;
            }
        }
        am_free(pairs);
    }

done:
    if (st < 0) {
        am_exam_free(ex);
        return st;
    }
    *out = ex;
    return AM_OK;
}

am_status am_exam_generate(const am_rig *rig, const am_creature *cr, const am_exam_opts *opts,
                           am_exam **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    ami_stage stage = ami_stage_begin("exam");
    am_status st = ami_exam_generate(rig, cr, opts, out, err);
    if (st >= 0) ami_stage_end(&stage);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_exam_write_truth(const am_exam *ex, const char *path, am_error *err)
{
    const am_motion *mo = ex->truth;
    size_t T = mo->frame_count, B = mo->bone_count, J = mo->joint_count, C = ex->contact_count;
    size_t K = 0;
    for (size_t c = 0; c < C; c++)
        for (size_t t = 0; t < T; t++)
            if (ex->contact[t * C + c] && (t == 0 || !ex->contact[(t - 1) * C + c])) K++;
    int32_t *iv = am_alloc_array(K * 3 + 3, sizeof *iv);
    if (!iv) return AM_FAIL(err, AM_E_NOMEM, "contact intervals");
    size_t k = 0;
    for (size_t c = 0; c < C; c++)
        for (size_t t = 0; t < T; t++)
            if (ex->contact[t * C + c] && (t == 0 || !ex->contact[(t - 1) * C + c])) {
                size_t e = t;
                while (e + 1 < T && ex->contact[(e + 1) * C + c]) e++;
                iv[3 * k] = (int32_t)c;
                iv[3 * k + 1] = (int32_t)t;
                iv[3 * k + 2] = (int32_t)e;
                k++;
            }
    size_t s_j[3] = {T, J, 3}, s_e[3] = {T, B, 3}, s_t[2] = {T, 3}, s_q[2] = {T, 4}, s_c[2] = {T, C},
           s_iv[2] = {K, 3}, s_n[1] = {J}, s_b[1] = {B}, s_cn[1] = {C};
    double lag = ex->lag, fps = mo->fps, bs = ex->body_size;
    am_array a[13];
    size_t n = 0;
    a[n++] = am_array_view("joints", AM_DTYPE_F64, 3, s_j, mo->joints);
    a[n++] = am_array_view("euler", AM_DTYPE_F64, 3, s_e, mo->euler);
    a[n++] = am_array_view("trans", AM_DTYPE_F64, 2, s_t, mo->trans);
    a[n++] = am_array_view("root_quat", AM_DTYPE_F64, 2, s_q, mo->root_quat);
    a[n++] = am_array_view("contact", AM_DTYPE_U8, 2, s_c, ex->contact);
    a[n++] = am_array_view("contact_intervals", AM_DTYPE_I32, 2, s_iv, iv);
    a[n++] = am_array_view("names", AM_DTYPE_STR, 1, s_n, mo->joint_names);
    a[n++] = am_array_view("bones", AM_DTYPE_STR, 1, s_b, mo->bone_names);
    a[n++] = am_array_view("contact_names", AM_DTYPE_STR, 1, s_cn, ex->contact_names);
    a[n++] = am_array_view("lag", AM_DTYPE_F64, 0, NULL, &lag);
    a[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    a[n++] = am_array_view("body_size", AM_DTYPE_F64, 0, NULL, &bs);
    am_status st = am_npz_write(path, a, n, true, err);
    am_free(iv);
    return st;
}
