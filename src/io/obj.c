/* Wavefront OBJ meshes: `v` positions, `vt` texture coordinates, `vn` normals and `f` polygons
 * (fan-triangulated), `mtllib` and `usemtl` (materials, mtl.c); groups, smoothing groups and
 * every other statement are skipped. Face indices are 1-based, negative ones count back from
 * the last one read (the OBJ rule). Errors give the 1-based line and column.
 *
 * am_obj_load reads the positions alone (one vertex per `v`); am_obj_model_load splits them
 * into glTF's vertices, one per distinct (v, vt, vn) corner, and keeps the map back to the
 * positions so that welding and bone heat still see one surface. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/gltf.h"
#include "anymove/io.h"
#include "core/internal.h"
#include "io/gltf_internal.h"
#include "io/obj_internal.h"

#define AMI_OBJ_MAX_BYTES ((size_t)1 << 30)
#define AMI_OBJ_TEXTURE_MAX_BYTES ((size_t)256 << 20)
#define AMI_OBJ_MTL_MAX_BYTES ((size_t)64 << 20)

void am_mesh_free(am_mesh *m)
{
    if (!m) return;
    am_free(m->positions);
    am_free(m->triangles);
    am_free(m);
}

/* ---- the text cursor (OBJ and MTL) ---- */

void ami_text_space(ami_text *t)
{
    while (t->s < t->end && (*t->s == ' ' || *t->s == '\t' || *t->s == '\r')) t->s++;
}

uint32_t ami_text_col(const ami_text *t) { return (uint32_t)(t->s - t->line_start) + 1; }

bool ami_text_eol(ami_text *t)
{
    ami_text_space(t);
    return t->s >= t->end || *t->s == '\n' || *t->s == '#';
}

void ami_text_keyword(ami_text *t, const char **kw, size_t *n)
{
    t->line_start = t->s;
    ami_text_space(t);
    *kw = t->s;
    while (t->s < t->end && !isspace((unsigned char)*t->s)) t->s++;
    *n = (size_t)(t->s - *kw);
}

/* A number token: strtod on a bounded copy (the buffer is not NUL-terminated per line). */
am_status ami_text_number(ami_text *t, double *out)
{
    ami_text_space(t);
    const char *e0 = t->s;
    while (e0 < t->end && !isspace((unsigned char)*e0) && *e0 != '#') e0++;
    char buf[64];
    size_t n = (size_t)(e0 - t->s);
    if (n == 0 || n >= sizeof buf)
        return AM_FAIL_AT(t->err, AM_E_SYNTAX, t->source, t->line, ami_text_col(t), "expected a number");
    memcpy(buf, t->s, n);
    buf[n] = '\0';
    char *e = NULL;
    double v = strtod(buf, &e);
    if (*e != '\0')
        return AM_FAIL_AT(t->err, AM_E_SYNTAX, t->source, t->line, ami_text_col(t), "expected a number, got '%s'", buf);
    if (!isfinite(v)) return AM_FAIL_AT(t->err, AM_E_NONFINITE, t->source, t->line, ami_text_col(t), "'%s'", buf);
    t->s = e0;
    *out = v;
    return AM_OK;
}

void ami_text_rest(ami_text *t, const char **s, size_t *n)
{
    ami_text_space(t);
    const char *e = t->s;
    while (e < t->end && *e != '\n') e++;
    *s = t->s;
    t->s = e;
    while (e > *s && isspace((unsigned char)e[-1])) e--;
    /* a NUL ends the name: it is kept as a C string, and looked up by that length */
    *n = strnlen(*s, (size_t)(e - *s));
}

void ami_text_next_line(ami_text *t)
{
    while (t->s < t->end && *t->s != '\n') t->s++;
    if (t->s < t->end) t->s++;
    t->line++;
}

/* ---- parsing into lists ---- */

typedef struct {
    int32_t p, t, n; /* position, texture coordinate, normal (0-based; -1 = none) */
} ami_corner;

typedef struct ami_obj_raw {
    float *pos;               /* [P][3] world axes, metres */
    float *uv;                /* [T][2] glTF's (u, 1 - v) */
    float *nrm;               /* [N][3] world axes, as written (not normalized) */
    ami_corner *tri;          /* [F][3] */
    int32_t *tri_group;       /* [F] the usemtl group, or -1 */
    char **groups;            /* [G] usemtl names */
    char **libs;              /* [L] mtllib names (the rest of their line) */
    uint32_t *lib_line;       /* [L] */
    size_t P, T, N, F, G, L;
    size_t pcap, tcap, ncap, fcap, gfcap, gcap, lcap, llcap;
    ami_names group_names;
} ami_obj_raw;

static void ami_obj_raw_free(ami_obj_raw *r)
{
    am_free(r->pos);
    am_free(r->uv);
    am_free(r->nrm);
    am_free(r->tri);
    am_free(r->tri_group);
    ami_strings_free(r->groups, r->G);
    ami_strings_free(r->libs, r->L);
    am_free(r->lib_line);
    ami_names_free(&r->group_names);
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

/* One 1-based OBJ index (negative counts back from the last of `count` read so far) to 0-based;
 * `what` names the list in the message ("vertex", "texture coordinate", "normal"). */
static am_status ami_obj_index(ami_text *o, const char **tp, size_t count, const char *what, int32_t *out)
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

/* One face corner "v", "v/vt", "v//vn" or "v/vt/vn", checked against the lines read so far. */
static am_status ami_obj_corner(ami_text *o, const ami_obj_raw *r, ami_corner *out)
{
    ami_text_space(o);
    uint32_t col = ami_text_col(o);
    const char *t = o->s;
    ami_corner c = {0, -1, -1};
    AMI_TRY(ami_obj_index(o, &t, r->P, "vertex", &c.p));
    if (t < o->end && *t == '/') {
        t++;
        if (t < o->end && *t != '/') AMI_TRY(ami_obj_index(o, &t, r->T, "texture coordinate", &c.t));
        if (t < o->end && *t == '/') {
            t++;
            AMI_TRY(ami_obj_index(o, &t, r->N, "normal", &c.n));
        }
    }
    if (t < o->end && !isspace((unsigned char)*t) && *t != '#')
        return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, col, "bad face corner");
    o->s = t;
    *out = c;
    return AM_OK;
}

/* A name statement's argument (usemtl, mtllib) as an am_alloc'd string appended to list. */
static am_status ami_obj_name(ami_text *o, char ***list, size_t *count, size_t *cap, char **out)
{
    const char *s;
    size_t n;
    ami_text_rest(o, &s, &n);
    AMI_CHECK(o->err, ami_obj_grow((void **)list, cap, *count + 1, sizeof **list), AM_E_NOMEM, "%zu names", *count + 1);
    (*list)[*count] = am_strndup(s, n);
    AMI_CHECK(o->err, (*list)[*count], AM_E_NOMEM, "a name");
    *out = (*list)[(*count)++];
    return AM_OK;
}

/* Values are kept as float: a finite number beyond float's range (3.4e38) would become
 * infinite there, and is refused as the non-finite value it becomes. */
static am_status ami_obj_floats(ami_text *o, const float *v, size_t n, const char *what)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return AM_FAIL_AT(o->err, AM_E_NONFINITE, o->source, o->line, 1, "%s value out of float range", what);
    return AM_OK;
}

static am_status ami_obj_parse(ami_text *o, const am_obj_opts *opts, ami_obj_raw *r)
{
    ami_corner poly[3];
    int32_t group = -1;
    double s = opts && opts->scale > 0 ? opts->scale : 1.0;
    bool z_up = opts && opts->z_up;
    while (o->s < o->end) {
        const char *kw;
        size_t kn;
        ami_text_keyword(o, &kw, &kn);
        if (kn == 1 && kw[0] == 'v') {
            double p[3];
            for (int k = 0; k < 3; k++) AMI_TRY(ami_text_number(o, &p[k]));
            double w[3] = {p[0], p[1], p[2]};
            if (!z_up) am_gltf_to_world(p, w); /* Y up, front +Z: glTF's frame */
            AMI_CHECK(o->err, ami_obj_grow((void **)&r->pos, &r->pcap, (r->P + 1) * 3, sizeof(float)), AM_E_NOMEM,
                      "%zu vertices", r->P + 1);
            for (int k = 0; k < 3; k++) r->pos[r->P * 3 + (size_t)k] = (float)(w[k] * s);
            AMI_TRY(ami_obj_floats(o, r->pos + r->P * 3, 3, "vertex"));
            r->P++;
        } else if (kn == 2 && kw[0] == 'v' && kw[1] == 't') {
            /* u, then v and w optional (0); glTF's v runs down the image, OBJ's up */
            double uv[2] = {0, 0}, c = 0;
            AMI_TRY(ami_text_number(o, &uv[0]));
            if (!ami_text_eol(o)) AMI_TRY(ami_text_number(o, &uv[1]));
            while (!ami_text_eol(o)) AMI_TRY(ami_text_number(o, &c));
            AMI_CHECK(o->err, ami_obj_grow((void **)&r->uv, &r->tcap, (r->T + 1) * 2, sizeof(float)), AM_E_NOMEM,
                      "%zu texture coordinates", r->T + 1);
            r->uv[r->T * 2] = (float)uv[0];
            r->uv[r->T * 2 + 1] = (float)(1 - uv[1]);
            AMI_TRY(ami_obj_floats(o, r->uv + r->T * 2, 2, "texture coordinate"));
            r->T++;
        } else if (kn == 2 && kw[0] == 'v' && kw[1] == 'n') {
            double n[3], c = 0;
            for (int k = 0; k < 3; k++) AMI_TRY(ami_text_number(o, &n[k]));
            while (!ami_text_eol(o)) AMI_TRY(ami_text_number(o, &c));
            double w[3] = {n[0], n[1], n[2]};
            if (!z_up) am_gltf_to_world(n, w);
            AMI_CHECK(o->err, ami_obj_grow((void **)&r->nrm, &r->ncap, (r->N + 1) * 3, sizeof(float)), AM_E_NOMEM,
                      "%zu normals", r->N + 1);
            for (int k = 0; k < 3; k++) r->nrm[r->N * 3 + (size_t)k] = (float)w[k];
            AMI_TRY(ami_obj_floats(o, r->nrm + r->N * 3, 3, "normal"));
            r->N++;
        } else if (kn == 1 && kw[0] == 'f') {
            size_t corners = 0;
            while (!ami_text_eol(o)) {
                ami_corner c;
                AMI_TRY(ami_obj_corner(o, r, &c));
                if (corners < 2) {
                    poly[corners] = c;
                } else {
                    poly[2] = c;
                    AMI_CHECK(o->err, ami_obj_grow((void **)&r->tri, &r->fcap, (r->F + 1) * 3, sizeof(ami_corner)) &&
                                          ami_obj_grow((void **)&r->tri_group, &r->gfcap, r->F + 1, sizeof(int32_t)),
                              AM_E_NOMEM, "%zu triangles", r->F + 1);
                    memcpy(r->tri + r->F * 3, poly, sizeof poly);
                    r->tri_group[r->F++] = group;
                    poly[1] = c;
                }
                corners++;
            }
            if (corners < 3)
                return AM_FAIL_AT(o->err, AM_E_SYNTAX, o->source, o->line, ami_text_col(o),
                                  "a face needs 3 corners, got %zu", corners);
        } else if (kn == 6 && memcmp(kw, "usemtl", 6) == 0) {
            /* the name is the rest of the line (Blender reads names with spaces so) */
            const char *save = o->s;
            const char *name;
            size_t n;
            ami_text_rest(o, &name, &n);
            group = ami_names_find(&r->group_names, name, n);
            if (group < 0 && n > 0) {
                o->s = save;
                char *kept = NULL;
                AMI_TRY(ami_obj_name(o, &r->groups, &r->G, &r->gcap, &kept));
                int32_t prev = -1;
                AMI_TRY(ami_names_add(&r->group_names, kept, n, (int32_t)(r->G - 1), &prev));
                group = (int32_t)(r->G - 1);
            }
        } else if (kn == 6 && memcmp(kw, "mtllib", 6) == 0) {
            char *kept = NULL;
            AMI_TRY(ami_obj_name(o, &r->libs, &r->L, &r->lcap, &kept));
            AMI_CHECK(o->err, ami_obj_grow((void **)&r->lib_line, &r->llcap, r->L, sizeof *r->lib_line), AM_E_NOMEM,
                      "%zu mtllib", r->L);
            r->lib_line[r->L - 1] = o->line;
        }
        ami_text_next_line(o);
    }
    AMI_CHECK(o->err, r->P > 0, AM_E_EMPTY, "no vertices ('v' lines)");
    return AM_OK;
}

static am_status ami_obj_raw_read(const char *text, size_t len, const char *source, const am_obj_opts *opts,
                                  ami_obj_raw *r, am_error *err)
{
    ami_text o = {.s = text, .end = text + len, .line_start = text, .source = source, .line = 1, .err = err};
    am_status st = ami_obj_parse(&o, opts, r);
    if (st != AM_OK) am_error_set_file(err, source);
    return st;
}

/* ---- positions only (am_obj_load) ---- */

am_status am_obj_read_mem(const char *text, size_t len, const char *source, const am_obj_opts *opts, am_mesh **out,
                          am_error *err)
{
    assert(out && (text || len == 0));
    *out = NULL;
    ami_obj_raw r = {0};
    am_mesh *m = am_alloc(sizeof *m);
    am_status st = m ? ami_obj_raw_read(text, len, source, opts, &r, err) : AM_FAIL(err, AM_E_NOMEM, "mesh");
    if (st == AM_OK && r.F) {
        m->triangles = am_alloc_array(r.F * 3, sizeof *m->triangles);
        if (!m->triangles) st = AM_FAIL(err, AM_E_NOMEM, "%zu triangles", r.F);
        for (size_t i = 0; m->triangles && i < r.F * 3; i++) m->triangles[i] = r.tri[i].p;
    }
    if (st == AM_OK) {
        m->positions = r.pos, r.pos = NULL;
        m->vertex_count = r.P, m->triangle_count = r.F;
        *out = m;
    } else {
        am_mesh_free(m);
    }
    ami_obj_raw_free(&r);
    return st;
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

/* ---- files the OBJ names ---- */

static char *ami_obj_join(const char *dir, const char *name)
{
    if (!dir || !dir[0] || strcmp(dir, ".") == 0) return am_strdup(name);
    am_buf b = {0};
    am_buf_printf(&b, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    if (b.failed) {
        am_buf_free(&b);
        return NULL;
    }
    return b.data;
}

am_status ami_obj_file_read(const char *root, const char *dir, const char *name, size_t max_bytes, char **found,
                            char **data, size_t *len, am_error *err)
{
    *found = NULL;
    *data = NULL;
    *len = 0;
    char *rel = am_strdup(name);
    AMI_CHECK(err, rel, AM_E_NOMEM, "file name");
    for (char *p = rel; *p; p++)
        if (*p == '\\') *p = '/'; /* Windows exporters' separators */
    /* An absolute path (a drive, a URL) is where the file was on the exporting machine: it is
     * not followed (it would not travel with the model anyway), only its file name is looked
     * for beside the model. Relative ones are followed, "../textures/" included. */
    bool absolute = rel[0] == '/' || (isalpha((unsigned char)rel[0]) && rel[1] == ':') || strstr(rel, "://");
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    bool has_base = base[0] && base != rel;
    const char *names[4] = {absolute ? NULL : rel, absolute ? NULL : rel, has_base ? base : NULL, has_base ? base : NULL};
    const char *dirs[4] = {dir, root, dir, root};
    am_status st = AM_E_READ;
    for (int k = 0; k < 4 && st == AM_E_READ; k++) {
        if (!names[k] || (k % 2 == 1 && strcmp(dirs[k], dirs[k - 1]) == 0)) continue;
        char *cand = ami_obj_join(dirs[k], names[k]);
        if (!cand) {
            st = AM_FAIL(err, AM_E_NOMEM, "file name");
            break;
        }
        am_error e = {0};
        st = am_file_read(cand, max_bytes, data, len, &e);
        if (st == AM_OK) {
            *found = cand;
            break;
        }
        am_free(cand);
        if (st != AM_E_READ) {
            if (err) *err = e;
            break;
        }
    }
    if (st == AM_E_READ)
        st = AM_FAIL(err, AM_E_READ, "%s", absolute ? "an absolute path is not followed, and its file name is not beside the model"
                                                    : "no such file");
    am_free(rel);
    return st;
}

/* ---- the model: glTF's vertices, normals, UVs, materials ---- */

void am_obj_model_free(am_obj_model *m)
{
    if (!m) return;
    am_free(m->mesh.positions);
    am_free(m->mesh.triangles);
    am_free(m->position_index);
    am_free(m->position_triangles);
    am_free(m->normals);
    am_free(m->texcoords);
    am_free(m->parts);
    ami_mtl_materials_free(m->materials, m->material_count);
    am_gltf_free(m->look);
    am_warning_list_free(&m->warnings);
    am_free(m);
}

void am_obj_model_spread(const am_obj_model *m, const void *per_position, size_t elem_bytes, void *per_vertex)
{
    assert(m && per_position && per_vertex);
    const uint8_t *src = per_position;
    uint8_t *dst = per_vertex;
    for (size_t i = 0; i < m->mesh.vertex_count; i++)
        memcpy(dst + i * elem_bytes, src + (size_t)m->position_index[i] * elem_bytes, elem_bytes);
}

static uint64_t ami_corner_hash(ami_corner c)
{
    uint64_t h = (uint64_t)(uint32_t)c.p * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(uint32_t)c.t + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)(uint32_t)c.n + 0x165667B19E3779F9ull) * 0x27D4EB2F165667C5ull;
    return h ^ (h >> 29);
}

/* One vertex per distinct corner: vertex p for the first corner on position p (so a file
 * without vt/vn keeps its numbering), later distinct corners appended. vc [P + 3F] gets each
 * vertex's corner; returns V, or 0 on allocation failure. */
static size_t ami_obj_split(const ami_obj_raw *r, ami_corner *vc, int32_t *tri)
{
    size_t max_v = r->P + 3 * r->F, cap = 16;
    while (cap < 2 * max_v) cap *= 2;
    int32_t *slot = am_alloc_array(cap, sizeof *slot);
    if (!slot) return 0;
    memset(slot, 0xff, cap * sizeof *slot);
    for (size_t p = 0; p < r->P; p++) vc[p] = (ami_corner){(int32_t)p, INT32_MIN, INT32_MIN}; /* unclaimed */
    size_t V = r->P;
    for (size_t k = 0; k < r->F * 3; k++) {
        ami_corner c = r->tri[k];
        size_t h = (size_t)ami_corner_hash(c) & (cap - 1);
        while (slot[h] >= 0) {
            ami_corner d = vc[slot[h]];
            if (d.p == c.p && d.t == c.t && d.n == c.n) break;
            h = (h + 1) & (cap - 1);
        }
        if (slot[h] < 0) {
            int32_t v = vc[c.p].t == INT32_MIN ? c.p : (int32_t)V++;
            vc[v] = c;
            slot[h] = v;
        }
        tri[k] = slot[h];
    }
    for (size_t p = 0; p < r->P; p++)
        if (vc[p].t == INT32_MIN) vc[p] = (ami_corner){(int32_t)p, -1, -1}; /* a position no face uses */
    am_free(slot);
    return V;
}

/* Normals: a corner's vn, normalized; a corner without one (or with a zero vn, which Blender
 * also takes for "not given") the area-weighted normal of the faces on its position. */
static am_status ami_obj_normals(const ami_obj_raw *r, am_obj_model *m, const ami_corner *vc, am_error *err)
{
    size_t V = m->mesh.vertex_count;
    double *acc = am_alloc_array(r->P * 3, sizeof *acc);
    m->normals = am_alloc_array(V * 3, sizeof *m->normals);
    if (!acc || !m->normals) {
        am_free(acc);
        return AM_FAIL(err, AM_E_NOMEM, "normals of %zu vertices", V);
    }
    for (size_t f = 0; f < r->F; f++) {
        const int32_t *t = m->position_triangles + f * 3;
        const float *a = r->pos + (size_t)t[0] * 3, *b = r->pos + (size_t)t[1] * 3, *c = r->pos + (size_t)t[2] * 3;
        double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) acc[(size_t)t[k] * 3 + (size_t)j] += n[j];
    }
    for (size_t i = 0; i < V; i++) {
        double n[3] = {0, 0, 0};
        if (vc[i].n >= 0)
            for (int j = 0; j < 3; j++) n[j] = r->nrm[(size_t)vc[i].n * 3 + (size_t)j];
        double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(l > 1e-30)) {
            memcpy(n, acc + (size_t)vc[i].p * 3, sizeof n);
            l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        }
        /* a position on no face (or on degenerate ones only): any unit vector will do: up */
        if (!(l > 1e-30)) n[0] = 0, n[1] = 0, n[2] = 1, l = 1;
        for (int j = 0; j < 3; j++) m->normals[i * 3 + (size_t)j] = (float)(n[j] / l);
    }
    am_free(acc);
    return AM_OK;
}

/* The materials of the OBJ's .mtl files, merged in mtllib order, with the folder each came
 * from (its textures are looked for there). */
typedef struct ami_mtl_set {
    am_mtl_material *materials;
    char **dirs;
    size_t count, cap, dcap;
} ami_mtl_set;

static void ami_mtl_set_free(ami_mtl_set *s)
{
    ami_mtl_materials_free(s->materials, s->count);
    ami_strings_free(s->dirs, s->count);
}

/* Read one .mtl and append its materials. AM_E_READ (e says why) when it cannot be read. */
static am_status ami_obj_mtl_add(const char *base_dir, const char *name, ami_mtl_set *set, am_error *e)
{
    char *found = NULL, *text = NULL;
    size_t len = 0;
    AMI_TRY(ami_obj_file_read(base_dir, base_dir, name, AMI_OBJ_MTL_MAX_BYTES, &found, &text, &len, e));
    am_mtl *one = NULL;
    am_status st = am_mtl_read_mem(text, len, found, &one, e);
    am_free(text);
    if (st == AM_OK) ami_warn_list(&one->warnings);
    for (size_t i = 0; st == AM_OK && i < one->count; i++) {
        if (!ami_obj_grow((void **)&set->materials, &set->cap, set->count + 1, sizeof *set->materials) ||
            !ami_obj_grow((void **)&set->dirs, &set->dcap, set->count + 1, sizeof *set->dirs) ||
            !(set->dirs[set->count] = ami_path_dirname(found))) {
            st = AM_FAIL(e, AM_E_NOMEM, "materials");
            break;
        }
        set->materials[set->count++] = one->materials[i];
        one->materials[i] = (am_mtl_material){0};
    }
    am_free(found);
    am_mtl_free(one);
    return st;
}

static void ami_obj_mtl_missing(const char *base_dir, const char *name, const char *source, uint32_t line,
                                const am_error *e)
{
    char *where = ami_obj_join(base_dir, name);
    ami_warn(AM_WARN_MISSING_DATA, "%s: cannot read the material library (mtllib, %s:%u): %s", where ? where : name,
             source, line, e->info);
    am_free(where);
}

/* Every mtllib. A file that cannot be read is a warning naming it (*missing set); a malformed
 * one is the error. "mtllib a.mtl b.mtl" names two files and "mtllib my materials.mtl" one:
 * the whole line is tried first, then (not found) its words. */
static am_status ami_obj_mtls(const ami_obj_raw *r, const char *source, const char *base_dir, ami_mtl_set *set,
                              bool *missing, am_error *err)
{
    *missing = false;
    for (size_t l = 0; l < r->L; l++) {
        const char *name = r->libs[l];
        if (!name[0]) continue;
        if (!base_dir) {
            ami_warn(AM_WARN_MISSING_DATA, "%s:%u: mtllib '%.100s' is not read: the OBJ came from memory without a folder",
                     source, r->lib_line[l], name);
            *missing = true;
            continue;
        }
        am_error e = {0};
        am_status st = ami_obj_mtl_add(base_dir, name, set, &e);
        if (st == AM_E_READ && strpbrk(name, " \t")) {
            char *copy = am_strdup(name);
            AMI_CHECK(err, copy, AM_E_NOMEM, "mtllib");
            st = AM_OK;
            char *save = NULL;
            for (char *w = strtok_r(copy, " \t", &save); st == AM_OK && w; w = strtok_r(NULL, " \t", &save)) {
                e = (am_error){0};
                st = ami_obj_mtl_add(base_dir, w, set, &e);
                if (st == AM_E_READ) {
                    ami_obj_mtl_missing(base_dir, w, source, r->lib_line[l], &e);
                    *missing = true;
                    st = AM_OK;
                }
            }
            am_free(copy);
        } else if (st == AM_E_READ) {
            ami_obj_mtl_missing(base_dir, name, source, r->lib_line[l], &e);
            *missing = true;
            st = AM_OK;
        }
        if (st != AM_OK) {
            if (err) *err = e;
            return st;
        }
    }
    return AM_OK;
}

/* The texture of material m (from the folder of its .mtl): its bytes when they are a PNG or
 * a JPEG, else a warning naming the file and why (the material stays, untextured). */
static am_status ami_obj_texture(const char *base_dir, const char *mtl_dir, am_mtl_material *m, char **bytes,
                                 size_t *len, const char **mime, am_error *err)
{
    *bytes = NULL;
    *mime = NULL;
    am_error e = {0};
    char *found = NULL;
    am_status st = ami_obj_file_read(base_dir, mtl_dir, m->map_kd, AMI_OBJ_TEXTURE_MAX_BYTES, &found, bytes, len, &e);
    if (st == AM_E_READ || st == AM_E_LIMIT) {
        char *where = ami_obj_join(mtl_dir, m->map_kd);
        ami_warn(AM_WARN_MISSING_DATA, "%s: cannot read the texture (map_Kd of material '%.60s'): %s; the material has none",
                 where ? where : m->map_kd, m->name, e.info);
        am_free(where);
        return AM_OK;
    }
    if (st != AM_OK) {
        if (err) *err = e;
        return st;
    }
    const char *t = ami_gltf_image_mime((const uint8_t *)*bytes, *len);
    if (!t || (strcmp(t, "image/png") != 0 && strcmp(t, "image/jpeg") != 0)) {
        ami_warn(AM_WARN_UNSUPPORTED, "%s: the texture (map_Kd of material '%.60s') is no PNG or JPEG image; the material has none",
                 found, m->name);
        am_free(*bytes);
        am_free(found);
        *bytes = NULL;
        return AM_OK;
    }
    m->texture = found;
    *mime = t;
    return AM_OK;
}

/* Materials of the faces: usemtl groups resolved by name in the .mtl files, the ones used kept
 * in order of first use, triangles grouped by material (stable; the default -1 first), the
 * look made of them. */
static am_status ami_obj_materials(const ami_obj_raw *r, const char *source, const char *base_dir, am_obj_model *m,
                                   am_error *err)
{
    size_t F = r->F;
    bool any = false;
    for (size_t f = 0; f < F && !any; f++) any = r->tri_group[f] >= 0;
    /* the .mtl files of an OBJ whose faces name no material are not read: nothing is lost */
    if (!any) return AM_OK;
    ami_mtl_set set = {0};
    bool missing = false;
    ami_names by_name = {0};
    int32_t *group_mat = am_alloc_array(r->G ? r->G : 1, sizeof *group_mat); /* [G] material used, -1, or -2 unseen */
    int32_t *used_from = NULL;        /* [materials used] index into set */
    char **bytes = NULL;
    size_t *lens = NULL;
    const char **mimes = NULL;
    am_status st = group_mat ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "materials");
    if (st == AM_OK) st = ami_obj_mtls(r, source, base_dir, &set, &missing, err);
    for (size_t i = 0; st == AM_OK && i < set.count; i++) {
        int32_t prev = -1;
        st = ami_names_add(&by_name, set.materials[i].name, strlen(set.materials[i].name), (int32_t)i, &prev);
    }
    if (st == AM_OK) {
        used_from = am_alloc_array(r->G ? r->G : 1, sizeof *used_from);
        if (!used_from) st = AM_FAIL(err, AM_E_NOMEM, "materials");
    }
    for (size_t g = 0; st == AM_OK && g < r->G; g++) group_mat[g] = -2;
    size_t used = 0;
    for (size_t f = 0; st == AM_OK && f < F; f++) {
        int32_t g = r->tri_group[f];
        if (g < 0 || group_mat[g] != -2) continue;
        int32_t i = ami_names_find_str(&by_name, r->groups[g]);
        if (i < 0) {
            /* a name that is in none of the files read; when a file was missing, its warning
             * already says why */
            if (!missing)
                ami_warn(AM_WARN_IGNORED_NAME, "%s: usemtl '%.80s' names no material of its .mtl files: the default material",
                         source, r->groups[g]);
            group_mat[g] = -1;
            continue;
        }
        used_from[used] = i;
        group_mat[g] = (int32_t)used++;
    }
    if (st == AM_OK && used) {
        m->materials = am_alloc_array(used, sizeof *m->materials);
        bytes = am_alloc_array(used, sizeof *bytes);
        lens = am_alloc_array(used, sizeof *lens);
        mimes = am_alloc_array(used, sizeof *mimes);
        if (!m->materials || !bytes || !lens || !mimes) st = AM_FAIL(err, AM_E_NOMEM, "%zu materials", used);
    }
    for (size_t u = 0; st == AM_OK && u < used; u++) {
        am_mtl_material *src = &set.materials[used_from[u]];
        m->materials[u] = *src;
        *src = (am_mtl_material){0};
        m->material_count = u + 1;
        if (m->materials[u].map_kd)
            st = ami_obj_texture(base_dir, set.dirs[used_from[u]], &m->materials[u], &bytes[u], &lens[u], &mimes[u], err);
    }
    if (st == AM_OK && used)
        st = ami_mtl_look(m->materials, used, (const uint8_t *const *)bytes, lens, mimes, &m->look, err);
    /* the triangles grouped by material: a stable counting sort on material + 1 */
    size_t *start = NULL;
    int32_t *tri = NULL, *ptri = NULL;
    if (st == AM_OK && used) {
        start = am_alloc_array(used + 2, sizeof *start);
        tri = am_alloc_array(F * 3, sizeof *tri);
        ptri = am_alloc_array(F * 3, sizeof *ptri);
        m->parts = am_alloc_array(used + 1, sizeof *m->parts);
        if (!start || !tri || !ptri || !m->parts) st = AM_FAIL(err, AM_E_NOMEM, "%zu triangles", F);
    }
    if (st == AM_OK && used) {
        for (size_t f = 0; f < F; f++) start[(r->tri_group[f] < 0 ? -1 : group_mat[r->tri_group[f]]) + 2]++;
        for (size_t b = 1; b < used + 2; b++) start[b] += start[b - 1];
        for (size_t b = 0; b < used + 1; b++)
            if (start[b + 1] > start[b])
                m->parts[m->part_count++] = (am_gltf_mesh_part){start[b], start[b + 1] - start[b], (int32_t)b - 1};
        for (size_t f = 0; f < F; f++) {
            size_t to = start[(r->tri_group[f] < 0 ? -1 : group_mat[r->tri_group[f]]) + 1]++;
            memcpy(tri + to * 3, m->mesh.triangles + f * 3, 3 * sizeof *tri);
            memcpy(ptri + to * 3, m->position_triangles + f * 3, 3 * sizeof *ptri);
        }
        am_free(m->mesh.triangles);
        am_free(m->position_triangles);
        m->mesh.triangles = tri, m->position_triangles = ptri;
        tri = ptri = NULL;
    }
    for (size_t u = 0; bytes && u < used; u++) am_free(bytes[u]);
    am_free(bytes);
    am_free(lens);
    am_free((void *)mimes);
    am_free(start);
    am_free(tri);
    am_free(ptri);
    am_free(group_mat);
    am_free(used_from);
    ami_names_free(&by_name);
    ami_mtl_set_free(&set);
    return st;
}

static am_status ami_obj_model_build(const ami_obj_raw *r, const char *source, const char *base_dir, am_obj_model *m,
                                     am_error *err)
{
    size_t max_v = r->P + 3 * r->F;
    ami_corner *vc = am_alloc_array(max_v, sizeof *vc);
    m->mesh.triangles = am_alloc_array(r->F ? r->F * 3 : 1, sizeof *m->mesh.triangles);
    m->position_triangles = am_alloc_array(r->F ? r->F * 3 : 1, sizeof *m->position_triangles);
    size_t V = vc && m->mesh.triangles && m->position_triangles ? ami_obj_split(r, vc, m->mesh.triangles) : 0;
    am_status st = V ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "%zu face corners", r->F * 3);
    if (st == AM_OK) {
        m->mesh.vertex_count = V, m->mesh.triangle_count = r->F;
        m->position_count = r->P;
        m->mesh.positions = am_alloc_array(V * 3, sizeof *m->mesh.positions);
        m->position_index = am_alloc_array(V, sizeof *m->position_index);
        if (!m->mesh.positions || !m->position_index) st = AM_FAIL(err, AM_E_NOMEM, "%zu vertices", V);
    }
    bool any_t = false, any_n = false;
    for (size_t i = 0; st == AM_OK && i < V; i++) {
        m->position_index[i] = vc[i].p;
        memcpy(m->mesh.positions + i * 3, r->pos + (size_t)vc[i].p * 3, 3 * sizeof(float));
        any_t |= vc[i].t >= 0;
        any_n |= vc[i].n >= 0;
    }
    for (size_t k = 0; st == AM_OK && k < r->F * 3; k++) m->position_triangles[k] = r->tri[k].p;
    if (st == AM_OK && any_n) st = ami_obj_normals(r, m, vc, err);
    if (st == AM_OK && any_t) {
        m->texcoords = am_alloc_array(V * 2, sizeof *m->texcoords);
        if (!m->texcoords) st = AM_FAIL(err, AM_E_NOMEM, "texture coordinates of %zu vertices", V);
        for (size_t i = 0; m->texcoords && i < V; i++) {
            m->texcoords[i * 2] = vc[i].t >= 0 ? r->uv[(size_t)vc[i].t * 2] : 0.0f;
            m->texcoords[i * 2 + 1] = vc[i].t >= 0 ? r->uv[(size_t)vc[i].t * 2 + 1] : 1.0f;
        }
    }
    am_free(vc);
    if (st == AM_OK) st = ami_obj_materials(r, source, base_dir, m, err);
    return st;
}

am_status am_obj_model_read_mem(const char *text, size_t len, const char *source, const char *base_dir,
                                const am_obj_opts *opts, am_obj_model **out, am_error *err)
{
    assert(out && (text || len == 0));
    *out = NULL;
    if (!source) source = "OBJ";
    am_scope sc;
    am_scope_enter(&sc, NULL);
    ami_obj_raw r = {0};
    am_obj_model *m = am_alloc(sizeof *m);
    am_status st = m ? ami_obj_raw_read(text, len, source, opts, &r, err) : AM_FAIL(err, AM_E_NOMEM, "model");
    if (st == AM_OK) st = ami_obj_model_build(&r, source, base_dir, m, err);
    ami_obj_raw_free(&r);
    am_scope_leave(&sc, st == AM_OK ? &m->warnings : NULL);
    if (st != AM_OK) {
        am_obj_model_free(m);
        am_error_set_file(err, source);
        return st;
    }
    *out = m;
    return AM_OK;
}

am_status am_obj_model_load(const char *path, const am_obj_opts *opts, am_obj_model **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    char *text = NULL, *dir = ami_path_dirname(path);
    size_t len = 0;
    am_status st = dir ? am_file_read(path, AMI_OBJ_MAX_BYTES, &text, &len, err) : AM_FAIL(err, AM_E_NOMEM, "path");
    if (st == AM_OK) st = am_obj_model_read_mem(text, len, path, dir, opts, out, err);
    am_free(text);
    am_free(dir);
    return st;
}

/* ---- writing ---- */

static void ami_obj_header(am_buf *b, size_t V, size_t F, const am_obj_opts *opts)
{
    am_buf_printf(b, "# anymove %s: %zu vertices, %zu triangles, %s\n", AM_VERSION_STRING, V, F,
                  opts && opts->z_up ? "Z up, front -Y" : "Y up, front +Z");
}

/* `keyword x y z` lines of world vectors in the file's axes (positions scaled, normals not). */
static void ami_obj_vectors(am_buf *b, const char *kw, const float *v, size_t n, const am_obj_opts *opts, double s)
{
    for (size_t i = 0; i < n; i++) {
        double w[3] = {v[i * 3], v[i * 3 + 1], v[i * 3 + 2]}, g[3];
        if (opts && opts->z_up) memcpy(g, w, sizeof g);
        else am_gltf_from_world(w, g);
        am_buf_printf(b, "%s %.9g %.9g %.9g\n", kw, g[0] * s, g[1] * s, g[2] * s);
    }
}

static am_status ami_obj_write_buf(am_buf *b, size_t V, const char *path, am_error *err)
{
    if (b->failed) {
        am_buf_free(b);
        return AM_FAIL(err, AM_E_NOMEM, "OBJ text of %zu vertices", V);
    }
    am_status st = am_file_write(path, b->data, b->len, err);
    am_buf_free(b);
    return st;
}

am_status am_obj_write(const am_mesh *mesh, const am_obj_opts *opts, const char *path, am_error *err)
{
    assert(mesh && path);
    am_buf b = {0};
    ami_obj_header(&b, mesh->vertex_count, mesh->triangle_count, opts);
    ami_obj_vectors(&b, "v", mesh->positions, mesh->vertex_count, opts, opts && opts->scale > 0 ? 1.0 / opts->scale : 1.0);
    for (size_t f = 0; f < mesh->triangle_count; f++)
        am_buf_printf(&b, "f %d %d %d\n", mesh->triangles[f * 3] + 1, mesh->triangles[f * 3 + 1] + 1,
                      mesh->triangles[f * 3 + 2] + 1);
    return ami_obj_write_buf(&b, mesh->vertex_count, path, err);
}

am_status am_obj_model_write(const am_obj_model *m, const am_obj_opts *opts, const char *path, const char *mtl_path,
                             const char *mtl_final, am_error *err)
{
    assert(m && path);
    const am_mesh *mesh = &m->mesh;
    bool mtl = m->material_count > 0 && mtl_path;
    if (!mtl_final) mtl_final = mtl_path;
    am_buf b = {0};
    ami_obj_header(&b, mesh->vertex_count, mesh->triangle_count, opts);
    if (mtl) {
        const char *slash = strrchr(mtl_final, '/');
        am_buf_printf(&b, "mtllib %s\n", slash ? slash + 1 : mtl_final);
    }
    /* positions once (vertex i < P is position i), UVs and normals per vertex */
    ami_obj_vectors(&b, "v", mesh->positions, m->position_count, opts, opts && opts->scale > 0 ? 1.0 / opts->scale : 1.0);
    for (size_t i = 0; m->texcoords && i < mesh->vertex_count; i++)
        am_buf_printf(&b, "vt %.9g %.9g\n", (double)m->texcoords[i * 2], 1.0 - (double)m->texcoords[i * 2 + 1]);
    if (m->normals) ami_obj_vectors(&b, "vn", m->normals, mesh->vertex_count, opts, 1.0);
    am_gltf_mesh_part whole = {0, mesh->triangle_count, -1};
    const am_gltf_mesh_part *parts = m->part_count ? m->parts : &whole;
    for (size_t p = 0; p < (m->part_count ? m->part_count : 1); p++) {
        if (parts[p].material >= 0 && mtl) am_buf_printf(&b, "usemtl %s\n", m->materials[parts[p].material].name);
        for (size_t f = parts[p].first_triangle; f < parts[p].first_triangle + parts[p].triangle_count; f++) {
            am_buf_append(&b, "f", 1);
            for (int k = 0; k < 3; k++) {
                int32_t v = mesh->triangles[f * 3 + (size_t)k];
                int32_t pi = m->position_index[v] + 1;
                if (m->texcoords && m->normals) am_buf_printf(&b, " %d/%d/%d", pi, v + 1, v + 1);
                else if (m->texcoords) am_buf_printf(&b, " %d/%d", pi, v + 1);
                else if (m->normals) am_buf_printf(&b, " %d//%d", pi, v + 1);
                else am_buf_printf(&b, " %d", pi);
            }
            am_buf_append(&b, "\n", 1);
        }
    }
    AMI_TRY(ami_obj_write_buf(&b, mesh->vertex_count, path, err));
    if (!mtl) return AM_OK;
    char *dir = ami_path_dirname(mtl_final);
    AMI_CHECK(err, dir, AM_E_NOMEM, "path");
    am_status st = am_mtl_write(m->materials, m->material_count, dir, mtl_path, err);
    am_free(dir);
    return st;
}
