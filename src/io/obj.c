/* Wavefront OBJ meshes: `v` positions and `f` polygons (fan-triangulated). `vt`/`vn` lines are
 * checked (numbers) and counted so a face's vt/vn indices are checked, but not kept; groups,
 * materials and every other statement are skipped. Face
 * indices are 1-based, negative ones count back from the last vertex read (the OBJ rule), and
 * `f 1/2/3` takes the position index. Errors give the 1-based line and column. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/io.h"
#include "core/internal.h"

#define AMI_OBJ_MAX_BYTES ((size_t)1 << 30)

void am_mesh_free(am_mesh *m)
{
    if (!m) return;
    am_free(m->positions);
    am_free(m->triangles);
    am_free(m);
}

typedef struct {
    const char *s, *end, *line_start, *source;
    uint32_t line;
    am_error *err;
} ami_obj;

static void ami_obj_space(ami_obj *o)
{
    while (o->s < o->end && (*o->s == ' ' || *o->s == '\t' || *o->s == '\r')) o->s++;
}

static uint32_t ami_obj_col(const ami_obj *o) { return (uint32_t)(o->s - o->line_start) + 1; }

static bool ami_obj_eol(ami_obj *o)
{
    ami_obj_space(o);
    return o->s >= o->end || *o->s == '\n' || *o->s == '#';
}

/* A number token: strtod on a bounded copy (the buffer is not NUL-terminated per line). */
static am_status ami_obj_number(ami_obj *o, double *out)
{
    ami_obj_space(o);
    const char *t = o->s;
    while (t < o->end && !isspace((unsigned char)*t) && *t != '#') t++;
    char buf[64];
    size_t n = (size_t)(t - o->s);
    if (n == 0 || n >= sizeof buf)
        return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, ami_obj_col(o), "expected a number");
    memcpy(buf, o->s, n);
    buf[n] = '\0';
    char *e = NULL;
    double v = strtod(buf, &e);
    if (*e != '\0')
        return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, ami_obj_col(o), "expected a number, got '%s'", buf);
    if (!isfinite(v))
        return AM_FAIL_AT(o->err, AM_E_NONFINITE, o->source, o->line, ami_obj_col(o), "'%s'", buf);
    o->s = t;
    *out = v;
    return AM_OK;
}

/* One 1-based OBJ index (negative counts back from the last of `count` read so far) to 0-based;
 * `what` names the list in the message ("vertex", "texture coordinate", "normal"). */
static am_status ami_obj_index(ami_obj *o, const char **tp, size_t count, const char *what, int32_t *out)
{
    const char *t = *tp;
    uint32_t col = (uint32_t)(t - o->line_start) + 1; /* the column of this index, not the corner */
    bool neg = t < o->end && *t == '-';
    if (neg) t++;
    long long v = 0;
    const char *d0 = t;
    while (t < o->end && *t >= '0' && *t <= '9') {
        v = v * 10 + (*t - '0');
        if (v > INT32_MAX) return AM_FAIL_AT(o->err, AM_E_LIMIT, o->source, o->line, col, "face index too large");
        t++;
    }
    if (t == d0) return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, col, "expected a %s index", what);
    long long idx = neg ? (long long)count - v : v - 1;
    if (v == 0 || idx < 0 || idx >= (long long)count)
        return AM_FAIL_AT(o->err, AM_E_VALUE, o->source, o->line, col, "face %s index %s%lld refers to none (%zu read so far)",
                          what, neg ? "-" : "", v, count);
    *tp = t;
    *out = (int32_t)idx;
    return AM_OK;
}

/* One face corner "v", "v/vt", "v//vn" or "v/vt/vn": the position index, 0-based. The vt and vn
 * indices are checked against the `vt`/`vn` lines read so far (a dangling one is a broken file
 * even though this reader keeps only positions). */
static am_status ami_obj_corner(ami_obj *o, size_t vcount, size_t vtcount, size_t vncount, int32_t *out)
{
    ami_obj_space(o);
    uint32_t col = ami_obj_col(o);
    const char *t = o->s;
    int32_t idx = 0, unused = 0;
    AMI_TRY(ami_obj_index(o, &t, vcount, "vertex", &idx));
    if (t < o->end && *t == '/') {
        t++;
        if (t < o->end && *t != '/') AMI_TRY(ami_obj_index(o, &t, vtcount, "texture coordinate", &unused));
        if (t < o->end && *t == '/') {
            t++;
            AMI_TRY(ami_obj_index(o, &t, vncount, "normal", &unused));
        }
    }
    if (t < o->end && !isspace((unsigned char)*t) && *t != '#')
        return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, col, "bad face corner");
    o->s = t;
    *out = idx;
    return AM_OK;
}

static bool ami_obj_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 1024;
    while (c < need) c *= 2;
    void *q = am_realloc_array(*p, c, elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static am_status ami_obj_parse(ami_obj *o, const am_obj_opts *opts, am_mesh *m)
{
    size_t vcap = 0, fcap = 0, vtcount = 0, vncount = 0;
    int32_t poly[3];
    while (o->s < o->end) {
        o->line_start = o->s;
        ami_obj_space(o);
        const char *kw = o->s;
        while (o->s < o->end && !isspace((unsigned char)*o->s)) o->s++;
        size_t kn = (size_t)(o->s - kw);
        if (kn == 1 && kw[0] == 'v') {
            double p[3];
            for (int k = 0; k < 3; k++) AMI_TRY(ami_obj_number(o, &p[k]));
            double w[3] = {p[0], p[1], p[2]};
            if (!(opts && opts->z_up)) am_gltf_to_world(p, w); /* Y up, front +Z: glTF's frame */
            double s = opts && opts->scale > 0 ? opts->scale : 1.0;
            AMI_CHECK(o->err, ami_obj_grow((void **)&m->positions, &vcap, (m->vertex_count + 1) * 3, sizeof(float)),
                      AM_E_NOMEM, "%zu vertices", m->vertex_count + 1);
            for (int k = 0; k < 3; k++) m->positions[m->vertex_count * 3 + (size_t)k] = (float)(w[k] * s);
            m->vertex_count++;
        } else if ((kn == 2 && kw[0] == 'v' && kw[1] == 't') || (kn == 2 && kw[0] == 'v' && kw[1] == 'n')) {
            /* counted so face corners can be checked; u (and v, w) or the normal must be numbers */
            double c = 0;
            int need = kw[1] == 't' ? 1 : 3;
            for (int k = 0; k < need; k++) AMI_TRY(ami_obj_number(o, &c));
            while (!ami_obj_eol(o)) AMI_TRY(ami_obj_number(o, &c));
            if (kw[1] == 't') vtcount++;
            else vncount++;
        } else if (kn == 1 && kw[0] == 'f') {
            size_t corners = 0;
            while (!ami_obj_eol(o)) {
                int32_t c = 0;
                AMI_TRY(ami_obj_corner(o, m->vertex_count, vtcount, vncount, &c));
                if (corners < 2) {
                    poly[corners] = c;
                } else {
                    poly[2] = c;
                    AMI_CHECK(o->err,
                              ami_obj_grow((void **)&m->triangles, &fcap, (m->triangle_count + 1) * 3, sizeof(int32_t)),
                              AM_E_NOMEM, "%zu triangles", m->triangle_count + 1);
                    memcpy(m->triangles + m->triangle_count * 3, poly, sizeof poly);
                    m->triangle_count++;
                    poly[1] = c;
                }
                corners++;
            }
            if (corners < 3)
                return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, ami_obj_col(o),
                                  "a face needs 3 corners, got %zu", corners);
        }
        while (o->s < o->end && *o->s != '\n') o->s++;
        if (o->s < o->end) o->s++;
        o->line++;
    }
    AMI_CHECK(o->err, m->vertex_count > 0, AM_E_EMPTY, "no vertices ('v' lines)");
    return AM_OK;
}

am_status am_obj_read_mem(const char *text, size_t len, const char *source, const am_obj_opts *opts, am_mesh **out,
                          am_error *err)
{
    assert(out && (text || len == 0));
    *out = NULL;
    am_mesh *m = am_alloc(sizeof *m);
    AMI_CHECK(err, m, AM_E_NOMEM, "mesh");
    ami_obj o = {.s = text, .end = text + len, .line_start = text, .source = source, .line = 1, .err = err};
    am_status st = ami_obj_parse(&o, opts, m);
    if (st != AM_OK) {
        am_mesh_free(m);
        am_error_set_file(err, source);
        return st;
    }
    *out = m;
    return AM_OK;
}

am_status am_obj_load(const char *path, const am_obj_opts *opts, am_mesh **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, AMI_OBJ_MAX_BYTES, &text, &len, err));
    am_status st = am_obj_read_mem(text, len, path, opts, out, err);
    am_free(text);
    return st;
}

am_status am_obj_write(const am_mesh *mesh, const am_obj_opts *opts, const char *path, am_error *err)
{
    assert(mesh && path);
    am_buf b = {0};
    am_buf_printf(&b, "# anymove %s: %zu vertices, %zu triangles, %s\n", AM_VERSION_STRING, mesh->vertex_count,
                  mesh->triangle_count, opts && opts->z_up ? "Z up, front -Y" : "Y up, front +Z");
    double s = opts && opts->scale > 0 ? 1.0 / opts->scale : 1.0;
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        double w[3] = {mesh->positions[v * 3], mesh->positions[v * 3 + 1], mesh->positions[v * 3 + 2]}, g[3];
        if (opts && opts->z_up) memcpy(g, w, sizeof g);
        else am_gltf_from_world(w, g);
        am_buf_printf(&b, "v %.9g %.9g %.9g\n", g[0] * s, g[1] * s, g[2] * s);
    }
    for (size_t f = 0; f < mesh->triangle_count; f++)
        am_buf_printf(&b, "f %d %d %d\n", mesh->triangles[f * 3] + 1, mesh->triangles[f * 3 + 1] + 1,
                      mesh->triangles[f * 3 + 2] + 1);
    if (b.failed) {
        am_buf_free(&b);
        return AM_FAIL(err, AM_E_NOMEM, "OBJ text of %zu vertices", mesh->vertex_count);
    }
    am_status st = am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}
