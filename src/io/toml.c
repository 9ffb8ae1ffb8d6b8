/* The TOML reader (toml_internal.h). A recursive-descent parser over one buffer; values are
 * built into a tree of ami_toml nodes. Positions are bytes from the line start + 1.
 *
 * This work is based on the TOML v1.0.0 specification (toml.io/en/v1.0.0); where it leaves
 * room, this reader follows tomli (Python's reference-quality parser): a lone CR is an error,
 * control characters other than tab are refused in strings and comments, and integers that
 * do not fit in 64 bits are errors rather than being rounded.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "io/toml_internal.h"

enum { AMI_HOW_IMPLICIT, AMI_HOW_HEADER, AMI_HOW_DOTTED, AMI_HOW_INLINE, AMI_HOW_AOT };
#define AMI_TOML_MAX_DEPTH 64
#define AMI_TOML_MAX_VALUES 1000000
/* Tables of more keys than this look their keys up by hash. */
#define AMI_TOML_INDEX_FROM 16

typedef struct {
    const char *s;
    size_t n, i;
    uint32_t line;
    size_t line_start;
    const char *source;
    am_error *err;
    size_t values;
    am_status status; /* the failure of the last helper that returns a pointer */
} ami_tp;

const char *ami_toml_kind_name(ami_toml_kind kind)
{
    static const char *const names[AMI_TOML_KIND_COUNT] = {"a string", "an integer", "a float",
                                                           "a boolean", "an array", "a table"};
    return (unsigned)kind < AMI_TOML_KIND_COUNT ? names[kind] : "a value";
}

static am_status ami_tp_fail(ami_tp *p, am_status code, size_t at, const char *fmt, ...)
    AM_PRINTF(4, 5);
static am_status ami_tp_fail(ami_tp *p, am_status code, size_t at, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* `at` is on the current line or later on it (never before line_start). */
    uint32_t col = (uint32_t)(at >= p->line_start ? at - p->line_start + 1 : 1);
    p->status = code;
    return AM_FAIL_AT(p->err, code, p->source, p->line, col, "%s", msg);
}

static void ami_node_clear(ami_toml *v)
{
    if (v->kind == AMI_TOML_STRING) am_free(v->str);
    if (v->kind == AMI_TOML_ARRAY || v->kind == AMI_TOML_TABLE) {
        for (size_t k = 0; k < v->count; k++) {
            ami_node_clear(&v->items[k]);
            if (v->keys) am_free(v->keys[k]);
        }
        am_free(v->items);
        am_free(v->keys);
    }
    ami_names_free(v->index);
    am_free(v->index);
    memset(v, 0, sizeof *v);
}

void ami_toml_free(ami_toml *doc)
{
    if (!doc) return;
    ami_node_clear(doc);
    am_free(doc);
}

/* Member key[0..key_len) of a table, or NULL: by hash once the table has its index. */
static ami_toml *ami_member(const ami_toml *t, const char *key, size_t key_len)
{
    if (t->index) {
        int32_t k = ami_names_find(t->index, key, key_len);
        return k >= 0 ? &t->items[k] : NULL;
    }
    for (size_t k = 0; k < t->count; k++)
        if (strlen(t->keys[k]) == key_len && memcmp(t->keys[k], key, key_len) == 0) return &t->items[k];
    return NULL;
}

const ami_toml *ami_toml_get(const ami_toml *t, const char *key)
{
    if (!t || t->kind != AMI_TOML_TABLE || !key) return NULL;
    return ami_member(t, key, strlen(key));
}

bool ami_toml_number(const ami_toml *v, double *out)
{
    if (!v) return false;
    if (v->kind == AMI_TOML_INT) {
        *out = (double)v->i;
        return true;
    }
    if (v->kind == AMI_TOML_FLOAT) {
        *out = v->f;
        return true;
    }
    return false;
}

/* Capacity is kept as the next power of two >= count: no field needed. */
static size_t ami_cap_of(size_t count)
{
    size_t c = 4;
    while (c < count) c *= 2;
    return c;
}

/* Keep a table's keys [0..n] in its index, made once it has more than AMI_TOML_INDEX_FROM:
 * every new key is first looked up (a duplicate is an error), which would be quadratic in a
 * table of a million keys. False when out of memory (the parse then fails as a whole). */
static bool ami_index_key(ami_toml *t, size_t n)
{
    int32_t prev;
    if (!t->index) {
        if (n + 1 <= AMI_TOML_INDEX_FROM) return true;
        t->index = am_alloc(sizeof *t->index);
        if (!t->index) return false;
        memset(t->index, 0, sizeof *t->index);
        for (size_t q = 0; q < n; q++)
            if (ami_names_add(t->index, t->keys[q], strlen(t->keys[q]), (int32_t)q, &prev) != AM_OK) return false;
    }
    return ami_names_add(t->index, t->keys[n], strlen(t->keys[n]), (int32_t)n, &prev) == AM_OK;
}

/* Append a child slot; returns it zeroed, or NULL (error set). */
static ami_toml *ami_push(ami_tp *p, ami_toml *parent, const char *key, size_t key_len, size_t at)
{
    if (++p->values > AMI_TOML_MAX_VALUES) {
        ami_tp_fail(p, AM_E_LIMIT, at, "more than %d values", AMI_TOML_MAX_VALUES);
        return NULL;
    }
    size_t n = parent->count;
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        size_t cap = ami_cap_of(n + 1);
        ami_toml *items = am_realloc_array(parent->items, cap, sizeof *items);
        if (!items) {
            p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML values");
            return NULL;
        }
        parent->items = items;
        if (parent->kind == AMI_TOML_TABLE) {
            char **keys = am_realloc_array(parent->keys, cap, sizeof *keys);
            if (!keys) {
                p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML keys");
                return NULL;
            }
            parent->keys = keys;
        }
    }
    if (parent->kind == AMI_TOML_TABLE) {
        char *k = am_strndup(key, key_len);
        if (!k) {
            p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML key");
            return NULL;
        }
        parent->keys[n] = k;
        if (!ami_index_key(parent, n)) {
            am_free(k);
            p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML key index");
            return NULL;
        }
    }
    ami_toml *v = &parent->items[n];
    memset(v, 0, sizeof *v);
    parent->count = n + 1;
    v->line = p->line;
    v->col = (uint32_t)(at - p->line_start + 1);
    return v;
}

static ami_toml *ami_find(ami_toml *t, const char *key, size_t key_len)
{
    return ami_member(t, key, key_len);
}

/* ---- lexing ---- */
static int ami_peek(const ami_tp *p, size_t ahead)
{
    return p->i + ahead < p->n ? (unsigned char)p->s[p->i + ahead] : -1;
}

static void ami_skip_ws(ami_tp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t')) p->i++;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t ami_utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) return 1;
    size_t len;
    uint32_t cp;
    if ((s[0] & 0xE0) == 0xC0) len = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0) len = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0) len = 4, cp = s[0] & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* A newline at p->i (LF or CRLF): consume it and start a new line. */
static bool ami_newline(ami_tp *p)
{
    if (ami_peek(p, 0) == '\n') {
        p->i++;
    } else if (ami_peek(p, 0) == '\r' && ami_peek(p, 1) == '\n') {
        p->i += 2;
    } else {
        return false;
    }
    p->line++;
    p->line_start = p->i;
    return true;
}

/* A comment from '#' to the end of the line (the newline is left). */
static am_status ami_comment(ami_tp *p)
{
    if (ami_peek(p, 0) != '#') return AM_OK;
    p->i++;
    while (p->i < p->n && p->s[p->i] != '\n') {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '\r' && ami_peek(p, 1) == '\n') break;
        if ((c < 0x20 && c != '\t') || c == 0x7F)
            return ami_tp_fail(p, AM_E_SYNTAX, p->i, "control character 0x%02X in a comment", c);
        size_t k = ami_utf8_seq((const unsigned char *)p->s + p->i, p->n - p->i);
        if (!k) return ami_tp_fail(p, AM_E_UTF8, p->i, "invalid UTF-8 in a comment");
        p->i += k;
    }
    return AM_OK;
}

/* Whitespace, comments and newlines (inside arrays). */
static am_status ami_skip_ws_nl(ami_tp *p)
{
    for (;;) {
        ami_skip_ws(p);
        AMI_TRY(ami_comment(p));
        if (!ami_newline(p)) {
            if (ami_peek(p, 0) == '\r')
                return ami_tp_fail(p, AM_E_SYNTAX, p->i, "a carriage return without a line feed");
            return AM_OK;
        }
    }
}

/* The end of a line after a key/value pair or a header: spaces, a comment, then a newline. */
static am_status ami_line_end(ami_tp *p)
{
    ami_skip_ws(p);
    AMI_TRY(ami_comment(p));
    if (p->i >= p->n || ami_newline(p)) return AM_OK;
    int c = ami_peek(p, 0);
    if (c == '\r') return ami_tp_fail(p, AM_E_SYNTAX, p->i, "a carriage return without a line feed");
    return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected the end of the line, found '%c'",
                       c >= 0x20 && c < 0x7F ? c : '?');
}

/* ---- strings ---- */
static void ami_utf8_put(char *out, size_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* Room for 4 more bytes (one UTF-8 character) and the NUL in a growing string buffer. */
static bool ami_str_room(char **buf, size_t *cap, size_t o)
{
    if (o + 5 <= *cap) return true;
    size_t nc = *cap * 2 > o + 5 ? *cap * 2 : o + 5;
    char *nb = am_realloc(*buf, nc);
    if (!nb) return false;
    *buf = nb;
    *cap = nc;
    return true;
}

/* A string starting at p->i (at its opening quote). multi_ok: multi-line forms allowed (values,
 * not keys). The decoded text is am_alloc'd into *out (never longer than the source). */
static am_status ami_string(ami_tp *p, bool multi_ok, char **out, size_t *out_len)
{
    const size_t start = p->i;
    const uint32_t start_line = p->line;
    const size_t start_ls = p->line_start;
    const char q = p->s[p->i];
    const bool literal = q == '\'';
    bool multi = multi_ok && ami_peek(p, 1) == q && ami_peek(p, 2) == q;
    p->i += multi ? 3 : 1;
    if (multi) ami_newline(p); /* a newline right after the opening quotes is trimmed */
    size_t cap = 32, o = 0;
    char *buf = am_alloc(cap);
    if (!buf) return p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML string");
    am_status st = AM_OK;
    for (;;) {
        if (!ami_str_room(&buf, &cap, o)) {
            st = p->status = AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML string");
            break;
        }
        if (p->i >= p->n) {
            p->line = start_line;
            p->line_start = start_ls;
            st = ami_tp_fail(p, AM_E_SYNTAX, start, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == (unsigned char)q) {
            if (!multi) {
                p->i++;
                break;
            }
            if (ami_peek(p, 1) == q && ami_peek(p, 2) == q) {
                /* Up to two quotes may stand right before the closing three. */
                size_t extra = 0;
                while (extra < 2 && ami_peek(p, 3 + (size_t)extra) == q) extra++;
                for (size_t k = 0; k < extra; k++) buf[o++] = q;
                p->i += 3 + extra;
                break;
            }
            buf[o++] = (char)c;
            p->i++;
            continue;
        }
        if (c == '\n' || (c == '\r' && ami_peek(p, 1) == '\n')) {
            if (!multi) {
                st = ami_tp_fail(p, AM_E_SYNTAX, p->i, "newline inside a one-line string");
                break;
            }
            if (c == '\r') buf[o++] = '\r';
            buf[o++] = '\n';
            ami_newline(p);
            continue;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
            st = ami_tp_fail(p, AM_E_SYNTAX, p->i, "control character 0x%02X in a string", c);
            break;
        }
        if (c == '\\' && !literal) {
            int e = ami_peek(p, 1);
            size_t at = p->i;
            p->i += 2;
            switch (e) {
            case 'b': buf[o++] = '\b'; continue;
            case 't': buf[o++] = '\t'; continue;
            case 'n': buf[o++] = '\n'; continue;
            case 'f': buf[o++] = '\f'; continue;
            case 'r': buf[o++] = '\r'; continue;
            case '"': buf[o++] = '"'; continue;
            case '\\': buf[o++] = '\\'; continue;
            case 'u':
            case 'U': {
                size_t nd = e == 'u' ? 4 : 8;
                uint32_t cp = 0;
                bool ok = p->i + nd <= p->n;
                for (size_t k = 0; ok && k < nd; k++) {
                    char h = p->s[p->i + k];
                    int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                          : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) ok = false;
                    else cp = cp * 16 + (uint32_t)d;
                }
                if (!ok || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                    st = ami_tp_fail(p, AM_E_SYNTAX, at, "bad \\%c escape", e);
                    break;
                }
                p->i += nd;
                /* An escape never yields more bytes than it took (\uXXXX = 6 -> at most 3). */
                ami_utf8_put(buf, &o, cp);
                continue;
            }
            default:
                if (multi && (e == ' ' || e == '\t' || e == '\n' || e == '\r')) {
                    /* Line-ending backslash: trim the whitespace and newlines that follow. */
                    p->i = at + 1;
                    ami_skip_ws(p);
                    if (!ami_newline(p)) {
                        st = ami_tp_fail(p, AM_E_SYNTAX, at, "a backslash must end the line here");
                        break;
                    }
                    for (;;) {
                        ami_skip_ws(p);
                        if (!ami_newline(p)) break;
                    }
                    continue;
                }
                st = ami_tp_fail(p, AM_E_SYNTAX, at, "unknown escape '\\%c'",
                                 e >= 0x20 && e < 0x7F ? e : '?');
                break;
            }
            break;
        }
        size_t k = ami_utf8_seq((const unsigned char *)p->s + p->i, p->n - p->i);
        if (!k) {
            st = ami_tp_fail(p, AM_E_UTF8, p->i, "invalid UTF-8 in a string");
            break;
        }
        memcpy(buf + o, p->s + p->i, k);
        o += k;
        p->i += k;
    }
    if (st != AM_OK) {
        am_free(buf);
        return st;
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return AM_OK;
}

/* ---- keys ---- */
static bool ami_bare_key_char(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

typedef struct {
    char *part[AMI_TOML_MAX_DEPTH];
    size_t len[AMI_TOML_MAX_DEPTH];
    size_t count;
    size_t at;
} ami_key;

static void ami_key_clear(ami_key *k)
{
    for (size_t i = 0; i < k->count; i++) am_free(k->part[i]);
    k->count = 0;
}

static am_status ami_parse_key(ami_tp *p, ami_key *k)
{
    k->count = 0;
    k->at = p->i;
    for (;;) {
        ami_skip_ws(p);
        if (k->count == AMI_TOML_MAX_DEPTH) {
            ami_key_clear(k);
            return ami_tp_fail(p, AM_E_LIMIT, p->i, "a key with more than %d parts", AMI_TOML_MAX_DEPTH);
        }
        int c = ami_peek(p, 0);
        if (c == '"' || c == '\'') {
            am_status st = ami_string(p, false, &k->part[k->count], &k->len[k->count]);
            if (st != AM_OK) {
                ami_key_clear(k);
                return st;
            }
            k->count++;
        } else if (ami_bare_key_char(c)) {
            size_t s = p->i;
            while (ami_bare_key_char(ami_peek(p, 0))) p->i++;
            k->part[k->count] = am_strndup(p->s + s, p->i - s);
            if (!k->part[k->count]) {
                ami_key_clear(k);
                return AM_FAIL_AT(p->err, AM_E_NOMEM, p->source, 0, 0, "TOML key");
            }
            k->len[k->count++] = p->i - s;
        } else {
            ami_key_clear(k);
            if (c < 0) return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected a key, found the end of the file");
            return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected a key, found '%c'",
                               c >= 0x20 && c < 0x7F ? c : '?');
        }
        ami_skip_ws(p);
        if (ami_peek(p, 0) != '.') return AM_OK;
        p->i++;
    }
}

/* ---- numbers ---- */
static bool ami_is_digit(int c) { return c >= '0' && c <= '9'; }

/* Digits with single underscores between them, in the given base; appended to buf without the
 * underscores. Returns the count of digits, 0 on a malformed run. */
static size_t ami_digits(ami_tp *p, int base, char *buf, size_t *bn, size_t cap)
{
    size_t count = 0;
    bool last_us = true;
    for (;;) {
        int c = ami_peek(p, 0);
        bool ok = base == 16 ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                             : (c >= '0' && c < '0' + (base < 10 ? base : 10));
        if (ok) {
            if (*bn + 1 >= cap) return 0;
            buf[(*bn)++] = (char)c;
            count++;
            last_us = false;
            p->i++;
        } else if (c == '_') {
            if (last_us) return 0;
            last_us = true;
            p->i++;
        } else {
            break;
        }
    }
    return last_us && count ? 0 : count;
}

static am_status ami_number(ami_tp *p, ami_toml *v)
{
    const size_t start = p->i;
    char buf[128];
    size_t bn = 0;
    int c = ami_peek(p, 0);
    bool sign = c == '+' || c == '-';
    if (sign) {
        buf[bn++] = (char)c;
        p->i++;
    }
    /* inf / nan */
    if (ami_peek(p, 0) == 'i' || ami_peek(p, 0) == 'n') {
        const char *w = p->s + p->i;
        if (p->i + 3 <= p->n && (memcmp(w, "inf", 3) == 0 || memcmp(w, "nan", 3) == 0) &&
            !ami_bare_key_char(ami_peek(p, 3))) {
            v->kind = AMI_TOML_FLOAT;
            v->f = w[0] == 'i' ? INFINITY : NAN;
            if (c == '-') v->f = -v->f;
            p->i += 3;
            return AM_OK;
        }
        return ami_tp_fail(p, AM_E_SYNTAX, start, "expected a value");
    }
    if (!sign && ami_peek(p, 0) == '0' && (ami_peek(p, 1) == 'x' || ami_peek(p, 1) == 'o' || ami_peek(p, 1) == 'b')) {
        int base = ami_peek(p, 1) == 'x' ? 16 : ami_peek(p, 1) == 'o' ? 8 : 2;
        p->i += 2;
        if (!ami_digits(p, base, buf, &bn, sizeof buf))
            return ami_tp_fail(p, AM_E_SYNTAX, start, "malformed integer");
        buf[bn] = '\0';
        errno = 0;
        unsigned long long u = strtoull(buf, NULL, base);
        if (errno == ERANGE || u > (unsigned long long)INT64_MAX)
            return ami_tp_fail(p, AM_E_VALUE, start, "integer does not fit in 64 bits");
        v->kind = AMI_TOML_INT;
        v->i = (int64_t)u;
        return AM_OK;
    }
    if (!ami_is_digit(ami_peek(p, 0))) return ami_tp_fail(p, AM_E_SYNTAX, start, "expected a value");
    size_t int_start = bn;
    size_t nd = ami_digits(p, 10, buf, &bn, sizeof buf);
    if (!nd) return ami_tp_fail(p, AM_E_SYNTAX, start, "malformed number");
    /* Dates and times start with digits too: 1979-05-27, 07:32:00. */
    if ((ami_peek(p, 0) == '-' && nd == 4) || (ami_peek(p, 0) == ':' && nd == 2))
        return ami_tp_fail(p, AM_E_UNSUPPORTED, start, "dates and times are not supported");
    if (nd > 1 && buf[int_start] == '0') return ami_tp_fail(p, AM_E_SYNTAX, start, "leading zero in a number");
    bool is_float = false;
    if (ami_peek(p, 0) == '.') {
        is_float = true;
        buf[bn++] = '.';
        p->i++;
        if (!ami_digits(p, 10, buf, &bn, sizeof buf)) return ami_tp_fail(p, AM_E_SYNTAX, start, "malformed fraction");
    }
    if (ami_peek(p, 0) == 'e' || ami_peek(p, 0) == 'E') {
        is_float = true;
        buf[bn++] = 'e';
        p->i++;
        if (ami_peek(p, 0) == '+' || ami_peek(p, 0) == '-') {
            buf[bn++] = (char)ami_peek(p, 0);
            p->i++;
        }
        if (!ami_digits(p, 10, buf, &bn, sizeof buf)) return ami_tp_fail(p, AM_E_SYNTAX, start, "malformed exponent");
    }
    if (ami_bare_key_char(ami_peek(p, 0)) || ami_peek(p, 0) == '.')
        return ami_tp_fail(p, AM_E_SYNTAX, start, "malformed number");
    buf[bn] = '\0';
    errno = 0;
    if (is_float) {
        v->kind = AMI_TOML_FLOAT;
        v->f = strtod(buf, NULL);
        if (isinf(v->f)) return ami_tp_fail(p, AM_E_VALUE, start, "float out of range");
    } else {
        long long x = strtoll(buf, NULL, 10);
        if (errno == ERANGE) return ami_tp_fail(p, AM_E_VALUE, start, "integer does not fit in 64 bits");
        v->kind = AMI_TOML_INT;
        v->i = (int64_t)x;
    }
    return AM_OK;
}

/* ---- values ---- */
static am_status ami_value(ami_tp *p, ami_toml *v, int depth);

static am_status ami_array(ami_tp *p, ami_toml *v, int depth)
{
    v->kind = AMI_TOML_ARRAY;
    p->i++; /* '[' */
    for (;;) {
        AMI_TRY(ami_skip_ws_nl(p));
        if (ami_peek(p, 0) == ']') {
            p->i++;
            return AM_OK;
        }
        ami_toml *item = ami_push(p, v, NULL, 0, p->i);
        if (!item) return p->status;
        AMI_TRY(ami_value(p, item, depth + 1));
        AMI_TRY(ami_skip_ws_nl(p));
        int c = ami_peek(p, 0);
        if (c == ',') {
            p->i++;
        } else if (c == ']') {
            p->i++;
            return AM_OK;
        } else {
            if (c < 0) return ami_tp_fail(p, AM_E_SYNTAX, p->i, "unterminated array");
            return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected ',' or ']' in an array");
        }
    }
}

static am_status ami_keyval(ami_tp *p, ami_toml *table, int depth);

static am_status ami_inline_table(ami_tp *p, ami_toml *v, int depth)
{
    v->kind = AMI_TOML_TABLE;
    v->how = AMI_HOW_INLINE;
    p->i++; /* '{' */
    ami_skip_ws(p);
    if (ami_peek(p, 0) == '}') {
        p->i++;
        return AM_OK;
    }
    for (;;) {
        AMI_TRY(ami_keyval(p, v, depth + 1));
        ami_skip_ws(p);
        int c = ami_peek(p, 0);
        if (c == ',') {
            p->i++;
            continue;
        }
        if (c == '}') {
            p->i++;
            return AM_OK;
        }
        return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected ',' or '}' in an inline table");
    }
}

static am_status ami_value(ami_tp *p, ami_toml *v, int depth)
{
    if (depth > AMI_TOML_MAX_DEPTH)
        return ami_tp_fail(p, AM_E_LIMIT, p->i, "values nested deeper than %d", AMI_TOML_MAX_DEPTH);
    v->line = p->line;
    v->col = (uint32_t)(p->i - p->line_start + 1);
    int c = ami_peek(p, 0);
    switch (c) {
    case '"':
    case '\'':
        v->kind = AMI_TOML_STRING;
        return ami_string(p, true, &v->str, &v->str_len);
    case '[': return ami_array(p, v, depth);
    case '{': return ami_inline_table(p, v, depth);
    case 't':
    case 'f': {
        const char *w = p->s + p->i;
        size_t left = p->n - p->i;
        if (left >= 4 && memcmp(w, "true", 4) == 0 && !ami_bare_key_char(ami_peek(p, 4))) {
            v->kind = AMI_TOML_BOOL;
            v->b = true;
            p->i += 4;
            return AM_OK;
        }
        if (left >= 5 && memcmp(w, "false", 5) == 0 && !ami_bare_key_char(ami_peek(p, 5))) {
            v->kind = AMI_TOML_BOOL;
            v->b = false;
            p->i += 5;
            return AM_OK;
        }
        return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected a value");
    }
    default:
        if (c < 0) return ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected a value, found the end of the file");
        return ami_number(p, v);
    }
}

/* Walk (creating) the tables of key parts [0, n) below t. how: what a created table is. */
static am_status ami_descend(ami_tp *p, ami_toml **t, const ami_key *k, size_t n, uint8_t how,
                             bool through_aot)
{
    for (size_t i = 0; i < n; i++) {
        ami_toml *next = ami_find(*t, k->part[i], k->len[i]);
        if (!next) {
            next = ami_push(p, *t, k->part[i], k->len[i], k->at);
            if (!next) return p->status;
            next->kind = AMI_TOML_TABLE;
            next->how = how;
        } else if (next->kind == AMI_TOML_ARRAY && next->how == AMI_HOW_AOT && through_aot) {
            next = &next->items[next->count - 1];
        } else if (next->kind != AMI_TOML_TABLE || next->how == AMI_HOW_INLINE ||
                   (how == AMI_HOW_DOTTED && next->how == AMI_HOW_HEADER)) {
            return ami_tp_fail(p, AM_E_DUPLICATE, k->at, "'%s' is already defined (line %u)",
                               k->part[i], (unsigned)next->line);
        }
        *t = next;
    }
    return AM_OK;
}

static am_status ami_keyval(ami_tp *p, ami_toml *table, int depth)
{
    ami_key k;
    AMI_TRY(ami_parse_key(p, &k));
    am_status st = AM_OK;
    ami_toml *t = table;
    if ((st = ami_descend(p, &t, &k, k.count - 1, AMI_HOW_DOTTED, false)) != AM_OK) goto done;
    ami_skip_ws(p);
    if (ami_peek(p, 0) != '=') {
        st = ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected '=' after the key");
        goto done;
    }
    p->i++;
    ami_skip_ws(p);
    const char *last = k.part[k.count - 1];
    ami_toml *old = ami_find(t, last, k.len[k.count - 1]);
    if (old) {
        st = ami_tp_fail(p, AM_E_DUPLICATE, k.at, "key '%s' is already defined (line %u)", last,
                         (unsigned)old->line);
        goto done;
    }
    ami_toml *v = ami_push(p, t, last, k.len[k.count - 1], p->i);
    if (!v) {
        st = p->status;
        goto done;
    }
    st = ami_value(p, v, depth);
done:
    ami_key_clear(&k);
    return st;
}

static am_status ami_header(ami_tp *p, ami_toml *root, ami_toml **cur)
{
    const size_t at = p->i;
    bool aot = ami_peek(p, 1) == '[';
    p->i += aot ? 2 : 1;
    ami_key k;
    AMI_TRY(ami_parse_key(p, &k));
    am_status st = AM_OK;
    if (ami_peek(p, 0) != ']' || (aot && ami_peek(p, 1) != ']')) {
        st = ami_tp_fail(p, AM_E_SYNTAX, p->i, "expected '%s' to close the table header", aot ? "]]" : "]");
        goto done;
    }
    p->i += aot ? 2 : 1;
    ami_toml *t = root;
    if ((st = ami_descend(p, &t, &k, k.count - 1, AMI_HOW_IMPLICIT, true)) != AM_OK) goto done;
    const char *last = k.part[k.count - 1];
    size_t ll = k.len[k.count - 1];
    ami_toml *x = ami_find(t, last, ll);
    if (aot) {
        if (!x) {
            x = ami_push(p, t, last, ll, at);
            if (!x) {
                st = p->status;
                goto done;
            }
            x->kind = AMI_TOML_ARRAY;
            x->how = AMI_HOW_AOT;
        } else if (x->kind != AMI_TOML_ARRAY || x->how != AMI_HOW_AOT) {
            st = ami_tp_fail(p, AM_E_DUPLICATE, at, "'%s' is already defined (line %u) and is not an array of tables",
                             last, (unsigned)x->line);
            goto done;
        }
        ami_toml *e = ami_push(p, x, NULL, 0, at);
        if (!e) {
            st = p->status;
            goto done;
        }
        e->kind = AMI_TOML_TABLE;
        e->how = AMI_HOW_HEADER;
        *cur = e;
    } else {
        if (!x) {
            x = ami_push(p, t, last, ll, at);
            if (!x) {
                st = p->status;
                goto done;
            }
            x->kind = AMI_TOML_TABLE;
        } else if (x->kind != AMI_TOML_TABLE || x->how != AMI_HOW_IMPLICIT) {
            st = ami_tp_fail(p, AM_E_DUPLICATE, at, "table '%s' is already defined (line %u)", last,
                             (unsigned)x->line);
            goto done;
        }
        x->how = AMI_HOW_HEADER;
        x->line = p->line;
        x->col = (uint32_t)(at - p->line_start + 1);
        *cur = x;
    }
done:
    ami_key_clear(&k);
    return st;
}

am_status ami_toml_parse(const char *text, size_t len, const char *source, ami_toml **out,
                         am_error *err)
{
    assert(out);
    *out = NULL;
    ami_tp p = {.s = text ? text : "", .n = text ? len : 0, .line = 1, .source = source, .err = err};
    if (p.n >= 3 && memcmp(p.s, "\xEF\xBB\xBF", 3) == 0) p.i = p.line_start = 3;
    ami_toml *root = am_alloc(sizeof *root);
    if (!root) return AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "TOML document");
    root->kind = AMI_TOML_TABLE;
    root->how = AMI_HOW_HEADER;
    root->line = root->col = 1;
    ami_toml *cur = root;
    am_status st = AM_OK;
    for (;;) {
        if ((st = ami_skip_ws_nl(&p)) != AM_OK) break;
        if (p.i >= p.n) break;
        if (p.s[p.i] == '[') {
            st = ami_header(&p, root, &cur);
        } else {
            st = ami_keyval(&p, cur, 0);
        }
        if (st == AM_OK) st = ami_line_end(&p);
        if (st != AM_OK) break;
    }
    if (st != AM_OK) {
        ami_toml_free(root);
        return st;
    }
    *out = root;
    return AM_OK;
}
