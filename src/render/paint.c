/* creature.json's limb paint and showcase camera (keys SPEC 3.1 leaves to the tools). */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "io/json_internal.h"
#include "render_internal.h"

void am_paint_free(am_paint *p)
{
    if (!p) return;
    am_free(p->colour);
    am_free(p->painted);
    memset(p, 0, sizeof *p);
}

/* [r, g, b] as 0..255 integers or 0..1 reals (all three at most 1 means reals). */
static am_status ami_colour(const json_t *v, const char *path, uint8_t rgb[3], am_error *err)
{
    double c[3];
    AMI_TRY(ami_json_numbers(v, path, 1, (const size_t[1]){3}, c, err));
    bool unit = c[0] <= 1.0 && c[1] <= 1.0 && c[2] <= 1.0;
    for (int k = 0; k < 3; k++) {
        double x = unit ? c[k] * 255.0 : c[k];
        AMI_CHECK(err, x >= 0 && x <= 255.0, AM_E_VALUE, "%s[%d]: a colour channel is 0..255 (or 0..1), got %g", path, k,
                  c[k]);
        rgb[k] = (uint8_t)lround(x);
    }
    return AM_OK;
}

static am_status ami_paint_group(const json_t *g, const char *path, const am_rig *rig, am_paint *p, am_error *err)
{
    AMI_TRY(ami_json_expect(g, JSON_OBJECT, path, err));
    json_t *col = NULL, *bones = NULL;
    AMI_TRY(ami_json_member(g, path, "colour", false, &col, err));
    if (!col) AMI_TRY(ami_json_member(g, path, "color", true, &col, err));
    AMI_TRY(ami_json_member(g, path, "bones", true, &bones, err));
    uint8_t rgb[3];
    AMI_TRY(ami_colour(col, ami_json_path_key(path, json_object_get(g, "colour") ? "colour" : "color").s, rgb, err));
    ami_jpath bp = ami_json_path_key(path, "bones");
    AMI_TRY(ami_json_expect(bones, JSON_ARRAY, bp.s, err));
    for (size_t i = 0; i < json_array_size(bones); i++) {
        const char *name = NULL;
        AMI_TRY(ami_json_string(json_array_get(bones, i), ami_json_path_index(bp.s, i).s, &name, err));
        int b = am_rig_find_bone(rig, name);
        if (b < 0) {
            ami_warn(AM_WARN_IGNORED_NAME, "paint: bone '%s' is not in the rig", name);
            continue;
        }
        memcpy(p->colour + (size_t)b * 3, rgb, 3);
        if (!p->painted[b]) p->painted_count++;
        p->painted[b] = 1;
    }
    return AM_OK;
}

am_status am_paint_load(const char *creature_path, const am_rig *rig, am_paint *out, am_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    AMI_TRY(ami_json_load_file(creature_path, 0, &doc, err));
    json_t *paint = NULL;
    am_status s = ami_json_member(doc, "", "paint", false, &paint, err);
    if (s == AM_OK && paint) {
        out->colour = am_alloc_array(rig->bone_count * 3, 1);
        out->painted = am_alloc_array(rig->bone_count, 1);
        if (!out->colour || !out->painted) s = AM_FAIL(err, AM_E_NOMEM, "paint");
        if (s == AM_OK && json_is_array(paint)) {
            for (size_t i = 0; s == AM_OK && i < json_array_size(paint); i++)
                s = ami_paint_group(json_array_get(paint, i), ami_json_path_index("paint", i).s, rig, out, err);
        } else if (s == AM_OK && json_is_object(paint)) {
            const char *key;
            json_t *g;
            json_object_foreach(paint, key, g) {
                if (s != AM_OK) break;
                s = ami_paint_group(g, ami_json_path_key("paint", key).s, rig, out, err);
            }
        } else if (s == AM_OK) {
            s = AM_FAIL(err, AM_E_SCHEMA, "paint: expected an array or an object of groups, got %s", ami_json_type_name(paint));
        }
    }
    json_decref(doc);
    if (s != AM_OK) {
        am_paint_free(out);
        am_error_set_file(err, creature_path);
    }
    return s;
}

am_status am_orbit_load(const char *creature_path, am_orbit *orbit, am_error *err)
{
    json_t *doc = NULL;
    AMI_TRY(ami_json_load_file(creature_path, 0, &doc, err));
    json_t *cam = NULL;
    am_status s = ami_json_member(doc, "", "showcase_camera", false, &cam, err);
    if (s == AM_OK && cam) s = ami_json_expect(cam, JSON_OBJECT, "showcase_camera", err);
    if (s == AM_OK && cam) s = ami_json_get_number(cam, "showcase_camera", "azimuth_deg", false, &orbit->azimuth_deg, err);
    if (s == AM_OK && cam)
        s = ami_json_get_number(cam, "showcase_camera", "elevation_deg", false, &orbit->elevation_deg, err);
    if (s == AM_OK && cam) s = ami_json_get_number(cam, "showcase_camera", "fov_deg", false, &orbit->fov_deg, err);
    if (s == AM_OK && cam && !(orbit->fov_deg >= 0 && orbit->fov_deg < 170))
        s = AM_FAIL(err, AM_E_VALUE, "showcase_camera.fov_deg: %g is not in (0, 170)", orbit->fov_deg);
    json_decref(doc);
    if (s != AM_OK) am_error_set_file(err, creature_path);
    return s;
}

void am_conf_colour(double conf, uint8_t rgb[3])
{
    double c = conf != conf ? 0.0 : conf < 0 ? 0 : conf > 1 ? 1 : conf;
    /* red -> yellow -> green */
    double r = c < 0.5 ? 1.0 : 2.0 - 2.0 * c, g = c < 0.5 ? 2.0 * c : 1.0;
    rgb[0] = (uint8_t)lround(40 + 215 * r);
    rgb[1] = (uint8_t)lround(40 + 200 * g);
    rgb[2] = 50;
}
