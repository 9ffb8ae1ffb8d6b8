/* RGB images, PNG files (libpng) and the scaled copies the composed videos need. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include "core/internal.h"
#include "render_internal.h"

am_status am_image_init(am_image *img, int width, int height, am_error *err)
{
    img->rgb = NULL;
    img->width = img->height = 0;
    AMI_CHECK(err, width >= 1 && height >= 1 && width <= 16384 && height <= 16384, AM_E_VALUE,
              "image size %d x %d (1..16384 a side)", width, height);
    img->rgb = am_alloc_array((size_t)width * (size_t)height, 3);
    AMI_CHECK(err, img->rgb, AM_E_NOMEM, "image of %d x %d", width, height);
    img->width = width;
    img->height = height;
    return AM_OK;
}

void am_image_release(am_image *img)
{
    if (!img) return;
    am_free(img->rgb);
    img->rgb = NULL;
    img->width = img->height = 0;
}

void am_image_fill(am_image *img, const uint8_t rgb[3])
{
    size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t i = 0; i < n; i++) memcpy(img->rgb + 3 * i, rgb, 3);
}

/* libpng reports errors through a longjmp; the message is kept for the am_error. */
typedef struct {
    char msg[200];
} ami_png_ctx;

static void ami_png_error(png_structp png, png_const_charp msg)
{
    ami_png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void ami_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

am_status am_png_write(const am_image *img, const char *path, am_error *err)
{
    char tmp[4096 + 64];
    am_tmp_path(tmp, sizeof tmp, path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", strerror(errno));
    ami_png_ctx c = {{0}};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, ami_png_error, ami_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *rows = am_alloc_array((size_t)img->height, sizeof *rows);
    /* volatile: kept across libpng's longjmp */
    volatile am_status s = AM_OK;
    if (!png || !info || !rows) {
        s = AM_FAIL(err, AM_E_NOMEM, "PNG writer for %s", path);
    } else if (setjmp(png_jmpbuf(png))) {
        s = AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", c.msg);
    } else {
        png_init_io(png, f);
        /* Flat studio colours compress best with the Paeth/sub filters at a quick level. */
        png_set_compression_level(png, 6);
        png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8, PNG_COLOR_TYPE_RGB,
                     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        for (int y = 0; y < img->height; y++) rows[y] = img->rgb + (size_t)y * (size_t)img->width * 3;
        png_set_rows(png, info, rows);
        png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    }
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    am_free(rows);
    if (fclose(f) != 0 && s == AM_OK) s = AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", strerror(errno));
    if (s != AM_OK) {
        am_file_discard(tmp);
        return s;
    }
    return am_file_commit(tmp, path, err);
}

am_status am_png_read(const char *path, am_image *img, am_error *err)
{
    img->rgb = NULL;
    img->width = img->height = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return AM_FAIL_AT(err, AM_E_READ, path, 0, 0, "%s", strerror(errno));
    ami_png_ctx c = {{0}};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, ami_png_error, ami_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    volatile am_status s = AM_OK;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        s = AM_FAIL(err, AM_E_NOMEM, "PNG reader for %s", path);
    } else if (setjmp(png_jmpbuf(png))) {
        s = AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "%s", c.msg);
    } else {
        png_init_io(png, f);
        png_set_user_limits(png, 16384, 16384);
        png_read_info(png, info);
        png_set_expand(png);
        png_set_strip_16(png);
        png_set_strip_alpha(png);
        png_set_gray_to_rgb(png);
        png_set_interlace_handling(png);
        png_read_update_info(png, info);
        int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
        if (png_get_rowbytes(png, info) != (size_t)w * 3) {
            s = AM_FAIL_AT(err, AM_E_UNSUPPORTED, path, 0, 0, "PNG layout not convertible to RGB");
        } else if ((s = am_image_init(img, w, h, err)) == AM_OK) {
            rows = am_alloc_array((size_t)h, sizeof *rows);
            if (!rows) {
                s = AM_FAIL(err, AM_E_NOMEM, "PNG rows of %s", path);
            } else {
                for (int y = 0; y < h; y++) rows[y] = img->rgb + (size_t)y * (size_t)w * 3;
                png_read_image(png, rows);
                png_read_end(png, NULL);
            }
        }
    }
    png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
    am_free(rows);
    fclose(f);
    if (s != AM_OK) {
        am_image_release(img);
        am_error_set_file(err, path);
    }
    return s;
}

void ami_image_blit_scaled(const am_image *src, am_image *dst, int x0, int y0, int w, int h)
{
    double sx = (double)src->width / w, sy = (double)src->height / h;
    for (int y = 0; y < h; y++) {
        int dy = y0 + y;
        if (dy < 0 || dy >= dst->height) continue;
        double fy = (y + 0.5) * sy - 0.5;
        int iy = (int)floor(fy);
        double ty = fy - iy;
        int ya = iy < 0 ? 0 : iy, yb = iy + 1 >= src->height ? src->height - 1 : iy + 1;
        for (int x = 0; x < w; x++) {
            int dx = x0 + x;
            if (dx < 0 || dx >= dst->width) continue;
            double fx = (x + 0.5) * sx - 0.5;
            int ix = (int)floor(fx);
            double tx = fx - ix;
            int xa = ix < 0 ? 0 : ix, xb = ix + 1 >= src->width ? src->width - 1 : ix + 1;
            const uint8_t *p00 = src->rgb + ((size_t)ya * src->width + xa) * 3, *p01 = src->rgb + ((size_t)ya * src->width + xb) * 3,
                          *p10 = src->rgb + ((size_t)yb * src->width + xa) * 3, *p11 = src->rgb + ((size_t)yb * src->width + xb) * 3;
            uint8_t *o = dst->rgb + ((size_t)dy * dst->width + dx) * 3;
            for (int c = 0; c < 3; c++) {
                double a = p00[c] + (p01[c] - p00[c]) * tx, b = p10[c] + (p11[c] - p10[c]) * tx;
                o[c] = (uint8_t)(a + (b - a) * ty + 0.5);
            }
        }
    }
}

void ami_affine_invert(const double A[6], double inv[6])
{
    double det = A[0] * A[4] - A[1] * A[3];
    double id = det != 0.0 ? 1.0 / det : 0.0;
    inv[0] = A[4] * id;
    inv[1] = -A[1] * id;
    inv[3] = -A[3] * id;
    inv[4] = A[0] * id;
    inv[2] = -(inv[0] * A[2] + inv[1] * A[5]);
    inv[5] = -(inv[3] * A[2] + inv[4] * A[5]);
}

void ami_image_warp(const am_image *clip, const double A[6], am_raster *r, int x0, int y0, int w, int h,
                    double cu0, double s)
{
    double inv[6];
    ami_affine_invert(A, inv);
    am_image *dst = &r->img;
    for (int y = 0; y < h; y++) {
        int dy = y0 + y;
        if (dy < r->clip[1] || dy >= r->clip[3]) continue;
        double cv = (y + 0.5) / s;
        for (int x = 0; x < w; x++) {
            int dx = x0 + x;
            if (dx < r->clip[0] || dx >= r->clip[2]) continue;
            double cu = cu0 + (x + 0.5) / s;
            /* the clip pixel (centre convention of camera.h) under this canvas point */
            double fx = inv[0] * cu + inv[1] * cv + inv[2] - 0.5, fy = inv[3] * cu + inv[4] * cv + inv[5] - 0.5;
            if (!(fx > -1.0 && fy > -1.0 && fx < clip->width && fy < clip->height)) continue;
            int ix = (int)floor(fx), iy = (int)floor(fy);
            double tx = fx - ix, ty = fy - iy;
            int xa = ix < 0 ? 0 : ix, xb = ix + 1 >= clip->width ? clip->width - 1 : ix + 1;
            int ya = iy < 0 ? 0 : iy, yb = iy + 1 >= clip->height ? clip->height - 1 : iy + 1;
            const uint8_t *p00 = clip->rgb + ((size_t)ya * clip->width + xa) * 3,
                          *p01 = clip->rgb + ((size_t)ya * clip->width + xb) * 3,
                          *p10 = clip->rgb + ((size_t)yb * clip->width + xa) * 3,
                          *p11 = clip->rgb + ((size_t)yb * clip->width + xb) * 3;
            uint8_t *o = dst->rgb + ((size_t)dy * dst->width + dx) * 3;
            for (int c = 0; c < 3; c++) {
                double a = p00[c] + (p01[c] - p00[c]) * tx, b = p10[c] + (p11[c] - p10[c]) * tx;
                o[c] = (uint8_t)(a + (b - a) * ty + 0.5);
            }
        }
    }
}
