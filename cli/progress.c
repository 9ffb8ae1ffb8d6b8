/* What the CLI says on stderr while it works: notes, one line per finished stage, and on a
 * terminal a live bar (percentage, ETA) fed by the library's progress callback. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "anymove/metrics.h"
#include "cli.h"

/* The CLI is the application: the state of its one stderr is process state by right. */
#define AMI_STAGES 8
static struct {
    int tty;              /* -1 not asked yet */
    bool drawn;           /* a bar is on the current line */
    bool drawn_fraction;  /* the running stage's bar has shown a percentage */
    double last_draw;
    size_t depth;         /* stages begun and not ended (nested stages stack) */
    struct {
        const char *name; /* static strings of the library: compared by content */
        double t0;
    } stack[AMI_STAGES];
} ami_term = {.tty = -1};

static bool ami_is_tty(void)
{
    if (ami_term.tty < 0) ami_term.tty = isatty(STDERR_FILENO) ? 1 : 0;
    return ami_term.tty == 1;
}

static void ami_clear_bar(void)
{
    if (!ami_term.drawn) return;
    fputs("\r\033[K", stderr);
    ami_term.drawn = false;
}

void am_cli_log(const char *fmt, ...)
{
    if (am_cli_quiet()) return;
    ami_clear_bar();
    va_list ap;
    va_start(ap, fmt);
    fputs("anymove: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

double am_cli_stage_end(double t0, const char *name)
{
    double dt = am_now() - t0;
    am_cli_log("%-28s %8.3f s", name, dt);
    return dt;
}

static void ami_duration(char *buf, size_t size, double s)
{
    if (s < 1.0) snprintf(buf, size, "<1 s");
    else if (s < 120.0) snprintf(buf, size, "%.0f s", s);
    else snprintf(buf, size, "%ld min %02ld s", (long)s / 60, (long)s % 60);
}

/* The stage on top of the stack, pushed when new (a stage may report before its begin). */
static double ami_stage_t0(const char *name, double now)
{
    for (size_t i = ami_term.depth; i-- > 0;)
        if (strcmp(ami_term.stack[i].name, name) == 0) {
            ami_term.depth = i + 1; /* stages begun inside it and never ended are over */
            return ami_term.stack[i].t0;
        }
    if (ami_term.depth == AMI_STAGES) ami_term.depth--;
    ami_term.stack[ami_term.depth].name = name;
    ami_term.stack[ami_term.depth].t0 = now;
    ami_term.depth++;
    ami_term.last_draw = 0.0;
    ami_term.drawn_fraction = false;
    return now;
}

static void ami_draw_bar(const char *stage, double fraction, double elapsed)
{
    char line[160], when[32];
    if (fraction > 0.0) {
        int fill = (int)(fraction * 30.0 + 0.5);
        char bar[31];
        for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        ami_duration(when, sizeof when, elapsed * (1.0 - fraction) / fraction);
        snprintf(line, sizeof line, "anymove: %-24s [%s] %3.0f%%  ETA %s", stage, bar, 100.0 * fraction, when);
    } else {
        ami_duration(when, sizeof when, elapsed);
        snprintf(line, sizeof line, "anymove: %-24s ... %s", stage, when);
    }
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    ami_term.drawn = true;
}

/* Stage ends are a line each; on a terminal the running stage also gets a bar, redrawn at
 * most ten times a second. */
static bool ami_cli_progress(void *user, const am_progress *p)
{
    (void)user;
    double now = am_now();
    double t0 = ami_stage_t0(p->stage, now);
    if (p->fraction >= 1.0) {
        ami_term.depth--;
        am_cli_log("%-28s %8.3f s", p->stage, p->seconds);
        return true;
    }
    if (!ami_is_tty()) return true;
    /* The first percentage is drawn at once: a stage shorter than the redraw interval would
     * otherwise show only its "..." line. */
    bool first_fraction = p->fraction > 0.0 && !ami_term.drawn_fraction;
    if (!first_fraction && ami_term.last_draw > 0.0 && now - ami_term.last_draw < 0.1) return true;
    ami_term.last_draw = now;
    if (p->fraction > 0.0) ami_term.drawn_fraction = true;
    ami_draw_bar(p->stage, p->fraction < 0.0 ? 0.0 : p->fraction, now - t0);
    return true;
}

am_context am_cli_context(void)
{
    am_context ctx = {0};
    if (!am_cli_quiet()) ctx.progress = ami_cli_progress;
    return ctx;
}

void am_cli_print_warnings(const char *cmd, const am_warning_list *w)
{
    if (w && w->count) ami_clear_bar();
    for (size_t i = 0; w && i < w->count; i++) {
        if (w->data[i].count > 1)
            fprintf(stderr, "anymove %s: warning: %s (%zu times)\n", cmd, w->data[i].text,
                    w->data[i].count);
        else
            fprintf(stderr, "anymove %s: warning: %s\n", cmd, w->data[i].text);
    }
}

void am_cli_warn(const char *cmd, const char *fmt, ...)
{
    ami_clear_bar();
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "anymove %s: warning: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *am_cli_fps(double fps, char buf[32])
{
    double r = (double)(long long)(fps + 0.5);
    if (fps > 0 && fabs(fps - r) <= 1e-6) snprintf(buf, 32, "%.0f", r);
    else snprintf(buf, 32, "%.6g", fps);
    return buf;
}

void am_cli_body_size(const char *cmd, const char *file, double size)
{
    am_cli_log("%s: body size %.3g m", file, size);
    am_cli_units_check(cmd, file, size);
}

void am_cli_units_check(const char *cmd, const char *file, double size)
{
    double hint = am_units_hint(size);
    if (hint == 1.0) return;
    if (hint < 1.0)
        am_cli_warn(cmd, "%s: a body %.3g m across is implausible in metres: is this %s? --scale %g", file, size,
                    hint == 0.01 ? "centimetres" : hint == 0.001 ? "millimetres" : "another unit", hint);
    else
        am_cli_warn(cmd, "%s: a body %.3g m across is implausibly small for metres: another unit? --scale %g",
                    file, size, hint);
}
