/* C3D: the 3D points of a motion-capture trial (analog data is skipped).
 *
 * This work is based on the C3D format documentation (C3D.org, "The C3D File Format: A
 * Technical User Guide", Motion Lab Systems 2008): a 512-byte header block, a parameter
 * section of groups and parameters, and frames of points (X, Y, Z, residual word) followed by
 * analog samples, stored as 16-bit integers scaled by POINT:SCALE or, when the scale is
 * negative, as 32-bit floats. The processor type byte of the parameter section says how
 * numbers are stored: 84 Intel (little-endian IEEE), 85 DEC (little-endian integers, VAX F
 * floats: 16-bit words swapped, exponent bias 128 i.e. a factor 4), 86 MIPS / SGI (big-endian).
 *
 * Decisions: a point whose residual word is negative is missing (ezc3d and Vicon agree);
 * POINT:USED, POINT:DATA_START, POINT:SCALE, POINT:RATE and POINT:FRAMES override the header
 * when present; a file whose data stops before its last frame is read up to its last whole
 * frame, with a warning (ezc3d reads the Optotrak sample the same way); labels come from
 * POINT:LABELS then LABELS2, trimmed, else point_<i>, made unique with #2, #3... Units from
 * POINT:UNITS (mm, cm, m; default mm, the format's convention) unless --scale; axes as stored
 * (lab frames are Z up; --up y turns an OpenSim-style Y-up lab).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "io/trackers_internal.h"

enum { AMI_C3D_INTEL = 84, AMI_C3D_DEC = 85, AMI_C3D_MIPS = 86 };

typedef struct {
    const uint8_t *b;
    size_t n;
    int proc;
} ami_c3d;

static int ami_i16(const ami_c3d *c, size_t o)
{
    uint16_t v = c->proc == AMI_C3D_MIPS ? (uint16_t)(c->b[o] << 8 | c->b[o + 1]) : (uint16_t)(c->b[o] | c->b[o + 1] << 8);
    return (int16_t)v;
}

static unsigned ami_u16(const ami_c3d *c, size_t o) { return (uint16_t)ami_i16(c, o); }

static double ami_f32(const ami_c3d *c, size_t o)
{
    uint8_t t[4];
    const uint8_t *s = c->b + o;
    if (c->proc == AMI_C3D_MIPS) t[0] = s[3], t[1] = s[2], t[2] = s[1], t[3] = s[0];
    else if (c->proc == AMI_C3D_DEC) t[0] = s[2], t[1] = s[3], t[2] = s[0], t[3] = s[1];
    else memcpy(t, s, 4);
    uint32_t u = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return c->proc == AMI_C3D_DEC ? (double)f * 0.25 : (double)f;
}

/* One parameter found in the section. */
typedef struct {
    int type;          /* -1 char, 1 byte, 2 int16, 4 float */
    int nd;
    unsigned dims[8];
    size_t data;       /* byte offset of its data */
    size_t count;      /* elements */
} ami_c3d_param;

/* Find GROUP:NAME. Returns false when absent; *bad set on a malformed section. */
static bool ami_c3d_find(const ami_c3d *c, size_t sec, size_t end, const char *group, const char *name,
                         ami_c3d_param *out, bool *bad)
{
    int gid = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t p = sec + 4;
        for (int guard = 0; guard < 100000; guard++) {
            if (p + 2 > end) break;
            int nlen = (int8_t)c->b[p];
            int id = (int8_t)c->b[p + 1];
            if (nlen == 0) break;
            size_t nl = (size_t)(nlen < 0 ? -nlen : nlen);
            if (p + 2 + nl + 2 > end) {
                *bad = true;
                return false;
            }
            const char *nm = (const char *)c->b + p + 2;
            size_t off_at = p + 2 + nl;
            unsigned next = ami_u16(c, off_at);
            if (pass == 0 && id < 0 && strlen(group) == nl && strncasecmp(nm, group, nl) == 0) gid = -id;
            if (pass == 1 && id > 0 && id == gid && strlen(name) == nl && strncasecmp(nm, name, nl) == 0) {
                size_t q = off_at + 2;
                if (q + 2 > end) {
                    *bad = true;
                    return false;
                }
                out->type = (int8_t)c->b[q];
                out->nd = c->b[q + 1];
                if (!(out->type == -1 || out->type == 1 || out->type == 2 || out->type == 4) || out->nd > 7 ||
                    q + 2 + (size_t)out->nd > end) {
                    *bad = true;
                    return false;
                }
                size_t cnt = 1;
                for (int k = 0; k < out->nd; k++) {
                    out->dims[k] = c->b[q + 2 + (size_t)k];
                    cnt *= out->dims[k];
                }
                out->data = q + 2 + (size_t)out->nd;
                out->count = cnt;
                size_t es = (size_t)(out->type < 0 ? 1 : out->type);
                if (out->data + cnt * es > end) {
                    *bad = true;
                    return false;
                }
                return true;
            }
            if (next == 0) break;
            p = off_at + next;
        }
        if (pass == 0 && gid == 0) return false;
    }
    return false;
}

static bool ami_c3d_number(const ami_c3d *c, size_t sec, size_t end, const char *g, const char *n, double *v, bool *bad)
{
    ami_c3d_param p;
    if (!ami_c3d_find(c, sec, end, g, n, &p, bad) || p.count < 1) return false;
    if (p.type == 2) *v = (double)ami_u16(c, p.data);
    else if (p.type == 4) *v = ami_f32(c, p.data);
    else if (p.type == 1) *v = c->b[p.data];
    else return false;
    return true;
}

/* Labels of a char parameter [len][n] into names[offset..]. Returns how many were set. */
static size_t ami_c3d_labels(const ami_c3d *c, const ami_c3d_param *p, char **names, size_t first, size_t P)
{
    if (p->type != -1 || p->nd < 1) return 0;
    size_t w = p->dims[0], n = p->nd >= 2 ? p->dims[1] : 1, set = 0;
    for (size_t k = 0; k < n && first + k < P; k++) {
        const char *s = (const char *)c->b + p->data + k * w;
        size_t l = w;
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\0')) l--;
        size_t a = 0;
        while (a < l && s[a] == ' ') a++;
        if (l > a) {
            bool ok = true;
            for (size_t q = a; q < l; q++) ok &= (unsigned char)s[q] >= 0x20 && (unsigned char)s[q] < 0x7F;
            if (ok && (names[first + k] = am_strndup(s + a, l - a))) set++;
        }
    }
    return set;
}

am_status ami_c3d_parse(const void *buf, size_t len, const char *src, const am_import_opts *o, am_joints **out,
                        am_error *err)
{
    *out = NULL;
    ami_c3d c = {.b = buf, .n = len, .proc = AMI_C3D_INTEL};
    if (len < 512) return AM_FAIL_OFS(err, len ? AM_E_TRUNCATED : AM_E_EMPTY, src, len, "a C3D file has a 512-byte header");
    if (c.b[1] != 0x50) return AM_FAIL_OFS(err, AM_E_FORMAT, src, 1, "not a C3D file (byte 1 is not 0x50)");
    size_t pblock = c.b[0];
    if (pblock < 1) return AM_FAIL_OFS(err, AM_E_FORMAT, src, 0, "parameter block number 0");
    size_t sec = (pblock - 1) * 512;
    if (sec + 4 > len) return AM_FAIL_OFS(err, AM_E_TRUNCATED, src, sec, "the parameter section is missing");
    c.proc = c.b[sec + 3];
    if (c.proc != AMI_C3D_INTEL && c.proc != AMI_C3D_DEC && c.proc != AMI_C3D_MIPS)
        return AM_FAIL_OFS(err, AM_E_UNSUPPORTED, src, sec + 3, "processor type %d (expected 84 Intel, 85 DEC or 86 MIPS)", c.proc);
    size_t nblocks = c.b[sec + 2];
    size_t end = sec + (nblocks ? nblocks : 1) * 512;
    if (end > len) end = len;
    bool bad = false;
    double v;
    size_t P = ami_u16(&c, 2), A = ami_u16(&c, 4);
    long first = ami_u16(&c, 6), last = ami_u16(&c, 8);
    double scale = ami_f32(&c, 12), rate = ami_f32(&c, 20);
    size_t dstart = ami_u16(&c, 16);
    if (ami_c3d_number(&c, sec, end, "POINT", "USED", &v, &bad)) P = (size_t)v;
    if (ami_c3d_number(&c, sec, end, "POINT", "DATA_START", &v, &bad)) dstart = (size_t)v;
    if (ami_c3d_number(&c, sec, end, "POINT", "SCALE", &v, &bad) && isfinite(v) && v != 0) scale = v;
    if (ami_c3d_number(&c, sec, end, "POINT", "RATE", &v, &bad) && v > 0) rate = v;
    size_t frames = last >= first ? (size_t)(last - first + 1) : 0;
    if (ami_c3d_number(&c, sec, end, "POINT", "FRAMES", &v, &bad) && v > (double)frames) frames = (size_t)v;
    if (bad) return AM_FAIL_OFS(err, AM_E_FORMAT, src, sec, "the parameter section is damaged");
    if (P == 0) return AM_FAIL_OFS(err, AM_E_EMPTY, src, 2, "the file holds no 3D points");
    if (!isfinite(scale) || scale == 0) return AM_FAIL_OFS(err, AM_E_VALUE, src, 12, "POINT:SCALE is %g", scale);
    if (!am_fps_valid(rate))
        return AM_FAIL_OFS(err, AM_E_VALUE, src, 20, "frame rate %g is outside [%g, %g]", rate, AM_FPS_MIN, AM_FPS_MAX);
    if (dstart < 2) return AM_FAIL_OFS(err, AM_E_FORMAT, src, 16, "DATA_START block %zu", dstart);
    const bool is_float = scale < 0;
    const size_t es = is_float ? 4 : 2, fsize = (4 * P + A) * es, data = (dstart - 1) * 512;
    if (P > 100000 || A > 1000000) return AM_FAIL_OFS(err, AM_E_LIMIT, src, 2, "%zu points and %zu analog values a frame", P, A);
    if (data >= len) return AM_FAIL_OFS(err, AM_E_TRUNCATED, src, len, "the data section (block %zu) is missing", dstart);
    size_t have = (len - data) / fsize;
    if (frames == 0) return AM_FAIL_OFS(err, AM_E_EMPTY, src, 6, "no frames (first %ld, last %ld)", first, last);
    if (have == 0) return AM_FAIL_OFS(err, AM_E_TRUNCATED, src, len, "not one whole frame of data");
    if (have < frames) {
        ami_warn(AM_WARN_MISSING_DATA, "%s: the header claims %zu frames, the data holds %zu (read)", src ? src : "C3D", frames,
                 have);
        frames = have;
    }
    double unit = o && o->scale > 0 ? o->scale : 0.001;
    if (!(o && o->scale > 0)) {
        ami_c3d_param up;
        if (ami_c3d_find(&c, sec, end, "POINT", "UNITS", &up, &bad) && up.type == -1) {
            char u[8] = "";
            size_t l = up.dims[0] < 7 ? up.dims[0] : 7;
            memcpy(u, c.b + up.data, l);
            while (l && u[l - 1] == ' ') u[--l] = '\0';
            if (strcasecmp(u, "m") == 0) unit = 1.0;
            else if (strcasecmp(u, "cm") == 0) unit = 0.01;
            else if (strcasecmp(u, "mm") != 0 && u[0])
                ami_warn(AM_WARN_UNITS, "%s: POINT:UNITS '%s' unknown, read as mm (--scale)", src ? src : "C3D", u);
        }
    }
    am_joints *jt = NULL;
    AMI_TRY(am_joints_create(frames, P, false, &jt, err));
    ami_c3d_param lp;
    size_t nl = 0;
    if (ami_c3d_find(&c, sec, end, "POINT", "LABELS", &lp, &bad)) {
        ami_c3d_labels(&c, &lp, jt->names, 0, P);
        nl = lp.nd >= 2 ? lp.dims[1] : 1;
    }
    /* Over 255 points the labels go on in LABELS2. */
    if (nl < P && ami_c3d_find(&c, sec, end, "POINT", "LABELS2", &lp, &bad)) ami_c3d_labels(&c, &lp, jt->names, nl, P);
    am_status st = AM_OK;
    ami_names seen = {0}; /* the names given so far */
    for (size_t j = 0; j < P && st == AM_OK; j++) {
        char b[64];
        if (!jt->names[j]) {
            snprintf(b, sizeof b, "point_%zu", j);
            if (!(jt->names[j] = am_strdup(b))) st = AM_FAIL(err, AM_E_NOMEM, "names");
        } else {
            char base[40];
            snprintf(base, sizeof base, "%.38s", jt->names[j]);
            for (int dup = 2; st == AM_OK && dup < 100000 && ami_names_find_str(&seen, jt->names[j]) >= 0; dup++) {
                snprintf(b, sizeof b, "%s#%d", base, dup);
                char *nn = am_strdup(b);
                if (!nn) st = AM_FAIL(err, AM_E_NOMEM, "names");
                am_free(jt->names[j]);
                jt->names[j] = nn;
            }
        }
        int32_t prev;
        if (st == AM_OK && ami_names_add(&seen, jt->names[j], strlen(jt->names[j]), (int32_t)j, &prev) != AM_OK)
            st = AM_FAIL(err, AM_E_NOMEM, "names");
    }
    ami_names_free(&seen);
    const double k = is_float ? unit : fabs(scale) * unit;
    const char up = o && o->up ? o->up : 'z';
    for (size_t t = 0; t < frames && st == AM_OK; t++) {
        size_t base = data + t * fsize;
        for (size_t j = 0; j < P; j++) {
            size_t at = base + j * 4 * es;
            double p[3], res;
            if (is_float) {
                for (int d = 0; d < 3; d++) p[d] = ami_f32(&c, at + 4 * (size_t)d);
                double r = ami_f32(&c, at + 12);
                res = isfinite(r) && fabs(r) < 40000 ? (double)(int16_t)(int)r : -1;
            } else {
                for (int d = 0; d < 3; d++) p[d] = ami_i16(&c, at + 2 * (size_t)d);
                res = ami_i16(&c, at + 6);
            }
            if (res < 0 || !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) continue;
            double q[3] = {p[0] * k, p[1] * k, p[2] * k};
            ami_axes_to_world(up, q, jt->joints + (t * P + j) * 3);
        }
    }
    jt->fps = rate;
    if (st != AM_OK) {
        am_joints_free(jt);
        return st;
    }
    *out = jt;
    return AM_OK;
}
