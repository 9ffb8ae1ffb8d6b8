/* The overlay: detections and the fitted rig drawn over the clip (or the studio), with the
 * frame's reprojection error in each view's corner; a grid of views for N cameras. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "render_internal.h"

static const uint8_t ami_white[3] = {255, 255, 255}, ami_black[3] = {20, 20, 24};

void ami_layout_backdrop(am_raster *r, const am_layout *L, const am_studio *st)
{
    int W = r->img.width, gv = (int)ceil(L->ground_v - 0.5), split = (int)lround(L->w_front);
    for (int y = 0; y < r->img.height; y++)
        for (int x = 0; x < W; x++) memcpy(r->img.rgb + ((size_t)y * W + x) * 3, y >= gv ? st->floor : st->wall, 3);
    r->clip[0] = r->clip[1] = 0, r->clip[2] = W, r->clip[3] = r->img.height;
    am_draw_rect(r, split - 1, 0, split + 1, r->img.height, st->divider, 1.0);
}

am_status am_clip_affine(const am_video_info *vi, const double *calib, int cw, int ch, const char *video, double A[6],
                          am_error *err)
{
    if (calib) {
        memcpy(A, calib, 6 * sizeof *A);
        AMI_CHECK(err, fabs(A[0] * A[4] - A[1] * A[3]) > 1e-9, AM_E_VALUE, "calib: the affine is singular");
        return AM_OK;
    }
    if (vi->width == cw && vi->height == ch) {
        double I[6] = {1, 0, 0, 0, 1, 0};
        memcpy(A, I, sizeof I);
        return AM_OK;
    }
    /* a clip resized as a whole (same aspect) is a plain stretch; anything else needs a calib */
    double ar = (double)vi->width / vi->height, car = (double)cw / ch;
    if (fabs(ar / car - 1.0) > 0.01)
        return AM_FAIL_AT(err, AM_E_SHAPE, video, 0, 0,
                          "the clip is %d x %d and the canvas %d x %d: a different shape, and no calib (det.npz "
                          "'calib' or --calib) says how it maps",
                          vi->width, vi->height, cw, ch);
    double S[6] = {(double)cw / vi->width, 0, 0, 0, (double)ch / vi->height, 0};
    memcpy(A, S, sizeof S);
    return AM_OK;
}

/* Mean pixel distance between the seen detections and the rig's joints of one view. */
static double ami_view_error(const float *uv, const float *conf, const double *proj, const int32_t *joint, size_t J)
{
    double sum = 0;
    size_t n = 0;
    for (size_t j = 0; j < J; j++) {
        if (joint[j] < 0 || !(conf[j] > 0) || !isfinite(uv[2 * j]) || !isfinite(proj[2 * joint[j]])) continue;
        sum += hypot(uv[2 * j] - proj[2 * joint[j]], uv[2 * j + 1] - proj[2 * joint[j] + 1]);
        n++;
    }
    return n ? sum / (double)n : NAN;
}

void ami_draw_rig_2d(am_raster *r, const am_rig *rig, const am_camera *cam, const double *pose, double *uv,
                     double scale, double du, double dv)
{
    double *heads = uv + rig->joint_count * 2, *tails = heads + rig->bone_count * 3;
    am_rig_bone_ends(rig, pose, heads, tails);
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->is_helper[b]) continue;
        double a[2], c[2];
        am_camera_project(cam, heads + b * 3, a, NULL);
        am_camera_project(cam, tails + b * 3, c, NULL);
        am_draw_line(r, a[0] * scale + du, a[1] * scale + dv, c[0] * scale + du, c[1] * scale + dv, 2.0, ami_white, 0.85);
    }
}

/* Text with a dark box behind it, for legibility on any clip. */
void ami_label(am_raster *r, int x, int y, const char *text)
{
    int w = am_text_width(text, 2);
    am_draw_rect(r, x - 4, y - 4, x + w + 4, y + 14 + 4, ami_black, 0.6);
    am_draw_text(r, x, y, 2, text, ami_white);
}

static am_status ami_overlay_two_view(const am_overlay_job *job, am_error *err)
{
    const am_det *det = job->det;
    assert(det->front_uv && det->side_uv && det->front_conf && det->side_conf); /* a loaded det (io.h) */
    am_layout L;
    if (job->layout) L = *job->layout;
    else am_layout_default(&L);
    int W = (int)lround(L.w_front + L.w_side), H = 720;
    size_t T = det->frame_count, J = det->joint_count;
    const am_rig *rig = job->motion ? job->rig : NULL;
    am_status s = AM_OK;
    am_camera cam[2];
    s = ami_layout_cameras(&L, &cam[0], &cam[1], err);
    am_video_reader *vr = NULL;
    am_video_info vi = {0};
    double A[6] = {1, 0, 0, 0, 1, 0};
    if (s == AM_OK && job->video) {
        s = am_video_reader_open(job->video, &vr, &vi, err);
        if (s == AM_OK) s = am_clip_affine(&vi, job->calib ? job->calib : det->has_calib ? det->calib : NULL, W, H,
                                            job->video, A, err);
    }
    /* the rig's joint of each detected joint */
    int32_t *joint = am_alloc_array(J + 1, sizeof(int32_t));
    size_t B = rig ? rig->bone_count : 0, RJ = rig ? rig->joint_count : 0;
    double *pose = am_alloc_array(B * 16 + RJ * 3 + 1, sizeof(double));
    double *proj = am_alloc_array(RJ * 4 + RJ * 2 + B * 6 + 1, sizeof(double));
    if (s == AM_OK && (!joint || !pose || !proj)) s = AM_FAIL(err, AM_E_NOMEM, "overlay");
    for (size_t j = 0; s == AM_OK && j < J; j++) joint[j] = rig ? am_rig_find_joint(rig, det->names[j]) : -1;
    am_raster r = {0};
    am_image clip = {0};
    ami_sink sink = {0};
    bool open = false;
    double fps = job->fps > 0 ? job->fps : det->fps > 0 ? det->fps : 30.0;
    if (s == AM_OK) s = am_raster_init(&r, W, H, err);
    if (s == AM_OK && (s = ami_sink_open(&sink, job->path, W, H, fps, err)) == AM_OK) open = true;
    am_studio st;
    am_studio_default(&st);
    double rad = job->joint_radius > 0 ? job->joint_radius : 4.0;
    size_t t0 = 0, t1 = 0;
    if (s == AM_OK && !ami_frame_range(T, job->first, job->count, &t0, &t1))
        s = AM_FAIL(err, AM_E_VALUE, "frames from %zu: the detections have %zu", job->first, T);
    if (s == AM_OK) s = ami_clip_skip(&vr, t0, &clip, err);
    ami_stage stage = ami_stage_begin("overlay");
    for (size_t t = t0; s == AM_OK && t < t1; t++) {
        if (!ami_progress("overlay", (double)(t - t0) / (double)(t1 - t0))) {
            s = AM_FAIL(err, AM_E_CANCELLED, "overlay");
            break;
        }
        ami_layout_backdrop(&r, &L, &st);
        if (vr) {
            am_status rs = ami_clip_next(&vr, &clip, err);
            if (rs == AM_E_EMPTY) {
                /* a clip shorter than the detections: the studio from here on */
                ami_warn(AM_WARN_MISSING_DATA, "%s ends at frame %zu of %zu: the studio after it", job->video, t, T);
            } else if (rs != AM_OK) {
                s = rs;
                break;
            } else {
                ami_image_warp(&clip, A, &r, 0, 0, W, H, 0.0, 1.0);
                am_draw_rect(&r, (int)lround(L.w_front) - 1, 0, (int)lround(L.w_front) + 1, H, st.divider, 1.0);
            }
        }
        double err_view[2] = {NAN, NAN};
        for (int v = 0; v < 2; v++) {
            int x0 = v == 0 ? 0 : (int)lround(L.w_front), x1 = v == 0 ? (int)lround(L.w_front) : W;
            am_raster_clip(&r, x0, 0, x1, H);
            const float *uv = (v == 0 ? det->front_uv : det->side_uv) + t * J * 2;
            const float *cf = (v == 0 ? det->front_conf : det->side_conf) + t * J;
            if (rig && t < job->motion->frame_count) {
                am_motion_pose(rig, job->motion, t, pose);
                ami_draw_rig_2d(&r, rig, &cam[v], pose, proj + RJ * 2, 1.0, 0.0, 0.0);
                double *kp = pose + B * 16;
                am_rig_keypoints(rig, pose, kp);
                for (size_t j = 0; j < RJ; j++) am_camera_project(&cam[v], kp + j * 3, proj + j * 2, NULL);
                err_view[v] = ami_view_error(uv, cf, proj, joint, J);
            }
            for (size_t j = 0; j < J; j++) {
                if (!(cf[j] > 0) || !isfinite(uv[2 * j])) continue;
                uint8_t c[3];
                am_conf_colour(cf[j], c);
                am_draw_disc(&r, uv[2 * j], uv[2 * j + 1], rad, 0, c, 1.0);
            }
            char text[96];
            if (err_view[v] == err_view[v])
                snprintf(text, sizeof text, "%s %zu  %.1f px", v == 0 ? "front" : "side", t, err_view[v]);
            else
                snprintf(text, sizeof text, "%s %zu", v == 0 ? "front" : "side", t);
            ami_label(&r, x0 + 10, 10, text);
        }
        am_raster_clip_all(&r);
        s = ami_sink_frame(&sink, &r.img, err);
        if (sink.kind == 1) break; /* one PNG: the first frame */
    }
    if (open) {
        if (s == AM_OK) s = ami_sink_close(&sink, err);
        else ami_sink_abort(&sink);
    }
    if (s == AM_OK) ami_stage_end(&stage);
    am_video_reader_close(vr);
    am_image_release(&clip);
    am_raster_release(&r);
    am_free(joint);
    am_free(pose);
    am_free(proj);
    return s;
}

void ami_camera_grid(const am_camera *const *cams, size_t C, int *W, int *H, double (*place)[3], int (*clip)[4])
{
    int cols = (int)ceil(sqrt((double)C)), rows = (int)((C + (size_t)cols - 1) / (size_t)cols);
    int cell_w = cols <= 2 ? 640 : 480;
    double aspect = 0;
    for (size_t c = 0; c < C; c++) aspect = fmax(aspect, cams[c]->height / cams[c]->width);
    int cell_h = (int)lround(cell_w * (aspect > 0 ? aspect : 0.5625));
    cell_h += cell_h & 1;
    *W = cols * cell_w, *H = rows * cell_h;
    for (size_t c = 0; c < C; c++) {
        int x0 = (int)(c % (size_t)cols) * cell_w, y0 = (int)(c / (size_t)cols) * cell_h;
        double sc = fmin((cell_w - 2.0) / cams[c]->width, (cell_h - 2.0) / cams[c]->height);
        double du = x0 + 1 + 0.5 * (cell_w - 2 - cams[c]->width * sc), dv = y0 + 1 + 0.5 * (cell_h - 2 - cams[c]->height * sc);
        place[c][0] = sc, place[c][1] = du, place[c][2] = dv;
        clip[c][0] = (int)floor(du), clip[c][1] = (int)floor(dv);
        clip[c][2] = (int)ceil(du + cams[c]->width * sc), clip[c][3] = (int)ceil(dv + cams[c]->height * sc);
    }
}

/* N cameras: a grid of views, each camera's image scaled into a cell. */
static am_status ami_overlay_cameras(const am_overlay_job *job, am_error *err)
{
    const am_mdet *d = job->mdet;
    size_t C = d->camera_count, T = d->frame_count, J = d->joint_count;
    AMI_CHECK(err, job->cameras, AM_E_USAGE, "an N-camera overlay needs the calibration");
    const am_camera **cams = am_alloc_array(C, sizeof *cams);
    double (*place)[3] = am_alloc_array(C, sizeof *place);
    int (*cell)[4] = am_alloc_array(C, sizeof *cell);
    am_status s = cams && place && cell ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "overlay");
    for (size_t c = 0; c < C && s == AM_OK; c++) {
        int i = am_calib_find(job->cameras, d->cameras[c]);
        if (i < 0) s = AM_FAIL(err, AM_E_NAME, "camera '%s' of the detections is not in the calibration", d->cameras[c]);
        else cams[c] = &job->cameras->cameras[i];
    }
    int W = 0, H = 0;
    if (s == AM_OK) ami_camera_grid(cams, C, &W, &H, place, cell);
    const am_rig *rig = job->motion ? job->rig : NULL;
    const am_joints *P = rig ? NULL : job->points;
    size_t B = rig ? rig->bone_count : 0, RJ = rig ? rig->joint_count : P ? P->joint_count : 0;
    int32_t *joint = am_alloc_array(J + 1, sizeof(int32_t));
    double *pose = am_alloc_array(B * 16 + RJ * 3 + 1, sizeof(double));
    double *proj = am_alloc_array(RJ * 4 + B * 6 + 1, sizeof(double));
    am_video_reader **vr = am_alloc_array(C, sizeof *vr);
    am_image clip = {0};
    am_raster r = {0};
    ami_sink sink = {0};
    bool open = false;
    if (s == AM_OK && (!joint || !pose || !proj || !vr)) s = AM_FAIL(err, AM_E_NOMEM, "overlay");
    for (size_t j = 0; s == AM_OK && j < J; j++) {
        joint[j] = rig ? am_rig_find_joint(rig, d->names[j]) : -1;
        for (size_t k = 0; P && k < RJ && joint[j] < 0; k++)
            if (strcmp(P->names[k], d->names[j]) == 0) joint[j] = (int32_t)k;
    }
    for (size_t c = 0; s == AM_OK && job->camera_video && c < C; c++)
        if (job->camera_video[c]) {
            am_video_info vi;
            s = am_video_reader_open(job->camera_video[c], &vr[c], &vi, err);
            if (s == AM_OK && (vi.width != (int)lround(cams[c]->width) || vi.height != (int)lround(cams[c]->height)))
                s = AM_FAIL_AT(err, AM_E_SHAPE, job->camera_video[c], 0, 0, "the clip is %d x %d, camera '%s' %g x %g",
                               vi.width, vi.height, cams[c]->name, cams[c]->width, cams[c]->height);
        }
    double fps = job->fps > 0 ? job->fps : d->fps > 0 ? d->fps : 30.0;
    if (s == AM_OK) s = am_raster_init(&r, W, H, err);
    if (s == AM_OK && (s = ami_sink_open(&sink, job->path, W, H, fps, err)) == AM_OK) open = true;
    am_studio st;
    am_studio_default(&st);
    size_t t0 = 0, t1 = 0;
    if (s == AM_OK && !ami_frame_range(T, job->first, job->count, &t0, &t1))
        s = AM_FAIL(err, AM_E_VALUE, "frames from %zu: the detections have %zu", job->first, T);
    for (size_t c = 0; s == AM_OK && c < C; c++)
        s = ami_clip_skip(&vr[c], t0, &clip, err);
    ami_stage stage = ami_stage_begin("overlay");
    for (size_t t = t0; s == AM_OK && t < t1; t++) {
        if (!ami_progress("overlay", (double)(t - t0) / (double)(t1 - t0))) {
            s = AM_FAIL(err, AM_E_CANCELLED, "overlay");
            break;
        }
        am_raster_clip_all(&r);
        am_image_fill(&r.img, st.divider);
        if (rig && t < job->motion->frame_count) {
            am_motion_pose(rig, job->motion, t, pose);
            am_rig_keypoints(rig, pose, pose + B * 16);
        }
        for (size_t c = 0; c < C && s == AM_OK; c++) {
            double sc = place[c][0], du = place[c][1], dv = place[c][2];
            am_raster_clip(&r, cell[c][0], cell[c][1], cell[c][2], cell[c][3]);
            am_draw_rect(&r, r.clip[0], r.clip[1], r.clip[2], r.clip[3], st.wall, 1.0);
            if (vr[c]) {
                am_status rs = ami_clip_next(&vr[c], &clip, err);
                if (rs == AM_OK) {
                    double A[6] = {sc, 0, du, 0, sc, dv};
                    ami_image_warp(&clip, A, &r, 0, 0, W, H, 0.0, 1.0);
                } else if (rs != AM_E_EMPTY) {
                    s = rs;
                    break;
                }
            }
            double e = NAN;
            if (rig && t < job->motion->frame_count) {
                ami_draw_rig_2d(&r, rig, cams[c], pose, proj + RJ * 2, sc, du, dv);
                for (size_t j = 0; j < RJ; j++) {
                    am_camera_project(cams[c], pose + B * 16 + j * 3, proj + j * 2, NULL);
                }
                e = ami_view_error(d->uv + (c * T + t) * J * 2, d->conf + (c * T + t) * J, proj, joint, J);
            } else if (P && t < P->frame_count) {
                /* the points through the camera (NaN where one is missing), joined by the edges */
                for (size_t j = 0; j < RJ; j++) {
                    const double *q = P->joints + (t * RJ + j) * 3;
                    proj[2 * j] = proj[2 * j + 1] = NAN;
                    if (isfinite(q[0] + q[1] + q[2]) && am_camera_project(cams[c], q, proj + 2 * j, NULL))
                        proj[2 * j] = proj[2 * j] * sc + du, proj[2 * j + 1] = proj[2 * j + 1] * sc + dv;
                }
                for (size_t k = 0; k < job->edge_count; k++) {
                    const double *a = proj + 2 * job->edges[2 * k], *bq = proj + 2 * job->edges[2 * k + 1];
                    if (isfinite(a[0] + bq[0])) am_draw_line(&r, a[0], a[1], bq[0], bq[1], 2.0, ami_white, 0.85);
                }
                for (size_t j = 0; j < RJ; j++)
                    if (isfinite(proj[2 * j])) am_draw_disc(&r, proj[2 * j], proj[2 * j + 1], 2.0, 0, ami_white, 1.0);
                /* the error in image pixels: back out of the cell */
                for (size_t j = 0; j < 2 * RJ; j++) proj[j] = (proj[j] - (j % 2 ? dv : du)) / sc;
                e = ami_view_error(d->uv + (c * T + t) * J * 2, d->conf + (c * T + t) * J, proj, joint, J);
            }
            for (size_t j = 0; j < J; j++) {
                const float *uv = d->uv + ((c * T + t) * J + j) * 2;
                float cf = d->conf[(c * T + t) * J + j];
                if (!(cf > 0) || !isfinite(uv[0])) continue;
                uint8_t col[3];
                am_conf_colour(cf, col);
                am_draw_disc(&r, uv[0] * sc + du, uv[1] * sc + dv, job->joint_radius > 0 ? job->joint_radius : 3.0, 0, col, 1.0);
            }
            char text[160];
            if (e == e) snprintf(text, sizeof text, "%s %zu  %.1f px", d->cameras[c], t, e);
            else snprintf(text, sizeof text, "%s %zu", d->cameras[c], t);
            ami_label(&r, (int)du + 8, (int)dv + 8, text);
        }
        am_raster_clip_all(&r);
        if (s == AM_OK) s = ami_sink_frame(&sink, &r.img, err);
        if (sink.kind == 1) break; /* one PNG: the first frame */
    }
    if (open) {
        if (s == AM_OK) s = ami_sink_close(&sink, err);
        else ami_sink_abort(&sink);
    }
    if (s == AM_OK) ami_stage_end(&stage);
    for (size_t c = 0; vr && c < C; c++) am_video_reader_close(vr[c]);
    am_free(vr);
    am_free(cams);
    am_free(place);
    am_free(cell);
    am_image_release(&clip);
    am_raster_release(&r);
    am_free(joint);
    am_free(pose);
    am_free(proj);
    return s;
}

am_status am_overlay_clip(const am_overlay_job *job, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, &job->ctx);
    am_status s;
    if (job->det) s = ami_overlay_two_view(job, err);
    else if (job->mdet) s = ami_overlay_cameras(job, err);
    else s = AM_FAIL(err, AM_E_USAGE, "an overlay needs detections (two-view or N-camera)");
    am_scope_leave(&sc, NULL);
    return s;
}
