/* Synthetic gaits with known phase offsets for any legged rig: the ground truth of the
 * locomotion summary. Each leg (the bone chain above a foot: the rig's lowest leaf joints) swings
 * about the body's sideways axis at its hip, with the knee bent during its swing so that the foot
 * lifts, while the root travels forward (-Y) at a constant speed. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/synth.h"
#include "core/internal.h"

bool am_synth_gait_offsets(const char *gait, double offsets[4])
{
    /* LF, RF, LH, RH (Hildebrand); a cycle's touchdowns relative to the left hind foot */
    static const struct {
        const char *name;
        double o[4];
    } g[] = {{"walk", {0.75, 0.25, 0.0, 0.5}}, {"trot", {0.5, 0.0, 0.0, 0.5}}, {"pace", {0.0, 0.5, 0.0, 0.5}},
             {"gallop", {0.5, 0.6, 0.0, 0.1}}, {"hop", {0.5, 0.5, 0.0, 0.0}}, {"canter", {0.33, 0.66, 0.0, 0.33}}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (strcmp(gait, g[i].name) == 0) {
            memcpy(offsets, g[i].o, sizeof g[i].o);
            return true;
        }
    return false;
}

am_status am_synth_gait(const am_rig *rig, const am_synth_gait_opts *opts, am_motion **out, am_error *err)
{
    assert(rig && opts && out);
    *out = NULL;
    size_t T = opts->frames ? opts->frames : 61;
    double fps = opts->fps > 0 ? opts->fps : 30, period = opts->period_s > 0 ? opts->period_s : 1.0;
    double size = am_body_size(rig->joint_rest, rig->joint_count, NULL);
    double speed = opts->speed_mps > 0 ? opts->speed_mps : 0.6 * size / period;
    /* feet: leaf tails lowest at rest; a leg is the chain up to the bone below the body */
    double lo = INFINITY, cy = 0;
    for (size_t j = 0; j < rig->joint_count; j++) lo = fmin(lo, rig->joint_rest[j * 3 + 2]);
    int32_t foot[4] = {-1, -1, -1, -1};
    size_t nf = 0;
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->is_helper[b]) continue;
        bool leaf = true;
        for (size_t c = 0; c < rig->bone_count; c++) leaf &= rig->parent[c] != (int32_t)b;
        const double *tail = rig->joint_rest + (size_t)rig->tail_joint[b] * 3;
        if (leaf && tail[2] <= lo + 0.02 * size) {
            AMI_CHECK(err, nf < 4, AM_E_UNSUPPORTED, "synthetic gaits are for four feet; the rig has more");
            foot[nf++] = (int32_t)b;
            cy += tail[1];
        }
    }
    AMI_CHECK(err, nf == 4, AM_E_VALUE, "the rig has %zu feet (lowest leaf bones), a synthetic gait needs 4", nf);
    cy /= 4;
    AMI_TRY(am_motion_create(rig, T, fps, out, err));
    am_motion *mo = *out;
    size_t B = rig->bone_count;
    for (size_t f = 0; f < 4; f++) {
        const double *tail = rig->joint_rest + (size_t)rig->tail_joint[foot[f]] * 3;
        int slot = (tail[1] < cy ? 0 : 2) + (tail[0] < 0);
        double off = opts->offsets[slot];
        /* the chain: hip = the topmost bone whose parent is the root or has other children */
        int32_t chain[8];
        size_t n = 0;
        for (int32_t b = foot[f]; b > 0 && n < 8; b = rig->parent[b]) {
            chain[n++] = b;
            int32_t p = rig->parent[b];
            size_t kids = 0;
            for (size_t c = 0; c < B; c++) kids += rig->parent[c] == p;
            if (p <= 0 || kids > 1) break;
        }
        int32_t hip = chain[n - 1], knee = n >= 2 ? chain[n - 2] : -1;
        double amp = opts->swing_rad > 0 ? opts->swing_rad : 0.35;
        for (size_t t = 0; t < T; t++) {
            double ph = 2 * AM_PI * ((double)t / fps / period - off);
            double *eh = mo->euler + (t * B + (size_t)hip) * 3;
            /* the bone's X axis is the sideways hinge for a leg hanging down (roll 0, SPEC 2.2) */
            eh[0] += amp * cos(ph);
            if (knee >= 0) mo->euler[(t * B + (size_t)knee) * 3] += 0.6 * amp * fmax(0.0, sin(ph));
        }
    }
    for (size_t t = 0; t < T; t++) {
        const double *r = rig->joint_rest + (size_t)rig->head_joint[0] * 3;
        mo->trans[t * 3] = r[0];
        mo->trans[t * 3 + 1] = r[1] - speed * (double)t / fps;
        mo->trans[t * 3 + 2] = r[2];
    }
    am_free(mo->quat);
    mo->quat = NULL;
    return am_motion_compute_joints(mo, rig, err);
}
