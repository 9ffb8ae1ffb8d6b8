/* anymove BVH: a reader and writer for Biovision Hierarchy files, and the conversion of a BVH
 * skeleton and motion to an am_rig / am_motion and back (docs/bvh.md).
 *
 * CONVENTIONS
 * - am_bvh holds the file as written: file units, file axes, degrees, channel values per frame
 *   in file order. Conversions apply the axes and the scale of am_bvh_opts.
 * - Rotation channels multiply in file order: "Zrotation Xrotation Yrotation" is
 *   R = Rz * Rx * Ry (BVHView, STYLE 5). Repeated axes ("Z X Z") are accepted.
 * - Position channels on a joint replace its OFFSET for that frame (Blender, MotionBuilder);
 *   on a non-root joint they become the bone's loc (SPEC 2.3).
 * - Keywords are matched caselessly; names are one whitespace-free token.
 * - Joints are stored depth-first in file order: parent[i] < i, the root is joint 0.
 *
 *     am_bvh *b = NULL;  am_rig *rig = NULL;  am_motion *mo = NULL;  am_error err = {0};
 *     if (am_bvh_load("clip.bvh", NULL, &b, &err) == AM_OK &&
 *         am_rig_from_bvh(b, NULL, &rig, &err) == AM_OK &&
 *         am_motion_from_bvh(b, rig, NULL, &mo, &err) == AM_OK) { ... }
 *     am_motion_free(mo); am_rig_free(rig); am_bvh_free(b);
 *
 * Pairs: am_bvh_parse/am_bvh_load/am_bvh_from_motion -> am_bvh_free.
 * The reader is safe on untrusted input: every malformed file gives a status, never a crash.
 * Contexts (core.h): calls with opts run in the scope of opts->ctx (the warnings of
 * am_rig_from_bvh and am_motion_from_bvh go to the caller's scope); am_bvh_parse, the writers
 * and the samplers run in the caller's scope.
 */
#ifndef ANYMOVE_BVH_H
#define ANYMOVE_BVH_H

#include "core.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_bvh_channel {
    AM_BVH_XPOS,
    AM_BVH_YPOS,
    AM_BVH_ZPOS,
    AM_BVH_XROT,
    AM_BVH_YROT,
    AM_BVH_ZROT,
    AM_BVH_CHANNEL_COUNT
} am_bvh_channel;

#define AM_BVH_MAX_CHANNELS 6

typedef struct am_bvh_joint {
    char *name;
    int32_t parent;                  /* -1 for the root */
    double offset[3];                /* file units and axes */
    uint32_t channel_count;          /* 0..6 */
    uint8_t channels[AM_BVH_MAX_CHANNELS]; /* am_bvh_channel, file order */
    uint32_t channel_start;          /* index of its first value in a frame */
    bool has_end;                    /* an End Site follows */
    double end_offset[3];
} am_bvh_joint;

typedef struct am_bvh {
    size_t joint_count;
    am_bvh_joint *joints;            /* [J] depth-first, parent < index */
    size_t channel_count;            /* C: values per frame */
    size_t frame_count;              /* T >= 1 */
    double frame_time;               /* seconds; 1 / frame_time passes am_fps_valid */
    double *frames;                  /* [T][C] as in the file (degrees, file units) */
    am_warning_list warnings;        /* non-fatal oddities of am_bvh_load / am_bvh_from_motion */
    char *source;                    /* the file it was read from (named in the errors of
                                        the conversions below), or NULL */
} am_bvh;

/* Which way the file is up. BVH is Y up with the character facing +Z unless the caller knows
 * otherwise: a file point (x, y, z) becomes the world point (x, -z, y) (SPEC 1: Z up, faces
 * -Y, +X left), the same map as glTF's. Z-up files (faces -Y) are taken as they are. There is
 * no guess: the rest pose's extent cannot tell a long creature lying along z from a tall one. */
typedef enum am_bvh_axes {
    AM_BVH_AXES_Y_UP,                /* the default */
    AM_BVH_AXES_Z_UP,
    AM_BVH_AXES_COUNT
} am_bvh_axes;

typedef struct am_bvh_opts {
    am_bvh_axes axes;                /* reading: the file's up axis, default Y_UP. Files are
                                        always written Y up */
    double scale;                    /* metres per file unit; default 1 (0 = default) */
    uint64_t max_bytes;              /* am_bvh_load's budget: the file plus the frames it
                                        decodes (frames x channels x 8 bytes), checked before
                                        either is read in full; 0 = 1 GiB. am_bvh_parse
                                        budgets the frames at 1 GiB */
    const am_bvh *like;              /* writer: copy channel layouts of joints with the same
                                        name (when they have 3 rotation channels, and position
                                        channels where the bone needs them); NULL: root and
                                        sliding bones "Xposition Yposition Zposition Zrotation
                                        Yrotation Xrotation", others "Zrotation Yrotation
                                        Xrotation" */
    am_context ctx;                  /* allocator, limits; zero = inherited (core.h) */
} am_bvh_opts;

/* Parse BVH text (len bytes, need not be NUL-terminated). source names it in errors.
 * Errors carry a 1-based line and column: AM_E_SYNTAX (unexpected token, missing MOTION),
 * AM_E_VALUE (channel count outside 0..6, a Frame Time whose rate fails am_fps_valid),
 * AM_E_SHAPE (a frame line with the wrong number of values), AM_E_TRUNCATED (fewer frame lines
 * than Frames:), AM_E_NONFINITE (NaN/inf), AM_E_EMPTY (Frames: 0), AM_E_DUPLICATE (two joints
 * with one name), AM_E_LIMIT (over 100,000 joints, or frames over the budget). Linear in the
 * joints: names are hashed, nothing recurses, so any nesting depth parses. */
AM_NODISCARD am_status am_bvh_parse(const char *text, size_t len, const char *source,
                                    am_bvh **out, am_error *err);
/* opts: only max_bytes is used (NULL = defaults). The result's source is path. */
AM_NODISCARD am_status am_bvh_load(const char *path, const am_bvh_opts *opts, am_bvh **out,
                                   am_error *err);
/* Serialize (deterministic: tabs, "%.9g" numbers, the frame time exactly, so 1 / fps reads
 * back as the same double). Writes are atomic. */
AM_NODISCARD am_status am_bvh_to_buf(const am_bvh *bvh, am_buf *out, am_error *err);
AM_NODISCARD am_status am_bvh_write(const am_bvh *bvh, const char *path, am_error *err);
void am_bvh_free(am_bvh *bvh);

/* File-axes forward kinematics of one frame: world rotations rot [J][9] (required), world
 * positions pos [J][3] (file units) and, if ends != NULL, End Site positions ends [J][3]
 * (joints without one get their own position). No allocation. frame < frame_count. */
void am_bvh_frame_positions(const am_bvh *bvh, size_t frame, double *rot, double *pos,
                            double *ends);
/* Local rotation of joint j at a frame (file axes): the product of its rotation channels. */
void am_bvh_joint_rotation(const am_bvh *bvh, size_t frame, size_t joint, double R[9]);
/* Diagonal of the box of the rest joints and End Sites (file units). */
double am_bvh_rest_size(const am_bvh *bvh);

/* Rig of a BVH skeleton (world axes, metres): one bone per BVH joint, named after it, from
 * the joint to its first child whose offset is not zero and which does not slide (the leaf's
 * bone: to its End Site, joint "<name>_end"). Other children attach at their own heads
 * (unconnected). A joint with nothing to point at (every child at its own position or sliding,
 * or a zero End Site) gets a synthetic tail joint "<name>_tail": at its sliding child's rest
 * head, else one tenth of the skeleton size away along its nearest non-zero descendant, else
 * its parent's bone, else up. A child slides when its position channels move it off its OFFSET
 * (by more than 1e-6 of the skeleton size) in some frame. */
AM_NODISCARD am_status am_rig_from_bvh(const am_bvh *bvh, const am_bvh_opts *opts,
                                       am_rig **out, am_error *err);
/* Motion of a BVH clip, bound to a rig from am_rig_from_bvh with the same opts (bones matched
 * by name; AM_E_NAME if one is missing): trans, root_quat, euler, quat, joints; fps =
 * 1 / frame_time exactly. Position channels of non-root joints that slide become loc (SPEC
 * 2.3), so FK puts every joint where the file does; loc is NULL when nothing slides. */
AM_NODISCARD am_status am_motion_from_bvh(const am_bvh *bvh, const am_rig *rig,
                                          const am_bvh_opts *opts, am_motion **out,
                                          am_error *err);
/* BVH of a rig and its motion (bound to it), Y up: one BVH joint per bone at its head, named
 * after it, OFFSETs the rig's rest offsets (scaled by 1 / opts->scale); bones without child
 * bones get an End Site at their tail; bones whose loc is not zero get position channels. */
AM_NODISCARD am_status am_bvh_from_motion(const am_rig *rig, const am_motion *mo,
                                          const am_bvh_opts *opts, am_bvh **out,
                                          am_error *err);

#ifdef __cplusplus
}
#endif
#endif
