/* src/render: joints land where SPEC 3 projects them, renders match their goldens, the overlay
 * of an exam clip puts every detection on its true joint, videos decode with the frames and
 * rate written, and clips that do not fit the canvas are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/capture.h"
#include "anymove/render.h"

/* Centroid of the pixels of exactly colour c inside a window around (u, v); count of them. */
static size_t centroid(const am_image *img, const uint8_t c[3], double u, double v, int win, double out[2])
{
    double su = 0, sv = 0;
    size_t n = 0;
    for (int y = (int)v - win; y <= (int)v + win; y++)
        for (int x = (int)u - win; x <= (int)u + win; x++) {
            if (x < 0 || y < 0 || x >= img->width || y >= img->height) continue;
            const uint8_t *p = img->rgb + ((size_t)y * img->width + x) * 3;
            if (p[0] == c[0] && p[1] == c[1] && p[2] == c[2]) su += x + 0.5, sv += y + 0.5, n++;
        }
    if (n) out[0] = su / n, out[1] = sv / n;
    return n;
}

static am_rig *load_rig(const char *rel)
{
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_load(am_test_source(rel), &rig, &err), &err);
    return rig;
}

/* Every keypoint's disc (a colour of its own) is centred on SPEC 3's u, v to 0.5 px. */
static void joints_match_spec3_projection(void)
{
    am_rig *rig = load_rig("examples/creatures/wolf/rig.json");
    if (!rig) return;
    size_t J = rig->joint_count;
    am_error err = {0};
    am_render_model *m = NULL;
    AM_CHECK_OK(am_render_model_create(rig, NULL, &m, &err), &err);
    uint8_t *rgb = calloc(J * 3, 1);
    for (size_t j = 0; j < J; j++) rgb[j * 3] = (uint8_t)(10 + 7 * j), rgb[j * 3 + 1] = 250, rgb[j * 3 + 2] = (uint8_t)(3 * j);
    am_layout L;
    am_layout_default(&L);
    am_render_job job = {.model = m, .view = AM_VIEW_LAYOUT, .style = {.flags = AM_DRAW_JOINTS, .joint_rgb = rgb, .joint_radius = 3}};
    am_render_views *v = NULL;
    AM_CHECK_OK(am_render_views_create(&job, &v, &err), &err);
    am_raster r;
    AM_CHECK_OK(am_raster_init(&r, 1280, 720, &err), &err);
    am_render_views_frame(v, 0, &r);
    size_t checked = 0;
    double worst = 0;
    for (size_t j = 0; j < J; j++) {
        const double *p = rig->joint_rest + j * 3;
        double uv[2][2] = {{L.front_cx + p[0] / L.m_per_px, L.ground_v - p[2] / L.m_per_px},
                           {L.side_cx - p[1] / L.m_per_px, L.ground_v - p[2] / L.m_per_px}};
        for (int k = 0; k < 2; k++) {
            double c[2];
            /* a disc of radius 3 has 21 fully covered pixels; neighbours may hide some */
            if (centroid(&r.img, rgb + j * 3, uv[k][0], uv[k][1], 4, c) < 16) continue;
            double d = hypot(c[0] - uv[k][0], c[1] - uv[k][1]);
            worst = fmax(worst, d);
            AM_CHECK_MSG(d < 0.5, "joint %s view %d: disc at (%.2f, %.2f), SPEC 3 says (%.2f, %.2f)", rig->joint_names[j], k,
                         c[0], c[1], uv[k][0], uv[k][1]);
            checked++;
        }
    }
    AM_CHECK_MSG(checked >= J, "only %zu of %zu joint discs could be measured", checked, 2 * J);
    printf("    %zu discs, worst %.3f px from SPEC 3\n", checked, worst);
    am_raster_release(&r);
    am_render_views_free(v);
    am_render_model_free(m);
    free(rgb);
    am_rig_free(rig);
}

/* Mean absolute difference with the golden PNG (AM_UPDATE_GOLDEN=1 writes it instead). */
static void golden(const am_image *img, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", am_test_source("tests/data/render"), name);
    am_error err = {0};
    if (getenv("AM_UPDATE_GOLDEN")) {
        AM_CHECK_OK(am_png_write(img, path, &err), &err);
        return;
    }
    am_image g = {0};
    AM_CHECK_OK(am_png_read(path, &g, &err), &err);
    if (!g.rgb) return;
    AM_CHECK(g.width == img->width && g.height == img->height);
    if (g.width == img->width && g.height == img->height) {
        double sum = 0;
        size_t n = (size_t)g.width * g.height * 3, off = 0;
        for (size_t i = 0; i < n; i++) {
            int d = abs((int)g.rgb[i] - (int)img->rgb[i]);
            sum += d;
            off += d > 16;
        }
        double mad = sum / (double)n;
        AM_CHECK_MSG(mad < 0.5 && off < n / 500, "%s: mean abs difference %.3f, %zu values off by > 16", name, mad, off);
    }
    am_image_release(&g);
}

static void render_view(am_render_model *m, const am_motion *mo, size_t frame, am_view view, int w, int h, const char *name)
{
    am_error err = {0};
    am_render_job job = {.model = m, .motion = mo, .view = view, .width = w, .height = h,
                         .style = {.flags = AM_DRAW_MESH | AM_DRAW_BONES | AM_DRAW_JOINTS}};
    am_render_views *v = NULL;
    AM_CHECK_OK(am_render_views_create(&job, &v, &err), &err);
    if (!v) return;
    int W, H;
    am_render_views_size(v, &W, &H);
    am_raster r;
    AM_CHECK_OK(am_raster_init(&r, W, H, &err), &err);
    am_render_views_frame(v, frame, &r);
    golden(&r.img, name);
    am_raster_release(&r);
    am_render_views_free(v);
}

static void goldens_fk_rig(void)
{
    am_rig *rig = load_rig("examples/walker/rig.json");
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_load(am_test_source("examples/walker/walk.json"), rig, &mo, &err), &err);
    am_render_model *m = NULL;
    AM_CHECK_OK(am_render_model_create(rig, NULL, &m, &err), &err);
    render_view(m, mo, 12, AM_VIEW_FRONT, 0, 0, "walker_front.png");
    render_view(m, mo, 12, AM_VIEW_SIDE, 0, 0, "walker_side.png");
    render_view(m, mo, 12, AM_VIEW_THREE_QUARTER, 640, 360, "walker_34.png");
    am_render_model_free(m);
    am_motion_free(mo);
    am_rig_free(rig);
}

static void goldens_skinned_model(void)
{
    am_gltf *doc = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_render_model *m = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_load(am_test_shared("data/gltf/khronos_fox/Fox.glb"), NULL, &doc, &err), &err);
    if (!doc) return;
    AM_CHECK_OK(am_rig_from_gltf(doc, -1, &rig, &err), &err);
    AM_CHECK_OK(am_motion_from_gltf(doc, -1, rig, 1, 30.0, &mo, &err), &err);
    AM_CHECK_OK(am_render_model_from_gltf(doc, rig, &m, &err), &err);
    AM_CHECK(am_render_model_vertex_count(m) == 1728);
    /* the Khronos fox is in centimetres: a layout of 4 m tall */
    am_layout L;
    am_layout_default(&L);
    L.m_per_px = 400.0 / 720;
    am_render_job base = {.model = m, .motion = mo, .layout = &L};
    const am_view views[3] = {AM_VIEW_FRONT, AM_VIEW_SIDE, AM_VIEW_THREE_QUARTER};
    const char *names[3] = {"fox_front.png", "fox_side.png", "fox_34.png"};
    for (int k = 0; k < 3; k++) {
        am_render_job job = base;
        job.view = views[k];
        if (k == 2) job.width = 640, job.height = 360;
        am_render_views *v = NULL;
        AM_CHECK_OK(am_render_views_create(&job, &v, &err), &err);
        int W, H;
        am_render_views_size(v, &W, &H);
        am_raster r;
        AM_CHECK_OK(am_raster_init(&r, W, H, &err), &err);
        am_render_views_frame(v, 5, &r);
        golden(&r.img, names[k]);
        am_raster_release(&r);
        am_render_views_free(v);
    }
    am_render_model_free(m);
    am_motion_free(mo);
    am_rig_free(rig);
    am_gltf_free(doc);
}

/* The 3/4 camera frames the clip, whatever pose the model was last left in by another view:
 * the same frame rendered from a fresh model and from one posed 5 m away is the same picture
 * (rig --render and showcase draw several views with one model; the second one was framed on
 * the first view's pose and came out a quarter of its size). */
static void three_quarter_ignores_last_pose(void)
{
    am_rig *rig = load_rig("examples/walker/rig.json");
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_load(am_test_source("examples/walker/walk.json"), rig, &mo, &err), &err);
    am_render_model *m = NULL;
    AM_CHECK_OK(am_render_model_create(rig, NULL, &m, &err), &err);
    double *pose = calloc(rig->bone_count * 16, sizeof(double));
    am_raster r[2];
    memset(r, 0, sizeof r);
    for (int k = 0; k < 2 && m && mo && pose; k++) {
        if (k == 1) {
            am_rig_rest_pose(rig, pose);
            for (size_t b = 0; b < rig->bone_count; b++) pose[b * 16 + 3] += 5.0; /* row-major: x of the translation column */
            am_render_model_pose(m, pose);
        }
        am_render_job job = {.model = m, .motion = mo, .view = AM_VIEW_THREE_QUARTER, .width = 320, .height = 180,
                             .style = {.flags = AM_DRAW_MESH | AM_DRAW_JOINTS}};
        am_render_views *v = NULL;
        AM_CHECK_OK(am_render_views_create(&job, &v, &err), &err);
        if (!v) break;
        AM_CHECK_OK(am_raster_init(&r[k], 320, 180, &err), &err);
        am_render_views_frame(v, 12, &r[k]);
        am_render_views_free(v);
    }
    size_t differ = 0, n = (size_t)320 * 180 * 3;
    for (size_t i = 0; r[0].img.rgb && r[1].img.rgb && i < n; i++) differ += r[0].img.rgb[i] != r[1].img.rgb[i];
    AM_CHECK(r[0].img.rgb && r[1].img.rgb);
    AM_CHECK_MSG(differ == 0, "%zu of %zu values differ after the model was posed elsewhere", differ, n);
    am_raster_release(&r[0]);
    am_raster_release(&r[1]);
    free(pose);
    am_render_model_free(m);
    am_motion_free(mo);
    am_rig_free(rig);
}

/* The 3/4 camera follows the root: the walker's hips walk 1.5 m in the frames sampled, and in each their disc
 * is where the first frame's camera sees them moved back to their first position on the ground
 * plane (their height kept), to 0.5 px; a camera that stayed put would be > 100 px off. */
static void three_quarter_follows_root(void)
{
    am_rig *rig = load_rig("examples/walker/rig.json");
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_motion_load(am_test_source("examples/walker/walk.json"), rig, &mo, &err), &err);
    am_render_model *m = NULL;
    AM_CHECK_OK(am_render_model_create(rig, NULL, &m, &err), &err);
    if (!m || !mo) return;
    size_t J = rig->joint_count, root = (size_t)rig->head_joint[0], T = mo->frame_count;
    uint8_t *rgb = calloc(J * 3, 1);
    for (size_t j = 0; j < J; j++) rgb[j * 3] = 40, rgb[j * 3 + 1] = 40, rgb[j * 3 + 2] = 40;
    rgb[root * 3] = 250, rgb[root * 3 + 1] = 20, rgb[root * 3 + 2] = 200;
    am_render_job job = {.model = m, .motion = mo, .view = AM_VIEW_THREE_QUARTER,
                         .style = {.flags = AM_DRAW_JOINTS, .joint_rgb = rgb, .joint_radius = 3}};
    am_render_views *v = NULL;
    AM_CHECK_OK(am_render_views_create(&job, &v, &err), &err);
    am_raster r;
    AM_CHECK_OK(am_raster_init(&r, 1280, 720, &err), &err);
    double *pose = calloc(rig->bone_count * 16 + J * 3, sizeof(double)), *kp = pose + rig->bone_count * 16;
    double first[3] = {0, 0, 0}, worst = 0, travel = 0, still = 0;
    size_t measured = 0;
    const am_camera *cam = am_render_views_camera(v, 0, NULL);
    for (size_t t = 0; v && pose && t < T; t += T / 6) {
        am_render_views_frame(v, t, &r);
        am_motion_pose(rig, mo, t, pose);
        am_rig_keypoints(rig, pose, kp);
        if (t == 0) memcpy(first, kp + root * 3, sizeof first);
        double back[3] = {first[0], first[1], kp[root * 3 + 2]}, uv[2], uv_still[2], c[2];
        if (!am_camera_project(cam, back, uv, NULL) || !am_camera_project(cam, kp + root * 3, uv_still, NULL)) continue;
        travel = fmax(travel, hypot(kp[root * 3] - first[0], kp[root * 3 + 1] - first[1]));
        still = fmax(still, hypot(uv_still[0] - uv[0], uv_still[1] - uv[1]));
        if (centroid(&r.img, rgb + root * 3, uv[0], uv[1], 5, c) < 16) continue;
        double d = hypot(c[0] - uv[0], c[1] - uv[1]);
        worst = fmax(worst, d);
        measured++;
    }
    AM_CHECK_MSG(measured >= 6 && worst < 0.5, "%zu frames measured, root disc %.3f px from the followed projection", measured, worst);
    AM_CHECK_MSG(travel > 1.2 && still > 100, "the hips travel %.2f m (%.0f px for a camera standing still)", travel, still);
    printf("    %zu frames, worst %.3f px; the hips walk %.2f m (%.0f px unfollowed)\n", measured, worst, travel, still);
    free(pose);
    am_raster_release(&r);
    am_render_views_free(v);
    free(rgb);
    am_render_model_free(m);
    am_motion_free(mo);
    am_rig_free(rig);
}

/* The exam's clean reading is the truth projected: the overlay's discs sit on it to 1 px. */
static void overlay_exam_within_1px(void)
{
    am_rig *rig = load_rig("examples/creatures/wolf/rig.json");
    am_error err = {0};
    am_exam *ex = NULL;
    am_exam_opts eo = {.seed = 4, .frames = 6};
    AM_CHECK_OK(am_exam_generate(rig, NULL, &eo, &ex, &err), &err);
    if (!ex) return;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/overlay", am_test_tmpdir());
    am_overlay_job job = {.det = ex->det, .path = dir, .joint_radius = 3};
    AM_CHECK_OK(am_overlay_clip(&job, &err), &err);
    am_layout L;
    am_layout_default(&L);
    size_t J = rig->joint_count, checked = 0;
    AM_CHECK(ex->det->joint_count == J);
    for (size_t t = 0; t < 6; t += 5) {
        char path[600];
        snprintf(path, sizeof path, "%s/frame_%05zu.png", dir, t);
        am_image img = {0};
        AM_CHECK_OK(am_png_read(path, &img, &err), &err);
        if (!img.rgb) continue;
        const double *jt = ex->truth->joints + t * J * 3;
        for (size_t j = 0; j < J; j++) {
            const double *p = jt + j * 3;
            double uv[2][2] = {{L.front_cx + p[0] / L.m_per_px, L.ground_v - p[2] / L.m_per_px},
                               {L.side_cx - p[1] / L.m_per_px, L.ground_v - p[2] / L.m_per_px}};
            for (int k = 0; k < 2; k++) {
                /* joints of another disc within 10 px would pull the centroid: measure the others */
                bool alone = true;
                for (size_t o = 0; o < J && alone; o++) {
                    const double *q = jt + o * 3;
                    double qu = k == 0 ? L.front_cx + q[0] / L.m_per_px : L.side_cx - q[1] / L.m_per_px;
                    double qv = L.ground_v - q[2] / L.m_per_px;
                    if (o != j && hypot(qu - uv[k][0], qv - uv[k][1]) < 10) alone = false;
                }
                double cc[2];
                uint8_t c[3];
                am_conf_colour((k == 0 ? ex->det->front_conf : ex->det->side_conf)[t * J + j], c);
                AM_CHECK(strcmp(ex->det->names[j], rig->joint_names[j]) == 0);
                if (!alone || centroid(&img, c, uv[k][0], uv[k][1], 5, cc) < 16) continue;
                double d = hypot(cc[0] - uv[k][0], cc[1] - uv[k][1]);
                AM_CHECK_MSG(d < 1.0, "frame %zu joint %s view %d: %.2f px from its projection", t, rig->joint_names[j], k, d);
                checked++;
            }
        }
        am_image_release(&img);
    }
    AM_CHECK_MSG(checked >= J, "only %zu detections measured", checked);
    am_exam_free(ex);
    am_rig_free(rig);
}

/* A video decodes with the frames and rate written, and its pixels survive the codec. */
static void video_round_trip(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/clip.mp4", am_test_tmpdir());
    am_error err = {0};
    am_video_writer *vw = NULL;
    AM_CHECK_OK(am_video_writer_open(path, 320, 180, 24.0, &vw, &err), &err);
    if (!vw) return;
    am_image img;
    AM_CHECK_OK(am_image_init(&img, 320, 180, &err), &err);
    for (int f = 0; f < 12; f++) {
        uint8_t c[3] = {(uint8_t)(20 * f), 128, (uint8_t)(240 - 20 * f)};
        am_image_fill(&img, c);
        AM_CHECK_OK(am_video_writer_frame(vw, &img, &err), &err);
    }
    AM_CHECK_OK(am_video_writer_close(vw, &err), &err);
    am_video_reader *vr = NULL;
    am_video_info vi;
    AM_CHECK_OK(am_video_reader_open(path, &vr, &vi, &err), &err);
    if (!vr) return;
    AM_CHECK(vi.width == 320 && vi.height == 180);
    AM_CHECK_NEAR(vi.fps, 24.0, 1e-6);
    am_image got = {0};
    int n = 0;
    while (am_video_reader_next(vr, &got, &err) == AM_OK) {
        const uint8_t *p = got.rgb + ((size_t)90 * 320 + 160) * 3;
        AM_CHECK_MSG(abs(p[0] - 20 * n) < 8 && abs(p[2] - (240 - 20 * n)) < 8, "frame %d: (%d, %d, %d)", n, p[0], p[1], p[2]);
        n++;
    }
    AM_CHECK_MSG(n == 12, "decoded %d frames, wrote 12", n);
    am_video_reader_close(vr);
    am_image_release(&img);
    am_image_release(&got);
}

/* A clip of another shape than the canvas, without a calib, is the input's fault. */
static void clip_shape_needs_calib(void)
{
    am_error err = {0};
    double A[6];
    am_video_info same = {1280, 720, 30, 10}, half = {640, 360, 30, 10}, odd = {1000, 700, 30, 10};
    AM_CHECK_STATUS(am_clip_affine(&same, NULL, 1280, 720, "c.mp4", A, &err), AM_OK);
    AM_CHECK_STATUS(am_clip_affine(&half, NULL, 1280, 720, "c.mp4", A, &err), AM_OK);
    AM_CHECK_NEAR(A[0], 2.0, 1e-12);
    AM_CHECK_STATUS(am_clip_affine(&odd, NULL, 1280, 720, "c.mp4", A, &err), AM_E_SHAPE);
    AM_CHECK(strcmp(err.file, "c.mp4") == 0);
    const double calib[6] = {1.28, 0, 0, 0, 1.0286, 0};
    AM_CHECK_STATUS(am_clip_affine(&odd, calib, 1280, 720, "c.mp4", A, &err), AM_OK);
}

#define AM_TESTS(X) \
    X(joints_match_spec3_projection) X(goldens_fk_rig) X(goldens_skinned_model) X(three_quarter_ignores_last_pose) X(three_quarter_follows_root) \
    X(overlay_exam_within_1px) \
    X(video_round_trip) X(clip_shape_needs_calib)
AM_TEST_MAIN(AM_TESTS)
