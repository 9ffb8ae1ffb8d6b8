/* The seed's showcase: input with detections | the rig in 3/4 | input vs rig through the same
 * (side) camera, one output frame per clip frame. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "render_internal.h"

/* One output frame: the three panel labels, the dividers between the panels, then the sink. */
static am_status ami_showcase_emit(am_raster *out, int PW, int PH, const am_studio *st, const char *const label[3],
                                   ami_sink *sink, am_error *err)
{
    am_raster_clip_all(out);
    for (int k = 0; k < 3; k++) ami_label(out, k * PW + 10, 10, label[k]);
    am_draw_rect(out, PW - 1, 0, PW + 1, PH, st->divider, 1.0);
    am_draw_rect(out, 2 * PW - 1, 0, 2 * PW + 1, PH, st->divider, 1.0);
    return ami_sink_frame(sink, &out->img, err);
}

/* The video closed (or dropped on failure) and the stage ended once every frame went out. */
static am_status ami_showcase_finish(ami_sink *sink, bool open, am_status s, ami_stage *stage, am_error *err)
{
    if (open) {
        if (s == AM_OK) s = ami_sink_close(sink, err);
        else ami_sink_abort(sink);
    }
    if (s == AM_OK) ami_stage_end(stage);
    return s;
}

/* After a retarget: source in 3/4 | result in 3/4 | the source see-through over the result,
 * both through the result's camera (one world: the root scaling and the feet show as they are). */
static am_status ami_showcase_retarget(const am_showcase_job *job, int PW, int PH, am_error *err)
{
    const am_motion *mo = job->motion, *smo = job->source_motion;
    size_t T = mo ? mo->frame_count : 1;
    if (smo && smo->frame_count < T) T = smo->frame_count;
    am_render_job tj = {.model = job->model, .motion = mo, .view = AM_VIEW_THREE_QUARTER, .orbit = job->orbit,
                        .width = PW, .height = PH};
    am_render_job sj = tj;
    sj.model = job->source_model;
    sj.motion = smo;
    am_render_views *tv = NULL, *sv = NULL;
    am_status s = am_render_views_create(&tj, &tv, err);
    if (s == AM_OK) s = am_render_views_create(&sj, &sv, err);
    am_raster p1 = {0}, p2 = {0}, p3 = {0}, out = {0};
    if (s == AM_OK) s = am_raster_init(&p1, PW, PH, err);
    if (s == AM_OK) s = am_raster_init(&p2, PW, PH, err);
    if (s == AM_OK) s = am_raster_init(&p3, PW, PH, err);
    if (s == AM_OK) s = am_raster_init(&out, 3 * PW, PH, err);
    ami_sink sink = {0};
    bool open = false;
    double fps = mo && mo->fps > 0 ? mo->fps : smo && smo->fps > 0 ? smo->fps : 30.0;
    if (s == AM_OK && (s = ami_sink_open(&sink, job->path, 3 * PW, PH, fps, err)) == AM_OK) open = true;
    am_studio st;
    am_studio_default(&st);
    static const uint8_t source_bones[3] = {255, 170, 40};
    am_draw_style over = {.flags = AM_DRAW_MESH | AM_DRAW_BONES, .mesh_alpha = 0.45, .bone_rgb = source_bones};
    ami_stage stage = ami_stage_begin("showcase");
    for (size_t t = 0; s == AM_OK && t < T; t++) {
        if (!ami_progress("showcase", (double)t / (double)T)) {
            s = AM_FAIL(err, AM_E_CANCELLED, "showcase");
            break;
        }
        am_render_views_frame(tv, t, &p2);
        am_camera cam;
        am_render_views_frame_camera(tv, t, &cam);
        size_t n = (size_t)PW * (size_t)PH;
        memcpy(p3.img.rgb, p2.img.rgb, n * 3);
        memcpy(p3.depth, p2.depth, n * sizeof(float));
        am_render_views_frame(sv, t, &p1); /* leaves the source posed at t */
        am_raster_clip_all(&p3);
        am_render_model_draw(job->source_model, &p3, &cam, &over);
        const am_raster *panel[3] = {&p1, &p2, &p3};
        for (int k = 0; k < 3; k++)
            for (int y = 0; y < PH; y++)
                memcpy(out.img.rgb + ((size_t)y * 3 * PW + (size_t)k * PW) * 3, panel[k]->img.rgb + (size_t)y * PW * 3,
                       (size_t)PW * 3);
        char text[64];
        snprintf(text, sizeof text, "source 3/4  %zu", t);
        s = ami_showcase_emit(&out, PW, PH, &st, (const char *const[3]){text, "result 3/4", "source (see-through) vs result"},
                              &sink, err);
    }
    s = ami_showcase_finish(&sink, open, s, &stage, err);
    am_raster_release(&p1);
    am_raster_release(&p2);
    am_raster_release(&p3);
    am_raster_release(&out);
    am_render_views_free(tv);
    am_render_views_free(sv);
    return s;
}

am_status am_showcase_clip(const am_showcase_job *job, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, &job->ctx);
    int PH = job->panel_height > 0 ? job->panel_height : 360;
    PH += PH & 1;
    int PW = (int)lround(PH * 16.0 / 9.0);
    PW += PW & 1;
    if (job->source_model) {
        am_status rs = ami_showcase_retarget(job, PW, PH, err);
        am_scope_leave(&sc, NULL);
        return rs;
    }
    am_layout L;
    if (job->layout) L = *job->layout;
    else am_layout_default(&L);
    const am_rig *rig = am_render_model_rig(job->model);
    const am_det *det = job->det;
    assert(!det || (det->front_uv && det->side_uv && det->front_conf && det->side_conf)); /* a loaded det (io.h) */
    int CW = (int)lround(L.w_front + L.w_side), CH = 720, SW = (int)lround(L.w_side);
    size_t T = job->motion ? job->motion->frame_count : 1;
    if (det && det->frame_count < T) T = det->frame_count;
    am_status s = AM_OK;
    am_camera front, side;
    s = ami_layout_cameras(&L, &front, &side, err);
    side.K[2] -= L.w_front; /* the side half alone */
    am_render_job pj = {.model = job->model, .motion = job->motion, .view = AM_VIEW_THREE_QUARTER, .layout = &L,
                        .orbit = job->orbit, .width = PW, .height = PH};
    am_render_views *persp = NULL;
    if (s == AM_OK) s = am_render_views_create(&pj, &persp, err);
    am_video_reader *vr = NULL;
    am_video_info vi = {0};
    double A[6] = {1, 0, 0, 0, 1, 0};
    if (s == AM_OK && job->video) {
        s = am_video_reader_open(job->video, &vr, &vi, err);
        if (s == AM_OK)
            s = am_clip_affine(&vi, job->calib ? job->calib : det && det->has_calib ? det->calib : NULL, CW, CH,
                                job->video, A, err);
    }
    am_raster canvas = {0}, sidev = {0}, p3 = {0}, out = {0};
    am_image clip = {0};
    double *pose = am_alloc_array(rig->bone_count * 16, sizeof(double));
    if (s == AM_OK && !pose) s = AM_FAIL(err, AM_E_NOMEM, "showcase");
    if (s == AM_OK) s = am_raster_init(&canvas, CW, CH, err);
    if (s == AM_OK) s = am_raster_init(&sidev, SW, CH, err);
    if (s == AM_OK) s = am_raster_init(&p3, PW, PH, err);
    if (s == AM_OK) s = am_raster_init(&out, 3 * PW, PH, err);
    ami_sink sink = {0};
    bool open = false;
    double fps = det && det->fps > 0 ? det->fps : job->motion && job->motion->fps > 0 ? job->motion->fps : 30.0;
    if (s == AM_OK && (s = ami_sink_open(&sink, job->path, 3 * PW, PH, fps, err)) == AM_OK) open = true;
    am_studio st;
    am_studio_default(&st);
    ami_stage stage = ami_stage_begin("showcase");
    for (size_t t = 0; s == AM_OK && t < T; t++) {
        if (!ami_progress("showcase", (double)t / (double)T)) {
            s = AM_FAIL(err, AM_E_CANCELLED, "showcase");
            break;
        }
        /* the input on the canvas */
        ami_layout_backdrop(&canvas, &L, &st);
        bool have_clip = false;
        if (vr) {
            am_status rs = ami_clip_next(&vr, &clip, err);
            if (rs == AM_OK) {
                ami_image_warp(&clip, A, &canvas, 0, 0, CW, CH, 0.0, 1.0);
                have_clip = true;
            } else if (rs != AM_E_EMPTY) {
                s = rs;
                break;
            }
        }
        /* panel 3 first: the side half of the input (before the detections are drawn on it) */
        ami_layout_backdrop(&sidev, &(am_layout){.w_front = 0, .w_side = SW, .ground_v = L.ground_v}, &st);
        if (have_clip) {
            for (int y = 0; y < CH; y++)
                memcpy(sidev.img.rgb + (size_t)y * SW * 3, canvas.img.rgb + ((size_t)y * CW + (size_t)lround(L.w_front)) * 3,
                       (size_t)SW * 3);
        } else {
            am_raster_clip_all(&sidev);
            am_render_backdrop(&sidev, &side, &st);
        }
        if (job->motion) am_motion_pose(rig, job->motion, t, pose);
        else am_rig_rest_pose(rig, pose);
        am_render_model_pose(job->model, pose);
        am_raster_clip_all(&sidev);
        am_draw_style ms = {.flags = AM_DRAW_MESH | AM_DRAW_BONES, .mesh_alpha = have_clip ? 0.55 : 1.0};
        am_render_model_draw(job->model, &sidev, &side, &ms);
        /* panel 1: detections on the input */
        for (size_t v = 0; det && v < 2; v++) {
            int x0 = v == 0 ? 0 : (int)lround(L.w_front), x1 = v == 0 ? (int)lround(L.w_front) : CW;
            am_raster_clip(&canvas, x0, 0, x1, CH);
            size_t J = det->joint_count;
            const float *uv = (v == 0 ? det->front_uv : det->side_uv) + t * J * 2;
            const float *cf = (v == 0 ? det->front_conf : det->side_conf) + t * J;
            for (size_t j = 0; j < J; j++) {
                if (!(cf[j] > 0) || !isfinite(uv[2 * j])) continue;
                uint8_t c[3];
                am_conf_colour(cf[j], c);
                am_draw_disc(&canvas, uv[2 * j], uv[2 * j + 1], 5.0, 0, c, 1.0);
            }
        }
        am_raster_clip_all(&canvas);
        am_image_fill(&out.img, st.divider);
        ami_image_blit_scaled(&canvas.img, &out.img, 0, (PH - (int)lround(PW * (double)CH / CW)) / 2, PW,
                              (int)lround(PW * (double)CH / CW));
        /* panel 2: the rig in 3/4 */
        am_render_views_frame(persp, t, &p3);
        for (int y = 0; y < PH; y++) memcpy(out.img.rgb + ((size_t)y * 3 * PW + PW) * 3, p3.img.rgb + (size_t)y * PW * 3, (size_t)PW * 3);
        int w3 = (int)lround(PH * (double)SW / CH);
        ami_image_blit_scaled(&sidev.img, &out.img, 2 * PW + (PW - w3) / 2, 0, w3, PH);
        char text[64];
        snprintf(text, sizeof text, "rig 3/4  %zu", t);
        s = ami_showcase_emit(&out, PW, PH, &st,
                              (const char *const[3]){det ? "input + detections" : "input", text,
                                                     have_clip ? "input vs rig (side)" : "rig (side)"},
                              &sink, err);
    }
    s = ami_showcase_finish(&sink, open, s, &stage, err);
    am_video_reader_close(vr);
    am_image_release(&clip);
    am_raster_release(&canvas);
    am_raster_release(&sidev);
    am_raster_release(&p3);
    am_raster_release(&out);
    am_render_views_free(persp);
    am_free(pose);
    am_scope_leave(&sc, NULL);
    return s;
}
