/* The locomotion of a clip: speed, stride, cadence, per-foot duty factor and phase, the gait read
 * from the phase pattern, turn rate and loop error (pack's locomotion.json).
 *
 * Phases come from the fundamental of each foot's fore-aft swing relative to the body over the
 * cycle (a foot touches down at the front of its swing), which is exact for a periodic signal and
 * needs no contact threshold; duty factors from contacts: a foot is planted where it is within
 * 10 % of its height range (and 0.1 % of the body size) above its lowest. The
 * gait is the pattern (walk, trot, pace, canter, gallop, hop) nearest the phases, for any time
 * shift and either lead; two feet are walk, run (duty below 0.5) or hop (in phase). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/shape.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "shape/shape_internal.h"

void am_locomotion_free(am_locomotion *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->foot_count; i++) am_free(l->feet[i].joint);
    am_free(l->feet);
    am_free(l);
}

static double ami_circ(double a, double b)
{
    double d = fabs(a - b);
    d -= floor(d);
    return d > 0.5 ? 1.0 - d : d;
}

/* Offsets of LF, RF, LH, RH in a cycle (Hildebrand's patterns). */
typedef struct {
    const char *name;
    double lf, rf, lh, rh;
} ami_pattern;

static const ami_pattern ami_patterns[] = {
    {"walk", 0.75, 0.25, 0.0, 0.5},  {"trot", 0.5, 0.0, 0.0, 0.5},   {"pace", 0.0, 0.5, 0.0, 0.5},
    {"canter", 0.33, 0.66, 0.0, 0.33}, {"gallop", 0.5, 0.6, 0.0, 0.1}, {"gallop", 0.6, 0.5, 0.0, 0.1},
    {"hop", 0.5, 0.5, 0.0, 0.0},     {"hop", 0.0, 0.0, 0.0, 0.0},
};

static const char *ami_gait4(const double ph[4], double *dist)
{
    const char *best = NULL;
    double bd = INFINITY;
    for (size_t p = 0; p < sizeof ami_patterns / sizeof ami_patterns[0]; p++)
        for (int mirror = 0; mirror < 2; mirror++) {
            const ami_pattern *q = &ami_patterns[p];
            double t[4] = {q->lf, q->rf, q->lh, q->rh};
            if (mirror) {
                double a = t[0], b = t[2];
                t[0] = t[1], t[1] = a, t[2] = t[3], t[3] = b;
            }
            /* the best time shift: try each foot's alignment */
            for (int k = 0; k < 4; k++) {
                double sh = ph[k] - t[k], d = 0;
                for (int i = 0; i < 4; i++) d += ami_circ(ph[i] - sh, t[i]);
                if (d < bd) bd = d, best = q->name;
            }
        }
    *dist = bd / 4;
    return best;
}

static am_status ami_feet_default(const am_rig *rig, const am_motion *mo, int32_t *idx, size_t *n, size_t cap)
{
    *n = 0;
    /* the contact keys of motion.json, when it has them */
    if (mo->extra_json) {
        json_t *doc = json_loads(mo->extra_json, 0, NULL), *c = json_object_get(doc, "contacts");
        const char *key;
        json_t *v;
        if (json_is_object(c))
            json_object_foreach(c, key, v) {
                int j = am_rig_find_joint(rig, key);
                if (j >= 0 && *n < cap) idx[(*n)++] = j;
            }
        json_decref(doc);
        if (*n) return AM_OK;
    }
    double lo = INFINITY, size = am_body_size(rig->joint_rest, rig->joint_count, NULL);
    for (size_t j = 0; j < rig->joint_count; j++) lo = fmin(lo, rig->joint_rest[j * 3 + 2]);
    for (size_t j = 0; j < rig->joint_count && *n < cap; j++) {
        int32_t b = rig->kp_bone[j];
        if (!rig->kp_is_tail[j] || rig->is_helper[b]) continue;
        bool leaf = true;
        for (size_t c = 0; c < rig->bone_count; c++) leaf &= rig->parent[c] != b;
        if (leaf && rig->joint_rest[j * 3 + 2] <= lo + 0.02 * size) idx[(*n)++] = (int32_t)j;
    }
    return AM_OK;
}

am_status am_locomotion_run(const am_rig *rig, const am_motion *mo, const double *root_motion,
                            const char *const *feet, size_t foot_count, am_locomotion **out, am_error *err)
{
    assert(rig && mo && out);
    *out = NULL;
    size_t T = mo->frame_count, J = rig->joint_count;
    AMI_CHECK(err, T >= 4, AM_E_VALUE, "%zu frames are too few for a gait", T);
    int32_t idx[64];
    size_t nf = 0;
    if (feet) {
        for (size_t i = 0; i < foot_count && nf < 64; i++) {
            int j = am_rig_find_joint(rig, feet[i]);
            AMI_CHECK(err, j >= 0, AM_E_NAME, "foot '%s' is no joint of the rig", feet[i]);
            idx[nf++] = j;
        }
    } else {
        AMI_TRY(ami_feet_default(rig, mo, idx, &nf, 64));
    }
    am_locomotion *l = am_alloc(sizeof *l);
    double *jt = am_alloc_array(T * J * 3, sizeof *jt);
    if (!l || !jt || (nf && !(l->feet = am_alloc_array(nf, sizeof *l->feet)))) {
        am_free(jt);
        am_locomotion_free(l);
        return AM_FAIL(err, AM_E_NOMEM, "locomotion");
    }
    am_rig_fk_clip(rig, mo, jt);
    /* the world: an in-place clip's curve back on */
    if (root_motion)
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < J; j++)
                for (int k = 0; k < 2; k++) jt[(t * J + j) * 3 + (size_t)k] += root_motion[t * 2 + (size_t)k];
    double size = am_body_size(rig->joint_rest, J, NULL);
    /* a loop's cycle is the clip; the next frame is the first one moved by the cycle's travel */
    double tr0[2] = {mo->trans[0] + (root_motion ? root_motion[0] : 0), mo->trans[1] + (root_motion ? root_motion[1] : 0)};
    double trl[2] = {mo->trans[(T - 1) * 3] + (root_motion ? root_motion[(T - 1) * 2] : 0),
                     mo->trans[(T - 1) * 3 + 1] + (root_motion ? root_motion[(T - 1) * 2 + 1] : 0)};
    double step[2] = {(trl[0] - tr0[0]) / (double)(T - 1), (trl[1] - tr0[1]) / (double)(T - 1)};
    l->period_s = (double)T / mo->fps;
    l->speed_mps = hypot(step[0], step[1]) * mo->fps;
    l->stride_m = l->speed_mps * l->period_s;
    double yaw0 = ami_yaw_of(mo->root_quat), yl = ami_yaw_of(mo->root_quat + (T - 1) * 4), dy = yl - yaw0;
    while (dy > AM_PI) dy -= 2 * AM_PI;
    while (dy < -AM_PI) dy += 2 * AM_PI;
    l->turn_deg_per_s = AM_DEG(dy) / ((double)(T - 1) / mo->fps);
    double d[3] = {step[0] * (double)T, step[1] * (double)T, 0};
    double *jl = am_alloc_array(T * J * 3, sizeof *jl);
    if (jl) {
        for (size_t i = 0; i < T * J * 3; i++) jl[i] = jt[i];
        if (root_motion) /* measure the seam in the clip's own frame, travel per cycle d */
            for (size_t t = 0; t < T; t++)
                for (size_t j = 0; j < J; j++)
                    for (int k = 0; k < 2; k++) jl[(t * J + j) * 3 + (size_t)k] -= root_motion[t * 2 + (size_t)k] - step[k] * (double)t;
        ami_loop_error(jl, T, J, d, size > 0 ? size : 1, &l->loop, NULL, NULL);
        am_free(jl);
    }
    /* feet */
    double ph[64];
    double rest_y = 0;
    for (size_t i = 0; i < nf; i++) rest_y += rig->joint_rest[(size_t)idx[i] * 3 + 1] / (double)nf;
    for (size_t i = 0; i < nf; i++) {
        am_foot *f = &l->feet[i];
        l->foot_count = i + 1;
        f->joint = am_strdup(rig->joint_names[idx[i]]);
        if (!f->joint) {
            am_free(jt);
            am_locomotion_free(l);
            return AM_FAIL(err, AM_E_NOMEM, "feet");
        }
        const double *rp = rig->joint_rest + (size_t)idx[i] * 3;
        f->side = rp[0] > 1e-3 * size ? 'L' : rp[0] < -1e-3 * size ? 'R' : 'C';
        f->end = rp[1] < rest_y ? 'F' : 'H'; /* faces -Y: the front feet have the smaller y */
        /* the fore-aft axis: the way the clip travels, else the way the root faces */
        double ax[2] = {d[0], d[1]}, an = hypot(ax[0], ax[1]);
        if (an < 1e-9 * size) {
            double yaw = ami_yaw_of(mo->root_quat);
            ax[0] = sin(yaw), ax[1] = -cos(yaw), an = 1;
        }
        ax[0] /= an, ax[1] /= an;
        double lo = INFINITY, hi = -INFINITY, re = 0, im = 0;
        for (size_t t = 0; t < T; t++) {
            const double *x = jt + (t * J + (size_t)idx[i]) * 3;
            double z = x[2], rx = x[0] - (mo->trans[t * 3] + (root_motion ? root_motion[t * 2] : 0)),
                   ry = x[1] - (mo->trans[t * 3 + 1] + (root_motion ? root_motion[t * 2 + 1] : 0));
            lo = fmin(lo, z), hi = fmax(hi, z);
            double fwd = rx * ax[0] + ry * ax[1], a = 2 * AM_PI * (double)t / (double)T;
            re += fwd * cos(a), im += fwd * sin(a);
        }
        size_t planted = 0;
        for (size_t t = 0; t < T; t++)
            planted += jt[(t * J + (size_t)idx[i]) * 3 + 2] <= lo + 0.1 * (hi - lo) + 1e-3 * size;
        f->duty_factor = (double)planted / (double)T;
        /* touchdown: the foot furthest forward relative to the body, the peak of the fore-aft
         * swing's fundamental fwd ~ A cos(2 pi t / T - phi) */
        double phi = atan2(im, re);
        ph[i] = phi / (2 * AM_PI);
        ph[i] -= floor(ph[i]);
    }
    /* phases relative to the first hind foot (else the first foot) */
    size_t ref = 0;
    for (size_t i = nf; i-- > 0;)
        if (l->feet[i].end == 'H') ref = i;
    for (size_t i = 0; i < nf; i++) {
        double p = ph[i] - ph[ref];
        l->feet[i].phase = p - floor(p);
        if (l->feet[i].phase > 1 - 1e-9) l->feet[i].phase = 0;
    }
    l->cadence_hz = (double)nf / l->period_s;
    l->gait_distance = NAN;
    if (nf == 0) {
        l->gait = NULL;
    } else if (l->speed_mps < 0.02 * size && nf != 4) {
        l->gait = "still";
    } else if (nf == 4) {
        double p4[4] = {0, 0, 0, 0};
        int have = 0;
        for (size_t i = 0; i < 4; i++) {
            int k = (l->feet[i].end == 'F' ? 0 : 2) + (l->feet[i].side == 'R');
            p4[k] = l->feet[i].phase;
            have |= 1 << k;
        }
        l->gait = have == 15 ? ami_gait4(p4, &l->gait_distance) : "walk";
    } else if (nf == 2) {
        double off = ami_circ(l->feet[0].phase, l->feet[1].phase), duty = 0.5 * (l->feet[0].duty_factor + l->feet[1].duty_factor);
        l->gait_distance = fmin(off, 0.5 - off);
        l->gait = off < 0.15 ? "hop" : duty < 0.5 ? "run" : "walk";
    } else {
        l->gait = "walk";
    }
    am_free(jt);
    *out = l;
    return AM_OK;
}
