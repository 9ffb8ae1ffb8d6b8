/* The bone map: which source bone drives each target bone (docs/retarget.md, "The map").
 *
 * Skeletons are walked as main paths: from a bone, follow the child that continues it (along
 * the midline the biggest subtree, a forward or upward one on a tie; on a limb the child
 * that keeps the direction) to a leaf. Everything else hanging off a path is a side branch.
 * Two paths that correspond are aligned bone by bone, and their side branches are assigned to
 * each other (Hungarian method on a cost of side, attachment point along the path, rest
 * direction, relative length, subtree size and names), each pair again as two paths. The
 * root paths correspond by definition.
 * - Midline paths (spine, neck, tail) are aligned between anchors: the bones where assigned
 *   side branches attach (legs and tail at the pelvis, arms at the chest), bones with the same
 *   name when the rigs share a naming convention, and the path ends. Between anchors, equal
 *   counts pair one to one, other counts map by normalised arc length (Unreal's
 *   "Interpolated" FK chains).
 * - Sided paths (limbs) are aligned by dynamic programming (a sequence alignment whose costs
 *   are arc position, relative length, direction and names; a bone may be skipped at a cost
 *   that grows with its length), so a CMU leg (hip bone, thigh, shin, foot, toe) finds the
 *   thigh, shin and foot of a three-bone leg; target bones skipped between two matches are
 *   filled by arc length.
 *
 * This work is based on:
 * - H. W. Kuhn 1955, J. Munkres 1957: the assignment problem (the O(n^3) shortest augmenting
 *   path form).
 * - S. B. Needleman, C. D. Wunsch 1970: global sequence alignment by dynamic programming.
 * - Epic Games, Unreal Engine IK Retargeter: FK chains with the "Interpolated" rotation mode
 *   (normalised arc length).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "retarget_internal.h"

static const char *const ami_rule_names[AM_RETARGET_RULE_COUNT] = {
    "none", "name", "normalised name", "role", "topology", "chain", "map file", "excluded"};

const char *am_retarget_rule_name(am_retarget_rule rule)
{
    return rule < AM_RETARGET_RULE_COUNT ? ami_rule_names[rule] : "?";
}

void am_retarget_map_free(am_retarget_map *map)
{
    if (!map) return;
    am_free(map->source);
    am_free(map->source_b);
    am_free(map->weight);
    am_free(map->head_bone);
    am_free(map->head_point);
    am_free(map->rule);
    ami_strings_free(map->why, map->target_count);
    am_free(map->source_excluded);
    am_free(map->target_excluded);
    am_free(map->source_vparent);
    am_free(map->target_vparent);
    am_free(map->chains);
    am_warning_list_free(&map->warnings);
    am_free(map);
}

/* ---- the assignment problem --------------------------------------------------------------
 * Rows a (na), columns b (nb), cost[a * nb + b]; leaving an item unassigned costs `alone`.
 * assign[a] = b or -1. Square padding: a row may take a dummy column (cost alone) and a column a
 * dummy row; dummies pair for free. */
static am_status ami_assign(const double *cost, size_t na, size_t nb, double alone, int32_t *assign, am_error *err)
{
    size_t n = na + nb;
    for (size_t i = 0; i < na; i++) assign[i] = -1;
    if (!na || !nb) return AM_OK;
    double *c = am_alloc_array((n + 1) * (n + 1), sizeof *c), *u = am_alloc_array(n + 1, sizeof *u),
           *v = am_alloc_array(n + 1, sizeof *v), *minv = am_alloc_array(n + 1, sizeof *minv);
    size_t *p = am_alloc_array(n + 1, sizeof *p), *way = am_alloc_array(n + 1, sizeof *way);
    uint8_t *used = am_alloc_array(n + 1, 1);
    am_status st = AM_OK;
    if (!c || !u || !v || !minv || !p || !way || !used) {
        st = AM_FAIL(err, AM_E_NOMEM, "assignment of %zu x %zu", na, nb);
        goto done;
    }
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= n; j++) {
            double x;
            if (i <= na && j <= nb) x = cost[(i - 1) * nb + (j - 1)];
            else if (i <= na || j <= nb) x = alone;
            else x = 0.0;
            c[i * (n + 1) + j] = x;
        }
    for (size_t i = 1; i <= n; i++) {
        p[0] = i;
        size_t j0 = 0;
        for (size_t j = 0; j <= n; j++) {
            minv[j] = INFINITY;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            size_t i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (size_t j = 1; j <= n; j++) {
                if (used[j]) continue;
                double cur = c[i0 * (n + 1) + j] - u[i0] - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if (minv[j] < delta) {
                    delta = minv[j];
                    j1 = j;
                }
            }
            for (size_t j = 0; j <= n; j++) {
                if (used[j]) {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            size_t j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    for (size_t j = 1; j <= nb; j++)
        if (p[j] >= 1 && p[j] <= na) assign[p[j] - 1] = (int32_t)(j - 1);
done:
    am_free(c);
    am_free(u);
    am_free(v);
    am_free(minv);
    am_free(p);
    am_free(way);
    am_free(used);
    return st;
}

/* ---- paths -------------------------------------------------------------------------------- */
typedef struct ami_path {
    int32_t *bone;  /* [n] */
    size_t n;
    double *u0;     /* [n + 1] normalised arc length at each bone's head (u0[n] = 1) */
    double len;     /* metres */
    bool center;    /* the path starts on the midline */
} ami_path;

static void ami_path_free(ami_path *p)
{
    am_free(p->bone);
    am_free(p->u0);
    memset(p, 0, sizeof *p);
}

static double ami_angle(const double a[3], const double b[3])
{
    double na = am_vec3_norm(a), nb = am_vec3_norm(b);
    if (!(na > 0) || !(nb > 0)) return 0.0;
    double c = am_vec3_dot(a, b) / (na * nb);
    return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

static bool ami_on_path(const ami_path *p, int32_t b)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->bone[i] == b) return true;
    return false;
}

static bool ami_is_thumb(const ami_skel *sk, int32_t b)
{
    return strstr(sk->names[b].norm, "thumb") != NULL;
}

static bool ami_names_thumb(const ami_skel *sk)
{
    for (size_t b = 0; b < sk->B; b++)
        if (!sk->excluded[b] && ami_is_thumb(sk, (int32_t)b)) return true;
    return false;
}

/* The child that continues a path through bone b, or -1. */
static int32_t ami_continuation(const ami_skel *sk, int32_t b, bool center)
{
    int32_t best = -1;
    double best_score = -INFINITY;
    double dir[3];
    am_vec3_sub(sk->tails + 3 * (size_t)b, sk->heads + 3 * (size_t)b, dir);
    /* A limb does not go on into a thumb where both rigs name theirs: it leaves the hand
     * sideways, a side branch. By direction alone AnimatedDrawings' thumb (the hand's only
     * child beside an end site) drove the Knight's MiddleHand, and CMU 08_01's hand, whose
     * bone points at its thumb, gave its thumb to MiddleHand and its index to the thumb. */
    bool skip = !center && sk->thumbs_named;
    /* an only child always continues (a tail curled off the midline is still the tail) */
    if (sk->child_start[b + 1] - sk->child_start[b] == 1) {
        int32_t c = sk->child[sk->child_start[b]];
        return skip && ami_is_thumb(sk, c) ? -1 : c;
    }
    for (int32_t k = sk->child_start[b]; k < sk->child_start[b + 1]; k++) {
        int32_t c = sk->child[k];
        double score, to[3];
        if (skip && ami_is_thumb(sk, c)) continue;
        am_vec3_sub(sk->sub_centroid + 3 * (size_t)c, sk->heads + 3 * (size_t)c, to);
        if (center) {
            if (sk->side[c] != 0) continue;
            /* the biggest subtree; between near equals, the one reaching forward and up (the
             * spine and the head before the tail) */
            double n = am_vec3_norm(to);
            double fwd_up = n > 0 ? (-to[1] + to[2]) / n : 0.0;
            score = log((double)sk->sub_count[c]) + 0.3 * fwd_up;
        } else {
            /* a limb goes on to its end: the child that keeps the direction best */
            score = -ami_angle(dir, to) + 0.05 * log((double)sk->sub_count[c]);
        }
        if (score > best_score) {
            best_score = score;
            best = c;
        }
    }
    return best;
}

/* The main path from `start`; a root's path is on the midline whatever its first bone leans to
 * (a BVH root's tail points at its first child, often a hip). */
static am_status ami_path_build(const ami_skel *sk, int32_t start, bool is_root, ami_path *p, am_error *err)
{
    memset(p, 0, sizeof *p);
    size_t cap = 8;
    p->bone = am_alloc_array(cap, sizeof *p->bone);
    AMI_CHECK(err, p->bone, AM_E_NOMEM, "path");
    p->center = is_root || sk->side[start] == 0;
    for (int32_t b = start; b >= 0; b = ami_continuation(sk, b, p->center)) {
        if (p->n == cap) {
            int32_t *nb = am_realloc_array(p->bone, cap * 2, sizeof *nb);
            if (!nb) {
                ami_path_free(p);
                return AM_FAIL(err, AM_E_NOMEM, "path");
            }
            p->bone = nb;
            cap *= 2;
        }
        p->bone[p->n++] = b;
    }
    p->u0 = am_alloc_array(p->n + 1, sizeof *p->u0);
    if (!p->u0) {
        ami_path_free(p);
        return AM_FAIL(err, AM_E_NOMEM, "path");
    }
    /* Arc length along heads (a child's head, not its parent's tail, is where it bends), the
     * last bone to its tail. */
    double cum = 0.0;
    for (size_t i = 0; i < p->n; i++) {
        p->u0[i] = cum;
        size_t b = (size_t)p->bone[i];
        double seg = i + 1 < p->n ? am_vec3_dist(sk->heads + 3 * b, sk->heads + 3 * (size_t)p->bone[i + 1])
                                  : sk->rig->length[b];
        cum += seg > 0 ? seg : 1e-12;
    }
    p->len = cum;
    for (size_t i = 0; i < p->n; i++) p->u0[i] /= cum;
    p->u0[p->n] = 1.0;
    return AM_OK;
}

/* The point at arc length u of a path, as (bone, point in that bone's rest frame): bones are
 * rigid between their head and the next path bone's head. */
static void ami_path_point(const ami_skel *sk, const ami_path *p, double u, int32_t *bone, double local[3])
{
    size_t i = 0;
    while (i + 1 < p->n && u >= p->u0[i + 1]) i++;
    size_t b = (size_t)p->bone[i];
    double f = (u - p->u0[i]) / (p->u0[i + 1] - p->u0[i]);
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    double end[3], w[3];
    if (i + 1 < p->n) memcpy(end, sk->heads + 3 * (size_t)p->bone[i + 1], sizeof end);
    else memcpy(end, sk->tails + 3 * b, sizeof end);
    for (int k = 0; k < 3; k++) w[k] = sk->heads[3 * b + (size_t)k] + f * (end[k] - sk->heads[3 * b + (size_t)k]);
    am_mat4_mul_point(sk->rig->rest_inv + 16 * b, w, local);
    *bone = (int32_t)b;
}

/* ---- the matcher ---------------------------------------------------------------------------- */
typedef struct ami_matcher {
    const ami_skel *a, *b;  /* source, target */
    am_retarget_map *map;
    bool names_trusted;     /* the rigs share a naming convention: exact names anchor */
    uint8_t *a_used;        /* [Bs] drives a target bone directly */
    size_t chain_cap;
    am_error *err;
} ami_matcher;

/* 3 exact name, 2 normalised name, 1 same role, 0 nothing, -1 two different limb roles. */
static int ami_name_rel(const ami_matcher *m, int32_t sa, int32_t sb)
{
    const ami_skel *A = m->a, *B = m->b;
    if (strcmp(A->rig->bone_names[sa], B->rig->bone_names[sb]) == 0) return 3;
    const ami_bone_name *x = &A->names[sa], *y = &B->names[sb];
    if (A->side[sa] != B->side[sb]) return 0;
    if (x->norm[0] && strcmp(x->norm, y->norm) == 0) return 2;
    if (x->role != AMI_ROLE_NONE && x->role == y->role) return 1;
    bool limb_x = x->role >= AMI_ROLE_CLAVICLE && x->role <= AMI_ROLE_TOE;
    bool limb_y = y->role >= AMI_ROLE_CLAVICLE && y->role <= AMI_ROLE_TOE;
    return limb_x && limb_y ? -1 : 0;
}

static double ami_name_bonus(const ami_matcher *m, int32_t sa, int32_t sb, double scale)
{
    int r = ami_name_rel(m, sa, sb);
    double exact = m->names_trusted ? 3.0 : 1.5;
    return scale * (r == 3 ? exact : r == 2 ? 1.0 : r == 1 ? 0.5 : r == -1 ? -0.3 : 0.0);
}

static void ami_set_direct(ami_matcher *m, int32_t g, int32_t s)
{
    am_retarget_map *map = m->map;
    map->source[g] = s;
    map->source_b[g] = -1;
    map->weight[g] = 0.0;
    map->head_bone[g] = s;
    memset(map->head_point + 3 * (size_t)g, 0, 3 * sizeof(double));
    map->rule[g] = AM_RETARGET_RULE_TOPOLOGY; /* named by ami_label later */
    m->a_used[s] = 1;
}

static void ami_set_chain(ami_matcher *m, int32_t g, int32_t s1, int32_t s2, double w, const ami_path *pa, double u_head)
{
    am_retarget_map *map = m->map;
    if (w <= 0.0 || s2 < 0) {
        s2 = -1;
        w = 0.0;
    } else if (w >= 1.0) {
        s1 = s2;
        s2 = -1;
        w = 0.0;
    }
    map->source[g] = s1;
    map->source_b[g] = s2;
    map->weight[g] = w;
    map->rule[g] = AM_RETARGET_RULE_CHAIN;
    ami_path_point(m->a, pa, u_head, &map->head_bone[g], map->head_point + 3 * (size_t)g);
}

/* Arc-length mapping of target bones (ib..ie) of path pb onto source bones (ia..ie_a) of pa
 * whose ends are matched: interior target bones blend the two source bones whose mid-points
 * (the ends at 0 and 1) bracket their own. */
static void ami_arc_fill(ami_matcher *m, const ami_path *pa, size_t a0, size_t a1, const ami_path *pb, size_t b0,
                         size_t b1)
{
    double ua0 = pa->u0[a0], ua1 = pa->u0[a1 + 1], ub0 = pb->u0[b0], ub1 = pb->u0[b1 + 1];
    for (size_t j = b0 + 1; j < b1; j++) {
        double t = ((pb->u0[j] + pb->u0[j + 1]) / 2 - ub0) / (ub1 - ub0);
        double th = (pb->u0[j] - ub0) / (ub1 - ub0);
        /* keys: a0 at 0, interior source bones at their mid-points, a1 at 1 */
        size_t i = a0;
        double k_lo = 0.0, k_hi = 1.0;
        for (size_t k = a0 + 1; k <= a1; k++) {
            double key = k == a1 ? 1.0 : ((pa->u0[k] + pa->u0[k + 1]) / 2 - ua0) / (ua1 - ua0);
            if (key > t) {
                k_hi = key;
                break;
            }
            i = k;
            k_lo = key;
        }
        int32_t s1 = pa->bone[i], s2 = i < a1 ? pa->bone[i + 1] : -1;
        double w = s2 >= 0 && k_hi > k_lo ? (t - k_lo) / (k_hi - k_lo) : 0.0;
        ami_set_chain(m, pb->bone[j], s1, s2, w, pa, ua0 + th * (ua1 - ua0));
    }
}

/* Segment [a0..a1] of pa against [b0..b1] of pb whose last bones correspond. A segment
 * between two anchors has corresponding first bones too and at least two bones on each side;
 * only the first segment of a path (before its first anchor) may have one bone on a side. */
static void ami_segment(ami_matcher *m, const ami_path *pa, size_t a0, size_t a1, const ami_path *pb, size_t b0,
                        size_t b1)
{
    size_t na = a1 - a0 + 1, nb = b1 - b0 + 1;
    if (na == nb) {
        for (size_t k = 0; k < na; k++) ami_set_direct(m, pb->bone[b0 + k], pa->bone[a0 + k]);
        return;
    }
    ami_set_direct(m, pb->bone[b1], pa->bone[a1]);
    if (nb == 1) return; /* the source's extra bones drive nothing */
    if (na == 1) {
        /* target bones the source lacks before its first anchor move with the anchor's source
         * bone (a root above the pelvis moves with it) */
        for (size_t j = b0; j < b1; j++) ami_set_chain(m, pb->bone[j], pa->bone[a1], -1, 0.0, pa, pa->u0[a1]);
        return;
    }
    ami_set_direct(m, pb->bone[b0], pa->bone[a0]);
    ami_arc_fill(m, pa, a0, a1, pb, b0, b1);
}

/* ---- side branches ------------------------------------------------------------------------ */
typedef struct ami_branch {
    int32_t start;   /* first bone */
    size_t at;       /* index on the path of the bone it hangs from */
    double u;        /* arc length of that bone's mid-point */
} ami_branch;

static am_status ami_branches(const ami_skel *sk, const ami_path *p, ami_branch **out, size_t *count, am_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        int32_t b = p->bone[i];
        n += (size_t)(sk->child_start[b + 1] - sk->child_start[b]);
    }
    *out = am_alloc_array(n ? n : 1, sizeof **out);
    AMI_CHECK(err, *out, AM_E_NOMEM, "branches");
    *count = 0;
    for (size_t i = 0; i < p->n; i++) {
        int32_t b = p->bone[i];
        for (int32_t k = sk->child_start[b]; k < sk->child_start[b + 1]; k++) {
            int32_t c = sk->child[k];
            if (ami_on_path(p, c)) continue;
            (*out)[(*count)++] = (ami_branch){c, i, (p->u0[i] + p->u0[i + 1]) / 2};
        }
    }
    return AM_OK;
}

/* v in the rest frame of bone b (R_rest(b)^T v; the world itself for no bone) */
static void ami_in_frame(const ami_skel *sk, int32_t b, const double v[3], double out[3])
{
    if (b < 0) {
        memcpy(out, v, 3 * sizeof(double));
        return;
    }
    const double *R = sk->rig->rest_rot + 9 * (size_t)b;
    for (int i = 0; i < 3; i++) out[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}

static double ami_branch_cost(const ami_matcher *m, const ami_branch *x, const ami_branch *y)
{
    const ami_skel *A = m->a, *B = m->b;
    int32_t a = x->start, b = y->start;
    int sa = A->side[a], sb = B->side[b];
    /* a limb never becomes a tail, nor a left limb a right one */
    double c = sa == sb ? 0.0 : 3.0;
    c += 1.5 * fabs(x->u - y->u);
    /* Direction and attachment are compared in the world and in the frame of the bone the
     * branch hangs from, the better of the two: a bind pose that turns a whole arm turns the
     * fingers on its hand with it (world directions change, local ones do not), while two
     * designs may differ in the parents' frames. */
    double da[3], db[3], la_[3], lb_[3];
    am_vec3_sub(A->sub_centroid + 3 * (size_t)a, A->heads + 3 * (size_t)a, da);
    am_vec3_sub(B->sub_centroid + 3 * (size_t)b, B->heads + 3 * (size_t)b, db);
    ami_in_frame(A, A->spar[a], da, la_);
    ami_in_frame(B, B->spar[b], db, lb_);
    c += fmin(ami_angle(da, db), ami_angle(la_, lb_)) / AM_PI;
    /* where a branch hangs from its path bone: a limb turned in its bind pose still hangs at
     * the same place (a spider's four legs a side differ mostly by that) */
    double pa[3], pb[3];
    am_vec3_sub(A->heads + 3 * (size_t)a, A->heads + 3 * (size_t)A->spar[a], pa);
    am_vec3_sub(B->heads + 3 * (size_t)b, B->heads + 3 * (size_t)B->spar[b], pb);
    am_vec3_scale(pa, 1.0 / A->size, pa);
    am_vec3_scale(pb, 1.0 / B->size, pb);
    ami_in_frame(A, A->spar[a], pa, la_);
    ami_in_frame(B, B->spar[b], pb, lb_);
    c += 3.0 * fmin(am_vec3_dist(pa, pb), am_vec3_dist(la_, lb_));
    double la = A->reach[a] / A->size, lb = B->reach[b] / B->size;
    if (la > 0 && lb > 0) c += 0.5 * fabs(log(la / lb));
    c += 0.4 * fabs(log((double)A->sub_count[a] / (double)B->sub_count[b]));
    c -= ami_name_bonus(m, a, b, 1.0);
    return c;
}

/* ---- aligning two paths ---------------------------------------------------------------------- */
typedef struct ami_anchor {
    size_t ia, ib;
    double weight;
} ami_anchor;

static int ami_cmp_anchor(const void *x, const void *y)
{
    const ami_anchor *a = x, *b = y;
    return (a->weight < b->weight) - (a->weight > b->weight);
}

static int ami_cmp_anchor_pos(const void *x, const void *y)
{
    const ami_anchor *a = x, *b = y;
    return (a->ia > b->ia) - (a->ia < b->ia);
}

static am_status ami_align_center(ami_matcher *m, const ami_path *pa, const ami_path *pb, const ami_anchor *cand,
                                  size_t ncand)
{
    /* candidates: side-branch attachments (heaviest first), exact names, the path ends */
    size_t cap = ncand + pa->n + 1;
    ami_anchor *all = am_alloc_array(cap, sizeof *all), *acc = am_alloc_array(cap, sizeof *acc);
    if (!all || !acc) {
        am_free(all);
        am_free(acc);
        return AM_FAIL(m->err, AM_E_NOMEM, "anchors");
    }
    size_t n = 0, na = 0;
    for (size_t i = 0; i < ncand; i++) all[n++] = cand[i];
    /* Numbered chain members (Tail3, Spine2) are not anchors: a tail of eight bones onto one
     * of six spreads over it by arc length rather than losing its tip. */
    if (m->names_trusted)
        for (size_t i = 0; i < pa->n; i++)
            for (size_t j = 0; j < pb->n; j++)
                if (ami_name_rel(m, pa->bone[i], pb->bone[j]) == 3 && m->a->names[pa->bone[i]].ordinal < 0)
                    all[n++] = (ami_anchor){i, j, 0.5};
    qsort(all, n, sizeof *all, ami_cmp_anchor);
    /* the ends of the paths first: a head is a head */
    acc[na++] = (ami_anchor){pa->n - 1, pb->n - 1, 1e9};
    for (size_t i = 0; i < n; i++) {
        bool ok = true;
        for (size_t k = 0; k < na && ok; k++) {
            if (all[i].ia == acc[k].ia || all[i].ib == acc[k].ib) ok = false;
            else if ((all[i].ia < acc[k].ia) != (all[i].ib < acc[k].ib)) ok = false;
        }
        if (ok) acc[na++] = all[i];
    }
    qsort(acc, na, sizeof *acc, ami_cmp_anchor_pos);
    /* before the first anchor, then between consecutive ones */
    ami_segment(m, pa, 0, acc[0].ia, pb, 0, acc[0].ib);
    for (size_t k = 0; k + 1 < na; k++)
        ami_segment(m, pa, acc[k].ia, acc[k + 1].ia, pb, acc[k].ib, acc[k + 1].ib);
    am_free(all);
    am_free(acc);
    return AM_OK;
}

/* Sequence alignment of two limb paths. */
static am_status ami_align_dp(ami_matcher *m, const ami_path *pa, const ami_path *pb)
{
    size_t na = pa->n, nb = pb->n, W = nb + 1;
    double *D = am_alloc_array((na + 1) * W, sizeof *D);
    uint8_t *move = am_alloc_array((na + 1) * W, 1);
    int32_t *pair = am_alloc_array(nb, sizeof *pair);
    if (!D || !move || !pair) {
        am_free(D);
        am_free(move);
        am_free(pair);
        return AM_FAIL(m->err, AM_E_NOMEM, "limb alignment");
    }
    const ami_skel *A = m->a, *B = m->b;
    D[0] = 0.0;
    for (size_t i = 0; i <= na; i++)
        for (size_t j = 0; j <= nb; j++) {
            if (!i && !j) continue;
            double best = INFINITY;
            uint8_t mv = 0;
            if (i && j) {
                int32_t sa = pa->bone[i - 1], sb = pb->bone[j - 1];
                double ua = (pa->u0[i - 1] + pa->u0[i]) / 2, ub = (pb->u0[j - 1] + pb->u0[j]) / 2;
                double ra = pa->u0[i] - pa->u0[i - 1], rb = pb->u0[j] - pb->u0[j - 1];
                double da[3], db[3];
                am_vec3_sub(A->tails + 3 * (size_t)sa, A->heads + 3 * (size_t)sa, da);
                am_vec3_sub(B->tails + 3 * (size_t)sb, B->heads + 3 * (size_t)sb, db);
                double c = 2.0 * fabs(ua - ub) + 1.0 * fabs(ra - rb) + 0.3 * ami_angle(da, db) / AM_PI -
                           ami_name_bonus(m, sa, sb, 0.5);
                best = D[(i - 1) * W + j - 1] + c;
                mv = 1;
            }
            if (i) {
                double c = D[(i - 1) * W + j] + 0.15 + (pa->u0[i] - pa->u0[i - 1]);
                if (c < best) best = c, mv = 2;
            }
            if (j) {
                double c = D[i * W + j - 1] + 0.15 + (pb->u0[j] - pb->u0[j - 1]);
                if (c < best) best = c, mv = 3;
            }
            D[i * W + j] = best;
            move[i * W + j] = mv;
        }
    for (size_t j = 0; j < nb; j++) pair[j] = -1;
    for (size_t i = na, j = nb; i || j;) {
        uint8_t mv = move[i * W + j];
        if (mv == 1) {
            pair[j - 1] = (int32_t)(i - 1);
            i--, j--;
        } else if (mv == 2) {
            i--;
        } else {
            j--;
        }
    }
    /* matches, then fills between two matches by arc length */
    int32_t last = -1;
    for (size_t j = 0; j < nb; j++) {
        if (pair[j] < 0) continue;
        ami_set_direct(m, pb->bone[j], pa->bone[pair[j]]);
        if (last >= 0 && j > (size_t)last + 1)
            ami_arc_fill(m, pa, (size_t)pair[last], (size_t)pair[j], pb, (size_t)last, j);
        last = (int32_t)j;
    }
    am_free(D);
    am_free(move);
    am_free(pair);
    return AM_OK;
}

static am_status ami_add_chain(ami_matcher *m, const ami_path *pa, const ami_path *pb)
{
    am_retarget_map *map = m->map;
    if (map->chain_count == m->chain_cap) {
        size_t cap = m->chain_cap ? 2 * m->chain_cap : 8;
        am_retarget_chain *c = am_realloc_array(map->chains, cap, sizeof *c);
        AMI_CHECK(m->err, c, AM_E_NOMEM, "chains");
        map->chains = c;
        m->chain_cap = cap;
    }
    map->chains[map->chain_count++] = (am_retarget_chain){.source_first = pa->bone[0],
                                                          .source_last = pa->bone[pa->n - 1],
                                                          .target_first = pb->bone[0],
                                                          .target_last = pb->bone[pb->n - 1],
                                                          .side = m->b->side[pb->bone[0]],
                                                          .foot = -1};
    return AM_OK;
}

static am_status ami_match_paths(ami_matcher *m, const ami_path *pa, const ami_path *pb, int depth)
{
    ami_branch *xa = NULL, *xb = NULL;
    size_t na = 0, nb = 0;
    double *cost = NULL;
    int32_t *assign = NULL;
    ami_anchor *anchors = NULL;
    am_status st = ami_branches(m->a, pa, &xa, &na, m->err);
    if (st == AM_OK) st = ami_branches(m->b, pb, &xb, &nb, m->err);
    if (st != AM_OK) goto done;
    cost = am_alloc_array(na * nb + 1, sizeof *cost);
    assign = am_alloc_array(na + 1, sizeof *assign);
    anchors = am_alloc_array(na + 1, sizeof *anchors);
    if (!cost || !assign || !anchors) {
        st = AM_FAIL(m->err, AM_E_NOMEM, "branches");
        goto done;
    }
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) cost[i * nb + j] = ami_branch_cost(m, &xa[i], &xb[j]);
    if ((st = ami_assign(cost, na, nb, 1.75, assign, m->err)) != AM_OK) goto done;
    size_t nanch = 0;
    for (size_t i = 0; i < na; i++)
        if (assign[i] >= 0)
            anchors[nanch++] = (ami_anchor){xa[i].at, xb[assign[i]].at,
                                            (double)(m->a->sub_count[xa[i].start] + m->b->sub_count[xb[assign[i]].start])};
    if (pa->center && pb->center) st = ami_align_center(m, pa, pb, anchors, nanch);
    else st = ami_align_dp(m, pa, pb);
    if (st == AM_OK) st = ami_add_chain(m, pa, pb);
    /* Skeletons are trees of modest depth; a limit keeps a hostile rig from exhausting the
     * stack (what is below it stays unmapped). */
    for (size_t i = 0; st == AM_OK && i < na && depth < 64; i++) {
        if (assign[i] < 0) continue;
        ami_path qa, qb;
        if ((st = ami_path_build(m->a, xa[i].start, false, &qa, m->err)) != AM_OK) break;
        if ((st = ami_path_build(m->b, xb[assign[i]].start, false, &qb, m->err)) != AM_OK) {
            ami_path_free(&qa);
            break;
        }
        st = ami_match_paths(m, &qa, &qb, depth + 1);
        ami_path_free(&qa);
        ami_path_free(&qb);
    }
done:
    am_free(xa);
    am_free(xb);
    am_free(cost);
    am_free(assign);
    am_free(anchors);
    return st;
}

/* ---- rules and the map's words -------------------------------------------------------------- */
static const char *ami_side_word(int side) { return side > 0 ? "left" : side < 0 ? "right" : "middle"; }

static am_status ami_label(ami_matcher *m)
{
    am_retarget_map *map = m->map;
    const am_rig *A = m->a->rig, *B = m->b->rig;
    for (size_t g = 0; g < map->target_count; g++) {
        char buf[256];
        int32_t s = map->source[g];
        if (m->b->excluded[g]) {
            map->rule[g] = AM_RETARGET_RULE_EXCLUDED;
            snprintf(buf, sizeof buf, "excluded: %s", B->is_helper && B->is_helper[g] ? "a helper bone"
                                                       : m->b->names[g].end ? "an end site" : "named like a helper");
        } else if (s < 0) {
            map->rule[g] = AM_RETARGET_RULE_NONE;
            snprintf(buf, sizeof buf, "no driver: holds its rest pose");
        } else if (map->rule[g] == AM_RETARGET_RULE_CHAIN) {
            if (map->source_b[g] >= 0)
                snprintf(buf, sizeof buf, "chain: %.3g %s + %.3g %s (arc length)", 1 - map->weight[g], A->bone_names[s],
                         map->weight[g], A->bone_names[map->source_b[g]]);
            else
                snprintf(buf, sizeof buf, "chain: follows %s", A->bone_names[s]);
        } else if (map->rule[g] == AM_RETARGET_RULE_USER) {
            snprintf(buf, sizeof buf, "map file");
        } else {
            int rel = ami_name_rel(m, s, (int32_t)g);
            if (rel == 3) {
                map->rule[g] = AM_RETARGET_RULE_NAME;
                snprintf(buf, sizeof buf, "name");
            } else if (rel == 2) {
                map->rule[g] = AM_RETARGET_RULE_NORMALISED;
                snprintf(buf, sizeof buf, "normalised name '%s', %s", m->b->names[g].norm, ami_side_word(m->b->side[g]));
            } else if (rel == 1) {
                map->rule[g] = AM_RETARGET_RULE_ROLE;
                snprintf(buf, sizeof buf, "role %s, %s", ami_role_name(m->b->names[g].role), ami_side_word(m->b->side[g]));
            } else {
                map->rule[g] = AM_RETARGET_RULE_TOPOLOGY;
                int depth = 0;
                for (int32_t a = m->b->spar[g]; a >= 0; a = m->b->spar[a]) depth++;
                snprintf(buf, sizeof buf, "topology: %s, depth %d", ami_side_word(m->b->side[g]), depth);
            }
        }
        am_free(map->why[g]);
        map->why[g] = am_strdup(buf);
        AMI_CHECK(m->err, map->why[g], AM_E_NOMEM, "map rules");
    }
    return AM_OK;
}

/* Chains whose target end stands on the ground are legs; other sided ones arms. Limbs hang
 * from the main path (the first chain is the two roots' paths). */
static void ami_classify_chains(ami_matcher *m)
{
    am_retarget_map *map = m->map;
    const ami_skel *B = m->b;
    const am_retarget_chain *main_path = map->chain_count ? &map->chains[0] : NULL;
    for (size_t c = 0; c < map->chain_count; c++) {
        am_retarget_chain *ch = &map->chains[c];
        ch->foot = -1;
        if (ch->side == 0) continue;
        int32_t at = B->spar[ch->target_first];
        bool on_main = false;
        for (int32_t g = main_path ? main_path->target_last : -1; g >= 0 && !on_main; g = B->spar[g]) {
            on_main = g == at;
            if (g == main_path->target_first) break;
        }
        ch->is_limb = c > 0 && on_main && B->reach[ch->target_first] >= 0.15 * B->size;
        /* the last bone of the path with a driver of its own */
        for (int32_t g = ch->target_last; g >= 0; g = B->spar[g]) {
            if (map->source[g] >= 0 && map->source_b[g] < 0 && map->rule[g] != AM_RETARGET_RULE_CHAIN) {
                ch->foot = g;
                break;
            }
            if (g == ch->target_first) break;
        }
        if (ch->foot < 0) continue;
        /* the foot's lower end: a glTF leaf's guessed tail may point up */
        double z = fmin(B->tails[3 * (size_t)ch->foot + 2], B->heads[3 * (size_t)ch->foot + 2]);
        if (z < B->min_z + 0.1 * B->height) ch->is_leg = 1;
        else ch->is_arm = 1;
    }
}

/* ---- overrides ---------------------------------------------------------------------------------- */
static void ami_append_name(char *buf, size_t size, size_t *used, const char *what, const char *name)
{
    if (*used + 8 >= size) return;
    int n = snprintf(buf + *used, size - *used, "%s%s '%s'", *used ? ", " : "", what, name);
    if (n > 0) *used = (size_t)n < size - *used ? *used + (size_t)n : size - 1;
}

static am_status ami_apply_overrides(ami_matcher *m, const am_bone_map *ov)
{
    am_retarget_map *map = m->map;
    const am_rig *A = m->a->rig, *B = m->b->rig;
    char bad[200] = "";
    size_t used = 0, nbad = 0;
    for (size_t i = 0; i < ov->count; i++) {
        int s = am_rig_find_bone(A, ov->source[i]);
        if (s < 0) ami_append_name(bad, sizeof bad, &used, "source", ov->source[i]), nbad++;
        else if (m->a->excluded[s]) ami_append_name(bad, sizeof bad, &used, "excluded source", ov->source[i]), nbad++;
        if (ov->target[i]) {
            int g = am_rig_find_bone(B, ov->target[i]);
            if (g < 0) ami_append_name(bad, sizeof bad, &used, "target", ov->target[i]), nbad++;
            else if (m->b->excluded[g]) ami_append_name(bad, sizeof bad, &used, "excluded target", ov->target[i]), nbad++;
        }
    }
    if (nbad)
        return AM_FAIL(m->err, AM_E_NAME, "the map names %zu bone%s that %s not in the rigs or never mapped: %s", nbad,
                       nbad > 1 ? "s" : "", nbad > 1 ? "are" : "is", bad);
    for (size_t i = 0; i < ov->count; i++) {
        int32_t s = (int32_t)am_rig_find_bone(A, ov->source[i]);
        int32_t g = ov->target[i] ? (int32_t)am_rig_find_bone(B, ov->target[i]) : -1;
        for (size_t t = 0; t < map->target_count; t++)
            if ((int32_t)t != g && map->source[t] == s && map->rule[t] != AM_RETARGET_RULE_CHAIN) {
                map->source[t] = -1;
                map->head_bone[t] = -1;
                map->rule[t] = AM_RETARGET_RULE_NONE;
            }
        if (g >= 0) {
            ami_set_direct(m, g, s);
            map->rule[g] = AM_RETARGET_RULE_USER;
        }
    }
    return AM_OK;
}

static am_status ami_map_alloc(size_t Bs, size_t Bt, am_retarget_map **out, am_error *err)
{
    am_retarget_map *map = am_alloc(sizeof *map);
    AMI_CHECK(err, map, AM_E_NOMEM, "map");
    map->source_count = Bs;
    map->target_count = Bt;
    map->source = am_alloc_array(Bt, sizeof *map->source);
    map->source_b = am_alloc_array(Bt, sizeof *map->source_b);
    map->weight = am_alloc_array(Bt, sizeof *map->weight);
    map->head_bone = am_alloc_array(Bt, sizeof *map->head_bone);
    map->head_point = am_alloc_array(Bt * 3, sizeof *map->head_point);
    map->rule = am_alloc_array(Bt, sizeof *map->rule);
    map->why = am_alloc_array(Bt, sizeof *map->why);
    map->source_excluded = am_alloc_array(Bs, 1);
    map->target_excluded = am_alloc_array(Bt, 1);
    map->source_vparent = am_alloc_array(Bs, sizeof *map->source_vparent);
    map->target_vparent = am_alloc_array(Bt, sizeof *map->target_vparent);
    if (!map->source || !map->source_b || !map->weight || !map->head_bone || !map->head_point || !map->rule ||
        !map->why || !map->source_excluded || !map->target_excluded || !map->source_vparent || !map->target_vparent) {
        am_retarget_map_free(map);
        return AM_FAIL(err, AM_E_NOMEM, "map of %zu bones", Bt);
    }
    for (size_t g = 0; g < Bt; g++) {
        map->source[g] = map->source_b[g] = map->head_bone[g] = -1;
        map->rule[g] = AM_RETARGET_RULE_NONE;
    }
    *out = map;
    return AM_OK;
}

/* A short list of a rig's bone names for messages. */
static void ami_bone_list(const ami_skel *sk, char *buf, size_t size)
{
    size_t used = 0, shown = 0, n = 0;
    buf[0] = '\0';
    for (size_t b = 0; b < sk->B; b++) {
        if (sk->excluded[b]) continue;
        n++;
        if (used + 40 >= size) continue;
        int w = snprintf(buf + used, size - used, "%s%s", shown++ ? " " : "", sk->rig->bone_names[b]);
        if (w > 0) used += (size_t)w < size - used ? (size_t)w : size - used - 1;
    }
    if (shown < n && used + 6 < size) snprintf(buf + used, size - used, " ...");
}

am_status am_retarget_map_build(const am_rig *source, const am_rig *target, const am_retarget_map_opts *opts,
                                am_retarget_map **out, am_error *err)
{
    *out = NULL;
    am_retarget_map_opts o = opts ? *opts : (am_retarget_map_opts){0};
    am_scope scope;
    am_scope_enter(&scope, &o.ctx);
    ami_skel A = {0}, B = {0};
    am_retarget_map *map = NULL;
    ami_path pa = {0}, pb = {0};
    ami_matcher m = {.err = err};
    am_status st = ami_skel_build(source, &A, err);
    if (st == AM_OK) st = ami_skel_build(target, &B, err);
    if (st == AM_OK) st = ami_map_alloc(source->bone_count, target->bone_count, &map, err);
    if (st != AM_OK) goto done;
    m.a = &A;
    m.b = &B;
    m.map = map;
    m.a_used = am_alloc_array(A.B, 1);
    if (!m.a_used) {
        st = AM_FAIL(err, AM_E_NOMEM, "map");
        goto done;
    }
    memcpy(map->source_excluded, A.excluded, A.B);
    memcpy(map->target_excluded, B.excluded, B.B);
    memcpy(map->source_vparent, A.ppar, A.B * sizeof(int32_t));
    memcpy(map->target_vparent, B.ppar, B.B * sizeof(int32_t));
    size_t shared = 0, considered = 0;
    for (size_t g = 0; g < B.B; g++) {
        if (B.excluded[g]) continue;
        considered++;
        int s = am_rig_find_bone(source, target->bone_names[g]);
        if (s >= 0 && !A.excluded[s]) shared++;
    }
    m.names_trusted = considered && shared * 2 >= considered;
    A.thumbs_named = B.thumbs_named = ami_names_thumb(&A) && ami_names_thumb(&B);
    if ((st = ami_path_build(&A, A.root, true, &pa, err)) != AM_OK ||
        (st = ami_path_build(&B, B.root, true, &pb, err)) != AM_OK)
        goto done;
    if ((st = ami_match_paths(&m, &pa, &pb, 0)) != AM_OK) goto done;
    if (o.overrides && (st = ami_apply_overrides(&m, o.overrides)) != AM_OK) goto done;
    for (size_t g = 0; g < B.B; g++)
        if (B.excluded[g]) map->source[g] = map->source_b[g] = map->head_bone[g] = -1;
    if ((st = ami_label(&m)) != AM_OK) goto done;
    ami_classify_chains(&m);
    /* No bone in common (by name or role) and a structure that matched little directly (a
     * lone prop onto a character): a map of chain fills following one or two bones would be
     * a motion, not a retarget. */
    size_t direct = 0, named = 0;
    for (size_t g = 0; g < B.B; g++) {
        if (B.excluded[g] || map->source[g] < 0 || map->rule[g] == AM_RETARGET_RULE_CHAIN) continue;
        direct++;
        named += map->rule[g] == AM_RETARGET_RULE_NAME || map->rule[g] == AM_RETARGET_RULE_NORMALISED ||
                 map->rule[g] == AM_RETARGET_RULE_ROLE || map->rule[g] == AM_RETARGET_RULE_USER;
    }
    if (!named && considered > 1 && direct * 3 < considered) {
        char la[120], lb[120];
        ami_bone_list(&A, la, sizeof la);
        ami_bone_list(&B, lb, sizeof lb);
        st = AM_FAIL(err, AM_E_EMPTY,
                     "the target shares no bone name or role with the source and its structure matches only %zu of "
                     "its %zu bones (source bones: %s; target bones: %s); give a map (--map map.json)",
                     direct, considered, la, lb);
        goto done;
    }
done:
    ami_path_free(&pa);
    ami_path_free(&pb);
    am_free(m.a_used);
    ami_skel_free(&A);
    ami_skel_free(&B);
    if (st != AM_OK) {
        am_retarget_map_free(map);
        map = NULL;
    }
    if (map) am_scope_leave(&scope, &map->warnings);
    else am_scope_leave(&scope, NULL);
    *out = map;
    return st;
}

am_status am_retarget_map_names(const am_retarget_map *map, const am_rig *source, const am_rig *target,
                                am_bone_map **out, am_error *err)
{
    *out = NULL;
    am_bone_map *bm = am_alloc(sizeof *bm);
    AMI_CHECK(err, bm, AM_E_NOMEM, "map names");
    size_t Bs = source->bone_count, Bt = target->bone_count;
    bm->source = am_alloc_array(Bs, sizeof *bm->source);
    bm->target = am_alloc_array(Bs, sizeof *bm->target);
    bm->rule_bone = am_alloc_array(Bt, sizeof *bm->rule_bone);
    bm->rule_text = am_alloc_array(Bt, sizeof *bm->rule_text);
    am_status st = AM_OK;
    if (!bm->source || !bm->target || !bm->rule_bone || !bm->rule_text) goto nomem;
    /* source bones in rig order, each with the target it drives directly */
    for (size_t s = 0; s < Bs; s++) {
        if (map->source_excluded[s]) continue;
        const char *t = NULL;
        for (size_t g = 0; g < Bt && !t; g++)
            if (map->source[g] == (int32_t)s && map->rule[g] != AM_RETARGET_RULE_CHAIN) t = target->bone_names[g];
        bm->source[bm->count] = am_strdup(source->bone_names[s]);
        bm->target[bm->count] = t ? am_strdup(t) : NULL;
        bm->count++;
        if (!bm->source[bm->count - 1] || (t && !bm->target[bm->count - 1])) goto nomem;
    }
    for (size_t g = 0; g < Bt; g++) {
        bm->rule_bone[bm->rule_count] = am_strdup(target->bone_names[g]);
        bm->rule_text[bm->rule_count] = am_strdup(map->why[g] ? map->why[g] : am_retarget_rule_name(map->rule[g]));
        bm->rule_count++;
        if (!bm->rule_bone[g] || !bm->rule_text[g]) goto nomem;
    }
    *out = bm;
    return AM_OK;
nomem:
    am_bone_map_free(bm);
    st = AM_FAIL(err, AM_E_NOMEM, "map names");
    return st;
}
