/* Private helpers of src/capture: the two-view reading's preprocessing (sync check, time warp,
 * front height rescale), the projection of SPEC 3, and the triangulation refinement. The fit
 * itself, its kinematics and the IK pin are src/fit's (fit/fit_internal.h). */
#ifndef ANYMOVE_CAPTURE_INTERNAL_H
#define ANYMOVE_CAPTURE_INTERNAL_H

#include "anymove/capture.h"
#include "anymove/multiview.h"
#include "anymove/math.h"
#include "anymove/opt.h"
#include "fit/fit_internal.h"
#include "math/math_internal.h"

/* Projection of SPEC 3. */
static inline void ami_project_front(const am_layout *L, const double p[3], double uv[2])
{
    uv[0] = L->front_cx + p[0] / L->m_per_px;
    uv[1] = L->ground_v - p[2] / L->m_per_px;
}
static inline void ami_project_side(const am_layout *L, const double p[3], double uv[2])
{
    uv[0] = L->side_cx - p[1] / L->m_per_px;
    uv[1] = L->ground_v - p[2] / L->m_per_px;
}

/* mv_refine.c: the whole-clip refinement of a triangulation (AM_TRI_REFINE); cams [C] are the
 * det's cameras in its order. */
am_status ami_tri_refine(const am_mdet *det, const am_camera *const *cams, const am_triangulate_opts *o,
                         am_triangulation *tri, am_error *err);

/* am_triangulate's body, in the caller's scope (its warnings go there), reporting no stage when
 * quiet (the solve's offset search triangulates once per camera). */
am_status ami_triangulate(const am_mdet *det, const am_calib *cal, const am_triangulate_opts *opts, bool quiet,
                          am_triangulation **out, am_error *err);

/* mv_triangulate.c, shared with the camera adjustment (mv_adjust.c): one observation of a point,
 * its px-weighted linear solve and its reprojection errors (a camera's reading on the common
 * clock is am_mdet_reading, mocap.h). */
typedef struct ami_obs {
    const am_camera *cam;
    double ab[2];   /* undistorted */
    double uv[2];   /* pixels as read */
    double w;       /* confidence */
    double rows[8];
    int c;          /* camera index */
} ami_obs;
/* The point from the observations whose mask entry is set (conf weights, then re-weighted to
 * pixels at the first solution). False when the rays do not pin it down. */
bool ami_tri_solve_px(const ami_obs *o, size_t n, const uint8_t *mask, double X[3]);
/* Reprojection error (px) of X in every observation; INFINITY behind a camera. */
void ami_tri_errors(const ami_obs *o, size_t n, const double X[3], double *e);
/* Quantile q in [0, 1] of v [n] (sorted in place; numpy's linear interpolation), NaN if empty. */
double ami_tri_quantile(double *v, size_t n, double q);

/* exp map of a rotation vector to a quaternion, and its left Jacobian J_l(w) [9]. */
void ami_rotvec_left_jacobian(const double w[3], double Jl[9]);

/* The two-view reading of one clip, in rig joint order: [T][J][2] and [T][J]. */
typedef struct ami_cap {
    const am_rig *rig;
    am_capture_opts o;          /* resolved */
    am_layout L;
    size_t T, J;
    double *fuv, *suv, *fconf, *sconf;
} ami_cap;

/* sync.c: the one measurement of the sync check (am_sync_check's and the solve's): paw agreement
 * of the joints foot_joint [F] (-1 = absent: NaN) into paw [F], height gap, front/side height
 * ratio, best constant lag. Reads c (its o.max_lag resolved) and changes nothing. */
am_status ami_sync_measure(const ami_cap *c, const long *foot_joint, size_t foot_count, double *paw,
                           am_sync_stats *s, am_error *err);
/* The solve's sync check: ami_sync_measure on the reading (sync->feet, rig joint names, into
 * sync), then the edits it calls for: the front heights rescaled when the ratio is off, the
 * front time-warped onto the side view when the lag cuts the gap (unless AM_CAPTURE_NO_WARP). */
am_status ami_sync_check(ami_cap *c, am_capture_sync *sync, am_error *err);

#endif
