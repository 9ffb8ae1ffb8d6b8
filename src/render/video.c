/* Video through FFmpeg: an encoder that takes one RGB frame at a time (H.264 by libx264 when
 * the build has it, else MPEG-4 part 2; VP9 for .webm) and a decoder that hands back RGB frames. */
#include <dlfcn.h>
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "render_internal.h"

/* FFmpeg is loaded on first use (dlopen), not linked: its libraries pull in ~120 shared objects
 * (codecs, TLS, SVG, ...) that cost every process ~21 MB of resident memory and their
 * relocation at start, although only the video paths use them (`anymove rig` on 5,000 points
 * x 200 frames peaked at 55 MB, 32 MB of it these libraries). The sonames are the ones the
 * headers were built against. The table below is the process's one copy, written once under
 * pthread_once and read-only afterwards (like the silenced log it replaces). Every call goes
 * through it (ami_av_api.f), so AMI_AV_FUNCS is the one list of what is used. */
#define AMI_AV_FUNCS(X) \
    X(av_d2q) \
    X(av_find_best_stream) \
    X(av_frame_alloc) \
    X(av_frame_free) \
    X(av_frame_get_buffer) \
    X(av_frame_make_writable) \
    X(av_frame_unref) \
    X(av_interleaved_write_frame) \
    X(av_log_set_callback) \
    X(av_opt_set) \
    X(av_packet_alloc) \
    X(av_packet_free) \
    X(av_packet_rescale_ts) \
    X(av_packet_unref) \
    X(av_read_frame) \
    X(av_strerror) \
    X(av_write_trailer) \
    X(avcodec_alloc_context3) \
    X(avcodec_find_encoder) \
    X(avcodec_find_encoder_by_name) \
    X(avcodec_free_context) \
    X(avcodec_open2) \
    X(avcodec_parameters_from_context) \
    X(avcodec_parameters_to_context) \
    X(avcodec_receive_frame) \
    X(avcodec_receive_packet) \
    X(avcodec_send_frame) \
    X(avcodec_send_packet) \
    X(avformat_alloc_output_context2) \
    X(avformat_close_input) \
    X(avformat_find_stream_info) \
    X(avformat_free_context) \
    X(avformat_new_stream) \
    X(avformat_open_input) \
    X(avformat_write_header) \
    X(avio_closep) \
    X(avio_open) \
    X(sws_freeContext) \
    X(sws_getCachedContext) \
    X(sws_getContext) \
    X(sws_scale)

static struct {
#define AMI_AV_FIELD(f) __typeof__(&f) f;
    AMI_AV_FUNCS(AMI_AV_FIELD)
#undef AMI_AV_FIELD
    bool ok;
    char why[256];
} ami_av_api;

/* FFmpeg prints to stderr by default and the library never prints: its log is silenced once
 * per process, and failures are reported from the return codes instead. */
static void ami_av_log_quiet(void *avcl, int level, const char *fmt, va_list vl)
{
    (void)avcl;
    (void)level;
    (void)fmt;
    (void)vl;
}

static void ami_av_init(void)
{
    static const char *const libs[] = {"libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
                                       "libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR)};
    void *h[2];
    for (int i = 0; i < 2; i++) {
        h[i] = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (!h[i]) {
            const char *e = dlerror();
            snprintf(ami_av_api.why, sizeof ami_av_api.why, "%s", e ? e : libs[i]);
            return;
        }
    }
    /* a handle's lookup covers its dependencies: avcodec and avutil come with avformat */
#define AMI_AV_LOAD(f)                                                                             \
    {                                                                                              \
        void *sym = dlsym(h[0], #f);                                                               \
        if (!sym) sym = dlsym(h[1], #f);                                                           \
        if (!sym) {                                                                                \
            snprintf(ami_av_api.why, sizeof ami_av_api.why, "%s: no symbol %s", libs[0], #f);    \
            return;                                                                                \
        }                                                                                          \
        memcpy(&ami_av_api.f, &sym, sizeof sym); /* POSIX: a data pointer holds a function's */    \
    }
    AMI_AV_FUNCS(AMI_AV_LOAD)
#undef AMI_AV_LOAD
    ami_av_api.av_log_set_callback(ami_av_log_quiet);
    ami_av_api.ok = true;
}

/* Loads FFmpeg once per process; AM_E_UNSUPPORTED when its libraries are missing. */
static am_status ami_av_once(am_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ami_av_init);
    if (!ami_av_api.ok) return AM_FAIL(err, AM_E_UNSUPPORTED, "video needs FFmpeg's shared libraries: %s", ami_av_api.why);
    return AM_OK;
}

static const char *ami_av_err(int code, char buf[128])
{
    if (ami_av_api.av_strerror(code, buf, 128) < 0) snprintf(buf, 128, "FFmpeg error %d", code);
    return buf;
}

struct am_video_writer {
    AVFormatContext *fmt;
    AVCodecContext *enc;
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    int width, height;        /* encoded (even) size */
    int64_t pts;
    bool opened_io, header, failed;
    char path[4096];
    char tmp[4096 + 64];
};

static void ami_writer_free(am_video_writer *vw)
{
    if (vw->fmt && vw->opened_io) ami_av_api.avio_closep(&vw->fmt->pb);
    ami_av_api.avformat_free_context(vw->fmt);
    ami_av_api.avcodec_free_context(&vw->enc);
    ami_av_api.av_frame_free(&vw->frame);
    ami_av_api.av_packet_free(&vw->pkt);
    ami_av_api.sws_freeContext(vw->sws);
    am_free(vw);
}

void am_video_writer_abort(am_video_writer *vw)
{
    if (!vw) return;
    bool had = vw->opened_io;
    char tmp[sizeof vw->tmp];
    memcpy(tmp, vw->tmp, sizeof tmp);
    ami_writer_free(vw);
    if (had) am_file_discard(tmp);
}

const char *am_video_writer_codec(const am_video_writer *vw) { return vw->enc->codec->name; }

am_status am_video_writer_open(const char *path, int width, int height, double fps, am_video_writer **out,
                               am_error *err)
{
    *out = NULL;
    AMI_TRY(ami_av_once(err));
    AMI_CHECK(err, width >= 2 && height >= 2 && width <= 8192 && height <= 8192, AM_E_VALUE,
              "video size %d x %d", width, height);
    AMI_CHECK(err, fps > 0 && fps <= 1000 && isfinite(fps), AM_E_VALUE, "video rate %g fps", fps);
    AMI_CHECK(err, strlen(path) < 4000, AM_E_ARG, "path too long");
    am_video_writer *vw = am_alloc(sizeof *vw);
    AMI_CHECK(err, vw, AM_E_NOMEM, "video writer");
    snprintf(vw->path, sizeof vw->path, "%s", path);
    am_tmp_path(vw->tmp, sizeof vw->tmp, path);
    vw->width = (width + 1) & ~1;
    vw->height = (height + 1) & ~1;
    char eb[128];
    const char *ext = strrchr(path, '.');
    bool webm = ext && strcasecmp(ext, ".webm") == 0;
    /* the container from the final name's extension (the temporary's name keeps it too) */
    int rc = ami_av_api.avformat_alloc_output_context2(&vw->fmt, NULL, NULL, path);
    if (rc < 0 || !vw->fmt) {
        ami_writer_free(vw);
        return AM_FAIL_AT(err, AM_E_USAGE, path, 0, 0, "no video container for this extension (.mp4, .mkv, .avi, .webm)");
    }
    const AVCodec *codec = ami_av_api.avcodec_find_encoder_by_name(webm ? "libvpx-vp9" : "libx264");
    if (!codec) codec = ami_av_api.avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    vw->enc = codec ? ami_av_api.avcodec_alloc_context3(codec) : NULL;
    vw->frame = ami_av_api.av_frame_alloc();
    vw->pkt = ami_av_api.av_packet_alloc();
    if (!vw->enc || !vw->frame || !vw->pkt) {
        ami_writer_free(vw);
        return AM_FAIL(err, codec ? AM_E_NOMEM : AM_E_UNSUPPORTED, "no video encoder (libx264 or mpeg4)");
    }
    AVRational rate = ami_av_api.av_d2q(fps, 100000);
    vw->enc->width = vw->width;
    vw->enc->height = vw->height;
    vw->enc->time_base = av_inv_q(rate);
    vw->enc->framerate = rate;
    vw->enc->pix_fmt = AV_PIX_FMT_YUV420P;
    vw->enc->gop_size = 30;
    /* one thread: the render runs on one core and the machine is shared */
    vw->enc->thread_count = 1;
    if (strcmp(codec->name, "libx264") == 0) {
        ami_av_api.av_opt_set(vw->enc->priv_data, "preset", "veryfast", 0);
        ami_av_api.av_opt_set(vw->enc->priv_data, "crf", "20", 0);
    } else if (strcmp(codec->name, "libvpx-vp9") == 0) {
        ami_av_api.av_opt_set(vw->enc->priv_data, "deadline", "realtime", 0);
        ami_av_api.av_opt_set(vw->enc->priv_data, "cpu-used", "8", 0);
        vw->enc->bit_rate = 2000000;
    } else {
        vw->enc->bit_rate = (int64_t)(0.15 * vw->width * vw->height * fps);
        vw->enc->qmax = 8;
    }
    if (vw->fmt->oformat->flags & AVFMT_GLOBALHEADER) vw->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if ((rc = ami_av_api.avcodec_open2(vw->enc, codec, NULL)) < 0) {
        ami_writer_free(vw);
        return AM_FAIL_AT(err, AM_E_UNSUPPORTED, path, 0, 0, "%s encoder: %s", codec->name, ami_av_err(rc, eb));
    }
    vw->st = ami_av_api.avformat_new_stream(vw->fmt, NULL);
    vw->frame->format = AV_PIX_FMT_YUV420P;
    vw->frame->width = vw->width;
    vw->frame->height = vw->height;
    vw->sws = ami_av_api.sws_getContext(vw->width, vw->height, AV_PIX_FMT_RGB24, vw->width, vw->height,
                                        AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!vw->st || !vw->sws || ami_av_api.av_frame_get_buffer(vw->frame, 0) < 0 ||
        ami_av_api.avcodec_parameters_from_context(vw->st->codecpar, vw->enc) < 0) {
        ami_writer_free(vw);
        return AM_FAIL(err, AM_E_NOMEM, "video frame of %d x %d", width, height);
    }
    vw->st->time_base = vw->enc->time_base;
    vw->st->avg_frame_rate = rate;
    if ((rc = ami_av_api.avio_open(&vw->fmt->pb, vw->tmp, AVIO_FLAG_WRITE)) < 0) {
        ami_writer_free(vw);
        return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "%s", ami_av_err(rc, eb));
    }
    vw->opened_io = true;
    if ((rc = ami_av_api.avformat_write_header(vw->fmt, NULL)) < 0) {
        am_video_writer_abort(vw);
        return AM_FAIL_AT(err, AM_E_WRITE, path, 0, 0, "video header: %s", ami_av_err(rc, eb));
    }
    vw->header = true;
    *out = vw;
    return AM_OK;
}

/* Send a frame (NULL: flush) and write every packet that comes out. */
static am_status ami_encode(am_video_writer *vw, AVFrame *frame, am_error *err)
{
    char eb[128];
    int rc = ami_av_api.avcodec_send_frame(vw->enc, frame);
    if (rc < 0) return AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "encoder: %s", ami_av_err(rc, eb));
    for (;;) {
        rc = ami_av_api.avcodec_receive_packet(vw->enc, vw->pkt);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return AM_OK;
        if (rc < 0) return AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "encoder: %s", ami_av_err(rc, eb));
        ami_av_api.av_packet_rescale_ts(vw->pkt, vw->enc->time_base, vw->st->time_base);
        vw->pkt->stream_index = vw->st->index;
        rc = ami_av_api.av_interleaved_write_frame(vw->fmt, vw->pkt);
        if (rc < 0) return AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "%s", ami_av_err(rc, eb));
    }
}

am_status am_video_writer_frame(am_video_writer *vw, const am_image *img, am_error *err)
{
    AMI_CHECK(err, img->width <= vw->width && img->height <= vw->height, AM_E_SHAPE,
              "frame of %d x %d for a video of %d x %d", img->width, img->height, vw->width, vw->height);
    if (ami_av_api.av_frame_make_writable(vw->frame) < 0) {
        vw->failed = true;
        return AM_FAIL(err, AM_E_NOMEM, "video frame");
    }
    const uint8_t *src = img->rgb;
    uint8_t *pad = NULL;
    if (img->width != vw->width || img->height != vw->height) {
        /* odd sizes: repeat the last column and row */
        pad = am_alloc_array((size_t)vw->width * vw->height, 3);
        if (!pad) {
            vw->failed = true;
            return AM_FAIL(err, AM_E_NOMEM, "video frame");
        }
        for (int y = 0; y < vw->height; y++)
            for (int x = 0; x < vw->width; x++) {
                int sx = x < img->width ? x : img->width - 1, sy = y < img->height ? y : img->height - 1;
                memcpy(pad + ((size_t)y * vw->width + x) * 3, img->rgb + ((size_t)sy * img->width + sx) * 3, 3);
            }
        src = pad;
    }
    const uint8_t *planes[1] = {src};
    int stride[1] = {vw->width * 3};
    ami_av_api.sws_scale(vw->sws, planes, stride, 0, vw->height, vw->frame->data, vw->frame->linesize);
    am_free(pad);
    vw->frame->pts = vw->pts++;
    am_status s = ami_encode(vw, vw->frame, err);
    if (s != AM_OK) vw->failed = true;
    return s;
}

am_status am_video_writer_close(am_video_writer *vw, am_error *err)
{
    if (!vw) return AM_OK;
    am_status s = vw->failed ? AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "a frame failed") : ami_encode(vw, NULL, err);
    char eb[128];
    int rc;
    if (s == AM_OK && (rc = ami_av_api.av_write_trailer(vw->fmt)) < 0)
        s = AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "video trailer: %s", ami_av_err(rc, eb));
    if (s == AM_OK) {
        rc = ami_av_api.avio_closep(&vw->fmt->pb);
        vw->opened_io = false;
        if (rc < 0) s = AM_FAIL_AT(err, AM_E_WRITE, vw->path, 0, 0, "%s", ami_av_err(rc, eb));
    }
    if (s != AM_OK) {
        am_video_writer_abort(vw);
        return s;
    }
    char tmp[sizeof vw->tmp], path[sizeof vw->path];
    memcpy(tmp, vw->tmp, sizeof tmp);
    memcpy(path, vw->path, sizeof path);
    ami_writer_free(vw);
    return am_file_commit(tmp, path, err);
}

struct am_video_reader {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    int stream;
    bool draining, done;
    char path[4096];
};

void am_video_reader_close(am_video_reader *vr)
{
    if (!vr) return;
    ami_av_api.avcodec_free_context(&vr->dec);
    ami_av_api.avformat_close_input(&vr->fmt);
    ami_av_api.av_frame_free(&vr->frame);
    ami_av_api.av_packet_free(&vr->pkt);
    ami_av_api.sws_freeContext(vr->sws);
    am_free(vr);
}

am_status am_video_reader_open(const char *path, am_video_reader **out, am_video_info *info, am_error *err)
{
    *out = NULL;
    AMI_TRY(ami_av_once(err));
    am_video_reader *vr = am_alloc(sizeof *vr);
    AMI_CHECK(err, vr, AM_E_NOMEM, "video reader");
    snprintf(vr->path, sizeof vr->path, "%s", path);
    char eb[128];
    int rc = ami_av_api.avformat_open_input(&vr->fmt, path, NULL, NULL);
    if (rc < 0) {
        am_video_reader_close(vr);
        return AM_FAIL_AT(err, rc == AVERROR(ENOENT) ? AM_E_READ : AM_E_FORMAT, path, 0, 0, "%s", ami_av_err(rc, eb));
    }
    if ((rc = ami_av_api.avformat_find_stream_info(vr->fmt, NULL)) < 0) {
        am_video_reader_close(vr);
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "%s", ami_av_err(rc, eb));
    }
    const AVCodec *codec = NULL;
    vr->stream = ami_av_api.av_find_best_stream(vr->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (vr->stream < 0 || !codec) {
        am_video_reader_close(vr);
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "no video stream FFmpeg can decode");
    }
    AVStream *st = vr->fmt->streams[vr->stream];
    vr->dec = ami_av_api.avcodec_alloc_context3(codec);
    vr->frame = ami_av_api.av_frame_alloc();
    vr->pkt = ami_av_api.av_packet_alloc();
    if (!vr->dec || !vr->frame || !vr->pkt ||
        ami_av_api.avcodec_parameters_to_context(vr->dec, st->codecpar) < 0) {
        am_video_reader_close(vr);
        return AM_FAIL(err, AM_E_NOMEM, "video decoder");
    }
    vr->dec->thread_count = 1;
    if ((rc = ami_av_api.avcodec_open2(vr->dec, codec, NULL)) < 0) {
        am_video_reader_close(vr);
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "decoder: %s", ami_av_err(rc, eb));
    }
    AVRational r = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
    info->width = vr->dec->width;
    info->height = vr->dec->height;
    info->fps = r.num && r.den ? av_q2d(r) : 0.0;
    info->frames = st->nb_frames > 0 ? st->nb_frames : -1;
    if (info->width < 1 || info->height < 1) {
        am_video_reader_close(vr);
        return AM_FAIL_AT(err, AM_E_FORMAT, path, 0, 0, "video of %d x %d", info->width, info->height);
    }
    *out = vr;
    return AM_OK;
}

am_status am_video_reader_next(am_video_reader *vr, am_image *img, am_error *err)
{
    char eb[128];
    for (;;) {
        int rc = ami_av_api.avcodec_receive_frame(vr->dec, vr->frame);
        if (rc == 0) break;
        if (rc == AVERROR_EOF) return AM_FAIL_AT(err, AM_E_EMPTY, vr->path, 0, 0, "no more frames");
        if (rc != AVERROR(EAGAIN)) return AM_FAIL_AT(err, AM_E_FORMAT, vr->path, 0, 0, "decoder: %s", ami_av_err(rc, eb));
        if (vr->draining) return AM_FAIL_AT(err, AM_E_EMPTY, vr->path, 0, 0, "no more frames");
        rc = ami_av_api.av_read_frame(vr->fmt, vr->pkt);
        if (rc < 0) {
            vr->draining = true;
            ami_av_api.avcodec_send_packet(vr->dec, NULL);
            continue;
        }
        if (vr->pkt->stream_index == vr->stream) rc = ami_av_api.avcodec_send_packet(vr->dec, vr->pkt);
        ami_av_api.av_packet_unref(vr->pkt);
        if (rc < 0 && rc != AVERROR(EAGAIN))
            return AM_FAIL_AT(err, AM_E_FORMAT, vr->path, 0, 0, "decoder: %s", ami_av_err(rc, eb));
    }
    int w = vr->frame->width, h = vr->frame->height;
    if (!img->rgb || img->width != w || img->height != h) {
        am_image_release(img);
        am_status s = am_image_init(img, w, h, err);
        if (s != AM_OK) {
            ami_av_api.av_frame_unref(vr->frame);
            return s;
        }
    }
    vr->sws = ami_av_api.sws_getCachedContext(vr->sws, w, h, (enum AVPixelFormat)vr->frame->format, w, h,
                                              AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (!vr->sws) {
        ami_av_api.av_frame_unref(vr->frame);
        return AM_FAIL(err, AM_E_NOMEM, "pixel conversion");
    }
    uint8_t *planes[1] = {img->rgb};
    int stride[1] = {w * 3};
    ami_av_api.sws_scale(vr->sws, (const uint8_t *const *)vr->frame->data, vr->frame->linesize, 0, h, planes,
                         stride);
    ami_av_api.av_frame_unref(vr->frame);
    return AM_OK;
}

am_status ami_clip_next(am_video_reader **vr, am_image *clip, am_error *err)
{
    am_status s = am_video_reader_next(*vr, clip, err);
    if (s == AM_E_EMPTY) {
        am_video_reader_close(*vr);
        *vr = NULL;
        if (err) memset(err, 0, sizeof *err);
    }
    return s;
}

am_status ami_clip_skip(am_video_reader **vr, size_t n, am_image *clip, am_error *err)
{
    am_status s = AM_OK;
    for (size_t t = 0; s == AM_OK && *vr && t < n; t++) {
        am_status rs = ami_clip_next(vr, clip, err);
        if (rs != AM_E_EMPTY) s = rs;
    }
    return s;
}
