/* anymove bind: a static mesh skinned to its rig (`anymove bind`). The mesh is prepared first
 * (creature.json `prep`: real length, facing -Y, standing on z = 0) so that a rig authored on
 * the prepared mesh lines up; then every vertex gets its top-4 bone weights by bone heat, or
 * one bone (`rigid`), and optionally the limb paint of creature.json `paint` as a colour.
 *
 *     const am_mesh *mesh = NULL;          // am_obj_load, or am_gltf_meshes_gather's mesh
 *     const am_rig *rig = NULL;            // authored on the prepared mesh
 *     am_error err = {0};
 *     am_bind_opts o = {0};
 *     am_bind_result *b = NULL;
 *     if (am_bind_weights(mesh, rig, &o, &b, &err) == AM_OK) {
 *         int32_t strongest = b->bone_index[0];   // vertex 0, slot 0
 *         (void)strongest;
 *     }
 *     am_bind_result_free(b);
 *
 * Bone heat (Baran & Popovic 2007, "Automatic rigging and animation of 3D characters", the
 * method of Blender's "automatic weights"): per bone b, solve (-Delta + H) w_b = H p_b on the
 * mesh, where Delta is the cotangent Laplacian, H_ii = c k / d_i^2 with d_i the distance from
 * vertex i to its nearest bone (Blender's distance: a bone behind the surface counts up to 2000 x
 * farther), k the number of bones at that distance that the vertex sees (the segment to the
 * bone enters no triangle through its front), c = 4, and p_b,i = 1/k when b is one of them,
 * else 0; a vertex whose nearest bone is hidden gets no heat (H_ii = 0) and its weights from its
 * neighbours (docs/decisions.md). The matrix is the same for every bone: one sparse Cholesky
 * (CHOLMOD, opt.h), one solve per bone.
 * We solve the symmetric form (L + A H) w = A H p, with L the cotangent stiffness matrix and A
 * the lumped vertex areas (Delta = -A^-1 L). Coincident vertices (UV seams, split normals,
 * separately modelled pieces that touch) are welded first; a piece that sees no bone at all is
 * heated by the bones nearest it. Vertices get their 4 largest weights, renormalised.
 *
 * Runs in the scope of opts->ctx (core.h); warnings in the result. Pairs: am_bind_weights ->
 * am_bind_result_free.
 *
 * This work is based on:
 * - I. Baran, J. Popovic 2007, "Automatic rigging and animation of 3D characters" (bone heat).
 * - M. Meyer, M. Desbrun, P. Schroeder, A. Barr 2003, "Discrete differential-geometry operators
 *   for triangulated 2-manifolds" (cotangent Laplacian, lumped areas).
 * - T. Moeller, B. Trumbore 1997, "Fast, minimum storage ray/triangle intersection".
 */
#ifndef ANYMOVE_BIND_H
#define ANYMOVE_BIND_H

#include "core.h"
#include "io.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    AM_BIND_RIGID = 1u  /* every vertex on its one strongest bone, weight 1 (creature.json
                           "rigid": hard-surface creatures, robots) */
};

typedef struct am_bind_opts {
    unsigned flags;      /* AM_BIND_RIGID; 0 = smooth top-4 weights */
    double weld;         /* vertices closer than weld * body size are one vertex for the heat
                            solve; default 1e-4; negative = no welding */
    am_context ctx;      /* allocator, limits, progress (stages "bind: visibility",
                            "bind: heat"); zero = inherited (core.h) */
} am_bind_opts;

typedef struct am_bind_result {
    size_t vertex_count;       /* V, the mesh's */
    int32_t *bone_index;       /* [V][4] rig bones, strongest first; unused slots 0 */
    float *weight;             /* [V][4] sum 1 in slot order; unused slots 0 */
    size_t welded_count;       /* vertices after welding */
    size_t component_count;    /* connected pieces of the welded mesh */
    size_t blind_count;        /* welded vertices whose nearest bone is hidden (heated through
                                  the mesh) */
    size_t fallback_count;     /* pieces that see no bone at all (heated by the nearest bones) */
    size_t deform_bones;       /* bones that may carry weight (helpers excluded) */
    double seconds_visibility, seconds_solve;
    am_warning_list warnings;
} am_bind_result;

/* Weights of mesh (bind pose, world axes) for rig (rest pose, the same axes and units). Helper
 * bones (rig->is_helper) get no weight. Errors: AM_E_EMPTY (no vertices, no faces, no deforming
 * bone), AM_E_NONFINITE (a vertex, naming it), AM_E_VALUE (a face index outside the mesh; the
 * rig does not overlap the mesh: fewer than half of the bone ends lie within the mesh's box
 * grown by 10 %, as when the mesh was not prepared), AM_E_LIMIT (over 2^31 entries). */
AM_NODISCARD am_status am_bind_weights(const am_mesh *mesh, const am_rig *rig, const am_bind_opts *opts,
                                       am_bind_result **out, am_error *err);
void am_bind_result_free(am_bind_result *r);

/* ---- prep (creature.json "prep") ---- */
/* The similarity that turns the mesh about Z by rotz_deg, scales it uniformly so that its
 * extent along `axis` (0 x, 1 y, 2 z, after the turn) is length_m (0 = keep the size), and
 * moves it so that its box is centred on x = y = 0 with its lowest point on z = 0 (SPEC 1).
 * M [16] row-major, p' = M p. AM_E_EMPTY for no vertices, AM_E_DEGENERATE for a zero extent
 * along axis. */
AM_NODISCARD am_status am_prep_transform(const am_mesh *mesh, const am_prep *prep, double M[16],
                                         am_error *err);
/* Apply M (a similarity) to every vertex. */
void am_mesh_transform(am_mesh *mesh, const double M[16]);

/* ---- limb paint (creature.json "paint") ---- */
/* Per vertex, the weighted mix of its bones' group colours (bones in no group: white):
 * colors [V][4] RGBA in [0, 1]. A bone name that is no bone of the rig is AM_E_NAME naming the
 * group. */
AM_NODISCARD am_status am_bind_paint(const am_rig *rig, const am_creature *creature, const am_bind_result *b,
                                     float *colors, am_error *err);

#ifdef __cplusplus
}
#endif
#endif
