/* Training data for keypoint readers: random poses inside the limits in both views, backdrop and
 * light varied, with the true joints in metres and in layout pixels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "math/math_internal.h"
#include "render_internal.h"

static uint8_t ami_jitter(ami_rng *g, uint8_t c, double amount)
{
    double v = c + (2.0 * ami_rng_uniform(g) - 1.0) * amount;
    return (uint8_t)lround(v < 0 ? 0 : v > 255 ? 255 : v);
}

static am_status ami_meta(const char *path, const am_rig *rig, const am_motion *mo, const double *joints,
                          const am_layout *L, const am_studio *st, am_error *err)
{
    size_t J = rig->joint_count, B = rig->bone_count;
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
    ami_jw_object(&w, NULL);
    ami_jw_strings(&w, "names", (const char *const *)rig->joint_names, J);
    ami_jw_numbers(&w, "joints_m", joints, 2, (const size_t[2]){J, 3});
    double *uv = am_alloc_array(J * 4, sizeof(double));
    if (!uv) {
        am_buf_free(&b);
        return AM_FAIL(err, AM_E_NOMEM, "meta");
    }
    /* SPEC 3: canvas pixels of the layout */
    for (size_t j = 0; j < J; j++) {
        const double *p = joints + j * 3;
        uv[j * 2] = L->front_cx + p[0] / L->m_per_px;
        uv[j * 2 + 1] = L->ground_v - p[2] / L->m_per_px;
        uv[J * 2 + j * 2] = L->side_cx - p[1] / L->m_per_px;
        uv[J * 2 + j * 2 + 1] = L->ground_v - p[2] / L->m_per_px;
    }
    ami_jw_numbers(&w, "front_uv", uv, 2, (const size_t[2]){J, 2});
    ami_jw_numbers(&w, "side_uv", uv + J * 2, 2, (const size_t[2]){J, 2});
    am_free(uv);
    ami_jw_strings(&w, "bones", (const char *const *)rig->bone_names, B);
    ami_jw_numbers(&w, "euler", mo->euler, 2, (const size_t[2]){B, 3});
    ami_jw_numbers(&w, "trans", mo->trans, 1, (const size_t[1]){3});
    ami_jw_numbers(&w, "root_quat", mo->root_quat, 1, (const size_t[1]){4});
    ami_jw_record(&w, "layout");
    ami_jw_number(&w, "W_FRONT", L->w_front);
    ami_jw_number(&w, "W_SIDE", L->w_side);
    ami_jw_number(&w, "GROUND_V", L->ground_v);
    ami_jw_number(&w, "M_PER_PX", L->m_per_px);
    ami_jw_close(&w);
    ami_jw_record(&w, "backdrop");
    double wall[3] = {st->wall[0], st->wall[1], st->wall[2]}, fl[3] = {st->floor[0], st->floor[1], st->floor[2]};
    ami_jw_numbers(&w, "wall", wall, 1, (const size_t[1]){3});
    ami_jw_numbers(&w, "floor", fl, 1, (const size_t[1]){3});
    ami_jw_numbers(&w, "light", st->light, 1, (const size_t[1]){3});
    ami_jw_number(&w, "ambient", st->ambient);
    ami_jw_close(&w);
    ami_jw_close(&w);
    am_status s = ami_jw_write_file(&w, path, err);
    am_buf_free(&b);
    return s;
}

am_status am_dataset_generate(const am_dataset_job *job, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, &job->ctx);
    const am_rig *rig = am_render_model_rig(job->model);
    size_t B = rig->bone_count, J = rig->joint_count;
    am_layout L;
    if (job->layout) L = *job->layout;
    else am_layout_default(&L);
    double share = job->limit_share > 0 ? fmin(job->limit_share, 1.0) : 1.0;
    am_motion *mo = NULL;
    am_status s = job->count > 0 ? am_motion_create(rig, 1, 30.0, &mo, err)
                                 : AM_FAIL(err, AM_E_VALUE, "a data set of 0 poses");
    if (s == AM_OK) s = am_mkdir_p(job->dir, err);
    double *pose = am_alloc_array(B * 16 + J * 3, sizeof(double));
    size_t plen = strlen(job->dir) + 64;
    char *path = am_alloc(plen);
    if (s == AM_OK && (!pose || !path)) s = AM_FAIL(err, AM_E_NOMEM, "dataset");
    ami_rng g;
    ami_rng_seed(&g, job->seed);
    am_studio base;
    am_studio_default(&base);
    am_raster r[2];
    memset(r, 0, sizeof r);
    ami_stage stage = ami_stage_begin("dataset");
    for (size_t i = 0; s == AM_OK && i < job->count; i++) {
        if (!ami_progress("dataset", (double)i / (double)job->count)) {
            s = AM_FAIL(err, AM_E_CANCELLED, "dataset");
            break;
        }
        for (size_t b = 1; b < B; b++)
            for (int a = 0; a < 3; a++) {
                double lo = rig->limits[(b * 3 + (size_t)a) * 2], hi = rig->limits[(b * 3 + (size_t)a) * 2 + 1];
                if (!rig->has_limit[b]) lo = -AM_PI / 4, hi = AM_PI / 4;
                double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo) * share;
                mo->euler[b * 3 + (size_t)a] = mid + (2.0 * ami_rng_uniform(&g) - 1.0) * half;
            }
        double yaw = (2.0 * ami_rng_uniform(&g) - 1.0) * 20.0 * AM_PI / 180.0;
        mo->root_quat[0] = cos(0.5 * yaw), mo->root_quat[1] = 0, mo->root_quat[2] = 0, mo->root_quat[3] = sin(0.5 * yaw);
        memcpy(mo->trans, rig->joint_rest + (size_t)rig->head_joint[0] * 3, 3 * sizeof(double));
        /* stand on the ground: the lowest posed vertex at z = 0 */
        am_motion_pose(rig, mo, 0, pose);
        am_render_model_pose(job->model, pose);
        double box[6];
        am_render_model_box(job->model, box);
        mo->trans[2] -= box[2];
        am_motion_pose(rig, mo, 0, pose);
        am_rig_keypoints(rig, pose, pose + B * 16);
        am_studio st = base;
        for (int c = 0; c < 3; c++) {
            st.wall[c] = ami_jitter(&g, base.wall[c], 30);
            st.floor[c] = ami_jitter(&g, base.floor[c], 30);
        }
        st.light[0] = base.light[0] + 0.6 * (2.0 * ami_rng_uniform(&g) - 1.0);
        st.light[1] = base.light[1] + 0.4 * (2.0 * ami_rng_uniform(&g) - 1.0);
        st.ambient = 0.28 + 0.2 * ami_rng_uniform(&g);
        for (int v = 0; v < 2 && s == AM_OK; v++) {
            am_render_job rj = {.model = job->model, .motion = mo, .view = v == 0 ? AM_VIEW_FRONT : AM_VIEW_SIDE,
                                .layout = &L, .style = {.studio = &st}};
            am_render_views *views = NULL;
            s = am_render_views_create(&rj, &views, err);
            int w = 0, h = 0;
            if (s == AM_OK) am_render_views_size(views, &w, &h);
            if (s == AM_OK && !r[v].img.rgb) s = am_raster_init(&r[v], w, h, err);
            if (s == AM_OK) {
                am_render_views_frame(views, 0, &r[v]);
                snprintf(path, plen, "%s/%zu_%s.png", job->dir, i, v == 0 ? "front" : "side");
                s = am_png_write(&r[v].img, path, err);
            }
            am_render_views_free(views);
        }
        if (s == AM_OK) {
            snprintf(path, plen, "%s/%zu_meta.json", job->dir, i);
            s = ami_meta(path, rig, mo, pose + B * 16, &L, &st, err);
        }
    }
    if (s == AM_OK) ami_stage_end(&stage);
    am_raster_release(&r[0]);
    am_raster_release(&r[1]);
    am_free(pose);
    am_free(path);
    am_motion_free(mo);
    am_scope_leave(&sc, NULL);
    return s;
}
