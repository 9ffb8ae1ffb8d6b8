/* tracks.npz (SPEC.md 4.1): 3D point tracks, the input of `anymove rig`.
 *
 * Every array is shape- and dtype-checked against `points` and every failure names the file
 * and the array, so a user can fix the file that produced it. Decisions:
 * - points with no frames or no points are refused (AM_E_EMPTY): nothing downstream can use
 *   them and a later stage would fail with a less helpful message.
 * - visible stored as uint8 counts any nonzero value as visible, like numpy's astype(bool).
 * - Unknown extra arrays are ignored so producers can add diagnostics.
 * - Dtypes and shapes are checked from the members' headers, before any array is inflated
 *   (ami_npz_load_checked): a wrong file fails fast whatever it would inflate to.
 * - fps must pass am_fps_valid: 1e-300 is positive but no clip.
 */
#include "anymove/io.h"
#include "core/internal.h"
#include "io/npy_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Every dtype and shape, from the headers alone (no array has data yet). */
static am_status ami_tracks_check(const am_npz *z, const char *path, am_error *err)
{
    char sh[128];
    static const char *const dims[2] = {"frames", "points"};
    const am_array *pts = NULL;
    AMI_TRY(ami_npz_need_lead(path, z, "points", 3, 3, "[T,N,3]", dims, &pts, err));
    size_t T = pts->shape[0], N = pts->shape[1];
    const am_array *vis = am_npz_find(z, "visible");
    if (vis) {
        if (vis->dtype != AM_DTYPE_BOOL && vis->dtype != AM_DTYPE_U8)
            return AM_FAIL_AT(err, AM_E_DTYPE, path, 0, 0,
                              "visible has dtype %s, expected bool or uint8",
                              am_dtype_name(vis->dtype));
        if (vis->ndim != 2 || vis->shape[0] != T || vis->shape[1] != N) {
            ami_npy_shape_str(vis, sh, sizeof sh);
            return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0,
                              "visible has shape %s, expected [%zu,%zu] to match points", sh, T, N);
        }
    }
    const am_array *fps = NULL;
    if (am_npz_find(z, "fps")) AMI_TRY(ami_npz_need_scalar(path, z, "fps", &fps, err));
    const am_array *faces = am_npz_find(z, "faces");
    if (faces) {
        if (faces->dtype != AM_DTYPE_I32 && faces->dtype != AM_DTYPE_I64)
            return AM_FAIL_AT(err, AM_E_DTYPE, path, 0, 0,
                              "faces has dtype %s, expected int32 or int64",
                              am_dtype_name(faces->dtype));
        if (faces->ndim != 2 || faces->shape[1] != 3) {
            ami_npy_shape_str(faces, sh, sizeof sh);
            return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "faces has shape %s, expected [F,3]", sh);
        }
    }
    return AM_OK;
}

/* The values, once ami_tracks_check passed. Takes over z's float32 points and bool/uint8
 * visible buffers instead of copying them. */
static am_status ami_tracks_fill(const char *path, am_npz *z, am_tracks *tr, am_error *err)
{
    am_array *pts = (am_array *)(uintptr_t)am_npz_find(z, "points");
    size_t T = pts->shape[0], N = pts->shape[1];
    tr->frame_count = T;
    tr->point_count = N;
    tr->fps = 30.0;
    if (pts->dtype == AM_DTYPE_F32) {
        tr->points = pts->data;
        pts->data = NULL;
    } else {
        tr->points = am_alloc_array(pts->count, sizeof *tr->points);
        if (!tr->points)
            return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "tracks of %zu x %zu points", T, N);
        AMI_TRY(am_array_to_f32(pts, tr->points, err));
    }

    am_array *vis = (am_array *)(uintptr_t)am_npz_find(z, "visible");
    if (vis) {
        tr->visible = vis->data; /* bool arrays are 0/1 already (npy.c) */
        vis->data = NULL;
        if (vis->dtype == AM_DTYPE_U8)
            for (size_t i = 0; i < T * N; i++) tr->visible[i] = tr->visible[i] != 0;
    } else {
        tr->visible = am_alloc_array(T * N, 1);
        if (!tr->visible)
            return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "tracks of %zu x %zu points", T, N);
        memset(tr->visible, 1, T * N);
    }

    for (size_t t = 0; t < T; t++) {
        for (size_t n = 0; n < N; n++) {
            float *p = tr->points + (t * N + n) * 3;
            if (!tr->visible[t * N + n]) {
                p[0] = p[1] = p[2] = NAN;
                continue;
            }
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
                return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0,
                                  "points[%zu][%zu] = (%g, %g, %g) is visible but not finite "
                                  "(frame %zu, point %zu)",
                                  t, n, (double)p[0], (double)p[1], (double)p[2], t, n);
        }
    }

    if (am_npz_find(z, "fps"))
        AMI_TRY(ami_npz_scalar_in(path, z, "fps", AM_FPS_MIN, AM_FPS_MAX, &tr->fps, err));

    const am_array *faces = am_npz_find(z, "faces");
    if (faces) {
        size_t F = faces->shape[0];
        if (F > 0) {
            tr->faces = am_alloc_array(F * 3, sizeof *tr->faces);
            if (!tr->faces) return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "%zu faces", F);
            for (size_t i = 0; i < F * 3; i++) {
                int64_t v;
                if (faces->dtype == AM_DTYPE_I32) {
                    int32_t v32;
                    memcpy(&v32, (const char *)faces->data + 4 * i, 4);
                    v = v32;
                } else {
                    memcpy(&v, (const char *)faces->data + 8 * i, 8);
                }
                if (v < 0 || (uint64_t)v >= N)
                    return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0,
                                      "faces[%zu][%zu] = %" PRId64 " is out of range for %zu points",
                                      i / 3, i % 3, v, N);
                tr->faces[i] = (int32_t)v;
            }
        }
        tr->face_count = F;
    }
    return AM_OK;
}

am_status am_tracks_load(const char *path, am_tracks **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(ami_npz_load_checked(path, NULL, ami_tracks_check, &z, err));
    am_tracks *tr = am_alloc(sizeof *tr);
    am_status st = tr ? ami_tracks_fill(path, z, tr, err)
                      : AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "tracks");
    ami_warn_list(&z->warnings); /* the loader runs in the caller's scope */
    am_npz_free(z);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_tracks_free(tr);
        return st;
    }
    *out = tr;
    return AM_OK;
}

am_status am_tracks_write(const char *path, const am_tracks *tr, am_error *err)
{
    assert(path && tr);
    size_t T = tr->frame_count, N = tr->point_count, F = tr->face_count;
    assert(T * N == 0 || tr->points);
    /* What the reader refuses is not written: 0 means the default, anything else must pass. */
    double fps = tr->fps == 0 ? 30.0 : tr->fps;
    AMI_CHECK(err, am_fps_valid(fps), AM_E_ARG, "fps %g is outside [%g, %g]", fps, AM_FPS_MIN,
              AM_FPS_MAX);
    am_array arrs[4];
    size_t n = 0;
    size_t s_pts[3] = {T, N, 3}, s_vis[2] = {T, N}, s_faces[2] = {F, 3};
    arrs[n++] = am_array_view("points", AM_DTYPE_F32, 3, s_pts, tr->points);
    if (tr->visible) arrs[n++] = am_array_view("visible", AM_DTYPE_BOOL, 2, s_vis, tr->visible);
    arrs[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    if (F > 0 && tr->faces) arrs[n++] = am_array_view("faces", AM_DTYPE_I32, 2, s_faces, tr->faces);
    return am_npz_write(path, arrs, n, true, err);
}

void am_tracks_free(am_tracks *tr)
{
    if (!tr) return;
    am_free(tr->points);
    am_free(tr->visible);
    am_free(tr->faces);
    am_free(tr);
}

void am_tracks_scale(am_tracks *tr, double s)
{
    assert(tr && s > 0.0);
    for (size_t i = 0; i < tr->frame_count * tr->point_count * 3; i++) tr->points[i] = (float)(tr->points[i] * s);
}
