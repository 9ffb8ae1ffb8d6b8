/* anymove camera: calibrated cameras (SPEC.md 4.2.2) and the files that hold them.
 *
 * Models (OpenCV's, so calibrations from anipose, Pose2Sim, OpenCV and COLMAP's OPENCV /
 * OPENCV_FISHEYE read unchanged):
 * - AM_CAMERA_PINHOLE: x_cam = R p + t; (a, b) = (x/z, y/z); r2 = a^2 + b^2;
 *   a' = a (1 + k1 r2 + k2 r2^2 + k3 r2^3) + 2 p1 a b + p2 (r2 + 2 a^2), b' likewise with
 *   p1 (r2 + 2 b^2) + 2 p2 a b; u = fx a' + s b' + cx, v = fy b' + cy (dist = k1 k2 p1 p2 k3).
 * - AM_CAMERA_FISHEYE: r = |(a, b)|, theta = atan(r),
 *   theta_d = theta (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8),
 *   (a', b') = (theta_d / r) (a, b) (dist = k1..k4).
 * - AM_CAMERA_ORTHOGRAPHIC: (a', b') = (x, y) in metres, no division, no distortion; the two
 *   views of SPEC 3 are two such cameras (am_cameras_from_layout), so one triangulation and
 *   one fit serve both kinds of input.
 * Pixels: origin at the top-left pixel's corner, u right, v down (OpenCV). World -> camera as
 * SPEC 4.2.2: x_cam = R(rvec) p + t with R from the Rodrigues vector rvec; the camera looks
 * along its +z, its centre is -R^T t. Inside the code every length is metres: a calibration in
 * other units is read with a scale (translation * scale).
 *
 *     am_calib *cal = NULL;  am_error err = {0};
 *     am_calib_read_opts ro = {.scale = 0.001};              // the file is in mm
 *     if (am_calib_load("calibration.toml", &ro, &cal, &err) == AM_OK) {
 *         double uv[2], J[6];
 *         const double point[3] = {0.1, 0.2, 1.0};
 *         if (am_camera_project(&cal->cameras[0], point, uv, J)) { ... }
 *     }
 *     am_calib_free(cal);
 *
 * Pairs: am_calib_load / am_calib_parse / am_calib_create -> am_calib_free.
 * The readers are safe on untrusted input: every malformed file gives a status (with line and
 * column), never a crash.
 * Contexts (core.h): am_calib_parse and am_calib_load run in the scope of opts->ctx; the other
 * calls (am_calib_check's warnings included) in the caller's scope.
 */
#ifndef ANYMOVE_CAMERA_H
#define ANYMOVE_CAMERA_H

#include "core.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum am_camera_model {
    AM_CAMERA_PINHOLE,
    AM_CAMERA_FISHEYE,
    AM_CAMERA_ORTHOGRAPHIC,
    AM_CAMERA_MODEL_COUNT
} am_camera_model;

#define AM_CAMERA_NAME_MAX 128

typedef struct am_camera {
    char name[AM_CAMERA_NAME_MAX];
    am_camera_model model;
    double width, height;  /* image size, px */
    double K[9];           /* [fx s cx; 0 fy cy; 0 0 1], row-major; orthographic: px per metre */
    double dist[5];        /* pinhole: k1 k2 p1 p2 k3; fisheye: k1 k2 k3 k4 (dist[4] = 0) */
    double rvec[3];        /* Rodrigues vector, world -> camera */
    double t[3];           /* translation, metres */
    double R[9];           /* R(rvec), kept in step by am_camera_update */
} am_camera;

/* ---- rotations ---- */
/* Rodrigues vector (axis * angle) -> rotation matrix; exact near 0. */
void am_rodrigues_to_mat3(const double rvec[3], double R[9]);
/* Rotation matrix -> Rodrigues vector with angle in [0, pi]; robust near 0 and pi. R must be a
 * rotation (it is orthonormalised first, so small drift is harmless). */
void am_rodrigues_from_mat3(const double R[9], double rvec[3]);

/* ---- one camera ---- */
/* Recompute cam->R from cam->rvec (call after changing rvec). */
void am_camera_update(am_camera *cam);
/* A pinhole camera at `centre` looking at `target` with world `up` (not parallel to the view),
 * horizontal field of view fov_x (radians), square pixels, principal point at the image centre,
 * no distortion. */
void am_camera_look_at(am_camera *cam, const char *name, const double centre[3],
                       const double target[3], const double up[3], double width, double height,
                       double fov_x);
/* World point -> camera coordinates (x_cam = R point + t). */
void am_camera_to_cam(const am_camera *cam, const double point[3], double xc[3]);
/* Camera centre (-R^T t), unit viewing direction (R^T (0,0,1)), in world coordinates. */
void am_camera_centre(const am_camera *cam, double c[3]);
void am_camera_axis(const am_camera *cam, double d[3]);
/* Horizontal and vertical field of view (radians) of a perspective camera, measured through the
 * principal point to the image borders with the distortion model (NaN for orthographic). */
void am_camera_fov(const am_camera *cam, double *fov_x, double *fov_y);

/* Project a world point to pixels. J (may be NULL) receives d(u, v)/d point as [2][3] row-major,
 * analytic. Returns false when the point cannot be seen: behind a perspective camera (or
 * within 1e-9 m of its plane), or beyond the fisheye model's valid angle. uv and J are still
 * written (finite) in that case so solvers can continue. */
bool am_camera_project(const am_camera *cam, const double point[3], double uv[2], double J[6]);
/* Distortion only: ideal normalised (a, b) -> distorted normalised (a', b'), with D =
 * d(a', b')/d(a, b) [2][2] (may be NULL). Orthographic: identity. */
void am_camera_distort(const am_camera *cam, const double ab[2], double abd[2], double D[4]);
/* Pixels -> ideal normalised coordinates (a, b): x/z, y/z of the camera ray (orthographic:
 * x, y in metres). Inverts the distortion by damped Newton iterations; returns false when they
 * do not converge to 1e-10 (normalised units) within 30 steps, or the pixel lies outside the
 * model's invertible region; ab then holds the last iterate. */
bool am_camera_undistort(const am_camera *cam, const double uv[2], double ab[2]);
/* The two linear constraints a pixel puts on a world point, as rows of A [point; 1] = 0 in metres
 * of lateral offset (perspective: a (r3.p + t3) - (r1.p + t1), ...; orthographic: r1.p + t1 - a,
 * ...). Input: the undistorted (a, b). rows [2][4]. */
void am_camera_ray_rows(const am_camera *cam, const double ab[2], double rows[8]);
/* Pixels per metre of lateral offset at world point (fx / depth of the point; orthographic fx). */
double am_camera_px_per_m(const am_camera *cam, const double point[3]);

/* ---- a set of cameras (a calibration) ---- */
typedef struct am_calib_meta {
    char *key;        /* metadata key */
    char *value;      /* the value's TOML text, written back as it was read */
} am_calib_meta;

typedef struct am_calib {
    size_t camera_count;
    am_camera *cameras;     /* [C] */
    size_t meta_count;
    am_calib_meta *meta;    /* the [metadata] table, kept for writing back */
} am_calib;

/* An empty calibration with room for n cameras (all zero: fill them, then am_camera_update). */
AM_NODISCARD am_status am_calib_create(size_t n, am_calib **out, am_error *err);
/* Index of the camera named `name`, or -1. */
int am_calib_find(const am_calib *cal, const char *name);
void am_calib_free(am_calib *cal);

/* The two orthographic cameras of SPEC 3 ("front", "side") for a layout (NULL = the wolf
 * layout), on the 1280 x 720 canvas. */
AM_NODISCARD am_status am_cameras_from_layout(const am_layout *layout, am_calib **out,
                                              am_error *err);

typedef struct am_calib_read_opts {
    double scale;     /* calibration length unit in metres (0.001 for mm); 0 = 1 */
    am_context ctx;   /* allocator, limits; zero = inherited (core.h) */
} am_calib_read_opts;

/* Read an anipose / aniposelib calibration.toml or a Pose2Sim Calib*.toml (SPEC 4.2.2): one
 * table per camera with name (default: the table's name), size, matrix, distortions (0-5
 * values), rotation, translation, optional fisheye = true (and anymove's model =
 * "pinhole" | "fisheye" | "orthographic"); [metadata] kept. Every error names the file, line and
 * column: TOML syntax, a missing or mistyped key, a non-finite number ("NaN in a matrix"),
 * fx or fy <= 0, a size that is not positive, more than 5 (fisheye: 4) distortions, two cameras
 * with one name (AM_E_DUPLICATE), no camera at all (AM_E_EMPTY). */
AM_NODISCARD am_status am_calib_parse(const char *text, size_t len, const char *source,
                                      const am_calib_read_opts *opts, am_calib **out,
                                      am_error *err);
AM_NODISCARD am_status am_calib_load(const char *path, const am_calib_read_opts *opts,
                                     am_calib **out, am_error *err);
/* Write anipose's layout ([cam_0], ... then [metadata]), translations in metres, every double
 * in its shortest exact form; fisheye cameras get fisheye = true, orthographic ones model =
 * "orthographic". Atomic. */
AM_NODISCARD am_status am_calib_write(const am_calib *cal, const char *path, am_error *err);
AM_NODISCARD am_status am_calib_to_toml(const am_calib *cal, am_buf *out, am_error *err);

/* What `anymove cameras info` shows, per camera, and the checks behind its warnings. */
typedef struct am_camera_info {
    double centre[3];      /* world, metres */
    double axis[3];        /* unit look direction */
    double fov_x, fov_y;   /* radians (NaN for orthographic) */
    double focal_px;       /* fx */
} am_camera_info;
void am_camera_get_info(const am_camera *cam, am_camera_info *info);
/* Add a warning (AM_WARN_DEGRADED / AM_WARN_UNITS) to the current scope for each degenerate
 * trait: two cameras with identical parameters, perspective camera centres within 1 mm of each
 * other, a principal point outside the image, and a scene scale that is absurd for metres (the
 * centres spread over more than 200 m, or less than 5 cm). Returns the number of warnings added. */
size_t am_calib_check(const am_calib *cal);

#ifdef __cplusplus
}
#endif
#endif
