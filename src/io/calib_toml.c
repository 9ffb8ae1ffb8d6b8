/* calibration.toml (SPEC 4.2.2): anipose / aniposelib and Pose2Sim camera calibrations.
 *
 * Decisions where the tools differ or say nothing:
 * - Every top-level table except [metadata] is a camera, in file order; its `name` defaults to
 *   the table's name (Pose2Sim's [demo] has both).
 * - `size` may be integers (anipose) or floats (Pose2Sim); `distortions` may have 0-5 values
 *   (fewer = the rest 0; fisheye: 0-4). Unknown keys are ignored, as both tools do.
 * - The camera model: `fisheye = true` (Pose2Sim, aniposelib's FisheyeCamera) or anymove's
 *   `model = "pinhole" | "fisheye" | "orthographic"`; both given and disagreeing is an error.
 * - K must be upper triangular with K[2][2] = 1 and fx, fy > 0 (a calibration that is not is
 *   almost always a transposed or garbled matrix).
 * - Translations are multiplied by the read scale; nothing else has a length unit.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/camera.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "io/toml_internal.h"

/* A calibration file: 64 MiB (a few cameras take kilobytes), or the scope's max_bytes. */
#define AMI_CALIB_MAX_BYTES ((uint64_t)64 << 20)

static am_status ami_cal_fail(am_error *err, const char *src, const ami_toml *v, am_status code,
                              const char *fmt, ...) AM_PRINTF(5, 6);
static am_status ami_cal_fail(am_error *err, const char *src, const ami_toml *v, am_status code,
                              const char *fmt, ...)
{
    char msg[220];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return AM_FAIL_AT(err, code, src, v ? v->line : 0, v ? v->col : 0, "%s", msg);
}

/* A number array of exactly n (or, with n_max > n, between n and n_max) finite numbers. */
static am_status ami_cal_numbers(const char *src, const char *cam, const ami_toml *tab, const char *key,
                                 size_t n_min, size_t n_max, double *out, size_t *got, am_error *err)
{
    const ami_toml *v = ami_toml_get(tab, key);
    if (!v) return ami_cal_fail(err, src, tab, AM_E_SCHEMA, "camera '%s': missing key '%s'", cam, key);
    if (v->kind != AMI_TOML_ARRAY)
        return ami_cal_fail(err, src, v, AM_E_SCHEMA, "camera '%s': %s is %s, expected an array of numbers",
                            cam, key, ami_toml_kind_name(v->kind));
    if (v->count < n_min || v->count > n_max) {
        if (n_min == n_max)
            return ami_cal_fail(err, src, v, AM_E_SHAPE, "camera '%s': %s has %zu values, expected %zu", cam,
                                key, v->count, n_min);
        return ami_cal_fail(err, src, v, AM_E_SHAPE, "camera '%s': %s has %zu values, expected %zu to %zu",
                            cam, key, v->count, n_min, n_max);
    }
    for (size_t k = 0; k < v->count; k++) {
        const ami_toml *x = &v->items[k];
        if (!ami_toml_number(x, &out[k]))
            return ami_cal_fail(err, src, x, AM_E_SCHEMA, "camera '%s': %s[%zu] is %s, expected a number", cam,
                                key, k, ami_toml_kind_name(x->kind));
        if (!isfinite(out[k]))
            return ami_cal_fail(err, src, x, AM_E_NONFINITE, "camera '%s': %s[%zu] = %g", cam, key, k, out[k]);
    }
    if (got) *got = v->count;
    return AM_OK;
}

static am_status ami_cal_camera(const char *src, const char *table_name, const ami_toml *tab, double scale,
                                am_camera *c, am_error *err)
{
    const ami_toml *nm = ami_toml_get(tab, "name");
    const char *name = table_name;
    if (nm) {
        if (nm->kind != AMI_TOML_STRING)
            return ami_cal_fail(err, src, nm, AM_E_SCHEMA, "camera [%s]: name is %s, expected a string",
                                table_name, ami_toml_kind_name(nm->kind));
        name = nm->str;
    }
    if (strlen(name) >= AM_CAMERA_NAME_MAX || strlen(name) != (nm ? nm->str_len : strlen(name)) || !name[0])
        return ami_cal_fail(err, src, nm ? nm : tab, AM_E_VALUE,
                            "camera [%s]: the name must be 1 to %d bytes without NUL", table_name,
                            AM_CAMERA_NAME_MAX - 1);
    memset(c, 0, sizeof *c);
    strcpy(c->name, name);
    c->model = AM_CAMERA_PINHOLE;
    const ami_toml *fe = ami_toml_get(tab, "fisheye"), *md = ami_toml_get(tab, "model");
    if (fe) {
        if (fe->kind != AMI_TOML_BOOL)
            return ami_cal_fail(err, src, fe, AM_E_SCHEMA, "camera '%s': fisheye is %s, expected true or false",
                                name, ami_toml_kind_name(fe->kind));
        if (fe->b) c->model = AM_CAMERA_FISHEYE;
    }
    if (md) {
        static const char *const models[AM_CAMERA_MODEL_COUNT] = {"pinhole", "fisheye", "orthographic"};
        int m = -1;
        for (int k = 0; md->kind == AMI_TOML_STRING && k < AM_CAMERA_MODEL_COUNT; k++)
            if (strcmp(md->str, models[k]) == 0) m = k;
        if (m < 0)
            return ami_cal_fail(err, src, md, AM_E_VALUE,
                                "camera '%s': model must be \"pinhole\", \"fisheye\" or \"orthographic\"", name);
        if (fe && (m == AM_CAMERA_FISHEYE) != fe->b)
            return ami_cal_fail(err, src, md, AM_E_VALUE, "camera '%s': model = \"%s\" contradicts fisheye = %s",
                                name, models[m], fe->b ? "true" : "false");
        c->model = (am_camera_model)m;
    }
    double size[2];
    AMI_TRY(ami_cal_numbers(src, name, tab, "size", 2, 2, size, NULL, err));
    if (!(size[0] > 0 && size[1] > 0 && size[0] < 1e6 && size[1] < 1e6))
        return ami_cal_fail(err, src, ami_toml_get(tab, "size"), AM_E_VALUE,
                            "camera '%s': size = [%g, %g], expected positive pixels", name, size[0], size[1]);
    c->width = size[0];
    c->height = size[1];
    const ami_toml *mt = ami_toml_get(tab, "matrix");
    if (!mt) return ami_cal_fail(err, src, tab, AM_E_SCHEMA, "camera '%s': missing key 'matrix'", name);
    if (mt->kind != AMI_TOML_ARRAY || mt->count != 3)
        return ami_cal_fail(err, src, mt, AM_E_SHAPE, "camera '%s': matrix must be 3 rows of 3 numbers", name);
    for (size_t r = 0; r < 3; r++) {
        const ami_toml *row = &mt->items[r];
        if (row->kind != AMI_TOML_ARRAY || row->count != 3)
            return ami_cal_fail(err, src, row, AM_E_SHAPE, "camera '%s': matrix row %zu must be 3 numbers", name, r);
        for (size_t k = 0; k < 3; k++) {
            const ami_toml *x = &row->items[k];
            if (!ami_toml_number(x, &c->K[3 * r + k]))
                return ami_cal_fail(err, src, x, AM_E_SCHEMA, "camera '%s': matrix[%zu][%zu] is %s, expected a number",
                                    name, r, k, ami_toml_kind_name(x->kind));
            if (!isfinite(c->K[3 * r + k]))
                return ami_cal_fail(err, src, x, AM_E_NONFINITE, "camera '%s': matrix[%zu][%zu] = %g", name, r, k,
                                    c->K[3 * r + k]);
        }
    }
    if (!(c->K[0] > 0 && c->K[4] > 0) || c->K[3] != 0 || c->K[6] != 0 || c->K[7] != 0 || c->K[8] != 1)
        return ami_cal_fail(err, src, mt, AM_E_VALUE,
                            "camera '%s': matrix must be [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0",
                            name);
    if (ami_toml_get(tab, "distortions")) {
        size_t nd = 0;
        AMI_TRY(ami_cal_numbers(src, name, tab, "distortions", 0, c->model == AM_CAMERA_FISHEYE ? 4 : 5, c->dist,
                                &nd, err));
        if (c->model == AM_CAMERA_ORTHOGRAPHIC)
            for (size_t k = 0; k < nd; k++)
                if (c->dist[k] != 0)
                    return ami_cal_fail(err, src, ami_toml_get(tab, "distortions"), AM_E_VALUE,
                                        "camera '%s': an orthographic camera has no distortion", name);
    }
    AMI_TRY(ami_cal_numbers(src, name, tab, "rotation", 3, 3, c->rvec, NULL, err));
    AMI_TRY(ami_cal_numbers(src, name, tab, "translation", 3, 3, c->t, NULL, err));
    for (int k = 0; k < 3; k++) c->t[k] *= scale;
    am_camera_update(c);
    return AM_OK;
}

/* A TOML basic string. */
static void ami_toml_put_string(am_buf *b, const char *s, size_t n)
{
    am_buf_append(b, "\"", 1);
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch == '"' || ch == '\\') am_buf_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7F) am_buf_printf(b, "\\u%04X", ch);
        else am_buf_append(b, &s[k], 1);
    }
    am_buf_append(b, "\"", 1);
}

/* A value's TOML text, re-rendered (metadata is kept only for writing back). */
static void ami_toml_render(const ami_toml *v, am_buf *b)
{
    char num[40];
    switch (v->kind) {
    case AMI_TOML_STRING: ami_toml_put_string(b, v->str, v->str_len); break;
    case AMI_TOML_INT: am_buf_printf(b, "%lld", (long long)v->i); break;
    case AMI_TOML_FLOAT:
        if (isnan(v->f)) am_buf_printf(b, "nan");
        else if (isinf(v->f)) am_buf_printf(b, v->f > 0 ? "inf" : "-inf");
        else {
            ami_json_format_double(v->f, num, sizeof num);
            /* TOML needs a '.' or an exponent for a float to stay one. */
            am_buf_printf(b, "%s%s", num, strpbrk(num, ".eE") ? "" : ".0");
        }
        break;
    case AMI_TOML_BOOL: am_buf_printf(b, "%s", v->b ? "true" : "false"); break;
    case AMI_TOML_ARRAY:
        am_buf_append(b, "[", 1);
        for (size_t k = 0; k < v->count; k++) {
            if (k) am_buf_append(b, ", ", 2);
            ami_toml_render(&v->items[k], b);
        }
        am_buf_append(b, "]", 1);
        break;
    case AMI_TOML_TABLE:
        am_buf_append(b, "{", 1);
        for (size_t k = 0; k < v->count; k++) {
            if (k) am_buf_append(b, ", ", 2);
            ami_toml_put_string(b, v->keys[k], strlen(v->keys[k]));
            am_buf_append(b, " = ", 3);
            ami_toml_render(&v->items[k], b);
        }
        am_buf_append(b, "}", 1);
        break;
    default: break;
    }
}

static bool ami_bare_key(const char *k)
{
    if (!*k) return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || *k == '_' ||
              *k == '-'))
            return false;
    return true;
}

static am_status ami_cal_meta(const char *src, const ami_toml *meta, am_calib *cal, am_error *err)
{
    if (meta->kind != AMI_TOML_TABLE)
        return ami_cal_fail(err, src, meta, AM_E_SCHEMA, "metadata is %s, expected a table",
                            ami_toml_kind_name(meta->kind));
    if (!meta->count) return AM_OK;
    cal->meta = am_alloc_array(meta->count, sizeof *cal->meta);
    if (!cal->meta) return AM_FAIL_AT(err, AM_E_NOMEM, src, 0, 0, "metadata");
    for (size_t k = 0; k < meta->count; k++) {
        if (!ami_bare_key(meta->keys[k])) continue; /* kept simple: odd keys are dropped */
        am_buf b = {0};
        ami_toml_render(&meta->items[k], &b);
        am_buf_append(&b, "", 1);
        if (b.failed) {
            am_buf_free(&b);
            return AM_FAIL_AT(err, AM_E_NOMEM, src, 0, 0, "metadata");
        }
        am_calib_meta *m = &cal->meta[cal->meta_count];
        m->value = b.data;
        m->key = am_strdup(meta->keys[k]);
        cal->meta_count++;
        if (!m->key) return AM_FAIL_AT(err, AM_E_NOMEM, src, 0, 0, "metadata");
    }
    return AM_OK;
}

static am_status ami_calib_parse(const char *text, size_t len, const char *source, const am_calib_read_opts *opts,
                                 am_calib **out, am_error *err)
{
    *out = NULL;
    double scale = opts && opts->scale != 0 ? opts->scale : 1.0;
    AMI_CHECK(err, isfinite(scale) && scale > 0, AM_E_ARG, "calibration scale %g must be positive", scale);
    ami_toml *doc = NULL;
    AMI_TRY(ami_toml_parse(text, len, source, &doc, err));
    size_t n = 0;
    for (size_t k = 0; k < doc->count; k++)
        if (strcmp(doc->keys[k], "metadata") != 0) n++;
    am_calib *cal = NULL;
    am_status st = AM_OK;
    if (n == 0) {
        st = AM_FAIL_AT(err, AM_E_EMPTY, source, 0, 0, "no camera table ([cam_0], ...) in the calibration");
        goto done;
    }
    if ((st = am_calib_create(n, &cal, err)) != AM_OK) goto done;
    size_t c = 0;
    for (size_t k = 0; k < doc->count && st == AM_OK; k++) {
        const ami_toml *v = &doc->items[k];
        if (strcmp(doc->keys[k], "metadata") == 0) {
            st = ami_cal_meta(source, v, cal, err);
            continue;
        }
        if (v->kind != AMI_TOML_TABLE) {
            st = ami_cal_fail(err, source, v, AM_E_SCHEMA, "'%s' is %s, expected a camera table", doc->keys[k],
                              ami_toml_kind_name(v->kind));
            break;
        }
        st = ami_cal_camera(source, doc->keys[k], v, scale, &cal->cameras[c], err);
        if (st == AM_OK) {
            for (size_t j = 0; j < c; j++)
                if (strcmp(cal->cameras[j].name, cal->cameras[c].name) == 0) {
                    st = ami_cal_fail(err, source, v, AM_E_DUPLICATE, "two cameras are named '%s'",
                                      cal->cameras[c].name);
                    break;
                }
        }
        c++;
    }
done:
    ami_toml_free(doc);
    if (st != AM_OK) {
        am_calib_free(cal);
        return st;
    }
    *out = cal;
    return AM_OK;
}

am_status am_calib_parse(const char *text, size_t len, const char *source, const am_calib_read_opts *opts,
                         am_calib **out, am_error *err)
{
    assert((text || !len) && out);
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_calib_parse(text, len, source, opts, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_calib_load(const char *path, const am_calib_read_opts *opts, am_calib **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    char *text = NULL;
    size_t len = 0;
    uint64_t max = ami_budget(AMI_CALIB_MAX_BYTES);
    am_status st = am_file_read(path, max > SIZE_MAX ? SIZE_MAX : (size_t)max, &text, &len, err);
    if (st == AM_OK) st = ami_calib_parse(text, len, path, opts, out, err);
    am_free(text);
    am_scope_leave(&sc, NULL);
    return st;
}

static void ami_put_double(am_buf *b, double v)
{
    char num[40];
    ami_json_format_double(v, num, sizeof num);
    am_buf_printf(b, "%s", num);
}

static void ami_put_list(am_buf *b, const double *v, size_t n)
{
    am_buf_append(b, "[", 1);
    for (size_t k = 0; k < n; k++) {
        if (k) am_buf_append(b, ", ", 2);
        ami_put_double(b, v[k]);
    }
    am_buf_append(b, "]", 1);
}

am_status am_calib_to_toml(const am_calib *cal, am_buf *b, am_error *err)
{
    assert(cal && b);
    for (size_t c = 0; c < cal->camera_count; c++) {
        const am_camera *cam = &cal->cameras[c];
        for (int k = 0; k < 9; k++)
            AMI_CHECK(err, isfinite(cam->K[k]), AM_E_NONFINITE, "camera '%s': matrix is not finite", cam->name);
        for (int k = 0; k < 3; k++)
            AMI_CHECK(err, isfinite(cam->rvec[k]) && isfinite(cam->t[k]), AM_E_NONFINITE,
                      "camera '%s': pose is not finite", cam->name);
        am_buf_printf(b, "%s[cam_%zu]\nname = ", c ? "\n" : "", c);
        ami_toml_put_string(b, cam->name, strlen(cam->name));
        am_buf_printf(b, "\nsize = [");
        ami_put_double(b, cam->width);
        am_buf_append(b, ", ", 2);
        ami_put_double(b, cam->height);
        am_buf_printf(b, "]\n");
        am_buf_printf(b, "matrix = [");
        for (int r = 0; r < 3; r++) {
            if (r) am_buf_append(b, ", ", 2);
            ami_put_list(b, cam->K + 3 * r, 3);
        }
        am_buf_printf(b, "]\ndistortions = ");
        ami_put_list(b, cam->dist, cam->model == AM_CAMERA_FISHEYE ? 4 : cam->model == AM_CAMERA_PINHOLE ? 5 : 0);
        am_buf_printf(b, "\nrotation = ");
        ami_put_list(b, cam->rvec, 3);
        am_buf_printf(b, "\ntranslation = ");
        ami_put_list(b, cam->t, 3);
        am_buf_printf(b, "\n");
        if (cam->model == AM_CAMERA_FISHEYE) am_buf_printf(b, "fisheye = true\n");
        if (cam->model == AM_CAMERA_ORTHOGRAPHIC) am_buf_printf(b, "model = \"orthographic\"\n");
    }
    if (cal->meta_count) {
        am_buf_printf(b, "\n[metadata]\n");
        for (size_t k = 0; k < cal->meta_count; k++)
            am_buf_printf(b, "%s = %s\n", cal->meta[k].key, cal->meta[k].value);
    }
    AMI_CHECK(err, !b->failed, AM_E_NOMEM, "calibration text");
    return AM_OK;
}

am_status am_calib_write(const am_calib *cal, const char *path, am_error *err)
{
    am_buf b = {0};
    am_status st = am_calib_to_toml(cal, &b, err);
    if (st == AM_OK) st = am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}
