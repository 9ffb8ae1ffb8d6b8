/* anymove synth: procedural creatures for Track2Rig tests and benchmarks, and the tracker
 * degradations real 3D point trackers produce.
 *
 * A creature is a skeleton of capsule-shaped bones (plans: quadruped = a mustelid, snake,
 * arthropod = a spider, bird = a pelican-like wader, biped, chimera = a bird's body on spider
 * legs), surface points sampled on the capsules, smooth linear-blend skin weights (top 4 by
 * distance falloff), and an idle or walk motion (gait-like phase offsets). The clean point
 * trajectories are then degraded: Gaussian noise, moving occlusion patches, random dropout
 * bursts and tracks lost for the rest of the clip (hidden entries are NaN, visible = 0).
 *
 *     am_synth_opts o = {.plan = AM_SYNTH_SNAKE, .motion = AM_SYNTH_WALK, .seed = 7};
 *     am_synth_clip *c = NULL;
 *     if (am_synth_tracks(&o, &c, &err) != AM_OK ||
 *         am_synth_write(c, "snake.tracks.npz", "snake.truth.npz", &err) != AM_OK) { ... }
 *     am_synth_clip_free(c);
 *
 * Deterministic for a given opts (own PRNG, no global state). World axes of SPEC 1.
 * am_synth_tracks and am_bake_gltf run in the scope of their opts' context (core.h) and return
 * warnings in the clip; am_synth_degrade and am_synth_write run in the caller's scope.
 * Pairs: am_synth_tracks / am_bake_gltf -> am_synth_clip_free.
 */
#ifndef ANYMOVE_SYNTH_H
#define ANYMOVE_SYNTH_H

#include "core.h"
#include "gltf.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_synth_plan {
    AM_SYNTH_QUADRUPED,
    AM_SYNTH_SNAKE,
    AM_SYNTH_ARTHROPOD,
    AM_SYNTH_BIRD,
    AM_SYNTH_BIPED,
    AM_SYNTH_CHIMERA,
    AM_SYNTH_PLAN_COUNT
} am_synth_plan;

typedef enum am_synth_motion {
    AM_SYNTH_IDLE,
    AM_SYNTH_WALK,
    AM_SYNTH_MOTION_COUNT
} am_synth_motion;

typedef struct am_synth_opts {
    am_synth_plan plan;      /* default quadruped */
    am_synth_motion motion;  /* default idle */
    uint32_t seed;           /* proportions, phases, sampling and degradations */
    size_t frames;           /* T; default 120 */
    double fps;              /* 0 = 30, else it must pass am_fps_valid */
    size_t points;           /* N surface points; default 2000 */
    double noise;            /* Gaussian sigma per axis, fraction of body size; default 0.003;
                                negative = 0 */
    double hidden;           /* target share of hidden entries in [0, 0.9]; default 0.15;
                                negative = 0 */
    am_context ctx;          /* allocator, limits, progress (stages "synth: pose frames",
                                "synth: degrade"); zero = inherited (core.h) */
} am_synth_opts;

typedef struct am_synth_clip {
    am_tracks *tracks;       /* degraded tracks (SPEC 4.1) */
    float *truth;            /* [T][N][3] clean points */
    size_t joint_count;      /* J */
    float *joints;           /* [T][J][3] true joints (bone heads and leaf tails) */
    int32_t *parents;        /* [J] parent joint, -1 for the root */
    char **joint_names;      /* [J] */
    size_t bone_count;       /* true number of rigid bones (the skinning influences) */
    double body_size;        /* frame-0 box diagonal of the clean points, metres */
    double hidden_share;     /* achieved share of hidden entries */
    am_warning_list warnings;/* non-fatal oddities of the call */
} am_synth_clip;

/* Parse "quadruped", "snake", ... / "idle", "walk". Return false if unknown. */
bool am_synth_plan_from_name(const char *name, am_synth_plan *out);
bool am_synth_motion_from_name(const char *name, am_synth_motion *out);
const char *am_synth_plan_name(am_synth_plan plan);
const char *am_synth_motion_name(am_synth_motion motion);

AM_NODISCARD am_status am_synth_tracks(const am_synth_opts *opts, am_synth_clip **out, am_error *err);
/* Degrade clean points in place (used by synth and by `bake --noise/--hidden`): tracks->points
 * [T][N][3] must hold the clean points; visible is (re)filled. body: size for noise scaling. */
AM_NODISCARD am_status am_synth_degrade(am_tracks *tracks, double body, double noise, double hidden,
                                        uint32_t seed, double *hidden_share, am_error *err);
/* Write tracks.npz (points, visible, fps) and truth.npz (points clean, joints, parents,
 * bones, fps, body_size, visible: the input's mask). Either path may be NULL. Atomic. */
AM_NODISCARD am_status am_synth_write(const am_synth_clip *clip, const char *tracks_path,
                                      const char *truth_path, am_error *err);
void am_synth_clip_free(am_synth_clip *clip);
/* Multiply the tracks, clean points, joints and body size by s > 0 (units: --scale). The
 * noise, a share of the body size, scales with them. */
void am_synth_clip_scale(am_synth_clip *clip, double s);

/* ---- bake: an animated glTF as tracks + truth (`anymove bake`) ---- */
typedef struct am_bake_opts {
    const char *clip;        /* animation name or index (am_gltf_find_clip); NULL = the first */
    double fps;              /* sampling rate; 0 = 30, else it must pass am_fps_valid */
    double noise, hidden;    /* optional degradation as in am_synth_degrade (0 = none) */
    uint32_t seed;           /* degradation seed */
    am_context ctx;          /* allocator, limits, progress (stage "bake: sample frames");
                                zero = inherited (core.h) */
} am_bake_opts;

/* Every vertex of every mesh primitive (triangles or points), skinned by the first skin (meshes
 * on other skins or none move with their node) plus morph targets, at t = t_min + i / fps,
 * converted to SPEC 1 world axes; triangles become `faces`. Truth joints: the first skin's
 * joints that carry weight (helpers left out), parented to the nearest deforming ancestor;
 * bone_count = their number (0 for morph-only models). The clip's duration x fps x (vertices
 * and joints, ~50 bytes a vertex a frame) is budgeted (1 GiB, or the scope's max_bytes) before
 * anything is sampled: AM_E_LIMIT naming the document. */
AM_NODISCARD am_status am_bake_gltf(const am_gltf *doc, const am_bake_opts *opts, am_synth_clip **out,
                                    am_error *err);

/* ---- synthetic gaits with known phase offsets (the truth of pack's locomotion.json) ---- */
typedef struct am_synth_gait_opts {
    double offsets[4];  /* touchdown phases of the left fore, right fore, left hind, right hind
                           feet in cycles (am_synth_gait_offsets fills a named gait's) */
    double period_s;    /* one cycle; default 1 */
    double speed_mps;   /* forward (-Y) travel; default 0.6 body sizes per cycle */
    double swing_rad;   /* hip swing amplitude; default 0.35 */
    size_t frames;      /* default 61 */
    double fps;         /* default 30 */
} am_synth_gait_opts;

/* The offsets of "walk", "trot", "pace", "canter", "gallop" or "hop"; false if unknown. */
bool am_synth_gait_offsets(const char *gait, double offsets[4]);
/* A motion of rig (four feet: its lowest leaf bones; fore and hind by y, left by x): each leg
 * swings at its hip by swing_rad cos(2 pi (t / period - offset)), the knee bending in the swing,
 * the root travelling at speed. AM_E_VALUE when the rig does not have 4 feet. Runs in the
 * caller's scope. */
AM_NODISCARD am_status am_synth_gait(const am_rig *rig, const am_synth_gait_opts *opts, am_motion **out,
                                     am_error *err);

#ifdef __cplusplus
}
#endif
#endif
