/* Private helpers of src/render shared by its files. */
#ifndef AMI_RENDER_INTERNAL_H
#define AMI_RENDER_INTERNAL_H

#include "anymove/render.h"

/* The 5x7 font: 5 column bytes per character 32..126, bit 0 the top row. */
extern const uint8_t ami_font5x7[95][5];

/* Blend rgb into the pixel (x, y) with opacity a (0..1); no clip test. */
static inline void ami_blend(am_image *img, int x, int y, const uint8_t rgb[3], double a)
{
    uint8_t *p = img->rgb + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
    for (int c = 0; c < 3; c++) p[c] = (uint8_t)(p[c] + (rgb[c] - p[c]) * a + 0.5);
}

/* A copy of src scaled into dst's rectangle (x0, y0, w, h) by bilinear filtering. */
void ami_image_blit_scaled(const am_image *src, am_image *dst, int x0, int y0, int w, int h);
/* The canvas -> image affine of a clip: canvas (u, v) = A [x y 1]; inverse maps back. */
void ami_affine_invert(const double A[6], double inv[6]);
/* Draw a clip frame mapped onto the canvas by A (clip pixels -> canvas pixels) into r's
 * rectangle (x0, y0) .. (x0 + w, y0 + h), which shows canvas columns cu0 .. cu0 + cw scaled by
 * s (canvas px -> output px). */
void ami_image_warp(const am_image *clip, const double A[6], am_raster *r, int x0, int y0,
                    int w, int h, double cu0, double s);
/* The next frame of a clip drawn behind other frames: at the clip's end (AM_E_EMPTY) the
 * reader is closed, *vr set NULL and err cleared, since a clip shorter than what is drawn on
 * it is not a failure; the caller carries on without it (and may warn). */
AM_NODISCARD am_status ami_clip_next(am_video_reader **vr, am_image *clip, am_error *err);
/* ami_clip_next n times (or until the clip ends): the clip's frames before the first drawn. */
AM_NODISCARD am_status ami_clip_skip(am_video_reader **vr, size_t n, am_image *clip, am_error *err);
/* A frame sink: a video file, one PNG (the first frame) or a folder of PNGs. */
typedef struct ami_sink {
    int kind;                 /* 0 video, 1 one png, 2 folder */
    am_video_writer *video;
    char *path;
    size_t written;
} ami_sink;
AM_NODISCARD am_status ami_sink_open(ami_sink *s, const char *path, int width, int height,
                                     double fps, am_error *err);
AM_NODISCARD am_status ami_sink_frame(ami_sink *s, const am_image *img, am_error *err);
AM_NODISCARD am_status ami_sink_close(ami_sink *s, am_error *err);
void ami_sink_abort(ami_sink *s);

/* A triangle in pixels: (u, v) per corner, a depth key per corner that interpolates linearly
 * in screen space (smaller is nearer) and a colour per corner (0..255 floats), Gouraud-blended.
 * Depth-tested and written inside r's clip; alpha < 1 blends. */
void ami_raster_triangle(am_raster *r, double uv[3][2], const double key[3],
                         float rgb[3][3], double alpha);

/* The frames a job's first/count select of T (count 0 = to the end); false when none. */
bool ami_frame_range(size_t T, size_t first, size_t count, size_t *begin, size_t *end);
/* SPEC 3 cameras of a layout (am_cameras_from_layout), each on the whole canvas. */
AM_NODISCARD am_status ami_layout_cameras(const am_layout *layout, am_camera *front,
                                          am_camera *side, am_error *err);
/* The box (min xyz, max xyz) of a motion's keypoints (NULL: the rest pose) over frames
 * [begin, end); pose: scratch of [B][16] + [J][3]. With follow, every frame is first moved
 * horizontally to put the root's head where it is at frame begin (the box a camera that
 * follows the root sees), and root0 gets that position. */
void ami_motion_box(const am_rig *rig, const am_motion *mo, size_t begin, size_t end,
                    double *pose, bool follow, double root0[3], double box[6]);

/* The studio of the layout canvas without a model: wall, floor band below the ground row, the
 * divider; resets r's clip to the whole image. */
void ami_layout_backdrop(am_raster *r, const am_layout *layout, const am_studio *studio);
/* The rig's bones of a pose drawn through cam, pixels scaled by scale and shifted by (du, dv);
 * scratch: [J][2] + [B][6] doubles. */
void ami_draw_rig_2d(am_raster *r, const am_rig *rig, const am_camera *cam, const double *pose,
                     double *scratch, double scale, double du, double dv);
/* N cameras in a grid (the overlay's and the render's): ceil(sqrt(C)) columns of cells 640 px
 * wide (480 from three columns), as tall as the tallest camera's aspect asks (even); camera c's
 * image scaled by place[c][0] and shifted by (place[c][1], place[c][2]) to sit centred in its
 * cell inside a 1 px border, clip[c] the pixels it covers. *W x *H the grid's size. */
void ami_camera_grid(const am_camera *const *cams, size_t C, int *W, int *H, double (*place)[3],
                     int (*clip)[4]);
/* White text on a dark box (2x font). */
void ami_label(am_raster *r, int x, int y, const char *text);

#endif
