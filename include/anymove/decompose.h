/* anymove decompose (Track2Rig): 3D point tracks -> bones, sparse skin weights, per-frame
 * rigid bone transforms, and an articulated skeleton (rig + motion) that reproduces them.
 *
 * Method (docs/track2rig.md): an SSDR-family linear-blend-skinning decomposition that uses
 * only the visible entries (hidden ones are missing data, filled EM-style by the current
 * model), robust to noise and bad tracks (vector-Huber pseudo-observations per entry, Cauchy
 * weight per track), initialised by rigid-fit clustering of point trajectories with bone
 * splitting, alternating closed-form rigid bone transforms with sparse convex weights
 * (<= 4 per point, >= 0, sum 1) under Laplacian smoothness over the surface (faces) or a
 * k-nearest-neighbour graph, plus a per-point rest-pose update. Then joints where
 * neighbouring bones pivot, a minimum spanning tree, a central root, and a refit in which
 * bones rotate about their joints so that only the root translates.
 * `AM_DECOMPOSE_SSDR` runs the plain baseline (Le & Deng 2012 style SSDR, 30 iterations,
 * hidden entries held from the nearest visible frame, no robustness, no smoothness, rest =
 * first frame) through the same code, so comparisons run side by side.
 *
 * Conventions: SPEC.md 1 (metres, Z up). Transforms are rest -> frame t, row-major 3x4
 * `[R | t]` acting on column vectors. Shapes are given on each field.
 *
 *     am_decompose_opts o = {0};             // ours, --bones auto, 30 iterations
 *     am_decomposition *d = NULL;
 *     if (am_decompose_run(tracks, &o, &d, &err) == AM_OK &&
 *         am_rig_write(d->rig, "rig.json", &err) == AM_OK) {
 *         ...
 *     }
 *     am_decomposition_free(d);
 *
 * Pairs: am_decompose_run -> am_decomposition_free.
 * The job runs in the scope of opts.ctx (core.h): its allocations, its worker threads' and its
 * result's go through that allocator and limits, its stages are reported to the progress
 * callback, and its warnings come back in am_decomposition.warnings.
 */
#ifndef ANYMOVE_DECOMPOSE_H
#define ANYMOVE_DECOMPOSE_H

#include "core.h"
#include "io.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_decompose_method {
    AM_DECOMPOSE_OURS = 0, /* robust, EM on hidden entries, smooth weights, rest refit */
    AM_DECOMPOSE_SSDR,     /* plain 30-iteration SSDR baseline */
    AM_DECOMPOSE_METHOD_COUNT
} am_decompose_method;

/* Which bones of the written rig get translation channels (motion loc, SPEC 2.3): the rest
 * rotate about their joints. The root always translates (motion trans). */
typedef enum am_rig_mode {
    AM_RIG_AUTO = 0,     /* the fewest translating bones whose visible reconstruction is within
                            AM_RIG_AUTO_TOLERANCE x the free-bone error (docs/track2rig.md) */
    AM_RIG_ARTICULATED,  /* none: only the root translates */
    AM_RIG_HIERARCHICAL, /* the spanning tree, every bone translating: the free-bone fit exactly */
    AM_RIG_FREE,         /* Dem Bones style: every bone a child of the root, all translating */
    AM_RIG_MODE_COUNT
} am_rig_mode;

/* AM_RIG_AUTO's target: reconstruction (visible entries) <= this x the free-bone error. */
#define AM_RIG_AUTO_TOLERANCE 1.15

/* Flags (0 = defaults). */
enum {
    AM_DECOMPOSE_NO_SKELETON = 1u << 0 /* stop after the decomposition: rig/motion stay NULL */
};

typedef struct am_decompose_opts {
    am_decompose_method method; /* default AM_DECOMPOSE_OURS */
    size_t bones;               /* bone count; 0 = auto (the criterion in docs/track2rig.md) */
    size_t max_bones;           /* upper bound for auto; default 16 */
    size_t iterations;          /* alternations; default 30 */
    size_t knn;                 /* neighbours of the smoothness graph without faces; default 8 */
    double smooth;              /* Laplacian weight alpha (ours), in units of the noise energy;
                                   default 1.0; negative = 0 */
    double huber;               /* Huber threshold in median residual norms; default 2.5 */
    uint32_t seed;              /* reserved for randomized steps; default 0 */
    uint32_t flags;             /* AM_DECOMPOSE_* */
    am_rig_mode rig_mode;       /* default AM_RIG_AUTO */
    size_t threads;             /* worker threads of the per-point passes; 0 = the online CPUs
                                   (at most 8). Results are deterministic for a given count. */
    am_context ctx;             /* allocator, limits, progress (stages "rig: initialise bones",
                                   "rig: fit bones", "rig: skeleton");
                                   zero = inherited (core.h) */
} am_decompose_opts;

typedef struct am_decomposition {
    size_t frame_count, point_count, bone_count; /* T, N, B */
    double fps;
    float *rest;            /* [N][3] rest positions (world axes) */
    int32_t *bone_index;    /* [N][4] bone of slot k (rig bone order when rig != NULL) */
    float *weight;          /* [N][4] >= 0, each row sums to 1, unused slots 0 */
    double *xform;          /* [T][B][12] skinning transform rest -> frame t, [R | t] row-major;
                               with a rig equal to P(b,t) M_rest(b)^-1 */
    am_rig *rig;            /* articulated skeleton, one rig bone per bone (NULL with NO_SKELETON) */
    am_motion *motion;      /* bound to rig, with joints */
    double body_size;       /* diagonal of the frame-0 box of the visible points, metres */
    double err_visible;     /* mean |recon - observed| over visible entries, % of body_size */
    double err_visible_free;/* the same before the articulated refit (free bone transforms) */
    double err_visible_articulated; /* the same with only the root translating (measured by
                               AM_RIG_AUTO and AM_RIG_ARTICULATED; else -1) */
    am_rig_mode rig_mode;   /* the mode the rig was built with (AM_RIG_AUTO: the articulated
                               tree plus the translating bones it chose) */
    size_t translating_count; /* bones with translation channels (motion loc), the root not counted */
    uint8_t *translating;   /* [B] 1 = rig bone b has translation channels (rig bone order) */
    double noise_floor;     /* robust noise estimate from temporal differences, % of body_size */
    size_t iterations;      /* robust alternations run (the polish not counted) */
    int polish;             /* ours: 1 = the least-squares polish rounds were kept (the data
                               looked clean, docs/track2rig.md), 0 = not (noisy: not run, or
                               undone), -1 = the baseline */
    size_t auto_count;      /* entries of auto_err (0 unless bones was auto) */
    double *auto_err;       /* [auto_count] clustering error (% of body size) for 1..auto_count bones */
    double time_init, time_solve, time_skeleton; /* seconds */
    am_warning_list warnings;  /* non-fatal oddities of the call */
} am_decomposition;

/* Resolve defaults: NULL or zero fields take the documented defaults. */
void am_decompose_opts_defaults(const am_decompose_opts *in, am_decompose_opts *out);

/* Check that the tracks can be decomposed: T >= 2, at least one visible entry in some frame,
 * no NaN/Inf in visible entries, at least as many points with >= 3 visible frames as bones
 * (bones >= 1 when given), not static (some point moves by > 1e-6 of the body size).
 * AM_E_EMPTY / AM_E_NONFINITE / AM_E_VALUE / AM_E_SHAPE / AM_E_DEGENERATE with a message. */
AM_NODISCARD am_status am_decompose_validate(const am_tracks *tracks, const am_decompose_opts *opts,
                                             am_error *err);

/* Decompose and (unless AM_DECOMPOSE_NO_SKELETON) extract the skeleton. Deterministic.
 * Runs in the scope of opts->ctx (its worker threads join it); a progress callback that
 * returns false stops it with AM_E_CANCELLED. *out is owned by the caller
 * (am_decomposition_free). Re-entrant: concurrent calls share nothing. */
AM_NODISCARD am_status am_decompose_run(const am_tracks *tracks, const am_decompose_opts *opts,
                                        am_decomposition **out, am_error *err);
/* am_decompose_run for callers that no longer need the input samples: tracks->points and
 * tracks->visible are freed (and set to NULL) once copied, which lowers peak memory by the
 * size of the input. The other fields (counts, fps, faces) stay. On failure the two arrays
 * may or may not have been freed. */
AM_NODISCARD am_status am_decompose_take(am_tracks *tracks, const am_decompose_opts *opts,
                                         am_decomposition **out, am_error *err);
void am_decomposition_free(am_decomposition *d);

/* report.json of a run (`anymove rig`): method, bone count and how it was chosen (the --bones
 * auto criterion and its error curve), sizes, hidden share, errors (% of body size) and
 * timings. The caller supplies what the run does not know. */
typedef struct am_decompose_report {
    const am_decomposition *result;
    const am_decompose_opts *opts;   /* as passed to the run (NULL = defaults) */
    size_t face_count;               /* faces of the input tracks */
    double hidden_share;             /* hidden entries / all entries of the input */
    double seconds_load, seconds_write, seconds_total;
} am_decompose_report;
/* Atomic; errors name the file. */
AM_NODISCARD am_status am_decompose_report_write(const am_decompose_report *r, const char *path,
                                                 am_error *err);

#ifdef __cplusplus
}
#endif
#endif
