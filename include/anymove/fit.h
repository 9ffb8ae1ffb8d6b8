/* anymove fit: one rig fitter for every kind of observation (docs/fit.md).
 *
 * A rig's motion (root translation and rotation, every bone's Euler XYZ angles inside its
 * limits) is fitted over a whole clip at once to any mix of
 * - 2D joints read in N calibrated cameras (am_mdet + am_calib: pinhole or fisheye with
 *   distortion, or the orthographic pair of SPEC 3), each weighted by its confidence, and
 * - 3D joint positions (am_joints: joints.npz, TRC, a triangulation), missing joints being
 *   missing data,
 * under a robust Cauchy loss whose scale is annealed, with temporal smoothness (Huber on the
 * acceleration of every parameter, velocity of the angles), a pull to a prior pose, a ground
 * term, and, for the contact joints of a creature, plants held still and a final foot lock.
 * The normal equations are banded in time (anymove/opt.h), Jacobians analytic through FK and
 * the camera projection. Long clips are solved in overlapping windows, each starting from the
 * previous one's last two frames held fixed, so memory does not grow with the clip.
 *
 *     am_fit_input in = {.rig = rig, .points = joints};          // or .det + .calib
 *     am_fit_result *res = NULL;
 *     if (am_fit(&in, NULL, &res, &err) == AM_OK &&
 *         am_motion_write(res->motion, "motion.json", &err) == AM_OK) { ... }
 *     am_fit_result_free(res);
 *
 * Pairs: am_fit -> am_fit_result_free. am_fit runs in the scope of its opts' context (core.h):
 * progress stages "fit: start", "fit" and "fit: contacts"; cancellation stops it with
 * AM_E_CANCELLED.
 */
#ifndef ANYMOVE_FIT_H
#define ANYMOVE_FIT_H

#include "camera.h"
#include "core.h"
#include "ik.h"
#include "io.h"
#include "mocap.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    AM_FIT_NO_CONTACTS = 1u << 0,    /* no plants, no foot lock */
    AM_FIT_NO_FOOT_LOCK = 1u << 1,   /* plants held by the fit, not pinned afterwards */
    AM_FIT_NO_SWAP_REPAIR = 1u << 2, /* 2D left/right labels kept as read */
    AM_FIT_NO_LIMITS = 1u << 3,      /* joint limits ignored (angles unbounded) */
    AM_FIT_SMOOTH_AUTO = 1u << 4     /* with 3D input alone, smooth_points chosen per clip by
                                        cross-validation over the observed entries, then one
                                        refit that lowers a bone's smoothness in the frames
                                        where the first fit misses its joints by more than the
                                        noise (run.c; docs/ik.md); smooth_points is then ignored */
};

/* All-zero gives every default. Weights are in pixels of residual per unit; a 3D observation
 * counts as point_px pixels per noise sigma (so the same weights serve both kinds). */
typedef struct am_fit_opts {
    uint32_t flags;          /* AM_FIT_*; default 0 */
    double scale_start_px;   /* Cauchy scale at the start of annealing; default 40 */
    double scale_end_px;     /* and at the end; default 6 */
    double w_accel;          /* px per rad/frame^2 of Euler acceleration for a bone whose farthest
                                keypoint is 25 cm from its head (times sqrt(lever / 25 cm));
                                default 150 */
    double w_accel_trans;    /* px per m/frame^2 of root acceleration; default 2000 */
    double w_vel;            /* px per rad/frame of Euler velocity; default 1 */
    double w_rest;           /* px per rad of pull to the rest pose (2D input); default 0.5 */
    double w_prior_points;   /* with 3D input, the pull to the start's (analytic IK) pose instead,
                                per rad as a fraction of what one point at the bone's lever weighs;
                                default 0.1 */
    double w_ground;         /* px per m below the ground; default 2000 with 2D input, none with
                                3D alone (the points say where the ground is) */
    double w_contact;        /* px per m of a plant's motion; default 3000 */
    double accel_huber_px;   /* Huber scale of the acceleration residuals; default 1 */
    double conf_power;       /* a detection's weight on its squared residual is conf^conf_power;
                                default 1 */
    double point_noise;      /* per-axis sigma of the 3D observations, metres; 0 = estimated
                                from how far observed bone lengths stray from the rig's */
    double point_px;         /* px-equivalents of one point_noise sigma; default 3 */
    double smooth_points;    /* with 3D input alone, a multiplier of the smoothness (the 2D
                                weights on angles, the root's path relative to the body; against
                                points weighed per noise sigma, so noisier points are smoothed
                                more); default 1; see AM_FIT_SMOOTH_AUTO */
    uint32_t iterations;     /* LM iterations per annealing stage and contact pass; default 2
                                (x2 in the last annealing stage) */
    size_t window;           /* frames per window; default: one window up to 600 frames,
                                else 400 */
    size_t window_stride;    /* frames a window commits before the next starts; default 3/4 of
                                the window */
    am_context ctx;          /* allocator, limits, progress; zero = inherited (core.h) */
} am_fit_opts;

/* What to fit to. At least one of det, points. */
typedef struct am_fit_input {
    const am_rig *rig;
    const am_creature *creature;  /* contact joints (creature "contacts"); NULL = none */
    const am_mdet *det;           /* 2D detections (joints and cameras by name), or NULL; a
                                     time_offset is applied (linear interpolation) */
    const am_calib *calib;        /* the det's cameras, matched by name; required with det */
    const double *v_weight;       /* [C] weight of each camera's vertical residual, or NULL (1) */
    const am_joints *points;      /* 3D observations (names = rig joints), or NULL */
    const am_joints *init;        /* 3D positions the start pose is solved from (e.g. a
                                     triangulation of det); NULL = points; required with det
                                     alone */
    const am_motion *reference;   /* bound to the rig: its frame 0 is the start's prior
                                     (pose2rot protocol); NULL = the rest pose */
    const am_ik_opts *start;      /* options of the analytic IK the start is solved with
                                     (twist weight, temporal blend, limits); NULL = defaults */
} am_fit_input;

typedef struct am_fit_result {
    am_motion *motion;            /* bound to the rig, joints filled */
    size_t camera_count;          /* C of the det (0 without one) */
    char **camera_names;          /* [C] */
    double *reproj_px;            /* [C] mean reprojection error over the seen detections; NaN if
                                     none */
    double *reproj_p95_px;        /* [C] its 95th percentile */
    double points_mean_m;         /* mean distance to the 3D observations; NaN without */
    double points_p95_m;
    double point_noise;           /* the 3D sigma used, metres (0 without points) */
    bool point_noise_estimated;   /* estimated from bone lengths (not given) */
    size_t swaps_repaired;        /* left/right label pairs swapped back (frames x pairs) */
    size_t contact_count;
    char **contact_names;         /* [Cc] */
    int32_t *contact_joint;       /* [Cc] */
    uint8_t *contact;             /* [T][Cc] 1 = planted */
    double ground_vel[3];         /* m/s (the first window's) */
    size_t plant_count;
    double fit_slide_mean_mm, fit_slide_max_mm; /* drift per plant of the fit before the lock */
    double slide_mean_mm, slide_max_mm;         /* after it */
    bool foot_locked;
    double *lock_moved_mean_mm, *lock_moved_max_mm; /* [Cc] how far the lock moved each contact */
    size_t windows;               /* windows solved */
    uint32_t lm_iterations;
    double seconds;
    double smooth_points;         /* the smoothness multiplier used (3D input alone; chosen by
                                     cross-validation with AM_FIT_SMOOTH_AUTO), else 0 */
    bool smooth_auto;             /* smooth_points was chosen by cross-validation */
    am_warning_list warnings;
} am_fit_result;

/* Fit. Errors (input faults): det joint names that are no joint of the rig (AM_E_NAME, all
 * listed), a det camera missing from the calibration (AM_E_NAME), a camera whose confidences
 * are all zero (AM_E_EMPTY naming it), every confidence zero / every point missing
 * (AM_E_EMPTY), frame counts that differ (AM_E_SHAPE), NaN in a camera (AM_E_NONFINITE). */
AM_NODISCARD am_status am_fit(const am_fit_input *in, const am_fit_opts *opts, am_fit_result **out,
                              am_error *err);
void am_fit_result_free(am_fit_result *res);
/* report.txt text: reprojection per camera with its verdict (single-digit px: good), the
 * distance to the 3D joints and the noise assumed, left/right swaps repaired, contacts, foot
 * slide before the lock and what the lock moved, windows and iterations. Appends to out. */
void am_fit_report(const am_fit_result *res, am_buf *out);

/* The per-axis noise of 3D joint positions, from how far the observed length of each rig bone
 * (both ends seen, helpers left out) strays from the rig's: a robust sigma (median absolute
 * deviation) / sqrt(2). pos [T][J][3] in rig joint order, NaN = missing. Returns 0 when no bone
 * is seen. */
double am_fit_point_noise(const am_rig *rig, const double *pos, size_t frame_count);

/* ---- a rig for a keypoint skeleton ---- */
typedef struct am_rig_points_opts {
    const char *name;          /* the rig's name; default "points" */
    const char *root;          /* keypoint the tree hangs from; NULL = the most central one */
    const char *limits_json;   /* a rig.json "limits_deg" object (bone or stem -> [[min, max] x 3]),
                                  or NULL: every angle free */
    const char *limits_source; /* its file name for errors */
} am_rig_points_opts;

/* The rig of a keypoint skeleton observed in 3D (docs/fit.md): bones are the skeleton's edges
 * (one bone per edge, named after the keypoint it ends at; an edge closing a cycle is left out
 * with a warning), lengths the median observed ones, rest the median pose facing -Y along the
 * direction of travel, lowest keypoint on the ground; keypoints on no edge are left out. Runs in
 * the caller's scope. Errors: skeleton names that are no keypoint (AM_E_NAME, listed), a
 * keypoint cut off from the root (AM_E_VALUE), an edge never seen whole (AM_E_DEGENERATE), and
 * rig.json's own checks on the result (limits). */
AM_NODISCARD am_status am_rig_from_points(const am_joints *points, const am_skeleton *skeleton,
                                          const am_rig_points_opts *opts, am_rig **out, am_error *err);

/* ---- plants: where a joint stands still on the ground ---------------------------------
 * Shared by the capture fit (its contacts and foot lock) and by retargeting (the source's
 * plants, held on the target). A contact joint is planted where it is low (within `height`
 * of its floor) and slow (under `speed` relative to the ground); plants then grow over the
 * neighbouring frames that are as low and near their spot (hysteresis), one-frame holes are
 * filled and plants shorter than 3 frames dropped. The ground may move (a treadmill, an
 * in-place game clip): its velocity is the median velocity of the low joints, 0 when slower
 * than `still`. The defaults are the capture fit's, for a body the wolf's size (2.1 m);
 * callers scale them for other bodies. */
#define AM_PLANT_HEIGHT 0.015      /* m */
#define AM_PLANT_SPEED 0.3         /* m/s */
#define AM_PLANT_GROW 0.02         /* m */
#define AM_PLANT_GROW_HEIGHT 0.012 /* m */
#define AM_PLANT_STILL 0.10        /* m/s */

typedef struct am_plant_opts {
    double height;      /* m above the floor under which a joint may plant; 0 = AM_PLANT_HEIGHT */
    double speed;       /* m/s: slower (relative to the ground) is still; 0 = AM_PLANT_SPEED */
    double grow;        /* m: a neighbouring frame this near a plant's spot joins it; 0 = AM_PLANT_GROW */
    double grow_height; /* m above the plant's mean height a joining frame may be; 0 = AM_PLANT_GROW_HEIGHT */
    double still;       /* m/s: a ground slower than this is still; 0 = AM_PLANT_STILL */
} am_plant_opts;

/* Plants of C contact joints over a clip. joints [T][J][3] world metres (frame t, joint j),
 * fps > 0, joint [C] joint indices, floor_z [C] each joint's floor height (its rest height, or
 * its lowest height in the clip). Outputs: plant [T][C] 1 = planted, plant_z [T][C] the mean
 * height of the plant a frame belongs to (unset outside plants), ground_vel [3] m/s (z = 0).
 * opts NULL = defaults. AM_E_NOMEM. */
AM_NODISCARD am_status am_plants_find(const double *joints, size_t T, size_t J, double fps,
                                      const int32_t *joint, const double *floor_z, size_t C,
                                      const am_plant_opts *opts, uint8_t *plant, double *plant_z,
                                      double ground_vel[3], am_error *err);
/* The spot of joint j's plant over frames s..e (s <= e < T): its mean position in the ground's
 * frame, carried back to frame s by ground_vel. */
void am_plant_spot(const double *joints, size_t J, double fps, const double ground_vel[3],
                   size_t j, size_t s, size_t e, double spot[3]);
/* Foot slide of that plant: the farthest joint j gets from where it was at frame s, in the
 * ground's frame (metres). */
double am_plant_drift(const double *joints, size_t J, double fps, const double ground_vel[3],
                      size_t j, size_t s, size_t e);

#ifdef __cplusplus
}
#endif
#endif
