/* SLEAP analysis HDF5 (2D) and sleap-anipose points3d.h5 (3D), through Debian's libhdf5.
 *
 * SLEAP's analysis export stores its arrays transposed: tracks (n_tracks, 2, n_nodes,
 * n_frames), point_scores (n_tracks, n_nodes, n_frames), track_occupancy (n_frames, n_tracks),
 * node_names (n_nodes) byte strings; point_scores is absent in old files (conf 1 then).
 * sleap-anipose's points3d.h5 holds tracks (n_frames, n_tracks, n_nodes, 3) in the calibration's
 * units (node names when present, else node_<i>).
 *
 * Decisions: the track is --track N (1-based), else the one occupied in the most frames; a
 * NaN coordinate or a non-positive score is not seen; scores are clamped into [0, 1]. Files
 * are opened from memory (the core driver with a file image), so the size limit applies
 * before libhdf5 sees a byte and the fuzzers drive the same path. Each dataset is limited to
 * 512 MiB decoded (or the scope's max_bytes), checked from its declared dimensions. libhdf5 (Debian's serial build) is not thread-safe and keeps a global error
 * printer: every call into it runs under one mutex, with the printer turned off.
 */
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

static pthread_mutex_t ami_h5_lock = PTHREAD_MUTEX_INITIALIZER;
#define AMI_H5_MAX_BYTES (512ull << 20)
/* The core driver refuses to open an image under a name that exists on disk: use one that
 * never does (the image is never written back). */
#define AMI_H5_IMAGE_NAME "/nonexistent/anymove-hdf5-file-image"

typedef struct {
    hid_t file;
    const char *src;
    am_error *err;
} ami_h5;

static am_status ami_h5_open(ami_h5 *h, const void *buf, size_t len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h->file = -1;
    if (len < 8 || memcmp(buf, "\x89HDF\r\n\x1a\n", 8) != 0)
        return AM_FAIL_OFS(h->err, len ? AM_E_FORMAT : AM_E_EMPTY, h->src, 0, "not an HDF5 file (no HDF5 signature)");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return AM_FAIL(h->err, AM_E_NOMEM, "HDF5 property list");
    herr_t e1 = H5Pset_fapl_core(fapl, 1 << 16, 0);
    herr_t e2 = e1 < 0 ? e1 : H5Pset_file_image(fapl, (void *)buf, len);
    h->file = e2 < 0 ? -1 : H5Fopen(AMI_H5_IMAGE_NAME, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (h->file < 0) return AM_FAIL_OFS(h->err, AM_E_FORMAT, h->src, 0, "libhdf5 cannot open it (damaged or truncated)");
    return AM_OK;
}

static void ami_h5_close(ami_h5 *h)
{
    if (h->file >= 0) H5Fclose(h->file);
    h->file = -1;
}

static bool ami_h5_has(ami_h5 *h, const char *name)
{
    return H5Lexists(h->file, name, H5P_DEFAULT) > 0 && H5Oexists_by_name(h->file, name, H5P_DEFAULT) > 0;
}

/* A numeric dataset as doubles; dims[ndim]. */
static am_status ami_h5_numbers(ami_h5 *h, const char *name, int max_nd, int *nd, hsize_t *dims, double **out)
{
    *out = NULL;
    hid_t ds = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (ds < 0) return AM_FAIL(h->err, AM_E_FORMAT, "dataset '%s' cannot be opened", name);
    am_status st = AM_OK;
    hid_t sp = H5Dget_space(ds), ty = H5Dget_type(ds);
    H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    int n = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (cl != H5T_INTEGER && cl != H5T_FLOAT) {
        st = AM_FAIL(h->err, AM_E_DTYPE, "dataset '%s' is not numeric", name);
    } else if (n < 0 || n > max_nd) {
        st = AM_FAIL(h->err, AM_E_SHAPE, "dataset '%s' has %d dimensions, expected at most %d", name, n, max_nd);
    } else {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        uint64_t count = 1;
        for (int k = 0; k < n; k++) {
            if (dims[k] && count > AMI_H5_MAX_BYTES / 8 / dims[k]) count = UINT64_MAX;
            else count *= dims[k];
        }
        /* From the dataset's declared dimensions, before libhdf5 decodes any of it: unwritten
         * chunks take no room in the file, so a few KiB can declare terabytes. */
        st = AMI_BUDGET_CHECK(h->err, h->src, count == UINT64_MAX ? UINT64_MAX : count * 8, AMI_H5_MAX_BYTES,
                              "dataset '%s' decoded", name);
        if (st == AM_OK) {
            *nd = n;
            double *v = am_alloc_array(count ? (size_t)count : 1, sizeof *v);
            if (!v) st = AM_FAIL(h->err, AM_E_NOMEM, "dataset '%s'", name);
            else if (count && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
                am_free(v);
                st = AM_FAIL(h->err, AM_E_FORMAT, "dataset '%s' cannot be read (damaged data or filter)", name);
            } else {
                *out = v;
            }
        }
    }
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return st;
}

/* A 1-D string dataset (fixed or variable length). */
static am_status ami_h5_strings(ami_h5 *h, const char *name, size_t *n_out, char ***out)
{
    *out = NULL;
    hid_t ds = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (ds < 0) return AM_FAIL(h->err, AM_E_FORMAT, "dataset '%s' cannot be opened", name);
    am_status st = AM_OK;
    hid_t sp = H5Dget_space(ds), ty = H5Dget_type(ds), mt = -1;
    hsize_t dims[2] = {0, 0};
    char **s = NULL;
    if (ty < 0 || H5Tget_class(ty) != H5T_STRING) {
        st = AM_FAIL(h->err, AM_E_DTYPE, "dataset '%s' does not hold strings", name);
        goto done;
    }
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1) {
        st = AM_FAIL(h->err, AM_E_SHAPE, "dataset '%s' must be one-dimensional", name);
        goto done;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t n = (size_t)dims[0];
    if (n > 100000) {
        st = AM_FAIL(h->err, AM_E_LIMIT, "dataset '%s' holds %zu names", name, n);
        goto done;
    }
    s = am_alloc_array(n ? n : 1, sizeof *s);
    if (!s) {
        st = AM_FAIL(h->err, AM_E_NOMEM, "names");
        goto done;
    }
    htri_t var = H5Tis_variable_str(ty);
    mt = H5Tcopy(H5T_C_S1);
    if (var > 0) {
        H5Tset_size(mt, H5T_VARIABLE);
        char **raw = am_alloc_array(n ? n : 1, sizeof *raw);
        if (!raw) {
            st = AM_FAIL(h->err, AM_E_NOMEM, "names");
            goto done;
        }
        if (n && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
            am_free(raw);
            st = AM_FAIL(h->err, AM_E_FORMAT, "dataset '%s' cannot be read", name);
            goto done;
        }
        for (size_t k = 0; k < n && st == AM_OK; k++)
            if (!(s[k] = am_strdup(raw[k] ? raw[k] : ""))) st = AM_FAIL(h->err, AM_E_NOMEM, "names");
        if (n) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, raw);
        am_free(raw);
    } else {
        size_t w = H5Tget_size(ty);
        if (w == 0 || w > 4096) {
            st = AM_FAIL(h->err, AM_E_DTYPE, "dataset '%s' has %zu-byte strings", name, w);
            goto done;
        }
        /* One byte more than stored: a NUL-terminated memory type of the stored width would
         * drop the last character of a full-width name ("front" in S5 -> "fron"). */
        w += 1;
        H5Tset_size(mt, w);
        char *raw = am_alloc_array(n ? n : 1, w);
        if (!raw) {
            st = AM_FAIL(h->err, AM_E_NOMEM, "names");
            goto done;
        }
        if (n && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
            am_free(raw);
            st = AM_FAIL(h->err, AM_E_FORMAT, "dataset '%s' cannot be read", name);
            goto done;
        }
        for (size_t k = 0; k < n && st == AM_OK; k++) {
            size_t l = 0;
            while (l < w && raw[k * w + l]) l++;
            if (!(s[k] = am_strndup(raw + k * w, l))) st = AM_FAIL(h->err, AM_E_NOMEM, "names");
        }
        am_free(raw);
    }
    if (st == AM_OK) {
        *out = s;
        *n_out = n;
        s = NULL;
    }
done:
    ami_strings_free(s, dims[0] < 100000 ? (size_t)dims[0] : 0);
    if (mt >= 0) H5Tclose(mt);
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return st;
}

static am_status ami_sleap_locked(ami_h5 *h, const am_import_opts *o, am_mdet **out)
{
    am_error *err = h->err;
    double *tr = NULL, *sc = NULL, *occ = NULL;
    char **nodes = NULL;
    size_t nn = 0;
    am_mdet *d = NULL;
    hsize_t dt[8], ds[8], dc[8];
    int ndt = 0, nds = 0, ndc = 0;
    am_status st = AM_OK;
    if (!ami_h5_has(h, "tracks")) {
        st = AM_FAIL(err, AM_E_SCHEMA, "no dataset 'tracks': not a SLEAP analysis file");
        goto done;
    }
    if ((st = ami_h5_numbers(h, "tracks", 4, &ndt, dt, &tr)) != AM_OK) goto done;
    if (ndt != 4 || dt[1] != 2) {
        st = AM_FAIL(err, AM_E_SHAPE, "dataset 'tracks' must be (n_tracks, 2, n_nodes, n_frames)");
        goto done;
    }
    const size_t K = (size_t)dt[0], N = (size_t)dt[2], T = (size_t)dt[3];
    if (T == 0 || N == 0 || K == 0) {
        st = AM_FAIL(err, AM_E_EMPTY, "dataset 'tracks' holds %zu frames, %zu nodes and %zu tracks", T, N, K);
        goto done;
    }
    if (!ami_h5_has(h, "node_names")) {
        st = AM_FAIL(err, AM_E_SCHEMA, "no dataset 'node_names'");
        goto done;
    }
    if ((st = ami_h5_strings(h, "node_names", &nn, &nodes)) != AM_OK) goto done;
    if (nn != N) {
        st = AM_FAIL(err, AM_E_SHAPE, "dataset 'node_names' has %zu names, 'tracks' %zu nodes", nn, N);
        goto done;
    }
    if (ami_h5_has(h, "point_scores")) {
        if ((st = ami_h5_numbers(h, "point_scores", 3, &nds, ds, &sc)) != AM_OK) goto done;
        if (nds != 3 || ds[0] != K || ds[1] != N || ds[2] != T) {
            st = AM_FAIL(err, AM_E_SHAPE, "dataset 'point_scores' must be (%zu, %zu, %zu) to match 'tracks'", K, N, T);
            goto done;
        }
    }
    if (ami_h5_has(h, "track_occupancy")) {
        if ((st = ami_h5_numbers(h, "track_occupancy", 2, &ndc, dc, &occ)) != AM_OK) goto done;
        if (ndc != 2 || dc[0] != T || dc[1] != K) {
            st = AM_FAIL(err, AM_E_SHAPE, "dataset 'track_occupancy' must be (%zu, %zu) to match 'tracks'", T, K);
            goto done;
        }
    }
    size_t pick = 0;
    if (o && o->track > 0) {
        if ((size_t)o->track > K) {
            st = AM_FAIL(err, AM_E_VALUE, "--track %ld, but the file has %zu tracks", o->track, K);
            goto done;
        }
        pick = (size_t)o->track - 1;
    } else {
        size_t best = 0;
        for (size_t k = 0; k < K; k++) {
            size_t n = 0;
            for (size_t t = 0; t < T; t++) {
                if (occ) {
                    n += occ[t * K + k] > 0;
                } else {
                    bool any = false;
                    for (size_t j = 0; j < N && !any; j++) any = !isnan(tr[((k * 2) * N + j) * T + t]);
                    n += any;
                }
            }
            if (n > best) best = n, pick = k;
        }
        if (K > 1)
            ami_warn(AM_WARN_IGNORED_NAME, "%s: took track %zu of %zu (the most occupied; --track N)", h->src ? h->src : "SLEAP",
                     pick + 1, K);
    }
    if ((st = am_mdet_create(1, T, N, &d, err)) != AM_OK) goto done;
    for (size_t j = 0; j < N; j++) {
        d->names[j] = nodes[j];
        nodes[j] = NULL;
    }
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < N; j++) {
            double x = tr[((pick * 2 + 0) * N + j) * T + t], y = tr[((pick * 2 + 1) * N + j) * T + t];
            double c = sc ? sc[(pick * N + j) * T + t] : 1.0;
            if (occ && !(occ[t * K + pick] > 0)) c = 0;
            if (isnan(c)) c = 1.0; /* a labelled (user) point has no score */
            if (!(isfinite(x) && isfinite(y)) || !(c > 0)) continue;
            size_t i = t * N + j;
            d->uv[2 * i] = (float)x;
            d->uv[2 * i + 1] = (float)y;
            d->conf[i] = (float)(c > 1 ? 1 : c);
        }
    if (o && o->fps > 0) d->fps = o->fps;
    else ami_warn(AM_WARN_MISSING_DATA, "%s: a SLEAP analysis file has no frame rate; 30 fps assumed (--fps)",
                  h->src ? h->src : "SLEAP");
    *out = d;
    d = NULL;
done:
    am_mdet_free(d);
    am_free(tr);
    am_free(sc);
    am_free(occ);
    ami_strings_free(nodes, nn);
    return st;
}

/* Open the image, run one reader under the lock, close. */
typedef am_status (*ami_h5_reader)(ami_h5 *h, const am_import_opts *o, void *out);

static am_status ami_h5_run(const void *buf, size_t len, const char *src, const am_import_opts *o, ami_h5_reader fn,
                            void *out, am_error *err)
{
    ami_h5 h = {.src = src, .err = err, .file = -1};
    pthread_mutex_lock(&ami_h5_lock);
    am_status st = ami_h5_open(&h, buf, len);
    if (st == AM_OK) st = fn(&h, o, out);
    ami_h5_close(&h);
    pthread_mutex_unlock(&ami_h5_lock);
    if (st != AM_OK) am_error_set_file(err, src);
    return st;
}

static am_status ami_sleap_reader(ami_h5 *h, const am_import_opts *o, void *out)
{
    return ami_sleap_locked(h, o, out);
}

am_status ami_sleap_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_mdet **out,
                          am_error *err)
{
    *out = NULL;
    return ami_h5_run(buf, len, src, o, ami_sleap_reader, out, err);
}

static am_status ami_points3d_locked(ami_h5 *h, const am_import_opts *o, am_joints **out)
{
    am_error *err = h->err;
    double *tr = NULL;
    char **nodes = NULL;
    size_t nn = 0;
    am_joints *jt = NULL;
    hsize_t dt[8];
    int nd = 0;
    am_status st = AM_OK;
    if (!ami_h5_has(h, "tracks")) {
        st = AM_FAIL(err, AM_E_SCHEMA, "no dataset 'tracks': not a points3d.h5");
        goto done;
    }
    if ((st = ami_h5_numbers(h, "tracks", 4, &nd, dt, &tr)) != AM_OK) goto done;
    if (nd == 3) {
        dt[3] = dt[2];
        dt[2] = dt[1];
        dt[1] = 1;
        nd = 4;
    }
    if (nd != 4 || dt[3] != 3) {
        st = AM_FAIL(err, AM_E_SHAPE, "dataset 'tracks' must be (n_frames, n_tracks, n_nodes, 3)");
        goto done;
    }
    const size_t T = (size_t)dt[0], K = (size_t)dt[1], N = (size_t)dt[2];
    if (!T || !K || !N) {
        st = AM_FAIL(err, AM_E_EMPTY, "dataset 'tracks' holds %zu frames, %zu tracks and %zu nodes", T, K, N);
        goto done;
    }
    size_t pick = o && o->track > 0 ? (size_t)o->track - 1 : 0;
    if (pick >= K) {
        st = AM_FAIL(err, AM_E_VALUE, "--track %ld, but the file has %zu tracks", o->track, K);
        goto done;
    }
    if (ami_h5_has(h, "node_names")) {
        if ((st = ami_h5_strings(h, "node_names", &nn, &nodes)) != AM_OK) goto done;
        if (nn != N) {
            st = AM_FAIL(err, AM_E_SHAPE, "dataset 'node_names' has %zu names, 'tracks' %zu nodes", nn, N);
            goto done;
        }
    }
    if ((st = am_joints_create(T, N, false, &jt, err)) != AM_OK) goto done;
    for (size_t j = 0; j < N; j++) {
        char b[32];
        snprintf(b, sizeof b, "node_%zu", j);
        if (!(jt->names[j] = am_strdup(nodes ? nodes[j] : b))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
    }
    double scale = o && o->scale > 0 ? o->scale : 1.0;
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < N; j++) {
            const double *p = tr + ((t * K + pick) * N + j) * 3;
            if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) continue;
            double q[3] = {p[0] * scale, p[1] * scale, p[2] * scale};
            ami_axes_to_world(o && o->up ? o->up : 'z', q, jt->joints + (t * N + j) * 3);
        }
    if (o && o->fps > 0) jt->fps = o->fps;
    else ami_warn(AM_WARN_MISSING_DATA, "%s: points3d.h5 has no frame rate; 30 fps assumed (--fps)", h->src ? h->src : "points3d.h5");
    if (!(o && o->scale > 0))
        ami_warn(AM_WARN_UNITS, "%s: points3d.h5 is in its calibration's units; read as metres (--scale 0.001 for mm)",
                 h->src ? h->src : "points3d.h5");
    *out = jt;
    jt = NULL;
done:
    am_joints_free(jt);
    am_free(tr);
    ami_strings_free(nodes, nn);
    return st;
}

static am_status ami_points3d_reader(ami_h5 *h, const am_import_opts *o, void *out)
{
    return ami_points3d_locked(h, o, out);
}

am_status ami_points3d_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                             am_error *err)
{
    *out = NULL;
    return ami_h5_run(buf, len, src, o, ami_points3d_reader, out, err);
}

/* The skeleton of a SLEAP analysis file: edge_inds (E, 2) into node_names. */
static am_status ami_sleap_edges_locked(ami_h5 *h, am_skeleton *sk)
{
    am_error *err = h->err;
    double *ei = NULL;
    char **nodes = NULL;
    size_t nn = 0;
    hsize_t dt[8];
    int nd = 0;
    am_status st = AM_OK;
    if (!ami_h5_has(h, "edge_inds") || !ami_h5_has(h, "node_names")) {
        st = AM_FAIL(err, AM_E_SCHEMA, "no datasets 'edge_inds' and 'node_names': the file carries no skeleton");
        goto done;
    }
    if ((st = ami_h5_strings(h, "node_names", &nn, &nodes)) != AM_OK) goto done;
    if ((st = ami_h5_numbers(h, "edge_inds", 2, &nd, dt, &ei)) != AM_OK) goto done;
    if (nd != 2 || dt[1] != 2) {
        st = AM_FAIL(err, AM_E_SHAPE, "dataset 'edge_inds' must be (n_edges, 2)");
        goto done;
    }
    size_t E = (size_t)dt[0];
    sk->a = am_alloc_array(E + 1, sizeof(char *));
    sk->b = am_alloc_array(E + 1, sizeof(char *));
    if (!sk->a || !sk->b) {
        st = AM_FAIL(err, AM_E_NOMEM, "skeleton");
        goto done;
    }
    for (size_t e = 0; e < E; e++) {
        double u = ei[2 * e], v = ei[2 * e + 1];
        if (!(u >= 0 && v >= 0 && u < (double)nn && v < (double)nn && u == floor(u) && v == floor(v))) {
            st = AM_FAIL(err, AM_E_VALUE, "edge %zu joins nodes %g and %g of %zu", e, u, v, nn);
            goto done;
        }
        if (!(sk->a[e] = am_strdup(nodes[(size_t)u])) || !(sk->b[e] = am_strdup(nodes[(size_t)v]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "skeleton");
            goto done;
        }
        sk->edge_count = e + 1;
    }
done:
    am_free(ei);
    ami_strings_free(nodes, nn);
    return st;
}

static am_status ami_sleap_edges_reader(ami_h5 *h, const am_import_opts *o, void *out)
{
    (void)o;
    return ami_sleap_edges_locked(h, out);
}

am_status ami_sleap_edges_parse(const void *buf, size_t len, const char *src, am_skeleton *sk, am_error *err)
{
    return ami_h5_run(buf, len, src, NULL, ami_sleap_edges_reader, sk, err);
}
