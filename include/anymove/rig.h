/* anymove rigs: rig.json, Blender-compatible bone frames, limits, forward kinematics,
 * motion.json and creature.json (SPEC.md sections 2, 3.1 and 4.3).
 *
 * A rig is built once from a raw description (am_rig_desc: joints + bones + limits, in any
 * order), validated, sorted parents-first, and holds everything FK needs precomputed:
 * rest frames, true inverses of the rest matrices, rest offsets, lengths, keypoints and
 * resolved limits. Per-frame FK never allocates.
 *
 *     am_rig *rig = NULL;  am_motion *mo = NULL;  am_error err = {0};
 *     if (am_rig_load("rig.json", &rig, &err) == AM_OK &&
 *         am_motion_load("motion.json", rig, &mo, &err) == AM_OK) {
 *         double *joints = am_alloc_array(mo->frame_count * rig->joint_count * 3, sizeof *joints);
 *         if (joints) am_rig_fk_clip(rig, mo, joints);
 *         am_free(joints);
 *     }
 *     am_motion_free(mo); am_rig_free(rig);
 *
 * Pairs: am_rig_load/am_rig_parse/am_rig_build -> am_rig_free; am_motion_* -> am_motion_free;
 * am_creature_load -> am_creature_free.
 * Nothing here takes options: building, loading (am_rig_load, am_motion_load,
 * am_creature_load in io.h) and FK run in the caller's scope (core.h), whose allocator and
 * limits apply and which collects their warnings. FK never allocates and is re-entrant.
 */
#ifndef ANYMOVE_RIG_H
#define ANYMOVE_RIG_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raw, editable rig description: what rig.json says, in file order. Borrowed pointers. */
typedef struct am_rig_desc {
    size_t joint_count;
    const char *const *joint_names;  /* [J] */
    const double *joint_pos;         /* [J][3] rest positions, metres, world axes */
    size_t bone_count;
    const char *const *bone_names;   /* [B] */
    const char *const *bone_head;    /* [B] joint name */
    const char *const *bone_tail;    /* [B] joint name */
    const char *const *bone_parent;  /* [B] bone name or NULL for the root */
    size_t limit_count;
    const char *const *limit_keys;   /* [L] bone name or stem (SPEC 2.1) */
    const double *limits_deg;        /* [L][3][2] degrees, (min, max) for X, Y, Z */
    size_t helper_count;
    const char *const *helpers;      /* [H] names of helper bones (SPEC 2.1), each once */
    const char *extra_json;          /* other top-level keys as a JSON object text, or NULL */
    const char *source;              /* file name for error messages, or NULL */
} am_rig_desc;

/* A validated rig, bones parents-first (parent[b] < b, root = bone 0, parent -1). */
typedef struct am_rig {
    size_t bone_count, joint_count;
    char **bone_names;      /* [B] */
    char **joint_names;     /* [J] in rig.json order */
    int32_t *parent;        /* [B] */
    int32_t *head_joint;    /* [B] joint index of the head */
    int32_t *tail_joint;    /* [B] joint index of the tail */
    double *joint_rest;     /* [J][3] */
    double *length;         /* [B] |tail - head| */
    double *rest_rot;       /* [B][9] R_rest: columns are the bone's X, Y, Z axes (SPEC 2.2) */
    double *rest_mat;       /* [B][16] M_rest = [R_rest | head] */
    double *rest_inv;       /* [B][16] true inverse of M_rest */
    double *offset;         /* [B][16] O(b) = M_rest(parent)^-1 M_rest(b); root: M_rest(root) */
    int32_t *kp_bone;       /* [J] bone whose tail (else head) is joint j */
    uint8_t *kp_is_tail;    /* [J] 1: tail of kp_bone, 0: head */
    uint8_t *has_limit;     /* [B] */
    double *limits;         /* [B][3][2] radians (min, max) per Euler axis; free = +-pi */
    uint8_t *is_helper;     /* [B] 1 for non-deforming helper bones (IK targets, SPEC 2.1
                               "helpers"); else 0 */
    char *name;             /* rig "name" or NULL */
    char *model;            /* rig "model": the glTF file this rig is the skeleton of (convert
                               MODEL.glb records it, export keeps its character), or NULL */
    char *extra_json;       /* other keys of rig.json, kept for rewriting; NULL if none */
    struct ami_rig_lookup *lookup; /* private: hashed bone and joint names (am_rig_find_*) */
} am_rig;

/* Validate and build. Errors name the bone or joint: unknown joint, duplicate name, no root
 * or two roots, a parent cycle, a zero-length bone (< 1e-9 m), malformed or reversed limits,
 * a limit key that matches no bone or stem, non-finite positions, a helper that is not a bone
 * (AM_E_NAME) or is listed twice (AM_E_DUPLICATE). */
AM_NODISCARD am_status am_rig_build(const am_rig_desc *desc, am_rig **out, am_error *err);


void am_rig_free(am_rig *rig);

/* -1 if absent. O(1): names are hashed when the rig is built. */
int am_rig_find_bone(const am_rig *rig, const char *name);
int am_rig_find_joint(const am_rig *rig, const char *name);

/* SPEC 2.2 roll-0 rest frame of a bone from head to tail: R columns X, Y, Z. */
void am_bone_frame_roll0(const double head[3], const double tail[3], double R[9]);
/* Multiply every length of the rig by s > 0 (units: --scale): rest joints, bone lengths and
 * the translations of the rest, inverse-rest and offset matrices. Rotations and limits stay. */
void am_rig_scale(am_rig *rig, double s);
/* Clamp Euler angles into the bone's limits (no-op for free bones). */
void am_rig_clamp_euler(const am_rig *rig, size_t bone, double e[3]);

/* ---- forward kinematics (no allocation) ---- */
/* pose: [B][16] world matrices P(b). local_rot: [B][9] local rotations relative to rest
 * (the root's entry is ignored: root_quat is used). */
void am_rig_fk_rot(const am_rig *rig, const double trans[3], const double root_quat[4],
                   const double *local_rot, double *pose);
/* euler: [B][3] Euler XYZ radians (root entry ignored). */
void am_rig_fk(const am_rig *rig, const double trans[3], const double root_quat[4],
               const double *euler, double *pose);
/* The same with local translations loc [B][3] (SPEC 2.3: P(b) = P(parent) O(b) [R | loc_b],
 * loc_b in the bone's rest frame; the root's entry is ignored). loc NULL = all zero, which is
 * am_rig_fk_rot / am_rig_fk. */
void am_rig_fk_rot_loc(const am_rig *rig, const double trans[3], const double root_quat[4],
                       const double *local_rot, const double *loc, double *pose);
void am_rig_fk_loc(const am_rig *rig, const double trans[3], const double root_quat[4],
                   const double *euler, const double *loc, double *pose);
/* Keypoints of a pose: joints [J][3]. */
void am_rig_keypoints(const am_rig *rig, const double *pose, double *joints);
/* Head/tail of every bone: [B][3] each (either may be NULL). */
void am_rig_bone_ends(const am_rig *rig, const double *pose, double *heads, double *tails);
/* Rest pose: P = M_rest for every bone. */
void am_rig_rest_pose(const am_rig *rig, double *pose);

/* ---- motion.json (SPEC 4.3) ---- */
typedef struct am_motion {
    size_t frame_count;     /* T */
    size_t bone_count;      /* B, equal to the rig's once bound */
    size_t joint_count;     /* J (0 if no joints) */
    double fps;
    char **bone_names;      /* [B] in this struct's order (the rig's order once bound) */
    char **joint_names;     /* [J] or NULL */
    double *trans;          /* [T][3] root head */
    double *root_quat;      /* [T][4] (w,x,y,z) */
    double *euler;          /* [T][B][3] local Euler XYZ radians; root entry 0 */
    double *quat;           /* [T][B][4] local quaternions, or NULL (derived from euler on write) */
    double *loc;            /* [T][B][3] local translations in each bone's rest frame (SPEC 2.3,
                               Blender's pose-bone location), or NULL = all zero; the root's
                               entry is ignored (trans places the root) */
    double *joints;         /* [T][J][3] FK keypoints, or NULL */
    char *extra_json;       /* other keys (reproj_px, sync, contacts...) as JSON object text */
} am_motion;

/* Frame rates every loader and constructor accepts (frames per second). Anything outside is
 * refused before any work (AM_E_VALUE from files, AM_E_ARG from arguments): 1e-300 passes
 * "fps > 0" and then asks for keyframe times no float can hold. */
#define AM_FPS_MIN 1e-3
#define AM_FPS_MAX 1e4
/* True when fps is finite and within [AM_FPS_MIN, AM_FPS_MAX]. */
bool am_fps_valid(double fps);

/* What one motion may hold: frames x (trans 3 + root_quat 4 + (euler 3 + quat 4 + loc 3) per
 * bone + joints 3 per joint) x 8 bytes, loc counted whether or not the motion gets it. Every producer (motion.json, BVH and glTF conversion,
 * solvers) creates motions through am_motion_create, which refuses more with AM_E_LIMIT, as
 * does the calling scope's am_context.max_bytes when smaller. 512 MiB is an hour of a
 * 40-bone character at 30 fps. */
#define AM_MOTION_MAX_BYTES ((uint64_t)512 << 20)
/* Bytes a motion of T frames of this rig (with quat, loc and joints) takes, saturating. */
uint64_t am_motion_bytes(const am_rig *rig, size_t frame_count);

/* Allocate a zeroed motion with identity rotations, names copied from the rig. fps must
 * satisfy am_fps_valid (AM_E_ARG); more than AM_MOTION_MAX_BYTES is AM_E_LIMIT. */
AM_NODISCARD am_status am_motion_create(const am_rig *rig, size_t frame_count, double fps,
                                        am_motion **out, am_error *err);

/* Fill joints [T][J][3] (and joint_names) from FK of the rig. Allocates joints if NULL. */
AM_NODISCARD am_status am_motion_compute_joints(am_motion *mo, const am_rig *rig, am_error *err);

void am_motion_free(am_motion *mo);
/* The rig bones a motion read without a rig (file order: am_motion_load(path, NULL, ...))
 * does not animate: missing[b] = 1 for those ([B] of the rig); returns their count. Binding
 * such a motion holds them at rest. */
size_t am_motion_uncovered(const am_motion *unbound, const am_rig *rig, uint8_t *missing);
/* Multiply the root translations, local translations (loc) and joints of a motion by s > 0
 * (with am_rig_scale). */
void am_motion_scale(am_motion *mo, double s);

/* Joint angles of every frame and bone (am_mat3_to_joint_angles of the local rotation: flexion
 * about the bone's rest X, abduction, rotation about its long axis), radians, continuous in
 * time: angles [T][B][3]. The root's are its world rotation seen in its rest frame. */
void am_motion_joint_angles(const am_rig *rig, const am_motion *mo, double *angles);

/* FK of every frame: joints [T][J][3]. The motion must be bound to rig (same bone order).
 * Rotations come from euler (else quat, else rest), translations from loc when present.
 * O(T x (B + J)); rigs over 128 bones get one [B][16] pose array per call (am_alloc). */
void am_rig_fk_clip(const am_rig *rig, const am_motion *mo, double *joints);
/* World matrices pose [B][16] of one frame (frame < frame_count) of a motion bound to rig,
 * with the rotations and loc of am_rig_fk_clip. No allocation. */
void am_motion_pose(const am_rig *rig, const am_motion *mo, size_t frame, double *pose);

/* ---- skinning (SPEC 4.4) ---- */
/* SPEC 4.4 reconstruction of N points over the motion's frames:
 * out[t][n] = sum_k weight[n][k] * P(bone_index[n][k], t) * M_rest^-1 * rest[n].
 * rest [N][3], bone_index/weight [N][4], out [T][N][3]. Bone indices out of range ->
 * AM_E_VALUE. No allocation besides a [B][16] scratch. */
AM_NODISCARD am_status am_skin_reconstruct(const am_rig *rig, const am_motion *mo, size_t n,
                                           const float *rest, const int32_t *bone_index,
                                           const float *weight, float *out, am_error *err);

/* ---- creature.json (SPEC 3.1) ---- */
typedef struct am_layout {
    double w_front, w_side, ground_v, m_per_px, front_cx, side_cx;
} am_layout;

/* creature.json "prep": how a raw model becomes the creature at real size (am_prep_transform). */
typedef struct am_prep {
    double length_m;  /* the mesh's extent along `axis` after the turn, metres; 0 = keep */
    double rotz_deg;  /* turn about Z (degrees) that makes the creature face -Y */
    int axis;         /* 0 x, 1 y (default: the body's length for a creature facing -Y), 2 z */
} am_prep;

/* creature.json "paint": a limb group, coloured in the bind's paint attribute. */
typedef struct am_paint_group {
    char *name;       /* the group's key, or "paint[i]" */
    float color[4];   /* RGBA in [0, 1] */
    size_t bone_count;
    char **bones;
} am_paint_group;

typedef struct am_creature {
    char *name;
    am_layout layout;
    size_t feet_count;
    char **feet;
    size_t contact_count;
    char **contacts; /* defaults to feet */
    bool has_prep;   /* "prep" given */
    am_prep prep;
    size_t paint_count;
    am_paint_group *paint; /* [paint_count] */
    bool rigid;      /* "rigid": true: hard single-bone skinning */
} am_creature;

/* The wolf layout of SPEC 3. */
void am_layout_default(am_layout *layout);

void am_creature_free(am_creature *c);

#ifdef __cplusplus
}
#endif
#endif
