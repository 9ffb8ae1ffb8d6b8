/* anymove I/O: every file format but glTF and BVH (gltf.h, bvh.h): .npy/.npz arrays (numpy's
 * format inside a zip, via libzip), the shape-checked stage files tracks.npz, det.npz and
 * joints.npz, and rig.json, motion.json and creature.json (SPEC.md sections 2-4).
 *
 * Arrays are loaded into native (little-endian host) C order whatever the file held:
 * big-endian data is byte-swapped and Fortran order transposed. Object (pickled) arrays are
 * refused. Strings (numpy '<U') are decoded to UTF-8.
 *
 *     am_npz *z = NULL;  am_error err = {0};
 *     if (am_npz_load("tracks.npz", NULL, &z, &err) == AM_OK) {
 *         const am_array *pts = am_npz_find(z, "points");   // NULL when absent
 *         if (pts && pts->dtype == AM_DTYPE_F32) { ... }
 *     }
 *     am_npz_free(z);
 *
 * Pairs: am_npz_load/am_npz_read_mem -> am_npz_free; am_tracks_load -> am_tracks_free;
 * am_det_load -> am_det_free; am_joints_create/am_joints_load/am_joints_read_mem ->
 * am_joints_free; am_bone_map_parse/am_bone_map_load -> am_bone_map_free. Writers are atomic
 * (temporary name, then rename).
 * All readers are safe on untrusted input: every malformed file gives a status, never a crash.
 *
 * Contexts (core.h): am_npy_parse, am_npz_read_mem and am_npz_load run in the scope of
 * opts->ctx. The loaders and writers without options (am_tracks_*, am_det_*, am_rig_*,
 * am_motion_*, am_creature_*, am_bone_map_*, am_npz_write) run in the caller's scope: wrap them in an
 * am_scope to give them an allocator, limits or a place for their warnings.
 */
#ifndef ANYMOVE_IO_H
#define ANYMOVE_IO_H

#include "core.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* am_dtype: core.h (am_reals, a typed view of a caller's reals, uses it too). */

#define AM_MAX_DIMS 8

typedef struct am_array {
    char *name;                  /* key in the npz, without ".npy" */
    am_dtype dtype;
    int ndim;                    /* 0 for a scalar */
    size_t shape[AM_MAX_DIMS];
    size_t count;                /* product of shape (1 for a scalar) */
    void *data;                  /* count elements, C order, native endianness; NULL for STR */
    char **strings;              /* [count] UTF-8 strings for AM_DTYPE_STR, else NULL */
    size_t str_chars;            /* for STR: the <U width in characters */
    bool was_fortran;            /* the file stored it in Fortran order (now transposed) */
    bool was_big_endian;         /* the file stored it big-endian (now swapped) */
} am_array;

typedef struct am_npz {
    size_t count;
    am_array *arrays;            /* [count] in archive order */
    am_warning_list warnings;    /* non-fatal oddities of the load */
} am_npz;

typedef struct am_npz_opts {
    uint64_t max_bytes;          /* budget, checked from the headers before anything is decoded
                                    or inflated (AM_E_LIMIT): am_npy_parse, one array's decoded
                                    size, 0 = 4 GiB; am_npz_*, every member's inflated bytes
                                    plus what decoding them allocates, 0 = 2 GiB. Numbers cost
                                    their bytes; a '<U<n>' element costs a pointer, one
                                    allocation (~64 bytes) and up to 4n + 1 bytes. The calling
                                    scope's am_context.max_bytes applies when smaller. */
    am_context ctx;              /* allocator, limits; zero = inherited (core.h) */
} am_npz_opts;

const char *am_dtype_name(am_dtype dt); /* "float32", ... */
size_t am_dtype_size(am_dtype dt);      /* bytes per element; 0 for STR */

/* Parse one .npy buffer into *arr (arr is overwritten; free with am_array_clear). */
AM_NODISCARD am_status am_npy_parse(const void *buf, size_t len, const am_npz_opts *opts,
                                    am_array *arr, am_error *err);
/* Serialize an array to .npy bytes (version 1.0 header, little-endian, C order). Everything
 * am_npy_parse accepts serializes and parses back equal (strings keep their '<U' width, '<U0'
 * included). */
AM_NODISCARD am_status am_npy_serialize(const am_array *arr, am_buf *out, am_error *err);
void am_array_clear(am_array *arr);

/* A member holding more than its npy header promises (beyond 4 KiB of padding) is refused
 * AM_E_FORMAT without inflating the rest; one holding less, AM_E_SHAPE. */
AM_NODISCARD am_status am_npz_read_mem(const void *buf, size_t len, const char *source,
                                       const am_npz_opts *opts, am_npz **out, am_error *err);
AM_NODISCARD am_status am_npz_load(const char *path, const am_npz_opts *opts, am_npz **out,
                                   am_error *err);
/* Write arrays (compress: deflate, else stored). Atomic. */
AM_NODISCARD am_status am_npz_write(const char *path, const am_array *arrays, size_t count,
                                    bool compress, am_error *err);
const am_array *am_npz_find(const am_npz *z, const char *name);
void am_npz_free(am_npz *z);

/* Convert any numeric/bool array to doubles / floats (out has arr->count elements).
 * Returns AM_E_DTYPE for strings. */
AM_NODISCARD am_status am_array_to_f64(const am_array *arr, double *out, am_error *err);
AM_NODISCARD am_status am_array_to_f32(const am_array *arr, float *out, am_error *err);
/* Scalar (or one-element array) as double. */
AM_NODISCARD am_status am_array_scalar(const am_array *arr, double *out, am_error *err);

/* Build arrays for writing (borrowing data; name and shape copied by the writer). */
am_array am_array_view(const char *name, am_dtype dtype, int ndim, const size_t *shape,
                       const void *data);

/* ---- tracks.npz (SPEC 4.1) ---- */
typedef struct am_tracks {
    size_t frame_count, point_count, face_count;   /* T, N, F */
    float *points;       /* [T][N][3]; hidden entries may be NaN */
    uint8_t *visible;    /* [T][N] 1 = visible */
    int32_t *faces;      /* [F][3] or NULL */
    double fps;          /* default 30 */
} am_tracks;
/* Shape-checked from the members' headers before any is inflated: points [T,N,3] float,
 * visible [T,N] bool/uint8 (optional), faces [F,3] int with indices < N, fps a scalar passing
 * am_fps_valid. Visible entries must be finite (AM_E_NONFINITE names frame and point). Hidden
 * entries are set to NaN. */
AM_NODISCARD am_status am_tracks_load(const char *path, am_tracks **out, am_error *err);
AM_NODISCARD am_status am_tracks_write(const char *path, const am_tracks *tr, am_error *err);
void am_tracks_free(am_tracks *tr);
/* Multiply every point by s > 0 (units: --scale; hidden NaN entries stay NaN). */
void am_tracks_scale(am_tracks *tr, double s);

/* ---- det.npz (SPEC 4.2) ---- */
typedef struct am_det {
    size_t frame_count, joint_count;   /* T, J */
    float *front_uv, *side_uv;         /* [T][J][2] canvas pixels */
    float *front_conf, *side_conf;     /* [T][J] in [0,1] */
    double fps;
    char **names;                      /* [J] */
    bool has_calib;
    double calib[6];                   /* [2][3] */
    am_reals uv_view[2];               /* a caller's det: front (0) and side (1) uv [T][J][2] as
                                          typed views (float32 or float64, read in place), used
                                          where front_uv / side_uv is NULL; check with
                                          am_det_validate */
    am_reals conf_view[2];             /* likewise front_conf / side_conf [T][J] */
} am_det;

/* View v's (0 front, 1 side) uv [T][J][2] and conf [T][J] as typed views, whichever fields
 * hold them (the loader's float32 arrays or a caller's views). am_capture_solve,
 * am_mdet_from_two_view and the report read a det through these; am_det_write and the
 * overlay / showcase renderers take a det with its float arrays (a loaded or generated one). */
static inline am_reals am_det_uv(const am_det *d, int v)
{
    am_reals own;
    own.data = v == 0 ? d->front_uv : d->side_uv;
    own.dtype = AM_DTYPE_F32;
    return own.data ? own : d->uv_view[v];
}
static inline am_reals am_det_conf(const am_det *d, int v)
{
    am_reals own;
    own.data = v == 0 ? d->front_conf : d->side_conf;
    own.dtype = AM_DTYPE_F32;
    return own.data ? own : d->conf_view[v];
}

/* Shape-checked from the headers before any member is inflated: all four arrays agree on T and
 * J, names has J entries; then fps passes am_fps_valid (checked first), confidences in [0,1],
 * no NaN where confidence > 0. */
AM_NODISCARD am_status am_det_load(const char *path, am_det **out, am_error *err);
/* A det a caller built over its own arrays (the views, or the float arrays), checked as
 * am_det_load checks a file: T, J > 0 (AM_E_EMPTY), joint names present and distinct
 * (AM_E_NAME, AM_E_DUPLICATE), fps passing am_fps_valid (AM_E_VALUE), confidences in [0, 1]
 * (AM_E_VALUE) and no non-finite pixel where the confidence is > 0 (AM_E_NONFINITE), with the
 * loader's messages. The arrays are not changed. A missing array fails an assert. */
AM_NODISCARD am_status am_det_validate(const am_det *det, am_error *err);
AM_NODISCARD am_status am_det_write(const char *path, const am_det *det, am_error *err);
void am_det_free(am_det *det);

/* ---- joints.npz (SPEC 4.2.3) ---- */
typedef struct am_joints {
    size_t frame_count, joint_count;   /* T, J */
    double *joints;                    /* [T][J][3] metres, world axes; NaN x 3 = missing */
    char **names;                      /* [J] unique, non-empty */
    double fps;                        /* am_fps_valid (rig.h) */
    double *conf;                      /* [T][J] in [0,1] (NaN where missing), or NULL */
} am_joints;
/* T x J joints, every one missing (NaN), fps 30, names unset (NULL entries to fill with
 * am_alloc'd strings), conf all 0 when with_conf, else NULL. T or J 0 -> AM_E_EMPTY; more than
 * 2 GiB (T x J x 24 bytes, 32 with conf, and the names), or the scope's max_bytes, AM_E_LIMIT. */
AM_NODISCARD am_status am_joints_create(size_t frame_count, size_t joint_count, bool with_conf,
                                        am_joints **out, am_error *err);
/* Shape-checked: joints [T,J,3] float with T, J >= 1 (AM_E_EMPTY), names [J] strings (empty
 * -> AM_E_VALUE, repeated -> AM_E_DUPLICATE), fps scalar in [AM_FPS_MIN, AM_FPS_MAX] (AM_E_VALUE), conf
 * [T,J] optional. A joint is missing when all three coordinates are NaN; anything else
 * non-finite is AM_E_NONFINITE naming frame and joint. Errors name the file and the array.
 * Safe on untrusted input. */
AM_NODISCARD am_status am_joints_load(const char *path, am_joints **out, am_error *err);
AM_NODISCARD am_status am_joints_read_mem(const void *buf, size_t len, const char *source,
                                          am_joints **out, am_error *err);
/* float64 joints and conf, deflated. Refuses what the loader would (fps, half-NaN or infinite
 * points: AM_E_VALUE, AM_E_NONFINITE). Atomic. */
AM_NODISCARD am_status am_joints_write(const char *path, const am_joints *jt, am_error *err);
/* The positions in a rig's joint order: pos [T][rig joints][3] (0 for joints the file lacks,
 * NaN where the file says missing), given [rig joints] 1 for joints the file has. A name that
 * is no joint of the rig -> AM_E_NAME. jt may be a view (e.g. of a motion's joints). */
AM_NODISCARD am_status am_joints_bind(const am_joints *jt, const am_rig *rig, double *pos,
                                      uint8_t *given, am_error *err);
void am_joints_free(am_joints *jt);

/* ---- triangle meshes: Wavefront OBJ (and the meshes of a glTF, gltf.h) ---- */
typedef struct am_mesh {
    size_t vertex_count, triangle_count;  /* V, F */
    float *positions;                      /* [V][3] metres, world axes (SPEC 1) */
    int32_t *triangles;                    /* [F][3] vertex indices */
} am_mesh;
void am_mesh_free(am_mesh *m);

typedef struct am_obj_opts {
    bool z_up;      /* the file is Z up, front -Y (our world); default: Y up with the front
                       facing +Z (Blender's and most tools' OBJ export, glTF's frame) */
    double scale;   /* metres per file unit; 0 = 1 */
} am_obj_opts;
/* `v` and `f` lines (polygons fan-triangulated, v/vt/vn corners, negative indices); every other
 * statement is skipped. AM_E_SYNTAX / AM_E_VALUE (an index that names no vertex) /
 * AM_E_NONFINITE with line and column; AM_E_EMPTY without vertices. opts may be NULL. Safe on
 * untrusted input. Runs in the caller's scope. */
AM_NODISCARD am_status am_obj_read_mem(const char *text, size_t len, const char *source,
                                       const am_obj_opts *opts, am_mesh **out, am_error *err);
AM_NODISCARD am_status am_obj_load(const char *path, const am_obj_opts *opts, am_mesh **out,
                                   am_error *err);
/* Write `v` and `f` lines in the axes and units of opts (the reader's inverse). Atomic. */
AM_NODISCARD am_status am_obj_write(const am_mesh *mesh, const am_obj_opts *opts, const char *path,
                                    am_error *err);

/* ---- Wavefront MTL materials (the `mtllib` of an OBJ; gltf.h turns them into glTF's) ----
 * newmtl, Kd, d, Tr, Ke, Ns, Pr, Pm and map_Kd are read; every other statement is skipped, as
 * Blender's importer skips what it does not know. Texture maps other than map_Kd (map_d,
 * map_Bump, norm...) are skipped with an AM_WARN_UNSUPPORTED warning (docs/decisions.md). */
typedef struct am_mtl_material {
    char *name;          /* newmtl's name (the rest of the line) */
    double kd[3];        /* Kd: diffuse colour in [0, 1] (clamped); default 0.8 (Blender's) */
    double alpha;        /* d, or 1 - Tr (the later statement wins), in [0, 1]; default 1 */
    double ke[3];        /* Ke: emission, >= 0 (clamped); default 0 */
    double ns;           /* Ns: specular exponent in [0, 1000] (clamped); -1 = not given */
    double pr, pm;       /* Pr, Pm (the PBR extension): roughness, metallic in [0, 1]; -1 = not given */
    char *map_kd;        /* map_Kd's file name as written (its options dropped), or NULL */
    char *texture;       /* the map_Kd file that was found (a path this process opens), or NULL;
                            set by am_obj_model_load, never by the MTL reader */
} am_mtl_material;

typedef struct am_mtl {
    size_t count;
    am_mtl_material *materials;  /* [count] in file order; a repeated name is skipped (warning) */
    am_warning_list warnings;
} am_mtl;
/* AM_E_SYNTAX (a statement without its name or numbers, a bad number) and AM_E_NONFINITE with
 * the 1-based line and column. An empty file is no error (no materials). Safe on untrusted
 * input. Runs in the caller's scope; warnings in the result. Pair: am_mtl_free. */
AM_NODISCARD am_status am_mtl_read_mem(const char *text, size_t len, const char *source, am_mtl **out,
                                       am_error *err);
AM_NODISCARD am_status am_mtl_load(const char *path, am_mtl **out, am_error *err);
void am_mtl_free(am_mtl *mtl);
/* Write newmtl blocks (Kd, d, Ke, Ns, Pr, Pm as given, map_Kd). A material with a found texture
 * names it by a path relative to texture_dir (the folder the .mtl will be in; NULL = the path
 * as found), else by its map_Kd as written. Atomic. */
AM_NODISCARD am_status am_mtl_write(const am_mtl_material *materials, size_t count, const char *texture_dir,
                                    const char *path, am_error *err);

/* ---- rig.json, motion.json, creature.json (SPEC 2.1, 4.3, 3.1) ----
 * Limits: files of at most 64 MiB (rig), 512 MiB (motion), 16 MiB (creature); the text and
 * its parse tree together within 2 GiB (estimated from the text before parsing) or the
 * calling scope's am_context.max_bytes: AM_E_LIMIT naming the file. Names are matched by
 * hash, so loading is linear in the bones and joints. */
/* Parse rig.json text (len bytes, need not be NUL-terminated). source names it in errors. */
AM_NODISCARD am_status am_rig_parse(const char *text, size_t len, const char *source,
                                    am_rig **out, am_error *err);
AM_NODISCARD am_status am_rig_load(const char *path, am_rig **out, am_error *err);
/* Write rig.json (bones parents-first, limits as resolved per bone, helpers, extra keys kept).
 * Invalid UTF-8 in a name is AM_E_UTF8. Atomic. */
AM_NODISCARD am_status am_rig_write(const am_rig *rig, const char *path, am_error *err);
/* Serialize to a NUL-terminated JSON string (caller am_free()s it). */
AM_NODISCARD am_status am_rig_to_json(const am_rig *rig, char **out, am_error *err);

/* Parse motion.json. With rig != NULL, bones are matched by name and reordered into the
 * rig's order (unknown bone name -> AM_E_NAME naming it; rig bones missing from the file keep
 * rest rotation); without, file order. Accepts euler and/or quat (quat wins if both) and the
 * optional loc [T,B,3] (absent: mo->loc NULL; bound to a rig, the root's entry is 0). */
AM_NODISCARD am_status am_motion_parse(const char *text, size_t len, const char *source,
                                       const am_rig *rig, am_motion **out, am_error *err);
AM_NODISCARD am_status am_motion_load(const char *path, const am_rig *rig, am_motion **out,
                                      am_error *err);

/* Write motion.json with fps, bones, trans, root_quat, quat, euler, loc and joints (if any) and
 * the extra keys, numbers in the shortest form that reads back bit-identical: write -> parse ->
 * write gives the same bytes. A name that is not valid UTF-8 is AM_E_UTF8 naming it, and
 * nothing is written. Atomic. */
AM_NODISCARD am_status am_motion_write(const am_motion *mo, const char *path, am_error *err);
AM_NODISCARD am_status am_motion_to_json(const am_motion *mo, char **out, am_error *err);

AM_NODISCARD am_status am_creature_parse(const char *text, size_t len, const char *source,
                                         am_creature **out, am_error *err);
AM_NODISCARD am_status am_creature_load(const char *path, am_creature **out, am_error *err);

/* ---- map.json (SPEC 4.3.1): a bone map between two rigs ----
 * {"bones": {"<source bone>": "<target bone>" or null, ...}, "rules": {"<target bone>": "<why>"}}.
 * Names only: am_retarget_map_build (retarget.h) checks them against the two rigs. */
typedef struct am_bone_map {
    size_t count;
    char **source;      /* [count] source bones, each once (a repeated key is AM_E_DUPLICATE) */
    char **target;      /* [count] the target bone each drives, or NULL (null: drives nothing) */
    size_t rule_count;
    char **rule_bone;   /* [rule_count] target bones */
    char **rule_text;   /* [rule_count] how each entry was chosen */
} am_bone_map;
/* Errors: not an object or no "bones" object (AM_E_SCHEMA), a value that is not a string or
 * null, an empty name (AM_E_VALUE), two source bones driving one target bone (AM_E_DUPLICATE
 * naming the three). Other keys are ignored. Safe on untrusted input. Files of at most 16 MiB,
 * within the scope's max_bytes like the JSON files above (AM_E_LIMIT naming the file). */
AM_NODISCARD am_status am_bone_map_parse(const char *text, size_t len, const char *source,
                                         am_bone_map **out, am_error *err);
AM_NODISCARD am_status am_bone_map_load(const char *path, am_bone_map **out, am_error *err);
/* Write map.json (bones, then rules when there are any), through the one JSON writer; a name
 * that is not valid UTF-8 is AM_E_UTF8. Atomic. */
AM_NODISCARD am_status am_bone_map_write(const am_bone_map *map, const char *path, am_error *err);
AM_NODISCARD am_status am_bone_map_to_json(const am_bone_map *map, char **out, am_error *err);
void am_bone_map_free(am_bone_map *map);

#ifdef __cplusplus
}
#endif
#endif
