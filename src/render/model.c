/* The model drawn: a rig's skinned mesh (or its bone shapes), posed by SPEC 4.4 skinning, shaded
 * by Gouraud over a depth buffer, with bone lines and joint discs on top. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "io/gltf_internal.h"
#include "render_internal.h"
#include "rig/rig_internal.h"

struct am_render_model {
    const am_rig *rig;
    size_t V, F;
    float *rest;          /* [V][3] */
    int32_t *tri;         /* [F][3] */
    int32_t *bone;        /* [V][4] */
    float *weight;        /* [V][4] */
    uint8_t *colour;      /* [V][3] */
    float *posed;         /* [V][3] */
    float *normal;        /* [V][3] */
    double *skin;         /* [B][16] P(b) M_rest(b)^-1 */
    double *joints;       /* [J][3] */
    double *heads, *tails;/* [B][3] */
    uint8_t *body_joint;  /* [J] a joint of some deforming bone */
    double box[6];
};

static const uint8_t ami_bone_shape_rgb[3] = {196, 202, 214};

void am_studio_default(am_studio *s)
{
    static const am_studio d = {
        .wall = {128, 130, 134}, .floor = {152, 154, 158}, .divider = {40, 42, 46},
        .body = {214, 178, 140}, .light = {-0.45, -0.55, 0.70}, .ambient = 0.38};
    *s = d;
}

void am_render_model_free(am_render_model *m)
{
    if (!m) return;
    am_free(m->rest);
    am_free(m->tri);
    am_free(m->bone);
    am_free(m->weight);
    am_free(m->colour);
    am_free(m->posed);
    am_free(m->normal);
    am_free(m->skin);
    am_free(m->joints);
    am_free(m->heads);
    am_free(m->body_joint);
    am_free(m);
}

static am_status ami_model_alloc(am_render_model *m, size_t V, size_t F, am_error *err)
{
    const am_rig *rig = m->rig;
    size_t B = rig->bone_count, J = rig->joint_count;
    m->V = V;
    m->F = F;
    m->rest = am_alloc_array(V * 3 + 1, sizeof(float));
    m->tri = am_alloc_array(F * 3 + 1, sizeof(int32_t));
    m->bone = am_alloc_array(V * 4 + 1, sizeof(int32_t));
    m->weight = am_alloc_array(V * 4 + 1, sizeof(float));
    m->colour = am_alloc_array(V * 3 + 1, 1);
    m->posed = am_alloc_array(V * 3 + 1, sizeof(float));
    m->normal = am_alloc_array(V * 3 + 1, sizeof(float));
    m->skin = am_alloc_array(B * 16, sizeof(double));
    m->joints = am_alloc_array(J * 3 + 1, sizeof(double));
    m->heads = am_alloc_array(B * 6, sizeof(double));
    m->body_joint = am_alloc_array(J + 1, 1);
    AMI_CHECK(err, m->rest && m->tri && m->bone && m->weight && m->colour && m->posed && m->normal && m->skin &&
                       m->joints && m->heads && m->body_joint,
              AM_E_NOMEM, "render model of %zu vertices", V);
    m->tails = m->heads + B * 3;
    for (size_t b = 0; b < B; b++)
        if (!rig->is_helper[b]) m->body_joint[rig->head_joint[b]] = m->body_joint[rig->tail_joint[b]] = 1;
    return AM_OK;
}

/* Octahedra, 24 corners a bone (flat faces), each rigidly bound to its bone. */
static void ami_bone_shapes(am_render_model *m)
{
    const am_rig *rig = m->rig;
    int faces[AMI_BONE_FACES][3];
    ami_bone_faces(faces);
    size_t v = 0, f = 0;
    for (size_t b = 0; b < rig->bone_count; b++) {
        if (rig->is_helper[b]) continue;
        const double *M = rig->rest_mat + b * 16;
        for (int k = 0; k < AMI_BONE_FACES; k++, f++)
            for (int c = 0; c < 3; c++, v++) {
                double local[3], p[3];
                am_vec3_scale(ami_bone_verts[faces[k][c]], rig->length[b], local);
                am_mat4_mul_point(M, local, p);
                for (int i = 0; i < 3; i++) m->rest[v * 3 + i] = (float)p[i];
                m->bone[v * 4] = (int32_t)b;
                m->weight[v * 4] = 1.0f;
                memcpy(m->colour + v * 3, ami_bone_shape_rgb, 3);
                m->tri[f * 3 + c] = (int32_t)v;
            }
    }
}

am_status am_render_model_create(const am_rig *rig, const am_render_mesh *mesh, am_render_model **out, am_error *err)
{
    *out = NULL;
    am_render_model *m = am_alloc(sizeof *m);
    AMI_CHECK(err, m, AM_E_NOMEM, "render model");
    m->rig = rig;
    size_t deforming = 0;
    for (size_t b = 0; b < rig->bone_count; b++) deforming += !rig->is_helper[b];
    size_t V = mesh ? mesh->vertex_count : deforming * AMI_BONE_FACES * 3;
    size_t F = mesh ? mesh->triangle_count : deforming * AMI_BONE_FACES;
    am_status s = ami_model_alloc(m, V, F, err);
    if (s == AM_OK && mesh) {
        am_studio st;
        am_studio_default(&st);
        memcpy(m->rest, mesh->rest, V * 3 * sizeof(float));
        for (size_t i = 0; i < V * 4 && s == AM_OK; i++) {
            m->bone[i] = mesh->bone_index[i];
            m->weight[i] = mesh->weight[i];
            if (m->weight[i] != 0.0f && (m->bone[i] < 0 || (size_t)m->bone[i] >= rig->bone_count))
                s = AM_FAIL(err, AM_E_VALUE, "vertex %zu: bone index %d out of range (%zu bones)", i / 4,
                            (int)m->bone[i], rig->bone_count);
            if (m->weight[i] == 0.0f) m->bone[i] = 0;
        }
        for (size_t i = 0; i < F * 3 && s == AM_OK; i++) {
            m->tri[i] = mesh->triangles[i];
            if (m->tri[i] < 0 || (size_t)m->tri[i] >= V)
                s = AM_FAIL(err, AM_E_VALUE, "triangle %zu: vertex %d out of range (%zu vertices)", i / 3,
                            (int)m->tri[i], V);
        }
        for (size_t v = 0; v < V; v++) memcpy(m->colour + v * 3, mesh->colour ? mesh->colour + v * 3 : st.body, 3);
    } else if (s == AM_OK) {
        ami_bone_shapes(m);
    }
    if (s != AM_OK) {
        am_render_model_free(m);
        return s;
    }
    double *pose = am_alloc_array(rig->bone_count * 16, sizeof(double));
    if (!pose) {
        am_render_model_free(m);
        return AM_FAIL(err, AM_E_NOMEM, "rest pose");
    }
    am_rig_rest_pose(rig, pose);
    am_render_model_pose(m, pose);
    am_free(pose);
    *out = m;
    return AM_OK;
}

static const am_gltf_accessor *ami_accessor(const am_gltf *doc, int32_t i, size_t comps)
{
    if (i < 0 || (size_t)i >= doc->accessor_count) return NULL;
    const am_gltf_accessor *a = &doc->accessors[i];
    return a->components == comps && a->data ? a : NULL;
}

am_status am_render_model_from_gltf(const am_gltf *doc, const am_rig *rig, am_render_model **out, am_error *err)
{
    *out = NULL;
    size_t B = rig->bone_count;
    const am_gltf_skin *sk = doc->skin_count ? &doc->skins[0] : NULL;
    /* the rig's bone of each skin joint */
    int32_t *bone_node = am_alloc_array(B, sizeof(int32_t));
    double *bind = am_alloc_array(B * 16, sizeof(double));
    int32_t *joint_bone = am_alloc_array(sk ? sk->joint_count + 1 : 1, sizeof(int32_t));
    double *local = am_alloc_array(doc->node_count * 16 + 1, sizeof(double));
    double *world = am_alloc_array(doc->node_count * 16 + 1, sizeof(double));
    am_status s = bone_node && bind && joint_bone && local && world ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "glTF binding");
    if (s == AM_OK && sk) s = ami_gltf_skin_binding(doc, 0, rig, bone_node, bind, err);
    size_t V = 0, F = 0;
    if (s == AM_OK && sk) {
        for (size_t j = 0; j < sk->joint_count; j++) joint_bone[j] = -1;
        for (size_t b = 0; b < B; b++)
            for (size_t j = 0; j < sk->joint_count; j++)
                if (sk->joints[j] == bone_node[b]) joint_bone[j] = (int32_t)b;
        for (size_t n = 0; n < doc->node_count; n++) {
            const am_gltf_node *nd = &doc->nodes[n];
            if (nd->skin != 0 || nd->mesh < 0 || (size_t)nd->mesh >= doc->mesh_count) continue;
            const am_gltf_mesh *me = &doc->meshes[nd->mesh];
            for (size_t p = 0; p < me->primitive_count; p++) {
                const am_gltf_primitive *pr = &me->primitives[p];
                const am_gltf_accessor *pa = ami_accessor(doc, pr->position, 3);
                if (!pa || pr->mode != 4 || !ami_accessor(doc, pr->joints0, 4) || !ami_accessor(doc, pr->weights0, 4))
                    continue;
                const am_gltf_accessor *ia = pr->indices >= 0 && (size_t)pr->indices < doc->accessor_count
                                                 ? &doc->accessors[pr->indices] : NULL;
                V += pa->count;
                F += (ia ? ia->count : pa->count) / 3;
            }
        }
    }
    if (s != AM_OK || V == 0 || F == 0) {
        am_free(bone_node);
        am_free(bind);
        am_free(joint_bone);
        am_free(local);
        am_free(world);
        return s != AM_OK ? s : am_render_model_create(rig, NULL, out, err);
    }
    float *rest = am_alloc_array(V * 3, sizeof(float));
    int32_t *tri = am_alloc_array(F * 3, sizeof(int32_t));
    int32_t *bi = am_alloc_array(V * 4, sizeof(int32_t));
    float *wt = am_alloc_array(V * 4, sizeof(float));
    if (!rest || !tri || !bi || !wt) s = AM_FAIL(err, AM_E_NOMEM, "glTF mesh of %zu vertices", V);
    if (s == AM_OK) {
        am_gltf_sample_local(doc, -1, 0.0, local);
        am_gltf_world_from_local(doc, local, world);
        size_t v0 = 0, f0 = 0;
        for (size_t n = 0; n < doc->node_count; n++) {
            const am_gltf_node *nd = &doc->nodes[n];
            if (nd->skin != 0 || nd->mesh < 0 || (size_t)nd->mesh >= doc->mesh_count) continue;
            const am_gltf_mesh *me = &doc->meshes[nd->mesh];
            /* bind space is the skinned mesh node's (am_rig_from_gltf places the heads there) */
            const double *G = world + n * 16;
            for (size_t p = 0; p < me->primitive_count; p++) {
                const am_gltf_primitive *pr = &me->primitives[p];
                const am_gltf_accessor *pa = ami_accessor(doc, pr->position, 3);
                const am_gltf_accessor *ja = ami_accessor(doc, pr->joints0, 4), *wa = ami_accessor(doc, pr->weights0, 4);
                if (!pa || pr->mode != 4 || !ja || !wa) continue;
                const am_gltf_accessor *ia = pr->indices >= 0 && (size_t)pr->indices < doc->accessor_count
                                                 ? &doc->accessors[pr->indices] : NULL;
                for (size_t v = 0; v < pa->count; v++) {
                    double g[3] = {pa->data[v * 3], pa->data[v * 3 + 1], pa->data[v * 3 + 2]}, gw[3], w[3];
                    am_mat4_mul_point(G, g, gw);
                    am_gltf_to_world(gw, w);
                    for (int c = 0; c < 3; c++) rest[(v0 + v) * 3 + c] = (float)w[c];
                    for (int k = 0; k < 4; k++) {
                        size_t q = (v0 + v) * 4 + k;
                        double jj = ja->ints ? (double)ja->ints[v * 4 + k] : ja->data[v * 4 + k];
                        int32_t b = v < ja->count && v < wa->count && jj >= 0 && (size_t)jj < sk->joint_count
                                        ? joint_bone[(size_t)jj] : -1;
                        bi[q] = b < 0 ? 0 : b;
                        wt[q] = b < 0 || v >= wa->count ? 0.0f : wa->data[v * 4 + k];
                    }
                    float sum = wt[(v0 + v) * 4] + wt[(v0 + v) * 4 + 1] + wt[(v0 + v) * 4 + 2] + wt[(v0 + v) * 4 + 3];
                    if (sum > 0.0f)
                        for (int k = 0; k < 4; k++) wt[(v0 + v) * 4 + k] /= sum;
                    else
                        wt[(v0 + v) * 4] = 1.0f; /* unweighted: rides the root */
                }
                size_t nf = (ia ? ia->count : pa->count) / 3;
                for (size_t f = 0; f < nf * 3; f++) {
                    double idx = ia ? (ia->ints ? (double)ia->ints[f] : ia->data[f]) : (double)f;
                    tri[f0 * 3 + f] = idx >= 0 && idx < (double)pa->count ? (int32_t)(v0 + (size_t)idx) : (int32_t)v0;
                }
                v0 += pa->count;
                f0 += nf;
            }
        }
        am_render_mesh mesh = {.vertex_count = V, .rest = rest, .triangle_count = F, .triangles = tri,
                               .bone_index = bi, .weight = wt};
        s = am_render_model_create(rig, &mesh, out, err);
    }
    am_free(rest);
    am_free(tri);
    am_free(bi);
    am_free(wt);
    am_free(bone_node);
    am_free(bind);
    am_free(joint_bone);
    am_free(local);
    am_free(world);
    return s;
}

void am_render_model_paint(am_render_model *m, const uint8_t *colour, const uint8_t *painted)
{
    for (size_t v = 0; v < m->V; v++) {
        int best = 0;
        for (int k = 1; k < 4; k++)
            if (m->weight[v * 4 + k] > m->weight[v * 4 + best]) best = k;
        size_t b = (size_t)m->bone[v * 4 + best];
        if (painted[b]) memcpy(m->colour + v * 3, colour + b * 3, 3);
    }
}

const am_rig *am_render_model_rig(const am_render_model *m) { return m->rig; }
size_t am_render_model_vertex_count(const am_render_model *m) { return m->V; }
const double *am_render_model_joints(const am_render_model *m) { return m->joints; }
void am_render_model_box(const am_render_model *m, double box[6]) { memcpy(box, m->box, sizeof m->box); }

void am_render_model_pose(am_render_model *m, const double *pose)
{
    const am_rig *rig = m->rig;
    size_t B = rig->bone_count;
    for (size_t b = 0; b < B; b++) am_mat4_mul(pose + b * 16, rig->rest_inv + b * 16, m->skin + b * 16);
    am_rig_keypoints(rig, pose, m->joints);
    am_rig_bone_ends(rig, pose, m->heads, m->tails);
    for (int c = 0; c < 3; c++) m->box[c] = DBL_MAX, m->box[3 + c] = -DBL_MAX;
    for (size_t v = 0; v < m->V; v++) {
        const float *r = m->rest + v * 3;
        const int32_t *bi = m->bone + v * 4;
        const float *w = m->weight + v * 4;
        double acc[3] = {0, 0, 0};
        for (int k = 0; k < 4; k++) {
            if (w[k] == 0.0f) continue;
            const double *S = m->skin + (size_t)bi[k] * 16;
            acc[0] += w[k] * (S[0] * r[0] + S[1] * r[1] + S[2] * r[2] + S[3]);
            acc[1] += w[k] * (S[4] * r[0] + S[5] * r[1] + S[6] * r[2] + S[7]);
            acc[2] += w[k] * (S[8] * r[0] + S[9] * r[1] + S[10] * r[2] + S[11]);
        }
        for (int c = 0; c < 3; c++) {
            m->posed[v * 3 + c] = (float)acc[c];
            m->box[c] = fmin(m->box[c], acc[c]);
            m->box[3 + c] = fmax(m->box[3 + c], acc[c]);
        }
    }
    /* area-weighted vertex normals of the posed surface */
    memset(m->normal, 0, m->V * 3 * sizeof(float));
    for (size_t f = 0; f < m->F; f++) {
        const int32_t *t = m->tri + f * 3;
        const float *a = m->posed + t[0] * 3, *b = m->posed + t[1] * 3, *c = m->posed + t[2] * 3;
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) m->normal[t[k] * 3 + i] += n[i];
    }
    for (size_t v = 0; v < m->V; v++) {
        float *n = m->normal + v * 3;
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (l > 0) n[0] /= l, n[1] /= l, n[2] /= l;
    }
    if (m->V == 0)
        for (int c = 0; c < 3; c++) m->box[c] = m->box[3 + c] = 0.0;
}

/* Pixel position and depth key of a world point: the key interpolates linearly across the
 * screen (camera z for orthographic views, -1/z for perspective ones; smaller is nearer). */
static bool ami_project(const am_camera *cam, const double p[3], double uv[2], double *key)
{
    double xc[3];
    am_camera_to_cam(cam, p, xc);
    bool ok = am_camera_project(cam, p, uv, NULL);
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        *key = xc[2];
        return ok;
    }
    if (!(xc[2] > 1e-3)) return false;
    *key = -1.0 / xc[2];
    return ok;
}

void am_render_model_draw(const am_render_model *m, am_raster *r, const am_camera *cam, const am_draw_style *style)
{
    am_studio st;
    if (style && style->studio) st = *style->studio;
    else am_studio_default(&st);
    unsigned flags = style && style->flags ? style->flags : AM_DRAW_DEFAULT;
    double L[3], axis[3], centre[3];
    am_vec3_normalize(st.light, L);
    am_camera_axis(cam, axis);
    am_camera_centre(cam, centre);
    bool ortho = cam->model == AM_CAMERA_ORTHOGRAPHIC;
    if (flags & AM_DRAW_MESH) {
        double alpha = style && style->mesh_alpha > 0 ? style->mesh_alpha : 1.0;
        for (size_t f = 0; f < m->F; f++) {
            const int32_t *t = m->tri + f * 3;
            double uv[3][2], key[3];
            float rgb[3][3];
            bool ok = true;
            for (int k = 0; k < 3 && ok; k++) {
                const float *pf = m->posed + t[k] * 3;
                double p[3] = {pf[0], pf[1], pf[2]};
                ok = ami_project(cam, p, uv[k], &key[k]);
                double view[3];
                if (ortho) memcpy(view, axis, sizeof view);
                else am_vec3_sub(p, centre, view);
                const float *nf = m->normal + t[k] * 3;
                double n[3] = {nf[0], nf[1], nf[2]};
                /* two-sided: tracker meshes do not agree on a winding */
                if (am_vec3_dot(n, view) > 0) am_vec3_scale(n, -1.0, n);
                double vl = am_vec3_norm(view);
                double fill = vl > 0 ? -am_vec3_dot(n, view) / vl : 0.0;
                double light = st.ambient + (1.0 - st.ambient) * fmax(0.0, am_vec3_dot(n, L)) + 0.18 * fmax(0.0, fill);
                const uint8_t *c = m->colour + t[k] * 3;
                for (int i = 0; i < 3; i++) rgb[k][i] = (float)(c[i] * light);
            }
            if (ok) ami_raster_triangle(r, uv, key, rgb, alpha);
        }
    }
    const am_rig *rig = m->rig;
    static const uint8_t white[3] = {255, 255, 255};
    double lw = style && style->line_width > 0 ? style->line_width : 2.0;
    if (flags & AM_DRAW_BONES)
        for (size_t b = 0; b < rig->bone_count; b++) {
            if (rig->is_helper[b]) continue;
            double a[2], c[2], k;
            if (ami_project(cam, m->heads + b * 3, a, &k) && ami_project(cam, m->tails + b * 3, c, &k))
                am_draw_line(r, a[0], a[1], c[0], c[1], lw, style && style->bone_rgb ? style->bone_rgb : white, 0.9);
        }
    if (flags & AM_DRAW_JOINTS) {
        double rad = style && style->joint_radius > 0 ? style->joint_radius : 4.0;
        for (size_t j = 0; j < rig->joint_count; j++) {
            if (!m->body_joint[j]) continue;
            double uv[2], k;
            if (ami_project(cam, m->joints + j * 3, uv, &k))
                am_draw_disc(r, uv[0], uv[1], rad, 0, style && style->joint_rgb ? style->joint_rgb + j * 3 : white, 1.0);
        }
    }
}

void am_render_backdrop(am_raster *r, const am_camera *cam, const am_studio *studio)
{
    am_studio st;
    if (studio) st = *studio;
    else am_studio_default(&st);
    const int W = r->img.width;
    if (cam->model == AM_CAMERA_ORTHOGRAPHIC) {
        double g[2];
        am_camera_project(cam, (const double[3]){0, 0, 0}, g, NULL);
        for (int y = r->clip[1]; y < r->clip[3]; y++) {
            const uint8_t *c = y + 0.5 >= g[1] ? st.floor : st.wall;
            for (int x = r->clip[0]; x < r->clip[2]; x++) memcpy(r->img.rgb + ((size_t)y * W + x) * 3, c, 3);
        }
        return;
    }
    /* perspective: the ground plane z = 0 out to 1.6 times as far as the optical axis meets it
     * (a studio floor with the wall behind it), 25 m when the camera looks up */
    double C[3], A[3];
    am_camera_centre(cam, C);
    am_camera_axis(cam, A);
    double reach = A[2] < -1e-6 && C[2] > 0 ? 1.6 * (-C[2] / A[2]) * hypot(A[0], A[1]) : 25.0;
    double reach2 = reach * reach;
    for (int y = r->clip[1]; y < r->clip[3]; y++)
        for (int x = r->clip[0]; x < r->clip[2]; x++) {
            uint8_t *o = r->img.rgb + ((size_t)y * W + x) * 3;
            memcpy(o, st.wall, 3);
            double ab[2];
            if (!am_camera_undistort(cam, (const double[2]){x + 0.5, y + 0.5}, ab)) continue;
            /* world ray: R^T (a, b, 1) */
            const double *R = cam->R;
            double d[3] = {R[0] * ab[0] + R[3] * ab[1] + R[6], R[1] * ab[0] + R[4] * ab[1] + R[7],
                           R[2] * ab[0] + R[5] * ab[1] + R[8]};
            if (!(d[2] < -1e-9)) continue;
            double s = -C[2] / d[2];
            double hx = C[0] + s * d[0] - C[0], hy = C[1] + s * d[1] - C[1];
            if (s <= 0 || hx * hx + hy * hy > reach2) continue;
            memcpy(o, st.floor, 3);
            /* depth of the floor point: camera z = s (the ray has camera z 1 per unit s) */
            r->depth[(size_t)y * W + x] = (float)(-1.0 / s);
        }
}
