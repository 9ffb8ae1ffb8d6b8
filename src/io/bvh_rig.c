/* BVH skeletons and motions <-> am_rig / am_motion (docs/bvh.md).
 *
 * A BVH joint is a point with a frame that is world-aligned at rest; a bone of ours has a
 * roll-0 rest frame R_rest(b) (SPEC 2.2). With C the file -> world axis map, a BVH local
 * rotation R_J becomes the bone's local rotation
 *     L_b = R_rest(b)^-1 (C R_J C^T) R_rest(b)
 * because the posed bone frame is the joint's world rotation applied to the rest frame:
 * W_b = (C G_J C^T) R_rest(b). The root's world rotation C R_root C^T is root_quat.
 * The inverse map is the same conjugation backwards, so BVH -> rig -> BVH reproduces every
 * joint position up to rounding. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/bvh.h"
#include "anymove/math.h"
#include "core/internal.h"
#include "rig/rig_internal.h"

/* World = C * file. Y up, facing +Z: (x, y, z) -> (x, -z, y), as glTF (SPEC 4.5). */
static void ami_axes_matrix(am_bvh_axes axes, double C[9])
{
    if (axes == AM_BVH_AXES_Z_UP) {
        am_mat3_identity(C);
        return;
    }
    static const double yup[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
    memcpy(C, yup, sizeof yup);
}

static void ami_rest_positions(const am_bvh *bvh, double *p)
{
    for (size_t j = 0; j < bvh->joint_count; j++) {
        const am_bvh_joint *jt = &bvh->joints[j];
        if (jt->parent < 0) memcpy(p, jt->offset, sizeof(double) * 3);
        else am_vec3_add(p + (size_t)jt->parent * 3, jt->offset, p + j * 3);
    }
}

/* BVH is Y up unless the caller says otherwise: a guess from the rest pose's extent fails on
 * every creature longer than it is tall (docs/decisions.md). */
static am_bvh_axes ami_axes(const am_bvh_opts *opts)
{
    return opts && opts->axes == AM_BVH_AXES_Z_UP ? AM_BVH_AXES_Z_UP : AM_BVH_AXES_Y_UP;
}

/* slides[j] = 1 if a position channel of non-root joint j moves it off its OFFSET by more than
 * 1e-6 of the skeleton size in some frame. */
static void ami_sliding_joints(const am_bvh *bvh, uint8_t *slides)
{
    double tol = 1e-6 * am_bvh_rest_size(bvh);
    for (size_t j = 0; j < bvh->joint_count; j++) {
        const am_bvh_joint *jt = &bvh->joints[j];
        slides[j] = 0;
        if (jt->parent < 0) continue;
        for (size_t t = 0; t < bvh->frame_count && !slides[j]; t++) {
            const double *row = bvh->frames + t * bvh->channel_count + jt->channel_start;
            for (uint32_t c = 0; c < jt->channel_count; c++)
                if (jt->channels[c] <= AM_BVH_ZPOS && fabs(row[c] - jt->offset[jt->channels[c]]) > tol)
                    slides[j] = 1;
        }
    }
}

static double ami_scale(const am_bvh_opts *opts)
{
    return opts && opts->scale > 0 && isfinite(opts->scale) ? opts->scale : 1.0;
}

/* Name not yet in the map: base + suffix, then base + suffix + "_2", "_3"... */
static char *ami_unique_name(const ami_names *taken, const char *base, const char *suffix)
{
    char buf[320];
    for (unsigned k = 1; k < 100000; k++) {
        if (k == 1) snprintf(buf, sizeof buf, "%s%s", base, suffix);
        else snprintf(buf, sizeof buf, "%s%s_%u", base, suffix, k);
        if (ami_names_find_str(taken, buf) < 0) return am_strdup(buf);
    }
    return NULL;
}

static am_status ami_rig_from_bvh(const am_bvh *bvh, const am_bvh_opts *opts, am_rig **out,
                                  am_error *err)
{
    assert(bvh && out);
    *out = NULL;
    if (bvh->joint_count == 0) return AM_FAIL(err, AM_E_EMPTY, "BVH without joints");
    size_t J = bvh->joint_count;
    double C[9], s = ami_scale(opts);
    ami_axes_matrix(ami_axes(opts), C);
    double size = am_bvh_rest_size(bvh) * s;
    /* A child closer than this is "at the joint": its bone would be rejected as zero-length. */
    double eps = fmax(1e-6 * size, 1e-8);

    size_t max_joints = 2 * J;
    double *pos = am_alloc_array(max_joints, 3 * sizeof(double));
    char **jnames = am_alloc_array(max_joints, sizeof(char *));
    int32_t *tail = am_alloc_array(J, sizeof(int32_t));
    const char **bhead = am_alloc_array(J, sizeof(char *));
    const char **btail = am_alloc_array(J, sizeof(char *));
    const char **bparent = am_alloc_array(J, sizeof(char *));
    uint8_t *slides = am_alloc_array(J, 1);
    size_t *subtree = am_alloc_array(J, sizeof *subtree); /* joints in j's block, j included */
    size_t *first = NULL;
    int32_t *kids = NULL;
    ami_names taken = {0};
    am_status st = AM_OK;
    size_t nj = J;
    if (!pos || !jnames || !tail || !bhead || !btail || !bparent || !slides || !subtree ||
        !ami_children_lists(&bvh->joints[0].parent, sizeof bvh->joints[0], J, &first, &kids) ||
        ami_names_reserve(&taken, max_joints) != AM_OK) {
        st = AM_FAIL(err, AM_E_NOMEM, "BVH rig");
        goto done;
    }
    /* Depth-first order puts every joint's descendants right after it. */
    for (size_t j = 0; j < J; j++) subtree[j] = 1;
    for (size_t j = J; j-- > 1;)
        if (bvh->joints[j].parent >= 0) subtree[bvh->joints[j].parent] += subtree[j];
    ami_rest_positions(bvh, pos);
    ami_sliding_joints(bvh, slides);
    for (size_t j = 0; j < J; j++) {
        double w[3];
        am_mat3_mul_vec3(C, pos + j * 3, w);
        am_vec3_scale(w, s, pos + j * 3);
        jnames[j] = bvh->joints[j].name; /* borrowed; extra names below are owned */
        int32_t prev;
        if (ami_names_add(&taken, jnames[j], strlen(jnames[j]), (int32_t)j, &prev) != AM_OK) {
            st = AM_FAIL(err, AM_E_NOMEM, "BVH rig");
            goto done;
        }
    }
    for (size_t j = 0; j < J; j++) {
        const am_bvh_joint *jt = &bvh->joints[j];
        tail[j] = -1;
        int32_t sliding = -1;
        for (size_t k = first[j]; k < first[j + 1] && tail[j] < 0; k++) {
            size_t c = (size_t)kids[k];
            if (!(am_vec3_dist(pos + c * 3, pos + j * 3) > eps)) continue;
            /* A child that slides (loc) keeps a head of its own: the tail stays put. */
            if (slides[c]) {
                if (sliding < 0) sliding = (int32_t)c;
                continue;
            }
            tail[j] = (int32_t)c;
        }
        if (tail[j] >= 0) continue;
        double d[3] = {0, 0, 0};
        const char *suffix = "_tail";
        if (sliding >= 0) am_vec3_sub(pos + (size_t)sliding * 3, pos + j * 3, d);
        if (sliding < 0 && jt->has_end) {
            am_mat3_mul_vec3(C, jt->end_offset, d);
            am_vec3_scale(d, s, d);
        }
        if (sliding >= 0) {
            /* at the sliding child's rest head, named like a synthetic tail */
        } else if (am_vec3_norm(d) > eps) {
            suffix = "_end";
        } else {
            /* Synthetic tail: along the first descendant away from the joint, else along
             * the parent's bone, else up; a tenth of the skeleton long. */
            bool found = false;
            for (size_t c = j + 1; c < j + subtree[j] && !found; c++) {
                if (am_vec3_dist(pos + c * 3, pos + j * 3) > eps) {
                    am_vec3_sub(pos + c * 3, pos + j * 3, d);
                    found = true;
                }
            }
            if (!found && jt->parent >= 0 && tail[jt->parent] >= 0)
                am_vec3_sub(pos + (size_t)tail[jt->parent] * 3, pos + (size_t)jt->parent * 3, d), found = true;
            if (!found) am_vec3_set(d, 0, 0, 1);
            am_vec3_normalize(d, d);
            am_vec3_scale(d, fmax(0.1 * size, 1e-3), d);
        }
        jnames[nj] = ami_unique_name(&taken, jt->name, suffix);
        int32_t prev;
        if (!jnames[nj] ||
            ami_names_add(&taken, jnames[nj], strlen(jnames[nj]), (int32_t)nj, &prev) != AM_OK) {
            am_free(jnames[nj]);
            st = AM_FAIL(err, AM_E_NOMEM, "joint name");
            goto done;
        }
        am_vec3_add(pos + j * 3, d, pos + nj * 3);
        tail[j] = (int32_t)nj++;
    }
    for (size_t j = 0; j < J; j++) {
        bhead[j] = jnames[j];
        btail[j] = jnames[tail[j]];
        bparent[j] = bvh->joints[j].parent < 0 ? NULL : jnames[bvh->joints[j].parent];
    }
    am_rig_desc desc = {
        .joint_count = nj,
        .joint_names = (const char *const *)jnames,
        .joint_pos = pos,
        .bone_count = J,
        .bone_names = (const char *const *)jnames,
        .bone_head = bhead,
        .bone_tail = btail,
        .bone_parent = bparent,
    };
    st = am_rig_build(&desc, out, err);
done:
    if (jnames)
        for (size_t j = J; j < nj; j++) am_free(jnames[j]);
    ami_names_free(&taken);
    am_free(subtree);
    am_free(first);
    am_free(kids);
    if (st != AM_OK) am_error_set_file(err, bvh->source);
    am_free(pos);
    am_free(jnames);
    am_free(tail);
    am_free(bhead);
    am_free(btail);
    am_free(bparent);
    am_free(slides);
    return st;
}

static void ami_rest_rot_inv(const am_rig *rig, size_t b, double Rinv[9])
{
    am_mat4_get_rot(rig->rest_inv + b * 16, Rinv);
}

static am_status ami_motion_from_bvh(const am_bvh *bvh, const am_rig *rig,
                                     const am_bvh_opts *opts, am_motion **out, am_error *err)
{
    assert(bvh && rig && out);
    *out = NULL;
    if (bvh->joint_count == 0) return AM_FAIL(err, AM_E_EMPTY, "BVH without joints");
    if (bvh->frame_count == 0) return AM_FAIL(err, AM_E_EMPTY, "BVH without frames");
    size_t J = bvh->joint_count, T = bvh->frame_count, B = rig->bone_count;
    double C[9], CT[9], s = ami_scale(opts);
    ami_axes_matrix(ami_axes(opts), C);
    am_mat3_transpose(C, CT);
    int32_t *map = am_alloc_array(J, sizeof *map);
    uint8_t *moved = am_alloc_array(J, 1);
    am_motion *mo = NULL;
    am_status st = AM_OK;
    if (!map || !moved) {
        st = AM_FAIL(err, AM_E_NOMEM, "BVH map");
        goto fail;
    }
    for (size_t j = 0; j < J; j++) {
        map[j] = am_rig_find_bone(rig, bvh->joints[j].name);
        if (map[j] < 0) {
            st = AM_FAIL(err, AM_E_NAME, "BVH joint '%s' is not a bone of the rig",
                         bvh->joints[j].name);
            goto fail;
        }
    }
    if (rig->parent[map[0]] >= 0) {
        st = AM_FAIL(err, AM_E_ROOT, "BVH root '%s' is not the rig's root", bvh->joints[0].name);
        goto fail;
    }
    st = am_motion_create(rig, T, 1.0 / bvh->frame_time, &mo, err);
    if (st != AM_OK) goto fail;
    if (!mo->quat) {
        mo->quat = am_alloc_array(T * B * 4, sizeof(double));
        if (!mo->quat) {
            st = AM_FAIL(err, AM_E_NOMEM, "motion quaternions");
            goto fail;
        }
        for (size_t i = 0; i < T * B; i++) mo->quat[i * 4] = 1.0;
    }
    ami_sliding_joints(bvh, moved);
    bool any_slides = false;
    for (size_t j = 0; j < J; j++) any_slides = any_slides || moved[j];
    if (any_slides && !(mo->loc = am_alloc_array(T * B, 3 * sizeof(double)))) {
        st = AM_FAIL(err, AM_E_NOMEM, "motion translations");
        goto fail;
    }
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < J; j++) {
            const am_bvh_joint *jt = &bvh->joints[j];
            size_t b = (size_t)map[j];
            double R[9], Rw[9], tmp[9];
            am_bvh_joint_rotation(bvh, t, j, R);
            am_mat3_mul(C, R, tmp);
            am_mat3_mul(tmp, CT, Rw); /* world axes: C R C^T */
            const double *row = bvh->frames + t * bvh->channel_count + jt->channel_start;
            double tr[3];
            memcpy(tr, jt->offset, sizeof tr);
            for (uint32_t c = 0; c < jt->channel_count; c++)
                if (jt->channels[c] <= AM_BVH_ZPOS) tr[jt->channels[c]] = row[c];
            if (jt->parent < 0) {
                double w[3];
                am_mat3_mul_vec3(C, tr, w);
                am_vec3_scale(w, s, mo->trans + t * 3);
                am_quat_from_mat3(Rw, mo->root_quat + t * 4);
                continue;
            }
            double Rinv[9], L[9];
            ami_rest_rot_inv(rig, b, Rinv);
            if (moved[j]) {
                /* The head's offset from its rest place, in the bone's rest frame (SPEC 2.3):
                 * loc = R_rest^-1 s C (tr - OFFSET). */
                double d[3], w[3];
                am_vec3_sub(tr, jt->offset, d);
                am_mat3_mul_vec3(C, d, w);
                am_vec3_scale(w, s, w);
                am_mat3_mul_vec3(Rinv, w, mo->loc + (t * B + b) * 3);
            }
            am_mat3_mul(Rinv, Rw, L);
            am_mat3_mul(L, rig->rest_rot + b * 9, L);
            double *e = mo->euler + (t * B + b) * 3;
            if (t == 0) am_mat3_to_euler_xyz(L, e);
            else am_mat3_to_euler_xyz_near(L, mo->euler + ((t - 1) * B + b) * 3, e);
            am_quat_from_mat3(L, mo->quat + (t * B + b) * 4);
        }
    }
    st = am_motion_compute_joints(mo, rig, err);
    if (st != AM_OK) goto fail;
    am_free(map);
    am_free(moved);
    *out = mo;
    return AM_OK;
fail:
    am_free(map);
    am_free(moved);
    am_motion_free(mo);
    am_error_set_file(err, bvh->source);
    return st;
}

/* R = R_i(a) R_j(b) R_k(c) for distinct axes (i, j, k): angles (a, b, c) in radians.
 * At gimbal lock (|cos b| < 1e-9) c is 0 and the rest goes into a. */
static void ami_mat3_to_euler_axes(const double R[9], const int ax[3], double out[3])
{
    int i = ax[0], j = ax[1], k = ax[2];
    bool even = j == (i + 1) % 3;
    double sgn = even ? 1.0 : -1.0;
    /* cos b from the two other entries of row i: asin alone loses half the digits near
     * +-90 degrees, and the atan2s below would then amplify the noise. */
    double sb = sgn * R[i * 3 + k];
    double cb = hypot(R[i * 3 + i], R[i * 3 + j]);
    double b = atan2(sb, cb);
    if (cb > 1e-7) {
        out[0] = atan2(-sgn * R[j * 3 + k], R[k * 3 + k]);
        out[1] = b;
        out[2] = atan2(-sgn * R[i * 3 + j], R[i * 3 + i]);
        return;
    }
    /* R_i(a) = R R_j(b)^T */
    double Rj[9], M[9];
    if (j == 0) am_mat3_rot_x(b, Rj);
    else if (j == 1) am_mat3_rot_y(b, Rj);
    else am_mat3_rot_z(b, Rj);
    double RjT[9];
    am_mat3_transpose(Rj, RjT);
    am_mat3_mul(R, RjT, M);
    int u = (i + 1) % 3, v = (i + 2) % 3;
    out[0] = atan2(M[v * 3 + u], M[u * 3 + u]);
    out[1] = b;
    out[2] = 0;
}

/* Nearest to prev modulo 360 degrees: keeps curves continuous for interpolating readers. */
static double ami_unwrap_deg(double a, double prev)
{
    return a - 360.0 * round((a - prev) / 360.0);
}

static am_status ami_bvh_from_motion(const am_rig *rig, const am_motion *mo,
                                     const am_bvh_opts *opts, am_bvh **out, am_error *err)
{
    assert(rig && mo && out);
    *out = NULL;
    if (mo->bone_count != rig->bone_count)
        return AM_FAIL(err, AM_E_SHAPE, "motion has %zu bones, rig %zu", mo->bone_count,
                       rig->bone_count);
    if (mo->frame_count == 0) return AM_FAIL(err, AM_E_EMPTY, "motion without frames");
    if (!(mo->fps > 0)) return AM_FAIL(err, AM_E_VALUE, "fps %g", mo->fps);
    size_t B = rig->bone_count, T = mo->frame_count;
    /* Written Y up whatever opts->axes says: the convention every BVH reader assumes. */
    double C[9], CT[9], s = ami_scale(opts);
    ami_axes_matrix(AM_BVH_AXES_Y_UP, C);
    am_mat3_transpose(C, CT);
    const am_bvh *like = opts ? opts->like : NULL;

    am_bvh *b = am_alloc(sizeof *b);
    size_t *order = am_alloc_array(B, sizeof *order);   /* BVH joint -> bone */
    size_t *stack = am_alloc_array(B + 1, sizeof *stack);
    int32_t *where = am_alloc_array(B, sizeof *where);   /* bone -> BVH joint */
    uint8_t *has_child = am_alloc_array(B, 1);
    uint8_t *slides = am_alloc_array(B, 1);
    size_t *first = NULL;
    int32_t *kids = NULL;
    ami_names like_names = {0};
    am_status st = AM_OK;
    if (!b || !order || !stack || !where || !has_child || !slides ||
        !ami_children_lists(rig->parent, sizeof *rig->parent, B, &first, &kids)) {
        st = AM_FAIL(err, AM_E_NOMEM, "BVH");
        goto fail;
    }
    for (size_t k = 0; like && k < like->joint_count; k++) {
        int32_t prev;
        if (ami_names_add(&like_names, like->joints[k].name, strlen(like->joints[k].name),
                          (int32_t)k, &prev) != AM_OK) {
            st = AM_FAIL(err, AM_E_NOMEM, "BVH template names");
            goto fail;
        }
    }
    b->joints = am_alloc_array(B, sizeof *b->joints);
    if (!b->joints) {
        st = AM_FAIL(err, AM_E_NOMEM, "BVH joints");
        goto fail;
    }
    /* Depth-first order, children in bone order: BVH nests each joint inside its parent. */
    size_t n = 0, sp = 0;
    stack[sp++] = 0;
    while (sp) {
        size_t cur = stack[--sp];
        where[cur] = (int32_t)n;
        order[n++] = cur;
        for (size_t k = first[cur + 1]; k-- > first[cur];) stack[sp++] = (size_t)kids[k];
    }
    if (n != B) {
        st = AM_FAIL(err, AM_E_ROOT, "rig bones not reachable from the root");
        goto fail;
    }
    for (size_t bb = 1; bb < B; bb++) has_child[rig->parent[bb]] = 1;
    for (size_t i = 0; mo->loc && i < T * B; i++) {
        const double *l = mo->loc + 3 * i;
        if (l[0] != 0 || l[1] != 0 || l[2] != 0) slides[i % B] = rig->parent[i % B] >= 0;
    }
    b->joint_count = B;
    for (size_t j = 0; j < B; j++) {
        size_t bone = order[j];
        am_bvh_joint *jt = &b->joints[j];
        jt->name = am_strdup(rig->bone_names[bone]);
        if (!jt->name) {
            st = AM_FAIL(err, AM_E_NOMEM, "BVH name");
            goto fail;
        }
        int32_t pb = rig->parent[bone];
        jt->parent = pb < 0 ? -1 : where[pb];
        const double *head = rig->joint_rest + (size_t)rig->head_joint[bone] * 3;
        double d[3];
        if (pb < 0) memcpy(d, head, sizeof d);
        else am_vec3_sub(head, rig->joint_rest + (size_t)rig->head_joint[pb] * 3, d);
        am_mat3_mul_vec3(CT, d, jt->offset);
        am_vec3_scale(jt->offset, 1.0 / s, jt->offset);
        if (!has_child[bone]) {
            jt->has_end = true;
            am_vec3_sub(rig->joint_rest + (size_t)rig->tail_joint[bone] * 3, head, d);
            am_mat3_mul_vec3(CT, d, jt->end_offset);
            am_vec3_scale(jt->end_offset, 1.0 / s, jt->end_offset);
        }
        /* channel layout: the template's when it has three distinct rotation axes */
        int32_t lk = ami_names_find_str(&like_names, jt->name);
        const am_bvh_joint *lj = lk >= 0 ? &like->joints[lk] : NULL;
        if (lj) {
            unsigned rots = 0, mask = 0, pos_mask = 0;
            for (uint32_t c = 0; c < lj->channel_count; c++) {
                if (lj->channels[c] >= AM_BVH_XROT) rots++, mask |= 1u << lj->channels[c];
                else pos_mask |= 1u << lj->channels[c];
            }
            if (rots != 3 || mask != 0x38u || ((pb < 0 || slides[bone]) && pos_mask != 7u)) lj = NULL;
        }
        if (lj) {
            jt->channel_count = lj->channel_count;
            memcpy(jt->channels, lj->channels, sizeof jt->channels);
        } else if (pb < 0 || slides[bone]) {
            static const uint8_t root_ch[6] = {AM_BVH_XPOS, AM_BVH_YPOS, AM_BVH_ZPOS,
                                               AM_BVH_ZROT, AM_BVH_YROT, AM_BVH_XROT};
            jt->channel_count = 6;
            memcpy(jt->channels, root_ch, 6);
        } else {
            static const uint8_t ch[3] = {AM_BVH_ZROT, AM_BVH_YROT, AM_BVH_XROT};
            jt->channel_count = 3;
            memcpy(jt->channels, ch, 3);
        }
        jt->channel_start = (uint32_t)b->channel_count;
        b->channel_count += jt->channel_count;
    }
    b->frame_count = T;
    b->frame_time = 1.0 / mo->fps;
    b->frames = am_alloc_array(T * b->channel_count, sizeof *b->frames);
    if (!b->frames) {
        st = AM_FAIL(err, AM_E_NOMEM, "BVH frames");
        goto fail;
    }
    for (size_t t = 0; t < T; t++) {
        double *row = b->frames + t * b->channel_count;
        for (size_t j = 0; j < B; j++) {
            size_t bone = order[j];
            am_bvh_joint *jt = &b->joints[j];
            double Rw[9], R[9], tmp[9];
            if (jt->parent < 0) {
                am_quat_to_mat3(mo->root_quat + t * 4, Rw);
            } else {
                double L[9], Rinv[9];
                if (mo->quat) am_quat_to_mat3(mo->quat + (t * B + bone) * 4, L);
                else am_euler_xyz_to_mat3(mo->euler + (t * B + bone) * 3, L);
                ami_rest_rot_inv(rig, bone, Rinv);
                am_mat3_mul(rig->rest_rot + bone * 9, L, tmp);
                am_mat3_mul(tmp, Rinv, Rw);
            }
            /* file-axes local rotation: C^T Rw C */
            am_mat3_mul(CT, Rw, tmp);
            am_mat3_mul(tmp, C, R);
            int ax[3], na = 0;
            for (uint32_t c = 0; c < jt->channel_count; c++)
                if (jt->channels[c] >= AM_BVH_XROT) ax[na++] = jt->channels[c] - AM_BVH_XROT;
            double ang[3];
            ami_mat3_to_euler_axes(R, ax, ang);
            double tr[3];
            if (jt->parent < 0) {
                am_mat3_mul_vec3(CT, mo->trans + t * 3, tr);
                am_vec3_scale(tr, 1.0 / s, tr);
            } else {
                /* OFFSET plus the loc of a sliding bone: C^T R_rest(b) loc / s. */
                memcpy(tr, jt->offset, sizeof tr);
                if (mo->loc) {
                    double w[3], f[3];
                    am_mat3_mul_vec3(rig->rest_rot + bone * 9, mo->loc + (t * B + bone) * 3, w);
                    am_mat3_mul_vec3(CT, w, f);
                    am_vec3_madd(tr, 1.0 / s, f, tr);
                }
            }
            na = 0;
            for (uint32_t c = 0; c < jt->channel_count; c++) {
                double *v = row + jt->channel_start + c;
                if (jt->channels[c] <= AM_BVH_ZPOS) {
                    *v = tr[jt->channels[c]];
                } else {
                    *v = AM_DEG(ang[na++]);
                    if (t > 0) *v = ami_unwrap_deg(*v, v[-(ptrdiff_t)b->channel_count]);
                }
            }
        }
    }
    am_free(order);
    am_free(stack);
    am_free(where);
    am_free(has_child);
    am_free(slides);
    am_free(first);
    am_free(kids);
    ami_names_free(&like_names);
    *out = b;
    return AM_OK;
fail:
    am_free(order);
    am_free(stack);
    am_free(where);
    am_free(has_child);
    am_free(slides);
    am_free(first);
    am_free(kids);
    ami_names_free(&like_names);
    am_bvh_free(b);
    return st;
}

/* The conversions run in the scope of opts->ctx; rigs and motions have no warning list, so
 * theirs go to the caller's scope. */
am_status am_rig_from_bvh(const am_bvh *bvh, const am_bvh_opts *opts, am_rig **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_rig_from_bvh(bvh, opts, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_motion_from_bvh(const am_bvh *bvh, const am_rig *rig, const am_bvh_opts *opts,
                             am_motion **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_motion_from_bvh(bvh, rig, opts, out, err);
    am_scope_leave(&sc, NULL);
    return st;
}

am_status am_bvh_from_motion(const am_rig *rig, const am_motion *mo, const am_bvh_opts *opts,
                             am_bvh **out, am_error *err)
{
    am_scope sc;
    am_scope_enter(&sc, opts ? &opts->ctx : NULL);
    am_status st = ami_bvh_from_motion(rig, mo, opts, out, err);
    am_scope_leave(&sc, st >= 0 ? &(*out)->warnings : NULL);
    return st;
}
