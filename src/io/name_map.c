/* Joint-name maps (`--names MAP.json`): {"tracker name": "rig name" | null, ...}, applied to
 * N-camera detections and to 3D joints alike (mocap.h). */
#include <assert.h>
#include <string.h>

#include "anymove/mocap.h"
#include "core/internal.h"
#include "io/json_internal.h"

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
    assert(d && m);
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
    assert(jt && m);
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
