/* anymove align: 3D point tracks from any tracker (arbitrary axes, units and origin) put into
 * the world of SPEC 1 (metres, Z up, the creature faces -Y, ground z = 0) by one similarity
 * transform, `anymove align` (Track2Rig's `track2rig-video align`).
 *
 *     const am_tracks *in = NULL;          // e.g. from am_tracks_load
 *     am_error err = {0};
 *     am_align_opts o = {.height = 0.45};  // metres from the top to the ground; 0 = keep scale
 *     am_align_result *r = NULL;
 *     if (am_align_run(in, &o, &r, &err) == AM_OK) {
 *         // r->tracks: the aligned copy; p_world = r->scale * r->rotation * p_in + r->translation
 *     }
 *     am_align_result_free(r);
 *
 * The cues (docs/align.md has the measured accuracy, which is far from perfect for the found up):
 * - up given (opts.up_axis): the tracker's up axis; only the ground's height is read (the
 *   25th percentile over frames of each frame's second-lowest point: runs leave the ground).
 * - up "ground": the lowest points that rest and lift: over a Fibonacci grid of directions, the
 *   floor (the same quantile of each frame's second-lowest point) on which points stay for a
 *   while and which they leave again (feet that plant and lift), refined by least-squares planes
 *   through those contacts; a body that never steps: the plane of the points that move least
 *   over the clip (its planted feet). The contacts must spread over an area. Up points to the body.
 * - up "path": the direction of least variance of the root path (the centroid integrated from
 *   frame-to-frame displacements of the points seen in both frames, so visibility changes do
 *   not jump it), which must span a plane; its sign puts the slower extreme below. "auto":
 *   ground, else path (with a warning).
 * - forward "travel": the mean horizontal velocity of the root (a least-squares line of the
 *   path against time), when the root travels at least half the body size. "axis": of the two
 *   horizontal principal axes of the body (points about their frame's centroid, all frames),
 *   the one whose normal plane is NOT the body's better mirror plane (so wide bodies, spiders
 *   and birds with wings out, still face along their mirror plane); the sign from the gait (feet
 *   move forward while lifted: the correlation of velocity along the axis with height among the
 *   low points, when |r| >= 0.15), else from the body's shape (the higher end of the axis is
 *   the head; a warning says so). "auto": travel, else axis.
 * - scale: 1 unless height (the median over frames of the highest visible point above the
 *   ground) or length (the median over frames of the extent along forward) is given in metres.
 * - origin: on the ground under the centroid of the points seen at frame 0.
 *
 * Bad input (AM_E_EMPTY for no frames, no points or every entry hidden, AM_E_DEGENERATE for a
 * static clip or one without ground contact and without a usable path) names the problem; the
 * caller adds the file (am_error_set_file). Runs in the scope of opts->ctx (stage "align");
 * warnings in the result. Pairs: am_align_run -> am_align_result_free.
 */
#ifndef ANYMOVE_ALIGN_H
#define ANYMOVE_ALIGN_H

#include "core.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_align_up {
    AM_ALIGN_UP_AUTO,   /* ground, else path */
    AM_ALIGN_UP_GROUND, /* the plane of the lowest points that rest and lift (or stand still) */
    AM_ALIGN_UP_PATH,   /* the normal of the plane of the root path */
    AM_ALIGN_UP_GIVEN,  /* opts.up_axis (a result only: set up_axis to use it) */
    AM_ALIGN_UP_COUNT
} am_align_up;

typedef enum am_align_forward {
    AM_ALIGN_FORWARD_AUTO,   /* travel, else axis */
    AM_ALIGN_FORWARD_TRAVEL, /* the root's mean horizontal velocity */
    AM_ALIGN_FORWARD_AXIS,   /* the body's horizontal axis in its mirror plane */
    AM_ALIGN_FORWARD_COUNT
} am_align_forward;

/* Where the sign of forward came from. */
typedef enum am_align_sign {
    AM_ALIGN_SIGN_TRAVEL, /* the direction of travel */
    AM_ALIGN_SIGN_GAIT,   /* lifted feet move forward */
    AM_ALIGN_SIGN_HEIGHT, /* the higher end of the body is its front (a guess; warned) */
    AM_ALIGN_SIGN_COUNT
} am_align_sign;

typedef struct am_align_opts {
    am_align_up up;           /* default AUTO; ignored when up_axis is set */
    double up_axis[3];        /* the input's up direction when it is known (a tracker's axes:
                                 (0, 1, 0) for Y up); zero = find it with `up` */
    am_align_forward forward; /* default AUTO */
    double height;            /* metres, > 0: scale so the body is this tall; 0 = not given */
    double length;            /* metres, > 0: scale so the body is this long along forward;
                                 0 = not given; at most one of height and length */
    uint32_t seed;            /* the phase of the entry sample (the library's one RNG); any value */
    am_context ctx;           /* allocator, limits, progress; zero = inherited (core.h) */
} am_align_opts;

typedef struct am_align_result {
    am_tracks *tracks;        /* the aligned tracks (hidden entries NaN, fps and faces kept) */
    double scale;             /* s: p_world = s R p_in + t */
    double rotation[9];       /* R, row-major, proper */
    double quat[4];           /* R as (w, x, y, z), w >= 0 */
    double translation[3];    /* t, metres */
    double matrix[16];        /* [s R | t] as a row-major 4x4 */
    am_align_up up_from;      /* GROUND, PATH or GIVEN: what set up */
    am_align_forward forward_from; /* TRAVEL or AXIS */
    am_align_sign sign_from;  /* where forward's sign came from */
    double mirror_ratio;      /* AXIS: mirror error of the lateral axis over the other's (< 1;
                                 near 1 = the axis choice was close) */
    double gait_corr;         /* the gait cue's correlation along forward */
    size_t ground_inliers;    /* GROUND: entries on the plane */
    double ground_rms;        /* GROUND: their RMS distance to it, metres after scaling */
    double travel;            /* root travel over the clip, metres after scaling */
    double height, length;    /* the aligned body's height and length, metres (definitions
                                 above) */
    double body_size_in;      /* SPEC 5 body size of the input, input units */
    am_warning_list warnings; /* non-fatal oddities of the call */
} am_align_result;

const char *am_align_up_name(am_align_up up);             /* "auto", "ground", "path" */
const char *am_align_forward_name(am_align_forward f);    /* "auto", "travel", "axis" */
const char *am_align_sign_name(am_align_sign s);          /* "travel", "gait", "height" */
bool am_align_up_from_name(const char *name, am_align_up *out);
bool am_align_forward_from_name(const char *name, am_align_forward *out);

/* Align tracks (not modified). Returns AM_OK with *out, or an error (see above); AM_E_ARG for
 * negative, non-finite or both height and length; AM_E_NOMEM; AM_E_CANCELLED. */
AM_NODISCARD am_status am_align_run(const am_tracks *tracks, const am_align_opts *opts, am_align_result **out,
                                    am_error *err);
void am_align_result_free(am_align_result *r);

/* The transform and cues as JSON (align.json, docs/align.md), written atomically to path; input
 * (may be NULL) is recorded as the source. Runs in the caller's scope. AM_E_WRITE naming path,
 * AM_E_NOMEM. */
AM_NODISCARD am_status am_align_write_json(const am_align_result *r, const char *input, const char *path,
                                           am_error *err);

#ifdef __cplusplus
}
#endif
#endif
