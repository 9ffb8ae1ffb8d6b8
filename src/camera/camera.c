/* Camera models: Rodrigues rotations, projection with analytic derivatives, undistortion.
 *
 * This work is based on:
 * - OpenCV's calib3d models (cv::projectPoints, cv::fisheye::projectPoints): the pinhole
 *   distortion k1 k2 p1 p2 k3 and the equidistant fisheye k1..k4, reproduced to the formula.
 * - R. Hartley, A. Zisserman, "Multiple View Geometry", 2nd ed.: 6.3 (affine / orthographic
 *   cameras), 12.2 (linear triangulation; the rows of am_camera_ray_rows).
 * - Rodrigues' formula with the series near 0 and the symmetric-part axis near pi
 *   (as in cv::Rodrigues and Ceres' rotation.h).
 *
 * Undistortion is Newton's method on the forward model with its analytic 2x2 Jacobian, halving
 * the step whenever the residual grows (OpenCV's fixed-point loop diverges at the corners of
 * strongly barrel-distorted lenses such as the k1 = -0.34 of the aniposelib mouse rig), with a
 * convergence check instead of a fixed iteration count.
 */
#include <math.h>
#include <string.h>

#include "anymove/camera.h"
#include "anymove/math.h"

void am_rodrigues_to_mat3(const double r[3], double R[9])
{
    double th2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    double a, b;
    if (th2 < 1e-12) {
        /* sin(th)/th and (1 - cos th)/th^2 by their series: exact to double near zero. */
        a = 1.0 - th2 / 6.0;
        b = 0.5 - th2 / 24.0;
    } else {
        double th = sqrt(th2);
        a = sin(th) / th;
        b = (1.0 - cos(th)) / th2;
    }
    double x = r[0], y = r[1], z = r[2];
    R[0] = 1.0 - b * (y * y + z * z);
    R[1] = -a * z + b * x * y;
    R[2] = a * y + b * x * z;
    R[3] = a * z + b * x * y;
    R[4] = 1.0 - b * (x * x + z * z);
    R[5] = -a * x + b * y * z;
    R[6] = -a * y + b * x * z;
    R[7] = a * x + b * y * z;
    R[8] = 1.0 - b * (x * x + y * y);
}

void am_rodrigues_from_mat3(const double Rin[9], double r[3])
{
    /* The quaternion route is stable everywhere (Shepperd picks the largest component), and
     * orthonormalises a slightly drifted matrix on the way. */
    double q[4];
    am_quat_from_mat3(Rin, q);
    am_quat_to_rotvec(q, r);
}

void am_camera_update(am_camera *cam) { am_rodrigues_to_mat3(cam->rvec, cam->R); }

void am_camera_to_cam(const am_camera *cam, const double X[3], double xc[3])
{
    const double *R = cam->R;
    xc[0] = R[0] * X[0] + R[1] * X[1] + R[2] * X[2] + cam->t[0];
    xc[1] = R[3] * X[0] + R[4] * X[1] + R[5] * X[2] + cam->t[1];
    xc[2] = R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + cam->t[2];
}

void am_camera_centre(const am_camera *cam, double c[3])
{
    const double *R = cam->R, *t = cam->t;
    for (int i = 0; i < 3; i++) c[i] = -(R[i] * t[0] + R[3 + i] * t[1] + R[6 + i] * t[2]);
}

void am_camera_axis(const am_camera *cam, double d[3])
{
    d[0] = cam->R[6];
    d[1] = cam->R[7];
    d[2] = cam->R[8];
}

void am_camera_look_at(am_camera *cam, const char *name, const double centre[3],
                       const double target[3], const double up[3], double width, double height,
                       double fov_x)
{
    memset(cam, 0, sizeof *cam);
    if (name) {
        strncpy(cam->name, name, sizeof cam->name - 1);
    }
    cam->model = AM_CAMERA_PINHOLE;
    cam->width = width;
    cam->height = height;
    double z[3], x[3], y[3], down[3] = {-up[0], -up[1], -up[2]};
    am_vec3_sub(target, centre, z);
    am_vec3_normalize(z, z);
    /* Camera y points down the image: x = y cross z with y ~ -up. */
    am_vec3_cross(down, z, x);
    am_vec3_normalize(x, x);
    am_vec3_cross(z, x, y);
    double R[9] = {x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]};
    am_rodrigues_from_mat3(R, cam->rvec);
    am_camera_update(cam);
    for (int i = 0; i < 3; i++)
        cam->t[i] = -(cam->R[3 * i] * centre[0] + cam->R[3 * i + 1] * centre[1] + cam->R[3 * i + 2] * centre[2]);
    double f = 0.5 * width / tan(0.5 * fov_x);
    cam->K[0] = f;
    cam->K[2] = 0.5 * width;
    cam->K[4] = f;
    cam->K[5] = 0.5 * height;
    cam->K[8] = 1.0;
}

/* Fisheye: theta_d(theta) and its derivative. */
static double ami_fisheye_theta_d(const double *k, double th, double *dth)
{
    double t2 = th * th, t4 = t2 * t2, t6 = t4 * t2, t8 = t4 * t4;
    if (dth) *dth = 1.0 + 3.0 * k[0] * t2 + 5.0 * k[1] * t4 + 7.0 * k[2] * t6 + 9.0 * k[3] * t8;
    return th * (1.0 + k[0] * t2 + k[1] * t4 + k[2] * t6 + k[3] * t8);
}

void am_camera_distort(const am_camera *cam, const double ab[2], double o[2], double D[4])
{
    const double a = ab[0], b = ab[1], *k = cam->dist;
    const double r2 = a * a + b * b;
    switch (cam->model) {
    case AM_CAMERA_PINHOLE: {
        const double k1 = k[0], k2 = k[1], p1 = k[2], p2 = k[3], k3 = k[4];
        double rad = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
        double drad = k1 + r2 * (2.0 * k2 + 3.0 * k3 * r2); /* d rad / d r2 */
        o[0] = a * rad + 2.0 * p1 * a * b + p2 * (r2 + 2.0 * a * a);
        o[1] = b * rad + p1 * (r2 + 2.0 * b * b) + 2.0 * p2 * a * b;
        if (D) {
            D[0] = rad + 2.0 * a * a * drad + 2.0 * p1 * b + 6.0 * p2 * a;
            D[1] = 2.0 * a * b * drad + 2.0 * p1 * a + 2.0 * p2 * b;
            D[2] = 2.0 * a * b * drad + 2.0 * p1 * a + 2.0 * p2 * b;
            D[3] = rad + 2.0 * b * b * drad + 6.0 * p1 * b + 2.0 * p2 * a;
        }
        return;
    }
    case AM_CAMERA_FISHEYE: {
        /* (a', b') = s(r) (a, b) with s = theta_d / r; D = s I + g (a, b)(a, b)^T, g = s'(r) / r. */
        double r = sqrt(r2), s, g;
        if (r < 1e-7) {
            s = 1.0 + (k[0] - 1.0 / 3.0) * r2;
            g = 2.0 * (k[0] - 1.0 / 3.0);
        } else {
            double th = atan(r), dthd;
            double thd = ami_fisheye_theta_d(k, th, &dthd);
            s = thd / r;
            double ds = (dthd / (1.0 + r2) * r - thd) / r2;
            g = ds / r;
        }
        o[0] = s * a;
        o[1] = s * b;
        if (D) {
            D[0] = s + g * a * a;
            D[1] = g * a * b;
            D[2] = g * a * b;
            D[3] = s + g * b * b;
        }
        return;
    }
    default:
        o[0] = a;
        o[1] = b;
        if (D) {
            D[0] = D[3] = 1.0;
            D[1] = D[2] = 0.0;
        }
        return;
    }
}

bool am_camera_project(const am_camera *cam, const double X[3], double uv[2], double J[6])
{
    double xc[3];
    am_camera_to_cam(cam, X, xc);
    const double *K = cam->K, *R = cam->R;
    bool ok = true;
    double ab[2], dab[6]; /* d(a, b) / d xc */
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        ab[0] = xc[0];
        ab[1] = xc[1];
        dab[0] = 1, dab[1] = 0, dab[2] = 0, dab[3] = 0, dab[4] = 1, dab[5] = 0;
    } else {
        double z = xc[2];
        if (!(z > 1e-9)) {
            ok = false;
            z = 1e-9;
        }
        double iz = 1.0 / z;
        ab[0] = xc[0] * iz;
        ab[1] = xc[1] * iz;
        dab[0] = iz, dab[1] = 0, dab[2] = -ab[0] * iz;
        dab[3] = 0, dab[4] = iz, dab[5] = -ab[1] * iz;
        /* The fisheye model is defined up to 90 degrees off axis; the polynomial may also fold
         * back before that, where the projection stops being one-to-one. */
        if (cam->model == AM_CAMERA_FISHEYE) {
            double r = sqrt(ab[0] * ab[0] + ab[1] * ab[1]), d;
            ami_fisheye_theta_d(cam->dist, atan(r), &d);
            if (d <= 0.0) ok = false;
        }
    }
    double abd[2], D[4];
    am_camera_distort(cam, ab, abd, J ? D : NULL);
    uv[0] = K[0] * abd[0] + K[1] * abd[1] + K[2];
    uv[1] = K[4] * abd[1] + K[5];
    if (J) {
        /* d uv / d abd = [fx s; 0 fy]; chain: Kp * D * dab * R. */
        double KD[4] = {K[0] * D[0] + K[1] * D[2], K[0] * D[1] + K[1] * D[3], K[4] * D[2], K[4] * D[3]};
        double M[6];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) M[3 * i + j] = KD[2 * i] * dab[j] + KD[2 * i + 1] * dab[3 + j];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                J[3 * i + j] = M[3 * i] * R[j] + M[3 * i + 1] * R[3 + j] + M[3 * i + 2] * R[6 + j];
    }
    return ok;
}

/* Invert theta_d(theta) = thd for theta in [0, pi/2) by safeguarded Newton. */
static bool ami_fisheye_invert(const double *k, double thd, double *th_out)
{
    double th = thd < 1.5 ? thd : 1.5, lo = 0.0, hi = AM_PI / 2;
    for (int it = 0; it < 50; it++) {
        double d, f = ami_fisheye_theta_d(k, th, &d) - thd;
        if (fabs(f) < 1e-13) {
            *th_out = th;
            return d > 0.0;
        }
        if (f > 0) hi = th;
        else lo = th;
        double next = d > 0 ? th - f / d : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        th = next;
    }
    *th_out = th;
    return false;
}

bool am_camera_undistort(const am_camera *cam, const double uv[2], double ab[2])
{
    const double *K = cam->K;
    double yd = (uv[1] - K[5]) / K[4];
    double xd = (uv[0] - K[2] - K[1] * yd) / K[0];
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        ab[0] = xd;
        ab[1] = yd;
        return isfinite(xd) && isfinite(yd);
    }
    if (!(isfinite(xd) && isfinite(yd))) {
        ab[0] = xd;
        ab[1] = yd;
        return false;
    }
    if (cam->model == AM_CAMERA_FISHEYE) {
        double rd = sqrt(xd * xd + yd * yd);
        if (rd < 1e-15) {
            ab[0] = xd;
            ab[1] = yd;
            return true;
        }
        double th;
        bool ok = ami_fisheye_invert(cam->dist, rd, &th);
        double s = tan(th) / rd;
        ab[0] = xd * s;
        ab[1] = yd * s;
        return ok && th < AM_PI / 2 - 1e-6;
    }
    const double *k = cam->dist;
    if (k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] == 0 && k[4] == 0) {
        ab[0] = xd;
        ab[1] = yd;
        return true;
    }
    double x[2] = {xd, yd}, f[2], D[4];
    am_camera_distort(cam, x, f, D);
    double res = hypot(f[0] - xd, f[1] - yd);
    for (int it = 0; it < 30; it++) {
        if (res < 1e-10) {
            /* Past the fold of the radial polynomial the forward model maps several rays to one
             * pixel; only the branch where it is increasing (det D > 0) and keeps the ray's
             * side of the axis (radial factor > 0) is the real ray. */
            ab[0] = x[0];
            ab[1] = x[1];
            double r2 = x[0] * x[0] + x[1] * x[1];
            double rad = 1.0 + r2 * (k[0] + r2 * (k[1] + r2 * k[4]));
            return rad > 0.0 && D[0] * D[3] - D[1] * D[2] > 0.0;
        }
        double det = D[0] * D[3] - D[1] * D[2];
        if (!(fabs(det) > 1e-300)) break;
        double r0 = xd - f[0], r1 = yd - f[1];
        double dx = (D[3] * r0 - D[1] * r1) / det, dy = (-D[2] * r0 + D[0] * r1) / det;
        double step = 1.0;
        bool better = false;
        for (int h = 0; h < 20; h++) {
            double xn[2] = {x[0] + step * dx, x[1] + step * dy}, fn[2], Dn[4];
            am_camera_distort(cam, xn, fn, Dn);
            double rn = hypot(fn[0] - xd, fn[1] - yd);
            if (rn < res) {
                x[0] = xn[0];
                x[1] = xn[1];
                memcpy(f, fn, sizeof f);
                memcpy(D, Dn, sizeof D);
                res = rn;
                better = true;
                break;
            }
            step *= 0.5;
        }
        if (!better) break;
    }
    ab[0] = x[0];
    ab[1] = x[1];
    return false;
}

void am_camera_ray_rows(const am_camera *cam, const double ab[2], double rows[8])
{
    const double *R = cam->R, *t = cam->t;
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        for (int i = 0; i < 2; i++) {
            rows[4 * i + 0] = R[3 * i + 0];
            rows[4 * i + 1] = R[3 * i + 1];
            rows[4 * i + 2] = R[3 * i + 2];
            rows[4 * i + 3] = t[i] - ab[i];
        }
        return;
    }
    for (int i = 0; i < 2; i++) {
        rows[4 * i + 0] = ab[i] * R[6] - R[3 * i + 0];
        rows[4 * i + 1] = ab[i] * R[7] - R[3 * i + 1];
        rows[4 * i + 2] = ab[i] * R[8] - R[3 * i + 2];
        rows[4 * i + 3] = ab[i] * t[2] - t[i];
    }
}

double am_camera_px_per_m(const am_camera *cam, const double X[3])
{
    double f = 0.5 * (cam->K[0] + cam->K[4]);
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) return f;
    double xc[3];
    am_camera_to_cam(cam, X, xc);
    return xc[2] > 1e-9 ? f / xc[2] : f / 1e-9;
}

/* Angle between the optical axis and the ray through pixel (u, v). */
static double ami_half_angle(const am_camera *cam, double u, double v)
{
    double ab[2];
    am_camera_undistort(cam, (const double[2]){u, v}, ab);
    return atan(hypot(ab[0], ab[1]));
}

void am_camera_fov(const am_camera *cam, double *fov_x, double *fov_y)
{
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        *fov_x = *fov_y = NAN;
        return;
    }
    double cx = cam->K[2], cy = cam->K[5];
    *fov_x = ami_half_angle(cam, 0.0, cy) + ami_half_angle(cam, cam->width, cy);
    *fov_y = ami_half_angle(cam, cx, 0.0) + ami_half_angle(cam, cx, cam->height);
}

void am_camera_get_info(const am_camera *cam, am_camera_info *info)
{
    am_camera_centre(cam, info->centre);
    am_camera_axis(cam, info->axis);
    am_camera_fov(cam, &info->fov_x, &info->fov_y);
    info->focal_px = cam->K[0];
}
