/* The rasteriser: a depth buffer, Gouraud triangles, anti-aliased lines, discs and text. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "render_internal.h"

am_status am_raster_init(am_raster *r, int width, int height, am_error *err)
{
    memset(r, 0, sizeof *r);
    AMI_TRY(am_image_init(&r->img, width, height, err));
    r->depth = am_alloc_array((size_t)width * (size_t)height, sizeof(float));
    if (!r->depth) {
        am_image_release(&r->img);
        return AM_FAIL(err, AM_E_NOMEM, "depth buffer of %d x %d", width, height);
    }
    am_raster_clip_all(r);
    return AM_OK;
}

void am_raster_release(am_raster *r)
{
    if (!r) return;
    am_image_release(&r->img);
    am_free(r->depth);
    r->depth = NULL;
}

void am_raster_clip(am_raster *r, int x0, int y0, int x1, int y1)
{
    int W = r->img.width, H = r->img.height;
    r->clip[0] = x0 < 0 ? 0 : x0 > W ? W : x0;
    r->clip[1] = y0 < 0 ? 0 : y0 > H ? H : y0;
    r->clip[2] = x1 < r->clip[0] ? r->clip[0] : x1 > W ? W : x1;
    r->clip[3] = y1 < r->clip[1] ? r->clip[1] : y1 > H ? H : y1;
    for (int y = r->clip[1]; y < r->clip[3]; y++)
        for (int x = r->clip[0]; x < r->clip[2]; x++) r->depth[(size_t)y * W + x] = FLT_MAX;
}

void am_raster_clip_all(am_raster *r) { am_raster_clip(r, 0, 0, r->img.width, r->img.height); }

/* The clip rectangle's pixel range covering [lo, hi] on one axis. */
static void ami_span(double lo, double hi, int c0, int c1, int *a, int *b)
{
    double fa = floor(lo), fb = ceil(hi);
    *a = fa < c0 ? c0 : fa > c1 ? c1 : (int)fa;
    *b = fb > c1 ? c1 : fb < c0 ? c0 : (int)fb;
}

void am_draw_line(am_raster *r, double u0, double v0, double u1, double v1, double width, const uint8_t rgb[3],
                  double alpha)
{
    if (!(isfinite(u0) && isfinite(v0) && isfinite(u1) && isfinite(v1))) return;
    double hw = 0.5 * width, pad = hw + 1.0;
    int x0, x1, y0, y1;
    ami_span(fmin(u0, u1) - pad, fmax(u0, u1) + pad, r->clip[0], r->clip[2], &x0, &x1);
    ami_span(fmin(v0, v1) - pad, fmax(v0, v1) + pad, r->clip[1], r->clip[3], &y0, &y1);
    double du = u1 - u0, dv = v1 - v0, len2 = du * du + dv * dv;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            double pu = x + 0.5 - u0, pv = y + 0.5 - v0;
            double t = len2 > 0 ? (pu * du + pv * dv) / len2 : 0.0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double eu = pu - t * du, ev = pv - t * dv;
            /* a pixel's coverage falls off over one pixel across the edge */
            double cov = hw + 0.5 - sqrt(eu * eu + ev * ev);
            if (cov <= 0) continue;
            ami_blend(&r->img, x, y, rgb, alpha * (cov > 1 ? 1 : cov));
        }
}

void am_draw_disc(am_raster *r, double u, double v, double radius, double ring, const uint8_t rgb[3], double alpha)
{
    if (!(isfinite(u) && isfinite(v))) return;
    int x0, x1, y0, y1;
    ami_span(u - radius - 1, u + radius + 1, r->clip[0], r->clip[2], &x0, &x1);
    ami_span(v - radius - 1, v + radius + 1, r->clip[1], r->clip[3], &y0, &y1);
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            double d = hypot(x + 0.5 - u, y + 0.5 - v);
            double cov = radius + 0.5 - d;
            if (ring > 0) cov = fmin(cov, d - (radius - ring) + 0.5);
            if (cov <= 0) continue;
            ami_blend(&r->img, x, y, rgb, alpha * (cov > 1 ? 1 : cov));
        }
}

void am_draw_rect(am_raster *r, int x0, int y0, int x1, int y1, const uint8_t rgb[3], double alpha)
{
    x0 = x0 < r->clip[0] ? r->clip[0] : x0;
    y0 = y0 < r->clip[1] ? r->clip[1] : y0;
    x1 = x1 > r->clip[2] ? r->clip[2] : x1;
    y1 = y1 > r->clip[3] ? r->clip[3] : y1;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) ami_blend(&r->img, x, y, rgb, alpha);
}

int am_text_width(const char *text, int scale)
{
    size_t n = strlen(text);
    return n ? (int)(n * 6 - 1) * scale : 0;
}

int am_draw_text(am_raster *r, int x, int y, int scale, const char *text, const uint8_t rgb[3])
{
    int cx = x;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        int ch = *p >= 32 && *p <= 126 ? *p - 32 : '?' - 32;
        for (int col = 0; col < 5; col++)
            for (int row = 0; row < 7; row++)
                if (ami_font5x7[ch][col] >> row & 1)
                    am_draw_rect(r, cx + col * scale, y + row * scale, cx + (col + 1) * scale, y + (row + 1) * scale,
                                 rgb, 1.0);
        cx += 6 * scale;
    }
    return cx - x - (text[0] ? scale : 0);
}

void ami_raster_triangle(am_raster *r, double uv[3][2], const double key[3], float rgb[3][3],
                         double alpha)
{
    double area = (uv[1][0] - uv[0][0]) * (uv[2][1] - uv[0][1]) - (uv[1][1] - uv[0][1]) * (uv[2][0] - uv[0][0]);
    if (!(fabs(area) > 1e-12)) return;
    int x0, x1, y0, y1;
    ami_span(fmin(uv[0][0], fmin(uv[1][0], uv[2][0])), fmax(uv[0][0], fmax(uv[1][0], uv[2][0])), r->clip[0],
             r->clip[2], &x0, &x1);
    ami_span(fmin(uv[0][1], fmin(uv[1][1], uv[2][1])), fmax(uv[0][1], fmax(uv[1][1], uv[2][1])), r->clip[1],
             r->clip[3], &y0, &y1);
    double ia = 1.0 / area;
    const int W = r->img.width;
    for (int y = y0; y < y1; y++) {
        double pv = y + 0.5;
        for (int x = x0; x < x1; x++) {
            double pu = x + 0.5;
            /* barycentric weights from the edge functions, sign-normalised by the area */
            double w0 = ((uv[2][0] - uv[1][0]) * (pv - uv[1][1]) - (uv[2][1] - uv[1][1]) * (pu - uv[1][0])) * ia;
            double w1 = ((uv[0][0] - uv[2][0]) * (pv - uv[2][1]) - (uv[0][1] - uv[2][1]) * (pu - uv[2][0])) * ia;
            double w2 = 1.0 - w0 - w1;
            if (w0 < 0 || w1 < 0 || w2 < 0) continue;
            float z = (float)(w0 * key[0] + w1 * key[1] + w2 * key[2]);
            float *zb = &r->depth[(size_t)y * W + x];
            if (!(z < *zb)) continue;
            *zb = z;
            uint8_t c[3];
            for (int k = 0; k < 3; k++) {
                double v = w0 * rgb[0][k] + w1 * rgb[1][k] + w2 * rgb[2][k];
                c[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
            }
            if (alpha >= 1.0) memcpy(r->img.rgb + ((size_t)y * W + x) * 3, c, 3);
            else ami_blend(&r->img, x, y, c, alpha);
        }
    }
}
