/* Budgets: every input is bounded by construction (see core/internal.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"

uint64_t ami_budget(uint64_t limit)
{
    const am_scope *s = am_scope_current();
    uint64_t ctx = s && s->counters ? s->counters->ctx.max_bytes : 0;
    if (ctx && (!limit || ctx < limit)) return ctx;
    return limit;
}

/* "512 MiB", "2.4 GiB", "300 bytes": a budget message is read by people. */
static void ami_bytes_text(uint64_t n, char *buf, size_t size)
{
    if (n < 10240) snprintf(buf, size, "%" PRIu64 " bytes", n);
    else if (n < ((uint64_t)10 << 20)) snprintf(buf, size, "%.1f KiB", (double)n / 1024.0);
    else if (n < ((uint64_t)10 << 30)) snprintf(buf, size, "%.1f MiB", (double)n / 1048576.0);
    else snprintf(buf, size, "%.1f GiB", (double)n / 1073741824.0);
}

am_status ami_budget_check_at(am_error *err, const char *file, uint64_t need, uint64_t limit,
                              const char *src_file, uint32_t src_line, const char *fmt, ...)
{
    uint64_t budget = ami_budget(limit);
    if (!budget || need <= budget) return AM_OK;
    if (!err) return AM_E_LIMIT;
    char what[160] = "", a[32], b[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ami_bytes_text(need, a, sizeof a);
    ami_bytes_text(budget, b, sizeof b);
    return am_error_set(err, AM_E_LIMIT, file, 0, 0, UINT64_MAX, src_file, src_line,
                        "%s would take %s, over the limit of %s", what, a, b);
}
