/* Delimited text shared by the CSV and TSV readers (trackers_internal.h). Lines end in LF or
 * CRLF; quoted fields may hold the delimiter (not newlines: no tracker writes them). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

void ami_csv_init(ami_csv *c, const char *text, size_t len, char delim, bool quotes)
{
    memset(c, 0, sizeof *c);
    c->s = text;
    c->n = len;
    c->delim = delim;
    c->quotes = quotes;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) c->i = 3;
}

void ami_csv_free(ami_csv *c)
{
    am_free(c->f);
    c->f = NULL;
    c->count = c->cap = 0;
}

static bool ami_csv_push(ami_csv *c, const char *p, size_t len)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        ami_field *f = am_realloc_array(c->f, cap, sizeof *f);
        if (!f) return false;
        c->f = f;
        c->cap = cap;
    }
    c->f[c->count].p = p;
    c->f[c->count].len = len;
    c->count++;
    return true;
}

bool ami_csv_row(ami_csv *c, am_status *st, const char *source, am_error *err)
{
    *st = AM_OK;
    c->count = 0;
    if (c->i >= c->n) return false;
    c->line++;
    size_t end = c->i;
    while (end < c->n && c->s[end] != '\n') end++;
    size_t stop = end > c->i && c->s[end - 1] == '\r' ? end - 1 : end;
    size_t i = c->i;
    const size_t row = i;
    c->i = end < c->n ? end + 1 : end;
    if (stop == i) return true; /* blank line: no fields */
    for (;;) {
        size_t a = i;
        if (c->quotes && i < stop && c->s[i] == '"') {
            size_t q = i + 1;
            while (q < stop && !(c->s[q] == '"' && (q + 1 >= stop || c->s[q + 1] != '"'))) q += c->s[q] == '"' ? 2 : 1;
            if (q >= stop) {
                *st = AM_FAIL_AT(err, AM_E_SYNTAX, source, c->line, (uint32_t)(a - row + 1),
                                 "unterminated quoted field");
                return false;
            }
            if (!ami_csv_push(c, c->s + a + 1, q - a - 1)) {
                *st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "CSV fields");
                return false;
            }
            i = q + 1;
            while (i < stop && c->s[i] != c->delim) i++;
        } else {
            while (i < stop && c->s[i] != c->delim) i++;
            if (!ami_csv_push(c, c->s + a, i - a)) {
                *st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "CSV fields");
                return false;
            }
        }
        if (i >= stop) break;
        i++; /* the delimiter */
        if (i == stop) {
            if (!ami_csv_push(c, c->s + i, 0)) {
                *st = AM_FAIL_AT(err, AM_E_NOMEM, source, 0, 0, "CSV fields");
                return false;
            }
            break;
        }
    }
    return true;
}

bool ami_csv_data_row(ami_csv *c, size_t cells, am_status *st, const char *source, am_error *err)
{
    do {
        if (!ami_csv_row(c, st, source, err)) return false;
    } while (c->count == 0);
    if (c->count != cells) {
        *st = AM_FAIL_AT(err, AM_E_SHAPE, source, c->line, 0, "row has %zu cells, the header %zu", c->count, cells);
        return false;
    }
    return true;
}

static void ami_trim(const ami_field *f, const char **p, size_t *n)
{
    *p = f->p;
    *n = f->len;
    while (*n && (**p == ' ' || **p == '\t')) (*p)++, (*n)--;
    while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t')) (*n)--;
}

bool ami_field_is(const ami_field *f, const char *s, bool nocase)
{
    const char *p;
    size_t n;
    ami_trim(f, &p, &n);
    return strlen(s) == n && (nocase ? strncasecmp(p, s, n) == 0 : memcmp(p, s, n) == 0);
}

bool ami_field_number(const ami_field *f, double *out, bool *empty)
{
    const char *p;
    size_t n;
    ami_trim(f, &p, &n);
    *empty = n == 0;
    if (n == 0) {
        *out = NAN;
        return true;
    }
    char buf[64];
    if (n >= sizeof buf) return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    const char *b = buf + (buf[0] == '+' || buf[0] == '-');
    if (strcasecmp(b, "nan") == 0) {
        *out = NAN;
        *empty = true;
        return true;
    }
    if (strcasecmp(b, "inf") == 0 || strcasecmp(b, "infinity") == 0) {
        *out = buf[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    /* strtod would also take hex floats; real files hold decimals. */
    for (const char *q = b; *q; q++)
        if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-'))
            return false;
    char *end = NULL;
    *out = strtod(buf, &end);
    return end && *end == '\0' && end != buf;
}

char *ami_field_dup(const ami_field *f)
{
    const char *p;
    size_t n;
    ami_trim(f, &p, &n);
    return am_strndup(p, n);
}

char **ami_names_dup(const char *const *names, size_t n)
{
    char **s = am_alloc_array(n ? n : 1, sizeof *s);
    if (!s) return NULL;
    for (size_t k = 0; k < n; k++)
        if (!(s[k] = am_strdup(names[k]))) {
            ami_strings_free(s, k);
            return NULL;
        }
    return s;
}

void ami_axes_to_world(char up, const double in[3], double out[3])
{
    if (up == 'y') {
        /* OpenSim: X forward, Y up, Z right -> Z up, forward = -Y, left = +X. */
        double x = in[0], y = in[1], z = in[2];
        out[0] = -z;
        out[1] = -x;
        out[2] = y;
    } else {
        out[0] = in[0], out[1] = in[1], out[2] = in[2];
    }
}

am_status ami_rows_budget(const char *src, uint32_t line, size_t rows, double row_bytes, am_error *err)
{
    double need = (double)rows * row_bytes;
    am_status st = AMI_BUDGET_CHECK(err, src, need >= 1.8e19 ? UINT64_MAX : (uint64_t)need, AMI_IMPORT_BUDGET,
                                    "%zu rows of %.0f bytes", rows, row_bytes);
    if (st != AM_OK && err) err->line = line;
    return st;
}

am_status ami_header_index(ami_header *h, const ami_field *f, size_t n)
{
    memset(h, 0, sizeof *h);
    size_t longest = 0;
    if (ami_names_reserve(&h->map, n) != AM_OK) return AM_E_NOMEM;
    for (size_t k = 0; k < n; k++) {
        int32_t prev;
        if (ami_names_add(&h->map, f[k].p, f[k].len, (int32_t)k, &prev) != AM_OK) return AM_E_NOMEM;
        if (f[k].len > longest) longest = f[k].len;
    }
    h->scratch_len = longest + 1;
    h->scratch = am_alloc(h->scratch_len);
    return h->scratch ? AM_OK : AM_E_NOMEM;
}

int ami_header_find(const ami_header *h, const char *stem, size_t sl, const char *suffix)
{
    size_t n = strlen(suffix);
    /* No column is longer than the longest field. */
    if (sl + n >= h->scratch_len) return -1;
    memcpy(h->scratch, stem, sl);
    memcpy(h->scratch + sl, suffix, n);
    return ami_names_find(&h->map, h->scratch, sl + n);
}

void ami_header_free(ami_header *h)
{
    ami_names_free(&h->map);
    am_free(h->scratch);
    memset(h, 0, sizeof *h);
}
