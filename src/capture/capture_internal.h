/* Private helpers of src/capture: FK with the world axes of every Euler partial (for analytic
 * Jacobians), the two-view projection, the per-frame IK pin, and a small deterministic RNG. */
#ifndef ANYMOVE_CAPTURE_INTERNAL_H
#define ANYMOVE_CAPTURE_INTERNAL_H

#include "anymove/capture.h"
#include "anymove/multiview.h"
#include "anymove/math.h"
#include "anymove/opt.h"
#include "math/math_internal.h"

/* Parameters of one frame: [trans 3][root rotation vector w 3][euler of bone 1..B-1, 3 each].
 * The root rotation is exp(w) * Q0 with a per-frame reference Q0 (re-centred between solves). */
#define AMI_CAP_ROOT_PARAMS 6
static inline size_t ami_cap_block(const am_rig *rig)
{
    return AMI_CAP_ROOT_PARAMS + 3 * (rig->bone_count - 1);
}
static inline size_t ami_cap_euler_col(size_t bone, size_t axis)
{
    return AMI_CAP_ROOT_PARAMS + 3 * (bone - 1) + axis;
}

/* Ancestor chains, precomputed once per rig. */
typedef struct ami_chains {
    size_t joint_count, bone_count;
    int32_t *start;   /* [J+1] offsets into bones */
    int32_t *bones;   /* for joint j: the non-root bones whose rotation moves it, nearest first */
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

/* Left/right joint pairs found by name suffix (_L/_R, .L/.R, l_/r_ not used). */
size_t ami_lr_pairs(const am_rig *rig, int32_t *pairs /* [J][2] */);

/* Pin joint j of one frame at target by adjusting the Euler angles of up to `depth` bones
 * of its chain (within limits, pulled weakly toward their current values). euler [B][3] is
 * updated in place. Returns the remaining distance (m), or NaN when the pin could not run
 * (its workspace did not fit in memory, or the call was cancelled: ami_cancelled()). */
double ami_pin_joint(const am_rig *rig, const ami_chains *ch, size_t j, size_t depth,
                     const double trans[3], const double q[4], double *euler, const double target[3],
                     double *pose_scratch, double *axes_scratch, double *joints_scratch);

/* Fill the NaN entries of one coordinate track v[t * stride], t < T, by linear interpolation in
 * time, holding the ends (triangulate.c). False if no entry is known. */
bool ami_fill_track(double *v, size_t T, size_t stride);

/* mv_refine.c: the whole-clip refinement of a triangulation (AM_TRI_REFINE); cams [C] are the
 * det's cameras in its order. */
am_status ami_tri_refine(const am_mdet *det, const am_camera *const *cams, const am_triangulate_opts *o,
                         am_triangulation *tri, am_error *err);

/* mv_triangulate.c, shared with the camera adjustment (mv_adjust.c): one observation of a point,
 * its px-weighted linear solve, its reprojection errors, and a camera's reading on the common
 * clock. */
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
/* Camera c's reading of joint j at common frame t: det->time_offset shifts its own frame index
 * (linear interpolation between frames). False when it did not see the joint then. */
bool ami_tri_reading(const am_mdet *d, size_t c, size_t t, size_t j, double uv[2], double *conf);
/* Quantile q in [0, 1] of v [n] (sorted in place; numpy's linear interpolation), NaN if empty. */
double ami_tri_quantile(double *v, size_t n, double q);

/* exp map of a rotation vector to a quaternion, and its left Jacobian J_l(w) [9]. */
void ami_rotvec_left_jacobian(const double w[3], double Jl[9]);

/* ---- the solve's working state (one clip) ---- */
typedef struct ami_cap {
    const am_rig *rig;
    am_capture_opts o;          /* resolved */
    am_layout L;
    size_t T, J, B, P;          /* frames, joints, bones, parameters per frame */
    double fps;
    ami_chains ch;
    /* observations in rig joint order: [T][J][2] and [T][J] */
    double *fuv, *suv, *fconf, *sconf;
    /* the state: x [T][P], the root reference q0 [T][4], d [T][3] = log(q0[t+1] q0[t]^-1) */
    double *x, *q0, *d;
    double *lower, *upper;      /* [T][P] */
    double *lever;              /* [B] rest distance from a bone's head to its farthest keypoint */
    /* per-frame FK of the current evaluation: pose [T][B][16], axes [T][B][9], joints [T][J][3] */
    double *pose, *axes, *joints;
    double scale;               /* current Cauchy scale, px */
    int temporal;               /* 1: velocity terms only (half-bandwidth P), 2: + acceleration (2P) */
    am_lsq *ws[3];              /* solver workspaces per temporal mode, kept across stages */
    /* contacts */
    size_t C;
    int32_t *cj;                /* [C] joint index */
    uint8_t *plant;             /* [T][C] */
    double *plant_z;            /* [T][C] height held during a plant */
    bool use_contacts;
    double vg[3];               /* ground velocity, m/s */
    int32_t *pairs;             /* [np][2] left/right joint pairs */
    size_t np;
} ami_cap;

/* sync.c */
void ami_sync_check(ami_cap *c, const am_creature *cr, am_capture_sync *sync);
/* Swap front L/R labels where the swapped pair fits pred [T][J][2] (front view) much better.
 * pred NULL: a temporal median of the front tracks. Returns the pairs x frames swapped. */
size_t ami_swap_repair(ami_cap *c, const double *pred);
/* triangulate.c: triangulation + Kabsch root + analytic IK into c->x / c->q0. */
am_status ami_cap_init(ami_cap *c, am_error *err);
/* fit.c */
void ami_cap_recenter(ami_cap *c);
am_status ami_cap_fit(ami_cap *c, double scale, int temporal, uint32_t iterations, uint32_t *iters_done,
                      am_error *err);
/* FK of every frame of the current state into c->pose/axes/joints. */
void ami_cap_fk_all(ami_cap *c, const double *x, bool with_axes);
void ami_cap_root_quat(const ami_cap *c, const double *x, size_t t, double q[4]);
/* Mean reprojection errors (px) of the current state. */
void ami_cap_reproj(ami_cap *c, double *front, double *front_x, double *side);
/* contacts.c */
/* Plants from the current fit; `grow` is how far (m) from a plant's spot its neighbouring
 * low frames may be and still join it (AMI_GROW_FIT for the fits, AMI_GROW_LOCK for the lock). */
am_status ami_cap_find_contacts(ami_cap *c, double grow, am_error *err);
#define AMI_GROW_FIT 0.02
#define AMI_GROW_LOCK 0.03
/* What the foot lock found and did, in metres: the drift per plant of the fit before the lock
 * and after it, and how far it moved each contact joint over its plant frames. */
typedef struct ami_lock_stats {
    size_t plants;
    double fit_mean, fit_max;     /* drift per plant before the lock */
    double mean, max;             /* after it */
    double *moved_mean, *moved_max; /* [C], caller-owned; 0 where nothing was pinned */
} ami_lock_stats;
/* Pin every plant when lock (else only measure). AM_E_NOMEM / AM_E_CANCELLED. */
am_status ami_cap_foot_lock(ami_cap *c, bool lock, ami_lock_stats *out, am_error *err);

#endif
