/* Private helpers of src/retarget: bone names and roles, the skeleton analysis both the map and
 * the job use, and the quaternion world-delta FK the transfer runs on. */
#ifndef AMI_RETARGET_INTERNAL_H
#define AMI_RETARGET_INTERNAL_H

#include "anymove/retarget.h"

/* ---- names.c: normalised names and the role table ---- */
typedef enum ami_role {
    AMI_ROLE_NONE,
    AMI_ROLE_ROOT,
    AMI_ROLE_HIPS,
    AMI_ROLE_SPINE,
    AMI_ROLE_CHEST,
    AMI_ROLE_NECK,
    AMI_ROLE_HEAD,
    AMI_ROLE_FACE,     /* jaw, eyes, ears, tongue... */
    AMI_ROLE_TAIL,
    AMI_ROLE_WING,
    AMI_ROLE_CLAVICLE, /* clavicle, collar, scapula */
    AMI_ROLE_UPPERARM,
    AMI_ROLE_FOREARM,
    AMI_ROLE_HAND,
    AMI_ROLE_FINGER,
    AMI_ROLE_HIPBONE,  /* the pelvis-to-hip-joint bone (CMU LHipJoint, Poser lButtock) */
    AMI_ROLE_THIGH,
    AMI_ROLE_SHIN,
    AMI_ROLE_FOOT,
    AMI_ROLE_TOE,
    AMI_ROLE_LEG,      /* a limb segment the name does not place (Leg01, BackLeg) */
    AMI_ROLE_TWIST,    /* twist and roll bones: deform, but follow their limb */
    AMI_ROLE_COUNT
} ami_role;

const char *ami_role_name(ami_role role);

typedef struct ami_bone_name {
    char norm[96];   /* lowercase word tokens without side, prefixes and numbering, then the
                        ordinal: "upleg", "spine1" */
    int side;        /* from the name: +1 left, -1 right, 0 none */
    ami_role role;
    int ordinal;     /* the chain number the name carries (Spine2 -> 2), -1 if none */
    uint8_t helper;  /* named like an IK or pole target, a control or a mechanism bone */
    uint8_t end;     /* named like an end site (HeadTop_End, LeftToe_End, Tail_Nub) */
} ami_bone_name;

/* Names of every bone of a rig: out [B]. Whether a trailing number is the rig's global
 * numbering (Khronos "b_Spine01_02") or a chain ordinal (Rigify "spine.003") is decided over
 * the whole rig, and so are the family rules of the role table ("LeftShoulder" is a clavicle
 * beside "LeftArm" but an upper arm beside "LeftCollar"). */
void ami_names_analyse(const am_rig *rig, ami_bone_name *out);

/* ---- analysis.c: what both rigs look like to the matcher ---- */
typedef struct ami_skel {
    const am_rig *rig;
    size_t B;
    ami_bone_name *names;  /* [B] */
    uint8_t *excluded;     /* [B] helpers and end sites */
    int32_t *ppar;         /* [B] position parent: the rig's parent, or for a foot parented to
                              the body (IK-driven), the leg whose tail it sits on; -1 root */
    int32_t *spar;         /* [B] structural parent: nearest non-excluded ancestor along ppar */
    int32_t *order;        /* [B] every bone, each after its ppar */
    int32_t *child_start;  /* [B+1] structural children (non-excluded) of bone b: */
    int32_t *child;        /*   child[child_start[b] .. child_start[b+1]) */
    int32_t root;          /* the rig's root (bone 0), never excluded */
    int *side;             /* [B] +1 left, -1 right, 0 middle: the side of X of the bone's
                              head, or of its tail when the head is on the midline */
    double *heads, *tails; /* [B][3] rest heads and tails */
    double *sub_centroid;  /* [B][3] mean rest point of the structural subtree */
    int32_t *sub_count;    /* [B] non-excluded bones in the subtree */
    double *reach;         /* [B] summed lengths of the longest path down the subtree */
    double size;           /* SPEC 5 body size of the non-excluded rest joints */
    double height;         /* max - min rest z over them */
    double min_z;
    uint8_t thumbs_named;  /* both rigs of the map name a thumb: limbs do not continue into one
                              (set by the map builder; a name is a hint only where both rigs
                              give it, so a renamed copy matches as it did) */
} ami_skel;

AM_NODISCARD am_status ami_skel_build(const am_rig *rig, ami_skel *sk, am_error *err);
void ami_skel_free(ami_skel *sk);

/* The nearest rotation of each rest frame as a quaternion: r [B][4]. */
void ami_rest_quats(const am_rig *rig, double *r);

/* ---- transfer.c / feet.c: one run of the job ----
 * Every frame is held as world deltas G [T][B][4] (unit quaternions) and bone heads
 * [T][B][3] of both rigs; local rotations are made from them at the end. Heads follow the
 * position parents (ami_skel.ppar): an IK-driven foot hangs from its leg. */
/* am_retarget_opts.align_min_deg's default (docs/retarget.md "Alignment threshold"). */
#define AMI_ALIGN_MIN_DEG 10.0

typedef struct ami_run {
    const am_rig *S, *T;          /* source, target */
    const am_retarget_map *map;
    const am_motion *src;
    am_retarget_opts opts;
    ami_skel ss, st;              /* their analyses */
    size_t frames;
    double fps;
    double *rs, *rt;              /* [B][4] rest rotations as quaternions */
    double *gs, *hs;              /* source deltas [T][Bs][4] and heads [T][Bs][3] */
    double *gt, *ht;              /* target deltas [T][Bt][4] and heads [T][Bt][3] */
    double *tref;                 /* [Bt][4] the target's reference deltas (its retarget pose) */
    double *tref_heads;           /* [Bt][3] the target's heads in that pose (root at its rest) */
    double feet_ref;              /* lowest foot contact of that pose (0 without legs): the target
                                     stands there on its ground, z = 0 */
    double *sfloor;               /* [chain_count] each leg's contact in the source's reference
                                     pose, its height over that pose's lowest foot: the source's
                                     ground is where the root's height is measured from */
    double scale[3];              /* root motion factors (x, y horizontal; z vertical) */
    double leg_source, leg_target;
    uint8_t *slides;              /* [Bt] bones that may get loc (detached feet, sliding sources) */
    double *disp;                 /* [T][Bt][3] world displacement of sliding target bones carried
                                     over from the source's loc, or NULL when none slides */
    am_retarget_report *report;   /* NULL when the caller wants none */
    /* Rest frames that are not orthonormal (SPEC 2.2: within 6 degrees of -Y, to 3e-5): SPEC
     * 2.3's FK through them is not a rotation, so the deltas above (quaternions) are off it by
     * up to 3e-5 of each turn. Where it matters the run follows the exact FK (docs/retarget.md,
     * "Frames that are not orthonormal"). */
    uint8_t *sflag, *tflag;       /* [Bs], [Bt]: the bone or an ancestor below the root has one */
    double *es;                   /* [T][Bs][9] the source's exact world map times its delta's
                                     inverse (identity off sflag), NULL when sflag is all 0 */
} ami_run;

/* Heads of target frame t from its deltas and root head (ht[t][root] set): parents first. */
void ami_target_heads(ami_run *r, size_t t);

/* feet.c: a foot bone's contact is its tail, or its head when the tail points up (a glTF leaf
 * whose tail was guessed along its node). */
bool ami_contact_on_head(const ami_skel *st, int32_t foot);

/* feet.c: contacts and plants of the source, the IK pass on the target (unless NO_IK), and the
 * report's feet figures. */
AM_NODISCARD am_status ami_feet(ami_run *r, am_error *err);

#endif
