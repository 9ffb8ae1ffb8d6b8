/* Library-internal helpers of src/core: error raising, warnings and progress into the
 * calling thread's scope. Never included by public headers. */
#ifndef AMI_CORE_INTERNAL_H
#define AMI_CORE_INTERNAL_H

#include <stdint.h>

#include "anymove/core.h"

/* Record the failing library source line automatically. */
#define AM_FAIL(err, code, ...) \
    am_error_set((err), (code), NULL, 0, 0, UINT64_MAX, __FILE__, (uint32_t)__LINE__, __VA_ARGS__)
#define AM_FAIL_AT(err, code, file, line, col, ...) \
    am_error_set((err), (code), (file), (line), (col), UINT64_MAX, __FILE__, (uint32_t)__LINE__, __VA_ARGS__)
#define AM_FAIL_OFS(err, code, file, offset, ...) \
    am_error_set((err), (code), (file), 0, 0, (offset), __FILE__, (uint32_t)__LINE__, __VA_ARGS__)
/* Return from the current function with a status if cond is false. */
#define AMI_CHECK(err, cond, code, ...) \
    do { if (!(cond)) return AM_FAIL((err), (code), __VA_ARGS__); } while (0)
#define AMI_TRY(expr) \
    do { am_status ami_s_ = (expr); if (ami_s_ < 0) return ami_s_; } while (0)

/* Add a warning to the current scope (dropped when there is none). Equal kind + text merge
 * into one entry with a count; past 64 distinct entries, further ones only raise the count of
 * the last. */
void ami_warn(am_warning_kind kind, const char *fmt, ...) AM_PRINTF(2, 3);

/* Add a list's warnings to the current scope (a call that frees a result it got from another
 * job, e.g. a loader discarding an am_npz, keeps that job's warnings this way). */
void ami_warn_list(const am_warning_list *list);

/* Report progress to the current scope's callback. Returns false when the caller cancelled
 * (then every later call returns false too). Cheap when there is no callback. */
bool ami_progress(const char *stage, double fraction);
/* True once the current call was cancelled. */
bool ami_cancelled(void);

/* A timed stage: begin reports fraction 0, end reports 1 with the duration, which it returns. */
typedef struct ami_stage {
    const char *name;
    double t0;
} ami_stage;
ami_stage ami_stage_begin(const char *name);
double ami_stage_end(const ami_stage *stage);

/* Four doubles as one GCC/Clang vector (a 3x4 transform's row, four terms of a dot product).
 * Lowered to SSE2 pairs on baseline x86-64; written this way because -O2 does not vectorize
 * these short loops. */
typedef double ami_v4 __attribute__((vector_size(32)));

/* The hot kernels (the decomposition's per-entry loops, the banded Cholesky) get an AVX2
 * (x86-64-v3) clone picked at load time (GCC/Clang ifunc) and a baseline x86-64 one; elsewhere
 * they are plain C. Same results to rounding. Not "arch=haswell": GCC resolves arch= clones
 * with __builtin_cpu_is, so that clone only ran on Intel Haswell-family parts (never on the AMD
 * EPYC bench machine); "arch=x86-64-v3" (GCC >= 12) and "avx2" are resolved by feature
 * (__builtin_cpu_supports). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(AM_NO_CLONES) && \
    defined(__linux__)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define AMI_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define AMI_HOT __attribute__((target_clones("avx2", "default")))
#endif
#else
#define AMI_HOT
#endif

/* A number no other call of this process gets (temporary file names of concurrent writers). */
uint64_t ami_unique_id(void);

/* am_file_read of a file that must lie inside dir once both are resolved (symlinks, ".."):
 * what a document names (glTF buffers and images) is read only from its own folder.
 * Outside -> AM_E_UNSUPPORTED naming path and where it leads; errors name path. */
AM_NODISCARD am_status ami_file_read_within(const char *dir, const char *path, size_t max_bytes,
                                            char **out, size_t *len, am_error *err);

/* The folder part of a path ("a/b" -> "a", "b" -> ".", "/b" -> "/"), am_alloc'd; NULL on
 * allocation failure. */
char *ami_path_dirname(const char *path);
/* The path of file `to` from folder `from_dir` ("../textures/wood.png"), both resolved
 * (symlinks, "..") as far as they exist: from_dir may not exist yet (an output folder made at
 * commit). to as given when it cannot be resolved. am_alloc'd; NULL on allocation failure. */
char *ami_path_relative(const char *from_dir, const char *to);

/* Free an array of n am_alloc'd strings and the array (NULL is fine). */
void ami_strings_free(char **s, size_t n);

/* s as HTML text (<, >, & and " escaped), appended to b (the report pages). */
void ami_buf_html(am_buf *b, const char *s);

/* ---- budgets: inputs are bounded by construction --------------------------------------
 * A loader computes from an input's headers, before allocating any of it, what the input will
 * make it allocate (frames x channels x 8, elements x their real cost), and refuses it with
 * AM_E_LIMIT naming the file when that is over the budget: the format's limit (its opts'
 * max_bytes or the default given here; 0 = none) or, when smaller, the max_bytes of the calling
 * scope's am_context. So a hostile header fails in microseconds instead of after gigabytes. */
uint64_t ami_budget(uint64_t limit);
/* AM_OK, or AM_E_LIMIT "<what> would take 2.4 GiB, over the limit of 512 MiB" with file set.
 * what is a printf format. */
#define AMI_BUDGET_CHECK(err, file, need, limit, ...) \
    ami_budget_check_at((err), (file), (need), (limit), __FILE__, (uint32_t)__LINE__, __VA_ARGS__)
am_status ami_budget_check_at(am_error *err, const char *file, uint64_t need, uint64_t limit,
                              const char *src_file, uint32_t src_line, const char *fmt, ...)
    AM_PRINTF(7, 8);

/* Memory a library we call allocates with its own malloc (CHOLMOD's factor), counted against
 * the current call's limits and in its peak like an am_alloc block, so a context's max_bytes
 * bounds it too. ami_foreign_charge: false when that would go over max_bytes (nothing counted).
 * The charge is given back by ami_foreign_refund to the scope that took it, whichever call is
 * current then (a factor may outlive the call that made it: then nothing is refunded). */
typedef struct ami_foreign {
    am_scope *counters;
    uint64_t counters_id, bytes;
} ami_foreign;
AM_NODISCARD bool ami_foreign_charge(ami_foreign *charge, uint64_t bytes);
void ami_foreign_refund(ami_foreign *charge);

/* Bytes one am_alloc'd block really takes beyond its payload: our 48-byte header plus the C
 * library's bookkeeping and rounding. Budgets of many small blocks (strings) count it. */
#define AMI_ALLOC_OVERHEAD 64u

/* ---- name -> index maps (src/core/names.c) ----------------------------------------------
 * Keys are borrowed: they must outlive the map and not move. Pair: ami_names_index or
 * ami_names_add -> ami_names_free (an all-zero map is empty and valid). */
typedef struct ami_name_slot {
    const char *key;  /* NULL = empty slot */
    uint32_t len, hash;
    int32_t index;
} ami_name_slot;
typedef struct ami_names {
    ami_name_slot *slots;
    size_t cap, count;
} ami_names;
/* Room for count names without rehashing. AM_E_NOMEM. */
AM_NODISCARD am_status ami_names_reserve(ami_names *m, size_t count);
/* Map key[0..len) -> index unless an equal key is there: then *prev is its index (nothing is
 * added), else *prev = -1. AM_E_NOMEM. */
AM_NODISCARD am_status ami_names_add(ami_names *m, const char *key, size_t len, int32_t index,
                                     int32_t *prev);
/* Index of a key, -1 if absent. */
int32_t ami_names_find(const ami_names *m, const char *key, size_t len);
int32_t ami_names_find_str(const ami_names *m, const char *key);
/* A fresh map of names[0..n) -> their index (NULL entries skipped). A repeated name gives
 * AM_E_DUPLICATE with the two indices in *dup_first < *dup_second (either may be NULL) for the
 * caller's message; the map is then partial and still to be freed. AM_E_NOMEM, AM_E_LIMIT. */
AM_NODISCARD am_status ami_names_index(ami_names *m, const char *const *names, size_t n,
                                       size_t *dup_first, size_t *dup_second);
void ami_names_free(ami_names *m);

#endif
