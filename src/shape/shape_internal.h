/* Helpers shared by shape.c and locomotion.c. */
#ifndef AMI_SHAPE_INTERNAL_H
#define AMI_SHAPE_INTERNAL_H

#include "anymove/shape.h"

/* Local rotation of bone b at frame t (quat, else euler, else identity). */
void ami_local_quat(const am_motion *mo, size_t t, size_t b, double q[4]);
/* Yaw of a root rotation: the angle about +Z of the rest's -Y heading. */
double ami_yaw_of(const double q[4]);
/* Frames [begin, begin + count) of mo as a new motion with quat (and loc). */
AM_NODISCARD am_status ami_motion_slice(const am_rig *rig, const am_motion *mo, size_t begin, size_t count,
                                        am_motion **out, am_error *err);
/* Normalised rotations, continuous euler from quat, FK joints. */
AM_NODISCARD am_status ami_motion_finish(const am_rig *rig, am_motion *c, am_error *err);
/* Seam of a looping clip joints [T][J][3] whose next cycle is displaced by d; and the clip's own
 * mean step and acceleration (may be NULL), % of size. */
void ami_loop_error(const double *joints, size_t T, size_t J, const double d[3], double size, am_loop_error *e,
                    double *mean_step, double *mean_accel);
/* Strongest period (frames) of root-relative features f [T][J][3], 0 if none. */
size_t ami_pose_period(const double *f, size_t T, size_t J);

#endif
