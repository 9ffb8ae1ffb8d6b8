/* Wavefront MTL: the materials an OBJ's `mtllib` names, read and written, and made into the
 * materials, textures and images of a glTF look (bind keeps them). The statements kept are
 * what glTF's metallic-roughness material can carry: Kd (base colour), d / Tr (alpha), Ke
 * (emission), Ns or Pr (roughness), Pm (metallic) and map_Kd (the base colour texture).
 * Unknown statements are skipped as Blender's importer skips them; a bad number is an error
 * (line and column), since a material read wrongly would look wrong without a word. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "io/gltf_internal.h"
#include "io/json_internal.h"
#include "io/obj_internal.h"

#define AMI_MTL_MAX_BYTES ((size_t)64 << 20)

void ami_mtl_materials_free(am_mtl_material *materials, size_t count)
{
    for (size_t i = 0; materials && i < count; i++) {
        am_free(materials[i].name);
        am_free(materials[i].map_kd);
        am_free(materials[i].texture);
    }
    am_free(materials);
}

void am_mtl_free(am_mtl *mtl)
{
    if (!mtl) return;
    ami_mtl_materials_free(mtl->materials, mtl->count);
    am_warning_list_free(&mtl->warnings);
    am_free(mtl);
}

static double ami_clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One to three numbers of a colour statement ("Kd 0.5" is grey, as the MTL spec says: g and b
 * default to r). "Kd spectral file" and "Kd xyz x y z" name colours glTF cannot carry: skipped
 * with a warning rather than refused, since the file is well formed. */
static am_status ami_mtl_colour(ami_text *t, const char *kw, const char *mat, double out[3], bool *set)
{
    ami_text_space(t);
    const char *w = t->s;
    size_t n = 0;
    while (w + n < t->end && w[n] != ' ' && w[n] != '\t' && w[n] != '\r' && w[n] != '\n') n++;
    if ((n == 8 && memcmp(w, "spectral", 8) == 0) || (n == 3 && memcmp(w, "xyz", 3) == 0)) {
        ami_warn(AM_WARN_UNSUPPORTED, "%s:%u: material '%.60s': %s %.*s is not read (RGB only)", t->source, t->line, mat,
                 kw, (int)n, w);
        *set = false;
        return AM_OK;
    }
    AMI_TRY(ami_text_number(t, &out[0]));
    out[1] = out[2] = out[0];
    if (!ami_text_eol(t)) {
        AMI_TRY(ami_text_number(t, &out[1]));
        AMI_TRY(ami_text_number(t, &out[2]));
    }
    *set = true;
    return AM_OK;
}

/* map_Kd [-options] file: the options of the MTL spec with their argument counts are skipped
 * (-o, -s and -t take one to three numbers); the rest of the line is the file name, which may
 * hold spaces (Blender reads it so). */
static am_status ami_mtl_map(ami_text *t, const char **name, size_t *n)
{
    static const struct {
        const char *opt;
        int args; /* -3: one to three numbers */
    } opts[] = {{"-blendu", 1}, {"-blendv", 1}, {"-boost", 1}, {"-mm", 2}, {"-o", -3}, {"-s", -3}, {"-t", -3},
                {"-texres", 1}, {"-clamp", 1}, {"-bm", 1}, {"-imfchan", 1}, {"-type", 1}, {"-cc", 1}};
    for (;;) {
        ami_text_space(t);
        const char *w = t->s;
        size_t wn = 0;
        while (w + wn < t->end && w[wn] != ' ' && w[wn] != '\t' && w[wn] != '\r' && w[wn] != '\n') wn++;
        int args = 0;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
            if (strlen(opts[k].opt) == wn && memcmp(opts[k].opt, w, wn) == 0) args = opts[k].args;
        if (args == 0) break;
        t->s = w + wn;
        if (args > 0) {
            for (int a = 0; a < args; a++) {
                ami_text_space(t);
                if (ami_text_eol(t))
                    return AM_FAIL_AT(t->err, AM_E_SYNTAX, t->source, t->line, ami_text_col(t), "%.*s needs %d value%s",
                                      (int)wn, w, args, args > 1 ? "s" : "");
                while (t->s < t->end && *t->s != ' ' && *t->s != '\t' && *t->s != '\r' && *t->s != '\n') t->s++;
            }
        } else {
            double v = 0;
            AMI_TRY(ami_text_number(t, &v));
            for (int a = 1; a < 3; a++) {
                ami_text_space(t);
                const char *save = t->s;
                char *e = NULL;
                char buf[64];
                size_t k = 0;
                while (save + k < t->end && k + 1 < sizeof buf && save[k] != ' ' && save[k] != '\t' && save[k] != '\r' &&
                       save[k] != '\n')
                    buf[k] = save[k], k++;
                buf[k] = '\0';
                if (k == 0) break;
                (void)strtod(buf, &e);
                if (*e != '\0') break; /* the file name */
                AMI_TRY(ami_text_number(t, &v));
            }
        }
    }
    ami_text_rest(t, name, n);
    if (*n == 0) return AM_FAIL_AT(t->err, AM_E_SYNTAX, t->source, t->line, ami_text_col(t), "a texture map needs a file name");
    return AM_OK;
}

/* Texture maps glTF's core material has no slot for, or that we do not carry over: named in
 * a warning, since the model will look different without them. map_d: glTF takes alpha from
 * the base colour texture's alpha channel, not from a separate map. */
static bool ami_mtl_other_map(const char *kw, size_t n)
{
    static const char *const maps[] = {"map_d", "map_Ka", "map_Ks", "map_Ns", "map_Ke", "map_Bump", "map_bump", "bump",
                                       "norm", "disp", "decal", "refl", "map_Pr", "map_Pm", "map_Ps"};
    for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++)
        if (strlen(maps[k]) == n && memcmp(maps[k], kw, n) == 0) return true;
    return false;
}

static bool ami_kw(const char *kw, size_t n, const char *want) { return strlen(want) == n && memcmp(kw, want, n) == 0; }

static am_status ami_mtl_parse(ami_text *t, am_mtl *out)
{
    size_t cap = 0;
    am_mtl_material *cur = NULL;
    bool skipping = false; /* inside a repeated newmtl: its statements are not read */
    ami_names names = {0};
    am_status st = AM_OK;
    while (st == AM_OK && t->s < t->end) {
        const char *kw;
        size_t kn;
        ami_text_keyword(t, &kw, &kn);
        if (kn == 0 || kw[0] == '#') {
        } else if (ami_kw(kw, kn, "newmtl")) {
            const char *name;
            size_t n;
            ami_text_rest(t, &name, &n);
            if (n == 0) {
                st = AM_FAIL_AT(t->err, AM_E_SYNTAX, t->source, t->line, ami_text_col(t), "newmtl needs a name");
                break;
            }
            if (ami_names_find(&names, name, n) >= 0) {
                ami_warn(AM_WARN_IGNORED_NAME, "%s:%u: material '%.*s' is defined again: the first definition is kept",
                         t->source, t->line, (int)(n > 60 ? 60 : n), name);
                skipping = true;
                cur = NULL;
            } else {
                skipping = false;
                if (out->count == cap) {
                    size_t c = cap ? cap * 2 : 8;
                    am_mtl_material *m = am_realloc_array(out->materials, c, sizeof *m);
                    if (!m) {
                        st = AM_FAIL(t->err, AM_E_NOMEM, "%zu materials", c);
                        break;
                    }
                    out->materials = m;
                    cap = c;
                    /* the names map borrows the name strings, which do not move */
                }
                cur = &out->materials[out->count];
                *cur = (am_mtl_material){.kd = {0.8, 0.8, 0.8}, .alpha = 1, .ns = -1, .pr = -1, .pm = -1};
                cur->name = am_strndup(name, n);
                if (!cur->name) {
                    st = AM_FAIL(t->err, AM_E_NOMEM, "material name");
                    break;
                }
                out->count++;
                int32_t prev = -1;
                st = ami_names_add(&names, cur->name, n, (int32_t)(out->count - 1), &prev);
            }
        } else if (skipping) {
        } else if (ami_kw(kw, kn, "Kd") || ami_kw(kw, kn, "Ke") || ami_kw(kw, kn, "d") || ami_kw(kw, kn, "Tr") ||
                   ami_kw(kw, kn, "Ns") || ami_kw(kw, kn, "Pr") || ami_kw(kw, kn, "Pm") || ami_kw(kw, kn, "map_Kd") ||
                   ami_mtl_other_map(kw, kn)) {
            if (!cur) {
                /* a statement of no material: nothing to give it to (Blender skips it too) */
                ami_warn(AM_WARN_MISSING_DATA, "%s:%u: '%.*s' before any newmtl is skipped", t->source, t->line, (int)kn, kw);
            } else if (kw[0] == 'K') {
                double c[3];
                bool set = false;
                st = ami_mtl_colour(t, kn == 2 && kw[1] == 'd' ? "Kd" : "Ke", cur->name, c, &set);
                for (int k = 0; st == AM_OK && set && k < 3; k++) {
                    if (kw[1] == 'd') cur->kd[k] = ami_clamp(c[k], 0, 1);
                    else cur->ke[k] = c[k] < 0 ? 0 : c[k];
                }
            } else if (kn <= 2) {
                double v = 0;
                st = ami_text_number(t, &v);
                if (st != AM_OK) break;
                if (kw[0] == 'd') cur->alpha = ami_clamp(v, 0, 1);
                else if (kw[0] == 'T') cur->alpha = 1 - ami_clamp(v, 0, 1);
                else if (kw[0] == 'N') cur->ns = ami_clamp(v, 0, 1000);
                else if (kw[1] == 'r') cur->pr = ami_clamp(v, 0, 1);
                else cur->pm = ami_clamp(v, 0, 1);
            } else if (ami_kw(kw, kn, "map_Kd")) {
                const char *name;
                size_t n;
                st = ami_mtl_map(t, &name, &n);
                if (st == AM_OK) {
                    am_free(cur->map_kd);
                    cur->map_kd = am_strndup(name, n);
                    if (!cur->map_kd) st = AM_FAIL(t->err, AM_E_NOMEM, "texture name");
                }
            } else {
                ami_warn(AM_WARN_UNSUPPORTED, "%s:%u: material '%.60s': %.*s is not carried over%s", t->source, t->line,
                         cur->name, (int)kn, kw,
                         ami_kw(kw, kn, "map_d") ? " (glTF takes alpha from the base colour texture)" : "");
            }
            /* what follows the numbers of a statement (a fourth colour value) is left alone */
        }
        ami_text_next_line(t);
    }
    ami_names_free(&names);
    return st;
}

am_status am_mtl_read_mem(const char *text, size_t len, const char *source, am_mtl **out, am_error *err)
{
    assert(out && (text || len == 0));
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, NULL);
    am_mtl *m = am_alloc(sizeof *m);
    am_status st = m ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "materials");
    if (st == AM_OK) {
        ami_text t = {.s = text, .end = text + len, .line_start = text, .source = source ? source : "MTL", .line = 1,
                      .err = err};
        st = ami_mtl_parse(&t, m);
    }
    am_scope_leave(&sc, st == AM_OK ? &m->warnings : NULL);
    if (st != AM_OK) {
        am_mtl_free(m);
        am_error_set_file(err, source);
        return st;
    }
    *out = m;
    return AM_OK;
}

am_status am_mtl_load(const char *path, am_mtl **out, am_error *err)
{
    assert(path && out);
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    AMI_TRY(am_file_read(path, AMI_MTL_MAX_BYTES, &text, &len, err));
    am_status st = am_mtl_read_mem(text, len, path, out, err);
    am_free(text);
    return st;
}

am_status am_mtl_write(const am_mtl_material *materials, size_t count, const char *texture_dir, const char *path,
                       am_error *err)
{
    assert(path && (materials || count == 0));
    am_buf b = {0};
    am_buf_printf(&b, "# anymove %s: %zu materials\n", AM_VERSION_STRING, count);
    for (size_t i = 0; i < count; i++) {
        const am_mtl_material *m = &materials[i];
        am_buf_printf(&b, "\nnewmtl %s\nKd %.9g %.9g %.9g\n", m->name, m->kd[0], m->kd[1], m->kd[2]);
        if (m->alpha < 1) am_buf_printf(&b, "d %.9g\n", m->alpha);
        if (m->ke[0] > 0 || m->ke[1] > 0 || m->ke[2] > 0) am_buf_printf(&b, "Ke %.9g %.9g %.9g\n", m->ke[0], m->ke[1], m->ke[2]);
        if (m->ns >= 0) am_buf_printf(&b, "Ns %.9g\n", m->ns);
        if (m->pr >= 0) am_buf_printf(&b, "Pr %.9g\n", m->pr);
        if (m->pm >= 0) am_buf_printf(&b, "Pm %.9g\n", m->pm);
        if (m->texture && texture_dir) {
            char *rel = ami_path_relative(texture_dir, m->texture);
            if (!rel) b.failed = true;
            else am_buf_printf(&b, "map_Kd %s\n", rel);
            am_free(rel);
        } else if (m->texture || m->map_kd) {
            am_buf_printf(&b, "map_Kd %s\n", m->texture ? m->texture : m->map_kd);
        }
    }
    if (b.failed) {
        am_buf_free(&b);
        return AM_FAIL(err, AM_E_NOMEM, "MTL text of %zu materials", count);
    }
    am_status st = am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return st;
}

double ami_mtl_roughness(const am_mtl_material *m)
{
    if (m->pr >= 0) return m->pr;
    if (m->ns >= 0) return 1 - sqrt(m->ns / 1000);
    return 1;
}

/* ---- the glTF look ---- */

static void ami_jw_material(ami_jw *w, const am_mtl_material *m, int32_t texture)
{
    ami_jw_object(w, NULL);
    if (ami_utf8_valid(m->name, strlen(m->name))) ami_jw_string(w, "name", m->name);
    ami_jw_object(w, "pbrMetallicRoughness");
    double base[4] = {m->kd[0], m->kd[1], m->kd[2], m->alpha};
    ami_jw_numbers(w, "baseColorFactor", base, 1, (size_t[1]){4});
    if (texture >= 0) {
        ami_jw_record(w, "baseColorTexture");
        ami_jw_int(w, "index", texture);
        ami_jw_close(w);
    }
    /* OBJ has no metal: glTF's default metallicFactor 1 would turn every material to metal */
    ami_jw_number(w, "metallicFactor", m->pm >= 0 ? m->pm : 0);
    ami_jw_number(w, "roughnessFactor", ami_mtl_roughness(m));
    ami_jw_close(w);
    double peak = fmax(m->ke[0], fmax(m->ke[1], m->ke[2]));
    if (peak > 0) {
        /* emissiveFactor stops at 1: a brighter Ke keeps its colour and carries the rest in
         * KHR_materials_emissive_strength */
        double s = peak > 1 ? peak : 1;
        double e[3] = {m->ke[0] / s, m->ke[1] / s, m->ke[2] / s};
        ami_jw_numbers(w, "emissiveFactor", e, 1, (size_t[1]){3});
        if (peak > 1) {
            ami_jw_object(w, "extensions");
            ami_jw_record(w, "KHR_materials_emissive_strength");
            ami_jw_number(w, "emissiveStrength", peak);
            ami_jw_close(w);
            ami_jw_close(w);
        }
    }
    if (m->alpha < 1) ami_jw_string(w, "alphaMode", "BLEND");
    ami_jw_close(w);
}

am_status ami_mtl_look(const am_mtl_material *materials, size_t count, const uint8_t *const *image_bytes,
                       const size_t *image_len, const char *const *image_mime, am_gltf **out, am_error *err)
{
    *out = NULL;
    int32_t *tex = am_alloc_array(count ? count : 1, sizeof *tex);   /* [count] texture of material m or -1 */
    size_t *first = am_alloc_array(count ? count : 1, sizeof *first); /* [images] the material it came from */
    am_gltf *doc = am_alloc(sizeof *doc);
    struct am_gltf_source *k = doc ? (doc->source = am_alloc(sizeof *doc->source)) : NULL;
    am_buf text = {0};
    am_status st = tex && first && k ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "%zu materials", count);
    if (doc) doc->scene = -1;
    size_t images = 0;
    for (size_t m = 0; st == AM_OK && m < count; m++) {
        tex[m] = -1;
        if (!image_bytes[m]) continue;
        for (size_t i = 0; i < images && tex[m] < 0; i++)
            if (materials[first[i]].texture && materials[m].texture && strcmp(materials[first[i]].texture, materials[m].texture) == 0)
                tex[m] = (int32_t)i;
        if (tex[m] < 0) first[images] = m, tex[m] = (int32_t)images++;
    }
    if (st == AM_OK && images) {
        k->images = am_alloc_array(images, sizeof *k->images);
        k->image_len = am_alloc_array(images, sizeof *k->image_len);
        k->image_mime = am_alloc_array(images, sizeof *k->image_mime);
        if (k->images && k->image_len && k->image_mime) k->image_count = images;
        for (size_t i = 0; i < k->image_count; i++) {
            size_t m = first[i];
            k->images[i] = am_alloc(image_len[m] ? image_len[m] : 1);
            if (!k->images[i]) break;
            memcpy(k->images[i], image_bytes[m], image_len[m]);
            k->image_len[i] = image_len[m];
            k->image_mime[i] = image_mime[m];
        }
        if (k->image_count != images || !k->images[images - 1]) st = AM_FAIL(err, AM_E_NOMEM, "%zu images", images);
    }
    if (st == AM_OK) {
        ami_jw w;
        ami_jw_begin(&w, &text, AMI_JSON_COMPACT);
        ami_jw_object(&w, NULL);
        ami_jw_array(&w, "materials");
        for (size_t m = 0; m < count; m++) ami_jw_material(&w, &materials[m], tex[m]);
        ami_jw_close(&w);
        if (images) {
            ami_jw_array(&w, "textures");
            for (size_t i = 0; i < images; i++) {
                ami_jw_record(&w, NULL);
                ami_jw_int(&w, "sampler", 0);
                ami_jw_int(&w, "source", (int64_t)i);
                ami_jw_close(&w);
            }
            ami_jw_close(&w);
            /* linear, mipmapped, repeating: what OBJ viewers and Blender's importer use */
            ami_jw_array(&w, "samplers");
            ami_jw_record(&w, NULL);
            ami_jw_int(&w, "magFilter", 9729);
            ami_jw_int(&w, "minFilter", 9987);
            ami_jw_int(&w, "wrapS", 10497);
            ami_jw_int(&w, "wrapT", 10497);
            ami_jw_close(&w);
            ami_jw_close(&w);
            ami_jw_array(&w, "images");
            for (size_t i = 0; i < images; i++) {
                /* the file's name for people reading the GLB; the bytes go in by bufferView */
                const char *name = materials[first[i]].map_kd ? materials[first[i]].map_kd : "";
                ami_jw_record(&w, NULL);
                if (ami_utf8_valid(name, strlen(name))) ami_jw_string(&w, "name", name);
                ami_jw_close(&w);
            }
            ami_jw_close(&w);
        }
        ami_jw_close(&w);
        char *json = NULL;
        st = ami_jw_take_string(&w, &json, err);
        if (st == AM_OK) {
            k->json = json;
            k->json_len = strlen(json);
        }
    }
    am_free(tex);
    am_free(first);
    am_buf_free(&text);
    if (st != AM_OK) {
        am_gltf_free(doc);
        return st;
    }
    *out = doc;
    return AM_OK;
}

/* ---- a glTF document's materials as MTL (bind's prepared OBJ of a glTF model) ---- */

/* A name MTL can carry and usemtl can find: the glTF name unless it is missing, repeats an
 * earlier one, or holds a control character (a newline would end the statement), else
 * "material_<index>". */
static char *ami_mtl_gltf_name(json_t *mats, size_t i)
{
    const char *n = json_string_value(json_object_get(json_array_get(mats, i), "name"));
    bool ok = n && n[0] && n[0] != ' ';
    for (const char *p = n; ok && *p; p++) ok = (unsigned char)*p >= 0x20 && *p != 0x7f;
    for (size_t j = 0; ok && j < i; j++) {
        const char *o = json_string_value(json_object_get(json_array_get(mats, j), "name"));
        ok = !o || strcmp(o, n) != 0;
    }
    if (ok) return am_strdup(n);
    char buf[32];
    snprintf(buf, sizeof buf, "material_%zu", i);
    return am_strdup(buf);
}

static double ami_mtl_gltf_number(json_t *o, const char *key, double def, double lo, double hi)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) && isfinite(json_number_value(v)) ? ami_clamp(json_number_value(v), lo, hi) : def;
}

am_status am_mtl_from_gltf(const am_gltf *doc, am_mtl **out, am_error *err)
{
    assert(doc && out);
    *out = NULL;
    if (!doc->source) return AM_FAIL(err, AM_E_VALUE, "the glTF was read without AM_GLTF_KEEP_SOURCE");
    json_t *root = NULL;
    AMI_TRY(ami_json_parse(doc->source->json, doc->source->json_len, doc->source_name ? doc->source_name : "glTF",
                           &root, err));
    json_t *mats = json_object_get(root, "materials");
    size_t n = json_array_size(mats);
    am_mtl *m = am_alloc(sizeof *m);
    if (m && n) m->materials = am_alloc_array(n, sizeof *m->materials);
    am_status st = m && (!n || m->materials) ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "%zu materials", n);
    for (size_t i = 0; st == AM_OK && i < n; i++) {
        json_t *mat = json_array_get(mats, i), *pbr = json_object_get(mat, "pbrMetallicRoughness");
        am_mtl_material *o = &m->materials[m->count];
        *o = (am_mtl_material){.name = ami_mtl_gltf_name(mats, i), .alpha = 1, .ns = -1};
        if (!o->name) {
            st = AM_FAIL(err, AM_E_NOMEM, "material names");
            break;
        }
        m->count++;
        /* glTF's defaults: white, fully metallic and rough (glTF 2.0 5.19) */
        json_t *base = json_object_get(pbr, "baseColorFactor"), *em = json_object_get(mat, "emissiveFactor");
        for (int k = 0; k < 3; k++) {
            json_t *b = json_array_get(base, (size_t)k), *e = json_array_get(em, (size_t)k);
            o->kd[k] = json_is_number(b) && isfinite(json_number_value(b)) ? ami_clamp(json_number_value(b), 0, 1) : 1;
            o->ke[k] = json_is_number(e) && isfinite(json_number_value(e)) ? ami_clamp(json_number_value(e), 0, 1) : 0;
        }
        json_t *a = json_array_get(base, 3);
        if (json_is_number(a) && isfinite(json_number_value(a))) o->alpha = ami_clamp(json_number_value(a), 0, 1);
        o->pm = ami_mtl_gltf_number(pbr, "metallicFactor", 1, 0, 1);
        o->pr = ami_mtl_gltf_number(pbr, "roughnessFactor", 1, 0, 1);
    }
    json_decref(root);
    if (st != AM_OK) {
        am_mtl_free(m);
        return st;
    }
    *out = m;
    return AM_OK;
}
