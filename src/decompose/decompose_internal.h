/* Private state of the Track2Rig decomposition (src/decompose/). */
#ifndef AMI_DECOMPOSE_INTERNAL_H
#define AMI_DECOMPOSE_INTERNAL_H

#include <stdbool.h>

#include "anymove/decompose.h"

#define AMI_K 4        /* influences per point (SPEC 4.4) */
#define AMI_MAXB 64    /* hard cap on bones */
#define AMI_MAXC 24    /* candidate bones per point in the weight step */
#define AMI_MAXT 8     /* worker threads */
/* Least-squares polish rounds after the robust alternations (polish.c; docs/track2rig.md) */
#define AMI_POLISH_ROUNDS 10

/* What one more bone costs in --bones auto (auto.c), as a share of the remaining clustering
 * error (log scale): a bone must remove about 4% of what is left. The hard clustering never
 * flattens (it keeps chopping the blend regions at joints: 1-6% per bone between 8 and 16
 * bones on the clips measured), and on the unit test's 4-bone chain that tail is 3.7% per
 * bone: a cost of 0.03 picks 10 there. Between 0.03 and 0.05 the mean final errors of 24
 * synthetic clips and 9 baked models barely move (measurements in docs/track2rig.md). The
 * report of `anymove rig` states it (src/decompose/report.c). */
#define AMI_AUTO_BONE_COST 0.04

struct ami_work;

typedef struct ami_dec {
    size_t T, N, B;          /* frames, points, current bones */
    size_t bcap;             /* bones the buffers are sized for (the clustering's target) */
    const float *obs;        /* [N][T][3] point-major observations; hidden entries filled */
    const uint8_t *vis;      /* [N][T] 1 = visible */
    float *pstar;            /* [N][T][3] pseudo-observations the solvers fit */
    double *rest;            /* [N][3] */
    int32_t *idx;            /* [N][4] bone per slot (slot unused when its weight is 0) */
    double *w;               /* [N][4] */
    double *w_old;           /* [N][4] previous weights (Laplacian target, Jacobi style) */
    int32_t *idx_old;        /* [N][4] */
    double *G;               /* [T][gs][12] rest -> frame transforms, [R | t] */
    size_t gs;               /* bone stride of G: bcap while clustering, then B */
    double *Gt;              /* [ceil(T / 4)][gs][12][4] G in blocks of four frames (ami_quads) */
    double *cn;              /* [N] robust per-track weight */
    double *mres;            /* [N] mean visible residual norm of each track (-1: none) */
    bool f_ready;            /* F and H hold the current weights' sums (fused pass) */
    size_t threads;          /* workers of the per-point pass (>= 1) */
    struct ami_work *work;   /* [threads] */
    double *Fw, *Hw;         /* [threads - 1] extra F and H sums, like F and H */
    int32_t *nb_off, *nb;    /* CSR neighbour graph: nb[nb_off[n] .. nb_off[n+1]) */
    double *sup;             /* [bcap][T] visible points of each bone and frame (clustering) */
    double *F;               /* [bcap][T][12] sum_n c w p* [r;1]^T per bone and frame */
    double *H;               /* [bcap][bcap][16] sum_n c w_j w_k [r;1][r;1]^T */
    /* S, U, C keep the row stride AMI_MAXB (skeleton.c indexes them so) but only rows < bcap
     * are allocated: index (j * AMI_MAXB + k) for j, k < bcap */
    double *S;               /* [bcap][AMI_MAXB][9] sum_t R_j^T R_k */
    double *U;               /* [bcap][AMI_MAXB][3] sum_t R_j^T t_k */
    double *C;               /* [bcap][AMI_MAXB] sum_t t_j . t_k */
    /* method switches */
    bool robust;             /* Huber pseudo-observations + track weights */
    bool em;                 /* hidden entries -> current reconstruction */
    bool rest_update;        /* per-point rest refit */
    bool plain;              /* robust but judged clean: least squares, no Huber clip and every
                                track weight 1 (polish.c) */
    double alpha;            /* Laplacian weight (0 = none) */
    double huber;            /* Huber threshold in median residual norms */
    double body;             /* body size, metres */
    double med_res;          /* current median residual norm over visible entries */
    /* articulated constraint (skeleton refit): NULL = free transforms */
    const int32_t *order;    /* [B] bones top-down */
    const int32_t *par;      /* [B] parent bone or -1 */
    const double *pivot;     /* [B][3] rest head (pivot with the parent) */
    const uint8_t *loc;      /* [B] 1 = the bone has translation channels: unpinned in the
                                refit (NULL = none; the root always translates) */
} ami_dec;

/* ssdr.c */
void ami_dec_stats(ami_dec *d);                       /* S, U, C from G */
void ami_dec_pass_weights(ami_dec *d, bool update_pstar, bool solve_weights, bool update_rest);
void ami_dec_pass_transforms(ami_dec *d, int sweeps);  /* F, H, then Gauss-Seidel */
void ami_dec_pass_articulated(ami_dec *d, int sweeps); /* the same, bones carry their subtree */
/* gain[B]: objective drop translation channels would give each pinned bone (ssdr.c). */
void ami_dec_loc_gain(ami_dec *d, double *gain);
double ami_dec_error_visible(const ami_dec *d, const double *G); /* mean |recon - obs| visible */
/* Robust noise floor from second temporal differences of the visible tracks, metres. */
double ami_dec_noise_floor(const ami_dec *d);
/* Rest positions of points hidden in the reference frame rf, from their own visible frames
 * (after the clustering); returns how many were placed. */
size_t ami_dec_place_hidden(ami_dec *d, size_t rf);
/* The per-thread workspaces of the weight pass: [threads], zeroed; NULL when out of memory. */
struct ami_work *ami_dec_work_alloc(size_t threads);

/* polish.c: on data whose robust median residual is model error (clean), rounds of least-
 * squares weights, rests and transforms after the robust ones; kept (*kept, d->plain set)
 * when the visible error dropped, else the robust state is restored. *pass_done: the data was
 * noisy and the refit's track-weight pass (ami_dec_pass_weights(d, true, false, false)) has
 * already run. *err_vis: ami_dec_error_visible of the state it leaves (measured on the way;
 * -1 when it did not run). */
am_status ami_dec_polish(ami_dec *d, size_t rounds, bool *kept, bool *pass_done, double *err_vis,
                         am_error *err);

/* init.c */
am_status ami_dec_graph(ami_dec *d, const int32_t *faces, size_t face_count, size_t knn,
                        am_error *err);
am_status ami_dec_init(ami_dec *d, size_t bones, size_t max_bones, double noise_pct,
                       double **auto_err, size_t *auto_count, size_t *chosen, am_error *err);

/* auto.c: --bones auto, from the clustering error curve[b - 1] of b = 1..B bones (% of body) */
size_t ami_dec_auto_pick(const double *curve, size_t B, double noise_pct, size_t points);

/* skeleton.c */
/* mode: which bones translate (decompose.h); err_free: the free-bone visible error (%) that
 * AM_RIG_AUTO's tolerance refers to */
am_status ami_dec_skeleton(ami_dec *d, size_t refit_rounds, am_rig_mode mode, double err_free,
                           am_decomposition *out, am_error *err);

#endif
