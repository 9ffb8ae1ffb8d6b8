/* `anymove render SCENE -o OUT.png|OUT.mp4|DIR`: the rig (or its mesh) drawn on the studio. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "scene.h"

static void ami_render_help(FILE *out)
{
    fprintf(out,
            "usage: anymove render SCENE -o OUT.png|OUT.mp4|DIR [--motion motion.json]\n"
            "                      [--camera layout|front|side|three-quarter|CALIB.toml:NAME|CALIB.toml]\n"
            "                      [--frames A:B] [--size W H] [--creature CREATURE.json]\n"
            "                      [--mesh MODEL.glb | --no-mesh] [--clip C] [--bones] [--joints]\n"
            "                      [--fps F] [--ref] [--quiet]\n\n"
            "Draws the skinned mesh (or the bone shapes) on the studio of the seed: grey wall,\n"
            "the lighter floor band below the ground row, the divider between the views. SCENE\n"
            "is a rig.json (with --motion; else the rest pose), a .glb/.gltf, or a command's output\n"
            "folder (rig.json + motion.json, or animation.glb / rig.glb). Cameras: the layout of\n"
            "SPEC 3 (front | side on one canvas, the default), one of its orthographic views, a\n"
            "3/4 perspective camera framing the clip (creature.json \"showcase_camera\" sets\n"
            "azimuth_deg, elevation_deg, fov_deg), a camera of an anipose calibration (CALIB.toml:NAME)\n"
            "or all of them in a grid (CALIB.toml).\n"
            "-o: .mp4/.mkv/.avi (H.264, else MPEG-4) or .webm (VP9) for a video, .png for the\n"
            "first frame, a folder for frame_00000.png ...\n"
            "  --frames A:B     frames A to B-1 (A: to the end, A alone: one frame)\n"
            "  --size W H       output size; the view is scaled to fit, centred\n"
            "  --creature C     its layout and limb paint (\"paint\": [{\"colour\", \"bones\"}])\n"
            "  --bones, --joints  draw bone lines and joint discs over the mesh\n"
            "  --fps F          the video's rate (default the motion's); a glTF clip is sampled\n"
            "                   at it (default 30)\n"
            "  --ref            the reference frame: the layout at 1280 x 720, limb paint on, the\n"
            "                   rest pose (or --motion's frame --frames A), -o ref.png or a folder\n"
            "Exit code 2 on bad input, an unknown camera or an unwritable output.\n\n"
            "examples:\n"
            "  anymove render examples/walker/rig.json --motion examples/walker/walk.json -o out/walk.mp4\n"
            "  anymove render examples/walker/rig.json --motion examples/walker/walk.json --camera three-quarter \\\n"
            "                 --frames 10 -o out/walk_34.png\n"
            "  anymove render examples/creatures/wolf/rig.json --creature examples/creatures/wolf/creature.json \\\n"
            "                 --ref -o out/wolf_ref\n");
}

int am_cmd_render(int argc, char **argv)
{
    const char *scene = NULL, *out = NULL, *cr_path = NULL, *v;
    am_cli_scene_opts so = {0};
    am_render_job job = {.view = AM_VIEW_LAYOUT};
    am_calib *cal = NULL;
    bool ref = false, frames_given = false;
    unsigned flags = AM_DRAW_MESH;
    long l;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_render_help(stdout);
            am_calib_free(cal);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (am_cli_flag(argv[i], "--ref")) {
            ref = true;
        } else if (am_cli_flag(argv[i], "--bones")) {
            flags |= AM_DRAW_BONES;
        } else if (am_cli_flag(argv[i], "--joints")) {
            flags |= AM_DRAW_JOINTS;
        } else if (am_cli_flag(argv[i], "--no-mesh")) {
            so.no_mesh = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--motion"))) {
            so.motion = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--mesh"))) {
            so.mesh = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            so.clip = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--camera"))) {
            am_calib_free(cal);
            cal = NULL;
            const am_camera *cam = NULL;
            if (!am_cli_camera("render", v, &job.view, &cal, &cam, &rc)) return rc;
            job.camera = cam;
            job.cameras = cal;
        } else if ((v = am_cli_value(argc, argv, &i, "--frames"))) {
            if (!am_cli_frames("render", v, &job.first, &job.count)) goto usage;
            frames_given = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("render", "--fps", v, &job.fps)) goto usage;
            if (!(job.fps > 0 && job.fps <= 1000)) {
                am_cli_usage("render", "--fps must be in (0, 1000]");
                goto usage;
            }
        } else if (am_cli_flag(argv[i], "--size")) {
            if (i + 2 >= argc) {
                am_cli_usage("render", "--size takes a width and a height");
                goto usage;
            }
            if (!am_cli_long("render", "--size", argv[i + 1], &l)) goto usage;
            job.width = (int)l;
            if (l < 16 || l > 8192 || !am_cli_long("render", "--size", argv[i + 2], &l) || l < 16 || l > 8192) {
                am_cli_usage("render", "--size W H: each in 16..8192");
                goto usage;
            }
            job.height = (int)l;
            i += 2;
        } else if ((v = am_cli_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if (argv[i][0] == '-') {
            am_cli_usage("render", "unknown option '%s'", argv[i]);
            goto usage;
        } else if (!scene) {
            scene = argv[i];
        } else {
            am_cli_usage("render", "unexpected argument '%s'", argv[i]);
            goto usage;
        }
    }
    if (!scene) {
        am_cli_usage("render", "missing SCENE (a rig.json, a .glb or an output folder)");
        goto usage;
    }
    if (!out) {
        am_cli_usage("render", "missing -o OUT.png|OUT.mp4|DIR");
        goto usage;
    }
    if (ref) {
        job.view = AM_VIEW_LAYOUT;
        job.width = 1280;
        job.height = 720;
        if (!frames_given) job.first = 0;
        job.count = 1;
    }
    static const char *const video_ext[] = {".mp4", ".mkv", ".avi", ".webm", ".mov", ".png"};
    const char *ext = am_cli_ext(out);
    bool one_file = false;
    for (size_t k = 0; ext && k < sizeof video_ext / sizeof *video_ext; k++) one_file |= strcasecmp(ext, video_ext[k]) == 0;
    if (ext && !one_file) {
        am_cli_usage("render", "-o %s: '%s' is not a format render writes (.png, .mp4, .mkv, .avi, .webm, or a folder)",
                     out, ext);
        goto usage;
    }
    if (ref && one_file && strcasecmp(ext, ".png") != 0) {
        am_cli_usage("render", "--ref writes one picture: -o ref.png or a folder");
        goto usage;
    }

    am_error err = {0};
    am_cli_scene sc;
    am_creature *cr = NULL;
    am_paint paint = {0};
    am_orbit orbit = {0};
    am_outset *set = NULL;
    char **names = NULL;
    size_t name_count = 0;
    so.fps = job.fps;
    am_status s = am_cli_scene_load("render", scene, &so, &sc, &err);
    if (s == AM_OK && cr_path) s = am_creature_load(cr_path, &cr, &err);
    if (s == AM_OK && cr_path) s = am_paint_load(cr_path, sc.rig, &paint, &err);
    if (s == AM_OK && cr_path) s = am_orbit_load(cr_path, &orbit, &err);
    if (s != AM_OK) {
        rc = am_cli_fail("render", &err);
        goto done;
    }
    if (paint.painted_count) am_render_model_paint(sc.model, paint.colour, paint.painted);
    size_t T = sc.motion ? sc.motion->frame_count : 1;
    if (job.first >= T) {
        rc = am_cli_usage("render", "--frames %zu: the clip has %zu frame%s", job.first, T, T == 1 ? "" : "s");
        goto done;
    }
    size_t n_frames = job.count && job.count < T - job.first ? job.count : T - job.first;
    if (one_file) {
        rc = am_cli_outputs("render", out, NULL, 0, &set);
    } else {
        /* a folder: one PNG per frame (ref.png for --ref) */
        name_count = ref ? 1 : n_frames;
        names = am_alloc_array(name_count, sizeof *names);
        for (size_t k = 0; names && k < name_count; k++) {
            names[k] = am_alloc(32);
            if (names[k]) snprintf(names[k], 32, ref ? "ref.png" : "frame_%05zu.png", k);
            else name_count = k;
        }
        if (!names || name_count < (ref ? 1 : n_frames)) {
            rc = am_cli_fail("render", &(am_error){.code = AM_E_NOMEM, .what = "out of memory"});
            goto done;
        }
        rc = am_cli_outputs("render", out, (const char *const *)names, name_count, &set);
    }
    if (rc) goto done;
    char staged_dir[4096];
    if (one_file) {
        job.path = am_outset_path(set, NULL);
    } else if (ref) {
        job.path = am_outset_path(set, "ref.png");
    } else {
        snprintf(staged_dir, sizeof staged_dir, "%s", am_outset_path(set, names[0]));
        char *slash = strrchr(staged_dir, '/');
        if (slash) *slash = '\0';
        job.path = staged_dir;
    }
    job.model = sc.model;
    job.motion = sc.motion;
    job.layout = cr ? &cr->layout : NULL;
    job.orbit = &orbit;
    job.style.flags = flags;
    job.ctx = am_cli_context();
    double t0 = am_now();
    s = am_render_clip(&job, &err);
    if (s != AM_OK) {
        rc = am_cli_fail_out("render", set, &err);
        goto done;
    }
    rc = am_cli_commit("render", set);
    if (!rc) am_cli_log("render: %zu frame%s of %s (%s view) in %.2f s -> %s", ref || (one_file && strcasecmp(ext, ".png") == 0) ? (size_t)1 : n_frames,
                        n_frames == 1 ? "" : "s", scene, am_view_name(job.view), am_now() - t0, out);
done:
    for (size_t k = 0; names && k < name_count; k++) am_free(names[k]);
    am_free(names);
    am_paint_free(&paint);
    am_creature_free(cr);
    am_cli_scene_free(&sc);
    am_calib_free(cal);
    return rc;
usage:
    am_calib_free(cal);
    return 2;
}
