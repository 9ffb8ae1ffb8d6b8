/* Blender-compatible roll-0 bone frames (SPEC.md 2.2).
 *
 * This work is based on Blender's vec_roll_to_mat3_normalized (armature.cc), whose constants
 * and near -Y handling SPEC 2.2 restates; re-derived from the spec, not copied. */
#include <math.h>

#include "anymove/math.h"
#include "anymove/rig.h"

void am_bone_frame_roll0(const double head[3], const double tail[3], double R[9])
{
    double d[3], n[3];
    am_vec3_sub(tail, head, d);
    am_vec3_normalize(d, n);
    double x = n[0], y = n[1], z = n[2];
    double t = x * x + z * z;
    double theta = 1.0 + y;
    double X[3], Y[3] = {x, y, z}, Z[3];
    if (theta > 6.1e-3 || t > 6.25e-8) {
        /* NOTE: near -Y, 1 + y loses every digit; Blender uses the series of 1 + y in terms of
         * x^2 + z^2 there, and matching Blender to 1e-6 needs the same choice. */
        if (theta <= 6.1e-3) theta = t / 2.0 + t * t / 8.0;
        am_vec3_set(X, 1.0 - x * x / theta, -x, -x * z / theta);
        am_vec3_set(Z, -x * z / theta, -z, 1.0 - z * z / theta);
    } else {
        am_vec3_set(X, -1.0, 0.0, 0.0);
        am_vec3_set(Y, 0.0, -1.0, 0.0);
        am_vec3_set(Z, 0.0, 0.0, 1.0);
    }
    R[0] = X[0]; R[1] = Y[0]; R[2] = Z[0];
    R[3] = X[1]; R[4] = Y[1]; R[5] = Z[1];
    R[6] = X[2]; R[7] = Y[2]; R[8] = Z[2];
}
