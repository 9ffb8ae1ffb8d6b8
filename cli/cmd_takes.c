/* `anymove takes RUNS_DIR -o takes.csv`: every take (a folder with a motion.json from solve)
 * scored against the capture skill's quality gates, one row per take, best first. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "anymove/camera.h"
#include "anymove/capture.h"
#include "anymove/metrics.h"
#include "anymove/mocap.h"
#include "anymove/rig.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_takes_help(FILE *out)
{
    fprintf(out,
            "usage: anymove takes RUNS_DIR -o TAKES.csv [--creature CREATURE.json] [--quiet]\n\n"
            "Scores every take under RUNS_DIR (each folder holding a motion.json written by\n"
            "`anymove solve`, with its det.npz when it is there) and writes one CSV row per take,\n"
            "best first: take, verdict, paw_agreement (SPEC 5: mean over the feet that move),\n"
            "reproj_front_px, reproj_side_px (two views), reproj_mean_px (mean over the cameras),\n"
            "reproj_source (det: recomputed from the take's det.npz, the fitted joints through the\n"
            "two views of --creature's layout, the wolf's without it, or through the\n"
            "calibration.toml beside an N-camera det.npz; motion: motion.json's reproj_px as solve\n"
            "stored it, when there is no det.npz or no calibration for it), lag_frames (the\n"
            "views' best constant lag), foot_slide_cm (the farthest horizontal drift of a planted\n"
            "contact joint from where it was planted, mean over the contacts; docs/capture.md),\n"
            "frames, det, sync_source (det: paw agreement, lag and height gap recomputed from a\n"
            "two-view det.npz by the sync check solve runs, for --creature's feet, else those\n"
            "motion.json names; motion: motion.json's sync as stored; none: an N-camera det, whose\n"
            "perspective cameras share no image rows), height_gap_mean_px, height_gap_worst_px, then\n"
            "one paw_<foot> column per foot and one reproj_<camera>_px per camera of N-camera takes.\n"
            "The verdict is the capture skill's gate on the row's paw agreement (recomputed when\n"
            "sync_source is det): 0.8 or more keep, 0.5-0.8 look (watch the showcase), under 0.5\n"
            "reroll (the video model animated the views differently); a take without one (no foot\n"
            "moves, or N cameras) is judged by its mean reprojection error instead (8 px or less\n"
            "keep, up to 15 px look, else reroll). A motion.json or det.npz that cannot be read, or\n"
            "a det.npz of another frame count, stops with exit 2 naming the file.\n\n"
            "examples:\n"
            "  anymove exam --rig examples/creatures/wolf/rig.json --creature examples/creatures/wolf/creature.json \\\n"
            "               --seed 3 -o out/runs/wolf/exam3\n"
            "  anymove solve out/runs/wolf/exam3/det.npz --rig examples/creatures/wolf/rig.json \\\n"
            "               --creature examples/creatures/wolf/creature.json -o out/runs/wolf/take3\n"
            "  anymove takes out/runs -o out/takes.csv\n");
}

/* Where a take's paw agreement and lag come from: its det.npz (recomputed), motion.json (as
 * solve stored them), or neither (an N-camera det: perspective cameras share no image rows). */
typedef enum { AMI_SYNC_MOTION, AMI_SYNC_DET, AMI_SYNC_NONE } ami_sync_source;

/* Values by name (a take's feet, its cameras), each a column of its own in takes.csv. */
typedef struct {
    size_t n;
    char **name; /* [n] */
    double *v;   /* [n], NaN = none */
} ami_named;

static bool ami_named_add(ami_named *a, const char *name, double v)
{
    char **nn = am_realloc_array(a->name, a->n + 1, sizeof *nn);
    if (nn) a->name = nn;
    double *nv = nn ? am_realloc_array(a->v, a->n + 1, sizeof *nv) : NULL;
    if (nv) a->v = nv;
    if (!nv || !(a->name[a->n] = am_strdup(name))) return false;
    a->v[a->n++] = v;
    return true;
}

static double ami_named_get(const ami_named *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->name[i], name) == 0) return a->v[i];
    return NAN;
}

static void ami_named_free(ami_named *a)
{
    for (size_t i = 0; i < a->n; i++) am_free(a->name[i]);
    am_free(a->name);
    am_free(a->v);
}

typedef struct {
    char *take;
    const char *verdict;
    int rank;
    double paw, front, side, mean, lag, slide, gap_mean, gap_worst;
    size_t frames;
    bool det, from_det;
    ami_sync_source sync;
    ami_named paws; /* per foot checked, its paw agreement */
    ami_named cams; /* per camera of an N-camera take, its reprojection (px) */
} ami_take;

typedef struct {
    ami_take *t;
    size_t n, cap;
    const char *root;
    const am_layout *layout; /* the two views' cameras for a two-view det.npz */
    const am_creature *creature; /* its feet for the paw agreement; NULL = motion.json's */
    am_error *err;
    am_status st;
} ami_takes;

static double ami_num(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

/* Paw agreement, lag and height gap of a two-view det d (loaded from det_path, cameras "front"
 * and "side") recomputed by the library's sync check, the one solve runs, on the det as read:
 * the feet of k->paws into it. */
static am_status ami_take_sync(const char *det_path, const am_mdet *d, const am_layout *L, ami_take *k, am_error *err)
{
    long fr = -1, sd = -1;
    for (size_t c = 0; c < d->camera_count; c++) {
        if (strcmp(d->cameras[c], "front") == 0) fr = (long)c;
        if (strcmp(d->cameras[c], "side") == 0) sd = (long)c;
    }
    if (fr < 0 || sd < 0) return AM_FAIL_AT(err, AM_E_VALUE, det_path, 0, 0, "a two-view det without its front and side views");
    /* The loaded det's float arrays seen as the two views of a SPEC 4.2 det, in place. */
    const size_t TJ = d->frame_count * d->joint_count;
    am_det v = {.frame_count = d->frame_count, .joint_count = d->joint_count, .fps = d->fps, .names = d->names};
    v.uv_view[0] = (am_reals){d->uv + (size_t)fr * TJ * 2, AM_DTYPE_F32};
    v.uv_view[1] = (am_reals){d->uv + (size_t)sd * TJ * 2, AM_DTYPE_F32};
    v.conf_view[0] = (am_reals){d->conf + (size_t)fr * TJ, AM_DTYPE_F32};
    v.conf_view[1] = (am_reals){d->conf + (size_t)sd * TJ, AM_DTYPE_F32};
    am_sync_stats sy;
    am_status s = am_sync_check(&v, L, (const char *const *)k->paws.name, k->paws.n, NULL, k->paws.v, &sy, err);
    if (s != AM_OK) {
        /* the det is the caller's view: name the file it came from */
        if (err && !err->file[0]) {
            size_t n = strnlen(det_path, sizeof err->file - 1);
            memcpy(err->file, det_path, n);
            err->file[n] = 0;
        }
        return s;
    }
    k->sync = AMI_SYNC_DET;
    k->paw = sy.paw_score;
    k->lag = sy.best_lag;
    k->gap_mean = sy.gap_mean_px;
    k->gap_worst = sy.gap_worst_px;
    return AM_OK;
}

/* Reprojection per camera of the fitted joints P [T][J][3] (names from motion.json) against
 * the take's det.npz: a two-view det through the layout's two cameras, an N-camera one through
 * the calibration.toml beside it (none: the row keeps motion.json's numbers). The cameras'
 * clocks as the fit saw them: a time-warped two-view solve fitted front(t + lag) at frame t
 * (src/capture/sync.c), so the front camera's offset is -lag; N cameras take motion.json's
 * time_offsets (else the det's). */
static am_status ami_take_reproj(const char *det_path, const char *motion_path, const am_layout *L, json_t *doc,
                                 const double *P, size_t T, json_t *names, size_t J, ami_take *k, am_error *err)
{
    am_mdet *d = NULL;
    am_calib *cal = NULL;
    const char **jn = am_alloc_array(J + 1, sizeof(char *));
    double *mean = NULL;
    if (!jn) return AM_FAIL(err, AM_E_NOMEM, "%s: reprojection", det_path);
    for (size_t j = 0; j < J; j++) jn[j] = json_is_string(json_array_get(names, j)) ? json_string_value(json_array_get(names, j)) : "";
    am_status s = am_mdet_load(det_path, &d, err);
    /* A det of another length is not the one this take was solved from. */
    if (s == AM_OK && d->frame_count != T)
        s = AM_FAIL_AT(err, AM_E_SHAPE, det_path, 0, 0, "%zu frames, but %s has %zu: not the det this take was solved from",
                       d->frame_count, motion_path, T);
    if (s == AM_OK && d->two_view) {
        s = ami_take_sync(det_path, d, L, k, err);
        if (s == AM_OK) s = am_cameras_from_layout(L, &cal, err);
    } else if (s == AM_OK) {
        /* N perspective cameras share no image rows: the height agreement of SPEC 3's two
         * views does not apply (their check is the reprojection). */
        k->sync = AMI_SYNC_NONE;
        k->paw = k->lag = k->gap_mean = k->gap_worst = NAN;
        for (size_t f = 0; f < k->paws.n; f++) k->paws.v[f] = NAN;
        char cp[4096];
        const char *sl = strrchr(det_path, '/');
        snprintf(cp, sizeof cp, "%.*scalibration.toml", sl ? (int)(sl - det_path + 1) : 0, det_path);
        struct stat st;
        am_calib_read_opts ro = {0};
        if (stat(cp, &st) == 0) s = am_calib_load(cp, &ro, &cal, err);
    }
    if (s == AM_OK && cal && !(mean = am_alloc_array(d->camera_count + 1, sizeof *mean))) s = AM_FAIL(err, AM_E_NOMEM, "%s: reprojection", det_path);
    double *off = s == AM_OK && cal ? am_alloc_array(d->camera_count + 1, sizeof *off) : NULL;
    if (s == AM_OK && cal && !off) s = AM_FAIL(err, AM_E_NOMEM, "%s: reprojection", det_path);
    if (s == AM_OK && cal) {
        json_t *sync = json_object_get(doc, "sync"), *to = json_object_get(doc, "time_offsets");
        bool warped = json_is_true(json_object_get(sync, "time_warped"));
        double lag = ami_num(json_object_get(sync, "best_lag_frames"));
        for (size_t c = 0; c < d->camera_count; c++) {
            double o = ami_num(json_object_get(to, d->cameras[c]));
            off[c] = d->two_view ? (warped && isfinite(lag) && strcmp(d->cameras[c], "front") == 0 ? -lag : 0.0)
                     : isfinite(o) ? o : d->time_offset ? d->time_offset[c] : 0.0;
        }
        s = am_reproj_cameras(d, cal, P, T, jn, J, off, mean, NULL, err);
    }
    am_free(off);
    if (s == AM_OK && cal) {
        k->from_det = true;
        k->front = k->side = NAN;
        double sum = 0;
        size_t n = 0;
        ami_named_free(&k->cams);
        memset(&k->cams, 0, sizeof k->cams);
        for (size_t c = 0; c < d->camera_count; c++) {
            if (d->two_view && strcmp(d->cameras[c], "front") == 0) k->front = mean[c];
            else if (d->two_view && strcmp(d->cameras[c], "side") == 0) k->side = mean[c];
            else if (!ami_named_add(&k->cams, d->cameras[c], mean[c])) s = AM_FAIL(err, AM_E_NOMEM, "takes: cameras");
            if (isfinite(mean[c])) sum += mean[c], n++;
        }
        k->mean = n ? sum / (double)n : NAN;
    }
    am_free(mean);
    am_free(jn);
    am_calib_free(cal);
    am_mdet_free(d);
    return s;
}

/* The feet whose paw agreement a take reports: the creature's when given, else those solve
 * checked (motion.json's sync.paw_agreement), with motion.json's values (NaN where absent). */
static am_status ami_take_feet(json_t *pa, const am_creature *cr, ami_take *k, am_error *err)
{
    const char *key;
    json_t *val;
    if (cr) {
        for (size_t f = 0; f < cr->feet_count; f++)
            if (!ami_named_add(&k->paws, cr->feet[f], ami_num(json_object_get(pa, cr->feet[f]))))
                return AM_FAIL(err, AM_E_NOMEM, "takes: feet");
    } else if (json_is_object(pa)) {
        json_object_foreach(pa, key, val) {
            if (strcmp(key, "score") != 0 && !ami_named_add(&k->paws, key, ami_num(val))) return AM_FAIL(err, AM_E_NOMEM, "takes: feet");
        }
    }
    return AM_OK;
}

static am_status ami_take_read(const char *path, const char *det_path, const am_layout *L, const am_creature *cr,
                               ami_take *k, am_error *err)
{
    json_t *doc = NULL;
    AMI_TRY(ami_json_load_file(path, 0, &doc, err));
    json_t *rp = json_object_get(doc, "reproj_px"), *sync = json_object_get(doc, "sync");
    k->front = ami_num(json_object_get(rp, "front"));
    k->side = ami_num(json_object_get(rp, "side"));
    {
        /* motion.json's mean: over its cameras (the two views, or N named ones; front_x_only is
         * a second reading of the front camera, not a camera) */
        const char *key;
        json_t *val;
        double sum = 0;
        size_t n = 0;
        bool ok = true;
        if (json_is_object(rp))
            json_object_foreach(rp, key, val) {
                if (strcmp(key, "front_x_only") == 0) continue;
                if (isfinite(ami_num(val))) sum += ami_num(val), n++;
                if (strcmp(key, "front") != 0 && strcmp(key, "side") != 0) ok = ok && ami_named_add(&k->cams, key, ami_num(val));
            }
        k->mean = n ? sum / (double)n : NAN;
        if (!ok) {
            json_decref(doc);
            return AM_FAIL(err, AM_E_NOMEM, "takes: cameras");
        }
    }
    k->sync = AMI_SYNC_MOTION;
    k->paw = ami_num(json_object_get(json_object_get(sync, "paw_agreement"), "score"));
    k->lag = ami_num(json_object_get(sync, "best_lag_frames"));
    k->gap_mean = ami_num(json_object_get(json_object_get(sync, "height_gap_px"), "mean"));
    k->gap_worst = ami_num(json_object_get(json_object_get(sync, "height_gap_px"), "worst"));
    {
        am_status fs = ami_take_feet(json_object_get(sync, "paw_agreement"), cr, k, err);
        if (fs != AM_OK) {
            json_decref(doc);
            return fs;
        }
    }
    json_t *joints = json_object_get(doc, "joints"), *names = json_object_get(doc, "joint_names"),
           *contacts = json_object_get(doc, "contacts");
    k->frames = json_array_size(joints);
    /* Foot slide through the library's metric (the one score solve uses, horizontal here): the
     * fitted joints [T][J][3] and, per contact joint, its intervals [a, b] as a frame mask. */
    size_t T = k->frames, J = json_array_size(names);
    double *P = T && J ? am_alloc_array(T * J * 3, sizeof *P) : NULL;
    uint8_t *mask = T ? am_alloc(T) : NULL;
    am_slide_acc slide = {0};
    if ((T && J && !P) || (T && !mask)) {
        am_free(P);
        am_free(mask);
        json_decref(doc);
        return AM_FAIL(err, AM_E_NOMEM, "%s: out of memory for the foot slide", path);
    }
    if (P && mask) {
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < J; j++)
                for (size_t c = 0; c < 3; c++)
                    P[(t * J + j) * 3 + c] = ami_num(json_array_get(json_array_get(json_array_get(joints, t), j), c));
        const char *key;
        json_t *list;
        if (json_is_object(contacts))
            json_object_foreach(contacts, key, list) {
                size_t j = SIZE_MAX;
                for (size_t i = 0; i < J; i++)
                    if (json_is_string(json_array_get(names, i)) && strcmp(json_string_value(json_array_get(names, i)), key) == 0) j = i;
                if (j == SIZE_MAX) continue;
                memset(mask, 0, T);
                for (size_t c = 0; c < json_array_size(list); c++) {
                    double a = ami_num(json_array_get(json_array_get(list, c), 0)), b = ami_num(json_array_get(json_array_get(list, c), 1));
                    if (!(a >= 0 && b > a)) continue;
                    for (size_t t = (size_t)lround(a); t <= (size_t)lround(b) && t < T; t++) mask[t] = 1;
                }
                am_foot_slide_add(P, T, J, j, mask, true, &slide);
            }
    }
    am_status rs = AM_OK;
    if (det_path && (!T || !J)) rs = AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "no joints to reproject against %s", det_path);
    else if (det_path) rs = ami_take_reproj(det_path, path, L, doc, P, T, names, J, k, err);
    am_free(P);
    am_free(mask);
    if (rs != AM_OK) {
        json_decref(doc);
        return rs;
    }
    k->slide = slide.plants ? 100 * slide.sum / (double)slide.plants : NAN;
    json_decref(doc);
    double rp_mean = k->mean;
    if (isfinite(k->paw)) k->rank = k->paw >= 0.8 ? 0 : k->paw >= 0.5 ? 1 : 2;
    else k->rank = !isfinite(rp_mean) ? 1 : rp_mean <= 8 ? 0 : rp_mean <= 15 ? 1 : 2;
    static const char *const v[] = {"keep", "look", "reroll"};
    k->verdict = v[k->rank];
    return AM_OK;
}

static void ami_take_free(ami_take *k)
{
    ami_named_free(&k->paws);
    ami_named_free(&k->cams);
    am_free(k->take);
}

/* A take's motion.json at path: its row. Nonzero stops the walk (w->st says why). */
static int ami_visit(ami_takes *w, const char *path)
{
    const char *base = strrchr(path, '/');
    if (w->n == w->cap) {
        size_t c = w->cap ? w->cap * 2 : 16;
        ami_take *t = am_realloc_array(w->t, c, sizeof *t);
        if (!t) return w->st = AM_FAIL(w->err, AM_E_NOMEM, "takes"), 1;
        w->t = t, w->cap = c;
    }
    ami_take *k = &w->t[w->n];
    memset(k, 0, sizeof *k);
    size_t rl = strlen(w->root), dl = (size_t)(base - path);
    const char *rel = dl > rl ? path + rl + (path[rl] == '/') : ".";
    k->take = am_strndup(rel, dl > rl ? dl - (size_t)(rel - path) : 1);
    char det[4096];
    snprintf(det, sizeof det, "%.*s/det.npz", (int)dl, path);
    struct stat st;
    k->det = stat(det, &st) == 0;
    if (!k->take) return w->st = AM_FAIL(w->err, AM_E_NOMEM, "takes"), 1;
    if ((w->st = ami_take_read(path, k->det ? det : NULL, w->layout, w->creature, k, w->err)) != AM_OK) {
        ami_take_free(k);
        return 1;
    }
    w->n++;
    return 0;
}

/* Every motion.json under path (a buffer of size bytes holding len), symbolic links not
 * followed (a link to a parent would loop), 64 levels at most. Nonzero stops the walk. */
static int ami_walk_dir(ami_takes *w, char *path, size_t len, size_t size, int depth)
{
    DIR *d = depth < 64 ? opendir(path) : NULL;
    if (!d) return 0;
    int stop = 0;
    struct dirent *e;
    while (!stop && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        size_t n = strlen(e->d_name);
        if (len + 1 + n + 1 > size) continue;
        path[len] = '/';
        memcpy(path + len + 1, e->d_name, n + 1);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) stop = ami_walk_dir(w, path, len + 1 + n, size, depth + 1);
            else if (S_ISREG(st.st_mode) && strcmp(e->d_name, "motion.json") == 0) stop = ami_visit(w, path);
        }
        path[len] = 0;
    }
    closedir(d);
    return stop;
}

static int ami_take_cmp(const void *a, const void *b)
{
    const ami_take *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    double px = isfinite(x->paw) ? x->paw : -1, py = isfinite(y->paw) ? y->paw : -1;
    if (px != py) return px > py ? -1 : 1;
    double rx = isfinite(x->mean) ? x->mean : INFINITY;
    double ry = isfinite(y->mean) ? y->mean : INFINITY;
    if (rx != ry) return rx < ry ? -1 : 1;
    return strcmp(x->take, y->take);
}

/* The union of the takes' foot names (which 0) or camera names (1), first met first; *n of them.
 * NULL when out of memory. */
static const char **ami_takes_columns(const ami_takes *w, int which, size_t *n)
{
    size_t all = 0;
    for (size_t i = 0; i < w->n; i++) all += which ? w->t[i].cams.n : w->t[i].paws.n;
    const char **out = am_alloc_array(all + 1, sizeof *out);
    *n = 0;
    for (size_t i = 0; out && i < w->n; i++) {
        const ami_named *a = which ? &w->t[i].cams : &w->t[i].paws;
        for (size_t f = 0; f < a->n; f++) {
            size_t q = 0;
            while (q < *n && strcmp(out[q], a->name[f]) != 0) q++;
            if (q == *n) out[(*n)++] = a->name[f];
        }
    }
    return out;
}

/* sep, then the field pre + name + suf, quoted when it holds a comma, quote or newline. */
static void ami_csv_str(am_buf *b, const char *sep, const char *pre, const char *name, const char *suf)
{
    am_buf f = {0};
    am_buf_printf(&f, "%s%s%s", pre, name, suf);
    am_buf_append(&f, "", 1);
    am_buf_printf(b, "%s", sep);
    if (f.failed) {
        b->failed = true;
    } else if (strpbrk(f.data, ",\"\n")) {
        am_buf_append(b, "\"", 1);
        for (const char *c = f.data; *c; c++) am_buf_append(b, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1);
        am_buf_append(b, "\"", 1);
    } else {
        am_buf_printf(b, "%s", f.data);
    }
    am_buf_free(&f);
}

static void ami_csv_num(am_buf *b, double v, const char *fmt)
{
    if (isfinite(v)) am_buf_printf(b, fmt, v);
    am_buf_append(b, ",", 1);
}

int am_cmd_takes(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *creature = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_takes_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            creature = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("takes", "unknown option or missing value '%s'", argv[i]);
        } else {
            dir = argv[i];
        }
    }
    if (!dir) return am_cli_usage("takes", "missing RUNS_DIR");
    if (!out) return am_cli_usage("takes", "missing -o TAKES.csv");
    if (am_cli_out_file("takes", out, AM_CLI_FMT(AM_CLI_FMT_CSV)) == AM_CLI_FMT_NONE) return 2;
    am_error err = {0};
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        AM_FAIL_AT(&err, AM_E_READ, dir, 0, 0, "not a folder of takes");
        return am_cli_fail("takes", &err);
    }
    am_layout L;
    am_layout_default(&L);
    am_creature *cr = NULL;
    if (creature) {
        if (am_creature_load(creature, &cr, &err) != AM_OK) return am_cli_fail("takes", &err);
        L = cr->layout;
    }
    am_outset *set = NULL;
    int rc = am_cli_outputs("takes", out, NULL, 0, &set);
    if (rc) {
        am_creature_free(cr);
        return rc;
    }
    ami_takes w = {.root = dir, .layout = &L, .creature = cr, .err = &err};
    char path[4096];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    if (len < sizeof path) {
        memcpy(path, dir, len);
        path[len] = 0;
        ami_walk_dir(&w, path, len, sizeof path, 0);
    }
    am_status s = w.st;
    if (s == AM_OK && w.n == 0) s = AM_FAIL_AT(&err, AM_E_EMPTY, dir, 0, 0, "no take (a folder with motion.json) under it");
    if (s == AM_OK) {
        qsort(w.t, w.n, sizeof *w.t, ami_take_cmp);
        am_buf b = {0};
        /* One paw_<foot> column per foot of any take, and one reproj_<camera>_px per camera of
         * an N-camera take, in the order first met. */
        size_t nf = 0, nc = 0;
        const char **feet = ami_takes_columns(&w, 0, &nf), **cams = ami_takes_columns(&w, 1, &nc);
        if (!feet || !cams) b.failed = true;
        am_buf_printf(&b, "take,verdict,paw_agreement,reproj_front_px,reproj_side_px,reproj_mean_px,reproj_source,lag_frames,foot_slide_cm,frames,det,"
                          "sync_source,height_gap_mean_px,height_gap_worst_px");
        for (size_t q = 0; q < nf; q++) ami_csv_str(&b, ",", "paw_", feet[q], "");
        for (size_t q = 0; q < nc; q++) ami_csv_str(&b, ",", "reproj_", cams[q], "_px");
        am_buf_append(&b, "\n", 1);
        for (size_t i = 0; i < w.n; i++) {
            const ami_take *k = &w.t[i];
            ami_csv_str(&b, "", "", k->take, "");
            am_buf_printf(&b, ",%s,", k->verdict);
            ami_csv_num(&b, k->paw, "%.3f");
            ami_csv_num(&b, k->front, "%.2f");
            ami_csv_num(&b, k->side, "%.2f");
            ami_csv_num(&b, k->mean, "%.2f");
            am_buf_printf(&b, "%s,", k->from_det ? "det" : "motion");
            ami_csv_num(&b, k->lag, "%.0f");
            ami_csv_num(&b, k->slide, "%.2f");
            am_buf_printf(&b, "%zu,%s,", k->frames, k->det ? "yes" : "no");
            static const char *const src[] = {"motion", "det", "none"};
            am_buf_printf(&b, "%s,", src[k->sync]);
            ami_csv_num(&b, k->gap_mean, "%.2f");
            ami_csv_num(&b, k->gap_worst, "%.2f");
            for (size_t q = 0; q < nf; q++) ami_csv_num(&b, ami_named_get(&k->paws, feet[q]), "%.3f");
            for (size_t q = 0; q < nc; q++) ami_csv_num(&b, ami_named_get(&k->cams, cams[q]), "%.2f");
            if (!b.failed && b.len) b.len--; /* the last column's comma */
            am_buf_append(&b, "\n", 1);
        }
        am_free(feet);
        am_free(cams);
        s = b.failed ? AM_FAIL(&err, AM_E_NOMEM, "takes.csv") : am_file_write(am_outset_path(set, NULL), b.data, b.len, &err);
        am_buf_free(&b);
    }
    if (s != AM_OK) rc = am_cli_fail_out("takes", set, &err);
    else if ((rc = am_cli_commit("takes", set)) == 0) {
        size_t keep = 0;
        for (size_t i = 0; i < w.n; i++) keep += w.t[i].rank == 0;
        am_cli_log("wrote %s: %zu takes, %zu keep; best %s (%s)", out, w.n, keep, w.t[0].take, w.t[0].verdict);
    }
    for (size_t i = 0; i < w.n; i++) ami_take_free(&w.t[i]);
    am_free(w.t);
    am_creature_free(cr);
    return rc;
}
