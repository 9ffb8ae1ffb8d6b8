/* anymove glTF 2.0: a .glb writer for rigs and their animations (SPEC.md section 4.5) and a
 * general glTF 2.0 reader (.glb, .gltf with embedded data: URIs or external buffers).
 *
 * Axes: glTF is Y up with the asset's front facing +Z. A world point (X, Y, Z) of SPEC 1 is
 * written as (X, Z, -Y); am_gltf_from_world / am_gltf_to_world are the one place that knows.
 * Quaternions are converted from our (w,x,y,z) to glTF's (x,y,z,w) at this edge only, and
 * matrices from our row-major to glTF's column-major.
 *
 *     am_gltf_export ex = {.rig = rig, .clips = &mo, .clip_count = 1};
 *     if (am_gltf_write(&ex, "out.glb", &err) != AM_OK) { ... }
 *
 *     am_gltf *doc = NULL;
 *     if (am_gltf_load("model.glb", NULL, &doc, &err) == AM_OK) { ... }
 *     am_gltf_free(doc);
 *
 * Keep the character: the model itself (meshes, materials, textures, skin) with new clips.
 *
 *     am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
 *     if (am_gltf_load("model.glb", &keep, &doc, &err) == AM_OK &&
 *         am_rig_from_gltf(doc, -1, &rig, &err) == AM_OK) {
 *         am_gltf_export ex = {.rig = rig, .clips = clips, .clip_names = names,
 *                              .clip_count = 2, .source = doc, .source_skin = -1};
 *         if (am_gltf_write(&ex, "character.glb", &err) != AM_OK) { ... }
 *     }
 *
 * Pairs: am_gltf_load -> am_gltf_free; am_rig_from_gltf -> am_rig_free.
 * Contexts (core.h): the writer runs in the scope of ex->ctx, the reader in that of opts->ctx
 * (warnings in am_gltf.warnings); am_rig_from_gltf, am_motion_from_gltf and the samplers run in
 * the caller's scope.
 */
#ifndef ANYMOVE_GLTF_H
#define ANYMOVE_GLTF_H

#include "core.h"
#include "io.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Axis conversion of SPEC 4.5. */
void am_gltf_from_world(const double world[3], double gltf[3]);
void am_gltf_to_world(const double gltf[3], double world[3]);

/* ---- writer ---- */
/* Triangles [first_triangle, first_triangle + triangle_count) drawn with one material. */
typedef struct am_gltf_mesh_part {
    size_t first_triangle, triangle_count;
    int32_t material;               /* a material of am_gltf_mesh_in.look, or -1 (default) */
    /* With am_gltf_mesh_in.nodes: the part's own vertices [first_vertex, first_vertex +
     * vertex_count), the only ones its triangles use; it is written as a primitive with its
     * own accessors (as the source model had it), and with its morph targets: */
    size_t first_vertex, vertex_count;
    size_t target_count;            /* the targets of its node (am_gltf_mesh_node.target_count) */
    const float *target_positions;  /* [target_count][vertex_count][3] POSITION deltas, world
                                       axes, or NULL (no targets) */
    const float *target_normals;    /* the same for NORMAL deltas, or NULL (written with normals) */
    const float *target_tangents;   /* the same for TANGENT deltas (xyz), or NULL (written with
                                       tangents) */
} am_gltf_mesh_part;

/* A mesh node of the written model: parts [first_part, first_part + part_count) are its glTF
 * mesh's primitives, skinned by the one skin of the rig. */
typedef struct am_gltf_mesh_node {
    const char *name;               /* the node's name, or NULL */
    const char *mesh_name;          /* its mesh's name, or NULL */
    size_t first_part, part_count;
    size_t target_count;            /* morph targets of every one of its parts */
    const double *target_weights;   /* [target_count] the mesh's default weights, or NULL (0) */
    const char *const *target_names;/* [target_count] mesh.extras.targetNames (NULL entries
                                       are written as ""), or NULL */
} am_gltf_mesh_node;

typedef struct am_gltf_mesh_in {
    size_t vertex_count;            /* V */
    const float *positions;         /* [V][3] rest positions, world axes (SPEC 1) */
    size_t triangle_count;          /* F; 0 writes a POINTS primitive */
    const int32_t *triangles;       /* [F][3] vertex indices */
    size_t influences;              /* K slots per vertex in bone_index/weights (any K >= 1) */
    const int32_t *bone_index;      /* [V][K] rig bone indices (negative = unused slot) */
    const float *weights;           /* [V][K]; the top 4 are kept and renormalized */
    const float *colors;            /* [V][4] RGBA in [0, 1] written as COLOR_0 (bind's limb
                                       paint), or NULL */
    const float *normals;           /* [V][3] unit normals, world axes, or NULL */
    const float *texcoords;         /* [V][2] TEXCOORD_0, or NULL */
    const float *texcoords1;        /* [V][2] TEXCOORD_1 (a second UV set, e.g. lightmaps), or NULL */
    const float *tangents;          /* [V][4] TANGENT: unit xyz, world axes, w = +-1 (the
                                       bitangent's sign), or NULL; written only with normals */
    /* The look of the model the mesh came from (bind keeps it): with look (a document loaded
     * with AM_GLTF_KEEP_SOURCE), its materials, textures, samplers and images (embedded) are
     * written, and each part is one primitive with its material; without parts, the triangles
     * are one primitive. parts must cover the triangles in order. */
    const struct am_gltf *look;
    size_t part_count;
    const am_gltf_mesh_part *parts;
    /* The mesh nodes of the model (bind keeps a glTF model's pieces): with node_count > 0 the
     * parts are grouped into these nodes, in order, and each part carries its own vertices and
     * morph targets; 0 = one mesh node of every part, sharing the vertices. */
    size_t node_count;
    const am_gltf_mesh_node *nodes;
    /* The model's own vertex colours (its COLOR_0), [V][4] RGBA in [0, 1], or NULL: written
     * as COLOR_0 without colors, else as COLOR_1 beside the paint. Each primitive then says so
     * in its extras ("anymove_paint": "COLOR_0", "anymove_colors": "COLOR_0" or "COLOR_1"),
     * so that the export's remove_paint can take the paint out and give the colours back. */
    const float *base_colors;
    /* TEXCOORD_2 .. TEXCOORD_(1 + texcoord_extra_count): [texcoord_extra_count][V][2], or
     * texcoord_extra_count 0; needs texcoords and texcoords1 (glTF numbers sets without gaps,
     * as it does TEXCOORD_1 without TEXCOORD_0: AM_E_ARG) */
    size_t texcoord_extra_count;
    const float *const *texcoords_extra;
} am_gltf_mesh_in;

typedef struct am_gltf_export {
    const am_rig *rig;
    size_t clip_count;
    const am_motion *const *clips;  /* each bound to rig (same bone order) */
    const char *const *clip_names;  /* [clip_count] or NULL ("clip0", ...) */
    const am_gltf_mesh_in *mesh;    /* NULL: a skinned bone-shape mesh is generated so any
                                       viewer shows the skeleton move */
    const char *generator;          /* asset.generator; NULL = "anymove <version>" */
    /* Keep the character: with a source document (from am_gltf_load with AM_GLTF_KEEP_SOURCE),
     * the file is that document, unchanged (nodes, meshes, materials, textures, images,
     * samplers, skins, scenes, extensions), in one GLB buffer, with its animations replaced by
     * the clips, which drive the joint nodes of skin source_skin. rig must be the skeleton
     * am_rig_from_gltf made of that skin (bone <-> joint node by name), possibly scaled
     * uniformly (convert --scale); mesh must be NULL. */
    const struct am_gltf *source;
    int source_skin;                /* -1 or 0: the first skin */
    const char *drop_attribute;     /* with a source: this vertex attribute is removed from every
                                       mesh primitive (pack: "COLOR_0", the limb paint bind
                                       wrote); NULL = keep all */
    bool remove_paint;              /* with a source: the limb paint bind marked is removed
                                       from every primitive, and the model's own colours bind
                                       moved beside it are COLOR_0 again (am_gltf_mesh_in.
                                       base_colors); a document without the mark (bound before
                                       it existed) loses COLOR_0, as with drop_attribute */
    am_warning_list *warnings;      /* optional output: the call's warnings are appended (free
                                       with am_warning_list_free); NULL = the caller's scope */
    am_context ctx;                 /* allocator, limits, progress (stage "glTF write");
                                       zero = inherited (core.h) */
} am_gltf_export;

/* Write a .glb atomically. Without a source: joint node n is bone n, named after it, and the
 * mesh (or bone shapes) is skinned to them. Animations use LINEAR samplers, one keyframe per
 * motion frame at t = frame / fps: rotation for every joint node, translation for the root and
 * for the bones whose motion has loc (and, with a source, for every joint node whose local
 * translation or scale leaves its rest value). */
AM_NODISCARD am_status am_gltf_write(const am_gltf_export *ex, const char *path, am_error *err);
/* Same, into memory. */
AM_NODISCARD am_status am_gltf_write_mem(const am_gltf_export *ex, am_buf *out, am_error *err);

/* ---- reader ---- */
typedef enum am_gltf_interp {
    AM_GLTF_LINEAR,
    AM_GLTF_STEP,
    AM_GLTF_CUBICSPLINE,
    AM_GLTF_INTERP_COUNT
} am_gltf_interp;

typedef enum am_gltf_path {
    AM_GLTF_PATH_TRANSLATION,
    AM_GLTF_PATH_ROTATION,
    AM_GLTF_PATH_SCALE,
    AM_GLTF_PATH_WEIGHTS,
    AM_GLTF_PATH_COUNT
} am_gltf_path;

/* A decoded accessor: always float, `count` elements of `components` each (normalized
 * integers mapped to [0,1] / [-1,1], sparse substitutions applied). */
typedef struct am_gltf_accessor {
    size_t count;
    size_t components;       /* 1 SCALAR, 2 VEC2, 3 VEC3, 4 VEC4, 9 MAT3, 16 MAT4 */
    int component_type;      /* the file's GL enum (5120..5126) */
    bool normalized;
    float *data;             /* [count][components] decoded */
    uint32_t *ints;          /* [count][components] for integer component types, else NULL */
} am_gltf_accessor;

typedef struct am_gltf_node {
    char *name;              /* NULL if unnamed */
    int32_t parent;          /* -1 for scene roots */
    size_t child_count;
    int32_t *children;
    double translation[3], rotation[4] /* (w,x,y,z) */, scale[3];
    double matrix[16];       /* local, row-major; equals TRS when TRS was given */
    bool has_matrix;         /* the file gave `matrix` */
    int32_t mesh, skin;      /* -1 if none */
    size_t weight_count;     /* default morph weights of the node (may be 0) */
    double *weights;
} am_gltf_node;

typedef struct am_gltf_skin {
    char *name;
    size_t joint_count;
    int32_t *joints;         /* [n] node indices */
    double *inverse_bind;    /* [n][16] row-major; identity when absent */
    int32_t skeleton;        /* -1 if not given */
} am_gltf_skin;

/* The UV sets the reader keeps (TEXCOORD_0 .. TEXCOORD_7). */
#define AM_GLTF_MAX_TEXCOORDS 8

typedef struct am_gltf_primitive {
    int mode;                /* 0 POINTS ... 4 TRIANGLES (default) */
    int32_t position, normal, tangent, joints0, weights0, texcoord0, texcoord1, indices; /* accessor indices or -1 */
    int32_t material;        /* index into the document's materials or -1 */
    size_t target_count;
    int32_t *target_position; /* [targets] accessor of POSITION deltas or -1 */
    int32_t color0;          /* COLOR_0 (VEC3 or VEC4) or -1 */
    int32_t *target_normal;  /* [targets] accessor of NORMAL deltas or -1 */
    int32_t *target_tangent; /* [targets] accessor of TANGENT deltas (VEC3) or -1 */
    int32_t texcoord[AM_GLTF_MAX_TEXCOORDS]; /* TEXCOORD_n, n < AM_GLTF_MAX_TEXCOORDS (0 and 1
                                                as texcoord0/texcoord1), or -1 */
} am_gltf_primitive;

typedef struct am_gltf_mesh {
    char *name;
    size_t primitive_count;
    am_gltf_primitive *primitives;
    size_t weight_count;
    double *weights;         /* default morph weights */
    size_t target_name_count;
    char **target_names;     /* [target_name_count] extras.targetNames (the names exporters
                                give the morph targets; NULL entries for non-strings) */
} am_gltf_mesh;

typedef struct am_gltf_channel {
    int32_t node;
    am_gltf_path path;
    int32_t sampler;
} am_gltf_channel;

typedef struct am_gltf_sampler {
    int32_t input, output;   /* accessor indices */
    am_gltf_interp interp;
} am_gltf_sampler;

typedef struct am_gltf_animation {
    char *name;
    size_t channel_count, sampler_count;
    am_gltf_channel *channels;
    am_gltf_sampler *samplers;
    double t_min, t_max;     /* over all sampler inputs */
} am_gltf_animation;

typedef struct am_gltf {
    size_t node_count, skin_count, mesh_count, accessor_count, animation_count;
    am_gltf_node *nodes;
    am_gltf_skin *skins;
    am_gltf_mesh *meshes;
    am_gltf_accessor *accessors;
    am_gltf_animation *animations;
    int32_t *node_order;     /* [node_count] every node, parents before children (from the
                                reader; used by am_gltf_world_from_local, NULL = index order) */
    int32_t scene;           /* default scene or -1 */
    char *generator;
    am_warning_list warnings;      /* non-fatal oddities of the load */
    struct am_gltf_source *source; /* private: what AM_GLTF_KEEP_SOURCE keeps, else NULL */
    char *source_name;             /* the name given to the reader (named in the errors of
                                      am_rig_from_gltf / am_motion_from_gltf), or NULL */
} am_gltf;

enum {
    /* Keep the JSON, the buffers and file-uri images, so am_gltf_write can write the model
     * again (am_gltf_export.source): memory for one more copy of the file. */
    AM_GLTF_KEEP_SOURCE = 1u
};

typedef struct am_gltf_opts {
    uint64_t max_bytes;      /* budget for the file, its external buffers and every decoded
                                accessor together, each checked before it is read or
                                allocated; 0 = 1 GiB (or the scope's max_bytes if smaller) */
    unsigned flags;          /* AM_GLTF_KEEP_SOURCE; 0 = none */
    am_context ctx;          /* allocator, limits; zero = inherited (core.h) */
} am_gltf_opts;

/* .glb or .gltf (detected by magic). External buffers resolve relative to path's folder and
 * are read only when their real path (symlinks resolved) lies inside it. */
AM_NODISCARD am_status am_gltf_load(const char *path, const am_gltf_opts *opts, am_gltf **out,
                                    am_error *err);
/* From memory; external URIs are refused unless base_dir is given. */
AM_NODISCARD am_status am_gltf_read_mem(const void *buf, size_t len, const char *source,
                                        const char *base_dir, const am_gltf_opts *opts,
                                        am_gltf **out, am_error *err);
void am_gltf_free(am_gltf *doc);

/* The animation a user means by `query` (what follows --clip): a name or an index. Tried in
 * order: the exact name; the name without an exporter's armature prefix ("RatArmature|Rat_Run"
 * answers "Rat_Run"); an index; the one name (without prefix) ending in query ("Run" ->
 * "Rat_Run"). *index is the animation, or -1 with AM_E_NAME whose message lists the clips (or
 * the candidates when query is ambiguous). The error names no file: callers add theirs. */
AM_NODISCARD am_status am_gltf_find_clip(const am_gltf *doc, const char *query, int *index,
                                         am_error *err);

/* Local TRS of every node at time t of animation `anim` (-1: rest values from the nodes).
 * local: [nodes][16] row-major local matrices; morph_weights: optional [nodes][max] ignored
 * when NULL. No allocation. */
void am_gltf_sample_local(const am_gltf *doc, int anim, double t, double *local);
/* World matrices [nodes][16] (in glTF axes) from local matrices. */
void am_gltf_world_from_local(const am_gltf *doc, const double *local, double *world);
/* Morph weights of a mesh node at time t (out: [weight_count of its mesh]). */
void am_gltf_sample_weights(const am_gltf *doc, int anim, double t, int node, double *out,
                            size_t out_count);

/* Build a rig from skin `skin` (-1: the first skin): one bone per joint node, named after the
 * node (unnamed: "joint<i>"; repeated names get "_2", "_3"...), heads at the joint's bind
 * position (G(skinned mesh node) * inverse(inverseBindMatrix), i.e. plain inverse(IBM) for an
 * identity mesh node) converted to world axes. The root is the joint carrying the body's
 * translation (of the joints whose translation an animation changes, the one with the most skin
 * weight below it; else the top joint with the most weight below it); the tree is re-rooted
 * there, other top-level joints become its children. Tails: the only child joint's head
 * (connected, unless an animation moves that child: then a separate joint there), else the
 * mean of the child joints' heads, else (leaves) a non-joint child node such as "<bone>_end",
 * else along the node's Y axis at the parent bone's length (min 1 cm);
 * separate tails are joints named "<bone>_end". Bones whose joint and everything below it carry
 * no skin weight in any mesh using the skin are marked is_helper. AM_E_EMPTY without skins.
 * Safe on untrusted documents from am_gltf_read_mem. */
AM_NODISCARD am_status am_rig_from_gltf(const am_gltf *doc, int skin, am_rig **out,
                                        am_error *err);
/* Node evaluations one sampling may do (frames x nodes): about ten seconds; a 1,000-node model
 * for 200,000 frames. */
#define AM_GLTF_MAX_NODE_FRAMES 2e8

/* Sample animation `anim` of the skin's joints into a motion bound to `rig` (from
 * am_rig_from_gltf on the same doc and skin) at fps, frames t_min + i/fps for
 * i < floor((t_max - t_min) * fps) + 1: trans, root_quat, euler, quat, joints (FK keypoints).
 * fps must pass am_fps_valid (AM_E_ARG); a clip whose frames would take more than
 * AM_MOTION_MAX_BYTES (duration x fps x the rig's channels), or whose frames x nodes exceed
 * AM_GLTF_MAX_NODE_FRAMES (the work: every frame evaluates every node), is AM_E_LIMIT
 * before any work.
 * anim -1 gives one frame of the nodes' rest pose. Each bone follows its node's world rotation
 * relative to the bind pose, and bones whose node translates relative to its parent (beyond
 * float noise) get loc (SPEC 2.3), so FK reproduces every joint node's position exactly; only
 * scale is approximated (by a polar decomposition's rotation). loc is NULL when no bone slides. */
AM_NODISCARD am_status am_motion_from_gltf(const am_gltf *doc, int skin, const am_rig *rig,
                                           int anim, double fps, am_motion **out,
                                           am_error *err);
/* A clip's own rate in fps: the spacing of its keys when they are evenly spaced (exporters bake
 * at 24, 30 or 60 fps; float keys of 1/24 s rounded to 24), so sampling at it adds nothing
 * between keys; 30 for anim -1, uneven keys or a rate outside [1, 1000]. */
double am_gltf_clip_rate(const am_gltf *doc, int anim);
/* A clip's name as a part of a file name, as `retarget` names its files and the clips of its
 * GLB: the part after the last '|' ("AnimalArmature|Walk" -> "Walk"), every character but
 * [A-Za-z0-9_-] as '_', "clip<index>" for a NULL or empty name. Written into buf (cut to at
 * most 95 bytes and size - 1); returns buf. */
char *am_clip_file_name(const char *name, size_t index, char *buf, size_t size);

/* ---- the triangle meshes of a document as one mesh (bind) ---- */
typedef struct am_gltf_part {
    int32_t node, mesh;        /* the mesh node and its mesh */
    size_t primitive;          /* primitive of that mesh */
    size_t first, count;       /* its vertices in the gathered mesh */
    size_t first_triangle, triangle_count; /* its triangles in the gathered mesh */
    int32_t material;          /* the primitive's material or -1 */
    size_t target_count;       /* its morph targets (those of its mesh) */
    float *target_positions;   /* [target_count][count][3] POSITION deltas in world axes (by the
                                  node's linear part), or NULL; into am_gltf_meshes.targets */
    float *target_normals;     /* NORMAL deltas (by the normals' matrix, on the scale of the
                                  normalised base normal) when every target has them and the
                                  mesh has normals, else NULL */
    float *target_tangents;    /* TANGENT deltas (xyz, by the linear part on the scale of the
                                  normalised base tangent) likewise with tangents, else NULL */
} am_gltf_part;

typedef struct am_gltf_meshes {
    am_mesh mesh;              /* every vertex of every TRIANGLES primitive of every mesh node,
                                  in node order, placed by the node's rest world matrix (for a
                                  skinned node that is its bind pose) in SPEC 1 world axes */
    size_t part_count;
    am_gltf_part *parts;       /* [part_count] */
    int32_t *skin_joint;       /* [V][4] JOINTS_0 of primitives skinned by skin 0 (indices into
                                  its joints), else 0; NULL when the document has no skin */
    float *skin_weight;        /* [V][4] WEIGHTS_0 there, else 0 */
    float *normals;            /* [V][3] unit NORMAL in world axes when every primitive has one,
                                  else NULL */
    float *texcoords;          /* [V][2] TEXCOORD_0 (0, 0 in primitives without), NULL when no
                                  primitive has one */
    float *texcoords1;         /* [V][2] TEXCOORD_1, the same way */
    float *tangents;           /* [V][4] TANGENT (unit xyz in world axes, w kept) when every
                                  primitive has tangents and normals, else NULL */
    float *colors;             /* [V][4] COLOR_0 RGBA (A = 1 for RGB; white in primitives
                                  without), NULL when no primitive has one */
    size_t texcoord_extra_count; /* TEXCOORD_2.. sets: up to the highest any primitive has
                                    (texcoords and texcoords1 are then given too, zeros where a
                                    primitive lacks them: glTF numbers sets without gaps) */
    float *texcoords_extra[AM_GLTF_MAX_TEXCOORDS - 2]; /* [V][2] each, (0, 0) where absent */
    float *targets;            /* the parts' morph deltas, one block (owned; parts point in) */
} am_gltf_meshes;

/* Gather the meshes. Primitives that are not triangle lists are left out with a warning.
 * AM_E_EMPTY without triangles' vertices, AM_E_VALUE for an index outside its primitive.
 * Runs in the caller's scope. */
AM_NODISCARD am_status am_gltf_meshes_gather(const am_gltf *doc, am_gltf_meshes **out, am_error *err);
void am_gltf_meshes_free(am_gltf_meshes *m);

/* The document's materials as MTL materials, one per glTF material in its order (so a
 * primitive's material index is the MTL material's): Kd and d from baseColorFactor, Ke from
 * emissiveFactor, Pm and Pr from metallicFactor and roughnessFactor (glTF's defaults where
 * absent). Textures are not carried (map_Kd stays NULL). A name that is missing, repeated or
 * holds a control character becomes "material_<index>". Needs a document read with
 * AM_GLTF_KEEP_SOURCE (else AM_E_VALUE). Pair: am_mtl_free. */
AM_NODISCARD am_status am_mtl_from_gltf(const am_gltf *doc, am_mtl **out, am_error *err);

/* ---- an OBJ model with its look (bind): texture coordinates, normals and MTL materials ----
 * A glTF vertex is one (v, vt, vn) corner of the OBJ: a position with several UVs or normals
 * (seams, hard edges) becomes several vertices, each distinct corner once. Vertex i < P is the
 * OBJ's position i (with the vt / vn of the first face corner on it), so a file without vt and
 * vn reads as the same P vertices as am_obj_load; the other corners follow, in face order.
 * The MTL files of `mtllib` (relative to the OBJ's folder) give the materials of `usemtl`, and
 * map_Kd the base colour texture (PNG or JPEG, read from the OBJ's folder). A missing .mtl or
 * texture, or a usemtl naming no material, is a warning: the geometry stands without it.
 *
 *     am_obj_model *om = NULL;
 *     am_error err = {0};
 *     if (am_obj_model_load("wolf.obj", NULL, &om, &err) == AM_OK) {
 *         am_mesh on_positions = {om->position_count, om->mesh.triangle_count,
 *                                 om->mesh.positions, om->position_triangles};
 *         // skin weights of on_positions, then am_obj_model_spread to every vertex
 *         am_gltf_mesh_in mi = {.normals = om->normals, .texcoords = om->texcoords,
 *                               .look = om->look, .part_count = om->part_count,
 *                               .parts = om->parts};
 *         (void)on_positions, (void)mi;
 *     }
 *     am_obj_model_free(om);
 */
typedef struct am_obj_model {
    am_mesh mesh;              /* V vertices (one per distinct corner), F triangles, world axes */
    size_t position_count;     /* P: the OBJ's `v` lines (P <= V) */
    int32_t *position_index;   /* [V] the position (0-based `v`) vertex i sits on; i for i < P */
    int32_t *position_triangles; /* [F][3] the triangles on the positions: position_index of
                                  mesh.triangles (what welds and heats as one surface) */
    float *normals;            /* [V][3] unit, world axes, when any corner has a `vn`, else NULL;
                                  a corner without one gets the area-weighted normal of the
                                  faces on its position (as Blender computes it) */
    float *texcoords;          /* [V][2] glTF's (u, 1 - v) when any corner has a `vt`, else NULL;
                                  a corner without one gets (0, 1), the OBJ's (0, 0) (Blender) */
    size_t part_count;         /* one part per material (-1, the default, first): the triangles
                                  are grouped by material; 0 when no face has a material */
    am_gltf_mesh_part *parts;  /* [part_count] */
    size_t material_count;     /* the materials faces use, in order of first use */
    am_mtl_material *materials;/* [material_count]; part material m is materials[m] */
    struct am_gltf *look;      /* those materials as a glTF document's materials, textures,
                                  sampler and images (embedded) for am_gltf_mesh_in.look, or
                                  NULL without materials */
    am_warning_list warnings;  /* missing .mtl or texture files (named), unknown usemtl names,
                                  texture maps left out */
} am_obj_model;

/* The OBJ (am_obj_load's rules, plus vt, vn, mtllib and usemtl) with its materials. Errors of
 * the OBJ or of an .mtl name the file, line and column (a bad number in either is AM_E_SYNTAX).
 * Runs in the caller's scope; warnings in the model. Pair: am_obj_model_free. */
AM_NODISCARD am_status am_obj_model_load(const char *path, const am_obj_opts *opts, am_obj_model **out,
                                         am_error *err);
/* From memory: mtllib files are read from base_dir; NULL reads none (a warning each). */
AM_NODISCARD am_status am_obj_model_read_mem(const char *text, size_t len, const char *source,
                                             const char *base_dir, const am_obj_opts *opts,
                                             am_obj_model **out, am_error *err);
void am_obj_model_free(am_obj_model *m);
/* per_vertex[i] = per_position[position_index[i]] for every vertex: values computed on the
 * positions (skin weights, paint) for every vertex, so the copies of a position stay equal.
 * Elements of elem_bytes bytes; per_position [P], per_vertex [V]. */
void am_obj_model_spread(const am_obj_model *m, const void *per_position, size_t elem_bytes, void *per_vertex);
/* Write the model: `v` per position, `vt` and `vn` per vertex (when it has them), `f` with
 * v/vt/vn corners, `usemtl` per part, and `mtllib` naming the .mtl written to mtl_path (when it
 * has materials; mtl_final is where that file will be: its name goes in mtllib, its folder is
 * what texture paths are relative to; NULL = mtl_path). The axes and units of opts, as
 * am_obj_write. Both atomic. */
AM_NODISCARD am_status am_obj_model_write(const am_obj_model *m, const am_obj_opts *opts, const char *path,
                                          const char *mtl_path, const char *mtl_final, am_error *err);

#ifdef __cplusplus
}
#endif
#endif
