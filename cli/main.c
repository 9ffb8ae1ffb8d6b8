#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The CLI is the application: its one flag is process state by right. */
static bool ami_cli_quiet;

typedef struct {
    const char *verb;
    const char *summary;
    int (*run)(int argc, char **argv);
} ami_command;

static const ami_command ami_commands[] = {
#define X(verb, summary) {#verb, summary, am_cmd_##verb},
#include "commands.def"
#undef X
};

/* A verb's C name spells '-' as '_' (rig_from_points is typed rig-from-points). */
static bool ami_verb_is(const char *arg, const char *verb)
{
    for (; *arg && *verb; arg++, verb++)
        if (*arg != (*verb == '_' ? '-' : *verb)) return false;
    return !*arg && !*verb;
}

static void ami_usage(FILE *out)
{
    fprintf(out,
            "usage: anymove <command> [options]\n"
            "       anymove --version | --help\n\n"
            "Turns motion into game-ready skeletal animation for any creature.\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof ami_commands / sizeof ami_commands[0]; i++)
    {
        char verb[64];
        size_t k = 0;
        for (const char *c = ami_commands[i].verb; *c && k + 1 < sizeof verb; c++) verb[k++] = *c == '_' ? '-' : *c;
        verb[k] = '\0';
        fprintf(out, "  %-10s %s\n", verb, ami_commands[i].summary);
    }
    fprintf(out,
            "\nEvery command takes --help (which ends with examples) and --quiet (no progress on\n"
            "stderr; warnings still show). -o is a folder for commands that write several files,\n"
            "else one file whose extension picks the format. Outputs appear together or not at\n"
            "all: a failed run leaves the previous ones as they were.\n"
            "Exit codes: 0 success, 2 bad input, usage or output location, 1 internal failure.\n\n"
            "examples:\n"
            "  anymove info examples/walker/rig.json\n"
            "  anymove export examples/walker/walk.json --rig examples/walker/rig.json -o out/walk.glb\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        ami_usage(stderr);
        return 2;
    }
    if (am_cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        ami_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("anymove %s\n", AM_VERSION_STRING);
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) ami_cli_quiet = true;
    for (size_t i = 0; i < sizeof ami_commands / sizeof ami_commands[0]; i++)
        if (ami_verb_is(argv[1], ami_commands[i].verb)) {
            /* Calls without options (loaders, writers) run in this scope; it also collects the
             * warnings of calls whose results have no list of their own. Jobs get the same
             * context in their opts and return their warnings, which the command prints. */
            am_context ctx = am_cli_context();
            am_scope sc;
            am_scope_enter(&sc, &ctx);
            int rc = ami_commands[i].run(argc - 1, argv + 1);
            am_warning_list rest = {0};
            am_scope_leave(&sc, &rest);
            am_cli_print_warnings(argv[1], &rest);
            am_warning_list_free(&rest);
            return rc;
        }
    fprintf(stderr, "anymove: unknown command '%s'\n", argv[1]);
    ami_usage(stderr);
    return 2;
}

int am_cli_fail(const char *cmd, const am_error *err)
{
    char msg[1024];
    am_error_format(msg, sizeof msg, err);
    fprintf(stderr, "anymove %s: %s\n", cmd, msg);
    return am_cli_exit_code(err ? err->code : AM_E_INTERNAL);
}

int am_cli_exit_code(am_status code)
{
    switch (am_status_fault(code)) {
    case AM_FAULT_NONE: return code >= 0 ? 0 : 1;
    case AM_FAULT_INPUT: return 2;
    default: return 1;
    }
}

bool am_cli_quiet(void) { return ami_cli_quiet; }

int am_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "anymove %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\ntry 'anymove %s --help'\n", cmd);
    va_end(ap);
    return 2;
}

bool am_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

bool am_cli_flag(const char *arg, const char *name) { return strcmp(arg, name) == 0; }

const char *am_cli_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0) return NULL;
    if (arg[n] == '=') return arg + n + 1;
    if (arg[n] != '\0') return NULL;
    if (*i + 1 >= argc) return NULL;
    (*i)++;
    return argv[*i];
}

bool am_cli_double(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end = NULL;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || end == s || *end != '\0' || v != v) {
        am_cli_usage(cmd, "%s expects a number, got '%s'", opt, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

bool am_cli_long(const char *cmd, const char *opt, const char *s, long *out)
{
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end != '\0') {
        am_cli_usage(cmd, "%s expects an integer, got '%s'", opt, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}
