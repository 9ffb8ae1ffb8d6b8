/* The N-view exam: the exam's random motion (exam.c) seen by N perspective cameras, with the
 * degradations of real multi-camera capture: pixel noise, lost detections, gross outliers at
 * normal confidence, left/right label swaps, joints hidden behind the body, and per-camera
 * frame offsets.
 *
 * Cameras (when none are given): a ring around the clip's path, each aimed at its centre from a
 * distance at which the whole path fits a 60-degree view, at alternating heights (half and one
 * and a half body heights), with a mild barrel distortion (k1 in [-0.1, 0]) so undistortion is
 * exercised. Two cameras stand 90 degrees apart (facing ones would see along one line).
 * Occlusion: a joint is hidden in a camera when the segment from the camera centre to it passes
 * within capsule_radius * body size of a bone it does not belong to (bones as capsules between
 * their head and tail joints): coarse, as the issue allows, and cheap (J * B tests a frame). */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/multiview.h"
#include "capture/capture_internal.h"
#include "core/internal.h"

void am_mexam_free(am_mexam *ex)
{
    if (!ex) return;
    am_exam_free(ex->exam);
    am_warning_list_free(&ex->warnings);
    am_calib_free(ex->cameras);
    am_mdet_free(ex->det);
    am_free(ex->offsets);
    am_free(ex);
}

/* Squared distance between segments p0-p1 and q0-q1; *s = parameter of the closest point on
 * p (C. Ericson, "Real-Time Collision Detection", 5.1.9). */
static double ami_seg_seg_d2(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                             double *s_out)
{
    double d1[3], d2[3], r[3];
    am_vec3_sub(p1, p0, d1);
    am_vec3_sub(q1, q0, d2);
    am_vec3_sub(p0, q0, r);
    double a = am_vec3_dot(d1, d1), e = am_vec3_dot(d2, d2), f = am_vec3_dot(d2, r);
    double s, t;
    if (a <= 1e-18 && e <= 1e-18) {
        s = t = 0;
    } else if (a <= 1e-18) {
        s = 0;
        t = f / e;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
    } else {
        double c = am_vec3_dot(d1, r);
        if (e <= 1e-18) {
            t = 0;
            s = -c / a;
            s = s < 0 ? 0 : s > 1 ? 1 : s;
        } else {
            double b = am_vec3_dot(d1, d2), den = a * e - b * b;
            s = den > 1e-18 ? (b * f - c * e) / den : 0;
            s = s < 0 ? 0 : s > 1 ? 1 : s;
            t = (b * s + f) / e;
            if (t < 0) {
                t = 0;
                s = -c / a;
                s = s < 0 ? 0 : s > 1 ? 1 : s;
            } else if (t > 1) {
                t = 1;
                s = (b - c) / a;
                s = s < 0 ? 0 : s > 1 ? 1 : s;
            }
        }
    }
    double cp[3], cq[3], dd[3];
    am_vec3_madd(p0, s, d1, cp);
    am_vec3_madd(q0, t, d2, cq);
    am_vec3_sub(cp, cq, dd);
    *s_out = s;
    return am_vec3_dot(dd, dd);
}

static am_status ami_ring_cameras(const am_motion *mo, double body, size_t C, ami_rng *rng, am_calib **out,
                                  am_error *err)
{
    const size_t T = mo->frame_count, J = mo->joint_count;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < T * J; i++)
        for (int d = 0; d < 3; d++) {
            double v = mo->joints[3 * i + (size_t)d];
            if (v < lo[d]) lo[d] = v;
            if (v > hi[d]) hi[d] = v;
        }
    double ctr[3] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
    double half = 0.5 * hypot(hi[0] - lo[0], hi[1] - lo[1]) + 0.25 * body;
    double zext = hi[2] - lo[2];
    if (zext > half) half = zext;
    const double fov = AM_RAD(60.0), W = 1280, H = 720;
    /* The path's bounding circle fills at most 80 % of the half-width, seen from the nearest side. */
    double R = half * (1.0 + 1.0 / (0.8 * tan(0.5 * fov) * (H / W)));
    AMI_TRY(am_calib_create(C, out, err));
    static const double up[3] = {0, 0, 1};
    for (size_t c = 0; c < C; c++) {
        double ang = C == 2 ? AM_PI * 0.5 * (double)c : 2.0 * AM_PI * (double)c / (double)C;
        ang += 0.15 * (ami_rng_uniform(rng) - 0.5);
        double h = (c % 2 ? 1.5 : 0.5) * (hi[2] > 0.2 ? hi[2] : 0.5);
        double pos[3] = {ctr[0] + R * cos(ang), ctr[1] + R * sin(ang), h};
        char name[32];
        snprintf(name, sizeof name, "cam_%zu", c);
        am_camera *cam = &(*out)->cameras[c];
        am_camera_look_at(cam, name, pos, ctr, up, W, H, fov);
        cam->dist[0] = -0.1 * ami_rng_uniform(rng);
        cam->dist[1] = 0.02 * ami_rng_uniform(rng);
    }
    return AM_OK;
}

static am_status ami_mexam_generate(const am_rig *rig, const am_creature *cr, const am_calib *given,
                                    const am_mexam_opts *opts_in, am_mexam **out, am_error *err)
{
    am_mexam_opts o = opts_in ? *opts_in : (am_mexam_opts){0};
    if (o.cameras == 0) o.cameras = 4;
    if (o.capsule_radius <= 0) o.capsule_radius = 0.04;
    AMI_CHECK(err, o.noise_px >= 0 && o.dropout >= 0 && o.dropout <= 1 && o.outliers >= 0 && o.outliers <= 1 &&
                       o.swap >= 0 && o.swap <= 1 && o.max_offset >= 0,
              AM_E_ARG, "exam degradations out of range (probabilities in [0,1], offsets >= 0)");
    AMI_CHECK(err, given || (o.cameras >= 2 && o.cameras <= 64), AM_E_ARG, "exam cameras %zu (need 2..64)", o.cameras);
    am_exam_opts mo_opts = o.motion;
    mo_opts.noise_px = mo_opts.dropout = mo_opts.swap = mo_opts.outliers = mo_opts.squash = 0;
    mo_opts.lag = 0;
    mo_opts.ctx = (am_context){0}; /* the motion runs in this call's scope */
    am_mexam *ex = am_alloc(sizeof *ex);
    if (!ex) return AM_FAIL(err, AM_E_NOMEM, "exam");
    am_status st = am_exam_generate(rig, cr, &mo_opts, &ex->exam, err);
    if (st != AM_OK) goto done;
    const am_motion *mo = ex->exam->truth;
    const size_t T = mo->frame_count, J = mo->joint_count, B = rig->bone_count;
    if (!((int)T > 2 * o.max_offset)) {
        st = AM_FAIL(err, AM_E_ARG, "offsets up to %d frames in a %zu-frame clip", o.max_offset, T);
        goto done;
    }
    ami_rng rng;
    ami_rng_seed(&rng, o.motion.seed * 0x9E3779B97F4A7C15ull + 1234567);
    if (given) {
        if ((st = am_calib_create(given->camera_count, &ex->cameras, err)) != AM_OK) goto done;
        memcpy(ex->cameras->cameras, given->cameras, given->camera_count * sizeof *given->cameras);
    } else if ((st = ami_ring_cameras(mo, ex->exam->body_size, o.cameras, &rng, &ex->cameras, err)) != AM_OK) {
        goto done;
    }
    const size_t C = ex->cameras->camera_count;
    if ((st = am_mdet_create(C, T, J, &ex->det, err)) != AM_OK) goto done;
    am_mdet *d = ex->det;
    d->fps = mo->fps;
    ex->offsets = am_alloc_array(C, sizeof *ex->offsets);
    d->time_offset = am_alloc_array(C, sizeof *d->time_offset);
    int32_t *pairs = am_alloc_array(2 * J + 2, sizeof *pairs);
    if (!ex->offsets || !d->time_offset || !pairs) {
        am_free(pairs);
        st = AM_FAIL(err, AM_E_NOMEM, "exam");
        goto done;
    }
    for (size_t c = 0; c < C; c++)
        if (!(d->cameras[c] = am_strdup(ex->cameras->cameras[c].name))) st = AM_FAIL(err, AM_E_NOMEM, "names");
    for (size_t j = 0; j < J && st == AM_OK; j++)
        if (!(d->names[j] = am_strdup(rig->joint_names[j]))) st = AM_FAIL(err, AM_E_NOMEM, "names");
    if (st != AM_OK) {
        am_free(pairs);
        goto done;
    }
    const double radius = o.capsule_radius * ex->exam->body_size;
    for (size_t c = 0; c < C; c++) {
        const am_camera *cam = &ex->cameras->cameras[c];
        ex->offsets[c] = o.max_offset ? (int32_t)(ami_rng_uniform(&rng) * (2 * o.max_offset + 1)) - o.max_offset : 0;
        /* Camera 0 keeps the truth's clock (the solve reports on camera 0's, as the two-view
         * exam keeps its side view's); its draw still happens, so the others' do not change. */
        if (c == 0) ex->offsets[c] = 0;
        d->time_offset[c] = -(double)ex->offsets[c];
        double ctr[3];
        am_camera_centre(cam, ctr);
        for (size_t k = 0; k < T; k++) {
            /* Camera c's frame k shows the motion at k - offset. */
            long tt = (long)k - ex->offsets[c];
            size_t t = (size_t)(tt < 0 ? 0 : tt >= (long)T ? (long)T - 1 : tt);
            const double *jt = mo->joints + t * J * 3;
            for (size_t j = 0; j < J; j++) {
                const double *X = jt + 3 * j;
                double uv[2];
                bool seen = am_camera_project(cam, X, uv, NULL) && uv[0] >= 0 && uv[0] < cam->width && uv[1] >= 0 &&
                            uv[1] < cam->height;
                if (seen && o.occlusion) {
                    double len = am_vec3_dist(ctr, X);
                    for (size_t b = 0; b < B && seen; b++) {
                        size_t h = (size_t)rig->head_joint[b], tl = (size_t)rig->tail_joint[b];
                        if (h == j || tl == j) continue;
                        double s, d2 = ami_seg_seg_d2(ctr, X, jt + 3 * h, jt + 3 * tl, &s);
                        if (d2 < radius * radius && s * len < len - 1.5 * radius) {
                            seen = false;
                            ex->occluded++;
                        }
                    }
                }
                if (seen && o.dropout > 0 && ami_rng_uniform(&rng) < o.dropout) seen = false;
                size_t i = (c * T + k) * J + j;
                if (!seen) continue;
                uv[0] += o.noise_px * ami_rng_normal(&rng);
                uv[1] += o.noise_px * ami_rng_normal(&rng);
                if (o.outliers > 0 && ami_rng_uniform(&rng) < o.outliers) {
                    double ang = 2.0 * AM_PI * ami_rng_uniform(&rng), r = 20.0 + 60.0 * ami_rng_uniform(&rng);
                    uv[0] += r * cos(ang);
                    uv[1] += r * sin(ang);
                }
                d->uv[2 * i] = (float)uv[0];
                d->uv[2 * i + 1] = (float)uv[1];
                d->conf[i] = (float)(0.7 + 0.3 * ami_rng_uniform(&rng));
            }
        }
        if (o.swap > 0) {
            size_t np = ami_lr_pairs(rig, pairs);
            for (size_t q = 0; q < np; q++)
                for (size_t k = 0; k < T; k++) {
                    if (ami_rng_uniform(&rng) >= o.swap) continue;
                    size_t len = 1 + (size_t)(3.0 * ami_rng_uniform(&rng));
                    for (size_t u = k; u < k + len && u < T; u++) {
                        size_t a = (c * T + u) * J + (size_t)pairs[2 * q], b = (c * T + u) * J + (size_t)pairs[2 * q + 1];
                        float tu0 = d->uv[2 * a], tu1 = d->uv[2 * a + 1], tc = d->conf[a];
                        d->uv[2 * a] = d->uv[2 * b];
                        d->uv[2 * a + 1] = d->uv[2 * b + 1];
                        d->conf[a] = d->conf[b];
                        d->uv[2 * b] = tu0;
                        d->uv[2 * b + 1] = tu1;
                        d->conf[b] = tc;
                    }
                    k += len;
                }
        }
    }
    am_free(pairs);
done:
    if (st != AM_OK) {
        am_mexam_free(ex);
        return st;
    }
    *out = ex;
    return AM_OK;
}

am_status am_mexam_generate(const am_rig *rig, const am_creature *cr, const am_calib *given, const am_mexam_opts *opts,
                            am_mexam **out, am_error *err)
{
    assert(rig && out);
    *out = NULL;
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_mexam_generate(rig, cr, given, opts, out, err);
    if (st >= 0) {
        /* the motion's own warnings join the exam's */
        ami_warn_list(&(*out)->exam->warnings);
        am_warning_list_free(&(*out)->exam->warnings);
    }
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}
