/* anymove core: status codes, errors, allocation, logging and progress.
 *
 * Conventions: every fallible call returns am_status (AM_OK = 0, failures negative,
 * informational values positive) and takes an optional `am_error *err` last. On failure
 * the error records the input location (file, 1-based line/col for text, byte offset for
 * binary formats), the library source line and a detail message.
 *
 *     am_error err = {0};
 *     am_rig *rig = NULL;
 *     if (am_rig_load("rig.json", NULL, &rig, &err) != AM_OK) {
 *         char msg[512];
 *         am_error_format(msg, sizeof msg, &err);
 *         fprintf(stderr, "%s\n", msg);
 *     }
 *     am_rig_free(rig);
 *
 * Pairs: am_alloc/am_free (or the same am_allocator's functions), am_error_set/am_error_format.
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

/* Generated from the one table, errors.def, with its messages and exit codes. */
typedef enum am_status {
#define X(name, value, exit_code, msg) AM_##name = value,
#include "errors.def"
#undef X
} am_status;
enum {
#define X(name, value, exit_code, msg) AMI_STATUS_ROW_##name,
#include "errors.def"
#undef X
    AM_STATUS_COUNT
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
/* The CLI exit code for a status: 0, 1 (our fault) or 2 (input/usage fault). */
int am_status_exit_code(am_status code);
/* Name of a status ("E_SYNTAX"), for tests and logs. */
const char *am_status_name(am_status code);

/* Fill *err (if not NULL) and return code. file may be NULL. offset: UINT64_MAX if n/a. */
am_status am_error_set(am_error *err, am_status code, const char *file, uint32_t line,
                       uint32_t col, uint64_t offset, const char *src_file, uint32_t src_line,
                       const char *fmt, ...) AM_PRINTF(9, 10);
/* Set the input file of an error that has none yet (loaders parse buffers, then add the name). */
void am_error_set_file(am_error *err, const char *file);
/* "file:line:col: error: what (info)" or "file: byte N: error: what (info)". Returns buf. */
char *am_error_format(char *buf, size_t size, const am_error *err);

/* Library-internal helpers: record the failing source line automatically. */
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

/* ---- allocation: every allocation goes through here. -------------------------------- */
typedef struct am_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} am_allocator;

/* Set the process-wide allocator (NULL restores malloc). Override all three or none.
 * max_allocs > 0 makes the (max_allocs+1)-th allocation fail: fault injection for tests. */
void am_set_allocator(const am_allocator *a);
void am_set_alloc_limit(uint64_t max_allocs);
uint64_t am_alloc_count(void);
/* NULL on failure or when size == 0 would overflow. am_alloc_array checks n*size overflow.
 * All return zeroed memory except am_realloc's new tail. */
void *am_alloc(size_t size);
void *am_alloc_array(size_t n, size_t size);
void *am_realloc(void *ptr, size_t size);
void *am_realloc_array(void *ptr, size_t n, size_t size);
void am_free(void *ptr);
char *am_strdup(const char *s);
char *am_strndup(const char *s, size_t n);

/* ---- logging and progress (stderr). ------------------------------------------------- */
void am_log_set_quiet(bool quiet);
bool am_log_quiet(void);
/* A progress/log line on stderr unless quiet: "anymove: <message>". */
void am_log(const char *fmt, ...) AM_PRINTF(1, 2);
/* Seconds from a monotonic clock. */
double am_now(void);
/* Stage timing: am_stage_begin returns the start time; am_stage_end logs
 * "anymove: <name> ... 0.123 s" and returns the elapsed seconds. */
double am_stage_begin(void);
double am_stage_end(double start, const char *name);

/* ---- files. -------------------------------------------------------------------------- */
/* Read a whole file (adds a NUL after the data, not counted in *len). max_bytes 0 = 2 GiB. */
AM_NODISCARD am_status am_file_read(const char *path, size_t max_bytes, char **out, size_t *len,
                                    am_error *err);
/* Write atomically: to "path.tmp.<pid>", then rename. No partial file is left on failure. */
AM_NODISCARD am_status am_file_write(const char *path, const void *data, size_t len, am_error *err);
/* Build the temporary name used by atomic writers (buf >= strlen(path) + 32). */
void am_tmp_path(char *buf, size_t size, const char *path);
/* Commit a finished temporary file (rename), or remove it on failure. */
AM_NODISCARD am_status am_file_commit(const char *tmp, const char *path, am_error *err);
void am_file_discard(const char *tmp);

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
