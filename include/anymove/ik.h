/* anymove IK: joint positions over time -> every bone's local rotation, for any rig
 * (docs/ik.md). Analytic, per frame, parents first; no training, no species.
 *
 * CONVENTIONS
 * - positions: [T][J][3] world metres in the rig's joint order (SPEC 1); frame t, joint j.
 * - The output motion is bound to the rig: trans = observed root head, root_quat, and each
 *   non-root bone's local quat and euler (SPEC 4.3). joints are not filled (use
 *   am_motion_compute_joints).
 * - A bone's "world delta" G_b = W_b R_rest(b)^-1 maps rest vectors to posed vectors; the
 *   local rotation is L_b = R_rest(b)^-1 (G_parent^T G_b) R_rest(b).
 *
 *     am_motion *mo = NULL;
 *     if (am_motion_create(rig, T, fps, &mo, &err) == AM_OK) {
 *         am_ik_job job = {.rig = rig, .frame_count = T, .positions = pos, .out = mo};
 *         if (am_ik_run(&job, &err) == AM_OK && am_motion_compute_joints(mo, rig, &err) == AM_OK) {
 *             ...
 *         }
 *     }
 *     am_motion_free(mo);
 *
 * Pairs: none (the job owns no buffers; the caller creates and frees the motion, and the
 * warning list it asked for).
 */
#ifndef ANYMOVE_IK_H
#define ANYMOVE_IK_H

#include "core.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_ik_flags {
    AM_IK_NO_GRANDCHILD_TWIST = 1u << 0, /* keep the prior's twist on single-child bones */
    AM_IK_NO_LIMITS = 1u << 1,           /* ignore the rig's joint limits */
    AM_IK_NO_TEMPORAL = 1u << 2,         /* priors from the reference/rest only, never from the
                                            previous frame */
    AM_IK_FLAGS_COUNT = 3
} am_ik_flags;

typedef struct am_ik_opts {
    uint32_t flags;          /* am_ik_flags; default 0 (everything on) */
    double temporal;         /* weight in (0, 1] of the previous frame's solution in each
                                bone's prior (normalized lerp from the reference/rest prior);
                                default 0.5 (0 = default; AM_IK_NO_TEMPORAL for none) */
    double twist_weight;     /* cost of twisting a single-direction bone away from its prior,
                                against the swing its child then needs (both squared angles);
                                default 1 */
    am_context ctx;          /* allocator, limits, progress (stage "ik: solve frames");
                                zero = inherited (core.h) */
} am_ik_opts;

typedef struct am_ik_job {
    const am_rig *rig;
    size_t frame_count;             /* T >= 1 */
    const double *positions;        /* [T][J][3]; NULL when points is given */
    const uint8_t *joint_mask;      /* [J] 1 = observed, 0 = ignore; NULL = all joints except
                                       those only carried by helper bones */
    const am_motion *reference;     /* optional, bound to rig: its frame 0 gives the true
                                       rotations of frame 0 (pose2rot protocol) and is the
                                       twist prior; NULL = rest */
    const am_ik_opts *opts;         /* NULL = defaults */
    am_motion *out;                 /* caller-owned, bound to rig, frame_count frames, with
                                       quat allocated or NULL (then euler only) */
    am_warning_list *warnings;      /* optional output: the call's warnings are appended
                                       (free with am_warning_list_free); NULL = handed to the
                                       caller's scope */
    am_reals points;                /* the positions as a typed view, float32 or float64
                                       [T][J][3], read in place: set either this or
                                       positions, not both (assert) */
} am_ik_job;

/* Checks shapes and values: rig, positions and out present, out bound to rig with
 * frame_count frames, reference bound to rig, finite positions (AM_E_NONFINITE names frame
 * and joint), T >= 1 (AM_E_EMPTY). Exactly one of positions and points.data set (assert). */
AM_NODISCARD am_status am_ik_validate(const am_ik_job *job, am_error *err);
/* Validate, then solve every frame, in the scope of job->opts->ctx (a progress callback that
 * returns false stops it with AM_E_CANCELLED; frames solved so far stay in out). Allocates a
 * small workspace (O(B)) and returns AM_E_NOMEM if it cannot. Safe on any finite input
 * (degenerate directions keep the prior). */
AM_NODISCARD am_status am_ik_run(const am_ik_job *job, am_error *err);

/* The default observation mask: 1 for joints that are the head or tail of a non-helper
 * bone, else 0. mask: [J]. */
void am_ik_default_mask(const am_rig *rig, uint8_t *mask);

#ifdef __cplusplus
}
#endif
#endif
