/* Shared JSON helpers on top of jansson: error mapping, path-named schema checks, exact-shape
 * number arrays, and a deterministic dumper. See json_internal.h for the contract. */
#include "io/json_internal.h"
#include "core/internal.h"

#include <assert.h>
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

static am_status ami_json_read(am_status s, json_t *doc, const char *source, ami_json_reader read,
                               const void *user, void *out, am_error *err)
{
    if (s == AM_OK) s = read(doc, user, out, err);
    json_decref(doc);
    if (s != AM_OK) am_error_set_file(err, source);
    return s;
}

am_status ami_json_parse_into(const char *text, size_t len, const char *source, ami_json_reader read,
                              const void *user, void *out, am_error *err)
{
    json_t *doc = NULL;
    am_status s = ami_json_parse(text, len, source, &doc, err);
    return ami_json_read(s, doc, source, read, user, out, err);
}

am_status ami_json_load_into(const char *path, size_t max_bytes, ami_json_reader read, const void *user,
                             void *out, am_error *err)
{
    json_t *doc = NULL;
    am_status s = ami_json_load_file(path, max_bytes, &doc, err);
    return ami_json_read(s, doc, path, read, user, out, err);
}

/* ---- getters ---- */

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

const char *ami_json_type_name(const json_t *v)
{
    return v ? ami_json_type_want(json_typeof(v)) : "nothing";
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

/* ---- writing: one escaper, one number format, one layout ---- */

static size_t ami_utf8_seq_len(const unsigned char *s, size_t n)
{
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 (RFC 3629). */
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

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

/* The one string escaper of every JSON file we write; s must be valid UTF-8 (checked by the
 * callers, which name the value). */
static void ami_json_escape(am_buf *b, const char *s, size_t n)
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

void ami_jw_begin(ami_jw *w, am_buf *out, unsigned flags)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->flags = flags;
}

/* The path of the value about to be written (key inside an object), for error messages. */
static ami_jpath ami_jw_path(const ami_jw *w, const char *key)
{
    ami_jpath p = {{0}};
    for (int d = 1; d < w->depth; d++) {
        const ami_jw_level *parent = &w->stack[d - 1];
        if (parent->is_object) p = ami_json_path_key(p.s, w->stack[d].key);
        else p = ami_json_path_index(p.s, parent->count - 1);
    }
    /* Errors are raised before the value is counted: its index is the count so far. */
    if (w->depth > 0 && !w->stack[w->depth - 1].is_object)
        p = ami_json_path_index(p.s, w->stack[w->depth - 1].count);
    else if (key)
        p = ami_json_path_key(p.s, key);
    return p;
}

static void ami_jw_fail(ami_jw *w, am_status code, const char *key, const char *what)
{
    if (w->status != AM_OK) return;
    w->status = code;
    snprintf(w->info, sizeof w->info, "%s: %s", ami_path_name(ami_jw_path(w, key).s), what);
}

static bool ami_jw_compact(const ami_jw *w) { return (w->flags & AMI_JSON_COMPACT) != 0; }

static void ami_jw_newline(ami_jw *w, int depth)
{
    am_buf_append(w->out, "\n", 1);
    for (int i = 0; i < depth; i++) am_buf_append(w->out, "  ", 2);
}

/* Separator, indentation and "key": before a value at the current level. */
static void ami_jw_lead(ami_jw *w, const char *key)
{
    if (w->depth == 0) return;
    ami_jw_level *l = &w->stack[w->depth - 1];
    if (l->count) am_buf_append(w->out, ",", 1);
    if (!ami_jw_compact(w)) {
        if (!l->one_line) ami_jw_newline(w, w->depth);
        else if (l->count) am_buf_append(w->out, " ", 1);
    }
    l->count++;
    if (l->is_object) {
        assert(key);
        ami_json_escape(w->out, key, strlen(key));
        am_buf_append(w->out, ami_jw_compact(w) ? ":" : ": ", ami_jw_compact(w) ? 1 : 2);
    }
}

bool ami_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = ami_utf8_seq_len(p + i, n - i);
        if (k == 0) return false;
        i += k;
    }
    return true;
}

static void ami_jw_open(ami_jw *w, const char *key, bool is_object, bool one_line)
{
    if (w->status != AM_OK) return;
    if (w->depth >= AMI_JW_MAX_DEPTH) {
        ami_jw_fail(w, AM_E_LIMIT, key, "nested too deep to write");
        return;
    }
    if (key && !ami_utf8_valid(key, strlen(key))) {
        ami_jw_fail(w, AM_E_UTF8, NULL, "key not valid UTF-8");
        return;
    }
    bool parent_line = w->depth > 0 && w->stack[w->depth - 1].one_line;
    ami_jw_lead(w, key);
    am_buf_append(w->out, is_object ? "{" : "[", 1);
    w->stack[w->depth++] = (ami_jw_level){.key = key, .is_object = is_object,
                                          .one_line = one_line || parent_line};
}

void ami_jw_object(ami_jw *w, const char *key) { ami_jw_open(w, key, true, false); }
void ami_jw_array(ami_jw *w, const char *key) { ami_jw_open(w, key, false, false); }
void ami_jw_record(ami_jw *w, const char *key) { ami_jw_open(w, key, true, true); }
void ami_jw_row(ami_jw *w, const char *key) { ami_jw_open(w, key, false, true); }

void ami_jw_close(ami_jw *w)
{
    if (w->status != AM_OK) return;
    assert(w->depth > 0);
    ami_jw_level *l = &w->stack[--w->depth];
    if (!ami_jw_compact(w) && !l->one_line && l->count) ami_jw_newline(w, w->depth);
    am_buf_append(w->out, l->is_object ? "}" : "]", 1);
}

/* A scalar's text after its lead; false when the writer already failed. */
static bool ami_jw_scalar_lead(ami_jw *w, const char *key)
{
    if (w->status != AM_OK) return false;
    if (key && w->depth > 0 && w->stack[w->depth - 1].is_object &&
        !ami_utf8_valid(key, strlen(key))) {
        ami_jw_fail(w, AM_E_UTF8, NULL, "key not valid UTF-8");
        return false;
    }
    ami_jw_lead(w, key);
    return true;
}

void ami_jw_number(ami_jw *w, const char *key, double v)
{
    if (w->status != AM_OK) return;
    if (!isfinite(v)) {
        char what[48];
        snprintf(what, sizeof what, "%g is not a JSON number", v);
        ami_jw_fail(w, AM_E_NONFINITE, key, what);
        return;
    }
    if (!ami_jw_scalar_lead(w, key)) return;
    char num[40];
    size_t n = ami_json_format_double(v, num, sizeof num);
    am_buf_append(w->out, num, n);
}

void ami_jw_number_or_null(ami_jw *w, const char *key, double v)
{
    if (isfinite(v)) ami_jw_number(w, key, v);
    else ami_jw_null(w, key);
}

void ami_jw_int(ami_jw *w, const char *key, int64_t v)
{
    if (!ami_jw_scalar_lead(w, key)) return;
    am_buf_printf(w->out, "%lld", (long long)v);
}

void ami_jw_bool(ami_jw *w, const char *key, bool v)
{
    if (!ami_jw_scalar_lead(w, key)) return;
    am_buf_append(w->out, v ? "true" : "false", v ? 4 : 5);
}

void ami_jw_null(ami_jw *w, const char *key)
{
    if (!ami_jw_scalar_lead(w, key)) return;
    am_buf_append(w->out, "null", 4);
}

void ami_jw_string(ami_jw *w, const char *key, const char *s)
{
    if (!s) {
        ami_jw_null(w, key);
        return;
    }
    ami_jw_string_n(w, key, s, strlen(s));
}

void ami_jw_string_n(ami_jw *w, const char *key, const char *s, size_t n)
{
    if (w->status != AM_OK) return;
    if (!ami_utf8_valid(s, n)) {
        ami_jw_fail(w, AM_E_UTF8, key, "not valid UTF-8");
        return;
    }
    if (!ami_jw_scalar_lead(w, key)) return;
    ami_json_escape(w->out, s, n);
}

void ami_jw_strings(ami_jw *w, const char *key, const char *const *s, size_t count)
{
    ami_jw_row(w, key);
    for (size_t i = 0; i < count; i++) ami_jw_string(w, NULL, s[i] ? s[i] : "");
    ami_jw_close(w);
}

/* The most scalars a table of rows may hold and still be written on one line. */
#define AMI_JSON_INLINE_TABLE 6

static void ami_jw_numbers_rec(ami_jw *w, const char *key, const double **data, size_t ndim,
                               const size_t *shape, size_t level)
{
    if (level == ndim) {
        ami_jw_number(w, key, *(*data)++);
        return;
    }
    /* Rows of scalars stay on one line, and so does a tiny table (a 3x2 limit). */
    size_t below = 1;
    for (size_t k = level; k < ndim; k++) below *= shape[k];
    bool one_line = level + 1 == ndim || (level + 2 == ndim && below <= AMI_JSON_INLINE_TABLE);
    ami_jw_open(w, key, false, one_line);
    for (size_t i = 0; i < shape[level] && w->status == AM_OK; i++)
        ami_jw_numbers_rec(w, NULL, data, ndim, shape, level + 1);
    ami_jw_close(w);
}

void ami_jw_numbers(ami_jw *w, const char *key, const double *data, size_t ndim,
                    const size_t *shape)
{
    assert(ndim >= 1);
    ami_jw_numbers_rec(w, key, &data, ndim, shape, 0);
}

static bool ami_is_container(const json_t *v) { return json_is_array(v) || json_is_object(v); }

/* The layout rule of trees, the same as ami_jw_numbers': a container of scalars is one line,
 * and so is an array of at most AMI_JSON_INLINE_TABLE scalars in rows. */
static bool ami_tree_one_line(const json_t *v)
{
    size_t scalars = 0;
    bool nested = false;
    if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
            if (ami_is_container(e)) return false;
        return true;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (json_is_object(e)) return false;
        if (!json_is_array(e)) continue;
        nested = true;
        for (size_t k = 0; k < json_array_size(e); k++)
            if (ami_is_container(json_array_get(e, k))) return false;
        scalars += json_array_size(e);
    }
    return !nested || scalars <= AMI_JSON_INLINE_TABLE;
}

static void ami_jw_tree(ami_jw *w, const char *key, const json_t *v)
{
    if (w->status != AM_OK) return;
    switch (json_typeof(v)) {
    case JSON_NULL: ami_jw_null(w, key); break;
    case JSON_TRUE: ami_jw_bool(w, key, true); break;
    case JSON_FALSE: ami_jw_bool(w, key, false); break;
    case JSON_INTEGER: ami_jw_int(w, key, (int64_t)json_integer_value(v)); break;
    case JSON_REAL: ami_jw_number(w, key, json_real_value(v)); break;
    case JSON_STRING: ami_jw_string_n(w, key, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        ami_jw_open(w, key, json_is_object(v), ami_tree_one_line(v));
        if (json_is_object(v)) {
            const char *k;
            json_t *e;
            json_object_foreach((json_t *)v, k, e) ami_jw_tree(w, k, e);
        } else {
            for (size_t i = 0; i < json_array_size(v); i++)
                ami_jw_tree(w, NULL, json_array_get(v, i));
        }
        ami_jw_close(w);
        break;
    }
    }
}

void ami_jw_value(ami_jw *w, const char *key, const json_t *v)
{
    assert(v);
    ami_jw_tree(w, key, v);
}

void ami_jw_extra(ami_jw *w, const char *extra, const char *const *skip)
{
    if (w->status != AM_OK || !extra || !extra[0]) return;
    assert(w->depth > 0 && w->stack[w->depth - 1].is_object);
    json_error_t je;
    json_t *e = json_loads(extra, JSON_REJECT_DUPLICATES, &je);
    if (!e || !json_is_object(e)) {
        json_decref(e);
        ami_jw_fail(w, AM_E_VALUE, NULL, "extra_json is not a JSON object");
        return;
    }
    const char *key;
    json_t *val;
    json_object_foreach(e, key, val) {
        bool skipped = false;
        for (size_t i = 0; skip && skip[i] && !skipped; i++) skipped = strcmp(skip[i], key) == 0;
        if (!skipped) ami_jw_tree(w, key, val);
    }
    json_decref(e);
}

am_status ami_jw_finish(ami_jw *w, am_error *err)
{
    if (w->status != AM_OK) return AM_FAIL(err, w->status, "%s", w->info);
    AMI_CHECK(err, w->depth == 0, AM_E_INTERNAL, "JSON writer: %d containers left open", w->depth);
    if (!ami_jw_compact(w)) am_buf_append(w->out, "\n", 1);
    AMI_CHECK(err, !w->out->failed, AM_E_NOMEM, "serializing JSON");
    return AM_OK;
}

am_status ami_jw_write_file(ami_jw *w, const char *path, am_error *err)
{
    am_status s = ami_jw_finish(w, err);
    if (s == AM_OK) s = am_file_write(path, w->out->data, w->out->len, err);
    if (s != AM_OK) am_error_set_file(err, path);
    return s;
}

am_status ami_jw_take_string(ami_jw *w, char **out, am_error *err)
{
    *out = NULL;
    am_status s = ami_jw_finish(w, err);
    if (s == AM_OK && !w->out->data) {
        w->out->data = am_strdup("");
        if (!w->out->data) s = AM_FAIL(err, AM_E_NOMEM, "serializing JSON");
    }
    if (s != AM_OK) {
        am_buf_free(w->out);
        return s;
    }
    *out = w->out->data;
    *w->out = (am_buf){0};
    return AM_OK;
}

am_status ami_json_dump_string(const json_t *v, unsigned flags, char **out, am_error *err)
{
    AMI_CHECK(err, v, AM_E_INTERNAL, "nothing to dump");
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, flags);
    ami_jw_value(&w, NULL, v);
    return ami_jw_take_string(&w, out, err);
}
