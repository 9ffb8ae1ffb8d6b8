/* `anymove convert`: glTF / BVH -> rig.json + motion.json, and motion.json + rig -> BVH / glTF. */
#include <stdlib.h>
#include <string.h>

#include "anymove/bvh.h"
#include "cli.h"
#include "core/internal.h"

static void ami_convert_help(FILE *out)
{
    fprintf(out,
            "usage: anymove convert MODEL.glb|MODEL.gltf [--clip NAME|INDEX] [--fps F] -o DIR\n"
            "       anymove convert MODEL.glb --list-clips\n"
            "       anymove convert CLIP.bvh [--up y|z] [--scale S] -o DIR\n"
            "       anymove convert motion.json --rig rig.json [--up y|z] [--scale S] -o OUT.bvh|OUT.glb\n\n"
            "glTF: the rig of the first skin (helper bones that carry no skin weight are listed\n"
            "under \"helpers\" in rig.json) and one clip sampled at --fps (default 30).\n"
            "BVH: one bone per joint (docs/bvh.md); --up z reads a Z-up file (default y; BVH is\n"
            "always written Y up); --scale is metres per file unit (default 1).\n"
            "Writes DIR/rig.json and DIR/motion.json (quat, euler and joints), or OUT.bvh / OUT.glb.\n");
}

static bool ami_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m) return false;
    for (size_t i = 0; i < m; i++) {
        char a = s[n - m + i], b = suffix[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

static am_status ami_write_dir(const char *dir, const am_rig *rig, am_motion *mo, am_error *err)
{
    char path[4096];
    AMI_TRY(am_cli_mkdir_p(dir, err));
    snprintf(path, sizeof path, "%s/rig.json", dir);
    AMI_TRY(am_rig_write(rig, path, err));
    if (!mo) return AM_OK;
    if (!mo->joints) AMI_TRY(am_motion_compute_joints(mo, rig, err));
    snprintf(path, sizeof path, "%s/motion.json", dir);
    AMI_TRY(am_motion_write(mo, path, err));
    am_cli_log("wrote %s/rig.json (%zu bones) and motion.json (%zu frames)", dir, rig->bone_count,
           mo->frame_count);
    return AM_OK;
}

int am_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *rig_path = NULL, *clip = NULL, *v;
    double fps = 30, scale = 0;
    bool list = false;
    am_bvh_axes axes = AM_BVH_AXES_Y_UP;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_convert_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            clip = v;
        } else if (am_cli_flag(argv[i], "--list-clips")) {
            list = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("convert", "--fps", v, &fps)) return 2;
            if (!(fps > 0)) return am_cli_usage("convert", "--fps must be positive");
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_double("convert", "--scale", v, &scale)) return 2;
            if (!(scale > 0)) return am_cli_usage("convert", "--scale must be positive");
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcmp(v, "y") == 0 || strcmp(v, "Y") == 0) axes = AM_BVH_AXES_Y_UP;
            else if (strcmp(v, "z") == 0 || strcmp(v, "Z") == 0) axes = AM_BVH_AXES_Z_UP;
            else return am_cli_usage("convert", "--up is y or z, got '%s'", v);
        } else if (argv[i][0] == '-') {
            return am_cli_usage("convert", "unknown option '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("convert", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in) return am_cli_usage("convert", "missing input file");
    if (!out && !list) return am_cli_usage("convert", "missing -o");

    am_error err = {0};
    am_gltf *doc = NULL;
    am_bvh *bvh = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    int rc = 0;
    am_bvh_opts bo = {.axes = axes, .scale = scale};
    if (ami_ends_with(in, ".glb") || ami_ends_with(in, ".gltf")) {
        if (am_gltf_load(in, NULL, &doc, &err) != AM_OK) goto fail;
        if (list) {
            for (size_t a = 0; a < doc->animation_count; a++)
                printf("%zu\t%s\t%.3f s\n", a, doc->animations[a].name ? doc->animations[a].name : "",
                       doc->animations[a].t_max - doc->animations[a].t_min);
            goto done;
        }
        if (am_rig_from_gltf(doc, -1, &rig, &err) != AM_OK) goto fail;
        int anim = doc->animation_count ? 0 : -1;
        if (clip) {
            anim = -2;
            for (size_t a = 0; a < doc->animation_count; a++)
                if (doc->animations[a].name) {
                    /* Blender exports "Armature|Walk": the part after '|' names the clip too */
                    const char *nm = doc->animations[a].name, *bar = strrchr(nm, '|');
                    if (strcmp(nm, clip) == 0 || (bar && strcmp(bar + 1, clip) == 0)) anim = (int)a;
                }
            char *end = NULL;
            long k = strtol(clip, &end, 10);
            if (anim == -2 && end != clip && *end == '\0' && k >= 0 && (size_t)k < doc->animation_count)
                anim = (int)k;
            if (anim == -2) {
                AM_FAIL(&err, AM_E_NAME, "%s has no clip '%s' (see --list-clips)", in, clip);
                goto fail;
            }
        }
        if (anim >= 0 && am_motion_from_gltf(doc, -1, rig, anim, fps, &mo, &err) != AM_OK) goto fail;
        if (ami_write_dir(out, rig, mo, &err) != AM_OK) goto fail;
    } else if (ami_ends_with(in, ".bvh")) {
        if (am_bvh_load(in, NULL, &bvh, &err) != AM_OK || am_rig_from_bvh(bvh, &bo, &rig, &err) != AM_OK ||
            am_motion_from_bvh(bvh, rig, &bo, &mo, &err) != AM_OK)
            goto fail;
        if (ami_write_dir(out, rig, mo, &err) != AM_OK) goto fail;
    } else {
        if (!rig_path) {
            rc = am_cli_usage("convert", "a motion needs --rig rig.json");
            goto done;
        }
        if (am_rig_load(rig_path, &rig, &err) != AM_OK || am_motion_load(in, rig, &mo, &err) != AM_OK)
            goto fail;
        if (ami_ends_with(out, ".bvh")) {
            if (am_bvh_from_motion(rig, mo, &bo, &bvh, &err) != AM_OK || am_bvh_write(bvh, out, &err) != AM_OK)
                goto fail;
        } else if (ami_ends_with(out, ".glb")) {
            const am_motion *clips[1] = {mo};
            am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips};
            if (am_gltf_write(&ex, out, &err) != AM_OK) goto fail;
        } else {
            rc = am_cli_usage("convert", "the output must end in .bvh or .glb, got '%s'", out);
            goto done;
        }
        am_cli_log("wrote %s (%zu frames)", out, mo->frame_count);
    }
    goto done;
fail:
    rc = am_cli_fail("convert", &err);
done:
    am_motion_free(mo);
    am_rig_free(rig);
    am_bvh_free(bvh);
    am_gltf_free(doc);
    return rc;
}
