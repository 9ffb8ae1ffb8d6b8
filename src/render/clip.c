/* A clip to pictures: a video, one PNG or a folder of PNGs, one frame rendered at a time. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "render_internal.h"

static bool ami_has_ext(const char *path, const char *ext)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && strcasecmp(dot, ext) == 0;
}

am_status ami_sink_open(ami_sink *s, const char *path, int width, int height, double fps, am_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = am_strdup(path);
    AMI_CHECK(err, s->path, AM_E_NOMEM, "path");
    if (ami_has_ext(path, ".png")) {
        s->kind = 1;
        return AM_OK;
    }
    static const char *const video_ext[] = {".mp4", ".mkv", ".avi", ".webm", ".mov"};
    for (size_t i = 0; i < sizeof video_ext / sizeof *video_ext; i++)
        if (ami_has_ext(path, video_ext[i])) {
            am_status st = am_video_writer_open(path, width, height, fps, &s->video, err);
            if (st != AM_OK) {
                am_free(s->path);
                s->path = NULL;
            }
            return st;
        }
    s->kind = 2;
    am_status st = am_mkdir_p(path, err);
    if (st != AM_OK) {
        am_free(s->path);
        s->path = NULL;
    }
    return st;
}

am_status ami_sink_frame(ami_sink *s, const am_image *img, am_error *err)
{
    am_status st = AM_OK;
    if (s->kind == 0) {
        st = am_video_writer_frame(s->video, img, err);
    } else if (s->kind == 1) {
        if (s->written == 0) st = am_png_write(img, s->path, err);
    } else {
        size_t n = strlen(s->path) + 32;
        char *p = am_alloc(n);
        AMI_CHECK(err, p, AM_E_NOMEM, "path");
        snprintf(p, n, "%s/frame_%05zu.png", s->path, s->written);
        st = am_png_write(img, p, err);
        am_free(p);
    }
    if (st == AM_OK) s->written++;
    return st;
}

am_status ami_sink_close(ami_sink *s, am_error *err)
{
    am_status st = AM_OK;
    if (s->kind == 0) st = am_video_writer_close(s->video, err);
    s->video = NULL;
    am_free(s->path);
    s->path = NULL;
    return st;
}

void ami_sink_abort(ami_sink *s)
{
    if (s->kind == 0) am_video_writer_abort(s->video);
    s->video = NULL;
    am_free(s->path);
    s->path = NULL;
}

am_status am_render_clip(const am_render_job *job, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, &job->ctx);
    size_t T = job->motion ? job->motion->frame_count : 1, b0 = 0, b1 = 0;
    am_status s = AM_OK;
    if (!ami_frame_range(T, job->first, job->count, &b0, &b1))
        s = AM_FAIL(err, AM_E_VALUE, "frames from %zu: the clip has %zu", job->first, T);
    am_render_views *views = NULL;
    am_raster r = {0};
    ami_sink sink = {0};
    bool open = false;
    int w = 0, h = 0;
    if (s == AM_OK) s = am_render_views_create(job, &views, err);
    if (s == AM_OK) {
        am_render_views_size(views, &w, &h);
        s = am_raster_init(&r, w, h, err);
    }
    double fps = job->fps > 0 ? job->fps : job->motion && job->motion->fps > 0 ? job->motion->fps : 30.0;
    if (s == AM_OK && (s = ami_sink_open(&sink, job->path, w, h, fps, err)) == AM_OK) open = true;
    ami_stage stage = ami_stage_begin("render");
    for (size_t t = b0; s == AM_OK && t < b1; t++) {
        if (!ami_progress("render", (double)(t - b0) / (double)(b1 - b0))) {
            s = AM_FAIL(err, AM_E_CANCELLED, "render");
            break;
        }
        am_render_views_frame(views, t, &r);
        s = ami_sink_frame(&sink, &r.img, err);
        /* one PNG holds the first frame only */
        if (sink.kind == 1) break;
    }
    if (open) {
        if (s == AM_OK) s = ami_sink_close(&sink, err);
        else ami_sink_abort(&sink);
    }
    if (s == AM_OK) ami_stage_end(&stage);
    am_raster_release(&r);
    am_render_views_free(views);
    am_scope_leave(&sc, NULL);
    return s;
}
