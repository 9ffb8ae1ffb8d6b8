/* MediaPipe pose landmarks: normalised x, y (0..1 over the image width and height), z, and
 * visibility / presence scores, 33 BlazePose landmarks a pose.
 *
 * Three spellings are read, told apart by their first bytes:
 * - protobuf text (.pbtxt / .prototxt): `landmark { x: .. y: .. ... }` blocks, bare
 *   (NormalizedLandmarkList) or inside `landmarks { }` (LandmarksDetectionResult); one file is
 *   one frame; `world_landmarks` (metres) are skipped.
 * - JSON: protobuf's JSON mapping ({"landmark": [{"x": .., ...}]}), a list of such frames, or a
 *   list of frames that are lists of landmark objects (the Tasks API's pose_landmarks, whose
 *   first pose is taken). Keys "landmarks" and "pose_landmarks" are accepted for "landmark".
 * - CSV with a header: long (frame, landmark, x, y[, z, visibility, presence]: one row a
 *   landmark) or wide (<name>_x, <name>_y[, <name>_visibility] columns: one row a frame).
 * Decisions: pixels are u = x * W, v = y * H with the image size given (--size W H; the SPEC's
 * origin at the top-left corner). conf = visibility, else presence, else 1, clamped into
 * [0, 1]. Several poses in one frame: the one with the highest mean confidence.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "io/json_internal.h"
#include "io/trackers_internal.h"

static const char *const ami_blazepose[33] = {
    "nose",           "left_eye_inner",  "left_eye",     "left_eye_outer", "right_eye_inner", "right_eye",
    "right_eye_outer", "left_ear",       "right_ear",    "mouth_left",     "mouth_right",     "left_shoulder",
    "right_shoulder", "left_elbow",      "right_elbow",  "left_wrist",     "right_wrist",     "left_pinky",
    "right_pinky",    "left_index",      "right_index",  "left_thumb",     "right_thumb",     "left_hip",
    "right_hip",      "left_knee",       "right_knee",   "left_ankle",     "right_ankle",     "left_heel",
    "right_heel",     "left_foot_index", "right_foot_index"};

/* Landmarks of all frames, [T][K][4]: x, y, visibility-or-presence (NaN = none), seen flag. */
typedef struct {
    double *v;
    size_t T, K, cap;   /* cap in frames */
    char **names;       /* wide CSV: the column stems; else NULL */
    size_t name_count;  /* entries of names set (K is only fixed by the first frame) */
} ami_lm;

/* One more frame of K landmarks, all NaN. K must be the first frame's (callers check: their
 * message says where); AM_E_LIMIT naming src at line when the frames would pass the import
 * budget (a long-CSV row of 8 bytes opens a frame of K landmarks), AM_E_NOMEM. */
static am_status ami_lm_frame(ami_lm *L, size_t K, const char *src, uint32_t line, am_error *err)
{
    if (L->T == 0 && L->K == 0) L->K = K;
    if (K != L->K) return AM_FAIL_AT(err, AM_E_SHAPE, src, line, 0, "%zu landmarks, earlier frames %zu", K, L->K);
    if (L->T == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 16;
        /* The buffer and the det built from it. */
        AMI_TRY(ami_rows_budget(src, line, cap, 44.0 * (double)L->K, err));
        double *v = am_realloc_array(L->v, cap * L->K * 4, sizeof *v);
        if (!v) return AM_FAIL_AT(err, AM_E_NOMEM, src, line, 0, "%zu frames of landmarks", cap);
        L->v = v;
        L->cap = cap;
    }
    for (size_t k = 0; k < L->K * 4; k++) L->v[L->T * L->K * 4 + k] = NAN;
    L->T++;
    return AM_OK;
}

/* ---- protobuf text ---- */
typedef struct {
    const char *s;
    size_t n, i;
    uint32_t line;
    size_t ls;
} ami_pt;

static void ami_pt_ws(ami_pt *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == '\n') {
            p->line++;
            p->ls = ++p->i;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ';') {
            p->i++;
        } else if (c == '#') {
            while (p->i < p->n && p->s[p->i] != '\n') p->i++;
        } else {
            break;
        }
    }
}

static bool ami_pt_ident(ami_pt *p, char *buf, size_t size)
{
    size_t a = p->i;
    while (p->i < p->n && (p->s[p->i] == '_' || (p->s[p->i] >= 'a' && p->s[p->i] <= 'z') ||
                           (p->s[p->i] >= 'A' && p->s[p->i] <= 'Z') || (p->s[p->i] >= '0' && p->s[p->i] <= '9')))
        p->i++;
    size_t len = p->i - a;
    if (!len || len >= size) return false;
    memcpy(buf, p->s + a, len);
    buf[len] = '\0';
    return true;
}

#define AMI_PT_FAIL(code, ...) AM_FAIL_AT(err, code, src, p->line, (uint32_t)(p->i - p->ls + 1), __VA_ARGS__)

/* One message body until '}' (depth > 0) or the end. Poses: each list of landmark blocks (the
 * body of a `landmarks` block, or the top level) becomes a candidate frame; the best one wins. */
static am_status ami_pt_message(ami_pt *p, int depth, bool skip, double *cur, size_t *nlm, const char *src, am_error *err,
                                double *best, size_t *best_n, double *best_score, size_t kmax)
{
    if (depth > 32) return AMI_PT_FAIL(AM_E_LIMIT, "messages nested deeper than 32");
    for (;;) {
        ami_pt_ws(p);
        if (p->i >= p->n) {
            if (depth > 0) return AMI_PT_FAIL(AM_E_SYNTAX, "unterminated block");
            return AM_OK;
        }
        if (p->s[p->i] == '}') {
            if (depth == 0) return AMI_PT_FAIL(AM_E_SYNTAX, "unexpected '}'");
            p->i++;
            return AM_OK;
        }
        char name[64];
        if (!ami_pt_ident(p, name, sizeof name)) return AMI_PT_FAIL(AM_E_SYNTAX, "expected a field name");
        ami_pt_ws(p);
        bool colon = p->i < p->n && p->s[p->i] == ':';
        if (colon) {
            p->i++;
            ami_pt_ws(p);
        }
        if (p->i < p->n && (p->s[p->i] == '{' || p->s[p->i] == '<')) {
            p->i++;
            bool lm = strcmp(name, "landmark") == 0;
            bool list = strcmp(name, "landmarks") == 0 || strcmp(name, "landmark_list") == 0 ||
                        strcmp(name, "pose_landmarks") == 0;
            bool sk = skip || strcmp(name, "world_landmarks") == 0 || strcmp(name, "world_landmark") == 0;
            if (lm) {
                double v[6] = {NAN, NAN, NAN, NAN, NAN, 0};
                AMI_TRY(ami_pt_message(p, depth + 1, sk, v, NULL, src, err, NULL, NULL, NULL, kmax));
                if (!sk && cur && nlm) {
                    if (*nlm >= kmax) return AMI_PT_FAIL(AM_E_LIMIT, "more than %zu landmarks in a pose", kmax);
                    memcpy(cur + 6 * *nlm, v, sizeof v);
                    (*nlm)++;
                }
            } else if (list && !sk) {
                size_t n2 = 0;
                double *buf = am_alloc_array(kmax * 6, sizeof *buf);
                if (!buf) return AM_FAIL(err, AM_E_NOMEM, "landmarks");
                am_status st = ami_pt_message(p, depth + 1, sk, buf, &n2, src, err, best, best_n, best_score, kmax);
                if (st == AM_OK && n2 && best) {
                    double s = 0;
                    for (size_t k = 0; k < n2; k++) {
                        double c = !isnan(buf[6 * k + 3]) ? buf[6 * k + 3] : !isnan(buf[6 * k + 4]) ? buf[6 * k + 4] : 1.0;
                        s += c;
                    }
                    if (s / (double)n2 > *best_score) {
                        *best_score = s / (double)n2;
                        memcpy(best, buf, n2 * 6 * sizeof *buf);
                        *best_n = n2;
                    }
                }
                am_free(buf);
                AMI_TRY(st);
            } else {
                AMI_TRY(ami_pt_message(p, depth + 1, sk, NULL, NULL, src, err, best, best_n, best_score, kmax));
            }
            continue;
        }
        if (!colon) return AMI_PT_FAIL(AM_E_SYNTAX, "expected ':' or '{' after '%s'", name);
        /* A scalar value: a number, an identifier or a quoted string. */
        if (p->i < p->n && (p->s[p->i] == '"' || p->s[p->i] == '\'')) {
            char q = p->s[p->i++];
            while (p->i < p->n && p->s[p->i] != q && p->s[p->i] != '\n') p->i += p->s[p->i] == '\\' ? 2 : 1;
            if (p->i >= p->n || p->s[p->i] != q) return AMI_PT_FAIL(AM_E_SYNTAX, "unterminated string");
            p->i++;
            continue;
        }
        size_t a = p->i;
        while (p->i < p->n && !strchr(" \t\r\n,;#}", p->s[p->i])) p->i++;
        if (p->i == a) return AMI_PT_FAIL(AM_E_SYNTAX, "expected a value for '%s'", name);
        char num[64];
        size_t len = p->i - a;
        if (len >= sizeof num) return AMI_PT_FAIL(AM_E_SYNTAX, "value of '%s' too long", name);
        memcpy(num, p->s + a, len);
        num[len] = '\0';
        static const char *const fields[5] = {"x", "y", "z", "visibility", "presence"};
        for (int f = 0; cur && !nlm && f < 5; f++)
            if (strcmp(name, fields[f]) == 0) {
                char *end = NULL;
                double v = strtod(num, &end);
                if (!end || *end || !isfinite(v)) return AMI_PT_FAIL(AM_E_SYNTAX, "'%s' is not a finite number", num);
                cur[f] = v;
            }
    }
}

static am_status ami_mp_pbtxt(const char *text, size_t len, const char *src, ami_lm *L, am_error *err)
{
    const size_t kmax = 1024;
    ami_pt p = {.s = text, .n = len, .line = 1};
    double *best = am_alloc_array(kmax * 6, sizeof *best), *top = am_alloc_array(kmax * 6, sizeof *top);
    if (!best || !top) {
        am_free(best);
        am_free(top);
        return AM_FAIL(err, AM_E_NOMEM, "landmarks");
    }
    size_t best_n = 0, top_n = 0;
    double best_score = -1;
    am_status st = ami_pt_message(&p, 0, false, top, &top_n, src, err, best, &best_n, &best_score, kmax);
    if (st == AM_OK && top_n && best_n == 0) {
        memcpy(best, top, top_n * 6 * sizeof *top);
        best_n = top_n;
    }
    if (st == AM_OK && best_n == 0) st = AM_FAIL_AT(err, AM_E_EMPTY, src, 0, 0, "no landmark { } blocks");
    if (st == AM_OK) st = ami_lm_frame(L, best_n, src, 0, err);
    for (size_t k = 0; st == AM_OK && k < best_n; k++) {
        const double *b = best + 6 * k;
        double *d = L->v + ((L->T - 1) * L->K + k) * 4;
        d[0] = b[0];
        d[1] = b[1];
        d[2] = !isnan(b[3]) ? b[3] : b[4];
    }
    am_free(best);
    am_free(top);
    return st;
}

/* ---- JSON ---- */
static am_status ami_mp_json_pose(const json_t *arr, const char *src, const char *path, ami_lm *L, am_error *err)
{
    size_t K = json_array_size(arr);
    if (!K) return AM_FAIL_AT(err, AM_E_EMPTY, src, 0, 0, "%s: no landmarks", path);
    if (L->T && K != L->K)
        return AM_FAIL_AT(err, AM_E_SHAPE, src, 0, 0, "%s has %zu landmarks, earlier frames %zu", path, K, L->K);
    AMI_TRY(ami_lm_frame(L, K, src, 0, err));
    for (size_t k = 0; k < K; k++) {
        json_t *lm = json_array_get(arr, k);
        double v[5] = {NAN, NAN, NAN, NAN, NAN};
        static const char *const keys[5] = {"x", "y", "z", "visibility", "presence"};
        if (!json_is_object(lm)) return AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "%s[%zu] is not a landmark object", path, k);
        for (int f = 0; f < 5; f++) {
            json_t *x = json_object_get(lm, keys[f]);
            if (!x) continue;
            if (!json_is_number(x) || !isfinite(json_number_value(x)))
                return AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "%s[%zu].%s is not a number", path, k, keys[f]);
            v[f] = json_number_value(x);
        }
        if (isnan(v[0]) || isnan(v[1])) return AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "%s[%zu] has no x and y", path, k);
        double *d = L->v + ((L->T - 1) * L->K + k) * 4;
        d[0] = v[0];
        d[1] = v[1];
        d[2] = !isnan(v[3]) ? v[3] : v[4];
    }
    return AM_OK;
}

static const json_t *ami_mp_list_of(const json_t *frame)
{
    if (json_is_array(frame)) return frame;
    static const char *const keys[3] = {"landmark", "landmarks", "pose_landmarks"};
    for (int k = 0; k < 3; k++) {
        const json_t *v = json_object_get(frame, keys[k]);
        if (v) return v;
    }
    return NULL;
}

static am_status ami_mp_json(const char *text, size_t len, const char *src, ami_lm *L, am_error *err)
{
    json_t *doc = NULL;
    AMI_TRY(ami_json_parse(text, len, src, &doc, err));
    am_status st = AM_OK;
    const json_t *frames = json_is_array(doc) ? doc : NULL;
    size_t T = frames ? json_array_size(frames) : 1;
    for (size_t t = 0; t < T && st == AM_OK; t++) {
        const json_t *fr = frames ? json_array_get(frames, t) : doc;
        const json_t *lst = ami_mp_list_of(fr);
        char path[64];
        snprintf(path, sizeof path, frames ? "frame %zu" : "landmarks", t);
        /* A frame that is a list of lists holds several poses: take the first. */
        if (json_is_array(lst) && json_array_size(lst) && json_is_array(json_array_get(lst, 0))) lst = json_array_get(lst, 0);
        if (!json_is_array(lst)) {
            st = AM_FAIL_AT(err, AM_E_SCHEMA, src, 0, 0, "%s: expected a list of landmarks (or {\"landmark\": [...]})", path);
            break;
        }
        st = ami_mp_json_pose(lst, src, path, L, err);
    }
    json_decref(doc);
    return st;
}

/* ---- CSV ---- */
static int ami_col(const ami_field *f, size_t n, const char *const *names)
{
    for (size_t k = 0; k < n; k++)
        for (const char *const *q = names; *q; q++)
            if (ami_field_is(&f[k], *q, true)) return (int)k;
    return -1;
}

static am_status ami_mp_csv(const char *text, size_t len, const char *src, ami_lm *L, am_error *err)
{
    ami_csv c;
    ami_csv_init(&c, text, len, ',', true);
    am_status st = AM_OK;
    ami_field *hdr = NULL;
    int32_t *wide = NULL;
    ami_header index = {0};
    size_t nh = 0;
    if (!ami_csv_row(&c, &st, src, err) || c.count == 0) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_EMPTY, src, 1, 0, "no header row");
        goto done;
    }
    nh = c.count;
    hdr = am_alloc_array(nh, sizeof *hdr);
    if (!hdr) {
        st = AM_FAIL(err, AM_E_NOMEM, "header");
        goto done;
    }
    memcpy(hdr, c.f, nh * sizeof *hdr);
    static const char *const n_frame[] = {"frame", "frame_index", "frame_idx", NULL};
    static const char *const n_lm[] = {"landmark", "landmark_index", "landmark_id", "id", "index", NULL};
    static const char *const n_x[] = {"x", NULL}, *const n_y[] = {"y", NULL};
    static const char *const n_vis[] = {"visibility", NULL}, *const n_pres[] = {"presence", NULL};
    int cf = ami_col(hdr, nh, n_frame), cl = ami_col(hdr, nh, n_lm), cx = ami_col(hdr, nh, n_x), cy = ami_col(hdr, nh, n_y),
        cv = ami_col(hdr, nh, n_vis), cp = ami_col(hdr, nh, n_pres);
    if (cf >= 0 && cl >= 0 && cx >= 0 && cy >= 0) {
        /* Long: frames in increasing frame number, landmarks by index. */
        double cur = NAN;
        while (ami_csv_data_row(&c, nh, &st, src, err)) {
            double v[6];
            bool e;
            int idx[6] = {cf, cl, cx, cy, cv, cp};
            for (int q = 0; q < 6; q++) {
                v[q] = NAN;
                if (idx[q] >= 0 && (!ami_field_number(&c.f[idx[q]], &v[q], &e) || isinf(v[q]))) {
                    st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "cell %d is not a number", idx[q] + 1);
                    goto done;
                }
            }
            if (!(v[0] >= 0 && v[0] == floor(v[0]) && v[1] >= 0 && v[1] < 1024 && v[1] == floor(v[1]))) {
                st = AM_FAIL_AT(err, AM_E_VALUE, src, c.line, 0, "frame and landmark must be whole numbers >= 0 (landmark < 1024)");
                goto done;
            }
            if (v[0] != cur) {
                if (!isnan(cur) && v[0] < cur) {
                    st = AM_FAIL_AT(err, AM_E_VALUE, src, c.line, 0, "frame %g after frame %g: rows must be in frame order", v[0], cur);
                    goto done;
                }
                /* The landmark count is fixed by the first frame's rows: grow it while in frame 0. */
                if ((st = ami_lm_frame(L, L->T ? L->K : 33, src, c.line, err)) != AM_OK) goto done;
                cur = v[0];
            }
            size_t k = (size_t)v[1];
            if (k >= L->K) {
                st = AM_FAIL_AT(err, AM_E_VALUE, src, c.line, 0, "landmark %zu of at most %zu", k, L->K);
                goto done;
            }
            double *d = L->v + ((L->T - 1) * L->K + k) * 4;
            d[0] = v[2];
            d[1] = v[3];
            d[2] = !isnan(v[4]) ? v[4] : v[5];
        }
        goto done;
    }
    /* Wide: <name>_x / <name>_y columns. */
    wide = am_alloc_array(nh * 3, sizeof *wide);
    L->names = am_alloc_array(nh, sizeof *L->names);
    if (!wide || !L->names || ami_header_index(&index, hdr, nh) != AM_OK) {
        st = AM_FAIL(err, AM_E_NOMEM, "columns");
        goto done;
    }
    size_t K = 0;
    for (size_t k = 0; k < nh; k++) {
        if (hdr[k].len < 3 || memcmp(hdr[k].p + hdr[k].len - 2, "_x", 2) != 0) continue;
        size_t sl = hdr[k].len - 2;
        int y = ami_header_find(&index, hdr[k].p, sl, "_y"), vis = ami_header_find(&index, hdr[k].p, sl, "_visibility");
        if (y < 0) continue;
        wide[3 * K] = (int32_t)k;
        wide[3 * K + 1] = y;
        wide[3 * K + 2] = vis;
        L->name_count = K + 1;
        if (!(L->names[K++] = am_strndup(hdr[k].p, sl))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
    }
    if (K == 0) {
        st = AM_FAIL_AT(err, AM_E_FORMAT, src, 1, 0,
                        "a MediaPipe CSV needs frame, landmark, x, y columns or <name>_x, <name>_y columns");
        goto done;
    }
    while (ami_csv_data_row(&c, nh, &st, src, err)) {
        if ((st = ami_lm_frame(L, K, src, c.line, err)) != AM_OK) break;
        for (size_t k = 0; k < K; k++) {
            double v[3] = {NAN, NAN, NAN};
            bool e;
            for (int q = 0; q < 3; q++)
                if (wide[3 * k + (size_t)q] >= 0 &&
                    (!ami_field_number(&c.f[wide[3 * k + (size_t)q]], &v[q], &e) || isinf(v[q]))) {
                    st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "cell %d is not a number", wide[3 * k + (size_t)q] + 1);
                    goto done;
                }
            double *d = L->v + ((L->T - 1) * K + k) * 4;
            d[0] = v[0];
            d[1] = v[1];
            d[2] = v[2];
        }
    }
done:
    ami_header_free(&index);
    am_free(hdr);
    am_free(wide);
    ami_csv_free(&c);
    return st;
}

am_status ami_mediapipe_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                              am_error *err)
{
    *out = NULL;
    if (!(o && o->width > 0 && o->height > 0))
        return AM_FAIL_AT(err, AM_E_USAGE, src, 0, 0, "MediaPipe landmarks are normalised: give the image size (--size W H)");
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    /* pbtxt files usually open with '#' comments or a field name followed by '{'. */
    bool json = i < len && (text[i] == '{' || text[i] == '[');
    bool pbtxt = false;
    if (!json) {
        for (size_t k = i; k < len && k < i + 4096 && !pbtxt; k++)
            if (text[k] == '{') pbtxt = true;
            else if (text[k] == ',') break;
        if (i < len && text[i] == '#') pbtxt = true;
    }
    ami_lm L = {0};
    am_status st = json ? ami_mp_json(text, len, src, &L, err) : pbtxt ? ami_mp_pbtxt(text, len, src, &L, err)
                                                                    : ami_mp_csv(text, len, src, &L, err);
    am_mdet *d = NULL;
    if (st == AM_OK && L.T == 0) st = AM_FAIL_AT(err, AM_E_EMPTY, src, 0, 0, "no frames of landmarks");
    if (st == AM_OK) st = am_mdet_create(1, L.T, L.K, &d, err);
    if (st == AM_OK) {
        for (size_t k = 0; k < L.K && st == AM_OK; k++) {
            char b[32];
            snprintf(b, sizeof b, "lm_%zu", k);
            const char *nm = L.names ? L.names[k] : L.K == 33 ? ami_blazepose[k] : b;
            if (!(d->names[k] = am_strdup(nm))) st = AM_FAIL(err, AM_E_NOMEM, "names");
        }
        for (size_t q = 0; q < L.T * L.K; q++) {
            const double *v = L.v + 4 * q;
            if (isnan(v[0]) || isnan(v[1])) continue;
            d->uv[2 * q] = (float)(v[0] * o->width);
            d->uv[2 * q + 1] = (float)(v[1] * o->height);
            double c = isnan(v[2]) ? 1.0 : v[2] < 0 ? 0.0 : v[2] > 1 ? 1.0 : v[2];
            d->conf[q] = (float)c;
            if (c <= 0) d->uv[2 * q] = d->uv[2 * q + 1] = NAN;
        }
        if (o->fps > 0) d->fps = o->fps;
        else if (L.T > 1)
            ami_warn(AM_WARN_MISSING_DATA, "%s: MediaPipe landmarks carry no frame rate; 30 fps assumed (--fps)",
                     src ? src : "MediaPipe");
    }
    am_free(L.v);
    ami_strings_free(L.names, L.name_count);
    if (st != AM_OK) {
        am_mdet_free(d);
        return st;
    }
    *out = d;
    return AM_OK;
}
