/* glTF 2.0 binary (.glb) writer for a rig, its clips and a skinned mesh (SPEC.md section 4.5).
 *
 * Layout of every file written:
 * - nodes 0..B-1 are the joints, node b is rig bone b, named after it, children as the rig's
 *   parents; node B is the skinned mesh node. Both node 0 and node B are scene roots, and the
 *   mesh node carries no transform: the validator warns about skinned meshes that are
 *   parented or transformed, since their transform is ignored by skinning. Nodes B+1... are
 *   "<bone>_end" markers under each leaf joint at its tail (not joints, not animated).
 * - A joint node's world matrix in glTF axes is W(b) = [orth(C R_P(b)) | C head(b)], where
 *   P(b) is the SPEC 2.3 FK matrix and C the axis change of SPEC 4.5. orth() keeps the bone's
 *   Y axis direction (so leaf tails stay on head + Y * length) and rebuilds X and Z: near -Y
 *   the roll-0 frames are orthonormal only to ~3e-5 and a glTF TRS cannot carry that skew.
 *   Locals are W(parent)^-1 W(b), computed so that the heads (node origins) are exact.
 * - Node default TRS is the rest pose; inverse bind matrices are the rigid inverses of the
 *   rest W(b), so the bind pose equals the node rest pose to rounding.
 * - One BIN chunk, one bufferView per accessor, every view 4-byte aligned.
 *
 * The output depends only on the input values: no time stamps, no pointer-dependent order,
 * numbers printed with %.17g (exact for doubles and for floats widened to double), padding
 * bytes fixed. Identical input gives identical bytes.
 */
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "core/internal.h"

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

/* Writer state: the BIN chunk and the JSON arrays that grow with it. */
typedef struct ami_gw {
    am_buf bin;
    am_buf accessors, views;
    size_t accessor_count, view_count;
} ami_gw;

/* Append a string literal (its length taken by sizeof, never counted by hand). */
#define AMI_LIT(b, s) am_buf_append((b), (s), sizeof(s) - 1)

/* ---- JSON text ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. Names come from user
 * files; the GLB JSON chunk must be valid UTF-8 or the validator rejects the whole file. */
static size_t ami_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A JSON string literal of s followed by suffix (may be NULL); invalid UTF-8 bytes become
 * U+FFFD. */
static void ami_json_str(am_buf *b, const char *s, const char *suffix)
{
    AMI_LIT(b, "\"");
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            am_buf_append(b, esc, 2);
            p++;
        } else if (*p < 0x20) {
            am_buf_printf(b, "\\u%04x", (unsigned)*p);
            p++;
        } else {
            size_t n = ami_utf8_len(p);
            if (n == 0) {
                AMI_LIT(b, "\\ufffd");
                p++;
            } else {
                am_buf_append(b, p, n);
                p += n;
            }
        }
    }
    if (suffix) am_buf_append(b, suffix, strlen(suffix));
    AMI_LIT(b, "\"");
}

/* %.17g round-trips every double, and a float widened to double prints its exact value, so
 * accessor bounds parse back equal to the stored floats (the validator compares exactly). */
static void ami_json_num(am_buf *b, double v)
{
    if (v == 0.0) v = 0.0; /* no "-0": same bytes for +0 and -0 inputs */
    am_buf_printf(b, "%.17g", v);
}

static void ami_json_nums(am_buf *b, const double *v, size_t n)
{
    AMI_LIT(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) AMI_LIT(b, ",");
        ami_json_num(b, v[i]);
    }
    AMI_LIT(b, "]");
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

static int32_t ami_view(ami_gw *g, size_t offset, size_t len, int target)
{
    am_buf *j = &g->views;
    if (g->view_count) AMI_LIT(j, ",");
    am_buf_printf(j, "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu", offset, len);
    if (target) am_buf_printf(j, ",\"target\":%d", target);
    AMI_LIT(j, "}");
    return (int32_t)g->view_count++;
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

static void ami_accessor_head(ami_gw *g, int32_t view, int ctype, size_t count, size_t ncomp)
{
    am_buf *j = &g->accessors;
    if (g->accessor_count) AMI_LIT(j, ",");
    am_buf_printf(j, "{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,\"type\":\"%s\"",
                  (int)view, ctype, count, ami_type_name(ncomp));
}

/* A float accessor of `count` elements of ncomp components in its own bufferView. With
 * bounds, min/max are the exact extremes of the stored floats (required for POSITION and
 * animation inputs). */
static int32_t ami_put_f32(ami_gw *g, const float *v, size_t count, size_t ncomp, int target,
                           bool bounds)
{
    size_t offset = g->bin.len;
    ami_bin_f32(&g->bin, v, count * ncomp);
    int32_t view = ami_view(g, offset, count * ncomp * 4, target);
    ami_accessor_head(g, view, AMI_GL_FLOAT, count, ncomp);
    if (bounds && count) {
        double mn[16], mx[16];
        for (size_t c = 0; c < ncomp; c++) mn[c] = mx[c] = v[c];
        for (size_t i = 1; i < count; i++)
            for (size_t c = 0; c < ncomp; c++) {
                double x = v[i * ncomp + c];
                if (x < mn[c]) mn[c] = x;
                if (x > mx[c]) mx[c] = x;
            }
        AMI_LIT(&g->accessors, ",\"min\":");
        ami_json_nums(&g->accessors, mn, ncomp);
        AMI_LIT(&g->accessors, ",\"max\":");
        ami_json_nums(&g->accessors, mx, ncomp);
    }
    AMI_LIT(&g->accessors, "}");
    return (int32_t)g->accessor_count++;
}

static int32_t ami_put_uint(ami_gw *g, const uint32_t *v, size_t count, size_t ncomp, int ctype,
                            int target)
{
    size_t size = ctype == AMI_GL_UNSIGNED_BYTE ? 1 : ctype == AMI_GL_UNSIGNED_SHORT ? 2 : 4;
    size_t offset = g->bin.len;
    ami_bin_uint(&g->bin, v, count * ncomp, size);
    int32_t view = ami_view(g, offset, count * ncomp * size, target);
    ami_bin_pad4(&g->bin); /* the next view starts 4-aligned */
    ami_accessor_head(g, view, ctype, count, ncomp);
    AMI_LIT(&g->accessors, "}");
    return (int32_t)g->accessor_count++;
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

/* FK of frame t of a clip into pose [B][16]. Euler angles are the motion's primary rotation
 * data (always present once loaded); local quaternions are used if a caller built a motion
 * with quaternions only. */
static void ami_clip_pose(const am_rig *rig, const am_motion *mo, size_t t, double *rot_scratch,
                          double *pose)
{
    size_t B = rig->bone_count;
    const double *trans = mo->trans + t * 3, *rq = mo->root_quat + t * 4;
    if (mo->euler) {
        am_rig_fk(rig, trans, rq, mo->euler + t * B * 3, pose);
        return;
    }
    for (size_t b = 0; b < B; b++) {
        if (mo->quat) {
            double q[4];
            am_quat_normalize(mo->quat + (t * B + b) * 4, q);
            am_quat_to_mat3(q, rot_scratch + b * 9);
        } else {
            am_mat3_identity(rot_scratch + b * 9);
        }
    }
    am_rig_fk_rot(rig, trans, rq, rot_scratch, pose);
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
    /* Keyframe times must stay strictly increasing once rounded to float. */
    for (size_t t = 1; t < T; t++)
        AMI_CHECK(err, (float)((double)t / mo->fps) > (float)((double)(t - 1) / mo->fps), AM_E_VALUE,
                  "clip %zu: %zu frames at %g fps do not fit float keyframe times", c, T, mo->fps);
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

/* A Blender-style octahedral bone of unit length in its own frame: head at the origin, tail at
 * +Y, a square waist at 10% of the length with a half-width of 10%. Faces are wound
 * counter-clockwise seen from outside (checked in ami_bone_faces). */
#define AMI_BONE_FACES 8
static const double ami_bone_verts[6][3] = {
    {0, 0, 0}, {0, 1, 0}, {0.1, 0.1, 0}, {0, 0.1, 0.1}, {-0.1, 0.1, 0}, {0, 0.1, -0.1},
};

static void ami_bone_faces(int faces[AMI_BONE_FACES][3])
{
    static const double centre[3] = {0, 0.1, 0};
    for (int i = 0; i < 4; i++) {
        int a = 2 + i, b = 2 + (i + 1) % 4;
        int f0[3] = {0, a, b}, f1[3] = {1, b, a};
        memcpy(faces[2 * i], f0, sizeof f0);
        memcpy(faces[2 * i + 1], f1, sizeof f1);
    }
    for (int f = 0; f < AMI_BONE_FACES; f++) {
        const double *A = ami_bone_verts[faces[f][0]], *B = ami_bone_verts[faces[f][1]],
                     *Cv = ami_bone_verts[faces[f][2]];
        double e1[3], e2[3], n[3], mid[3];
        am_vec3_sub(B, A, e1);
        am_vec3_sub(Cv, A, e2);
        am_vec3_cross(e1, e2, n);
        for (int k = 0; k < 3; k++) mid[k] = (A[k] + B[k] + Cv[k]) / 3.0 - centre[k];
        if (am_vec3_dot(n, mid) < 0) {
            int t = faces[f][1];
            faces[f][1] = faces[f][2];
            faces[f][2] = t;
        }
    }
}

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

/* ---- the document ---------------------------------------------------------------------------- */

/* Nodes: joints 0..B-1, the mesh node B, then one "<bone>_end" node per leaf bone at
 * (0, length, 0) in its frame. The end nodes are not joints; they carry the leaf tails, which
 * no child head marks, so importers (ours, Blender's) recover every bone's length exactly.
 * scratch: [3][B] int32 (first child, next sibling, end node). */
static void ami_write_nodes(am_buf *j, const am_rig *rig, const ami_frame *rest, int32_t *scratch)
{
    size_t B = rig->bone_count;
    int32_t *first = scratch, *next = scratch + B, *end = scratch + 2 * B;
    for (size_t b = 0; b < B; b++) first[b] = next[b] = end[b] = -1;
    /* Children in bone order: insert from the back so each list comes out ascending. */
    for (size_t b = B; b-- > 1;) {
        int32_t p = rig->parent[b];
        next[b] = first[p];
        first[p] = (int32_t)b;
    }
    int32_t next_end = (int32_t)B + 1;
    for (size_t b = 0; b < B; b++)
        if (first[b] < 0) end[b] = next_end++;

    AMI_LIT(j, ",\"nodes\":[");
    for (size_t b = 0; b < B; b++) {
        if (b) AMI_LIT(j, ",");
        AMI_LIT(j, "{\"name\":");
        ami_json_str(j, rig->bone_names[b], NULL);
        AMI_LIT(j, ",\"children\":[");
        if (end[b] >= 0) am_buf_printf(j, "%d", (int)end[b]);
        for (int32_t c = first[b]; c >= 0; c = next[c]) am_buf_printf(j, c == first[b] ? "%d" : ",%d", (int)c);
        AMI_LIT(j, "]");
        double q[4], t[3];
        ami_local(rig, rest, b, q, t);
        double xyzw[4] = {q[1], q[2], q[3], q[0]};
        AMI_LIT(j, ",\"translation\":");
        ami_json_nums(j, t, 3);
        AMI_LIT(j, ",\"rotation\":");
        ami_json_nums(j, xyzw, 4);
        AMI_LIT(j, "}");
    }
    AMI_LIT(j, ",{\"name\":");
    ami_json_str(j, rig->name ? rig->name : "skeleton", NULL);
    AMI_LIT(j, ",\"mesh\":0,\"skin\":0}");
    for (size_t b = 0; b < B; b++) {
        if (end[b] < 0) continue;
        AMI_LIT(j, ",{\"name\":");
        ami_json_str(j, rig->bone_names[b], "_end");
        double t[3] = {0, rig->length[b], 0};
        AMI_LIT(j, ",\"translation\":");
        ami_json_nums(j, t, 3);
        AMI_LIT(j, "}");
    }
    AMI_LIT(j, "]");
}

/* Everything the JSON needs besides the accessor/bufferView arrays. */
typedef struct ami_doc {
    int32_t ibm;
    int32_t position, normal, joints0, weights0, indices; /* -1 if absent */
    int mode;
} ami_doc;

static am_status ami_write_mesh_data(ami_gw *g, const am_gltf_export *ex, const ami_frame *rest,
                                     ami_doc *d, am_error *err)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count;
    const am_gltf_mesh_in *m = ex->mesh;
    size_t V = m ? m->vertex_count : B * AMI_BONE_FACES * 3;
    float *pos = am_alloc_array(V * 3, sizeof *pos);
    float *nrm = m ? NULL : am_alloc_array(V * 3, sizeof *nrm);
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
    d->normal = d->indices = -1;
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
        } else {
            d->mode = 0;
        }
    }
    d->position = ami_put_f32(g, pos, V, 3, AMI_GL_ARRAY_BUFFER, true);
    if (nrm) d->normal = ami_put_f32(g, nrm, V, 3, AMI_GL_ARRAY_BUFFER, false);
    /* 256 bones would fit bytes too; the brief keeps bytes strictly below 256 bones. */
    d->joints0 = ami_put_uint(g, jts, V, 4, B < 256 ? AMI_GL_UNSIGNED_BYTE : AMI_GL_UNSIGNED_SHORT,
                              AMI_GL_ARRAY_BUFFER);
    d->weights0 = ami_put_f32(g, wts, V, 4, AMI_GL_ARRAY_BUFFER, false);
    if (idx)
        /* 65535 is the primitive-restart value of 16-bit indices, so it must not be used. */
        d->indices = ami_put_uint(g, idx, m->triangle_count * 3, 1,
                                  V <= 65535 ? AMI_GL_UNSIGNED_SHORT : AMI_GL_UNSIGNED_INT,
                                  AMI_GL_ELEMENT_ARRAY_BUFFER);
done:
    am_free(pos);
    am_free(nrm);
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

/* One animation per clip: sampler 2b = translation of node b, 2b+1 = its rotation. */
static am_status ami_write_clip(ami_gw *g, am_buf *j, const am_gltf_export *ex, size_t c,
                                am_error *err)
{
    const am_rig *rig = ex->rig;
    const am_motion *mo = ex->clips[c];
    size_t B = rig->bone_count, T = mo->frame_count;
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    double *scratch = am_alloc_array(B * 9, sizeof *scratch);
    ami_frame *fr = am_alloc_array(B, sizeof *fr);
    double *prevq = am_alloc_array(B * 4, sizeof *prevq);
    float *times = am_alloc_array(T, sizeof *times);
    float *tr = am_alloc_array(B * T * 3, sizeof *tr);
    float *rot = am_alloc_array(B * T * 4, sizeof *rot);
    am_status st = AM_OK;
    if (!pose || !scratch || !fr || !prevq || !times || !tr || !rot) {
        st = AM_FAIL(err, AM_E_NOMEM, "clip %zu: %zu frames x %zu bones", c, T, B);
        goto done;
    }
    for (size_t t = 0; t < T; t++) {
        times[t] = (float)((double)t / mo->fps);
        ami_clip_pose(rig, mo, t, scratch, pose);
        if (!ami_finite(pose, B * 16)) {
            st = AM_FAIL(err, AM_E_NONFINITE, "clip %zu frame %zu: FK is not finite", c, t);
            goto done;
        }
        for (size_t b = 0; b < B; b++) ami_frame_from_pose(pose + b * 16, &fr[b]);
        for (size_t b = 0; b < B; b++) {
            double q[4], tl[3];
            ami_local(rig, fr, b, q, tl);
            /* Keep consecutive keys in one hemisphere: LINEAR blends componentwise, and a sign
             * flip between keys would swing the joint the long way round. */
            if (t > 0 && q[0] * prevq[b * 4] + q[1] * prevq[b * 4 + 1] + q[2] * prevq[b * 4 + 2] +
                                 q[3] * prevq[b * 4 + 3] < 0)
                for (int k = 0; k < 4; k++) q[k] = -q[k];
            memcpy(prevq + b * 4, q, sizeof q);
            float *to = tr + (b * T + t) * 3, *ro = rot + (b * T + t) * 4;
            for (int k = 0; k < 3; k++) to[k] = (float)tl[k];
            ro[0] = (float)q[1];
            ro[1] = (float)q[2];
            ro[2] = (float)q[3];
            ro[3] = (float)q[0];
        }
    }
    int32_t input = ami_put_f32(g, times, T, 1, 0, true);
    if (c) AMI_LIT(j, ",");
    AMI_LIT(j, "{\"name\":");
    if (ex->clip_names && ex->clip_names[c]) {
        ami_json_str(j, ex->clip_names[c], NULL);
    } else {
        am_buf_printf(j, "\"clip%zu\"", c);
    }
    AMI_LIT(j, ",\"channels\":[");
    for (size_t b = 0; b < B; b++)
        am_buf_printf(j, "%s{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"translation\"}},"
                         "{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"rotation\"}}",
                      b ? "," : "", 2 * b, b, 2 * b + 1, b);
    AMI_LIT(j, "],\"samplers\":[");
    for (size_t b = 0; b < B; b++) {
        int32_t ot = ami_put_f32(g, tr + b * T * 3, T, 3, 0, false);
        int32_t orr = ami_put_f32(g, rot + b * T * 4, T, 4, 0, false);
        am_buf_printf(j, "%s{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"},"
                         "{\"input\":%d,\"output\":%d,\"interpolation\":\"LINEAR\"}",
                      b ? "," : "", (int)input, (int)ot, (int)input, (int)orr);
    }
    AMI_LIT(j, "]}");
done:
    am_free(pose);
    am_free(scratch);
    am_free(fr);
    am_free(prevq);
    am_free(times);
    am_free(tr);
    am_free(rot);
    return st;
}

static am_status ami_write(const am_gltf_export *ex, ami_gw *g, am_buf *json, am_buf *anims,
                           am_error *err)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count;
    AMI_CHECK(err, B > 0, AM_E_EMPTY, "rig has no bones");
    AMI_CHECK(err, B <= 65536, AM_E_LIMIT, "%zu bones (glTF joint indices are 16-bit)", B);
    assert(ex->clip_count == 0 || ex->clips);
    for (size_t c = 0; c < ex->clip_count; c++) AMI_TRY(ami_check_clip(rig, ex->clips[c], c, err));
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
    for (size_t c = 0; c < ex->clip_count; c++)
        if ((st = ami_write_clip(g, anims, ex, c, err)) != AM_OK) goto done;

    const char *gen = ex->generator ? ex->generator : "anymove " AM_VERSION_STRING;
    AMI_LIT(json, "{\"asset\":{\"version\":\"2.0\",\"generator\":");
    ami_json_str(json, gen, NULL);
    am_buf_printf(json, "},\"scene\":0,\"scenes\":[{\"nodes\":[0,%zu]}]", B);
    ami_write_nodes(json, rig, rest, tree);
    AMI_LIT(json, ",\"skins\":[{\"name\":");
    ami_json_str(json, rig->name ? rig->name : "rig", NULL);
    am_buf_printf(json, ",\"inverseBindMatrices\":%d,\"skeleton\":0,\"joints\":[", (int)d.ibm);
    for (size_t b = 0; b < B; b++) am_buf_printf(json, b ? ",%zu" : "%zu", b);
    AMI_LIT(json, "]}],\"meshes\":[{\"name\":");
    ami_json_str(json, ex->mesh ? "mesh" : "bones", NULL);
    am_buf_printf(json, ",\"primitives\":[{\"attributes\":{\"POSITION\":%d", (int)d.position);
    if (d.normal >= 0) am_buf_printf(json, ",\"NORMAL\":%d", (int)d.normal);
    am_buf_printf(json, ",\"JOINTS_0\":%d,\"WEIGHTS_0\":%d}", (int)d.joints0, (int)d.weights0);
    if (d.indices >= 0) am_buf_printf(json, ",\"indices\":%d", (int)d.indices);
    am_buf_printf(json, ",\"mode\":%d}]}]", d.mode);
    if (ex->clip_count) {
        AMI_LIT(json, ",\"animations\":[");
        am_buf_append(json, anims->data, anims->len);
        AMI_LIT(json, "]");
    }
    AMI_LIT(json, ",\"accessors\":[");
    am_buf_append(json, g->accessors.data, g->accessors.len);
    AMI_LIT(json, "],\"bufferViews\":[");
    am_buf_append(json, g->views.data, g->views.len);
    am_buf_printf(json, "],\"buffers\":[{\"byteLength\":%zu}]}", g->bin.len);
done:
    am_free(rest);
    am_free(pose);
    am_free(tree);
    return st;
}

am_status am_gltf_write_mem(const am_gltf_export *ex, am_buf *out, am_error *err)
{
    assert(ex && ex->rig && out);
    ami_gw g = {0};
    am_buf json = {0}, anims = {0};
    am_status st = ami_write(ex, &g, &json, &anims, err);
    if (st == AM_OK) {
        ami_bin_pad4(&g.bin);
        /* JSON chunk padded with spaces, BIN with zeros (GLB 2.0 chunk rules). */
        if (json.len & 3u) am_buf_append(&json, "   ", 4 - (json.len & 3u));
        if (g.bin.failed || g.accessors.failed || g.views.failed || json.failed || anims.failed) {
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
    am_buf_free(&g.bin);
    am_buf_free(&g.accessors);
    am_buf_free(&g.views);
    am_buf_free(&json);
    am_buf_free(&anims);
    return st;
}

am_status am_gltf_write(const am_gltf_export *ex, const char *path, am_error *err)
{
    assert(path);
    am_buf out = {0};
    am_status st = am_gltf_write_mem(ex, &out, err);
    if (st == AM_OK) {
        st = am_file_write(path, out.data, out.len, err);
    } else {
        am_error_set_file(err, path);
    }
    am_buf_free(&out);
    return st;
}
