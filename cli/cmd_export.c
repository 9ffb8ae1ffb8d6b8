#include <string.h>

#include "cli.h"
#include "core/internal.h"

static void ami_export_help(FILE *out)
{
    fprintf(out,
            "usage: anymove export MOTION.json --rig RIG.json -o OUT.glb [--quiet]\n\n"
            "Writes a glTF 2.0 binary (.glb) with one joint node per rig bone, a skin, a\n"
            "generated bone-shape mesh so any viewer shows the skeleton, and the motion as one\n"
            "animation (LINEAR translation + rotation keys at t = frame / fps). Axes are\n"
            "converted from Z up to glTF's Y up (SPEC 4.5). The file is written atomically:\n"
            "on failure no output is left behind.\n\n"
            "options:\n"
            "  --rig RIG.json   the rig the motion animates (required)\n"
            "  -o, --out FILE   output .glb (required)\n"
            "  --quiet, -q      no progress lines on stderr\n");
}

/* The clip is named after the motion file ("walk.json" -> "walk") so viewers list it usefully. */
static void ami_clip_name(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) n = (size_t)(dot - base);
    if (n == 0) {
        snprintf(buf, size, "clip0");
        return;
    }
    if (n >= size) n = size - 1;
    memcpy(buf, base, n);
    buf[n] = '\0';
}

int am_cmd_export(int argc, char **argv)
{
    const char *motion_path = NULL, *rig_path = NULL, *out_path = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_export_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) ||
                   (v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("export", "unknown option or missing value '%s'", argv[i]);
        } else if (!motion_path) {
            motion_path = argv[i];
        } else {
            return am_cli_usage("export", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!motion_path) return am_cli_usage("export", "missing MOTION.json");
    if (!rig_path) return am_cli_usage("export", "missing --rig RIG.json");
    if (!out_path) return am_cli_usage("export", "missing -o OUT.glb");

    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    int rc = 0;
    double t0 = am_now();
    if (am_rig_load(rig_path, &rig, &err) != AM_OK ||
        am_motion_load(motion_path, rig, &mo, &err) != AM_OK) {
        rc = am_cli_fail("export", &err);
        goto done;
    }
    char name[128];
    ami_clip_name(motion_path, name, sizeof name);
    const am_motion *clips[1] = {mo};
    const char *names[1] = {name};
    am_warning_list w = {0};
    am_gltf_export ex = {.rig = rig, .clip_count = 1, .clips = clips, .clip_names = names,
                         .warnings = &w, .ctx = am_cli_context()};
    am_status ws = am_gltf_write(&ex, out_path, &err);
    am_cli_print_warnings("export", &w);
    am_warning_list_free(&w);
    if (ws != AM_OK) {
        /* Writer errors about the motion's content name the motion, not the output. */
        if (err.code != AM_E_WRITE && err.code != AM_E_NOMEM && err.code != AM_E_LIMIT)
            snprintf(err.file, sizeof err.file, "%s", motion_path);
        rc = am_cli_fail("export", &err);
        goto done;
    }
    am_cli_stage_end(t0, "export");
    am_cli_log("wrote %s: %zu bones, %zu frames at %g fps", out_path, rig->bone_count,
           mo->frame_count, mo->fps);
done:
    am_motion_free(mo);
    am_rig_free(rig);
    return rc;
}
