/* rig.json reading and writing (SPEC 2.1). This file checks syntax and the document's shape
 * only; am_rig_build (rig.c) validates names, parents, cycles and limits and sorts the bones. */
#include "anymove/io.h"
#include "anymove/math.h"
#include "io/json_internal.h"
#include "core/internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* rig.json is hand-authored and small; a larger file is almost certainly the wrong file. */
#define AMI_RIG_MAX_BYTES ((size_t)64 << 20)

static const char *const ami_rig_known_keys[] = {"joints", "bones", "limits_deg", "helpers", NULL};
/* Keys the writer writes itself: an extra key of the same name is not written twice. */
static const char *const ami_rig_written_keys[] = {"name", "model", "joints", "bones", "limits_deg",
                                                   "helpers", NULL};
/* The same when the rig has no model path: a "model" of another kind rides along. */
static const char *const ami_rig_written_keys_no_model[] = {"name", "joints", "bones", "limits_deg",
                                                            "helpers", NULL};

typedef struct ami_rig_parse {
    const char **joint_names;
    double *joint_pos;
    const char **bone_names, **bone_head, **bone_tail, **bone_parent;
    const char **limit_keys;
    double *limits;
    char **helpers;
    size_t helper_count;
    char *extra;
} ami_rig_parse;

static void ami_rig_parse_free(ami_rig_parse *p)
{
    am_free((void *)p->joint_names);
    am_free(p->joint_pos);
    am_free((void *)p->bone_names);
    am_free((void *)p->bone_head);
    am_free((void *)p->bone_tail);
    am_free((void *)p->bone_parent);
    am_free((void *)p->limit_keys);
    am_free(p->limits);
    ami_strings_free(p->helpers, p->helper_count);
    am_free(p->extra);
}

static am_status ami_rig_parse_joints(const json_t *doc, ami_rig_parse *p, am_rig_desc *d,
                                      am_error *err)
{
    json_t *joints = NULL;
    AMI_TRY(ami_json_member(doc, "", "joints", true, &joints, err));
    AMI_TRY(ami_json_expect(joints, JSON_OBJECT, "joints", err));
    size_t n = json_object_size(joints);
    if (n == 0) return AM_OK; /* am_rig_build names the problem (no bones can attach) */
    p->joint_names = am_alloc_array(n, sizeof *p->joint_names);
    p->joint_pos = am_alloc_array(n, 3 * sizeof *p->joint_pos);
    AMI_CHECK(err, p->joint_names && p->joint_pos, AM_E_NOMEM, "%zu joints", n);
    const char *key;
    json_t *val;
    size_t j = 0;
    json_object_foreach(joints, key, val) {
        static const size_t shape3[1] = {3};
        /* The path is formatted only when the value is not three numbers (its message). */
        bool plain = json_is_array(val) && json_array_size(val) == 3;
        for (size_t k = 0; k < 3 && plain; k++)
            plain = json_is_number(json_array_get(val, k)) &&
                    isfinite(json_number_value(json_array_get(val, k)));
        AMI_TRY(ami_json_numbers(val, plain ? "joints" : ami_json_path_key("joints", key).s, 1,
                                 shape3, p->joint_pos + 3 * j, err));
        p->joint_names[j++] = key;
    }
    d->joint_count = n;
    d->joint_names = p->joint_names;
    d->joint_pos = p->joint_pos;
    return AM_OK;
}

static am_status ami_rig_parse_bones(const json_t *doc, ami_rig_parse *p, am_rig_desc *d,
                                     am_error *err)
{
    json_t *bones = NULL;
    AMI_TRY(ami_json_member(doc, "", "bones", true, &bones, err));
    AMI_TRY(ami_json_expect(bones, JSON_ARRAY, "bones", err));
    size_t n = json_array_size(bones);
    if (n == 0) return AM_OK; /* am_rig_build reports the missing root */
    p->bone_names = am_alloc_array(n, sizeof(char *));
    p->bone_head = am_alloc_array(n, sizeof(char *));
    p->bone_tail = am_alloc_array(n, sizeof(char *));
    p->bone_parent = am_alloc_array(n, sizeof(char *));
    AMI_CHECK(err, p->bone_names && p->bone_head && p->bone_tail && p->bone_parent, AM_E_NOMEM,
              "%zu bones", n);
    for (size_t b = 0; b < n; b++) {
        const json_t *e = json_array_get(bones, b);
        if (json_is_array(e) && json_array_size(e) == 4 && json_is_string(json_array_get(e, 0)) &&
            json_is_string(json_array_get(e, 1)) && json_is_string(json_array_get(e, 2)) &&
            (json_is_null(json_array_get(e, 3)) || json_is_string(json_array_get(e, 3)))) {
            /* The common case, without formatting the paths its messages would need. */
            p->bone_names[b] = json_string_value(json_array_get(e, 0));
            p->bone_head[b] = json_string_value(json_array_get(e, 1));
            p->bone_tail[b] = json_string_value(json_array_get(e, 2));
            p->bone_parent[b] = json_string_value(json_array_get(e, 3)); /* NULL for null */
            continue;
        }
        ami_jpath bp = ami_json_path_index("bones", b);
        AMI_TRY(ami_json_expect(e, JSON_ARRAY, bp.s, err));
        AMI_CHECK(err, json_array_size(e) == 4, AM_E_SHAPE,
                  "%s: expected [name, head_joint, tail_joint, parent_or_null], got %zu elements",
                  bp.s, json_array_size(e));
        const char **slots[3] = {&p->bone_names[b], &p->bone_head[b], &p->bone_tail[b]};
        for (size_t k = 0; k < 3; k++)
            AMI_TRY(ami_json_string(json_array_get(e, k), ami_json_path_index(bp.s, k).s,
                                    slots[k], err));
        const json_t *par = json_array_get(e, 3);
        if (json_is_null(par))
            p->bone_parent[b] = NULL;
        else
            AMI_TRY(ami_json_string(par, ami_json_path_index(bp.s, 3).s, &p->bone_parent[b],
                                    err));
    }
    d->bone_count = n;
    d->bone_names = p->bone_names;
    d->bone_head = p->bone_head;
    d->bone_tail = p->bone_tail;
    d->bone_parent = p->bone_parent;
    return AM_OK;
}

static am_status ami_rig_parse_limits(const json_t *doc, ami_rig_parse *p, am_rig_desc *d,
                                      am_error *err)
{
    json_t *lim = NULL;
    AMI_TRY(ami_json_member(doc, "", "limits_deg", false, &lim, err));
    if (!lim) return AM_OK;
    AMI_TRY(ami_json_expect(lim, JSON_OBJECT, "limits_deg", err));
    size_t n = json_object_size(lim);
    if (n == 0) return AM_OK;
    p->limit_keys = am_alloc_array(n, sizeof(char *));
    p->limits = am_alloc_array(n, 6 * sizeof(double));
    AMI_CHECK(err, p->limit_keys && p->limits, AM_E_NOMEM, "%zu limits", n);
    const char *key;
    json_t *val;
    size_t l = 0;
    json_object_foreach(lim, key, val) {
        static const size_t shape32[2] = {3, 2};
        AMI_TRY(ami_json_numbers(val, ami_json_path_key("limits_deg", key).s, 2, shape32,
                                 p->limits + 6 * l, err));
        p->limit_keys[l++] = key;
    }
    d->limit_count = n;
    d->limit_keys = p->limit_keys;
    d->limits_deg = p->limits;
    return AM_OK;
}

static am_status ami_rig_parse_helpers(const json_t *doc, ami_rig_parse *p, am_rig_desc *d,
                                       am_error *err)
{
    json_t *h = NULL;
    AMI_TRY(ami_json_member(doc, "", "helpers", false, &h, err));
    if (!h) return AM_OK;
    AMI_TRY(ami_json_strings(h, "helpers", &p->helpers, &p->helper_count, err));
    d->helper_count = p->helper_count;
    d->helpers = (const char *const *)p->helpers;
    return AM_OK;
}

/* An ami_json_reader: user is the source's name, out an am_rig **. */
static am_status ami_rig_from_doc(const json_t *doc, const void *user, void *out_, am_error *err)
{
    const char *source = user;
    am_rig **out = out_;
    AMI_TRY(ami_json_expect(doc, JSON_OBJECT, "", err));
    ami_rig_parse p = {0};
    am_rig_desc d = {0};
    d.source = source;
    const char *name = NULL, *model = NULL;
    am_status s = ami_rig_parse_joints(doc, &p, &d, err);
    if (s == AM_OK) s = ami_rig_parse_bones(doc, &p, &d, err);
    if (s == AM_OK) s = ami_rig_parse_limits(doc, &p, &d, err);
    if (s == AM_OK) s = ami_rig_parse_helpers(doc, &p, &d, err);
    if (s == AM_OK) s = ami_json_get_string(doc, "", "name", false, &name, err);
    /* "model" is ours only when it is a path: another tool's "model" object rides along */
    const json_t *jm = json_object_get(doc, "model");
    if (json_is_string(jm)) model = json_string_value(jm);
    /* Every other key (name, skin, ...) rides along so rewriting the file keeps it. */
    if (s == AM_OK) s = ami_json_extra_collect(doc, ami_rig_known_keys, &p.extra, err);
    d.extra_json = p.extra;
    am_rig *rig = NULL;
    if (s == AM_OK) s = am_rig_build(&d, &rig, err);
    /* am_rig_build knows nothing of "name"; fill what it left empty. */
    if (s == AM_OK && !rig->name && name) {
        rig->name = am_strdup(name);
        if (!rig->name) s = AM_FAIL(err, AM_E_NOMEM, "rig name");
    }
    if (s == AM_OK && model) {
        rig->model = am_strdup(model);
        if (!rig->model) s = AM_FAIL(err, AM_E_NOMEM, "rig model");
    }
    if (s == AM_OK && !rig->extra_json && p.extra) {
        rig->extra_json = p.extra;
        p.extra = NULL;
    }
    ami_rig_parse_free(&p);
    if (s != AM_OK) {
        am_rig_free(rig);
        return s;
    }
    *out = rig;
    return AM_OK;
}

am_status am_rig_parse(const char *text, size_t len, const char *source, am_rig **out,
                       am_error *err)
{
    *out = NULL;
    return ami_json_parse_into(text, len, source, ami_rig_from_doc, source, out, err);
}

am_status am_rig_load(const char *path, am_rig **out, am_error *err)
{
    *out = NULL;
    return ami_json_load_into(path, AMI_RIG_MAX_BYTES, ami_rig_from_doc, path, out, err);
}

/* Limits are stored in radians; degrees * pi/180 * 180/pi can come back one ulp off, and a
 * file that said -40 should say -40 again. Snap to a micro-degree only when that close. */
static double ami_deg_out(double rad)
{
    double deg = AM_DEG(rad);
    double snapped = round(deg * 1e6) / 1e6;
    return fabs(snapped - deg) < 1e-9 ? snapped : deg;
}

/* rig.json: name, joints, bones (parents first), limits as resolved per bone, helpers, then
 * the kept extra keys. */
static void ami_rig_to_jw(const am_rig *rig, ami_jw *w)
{
    ami_jw_object(w, NULL);
    if (rig->name) ami_jw_string(w, "name", rig->name);
    if (rig->model) ami_jw_string(w, "model", rig->model);
    ami_jw_object(w, "joints");
    static const size_t shape3[1] = {3};
    for (size_t j = 0; j < rig->joint_count; j++)
        ami_jw_numbers(w, rig->joint_names[j], rig->joint_rest + 3 * j, 1, shape3);
    ami_jw_close(w);
    ami_jw_array(w, "bones");
    for (size_t b = 0; b < rig->bone_count; b++) {
        int32_t par = rig->parent[b];
        ami_jw_row(w, NULL);
        ami_jw_string(w, NULL, rig->bone_names[b]);
        ami_jw_string(w, NULL, rig->joint_names[rig->head_joint[b]]);
        ami_jw_string(w, NULL, rig->joint_names[rig->tail_joint[b]]);
        ami_jw_string(w, NULL, par < 0 ? NULL : rig->bone_names[par]);
        ami_jw_close(w);
    }
    ami_jw_close(w);
    bool any_limit = false, any_helper = false;
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->has_limit && rig->has_limit[b]) any_limit = true;
        if (rig->is_helper && rig->is_helper[b]) any_helper = true;
    }
    if (any_limit) {
        ami_jw_object(w, "limits_deg");
        static const size_t shape32[2] = {3, 2};
        for (size_t b = 0; b < rig->bone_count; b++) {
            if (!rig->has_limit[b]) continue;
            double deg[6];
            for (size_t k = 0; k < 6; k++) deg[k] = ami_deg_out(rig->limits[6 * b + k]);
            ami_jw_numbers(w, rig->bone_names[b], deg, 2, shape32);
        }
        ami_jw_close(w);
    }
    if (any_helper) {
        ami_jw_row(w, "helpers");
        for (size_t b = 0; b < rig->bone_count; b++)
            if (rig->is_helper[b]) ami_jw_string(w, NULL, rig->bone_names[b]);
        ami_jw_close(w);
    }
    ami_jw_extra(w, rig->extra_json, rig->model ? ami_rig_written_keys : ami_rig_written_keys_no_model);
    ami_jw_close(w);
}

am_status am_rig_to_json(const am_rig *rig, char **out, am_error *err)
{
    assert(rig && out);
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_rig_to_jw(rig, &w);
    return ami_jw_take_string(&w, out, err);
}

am_status am_rig_write(const am_rig *rig, const char *path, am_error *err)
{
    assert(rig && path);
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_rig_to_jw(rig, &w);
    am_status s = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return s;
}
