/* A pipeline result's pictures (render.h am_pictures): the report page and the middle-frame
 * renders the CLI's --report / --render write, here so every caller of the library (the Python
 * binding) writes the same files through the same code. */
#include <math.h>
#include <string.h>

#include "anymove/render.h"
#include "core/internal.h"
#include "io/json_internal.h"

/* The feet to plot: the creature's, else the ones motion.json's sync scored. */
static char **ami_feet(const am_creature *cr, const am_motion *mo, size_t *count)
{
    *count = 0;
    if (cr && cr->feet_count) {
        char **f = am_alloc_array(cr->feet_count, sizeof *f);
        for (size_t i = 0; f && i < cr->feet_count; i++) f[(*count)++] = am_strdup(cr->feet[i]);
        return f;
    }
    json_t *doc = NULL;
    am_error e = {0};
    if (!mo->extra_json || ami_json_parse(mo->extra_json, strlen(mo->extra_json), "motion.json", &doc, &e) != AM_OK) return NULL;
    json_t *pa = json_object_get(json_object_get(doc, "sync"), "paw_agreement");
    char **f = pa ? am_alloc_array(json_object_size(pa) + 1, sizeof *f) : NULL;
    const char *key;
    json_t *v;
    if (f) json_object_foreach(pa, key, v) if (strcmp(key, "score") != 0) f[(*count)++] = am_strdup(key);
    json_decref(doc);
    return f;
}

am_status am_pictures_report(const am_pictures *p, const char *glb_path, const char *html_path,
                              const char *script_path, am_error *err)
{
    const char *three_dir = p->three_dir;
    char *glb = NULL;
    size_t glb_len = 0;
    if (glb_path && glb_path[0]) AMI_TRY(am_file_read(glb_path, 0, &glb, &glb_len, err));
    size_t feet_count = 0;
    char **feet = p->rig ? ami_feet(p->creature, p->motion, &feet_count) : NULL;
    am_report_job job = {.title = p->title, .rig = p->rig, .motion = p->motion, .points = p->points, .edges = p->edges,
                         .edge_count = p->edge_count, .det = p->det, .mdet = p->mdet,
                         .cameras = p->cameras, .layout = p->creature ? &p->creature->layout : NULL,
                         .feet = (const char *const *)feet, .feet_count = feet_count, .truth_joints = p->truth,
                         .gate_text = p->gate_text, .glb = glb, .glb_len = glb_len, .three_dir = three_dir,
                         .html_path = html_path, .script_path = three_dir ? script_path : NULL, .ctx = p->ctx};
    am_status s = am_report_write(&job, err);
    ami_strings_free(feet, feet_count);
    am_free(glb);
    return s;
}

void am_pictures_names(const am_pictures *p, const char **names, size_t *count)
{
    if (p->report) names[(*count)++] = "report.html", names[(*count)++] = "report_three.js";
    if (p->render && p->points_only) names[(*count)++] = "render_cameras.png";
    else if (p->render)
        names[(*count)++] = p->through_cameras ? "render_cameras.png" : "render_layout.png", names[(*count)++] = "render_three_quarter.png";
}

/* SPEC 3's canvas framed on frame f: one scale for both views, the joints' box in the middle
 * 80 % (the box over a whole walk would leave the creature a few pixels tall), the ground
 * z = 0 on the floor row unless a joint is below it. */
static void ami_framed_layout(const am_rig *rig, const am_motion *mo, size_t f, am_layout *L)
{
    am_layout_default(L);
    size_t J = rig->joint_count;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = f * J; mo->joints && i < (f + 1) * J; i++)
        for (int c = 0; c < 3; c++) lo[c] = fmin(lo[c], mo->joints[i * 3 + c]), hi[c] = fmax(hi[c], mo->joints[i * 3 + c]);
    if (!(hi[0] >= lo[0] && hi[1] >= lo[1] && hi[2] >= lo[2])) return;
    lo[2] = fmin(lo[2], 0.0);
    const double H = 720;
    double m = fmax(fmax((hi[0] - lo[0]) / (0.8 * L->w_front), (hi[1] - lo[1]) / (0.8 * L->w_side)), (hi[2] - lo[2]) / (0.8 * H));
    if (!(m > 0)) return;
    L->m_per_px = m;
    L->front_cx = L->w_front / 2 - 0.5 * (lo[0] + hi[0]) / m;
    L->side_cx = L->w_front + L->w_side / 2 + 0.5 * (lo[1] + hi[1]) / m;
    L->ground_v = 0.9 * H + lo[2] / m;
}

am_status am_pictures_write(const am_pictures *p, am_outset *set, am_error *err)
{
    if (p->report)
        AMI_TRY(am_pictures_report(p, p->glb ? am_outset_path(set, p->glb) : p->glb_path, am_outset_path(set, "report.html"),
                                   am_outset_path(set, "report_three.js"), err));
    if (!p->render) return AM_OK;
    if (p->points) {
        /* no rig to draw: the middle frame's detections with the points reprojected */
        am_overlay_job ov = {.mdet = p->mdet, .cameras = p->cameras, .points = p->points, .edges = p->edges,
                             .edge_count = p->edge_count, .first = p->points->frame_count / 2, .count = 1,
                             .path = am_outset_path(set, "render_cameras.png"), .ctx = p->ctx};
        return am_overlay_clip(&ov, err);
    }
    am_render_model *model = NULL;
    AMI_TRY(p->mesh_doc ? am_render_model_from_gltf(p->mesh_doc, p->rig, &model, err)
                        : am_render_model_create(p->rig, p->mesh, &model, err));
    am_status s = AM_OK;
    am_layout framed;
    if (p->frame_layout) ami_framed_layout(p->rig, p->motion, p->motion->frame_count / 2, &framed);
    for (int view = 0; s == AM_OK && view < 2; view++) {
        am_view first = p->through_cameras ? AM_VIEW_CAMERAS : AM_VIEW_LAYOUT;
        am_render_job job = {.model = model, .motion = p->motion, .view = view == 0 ? first : AM_VIEW_THREE_QUARTER,
                             .cameras = p->cameras,
                             .layout = p->frame_layout ? &framed : p->creature ? &p->creature->layout : NULL, .first = p->motion->frame_count / 2,
                             .count = 1, .style = {.flags = AM_DRAW_MESH | AM_DRAW_JOINTS},
                             .path = am_outset_path(set, view == 1 ? "render_three_quarter.png" : p->through_cameras ? "render_cameras.png"
                                                                                                     : "render_layout.png"),
                             .ctx = p->ctx};
        s = am_render_clip(&job, err);
    }
    am_render_model_free(model);
    return s;
}
