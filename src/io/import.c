/* Trackers' files in: format guessing, files and folders, dispatch to the readers of
 * trackers_internal.h. A 2D input becomes a one-camera det named after the file (its name
 * without the extension), a 3D input joints. */
#include <assert.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

/* One file (or the files of a folder together): 1 GiB, or the scope's max_bytes if smaller. */
#define AMI_IMPORT_MAX_BYTES ((uint64_t)1 << 30)
/* One frame's file in a folder. */
#define AMI_IMPORT_FRAME_MAX_BYTES ((size_t)64 << 20)

/* File bytes the call may still read: the budget minus what it read before. */
static size_t ami_import_left(uint64_t used)
{
    uint64_t budget = ami_budget(AMI_IMPORT_MAX_BYTES);
    uint64_t left = budget > used ? budget - used : 0;
    /* am_file_read takes 0 as its default limit: a spent budget still refuses a byte. */
    return left ? (left > SIZE_MAX ? SIZE_MAX : (size_t)left) : 1;
}

static const char *const ami_fmt_names[AM_TRACK_FORMAT_COUNT] = {
    "auto", "DeepLabCut CSV", "SLEAP analysis HDF5", "OpenPose JSON", "MediaPipe landmarks",
    "TRC", "C3D", "anipose 3D CSV", "sleap-anipose points3d.h5"};

const char *am_track_format_name(am_track_format f)
{
    return (unsigned)f < AM_TRACK_FORMAT_COUNT ? ami_fmt_names[f] : "unknown";
}

bool am_track_format_is_3d(am_track_format f)
{
    return f == AM_TRACK_TRC || f == AM_TRACK_C3D || f == AM_TRACK_ANIPOSE_CSV || f == AM_TRACK_POINTS3D_H5;
}

static bool ami_ends(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static bool ami_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first line of a file (up to 4 KiB), for sniffing CSV kinds. */
static void ami_first_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return;
    if (!fgets(buf, (int)size, f)) buf[0] = '\0';
    fclose(f);
}

static am_track_format ami_guess_csv_line(const char *line)
{
    const char *p = line;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
    if (strncasecmp(p, "scorer", 6) == 0) return AM_TRACK_DLC_CSV;
    if (strstr(p, "_error") || strstr(p, "_ncams") || strstr(p, "fnum")) return AM_TRACK_ANIPOSE_CSV;
    if (strstr(p, "_x") && strstr(p, "_z") && strstr(p, "_score")) return AM_TRACK_ANIPOSE_CSV;
    return AM_TRACK_MEDIAPIPE;
}

am_track_format am_track_format_guess(const char *path)
{
    if (ami_is_dir(path)) {
        DIR *d = opendir(path);
        if (!d) return AM_TRACK_AUTO;
        am_track_format f = AM_TRACK_AUTO;
        struct dirent *e;
        while ((e = readdir(d)) && f == AM_TRACK_AUTO) {
            if (ami_ends(e->d_name, "_keypoints.json")) f = AM_TRACK_OPENPOSE;
            else if (ami_ends(e->d_name, ".pbtxt") || ami_ends(e->d_name, ".prototxt") || ami_ends(e->d_name, ".textproto"))
                f = AM_TRACK_MEDIAPIPE;
        }
        closedir(d);
        return f;
    }
    if (ami_ends(path, ".trc")) return AM_TRACK_TRC;
    if (ami_ends(path, ".c3d")) return AM_TRACK_C3D;
    if (ami_ends(path, ".h5") || ami_ends(path, ".hdf5"))
        return strstr(path, "points3d") ? AM_TRACK_POINTS3D_H5 : AM_TRACK_SLEAP_H5;
    if (ami_ends(path, ".pbtxt") || ami_ends(path, ".prototxt") || ami_ends(path, ".textproto")) return AM_TRACK_MEDIAPIPE;
    if (ami_ends(path, ".json")) {
        char line[4096];
        ami_first_line(path, line, sizeof line);
        return strstr(line, "\"people\"") || ami_ends(path, "_keypoints.json") ? AM_TRACK_OPENPOSE : AM_TRACK_MEDIAPIPE;
    }
    if (ami_ends(path, ".csv")) {
        char line[4096];
        ami_first_line(path, line, sizeof line);
        return ami_guess_csv_line(line);
    }
    return AM_TRACK_AUTO;
}

/* Base name without the extension(s) a tracker adds. */
static void ami_stem(const char *path, char *out, size_t size)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t a = n;
    while (a > 0 && path[a - 1] != '/') a--;
    size_t len = n - a;
    static const char *const exts[] = {".analysis.h5", ".h5", ".hdf5", ".csv", ".json", ".pbtxt", ".prototxt",
                                       ".textproto", ".trc", ".c3d", NULL};
    for (const char *const *e = exts; *e; e++) {
        size_t el = strlen(*e);
        if (len > el && strncasecmp(path + a + len - el, *e, el) == 0) {
            len -= el;
            break;
        }
    }
    snprintf(out, size, "%.*s", (int)len, path + a);
}

static int ami_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the files in dir that end with one of the suffixes. */
static am_status ami_list_dir(const char *dir, const char *const *suffixes, char ***out, size_t *n, am_error *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return AM_FAIL_AT(err, AM_E_READ, dir, 0, 0, "cannot open the folder");
    size_t cap = 0;
    char **v = NULL;
    am_status st = AM_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        bool ok = false;
        for (const char *const *s = suffixes; *s && !ok; s++) ok = ami_ends(e->d_name, *s);
        if (!ok || e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = am_realloc_array(v, cap, sizeof *nv);
            if (!nv) {
                st = AM_FAIL(err, AM_E_NOMEM, "file list");
                break;
            }
            v = nv;
        }
        if (!(v[*n] = am_strdup(e->d_name))) {
            st = AM_FAIL(err, AM_E_NOMEM, "file list");
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (st != AM_OK) {
        ami_strings_free(v, *n);
        *n = 0;
        return st;
    }
    /* File names sort in frame order when zero-padded, as OpenPose writes them. */
    if (*n > 1) qsort(v, *n, sizeof *v, ami_cmp_names);
    *out = v;
    return AM_OK;
}

static am_status ami_openpose_folder(const char *dir, const am_import_opts *o, am_mdet **out, am_error *err)
{
    static const char *const suf[] = {"_keypoints.json", NULL};
    char **files = NULL;
    size_t n = 0;
    AMI_TRY(ami_list_dir(dir, suf, &files, &n, err));
    am_status st = AM_OK;
    float **kp = am_alloc_array(n ? n : 1, sizeof *kp);
    size_t K = 0;
    uint64_t read = 0; /* bytes of the files so far: each frame's keypoints are kept */
    am_mdet *d = NULL;
    char path[4096];
    if (!kp) {
        st = AM_FAIL(err, AM_E_NOMEM, "frames");
        goto done;
    }
    if (n == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, dir, 0, 0, "no *_keypoints.json files in the folder");
        goto done;
    }
    for (size_t t = 0; t < n && st == AM_OK; t++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[t]);
        char *text = NULL;
        size_t len = 0, k = 0, left = ami_import_left(read);
        if ((st = am_file_read(path, left < AMI_IMPORT_FRAME_MAX_BYTES ? left : AMI_IMPORT_FRAME_MAX_BYTES, &text,
                               &len, err)) != AM_OK)
            break;
        read += len;
        st = ami_openpose_frame(text, len, path, o, &kp[t], &k, err);
        am_free(text);
        if (st != AM_OK) break;
        if (k && K && k != K) st = AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "%zu keypoints, earlier frames %zu", k, K);
        if (k) K = k;
    }
    if (st != AM_OK) goto done;
    if (K == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, dir, 0, 0, "no person in any of the %zu frames", n);
        goto done;
    }
    if ((st = am_mdet_create(1, n, K, &d, err)) != AM_OK) goto done;
    ami_strings_free(d->names, K);
    if (!(d->names = ami_openpose_names(K, o ? o->skeleton : NULL))) {
        st = AM_FAIL(err, AM_E_NOMEM, "names");
        goto done;
    }
    for (size_t t = 0; t < n; t++)
        for (size_t j = 0; kp[t] && j < K; j++) {
            const float *p = kp[t] + 3 * j;
            float c = p[2] > 1 ? 1 : p[2];
            if (!(c > 0) || (p[0] == 0 && p[1] == 0)) continue;
            d->uv[(t * K + j) * 2] = p[0];
            d->uv[(t * K + j) * 2 + 1] = p[1];
            d->conf[t * K + j] = c;
        }
    if (o && o->fps > 0) d->fps = o->fps;
    else ami_warn(AM_WARN_MISSING_DATA, "%s: OpenPose JSON has no frame rate; 30 fps assumed (--fps)", dir);
    *out = d;
    d = NULL;
done:
    for (size_t t = 0; kp && t < n; t++) am_free(kp[t]);
    am_free(kp);
    ami_strings_free(files, n);
    am_mdet_free(d);
    return st;
}

/* MediaPipe frames, one file each, in name order. */
static am_status ami_mediapipe_folder(const char *dir, const am_import_opts *o, am_mdet **out, am_error *err)
{
    static const char *const suf[] = {".pbtxt", ".prototxt", ".textproto", ".json", NULL};
    char **files = NULL;
    size_t n = 0;
    AMI_TRY(ami_list_dir(dir, suf, &files, &n, err));
    am_status st = AM_OK;
    am_mdet **parts = am_alloc_array(n ? n : 1, sizeof *parts), *d = NULL;
    size_t T = 0;
    uint64_t read = 0; /* bytes of the files so far: each file's frames are kept */
    char path[4096];
    if (!parts) st = AM_FAIL(err, AM_E_NOMEM, "frames");
    else if (n == 0) st = AM_FAIL_AT(err, AM_E_EMPTY, dir, 0, 0, "no MediaPipe landmark files in the folder");
    am_import_opts oo = o ? *o : (am_import_opts){0};
    if (oo.fps <= 0) oo.fps = 30; /* warned once below, not per file */
    for (size_t k = 0; k < n && st == AM_OK; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        char *text = NULL;
        size_t len = 0, left = ami_import_left(read);
        if ((st = am_file_read(path, left < AMI_IMPORT_FRAME_MAX_BYTES ? left : AMI_IMPORT_FRAME_MAX_BYTES, &text,
                               &len, err)) != AM_OK)
            break;
        read += len;
        st = ami_mediapipe_parse(text, len, path, &oo, &parts[k], err);
        am_free(text);
        if (st == AM_OK && k && parts[k]->joint_count != parts[0]->joint_count)
            st = AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "%zu landmarks, %s has %zu", parts[k]->joint_count, files[0],
                            parts[0]->joint_count);
        if (st == AM_OK) T += parts[k]->frame_count;
        /* Every file's frames are kept, then copied into one det. */
        if (st == AM_OK) st = ami_rows_budget(dir, 0, T, 24.0 * (double)parts[0]->joint_count, err);
    }
    if (st == AM_OK && (st = am_mdet_create(1, T, parts[0]->joint_count, &d, err)) == AM_OK) {
        const size_t J = parts[0]->joint_count;
        size_t t = 0;
        for (size_t k = 0; k < n; k++) {
            memcpy(d->uv + t * J * 2, parts[k]->uv, parts[k]->frame_count * J * 2 * sizeof *d->uv);
            memcpy(d->conf + t * J, parts[k]->conf, parts[k]->frame_count * J * sizeof *d->conf);
            t += parts[k]->frame_count;
        }
        ami_strings_free(d->names, J);
        d->names = parts[0]->names;
        parts[0]->names = NULL;
        parts[0]->joint_count = 0;
        d->fps = oo.fps;
        if (!(o && o->fps > 0)) ami_warn(AM_WARN_MISSING_DATA, "%s: MediaPipe landmarks carry no frame rate; 30 fps assumed (--fps)", dir);
        *out = d;
    }
    for (size_t k = 0; parts && k < n; k++) am_mdet_free(parts[k]);
    am_free(parts);
    ami_strings_free(files, n);
    return st;
}

static am_status ami_name_camera(am_mdet *d, const char *path, am_error *err)
{
    char stem[128];
    ami_stem(path, stem, sizeof stem);
    am_free(d->cameras[0]);
    if (!(d->cameras[0] = am_strdup(stem[0] ? stem : "camera"))) return AM_FAIL(err, AM_E_NOMEM, "camera name");
    return AM_OK;
}

static am_status ami_import_2d_mem(const void *buf, size_t len, const char *source, am_track_format fmt,
                                   const am_import_opts *o, am_mdet **out, am_error *err)
{
    *out = NULL;
    am_status st;
    switch (fmt) {
    case AM_TRACK_DLC_CSV: st = ami_dlc_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_SLEAP_H5: st = ami_sleap_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_MEDIAPIPE: st = ami_mediapipe_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_OPENPOSE: {
        float *kp = NULL;
        size_t K = 0;
        st = ami_openpose_frame(buf, len, source, o, &kp, &K, err);
        if (st == AM_OK && K == 0) st = AM_FAIL_AT(err, AM_E_EMPTY, source, 0, 0, "nobody in the frame");
        if (st == AM_OK && (st = am_mdet_create(1, 1, K, out, err)) == AM_OK) {
            ami_strings_free((*out)->names, K);
            (*out)->names = ami_openpose_names(K, o ? o->skeleton : NULL);
            if (!(*out)->names) st = AM_FAIL(err, AM_E_NOMEM, "names");
            for (size_t j = 0; st == AM_OK && j < K; j++)
                if (kp[3 * j + 2] > 0 && !(kp[3 * j] == 0 && kp[3 * j + 1] == 0)) {
                    (*out)->uv[2 * j] = kp[3 * j];
                    (*out)->uv[2 * j + 1] = kp[3 * j + 1];
                    (*out)->conf[j] = kp[3 * j + 2] > 1 ? 1 : kp[3 * j + 2];
                }
            if (o && o->fps > 0) (*out)->fps = o->fps;
        }
        am_free(kp);
        break;
    }
    default:
        return AM_FAIL_AT(err, AM_E_UNSUPPORTED, source, 0, 0, "%s is not a 2D tracker format", am_track_format_name(fmt));
    }
    if (st == AM_OK) st = ami_name_camera(*out, source ? source : "camera", err);
    if (st != AM_OK) {
        am_mdet_free(*out);
        *out = NULL;
        am_error_set_file(err, source);
    }
    return st;
}

static am_status ami_import_2d(const char *path, am_track_format fmt, const am_import_opts *o, am_mdet **out,
                               am_error *err)
{
    *out = NULL;
    if (fmt == AM_TRACK_AUTO) fmt = am_track_format_guess(path);
    if (fmt == AM_TRACK_AUTO)
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0,
                          "unknown tracker format (expected DeepLabCut .csv, SLEAP .h5, an OpenPose or MediaPipe folder, "
                          ".json, .pbtxt)");
    if (am_track_format_is_3d(fmt))
        return AM_FAIL_AT(err, AM_E_USAGE, path, 0, 0, "%s holds 3D points: import it to joints.npz", am_track_format_name(fmt));
    am_status st;
    if (ami_is_dir(path)) {
        if (fmt == AM_TRACK_OPENPOSE) st = ami_openpose_folder(path, o, out, err);
        else if (fmt == AM_TRACK_MEDIAPIPE) st = ami_mediapipe_folder(path, o, out, err);
        else return AM_FAIL_AT(err, AM_E_USAGE, path, 0, 0, "%s is read from a file, not a folder", am_track_format_name(fmt));
        if (st == AM_OK) st = ami_name_camera(*out, path, err);
        if (st != AM_OK) {
            am_mdet_free(*out);
            *out = NULL;
        }
        return st;
    }
    char *buf = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, ami_import_left(0), &buf, &len, err));
    st = ami_import_2d_mem(buf, len, path, fmt, o, out, err);
    am_free(buf);
    return st;
}

/* A coordinate a reader left NaN makes the whole point missing (SPEC 4.2.3: NaN x 3), which
 * is what am_joints_load accepts back. */
static void ami_joints_whole_missing(am_joints *jt)
{
    for (size_t i = 0; i < jt->frame_count * jt->joint_count; i++) {
        double *p = jt->joints + 3 * i;
        if (isnan(p[0]) || isnan(p[1]) || isnan(p[2])) {
            p[0] = p[1] = p[2] = NAN;
            if (jt->conf) jt->conf[i] = 0.0;
        }
    }
}

static am_status ami_import_3d_mem(const void *buf, size_t len, const char *source, am_track_format fmt,
                                   const am_import_opts *o, am_joints **out, am_error *err)
{
    *out = NULL;
    am_status st;
    switch (fmt) {
    case AM_TRACK_TRC: st = ami_trc_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_C3D: st = ami_c3d_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_ANIPOSE_CSV: st = ami_anipose_csv_parse(buf, len, source, o, out, err); break;
    case AM_TRACK_POINTS3D_H5: st = ami_points3d_parse(buf, len, source, o, out, err); break;
    default:
        return AM_FAIL_AT(err, AM_E_UNSUPPORTED, source, 0, 0, "%s is not a 3D format", am_track_format_name(fmt));
    }
    if (st == AM_OK) ami_joints_whole_missing(*out);
    if (st != AM_OK) am_error_set_file(err, source);
    return st;
}

static am_status ami_import_3d(const char *path, am_track_format fmt, const am_import_opts *o, am_joints **out,
                               am_error *err)
{
    *out = NULL;
    if (fmt == AM_TRACK_AUTO) fmt = am_track_format_guess(path);
    if (fmt == AM_TRACK_AUTO)
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "unknown 3D format (expected .trc, .c3d, an anipose .csv, points3d.h5)");
    if (!am_track_format_is_3d(fmt))
        return AM_FAIL_AT(err, AM_E_USAGE, path, 0, 0, "%s holds 2D detections: import it to det.npz", am_track_format_name(fmt));
    char *buf = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, ami_import_left(0), &buf, &len, err));
    am_status st = ami_import_3d_mem(buf, len, path, fmt, o, out, err);
    am_free(buf);
    return st;
}

/* The caller's frame rate: 0 means the file's (or 30); anything else is used as given, so it
 * must be one the writers accept. */
static am_status ami_import_opts_check(const am_import_opts *o, am_error *err)
{
    if (o && o->fps != 0 && !am_fps_valid(o->fps))
        return AM_FAIL(err, AM_E_ARG, "fps %g is outside [%g, %g]", o->fps, AM_FPS_MIN, AM_FPS_MAX);
    return AM_OK;
}

/* ---- the public readers run in the scope of opts->ctx; warnings go to the caller's ---- */
am_status am_import_2d(const char *path, am_track_format fmt, const am_import_opts *o, am_mdet **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, o ? &o->ctx : NULL);
    am_status st = ami_import_opts_check(o, err);
    if (st == AM_OK) st = ami_import_2d(path, fmt, o, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_import_2d_mem(const void *buf, size_t len, const char *source, am_track_format fmt, const am_import_opts *o,
                           am_mdet **out, am_error *err)
{
    assert((buf || !len) && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, o ? &o->ctx : NULL);
    am_status st = ami_import_opts_check(o, err);
    if (st == AM_OK) st = ami_import_2d_mem(buf, len, source, fmt, o, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_import_3d(const char *path, am_track_format fmt, const am_import_opts *o, am_joints **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, o ? &o->ctx : NULL);
    am_status st = ami_import_opts_check(o, err);
    if (st == AM_OK) st = ami_import_3d(path, fmt, o, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_import_3d_mem(const void *buf, size_t len, const char *source, am_track_format fmt, const am_import_opts *o,
                           am_joints **out, am_error *err)
{
    assert((buf || !len) && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, o ? &o->ctx : NULL);
    am_status st = ami_import_opts_check(o, err);
    if (st == AM_OK) st = ami_import_3d_mem(buf, len, source, fmt, o, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}
