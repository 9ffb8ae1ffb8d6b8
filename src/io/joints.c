/* joints.npz (SPEC 4.2.3), the TRC writer, and joint-name maps.
 *
 * Decisions: joints fixes T and J; NaN = missing, an infinite coordinate is refused; conf is
 * optional and must lie in [0, 1]; no frame or no joint is AM_E_EMPTY.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/mocap.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "io/npz_check_internal.h"

am_status am_joints_create(size_t T, size_t J, bool with_conf, am_joints **out, am_error *err)
{
    assert(out);
    *out = NULL;
    AMI_CHECK(err, T && J, AM_E_EMPTY, "joints with %zu frames and %zu joints", T, J);
    AMI_CHECK(err, T < (1u << 28) && J < (1u << 20) && T < (SIZE_MAX / 32) / J, AM_E_LIMIT, "joints of %zu x %zu", T, J);
    am_joints *j = am_alloc(sizeof *j);
    if (!j) return AM_FAIL(err, AM_E_NOMEM, "joints");
    j->frame_count = T;
    j->joint_count = J;
    j->fps = 30.0;
    j->joints = am_alloc_array(T * J * 3, sizeof *j->joints);
    j->names = am_alloc_array(J, sizeof *j->names);
    if (with_conf) j->conf = am_alloc_array(T * J, sizeof *j->conf);
    if (!j->joints || !j->names || (with_conf && !j->conf)) {
        am_joints_free(j);
        return AM_FAIL(err, AM_E_NOMEM, "joints of %zu x %zu", T, J);
    }
    for (size_t i = 0; i < T * J * 3; i++) j->joints[i] = NAN;
    *out = j;
    return AM_OK;
}

void am_joints_free(am_joints *j)
{
    if (!j) return;
    am_free(j->joints);
    ami_strings_free(j->names, j->names ? j->joint_count : 0);
    am_free(j->conf);
    am_free(j);
}

static am_status ami_joints_fill(const char *path, const am_npz *z, am_joints **out, am_error *err)
{
    char sh[128];
    const am_array *a = NULL;
    AMI_TRY(ami_npz_need_float(path, z, "joints", &a, err));
    if (a->ndim != 3 || a->shape[2] != 3) {
        ami_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "joints has shape %s, expected [T,J,3]", sh);
    }
    const size_t T = a->shape[0], J = a->shape[1];
    if (!T || !J) {
        ami_shape_str(a, sh, sizeof sh);
        return AM_FAIL_AT(err, AM_E_EMPTY, path, 0, 0, "joints has shape %s: no %s", sh, !T ? "frames" : "joints");
    }
    const am_array *cf = am_npz_find(z, "conf");
    AMI_TRY(am_joints_create(T, J, cf != NULL, out, err));
    am_joints *jt = *out;
    AMI_TRY(am_array_to_f64(a, jt->joints, err));
    for (size_t i = 0; i < T * J * 3; i++)
        if (isinf(jt->joints[i]))
            return AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0, "joints[%zu][%zu][%zu] is infinite", i / 3 / J,
                              i / 3 % J, i % 3);
    ami_strings_free(jt->names, J);
    jt->names = NULL;
    size_t n = J;
    AMI_TRY(ami_npz_strings(path, z, "names", &n, &jt->names, err));
    AMI_TRY(ami_npz_scalar_in(path, z, "fps", 1e-3, 1e4, &jt->fps, err));
    if (cf) {
        const size_t want[2] = {T, J};
        if ((cf->dtype != AM_DTYPE_F32 && cf->dtype != AM_DTYPE_F64) || !ami_shape_is_n(cf, 2, want)) {
            ami_shape_str(cf, sh, sizeof sh);
            return AM_FAIL_AT(err, AM_E_SHAPE, path, 0, 0, "conf has dtype %s and shape %s, expected float [%zu,%zu]",
                              am_dtype_name(cf->dtype), sh, T, J);
        }
        AMI_TRY(am_array_to_f32(cf, jt->conf, err));
        for (size_t i = 0; i < T * J; i++)
            if (!(jt->conf[i] >= 0.0f && jt->conf[i] <= 1.0f))
                return AM_FAIL_AT(err, AM_E_VALUE, path, 0, 0, "conf[%zu][%zu] = %g is outside [0, 1]", i / J, i % J,
                                  (double)jt->conf[i]);
    }
    return AM_OK;
}

am_status am_joints_load(const char *path, am_joints **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    am_npz *z = NULL;
    AMI_TRY(am_npz_load(path, NULL, &z, err));
    am_status st = ami_joints_fill(path, z, out, err);
    am_npz_free(z);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        am_joints_free(*out);
        *out = NULL;
    }
    return st;
}

am_status am_joints_write(const char *path, const am_joints *j, am_error *err)
{
    assert(path && j);
    AMI_CHECK(err, isfinite(j->fps) && j->fps >= 1e-3 && j->fps <= 1e4, AM_E_VALUE, "joints fps %g", j->fps);
    size_t s_j[3] = {j->frame_count, j->joint_count, 3}, s_n[1] = {j->joint_count}, s_c[2] = {j->frame_count, j->joint_count};
    double fps = j->fps;
    am_array a[4];
    size_t n = 0;
    a[n++] = am_array_view("joints", AM_DTYPE_F64, 3, s_j, j->joints);
    a[n++] = am_array_view("names", AM_DTYPE_STR, 1, s_n, j->names);
    a[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps);
    if (j->conf) a[n++] = am_array_view("conf", AM_DTYPE_F32, 2, s_c, j->conf);
    return am_npz_write(path, a, n, true, err);
}

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

/* ---- name maps ---- */
void am_name_map_free(am_name_map *m)
{
    if (!m) return;
    ami_strings_free(m->from, m->count);
    if (m->to)
        for (size_t k = 0; k < m->count; k++) am_free(m->to[k]);
    am_free(m->to);
    am_free(m);
}

am_status am_name_map_load(const char *path, am_name_map **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    json_t *doc = NULL;
    AMI_TRY(ami_json_load_file(path, 16u << 20, &doc, err));
    am_status st = AM_OK;
    json_t *obj = json_object_get(doc, "names");
    if (!obj) obj = doc;
    am_name_map *m = NULL;
    if (!json_is_object(obj)) {
        st = AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "a name map is a JSON object {\"tracker name\": \"rig name\"}");
        goto done;
    }
    m = am_alloc(sizeof *m);
    size_t n = json_object_size(obj);
    if (!m || !(m->from = am_alloc_array(n ? n : 1, sizeof *m->from)) || !(m->to = am_alloc_array(n ? n : 1, sizeof *m->to))) {
        st = AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "name map");
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        if (!json_is_string(val) && !json_is_null(val)) {
            st = AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "'%s' maps to %s, expected a name or null", key,
                            ami_json_type_name(val));
            goto done;
        }
        m->from[m->count] = am_strdup(key);
        m->to[m->count] = json_is_string(val) ? am_strdup(json_string_value(val)) : NULL;
        m->count++;
        if (!m->from[m->count - 1] || (json_is_string(val) && !m->to[m->count - 1])) {
            st = AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "name map");
            goto done;
        }
    }
done:
    json_decref(doc);
    if (st != AM_OK) {
        am_name_map_free(m);
        return st;
    }
    *out = m;
    return AM_OK;
}

/* New names and the kept joints' old indices for a map; *kept_n = how many are kept. */
static am_status ami_rename_plan(char **names, size_t J, const am_name_map *m, int32_t *keep, size_t *kept_n,
                                 char ***new_names, am_error *err)
{
    *new_names = NULL;
    for (size_t k = 0; k < m->count; k++) {
        bool used = false;
        for (size_t j = 0; j < J && !used; j++) used = strcmp(names[j], m->from[k]) == 0;
        if (!used) ami_warn(AM_WARN_IGNORED_NAME, "name map entry '%s' matches no joint", m->from[k]);
    }
    char **nn = am_alloc_array(J, sizeof *nn);
    if (!nn) return AM_FAIL(err, AM_E_NOMEM, "names");
    size_t n = 0;
    for (size_t j = 0; j < J; j++) {
        const char *to = names[j];
        bool drop = false;
        for (size_t k = 0; k < m->count; k++)
            if (strcmp(names[j], m->from[k]) == 0) {
                to = m->to[k];
                drop = !to;
            }
        if (drop) continue;
        for (size_t q = 0; q < n; q++)
            if (strcmp(nn[q], to) == 0) {
                am_status st = AM_FAIL(err, AM_E_DUPLICATE, "two joints are named '%s' after renaming", to);
                ami_strings_free(nn, n);
                return st;
            }
        if (!(nn[n] = am_strdup(to))) {
            ami_strings_free(nn, n);
            return AM_FAIL(err, AM_E_NOMEM, "names");
        }
        keep[n++] = (int32_t)j;
    }
    if (!n) {
        am_free(nn);
        return AM_FAIL(err, AM_E_EMPTY, "the name map drops every joint");
    }
    *kept_n = n;
    *new_names = nn;
    return AM_OK;
}

am_status am_mdet_rename(am_mdet *d, const am_name_map *m, am_error *err)
{
    const size_t C = d->camera_count, T = d->frame_count, J = d->joint_count;
    int32_t *keep = am_alloc_array(J, sizeof *keep);
    if (!keep) return AM_FAIL(err, AM_E_NOMEM, "rename");
    size_t n = 0;
    char **nn = NULL;
    am_status st = ami_rename_plan(d->names, J, m, keep, &n, &nn, err);
    if (st == AM_OK) {
        /* Compacting in place is safe: destination indices never pass the source ones. */
        for (size_t ct = 0; ct < C * T; ct++)
            for (size_t k = 0; k < n; k++) {
                size_t src = ct * J + (size_t)keep[k], dst = ct * n + k;
                d->conf[dst] = d->conf[src];
                d->uv[2 * dst] = d->uv[2 * src];
                d->uv[2 * dst + 1] = d->uv[2 * src + 1];
            }
        ami_strings_free(d->names, J);
        d->names = nn;
        d->joint_count = n;
    }
    am_free(keep);
    return st;
}

am_status am_joints_rename(am_joints *jt, const am_name_map *m, am_error *err)
{
    const size_t T = jt->frame_count, J = jt->joint_count;
    int32_t *keep = am_alloc_array(J, sizeof *keep);
    if (!keep) return AM_FAIL(err, AM_E_NOMEM, "rename");
    size_t n = 0;
    char **nn = NULL;
    am_status st = ami_rename_plan(jt->names, J, m, keep, &n, &nn, err);
    if (st == AM_OK) {
        for (size_t t = 0; t < T; t++)
            for (size_t k = 0; k < n; k++) {
                size_t src = t * J + (size_t)keep[k], dst = t * n + k;
                memmove(jt->joints + 3 * dst, jt->joints + 3 * src, 3 * sizeof(double));
                if (jt->conf) jt->conf[dst] = jt->conf[src];
            }
        ami_strings_free(jt->names, J);
        jt->names = nn;
        jt->joint_count = n;
    }
    am_free(keep);
    return st;
}
