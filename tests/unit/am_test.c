#include "am_test.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int am_test_failures;
const char *am_test_current = "";

void am_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: [%s] ", file, line, am_test_current);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    am_test_failures++;
}

static const char *ami_test_join(const char *env, const char *fallback, const char *rel)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    const char *base = getenv(env);
    if (!base || !base[0]) base = fallback;
    snprintf(b, sizeof bufs[0], "%s/%s", base, rel);
    return b;
}

int am_test_bvh_z_up(const char *file_name)
{
    FILE *f = fopen(am_test_source("tests/data/shared_bvh_axes.tsv"), "r");
    if (!f) return -1;
    char line[512];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab) continue;
        *tab = '\0';
        if (strcmp(line, file_name) == 0) found = tab[1] == 'z' ? 1 : tab[1] == 'y' ? 0 : -1;
    }
    fclose(f);
    return found;
}

const char *am_test_shared(const char *rel)
{
    const char *path = ami_test_join("AM_SHARED", "../../shared", rel);
    struct stat st;
    if (stat(path, &st) != 0)
        am_test_fail(__FILE__, __LINE__, "%s: missing; these tests need the shared folder (../shared next to the "
                     "sources, or AM_SHARED)", path);
    return path;
}

static size_t ami_each_file(const char *dir, const char *ext,
                            void (*fn)(const char *path, const char *name, void *user), void *user)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t count = 0, el = strlen(ext);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = strlen(e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            count += ami_each_file(path, ext, fn, user);
        } else if (n > el && strcmp(e->d_name + n - el, ext) == 0) {
            fn(path, e->d_name, user);
            count++;
        }
    }
    closedir(d);
    return count;
}

size_t am_test_each_file(const char *dir, const char *ext,
                         void (*fn)(const char *path, const char *name, void *user), void *user)
{
    DIR *d = opendir(dir);
    if (!d) {
        am_test_fail(__FILE__, __LINE__, "%s: cannot read the folder", dir);
        return 0;
    }
    closedir(d);
    size_t count = ami_each_file(dir, ext, fn, user);
    if (!count) am_test_fail(__FILE__, __LINE__, "%s: no %s file found", dir, ext);
    return count;
}
const char *am_test_source(const char *rel) { return ami_test_join("AM_SOURCE", "..", rel); }

const char *am_test_tmpdir(void)
{
    static char dir[256];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/am_test_XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return dir;
}

const char *am_test_tmp(const char *name)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", am_test_tmpdir(), name);
    return b;
}

bool am_test_tmp_left(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    /* am_tmp_path's names: ".anymove-tmp.<pid>.<n>.<base>" */
    static const char prefix[] = ".anymove-tmp.";
    char suffix[1024];
    snprintf(suffix, sizeof suffix, ".%s", base);
    size_t pl = strlen(prefix), sl = strlen(suffix);
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        found = n > pl + sl && strncmp(e->d_name, prefix, pl) == 0 && strcmp(e->d_name + n - sl, suffix) == 0;
    }
    closedir(d);
    return found;
}

void am_test_diff_add(am_test_diff *d, double a, double b)
{
    double e = fabs(a - b);
    if (e != e) e = INFINITY;
    d->count++;
    d->sum += e;
    if (e > d->max) d->max = e;
}

double am_test_diff_mean(const am_test_diff *d) { return d->count ? d->sum / (double)d->count : 0.0; }

int am_test_fork(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0 && !freopen("/dev/null", "w", stderr)) _exit(3);
    return (int)pid;
}

void am_test_child_exit(void) { _exit(0); }

bool am_test_child_aborted(int pid)
{
    if (pid < 0) return false;
    int status = 0;
    if (waitpid((pid_t)pid, &status, 0) != pid) return false;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

int am_test_run(const am_test_case *cases, size_t count, int argc, char **argv)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        if (argc > 1 && !strstr(cases[i].name, argv[1])) continue;
        am_test_current = cases[i].name;
        int before = am_test_failures;
        cases[i].fn();
        if (am_test_failures == before) {
            passed++;
            printf("ok   %s\n", cases[i].name);
        } else {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* Fault injection: the test's allocations run in a scope with an allocation limit (0 = a
 * counting scope without one). Tests are single-threaded, so one scope at a time is enough. */
static am_scope ami_test_scope;
static bool ami_test_scope_on;

void am_test_alloc_limit(uint64_t max_allocs)
{
    if (ami_test_scope_on) am_scope_leave(&ami_test_scope, NULL);
    am_context ctx = {.max_allocs = max_allocs ? max_allocs : UINT64_MAX};
    am_scope_enter(&ami_test_scope, &ctx);
    ami_test_scope_on = true;
}

uint64_t am_test_alloc_count(void)
{
    return ami_test_scope_on ? am_scope_alloc_count(&ami_test_scope) : 0;
}
