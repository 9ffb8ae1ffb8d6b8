/* Per-call contexts: scopes on the calling thread, allocations that remember their allocator,
 * limits counted per call, warnings and progress. See core.h. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "core/internal.h"

/* The calling thread's innermost scope: set by am_scope_enter for the duration of a call,
 * so no call can see another thread's (or another call's) allocator, limits or warnings. */
static _Thread_local am_scope *ami_top;

/* Each block starts with this header, so am_free needs no context and a block allocated
 * with one allocator is always freed with it. 48 bytes keeps the payload 16-byte aligned. */
typedef struct ami_block {
    size_t size;
    void *(*realloc_fn)(void *user, void *ptr, size_t size);
    void (*free_fn)(void *user, void *ptr);
    void *user;
    am_scope *counters; /* the scope whose live bytes count this block */
    uint64_t counters_id;
} ami_block;
_Static_assert(sizeof(ami_block) % 16 == 0, "block header keeps 16-byte alignment");

static void *ami_malloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}
static void *ami_realloc_c(void *user, void *ptr, size_t size)
{
    (void)user;
    return realloc(ptr, size);
}
static void ami_free_c(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

static bool ami_allocator_set(const am_allocator *a)
{
    return a->alloc && a->realloc && a->free;
}

static bool ami_context_is_zero(const am_context *c)
{
    return !c || (!c->allocator.alloc && !c->allocator.realloc && !c->allocator.free &&
                  !c->max_bytes && !c->max_allocs && !c->progress);
}

uint64_t ami_unique_id(void)
{
    /* The library's one process-wide counter: ids only tell a live scope from a dead one that
     * had the same stack address, and keep temporary file names of concurrent calls apart;
     * they never change what a call computes. */
    static uint64_t next = 1;
    return __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
}

void am_scope_enter(am_scope *scope, const am_context *ctx)
{
    memset(scope, 0, sizeof *scope);
    scope->outer = ami_top;
    scope->id = ami_unique_id();
    scope->collector = scope;
    if (ami_context_is_zero(ctx) && ami_top) {
        scope->ctx = ami_top->ctx;
        scope->counters = ami_top->counters;
    } else {
        if (ctx) scope->ctx = *ctx;
        if (!ami_allocator_set(&scope->ctx.allocator))
            scope->ctx.allocator = (am_allocator){ami_malloc, ami_realloc_c, ami_free_c, NULL};
        scope->counters = scope;
    }
    ami_top = scope;
}

void am_scope_join(am_scope *worker, am_scope *scope)
{
    memset(worker, 0, sizeof *worker);
    worker->outer = ami_top;
    worker->id = ami_unique_id();
    worker->ctx = scope->ctx;
    worker->counters = scope->counters;
    worker->collector = scope->collector;
    ami_top = worker;
}

/* Merge a list into a collector's warnings (under its lock: workers may warn meanwhile). */
static void ami_collect(am_scope *c, const am_warning_list *src);

void am_scope_leave(am_scope *scope, am_warning_list *warnings)
{
    if (scope->collector != scope) { /* a worker's joined scope: its warnings went to the caller */
        if (ami_top == scope) ami_top = scope->outer;
        return;
    }
    /* A result's list is filled while the call's scope is still current, so it is allocated
     * with the call's allocator like the rest of the result. */
    if (warnings && am_warning_list_append(warnings, &scope->warnings) != AM_OK) {
        /* Out of memory while handing over warnings: they are dropped, the result stands. */
    }
    if (ami_top == scope) ami_top = scope->outer;
    if (!warnings && scope->outer) ami_collect(scope->outer->collector, &scope->warnings);
    am_warning_list_free(&scope->warnings);
}

am_scope *am_scope_current(void) { return ami_top; }

uint64_t am_scope_peak_bytes(const am_scope *scope)
{
    return __atomic_load_n(&scope->counters->peak_bytes, __ATOMIC_RELAXED);
}

uint64_t am_scope_alloc_count(const am_scope *scope)
{
    return __atomic_load_n(&scope->counters->allocs, __ATOMIC_RELAXED);
}

/* ---- allocation ---- */

static const am_allocator ami_default_allocator = {ami_malloc, ami_realloc_c, ami_free_c, NULL};

/* Count one allocation of size bytes against the current limits; false if over. */
static bool ami_charge(am_scope *c, size_t size)
{
    if (!c) return true;
    uint64_t n = __atomic_add_fetch(&c->allocs, 1, __ATOMIC_RELAXED);
    if (c->ctx.max_allocs && n > c->ctx.max_allocs) return false;
    uint64_t live = __atomic_add_fetch(&c->live_bytes, size, __ATOMIC_RELAXED);
    if (c->ctx.max_bytes && live > c->ctx.max_bytes) {
        __atomic_sub_fetch(&c->live_bytes, size, __ATOMIC_RELAXED);
        return false;
    }
    uint64_t peak = __atomic_load_n(&c->peak_bytes, __ATOMIC_RELAXED);
    while (live > peak &&
           !__atomic_compare_exchange_n(&c->peak_bytes, &peak, live, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return true;
}

bool ami_foreign_charge(ami_foreign *charge, uint64_t bytes)
{
    assert(charge);
    *charge = (ami_foreign){0};
    am_scope *c = ami_top ? ami_top->counters : NULL;
    if (!c) return true;
    if (bytes > SIZE_MAX || !ami_charge(c, (size_t)bytes)) return false;
    *charge = (ami_foreign){c, c->id, bytes};
    return true;
}

void ami_foreign_refund(ami_foreign *charge)
{
    assert(charge);
    am_scope *cur = ami_top;
    /* only while the scope that was charged is still the current call's (its counters live) */
    if (charge->counters && cur && cur->counters == charge->counters && cur->counters->id == charge->counters_id) {
        uint64_t live = __atomic_load_n(&charge->counters->live_bytes, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&charge->counters->live_bytes, charge->bytes < live ? charge->bytes : live, __ATOMIC_RELAXED);
    }
    *charge = (ami_foreign){0};
}

/* Give size bytes back to the scope that counted them, if it is the current call's. */
static void ami_refund(const ami_block *b, size_t size)
{
    am_scope *cur = ami_top;
    if (!cur || !b->counters || cur->counters != b->counters || cur->counters->id != b->counters_id)
        return;
    uint64_t live = __atomic_load_n(&b->counters->live_bytes, __ATOMIC_RELAXED);
    uint64_t take = size < live ? size : live;
    __atomic_sub_fetch(&b->counters->live_bytes, take, __ATOMIC_RELAXED);
}

/* charge: count the block against the scope's limits. Warning lists are not: they are small
 * (at most AMI_WARNINGS_MAX entries), and a limit must not silently cost a call its warnings. */
static void *ami_alloc_block(size_t size, bool zero, bool charge)
{
    if (size > SIZE_MAX - sizeof(ami_block)) return NULL;
    am_scope *c = ami_top && charge ? ami_top->counters : NULL;
    const am_allocator *a = ami_top ? &ami_top->ctx.allocator : &ami_default_allocator;
    if (!ami_charge(c, size)) return NULL;
    ami_block *b = a->alloc(a->user, sizeof(ami_block) + size);
    if (!b) {
        if (c) __atomic_sub_fetch(&c->live_bytes, size, __ATOMIC_RELAXED);
        return NULL;
    }
    *b = (ami_block){size, a->realloc, a->free, a->user, c, c ? c->id : 0};
    if (zero) memset(b + 1, 0, size);
    return b + 1;
}

void *am_alloc(size_t size) { return ami_alloc_block(size, true, true); }

void *am_alloc_array(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return am_alloc(n * size);
}

void *am_realloc(void *ptr, size_t size)
{
    if (!ptr) return ami_alloc_block(size, false, true); /* all of it is "new tail": not zeroed */
    if (size > SIZE_MAX - sizeof(ami_block)) return NULL;
    ami_block *b = (ami_block *)ptr - 1;
    size_t old = b->size;
    am_scope *c = ami_top ? ami_top->counters : NULL;
    bool same = c && b->counters == c && c->id == b->counters_id;
    /* A block of this call is charged its growth; a block from elsewhere becomes this call's
     * and is charged whole, so a later free refunds exactly what was charged. */
    size_t charge = same ? (size > old ? size - old : 0) : size;
    if (c && !ami_charge(c, charge)) return NULL;
    ami_block saved = *b;
    ami_block *nb = saved.realloc_fn(saved.user, b, sizeof(ami_block) + size);
    if (!nb) {
        if (c) __atomic_sub_fetch(&c->live_bytes, charge, __ATOMIC_RELAXED);
        return NULL;
    }
    if (same && size < old) ami_refund(nb, old - size);
    nb->size = size;
    if (!same) {
        nb->counters = c;
        nb->counters_id = c ? c->id : 0;
    }
    return nb + 1;
}

void *am_realloc_array(void *ptr, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return am_realloc(ptr, n * size);
}

void am_free(void *ptr)
{
    if (!ptr) return;
    ami_block *b = (ami_block *)ptr - 1;
    ami_refund(b, b->size);
    b->free_fn(b->user, b);
}

char *am_strndup(const char *s, size_t n)
{
    if (!s) return NULL;
    size_t len = strnlen(s, n);
    char *d = am_alloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *am_strdup(const char *s) { return s ? am_strndup(s, strlen(s)) : NULL; }

void ami_strings_free(char **s, size_t n)
{
    if (!s) return;
    for (size_t i = 0; i < n; i++) am_free(s[i]);
    am_free(s);
}

/* ---- warnings ---- */

static const char *const ami_warning_messages[] = {
#define X(name, msg) msg,
#include "anymove/warnings.def"
#undef X
};
static const char *const ami_warning_names[] = {
#define X(name, msg) #name,
#include "anymove/warnings.def"
#undef X
};

const char *am_warning_kind_message(am_warning_kind kind)
{
    return (unsigned)kind < AM_WARN_COUNT ? ami_warning_messages[kind] : "unknown warning";
}

const char *am_warning_kind_name(am_warning_kind kind)
{
    return (unsigned)kind < AM_WARN_COUNT ? ami_warning_names[kind] : "UNKNOWN";
}

#define AMI_WARNINGS_MAX 64

/* A warning list's array, with the current allocator but outside the limits (see
 * ami_alloc_block); its blocks are never charged, so they are never refunded either. */
static am_warning *ami_warnings_grow(am_warning *data, size_t count)
{
    size_t size = count * sizeof *data;
    if (!data) return ami_alloc_block(size, false, false);
    ami_block *b = (ami_block *)(void *)data - 1;
    if (b->counters) return am_realloc(data, size); /* a list some caller built with am_alloc */
    ami_block *nb = b->realloc_fn(b->user, b, sizeof(ami_block) + size);
    if (!nb) return NULL;
    nb->size = size;
    return (am_warning *)(void *)(nb + 1);
}

/* Merge one warning into a list; false only on allocation failure. */
static bool ami_warning_add(am_warning_list *l, am_warning_kind kind, const char *text, size_t count)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->data[i].kind == kind && strcmp(l->data[i].text, text) == 0) {
            l->data[i].count += count;
            return true;
        }
    if (l->count >= AMI_WARNINGS_MAX) {
        l->data[l->count - 1].count += count;
        return true;
    }
    am_warning *d = ami_warnings_grow(l->data, l->count + 1);
    if (!d) return false;
    l->data = d;
    am_warning *w = &d[l->count++];
    memset(w, 0, sizeof *w);
    w->kind = kind;
    snprintf(w->text, sizeof w->text, "%s", text);
    w->count = count;
    return true;
}

am_status am_warning_list_append(am_warning_list *dst, const am_warning_list *src)
{
    for (size_t i = 0; src && i < src->count; i++)
        if (!ami_warning_add(dst, src->data[i].kind, src->data[i].text, src->data[i].count))
            return AM_E_NOMEM;
    return AM_OK;
}

void am_warning_list_free(am_warning_list *list)
{
    if (!list) return;
    am_free(list->data);
    list->data = NULL;
    list->count = 0;
}

static void ami_lock(am_scope *c)
{
    while (__atomic_test_and_set(&c->spin, __ATOMIC_ACQUIRE)) {
    }
}
static void ami_unlock(am_scope *c) { __atomic_clear(&c->spin, __ATOMIC_RELEASE); }

void ami_warn(am_warning_kind kind, const char *fmt, ...)
{
    am_scope *c = ami_top ? ami_top->collector : NULL;
    if (!c) return;
    char text[sizeof ((am_warning *)0)->text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ami_lock(c);
    /* A warning that cannot be stored is lost; the call itself goes on. */
    (void)ami_warning_add(&c->warnings, kind, text, 1);
    ami_unlock(c);
}

static void ami_collect(am_scope *c, const am_warning_list *src)
{
    ami_lock(c);
    if (am_warning_list_append(&c->warnings, src) != AM_OK) {
        /* as in ami_warn: what cannot be stored is lost, the call goes on */
    }
    ami_unlock(c);
}

void ami_warn_list(const am_warning_list *list)
{
    if (ami_top && list && list->count) ami_collect(ami_top->collector, list);
}

/* ---- progress ---- */

static bool ami_report(const char *stage, double fraction, double seconds)
{
    am_scope *s = ami_top;
    if (!s) return true;
    am_scope *c = s->counters;
    if (__atomic_load_n(&c->cancelled, __ATOMIC_RELAXED)) return false;
    /* Only the thread that entered the call reports: callbacks never run on our workers. */
    if (!s->ctx.progress || s->collector != s) return true;
    am_progress p = {stage, fraction, seconds};
    if (!s->ctx.progress(s->ctx.progress_user, &p)) {
        __atomic_store_n(&c->cancelled, 1, __ATOMIC_RELAXED);
        return false;
    }
    return true;
}

bool ami_progress(const char *stage, double fraction) { return ami_report(stage, fraction, 0.0); }

bool ami_cancelled(void)
{
    return ami_top && __atomic_load_n(&ami_top->counters->cancelled, __ATOMIC_RELAXED);
}

ami_stage ami_stage_begin(const char *name)
{
    ami_stage st = {name, am_now()};
    (void)ami_report(name, 0.0, 0.0);
    return st;
}

double ami_stage_end(const ami_stage *stage)
{
    double dt = am_now() - stage->t0;
    (void)ami_report(stage->name, 1.0, dt);
    return dt;
}

double am_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
