/* `anymove dataset --rig R --mesh rigged.glb --count N -o DIR`: training images with truth. */
#include <string.h>

#include "core/internal.h"
#include "scene.h"

static void ami_dataset_help(FILE *out)
{
    fprintf(out,
            "usage: anymove dataset --rig RIG.json [--mesh RIGGED.glb] --count N -o DIR\n"
            "                       [--creature CREATURE.json] [--seed S] [--share F] [--quiet]\n\n"
            "Renders N random poses inside the rig's limits (angles from the middle share F of each\n"
            "range, 1 by default; free axes +-45 deg; a random turn of up to 20 deg; standing on the\n"
            "ground) in both views of the layout, with the wall, floor and light varied around the\n"
            "studio's: DIR/<i>_front.png, DIR/<i>_side.png and DIR/<i>_meta.json (joint names, true\n"
            "joints in metres, front_uv and side_uv in layout pixels of SPEC 3, Euler angles, the\n"
            "backdrop). Training data for any keypoint reader (DeepLabCut, SLEAP, the seed's).\n"
            "Without --mesh: the model rig.json records, else bone shapes.\n\n"
            "examples:\n"
            "  anymove dataset --rig examples/creatures/wolf/rig.json --count 3 --seed 1 -o out/wolf_dataset\n");
}

int am_cmd_dataset(int argc, char **argv)
{
    const char *rig_path = NULL, *out = NULL, *cr_path = NULL, *v;
    am_cli_scene_opts so = {0};
    long count = 0, seed = 0;
    double share = 0;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_dataset_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--mesh"))) {
            so.mesh = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--count"))) {
            if (!am_cli_long("dataset", "--count", v, &count)) return 2;
            if (count < 1 || count > 1000000) return am_cli_usage("dataset", "--count must be in 1..1000000");
        } else if ((v = am_cli_value(argc, argv, &i, "--seed"))) {
            if (!am_cli_long("dataset", "--seed", v, &seed)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--share"))) {
            if (!am_cli_double("dataset", "--share", v, &share)) return 2;
            if (!(share > 0 && share <= 1)) return am_cli_usage("dataset", "--share must be in (0, 1]");
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else {
            return am_cli_usage("dataset", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!rig_path) return am_cli_usage("dataset", "missing --rig RIG.json");
    if (!count) return am_cli_usage("dataset", "missing --count N");
    if (!out) return am_cli_usage("dataset", "missing -o DIR");
    if (!am_cli_out_dir("dataset", out, "<i>_front.png, <i>_side.png, <i>_meta.json")) return 2;
    size_t n = (size_t)count * 3;
    char **names = am_alloc_array(n, sizeof *names);
    size_t k = 0;
    for (; names && k < n; k++) {
        names[k] = am_alloc(48);
        if (!names[k]) break;
        static const char *const kind[3] = {"front.png", "side.png", "meta.json"};
        snprintf(names[k], 48, "%zu_%s", k / 3, kind[k % 3]);
    }
    am_outset *set = NULL;
    int rc = names && k == n ? am_cli_outputs("dataset", out, (const char *const *)names, n, &set) : 1;
    am_error err = {0};
    am_cli_scene sc = {0};
    am_creature *cr = NULL;
    am_paint paint = {0};
    if (!rc) {
        am_status s = am_cli_scene_load("dataset", rig_path, &so, &sc, &err);
        if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
        if (s == AM_OK && cr_path) s = am_paint_load(cr_path, sc.rig, &paint, &err);
        if (s == AM_OK && paint.painted_count) am_render_model_paint(sc.model, paint.colour, paint.painted);
        char staged[4096];
        snprintf(staged, sizeof staged, "%s", am_outset_path(set, names[0]));
        char *slash = strrchr(staged, '/');
        if (slash) *slash = '\0';
        am_dataset_job job = {.model = sc.model, .layout = cr ? &cr->layout : NULL, .count = (size_t)count,
                              .seed = (uint64_t)seed, .limit_share = share, .dir = staged, .ctx = am_cli_context()};
        if (s == AM_OK) s = am_dataset_generate(&job, &err);
        if (s != AM_OK) rc = am_cli_fail_out("dataset", set, &err);
        else if ((rc = am_cli_commit("dataset", set)) == 0) am_cli_log("dataset: %ld poses in %s", count, out);
    }
    for (size_t i = 0; i < k; i++) am_free(names[i]);
    am_free(names);
    am_paint_free(&paint);
    am_creature_free(cr);
    am_cli_scene_free(&sc);
    return rc;
}
