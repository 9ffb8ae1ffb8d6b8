/* `anymove exam --cameras N|CALIB.toml`: the N-view exam's options and run (exam_cameras.c),
 * kept beside cmd_exam.c so the two-view exam stays as it was. */
#ifndef AM_CLI_EXAM_CAMERAS_H
#define AM_CLI_EXAM_CAMERAS_H

#include "anymove/capture.h"
#include "cli.h"

/* Both kinds of exam write into one output set, so a run of either kind into a folder leaves
 * no member of the other's behind (a two-view det.npz beside an N-camera calibration.toml). */
#define AMI_EXAM_OUTPUT_COUNT 3
extern const char *const ami_exam_outputs[AMI_EXAM_OUTPUT_COUNT];

typedef struct ami_exam_cameras_args {
    const char *spec;    /* "N" or a calibration file; NULL = the two-view exam */
    double scale;        /* --scale of that calibration; 0 = not given */
    int max_offset;      /* --offsets MAX */
    bool occlusion;      /* --occlusion */
    bool hide_offsets;   /* --hide-offsets: det.npz without time_offset */
    bool bad;            /* a usage error was printed */
} ami_exam_cameras_args;

void ami_exam_cameras_help(FILE *out);
/* Consume argv[*i] (and its value) if it is one of the N-view options. */
bool ami_exam_cameras_arg(int argc, char **argv, int *i, ami_exam_cameras_args *a);
/* After parsing: the N-view options only with --cameras, --lag only without; false after a
 * usage message. */
bool ami_exam_cameras_check(const ami_exam_cameras_args *a, bool lag_given);
/* o: the exam options already parsed (noise, dropout, swap, outliers apply per camera; lag is
 * replaced by the per-camera offsets) with the command's context. set: the opened outputs
 * (committed or aborted here). Returns the exit code. */
int ami_exam_cameras_run(const ami_exam_cameras_args *a, const char *rig_path, const char *cr_path, const char *dir,
                         const am_exam_opts *o, am_outset *set);

#endif
