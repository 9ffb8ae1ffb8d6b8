#define _POSIX_C_SOURCE 200809L
/* realpath (POSIX.1-2008 XSI): glibc declares it only for X/Open. */
#define _XOPEN_SOURCE 700
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* strerror's buffer may be shared between threads; the XSI strerror_r fills ours. */
static const char *ami_errstr(int e, char *buf, size_t size)
{
    if (strerror_r(e, buf, size) != 0) snprintf(buf, size, "error %d", e);
    return buf;
}

am_status am_file_read(const char *path, size_t max_bytes, char **out, size_t *len, am_error *err)
{
    *out = NULL;
    *len = 0;
    if (max_bytes == 0) max_bytes = (size_t)2 << 30;
    FILE *f = fopen(path, "rb");
    char eb[128];
    if (!f) return AM_FAIL_AT(err, AM_E_READ, path, 0, 0, "%s", ami_errstr(errno, eb, sizeof eb));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return AM_FAIL_AT(err, AM_E_READ, path, 0, 0, "not a regular file");
    }
    if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
        fclose(f);
        return AM_FAIL_AT(err, AM_E_LIMIT, path, 0, 0, "file is %lld bytes, limit %zu",
                          (long long)st.st_size, max_bytes);
    }
    size_t size = (size_t)st.st_size;
    char *data = am_alloc(size + 1);
    if (!data) {
        fclose(f);
        return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%zu bytes", size);
    }
    size_t got = size ? fread(data, 1, size, f) : 0;
    fclose(f);
    if (got != size) {
        am_free(data);
        return AM_FAIL_AT(err, AM_E_READ, path, 0, 0, "short read");
    }
    data[size] = '\0';
    *out = data;
    *len = size;
    return AM_OK;
}

am_status ami_file_read_within(const char *dir, const char *path, size_t max_bytes, char **out,
                               size_t *len, am_error *err)
{
    *out = NULL;
    *len = 0;
    /* Resolve both (symlinks, "..", "//") and compare the real paths: a link inside the folder
     * that points to /etc/passwd resolves outside it. */
    char eb[128];
    char *real_dir = realpath(dir && dir[0] ? dir : ".", NULL);
    if (!real_dir)
        return AM_FAIL_AT(err, AM_E_READ, dir, 0, 0, "%s", ami_errstr(errno, eb, sizeof eb));
    char *real = realpath(path, NULL);
    if (!real) {
        int e = errno;
        free(real_dir);
        return AM_FAIL_AT(err, AM_E_READ, path, 0, 0, "%s", ami_errstr(e, eb, sizeof eb));
    }
    size_t n = strlen(real_dir);
    bool inside = strncmp(real, real_dir, n) == 0 &&
                  (real[n] == '/' || (n > 0 && real_dir[n - 1] == '/'));
    am_status s = AM_OK;
    if (!inside)
        s = AM_FAIL_AT(err, AM_E_UNSUPPORTED, path, 0, 0,
                       "resolves to '%.120s', outside the folder '%.100s'", real, real_dir);
    else
        s = am_file_read(real, max_bytes, out, len, err);
    if (s != AM_OK) am_error_set_file(err, path);
    free(real);
    free(real_dir);
    return s;
}

/* realpath of a folder that may not exist yet: its nearest existing ancestor resolved, with the
 * missing tail appended as written. malloc'd (realpath's), NULL when nothing resolves. */
static char *ami_realpath_partial(const char *dir)
{
    size_t n = strlen(dir);
    char *head = malloc(n + 2);
    if (!head) return NULL;
    memcpy(head, dir[0] ? dir : ".", dir[0] ? n + 1 : 2);
    for (;;) {
        char *real = realpath(head, NULL);
        if (real) {
            size_t h = strlen(head), r = strlen(real);
            const char *tail = dir + (h <= n ? h : n);
            char *full = malloc(r + strlen(tail) + 2);
            if (full) snprintf(full, r + strlen(tail) + 2, "%s%s", real, tail);
            free(real);
            free(head);
            return full;
        }
        char *slash = strrchr(head, '/');
        if (!slash && dir[0] != '/') {
            /* a relative folder none of which exists yet: below the working folder */
            free(head);
            char *cwd = realpath(".", NULL);
            char *full = cwd ? malloc(strlen(cwd) + n + 2) : NULL;
            if (full) snprintf(full, strlen(cwd) + n + 2, "%s/%s", cwd, dir);
            free(cwd);
            return full;
        }
        if (!slash || slash == head) {
            free(head);
            return NULL;
        }
        *slash = '\0';
    }
}

char *ami_path_relative(const char *from_dir, const char *to)
{
    char *a = ami_realpath_partial(from_dir), *b = realpath(to, NULL);
    if (!a || !b) {
        free(a);
        free(b);
        return am_strdup(to);
    }
    /* the common leading folders, then one ".." per folder of a left */
    size_t common = 0;
    for (size_t i = 0;; i++) {
        bool end_a = a[i] == '\0' || a[i] == '/', end_b = b[i] == '/';
        if (end_a && end_b) common = i;
        if (a[i] == '\0' || a[i] != b[i]) {
            if (a[i] == '\0' && b[i] == '/') common = i;
            break;
        }
    }
    am_buf out = {0};
    for (const char *p = a + common; *p; p++)
        if (*p == '/' && p[1] && p[1] != '/') am_buf_append(&out, "../", 3);
    am_buf_append(&out, b + common + 1, strlen(b + common + 1));
    am_buf_append(&out, "", 1);
    free(a);
    free(b);
    if (out.failed) {
        am_buf_free(&out);
        return NULL;
    }
    return out.data;
}

am_status am_file_commit(const char *tmp, const char *path, am_error *err)
{
    if (rename(tmp, path) != 0) {
        int e = errno;
        char eb[128];
        remove(tmp);
        return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "rename: %s", ami_errstr(e, eb, sizeof eb));
    }
    return AM_OK;
}

void am_file_discard(const char *tmp) { remove(tmp); }

am_status am_file_write(const char *path, const void *data, size_t len, am_error *err)
{
    char tmp[4200];
    if (strlen(path) > 4000) return AM_FAIL_AT(err, AM_E_ARG, path, 0, 0, "path too long");
    am_tmp_path(tmp, sizeof tmp, path);
    FILE *f = fopen(tmp, "wb");
    char eb[128];
    if (!f) return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", ami_errstr(errno, eb, sizeof eb));
    bool ok = len == 0 || fwrite(data, 1, len, f) == len;
    int e = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        remove(tmp);
        return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", e ? strerror(e) : "write failed");
    }
    return am_file_commit(tmp, path, err);
}

static bool ami_buf_reserve(am_buf *b, size_t extra)
{
    if (b->failed) return false;
    if (extra > SIZE_MAX - b->len - 1) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *d = am_realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void am_buf_append(am_buf *b, const void *data, size_t len)
{
    if (!ami_buf_reserve(b, len)) return;
    if (len) memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void ami_buf_html(am_buf *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<') am_buf_append(b, "&lt;", 4);
        else if (*s == '>') am_buf_append(b, "&gt;", 4);
        else if (*s == '&') am_buf_append(b, "&amp;", 5);
        else if (*s == '"') am_buf_append(b, "&quot;", 6);
        else am_buf_append(b, s, 1);
    }
}

void am_buf_printf(am_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        am_buf_append(b, small, (size_t)n);
        return;
    }
    if (!ami_buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void am_buf_free(am_buf *b)
{
    am_free(b->data);
    *b = (am_buf){0};
}
