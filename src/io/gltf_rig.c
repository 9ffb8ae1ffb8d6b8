/* Rigs and motions from glTF skins (am_rig_from_gltf, am_motion_from_gltf in anymove/gltf.h).
 *
 * Skeleton rules (each glTF joint of the skin is one bone, named after its node):
 * - Bind pose: a joint's world bind matrix is G(skinned mesh node) * inverse(inverseBindMatrix).
 *   glTF skins vertices as G(joint) * IBM * v and ignores the mesh node's transform; exporters
 *   such as FBX2glTF bake that transform (Y-up rotation, x100 scale) into the IBMs, so only the
 *   product lands in the same space as the animated node matrices. With an identity mesh node
 *   (most files) it is plain inverse(IBM).
 * - Hierarchy: a joint's parent is its nearest ancestor node that is a joint of the skin.
 * - Root: the root's trans carries the body's translation (other bones move only through loc),
 *   so the root must be the joint that carries it. It is the joint, among those whose translation any animation
 *   changes, with the most skin weight below it; without such joints, the top joint with the most
 *   weight below it. The tree is re-rooted there: the root's former ancestors hang below it in
 *   reverse order and any other top-level joints (IK targets...) become its children; where
 *   they translate on their own, loc carries it.
 * - Tails: the head of the only child joint (connected; a separate joint there when an
 *   animation moves the child, so its own keypoint follows it), else the mean of the children's
 *   heads; for leaves, the bind position of a non-joint child node (exporters' "<bone>_end"
 *   nodes), else along the node's Y axis at the parent bone's length. Bones shorter than 1 cm
 *   that way get 1 cm along the node's Y axis.
 * - is_helper: the joint and every joint below it (in the re-rooted tree) carry zero weight in
 *   all JOINTS_0/WEIGHTS_0 of meshes skinned by this skin (no weights at all: no helpers).
 *
 * Motion: per frame, W(b) = G(node_b, t) * bind(b)^-1 (converted to world axes and made a pure
 * rotation by a polar decomposition: scaling bones are approximated by their rotation), the
 * bone's world frame is W(b) * R_rest(b) at the node's world origin, and local rotations and
 * translations (loc) come from FK parent-first, so FK puts every head on its node's origin.
 * Bones whose loc stays within float noise keep none.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/io.h"
#include "core/internal.h"
#include "io/gltf_internal.h"
#include "rig/rig_internal.h"

#define AMI_MIN_BONE 0.01 /* metres: the zero-length guard */

typedef struct ami_gskel {
    size_t J;
    const am_gltf_skin *skin;
    char **names;         /* [J] unique bone (= head joint) names */
    double *bind;         /* [J][16] world bind matrices, glTF axes */
    double *bind_inv;     /* [J][16] */
    double *head;         /* [J][3] bind heads, world axes */
    int32_t *of_node;     /* [node_count] skin joint index of a node or -1 */
    int32_t *orig_parent; /* [J] nearest joint ancestor or -1 */
    int32_t *joint_order; /* [J] joints parents-first (file tree) */
    int32_t *parent;      /* [J] parent after re-rooting */
    double *weight;       /* [J] own skin weight */
    double *sub_weight;   /* [J] own + all below (file tree) */
    uint8_t *moved;       /* [J] an animation changes the joint's local translation */
    int32_t root;
    bool has_weights;
} ami_gskel;

static void ami_gskel_free(ami_gskel *k)
{
    if (k->names)
        for (size_t j = 0; j < k->J; j++) am_free(k->names[j]);
    am_free(k->names);
    am_free(k->bind);
    am_free(k->bind_inv);
    am_free(k->head);
    am_free(k->of_node);
    am_free(k->orig_parent);
    am_free(k->joint_order);
    am_free(k->parent);
    am_free(k->weight);
    am_free(k->sub_weight);
    am_free(k->moved);
    memset(k, 0, sizeof *k);
}

/* World-from-glTF axes as a 3x3 (SPEC 4.5: glTF (x, y, z) is world (x, -z, y)). */
static const double ami_C[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};

/* R_world = C R C^T. */
static void ami_rot_to_world(const double M[16], double out[9])
{
    double R[9], T[9], Ct[9];
    am_mat4_get_rot(M, R);
    am_mat3_transpose(ami_C, Ct);
    am_mat3_mul(ami_C, R, T);
    am_mat3_mul(T, Ct, out);
}

static void ami_origin_world(const double M[16], double out[3])
{
    double g[3] = {M[3], M[7], M[11]};
    am_gltf_to_world(g, out);
}

/* The rotation of a (scaled, maybe slightly sheared) matrix. Scaled to det 1 first so that the
 * quaternion start is close; skins are rigid up to float noise, so one or two steps remain. */
static void ami_polar(const double M[9], double R[9])
{
    double X[9];
    double det = am_mat3_det(M);
    if (!(fabs(det) > 1e-300) || !isfinite(det)) {
        am_mat3_identity(R);
        return;
    }
    double s = cbrt(fabs(det)), q[4];
    for (int i = 0; i < 9; i++) X[i] = M[i] / s;
    /* A mirror (negative determinant) has no rotation; keep the nearest proper frame. */
    if (det < 0)
        for (int r = 0; r < 3; r++) X[r * 3 + 0] = -X[r * 3 + 0];
    am_quat_from_mat3(X, q);
    am_quat_to_mat3(q, R);
    am_mat3_polar_rotation(X, 32, 0.0, R);
}

/* Rest world matrices of every node (glTF axes). */
static am_status ami_rest_world(const am_gltf *doc, double **out, am_error *err)
{
    size_t N = doc->node_count ? doc->node_count : 1;
    double *local = am_alloc_array(N, 16 * sizeof(double));
    double *world = am_alloc_array(N, 16 * sizeof(double));
    if (!local || !world) {
        am_free(local);
        am_free(world);
        return AM_FAIL(err, AM_E_NOMEM, "%zu node matrices", N);
    }
    am_gltf_sample_local(doc, -1, 0, local);
    am_gltf_world_from_local(doc, local, world);
    am_free(local);
    *out = world;
    return AM_OK;
}

/* moved[n] = 1 if some animation moves node n's translation away from its rest value (beyond
 * float noise). */
static void ami_translation_animated(const am_gltf *doc, uint8_t *moved)
{
    for (size_t a = 0; a < doc->animation_count; a++) {
        const am_gltf_animation *an = &doc->animations[a];
        for (size_t c = 0; c < an->channel_count; c++) {
            const am_gltf_channel *ch = &an->channels[c];
            if (ch->node < 0 || ch->path != AM_GLTF_PATH_TRANSLATION || moved[ch->node]) continue;
            const double *rest = doc->nodes[ch->node].translation;
            double tol = 1e-7 + 1e-6 * am_vec3_norm(rest);
            const am_gltf_accessor *out = &doc->accessors[an->samplers[ch->sampler].output];
            bool cubic = an->samplers[ch->sampler].interp == AM_GLTF_CUBICSPLINE;
            for (size_t k = cubic ? 1 : 0; k < out->count && !moved[ch->node]; k += cubic ? 3 : 1)
                for (int i = 0; i < 3; i++)
                    if (fabs((double)out->data[k * 3 + (size_t)i] - rest[i]) > tol)
                        moved[ch->node] = 1;
        }
    }
}

/* A copy of base, or base + "_<k>" for the first k that makes it unused, added to the map
 * of taken names as index. NULL when out of memory. */
static char *ami_unique_name(ami_names *taken, const char *base, int32_t index)
{
    char buf[320];
    snprintf(buf, sizeof buf, "%.255s", base);
    for (unsigned k = 2; ami_names_find_str(taken, buf) >= 0; k++)
        snprintf(buf, sizeof buf, "%.255s_%u", base, k);
    char *name = am_strdup(buf);
    int32_t prev;
    if (name && ami_names_add(taken, name, strlen(name), index, &prev) != AM_OK) {
        am_free(name);
        return NULL;
    }
    return name;
}

static am_status ami_gskel_build(const am_gltf *doc, int skin, ami_gskel *k, am_error *err)
{
    memset(k, 0, sizeof *k);
    k->root = -1;
    assert(doc);
    if (skin < 0) skin = 0;
    AMI_CHECK(err, (size_t)skin < doc->skin_count, AM_E_ARG,
              "skin %d: the document has %zu skins", skin, doc->skin_count);
    const am_gltf_skin *sk = &doc->skins[skin];
    size_t J = sk->joint_count, N = doc->node_count;
    k->J = J;
    k->skin = sk;
    k->names = am_alloc_array(J, sizeof *k->names);
    k->bind = am_alloc_array(J, 16 * sizeof(double));
    k->bind_inv = am_alloc_array(J, 16 * sizeof(double));
    k->head = am_alloc_array(J, 3 * sizeof(double));
    k->of_node = am_alloc_array(N, sizeof *k->of_node);
    k->orig_parent = am_alloc_array(J, sizeof *k->orig_parent);
    k->parent = am_alloc_array(J, sizeof *k->parent);
    k->weight = am_alloc_array(J, sizeof(double));
    k->sub_weight = am_alloc_array(J, sizeof(double));
    if (!k->names || !k->bind || !k->bind_inv || !k->head || !k->of_node || !k->orig_parent ||
        !k->parent || !k->weight || !k->sub_weight)
        return AM_FAIL(err, AM_E_NOMEM, "skeleton of %zu joints", J);
    for (size_t n = 0; n < N; n++) k->of_node[n] = -1;
    for (size_t j = 0; j < J; j++) k->of_node[sk->joints[j]] = (int32_t)j;

    /* Names: the node's, else "joint<j>", made unique. */
    ami_names taken = {0};
    AMI_CHECK(err, ami_names_reserve(&taken, J) == AM_OK, AM_E_NOMEM, "joint names");
    for (size_t j = 0; j < J; j++) {
        const char *nm = doc->nodes[sk->joints[j]].name;
        char fallback[32];
        if (!nm || !nm[0]) {
            snprintf(fallback, sizeof fallback, "joint%zu", j);
            nm = fallback;
        }
        k->names[j] = ami_unique_name(&taken, nm, (int32_t)j);
        if (!k->names[j]) {
            ami_names_free(&taken);
            return AM_FAIL(err, AM_E_NOMEM, "joint names");
        }
    }
    ami_names_free(&taken);

    /* Bind matrices. */
    double *rest = NULL;
    AMI_TRY(ami_rest_world(doc, &rest, err));
    double mesh_world[16];
    am_mat4_identity(mesh_world);
    for (size_t q = 0; q < N; q++) {
        int32_t n = doc->node_order ? doc->node_order[q] : (int32_t)q;
        if (doc->nodes[n].skin == skin && doc->nodes[n].mesh >= 0) {
            memcpy(mesh_world, rest + 16 * (size_t)n, sizeof mesh_world);
            break;
        }
    }
    am_free(rest);
    for (size_t j = 0; j < J; j++) {
        double inv[16];
        if (!am_mat4_inverse(sk->inverse_bind + 16 * j, inv))
            return AM_FAIL(err, AM_E_DEGENERATE, "joint '%s': singular inverse bind matrix",
                           k->names[j]);
        am_mat4_mul(mesh_world, inv, k->bind + 16 * j);
        if (!am_mat4_inverse(k->bind + 16 * j, k->bind_inv + 16 * j))
            return AM_FAIL(err, AM_E_DEGENERATE, "joint '%s': singular bind matrix",
                           k->names[j]);
        ami_origin_world(k->bind + 16 * j, k->head + 3 * j);
        for (int i = 0; i < 3; i++)
            AMI_CHECK(err, isfinite(k->head[3 * j + (size_t)i]), AM_E_NONFINITE,
                      "joint '%s': bind position", k->names[j]);
    }

    /* File hierarchy: nearest joint ancestor (node parents are acyclic: the reader checks),
     * of every node in one parents-first pass: a joint's is its parent's own joint index when
     * the parent is a joint, else the parent's nearest. joint_order lists the joints
     * parents-first for the subtree sums below. */
    int32_t *near = am_alloc_array(N ? N : 1, sizeof *near);
    k->joint_order = am_alloc_array(J ? J : 1, sizeof *k->joint_order);
    uint8_t *mesh_seen = am_alloc(doc->mesh_count ? doc->mesh_count : 1);
    if (!near || !k->joint_order || !mesh_seen) {
        am_free(near);
        am_free(mesh_seen);
        return AM_FAIL(err, AM_E_NOMEM, "%zu nodes", N);
    }
    size_t nq = 0;
    for (size_t q = 0; q < N; q++) {
        int32_t n = doc->node_order ? doc->node_order[q] : (int32_t)q;
        int32_t p = doc->nodes[n].parent;
        near[n] = p < 0 ? -1 : k->of_node[p] >= 0 ? k->of_node[p] : near[p];
        if (k->of_node[n] >= 0) k->joint_order[nq++] = k->of_node[n];
    }
    for (size_t j = 0; j < J; j++) k->orig_parent[j] = near[sk->joints[j]];
    am_free(near);

    /* Skin weights of every mesh skinned by this skin (each mesh once). */
    for (size_t n = 0; n < N; n++) {
        const am_gltf_node *nd = &doc->nodes[n];
        if (nd->skin != skin || nd->mesh < 0 || mesh_seen[nd->mesh]) continue;
        mesh_seen[nd->mesh] = 1;
        const am_gltf_mesh *m = &doc->meshes[nd->mesh];
        for (size_t p = 0; p < m->primitive_count; p++) {
            const am_gltf_primitive *pr = &m->primitives[p];
            if (pr->joints0 < 0 || pr->weights0 < 0) continue;
            const am_gltf_accessor *ja = &doc->accessors[pr->joints0];
            const am_gltf_accessor *wa = &doc->accessors[pr->weights0];
            for (size_t v = 0; v < ja->count && v < wa->count; v++) {
                for (size_t s = 0; s < 4; s++) {
                    double w = wa->data[v * 4 + s];
                    uint32_t ji = ja->ints[v * 4 + s];
                    if (!(w > 0)) continue;
                    if (ji >= J) {
                        am_free(mesh_seen);
                        return AM_FAIL(err, AM_E_FORMAT,
                                       "meshes[%d].primitives[%zu]: JOINTS_0 of vertex %zu is %u, "
                                       "the skin has %zu joints",
                                       nd->mesh, p, v, ji, J);
                    }
                    k->weight[ji] += w;
                    k->has_weights = true;
                }
            }
        }
    }
    am_free(mesh_seen);
    /* Subtree weights: each joint's own weight plus its children's subtree sums, children
     * before parents. Without any weights every joint counts as 1 (for choosing the root
     * only; no helpers then). */
    for (size_t j = 0; j < J; j++) k->sub_weight[j] = k->has_weights ? k->weight[j] : 1.0;
    for (size_t q = J; q-- > 0;) {
        int32_t j = k->joint_order[q], p = k->orig_parent[j];
        if (p >= 0) k->sub_weight[p] += k->sub_weight[j];
    }

    /* The root (see the file comment). */
    uint8_t *moved = am_alloc(N ? N : 1);
    k->moved = am_alloc(J ? J : 1);
    if (!moved || !k->moved) {
        am_free(moved);
        return AM_FAIL(err, AM_E_NOMEM, "%zu nodes", N);
    }
    ami_translation_animated(doc, moved);
    for (size_t j = 0; j < J; j++) k->moved[j] = moved[sk->joints[j]];
    double best = -1;
    for (int pass = 0; pass < 2 && k->root < 0; pass++) {
        for (size_t j = 0; j < J; j++) {
            bool cand = pass == 0 ? moved[sk->joints[j]] != 0 : k->orig_parent[j] < 0;
            double w = k->sub_weight[j];
            if (!cand || (pass == 0 && !(w > 0))) continue;
            if (w > best) {
                best = w;
                k->root = (int32_t)j;
            }
        }
    }
    am_free(moved);
    AMI_CHECK(err, k->root >= 0, AM_E_ROOT, "skin %d has no top-level joint", skin);

    /* Re-root: the path from the root up to its top joint is reversed; other top joints hang
     * below the root. */
    for (size_t j = 0; j < J; j++) k->parent[j] = k->orig_parent[j];
    int32_t prev = -1, cur = k->root;
    while (cur >= 0) {
        int32_t up = k->orig_parent[cur];
        k->parent[cur] = prev;
        prev = cur;
        cur = up;
    }
    for (size_t j = 0; j < J; j++)
        if (k->orig_parent[j] < 0 && (int32_t)j != k->root && k->parent[j] < 0)
            k->parent[j] = k->root;
    return AM_OK;
}

am_status am_rig_from_gltf(const am_gltf *doc, int skin, am_rig **out, am_error *err)
{
    assert(doc && out);
    *out = NULL;
    if (doc->skin_count == 0) {
        am_status e = AM_FAIL(err, AM_E_EMPTY, "the document has no skin");
        am_error_set_file(err, doc->source_name);
        return e;
    }
    ami_gskel k;
    am_status s = ami_gskel_build(doc, skin, &k, err);
    if (s < 0) {
        ami_gskel_free(&k);
        am_error_set_file(err, doc->source_name);
        return s;
    }
    size_t J = k.J;
    /* Joints: J heads then up to J separate tails. Bones in depth-first order from the root. */
    char **jnames = am_alloc_array(2 * J, sizeof *jnames);
    double *jpos = am_alloc_array(2 * J, 3 * sizeof(double));
    int32_t *order = am_alloc_array(J, sizeof *order);
    int32_t *tail = am_alloc_array(J, sizeof *tail);
    double *len = am_alloc_array(J, sizeof *len);
    const char **bn = am_alloc_array(J, sizeof *bn), **bh = am_alloc_array(J, sizeof *bh),
               **bt = am_alloc_array(J, sizeof *bt), **bp = am_alloc_array(J, sizeof *bp);
    size_t *first = NULL;
    int32_t *kids = NULL;
    ami_names taken = {0};
    size_t nj = J, nb = 0;
    if (!jnames || !jpos || !order || !tail || !len || !bn || !bh || !bt || !bp ||
        !ami_children_lists(k.parent, sizeof *k.parent, J, &first, &kids) ||
        ami_names_reserve(&taken, 2 * J) != AM_OK) {
        s = AM_FAIL(err, AM_E_NOMEM, "rig of %zu joints", J);
        goto done;
    }
    for (size_t j = 0; j < J; j++) {
        jnames[j] = k.names[j];
        memcpy(jpos + 3 * j, k.head + 3 * j, 3 * sizeof(double));
        int32_t prev;
        if (ami_names_add(&taken, jnames[j], strlen(jnames[j]), (int32_t)j, &prev) != AM_OK) {
            s = AM_FAIL(err, AM_E_NOMEM, "joint names");
            goto done;
        }
    }
    /* Breadth-first from the root: parents first, which is all am_rig_build needs. */
    order[nb++] = k.root;
    for (size_t q = 0; q < nb; q++)
        for (size_t c = first[order[q]]; c < first[order[q] + 1]; c++) order[nb++] = kids[c];
    if (nb != J) {
        s = AM_FAIL(err, AM_E_INTERNAL, "re-rooted skeleton reaches %zu of %zu joints", nb, J);
        goto done;
    }
    for (size_t q = 0; q < J; q++) {
        int32_t j = order[q];
        const double *h = k.head + 3 * (size_t)j;
        size_t nch = 0;
        int32_t only = -1;
        double mean[3] = {0, 0, 0};
        for (size_t i = first[j]; i < first[j + 1]; i++) {
            size_t c = (size_t)kids[i];
            nch++;
            only = (int32_t)c;
            am_vec3_add(mean, k.head + 3 * c, mean);
        }
        tail[j] = -1;
        double tp[3];
        bool have = false;
        if (nch == 1 && !k.moved[only] && am_vec3_dist(h, k.head + 3 * (size_t)only) >= AMI_MIN_BONE) {
            tail[j] = only; /* connected */
        } else if (nch == 1) {
            /* A child that slides (loc) gets a head of its own: the tail stays put. */
            memcpy(tp, k.head + 3 * (size_t)only, sizeof tp);
            have = am_vec3_dist(h, tp) >= AMI_MIN_BONE;
        } else if (nch > 1) {
            am_vec3_scale(mean, 1.0 / (double)nch, tp);
            have = am_vec3_dist(h, tp) >= AMI_MIN_BONE;
        }
        const am_gltf_node *nd = &doc->nodes[k.skin->joints[j]];
        if (tail[j] < 0 && !have && nch == 0) {
            /* Exporters add "<bone>_end" leaf nodes that mark the tail. */
            for (size_t c = 0; c < nd->child_count && !have; c++) {
                const am_gltf_node *cn = &doc->nodes[nd->children[c]];
                if (k.of_node[nd->children[c]] >= 0) continue;
                double g[3];
                am_mat4_mul_point(k.bind + 16 * (size_t)j, cn->translation, g);
                am_gltf_to_world(g, tp);
                have = am_vec3_dist(h, tp) >= AMI_MIN_BONE;
            }
        }
        if (tail[j] < 0 && !have) {
            /* Along the node's Y axis (the bone axis of Blender exports). */
            double y[3] = {k.bind[16 * (size_t)j + 1], k.bind[16 * (size_t)j + 5],
                           k.bind[16 * (size_t)j + 9]},
                   yw[3];
            am_gltf_to_world(y, yw);
            if (am_vec3_normalize(yw, yw) == 0) am_vec3_set(yw, 0, 0, 1);
            double l = k.parent[j] >= 0 ? len[k.parent[j]] : AMI_MIN_BONE;
            if (!(l >= AMI_MIN_BONE)) l = AMI_MIN_BONE;
            am_vec3_madd(h, l, yw, tp);
        }
        if (tail[j] < 0) {
            char base[300];
            snprintf(base, sizeof base, "%.250s_end", k.names[j]);
            jnames[nj] = ami_unique_name(&taken, base, (int32_t)nj);
            if (!jnames[nj]) {
                s = AM_FAIL(err, AM_E_NOMEM, "joint names");
                goto done;
            }
            memcpy(jpos + 3 * nj, tp, sizeof tp);
            tail[j] = (int32_t)nj++;
        }
        len[j] = am_vec3_dist(h, jpos + 3 * (size_t)tail[j]);
        bn[q] = k.names[j];
        bh[q] = k.names[j];
        bt[q] = jnames[tail[j]];
        bp[q] = k.parent[j] >= 0 ? k.names[k.parent[j]] : NULL;
    }
    am_rig_desc d = {0};
    d.joint_count = nj;
    d.joint_names = (const char *const *)jnames;
    d.joint_pos = jpos;
    d.bone_count = J;
    d.bone_names = bn;
    d.bone_head = bh;
    d.bone_tail = bt;
    d.bone_parent = bp;
    d.source = doc->source_name ? doc->source_name : k.skin->name;
    s = am_rig_build(&d, out, err);
    if (s == AM_OK && k.has_weights) {
        /* Helpers: no weight on the joint nor anywhere below it in the re-rooted tree (a
         * re-rooted former ancestor such as an armature root joint then counts as a helper). */
        double *below = am_alloc_array(J, sizeof *below);
        if (!below) {
            am_rig_free(*out);
            *out = NULL;
            s = AM_FAIL(err, AM_E_NOMEM, "helper flags");
            goto done;
        }
        /* order is parents-first: children's sums are complete before their parent's. */
        for (size_t j = 0; j < J; j++) below[j] = k.weight[j];
        for (size_t q = J; q-- > 1;) below[k.parent[order[q]]] += below[order[q]];
        am_rig *rig = *out;
        for (size_t j = 0; j < J; j++) {
            int b = am_rig_find_bone(rig, k.names[j]);
            if (b >= 0) rig->is_helper[b] = !(below[j] > 0);
        }
        am_free(below);
    }
done:
    if (jnames)
        for (size_t j = J; j < nj; j++) am_free(jnames[j]);
    ami_names_free(&taken);
    am_free(first);
    am_free(kids);
    if (s < 0) am_error_set_file(err, doc->source_name);
    am_free(jnames);
    am_free(jpos);
    am_free(order);
    am_free(tail);
    am_free(len);
    am_free(bn);
    am_free(bh);
    am_free(bt);
    am_free(bp);
    ami_gskel_free(&k);
    return s;
}

/* Bones whose loc never leaves float noise (1e-7 of the rest skeleton's size: glTF stores
 * floats) keep none, and a motion where no bone slides has no loc at all. */
static void ami_drop_float_noise(const am_rig *rig, am_motion *mo)
{
    size_t B = rig->bone_count, T = mo->frame_count;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t j = 0; j < rig->joint_count; j++)
        for (int i = 0; i < 3; i++) {
            lo[i] = fmin(lo[i], rig->joint_rest[3 * j + (size_t)i]);
            hi[i] = fmax(hi[i], rig->joint_rest[3 * j + (size_t)i]);
        }
    double tol = 1e-7 * hypot(hypot(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    bool any = false;
    for (size_t b = 0; b < B; b++) {
        bool slides = false;
        for (size_t t = 0; t < T && !slides; t++)
            slides = rig->parent[b] >= 0 && am_vec3_norm(mo->loc + (t * B + b) * 3) > tol;
        if (!slides)
            for (size_t t = 0; t < T; t++) memset(mo->loc + (t * B + b) * 3, 0, 3 * sizeof(double));
        any = any || slides;
    }
    if (!any) {
        am_free(mo->loc);
        mo->loc = NULL;
    }
}

/* joint_of[b]: the skin joint of rig bone b, by the names am_rig_from_gltf gives (hashed in
 * the rig, so linear in the joints). */
static am_status ami_match_bones(const ami_gskel *k, const am_rig *rig, int skin,
                                 int32_t *joint_of, am_error *err)
{
    for (size_t b = 0; b < rig->bone_count; b++) joint_of[b] = -1;
    for (size_t j = 0; j < k->J; j++) {
        int b = am_rig_find_bone(rig, k->names[j]);
        if (b >= 0 && joint_of[b] < 0) joint_of[b] = (int32_t)j;
    }
    for (size_t b = 0; b < rig->bone_count; b++)
        AMI_CHECK(err, joint_of[b] >= 0, AM_E_NAME, "rig bone '%s' is not a joint of skin %d",
                  rig->bone_names[b], skin < 0 ? 0 : skin);
    return AM_OK;
}

am_status ami_gltf_skin_binding(const am_gltf *doc, int skin, const am_rig *rig,
                                int32_t *bone_node, double *bind, am_error *err)
{
    ami_gskel k;
    am_status s = ami_gskel_build(doc, skin, &k, err);
    if (s == AM_OK && k.J != rig->bone_count)
        s = AM_FAIL(err, AM_E_SHAPE, "skin %d has %zu joints, the rig %zu bones", skin < 0 ? 0 : skin,
                    k.J, rig->bone_count);
    if (s == AM_OK) s = ami_match_bones(&k, rig, skin, bone_node, err);
    for (size_t b = 0; b < rig->bone_count && s == AM_OK; b++) {
        size_t j = (size_t)bone_node[b];
        memcpy(bind + 16 * b, k.bind + 16 * j, 16 * sizeof(double));
        bone_node[b] = k.skin->joints[j];
    }
    ami_gskel_free(&k);
    return s;
}

am_status am_motion_from_gltf(const am_gltf *doc, int skin, const am_rig *rig, int anim,
                              double fps, am_motion **out, am_error *err)
{
    assert(doc && rig && out);
    *out = NULL;
    AMI_CHECK(err, am_fps_valid(fps), AM_E_ARG, "fps %g is outside [%g, %g]", fps, AM_FPS_MIN,
              AM_FPS_MAX);
    AMI_CHECK(err, anim >= -1 && (anim < 0 || (size_t)anim < doc->animation_count), AM_E_ARG,
              "animation %d: the document has %zu", anim, doc->animation_count);
    /* anim -1: one frame of the rest pose. */
    double t0 = 0, t1 = 0;
    if (anim >= 0) {
        t0 = doc->animations[anim].t_min;
        t1 = doc->animations[anim].t_max;
        if (!(t1 >= t0)) t1 = t0;
    }
    double span = floor((t1 - t0) * fps + 1e-9);
    /* Duration x fps x the rig's channels, before any work: a 2.5 KB file may declare a
     * 333,000 s clip. (1e15 frames saturate the count; no budget holds them.) */
    size_t T = (size_t)fmin(span, 1e15) + 1, B = rig->bone_count, N = doc->node_count;
    am_status s = AMI_BUDGET_CHECK(err, doc->source_name, am_motion_bytes(rig, T), AM_MOTION_MAX_BYTES,
                                   "animation %d: %.6g s at %g fps = %zu frames x %zu bones", anim,
                                   t1 - t0, fps, T, B);
    if (s < 0) return s;
    /* Time, too: every frame evaluates every node. */
    if ((double)T * (double)(N ? N : 1) > AM_GLTF_MAX_NODE_FRAMES) {
        s = AM_FAIL(err, AM_E_LIMIT, "animation %d: %zu frames x %zu nodes to evaluate, over %.0e",
                    anim, T, N, AM_GLTF_MAX_NODE_FRAMES);
        am_error_set_file(err, doc->source_name);
        return s;
    }

    ami_gskel k;
    s = ami_gskel_build(doc, skin, &k, err);
    int32_t *joint_of = am_alloc_array(B ? B : 1, sizeof *joint_of);
    double *local = am_alloc_array(N ? N : 1, 16 * sizeof(double));
    double *world = am_alloc_array(N ? N : 1, 16 * sizeof(double));
    double *pose = am_alloc_array(B ? B : 1, 16 * sizeof(double));
    am_motion *mo = NULL;
    if (s == AM_OK && (!joint_of || !local || !world || !pose))
        s = AM_FAIL(err, AM_E_NOMEM, "motion scratch");
    if (s == AM_OK) s = ami_match_bones(&k, rig, skin, joint_of, err);
    if (s == AM_OK) s = am_motion_create(rig, T, fps, &mo, err);
    if (s == AM_OK && !(mo->quat = am_alloc_array(T, (B ? B : 1) * 4 * sizeof(double))))
        s = AM_FAIL(err, AM_E_NOMEM, "quaternions of %zu frames", T);
    if (s == AM_OK && !(mo->loc = am_alloc_array(T, (B ? B : 1) * 3 * sizeof(double))))
        s = AM_FAIL(err, AM_E_NOMEM, "translations of %zu frames", T);
    for (size_t t = 0; t < T && s == AM_OK; t++) {
        double time = t0 + (double)t / fps;
        if (time > t1) time = t1;
        am_gltf_sample_local(doc, anim, time, local);
        am_gltf_world_from_local(doc, local, world);
        for (size_t b = 0; b < B; b++) {
            int32_t j = joint_of[b];
            const double *G = world + 16 * (size_t)k.skin->joints[j];
            double W[16], Wg[9], Rw[9], Pt[9], head[3];
            am_mat4_mul(G, k.bind_inv + 16 * (size_t)j, W);
            ami_rot_to_world(W, Wg);
            ami_polar(Wg, Rw);
            am_mat3_mul(Rw, rig->rest_rot + 9 * b, Pt);
            ami_origin_world(G, head);
            double *q = mo->quat + (t * B + b) * 4, *e = mo->euler + (t * B + b) * 3;
            if (rig->parent[b] < 0) {
                double *rq = mo->root_quat + 4 * t, R[9];
                memset(mo->loc + (t * B + b) * 3, 0, 3 * sizeof(double));
                am_quat_from_mat3(Rw, rq);
                memcpy(mo->trans + 3 * t, head, sizeof head);
                am_quat_identity(q);
                e[0] = e[1] = e[2] = 0;
                am_quat_to_mat3(rq, R);
                am_mat3_mul(R, rig->rest_rot + 9 * b, R);
                am_mat4_from_rt(R, head, pose + 16 * b);
                continue;
            }
            /* P(b) = P(parent) O(b) [L | loc]: L = (P(parent) O(b))_rot^T P_target, and loc
             * puts the head on the node's origin. */
            double Q[16], Qr[9], Qinv[9], L[9], Lm[9], P[16], d[3];
            double *loc = mo->loc + (t * B + b) * 3;
            am_mat4_mul(pose + 16 * (size_t)rig->parent[b], rig->offset + 16 * b, Q);
            am_mat4_get_rot(Q, Qr);
            am_mat3_tmul(Qr, Pt, L);
            am_quat_from_mat3(L, q);
            am_quat_to_mat3(q, Lm);
            if (t == 0) am_mat3_to_euler_xyz(Lm, e);
            else am_mat3_to_euler_xyz_near(Lm, e - 3 * B, e);
            d[0] = head[0] - Q[3], d[1] = head[1] - Q[7], d[2] = head[2] - Q[11];
            if (!am_mat3_inverse(Qr, Qinv)) am_mat3_transpose(Qr, Qinv);
            am_mat3_mul_vec3(Qinv, d, loc);
            am_mat4_from_rt(Lm, loc, P);
            am_mat4_mul(Q, P, pose + 16 * b);
        }
    }
    if (s == AM_OK) ami_drop_float_noise(rig, mo);
    if (s == AM_OK) s = am_motion_compute_joints(mo, rig, err);
    am_free(joint_of);
    am_free(local);
    am_free(world);
    am_free(pose);
    ami_gskel_free(&k);
    if (s < 0) {
        am_motion_free(mo);
        am_error_set_file(err, doc->source_name);
        return s;
    }
    *out = mo;
    return AM_OK;
}
