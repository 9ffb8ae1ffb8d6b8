/* anymove mocap: the files real captures arrive in, and the stage files they become.
 *
 * - am_mdet: joints read in N calibrated cameras, SPEC 4.2.1 `det.npz` (uv [C,T,J,2],
 *   conf [C,T,J], cameras [C], names [J], fps, optional time_offset [C]). The two-view file of
 *   SPEC 4.2 loads as the same thing: two orthographic cameras "front" and "side" (camera.h's
 *   am_cameras_from_layout), so every multi-view stage reads both.
 * - am_joints (io.h): 3D joint positions, SPEC 4.2.3 `joints.npz`, what the 3D readers give.
 * - Readers of what trackers and mocap systems write: 2D (one camera per file or folder) from
 *   DeepLabCut CSV, SLEAP analysis HDF5, OpenPose JSON folders and MediaPipe pose landmarks
 *   (protobuf text, JSON, CSV); 3D from TRC, C3D, anipose's 3D CSV and sleap-anipose's
 *   points3d.h5. docs/cameras.md lists every format's conventions and the choices made.
 *
 *     am_mdet *d = NULL;  am_error err = {0};
 *     am_import_opts io = {.fps = 60};
 *     if (am_import_2d("cam0_DLC.csv", AM_TRACK_AUTO, &io, &d, &err) == AM_OK &&
 *         am_mdet_write("det.npz", d, &err) == AM_OK) { ... }
 *     am_mdet_free(d);
 *
 * Pairs: am_mdet_load / am_import_2d / am_mdet_stack / am_mdet_from_two_view -> am_mdet_free;
 * am_import_3d -> am_joints_free (io.h); am_name_map_load -> am_name_map_free.
 * Every reader is safe on untrusted input; every error names the file and the line, byte or
 * dataset. Writers are atomic.
 * Contexts (core.h): the am_import_* readers run in the scope of opts->ctx and their warnings
 * (a frame rate assumed, a row count that disagrees with the header) go to the caller's scope;
 * the other calls run in the caller's scope.
 */
#ifndef ANYMOVE_MOCAP_H
#define ANYMOVE_MOCAP_H

#include "core.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- det.npz for N cameras (SPEC 4.2.1) ---- */
typedef struct am_mdet {
    size_t camera_count, frame_count, joint_count; /* C, T, J */
    float *uv;            /* [C][T][J][2] image pixels; NaN where not seen */
    float *conf;          /* [C][T][J] in [0, 1]; 0 = not seen */
    char **cameras;       /* [C] names matching the calibration */
    char **names;         /* [J] joint names */
    double fps;
    double *time_offset;  /* [C] frames added to camera c's index to reach the common clock, or NULL */
    bool two_view;        /* loaded from a SPEC 4.2 two-view file (cameras "front", "side") */
    am_reals uv_view;     /* a caller's det: uv as a typed view (float32 or float64, read in
                             place), used when uv is NULL; check it with am_mdet_validate */
    am_reals conf_view;   /* likewise conf, used when conf is NULL */
} am_mdet;

/* uv [C][T][J][2] and conf [C][T][J] of a det as typed views, whichever fields hold them (the
 * loaders' float32 arrays or a caller's views). Every reader of a det goes through these. */
static inline am_reals am_mdet_uv(const am_mdet *d)
{
    am_reals own = {d->uv, AM_DTYPE_F32};
    return d->uv ? own : d->uv_view;
}
static inline am_reals am_mdet_conf(const am_mdet *d)
{
    am_reals own = {d->conf, AM_DTYPE_F32};
    return d->conf ? own : d->conf_view;
}

/* An all-NaN / zero-confidence det of the given size (names and cameras unset). More than 2 GiB
 * (C x T x J x 12 bytes and the names), or the scope's max_bytes, is AM_E_LIMIT. */
AM_NODISCARD am_status am_mdet_create(size_t C, size_t T, size_t J, am_mdet **out, am_error *err);
/* Load either layout: uv/conf/cameras (4.2.1) or front_uv/side_uv (4.2), the latter as two
 * orthographic cameras. Checks: shapes agree (each failure names the array), conf in [0, 1]
 * (NaN conf refused), a NaN uv means not seen (its conf becomes 0), fps in [1e-3, 1e4],
 * unique camera and joint names, finite time_offset. */
AM_NODISCARD am_status am_mdet_load(const char *path, am_mdet **out, am_error *err);
/* A det a caller built over its own arrays (uv_view / conf_view, or uv / conf), checked as
 * am_mdet_load checks a file: C, T, J > 0 (AM_E_EMPTY), camera and joint names present and
 * distinct (AM_E_NAME), fps in [1e-3, 1e4], finite time_offset, conf in [0, 1] (NaN refused,
 * AM_E_VALUE), no infinite uv (AM_E_NONFINITE). The arrays are not changed: a NaN pixel or a
 * zero confidence is "not seen" for every reader, as the loader's normalization makes it.
 * A missing array (both the pointer and the view's data NULL) fails an assert. */
AM_NODISCARD am_status am_mdet_validate(const am_mdet *d, am_error *err);
/* Write the 4.2.1 layout (also for a two-view det). */
AM_NODISCARD am_status am_mdet_write(const char *path, const am_mdet *d, am_error *err);
/* The two-view det as two cameras. */
AM_NODISCARD am_status am_mdet_from_two_view(const am_det *det, am_mdet **out, am_error *err);
/* Stack one-camera dets (each C = 1, e.g. from am_import_2d) into one, camera names given.
 * Joint names must be the same set in every part (reordered to the first's); frame counts must
 * agree (AM_E_SHAPE naming both sources), fps too (AM_E_VALUE). */
AM_NODISCARD am_status am_mdet_stack(const am_mdet *const *parts, const char *const *sources, size_t n,
                                     const char *const *camera_names, am_mdet **out, am_error *err);
/* Index of a camera or joint by name, or -1. */
int am_mdet_find_camera(const am_mdet *d, const char *name);
int am_mdet_find_joint(const am_mdet *d, const char *name);
/* Camera c's reading of joint j at frame t of the common clock (time_offset applied; between
 * two frames linearly interpolated when both are seen, else the nearer one if seen): false when
 * it saw nothing there (outside its frames, confidence 0 or a NaN pixel). */
bool am_mdet_reading(const am_mdet *d, size_t c, size_t t, size_t j, double uv[2], double *conf);
void am_mdet_free(am_mdet *d);

/* ---- TRC (OpenSim markers): written by triangulate, read by import ---- */
/* Write joints as a TRC in metres with OpenSim's axes (Y up: X_trc = -Y, Y_trc = Z, Z_trc = -X of
 * SPEC 1's world), NaN for missing. Atomic. */
AM_NODISCARD am_status am_trc_write(const char *path, const am_joints *j, am_error *err);

/* ---- joint angles (am_motion_joint_angles of rig.h), for researchers ---- */
/* angles.csv: frame,time_s,bone,flexion_deg,abduction_deg,rotation_deg,euler_x_deg,euler_y_deg,
 * euler_z_deg; one row per frame and bone (the root's: its world rotation in its rest frame).
 * A bone name holding a comma, quote or newline is AM_E_VALUE. Atomic. */
AM_NODISCARD am_status am_angles_csv_write(const char *path, const am_rig *rig, const am_motion *mo, am_error *err);
/* OpenSim .mot (storage format, inDegrees=yes): time, then <bone>_flexion / _abduction /
 * _rotation per bone, then the root's translation <root>_tx / _ty / _tz in metres on OpenSim's
 * axes. A bone name holding white space is AM_E_VALUE. Atomic. */
AM_NODISCARD am_status am_angles_mot_write(const char *path, const am_rig *rig, const am_motion *mo, am_error *err);

/* ---- keypoint skeletons (the edges a tracker draws between keypoints) ---- */
typedef struct am_skeleton {
    size_t edge_count;
    char **a, **b;        /* [E] the two joint names of each edge */
} am_skeleton;
/* "A-B,B-C,...": joint names joined by '-' (a name holding '-' or ',' cannot be given so). */
AM_NODISCARD am_status am_skeleton_parse(const char *spec, am_skeleton **out, am_error *err);
/* The skeleton a tracker's project carries: a DeepLabCut config.yaml ("skeleton:" list of
 * [a, b] pairs) or a SLEAP analysis HDF5 (edge_inds into node_names). An empty skeleton is
 * AM_E_EMPTY naming the file. */
AM_NODISCARD am_status am_skeleton_load(const char *path, am_skeleton **out, am_error *err);
void am_skeleton_free(am_skeleton *sk);

/* ---- name maps (--names): {"tracker name": "rig name" | null, ...} ---- */
typedef struct am_name_map {
    size_t count;
    char **from;          /* [count] */
    char **to;            /* [count]; NULL = drop that joint */
} am_name_map;
/* A JSON object of strings (or null), either flat or under a "names" key. */
AM_NODISCARD am_status am_name_map_load(const char *path, am_name_map **out, am_error *err);
void am_name_map_free(am_name_map *m);
/* Rename (and drop) joints in place. Names the map does not mention are kept; two joints that
 * end with one name are AM_E_DUPLICATE; dropping every joint is AM_E_EMPTY. A map entry that
 * matches nothing is a warning. */
AM_NODISCARD am_status am_mdet_rename(am_mdet *d, const am_name_map *m, am_error *err);
AM_NODISCARD am_status am_joints_rename(am_joints *j, const am_name_map *m, am_error *err);

/* ---- trackers' files ---- */
typedef enum am_track_format {
    AM_TRACK_AUTO,          /* guess from the name and the first bytes */
    AM_TRACK_DLC_CSV,       /* DeepLabCut analysis or labeled-data CSV (2D) */
    AM_TRACK_SLEAP_H5,      /* SLEAP analysis HDF5 (2D) */
    AM_TRACK_OPENPOSE,      /* OpenPose *_keypoints.json: a folder (one file a frame) or one file (2D) */
    AM_TRACK_MEDIAPIPE,     /* MediaPipe pose landmarks: .pbtxt/.prototxt, .json, .csv, or a folder (2D) */
    AM_TRACK_TRC,           /* OpenSim TRC (3D) */
    AM_TRACK_C3D,           /* C3D points (3D) */
    AM_TRACK_ANIPOSE_CSV,   /* anipose pose-3d CSV: <joint>_x/_y/_z/_error/_score... (3D) */
    AM_TRACK_POINTS3D_H5,   /* sleap-anipose points3d.h5 (3D) */
    AM_TRACK_FORMAT_COUNT
} am_track_format;

const char *am_track_format_name(am_track_format f);
bool am_track_format_is_3d(am_track_format f);
/* The format of a file or folder by its name and first bytes (AM_TRACK_AUTO if unknown). */
am_track_format am_track_format_guess(const char *path);

typedef struct am_import_opts {
    const char *individual; /* DLC multi-animal: the individual; NULL = the best-tracked one */
    long track;             /* SLEAP / points3d.h5: track index + 1; 0 = the most occupied track */
    long person;            /* OpenPose: index + 1 in people[]; 0 = per frame the person with the
                               highest mean confidence */
    double width, height;   /* MediaPipe: image size in px for its normalised x, y (required) */
    double fps;             /* frames per second when the file has none; 0 = 30 with a warning,
                               else it must pass am_fps_valid (AM_E_ARG) */
    double scale;           /* 3D: metres per file unit; 0 = the file's own units (TRC/C3D
                               "mm"/"cm"/"m"), else 1 */
    const char *skeleton;   /* OpenPose: "body25b" names 25 keypoints as BODY_25B; NULL = by count */
    char up;                /* 3D axes of the file: 'y' (OpenSim: X forward, Y up) or 'z' (SPEC 1);
                               0 = the format's default (TRC 'y', others 'z') */
    am_context ctx;         /* allocator, limits; zero = inherited (core.h) */
} am_import_opts;

/* Bounds: a file (a folder's files together) of at most 1 GiB; what a reader buffers and builds
 * for its frames within 2 GiB, checked before each buffer grows (a short text row can stand for
 * thousands of missing points); an HDF5 dataset within 512 MiB decoded, from its declared
 * dimensions; each the calling scope's max_bytes when smaller: AM_E_LIMIT naming the file.
 * Frame rates read from files (TRC, C3D) must pass am_fps_valid (AM_E_VALUE). */
/* A 2D file or folder as a one-camera det (camera named after the file). */
AM_NODISCARD am_status am_import_2d(const char *path, am_track_format fmt, const am_import_opts *opts,
                                    am_mdet **out, am_error *err);
/* One file held in memory (no folders; OpenPose = one frame's JSON). source names it. */
AM_NODISCARD am_status am_import_2d_mem(const void *buf, size_t len, const char *source, am_track_format fmt,
                                        const am_import_opts *opts, am_mdet **out, am_error *err);
/* A 3D file as joints. */
AM_NODISCARD am_status am_import_3d(const char *path, am_track_format fmt, const am_import_opts *opts,
                                    am_joints **out, am_error *err);
AM_NODISCARD am_status am_import_3d_mem(const void *buf, size_t len, const char *source, am_track_format fmt,
                                        const am_import_opts *opts, am_joints **out, am_error *err);

#ifdef __cplusplus
}
#endif
#endif
