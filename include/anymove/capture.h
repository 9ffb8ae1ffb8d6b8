/* anymove capture: fit a rig to joints read in two orthographic views (SPEC.md sections 3,
 * 4.2, 4.3, 5), and the exam that scores that fit on random motions.
 *
 * Stages of am_capture_solve (each is documented in docs/capture.md):
 *   sync check (paw agreement, height gap, best lag, time warp, front height scale)
 *   -> front-view left/right swap repair -> triangulation -> initialization (Kabsch root +
 *   analytic IK) -> fit (Euler angles inside the limits, Cauchy reprojection loss annealed
 *   40 px -> 6 px, acceleration / angular velocity / rest / ground terms; the banded
 *   Levenberg-Marquardt of anymove/opt.h with analytic FK Jacobians) -> contacts (plants and
 *   ground velocity) -> second fit holding plants still (plants found again from it, and held
 *   for 2 more iterations) -> foot lock (per-frame IK pin).
 *
 *     am_det *det = NULL; am_rig *rig = NULL; am_creature *cr = NULL; am_capture_result *res = NULL;
 *     ... load them ...
 *     if (am_capture_solve(det, rig, cr, NULL, &res, &err) != AM_OK ||
 *         am_motion_write(res->motion, "motion.json", &err) != AM_OK) { ... }
 *     am_capture_result_free(res);
 *
 * The sync check alone, on a det as read (what `anymove takes` recomputes): am_sync_check.
 *
 * Pairs: am_exam_generate -> am_exam_free; am_capture_solve -> am_capture_result_free;
 * am_capture_truth_load -> am_capture_truth_free.
 * Jobs (am_exam_generate, am_capture_solve) run in the scope of their opts' context (core.h)
 * and return their warnings in the result; am_exam_write_truth and am_capture_truth_load run in
 * the caller's scope.
 */
#ifndef ANYMOVE_CAPTURE_H
#define ANYMOVE_CAPTURE_H

#include "core.h"
#include "fit.h" /* the plants (am_plants_find ...) are the fitter's, shared with retargeting */
#include "io.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the exam: a random (or given) motion and its two-view reading ---- */

/* All-zero gives a clean 150-frame, 30 fps clip with seed 0. */
typedef struct am_exam_opts {
    uint64_t seed;        /* random seed; default 0 */
    size_t frames;        /* T; default 150 */
    double fps;           /* default 30 */
    double noise_px;      /* sigma of Gaussian pixel noise, px; default 0 */
    double dropout;       /* probability a (frame, joint, view) is unseen (conf 0); default 0 */
    double swap;          /* probability per frame and front L/R pair that a 1-3 frame label
                             swap starts; default 0 */
    int lag;              /* the front view runs late by this many frames; default 0 */
    double outliers;      /* probability of a 15-60 px gross error at normal confidence,
                             per (frame, joint, view); default 0 */
    double squash;        /* front heights (above the ground row) scaled by 1 - squash; default 0 */
    const am_motion *motion; /* read this motion (bound to the rig) instead of a random one; its
                             frames and fps replace frames and fps, its contacts are the creature's
                             contact joints where on the ground and still; NULL = random */
    am_context ctx;       /* allocator, limits, progress (stage "exam"); zero = inherited */
} am_exam_opts;

typedef struct am_exam {
    am_motion *truth;         /* the true motion, bound to the rig, joints filled */
    am_det *det;              /* its reading in both views */
    size_t contact_count;     /* C */
    char **contact_names;     /* [C] joint names */
    int32_t *contact_joint;   /* [C] rig joint indices */
    uint8_t *contact;         /* [T][C] 1 = planted (still on the ground) */
    int lag;                  /* as applied */
    double body_size;         /* SPEC 5, metres */
    am_warning_list warnings; /* non-fatal oddities of the call */
} am_exam;

/* Generate an exam. The creature (may be NULL: wolf layout, no contacts) gives the layout
 * and the contact joints. Deterministic for a given seed. */
AM_NODISCARD am_status am_exam_generate(const am_rig *rig, const am_creature *creature,
                                        const am_exam_opts *opts, am_exam **out, am_error *err);
/* truth.npz: joints [T,J,3], euler [T,B,3], trans [T,3], root_quat [T,4], contact [T,C] (u8),
 * contact_intervals [K,3] int32 (contact index, first frame, last frame), names [J],
 * bones [B], contact_names [C], lag, fps, body_size. */
AM_NODISCARD am_status am_exam_write_truth(const am_exam *exam, const char *path, am_error *err);
void am_exam_free(am_exam *exam);

/* truth.npz read back for scoring. */
typedef struct am_capture_truth {
    size_t frame_count, joint_count, bone_count, contact_count;
    double *joints;           /* [T][J][3] */
    double *euler;            /* [T][B][3] */
    char **names, **bones, **contact_names;
    uint8_t *contact;         /* [T][C] */
    int lag;
    double fps, body_size;
} am_capture_truth;
AM_NODISCARD am_status am_capture_truth_load(const char *path, am_capture_truth **out, am_error *err);
void am_capture_truth_free(am_capture_truth *t);

/* ---- the solve ---- */
enum {
    AM_CAPTURE_NO_WARP = 1u << 0,        /* never time-warp the front view */
    AM_CAPTURE_NO_SWAP_REPAIR = 1u << 1, /* keep front L/R labels as read */
    AM_CAPTURE_NO_FOOT_LOCK = 1u << 2,   /* skip the final per-plant IK pin */
    AM_CAPTURE_NO_CONTACTS = 1u << 3     /* one fit, no plants */
};

/* All-zero gives every default. Weights are in pixels of residual per unit. */
typedef struct am_capture_opts {
    uint32_t flags;          /* AM_CAPTURE_* ; default 0 */
    double scale_start_px;   /* Cauchy scale at the start of annealing; default 40 */
    double scale_end_px;     /* Cauchy scale at the end; default 6 */
    double w_accel;          /* px per rad/frame^2 of Euler acceleration, for a bone whose
                                farthest keypoint is 25 cm from its head (scaled by the square
                                root of that lever); default 225 (am_fit's 150 is the 3D
                                points' default; bench/RESULTS.md, issue 12 accuracy) */
    double w_accel_trans;    /* px per m/frame^2 of root acceleration; default 2000 */
    double w_vel;            /* px per rad/frame of Euler velocity; default 1 */
    double w_rest;           /* px per rad pulling angles to rest; default 0.5 */
    double w_ground;         /* px per m below the ground; default 2000 */
    double w_contact;        /* px per m of plant motion; default 3000 */
    double front_v_weight;   /* weight of the front view's vertical residual; default 1 */
    double accel_huber_px;   /* Huber scale of the acceleration residuals (px-equivalent):
                                quick real moves are not flattened; default 1 */
    int max_lag;             /* lag search range +-frames; default 12 (and at most T/4) */
    size_t window;           /* frames solved at once (am_fit_opts.window); default: one window
                                up to 600 frames, else 400 */
    uint32_t iterations;     /* LM iterations per annealing stage and contact pass;
                                default 2 (x2 in the last annealing stage) */
    am_context ctx;          /* allocator, limits, progress (stages "solve: sync and init",
                                "solve: fit", "solve: contacts", "solve: foot lock");
                                zero = inherited (core.h) */
} am_capture_opts;

typedef struct am_capture_sync {
    size_t foot_count;
    char **feet;              /* [F] */
    double *paw_agreement;    /* [F] Pearson r; NaN = null (barely moves) */
    double paw_score;         /* mean of the non-null; NaN if none */
    double gap_mean_px, gap_worst_px; /* height gap as read */
    int best_lag;             /* frames; positive = front runs late */
    double gap_best_px;       /* height gap at the best lag */
    bool time_warped;
    double front_height_scale;/* estimated front/side height ratio (1 = no squash) */
    bool height_rescaled;     /* the front heights were divided by it */
    size_t swaps_repaired;    /* front L/R label pairs swapped back (frames x pairs) */
} am_capture_sync;

typedef struct am_capture_result {
    am_motion *motion;        /* bound to the rig; joints and extra_json (reproj_px, sync,
                                 contacts) filled */
    am_capture_sync sync;
    double reproj_front, reproj_front_x, reproj_side; /* px, SPEC 5 */
    size_t contact_count;
    char **contact_names;     /* [C] */
    int32_t *contact_joint;   /* [C] */
    uint8_t *contact;         /* [T][C] */
    double ground_vel[3];     /* m/s */
    size_t plant_count;       /* plants found (every contact joint) */
    double fit_slide_mean_mm, fit_slide_max_mm; /* drift per plant found, of the fit before the
                                 foot lock */
    double slide_mean_mm, slide_max_mm; /* the same after the lock (about 0 where it pinned: it
                                 holds the plants it found) */
    bool foot_locked;         /* the lock ran (not AM_CAPTURE_NO_FOOT_LOCK) */
    double *lock_moved_mean_mm, *lock_moved_max_mm; /* [C] how far the lock moved each contact
                                 joint over its plant frames; NULL without contacts */
    uint32_t lm_iterations;
    double seconds_fit, seconds_total;
    am_warning_list warnings; /* e.g. creature feet that are not joints of the rig */
} am_capture_result;

/* Fit the rig to a det.npz reading, in the scope of opts->ctx (a progress callback that
 * returns false stops it with AM_E_CANCELLED). creature may be NULL (wolf layout, no feet).
 * Errors (exit code 2): det names unknown to the rig (AM_E_NAME, all listed), fewer than 3
 * frames (AM_E_VALUE), every confidence zero (AM_E_EMPTY), non-finite input (AM_E_NONFINITE). */
AM_NODISCARD am_status am_capture_solve(const am_det *det, const am_rig *rig,
                                        const am_creature *creature, const am_capture_opts *opts,
                                        am_capture_result **out, am_error *err);
/* report.txt text: the quality-gate verdicts (paw agreement keep / look / reroll,
 * reprojection per view, sync, contacts, foot slide). Appends to out. */
void am_capture_report(const am_capture_result *res, am_buf *out);
void am_capture_result_free(am_capture_result *res);

/* ---- the sync check: do the two views tell one story? (src/capture/sync.c) ---- */

/* All-zero gives every default. */
typedef struct am_sync_opts {
    int max_lag;             /* lag search range +-frames; default 12 (and at most T/4) */
    am_context ctx;          /* allocator and limits of the call; zero = inherited (core.h) */
} am_sync_opts;

/* What the check found. The lag search runs on the front heights divided by
 * front_height_scale when `rescale` is set, as am_capture_solve fits them. */
typedef struct am_sync_stats {
    double paw_score;         /* mean paw agreement over the feet that move; NaN if none */
    double gap_mean_px;       /* height gap as read: per frame the mean |v_front - v_side| over
                                 the joints seen in both views, mean over frames; px */
    double gap_worst_px;      /* the worst frame of it; px (both INFINITY when no frame has a
                                 joint seen in both views) */
    int best_lag;             /* frames, front(t + lag) against side(t): positive = the front
                                 runs late; 0 when no shift lowers the gap */
    double gap_best_px;       /* mean height gap at best_lag; px */
    double front_height_scale;/* median front/side ratio of the heights above GROUND_V (joints
                                 over 10 cm; 1 when fewer than 11 are) */
    bool rescale;             /* front_height_scale is off 1 by more than 3% (and in (0.3, 3)):
                                 the solve divides the front heights by it */
    bool warp;                /* best_lag != 0 and it cuts the gap by 15% or more: the solve
                                 shifts the front view by it (unless AM_CAPTURE_NO_WARP) */
} am_sync_stats;

/* The two-view sync check that am_capture_solve runs first (docs/capture.md, "Sync check"), on
 * a det as read (SPEC 4.2: a row is a height in both views). feet [F] are joint names of the
 * det (creature.json "feet"); layout gives GROUND_V and M_PER_PX (NULL = the wolf's of SPEC 3).
 * paw_agreement [F] (caller-owned, may be NULL when F is 0): per foot, the Pearson correlation
 * of its image row between the views over the frames it is seen in both; NaN (the seed's None)
 * when it is seen in fewer than 3 frames, moves less than 2 px (std) in both views, or is not a
 * joint of the det. Runs in the scope of opts->ctx; prints nothing, changes nothing.
 * Asserts (programmer errors): det, out non-NULL; feet and paw_agreement non-NULL when F > 0.
 * Data errors (status): the det's arrays as am_det_validate checks them (AM_E_EMPTY, AM_E_NAME,
 * AM_E_VALUE, AM_E_NONFINITE), a layout whose M_PER_PX is not positive (AM_E_VALUE), AM_E_NOMEM. */
AM_NODISCARD am_status am_sync_check(const am_det *det, const am_layout *layout, const char *const *feet,
                                     size_t foot_count, const am_sync_opts *opts, double *paw_agreement,
                                     am_sync_stats *out, am_error *err);

/* ---- scoring (SPEC 5; implemented in src/metrics/capture.c) ---- */
typedef struct am_capture_score {
    size_t frames, joints;            /* compared (matched by name) */
    double body_size;                 /* m */
    double joint_mean_cm, joint_median_cm, joint_p95_cm;
    double joint_mean_pct, joint_p95_pct; /* % of body size */
    double geodesic_deg;              /* mean local rotation error of non-root bones */
    double reproj_front, reproj_front_x, reproj_side; /* from motion.json, NaN if absent */
    int lag_true, lag_found;          /* lag_found: sync.best_lag_frames (0 if absent) */
    bool lag_recovered;
    double contact_precision, contact_recall; /* per frame and contact joint; NaN if none */
    size_t plants;                    /* true plants scored */
    double slide_mean_mm, slide_max_mm; /* predicted joint drift over each true plant */
} am_capture_score;

/* Compare a solve (motion with joints and joint_names, e.g. loaded without a rig) with the
 * truth. AM_E_NAME if no joint names match; AM_E_SHAPE if frame counts differ. */
AM_NODISCARD am_status am_capture_score_motion(const am_capture_truth *truth, const am_motion *mo,
                                               am_capture_score *out, am_error *err);
/* JSON text of a score (one object, the one JSON writer's format), appended to out; out->failed
 * on an allocation failure. */
void am_capture_score_json(const am_capture_score *s, am_buf *out);

#ifdef __cplusplus
}
#endif
#endif
