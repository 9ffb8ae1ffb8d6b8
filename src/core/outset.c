/* Output sets: a command's outputs are staged in a temporary folder beside the target and
 * moved into place together at commit, so a failed run leaves the previous set whole.
 *
 * Every temporary of ours (staging folders, atomic-write files) is named
 * ".anymove-tmp.<pid>.<...>": a run into a folder removes the ones whose process is gone,
 * which is what a kill -9 leaves behind. A live process's temporaries are never touched. */
#define _POSIX_C_SOURCE 200809L
#include "core/internal.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMI_TMP_PREFIX ".anymove-tmp."
#define AMI_PREV_DIR ".prev" /* inside the staging folder: the old members during commit */

typedef struct ami_member {
    char *name;    /* file name inside the target folder (the target's base name for a file) */
    char *staged;  /* staging/name: where the run writes it */
    char *final;   /* where it goes at commit */
    char *prev;    /* staging/.prev/name: the old file while the new one moves in */
} ami_member;

struct am_outset {
    char *target;   /* as given, without trailing slashes */
    char *staging;  /* the temporary folder */
    char *made_dir; /* the folder commit creates when it does not exist yet (target or its parent) */
    char *prev_dir; /* staging/.prev */
    bool is_dir;
    size_t count;
    ami_member *members;
};

/* ---- paths ---- */

static char *ami_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] != '/';
    char *s = am_alloc(a + slash + b + 1);
    if (!s) return NULL;
    memcpy(s, dir, a);
    if (slash) s[a] = '/';
    memcpy(s + a + slash, name, b + 1);
    return s;
}

char *ami_path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return am_strdup(".");
    if (slash == path) return am_strdup("/");
    return am_strndup(path, (size_t)(slash - path));
}

/* The nearest existing ancestor of path (path itself included when include_self): where a
 * folder that does not exist yet will be created, so the staging folder sits on its file system. */
static am_status ami_existing_home(const char *path, bool include_self, const char *target, char **out,
                                   am_error *err)
{
    char *cur = include_self ? am_strdup(path) : ami_path_dirname(path);
    for (;;) {
        if (!cur) return AM_FAIL(err, AM_E_NOMEM, "output path");
        struct stat st;
        if (stat(cur, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                am_status s = AM_FAIL_AT(err, AM_E_WRITE, target, 0, 0, "'%s' exists and is not a folder", cur);
                am_free(cur);
                return s;
            }
            *out = cur;
            return AM_OK;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            am_status s = AM_FAIL_AT(err, AM_E_WRITE, target, 0, 0, "'%s': %s", cur, strerror(errno));
            am_free(cur);
            return s;
        }
        char *up = ami_path_dirname(cur);
        am_free(cur);
        cur = up;
    }
}

/* ---- stale temporaries ---- */

/* The pid of one of our temporaries' names, or 0 when the name is not ours. */
static long ami_tmp_owner(const char *name)
{
    size_t n = strlen(AMI_TMP_PREFIX);
    if (strncmp(name, AMI_TMP_PREFIX, n) != 0) return 0;
    char *end = NULL;
    long pid = strtol(name + n, &end, 10);
    return end != name + n && *end == '.' && pid > 0 ? pid : 0;
}

static bool ami_pid_alive(long pid)
{
    if (pid == (long)getpid()) return true;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Remove a file, or a folder of files (our staging folders hold files and one level of .prev;
 * depth bounds the recursion), relative to the folder dir_fd. Allocates nothing, so it also
 * cleans up after an allocation failure. Best effort: a temporary that stays is harmless. */
static void ami_remove_at(int dir_fd, const char *name, int depth)
{
    struct stat st;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        (void)unlinkat(dir_fd, name, 0);
        return;
    }
    int fd = depth > 0 ? openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ami_remove_at(fd, e->d_name, depth - 1);
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    (void)unlinkat(dir_fd, name, AT_REMOVEDIR);
}

void am_tmp_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = ami_tmp_owner(e->d_name);
        if (pid && !ami_pid_alive(pid)) ami_remove_at(dirfd(d), e->d_name, 3);
    }
    closedir(d);
}

void am_tmp_path(char *buf, size_t size, const char *path)
{
    /* pid and a per-call number: two threads (or two calls) writing one path never share a
     * temporary file */
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(buf, size, "%.*s" AMI_TMP_PREFIX "%ld.%llu.%s", dir_len, path, (long)getpid(),
             (unsigned long long)ami_unique_id(), slash ? slash + 1 : path);
}

/* ---- folders ---- */

am_status am_mkdir_p(const char *dir, am_error *err)
{
    char buf[4096]; /* no allocation: commit runs it after the work, when memory may be short */
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return AM_FAIL_AT(err, AM_E_WRITE, dir, 0, 0, "folder name too long");
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        struct stat st;
        if (stat(buf, &st) != 0 && mkdir(buf, 0777) != 0 && errno != EEXIST)
            return AM_FAIL_AT(err, AM_E_WRITE, dir, 0, 0, "cannot create folder '%s': %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return AM_FAIL_AT(err, AM_E_WRITE, dir, 0, 0, "exists and is not a folder");
    return AM_OK;
}

/* ---- output sets ---- */

static void ami_outset_free(am_outset *set)
{
    if (!set) return;
    for (size_t i = 0; i < set->count; i++) {
        am_free(set->members[i].name);
        am_free(set->members[i].staged);
        am_free(set->members[i].final);
        am_free(set->members[i].prev);
    }
    am_free(set->members);
    am_free(set->target);
    am_free(set->staging);
    am_free(set->made_dir);
    am_free(set->prev_dir);
    am_free(set);
}

/* A member that is already there must be a file: a folder in its place would only fail at commit. */
static am_status ami_check_final(const ami_member *m, am_error *err)
{
    struct stat st;
    if (stat(m->final, &st) == 0 && !S_ISREG(st.st_mode))
        return AM_FAIL_AT(err, AM_E_WRITE, m->final, 0, 0, "exists and is not a file");
    return AM_OK;
}

static am_status ami_outset_fill(am_outset *set, const char *const *names, size_t count, am_error *err)
{
    char *home = NULL;
    if (set->is_dir) {
        AMI_TRY(ami_existing_home(set->target, true, set->target, &home, err));
        struct stat st;
        if (stat(set->target, &st) != 0) set->made_dir = am_strdup(set->target);
    } else {
        struct stat st;
        if (stat(set->target, &st) == 0 && S_ISDIR(st.st_mode))
            return AM_FAIL_AT(err, AM_E_WRITE, set->target, 0, 0, "is a folder; give a file name");
        char *parent = ami_path_dirname(set->target);
        if (!parent) return AM_FAIL(err, AM_E_NOMEM, "output path");
        if (stat(parent, &st) != 0) set->made_dir = am_strdup(parent);
        am_free(parent);
        AMI_TRY(ami_existing_home(set->target, false, set->target, &home, err));
    }
    am_tmp_sweep(home);
    char tmpl[64];
    snprintf(tmpl, sizeof tmpl, AMI_TMP_PREFIX "%ld.XXXXXX", (long)getpid());
    set->staging = ami_join(home, tmpl);
    am_free(home);
    if (!set->staging) return AM_FAIL(err, AM_E_NOMEM, "output path");
    if (!mkdtemp(set->staging)) {
        int e = errno;
        am_free(set->staging);
        set->staging = NULL;
        return AM_FAIL_AT(err, AM_E_WRITE, set->target, 0, 0, "cannot write there: %s", strerror(e));
    }
    set->members = am_alloc_array(count, sizeof *set->members);
    if (!set->members) return AM_FAIL(err, AM_E_NOMEM, "output set");
    set->count = count;
    set->prev_dir = ami_join(set->staging, AMI_PREV_DIR);
    if (!set->prev_dir) return AM_FAIL(err, AM_E_NOMEM, "output set");
    const char *base = strrchr(set->target, '/');
    base = base ? base + 1 : set->target;
    for (size_t i = 0; i < count; i++) {
        ami_member *m = &set->members[i];
        m->name = am_strdup(set->is_dir ? names[i] : base);
        if (!m->name) return AM_FAIL(err, AM_E_NOMEM, "output set");
        m->staged = ami_join(set->staging, m->name);
        m->final = set->is_dir ? ami_join(set->target, m->name) : am_strdup(set->target);
        m->prev = ami_join(set->prev_dir, m->name);
        if (!m->staged || !m->final || !m->prev) return AM_FAIL(err, AM_E_NOMEM, "output set");
        AMI_TRY(ami_check_final(m, err));
    }
    return AM_OK;
}

am_status am_outset_open(const char *target, const char *const *names, size_t count, am_outset **out,
                         am_error *err)
{
    assert(target && out && (count == 0 || names));
    *out = NULL;
    size_t n = strlen(target);
    while (n > 1 && target[n - 1] == '/') n--;
    if (n == 0) return AM_FAIL(err, AM_E_USAGE, "empty output path");
    for (size_t i = 0; i < count; i++)
        assert(names[i] && names[i][0] && names[i][0] != '.' && !strchr(names[i], '/'));
    am_outset *set = am_alloc(sizeof *set);
    if (!set) return AM_FAIL(err, AM_E_NOMEM, "output set");
    set->is_dir = count > 0;
    set->target = am_strndup(target, n);
    am_status s = set->target ? ami_outset_fill(set, names, count ? count : 1, err)
                              : AM_FAIL(err, AM_E_NOMEM, "output set");
    if (s != AM_OK) {
        am_outset_abort(set);
        return s;
    }
    *out = set;
    return AM_OK;
}

const char *am_outset_path(const am_outset *set, const char *name)
{
    assert(set);
    if (!set->is_dir) return set->members[0].staged;
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->members[i].name, name) == 0) return set->members[i].staged;
    assert(!"am_outset_path: a name the set was not opened with");
    return NULL;
}

const char *am_outset_final(const am_outset *set, const char *name)
{
    assert(set);
    if (!set->is_dir) return set->members[0].final;
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->members[i].name, name) == 0) return set->members[i].final;
    return NULL;
}

void am_outset_blame(const am_outset *set, am_error *err)
{
    if (!set || !err || !set->staging) return;
    size_t n = strlen(set->staging);
    if (strncmp(err->file, set->staging, n) != 0 || (err->file[n] != '/' && err->file[n] != '\0')) return;
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(err->file, set->members[i].staged) == 0) {
            snprintf(err->file, sizeof err->file, "%s", set->members[i].final);
            return;
        }
    snprintf(err->file, sizeof err->file, "%s", set->target);
}

static bool ami_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Undo a commit that failed half-way: the new members leave, the old ones come back. */
static void ami_rollback(am_outset *set, size_t moved_in)
{
    for (size_t i = 0; i < moved_in; i++)
        if (ami_exists(set->members[i].staged) == false && ami_exists(set->members[i].final))
            (void)rename(set->members[i].final, set->members[i].staged);
    for (size_t i = 0; i < set->count; i++)
        if (ami_exists(set->members[i].prev)) (void)rename(set->members[i].prev, set->members[i].final);
}

am_status am_outset_commit(am_outset *set, am_error *err)
{
    assert(set);
    am_status s = AM_OK;
    if (set->made_dir) s = am_mkdir_p(set->made_dir, err);
    if (s == AM_OK && !set->is_dir) {
        /* One file: rename replaces it atomically, readers never see it missing. */
        ami_member *m = &set->members[0];
        if (!ami_exists(m->staged))
            s = AM_FAIL_AT(err, AM_E_INTERNAL, m->final, 0, 0, "the output was never written");
        else if (rename(m->staged, m->final) != 0)
            s = AM_FAIL_AT(err, AM_E_WRITE, m->final, 0, 0, "cannot move it into place: %s", strerror(errno));
    } else if (s == AM_OK) {
        /* Every old member steps aside first, so a failure can put the old set back whole and
         * members this run did not write do not stay beside the new ones. */
        if (mkdir(set->prev_dir, 0700) != 0)
            s = AM_FAIL_AT(err, AM_E_WRITE, set->target, 0, 0, "%s", strerror(errno));
        for (size_t i = 0; s == AM_OK && i < set->count; i++) {
            ami_member *m = &set->members[i];
            if (ami_exists(m->final) && rename(m->final, m->prev) != 0)
                s = AM_FAIL_AT(err, AM_E_WRITE, m->final, 0, 0, "cannot replace it: %s", strerror(errno));
        }
        size_t moved = 0;
        for (; s == AM_OK && moved < set->count; moved++) {
            ami_member *m = &set->members[moved];
            if (ami_exists(m->staged) && rename(m->staged, m->final) != 0)
                s = AM_FAIL_AT(err, AM_E_WRITE, m->final, 0, 0, "cannot move it into place: %s", strerror(errno));
        }
        if (s != AM_OK) ami_rollback(set, moved);
    }
    am_outset_abort(set);
    return s;
}

void am_outset_abort(am_outset *set)
{
    if (!set) return;
    if (set->staging) ami_remove_at(AT_FDCWD, set->staging, 2);
    ami_outset_free(set);
}
