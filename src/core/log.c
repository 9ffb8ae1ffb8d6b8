#define _POSIX_C_SOURCE 200809L
#include "anymove/core.h"

#include <stdio.h>
#include <time.h>

static bool ami_quiet;

void am_log_set_quiet(bool quiet) { ami_quiet = quiet; }
bool am_log_quiet(void) { return ami_quiet; }

void am_log(const char *fmt, ...)
{
    if (ami_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("anymove: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double am_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double am_stage_begin(void) { return am_now(); }

double am_stage_end(double start, const char *name)
{
    double dt = am_now() - start;
    am_log("%-28s %8.3f s", name, dt);
    return dt;
}
