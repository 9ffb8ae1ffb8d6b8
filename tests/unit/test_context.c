/* Per-call contexts: the allocator, allocation and byte limits, progress and cancellation of
 * one call, and its warnings. Fault injection sweeps `opts.ctx.max_allocs = 1..N` over whole
 * jobs (decompose with worker threads, IK, capture solve, the glTF writer): every limit gives
 * AM_E_NOMEM and frees everything, and N itself succeeds. A tagged allocator checks that every
 * block a call allocates is freed, and freed with the allocator that made it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/capture.h"
#include "anymove/decompose.h"
#include "anymove/gltf.h"
#include "anymove/ik.h"
#include "anymove/multiview.h"
#include "anymove/synth.h"
#include "core/internal.h"

/* ---- a tagged, counting allocator ---- */

#define AMI_TAG 0x616d746167ull /* "amtag": in front of every block of this allocator */

typedef struct {
    uint64_t tag;
    uint64_t pad;
} ami_tag_hdr;

typedef struct {
    long live, calls, foreign; /* blocks alive, alloc + realloc calls, frees of foreign blocks */
} ami_counter;

static void *ami_tag_alloc(void *user, size_t size)
{
    ami_counter *c = user;
    ami_tag_hdr *h = malloc(sizeof *h + size);
    if (!h) return NULL;
    h->tag = AMI_TAG;
    __atomic_add_fetch(&c->live, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
    return h + 1;
}

static void *ami_tag_realloc(void *user, void *ptr, size_t size)
{
    ami_counter *c = user;
    ami_tag_hdr *h = (ami_tag_hdr *)ptr - 1;
    if (h->tag != AMI_TAG) {
        __atomic_add_fetch(&c->foreign, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    __atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
    ami_tag_hdr *n = realloc(h, sizeof *h + size);
    return n ? n + 1 : NULL;
}

static void ami_tag_free(void *user, void *ptr)
{
    ami_counter *c = user;
    ami_tag_hdr *h = (ami_tag_hdr *)ptr - 1;
    if (h->tag != AMI_TAG) { /* not ours: never hand it to free() shifted */
        __atomic_add_fetch(&c->foreign, 1, __ATOMIC_RELAXED);
        return;
    }
    h->tag = 0;
    __atomic_sub_fetch(&c->live, 1, __ATOMIC_RELAXED);
    free(h);
}

static am_context ami_tag_context(ami_counter *c)
{
    memset(c, 0, sizeof *c);
    return (am_context){.allocator = {ami_tag_alloc, ami_tag_realloc, ami_tag_free, c}};
}

/* ---- jobs under test: run(arg, ctx) with the given context, clear(arg) frees the result ---- */

typedef struct {
    const char *name;
    am_status (*run)(void *arg, const am_context *ctx);
    void (*clear)(void *arg);
    void *arg;
} ami_job;

typedef struct {
    am_tracks *tracks;
    am_decomposition *out;
    am_rig_mode rig_mode;
} ami_dec_arg;

static am_status ami_dec_job(void *p, const am_context *ctx)
{
    ami_dec_arg *a = p;
    /* two worker threads: they join the call's scope, so its allocator and limits are theirs */
    am_decompose_opts o = {.bones = 3, .iterations = 3, .threads = 2, .rig_mode = a->rig_mode, .ctx = *ctx};
    return am_decompose_run(a->tracks, &o, &a->out, NULL);
}

static void ami_dec_clear(void *p)
{
    ami_dec_arg *a = p;
    am_decomposition_free(a->out);
    a->out = NULL;
}

typedef struct {
    am_rig *rig;
    am_creature *cr;
    am_exam *exam;
    am_capture_result *res;
    am_motion *ik;
    am_buf glb;
} ami_cap_arg;

static am_status ami_solve_job(void *p, const am_context *ctx)
{
    ami_cap_arg *a = p;
    am_capture_opts o = {.iterations = 1, .ctx = *ctx};
    return am_capture_solve(a->exam->det, a->rig, a->cr, &o, &a->res, NULL);
}

static void ami_solve_clear(void *p)
{
    ami_cap_arg *a = p;
    am_capture_result_free(a->res);
    a->res = NULL;
}

static am_status ami_ik_job(void *p, const am_context *ctx)
{
    ami_cap_arg *a = p;
    const am_motion *truth = a->exam->truth;
    am_ik_opts o = {.ctx = *ctx};
    am_ik_job job = {.rig = a->rig, .frame_count = truth->frame_count, .positions = truth->joints,
                     .reference = truth, .opts = &o, .out = a->ik};
    return am_ik_run(&job, NULL);
}

static void ami_ik_clear(void *p) { (void)p; }

static am_status ami_glb_job(void *p, const am_context *ctx)
{
    ami_cap_arg *a = p;
    const am_motion *clips[1] = {a->exam->truth};
    am_gltf_export ex = {.rig = a->rig, .clip_count = 1, .clips = clips, .ctx = *ctx};
    return am_gltf_write_mem(&ex, &a->glb, NULL);
}

static void ami_glb_clear(void *p)
{
    ami_cap_arg *a = p;
    am_buf_free(&a->glb);
}

/* A six-bone biped and its two feet: the sweeps run a whole solve per allocation, so the
 * problem is kept small (the examples' 25-bone creatures cost ~50x more per solve). */
static am_status ami_biped(am_rig **rig, am_creature **cr, am_error *err)
{
    static const char *const joints[7] = {"hip", "chest", "head", "knee_L", "foot_L", "knee_R", "foot_R"};
    static const double pos[7][3] = {{0, 0, 0.5}, {0, 0, 0.8}, {0, -0.1, 0.95}, {0.1, -0.02, 0.27},
                                     {0.1, 0, 0.02}, {-0.1, -0.02, 0.27}, {-0.1, 0, 0.02}};
    static const char *const bones[6] = {"spine", "neck", "thigh_L", "shin_L", "thigh_R", "shin_R"};
    static const char *const head[6] = {"hip", "chest", "hip", "knee_L", "hip", "knee_R"};
    static const char *const tail[6] = {"chest", "head", "knee_L", "foot_L", "knee_R", "foot_R"};
    static const char *const parent[6] = {NULL, "spine", "spine", "thigh_L", "spine", "thigh_R"};
    static const char *const keys[2] = {"thigh", "shin"};
    static const double limits_deg[2][3][2] = {{{-70, 70}, {-15, 15}, {-25, 25}}, {{0, 100}, {-5, 5}, {-5, 5}}};
    am_rig_desc d = {.joint_count = 7, .joint_names = joints, .joint_pos = &pos[0][0], .bone_count = 6,
                     .bone_names = bones, .bone_head = head, .bone_tail = tail, .bone_parent = parent,
                     .limit_count = 2, .limit_keys = keys, .limits_deg = &limits_deg[0][0][0], .source = "biped"};
    AMI_TRY(am_rig_build(&d, rig, err));
    static const char text[] = "{\"name\": \"biped\", \"feet\": [\"foot_L\", \"foot_R\"]}";
    return am_creature_parse(text, sizeof text - 1, "biped", cr, err);
}

/* The other jobs: the exam, synthesis, the glTF reader (on the writer's GLB) and bake. */
typedef struct {
    ami_cap_arg *cap;
    am_exam *exam;
    am_synth_clip *clip;
    am_gltf *doc;
} ami_more_arg;

static am_status ami_exam_job(void *p, const am_context *ctx)
{
    ami_more_arg *a = p;
    am_exam_opts o = {.seed = 5, .frames = 10, .noise_px = 1, .ctx = *ctx};
    return am_exam_generate(a->cap->rig, a->cap->cr, &o, &a->exam, NULL);
}

static am_status ami_synth_job(void *p, const am_context *ctx)
{
    ami_more_arg *a = p;
    am_synth_opts o = {.plan = AM_SYNTH_BIRD, .frames = 20, .points = 60, .seed = 4, .ctx = *ctx};
    return am_synth_tracks(&o, &a->clip, NULL);
}

static am_status ami_read_job(void *p, const am_context *ctx)
{
    ami_more_arg *a = p;
    am_gltf_opts o = {.ctx = *ctx};
    return am_gltf_read_mem(a->cap->glb.data, a->cap->glb.len, "biped.glb", NULL, &o, &a->doc, NULL);
}

static am_status ami_bake_job(void *p, const am_context *ctx)
{
    ami_more_arg *a = p;
    am_bake_opts o = {.fps = 30, .noise = 0.01, .hidden = 0.1, .ctx = *ctx};
    return am_bake_gltf(a->doc, &o, &a->clip, NULL);
}

static void ami_more_clear(void *p)
{
    ami_more_arg *a = p;
    am_exam_free(a->exam);
    am_synth_clip_free(a->clip);
    a->exam = NULL;
    a->clip = NULL;
}

static void ami_read_clear(void *p)
{
    ami_more_arg *a = p;
    am_gltf_free(a->doc);
    a->doc = NULL;
}

static bool ami_cap_setup(ami_cap_arg *a)
{
    memset(a, 0, sizeof *a);
    am_error err = {0};
    AM_CHECK_OK(ami_biped(&a->rig, &a->cr, &err), &err);
    if (!a->rig || !a->cr) return false;
    am_exam_opts eo = {.seed = 2, .frames = 12, .noise_px = 1};
    AM_CHECK_OK(am_exam_generate(a->rig, a->cr, &eo, &a->exam, &err), &err);
    if (!a->exam) return false;
    AM_CHECK_OK(am_motion_create(a->rig, a->exam->truth->frame_count, 30, &a->ik, &err), &err);
    return a->ik != NULL;
}

static void ami_cap_teardown(ami_cap_arg *a)
{
    am_motion_free(a->ik);
    am_exam_free(a->exam);
    am_creature_free(a->cr);
    am_rig_free(a->rig);
}

static bool ami_dec_setup(ami_dec_arg *a)
{
    memset(a, 0, sizeof *a);
    am_synth_opts so = {.plan = AM_SYNTH_SNAKE, .motion = AM_SYNTH_WALK, .seed = 3, .frames = 12, .points = 200};
    am_synth_clip *clip = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_synth_tracks(&so, &clip, &err), &err);
    if (!clip) return false;
    a->tracks = clip->tracks; /* keep the tracks, drop the truth */
    clip->tracks = NULL;
    am_synth_clip_free(clip);
    return true;
}

/* The sweep: N = allocations of an unlimited run; every limit below it fails cleanly. */
static void ami_sweep(const ami_job *job)
{
    /* a job with a zero context counts into the enclosing scope: count its allocations there */
    ami_counter cnt;
    am_context ctx = ami_tag_context(&cnt), zero = {0};
    am_scope sc;
    am_scope_enter(&sc, &ctx);
    am_status st = job->run(job->arg, &zero);
    long n = (long)am_scope_alloc_count(&sc);
    am_scope_leave(&sc, NULL);
    AM_CHECK_MSG(st >= 0, "%s: unlimited run gave %s", job->name, am_status_name(st));
    job->clear(job->arg);
    AM_CHECK_MSG(cnt.live == 0 && cnt.foreign == 0, "%s: %ld blocks left, %ld foreign frees", job->name, cnt.live,
                 cnt.foreign);
    AM_CHECK_MSG(n > 3, "%s: only %ld allocations", job->name, n);
    size_t wrong = 0, leaked = 0;
    for (long k = 1; k < n; k++) {
        ctx = ami_tag_context(&cnt);
        ctx.max_allocs = (uint64_t)k;
        st = job->run(job->arg, &ctx);
        job->clear(job->arg);
        if (st != AM_E_NOMEM) {
            if (!wrong) am_test_fail(__FILE__, __LINE__, "%s: limit %ld gave %s", job->name, k, am_status_name(st));
            wrong++;
        }
        if (cnt.live != 0 || cnt.foreign != 0) {
            if (!leaked)
                am_test_fail(__FILE__, __LINE__, "%s: limit %ld left %ld blocks (%ld foreign frees)", job->name, k,
                             cnt.live, cnt.foreign);
            leaked++;
        }
    }
    AM_CHECK_MSG(wrong == 0 && leaked == 0, "%s: %zu limits not AM_E_NOMEM, %zu leaked, of %ld", job->name, wrong,
                 leaked, n - 1);
    ctx = ami_tag_context(&cnt);
    ctx.max_allocs = (uint64_t)n;
    AM_CHECK_MSG(job->run(job->arg, &ctx) >= 0, "%s: the limit of an unlimited run's %ld allocations failed",
                 job->name, n);
    job->clear(job->arg);
    AM_CHECK(cnt.live == 0);
}

static void decompose_with_threads_fails_cleanly_at_every_allocation(void)
{
    ami_dec_arg a;
    if (!ami_dec_setup(&a)) return;
    ami_job job = {"decompose", ami_dec_job, ami_dec_clear, &a};
    ami_sweep(&job); /* the default rig: auto, the channel choice's allocations */
    /* free: every bone with translation channels, the motion's loc */
    a.rig_mode = AM_RIG_FREE;
    am_context zero = {0};
    AM_CHECK(ami_dec_job(&a, &zero) == AM_OK && a.out && a.out->translating_count == 2 && a.out->motion->loc);
    ami_dec_clear(&a);
    job.name = "decompose --rig free";
    ami_sweep(&job);
    am_tracks_free(a.tracks);
}

static void capture_ik_gltf_fail_cleanly_at_every_allocation(void)
{
    ami_cap_arg a;
    if (ami_cap_setup(&a)) {
        /* the solve plants the feet, so the sweep reaches the foot lock's pins too */
        am_context zero = {0};
        AM_CHECK(ami_solve_job(&a, &zero) == AM_OK && a.res && a.res->plant_count > 0 && a.res->contact_count == 2);
        ami_solve_clear(&a);
        ami_job jobs[3] = {{"capture solve", ami_solve_job, ami_solve_clear, &a},
                           {"ik", ami_ik_job, ami_ik_clear, &a},
                           {"glTF writer", ami_glb_job, ami_glb_clear, &a}};
        for (int i = 0; i < 3; i++) ami_sweep(&jobs[i]);
    }
    ami_cap_teardown(&a);
}

/* The model the reader and bake sweeps read: the biped's GLB with its exam clip. */
static bool ami_more_setup(ami_more_arg *m, ami_cap_arg *c)
{
    memset(m, 0, sizeof *m);
    m->cap = c;
    am_context zero = {0};
    AM_CHECK(ami_glb_job(c, &zero) == AM_OK);
    AM_CHECK(ami_read_job(m, &zero) == AM_OK && m->doc && m->doc->animation_count == 1);
    return m->doc != NULL;
}

static void ami_more_teardown(ami_more_arg *m)
{
    ami_more_clear(m);
    ami_read_clear(m);
    if (m->cap) ami_glb_clear(m->cap);
}

static void exam_synth_gltf_read_bake_fail_cleanly_at_every_allocation(void)
{
    ami_cap_arg c;
    ami_more_arg m = {0};
    if (ami_cap_setup(&c) && ami_more_setup(&m, &c)) {
        ami_job jobs[3] = {{"exam", ami_exam_job, ami_more_clear, &m},
                           {"synth", ami_synth_job, ami_more_clear, &m},
                           {"bake", ami_bake_job, ami_more_clear, &m}};
        for (int i = 0; i < 3; i++) ami_sweep(&jobs[i]);
        /* the reader last: its sweep frees the document the bake reads */
        ami_job read = {"glTF reader", ami_read_job, ami_read_clear, &m};
        ami_read_clear(&m);
        ami_sweep(&read);
    }
    ami_more_teardown(&m);
    ami_cap_teardown(&c);
}

/* max_bytes: the peak a call reached is enough, one byte less is not. */
static void max_bytes_is_the_peak_of_live_bytes(void)
{
    ami_dec_arg d;
    ami_cap_arg c;
    if (!ami_dec_setup(&d)) return;
    if (!ami_cap_setup(&c)) goto done;
    ami_job jobs[3] = {{"decompose", ami_dec_job, ami_dec_clear, &d},
                       {"capture solve", ami_solve_job, ami_solve_clear, &c},
                       {"glTF writer", ami_glb_job, ami_glb_clear, &c}};
    for (int i = 0; i < 3; i++) {
        /* a job with a zero context counts into the enclosing scope: measure its peak there */
        am_context measure = {0}, zero = {0};
        am_scope sc;
        am_scope_enter(&sc, &measure);
        am_status st = jobs[i].run(jobs[i].arg, &zero);
        uint64_t peak = am_scope_peak_bytes(&sc);
        am_scope_leave(&sc, NULL);
        jobs[i].clear(jobs[i].arg);
        AM_CHECK_MSG(st >= 0 && peak > 1000, "%s: %s, peak %llu bytes", jobs[i].name, am_status_name(st),
                     (unsigned long long)peak);
        ami_counter cnt;
        am_context ctx = ami_tag_context(&cnt);
        ctx.max_bytes = peak;
        st = jobs[i].run(jobs[i].arg, &ctx);
        jobs[i].clear(jobs[i].arg);
        AM_CHECK_MSG(st >= 0, "%s: max_bytes = its own peak %llu failed: %s", jobs[i].name, (unsigned long long)peak,
                     am_status_name(st));
        ctx = ami_tag_context(&cnt);
        ctx.max_bytes = peak - 1;
        st = jobs[i].run(jobs[i].arg, &ctx);
        jobs[i].clear(jobs[i].arg);
        AM_CHECK_MSG(st == AM_E_NOMEM, "%s: max_bytes = peak - 1 gave %s", jobs[i].name, am_status_name(st));
        AM_CHECK(cnt.live == 0 && cnt.foreign == 0);
    }
done:
    ami_cap_teardown(&c);
    am_tracks_free(d.tracks);
}

/* Results outlive their call: freed later, outside any scope, with the allocator that made
 * them, whatever the current scope then is. */
static void results_are_freed_with_their_allocator(void)
{
    ami_dec_arg d;
    if (!ami_dec_setup(&d)) return;
    ami_counter mine, other;
    am_context ctx = ami_tag_context(&mine);
    AM_CHECK(ami_dec_job(&d, &ctx) == AM_OK);
    AM_CHECK(mine.live > 0);
    am_context octx = ami_tag_context(&other);
    am_scope sc;
    am_scope_enter(&sc, &octx); /* another call's scope is current while the result is freed */
    ami_dec_clear(&d);
    am_scope_leave(&sc, NULL);
    AM_CHECK_MSG(mine.live == 0 && mine.foreign == 0 && other.calls == 0 && other.foreign == 0,
                 "live %ld, foreign %ld / %ld, other allocator used %ld times", mine.live, mine.foreign,
                 other.foreign, other.calls);
    am_tracks_free(d.tracks);
}

/* ---- worker threads inside a caller's scope ---- */

typedef struct {
    am_scope *caller;
    int got;
} ami_worker;

static void *ami_worker_main(void *p)
{
    ami_worker *w = p;
    am_scope sc;
    am_scope_join(&sc, w->caller);
    void *blocks[4];
    for (int i = 0; i < 4; i++) w->got += (blocks[i] = am_alloc(100)) != NULL;
    ami_warn(AM_WARN_DEGRADED, "from a worker");
    for (int i = 0; i < 4; i++) am_free(blocks[i]);
    am_scope_leave(&sc, NULL);
    return NULL;
}

/* The k-th allocation limit counts the workers' allocations with the caller's; their frees
 * give bytes back to the call and their warnings reach the caller's result. */
static void worker_threads_share_the_callers_limits_and_warnings(void)
{
    ami_counter cnt;
    am_context ctx = ami_tag_context(&cnt);
    ctx.max_allocs = 5;
    am_scope sc;
    am_scope_enter(&sc, &ctx);
    ami_worker w[2] = {{&sc, 0}, {&sc, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) AM_CHECK(pthread_create(&th[i], NULL, ami_worker_main, &w[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    AM_CHECK_MSG(w[0].got + w[1].got == 5, "workers got %d blocks under a limit of 5", w[0].got + w[1].got);
    AM_CHECK(am_scope_alloc_count(&sc) == 8);
    AM_CHECK(am_alloc(1) == NULL); /* the limit is spent for the caller too */
    am_warning_list wl = {0};
    am_scope_leave(&sc, &wl);
    AM_CHECK_MSG(wl.count == 1 && wl.data && wl.data[0].count == 2 && wl.data[0].kind == AM_WARN_DEGRADED,
                 "%zu warnings", wl.count);
    am_warning_list_free(&wl);
    AM_CHECK(cnt.live == 0 && cnt.foreign == 0);

    /* bytes: a worker's free makes room for the caller's next allocation */
    ctx = ami_tag_context(&cnt);
    ctx.max_bytes = 500;
    am_scope_enter(&sc, &ctx);
    w[0] = (ami_worker){&sc, 0};
    AM_CHECK(pthread_create(&th[0], NULL, ami_worker_main, &w[0]) == 0);
    pthread_join(th[0], NULL);
    AM_CHECK(w[0].got == 4);
    void *big = am_alloc(450);
    AM_CHECK(big != NULL);
    AM_CHECK(am_alloc(100) == NULL);
    am_free(big);
    am_scope_leave(&sc, NULL);
    AM_CHECK(cnt.live == 0);
}

/* ---- warnings ---- */

/* A creature foot that is not a joint of the rig: the solve skips it and says so in its result. */
static void capture_returns_its_warnings(void)
{
    ami_cap_arg a;
    if (ami_cap_setup(&a) && a.cr->feet_count > 0) {
        char *saved = a.cr->feet[0];
        a.cr->feet[0] = "no_such_paw";
        am_capture_result *res = NULL;
        am_error err = {0};
        AM_CHECK_OK(am_capture_solve(a.exam->det, a.rig, a.cr, NULL, &res, &err), &err);
        a.cr->feet[0] = saved;
        bool found = false;
        for (size_t i = 0; res && i < res->warnings.count; i++)
            found = found || (res->warnings.data[i].kind == AM_WARN_IGNORED_NAME &&
                              strstr(res->warnings.data[i].text, "'no_such_paw'") && res->warnings.data[i].count == 1);
        AM_CHECK_MSG(found, "no warning names the unknown foot (%zu warnings)", res ? res->warnings.count : 0);
        am_capture_result_free(res);
    }
    ami_cap_teardown(&a);
}

/* Equal warnings merge with a count; a scope left without a list hands its warnings to the
 * enclosing one; a job's result keeps its own. */
static void warnings_merge_and_reach_the_enclosing_scope(void)
{
    am_scope outer, inner;
    am_scope_enter(&outer, NULL);
    ami_warn(AM_WARN_CLAMPED, "value %d", 1);
    am_scope_enter(&inner, NULL);
    ami_warn(AM_WARN_CLAMPED, "value %d", 1);
    ami_warn(AM_WARN_UNITS, "body size %.0f m", 183.0);
    am_scope_leave(&inner, NULL);
    am_warning_list wl = {0};
    am_scope_leave(&outer, &wl);
    AM_CHECK_MSG(wl.count == 2, "%zu warnings", wl.count);
    if (wl.count == 2) {
        AM_CHECK(wl.data[0].kind == AM_WARN_CLAMPED && wl.data[0].count == 2 && strcmp(wl.data[0].text, "value 1") == 0);
        AM_CHECK(wl.data[1].kind == AM_WARN_UNITS && strcmp(wl.data[1].text, "body size 183 m") == 0);
    }
    am_warning_list_free(&wl);
    AM_CHECK(wl.data == NULL && wl.count == 0);
    AM_CHECK(am_scope_current() == NULL);
    ami_warn(AM_WARN_CLAMPED, "no scope: dropped, no crash");
    AM_CHECK(strcmp(am_warning_kind_name(AM_WARN_UNITS), "UNITS") == 0);
}

/* ---- progress and cancellation ---- */

typedef struct {
    int events, stop_after, bad;
    char last_stage[64];
    double last_fraction;
    bool saw_solve;
} ami_progress_log;

static bool ami_on_progress(void *user, const am_progress *p)
{
    ami_progress_log *l = user;
    l->events++;
    bool same = strcmp(p->stage, l->last_stage) == 0;
    if (!(p->fraction >= 0.0 && p->fraction <= 1.0) || (same && p->fraction < l->last_fraction) ||
        (p->fraction >= 1.0 && !(p->seconds >= 0.0)))
        l->bad++;
    snprintf(l->last_stage, sizeof l->last_stage, "%s", p->stage);
    l->last_fraction = p->fraction >= 1.0 ? -1.0 : p->fraction;
    l->saw_solve = l->saw_solve || strcmp(p->stage, "rig: fit bones") == 0;
    return l->stop_after == 0 || l->events < l->stop_after;
}

/* Stopping at each progress event in turn: AM_E_CANCELLED and nothing left allocated, until
 * the job has fewer events than that and completes. */
static void ami_cancel_sweep(const ami_job *job)
{
    ami_counter cnt;
    ami_progress_log log = {0};
    am_context ctx = ami_tag_context(&cnt);
    ctx.progress = ami_on_progress;
    ctx.progress_user = &log;
    AM_CHECK(job->run(job->arg, &ctx) >= 0);
    job->clear(job->arg);
    int total = log.events;
    AM_CHECK_MSG(total >= 3 && log.bad == 0, "%s: %d progress events, %d out of order", job->name, total, log.bad);
    size_t wrong = 0;
    for (int stop = 1; stop < total; stop++) {
        ctx = ami_tag_context(&cnt);
        log = (ami_progress_log){.stop_after = stop};
        ctx.progress = ami_on_progress;
        ctx.progress_user = &log;
        am_status st = job->run(job->arg, &ctx);
        job->clear(job->arg);
        /* the last events end stages (their return value cannot stop anything any more) */
        if ((st != AM_E_CANCELLED && st != AM_OK) || cnt.live != 0 || cnt.foreign != 0) {
            if (!wrong)
                am_test_fail(__FILE__, __LINE__, "%s: stopping at event %d gave %s, %ld blocks left", job->name,
                             stop, am_status_name(st), cnt.live);
            wrong++;
        }
        if (stop == 1) AM_CHECK_MSG(st == AM_E_CANCELLED, "%s: stopping at the first event did not cancel", job->name);
    }
    AM_CHECK(wrong == 0);
}

static void jobs_report_progress_and_can_be_cancelled(void)
{
    ami_dec_arg d;
    ami_cap_arg c;
    if (!ami_dec_setup(&d)) return;
    if (ami_cap_setup(&c)) {
        ami_job jobs[4] = {{"decompose", ami_dec_job, ami_dec_clear, &d},
                           {"capture solve", ami_solve_job, ami_solve_clear, &c},
                           {"ik", ami_ik_job, ami_ik_clear, &c},
                           {"glTF writer", ami_glb_job, ami_glb_clear, &c}};
        for (int i = 0; i < 4; i++) ami_cancel_sweep(&jobs[i]);
        ami_more_arg m = {0};
        if (ami_more_setup(&m, &c)) {
            ami_job more[3] = {{"synth", ami_synth_job, ami_more_clear, &m},
                               {"bake", ami_bake_job, ami_more_clear, &m},
                               {"exam", ami_exam_job, ami_more_clear, &m}};
            for (int i = 0; i < 3; i++) ami_cancel_sweep(&more[i]);
        }
        ami_more_teardown(&m);
        /* the decomposition names its stages */
        ami_counter cnt;
        ami_progress_log log = {0};
        am_context ctx = ami_tag_context(&cnt);
        ctx.progress = ami_on_progress;
        ctx.progress_user = &log;
        AM_CHECK(ami_dec_job(&d, &ctx) == AM_OK);
        ami_dec_clear(&d);
        AM_CHECK(log.saw_solve);
        /* a cancelled call names what stopped */
        log = (ami_progress_log){.stop_after = 1};
        am_decompose_opts o = {.bones = 3, .iterations = 3, .ctx = ctx};
        am_error err = {0};
        AM_CHECK_STATUS(am_decompose_run(d.tracks, &o, &d.out, &err), AM_E_CANCELLED);
        AM_CHECK(d.out == NULL && strstr(err.info, "stopped") != NULL);
        AM_CHECK(am_status_fault(AM_E_CANCELLED) == AM_FAULT_INPUT);
    }
    ami_cap_teardown(&c);
    am_tracks_free(d.tracks);
}

/* ---- multiview: the N-view exam, triangulation with refinement, the importers' and the
 * calibration readers' contexts ---- */
typedef struct {
    ami_cap_arg *cap;
    am_mexam *base;       /* the reading the triangulation sweeps triangulate */
    am_mexam *exam;
    am_triangulation *tri;
    am_adjustment *adj;
    am_mdet *det;
    am_calib *cal;
    char *toml;           /* base's cameras as calibration.toml text */
} ami_mv_arg;

static am_status ami_mexam_job(void *p, const am_context *ctx)
{
    ami_mv_arg *a = p;
    am_mexam_opts o = {.motion = {.seed = 5, .frames = 10}, .cameras = 3, .noise_px = 1, .outliers = 0.05,
                       .dropout = 0.05, .occlusion = true, .max_offset = 1, .ctx = *ctx};
    return am_mexam_generate(a->cap->rig, a->cap->cr, NULL, &o, &a->exam, NULL);
}

static am_status ami_tri_job(void *p, const am_context *ctx)
{
    ami_mv_arg *a = p;
    am_triangulate_opts o = {.flags = AM_TRI_REFINE, .refine_iterations = 3, .ctx = *ctx};
    return am_triangulate(a->base->det, a->base->cameras, &o, &a->tri, NULL);
}

static am_status ami_adjust_job(void *p, const am_context *ctx)
{
    ami_mv_arg *a = p;
    am_adjust_opts o = {.rounds = 3, .alternations = 2, .ctx = *ctx};
    return am_cameras_adjust(a->base->det, a->base->cameras, &o, &a->adj, NULL);
}

static am_status ami_import_job(void *p, const am_context *ctx)
{
    ami_mv_arg *a = p;
    static const char csv[] = "scorer,s,s,s,s,s,s\nbodyparts,nose,nose,nose,tail,tail,tail\n"
                              "coords,x,y,likelihood,x,y,likelihood\n0,1,2,0.9,3,4,0.8\n1,1.5,2.5,0.9,,,\n";
    am_import_opts o = {.fps = 30, .ctx = *ctx};
    return am_import_2d_mem(csv, sizeof csv - 1, "cam0.csv", AM_TRACK_DLC_CSV, &o, &a->det, NULL);
}

static am_status ami_calib_job(void *p, const am_context *ctx)
{
    ami_mv_arg *a = p;
    am_calib_read_opts o = {.ctx = *ctx};
    return am_calib_parse(a->toml, strlen(a->toml), "calibration.toml", &o, &a->cal, NULL);
}

static void ami_mv_clear(void *p)
{
    ami_mv_arg *a = p;
    am_mexam_free(a->exam);
    am_triangulation_free(a->tri);
    am_adjustment_free(a->adj);
    am_mdet_free(a->det);
    am_calib_free(a->cal);
    a->exam = NULL;
    a->tri = NULL;
    a->adj = NULL;
    a->det = NULL;
    a->cal = NULL;
}

static bool ami_mv_setup(ami_mv_arg *m, ami_cap_arg *c)
{
    memset(m, 0, sizeof *m);
    m->cap = c;
    am_context zero = {0};
    AM_CHECK(ami_mexam_job(m, &zero) == AM_OK && m->exam);
    m->base = m->exam;
    m->exam = NULL;
    am_buf b = {0};
    am_error err = {0};
    if (m->base) {
        AM_CHECK_OK(am_calib_to_toml(m->base->cameras, &b, &err), &err);
        m->toml = am_strndup(b.data, b.len);
    }
    am_buf_free(&b);
    return m->base && m->toml;
}

static void ami_mv_teardown(ami_mv_arg *m)
{
    ami_mv_clear(m);
    am_mexam_free(m->base);
    am_free(m->toml);
}

static void multiview_jobs_fail_cleanly_at_every_allocation_and_cancel(void)
{
    ami_cap_arg c;
    ami_mv_arg m = {0};
    if (ami_cap_setup(&c) && ami_mv_setup(&m, &c)) {
        ami_job jobs[5] = {{"N-view exam", ami_mexam_job, ami_mv_clear, &m},
                           {"triangulate", ami_tri_job, ami_mv_clear, &m},
                           {"adjust cameras", ami_adjust_job, ami_mv_clear, &m},
                           {"import", ami_import_job, ami_mv_clear, &m},
                           {"calibration reader", ami_calib_job, ami_mv_clear, &m}};
        for (int i = 0; i < 5; i++) ami_sweep(&jobs[i]);
        for (int i = 0; i < 3; i++) ami_cancel_sweep(&jobs[i]);
        /* the exam's results carry the call's warnings, none for a clean reading */
        am_context zero = {0};
        AM_CHECK(ami_mexam_job(&m, &zero) == AM_OK && m.exam && m.exam->warnings.count == 0 &&
                 m.exam->exam->warnings.count == 0);
        ami_mv_clear(&m);
    }
    ami_mv_teardown(&m);
    ami_cap_teardown(&c);
}

#define AM_TESTS(X)                                       \
    X(decompose_with_threads_fails_cleanly_at_every_allocation)        \
    X(capture_ik_gltf_fail_cleanly_at_every_allocation)   \
    X(exam_synth_gltf_read_bake_fail_cleanly_at_every_allocation) \
    X(max_bytes_is_the_peak_of_live_bytes)                \
    X(results_are_freed_with_their_allocator)             \
    X(worker_threads_share_the_callers_limits_and_warnings)      \
    X(capture_returns_its_warnings)                       \
    X(warnings_merge_and_reach_the_enclosing_scope)       \
    X(jobs_report_progress_and_can_be_cancelled)          \
    X(multiview_jobs_fail_cleanly_at_every_allocation_and_cancel)
AM_TEST_MAIN(AM_TESTS)
