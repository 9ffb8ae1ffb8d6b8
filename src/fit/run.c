/* am_fit: the observations on one clock and in the rig's joint order, the start (the analytic IK
 * of anymove/ik.h on 3D positions, gaps filled), then the clip in overlapping windows
 * (fit.c: annealed fit, left/right swap repair, contacts and foot lock), and the summary.
 *
 * Windows: a clip of at most `window` frames is one window. A longer one is cut into windows of
 * `window` frames that start `window_stride` frames apart; every window after the first starts
 * two frames before the frames it commits and holds those two at the previous window's result
 * (box bounds lower = upper), so the acceleration and velocity terms see the seam as any other
 * frame, and the frames a window solved beyond its committed ones start the next from a solved
 * pose. The solver's memory is then O(window); only the observations, the start and the result
 * are O(frames), a few doubles per joint and frame. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/ik.h"
#include "core/internal.h"
#include "fit_internal.h"
#include "math/math_internal.h"

/* One window at most this long by default; longer clips use windows of AMI_WINDOW frames. */
#define AMI_SINGLE_WINDOW 600
#define AMI_WINDOW 400

static am_fit_opts ami_fit_opts_defaults(const am_fit_opts *in)
{
    am_fit_opts o = in ? *in : (am_fit_opts){0};
    if (o.scale_start_px <= 0) o.scale_start_px = 40.0;
    if (o.scale_end_px <= 0) o.scale_end_px = 6.0;
    if (o.w_accel <= 0) o.w_accel = 150.0;
    if (o.w_accel_trans <= 0) o.w_accel_trans = 2000.0;
    if (o.w_vel <= 0) o.w_vel = 1.0;
    if (o.w_rest <= 0) o.w_rest = 0.5;
    if (o.w_prior_points <= 0) o.w_prior_points = 0.1;
    if (o.w_ground <= 0) o.w_ground = 2000.0;
    if (o.w_contact <= 0) o.w_contact = 3000.0;
    if (o.accel_huber_px <= 0) o.accel_huber_px = 1.0;
    if (o.conf_power <= 0) o.conf_power = 1.0;
    if (o.point_px <= 0) o.point_px = 3.0;
    if (o.smooth_points <= 0) o.smooth_points = 1.0;
    if (o.iterations == 0) o.iterations = 2;
    return o;
}

void am_fit_result_free(am_fit_result *r)
{
    if (!r) return;
    am_motion_free(r->motion);
    ami_strings_free(r->camera_names, r->camera_count);
    am_free(r->reproj_px);
    am_free(r->reproj_p95_px);
    ami_strings_free(r->contact_names, r->contact_count);
    am_free(r->contact_joint);
    am_free(r->contact);
    am_free(r->lock_moved_mean_mm);
    am_free(r->lock_moved_max_mm);
    am_warning_list_free(&r->warnings);
    am_free(r);
}

static int ami_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double am_fit_point_noise(const am_rig *rig, const double *pos, size_t T)
{
    const size_t J = rig->joint_count, B = rig->bone_count;
    double *dev = am_alloc_array(T * B + 1, sizeof(double));
    if (!dev) return 0.0;
    size_t n = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t b = 0; b < B; b++) {
            if (rig->is_helper && rig->is_helper[b]) continue;
            const double *h = pos + (t * J + (size_t)rig->head_joint[b]) * 3, *e = pos + (t * J + (size_t)rig->tail_joint[b]) * 3;
            if (!isfinite(h[0]) || !isfinite(e[0])) continue;
            dev[n++] = am_vec3_dist(h, e) - rig->length[b];
        }
    double sigma = 0.0;
    if (n) {
        qsort(dev, n, sizeof *dev, ami_cmp_d);
        double med = dev[n / 2];
        for (size_t i = 0; i < n; i++) dev[i] = fabs(dev[i] - med);
        qsort(dev, n, sizeof *dev, ami_cmp_d);
        /* A length error is the radial part of two points' noise: sigma sqrt(2) per axis pair. */
        sigma = 1.4826 * dev[n / 2] / sqrt(2.0);
    }
    am_free(dev);
    return sigma;
}

/* The clip: observations in rig joint order on the common clock, the start, the output. */
typedef struct ami_clip {
    const am_fit_input *in;
    const am_rig *rig;
    am_fit_opts o;
    size_t T, J, B, P, C;
    double fps;
    ami_chains ch;
    const am_camera **cams;
    double *uv, *conf;          /* [C][T][J][2], [C][T][J] */
    double *pts, *pw;           /* [T][J][3], [T][J] */
    double *init;               /* [T][J][3] start positions, gaps filled */
    uint8_t *init_mask;         /* [J] joints the start can use */
    double *prior;              /* [T][P] or NULL */
    double *lever;              /* [B] */
    double *acc_w, *vel_w;      /* [B] smoothness weights of the angles */
    double acc_w_trans;
    double *smooth_t;           /* [T] the smoothness's multiplier per frame, or NULL: 1 */
    int32_t *cj, *pairs;
    size_t Cc, np;
    am_motion *start;           /* the analytic IK over the clip */
} ami_clip;

static void ami_clip_free(ami_clip *k)
{
    ami_chains_free(&k->ch);
    am_free(k->cams);
    am_free(k->uv);
    am_free(k->conf);
    am_free(k->pts);
    am_free(k->pw);
    am_free(k->init);
    am_free(k->init_mask);
    am_free(k->prior);
    am_free(k->lever);
    am_free(k->acc_w);
    am_free(k->vel_w);
    am_free(k->smooth_t);
    am_free(k->cj);
    am_free(k->pairs);
    am_motion_free(k->start);
}

static bool ami_camera_finite(const am_camera *c)
{
    for (int i = 0; i < 9; i++)
        if (!isfinite(c->K[i]) || !isfinite(c->R[i])) return false;
    for (int i = 0; i < 5; i++)
        if (!isfinite(c->dist[i])) return false;
    for (int i = 0; i < 3; i++)
        if (!isfinite(c->t[i]) || !isfinite(c->rvec[i])) return false;
    return true;
}

/* A list of names for an error message: "'a', 'b', ..." (at most ~400 characters). */
static void ami_name_list(am_buf *b, const char *name, size_t *n)
{
    if (b->len < 400) am_buf_printf(b, "%s'%s'", *n ? ", " : "", name);
    else if (b->len < 405) am_buf_printf(b, ", ...");
    (*n)++;
}

static am_status ami_clip_det(ami_clip *k, am_error *err)
{
    const am_mdet *d = k->in->det;
    const am_calib *cal = k->in->calib;
    const size_t C = d->camera_count, T = k->T, J = k->J;
    AMI_CHECK(err, cal, AM_E_ARG, "2D detections need their cameras (a calibration)");
    AMI_CHECK(err, C > 0, AM_E_EMPTY, "the detections have no camera");
    k->C = C;
    k->cams = am_alloc_array(C, sizeof *k->cams);
    int32_t *map = am_alloc_array(d->joint_count + 1, sizeof *map);
    k->uv = am_alloc_array(C * T * J * 2, sizeof(double));
    k->conf = am_alloc_array(C * T * J, sizeof(double));
    am_status st = AM_OK;
    am_buf names = {0};
    size_t n = 0;
    if (!k->cams || !map || !k->uv || !k->conf) {
        st = AM_FAIL(err, AM_E_NOMEM, "detections of %zu cameras x %zu frames", C, T);
        goto done;
    }
    for (size_t c = 0; c < C; c++) {
        int q = am_calib_find(cal, d->cameras[c]);
        if (q < 0) ami_name_list(&names, d->cameras[c], &n);
        else k->cams[c] = &cal->cameras[q];
    }
    if (n) {
        am_buf_append(&names, "", 1);
        st = AM_FAIL(err, AM_E_NAME, "%zu camera(s) of the detections not in the calibration: %s", n,
                     names.data ? names.data : "?");
        goto done;
    }
    for (size_t c = 0; c < C; c++)
        if (!ami_camera_finite(k->cams[c])) {
            st = AM_FAIL(err, AM_E_NONFINITE, "camera '%s': a NaN or infinite parameter", k->cams[c]->name);
            goto done;
        }
    for (size_t q = 0; q < d->joint_count; q++) {
        map[q] = am_rig_find_joint(k->rig, d->names[q]);
        if (map[q] < 0) ami_name_list(&names, d->names[q], &n);
    }
    if (n) {
        am_buf_append(&names, "", 1);
        st = AM_FAIL(err, AM_E_NAME, "%zu of the %zu detected joint name(s) are not joints of the rig: %s", n,
                     d->joint_count, names.data ? names.data : "?");
        goto done;
    }
    for (size_t c = 0; c < C; c++) {
        size_t seen = 0;
        for (size_t t = 0; t < T; t++)
            for (size_t q = 0; q < d->joint_count; q++) {
                double uv[2], conf;
                size_t i = (c * T + t) * J + (size_t)map[q];
                if (!am_mdet_reading(d, c, t, q, uv, &conf) || !(conf > 0)) continue;
                k->uv[2 * i] = uv[0];
                k->uv[2 * i + 1] = uv[1];
                k->conf[i] = pow(conf > 1 ? 1.0 : conf, k->o.conf_power);
                seen++;
            }
        if (!seen) {
            st = AM_FAIL(err, AM_E_EMPTY,
                         "camera '%s' sees nothing: no detection of a rig joint has confidence > 0 and finite "
                         "coordinates",
                         d->cameras[c]);
            goto done;
        }
    }
    if (d->joint_count < J)
        ami_warn(AM_WARN_MISSING_DATA, "%zu rig joint(s) not in the detections: fitted from the others", J - d->joint_count);
done:
    am_buf_free(&names);
    am_free(map);
    return st;
}

/* 3D joints in the rig's order: pos [T][J][3] with NaN where missing. */
static am_status ami_bind_points(const am_joints *jt, const am_rig *rig, double *pos, am_error *err)
{
    const size_t J = rig->joint_count;
    uint8_t *given = am_alloc(J);
    if (!given) return AM_FAIL(err, AM_E_NOMEM, "points");
    am_status st = am_joints_bind(jt, rig, pos, given, err);
    if (st == AM_OK)
        for (size_t t = 0; t < jt->frame_count; t++)
            for (size_t j = 0; j < J; j++)
                if (!given[j])
                    for (int a = 0; a < 3; a++) pos[(t * J + j) * 3 + (size_t)a] = NAN;
    am_free(given);
    return st;
}

static am_status ami_clip_points(ami_clip *k, am_fit_result *res, am_error *err)
{
    const am_joints *jt = k->in->points;
    const size_t T = k->T, J = k->J;
    k->pts = am_alloc_array(T * J * 3, sizeof(double));
    k->pw = am_alloc_array(T * J, sizeof(double));
    if (!k->pts || !k->pw) return AM_FAIL(err, AM_E_NOMEM, "points of %zu frames", T);
    AMI_TRY(ami_bind_points(jt, k->rig, k->pts, err));
    /* conf follows the joint's own index in the file; map through the names. */
    size_t seen = 0;
    for (size_t q = 0; q < jt->joint_count; q++) {
        int j = am_rig_find_joint(k->rig, jt->names[q]);
        if (j < 0) continue;
        for (size_t t = 0; t < T; t++) {
            const double *p = k->pts + (t * J + (size_t)j) * 3;
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) continue;
            double c = jt->conf ? jt->conf[t * jt->joint_count + q] : 1.0;
            if (!(c > 0)) continue;
            k->pw[t * J + (size_t)j] = pow(c > 1 ? 1.0 : c, k->o.conf_power);
            seen++;
        }
    }
    AMI_CHECK(err, seen > 0, AM_E_EMPTY, "every 3D joint is missing");
    double sigma = k->o.point_noise;
    res->point_noise_estimated = !(sigma > 0);
    if (!(sigma > 0)) sigma = am_fit_point_noise(k->rig, k->pts, T);
    /* Exact positions give a sigma of rounding: keep the fit well-conditioned. */
    double size = am_body_size(k->rig->joint_rest, J, NULL);
    double floor = 1e-5 * (size > 0 ? size : 1.0);
    if (!(sigma > floor)) sigma = floor;
    res->point_noise = sigma;
    return AM_OK;
}

/* The start: the analytic IK of the start positions, gaps filled by interpolation in time. */
static am_status ami_clip_start(ami_clip *k, am_error *err)
{
    const size_t T = k->T, J = k->J;
    const am_joints *src = k->in->init ? k->in->init : k->in->points;
    AMI_CHECK(err, src, AM_E_ARG, "the fit needs 3D positions to start from (a triangulation of the detections)");
    AMI_CHECK(err, src->frame_count == T, AM_E_SHAPE, "start positions have %zu frames, the observations %zu",
              src->frame_count, T);
    k->init = am_alloc_array(T * J * 3, sizeof(double));
    k->init_mask = am_alloc(J);
    if (!k->init || !k->init_mask) return AM_FAIL(err, AM_E_NOMEM, "start of %zu frames", T);
    AMI_TRY(ami_bind_points(src, k->rig, k->init, err));
    am_ik_default_mask(k->rig, k->init_mask);
    size_t usable = 0;
    for (size_t j = 0; j < J; j++) {
        bool known = true;
        for (int a = 0; a < 3; a++) known &= ami_fill_track(k->init + 3 * j + (size_t)a, T, J * 3);
        if (!known) {
            k->init_mask[j] = 0;
            for (size_t t = 0; t < T; t++) memset(k->init + (t * J + j) * 3, 0, 3 * sizeof(double));
        }
        usable += k->init_mask[j];
    }
    AMI_CHECK(err, usable > 0, AM_E_EMPTY, "no joint of the rig was ever seen");
    AMI_TRY(am_motion_create(k->rig, T, k->fps, &k->start, err));
    am_ik_opts io = k->in->start ? *k->in->start : (am_ik_opts){0};
    io.ctx = (am_context){0}; /* in this call's scope */
    if (k->o.flags & AM_FIT_NO_LIMITS) io.flags |= AM_IK_NO_LIMITS;
    am_ik_job job = {.rig = k->rig, .frame_count = T, .positions = k->init, .joint_mask = k->init_mask,
                     .reference = k->in->reference, .opts = &io, .out = k->start};
    return am_ik_run(&job, err);
}

static am_status ami_clip_contacts(ami_clip *k, am_fit_result *res, am_error *err)
{
    const am_creature *cr = k->in->creature;
    size_t n = cr && !(k->o.flags & AM_FIT_NO_CONTACTS) ? cr->contact_count : 0;
    k->cj = am_alloc_array(n + 1, sizeof(int32_t));
    res->contact_names = am_alloc_array(n + 1, sizeof(char *));
    if (!k->cj || !res->contact_names) return AM_FAIL(err, AM_E_NOMEM, "contacts");
    for (size_t q = 0; q < n; q++) {
        int j = am_rig_find_joint(k->rig, cr->contacts[q]);
        if (j < 0) {
            ami_warn(AM_WARN_IGNORED_NAME, "creature contact '%s' is not a joint of the rig: skipped", cr->contacts[q]);
            continue;
        }
        if (!(res->contact_names[res->contact_count] = am_strdup(cr->contacts[q])))
            return AM_FAIL(err, AM_E_NOMEM, "contacts");
        res->contact_count++;
        k->cj[k->Cc++] = j;
    }
    return AM_OK;
}

/* The window's buffers, sized for its longest window. */
typedef struct ami_win_bufs {
    double *x, *q0, *d, *lower, *upper, *pose, *axes, *joints, *plant_z;
    uint8_t *plant, *swapped;
} ami_win_bufs;

static void ami_win_bufs_free(ami_win_bufs *w)
{
    am_free(w->x);
    am_free(w->q0);
    am_free(w->d);
    am_free(w->lower);
    am_free(w->upper);
    am_free(w->pose);
    am_free(w->axes);
    am_free(w->joints);
    am_free(w->plant_z);
    am_free(w->plant);
    am_free(w->swapped);
}

/* Frame t of a motion as the fit's parameters x [P] and root reference q0 [4]. */
static void ami_motion_to_x(const am_motion *mo, size_t t, size_t P, size_t B, double *x, double *q0)
{
    memcpy(x, mo->trans + 3 * t, 3 * sizeof(double));
    x[3] = x[4] = x[5] = 0.0;
    memcpy(x + AMI_FIT_ROOT_PARAMS, mo->euler + (t * B + 1) * 3, (P - AMI_FIT_ROOT_PARAMS) * sizeof(double));
    am_quat_normalize(mo->root_quat + 4 * t, q0);
}

/* One window [a, b) of the clip, committing [a + fixed, commit_end); its result goes into the
 * output motion (all its frames: the next window starts from the ones it solves again). */
static am_status ami_window(ami_clip *k, ami_win_bufs *wb, size_t a, size_t b, size_t fixed, size_t commit_end,
                            size_t solved_end, am_fit_result *res, ami_lock_stats *ls, double progress0,
                            double progress1, am_error *err)
{
    const size_t T = b - a, P = k->P, B = k->B;
    am_motion *out = res->motion;
    ami_fit f = {.rig = k->rig, .o = k->o, .T = T, .J = k->J, .B = B, .P = P, .t0 = a, .fixed = fixed,
                 .commit = commit_end - a, .fps = k->fps, .ch = &k->ch, .C = k->C, .Tc = k->T, .cams = k->cams,
                 .v_weight = k->in->v_weight, .uv = k->uv, .conf = k->conf, .pts = k->pts, .pw = k->pw,
                 .x = wb->x, .q0 = wb->q0, .d = wb->d, .lower = wb->lower, .upper = wb->upper,
                 .prior = k->prior, .lever = k->lever, .acc_w = k->acc_w, .vel_w = k->vel_w, .acc_w_trans = k->acc_w_trans, .smooth_t = k->smooth_t, .pose = wb->pose, .axes = wb->axes, .joints = wb->joints,
                 .Cc = k->Cc, .cj = k->cj, .plant = wb->plant, .plant_z = wb->plant_z, .pairs = k->pairs,
                 .np = k->np};
    f.point_scale = res->point_noise > 0 ? k->o.point_px / res->point_noise : 0.0;
    memset(wb->plant, 0, T * (k->Cc ? k->Cc : 1));
    memset(wb->plant_z, 0, T * (k->Cc ? k->Cc : 1) * sizeof(double));
    /* Start: frames the previous window solved from its result, the rest from the analytic IK. */
    for (size_t t = 0; t < T; t++)
        ami_motion_to_x(a + t < solved_end ? out : k->start, a + t, P, B, f.x + t * P, f.q0 + 4 * t);
    for (size_t t = 0; t < T; t++)
        for (size_t p = 0; p < P; p++) {
            double lo = -INFINITY, hi = INFINITY;
            if (p >= AMI_FIT_ROOT_PARAMS && !(k->o.flags & AM_FIT_NO_LIMITS)) {
                size_t bone = (p - AMI_FIT_ROOT_PARAMS) / 3 + 1, axis = (p - AMI_FIT_ROOT_PARAMS) % 3;
                ami_fit_axis_bounds(k->rig, bone, axis, &lo, &hi);
            }
            if (t < fixed) lo = hi = f.x[t * P + p];
            f.lower[t * P + p] = lo;
            f.upper[t * P + p] = hi;
        }
    am_status st = AM_OK;
    ami_fit_recenter(&f);
    const bool swaps = !(k->o.flags & AM_FIT_NO_SWAP_REPAIR) && k->np && k->C;
    if (swaps) {
        size_t n = ami_fit_swap_repair(&f, false, wb->swapped);
        res->swaps_repaired += n;
        /* The start was read off the detections as they came: a frame whose labels were swapped
         * starts with its limbs crossed to the other side, hundreds of pixels from the repaired
         * points, where the annealed Cauchy loss no longer pulls (the fit stays there). Those
         * frames start from their neighbours instead. */
        if (n) ami_fit_restart_frames(&f, wb->swapped);
    }
    /* The fit, annealing the Cauchy scale geometrically from start to end. Coarse stages smooth
     * by velocity alone (4x cheaper factorizations); the last adds acceleration. */
    const int stages = 4;
    for (int s = 0; s < stages; s++) {
        if (!ami_progress("fit", progress0 + (progress1 - progress0) * s / (double)stages)) {
            st = AM_FAIL(err, AM_E_CANCELLED, "fit stopped at frame %zu", a);
            goto done;
        }
        double g = (double)s / (double)(stages - 1);
        double scale = k->o.scale_start_px * pow(k->o.scale_end_px / k->o.scale_start_px, g);
        uint32_t it = s == stages - 1 ? 2 * k->o.iterations : k->o.iterations;
        int temporal = s == stages - 1 ? 2 : 1;
        if (temporal == 2 && f.ws[1]) {
            am_lsq_free(f.ws[1]); /* the coarse stages' workspace is not needed again */
            f.ws[1] = NULL;
        }
        if ((st = ami_fit_solve(&f, scale, temporal, it, err)) < 0) goto done;
        /* A swapped pair is worse in every fit: test each against the fit's own projection. */
        if (s == 1 && swaps) res->swaps_repaired += ami_fit_swap_repair(&f, true, NULL);
    }
    /* Contacts, a second fit holding plants, plants again from it, the foot lock. */
    if (k->Cc) {
        if ((st = ami_fit_find_contacts(&f, AMI_GROW_FIT, err)) < 0) goto done;
        f.use_contacts = true;
        if ((st = ami_fit_solve(&f, k->o.scale_end_px, 2, k->o.iterations, err)) < 0) goto done;
        /* Plants again from the better fit (the first can miss a plant it got a few cm wrong). */
        if ((st = ami_fit_find_contacts(&f, AMI_GROW_FIT, err)) < 0) goto done;
        if ((st = ami_fit_solve(&f, k->o.scale_end_px, 2, k->o.iterations, err)) < 0) goto done;
        /* The lock's plants: the same, grown a little further (a landing frame the fit placed
         * 2-3 cm off still belongs to the plant, and a frame left free slides). */
        if ((st = ami_fit_find_contacts(&f, AMI_GROW_LOCK, err)) < 0) goto done;
        if ((st = ami_fit_foot_lock(&f, !(k->o.flags & AM_FIT_NO_FOOT_LOCK), ls, err)) < 0) goto done;
        if (a == 0) memcpy(res->ground_vel, f.vg, sizeof f.vg);
    }
    for (size_t t = fixed; t < T; t++) {
        const double *xt = f.x + t * P;
        memcpy(out->trans + 3 * (a + t), xt, 3 * sizeof(double));
        ami_fit_root_quat(&f, f.x, t, out->root_quat + 4 * (a + t));
        am_quat_canonical(out->root_quat + 4 * (a + t), out->root_quat + 4 * (a + t));
        double *e = out->euler + (a + t) * B * 3;
        e[0] = e[1] = e[2] = 0.0;
        memcpy(e + 3, xt + AMI_FIT_ROOT_PARAMS, (B - 1) * 3 * sizeof(double));
        if (k->Cc) memcpy(res->contact + (a + t) * k->Cc, wb->plant + t * k->Cc, k->Cc);
    }
done:
    res->lm_iterations += f.iterations_done;
    for (int q = 0; q < 3; q++) am_lsq_free(f.ws[q]);
    return st;
}

/* Reprojection per camera (mean, p95) and the distance to the 3D observations, of the result. */
static am_status ami_summary(ami_clip *k, am_fit_result *res, am_error *err)
{
    const size_t T = k->T, J = k->J, C = k->C;
    const double *jt = res->motion->joints;
    res->reproj_px = am_alloc_array(C + 1, sizeof(double));
    res->reproj_p95_px = am_alloc_array(C + 1, sizeof(double));
    res->camera_names = am_alloc_array(C + 1, sizeof(char *));
    double *e = am_alloc_array(T * J + 1, sizeof(double));
    if (!res->reproj_px || !res->reproj_p95_px || !res->camera_names || !e) {
        am_free(e);
        return AM_FAIL(err, AM_E_NOMEM, "fit summary");
    }
    for (size_t c = 0; c < C; c++) {
        if (!(res->camera_names[c] = am_strdup(k->in->det->cameras[c]))) {
            am_free(e);
            return AM_FAIL(err, AM_E_NOMEM, "fit summary");
        }
        res->camera_count = c + 1;
    }
    for (size_t c = 0; c < C; c++) {
        size_t n = 0;
        double sum = 0.0;
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < J; j++) {
                size_t i = (c * T + t) * J + j;
                if (k->conf[i] <= 0) continue;
                double uv[2];
                am_camera_project(k->cams[c], jt + (t * J + j) * 3, uv, NULL);
                e[n] = hypot(uv[0] - k->uv[2 * i], uv[1] - k->uv[2 * i + 1]);
                sum += e[n++];
            }
        res->reproj_px[c] = res->reproj_p95_px[c] = NAN;
        if (n) {
            qsort(e, n, sizeof *e, ami_cmp_d);
            res->reproj_px[c] = sum / (double)n;
            res->reproj_p95_px[c] = e[(size_t)(0.95 * (double)(n - 1))];
        }
    }
    res->points_mean_m = res->points_p95_m = NAN;
    if (k->pts) {
        size_t n = 0;
        double sum = 0.0;
        for (size_t i = 0; i < T * J; i++) {
            if (k->pw[i] <= 0) continue;
            e[n] = am_vec3_dist(jt + 3 * i, k->pts + 3 * i);
            sum += e[n++];
        }
        if (n) {
            qsort(e, n, sizeof *e, ami_cmp_d);
            res->points_mean_m = sum / (double)n;
            res->points_p95_m = e[(size_t)(0.95 * (double)(n - 1))];
        }
    }
    am_free(e);
    return AM_OK;
}

/* Smoothness weights. 2D input: in pixels of the images, as tuned on the two-view exam (a
 * bone's angle weighted by sqrt(lever / 25 cm); the root rotation as a 25 cm lever). 3D input
 * alone: the same weights on angles (they carry no unit) and the root's path in lengths
 * relative to an eighth of the body (the two-view exam's 25 cm of a 2 m body), so a rig in
 * centimetres or in a model's own units is smoothed like one in metres. The points weigh
 * point_px per noise sigma, so the prior's pull grows with sigma squared: noisier points are
 * smoothed more, and exact points (sigma at its floor) come back exact. Scaling the smoothness
 * with 1 / sigma instead held its bias at a fixed fraction of the body whatever the noise
 * (1e-5 of the body on exact input, no more smoothing at 1 % noise than at 0.4 %). The root's
 * rotation is weighted by its lever like every bone (it swings the whole body): weighted as an
 * eighth of the body, it was the least smoothed angle of the rig (bench/RESULTS.md, issue 12:
 * every dev clip's noise ratio improved by 0.005-0.008). */
static void ami_smoothness_weights(ami_clip *k, const am_fit_result *res)
{
    const am_fit_opts *o = &k->o;
    if (k->in->det || !(res->point_noise > 0)) {
        for (size_t b = 0; b < k->B; b++) {
            k->acc_w[b] = o->w_accel * (b ? sqrt(k->lever[b] / 0.25) : 1.0);
            k->vel_w[b] = o->w_vel;
        }
        k->acc_w_trans = o->w_accel_trans;
        return;
    }
    const double lever_ref = 0.25;
    double size = am_body_size(k->rig->joint_rest, k->J, NULL);
    double L = size > 0 ? size / 8.0 : lever_ref, s = o->smooth_points;
    for (size_t b = 0; b < k->B; b++) {
        double lr = sqrt(k->lever[b] / L);
        k->acc_w[b] = o->w_accel * lr * s;
        k->vel_w[b] = o->w_vel * lr * s;
    }
    k->acc_w_trans = o->w_accel_trans * s * (lever_ref / L);
}

static am_status ami_fit_run(const am_fit_input *in, const am_fit_opts *opts, am_fit_result **out, am_error *err);

/* AM_FIT_SMOOTH_AUTO: the smoothness multiplier by K-fold cross-validation over the observed
 * entries. No one multiplier suits every clip (on bench/ik.sh's noisy input the Dolphin wants
 * 8x today's smoothing, the Fox walk 0.7x): how much a motion may be smoothed depends on how
 * fast it changes against the noise, which only the clip can say. The observed (frame, joint)
 * entries of a window of the clip are dealt at random into K folds; each in turn is hidden
 * (made missing), the rest fitted, and the squared distance of the fit to the hidden entries
 * summed. A hidden entry's noise is independent of the fit, so the mean is the fit's squared
 * error there plus 3 sigma^2: the multiplier that minimises it minimises the fit's error. The
 * multipliers are walked a factor 2 apart from 1 up while the error falls, then down (3 to 5
 * values between 0.25 and 8, K fits each); a parabola in log m through the best and its nearest
 * fitted neighbours places the minimum between them. The noise sigma stays the whole clip's,
 * so every fold weighs the points alike. Fitting only two of the four folds (half the cost)
 * chose as well on the dev clips but worse on held-out ones (Spider 1 0.506 -> 0.564,
 * bench/RESULTS.md): the scores of half the entries are too noisy a guide. */
#define AMI_CV_FOLDS 4
#define AMI_CV_FRAMES 120 /* the window the folds are fitted on: the middle of a longer clip */
#define AMI_CV_SEED 12u
#define AMI_CV_MIN_NOISE 1e-4 /* of the body size: below it the points are taken as exact */
#define AMI_CV_LO (-2.0)      /* log2 of the multipliers searched: 0.25 .. 8 */
#define AMI_CV_HI 3.0
#define AMI_CV_MAX_EVALS 8

/* The folds' fits report no progress of their own: the caller sees one stage. */
static bool ami_cv_quiet(void *user, const am_progress *p)
{
    (void)user;
    (void)p;
    return true;
}

typedef struct ami_cv {
    const ami_clip *k;
    am_fit_input sub;
    am_joints win;
    am_fit_opts so;
    size_t W, a0, Q;
    double step;           /* log2 of the walk's step */
    double *data;          /* [W][Q][3] the window's points, a fold hidden */
    uint8_t *fold;         /* [W][Q] an observed entry's fold, UINT8_MAX if not observed */
    int32_t *map;          /* [Q] rig joint of each input joint, -1 if none */
    double lm[AMI_CV_MAX_EVALS], score[AMI_CV_MAX_EVALS]; /* log2 multipliers fitted, their scores */
    size_t evals, fits;
} ami_cv;

/* The mean squared distance to the hidden entries with the multiplier 2^lm, each fold hidden
 * and fitted in turn; the scores of the multipliers already fitted are kept. */
static am_status ami_cv_eval(ami_cv *c, double lm, double *score, am_error *err)
{
    for (size_t e = 0; e < c->evals; e++)
        if (fabs(c->lm[e] - lm) < 1e-9) {
            *score = c->score[e];
            return AM_OK;
        }
    assert(c->evals < AMI_CV_MAX_EVALS);
    const am_joints *src = c->k->in->points;
    const size_t W = c->W, Q = c->Q, J = c->k->J;
    double sum = 0.0;
    size_t n = 0;
    for (size_t f = 0; f < AMI_CV_FOLDS; f++) {
        if (!ami_progress("fit: smoothing", (double)c->fits++ / (4.0 * AMI_CV_FOLDS)))
            return AM_FAIL(err, AM_E_CANCELLED, "fit stopped while choosing the smoothness");
        memcpy(c->data, src->joints + c->a0 * Q * 3, W * Q * 3 * sizeof(double));
        for (size_t i = 0; i < W * Q; i++)
            if (c->fold[i] == f)
                for (int a = 0; a < 3; a++) c->data[3 * i + (size_t)a] = NAN;
        c->so.smooth_points = exp2(lm);
        am_fit_result *r = NULL;
        am_scope sc;
        am_warning_list dropped = {0}; /* the folds' warnings repeat the clip's own */
        am_scope_enter(&sc, &c->so.ctx);
        am_status st = ami_fit_run(&c->sub, &c->so, &r, err);
        am_scope_leave(&sc, &dropped);
        am_warning_list_free(&dropped);
        AMI_TRY(st);
        for (size_t i = 0; i < W * Q; i++) {
            if (c->fold[i] != f) continue;
            size_t t = i / Q, j = (size_t)c->map[i % Q];
            double d = am_vec3_dist(r->motion->joints + (t * J + j) * 3, src->joints + (c->a0 * Q + i) * 3);
            sum += d * d;
            n++;
        }
        am_fit_result_free(r);
    }
    c->lm[c->evals] = lm;
    c->score[c->evals++] = *score = n ? sum / (double)n : 0.0;
    return AM_OK;
}

/* The multiplier the folds choose, in *chosen. */
static am_status ami_smooth_cv(const ami_clip *k, const am_fit_opts *opts, double sigma, double *chosen,
                               am_error *err)
{
    const am_joints *src = k->in->points;
    const size_t T = k->T, Q = src->joint_count, J = k->J;
    ami_cv c = {.k = k, .Q = Q, .W = T < AMI_CV_FRAMES ? T : AMI_CV_FRAMES, .step = 1.0};
    c.a0 = (T - c.W) / 2;
    const size_t W = c.W;
    am_status st = AM_OK;
    c.data = am_alloc_array(W * Q * 3, sizeof(double));
    c.fold = am_alloc_array(W * Q, 1);
    c.map = am_alloc_array(Q + 1, sizeof(int32_t));
    size_t *order = am_alloc_array(W * Q + 1, sizeof(size_t));
    *chosen = 1.0;
    if (!c.data || !c.fold || !c.map || !order) {
        st = AM_FAIL(err, AM_E_NOMEM, "cross-validation of %zu frames", W);
        goto done;
    }
    /* Folds: the observed entries the fit uses, shuffled (one seed: the same clip always
     * chooses the same), then dealt in turn, so every fold holds a quarter of them. */
    size_t n = 0;
    for (size_t q = 0; q < Q; q++) c.map[q] = am_rig_find_joint(k->rig, src->names[q]);
    for (size_t t = 0; t < W; t++)
        for (size_t q = 0; q < Q; q++) {
            c.fold[t * Q + q] = UINT8_MAX;
            if (c.map[q] < 0 || !(k->pw[(c.a0 + t) * J + (size_t)c.map[q]] > 0)) continue;
            order[n++] = t * Q + q;
        }
    if (n < 4 * AMI_CV_FOLDS) goto done; /* too few to hide any: the default stands */
    ami_rng rng;
    ami_rng_seed(&rng, AMI_CV_SEED);
    for (size_t i = n; i > 1; i--) {
        size_t r = (size_t)(ami_rng_next(&rng) % i), tmp = order[i - 1];
        order[i - 1] = order[r];
        order[r] = tmp;
    }
    for (size_t i = 0; i < n; i++) c.fold[order[i]] = (uint8_t)(i % AMI_CV_FOLDS);
    c.win = *src;
    c.win.frame_count = W;
    c.win.joints = c.data;
    c.win.conf = src->conf ? src->conf + c.a0 * Q : NULL;
    c.sub = *k->in;
    c.sub.points = &c.win;
    c.sub.init = NULL;
    c.so = opts ? *opts : (am_fit_opts){0};
    c.so.flags &= ~(uint32_t)AM_FIT_SMOOTH_AUTO;
    c.so.point_noise = sigma;
    c.so.ctx = am_scope_current() ? am_scope_current()->ctx : (am_context){0};
    c.so.ctx.progress = ami_cv_quiet;
    c.so.ctx.progress_user = NULL;
    /* The walk: from 1 up by the step while the score falls, then down; the ends clamp. */
    double best = 0.0, sb, s;
    if ((st = ami_cv_eval(&c, best, &sb, err)) < 0) goto done;
    for (int dir = 1; dir >= -1; dir -= 2)
        for (;;) {
            double next = best + dir * c.step;
            if (next > AMI_CV_HI) next = AMI_CV_HI;
            if (next < AMI_CV_LO) next = AMI_CV_LO;
            if (fabs(next - best) < 1e-9) break;
            if ((st = ami_cv_eval(&c, next, &s, err)) < 0) goto done;
            if (!(s < sb)) break;
            best = next;
            sb = s;
        }
    /* The vertex of the parabola through the best and its nearest fitted neighbours, kept
     * within half the way to each (where the parabola is still a fair model). */
    double xl = -INFINITY, xr = INFINITY, sl = 0, sr = 0;
    for (size_t e = 0; e < c.evals; e++) {
        if (c.lm[e] < best - 1e-9 && c.lm[e] > xl) xl = c.lm[e], sl = c.score[e];
        if (c.lm[e] > best + 1e-9 && c.lm[e] < xr) xr = c.lm[e], sr = c.score[e];
    }
    double lm = best;
    if (isfinite(xl) && isfinite(xr)) {
        double a = xl - best, b = xr - best, fa = sl - sb, fb = sr - sb;
        /* f(x) = p x^2 + q x through (0, 0), (a, fa), (b, fb) */
        double den = a * b * (a - b), p = (fa * b - fb * a) / den, q = (fb * a * a - fa * b * b) / den;
        if (p > 0) {
            double dx = -q / (2.0 * p);
            if (dx > 0.5 * b) dx = 0.5 * b;
            if (dx < 0.5 * a) dx = 0.5 * a;
            lm += dx;
        }
    }
    *chosen = exp2(lm);
done:
    am_free(c.data);
    am_free(c.fold);
    am_free(c.map);
    am_free(order);
    return st;
}

/* The smoothness varying in time and per bone (issue 12). One multiplier per clip flattens a
 * rare fast event (the Snake's strike: its two frames come back at 0.8-0.9 of the input's
 * error against ~0.5 elsewhere), and a robust acceleration loss did not fix it (the term is
 * already linear there). The evidence is the fit's own residuals: against the observed entries,
 * a fit that smooths right leaves residuals at the noise's level, one that flattens a fast
 * event leaves a structured excess at those frames on the joints that move fast. So, for every
 * bone b and frame t: E = the mean of |fit - observed|^2 / (3 sigma^2) over the entries of the
 * joints b moves (the root: all) in frames t-1..t+1 (n of them); its baseline is the median of
 * E over the clip (the fit's in-sample level, 0.7-1.2 on the bench: the chosen multiplier's
 * bias is in it); where E exceeds it by more than AMI_LOCAL_K chi-square standard deviations
 * (med sqrt(2 / (3n))), rho = (E - K med sqrt(2 / (3n))) / med and b's acceleration and
 * velocity weights at t, t +- 1 are divided by rho (the smallest factor of the three frames is
 * kept). On noise alone E stays within the K deviations (the weights stay 1 almost
 * everywhere). K, the +-1 pool, the 1 / rho and the one refit were chosen on the dev clips
 * (bench/RESULTS.md, issue 12 stop 25): K = 2 or 4, two refits, or no pooling did as well or
 * within 0.001; 1 / rho^2 was worse (dev mean 0.3481 against 0.3405), and so was rho^-0.5 with one
 * factor per frame (0.3431); one factor per frame for every bone a little worse (0.3409, jump
 * clips 0.3946 against 0.3914). *lowered: some weight was lowered. */
#define AMI_LOCAL_K 3.0
#define AMI_LOCAL_POOL 1
static am_status ami_smooth_local(ami_clip *k, const am_fit_result *res, bool *lowered, am_error *err)
{
    const size_t T = k->T, J = k->J, B = k->B;
    const double *jt = res->motion->joints, sig2 = res->point_noise * res->point_noise;
    double *d2 = am_alloc_array(T * J + 1, sizeof(double)), *E = am_alloc_array(3 * T + 1, sizeof(double));
    size_t *n = am_alloc_array(T + 1, sizeof(size_t));
    uint8_t *moved = am_alloc(J + 1);
    *lowered = false;
    am_status st = AM_OK;
    if (!d2 || !E || !n || !moved) {
        st = AM_FAIL(err, AM_E_NOMEM, "smoothness of %zu frames", T);
        goto done;
    }
    double *sorted = E + T, *w = E + 2 * T;
    for (size_t i = 0; i < T * J; i++) {
        double d = am_vec3_dist(jt + 3 * i, k->pts + 3 * i);
        d2[i] = k->pw[i] > 0 ? d * d / (3.0 * sig2) : NAN;
    }
    for (size_t b = 0; b < B; b++) {
        for (size_t j = 0; j < J; j++) {
            moved[j] = b == 0;
            for (int32_t q = k->ch.start[j]; q < k->ch.start[j + 1] && !moved[j]; q++)
                moved[j] = (size_t)k->ch.bones[q] == b;
        }
        size_t m = 0;
        for (size_t t = 0; t < T; t++) {
            double sum = 0.0;
            n[t] = 0;
            size_t u0 = t >= AMI_LOCAL_POOL ? t - AMI_LOCAL_POOL : 0, u1 = t + AMI_LOCAL_POOL < T ? t + AMI_LOCAL_POOL : T - 1;
            for (size_t u = u0; u <= u1; u++)
                for (size_t j = 0; j < J; j++)
                    if (moved[j] && isfinite(d2[u * J + j])) {
                        sum += d2[u * J + j];
                        n[t]++;
                    }
            E[t] = n[t] ? sum / (double)n[t] : 0.0;
            if (n[t]) sorted[m++] = E[t];
        }
        if (!m) continue;
        qsort(sorted, m, sizeof *sorted, ami_cmp_d);
        const double med = sorted[m / 2];
        for (size_t t = 0; t < T; t++) {
            w[t] = 1.0;
            if (!n[t] || !(med > 0)) continue;
            double rho = (E[t] - AMI_LOCAL_K * med * sqrt(2.0 / (3.0 * (double)n[t]))) / med;
            if (rho > 1.0) w[t] = 1.0 / rho;
        }
        for (size_t t = 0; t < T; t++) {
            double v = w[t];
            if (t > 0 && w[t - 1] < v) v = w[t - 1];
            if (t + 1 < T && w[t + 1] < v) v = w[t + 1];
            if (v < 1.0) *lowered = true;
            k->smooth_t[t * B + b] *= v;
        }
    }
done:
    am_free(d2);
    am_free(E);
    am_free(n);
    am_free(moved);
    return st;
}

static am_status ami_fit_run(const am_fit_input *in, const am_fit_opts *opts, am_fit_result **out, am_error *err)
{
    assert(in && in->rig && out);
    *out = NULL;
    double t_start = am_now();
    const am_rig *rig = in->rig;
    ami_clip k = {.in = in, .rig = rig, .o = ami_fit_opts_defaults(opts), .J = rig->joint_count, .B = rig->bone_count,
                  .P = ami_fit_block(rig)};
    AMI_CHECK(err, in->det || in->points, AM_E_ARG, "nothing to fit to: no detections and no 3D joints");
    k.T = in->det ? in->det->frame_count : in->points->frame_count;
    k.fps = in->det ? in->det->fps : in->points->fps;
    if (!am_fps_valid(k.fps)) k.fps = 30.0;
    AMI_CHECK(err, k.T > 0, AM_E_EMPTY, "no frames");
    AMI_CHECK(err, !in->det || !in->points || in->points->frame_count == k.T, AM_E_SHAPE,
              "the detections have %zu frames, the 3D joints %zu", k.T, in->points ? in->points->frame_count : 0);
    const size_t T = k.T, J = k.J, B = k.B, P = k.P;
    if (!in->det && !(opts && opts->w_ground > 0)) k.o.w_ground = 0.0;
    am_status st = AM_OK;
    ami_win_bufs wb = {0};
    ami_lock_stats ls = {0};
    am_fit_result *res = am_alloc(sizeof *res);
    if (!res) return AM_FAIL(err, AM_E_NOMEM, "fit result");
    ami_stage stage = ami_stage_begin("fit: start");
    if ((st = ami_chains_build(rig, &k.ch, err)) < 0) goto done;
    k.lever = am_alloc_array(B, sizeof(double));
    k.acc_w = am_alloc_array(B, sizeof(double));
    k.vel_w = am_alloc_array(B, sizeof(double));
    k.pairs = am_alloc_array(J * 2 + 2, sizeof(int32_t));
    if (!k.lever || !k.acc_w || !k.vel_w || !k.pairs) {
        st = AM_FAIL(err, AM_E_NOMEM, "fit of %zu bones", B);
        goto done;
    }
    for (size_t j = 0; j < J; j++)
        for (int32_t q = k.ch.start[j]; q < k.ch.start[j + 1]; q++) {
            size_t b = (size_t)k.ch.bones[q];
            double d = am_vec3_dist(rig->joint_rest + 3 * j, rig->joint_rest + 3 * (size_t)rig->head_joint[b]);
            if (d > k.lever[b]) k.lever[b] = d;
        }
    for (size_t j = 0; j < J; j++) {
        double d = am_vec3_dist(rig->joint_rest + 3 * j, rig->joint_rest + 3 * (size_t)rig->head_joint[0]);
        if (d > k.lever[0]) k.lever[0] = d;
    }
    k.np = ami_lr_pairs(rig, k.pairs);
    if (in->det && (st = ami_clip_det(&k, err)) < 0) goto done;
    if (in->points && (st = ami_clip_points(&k, res, err)) < 0) goto done;
    if ((st = ami_clip_start(&k, err)) < 0) goto done;
    if ((st = ami_clip_contacts(&k, res, err)) < 0) goto done;
    if (in->points) {
        /* 3D input: the prior is the analytic pose, which holds the twists positions cannot see
         * (from the reference or the grandchildren), not the rest pose. */
        k.prior = am_alloc_array(T * P, sizeof(double));
        if (!k.prior) {
            st = AM_FAIL(err, AM_E_NOMEM, "prior");
            goto done;
        }
        for (size_t t = 0; t < T; t++)
            memcpy(k.prior + t * P + AMI_FIT_ROOT_PARAMS, k.start->euler + (t * B + 1) * 3, (B - 1) * 3 * sizeof(double));
    }
    ami_stage_end(&stage);
    if (in->points && !in->det) {
        res->smooth_points = k.o.smooth_points;
        /* Exact points (sigma near its floor) come back exact whatever the multiplier: nothing
         * to choose, and the folds' fits would only cost time. */
        double size = am_body_size(rig->joint_rest, J, NULL);
        if ((k.o.flags & AM_FIT_SMOOTH_AUTO) && res->point_noise > AMI_CV_MIN_NOISE * (size > 0 ? size : 1.0)) {
            ami_stage cv = ami_stage_begin("fit: smoothing");
            if ((st = ami_smooth_cv(&k, opts, res->point_noise, &k.o.smooth_points, err)) < 0) goto done;
            ami_stage_end(&cv);
            res->smooth_points = k.o.smooth_points;
            res->smooth_auto = true;
            /* The smoothness then varies in time: the fit once as chosen, then again where its
             * residuals say it flattened a fast event (ami_smooth_local). */
            k.smooth_t = am_alloc_array(T * B, sizeof(double));
            if (!k.smooth_t) {
                st = AM_FAIL(err, AM_E_NOMEM, "smoothness of %zu frames", T);
                goto done;
            }
            for (size_t i = 0; i < T * B; i++) k.smooth_t[i] = 1.0;
        }
    }
    ami_smoothness_weights(&k, res);

    const size_t Cc = k.Cc;
    res->contact_joint = am_alloc_array(Cc + 1, sizeof(int32_t));
    res->contact = am_alloc_array(T * (Cc ? Cc : 1), 1);
    res->lock_moved_mean_mm = am_alloc_array(Cc + 1, sizeof(double));
    res->lock_moved_max_mm = am_alloc_array(Cc + 1, sizeof(double));
    ls.moved_sum = am_alloc_array(Cc + 1, sizeof(double));
    ls.moved_max = am_alloc_array(Cc + 1, sizeof(double));
    ls.moved_n = am_alloc_array(Cc + 1, sizeof(size_t));
    if (!res->contact_joint || !res->contact || !res->lock_moved_mean_mm || !res->lock_moved_max_mm || !ls.moved_sum ||
        !ls.moved_max || !ls.moved_n) {
        st = AM_FAIL(err, AM_E_NOMEM, "contacts");
        goto done;
    }
    memcpy(res->contact_joint, k.cj, Cc * sizeof(int32_t));
    if ((st = am_motion_create(rig, T, k.fps, &res->motion, err)) < 0) goto done;

    /* Windows. */
    size_t W = k.o.window ? k.o.window : (T <= AMI_SINGLE_WINDOW ? T : AMI_WINDOW);
    if (W < 8) W = 8;
    size_t S = k.o.window_stride ? k.o.window_stride : (3 * W) / 4;
    if (S + 2 > W) S = W - 2;
    if (S < 1) S = 1;
    size_t Wmax = W < T ? W : T;
    wb.x = am_alloc_array(Wmax * P, sizeof(double));
    wb.q0 = am_alloc_array(Wmax * 4, sizeof(double));
    wb.d = am_alloc_array(Wmax * 3, sizeof(double));
    wb.lower = am_alloc_array(Wmax * P, sizeof(double));
    wb.upper = am_alloc_array(Wmax * P, sizeof(double));
    wb.pose = am_alloc_array(Wmax * B * 16, sizeof(double));
    wb.axes = am_alloc_array(Wmax * B * 9, sizeof(double));
    wb.joints = am_alloc_array(Wmax * J * 3, sizeof(double));
    wb.plant = am_alloc_array(Wmax * (Cc ? Cc : 1), 1);
    wb.plant_z = am_alloc_array(Wmax * (Cc ? Cc : 1), sizeof(double));
    wb.swapped = am_alloc_array(Wmax, 1);
    if (!wb.x || !wb.q0 || !wb.d || !wb.lower || !wb.upper || !wb.pose || !wb.axes || !wb.joints || !wb.plant ||
        !wb.plant_z || !wb.swapped) {
        st = AM_FAIL(err, AM_E_NOMEM, "fit window of %zu frames x %zu parameters", Wmax, P);
        goto done;
    }
    /* With the smoothness chosen per clip, a second pass: the first fit's residuals lower the
     * smoothness where they are structured, and the clip is fitted again from the first fit. */
    const int passes = k.smooth_t ? 2 : 1;
    size_t solved_end = 0;
    for (int pass = 0; pass < passes; pass++) {
        if (pass) {
            if ((st = am_motion_compute_joints(res->motion, rig, err)) < 0) goto done;
            bool lowered = false;
            if ((st = ami_smooth_local(&k, res, &lowered, err)) < 0) goto done;
            if (!lowered) break;
            ls.plants = 0;
            ls.fit_sum = ls.fit_max = ls.sum = ls.max = 0.0;
            memset(ls.moved_sum, 0, (Cc + 1) * sizeof(double));
            memset(ls.moved_max, 0, (Cc + 1) * sizeof(double));
            memset(ls.moved_n, 0, (Cc + 1) * sizeof(size_t));
            res->windows = 0;
            /* From the first fit (starting again from the analytic IK was worse on the dev clips:
             * Q. Fox Walk 0.353 -> 0.372) */
            solved_end = T;
        }
        stage = ami_stage_begin("fit");
        for (size_t c0 = 0;;) {
            size_t fixed = c0 ? 2 : 0, a = c0 - fixed, b = a + W < T ? a + W : T;
            size_t commit_end = b == T ? T : c0 + S;
            if ((st = ami_window(&k, &wb, a, b, fixed, commit_end, solved_end, res, &ls, (double)a / (double)T,
                                 (double)b / (double)T, err)) < 0)
                goto done;
            res->windows++;
            /* The next window starts from this one's solution where they overlap (the second
             * pass starts from the first's everywhere: solved_end is T then). */
            if (solved_end < b) solved_end = b;
            if (b == T) break;
            c0 = commit_end;
        }
        ami_stage_end(&stage);
    }

    res->foot_locked = Cc && !(k.o.flags & AM_FIT_NO_FOOT_LOCK);
    res->plant_count = ls.plants;
    res->fit_slide_mean_mm = ls.plants ? 1000.0 * ls.fit_sum / (double)ls.plants : 0.0;
    res->fit_slide_max_mm = 1000.0 * ls.fit_max;
    res->slide_mean_mm = ls.plants ? 1000.0 * ls.sum / (double)ls.plants : 0.0;
    res->slide_max_mm = 1000.0 * ls.max;
    for (size_t c = 0; c < Cc; c++) {
        res->lock_moved_mean_mm[c] = ls.moved_n[c] ? 1000.0 * ls.moved_sum[c] / (double)ls.moved_n[c] : 0.0;
        res->lock_moved_max_mm[c] = 1000.0 * ls.moved_max[c];
    }
    if ((st = am_motion_compute_joints(res->motion, rig, err)) < 0) goto done;
    if ((st = ami_summary(&k, res, err)) < 0) goto done;
    res->seconds = am_now() - t_start;
    {
        char *extra = NULL;
        if ((st = ami_fit_extra_json(res, NULL, false, &extra, err)) < 0) goto done;
        am_free(res->motion->extra_json);
        res->motion->extra_json = extra;
    }
done:
    ami_win_bufs_free(&wb);
    am_free(ls.moved_sum);
    am_free(ls.moved_max);
    am_free(ls.moved_n);
    ami_clip_free(&k);
    if (st < 0) {
        am_fit_result_free(res);
        return st;
    }
    *out = res;
    return AM_OK;
}

am_status am_fit(const am_fit_input *in, const am_fit_opts *opts, am_fit_result **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_fit_run(in, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}
