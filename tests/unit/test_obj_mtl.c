/* OBJ models with their look: corners split into glTF vertices, UVs and normals kept, MTL
 * materials read (and refused when malformed), textures found, the glTF look, the writer's
 * round trip, and weights that are equal on every copy of a position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/bind.h"
#include "anymove/gltf.h"
#include "core/internal.h"
#include "io/gltf_internal.h"
#include "io/obj_internal.h"

static void write_text(const char *path, const char *text)
{
    am_error err = {0};
    AM_CHECK_OK(am_file_write(path, text, strlen(text), &err), &err);
}

/* Eight bytes of PNG signature and a little more: what the texture check looks at. */
static const char png_bytes[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR-not-a-real-image";
#define PNG_LEN (sizeof png_bytes - 1)

static bool has_warning(const am_warning_list *w, const char *part)
{
    for (size_t i = 0; i < w->count; i++)
        if (strstr(w->data[i].text, part)) return true;
    return false;
}

static void obj_model_splits_corners_and_keeps_uvs_and_normals(void)
{
    /* a quad in z = 0 (file Y up: world y = -z, z = y), two UVs on position 1 (a seam), one
     * corner without vt, one without vn */
    static const char text[] = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                               "vt 0 0\nvt 1 0\nvt 1 1\nvt 0.25 0.75\nvn 0 0 1\nvn 0 0 2\n"
                               "f 1/1/1 2/2/1 3/3/2\n"
                               "f 1/1/1 3/3/2 4//1\n"
                               "f 2/4/1 3/3/2 1/1/1\n";
    am_obj_model *m = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_obj_model_read_mem(text, strlen(text), "q.obj", NULL, NULL, &m, &err), &err);
    if (!m) return;
    /* 4 positions; corners: (1,1,1) (2,2,1) (3,3,2) (4,-,1) (2,4,1): position 2 twice */
    AM_CHECK(m->position_count == 4 && m->mesh.vertex_count == 5 && m->mesh.triangle_count == 3);
    for (int i = 0; i < 4; i++) AM_CHECK(m->position_index[i] == i);
    AM_CHECK(m->position_index[4] == 1);
    /* the copy sits where its position is */
    AM_CHECK(memcmp(m->mesh.positions + 4 * 3, m->mesh.positions + 1 * 3, 3 * sizeof(float)) == 0);
    /* the third face's first corner is the copy; the same corner twice is one vertex */
    AM_CHECK(m->mesh.triangles[6] == 4 && m->mesh.triangles[7] == 2 && m->mesh.triangles[8] == 0);
    AM_CHECK(m->mesh.triangles[3] == 0 && m->position_triangles[6] == 1);
    /* glTF UV = (u, 1 - v); the corner without vt: OBJ (0, 0), glTF (0, 1) */
    AM_CHECK(m->texcoords && m->normals);
    const float want_uv[5][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 1}, {0.25f, 0.25f}};
    for (int i = 0; i < 5; i++)
        AM_CHECK_MSG(fabsf(m->texcoords[i * 2] - want_uv[i][0]) < 1e-6f && fabsf(m->texcoords[i * 2 + 1] - want_uv[i][1]) < 1e-6f,
                     "vertex %d uv %g %g", i, (double)m->texcoords[i * 2], (double)m->texcoords[i * 2 + 1]);
    /* normals unit in world axes: file +Z (front) is world -Y; vn 0 0 2 normalized */
    for (int i = 0; i < 5; i++) {
        const float *n = m->normals + i * 3;
        AM_CHECK_MSG(fabsf(n[0]) < 1e-6f && fabsf(n[1] + 1) < 1e-6f && fabsf(n[2]) < 1e-6f, "vertex %d normal %g %g %g", i,
                     (double)n[0], (double)n[1], (double)n[2]);
    }
    AM_CHECK(m->part_count == 0 && m->look == NULL && m->warnings.count == 0);
    am_obj_model_free(m);

    /* a corner without vn gets the area-weighted normal of the faces on its position: a tent
     * of two faces at right angles gives the diagonal on the ridge */
    static const char tent[] = "v 0 0 0\nv 0 0 1\nv 1 1 0\nv 1 1 1\nv 2 0 0\nv 2 0 1\nvn 1 0 0\n"
                               "f 1//1 3 2\nf 2 3 4\nf 3 5 4\nf 4 5 6\n";
    am_obj_opts zup = {.z_up = true};
    AM_CHECK_OK(am_obj_model_read_mem(tent, strlen(tent), "t.obj", NULL, &zup, &m, &err), &err);
    if (!m) return;
    AM_CHECK(m->mesh.vertex_count == 6 && m->texcoords == NULL && m->normals);
    /* vertex 2 (position 3, on the ridge) is on three triangles of equal area whose normals
     * are (1, -1, 0), (1, -1, 0) and (-1, -1, 0): their sum, normalized */
    const float *n = m->normals + 2 * 3;
    AM_CHECK_MSG(fabs(n[0] - 1 / sqrt(10)) < 1e-6 && fabs(n[1] + 3 / sqrt(10)) < 1e-6 && fabsf(n[2]) < 1e-6f,
                 "ridge %g %g %g", (double)n[0], (double)n[1], (double)n[2]);
    AM_CHECK(m->normals[0] == 1.0f && m->normals[1] == 0.0f); /* the given one */
    am_obj_model_free(m);

    /* without vt and vn: one vertex per position, numbered as am_obj_load numbers them */
    static const char plain[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nf 3 2 1\n";
    AM_CHECK_OK(am_obj_model_read_mem(plain, strlen(plain), "p.obj", NULL, NULL, &m, &err), &err);
    if (!m) return;
    AM_CHECK(m->mesh.vertex_count == 4 && m->normals == NULL && m->texcoords == NULL);
    AM_CHECK(m->mesh.triangles[0] == 2 && m->mesh.triangles[2] == 0 && m->position_index[3] == 3);
    am_obj_model_free(m);
}

static void obj_model_refuses_what_the_obj_reader_refuses(void)
{
    static const char *const bad[] = {"v 0 0 0\nvt 0 0\nf 1/2 1/1 1/1\n", "v 0 0 0\nvn 0 0 1\nf 1//2 1//1 1//1\n",
                                      "v 0 0 0\nvt nan 0\n", "v 0 0 0\nvn 0 1\n", "v 0 0 0\nvt 0 0\nf 1/1/ 1/1 1/1\n",
                                      "# nothing\n", "v 0 0 4e38\n", "v 0 0 0\nvn 0 -1e39 0\n",
                                      "v 0 0 0\nvt 0 5e38\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_obj_model *m = NULL;
        am_error err = {0};
        am_status s = am_obj_model_read_mem(bad[i], strlen(bad[i]), "bad.obj", NULL, NULL, &m, &err);
        AM_CHECK_MSG(s < 0 && m == NULL && strcmp(err.file, "bad.obj") == 0 && (i < 6 || s == AM_E_NONFINITE),
                     "case %zu: %s", i, am_status_name(s));
    }
}

static void mtl_reads_materials_and_skips_the_unknown(void)
{
    static const char text[] = "# Blender MTL\n"
                               "Ka 1 1 1\n" /* before any newmtl, and unknown anyway */
                               "newmtl Body Skin\n"
                               "Ns 360.0\nKa 1.000000 1.000000 1.000000\nKd 0.5\n"
                               "Ks 0.5 0.5 0.5\nKe 0.1 0.2 0.3\nNi 1.45\nd 0.25\nillum 2\n"
                               "map_Kd -s 1 1 1 -o 0.5 0.5 -bm 1 textures/my skin.png\n"
                               "map_d alpha.png\nmap_Bump -bm 1 normal.png\nwhatever 1 2 x\n"
                               "newmtl glass\nKd 1.5 -1 0.25 0.75\nTr 0.75\nPr 0.3\nPm 0.9\n"
                               "newmtl Body Skin\nKd 0 0 0\n"
                               "newmtl spectrum\nKd spectral sun.rfl\n";
    am_mtl *m = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_mtl_read_mem(text, strlen(text), "a.mtl", &m, &err), &err);
    if (!m) return;
    AM_CHECK(m->count == 3);
    const am_mtl_material *a = &m->materials[0], *b = &m->materials[1], *c = &m->materials[2];
    AM_CHECK(strcmp(a->name, "Body Skin") == 0 && strcmp(b->name, "glass") == 0 && strcmp(c->name, "spectrum") == 0);
    /* Kd with one value is grey; the repeated newmtl did not overwrite it */
    AM_CHECK(a->kd[0] == 0.5 && a->kd[1] == 0.5 && a->kd[2] == 0.5);
    AM_CHECK(a->ke[0] == 0.1 && a->ke[2] == 0.3 && a->alpha == 0.25 && a->ns == 360 && a->pr < 0 && a->pm < 0);
    AM_CHECK(a->map_kd && strcmp(a->map_kd, "textures/my skin.png") == 0 && a->texture == NULL);
    /* clamped into [0, 1]; Tr is 1 - d */
    AM_CHECK(b->kd[0] == 1 && b->kd[1] == 0 && b->kd[2] == 0.25);
    AM_CHECK(fabs(b->alpha - 0.25) < 1e-12 && b->pr == 0.3 && b->pm == 0.9 && b->ns < 0 && b->map_kd == NULL);
    /* spectral colours are not read: the default stays */
    AM_CHECK(c->kd[0] == 0.8 && c->kd[1] == 0.8 && c->alpha == 1);
    /* Ns to roughness: 1 - sqrt(Ns / 1000); Pr wins; neither: 1 */
    AM_CHECK_NEAR(ami_mtl_roughness(a), 1 - sqrt(0.36), 1e-12);
    AM_CHECK_NEAR(ami_mtl_roughness(b), 0.3, 1e-12);
    AM_CHECK_NEAR(ami_mtl_roughness(c), 1.0, 1e-12);
    AM_CHECK(has_warning(&m->warnings, "map_d is not carried over"));
    AM_CHECK(has_warning(&m->warnings, "map_Bump is not carried over"));
    AM_CHECK(has_warning(&m->warnings, "'Body Skin' is defined again"));
    AM_CHECK(has_warning(&m->warnings, "Kd spectral"));
    AM_CHECK(!has_warning(&m->warnings, "whatever") && !has_warning(&m->warnings, "illum"));
    am_mtl_free(m);
    /* an empty file has no materials, and is no error */
    AM_CHECK_OK(am_mtl_read_mem("", 0, "e.mtl", &m, &err), &err);
    AM_CHECK(m && m->count == 0);
    am_mtl_free(m);
}

static void mtl_refuses_bad_numbers_with_line_and_column(void)
{
    static const struct {
        const char *text;
        am_status want;
        uint32_t line, col;
    } bad[] = {{"newmtl a\nKd 1 x 1\n", AM_E_SYNTAX, 2, 6},
               {"newmtl a\nKd 1 0.5\n", AM_E_SYNTAX, 2, 9},
               {"newmtl a\nNs abc\n", AM_E_SYNTAX, 2, 4},
               {"newmtl a\n\nd\n", AM_E_SYNTAX, 3, 2},
               {"newmtl a\nTr 0.5.5\n", AM_E_SYNTAX, 2, 4},
               {"newmtl a\nKe nan 0 0\n", AM_E_NONFINITE, 2, 4},
               {"newmtl a\nPr 1e999\n", AM_E_NONFINITE, 2, 4},
               {"newmtl\n", AM_E_SYNTAX, 1, 7},
               {"newmtl a\nmap_Kd -s 1 1 1\n", AM_E_SYNTAX, 2, 0},
               {"newmtl a\nmap_Kd -bm\n", AM_E_SYNTAX, 2, 0},
               {"newmtl a\nmap_Kd -s x tex.png\n", AM_E_SYNTAX, 2, 11}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_mtl *m = NULL;
        am_error err = {0};
        am_status s = am_mtl_read_mem(bad[i].text, strlen(bad[i].text), "bad.mtl", &m, &err);
        AM_CHECK_MSG(s == bad[i].want && err.line == bad[i].line && (bad[i].col == 0 || err.col == bad[i].col) &&
                         strcmp(err.file, "bad.mtl") == 0 && m == NULL,
                     "case %zu: %s at %s:%u:%u (%s)", i, am_status_name(s), err.file, err.line, err.col, err.info);
    }
}

/* Every prefix of a valid MTL reads or fails cleanly (no crash, no leak under ASan). */
static void mtl_prefixes_fail_cleanly(void)
{
    static const char text[] = "newmtl a\nKd 0.1 0.2 0.3\nNs 10\nd 0.5\nKe 1 2 3\nmap_Kd -s 1 2 3 t.png\n";
    for (size_t n = 0; n <= sizeof text - 1; n++) {
        am_mtl *m = NULL;
        am_error err = {0};
        am_status s = am_mtl_read_mem(text, n, "p.mtl", &m, &err);
        AM_CHECK_MSG(s == AM_OK ? m != NULL : m == NULL && err.line > 0, "prefix %zu: %s", n, am_status_name(s));
        am_mtl_free(m);
    }
}

/* A folder with an OBJ of three usemtl groups, its MTL and a PNG: materials in order of first
 * use, triangles grouped by material, the look's JSON and image bytes. */
static const char model_obj[] = "mtllib model.mtl\n"
                                "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n"
                                "vt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\n"
                                "f 1/1/1 2/2/1 3/3/1\n"           /* before any usemtl: default */
                                "usemtl red\nf 1/1/1 3/3/1 4/1/1\n"
                                "usemtl skin\nf 2/2/1 5/1/1 3/3/1\n"
                                "usemtl red\nf 4/1/1 3/3/1 5/2/1\n"
                                "usemtl nosuch\nf 1 2 4\n";
static const char model_mtl[] = "newmtl unused\nKd 1 1 1\n"
                                "newmtl skin\nKd 0.9 0.5 0.25\nNs 250\nmap_Kd skin.png\n"
                                "newmtl red\nKd 1 0 0\nd 0.5\nKe 2 1 0\n";

static void obj_model_reads_materials_and_textures(void)
{
    const char *dir = am_test_tmp("model");
    char path[700], buf[700];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    AM_CHECK(system(path) == 0);
    snprintf(path, sizeof path, "%s/model.obj", dir);
    write_text(path, model_obj);
    snprintf(buf, sizeof buf, "%s/model.mtl", dir);
    write_text(buf, model_mtl);
    snprintf(buf, sizeof buf, "%s/skin.png", dir);
    am_error err = {0};
    AM_CHECK_OK(am_file_write(buf, png_bytes, PNG_LEN, &err), &err);
    am_obj_model *m = NULL;
    AM_CHECK_OK(am_obj_model_load(path, NULL, &m, &err), &err);
    if (!m) return;
    /* red first used, then skin; "unused" left out; "nosuch" is the default */
    AM_CHECK(m->material_count == 2 && strcmp(m->materials[0].name, "red") == 0 && strcmp(m->materials[1].name, "skin") == 0);
    AM_CHECK(has_warning(&m->warnings, "usemtl 'nosuch' names no material"));
    AM_CHECK(m->part_count == 3);
    const am_gltf_mesh_part want[3] = {{0, 2, -1}, {2, 2, 0}, {4, 1, 1}};
    for (size_t p = 0; p < 3 && p < m->part_count; p++)
        AM_CHECK_MSG(m->parts[p].first_triangle == want[p].first_triangle && m->parts[p].triangle_count == want[p].triangle_count &&
                         m->parts[p].material == want[p].material,
                     "part %zu: %zu + %zu material %d", p, m->parts[p].first_triangle, m->parts[p].triangle_count,
                     (int)m->parts[p].material);
    /* the triangles moved with their groups (stable): red's are faces 2 and 4 of the file */
    AM_CHECK(m->position_triangles[2 * 3] == 0 && m->position_triangles[2 * 3 + 2] == 3);
    AM_CHECK(m->position_triangles[3 * 3] == 3 && m->position_triangles[3 * 3 + 2] == 4);
    AM_CHECK(m->position_triangles[4 * 3] == 1 && m->position_triangles[4 * 3 + 1] == 4);
    AM_CHECK(m->position_triangles[1 * 3] == 0 && m->position_triangles[1 * 3 + 1] == 1 && m->position_triangles[1 * 3 + 2] == 3);
    /* the texture was found and its bytes are the look's one image */
    AM_CHECK(m->materials[1].texture && strstr(m->materials[1].texture, "skin.png") && m->materials[0].texture == NULL);
    AM_CHECK(m->look && m->look->source);
    if (m->look && m->look->source) {
        const struct am_gltf_source *k = m->look->source;
        AM_CHECK(k->image_count == 1 && k->image_len[0] == PNG_LEN && memcmp(k->images[0], png_bytes, PNG_LEN) == 0);
        AM_CHECK(k->image_count == 1 && strcmp(k->image_mime[0], "image/png") == 0);
        const char *j = k->json;
        AM_CHECK_MSG(strstr(j, "\"name\":\"red\"") && strstr(j, "\"baseColorFactor\":[1.0,0.0,0.0,0.5]") &&
                         strstr(j, "\"alphaMode\":\"BLEND\"") && strstr(j, "\"emissiveFactor\":[1.0,0.5,0.0]") &&
                         strstr(j, "\"KHR_materials_emissive_strength\":{\"emissiveStrength\":2.0}") &&
                         strstr(j, "\"baseColorFactor\":[0.9,0.5,0.25,1.0],\"baseColorTexture\":{\"index\":0}") &&
                         strstr(j, "\"metallicFactor\":0.0,\"roughnessFactor\":0.5") && strstr(j, "\"samplers\":[{") &&
                         strstr(j, "\"textures\":[{\"sampler\":0,\"source\":0}]"),
                     "look %s", j);
    }
    /* written back: positions, UVs, normals and groups, and an .mtl naming the texture by a
     * path from the new folder */
    char out[700], mtl[700], sub[600];
    snprintf(sub, sizeof sub, "%s/out", dir);
    snprintf(out, sizeof out, "mkdir -p '%s'", sub);
    AM_CHECK(system(out) == 0);
    snprintf(out, sizeof out, "%s/back.obj", sub);
    snprintf(mtl, sizeof mtl, "%s/back.mtl", sub);
    AM_CHECK_OK(am_obj_model_write(m, NULL, out, mtl, NULL, &err), &err);
    am_obj_model *b = NULL;
    AM_CHECK_OK(am_obj_model_load(out, NULL, &b, &err), &err);
    if (b) {
        AM_CHECK(b->mesh.vertex_count == m->mesh.vertex_count && b->mesh.triangle_count == m->mesh.triangle_count);
        AM_CHECK(b->part_count == 3 && b->material_count == 2 && b->warnings.count == 0);
        /* corner by corner: the same position, UV and normal */
        double worst = 0;
        for (size_t k = 0; k < m->mesh.triangle_count * 3; k++) {
            int32_t va = m->mesh.triangles[k], vb = b->mesh.triangles[k];
            for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(m->mesh.positions[va * 3 + c] - b->mesh.positions[vb * 3 + c]));
            for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(m->normals[va * 3 + c] - b->normals[vb * 3 + c]));
            for (int c = 0; c < 2; c++) worst = fmax(worst, fabs(m->texcoords[va * 2 + c] - b->texcoords[vb * 2 + c]));
        }
        AM_CHECK_MSG(worst < 1e-6, "round trip differs by %g", worst);
        AM_CHECK(b->material_count == 2 && strcmp(b->materials[1].name, "skin") == 0 && b->materials[1].texture &&
                 b->materials[0].alpha == 0.5 && b->materials[0].ke[0] == 2 && b->materials[1].ns == 250);
    }
    am_obj_model_free(b);
    char *text = NULL;
    size_t len = 0;
    AM_CHECK_OK(am_file_read(mtl, 0, &text, &len, &err), &err);
    AM_CHECK_MSG(text && strstr(text, "map_Kd ../skin.png\n"), "%s", text ? text : "");
    am_free(text);
    am_obj_model_free(m);
}

/* What is missing or wrong beside the OBJ: warnings naming the file (the geometry stands), or,
 * for a malformed .mtl, the error at its line and column. */
static void obj_model_warns_on_missing_files_and_fails_on_bad_mtl(void)
{
    const char *dir = am_test_tmp("missing");
    char cmd[700], obj[700], mtl[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    AM_CHECK(system(cmd) == 0);
    snprintf(obj, sizeof obj, "%s/m.obj", dir);
    snprintf(mtl, sizeof mtl, "%s/m.mtl", dir);
    static const char text[] = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n";
    write_text(obj, text);
    am_obj_model *m = NULL;
    am_error err = {0};
    /* no .mtl: one warning naming it, no material, no per-name warning */
    AM_CHECK_OK(am_obj_model_load(obj, NULL, &m, &err), &err);
    AM_CHECK(m && m->material_count == 0 && m->look == NULL && m->part_count == 0 && m->mesh.triangle_count == 1);
    AM_CHECK(m && m->warnings.count == 1 && has_warning(&m->warnings, "m.mtl: cannot read the material library"));
    am_obj_model_free(m);
    /* a texture that is not there, or no image: the material stays, untextured */
    write_text(mtl, "newmtl a\nKd 0.2 0.4 0.6\nmap_Kd tex/none.png\n");
    AM_CHECK_OK(am_obj_model_load(obj, NULL, &m, &err), &err);
    AM_CHECK(m && m->material_count == 1 && m->materials[0].texture == NULL && m->look &&
             m->look->source->image_count == 0 && has_warning(&m->warnings, "tex/none.png: cannot read the texture"));
    am_obj_model_free(m);
    char tex[700];
    snprintf(tex, sizeof tex, "%s/notes.png", dir);
    write_text(tex, "GIF89a, really");
    write_text(mtl, "newmtl a\nmap_Kd notes.png\n");
    AM_CHECK_OK(am_obj_model_load(obj, NULL, &m, &err), &err);
    AM_CHECK(m && m->materials[0].texture == NULL && has_warning(&m->warnings, "is no PNG or JPEG"));
    am_obj_model_free(m);
    /* an absolute path is where the exporter had it: its file name is found beside the model */
    snprintf(tex, sizeof tex, "%s/skin.jpg", dir);
    AM_CHECK_OK(am_file_write(tex, "\xff\xd8\xff\xe0 jfif", 9, &err), &err);
    write_text(mtl, "newmtl a\nmap_Kd C:\\Users\\me\\textures\\skin.jpg\n");
    AM_CHECK_OK(am_obj_model_load(obj, NULL, &m, &err), &err);
    AM_CHECK(m && m->materials[0].texture && m->warnings.count == 0 && m->look->source->image_count == 1 &&
             strcmp(m->look->source->image_mime[0], "image/jpeg") == 0);
    am_obj_model_free(m);
    /* a malformed .mtl: the error names it, with line and column; no model */
    write_text(mtl, "newmtl a\nKd 0.2 zero 0.6\n");
    am_status s = am_obj_model_load(obj, NULL, &m, &err);
    AM_CHECK_MSG(s == AM_E_SYNTAX && m == NULL && strcmp(err.file, mtl) == 0 && err.line == 2 && err.col == 8,
                 "%s at %s:%u:%u", am_status_name(s), err.file, err.line, err.col);
    /* from memory without a folder: the mtllib is a warning */
    AM_CHECK_OK(am_obj_model_read_mem(text, strlen(text), "mem.obj", NULL, NULL, &m, &err), &err);
    AM_CHECK(m && m->material_count == 0 && has_warning(&m->warnings, "without a folder"));
    am_obj_model_free(m);
}

/* Every allocation of a model load with materials and a texture may fail: AM_E_NOMEM, never a
 * crash or a leak (ASan). */
static void obj_model_load_survives_every_failed_allocation(void)
{
    const char *dir = am_test_tmp("model"); /* written by obj_model_reads_materials_and_textures */
    char path[512];
    snprintf(path, sizeof path, "%s/model.obj", dir);
    am_test_alloc_limit(0);
    am_obj_model *m = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_obj_model_load(path, NULL, &m, &err), &err);
    uint64_t n = am_test_alloc_count();
    am_obj_model_free(m);
    AM_CHECK(n > 10);
    /* limit k: allocation k + 1 fails (0 would mean no limit) */
    for (uint64_t k = 1; k < n; k++) {
        am_test_alloc_limit(k);
        am_status s = am_obj_model_load(path, NULL, &m, &err);
        AM_CHECK_MSG(s == AM_E_NOMEM && m == NULL, "allocation %llu: %s", (unsigned long long)k, am_status_name(s));
        am_obj_model_free(m);
        m = NULL;
    }
    am_test_alloc_limit(0);
}

/* Flat-shaded box-like tube on two bones: every position has several corners (one normal per
 * face). The weights heated on the positions and spread are equal on every copy, and equal to
 * heating the split mesh itself (its copies weld back into the positions). */
static void split_copies_get_identical_weights(void)
{
    enum { NY = 11, NC = 6 };
    am_buf b = {0};
    for (int y = 0; y < NY; y++)
        for (int k = 0; k < NC; k++) {
            double a = 2 * 3.14159265358979 * k / NC;
            am_buf_printf(&b, "v %.6f %.6f %.6f\n", 0.2 * cos(a), 0.5 + 0.2 * sin(a), 2.0 * y / (NY - 1));
        }
    size_t nf = 0;
    for (int y = 0; y + 1 < NY; y++)
        for (int k = 0; k < NC; k++) {
            int a = y * NC + k + 1, c = y * NC + (k + 1) % NC + 1;
            double ang = 2 * 3.14159265358979 * (k + 0.5) / NC;
            am_buf_printf(&b, "vn %.6f %.6f 0\n", cos(ang), sin(ang));
            nf++;
            am_buf_printf(&b, "f %d//%zu %d//%zu %d//%zu %d//%zu\n", a, nf, c, nf, c + NC, nf, a + NC, nf);
        }
    am_obj_model *m = NULL;
    am_error err = {0};
    AM_CHECK(!b.failed);
    am_obj_opts zup = {.z_up = false};
    AM_CHECK_OK(am_obj_model_read_mem(b.data, b.len, "tube.obj", NULL, &zup, &m, &err), &err);
    am_buf_free(&b);
    if (!m) return;
    AM_CHECK(m->position_count == NY * NC && m->mesh.vertex_count > 3 * m->position_count);
    static const char *const jn[] = {"a", "b", "c"}, *const bn[] = {"back", "front"}, *const bh[] = {"a", "b"},
                             *const bt[] = {"b", "c"}, *const bp[] = {NULL, "back"};
    double jp[9] = {0, -0.05, 0.5, 0, -1.0, 0.5, 0, -1.95, 0.5};
    am_rig_desc d = {.joint_count = 3, .joint_names = jn, .joint_pos = jp, .bone_count = 2, .bone_names = bn,
                     .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    am_mesh on_positions = {m->position_count, m->mesh.triangle_count, m->mesh.positions, m->position_triangles};
    am_bind_result *rp = NULL, *rs = NULL;
    AM_CHECK_OK(am_bind_weights(&on_positions, rig, NULL, &rp, &err), &err);
    AM_CHECK_OK(am_bind_weights(&m->mesh, rig, NULL, &rs, &err), &err);
    size_t V = m->mesh.vertex_count;
    float *w = am_alloc_array(V * 4, sizeof *w);
    int32_t *bi = am_alloc_array(V * 4, sizeof *bi);
    if (rp && rs && w && bi) {
        am_obj_model_spread(m, rp->weight, 4 * sizeof *w, w);
        am_obj_model_spread(m, rp->bone_index, 4 * sizeof *bi, bi);
        size_t copies = 0, unequal = 0;
        am_test_diff dd = {0};
        for (size_t i = m->position_count; i < V; i++) {
            int32_t p = m->position_index[i];
            copies++;
            unequal += memcmp(w + i * 4, w + (size_t)p * 4, 4 * sizeof *w) != 0 || memcmp(bi + i * 4, bi + (size_t)p * 4, 4 * sizeof *bi) != 0;
            /* heating the split mesh welds the copies: the same weights to rounding */
            for (int k = 0; k < 4; k++) am_test_diff_add(&dd, rs->weight[i * 4 + (size_t)k], rs->weight[(size_t)p * 4 + (size_t)k]);
        }
        AM_CHECK(copies > 0 && unequal == 0);
        AM_CHECK_MSG(dd.max == 0, "split-mesh heat: copies differ by max %g", dd.max);
        /* and both ways agree: front vertices follow the front bone */
        am_test_diff both = {0};
        for (size_t i = 0; i < V; i++)
            for (int k = 0; k < 4; k++)
                if (rs->bone_index[i * 4 + (size_t)k] == bi[i * 4 + (size_t)k])
                    am_test_diff_add(&both, rs->weight[i * 4 + (size_t)k], w[i * 4 + (size_t)k]);
        AM_CHECK_MSG(both.count >= V * 2 && both.max < 1e-3, "positions vs split: %zu compared, max %g", both.count, both.max);
        AM_CHECK(rp->welded_count == m->position_count && rs->welded_count == m->position_count);
    }
    am_free(w);
    am_free(bi);
    am_bind_result_free(rp);
    am_bind_result_free(rs);
    am_rig_free(rig);
    am_obj_model_free(m);
}

static void path_relative_walks_up_and_down(void)
{
    const char *dir = am_test_tmp("rel");
    char cmd[700], a[700], file[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/x/y' '%s/t'", dir, dir);
    AM_CHECK(system(cmd) == 0);
    snprintf(file, sizeof file, "%s/t/img.png", dir);
    write_text(file, "x");
    struct {
        const char *from, *want;
    } cases[] = {{"x/y", "../../t/img.png"}, {"t", "img.png"}, {"x/new/deeper", "../../../t/img.png"}, {"", "t/img.png"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(a, sizeof a, "%s%s%s", dir, cases[i].from[0] ? "/" : "", cases[i].from);
        char *r = ami_path_relative(a, file);
        AM_CHECK_MSG(r && strcmp(r, cases[i].want) == 0, "from %s: %s, want %s", cases[i].from, r ? r : "NULL", cases[i].want);
        am_free(r);
    }
    char *r = ami_path_relative(dir, "/no/such/file.png");
    AM_CHECK(r && strcmp(r, "/no/such/file.png") == 0);
    am_free(r);
}

/* A glTF document's materials as MTL (bind's prepared OBJ of a glTF model): the factors carried,
 * glTF's defaults where absent, names MTL cannot hold replaced by material_<index>. */
static void mtl_from_gltf_carries_factors_and_fixes_names(void)
{
    static const char gltf[] =
        "{\"asset\": {\"version\": \"2.0\"}, \"materials\": ["
        "{\"name\": \"Skin\", \"pbrMetallicRoughness\": {\"baseColorFactor\": [0.1, 0.2, 0.3, 0.5],"
        " \"metallicFactor\": 0, \"roughnessFactor\": 0.25}, \"emissiveFactor\": [1, 0.5, 0]},"
        "{}, {\"name\": \"Skin\"}, {\"name\": \"two\\nlines\"}]}";
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE};
    am_gltf *doc = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_read_mem(gltf, strlen(gltf), "m.gltf", NULL, &keep, &doc, &err), &err);
    am_mtl *m = NULL;
    if (doc) AM_CHECK_OK(am_mtl_from_gltf(doc, &m, &err), &err);
    if (m) {
        AM_CHECK(m->count == 4);
        const am_mtl_material *a = &m->materials[0], *d = &m->materials[1];
        AM_CHECK(strcmp(a->name, "Skin") == 0);
        AM_CHECK_NEAR(a->kd[0], 0.1, 1e-12);
        AM_CHECK_NEAR(a->kd[2], 0.3, 1e-12);
        AM_CHECK_NEAR(a->alpha, 0.5, 1e-12);
        AM_CHECK_NEAR(a->ke[0], 1, 1e-12);
        AM_CHECK_NEAR(a->ke[1], 0.5, 1e-12);
        AM_CHECK(a->pm == 0 && a->pr == 0.25 && a->map_kd == NULL);
        /* glTF's defaults: white, opaque, metallic 1, roughness 1 */
        AM_CHECK(strcmp(d->name, "material_1") == 0);
        AM_CHECK(d->kd[0] == 1 && d->kd[1] == 1 && d->kd[2] == 1 && d->alpha == 1 && d->pm == 1 && d->pr == 1);
        AM_CHECK(strcmp(m->materials[2].name, "material_2") == 0); /* a repeated name */
        AM_CHECK(strcmp(m->materials[3].name, "material_3") == 0); /* a newline would end usemtl */
    }
    am_mtl_free(m);
    am_gltf_free(doc);
    /* without the kept source there is nothing to read the materials from */
    AM_CHECK_OK(am_gltf_read_mem(gltf, strlen(gltf), "m.gltf", NULL, NULL, &doc, &err), &err);
    if (doc) AM_CHECK_STATUS(am_mtl_from_gltf(doc, &m, &err), AM_E_VALUE);
    am_gltf_free(doc);
}

#define AM_TESTS(X)                                                                                                   \
    X(obj_model_splits_corners_and_keeps_uvs_and_normals) X(obj_model_refuses_what_the_obj_reader_refuses)            \
    X(mtl_reads_materials_and_skips_the_unknown) X(mtl_refuses_bad_numbers_with_line_and_column)                      \
    X(mtl_prefixes_fail_cleanly) X(obj_model_reads_materials_and_textures)                                            \
    X(obj_model_warns_on_missing_files_and_fails_on_bad_mtl) X(obj_model_load_survives_every_failed_allocation)       \
    X(split_copies_get_identical_weights) X(path_relative_walks_up_and_down)                                \
    X(mtl_from_gltf_carries_factors_and_fixes_names)
AM_TEST_MAIN(AM_TESTS)
