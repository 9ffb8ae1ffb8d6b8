/* Internal to src/io: the readers of trackers' and mocap systems' files (mocap.h), and the
 * delimited-text tokenizer they share. Each reader parses one buffer; src/io/import.c reads
 * files and folders and dispatches. */
#ifndef AMI_IO_TRACKERS_INTERNAL_H
#define AMI_IO_TRACKERS_INTERNAL_H

#include <stdint.h>

#include "anymove/mocap.h"
#include "core/internal.h"

/* ---- delimited text (CSV with optional double quotes; TSV) ---- */
typedef struct ami_field {
    const char *p;
    size_t len;
} ami_field;

typedef struct ami_csv {
    const char *s;
    size_t n, i;
    char delim;
    bool quotes;          /* "..." fields (CSV); TSV has none */
    uint32_t line;        /* 1-based line of the row last read */
    ami_field *f;         /* the row's fields */
    size_t count, cap;
} ami_csv;

void ami_csv_init(ami_csv *c, const char *text, size_t len, char delim, bool quotes);
/* Next row (blank lines included, as zero fields... a blank line gives count 0). Returns false at
 * the end; *st = AM_E_NOMEM or AM_E_SYNTAX (an unterminated quote) on failure, else AM_OK. */
bool ami_csv_row(ami_csv *c, am_status *st, const char *source, am_error *err);
/* The next non-blank row, which must have exactly `cells` fields (AM_E_SHAPE naming the line). */
bool ami_csv_data_row(ami_csv *c, size_t cells, am_status *st, const char *source, am_error *err);
void ami_csv_free(ami_csv *c);
/* Field equals the NUL-terminated s (case-insensitive when nocase). */
bool ami_field_is(const ami_field *f, const char *s, bool nocase);
/* The columns of a header row by their exact text (the first of equal ones), so that finding
 * the <stem><suffix> column of every <stem>_x column is linear in the header, not quadratic.
 * Keys point into the text the fields came from, which must outlive the index. */
typedef struct ami_header {
    ami_names map;
    char *scratch;        /* room for the longest field plus a suffix */
    size_t scratch_len;
} ami_header;
AM_NODISCARD am_status ami_header_index(ami_header *h, const ami_field *f, size_t n);
/* Column of the text stem[0..sl) + suffix, or -1. */
int ami_header_find(const ami_header *h, const char *stem, size_t sl, const char *suffix);
void ami_header_free(ami_header *h);
/* A number: decimal or E-notation, any-case nan / inf; an empty or all-blank field is NaN with
 * *empty = true. False for anything else. */
bool ami_field_number(const ami_field *f, double *out, bool *empty);
/* Copy of a field (am_alloc), surrounding blanks trimmed. */
char *ami_field_dup(const ami_field *f);

/* What one import may hold for its frames besides the file: the rows a reader buffers and the
 * det or joints it builds from them. A text row can stand for far more than its bytes (a TRC
 * row of two cells is NumMarkers missing points, a DeepLabCut row shorter than its header is
 * padded), so readers check before growing a buffer. 2 GiB, or the calling scope's max_bytes
 * when smaller. */
#define AMI_IMPORT_BUDGET ((uint64_t)2 << 30)
/* AM_OK, or AM_E_LIMIT naming src and line when `rows` rows of `row_bytes` bytes each (what the
 * reader buffers and builds per row) would pass AMI_IMPORT_BUDGET. */
AM_NODISCARD am_status ami_rows_budget(const char *src, uint32_t line, size_t rows, double row_bytes,
                                       am_error *err);

/* A joint name list [n] shared by readers that know a skeleton (am_alloc'd copies). */
char **ami_names_dup(const char *const *names, size_t n);

/* ---- readers of one buffer ---- */
am_status ami_dlc_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                        am_error *err);
/* One OpenPose frame: the chosen person's keypoints [K][3] (x, y, c; 0,0,0 = undetected) into
 * *kp (am_alloc'd, *k = K; K = 0 when nobody is in the frame). */
am_status ami_openpose_frame(const char *text, size_t len, const char *src, const am_import_opts *o, float **kp,
                             size_t *k, am_error *err);
/* OpenPose joint names for K keypoints (skeleton chosen by K: 25 BODY_25, 18 COORD, 135 ...). */
char **ami_openpose_names(size_t K, const char *skeleton);
/* MediaPipe: one buffer (pbtxt, JSON or CSV by its first bytes) into frames of 33 landmarks. */
am_status ami_mediapipe_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                              am_error *err);
am_status ami_sleap_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                          am_error *err);
/* SLEAP analysis HDF5 skeleton (edge_inds, node_names) into sk (its arrays allocated here). */
am_status ami_sleap_edges_parse(const void *buf, size_t len, const char *src, am_skeleton *sk, am_error *err);
am_status ami_points3d_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                             am_error *err);
am_status ami_trc_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                        am_error *err);
am_status ami_c3d_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                        am_error *err);
am_status ami_anipose_csv_parse(const char *text, size_t len, const char *src, const am_import_opts *o,
                                am_joints **out, am_error *err);

/* 3D axes: a file's point to SPEC 1's world ('y': OpenSim's X forward, Y up, Z right). */
void ami_axes_to_world(char up, const double in[3], double out[3]);

#endif
