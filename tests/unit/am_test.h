/* A tiny test runner (ufbx / cglm style). Each tests/unit/test_<module>.c lists its cases:
 *
 *     #define AM_TESTS(X) X(quat_roundtrip) X(kabsch_recovers_rotation)
 *     AM_TEST_MAIN(AM_TESTS)
 *
 * and defines `static void quat_roundtrip(void) { ... }` above it. Checks report the file and
 * line and count failures; a failing case keeps running so every problem is shown. */
#ifndef AM_TEST_H
#define AM_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "anymove/core.h"

extern int am_test_failures;
extern const char *am_test_current;

void am_test_fail(const char *file, int line, const char *fmt, ...) AM_PRINTF(3, 4);
/* Path under the shared folder ($AM_SHARED, else ../shared next to the sources). A path that
 * does not exist fails the current test, naming it: tests that need ../shared never pass by
 * finding nothing to check. */
const char *am_test_shared(const char *rel);
/* Call fn(path, name, user) for every file below dir (recursively, dot files left out) whose
 * name ends in ext. Fails the current test when dir cannot be read or holds no such file.
 * Returns how many files were visited. */
size_t am_test_each_file(const char *dir, const char *ext,
                         void (*fn)(const char *path, const char *name, void *user), void *user);
/* Path under the source tree ($AM_SOURCE). */
const char *am_test_source(const char *rel);
/* The up axis of a BVH file of shared/data/bvh, by file name, from tests/data/shared_bvh_axes.tsv:
 * 1 Z up, 0 Y up, -1 unknown (a file added there must be looked at and listed). BVH is read Y up
 * unless told otherwise. */
int am_test_bvh_z_up(const char *file_name);
/* A fresh temporary directory for this test executable (removed by the OS, not by us). */
const char *am_test_tmpdir(void);
/* The path of name in am_test_tmpdir(), in one of eight buffers used in turn: at most eight
 * such paths are alive at once. */
const char *am_test_tmp(const char *name);

/* True if a temporary file of an atomic write to path (am_tmp_path's
 * ".anymove-tmp.<pid>.<n>.<name>") is left in its folder. */
bool am_test_tmp_left(const char *path);

/* Run the test's next allocations in a scope whose allocation number max_allocs + 1 fails
 * (0: no limit, only counting). am_test_alloc_count: allocations made in that scope. */
void am_test_alloc_limit(uint64_t max_allocs);
uint64_t am_test_alloc_count(void);

/* Error statistics for float comparisons: count, mean and max absolute difference. */
typedef struct am_test_diff {
    size_t count;
    double sum, max;
} am_test_diff;
void am_test_diff_add(am_test_diff *d, double a, double b);
double am_test_diff_mean(const am_test_diff *d);

#define AM_CHECK(cond) \
    do { if (!(cond)) am_test_fail(__FILE__, __LINE__, "check failed: %s", #cond); } while (0)
#define AM_CHECK_MSG(cond, ...) \
    do { if (!(cond)) am_test_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define AM_CHECK_NEAR(a, b, tol) \
    do { double am_a_ = (double)(a), am_b_ = (double)(b); \
         if (!(fabs(am_a_ - am_b_) <= (tol))) \
             am_test_fail(__FILE__, __LINE__, "%s = %.12g, %s = %.12g, |diff| %.3g > %.3g", \
                          #a, am_a_, #b, am_b_, fabs(am_a_ - am_b_), (double)(tol)); } while (0)
#define AM_CHECK_STATUS(expr, want) \
    do { am_status am_s_ = (expr); \
         if (am_s_ != (want)) am_test_fail(__FILE__, __LINE__, "%s returned %s, want %s", \
                                           #expr, am_status_name(am_s_), am_status_name(want)); \
    } while (0)
#define AM_CHECK_OK(expr, errp) \
    do { am_status am_s_ = (expr); \
         if (am_s_ != AM_OK) { char am_m_[600]; \
             am_test_fail(__FILE__, __LINE__, "%s failed: %s", #expr, \
                          am_error_format(am_m_, sizeof am_m_, (errp))); } } while (0)

/* Death tests (the NULL policy's asserts): the statement runs in a forked child whose stderr
 * is silenced; the check passes when the child ends by SIGABRT. */
int am_test_fork(void);              /* 0 in the child, its pid in the parent, -1 on failure */
bool am_test_child_aborted(int pid); /* waits for the child */
#define AM_CHECK_ABORTS(stmt) \
    do { int am_pid_ = am_test_fork(); \
         if (am_pid_ == 0) { stmt; am_test_child_exit(); } \
         if (!am_test_child_aborted(am_pid_)) \
             am_test_fail(__FILE__, __LINE__, "did not abort: %s", #stmt); } while (0)
void am_test_child_exit(void);       /* the child's exit when stmt returned */

typedef struct am_test_case {
    const char *name;
    void (*fn)(void);
} am_test_case;
int am_test_run(const am_test_case *cases, size_t count, int argc, char **argv);

#define AM_TEST_ENTRY_(name) {#name, name},
#define AM_TEST_MAIN(LIST) \
    int main(int argc, char **argv) { \
        static const am_test_case cases[] = {LIST(AM_TEST_ENTRY_)}; \
        return am_test_run(cases, sizeof cases / sizeof cases[0], argc, argv); \
    }

#endif
