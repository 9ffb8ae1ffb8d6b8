/* A TOML reader for the files calibration tools write (anipose, aniposelib, Pose2Sim): Debian
 * has no C TOML library. It reads TOML 1.0 except dates and times (refused with
 * AM_E_UNSUPPORTED): tables ([a], [a.b], [[a]]), bare, quoted and dotted keys, basic and literal
 * strings (one-line and multi-line, every escape), integers (decimal with _, 0x 0o 0b), floats
 * (exponents, inf, nan, signed), booleans, nested arrays over many lines with comments and
 * trailing commas, inline tables. Every error carries the source, a 1-based line and column
 * and a code: AM_E_SYNTAX (bad syntax), AM_E_DUPLICATE (a key or table defined twice),
 * AM_E_UTF8, AM_E_LIMIT (nesting deeper than 64 or over 1e6 values), AM_E_NONFINITE never (inf
 * and nan are TOML values; callers decide).
 *
 *     ami_toml *doc = NULL;
 *     AMI_TRY(ami_toml_parse(text, len, "calibration.toml", &doc, err));
 *     const ami_toml *cam = ami_toml_get(doc, "cam_0");
 *     ami_toml_free(doc);
 *
 * Pairs: ami_toml_parse -> ami_toml_free. Values remember where they were written, so a
 * caller's shape errors point at the value.
 */
#ifndef AMI_IO_TOML_INTERNAL_H
#define AMI_IO_TOML_INTERNAL_H

#include <stdint.h>

#include "anymove/core.h"

typedef enum ami_toml_kind {
    AMI_TOML_STRING,
    AMI_TOML_INT,
    AMI_TOML_FLOAT,
    AMI_TOML_BOOL,
    AMI_TOML_ARRAY,
    AMI_TOML_TABLE,
    AMI_TOML_KIND_COUNT
} ami_toml_kind;

typedef struct ami_toml ami_toml;
struct ami_toml {
    ami_toml_kind kind;
    uint32_t line, col;       /* where the value (or a table's header) starts */
    char *str;                /* STRING: UTF-8, NUL-terminated (may hold NULs: str_len) */
    size_t str_len;
    int64_t i;                /* INT */
    double f;                 /* FLOAT */
    bool b;                   /* BOOL */
    size_t count;             /* ARRAY items / TABLE members */
    ami_toml *items;          /* [count] ARRAY items or TABLE member values */
    char **keys;              /* [count] TABLE member keys */
    uint8_t how;              /* private: how a table came to be (header, dotted key, inline) */
    struct ami_names *index;  /* private: a large TABLE's keys by hash, else NULL */
};

AM_NODISCARD am_status ami_toml_parse(const char *text, size_t len, const char *source,
                                      ami_toml **out, am_error *err);
void ami_toml_free(ami_toml *doc);

/* Member `key` of a table, or NULL (also when t is NULL or not a table). */
const ami_toml *ami_toml_get(const ami_toml *t, const char *key);
/* True for INT and FLOAT; *out gets the value as a double. */
bool ami_toml_number(const ami_toml *v, double *out);
/* "a string", "an integer", ... for messages. */
const char *ami_toml_kind_name(ami_toml_kind kind);

#endif
