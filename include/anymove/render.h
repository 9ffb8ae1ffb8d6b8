/* anymove render: pictures of a result on the CPU. A small rasteriser of our own (z-buffer,
 * Gouraud-shaded triangles, anti-aliased lines and discs, a 5x7 bitmap font), the seed's studio,
 * the cameras of camera.h (SPEC 3's orthographic front and side views, a 3/4 perspective camera,
 * any calibrated camera), PNG through libpng and video through FFmpeg's libavcodec/libavformat
 * (frames streamed one at a time, never held). docs/render.md says why our own rasteriser.
 *
 *     am_render_model *m = NULL;  am_error err = {0};
 *     if (am_render_model_create(rig, NULL, &m, &err) == AM_OK) {   // NULL: bone shapes
 *         am_render_job job = {.model = m, .motion = mo, .view = AM_VIEW_LAYOUT,
 *                              .layout = &cr->layout, .path = "walk.mp4"};
 *         if (am_render_clip(&job, &err) != AM_OK) { ... }
 *     }
 *     am_render_model_free(m);
 *
 * Pixels: (u, v) with the origin at the top-left pixel's corner (camera.h); pixel (i, j) is
 * sampled at its centre (i + 0.5, j + 0.5), so a point projected to (u, v) lands on the pixel
 * whose square holds it.
 *
 * Pairs: am_image_init/am_png_read -> am_image_release; am_raster_init -> am_raster_release;
 * am_render_model_create/am_render_model_from_gltf -> am_render_model_free;
 * am_render_views_create -> am_render_views_free;
 * am_video_writer_open -> am_video_writer_close; am_video_reader_open -> am_video_reader_close;
 * am_paint_load -> am_paint_free.
 * Jobs (am_render_clip, am_overlay_clip, am_showcase_clip, am_dataset_generate, am_report_write)
 * run in the scope of their context (core.h); the rest runs in the caller's scope.
 */
#ifndef ANYMOVE_RENDER_H
#define ANYMOVE_RENDER_H

#include "camera.h"
#include "core.h"
#include "gltf.h"
#include "io.h"
#include "mocap.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- images ---------------------------------------------------------------------------- */
typedef struct am_image {
    int width, height;
    uint8_t *rgb;            /* [height][width][3] */
} am_image;

/* 1..16384 px a side (AM_E_VALUE). */
AM_NODISCARD am_status am_image_init(am_image *img, int width, int height, am_error *err);
void am_image_release(am_image *img);
void am_image_fill(am_image *img, const uint8_t rgb[3]);
/* 8-bit RGB PNG, atomically. */
AM_NODISCARD am_status am_png_write(const am_image *img, const char *path, am_error *err);
/* Any PNG libpng reads (palette, grey, 16-bit, alpha dropped) as 8-bit RGB. */
AM_NODISCARD am_status am_png_read(const char *path, am_image *img, am_error *err);

/* ---- the studio of the seed ------------------------------------------------------------ */
typedef struct am_studio {
    uint8_t wall[3];         /* 128, 130, 134 */
    uint8_t floor[3];        /* 152, 154, 158: the band below the ground row */
    uint8_t divider[3];      /* 40, 42, 46: between the two views of the layout */
    uint8_t body[3];         /* the mesh's colour where no paint says otherwise */
    double light[3];         /* direction towards the key light, world axes */
    double ambient;          /* share of the colour lit by no light, 0..1 */
} am_studio;
void am_studio_default(am_studio *studio);

/* ---- drawing (2D, into an image, clipped to a rectangle) ------------------------------- */
typedef struct am_raster {
    am_image img;
    float *depth;            /* [height][width]; smaller is nearer */
    int clip[4];             /* x0, y0, x1, y1 (exclusive): drawing stays inside */
} am_raster;

AM_NODISCARD am_status am_raster_init(am_raster *r, int width, int height, am_error *err);
void am_raster_release(am_raster *r);
/* Clip to [x0, x1) x [y0, y1) (clamped to the image) and clear the depth there. */
void am_raster_clip(am_raster *r, int x0, int y0, int x1, int y1);
void am_raster_clip_all(am_raster *r);
/* Anti-aliased line of `width` px (coverage of the pixel centre's distance to the segment),
 * blended with opacity alpha. */
void am_draw_line(am_raster *r, double u0, double v0, double u1, double v1, double width,
                  const uint8_t rgb[3], double alpha);
/* Anti-aliased filled disc; ring > 0 draws only a ring of that width. */
void am_draw_disc(am_raster *r, double u, double v, double radius, double ring,
                  const uint8_t rgb[3], double alpha);
void am_draw_rect(am_raster *r, int x0, int y0, int x1, int y1, const uint8_t rgb[3],
                  double alpha);
/* ASCII text in the 5x7 font, each font pixel scale x scale, top-left at (x, y); returns the
 * width drawn in pixels. Characters outside 32..126 show as '?'. */
int am_draw_text(am_raster *r, int x, int y, int scale, const char *text, const uint8_t rgb[3]);
/* Width in pixels that am_draw_text would draw. */
int am_text_width(const char *text, int scale);

/* ---- cameras --------------------------------------------------------------------------- */
typedef enum am_view {
    AM_VIEW_LAYOUT,          /* the 1280 x 720 canvas of SPEC 3: front | side, studio divider */
    AM_VIEW_FRONT,           /* the front half alone (W_FRONT x 720) */
    AM_VIEW_SIDE,            /* the side half alone (W_SIDE x 720) */
    AM_VIEW_THREE_QUARTER,   /* perspective from the front-right and above, following the root
                                horizontally (one height and distance), framing the clip */
    AM_VIEW_CAMERA,          /* a calibrated camera (am_render_job.camera) */
    AM_VIEW_CAMERAS,         /* every camera of a calibration (am_render_job.cameras) in a grid,
                                the overlay's: ceil(sqrt(C)) columns of 640 px cells (480 from
                                three columns) */
    AM_VIEW_COUNT
} am_view;

/* The name of a view ("layout", "front", "side", "three-quarter", "camera", "cameras"). */
const char *am_view_name(am_view view);
/* The view a --camera word names (the names above; "3/4" too); false if none. */
bool am_view_parse(const char *name, am_view *view);

/* The 3/4 camera: looks at the centre of box (min xyz, max xyz; the joints over the clip) from
 * azimuth_deg towards the right flank (0 = straight from the front, 90 = the side view's
 * direction) and elevation_deg above, with horizontal field of view fov_deg, far enough that
 * the box's bounding sphere fits the frame. Zeros take 35, 18, 40. */
typedef struct am_orbit {
    double azimuth_deg, elevation_deg, fov_deg;
} am_orbit;
void am_camera_three_quarter(am_camera *cam, const double box[6], const am_orbit *orbit,
                             int width, int height);

/* ---- the model: a rig with a skinned mesh or bone shapes ------------------------------- */
typedef struct am_render_mesh {
    size_t vertex_count;     /* V */
    const float *rest;       /* [V][3] rest positions, world axes (SPEC 1) */
    size_t triangle_count;   /* F */
    const int32_t *triangles;/* [F][3] */
    const int32_t *bone_index; /* [V][4] rig bones (SPEC 4.4) */
    const float *weight;     /* [V][4], rows sum to 1 */
    const uint8_t *colour;   /* [V][3] optional per-vertex colour (limb paint), or NULL */
} am_render_mesh;

typedef struct am_render_model am_render_model;

/* Copy the mesh (NULL: an octahedral bone shape per deforming bone, Blender's) and bind it to
 * rig. AM_E_VALUE for a bone index out of range or a triangle index >= V. */
AM_NODISCARD am_status am_render_model_create(const am_rig *rig, const am_render_mesh *mesh,
                                              am_render_model **out, am_error *err);
/* The skinned mesh of a glTF (every primitive of the nodes using skin 0; triangles only) bound
 * to the rig am_rig_from_gltf(doc, -1) made. A document without a skinned mesh gives bone
 * shapes. */
AM_NODISCARD am_status am_render_model_from_gltf(const am_gltf *doc, const am_rig *rig,
                                                 am_render_model **out, am_error *err);
void am_render_model_free(am_render_model *model);
/* Paint vertices by their heaviest bone: colour[b] [B][3] for painted bones, painted[b] 0 for
 * the others (they keep their colour). */
void am_render_model_paint(am_render_model *model, const uint8_t *colour, const uint8_t *painted);
const am_rig *am_render_model_rig(const am_render_model *model);
size_t am_render_model_vertex_count(const am_render_model *model);

/* Pose the model: world matrices pose [B][16] (am_motion_pose). Skins the vertices (SPEC 4.4)
 * and finds the keypoints and vertex normals. */
void am_render_model_pose(am_render_model *model, const double *pose);
/* The posed keypoints [J][3] and the box of the posed vertices (min xyz, max xyz). */
const double *am_render_model_joints(const am_render_model *model);
void am_render_model_box(const am_render_model *model, double box[6]);

enum {
    AM_DRAW_MESH = 1u << 0,   /* the shaded mesh (or bone shapes) */
    AM_DRAW_BONES = 1u << 1,  /* a line from head to tail per bone, over everything */
    AM_DRAW_JOINTS = 1u << 2, /* a disc per keypoint, over everything */
    AM_DRAW_DEFAULT = AM_DRAW_MESH
};

typedef struct am_draw_style {
    unsigned flags;           /* AM_DRAW_*; 0 = AM_DRAW_DEFAULT */
    const am_studio *studio;  /* NULL = am_studio_default */
    const uint8_t *joint_rgb; /* [J][3] colour per joint, or NULL (white) */
    const uint8_t *bone_rgb;  /* [3] or NULL (white) */
    double joint_radius;      /* px; 0 = 4 */
    double line_width;        /* px; 0 = 2 */
    double mesh_alpha;        /* 0 = opaque (1); less blends the mesh over what is there */
} am_draw_style;

/* Draw the posed model through cam into r (inside r's clip; depth-tested against what is in
 * r's depth buffer). Perspective triangles reaching behind the camera are left out. */
void am_render_model_draw(const am_render_model *model, am_raster *r, const am_camera *cam,
                          const am_draw_style *style);
/* The studio behind a view: wall, the floor band below the ground row (orthographic cameras)
 * or the ground plane z = 0 (perspective), inside r's clip. */
void am_render_backdrop(am_raster *r, const am_camera *cam, const am_studio *studio);

/* ---- a clip to pictures ---------------------------------------------------------------- */
typedef struct am_render_job {
    am_render_model *model;   /* posed by the job */
    const am_motion *motion;  /* bound to the model's rig; NULL = the rest pose, one frame */
    am_view view;
    const am_camera *camera;  /* AM_VIEW_CAMERA */
    const am_calib *cameras;  /* AM_VIEW_CAMERAS */
    const am_layout *layout;  /* NULL = the wolf's (SPEC 3) */
    const am_orbit *orbit;    /* AM_VIEW_THREE_QUARTER; NULL = the defaults */
    int width, height;        /* output size; 0 = the view's own (layout W_FRONT + W_SIDE x 720,
                                 front W_FRONT x 720, side W_SIDE x 720, 3/4 1280 x 720, camera:
                                 its image size, cameras: the grid's); another size scales the view to fit, centred */
    size_t first, count;      /* frames first .. first + count - 1; count 0 = to the end */
    am_draw_style style;
    /* Where: a .mp4/.mkv/.avi/.webm file (video), a .png file (the first frame only), or a
     * folder (one frame_%05d.png per frame). */
    const char *path;
    double fps;               /* video rate; 0 = the motion's */
    am_context ctx;           /* progress (stage "render"); zero = inherited */
} am_render_job;

/* Render the job's frames to its path. AM_E_VALUE for an empty frame range. */
AM_NODISCARD am_status am_render_clip(const am_render_job *job, am_error *err);

/* The cameras, clip rectangles and backdrop of a job, made once for all its frames (used by
 * am_render_clip, the composed videos and the tests). */
typedef struct am_render_views am_render_views;
AM_NODISCARD am_status am_render_views_create(const am_render_job *job, am_render_views **out,
                                              am_error *err);
void am_render_views_free(am_render_views *views);
void am_render_views_size(const am_render_views *views, int *width, int *height);
/* How many cameras (2 for the layout, C for a grid, else 1), camera i and its clip rectangle
 * (x0 y0 x1 y1).
 * The 3/4 camera is the first frame's; later frames move it by the root's horizontal travel. */
size_t am_render_views_count(const am_render_views *views);
const am_camera *am_render_views_camera(const am_render_views *views, size_t i, int clip[4]);
/* One frame (< the motion's frames; 0 without a motion) into r (of am_render_views_size):
 * backdrop, then the model posed at that frame. */
void am_render_views_frame(const am_render_views *views, size_t frame, am_raster *r);
/* The camera frame `frame` is drawn through (the first one of the views; the 3/4 camera moved
 * with the root). Poses the views' model at that frame, as am_render_views_frame does. */
void am_render_views_frame_camera(const am_render_views *views, size_t frame, am_camera *cam);

/* ---- limb paint (creature.json "paint") ------------------------------------------------ */
/* "paint": [{"colour": [r, g, b], "bones": ["thigh_L", ...]}, ...] (also an object of such
 * groups keyed by name; "color" is accepted; "#rrggbb", 0..255 integers or 0..1 reals), read by
 * am_creature_load (io.h) as bind reads it. */
typedef struct am_paint {
    uint8_t *colour;          /* [B][3] for the rig it was resolved against */
    uint8_t *painted;         /* [B] */
    size_t painted_count;
} am_paint;
/* Read creature.json's paint for rig: *out stays zero (no paint) when the key is absent. Bones
 * the rig does not have are warned about (AM_WARN_IGNORED_NAME). Errors name the file. */
AM_NODISCARD am_status am_paint_load(const char *creature_path, const am_rig *rig, am_paint *out,
                                     am_error *err);
void am_paint_free(am_paint *paint);
/* The creature's "showcase_camera" (azimuth_deg, elevation_deg, fov_deg): orbit is left as it
 * is when absent. */
AM_NODISCARD am_status am_orbit_load(const char *creature_path, am_orbit *orbit, am_error *err);

/* ---- video ----------------------------------------------------------------------------- */
typedef struct am_video_writer am_video_writer;
/* A video of width x height (even: rounded up by one) at fps, codec H.264 (libx264) when the
 * build has the encoder, else MPEG-4 part 2; the container from the extension (.mp4, .mkv,
 * .avi, .webm: VP9). Written to a temporary beside path and renamed by close. */
AM_NODISCARD am_status am_video_writer_open(const char *path, int width, int height, double fps,
                                            am_video_writer **out, am_error *err);
/* Encode one frame (img of the writer's size; a smaller odd-sized image is padded). */
AM_NODISCARD am_status am_video_writer_frame(am_video_writer *vw, const am_image *img,
                                             am_error *err);
/* Flush, finish the file and rename it into place; on failure (or when err is NULL after a
 * failed frame) the temporary goes. Frees vw either way. */
AM_NODISCARD am_status am_video_writer_close(am_video_writer *vw, am_error *err);
void am_video_writer_abort(am_video_writer *vw);
/* The codec name the writer uses ("libx264", "mpeg4"). */
const char *am_video_writer_codec(const am_video_writer *vw);

typedef struct am_video_reader am_video_reader;
typedef struct am_video_info {
    int width, height;
    double fps;
    int64_t frames;           /* from the container; -1 when it does not say */
} am_video_info;
AM_NODISCARD am_status am_video_reader_open(const char *path, am_video_reader **out,
                                            am_video_info *info, am_error *err);
/* The next frame as RGB into img (initialised to the video's size on first use); AM_E_EMPTY at
 * the end. */
AM_NODISCARD am_status am_video_reader_next(am_video_reader *vr, am_image *img, am_error *err);
void am_video_reader_close(am_video_reader *vr);

/* ---- the overlay and the showcase ------------------------------------------------------ */
/* The clip -> canvas affine A (canvas = A [x y 1]) of a clip of vi's size on a cw x ch canvas:
 * calib when given, the identity for a clip of the canvas's size, a stretch for one of the same
 * shape; anything else is AM_E_SHAPE naming the video (a clip cropped or padded by the video
 * model needs det.npz's calib). */
AM_NODISCARD am_status am_clip_affine(const am_video_info *vi, const double *calib, int cw, int ch,
                                      const char *video, double A[6], am_error *err);
/* Joints coloured by confidence: red at 0 through yellow to green at 1. */
void am_conf_colour(double conf, uint8_t rgb[3]);

typedef struct am_overlay_job {
    const am_det *det;        /* two-view detections (SPEC 4.2), canvas pixels; or NULL */
    const am_rig *rig;        /* with motion: the fit reprojected (may be NULL) */
    const am_motion *motion;  /* bound to rig */
    const am_layout *layout;  /* NULL = the wolf's */
    const char *video;        /* the clip to draw on, or NULL: the studio background */
    const double *calib;      /* [2][3] clip -> canvas affine (SPEC 4.2 calib), or NULL: det's,
                                 else an estimate (a plain stretch of the clip onto the canvas
                                 when its aspect is 16:9, otherwise AM_E_SHAPE) */
    /* N calibrated cameras instead of the two views (det NULL) */
    const am_mdet *mdet;      /* the detections of every camera */
    const am_calib *cameras;  /* matched to mdet's cameras by name */
    const char *const *camera_video; /* [C] a clip per camera (entries may be NULL), or NULL */
    const am_joints *points;  /* N cameras without a rig: 3D points reprojected (triangulate's), */
    const int32_t *edges;     /* [edge_count][2] joined by lines; or NULL */
    size_t edge_count;
    size_t first, count;      /* frames first .. first + count - 1; count 0 = to the end */
    double joint_radius;      /* px of the detection discs; 0 = 4 */
    const char *path;         /* output video or folder (as am_render_job) */
    double fps;               /* 0: det's, else the motion's, else 30 */
    am_context ctx;           /* stage "overlay" */
} am_overlay_job;
/* One output frame per input frame: the clip (or the studio), the fitted rig reprojected
 * (white bones), the detections (discs coloured by confidence) and, top-left of each view, the
 * frame number and that frame's reprojection error (px, mean over seen joints). For N cameras,
 * a grid of the views. AM_E_SHAPE when the clip's size does not match the canvas and there is
 * no calib to map it. */
AM_NODISCARD am_status am_overlay_clip(const am_overlay_job *job, am_error *err);

typedef struct am_showcase_job {
    am_render_model *model;   /* the rig with its mesh (posed by the job) */
    const am_motion *motion;
    const am_det *det;        /* may be NULL (no detections drawn) */
    const char *video;        /* may be NULL (the studio with the detections) */
    const double *calib;      /* as am_overlay_job */
    const am_layout *layout;
    const am_orbit *orbit;
    int panel_height;         /* px; 0 = 360 */
    /* A retarget's source: its character with its motion. When set, the panels are the source
     * in 3/4 | the result (model, motion) in 3/4 | both through the result's 3/4 camera (the
     * source see-through over the result); det, video and layout are not used. */
    am_render_model *source_model;
    const am_motion *source_motion;
    const char *path;
    am_context ctx;           /* stage "showcase" */
} am_showcase_job;
/* The seed's side-by-side video, one frame per clip frame: the input with its detections | the
 * rig in 3/4 | the input with the rig drawn through the same (side) camera; after a retarget,
 * source | result | both through one camera. */
AM_NODISCARD am_status am_showcase_clip(const am_showcase_job *job, am_error *err);

/* ---- training data --------------------------------------------------------------------- */
typedef struct am_dataset_job {
    am_render_model *model;   /* posed by the job */
    const am_layout *layout;
    size_t count;             /* poses */
    uint64_t seed;
    double limit_share;       /* angles drawn from this share of each limit range around its
                                 middle (free axes: +-45 deg); 0 = 1 */
    const char *dir;          /* <i>_front.png, <i>_side.png, <i>_meta.json */
    am_context ctx;           /* stage "dataset" */
} am_dataset_job;
/* N random poses inside the limits, each in both views on a varied backdrop (wall, floor and
 * light drawn around the studio's), with <i>_meta.json: the joint names, the true joints in
 * metres and in layout pixels (front and side, the canvas coordinates of SPEC 3), the Euler
 * angles and the backdrop used. */
AM_NODISCARD am_status am_dataset_generate(const am_dataset_job *job, am_error *err);

/* ---- the HTML report ------------------------------------------------------------------- */
typedef struct am_report_job {
    const char *title;
    const am_rig *rig;        /* or NULL: the points below */
    const am_motion *motion;  /* with joints and extra_json (reproj_px, sync, contacts) */
    const am_joints *points;  /* without a rig: 3D points (triangulate's), drawn by the viewer */
    const int32_t *edges;     /* [edge_count][2] point pairs the viewer joins, or NULL */
    size_t edge_count;
    const am_det *det;        /* optional: reprojection per frame and view */
    const am_mdet *mdet;      /* or N cameras' detections with their calibration: reprojection */
    const am_calib *cameras;  /* per frame and camera (motion.json's time_offsets applied) */
    const am_layout *layout;  /* NULL = the wolf's */
    const char *const *feet;  /* [feet_count] paw-height plots; NULL = motion's sync feet */
    size_t feet_count;
    const double *truth_joints; /* [T][J] in the rig's joint order, or NULL */
    const char *gate_text;    /* report.txt of the stage (shown as written), or NULL */
    const void *glb;          /* animation.glb bytes for the viewer (embedded), or NULL */
    size_t glb_len;
    const char *three_dir;    /* the npm package three (with build/ and examples/), or NULL:
                                 the page says the viewer needs it */
    const char *html_path;    /* report.html */
    const char *script_path;  /* the three.js modules beside it (classic script), or NULL */
    am_context ctx;           /* stage "report" */
} am_report_job;
/* One page that works from a file:// URL with no network: the quality-gate verdicts first (paw
 * agreement, reprojection per view or camera), inline SVG plots (reprojection per frame and view
 * or camera, paw heights in both views, contacts,
 * per-joint error against the truth, per-bone angles, foot slide per plant), and a three.js
 * viewer playing the GLB (play/pause, frame scrub, joints toggle). Without a rig the page shows
 * points: the reprojection per camera and the viewer moving the points (and edges) itself. The
 * page exposes window.anymoveViewer (setFrame(i), joints() -> world positions) for tests. */
AM_NODISCARD am_status am_report_write(const am_report_job *job, am_error *err);

/* ---- a pipeline result's pictures (solve, rig, ik, triangulate: --report / --render) ------ */
/* report.html (with its report_three.js) and two renders of the middle frame:
 * render_layout.png (SPEC 3's front | side; render_cameras.png, a grid through the calibrated
 * cameras, with through_cameras) and render_three_quarter.png, joints drawn over the mesh; for
 * points without a rig (triangulate) render_cameras.png alone, the detections with the points
 * reprojected through each camera. What the CLI's --report / --render write, for every caller
 * of the library (the Python binding's save(report=, render=)). */
typedef struct am_pictures {
    bool report, render;
    const char *title;          /* the page's heading: the command's input */
    const am_rig *rig;          /* or NULL: points (triangulate) */
    const am_motion *motion;    /* bound to rig, with joints */
    const am_joints *points;    /* without a rig: the report's viewer moves them, and the render
                                   is render_cameras.png alone (mdet, cameras needed) */
    const int32_t *edges;       /* [edge_count][2] point pairs drawn joined, or NULL */
    size_t edge_count;
    bool points_only;           /* a points result (set before am_pictures_names) */
    const am_det *det;          /* two-view detections, or NULL */
    const am_mdet *mdet;        /* or N cameras' detections, with */
    const am_calib *cameras;    /* their calibration: reprojection per camera */
    bool through_cameras;       /* render through the cameras (render_cameras.png, a grid) instead
                                   of the layout; set before am_pictures_names */
    const am_creature *creature;/* its layout and feet, or NULL */
    const double *truth;        /* [T][J][3] in the rig's joint order (NaN: unknown), or NULL */
    const char *gate_text;      /* the stage's own report, shown as written, or NULL */
    const char *glb;            /* the output set's member the viewer plays, or NULL */
    const char *glb_path;       /* or a file outside the set (a temporary), or NULL */
    const am_render_mesh *mesh; /* the skinned surface to render, or NULL: bone shapes */
    const am_gltf *mesh_doc;    /* or the glTF character rig came from (am_rig_from_gltf(doc, -1)):
                                   its skinned mesh */
    bool frame_layout;          /* the layout render framed on the clip, not the creature's or
                                   the wolf's: results not captured through a layout (rig, ik) */
    const char *three_dir;      /* the npm package three for the viewer, or NULL (the page says
                                   the viewer needs it) */
    am_context ctx;             /* the jobs' context (stages "report", "render") */
} am_pictures;
/* The members they add to an output set, appended to names (room for 4 more) at *count. */
void am_pictures_names(const am_pictures *p, const char **names, size_t *count);
/* report.html (and its three.js script beside it) for a result: glb_path the GLB the viewer
 * plays (NULL: none), read from the file (written before). */
AM_NODISCARD am_status am_pictures_report(const am_pictures *p, const char *glb_path, const char *html_path,
                                          const char *script_path, am_error *err);
/* Write them into the set (after the result's own files, the GLB among them), at the set's
 * paths of the names am_pictures_names gave. */
AM_NODISCARD am_status am_pictures_write(const am_pictures *p, am_outset *set, am_error *err);

#ifdef __cplusplus
}
#endif
#endif
