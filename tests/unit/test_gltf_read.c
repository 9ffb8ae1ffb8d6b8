/* glTF reader: the shared test files (counts, decoding, sampling), hand-made documents for each
 * accessor and sampler feature, malformed input, and glTF -> rig -> motion -> FK round trips. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/io.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static am_gltf *load_shared(const char *rel)
{
    am_gltf *doc = NULL;
    am_error err;
    const char *path = am_test_shared(rel);
    am_status s = am_gltf_load(path, NULL, &doc, &err);
    if (s != AM_OK) {
        char m[600];
        am_test_fail(__FILE__, __LINE__, "load %s: %s", rel, am_error_format(m, sizeof m, &err));
        return NULL;
    }
    return doc;
}

static int find_node(const am_gltf *doc, const char *name)
{
    for (size_t i = 0; i < doc->node_count; i++)
        if (doc->nodes[i].name && strcmp(doc->nodes[i].name, name) == 0) return (int)i;
    return -1;
}

static int find_anim(const am_gltf *doc, const char *name)
{
    for (size_t i = 0; i < doc->animation_count; i++)
        if (doc->animations[i].name && strcmp(doc->animations[i].name, name) == 0) return (int)i;
    return -1;
}

static void b64_encode(const unsigned char *in, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

/* A little binary buffer builder for hand-made documents. */
typedef struct bin {
    unsigned char b[4096];
    size_t n;
} bin;

static size_t bin_f32(bin *b, const float *v, size_t n)
{
    size_t off = b->n;
    memcpy(b->b + b->n, v, n * sizeof *v);
    b->n += n * sizeof *v;
    return off;
}

static size_t bin_bytes(bin *b, const void *v, size_t n)
{
    size_t off = b->n;
    memcpy(b->b + b->n, v, n);
    b->n += (n + 3) / 4 * 4;
    return off;
}

static am_status read_text(const char *text, am_gltf **doc, am_error *err)
{
    return am_gltf_read_mem(text, strlen(text), "test.gltf", NULL, NULL, doc, err);
}

/* Builds a document: `body` holds the JSON members after "asset" and "buffers" with %s for
 * nothing else; the buffer is the base64 of b. */
static char *make_doc(const bin *b, const char *body)
{
    static char text[32768];
    char b64[8192];
    b64_encode(b->b, b->n, b64);
    snprintf(text, sizeof text,
             "{\"asset\":{\"version\":\"2.0\"},"
             "\"buffers\":[{\"byteLength\":%zu,\"uri\":\"data:application/octet-stream;base64,%s\"}],"
             "%s}",
             b->n, b64, body);
    return text;
}

/* ---- the shared test files -------------------------------------------------------------- */

static void gltf_loads_every_shared_file(void)
{
    static const struct {
        const char *file;
        size_t joints, anims;
        const char *first_anim;
    } files[] = {
        {"data/gltf/quaternius/Fox.glb", 51, 12, "AnimalArmature|Attack"},
        {"data/gltf/quaternius/Husky.glb", 49, 12, "AnimalArmature|Attack"},
        {"data/gltf/quaternius/Spider.glb", 39, 5, "SpiderArmature|Spider_Attack"},
        {"data/gltf/quaternius/Snake.glb", 15, 4, "SnakeArmature|Snake_Attack"},
        {"data/gltf/quaternius/Frog.glb", 28, 4, "FrogArmature|Frog_Attack"},
        {"data/gltf/quaternius/Trex.glb", 29, 6, "Armature|TRex_Attack"},
        {"data/gltf/quaternius/Dolphin.glb", 13, 1, "Armature|Swim"},
        {"data/gltf/quaternius/KnightCharacter.glb", 31, 12, "HumanArmature|Death"},
        {"data/gltf/khronos_fox/Fox.glb", 24, 3, "Survey"},
        {"data/gltf/khronos_simpleskin/simple_skin.gltf", 2, 1, NULL},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        am_gltf *doc = load_shared(files[f].file);
        if (!doc) continue;
        AM_CHECK_MSG(doc->skin_count == 1 && doc->skins[0].joint_count == files[f].joints,
                     "%s: %zu skins, %zu joints", files[f].file, doc->skin_count,
                     doc->skin_count ? doc->skins[0].joint_count : 0);
        AM_CHECK_MSG(doc->animation_count == files[f].anims, "%s: %zu animations",
                     files[f].file, doc->animation_count);
        if (files[f].first_anim && doc->animation_count)
            AM_CHECK_MSG(doc->animations[0].name &&
                             strcmp(doc->animations[0].name, files[f].first_anim) == 0,
                         "%s: first clip %s", files[f].file, doc->animations[0].name);
        AM_CHECK(doc->mesh_count == 1 && doc->scene == 0);
        /* Every node is in the parents-first order exactly once. */
        size_t seen = 0;
        for (size_t k = 0; k < doc->node_count; k++) {
            int32_t n = doc->node_order[k], p = doc->nodes[n].parent;
            bool ok = true;
            if (p >= 0) {
                ok = false;
                for (size_t q = 0; q < k; q++) ok = ok || doc->node_order[q] == p;
            }
            seen += ok;
        }
        AM_CHECK(seen == doc->node_count);
        /* Skinned primitives have 4 joints/weights per vertex, weights summing to ~1. */
        const am_gltf_primitive *pr = &doc->meshes[0].primitives[0];
        AM_CHECK(pr->joints0 >= 0 && pr->weights0 >= 0 && pr->position >= 0);
        if (pr->weights0 >= 0) {
            const am_gltf_accessor *w = &doc->accessors[pr->weights0];
            const am_gltf_accessor *j = &doc->accessors[pr->joints0];
            double worst = 0;
            for (size_t v = 0; v < w->count; v++) {
                double sum = 0;
                for (int k = 0; k < 4; k++) {
                    sum += w->data[v * 4 + (size_t)k];
                    AM_CHECK(j->ints[v * 4 + (size_t)k] < doc->skins[0].joint_count);
                }
                worst = fmax(worst, fabs(sum - 1));
            }
            AM_CHECK_MSG(worst < 1e-2, "%s: weight sum off by %g", files[f].file, worst);
        }
        am_gltf_free(doc);
    }
    /* The Khronos fox's clip names and the quaternius fox's clip list of the data README. */
    am_gltf *kfox = load_shared("data/gltf/khronos_fox/Fox.glb");
    if (kfox) {
        AM_CHECK(find_anim(kfox, "Survey") == 0 && find_anim(kfox, "Walk") == 1 &&
                 find_anim(kfox, "Run") == 2);
        AM_CHECK(kfox->node_count == 26);
        am_gltf_free(kfox);
    }
    am_gltf *fox = load_shared("data/gltf/quaternius/Fox.glb");
    if (fox) {
        static const char *clips[] = {"Attack", "Death", "Eating", "Gallop", "Gallop_Jump",
                                      "Idle", "Idle_2", "Idle_2_HeadLow", "Idle_HitReact_Left",
                                      "Idle_HitReact_Right", "Jump_ToIdle", "Walk"};
        for (size_t i = 0; i < 12; i++) {
            char name[64];
            snprintf(name, sizeof name, "AnimalArmature|%s", clips[i]);
            AM_CHECK_MSG(find_anim(fox, name) == (int)i, "clip %s", name);
        }
        AM_CHECK(find_node(fox, "PoleTarget.L") >= 0 && find_node(fox, "IKBackLeg.L") >= 0);
        AM_CHECK(fox->generator && strstr(fox->generator, "FBX2glTF"));
        am_gltf_free(fox);
    }
}

static void gltf_flamingo_has_morph_targets_and_no_skin(void)
{
    am_gltf *doc = load_shared("data/gltf/Flamingo.glb");
    if (!doc) return;
    AM_CHECK(doc->skin_count == 0);
    AM_CHECK(doc->node_count == 1 && doc->nodes[0].mesh == 0);
    const am_gltf_primitive *pr = &doc->meshes[0].primitives[0];
    AM_CHECK(pr->target_count == 14);
    AM_CHECK(pr->joints0 < 0);
    AM_CHECK(doc->animation_count == 1);
    const am_gltf_animation *an = &doc->animations[0];
    AM_CHECK(an->channel_count == 1 && an->channels[0].path == AM_GLTF_PATH_WEIGHTS);
    /* At each keyframe the sampled weights are the keyframe's values. */
    const am_gltf_sampler *sm = &an->samplers[an->channels[0].sampler];
    const am_gltf_accessor *in = &doc->accessors[sm->input];
    const am_gltf_accessor *out = &doc->accessors[sm->output];
    double w[14];
    am_test_diff d = {0};
    for (size_t k = 0; k < in->count; k += 3) {
        am_gltf_sample_weights(doc, 0, in->data[k], 0, w, 14);
        for (size_t i = 0; i < 14; i++) am_test_diff_add(&d, w[i], out->data[k * 14 + i]);
    }
    AM_CHECK_MSG(d.max < 1e-6, "weights at keys: max %g", d.max);
    /* Halfway between two keys: the mean (LINEAR). */
    if (in->count > 2) {
        double t = 0.5 * (in->data[0] + in->data[1]);
        am_gltf_sample_weights(doc, 0, t, 0, w, 14);
        for (size_t i = 0; i < 14; i++)
            AM_CHECK_NEAR(w[i], 0.5 * (out->data[i] + out->data[14 + i]), 1e-6);
    }
    /* The targets are decoded 3-vectors, one per vertex. */
    AM_CHECK(doc->accessors[pr->target_position[0]].count == doc->accessors[pr->position].count);
    am_gltf_free(doc);
}

/* Sampling at every keyframe time reproduces the keyframe values in the local matrices. */
static void gltf_sampling_at_keys_gives_key_values(void)
{
    static const char *files[] = {"data/gltf/quaternius/Fox.glb", "data/gltf/khronos_fox/Fox.glb",
                                  "data/gltf/khronos_simpleskin/simple_skin.gltf",
                                  "data/gltf/quaternius/KnightCharacter.glb"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        am_gltf *doc = load_shared(files[f]);
        if (!doc) continue;
        double *local = am_alloc_array(doc->node_count, 16 * sizeof(double));
        am_test_diff dt = {0}, dr = {0};
        for (size_t a = 0; a < doc->animation_count; a++) {
            const am_gltf_animation *an = &doc->animations[a];
            for (size_t c = 0; c < an->channel_count; c++) {
                const am_gltf_channel *ch = &an->channels[c];
                const am_gltf_sampler *sm = &an->samplers[ch->sampler];
                const am_gltf_accessor *in = &doc->accessors[sm->input];
                const am_gltf_accessor *out = &doc->accessors[sm->output];
                for (size_t k = 0; k < in->count; k += 5) {
                    am_gltf_sample_local(doc, (int)a, in->data[k], local);
                    const double *M = local + 16 * (size_t)ch->node;
                    if (ch->path == AM_GLTF_PATH_TRANSLATION) {
                        for (int i = 0; i < 3; i++)
                            am_test_diff_add(&dt, M[i * 4 + 3], out->data[k * 3 + (size_t)i]);
                    } else if (ch->path == AM_GLTF_PATH_ROTATION) {
                        const float *v = out->data + k * 4;
                        double q[4] = {v[3], v[0], v[1], v[2]}, R[9];
                        am_quat_normalize(q, q);
                        am_quat_to_mat3(q, R);
                        for (int col = 0; col < 3; col++) {
                            double len = sqrt(M[col] * M[col] + M[4 + col] * M[4 + col] +
                                              M[8 + col] * M[8 + col]);
                            for (int r = 0; r < 3; r++)
                                am_test_diff_add(&dr, M[r * 4 + col] / len, R[r * 3 + col]);
                        }
                    }
                }
            }
        }
        AM_CHECK_MSG(dt.max < 1e-6 && dr.max < 1e-6, "%s: translation max %g, rotation max %g",
                     files[f], dt.max, dr.max);
        /* Outside the clip the end values hold. */
        if (doc->animation_count) {
            double *l2 = am_alloc_array(doc->node_count, 16 * sizeof(double));
            am_gltf_sample_local(doc, 0, doc->animations[0].t_max, local);
            am_gltf_sample_local(doc, 0, doc->animations[0].t_max + 10, l2);
            AM_CHECK(memcmp(local, l2, doc->node_count * 16 * sizeof(double)) == 0);
            am_gltf_sample_local(doc, 0, doc->animations[0].t_min, local);
            am_gltf_sample_local(doc, 0, doc->animations[0].t_min - 10, l2);
            AM_CHECK(memcmp(local, l2, doc->node_count * 16 * sizeof(double)) == 0);
            am_free(l2);
        }
        am_free(local);
        am_gltf_free(doc);
    }
}

/* simple_skin.gltf: the accessor values of the Khronos tutorial, and world = parent * local. */
static void gltf_simple_skin_decodes_tutorial_values(void)
{
    am_gltf *doc = load_shared("data/gltf/khronos_simpleskin/simple_skin.gltf");
    if (!doc) return;
    AM_CHECK(doc->node_count == 3 && doc->skins[0].joints[0] == 1 && doc->skins[0].joints[1] == 2);
    AM_CHECK(doc->nodes[2].parent == 1 && doc->nodes[1].parent == 0 && doc->nodes[0].parent == -1);
    AM_CHECK_NEAR(doc->nodes[1].translation[1], 1.0, 1e-12);
    /* Inverse bind of joint 0 (at y = 1) translates by -1 in Y (row-major: element [1][3]). */
    AM_CHECK_NEAR(doc->skins[0].inverse_bind[7], -1.0, 1e-6);
    const am_gltf_primitive *pr = &doc->meshes[0].primitives[0];
    const am_gltf_accessor *pos = &doc->accessors[pr->position];
    AM_CHECK(pos->count == 10 && pos->components == 3 && pos->ints == NULL);
    AM_CHECK_NEAR(pos->data[3 * 9 + 0], 1.0, 1e-6);
    AM_CHECK_NEAR(pos->data[3 * 9 + 1], 2.0, 1e-6);
    const am_gltf_accessor *idx = &doc->accessors[pr->indices];
    AM_CHECK(idx->component_type == 5123 && idx->ints && idx->count == 24);
    AM_CHECK(idx->ints[0] == 0 && idx->ints[1] == 1 && idx->ints[2] == 3);
    const am_gltf_accessor *jt = &doc->accessors[pr->joints0];
    /* JOINTS_0 lives in an interleaved view (byteStride 16) with WEIGHTS_0. */
    AM_CHECK(jt->ints[4 * 9 + 0] == 0 && jt->ints[4 * 9 + 1] == 1);
    double local[48], world[48];
    am_gltf_sample_local(doc, 0, 1.5, local);
    am_gltf_world_from_local(doc, local, world);
    double expect[16];
    double tmp[16];
    am_mat4_mul(local, local + 16, tmp);
    am_mat4_mul(tmp, local + 32, expect);
    for (int i = 0; i < 16; i++) AM_CHECK_NEAR(world[32 + i], expect[i], 1e-12);
    am_gltf_free(doc);
}

static void gltf_axis_conversion_is_spec_4_5(void)
{
    double w[3] = {1, 2, 3}, g[3], back[3];
    am_gltf_from_world(w, g);
    AM_CHECK(g[0] == 1 && g[1] == 3 && g[2] == -2);
    am_gltf_to_world(g, back);
    AM_CHECK(back[0] == 1 && back[1] == 2 && back[2] == 3);
}

/* ---- hand-made documents ---------------------------------------------------------------- */

static void gltf_cubicspline_and_step_sampling(void)
{
    bin b = {0};
    float times[2] = {1.0f, 3.0f};
    /* translation CUBICSPLINE: key 0 (in a0, value p0, out b0), key 1 (a1, p1, b1). */
    float cub[18] = {9, 9, 9, 0, 0, 0, 1, 2, 0, /**/ 0, 1, -1, 4, 0, 2, 9, 9, 9};
    float step[6] = {5, 6, 7, -5, -6, -7};
    /* rotation CUBICSPLINE with zero tangents (x,y,z,w): identity -> 90 deg about Z. */
    float rot[24] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0.70710678f, 0.70710678f, 0, 0, 0, 0};
    size_t ot = bin_f32(&b, times, 2), oc = bin_f32(&b, cub, 18), os = bin_f32(&b, step, 6),
           orr = bin_f32(&b, rot, 24);
    char body[4096];
    snprintf(body, sizeof body,
             "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":72},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":24},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":96}],"
             "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"},"
             "{\"bufferView\":1,\"componentType\":5126,\"count\":6,\"type\":\"VEC3\"},"
             "{\"bufferView\":2,\"componentType\":5126,\"count\":2,\"type\":\"VEC3\"},"
             "{\"bufferView\":3,\"componentType\":5126,\"count\":6,\"type\":\"VEC4\"}],"
             "\"nodes\":[{\"name\":\"a\"},{\"name\":\"b\",\"scale\":[2,2,2]}],"
             "\"animations\":[{\"name\":\"c\",\"samplers\":["
             "{\"input\":0,\"output\":1,\"interpolation\":\"CUBICSPLINE\"},"
             "{\"input\":0,\"output\":2,\"interpolation\":\"STEP\"},"
             "{\"input\":0,\"output\":3,\"interpolation\":\"CUBICSPLINE\"}],"
             "\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"translation\"}},"
             "{\"sampler\":1,\"target\":{\"node\":1,\"path\":\"translation\"}},"
             "{\"sampler\":2,\"target\":{\"node\":1,\"path\":\"rotation\"}}]}]",
             ot, oc, os, orr);
    am_gltf *doc = NULL;
    am_error err;
    AM_CHECK_OK(read_text(make_doc(&b, body), &doc, &err), &err);
    if (!doc) return;
    AM_CHECK(doc->animations[0].t_min == 1.0 && doc->animations[0].t_max == 3.0);
    double L[32];
    /* Hermite at u = 0.5, interval td = 2: 0.5 p0 + 0.125 td b0 + 0.5 p1 - 0.125 td a1. */
    am_gltf_sample_local(doc, 0, 2.0, L);
    double p0[3] = {0, 0, 0}, b0[3] = {1, 2, 0}, a1[3] = {0, 1, -1}, p1[3] = {4, 0, 2};
    for (int i = 0; i < 3; i++)
        AM_CHECK_NEAR(L[i * 4 + 3], 0.5 * p0[i] + 0.25 * b0[i] + 0.5 * p1[i] - 0.25 * a1[i],
                      1e-6);
    /* u = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875. */
    am_gltf_sample_local(doc, 0, 1.5, L);
    for (int i = 0; i < 3; i++)
        AM_CHECK_NEAR(L[i * 4 + 3], 0.84375 * p0[i] + 0.140625 * 2 * b0[i] + 0.15625 * p1[i] -
                                        0.046875 * 2 * a1[i],
                      1e-6);
    /* STEP holds key 0 until the next key's time. */
    am_gltf_sample_local(doc, 0, 2.999, L);
    AM_CHECK_NEAR(L[16 + 3], 5, 1e-9);
    AM_CHECK_NEAR(L[16 + 11], 7, 1e-9);
    am_gltf_sample_local(doc, 0, 3.0, L);
    AM_CHECK_NEAR(L[16 + 3], -5, 1e-9);
    /* Rotation: the Hermite blend of quaternions is normalized; the node's scale 2 is kept. */
    am_gltf_sample_local(doc, 0, 2.0, L);
    double cx = L[16 + 0], cy = L[16 + 4];
    AM_CHECK_NEAR(sqrt(cx * cx + cy * cy), 2.0, 1e-6);
    AM_CHECK_NEAR(atan2(cy, cx), AM_PI / 4, 1e-3);
    am_gltf_free(doc);
}

static void gltf_sparse_normalized_and_strided_accessors(void)
{
    bin b = {0};
    int8_t sb[8] = {127, -127, -128, 0, 64, -64, 1, -1};
    uint8_t ub[4] = {0, 255, 51, 128};
    int16_t ss[4] = {32767, -32768, -32767, 16384};
    uint16_t us[4] = {0, 65535, 1, 7};
    uint32_t ui[2] = {4000000000u, 3};
    size_t o1 = bin_bytes(&b, sb, 8), o2 = bin_bytes(&b, ub, 4), o3 = bin_bytes(&b, ss, 8),
           o4 = bin_bytes(&b, us, 8), o5 = bin_bytes(&b, ui, 8);
    /* Sparse: indices (uint8) 1, 3 and values for them (VEC2 float). */
    uint8_t sidx[2] = {1, 3};
    float sval[4] = {10, 11, 30, 31};
    size_t o6 = bin_bytes(&b, sidx, 2), o7 = bin_f32(&b, sval, 4);
    /* Interleaved: (x, y, z, pad) * 3 floats with stride 16: VEC3 reads the first three. */
    float il[12] = {1, 2, 3, 99, 4, 5, 6, 99, 7, 8, 9, 99};
    size_t o8 = bin_f32(&b, il, 12);
    /* MAT3 of bytes: every column padded to 4 bytes. */
    uint8_t m3[12] = {1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0};
    size_t o9 = bin_bytes(&b, m3, 12);
    char body[6000];
    snprintf(body, sizeof body,
             "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":4},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":2},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":16},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":48,\"byteStride\":16},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":12}],"
             "\"accessors\":["
             "{\"bufferView\":0,\"componentType\":5120,\"normalized\":true,\"count\":2,\"type\":\"VEC4\"},"
             "{\"bufferView\":1,\"componentType\":5121,\"normalized\":true,\"count\":4,\"type\":\"SCALAR\"},"
             "{\"bufferView\":2,\"componentType\":5122,\"normalized\":true,\"count\":4,\"type\":\"SCALAR\"},"
             "{\"bufferView\":3,\"componentType\":5123,\"normalized\":true,\"count\":4,\"type\":\"SCALAR\"},"
             "{\"bufferView\":4,\"componentType\":5125,\"count\":2,\"type\":\"SCALAR\"},"
             "{\"componentType\":5126,\"count\":5,\"type\":\"VEC2\",\"sparse\":{\"count\":2,"
             "\"indices\":{\"bufferView\":5,\"componentType\":5121},\"values\":{\"bufferView\":6}}},"
             "{\"bufferView\":7,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},"
             "{\"bufferView\":0,\"byteOffset\":4,\"componentType\":5120,\"count\":1,\"type\":\"VEC4\"},"
             "{\"bufferView\":8,\"componentType\":5121,\"count\":1,\"type\":\"MAT3\"},"
             "{\"bufferView\":7,\"byteOffset\":4,\"componentType\":5126,\"count\":3,\"type\":\"SCALAR\","
             "\"sparse\":{\"count\":1,\"indices\":{\"bufferView\":5,"
             "\"componentType\":5121},\"values\":{\"bufferView\":6,\"byteOffset\":12}}}]",
             o1, o2, o3, o4, o5, o6, o7, o8, o9);
    am_gltf *doc = NULL;
    am_error err;
    AM_CHECK_OK(read_text(make_doc(&b, body), &doc, &err), &err);
    if (!doc) return;
    const am_gltf_accessor *a = doc->accessors;
    /* BYTE: max(c / 127, -1). */
    AM_CHECK_NEAR(a[0].data[0], 1.0, 1e-7);
    AM_CHECK_NEAR(a[0].data[1], -1.0, 1e-7);
    AM_CHECK_NEAR(a[0].data[2], -1.0, 1e-7);
    AM_CHECK_NEAR(a[0].data[4], 64.0 / 127, 1e-7);
    AM_CHECK(a[0].ints && a[0].ints[2] == (uint32_t)-128);
    AM_CHECK_NEAR(a[1].data[1], 1.0, 1e-7);
    AM_CHECK_NEAR(a[1].data[2], 0.2, 1e-7);
    AM_CHECK(a[1].ints[3] == 128);
    AM_CHECK_NEAR(a[2].data[0], 1.0, 1e-7);
    AM_CHECK_NEAR(a[2].data[1], -1.0, 1e-7);
    AM_CHECK_NEAR(a[2].data[3], 16384.0 / 32767, 1e-7);
    AM_CHECK_NEAR(a[3].data[1], 1.0, 1e-7);
    AM_CHECK_NEAR(a[3].data[2], 1.0 / 65535, 1e-9);
    AM_CHECK(a[4].ints[0] == 4000000000u && a[4].ints[1] == 3);
    AM_CHECK_NEAR(a[4].data[0], 4e9, 1e3);
    /* Sparse on zeros. */
    float want5[10] = {0, 0, 10, 11, 0, 0, 30, 31, 0, 0};
    for (int i = 0; i < 10; i++) AM_CHECK_NEAR(a[5].data[i], want5[i], 0);
    AM_CHECK(a[5].ints == NULL);
    /* Strided. */
    float want6[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (int i = 0; i < 9; i++) AM_CHECK_NEAR(a[6].data[i], want6[i], 0);
    AM_CHECK_NEAR(a[7].data[0], 64, 0);
    AM_CHECK_NEAR(a[7].data[3], -1, 0);
    /* MAT3 bytes: column padding skipped. */
    for (int i = 0; i < 9; i++) AM_CHECK_NEAR(a[8].data[i], i + 1, 0);
    /* Sparse over strided data (stride 16 from byte 4: 2, 5, 8), element 1 replaced. */
    float want9[3] = {2, 31, 8};
    for (int i = 0; i < 3; i++) AM_CHECK_NEAR(a[9].data[i], want9[i], 0);
    am_gltf_free(doc);
}

static void gltf_sparse_over_view_data(void)
{
    bin b = {0};
    float base[4] = {1, 2, 3, 4};
    uint16_t idx[2] = {0, 2};
    float val[2] = {-1, -3};
    size_t ob = bin_f32(&b, base, 4), oi = bin_bytes(&b, idx, 4), ov = bin_f32(&b, val, 2);
    char body[2048];
    snprintf(body, sizeof body,
             "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":16},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":4},"
             "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8}],"
             "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"SCALAR\","
             "\"sparse\":{\"count\":2,\"indices\":{\"bufferView\":1,\"componentType\":5123},"
             "\"values\":{\"bufferView\":2}}}]",
             ob, oi, ov);
    am_gltf *doc = NULL;
    am_error err;
    AM_CHECK_OK(read_text(make_doc(&b, body), &doc, &err), &err);
    if (!doc) return;
    float want[4] = {-1, 2, -3, 4};
    for (int i = 0; i < 4; i++) AM_CHECK_NEAR(doc->accessors[0].data[i], want[i], 0);
    am_gltf_free(doc);
}

static void gltf_node_matrix_is_column_major_and_decomposed(void)
{
    bin b = {0};
    b.n = 4;
    /* Column-major: translation (1, 2, 3) in elements 12..14, scale 2 on x. */
    const char *body = "\"nodes\":[{\"matrix\":[2,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1],"
                       "\"children\":[1]},{\"translation\":[1,0,0]}]";
    am_gltf *doc = NULL;
    am_error err;
    AM_CHECK_OK(read_text(make_doc(&b, body), &doc, &err), &err);
    if (!doc) return;
    const am_gltf_node *n = &doc->nodes[0];
    AM_CHECK(n->has_matrix && !doc->nodes[1].has_matrix);
    AM_CHECK(n->matrix[3] == 1 && n->matrix[7] == 2 && n->matrix[11] == 3 && n->matrix[0] == 2);
    AM_CHECK_NEAR(n->scale[0], 2, 1e-12);
    AM_CHECK_NEAR(n->translation[2], 3, 1e-12);
    AM_CHECK_NEAR(n->rotation[0], 1, 1e-12);
    double L[32], W[32];
    am_gltf_sample_local(doc, -1, 0, L);
    am_gltf_world_from_local(doc, L, W);
    AM_CHECK_NEAR(W[16 + 3], 3, 1e-12); /* 1 + 2 * 1 */
    AM_CHECK_NEAR(W[16 + 7], 2, 1e-12);
    am_gltf_free(doc);
}

/* ---- malformed input -------------------------------------------------------------------- */

static void expect_fail(const char *text, am_status want, const char *what)
{
    am_gltf *doc = NULL;
    am_error err;
    memset(&err, 0, sizeof err);
    am_status s = am_gltf_read_mem(text, strlen(text), "bad.gltf", NULL, NULL, &doc, &err);
    AM_CHECK_MSG(s == want, "%s: got %s (%s), want %s", what, am_status_name(s), err.info,
                 am_status_name(want));
    AM_CHECK_MSG(s >= 0 || (err.info[0] && strcmp(err.file, "bad.gltf") == 0), "%s: no message",
                 what);
    AM_CHECK(doc == NULL || s == AM_OK);
    am_gltf_free(doc);
}

static void gltf_rejects_malformed_documents(void)
{
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\n \"nodes\":[}", AM_E_SYNTAX, "bad json");
    {
        am_gltf *doc = NULL;
        am_error err;
        const char *t = "{\"asset\":{\"version\":\"2.0\"},\n \"nodes\":[}";
        AM_CHECK(am_gltf_read_mem(t, strlen(t), "x", NULL, NULL, &doc, &err) == AM_E_SYNTAX);
        AM_CHECK_MSG(err.line == 2 && err.col > 0, "line %u col %u", err.line, err.col);
    }
    expect_fail("", AM_E_EMPTY, "empty");
    expect_fail("{\"nodes\":[]}", AM_E_SCHEMA, "no asset");
    expect_fail("{\"asset\":{\"version\":\"1.0\"}}", AM_E_UNSUPPORTED, "glTF 1");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"children\":[1]},{\"children\":[0]}]}",
                AM_E_CYCLE, "cycle");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"children\":[0]}]}", AM_E_CYCLE,
                "self child");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"children\":[2]},{\"children\":[2]},{}]}",
                AM_E_CYCLE, "two parents");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"children\":[5]}]}", AM_E_SCHEMA,
                "child out of range");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"mesh\":0}]}", AM_E_SCHEMA,
                "mesh out of range");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"translation\":[1,2]}]}",
                AM_E_SHAPE, "short translation");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"nodes\":{}}", AM_E_SCHEMA, "nodes object");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":3,"
                "\"uri\":\"data:application/octet-stream;base64,AA*A\"}]}",
                AM_E_FORMAT, "bad base64 char");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":9,"
                "\"uri\":\"data:application/octet-stream;base64,AAAA\"}]}",
                AM_E_FORMAT, "base64 shorter than byteLength");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":4,"
                "\"uri\":\"x.bin\"}]}",
                AM_E_UNSUPPORTED, "external uri without base dir");
    expect_fail("{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":4}]}", AM_E_FORMAT,
                "no uri in .gltf");
    const char *hdr = "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":8,"
                      "\"uri\":\"data:application/octet-stream;base64,AAAAAAAAAAA=\"}],";
    char t[2048];
    snprintf(t, sizeof t, "%s\"bufferViews\":[{\"buffer\":0,\"byteOffset\":4,\"byteLength\":8}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "view outside buffer");
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"componentType\":5126,\"count\":3,\"type\":\"SCALAR\"}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "accessor past view");
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"byteOffset\":18446744073709551615,\"componentType\":5126,\"count\":1,"
             "\"type\":\"SCALAR\"}]}",
             hdr);
    {
        am_gltf *doc = NULL;
        am_error err;
        am_status s = read_text(t, &doc, &err);
        AM_CHECK_MSG(s < 0 && doc == NULL, "huge byteOffset: %s", am_status_name(s));
    }
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"componentType\":5126,\"count\":2147483647,\"type\":\"MAT4\"}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "huge count");
    snprintf(t, sizeof t,
             "%s\"accessors\":[{\"componentType\":5126,\"count\":2147483647,\"type\":\"MAT4\"}]}",
             hdr);
    expect_fail(t, AM_E_LIMIT, "huge zero accessor");
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"componentType\":5127,\"count\":1,\"type\":\"SCALAR\"}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "bad component type");
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"},{\"bufferView\":0,"
             "\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"}],\"nodes\":[{}],"
             "\"animations\":[{\"samplers\":[{\"input\":0,\"output\":1}],\"channels\":[{\"sampler\":0,"
             "\"target\":{\"node\":0,\"path\":\"translation\"}}]}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "translation output of scalars");
    /* Decreasing times: two floats 1.0, 0.5. */
    snprintf(t, sizeof t,
             "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":8,"
             "\"uri\":\"data:application/octet-stream;base64,AACAPwAAAD8=\"}],"
             "\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{\"bufferView\":0,"
             "\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"}],\"animations\":[{"
             "\"samplers\":[{\"input\":0,\"output\":0}],\"channels\":[]}]}");
    expect_fail(t, AM_E_FORMAT, "decreasing times");
    /* Sparse index out of range / not increasing. */
    snprintf(t, sizeof t,
             "%s\"bufferViews\":[{\"buffer\":0,\"byteLength\":8}],\"accessors\":[{"
             "\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\",\"sparse\":{\"count\":2,"
             "\"indices\":{\"bufferView\":0,\"componentType\":5121},\"values\":{\"bufferView\":0}}}]}",
             hdr);
    expect_fail(t, AM_E_FORMAT, "sparse indices 0, 0");
}

/* A tiny GLB: JSON + BIN with one skinned triangle, two joints and a LINEAR rotation clip. */
static size_t make_glb(unsigned char *out, size_t cap)
{
    bin b = {0};
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint8_t joints[12] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    float weights[12] = {0.5f, 0.5f, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    float ibm[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                     1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1};
    float times[2] = {0, 1};
    float rots[8] = {0, 0, 0, 1, 0, 0, 0.38268343f, 0.92387953f};
    size_t o0 = bin_f32(&b, pos, 9), o1 = bin_bytes(&b, joints, 12), o2 = bin_f32(&b, weights, 12),
           o3 = bin_f32(&b, ibm, 32), o4 = bin_f32(&b, times, 2), o5 = bin_f32(&b, rots, 8);
    char json[4096];
    int n = snprintf(
        json, sizeof json,
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,1]}],"
        "\"nodes\":[{\"mesh\":0,\"skin\":0},{\"name\":\"hip\",\"children\":[2]},"
        "{\"name\":\"knee\",\"translation\":[0,1,0]}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,"
        "\"WEIGHTS_0\":2}}]}],\"skins\":[{\"joints\":[1,2],\"inverseBindMatrices\":3}],"
        "\"animations\":[{\"name\":\"bend\",\"samplers\":[{\"input\":4,\"output\":5}],"
        "\"channels\":[{\"sampler\":0,\"target\":{\"node\":2,\"path\":\"rotation\"}}]}],"
        "\"buffers\":[{\"byteLength\":%zu}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":36},"
        "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":12},"
        "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":128},"
        "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":8},"
        "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":32}],"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},"
        "{\"bufferView\":1,\"componentType\":5121,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":2,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"},"
        "{\"bufferView\":3,\"componentType\":5126,\"count\":2,\"type\":\"MAT4\"},"
        "{\"bufferView\":4,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\"},"
        "{\"bufferView\":5,\"componentType\":5126,\"count\":2,\"type\":\"VEC4\"}]}",
        b.n, o0, o1, o2, o3, o4, o5);
    size_t jl = ((size_t)n + 3) / 4 * 4, bl = (b.n + 3) / 4 * 4;
    size_t total = 12 + 8 + jl + 8 + bl;
    if (total > cap) return 0;
    memset(out, 0, total);
    uint32_t hdr[5] = {0x46546C67u, 2, (uint32_t)total, (uint32_t)jl, 0x4E4F534Au};
    memcpy(out, hdr, 20);
    memcpy(out + 20, json, (size_t)n);
    memset(out + 20 + n, ' ', jl - (size_t)n);
    uint32_t bh[2] = {(uint32_t)bl, 0x004E4942u};
    memcpy(out + 20 + jl, bh, 8);
    memcpy(out + 28 + jl, b.b, b.n);
    return total;
}

static void gltf_glb_every_prefix_is_refused_cleanly(void)
{
    static unsigned char glb[8192];
    size_t n = make_glb(glb, sizeof glb);
    AM_CHECK(n > 0);
    am_gltf *doc = NULL;
    am_error err;
    AM_CHECK_OK(am_gltf_read_mem(glb, n, "tiny.glb", NULL, NULL, &doc, &err), &err);
    if (doc) {
        AM_CHECK(doc->node_count == 3 && doc->skin_count == 1 && doc->animation_count == 1);
        AM_CHECK(doc->accessors[1].ints[1] == 1);
        double L[48];
        am_gltf_sample_local(doc, 0, 0.5, L);
        /* Halfway slerp to 45 deg about Z: 22.5 deg. */
        AM_CHECK_NEAR(atan2(L[32 + 4], L[32 + 0]), AM_PI / 8, 1e-6);
        am_gltf_free(doc);
    }
    for (size_t len = 0; len < n; len++) {
        unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */
        memcpy(copy, glb, len);
        doc = NULL;
        am_status s = am_gltf_read_mem(copy, len, "tiny.glb", NULL, NULL, &doc, &err);
        AM_CHECK_MSG(s < 0 && doc == NULL, "prefix %zu accepted", len);
        AM_CHECK_MSG(s >= 0 || err.info[0], "prefix %zu: no message", len);
        free(copy);
    }
    /* Bad chunk lengths. */
    unsigned char bad[8192];
    memcpy(bad, glb, n);
    uint32_t big = 0x7ffffff0u;
    memcpy(bad + 12, &big, 4);
    AM_CHECK(am_gltf_read_mem(bad, n, "b.glb", NULL, NULL, &doc, &err) == AM_E_TRUNCATED);
    AM_CHECK(err.offset == 12);
    memcpy(bad, glb, n);
    memcpy(bad + 8, &big, 4);
    AM_CHECK(am_gltf_read_mem(bad, n, "b.glb", NULL, NULL, &doc, &err) == AM_E_TRUNCATED);
    memcpy(bad, glb, n);
    bad[16] = 'X'; /* first chunk not JSON */
    AM_CHECK(am_gltf_read_mem(bad, n, "b.glb", NULL, NULL, &doc, &err) == AM_E_FORMAT);
    memcpy(bad, glb, n);
    bad[4] = 1; /* version 1 */
    AM_CHECK(am_gltf_read_mem(bad, n, "b.glb", NULL, NULL, &doc, &err) == AM_E_UNSUPPORTED);
    /* Every prefix of simple_skin.gltf (embedded base64 buffers) too. */
    char *text = NULL;
    size_t tl = 0;
    if (am_file_read(am_test_shared("data/gltf/khronos_simpleskin/simple_skin.gltf"), 0, &text,
                     &tl, &err) == AM_OK) {
        for (size_t len = 0; len < tl; len++) {
            char *copy = malloc(len ? len : 1);
            memcpy(copy, text, len);
            doc = NULL;
            am_status s = am_gltf_read_mem(copy, len, "s.gltf", NULL, NULL, &doc, &err);
            AM_CHECK_MSG(s < 0 && doc == NULL, "prefix %zu accepted", len);
            free(copy);
        }
        am_free(text);
    }
}

static void gltf_external_buffers_resolve_and_refuse_escapes(void)
{
    const char *dir = am_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/ext.bin", dir);
    float v[3] = {1, 2, 3};
    am_error err;
    AM_CHECK_OK(am_file_write(path, v, sizeof v, &err), &err);
    const char *doc_text =
        "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":12,\"uri\":\"ext%2Ebin\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":12}],\"accessors\":[{\"bufferView\":0,"
        "\"componentType\":5126,\"count\":1,\"type\":\"VEC3\"}]}";
    snprintf(path, sizeof path, "%s/ext.gltf", dir);
    AM_CHECK_OK(am_file_write(path, doc_text, strlen(doc_text), &err), &err);
    am_gltf *doc = NULL;
    AM_CHECK_OK(am_gltf_load(path, NULL, &doc, &err), &err);
    if (doc) AM_CHECK(doc->accessors[0].data[2] == 3.0f);
    am_gltf_free(doc);
    static const char *bad_uris[] = {"../ext.bin", "/etc/passwd", "http://x/y.bin",
                                     "a/../../b.bin", "file:///etc/passwd"};
    for (size_t i = 0; i < 5; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":12,\"uri\":\"%s\"}]}",
                 bad_uris[i]);
        doc = NULL;
        am_status s = am_gltf_read_mem(t, strlen(t), "t", dir, NULL, &doc, &err);
        AM_CHECK_MSG(s == AM_E_UNSUPPORTED, "%s: %s", bad_uris[i], am_status_name(s));
    }
    AM_CHECK(am_gltf_load("/nonexistent/x.glb", NULL, &doc, &err) == AM_E_READ && doc == NULL);
}


/* ---- rigs and motions ------------------------------------------------------------------- */

static const char *skinned_files[] = {
    "data/gltf/quaternius/Fox.glb",     "data/gltf/quaternius/Husky.glb",
    "data/gltf/quaternius/Spider.glb",  "data/gltf/quaternius/Snake.glb",
    "data/gltf/quaternius/Frog.glb",    "data/gltf/quaternius/Trex.glb",
    "data/gltf/quaternius/Dolphin.glb", "data/gltf/quaternius/KnightCharacter.glb",
    "data/gltf/khronos_fox/Fox.glb",    "data/gltf/khronos_simpleskin/simple_skin.gltf"};

static void gltf_rig_builds_and_marks_helpers(void)
{
    for (size_t f = 0; f < sizeof skinned_files / sizeof skinned_files[0]; f++) {
        am_gltf *doc = load_shared(skinned_files[f]);
        if (!doc) continue;
        am_rig *rig = NULL;
        am_error err;
        AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
        if (!rig) {
            am_gltf_free(doc);
            continue;
        }
        AM_CHECK(rig->bone_count == doc->skins[0].joint_count);
        size_t poles = 0, helpers = 0;
        for (size_t b = 0; b < rig->bone_count; b++) {
            bool pole = strstr(rig->bone_names[b], "PoleTarget") != NULL;
            poles += pole;
            helpers += rig->is_helper[b];
            if (pole) AM_CHECK_MSG(rig->is_helper[b], "%s: %s not a helper", skinned_files[f],
                                   rig->bone_names[b]);
            AM_CHECK(rig->length[b] >= 0.01 - 1e-12);
            /* Every bone's head is its joint node's name. */
            AM_CHECK(strcmp(rig->joint_names[rig->head_joint[b]], rig->bone_names[b]) == 0);
        }
        AM_CHECK_MSG(!rig->is_helper[0], "%s: root is a helper", skinned_files[f]);
        if (strstr(skinned_files[f], "quaternius/Fox") || strstr(skinned_files[f], "Spider")) {
            AM_CHECK_MSG(strcmp(rig->bone_names[0], "Body") == 0, "%s: root %s",
                         skinned_files[f], rig->bone_names[0]);
            AM_CHECK_MSG(helpers == poles && poles >= 2, "%s: %zu helpers, %zu pole targets",
                         skinned_files[f], helpers, poles);
        }
        /* The armature joints above the hips hang below it after re-rooting: helpers. */
        if (strstr(skinned_files[f], "khronos_fox"))
            AM_CHECK_MSG(strcmp(rig->bone_names[0], "b_Hip_01") == 0 && helpers == 2 &&
                             rig->is_helper[am_rig_find_bone(rig, "_rootJoint")],
                         "root %s, %zu helpers", rig->bone_names[0], helpers);
        /* The fox stands on the ground of our world (Z up): its head is above its feet and it
         * is longer (along Y) than wide (along X). */
        if (strstr(skinned_files[f], "quaternius/Fox")) {
            int head = am_rig_find_joint(rig, "Head"), foot = am_rig_find_joint(rig, "FF.L");
            AM_CHECK(head >= 0 && foot >= 0);
            if (head >= 0 && foot >= 0)
                AM_CHECK(rig->joint_rest[3 * head + 2] > rig->joint_rest[3 * foot + 2] + 0.1);
            int tail = am_rig_find_joint(rig, "Tail8");
            if (head >= 0 && tail >= 0) /* faces -Y: the head is at smaller Y than the tail */
                AM_CHECK(rig->joint_rest[3 * head + 1] < rig->joint_rest[3 * tail + 1]);
        }
        am_rig_free(rig);
        am_gltf_free(doc);
    }
    /* Flamingo has no skin. */
    am_gltf *fl = load_shared("data/gltf/Flamingo.glb");
    if (fl) {
        am_rig *rig = NULL;
        am_error err;
        AM_CHECK(am_rig_from_gltf(fl, -1, &rig, &err) == AM_E_EMPTY && rig == NULL);
        am_gltf_free(fl);
    }
}

/* FK of the extracted motion puts every joint node where the glTF animation puts it: helpers,
 * joints outside the root's subtree and joints that slide (loc) included. */
static void check_motion_reproduces(const char *file, const char *clip, size_t min_joints)
{
    am_gltf *doc = load_shared(file);
    if (!doc) return;
    int anim = clip ? find_anim(doc, clip) : 0;
    AM_CHECK_MSG(anim >= 0, "%s: no clip %s", file, clip);
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err;
    AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
    if (rig && anim >= 0) AM_CHECK_OK(am_motion_from_gltf(doc, -1, rig, anim, 30, &mo, &err), &err);
    if (mo) {
        const am_gltf_animation *an = &doc->animations[anim];
        size_t T = (size_t)floor((an->t_max - an->t_min) * 30 + 1e-9) + 1;
        AM_CHECK(mo->frame_count == T && mo->joint_count == rig->joint_count && mo->quat);
        /* Model size: the diagonal of the rest joints' box. */
        double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
        for (size_t j = 0; j < rig->joint_count; j++)
            for (int i = 0; i < 3; i++) {
                lo[i] = fmin(lo[i], rig->joint_rest[3 * j + (size_t)i]);
                hi[i] = fmax(hi[i], rig->joint_rest[3 * j + (size_t)i]);
            }
        double size = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
        /* Bone names: the joint node's name, else "joint<j>" (unique in these files). */
        char names[64][64];
        int root_node = -1;
        for (size_t j = 0; j < doc->skins[0].joint_count && j < 64; j++) {
            int n = doc->skins[0].joints[j];
            const char *nm = doc->nodes[n].name;
            if (nm) snprintf(names[j], sizeof names[j], "%s", nm);
            else snprintf(names[j], sizeof names[j], "joint%zu", j);
            if (strcmp(names[j], rig->bone_names[0]) == 0) root_node = n;
        }
        AM_CHECK(root_node >= 0);
        double *local = am_alloc_array(doc->node_count, 16 * sizeof(double));
        double *world = am_alloc_array(doc->node_count, 16 * sizeof(double));
        am_test_diff d = {0};
        size_t compared = 0;
        for (size_t t = 0; t < T && root_node >= 0; t++) {
            double time = fmin(an->t_min + (double)t / 30, an->t_max);
            am_gltf_sample_local(doc, anim, time, local);
            am_gltf_world_from_local(doc, local, world);
            compared = 0;
            for (size_t j = 0; j < doc->skins[0].joint_count; j++) {
                int n = doc->skins[0].joints[j];
                int jj = am_rig_find_joint(rig, names[j]);
                AM_CHECK(jj >= 0);
                if (jj < 0) continue;
                double g[3] = {world[16 * n + 3], world[16 * n + 7], world[16 * n + 11]}, w[3];
                am_gltf_to_world(g, w);
                const double *fk = mo->joints + (t * rig->joint_count + (size_t)jj) * 3;
                am_test_diff_add(&d, am_vec3_dist(fk, w), 0);
                compared++;
            }
            /* trans is the root head. */
            int rn = root_node;
            double g[3] = {world[16 * rn + 3], world[16 * rn + 7], world[16 * rn + 11]}, w[3];
            am_gltf_to_world(g, w);
            AM_CHECK_NEAR(am_vec3_dist(w, mo->trans + 3 * t), 0, 1e-9 * size);
        }
        AM_CHECK_MSG(compared >= min_joints, "%s: compared %zu joints", file, compared);
        AM_CHECK_MSG(d.max <= 1e-6 * size, "%s %s: FK vs glTF joints: mean %g max %g (size %g)",
                     file, clip ? clip : "", am_test_diff_mean(&d), d.max, size);
        /* Local rotations: quat and euler agree, unit quaternions. */
        am_test_diff dq = {0};
        for (size_t i = 0; i < T * rig->bone_count; i++) {
            double R1[9], R2[9];
            am_quat_to_mat3(mo->quat + 4 * i, R1);
            am_euler_xyz_to_mat3(mo->euler + 3 * i, R2);
            for (int k = 0; k < 9; k++) am_test_diff_add(&dq, R1[k], R2[k]);
        }
        AM_CHECK_MSG(dq.max < 1e-9, "%s: quat vs euler %g", file, dq.max);
        am_free(local);
        am_free(world);
    }
    am_motion_free(mo);
    am_rig_free(rig);
    am_gltf_free(doc);
}

static void gltf_motion_fk_reproduces_joint_positions(void)
{
    check_motion_reproduces("data/gltf/quaternius/Fox.glb", "AnimalArmature|Idle", 51);
    check_motion_reproduces("data/gltf/quaternius/Spider.glb", "SpiderArmature|Spider_Walk", 39);
    check_motion_reproduces("data/gltf/khronos_fox/Fox.glb", "Survey", 24);
    check_motion_reproduces("data/gltf/khronos_simpleskin/simple_skin.gltf", NULL, 2);
}

/* Every clip of every creature: joints that translate (bodies, IK targets, sliding bones) come
 * out exact through loc, not approximated. */
static void gltf_motion_every_clip_is_exact(void)
{
    for (size_t f = 0; f < sizeof skinned_files / sizeof skinned_files[0]; f++) {
        am_gltf *doc = load_shared(skinned_files[f]);
        if (!doc) continue;
        for (size_t a = 0; a < doc->animation_count; a++)
            check_motion_reproduces(skinned_files[f], doc->animations[a].name, doc->skins[0].joint_count);
        am_gltf_free(doc);
    }
}

static void gltf_motion_validates_arguments(void)
{
    static unsigned char glb[8192];
    size_t n = make_glb(glb, sizeof glb);
    am_gltf *doc = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err;
    AM_CHECK_OK(am_gltf_read_mem(glb, n, "tiny.glb", NULL, NULL, &doc, &err), &err);
    if (!doc) return;
    AM_CHECK_OK(am_rig_from_gltf(doc, 0, &rig, &err), &err);
    if (rig) {
        /* hip at the origin, knee 1 up (glTF +Y is world +Z), the knee's tail along its Y axis
         * at the hip's length. */
        AM_CHECK(rig->bone_count == 2 && rig->joint_count == 3);
        AM_CHECK(strcmp(rig->bone_names[0], "hip") == 0 && !rig->is_helper[0] && !rig->is_helper[1]);
        int knee = am_rig_find_joint(rig, "knee"), end = am_rig_find_joint(rig, "knee_end");
        AM_CHECK(knee >= 0 && end >= 0);
        if (knee >= 0 && end >= 0) {
            AM_CHECK_NEAR(rig->joint_rest[3 * knee + 2], 1, 1e-6);
            AM_CHECK_NEAR(rig->joint_rest[3 * end + 2], 2, 1e-6);
            AM_CHECK(rig->tail_joint[0] == knee); /* connected */
        }
        AM_CHECK(am_motion_from_gltf(doc, 0, rig, 5, 30, &mo, &err) == AM_E_ARG && !mo);
        AM_CHECK(am_motion_from_gltf(doc, 0, rig, 0, 0, &mo, &err) == AM_E_ARG && !mo);
        AM_CHECK(am_motion_from_gltf(doc, 3, rig, 0, 30, &mo, &err) == AM_E_ARG && !mo);
        /* anim -1: one frame of the node rest pose, here the bind pose: the rig's rest. */
        AM_CHECK_OK(am_motion_from_gltf(doc, 0, rig, -1, 30, &mo, &err), &err);
        if (mo) {
            AM_CHECK(mo->frame_count == 1);
            for (size_t j = 0; j < rig->joint_count * 3; j++)
                AM_CHECK_NEAR(mo->joints[j], rig->joint_rest[j], 1e-9);
        }
        am_motion_free(mo);
        mo = NULL;
        /* The clip bends the knee 45 degrees about glTF Z (world Y) over 1 s: 31 frames. */
        AM_CHECK_OK(am_motion_from_gltf(doc, 0, rig, 0, 30, &mo, &err), &err);
        if (mo && end >= 0) {
            AM_CHECK(mo->frame_count == 31);
            const double *e = mo->joints + (30 * 3 + (size_t)end) * 3;
            AM_CHECK_NEAR(e[0], -sin(AM_PI / 4), 1e-6);
            AM_CHECK_NEAR(e[2], 1 + cos(AM_PI / 4), 1e-6);
            double angle = 2 * acos(fmin(1, fabs(mo->quat[(30 * 2 + 1) * 4])));
            AM_CHECK_NEAR(angle, AM_PI / 4, 1e-6);
        }
        am_motion_free(mo);
    }
    am_rig_free(rig);
    am_gltf_free(doc);
}

static void gltf_clip_lookup_follows_the_cli_rule(void)
{
    am_gltf_animation an[5] = {{.name = "RatArmature|Rat_Idle"}, {.name = "RatArmature|Rat_Run"},
                               {.name = "Walk1"}, {.name = "Walk"}, {.name = NULL}};
    am_gltf doc = {.animation_count = 5, .animations = an};
    am_error err = {0};
    int k = -9;
    AM_CHECK_OK(am_gltf_find_clip(&doc, "RatArmature|Rat_Run", &k, &err), &err);
    AM_CHECK(k == 1);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "Rat_Run", &k, &err), &err);
    AM_CHECK(k == 1);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "Run", &k, &err), &err);
    AM_CHECK(k == 1);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "Walk", &k, &err), &err); /* exact beats the suffix of Walk1 */
    AM_CHECK(k == 3);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "1", &k, &err), &err); /* an index before "Walk1"'s suffix */
    AM_CHECK(k == 1);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "4", &k, &err), &err);
    AM_CHECK(k == 4);
    AM_CHECK_STATUS(am_gltf_find_clip(&doc, "Jump", &k, &err), AM_E_NAME);
    AM_CHECK(k == -1);
    AM_CHECK_MSG(strstr(err.info, "0 'RatArmature|Rat_Idle'") && strstr(err.info, "3 'Walk'"), "info: %s", err.info);
    AM_CHECK_OK(am_gltf_find_clip(&doc, "e", &k, &err), &err); /* only Rat_Idle ends in it */
    AM_CHECK(k == 0);
    an[3].name = "Hide";
    AM_CHECK_STATUS(am_gltf_find_clip(&doc, "e", &k, &err), AM_E_NAME);
    AM_CHECK_MSG(strstr(err.info, "could be") && strstr(err.info, "3 'Hide'"), "info: %s", err.info);
    AM_CHECK_STATUS(am_gltf_find_clip(&doc, "9", &k, &err), AM_E_NAME);
    am_gltf none = {0};
    AM_CHECK_STATUS(am_gltf_find_clip(&none, "Walk", &k, &err), AM_E_NAME);
}

/* retarget's file names of clips (motion_<clip>.json) and the binding's all_clips share this */
static void gltf_clip_file_name_is_the_last_part_cleaned(void)
{
    char b[96], small[5];
    AM_CHECK_MSG(strcmp(am_clip_file_name("AnimalArmature|Walk", 3, b, sizeof b), "Walk") == 0, "got %s", b);
    AM_CHECK_MSG(strcmp(am_clip_file_name("Run fast/2", 0, b, sizeof b), "Run_fast_2") == 0, "got %s", b);
    AM_CHECK_MSG(strcmp(am_clip_file_name("ends|", 1, b, sizeof b), "ends_") == 0, "got %s", b);
    AM_CHECK_MSG(strcmp(am_clip_file_name(NULL, 7, b, sizeof b), "clip7") == 0, "got %s", b);
    AM_CHECK_MSG(strcmp(am_clip_file_name("", 2, b, sizeof b), "clip2") == 0, "got %s", b);
    AM_CHECK_MSG(strcmp(am_clip_file_name("Survey", 0, small, sizeof small), "Surv") == 0, "got %s", small);
    char longer[300];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    AM_CHECK(strlen(am_clip_file_name(longer, 0, b, sizeof b)) == 95);
}

#define AM_TESTS(X)                                      \
    X(gltf_clip_file_name_is_the_last_part_cleaned)      \
    X(gltf_clip_lookup_follows_the_cli_rule)             \
    X(gltf_loads_every_shared_file)                      \
    X(gltf_flamingo_has_morph_targets_and_no_skin)       \
    X(gltf_sampling_at_keys_gives_key_values)            \
    X(gltf_simple_skin_decodes_tutorial_values)          \
    X(gltf_axis_conversion_is_spec_4_5)                  \
    X(gltf_cubicspline_and_step_sampling)                \
    X(gltf_sparse_normalized_and_strided_accessors)      \
    X(gltf_sparse_over_view_data)                        \
    X(gltf_node_matrix_is_column_major_and_decomposed)   \
    X(gltf_rejects_malformed_documents)                  \
    X(gltf_glb_every_prefix_is_refused_cleanly)          \
    X(gltf_external_buffers_resolve_and_refuse_escapes)  \
    X(gltf_rig_builds_and_marks_helpers)                 \
    X(gltf_motion_fk_reproduces_joint_positions) X(gltf_motion_every_clip_is_exact)         \
    X(gltf_motion_validates_arguments)
AM_TEST_MAIN(AM_TESTS)
