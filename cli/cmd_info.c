#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "anymove/bvh.h"
#include "anymove/metrics.h"
#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_info_help(FILE *out)
{
    fprintf(out,
            "usage: anymove info FILE [--quiet]\n\n"
            "Shows what is in a file anymove reads:\n"
            "  .npz          every array with its dtype and shape (and scalar values)\n"
            "  rig.json      bones (parents-first) with parent, length and limits\n"
            "  motion.json   frames, fps, duration, bones and joints\n"
            "  creature.json layout, feet and contacts\n"
            "  .glb/.gltf    nodes, skins, meshes and animations\n"
            "  .bvh          joints, channels, frames and frame time\n"
            "The kind is found from the extension and, for .json, from the keys present. Rigs,\n"
            "motions, skinned models and BVH also show their body size (SPEC 5), with a warning\n"
            "when it is implausible in metres (over 20 m or under 5 cm).\n\n"
            "examples:\n"
            "  anymove info examples/walker/rig.json\n"
            "  anymove info examples/walker/walk.json\n"
            "  anymove info examples/tracks/grison_walk.tracks.npz\n"
            "  anymove info ../shared/data/gltf/khronos_fox/Fox.glb\n");
}

static void ami_print_shape(const am_array *a)
{
    printf("[");
    for (int d = 0; d < a->ndim; d++) printf("%s%zu", d ? ", " : "", a->shape[d]);
    printf("]");
}

static int ami_info_npz(const char *path)
{
    am_error err = {0};
    am_npz *z = NULL;
    if (am_npz_load(path, NULL, &z, &err) != AM_OK) return am_cli_fail("info", &err);
    am_cli_print_warnings("info", &z->warnings);
    printf("%s: npz archive, %zu arrays\n", path, z->count);
    for (size_t i = 0; i < z->count; i++) {
        const am_array *a = &z->arrays[i];
        printf("  %-16s %-8s ", a->name, am_dtype_name(a->dtype));
        ami_print_shape(a);
        double v;
        if (a->count == 1 && a->dtype != AM_DTYPE_STR && am_array_scalar(a, &v, NULL) == AM_OK)
            printf("  = %.9g", v);
        if (a->dtype == AM_DTYPE_STR && a->count > 0) {
            printf("  \"%s\"", a->strings[0]);
            if (a->count > 1) printf(" ... (%zu strings)", a->count);
        }
        if (a->was_fortran) printf("  (stored Fortran order)");
        if (a->was_big_endian) printf("  (stored big-endian)");
        printf("\n");
    }
    am_npz_free(z);
    return 0;
}

static int ami_info_rig(const char *path)
{
    am_error err = {0};
    am_rig *rig = NULL;
    if (am_rig_load(path, &rig, &err) != AM_OK) return am_cli_fail("info", &err);
    printf("%s: rig%s%s, %zu bones, %zu joints\n", path, rig->name ? " " : "",
           rig->name ? rig->name : "", rig->bone_count, rig->joint_count);
    for (size_t b = 0; b < rig->bone_count; b++) {
        printf("  %-20s parent %-20s length %.4f m", rig->bone_names[b],
               rig->parent[b] < 0 ? "-" : rig->bone_names[rig->parent[b]], rig->length[b]);
        if (rig->has_limit[b]) {
            const double *l = rig->limits + b * 6;
            printf("  limits X[%g, %g] Y[%g, %g] Z[%g, %g] deg", AM_DEG(l[0]), AM_DEG(l[1]),
                   AM_DEG(l[2]), AM_DEG(l[3]), AM_DEG(l[4]), AM_DEG(l[5]));
        }
        if (rig->is_helper[b]) printf("  (helper)");
        printf("\n");
    }
    printf("  body size %.4g m\n", am_cli_rig_size(rig));
    am_cli_units_check("info", path, am_cli_rig_size(rig));
    am_rig_free(rig);
    return 0;
}

static int ami_info_motion(const char *path)
{
    am_error err = {0};
    am_motion *mo = NULL;
    if (am_motion_load(path, NULL, &mo, &err) != AM_OK) return am_cli_fail("info", &err);
    char f[32];
    printf("%s: motion, %zu frames at %s fps (%.3f s), %zu bones, %zu joints%s\n", path,
           mo->frame_count, am_cli_fps(mo->fps, f), (double)(mo->frame_count ? mo->frame_count - 1 : 0) / mo->fps,
           mo->bone_count, mo->joint_count, mo->joints ? "" : " (no joints)");
    printf("  bones:");
    for (size_t b = 0; b < mo->bone_count; b++) printf(" %s", mo->bone_names[b]);
    printf("\n");
    if (mo->extra_json) printf("  other fields: %s\n", mo->extra_json);
    if (mo->joints && mo->joint_count) {
        double size = am_body_size(mo->joints, mo->joint_count, NULL);
        printf("  body size %.4g m (frame 0)\n", size);
        am_cli_units_check("info", path, size);
    }
    am_motion_free(mo);
    return 0;
}

static int ami_info_creature(const char *path)
{
    am_error err = {0};
    am_creature *c = NULL;
    if (am_creature_load(path, &c, &err) != AM_OK) return am_cli_fail("info", &err);
    const am_layout *l = &c->layout;
    printf("%s: creature %s\n  layout W_FRONT %g W_SIDE %g GROUND_V %g M_PER_PX %g FRONT_CX %g "
           "SIDE_CX %g\n  feet:",
           path, c->name ? c->name : "(unnamed)", l->w_front, l->w_side, l->ground_v, l->m_per_px,
           l->front_cx, l->side_cx);
    for (size_t i = 0; i < c->feet_count; i++) printf(" %s", c->feet[i]);
    printf("\n  contacts:");
    for (size_t i = 0; i < c->contact_count; i++) printf(" %s", c->contacts[i]);
    printf("\n");
    am_creature_free(c);
    return 0;
}

static int ami_info_gltf(const char *path)
{
    am_error err = {0};
    am_gltf *doc = NULL;
    if (am_gltf_load(path, NULL, &doc, &err) != AM_OK) return am_cli_fail("info", &err);
    am_cli_print_warnings("info", &doc->warnings);
    printf("%s: glTF 2.0%s%s, %zu nodes, %zu skins, %zu meshes, %zu animations\n", path,
           doc->generator ? " by " : "", doc->generator ? doc->generator : "", doc->node_count,
           doc->skin_count, doc->mesh_count, doc->animation_count);
    for (size_t s = 0; s < doc->skin_count; s++) {
        const am_gltf_skin *sk = &doc->skins[s];
        printf("  skin %zu%s%s: %zu joints:", s, sk->name ? " " : "", sk->name ? sk->name : "",
               sk->joint_count);
        for (size_t j = 0; j < sk->joint_count && j < 64; j++) {
            const char *n = doc->nodes[sk->joints[j]].name;
            printf(" %s", n ? n : "(unnamed)");
        }
        printf("%s\n", sk->joint_count > 64 ? " ..." : "");
    }
    for (size_t m = 0; m < doc->mesh_count; m++) {
        const am_gltf_mesh *me = &doc->meshes[m];
        size_t verts = 0, targets = 0;
        for (size_t p = 0; p < me->primitive_count; p++) {
            if (me->primitives[p].position >= 0)
                verts += doc->accessors[me->primitives[p].position].count;
            targets += me->primitives[p].target_count;
        }
        printf("  mesh %zu%s%s: %zu primitives, %zu vertices, %zu morph targets\n", m,
               me->name ? " " : "", me->name ? me->name : "", me->primitive_count, verts, targets);
    }
    for (size_t a = 0; a < doc->animation_count; a++) {
        const am_gltf_animation *an = &doc->animations[a];
        printf("  animation %zu %s: %.3f s, %zu channels\n", a, an->name ? an->name : "(unnamed)",
               an->t_max - an->t_min, an->channel_count);
    }
    am_rig *rig = NULL;
    if (doc->skin_count && am_rig_from_gltf(doc, -1, &rig, &err) == AM_OK) {
        printf("  body size %.4g m (skin 0 at rest)\n", am_cli_rig_size(rig));
        am_cli_units_check("info", path, am_cli_rig_size(rig));
    }
    am_rig_free(rig);
    am_gltf_free(doc);
    return 0;
}

static int ami_info_bvh(const char *path)
{
    am_error err = {0};
    am_bvh *b = NULL;
    am_rig *rig = NULL;
    if (am_bvh_load(path, NULL, &b, &err) != AM_OK) return am_cli_fail("info", &err);
    am_cli_print_warnings("info", &b->warnings);
    size_t ends = 0;
    for (size_t j = 0; j < b->joint_count; j++) ends += b->joints[j].has_end;
    char f[32];
    printf("%s: BVH, %zu joints (%zu End Sites), %zu channels, %zu frames at %s fps (frame time %.9g s, %.3f s)\n",
           path, b->joint_count, ends, b->channel_count, b->frame_count, am_cli_fps(1.0 / b->frame_time, f),
           b->frame_time, (double)(b->frame_count - 1) * b->frame_time);
    printf("  rest skeleton %.4g file units across\n", am_bvh_rest_size(b));
    printf("  joints:");
    for (size_t j = 0; j < b->joint_count && j < 64; j++) printf(" %s", b->joints[j].name);
    printf("%s\n", b->joint_count > 64 ? " ..." : "");
    if (am_rig_from_bvh(b, NULL, &rig, &err) == AM_OK) {
        double lo[3], hi[3];
        for (int k = 0; k < 3; k++) lo[k] = hi[k] = rig->joint_rest[k];
        for (size_t j = 1; j < rig->joint_count; j++)
            for (int k = 0; k < 3; k++) {
                double v = rig->joint_rest[3 * j + (size_t)k];
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
            }
        /* a Z-up file read Y up lies on its back: the height says which it is */
        printf("  read Y up: %.4g wide, %.4g deep, %.4g high (file units; --up z for a Z-up file)\n", hi[0] - lo[0],
               hi[1] - lo[1], hi[2] - lo[2]);
        printf("  body size %.4g m (at 1 m per unit)\n", am_cli_rig_size(rig));
        am_cli_units_check("info", path, am_cli_rig_size(rig));
    }
    am_rig_free(rig);
    am_bvh_free(b);
    return 0;
}

static bool ami_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* A .json file is told apart by its keys: rigs have "bones" and a "joints" object, motions
 * have per-frame arrays, creatures a layout or feet. */
static int ami_info_json(const char *path)
{
    /* Through the library's parser: its budget holds for the sniffing parse too. */
    json_t *root = NULL;
    am_error err;
    if (ami_json_load_file(path, 0, &root, &err) != AM_OK) return am_cli_fail("info", &err);
    bool is_object = json_is_object(root);
    bool rig = is_object && json_is_object(json_object_get(root, "joints")) &&
               json_object_get(root, "bones");
    bool motion = is_object && (json_object_get(root, "euler") || json_object_get(root, "quat") ||
                                json_object_get(root, "trans"));
    bool creature = is_object && (json_object_get(root, "layout") || json_object_get(root, "feet"));
    json_decref(root);
    if (rig) return ami_info_rig(path);
    if (motion) return ami_info_motion(path);
    if (creature) return ami_info_creature(path);
    AM_FAIL_AT(&err, AM_E_SCHEMA, path, 0, 0,
               "not a rig.json, motion.json or creature.json (no bones/joints, euler/quat/trans, "
               "layout/feet keys)");
    return am_cli_fail("info", &err);
}

int am_cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_info_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (argv[i][0] == '-') {
            return am_cli_usage("info", "unknown option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return am_cli_usage("info", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path) return am_cli_usage("info", "missing FILE");
    if (ami_ends_with(path, ".npz")) return ami_info_npz(path);
    if (ami_ends_with(path, ".glb") || ami_ends_with(path, ".gltf")) return ami_info_gltf(path);
    if (ami_ends_with(path, ".json")) return ami_info_json(path);
    if (ami_ends_with(path, ".bvh")) return ami_info_bvh(path);
    am_error err;
    AM_FAIL_AT(&err, AM_E_FORMAT, path, 0, 0,
               "unknown file kind (expected .npz, .json, .glb, .gltf or .bvh)");
    return am_cli_fail("info", &err);
}
