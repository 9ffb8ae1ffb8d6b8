/* `anymove ik POSITIONS --rig RIG -o DIR`: joint positions -> local rotations (docs/ik.md): the
 * rig fitted to the positions by least squares (anymove/fit.h), from the analytic IK's start. */
#include <math.h>
#include <string.h>

#include "anymove/fit.h"
#include "anymove/ik.h"
#include "anymove/mocap.h"
#include "anymove/metrics.h"
#include "cli.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "report.h"
#include "scene.h"

static void ami_ik_help(FILE *out)
{
    fprintf(out,
            "usage: anymove ik POSITIONS --rig RIG.json -o DIR [--reference motion.json | --no-reference]\n"
            "                 [--fps F] [--scale S] [--noise M] [--smooth auto|X] [--creature C.json]\n"
            "                 [--analytic]\n"
            "                 [--temporal W] [--twist-weight W] [--no-twist] [--no-temporal]\n"
            "                 [--no-limits] [--report] [--render] [--quiet]\n\n"
            "Recovers every bone's local rotation from joint positions, for any rig: the rig (its\n"
            "bone lengths, its limits) fitted to the positions by least squares over the whole clip,\n"
            "with temporal smoothness and a robust loss, from an analytic IK start. A missing joint\n"
            "(NaN) is missing data; exact positions are reproduced exactly.\n"
            "POSITIONS: joints.npz (joints [T,J,3] metres, names [J], fps), a 3D tracker file (TRC,\n"
            "C3D, anipose CSV, points3d.h5) or a motion.json with joints and joint_names. Names must be\n"
            "rig joints; rig joints missing from POSITIONS and joints only carried by helper bones are\n"
            "not used.\n"
            "--noise M: the positions' per-axis noise in metres (default: estimated from how far the\n"
            "observed bone lengths stray from the rig's).\n"
            "--smooth auto|X: how much the fit smooths in time, a multiplier of the default weights\n"
            "(X > 0), or auto (the default): chosen per clip by 4-fold cross-validation, fitting with\n"
            "a quarter of the observed joints hidden and keeping the multiplier that predicts them\n"
            "best (docs/ik.md; costs 24 fits of at most 120 frames). Exact positions skip it.\n"
            "--creature: its contact joints are planted and foot-locked as in solve.\n"
            "--analytic: the closed-form IK alone (per frame, no fit; every joint it uses must be\n"
            "present in every frame).\n"
            "--reference: a motion of the rig whose frame 0 holds the true rotations of frame 0\n"
            "(pose2rot's protocol); the default is none (rest pose priors).\n"
            "--scale S: metres per unit of POSITIONS (0.01 for centimetres); the body size is\n"
            "printed and an implausible one is warned about.\n"
            "Writes DIR/motion.json, DIR/animation.glb, DIR/animation.bvh, DIR/angles.csv and\n"
            "DIR/angles.mot (joint angles: flexion, abduction, rotation about each bone's rest axes),\n"
            "and DIR/report.json (FK position error: cm, %% of body size, per joint; solve time).\n"
            "--report adds DIR/report.html (report.json, per-joint error against POSITIONS, per-bone\n"
            "angles, a 3D viewer of animation.glb), --render DIR/render_layout.png and\n"
            "render_three_quarter.png (the middle frame, bone shapes and joints).\n\n"
            "examples:\n"
            "  anymove convert ../shared/data/gltf/khronos_fox/Fox.glb --clip Walk --scale 0.01 -o out/fox\n"
            "  anymove ik out/fox/motion.json --rig out/fox/rig.json -o out/fox_ik\n");
}

/* Positions in the rig's joint order: pos [T][J][3] (0 where unobserved), mask [J]. */
typedef struct ami_positions {
    size_t T;
    double fps;
    double *pos;
    uint8_t *mask;
} ami_positions;

/* joints.npz (SPEC 4.2.3), a 3D tracker file, or a motion.json's joints, bound to the rig. The
 * analytic IK needs the joints it uses (observed, on a non-helper bone) in every frame; the fit
 * takes missing ones as missing (NaN). file_out (may be NULL) keeps the joints as read. */
static am_status ami_load_positions(const char *path, const am_rig *rig, bool need_all, ami_positions *out,
                                    am_joints **file_out, am_error *err)
{
    size_t n = strlen(path), J = rig->joint_count;
    am_joints *file = NULL, view = {0};
    am_motion *mo = NULL;
    const am_joints *jt = &view;
    uint8_t *usable = NULL;
    am_status st = AM_OK;
    am_track_format fmt = am_track_format_guess(path);
    if (n > 4 && strcmp(path + n - 4, ".npz") == 0) {
        AMI_TRY(am_joints_load(path, &file, err));
        jt = file;
    } else if (fmt != AM_TRACK_AUTO && am_track_format_is_3d(fmt)) {
        AMI_TRY(am_import_3d(path, fmt, NULL, &file, err));
        jt = file;
    } else {
        AMI_TRY(am_motion_load(path, NULL, &mo, err));
        if (!mo->joints || !mo->joint_names) {
            st = AM_FAIL_AT(err, AM_E_SCHEMA, path, 0, 0, "has no 'joints' with 'joint_names'");
            goto done;
        }
        view = (am_joints){.frame_count = mo->frame_count, .joint_count = mo->joint_count,
                           .joints = mo->joints, .names = mo->joint_names, .fps = mo->fps};
    }
    size_t T = jt->frame_count;
    out->pos = am_alloc_array(T * J * 3, sizeof(double));
    out->mask = am_alloc(J);
    usable = am_alloc(J);
    if (!out->pos || !out->mask || !usable) {
        st = AM_FAIL(err, AM_E_NOMEM, "positions");
        goto done;
    }
    if ((st = am_joints_bind(jt, rig, out->pos, out->mask, err)) != AM_OK) {
        am_error_set_file(err, path);
        goto done;
    }
    am_ik_default_mask(rig, usable);
    for (size_t j = 0; j < J; j++) out->mask[j] &= usable[j];
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < J; j++) {
            const double *p = out->pos + (t * J + j) * 3;
            if (need_all && out->mask[j] && !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) {
                st = AM_FAIL_AT(err, AM_E_NONFINITE, path, 0, 0,
                                "joint '%s' is missing at frame %zu (--analytic needs every joint it "
                                "uses in every frame)",
                                rig->joint_names[j], t);
                goto done;
            }
        }
    out->T = T;
    out->fps = jt->fps;
    if (file_out && !file && jt == &view) {
        /* a motion's joints: copied, the motion goes */
        st = am_joints_create(view.frame_count, view.joint_count, false, file_out, err);
        if (st == AM_OK) {
            (*file_out)->fps = view.fps;
            memcpy((*file_out)->joints, view.joints, view.frame_count * view.joint_count * 3 * sizeof(double));
            for (size_t j = 0; j < view.joint_count && st == AM_OK; j++)
                if (!((*file_out)->names[j] = am_strdup(view.names[j]))) st = AM_FAIL(err, AM_E_NOMEM, "positions");
        }
    } else if (file_out) {
        *file_out = file;
        file = NULL;
    }
done:
    am_free(usable);
    am_joints_free(file);
    am_motion_free(mo);
    return st;
}

static am_status ami_write_report(const char *path, const am_rig *rig, const ami_positions *P,
                                  const am_motion *mo, bool with_ref, double solve_s, const am_fit_result *fit,
                                  am_error *err)
{
    size_t J = rig->joint_count;
    double *per = am_alloc_array(J, sizeof *per);
    if (!per) return AM_FAIL(err, AM_E_NOMEM, "report");
    am_stats st;
    am_status s = am_joint_position_error(mo->joints, P->pos, P->T, J, P->mask, per, &st, err);
    if (s != AM_OK) {
        am_free(per);
        return s;
    }
    double size = am_body_size(P->pos, J, P->mask);
    am_buf o = {0};
    ami_jw w;
    ami_jw_begin(&w, &o, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_int(&w, "frames", (int64_t)P->T);
    ami_jw_int(&w, "joints_used", (int64_t)(st.count / (P->T ? P->T : 1)));
    ami_jw_bool(&w, "reference", with_ref);
    ami_jw_string(&w, "method", fit ? "fit" : "analytic");
    if (fit) {
        ami_jw_record(&w, "fit");
        ami_jw_number(&w, "noise_m", fit->point_noise);
        ami_jw_bool(&w, "noise_estimated", fit->point_noise_estimated);
        ami_jw_int(&w, "windows", (int64_t)fit->windows);
        ami_jw_int(&w, "lm_iterations", (int64_t)fit->lm_iterations);
        ami_jw_int(&w, "plants", (int64_t)fit->plant_count);
        ami_jw_number(&w, "smooth", fit->smooth_points);
        ami_jw_bool(&w, "smooth_auto", fit->smooth_auto);
        ami_jw_close(&w);
    }
    ami_jw_number(&w, "solve_ms", solve_s * 1e3);
    ami_jw_number(&w, "frames_per_s", solve_s > 0 ? (double)P->T / solve_s : 0.0);
    ami_jw_record(&w, "fk_error");
    am_cli_jw_position_error(&w, &st, size);
    ami_jw_close(&w);
    ami_jw_record(&w, "per_joint_cm");
    for (size_t j = 0; j < J; j++)
        if (P->mask[j]) ami_jw_number(&w, rig->joint_names[j], 100 * per[j]);
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_free(per);
    s = ami_jw_write_file(&w, path, err);
    if (s == AM_OK) am_cli_log("FK error: mean %.3g cm, max %.3g of body size", 100 * st.mean,
                           size > 0 ? st.max / size : 0.0);
    am_buf_free(&o);
    return s;
}

/* --report and --render: the positions ik was given are the truth of the per-joint plot (NaN
 * where a joint was not used). */
static am_status ami_pictures(am_cli_pictures *pic, const char *pos_path, const am_rig *rig, const am_motion *mo,
                              const ami_positions *P, am_outset *set, am_error *err)
{
    size_t J = rig->joint_count;
    double *truth = am_alloc_array(P->T * J * 3 + 1, sizeof(double));
    char *text = NULL;
    size_t len = 0;
    am_status s = truth ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "report");
    for (size_t t = 0; s == AM_OK && t < P->T; t++)
        for (size_t j = 0; j < J; j++)
            for (int c = 0; c < 3; c++)
                truth[(t * J + j) * 3 + c] = P->mask[j] ? P->pos[(t * J + j) * 3 + c] : NAN;
    if (s == AM_OK && pic->report) s = am_file_read(am_outset_path(set, "report.json"), 0, &text, &len, err);
    if (s == AM_OK) {
        pic->title = pos_path, pic->rig = rig, pic->motion = mo, pic->truth = truth, pic->gate_text = text;
        s = am_cli_write_pictures("ik", pic, set, err);
    }
    am_free(text);
    am_free(truth);
    return s;
}

int am_cmd_ik(int argc, char **argv)
{
    const char *pos_path = NULL, *rig_path = NULL, *out_dir = NULL, *ref_path = NULL, *cr_path = NULL, *v;
    bool no_ref = false, analytic = false;
    am_fit_opts fo = {.flags = AM_FIT_SMOOTH_AUTO};
    bool smooth_given = false;
    double fps_override = 0, scale = 1;
    am_ik_opts opts = {0};
    am_cli_pictures pic = {.glb = "animation.glb", .frame_layout = true};
    for (int i = 1; i < argc; i++) {
        if (am_cli_is_help(argv[i])) {
            ami_ik_help(stdout);
            return 0;
        } else if (am_cli_flag(argv[i], "--quiet") || am_cli_flag(argv[i], "-q")) {
        } else if ((v = am_cli_value(argc, argv, &i, "--rig"))) {
            rig_path = v;
        } else if ((v = am_cli_value(argc, argv, &i, "-o")) || (v = am_cli_value(argc, argv, &i, "--out"))) {
            out_dir = v;
        } else if ((v = am_cli_value(argc, argv, &i, "--reference"))) {
            ref_path = v;
        } else if (am_cli_flag(argv[i], "--report")) {
            pic.report = true;
        } else if (am_cli_flag(argv[i], "--render")) {
            pic.render = true;
        } else if (am_cli_flag(argv[i], "--no-reference")) {
            no_ref = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--fps"))) {
            if (!am_cli_double("ik", "--fps", v, &fps_override)) return 2;
            if (!(fps_override > 0)) return am_cli_usage("ik", "--fps must be positive");
        } else if ((v = am_cli_value(argc, argv, &i, "--scale"))) {
            if (!am_cli_scale("ik", v, &scale)) return 2;
        } else if ((v = am_cli_value(argc, argv, &i, "--temporal"))) {
            if (!am_cli_double("ik", "--temporal", v, &opts.temporal)) return 2;
            if (!(opts.temporal >= 0 && opts.temporal <= 1)) return am_cli_usage("ik", "--temporal is in [0, 1]");
            if (opts.temporal == 0) opts.flags |= AM_IK_NO_TEMPORAL;
        } else if ((v = am_cli_value(argc, argv, &i, "--twist-weight"))) {
            if (!am_cli_double("ik", "--twist-weight", v, &opts.twist_weight)) return 2;
            if (!(opts.twist_weight > 0)) return am_cli_usage("ik", "--twist-weight must be positive");
        } else if (am_cli_flag(argv[i], "--no-twist")) {
            opts.flags |= AM_IK_NO_GRANDCHILD_TWIST;
        } else if (am_cli_flag(argv[i], "--no-temporal")) {
            opts.flags |= AM_IK_NO_TEMPORAL;
        } else if (am_cli_flag(argv[i], "--no-limits")) {
            opts.flags |= AM_IK_NO_LIMITS;
            fo.flags |= AM_FIT_NO_LIMITS;
        } else if (am_cli_flag(argv[i], "--analytic")) {
            analytic = true;
        } else if ((v = am_cli_value(argc, argv, &i, "--noise"))) {
            if (!am_cli_double("ik", "--noise", v, &fo.point_noise)) return 2;
            if (!(fo.point_noise > 0)) return am_cli_usage("ik", "--noise must be positive (metres)");
        } else if ((v = am_cli_value(argc, argv, &i, "--smooth"))) {
            smooth_given = true;
            if (strcmp(v, "auto") == 0) {
                fo.flags |= AM_FIT_SMOOTH_AUTO;
            } else {
                if (!am_cli_double("ik", "--smooth", v, &fo.smooth_points)) return 2;
                if (!(fo.smooth_points > 0)) return am_cli_usage("ik", "--smooth is auto or a positive multiplier");
                fo.flags &= ~(uint32_t)AM_FIT_SMOOTH_AUTO;
            }
        } else if ((v = am_cli_value(argc, argv, &i, "--creature"))) {
            cr_path = v;
        } else if (argv[i][0] == '-') {
            return am_cli_usage("ik", "unknown option '%s'", argv[i]);
        } else if (!pos_path) {
            pos_path = argv[i];
        } else {
            return am_cli_usage("ik", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!pos_path) return am_cli_usage("ik", "missing POSITIONS");
    if (!rig_path) return am_cli_usage("ik", "missing --rig RIG.json");
    if (!out_dir) return am_cli_usage("ik", "missing -o DIR");
    if (ref_path && no_ref) return am_cli_usage("ik", "--reference and --no-reference exclude each other");
    if (analytic && (fo.point_noise > 0 || cr_path || smooth_given))
        return am_cli_usage("ik", "--noise, --smooth and --creature are the fit's: not with --analytic");
    if (!am_cli_out_dir("ik", out_dir, "motion.json, animation.glb, animation.bvh, angles.csv, angles.mot, report.json"))
        return 2;
    const char *names[10] = {"motion.json", "animation.glb", "animation.bvh", "angles.csv", "angles.mot", "report.json"};
    size_t name_count = 6;
    am_cli_picture_names(&pic, names, &name_count);
    am_outset *set = NULL;
    int rc = am_cli_outputs("ik", out_dir, names, name_count, &set);
    if (rc) return rc;

    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *ref = NULL, *mo = NULL;
    am_creature *cr = NULL;
    am_joints *file = NULL;
    am_fit_result *fit = NULL;
    double *conf = NULL;
    ami_positions P = {0};
    if (am_rig_load(rig_path, &rig, &err) != AM_OK ||
        ami_load_positions(pos_path, rig, analytic, &P, &file, &err) != AM_OK ||
        (ref_path && am_motion_load(ref_path, rig, &ref, &err) != AM_OK) ||
        (cr_path && am_creature_load(cr_path, &cr, &err) != AM_OK))
        goto fail;
    if (scale != 1.0)
        for (size_t k = 0; k < P.T * rig->joint_count * 3; k++) P.pos[k] *= scale;
    am_cli_body_size("ik", pos_path, am_body_size(P.pos, rig->joint_count, P.mask));
    if (fps_override > 0) P.fps = fps_override;
    am_warning_list w = {0};
    opts.ctx = am_cli_context();
    double t0 = am_now();
    am_status is;
    if (analytic) {
        if (am_motion_create(rig, P.T, P.fps, &mo, &err) != AM_OK) {
            am_error_set_file(&err, pos_path);
            goto fail;
        }
        am_ik_job job = {.rig = rig, .frame_count = P.T, .positions = P.pos, .joint_mask = P.mask,
                         .reference = ref, .opts = &opts, .out = mo, .warnings = &w};
        is = am_ik_run(&job, &err);
    } else {
        /* The positions in the rig's order, the joints ik does not use missing (NaN), with the
         * file's confidences where it has them. */
        const size_t J = rig->joint_count;
        for (size_t t = 0; t < P.T; t++)
            for (size_t j = 0; j < J; j++)
                if (!P.mask[j])
                    for (int a = 0; a < 3; a++) P.pos[(t * J + j) * 3 + (size_t)a] = NAN;
        if (file && file->conf) {
            conf = am_alloc_array(P.T * J, sizeof *conf);
            if (!conf) {
                AM_FAIL_AT(&err, AM_E_NOMEM, pos_path, 0, 0, "confidences");
                goto fail;
            }
            for (size_t q = 0; q < file->joint_count; q++) {
                int j = am_rig_find_joint(rig, file->names[q]);
                if (j >= 0)
                    for (size_t t = 0; t < P.T; t++) conf[t * J + (size_t)j] = file->conf[t * file->joint_count + q];
            }
        }
        am_joints view = {.frame_count = P.T, .joint_count = J, .joints = P.pos, .names = rig->joint_names,
                          .fps = am_fps_valid(P.fps) ? P.fps : 30.0, .conf = conf};
        am_fit_input in = {.rig = rig, .creature = cr, .points = &view, .reference = ref, .start = &opts};
        fo.ctx = opts.ctx;
        is = am_fit(&in, &fo, &fit, &err);
        if (is == AM_OK) {
            am_cli_print_warnings("ik", &fit->warnings);
            if (fit->smooth_auto) am_cli_log("smoothness x%.3g, chosen by cross-validation", fit->smooth_points);
            mo = fit->motion;
            fit->motion = NULL;
        }
    }
    am_cli_print_warnings("ik", &w);
    am_warning_list_free(&w);
    if (is != AM_OK) {
        am_error_set_file(&err, pos_path);
        goto fail;
    }
    double solve_s = am_now() - t0; /* the library reported the stage */
    const am_motion *clips[1] = {mo};
    if (am_motion_compute_joints(mo, rig, &err) != AM_OK ||
        am_motion_write(mo, am_outset_path(set, "motion.json"), &err) != AM_OK ||
        am_angles_csv_write(am_outset_path(set, "angles.csv"), rig, mo, &err) != AM_OK ||
        am_angles_mot_write(am_outset_path(set, "angles.mot"), rig, mo, &err) != AM_OK ||
        am_cli_write_animation(AM_CLI_FMT_GLB, rig, clips, NULL, 1, NULL, am_outset_path(set, "animation.glb"), &err) !=
            AM_OK ||
        am_cli_write_animation(AM_CLI_FMT_BVH, rig, clips, NULL, 1, NULL, am_outset_path(set, "animation.bvh"), &err) !=
            AM_OK ||
        ami_write_report(am_outset_path(set, "report.json"), rig, &P, mo, ref != NULL, solve_s, fit, &err) != AM_OK)
        goto fail;
    if ((pic.report || pic.render) && ami_pictures(&pic, pos_path, rig, mo, &P, set, &err) != AM_OK) goto fail;
    if ((rc = am_cli_commit("ik", set)) == 0) {
        char list[256];
        am_cli_join_names(names, name_count, list, sizeof list);
        am_cli_log("wrote %s/{%s}", out_dir, list);
    }
    goto done;
fail:
    rc = am_cli_fail_out("ik", set, &err);
done:
    am_fit_result_free(fit);
    am_joints_free(file);
    am_free(conf);
    am_creature_free(cr);
    am_motion_free(mo);
    am_motion_free(ref);
    am_free(P.pos);
    am_free(P.mask);
    am_rig_free(rig);
    return rc;
}
