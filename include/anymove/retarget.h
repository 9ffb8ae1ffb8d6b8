/* anymove retarget: any motion onto any character (docs/retarget.md).
 *
 * Two steps. A bone map says which source bone drives each target bone
 * (am_retarget_map_build: exact names, normalised names, a role table, then the topology of
 * the two skeletons; chains of different bone counts by normalised arc length; a map.json
 * overrides any entry). The job then moves the motion across (am_retarget_run): world rest
 * frames cancel every bind pose, bone roll and axis convention; the root moves by the ratio
 * of leg lengths; an IK pass holds the source's foot plants on the target and keeps its feet
 * out of the ground.
 *
 * CONVENTIONS
 * - A bone's world delta G_b maps its rest frame to its posed frame (world rotation times
 *   the inverse rest rotation, SPEC 2.3); the root's is its root_quat. Deltas are what moves
 *   from one rig to the other, so local axes never meet.
 * - Rigs are in the SPEC 1 world (metres, Z up, facing -Y, +X left); the ground is z = 0.
 * - Excluded bones: helpers (SPEC 2.1 `helpers`, IK and pole targets by name) and end-site
 *   bones (leaves named *_end, *End, *_Nub...). They are never mapped; on the target they hold
 *   their rest pose.
 *
 *     am_retarget_map *map = NULL;
 *     am_motion *out = NULL;
 *     if (am_retarget_map_build(src_rig, dst_rig, NULL, &map, &err) == AM_OK &&
 *         am_motion_create(dst_rig, mo->frame_count, mo->fps, &out, &err) == AM_OK) {
 *         am_retarget_job job = {.source_rig = src_rig, .source = mo, .target_rig = dst_rig,
 *                                .map = map, .out = out};
 *         if (am_retarget_run(&job, &err) == AM_OK) { ... }
 *     }
 *     am_motion_free(out);
 *     am_retarget_map_free(map);
 *
 * Pairs: am_retarget_map_build -> am_retarget_map_free; am_retarget_map_names ->
 * am_bone_map_free; a report the run filled -> am_retarget_report_free. The job owns no
 * buffers: the caller creates and frees the output motion (the run allocates its loc when
 * bones slide).
 * Contexts (core.h): am_retarget_map_build runs in the scope of opts->ctx, am_retarget_run in
 * that of job->opts->ctx (stages "retarget: transfer" and "retarget: feet").
 */
#ifndef ANYMOVE_RETARGET_H
#define ANYMOVE_RETARGET_H

#include "core.h"
#include "io.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the bone map ---- */

/* How a target bone got its driver (map.json "rules"). */
typedef enum am_retarget_rule {
    AM_RETARGET_RULE_NONE,       /* no driver: holds its rest pose relative to its parent */
    AM_RETARGET_RULE_NAME,       /* the same name */
    AM_RETARGET_RULE_NORMALISED, /* the same name once case, separators, side tokens, prefixes
                                    and numbering suffixes are normalised */
    AM_RETARGET_RULE_ROLE,       /* the same role (thigh, forearm, neck...) in the role table */
    AM_RETARGET_RULE_TOPOLOGY,   /* matched by the skeletons' structure: chains by side, rest
                                    direction, relative length and depth */
    AM_RETARGET_RULE_CHAIN,      /* filled along a mapped chain: the source's rotation at the
                                    same normalised arc length (two source bones, blended) */
    AM_RETARGET_RULE_USER,       /* an entry of the map file */
    AM_RETARGET_RULE_EXCLUDED,   /* a helper or end-site bone: never mapped */
    AM_RETARGET_RULE_COUNT
} am_retarget_rule;

/* "name", "normalised name", ... (map.json rules, report). */
const char *am_retarget_rule_name(am_retarget_rule rule);

/* A pair of matched chains (root to leaf paths of the two skeletons), for the IK pass and
 * the report: bone indices of each rig, first is the ancestor. */
typedef struct am_retarget_chain {
    int32_t source_first, source_last;
    int32_t target_first, target_last;
    int side;              /* +1 left (+X), -1 right, 0 the middle */
    uint8_t is_leg;        /* a sided chain whose end stands on the ground in the target's rest */
    uint8_t is_arm;        /* a sided chain that does not (arms, wings, front limbs in the air) */
    uint8_t is_limb;       /* a sided chain hanging from the body's main path (the root's chain)
                              and longer than 15% of the body: arms and legs, whose rests differ
                              in pose between rigs (T and A) where other chains differ in
                              design (tails, ears); ALIGN turns these */
    int32_t foot;          /* legs and arms: the last target bone with a source of its own; its
                              tail is the contact joint. -1 otherwise */
} am_retarget_chain;

typedef struct am_retarget_map {
    size_t source_count, target_count;  /* Bs, Bt: the rigs' bone counts */
    int32_t *source;          /* [Bt] the source bone driving each target bone, or -1 */
    int32_t *source_b;        /* [Bt] RULE_CHAIN: the second source bone (-1 otherwise) */
    double *weight;           /* [Bt] RULE_CHAIN: the share of source_b, in [0, 1] */
    int32_t *head_bone;       /* [Bt] the source bone the target bone's head corresponds to (its
                                 driver, or for chain fills the source bone at the same arc
                                 length), -1 without a driver: what the pose alignment aims at */
    double *head_point;       /* [Bt][3] that point in head_bone's rest frame (SPEC 2.3 local
                                 coordinates: (0, 0, 0) its head, (0, length, 0) its tail) */
    am_retarget_rule *rule;   /* [Bt] */
    char **why;               /* [Bt] one line for map.json rules ("role thigh, left") */
    uint8_t *source_excluded; /* [Bs] 1 for helpers and end-site bones */
    uint8_t *target_excluded; /* [Bt] */
    int32_t *source_vparent;  /* [Bs] the parent bone for structure and FK: the rig's parent, but
                                 a foot parented to the body (an IK-driven foot) hangs from the
                                 leg it sits on; -1 for the root */
    int32_t *target_vparent;  /* [Bt] the same for the target: such a foot follows its leg */
    size_t chain_count;
    am_retarget_chain *chains;
    am_warning_list warnings; /* e.g. a map entry that overrode a name match */
} am_retarget_map;

typedef struct am_retarget_map_opts {
    const am_bone_map *overrides; /* entries of a map.json, applied last (NULL = none): each
                                     source bone named drives the target bone named, or nothing
                                     (null); every name must be a bone of its rig */
    am_context ctx;               /* allocator, limits; zero = inherited (core.h) */
} am_retarget_map_opts;

/* Build the map of source onto target. Errors (exit 2), each naming the bones: an override
 * naming a bone that is not in its rig, or an excluded one (AM_E_NAME, all of them listed);
 * a target that shares no bone name or role with the source and whose structure matches
 * fewer than a third of its bones directly (AM_E_EMPTY, listing both rigs' bones). */
AM_NODISCARD am_status am_retarget_map_build(const am_rig *source, const am_rig *target,
                                             const am_retarget_map_opts *opts,
                                             am_retarget_map **out, am_error *err);
void am_retarget_map_free(am_retarget_map *map);
/* The map as names (map.json): "bones" holds each source bone with a target of its own (the
 * direct drivers; every source bone not used is listed with null), "rules" every target bone
 * with its rule and, for chain fills, the blend ("chain: 0.35 Tail4 + 0.65 Tail5"). */
AM_NODISCARD am_status am_retarget_map_names(const am_retarget_map *map, const am_rig *source,
                                             const am_rig *target, am_bone_map **out,
                                             am_error *err);

/* ---- the job ---- */

typedef enum am_retarget_pose {
    AM_RETARGET_POSE_ALIGN,  /* the target is first posed so that each mapped limb (is_limb
                                chains: arms, legs) points where the source's does in the
                                source's reference pose (its rest, or source_pose), bone by bone,
                                then deltas transfer: T-pose onto A-pose comes out right, and
                                spines, tails and ears keep the target's own shape */
    AM_RETARGET_POSE_DELTA,  /* deltas from each rig's rest transfer as they are (for rigs whose
                                rests mean the same pose) */
    AM_RETARGET_POSE_COUNT
} am_retarget_pose;

typedef enum am_retarget_root {
    AM_RETARGET_ROOT_SCALE,  /* root motion (horizontal and vertical) scaled by the ratio of leg
                                lengths, hip height from the target's own rest */
    AM_RETARGET_ROOT_KEEP,   /* the source's root displacement unscaled */
    AM_RETARGET_ROOT_COUNT
} am_retarget_root;

enum {
    AM_RETARGET_NO_IK = 1u << 0,    /* no IK pass: no plants held, no ground kept */
    AM_RETARGET_IK_HANDS = 1u << 1, /* plants of the arms' ends held too (a crawl, a handstand) */
    AM_RETARGET_FLAGS_COUNT = 2
};

/* All-zero gives every default. */
typedef struct am_retarget_opts {
    am_retarget_pose pose;          /* default ALIGN */
    am_retarget_root root;          /* default SCALE */
    uint32_t flags;                 /* AM_RETARGET_*; default 0: feet IK on */
    double scale_horizontal;        /* root motion factors; 0 = the leg ratio (SCALE) or 1 (KEEP) */
    double scale_vertical;
    double align_min_deg;           /* ALIGN: a bone of a chain of another design is re-aimed
                                       only when that turns it at least this far (degrees): less
                                       is read as proportion, not pose (docs/retarget.md);
                                       0 = the default, negative = re-aim every bone */
    const am_motion *source_pose;   /* a pose of the source rig (bound to it) that matches the
                                       target's reference pose (frame source_pose_frame); NULL =
                                       the source's rest */
    size_t source_pose_frame;
    const am_motion *target_pose;   /* a pose of the target rig that matches the source's
                                       reference pose: used as it is, in either pose mode; NULL =
                                       ALIGN: the rest aligned to the source, DELTA: the rest */
    size_t target_pose_frame;
    am_context ctx;                 /* allocator, limits, progress; zero = inherited (core.h) */
} am_retarget_opts;

/* One plant of the source held on the target. Slides are in metres: the farthest the contact
 * joint gets from where it was at the plant's first frame, in the ground's frame (SPEC-style
 * foot slide, the fitter's am_plant_drift (fit.h)). */
typedef struct am_retarget_plant {
    uint32_t contact;               /* index into the report's contacts */
    uint32_t first, last;           /* frames */
    double source_slide, target_slide;
} am_retarget_plant;

typedef struct am_retarget_report {
    am_retarget_pose pose;          /* the options the run used */
    double align_min_deg;           /* ALIGN's threshold used (degrees; 0: every bone, or DELTA) */
    am_retarget_root root;
    uint32_t flags;
    double leg_source, leg_target;  /* metres: summed leg lengths (0 without legs) */
    double scale_horizontal, scale_vertical; /* the root factors used */
    size_t contact_count;           /* C: legs (and arms with AM_RETARGET_IK_HANDS) */
    int32_t *contact_source;        /* [C] source joint indices (the foot's tail) */
    int32_t *contact_target;        /* [C] target joint indices */
    double *floor;                  /* [C] target floor height (m): min(0, its rest height) */
    double *below_max;              /* [C] the most the contact sinks below its floor (m) */
    size_t plant_count;
    am_retarget_plant *plants;      /* [plant_count] */
    double ground_vel_source[3];    /* m/s: a treadmill or in-place clip's ground */
    double ground_vel_target[3];
    double chain_angle_mean_deg;    /* angle between each matched chain's direction (from the head
                                       of its first bone with a driver to the head of its last) on
                                       source and target, mean over chains and frames */
    double chain_angle_max_deg;
    size_t ik_frames;               /* (frame, contact) pairs the IK moved */
    double ik_residual_max;         /* m: the farthest a contact stayed from its goal */
    double transfer_seconds, ik_seconds;
} am_retarget_report;
void am_retarget_report_free(am_retarget_report *report);
/* report.json text (one object, the one JSON writer's format: map rules counted, factors,
 * contacts with source and target names, plants, ground, chains), appended to out; out->failed
 * on an allocation failure. */
void am_retarget_report_json(const am_retarget_report *report, const am_retarget_map *map,
                             const am_rig *source, const am_rig *target, am_buf *out);

typedef struct am_retarget_job {
    const am_rig *source_rig;
    const am_motion *source;        /* bound to source_rig, T >= 1 frames */
    const am_rig *target_rig;
    const am_retarget_map *map;     /* from am_retarget_map_build(source_rig, target_rig) */
    const am_retarget_opts *opts;   /* NULL = defaults */
    am_motion *out;                 /* caller-owned, bound to target_rig, T frames, quat
                                       allocated or NULL; gets trans, root_quat, euler, quat and
                                       loc (allocated here when a bone slides: IK-driven feet
                                       follow their legs by translation); joints not filled */
    am_retarget_report *report;     /* optional output (free with am_retarget_report_free) */
    am_warning_list *warnings;      /* optional output: the call's warnings are appended; NULL =
                                       the caller's scope */
} am_retarget_job;

/* Shapes and values: out bound to the target with the source's frame count, the map made for
 * these two rigs (AM_E_SHAPE), a source of 0 frames (AM_E_EMPTY), poses bound to their rigs
 * with the frame in range (AM_E_ARG), scale factors positive (AM_E_ARG). */
AM_NODISCARD am_status am_retarget_validate(const am_retarget_job *job, am_error *err);
/* Validate, then transfer every frame and run the IK pass, in the scope of job->opts->ctx.
 * AM_E_NOMEM, AM_E_CANCELLED (a progress callback returned false). */
AM_NODISCARD am_status am_retarget_run(const am_retarget_job *job, am_error *err);

#ifdef __cplusplus
}
#endif
#endif
