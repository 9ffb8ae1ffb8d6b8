/* Forward kinematics (SPEC.md 2.3). Per-frame FK never allocates: it is called per frame by
 * every solver, and a clip may have thousands of frames. am_rig_fk_clip allocates one pose
 * array per call for rigs of more than AMI_FK_CACHE bones. */
#include <assert.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/rig.h"

/* Poses of rigs up to AMI_FK_CACHE bones live on the stack in am_rig_fk_clip. */
#define AMI_FK_CACHE 128

/* out = A * [R | 0] for a rigid A (3x4 product; the last row stays 0 0 0 1). */
static void ami_mul_rot(const double A[16], const double R[9], double out[16])
{
    double r[16];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            r[i * 4 + j] = A[i * 4] * R[j] + A[i * 4 + 1] * R[3 + j] + A[i * 4 + 2] * R[6 + j];
        }
        r[i * 4 + 3] = A[i * 4 + 3];
    }
    r[12] = r[13] = r[14] = 0.0;
    r[15] = 1.0;
    memcpy(out, r, sizeof r);
}

static void ami_root_pose(const am_rig *rig, const double trans[3], const double root_quat[4],
                          double P[16])
{
    double Q[9], R[9];
    am_quat_to_mat3(root_quat, Q);
    am_mat3_mul(Q, rig->rest_rot, R);
    am_mat4_from_rt(R, trans, P);
}

/* P(b) = P(parent) * O(b) * [R(e) | 0]. */
static void ami_child_pose(const am_rig *rig, size_t b, const double Pparent[16],
                           const double Rloc[9], double P[16])
{
    double T[16];
    am_mat4_mul(Pparent, rig->offset + 16 * b, T);
    ami_mul_rot(T, Rloc, P);
}

void am_rig_fk_rot(const am_rig *rig, const double trans[3], const double root_quat[4],
                   const double *local_rot, double *pose)
{
    assert(rig && trans && root_quat && local_rot && pose);
    ami_root_pose(rig, trans, root_quat, pose);
    for (size_t b = 1; b < rig->bone_count; b++) {
        ami_child_pose(rig, b, pose + 16 * (size_t)rig->parent[b], local_rot + 9 * b,
                       pose + 16 * b);
    }
}

void am_rig_fk(const am_rig *rig, const double trans[3], const double root_quat[4],
               const double *euler, double *pose)
{
    assert(rig && trans && root_quat && euler && pose);
    ami_root_pose(rig, trans, root_quat, pose);
    for (size_t b = 1; b < rig->bone_count; b++) {
        double R[9];
        am_euler_xyz_to_mat3(euler + 3 * b, R);
        ami_child_pose(rig, b, pose + 16 * (size_t)rig->parent[b], R, pose + 16 * b);
    }
}

static void ami_keypoint(const am_rig *rig, size_t j, const double P[16], double out[3])
{
    size_t b = (size_t)rig->kp_bone[j];
    double local[3] = {0.0, rig->kp_is_tail[j] ? rig->length[b] : 0.0, 0.0};
    am_mat4_mul_point(P, local, out);
}

void am_rig_keypoints(const am_rig *rig, const double *pose, double *joints)
{
    assert(rig && pose && joints);
    for (size_t j = 0; j < rig->joint_count; j++) {
        ami_keypoint(rig, j, pose + 16 * (size_t)rig->kp_bone[j], joints + 3 * j);
    }
}

void am_rig_bone_ends(const am_rig *rig, const double *pose, double *heads, double *tails)
{
    assert(rig && pose);
    for (size_t b = 0; b < rig->bone_count; b++) {
        const double *P = pose + 16 * b;
        if (heads) am_mat4_get_trans(P, heads + 3 * b);
        if (tails) {
            double local[3] = {0.0, rig->length[b], 0.0};
            am_mat4_mul_point(P, local, tails + 3 * b);
        }
    }
}

void am_rig_rest_pose(const am_rig *rig, double *pose)
{
    assert(rig && pose);
    memcpy(pose, rig->rest_mat, rig->bone_count * 16 * sizeof *pose);
}

/* World pose of bone b (>= AMI_FK_CACHE) from the cached poses of bones < AMI_FK_CACHE.
 * The product of local transforms is accumulated from b upwards (matrix products associate),
 * so no list of ancestors is needed: O(depth) per bone and no allocation for any depth. Only
 * used when the pose array of a large rig cannot be allocated. */
static void ami_uncached_pose(const am_rig *rig, size_t b, const double *euler,
                              const double *cache, double P[16])
{
    double T[16], L[16], R[9];
    am_euler_xyz_to_mat3(euler + 3 * b, R);
    ami_mul_rot(rig->offset + 16 * b, R, T);
    size_t p = (size_t)rig->parent[b];
    while (p >= AMI_FK_CACHE) {
        am_euler_xyz_to_mat3(euler + 3 * p, R);
        ami_mul_rot(rig->offset + 16 * p, R, L);
        am_mat4_mul(L, T, T);
        p = (size_t)rig->parent[p];
    }
    am_mat4_mul(cache + 16 * p, T, P);
}

void am_rig_fk_clip(const am_rig *rig, const am_motion *mo, double *joints)
{
    assert(rig && mo && joints);
    assert(mo->bone_count == rig->bone_count);
    size_t B = rig->bone_count, J = rig->joint_count;
    double cache[AMI_FK_CACHE * 16];
    /* FK once per frame: every bone's pose is kept for the frame, so a joint is one product
     * whatever its depth (a 50,000-deep chain re-walked per joint was quadratic). Rigs up to
     * AMI_FK_CACHE bones keep them on the stack. */
    double *poses = B <= AMI_FK_CACHE ? cache : am_alloc_array(B, 16 * sizeof(double));
    size_t nc = poses ? B : AMI_FK_CACHE;
    if (!poses) poses = cache;
    for (size_t t = 0; t < mo->frame_count; t++) {
        const double *euler = mo->euler + t * B * 3;
        ami_root_pose(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, poses);
        for (size_t b = 1; b < nc; b++) {
            double R[9];
            am_euler_xyz_to_mat3(euler + 3 * b, R);
            ami_child_pose(rig, b, poses + 16 * (size_t)rig->parent[b], R, poses + 16 * b);
        }
        double *out = joints + t * J * 3;
        for (size_t j = 0; j < J; j++) {
            size_t b = (size_t)rig->kp_bone[j];
            if (b < nc) {
                ami_keypoint(rig, j, poses + 16 * b, out + 3 * j);
            } else {
                double P[16];
                ami_uncached_pose(rig, b, euler, poses, P);
                ami_keypoint(rig, j, P, out + 3 * j);
            }
        }
    }
    if (poses != cache) am_free(poses);
}
