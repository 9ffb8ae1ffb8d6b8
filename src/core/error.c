#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

typedef struct {
    am_status code;
    am_fault fault;
    const char *name;
    const char *message;
} ami_status_row;

static const ami_status_row ami_status_table[] = {
#define X(name, value, fault, msg) {AM_##name, AM_FAULT_##fault, #name, msg},
#include "anymove/errors.def"
#undef X
};

static const ami_status_row *ami_status_find(am_status code)
{
    for (size_t i = 0; i < sizeof ami_status_table / sizeof ami_status_table[0]; i++)
        if (ami_status_table[i].code == code) return &ami_status_table[i];
    return NULL;
}

const char *am_status_message(am_status code)
{
    const ami_status_row *row = ami_status_find(code);
    return row ? row->message : "unknown status";
}

const char *am_status_name(am_status code)
{
    const ami_status_row *row = ami_status_find(code);
    return row ? row->name : "UNKNOWN";
}

am_fault am_status_fault(am_status code)
{
    const ami_status_row *row = ami_status_find(code);
    /* An unknown negative code is a bug of ours, not the caller's. */
    if (!row) return code >= 0 ? AM_FAULT_NONE : AM_FAULT_SYSTEM;
    return row->fault;
}

am_status am_error_set(am_error *err, am_status code, const char *file, uint32_t line,
                       uint32_t col, uint64_t offset, const char *src_file, uint32_t src_line,
                       const char *fmt, ...)
{
    if (!err) return code;
    memset(err, 0, sizeof *err);
    err->code = code;
    err->what = am_status_message(code);
    if (file) snprintf(err->file, sizeof err->file, "%s", file);
    err->line = line;
    err->col = col;
    err->offset = offset;
    err->src_file = src_file;
    err->src_line = src_line;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->info, sizeof err->info, fmt, ap);
        va_end(ap);
    }
    return code;
}

void am_error_set_file(am_error *err, const char *file)
{
    if (err && file && !err->file[0]) snprintf(err->file, sizeof err->file, "%s", file);
}

char *am_error_format(char *buf, size_t size, const am_error *err)
{
    if (!buf || size == 0) return buf;
    if (!err) {
        snprintf(buf, size, "error: unknown");
        return buf;
    }
    const char *what = err->what ? err->what : am_status_message(err->code);
    char where[320] = "";
    if (err->file[0] && err->line && err->col)
        snprintf(where, sizeof where, "%s:%" PRIu32 ":%" PRIu32 ": ", err->file, err->line,
                 err->col);
    else if (err->file[0] && err->line) /* a whole line is at fault (a ragged CSV row) */
        snprintf(where, sizeof where, "%s:%" PRIu32 ": ", err->file, err->line);
    else if (err->file[0] && err->offset != UINT64_MAX)
        snprintf(where, sizeof where, "%s: byte %" PRIu64 ": ", err->file, err->offset);
    else if (err->file[0])
        snprintf(where, sizeof where, "%s: ", err->file);
    if (err->info[0])
        snprintf(buf, size, "%serror: %s (%s)", where, what, err->info);
    else
        snprintf(buf, size, "%serror: %s", where, what);
    return buf;
}
