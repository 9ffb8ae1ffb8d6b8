/* Camera sets: creation, lookup, the two orthographic views of SPEC 3, and the sanity checks
 * behind `anymove cameras info`'s warnings. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/camera.h"
#include "anymove/math.h"
#include "core/internal.h"

am_status am_calib_create(size_t n, am_calib **out, am_error *err)
{
    assert(out);
    *out = NULL;
    am_calib *cal = am_alloc(sizeof *cal);
    if (!cal) return AM_FAIL(err, AM_E_NOMEM, "calibration");
    cal->cameras = am_alloc_array(n ? n : 1, sizeof *cal->cameras);
    if (!cal->cameras) {
        am_free(cal);
        return AM_FAIL(err, AM_E_NOMEM, "%zu cameras", n);
    }
    cal->camera_count = n;
    *out = cal;
    return AM_OK;
}

int am_calib_find(const am_calib *cal, const char *name)
{
    for (size_t c = 0; c < cal->camera_count; c++)
        if (strcmp(cal->cameras[c].name, name) == 0) return (int)c;
    return -1;
}

void am_calib_free(am_calib *cal)
{
    if (!cal) return;
    for (size_t k = 0; k < cal->meta_count; k++) {
        am_free(cal->meta[k].key);
        am_free(cal->meta[k].value);
    }
    am_free(cal->meta);
    am_free(cal->cameras);
    am_free(cal);
}

am_status am_cameras_from_layout(const am_layout *layout, am_calib **out, am_error *err)
{
    am_layout L;
    if (layout) L = *layout;
    else am_layout_default(&L);
    AMI_CHECK(err, L.m_per_px > 0 && isfinite(L.m_per_px), AM_E_VALUE, "layout M_PER_PX = %g", L.m_per_px);
    AMI_TRY(am_calib_create(2, out, err));
    /* Front: camera at -Y looking along +Y, u = FRONT_CX + X / m, v = GROUND_V - Z / m, so its
     * axes are x_cam = X, y_cam = -Z, z_cam = Y. Side: at -X looking along +X with the head to
     * the right, u = SIDE_CX - Y / m: x_cam = -Y, y_cam = -Z, z_cam = X. */
    static const double R_front[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
    static const double R_side[9] = {0, -1, 0, 0, 0, -1, 1, 0, 0};
    for (int v = 0; v < 2; v++) {
        am_camera *c = &(*out)->cameras[v];
        strcpy(c->name, v == 0 ? "front" : "side");
        c->model = AM_CAMERA_ORTHOGRAPHIC;
        c->width = L.w_front + L.w_side;
        c->height = 720;
        c->K[0] = c->K[4] = 1.0 / L.m_per_px;
        c->K[2] = v == 0 ? L.front_cx : L.side_cx;
        c->K[5] = L.ground_v;
        c->K[8] = 1.0;
        am_rodrigues_from_mat3(v == 0 ? R_front : R_side, c->rvec);
        am_camera_update(c);
        /* Orthographic cameras have no centre; place it 10 m back along the axis so `info`
         * shows a sensible point (it changes no projection). */
        c->t[2] = 10.0;
    }
    return AM_OK;
}

static bool ami_same_camera(const am_camera *a, const am_camera *b)
{
    return a->model == b->model && memcmp(a->K, b->K, sizeof a->K) == 0 &&
           memcmp(a->dist, b->dist, sizeof a->dist) == 0 && memcmp(a->rvec, b->rvec, sizeof a->rvec) == 0 &&
           memcmp(a->t, b->t, sizeof a->t) == 0;
}

size_t am_calib_check(const am_calib *cal)
{
    size_t n = 0, C = cal->camera_count;
    double spread = 0.0;
    for (size_t i = 0; i < C; i++) {
        const am_camera *a = &cal->cameras[i];
        double ca[3];
        am_camera_centre(a, ca);
        if (a->K[2] < 0 || a->K[2] > a->width || a->K[5] < 0 || a->K[5] > a->height) {
            ami_warn(AM_WARN_DEGRADED, "camera '%s': principal point (%g, %g) lies outside its %gx%g image",
                     a->name, a->K[2], a->K[5], a->width, a->height);
            n++;
        }
        for (size_t j = i + 1; j < C; j++) {
            const am_camera *b = &cal->cameras[j];
            double cb[3];
            am_camera_centre(b, cb);
            double d = am_vec3_dist(ca, cb);
            if (d > spread) spread = d;
            if (ami_same_camera(a, b)) {
                ami_warn(AM_WARN_DEGRADED, "cameras '%s' and '%s' have identical parameters (a copied entry?)",
                         a->name, b->name);
                n++;
            } else if (d < 1e-3 && a->model != AM_CAMERA_ORTHOGRAPHIC && b->model != AM_CAMERA_ORTHOGRAPHIC) {
                ami_warn(AM_WARN_DEGRADED,
                         "cameras '%s' and '%s' sit at one point (%.3g m apart): they cannot triangulate",
                         a->name, b->name, d);
                n++;
            }
        }
    }
    bool perspective = false;
    for (size_t i = 0; i < C; i++) perspective |= cal->cameras[i].model != AM_CAMERA_ORTHOGRAPHIC;
    if (C >= 2 && perspective && spread > 200.0) {
        ami_warn(AM_WARN_UNITS,
                 "the cameras spread over %.4g m: is this calibration in millimetres? (--scale 0.001)", spread);
        n++;
    } else if (C >= 2 && perspective && spread > 0.0 && spread < 0.05) {
        ami_warn(AM_WARN_UNITS,
                 "the cameras spread over only %.3g m: is this calibration in kilometres or another unit? (--scale)",
                 spread);
        n++;
    }
    return n;
}
