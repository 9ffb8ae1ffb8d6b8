/* creature.json (SPEC 3.1): the two-view layout, feet and contacts of a creature. */
#include "anymove/io.h"
#include "io/json_internal.h"
#include "core/internal.h"

#include <math.h>
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
    json_t *v = NULL;
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

static am_status ami_creature_from_doc(const json_t *doc, am_creature **out, am_error *err)
{
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
    json_t *doc = NULL;
    am_status s = ami_json_parse(text, len, source, &doc, err);
    if (s == AM_OK) s = ami_creature_from_doc(doc, out, err);
    json_decref(doc);
    if (s != AM_OK) am_error_set_file(err, source);
    return s;
}

am_status am_creature_load(const char *path, am_creature **out, am_error *err)
{
    *out = NULL;
    json_t *doc = NULL;
    am_status s = ami_json_load_file(path, AMI_CREATURE_MAX_BYTES, &doc, err);
    if (s == AM_OK) s = ami_creature_from_doc(doc, out, err);
    json_decref(doc);
    if (s != AM_OK) am_error_set_file(err, path);
    return s;
}
