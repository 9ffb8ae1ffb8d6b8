/* anipose's pose-3d CSV: one header row, then one row per frame, with for each bodypart
 * <bp>_x, <bp>_y, <bp>_z, <bp>_error, <bp>_ncams, <bp>_score, and the alignment columns
 * M_00..M_22, center_0..2 and fnum.
 *
 * Decisions: a bodypart is every <bp>_x with both <bp>_y and <bp>_z; conf = <bp>_score when the
 * column exists (clamped into [0, 1]), else 1 where the point is given. Rows are frames in file
 * order (fnum may skip: anipose only writes frames it saw; the gap is not recreated). The file
 * has no units or frame rate: --scale (default 1, i.e. metres) and --fps (default 30, warned).
 * anipose writes the calibration's world axes; they are kept (--up y to turn a Y-up world).
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

static bool ami_suffix(const ami_field *f, const char *suf, size_t *stem)
{
    size_t n = strlen(suf);
    if (f->len <= n || memcmp(f->p + f->len - n, suf, n) != 0) return false;
    *stem = f->len - n;
    return true;
}

am_status ami_anipose_csv_parse(const char *text, size_t len, const char *src, const am_import_opts *o,
                                am_joints **out, am_error *err)
{
    *out = NULL;
    ami_csv c;
    ami_csv_init(&c, text, len, ',', true);
    am_status st = AM_OK;
    int32_t *col = NULL; /* [J][4]: x, y, z, score (-1) */
    char **names = NULL;
    size_t J = 0, ncol = 0, T = 0, cap = 0;
    double *xyz = NULL;
    double *conf = NULL;
    am_joints *jt = NULL;
    ami_header hdr = {0};
    if (!ami_csv_row(&c, &st, src, err) || c.count == 0) {
        if (st == AM_OK) st = AM_FAIL_AT(err, AM_E_EMPTY, src, 1, 0, "no header row");
        goto done;
    }
    ncol = c.count;
    col = am_alloc_array(ncol * 4, sizeof *col);
    names = am_alloc_array(ncol, sizeof *names);
    if (!col || !names || ami_header_index(&hdr, c.f, ncol) != AM_OK) {
        st = AM_FAIL(err, AM_E_NOMEM, "columns");
        goto done;
    }
    for (size_t k = 0; k < ncol; k++) {
        size_t sl;
        if (!ami_suffix(&c.f[k], "_x", &sl)) continue;
        int y = ami_header_find(&hdr, c.f[k].p, sl, "_y"), z = ami_header_find(&hdr, c.f[k].p, sl, "_z");
        if (y < 0 || z < 0) continue;
        col[4 * J] = (int32_t)k;
        col[4 * J + 1] = y;
        col[4 * J + 2] = z;
        col[4 * J + 3] = ami_header_find(&hdr, c.f[k].p, sl, "_score");
        if (!(names[J] = am_strndup(c.f[k].p, sl))) {
            st = AM_FAIL(err, AM_E_NOMEM, "names");
            goto done;
        }
        J++;
    }
    if (J == 0) {
        st = AM_FAIL_AT(err, AM_E_FORMAT, src, 1, 0, "no <bodypart>_x, _y, _z columns: not an anipose 3D CSV");
        goto done;
    }
    double scale = o && o->scale > 0 ? o->scale : 1.0;
    while (ami_csv_data_row(&c, ncol, &st, src, err)) {
        if (T == cap) {
            cap = cap ? 2 * cap : 256;
            /* The buffer (points and scores) and the joints copied from it. */
            if ((st = ami_rows_budget(src, c.line, cap, 64.0 * (double)J, err)) != AM_OK) goto done;
            double *nx = am_realloc_array(xyz, cap * J * 3, sizeof *nx);
            if (nx) xyz = nx;
            double *nc = nx ? am_realloc_array(conf, cap * J, sizeof *nc) : NULL;
            if (!nx || !nc) {
                st = AM_FAIL(err, AM_E_NOMEM, "%zu rows", cap);
                goto done;
            }
            conf = nc;
        }
        for (size_t j = 0; j < J; j++) {
            double p[4] = {0, 0, 0, 1};
            bool miss = false;
            for (int d = 0; d < 4; d++) {
                if (col[4 * j + (size_t)d] < 0) continue;
                const ami_field *f = &c.f[col[4 * j + (size_t)d]];
                bool empty;
                if (!ami_field_number(f, &p[d], &empty) || isinf(p[d])) {
                    st = AM_FAIL_AT(err, AM_E_SYNTAX, src, c.line, 0, "%s_%s: '%.*s' is not a finite number", names[j],
                                    d == 3 ? "score" : d == 0 ? "x" : d == 1 ? "y" : "z", (int)(f->len < 30 ? f->len : 30),
                                    f->p);
                    goto done;
                }
                if (d < 3) miss |= empty;
            }
            double *dst = xyz + (T * J + j) * 3, q[3] = {p[0] * scale, p[1] * scale, p[2] * scale};
            if (miss) dst[0] = dst[1] = dst[2] = NAN;
            else ami_axes_to_world(o && o->up ? o->up : 'z', q, dst);
            double s = isnan(p[3]) ? 0.0 : p[3] < 0 ? 0.0 : p[3] > 1 ? 1.0 : p[3];
            conf[T * J + j] = miss ? 0.0 : s;
        }
        T++;
    }
    if (st != AM_OK) goto done;
    if (T == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, src, c.line, 0, "no frames after the header");
        goto done;
    }
    if ((st = am_joints_create(T, J, true, &jt, err)) != AM_OK) goto done;
    memcpy(jt->joints, xyz, T * J * 3 * sizeof *xyz);
    memcpy(jt->conf, conf, T * J * sizeof *conf);
    for (size_t j = 0; j < J; j++) {
        jt->names[j] = names[j];
        names[j] = NULL;
    }
    if (o && o->fps > 0) jt->fps = o->fps;
    else ami_warn(AM_WARN_MISSING_DATA, "%s: an anipose CSV has no frame rate; 30 fps assumed (--fps)", src ? src : "anipose CSV");
    if (!(o && o->scale > 0))
        ami_warn(AM_WARN_UNITS, "%s: an anipose CSV is in its calibration's units; read as metres (--scale 0.001 for mm)",
                 src ? src : "anipose CSV");
    *out = jt;
    jt = NULL;
done:
    ami_header_free(&hdr);
    am_joints_free(jt);
    ami_strings_free(names, ncol);
    am_free(col);
    am_free(xyz);
    am_free(conf);
    ami_csv_free(&c);
    return st;
}
