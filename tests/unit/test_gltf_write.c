/* The .glb writer: validator-clean files, joints that sample back onto FK, exact skin weights
 * and byte-identical output. Reads back through the library's own glTF reader. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/io.h"
#include "math/math_internal.h"
#include "io/gltf_internal.h"
#include "io/json_internal.h"

/* Keypoints must come back to this (SPEC 4.5: "must match motion.json joints"). */
#define AMI_TOL_POS 1e-5

/* ---- fixtures ---------------------------------------------------------------------------- */

/* The library's generator, seeded, so failures reproduce. */
static ami_rng g_rng = {0x9E3779B97F4A7C15ull};
static double ami_rand(void) { return ami_rng_uniform(&g_rng); }
static double ami_rand_range(double lo, double hi) { return lo + (hi - lo) * ami_rand(); }

/* Random unit direction kept out of the cone around -Y where roll-0 frames are only nearly
 * orthonormal (the near -Y case has its own test with its own tolerance). */
static void ami_rand_dir(double d[3])
{
    for (;;) {
        double v[3] = {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
        double n = am_vec3_norm(v);
        if (n < 0.1 || n > 1) continue;
        am_vec3_scale(v, 1.0 / n, d);
        if (d[1] > -0.99) return;
    }
}

#define AMI_MAX_BONES 64
typedef struct ami_random_names {
    char joint[2 * AMI_MAX_BONES + 1][32];
    char bone[AMI_MAX_BONES][32];
    const char *jp[2 * AMI_MAX_BONES + 1], *bp[AMI_MAX_BONES], *head[AMI_MAX_BONES],
        *tail[AMI_MAX_BONES], *parent[AMI_MAX_BONES];
    double pos[(2 * AMI_MAX_BONES + 1) * 3];
} ami_random_names;

/* A random tree of n bones: most children connected to their parent's tail, some offset. */
static am_rig *ami_random_rig(size_t n)
{
    static ami_random_names nm;
    memset(&nm, 0, sizeof nm);
    size_t J = 0;
    am_vec3_set(nm.pos, 0, 0, 1);
    snprintf(nm.joint[J], sizeof nm.joint[J], "j%zu", J);
    J++;
    for (size_t b = 0; b < n; b++) {
        size_t hj;
        int parent = b ? (int)(ami_rand() * (double)b) : -1;
        if (parent < 0) {
            hj = 0;
        } else if (ami_rand() < 0.75) {
            hj = (size_t)atoi(nm.tail[parent] + 1);
        } else {
            /* Unconnected child: its head is a new joint near the parent's tail. */
            hj = J;
            size_t pt = (size_t)atoi(nm.tail[parent] + 1);
            for (int k = 0; k < 3; k++) nm.pos[J * 3 + k] = nm.pos[pt * 3 + k] + ami_rand_range(-0.05, 0.05);
            snprintf(nm.joint[J], sizeof nm.joint[J], "j%zu", J);
            J++;
        }
        double d[3];
        ami_rand_dir(d);
        double len = ami_rand_range(0.05, 0.4);
        for (int k = 0; k < 3; k++) nm.pos[J * 3 + k] = nm.pos[hj * 3 + k] + len * d[k];
        snprintf(nm.joint[J], sizeof nm.joint[J], "j%zu", J);
        snprintf(nm.bone[b], sizeof nm.bone[b], "bone%zu", b);
        nm.head[b] = nm.joint[hj];
        nm.tail[b] = nm.joint[J];
        nm.parent[b] = parent < 0 ? NULL : nm.bone[parent];
        J++;
    }
    for (size_t j = 0; j < J; j++) nm.jp[j] = nm.joint[j];
    for (size_t b = 0; b < n; b++) nm.bp[b] = nm.bone[b];
    am_rig_desc desc = {.joint_count = J, .joint_names = nm.jp, .joint_pos = nm.pos,
                        .bone_count = n, .bone_names = nm.bp, .bone_head = nm.head,
                        .bone_tail = nm.tail, .bone_parent = nm.parent, .source = "random"};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&desc, &rig, &err), &err);
    return rig;
}

static am_motion *ami_random_motion(const am_rig *rig, size_t T, double fps)
{
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_create(rig, T, fps, &mo, &err), &err);
    if (!mo) return NULL;
    size_t B = rig->bone_count;
    for (size_t t = 0; t < T; t++) {
        double axis[3], q[4];
        ami_rand_dir(axis);
        am_quat_from_axis_angle(axis, ami_rand_range(0, 3.0), q);
        memcpy(mo->root_quat + t * 4, q, sizeof q);
        for (int k = 0; k < 3; k++) mo->trans[t * 3 + k] = ami_rand_range(-1, 1) + (k == 2 ? 1 : 0);
        for (size_t b = 1; b < B; b++)
            for (int k = 0; k < 3; k++) mo->euler[(t * B + b) * 3 + k] = ami_rand_range(-1.2, 1.2);
        if (mo->quat)
            for (size_t b = 0; b < B; b++) {
                double *qo = mo->quat + (t * B + b) * 4;
                if (b == 0) am_quat_identity(qo);
                else am_euler_xyz_to_quat(mo->euler + (t * B + b) * 3, qo);
            }
    }
    return mo;
}

/* A user mesh around the rig: V points scattered near bone heads, K slots each with random
 * bones (repeats and unused slots included to exercise merging), triangles if tris > 0. */
typedef struct ami_mesh {
    am_gltf_mesh_in in;
    float *pos, *w;
    int32_t *bi, *tri;
} ami_mesh;

static void ami_make_mesh(const am_rig *rig, size_t V, size_t K, size_t tris, ami_mesh *m)
{
    memset(m, 0, sizeof *m);
    m->pos = am_alloc_array(V * 3, sizeof *m->pos);
    m->w = am_alloc_array(V * K, sizeof *m->w);
    m->bi = am_alloc_array(V * K, sizeof *m->bi);
    m->tri = tris ? am_alloc_array(tris * 3, sizeof *m->tri) : NULL;
    for (size_t v = 0; v < V; v++) {
        size_t b = v % rig->bone_count;
        const double *h = rig->joint_rest + rig->head_joint[b] * 3;
        for (int k = 0; k < 3; k++) m->pos[v * 3 + k] = (float)(h[k] + ami_rand_range(-0.05, 0.05));
        for (size_t k = 0; k < K; k++) {
            double r = ami_rand();
            m->bi[v * K + k] = r < 0.15 ? -1 : (int32_t)(ami_rand() * (double)rig->bone_count);
            m->w[v * K + k] = (float)(r < 0.25 ? 0.0 : ami_rand());
        }
    }
    /* Vertex 0 has no influence at all: it must bind to the root. */
    for (size_t k = 0; k < K; k++) m->bi[k] = -1;
    for (size_t f = 0; f < tris; f++)
        for (int k = 0; k < 3; k++) m->tri[f * 3 + k] = (int32_t)((f + (size_t)k * 7) % V);
    m->in = (am_gltf_mesh_in){.vertex_count = V, .positions = m->pos, .triangle_count = tris,
                              .triangles = m->tri, .influences = K, .bone_index = m->bi,
                              .weights = m->w};
}

static void ami_free_mesh(ami_mesh *m)
{
    am_free(m->pos);
    am_free(m->w);
    am_free(m->bi);
    am_free(m->tri);
}

/* ---- checks ------------------------------------------------------------------------------- */

/* Run the Khronos validator on a file: 0 errors and 0 warnings, or the test fails. */
static void ami_validate(const char *path)
{
    const char *v = getenv("AM_VALIDATOR");
    char cmd[2048];
    if (!v || !v[0]) v = am_test_source("scripts/gltf_validate.sh");
    snprintf(cmd, sizeof cmd, "'%s' '%s'", v, path);
    int rc = system(cmd);
    AM_CHECK_MSG(rc == 0, "validator rejected %s (status %d)", path, rc);
}

static void ami_write_file(const am_gltf_export *ex, const char *path)
{
    am_error err = {0};
    AM_CHECK_OK(am_gltf_write(ex, path, &err), &err);
}

/* Every clip, every frame: joint node origins are the FK heads, origin + node Y * length the
 * FK tails, hence every keypoint. Also the document's static shape. */
static void ami_check_readback(const am_gltf_export *ex, const char *path)
{
    const am_rig *rig = ex->rig;
    size_t B = rig->bone_count, J = rig->joint_count;
    am_gltf *doc = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (!doc) return;
    /* Joints, the mesh node, then one "<bone>_end" node per leaf bone. */
    size_t leaves = 0;
    for (size_t b = 0; b < B; b++) {
        bool leaf = true;
        for (size_t c = b + 1; c < B && leaf; c++) leaf = rig->parent[c] != (int32_t)b;
        leaves += leaf;
    }
    AM_CHECK(doc->node_count == B + 1 + leaves);
    AM_CHECK(doc->skin_count == 1 && doc->mesh_count == 1);
    AM_CHECK(doc->animation_count == ex->clip_count);
    if (doc->node_count != B + 1 + leaves || doc->skin_count != 1 || doc->animation_count != ex->clip_count) {
        am_gltf_free(doc);
        return;
    }
    AM_CHECK(doc->generator && strncmp(doc->generator, "anymove ", 8) == 0);
    const am_gltf_skin *sk = &doc->skins[0];
    AM_CHECK(sk->joint_count == B && sk->skeleton == 0);
    for (size_t b = 0; b < B && sk->joint_count == B; b++) {
        AM_CHECK(sk->joints[b] == (int32_t)b);
        AM_CHECK_MSG(doc->nodes[b].name && strcmp(doc->nodes[b].name, rig->bone_names[b]) == 0,
                     "node %zu named '%s', bone '%s'", b, doc->nodes[b].name ? doc->nodes[b].name : "",
                     rig->bone_names[b]);
        AM_CHECK(doc->nodes[b].parent == rig->parent[b]);
    }
    const am_gltf_node *mn = &doc->nodes[B];
    AM_CHECK(mn->parent == -1 && mn->mesh == 0 && mn->skin == 0);
    for (int k = 0; k < 16; k++) AM_CHECK(mn->matrix[k] == (k % 5 == 0 ? 1.0 : 0.0));
    for (size_t n = B + 1; n < doc->node_count; n++) {
        int32_t p = doc->nodes[n].parent;
        AM_CHECK(p >= 0 && p < (int32_t)B && doc->nodes[n].name);
        if (p < 0 || p >= (int32_t)B || !doc->nodes[n].name) continue;
        AM_CHECK(strncmp(doc->nodes[n].name, rig->bone_names[p], strlen(rig->bone_names[p])) == 0);
        AM_CHECK_NEAR(doc->nodes[n].translation[1], rig->length[p], 1e-12);
    }

    double *local = am_alloc_array(doc->node_count * 16, sizeof *local);
    double *world = am_alloc_array(doc->node_count * 16, sizeof *world);
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    double *heads = am_alloc_array(B * 3, sizeof *heads), *tails = am_alloc_array(B * 3, sizeof *tails);
    double *kp = am_alloc_array(J * 3, sizeof *kp);
    double *gh = am_alloc_array(B * 3, sizeof *gh), *gt = am_alloc_array(B * 3, sizeof *gt);

    /* Rest pose and inverse bind matrices: IBM(b) * W_rest(b) = identity. */
    am_test_diff ibm = {0}, rest = {0};
    am_gltf_sample_local(doc, -1, 0.0, local);
    am_gltf_world_from_local(doc, local, world);
    am_rig_rest_pose(rig, pose);
    am_rig_bone_ends(rig, pose, heads, NULL);
    for (size_t b = 0; b < B; b++) {
        double I[16], h[3], g[3] = {world[b * 16 + 3], world[b * 16 + 7], world[b * 16 + 11]};
        am_mat4_mul(sk->inverse_bind + b * 16, world + b * 16, I);
        for (int k = 0; k < 16; k++) am_test_diff_add(&ibm, I[k], k % 5 == 0 ? 1.0 : 0.0);
        am_gltf_to_world(g, h);
        for (int k = 0; k < 3; k++) am_test_diff_add(&rest, h[k], heads[b * 3 + k]);
    }
    AM_CHECK_MSG(ibm.max < 1e-5, "IBM * rest world differs from identity by %.3g", ibm.max);
    AM_CHECK_MSG(rest.max < 1e-6, "rest heads off by %.3g m", rest.max);

    for (size_t c = 0; c < ex->clip_count; c++) {
        const am_motion *mo = ex->clips[c];
        am_test_diff dh = {0}, dt = {0}, dk = {0};
        for (size_t t = 0; t < mo->frame_count; t++) {
            /* Sample at the stored (float) key time. */
            double time = (double)(float)((double)t / mo->fps);
            am_gltf_sample_local(doc, (int)c, time, local);
            am_gltf_world_from_local(doc, local, world);
            am_motion_pose(rig, mo, t, pose);
            am_rig_bone_ends(rig, pose, heads, tails);
            am_rig_keypoints(rig, pose, kp);
            /* Leaf tails through the "<bone>_end" nodes too. */
            for (size_t n = B + 1; n < doc->node_count; n++) {
                size_t b = (size_t)doc->nodes[n].parent;
                double o[3] = {world[n * 16 + 3], world[n * 16 + 7], world[n * 16 + 11]}, e[3];
                am_gltf_to_world(o, e);
                for (int k = 0; k < 3; k++) am_test_diff_add(&dt, e[k], tails[b * 3 + k]);
            }
            for (size_t b = 0; b < B; b++) {
                const double *W = world + b * 16;
                double o[3] = {W[3], W[7], W[11]}, y[3] = {W[1], W[5], W[9]}, tl[3];
                am_vec3_madd(o, rig->length[b], y, tl);
                am_gltf_to_world(o, gh + b * 3);
                am_gltf_to_world(tl, gt + b * 3);
                for (int k = 0; k < 3; k++) {
                    am_test_diff_add(&dh, gh[b * 3 + k], heads[b * 3 + k]);
                    am_test_diff_add(&dt, gt[b * 3 + k], tails[b * 3 + k]);
                }
            }
            for (size_t j = 0; j < J; j++) {
                size_t b = (size_t)rig->kp_bone[j];
                const double *p = (rig->kp_is_tail[j] ? gt : gh) + b * 3;
                for (int k = 0; k < 3; k++) am_test_diff_add(&dk, p[k], kp[j * 3 + k]);
                if (mo->joints && mo->joint_count == J)
                    for (int k = 0; k < 3; k++) am_test_diff_add(&dk, p[k], mo->joints[(t * J + j) * 3 + k]);
            }
        }
        AM_CHECK_MSG(dh.max < AMI_TOL_POS && dt.max < AMI_TOL_POS && dk.max < AMI_TOL_POS,
                     "%s clip %zu: heads max %.3g mean %.3g, tails max %.3g, keypoints max %.3g (n=%zu)",
                     path, c, dh.max, am_test_diff_mean(&dh), dt.max, dk.max, dk.count);
        /* The time range of the animation is the motion's. */
        AM_CHECK_NEAR(doc->animations[c].t_min, 0.0, 0.0);
        AM_CHECK_NEAR(doc->animations[c].t_max, (double)(mo->frame_count - 1) / mo->fps, 1e-6);
    }
    am_free(local);
    am_free(world);
    am_free(pose);
    am_free(heads);
    am_free(tails);
    am_free(kp);
    am_free(gh);
    am_free(gt);
    am_gltf_free(doc);
}

/* The expected top-4 of one vertex, straight from the definition: merge repeated bones, keep
 * the 4 heaviest, divide by their sum. Returns the weight of `bone` (0 if not kept). */
static double ami_expected_weight(const am_gltf_mesh_in *m, size_t v, int32_t bone, size_t *kept)
{
    size_t K = m->influences, n = 0;
    int32_t bs[64];
    double ws[64];
    for (size_t k = 0; k < K; k++) {
        int32_t b = m->bone_index[v * K + k];
        double w = m->weights[v * K + k];
        if (b < 0 || !(w > 0)) continue;
        size_t e = 0;
        while (e < n && bs[e] != b) e++;
        if (e == n) {
            bs[n] = b;
            ws[n++] = 0;
        }
        ws[e] += w;
    }
    double sum = 0, found = 0;
    size_t keep = n < 4 ? n : 4;
    for (size_t i = 0; i < keep; i++) {
        size_t best = i;
        for (size_t e = i + 1; e < n; e++)
            if (ws[e] > ws[best] || (ws[e] == ws[best] && bs[e] < bs[best])) best = e;
        int32_t tb = bs[i];
        double tw = ws[i];
        bs[i] = bs[best], ws[i] = ws[best], bs[best] = tb, ws[best] = tw;
        sum += ws[i];
    }
    *kept = keep;
    if (keep == 0) return bone == 0 ? 1.0 : 0.0;
    for (size_t i = 0; i < keep; i++)
        if (bs[i] == bone) found = ws[i] / sum;
    return found;
}

static void ami_check_weights(const am_gltf_mesh_in *m, const char *path)
{
    am_gltf *doc = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (!doc) return;
    const am_gltf_primitive *pr = &doc->meshes[0].primitives[0];
    AM_CHECK(pr->mode == (m->triangle_count ? 4 : 0));
    AM_CHECK(pr->joints0 >= 0 && pr->weights0 >= 0 && pr->position >= 0);
    if (pr->joints0 < 0 || pr->weights0 < 0 || pr->position < 0) {
        am_gltf_free(doc);
        return;
    }
    const am_gltf_accessor *ja = &doc->accessors[pr->joints0], *wa = &doc->accessors[pr->weights0];
    const am_gltf_accessor *pa = &doc->accessors[pr->position];
    AM_CHECK(ja->count == m->vertex_count && wa->count == m->vertex_count && ja->ints);
    if (m->triangle_count) {
        AM_CHECK(pr->indices >= 0);
        if (pr->indices >= 0) {
            const am_gltf_accessor *ia = &doc->accessors[pr->indices];
            AM_CHECK(ia->count == m->triangle_count * 3);
            for (size_t i = 0; i < ia->count && ia->ints; i++)
                AM_CHECK(ia->ints[i] == (uint32_t)m->triangles[i]);
        }
    }
    am_test_diff dw = {0}, dp = {0};
    size_t bad = 0;
    for (size_t v = 0; v < m->vertex_count && ja->ints; v++) {
        float fsum = 0.0f;
        size_t nonzero = 0, kept = 0;
        for (int k = 0; k < 4; k++) {
            uint32_t j = ja->ints[v * 4 + k];
            float w = wa->data[v * 4 + k];
            fsum += w;
            if (w == 0.0f) {
                if (j != 0) bad++;
                continue;
            }
            nonzero++;
            am_test_diff_add(&dw, w, ami_expected_weight(m, v, (int32_t)j, &kept));
        }
        ami_expected_weight(m, v, 0, &kept);
        if (fsum != 1.0f || nonzero != (kept ? kept : 1)) bad++;
        double w3[3] = {m->positions[v * 3], m->positions[v * 3 + 1], m->positions[v * 3 + 2]}, g[3];
        am_gltf_from_world(w3, g);
        for (int k = 0; k < 3; k++) am_test_diff_add(&dp, pa->data[v * 3 + k], g[k]);
    }
    AM_CHECK_MSG(bad == 0, "%zu vertices with a bad slot, float sum != 1 or wrong count", bad);
    AM_CHECK_MSG(dw.max < 1e-6, "weights differ from top-4 renormalized by %.3g", dw.max);
    AM_CHECK_MSG(dp.max < 1e-6, "positions differ by %.3g", dp.max);
    /* Vertex 0 had no influence: bound to the root alone. */
    AM_CHECK(ja->ints[0] == 0 && wa->data[0] == 1.0f);
    am_gltf_free(doc);
}

static void ami_check_deterministic(const am_gltf_export *ex, const char *path)
{
    am_buf a = {0}, b = {0};
    am_error err = {0};
    AM_CHECK_OK(am_gltf_write_mem(ex, &a, &err), &err);
    AM_CHECK_OK(am_gltf_write_mem(ex, &b, &err), &err);
    AM_CHECK(a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    AM_CHECK(a.len % 4 == 0);
    char *f = NULL;
    size_t len = 0;
    AM_CHECK_OK(am_file_read(path, 0, &f, &len, &err), &err);
    AM_CHECK_MSG(f && len == a.len && memcmp(f, a.data, len) == 0, "%s differs from write_mem", path);
    am_free(f);
    am_buf_free(&a);
    am_buf_free(&b);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void gltf_write_golden_fk_motion(void)
{
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_load(am_test_shared("golden/fk/testrig.json"), &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_load(am_test_shared("golden/fk/testrig_motion.json"), rig, &mo, &err), &err);
    if (!rig || !mo) goto done;
    const am_motion *clips[1] = {mo};
    const char *names[1] = {"golden"};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .clip_names = names};
    const char *path = am_test_tmp("golden.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    ami_check_readback(&ex, path);
    ami_check_deterministic(&ex, path);

    /* Importing the file rebuilds the rig: every head, and every leaf tail (from the end
     * nodes), at the rig's rest positions. */
    am_gltf *doc = NULL;
    am_rig *back = NULL;
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (doc) AM_CHECK_OK(am_rig_from_gltf(doc, -1, &back, &err), &err);
    if (back) {
        AM_CHECK(back->bone_count == rig->bone_count);
        am_test_diff dh = {0}, dt = {0};
        for (size_t b = 0; b < rig->bone_count; b++) {
            int bb = am_rig_find_bone(back, rig->bone_names[b]);
            AM_CHECK_MSG(bb >= 0, "bone '%s' lost", rig->bone_names[b]);
            if (bb < 0) continue;
            const double *h0 = rig->joint_rest + rig->head_joint[b] * 3;
            const double *h1 = back->joint_rest + back->head_joint[bb] * 3;
            for (int k = 0; k < 3; k++) am_test_diff_add(&dh, h1[k], h0[k]);
            bool leaf = true;
            for (size_t c = 0; c < rig->bone_count; c++) leaf = leaf && rig->parent[c] != (int32_t)b;
            if (!leaf) continue;
            const double *t0 = rig->joint_rest + rig->tail_joint[b] * 3;
            const double *t1 = back->joint_rest + back->tail_joint[bb] * 3;
            for (int k = 0; k < 3; k++) am_test_diff_add(&dt, t1[k], t0[k]);
        }
        AM_CHECK_MSG(dh.max < AMI_TOL_POS && dt.max < AMI_TOL_POS && dt.count > 0,
                     "re-imported rig: heads off by %.3g, leaf tails by %.3g (n=%zu)", dh.max, dt.max,
                     dt.count);
    }
    am_rig_free(back);
    am_gltf_free(doc);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

static void gltf_write_random_rig_two_clips(void)
{
    am_rig *rig = ami_random_rig(40);
    am_motion *a = rig ? ami_random_motion(rig, 25, 30.0) : NULL;
    am_motion *b = rig ? ami_random_motion(rig, 7, 24.0) : NULL;
    if (!a || !b) goto done;
    const am_motion *clips[2] = {a, b};
    am_gltf_export ex = {.rig = rig, .clip_count = 2, .clips = clips};
    const char *path = am_test_tmp("random.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    ami_check_readback(&ex, path);
    ami_check_deterministic(&ex, path);
done:
    am_motion_free(a);
    am_motion_free(b);
    am_rig_free(rig);
}

/* Bones that slide (loc) get translation keys, the others only rotation keys; every head,
 * tail and keypoint samples back onto FK with loc. */
static void gltf_write_motion_with_loc(void)
{
    am_rig *rig = ami_random_rig(20);
    am_motion *mo = rig ? ami_random_motion(rig, 12, 30.0) : NULL;
    am_gltf *doc = NULL;
    am_error err = {0};
    if (!mo) goto done;
    size_t B = rig->bone_count, T = mo->frame_count;
    mo->loc = am_alloc_array(T * B * 3, sizeof *mo->loc);
    for (size_t t = 0; t < T; t++)
        for (size_t b = 3; b < B; b += 4)
            am_vec3_set(mo->loc + (t * B + b) * 3, 0.02 * sin((double)(t + b)), 0.05 * (double)t / (double)T,
                        -0.01 * cos((double)t));
    const am_motion *clips[1] = {mo};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
    const char *path = am_test_tmp("loc.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    ami_check_readback(&ex, path);
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (doc && doc->animation_count == 1) {
        const am_gltf_animation *an = &doc->animations[0];
        size_t translated = 0;
        for (size_t c = 0; c < an->channel_count; c++) {
            if (an->channels[c].path != AM_GLTF_PATH_TRANSLATION) continue;
            size_t b = (size_t)an->channels[c].node;
            AM_CHECK_MSG(b == 0 || b % 4 == 3, "bone %zu has translation keys without loc", b);
            translated++;
        }
        AM_CHECK(translated == 1 + (B - 3 + 3) / 4);
    }
done:
    am_gltf_free(doc);
    am_motion_free(mo);
    am_rig_free(rig);
}

static void gltf_write_user_mesh_triangles_and_points(void)
{
    am_rig *rig = ami_random_rig(12);
    am_motion *mo = rig ? ami_random_motion(rig, 10, 30.0) : NULL;
    if (!mo) goto done;
    const am_motion *clips[1] = {mo};
    for (int points = 0; points < 2; points++) {
        ami_mesh m;
        ami_make_mesh(rig, 300, 7, points ? 0 : 200, &m);
        am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .mesh = &m.in};
        const char *path = am_test_tmp(points ? "points.glb" : "triangles.glb");
        ami_write_file(&ex, path);
        ami_validate(path);
        ami_check_readback(&ex, path);
        ami_check_weights(&m.in, path);
        ami_check_deterministic(&ex, path);
        ami_free_mesh(&m);
    }
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

/* 300 bones: joint indices no longer fit a byte; a single keyframe; no clip at all. */
static void gltf_write_many_bones_single_frame(void)
{
    /* A chain long enough for 16-bit joints. */
    enum { N = 300 };
    static char jn[N + 1][32], bn[N][32];
    static const char *jp[N + 1], *bp[N], *hd[N], *tl[N], *pa[N];
    static double pos[(N + 1) * 3];
    for (int j = 0; j <= N; j++) {
        snprintf(jn[j], sizeof jn[j], "j%d", j);
        jp[j] = jn[j];
        pos[j * 3 + 0] = 0.01 * sin(j * 0.7);
        pos[j * 3 + 1] = 0.01 * cos(j * 0.3);
        pos[j * 3 + 2] = 0.02 * j;
    }
    for (int b = 0; b < N; b++) {
        snprintf(bn[b], sizeof bn[b], "b%d", b);
        bp[b] = bn[b];
        hd[b] = jn[b];
        tl[b] = jn[b + 1];
        pa[b] = b ? bn[b - 1] : NULL;
    }
    am_rig_desc desc = {.joint_count = N + 1, .joint_names = jp, .joint_pos = pos, .bone_count = N,
                        .bone_names = bp, .bone_head = hd, .bone_tail = tl, .bone_parent = pa};
    am_error err = {0};
    am_rig *rig = NULL;
    AM_CHECK_OK(am_rig_build(&desc, &rig, &err), &err);
    am_motion *mo = rig ? ami_random_motion(rig, 1, 30.0) : NULL;
    if (!mo) goto done;
    for (size_t i = 0; i < N * 3; i++) mo->euler[i] *= 0.05; /* keep the chain from folding */
    const am_motion *clips[1] = {mo};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
    const char *path = am_test_tmp("chain300.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    ami_check_readback(&ex, path);
    am_gltf *doc = NULL;
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (doc) {
        const am_gltf_accessor *ja = &doc->accessors[doc->meshes[0].primitives[0].joints0];
        AM_CHECK(ja->component_type == 5123);
        am_gltf_free(doc);
    }
    am_gltf_export still = {.rig = rig};
    const char *path2 = am_test_tmp("rest_only.glb");
    ami_write_file(&still, path2);
    ami_validate(path2);
    ami_check_readback(&still, path2);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

/* A leaf bone just off -Y (inside the roll-0 approximation cone, SPEC 2.2): its frame is
 * nearly orthonormal, so glTF (rigid) cannot follow FK exactly. The head stays exact; the
 * tail keeps its direction and may miss by the frame's skew times the length (<= 4e-5 L). */
static void gltf_write_near_minus_y_bone(void)
{
    const char *jn[] = {"a", "b", "c"};
    double pos[] = {0, 0, 1, 0, 0.2, 1, 0.01, 0.2 - 0.3, 1.005};
    const char *bn[] = {"spine", "nose"}, *hd[] = {"a", "b"}, *tl[] = {"b", "c"}, *pa[] = {NULL, "spine"};
    am_rig_desc desc = {.joint_count = 3, .joint_names = jn, .joint_pos = pos, .bone_count = 2,
                        .bone_names = bn, .bone_head = hd, .bone_tail = tl, .bone_parent = pa};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&desc, &rig, &err), &err);
    am_motion *mo = rig ? ami_random_motion(rig, 5, 30.0) : NULL;
    if (!mo) goto done;
    const am_motion *clips[1] = {mo};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
    const char *path = am_test_tmp("near_minus_y.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    am_gltf *doc = NULL;
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (!doc) goto done;
    double local[4 * 16], world[4 * 16], pose[2 * 16], heads[6], tails[6];
    AM_CHECK(doc->node_count == 4);
    for (size_t t = 0; t < mo->frame_count; t++) {
        am_gltf_sample_local(doc, 0, (double)(float)((double)t / mo->fps), local);
        am_gltf_world_from_local(doc, local, world);
        am_rig_fk(rig, mo->trans + t * 3, mo->root_quat + t * 4, mo->euler + t * 6, pose);
        am_rig_bone_ends(rig, pose, heads, tails);
        for (size_t b = 0; b < 2; b++) {
            const double *W = world + b * 16;
            double o[3] = {W[3], W[7], W[11]}, y[3] = {W[1], W[5], W[9]}, tl3[3], h[3], tw[3];
            am_vec3_madd(o, rig->length[b], y, tl3);
            am_gltf_to_world(o, h);
            am_gltf_to_world(tl3, tw);
            AM_CHECK(am_vec3_dist(h, heads + b * 3) < 1e-6);
            AM_CHECK(am_vec3_dist(tw, tails + b * 3) < 4e-5 * rig->length[b] + 1e-6);
        }
    }
    am_gltf_free(doc);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

/* Bad inputs give exact codes and write nothing. */
static void gltf_write_rejects_bad_input(void)
{
    am_rig *rig = ami_random_rig(5), *other = ami_random_rig(6);
    am_motion *mo = rig ? ami_random_motion(rig, 3, 30.0) : NULL;
    am_motion *wrong = other ? ami_random_motion(other, 3, 30.0) : NULL;
    if (!mo || !wrong) goto done;
    am_error err = {0};
    am_buf out = {0};
    const am_motion *clips[1] = {wrong};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_ARG);
    AM_CHECK(out.len == 0);

    clips[0] = mo;
    double fps = mo->fps;
    mo->fps = 0;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    mo->fps = fps;
    double keep = mo->euler[5];
    mo->euler[5] = NAN;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_NONFINITE);
    mo->euler[5] = keep;
    size_t T = mo->frame_count;
    mo->frame_count = 0;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_EMPTY);
    mo->frame_count = T;

    ami_mesh m;
    ami_make_mesh(rig, 10, 2, 4, &m);
    ex.mesh = &m.in;
    m.tri[5] = 10;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    m.tri[5] = 0;
    m.bi[3] = 5;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    m.bi[3] = 0;
    m.pos[4] = INFINITY;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_NONFINITE);
    m.pos[4] = 0;
    m.in.vertex_count = 0;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_EMPTY);
    m.in.vertex_count = 10;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_OK);
    AM_CHECK(out.len > 0);
    am_buf_free(&out);

    /* A failed file write leaves neither the file nor its temporary behind. */
    const char *path = am_test_tmp("never.glb");
    mo->fps = -1;
    ex.mesh = NULL;
    AM_CHECK_STATUS(am_gltf_write(&ex, path, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.file, "never.glb") != NULL);
    mo->fps = fps;
    FILE *f = fopen(path, "rb");
    AM_CHECK(!f && !am_test_tmp_left(path));
    if (f) fclose(f);
    AM_CHECK_STATUS(am_gltf_write(&ex, "/nonexistent-dir/x.glb", &err), AM_E_WRITE);
    ami_free_mesh(&m);
done:
    am_motion_free(mo);
    am_motion_free(wrong);
    am_rig_free(rig);
    am_rig_free(other);
}

/* Out of memory at every allocation: a clean AM_E_NOMEM, no leak (ASan checks the leaks). */
/* am_gltf_write_mem under allocation limits 1, 2, ... until it succeeds (the limit returned) or
 * `most`; *failures counts the limits that gave a code other than AM_E_NOMEM. */
static size_t ami_write_under_limits(const am_gltf_export *ex, size_t most, size_t *failures)
{
    size_t limit;
    for (limit = 1; limit < most; limit++) {
        am_buf out = {0};
        am_error err = {0};
        am_test_alloc_limit(limit);
        am_status st = am_gltf_write_mem(ex, &out, &err);
        am_test_alloc_limit(0);
        am_buf_free(&out);
        if (st == AM_OK) break;
        *failures += st != AM_E_NOMEM;
    }
    return limit;
}

static void gltf_write_survives_allocation_failures(void)
{
    am_rig *rig = ami_random_rig(6);
    am_motion *mo = rig ? ami_random_motion(rig, 4, 30.0) : NULL;
    if (!mo) goto done;
    ami_mesh m;
    ami_make_mesh(rig, 20, 3, 5, &m);
    const am_motion *clips[1] = {mo};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .mesh = &m.in};
    size_t failures = 0, limit = ami_write_under_limits(&ex, 400, &failures);
    AM_CHECK_MSG(failures == 0, "%zu allocation limits gave a code other than E_NOMEM", failures);
    AM_CHECK_MSG(limit < 400, "never succeeded within 400 allocations");
    ami_free_mesh(&m);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}


/* ---- keep the character: a source document driven by clips -------------------------------- */

/* Skinned positions (glTF skinning, glTF axes) of every vertex of every primitive skinned by
 * skin 0, at time t of animation anim (-1: rest): sum_k w_k W(joint_k) IBM_k v. */
static double *ami_skinned(const am_gltf *doc, int anim, double t, size_t *count)
{
    size_t N = doc->node_count, V = 0;
    double *local = am_alloc_array(N * 16, sizeof *local), *world = am_alloc_array(N * 16, sizeof *world);
    am_gltf_sample_local(doc, anim, t, local);
    am_gltf_world_from_local(doc, local, world);
    const am_gltf_skin *sk = &doc->skins[0];
    for (size_t n = 0; n < N; n++) {
        if (doc->nodes[n].skin != 0 || doc->nodes[n].mesh < 0) continue;
        const am_gltf_mesh *m = &doc->meshes[doc->nodes[n].mesh];
        for (size_t p = 0; p < m->primitive_count; p++) V += doc->accessors[m->primitives[p].position].count;
    }
    double *out = am_alloc_array(V * 3 + 1, sizeof *out);
    size_t v = 0;
    for (size_t n = 0; n < N; n++) {
        if (doc->nodes[n].skin != 0 || doc->nodes[n].mesh < 0) continue;
        const am_gltf_mesh *m = &doc->meshes[doc->nodes[n].mesh];
        for (size_t p = 0; p < m->primitive_count; p++) {
            const am_gltf_primitive *pr = &m->primitives[p];
            const am_gltf_accessor *pa = &doc->accessors[pr->position], *ja = &doc->accessors[pr->joints0],
                                   *wa = &doc->accessors[pr->weights0];
            for (size_t i = 0; i < pa->count; i++, v++) {
                double acc[3] = {0, 0, 0}, x[3] = {pa->data[3 * i], pa->data[3 * i + 1], pa->data[3 * i + 2]};
                for (int k = 0; k < 4; k++) {
                    double wk = wa->data[4 * i + (size_t)k], M[16], y[3];
                    if (wk == 0) continue;
                    uint32_t j = ja->ints[4 * i + (size_t)k];
                    am_mat4_mul(world + 16 * (size_t)sk->joints[j], sk->inverse_bind + 16 * j, M);
                    am_mat4_mul_point(M, x, y);
                    for (int c = 0; c < 3; c++) acc[c] += wk * y[c];
                }
                memcpy(out + 3 * v, acc, sizeof acc);
            }
        }
    }
    am_free(local);
    am_free(world);
    *count = v;
    return out;
}

static double ami_rig_size(const am_rig *rig)
{
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (size_t j = 0; j < rig->joint_count; j++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], rig->joint_rest[3 * j + (size_t)k]);
            hi[k] = fmax(hi[k], rig->joint_rest[3 * j + (size_t)k]);
        }
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
}

/* The same rig and motions scaled by s (as convert --scale makes them). */
static am_rig *ami_scaled_rig(const am_rig *rig, double s)
{
    size_t J = rig->joint_count, B = rig->bone_count;
    double *pos = malloc(J * 3 * sizeof *pos);
    const char **head = malloc(B * sizeof *head), **tail = malloc(B * sizeof *tail), **par = malloc(B * sizeof *par);
    for (size_t i = 0; i < J * 3; i++) pos[i] = s * rig->joint_rest[i];
    for (size_t b = 0; b < B; b++) {
        head[b] = rig->joint_names[rig->head_joint[b]];
        tail[b] = rig->joint_names[rig->tail_joint[b]];
        par[b] = rig->parent[b] < 0 ? NULL : rig->bone_names[rig->parent[b]];
    }
    am_rig_desc d = {.joint_count = J, .joint_names = (const char *const *)rig->joint_names, .joint_pos = pos,
                     .bone_count = B, .bone_names = (const char *const *)rig->bone_names, .bone_head = head,
                     .bone_tail = tail, .bone_parent = par};
    am_rig *out = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &out, &err), &err);
    free(pos), free(head), free(tail), free(par);
    return out;
}

static void ami_scale_motion(am_motion *mo, double s)
{
    for (size_t i = 0; i < mo->frame_count * 3; i++) mo->trans[i] *= s;
    for (size_t i = 0; mo->loc && i < mo->frame_count * mo->bone_count * 3; i++) mo->loc[i] *= s;
}

/* A model's own clips, sampled into motions and written onto the model: the skinned mesh moves
 * as in the original file (every vertex, every frame), the joints sit on FK, the meshes,
 * materials, textures and images are the source's, and the file is validator-clean. */
static void ami_check_keeps_model(const char *model, size_t clips_wanted, double scale, bool validate)
{
    am_error err = {0};
    am_gltf *doc = NULL, *out = NULL;
    am_rig *rig = NULL, *srig = NULL;
    am_motion *mo[3] = {0};
    const char *names[3] = {0};
    am_buf buf = {0};
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    AM_CHECK_OK(am_gltf_load(am_test_shared(model), &keep, &doc, &err), &err);
    if (!doc) return;
    AM_CHECK(doc->source != NULL);
    AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
    if (!rig) goto done;
    size_t C = doc->animation_count < clips_wanted ? doc->animation_count : clips_wanted;
    for (size_t c = 0; c < C; c++) {
        AM_CHECK_OK(am_motion_from_gltf(doc, -1, rig, (int)c, 30.0, &mo[c], &err), &err);
        if (!mo[c]) goto done;
        names[c] = doc->animations[c].name;
    }
    const am_rig *wrig = rig;
    if (scale != 1.0) {
        srig = ami_scaled_rig(rig, scale);
        for (size_t c = 0; c < C; c++) ami_scale_motion(mo[c], scale);
        wrig = srig;
    }
    am_gltf_export ex = {.rig = wrig, .clip_count = C, .clips = (const am_motion *const *)mo,
                         .clip_names = names, .source = doc, .source_skin = -1};
    const char *path = am_test_tmp(scale == 1.0 ? "keep.glb" : "keep_scaled.glb");
    ami_write_file(&ex, path);
    if (validate) ami_validate(path);
    AM_CHECK_OK(am_gltf_load(path, &keep, &out, &err), &err);
    if (!out) goto done;
    /* The model: same meshes, accessors of the mesh data, skin, materials, textures, images. */
    AM_CHECK(out->mesh_count == doc->mesh_count && out->skin_count == doc->skin_count);
    AM_CHECK(out->animation_count == C);
    for (size_t c = 0; c < C && c < out->animation_count; c++) {
        char fallback[32];
        snprintf(fallback, sizeof fallback, "clip%zu", c);
        AM_CHECK(out->animations[c].name &&
                 strcmp(out->animations[c].name, names[c] ? names[c] : fallback) == 0);
    }
    for (size_t a = 0; a < doc->accessor_count && a < out->accessor_count; a++) {
        const am_gltf_accessor *x = &doc->accessors[a], *y = &out->accessors[a];
        AM_CHECK_MSG(x->count == y->count && x->components == y->components &&
                         memcmp(x->data, y->data, x->count * x->components * sizeof(float)) == 0,
                     "%s: accessor %zu changed", model, a);
    }
    AM_CHECK(memcmp(out->skins[0].inverse_bind, doc->skins[0].inverse_bind,
                    doc->skins[0].joint_count * 16 * sizeof(double)) == 0);
    json_t *a = NULL, *b = NULL;
    AM_CHECK_OK(ami_json_parse(doc->source->json, doc->source->json_len, "a", &a, &err), &err);
    AM_CHECK_OK(ami_json_parse(out->source->json, out->source->json_len, "b", &b, &err), &err);
    static const char *const same[] = {"meshes", "materials", "textures", "samplers"};
    for (size_t k = 0; a && b && k < 4; k++)
        AM_CHECK_MSG(json_equal(json_object_get(a, same[k]), json_object_get(b, same[k])) ||
                         (!json_object_get(a, same[k]) && !json_object_get(b, same[k])),
                     "%s: %s changed", model, same[k]);
    size_t images = json_array_size(json_object_get(a, "images"));
    AM_CHECK(images == json_array_size(json_object_get(b, "images")));
    for (size_t i = 0; a && b && i < images; i++) {
        /* Image bytes: from the view each one names (the sources here embed theirs). */
        const json_t *ia = json_array_get(json_object_get(a, "images"), i),
                     *ib = json_array_get(json_object_get(b, "images"), i);
        AM_CHECK(json_equal(json_object_get(ia, "mimeType"), json_object_get(ib, "mimeType")));
        const json_t *va = json_array_get(json_object_get(a, "bufferViews"),
                                          (size_t)json_integer_value(json_object_get(ia, "bufferView")));
        const json_t *vb = json_array_get(json_object_get(b, "bufferViews"),
                                          (size_t)json_integer_value(json_object_get(ib, "bufferView")));
        size_t la = (size_t)json_integer_value(json_object_get(va, "byteLength"));
        AM_CHECK(la == (size_t)json_integer_value(json_object_get(vb, "byteLength")));
        const uint8_t *pa = doc->source->buffers[0] + json_integer_value(json_object_get(va, "byteOffset"));
        const uint8_t *pb = out->source->buffers[0] + json_integer_value(json_object_get(vb, "byteOffset"));
        AM_CHECK_MSG(memcmp(pa, pb, la) == 0, "%s: image %zu bytes changed", model, i);
    }
    json_decref(a);
    json_decref(b);

    /* The motion: joint nodes on FK heads, skinned vertices where the source put them. */
    double size = ami_rig_size(wrig), gsize = ami_rig_size(rig);
    size_t B = wrig->bone_count;
    double *pose = am_alloc_array(B * 16, sizeof *pose), *heads = am_alloc_array(B * 3, sizeof *heads);
    double *local = am_alloc_array(out->node_count * 16, sizeof *local);
    double *world = am_alloc_array(out->node_count * 16, sizeof *world);
    int32_t *node = am_alloc_array(B, sizeof *node);
    double *bind = am_alloc_array(B * 16, sizeof *bind);
    AM_CHECK_OK(ami_gltf_skin_binding(out, 0, rig, node, bind, &err), &err);
    am_free(bind);
    for (size_t c = 0; c < C; c++) {
        am_test_diff dj = {0}, dv = {0};
        for (size_t t = 0; t < mo[c]->frame_count; t++) {
            double time = (double)t / mo[c]->fps;
            am_motion_pose(wrig, mo[c], t, pose);
            am_rig_bone_ends(wrig, pose, heads, NULL);
            am_gltf_sample_local(out, (int)c, time, local);
            am_gltf_world_from_local(out, local, world);
            for (size_t bo = 0; bo < B; bo++) {
                size_t n = (size_t)node[bo];
                double g[3] = {world[16 * n + 3], world[16 * n + 7], world[16 * n + 11]}, h[3];
                am_gltf_to_world(g, h);
                for (int k = 0; k < 3; k++) am_test_diff_add(&dj, scale * h[k], heads[3 * bo + (size_t)k]);
            }
            size_t nv = 0, ns = 0;
            double *vs = ami_skinned(doc, (int)c, doc->animations[c].t_min + time, &ns);
            double *vo = ami_skinned(out, (int)c, time, &nv);
            AM_CHECK(nv == ns);
            for (size_t i = 0; i < 3 * nv && nv == ns; i++) am_test_diff_add(&dv, vo[i], vs[i]);
            am_free(vs);
            am_free(vo);
        }
        AM_CHECK_MSG(dj.max < 1e-5 * size, "%s clip %zu: joint nodes off FK by %.3g (size %.3g)", model, c,
                     dj.max, size);
        AM_CHECK_MSG(dv.max < 1e-4 * gsize, "%s clip %zu: vertices off the source by %.3g (size %.3g, mean %.3g)",
                     model, c, dv.max, gsize, am_test_diff_mean(&dv));
    }
    am_free(pose);
    am_free(heads);
    am_free(local);
    am_free(world);
    am_free(node);
    /* Deterministic. */
    AM_CHECK_OK(am_gltf_write_mem(&ex, &buf, &err), &err);
    char *bytes = NULL;
    size_t len = 0;
    AM_CHECK_OK(am_file_read(path, 0, &bytes, &len, &err), &err);
    AM_CHECK(bytes && len == buf.len && memcmp(bytes, buf.data, len) == 0);
    am_free(bytes);
done:
    am_buf_free(&buf);
    for (size_t c = 0; c < 3; c++) am_motion_free(mo[c]);
    am_rig_free(rig);
    am_rig_free(srig);
    am_gltf_free(out);
    am_gltf_free(doc);
}

static void gltf_write_keeps_the_character(void)
{
    ami_check_keeps_model("data/gltf/khronos_fox/Fox.glb", 3, 1.0, true); /* textured */
    /* 5 materials, helper bones, an invalid skeleton hint and a transformed skinned mesh node
     * (both fixed without changing what a viewer shows) */
    ami_check_keeps_model("data/gltf/quaternius/Fox.glb", 2, 1.0, true);
    ami_check_keeps_model("data/gltf/quaternius/KnightCharacter.glb", 2, 1.0, true);
    /* .gltf with data URIs; its own JOINTS_0 data draws validator warnings, and mesh data is
     * kept as it is */
    ami_check_keeps_model("data/gltf/khronos_simpleskin/simple_skin.gltf", 1, 1.0, false);
    ami_check_keeps_model("data/gltf/khronos_fox/Fox.glb", 1, 0.01, true); /* a rig in metres */
}

/* Loading with the source kept and writing it back under every allocation limit: AM_E_NOMEM
 * (never a crash or a leak) until the limit is high enough. */
static void gltf_write_source_survives_allocation_failures(void)
{
    am_error err = {0};
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    const char *path = am_test_shared("data/gltf/khronos_simpleskin/simple_skin.gltf");
    bool loaded = false, wrote = false;
    size_t failures = 0;
    for (uint64_t limit = 1; limit < 2000 && !wrote; limit++) {
        am_gltf *doc = NULL;
        am_rig *rig = NULL;
        am_motion *mo = NULL;
        am_buf out = {0};
        am_test_alloc_limit(limit);
        am_status st = am_gltf_load(path, &keep, &doc, &err);
        if (st == AM_OK) {
            loaded = true;
            st = am_rig_from_gltf(doc, -1, &rig, &err);
        }
        if (st == AM_OK) st = am_motion_from_gltf(doc, -1, rig, 0, 30, &mo, &err);
        if (st == AM_OK) {
            const am_motion *clips[1] = {mo};
            am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .source = doc};
            st = am_gltf_write_mem(&ex, &out, &err);
            wrote = st == AM_OK;
        }
        am_test_alloc_limit(0);
        if (st != AM_OK && st != AM_E_NOMEM) failures++;
        am_buf_free(&out);
        am_motion_free(mo);
        am_rig_free(rig);
        am_gltf_free(doc);
    }
    AM_CHECK(loaded && wrote);
    AM_CHECK_MSG(failures == 0, "%zu allocation limits gave a code other than E_NOMEM", failures);
}

static void gltf_write_source_rejects_misuse(void)
{
    am_error err = {0};
    am_gltf *doc = NULL, *plain = NULL, *other = NULL;
    am_rig *rig = NULL, *wrong = NULL;
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    AM_CHECK_OK(am_gltf_load(am_test_shared("data/gltf/khronos_fox/Fox.glb"), &keep, &doc, &err), &err);
    AM_CHECK_OK(am_gltf_load(am_test_shared("data/gltf/khronos_fox/Fox.glb"), NULL, &plain, &err), &err);
    AM_CHECK_OK(am_gltf_load(am_test_shared("data/gltf/quaternius/Fox.glb"), NULL, &other, &err), &err);
    if (!doc || !plain || !other) goto done;
    AM_CHECK(plain->source == NULL);
    AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
    AM_CHECK_OK(am_rig_from_gltf(other, -1, &wrong, &err), &err);
    if (!rig || !wrong) goto done;
    am_buf out = {0};
    am_gltf_export ex = {.rig = rig, .source = plain};
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_ARG);  /* no KEEP_SOURCE */
    am_gltf_mesh_in mesh = {0};
    ex = (am_gltf_export){.rig = rig, .source = doc, .mesh = &mesh};
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_ARG);  /* two meshes */
    ex = (am_gltf_export){.rig = rig, .source = doc, .source_skin = 3};
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_ARG);  /* no such skin */
    ex = (am_gltf_export){.rig = wrong, .source = doc};
    AM_CHECK(am_gltf_write_mem(&ex, &out, &err) < 0);              /* another model's rig */
    /* A rig of the model whose bones were moved is not its skeleton. */
    am_rig *moved = ami_scaled_rig(rig, 1.0);
    if (moved) {
        moved->joint_rest[3 * (size_t)moved->head_joint[3] + 1] += 0.05 * ami_rig_size(rig);
        ex = (am_gltf_export){.rig = moved, .source = doc};
        AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
        AM_CHECK_MSG(strstr(err.info, "not the skeleton"), "info: %s", err.info);
    }
    am_rig_free(moved);
    AM_CHECK(out.len == 0);
    am_buf_free(&out);
done:
    am_rig_free(rig);
    am_rig_free(wrong);
    am_gltf_free(doc);
    am_gltf_free(plain);
    am_gltf_free(other);
}

/* A mesh gathered from a textured model keeps its look: one primitive per part with its
 * material, TEXCOORD_0 as given, the materials, textures, samplers and the image (embedded). */
static void gltf_write_mesh_keeps_a_look(void)
{
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    am_gltf *doc = NULL, *plain = NULL, *back = NULL;
    am_gltf_meshes *gm = NULL;
    am_rig *rig = NULL;
    int32_t *bone = NULL;
    float *w = NULL;
    am_gltf_mesh_part *parts = NULL;
    am_error err = {0};
    const char *fox = am_test_shared("data/gltf/khronos_fox/Fox.glb");
    AM_CHECK_OK(am_gltf_load(fox, &keep, &doc, &err), &err);
    AM_CHECK_OK(am_gltf_load(fox, NULL, &plain, &err), &err);
    if (!doc || !plain) goto done;
    AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
    AM_CHECK_OK(am_gltf_meshes_gather(doc, &gm, &err), &err);
    if (!rig || !gm) goto done;
    size_t V = gm->mesh.vertex_count, P = gm->part_count;
    AM_CHECK(gm->texcoords && !gm->normals);     /* the fox has UVs and no normals */
    AM_CHECK(P == 1 && gm->parts[0].material == 0 && gm->parts[0].triangle_count == gm->mesh.triangle_count);
    bone = am_alloc_array(V, sizeof *bone);
    w = am_alloc_array(V, sizeof *w);
    parts = am_alloc_array(P, sizeof *parts);
    if (!bone || !w || !parts) goto done;
    for (size_t v = 0; v < V; v++) bone[v] = 0, w[v] = 1;
    for (size_t p = 0; p < P; p++)
        parts[p] = (am_gltf_mesh_part){gm->parts[p].first_triangle, gm->parts[p].triangle_count, gm->parts[p].material};
    am_gltf_mesh_in mi = {.vertex_count = V, .positions = gm->mesh.positions, .triangle_count = gm->mesh.triangle_count,
                          .triangles = gm->mesh.triangles, .influences = 1, .bone_index = bone, .weights = w,
                          .texcoords = gm->texcoords, .look = doc, .part_count = P, .parts = parts};
    am_gltf_export ex = {.rig = rig, .mesh = &mi};
    const char *path = am_test_tmp("fox_look.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    AM_CHECK_OK(am_gltf_load(path, &keep, &back, &err), &err);
    if (!back) goto done;
    AM_CHECK(back->mesh_count == 1 && back->meshes[0].primitive_count == 1);
    const am_gltf_primitive *pr = &back->meshes[0].primitives[0], *src = &doc->meshes[0].primitives[0];
    AM_CHECK(pr->material == 0 && pr->texcoord0 >= 0);
    if (pr->texcoord0 >= 0) {
        const am_gltf_accessor *a = &back->accessors[pr->texcoord0], *b = &doc->accessors[src->texcoord0];
        AM_CHECK(a->count == b->count && a->components == 2);
        if (a->count == b->count) AM_CHECK(memcmp(a->data, b->data, a->count * 2 * sizeof(float)) == 0);
    }
    const char *json = back->source->json;
    AM_CHECK(strstr(json, "\"fox_material\"") && strstr(json, "\"baseColorTexture\"") &&
             strstr(json, "\"image/png\"") && strstr(json, "\"magFilter\"") && strstr(json, "9729"));
    /* misuse: parts that leave triangles out, a material without a look, a look without its source */
    am_buf out = {0};
    am_gltf_mesh_part half = {0, mi.triangle_count / 2, 0};
    am_gltf_mesh_in bad = mi;
    bad.parts = &half;
    AM_CHECK_STATUS(am_gltf_write_mem(&(am_gltf_export){.rig = rig, .mesh = &bad}, &out, &err), AM_E_VALUE);
    bad = mi, bad.look = NULL;
    AM_CHECK_STATUS(am_gltf_write_mem(&(am_gltf_export){.rig = rig, .mesh = &bad}, &out, &err), AM_E_ARG);
    bad = mi, bad.look = plain;
    AM_CHECK_STATUS(am_gltf_write_mem(&(am_gltf_export){.rig = rig, .mesh = &bad}, &out, &err), AM_E_ARG);
    AM_CHECK(out.len == 0);
    am_buf_free(&out);
done:
    am_free(bone);
    am_free(w);
    am_free(parts);
    am_gltf_meshes_free(gm);
    am_rig_free(rig);
    am_gltf_free(doc);
    am_gltf_free(plain);
    am_gltf_free(back);
}

/* Mesh nodes: the Flamingo (14 morph targets with NORMAL deltas, its own COLOR_0, target names)
 * gathered and written twice over as two mesh nodes (the second moved), with limb paint: two
 * meshes, named, each with its own vertices, targets, default weights and names, the paint as
 * COLOR_0 and the Flamingo's colours as COLOR_1, marked; validator-clean. Then the misuse. */
static void gltf_write_mesh_nodes(void)
{
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    am_gltf *doc = NULL, *back = NULL;
    am_gltf_meshes *gm = NULL;
    am_rig *rig = ami_random_rig(4);
    float *pos = NULL, *paint = NULL, *cols = NULL, *w = NULL;
    int32_t *tri = NULL, *bone = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_load(am_test_shared("data/gltf/Flamingo.glb"), &keep, &doc, &err), &err);
    if (!doc || !rig) goto done;
    AM_CHECK_OK(am_gltf_meshes_gather(doc, &gm, &err), &err);
    if (!gm) goto done;
    const am_gltf_part *gp = &gm->parts[0];
    AM_CHECK(gm->part_count == 1 && gp->target_count == 14 && gp->target_positions && gp->target_normals &&
             !gp->target_tangents && gm->colors && gm->normals);
    AM_CHECK(doc->meshes[0].target_name_count == 14 && strcmp(doc->meshes[0].target_names[13], "target_13") == 0);
    const am_gltf_accessor *ca = &doc->accessors[doc->meshes[0].primitives[0].color0];
    AM_CHECK(ca->components == 4 && fabsf(gm->colors[5] - ca->data[5]) < 1e-7f);
    size_t V = gm->mesh.vertex_count, F = gm->mesh.triangle_count;
    pos = am_alloc_array(2 * V * 3, sizeof *pos);
    paint = am_alloc_array(2 * V * 4, sizeof *paint);
    cols = am_alloc_array(2 * V * 4, sizeof *cols);
    w = am_alloc_array(2 * V, sizeof *w);
    tri = am_alloc_array(2 * F * 3, sizeof *tri);
    bone = am_alloc_array(2 * V, sizeof *bone);
    if (!pos || !paint || !cols || !w || !tri || !bone) goto done;
    for (size_t i = 0; i < V * 3; i++) pos[i] = gm->mesh.positions[i], pos[V * 3 + i] = gm->mesh.positions[i] + (i % 3 == 0);
    for (size_t i = 0; i < V * 4; i++) cols[i] = cols[V * 4 + i] = gm->colors[i], paint[i] = paint[V * 4 + i] = 0.5f;
    for (size_t i = 0; i < F * 3; i++) tri[i] = gm->mesh.triangles[i], tri[F * 3 + i] = gm->mesh.triangles[i] + (int32_t)V;
    for (size_t v = 0; v < 2 * V; v++) bone[v] = 0, w[v] = 1;
    am_gltf_mesh_part parts[2];
    for (size_t p = 0; p < 2; p++)
        parts[p] = (am_gltf_mesh_part){.first_triangle = p * F, .triangle_count = F, .material = 0,
                                       .first_vertex = p * V, .vertex_count = V, .target_count = 14,
                                       .target_positions = gp->target_positions, .target_normals = gp->target_normals};
    double weights[14] = {1};
    am_gltf_mesh_node nodes[2] = {
        {.name = "left", .mesh_name = "bird", .first_part = 0, .part_count = 1, .target_count = 14,
         .target_weights = weights, .target_names = (const char *const *)doc->meshes[0].target_names},
        {.name = "right", .mesh_name = "bird2", .first_part = 1, .part_count = 1, .target_count = 14}};
    float *nrm2 = am_alloc_array(2 * V * 3, sizeof *nrm2);
    if (!nrm2) goto done;
    memcpy(nrm2, gm->normals, V * 3 * sizeof *nrm2);
    memcpy(nrm2 + V * 3, gm->normals, V * 3 * sizeof *nrm2);
    am_gltf_mesh_in mi = {.vertex_count = 2 * V, .positions = pos, .triangle_count = 2 * F, .triangles = tri,
                          .influences = 1, .bone_index = bone, .weights = w, .colors = paint, .normals = nrm2,
                          .look = doc, .part_count = 2, .parts = parts, .node_count = 2, .nodes = nodes,
                          .base_colors = cols};
    am_gltf_export ex = {.rig = rig, .mesh = &mi};
    const char *path = am_test_tmp("mesh_nodes.glb");
    ami_write_file(&ex, path);
    ami_validate(path);
    ami_check_deterministic(&ex, path);
    AM_CHECK_OK(am_gltf_load(path, &keep, &back, &err), &err);
    if (back && back->mesh_count == 2) {
        size_t mesh_nodes = 0;
        for (size_t n = 0; n < back->node_count; n++)
            if (back->nodes[n].mesh >= 0) {
                const char *want = back->nodes[n].mesh == 0 ? "left" : "right";
                AM_CHECK(back->nodes[n].name && strcmp(back->nodes[n].name, want) == 0 && back->nodes[n].skin == 0);
                mesh_nodes++;
            }
        AM_CHECK(mesh_nodes == 2);
        AM_CHECK(strcmp(back->meshes[1].name, "bird2") == 0 && back->meshes[0].weight_count == 14 &&
                 back->meshes[0].weights[0] == 1 && back->meshes[0].target_name_count == 14 &&
                 back->meshes[1].target_name_count == 0);
        for (size_t m = 0; m < 2; m++) {
            const am_gltf_primitive *pr = &back->meshes[m].primitives[0];
            AM_CHECK(pr->target_count == 14 && pr->target_normal[3] >= 0 && pr->color0 >= 0 && pr->material == 0);
            AM_CHECK(back->accessors[pr->position].count == V);
            /* the second node's deltas are the first's: the same block given twice */
            const am_gltf_accessor *d = &back->accessors[pr->target_position[2]];
            double gl[3], wd[3] = {gp->target_positions[(2 * V + 7) * 3], gp->target_positions[(2 * V + 7) * 3 + 1],
                                   gp->target_positions[(2 * V + 7) * 3 + 2]};
            am_gltf_from_world(wd, gl);
            AM_CHECK(fabs(d->data[7 * 3 + 1] - gl[1]) < 1e-7);
        }
        AM_CHECK(strstr(back->source->json, "\"COLOR_1\"") &&
                 strstr(back->source->json, "\"anymove_colors\":\"COLOR_1\""));
    } else {
        AM_CHECK(back && back->mesh_count == 2);
    }
    /* every allocation failure of the gather and of the write is AM_E_NOMEM, nothing leaks */
    size_t failures = 0, limit, glimit;
    for (glimit = 1; glimit < 200; glimit++) {
        am_gltf_meshes *g2 = NULL;
        am_test_alloc_limit(glimit);
        am_status st = am_gltf_meshes_gather(doc, &g2, &err);
        am_test_alloc_limit(0);
        am_gltf_meshes_free(g2);
        if (st == AM_OK) break;
        failures += st != AM_E_NOMEM;
    }
    limit = ami_write_under_limits(&ex, 2000, &failures);
    AM_CHECK_MSG(failures == 0 && glimit < 200 && limit < 2000, "%zu limits gave another code; gather %zu, write %zu",
                 failures, glimit, limit);
    /* misuse: a triangle of the second part on the first's vertices, a part with other targets
     * than its node, nodes that leave a part out */
    am_buf out = {0};
    tri[F * 3] = 0;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    AM_CHECK_MSG(strstr(err.info, "another part"), "info: %s", err.info);
    tri[F * 3] = gm->mesh.triangles[0] + (int32_t)V;
    parts[1].target_count = 13;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    parts[1].target_count = 14;
    mi.texcoords1 = pos; /* a second UV set without the first */
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_ARG);
    mi.texcoords1 = NULL;
    mi.node_count = 1;
    AM_CHECK_STATUS(am_gltf_write_mem(&ex, &out, &err), AM_E_VALUE);
    AM_CHECK(out.len == 0);
    am_buf_free(&out);
    am_free(nrm2);
done:
    am_free(pos);
    am_free(paint);
    am_free(cols);
    am_free(w);
    am_free(tri);
    am_free(bone);
    am_gltf_meshes_free(gm);
    am_rig_free(rig);
    am_gltf_free(doc);
    am_gltf_free(back);
}

#define AM_TESTS(X)                                  \
    X(gltf_write_golden_fk_motion)                   \
    X(gltf_write_random_rig_two_clips)               \
    X(gltf_write_motion_with_loc)                    \
    X(gltf_write_user_mesh_triangles_and_points)     \
    X(gltf_write_mesh_keeps_a_look)                  \
    X(gltf_write_mesh_nodes)                         \
    X(gltf_write_many_bones_single_frame)            \
    X(gltf_write_near_minus_y_bone)                  \
    X(gltf_write_rejects_bad_input)                  \
    X(gltf_write_survives_allocation_failures)       \
    X(gltf_write_keeps_the_character)                \
    X(gltf_write_source_rejects_misuse)              \
    X(gltf_write_source_survives_allocation_failures)
AM_TEST_MAIN(AM_TESTS)
