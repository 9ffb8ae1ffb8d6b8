/* anymove shape: motions made game-ready (`anymove shape`, `anymove pack`): trimmed, looped
 * without a pop, root motion the way engines take it, facing -Y at the start and the feet on
 * the ground; and the locomotion summary of a clip (speed, stride, cadence, duty factor and
 * phase offset per foot, the gait, turn rate, loop error).
 *
 *     const am_rig *rig = NULL;            // the rig and a motion bound to it
 *     const am_motion *motion = NULL;
 *     am_error err = {0};
 *     am_shape_opts o = {.loop = true, .root_motion = AM_ROOT_MOTION_INPLACE};
 *     am_shape_result *r = NULL;
 *     if (am_shape_run(rig, motion, &o, &r, &err) == AM_OK) {
 *         double speed = r->report.speed_mps;    // r->clip is the loop, r->root_motion its curve
 *         (void)speed;
 *     }
 *     am_shape_result_free(r);
 *
 * Loops: the period comes from the motion's contacts (motion.json "contacts": the median time
 * between touchdowns of the same joint) or, without them, from the self-similarity of the pose
 * (joints relative to the root, mean squared difference at lag P, the deepest minimum); the
 * cycle starts at the frame where pose and velocity one period later match best. The seam is
 * then blended over the whole cycle: every channel (root height and sway, root rotation less its
 * per-cycle turn, every bone's local rotation as a rotation vector) gets the smooth correction
 * c(u) = -dp u + (dv P / 2) u (1 - u), u = i / P, which closes both the pose gap dp and the
 * velocity gap dv at the seam and leaves the cycle's own frame-to-frame motion otherwise intact.
 * The per-cycle horizontal travel and turn are kept as root motion.
 *
 * Runs in the scope of opts->ctx; warnings in the result. Pairs: am_shape_run ->
 * am_shape_result_free; am_locomotion_run -> am_locomotion_free.
 */
#ifndef ANYMOVE_SHAPE_H
#define ANYMOVE_SHAPE_H

#include "core.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_root_motion {
    AM_ROOT_MOTION_BONE,    /* the travel stays on the root bone (Unreal's and Unity's root motion
                               read it from there) */
    AM_ROOT_MOTION_INPLACE, /* the root's horizontal travel (and turn) removed, written as a
                               separate curve ("root_motion" in motion.json) */
    AM_ROOT_MOTION_NONE,    /* removed and dropped */
    AM_ROOT_MOTION_COUNT
} am_root_motion;

typedef struct am_shape_opts {
    bool has_range;
    size_t range_begin, range_end;  /* frames [begin, end) of the input; has_range false = all */
    bool loop;                      /* find the best cycle and make it seamless */
    am_root_motion root_motion;     /* default BONE */
    bool keep_facing;               /* do not turn the start to face -Y */
    bool keep_height;               /* do not put the feet on the ground */
    am_context ctx;
} am_shape_opts;

/* The seam of a loop, mean over joints, % of body size per frame (x_0 the first frame moved on
 * by one cycle's travel, x_l the last): */
typedef struct am_loop_error {
    double step_pct;          /* |x_0 - x_l|: the step across the seam (a seamless loop steps
                                 like any other frame) */
    double position_jump_pct; /* |x_0 - (2 x_l - x_{l-1})|: where the loop lands against where
                                 the motion was going */
    double velocity_jump_pct; /* |(x_1 - x_0) - (x_l - x_{l-1})|: the change of velocity across
                                 the seam */
} am_loop_error;

typedef struct am_shape_report {
    size_t input_frames, begin, end;   /* the trimmed range [begin, end) of the input */
    size_t period_frames;              /* the cycle (loop), else the frames kept */
    size_t cycle_start;                /* first frame of the cycle in the input */
    const char *period_from;           /* "contacts", "pose" or NULL (no loop) */
    am_loop_error before, after;       /* seam of the raw cycle, and of the blended one */
    double mean_step_pct;              /* the clip's mean frame-to-frame change */
    double mean_accel_pct;             /* the clip's mean |x(t+1) - 2 x(t) + x(t-1)| */
    double speed_mps;                  /* horizontal root travel per second */
    double travel_per_cycle[3];        /* root displacement over one cycle (or the clip), m */
    double turn_deg_per_cycle;         /* root yaw change over one cycle (or the clip) */
    double facing_turn_deg;            /* the turn applied to face -Y at the start */
    double ground_shift_m;             /* the height put on the root to stand on the ground */
    double body_size;                  /* rig rest joints' box diagonal, m */
} am_shape_report;

typedef struct am_shape_result {
    am_motion *clip;                   /* bound to the rig; root_motion written into extra_json */
    double *root_motion;               /* [T][2] per frame the x, y of the root motion curve
                                          (INPLACE: trans + curve is the travelling root), else NULL */
    am_shape_report report;
    am_warning_list warnings;
} am_shape_result;

/* mo bound to rig. Errors: AM_E_ARG for a range outside the motion, empty or reversed (naming
 * it); AM_E_VALUE for a loop on a clip too short to hold two cycles of at least 4 frames (fewer
 * than 8 frames, or no period found). */
AM_NODISCARD am_status am_shape_run(const am_rig *rig, const am_motion *mo, const am_shape_opts *opts,
                                    am_shape_result **out, am_error *err);
void am_shape_result_free(am_shape_result *r);

/* ---- locomotion (pack's locomotion.json) ---- */
typedef struct am_foot {
    char *joint;           /* the foot joint */
    double duty_factor;    /* share of the cycle in contact with the ground */
    double phase;          /* touchdown phase in [0, 1) relative to the first foot (the first
                              hind foot when there are hind feet) */
    char side, end;        /* 'L'/'R'/'C'; 'F' fore / 'H' hind */
} am_foot;

typedef struct am_locomotion {
    double speed_mps, stride_m, cadence_hz;  /* cadence: footfalls per second */
    double period_s;                         /* one cycle */
    double turn_deg_per_s;
    const char *gait;      /* walk, trot, pace, canter, gallop, hop, run; "still" when it does
                              not travel; NULL without feet */
    double gait_distance;  /* mean circular distance of the phases to the gait's pattern */
    am_loop_error loop;    /* the clip's seam, taken as a loop */
    size_t foot_count;
    am_foot *feet;
} am_locomotion;

/* The locomotion of a clip (bound to rig). feet: joint names (NULL: the contact keys of the
 * motion's "contacts", else the rig's joints that are lowest at rest, within 2 % of the body
 * size of the lowest). root_motion [T][2] (x, y) of an in-place clip or NULL (the root
 * travels). The cycle is the whole clip when it loops, else its strongest period. */
AM_NODISCARD am_status am_locomotion_run(const am_rig *rig, const am_motion *mo, const double *root_motion,
                                         const char *const *feet, size_t foot_count, am_locomotion **out,
                                         am_error *err);
void am_locomotion_free(am_locomotion *l);

#ifdef __cplusplus
}
#endif
#endif
