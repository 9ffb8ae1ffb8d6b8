/* BVH (Biovision Hierarchy) reader and writer.
 *
 * The grammar followed is the de-facto one of the Biovision/CMU/MotionBuilder exporters:
 *   HIERARCHY ROOT name { OFFSET x y z CHANNELS n c1..cn (JOINT ... | End Site { OFFSET }) }
 *   MOTION Frames: T  Frame Time: dt  then T lines of C numbers.
 * Keywords are matched caselessly because many exporters ignore case ("End site", "ROOT").
 * The hierarchy is tokenized freely (any whitespace, braces may touch words); the frame block
 * is read line by line, since the only way to report a short or long frame is by its line. */
#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/bvh.h"
#include "anymove/math.h"
#include "core/internal.h"
#include "io/json_internal.h"

#define AMI_BVH_MAX_JOINTS 100000u
#define AMI_BVH_NAME_MAX 255u
/* am_bvh_opts.max_bytes when 0, and am_bvh_parse's budget for the frames. */
#define AMI_BVH_DEFAULT_BUDGET ((uint64_t)1 << 30)

typedef struct ami_lex {
    const char *p, *end, *source;
    uint64_t frame_budget; /* bytes the decoded frames may take */
    ami_names names;       /* joint names seen so far */
    uint32_t line, col;
    /* current token */
    const char *tok;
    size_t tok_len;
    uint32_t tok_line, tok_col;
} ami_lex;

static void ami_lex_advance(ami_lex *lx, size_t n)
{
    for (size_t i = 0; i < n && lx->p < lx->end; i++, lx->p++) {
        if (*lx->p == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
    }
}

/* Next token; tok_len 0 at the end of input. Braces and ':' are tokens of their own. */
static void ami_lex_next(ami_lex *lx)
{
    while (lx->p < lx->end && isspace((unsigned char)*lx->p)) ami_lex_advance(lx, 1);
    lx->tok = lx->p;
    lx->tok_line = lx->line;
    lx->tok_col = lx->col;
    if (lx->p >= lx->end) {
        lx->tok_len = 0;
        return;
    }
    char c = *lx->p;
    size_t n = 1;
    if (c != '{' && c != '}' && c != ':') {
        while (lx->p + n < lx->end) {
            char d = lx->p[n];
            if (isspace((unsigned char)d) || d == '{' || d == '}' || d == ':') break;
            n++;
        }
    }
    lx->tok_len = n;
    ami_lex_advance(lx, n);
}

static bool ami_tok_is(const ami_lex *lx, const char *word)
{
    size_t n = strlen(word);
    if (lx->tok_len != n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)lx->tok[i]) != tolower((unsigned char)word[i])) return false;
    return true;
}

static am_status ami_lex_fail(const ami_lex *lx, am_error *err, am_status code, const char *what)
{
    char got[40];
    if (lx->tok_len == 0) {
        snprintf(got, sizeof got, "end of file");
    } else {
        size_t n = lx->tok_len < 24 ? lx->tok_len : 24;
        snprintf(got, sizeof got, "'%.*s%s'", (int)n, lx->tok, lx->tok_len > 24 ? "..." : "");
    }
    return AM_FAIL_AT(err, code, lx->source, lx->tok_line, lx->tok_col, "expected %s, got %s",
                      what, got);
}

static am_status ami_expect(ami_lex *lx, const char *word, am_error *err)
{
    ami_lex_next(lx);
    if (!ami_tok_is(lx, word)) {
        char what[40];
        snprintf(what, sizeof what, "'%s'", word);
        return ami_lex_fail(lx, err, AM_E_SYNTAX, what);
    }
    return AM_OK;
}

/* Parse a number from a token of the given extent (need not be NUL-terminated). */
static bool ami_parse_number(const char *s, size_t len, double *out)
{
    char buf[80];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *endp = NULL;
    double v = strtod(buf, &endp);
    if (endp != buf + len) return false;
    *out = v;
    return true;
}

static am_status ami_lex_number(ami_lex *lx, double *out, am_error *err)
{
    ami_lex_next(lx);
    if (!ami_parse_number(lx->tok, lx->tok_len, out)) return ami_lex_fail(lx, err, AM_E_SYNTAX, "a number");
    if (!isfinite(*out))
        return AM_FAIL_AT(err, AM_E_NONFINITE, lx->source, lx->tok_line, lx->tok_col,
                          "'%.*s' is not a finite number", (int)(lx->tok_len < 24 ? lx->tok_len : 24),
                          lx->tok);
    return AM_OK;
}

void am_bvh_free(am_bvh *bvh)
{
    if (!bvh) return;
    for (size_t j = 0; j < bvh->joint_count; j++) am_free(bvh->joints[j].name);
    am_free(bvh->joints);
    am_free(bvh->frames);
    am_warning_list_free(&bvh->warnings);
    am_free(bvh->source);
    am_free(bvh);
}

static const char *const ami_channel_names[AM_BVH_CHANNEL_COUNT] = {
    "Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};

/* OFFSET x y z */
static am_status ami_parse_offset(ami_lex *lx, double v[3], am_error *err)
{
    AMI_TRY(ami_expect(lx, "OFFSET", err));
    for (int k = 0; k < 3; k++) AMI_TRY(ami_lex_number(lx, &v[k], err));
    return AM_OK;
}

static am_status ami_parse_hierarchy(ami_lex *lx, am_bvh *b, am_error *err)
{
    size_t cap = 0;
    int32_t stack_top = -1;     /* the joint whose '{' block we are in */
    AMI_TRY(ami_expect(lx, "HIERARCHY", err));
    ami_lex_next(lx);
    if (!ami_tok_is(lx, "ROOT")) return ami_lex_fail(lx, err, AM_E_SYNTAX, "'ROOT'");
    for (;;) {
        /* here the current token is ROOT or JOINT: a new joint follows */
        uint32_t kw_line = lx->tok_line, kw_col = lx->tok_col;
        ami_lex_next(lx);
        if (lx->tok_len == 0 || lx->tok[0] == '{' || lx->tok[0] == '}')
            return ami_lex_fail(lx, err, AM_E_SYNTAX, "a joint name");
        if (lx->tok_len > AMI_BVH_NAME_MAX)
            return AM_FAIL_AT(err, AM_E_LIMIT, lx->source, lx->tok_line, lx->tok_col,
                              "joint name longer than %u bytes", AMI_BVH_NAME_MAX);
        /* A C string would end at the NUL: two different names could then read as one. */
        if (memchr(lx->tok, '\0', lx->tok_len))
            return AM_FAIL_AT(err, AM_E_SYNTAX, lx->source, lx->tok_line, lx->tok_col,
                              "joint name contains a NUL byte");
        if (b->joint_count >= AMI_BVH_MAX_JOINTS)
            return AM_FAIL_AT(err, AM_E_LIMIT, lx->source, kw_line, kw_col,
                              "more than %u joints", AMI_BVH_MAX_JOINTS);
        int32_t seen = ami_names_find(&lx->names, lx->tok, lx->tok_len);
        if (seen >= 0)
            return AM_FAIL_AT(err, AM_E_DUPLICATE, lx->source, lx->tok_line, lx->tok_col,
                              "joint '%s' appears twice", b->joints[seen].name);
        if (b->joint_count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            am_bvh_joint *nj = am_realloc_array(b->joints, ncap, sizeof *nj);
            if (!nj) return AM_FAIL(err, AM_E_NOMEM, "BVH joints");
            memset(nj + cap, 0, (ncap - cap) * sizeof *nj);
            b->joints = nj;
            cap = ncap;
        }
        am_bvh_joint *jt = &b->joints[b->joint_count];
        jt->name = am_strndup(lx->tok, lx->tok_len);
        int32_t prev;
        if (!jt->name ||
            ami_names_add(&lx->names, jt->name, strlen(jt->name), (int32_t)b->joint_count, &prev) !=
                AM_OK) {
            am_free(jt->name); /* not counted yet: am_bvh_free would not see it */
            jt->name = NULL;
            return AM_FAIL(err, AM_E_NOMEM, "BVH joint name");
        }
        jt->parent = stack_top;
        jt->channel_start = (uint32_t)b->channel_count;
        int32_t self = (int32_t)b->joint_count++;
        AMI_TRY(ami_expect(lx, "{", err));
        AMI_TRY(ami_parse_offset(lx, jt->offset, err));
        AMI_TRY(ami_expect(lx, "CHANNELS", err));
        double n = 0;
        ami_lex_next(lx);
        if (!ami_parse_number(lx->tok, lx->tok_len, &n) || n != floor(n))
            return ami_lex_fail(lx, err, AM_E_SYNTAX, "a channel count");
        if (n < 0 || n > AM_BVH_MAX_CHANNELS)
            return AM_FAIL_AT(err, AM_E_VALUE, lx->source, lx->tok_line, lx->tok_col,
                              "joint '%s': %g channels (0 to 6 allowed)", jt->name, n);
        jt->channel_count = (uint32_t)n;
        for (uint32_t c = 0; c < jt->channel_count; c++) {
            ami_lex_next(lx);
            int found = -1;
            for (int k = 0; k < AM_BVH_CHANNEL_COUNT; k++)
                if (ami_tok_is(lx, ami_channel_names[k])) found = k;
            if (found < 0) {
                char what[64];
                snprintf(what, sizeof what, "channel %u of %u of joint '%.24s'", c + 1,
                         jt->channel_count, jt->name);
                return ami_lex_fail(lx, err, AM_E_SYNTAX, what);
            }
            jt->channels[c] = (uint8_t)found;
        }
        b->channel_count += jt->channel_count;
        stack_top = self;
        /* children, End Site, or the closing brace(s) */
        for (;;) {
            ami_lex_next(lx);
            if (ami_tok_is(lx, "JOINT")) break;
            if (ami_tok_is(lx, "End")) {
                am_bvh_joint *cur = &b->joints[stack_top];
                AMI_TRY(ami_expect(lx, "Site", err));
                if (cur->has_end)
                    return AM_FAIL_AT(err, AM_E_SYNTAX, lx->source, lx->tok_line, lx->tok_col,
                                      "joint '%s' has two End Sites", cur->name);
                AMI_TRY(ami_expect(lx, "{", err));
                AMI_TRY(ami_parse_offset(lx, cur->end_offset, err));
                AMI_TRY(ami_expect(lx, "}", err));
                cur->has_end = true;
                continue;
            }
            if (lx->tok_len == 1 && lx->tok[0] == '}') {
                stack_top = b->joints[stack_top].parent;
                if (stack_top < 0) return AM_OK; /* the root's block is closed */
                continue;
            }
            if (ami_tok_is(lx, "MOTION") || ami_tok_is(lx, "ROOT"))
                return ami_lex_fail(lx, err, AM_E_SYNTAX, "'}' closing the joint blocks");
            return ami_lex_fail(lx, err, AM_E_SYNTAX, "'JOINT', 'End Site' or '}'");
        }
    }
}

/* Skip spaces and tabs (not newlines). */
static void ami_skip_blank(ami_lex *lx)
{
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r'))
        ami_lex_advance(lx, 1);
}

static am_status ami_parse_motion(ami_lex *lx, am_bvh *b, am_error *err)
{
    ami_lex_next(lx);
    if (!ami_tok_is(lx, "MOTION")) {
        if (ami_tok_is(lx, "ROOT"))
            return AM_FAIL_AT(err, AM_E_UNSUPPORTED, lx->source, lx->tok_line, lx->tok_col,
                              "a second ROOT: one skeleton per file is supported");
        if (lx->tok_len == 0)
            return AM_FAIL_AT(err, AM_E_SYNTAX, lx->source, lx->tok_line, lx->tok_col,
                              "missing MOTION section after the hierarchy");
        return ami_lex_fail(lx, err, AM_E_SYNTAX, "'MOTION'");
    }
    AMI_TRY(ami_expect(lx, "Frames", err));
    AMI_TRY(ami_expect(lx, ":", err));
    double frames = 0;
    AMI_TRY(ami_lex_number(lx, &frames, err));
    uint32_t fl = lx->tok_line, fc = lx->tok_col;
    if (frames != floor(frames) || frames < 0)
        return AM_FAIL_AT(err, AM_E_VALUE, lx->source, fl, fc, "Frames: %g is not a count", frames);
    if (frames == 0)
        return AM_FAIL_AT(err, AM_E_EMPTY, lx->source, fl, fc, "Frames: 0 (the clip has no frames)");
    AMI_TRY(ami_expect(lx, "Frame", err));
    AMI_TRY(ami_expect(lx, "Time", err));
    AMI_TRY(ami_expect(lx, ":", err));
    AMI_TRY(ami_lex_number(lx, &b->frame_time, err));
    if (!(b->frame_time > 0) || !am_fps_valid(1.0 / b->frame_time))
        return AM_FAIL_AT(err, AM_E_VALUE, lx->source, lx->tok_line, lx->tok_col,
                          "Frame Time %g s is outside [%g, %g] s (%g to %g fps)", b->frame_time,
                          1.0 / AM_FPS_MAX, 1.0 / AM_FPS_MIN, AM_FPS_MIN, AM_FPS_MAX);
    if (b->channel_count == 0)
        return AM_FAIL_AT(err, AM_E_VALUE, lx->source, fl, fc, "the hierarchy has no channels");
    /* Each value takes at least two bytes ("0 "), which bounds the allocation by the input. */
    size_t remaining = (size_t)(lx->end - lx->p);
    if (frames > (double)(remaining / 2 + 1) / (double)b->channel_count)
        return AM_FAIL_AT(err, AM_E_TRUNCATED, lx->source, fl, fc,
                          "Frames: %.0f x %zu channels cannot fit in the %zu bytes left", frames,
                          b->channel_count, remaining);
    b->frame_count = (size_t)frames;
    am_status bs = AMI_BUDGET_CHECK(err, lx->source, (uint64_t)frames * b->channel_count * 8,
                                    lx->frame_budget, "Frames: %.0f x %zu channels", frames,
                                    b->channel_count);
    if (bs != AM_OK) {
        if (err) err->line = fl, err->col = fc;
        return bs;
    }
    b->frames = am_alloc_array(b->frame_count * b->channel_count, sizeof *b->frames);
    if (!b->frames) return AM_FAIL(err, AM_E_NOMEM, "%zu BVH frames", b->frame_count);
    /* the rest of the Frame Time line must be empty */
    ami_skip_blank(lx);
    if (lx->p < lx->end && *lx->p != '\n')
        return AM_FAIL_AT(err, AM_E_SYNTAX, lx->source, lx->line, lx->col,
                          "unexpected text after Frame Time");
    size_t t = 0;
    while (t < b->frame_count) {
        if (lx->p >= lx->end)
            return AM_FAIL_AT(err, AM_E_TRUNCATED, lx->source, lx->line, lx->col,
                              "%zu frame lines, Frames: says %zu", t, b->frame_count);
        ami_lex_advance(lx, 1); /* the newline ending the previous line */
        ami_skip_blank(lx);
        if (lx->p >= lx->end || *lx->p == '\n') continue; /* blank line */
        uint32_t line = lx->line;
        double *row = b->frames + t * b->channel_count;
        size_t c = 0;
        while (lx->p < lx->end && *lx->p != '\n') {
            const char *s = lx->p;
            uint32_t col = lx->col;
            size_t n = 0;
            while (s + n < lx->end && !isspace((unsigned char)s[n])) n++;
            double v = 0;
            if (!ami_parse_number(s, n, &v))
                return AM_FAIL_AT(err, AM_E_SYNTAX, lx->source, line, col,
                                  "frame %zu: '%.*s' is not a number", t + 1, (int)(n < 24 ? n : 24), s);
            if (!isfinite(v))
                return AM_FAIL_AT(err, AM_E_NONFINITE, lx->source, line, col,
                                  "frame %zu, channel %zu: '%.*s'", t + 1, c + 1, (int)(n < 24 ? n : 24), s);
            if (c >= b->channel_count)
                return AM_FAIL_AT(err, AM_E_SHAPE, lx->source, line, col,
                                  "frame %zu has more than %zu values", t + 1, b->channel_count);
            row[c++] = v;
            ami_lex_advance(lx, n);
            ami_skip_blank(lx);
        }
        if (c != b->channel_count)
            return AM_FAIL_AT(err, AM_E_SHAPE, lx->source, line, lx->col,
                              "frame %zu has %zu values, the hierarchy has %zu channels", t + 1,
                              c, b->channel_count);
        t++;
    }
    /* Anything but whitespace after the last frame means Frames: was wrong. */
    while (lx->p < lx->end && isspace((unsigned char)*lx->p)) ami_lex_advance(lx, 1);
    if (lx->p < lx->end)
        return AM_FAIL_AT(err, AM_E_SHAPE, lx->source, lx->line, lx->col,
                          "more frame lines than Frames: %zu", b->frame_count);
    return AM_OK;
}

static am_status ami_bvh_parse(const char *text, size_t len, const char *source,
                               uint64_t frame_budget, am_bvh **out, am_error *err)
{
    assert(out && (text || len == 0));
    *out = NULL;
    am_bvh *b = am_alloc(sizeof *b);
    if (!b) return AM_FAIL(err, AM_E_NOMEM, "BVH");
    ami_lex lx = {.p = text, .end = text + len, .source = source, .line = 1, .col = 1,
                  .frame_budget = frame_budget};
    am_status s = ami_parse_hierarchy(&lx, b, err);
    if (s == AM_OK) s = ami_parse_motion(&lx, b, err);
    ami_names_free(&lx.names);
    if (s == AM_OK && source && !(b->source = am_strdup(source)))
        s = AM_FAIL(err, AM_E_NOMEM, "BVH source name");
    if (s != AM_OK) {
        am_bvh_free(b);
        return s;
    }
    *out = b;
    return AM_OK;
}

am_status am_bvh_parse(const char *text, size_t len, const char *source, am_bvh **out,
                       am_error *err)
{
    return ami_bvh_parse(text, len, source, AMI_BVH_DEFAULT_BUDGET, out, err);
}

am_status am_bvh_load(const char *path, const am_bvh_opts *opts, am_bvh **out, am_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (out) *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    /* After entering: the call's own max_bytes may be the smaller budget. */
    uint64_t max = ami_budget(opts && opts->max_bytes ? opts->max_bytes : AMI_BVH_DEFAULT_BUDGET);
    am_status s = am_file_read(path, max > SIZE_MAX ? SIZE_MAX : (size_t)max, &text, &len, err);
    /* The text stays in memory while the frames are decoded: both count. */
    if (s >= 0) s = ami_bvh_parse(text, len, path, len < max ? max - len : 1, out, err);
    am_free(text);
    am_scope_leave(&sc, s >= 0 ? &(*out)->warnings : NULL);
    return s;
}

/* ---- writer ---- */

/* One tab per level, up to a point: readers ignore the whitespace, and a full indent of a
 * 50,000-deep chain would be 1.25e9 tabs. */
#define AMI_BVH_MAX_INDENT 32u

static void ami_indent(am_buf *o, size_t depth)
{
    static const char tabs[AMI_BVH_MAX_INDENT] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
                                                 "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    am_buf_append(o, tabs, depth < AMI_BVH_MAX_INDENT ? depth : AMI_BVH_MAX_INDENT);
}

am_status am_bvh_to_buf(const am_bvh *bvh, am_buf *o, am_error *err)
{
    assert(bvh && o);
    if (bvh->joint_count == 0) return AM_FAIL(err, AM_E_EMPTY, "BVH without joints");
    size_t J = bvh->joint_count;
    size_t *depth = am_alloc_array(J, sizeof *depth);
    if (!depth) return AM_FAIL(err, AM_E_NOMEM, "BVH depth");
    am_buf_printf(o, "HIERARCHY\n");
    for (size_t j = 0; j < J; j++) {
        const am_bvh_joint *jt = &bvh->joints[j];
        depth[j] = jt->parent < 0 ? 0 : depth[jt->parent] + 1;
        /* close the blocks of the joints that are not ancestors of j */
        if (j > 0) {
            size_t prev_depth = depth[j - 1] + 1; /* open blocks after joint j-1 */
            for (size_t d = prev_depth; d > depth[j]; d--) {
                ami_indent(o, d - 1);
                am_buf_printf(o, "}\n");
            }
        }
        ami_indent(o, depth[j]);
        am_buf_printf(o, "%s %s\n", jt->parent < 0 ? "ROOT" : "JOINT", jt->name);
        ami_indent(o, depth[j]);
        am_buf_printf(o, "{\n");
        ami_indent(o, depth[j] + 1);
        am_buf_printf(o, "OFFSET %.9g %.9g %.9g\n", jt->offset[0], jt->offset[1], jt->offset[2]);
        ami_indent(o, depth[j] + 1);
        am_buf_printf(o, "CHANNELS %u", jt->channel_count);
        for (uint32_t c = 0; c < jt->channel_count; c++)
            am_buf_printf(o, " %s", ami_channel_names[jt->channels[c] % AM_BVH_CHANNEL_COUNT]);
        am_buf_printf(o, "\n");
        if (jt->has_end) {
            ami_indent(o, depth[j] + 1);
            am_buf_printf(o, "End Site\n");
            ami_indent(o, depth[j] + 1);
            am_buf_printf(o, "{\n");
            ami_indent(o, depth[j] + 2);
            am_buf_printf(o, "OFFSET %.9g %.9g %.9g\n", jt->end_offset[0], jt->end_offset[1],
                          jt->end_offset[2]);
            ami_indent(o, depth[j] + 1);
            am_buf_printf(o, "}\n");
        }
    }
    for (size_t d = depth[J - 1] + 1; d > 0; d--) {
        ami_indent(o, d - 1);
        am_buf_printf(o, "}\n");
    }
    am_free(depth);
    /* The frame time exactly (1 / fps reads back as the same double): "%.9g" turned 30 fps
     * into 30.00000003. */
    char ft[40];
    size_t ftn = ami_json_format_double(bvh->frame_time, ft, sizeof ft);
    am_buf_printf(o, "MOTION\nFrames: %zu\nFrame Time: %.*s\n", bvh->frame_count, (int)ftn, ft);
    for (size_t t = 0; t < bvh->frame_count; t++) {
        const double *row = bvh->frames + t * bvh->channel_count;
        for (size_t c = 0; c < bvh->channel_count; c++)
            am_buf_printf(o, c ? " %.9g" : "%.9g", row[c] == 0 ? 0.0 : row[c]);
        am_buf_printf(o, "\n");
    }
    if (o->failed) return AM_FAIL(err, AM_E_NOMEM, "BVH text");
    return AM_OK;
}

am_status am_bvh_write(const am_bvh *bvh, const char *path, am_error *err)
{
    am_buf o = {0};
    am_status s = am_bvh_to_buf(bvh, &o, err);
    if (s == AM_OK) s = am_file_write(path, o.data, o.len, err);
    am_buf_free(&o);
    return s;
}

/* ---- file-axes kinematics ---- */

void am_bvh_joint_rotation(const am_bvh *bvh, size_t frame, size_t joint, double R[9])
{
    const am_bvh_joint *jt = &bvh->joints[joint];
    const double *row = bvh->frames + frame * bvh->channel_count + jt->channel_start;
    am_mat3_identity(R);
    for (uint32_t c = 0; c < jt->channel_count; c++) {
        double A[9];
        double a = AM_RAD(row[c]);
        switch (jt->channels[c]) {
        case AM_BVH_XROT: am_mat3_rot_x(a, A); break;
        case AM_BVH_YROT: am_mat3_rot_y(a, A); break;
        case AM_BVH_ZROT: am_mat3_rot_z(a, A); break;
        default: continue;
        }
        am_mat3_mul(R, A, R); /* file order: the first channel is the leftmost factor */
    }
}

/* The joint's translation at a frame: OFFSET, with position channels replacing components. */
static void ami_bvh_joint_translation(const am_bvh *bvh, size_t frame, size_t joint, double t[3])
{
    const am_bvh_joint *jt = &bvh->joints[joint];
    const double *row = bvh->frames + frame * bvh->channel_count + jt->channel_start;
    memcpy(t, jt->offset, sizeof(double) * 3);
    for (uint32_t c = 0; c < jt->channel_count; c++)
        if (jt->channels[c] <= AM_BVH_ZPOS) t[jt->channels[c]] = row[c];
}

void am_bvh_frame_positions(const am_bvh *bvh, size_t frame, double *rot, double *pos,
                            double *ends)
{
    for (size_t j = 0; j < bvh->joint_count; j++) {
        double R[9], tr[3];
        am_bvh_joint_rotation(bvh, frame, j, R);
        ami_bvh_joint_translation(bvh, frame, j, tr);
        int32_t par = bvh->joints[j].parent;
        if (par < 0) {
            memcpy(rot + j * 9, R, sizeof R);
            memcpy(pos + j * 3, tr, sizeof tr);
        } else {
            double d[3];
            am_mat3_mul_vec3(rot + (size_t)par * 9, tr, d);
            am_vec3_add(pos + (size_t)par * 3, d, pos + j * 3);
            am_mat3_mul(rot + (size_t)par * 9, R, rot + j * 9);
        }
        if (ends) {
            if (bvh->joints[j].has_end) {
                double d[3];
                am_mat3_mul_vec3(rot + j * 9, bvh->joints[j].end_offset, d);
                am_vec3_add(pos + j * 3, d, ends + j * 3);
            } else {
                memcpy(ends + j * 3, pos + j * 3, sizeof(double) * 3);
            }
        }
    }
}

double am_bvh_rest_size(const am_bvh *bvh)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double *p = am_alloc_array(bvh->joint_count, 3 * sizeof(double));
    if (!p) return 0;
    for (size_t j = 0; j < bvh->joint_count; j++) {
        const am_bvh_joint *jt = &bvh->joints[j];
        if (jt->parent < 0) memcpy(p, jt->offset, sizeof(double) * 3);
        else am_vec3_add(p + (size_t)jt->parent * 3, jt->offset, p + j * 3);
        for (int k = 0; k < 3; k++) {
            double v = p[j * 3 + (size_t)k], e = v + jt->end_offset[k];
            lo[k] = fmin(lo[k], v);
            hi[k] = fmax(hi[k], v);
            if (jt->has_end) {
                lo[k] = fmin(lo[k], e);
                hi[k] = fmax(hi[k], e);
            }
        }
    }
    am_free(p);
    double d[3];
    am_vec3_sub(hi, lo, d);
    return am_vec3_norm(d);
}
