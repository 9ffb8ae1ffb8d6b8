/* Private helpers of src/fit: FK with the world axes of every Euler partial (for analytic
 * Jacobians), joint Jacobians, the per-frame IK pin (the foot lock and the exam's plants), and
 * the state of one window of the fit. */
#ifndef ANYMOVE_FIT_INTERNAL_H
#define ANYMOVE_FIT_INTERNAL_H

#include "anymove/fit.h"
#include "anymove/math.h"
#include "anymove/opt.h"
#include "math/math_internal.h"

/* Parameters of one frame: [trans 3][root rotation vector w 3][euler of bone 1..B-1, 3 each].
 * The root rotation is exp(w) * Q0 with a per-frame reference Q0 (re-centred between solves). */
#define AMI_FIT_ROOT_PARAMS 6
static inline size_t ami_fit_block(const am_rig *rig)
{
    return AMI_FIT_ROOT_PARAMS + 3 * (rig->bone_count - 1);
}
static inline size_t ami_fit_euler_col(size_t bone, size_t axis)
{
    return AMI_FIT_ROOT_PARAMS + 3 * (bone - 1) + axis;
}
/* Columns of a joint's Jacobian at most: the root and 64 ancestors. */
#define AMI_FIT_MAX_COLS (AMI_FIT_ROOT_PARAMS + 3 * 64)

/* Ancestor chains, precomputed once per rig. */
typedef struct ami_chains {
    size_t joint_count, bone_count;
    int32_t *start;     /* [J+1] offsets into bones */
    int32_t *bones;     /* for joint j: the non-root bones whose rotation moves it, nearest first */
    int32_t *col_count; /* [J] number of parameter columns: 6 + 3 * chain length */
} ami_chains;

am_status ami_chains_build(const am_rig *rig, ami_chains *ch, am_error *err);
void ami_chains_free(ami_chains *ch);

/* FK of one frame. pose [B][16] world matrices; axes [B][3][3] (may be NULL): world axes of
 * the x, y, z Euler partials of each non-root bone (axes[b*9 + k*3 + i]).
 * q: root rotation (w,x,y,z). euler [B][3] (root entry ignored). joints [J][3] (may be NULL). */
void ami_fk_frame(const am_rig *rig, const double trans[3], const double q[4], const double *euler,
                  double *pose, double *axes, double *joints);

/* Jacobian of joint j's world position with respect to the frame's parameters, over the
 * columns of its chain: cols [6 + 3*len] (block-relative), jac [3][ncols] row-major.
 * w: the root rotation vector (for the exp-map left Jacobian). Returns ncols. */
size_t ami_joint_jacobian(const am_rig *rig, const ami_chains *ch, size_t j, const double *pose,
                          const double *axes, const double *joints, const double trans[3],
                          const double w[3], int32_t *cols, double *jac);

/* Left/right joint pairs found by name suffix (_L/_R, .L/.R). pairs [J][2]. */
size_t ami_lr_pairs(const am_rig *rig, int32_t *pairs);

/* Pin joint j of one frame at target by adjusting the Euler angles of up to `depth` bones
 * of its chain (within limits, pulled weakly toward their current values). euler [B][3] is
 * updated in place. Returns the remaining distance (m), or NaN when the pin could not run
 * (its workspace did not fit in memory, or the call was cancelled: ami_cancelled()). */
double ami_pin_joint(const am_rig *rig, const ami_chains *ch, size_t j, size_t depth,
                     const double trans[3], const double q[4], double *euler, const double target[3],
                     double *pose_scratch, double *axes_scratch, double *joints_scratch);

/* Fill the NaN entries of one coordinate track v[t * stride], t < T, by linear interpolation in
 * time, holding the ends. False if no entry is known. */
bool ami_fill_track(double *v, size_t T, size_t stride);

/* exp map of a rotation vector to a quaternion, and its left Jacobian J_l(w) [9]. */
void ami_rotvec_left_jacobian(const double w[3], double Jl[9]);

/* The solver box of a bone's Euler axis: its limits, or unbounded where the limits span the
 * whole circle (a free angle must not stop at +-pi, where its continuous track crosses). */
void ami_fit_axis_bounds(const am_rig *rig, size_t bone, size_t axis, double *lo, double *hi);

/* ---- one window of the fit (frames [t0, t0 + T) of the clip) ---- */
typedef struct ami_fit {
    const am_rig *rig;
    am_fit_opts o;              /* resolved */
    size_t T, J, B, P;          /* frames, joints, bones, parameters per frame */
    size_t t0;                  /* the window's first frame in the clip */
    size_t fixed;               /* leading frames held where the previous window put them */
    size_t commit;              /* frames [fixed, commit) are this window's result; the rest are
                                   solved again by the next window */
    double fps;
    const ami_chains *ch;
    /* 2D observations on the common clock, clip-wide arrays read at frame t0 + t:
     * uv [C][Tc][J][2], conf [C][Tc][J] (already raised to conf_power: the squared residual's
     * weight); Tc is the clip's frame count */
    size_t C, Tc;
    const am_camera *const *cams;
    const double *v_weight;     /* [C] */
    double *uv, *conf;
    /* 3D observations, clip-wide: pts [Tc][J][3], pw [Tc][J] (0 = missing); point_scale is
     * px-equivalents per metre */
    const double *pts, *pw;
    double point_scale;
    /* the state: x [T][P], the root reference q0 [T][4], d [T][3] = log(q0[t+1] q0[t]^-1) */
    double *x, *q0, *d;
    double *lower, *upper;      /* [T][P] */
    const double *prior;        /* [T][P] angles the prior term pulls to (clip-wide, read at t0),
                                   or NULL: rest (0) */
    const double *lever;        /* [B] rest distance from a bone's head to its farthest keypoint
                                   (the root's: to any keypoint) */
    /* smoothness weights (px per unit of the second or first difference): per bone for the
     * Euler angles (root entry: the root rotation), and the root translation's */
    const double *acc_w, *vel_w;
    double acc_w_trans;
    const double *smooth_t;     /* [Tc][B] the smoothness's multiplier at each frame and bone (the
                                   root's entry: the root's rotation and path; clip-wide, read at
                                   t0), or NULL: 1 everywhere */
    /* per-frame FK of the current evaluation: pose [T][B][16], axes [T][B][9], joints [T][J][3] */
    double *pose, *axes, *joints;
    double scale;               /* current Cauchy scale, px */
    int temporal;               /* 1: velocity terms only (half-bandwidth P), 2: + acceleration (2P) */
    am_lsq *ws[3];              /* solver workspaces per temporal mode */
    /* contacts */
    size_t Cc;
    const int32_t *cj;          /* [Cc] joint index */
    uint8_t *plant;             /* [T][Cc] */
    double *plant_z;            /* [T][Cc] height held during a plant */
    bool use_contacts;
    double vg[3];               /* ground velocity, m/s */
    const int32_t *pairs;       /* [np][2] left/right joint pairs */
    size_t np;
    uint32_t iterations_done;
} ami_fit;

/* fit.c */
void ami_fit_recenter(ami_fit *f);
am_status ami_fit_solve(ami_fit *f, double scale, int temporal, uint32_t iterations, am_error *err);
/* FK of every frame of the window's state into f->pose/axes/joints. */
void ami_fit_fk_all(ami_fit *f, const double *x, bool with_axes);
void ami_fit_root_quat(const ami_fit *f, const double *x, size_t t, double q[4]);
/* Swap 2D left/right labels of every camera where the swapped pair fits much better: against
 * a 9-frame temporal median of the tracks (pred false), or the window's own projection.
 * Returns the pairs x frames swapped; frames [T] (may be NULL) marks the frames where any was. */
size_t ami_fit_swap_repair(ami_fit *f, bool pred, uint8_t *frames);
/* The frames marked in frames [T] (from fixed on) start again from their neighbours: parameters
 * blended linearly between the frame before each run and the one after (root rotation by slerp),
 * or copied from the one that exists. */
void ami_fit_restart_frames(ami_fit *f, const uint8_t *frames);

/* contacts.c */
/* Plants from the current fit; `grow` is how far (m) from a plant's spot its neighbouring
 * low frames may be and still join it (AMI_GROW_FIT for the fits, AMI_GROW_LOCK for the lock). */
am_status ami_fit_find_contacts(ami_fit *f, double grow, am_error *err);
#define AMI_GROW_FIT 0.02
#define AMI_GROW_LOCK 0.03
/* What the foot lock found and did, in metres: the drift per plant of the fit before the lock
 * and after it, and how far it moved each contact joint over its plant frames (sums and
 * counts, so windows add up). */
typedef struct ami_lock_stats {
    size_t plants;
    double fit_sum, fit_max;      /* drift per plant before the lock */
    double sum, max;              /* after it */
    double *moved_sum, *moved_max; /* [Cc], caller-owned */
    size_t *moved_n;              /* [Cc] frames pinned */
} ami_lock_stats;
/* Pin every plant of the window's free frames when lock (else only measure). Plants that start
 * in the fixed frames keep the spot those frames hold. AM_E_NOMEM / AM_E_CANCELLED. */
am_status ami_fit_foot_lock(ami_fit *f, bool lock, ami_lock_stats *out, am_error *err);

/* report.c: the motion.json keys of a fit (reproj_px per camera, points_error_m, contacts,
 * ground_velocity, foot_slide_mm, fit), with time_offsets per camera when offsets != NULL, as
 * JSON object text (am_free). */
am_status ami_fit_extra_json(const am_fit_result *r, const double *offsets, bool offsets_found, char **out,
                             am_error *err);

#endif
