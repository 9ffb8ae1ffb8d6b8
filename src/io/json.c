/* Shared JSON helpers on top of jansson: error mapping, path-named schema checks, exact-shape
 * number arrays, and a deterministic dumper. See json_internal.h for the contract. */
#include "io/json_internal.h"
#include "core/internal.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- paths ---- */

static bool ami_key_is_plain(const char *key)
{
    if (!key[0]) return false;
    for (const char *c = key; *c; c++) {
        char ch = *c;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_';
        if (!ok) return false;
    }
    return true;
}

ami_jpath ami_json_path_key(const char *parent, const char *key)
{
    ami_jpath p;
    if (!parent) parent = "";
    /* Keys such as "forearm.L" are quoted so the path stays unambiguous. */
    if (!ami_key_is_plain(key))
        snprintf(p.s, sizeof p.s, "%s[\"%s\"]", parent, key);
    else if (parent[0])
        snprintf(p.s, sizeof p.s, "%s.%s", parent, key);
    else
        snprintf(p.s, sizeof p.s, "%s", key);
    return p;
}

ami_jpath ami_json_path_index(const char *parent, size_t index)
{
    ami_jpath p;
    snprintf(p.s, sizeof p.s, "%s[%zu]", parent ? parent : "", index);
    return p;
}

static const char *ami_path_name(const char *path)
{
    return (path && path[0]) ? path : "document";
}

/* ---- parsing ---- */

static bool ami_is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
    return true;
}

static uint32_t ami_pos1(int v)
{
    /* jansson reports column 0 at the very start and -1 when it has no position; our
     * convention is 1-based with 0 = n/a, and a syntax error always has a place. */
    return v < 1 ? 1u : (uint32_t)v;
}

/* Bytes jansson will allocate for a document, bounded from its structural characters before
 * parsing (measured on jansson 2.14: ~40 bytes a number, ~90 a string, ~135 an empty array,
 * ~340 a one-member object; counting inside strings only overestimates). */
static uint64_t ami_json_tree_cost(const char *text, size_t len)
{
    uint64_t values = 1, arrays = 0, objects = 0, quotes = 0;
    for (size_t i = 0; i < len; i++) {
        switch (text[i]) {
        case ',':
        case ':': values++; break;
        case '[': arrays++; break;
        case '{': objects++; break;
        case '"': quotes++; break;
        default: break;
        }
    }
    return (uint64_t)len + 48 * values + 128 * arrays + 320 * objects + 24 * quotes;
}

am_status ami_json_parse(const char *text, size_t len, const char *source, json_t **out,
                         am_error *err)
{
    *out = NULL;
    if (!text) len = 0;
    AMI_TRY(AMI_BUDGET_CHECK(err, source, ami_json_tree_cost(text, len), AMI_JSON_DEFAULT_BUDGET,
                             "a JSON document of %zu bytes", len));
    /* Editors on Windows like to start UTF-8 files with a BOM; it carries no meaning. */
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF) {
        text += 3;
        len -= 3;
    }
    json_error_t je;
    memset(&je, 0, sizeof je);
    json_t *doc = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &je);
    if (doc) {
        *out = doc;
        return AM_OK;
    }
    am_status code;
    switch (json_error_code(&je)) {
    case json_error_out_of_memory: code = AM_E_NOMEM; break;
    case json_error_stack_overflow: code = AM_E_LIMIT; break;
    case json_error_invalid_utf8: code = AM_E_UTF8; break;
    case json_error_duplicate_key: code = AM_E_DUPLICATE; break;
    case json_error_numeric_overflow: code = AM_E_NONFINITE; break;
    default: code = ami_is_blank(text, len) ? AM_E_EMPTY : AM_E_SYNTAX; break;
    }
    /* jansson's text never exceeds 160 bytes; keep the last byte (its error code) out. */
    char msg[JSON_ERROR_TEXT_LENGTH];
    snprintf(msg, sizeof msg, "%.*s", (int)(sizeof msg - 1), je.text);
    if (code == AM_E_NOMEM)
        return AM_FAIL_AT(err, code, source, 0, 0, "%s", msg);
    return AM_FAIL_AT(err, code, source, ami_pos1(je.line), ami_pos1(je.column), "%s", msg);
}

am_status ami_json_load_file(const char *path, size_t max_bytes, json_t **out, am_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, max_bytes, &text, &len, err));
    am_status s = ami_json_parse(text, len, path, out, err);
    am_free(text);
    return s;
}

/* ---- getters ---- */

const char *ami_json_type_name(const json_t *v)
{
    if (!v) return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "an unknown value";
}

static const char *ami_json_type_want(json_type t)
{
    switch (t) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

static bool ami_json_has_type(const json_t *v, json_type type)
{
    if (!v) return false;
    switch (type) {
    case JSON_INTEGER:
    case JSON_REAL: return json_is_number(v);
    case JSON_TRUE:
    case JSON_FALSE: return json_is_boolean(v);
    default: return json_typeof(v) == type;
    }
}

am_status ami_json_expect(const json_t *v, json_type type, const char *path, am_error *err)
{
    if (ami_json_has_type(v, type)) return AM_OK;
    return AM_FAIL(err, AM_E_SCHEMA, "%s: expected %s, got %s", ami_path_name(path),
                   ami_json_type_want(type), ami_json_type_name(v));
}

am_status ami_json_member(const json_t *obj, const char *path, const char *key, bool required,
                          json_t **out, am_error *err)
{
    *out = NULL;
    AMI_TRY(ami_json_expect(obj, JSON_OBJECT, path, err));
    json_t *v = json_object_get(obj, key);
    if (!v && required)
        return AM_FAIL(err, AM_E_SCHEMA, "%s: missing key '%s'", ami_path_name(path), key);
    *out = v;
    return AM_OK;
}

am_status ami_json_number(const json_t *v, const char *path, double *out, am_error *err)
{
    AMI_TRY(ami_json_expect(v, JSON_REAL, path, err));
    double d = json_number_value(v);
    /* jansson refuses overflowing literals already; this keeps the promise for built trees. */
    AMI_CHECK(err, isfinite(d), AM_E_NONFINITE, "%s: not a finite number", ami_path_name(path));
    *out = d;
    return AM_OK;
}

am_status ami_json_string(const json_t *v, const char *path, const char **out, am_error *err)
{
    AMI_TRY(ami_json_expect(v, JSON_STRING, path, err));
    *out = json_string_value(v);
    return AM_OK;
}

am_status ami_json_get_number(const json_t *obj, const char *path, const char *key, bool required,
                              double *out, am_error *err)
{
    json_t *v = NULL;
    AMI_TRY(ami_json_member(obj, path, key, required, &v, err));
    if (!v) return AM_OK;
    return ami_json_number(v, ami_json_path_key(path, key).s, out, err);
}

am_status ami_json_get_string(const json_t *obj, const char *path, const char *key, bool required,
                              const char **out, am_error *err)
{
    json_t *v = NULL;
    AMI_TRY(ami_json_member(obj, path, key, required, &v, err));
    if (!v) return AM_OK;
    return ami_json_string(v, ami_json_path_key(path, key).s, out, err);
}

am_status ami_json_strings(const json_t *v, const char *path, char ***out, size_t *count,
                           am_error *err)
{
    *out = NULL;
    *count = 0;
    AMI_TRY(ami_json_expect(v, JSON_ARRAY, path, err));
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const char *s = NULL;
        AMI_TRY(ami_json_string(json_array_get(v, i), ami_json_path_index(path, i).s, &s, err));
    }
    if (n == 0) return AM_OK;
    char **names = am_alloc_array(n, sizeof *names);
    AMI_CHECK(err, names, AM_E_NOMEM, "%s: %zu strings", ami_path_name(path), n);
    for (size_t i = 0; i < n; i++) {
        names[i] = am_strdup(json_string_value(json_array_get(v, i)));
        if (!names[i]) {
            ami_strings_free(names, i);
            return AM_FAIL(err, AM_E_NOMEM, "%s: strings", ami_path_name(path));
        }
    }
    *out = names;
    *count = n;
    return AM_OK;
}

/* Walks one level of a nested number array; path holds the parent's path in [0, plen). */
static am_status ami_numbers_rec(const json_t *v, char *path, size_t plen, size_t level,
                                 size_t ndim, const size_t *shape, double **cursor,
                                 am_error *err)
{
    if (level == ndim) {
        double d = 0;
        AMI_TRY(ami_json_number(v, path, &d, err));
        if (*cursor) *(*cursor)++ = d;
        return AM_OK;
    }
    AMI_TRY(ami_json_expect(v, JSON_ARRAY, path, err));
    size_t n = json_array_size(v);
    if (n != shape[level])
        return AM_FAIL(err, AM_E_SHAPE, "%s: expected %zu element%s, got %zu",
                       ami_path_name(path), shape[level], shape[level] == 1 ? "" : "s", n);
    for (size_t i = 0; i < n; i++) {
        /* A finite number needs no path: only a failing element pays for formatting one
         * (a motion has millions of numbers). */
        const json_t *e = json_array_get(v, i);
        if (level + 1 == ndim && json_is_number(e) && isfinite(json_number_value(e))) {
            if (*cursor) *(*cursor)++ = json_number_value(e);
            continue;
        }
        if (plen < AMI_JSON_PATH_MAX)
            snprintf(path + plen, AMI_JSON_PATH_MAX - plen, "[%zu]", i);
        size_t sub = strlen(path);
        AMI_TRY(ami_numbers_rec(json_array_get(v, i), path, sub, level + 1, ndim, shape, cursor,
                                err));
        path[plen < AMI_JSON_PATH_MAX ? plen : AMI_JSON_PATH_MAX - 1] = '\0';
    }
    return AM_OK;
}

am_status ami_json_numbers(const json_t *v, const char *path, size_t ndim, const size_t *shape,
                           double *out, am_error *err)
{
    if (ndim < 1 || ndim > 8)
        return AM_FAIL(err, AM_E_INTERNAL, "%s: %zu dimensions", ami_path_name(path), ndim);
    char buf[AMI_JSON_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path ? path : "");
    double *cursor = out;
    return ami_numbers_rec(v, buf, strlen(buf), 0, ndim, shape, &cursor, err);
}

am_status ami_json_numbers_alloc(const json_t *v, const char *path, size_t ndim, size_t *shape,
                                 double **out, am_error *err)
{
    *out = NULL;
    if (ndim < 1 || ndim > 8)
        return AM_FAIL(err, AM_E_INTERNAL, "%s: %zu dimensions", ami_path_name(path), ndim);
    const json_t *probe = v;
    for (size_t k = 0; k < ndim; k++) {
        if (shape[k] == 0) shape[k] = json_is_array(probe) ? json_array_size(probe) : 0;
        probe = json_is_array(probe) ? json_array_get(probe, 0) : NULL;
    }
    /* Validate before allocating: the product is then bounded by the document's size. */
    AMI_TRY(ami_json_numbers(v, path, ndim, shape, NULL, err));
    size_t count = 1;
    for (size_t k = 0; k < ndim; k++) count *= shape[k];
    if (count == 0) return AM_OK;
    double *data = am_alloc_array(count, sizeof *data);
    AMI_CHECK(err, data, AM_E_NOMEM, "%s: %zu numbers", ami_path_name(path), count);
    am_status s = ami_json_numbers(v, path, ndim, shape, data, err);
    if (s != AM_OK) {
        am_free(data);
        return s;
    }
    *out = data;
    return AM_OK;
}

am_status ami_json_extra_collect(const json_t *obj, const char *const *known, char **out,
                                 am_error *err)
{
    *out = NULL;
    AMI_TRY(ami_json_expect(obj, JSON_OBJECT, "", err));
    json_t *extra = json_object();
    AMI_CHECK(err, extra, AM_E_NOMEM, "extra keys");
    const char *key;
    json_t *val;
    /* jansson's iteration API takes non-const objects; nothing is modified here. */
    json_t *o = (json_t *)obj;
    json_object_foreach(o, key, val) {
        bool is_known = false;
        for (size_t i = 0; known && known[i]; i++)
            if (strcmp(known[i], key) == 0) is_known = true;
        if (is_known) continue;
        if (json_object_set(extra, key, val) != 0) {
            json_decref(extra);
            return AM_FAIL(err, AM_E_NOMEM, "extra keys");
        }
    }
    am_status s = AM_OK;
    if (json_object_size(extra) > 0) s = ami_json_dump_string(extra, AMI_JSON_COMPACT, out, err);
    json_decref(extra);
    return s;
}

/* ---- building ---- */

am_status ami_json_put(json_t *obj, const char *key, json_t *v, am_error *err)
{
    AMI_CHECK(err, v, AM_E_NOMEM, "building '%s'", key);
    if (json_object_set_new(obj, key, v) != 0)
        return AM_FAIL(err, AM_E_NOMEM, "building '%s'", key);
    return AM_OK;
}

am_status ami_json_put_number(json_t *obj, const char *key, double v, am_error *err)
{
    AMI_CHECK(err, isfinite(v), AM_E_NONFINITE, "%s: %g", key, v);
    return ami_json_put(obj, key, json_real(v), err);
}

/* json_string returns NULL both for invalid UTF-8 and for a failed allocation; a second,
 * trivially valid allocation tells the two apart so the error names the real cause. */
static am_status ami_json_new_string(const char *s, const char *where, json_t **out,
                                     am_error *err)
{
    *out = json_string(s);
    if (*out) return AM_OK;
    json_t *probe = json_string("");
    bool oom = probe == NULL;
    json_decref(probe);
    if (oom) return AM_FAIL(err, AM_E_NOMEM, "building '%s'", where);
    return AM_FAIL(err, AM_E_UTF8, "%s: not valid UTF-8", where);
}

am_status ami_json_put_string(json_t *obj, const char *key, const char *s, am_error *err)
{
    json_t *v = NULL;
    if (s)
        AMI_TRY(ami_json_new_string(s, key, &v, err));
    else
        v = json_null();
    return ami_json_put(obj, key, v, err);
}

am_status ami_json_put_strings(json_t *obj, const char *key, const char *const *s, size_t count,
                               am_error *err)
{
    json_t *arr = json_array();
    AMI_CHECK(err, arr, AM_E_NOMEM, "building '%s'", key);
    for (size_t i = 0; i < count; i++) {
        json_t *str = NULL;
        am_status st = ami_json_new_string(s[i] ? s[i] : "", ami_json_path_index(key, i).s,
                                           &str, err);
        if (st != AM_OK) {
            json_decref(arr);
            return st;
        }
        if (json_array_append_new(arr, str) != 0) {
            json_decref(arr);
            return AM_FAIL(err, AM_E_NOMEM, "building '%s'", key);
        }
    }
    return ami_json_put(obj, key, arr, err);
}

static json_t *ami_from_numbers_rec(const double **data, size_t ndim, const size_t *shape)
{
    json_t *arr = json_array();
    if (!arr) return NULL;
    for (size_t i = 0; i < shape[0]; i++) {
        json_t *e = ndim == 1 ? json_real(*(*data)++) : ami_from_numbers_rec(data, ndim - 1, shape + 1);
        if (!e || json_array_append_new(arr, e) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

json_t *ami_json_from_numbers(const double *data, size_t ndim, const size_t *shape)
{
    if (ndim < 1) return NULL;
    return ami_from_numbers_rec(&data, ndim, shape);
}

am_status ami_json_put_numbers(json_t *obj, const char *key, const double *data, size_t ndim,
                               const size_t *shape, am_error *err)
{
    AMI_CHECK(err, ndim >= 1 && ndim <= 8, AM_E_INTERNAL, "%s: %zu dimensions", key, ndim);
    size_t count = 1;
    for (size_t k = 0; k < ndim; k++) count *= shape[k];
    for (size_t i = 0; i < count; i++) {
        if (isfinite(data[i])) continue;
        /* Name the element the way a reader of the file would: key[t][b][k]. */
        char where[AMI_JSON_PATH_MAX];
        size_t idx[8], rest = i;
        for (size_t k = ndim; k-- > 0;) {
            idx[k] = rest % shape[k];
            rest /= shape[k];
        }
        int n = snprintf(where, sizeof where, "%s", key);
        for (size_t k = 0; k < ndim && n >= 0 && (size_t)n < sizeof where; k++)
            n += snprintf(where + n, sizeof where - (size_t)n, "[%zu]", idx[k]);
        return AM_FAIL(err, AM_E_NONFINITE, "%s = %g", where, data[i]);
    }
    return ami_json_put(obj, key, ami_json_from_numbers(data, ndim, shape), err);
}

am_status ami_json_extra_merge(json_t *obj, const char *extra, am_error *err)
{
    if (!extra || !extra[0]) return AM_OK;
    json_error_t je;
    json_t *e = json_loads(extra, JSON_REJECT_DUPLICATES, &je);
    if (!e || !json_is_object(e)) {
        json_decref(e);
        return AM_FAIL(err, AM_E_VALUE, "extra_json is not a JSON object: %s",
                       e ? "not an object" : je.text);
    }
    const char *key;
    json_t *val;
    json_object_foreach(e, key, val) {
        if (json_object_get(obj, key)) continue;
        if (json_object_set(obj, key, val) != 0) {
            json_decref(e);
            return AM_FAIL(err, AM_E_NOMEM, "extra keys");
        }
    }
    json_decref(e);
    return AM_OK;
}

/* ---- dumping ---- */

size_t ami_json_format_double(double v, char *buf, size_t size)
{
    if (size < 32) return 0;
    if (!isfinite(v)) {
        snprintf(buf, size, "null");
        return 4;
    }
    /* The shortest of 15..17 significant digits that strtod maps back to the same bits. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* printf follows LC_NUMERIC; JSON always wants '.'. */
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && strcmp(dp, ".") != 0) {
        char *at = strstr(buf, dp);
        if (at) {
            size_t dl = strlen(dp);
            *at = '.';
            memmove(at + 1, at + dl, strlen(at + dl) + 1);
        }
    }
    if (!strpbrk(buf, ".eE")) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ".0");
    }
    return strlen(buf);
}

static void ami_dump_string(am_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    am_buf_append(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\t') esc = "\\t";
        else if (c == '\r') esc = "\\r";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c < 0x20) {
            u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0';
            u[4] = hex[c >> 4]; u[5] = hex[c & 15]; u[6] = '\0';
            esc = u;
        }
        if (!esc) continue;
        am_buf_append(b, s + run, i - run);
        am_buf_append(b, esc, strlen(esc));
        run = i + 1;
    }
    am_buf_append(b, s + run, n - run);
    am_buf_append(b, "\"", 1);
}

static void ami_dump_indent(am_buf *b, unsigned flags, int depth)
{
    if (flags & AMI_JSON_COMPACT) return;
    am_buf_append(b, "\n", 1);
    for (int i = 0; i < depth; i++) am_buf_append(b, "  ", 2);
}

/* The most scalars a table of rows may hold and still be written on one line. */
#define AMI_JSON_INLINE_TABLE 6

static bool ami_is_container(const json_t *v) { return json_is_array(v) || json_is_object(v); }

static void ami_dump_value(am_buf *b, const json_t *v, unsigned flags, int depth)
{
    bool compact = (flags & AMI_JSON_COMPACT) != 0;
    char num[40];
    switch (json_typeof(v)) {
    case JSON_NULL: am_buf_append(b, "null", 4); break;
    case JSON_TRUE: am_buf_append(b, "true", 4); break;
    case JSON_FALSE: am_buf_append(b, "false", 5); break;
    case JSON_INTEGER:
        am_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: {
        size_t n = ami_json_format_double(json_real_value(v), num, sizeof num);
        am_buf_append(b, num, n);
        break;
    }
    case JSON_STRING: ami_dump_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        /* A row of scalars (a vector, a quaternion, a list of names) stays on one line, and
         * so does a tiny table such as a 3x2 limit or a pair of contact ranges. */
        bool flat = compact;
        if (!flat) {
            flat = true;
            size_t scalars = 0;
            bool nested = false;
            for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(v, i);
                if (json_is_object(e)) flat = false;
                if (!json_is_array(e)) continue;
                nested = true;
                for (size_t k = 0; k < json_array_size(e); k++)
                    if (ami_is_container(json_array_get(e, k))) flat = false;
                scalars += json_array_size(e);
            }
            if (nested && scalars > AMI_JSON_INLINE_TABLE) flat = false;
        }
        am_buf_append(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) am_buf_append(b, ",", 1);
            if (!flat) ami_dump_indent(b, flags, depth + 1);
            else if (i && !compact) am_buf_append(b, " ", 1);
            ami_dump_value(b, json_array_get(v, i), flags, depth + 1);
        }
        if (!flat && n) ami_dump_indent(b, flags, depth);
        am_buf_append(b, "]", 1);
        break;
    }
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        bool first = true;
        am_buf_append(b, "{", 1);
        json_t *o = (json_t *)v;
        json_object_foreach(o, key, val) {
            if (!first) am_buf_append(b, ",", 1);
            first = false;
            ami_dump_indent(b, flags, depth + 1);
            ami_dump_string(b, key, strlen(key));
            am_buf_append(b, compact ? ":" : ": ", compact ? 1 : 2);
            ami_dump_value(b, val, flags, depth + 1);
        }
        if (!first) ami_dump_indent(b, flags, depth);
        am_buf_append(b, "}", 1);
        break;
    }
    }
}

am_status ami_json_dump(const json_t *v, unsigned flags, am_buf *out, am_error *err)
{
    AMI_CHECK(err, v, AM_E_INTERNAL, "nothing to dump");
    ami_dump_value(out, v, flags, 0);
    if (!(flags & AMI_JSON_COMPACT)) am_buf_append(out, "\n", 1);
    AMI_CHECK(err, !out->failed, AM_E_NOMEM, "serializing JSON");
    return AM_OK;
}

am_status ami_json_dump_string(const json_t *v, unsigned flags, char **out, am_error *err)
{
    *out = NULL;
    am_buf b = {0};
    am_status s = ami_json_dump(v, flags, &b, err);
    if (s == AM_OK && !b.data) {
        /* An empty buffer never happens for valid JSON, but keep the NUL-terminated promise. */
        b.data = am_strdup("");
        if (!b.data) s = AM_FAIL(err, AM_E_NOMEM, "serializing JSON");
    }
    if (s != AM_OK) {
        am_buf_free(&b);
        return s;
    }
    *out = b.data;
    return AM_OK;
}

am_status ami_json_write_file(const json_t *v, unsigned flags, const char *path, am_error *err)
{
    am_buf b = {0};
    am_status s = ami_json_dump(v, flags, &b, err);
    if (s == AM_OK) s = am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return s;
}
