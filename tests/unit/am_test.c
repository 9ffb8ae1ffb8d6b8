#include "am_test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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

const char *am_test_shared(const char *rel) { return ami_test_join("AM_SHARED", "../../shared", rel); }
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

void am_test_diff_add(am_test_diff *d, double a, double b)
{
    double e = fabs(a - b);
    if (e != e) e = INFINITY;
    d->count++;
    d->sum += e;
    if (e > d->max) d->max = e;
}

double am_test_diff_mean(const am_test_diff *d) { return d->count ? d->sum / (double)d->count : 0.0; }

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
