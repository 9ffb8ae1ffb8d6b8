/* anymove multiview: joints read in N calibrated cameras -> 3D joints (triangulation), and the
 * N-view exam that scores it on random motions seen by simulated cameras.
 *
 * am_triangulate, per joint and frame: undistort every detection with at least min_conf
 * (camera.h), solve the linear (DLT) system of the cameras' ray constraints weighted by
 * confidence (then re-weighted to pixels by each camera's px per metre at the point), and,
 * unless AM_TRI_NO_RANSAC, keep the camera subset that agrees: hypotheses from camera pairs
 * (anipose's triangulate_ransac), the largest set of cameras within ransac_px, re-solved, then
 * the worst camera dropped while it is over ransac_px (Pose2Sim). With AM_TRI_REFINE the whole
 * clip is then refined through anymove/opt.h (aniposelib's optim_points): robust reprojection
 * error + acceleration smoothness + constant length of the given edges. docs/cameras.md has the
 * details and the choices.
 *
 *     am_triangulate_opts o = {.ransac_px = 15};
 *     am_triangulation *tri = NULL;
 *     if (am_triangulate(det, cal, &o, &tri, &err) == AM_OK &&
 *         am_joints_write("joints.npz", tri->joints, &err) == AM_OK) { ... }
 *     am_triangulation_free(tri);
 *
 * am_mv_solve fits a rig to the detections (anymove/fit.h), after finding each camera's time offset
 * and triangulating a start.
 *
 * Pairs: am_triangulate -> am_triangulation_free; am_mexam_generate -> am_mexam_free;
 * am_mv_solve -> am_mv_solve_result_free; am_cameras_adjust -> am_adjustment_free.
 */
#ifndef ANYMOVE_MULTIVIEW_H
#define ANYMOVE_MULTIVIEW_H

#include "camera.h"
#include "capture.h"
#include "core.h"
#include "fit.h"
#include "mocap.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    AM_TRI_NO_RANSAC = 1u << 0, /* use every camera that sees a point */
    AM_TRI_REFINE = 1u << 1     /* refine the whole clip after the per-point solve */
};

/* All-zero gives every default. */
typedef struct am_triangulate_opts {
    uint32_t flags;             /* AM_TRI_*; default 0 (RANSAC on, no refinement) */
    double min_conf;            /* detections below are not used; default 0.1 (< 0: 0) */
    double ransac_px;           /* reprojection threshold, px; default 15 */
    size_t max_pairs;           /* RANSAC hypotheses per point at most (pairs sampled beyond);
                                   default 36 */
    /* refinement (AM_TRI_REFINE) */
    double refine_loss_px;      /* Cauchy scale of the reprojection residuals; default 5 px */
    double w_smooth;            /* px per m/s^2 of a joint's acceleration (Huber, 5 px); default 0.05 */
    double w_bone;              /* px per metre of an edge's change from its median length; default 300 */
    size_t edge_count;
    const int32_t *edges;       /* [edge_count][2] joint index pairs held at constant length */
    uint32_t refine_iterations; /* LM iterations per window; default 15 */
    size_t refine_window;       /* frames per refinement window; default 400 */
    am_context ctx;
} am_triangulate_opts;

typedef struct am_triangulation {
    size_t camera_count, frame_count, joint_count; /* C, T, J */
    am_joints *joints;          /* [T][J][3]; conf = mean confidence of the cameras used */
    float *reproj_px;           /* [T][J] mean reprojection error over the cameras used; NaN = missing */
    uint8_t *cameras_used;      /* [T][J] how many cameras the point rests on */
    uint8_t *used;              /* [C][T][J] 1 = camera c's detection was used */
    /* per camera, over its used detections (and all detections it had, used or not) */
    size_t *cam_seen, *cam_used;     /* [C] */
    double *cam_mean_px, *cam_p95_px;/* [C] used; NaN if none */
    double *cam_mean_all_px;         /* [C] every detection against the final points */
    double mean_px, median_px, p95_px; /* over used detections */
    size_t points, triangulated;     /* T * J, and how many got a position */
    size_t undistort_failed;         /* detections whose undistortion did not converge */
    size_t ransac_dropped;           /* detections left out by RANSAC / the worst-camera drop */
    double seconds;
    am_warning_list warnings;
} am_triangulation;

/* Cameras of the det are matched to the calibration by name (AM_E_NAME lists the calibration's
 * names when one is missing). det->time_offset, when present, shifts each camera onto the common
 * clock (linear interpolation between frames). */
AM_NODISCARD am_status am_triangulate(const am_mdet *det, const am_calib *cal, const am_triangulate_opts *opts,
                                      am_triangulation **out, am_error *err);
/* summary.json: totals and one entry per camera (mean / p95 reprojection, detections seen and
 * used) and per joint (mean reprojection, mean cameras used, fraction triangulated); null where
 * nothing was measured. Through the one JSON writer. Atomic. */
AM_NODISCARD am_status am_triangulation_summary_write(const char *path, const am_triangulation *tri,
                                                      const am_mdet *det, am_error *err);
/* triangulation.npz: reproj_px [T,J], cameras_used [T,J] (uint8), used [C,T,J] (uint8), cameras [C], names [J]. */
AM_NODISCARD am_status am_triangulation_write(const char *path, const am_triangulation *tri, const am_mdet *det,
                                              am_error *err);
void am_triangulation_free(am_triangulation *tri);

/* ---- camera bundle adjustment ----
 * am_cameras_adjust re-fits the cameras of a calibration to a det's 2D points (aniposelib's
 * bundle_adjust_iter): points seen by at least two cameras are sampled per camera pair (those
 * seen by more cameras first), triangulated with every camera that sees them, and the ones whose
 * mean reprojection error is under a threshold mu keep their place in the fit; mu shrinks
 * geometrically from start_px to end_px over the rounds, held between the worst camera pair's
 * 15th and 75th percentiles. Each round alternates point and camera blocks: points by the
 * triangulation above, then every camera's pose (and, with AM_ADJUST_FOCAL /
 * AM_ADJUST_DISTORTION, its focal length / k1 k2) by Levenberg-Marquardt through anymove/opt.h
 * with a Huber loss at mu against the fixed points. The gauge: the det's first camera never
 * moves, and after each camera step the other centres are scaled about it so their mean
 * distance from it stays as given. docs/cameras.md says why blocks rather than one sparse
 * problem.
 *
 *     am_adjust_opts ao = {0};
 *     am_adjustment *adj = NULL;
 *     if (am_cameras_adjust(det, cal, &ao, &adj, &err) == AM_OK &&
 *         am_calib_write(adj->cameras, "adjusted.toml", &err) == AM_OK) { ... }
 *     am_adjustment_free(adj);
 *
 * Pairs: am_cameras_adjust -> am_adjustment_free. */
enum {
    AM_ADJUST_FOCAL = 1u << 0,      /* also fit one focal scale per camera (fx, fy, skew together) */
    AM_ADJUST_DISTORTION = 1u << 1  /* also fit k1 and k2 (pinhole and fisheye) */
};

/* All-zero gives every default (aniposelib's). */
typedef struct am_adjust_opts {
    uint32_t flags;           /* AM_ADJUST_*; default 0: extrinsics only */
    double min_conf;          /* detections below are not used; default 0.1 (< 0: 0) */
    uint32_t rounds;          /* rounds of shrinking threshold, then one final; default 10 */
    double start_px, end_px;  /* the threshold mu's schedule, px; default 15 -> 1 */
    double stop_px;           /* stop early when the sample's median per-point error is below;
                                 default 0.3 */
    size_t score_samples;     /* points per camera pair that set mu (and the final fit); default 1000 */
    size_t fit_samples;       /* points per camera pair a round fits to; default 200 */
    uint32_t alternations;    /* point / camera alternations per round at most; default 8 */
    uint32_t lm_iterations;   /* LM iterations per camera and alternation; default 20 */
    uint64_t seed;            /* sampling; default 0 (reproducible) */
    am_context ctx;           /* allocator, limits, progress (stage "adjust cameras") */
} am_adjust_opts;

typedef struct am_adjustment {
    am_calib *cameras;        /* the calibration with the det's cameras adjusted (others as given) */
    size_t camera_count;      /* C of the det */
    size_t points;            /* points seen by two cameras or more: what the scores run over */
    size_t scored_before, scored_after; /* of those, how many triangulated in front of every camera */
    /* aniposelib's statistic: per point the mean reprojection error over every camera that sees
     * it (one linear triangulation with all of them), then the median over points */
    double before_px, after_px;
    double *cam_before_px, *cam_after_px; /* [C] mean reprojection error per det camera */
    double *moved_m, *turned_deg;         /* [C] how far each camera's centre moved, and turned */
    uint32_t rounds;          /* rounds run (fewer than asked when stop_px was reached) */
    double final_mu_px;       /* the final fit's threshold */
    double seconds;
    am_warning_list warnings;
} am_adjustment;

/* Cameras of the det are matched to the calibration by name (AM_E_NAME as am_triangulate). Fails
 * with AM_E_EMPTY when fewer than 8 points are seen by two cameras, AM_E_ARG for a det with one
 * camera. A camera left with fewer than 6 points in a fit keeps its pose (a warning). */
AM_NODISCARD am_status am_cameras_adjust(const am_mdet *det, const am_calib *cal, const am_adjust_opts *opts,
                                         am_adjustment **out, am_error *err);
void am_adjustment_free(am_adjustment *adj);

/* ---- the N-view exam ---- */
typedef struct am_mexam_opts {
    am_exam_opts motion;        /* the motion: seed, frames, fps (its degradations and ctx unused) */
    size_t cameras;             /* C perspective cameras in a ring around the subject; default 4
                                   (ignored when a calibration is given) */
    double noise_px;            /* Gaussian pixel noise sigma; default 0 */
    double dropout;             /* probability a detection is lost; default 0 */
    double outliers;            /* probability of a gross error (20-80 px) at normal confidence */
    double swap;                /* probability per frame, camera and L/R pair that a 1-3 frame
                                   label swap starts */
    int max_offset;             /* per-camera frame offsets drawn in [-max, max]; default 0 */
    bool occlusion;             /* hide joints behind the body (bone capsules); default false */
    double capsule_radius;      /* capsule radius as a fraction of body size; default 0.04 */
    am_context ctx;             /* allocator, limits, progress (stage "exam"); zero = inherited */
} am_mexam_opts;

typedef struct am_mexam {
    am_exam *exam;              /* the motion and its truth (exam->det is the two-view reading) */
    am_calib *cameras;          /* the cameras (generated or given) */
    am_mdet *det;               /* the N-view reading; time_offset holds the offsets applied */
    int32_t *offsets;           /* [C] frames camera c runs late */
    size_t occluded;            /* detections hidden by the body */
    am_warning_list warnings;   /* non-fatal oddities of the call (the motion's included) */
} am_mexam;

AM_NODISCARD am_status am_mexam_generate(const am_rig *rig, const am_creature *creature, const am_calib *cameras,
                                         const am_mexam_opts *opts, am_mexam **out, am_error *err);
void am_mexam_free(am_mexam *ex);

/* ---- a rig fitted to N cameras ---- */
enum {
    AM_MV_SEARCH_OFFSETS = 1u << 0 /* search the offsets even when the det carries time_offset */
};

/* All-zero gives every default. */
typedef struct am_mv_solve_opts {
    uint32_t flags;             /* AM_MV_*; default 0 */
    int max_offset;             /* per-camera time offsets searched in +-frames (at most T/4);
                                   default 12; < 0: none searched (the det's, or 0) */
    am_triangulate_opts tri;    /* the triangulation the fit starts from */
    am_fit_opts fit;            /* the fit; creature contacts as in am_fit */
    am_context ctx;             /* allocator, limits, progress (stages "solve: offsets",
                                   "solve: triangulate", the fit's); zero = inherited */
} am_mv_solve_opts;

typedef struct am_mv_solve_result {
    am_fit_result *fit;         /* the motion, reprojection per camera, contacts, foot lock */
    size_t camera_count;
    double *offsets;            /* [C] frames added to each camera's index (applied) */
    bool offsets_found;         /* searched (not the det's own) */
    double *gap_px;             /* [C] two-camera gap to the reference camera at the offset
                                   applied; NaN for the reference (and when not searched) */
    double *gap0_px;            /* [C] the same without a shift */
    am_warning_list warnings;
} am_mv_solve_result;

/* Offsets (the det's time_offset unless absent or AM_MV_SEARCH_OFFSETS), triangulation, fit.
 * Errors: fewer than 3 frames (AM_E_VALUE), a camera not in the calibration (AM_E_NAME), a camera
 * that sees nothing (AM_E_EMPTY naming it), no detected joint in the rig (AM_E_NAME), and the
 * fit's (fit.h). */
AM_NODISCARD am_status am_mv_solve(const am_mdet *det, const am_calib *cal, const am_rig *rig,
                                   const am_creature *creature, const am_mv_solve_opts *opts,
                                   am_mv_solve_result **out, am_error *err);
void am_mv_solve_result_free(am_mv_solve_result *res);

#ifdef __cplusplus
}
#endif
#endif
