/* `anymove retarget SOURCE --to TARGET -o DIR`: any motion onto any character
 * (docs/retarget.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "anymove/bvh.h"
#include "anymove/retarget.h"
#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "scene.h"

static void ami_retarget_help(FILE *out)
{
    fprintf(out,
            "usage: anymove retarget SOURCE --to TARGET -o DIR [options]\n"
            "       anymove retarget SOURCE --to TARGET --print-map [options]\n\n"
            "Puts a motion on another character: bones mapped by name, role and skeleton\n"
            "structure, bind poses cancelled through world rest frames, root motion scaled by\n"
            "the legs, the source's foot plants held on the target by IK.\n"
            "SOURCE: a motion.json (with --source-rig rig.json), a .bvh, or an animated\n"
            "        .glb/.gltf (--clip NAME|INDEX, or --all-clips)\n"
            "TARGET: a rig.json, or a skinned .glb/.gltf character (kept: mesh, materials, skin)\n"
            "Writes DIR/motion.json (the target's motion), rig.json (the target rig as used),\n"
            "animation.glb (the character, or bone shapes, with the clips), animation.bvh,\n"
            "map.json (the bone map and the rule behind each entry) and report.json (foot slide\n"
            "per plant on source and target, feet below the ground, chain directions). With\n"
            "--all-clips: motion_<clip>.json and animation_<clip>.bvh per clip, every clip in\n"
            "animation.glb. --report adds DIR/report.html (report.json as written, the target's\n"
            "contacts and foot slide per plant, per-bone angles, a 3D viewer of animation.glb;\n"
            "with --all-clips the first clip), --render DIR/render_layout.png and\n"
            "render_three_quarter.png (its middle frame, the character or its bone shapes).\n\n"
            "options:\n"
            "  --source-rig R      the rig of a motion.json SOURCE\n"
            "  --clip C            the clip of a glTF source (a name, its end, or an index; README\n"
            "                      \"Clips\"); --all-clips: every clip; default the first\n"
            "  --fps F             sampling of a glTF source (default: its own key rate, else 30)\n"
            "  --up y|z            the up axis of a BVH source (default y)\n"
            "  --scale S           metres per unit of SOURCE; --target-scale S of TARGET\n"
            "  --map map.json      entries that override the automatic map (a null target:\n"
            "                      that source bone drives nothing)\n"
            "  --print-map         print the map (map.json) on stdout and stop\n"
            "  --pose align|delta  align (default): the target's rest is first turned to point\n"
            "                      each mapped chain as the source's rest does (T-pose onto\n"
            "                      A-pose comes out right); delta: rest-relative rotations as they\n"
            "                      are (rigs whose rests mean the same pose)\n"
            "  --align-min DEG     align re-aims a limb bone of another design only when that\n"
            "                      turns it DEG or more (default 10; 0: every bone)\n"
            "  --source-pose FILE|FRAME  a pose of the source (motion.json of the source rig, its\n"
            "                      frame 0, or a frame of SOURCE) that matches the target's rest\n"
            "  --target-pose FILE|FRAME  a pose of the target (motion.json of the target rig, or a\n"
            "                      frame of a glTF target's first clip) that matches the source's\n"
            "  --root scale|keep   scale (default): root motion times the ratio of leg lengths,\n"
            "                      hip height from the target's rest; keep: the source's as is\n"
            "  --root-scale H[,V]  explicit horizontal (and vertical) factors\n"
            "  --ik feet|feet+hands|none  hold the source's plants on the target and keep its\n"
            "                      feet out of the ground (default feet)\n"
            "  --no-mesh           bone shapes in animation.glb even for a glTF character\n"
            "  --report, --render  the pictures above\n"
            "  --quiet, -q         no progress on stderr\n\n"
            "examples:\n"
            "  anymove retarget ../shared/data/gltf/quaternius/Fox.glb --clip Walk --to ../shared/data/gltf/quaternius/Husky.glb -o out/husky_walk\n"
            "  anymove retarget ../shared/data/bvh/cmu/01_01.bvh --scale 0.01 --to ../shared/data/gltf/quaternius/KnightCharacter.glb --print-map\n"
            "  anymove retarget ../shared/data/bvh/animated_drawings/dab.bvh --up z --scale 0.01 --to ../shared/data/gltf/quaternius/KnightCharacter.glb -o out/knight_dab\n"
            "  anymove retarget ../shared/data/gltf/khronos_fox/Fox.glb --scale 0.01 --all-clips --to ../shared/data/gltf/quaternius/Fox.glb -o out/qfox\n");
}

static bool ami_is_gltf(const char *path)
{
    const char *ext = am_cli_ext(path);
    return ext && (strcasecmp(ext, ".glb") == 0 || strcasecmp(ext, ".gltf") == 0);
}

static bool ami_is_bvh(const char *path)
{
    const char *ext = am_cli_ext(path);
    return ext && strcasecmp(ext, ".bvh") == 0;
}

/* The clips of SOURCE, loaded: the rig and one motion per clip. */
typedef struct ami_source {
    am_rig *rig;
    size_t count;
    am_motion **clips;
    char **names;   /* clip names for the files (sanitised) and the GLB */
} ami_source;

static void ami_source_free(ami_source *s)
{
    for (size_t i = 0; i < s->count; i++) am_motion_free(s->clips[i]);
    am_free(s->clips);
    ami_strings_free(s->names, s->count);
    am_rig_free(s->rig);
    memset(s, 0, sizeof *s);
}

/* The clip's name in file names (am_clip_file_name), allocated. */
static char *ami_clip_file_name(const char *name, size_t index)
{
    char buf[96];
    return am_strdup(am_clip_file_name(name, index, buf, sizeof buf));
}

static am_status ami_source_alloc(ami_source *s, size_t n, am_error *err)
{
    s->clips = am_alloc_array(n, sizeof *s->clips);
    s->names = am_alloc_array(n, sizeof *s->names);
    AMI_CHECK(err, s->clips && s->names, AM_E_NOMEM, "clips");
    return AM_OK;
}

static am_status ami_load_source(const char *in, const char *rig_path, const char *clip, bool all, double fps,
                                 double scale, am_bvh_axes axes, ami_source *src, am_error *err)
{
    am_status s = AM_OK;
    if (ami_is_gltf(in)) {
        am_gltf *doc = NULL;
        am_gltf_opts go = {.ctx = am_cli_context()};
        s = am_gltf_load(in, &go, &doc, err);
        if (s == AM_OK) {
            am_cli_print_warnings("retarget", &doc->warnings);
            s = am_rig_from_gltf(doc, -1, &src->rig, err);
        }
        int first = -1;
        size_t n = 1;
        if (s == AM_OK && all) {
            n = doc->animation_count ? doc->animation_count : 1;
            first = doc->animation_count ? 0 : -1;
        } else if (s == AM_OK) {
            s = am_cli_pick_clip(doc, in, clip, &first, err);
        }
        if (s == AM_OK) s = ami_source_alloc(src, n, err);
        for (size_t i = 0; s == AM_OK && i < n; i++) {
            int anim = all ? (doc->animation_count ? (int)i : -1) : first;
            double f = fps > 0 ? fps : am_gltf_clip_rate(doc, anim);
            s = am_motion_from_gltf(doc, -1, src->rig, anim, f, &src->clips[i], err);
            if (s == AM_OK) {
                src->count++;
                src->names[i] = ami_clip_file_name(anim >= 0 ? doc->animations[anim].name : "rest", i);
                if (!src->names[i]) s = AM_FAIL(err, AM_E_NOMEM, "clip names");
            }
        }
        am_gltf_free(doc);
        if (s == AM_OK && scale != 1.0) {
            am_rig_scale(src->rig, scale);
            for (size_t i = 0; i < src->count; i++) am_motion_scale(src->clips[i], scale);
        }
    } else if (ami_is_bvh(in)) {
        am_bvh *bvh = NULL;
        am_bvh_opts bo = {.axes = axes, .scale = scale, .ctx = am_cli_context()};
        s = am_bvh_load(in, &bo, &bvh, err);
        if (s == AM_OK) {
            am_cli_print_warnings("retarget", &bvh->warnings);
            s = am_rig_from_bvh(bvh, &bo, &src->rig, err);
        }
        if (s == AM_OK) s = ami_source_alloc(src, 1, err);
        if (s == AM_OK) s = am_motion_from_bvh(bvh, src->rig, &bo, &src->clips[0], err);
        if (s == AM_OK) {
            src->count = 1;
            src->names[0] = ami_clip_file_name(NULL, 0);
            if (!src->names[0]) s = AM_FAIL(err, AM_E_NOMEM, "clip names");
        }
        am_bvh_free(bvh);
    } else {
        s = am_rig_load(rig_path, &src->rig, err);
        if (s == AM_OK) s = ami_source_alloc(src, 1, err);
        if (s == AM_OK) s = am_motion_load(in, src->rig, &src->clips[0], err);
        if (s == AM_OK) {
            src->count = 1;
            src->names[0] = ami_clip_file_name(NULL, 0);
            if (!src->names[0]) s = AM_FAIL(err, AM_E_NOMEM, "clip names");
        }
        if (s == AM_OK && scale != 1.0) {
            am_rig_scale(src->rig, scale);
            am_motion_scale(src->clips[0], scale);
        }
    }
    am_error_set_file(err, in);
    return s;
}

/* TARGET: a rig.json, or a glTF character kept whole (unless --no-mesh). */
static am_status ami_load_target(const char *path, double scale, bool keep, am_rig **rig, am_gltf **doc,
                                 am_error *err)
{
    am_status s;
    if (ami_is_gltf(path)) {
        am_gltf_opts go = {.flags = keep ? AM_GLTF_KEEP_SOURCE : 0u, .ctx = am_cli_context()};
        s = am_gltf_load(path, &go, doc, err);
        if (s == AM_OK) {
            am_cli_print_warnings("retarget", &(*doc)->warnings);
            s = am_rig_from_gltf(*doc, -1, rig, err);
        }
        if (s == AM_OK) s = am_cli_record_model(*rig, path, err);
    } else {
        s = am_rig_load(path, rig, err);
    }
    if (s == AM_OK && scale != 1.0) am_rig_scale(*rig, scale);
    am_error_set_file(err, path);
    return s;
}

/* --source-pose / --target-pose: a frame number of a clip at hand, or a motion.json of the rig. */
static am_status ami_load_pose(const char *arg, const am_rig *rig, am_motion *frames_of, double scale,
                               am_motion **file, const am_motion **pose, size_t *frame, am_error *err)
{
    char *end = NULL;
    long f = strtol(arg, &end, 10);
    if (end != arg && *end == '\0') {
        if (!frames_of)
            return AM_FAIL(err, AM_E_USAGE, "pose frame %ld: there is no clip to take it from (give a motion.json)", f);
        if (f < 0 || (size_t)f >= frames_of->frame_count)
            return AM_FAIL(err, AM_E_ARG, "pose frame %ld: the clip has %zu frames", f, frames_of->frame_count);
        *pose = frames_of;
        *frame = (size_t)f;
        return AM_OK;
    }
    am_status s = am_motion_load(arg, rig, file, err);
    if (s == AM_OK && scale != 1.0) am_motion_scale(*file, scale);
    *pose = *file;
    *frame = 0;
    return s;
}

static void ami_print_map(const am_retarget_map *map, const am_rig *src, const am_rig *dst)
{
    am_bone_map *bm = NULL;
    char *text = NULL;
    am_error err = {0};
    if (am_retarget_map_names(map, src, dst, &bm, &err) == AM_OK && am_bone_map_to_json(bm, &text, &err) == AM_OK)
        fputs(text, stdout);
    am_free(text);
    am_bone_map_free(bm);
}

static const char *const ami_outputs[] = {"motion.json", "rig.json", "animation.glb", "animation.bvh", "map.json",
                                          "report.json"};

typedef struct ami_cli_opts {
    const char *in, *to, *out, *source_rig, *clip, *map, *source_pose, *target_pose;
    bool all, print_map, no_mesh;
    am_cli_pictures pic;
    double fps, scale, target_scale;
    am_bvh_axes axes;
    am_retarget_opts ro;
} ami_cli_opts;

static int ami_parse(int argc, char **argv, ami_cli_opts *o)
{
    const char *v;
    o->scale = o->target_scale = 1;
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_retarget_help(stdout);
            return -1;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--to"))) {
            o->to = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            o->out = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--source-rig"))) {
            o->source_rig = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--clip"))) {
            o->clip = v;
        } else if (am_cli_flag(argv[i], "--all-clips")) {
            o->all = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("retarget", "--fps", v, &o->fps)) return 2;
            if (!(o->fps >= 1e-3 && o->fps <= 1e4)) return am_cli_usage("retarget", "--fps must be in [0.001, 10000]");
        } else if ((v = am_cli_value(argc, argv, &i, "--up"))) {
            if (strcasecmp(v, "y") == 0) o->axes = AM_BVH_AXES_Y_UP;
            else if (strcasecmp(v, "z") == 0) o->axes = AM_BVH_AXES_Z_UP;
            else return am_cli_usage("retarget", "--up is y or z, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("retarget", v, &o->scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--target-scale"))) {
            if (!am_cli_scale("retarget", v, &o->target_scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--map"))) {
            o->map = v;
        } else if (am_cli_flag(argv[i], "--print-map")) {
            o->print_map = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--pose"))) {
            if (strcmp(v, "align") == 0) o->ro.pose = AM_RETARGET_POSE_ALIGN;
            else if (strcmp(v, "delta") == 0) o->ro.pose = AM_RETARGET_POSE_DELTA;
            else return am_cli_usage("retarget", "--pose is align or delta, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--align-min"))) {
            char *end = NULL;
            double deg = strtod(v, &end);
            if (end == v || *end || !(deg >= 0.0 && deg <= 90.0))
                return am_cli_usage("retarget", "--align-min is degrees in 0..90, got '%s'", v);
            o->ro.align_min_deg = deg > 0.0 ? deg : -1.0;
        } else if ((v = am_cli_value(argc, argv, &i, "--source-pose"))) {
            o->source_pose = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--target-pose"))) {
            o->target_pose = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--root"))) {
            if (strcmp(v, "scale") == 0) o->ro.root = AM_RETARGET_ROOT_SCALE;
            else if (strcmp(v, "keep") == 0) o->ro.root = AM_RETARGET_ROOT_KEEP;
            else return am_cli_usage("retarget", "--root is scale or keep, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--root-scale"))) {
            char *end = NULL;
            double h = strtod(v, &end), vv = h;
            if (end != v && *end == ',') {
                const char *rest = end + 1;
                vv = strtod(rest, &end);
                if (end == rest) end = NULL;
            }
            if (!end || *end || !(h > 0) || !(vv > 0) || !isfinite(h) || !isfinite(vv))
                return am_cli_usage("retarget", "--root-scale wants H or H,V (positive factors), got '%s'", v);
            o->ro.scale_horizontal = h;
            o->ro.scale_vertical = vv;
        } else if ((v = am_cli_value(argc, argv, &i, "--ik"))) {
            if (strcmp(v, "feet") == 0) o->ro.flags &= ~(uint32_t)(AM_RETARGET_NO_IK | AM_RETARGET_IK_HANDS);
            else if (strcmp(v, "feet+hands") == 0) o->ro.flags = (o->ro.flags & ~(uint32_t)AM_RETARGET_NO_IK) | AM_RETARGET_IK_HANDS;
            else if (strcmp(v, "none") == 0) o->ro.flags |= AM_RETARGET_NO_IK;
            else return am_cli_usage("retarget", "--ik is feet, feet+hands or none, got '%s'", v);
        } else if (am_cli_flag(argv[i], "--no-mesh")) {
            o->no_mesh = true;
        } else if (am_cli_flag(argv[i], "--report")) {
            o->pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            o->pic.render = true;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("retarget", "unknown option or missing value '%s'", argv[i]);
        } else if (!o->in) {
            o->in = argv[i];
        } else {
            return am_cli_usage("retarget", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!o->in) return am_cli_usage("retarget", "missing SOURCE");
    if (!o->to) return am_cli_usage("retarget", "missing --to TARGET (a rig.json or a skinned .glb/.gltf)");
    bool gltf = ami_is_gltf(o->in), bvh = ami_is_bvh(o->in);
    const char *ext = am_cli_ext(o->in);
    bool motion = ext && strcasecmp(ext, ".json") == 0;
    if (!gltf && !bvh && !motion)
        return am_cli_usage("retarget", "%s: SOURCE is a .glb, .gltf, .bvh or a motion.json (with --source-rig)", o->in);
    if (motion && !o->source_rig) return am_cli_usage("retarget", "a motion.json needs its rig: --source-rig rig.json");
    if (!motion && o->source_rig) return am_cli_usage("retarget", "--source-rig goes with a motion.json SOURCE");
    if ((o->clip || o->all) && !gltf) return am_cli_usage("retarget", "--clip and --all-clips pick clips of a .glb or .gltf");
    if (o->clip && o->all) return am_cli_usage("retarget", "--clip and --all-clips exclude each other");
    if (!o->print_map && !o->out) return am_cli_usage("retarget", "missing -o DIR (or --print-map)");
    if (o->print_map && (o->pic.report || o->pic.render))
        return am_cli_usage("retarget", "--report and --render go with -o DIR, not --print-map");
    if (o->out && !am_cli_out_dir("retarget", o->out, "motion.json, rig.json, animation.glb, animation.bvh, map.json, report.json"))
        return 2;
    return 0;
}

/* The output set: the six files, or per clip a motion and a BVH with --all-clips; then the
 * pictures of --report and --render. */
static int ami_open_outputs(const ami_cli_opts *o, const ami_source *src, am_outset **set, char ***names,
                            size_t *count)
{
    size_t n = (o->all ? 4 + 2 * src->count : 6) + 4;
    char **nm = am_alloc_array(n, sizeof *nm);
    if (!nm) return am_cli_usage("retarget", "too many clips");
    size_t k = 0;
    if (o->all) {
        for (size_t i = 0; i < src->count; i++) {
            char buf[128];
            snprintf(buf, sizeof buf, "motion_%s.json", src->names[i]);
            nm[k++] = am_strdup(buf);
            snprintf(buf, sizeof buf, "animation_%s.bvh", src->names[i]);
            nm[k++] = am_strdup(buf);
        }
        nm[k++] = am_strdup("rig.json");
        nm[k++] = am_strdup("animation.glb");
        nm[k++] = am_strdup("map.json");
        nm[k++] = am_strdup("report.json");
    } else {
        for (size_t i = 0; i < 6; i++) nm[k++] = am_strdup(ami_outputs[i]);
    }
    const char *pics[4];
    size_t np = 0;
    am_cli_picture_names(&o->pic, pics, &np);
    for (size_t i = 0; i < np; i++) nm[k++] = am_strdup(pics[i]);
    for (size_t i = 0; i < k; i++)
        if (!nm[i]) {
            ami_strings_free(nm, k);
            return am_cli_usage("retarget", "out of memory");
        }
    /* two clips whose names clean up alike would write one file */
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++)
            if (strcmp(nm[i], nm[j]) == 0) {
                int rc = am_cli_usage("retarget", "two clips of %s make the same file name %s", o->in, nm[i]);
                ami_strings_free(nm, k);
                return rc;
            }
    int rc = am_cli_outputs("retarget", o->out, (const char *const *)nm, k, set);
    if (rc) {
        ami_strings_free(nm, k);
        return rc;
    }
    *names = nm;
    *count = k;
    return 0;
}

/* The target's plants (the source's, held by the IK) as motion.json's "contacts" object of
 * the fit ({joint: [[first, last], ...]}), which the report draws as the contacts timeline and
 * the foot slide per plant (on the ground's velocity, also the fit's key). */
static char *ami_contacts_json(const am_retarget_report *r, const am_rig *dst)
{
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    ami_jw_object(&w, "contacts");
    for (size_t c = 0; c < r->contact_count; c++) {
        int32_t j = r->contact_target[c];
        if (j < 0 || (size_t)j >= dst->joint_count) continue;
        ami_jw_array(&w, dst->joint_names[j]);
        for (size_t i = 0; i < r->plant_count; i++) {
            if (r->plants[i].contact != c) continue;
            ami_jw_row(&w, NULL);
            ami_jw_int(&w, NULL, r->plants[i].first);
            ami_jw_int(&w, NULL, r->plants[i].last);
            ami_jw_close(&w);
        }
        ami_jw_close(&w);
    }
    ami_jw_close(&w);
    ami_jw_row(&w, "ground_velocity");
    for (int k = 0; k < 3; k++) ami_jw_number_or_null(&w, NULL, r->ground_vel_target[k]);
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_error e = {0};
    if (ami_jw_finish(&w, &e) != AM_OK || b.failed) {
        am_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* --report and --render of the first clip: the target's motion with its plants, report.json as
 * written, the viewer on animation.glb; the skinned character rendered when the target is one
 * (at its own scale: the mesh is not scaled with --target-scale). */
static am_status ami_pictures(ami_cli_opts *o, const am_rig *dst, const am_gltf *doc, const am_motion *mo,
                              const am_retarget_report *r, am_outset *set, am_error *err)
{
    char title[512], *text = NULL;
    size_t len = 0;
    snprintf(title, sizeof title, "%s onto %s", o->in, o->to);
    am_motion view = *mo;
    view.extra_json = ami_contacts_json(r, dst);
    am_status s = view.extra_json ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "report");
    if (s == AM_OK && o->pic.report) s = am_file_read(am_outset_path(set, "report.json"), 0, &text, &len, err);
    if (s == AM_OK) {
        o->pic.title = title, o->pic.rig = dst, o->pic.motion = &view, o->pic.gate_text = text;
        o->pic.glb = "animation.glb", o->pic.frame_layout = true;
        o->pic.mesh_doc = !o->no_mesh && o->target_scale == 1.0 ? doc : NULL;
        s = am_cli_write_pictures("retarget", &o->pic, set, err);
    }
    am_free(text);
    am_free(view.extra_json);
    return s;
}

int am_cmd_retarget(int argc, char **argv)
{
    ami_cli_opts o = {0};
    int rc = ami_parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    am_error err = {0};
    ami_source src = {0};
    am_rig *dst = NULL;
    am_gltf *doc = NULL;
    am_bone_map *user = NULL;
    am_retarget_map *map = NULL;
    am_motion *spose_file = NULL, *tpose_file = NULL, *tclip = NULL;
    am_motion **outs = NULL;
    am_retarget_report *reps = NULL;
    am_outset *set = NULL;
    char **names = NULL;
    size_t nnames = 0;
    const char *blame = o.in;
    if (ami_load_source(o.in, o.source_rig, o.clip, o.all, o.fps, o.scale, o.axes, &src, &err) != AM_OK) goto fail;
    am_cli_body_size("retarget", o.in, am_cli_rig_size(src.rig));
    blame = o.to;
    if (ami_load_target(o.to, o.target_scale, !o.no_mesh && !o.print_map, &dst, &doc, &err) != AM_OK) goto fail;
    am_cli_body_size("retarget", o.to, am_cli_rig_size(dst));
    blame = o.map;
    if (o.map && am_bone_map_load(o.map, &user, &err) != AM_OK) goto fail;
    am_retarget_map_opts mo = {.overrides = user, .ctx = am_cli_context()};
    blame = o.map ? o.map : o.to;
    if (am_retarget_map_build(src.rig, dst, &mo, &map, &err) != AM_OK) goto fail;
    am_cli_print_warnings("retarget", &map->warnings);
    if (o.print_map) {
        ami_print_map(map, src.rig, dst);
        goto done;
    }
    /* poses */
    blame = o.source_pose;
    if (o.source_pose &&
        ami_load_pose(o.source_pose, src.rig, src.clips[0], o.scale, &spose_file, &o.ro.source_pose,
                      &o.ro.source_pose_frame, &err) != AM_OK)
        goto fail;
    blame = o.target_pose;
    if (o.target_pose) {
        if (doc && doc->animation_count &&
            am_motion_from_gltf(doc, -1, dst, 0, am_gltf_clip_rate(doc, 0), &tclip, &err) != AM_OK)
            goto fail;
        if (tclip && o.target_scale != 1.0) am_motion_scale(tclip, o.target_scale);
        if (ami_load_pose(o.target_pose, dst, tclip, o.target_scale, &tpose_file, &o.ro.target_pose,
                          &o.ro.target_pose_frame, &err) != AM_OK)
            goto fail;
    }
    if ((rc = ami_open_outputs(&o, &src, &set, &names, &nnames)) != 0) goto done;
    outs = am_alloc_array(src.count, sizeof *outs);
    reps = am_alloc_array(src.count, sizeof *reps);
    if (!outs || !reps) {
        err = (am_error){0};
        AM_FAIL(&err, AM_E_NOMEM, "clips");
        goto fail_out;
    }
    o.ro.ctx = am_cli_context();
    blame = o.in;
    for (size_t i = 0; i < src.count; i++) {
        const am_motion *in = src.clips[i];
        am_warning_list w = {0};
        if (am_motion_create(dst, in->frame_count, in->fps, &outs[i], &err) != AM_OK) goto fail_out;
        outs[i]->quat = am_alloc_array(in->frame_count * dst->bone_count * 4, sizeof(double));
        if (!outs[i]->quat) {
            AM_FAIL(&err, AM_E_NOMEM, "motion");
            goto fail_out;
        }
        am_retarget_job job = {.source_rig = src.rig, .source = in, .target_rig = dst, .map = map, .opts = &o.ro,
                               .out = outs[i], .report = &reps[i], .warnings = &w};
        am_status s = am_retarget_run(&job, &err);
        am_cli_print_warnings("retarget", &w);
        am_warning_list_free(&w);
        if (s != AM_OK || am_motion_compute_joints(outs[i], dst, &err) != AM_OK) goto fail_out;
    }
    blame = NULL;
    /* the files */
    {
        am_bone_map *bm = NULL;
        am_status s = am_retarget_map_names(map, src.rig, dst, &bm, &err);
        if (s == AM_OK) s = am_bone_map_write(bm, am_outset_path(set, "map.json"), &err);
        am_bone_map_free(bm);
        if (s == AM_OK) s = am_rig_write(dst, am_outset_path(set, "rig.json"), &err);
        for (size_t i = 0; s == AM_OK && i < src.count; i++) {
            char mname[128], bname[128];
            snprintf(mname, sizeof mname, o.all ? "motion_%s.json" : "motion.json", src.names[i]);
            snprintf(bname, sizeof bname, o.all ? "animation_%s.bvh" : "animation.bvh", src.names[i]);
            const am_motion *one[1] = {outs[i]};
            s = am_motion_write(outs[i], am_outset_path(set, mname), &err);
            if (s == AM_OK)
                s = am_cli_write_animation(AM_CLI_FMT_BVH, dst, one, NULL, 1, NULL, am_outset_path(set, bname), &err);
        }
        if (s == AM_OK) {
            double t0 = am_now();
            s = am_cli_write_animation(AM_CLI_FMT_GLB, dst, (const am_motion *const *)outs,
                                       (const char *const *)src.names, src.count, o.no_mesh ? NULL : doc,
                                       am_outset_path(set, "animation.glb"), &err);
            if (s == AM_OK) am_cli_log("animation.glb written in %.3f s", am_now() - t0);
        }
        if (s == AM_OK) {
            am_buf b = {0};
            if (o.all) {
                am_buf_printf(&b, "{\"clips\": {");
                for (size_t i = 0; i < src.count; i++) {
                    am_buf_printf(&b, "%s\"%s\": ", i ? ", " : "", src.names[i]);
                    am_retarget_report_json(&reps[i], map, src.rig, dst, &b);
                }
                am_buf_printf(&b, "}}\n");
            } else {
                am_retarget_report_json(&reps[0], map, src.rig, dst, &b);
            }
            s = b.failed ? AM_FAIL(&err, AM_E_NOMEM, "report") : am_file_write(am_outset_path(set, "report.json"), b.data, b.len, &err);
            am_buf_free(&b);
        }
        if (s == AM_OK && (o.pic.report || o.pic.render)) s = ami_pictures(&o, dst, doc, outs[0], &reps[0], set, &err);
        if (s != AM_OK) goto fail_out;
    }
    if ((rc = am_cli_commit("retarget", set)) == 0) {
        set = NULL;
        const am_retarget_report *r = &reps[0];
        double slide = 0.0;
        for (size_t i = 0; i < r->plant_count; i++)
            if (r->plants[i].target_slide > slide) slide = r->plants[i].target_slide;
        char f[32];
        am_cli_log("wrote %s: %zu clip%s onto %zu bones (%zu frames at %s fps), root x%.3g, %zu plants held (slide "
                   "max %.3g mm), chains %.2f deg off the source",
                   o.out, src.count, src.count > 1 ? "s" : "", dst->bone_count, outs[0]->frame_count,
                   am_cli_fps(outs[0]->fps, f), r->scale_horizontal, r->plant_count, 1e3 * slide,
                   r->chain_angle_mean_deg);
    }
    set = NULL;
    goto done;
fail_out:
    if (blame) am_error_set_file(&err, blame);
    rc = am_cli_fail_out("retarget", set, &err);
    set = NULL;
    goto done;
fail:
    if (blame) am_error_set_file(&err, blame);
    rc = am_cli_fail("retarget", &err);
done:
    am_outset_abort(set);
    for (size_t i = 0; outs && i < src.count; i++) am_motion_free(outs[i]);
    for (size_t i = 0; reps && i < src.count; i++) am_retarget_report_free(&reps[i]);
    am_free(outs);
    am_free(reps);
    ami_strings_free(names, nnames);
    am_motion_free(spose_file);
    am_motion_free(tpose_file);
    am_motion_free(tclip);
    am_retarget_map_free(map);
    am_bone_map_free(user);
    am_gltf_free(doc);
    am_rig_free(dst);
    ami_source_free(&src);
    return rc;
}
