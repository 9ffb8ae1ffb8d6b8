/* creature.json (SPEC 3.1): the two-view layout, feet and contacts of a creature, and what
 * `bind` reads (the seed's keys): prep (length_m, rotz_deg, axis), paint (limb groups: colour +
 * bones) and rigid. */
#include "anymove/io.h"
#include "io/json_internal.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define AMI_CREATURE_MAX_BYTES ((size_t)16 << 20)

void am_layout_default(am_layout *layout)
{
    layout->w_front = 420;
    layout->w_side = 860;
    layout->ground_v = 650;
    layout->m_per_px = 1.9 / 720;
    layout->front_cx = layout->w_front / 2;
    layout->side_cx = layout->w_front + layout->w_side / 2;
}

void am_creature_free(am_creature *c)
{
    if (!c) return;
    am_free(c->name);
    ami_strings_free(c->feet, c->feet_count);
    ami_strings_free(c->contacts, c->contact_count);
    for (size_t i = 0; i < c->paint_count; i++) {
        am_free(c->paint[i].name);
        ami_strings_free(c->paint[i].bones, c->paint[i].bone_count);
    }
    am_free(c->paint);
    am_free(c);
}

static am_status ami_layout_parse(const json_t *doc, am_layout *lay, am_error *err)
{
    am_layout_default(lay);
    json_t *lv = NULL;
    AMI_TRY(ami_json_member(doc, "", "layout", false, &lv, err));
    if (!lv) return AM_OK;
    AMI_TRY(ami_json_expect(lv, JSON_OBJECT, "layout", err));
    /* NaN marks "not given": the centres default from the widths the file did give. */
    double fcx = NAN, scx = NAN;
    AMI_TRY(ami_json_get_number(lv, "layout", "W_FRONT", false, &lay->w_front, err));
    AMI_TRY(ami_json_get_number(lv, "layout", "W_SIDE", false, &lay->w_side, err));
    AMI_TRY(ami_json_get_number(lv, "layout", "GROUND_V", false, &lay->ground_v, err));
    AMI_TRY(ami_json_get_number(lv, "layout", "M_PER_PX", false, &lay->m_per_px, err));
    AMI_TRY(ami_json_get_number(lv, "layout", "FRONT_CX", false, &fcx, err));
    AMI_TRY(ami_json_get_number(lv, "layout", "SIDE_CX", false, &scx, err));
    AMI_CHECK(err, lay->w_front > 0, AM_E_VALUE, "layout.W_FRONT: must be > 0, got %g",
              lay->w_front);
    AMI_CHECK(err, lay->w_side > 0, AM_E_VALUE, "layout.W_SIDE: must be > 0, got %g",
              lay->w_side);
    AMI_CHECK(err, lay->m_per_px > 0, AM_E_VALUE, "layout.M_PER_PX: must be > 0, got %g",
              lay->m_per_px);
    lay->front_cx = isnan(fcx) ? lay->w_front / 2 : fcx;
    lay->side_cx = isnan(scx) ? lay->w_front + lay->w_side / 2 : scx;
    /* Absurd widths (1e308) can overflow the derived centre; refuse rather than carry inf. */
    AMI_CHECK(err, isfinite(lay->side_cx), AM_E_NONFINITE,
              "layout.SIDE_CX: W_FRONT + W_SIDE / 2 overflows");
    return AM_OK;
}

static am_status ami_prep_parse(const json_t *doc, am_creature *c, am_error *err)
{
    json_t *pv = NULL;
    AMI_TRY(ami_json_member(doc, "", "prep", false, &pv, err));
    c->prep.axis = 1;
    if (!pv) return AM_OK;
    AMI_TRY(ami_json_expect(pv, JSON_OBJECT, "prep", err));
    c->has_prep = true;
    AMI_TRY(ami_json_get_number(pv, "prep", "length_m", false, &c->prep.length_m, err));
    AMI_TRY(ami_json_get_number(pv, "prep", "rotz_deg", false, &c->prep.rotz_deg, err));
    AMI_CHECK(err, c->prep.length_m >= 0, AM_E_VALUE, "prep.length_m: must be >= 0 (0 keeps the size), got %g",
              c->prep.length_m);
    const char *axis = NULL;
    AMI_TRY(ami_json_get_string(pv, "prep", "axis", false, &axis, err));
    if (axis) {
        const char *a = axis[0] == '+' || axis[0] == '-' ? axis + 1 : axis;
        AMI_CHECK(err, (a[0] == 'x' || a[0] == 'y' || a[0] == 'z' || a[0] == 'X' || a[0] == 'Y' || a[0] == 'Z') &&
                           a[1] == '\0',
                  AM_E_VALUE, "prep.axis: expected \"x\", \"y\" or \"z\", got \"%s\"", axis);
        c->prep.axis = (a[0] | 0x20) - 'x';
    }
    return AM_OK;
}

/* "#rrggbb", or [r, g, b(, a)] in [0, 1], or [r, g, b(, a)] as 0..255 integers (a triple with
 * any component above 1 is read as 0..255: the two spellings artists write). */
static am_status ami_paint_color(const json_t *v, const char *path, float rgba[4], am_error *err)
{
    rgba[3] = 1.0f;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        unsigned r, g, b;
        char tail;
        AMI_CHECK(err, strlen(s) == 7 && sscanf(s, "#%2x%2x%2x%c", &r, &g, &b, &tail) == 3, AM_E_VALUE,
                  "%s: expected \"#rrggbb\", got \"%s\"", path, s);
        rgba[0] = (float)r / 255.0f, rgba[1] = (float)g / 255.0f, rgba[2] = (float)b / 255.0f;
        return AM_OK;
    }
    size_t n = json_array_size(v);
    AMI_CHECK(err, json_is_array(v) && (n == 3 || n == 4), AM_E_SCHEMA,
              "%s: expected \"#rrggbb\" or [r, g, b] (0..1 or 0..255), got %s", path, ami_json_type_name(v));
    double x[4];
    bool bytes = false;
    for (size_t k = 0; k < n; k++) {
        AMI_TRY(ami_json_number(json_array_get(v, k), ami_json_path_index(path, k).s, &x[k], err));
        if (x[k] > 1.0) bytes = true;
    }
    for (size_t k = 0; k < n; k++) {
        double c = bytes ? x[k] / 255.0 : x[k];
        AMI_CHECK(err, c >= 0 && c <= 1, AM_E_VALUE, "%s[%zu]: colour components are in [0, 1] (or 0..255), got %g", path,
                  k, x[k]);
        rgba[k] = (float)c;
    }
    return AM_OK;
}

static am_status ami_paint_group(const json_t *g, const char *key, size_t i, am_paint_group *pg, am_error *err)
{
    ami_jpath path = key ? ami_json_path_key("paint", key) : ami_json_path_index("paint", i);
    AMI_TRY(ami_json_expect(g, JSON_OBJECT, path.s, err));
    const char *name = key;
    if (!name) AMI_TRY(ami_json_get_string(g, path.s, "name", false, &name, err));
    pg->name = am_strdup(name ? name : path.s);
    AMI_CHECK(err, pg->name, AM_E_NOMEM, "paint");
    json_t *v = NULL;
    const char *ckey = json_object_get(g, "colour") ? "colour" : "color"; /* either spelling */
    AMI_TRY(ami_json_member(g, path.s, ckey, true, &v, err));
    AMI_TRY(ami_paint_color(v, ami_json_path_key(path.s, ckey).s, pg->color, err));
    AMI_TRY(ami_json_member(g, path.s, "bones", true, &v, err));
    return ami_json_strings(v, ami_json_path_key(path.s, "bones").s, &pg->bones, &pg->bone_count, err);
}

/* "paint": {"<group>": {"color": ..., "bones": [...]}} or [{"name", "color", "bones"}]. */
static am_status ami_paint_parse(const json_t *doc, am_creature *c, am_error *err)
{
    json_t *pv = NULL;
    AMI_TRY(ami_json_member(doc, "", "paint", false, &pv, err));
    if (!pv) return AM_OK;
    AMI_CHECK(err, json_is_object(pv) || json_is_array(pv), AM_E_SCHEMA,
              "paint: expected an object of groups or an array, got %s", ami_json_type_name(pv));
    size_t n = json_is_object(pv) ? json_object_size(pv) : json_array_size(pv);
    if (!n) return AM_OK;
    c->paint = am_alloc_array(n, sizeof *c->paint);
    AMI_CHECK(err, c->paint, AM_E_NOMEM, "paint");
    if (json_is_array(pv)) {
        for (size_t i = 0; i < n; i++) {
            c->paint_count = i + 1;
            AMI_TRY(ami_paint_group(json_array_get(pv, i), NULL, i, &c->paint[i], err));
        }
        return AM_OK;
    }
    const char *key;
    json_t *g;
    size_t i = 0;
    json_object_foreach((json_t *)pv, key, g) {
        c->paint_count = i + 1;
        AMI_TRY(ami_paint_group(g, key, i, &c->paint[i], err));
        i++;
    }
    return AM_OK;
}

static am_status ami_creature_fill(const json_t *doc, am_creature *c, am_error *err)
{
    AMI_TRY(ami_json_expect(doc, JSON_OBJECT, "", err));
    const char *name = NULL;
    AMI_TRY(ami_json_get_string(doc, "", "name", false, &name, err));
    if (name) {
        c->name = am_strdup(name);
        AMI_CHECK(err, c->name, AM_E_NOMEM, "name");
    }
    AMI_TRY(ami_layout_parse(doc, &c->layout, err));
    AMI_TRY(ami_prep_parse(doc, c, err));
    AMI_TRY(ami_paint_parse(doc, c, err));
    json_t *v = NULL;
    AMI_TRY(ami_json_member(doc, "", "rigid", false, &v, err));
    if (v) {
        AMI_CHECK(err, json_is_boolean(v), AM_E_SCHEMA, "rigid: expected true or false, got %s", ami_json_type_name(v));
        c->rigid = json_is_true(v);
    }
    AMI_TRY(ami_json_member(doc, "", "feet", false, &v, err));
    if (v) AMI_TRY(ami_json_strings(v, "feet", &c->feet, &c->feet_count, err));
    AMI_TRY(ami_json_member(doc, "", "contacts", false, &v, err));
    if (v) return ami_json_strings(v, "contacts", &c->contacts, &c->contact_count, err);
    /* SPEC 3.1: the joints that may plant default to the feet. */
    if (c->feet_count == 0) return AM_OK;
    c->contacts = am_alloc_array(c->feet_count, sizeof *c->contacts);
    AMI_CHECK(err, c->contacts, AM_E_NOMEM, "contacts");
    for (size_t i = 0; i < c->feet_count; i++) {
        c->contacts[i] = am_strdup(c->feet[i]);
        if (!c->contacts[i]) {
            ami_strings_free(c->contacts, i);
            c->contacts = NULL;
            return AM_FAIL(err, AM_E_NOMEM, "contacts");
        }
    }
    c->contact_count = c->feet_count;
    return AM_OK;
}

/* An ami_json_reader: out is an am_creature **. */
static am_status ami_creature_from_doc(const json_t *doc, const void *user, void *out_, am_error *err)
{
    (void)user;
    am_creature **out = out_;
    am_creature *c = am_alloc(sizeof *c);
    AMI_CHECK(err, c, AM_E_NOMEM, "creature");
    am_status s = ami_creature_fill(doc, c, err);
    if (s != AM_OK) {
        am_creature_free(c);
        return s;
    }
    *out = c;
    return AM_OK;
}

am_status am_creature_parse(const char *text, size_t len, const char *source, am_creature **out,
                            am_error *err)
{
    *out = NULL;
    return ami_json_parse_into(text, len, source, ami_creature_from_doc, NULL, out, err);
}

am_status am_creature_load(const char *path, am_creature **out, am_error *err)
{
    *out = NULL;
    return ami_json_load_into(path, AMI_CREATURE_MAX_BYTES, ami_creature_from_doc, NULL, out, err);
}
