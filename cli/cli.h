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
/* "anymove <cmd>: warning: ..." on stderr, even with --quiet. */
void am_cli_warn(const char *cmd, const char *fmt, ...) AM_PRINTF(2, 3);
/* fps for people: "30" when within 1e-6 of an integer (BVH frame times), else 6 digits. */
const char *am_cli_fps(double fps, char buf[32]);
/* Note the body size of what a file holds, and warn when it is implausible in metres (over
 * 20 m or under 5 cm) with the --scale that would fix it. */
void am_cli_body_size(const char *cmd, const char *file, double size);
/* The warning alone (for info, which prints the size on stdout). */
void am_cli_units_check(const char *cmd, const char *file, double size);
/* Log "<name> ... 1.234 s" since t0 (am_now()) and return the seconds. */
double am_cli_stage_end(double t0, const char *name);
/* The context every command passes to library jobs: progress on stderr unless --quiet (a bar
 * with percentage and ETA when stderr is a terminal, else one line per finished stage). */
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
/* True if the argument is -h or --help. */
bool am_cli_is_help(const char *arg);

/* ---- inputs (README "Clips", "Units") ---- */
/* The clip --clip means (am_gltf_find_clip; NULL = the first), named on stderr; -1 for a model
 * without animations. Errors name file. */
am_status am_cli_pick_clip(const am_gltf *doc, const char *file, const char *clip, int *anim, am_error *err);
/* --list-clips: "index<TAB>name<TAB>duration" lines on stdout; the exit code. */
int am_cli_list_clips(const char *cmd, const char *file);
/* Parse --scale (metres per file unit, > 0); false after a usage message. */
bool am_cli_scale(const char *cmd, const char *value, double *scale);
/* rig.json names the model it is the skeleton of (its absolute path: the rig's folder may
 * move, the model rarely does), so export can drive that character. */
am_status am_cli_record_model(am_rig *rig, const char *model, am_error *err);
/* SPEC 5 body size of a rig's rest joints. */
double am_cli_rig_size(const am_rig *rig);
/* SPEC 5 body size of 3D joints: of the first frame with the most joints present. */
double am_cli_joints_size(const am_joints *jt);

/* ---- outputs (README "Outputs") ---- */
typedef enum am_cli_format {
    AM_CLI_FMT_NONE,
    AM_CLI_FMT_GLB,
    AM_CLI_FMT_BVH,
    AM_CLI_FMT_JSON,
    AM_CLI_FMT_NPZ,
    AM_CLI_FMT_OBJ,
    AM_CLI_FMT_CSV,
    AM_CLI_FMT_TRC,
    AM_CLI_FMT_TOML,
    AM_CLI_FMT_COUNT
} am_cli_format;
#define AM_CLI_FMT(f) (1u << (f))
/* The extension of a path's file name (".glb"), or NULL. */
const char *am_cli_ext(const char *path);
/* The format a file name's extension names (case-insensitive), or AM_CLI_FMT_NONE. */
am_cli_format am_cli_format_of(const char *path);
/* A one-file output: the format its extension picks among `allowed` (AM_CLI_FMT(...) bits);
 * else a usage message and AM_CLI_FMT_NONE. */
am_cli_format am_cli_out_file(const char *cmd, const char *path, unsigned allowed);
/* A folder output of a command that writes several files (`writes` lists them for the
 * message): false, with a usage message, when -o names a file ("-o x.npz"). */
bool am_cli_out_dir(const char *cmd, const char *path, const char *writes);
/* Open the output set before any work (am_outset_open): 0, or the exit code of the failure
 * after printing it. count 0: target is one file. */
int am_cli_outputs(const char *cmd, const char *target, const char *const *names, size_t count,
                   am_outset **set);
/* A run that failed after opening its outputs: the error names the final file, the
 * temporaries go, the old outputs stay. Returns the exit code. */
int am_cli_fail_out(const char *cmd, am_outset *set, am_error *err);
/* Move the outputs into place: 0 or the exit code. */
int am_cli_commit(const char *cmd, am_outset *set);
/* Motions of a rig into one file: a .glb with every motion a clip (names NULL: "clip0"...),
 * or a .bvh of the one motion. source: the model (loaded with AM_GLTF_KEEP_SOURCE) whose
 * skeleton rig is, to write that character driven by the clips; NULL for bone shapes. */
am_status am_cli_write_animation(am_cli_format fmt, const am_rig *rig, const am_motion *const *clips,
                                 const char *const *names, size_t count, const am_gltf *source, const char *path,
                                 am_error *err);

#endif
