/* Forward kinematics (SPEC.md 2.3). Per-frame FK never allocates: it is called per frame by
 * every solver, and a clip may have thousands of frames. am_rig_fk_clip allocates one pose
 * array per call for rigs of more than AMI_FK_CACHE bones. */
#include <assert.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/rig.h"

/* Poses of rigs up to AMI_FK_CACHE bones live on the stack in am_rig_fk_clip. */
#define AMI_FK_CACHE 128

/* out = A * [R | t] for a rigid A (t NULL = 0): am_mat4_mul_rot plus a sliding bone's loc
 * carried through A. out must not alias A. */
static void ami_mul_rt(const double A[16], const double R[9], const double *t, double out[16])
{
    am_mat4_mul_rot(A, R, out);
    if (t)
        for (int i = 0; i < 3; i++) out[i * 4 + 3] += A[i * 4] * t[0] + A[i * 4 + 1] * t[1] + A[i * 4 + 2] * t[2];
}

static void ami_root_pose(const am_rig *rig, const double trans[3], const double root_quat[4],
                          double P[16])
{
    double Q[9], R[9];
    am_quat_to_mat3(root_quat, Q);
    am_mat3_mul(Q, rig->rest_rot, R);
    am_mat4_from_rt(R, trans, P);
}

/* P(b) = P(parent) * O(b) * [R(e) | loc] (loc NULL = 0). */
static void ami_child_pose(const am_rig *rig, size_t b, const double Pparent[16],
                           const double Rloc[9], const double *loc, double P[16])
{
    double T[16];
    am_mat4_mul(Pparent, rig->offset + 16 * b, T);
    ami_mul_rt(T, Rloc, loc, P);
}

/* Where a frame's local rotations come from: Euler angles (a motion's primary rotation data,
 * always present once loaded), rotation matrices, or quaternions (motions built with
 * quaternions only); loc [B][3] or NULL. */
typedef struct ami_frame_src {
    const double *euler, *rot, *quat, *loc;
} ami_frame_src;

static void ami_local_rot(const ami_frame_src *f, size_t b, double R[9])
{
    if (f->euler) {
        am_euler_xyz_to_mat3(f->euler + 3 * b, R);
    } else if (f->rot) {
        memcpy(R, f->rot + 9 * b, 9 * sizeof(double));
    } else if (f->quat) {
        double q[4];
        am_quat_normalize(f->quat + 4 * b, q);
        am_quat_to_mat3(q, R);
    } else {
        am_mat3_identity(R);
    }
}

/* Poses of bones 1..count-1 (the root's is in pose already), parents first. The Euler-only,
 * no-loc loop is every solver's FK and stays as lean as before loc existed. */
static void ami_child_poses(const am_rig *rig, const ami_frame_src *f, size_t count, double *pose)
{
    if (f->euler && !f->loc) {
        for (size_t b = 1; b < count; b++) {
            double R[9];
            double T[16];
            am_euler_xyz_to_mat3(f->euler + 3 * b, R);
            am_mat4_mul(pose + 16 * (size_t)rig->parent[b], rig->offset + 16 * b, T);
            am_mat4_mul_rot(T, R, pose + 16 * b);
        }
        return;
    }
    for (size_t b = 1; b < count; b++) {
        double R[9];
        ami_local_rot(f, b, R);
        ami_child_pose(rig, b, pose + 16 * (size_t)rig->parent[b], R, f->loc ? f->loc + 3 * b : NULL,
                       pose + 16 * b);
    }
}

void am_rig_fk_rot_loc(const am_rig *rig, const double trans[3], const double root_quat[4],
                       const double *local_rot, const double *loc, double *pose)
{
    assert(rig && trans && root_quat && local_rot && pose);
    ami_root_pose(rig, trans, root_quat, pose);
    ami_frame_src f = {.rot = local_rot, .loc = loc};
    ami_child_poses(rig, &f, rig->bone_count, pose);
}

void am_rig_fk_rot(const am_rig *rig, const double trans[3], const double root_quat[4],
                   const double *local_rot, double *pose)
{
    am_rig_fk_rot_loc(rig, trans, root_quat, local_rot, NULL, pose);
}

void am_rig_fk_loc(const am_rig *rig, const double trans[3], const double root_quat[4],
                   const double *euler, const double *loc, double *pose)
{
    assert(rig && trans && root_quat && euler && pose);
    ami_root_pose(rig, trans, root_quat, pose);
    ami_frame_src f = {.euler = euler, .loc = loc};
    ami_child_poses(rig, &f, rig->bone_count, pose);
}

void am_rig_fk(const am_rig *rig, const double trans[3], const double root_quat[4],
               const double *euler, double *pose)
{
    am_rig_fk_loc(rig, trans, root_quat, euler, NULL, pose);
}

static ami_frame_src ami_motion_frame(const am_motion *mo, size_t t)
{
    size_t B = mo->bone_count;
    ami_frame_src f = {0};
    if (mo->euler) f.euler = mo->euler + 3 * t * B;
    else if (mo->quat) f.quat = mo->quat + 4 * t * B;
    if (mo->loc) f.loc = mo->loc + 3 * t * B;
    return f;
}

void am_motion_pose(const am_rig *rig, const am_motion *mo, size_t frame, double *pose)
{
    assert(rig && mo && pose && frame < mo->frame_count);
    assert(mo->bone_count == rig->bone_count);
    ami_root_pose(rig, mo->trans + 3 * frame, mo->root_quat + 4 * frame, pose);
    ami_frame_src f = ami_motion_frame(mo, frame);
    ami_child_poses(rig, &f, rig->bone_count, pose);
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

/* World pose of bone b (>= AMI_FK_CACHE) of a frame from the cached poses of bones
 * < AMI_FK_CACHE. The product of local transforms is accumulated from b upwards (matrix
 * products associate), so no list of ancestors is needed: O(depth) per bone and no allocation
 * for any depth. Only used when the pose array of a large rig cannot be allocated. */
static void ami_uncached_pose(const am_rig *rig, const ami_frame_src *f, size_t b,
                              const double *cache, double P[16])
{
    double T[16], L[16], R[9];
    ami_local_rot(f, b, R);
    ami_mul_rt(rig->offset + 16 * b, R, f->loc ? f->loc + 3 * b : NULL, T);
    size_t p = (size_t)rig->parent[b];
    while (p >= AMI_FK_CACHE) {
        ami_local_rot(f, p, R);
        ami_mul_rt(rig->offset + 16 * p, R, f->loc ? f->loc + 3 * p : NULL, L);
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
        ami_frame_src f = ami_motion_frame(mo, t);
        ami_root_pose(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, poses);
        ami_child_poses(rig, &f, nc, poses);
        double *out = joints + t * J * 3;
        for (size_t j = 0; j < J; j++) {
            size_t b = (size_t)rig->kp_bone[j];
            if (b < nc) {
                ami_keypoint(rig, j, poses + 16 * b, out + 3 * j);
            } else {
                double P[16];
                ami_uncached_pose(rig, &f, b, poses, P);
                ami_keypoint(rig, j, P, out + 3 * j);
            }
        }
    }
    if (poses != cache) am_free(poses);
}

void am_motion_joint_angles(const am_rig *rig, const am_motion *mo, double *angles)
{
    assert(rig && mo && angles && mo->bone_count == rig->bone_count);
    const size_t B = rig->bone_count;
    for (size_t t = 0; t < mo->frame_count; t++) {
        ami_frame_src f = ami_motion_frame(mo, t);
        for (size_t b = 0; b < B; b++) {
            double R[9];
            if (b == 0) {
                /* The root's world rotation Q R_rest, as a rotation in its own rest frame. */
                double Q[9], T[9];
                am_quat_to_mat3(mo->root_quat + 4 * t, Q);
                am_mat3_mul(Q, rig->rest_rot, T);
                am_mat3_tmul(rig->rest_rot, T, R);
            } else {
                ami_local_rot(&f, b, R);
            }
            double *a = angles + (t * B + b) * 3;
            am_mat3_to_joint_angles(R, t ? a - B * 3 : NULL, a);
        }
    }
}
