/* OpenSim TRC marker files (tab-separated text): read by import, written by triangulate.
 *
 * Layout: PathFileType line; a line of header keys and one of their values (DataRate,
 * CameraRate, NumFrames, NumMarkers, Units, ...); "Frame#  Time  name ..."; the X1 Y1 Z1 line;
 * then one row per frame (frame number, time, x y z per marker), after an optional blank line.
 *
 * Decisions:
 * - Marker names are the non-empty cells after Frame# and Time (OpenSim's own files space them
 *   irregularly: std_walking5_markers.trc puts one empty cell before each); their count must
 *   equal NumMarkers.
 * - A cell that is empty or any-case "nan" is missing; a marker is missing unless all three
 *   coordinates are numbers. Extra empty cells at a row's end are fine; fewer cells than
 *   2 + 3 * NumMarkers (other than trailing missing markers cut off) are refused.
 * - NumFrames disagreeing with the rows present: the rows win, with a warning.
 * - Units: mm, cm, m (any case), else the --scale given, else an error. Axes: OpenSim's Y up
 *   unless told otherwise (import --up z), turned into SPEC 1's world.
 * - fps: DataRate, unless the Time column steps regularly at a rate more than 1 % away from it
 *   (a decimated file keeps DataRate but not its spacing), then the Time column's, with a warning.
 *   The Time column alone is not trusted for the digits: writers round it (0.008342 s).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "io/json_internal.h"
#include "io/trackers_internal.h"

static int ami_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

am_status ami_trc_parse(const char *text, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                        am_error *err)
{
    *out = NULL;
    ami_csv c;
    ami_csv_init(&c, text, len, '\t', false);
    am_status st = AM_OK;
    ami_field keys[16];
    size_t nk = 0;
    double rate = NAN, nframes = NAN, nmark = NAN;
    char units[16] = "";
    char **names = NULL;
    size_t M = 0, T = 0, cap = 0;
    double *xyz = NULL, *times = NULL;
    am_joints *jt = NULL;
    ami_names seen = {0}; /* marker names so far */
    if (!ami_csv_row(&c, &st, src, err) || c.count == 0 || !ami_field_is(&c.f[0], "PathFileType", true)) {
        if (st == AM_OK)
            st = AM_FAIL_AT(err, len ? AM_E_FORMAT : AM_E_EMPTY, src, 1, 1, "a TRC file starts with 'PathFileType'");
        goto done;
    }
    if (!ami_csv_row(&c, &st, src, err)) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_TRUNCATED, src, c.line + 1, 0, "missing the header keys line");
        goto done;
    }
    nk = c.count < 16 ? c.count : 16;
    memcpy(keys, c.f, nk * sizeof *keys);
    if (!ami_csv_row(&c, &st, src, err)) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_TRUNCATED, src, c.line + 1, 0, "missing the header values line");
        goto done;
    }
    for (size_t k = 0; k < nk && k < c.count; k++) {
        double v;
        bool empty;
        bool num = ami_field_number(&c.f[k], &v, &empty) && !empty;
        if (ami_field_is(&keys[k], "DataRate", true) && num) rate = v;
        else if (ami_field_is(&keys[k], "CameraRate", true) && num && isnan(rate)) rate = v;
        else if (ami_field_is(&keys[k], "NumFrames", true) && num) nframes = v;
        else if (ami_field_is(&keys[k], "NumMarkers", true) && num) nmark = v;
        else if (ami_field_is(&keys[k], "Units", true)) snprintf(units, sizeof units, "%.*s", (int)(c.f[k].len < 15 ? c.f[k].len : 15), c.f[k].p);
    }
    if (!(nmark >= 1 && nmark <= 100000 && nmark == floor(nmark))) {
        st = AM_FAIL_AT(err, AM_E_FORMAT, src, 3, 0, "NumMarkers is missing or not a positive count");
        goto done;
    }
    M = (size_t)nmark;
    double scale = o && o->scale > 0 ? o->scale : NAN;
    if (isnan(scale)) {
        if (strcasecmp(units, "mm") == 0) scale = 0.001;
        else if (strcasecmp(units, "cm") == 0) scale = 0.01;
        else if (strcasecmp(units, "m") == 0) scale = 1.0;
        else {
            st = AM_FAIL_AT(err, AM_E_VALUE, src, 3, 0, "Units '%s' is not mm, cm or m: give the scale (--scale)", units);
            goto done;
        }
    }
    if (!ami_csv_row(&c, &st, src, err) || c.count < 2 || !ami_field_is(&c.f[0], "Frame#", true)) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_FORMAT, src, 4, 1, "expected the 'Frame#  Time  markers...' line");
        goto done;
    }
    names = am_alloc_array(M, sizeof *names);
    if (!names) {
        st = AM_FAIL(err, AM_E_NOMEM, "names");
        goto done;
    }
    size_t nn = 0;
    for (size_t k = 2; k < c.count; k++) {
        if (c.f[k].len == 0 || ami_field_is(&c.f[k], "", false)) continue;
        if (nn == M) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, 4, 0, "more marker names than NumMarkers = %zu", M);
            goto done;
        }
        if (!(names[nn++] = ami_field_dup(&c.f[k]))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
        int32_t prev;
        if (ami_names_add(&seen, names[nn - 1], strlen(names[nn - 1]), (int32_t)nn - 1, &prev) != AM_OK) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
        if (prev >= 0) {
            st = AM_FAIL_AT(err, AM_E_DUPLICATE, src, 4, 0, "marker '%s' is named twice", names[prev]);
            goto done;
        }
    }
    if (nn != M) {
        st = AM_FAIL_AT(err, AM_E_SHAPE, src, 4, 0, "%zu marker names, NumMarkers = %zu", nn, M);
        goto done;
    }
    if (!ami_csv_row(&c, &st, src, err)) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_TRUNCATED, src, 5, 0, "missing the X1 Y1 Z1 line");
        goto done;
    }
    for (;;) {
        if (!ami_csv_row(&c, &st, src, err)) {
            if (st != AM_OK) goto done;
            break;
        }
        size_t used = c.count;
        while (used > 0 && c.f[used - 1].len == 0) used--;
        if (used == 0) continue;
        if (used > 2 + 3 * M) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, c.line, 0, "row has %zu cells, expected 2 + 3 x %zu", used, M);
            goto done;
        }
        if (used < 2) {
            st = AM_FAIL_AT(err, AM_E_SHAPE, src, c.line, 0, "row has no time");
            goto done;
        }
        if (T == cap) {
            cap = cap ? 2 * cap : 64;
            /* The buffer (points and time) and the joints copied from it: a row of two cells
             * stands for NumMarkers points. */
            if ((st = ami_rows_budget(src, c.line, cap, 48.0 * (double)M + 8.0, err)) != AM_OK) goto done;
            double *nx = am_realloc_array(xyz, cap * M * 3, sizeof *nx), *nt = NULL;
            if (nx) xyz = nx;
            if (nx) nt = am_realloc_array(times, cap, sizeof *nt);
            if (!nx || !nt) {
                st = AM_FAIL(err, AM_E_NOMEM, "%zu rows", cap);
                goto done;
            }
            times = nt;
        }
        double v;
        bool empty;
        if (!ami_field_number(&c.f[1], &v, &empty) || !isfinite(v)) {
            st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "the time '%.*s' is not a number", (int)(c.f[1].len < 30 ? c.f[1].len : 30),
                            c.f[1].p);
            goto done;
        }
        times[T] = v;
        for (size_t m = 0; m < M; m++) {
            double p[3];
            bool miss = false;
            for (size_t d = 0; d < 3; d++) {
                size_t k = 2 + 3 * m + d;
                if (k >= used) {
                    miss = true;
                    continue;
                }
                if (!ami_field_number(&c.f[k], &p[d], &empty)) {
                    st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "cell %zu ('%.*s') is not a number", k + 1,
                                    (int)(c.f[k].len < 30 ? c.f[k].len : 30), c.f[k].p);
                    goto done;
                }
                if (isinf(p[d])) {
                    st = AM_FAIL_AT(err, AM_E_NONFINITE, src, c.line, 0, "cell %zu is infinite", k + 1);
                    goto done;
                }
                miss |= empty;
            }
            double *dst = xyz + (T * M + m) * 3;
            if (miss) {
                dst[0] = dst[1] = dst[2] = NAN;
            } else {
                for (int d = 0; d < 3; d++) p[d] *= scale;
                ami_axes_to_world(o && o->up ? o->up : 'y', p, dst);
            }
        }
        T++;
    }
    if (T == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, src, c.line, 0, "no frames after the header");
        goto done;
    }
    if (!isnan(nframes) && nframes != (double)T)
        ami_warn(AM_WARN_MISSING_DATA, "%s: NumFrames says %g, the file holds %zu rows (read)", src ? src : "TRC", nframes, T);
    if ((st = am_joints_create(T, M, false, &jt, err)) != AM_OK) goto done;
    memcpy(jt->joints, xyz, T * M * 3 * sizeof *xyz);
    ami_strings_free(jt->names, M);
    jt->names = names;
    names = NULL;
    double fps = rate;
    if (T >= 3) {
        double *dt = am_alloc_array(T - 1, sizeof *dt);
        if (!dt) {
            st = AM_FAIL(err, AM_E_NOMEM, "times");
            goto done;
        }
        for (size_t t = 0; t + 1 < T; t++) dt[t] = times[t + 1] - times[t];
        qsort(dt, T - 1, sizeof *dt, ami_cmp_d);
        double med = dt[(T - 1) / 2];
        bool regular = med > 0 && fabs(dt[0] - med) < 0.01 * med && fabs(dt[T - 2] - med) < 0.01 * med;
        am_free(dt);
        double f = 1.0 / med;
        if (regular && (isnan(rate) || fabs(f - rate) > 0.01 * rate)) {
            if (!isnan(rate))
                ami_warn(AM_WARN_DEGRADED, "%s: DataRate says %g Hz, the Time column steps %g s (%g fps, used)",
                         src ? src : "TRC", rate, med, f);
            fps = f;
        }
    }
    if (!am_fps_valid(fps)) {
        st = AM_FAIL_AT(err, AM_E_VALUE, src, 3, 0, "no usable frame rate (DataRate %g)", rate);
        goto done;
    }
    jt->fps = fps;
    *out = jt;
    jt = NULL;
done:
    ami_names_free(&seen);
    am_joints_free(jt);
    ami_strings_free(names, M);
    am_free(xyz);
    am_free(times);
    ami_csv_free(&c);
    return st;
}

/* ---- writing: what triangulate gives OpenSim ---- */
am_status am_trc_write(const char *path, const am_joints *j, am_error *err)
{
    assert(path && j);
    const size_t T = j->frame_count, J = j->joint_count;
    am_buf b = {0};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    am_buf_printf(&b, "PathFileType\t4\t(X/Y/Z)\t%s\n", base);
    am_buf_printf(&b, "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n");
    am_buf_printf(&b, "%.10g\t%.10g\t%zu\t%zu\tm\t%.10g\t1\t%zu\n", j->fps, j->fps, T, J, j->fps, T);
    am_buf_printf(&b, "Frame#\tTime");
    for (size_t k = 0; k < J; k++) {
        for (const char *s = j->names[k]; *s; s++)
            if (*s == '\t' || *s == '\n' || *s == '\r') {
                am_buf_free(&b);
                return AM_FAIL(err, AM_E_VALUE, "joint name '%s' holds a tab or newline (TRC cannot store it)",
                               j->names[k]);
            }
        am_buf_printf(&b, "\t%s\t\t", j->names[k]);
    }
    am_buf_printf(&b, "\n\t");
    for (size_t k = 0; k < J; k++) am_buf_printf(&b, "\tX%zu\tY%zu\tZ%zu", k + 1, k + 1, k + 1);
    am_buf_printf(&b, "\n\n");
    char num[40];
    for (size_t t = 0; t < T; t++) {
        ami_json_format_double((double)t / j->fps, num, sizeof num);
        am_buf_printf(&b, "%zu\t%s", t + 1, num);
        for (size_t k = 0; k < J; k++) {
            const double *p = j->joints + (t * J + k) * 3;
            /* SPEC 1 world (Z up, faces -Y, +X left) -> OpenSim (X forward, Y up, Z right). */
            const double q[3] = {-p[1], p[2], -p[0]};
            for (int d = 0; d < 3; d++) {
                if (isnan(q[d])) {
                    am_buf_printf(&b, "\tNaN");
                } else {
                    ami_json_format_double(q[d], num, sizeof num);
                    am_buf_printf(&b, "\t%s", num);
                }
            }
        }
        am_buf_append(&b, "\n", 1);
    }
    am_status st = b.failed ? AM_FAIL(err, AM_E_NOMEM, "TRC text") : am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}
