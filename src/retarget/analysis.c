/* What a skeleton looks like to the matcher and the transfer: which bones take part (helpers
 * and end sites do not), where IK-driven feet really hang, which side of the body each
 * subtree is on, how big it is. Computed from the rest pose only. */
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "retarget_internal.h"

void ami_skel_free(ami_skel *sk)
{
    if (!sk) return;
    am_free(sk->names);
    am_free(sk->excluded);
    am_free(sk->ppar);
    am_free(sk->spar);
    am_free(sk->order);
    am_free(sk->child_start);
    am_free(sk->child);
    am_free(sk->side);
    am_free(sk->heads);
    am_free(sk->tails);
    am_free(sk->sub_centroid);
    am_free(sk->sub_count);
    am_free(sk->reach);
    memset(sk, 0, sizeof *sk);
}

/* A foot that hangs from the body (the IK target of a Blender leg, Quaternius' IKBackLeg.L and
 * the Knight's Foot.L) but sits where a leg ends: its head is on the rest tail of a leaf bone
 * elsewhere in the tree (within 6% of that bone's length: the spider's feet sit 4% below their
 * legs' tips), and not on its own parent. Such a foot follows that leg. */
static int32_t ami_detached_leg(const ami_skel *sk, size_t f, const int32_t *nchild)
{
    const am_rig *rig = sk->rig;
    int32_t p = rig->parent[f];
    if (p < 0) return -1;
    const double *h = sk->heads + 3 * f;
    double lp = rig->length[p];
    if (am_vec3_dist(h, sk->tails + 3 * (size_t)p) < 0.05 * lp || am_vec3_dist(h, sk->heads + 3 * (size_t)p) < 0.05 * lp)
        return -1;
    int32_t best = -1;
    double best_d = INFINITY;
    for (size_t c = 0; c < sk->B; c++) {
        if (c == f || (int32_t)c == p || sk->excluded[c] || nchild[c]) continue;
        double d = am_vec3_dist(h, sk->tails + 3 * c);
        if (!(d < 0.06 * rig->length[c]) || d >= best_d) continue;
        /* not inside the foot's own subtree */
        int32_t a = (int32_t)c;
        while (a >= 0 && a != (int32_t)f) a = rig->parent[a];
        if (a == (int32_t)f) continue;
        best = (int32_t)c;
        best_d = d;
    }
    return best;
}

am_status ami_skel_build(const am_rig *rig, ami_skel *sk, am_error *err)
{
    memset(sk, 0, sizeof *sk);
    size_t B = rig->bone_count;
    sk->rig = rig;
    sk->B = B;
    sk->names = am_alloc_array(B, sizeof *sk->names);
    sk->excluded = am_alloc_array(B, 1);
    sk->ppar = am_alloc_array(B, sizeof *sk->ppar);
    sk->spar = am_alloc_array(B, sizeof *sk->spar);
    sk->order = am_alloc_array(B, sizeof *sk->order);
    sk->child_start = am_alloc_array(B + 1, sizeof *sk->child_start);
    sk->child = am_alloc_array(B, sizeof *sk->child);
    sk->side = am_alloc_array(B, sizeof *sk->side);
    sk->heads = am_alloc_array(B * 3, sizeof *sk->heads);
    sk->tails = am_alloc_array(B * 3, sizeof *sk->tails);
    sk->sub_centroid = am_alloc_array(B * 3, sizeof *sk->sub_centroid);
    sk->sub_count = am_alloc_array(B, sizeof *sk->sub_count);
    sk->reach = am_alloc_array(B, sizeof *sk->reach);
    int32_t *nchild = am_alloc_array(B, sizeof *nchild);
    uint8_t *helper_sub = am_alloc_array(B, 1);
    double *pts = am_alloc_array(B * 6, sizeof *pts);
    if (!sk->names || !sk->excluded || !sk->ppar || !sk->spar || !sk->order || !sk->child_start || !sk->child ||
        !sk->side || !sk->heads || !sk->tails || !sk->sub_centroid || !sk->sub_count || !sk->reach || !nchild ||
        !helper_sub || !pts) {
        am_free(nchild);
        am_free(helper_sub);
        am_free(pts);
        ami_skel_free(sk);
        return AM_FAIL(err, AM_E_NOMEM, "skeleton analysis of %zu bones", B);
    }
    sk->rig = rig;
    sk->B = B;
    ami_names_analyse(rig, sk->names);
    for (size_t b = 0; b < B; b++) {
        am_mat4_get_trans(rig->rest_mat + 16 * b, sk->heads + 3 * b);
        double local[3] = {0.0, rig->length[b], 0.0};
        am_mat4_mul_point(rig->rest_mat + 16 * b, local, sk->tails + 3 * b);
        if (rig->parent[b] >= 0) nchild[rig->parent[b]]++;
    }
    /* Helpers by name only count when everything below them is one too: Quaternius' IKBackLeg.L
     * is named like an IK target but carries the foot. */
    for (size_t b = B; b-- > 0;) helper_sub[b] = sk->names[b].helper;
    for (size_t b = B; b-- > 1;)
        if (!helper_sub[b]) helper_sub[rig->parent[b]] = 0;
    for (size_t b = 1; b < B; b++)
        sk->excluded[b] = (rig->is_helper && rig->is_helper[b]) || helper_sub[b] || (sk->names[b].end && !nchild[b]);
    /* Children that still take part, for the leaf test of detached feet. */
    memset(nchild, 0, B * sizeof *nchild);
    for (size_t b = 1; b < B; b++)
        if (!sk->excluded[b]) nchild[rig->parent[b]]++;
    for (size_t b = 0; b < B; b++) sk->ppar[b] = rig->parent[b];
    for (size_t b = 1; b < B; b++) {
        if (sk->excluded[b]) continue;
        int32_t leg = ami_detached_leg(sk, b, nchild);
        if (leg >= 0) sk->ppar[b] = leg;
    }
    /* Order by position parent: a breadth-first walk from the root. */
    uint8_t *placed = helper_sub; /* reused as scratch */
    memset(placed, 0, B);
    size_t n = 0;
    sk->order[n++] = 0;
    placed[0] = 1;
    for (size_t head = 0; head < n; head++) {
        int32_t p = sk->order[head];
        for (size_t b = 0; b < B; b++)
            if (!placed[b] && sk->ppar[b] == p) {
                placed[b] = 1;
                sk->order[n++] = (int32_t)b;
            }
    }
    /* A cycle of detached feet (a foot on a leg below it) falls back to the rig's parents. */
    if (n < B) {
        for (size_t b = 0; b < B; b++) sk->ppar[b] = rig->parent[b];
        for (size_t b = 0; b < B; b++) sk->order[b] = (int32_t)b;
    }
    for (size_t b = 0; b < B; b++) {
        int32_t a = sk->ppar[b];
        while (a >= 0 && sk->excluded[a]) a = sk->ppar[a];
        sk->spar[b] = a;
    }
    sk->root = 0;
    /* Structural children, in bone order. */
    memset(sk->child_start, 0, (B + 1) * sizeof *sk->child_start);
    for (size_t b = 1; b < B; b++)
        if (!sk->excluded[b] && sk->spar[b] >= 0) sk->child_start[sk->spar[b] + 1]++;
    for (size_t b = 0; b < B; b++) sk->child_start[b + 1] += sk->child_start[b];
    memset(nchild, 0, B * sizeof *nchild);
    for (size_t b = 1; b < B; b++)
        if (!sk->excluded[b] && sk->spar[b] >= 0) {
            int32_t p = sk->spar[b];
            sk->child[sk->child_start[p] + nchild[p]++] = (int32_t)b;
        }
    /* Body size, height and subtree summaries over the bones that take part. */
    size_t np = 0;
    sk->min_z = INFINITY;
    double max_z = -INFINITY;
    for (size_t b = 0; b < B; b++) {
        if (sk->excluded[b]) continue;
        memcpy(pts + 3 * np++, sk->heads + 3 * b, 3 * sizeof(double));
        memcpy(pts + 3 * np++, sk->tails + 3 * b, 3 * sizeof(double));
        for (int e = 0; e < 2; e++) {
            double z = (e ? sk->tails : sk->heads)[3 * b + 2];
            if (z < sk->min_z) sk->min_z = z;
            if (z > max_z) max_z = z;
        }
    }
    sk->size = am_body_size(pts, np, NULL);
    sk->height = max_z - sk->min_z;
    for (size_t b = 0; b < B; b++) {
        for (int k = 0; k < 3; k++)
            sk->sub_centroid[3 * b + (size_t)k] = 0.5 * (sk->heads[3 * b + (size_t)k] + sk->tails[3 * b + (size_t)k]);
        sk->sub_count[b] = sk->excluded[b] ? 0 : 1;
        sk->reach[b] = sk->excluded[b] ? 0.0 : rig->length[b];
    }
    for (size_t i = B; i-- > 0;) {
        size_t b = (size_t)sk->order[i];
        if (sk->excluded[b]) continue;
        double best = 0.0;
        for (int32_t k = sk->child_start[b]; k < sk->child_start[b + 1]; k++) {
            size_t c = (size_t)sk->child[k];
            double w = (double)sk->sub_count[c];
            for (int d = 0; d < 3; d++) sk->sub_centroid[3 * b + (size_t)d] += w * sk->sub_centroid[3 * c + (size_t)d];
            sk->sub_count[b] += sk->sub_count[c];
            if (sk->reach[c] > best) best = sk->reach[c];
        }
        /* the centroid sums were weighted by counts: divide once the children are in */
        if (sk->sub_count[b] > 1)
            for (int d = 0; d < 3; d++) sk->sub_centroid[3 * b + (size_t)d] /= (double)sk->sub_count[b];
        sk->reach[b] += best;
    }
    /* A bone is on the side of X its head is on (a leg crossed over the midline is still the
     * left one), or for a head on the midline, its tail (a clavicle starting on the spine).
     * Bones whose two ends are on the midline are in the middle, whatever hangs from them: an
     * arm re-posed to one side does not move the spine off the midline. */
    double x0 = sk->heads[0];
    for (size_t b = 0; b < B; b++) {
        double hx = sk->heads[3 * b] - x0, tx = sk->tails[3 * b] - x0;
        if (fabs(hx) > 0.01 * sk->size) sk->side[b] = hx > 0 ? 1 : -1;
        else if (fabs(tx) > 0.01 * sk->size) sk->side[b] = tx > 0 ? 1 : -1;
        else sk->side[b] = 0;
    }
    am_free(nchild);
    am_free(helper_sub);
    am_free(pts);
    return AM_OK;
}
