/* `anymove pack CLIP.json... --rig R --mesh RIGGED.glb -o CREATURE.glb`: the game pack, one GLB
 * with every clip on the bound character (limb paint removed), and locomotion.json beside it. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_pack_help(FILE *out)
{
    fprintf(out,
            "usage: anymove pack CLIP.json [CLIP.json...] --rig RIG.json --mesh RIGGED.glb -o CREATURE.glb\n"
            "                    [--names A,B,...] [--feet J1,J2,...] [--quiet]\n\n"
            "Packs shaped clips (anymove shape) onto the character bind made (RIGGED.glb): one GLB with\n"
            "every clip as a named animation (from the file names or --names), the character's\n"
            "meshes, materials and skin kept, the limb paint (COLOR_0) removed and the model's own\n"
            "vertex colours (bind moves them to COLOR_1 beside the paint) back as COLOR_0,\n"
            "validator-clean.\n"
            "Beside it, locomotion.json: per clip {\"speed_mps\", \"stride_m\", \"cadence_hz\", \"period_s\",\n"
            "\"gait\" (walk, trot, pace, canter, gallop, hop, run, still: the pattern nearest the feet's\n"
            "phases), \"turn_deg_per_s\", \"loop_error\", \"feet\": {joint: {\"duty_factor\", \"phase\"}}}.\n"
            "Feet: --feet, else a clip's contact joints, else the rig's lowest leaf joints. An in-place\n"
            "clip's root motion curve counts as its travel.\n\n"
            "options:\n"
            "  --rig RIG.json     the rig the clips animate (required)\n"
            "  --mesh RIGGED.glb  the character from anymove bind (required)\n"
            "  -o, --out FILE     CREATURE.glb (required); locomotion.json goes beside it\n"
            "  --names A,B        clip names, one per clip\n"
            "  --feet J1,J2       the foot joints for locomotion.json\n"
            "  --quiet, -q        no progress on stderr\n\n"
            "examples:\n"
            "  anymove bind examples/creatures/capsule_wolf/model.obj --rig examples/creatures/capsule_wolf/rig.json \\\n"
            "               --creature examples/creatures/capsule_wolf/creature.json -o out/pack/rigged.glb\n"
            "  anymove synth gait --rig examples/creatures/capsule_wolf/rig.json --gait trot -o out/pack/trot.json\n"
            "  anymove shape out/pack/trot.json --rig examples/creatures/capsule_wolf/rig.json --loop -o out/pack/trot_loop.json\n"
            "  anymove pack out/pack/trot_loop.json --rig examples/creatures/capsule_wolf/rig.json \\\n"
            "               --mesh out/pack/rigged.glb --names trot -o out/pack/wolf.glb\n");
}

static size_t ami_split(char *list, char **items, size_t cap)
{
    size_t n = 0;
    for (char *p = list; p && *p && n < cap;) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        items[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

/* The root motion curve an in-place clip carries ("root_motion" [T][2]), or NULL. */
static am_status ami_root_curve(const am_motion *mo, double **out, am_error *err)
{
    *out = NULL;
    if (!mo->extra_json) return AM_OK;
    json_t *doc = NULL;
    AMI_TRY(ami_json_parse(mo->extra_json, strlen(mo->extra_json), "clip", &doc, err));
    json_t *rm = json_object_get(doc, "root_motion");
    am_status st = AM_OK;
    if (rm) {
        *out = am_alloc_array(mo->frame_count * 2, sizeof **out);
        st = *out ? ami_json_numbers(rm, "root_motion", 2, (size_t[2]){mo->frame_count, 2}, *out, err)
                  : AM_FAIL(err, AM_E_NOMEM, "root motion");
        if (st != AM_OK) am_free(*out), *out = NULL;
    }
    json_decref(doc);
    return st;
}

static void ami_jw_loco(ami_jw *w, const char *name, const am_locomotion *l)
{
    ami_jw_object(w, name);
    ami_jw_number(w, "speed_mps", l->speed_mps);
    ami_jw_number(w, "stride_m", l->stride_m);
    ami_jw_number(w, "cadence_hz", l->cadence_hz);
    ami_jw_number(w, "period_s", l->period_s);
    ami_jw_string(w, "gait", l->gait);
    ami_jw_number_or_null(w, "gait_distance", l->gait_distance);
    ami_jw_number(w, "turn_deg_per_s", l->turn_deg_per_s);
    ami_jw_record(w, "loop_error");
    ami_jw_number(w, "step_pct", l->loop.step_pct);
    ami_jw_number(w, "position_jump_pct", l->loop.position_jump_pct);
    ami_jw_number(w, "velocity_jump_pct", l->loop.velocity_jump_pct);
    ami_jw_close(w);
    ami_jw_object(w, "feet");
    for (size_t i = 0; i < l->foot_count; i++) {
        ami_jw_record(w, l->feet[i].joint);
        ami_jw_number(w, "duty_factor", l->feet[i].duty_factor);
        ami_jw_number(w, "phase", l->feet[i].phase);
        char pos[3] = {l->feet[i].end, l->feet[i].side, 0};
        ami_jw_string(w, "position", pos);
        ami_jw_close(w);
    }
    ami_jw_close(w);
    ami_jw_close(w);
}

int am_cmd_pack(int argc, char **argv)
{
    const char *rig_path = NULL, *mesh_path = NULL, *out_path = NULL, *names_arg = NULL, *feet_arg = NULL, *v;
    char **paths = am_alloc_array((size_t)argc, sizeof *paths);
    size_t count = 0;
    if (!paths) return am_cli_usage("pack", "too many arguments");
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_pack_help(stdout);
            am_free(paths);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--mesh"))) {
            mesh_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--names"))) {
            names_arg = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--feet"))) {
            feet_arg = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if (argv[i][0] == '-') {
            rc = am_cli_usage("pack", "unknown option or missing value '%s'", argv[i]);
        } else {
            paths[count++] = argv[i];
        }
    }
    char *names_buf = names_arg ? am_strdup(names_arg) : NULL, *feet_buf = feet_arg ? am_strdup(feet_arg) : NULL;
    char **names = am_alloc_array(count + 1, sizeof *names), *feet[64];
    size_t nfeet = feet_buf ? ami_split(feet_buf, feet, 64) : 0;
    char (*auto_names)[128] = am_alloc_array(count + 1, sizeof *auto_names);
    if (rc) {
    } else if (!count) rc = am_cli_usage("pack", "missing CLIP.json");
    else if (!rig_path) rc = am_cli_usage("pack", "missing --rig RIG.json");
    else if (!mesh_path) rc = am_cli_usage("pack", "missing --mesh RIGGED.glb (from anymove bind)");
    else if (!out_path) rc = am_cli_usage("pack", "missing -o CREATURE.glb");
    else if (am_cli_out_file("pack", out_path, AM_CLI_FMT(AM_CLI_FMT_GLB)) == AM_CLI_FMT_NONE) rc = 2;
    else if (!names || !auto_names) rc = am_cli_usage("pack", "too many clips");
    else if (names_buf && ami_split(names_buf, names, count + 1) != count)
        rc = am_cli_usage("pack", "--names wants %zu names separated by commas, got '%s'", count, names_arg);
    for (size_t i = 0; !rc && !names_buf && i < count; i++) {
        const char *base = strrchr(paths[i], '/');
        base = base ? base + 1 : paths[i];
        size_t n = strcspn(base, ".");
        snprintf(auto_names[i], 128, "%.*s", (int)(n < 120 ? n : 120), base);
        names[i] = auto_names[i];
    }
    for (size_t i = 0; !rc && i < count; i++)
        for (size_t k = 0; k < i && !rc; k++)
            if (strcmp(names[i], names[k]) == 0) rc = am_cli_usage("pack", "two clips are named '%s' (--names)", names[i]);
    char dir[1024] = ".", glb_name[256];
    const char *slash = out_path ? strrchr(out_path, '/') : NULL;
    if (!rc) {
        if (slash && (size_t)(slash - out_path) < sizeof dir) snprintf(dir, sizeof dir, "%.*s", (int)(slash - out_path), out_path);
        if (slash == out_path) snprintf(dir, sizeof dir, "/");
        snprintf(glb_name, sizeof glb_name, "%s", slash ? slash + 1 : out_path);
        if (strcmp(glb_name, "locomotion.glb") == 0) rc = am_cli_usage("pack", "-o cannot be locomotion.glb");
    }
    const char *set_names[2] = {glb_name, "locomotion.json"};
    am_outset *set = NULL;
    if (!rc) rc = am_cli_outputs("pack", dir, set_names, 2, &set);
    if (rc) {
        am_free(names), am_free(auto_names), am_free(names_buf), am_free(feet_buf), am_free(paths);
        return rc;
    }

    am_error err = {0};
    am_rig *rig = NULL, *grig = NULL;
    am_gltf *doc = NULL;
    am_motion **mo = am_alloc_array(count, sizeof *mo), **gm = am_alloc_array(count, sizeof *gm);
    am_locomotion **loco = am_alloc_array(count, sizeof *loco);
    am_status s = mo && gm && loco ? am_rig_load(rig_path, &rig, &err) : AM_FAIL(&err, AM_E_NOMEM, "clips");
    am_gltf_opts keep = {.flags = AM_GLTF_KEEP_SOURCE, .ctx = am_cli_context()};
    if (s == AM_OK) s = am_gltf_load(mesh_path, &keep, &doc, &err);
    if (s == AM_OK) {
        am_cli_print_warnings("pack", &doc->warnings);
        if ((s = am_rig_from_gltf(doc, -1, &grig, &err)) != AM_OK) am_error_set_file(&err, mesh_path);
    }
    for (size_t i = 0; s == AM_OK && i < count; i++) {
        s = am_motion_load(paths[i], rig, &mo[i], &err);
        /* the same clip bound to the character's skeleton (bone for bone by name) */
        char *text = NULL;
        if (s == AM_OK) {
            /* the rig's joints are named otherwise on the character: rotations only */
            size_t jc = mo[i]->joint_count;
            char **jn = mo[i]->joint_names;
            double *jt = mo[i]->joints;
            mo[i]->joint_count = 0, mo[i]->joint_names = NULL, mo[i]->joints = NULL;
            s = am_motion_to_json(mo[i], &text, &err);
            mo[i]->joint_count = jc, mo[i]->joint_names = jn, mo[i]->joints = jt;
        }
        if (s == AM_OK) {
            s = am_motion_parse(text, strlen(text), paths[i], grig, &gm[i], &err);
            if (s != AM_OK) {
                snprintf(err.file, sizeof err.file, "%s", mesh_path);
                char why[sizeof err.info];
                memcpy(why, err.info, sizeof why);
                snprintf(err.info, sizeof err.info, "not the character of the rig: %.200s", why);
            }
        }
        am_free(text);
        double *curve = NULL;
        if (s == AM_OK) s = ami_root_curve(mo[i], &curve, &err);
        if (s == AM_OK) {
            s = am_locomotion_run(rig, mo[i], curve, nfeet ? (const char *const *)feet : NULL, nfeet, &loco[i], &err);
            if (s != AM_OK && !err.file[0]) snprintf(err.file, sizeof err.file, "%s", paths[i]);
        }
        am_free(curve);
    }
    if (s == AM_OK) {
        am_gltf_export ex = {.rig = grig, .clips = (const am_motion *const *)gm, .clip_names = (const char *const *)names,
                             .clip_count = count, .source = doc, .source_skin = -1, .remove_paint = true,
                             .ctx = am_cli_context()};
        s = am_gltf_write(&ex, am_outset_path(set, glb_name), &err);
        if (s != AM_OK && err.code != AM_E_WRITE && err.code != AM_E_NOMEM && !err.file[0])
            snprintf(err.file, sizeof err.file, "%s", mesh_path);
    }
    if (s == AM_OK) {
        am_buf b = {0};
        ami_jw w;
        ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
        ami_jw_object(&w, NULL);
        ami_jw_string(&w, "pack", glb_name);
        ami_jw_object(&w, "clips");
        for (size_t i = 0; i < count; i++) ami_jw_loco(&w, names[i], loco[i]);
        ami_jw_close(&w);
        ami_jw_close(&w);
        s = ami_jw_write_file(&w, am_outset_path(set, "locomotion.json"), &err);
        am_buf_free(&b);
    }
    if (s != AM_OK) {
        rc = am_cli_fail_out("pack", set, &err);
    } else if ((rc = am_cli_commit("pack", set)) == 0) {
        struct stat st;
        long long bytes = stat(out_path, &st) == 0 ? (long long)st.st_size : -1;
        am_cli_log("wrote %s: %zu clip%s, %lld bytes, paint removed; locomotion.json beside it", out_path, count,
                   count > 1 ? "s" : "", bytes);
        for (size_t i = 0; i < count; i++)
            am_cli_log("  %s: %s, %.3g m/s, stride %.3g m, %.3g footfalls/s", names[i], loco[i]->gait ? loco[i]->gait : "-",
                       loco[i]->speed_mps, loco[i]->stride_m, loco[i]->cadence_hz);
    }
    for (size_t i = 0; i < count; i++) {
        if (mo) am_motion_free(mo[i]);
        if (gm) am_motion_free(gm[i]);
        if (loco) am_locomotion_free(loco[i]);
    }
    am_free(mo), am_free(gm), am_free(loco);
    am_gltf_free(doc);
    am_rig_free(grig);
    am_rig_free(rig);
    am_free(names), am_free(auto_names), am_free(names_buf), am_free(feet_buf), am_free(paths);
    return rc;
}
