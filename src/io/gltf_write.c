/* glTF 2.0 binary (.glb) writer for a rig, its clips and a skinned mesh (SPEC.md section 4.5),
 * or for a source document ("keep the character") whose joints the clips drive.
 *
 * Layout of a file written from a rig:
 * - nodes 0..B-1 are the joints, node b is rig bone b, named after it, children as the rig's
 *   parents; node B is the skinned mesh node (nodes B..B+N-1 for a mesh given as N mesh
 *   nodes, node B+n showing mesh n). Node 0 and the mesh nodes are scene roots, and the
 *   mesh nodes carry no transform: the validator warns about skinned meshes that are
 *   parented or transformed, since their transform is ignored by skinning. Nodes B+N... are
 *   "<bone>_end" markers under each leaf joint at its tail (not joints, not animated).
 * - A joint node's world matrix in glTF axes is W(b) = [orth(C R_P(b)) | C head(b)], where
 *   P(b) is the SPEC 2.3 FK matrix and C the axis change of SPEC 4.5. orth() keeps the bone's
 *   Y axis direction (so leaf tails stay on head + Y * length) and rebuilds X and Z: near -Y
 *   the roll-0 frames are orthonormal only to ~3e-5 and a glTF TRS cannot carry that skew.
 *   Locals are W(parent)^-1 W(b), computed so that the heads (node origins) are exact.
 * - Node default TRS is the rest pose; inverse bind matrices are the rigid inverses of the
 *   rest W(b), so the bind pose equals the node rest pose to rounding.
 * - Rotation keys for every joint; translation keys for the root and for bones the motion
 *   moves with loc. A rigid bone's local translation is constant (orth() commutes with
 *   rotations), so its rest value is exact.
 *
 * A file written from a source document is that document's JSON, member by member, with one
 * GLB buffer holding the source buffers (each at an 8-aligned offset, so every view keeps its
 * alignment), the images that were files, and the new keys; bufferViews are re-pointed into it
 * and the animations are ours. Joint node j of bone b gets the world matrix
 *     W_j(t) = C S_b(t) C^-1 Bind_j,   S_b(t) = P(b, t) M_rest(b)^-1,
 * so the skinning matrix W_j(t) IBM_j is our skinning S_b(t) in glTF axes (Bind_j =
 * G(mesh node) IBM_j^-1, the bind matrix the rig was made from), whatever the document's
 * node frames, armature nodes and scales; its local TRS is world(parent)^-1 W_j(t).
 *
 * The output depends only on the input values: no time stamps, no pointer-dependent order,
 * numbers in the one JSON number format (shortest round-trip text, exact for floats widened
 * to double), padding bytes fixed. Identical input gives identical bytes.
 */
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "core/internal.h"
#include "io/gltf_internal.h"
#include "io/json_internal.h"
#include "rig/rig_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

enum {
    AMI_GL_UNSIGNED_BYTE = 5121,
    AMI_GL_UNSIGNED_SHORT = 5123,
    AMI_GL_UNSIGNED_INT = 5125,
    AMI_GL_FLOAT = 5126,
    AMI_GL_ARRAY_BUFFER = 34962,
    AMI_GL_ELEMENT_ARRAY_BUFFER = 34963,
};

typedef struct ami_gview {
    size_t offset, len;
    int target; /* 0 = none */
} ami_gview;

typedef struct ami_gacc {
    int32_t view;
    int ctype;
    size_t count, ncomp;
    bool bounds;
    double mn[16], mx[16];
} ami_gacc;

enum { AMI_PATH_T, AMI_PATH_R, AMI_PATH_S };

typedef struct ami_gchan {
    int32_t node, output; /* output accessor; the sampler's input is its animation's */
    int path;             /* AMI_PATH_* */
} ami_gchan;

typedef struct ami_ganim {
    const char *name;     /* borrowed from the export, or NULL: "clip<c>" */
    int32_t input;
    size_t chan_count;
    ami_gchan *chans;
} ami_ganim;

/* Writer state: the BIN chunk and the views, accessors and animations that describe it. The
 * JSON is written once everything is in the BIN, from these records. */
typedef struct ami_gw {
    am_buf bin;
    ami_gview *views;
    size_t view_count, view_cap;
    ami_gacc *acc;
    size_t acc_count, acc_cap;
    ami_ganim *anims;
    size_t anim_count;
    bool oom;
} ami_gw;

static void ami_gw_free(ami_gw *g)
{
    am_buf_free(&g->bin);
    am_free(g->views);
    am_free(g->acc);
    for (size_t a = 0; a < g->anim_count; a++) am_free(g->anims[a].chans);
    am_free(g->anims);
    memset(g, 0, sizeof *g);
}

/* Room for one more element of size elem in *p (capacity *cap, count n). */
static bool ami_grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return true;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = am_realloc_array(*p, c, elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* ---- BIN chunk ------------------------------------------------------------------------ */

static void ami_bin_pad4(am_buf *bin)
{
    static const char zeros[4] = {0};
    size_t r = bin->len & 3u;
    if (r) am_buf_append(bin, zeros, 4 - r);
}

/* Little-endian encoding whatever the host order: the GLB format is little-endian. */
static void ami_le32(unsigned char *p, uint32_t u)
{
    p[0] = (unsigned char)(u & 0xFF);
    p[1] = (unsigned char)((u >> 8) & 0xFF);
    p[2] = (unsigned char)((u >> 16) & 0xFF);
    p[3] = (unsigned char)(u >> 24);
}

static void ami_bin_f32(am_buf *bin, const float *v, size_t n)
{
    unsigned char tmp[1024];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        ami_le32(tmp + k, u);
        k += 4;
        if (k == sizeof tmp) {
            am_buf_append(bin, tmp, k);
            k = 0;
        }
    }
    if (k) am_buf_append(bin, tmp, k);
}

/* Integers stored with `size` bytes each (1, 2 or 4). */
static void ami_bin_uint(am_buf *bin, const uint32_t *v, size_t n, size_t size)
{
    unsigned char tmp[1024];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t byte = 0; byte < size; byte++) tmp[k++] = (unsigned char)((v[i] >> (8 * byte)) & 0xFF);
        if (k + 4 > sizeof tmp) {
            am_buf_append(bin, tmp, k);
            k = 0;
        }
    }
    if (k) am_buf_append(bin, tmp, k);
}
static const char *ami_type_name(size_t ncomp)
{
    switch (ncomp) {
    case 1: return "SCALAR";
    case 2: return "VEC2";
    case 3: return "VEC3";
    case 4: return "VEC4";
    default: return "MAT4";
    }
}

static int32_t ami_view(ami_gw *g, size_t offset, size_t len, int target)
{
    if (!ami_grow((void **)&g->views, &g->view_cap, g->view_count, sizeof *g->views)) {
        g->oom = true;
        return -1;
    }
    g->views[g->view_count] = (ami_gview){offset, len, target};
    return (int32_t)g->view_count++;
}

static int32_t ami_accessor(ami_gw *g, int32_t view, int ctype, size_t count, size_t ncomp)
{
    if (view < 0 || !ami_grow((void **)&g->acc, &g->acc_cap, g->acc_count, sizeof *g->acc)) {
        g->oom = true;
        return -1;
    }
    g->acc[g->acc_count] = (ami_gacc){.view = view, .ctype = ctype, .count = count, .ncomp = ncomp};
    return (int32_t)g->acc_count++;
}

/* A float accessor of `count` elements of ncomp components in its own bufferView. With
 * bounds, min/max are the exact extremes of the stored floats (required for POSITION and
 * animation inputs). */
static int32_t ami_put_f32(ami_gw *g, const float *v, size_t count, size_t ncomp, int target,
                           bool bounds)
{
    size_t offset = g->bin.len;
    ami_bin_f32(&g->bin, v, count * ncomp);
    int32_t a = ami_accessor(g, ami_view(g, offset, count * ncomp * 4, target), AMI_GL_FLOAT, count,
                             ncomp);
    if (a < 0 || !bounds || !count) return a;
    ami_gacc *ac = &g->acc[a];
    ac->bounds = true;
    for (size_t c = 0; c < ncomp; c++) ac->mn[c] = ac->mx[c] = v[c];
    for (size_t i = 1; i < count; i++)
        for (size_t c = 0; c < ncomp; c++) {
            double x = v[i * ncomp + c];
            if (x < ac->mn[c]) ac->mn[c] = x;
            if (x > ac->mx[c]) ac->mx[c] = x;
        }
    return a;
}

static int32_t ami_put_uint(ami_gw *g, const uint32_t *v, size_t count, size_t ncomp, int ctype,
                            int target)
{
    size_t size = ctype == AMI_GL_UNSIGNED_BYTE ? 1 : ctype == AMI_GL_UNSIGNED_SHORT ? 2 : 4;
    size_t offset = g->bin.len;
    ami_bin_uint(&g->bin, v, count * ncomp, size);
    int32_t view = ami_view(g, offset, count * ncomp * size, target);
    ami_bin_pad4(&g->bin); /* the next view starts 4-aligned */
    return ami_accessor(g, view, ctype, count, ncomp);
}

/* Our bufferViews and accessors as JSON array elements; view_base and acc_base: how many the
 * document has before ours. */
static void ami_jw_views(ami_jw *w, const ami_gw *g)
{
    for (size_t i = 0; i < g->view_count; i++) {
        const ami_gview *v = &g->views[i];
        ami_jw_record(w, NULL);
        ami_jw_int(w, "buffer", 0);
        ami_jw_int(w, "byteOffset", (int64_t)v->offset);
        ami_jw_int(w, "byteLength", (int64_t)v->len);
        if (v->target) ami_jw_int(w, "target", v->target);
        ami_jw_close(w);
    }
}

static void ami_jw_accessors(ami_jw *w, const ami_gw *g, size_t view_base)
{
    for (size_t i = 0; i < g->acc_count; i++) {
        const ami_gacc *a = &g->acc[i];
        ami_jw_record(w, NULL);
        ami_jw_int(w, "bufferView", (int64_t)(view_base + (size_t)a->view));
        ami_jw_int(w, "componentType", a->ctype);
        ami_jw_int(w, "count", (int64_t)a->count);
        ami_jw_string(w, "type", ami_type_name(a->ncomp));
        if (a->bounds) {
            ami_jw_numbers(w, "min", a->mn, 1, &a->ncomp);
            ami_jw_numbers(w, "max", a->mx, 1, &a->ncomp);
        }
        ami_jw_close(w);
    }
}

/* Our animations: one LINEAR sampler per channel, all of an animation sharing its input. */
static void ami_jw_animations(ami_jw *w, const ami_gw *g, size_t acc_base)
{
    static const char *const paths[3] = {"translation", "rotation", "scale"};
    for (size_t c = 0; c < g->anim_count; c++) {
        const ami_ganim *an = &g->anims[c];
        ami_jw_object(w, NULL);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "clip%zu", c);
        ami_jw_string(w, "name", an->name ? an->name : fallback);
        ami_jw_array(w, "channels");
        for (size_t k = 0; k < an->chan_count; k++) {
            ami_jw_record(w, NULL);
            ami_jw_int(w, "sampler", (int64_t)k);
            ami_jw_record(w, "target");
            ami_jw_int(w, "node", an->chans[k].node);
            ami_jw_string(w, "path", paths[an->chans[k].path]);
            ami_jw_close(w);
            ami_jw_close(w);
        }
        ami_jw_close(w);
        ami_jw_array(w, "samplers");
        for (size_t k = 0; k < an->chan_count; k++) {
            ami_jw_record(w, NULL);
            ami_jw_int(w, "input", (int64_t)(acc_base + (size_t)an->input));
            ami_jw_int(w, "output", (int64_t)(acc_base + (size_t)an->chans[k].output));
            ami_jw_string(w, "interpolation", "LINEAR");
            ami_jw_close(w);
        }
        ami_jw_close(w);
        ami_jw_close(w);
    }
}

/* A new animation record for clip c with room for `cap` channels. */
static ami_ganim *ami_anim_add(ami_gw *g, const am_gltf_export *ex, size_t c, size_t cap)
{
    ami_ganim *an = &g->anims[g->anim_count];
    an->name = ex->clip_names ? ex->clip_names[c] : NULL;
    an->chans = am_alloc_array(cap ? cap : 1, sizeof *an->chans);
    if (!an->chans) return NULL;
    g->anim_count++;
    return an;
}

static void ami_chan_add(ami_ganim *an, int32_t node, int path, int32_t output)
{
    an->chans[an->chan_count++] = (ami_gchan){node, output, path};
}

/* Keyframe times t / fps of a clip (float, strictly increasing: checked by ami_check_clip). */
static int32_t ami_put_times(ami_gw *g, const am_motion *mo, float *times)
{
    for (size_t t = 0; t < mo->frame_count; t++) times[t] = (float)((double)t / mo->fps);
    return ami_put_f32(g, times, mo->frame_count, 1, 0, true);
}

/* Consecutive keys in one hemisphere: LINEAR blends componentwise, and a sign flip between
 * keys would swing the joint the long way round. */
static void ami_quat_follow(double q[4], const double prev[4])
{
    if (q[0] * prev[0] + q[1] * prev[1] + q[2] * prev[2] + q[3] * prev[3] < 0)
        for (int k = 0; k < 4; k++) q[k] = -q[k];
}

/* Bone b of a clip slides: its loc is not zero in some frame. */
static bool ami_bone_slides(const am_motion *mo, size_t b)
{
    if (!mo->loc) return false;
    for (size_t t = 0; t < mo->frame_count; t++) {
        const double *l = mo->loc + (t * mo->bone_count + b) * 3;
        if (l[0] != 0 || l[1] != 0 || l[2] != 0) return true;
    }
    return false;
}
/* ---- transforms ------------------------------------------------------------------------ */

/* A joint's world frame in glTF axes: rotation R (row-major, orthonormal) and origin h. */
typedef struct ami_frame {
    double R[9], h[3];
} ami_frame;

/* W(b) = [orth(C R_P) | C head] from a world matrix P (row-major 4x4). C R's columns are the
 * converted columns of R, so the one axis function of gltf.h does all the work. */
static void ami_frame_from_pose(const double P[16], ami_frame *f)
{
    double col[3][3];
    for (int c = 0; c < 3; c++) {
        double w[3] = {P[0 * 4 + c], P[1 * 4 + c], P[2 * 4 + c]};
        am_gltf_from_world(w, col[c]);
    }
    double head[3] = {P[3], P[7], P[11]};
    am_gltf_from_world(head, f->h);

    /* Y first: the bone axis direction is what places the tail. */
    double x[3], y[3], z[3];
    if (am_vec3_normalize(col[1], y) < 1e-300) am_vec3_set(y, 0, 1, 0);
    am_vec3_madd(col[0], -am_vec3_dot(col[0], y), y, x);
    if (am_vec3_normalize(x, x) < 1e-12) {
        /* X collapsed onto Y: only a broken input gets here; any frame around Y will do. */
        am_vec3_perpendicular(y, x);
    }
    am_vec3_cross(x, y, z);
    am_vec3_normalize(z, z);
    for (int r = 0; r < 3; r++) {
        f->R[r * 3 + 0] = x[r];
        f->R[r * 3 + 1] = y[r];
        f->R[r * 3 + 2] = z[r];
    }
}

/* Local TRS of node b: rotation quaternion (w,x,y,z) and translation, from world frames. */
static void ami_local(const am_rig *rig, const ami_frame *fr, size_t b, double q[4], double t[3])
{
    int32_t p = rig->parent[b];
    if (p < 0) {
        am_quat_from_mat3(fr[b].R, q);
        memcpy(t, fr[b].h, sizeof(double) * 3);
    } else {
        double Rl[9], d[3];
        am_mat3_tmul(fr[p].R, fr[b].R, Rl);
        am_vec3_sub(fr[b].h, fr[p].h, d);
        /* t = Rp^T (hb - hp): the parent's origin plus Rp t lands exactly on hb. */
        double Rt[9];
        am_mat3_transpose(fr[p].R, Rt);
        am_mat3_mul_vec3(Rt, d, t);
        am_quat_from_mat3(Rl, q);
    }
    am_quat_normalize(q, q);
}

static bool ami_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

/* ---- validation -------------------------------------------------------------------------- */

static am_status ami_check_clip(const am_rig *rig, const am_motion *mo, size_t c, am_error *err)
{
    assert(mo && mo->trans && mo->root_quat);
    AMI_CHECK(err, mo->bone_count == rig->bone_count, AM_E_ARG,
              "clip %zu has %zu bones, the rig %zu (bind the motion to the rig)", c,
              mo->bone_count, rig->bone_count);
    AMI_CHECK(err, mo->frame_count > 0, AM_E_EMPTY, "clip %zu has no frames", c);
    AMI_CHECK(err, isfinite(mo->fps) && mo->fps > 0, AM_E_VALUE, "clip %zu: fps %g", c, mo->fps);
    if (mo->bone_names)
        for (size_t b = 0; b < rig->bone_count; b++)
            AMI_CHECK(err, mo->bone_names[b] && strcmp(mo->bone_names[b], rig->bone_names[b]) == 0,
                      AM_E_NAME, "clip %zu: bone %zu is '%s', the rig's is '%s'", c, b,
                      mo->bone_names[b] ? mo->bone_names[b] : "(null)", rig->bone_names[b]);
    size_t T = mo->frame_count;
    AMI_CHECK(err, ami_finite(mo->trans, T * 3) && ami_finite(mo->root_quat, T * 4), AM_E_NONFINITE,
              "clip %zu: root track", c);
    if (mo->euler)
        AMI_CHECK(err, ami_finite(mo->euler, T * rig->bone_count * 3), AM_E_NONFINITE,
                  "clip %zu: euler", c);
    else if (mo->quat)
        AMI_CHECK(err, ami_finite(mo->quat, T * rig->bone_count * 4), AM_E_NONFINITE,
                  "clip %zu: quat", c);
    if (mo->loc)
        AMI_CHECK(err, ami_finite(mo->loc, T * rig->bone_count * 3), AM_E_NONFINITE,
                  "clip %zu: loc", c);
    /* Keyframe times must stay strictly increasing once rounded to float. */
    for (size_t t = 1; t < T; t++)
        AMI_CHECK(err, (float)((double)t / mo->fps) > (float)((double)(t - 1) / mo->fps), AM_E_VALUE,
                  "clip %zu: %zu frames at %g fps do not fit float keyframe times", c, T, mo->fps);
    return AM_OK;
}

/* With mesh nodes: the nodes cover the parts in order, each part's triangles use only its own
 * vertices, and its targets are its node's, finite. */
static am_status ami_check_mesh_nodes(const am_gltf_mesh_in *m, am_error *err)
{
    if (!m->node_count) return AM_OK;
    assert(m->nodes);
    AMI_CHECK(err, m->triangle_count > 0, AM_E_ARG, "mesh nodes need triangles");
    size_t next = 0;
    for (size_t n = 0; n < m->node_count; n++) {
        const am_gltf_mesh_node *nd = &m->nodes[n];
        AMI_CHECK(err, nd->first_part == next && nd->part_count > 0 && nd->part_count <= m->part_count - next,
                  AM_E_VALUE, "mesh node %zu: parts %zu + %zu do not follow the nodes before (%zu of %zu)", n,
                  nd->first_part, nd->part_count, next, m->part_count);
        next += nd->part_count;
        for (size_t t = 0; nd->target_weights && t < nd->target_count; t++)
            AMI_CHECK(err, isfinite(nd->target_weights[t]), AM_E_NONFINITE, "mesh node %zu: morph weight %zu", n, t);
        for (size_t p = nd->first_part; p < nd->first_part + nd->part_count; p++) {
            const am_gltf_mesh_part *pt = &m->parts[p];
            AMI_CHECK(err, pt->vertex_count > 0 && pt->first_vertex < m->vertex_count &&
                               pt->vertex_count <= m->vertex_count - pt->first_vertex,
                      AM_E_VALUE, "mesh part %zu: vertices %zu + %zu outside the mesh (%zu)", p, pt->first_vertex,
                      pt->vertex_count, m->vertex_count);
            for (size_t i = pt->first_triangle * 3; i < (pt->first_triangle + pt->triangle_count) * 3; i++)
                AMI_CHECK(err, (size_t)m->triangles[i] >= pt->first_vertex &&
                                   (size_t)m->triangles[i] < pt->first_vertex + pt->vertex_count,
                          AM_E_VALUE, "mesh part %zu: triangle %zu uses vertex %d of another part", p, i / 3,
                          (int)m->triangles[i]);
            AMI_CHECK(err, pt->target_count == nd->target_count && (!pt->target_count) == !pt->target_positions,
                      AM_E_VALUE, "mesh part %zu: %zu morph targets, its node %zu has %zu", p, pt->target_count, n,
                      nd->target_count);
            const float *const blocks[3] = {pt->target_positions, pt->target_normals, pt->target_tangents};
            for (size_t b = 0; b < 3; b++)
                for (size_t i = 0; blocks[b] && i < pt->target_count * pt->vertex_count * 3; i++)
                    AMI_CHECK(err, isfinite(blocks[b][i]), AM_E_NONFINITE, "mesh part %zu: morph delta %zu", p, i / 3);
        }
    }
    AMI_CHECK(err, next == m->part_count, AM_E_VALUE, "mesh nodes cover %zu of %zu parts", next, m->part_count);
    return AM_OK;
}

static am_status ami_check_mesh(const am_rig *rig, const am_gltf_mesh_in *m, am_error *err)
{
    assert(m->positions || m->vertex_count == 0);
    assert(m->influences == 0 || (m->bone_index && m->weights));
    assert(m->triangles || m->triangle_count == 0);
    AMI_CHECK(err, m->vertex_count > 0, AM_E_EMPTY, "mesh has no vertices");
    AMI_CHECK(err, m->vertex_count <= UINT32_MAX, AM_E_LIMIT, "mesh has %zu vertices", m->vertex_count);
    for (size_t i = 0; i < m->vertex_count * 3; i++)
        AMI_CHECK(err, isfinite(m->positions[i]), AM_E_NONFINITE, "mesh vertex %zu position", i / 3);
    if (m->triangle_count) {
        for (size_t i = 0; i < m->triangle_count * 3; i++)
            AMI_CHECK(err, m->triangles[i] >= 0 && (size_t)m->triangles[i] < m->vertex_count,
                      AM_E_VALUE, "mesh triangle %zu: vertex %d out of range (%zu vertices)", i / 3,
                      (int)m->triangles[i], m->vertex_count);
    }
    for (size_t i = 0; m->normals && i < m->vertex_count * 3; i++)
        AMI_CHECK(err, isfinite(m->normals[i]), AM_E_NONFINITE, "mesh vertex %zu normal", i / 3);
    for (size_t i = 0; m->tangents && i < m->vertex_count * 4; i++)
        AMI_CHECK(err, isfinite(m->tangents[i]), AM_E_NONFINITE, "mesh vertex %zu tangent", i / 4);
    for (size_t i = 0; m->texcoords1 && i < m->vertex_count * 2; i++)
        AMI_CHECK(err, isfinite(m->texcoords1[i]), AM_E_NONFINITE, "mesh vertex %zu TEXCOORD_1", i / 2);
    for (size_t i = 0; m->texcoords && i < m->vertex_count * 2; i++)
        AMI_CHECK(err, isfinite(m->texcoords[i]), AM_E_NONFINITE, "mesh vertex %zu texcoord", i / 2);
    assert(m->parts || m->part_count == 0);
    size_t next = 0;
    for (size_t p = 0; p < m->part_count; p++) {
        AMI_CHECK(err, m->parts[p].first_triangle == next && m->parts[p].triangle_count > 0 &&
                           m->parts[p].triangle_count <= m->triangle_count - next,
                  AM_E_VALUE, "mesh part %zu: triangles %zu + %zu do not follow the parts before (%zu of %zu)",
                  p, m->parts[p].first_triangle, m->parts[p].triangle_count, next, m->triangle_count);
        next += m->parts[p].triangle_count;
        AMI_CHECK(err, m->parts[p].material < 0 || m->look, AM_E_ARG, "mesh part %zu: a material without a look document", p);
    }
    AMI_CHECK(err, m->part_count == 0 || next == m->triangle_count, AM_E_VALUE,
              "mesh parts cover %zu of %zu triangles", next, m->triangle_count);
    AMI_CHECK(err, !m->look || m->look->source, AM_E_ARG,
              "the look document was loaded without AM_GLTF_KEEP_SOURCE");
    for (size_t i = 0; m->colors && i < m->vertex_count * 4; i++)
        AMI_CHECK(err, m->colors[i] >= 0.0f && m->colors[i] <= 1.0f, AM_E_VALUE,
                  "mesh vertex %zu: colour %g outside [0, 1]", i / 4, (double)m->colors[i]);
    for (size_t i = 0; m->base_colors && i < m->vertex_count * 4; i++)
        AMI_CHECK(err, m->base_colors[i] >= 0.0f && m->base_colors[i] <= 1.0f, AM_E_VALUE,
                  "mesh vertex %zu: its own colour %g outside [0, 1]", i / 4, (double)m->base_colors[i]);
    assert(m->texcoords_extra || m->texcoord_extra_count == 0);
    AMI_CHECK(err, m->texcoord_extra_count <= AM_GLTF_MAX_TEXCOORDS - 2, AM_E_ARG, "%zu extra UV sets (at most %d)",
              m->texcoord_extra_count, AM_GLTF_MAX_TEXCOORDS - 2);
    /* glTF numbers the sets of a semantic without gaps (the validator refuses TEXCOORD_2
     * without TEXCOORD_1) */
    AMI_CHECK(err, (!m->texcoords1 || m->texcoords) && (!m->texcoord_extra_count || m->texcoords1), AM_E_ARG,
              "UV sets with a gap: TEXCOORD_%d without the ones below", m->texcoord_extra_count ? 2 : 1);
    for (size_t u = 0; u < m->texcoord_extra_count; u++)
        for (size_t i = 0; i < m->vertex_count * 2; i++)
            AMI_CHECK(err, isfinite(m->texcoords_extra[u][i]), AM_E_NONFINITE, "mesh vertex %zu TEXCOORD_%zu", i / 2, u + 2);
    AMI_TRY(ami_check_mesh_nodes(m, err));
    size_t K = m->influences;
    for (size_t i = 0; i < m->vertex_count * K; i++) {
        AMI_CHECK(err, isfinite(m->weights[i]), AM_E_NONFINITE, "mesh vertex %zu weight", i / K);
        AMI_CHECK(err, m->bone_index[i] < 0 || (size_t)m->bone_index[i] < rig->bone_count, AM_E_VALUE,
                  "mesh vertex %zu: bone %d out of range (%zu bones)", i / K, (int)m->bone_index[i],
                  rig->bone_count);
    }
    return AM_OK;
}

/* ---- skin weights -------------------------------------------------------------------------- */

/* The 4 strongest influences of one vertex (slots with a negative bone or a weight <= 0 are
 * unused; repeated bones are merged because the validator rejects a joint listed twice),
 * normalized so that the float sum in slot order is exactly 1 as the validator adds it.
 * Unused slots get joint 0 weight 0; no influence at all binds the vertex to the root. */
static void ami_top4(const int32_t *bone, const float *w, size_t K, int32_t *scr_b, double *scr_w,
                     uint32_t jo[4], float wo[4])
{
    size_t n = 0;
    for (size_t k = 0; k < K; k++) {
        if (bone[k] < 0 || !(w[k] > 0)) continue;
        size_t e = 0;
        while (e < n && scr_b[e] != bone[k]) e++;
        if (e == n) {
            scr_b[n] = bone[k];
            scr_w[n++] = 0;
        }
        scr_w[e] += w[k];
    }
    /* Partial selection sort: heavier first, ties to the lower bone for determinism. */
    size_t keep = n < 4 ? n : 4;
    for (size_t i = 0; i < keep; i++) {
        size_t best = i;
        for (size_t e = i + 1; e < n; e++)
            if (scr_w[e] > scr_w[best] || (scr_w[e] == scr_w[best] && scr_b[e] < scr_b[best])) best = e;
        int32_t tb = scr_b[i];
        double tw = scr_w[i];
        scr_b[i] = scr_b[best];
        scr_w[i] = scr_w[best];
        scr_b[best] = tb;
        scr_w[best] = tw;
    }
    for (int k = 0; k < 4; k++) {
        jo[k] = 0;
        wo[k] = 0.0f;
    }
    double sum = 0;
    for (size_t i = 0; i < keep; i++) sum += scr_w[i];
    if (keep == 0 || !(sum > 0) || !isfinite(sum)) {
        wo[0] = 1.0f;
        return;
    }
    size_t n_out = 0;
    for (size_t i = 0; i < keep; i++) {
        float f = (float)(scr_w[i] / sum);
        if (f > 0.0f) { /* sorted heaviest first: a weight that rounds to 0 ends the list */
            jo[n_out] = (uint32_t)scr_b[i];
            wo[n_out++] = f;
        }
    }
    /* The last used slot takes 1 - (sum of the others) in float. The others sum to >= 1/2, so
     * by Sterbenz's lemma that subtraction is exact and the validator's running float sum
     * ((w0 + w1) + w2) + w3 comes out exactly 1. A residue <= 0 drops the slot. */
    while (n_out > 1) {
        float s = 0.0f;
        for (size_t k = 0; k + 1 < n_out; k++) s += wo[k];
        float last = 1.0f - s;
        if (last > 0.0f) {
            wo[n_out - 1] = last;
            break;
        }
        n_out--;
        jo[n_out] = 0;
        wo[n_out] = 0.0f;
    }
    if (n_out <= 1) {
        jo[0] = n_out ? jo[0] : 0;
        wo[0] = 1.0f;
    }
}

/* ---- generated bone-shape mesh ------------------------------------------------------------ */

/* Non-indexed flat-shaded triangles: 24 vertices per bone, rigidly bound to the bone. */
static void ami_bone_mesh(const am_rig *rig, const ami_frame *rest, float *pos, float *nrm,
                          uint32_t *joints, float *weights)
{
    int faces[AMI_BONE_FACES][3];
    ami_bone_faces(faces);
    size_t v = 0;
    for (size_t b = 0; b < rig->bone_count; b++) {
        double L = rig->length[b];
        for (int f = 0; f < AMI_BONE_FACES; f++) {
            double p[3][3];
            for (int k = 0; k < 3; k++) {
                double local[3];
                am_vec3_scale(ami_bone_verts[faces[f][k]], L, local);
                am_mat3_mul_vec3(rest[b].R, local, p[k]);
                am_vec3_add(p[k], rest[b].h, p[k]);
            }
            double e1[3], e2[3], n[3], nl[3];
            am_vec3_sub(ami_bone_verts[faces[f][1]], ami_bone_verts[faces[f][0]], e1);
            am_vec3_sub(ami_bone_verts[faces[f][2]], ami_bone_verts[faces[f][0]], e2);
            am_vec3_cross(e1, e2, nl);
            am_mat3_mul_vec3(rest[b].R, nl, n);
            am_vec3_normalize(n, n);
            for (int k = 0; k < 3; k++, v++) {
                for (size_t c = 0; c < 3; c++) {
                    pos[v * 3 + c] = (float)p[k][c];
                    nrm[v * 3 + c] = (float)n[c];
                }
                joints[v * 4] = (uint32_t)b;
                weights[v * 4] = 1.0f;
            }
        }
    }
}


/* ---- a document made from the rig ------------------------------------------------------------ */

/* The mesh nodes of the written model: the mesh's own, or one. */
static size_t ami_mesh_node_count(const am_gltf_export *ex)
{
    return ex->mesh && ex->mesh->node_count ? ex->mesh->node_count : 1;
}

/* Nodes: joints 0..B-1, the mesh nodes B..B+N-1 (mesh n each), then one "<bone>_end" node per
 * leaf bone at (0, length, 0) in its frame. The end nodes are not joints; they carry the leaf
 * tails, which no child head marks, so importers (ours, Blender's) recover every bone's length
 * exactly. scratch: [3][B] int32 (first child, next sibling, end node). */
static void ami_write_nodes(ami_jw *w, const am_gltf_export *ex, const ami_frame *rest, int32_t *scratch)
{
    const am_rig *rig = ex->rig;
    size_t N = ami_mesh_node_count(ex);
    size_t B = rig->bone_count;
    int32_t *first = scratch, *next = scratch + B, *end = scratch + 2 * B;
    for (size_t b = 0; b < B; b++) first[b] = next[b] = end[b] = -1;
    /* Children in bone order: insert from the back so each list comes out ascending. */
    for (size_t b = B; b-- > 1;) {
        int32_t p = rig->parent[b];
        next[b] = first[p];
        first[p] = (int32_t)b;
    }
    int32_t next_end = (int32_t)(B + N);
    for (size_t b = 0; b < B; b++)
        if (first[b] < 0) end[b] = next_end++;

    ami_jw_array(w, "nodes");
    for (size_t b = 0; b < B; b++) {
        ami_jw_record(w, NULL);
        ami_jw_string(w, "name", rig->bone_names[b]);
        ami_jw_row(w, "children");
        if (end[b] >= 0) ami_jw_int(w, NULL, end[b]);
        for (int32_t c = first[b]; c >= 0; c = next[c]) ami_jw_int(w, NULL, c);
        ami_jw_close(w);
        double q[4], t[3];
        ami_local(rig, rest, b, q, t);
        double xyzw[4] = {q[1], q[2], q[3], q[0]};
        static const size_t n3 = 3, n4 = 4;
        ami_jw_numbers(w, "translation", t, 1, &n3);
        ami_jw_numbers(w, "rotation", xyzw, 1, &n4);
        ami_jw_close(w);
    }
    for (size_t n = 0; n < N; n++) {
        const char *name = ex->mesh && ex->mesh->node_count ? ex->mesh->nodes[n].name : NULL;
        ami_jw_record(w, NULL);
        if (name || N == 1) ami_jw_string(w, "name", name ? name : rig->name ? rig->name : "skeleton");
        ami_jw_int(w, "mesh", (int64_t)n);
        ami_jw_int(w, "skin", 0);
        ami_jw_close(w);
    }
    am_buf name = {0};
    for (size_t b = 0; b < B; b++) {
        if (end[b] < 0) continue;
        name.len = 0;
        am_buf_printf(&name, "%s_end", rig->bone_names[b]);
        ami_jw_record(w, NULL);
        if (name.failed) w->out->failed = true;
        else ami_jw_string_n(w, "name", name.data, name.len);
        double t[3] = {0, rig->length[b], 0};
        static const size_t n3 = 3;
        ami_jw_numbers(w, "translation", t, 1, &n3);
        ami_jw_close(w);
    }
    am_buf_free(&name);
    ami_jw_close(w);
}
/* The accessors of one primitive (-1 if absent). */
typedef struct ami_attrs {
    int32_t position, normal, tangent, joints0, weights0, color0, color1, texcoord0, texcoord1, indices;
    int32_t texcoord_extra[AM_GLTF_MAX_TEXCOORDS - 2];
    int32_t *targets;        /* [target_count][3] POSITION, NORMAL, TANGENT deltas or -1 */
    size_t target_count;
} ami_attrs;

typedef struct ami_doc {
    int32_t ibm;
    ami_attrs whole;         /* the vertices shared by every primitive (without mesh nodes) */
    int32_t *part_indices;   /* [parts] index accessor of each part, when the mesh has parts */
    ami_attrs *prim;         /* [parts] each part's own accessors (with mesh nodes), else NULL */
    int mode;
    json_t *look;            /* the look document's JSON (materials, textures, ...), or NULL */
    int32_t *image_view;     /* [images of look] our view of an embedded image, else -1 */
} ami_doc;

static void ami_doc_free(ami_doc *d, size_t parts)
{
    for (size_t p = 0; d->prim && p < parts; p++) am_free(d->prim[p].targets);
    am_free(d->prim);
    am_free(d->part_indices);
    am_free(d->image_view);
    json_decref(d->look);
}

/* The vertex arrays of a mesh in glTF axes, ready to be written whole or by part. */
typedef struct ami_verts {
    const float *pos, *nrm, *tan4, *wts; /* [V][3], [V][3] or NULL, [V][4] or NULL, [V][4] */
    const uint32_t *jts;                 /* [V][4] */
    int joint_type;
} ami_verts;

/* Accessors of vertices [first, first + n): ours (converted in vt) and the mesh's own. The
 * limb paint is COLOR_0 (what renders show); the model's own colours then move to COLOR_1,
 * else they stay COLOR_0. */
static void ami_put_attrs(ami_gw *g, const am_gltf_mesh_in *m, const ami_verts *vt, size_t first, size_t n,
                          ami_attrs *a)
{
    a->position = ami_put_f32(g, vt->pos + first * 3, n, 3, AMI_GL_ARRAY_BUFFER, true);
    a->normal = vt->nrm ? ami_put_f32(g, vt->nrm + first * 3, n, 3, AMI_GL_ARRAY_BUFFER, false) : -1;
    a->tangent = vt->nrm && vt->tan4 ? ami_put_f32(g, vt->tan4 + first * 4, n, 4, AMI_GL_ARRAY_BUFFER, false) : -1;
    a->joints0 = ami_put_uint(g, vt->jts + first * 4, n, 4, vt->joint_type, AMI_GL_ARRAY_BUFFER);
    a->weights0 = ami_put_f32(g, vt->wts + first * 4, n, 4, AMI_GL_ARRAY_BUFFER, false);
    a->color0 = a->color1 = a->texcoord0 = a->texcoord1 = a->indices = -1;
    for (size_t u = 0; u < AM_GLTF_MAX_TEXCOORDS - 2; u++) a->texcoord_extra[u] = -1;
    if (!m) return;
    const float *c0 = m->colors ? m->colors : m->base_colors, *c1 = m->colors ? m->base_colors : NULL;
    if (c0) a->color0 = ami_put_f32(g, c0 + first * 4, n, 4, AMI_GL_ARRAY_BUFFER, false);
    if (c1) a->color1 = ami_put_f32(g, c1 + first * 4, n, 4, AMI_GL_ARRAY_BUFFER, false);
    if (m->texcoords) a->texcoord0 = ami_put_f32(g, m->texcoords + first * 2, n, 2, AMI_GL_ARRAY_BUFFER, false);
    if (m->texcoords1) a->texcoord1 = ami_put_f32(g, m->texcoords1 + first * 2, n, 2, AMI_GL_ARRAY_BUFFER, false);
    for (size_t u = 0; u < m->texcoord_extra_count; u++)
        a->texcoord_extra[u] = ami_put_f32(g, m->texcoords_extra[u] + first * 2, n, 2, AMI_GL_ARRAY_BUFFER, false);
}

/* A part's morph deltas in glTF axes (the axis change is linear, so deltas convert as
 * vectors); POSITION deltas with min/max, which the spec requires of them. NORMAL and TANGENT
 * deltas only where the base attribute is written. scratch: [vertex_count][3]. */
static am_status ami_put_targets(ami_gw *g, const am_gltf_mesh_part *pt, const ami_attrs *base, float *scratch,
                                 ami_attrs *a, am_error *err)
{
    a->target_count = pt->target_count;
    if (!pt->target_count) return AM_OK;
    a->targets = am_alloc_array(pt->target_count * 3, sizeof *a->targets);
    AMI_CHECK(err, a->targets, AM_E_NOMEM, "%zu morph targets", pt->target_count);
    const float *blocks[3] = {pt->target_positions, base->normal >= 0 ? pt->target_normals : NULL,
                              base->tangent >= 0 ? pt->target_tangents : NULL};
    size_t n = pt->vertex_count;
    for (size_t t = 0; t < pt->target_count; t++)
        for (size_t k = 0; k < 3; k++) {
            a->targets[t * 3 + k] = -1;
            if (!blocks[k]) continue;
            for (size_t v = 0; v < n; v++) {
                const float *q = blocks[k] + (t * n + v) * 3;
                double wd[3] = {q[0], q[1], q[2]}, gl[3];
                am_gltf_from_world(wd, gl);
                for (size_t c = 0; c < 3; c++) scratch[v * 3 + c] = (float)gl[c];
            }
            a->targets[t * 3 + k] = ami_put_f32(g, scratch, n, 3, AMI_GL_ARRAY_BUFFER, k == 0);
        }
    return AM_OK;
}

/* With mesh nodes: each part's own accessors (its slice of the vertices, its indices rebased
 * onto them, its morph targets). */
static am_status ami_put_parts(ami_gw *g, const am_gltf_mesh_in *m, const ami_verts *vt, const uint32_t *idx,
                               ami_doc *d, am_error *err)
{
    d->prim = am_alloc_array(m->part_count, sizeof *d->prim);
    d->part_indices = am_alloc_array(m->part_count, sizeof *d->part_indices);
    size_t most = 1;
    for (size_t p = 0; p < m->part_count; p++)
        if (m->parts[p].vertex_count > most) most = m->parts[p].vertex_count;
    float *scratch = am_alloc_array(most * 3, sizeof *scratch);
    uint32_t *local = NULL;
    am_status st = AM_OK;
    if (!d->prim || !d->part_indices || !scratch) {
        st = AM_FAIL(err, AM_E_NOMEM, "%zu mesh parts", m->part_count);
        goto done;
    }
    for (size_t p = 0; p < m->part_count; p++) {
        const am_gltf_mesh_part *pt = &m->parts[p];
        ami_attrs *a = &d->prim[p];
        ami_put_attrs(g, m, vt, pt->first_vertex, pt->vertex_count, a);
        size_t ni = pt->triangle_count * 3;
        am_free(local);
        if (!(local = am_alloc_array(ni, sizeof *local))) {
            st = AM_FAIL(err, AM_E_NOMEM, "%zu triangles", pt->triangle_count);
            goto done;
        }
        for (size_t i = 0; i < ni; i++) local[i] = idx[pt->first_triangle * 3 + i] - (uint32_t)pt->first_vertex;
        /* 65535 is the primitive-restart value of 16-bit indices, so it must not be used. */
        int itype = pt->vertex_count <= 65535 ? AMI_GL_UNSIGNED_SHORT : AMI_GL_UNSIGNED_INT;
        d->part_indices[p] = ami_put_uint(g, local, ni, 1, itype, AMI_GL_ELEMENT_ARRAY_BUFFER);
        if ((st = ami_put_targets(g, pt, a, scratch, a, err)) != AM_OK) goto done;
    }
done:
    am_free(scratch);
    am_free(local);
    return st;
}

static am_status ami_write_mesh_data(ami_gw *g, const am_gltf_export *ex, const ami_frame *rest,
                                     ami_doc *d, am_error *err)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count;
    const am_gltf_mesh_in *m = ex->mesh;
    size_t V = m ? m->vertex_count : B * AMI_BONE_FACES * 3;
    float *pos = am_alloc_array(V * 3, sizeof *pos);
    float *nrm = m ? NULL : am_alloc_array(V * 3, sizeof *nrm);
    float *tan4 = NULL; /* TANGENT in glTF axes, with normals only */
    float *wts = am_alloc_array(V * 4, sizeof *wts);
    uint32_t *jts = am_alloc_array(V * 4, sizeof *jts);
    int32_t *scr_b = NULL;
    double *scr_w = NULL;
    uint32_t *idx = NULL;
    am_status st = AM_OK;
    if (!pos || (!m && !nrm) || !wts || !jts) {
        st = AM_FAIL(err, AM_E_NOMEM, "mesh of %zu vertices", V);
        goto done;
    }
    d->mode = 4;
    if (!m) {
        ami_bone_mesh(rig, rest, pos, nrm, jts, wts);
    } else {
        size_t K = m->influences;
        scr_b = am_alloc_array(K ? K : 1, sizeof *scr_b);
        scr_w = am_alloc_array(K ? K : 1, sizeof *scr_w);
        if (!scr_b || !scr_w) {
            st = AM_FAIL(err, AM_E_NOMEM, "skin weights");
            goto done;
        }
        for (size_t v = 0; v < V; v++) {
            double w[3] = {m->positions[v * 3], m->positions[v * 3 + 1], m->positions[v * 3 + 2]}, gl[3];
            am_gltf_from_world(w, gl);
            for (size_t c = 0; c < 3; c++) pos[v * 3 + c] = (float)gl[c];
            ami_top4(K ? m->bone_index + v * K : NULL, K ? m->weights + v * K : NULL, K, scr_b, scr_w,
                     jts + v * 4, wts + v * 4);
        }
        if (m->triangle_count) {
            size_t n = m->triangle_count * 3;
            idx = am_alloc_array(n, sizeof *idx);
            if (!idx) {
                st = AM_FAIL(err, AM_E_NOMEM, "%zu triangles", m->triangle_count);
                goto done;
            }
            for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)m->triangles[i];
            if (m->normals) {
                nrm = am_alloc_array(V * 3, sizeof *nrm);
                tan4 = m->tangents ? am_alloc_array(V * 4, sizeof *tan4) : NULL;
                if (!nrm || (m->tangents && !tan4)) {
                    st = AM_FAIL(err, AM_E_NOMEM, "normals of %zu vertices", V);
                    goto done;
                }
                for (size_t v = 0; v < V; v++) {
                    double wn[3] = {m->normals[v * 3], m->normals[v * 3 + 1], m->normals[v * 3 + 2]}, gl[3];
                    am_gltf_from_world(wn, gl);
                    for (size_t c = 0; c < 3; c++) nrm[v * 3 + c] = (float)gl[c];
                    if (!tan4) continue;
                    const float *t = m->tangents + v * 4;
                    double wt[3] = {t[0], t[1], t[2]};
                    am_gltf_from_world(wt, gl);
                    for (size_t c = 0; c < 3; c++) tan4[v * 4 + c] = (float)gl[c];
                    tan4[v * 4 + 3] = t[3] < 0 ? -1.0f : 1.0f;
                }
            }
        } else {
            d->mode = 0;
        }
    }
    /* 256 bones would fit bytes too; the brief keeps bytes strictly below 256 bones. */
    ami_verts vt = {pos, nrm, tan4, wts, jts, B < 256 ? AMI_GL_UNSIGNED_BYTE : AMI_GL_UNSIGNED_SHORT};
    /* 65535 is the primitive-restart value of 16-bit indices, so it must not be used. */
    int itype = V <= 65535 ? AMI_GL_UNSIGNED_SHORT : AMI_GL_UNSIGNED_INT;
    if (idx && m->node_count) {
        st = ami_put_parts(g, m, &vt, idx, d, err);
        goto done;
    }
    ami_put_attrs(g, m, &vt, 0, V, &d->whole);
    if (idx && m->part_count) {
        d->part_indices = am_alloc_array(m->part_count, sizeof *d->part_indices);
        if (!d->part_indices) {
            st = AM_FAIL(err, AM_E_NOMEM, "%zu mesh parts", m->part_count);
            goto done;
        }
        for (size_t p = 0; p < m->part_count; p++)
            d->part_indices[p] = ami_put_uint(g, idx + m->parts[p].first_triangle * 3, m->parts[p].triangle_count * 3,
                                              1, itype, AMI_GL_ELEMENT_ARRAY_BUFFER);
    } else if (idx) {
        d->whole.indices = ami_put_uint(g, idx, m->triangle_count * 3, 1, itype, AMI_GL_ELEMENT_ARRAY_BUFFER);
    }
done:
    am_free(pos);
    am_free(nrm);
    am_free(tan4);
    am_free(wts);
    am_free(jts);
    am_free(scr_b);
    am_free(scr_w);
    am_free(idx);
    return st;
}

/* Inverse bind matrices: rigid inverses of the rest frames, column-major. */
static am_status ami_write_ibm(ami_gw *g, const am_rig *rig, const ami_frame *rest, ami_doc *d,
                               am_error *err)
{
    size_t B = rig->bone_count;
    float *m = am_alloc_array(B * 16, sizeof *m);
    if (!m) return AM_FAIL(err, AM_E_NOMEM, "inverse bind matrices");
    for (size_t b = 0; b < B; b++) {
        double Rt[9], t[3];
        am_mat3_transpose(rest[b].R, Rt);
        am_mat3_mul_vec3(Rt, rest[b].h, t);
        float *o = m + b * 16;
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) o[c * 4 + r] = (float)Rt[r * 3 + c];
            o[3 * 4 + r] = (float)-t[r];
            o[r * 4 + 3] = 0.0f;
        }
        o[15] = 1.0f;
    }
    d->ibm = ami_put_f32(g, m, B, 16, 0, false);
    am_free(m);
    return AM_OK;
}


/* One animation per clip: rotation keys of every joint node, translation keys of the root and
 * of the bones that slide. */
static am_status ami_write_clip(ami_gw *g, const am_gltf_export *ex, size_t c, am_error *err)
{
    const am_rig *rig = ex->rig;
    const am_motion *mo = ex->clips[c];
    size_t B = rig->bone_count, T = mo->frame_count;
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    ami_frame *fr = am_alloc_array(B, sizeof *fr);
    double *prevq = am_alloc_array(B * 4, sizeof *prevq);
    float *times = am_alloc_array(T, sizeof *times);
    float *tr = am_alloc_array(B * T * 3, sizeof *tr);
    float *rot = am_alloc_array(B * T * 4, sizeof *rot);
    uint8_t *moves = am_alloc_array(B, 1);
    am_status st = AM_OK;
    ami_ganim *an = NULL;
    if (!pose || !fr || !prevq || !times || !tr || !rot || !moves ||
        !(an = ami_anim_add(g, ex, c, 2 * B))) {
        st = AM_FAIL(err, AM_E_NOMEM, "clip %zu: %zu frames x %zu bones", c, T, B);
        goto done;
    }
    for (size_t b = 0; b < B; b++) moves[b] = rig->parent[b] < 0 || ami_bone_slides(mo, b);
    for (size_t t = 0; t < T; t++) {
        am_motion_pose(rig, mo, t, pose);
        if (!ami_finite(pose, B * 16)) {
            st = AM_FAIL(err, AM_E_NONFINITE, "clip %zu frame %zu: FK is not finite", c, t);
            goto done;
        }
        for (size_t b = 0; b < B; b++) ami_frame_from_pose(pose + b * 16, &fr[b]);
        for (size_t b = 0; b < B; b++) {
            double q[4], tl[3];
            ami_local(rig, fr, b, q, tl);
            if (t > 0) ami_quat_follow(q, prevq + b * 4);
            memcpy(prevq + b * 4, q, sizeof q);
            float *to = tr + (b * T + t) * 3, *ro = rot + (b * T + t) * 4;
            for (int k = 0; k < 3; k++) to[k] = (float)tl[k];
            ro[0] = (float)q[1];
            ro[1] = (float)q[2];
            ro[2] = (float)q[3];
            ro[3] = (float)q[0];
        }
    }
    an->input = ami_put_times(g, mo, times);
    for (size_t b = 0; b < B; b++) {
        if (moves[b]) ami_chan_add(an, (int32_t)b, AMI_PATH_T, ami_put_f32(g, tr + b * T * 3, T, 3, 0, false));
        ami_chan_add(an, (int32_t)b, AMI_PATH_R, ami_put_f32(g, rot + b * T * 4, T, 4, 0, false));
    }
done:
    am_free(pose);
    am_free(fr);
    am_free(prevq);
    am_free(times);
    am_free(tr);
    am_free(rot);
    am_free(moves);
    return st;
}

static void ami_jw_buffer(ami_jw *w, const ami_gw *g)
{
    ami_jw_array(w, "buffers");
    ami_jw_record(w, NULL);
    ami_jw_int(w, "byteLength", (int64_t)g->bin.len);
    ami_jw_close(w);
    ami_jw_close(w);
}

static void ami_jw_asset(ami_jw *w, const am_gltf_export *ex)
{
    ami_jw_string(w, "version", "2.0");
    ami_jw_string(w, "generator", ex->generator ? ex->generator : "anymove " AM_VERSION_STRING);
}

/* Members of object o but those in skip (NULL-terminated). */
static void ami_jw_members(ami_jw *w, const json_t *o, const char *const *skip)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        bool skipped = false;
        for (size_t i = 0; skip && skip[i] && !skipped; i++) skipped = strcmp(skip[i], key) == 0;
        if (!skipped) ami_jw_value(w, key, v);
    }
}

/* ---- the look of a source model (bind: materials, textures, samplers, images) ----------- */

/* The look document's JSON, and its images in our BIN: file images as read, bufferView images
 * copied out of their buffer (data: URIs stay in the JSON). */
static am_status ami_write_look(ami_gw *g, const am_gltf *look, ami_doc *d, am_error *err)
{
    const struct am_gltf_source *k = look->source;
    AMI_TRY(ami_json_parse(k->json, k->json_len, "look", &d->look, err));
    json_t *images = json_object_get(d->look, "images"), *views = json_object_get(d->look, "bufferViews");
    size_t n = json_array_size(images);
    d->image_view = am_alloc_array(n ? n : 1, sizeof *d->image_view);
    AMI_CHECK(err, d->image_view, AM_E_NOMEM, "%zu images", n);
    for (size_t i = 0; i < n; i++) {
        const json_t *im = json_array_get(images, i), *bv = json_object_get(im, "bufferView");
        const uint8_t *bytes = NULL;
        size_t len = 0;
        d->image_view[i] = -1;
        if (i < k->image_count && k->images[i]) {
            bytes = k->images[i], len = k->image_len[i];
        } else if (json_is_integer(bv)) {
            const json_t *v = json_array_get(views, (size_t)json_integer_value(bv));
            double buf = json_number_value(json_object_get(v, "buffer"));
            double off = json_number_value(json_object_get(v, "byteOffset"));
            double bl = json_number_value(json_object_get(v, "byteLength"));
            AMI_CHECK(err, v && buf >= 0 && buf < (double)k->buffer_count && off >= 0 && bl >= 0 &&
                               off + bl <= (double)k->buffer_len[(size_t)buf],
                      AM_E_FORMAT, "images[%zu]: its bufferView lies outside the buffers", i);
            bytes = k->buffers[(size_t)buf] + (size_t)off, len = (size_t)bl;
        }
        if (!bytes) continue;
        ami_bin_pad4(&g->bin);
        size_t offset = g->bin.len;
        am_buf_append(&g->bin, bytes, len);
        d->image_view[i] = ami_view(g, offset, len, 0);
    }
    ami_bin_pad4(&g->bin);
    AMI_CHECK(err, !g->bin.failed && !g->oom, AM_E_NOMEM, "%zu images", n);
    return AM_OK;
}

/* Names of the extensions that o (an object or array, recursively) uses, added to `used`. */
static void ami_look_extensions(const json_t *o, json_t *used)
{
    const char *key;
    json_t *v;
    size_t i;
    if (json_is_array(o)) {
        json_array_foreach((json_t *)o, i, v) ami_look_extensions(v, used);
        return;
    }
    if (!json_is_object(o)) return;
    json_t *ext = json_object_get(o, "extensions");
    if (json_is_object(ext)) json_object_foreach(ext, key, v) json_object_set_new(used, key, json_true());
    json_object_foreach((json_t *)o, key, v) ami_look_extensions(v, used);
}

/* materials, textures, samplers and images of the look (same indices), and the extensions they
 * use (a required one stays required). */
static void ami_jw_look(ami_jw *w, const ami_doc *d, const am_gltf *look)
{
    static const char *const arrays[] = {"materials", "textures", "samplers"};
    json_t *used = json_object();
    for (size_t a = 0; a < 3; a++) {
        json_t *v = json_object_get(d->look, arrays[a]);
        if (!json_array_size(v)) continue;
        ami_jw_value(w, arrays[a], v);
        ami_look_extensions(v, used);
    }
    json_t *images = json_object_get(d->look, "images");
    if (json_array_size(images)) {
        ami_jw_array(w, "images");
        for (size_t i = 0; i < json_array_size(images); i++) {
            const json_t *o = json_array_get(images, i);
            ami_look_extensions(o, used);
            if (d->image_view[i] < 0) {
                ami_jw_value(w, NULL, o);
                continue;
            }
            static const char *const file[] = {"uri", "mimeType", "bufferView", NULL};
            const char *mime = json_string_value(json_object_get(o, "mimeType"));
            if (!mime && i < look->source->image_count) mime = look->source->image_mime[i];
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, file);
            ami_jw_int(w, "bufferView", d->image_view[i]);
            if (mime) ami_jw_string(w, "mimeType", mime);
            ami_jw_close(w);
        }
        ami_jw_close(w);
    }
    if (json_object_size(used)) {
        const char *key;
        json_t *v;
        ami_jw_row(w, "extensionsUsed");
        json_object_foreach(used, key, v) ami_jw_string(w, NULL, key);
        ami_jw_close(w);
        json_t *req = json_object_get(d->look, "extensionsRequired");
        size_t nreq = 0, i;
        json_array_foreach(req, i, v) nreq += json_is_string(v) && json_object_get(used, json_string_value(v));
        if (nreq) {
            ami_jw_row(w, "extensionsRequired");
            json_array_foreach(req, i, v)
                if (json_is_string(v) && json_object_get(used, json_string_value(v)))
                    ami_jw_string(w, NULL, json_string_value(v));
            ami_jw_close(w);
        }
    }
    json_decref(used);
}

/* One primitive: its attributes, morph targets, indices and material, and (with colours) the
 * extras that tell pack which attribute is the limb paint and which the model's own colours. */
static void ami_jw_primitive(ami_jw *w, const am_gltf_mesh_in *m, const ami_attrs *a, int32_t indices,
                             int32_t material, int mode)
{
    ami_jw_record(w, NULL);
    ami_jw_record(w, "attributes");
    ami_jw_int(w, "POSITION", a->position);
    if (a->normal >= 0) ami_jw_int(w, "NORMAL", a->normal);
    if (a->tangent >= 0) ami_jw_int(w, "TANGENT", a->tangent);
    if (a->texcoord0 >= 0) ami_jw_int(w, "TEXCOORD_0", a->texcoord0);
    if (a->texcoord1 >= 0) ami_jw_int(w, "TEXCOORD_1", a->texcoord1);
    for (size_t u = 0; u < AM_GLTF_MAX_TEXCOORDS - 2 && a->texcoord_extra[u] >= 0; u++) {
        char key[16];
        snprintf(key, sizeof key, "TEXCOORD_%zu", u + 2);
        ami_jw_int(w, key, a->texcoord_extra[u]);
    }
    ami_jw_int(w, "JOINTS_0", a->joints0);
    ami_jw_int(w, "WEIGHTS_0", a->weights0);
    if (a->color0 >= 0) ami_jw_int(w, "COLOR_0", a->color0);
    if (a->color1 >= 0) ami_jw_int(w, "COLOR_1", a->color1);
    ami_jw_close(w);
    if (a->target_count) {
        static const char *const keys[3] = {"POSITION", "NORMAL", "TANGENT"};
        ami_jw_array(w, "targets");
        for (size_t t = 0; t < a->target_count; t++) {
            ami_jw_record(w, NULL);
            for (size_t k = 0; k < 3; k++)
                if (a->targets[t * 3 + k] >= 0) ami_jw_int(w, keys[k], a->targets[t * 3 + k]);
            ami_jw_close(w);
        }
        ami_jw_close(w);
    }
    if (indices >= 0) ami_jw_int(w, "indices", indices);
    if (material >= 0) ami_jw_int(w, "material", material);
    ami_jw_int(w, "mode", mode);
    if (m && (m->colors || m->base_colors)) {
        ami_jw_record(w, "extras");
        if (m->colors) ami_jw_string(w, "anymove_paint", "COLOR_0");
        if (m->base_colors) ami_jw_string(w, "anymove_colors", m->colors ? "COLOR_1" : "COLOR_0");
        ami_jw_close(w);
    }
    ami_jw_close(w);
}

/* The meshes: one of every part (or the bone shapes), or one per mesh node with its parts, its
 * default morph weights and its target names (extras.targetNames, as exporters write them). */
static void ami_jw_meshes(ami_jw *w, const am_gltf_export *ex, const ami_doc *d)
{
    const am_gltf_mesh_in *m = ex->mesh;
    ami_jw_array(w, "meshes");
    if (!m || !m->node_count) {
        ami_jw_object(w, NULL);
        ami_jw_string(w, "name", m ? "mesh" : "bones");
        ami_jw_array(w, "primitives");
        size_t prims = d->part_indices ? m->part_count : 1;
        for (size_t p = 0; p < prims; p++)
            ami_jw_primitive(w, m, &d->whole, d->part_indices ? d->part_indices[p] : d->whole.indices,
                             d->part_indices && d->look ? m->parts[p].material : -1, d->mode);
        ami_jw_close(w);
        ami_jw_close(w);
    }
    for (size_t n = 0; m && n < m->node_count; n++) {
        const am_gltf_mesh_node *nd = &m->nodes[n];
        ami_jw_object(w, NULL);
        if (nd->mesh_name) ami_jw_string(w, "name", nd->mesh_name);
        ami_jw_array(w, "primitives");
        for (size_t p = nd->first_part; p < nd->first_part + nd->part_count; p++)
            ami_jw_primitive(w, m, &d->prim[p], d->part_indices[p], d->look ? m->parts[p].material : -1, d->mode);
        ami_jw_close(w);
        if (nd->target_count && nd->target_weights) {
            ami_jw_row(w, "weights");
            for (size_t t = 0; t < nd->target_count; t++) ami_jw_number(w, NULL, nd->target_weights[t]);
            ami_jw_close(w);
        }
        if (nd->target_count && nd->target_names) {
            ami_jw_record(w, "extras");
            ami_jw_row(w, "targetNames");
            for (size_t t = 0; t < nd->target_count; t++)
                ami_jw_string(w, NULL, nd->target_names[t] ? nd->target_names[t] : "");
            ami_jw_close(w);
            ami_jw_close(w);
        }
        ami_jw_close(w);
    }
    ami_jw_close(w);
}

static am_status ami_write_rig_doc(const am_gltf_export *ex, ami_gw *g, ami_jw *w, am_error *err)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count;
    if (ex->mesh) AMI_TRY(ami_check_mesh(rig, ex->mesh, err));
    ami_doc d = {0};
    ami_frame *rest = am_alloc_array(B, sizeof *rest);
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    int32_t *tree = am_alloc_array(B * 3, sizeof *tree);
    am_status st = AM_OK;
    if (!rest || !pose || !tree) {
        st = AM_FAIL(err, AM_E_NOMEM, "rest pose of %zu bones", B);
        goto done;
    }
    am_rig_rest_pose(rig, pose);
    for (size_t b = 0; b < B; b++) ami_frame_from_pose(pose + b * 16, &rest[b]);

    if ((st = ami_write_ibm(g, rig, rest, &d, err)) != AM_OK) goto done;
    if ((st = ami_write_mesh_data(g, ex, rest, &d, err)) != AM_OK) goto done;
    if (ex->mesh && ex->mesh->look && (st = ami_write_look(g, ex->mesh->look, &d, err)) != AM_OK) goto done;
    for (size_t c = 0; c < ex->clip_count; c++) {
        if (!ami_progress("glTF write", (double)c / (double)ex->clip_count)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "glTF writing stopped at clip %zu", c);
            goto done;
        }
        if ((st = ami_write_clip(g, ex, c, err)) != AM_OK) goto done;
    }

    ami_jw_object(w, NULL);
    ami_jw_record(w, "asset");
    ami_jw_asset(w, ex);
    ami_jw_close(w);
    ami_jw_int(w, "scene", 0);
    ami_jw_array(w, "scenes");
    ami_jw_record(w, NULL);
    ami_jw_row(w, "nodes");
    ami_jw_int(w, NULL, 0);
    for (size_t n = 0; n < ami_mesh_node_count(ex); n++) ami_jw_int(w, NULL, (int64_t)(B + n));
    ami_jw_close(w);
    ami_jw_close(w);
    ami_jw_close(w);
    ami_write_nodes(w, ex, rest, tree);
    ami_jw_array(w, "skins");
    ami_jw_record(w, NULL);
    ami_jw_string(w, "name", rig->name ? rig->name : "rig");
    ami_jw_int(w, "inverseBindMatrices", d.ibm);
    ami_jw_int(w, "skeleton", 0);
    ami_jw_row(w, "joints");
    for (size_t b = 0; b < B; b++) ami_jw_int(w, NULL, (int64_t)b);
    ami_jw_close(w);
    ami_jw_close(w);
    ami_jw_close(w);
    ami_jw_meshes(w, ex, &d);
    if (d.look) ami_jw_look(w, &d, ex->mesh->look);
    if (g->anim_count) {
        ami_jw_array(w, "animations");
        ami_jw_animations(w, g, 0);
        ami_jw_close(w);
    }
    ami_jw_array(w, "accessors");
    ami_jw_accessors(w, g, 0);
    ami_jw_close(w);
    ami_jw_array(w, "bufferViews");
    ami_jw_views(w, g);
    ami_jw_close(w);
    ami_jw_buffer(w, g);
    ami_jw_close(w);
done:
    ami_doc_free(&d, ex->mesh ? ex->mesh->part_count : 0);
    am_free(rest);
    am_free(pose);
    am_free(tree);
    return st;
}

/* ---- a source document with our clips ("keep the character") -------------------------------- */

/* Source state: the bone -> joint node map, bind matrices and the rig's scale over them. */
typedef struct ami_src {
    const am_gltf *doc;
    int32_t *bone_node;    /* [B] */
    double *bind;          /* [B][16] glTF axes */
    int32_t *node_bone;    /* [nodes] bone of a joint node, else -1 */
    double scale;          /* rig metres per document unit */
    size_t buffer_count;
    size_t *buffer_base;   /* [buffers] offset of each source buffer in our BIN */
    int32_t *image_view;   /* [images] our view of a file image, else -1 */
    uint8_t *to_root;      /* [nodes] a skinned mesh node moved to the scene roots */
} ami_src;

static void ami_src_free(ami_src *s)
{
    am_free(s->bone_node);
    am_free(s->bind);
    am_free(s->node_bone);
    am_free(s->buffer_base);
    am_free(s->image_view);
    am_free(s->to_root);
}

/* The rig must be the skin's skeleton, at most uniformly scaled (convert --scale): find the
 * scale from the spread of the heads about their centroid and check every head. */
static am_status ami_src_scale(const am_rig *rig, ami_src *s, am_error *err)
{
    size_t B = rig->bone_count;
    double hc[3] = {0, 0, 0}, gc[3] = {0, 0, 0}, hh = 0, gg = 0, size = 0;
    double *g = am_alloc_array(B, 3 * sizeof *g);
    AMI_CHECK(err, g, AM_E_NOMEM, "%zu bind positions", B);
    for (size_t b = 0; b < B; b++) {
        const double *B16 = s->bind + 16 * b;
        double o[3] = {B16[3], B16[7], B16[11]};
        am_gltf_to_world(o, g + 3 * b);
        am_vec3_add(hc, rig->joint_rest + 3 * (size_t)rig->head_joint[b], hc);
        am_vec3_add(gc, g + 3 * b, gc);
    }
    am_vec3_scale(hc, 1.0 / (double)B, hc);
    am_vec3_scale(gc, 1.0 / (double)B, gc);
    for (size_t b = 0; b < B; b++) {
        double dh[3], dg[3];
        am_vec3_sub(rig->joint_rest + 3 * (size_t)rig->head_joint[b], hc, dh);
        am_vec3_sub(g + 3 * b, gc, dg);
        hh += am_vec3_dot(dh, dh);
        gg += am_vec3_dot(dg, dg);
        size = fmax(size, am_vec3_norm(dh));
    }
    s->scale = gg > 0 && hh > 0 ? sqrt(hh / gg) : 1.0;
    /* An unscaled rig keeps exactly the document's units. */
    if (fabs(s->scale - 1.0) < 1e-9) s->scale = 1.0;
    am_status st = AM_OK;
    for (size_t b = 0; b < B && st == AM_OK; b++) {
        double want[3];
        am_vec3_scale(g + 3 * b, s->scale, want);
        double d = am_vec3_dist(want, rig->joint_rest + 3 * (size_t)rig->head_joint[b]);
        if (!(d <= 1e-6 * size + 1e-12))
            st = AM_FAIL(err, AM_E_VALUE,
                         "bone '%s' is %.3g m from its joint node: the rig is not the skeleton of "
                         "the source model (make it from that model)",
                         rig->bone_names[b], d);
    }
    am_free(g);
    return st;
}

/* The world matrix of joint node bone_node[b] (glTF axes) for the rig pose P: C S C^-1 Bind
 * with S = P(b) M_rest(b)^-1 in document units. */
static void ami_src_joint_world(const am_rig *rig, const ami_src *s, const double *pose, size_t b,
                                double W[16])
{
    double S[16], Sg[16];
    am_mat4_mul(pose + 16 * b, rig->rest_inv + 16 * b, S);
    S[3] /= s->scale, S[7] /= s->scale, S[11] /= s->scale;
    /* C = (x, y, z) -> (x, z, -y): conjugate the rotation and convert the translation. */
    static const double C[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
    double R[9], RC[9], Rg[9], Ct[9], t[3], tg[3];
    am_mat4_get_rot(S, R);
    am_mat3_transpose(C, Ct);
    am_mat3_mul(C, R, RC);
    am_mat3_mul(RC, Ct, Rg);
    am_mat4_get_trans(S, t);
    am_gltf_from_world(t, tg);
    am_mat4_from_rt(Rg, tg, Sg);
    am_mat4_mul(Sg, s->bind + 16 * b, W);
}

/* One animation per clip over the document's joint nodes: rotation keys for each, translation
 * and scale keys where they leave the node's rest value. */
static am_status ami_write_source_clip(ami_gw *g, const am_gltf_export *ex, const ami_src *s,
                                       size_t c, am_error *err)
{
    const am_rig *rig = ex->rig;
    const am_gltf *doc = s->doc;
    const am_motion *mo = ex->clips[c];
    size_t B = rig->bone_count, T = mo->frame_count, N = doc->node_count;
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    double *world = am_alloc_array(N, 16 * sizeof *world);
    double *prevq = am_alloc_array(B * 4, sizeof *prevq);
    float *times = am_alloc_array(T, sizeof *times);
    float *trs = am_alloc_array(B * T, 10 * sizeof *trs); /* [B][T] t3, r4 (xyzw), s3 */
    uint8_t *keys = am_alloc_array(B, 1);                  /* bit 1: translation, 2: scale */
    am_status st = AM_OK;
    ami_ganim *an = NULL;
    if (!pose || !world || !prevq || !times || !trs || !keys ||
        !(an = ami_anim_add(g, ex, c, 3 * B))) {
        st = AM_FAIL(err, AM_E_NOMEM, "clip %zu: %zu frames x %zu joints", c, T, B);
        goto done;
    }
    /* Translation keys matter beyond a millionth of the largest joint offset. */
    double span = 0;
    for (size_t b = 0; b < B; b++) span = fmax(span, am_vec3_norm(doc->nodes[s->bone_node[b]].translation));
    double tol_t = 1e-6 * span + 1e-30;
    for (size_t t = 0; t < T; t++) {
        am_motion_pose(rig, mo, t, pose);
        for (size_t q = 0; q < N; q++) {
            int32_t n = doc->node_order ? doc->node_order[q] : (int32_t)q;
            const am_gltf_node *nd = &doc->nodes[n];
            double *Wn = world + 16 * (size_t)n, L[16], Pinv[16];
            int32_t b = s->node_bone[n];
            if (b < 0) {
                if (nd->parent < 0) memcpy(Wn, nd->matrix, sizeof L);
                else am_mat4_mul(world + 16 * (size_t)nd->parent, nd->matrix, Wn);
                continue;
            }
            ami_src_joint_world(rig, s, pose, (size_t)b, Wn);
            if (nd->parent < 0) memcpy(L, Wn, sizeof L);
            else if (am_mat4_inverse(world + 16 * (size_t)nd->parent, Pinv)) am_mat4_mul(Pinv, Wn, L);
            else {
                st = AM_FAIL(err, AM_E_DEGENERATE, "node %d: singular parent transform", n);
                goto done;
            }
            double tl[3], q4[4], sc[3];
            ami_gltf_decompose(L, tl, q4, sc);
            if (!ami_finite(tl, 3) || !ami_finite(q4, 4) || !ami_finite(sc, 3)) {
                st = AM_FAIL(err, AM_E_NONFINITE, "clip %zu frame %zu: FK is not finite", c, t);
                goto done;
            }
            am_quat_normalize(q4, q4);
            if (t > 0) ami_quat_follow(q4, prevq + 4 * (size_t)b);
            memcpy(prevq + 4 * (size_t)b, q4, sizeof q4);
            float *o = trs + ((size_t)b * T + t) * 10;
            for (int k = 0; k < 3; k++) {
                o[k] = (float)tl[k];
                o[7 + k] = (float)sc[k];
                if (fabs(tl[k] - nd->translation[k]) > tol_t) keys[b] |= 1;
                if (fabs(sc[k] - nd->scale[k]) > 1e-6 * fabs(nd->scale[k]) + 1e-12) keys[b] |= 2;
            }
            o[3] = (float)q4[1], o[4] = (float)q4[2], o[5] = (float)q4[3], o[6] = (float)q4[0];
        }
    }
    an->input = ami_put_times(g, mo, times);
    float *row = am_alloc_array(T, 4 * sizeof *row);
    if (!row) {
        st = AM_FAIL(err, AM_E_NOMEM, "clip %zu keys", c);
        goto done;
    }
    for (size_t b = 0; b < B; b++) {
        static const size_t first[3] = {0, 3, 7}, width[3] = {3, 4, 3};
        for (int path = AMI_PATH_T; path <= AMI_PATH_S; path++) {
            if ((path == AMI_PATH_T && !(keys[b] & 1)) || (path == AMI_PATH_S && !(keys[b] & 2))) continue;
            for (size_t t = 0; t < T; t++)
                memcpy(row + t * width[path], trs + (b * T + t) * 10 + first[path],
                       width[path] * sizeof *row);
            ami_chan_add(an, s->bone_node[b], path, ami_put_f32(g, row, T, width[path], 0, false));
        }
    }
    am_free(row);
done:
    am_free(pose);
    am_free(world);
    am_free(prevq);
    am_free(times);
    am_free(trs);
    am_free(keys);
    return st;
}

/* Source buffers into our BIN (8-aligned starts keep every view's alignment), then the images
 * that were files. */
static am_status ami_src_bin(ami_gw *g, ami_src *s, am_error *err)
{
    const struct am_gltf_source *k = s->doc->source;
    s->buffer_count = k->buffer_count;
    s->buffer_base = am_alloc_array(k->buffer_count ? k->buffer_count : 1, sizeof *s->buffer_base);
    s->image_view = am_alloc_array(k->image_count ? k->image_count : 1, sizeof *s->image_view);
    AMI_CHECK(err, s->buffer_base && s->image_view, AM_E_NOMEM, "source buffers");
    static const char zeros[8] = {0};
    for (size_t i = 0; i < k->buffer_count; i++) {
        if (g->bin.len & 7u) am_buf_append(&g->bin, zeros, 8 - (g->bin.len & 7u));
        s->buffer_base[i] = g->bin.len;
        am_buf_append(&g->bin, k->buffers[i], k->buffer_len[i]);
    }
    for (size_t i = 0; i < k->image_count; i++) {
        s->image_view[i] = -1;
        if (!k->images[i]) continue;
        ami_bin_pad4(&g->bin);
        size_t offset = g->bin.len;
        am_buf_append(&g->bin, k->images[i], k->image_len[i]);
        s->image_view[i] = ami_view(g, offset, k->image_len[i], 0);
    }
    ami_bin_pad4(&g->bin);
    AMI_CHECK(err, !g->bin.failed && !g->oom, AM_E_NOMEM, "%zu bytes of buffers", g->bin.len);
    return AM_OK;
}

static int32_t ami_top_node(const am_gltf *doc, int32_t n)
{
    while (doc->nodes[n].parent >= 0) n = doc->nodes[n].parent;
    return n;
}

static bool ami_skeleton_is_root(const am_gltf *doc, const am_gltf_skin *sk)
{
    if (sk->skeleton < 0) return true;
    for (size_t j = 0; j < sk->joint_count; j++) {
        int32_t n = sk->joints[j];
        while (n >= 0 && n != sk->skeleton) n = doc->nodes[n].parent;
        if (n < 0) return false;
    }
    return true;
}

/* A node's TRS as the file gave it, or from its matrix for a node we animate (an animated node
 * must not have a matrix, glTF 2.0 5.25). */
static void ami_jw_src_trs(ami_jw *w, const json_t *o, const am_gltf_node *nd, bool animated)
{
    static const size_t n3 = 3, n4 = 4;
    if (!nd->has_matrix) {
        static const char *const keys[] = {"translation", "rotation", "scale"};
        for (size_t k = 0; k < 3; k++) {
            json_t *v = json_object_get(o, keys[k]);
            if (v) ami_jw_value(w, keys[k], v);
        }
        return;
    }
    if (!animated) {
        ami_jw_value(w, "matrix", json_object_get(o, "matrix"));
        return;
    }
    double xyzw[4] = {nd->rotation[1], nd->rotation[2], nd->rotation[3], nd->rotation[0]};
    ami_jw_numbers(w, "translation", nd->translation, 1, &n3);
    ami_jw_numbers(w, "rotation", xyzw, 1, &n4);
    ami_jw_numbers(w, "scale", nd->scale, 1, &n3);
}

/* Whether bind marked the paint or the colours of any primitive (its extras). */
static bool ami_paint_marked(const json_t *meshes)
{
    size_t i, k;
    json_t *me, *pr;
    json_array_foreach((json_t *)meshes, i, me) json_array_foreach(json_object_get(me, "primitives"), k, pr) {
        const json_t *x = json_object_get(pr, "extras");
        if (json_object_get(x, "anymove_paint") || json_object_get(x, "anymove_colors")) return true;
    }
    return false;
}

/* The source's meshes with drop_attribute taken out of every primitive, and with remove_paint
 * the paint bind marked (its accessor stays, unused) and the model's own colours bind moved
 * beside it back as COLOR_0; the marks go. An unmarked document (bound before the marks) loses
 * COLOR_0, which bind then always gave the paint. */
static void ami_jw_meshes_unpainted(ami_jw *w, const am_gltf_export *ex, const json_t *meshes)
{
    static const char *const prim_skip[] = {"attributes", "extras", NULL};
    static const char *const marks[] = {"anymove_paint", "anymove_colors", NULL};
    static const char *const prims[] = {"primitives", NULL};
    bool marked = ex->remove_paint && ami_paint_marked(meshes);
    ami_jw_array(w, "meshes");
    for (size_t i = 0; i < json_array_size(meshes); i++) {
        const json_t *me = json_array_get(meshes, i), *pl = json_object_get(me, "primitives");
        ami_jw_object(w, NULL);
        ami_jw_members(w, me, prims);
        ami_jw_array(w, "primitives");
        for (size_t k = 0; k < json_array_size(pl); k++) {
            const json_t *pr = json_array_get(pl, k), *at = json_object_get(pr, "attributes");
            const json_t *x = json_object_get(pr, "extras");
            const char *paint = !ex->remove_paint ? NULL
                                : marked          ? json_string_value(json_object_get(x, "anymove_paint"))
                                                  : "COLOR_0";
            const char *colors = marked ? json_string_value(json_object_get(x, "anymove_colors")) : NULL;
            const char *const drop[] = {ex->drop_attribute ? ex->drop_attribute : "", paint ? paint : "",
                                        colors ? colors : "", colors ? "COLOR_0" : "", NULL};
            ami_jw_object(w, NULL);
            ami_jw_members(w, pr, prim_skip);
            ami_jw_object(w, "attributes");
            if (json_is_object(at)) ami_jw_members(w, at, drop);
            const json_t *own = colors ? json_object_get(at, colors) : NULL;
            if (own) ami_jw_value(w, "COLOR_0", own);
            ami_jw_close(w);
            if (x && (!ex->remove_paint || !json_is_object(x))) {
                ami_jw_value(w, "extras", x);
            } else if (x && json_object_size(x) > (size_t)(json_object_get(x, marks[0]) != NULL) +
                                                     (size_t)(json_object_get(x, marks[1]) != NULL)) {
                ami_jw_object(w, "extras");
                ami_jw_members(w, x, marks);
                ami_jw_close(w);
            }
            ami_jw_close(w);
        }
        ami_jw_close(w);
        ami_jw_close(w);
    }
    ami_jw_close(w);
}

/* The document's JSON with our buffer, views, accessors, images and animations. */
static void ami_jw_source(ami_jw *w, const am_gltf_export *ex, const ami_gw *g, const ami_src *s,
                          const json_t *root)
{
    const am_gltf *doc = s->doc;
    json_t *views = json_object_get(root, "bufferViews"), *accs = json_object_get(root, "accessors");
    size_t view_base = json_array_size(views), acc_base = json_array_size(accs);
    static const char *const ours[] = {"asset", "buffers", "bufferViews", "accessors", "images",
                                       "animations", "nodes", "scenes", "skins", NULL};
    static const char *const ours_meshes[] = {"asset", "buffers", "bufferViews", "accessors", "images",
                                              "animations", "nodes", "scenes", "skins", "meshes", NULL};
    ami_jw_object(w, NULL);
    ami_jw_object(w, "asset");
    ami_jw_asset(w, ex);
    json_t *asset = json_object_get(root, "asset");
    static const char *const asset_ours[] = {"version", "generator", NULL};
    if (json_is_object(asset)) ami_jw_members(w, asset, asset_ours);
    ami_jw_close(w);
    bool edit = ex->drop_attribute || ex->remove_paint;
    ami_jw_members(w, root, edit ? ours_meshes : ours);
    json_t *meshes = json_object_get(root, "meshes");
    if (edit && meshes) ami_jw_meshes_unpainted(w, ex, meshes);

    ami_jw_array(w, "nodes");
    json_t *nodes = json_object_get(root, "nodes");
    static const char *const trs[] = {"matrix", "translation", "rotation", "scale", NULL};
    static const char *const trs_children[] = {"matrix", "translation", "rotation", "scale",
                                               "children", NULL};
    for (size_t n = 0; n < json_array_size(nodes); n++) {
        const json_t *o = json_array_get(nodes, n);
        const am_gltf_node *nd = &doc->nodes[n];
        bool loses_child = false;
        for (size_t k = 0; k < nd->child_count; k++) loses_child |= s->to_root[nd->children[k]] != 0;
        if (s->to_root[n]) {
            /* Skinning ignores a skinned mesh node's transform (glTF 2.0 3.7.3.3). */
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, trs);
            ami_jw_close(w);
        } else if (loses_child) {
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, trs_children);
            bool any = false;
            for (size_t k = 0; k < nd->child_count; k++) any |= !s->to_root[nd->children[k]];
            if (any) {
                ami_jw_row(w, "children");
                for (size_t k = 0; k < nd->child_count; k++)
                    if (!s->to_root[nd->children[k]]) ami_jw_int(w, NULL, nd->children[k]);
                ami_jw_close(w);
            }
            ami_jw_src_trs(w, o, nd, s->node_bone[n] >= 0);
            ami_jw_close(w);
        } else if (s->node_bone[n] >= 0 && nd->has_matrix) {
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, trs);
            ami_jw_src_trs(w, o, nd, true);
            ami_jw_close(w);
        } else {
            ami_jw_value(w, NULL, o);
        }
    }
    ami_jw_close(w);

    /* Moved skinned meshes join the scenes of their former top node. */
    json_t *scenes = json_object_get(root, "scenes");
    if (scenes) {
        ami_jw_array(w, "scenes");
        for (size_t i = 0; i < json_array_size(scenes); i++) {
            const json_t *o = json_array_get(scenes, i), *list = json_object_get(o, "nodes");
            static const char *const sn[] = {"nodes", NULL};
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, sn);
            if (list) {
                ami_jw_row(w, "nodes");
                for (size_t k = 0; k < json_array_size(list); k++) {
                    int32_t top = (int32_t)json_number_value(json_array_get(list, k));
                    ami_jw_int(w, NULL, top);
                    for (size_t n = 0; n < doc->node_count; n++)
                        if (s->to_root[n] && ami_top_node(doc, (int32_t)n) == top && (int32_t)n != top)
                            ami_jw_int(w, NULL, (int64_t)n);
                }
                ami_jw_close(w);
            }
            ami_jw_close(w);
        }
        ami_jw_close(w);
    }
    /* A skeleton that is not a common root of its joints is an invalid hint: dropped. */
    json_t *skins = json_object_get(root, "skins");
    if (skins) {
        ami_jw_array(w, "skins");
        for (size_t i = 0; i < json_array_size(skins); i++) {
            const json_t *o = json_array_get(skins, i);
            static const char *const sk[] = {"skeleton", NULL};
            if (i < doc->skin_count && !ami_skeleton_is_root(doc, &doc->skins[i])) {
                ami_jw_object(w, NULL);
                ami_jw_members(w, o, sk);
                ami_jw_close(w);
            } else {
                ami_jw_value(w, NULL, o);
            }
        }
        ami_jw_close(w);
    }

    json_t *images = json_object_get(root, "images");
    if (json_array_size(images)) {
        ami_jw_array(w, "images");
        for (size_t i = 0; i < json_array_size(images); i++) {
            const json_t *o = json_array_get(images, i);
            if (s->image_view[i] < 0) {
                ami_jw_value(w, NULL, o);
                continue;
            }
            static const char *const file[] = {"uri", "mimeType", "bufferView", NULL};
            ami_jw_object(w, NULL);
            ami_jw_members(w, o, file);
            ami_jw_int(w, "bufferView", (int64_t)(view_base + (size_t)s->image_view[i]));
            ami_jw_string(w, "mimeType", doc->source->image_mime[i]);
            ami_jw_close(w);
        }
        ami_jw_close(w);
    }
    if (g->anim_count) {
        ami_jw_array(w, "animations");
        ami_jw_animations(w, g, acc_base);
        ami_jw_close(w);
    }
    ami_jw_array(w, "accessors");
    for (size_t i = 0; i < acc_base; i++) ami_jw_value(w, NULL, json_array_get(accs, i));
    ami_jw_accessors(w, g, view_base);
    ami_jw_close(w);
    ami_jw_array(w, "bufferViews");
    for (size_t i = 0; i < view_base; i++) {
        const json_t *o = json_array_get(views, i);
        size_t buf = (size_t)json_number_value(json_object_get(o, "buffer"));
        json_t *off = json_object_get(o, "byteOffset");
        double base = (double)s->buffer_base[buf] + (off ? json_number_value(off) : 0.0);
        static const char *const where[] = {"buffer", "byteOffset", NULL};
        ami_jw_object(w, NULL);
        ami_jw_int(w, "buffer", 0);
        ami_jw_int(w, "byteOffset", (int64_t)base);
        ami_jw_members(w, o, where);
        ami_jw_close(w);
    }
    ami_jw_views(w, g);
    ami_jw_close(w);
    ami_jw_buffer(w, g);
    ami_jw_close(w);
}

static am_status ami_write_source_doc(const am_gltf_export *ex, ami_gw *g, ami_jw *w, am_error *err)
{
    const am_gltf *doc = ex->source;
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count, N = doc->node_count;
    AMI_CHECK(err, doc->source, AM_E_ARG,
              "the source document was loaded without AM_GLTF_KEEP_SOURCE");
    AMI_CHECK(err, !ex->mesh, AM_E_ARG, "a source document brings its own meshes: mesh must be NULL");
    int skin = ex->source_skin < 0 ? 0 : ex->source_skin;
    AMI_CHECK(err, (size_t)skin < doc->skin_count, AM_E_ARG, "skin %d: the source has %zu skins", skin,
              doc->skin_count);
    ami_src s = {.doc = doc};
    json_t *root = NULL;
    am_status st = AM_OK;
    s.bone_node = am_alloc_array(B, sizeof *s.bone_node);
    s.bind = am_alloc_array(B, 16 * sizeof *s.bind);
    s.node_bone = am_alloc_array(N ? N : 1, sizeof *s.node_bone);
    if (!s.bone_node || !s.bind || !s.node_bone) {
        st = AM_FAIL(err, AM_E_NOMEM, "source skeleton of %zu bones", B);
        goto done;
    }
    if ((st = ami_gltf_skin_binding(doc, skin, rig, s.bone_node, s.bind, err)) != AM_OK) goto done;
    if ((st = ami_src_scale(rig, &s, err)) != AM_OK) goto done;
    s.to_root = am_alloc_array(N ? N : 1, 1);
    if (!s.to_root) {
        st = AM_FAIL(err, AM_E_NOMEM, "%zu nodes", N);
        goto done;
    }
    for (size_t n = 0; n < N; n++) {
        /* The validator warns about a skinned mesh node that has a parent or a transform,
         * which skinning ignores; one without children is moved to the scene roots, which
         * shows the same (three.js binds skins with an identity matrix too). */
        const am_gltf_node *nd = &doc->nodes[n];
        double I[16];
        am_mat4_identity(I);
        s.to_root[n] = nd->skin >= 0 && nd->mesh >= 0 && nd->child_count == 0 &&
                       (nd->parent >= 0 || memcmp(nd->matrix, I, sizeof I) != 0);
    }
    for (size_t n = 0; n < N; n++) s.node_bone[n] = -1;
    for (size_t b = 0; b < B; b++) s.node_bone[s.bone_node[b]] = (int32_t)b;
    if ((st = ami_json_parse(doc->source->json, doc->source->json_len, "source", &root, err)) != AM_OK)
        goto done;
    /* Views into several buffers become views into one; an extension that names buffers
     * itself (EXT_meshopt_compression) would keep pointing at the old ones. */
    json_t *views = json_object_get(root, "bufferViews");
    for (size_t i = 0; i < json_array_size(views); i++) {
        const json_t *o = json_array_get(views, i);
        /* The reader checked the index; it may be written as an integral real. */
        double buf = json_number_value(json_object_get(o, "buffer"));
        if (json_object_get(o, "extensions") || !(buf >= 0 && buf < (double)doc->source->buffer_count)) {
            st = AM_FAIL(err, AM_E_UNSUPPORTED, "bufferViews[%zu] has extensions (or buffer %g)", i, buf);
            goto done;
        }
    }
    if ((st = ami_src_bin(g, &s, err)) != AM_OK) goto done;
    for (size_t c = 0; c < ex->clip_count; c++) {
        if (!ami_progress("glTF write", (double)c / (double)ex->clip_count)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "glTF writing stopped at clip %zu", c);
            goto done;
        }
        if ((st = ami_write_source_clip(g, ex, &s, c, err)) != AM_OK) goto done;
    }
    ami_jw_source(w, ex, g, &s, root);
done:
    json_decref(root);
    ami_src_free(&s);
    return st;
}

/* ---- the file -------------------------------------------------------------------------------- */

static am_status ami_write(const am_gltf_export *ex, ami_gw *g, ami_jw *w, am_error *err)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count;
    AMI_CHECK(err, B > 0, AM_E_EMPTY, "rig has no bones");
    AMI_CHECK(err, B <= 65536, AM_E_LIMIT, "%zu bones (glTF joint indices are 16-bit)", B);
    assert(ex->clip_count == 0 || ex->clips);
    for (size_t c = 0; c < ex->clip_count; c++) AMI_TRY(ami_check_clip(rig, ex->clips[c], c, err));
    g->anims = am_alloc_array(ex->clip_count ? ex->clip_count : 1, sizeof *g->anims);
    AMI_CHECK(err, g->anims, AM_E_NOMEM, "%zu clips", ex->clip_count);
    AMI_TRY(ex->source ? ami_write_source_doc(ex, g, w, err) : ami_write_rig_doc(ex, g, w, err));
    AMI_CHECK(err, !g->oom && !g->bin.failed, AM_E_NOMEM, "glTF document");
    return ami_jw_finish(w, err);
}

static am_status ami_gltf_write_mem(const am_gltf_export *ex, am_buf *out, am_error *err)
{
    ami_gw g = {0};
    am_buf json = {0};
    ami_jw w;
    ami_jw_begin(&w, &json, AMI_JSON_COMPACT);
    am_status st = ami_write(ex, &g, &w, err);
    if (st == AM_OK) {
        ami_bin_pad4(&g.bin);
        /* JSON chunk padded with spaces, BIN with zeros (GLB 2.0 chunk rules). */
        if (json.len & 3u) am_buf_append(&json, "   ", 4 - (json.len & 3u));
        if (g.bin.failed || json.failed) {
            st = AM_FAIL(err, AM_E_NOMEM, "glTF document");
        } else {
            uint64_t total = 12 + 8 + (uint64_t)json.len + 8 + (uint64_t)g.bin.len;
            if (total > UINT32_MAX) {
                st = AM_FAIL(err, AM_E_LIMIT, "%llu bytes exceed the 4 GiB GLB limit",
                             (unsigned long long)total);
            } else {
                unsigned char h[12];
                size_t start = out->len;
                ami_le32(h, 0x46546C67u); /* "glTF" */
                ami_le32(h + 4, 2);
                ami_le32(h + 8, (uint32_t)total);
                am_buf_append(out, h, 12);
                ami_le32(h, (uint32_t)json.len);
                ami_le32(h + 4, 0x4E4F534Au); /* "JSON" */
                am_buf_append(out, h, 8);
                am_buf_append(out, json.data, json.len);
                ami_le32(h, (uint32_t)g.bin.len);
                ami_le32(h + 4, 0x004E4942u); /* "BIN\0" */
                am_buf_append(out, h, 8);
                am_buf_append(out, g.bin.data, g.bin.len);
                if (out->failed) {
                    out->len = start;
                    st = AM_FAIL(err, AM_E_NOMEM, "%llu bytes of GLB", (unsigned long long)total);
                }
            }
        }
    }
    ami_gw_free(&g);
    am_buf_free(&json);
    return st;
}

am_status am_gltf_write_mem(const am_gltf_export *ex, am_buf *out, am_error *err)
{
    assert(ex && ex->rig && out);
    am_scope sc;
    am_scope_enter(&sc, &ex->ctx);
    ami_stage stage = ami_stage_begin("glTF write");
    am_status st = ami_gltf_write_mem(ex, out, err);
    if (st == AM_OK) ami_stage_end(&stage);
    am_scope_leave(&sc, ex->warnings);
    return st;
}

am_status am_gltf_write(const am_gltf_export *ex, const char *path, am_error *err)
{
    assert(ex && ex->rig && path);
    am_scope sc;
    am_scope_enter(&sc, &ex->ctx);
    ami_stage stage = ami_stage_begin("glTF write");
    am_buf out = {0};
    am_status st = ami_gltf_write_mem(ex, &out, err);
    if (st == AM_OK) {
        st = am_file_write(path, out.data, out.len, err);
    } else {
        am_error_set_file(err, path);
    }
    am_buf_free(&out);
    if (st == AM_OK) ami_stage_end(&stage);
    am_scope_leave(&sc, ex->warnings);
    return st;
}
