/* Shared JSON helpers on top of jansson, for every JSON loader and writer in the project
 * (rig.json, motion.json, creature.json, and later BVH conversion, capture and Track2Rig).
 *
 * Reading. ami_json_parse() maps every jansson failure into an am_error with the source name
 * and a 1-based line/column:
 *     invalid syntax, truncated text, "\u0000"      -> AM_E_SYNTAX
 *     empty or whitespace-only input                -> AM_E_EMPTY
 *     invalid UTF-8                                 -> AM_E_UTF8
 *     a key repeated inside one object              -> AM_E_DUPLICATE
 *     a number that overflows (1e400, 2^64)         -> AM_E_NONFINITE
 *     nesting deeper than jansson's limit           -> AM_E_LIMIT
 * The typed getters then check the document's shape and name the failing value by its path,
 * e.g. "bones[3][1]: expected a string". The path syntax is `key`, `parent.key`,
 * `parent["odd key"]` (any key with characters outside [A-Za-z0-9_]) and `parent[i]`; the
 * document itself is "" (printed as "document"). Error codes, so tests can assert them:
 *     wrong JSON type, missing required key         -> AM_E_SCHEMA
 *     array of the right type but wrong length      -> AM_E_SHAPE
 *     non-finite number                             -> AM_E_NONFINITE
 *     allocation failure                            -> AM_E_NOMEM
 *
 *     json_t *doc = NULL;
 *     AMI_TRY(ami_json_parse(text, len, "rig.json", &doc, err));
 *     double fps = 30;
 *     am_status s = ami_json_get_number(doc, "", "fps", false, &fps, err);
 *     json_decref(doc);
 *
 * Writing. One streaming writer (ami_jw) for every JSON file the project writes: rig.json,
 * motion.json, reports, the glTF JSON chunk. It has one string escaper, which refuses invalid
 * UTF-8 (AM_E_UTF8, naming the value by its path), and one number format: the shortest text
 * that reads back bit-identical (at most 17 significant digits, "0.1" stays "0.1", always with
 * a '.' or an exponent). Non-finite numbers are refused (AM_E_NONFINITE) unless written with
 * ami_jw_number_or_null (a value a stage could not compute). Errors are sticky: calls after
 * the first failure do nothing, and ami_jw_finish reports it.
 *
 *     am_buf b = {0};
 *     ami_jw w;
 *     ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
 *     ami_jw_object(&w, NULL);
 *     ami_jw_number(&w, "fps", 30);
 *     ami_jw_numbers(&w, "trans", trans, 2, (size_t[2]){T, 3});
 *     ami_jw_close(&w);
 *     am_status s = ami_jw_write_file(&w, "motion.json", err);   (or ami_jw_take_string)
 *     am_buf_free(&b);
 *
 * Layout (pretty): objects and arrays opened with ami_jw_object/ami_jw_array put each member
 * on its own line; ami_jw_record/ami_jw_row keep theirs on one line (and everything inside).
 * Number tables and trees follow one rule: a container of scalars is one line, and so is an
 * array of rows with at most 6 scalars in all (a 3x2 limit), so a motion.json reads one row
 * per line.
 *
 * NOTE: jansson allocates with its own (malloc) functions: we don't install am_alloc globally,
 * since jansson's allocator is process-wide and the host program may use jansson itself.
 * Everything this module hands back to callers (strings, arrays) comes from am_alloc.
 *
 * Pairs: ami_json_parse/ami_json_load_file -> json_decref; ami_json_strings ->
 * ami_strings_free; ami_json_dump_string/ami_json_extra_collect/ami_jw_take_string -> am_free;
 * the buffer given to ami_jw_begin -> am_buf_free.
 */
#ifndef ANYMOVE_JSON_INTERNAL_H
#define ANYMOVE_JSON_INTERNAL_H

#include <jansson.h>

#include "anymove/core.h"
#include "core/internal.h"

#define AMI_JSON_PATH_MAX 192

/* A value's path for error messages, built by value so callers need no buffers. Long paths
 * are truncated (still readable, never overflowing). */
typedef struct ami_jpath {
    char s[AMI_JSON_PATH_MAX];
} ami_jpath;

ami_jpath ami_json_path_key(const char *parent, const char *key);
ami_jpath ami_json_path_index(const char *parent, size_t index);

/* ---- parsing ---- */

/* What a parsed document may take in memory (the text and jansson's tree, estimated from the
 * text before parsing), unless the scope's max_bytes is smaller: AM_E_LIMIT naming source. */
#define AMI_JSON_DEFAULT_BUDGET ((uint64_t)2 << 30)

/* Parse len bytes (need not be NUL-terminated; a leading UTF-8 BOM is skipped) into *out.
 * The top level must be an object or an array (jansson's rule). Duplicate keys are refused.
 * source names the input in errors (may be NULL). Over AMI_JSON_DEFAULT_BUDGET: AM_E_LIMIT. */
AM_NODISCARD am_status ami_json_parse(const char *text, size_t len, const char *source,
                                      json_t **out, am_error *err);
/* Read a file (max_bytes 0 = am_file_read's default) and parse it; errors carry the path. */
AM_NODISCARD am_status ami_json_load_file(const char *path, size_t max_bytes, json_t **out,
                                          am_error *err);

/* A JSON format's reader: fills *out (out is the caller's result pointer, an am_rig ** for
 * rig.json) from the parsed document; user is the format's other input (a rig, the source
 * name) or NULL. */
typedef am_status (*ami_json_reader)(const json_t *doc, const void *user, void *out, am_error *err);
/* The parse and the load of a JSON format (rig.json, motion.json, creature.json, map.json):
 * the document from text (or from the file at path, max_bytes as ami_json_load_file), then
 * read; the document is freed either way and a failure names source (or path). */
AM_NODISCARD am_status ami_json_parse_into(const char *text, size_t len, const char *source,
                                           ami_json_reader read, const void *user, void *out,
                                           am_error *err);
AM_NODISCARD am_status ami_json_load_into(const char *path, size_t max_bytes, ami_json_reader read,
                                          const void *user, void *out, am_error *err);

/* ---- typed getters (v may be NULL: then it is "missing") ---- */

/* The JSON type's name with an article, for messages: "an object", "a number", ... */
const char *ami_json_type_name(const json_t *v);
/* AM_OK if v has the type (JSON_TRUE/JSON_FALSE both accept any boolean; JSON_REAL and
 * JSON_INTEGER both accept any number), else AM_E_SCHEMA "path: expected ..., got ...". */
AM_NODISCARD am_status ami_json_expect(const json_t *v, json_type type, const char *path,
                                       am_error *err);
/* obj must be an object (AM_E_SCHEMA otherwise). *out = obj[key] or NULL when absent; a
 * missing required key is AM_E_SCHEMA "path: missing key 'key'". */
AM_NODISCARD am_status ami_json_member(const json_t *obj, const char *path, const char *key,
                                       bool required, json_t **out, am_error *err);
/* A finite number (integer or real). */
AM_NODISCARD am_status ami_json_number(const json_t *v, const char *path, double *out,
                                       am_error *err);
/* A string, borrowed from the document (valid while the document lives). */
AM_NODISCARD am_status ami_json_string(const json_t *v, const char *path, const char **out,
                                       am_error *err);
/* obj[key] as a number/string. When the key is absent and not required, *out is left
 * untouched (so callers preset defaults) and AM_OK is returned. A JSON null counts as absent
 * only for strings when null_ok (e.g. a root bone's parent). */
AM_NODISCARD am_status ami_json_get_number(const json_t *obj, const char *path, const char *key,
                                           bool required, double *out, am_error *err);
AM_NODISCARD am_status ami_json_get_string(const json_t *obj, const char *path, const char *key,
                                           bool required, const char **out, am_error *err);

/* An array of strings, copied (am_alloc). *out is NULL when the array is empty. */
AM_NODISCARD am_status ami_json_strings(const json_t *v, const char *path, char ***out,
                                        size_t *count, am_error *err);

/* Nested number arrays of an exact shape: shape[0..ndim) is the expected length of each level
 * (ndim 1..8), e.g. {T, B, 4} for motion quaternions. Every element is checked (AM_E_SCHEMA
 * for a non-array/non-number, AM_E_SHAPE for a wrong length, AM_E_NONFINITE) and written in
 * row-major order into out ([prod(shape)] doubles), or only checked when out is NULL. */
AM_NODISCARD am_status ami_json_numbers(const json_t *v, const char *path, size_t ndim,
                                        const size_t *shape, double *out, am_error *err);
/* As above, allocating *out (am_alloc, NULL when the product is 0). A 0 in shape means "take
 * it from the document": the length of the first array at that level (0 if there is none);
 * the resolved shape is written back. */
AM_NODISCARD am_status ami_json_numbers_alloc(const json_t *v, const char *path, size_t ndim,
                                              size_t *shape, double **out, am_error *err);

/* Members of obj whose key is not in known (a NULL-terminated list), as compact JSON object
 * text (am_alloc'd), in document order; *out = NULL when there are none. Used to keep the
 * keys a stage doesn't understand (SPEC 2.1, 4.3) and write them back. */
AM_NODISCARD am_status ami_json_extra_collect(const json_t *obj, const char *const *known,
                                              char **out, am_error *err);

/* ---- writing ---- */

enum {
    AMI_JSON_PRETTY = 0,  /* 2-space indent, the layout rule above, trailing newline */
    AMI_JSON_COMPACT = 1  /* one line, no spaces, no trailing newline */
};

/* True if s[0..n) is valid UTF-8 (no overlong forms, surrogates or code points > U+10FFFF). */
bool ami_utf8_valid(const char *s, size_t n);

/* Shortest text that reads back as exactly v ("%.15g".."%.17g", always with a '.' or an
 * exponent so it stays a real, '.' whatever the locale). buf >= 32. Returns the length.
 * v must be finite. */
size_t ami_json_format_double(double v, char *buf, size_t size);

/* Deeper than anything ami_json_parse accepts (jansson stops at 2048 levels), so every kept
 * subtree can be written back. */
#define AMI_JW_MAX_DEPTH 2100

typedef struct ami_jw_level {
    const char *key;   /* the container's member name in its parent object, else NULL */
    size_t count;      /* values written into it so far */
    bool is_object, one_line;
} ami_jw_level;

typedef struct ami_jw {
    am_buf *out;
    unsigned flags;
    int depth;
    ami_jw_level stack[AMI_JW_MAX_DEPTH];
    am_status status;  /* the first failure, sticky */
    char info[200];
} ami_jw;

/* Start writing into out (appended to). */
void ami_jw_begin(ami_jw *w, am_buf *out, unsigned flags);
/* Containers. key: the member name inside an object; NULL inside arrays and at the top. */
void ami_jw_object(ami_jw *w, const char *key);
void ami_jw_array(ami_jw *w, const char *key);
void ami_jw_record(ami_jw *w, const char *key);  /* an object on one line */
void ami_jw_row(ami_jw *w, const char *key);     /* an array on one line */
void ami_jw_close(ami_jw *w);
/* Scalars. */
void ami_jw_number(ami_jw *w, const char *key, double v);
void ami_jw_number_or_null(ami_jw *w, const char *key, double v);
void ami_jw_int(ami_jw *w, const char *key, int64_t v);
void ami_jw_bool(ami_jw *w, const char *key, bool v);
void ami_jw_null(ami_jw *w, const char *key);
/* s == NULL writes null. */
void ami_jw_string(ami_jw *w, const char *key, const char *s);
void ami_jw_string_n(ami_jw *w, const char *key, const char *s, size_t n);
/* A row of strings (NULL entries write ""). */
void ami_jw_strings(ami_jw *w, const char *key, const char *const *s, size_t count);
/* Nested number arrays: data [prod(shape)] row-major, ndim >= 1. A non-finite value is
 * AM_E_NONFINITE naming key[i][j]. */
void ami_jw_numbers(ami_jw *w, const char *key, const double *data, size_t ndim,
                    const size_t *shape);
/* A jansson value (a kept extra key, a document subtree). */
void ami_jw_value(ami_jw *w, const char *key, const json_t *v);
/* Members of extra (JSON object text from ami_json_extra_collect, may be NULL) into the open
 * object, except keys in skip (a NULL-terminated list: the keys the format writes itself).
 * Bad text -> AM_E_VALUE. */
void ami_jw_extra(ami_jw *w, const char *extra, const char *const *skip);
/* The first failure (with its path), or AM_OK; pretty output gets its trailing newline. */
AM_NODISCARD am_status ami_jw_finish(ami_jw *w, am_error *err);
/* Finish and write the buffer atomically (am_file_write); errors carry the path. */
AM_NODISCARD am_status ami_jw_write_file(ami_jw *w, const char *path, am_error *err);
/* Finish and hand the buffer over as a NUL-terminated am_alloc'd string (the buffer is
 * emptied; freed on failure). */
AM_NODISCARD am_status ami_jw_take_string(ami_jw *w, char **out, am_error *err);

/* A whole jansson value as text (NUL-terminated, am_alloc'd). */
AM_NODISCARD am_status ami_json_dump_string(const json_t *v, unsigned flags, char **out,
                                            am_error *err);

#endif
