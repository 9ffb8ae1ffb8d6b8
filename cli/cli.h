/* Shared helpers of the anymove CLI: each cmd_<verb>.c is argument parsing plus library calls. */
#ifndef AM_CLI_H
#define AM_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "anymove/anymove.h"

#define X(verb, summary) int am_cmd_##verb(int argc, char **argv);
#include "commands.def"
#undef X

/* Print an error as "anymove <cmd>: file:line:col: error: what (info)"; returns the exit code
 * of its status (1 or 2). */
int am_cli_fail(const char *cmd, const am_error *err);
/* 2 for input/usage/output faults, 1 for ours or the machine's, 0 for success. */
int am_cli_exit_code(am_status code);
/* --quiet was given. */
bool am_cli_quiet(void);
/* A note on stderr ("anymove: ...") unless --quiet. */
void am_cli_log(const char *fmt, ...) AM_PRINTF(1, 2);
/* Log "<name> ... 1.234 s" since t0 (am_now()) and return the seconds. */
double am_cli_stage_end(double t0, const char *name);
/* The context every command passes to library jobs: progress on stderr unless --quiet. */
am_context am_cli_context(void);
/* Each warning a job returned, on stderr (warnings are shown even with --quiet). */
void am_cli_print_warnings(const char *cmd, const am_warning_list *w);
/* Usage error: message on stderr, then "try 'anymove <cmd> --help'"; returns 2. */
int am_cli_usage(const char *cmd, const char *fmt, ...) AM_PRINTF(2, 3);

/* Minimal option scanner: for (i = 1; i < argc; i++) { if (am_cli_flag(argv[i], "--quiet")) ... }
 * am_cli_value takes "--opt VALUE" or "--opt=VALUE"; returns the value or NULL (advancing *i). */
bool am_cli_flag(const char *arg, const char *name);
const char *am_cli_value(int argc, char **argv, int *i, const char *name);
/* Parse numbers; false (and a usage message) on garbage. */
bool am_cli_double(const char *cmd, const char *opt, const char *s, double *out);
bool am_cli_long(const char *cmd, const char *opt, const char *s, long *out);
/* Create an output folder and its parents (mkdir -p); AM_E_WRITE naming the folder if it fails. */
am_status am_cli_mkdir_p(const char *dir, am_error *err);
/* True if the argument is -h or --help. */
bool am_cli_is_help(const char *arg);

#endif
