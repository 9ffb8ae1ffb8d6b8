/* `anymove shape MOTION.json --rig R [--range A:B] [--loop] [--root-motion bone|inplace|none]
 * -o CLIP.json`: a motion made a game clip, and CLIP.shape_report.json beside it. */
#include <string.h>

#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"

static void ami_shape_help(FILE *out)
{
    fprintf(out,
            "usage: anymove shape MOTION.json --rig RIG.json -o CLIP.json [--range A:B] [--loop]\n"
            "                     [--root-motion bone|inplace|none] [--keep-facing] [--keep-height]\n"
            "                     [--quiet]\n\n"
            "Makes a motion a game clip: keeps frames A to B-1 (--range), and with --loop finds its\n"
            "best cycle (the period from the motion's contacts, else from when the pose comes back;\n"
            "the start where pose and velocity one period later match best) and blends the seam so\n"
            "that the last frame flows into the first in pose and velocity, the per-cycle travel and\n"
            "turn kept as root motion. The start is turned to face -Y above the origin and the\n"
            "feet are put on the ground (the lowest joint where the rest pose has it). Root motion:\n"
            "bone (default) leaves the travel on the root bone, where Unreal and Unity read root\n"
            "motion; inplace removes the root's horizontal travel and writes it as the curve\n"
            "\"root_motion\" in CLIP.json (root + curve = the travelling root); none removes it.\n"
            "Writes CLIP.json (SPEC 4.3) and CLIP.shape_report.json: the loop error before and after\n"
            "(the step, position jump and velocity jump at the seam, %% of body size per frame,\n"
            "beside the clip's own mean frame-to-frame change), period, speed, travel and turn.\n\n"
            "options:\n"
            "  --rig RIG.json       the rig the motion animates (required)\n"
            "  -o, --out CLIP.json  the clip (required); its report goes beside it\n"
            "  --range A:B          frames A..B-1 of the motion (default: all; one range)\n"
            "  --loop               make a seamless cycle\n"
            "  --root-motion MODE   bone, inplace or none (default bone)\n"
            "  --keep-facing        do not turn the start to face -Y\n"
            "  --keep-height        do not move the feet to the ground\n"
            "  --quiet, -q          no progress on stderr\n\n"
            "examples:\n"
            "  anymove shape examples/walker/walk.json --rig examples/walker/rig.json --loop -o out/walk_loop.json\n"
            "  anymove shape examples/walker/walk.json --rig examples/walker/rig.json --loop --root-motion inplace \\\n"
            "                -o out/walk_inplace.json\n");
}

static bool ami_parse_range(const char *s, size_t *a, size_t *b)
{
    char *e = NULL;
    long x = strtol(s, &e, 10);
    if (e == s || *e != ':' || x < 0) return false;
    const char *t = e + 1;
    long y = strtol(t, &e, 10);
    if (e == t || *e != '\0' || y < 0) return false;
    *a = (size_t)x, *b = (size_t)y;
    return true;
}

/* The clip's own keys: the root motion curve (inplace) and what shaping did. */
static am_status ami_clip_extra(const am_shape_result *r, bool loop, am_root_motion rm, char **out, am_error *err)
{
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    ami_jw_bool(&w, "loop", loop);
    static const char *const names[] = {"bone", "inplace", "none"};
    ami_jw_string(&w, "root_motion_mode", names[rm]);
    if (r->root_motion)
        ami_jw_numbers(&w, "root_motion", r->root_motion, 2, (size_t[2]){r->clip->frame_count, 2});
    ami_jw_close(&w);
    am_status st = ami_jw_take_string(&w, out, err);
    am_buf_free(&b);
    return st;
}

static void ami_jw_loop(ami_jw *w, const char *key, const am_loop_error *e)
{
    ami_jw_record(w, key);
    ami_jw_number_or_null(w, "step_pct", e->step_pct);
    ami_jw_number_or_null(w, "position_jump_pct", e->position_jump_pct);
    ami_jw_number_or_null(w, "velocity_jump_pct", e->velocity_jump_pct);
    ami_jw_close(w);
}

static am_status ami_shape_report(const char *path, const char *motion, const am_shape_result *r, bool loop,
                                  am_error *err)
{
    const am_shape_report *p = &r->report;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "motion", motion);
    ami_jw_int(&w, "input_frames", (int64_t)p->input_frames);
    ami_jw_row(&w, "range");
    ami_jw_int(&w, NULL, (int64_t)p->begin);
    ami_jw_int(&w, NULL, (int64_t)p->end);
    ami_jw_close(&w);
    ami_jw_bool(&w, "loop", loop);
    ami_jw_int(&w, "frames", (int64_t)r->clip->frame_count);
    ami_jw_number(&w, "fps", r->clip->fps);
    ami_jw_int(&w, "period_frames", (int64_t)p->period_frames);
    ami_jw_number(&w, "period_s", (double)p->period_frames / r->clip->fps);
    ami_jw_string(&w, "period_from", p->period_from);
    ami_jw_int(&w, "cycle_start", (int64_t)p->cycle_start);
    ami_jw_object(&w, "loop_error");
    ami_jw_loop(&w, "before", &p->before);
    ami_jw_loop(&w, "after", &p->after);
    ami_jw_number(&w, "mean_step_pct", p->mean_step_pct);
    ami_jw_number(&w, "mean_velocity_change_pct", p->mean_accel_pct);
    ami_jw_close(&w);
    ami_jw_number(&w, "speed_mps", p->speed_mps);
    ami_jw_numbers(&w, "travel_per_cycle_m", p->travel_per_cycle, 1, (size_t[1]){3});
    ami_jw_number(&w, "turn_deg_per_cycle", p->turn_deg_per_cycle);
    ami_jw_number(&w, "facing_turn_deg", p->facing_turn_deg);
    ami_jw_number(&w, "ground_shift_m", p->ground_shift_m);
    ami_jw_number(&w, "body_size_m", p->body_size);
    ami_jw_close(&w);
    am_status st = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return st;
}

int am_cmd_shape(int argc, char **argv)
{
    const char *motion = NULL, *rig_path = NULL, *out_path = NULL, *v;
    am_shape_opts o = {.ctx = am_cli_context()};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_shape_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if (am_cli_flag(argv[i], "--loop")) {
            o.loop = true;
        } else if (am_cli_flag(argv[i], "--keep-facing")) {
            o.keep_facing = true;
        } else if (am_cli_flag(argv[i], "--keep-height")) {
            o.keep_height = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--range"))) {
            /* a second range would silently replace the first: one clip is one range (cut
             * several clips by running shape once per range) */
            if (o.has_range)
                return am_cli_usage("shape", "--range given twice ('%zu:%zu' and '%s'): one range per clip", o.range_begin,
                                    o.range_end, v);
            if (!ami_parse_range(v, &o.range_begin, &o.range_end))
                return am_cli_usage("shape", "--range wants A:B (frames A to B-1), got '%s'", v);
            o.has_range = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--root-motion"))) {
            if (strcmp(v, "bone") == 0) o.root_motion = AM_ROOT_MOTION_BONE;
            else if (strcmp(v, "inplace") == 0) o.root_motion = AM_ROOT_MOTION_INPLACE;
            else if (strcmp(v, "none") == 0) o.root_motion = AM_ROOT_MOTION_NONE;
            else return am_cli_usage("shape", "--root-motion takes bone, inplace or none, got '%s'", v);
        } else if ((v = am_cli_value(argc, argv, &i, "--out")) || (v = am_cli_value(argc, argv, &i, "-o"))) {
            out_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("shape", "unknown option or missing value '%s'", argv[i]);
        } else if (motion) {
            return am_cli_usage("shape", "one MOTION at a time (got '%s' and '%s')", motion, argv[i]);
        } else {
            motion = argv[i];
        }
    }
    if (!motion) return am_cli_usage("shape", "missing MOTION.json");
    if (!rig_path) return am_cli_usage("shape", "missing --rig RIG.json");
    if (!out_path) return am_cli_usage("shape", "missing -o CLIP.json");
    if (am_cli_out_file("shape", out_path, AM_CLI_FMT(AM_CLI_FMT_JSON)) == AM_CLI_FMT_NONE) return 2;
    /* CLIP.json and CLIP.shape_report.json, one set in CLIP's folder */
    char dir[1024], clip_name[256], report_name[300];
    const char *slash = strrchr(out_path, '/');
    size_t dl = slash ? (size_t)(slash - out_path) : 0;
    if (dl >= sizeof dir || strlen(slash ? slash + 1 : out_path) >= sizeof clip_name - 1)
        return am_cli_usage("shape", "-o %s: path too long", out_path);
    if (slash) memcpy(dir, out_path, dl), dir[dl] = '\0';
    else snprintf(dir, sizeof dir, ".");
    if (slash && dl == 0) snprintf(dir, sizeof dir, "/");
    snprintf(clip_name, sizeof clip_name, "%s", slash ? slash + 1 : out_path);
    size_t stem = strlen(clip_name) - 5; /* ".json", checked above */
    snprintf(report_name, sizeof report_name, "%.*s.shape_report.json", (int)stem, clip_name);
    const char *names[2] = {clip_name, report_name};
    am_outset *set = NULL;
    int rc = am_cli_outputs("shape", dir, names, 2, &set);
    if (rc) return rc;
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_shape_result *r = NULL;
    am_status s = am_rig_load(rig_path, &rig, &err);
    if (s == AM_OK) s = am_motion_load(motion, rig, &mo, &err);
    if (s == AM_OK) {
        s = am_shape_run(rig, mo, &o, &r, &err);
        if (s != AM_OK && !err.file[0]) snprintf(err.file, sizeof err.file, "%s", motion);
    }
    if (s == AM_OK) {
        am_cli_print_warnings("shape", &r->warnings);
        am_free(r->clip->extra_json);
        r->clip->extra_json = NULL;
        s = ami_clip_extra(r, o.loop, o.root_motion, &r->clip->extra_json, &err);
    }
    if (s == AM_OK) s = am_motion_write(r->clip, am_outset_path(set, clip_name), &err);
    if (s == AM_OK) s = ami_shape_report(am_outset_path(set, report_name), motion, r, o.loop, &err);
    if (s != AM_OK) rc = am_cli_fail_out("shape", set, &err);
    else if ((rc = am_cli_commit("shape", set)) == 0) {
        char f[32];
        am_cli_log("wrote %s: %zu frames at %s fps%s, %.3g m/s; seam jumps %.3g%% / %.3g%% (were %.3g%% / %.3g%%; "
                   "clip mean step %.3g%%)",
                   out_path, r->clip->frame_count, am_cli_fps(r->clip->fps, f), o.loop ? ", a loop" : "",
                   r->report.speed_mps, r->report.after.position_jump_pct, r->report.after.velocity_jump_pct,
                   r->report.before.position_jump_pct, r->report.before.velocity_jump_pct, r->report.mean_step_pct);
    }
    am_shape_result_free(r);
    am_motion_free(mo);
    am_rig_free(rig);
    return rc;
}
