/* `anymove rig TRACKS.npz -o DIR`: Track2Rig, 3D point tracks to a skinned, animated rig. */
#include <string.h>

#include "anymove/decompose.h"
#include "cli.h"
#include "core/internal.h"
#include "scene.h"

static void ami_rig_help(FILE *out)
{
    fprintf(out,
            "usage: anymove rig TRACKS.npz -o DIR [--bones N|auto] [--method ours|ssdr]\n"
            "                   [--rig auto|articulated|hierarchical|free]\n"
            "                   [--iterations N] [--max-bones N] [--smooth A] [--knn K] [--threads N]\n"
            "                   [--scale S] [--report] [--render] [--quiet]\n\n"
            "Decomposes dense 3D point tracks (SPEC 4.1; hidden entries are missing data) into\n"
            "bones, sparse skin weights (<= 4 per point) and per-frame bone transforms, extracts\n"
            "a skeleton (joints where bones pivot, a spanning tree; bones rotate about their\n"
            "joints, and the few that need it also translate) and writes into DIR:\n"
            "  rig.json     the skeleton (SPEC 2.1)        skin.npz    rest, bone_index, weight (SPEC 4.4)\n"
            "  motion.json  root trans + local rotations (+ loc of translating bones), joints (SPEC 4.3)\n"
            "  rig.glb      the points (or the surface when the tracks have faces), skinned, animated\n"
            "  report.json  bone count, visible reconstruction error (%% of body size), timings\n\n"
            "  --bones N|auto   bone count (default auto: docs/track2rig.md)\n"
            "  --method ours    robust, hidden-aware, smooth weights (default); ssdr = the plain\n"
            "                   30-iteration SSDR baseline in the same code\n"
            "  --rig MODE       which bones get translation channels (motion loc): auto (default)\n"
            "                   = the fewest that bring the reconstruction within 1.15x the free\n"
            "                   bones'; articulated = only the root; hierarchical = every bone of\n"
            "                   the tree; free = Dem Bones style, every bone a translating child of\n"
            "                   the root\n"
            "  --iterations N   alternations (default 30)\n"
            "  --max-bones N    upper bound for auto (default 16)\n"
            "  --smooth A       Laplacian weight smoothness (default 1; 0 = off)\n"
            "  --knn K          neighbours of the smoothness graph without faces (default 8)\n"
            "  --threads N      worker threads (default: the online CPUs, at most 8)\n"
            "  --scale S        metres per unit of the tracks (0.01 for centimetres)\n"
            "  --report         DIR/report.html: report.json, plots, a 3D viewer of rig.glb\n"
            "  --render         DIR/render_layout.png and render_three_quarter.png (the middle\n"
            "                   frame: the skinned surface when the tracks have faces, else bone shapes)\n\n"
            "examples:\n"
            "  anymove rig examples/tracks/grison_walk.tracks.npz --bones 15 -o out/grison_rig\n"
            "  anymove rig examples/tracks/glass-snake_walk.tracks.npz -o out/snake_rig\n");
}

int am_cmd_rig(int argc, char **argv)
{
    const char *in = NULL, *dir = NULL, *v;
    am_decompose_opts o = {0};
    long lv;
    double dv, scale = 1;
    am_cli_pictures pic = {.glb = "rig.glb", .frame_layout = true};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_rig_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (am_cli_flag(argv[i], "--report")) {
            pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            pic.render = true;
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            dir = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--bones"))) {
            if (strcmp(v, "auto") == 0) {
                o.bones = 0;
            } else {
                if (!am_cli_long("rig", "--bones", v, &lv)) return 2;
                if (lv < 1 || lv > 64) return am_cli_usage("rig", "--bones must be 1..64 or auto, got %ld", lv);
                o.bones = (size_t)lv;
            }
        } else if ((v = am_cli_value(argc, argv, &i, "--method"))) {
            if (strcmp(v, "ours") == 0)
                o.method = AM_DECOMPOSE_OURS;
            else if (strcmp(v, "ssdr") == 0)
                o.method = AM_DECOMPOSE_SSDR;
            else
                return am_cli_usage("rig", "--method must be ours or ssdr, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            if (strcmp(v, "auto") == 0)
                o.rig_mode = AM_RIG_AUTO;
            else if (strcmp(v, "articulated") == 0)
                o.rig_mode = AM_RIG_ARTICULATED;
            else if (strcmp(v, "hierarchical") == 0)
                o.rig_mode = AM_RIG_HIERARCHICAL;
            else if (strcmp(v, "free") == 0)
                o.rig_mode = AM_RIG_FREE;
            else
                return am_cli_usage("rig", "--rig must be auto, articulated, hierarchical or free, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--iterations"))) {
            if (!am_cli_long("rig", "--iterations", v, &lv)) return 2;
            if (lv < 1 || lv > 10000) return am_cli_usage("rig", "--iterations must be 1..10000");
            o.iterations = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--max-bones"))) {
            if (!am_cli_long("rig", "--max-bones", v, &lv)) return 2;
            if (lv < 1 || lv > 64) return am_cli_usage("rig", "--max-bones must be 1..64");
            o.max_bones = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--smooth"))) {
            if (!am_cli_double("rig", "--smooth", v, &dv)) return 2;
            o.smooth = dv > 0.0 ? dv : -1.0;
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("rig", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--threads"))) {
            if (!am_cli_long("rig", "--threads", v, &lv)) return 2;
            if (lv < 1 || lv > 8) return am_cli_usage("rig", "--threads must be 1..8");
            o.threads = (size_t)lv;
        } else if ((v = am_cli_value(argc, argv, &i, "--knn"))) {
            if (!am_cli_long("rig", "--knn", v, &lv)) return 2;
            if (lv < 1 || lv > 64) return am_cli_usage("rig", "--knn must be 1..64");
            o.knn = (size_t)lv;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("rig", "unknown option or missing value '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return am_cli_usage("rig", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in) return am_cli_usage("rig", "missing TRACKS.npz");
    if (!dir) return am_cli_usage("rig", "missing -o DIR");
    if (!am_cli_out_dir("rig", dir, "rig.json, skin.npz, motion.json, rig.glb, report.json")) return 2;
    const char *names[9] = {"rig.json", "skin.npz", "motion.json", "rig.glb", "report.json"};
    size_t name_count = 5;
    am_cli_picture_names(&pic, names, &name_count);
    am_outset *set = NULL;
    int rc = am_cli_outputs("rig", dir, names, name_count, &set);
    if (rc) return rc;

    double t0 = am_now();
    am_error err = {0};
    am_tracks *tr = NULL;
    am_decomposition *d = NULL;
    if (am_tracks_load(in, &tr, &err) != AM_OK) goto fail;
    if (scale != 1.0) am_tracks_scale(tr, scale);
    double t1 = am_now();
    am_cli_log("rig: %zu points x %zu frames%s", tr->point_count, tr->frame_count, tr->face_count ? " with faces" : "");
    size_t hidden = 0;
    for (size_t i = 0; i < tr->frame_count * tr->point_count; i++) hidden += !tr->visible[i];
    o.ctx = am_cli_context();
    if (am_decompose_take(tr, &o, &d, &err) != AM_OK) { /* frees tr's samples once copied */
        am_error_set_file(&err, in);
        goto fail;
    }
    am_cli_print_warnings("rig", &d->warnings);
    am_cli_body_size("rig", in, d->body_size);
    am_cli_log("rig: %zu bones (%zu translating), visible reconstruction error %.3f%% of body size "
               "(free bones %.3f%%) (%.3f s)",
               d->bone_count, d->translating_count, d->err_visible, d->err_visible_free, am_now() - t1);
    double t2 = am_now();
    size_t N = d->point_count;
    size_t s_rest[2] = {N, 3}, s_k[2] = {N, 4};
    am_array skin[3] = {am_array_view("rest", AM_DTYPE_F32, 2, s_rest, d->rest),
                        am_array_view("bone_index", AM_DTYPE_I32, 2, s_k, d->bone_index),
                        am_array_view("weight", AM_DTYPE_F32, 2, s_k, d->weight)};
    am_gltf_mesh_in mesh = {.vertex_count = N,
                            .positions = d->rest,
                            .triangle_count = tr->face_count,
                            .triangles = tr->faces,
                            .influences = 4,
                            .bone_index = d->bone_index,
                            .weights = d->weight};
    const am_motion *clips[1] = {d->motion};
    const char *clip_names[1] = {"track2rig"};
    am_gltf_export ex = {.rig = d->rig, .clip_count = 1, .clips = clips, .clip_names = clip_names, .mesh = &mesh,
                         .ctx = am_cli_context()};
    if (am_rig_write(d->rig, am_outset_path(set, "rig.json"), &err) != AM_OK ||
        am_npz_write(am_outset_path(set, "skin.npz"), skin, 3, true, &err) != AM_OK ||
        am_motion_write(d->motion, am_outset_path(set, "motion.json"), &err) != AM_OK ||
        am_gltf_write(&ex, am_outset_path(set, "rig.glb"), &err) != AM_OK)
        goto fail;
    double t3 = am_now();
    am_decompose_report rep = {.result = d, .opts = &o, .face_count = tr->face_count,
                               .hidden_share = (double)hidden / (double)(tr->frame_count * tr->point_count),
                               .seconds_load = t1 - t0, .seconds_write = t3 - t2, .seconds_total = t3 - t0};
    if (am_decompose_report_write(&rep, am_outset_path(set, "report.json"), &err) != AM_OK) goto fail;
    if (pic.report || pic.render) {
        /* the page shows report.json as written */
        char *text = NULL;
        size_t len = 0;
        am_render_mesh surface = {.vertex_count = N, .rest = d->rest, .triangle_count = tr->face_count,
                                  .triangles = tr->faces, .bone_index = d->bone_index, .weight = d->weight};
        pic.title = in, pic.rig = d->rig, pic.motion = d->motion, pic.mesh = tr->face_count ? &surface : NULL;
        am_status ps = pic.report ? am_file_read(am_outset_path(set, "report.json"), 0, &text, &len, &err) : AM_OK;
        pic.gate_text = text;
        if (ps == AM_OK) ps = am_cli_write_pictures("rig", &pic, set, &err);
        am_free(text);
        if (ps != AM_OK) goto fail;
    }
    if ((rc = am_cli_commit("rig", set)) == 0) {
        char list[256];
        am_cli_join_names(names, name_count, list, sizeof list);
        am_cli_log("rig: wrote %s/{%s} (total %.3f s)", dir, list, am_now() - t0);
    }
    goto done;
fail:
    rc = am_cli_fail_out("rig", set, &err);
done:
    am_decomposition_free(d);
    am_tracks_free(tr);
    return rc;
}
