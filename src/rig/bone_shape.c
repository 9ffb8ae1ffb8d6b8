/* The bone shape every viewer of ours draws (the glTF writer's generated mesh, the renderer). */
#include <string.h>

#include "anymove/math.h"
#include "rig_internal.h"

/* A Blender-style octahedral bone of unit length in its own frame: head at the origin, tail at
 * +Y, a square waist at 10% of the length with a half-width of 10%. Faces are wound
 * counter-clockwise seen from outside (checked in ami_bone_faces). */
const double ami_bone_verts[6][3] = {
    {0, 0, 0}, {0, 1, 0}, {0.1, 0.1, 0}, {0, 0.1, 0.1}, {-0.1, 0.1, 0}, {0, 0.1, -0.1},
};

void ami_bone_faces(int faces[AMI_BONE_FACES][3])
{
    static const double centre[3] = {0, 0.1, 0};
    for (int i = 0; i < 4; i++) {
        int a = 2 + i, b = 2 + (i + 1) % 4;
        int f0[3] = {0, a, b}, f1[3] = {1, b, a};
        memcpy(faces[2 * i], f0, sizeof f0);
        memcpy(faces[2 * i + 1], f1, sizeof f1);
    }
    for (int f = 0; f < AMI_BONE_FACES; f++) {
        const double *A = ami_bone_verts[faces[f][0]], *B = ami_bone_verts[faces[f][1]],
                     *Cv = ami_bone_verts[faces[f][2]];
        double e1[3], e2[3], n[3], mid[3];
        am_vec3_sub(B, A, e1);
        am_vec3_sub(Cv, A, e2);
        am_vec3_cross(e1, e2, n);
        for (int k = 0; k < 3; k++) mid[k] = (A[k] + B[k] + Cv[k]) / 3.0 - centre[k];
        if (am_vec3_dot(n, mid) < 0) {
            int t = faces[f][1];
            faces[f][1] = faces[f][2];
            faces[f][2] = t;
        }
    }
}

