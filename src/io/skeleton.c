/* Keypoint skeletons: an "A-B,B-C" list, a DeepLabCut config.yaml's `skeleton:` and a SLEAP
 * analysis file's edges (sleap_h5.c). DeepLabCut writes the list in YAML block style
 * ("- - A" / "  - B") or flow style ("[[A, B], [B, C]]", "[]"); only that key is read, so no
 * YAML library is needed for it. */
#include <assert.h>
#include <ctype.h>
#include <string.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

void am_skeleton_free(am_skeleton *sk)
{
    if (!sk) return;
    ami_strings_free(sk->a, sk->edge_count);
    ami_strings_free(sk->b, sk->edge_count);
    am_free(sk);
}

/* Append an edge (names copied from [s, s+n) ranges). */
static am_status ami_sk_add(am_skeleton *sk, size_t *cap, const char *a, size_t na, const char *b, size_t nb,
                            am_error *err)
{
    if (sk->edge_count == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        char **A = am_realloc_array(sk->a, c, sizeof *A), **B = NULL;
        if (A) sk->a = A;
        B = A ? am_realloc_array(sk->b, c, sizeof *B) : NULL;
        if (!A || !B) return AM_FAIL(err, AM_E_NOMEM, "skeleton");
        sk->b = B;
        *cap = c;
    }
    char *x = am_strndup(a, na), *y = am_strndup(b, nb);
    if (!x || !y) {
        am_free(x);
        am_free(y);
        return AM_FAIL(err, AM_E_NOMEM, "skeleton");
    }
    sk->a[sk->edge_count] = x;
    sk->b[sk->edge_count] = y;
    sk->edge_count++;
    return AM_OK;
}

am_status am_skeleton_parse(const char *spec, am_skeleton **out, am_error *err)
{
    assert(spec && out);
    *out = am_alloc(sizeof **out);
    if (!*out) return AM_FAIL(err, AM_E_NOMEM, "skeleton");
    am_skeleton *sk = *out;
    size_t cap = 0;
    am_status st = AM_OK;
    for (const char *s = spec; *s && st == AM_OK;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        const char *dash = memchr(s, '-', n);
        if (!dash || dash == s || dash == s + n - 1) {
            st = AM_FAIL(err, AM_E_VALUE, "edge '%.*s': want A-B (two joint names joined by '-')", (int)n, s);
            break;
        }
        st = ami_sk_add(sk, &cap, s, (size_t)(dash - s), dash + 1, n - (size_t)(dash - s) - 1, err);
        s += n + (e ? 1 : 0);
    }
    if (st == AM_OK && !sk->edge_count) st = AM_FAIL(err, AM_E_EMPTY, "no edges");
    if (st != AM_OK) {
        am_skeleton_free(sk);
        *out = NULL;
    }
    return st;
}

/* One YAML scalar at *p (plain or quoted), up to a delimiter in `stop`; [*a, *n). */
static void ami_yaml_scalar(const char **p, const char *stop, const char **a, size_t *n)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '\'' || *s == '"') {
        char q = *s++;
        *a = s;
        while (*s && *s != q && *s != '\n') s++;
        *n = (size_t)(s - *a);
        if (*s == q) s++;
    } else {
        *a = s;
        while (*s && *s != '\n' && !strchr(stop, *s)) s++;
        const char *e = s;
        while (e > *a && (e[-1] == ' ' || e[-1] == '\t')) e--;
        *n = (size_t)(e - *a);
    }
    *p = s;
}

static am_status ami_yaml_skeleton(const char *text, const char *src, am_skeleton *sk, am_error *err)
{
    size_t cap = 0;
    const char *line = text;
    uint32_t ln = 1;
    while (*line && !(strncmp(line, "skeleton:", 9) == 0)) {
        const char *nl = strchr(line, '\n');
        if (!nl) {
            line = NULL;
            break;
        }
        line = nl + 1;
        ln++;
    }
    if (!line || !*line) return AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "no top-level 'skeleton:' key");
    const char *p = line + 9;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '[') {
        /* Flow style: [[A, B], [C, D]] (on one line or over several). */
        p++;
        for (;;) {
            while (*p && strchr(" \t\r\n,", *p)) p++;
            if (*p == ']') break;
            if (*p != '[') return AM_FAIL_AT(err, AM_E_SYNTAX, src, ln, 0, "skeleton: want [A, B] pairs");
            p++;
            const char *a, *b;
            size_t na, nb;
            ami_yaml_scalar(&p, ",]", &a, &na);
            if (*p != ',') return AM_FAIL_AT(err, AM_E_SYNTAX, src, ln, 0, "skeleton: an edge needs two names");
            p++;
            ami_yaml_scalar(&p, ",]", &b, &nb);
            while (*p == ' ') p++;
            if (*p != ']') return AM_FAIL_AT(err, AM_E_SYNTAX, src, ln, 0, "skeleton: an edge has two names, not more");
            p++;
            AMI_TRY(ami_sk_add(sk, &cap, a, na, b, nb, err));
        }
        return AM_OK;
    }
    /* Block style: "- - A" opens an edge, "  - B" ends it; "- [A, B]" is one edge. */
    const char *first = NULL;
    size_t nfirst = 0, base = (size_t)-1;
    for (const char *l = strchr(line, '\n'); l && *l;) {
        l++;
        ln++;
        const char *s = l;
        while (*s == ' ') s++;
        size_t indent = (size_t)(s - l);
        if (*s == '#' || *s == '\n' || *s == '\r') {
            l = strchr(l, '\n');
            continue;
        }
        if (*s != '-') break; /* the next key */
        if (base == (size_t)-1) base = indent;
        if (indent < base) break;
        s++;
        while (*s == ' ') s++;
        const char *a, *b;
        size_t na, nb;
        if (indent == base && *s == '-') {
            s++;
            ami_yaml_scalar(&s, "#", &a, &na);
            first = a;
            nfirst = na;
        } else if (indent == base && *s == '[') {
            s++;
            ami_yaml_scalar(&s, ",]", &a, &na);
            if (*s != ',') return AM_FAIL_AT(err, AM_E_SYNTAX, src, ln, 0, "skeleton: an edge needs two names");
            s++;
            ami_yaml_scalar(&s, ",]", &b, &nb);
            AMI_TRY(ami_sk_add(sk, &cap, a, na, b, nb, err));
        } else if (indent > base && first) {
            ami_yaml_scalar(&s, "#", &b, &nb);
            AMI_TRY(ami_sk_add(sk, &cap, first, nfirst, b, nb, err));
            first = NULL;
        } else {
            return AM_FAIL_AT(err, AM_E_SYNTAX, src, ln, 0, "skeleton: want a list of [A, B] pairs");
        }
        l = strchr(l, '\n');
    }
    return AM_OK;
}

am_status am_skeleton_load(const char *path, am_skeleton **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, 64u << 20, &buf, &len, err));
    am_skeleton *sk = am_alloc(sizeof *sk);
    am_status st = AM_OK;
    if (!sk) {
        st = AM_FAIL(err, AM_E_NOMEM, "skeleton");
    } else if (len >= 8 && memcmp(buf, "\x89HDF\r\n\x1a\n", 8) == 0) {
        st = ami_sleap_edges_parse(buf, len, path, sk, err);
    } else {
        st = ami_yaml_skeleton(buf, path, sk, err);
    }
    if (st == AM_OK && !sk->edge_count) st = AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "the skeleton has no edges");
    am_free(buf);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_skeleton_free(sk);
        return st;
    }
    *out = sk;
    return AM_OK;
}
