/* The cameras of a render: SPEC 3's two orthographic views (alone or on the layout canvas), the
 * 3/4 perspective camera framing the clip, or a calibrated camera; scaled to the output size. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "render_internal.h"

static const char *const ami_view_names[AM_VIEW_COUNT] = {"layout", "front", "side", "three-quarter", "camera", "cameras"};

const char *am_view_name(am_view view) { return view < AM_VIEW_COUNT ? ami_view_names[view] : "?"; }

bool am_view_parse(const char *name, am_view *view)
{
    for (int v = 0; v < AM_VIEW_COUNT; v++)
        if (strcasecmp(name, ami_view_names[v]) == 0) {
            *view = (am_view)v;
            return true;
        }
    if (strcmp(name, "3/4") == 0 || strcasecmp(name, "three_quarter") == 0 || strcasecmp(name, "persp") == 0) {
        *view = AM_VIEW_THREE_QUARTER;
        return true;
    }
    return false;
}

void am_camera_three_quarter(am_camera *cam, const double box[6], const am_orbit *orbit, int width, int height)
{
    double az = orbit && orbit->azimuth_deg != 0 ? orbit->azimuth_deg : 35.0;
    double el = orbit && orbit->elevation_deg != 0 ? orbit->elevation_deg : 18.0;
    double fov = orbit && orbit->fov_deg > 0 ? orbit->fov_deg : 40.0;
    double a = az * AM_PI / 180.0, e = el * AM_PI / 180.0, fx = fov * AM_PI / 180.0;
    double target[3], half[3];
    for (int c = 0; c < 3; c++) {
        target[c] = 0.5 * (box[c] + box[3 + c]);
        half[c] = 0.5 * (box[3 + c] - box[c]);
    }
    double radius = fmax(am_vec3_norm(half), 0.05);
    double fy = 2.0 * atan(tan(0.5 * fx) * height / width);
    double dist = 1.08 * radius / sin(0.5 * fmin(fx, fy));
    /* towards the right flank (-X) from the front (-Y), and up */
    double dir[3] = {-sin(a) * cos(e), -cos(a) * cos(e), sin(e)};
    double centre[3];
    am_vec3_madd(target, dist, dir, centre);
    static const double up[3] = {0, 0, 1};
    am_camera_look_at(cam, "three-quarter", centre, target, up, width, height, fx);
}

bool ami_frame_range(size_t T, size_t first, size_t count, size_t *begin, size_t *end)
{
    if (first >= T) return false;
    *begin = first;
    *end = count == 0 || count > T - first ? T : first + count;
    return *end > *begin;
}

am_status ami_layout_cameras(const am_layout *layout, am_camera *front, am_camera *side, am_error *err)
{
    am_calib *cal = NULL;
    AMI_TRY(am_cameras_from_layout(layout, &cal, err));
    *front = cal->cameras[0];
    *side = cal->cameras[1];
    am_calib_free(cal);
    return AM_OK;
}

void ami_motion_box(const am_rig *rig, const am_motion *mo, size_t begin, size_t end, double *pose, bool follow,
                    double root0[3], double box[6])
{
    size_t J = rig->joint_count;
    size_t root = (size_t)rig->head_joint[0];
    for (int c = 0; c < 3; c++) box[c] = INFINITY, box[3 + c] = -INFINITY;
    double *joints = pose + rig->bone_count * 16;
    for (size_t t = begin; t < end; t++) {
        if (mo) am_motion_pose(rig, mo, t, pose);
        else am_rig_rest_pose(rig, pose);
        am_rig_keypoints(rig, pose, joints);
        if (follow && t == begin) memcpy(root0, joints + root * 3, 3 * sizeof(double));
        double shift[3] = {0, 0, 0};
        if (follow) shift[0] = root0[0] - joints[root * 3], shift[1] = root0[1] - joints[root * 3 + 1];
        for (size_t j = 0; j < J; j++)
            for (int c = 0; c < 3; c++) {
                box[c] = fmin(box[c], joints[j * 3 + c] + shift[c]);
                box[3 + c] = fmax(box[3 + c], joints[j * 3 + c] + shift[c]);
            }
    }
}

struct am_render_views {
    am_render_job job;
    am_layout layout;
    int width, height;
    size_t count;
    am_camera *cam;           /* [count] */
    int (*clip)[4];           /* [count] */
    int divider[2];           /* columns of the layout's divider, or -1 */
    am_raster backdrop;       /* the studio, drawn once */
    double *pose;             /* [B][16] + [J][3] scratch */
    bool follow;              /* the 3/4 camera moves with the root's head horizontally */
    double root0[3];          /* where the root's head is in cam[0] (the first frame) */
};

void am_render_views_free(am_render_views *v)
{
    if (!v) return;
    am_raster_release(&v->backdrop);
    am_free(v->pose);
    am_free(v->cam);
    am_free(v->clip);
    am_free(v);
}

/* Scale an image-space camera by s and shift it by (ox, oy) pixels. */
static void ami_camera_fit(am_camera *c, double s, double ox, double oy)
{
    c->K[0] *= s;
    c->K[1] *= s;
    c->K[2] = c->K[2] * s + ox;
    c->K[4] *= s;
    c->K[5] = c->K[5] * s + oy;
    c->width *= s;
    c->height *= s;
}

am_status am_render_views_create(const am_render_job *job, am_render_views **out, am_error *err)
{
    *out = NULL;
    const am_rig *rig = am_render_model_rig(job->model);
    am_render_views *v = am_alloc(sizeof *v);
    AMI_CHECK(err, v, AM_E_NOMEM, "render views");
    v->job = *job;
    if (job->layout) v->layout = *job->layout;
    else am_layout_default(&v->layout);
    v->divider[0] = v->divider[1] = -1;
    am_status s = AM_OK;
    size_t C = job->view == AM_VIEW_CAMERAS && job->cameras ? job->cameras->camera_count : 0;
    if (job->view == AM_VIEW_CAMERAS && C == 0) s = AM_FAIL(err, AM_E_USAGE, "a grid of cameras needs a calibration with cameras");
    v->pose = am_alloc_array(rig->bone_count * 16 + rig->joint_count * 3, sizeof(double));
    v->cam = am_alloc_array(C + 2, sizeof *v->cam);
    v->clip = am_alloc_array(C + 2, sizeof *v->clip);
    const am_camera **grid = am_alloc_array(C + 1, sizeof *grid);
    double (*place)[3] = am_alloc_array(C + 1, sizeof *place);
    if (s == AM_OK && (!v->pose || !v->cam || !v->clip || !grid || !place)) s = AM_FAIL(err, AM_E_NOMEM, "pose scratch");
    for (size_t c = 0; s == AM_OK && c < C; c++) grid[c] = &job->cameras->cameras[c];
    am_camera front, side;
    if (s == AM_OK) s = ami_layout_cameras(&v->layout, &front, &side, err);
    const am_layout *L = &v->layout;
    int nw = 0, nh = 720;
    switch (job->view) {
    case AM_VIEW_LAYOUT: nw = (int)lround(L->w_front + L->w_side); break;
    case AM_VIEW_FRONT: nw = (int)lround(L->w_front); break;
    case AM_VIEW_SIDE: nw = (int)lround(L->w_side); break;
    case AM_VIEW_THREE_QUARTER: nw = 1280; break;
    case AM_VIEW_CAMERA:
        if (s == AM_OK && !job->camera) s = AM_FAIL(err, AM_E_USAGE, "a camera view needs a camera");
        if (s == AM_OK) {
            nw = (int)lround(job->camera->width);
            nh = (int)lround(job->camera->height);
        }
        break;
    case AM_VIEW_CAMERAS:
        if (s == AM_OK) ami_camera_grid(grid, C, &nw, &nh, place, v->clip);
        break;
    default: if (s == AM_OK) s = AM_FAIL(err, AM_E_ARG, "unknown view %d", (int)job->view);
    }
    if (s == AM_OK && (nw < 1 || nh < 1)) s = AM_FAIL(err, AM_E_VALUE, "the view is %d x %d px", nw, nh);
    v->width = job->width > 0 ? job->width : nw;
    v->height = job->height > 0 ? job->height : nh;
    double sc = 1, ox = 0, oy = 0;
    if (s == AM_OK) {
        sc = fmin((double)v->width / nw, (double)v->height / nh);
        ox = 0.5 * (v->width - nw * sc);
        oy = 0.5 * (v->height - nh * sc);
    }
    if (s == AM_OK) {
        int full[4] = {0, 0, v->width, v->height};
        /* a grid's clips are its cells (from the switch above) */
        if (job->view != AM_VIEW_CAMERAS) v->count = 1, memcpy(v->clip[0], full, sizeof full);
        if (job->view == AM_VIEW_CAMERAS) {
            /* each camera into its cell, then the whole grid scaled to the output */
            v->count = C;
            for (size_t c = 0; c < C; c++) {
                v->cam[c] = *grid[c];
                ami_camera_fit(&v->cam[c], place[c][0], place[c][1], place[c][2]);
                ami_camera_fit(&v->cam[c], sc, ox, oy);
                for (int k = 0; k < 4; k++) v->clip[c][k] = (int)lround(v->clip[c][k] * sc + (k % 2 ? oy : ox));
            }
        } else if (job->view == AM_VIEW_LAYOUT) {
            v->count = 2;
            v->cam[0] = front;
            v->cam[1] = side;
            ami_camera_fit(&v->cam[0], sc, ox, oy);
            ami_camera_fit(&v->cam[1], sc, ox, oy);
            int split = (int)lround(ox + L->w_front * sc);
            v->clip[0][2] = split;
            memcpy(v->clip[1], full, sizeof full);
            v->clip[1][0] = split;
            v->divider[0] = split - 1;
            v->divider[1] = split;
        } else if (job->view == AM_VIEW_FRONT) {
            v->cam[0] = front;
            ami_camera_fit(&v->cam[0], sc, ox, oy);
        } else if (job->view == AM_VIEW_SIDE) {
            v->cam[0] = side;
            v->cam[0].K[2] -= L->w_front;
            ami_camera_fit(&v->cam[0], sc, ox, oy);
        } else if (job->view == AM_VIEW_CAMERA) {
            v->cam[0] = *job->camera;
            ami_camera_fit(&v->cam[0], sc, ox, oy);
        } else {
            size_t T = job->motion ? job->motion->frame_count : 1, b0 = 0, b1 = 1;
            if (!ami_frame_range(T, job->first, job->count, &b0, &b1)) b0 = 0, b1 = T;
            double box[6];
            /* a walk would leave the creature a few pixels tall in a camera framing its whole
             * path: the camera follows the root instead, at one height and distance */
            v->follow = job->motion != NULL;
            ami_motion_box(rig, job->motion, b0, b1, v->pose, v->follow, v->root0, box);
            /* the mesh reaches past the joints: widen by the rest mesh's margin around them
             * (the model's box is of its last pose, which a previous view may have left) */
            double mb[6];
            am_rig_rest_pose(rig, v->pose);
            am_render_model_pose(job->model, v->pose);
            am_render_model_box(job->model, mb);
            for (int c = 0; c < 3; c++) {
                double jmin = INFINITY, jmax = -INFINITY;
                for (size_t j = 0; j < rig->joint_count; j++) {
                    jmin = fmin(jmin, rig->joint_rest[j * 3 + c]);
                    jmax = fmax(jmax, rig->joint_rest[j * 3 + c]);
                }
                box[c] -= fmax(0.0, jmin - mb[c]);
                box[3 + c] += fmax(0.0, mb[3 + c] - jmax);
            }
            am_camera_three_quarter(&v->cam[0], box, job->orbit, v->width, v->height);
        }
    }
    am_free(grid);
    am_free(place);
    if (s == AM_OK) s = am_raster_init(&v->backdrop, v->width, v->height, err);
    if (s == AM_OK) {
        const am_studio *st = job->style.studio;
        am_studio d;
        if (!st) am_studio_default(&d), st = &d;
        /* a grid's cells on the divider's colour, as the overlay's */
        am_image_fill(&v->backdrop.img, job->view == AM_VIEW_CAMERAS ? st->divider : st->wall);
        for (size_t i = 0; i < v->count; i++) {
            am_raster_clip(&v->backdrop, v->clip[i][0], v->clip[i][1], v->clip[i][2], v->clip[i][3]);
            am_render_backdrop(&v->backdrop, &v->cam[i], st);
        }
        am_raster_clip_all(&v->backdrop);
        if (v->divider[0] >= 0) {
            am_draw_rect(&v->backdrop, v->divider[0], 0, v->divider[1] + 1, v->height, st->divider, 1.0);
            /* the floor band and the depth stay as the views drew them */
        }
    }
    if (s != AM_OK) {
        am_render_views_free(v);
        return s;
    }
    *out = v;
    return AM_OK;
}

void am_render_views_size(const am_render_views *v, int *w, int *h)
{
    *w = v->width;
    *h = v->height;
}

size_t am_render_views_count(const am_render_views *v) { return v->count; }

const am_camera *am_render_views_camera(const am_render_views *v, size_t i, int clip[4])
{
    if (clip) memcpy(clip, v->clip[i], sizeof v->clip[i]);
    return &v->cam[i];
}

/* The 3/4 camera moved with the root of the model as posed now: the centre moved by d,
 * x_cam = R (p - d) + t; the studio is the same picture (the wall and the floor's far edge move
 * with the camera). */
static void ami_views_followed(const am_render_views *v, am_camera *moved)
{
    const am_rig *rig = am_render_model_rig(v->job.model);
    const double *root = am_render_model_joints(v->job.model) + (size_t)rig->head_joint[0] * 3;
    double d[3] = {root[0] - v->root0[0], root[1] - v->root0[1], 0};
    *moved = v->cam[0];
    for (int k = 0; k < 3; k++) moved->t[k] -= moved->R[k * 3] * d[0] + moved->R[k * 3 + 1] * d[1] + moved->R[k * 3 + 2] * d[2];
}

void am_render_views_frame_camera(const am_render_views *v, size_t frame, am_camera *cam)
{
    if (!v->follow) {
        *cam = v->cam[0];
        return;
    }
    const am_rig *rig = am_render_model_rig(v->job.model);
    if (v->job.motion) am_motion_pose(rig, v->job.motion, frame, v->pose);
    else am_rig_rest_pose(rig, v->pose);
    am_render_model_pose(v->job.model, v->pose);
    ami_views_followed(v, cam);
}

void am_render_views_frame(const am_render_views *v, size_t frame, am_raster *r)
{
    const am_rig *rig = am_render_model_rig(v->job.model);
    size_t n = (size_t)v->width * (size_t)v->height;
    memcpy(r->img.rgb, v->backdrop.img.rgb, n * 3);
    memcpy(r->depth, v->backdrop.depth, n * sizeof(float));
    if (v->job.motion) am_motion_pose(rig, v->job.motion, frame, v->pose);
    else am_rig_rest_pose(rig, v->pose);
    am_render_model_pose(v->job.model, v->pose);
    am_camera moved;
    if (v->follow) ami_views_followed(v, &moved);
    for (size_t i = 0; i < v->count; i++) {
        r->clip[0] = v->clip[i][0], r->clip[1] = v->clip[i][1], r->clip[2] = v->clip[i][2], r->clip[3] = v->clip[i][3];
        am_render_model_draw(v->job.model, r, v->follow ? &moved : &v->cam[i], &v->job.style);
    }
    r->clip[0] = r->clip[1] = 0;
    r->clip[2] = v->width;
    r->clip[3] = v->height;
}
