/* Bake an animated glTF (skinned and/or morph-target meshes) into point tracks + truth:
 * every vertex of every mesh primitive, evaluated at a fixed rate, in SPEC 1 world axes.
 * Truth joints are the skin joints that carry weight on some vertex (helpers are left out),
 * parented to their nearest deforming ancestor.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/math.h"
#include "anymove/synth.h"
#include "core/internal.h"

static const am_gltf_accessor *ami_acc(const am_gltf *doc, int32_t i, size_t comps)
{
    if (i < 0 || (size_t)i >= doc->accessor_count) return NULL;
    const am_gltf_accessor *a = &doc->accessors[i];
    return a->components == comps && a->data ? a : NULL;
}

/* What one bake may allocate for its frames. A vertex costs 50 bytes a frame: points and
 * truth points (12 each), visibility (1) and the npz writer's serialized copies of all three;
 * a joint 24 (truth joints and their copy). 1 GiB is 20,000 vertices for 1,000 frames. */
#define AMI_BAKE_MAX_BYTES ((uint64_t)1 << 30)
#define AMI_BAKE_VERTEX_FRAME_BYTES 50.0
#define AMI_BAKE_JOINT_FRAME_BYTES 24.0

typedef struct {
    int32_t node, mesh;
    size_t prim, first, count;
} ami_part;

static am_status ami_bake_gltf(const am_gltf *doc, const am_bake_opts *opts, am_synth_clip **out,
                               am_error *err)
{
    assert(doc && out);
    *out = NULL;
    am_bake_opts o = {0};
    if (opts) o = *opts;
    if (o.fps == 0.0) o.fps = 30.0;
    AMI_CHECK(err, am_fps_valid(o.fps), AM_E_ARG, "fps %g is outside [%g, %g]", o.fps, AM_FPS_MIN,
              AM_FPS_MAX);
    AMI_CHECK(err, doc->animation_count > 0, AM_E_VALUE, "the model has no animation to bake");
    int anim = 0;
    if (o.clip) AMI_TRY(am_gltf_find_clip(doc, o.clip, &anim, err));
    const am_gltf_animation *an = &doc->animations[anim];
    double dur = an->t_max - an->t_min;
    if (!(dur >= 0.0)) dur = 0.0;
    /* 1e12 frames saturate the count: no budget holds them (a 2.5 KB file may declare a
     * 333,000 s clip). */
    size_t T = (size_t)fmin(floor(dur * o.fps + 1e-9), 1e12) + 1;
    AMI_CHECK(err, T >= 2, AM_E_VALUE, "animation '%s' lasts %.3g s: fewer than 2 frames at %g fps",
              an->name ? an->name : "0", dur, o.fps);

    /* the vertices: every POSITION of every primitive of every node with a mesh */
    ami_part parts[256];
    size_t np = 0, N = 0, F = 0, skipped = 0;
    for (size_t nd = 0; nd < doc->node_count; nd++) {
        int32_t m = doc->nodes[nd].mesh;
        if (m < 0 || (size_t)m >= doc->mesh_count) continue;
        const am_gltf_mesh *me = &doc->meshes[m];
        for (size_t p = 0; p < me->primitive_count; p++) {
            const am_gltf_primitive *pr = &me->primitives[p];
            const am_gltf_accessor *pa = ami_acc(doc, pr->position, 3);
            if (!pa || (pr->mode != 4 && pr->mode != 0)) continue;
            if (np == 256) {
                skipped++;
                continue;
            }
            parts[np] = (ami_part){(int32_t)nd, m, p, N, pa->count};
            N += pa->count;
            if (pr->mode == 4) {
                const am_gltf_accessor *ia = pr->indices >= 0 && (size_t)pr->indices < doc->accessor_count
                                                 ? &doc->accessors[pr->indices] : NULL;
                F += (ia ? ia->count : pa->count) / 3;
            }
            np++;
        }
    }
    if (skipped)
        ami_warn(AM_WARN_RESOURCE, "only the first 256 mesh primitives are baked: %zu left out", skipped);
    AMI_CHECK(err, N > 0, AM_E_EMPTY, "the model has no mesh vertices");
    /* Before any frame is allocated (every skin joint counted: an upper bound). */
    size_t SJ0 = doc->skin_count ? doc->skins[0].joint_count : 0;
    double need = (double)T * ((double)N * AMI_BAKE_VERTEX_FRAME_BYTES +
                               (double)SJ0 * AMI_BAKE_JOINT_FRAME_BYTES);
    AMI_CHECK(err, (double)T * (double)(doc->node_count + N) <= AM_GLTF_MAX_NODE_FRAMES,
              AM_E_LIMIT, "animation '%s': %zu frames x %zu nodes and vertices to evaluate",
              an->name ? an->name : "0", T, doc->node_count + N);
    AMI_TRY(AMI_BUDGET_CHECK(err, doc->source_name,
                             need >= 1.8e19 ? UINT64_MAX : (uint64_t)need, AMI_BAKE_MAX_BYTES,
                             "animation '%s': %.6g s at %g fps = %zu frames x %zu vertices",
                             an->name ? an->name : "0", dur, o.fps, T, N));

    /* deforming joints: skin joints with weight on some vertex */
    const am_gltf_skin *sk = doc->skin_count ? &doc->skins[0] : NULL;
    size_t SJ = sk ? sk->joint_count : 0;
    uint8_t *deform = am_alloc_array(SJ + 1, 1);
    am_synth_clip *c = am_alloc(sizeof *c);
    am_tracks *tr = am_alloc(sizeof *tr);
    double *local = am_alloc_array(doc->node_count * 16, sizeof(double));
    double *world = am_alloc_array(doc->node_count * 16, sizeof(double));
    double *skinm = am_alloc_array((SJ + 1) * 16, sizeof(double));
    double *mw = am_alloc_array(256, sizeof(double));
    int32_t *jmap = NULL;
    am_status st = AM_OK;
    if (c) c->tracks = tr;
    if (!deform || !c || !tr || !local || !world || !skinm || !mw) goto nomem;
    tr->frame_count = T;
    tr->point_count = N;
    tr->fps = o.fps;
    tr->points = am_alloc_array(T * N * 3, sizeof(float));
    tr->faces = F ? am_alloc_array(F * 3, sizeof(int32_t)) : NULL;
    c->truth = am_alloc_array(T * N * 3, sizeof(float));
    if (!tr->points || !c->truth || (F && !tr->faces)) goto nomem;
    for (size_t q = 0; q < np; q++) {
        const am_gltf_node *nd = &doc->nodes[parts[q].node];
        const am_gltf_primitive *pr = &doc->meshes[parts[q].mesh].primitives[parts[q].prim];
        if (nd->skin != 0 || !sk) continue;
        const am_gltf_accessor *ja = pr->joints0 >= 0 ? &doc->accessors[pr->joints0] : NULL;
        const am_gltf_accessor *wa = ami_acc(doc, pr->weights0, 4);
        if (!ja || !wa || ja->components != 4 || ja->count < parts[q].count || wa->count < parts[q].count) continue;
        for (size_t v = 0; v < parts[q].count; v++)
            for (int k = 0; k < 4; k++) {
                double jj = ja->ints ? (double)ja->ints[v * 4 + k] : ja->data[v * 4 + k];
                if (wa->data[v * 4 + k] > 0.0f && jj >= 0 && (size_t)jj < SJ) deform[(size_t)jj] = 1;
            }
    }
    size_t J = 0;
    jmap = am_alloc_array(SJ + 1, sizeof(int32_t));
    if (!jmap) goto nomem;
    for (size_t j = 0; j < SJ; j++) jmap[j] = deform[j] ? (int32_t)J++ : -1;
    c->joint_count = J;
    c->bone_count = J;
    c->joints = am_alloc_array(T * (J ? J : 1) * 3, sizeof(float));
    c->parents = am_alloc_array(J ? J : 1, sizeof(int32_t));
    c->joint_names = am_alloc_array(J ? J : 1, sizeof(char *));
    if (!c->joints || !c->parents || !c->joint_names) goto nomem;
    for (size_t j = 0; j < SJ; j++) {
        if (jmap[j] < 0) continue;
        /* nearest deforming ancestor among the skin's joints */
        int32_t par = -1, nodep = doc->nodes[sk->joints[j]].parent;
        while (nodep >= 0 && par < 0) {
            for (size_t k = 0; k < SJ; k++)
                if (sk->joints[k] == nodep && jmap[k] >= 0) par = jmap[k];
            nodep = doc->nodes[nodep].parent;
        }
        c->parents[jmap[j]] = par;
        const char *nm = doc->nodes[sk->joints[j]].name;
        char buf[32];
        snprintf(buf, sizeof buf, "joint%zu", j);
        c->joint_names[jmap[j]] = am_strdup(nm ? nm : buf);
        if (!c->joint_names[jmap[j]]) goto nomem;
    }
    /* faces */
    size_t fi = 0;
    for (size_t q = 0; q < np && F; q++) {
        const am_gltf_primitive *pr = &doc->meshes[parts[q].mesh].primitives[parts[q].prim];
        if (pr->mode != 4) continue;
        const am_gltf_accessor *ia = pr->indices >= 0 && (size_t)pr->indices < doc->accessor_count
                                         ? &doc->accessors[pr->indices] : NULL;
        size_t cnt = ia ? ia->count : parts[q].count;
        for (size_t i = 0; i + 2 < cnt + 0 && fi < F; i += 3, fi++)
            for (int k = 0; k < 3; k++) {
                double vi = ia ? (ia->ints ? (double)ia->ints[i + (size_t)k] : ia->data[i + (size_t)k]) : (double)(i + (size_t)k);
                size_t vv = vi >= 0 && vi < (double)parts[q].count ? (size_t)vi : 0;
                tr->faces[fi * 3 + (size_t)k] = (int32_t)(parts[q].first + vv);
            }
    }
    tr->face_count = fi;
    ami_stage stage = ami_stage_begin("bake: sample frames");
    for (size_t t = 0; t < T; t++) {
        if (t % 16 == 0 && !ami_progress(stage.name, (double)t / (double)T)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "baking stopped at frame %zu", t);
            goto fail;
        }
        double time = an->t_min + (double)t / o.fps;
        if (time > an->t_max) time = an->t_max;
        am_gltf_sample_local(doc, anim, time, local);
        am_gltf_world_from_local(doc, local, world);
        for (size_t j = 0; j < SJ; j++) {
            am_mat4_mul(world + (size_t)sk->joints[j] * 16, sk->inverse_bind + j * 16, skinm + j * 16);
            if (jmap[j] < 0) continue;
            const double *W = world + (size_t)sk->joints[j] * 16;
            double g[3] = {W[3], W[7], W[11]}, w3[3];
            am_gltf_to_world(g, w3);
            for (int i = 0; i < 3; i++) c->joints[(t * J + (size_t)jmap[j]) * 3 + (size_t)i] = (float)w3[i];
        }
        for (size_t q = 0; q < np; q++) {
            const am_gltf_node *nd = &doc->nodes[parts[q].node];
            const am_gltf_mesh *me = &doc->meshes[parts[q].mesh];
            const am_gltf_primitive *pr = &me->primitives[parts[q].prim];
            const am_gltf_accessor *pa = ami_acc(doc, pr->position, 3);
            size_t nw = me->weight_count > nd->weight_count ? me->weight_count : nd->weight_count;
            if (pr->target_count > nw) nw = pr->target_count;
            if (nw > 256) nw = 256;
            for (size_t i = 0; i < nw; i++) mw[i] = 0.0;
            if (pr->target_count) am_gltf_sample_weights(doc, anim, time, parts[q].node, mw, nw);
            const am_gltf_accessor *ja = pr->joints0 >= 0 && (size_t)pr->joints0 < doc->accessor_count
                                             ? &doc->accessors[pr->joints0] : NULL;
            const am_gltf_accessor *wa = ami_acc(doc, pr->weights0, 4);
            bool skinned = nd->skin == 0 && sk && ja && wa && ja->components == 4 && ja->count >= pa->count &&
                           wa->count >= pa->count;
            for (size_t v = 0; v < pa->count; v++) {
                double p[3] = {pa->data[v * 3], pa->data[v * 3 + 1], pa->data[v * 3 + 2]}, r[3] = {0, 0, 0};
                for (size_t m = 0; m < pr->target_count && m < nw; m++) {
                    const am_gltf_accessor *da = ami_acc(doc, pr->target_position[m], 3);
                    if (!da || da->count <= v || mw[m] == 0.0) continue;
                    for (int i = 0; i < 3; i++) p[i] += mw[m] * da->data[v * 3 + (size_t)i];
                }
                if (skinned) {
                    double ws = 0.0;
                    for (int k = 0; k < 4; k++) {
                        double w = wa->data[v * 4 + (size_t)k];
                        double jj = ja->ints ? (double)ja->ints[v * 4 + (size_t)k] : ja->data[v * 4 + (size_t)k];
                        if (!(w > 0.0) || jj < 0 || jj >= (double)SJ) continue;
                        double q3[3];
                        am_mat4_mul_point(skinm + (size_t)jj * 16, p, q3);
                        for (int i = 0; i < 3; i++) r[i] += w * q3[i];
                        ws += w;
                    }
                    if (ws > 0.0)
                        for (int i = 0; i < 3; i++) r[i] /= ws;
                } else {
                    am_mat4_mul_point(world + (size_t)parts[q].node * 16, p, r);
                }
                double w3[3];
                am_gltf_to_world(r, w3);
                for (int i = 0; i < 3; i++) c->truth[(t * N + parts[q].first + v) * 3 + (size_t)i] = (float)w3[i];
            }
        }
    }
    am_free(jmap);
    jmap = NULL;
    ami_stage_end(&stage);
    c->body_size = am_body_size_f32(c->truth, N, NULL);
    memcpy(tr->points, c->truth, sizeof(float) * T * N * 3);
    if (o.noise > 0.0 || o.hidden > 0.0) {
        st = am_synth_degrade(tr, c->body_size, o.noise, o.hidden, o.seed, &c->hidden_share, err);
        if (st < 0) goto fail;
    }
    am_free(deform), am_free(local), am_free(world), am_free(skinm), am_free(mw);
    *out = c;
    return AM_OK;
nomem:
    st = AM_FAIL(err, AM_E_NOMEM, "baking the model");
fail:
    am_free(jmap);
    am_free(deform), am_free(local), am_free(world), am_free(skinm), am_free(mw);
    if (c) am_synth_clip_free(c); else am_free(tr);
    return st;
}

am_status am_bake_gltf(const am_gltf *doc, const am_bake_opts *opts, am_synth_clip **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_bake_gltf(doc, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}
