/* anymove metrics: the exact definitions of SPEC.md section 5, shared by every benchmark.
 *
 * The header is sectioned by stage; each section lists its own functions. Add a section for
 * a new family of metrics rather than growing another's.
 *
 *     am_stats st;
 *     am_rot_error_opts o = {.frame_count = 48};
 *     if (am_motion_rotation_error(rig, pred, truth, &o, NULL, &st, &err) == AM_OK)
 *         printf("%.2f deg over %zu rotations\n", st.mean, st.count);
 *
 * Pairs: none (outputs are caller-owned; functions that allocate free before returning).
 */
#ifndef ANYMOVE_METRICS_H
#define ANYMOVE_METRICS_H

#include "core.h"
#include "math.h" /* am_body_size */
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Common: summary statistics ===================================================== */

typedef struct am_stats {
    size_t count;
    double mean, median, p95, max;   /* 0 when count == 0 */
} am_stats;

/* Summary of values [n] (NaN entries skipped). The percentiles are linear interpolations of
 * the sorted values (numpy's default). Allocates a sorted copy: AM_E_NOMEM if it cannot. */
AM_NODISCARD am_status am_stats_compute(const double *values, size_t n, am_stats *out,
                                        am_error *err);

/* ==== Rotations and joint positions (IK, issue 5) ===================================== */

/* deg(arccos(clamp((tr(R_pred^T R_true) - 1) / 2, -1, 1))): pose2rot's geodesic error. */
double am_geodesic_deg(const double R_pred[9], const double R_true[9]);

typedef enum am_rot_error_flags {
    AM_ROTERR_SKIP_ROOT = 1u << 0,    /* leave the root's rotation (root_quat) out */
    AM_ROTERR_SKIP_LEAVES = 1u << 1,  /* leave out bones without child bones */
    AM_ROTERR_KEEP_HELPERS = 1u << 2, /* include helper bones (left out by default: IK targets
                                         move freely and carry no body rotation) */
    AM_ROTERR_FLAGS_COUNT = 3
} am_rot_error_flags;

typedef struct am_rot_error_opts {
    uint32_t flags;          /* am_rot_error_flags; default 0: every non-helper bone and the
                                root, as pose2rot */
    size_t first_frame;      /* default 0 */
    size_t frame_count;      /* frames from first_frame; 0 = to the end */
} am_rot_error_opts;

/* Geodesic error per bone and frame between two motions bound to rig (same bone order):
 * local rotations (quat if present, else euler) for non-root bones, root_quat for the root.
 * per_entry: [frames][B] degrees, NaN for bones left out (may be NULL). out: statistics over
 * every included (frame, bone). AM_E_SHAPE if the motions disagree in bones or frames. */
AM_NODISCARD am_status am_motion_rotation_error(const am_rig *rig, const am_motion *pred,
                                                const am_motion *truth,
                                                const am_rot_error_opts *opts,
                                                double *per_entry, am_stats *out,
                                                am_error *err);

/* Per-joint position error |pred - truth| over [T][J][3] arrays, in the arrays' units,
 * for the joints with mask[j] != 0 (mask NULL = all); a NaN position (missing) is left out.
 * out_per_joint: [J] means (NaN for masked or never present) or NULL. SPEC's "per-joint error (cm)" is this in metres times 100. */
AM_NODISCARD am_status am_joint_position_error(const double *pred, const double *truth,
                                               size_t frames, size_t joints,
                                               const uint8_t *mask, double *out_per_joint,
                                               am_stats *out, am_error *err);

/* Foot slide (SPEC 5): how far a contact joint drifts while it is planted. joints [T][J][3];
 * contact [T], nonzero on the frames where joint `joint` is planted. Each maximal run of planted
 * frames is one plant; its drift is the farthest distance of the joint from where it was on the
 * plant's first frame (horizontal: x and y only, else 3D), in the joints' units. Frames with a
 * NaN position (missing) are left out, and so is a plant whose first frame is missing. The plants
 * are added to acc (zero it before the first call), so one accumulator sums every foot of a take:
 * mean = acc.sum / acc.plants. Asserts joint < J and non-NULL arrays (programmer errors). */
typedef struct am_slide_acc {
    double sum, max;   /* sum and largest of the plants' drifts */
    size_t plants;
} am_slide_acc;
void am_foot_slide_add(const double *joints, size_t frames, size_t joint_count, size_t joint,
                       const uint8_t *contact, bool horizontal, am_slide_acc *acc);

/* Reprojection error of fitted joints against a det (the number solve stores as motion.json's
 * reproj_px): joints [T][J][3] named joint_names, through each det camera's calibration (found
 * by name in cal) against its seen detections (conf > 0, finite pixel). Camera c's frame k is the
 * joints' frame k + offset (offsets[c] when offsets is given, e.g. motion.json's time_offsets,
 * else the det's time_offset, else 0), the joints interpolated between frames for a fractional
 * offset; det joints not among joint_names, and points that do not project, are left out.
 * mean_px [C]: the mean over every seen detection of camera c, NaN when none (or the camera is
 * not in cal). series [C][T] (may be NULL): per joints' frame, the mean over that frame's joints.
 * AM_E_NOMEM only; prints nothing. */
struct am_mdet;
struct am_calib;
AM_NODISCARD am_status am_reproj_cameras(const struct am_mdet *det, const struct am_calib *cal, const double *joints,
                                         size_t T, const char *const *joint_names, size_t J,
                                         const double *offsets, double *mean_px, double *series, am_error *err);

/* Plausible body sizes in metres: from a small insect or a hand (5 cm) to a large dinosaur
 * (20 m). A body outside is almost always a file in other units. */
#define AM_UNITS_MIN_BODY 0.05
#define AM_UNITS_MAX_BODY 20.0
/* 1 when a body this size is plausible in metres; else the metres-per-unit scale that makes it
 * so, tried in the order of how common the unit is: 0.01 (centimetres), 0.001 (millimetres)
 * for bodies over 20 m; 100, 1000 for bodies under 5 cm (the largest when none fits). */
double am_units_hint(double body_size);

/* ==== Point tracks and skeletons (Track2Rig, issue 3) ================================= */

typedef struct am_track_errors {
    double body_size;       /* metres: box diagonal of the true points at frame 0 */
    double recon_all;       /* % of body size: mean |pred - truth| over every (t, n) */
    double recon_hidden;    /* % over the entries hidden in the input (0 if none) */
    double recon_visible;   /* % over the visible ones */
    size_t hidden_count;    /* entries hidden in the input */
} am_track_errors;

/* SPEC 5 reconstruction error. pred, truth: [T][N][3] metres; visible: [T][N] of the input
 * (NULL = all visible). Non-finite predictions -> AM_E_NONFINITE naming frame and point. */
AM_NODISCARD am_status am_track_recon_error(const float *pred, const float *truth,
                                            const uint8_t *visible, size_t frames, size_t points,
                                            am_track_errors *out, am_error *err);

/* SPEC 5 joint error in metres (divide by the body size and times 100 for %): per frame the
 * symmetric chamfer 0.5 * (mean_j min_p |truth_j - pred_p| + mean_p min_j |pred_p - truth_j|),
 * averaged over frames. pred [T][P][3], truth [T][J][3]; P, J >= 1. */
double am_joint_chamfer(const double *pred, size_t pred_count, const float *truth,
                        size_t truth_count, size_t frames);

#ifdef __cplusplus
}
#endif
#endif
