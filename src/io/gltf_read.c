/* glTF 2.0 reader (.glb and .gltf) and animation sampling: the reader half of anymove/gltf.h.
 *
 * This work is based on:
 * - The glTF 2.0 specification (Khronos): GLB container, accessors (byte strides, matrix column
 *   padding, normalized integers, sparse storage), node hierarchy, skins, animation samplers
 *   (LINEAR / STEP / CUBICSPLINE, appendix C "Interpolation").
 *
 * Every input is untrusted: every index, offset, count and length is checked before use and a
 * failure is a status with the JSON path (or the GLB byte offset), never an out-of-bounds read.
 * The document keeps only decoded data (floats, plus uint32 for integer accessors); raw buffers
 * live during loading only.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/math.h"
#include "io/gltf_internal.h"
#include "io/json_internal.h"
#include "core/internal.h"

#define AMI_GLB_MAGIC 0x46546C67u      /* "glTF" */
#define AMI_GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define AMI_GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */

/* Index arrays are int32 in the public structs; this keeps every count representable. */
#define AMI_GLTF_MAX_ITEMS ((size_t)0x7fffffff)
/* am_gltf_opts.max_bytes when 0. */
#define AMI_GLTF_DEFAULT_BUDGET ((uint64_t)1 << 30)

/* ---- axis conversion (SPEC 4.5) ---------------------------------------------------------- */

void am_gltf_from_world(const double world[3], double gltf[3])
{
    double x = world[0], y = world[1], z = world[2];
    gltf[0] = x;
    gltf[1] = z;
    gltf[2] = -y;
}

void am_gltf_to_world(const double gltf[3], double world[3])
{
    double x = gltf[0], y = gltf[1], z = gltf[2];
    world[0] = x;
    world[1] = -z;
    world[2] = y;
}

/* ---- loading context --------------------------------------------------------------------- */

typedef struct ami_gbuffer {
    const uint8_t *data;
    size_t len;      /* usable bytes (>= the declared byteLength) */
    uint8_t *owned;  /* decoded data: URI or external file */
} ami_gbuffer;

typedef struct ami_gview {
    size_t buffer, offset, length, stride; /* stride 0 = tightly packed */
} ami_gview;

typedef struct ami_gctx {
    const char *source;
    const char *base_dir;
    uint64_t max_bytes;
    uint64_t decoded_bytes; /* running total of accessor memory, against max_bytes */
    const uint8_t *bin;     /* GLB BIN chunk or NULL */
    size_t bin_len;
    size_t bin_offset;      /* file offset of the BIN chunk data, for messages */
    size_t buffer_count, view_count;
    ami_gbuffer *buffers;
    ami_gview *views;
    am_gltf *doc;
    struct am_gltf_source *keep; /* with AM_GLTF_KEEP_SOURCE, else NULL */
    am_error *err;
} ami_gctx;

static am_status ami_schema(ami_gctx *c, const char *path, const char *what)
{
    return AM_FAIL(c->err, AM_E_SCHEMA, "%s: %s", path[0] ? path : "document", what);
}

/* obj[key] as a non-negative integer <= max (defaults to def when absent and not required).
 * glTF integers may be written as 1.0 by some exporters: integral reals are accepted. */
static am_status ami_get_uint(ami_gctx *c, const json_t *obj, const char *path, const char *key,
                              bool required, uint64_t def, uint64_t max, uint64_t *out)
{
    json_t *v = NULL;
    AMI_TRY(ami_json_member(obj, path, key, required, &v, c->err));
    if (!v) {
        *out = def;
        return AM_OK;
    }
    ami_jpath p = ami_json_path_key(path, key);
    double d;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0) return ami_schema(c, p.s, "expected a non-negative integer");
        if ((uint64_t)i > max)
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: %lld out of range (max %llu)", p.s,
                           (long long)i, (unsigned long long)max);
        *out = (uint64_t)i;
        return AM_OK;
    }
    if (!json_is_real(v)) return ami_schema(c, p.s, "expected an integer");
    d = json_real_value(v);
    if (!(d >= 0.0) || d != floor(d)) return ami_schema(c, p.s, "expected a non-negative integer");
    if (d >= 18446744073709551616.0 || d > (double)max)
        return AM_FAIL(c->err, AM_E_FORMAT, "%s: %g out of range (max %llu)", p.s, d,
                       (unsigned long long)max);
    *out = (uint64_t)d;
    return AM_OK;
}

/* obj[key] as an index into an array of `count` items; -1 when absent and not required. */
static am_status ami_get_index(ami_gctx *c, const json_t *obj, const char *path, const char *key,
                               bool required, size_t count, int32_t *out)
{
    uint64_t v = 0; /* every AM_OK path sets it; GCC -O3 cannot prove that */
    AMI_TRY(ami_get_uint(c, obj, path, key, required, UINT64_MAX, UINT64_MAX, &v));
    if (v == UINT64_MAX) {
        *out = -1;
        return AM_OK;
    }
    if (v >= count) {
        ami_jpath p = ami_json_path_key(path, key);
        return AM_FAIL(c->err, AM_E_SCHEMA, "%s: index %llu out of range (%zu items)", p.s,
                       (unsigned long long)v, count);
    }
    *out = (int32_t)v;
    return AM_OK;
}

/* An array member (absent and optional -> *out NULL, *n 0). */
static am_status ami_get_array(ami_gctx *c, const json_t *obj, const char *path, const char *key,
                               bool required, json_t **out, size_t *n)
{
    json_t *v = NULL;
    *out = NULL;
    *n = 0;
    AMI_TRY(ami_json_member(obj, path, key, required, &v, c->err));
    if (!v) return AM_OK;
    ami_jpath p = ami_json_path_key(path, key);
    AMI_TRY(ami_json_expect(v, JSON_ARRAY, p.s, c->err));
    *out = v;
    *n = json_array_size(v);
    if (*n > AMI_GLTF_MAX_ITEMS) return AM_FAIL(c->err, AM_E_LIMIT, "%s: too many items", p.s);
    return AM_OK;
}

/* Exactly n numbers in obj[key]; absent -> out untouched. */
static am_status ami_get_numbers(ami_gctx *c, const json_t *obj, const char *path,
                                 const char *key, size_t n, double *out, bool *present)
{
    json_t *v = NULL;
    if (present) *present = false;
    AMI_TRY(ami_json_member(obj, path, key, false, &v, c->err));
    if (!v) return AM_OK;
    ami_jpath p = ami_json_path_key(path, key);
    AMI_TRY(ami_json_numbers(v, p.s, 1, &n, out, c->err));
    if (present) *present = true;
    return AM_OK;
}

static am_status ami_get_name(ami_gctx *c, const json_t *obj, const char *path, char **out)
{
    const char *s = NULL;
    *out = NULL;
    AMI_TRY(ami_json_get_string(obj, path, "name", false, &s, c->err));
    if (!s) return AM_OK;
    *out = am_strdup(s);
    AMI_CHECK(c->err, *out, AM_E_NOMEM, "%s.name", path);
    return AM_OK;
}

/* Each item of a top-level array must be an object. */
static am_status ami_item(ami_gctx *c, json_t *arr, const char *key, size_t i, json_t **out,
                          ami_jpath *path)
{
    *path = ami_json_path_index(key, i);
    *out = json_array_get(arr, i);
    return ami_json_expect(*out, JSON_OBJECT, path->s, c->err);
}

static void *ami_calloc(ami_gctx *c, size_t n, size_t size, am_status *s)
{
    if (n == 0) return NULL;
    void *p = am_alloc_array(n, size);
    if (!p) *s = AM_FAIL(c->err, AM_E_NOMEM, "%zu x %zu bytes", n, size);
    return p;
}

/* ---- buffers ----------------------------------------------------------------------------- */

static int ami_b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62; /* '-' and '_': the URL-safe alphabet, seen in the wild */
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Strict base64: padding only at the end, no stray characters; a missing final padding is
 * accepted because some writers drop it. */
static am_status ami_b64_decode(ami_gctx *c, const char *s, size_t n, const char *path,
                                uint8_t **out, size_t *out_len)
{
    while (n > 0 && s[n - 1] == '=') n--;
    if (n % 4 == 1) return AM_FAIL(c->err, AM_E_FORMAT, "%s: bad base64 length", path);
    size_t len = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    uint8_t *buf = am_alloc(len ? len : 1);
    AMI_CHECK(c->err, buf, AM_E_NOMEM, "%s: %zu bytes", path, len);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = ami_b64_value((unsigned char)s[i]);
        if (v < 0) {
            am_free(buf);
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: bad base64 character at %zu", path, i);
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o < len) buf[o++] = (uint8_t)(acc >> bits);
        }
    }
    *out = buf;
    *out_len = o;
    return AM_OK;
}

static int ami_hex(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* An external buffer: a relative path under base_dir. Absolute paths, URLs and ".." segments
 * are refused, and the file is opened only when its real path (symlinks resolved) lies inside
 * base_dir, so a document cannot make us read outside its folder. */
static am_status ami_load_external(ami_gctx *c, const char *uri, const char *path, uint8_t **out,
                                   size_t *out_len)
{
    if (!c->base_dir)
        return AM_FAIL(c->err, AM_E_UNSUPPORTED,
                       "%s: external buffer '%.64s' needs a base directory", path, uri);
    char rel[1024];
    size_t n = 0;
    for (const char *p = uri; *p; p++) {
        char ch = *p;
        if (ch == '%') {
            int hi = ami_hex(p[1]), lo = hi >= 0 ? ami_hex(p[2]) : -1;
            if (hi < 0 || lo < 0)
                return AM_FAIL(c->err, AM_E_FORMAT, "%s: bad percent escape in uri", path);
            ch = (char)(hi * 16 + lo);
            p += 2;
        }
        if (ch == '\0' || n + 1 >= sizeof rel)
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: bad or too long uri", path);
        rel[n++] = ch;
    }
    rel[n] = '\0';
    if (n == 0 || rel[0] == '/' || rel[0] == '\\' || strchr(rel, ':'))
        return AM_FAIL(c->err, AM_E_UNSUPPORTED, "%s: uri '%.64s' is absolute or a URL", path,
                       uri);
    for (const char *seg = rel; seg;) {
        const char *end = strpbrk(seg, "/\\");
        size_t sl = end ? (size_t)(end - seg) : strlen(seg);
        if (sl == 2 && seg[0] == '.' && seg[1] == '.')
            return AM_FAIL(c->err, AM_E_UNSUPPORTED, "%s: uri '%.64s' leaves the folder", path,
                           uri);
        seg = end ? end + 1 : NULL;
    }
    char full[2048];
    int w = snprintf(full, sizeof full, "%s/%s", c->base_dir[0] ? c->base_dir : ".", rel);
    if (w < 0 || (size_t)w >= sizeof full)
        return AM_FAIL(c->err, AM_E_ARG, "%s: path too long", path);
    char *data = NULL;
    size_t len = 0;
    uint64_t left = c->max_bytes > c->decoded_bytes ? c->max_bytes - c->decoded_bytes : 1;
    am_status s = ami_file_read_within(c->base_dir[0] ? c->base_dir : ".", full,
                                       left > SIZE_MAX ? SIZE_MAX : (size_t)left, &data, &len,
                                       c->err);
    if (s < 0 && c->err) {
        /* The document is the file to name; the buffer is part of the detail. */
        char info[sizeof c->err->info + 400];
        snprintf(info, sizeof info, "%.100s: '%.100s': %s", path, full, c->err->info);
        memcpy(c->err->info, info, sizeof c->err->info - 1);
        c->err->info[sizeof c->err->info - 1] = '\0';
        c->err->file[0] = '\0';
    }
    if (s < 0) return s;
    c->decoded_bytes += len;
    *out = (uint8_t *)data;
    *out_len = len;
    return AM_OK;
}

/* ---- kept source (AM_GLTF_KEEP_SOURCE) ----------------------------------------------------- */

void ami_gltf_source_free(struct am_gltf_source *src)
{
    if (!src) return;
    am_free(src->json);
    for (size_t i = 0; i < src->buffer_count && src->buffers; i++) am_free(src->buffers[i]);
    am_free(src->buffers);
    am_free(src->buffer_len);
    for (size_t i = 0; i < src->image_count && src->images; i++) am_free(src->images[i]);
    am_free(src->images);
    am_free(src->image_len);
    am_free((void *)src->image_mime);
    am_free(src);
}

/* Every buffer's bytes: decoded ones are handed over, the GLB BIN chunk (borrowed from the
 * caller's memory) is copied. */
static am_status ami_keep_buffers(ami_gctx *c)
{
    struct am_gltf_source *k = c->keep;
    if (!k || c->buffer_count == 0) return AM_OK;
    am_status s = AM_OK;
    k->buffers = ami_calloc(c, c->buffer_count, sizeof *k->buffers, &s);
    if (s < 0) return s;
    k->buffer_len = ami_calloc(c, c->buffer_count, sizeof *k->buffer_len, &s);
    if (s < 0) return s;
    k->buffer_count = c->buffer_count;
    for (size_t i = 0; i < c->buffer_count; i++) {
        ami_gbuffer *b = &c->buffers[i];
        if (b->owned) {
            k->buffers[i] = b->owned;
            b->owned = NULL; /* b->data stays valid: the document owns it now */
        } else if (b->len) {
            /* A second copy of the BIN chunk: it counts like everything else decoded. */
            c->decoded_bytes += b->len;
            if (c->decoded_bytes > c->max_bytes)
                return AM_FAIL(c->err, AM_E_LIMIT, "buffers[%zu]: keeping the source exceeds %llu bytes",
                               i, (unsigned long long)c->max_bytes);
            k->buffers[i] = am_alloc(b->len);
            AMI_CHECK(c->err, k->buffers[i], AM_E_NOMEM, "buffers[%zu]: %zu bytes", i, b->len);
            memcpy(k->buffers[i], b->data, b->len);
        }
        k->buffer_len[i] = b->len;
    }
    return AM_OK;
}

const char *ami_gltf_image_mime(const uint8_t *d, size_t n)
{
    if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) return "image/png";
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return "image/jpeg";
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) return "image/webp";
    if (n >= 12 && memcmp(d, "\xABKTX 20\xBB\r\n\x1a\n", 12) == 0) return "image/ktx2";
    return NULL;
}

/* Images given by a file uri are read now: the model's folder is known only while loading. */
static am_status ami_keep_images(ami_gctx *c, json_t *root)
{
    struct am_gltf_source *k = c->keep;
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    if (!k) return AM_OK;
    AMI_TRY(ami_get_array(c, root, "", "images", false, &arr, &n));
    if (n == 0) return AM_OK;
    k->images = ami_calloc(c, n, sizeof *k->images, &s);
    if (s < 0) return s;
    k->image_len = ami_calloc(c, n, sizeof *k->image_len, &s);
    if (s < 0) return s;
    k->image_mime = ami_calloc(c, n, sizeof *k->image_mime, &s);
    if (s < 0) return s;
    k->image_count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o;
        ami_jpath p;
        AMI_TRY(ami_item(c, arr, "images", i, &o, &p));
        const char *uri = NULL;
        AMI_TRY(ami_json_get_string(o, p.s, "uri", false, &uri, c->err));
        if (!uri || strncmp(uri, "data:", 5) == 0) continue;
        ami_jpath pu = ami_json_path_key(p.s, "uri");
        AMI_TRY(ami_load_external(c, uri, pu.s, &k->images[i], &k->image_len[i]));
        k->image_mime[i] = ami_gltf_image_mime(k->images[i], k->image_len[i]);
        AMI_CHECK(c->err, k->image_mime[i], AM_E_UNSUPPORTED,
                  "%s: '%.64s' is no PNG, JPEG, WebP or KTX2 image", pu.s, uri);
    }
    return AM_OK;
}

static am_status ami_read_buffers(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    AMI_TRY(ami_get_array(c, root, "", "buffers", false, &arr, &n));
    c->buffers = ami_calloc(c, n, sizeof *c->buffers, &s);
    if (s < 0) return s;
    c->buffer_count = n; /* only once the array exists: the caller frees what it counts */
    for (size_t i = 0; i < n; i++) {
        json_t *o;
        ami_jpath p;
        AMI_TRY(ami_item(c, arr, "buffers", i, &o, &p));
        uint64_t blen;
        AMI_TRY(ami_get_uint(c, o, p.s, "byteLength", true, 0, UINT64_MAX, &blen));
        const char *uri = NULL;
        AMI_TRY(ami_json_get_string(o, p.s, "uri", false, &uri, c->err));
        ami_gbuffer *b = &c->buffers[i];
        if (!uri) {
            /* Only the first buffer of a GLB may omit the uri: it is the BIN chunk. */
            if (i != 0 || !c->bin)
                return AM_FAIL(c->err, AM_E_FORMAT, "%s: no uri and no GLB BIN chunk", p.s);
            if (blen > c->bin_len)
                return AM_FAIL_OFS(c->err, AM_E_FORMAT, NULL, c->bin_offset,
                                   "%s.byteLength %llu > BIN chunk length %zu", p.s,
                                   (unsigned long long)blen, c->bin_len);
            b->data = c->bin;
            b->len = (size_t)blen;
            continue;
        }
        uint8_t *data = NULL;
        size_t len = 0;
        if (strncmp(uri, "data:", 5) == 0) {
            const char *comma = strchr(uri, ',');
            if (!comma) return AM_FAIL(c->err, AM_E_FORMAT, "%s.uri: data URI without ','", p.s);
            const char *b64 = comma - 7 >= uri + 5 ? comma - 7 : NULL;
            if (!b64 || strncmp(b64, ";base64", 7) != 0)
                return AM_FAIL(c->err, AM_E_UNSUPPORTED, "%s.uri: only base64 data URIs", p.s);
            ami_jpath pu = ami_json_path_key(p.s, "uri");
            AMI_TRY(ami_b64_decode(c, comma + 1, strlen(comma + 1), pu.s, &data, &len));
        } else {
            ami_jpath pu = ami_json_path_key(p.s, "uri");
            AMI_TRY(ami_load_external(c, uri, pu.s, &data, &len));
        }
        b->owned = data;
        b->data = data;
        if (len < blen)
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: %zu bytes of data, byteLength says %llu",
                           p.s, len, (unsigned long long)blen);
        b->len = (size_t)blen;
    }
    return ami_keep_buffers(c);
}

static am_status ami_read_views(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    AMI_TRY(ami_get_array(c, root, "", "bufferViews", false, &arr, &n));
    c->view_count = n;
    c->views = ami_calloc(c, n, sizeof *c->views, &s);
    if (s < 0) return s;
    for (size_t i = 0; i < n; i++) {
        json_t *o;
        ami_jpath p;
        AMI_TRY(ami_item(c, arr, "bufferViews", i, &o, &p));
        int32_t buf;
        uint64_t off, len, stride;
        AMI_TRY(ami_get_index(c, o, p.s, "buffer", true, c->buffer_count, &buf));
        AMI_TRY(ami_get_uint(c, o, p.s, "byteOffset", false, 0, UINT64_MAX, &off));
        AMI_TRY(ami_get_uint(c, o, p.s, "byteLength", true, 0, UINT64_MAX, &len));
        AMI_TRY(ami_get_uint(c, o, p.s, "byteStride", false, 0, 252, &stride));
        if (stride != 0 && stride < 4)
            return AM_FAIL(c->err, AM_E_FORMAT, "%s.byteStride %llu < 4", p.s,
                           (unsigned long long)stride);
        size_t blen = c->buffers[buf].len;
        if (off > blen || len > blen - off)
            return AM_FAIL(c->err, AM_E_FORMAT,
                           "%s: bytes [%llu, +%llu) outside buffer %d (%zu bytes)", p.s,
                           (unsigned long long)off, (unsigned long long)len, buf, blen);
        c->views[i] = (ami_gview){(size_t)buf, (size_t)off, (size_t)len, (size_t)stride};
    }
    return AM_OK;
}

/* ---- accessors --------------------------------------------------------------------------- */

static size_t ami_component_size(int type)
{
    switch (type) {
    case 5120: case 5121: return 1;
    case 5122: case 5123: return 2;
    case 5125: case 5126: return 4;
    default: return 0;
    }
}

/* Decode one component at p (little-endian) into a float and, for integers, its raw value. */
static float ami_component(const uint8_t *p, int type, bool normalized, uint32_t *raw)
{
    switch (type) {
    case 5120: {
        int8_t v = (int8_t)p[0];
        *raw = (uint32_t)(int32_t)v;
        return normalized ? fmaxf((float)v / 127.0f, -1.0f) : (float)v;
    }
    case 5121:
        *raw = p[0];
        return normalized ? (float)p[0] / 255.0f : (float)p[0];
    case 5122: {
        int16_t v = (int16_t)(uint16_t)(p[0] | (p[1] << 8));
        *raw = (uint32_t)(int32_t)v;
        return normalized ? fmaxf((float)v / 32767.0f, -1.0f) : (float)v;
    }
    case 5123: {
        uint16_t v = (uint16_t)(p[0] | (p[1] << 8));
        *raw = v;
        return normalized ? (float)v / 65535.0f : (float)v;
    }
    case 5125: {
        uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24);
        *raw = v;
        return normalized ? (float)((double)v / 4294967295.0) : (float)v;
    }
    default: {
        uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24);
        float f;
        memcpy(&f, &v, sizeof f);
        *raw = 0;
        return f;
    }
    }
}

/* Element layout: components, rows per column (matrices) and the element's byte size. Matrix
 * columns are padded to 4 bytes (glTF 2.0 3.6.2.4), which matters for byte/short MAT2/MAT3. */
typedef struct ami_layout {
    size_t comps, rows, cols, col_bytes, elem_bytes, csize;
} ami_layout;

static void ami_layout_make(size_t comps, size_t csize, ami_layout *l)
{
    l->comps = comps;
    l->csize = csize;
    if (comps == 4 || comps == 9 || comps == 16) {
        /* VEC4 also goes through here as 1 column of 4: no padding for any csize. */
        l->rows = comps == 4 ? 4 : comps == 9 ? 3 : 4;
        l->cols = comps / l->rows;
    } else {
        l->rows = comps;
        l->cols = 1;
    }
    size_t raw = l->rows * csize;
    l->col_bytes = l->cols > 1 ? (raw + 3) / 4 * 4 : raw;
    l->elem_bytes = l->col_bytes * l->cols;
}

/* Read `count` elements starting at byte `off` of view v with the given stride into
 * out_f/out_i at element indices idx[k] (or k when idx is NULL). Bounds were checked. */
static void ami_decode_run(const uint8_t *base, size_t stride, size_t count, const ami_layout *l,
                           int type, bool normalized, const uint32_t *idx, float *out_f,
                           uint32_t *out_i)
{
    for (size_t k = 0; k < count; k++) {
        const uint8_t *e = base + k * stride;
        size_t dst = (idx ? idx[k] : k) * l->comps;
        for (size_t col = 0; col < l->cols; col++) {
            for (size_t r = 0; r < l->rows; r++) {
                uint32_t raw;
                float f = ami_component(e + col * l->col_bytes + r * l->csize, type, normalized,
                                        &raw);
                out_f[dst + col * l->rows + r] = f;
                if (out_i) out_i[dst + col * l->rows + r] = raw;
            }
        }
    }
}

/* Check that `count` elements of layout l at `off` within view v (stride or packed) fit;
 * returns the base pointer. */
static am_status ami_view_range(ami_gctx *c, const char *path, int32_t view, size_t off,
                                size_t count, size_t stride, size_t elem_bytes,
                                const uint8_t **base)
{
    const ami_gview *v = &c->views[view];
    size_t need;
    if (count == 0) {
        need = 0;
    } else {
        /* (count - 1) * stride + elem_bytes, overflow-checked. */
        if (count - 1 > (SIZE_MAX - elem_bytes) / (stride ? stride : 1))
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: size overflow", path);
        need = (count - 1) * stride + elem_bytes;
    }
    if (off > v->length || need > v->length - off)
        return AM_FAIL(c->err, AM_E_FORMAT,
                       "%s: %zu elements at byte %zu need %zu bytes; bufferView %d has %zu",
                       path, count, off, need, view, v->length);
    *base = c->buffers[v->buffer].data + v->offset + off;
    return AM_OK;
}

static am_status ami_read_sparse(ami_gctx *c, json_t *sp, const char *path, am_gltf_accessor *a,
                                 const ami_layout *l)
{
    uint64_t scount = 0;
    AMI_TRY(ami_get_uint(c, sp, path, "count", true, 0, a->count, &scount));
    if (scount == 0) return AM_FAIL(c->err, AM_E_FORMAT, "%s.count: must be >= 1", path);
    json_t *ind = NULL, *val = NULL;
    AMI_TRY(ami_json_member(sp, path, "indices", true, &ind, c->err));
    AMI_TRY(ami_json_member(sp, path, "values", true, &val, c->err));
    ami_jpath pi = ami_json_path_key(path, "indices"), pv = ami_json_path_key(path, "values");
    AMI_TRY(ami_json_expect(ind, JSON_OBJECT, pi.s, c->err));
    AMI_TRY(ami_json_expect(val, JSON_OBJECT, pv.s, c->err));
    int32_t iv, vv;
    uint64_t ioff, voff, itype;
    AMI_TRY(ami_get_index(c, ind, pi.s, "bufferView", true, c->view_count, &iv));
    AMI_TRY(ami_get_uint(c, ind, pi.s, "byteOffset", false, 0, UINT64_MAX, &ioff));
    AMI_TRY(ami_get_uint(c, ind, pi.s, "componentType", true, 0, 65535, &itype));
    AMI_TRY(ami_get_index(c, val, pv.s, "bufferView", true, c->view_count, &vv));
    AMI_TRY(ami_get_uint(c, val, pv.s, "byteOffset", false, 0, UINT64_MAX, &voff));
    if (itype != 5121 && itype != 5123 && itype != 5125)
        return AM_FAIL(c->err, AM_E_FORMAT, "%s.componentType %llu: not an unsigned integer",
                       pi.s, (unsigned long long)itype);
    size_t isz = ami_component_size((int)itype), n = (size_t)scount;
    const uint8_t *ib, *vb;
    AMI_TRY(ami_view_range(c, pi.s, iv, (size_t)ioff, n, isz, isz, &ib));
    AMI_TRY(ami_view_range(c, pv.s, vv, (size_t)voff, n, l->elem_bytes, l->elem_bytes, &vb));
    am_status s = AM_OK;
    uint32_t *idx = ami_calloc(c, n, sizeof *idx, &s);
    if (s < 0) return s;
    for (size_t k = 0; k < n; k++) {
        uint32_t raw;
        (void)ami_component(ib + k * isz, (int)itype, false, &raw);
        /* Strictly increasing (spec), which also makes every index unique. */
        if (raw >= a->count || (k > 0 && raw <= idx[k - 1])) {
            am_free(idx);
            return AM_FAIL(c->err, AM_E_FORMAT,
                           "%s: index %u at %zu out of range or not increasing", pi.s, raw, k);
        }
        idx[k] = raw;
    }
    ami_decode_run(vb, l->elem_bytes, n, l, a->component_type, a->normalized, idx, a->data,
                   a->ints);
    am_free(idx);
    return AM_OK;
}

/* The animation whose sampler reads accessor i, for the message about an empty accessor: in a
 * clip it means a clip with no keyframes, which the user knows by its name, not by accessor. */
static void ami_accessor_clip(json_t *root, size_t i, char *out, size_t size)
{
    out[0] = '\0';
    json_t *anims = json_object_get(root, "animations");
    for (size_t a = 0; a < json_array_size(anims); a++) {
        json_t *an = json_array_get(anims, a), *smp = json_object_get(an, "samplers");
        for (size_t k = 0; k < json_array_size(smp); k++) {
            json_t *sk = json_array_get(smp, k);
            json_t *in = json_object_get(sk, "input"), *ou = json_object_get(sk, "output");
            if ((json_is_integer(in) && json_integer_value(in) == (json_int_t)i) ||
                (json_is_integer(ou) && json_integer_value(ou) == (json_int_t)i)) {
                const char *name = json_string_value(json_object_get(an, "name"));
                snprintf(out, size, ": animation %zu '%.64s' has a sampler with no keyframes", a, name ? name : "");
                return;
            }
        }
    }
}

static am_status ami_read_accessors(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    am_gltf *doc = c->doc;
    AMI_TRY(ami_get_array(c, root, "", "accessors", false, &arr, &n));
    doc->accessors = ami_calloc(c, n, sizeof *doc->accessors, &s);
    if (s < 0) return s;
    doc->accessor_count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o;
        ami_jpath p;
        AMI_TRY(ami_item(c, arr, "accessors", i, &o, &p));
        am_gltf_accessor *a = &doc->accessors[i];
        int32_t view;
        uint64_t off, type, count;
        const char *tname = NULL;
        bool norm = false;
        AMI_TRY(ami_get_index(c, o, p.s, "bufferView", false, c->view_count, &view));
        AMI_TRY(ami_get_uint(c, o, p.s, "byteOffset", false, 0, UINT64_MAX, &off));
        AMI_TRY(ami_get_uint(c, o, p.s, "componentType", true, 0, 65535, &type));
        AMI_TRY(ami_get_uint(c, o, p.s, "count", true, 0, AMI_GLTF_MAX_ITEMS, &count));
        AMI_TRY(ami_json_get_string(o, p.s, "type", true, &tname, c->err));
        json_t *nv = json_object_get(o, "normalized");
        if (nv) {
            ami_jpath pn = ami_json_path_key(p.s, "normalized");
            AMI_TRY(ami_json_expect(nv, JSON_TRUE, pn.s, c->err));
            norm = json_is_true(nv);
        }
        size_t csize = ami_component_size((int)type);
        if (!csize)
            return AM_FAIL(c->err, AM_E_FORMAT, "%s.componentType %llu unknown", p.s,
                           (unsigned long long)type);
        static const struct { const char *name; size_t comps; } types[] = {
            {"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4},
            {"MAT2", 4},   {"MAT3", 9}, {"MAT4", 16}};
        size_t comps = 0;
        bool mat2 = false;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            if (strcmp(tname, types[k].name) == 0) {
                comps = types[k].comps;
                mat2 = k == 4;
            }
        }
        if (!comps) return AM_FAIL(c->err, AM_E_FORMAT, "%s.type '%.32s' unknown", p.s, tname);
        if (count == 0) {
            char clip[128];
            ami_accessor_clip(root, i, clip, sizeof clip);
            return AM_FAIL(c->err, AM_E_FORMAT, "%s.count: must be >= 1%s", p.s, clip);
        }
        a->count = (size_t)count;
        a->components = comps;
        a->component_type = (int)type;
        a->normalized = norm && type != 5126;
        ami_layout l;
        ami_layout_make(comps, csize, &l);
        if (mat2) {
            /* MAT2: 2 columns of 2 (the VEC4 layout above would not pad the columns). */
            l.rows = 2;
            l.cols = 2;
            l.col_bytes = (2 * csize + 3) / 4 * 4;
            l.elem_bytes = l.col_bytes * 2;
        }
        const uint8_t *base = NULL;
        size_t stride = 0;
        if (view >= 0) {
            stride = c->views[view].stride ? c->views[view].stride : l.elem_bytes;
            if (stride < l.elem_bytes)
                return AM_FAIL(c->err, AM_E_FORMAT, "%s: byteStride %zu < element size %zu",
                               p.s, stride, l.elem_bytes);
            AMI_TRY(ami_view_range(c, p.s, view, (size_t)off, a->count, stride, l.elem_bytes,
                                   &base));
        } else if (off != 0) {
            return AM_FAIL(c->err, AM_E_FORMAT, "%s: byteOffset without bufferView", p.s);
        }
        /* Memory budget: accessors without bufferView (or with a tiny stride) could otherwise
         * ask for gigabytes from a few bytes of JSON. */
        uint64_t bytes = (uint64_t)a->count * comps * (type == 5126 ? 4u : 8u);
        c->decoded_bytes += bytes;
        if (c->decoded_bytes > c->max_bytes)
            return AM_FAIL(c->err, AM_E_LIMIT, "%s: decoded data exceeds %llu bytes", p.s,
                           (unsigned long long)c->max_bytes);
        a->data = ami_calloc(c, a->count * comps, sizeof *a->data, &s);
        if (s < 0) return s;
        if (type != 5126) {
            a->ints = ami_calloc(c, a->count * comps, sizeof *a->ints, &s);
            if (s < 0) return s;
        }
        if (base)
            ami_decode_run(base, stride, a->count, &l, a->component_type, a->normalized, NULL,
                           a->data, a->ints);
        json_t *sp = json_object_get(o, "sparse");
        if (sp) {
            ami_jpath ps = ami_json_path_key(p.s, "sparse");
            AMI_TRY(ami_json_expect(sp, JSON_OBJECT, ps.s, c->err));
            AMI_TRY(ami_read_sparse(c, sp, ps.s, a, &l));
        }
    }
    return AM_OK;
}

/* An accessor reference with an expected shape (0 = any components). */
static am_status ami_check_accessor(ami_gctx *c, int32_t a, size_t comps, const char *path)
{
    if (a < 0 || comps == 0) return AM_OK;
    const am_gltf_accessor *acc = &c->doc->accessors[a];
    if (acc->components != comps)
        return AM_FAIL(c->err, AM_E_SCHEMA, "%s: accessor %d has %zu components, want %zu", path,
                       a, acc->components, comps);
    return AM_OK;
}

/* ---- nodes ------------------------------------------------------------------------------- */

void ami_gltf_trs_matrix(const double t[3], const double q_in[4], const double s[3],
                         double M[16])
{
    double q[4], R[9];
    double n = sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] +
                    q_in[3] * q_in[3]);
    if (n > 0 && isfinite(n)) {
        for (int k = 0; k < 4; k++) q[k] = q_in[k] / n;
    } else {
        q[0] = 1;
        q[1] = q[2] = q[3] = 0;
    }
    am_quat_to_mat3(q, R);
    for (int r = 0; r < 3; r++) {
        for (int col = 0; col < 3; col++) M[r * 4 + col] = R[r * 3 + col] * s[col];
        M[r * 4 + 3] = t[r];
    }
    M[12] = M[13] = M[14] = 0;
    M[15] = 1;
}

void ami_gltf_decompose(const double M[16], double t[3], double q[4], double s[3])
{
    double R[9];
    for (int col = 0; col < 3; col++) {
        double v[3] = {M[col], M[4 + col], M[8 + col]};
        s[col] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    double det = M[0] * (M[5] * M[10] - M[6] * M[9]) - M[1] * (M[4] * M[10] - M[6] * M[8]) +
                 M[2] * (M[4] * M[9] - M[5] * M[8]);
    if (det < 0) s[0] = -s[0];
    for (int r = 0; r < 3; r++) {
        for (int col = 0; col < 3; col++)
            R[r * 3 + col] = s[col] != 0 ? M[r * 4 + col] / s[col] : (r == col ? 1.0 : 0.0);
        t[r] = M[r * 4 + 3];
    }
    am_quat_from_mat3(R, q);
}

static am_status ami_read_nodes(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    am_gltf *doc = c->doc;
    AMI_TRY(ami_get_array(c, root, "", "nodes", false, &arr, &n));
    doc->nodes = ami_calloc(c, n, sizeof *doc->nodes, &s);
    if (s < 0) return s;
    doc->node_count = n;
    for (size_t i = 0; i < n; i++) doc->nodes[i].parent = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *o;
        ami_jpath p;
        AMI_TRY(ami_item(c, arr, "nodes", i, &o, &p));
        am_gltf_node *nd = &doc->nodes[i];
        nd->mesh = nd->skin = -1;
        AMI_TRY(ami_get_name(c, o, p.s, &nd->name));
        AMI_TRY(ami_get_index(c, o, p.s, "mesh", false, doc->mesh_count, &nd->mesh));
        AMI_TRY(ami_get_index(c, o, p.s, "skin", false, doc->skin_count, &nd->skin));
        double t[3] = {0, 0, 0}, qf[4] = {0, 0, 0, 1}, sc[3] = {1, 1, 1}, m[16];
        bool has_t, has_r, has_s;
        AMI_TRY(ami_get_numbers(c, o, p.s, "translation", 3, t, &has_t));
        AMI_TRY(ami_get_numbers(c, o, p.s, "rotation", 4, qf, &has_r));
        AMI_TRY(ami_get_numbers(c, o, p.s, "scale", 3, sc, &has_s));
        AMI_TRY(ami_get_numbers(c, o, p.s, "matrix", 16, m, &nd->has_matrix));
        if (nd->has_matrix) {
            /* Column-major in the file. */
            for (int r = 0; r < 4; r++)
                for (int col = 0; col < 4; col++) nd->matrix[r * 4 + col] = m[col * 4 + r];
            ami_gltf_decompose(nd->matrix, nd->translation, nd->rotation, nd->scale);
        } else {
            memcpy(nd->translation, t, sizeof t);
            nd->rotation[0] = qf[3];
            nd->rotation[1] = qf[0];
            nd->rotation[2] = qf[1];
            nd->rotation[3] = qf[2];
            memcpy(nd->scale, sc, sizeof sc);
            ami_gltf_trs_matrix(nd->translation, nd->rotation, nd->scale, nd->matrix);
        }
        json_t *ch, *wv;
        size_t nc, nw;
        AMI_TRY(ami_get_array(c, o, p.s, "children", false, &ch, &nc));
        nd->children = ami_calloc(c, nc, sizeof *nd->children, &s);
        if (s < 0) return s;
        nd->child_count = nc;
        for (size_t k = 0; k < nc; k++) {
            ami_jpath pc = ami_json_path_key(p.s, "children");
            pc = ami_json_path_index(pc.s, k);
            json_t *cv = json_array_get(ch, k);
            double d;
            AMI_TRY(ami_json_number(cv, pc.s, &d, c->err));
            if (!(d >= 0 && d < (double)n) || d != floor(d))
                return AM_FAIL(c->err, AM_E_SCHEMA, "%s: %g is not a node index", pc.s, d);
            nd->children[k] = (int32_t)d;
        }
        AMI_TRY(ami_get_array(c, o, p.s, "weights", false, &wv, &nw));
        if (nw) {
            nd->weights = ami_calloc(c, nw, sizeof *nd->weights, &s);
            if (s < 0) return s;
            nd->weight_count = nw;
            ami_jpath pw = ami_json_path_key(p.s, "weights");
            AMI_TRY(ami_json_numbers(wv, pw.s, 1, &nw, nd->weights, c->err));
        }
    }
    /* children -> parent: a node listed twice is a DAG, not a tree; a loop is a cycle. */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < doc->nodes[i].child_count; k++) {
            int32_t ch = doc->nodes[i].children[k];
            if ((size_t)ch == i)
                return AM_FAIL(c->err, AM_E_CYCLE, "nodes[%zu] is its own child", i);
            if (doc->nodes[ch].parent >= 0)
                return AM_FAIL(c->err, AM_E_CYCLE, "nodes[%d] has two parents (%d and %zu)", ch,
                               doc->nodes[ch].parent, i);
            doc->nodes[ch].parent = (int32_t)i;
        }
    }
    /* Parents-first order by walking down from the roots; nodes never reached lie on a cycle
     * (every node has at most one parent, so an unreached node's ancestor chain loops). */
    doc->node_order = ami_calloc(c, n, sizeof *doc->node_order, &s);
    if (s < 0) return s;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (doc->nodes[i].parent < 0) doc->node_order[tail++] = (int32_t)i;
    while (head < tail) {
        const am_gltf_node *nd = &doc->nodes[doc->node_order[head++]];
        for (size_t k = 0; k < nd->child_count; k++) doc->node_order[tail++] = nd->children[k];
    }
    if (tail != n) {
        uint8_t *reached = ami_calloc(c, n, 1, &s);
        if (s < 0) return s;
        for (size_t k = 0; k < tail; k++) reached[doc->node_order[k]] = 1;
        size_t i = 0;
        while (reached[i]) i++;
        am_free(reached);
        /* Walking up n steps from an unreached node lands on the cycle itself. */
        int32_t v = (int32_t)i;
        for (size_t k = 0; k < n; k++) v = doc->nodes[v].parent;
        return AM_FAIL(c->err, AM_E_CYCLE, "nodes[%d] is its own ancestor", v);
    }
    return AM_OK;
}

/* ---- skins, meshes ----------------------------------------------------------------------- */

static am_status ami_read_skins(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    am_gltf *doc = c->doc;
    AMI_TRY(ami_get_array(c, root, "", "skins", false, &arr, &n));
    doc->skins = ami_calloc(c, n, sizeof *doc->skins, &s);
    if (s < 0) return s;
    doc->skin_count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o, *jv;
        ami_jpath p;
        size_t nj;
        AMI_TRY(ami_item(c, arr, "skins", i, &o, &p));
        am_gltf_skin *sk = &doc->skins[i];
        sk->skeleton = -1;
        AMI_TRY(ami_get_name(c, o, p.s, &sk->name));
        AMI_TRY(ami_get_array(c, o, p.s, "joints", true, &jv, &nj));
        if (nj == 0) return AM_FAIL(c->err, AM_E_SCHEMA, "%s.joints: empty", p.s);
        sk->joints = ami_calloc(c, nj, sizeof *sk->joints, &s);
        if (s < 0) return s;
        sk->joint_count = nj;
        uint8_t *used = ami_calloc(c, doc->node_count, 1, &s);
        if (s < 0) return s;
        for (size_t k = 0; k < nj; k++) {
            ami_jpath pj = ami_json_path_index(ami_json_path_key(p.s, "joints").s, k);
            double d;
            s = ami_json_number(json_array_get(jv, k), pj.s, &d, c->err);
            if (s == AM_OK && (!(d >= 0 && d < (double)doc->node_count) || d != floor(d)))
                s = AM_FAIL(c->err, AM_E_SCHEMA, "%s: %g is not a node index", pj.s, d);
            if (s == AM_OK && used[(size_t)d])
                s = AM_FAIL(c->err, AM_E_DUPLICATE, "%s: node %d listed twice", pj.s, (int)d);
            if (s < 0) {
                am_free(used);
                return s;
            }
            used[(size_t)d] = 1;
            sk->joints[k] = (int32_t)d;
        }
        am_free(used);
        AMI_TRY(ami_get_index(c, o, p.s, "skeleton", false, doc->node_count, &sk->skeleton));
        int32_t ibm;
        AMI_TRY(ami_get_index(c, o, p.s, "inverseBindMatrices", false, doc->accessor_count, &ibm));
        sk->inverse_bind = ami_calloc(c, nj, 16 * sizeof *sk->inverse_bind, &s);
        if (s < 0) return s;
        if (ibm >= 0) {
            ami_jpath pb = ami_json_path_key(p.s, "inverseBindMatrices");
            const am_gltf_accessor *a = &doc->accessors[ibm];
            AMI_TRY(ami_check_accessor(c, ibm, 16, pb.s));
            if (a->count < nj)
                return AM_FAIL(c->err, AM_E_FORMAT, "%s: %zu matrices for %zu joints", pb.s,
                               a->count, nj);
            for (size_t k = 0; k < nj; k++)
                for (int r = 0; r < 4; r++)
                    for (int col = 0; col < 4; col++)
                        sk->inverse_bind[k * 16 + (size_t)(r * 4 + col)] =
                            a->data[k * 16 + (size_t)(col * 4 + r)];
        } else {
            for (size_t k = 0; k < nj; k++) am_mat4_identity(sk->inverse_bind + 16 * k);
        }
    }
    return AM_OK;
}

static am_status ami_read_meshes(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    am_gltf *doc = c->doc;
    AMI_TRY(ami_get_array(c, root, "", "meshes", false, &arr, &n));
    doc->meshes = ami_calloc(c, n, sizeof *doc->meshes, &s);
    if (s < 0) return s;
    doc->mesh_count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o, *pv, *wv;
        ami_jpath p;
        size_t np, nw;
        AMI_TRY(ami_item(c, arr, "meshes", i, &o, &p));
        am_gltf_mesh *m = &doc->meshes[i];
        AMI_TRY(ami_get_name(c, o, p.s, &m->name));
        AMI_TRY(ami_get_array(c, o, p.s, "primitives", true, &pv, &np));
        m->primitives = ami_calloc(c, np, sizeof *m->primitives, &s);
        if (s < 0) return s;
        m->primitive_count = np;
        for (size_t k = 0; k < np; k++) {
            ami_jpath pp = ami_json_path_index(ami_json_path_key(p.s, "primitives").s, k);
            json_t *po = json_array_get(pv, k), *at = NULL, *tg;
            AMI_TRY(ami_json_expect(po, JSON_OBJECT, pp.s, c->err));
            am_gltf_primitive *pr = &m->primitives[k];
            uint64_t mode;
            AMI_TRY(ami_get_uint(c, po, pp.s, "mode", false, 4, 6, &mode));
            pr->mode = (int)mode;
            AMI_TRY(ami_get_index(c, po, pp.s, "indices", false, doc->accessor_count,
                                  &pr->indices));
            AMI_TRY(ami_json_member(po, pp.s, "attributes", true, &at, c->err));
            ami_jpath pa = ami_json_path_key(pp.s, "attributes");
            AMI_TRY(ami_json_expect(at, JSON_OBJECT, pa.s, c->err));
            size_t na = doc->accessor_count;
            AMI_TRY(ami_get_index(c, at, pa.s, "POSITION", false, na, &pr->position));
            AMI_TRY(ami_get_index(c, at, pa.s, "NORMAL", false, na, &pr->normal));
            AMI_TRY(ami_get_index(c, at, pa.s, "TANGENT", false, na, &pr->tangent));
            AMI_TRY(ami_get_index(c, at, pa.s, "JOINTS_0", false, na, &pr->joints0));
            AMI_TRY(ami_get_index(c, at, pa.s, "WEIGHTS_0", false, na, &pr->weights0));
            AMI_TRY(ami_get_index(c, at, pa.s, "TEXCOORD_0", false, na, &pr->texcoord0));
            AMI_TRY(ami_get_index(c, at, pa.s, "TEXCOORD_1", false, na, &pr->texcoord1));
            AMI_TRY(ami_get_index(c, at, pa.s, "COLOR_0", false, na, &pr->color0));
            pr->texcoord[0] = pr->texcoord0, pr->texcoord[1] = pr->texcoord1;
            for (int u = 2; u < AM_GLTF_MAX_TEXCOORDS; u++) {
                char key[16];
                snprintf(key, sizeof key, "TEXCOORD_%d", u);
                AMI_TRY(ami_get_index(c, at, pa.s, key, false, na, &pr->texcoord[u]));
                AMI_TRY(ami_check_accessor(c, pr->texcoord[u], 2, pa.s));
            }
            AMI_TRY(ami_get_index(c, po, pp.s, "material", false,
                                  json_array_size(json_object_get(root, "materials")), &pr->material));
            AMI_TRY(ami_check_accessor(c, pr->position, 3, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->normal, 3, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->joints0, 4, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->weights0, 4, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->texcoord0, 2, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->texcoord1, 2, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->tangent, 4, pa.s));
            AMI_TRY(ami_check_accessor(c, pr->indices, 1, pa.s));
            /* COLOR_0 is RGB or RGBA (glTF 2.0 3.7.2.1) */
            if (pr->color0 >= 0 && doc->accessors[pr->color0].components != 3 &&
                doc->accessors[pr->color0].components != 4)
                return AM_FAIL(c->err, AM_E_SCHEMA, "%s.COLOR_0: accessor %d has %zu components, want 3 or 4",
                               pa.s, (int)pr->color0, doc->accessors[pr->color0].components);
            if (pr->joints0 >= 0 && !doc->accessors[pr->joints0].ints)
                return AM_FAIL(c->err, AM_E_FORMAT, "%s.JOINTS_0: not an integer accessor",
                               pa.s);
            if ((pr->joints0 >= 0) != (pr->weights0 >= 0) ||
                (pr->joints0 >= 0 &&
                 doc->accessors[pr->joints0].count != doc->accessors[pr->weights0].count))
                return AM_FAIL(c->err, AM_E_FORMAT, "%s: JOINTS_0 and WEIGHTS_0 do not pair",
                               pa.s);
            size_t nt;
            AMI_TRY(ami_get_array(c, po, pp.s, "targets", false, &tg, &nt));
            pr->target_position = ami_calloc(c, nt, sizeof *pr->target_position, &s);
            if (s < 0) return s;
            pr->target_count = nt;
            pr->target_normal = ami_calloc(c, nt, sizeof *pr->target_normal, &s);
            if (s < 0) return s;
            pr->target_tangent = ami_calloc(c, nt, sizeof *pr->target_tangent, &s);
            if (s < 0) return s;
            for (size_t t = 0; t < nt; t++) {
                ami_jpath pt = ami_json_path_index(ami_json_path_key(pp.s, "targets").s, t);
                json_t *to = json_array_get(tg, t);
                AMI_TRY(ami_json_expect(to, JSON_OBJECT, pt.s, c->err));
                AMI_TRY(ami_get_index(c, to, pt.s, "POSITION", false, na,
                                      &pr->target_position[t]));
                AMI_TRY(ami_check_accessor(c, pr->target_position[t], 3, pt.s));
                AMI_TRY(ami_get_index(c, to, pt.s, "NORMAL", false, na, &pr->target_normal[t]));
                AMI_TRY(ami_check_accessor(c, pr->target_normal[t], 3, pt.s));
                AMI_TRY(ami_get_index(c, to, pt.s, "TANGENT", false, na, &pr->target_tangent[t]));
                AMI_TRY(ami_check_accessor(c, pr->target_tangent[t], 3, pt.s));
            }
        }
        /* extras.targetNames: a convention of Blender's exporter and three.js, not the spec, so
         * a malformed one is ignored rather than refused */
        json_t *names = json_object_get(json_object_get(o, "extras"), "targetNames");
        if (json_array_size(names)) {
            m->target_names = ami_calloc(c, json_array_size(names), sizeof *m->target_names, &s);
            if (s < 0) return s;
            m->target_name_count = json_array_size(names);
            for (size_t t = 0; t < m->target_name_count; t++) {
                const char *nm = json_string_value(json_array_get(names, t));
                if (nm && !(m->target_names[t] = am_strdup(nm)))
                    return AM_FAIL(c->err, AM_E_NOMEM, "%s.extras.targetNames", p.s);
            }
        }
        AMI_TRY(ami_get_array(c, o, p.s, "weights", false, &wv, &nw));
        if (nw) {
            m->weights = ami_calloc(c, nw, sizeof *m->weights, &s);
            if (s < 0) return s;
            m->weight_count = nw;
            ami_jpath pw = ami_json_path_key(p.s, "weights");
            AMI_TRY(ami_json_numbers(wv, pw.s, 1, &nw, m->weights, c->err));
        }
    }
    return AM_OK;
}

/* Morph weight count of a node: its mesh's targets (the largest over primitives), else the
 * weights arrays. */
static size_t ami_node_weight_count(const am_gltf *doc, int32_t node)
{
    const am_gltf_node *nd = &doc->nodes[node];
    size_t w = nd->weight_count;
    if (nd->mesh >= 0) {
        const am_gltf_mesh *m = &doc->meshes[nd->mesh];
        if (m->weight_count > w) w = m->weight_count;
        for (size_t k = 0; k < m->primitive_count; k++)
            if (m->primitives[k].target_count > w) w = m->primitives[k].target_count;
    }
    return w;
}

/* ---- animations -------------------------------------------------------------------------- */

static am_status ami_read_animations(ami_gctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    am_status s = AM_OK;
    am_gltf *doc = c->doc;
    AMI_TRY(ami_get_array(c, root, "", "animations", false, &arr, &n));
    doc->animations = ami_calloc(c, n, sizeof *doc->animations, &s);
    if (s < 0) return s;
    doc->animation_count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o, *cv, *sv;
        ami_jpath p;
        size_t nc, ns;
        AMI_TRY(ami_item(c, arr, "animations", i, &o, &p));
        am_gltf_animation *an = &doc->animations[i];
        AMI_TRY(ami_get_name(c, o, p.s, &an->name));
        AMI_TRY(ami_get_array(c, o, p.s, "samplers", true, &sv, &ns));
        AMI_TRY(ami_get_array(c, o, p.s, "channels", true, &cv, &nc));
        an->samplers = ami_calloc(c, ns, sizeof *an->samplers, &s);
        if (s < 0) return s;
        an->sampler_count = ns;
        an->channels = ami_calloc(c, nc, sizeof *an->channels, &s);
        if (s < 0) return s;
        an->channel_count = nc;
        an->t_min = INFINITY;
        an->t_max = -INFINITY;
        for (size_t k = 0; k < ns; k++) {
            ami_jpath ps = ami_json_path_index(ami_json_path_key(p.s, "samplers").s, k);
            json_t *so = json_array_get(sv, k);
            AMI_TRY(ami_json_expect(so, JSON_OBJECT, ps.s, c->err));
            am_gltf_sampler *sm = &an->samplers[k];
            AMI_TRY(ami_get_index(c, so, ps.s, "input", true, doc->accessor_count, &sm->input));
            AMI_TRY(ami_get_index(c, so, ps.s, "output", true, doc->accessor_count, &sm->output));
            const char *interp = "LINEAR";
            AMI_TRY(ami_json_get_string(so, ps.s, "interpolation", false, &interp, c->err));
            if (strcmp(interp, "LINEAR") == 0) sm->interp = AM_GLTF_LINEAR;
            else if (strcmp(interp, "STEP") == 0) sm->interp = AM_GLTF_STEP;
            else if (strcmp(interp, "CUBICSPLINE") == 0) sm->interp = AM_GLTF_CUBICSPLINE;
            else
                return AM_FAIL(c->err, AM_E_FORMAT, "%s.interpolation '%.32s' unknown", ps.s,
                               interp);
            const am_gltf_accessor *in = &doc->accessors[sm->input];
            if (in->components != 1)
                return AM_FAIL(c->err, AM_E_SCHEMA, "%s.input: times must be SCALAR", ps.s);
            for (size_t q = 0; q < in->count; q++) {
                float tq = in->data[q];
                if (!isfinite(tq) || (q > 0 && tq < in->data[q - 1]))
                    return AM_FAIL(c->err, AM_E_FORMAT,
                                   "%s.input: time %zu (%g) not finite or decreasing", ps.s, q,
                                   (double)tq);
            }
            if (in->data[0] < an->t_min) an->t_min = in->data[0];
            if (in->data[in->count - 1] > an->t_max) an->t_max = in->data[in->count - 1];
        }
        if (ns == 0) an->t_min = an->t_max = 0;
        for (size_t k = 0; k < nc; k++) {
            ami_jpath pc = ami_json_path_index(ami_json_path_key(p.s, "channels").s, k);
            json_t *co = json_array_get(cv, k), *tg = NULL;
            AMI_TRY(ami_json_expect(co, JSON_OBJECT, pc.s, c->err));
            am_gltf_channel *ch = &an->channels[k];
            AMI_TRY(ami_get_index(c, co, pc.s, "sampler", true, ns, &ch->sampler));
            AMI_TRY(ami_json_member(co, pc.s, "target", true, &tg, c->err));
            ami_jpath pt = ami_json_path_key(pc.s, "target");
            AMI_TRY(ami_json_expect(tg, JSON_OBJECT, pt.s, c->err));
            /* A channel without a node (extensions) animates nothing we model. */
            AMI_TRY(ami_get_index(c, tg, pt.s, "node", false, doc->node_count, &ch->node));
            const char *path = NULL;
            AMI_TRY(ami_json_get_string(tg, pt.s, "path", true, &path, c->err));
            size_t m;
            if (strcmp(path, "translation") == 0) ch->path = AM_GLTF_PATH_TRANSLATION, m = 3;
            else if (strcmp(path, "rotation") == 0) ch->path = AM_GLTF_PATH_ROTATION, m = 4;
            else if (strcmp(path, "scale") == 0) ch->path = AM_GLTF_PATH_SCALE, m = 3;
            else if (strcmp(path, "weights") == 0) ch->path = AM_GLTF_PATH_WEIGHTS, m = 0;
            else {
                ch->node = -1; /* "pointer" and other extension paths: ignored */
                ch->path = AM_GLTF_PATH_COUNT;
                continue;
            }
            if (ch->node < 0) continue;
            const am_gltf_sampler *sm = &an->samplers[ch->sampler];
            const am_gltf_accessor *in = &doc->accessors[sm->input];
            const am_gltf_accessor *out = &doc->accessors[sm->output];
            size_t per_key = sm->interp == AM_GLTF_CUBICSPLINE ? 3 : 1;
            if (m == 0) {
                m = ami_node_weight_count(doc, ch->node);
                if (out->components != 1 || m == 0 || out->count != in->count * per_key * m)
                    return AM_FAIL(c->err, AM_E_FORMAT,
                                   "%s: weights output has %zu values for %zu keys of %zu "
                                   "weights",
                                   pc.s, out->count, in->count, m);
            } else if (out->components != m || out->count != in->count * per_key) {
                return AM_FAIL(c->err, AM_E_FORMAT,
                               "%s: output %d has %zu x %zu values for %zu keys", pc.s,
                               sm->output, out->count, out->components, in->count);
            }
        }
    }
    return AM_OK;
}

/* ---- document ---------------------------------------------------------------------------- */

static am_status ami_read_json(ami_gctx *c, const char *text, size_t len, uint64_t json_offset)
{
    json_t *root = NULL;
    am_status s = ami_json_parse(text, len, c->source, &root, c->err);
    if (s < 0) {
        if (json_offset && c->err) c->err->offset = json_offset;
        return s;
    }
    am_gltf *doc = c->doc;
    json_t *asset = NULL;
    s = ami_json_member(root, "", "asset", true, &asset, c->err);
    const char *version = NULL, *gen = NULL;
    if (s == AM_OK) s = ami_json_get_string(asset, "asset", "version", true, &version, c->err);
    if (s == AM_OK && !(version[0] == '2' && (version[1] == '.' || version[1] == '\0')))
        s = AM_FAIL(c->err, AM_E_UNSUPPORTED, "asset.version '%.16s': only glTF 2.x", version);
    if (s == AM_OK) s = ami_json_get_string(asset, "asset", "generator", false, &gen, c->err);
    if (s == AM_OK && gen && !(doc->generator = am_strdup(gen)))
        s = AM_FAIL(c->err, AM_E_NOMEM, "generator");
    /* Counts first: nodes refer to meshes and skins, skins to nodes. */
    json_t *tmp;
    size_t cnt = 0;
    if (s == AM_OK) s = ami_get_array(c, root, "", "meshes", false, &tmp, &cnt);
    doc->mesh_count = cnt;
    if (s == AM_OK) s = ami_get_array(c, root, "", "skins", false, &tmp, &cnt);
    doc->skin_count = cnt;
    if (s == AM_OK && c->keep) {
        c->decoded_bytes += len;
        if (c->decoded_bytes > c->max_bytes)
            s = AM_FAIL(c->err, AM_E_LIMIT, "keeping the JSON of %zu bytes exceeds %llu bytes", len,
                        (unsigned long long)c->max_bytes);
    }
    if (s == AM_OK && c->keep) {
        c->keep->json = am_strndup(text, len);
        c->keep->json_len = len;
        if (!c->keep->json) s = AM_FAIL(c->err, AM_E_NOMEM, "JSON of %zu bytes", len);
    }
    if (s == AM_OK) s = ami_read_buffers(c, root);
    if (s == AM_OK) s = ami_keep_images(c, root);
    if (s == AM_OK) s = ami_read_views(c, root);
    if (s == AM_OK) s = ami_read_accessors(c, root);
    if (s == AM_OK) s = ami_read_meshes(c, root);
    if (s == AM_OK) s = ami_read_nodes(c, root);
    if (s == AM_OK) s = ami_read_skins(c, root);
    if (s == AM_OK) s = ami_read_animations(c, root);
    if (s == AM_OK) {
        doc->scene = -1;
        size_t nscenes = 0;
        s = ami_get_array(c, root, "", "scenes", false, &tmp, &nscenes);
        if (s == AM_OK) s = ami_get_index(c, root, "", "scene", false, nscenes, &doc->scene);
        if (s == AM_OK && doc->scene < 0 && nscenes > 0) doc->scene = 0;
    }
    json_decref(root);
    return s;
}

static uint32_t ami_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static am_status ami_read_glb(ami_gctx *c, const uint8_t *b, size_t len)
{
    AMI_CHECK(c->err, len >= 12, AM_E_TRUNCATED, "GLB header needs 12 bytes, have %zu", len);
    uint32_t version = ami_le32(b + 4), total = ami_le32(b + 8);
    if (version != 2)
        return AM_FAIL_OFS(c->err, AM_E_UNSUPPORTED, NULL, 4, "GLB version %u", version);
    if (total > len)
        return AM_FAIL_OFS(c->err, AM_E_TRUNCATED, NULL, 8,
                           "GLB length %u but only %zu bytes", total, len);
    if (total < 20)
        return AM_FAIL_OFS(c->err, AM_E_TRUNCATED, NULL, 8, "GLB length %u has no JSON chunk",
                           total);
    size_t end = total;
    size_t pos = 12;
    const uint8_t *json = NULL;
    size_t json_len = 0, json_pos = 0;
    for (int chunk = 0; pos < end; chunk++) {
        if (end - pos < 8)
            return AM_FAIL_OFS(c->err, AM_E_TRUNCATED, NULL, pos, "chunk header needs 8 bytes");
        uint32_t clen = ami_le32(b + pos), ctype = ami_le32(b + pos + 4);
        if (clen > end - pos - 8)
            return AM_FAIL_OFS(c->err, AM_E_TRUNCATED, NULL, pos,
                               "chunk length %u exceeds the %zu bytes left", clen,
                               end - pos - 8);
        if (chunk == 0) {
            if (ctype != AMI_GLB_CHUNK_JSON)
                return AM_FAIL_OFS(c->err, AM_E_FORMAT, NULL, pos + 4,
                                   "first chunk is not JSON (0x%08x)", ctype);
            json = b + pos + 8;
            json_len = clen;
            json_pos = pos + 8;
        } else if (chunk == 1 && ctype == AMI_GLB_CHUNK_BIN) {
            c->bin = b + pos + 8;
            c->bin_len = clen;
            c->bin_offset = pos + 8;
        } /* other chunk types are skipped, as the spec asks */
        pos += 8 + (size_t)clen;
    }
    return ami_read_json(c, (const char *)json, json_len, json_pos);
}

void am_gltf_free(am_gltf *doc)
{
    if (!doc) return;
    for (size_t i = 0; i < doc->node_count; i++) {
        am_free(doc->nodes[i].name);
        am_free(doc->nodes[i].children);
        am_free(doc->nodes[i].weights);
    }
    am_free(doc->nodes);
    am_free(doc->node_order);
    for (size_t i = 0; i < doc->skin_count && doc->skins; i++) {
        am_free(doc->skins[i].name);
        am_free(doc->skins[i].joints);
        am_free(doc->skins[i].inverse_bind);
    }
    am_free(doc->skins);
    for (size_t i = 0; i < doc->mesh_count && doc->meshes; i++) {
        am_gltf_mesh *m = &doc->meshes[i];
        for (size_t k = 0; k < m->primitive_count && m->primitives; k++) {
            am_free(m->primitives[k].target_position);
            am_free(m->primitives[k].target_normal);
            am_free(m->primitives[k].target_tangent);
        }
        for (size_t t = 0; t < m->target_name_count; t++) am_free(m->target_names[t]);
        am_free(m->target_names);
        am_free(m->primitives);
        am_free(m->name);
        am_free(m->weights);
    }
    am_free(doc->meshes);
    for (size_t i = 0; i < doc->accessor_count; i++) {
        am_free(doc->accessors[i].data);
        am_free(doc->accessors[i].ints);
    }
    am_free(doc->accessors);
    for (size_t i = 0; i < doc->animation_count; i++) {
        am_free(doc->animations[i].name);
        am_free(doc->animations[i].channels);
        am_free(doc->animations[i].samplers);
    }
    am_free(doc->animations);
    am_free(doc->generator);
    am_warning_list_free(&doc->warnings);
    ami_gltf_source_free(doc->source);
    am_free(doc->source_name);
    am_free(doc);
}

static am_status ami_gltf_read_mem(const void *buf, size_t len, const char *source,
                                   const char *base_dir, const am_gltf_opts *opts, am_gltf **out,
                                   am_error *err)
{
    assert(out && (buf || len == 0));
    *out = NULL;
    ami_gctx c = {0};
    c.source = source;
    c.base_dir = base_dir;
    c.max_bytes = ami_budget(opts && opts->max_bytes ? opts->max_bytes : AMI_GLTF_DEFAULT_BUDGET);
    c.err = err;
    /* The document's bytes stay in memory while it is decoded: they count. */
    c.decoded_bytes = len;
    am_status s;
    if (len > c.max_bytes) {
        s = AM_FAIL(err, AM_E_LIMIT, "%zu bytes, limit %llu", len,
                    (unsigned long long)c.max_bytes);
        am_error_set_file(err, source);
        return s;
    }
    c.doc = am_alloc(sizeof *c.doc);
    if (!c.doc) {
        s = AM_FAIL(err, AM_E_NOMEM, "document");
        am_error_set_file(err, source);
        return s;
    }
    c.doc->scene = -1;
    if (opts && (opts->flags & AM_GLTF_KEEP_SOURCE)) {
        c.keep = c.doc->source = am_alloc(sizeof *c.doc->source);
        if (!c.keep) {
            am_gltf_free(c.doc);
            s = AM_FAIL(err, AM_E_NOMEM, "document");
            am_error_set_file(err, source);
            return s;
        }
    }
    const uint8_t *b = buf;
    if (len == 0) s = AM_FAIL(err, AM_E_EMPTY, "empty file");
    else if (len >= 4 && ami_le32(b) == AMI_GLB_MAGIC) s = ami_read_glb(&c, b, len);
    else s = ami_read_json(&c, (const char *)b, len, 0);
    for (size_t i = 0; i < c.buffer_count; i++) am_free(c.buffers[i].owned);
    am_free(c.buffers);
    am_free(c.views);
    if (s == AM_OK && source && !(c.doc->source_name = am_strdup(source)))
        s = AM_FAIL(err, AM_E_NOMEM, "document name");
    if (s < 0) {
        am_gltf_free(c.doc);
        am_error_set_file(err, source);
        return s;
    }
    *out = c.doc;
    return AM_OK;
}

static am_status ami_gltf_load(const char *path, const am_gltf_opts *opts, am_gltf **out,
                               am_error *err)
{
    assert(path && out);
    *out = NULL;
    uint64_t max = ami_budget(opts && opts->max_bytes ? opts->max_bytes : AMI_GLTF_DEFAULT_BUDGET);
    char *data = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, max > SIZE_MAX ? SIZE_MAX : (size_t)max, &data, &len, err));
    /* External buffers resolve against the file's folder. */
    char dir[2048];
    const char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        if (slash == path) snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    am_status s = ami_gltf_read_mem(data, len, path, dir, opts, out, err);
    am_free(data);
    return s;
}

am_status am_gltf_read_mem(const void *buf, size_t len, const char *source, const char *base_dir,
                           const am_gltf_opts *opts, am_gltf **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_gltf_read_mem(buf, len, source, base_dir, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

am_status am_gltf_load(const char *path, const am_gltf_opts *opts, am_gltf **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_gltf_load(path, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}

/* ---- sampling ---------------------------------------------------------------------------- */

/* Keyframe interval of time t: k and the fraction u in [0,1] between key k and k+1 (u = 0 and
 * k = last outside the range; the clip holds its end values). */
static void ami_find_key(const float *times, size_t n, double t, size_t *k, double *u, double *td)
{
    *u = 0;
    *td = 0;
    if (n <= 1 || !(t > times[0])) {
        *k = 0;
        return;
    }
    if (t >= times[n - 1]) {
        *k = n - 1;
        return;
    }
    size_t lo = 0, hi = n - 1; /* times[lo] <= t < times[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (times[mid] <= t) lo = mid;
        else hi = mid;
    }
    *k = lo;
    *td = (double)times[lo + 1] - (double)times[lo];
    *u = *td > 0 ? (t - (double)times[lo]) / *td : 0;
}

/* Evaluate a sampler: m values per key (file component order), out[m]. Rotations (quat true)
 * use slerp for LINEAR and are normalized. */
static void ami_eval_sampler(const am_gltf *doc, const am_gltf_sampler *sm, double t, size_t m,
                             bool quat, double *out)
{
    const am_gltf_accessor *in = &doc->accessors[sm->input];
    const float *v = doc->accessors[sm->output].data;
    size_t k;
    double u, td;
    ami_find_key(in->data, in->count, t, &k, &u, &td);
    bool last = k + 1 >= in->count || u <= 0;
    if (sm->interp == AM_GLTF_CUBICSPLINE) {
        const float *p0 = v + (3 * k + 1) * m;
        if (last) {
            for (size_t i = 0; i < m; i++) out[i] = p0[i];
        } else {
            const float *b0 = v + (3 * k + 2) * m;      /* out-tangent of k */
            const float *a1 = v + (3 * (k + 1)) * m;    /* in-tangent of k+1 */
            const float *p1 = v + (3 * (k + 1) + 1) * m;
            double u2 = u * u, u3 = u2 * u;
            double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2,
                   h11 = u3 - u2;
            for (size_t i = 0; i < m; i++)
                out[i] = h00 * p0[i] + h10 * td * b0[i] + h01 * p1[i] + h11 * td * a1[i];
        }
    } else if (sm->interp == AM_GLTF_STEP || last) {
        for (size_t i = 0; i < m; i++) out[i] = v[k * m + i];
    } else if (quat) {
        const float *a = v + k * m, *b = v + (k + 1) * m;
        /* file order x, y, z, w; am_quat_slerp's w, x, y, z (its result is unit already) */
        double qa[4] = {a[3], a[0], a[1], a[2]}, qb[4] = {b[3], b[0], b[1], b[2]}, q[4];
        am_quat_slerp(qa, qb, u, q);
        out[0] = q[1], out[1] = q[2], out[2] = q[3], out[3] = q[0];
        return;
    } else {
        const float *a = v + k * m, *b = v + (k + 1) * m;
        for (size_t i = 0; i < m; i++) out[i] = (1 - u) * a[i] + u * b[i];
    }
    if (quat) {
        double n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
        if (n > 0 && isfinite(n)) {
            for (size_t i = 0; i < 4; i++) out[i] /= n;
        } else {
            out[0] = out[1] = out[2] = 0;
            out[3] = 1;
        }
    }
}

void am_gltf_sample_local(const am_gltf *doc, int anim, double t, double *local)
{
    assert(doc && local);
    for (size_t i = 0; i < doc->node_count; i++)
        memcpy(local + 16 * i, doc->nodes[i].matrix, sizeof doc->nodes[i].matrix);
    if (anim < 0 || (size_t)anim >= doc->animation_count) return;
    const am_gltf_animation *an = &doc->animations[anim];
    /* Without scratch memory (this function never allocates), an animated node's matrix slot
     * first holds its TRS: t in [0..3), rotation (w,x,y,z) in [3..7), scale in [7..10), and NaN
     * in [15] as the marker (a file matrix is finite). A last pass composes the matrices. */
    for (size_t c = 0; c < an->channel_count; c++) {
        const am_gltf_channel *ch = &an->channels[c];
        if (ch->node < 0 || ch->path == AM_GLTF_PATH_WEIGHTS || ch->path >= AM_GLTF_PATH_COUNT)
            continue;
        double *slot = local + 16 * (size_t)ch->node;
        if (!isnan(slot[15])) {
            const am_gltf_node *nd = &doc->nodes[ch->node];
            memcpy(slot, nd->translation, 3 * sizeof *slot);
            memcpy(slot + 3, nd->rotation, 4 * sizeof *slot);
            memcpy(slot + 7, nd->scale, 3 * sizeof *slot);
            slot[15] = NAN;
        }
        const am_gltf_sampler *sm = &an->samplers[ch->sampler];
        double v[4];
        switch (ch->path) {
        case AM_GLTF_PATH_TRANSLATION: ami_eval_sampler(doc, sm, t, 3, false, slot); break;
        case AM_GLTF_PATH_SCALE: ami_eval_sampler(doc, sm, t, 3, false, slot + 7); break;
        default:
            ami_eval_sampler(doc, sm, t, 4, true, v);
            slot[3] = v[3];
            slot[4] = v[0];
            slot[5] = v[1];
            slot[6] = v[2];
            break;
        }
    }
    for (size_t c = 0; c < an->channel_count; c++) {
        int32_t node = an->channels[c].node;
        if (node < 0) continue;
        double *slot = local + 16 * (size_t)node;
        if (!isnan(slot[15])) continue;
        double tr[3] = {slot[0], slot[1], slot[2]}, q[4] = {slot[3], slot[4], slot[5], slot[6]},
               sc[3] = {slot[7], slot[8], slot[9]};
        ami_gltf_trs_matrix(tr, q, sc, slot);
    }
}

void am_gltf_world_from_local(const am_gltf *doc, const double *local, double *world)
{
    assert(doc && local && world);
    for (size_t k = 0; k < doc->node_count; k++) {
        size_t n = doc->node_order ? (size_t)doc->node_order[k] : k;
        int32_t p = doc->nodes[n].parent;
        if (p >= 0) am_mat4_mul(world + 16 * (size_t)p, local + 16 * n, world + 16 * n);
        else memcpy(world + 16 * n, local + 16 * n, 16 * sizeof *world);
    }
}

void am_gltf_sample_weights(const am_gltf *doc, int anim, double t, int node, double *out,
                            size_t out_count)
{
    if (!doc || !out || node < 0 || (size_t)node >= doc->node_count) return;
    const am_gltf_node *nd = &doc->nodes[node];
    const am_gltf_mesh *m = nd->mesh >= 0 ? &doc->meshes[nd->mesh] : NULL;
    for (size_t i = 0; i < out_count; i++) {
        if (i < nd->weight_count) out[i] = nd->weights[i];
        else if (m && i < m->weight_count) out[i] = m->weights[i];
        else out[i] = 0;
    }
    if (anim < 0 || (size_t)anim >= doc->animation_count) return;
    const am_gltf_animation *an = &doc->animations[anim];
    size_t w = ami_node_weight_count(doc, node);
    for (size_t c = 0; c < an->channel_count; c++) {
        const am_gltf_channel *ch = &an->channels[c];
        if (ch->node != node || ch->path != AM_GLTF_PATH_WEIGHTS) continue;
        /* Evaluate in chunks so no scratch array of w values is needed. */
        const am_gltf_sampler *sm = &an->samplers[ch->sampler];
        const am_gltf_accessor *in = &doc->accessors[sm->input];
        const float *v = doc->accessors[sm->output].data;
        size_t k;
        double u, td;
        ami_find_key(in->data, in->count, t, &k, &u, &td);
        bool last = k + 1 >= in->count || u <= 0;
        for (size_t i = 0; i < w && i < out_count; i++) {
            if (sm->interp == AM_GLTF_CUBICSPLINE) {
                double p0 = v[(3 * k + 1) * w + i];
                if (last) {
                    out[i] = p0;
                } else {
                    double b0 = v[(3 * k + 2) * w + i], a1 = v[(3 * k + 3) * w + i],
                           p1 = v[(3 * k + 4) * w + i];
                    double u2 = u * u, u3 = u2 * u;
                    out[i] = (2 * u3 - 3 * u2 + 1) * p0 + (u3 - 2 * u2 + u) * td * b0 +
                             (-2 * u3 + 3 * u2) * p1 + (u3 - u2) * td * a1;
                }
            } else if (sm->interp == AM_GLTF_STEP || last) {
                out[i] = v[k * w + i];
            } else {
                out[i] = (1 - u) * v[k * w + i] + u * v[(k + 1) * w + i];
            }
        }
    }
}
