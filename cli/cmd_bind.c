/* `anymove bind MODEL.glb|.obj --rig RIG.json [--creature C.json] -o rigged.glb`: a static mesh,
 * prepared (creature.json "prep") and skinned to its rig by bone heat, with the limb paint. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_bind_help(FILE *out)
{
    fprintf(out,
            "usage: anymove bind MODEL.glb|MODEL.gltf|MODEL.obj --rig RIG.json [--creature C.json]\n"
            "                    -o RIGGED.glb [--rigid] [--up z] [--scale S] [--quiet]\n"
            "       anymove bind MODEL --creature C.json -o PREPPED.obj\n\n"
            "Skins a static mesh to its rig. First the mesh is prepared as creature.json \"prep\"\n"
            "says ({\"length_m\": 1.2, \"rotz_deg\": 90, \"axis\": \"y\"}: turned about Z to face -Y,\n"
            "scaled so that its extent along axis is length_m, centred on x = y = 0, standing on\n"
            "z = 0); the transform is printed (JSON on stdout) so that a rig authored on the\n"
            "prepared mesh lines up. Without --rig, -o PREPPED.obj writes the prepared mesh to\n"
            "author the rig on. Then every vertex gets its top-4 bone weights by bone heat\n"
            "(Baran & Popovic 2007, Blender's automatic weights: one sparse Cholesky, one solve per\n"
            "bone; coincident vertices welded, pieces that see no bone heated by the nearest), or\n"
            "one bone with --rigid (creature.json \"rigid\": true). creature.json \"paint\" (limb\n"
            "groups: {\"fore_L\": {\"color\": \"#e03030\", \"bones\": [...]}}) becomes the vertex colour\n"
            "COLOR_0 so that renders show the limbs; `anymove pack` removes it. Helper bones get no\n"
            "weight. The GLB holds the rig's joints, the skin and the mesh; a glTF model keeps its\n"
            "mesh nodes (each a skinned mesh with its name, primitives and materials; node transforms\n"
            "baked in; cameras, lights and empties left out) and its look: normals, tangents, every\n"
            "UV set, morph targets (deltas turned with the prep, default weights, target names),\n"
            "materials, textures and images (embedded), and its own vertex colours (COLOR_1 beside\n"
            "the paint, which pack gives back as COLOR_0); an OBJ its vt, vn and mtllib materials\n"
            "(Kd, d, Ke, Ns, map_Kd: a PNG or JPEG, embedded; a missing .mtl or texture is a\n"
            "warning). Validator-clean. PREPPED.obj keeps vt, vn and usemtl, with PREPPED.mtl\n"
            "beside it (a glTF model's TEXCOORD_0, NORMAL and materials by base colour; its\n"
            "textures stay in the GLB).\n\n"
            "options:\n"
            "  --rig RIG.json      the rig, authored on the prepared mesh (world axes of SPEC 1)\n"
            "  --creature C.json   prep, paint and rigid (optional)\n"
            "  -o, --out FILE      RIGGED.glb (with --rig) or PREPPED.obj (without)\n"
            "  --rigid             hard single-bone skinning\n"
            "  --up z              an OBJ that is Z up, front -Y (default: Y up, front +Z)\n"
            "  --scale S           metres per model unit (before prep)\n"
            "  --quiet, -q         no progress on stderr\n\n"
            "examples:\n"
            "  anymove bind examples/creatures/capsule_wolf/model.obj --creature examples/creatures/capsule_wolf/creature.json \\\n"
            "               -o out/wolf_prepped.obj\n"
            "  anymove bind examples/creatures/capsule_wolf/model.obj --rig examples/creatures/capsule_wolf/rig.json \\\n"
            "               --creature examples/creatures/capsule_wolf/creature.json -o out/wolf_rigged.glb\n");
}

/* The model as one mesh in world axes: an OBJ, or every triangle primitive of a glTF, whose
 * look (normals, UVs, materials and textures) *om, or *gm and *look, keep for the rigged GLB. */
static am_status ami_bind_load(const char *path, bool z_up, double scale, am_mesh **out, am_obj_model **om,
                               am_gltf **look, am_gltf_meshes **gm, am_error *err)
{
    const char *ext = am_cli_ext(path);
    if (ext && strcasecmp(ext, ".obj") == 0) {
        am_obj_opts o = {.z_up = z_up, .scale = scale};
        AMI_TRY(am_obj_model_load(path, &o, om, err));
        am_cli_print_warnings("bind", &(*om)->warnings);
        *out = &(*om)->mesh;
        return AM_OK;
    }
    am_gltf_opts go = {.flags = AM_GLTF_KEEP_SOURCE, .ctx = am_cli_context()};
    AMI_TRY(am_gltf_load(path, &go, look, err));
    am_cli_print_warnings("bind", &(*look)->warnings);
    am_status st = am_gltf_meshes_gather(*look, gm, err);
    if (st != AM_OK) {
        am_error_set_file(err, path);
        return st;
    }
    am_mesh *m = &(*gm)->mesh;
    for (size_t i = 0; i < m->vertex_count * 3; i++) m->positions[i] *= (float)scale;
    for (size_t p = 0; p < (*gm)->part_count; p++) {
        am_gltf_part *pt = &(*gm)->parts[p];
        for (size_t i = 0; pt->target_positions && i < pt->target_count * pt->count * 3; i++)
            pt->target_positions[i] *= (float)scale;
    }
    *out = m;
    return AM_OK;
}

/* Directions (normals, or tangents: stride 4, their w left as it is) turned by the prep's
 * rotation (its scale is uniform, so normals need no inverse transpose). */
static void ami_bind_turn_normals(float *normals, size_t n, size_t stride, const double M[16])
{
    for (size_t v = 0; v < n; v++) {
        float *q = normals + stride * v;
        double r[3];
        for (int k = 0; k < 3; k++) r[k] = M[4 * k] * q[0] + M[4 * k + 1] * q[1] + M[4 * k + 2] * q[2];
        double len = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        for (int k = 0; k < 3; k++) q[k] = (float)(len > 0 ? r[k] / len : k == 2);
    }
}

/* Vectors ([n][3]) by M's linear part, times k: the prep on morph deltas (positions: k = 1,
 * they scale with the mesh; normals and tangents: k = 1/scale, they only turn, as their base
 * attributes do; a delta is not normalised). */
static void ami_bind_turn_deltas(float *d, size_t n, const double M[16], double k)
{
    for (size_t v = 0; d && v < n; v++) {
        float *q = d + 3 * v;
        double r[3];
        for (int c = 0; c < 3; c++) r[c] = k * (M[4 * c] * q[0] + M[4 * c + 1] * q[1] + M[4 * c + 2] * q[2]);
        for (int c = 0; c < 3; c++) q[c] = (float)r[c];
    }
}

/* The prep on everything of a glTF model that is not its positions. */
static void ami_bind_prep_look(am_gltf_meshes *gm, const double M[16])
{
    size_t V = gm->mesh.vertex_count;
    if (gm->normals) ami_bind_turn_normals(gm->normals, V, 3, M);
    if (gm->tangents) ami_bind_turn_normals(gm->tangents, V, 4, M);
    double s = sqrt(M[0] * M[0] + M[4] * M[4] + M[8] * M[8]);
    for (size_t p = 0; p < gm->part_count; p++) {
        am_gltf_part *pt = &gm->parts[p];
        size_t n = pt->target_count * pt->count;
        ami_bind_turn_deltas(pt->target_positions, n, M, 1.0);
        ami_bind_turn_deltas(pt->target_normals, n, M, s > 0 ? 1.0 / s : 1.0);
        ami_bind_turn_deltas(pt->target_tangents, n, M, s > 0 ? 1.0 / s : 1.0);
    }
}

/* The model's mesh nodes for the rigged GLB: one node per source mesh node, with its primitives
 * as parts (their own vertices and morph targets), names, default morph weights and target
 * names. *parts, *nodes and *weights ([nodes][targets]) are allocated here. */
static am_status ami_bind_nodes(const am_gltf *doc, const am_gltf_meshes *gm, am_gltf_mesh_part **parts,
                                size_t *part_count, am_gltf_mesh_node **nodes, size_t *node_count, double **weights,
                                am_error *err)
{
    size_t P = gm->part_count, W = 0;
    for (size_t p = 0; p < P; p++) W += gm->parts[p].target_count;
    *parts = am_alloc_array(P ? P : 1, sizeof **parts);
    *nodes = am_alloc_array(P ? P : 1, sizeof **nodes);
    *weights = am_alloc_array(W ? W : 1, sizeof **weights);
    if (!*parts || !*nodes || !*weights) return AM_FAIL(err, AM_E_NOMEM, "%zu mesh parts", P);
    size_t np = 0, nn = 0, nw = 0;
    int32_t last_node = -1;
    for (size_t p = 0; p < P; p++) {
        const am_gltf_part *g = &gm->parts[p];
        if (!g->triangle_count) continue;
        if (g->node != last_node) { /* the gathered parts come node by node */
            last_node = g->node;
            const am_gltf_node *dn = &doc->nodes[g->node];
            const am_gltf_mesh *me = &doc->meshes[g->mesh];
            /* the node's weights override its mesh's (glTF 2.0 3.7.2.2); missing ones are 0 */
            size_t dw = dn->weight_count ? dn->weight_count : me->weight_count;
            const double *src = dn->weight_count ? dn->weights : me->weights;
            double *w = *weights + nw;
            for (size_t t = 0; t < g->target_count; t++) w[t] = t < dw ? src[t] : 0.0;
            nw += g->target_count;
            (*nodes)[nn++] = (am_gltf_mesh_node){
                .name = dn->name, .mesh_name = me->name, .first_part = np, .target_count = g->target_count,
                .target_weights = g->target_count ? w : NULL,
                .target_names = me->target_name_count == g->target_count && g->target_count
                                    ? (const char *const *)me->target_names : NULL};
        }
        (*nodes)[nn - 1].part_count++;
        (*parts)[np++] = (am_gltf_mesh_part){
            .first_triangle = g->first_triangle, .triangle_count = g->triangle_count, .material = g->material,
            .first_vertex = g->first, .vertex_count = g->count, .target_count = g->target_count,
            .target_positions = g->target_positions, .target_normals = g->target_normals,
            .target_tangents = g->target_tangents};
    }
    *part_count = np, *node_count = nn;
    return AM_OK;
}

/* An OBJ's vertices are its corners (one per distinct v/vt/vn): the weights and the paint were
 * computed on its positions, one surface, and every copy of a position gets the same. */
static am_status ami_bind_obj_spread(const am_obj_model *om, am_bind_result *br, float **colors, am_error *err)
{
    size_t V = om->mesh.vertex_count;
    int32_t *bone = am_alloc_array(V * 4, sizeof *bone);
    float *weight = am_alloc_array(V * 4, sizeof *weight), *paint = *colors ? am_alloc_array(V * 4, sizeof *paint) : NULL;
    if (!bone || !weight || (*colors && !paint)) {
        am_free(bone);
        am_free(weight);
        am_free(paint);
        return AM_FAIL(err, AM_E_NOMEM, "weights of %zu vertices", V);
    }
    am_obj_model_spread(om, br->bone_index, 4 * sizeof *bone, bone);
    am_obj_model_spread(om, br->weight, 4 * sizeof *weight, weight);
    if (paint) am_obj_model_spread(om, *colors, 4 * sizeof *paint, paint);
    am_free(br->bone_index);
    am_free(br->weight);
    br->bone_index = bone, br->weight = weight, br->vertex_count = V;
    if (paint) am_free(*colors), *colors = paint;
    return AM_OK;
}

/* A glTF model as an OBJ model to write: every gathered vertex a position of its own (the
 * glTF has already split them at seams; welding them back would need a vt/vn per corner
 * anyway), its NORMAL and TEXCOORD_0, one part per primitive with its material, and the
 * document's materials by base colour (textures are not written: docs/decisions.md). */
static am_status ami_bind_gltf_as_obj(const am_gltf *doc, const am_gltf_meshes *gm, am_obj_model *om, am_mtl **mtl,
                                      am_error *err)
{
    size_t V = gm->mesh.vertex_count, P = gm->part_count;
    *om = (am_obj_model){.mesh = gm->mesh, .position_count = V, .position_triangles = gm->mesh.triangles,
                         .normals = gm->normals, .texcoords = gm->texcoords};
    om->position_index = am_alloc_array(V ? V : 1, sizeof *om->position_index);
    om->parts = am_alloc_array(P ? P : 1, sizeof *om->parts);
    if (!om->position_index || !om->parts) return AM_FAIL(err, AM_E_NOMEM, "OBJ of %zu vertices", V);
    for (size_t i = 0; i < V; i++) om->position_index[i] = (int32_t)i;
    AMI_TRY(am_mtl_from_gltf(doc, mtl, err));
    /* the parts without a material first: OBJ cannot go back to the default after a usemtl */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t p = 0; p < P; p++) {
            const am_gltf_part *g = &gm->parts[p];
            if (!g->triangle_count || (g->material < 0) != (pass == 0)) continue;
            om->parts[om->part_count++] = (am_gltf_mesh_part){g->first_triangle, g->triangle_count, g->material};
        }
    }
    om->material_count = (*mtl)->count, om->materials = (*mtl)->materials;
    return AM_OK;
}

/* Without --rig: the prepared mesh as an OBJ (and the .mtl of the model's materials, named
 * after it and written beside it in the same set). */
static am_status ami_bind_write_obj(const am_gltf *doc, const am_gltf_meshes *gm, const am_obj_model *om, bool z_up,
                                    const am_outset *set, const char *obj_name, const char *mtl_name, am_error *err)
{
    am_obj_opts oo = {.z_up = z_up};
    am_obj_model view;
    am_mtl *mtl = NULL;
    am_status st = AM_OK;
    if (!om) {
        st = ami_bind_gltf_as_obj(doc, gm, &view, &mtl, err);
        om = &view;
    }
    if (st == AM_OK)
        st = am_obj_model_write(om, &oo, am_outset_path(set, obj_name), am_outset_path(set, mtl_name),
                                am_outset_final(set, mtl_name), err);
    if (om == &view) am_free(view.position_index), am_free(view.parts);
    am_mtl_free(mtl);
    return st;
}

static void ami_jw_prep(ami_jw *w, const am_creature *c, const double M[16], double size_before, double size_after)
{
    ami_jw_object(w, "prep");
    ami_jw_bool(w, "given", c && c->has_prep);
    if (c && c->has_prep) {
        ami_jw_number(w, "length_m", c->prep.length_m);
        ami_jw_number(w, "rotz_deg", c->prep.rotz_deg);
        char axis[2] = {(char)('x' + c->prep.axis), 0};
        ami_jw_string(w, "axis", axis);
    }
    double s = sqrt(M[0] * M[0] + M[4] * M[4] + M[8] * M[8]);
    ami_jw_number(w, "scale", s);
    ami_jw_numbers(w, "translation", (double[3]){M[3], M[7], M[11]}, 1, (size_t[1]){3});
    ami_jw_numbers(w, "matrix", M, 2, (size_t[2]){4, 4});
    ami_jw_number(w, "body_size_before", size_before);
    ami_jw_number(w, "body_size_after", size_after);
    ami_jw_close(w);
}

int am_cmd_bind(int argc, char **argv)
{
    const char *model = NULL, *rig_path = NULL, *creature_path = NULL, *out_path = NULL, *v;
    bool rigid = false, z_up = false;
    double scale = 1;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_bind_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (am_cli_flag(argv[i], "--rigid")) {
            rigid = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            creature_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcmp(v, "z") != 0 && strcmp(v, "y") != 0) return am_cli_usage("bind", "--up takes y or z, got '%s'", v);
            z_up = strcmp(v, "z") == 0;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("bind", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("bind", "unknown option or missing value '%s'", argv[i]);
        } else if (model) {
            return am_cli_usage("bind", "one MODEL at a time (got '%s' and '%s')", model, argv[i]);
        } else {
            model = argv[i];
        }
    }
    if (!model) return am_cli_usage("bind", "missing MODEL.glb or MODEL.obj");
    if (!out_path) return am_cli_usage("bind", "missing -o RIGGED.glb");
    unsigned allowed = rig_path ? AM_CLI_FMT(AM_CLI_FMT_GLB) : AM_CLI_FMT(AM_CLI_FMT_OBJ);
    if (am_cli_out_file("bind", out_path, allowed) == AM_CLI_FMT_NONE) {
        if (!rig_path) fprintf(stderr, "anymove bind: without --rig, bind writes the prepared mesh (-o PREPPED.obj)\n");
        return 2;
    }
    /* the prepared OBJ and its .mtl are one set: the folder's x.obj and x.mtl (a run that writes
     * no .mtl removes an old one, which would no longer match) */
    char *out_dir = NULL, names[2][512] = {"", ""};
    const char *const set_names[2] = {names[0], names[1]};
    if (!rig_path) {
        const char *slash = strrchr(out_path, '/'), *base = slash ? slash + 1 : out_path;
        size_t stem = strlen(base) - 4; /* am_cli_out_file checked the ".obj" */
        if (strlen(base) >= sizeof names[0] || base[0] == '.')
            return am_cli_usage("bind", "-o '%s': the file name must not start with '.' (or be that long)", out_path);
        snprintf(names[0], sizeof names[0], "%s", base);
        snprintf(names[1], sizeof names[1], "%.*s.mtl", (int)stem, base);
        out_dir = ami_path_dirname(out_path);
        if (!out_dir) return am_cli_usage("bind", "out of memory");
    }
    am_outset *set = NULL;
    int rc = out_dir ? am_cli_outputs("bind", out_dir, set_names, 2, &set) : am_cli_outputs("bind", out_path, NULL, 0, &set);
    am_free(out_dir);
    if (rc) return rc;

    am_error err = {0};
    am_mesh *mesh = NULL;
    am_obj_model *om = NULL;
    am_gltf *look = NULL;
    am_gltf_meshes *gm = NULL;
    am_gltf_mesh_part *parts = NULL;
    am_gltf_mesh_node *nodes = NULL;
    double *morph_weights = NULL;
    size_t part_count = 0, node_count = 0;
    am_rig *rig = NULL;
    am_creature *cr = NULL;
    am_bind_result *br = NULL;
    float *colors = NULL;
    double M[16];
    am_mat4_identity(M);
    am_status s = ami_bind_load(model, z_up, scale, &mesh, &om, &look, &gm, &err);
    if (s == AM_OK && creature_path) s = am_creature_load(creature_path, &cr, &err);
    if (s == AM_OK && rig_path) s = am_rig_load(rig_path, &rig, &err);
    double size_before = 0, size_after = 0;
    if (s == AM_OK) {
        size_before = am_body_size_f32(mesh->positions, mesh->vertex_count, NULL);
        if (cr && cr->has_prep && (s = am_prep_transform(mesh, &cr->prep, M, &err)) == AM_OK)
        {
            am_mesh_transform(mesh, M);
            if (gm) ami_bind_prep_look(gm, M);
            if (om && om->normals) ami_bind_turn_normals(om->normals, mesh->vertex_count, 3, M);
        }
        if (s != AM_OK) am_error_set_file(&err, model);
        size_after = am_body_size_f32(mesh->positions, mesh->vertex_count, NULL);
        if (s == AM_OK) am_cli_body_size("bind", model, size_after);
    }
    if (s == AM_OK && rig) {
        am_bind_opts bo = {.flags = rigid || (cr && cr->rigid) ? AM_BIND_RIGID : 0u, .ctx = am_cli_context()};
        /* an OBJ heats on its positions (its corners' copies would only weld back into them) */
        am_mesh on_positions = om ? (am_mesh){om->position_count, mesh->triangle_count, mesh->positions,
                                              om->position_triangles}
                                  : *mesh;
        s = am_bind_weights(&on_positions, rig, &bo, &br, &err);
        if (s == AM_OK) am_cli_print_warnings("bind", &br->warnings);
        /* what the bind refuses is the mesh's fault, or the rig's when they do not overlap */
        else if (err.code != AM_E_NOMEM && !err.file[0])
            snprintf(err.file, sizeof err.file, "%s", err.code == AM_E_VALUE && strstr(err.info, "overlap") ? rig_path : model);
    }
    if (s == AM_OK && br && cr && cr->paint_count) {
        colors = am_alloc_array(mesh->vertex_count * 4, sizeof *colors);
        s = colors ? am_bind_paint(rig, cr, br, colors, &err) : AM_FAIL(&err, AM_E_NOMEM, "paint");
        if (s != AM_OK && !err.file[0]) snprintf(err.file, sizeof err.file, "%s", creature_path);
    }
    if (s == AM_OK && om && br) s = ami_bind_obj_spread(om, br, &colors, &err);
    if (s == AM_OK && rig && gm && gm->part_count)
        s = ami_bind_nodes(look, gm, &parts, &part_count, &nodes, &node_count, &morph_weights, &err);
    if (s == AM_OK && rig) {
        am_gltf_mesh_in mi = {.vertex_count = mesh->vertex_count, .positions = mesh->positions,
                              .triangle_count = mesh->triangle_count, .triangles = mesh->triangles,
                              .influences = 4, .bone_index = br->bone_index, .weights = br->weight,
                              .colors = colors, .normals = gm ? gm->normals : NULL,
                              .texcoords = gm ? gm->texcoords : NULL, .texcoords1 = gm ? gm->texcoords1 : NULL,
                              .tangents = gm ? gm->tangents : NULL, .look = look,
                              .part_count = part_count, .parts = parts, .node_count = node_count, .nodes = nodes,
                              .base_colors = gm ? gm->colors : NULL,
                              .texcoord_extra_count = gm ? gm->texcoord_extra_count : 0,
                              .texcoords_extra = gm ? (const float *const *)gm->texcoords_extra : NULL};
        if (om) {
            mi.normals = om->normals, mi.texcoords = om->texcoords, mi.look = om->look;
            mi.part_count = om->part_count, mi.parts = om->parts;
        }
        am_gltf_export ex = {.rig = rig, .mesh = &mi, .ctx = am_cli_context()};
        s = am_gltf_write(&ex, am_outset_path(set, NULL), &err);
    } else if (s == AM_OK) {
        s = ami_bind_write_obj(look, gm, om, z_up, set, set_names[0], set_names[1], &err);
    }
    if (s != AM_OK) {
        rc = am_cli_fail_out("bind", set, &err);
        goto done;
    }
    if ((rc = am_cli_commit("bind", set)) != 0) goto done;
    am_buf out = {0};
    ami_jw w;
    ami_jw_begin(&w, &out, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "model", model);
    ami_jw_string(&w, "output", out_path);
    ami_jw_int(&w, "vertices", (int64_t)mesh->vertex_count);
    ami_jw_int(&w, "triangles", (int64_t)mesh->triangle_count);
    if (node_count) {
        size_t targets = 0;
        for (size_t n = 0; n < node_count; n++) targets += nodes[n].target_count;
        ami_jw_int(&w, "mesh_nodes", (int64_t)node_count);
        ami_jw_int(&w, "morph_targets", (int64_t)targets);
        ami_jw_bool(&w, "own_colors", gm && gm->colors);
    }
    ami_jw_prep(&w, cr, M, size_before, size_after);
    if (br) {
        ami_jw_object(&w, "weights");
        ami_jw_string(&w, "method", rigid || (cr && cr->rigid) ? "rigid" : "bone heat");
        ami_jw_int(&w, "deforming_bones", (int64_t)br->deform_bones);
        ami_jw_int(&w, "welded_vertices", (int64_t)br->welded_count);
        ami_jw_int(&w, "pieces", (int64_t)br->component_count);
        ami_jw_int(&w, "blind_vertices", (int64_t)br->blind_count);
        ami_jw_int(&w, "pieces_heated_by_nearest", (int64_t)br->fallback_count);
        ami_jw_number(&w, "seconds", br->seconds_visibility + br->seconds_solve);
        ami_jw_close(&w);
        ami_jw_bool(&w, "paint", colors != NULL);
    }
    ami_jw_close(&w);
    if (ami_jw_finish(&w, &err) == AM_OK) fwrite(out.data, 1, out.len, stdout);
    am_buf_free(&out);
    am_cli_log("wrote %s: %zu vertices%s%s", out_path, mesh->vertex_count, rig ? ", skinned" : " (prepared)",
               colors ? ", limb paint in COLOR_0" : "");
done:
    am_free(colors);
    am_bind_result_free(br);
    am_creature_free(cr);
    am_rig_free(rig);
    am_free(parts);
    am_free(nodes);
    am_free(morph_weights);
    if (gm) am_gltf_meshes_free(gm);
    else if (om) am_obj_model_free(om);
    else am_mesh_free(mesh);
    am_gltf_free(look);
    return rc;
}
