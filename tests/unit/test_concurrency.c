/* Re-entrancy: every job run on two threads at once gives, bit for bit, what it gives alone.
 * Each case computes the sequential results first, then runs the two calls together (started
 * at one barrier) a few rounds and compares every output array with memcmp. Static scratch
 * or any other state shared between calls shows up as a differing result (the decomposition
 * had it: 10 of 12 concurrent results differed) and, under `make tsan`, as a data race.
 * Inputs are small so the ThreadSanitizer build stays within seconds. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/capture.h"
#include "anymove/decompose.h"
#include "anymove/gltf.h"
#include "anymove/ik.h"
#include "anymove/io.h"
#include "anymove/multiview.h"

#define AMI_ROUNDS 3

/* ---- two calls at once ---- */

typedef void (*ami_fn)(void *arg);

typedef struct {
    ami_fn fn;
    void *arg;
    pthread_barrier_t *start;
} ami_thread_arg;

static void *ami_thread_main(void *p)
{
    ami_thread_arg *t = p;
    pthread_barrier_wait(t->start);
    t->fn(t->arg);
    return NULL;
}

/* fn(a) and fn(b) on two threads, released together. */
static void ami_run_two(ami_fn fn, void *a, void *b)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    ami_thread_arg ta = {fn, a, &start}, tb = {fn, b, &start};
    pthread_t th[2];
    int ca = pthread_create(&th[0], NULL, ami_thread_main, &ta);
    int cb = pthread_create(&th[1], NULL, ami_thread_main, &tb);
    AM_CHECK_MSG(ca == 0 && cb == 0, "pthread_create failed");
    if (ca == 0) pthread_join(th[0], NULL);
    if (cb == 0) pthread_join(th[1], NULL);
    pthread_barrier_destroy(&start);
}

/* Bitwise equality of two arrays (both NULL is equal). */
static bool ami_same(const void *a, const void *b, size_t bytes)
{
    if (!a || !b) return a == b;
    return memcmp(a, b, bytes) == 0;
}

static bool ami_same_motion(const am_motion *a, const am_motion *b)
{
    if (!a || !b) return a == b;
    if (a->frame_count != b->frame_count || a->bone_count != b->bone_count || a->joint_count != b->joint_count)
        return false;
    size_t T = a->frame_count, B = a->bone_count, J = a->joint_count;
    return ami_same(a->trans, b->trans, T * 3 * sizeof(double)) &&
           ami_same(a->root_quat, b->root_quat, T * 4 * sizeof(double)) &&
           ami_same(a->euler, b->euler, T * B * 3 * sizeof(double)) &&
           ami_same(a->quat, b->quat, T * B * 4 * sizeof(double)) &&
           ami_same(a->joints, b->joints, T * J * 3 * sizeof(double)) &&
           ami_same(&a->fps, &b->fps, sizeof a->fps);
}

static am_rig *ami_creature_rig(const char *name, am_creature **cr)
{
    char rel[256];
    am_error err = {0};
    am_rig *rig = NULL;
    snprintf(rel, sizeof rel, "examples/creatures/%s/rig.json", name);
    AM_CHECK_OK(am_rig_load(am_test_source(rel), &rig, &err), &err);
    snprintf(rel, sizeof rel, "examples/creatures/%s/creature.json", name);
    AM_CHECK_OK(am_creature_load(am_test_source(rel), cr, &err), &err);
    return rig;
}

/* ---- decompose ---- */

typedef struct {
    const am_tracks *tracks;
    am_decompose_opts opts;
    am_decomposition *out;
    am_status st;
    am_error err;
} ami_dec_call;

static void ami_dec_run(void *p)
{
    ami_dec_call *c = p;
    c->out = NULL;
    c->st = am_decompose_run(c->tracks, &c->opts, &c->out, &c->err);
}

static bool ami_same_decomposition(const am_decomposition *a, const am_decomposition *b)
{
    if (!a || !b) return false;
    if (a->frame_count != b->frame_count || a->point_count != b->point_count || a->bone_count != b->bone_count)
        return false;
    size_t T = a->frame_count, N = a->point_count, B = a->bone_count;
    double sa[5] = {a->err_visible, a->err_visible_free, a->noise_floor, a->body_size, a->fps};
    double sb[5] = {b->err_visible, b->err_visible_free, b->noise_floor, b->body_size, b->fps};
    return ami_same(sa, sb, sizeof sa) && ami_same(a->rest, b->rest, N * 3 * sizeof(float)) &&
           ami_same(a->bone_index, b->bone_index, N * 4 * sizeof(int32_t)) &&
           ami_same(a->weight, b->weight, N * 4 * sizeof(float)) &&
           ami_same(a->xform, b->xform, T * B * 12 * sizeof(double)) &&
           a->rig && b->rig && a->rig->joint_count == b->rig->joint_count &&
           ami_same(a->rig->joint_rest, b->rig->joint_rest, a->rig->joint_count * 3 * sizeof(double)) &&
           ami_same_motion(a->motion, b->motion);
}

/* Every k-th point of the first T frames of a clip (in place): a fraction of the work, the same
 * code paths. */
static void ami_shrink(am_tracks *tr, size_t T, size_t k)
{
    if (tr->frame_count > T) tr->frame_count = T; /* frame-major: the first T frames lead */
    size_t N = tr->point_count, M = (N + k - 1) / k;
    for (size_t t = 0; t < tr->frame_count; t++)
        for (size_t m = 0; m < M; m++) {
            memmove(tr->points + (t * M + m) * 3, tr->points + (t * N + m * k) * 3, 3 * sizeof(float));
            if (tr->visible) tr->visible[t * M + m] = tr->visible[t * N + m * k];
        }
    tr->point_count = M;
    tr->face_count = 0; /* faces index the old points: the kNN graph stands in */
}

/* Two different clips at once, each with one thread and with two worker threads of its own
 * (the workers join the caller's scope). */
static void decompose_two_clips_at_once(void)
{
    const char *clips[2] = {"examples/tracks/grison_walk.tracks.npz", "examples/tracks/glass-snake_walk.tracks.npz"};
    am_tracks *tr[2] = {NULL, NULL};
    am_error err = {0};
    for (int i = 0; i < 2; i++) {
        AM_CHECK_OK(am_tracks_load(am_test_source(clips[i]), &tr[i], &err), &err);
        if (tr[i]) ami_shrink(tr[i], 30, 2);
    }
    if (!tr[0] || !tr[1]) goto done;
    for (size_t threads = 1; threads <= 2; threads++) {
        am_decompose_opts o = {.bones = 4, .iterations = 6, .threads = threads};
        ami_dec_call seq[2] = {{tr[0], o, NULL, AM_OK, {0}}, {tr[1], o, NULL, AM_OK, {0}}};
        for (int i = 0; i < 2; i++) {
            ami_dec_run(&seq[i]);
            AM_CHECK_OK(seq[i].st, &seq[i].err);
        }
        size_t differ = 0, runs = 0;
        for (int r = 0; r < AMI_ROUNDS; r++) {
            ami_dec_call par[2] = {{tr[0], o, NULL, AM_OK, {0}}, {tr[1], o, NULL, AM_OK, {0}}};
            ami_run_two(ami_dec_run, &par[0], &par[1]);
            for (int i = 0; i < 2; i++) {
                AM_CHECK_OK(par[i].st, &par[i].err);
                runs++;
                differ += !ami_same_decomposition(par[i].out, seq[i].out);
                am_decomposition_free(par[i].out);
            }
        }
        AM_CHECK_MSG(differ == 0, "%zu threads each: %zu of %zu concurrent decompositions differ from sequential runs",
                     threads, differ, runs);
        for (int i = 0; i < 2; i++) am_decomposition_free(seq[i].out);
    }
done:
    for (int i = 0; i < 2; i++) am_tracks_free(tr[i]);
}

/* ---- capture: exam, solve, IK, FK ---- */

typedef struct {
    const am_rig *rig;
    const am_creature *cr;
    am_exam_opts exam_opts;
    am_exam *exam;
    am_capture_result *res;
    am_motion *ik;     /* IK of the exam's true joints */
    double *fk;        /* FK of the exam's true motion [T][J][3] */
    am_status st;
    am_error err;
} ami_cap_call;

static void ami_exam_run(void *p)
{
    ami_cap_call *c = p;
    c->exam = NULL;
    c->st = am_exam_generate(c->rig, c->cr, &c->exam_opts, &c->exam, &c->err);
}

static void ami_solve_run(void *p)
{
    ami_cap_call *c = p;
    c->res = NULL;
    am_capture_opts o = {.iterations = 1};
    c->st = am_capture_solve(c->exam->det, c->rig, c->cr, &o, &c->res, &c->err);
}

static void ami_ik_run_call(void *p)
{
    ami_cap_call *c = p;
    const am_motion *truth = c->exam->truth;
    c->ik = NULL;
    c->st = am_motion_create(c->rig, truth->frame_count, truth->fps, &c->ik, &c->err);
    if (c->st != AM_OK) return;
    am_ik_job job = {.rig = c->rig, .frame_count = truth->frame_count, .positions = truth->joints,
                     .reference = truth, .out = c->ik};
    c->st = am_ik_run(&job, &c->err);
}

static void ami_fk_run(void *p)
{
    ami_cap_call *c = p;
    const am_motion *truth = c->exam->truth;
    size_t n = truth->frame_count * c->rig->joint_count * 3;
    /* plain malloc: FK itself allocates nothing, the buffer is the test's */
    c->fk = malloc(n * sizeof(double));
    if (c->fk) am_rig_fk_clip(c->rig, truth, c->fk);
}

static bool ami_same_exam(const am_exam *a, const am_exam *b)
{
    if (!a || !b) return false;
    const am_det *x = a->det, *y = b->det;
    size_t TJ = x->frame_count * x->joint_count;
    return x->frame_count == y->frame_count && x->joint_count == y->joint_count &&
           ami_same(x->front_uv, y->front_uv, TJ * 2 * sizeof(float)) &&
           ami_same(x->side_uv, y->side_uv, TJ * 2 * sizeof(float)) &&
           ami_same(x->front_conf, y->front_conf, TJ * sizeof(float)) &&
           ami_same(x->side_conf, y->side_conf, TJ * sizeof(float)) && ami_same_motion(a->truth, b->truth) &&
           a->contact_count == b->contact_count &&
           ami_same(a->contact, b->contact, x->frame_count * a->contact_count);
}

static bool ami_same_result(const am_capture_result *a, const am_capture_result *b)
{
    if (!a || !b) return false;
    double sa[6] = {a->reproj_front, a->reproj_front_x, a->reproj_side, a->slide_mean_mm, a->slide_max_mm,
                    a->sync.paw_score};
    double sb[6] = {b->reproj_front, b->reproj_front_x, b->reproj_side, b->slide_mean_mm, b->slide_max_mm,
                    b->sync.paw_score};
    return ami_same(sa, sb, sizeof sa) && a->lm_iterations == b->lm_iterations &&
           a->contact_count == b->contact_count && a->plant_count == b->plant_count &&
           ami_same_motion(a->motion, b->motion) && a->motion &&
           strcmp(a->motion->extra_json ? a->motion->extra_json : "", b->motion->extra_json ? b->motion->extra_json : "") == 0;
}

static void ami_cap_clear(ami_cap_call *c, bool exam)
{
    am_capture_result_free(c->res);
    am_motion_free(c->ik);
    free(c->fk);
    c->res = NULL;
    c->ik = NULL;
    c->fk = NULL;
    if (exam) {
        am_exam_free(c->exam);
        c->exam = NULL;
    }
}

/* The wolf and the spider (different rigs, layouts and contacts) at once: the exam, the
 * solve, IK on the true joints and FK of the true motion. */
static void capture_ik_fk_two_creatures_at_once(void)
{
    am_creature *cr[2] = {NULL, NULL};
    am_rig *rig[2] = {ami_creature_rig("wolf", &cr[0]), ami_creature_rig("spider", &cr[1])};
    ami_cap_call seq[2] = {{0}}, par[2] = {{0}};
    if (!rig[0] || !rig[1] || !cr[0] || !cr[1]) goto done;
    for (int i = 0; i < 2; i++) {
        am_exam_opts eo = {.seed = 3 + (uint64_t)i, .frames = 16, .noise_px = 2, .dropout = 0.02, .swap = 0.02,
                           .lag = 1};
        seq[i] = (ami_cap_call){.rig = rig[i], .cr = cr[i], .exam_opts = eo};
        par[i] = seq[i];
        ami_exam_run(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err);
        if (seq[i].st != AM_OK) goto done;
        ami_solve_run(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err);
        ami_ik_run_call(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err);
        ami_fk_run(&seq[i]);
        AM_CHECK(seq[i].fk != NULL);
    }
    size_t differ[4] = {0, 0, 0, 0};
    for (int r = 0; r < AMI_ROUNDS; r++) {
        ami_run_two(ami_exam_run, &par[0], &par[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(par[i].st, &par[i].err);
            differ[0] += !ami_same_exam(par[i].exam, seq[i].exam);
            /* the later stages run on the sequential exam, so each compares only itself */
            am_exam_free(par[i].exam);
            par[i].exam = seq[i].exam;
        }
        ami_run_two(ami_solve_run, &par[0], &par[1]);
        ami_run_two(ami_ik_run_call, &par[0], &par[1]);
        ami_run_two(ami_fk_run, &par[0], &par[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(par[i].st, &par[i].err);
            size_t TJ3 = seq[i].exam->truth->frame_count * rig[i]->joint_count * 3;
            differ[1] += !ami_same_result(par[i].res, seq[i].res);
            differ[2] += !ami_same_motion(par[i].ik, seq[i].ik);
            differ[3] += !par[i].fk || !ami_same(par[i].fk, seq[i].fk, TJ3 * sizeof(double));
            ami_cap_clear(&par[i], false);
            par[i].exam = NULL;
        }
    }
    AM_CHECK_MSG(differ[0] == 0, "exam: %zu of %d concurrent runs differ", differ[0], 2 * AMI_ROUNDS);
    AM_CHECK_MSG(differ[1] == 0, "solve: %zu of %d concurrent runs differ", differ[1], 2 * AMI_ROUNDS);
    AM_CHECK_MSG(differ[2] == 0, "ik: %zu of %d concurrent runs differ", differ[2], 2 * AMI_ROUNDS);
    AM_CHECK_MSG(differ[3] == 0, "fk: %zu of %d concurrent runs differ", differ[3], 2 * AMI_ROUNDS);
done:
    for (int i = 0; i < 2; i++) {
        ami_cap_clear(&seq[i], true);
        am_creature_free(cr[i]);
        am_rig_free(rig[i]);
    }
}

/* ---- glTF read ---- */

typedef struct {
    const char *path;
    am_gltf *doc;
    am_rig *rig;
    am_motion *motion; /* animation 0 sampled at 30 fps */
    am_status st;
    am_error err;
} ami_read_call;

static void ami_read_run(void *p)
{
    ami_read_call *c = p;
    c->doc = NULL;
    c->rig = NULL;
    c->motion = NULL;
    c->st = am_gltf_load(c->path, NULL, &c->doc, &c->err);
    if (c->st == AM_OK) c->st = am_rig_from_gltf(c->doc, -1, &c->rig, &c->err);
    if (c->st == AM_OK) c->st = am_motion_from_gltf(c->doc, -1, c->rig, 0, 30.0, &c->motion, &c->err);
}

static bool ami_same_doc(const am_gltf *a, const am_gltf *b)
{
    if (!a || !b) return false;
    if (a->node_count != b->node_count || a->accessor_count != b->accessor_count ||
        a->skin_count != b->skin_count || a->animation_count != b->animation_count)
        return false;
    for (size_t i = 0; i < a->accessor_count; i++) {
        const am_gltf_accessor *x = &a->accessors[i], *y = &b->accessors[i];
        if (x->count != y->count || x->components != y->components ||
            !ami_same(x->data, y->data, x->count * x->components * sizeof(float)) ||
            !ami_same(x->ints, y->ints, x->count * x->components * sizeof(uint32_t)))
            return false;
    }
    for (size_t i = 0; i < a->node_count; i++)
        if (!ami_same(a->nodes[i].matrix, b->nodes[i].matrix, sizeof a->nodes[i].matrix) ||
            a->nodes[i].parent != b->nodes[i].parent)
            return false;
    for (size_t i = 0; i < a->skin_count; i++)
        if (a->skins[i].joint_count != b->skins[i].joint_count ||
            !ami_same(a->skins[i].inverse_bind, b->skins[i].inverse_bind,
                      a->skins[i].joint_count * 16 * sizeof(double)))
            return false;
    return true;
}

static void ami_read_clear(ami_read_call *c)
{
    am_motion_free(c->motion);
    am_rig_free(c->rig);
    am_gltf_free(c->doc);
    c->motion = NULL;
    c->rig = NULL;
    c->doc = NULL;
}

/* Two different skinned, animated models at once: the document, its rig and a clip. */
static void gltf_read_two_models_at_once(void)
{
    const char *paths[2] = {am_test_shared("data/gltf/khronos_fox/Fox.glb"),
                            am_test_shared("data/gltf/quaternius/Snake.glb")};
    ami_read_call seq[2] = {{paths[0], NULL, NULL, NULL, AM_OK, {0}}, {paths[1], NULL, NULL, NULL, AM_OK, {0}}};
    for (int i = 0; i < 2; i++) {
        ami_read_run(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err); /* fails, naming the file, if ../shared/data is missing */
    }
    size_t differ = 0;
    for (int r = 0; r < AMI_ROUNDS && seq[0].st == AM_OK && seq[1].st == AM_OK; r++) {
        ami_read_call par[2] = {{paths[0], NULL, NULL, NULL, AM_OK, {0}}, {paths[1], NULL, NULL, NULL, AM_OK, {0}}};
        ami_run_two(ami_read_run, &par[0], &par[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(par[i].st, &par[i].err);
            differ += !ami_same_doc(par[i].doc, seq[i].doc) || !ami_same_motion(par[i].motion, seq[i].motion);
            ami_read_clear(&par[i]);
        }
    }
    AM_CHECK_MSG(differ == 0, "%zu of %d concurrent glTF reads differ", differ, 2 * AMI_ROUNDS);
    for (int i = 0; i < 2; i++) ami_read_clear(&seq[i]);
}

/* ---- glTF write ---- */

typedef struct {
    am_gltf_export ex;
    const char *path; /* also written to this file */
    int file_writes;
    am_buf out;
    am_status st;
    am_error err;
} ami_write_call;

static void ami_write_run(void *p)
{
    ami_write_call *c = p;
    c->out = (am_buf){0};
    c->st = am_gltf_write_mem(&c->ex, &c->out, &c->err);
    for (int k = 0; k < c->file_writes && c->st == AM_OK; k++) c->st = am_gltf_write(&c->ex, c->path, &c->err);
}

/* Two rigs and clips into memory at once; then both threads write one model to one path
 * again and again (each write's temporary file is its own, so every write succeeds and the
 * file ends up whole). */
static void gltf_write_two_models_at_once(void)
{
    am_creature *cr[2] = {NULL, NULL};
    am_rig *rig[2] = {ami_creature_rig("wolf", &cr[0]), ami_creature_rig("dino", &cr[1])};
    am_exam *ex[2] = {NULL, NULL};
    ami_write_call seq[2] = {{{0}, NULL, 0, {0}, AM_OK, {0}}, {{0}, NULL, 0, {0}, AM_OK, {0}}};
    const am_motion *clips[2][1];
    am_error err = {0};
    for (int i = 0; i < 2; i++) {
        am_exam_opts eo = {.seed = 7 + (uint64_t)i, .frames = 40};
        if (!rig[i]) goto done;
        AM_CHECK_OK(am_exam_generate(rig[i], cr[i], &eo, &ex[i], &err), &err);
        if (!ex[i]) goto done;
        clips[i][0] = ex[i]->truth;
        seq[i].ex = (am_gltf_export){.rig = rig[i], .clip_count = 1, .clips = clips[i]};
        ami_write_run(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err);
    }
    char shared[600];
    snprintf(shared, sizeof shared, "%s/concurrent.glb", am_test_tmpdir());
    size_t differ = 0;
    for (int r = 0; r < AMI_ROUNDS; r++) {
        /* one model on both threads, so the file's bytes are known whichever write lands last */
        ami_write_call par[2] = {seq[0], seq[0]};
        for (int i = 0; i < 2; i++) {
            par[i].path = shared;
            par[i].file_writes = 16;
        }
        ami_run_two(ami_write_run, &par[0], &par[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(par[i].st, &par[i].err);
            differ += par[i].out.len != seq[0].out.len || !ami_same(par[i].out.data, seq[0].out.data, seq[0].out.len);
            am_buf_free(&par[i].out);
        }
        char *data = NULL;
        size_t len = 0;
        AM_CHECK_OK(am_file_read(shared, 0, &data, &len, &err), &err);
        differ += len != seq[0].out.len || !ami_same(data, seq[0].out.data, len);
        am_free(data);
        /* and two different models into memory at once */
        ami_write_call two[2] = {seq[0], seq[1]};
        two[0].file_writes = two[1].file_writes = 0;
        ami_run_two(ami_write_run, &two[0], &two[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(two[i].st, &two[i].err);
            differ += two[i].out.len != seq[i].out.len || !ami_same(two[i].out.data, seq[i].out.data, seq[i].out.len);
            am_buf_free(&two[i].out);
        }
    }
    AM_CHECK_MSG(differ == 0, "%zu concurrent glTF writes differ from sequential ones", differ);
    AM_CHECK(!am_test_tmp_left(shared));
done:
    for (int i = 0; i < 2; i++) {
        am_buf_free(&seq[i].out);
        am_exam_free(ex[i]);
        am_creature_free(cr[i]);
        am_rig_free(rig[i]);
    }
}

/* ---- multiview: the N-view exam and triangulation (with the whole-clip refinement) ---- */

typedef struct {
    const am_rig *rig;
    const am_creature *cr;
    am_mexam_opts exam_opts;
    am_mexam *exam;
    am_triangulation *tri;
    am_status st;
    am_error err;
} ami_mv_call;

static void ami_mv_run(void *p)
{
    ami_mv_call *c = p;
    c->exam = NULL;
    c->tri = NULL;
    c->st = am_mexam_generate(c->rig, c->cr, NULL, &c->exam_opts, &c->exam, &c->err);
    if (c->st != AM_OK) return;
    am_triangulate_opts o = {.flags = AM_TRI_REFINE, .refine_iterations = 4};
    c->st = am_triangulate(c->exam->det, c->exam->cameras, &o, &c->tri, &c->err);
}

static bool ami_same_mv(const ami_mv_call *a, const ami_mv_call *b)
{
    if (!a->exam || !b->exam || !a->tri || !b->tri) return false;
    const am_mdet *x = a->exam->det, *y = b->exam->det;
    size_t CTJ = x->camera_count * x->frame_count * x->joint_count, TJ = a->tri->frame_count * a->tri->joint_count;
    return CTJ == y->camera_count * y->frame_count * y->joint_count && ami_same(x->uv, y->uv, CTJ * 2 * sizeof(float)) &&
           ami_same(x->conf, y->conf, CTJ * sizeof(float)) && TJ == b->tri->frame_count * b->tri->joint_count &&
           ami_same(a->tri->joints->joints, b->tri->joints->joints, TJ * 3 * sizeof(double)) &&
           ami_same(a->tri->reproj_px, b->tri->reproj_px, TJ * sizeof(float)) &&
           ami_same(a->tri->used, b->tri->used, CTJ);
}

static void ami_mv_clear(ami_mv_call *c)
{
    am_triangulation_free(c->tri);
    am_mexam_free(c->exam);
    c->tri = NULL;
    c->exam = NULL;
}

static void multiview_two_creatures_at_once(void)
{
    am_creature *cr[2] = {NULL, NULL};
    am_rig *rig[2] = {ami_creature_rig("wolf", &cr[0]), ami_creature_rig("spider", &cr[1])};
    ami_mv_call seq[2];
    memset(seq, 0, sizeof seq);
    for (int i = 0; i < 2; i++) {
        if (!rig[i]) goto done;
        seq[i].rig = rig[i];
        seq[i].cr = cr[i];
        seq[i].exam_opts = (am_mexam_opts){.motion = {.seed = 3 + (uint64_t)i, .frames = 30}, .cameras = 3 + (size_t)i,
                                           .noise_px = 2, .dropout = 0.05, .outliers = 0.05, .occlusion = true};
        ami_mv_run(&seq[i]);
        AM_CHECK_OK(seq[i].st, &seq[i].err);
    }
    size_t differ = 0;
    for (int r = 0; r < AMI_ROUNDS; r++) {
        ami_mv_call par[2] = {seq[0], seq[1]};
        ami_run_two(ami_mv_run, &par[0], &par[1]);
        for (int i = 0; i < 2; i++) {
            AM_CHECK_OK(par[i].st, &par[i].err);
            differ += !ami_same_mv(&par[i], &seq[i]);
            ami_mv_clear(&par[i]);
        }
    }
    AM_CHECK_MSG(differ == 0, "%zu concurrent N-view exams + triangulations differ from sequential ones", differ);
done:
    for (int i = 0; i < 2; i++) {
        ami_mv_clear(&seq[i]);
        am_creature_free(cr[i]);
        am_rig_free(rig[i]);
    }
}

#define AM_TESTS(X)                          \
    X(decompose_two_clips_at_once)           \
    X(capture_ik_fk_two_creatures_at_once)   \
    X(gltf_read_two_models_at_once)          \
    X(gltf_write_two_models_at_once)         \
    X(multiview_two_creatures_at_once)
AM_TEST_MAIN(AM_TESTS)
