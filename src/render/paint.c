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

/* The groups come from the one creature.json reader (io.h: "#rrggbb", 0..1 or 0..255, "color" or
 * "colour"); here they are only resolved against the rig being drawn. */
am_status am_paint_load(const char *creature_path, const am_rig *rig, am_paint *out, am_error *err)
{
    memset(out, 0, sizeof *out);
    am_creature *c = NULL;
    AMI_TRY(am_creature_load(creature_path, &c, err));
    am_status s = AM_OK;
    if (c->paint_count) {
        out->colour = am_alloc_array(rig->bone_count * 3, 1);
        out->painted = am_alloc_array(rig->bone_count, 1);
        if (!out->colour || !out->painted) s = AM_FAIL(err, AM_E_NOMEM, "paint");
    }
    for (size_t i = 0; s == AM_OK && i < c->paint_count; i++) {
        const am_paint_group *g = &c->paint[i];
        uint8_t rgb[3];
        for (int k = 0; k < 3; k++) rgb[k] = (uint8_t)lround(255.0 * g->color[k]);
        for (size_t j = 0; j < g->bone_count; j++) {
            int bi = am_rig_find_bone(rig, g->bones[j]);
            if (bi < 0) {
                ami_warn(AM_WARN_IGNORED_NAME, "paint: bone '%s' is not in the rig", g->bones[j]);
                continue;
            }
            memcpy(out->colour + (size_t)bi * 3, rgb, 3);
            if (!out->painted[bi]) out->painted_count++;
            out->painted[bi] = 1;
        }
    }
    am_creature_free(c);
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
