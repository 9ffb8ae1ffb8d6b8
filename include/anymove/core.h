/* anymove core: status codes, errors, per-call contexts (allocator, limits, progress),
 * warnings, allocation, files.
 *
 * Conventions: every fallible call returns am_status (AM_OK = 0, failures negative,
 * informational values positive) and takes an optional `am_error *err` last. On failure
 * the error records the input location (file, 1-based line/col for text, byte offset for
 * binary formats), the library source line and a detail message.
 *
 * NULL (meshoptimizer's rule): a NULL where a pointer is required (an output, a required
 * input, a required array of a struct the caller built) is a programmer error and fails an
 * assert; it never becomes a status. Statuses are for bad data: files, and values a user may
 * have typed (counts, fps, option ranges). Pointers documented as optional (opts, masks, err)
 * may be NULL; free functions and lookups (am_*_free, am_*_find*) accept NULL.
 *
 *     am_error err = {0};
 *     am_rig *rig = NULL;
 *     if (am_rig_load("rig.json", &rig, &err) != AM_OK) {
 *         char msg[512];
 *         am_error_format(msg, sizeof msg, &err);
 *         fprintf(stderr, "%s\n", msg);
 *     }
 *     am_rig_free(rig);
 *
 * Pairs: am_alloc/am_free, am_scope_enter/am_scope_leave, am_warning_list_free for every
 * warning list a result hands over.
 *
 * Re-entrancy: the library keeps no state between calls and shares none between concurrent
 * calls. Every job runs in a scope made from its opts' am_context (below): the allocator,
 * limits, progress callback and warnings of that one call. Any number of calls may run at once
 * on different threads; one object may be read by several calls at once, but written by one.
 */
#ifndef ANYMOVE_CORE_H
#define ANYMOVE_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AM_VERSION_STRING "0.1.0"

#if defined(__GNUC__) || defined(__clang__)
#define AM_NODISCARD __attribute__((warn_unused_result))
#define AM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define AM_NODISCARD
#define AM_PRINTF(f, a)
#endif

/* Element types of arrays (npy/npz, io.h) and of typed views (am_reals). */
typedef enum am_dtype {
    AM_DTYPE_F32,
    AM_DTYPE_F64,
    AM_DTYPE_I32,
    AM_DTYPE_I64,
    AM_DTYPE_U8,
    AM_DTYPE_BOOL,
    AM_DTYPE_STR, /* numpy unicode '<U<n>': decoded into `strings` */
    AM_DTYPE_COUNT
} am_dtype;

/* A read-only view of a caller's contiguous reals, float32 or float64, so a job reads either
 * in place (no copy, no conversion of the array; a numpy array's memory as it is). The
 * element count and layout are those the field holding the view documents. A view is a
 * programmer's construction: data NULL or a dtype other than F32/F64 fails an assert where
 * a job takes it (am_reals_valid); the values are data, checked by the job's validate. */
typedef struct am_reals {
    const void *data; /* NULL = absent (where the field says it may be) */
    am_dtype dtype;   /* AM_DTYPE_F32 or AM_DTYPE_F64 */
} am_reals;

static inline bool am_reals_valid(am_reals v)
{
    return v.data && (v.dtype == AM_DTYPE_F32 || v.dtype == AM_DTYPE_F64);
}

/* Element i of the view, as a double (exact for both types). */
static inline double am_reals_at(am_reals v, size_t i)
{
    return v.dtype == AM_DTYPE_F32 ? (double)((const float *)v.data)[i] : ((const double *)v.data)[i];
}

/* Generated from the one table, errors.def, with its messages and faults. The tables expand
 * through a macro X, saved and restored around them so that a caller's own X survives. */
#pragma push_macro("X")
#undef X
typedef enum am_status {
#define X(name, value, fault, msg) AM_##name = value,
#include "errors.def"
#undef X
} am_status;
enum {
    AM_STATUS_COUNT = 0 /* one per row */
#define X(name, value, fault, msg) +1
#include "errors.def"
#undef X
};

typedef struct am_error {
    am_status code;
    const char *what;       /* static message from the table */
    char file[256];         /* input file, "" if none */
    uint32_t line, col;     /* 1-based input location; 0 = n/a */
    uint64_t offset;        /* byte offset for binary formats; UINT64_MAX = n/a */
    uint32_t src_line;      /* library source line that raised it */
    const char *src_file;   /* library source file that raised it */
    char info[256];         /* detail, e.g. "bone 'neck': unknown joint 'hed'" */
} am_error;

/* Static message for a status ("success" for AM_OK, "unknown status" otherwise). */
const char *am_status_message(am_status code);
/* Name of a status ("E_SYNTAX"), for tests and logs. */
const char *am_status_name(am_status code);

/* Whose fault a failure is: the caller's data or usage (a bad file, a wrong argument, an
 * unwritable output location), or the library and the machine (memory, an internal error).
 * The CLI turns these into exit codes 2 and 1; bindings into exception classes. */
typedef enum am_fault {
    AM_FAULT_NONE,   /* AM_OK and the informational statuses */
    AM_FAULT_INPUT,  /* the input, the usage or the output location is at fault */
    AM_FAULT_SYSTEM, /* out of memory, an internal error */
    AM_FAULT_COUNT
} am_fault;
am_fault am_status_fault(am_status code);

/* Fill *err (if not NULL) and return code. file may be NULL. offset: UINT64_MAX if n/a. */
am_status am_error_set(am_error *err, am_status code, const char *file, uint32_t line,
                       uint32_t col, uint64_t offset, const char *src_file, uint32_t src_line,
                       const char *fmt, ...) AM_PRINTF(9, 10);
/* Set the input file of an error that has none yet (loaders parse buffers, then add the name). */
void am_error_set_file(am_error *err, const char *file);
/* "file:line:col: error: what (info)" ("file:line: ..." when the column is n/a) or
 * "file: byte N: error: what (info)". Returns buf. */
char *am_error_format(char *buf, size_t size, const am_error *err);

/* ---- per-call context: allocator, limits, progress (ufbx's allocator opts) -------------
 * Every job's options end with an `am_context ctx`; all-zero means the enclosing scope's
 * context when the job is called inside one (see scopes below), else malloc, no limits and no
 * progress. Everything a call allocates (temporaries and results) goes through its context's
 * allocator; each block remembers its allocator, so am_<x>_free() needs no context. A context
 * is plain configuration: the counters of a call live in the call's scope (below). */
typedef struct am_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} am_allocator;

/* One progress event. stage is a short static name ("decompose", "fit"); fraction in [0, 1]
 * (1 = the stage is done, and seconds is its duration), or -1 when unknown. */
typedef struct am_progress {
    const char *stage;
    double fraction;
    double seconds;
} am_progress;
/* Return false to cancel: the call stops at its next check and returns AM_E_CANCELLED (with
 * everything it allocated freed). Runs on the thread that called the job, never on its worker
 * threads; a context shared by calls on several threads gets calls from each of them. */
typedef bool (*am_progress_fn)(void *user, const am_progress *p);

typedef struct am_context {
    am_allocator allocator;  /* all NULL = the C library's malloc/realloc/free; override all
                                three or none */
    uint64_t max_bytes;      /* live bytes the call may hold at once; 0 = no limit. Going over
                                fails the allocation (AM_E_NOMEM) */
    uint64_t max_allocs;     /* allocation number max_allocs + 1 fails; 0 = no limit (fault
                                injection for tests). Warning lists (at most 64 entries) use
                                the allocator but count against neither limit */
    am_progress_fn progress; /* NULL = no progress */
    void *progress_user;
} am_context;

/* ---- warnings: non-fatal oddities returned in results, never printed (ufbx_warning) ---- */
typedef enum am_warning_kind {
#define X(name, msg) AM_WARN_##name,
#include "warnings.def"
#undef X
    AM_WARN_COUNT
} am_warning_kind;
#pragma pop_macro("X")

typedef struct am_warning {
    am_warning_kind kind;
    char text[240];          /* the first occurrence, e.g. "foot 'paw_X' is not a joint" */
    size_t count;            /* occurrences with this kind and text */
} am_warning;

typedef struct am_warning_list {
    am_warning *data;
    size_t count;
} am_warning_list;

/* Static message of a kind ("a name was not found and was skipped"). */
const char *am_warning_kind_message(am_warning_kind kind);
/* Name of a kind ("IGNORED_NAME"). */
const char *am_warning_kind_name(am_warning_kind kind);
/* Append src's warnings to dst (merging equal ones); src is left as is. AM_E_NOMEM. */
AM_NODISCARD am_status am_warning_list_append(am_warning_list *dst, const am_warning_list *src);
void am_warning_list_free(am_warning_list *list);

/* ---- scopes: the context of a call, on the calling thread ------------------------------
 * Jobs enter their opts' context themselves. A caller that runs loaders (which take no
 * options) under its own allocator, limits or progress wraps them in a scope:
 *
 *     am_context ctx = {.max_allocs = 10};
 *     am_scope sc;
 *     am_scope_enter(&sc, &ctx);
 *     am_status s = am_rig_load("rig.json", &rig, &err);   // allocation 11 fails
 *     am_warning_list w = {0};
 *     am_scope_leave(&sc, &w);
 *
 * Scopes nest (leave in reverse order). An all-zero context inside a scope inherits the outer
 * one's allocator, limits and progress (a job called inside a caller's scope shares them) but
 * collects its own warnings. A scope belongs to one thread; a call's worker threads join it
 * with am_scope_join. The only state is the calling thread's pointer to its innermost scope,
 * set for the duration of a call. */
typedef struct am_scope {      /* fields are private */
    am_context ctx;             /* the effective context (inherited when entered all-zero) */
    struct am_scope *outer;     /* the thread's previous innermost scope */
    struct am_scope *counters;  /* the scope whose counters and limits apply */
    struct am_scope *collector; /* the scope that collects warnings */
    uint64_t live_bytes, peak_bytes, allocs, id; /* updated atomically */
    am_warning_list warnings;
    int spin, cancelled;
} am_scope;

void am_scope_enter(am_scope *scope, const am_context *ctx);
/* Leave the innermost scope; the warnings it collected are appended to *warnings (a result's
 * list, allocated with the scope's allocator). NULL hands them to the enclosing scope, or drops
 * them when there is none. A worker's joined scope hands nothing over: its warnings went to the
 * scope it joined. */
void am_scope_leave(am_scope *scope, am_warning_list *warnings);
/* A worker thread joins a scope of another thread (its caller's, from am_scope_current()),
 * sharing its allocator, limits, counters and warnings; leave with am_scope_leave(worker, NULL)
 * before the caller leaves. */
void am_scope_join(am_scope *worker, am_scope *scope);
/* The calling thread's innermost scope, or NULL. */
am_scope *am_scope_current(void);
/* Peak live bytes and allocation count of a scope so far (what a limit is checked against). */
uint64_t am_scope_peak_bytes(const am_scope *scope);
uint64_t am_scope_alloc_count(const am_scope *scope);

/* ---- allocation: every allocation goes through the current scope's allocator ------------
 * NULL on failure, on a limit, or when n * size overflows. All return zeroed memory except
 * am_realloc's new tail. am_free(NULL) is a no-op; a block may be freed on any thread, inside
 * or outside any scope (it remembers its allocator). */
void *am_alloc(size_t size);
void *am_alloc_array(size_t n, size_t size);
void *am_realloc(void *ptr, size_t size);
void *am_realloc_array(void *ptr, size_t n, size_t size);
void am_free(void *ptr);
char *am_strdup(const char *s);
char *am_strndup(const char *s, size_t n);

/* Seconds from a monotonic clock. */
double am_now(void);

/* ---- files. -------------------------------------------------------------------------- */
/* Read a whole file (adds a NUL after the data, not counted in *len). max_bytes 0 = 2 GiB. */
AM_NODISCARD am_status am_file_read(const char *path, size_t max_bytes, char **out, size_t *len,
                                    am_error *err);
/* Write atomically: to a temporary beside path (am_tmp_path), then rename. No partial file is
 * left on failure. AM_E_WRITE names path and says why ("No space left on device"). */
AM_NODISCARD am_status am_file_write(const char *path, const void *data, size_t len, am_error *err);
/* Build a fresh temporary name for an atomic writer, unique to this call:
 * "<dir>/.anymove-tmp.<pid>.<n>.<name>" beside path (buf >= strlen(path) + 48). Every temporary
 * of anymove starts with ".anymove-tmp.<pid>." so that am_tmp_sweep can tell ours, and dead
 * ones, apart. */
void am_tmp_path(char *buf, size_t size, const char *path);
/* Remove the temporaries of processes that are gone (a kill -9 during a write) from a folder.
 * Those of live processes stay. Best effort; no error. */
void am_tmp_sweep(const char *dir);
/* Commit a finished temporary file (rename), or remove it on failure. */
AM_NODISCARD am_status am_file_commit(const char *tmp, const char *path, am_error *err);
void am_file_discard(const char *tmp);
/* Create a folder and its parents (mkdir -p). AM_E_WRITE naming the folder. */
AM_NODISCARD am_status am_mkdir_p(const char *dir, am_error *err);

/* ---- output sets: a run's outputs appear together or not at all -----------------------
 * The outputs are written into a temporary folder beside the target (so on its file system)
 * and moved into place together by am_outset_commit; a failed run (am_outset_abort) leaves
 * the previous set as it was. Opening checks the location first (it exists or can be created,
 * and is writable: the temporary folder is made there) so no work is wasted on an unwritable
 * output, and sweeps the folder of dead runs' temporaries.
 *
 *     static const char *const names[] = {"rig.json", "motion.json"};
 *     const am_rig *rig = NULL;            // what the run made
 *     const am_motion *mo = NULL;
 *     am_error err = {0};
 *     am_outset *set = NULL;
 *     if (am_outset_open("out", names, 2, &set, &err) != AM_OK) return;  // before the work
 *     ... the work ...
 *     if (am_rig_write(rig, am_outset_path(set, "rig.json"), &err) != AM_OK ||
 *         am_motion_write(mo, am_outset_path(set, "motion.json"), &err) != AM_OK) {
 *         am_outset_blame(set, &err);      // the error names out/motion.json, not the temporary
 *         am_outset_abort(set);            // the previous out/ stays as it was
 *         return;
 *     }
 *     if (am_outset_commit(set, &err) != AM_OK) return;  // frees the set either way
 *
 * count > 0: target is a folder (created at commit if missing) and the set is the files
 * `names` inside it (plain names, no '/', not starting with '.'). A name the run did not write
 * is removed from the folder at commit, so no member of an older set stays beside the new
 * ones; other files in the folder are left alone. count == 0 (names NULL): target is one file.
 * Errors: AM_E_WRITE naming the target (read-only, not a folder, a folder where a file goes),
 * AM_E_NOMEM. */
typedef struct am_outset am_outset;
AM_NODISCARD am_status am_outset_open(const char *target, const char *const *names, size_t count,
                                      am_outset **out, am_error *err);
/* Where to write member `name` (NULL for a one-file set); valid until commit or abort. */
const char *am_outset_path(const am_outset *set, const char *name);
/* Where member `name` will be after commit (NULL for a one-file set: the target). */
const char *am_outset_final(const am_outset *set, const char *name);
/* An error naming a temporary of the set is made to name the final file instead. */
void am_outset_blame(const am_outset *set, am_error *err);
/* Move every written member into place (replacing the old ones) and free the set. On failure
 * the old set is put back and AM_E_WRITE names the file. */
AM_NODISCARD am_status am_outset_commit(am_outset *set, am_error *err);
/* Drop the temporaries and free the set (NULL is fine). */
void am_outset_abort(am_outset *set);

/* Growable byte buffer for writers. */
typedef struct am_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; further appends are ignored */
} am_buf;
void am_buf_append(am_buf *b, const void *data, size_t len);
void am_buf_printf(am_buf *b, const char *fmt, ...) AM_PRINTF(2, 3);
void am_buf_free(am_buf *b);

#ifdef __cplusplus
}
#endif
#endif
