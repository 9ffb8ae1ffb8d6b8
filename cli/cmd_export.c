/* `anymove export MOTION.json... --rig RIG.json -o OUT.glb|OUT.bvh`: motions of a rig as an
 * animated skeleton. */
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/internal.h"

static void ami_export_help(FILE *out)
{
    fprintf(out,
            "usage: anymove export MOTION.json [MOTION.json...] --rig RIG.json -o OUT.glb|OUT.bvh\n"
            "                      [--mesh MODEL.glb | --no-mesh] [--names A,B,...] [--allow-partial]\n"
            "                      [--quiet]\n\n"
            "Writes the motions of a rig; the extension of OUT picks the format. .glb: glTF 2.0\n"
            "binary with every motion as a named clip (LINEAR keys at t = frame / fps; axes\n"
            "converted from Z up to glTF's Y up, SPEC 4.5). With a model (--mesh, or the one\n"
            "`convert MODEL.glb` recorded in rig.json) it is that character, its meshes, materials,\n"
            "textures and skin kept, driven by the clips; else one joint node per rig bone, a skin\n"
            "and a generated bone-shape mesh so any viewer shows the skeleton. .bvh: one motion,\n"
            "Y up. Nothing is left behind on failure.\n\n"
            "options:\n"
            "  --rig RIG.json   the rig the motions animate (required)\n"
            "  -o, --out FILE   output .glb or .bvh (required)\n"
            "  --mesh MODEL     the skinned glTF whose skeleton RIG is (convert made RIG from it);\n"
            "                   default: the model rig.json records, when it is there\n"
            "  --no-mesh        bone shapes even when rig.json records a model\n"
            "  --names A,B      clip names, one per motion (default: the file names, 'walk'\n"
            "                   for walk.json)\n"
            "  --allow-partial  accept a motion that leaves rig bones out (they are held at rest);\n"
            "                   without it such a motion is refused\n"
            "  --quiet, -q      no progress on stderr\n\n"
            "examples:\n"
            "  anymove export examples/walker/walk.json --rig examples/walker/rig.json -o out/walk.glb\n"
            "  anymove export examples/walker/walk.json --rig examples/walker/rig.json -o out/walk.bvh\n"
            "  anymove convert ../shared/data/gltf/quaternius/Fox.glb --clip Walk -o out/qfox_walk\n"
            "  anymove convert ../shared/data/gltf/quaternius/Fox.glb --clip Gallop -o out/qfox_gallop\n"
            "  anymove export out/qfox_walk/motion.json out/qfox_gallop/motion.json --rig out/qfox_walk/rig.json \\\n"
            "                 --names walk,gallop -o out/qfox.glb\n"
            "  anymove export out/qfox_walk/motion.json --rig out/qfox_walk/rig.json \\\n"
            "                 --mesh ../shared/data/gltf/quaternius/Fox.glb -o out/qfox_walk.glb\n");
}

/* A clip is named after its motion file ("walk.json" -> "walk") so viewers list it usefully. */
static void ami_clip_name(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) n = (size_t)(dot - base);
    if (n >= size) n = size - 1;
    memcpy(buf, base, n);
    buf[n] = '\0';
    if (n == 0) snprintf(buf, size, "clip");
}

/* Clip names: --names split at commas, or the file names; repeats get "_2", "_3"... */
static bool ami_clip_names(const char *list, char *const *paths, size_t count, char (*names)[128])
{
    for (size_t i = 0; i < count; i++) {
        if (list) {
            const char *comma = strchr(list, ',');
            size_t n = comma ? (size_t)(comma - list) : strlen(list);
            if (n == 0 || n >= 128) return false;
            memcpy(names[i], list, n);
            names[i][n] = '\0';
            list = comma ? comma + 1 : NULL;
            if (!list && i + 1 < count) return false;
        } else {
            ami_clip_name(paths[i], names[i], 120);
        }
    }
    if (list) return false;
    for (size_t i = 1; i < count; i++) {
        char base[128];
        memcpy(base, names[i], sizeof base);
        for (int k = 2;; k++) {
            bool clash = false;
            for (size_t j = 0; j < i && !clash; j++) clash = strcmp(names[i], names[j]) == 0;
            if (!clash) break;
            snprintf(names[i], 128, "%.100s_%d", base, k);
        }
    }
    return true;
}

/* A motion must animate every bone of the rig, unless --allow-partial says to hold the others
 * at rest (then it says so). */
static am_status ami_check_cover(const char *path, const char *rig_path, const am_rig *rig, bool allow,
                                 am_error *err)
{
    am_motion *raw = NULL;
    AMI_TRY(am_motion_load(path, NULL, &raw, err));
    uint8_t *missing = am_alloc(rig->bone_count ? rig->bone_count : 1);
    if (!missing) {
        am_motion_free(raw);
        return AM_FAIL_AT(err, AM_E_NOMEM, path, 0, 0, "bones");
    }
    size_t n = am_motion_uncovered(raw, rig, missing);
    am_motion_free(raw);
    char list[160] = "";
    size_t used = 0, shown = 0;
    for (size_t b = 0; b < rig->bone_count && used + 40 < sizeof list; b++)
        if (missing[b]) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", shown++ ? ", " : "", rig->bone_names[b]);
            if (w > 0) used += (size_t)w < sizeof list - used ? (size_t)w : sizeof list - used - 1;
        }
    if (shown < n && used + 5 < sizeof list) snprintf(list + used, sizeof list - used, ", ...");
    am_free(missing);
    if (n == 0) return AM_OK;
    if (!allow)
        return AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0,
                          "animates %zu of the %zu bones of %s; missing %s (--allow-partial holds them at rest)",
                          rig->bone_count - n, rig->bone_count, rig_path, list);
    am_cli_warn("export", "%s animates %zu of the %zu bones of %s; %s held at rest (--allow-partial)", path,
                rig->bone_count - n, rig->bone_count, rig_path, list);
    return AM_OK;
}

/* The character to drive: --mesh, else the model rig.json records (when it is still there). */
static am_status ami_load_model(const char *mesh_path, const am_rig *rig, const char *rig_path, am_gltf **out,
                                am_error *err)
{
    const char *path = mesh_path ? mesh_path : rig->model;
    if (!path) return AM_OK;
    struct stat st;
    if (!mesh_path && stat(path, &st) != 0) {
        am_cli_warn("export", "%s records the model %s, which is not there: bone shapes (--mesh MODEL.glb)", rig_path,
                    path);
        return AM_OK;
    }
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE, .ctx = am_cli_context()};
    AMI_TRY(am_gltf_load(path, &keep, out, err));
    am_cli_print_warnings("export", &(*out)->warnings);
    am_cli_log("export: the character of %s%s", path, mesh_path ? "" : " (recorded in rig.json; --no-mesh for bone shapes)");
    return AM_OK;
}

int am_cmd_export(int argc, char **argv)
{
    const char *rig_path = NULL, *out_path = NULL, *names_arg = NULL, *mesh_path = NULL, *v;
    bool allow_partial = false, no_mesh = false;
    char **paths = am_alloc_array((size_t)argc, sizeof *paths);
    size_t count = 0;
    if (!paths) return am_cli_usage("export", "too many arguments");
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_export_help(stdout);
            am_free(paths);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (am_cli_flag(argv[i], "--allow-partial")) {
            allow_partial = true;
        } else if (am_cli_flag(argv[i], "--no-mesh")) {
            no_mesh = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--mesh"))) {
            mesh_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--names"))) {
            names_arg = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if (argv[i][0] == '-') {
            am_free(paths);
            return am_cli_usage("export", "unknown option or missing value '%s'", argv[i]);
        } else {
            paths[count++] = argv[i];
        }
    }
    int rc = 0;
    char (*names)[128] = NULL;
    am_cli_format fmt = AM_CLI_FMT_NONE;
    if (!count) rc = am_cli_usage("export", "missing MOTION.json");
    else if (!rig_path) rc = am_cli_usage("export", "missing --rig RIG.json");
    else if (!out_path) rc = am_cli_usage("export", "missing -o OUT.glb or OUT.bvh");
    else if ((fmt = am_cli_out_file("export", out_path, AM_CLI_FMT(AM_CLI_FMT_GLB) | AM_CLI_FMT(AM_CLI_FMT_BVH))) ==
             AM_CLI_FMT_NONE)
        rc = 2;
    else if (fmt == AM_CLI_FMT_BVH && count > 1)
        rc = am_cli_usage("export", "a .bvh holds one motion; write %zu motions to a .glb", count);
    else if (fmt == AM_CLI_FMT_BVH && mesh_path)
        rc = am_cli_usage("export", "--mesh goes with a .glb: a .bvh has no mesh");
    else if (mesh_path && no_mesh)
        rc = am_cli_usage("export", "--mesh and --no-mesh exclude each other");
    else if (!(names = am_alloc_array(count, sizeof *names)))
        rc = am_cli_usage("export", "too many motions");
    else if (!ami_clip_names(names_arg, paths, count, names))
        rc = am_cli_usage("export", "--names wants %zu non-empty names separated by commas, got '%s'", count,
                          names_arg);
    am_outset *set = NULL;
    if (!rc) rc = am_cli_outputs("export", out_path, NULL, 0, &set);
    if (rc) {
        am_free(names);
        am_free(paths);
        return rc;
    }

    am_error err = {0};
    am_rig *rig = NULL;
    am_motion **mo = am_alloc_array(count, sizeof *mo);
    const char **clip_names = am_alloc_array(count, sizeof *clip_names);
    am_status s = mo && clip_names ? am_rig_load(rig_path, &rig, &err) : AM_FAIL(&err, AM_E_NOMEM, "motions");
    for (size_t i = 0; s == AM_OK && i < count; i++) {
        s = am_motion_load(paths[i], rig, &mo[i], &err); /* names it cannot bind come first */
        if (s == AM_OK) s = ami_check_cover(paths[i], rig_path, rig, allow_partial, &err);
        clip_names[i] = names[i];
    }
    am_gltf *model = NULL;
    if (s == AM_OK && fmt == AM_CLI_FMT_GLB && !no_mesh) s = ami_load_model(mesh_path, rig, rig_path, &model, &err);
    bool writing = s == AM_OK;
    if (writing) s = am_cli_write_animation(fmt, rig, (const am_motion *const *)mo, clip_names, count, model,
                                            am_outset_path(set, NULL), &err);
    if (s != AM_OK && writing && err.code != AM_E_WRITE && err.code != AM_E_NOMEM) {
        /* The writer refusing the content is the inputs' fault: the model the rig does not fit
         * ("the rig is not the skeleton of the source model"), else the motion. */
        const char *blame = model ? (mesh_path ? mesh_path : rig->model) : count == 1 ? paths[0] : rig_path;
        snprintf(err.file, sizeof err.file, "%s", blame);
    }
    am_gltf_free(model);
    if (s != AM_OK) {
        rc = am_cli_fail_out("export", set, &err);
    } else if ((rc = am_cli_commit("export", set)) == 0) {
        char f[32];
        am_cli_log("wrote %s: %zu bones, %zu clip%s (%s: %zu frames at %s fps)", out_path, rig->bone_count, count,
                   count > 1 ? "s" : "", clip_names[0], mo[0]->frame_count, am_cli_fps(mo[0]->fps, f));
    }
    for (size_t i = 0; mo && i < count; i++) am_motion_free(mo[i]);
    am_free(mo);
    am_free(clip_names);
    am_free(names);
    am_free(paths);
    am_rig_free(rig);
    return rc;
}
