/* The transfer (docs/retarget.md, "Bind poses, exactly"). Every bone's world delta
 * G_b = W_b R_rest(b)^-1 (SPEC 2.3 world rest frames) is what crosses from one rig to the
 * other, so bind poses, bone roll and axis conventions cancel:
 *
 *     G_target(g, t) = G_source(s, t) * Gref_source(s)^-1 * Tref(g)
 *
 * with Gref the source's reference pose (its rest, or --source-pose) and Tref the target's:
 * in ALIGN mode the rotation that makes the target's rest point each mapped bone where the
 * source's reference does (a rotation fitted to the directions from the bone's head to its
 * mapped children, a swing when there is one direction), in DELTA mode the identity, or a
 * given --target-pose. Local rotations come back as L_g = r_g^-1 G_parent^-1 G_g r_g. The
 * root's head moves by the source's displacement times the leg ratio, from the target's own
 * rest height. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "anymove/math.h"
#include "core/internal.h"
#include "retarget_internal.h"

void am_retarget_report_free(am_retarget_report *report)
{
    if (!report) return;
    am_free(report->contact_source);
    am_free(report->contact_target);
    am_free(report->floor);
    am_free(report->below_max);
    am_free(report->plants);
    memset(report, 0, sizeof *report);
}

void ami_rest_quats(const am_rig *rig, double *r)
{
    for (size_t b = 0; b < rig->bone_count; b++) am_quat_from_mat3(rig->rest_rot + 9 * b, r + 4 * b);
}

static void ami_qconj(const double q[4], double out[4]) { am_quat_conj(q, out); }

/* out = a * b * a^-1 (conjugation: a local rotation seen in world axes) */
static void ami_qconjugate(const double a[4], const double b[4], double out[4])
{
    double t[4], ai[4];
    am_quat_mul(a, b, t);
    ami_qconj(a, ai);
    am_quat_mul(t, ai, out);
}

/* Local rotation of bone b of a motion at frame t as a unit quaternion. */
static void ami_local_quat(const am_motion *mo, size_t t, size_t b, double q[4])
{
    size_t B = mo->bone_count;
    if (mo->quat) {
        /* loaders keep unit quaternions bit-exact: normalise only what is not unit */
        const double *p = mo->quat + (t * B + b) * 4;
        double n2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3];
        if (fabs(n2 - 1.0) > 1e-14) am_quat_normalize(p, q);
        else memcpy(q, p, 4 * sizeof(double));
    } else {
        am_euler_xyz_to_quat(mo->euler + (t * B + b) * 3, q);
    }
}

/* World deltas and heads of a motion's frame on its rig (SPEC 2.3 in quaternions; loc moves a
 * head along its rest frame rotated by the parent's delta). g [B][4], h [B][3]; heads only of
 * the bones with need[b] (NULL: all), which must include every such bone's parent. */
static void ami_motion_deltas(const am_rig *rig, const double *rq, const am_motion *mo, size_t t,
                              const uint8_t *need, double *g, double *h)
{
    size_t B = rig->bone_count;
    am_quat_normalize(mo->root_quat + 4 * t, g);
    memcpy(h, mo->trans + 3 * t, 3 * sizeof(double));
    for (size_t b = 1; b < B; b++) {
        size_t p = (size_t)rig->parent[b];
        double L[4], C[4], d[3], v[3];
        ami_local_quat(mo, t, b, L);
        ami_qconjugate(rq + 4 * b, L, C);
        am_quat_mul(g + 4 * p, C, g + 4 * b);
        if (need && !need[b]) continue;
        for (int k = 0; k < 3; k++) d[k] = rig->rest_mat[16 * b + 4 * (size_t)k + 3] - rig->rest_mat[16 * p + 4 * (size_t)k + 3];
        if (mo->loc) {
            const double *lb = mo->loc + (t * B + b) * 3;
            double lw[3];
            am_mat3_mul_vec3(rig->rest_rot + 9 * b, lb, lw);
            am_vec3_add(d, lw, d);
        }
        am_quat_rotate(g + 4 * p, d, v);
        am_vec3_add(h + 3 * p, v, h + 3 * b);
    }
}

/* ---- frames that are not orthonormal ------------------------------------------------------ */

/* SPEC 2.3's world map of a bone, W_b = W_parent R_rest(b) R(e_b) R_rest(b)^-1 (R_rest's true
 * inverse), is the delta above only when every rest frame on the way is orthonormal. */
static void ami_rest_inv3(const am_rig *rig, size_t b, double Ai[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Ai[3 * i + j] = rig->rest_inv[16 * b + 4 * (size_t)i + (size_t)j];
}

/* flag[b]: bone b's rest frame, or one of an ancestor's below the root, is not orthonormal (to
 * 1e-13): its world map is not its delta. The root's world map is its root_quat whatever its
 * frame. Returns whether any bone is flagged. */
static bool ami_inexact_flags(const am_rig *rig, uint8_t *flag)
{
    bool any = false;
    flag[0] = 0;
    for (size_t b = 1; b < rig->bone_count; b++) {
        const double *A = rig->rest_rot + 9 * b;
        double worst = 0.0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double d = A[i] * A[j] + A[3 + i] * A[3 + j] + A[6 + i] * A[6 + j] - (i == j);
                worst = fmax(worst, fabs(d));
            }
        flag[b] = worst > 1e-13 || flag[rig->parent[b]];
        any |= flag[b] != 0;
    }
    return any;
}

/* W = Wp R_rest(b) R(q) R_rest(b)^-1 */
static void ami_exact_map(const am_rig *rig, size_t b, const double Wp[9], const double q[4], double W[9])
{
    double R[9], Ai[9], t[9], u[9];
    am_quat_unit_to_mat3(q, R);
    ami_rest_inv3(rig, b, Ai);
    am_mat3_mul(rig->rest_rot + 9 * b, R, t);
    am_mat3_mul(t, Ai, u);
    am_mat3_mul(Wp, u, W);
}

/* The source's exact FK at frame t for flagged bones: es (W times the delta's inverse) and the
 * heads of the bones in need (SPEC 2.3: h_b = h_p + W_p (d_b + R_rest(b) loc_b)). */
static void ami_source_exact(ami_run *r, size_t t, const uint8_t *need, double *W)
{
    const am_rig *S = r->S;
    size_t B = S->bone_count;
    const double *g = r->gs + t * B * 4;
    double *h = r->hs + t * B * 3, *e = r->es + t * B * 9;
    am_quat_unit_to_mat3(g, W);
    am_mat3_identity(e);
    for (size_t b = 1; b < B; b++) {
        size_t p = (size_t)S->parent[b];
        if (!r->sflag[b]) {
            am_quat_unit_to_mat3(g + 4 * b, W + 9 * b);
            am_mat3_identity(e + 9 * b);
            continue;
        }
        double L[4], G[9], Gt[9];
        ami_local_quat(r->src, t, b, L);
        ami_exact_map(S, b, W + 9 * p, L, W + 9 * b);
        am_quat_unit_to_mat3(g + 4 * b, G);
        am_mat3_transpose(G, Gt);
        am_mat3_mul(W + 9 * b, Gt, e + 9 * b);
        if (need && !need[b]) continue;
        double d[3], v[3];
        for (int k = 0; k < 3; k++) d[k] = S->rest_mat[16 * b + 4 * (size_t)k + 3] - S->rest_mat[16 * p + 4 * (size_t)k + 3];
        if (r->src->loc) {
            double lw[3];
            am_mat3_mul_vec3(S->rest_rot + 9 * b, r->src->loc + (t * B + b) * 3, lw);
            am_vec3_add(d, lw, d);
        }
        am_mat3_mul_vec3(W + 9 * p, d, v);
        am_vec3_add(h + 3 * p, v, h + 3 * b);
    }
}

void ami_target_heads(ami_run *r, size_t t)
{
    const ami_skel *sk = &r->st;
    size_t B = sk->B;
    const double *g = r->gt + t * B * 4;
    double *h = r->ht + t * B * 3;
    for (size_t i = 1; i < B; i++) {
        size_t b = (size_t)sk->order[i], p = (size_t)sk->ppar[b];
        double d[3], v[3];
        am_vec3_sub(sk->heads + 3 * b, sk->heads + 3 * p, d);
        am_quat_rotate(g + 4 * p, d, v);
        am_vec3_add(h + 3 * p, v, h + 3 * b);
        if (r->disp) am_vec3_add(h + 3 * b, r->disp + (t * B + b) * 3, h + 3 * b);
    }
}

/* ---- the target's reference pose --------------------------------------------------------- */

/* Where a target bone's head lands on the source in the source's reference pose. */
static void ami_source_point(const ami_run *r, const double *gref, const double *href, int32_t sb,
                             const double local[3], double out[3])
{
    /* the point in the source bone's rest frame, carried by that bone's reference pose */
    const am_rig *S = r->S;
    double rest[3], d[3];
    am_mat4_mul_point(S->rest_mat + 16 * (size_t)sb, local, rest);
    am_vec3_sub(rest, r->ss.heads + 3 * (size_t)sb, d);
    am_quat_rotate(gref + 4 * (size_t)sb, d, out);
    am_vec3_add(out, href + 3 * (size_t)sb, out);
}

/* The rotation A taking p[main] (turned by the start rotation A0) exactly onto q[main], then
 * turned about q[main] by the angle that best carries the other p's onto their q's (least
 * squares in the plane across q[main]; no turn when every other pair lies along it). */
static void ami_swing_twist_fit(const double A0[4], const double *p, const double *q, size_t n, size_t main,
                                double A[4])
{
    double u[3], sw[4], A1[4], axis[3];
    am_quat_rotate(A0, p + 3 * main, u);
    am_quat_from_two_vectors(u, q + 3 * main, sw);
    am_quat_mul(sw, A0, A1);
    am_vec3_scale(q + 3 * main, 1.0 / am_vec3_norm(q + 3 * main), axis);
    double sn = 0.0, cs = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (k == main) continue;
        /* across the axis p[k] is p[k] - p[main] (and q alike): the difference keeps the few
         * digits of a direction a hair off the axis (the roll of a leg seen only through a foot
         * 1e-7 off its tail) */
        double dp[3], dq[3], v[3], a[3], b[3], c[3];
        am_vec3_sub(p + 3 * k, p + 3 * main, dp);
        am_vec3_sub(q + 3 * k, q + 3 * main, dq);
        am_quat_rotate(A1, dp, v);
        am_vec3_madd(v, -am_vec3_dot(v, axis), axis, a);
        am_vec3_madd(dq, -am_vec3_dot(dq, axis), axis, b);
        am_vec3_cross(a, b, c);
        sn += am_vec3_dot(c, axis);
        cs += am_vec3_dot(a, b);
    }
    double tw[4];
    am_quat_from_axis_angle(axis, sn != 0.0 || cs != 0.0 ? atan2(sn, cs) : 0.0, tw);
    am_quat_mul(tw, A1, A);
}

/* The start of a one-direction bone's alignment in a chain of the same design: the parent's
 * alignment A_p carried along each rig's own turn from the parent's segment (its head to this
 * bone's head, u) to this bone's direction (d), S_s A_p S_t^-1 with S = the smallest swing
 * u -> d in that rig. The smallest swing from A_p alone takes its twist from the pair of rests
 * at hand, and swings between three rests do not compose (A -> B -> C turned the Fox's
 * one-direction bones 0.18 rad off A -> C); this one is F_s F_t^-1 for a frame F that each rig
 * carries down its own chain (F_g = S F_p), so it telescopes: A -> B then B -> C is A -> C, and
 * B -> A inverts A -> B. It maps d_t onto d_s exactly when the parent's alignment carries u (it
 * does in the same design: the parent's fit is rigid); the caller's swing corrects the rest.
 * Unchanged (A_p) when the parent has no alignment of its own, at the root, or when a segment is
 * too short or turns back within 25 degrees of its reverse (the swing is ill-defined there). */
static void ami_transport(const ami_run *r, const double *gref, const double *href, size_t g, const double dt[3],
                          const double ds[3], double start[4])
{
    const ami_skel *st = &r->st;
    const am_retarget_map *map = r->map;
    int32_t p = st->ppar[g];
    if (p < 0 || map->source[p] < 0 || st->excluded[p] || map->head_bone[p] < 0 || map->head_bone[g] < 0) return;
    double ut[3], us[3], hp[3], hg[3];
    am_vec3_sub(st->heads + 3 * g, st->heads + 3 * (size_t)p, ut);
    ami_source_point(r, gref, href, map->head_bone[p], map->head_point + 3 * (size_t)p, hp);
    ami_source_point(r, gref, href, map->head_bone[g], map->head_point + 3 * g, hg);
    am_vec3_sub(hg, hp, us);
    const double tiny = 1e-9 * (st->size > 0 ? st->size : 1.0), back = -cos(AM_RAD(25.0));
    double nut = am_vec3_norm(ut), nus = am_vec3_norm(us), ndt = am_vec3_norm(dt), nds = am_vec3_norm(ds);
    if (nut < tiny || nus < tiny || ndt < tiny || nds < tiny) return;
    if (am_vec3_dot(ut, dt) < back * nut * ndt || am_vec3_dot(us, ds) < back * nus * nds) return;
    double swt[4], sws[4], ic[4], tmp[4];
    am_quat_from_two_vectors(ut, dt, swt);
    am_quat_from_two_vectors(us, ds, sws);
    am_quat_conj(swt, ic);
    am_quat_mul(sws, start, tmp);
    am_quat_mul(tmp, ic, start);
    am_quat_normalize(start, start);
}

/* ALIGN: Tref(g) = A_g, parents first. */
static am_status ami_align(ami_run *r, const double *gref, const double *href, am_error *err)
{
    const ami_skel *st = &r->st;
    const am_retarget_map *map = r->map;
    size_t B = st->B;
    double *pts = am_alloc_array(2 * (B + 1) * 3 * 2, sizeof *pts);
    uint8_t *limb = am_alloc_array(B, 1);
    if (!pts || !limb) {
        am_free(pts);
        am_free(limb);
        return AM_FAIL(err, AM_E_NOMEM, "pose alignment");
    }
    /* Limbs are aligned bone by bone; so is any chain whose bones match the source's one to
     * one with the same proportions (within 1e-6): such chains can differ only in pose (a rig
     * re-posed for its bind, SPEC 5's closure), where other chains differ by design. */
    for (size_t c = 0; c < map->chain_count; c++) {
        const am_retarget_chain *ch = &map->chains[c];
        bool same = true;
        double ratio = 0.0;
        for (int32_t g = ch->target_last; g >= 0 && same; g = st->spar[g]) {
            int32_t sb = map->source[g];
            if (sb < 0 || map->source_b[g] >= 0 || map->rule[g] == AM_RETARGET_RULE_CHAIN) same = false;
            else {
                double q = st->rig->length[g] / r->S->length[sb];
                if (ratio == 0.0) ratio = q;
                else if (fabs(q - ratio) > 1e-6 * ratio) same = false;
            }
            if (g == ch->target_first) break;
        }
        if (!ch->is_limb && !same) continue;
        for (int32_t g = ch->target_last; g >= 0; g = st->spar[g]) {
            limb[g] = same ? 2 : 1;
            if (g == ch->target_first) break;
        }
    }
    const double tiny = 1e-9 * (st->size > 0 ? st->size : 1.0);
    double min_deg = r->opts.align_min_deg == 0.0 ? AMI_ALIGN_MIN_DEG : r->opts.align_min_deg;
    const double min_turn = min_deg > 0.0 ? AM_RAD(min_deg) : 0.0;
    for (size_t i = 0; i < B; i++) {
        size_t g = (size_t)st->order[i];
        /* a bone's alignment starts from its position parent's: a foot hanging from the body
         * but riding its leg turns with the leg */
        int32_t p = st->ppar[g];
        double Ap[4] = {1, 0, 0, 0};
        if (p >= 0) memcpy(Ap, r->tref + 4 * (size_t)p, sizeof Ap);
        double *A = r->tref + 4 * g;
        memcpy(A, Ap, sizeof Ap);
        if (st->excluded[g] || map->source[g] < 0 || !limb[g]) continue;
        /* Directions from the bone's head to its children with a driver, target rest against
         * source reference: p = target vectors, q = source vectors. */
        double sh[3];
        ami_source_point(r, gref, href, map->head_bone[g], map->head_point + 3 * g, sh);
        size_t n = 0;
        for (int32_t k = st->child_start[g]; k < st->child_start[g + 1]; k++) {
            size_t c = (size_t)st->child[k];
            if (map->source[c] < 0) continue;
            double vt[3], vs[3], ch[3];
            am_vec3_sub(st->heads + 3 * c, st->heads + 3 * g, vt);
            ami_source_point(r, gref, href, map->head_bone[c], map->head_point + 3 * c, ch);
            am_vec3_sub(ch, sh, vs);
            if (am_vec3_norm(vt) < tiny || am_vec3_norm(vs) < tiny) continue;
            memcpy(pts + 3 * n, vt, sizeof vt);
            memcpy(pts + 3 * (B + 1) * 2 + 3 * n, vs, sizeof vs);
            n++;
        }
        /* A tail off every child's head (a leg whose IK-driven foot hangs a little off its
         * end) is a second direction: with it the fit has the bone's roll too. */
        if (n && map->rule[g] != AM_RETARGET_RULE_CHAIN) {
            /* Between two designs a tail a hair off the child's head says nothing of the roll
             * (it must be 2 degrees off every child direction); in a chain of the same design
             * any offset is the same rigid shape, and fits exactly. */
            double vt[3], vs[3], tl[3], tip[3] = {0.0, r->S->length[map->source[g]], 0.0};
            am_vec3_sub(st->tails + 3 * g, st->heads + 3 * g, vt);
            bool distinct = true;
            for (size_t k = 0; k < n && distinct; k++) {
                double c = am_vec3_dot(vt, pts + 3 * k) / (am_vec3_norm(vt) * am_vec3_norm(pts + 3 * k));
                distinct = limb[g] == 2 ? am_vec3_dist(st->tails + 3 * g, st->heads + 3 * g) > tiny && c < 1.0 - 1e-24
                                        : c < cos(AM_RAD(2.0));
            }
            for (int32_t k = st->child_start[g]; k < st->child_start[g + 1] && distinct; k++)
                distinct = am_vec3_dist(st->tails + 3 * g, st->heads + 3 * (size_t)st->child[k]) >= tiny;
            if (distinct) {
                ami_source_point(r, gref, href, map->source[g], tip, tl);
                am_vec3_sub(tl, sh, vs);
                if (am_vec3_norm(vt) >= tiny && am_vec3_norm(vs) >= tiny) {
                    memcpy(pts + 3 * n, vt, sizeof vt);
                    memcpy(pts + 3 * (B + 1) * 2 + 3 * n, vs, sizeof vs);
                    n++;
                }
            }
        }
        if (!n && st->child_start[g] == st->child_start[g + 1] && map->rule[g] != AM_RETARGET_RULE_CHAIN) {
            /* A leaf points where its tail does, when the two tails roughly agree: a guessed
             * tail (a glTF leaf without an end node, pointing along its node's Y) would turn
             * the hand or the paw around. */
            double vt[3], vs[3], tl[3], tip[3] = {0.0, r->S->length[map->source[g]], 0.0};
            am_vec3_sub(st->tails + 3 * g, st->heads + 3 * g, vt);
            ami_source_point(r, gref, href, map->source[g], tip, tl);
            am_vec3_sub(tl, sh, vs);
            double avt[3];
            am_quat_rotate(Ap, vt, avt);
            double c = am_vec3_dot(avt, vs), nn = am_vec3_norm(avt) * am_vec3_norm(vs);
            /* (a chain of the same design has real tails: its leaf aligns whatever the turn) */
            if (nn > 0 && (limb[g] == 2 || c > 0.5 * nn)) {
                memcpy(pts, vt, sizeof vt);
                memcpy(pts + 3 * (B + 1) * 2, vs, sizeof vs);
                n = 1;
            }
        }
        if (!n) continue;
        /* One direction, or all along one line: the smallest swing from the parent's
         * alignment (the twist follows the parent). Else the rotation fitting them all. */
        size_t longest = 0;
        bool line_t = true, line_s = true;
        const double *qs = pts + 3 * (B + 1) * 2;
        double flat = limb[g] == 2 ? 1e-14 : 1e-6;
        for (size_t k = 0; k < n; k++) {
            if (am_vec3_norm(pts + 3 * k) * am_vec3_norm(qs + 3 * k) >
                am_vec3_norm(pts + 3 * longest) * am_vec3_norm(qs + 3 * longest))
                longest = k;
            double c[3];
            am_vec3_cross(pts + 3 * k, pts, c);
            if (am_vec3_norm(c) > flat * am_vec3_norm(pts + 3 * k) * am_vec3_norm(pts)) line_t = false;
            am_vec3_cross(qs + 3 * k, qs, c);
            if (am_vec3_norm(c) > flat * am_vec3_norm(qs + 3 * k) * am_vec3_norm(qs)) line_s = false;
        }
        bool line = line_t || line_s;
        if (limb[g] == 2 && n > 1 && !line) {
            /* A chain of the same design is the same rigid shape turned: the longest direction
             * exactly, then the twist about it that best fits the others. Kabsch would read
             * two directions a hair apart (an IK-driven foot whose head sits 1e-7 of the leg
             * off its tail) as one line and put the bone on their mean, 1e-7 rad off its
             * tail. */
            ami_swing_twist_fit(Ap, pts, pts + 3 * (B + 1) * 2, n, longest, A);
        } else if (n == 1 || line) {
            double start[4], av[3], sw[4];
            memcpy(start, Ap, sizeof start);
            if (limb[g] == 2) ami_transport(r, gref, href, g, pts + 3 * longest, qs + 3 * longest, start);
            am_quat_rotate(start, pts + 3 * longest, av);
            am_quat_from_two_vectors(av, qs + 3 * longest, sw);
            am_quat_mul(sw, start, A);
        } else {
            /* Kabsch on the vectors and their negatives: both sets are centred on the head, so
             * the fit is a rotation about it (no translation to absorb) */
            double *p3 = pts, *q3 = pts + 3 * (B + 1) * 2;
            for (size_t k = 0; k < n; k++)
                for (int d = 0; d < 3; d++) {
                    p3[3 * (n + k) + (size_t)d] = -p3[3 * k + (size_t)d];
                    q3[3 * (n + k) + (size_t)d] = -q3[3 * k + (size_t)d];
                }
            double R[9], tr[3];
            am_kabsch(p3, q3, NULL, 2 * n, R, tr);
            am_quat_from_mat3(R, A);
        }
        am_quat_normalize(A, A);
        if (limb[g] == 1 && min_turn > 0.0) {
            /* the turn this bone adds to its parent's alignment */
            double ic[4], rel[4];
            am_quat_conj(Ap, ic);
            am_quat_mul(A, ic, rel);
            double turn = 2.0 * atan2(sqrt(rel[1] * rel[1] + rel[2] * rel[2] + rel[3] * rel[3]), fabs(rel[0]));
            if (turn < min_turn) memcpy(A, Ap, sizeof Ap);
        }
    }
    am_free(pts);
    am_free(limb);
    return AM_OK;
}

/* Deltas of a pose of a rig (a motion frame): g [B][4], heads [B][3]. */
static void ami_pose_deltas(const am_rig *rig, const double *rq, const am_motion *mo, size_t frame, double *g,
                            double *h)
{
    ami_motion_deltas(rig, rq, mo, frame, NULL, g, h);
}

/* ---- root and proportions ------------------------------------------------------------------- */

/* Length along the structural tree from bone a's head down to bone d's head (a above d). */
static double ami_tree_length(const ami_skel *sk, int32_t a, int32_t d)
{
    double len = 0.0;
    for (int32_t b = d; b >= 0 && b != a; b = sk->spar[b]) {
        int32_t p = sk->spar[b];
        if (p < 0) break;
        len += am_vec3_dist(sk->heads + 3 * (size_t)b, sk->heads + 3 * (size_t)p);
    }
    return len;
}

static void ami_leg_ratio(ami_run *r)
{
    const am_retarget_map *map = r->map;
    double ls = 0.0, lt = 0.0;
    for (size_t c = 0; c < map->chain_count; c++) {
        const am_retarget_chain *ch = &map->chains[c];
        if (!ch->is_leg || ch->foot < 0) continue;
        /* from the first bone of the leg with a driver of its own down to the foot's end */
        int32_t first = -1;
        for (int32_t g = ch->foot; g >= 0; g = r->st.spar[g]) {
            if (map->source[g] >= 0 && map->source_b[g] < 0 && map->rule[g] != AM_RETARGET_RULE_CHAIN) first = g;
            if (g == ch->target_first) break;
        }
        if (first < 0) continue;
        int32_t sf = map->source[first], sl = map->source[ch->foot];
        double t = ami_tree_length(&r->st, first, ch->foot) + r->T->length[ch->foot];
        double s = ami_tree_length(&r->ss, sf, sl) + r->S->length[sl];
        if (t > 0 && s > 0) {
            lt += t;
            ls += s;
        }
    }
    r->leg_source = ls;
    r->leg_target = lt;
}

/* ---- the job --------------------------------------------------------------------------------- */

static bool ami_bound(const am_motion *mo, const am_rig *rig)
{
    if (mo->bone_count != rig->bone_count) return false;
    for (size_t b = 0; b < rig->bone_count; b++)
        if (strcmp(mo->bone_names[b], rig->bone_names[b]) != 0) return false;
    return true;
}

am_status am_retarget_validate(const am_retarget_job *job, am_error *err)
{
    assert(job && job->source_rig && job->source && job->target_rig && job->map && job->out);
    const am_retarget_map *map = job->map;
    am_retarget_opts o = job->opts ? *job->opts : (am_retarget_opts){0};
    AMI_CHECK(err, job->source->frame_count > 0, AM_E_EMPTY, "the source clip has 0 frames: nothing to retarget");
    AMI_CHECK(err, ami_bound(job->source, job->source_rig), AM_E_SHAPE,
              "the source motion is not bound to the source rig (%zu bones, the rig has %zu)",
              job->source->bone_count, job->source_rig->bone_count);
    AMI_CHECK(err, map->source_count == job->source_rig->bone_count && map->target_count == job->target_rig->bone_count,
              AM_E_SHAPE, "the map was made for rigs of %zu and %zu bones, not %zu and %zu", map->source_count,
              map->target_count, job->source_rig->bone_count, job->target_rig->bone_count);
    AMI_CHECK(err, ami_bound(job->out, job->target_rig) && job->out->frame_count == job->source->frame_count,
              AM_E_SHAPE, "the output motion must be bound to the target rig with the source's %zu frames",
              job->source->frame_count);
    AMI_CHECK(err, (unsigned)o.pose < AM_RETARGET_POSE_COUNT, AM_E_ARG, "pose mode %d", (int)o.pose);
    AMI_CHECK(err, (unsigned)o.root < AM_RETARGET_ROOT_COUNT, AM_E_ARG, "root mode %d", (int)o.root);
    AMI_CHECK(err, o.scale_horizontal >= 0 && isfinite(o.scale_horizontal) && o.scale_vertical >= 0 &&
                       isfinite(o.scale_vertical),
              AM_E_ARG, "root scale factors must be positive (0 = from the legs), got %g and %g", o.scale_horizontal,
              o.scale_vertical);
    if (o.source_pose) {
        AMI_CHECK(err, ami_bound(o.source_pose, job->source_rig), AM_E_ARG, "the source pose is not of the source rig");
        AMI_CHECK(err, o.source_pose_frame < o.source_pose->frame_count, AM_E_ARG,
                  "source pose frame %zu: the pose has %zu frames", o.source_pose_frame, o.source_pose->frame_count);
    }
    if (o.target_pose) {
        AMI_CHECK(err, ami_bound(o.target_pose, job->target_rig), AM_E_ARG, "the target pose is not of the target rig");
        AMI_CHECK(err, o.target_pose_frame < o.target_pose->frame_count, AM_E_ARG,
                  "target pose frame %zu: the pose has %zu frames", o.target_pose_frame, o.target_pose->frame_count);
    }
    return AM_OK;
}

static void ami_run_free(ami_run *r)
{
    ami_skel_free(&r->ss);
    ami_skel_free(&r->st);
    am_free(r->rs);
    am_free(r->rt);
    am_free(r->gs);
    am_free(r->hs);
    am_free(r->gt);
    am_free(r->ht);
    am_free(r->tref);
    am_free(r->tref_heads);
    am_free(r->sfloor);
    am_free(r->slides);
    am_free(r->disp);
    am_free(r->sflag);
    am_free(r->tflag);
    am_free(r->es);
}

/* The source's deltas and heads of every frame. */
/* Source bones whose heads the run reads: the root's driver, every bone a chain of the map
 * starts or ends at, the feet, the bones that slide and their position parents; and each one's
 * ancestors (heads are built down the tree). */
static void ami_source_needs(const ami_run *r, uint8_t *need)
{
    const am_retarget_map *map = r->map;
    const am_rig *S = r->S;
    memset(need, 0, S->bone_count);
    need[0] = 1;
    for (size_t i = 0; i < r->st.B; i++) {
        size_t g = (size_t)r->st.order[i];
        if (map->source[g] >= 0 && map->rule[g] != AM_RETARGET_RULE_CHAIN) {
            need[map->source[g]] = 1; /* the root's driver */
            break;
        }
    }
    for (size_t g = 0; g < map->target_count; g++) {
        int32_t s = map->source[g];
        if (s < 0 || map->rule[g] == AM_RETARGET_RULE_CHAIN) continue;
        bool wanted = g == 0 || r->slides[g];
        for (size_t c = 0; c < map->chain_count && !wanted; c++)
            wanted = map->chains[c].foot == (int32_t)g;
        /* the driver and the ends of chains are among the first and last bones with drivers:
         * cheap enough to keep every direct one of a chain's ends and roots */
        for (size_t c = 0; c < map->chain_count && !wanted; c++) {
            const am_retarget_chain *ch = &map->chains[c];
            wanted = ch->target_first == (int32_t)g || ch->target_last == (int32_t)g;
        }
        if (!wanted) continue;
        need[s] = 1;
        if (r->ss.ppar[s] >= 0) need[r->ss.ppar[s]] = 1;
    }
    for (size_t c = 0; c < map->chain_count; c++) {
        /* the chain-direction report walks each chain's bones with drivers */
        const am_retarget_chain *ch = &map->chains[c];
        for (int32_t g = ch->target_last; g >= 0; g = r->st.spar[g]) {
            if (map->source[g] >= 0) need[map->source[g]] = 1;
            if (g == ch->target_first) break;
        }
    }
    for (size_t b = S->bone_count; b-- > 1;)
        if (need[b]) need[S->parent[b]] = 1;
    /* a position parent may sit anywhere: mark its ancestors too */
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t b = S->bone_count; b-- > 1;)
            if (need[b]) need[S->parent[b]] = 1;
}

static am_status ami_source_frames(ami_run *r, am_error *err)
{
    size_t T = r->frames, B = r->S->bone_count;
    uint8_t *need = am_alloc_array(B, 1);
    AMI_CHECK(err, need, AM_E_NOMEM, "source heads");
    ami_source_needs(r, need);
    double *W = r->es ? am_alloc_array(B * 9, sizeof *W) : NULL;
    if (r->es && !W) {
        am_free(need);
        return AM_FAIL(err, AM_E_NOMEM, "source maps");
    }
    for (size_t t = 0; t < T; t++) {
        if ((t & 255) == 0 && !ami_progress("retarget: transfer", 0.5 * (double)t / (double)T)) {
            am_free(need);
            am_free(W);
            return AM_FAIL(err, AM_E_CANCELLED, "retarget stopped at frame %zu", t);
        }
        ami_motion_deltas(r->S, r->rs, r->src, t, need, r->gs + t * B * 4, r->hs + t * B * 3);
        if (r->es) ami_source_exact(r, t, need, W);
    }
    am_free(need);
    am_free(W);
    return AM_OK;
}

/* Target deltas of every frame from the source's, then the root and heads. */
static am_status ami_target_frames(ami_run *r, const double *gref_s, const double *href_s, am_error *err)
{
    const am_retarget_map *map = r->map;
    const ami_skel *st = &r->st;
    size_t T = r->frames, Bs = r->S->bone_count, Bt = st->B;
    /* constant factors: C_g = Gref_s^-1 Tref_g (source bone s of g), D_s = Gref_s^-1 */
    double *C = am_alloc_array(Bt * 4, sizeof *C), *D = am_alloc_array(Bs * 4, sizeof *D);
    if (!C || !D) {
        am_free(C);
        am_free(D);
        return AM_FAIL(err, AM_E_NOMEM, "transfer");
    }
    for (size_t s = 0; s < Bs; s++) ami_qconj(gref_s + 4 * s, D + 4 * s);
    for (size_t g = 0; g < Bt; g++) {
        int32_t s = map->source[g];
        if (s >= 0) am_quat_mul(D + 4 * (size_t)s, r->tref + 4 * g, C + 4 * g);
    }
    /* The root's driver: the target root, or when it has no source of its own the first bone
     * below it that has one (its head follows the source's, scaled). */
    int32_t drv = -1;
    for (size_t i = 0; i < Bt && drv < 0; i++) {
        size_t g = (size_t)st->order[i];
        if (map->source[g] >= 0 && map->rule[g] != AM_RETARGET_RULE_CHAIN) drv = (int32_t)g;
    }
    if (drv < 0) drv = 0;
    int32_t sdrv = map->source[drv] >= 0 ? map->source[drv] : 0;
    /* The driver's head in each rig's reference pose, and how high it stands above the feet
     * there: the target's hips keep their own height over its ground, the source's clip moves
     * them by its height over its own feet (a BVH rest pose hangs from a root at 0, feet
     * below the ground). */
    double T0[3], S0[3], feet_t = INFINITY, feet_s = INFINITY;
    {
        double *g0 = r->gt, *h0 = r->ht;
        memcpy(g0, r->tref, Bt * 4 * sizeof(double));
        memcpy(h0, st->heads, 3 * sizeof(double));
        double *disp = r->disp;
        r->disp = NULL;
        ami_target_heads(r, 0);
        r->disp = disp;
        memcpy(T0, h0 + 3 * (size_t)drv, sizeof T0);
        memcpy(S0, href_s + 3 * (size_t)sdrv, sizeof S0);
        for (size_t c = 0; c < map->chain_count; c++) {
            const am_retarget_chain *ch = &map->chains[c];
            r->sfloor[c] = -INFINITY; /* no leg: 0 below */
            if (!ch->is_leg || ch->foot < 0) continue;
            int32_t f = ch->foot, sf = map->source[f];
            bool head = ami_contact_on_head(st, f);
            double pt[3], ps[3], d[3];
            memcpy(pt, h0 + 3 * (size_t)f, sizeof pt);
            memcpy(ps, href_s + 3 * (size_t)sf, sizeof ps);
            if (!head) {
                am_vec3_sub(st->tails + 3 * (size_t)f, st->heads + 3 * (size_t)f, d);
                double v[3];
                am_quat_rotate(r->tref + 4 * (size_t)f, d, v);
                am_vec3_add(pt, v, pt);
                am_vec3_sub(r->ss.tails + 3 * (size_t)sf, r->ss.heads + 3 * (size_t)sf, d);
                am_quat_rotate(gref_s + 4 * (size_t)sf, d, v);
                am_vec3_add(ps, v, ps);
            }
            if (pt[2] < feet_t) feet_t = pt[2];
            if (ps[2] < feet_s) feet_s = ps[2];
            r->sfloor[c] = ps[2];
        }
        if (!isfinite(feet_t) || !isfinite(feet_s)) feet_t = feet_s = 0.0;
        for (size_t c = 0; c < map->chain_count; c++) r->sfloor[c] = fmax(0.0, r->sfloor[c] - feet_s);
        memcpy(r->tref_heads, h0, Bt * 3 * sizeof(double));
        r->feet_ref = feet_t;
    }
    for (size_t t = 0; t < T; t++) {
        if ((t & 255) == 0 && !ami_progress("retarget: transfer", 0.5 + 0.5 * (double)t / (double)T)) {
            am_free(C);
            am_free(D);
            return AM_FAIL(err, AM_E_CANCELLED, "retarget stopped at frame %zu", t);
        }
        const double *gs = r->gs + t * Bs * 4, *hs = r->hs + t * Bs * 3;
        double *gt = r->gt + t * Bt * 4, *ht = r->ht + t * Bt * 3;
        for (size_t i = 0; i < Bt; i++) {
            size_t g = (size_t)st->order[i];
            int32_t s = map->source[g], p = r->T->parent[g];
            double *G = gt + 4 * g;
            if (s < 0) {
                /* holds its reference pose relative to its parent */
                if (p < 0) {
                    memcpy(G, r->tref + 4 * g, 4 * sizeof(double));
                } else {
                    double pi[4], rel[4];
                    ami_qconj(r->tref + 4 * (size_t)p, pi);
                    am_quat_mul(pi, r->tref + 4 * g, rel);
                    am_quat_mul(gt + 4 * (size_t)p, rel, G);
                }
            } else if (map->source_b[g] >= 0) {
                double q1[4], q2[4], q[4];
                am_quat_mul(gs + 4 * (size_t)s, D + 4 * (size_t)s, q1);
                am_quat_mul(gs + 4 * (size_t)map->source_b[g], D + 4 * (size_t)map->source_b[g], q2);
                am_quat_slerp(q1, q2, map->weight[g], q);
                am_quat_mul(q, r->tref + 4 * g, G);
            } else {
                am_quat_mul(gs + 4 * (size_t)s, C + 4 * g, G);
            }
            /* A source bone off where its position parent puts it (a loc slide, an IK-driven
             * foot not quite on its leg) puts its target off by as much, scaled. */
            if (r->disp && r->slides[g]) {
                double *out = r->disp + (t * Bt + g) * 3;
                memset(out, 0, 3 * sizeof(double));
                int32_t sp = s >= 0 && map->source_b[g] < 0 ? r->ss.ppar[s] : -1;
                bool carry = sp >= 0 && (st->ppar[g] != r->T->parent[g] || sp == r->S->parent[s]);
                if (carry) {
                    double d[3], v[3];
                    am_vec3_sub(r->ss.heads + 3 * (size_t)s, r->ss.heads + 3 * (size_t)sp, d);
                    am_quat_rotate(gs + 4 * (size_t)sp, d, v);
                    if (r->es && r->sflag[sp]) {
                        double w[3];
                        am_mat3_mul_vec3(r->es + (t * Bs + (size_t)sp) * 9, v, w);
                        memcpy(v, w, sizeof w);
                    }
                    for (int k = 0; k < 3; k++)
                        out[k] = r->scale[k] * (hs[3 * (size_t)s + (size_t)k] - hs[3 * (size_t)sp + (size_t)k] - v[k]);
                }
            }
        }
        /* root: the driver's head follows the source driver's displacement, scaled */
        double want[3];
        for (int k = 0; k < 3; k++) want[k] = T0[k] + r->scale[k] * (hs[3 * (size_t)sdrv + (size_t)k] - S0[k]);
        want[2] = T0[2] - feet_t + r->scale[2] * (hs[3 * (size_t)sdrv + 2] - (S0[2] - feet_s));
        am_vec3_set(ht, 0, 0, 0);
        ami_target_heads(r, t);
        double shift[3];
        am_vec3_sub(want, ht + 3 * (size_t)drv, shift);
        for (size_t g = 0; g < Bt; g++) am_vec3_add(ht + 3 * g, shift, ht + 3 * g);
    }
    am_free(C);
    am_free(D);
    return AM_OK;
}

/* A bone's local rotation against SPEC 2.3's exact map (frames that are not orthonormal): the
 * rotation R with W_parent R_rest R R_rest^-1 closest to the wanted world map D, taken so that
 * the bone's own axis (its tail) points exactly where D puts it, the twist about it fitted to
 * D's other two axes. M = R_rest^-1 W_parent^-1 D R_rest is R itself when everything is
 * orthonormal. */
static void ami_local_exact(const am_rig *rig, size_t b, const double Wp[9], const double D[9], double L[4])
{
    double Wpi[9], Ai[9], t[9], u[9], M[9];
    if (!am_mat3_inverse(Wp, Wpi)) am_mat3_identity(Wpi);
    ami_rest_inv3(rig, b, Ai);
    am_mat3_mul(Ai, Wpi, t);
    am_mat3_mul(t, D, u);
    am_mat3_mul(u, rig->rest_rot + 9 * b, M);
    /* columns of M: where the bone's Y, X, Z go */
    const double p[9] = {0, 1, 0, 1, 0, 0, 0, 0, 1};
    const double q[9] = {M[1], M[4], M[7], M[0], M[3], M[6], M[2], M[5], M[8]};
    const double id[4] = {1, 0, 0, 0};
    ami_swing_twist_fit(id, p, q, 3, 0, L);
    am_quat_normalize(L, L);
}

/* Local rotations, translations and the root of the output motion. */
static am_status ami_write_motion(ami_run *r, am_motion *out, am_error *err)
{
    const ami_skel *st = &r->st;
    const am_rig *T = r->T;
    const am_retarget_map *map = r->map;
    size_t F = r->frames, B = st->B, Bs = r->S->bone_count;
    bool any_loc = false;
    for (size_t g = 1; g < B; g++) any_loc |= r->slides[g] != 0;
    if (any_loc && !out->loc) {
        out->loc = am_alloc_array(F * B * 3, sizeof(double));
        AMI_CHECK(err, out->loc, AM_E_NOMEM, "loc of %zu frames x %zu bones", F, B);
    }
    double tiny = 1e-12 * (st->size > 0 ? st->size : 1.0);
    bool loc_used = false;
    /* bones that hold their rest pose relative to their parent: no driver, and a reference pose
     * that is the parent's (every pose but a given --target-pose) */
    uint8_t *rest_local = am_alloc_array(B, 1);
    /* bones written against the exact FK: the target's frame or an ancestor's is not
     * orthonormal, or the source's map is not its delta; and every bone below one */
    uint8_t *exact = am_alloc_array(B, 1);
    bool any_exact = false;
    if (!rest_local || !exact) {
        am_free(rest_local);
        am_free(exact);
        return AM_FAIL(err, AM_E_NOMEM, "motion");
    }
    exact[0] = 0;
    /* Only ALIGN from the two rests aims at world joints (SPEC 5's closure). DELTA's promise is
     * the bind-relative rotations, and a given pose's is that its frame comes out as that pose:
     * the deltas give both exactly (and invert exactly: A -> B -> A). */
    bool aim_world = r->opts.pose == AM_RETARGET_POSE_ALIGN && !r->opts.target_pose && !r->opts.source_pose;
    for (size_t b = 1; b < B; b++) {
        int32_t s = map->source[b];
        rest_local[b] = s < 0 && !r->opts.target_pose;
        exact[b] = aim_world && (r->tflag[b] || exact[T->parent[b]] ||
                                 (s >= 0 && map->source_b[b] < 0 && r->es && r->sflag[s]));
        any_exact |= exact[b] != 0;
    }
    /* exact world maps and heads of the frame being written */
    double *W = NULL, *H = NULL;
    uint8_t *done = NULL;
    if (any_exact) {
        W = am_alloc_array(B * 9, sizeof *W);
        H = am_alloc_array(B * 3, sizeof *H);
        done = am_alloc_array(B, 1);
        if (!W || !H || !done) {
            am_free(rest_local);
            am_free(exact);
            am_free(W);
            am_free(H);
            am_free(done);
            return AM_FAIL(err, AM_E_NOMEM, "motion");
        }
    }
    for (size_t t = 0; t < F; t++) {
        const double *g = r->gt + t * B * 4, *h = r->ht + t * B * 3;
        memcpy(out->trans + 3 * t, h, 3 * sizeof(double));
        double *rq = out->root_quat + 4 * t;
        memcpy(rq, g, 4 * sizeof(double));
        if (t && am_vec3_dot(rq + 1, rq + 1 - 4) + rq[0] * rq[-4] < 0)
            for (int k = 0; k < 4; k++) rq[k] = -rq[k];
        else if (!t) am_quat_canonical(rq, rq);
        memset(out->euler + t * B * 3, 0, 3 * sizeof(double));
        if (out->quat) am_quat_identity(out->quat + t * B * 4);
        if (out->loc) memset(out->loc + t * B * 3, 0, 3 * sizeof(double));
        if (W) am_quat_unit_to_mat3(g, W);
        for (size_t b = 1; b < B; b++) {
            size_t p = (size_t)T->parent[b];
            double pi[4], rel[4], ri[4], L[4];
            if (rest_local[b]) {
                /* a bone without a driver holds its rest relative to its parent: exactly */
                memset(out->euler + (t * B + b) * 3, 0, 3 * sizeof(double));
                if (out->quat) am_quat_identity(out->quat + (t * B + b) * 4);
                if (W) memcpy(W + 9 * b, W + 9 * p, 9 * sizeof(double));
                continue;
            }
            if (exact[b]) {
                /* the wanted world map: the target's delta, times the source's exact map over
                 * its delta (how far the source's own FK is off a rotation there) */
                double D[9], G[9];
                int32_t s = map->source[b];
                am_quat_unit_to_mat3(g + 4 * b, G);
                if (s >= 0 && map->source_b[b] < 0 && r->es && r->sflag[s])
                    am_mat3_mul(r->es + (t * Bs + (size_t)s) * 9, G, D);
                else memcpy(D, G, sizeof D);
                ami_local_exact(T, b, W + 9 * p, D, L);
            } else {
                ami_qconj(g + 4 * p, pi);
                am_quat_mul(pi, g + 4 * b, rel);
                ami_qconj(r->rt + 4 * b, ri);
                am_quat_mul(ri, rel, L);
                am_quat_mul(L, r->rt + 4 * b, L);
                /* a product of unit quaternions: renormalised only when rounding has added up */
                double n2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2] + L[3] * L[3];
                if (fabs(n2 - 1.0) > 1e-14) am_quat_normalize(L, L);
            }
            /* one hemisphere from frame to frame: curves stay continuous */
            double *prev = t && out->quat ? out->quat + ((t - 1) * B + b) * 4 : NULL;
            if (prev ? L[0] * prev[0] + am_vec3_dot(L + 1, prev + 1) < 0 : L[0] < 0)
                for (int k = 0; k < 4; k++) L[k] = -L[k];
            if (W) {
                if (exact[b]) ami_exact_map(T, b, W + 9 * p, L, W + 9 * b);
                else am_quat_unit_to_mat3(g + 4 * b, W + 9 * b);
            }
            if (out->quat) memcpy(out->quat + (t * B + b) * 4, L, sizeof L);
            double R[9], *e = out->euler + (t * B + b) * 3;
            am_quat_unit_to_mat3(L, R);
            if (t) am_mat3_to_euler_xyz_near(R, out->euler + ((t - 1) * B + b) * 3, e);
            else am_mat3_to_euler_xyz(R, e);
        }
        if (!out->loc) continue;
        /* Translations of the bones that slide: the head where the position parents put it. On
         * the exact FK (any_exact), heads down the position tree, each from its exact parent. */
        if (done) {
            memset(done, 0, B);
            memcpy(H, h, 3 * sizeof(double));
            done[0] = 1;
        }
        for (size_t i = 1; i < B; i++) {
            size_t b = (size_t)st->order[i], p = (size_t)T->parent[b];
            double d[3], v[3], lo[3];
            am_vec3_sub(st->heads + 3 * b, st->heads + 3 * p, d);
            if (done && done[p] && done[st->ppar[b]] && (exact[b] || exact[p] || exact[st->ppar[b]])) {
                /* the pipeline's offset from the position parent, carried by the exact map */
                size_t pp = (size_t)st->ppar[b];
                double want[3], dp[3], off[3], Wpi[9], Ai[9], loc_w[3];
                am_vec3_sub(st->heads + 3 * b, st->heads + 3 * pp, dp);
                am_quat_rotate(g + 4 * pp, dp, v);
                am_vec3_sub(h + 3 * b, h + 3 * pp, off);
                am_vec3_sub(off, v, off);
                if (!r->slides[b]) am_vec3_set(off, 0, 0, 0);
                am_mat3_mul_vec3(W + 9 * pp, dp, want);
                am_vec3_add(want, H + 3 * pp, want);
                am_vec3_add(want, off, want);
                memcpy(H + 3 * b, want, sizeof want);
                done[b] = 1;
                if (!r->slides[b]) continue;
                /* loc = R_rest^-1 (W_p^-1 (want - h_p) - d) */
                if (!am_mat3_inverse(W + 9 * p, Wpi)) am_mat3_identity(Wpi);
                am_vec3_sub(want, H + 3 * p, v);
                am_mat3_mul_vec3(Wpi, v, loc_w);
                am_vec3_sub(loc_w, d, loc_w);
                ami_rest_inv3(T, b, Ai);
                am_mat3_mul_vec3(Ai, loc_w, lo);
            } else {
                if (done && done[p]) {
                    double w[3];
                    am_mat3_mul_vec3(W + 9 * p, d, w);
                    am_vec3_add(H + 3 * p, w, H + 3 * b);
                    done[b] = 1;
                }
                if (!r->slides[b]) continue;
                /* the head where the position parents put it, less where the rig's parent
                 * would, in the bone's rest frame turned by the parent's delta */
                double gr[4], gri[4];
                am_quat_rotate(g + 4 * p, d, v);
                am_vec3_sub(h + 3 * b, h + 3 * p, d);
                am_vec3_sub(d, v, d);
                am_quat_mul(g + 4 * p, r->rt + 4 * b, gr);
                ami_qconj(gr, gri);
                am_quat_rotate(gri, d, lo);
                if (done && done[b]) {
                    double w[3], x[3];
                    am_mat3_mul_vec3(T->rest_rot + 9 * b, lo, w);
                    am_mat3_mul_vec3(W + 9 * p, w, x);
                    am_vec3_add(H + 3 * b, x, H + 3 * b);
                }
            }
            if (am_vec3_norm(lo) > tiny) loc_used = true;
            memcpy(out->loc + (t * B + b) * 3, lo, sizeof lo);
        }
    }
    am_free(rest_local);
    am_free(exact);
    am_free(W);
    am_free(H);
    am_free(done);
    if (out->loc && !loc_used) {
        am_free(out->loc);
        out->loc = NULL;
    }
    return AM_OK;
}

am_status am_retarget_run(const am_retarget_job *job, am_error *err)
{
    AMI_TRY(am_retarget_validate(job, err));
    am_retarget_opts o = job->opts ? *job->opts : (am_retarget_opts){0};
    am_scope scope;
    am_scope_enter(&scope, &o.ctx);
    ami_stage stage = ami_stage_begin("retarget: transfer");
    ami_run r = {.S = job->source_rig, .T = job->target_rig, .map = job->map, .src = job->source, .opts = o,
                 .frames = job->source->frame_count, .fps = job->source->fps, .report = job->report};
    size_t T = r.frames, Bs = r.S->bone_count, Bt = r.T->bone_count;
    double *gref = NULL, *href = NULL;
    am_status st = ami_skel_build(r.S, &r.ss, err);
    if (st == AM_OK) st = ami_skel_build(r.T, &r.st, err);
    if (st != AM_OK) goto done;
    r.rs = am_alloc_array(Bs * 4, sizeof *r.rs);
    r.rt = am_alloc_array(Bt * 4, sizeof *r.rt);
    r.gs = am_alloc_array(T * Bs * 4, sizeof *r.gs);
    r.hs = am_alloc_array(T * Bs * 3, sizeof *r.hs);
    r.gt = am_alloc_array(T * Bt * 4, sizeof *r.gt);
    r.ht = am_alloc_array(T * Bt * 3, sizeof *r.ht);
    r.tref = am_alloc_array(Bt * 4, sizeof *r.tref);
    r.tref_heads = am_alloc_array(Bt * 3, sizeof *r.tref_heads);
    r.sfloor = am_alloc_array(r.map->chain_count + 1, sizeof *r.sfloor);
    r.slides = am_alloc_array(Bt, 1);
    gref = am_alloc_array(Bs * 4, sizeof *gref);
    href = am_alloc_array(Bs * 3, sizeof *href);
    if (!r.rs || !r.rt || !r.gs || !r.hs || !r.gt || !r.ht || !r.tref || !r.tref_heads || !r.sfloor || !r.slides || !gref || !href) {
        st = AM_FAIL(err, AM_E_NOMEM, "retarget of %zu frames x %zu bones", T, Bt);
        goto done;
    }
    ami_rest_quats(r.S, r.rs);
    ami_rest_quats(r.T, r.rt);
    r.sflag = am_alloc_array(Bs, 1);
    r.tflag = am_alloc_array(Bt, 1);
    if (!r.sflag || !r.tflag) {
        st = AM_FAIL(err, AM_E_NOMEM, "retarget of %zu frames x %zu bones", T, Bt);
        goto done;
    }
    ami_inexact_flags(r.T, r.tflag);
    if (ami_inexact_flags(r.S, r.sflag)) {
        r.es = am_alloc_array(T * Bs * 9, sizeof *r.es);
        if (!r.es) {
            st = AM_FAIL(err, AM_E_NOMEM, "source maps of %zu frames x %zu bones", T, Bs);
            goto done;
        }
    }
    /* Bones that may translate: feet hanging from their legs (they follow the leg's end, off it
     * as the source's foot is off its own), and bones whose source slides (loc). A source foot
     * hanging from the body does not slide a target bone that hangs from its parent. */
    bool any_disp = false;
    for (size_t g = 1; g < Bt; g++) {
        int32_t s = r.map->source[g];
        bool detached = r.st.ppar[g] != r.T->parent[g];
        bool src_slides = false;
        if (s > 0 && r.map->source_b[g] < 0) {
            bool src_detached = r.ss.ppar[s] != r.S->parent[s];
            if (src_detached) src_slides = detached;
            else if (r.src->loc)
                for (size_t t = 0; t < T && !src_slides; t++)
                    src_slides = am_vec3_norm(r.src->loc + (t * Bs + (size_t)s) * 3) > 0;
        }
        r.slides[g] = detached || src_slides;
        any_disp |= src_slides;
    }
    if (any_disp) {
        r.disp = am_alloc_array(T * Bt * 3, sizeof *r.disp);
        if (!r.disp) {
            st = AM_FAIL(err, AM_E_NOMEM, "slides");
            goto done;
        }
    }
    /* the source's reference pose */
    if (o.source_pose) {
        ami_pose_deltas(r.S, r.rs, o.source_pose, o.source_pose_frame, gref, href);
    } else {
        for (size_t s = 0; s < Bs; s++) am_quat_identity(gref + 4 * s);
        memcpy(href, r.ss.heads, Bs * 3 * sizeof(double));
    }
    /* the target's */
    if (o.target_pose) {
        double *h = am_alloc_array(Bt * 3, sizeof *h);
        if (!h) {
            st = AM_FAIL(err, AM_E_NOMEM, "target pose");
            goto done;
        }
        ami_pose_deltas(r.T, r.rt, o.target_pose, o.target_pose_frame, r.tref, h);
        am_free(h);
    } else if (o.pose == AM_RETARGET_POSE_ALIGN) {
        if ((st = ami_align(&r, gref, href, err)) != AM_OK) goto done;
    } else {
        for (size_t g = 0; g < Bt; g++) am_quat_identity(r.tref + 4 * g);
    }
    ami_leg_ratio(&r);
    double k = r.leg_source > 0 && r.leg_target > 0 ? r.leg_target / r.leg_source
               : r.ss.size > 0 ? r.st.size / r.ss.size : 1.0;
    double kh = o.scale_horizontal > 0 ? o.scale_horizontal : o.root == AM_RETARGET_ROOT_KEEP ? 1.0 : k;
    double kv = o.scale_vertical > 0 ? o.scale_vertical : o.root == AM_RETARGET_ROOT_KEEP ? 1.0 : k;
    am_vec3_set(r.scale, kh, kh, kv);
    if ((st = ami_source_frames(&r, err)) != AM_OK || (st = ami_target_frames(&r, gref, href, err)) != AM_OK)
        goto done;
    double t_transfer = ami_stage_end(&stage);
    double t_feet = am_now();
    if (job->report) {
        am_retarget_report_free(job->report);
        job->report->pose = o.pose;
        job->report->align_min_deg =
            o.pose != AM_RETARGET_POSE_ALIGN ? 0.0 : o.align_min_deg == 0.0 ? AMI_ALIGN_MIN_DEG : fmax(o.align_min_deg, 0.0);
        job->report->root = o.root;
        job->report->flags = o.flags;
        job->report->leg_source = r.leg_source;
        job->report->leg_target = r.leg_target;
        job->report->scale_horizontal = kh;
        job->report->scale_vertical = kv;
    }
    if ((st = ami_feet(&r, err)) != AM_OK) goto done;
    t_feet = am_now() - t_feet;
    if ((st = ami_write_motion(&r, job->out, err)) != AM_OK) goto done;
    job->out->fps = r.fps;
    if (job->report) {
        job->report->transfer_seconds = t_transfer;
        job->report->ik_seconds = t_feet;
    }
done:
    am_free(gref);
    am_free(href);
    ami_run_free(&r);
    am_scope_leave(&scope, job->warnings);
    return st;
}
