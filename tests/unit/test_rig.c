/* Unit tests of rig building, bone frames, limits and FK (SPEC.md 2.1 - 2.3). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "anymove/io.h"
#include "math/math_internal.h"

#define TR_MAX 320

/* An editable rig description; tests mutate a copy of the default and build it. */
typedef struct trig {
    size_t nj, nb, nl;
    const char *jn[TR_MAX];
    double jp[TR_MAX * 3];
    const char *bn[TR_MAX], *bh[TR_MAX], *bt[TR_MAX], *bp[TR_MAX];
    const char *lk[8];
    double lv[8 * 6];
    const char *extra;
} trig;

static ami_rng g_rng = {0x243F6A8885A308D3ull};

static double ami_rand01(void) { return ami_rng_uniform(&g_rng); }

static double ami_rand_range(double a, double b)
{
    return a + (b - a) * ami_rand01();
}

static void tr_joint(trig *r, const char *name, double x, double y, double z)
{
    r->jn[r->nj] = name;
    am_vec3_set(r->jp + 3 * r->nj, x, y, z);
    r->nj++;
}

static void tr_bone(trig *r, const char *name, const char *head, const char *tail,
                    const char *parent)
{
    r->bn[r->nb] = name;
    r->bh[r->nb] = head;
    r->bt[r->nb] = tail;
    r->bp[r->nb] = parent;
    r->nb++;
}

static void tr_limit(trig *r, const char *key, const double v[6])
{
    r->lk[r->nl] = key;
    memcpy(r->lv + 6 * r->nl, v, 6 * sizeof *v);
    r->nl++;
}

/* A small quadruped front: mirrored arms, an unconnected tail, a bone along exactly -Y. */
static void tr_default(trig *r)
{
    memset(r, 0, sizeof *r);
    tr_joint(r, "root", 0.0, 0.1, 0.8);
    tr_joint(r, "chest", 0.0, -0.35, 0.85);
    tr_joint(r, "head", 0.0, -0.75, 1.1);
    tr_joint(r, "shoulder_L", 0.12, -0.35, 0.8);
    tr_joint(r, "elbow_L", 0.14, -0.33, 0.45);
    tr_joint(r, "paw_L", 0.14, -0.38, 0.05);
    tr_joint(r, "shoulder_R", -0.12, -0.35, 0.8);
    tr_joint(r, "elbow_R", -0.14, -0.33, 0.45);
    tr_joint(r, "paw_R", -0.14, -0.38, 0.05);
    tr_joint(r, "tail1", 0.0, 0.4, 0.8);
    tr_joint(r, "fwd", 0.0, -0.2, 0.8);
    tr_bone(r, "spine", "root", "chest", NULL);
    tr_bone(r, "neck", "chest", "head", "spine");
    tr_bone(r, "upperarm_L", "shoulder_L", "elbow_L", "spine");
    tr_bone(r, "forearm_L", "elbow_L", "paw_L", "upperarm_L");
    tr_bone(r, "upperarm_R", "shoulder_R", "elbow_R", "spine");
    tr_bone(r, "forearm_R", "elbow_R", "paw_R", "upperarm_R");
    tr_bone(r, "tail", "root", "tail1", "spine");
    tr_bone(r, "nose_fwd", "root", "fwd", "spine");
}

static am_rig_desc tr_desc(const trig *r)
{
    am_rig_desc d = {0};
    d.joint_count = r->nj;
    d.joint_names = r->jn;
    d.joint_pos = r->jp;
    d.bone_count = r->nb;
    d.bone_names = r->bn;
    d.bone_head = r->bh;
    d.bone_tail = r->bt;
    d.bone_parent = r->bp;
    d.limit_count = r->nl;
    d.limit_keys = r->lk;
    d.limits_deg = r->lv;
    d.extra_json = r->extra;
    d.source = "test_rig.json";
    return d;
}

static am_rig *tr_build(const trig *r)
{
    am_rig_desc d = tr_desc(r);
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    return rig;
}

/* Build must fail with `want`, the message must name `name` and the file. */
static void tr_expect_fail(const trig *r, am_status want, const char *name, int line)
{
    am_rig_desc d = tr_desc(r);
    am_rig *rig = (am_rig *)&d; /* must be reset to NULL on failure */
    am_error err = {0};
    am_status st = am_rig_build(&d, &rig, &err);
    if (st != want) {
        am_test_fail(__FILE__, line, "am_rig_build returned %s, want %s (%s)", am_status_name(st),
                     am_status_name(want), err.info);
    }
    if (st != AM_OK) {
        if (rig != NULL) am_test_fail(__FILE__, line, "*out not NULL on failure");
        if (err.code != st) am_test_fail(__FILE__, line, "err.code %d != %d", err.code, st);
        if (name && !strstr(err.info, name)) {
            am_test_fail(__FILE__, line, "info '%s' does not name '%s'", err.info, name);
        }
        if (strcmp(err.file, "test_rig.json") != 0) {
            am_test_fail(__FILE__, line, "err.file is '%s'", err.file);
        }
    } else {
        am_rig_free(rig);
    }
}
#define EXPECT_FAIL(r, want, name) tr_expect_fail((r), (want), (name), __LINE__)

static double maxdiff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* ---- validation ---- */

static void build_accepts_default(void)
{
    trig r;
    tr_default(&r);
    am_rig *rig = tr_build(&r);
    AM_CHECK(rig && rig->bone_count == 8 && rig->joint_count == 11);
    if (rig) {
        for (size_t b = 0; b < rig->bone_count; b++) AM_CHECK(rig->is_helper[b] == 0);
        AM_CHECK(rig->extra_json == NULL && rig->name == NULL);
    }
    am_rig_free(rig);
    am_rig_free(NULL);
}

static void build_rejects_empty(void)
{
    trig r;
    memset(&r, 0, sizeof r);
    EXPECT_FAIL(&r, AM_E_EMPTY, NULL);
    tr_default(&r);
    r.nb = 0;
    EXPECT_FAIL(&r, AM_E_EMPTY, NULL);
}

static void build_rejects_unknown_names(void)
{
    trig r;
    tr_default(&r);
    r.bh[3] = "elbo_L";
    EXPECT_FAIL(&r, AM_E_NAME, "elbo_L");
    tr_default(&r);
    r.bt[1] = "hed";
    EXPECT_FAIL(&r, AM_E_NAME, "hed");
    tr_default(&r);
    r.bp[5] = "upperarm_X";
    EXPECT_FAIL(&r, AM_E_NAME, "upperarm_X");
    tr_default(&r);
    r.bp[5] = "paw_R"; /* a joint name is not a bone */
    EXPECT_FAIL(&r, AM_E_NAME, "forearm_R");
}

static void build_rejects_duplicates(void)
{
    trig r;
    tr_default(&r);
    r.bn[4] = "upperarm_L";
    EXPECT_FAIL(&r, AM_E_DUPLICATE, "upperarm_L");
    tr_default(&r);
    r.jn[8] = "paw_L";
    EXPECT_FAIL(&r, AM_E_DUPLICATE, "paw_L");
}

static void build_rejects_bad_roots(void)
{
    trig r;
    tr_default(&r);
    r.bp[6] = NULL;
    EXPECT_FAIL(&r, AM_E_ROOT, "tail");
    tr_default(&r);
    r.bp[0] = "neck";
    EXPECT_FAIL(&r, AM_E_ROOT, NULL);
}

static void build_rejects_cycles(void)
{
    trig r;
    tr_default(&r);
    /* upperarm_L <-> forearm_L, with forearm_R hanging below the cycle. */
    r.bp[2] = "forearm_L";
    r.bp[4] = "forearm_L";
    am_rig_desc d = tr_desc(&r);
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_rig_build(&d, &rig, &err), AM_E_CYCLE);
    AM_CHECK_MSG(strstr(err.info, "'upperarm_L'") || strstr(err.info, "'forearm_L'"),
                 "cycle info '%s'", err.info);
    AM_CHECK(rig == NULL);
    tr_default(&r);
    r.bp[7] = "nose_fwd";
    EXPECT_FAIL(&r, AM_E_CYCLE, "nose_fwd");
}

static void build_rejects_degenerate_and_nonfinite(void)
{
    trig r;
    tr_default(&r);
    r.bt[6] = "root"; /* head == tail */
    EXPECT_FAIL(&r, AM_E_DEGENERATE, "tail");
    tr_default(&r);
    r.jp[3 * 9 + 1] = 0.1 + 1e-10; /* tail1 onto root */
    r.jp[3 * 9 + 2] = 0.8;
    r.jp[3 * 9 + 0] = 0.0;
    EXPECT_FAIL(&r, AM_E_DEGENERATE, "tail");
    tr_default(&r);
    r.jp[3 * 9 + 1] = 0.1 + 2e-9; /* short but above 1e-9 m */
    r.jp[3 * 9 + 2] = 0.8;
    EXPECT_FAIL(&r, AM_OK, NULL);
    tr_default(&r);
    r.jp[3 * 4 + 2] = NAN;
    EXPECT_FAIL(&r, AM_E_NONFINITE, "elbow_L");
    tr_default(&r);
    r.jp[3 * 2] = INFINITY;
    EXPECT_FAIL(&r, AM_E_NONFINITE, "head");
}

static void build_rejects_unused_joint(void)
{
    trig r;
    tr_default(&r);
    tr_joint(&r, "floating", 1, 1, 1);
    EXPECT_FAIL(&r, AM_E_VALUE, "floating");
}

static void build_rejects_bad_limits(void)
{
    trig r;
    const double ok[6] = {-10, 10, -20, 20, -30, 30};
    double v[6];
    tr_default(&r);
    memcpy(v, ok, sizeof v);
    v[2] = 25; /* ymin > ymax */
    tr_limit(&r, "neck", v);
    EXPECT_FAIL(&r, AM_E_VALUE, "neck");
    tr_default(&r);
    memcpy(v, ok, sizeof v);
    v[5] = NAN;
    tr_limit(&r, "forearm", v);
    EXPECT_FAIL(&r, AM_E_VALUE, "forearm");
    tr_default(&r);
    memcpy(v, ok, sizeof v);
    v[0] = -INFINITY;
    tr_limit(&r, "neck", v);
    EXPECT_FAIL(&r, AM_E_VALUE, "neck");
    tr_default(&r);
    tr_limit(&r, "forearm_X", ok);
    EXPECT_FAIL(&r, AM_E_NAME, "forearm_X");
    tr_default(&r);
    tr_limit(&r, "fore", ok);
    EXPECT_FAIL(&r, AM_E_NAME, "fore");
    tr_default(&r);
    tr_limit(&r, "neck", ok);
    tr_limit(&r, "neck", ok);
    EXPECT_FAIL(&r, AM_E_DUPLICATE, "neck");
    /* A stem matches sided bones only: "spin" is not a stem of "spine". */
    tr_default(&r);
    tr_limit(&r, "spin", ok);
    EXPECT_FAIL(&r, AM_E_NAME, "spin");
    /* Equal bounds are a valid (locked) range. */
    tr_default(&r);
    memcpy(v, ok, sizeof v);
    v[0] = v[1] = 5;
    tr_limit(&r, "neck", v);
    EXPECT_FAIL(&r, AM_OK, NULL);
}

static void build_survives_allocation_failures(void)
{
    trig r;
    tr_default(&r);
    const double lim[6] = {-10, 10, -20, 20, -30, 30};
    tr_limit(&r, "forearm", lim);
    r.extra = "{\"skin\": \"skin.npz\"}";
    am_rig_desc d = tr_desc(&r);
    int succeeded = 0;
    for (uint64_t k = 1; k < 200 && !succeeded; k++) {
        am_rig *rig = NULL;
        am_error err = {0};
        am_test_alloc_limit(k);
        am_status st = am_rig_build(&d, &rig, &err);
        am_test_alloc_limit(0);
        if (st == AM_OK) {
            succeeded = 1;
            AM_CHECK(rig && rig->extra_json && strcmp(rig->extra_json, r.extra) == 0);
        } else {
            AM_CHECK_MSG(st == AM_E_NOMEM, "limit %llu: %s", (unsigned long long)k,
                         am_status_name(st));
            AM_CHECK(rig == NULL);
        }
        am_rig_free(rig);
    }
    AM_CHECK(succeeded);
}

/* ---- ordering ---- */

static void bones_sorted_parents_first_from_shuffle(void)
{
    trig base;
    tr_default(&base);
    am_rig *ref = tr_build(&base);
    if (!ref) return;
    /* An already parents-first file keeps its order. */
    for (size_t b = 0; b < base.nb; b++) AM_CHECK(strcmp(ref->bone_names[b], base.bn[b]) == 0);
    for (int trial = 0; trial < 20; trial++) {
        trig r = base;
        size_t perm[TR_MAX];
        for (size_t i = 0; i < r.nb; i++) perm[i] = i;
        for (size_t i = r.nb - 1; i > 0; i--) {
            size_t j = (size_t)(ami_rand01() * (double)(i + 1));
            size_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < r.nb; i++) {
            r.bn[i] = base.bn[perm[i]];
            r.bh[i] = base.bh[perm[i]];
            r.bt[i] = base.bt[perm[i]];
            r.bp[i] = base.bp[perm[i]];
        }
        am_rig *rig = tr_build(&r);
        if (!rig) continue;
        AM_CHECK(strcmp(rig->bone_names[0], "spine") == 0 && rig->parent[0] == -1);
        for (size_t b = 1; b < rig->bone_count; b++) {
            AM_CHECK(rig->parent[b] >= 0 && (size_t)rig->parent[b] < b);
            size_t f = 0;
            while (strcmp(base.bn[f], rig->bone_names[b]) != 0) f++;
            AM_CHECK(strcmp(rig->bone_names[rig->parent[b]], base.bp[f]) == 0);
        }
        /* Stable: siblings (children of spine) keep their relative order in the file. */
        size_t last = 0;
        for (size_t b = 1; b < rig->bone_count; b++) {
            if (rig->parent[b] != 0) continue;
            size_t f = 0;
            while (strcmp(r.bn[f], rig->bone_names[b]) != 0) f++;
            AM_CHECK(b == 1 || f > last);
            last = f;
        }
        /* Same rig, same rest data, whatever the file order. */
        for (size_t b = 0; b < rig->bone_count; b++) {
            int k = am_rig_find_bone(ref, rig->bone_names[b]);
            AM_CHECK(k >= 0);
            if (k < 0) continue;
            AM_CHECK(maxdiff(rig->offset + 16 * b, ref->offset + 16 * (size_t)k, 16) == 0.0);
            AM_CHECK(rig->length[b] == ref->length[k]);
        }
        for (size_t j = 0; j < rig->joint_count; j++) {
            AM_CHECK(strcmp(rig->bone_names[rig->kp_bone[j]], ref->bone_names[ref->kp_bone[j]]) == 0);
        }
        am_rig_free(rig);
    }
    am_rig_free(ref);
}

static void find_bone_and_joint(void)
{
    trig r;
    tr_default(&r);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    AM_CHECK(am_rig_find_bone(rig, "forearm_R") == 5);
    AM_CHECK(am_rig_find_bone(rig, "forearm") == -1);
    AM_CHECK(am_rig_find_bone(rig, NULL) == -1);
    AM_CHECK(am_rig_find_joint(rig, "paw_R") == 8);
    AM_CHECK(am_rig_find_joint(rig, "spine") == -1);
    AM_CHECK(am_rig_find_bone(NULL, "spine") == -1);
    am_rig_free(rig);
}

/* ---- frames ---- */

static void check_frame(const double h[3], const double t[3], double ortho_tol)
{
    double R[9], d[3], n[3], RtR[9], I[9];
    am_bone_frame_roll0(h, t, R);
    am_vec3_sub(t, h, d);
    am_vec3_normalize(d, n);
    double Y[3] = {R[1], R[4], R[7]};
    AM_CHECK_MSG(maxdiff(Y, n, 3) < 1e-15 || (n[1] < -0.99999 && maxdiff(Y, n, 3) < 3e-4),
                 "Y axis off the bone by %g", maxdiff(Y, n, 3));
    am_mat3_tmul(R, R, RtR);
    am_mat3_identity(I);
    AM_CHECK_MSG(maxdiff(RtR, I, 9) < ortho_tol, "frame not orthonormal: %g", maxdiff(RtR, I, 9));
    AM_CHECK_NEAR(am_mat3_det(R), 1.0, ortho_tol);
}

static void frames_y_along_bone_and_mirror(void)
{
    for (int i = 0; i < 2000; i++) {
        double h[3] = {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
        double t[3] = {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
        if (am_vec3_dist(h, t) < 1e-3) continue;
        double u[3];
        am_vec3_sub(t, h, u);
        am_vec3_normalize(u, u);
        /* Below 1 + y = 6.1e-3 theta is a series: orthonormal only to ~3e-5 (SPEC 2.3). */
        check_frame(h, t, 1.0 + u[1] <= 6.1e-3 ? 1e-4 : 1e-12);
        /* Mirror in X: X axes mirror-negated, Y and Z mirrored (SPEC 2.2). */
        double hm[3] = {-h[0], h[1], h[2]}, tm[3] = {-t[0], t[1], t[2]}, R[9], M[9];
        am_bone_frame_roll0(h, t, R);
        am_bone_frame_roll0(hm, tm, M);
        double d[3];
        am_vec3_sub(t, h, d);
        am_vec3_normalize(d, d);
        if (1.0 + d[1] < 1e-2) continue; /* near -Y the branch may differ */
        double want[9] = {R[0], -R[1], -R[2], -R[3], R[4], R[5], -R[6], R[7], R[8]};
        AM_CHECK_MSG(maxdiff(M, want, 9) < 1e-12, "mirror case %d: %g", i, maxdiff(M, want, 9));
    }
    /* A bone along +Z: X = +X, Z = +Y (Blender's upright bone faces -Y with its Z). */
    double h[3] = {0, 0, 0}, t[3] = {0, 0, 2}, R[9];
    am_bone_frame_roll0(h, t, R);
    double want[9] = {1, 0, 0, 0, 0, 1, 0, 1, 0};
    want[5] = -1; /* Z axis = (0, -1, 0) */
    want[4] = 0;
    want[7] = 1;
    want[8] = 0;
    AM_CHECK_MSG(maxdiff(R, want, 9) < 1e-15, "+Z bone frame off by %g", maxdiff(R, want, 9));
}

static void frame_minus_y_branches(void)
{
    double h[3] = {1, 2, 3}, R[9];
    /* Exactly -Y: the fixed frame. */
    double t[3] = {1, 1.5, 3};
    am_bone_frame_roll0(h, t, R);
    const double fixed[9] = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
    AM_CHECK(maxdiff(R, fixed, 9) == 0.0);
    /* x^2 + z^2 below 6.25e-8: still the fixed frame, Y forced to -Y. */
    double t2[3] = {1 + 1e-5, 1.0, 3 + 1e-5};
    am_bone_frame_roll0(h, t2, R);
    AM_CHECK(maxdiff(R, fixed, 9) == 0.0);
    /* theta <= 6.1e-3 but x^2 + z^2 above 6.25e-8: theta comes from the series. */
    double n[3] = {0.01, 0.0, 0.02};
    n[1] = -sqrt(1.0 - n[0] * n[0] - n[2] * n[2]);
    double t3[3] = {h[0] + 0.5 * n[0], h[1] + 0.5 * n[1], h[2] + 0.5 * n[2]};
    am_bone_frame_roll0(h, t3, R);
    double d[3];
    am_vec3_sub(t3, h, d);
    am_vec3_normalize(d, d);
    double x = d[0], z = d[2], tt = x * x + z * z, th = tt / 2 + tt * tt / 8;
    double want[9] = {1 - x * x / th, x, -x * z / th, -x, d[1], -z, -x * z / th, z, 1 - z * z / th};
    AM_CHECK_MSG(maxdiff(R, want, 9) < 1e-12, "series branch off by %g", maxdiff(R, want, 9));
    check_frame(h, t3, 1e-4);
    /* Just above the threshold the direct formula applies. */
    double t4[3] = {h[0], h[1] - 1.0, h[2] + 0.2};
    check_frame(h, t4, 1e-12);
}

/* ---- FK ---- */

static void rest_fk_matches_joints(void)
{
    trig r;
    tr_default(&r);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    size_t B = rig->bone_count, J = rig->joint_count;
    double pose[16 * 8], joints[3 * 11], euler[3 * 8] = {0}, q[4] = {1, 0, 0, 0};
    double heads[3 * 8], tails[3 * 8];
    am_rig_fk(rig, rig->joint_rest + 3 * (size_t)rig->head_joint[0], q, euler, pose);
    am_rig_keypoints(rig, pose, joints);
    AM_CHECK_MSG(maxdiff(joints, rig->joint_rest, 3 * J) < 1e-12, "rest FK off by %g",
                 maxdiff(joints, rig->joint_rest, 3 * J));
    AM_CHECK(maxdiff(pose, rig->rest_mat, 16 * B) < 1e-12);
    am_rig_bone_ends(rig, pose, heads, tails);
    for (size_t b = 0; b < B; b++) {
        AM_CHECK(maxdiff(heads + 3 * b, rig->joint_rest + 3 * (size_t)rig->head_joint[b], 3) < 1e-12);
        AM_CHECK(maxdiff(tails + 3 * b, rig->joint_rest + 3 * (size_t)rig->tail_joint[b], 3) < 1e-12);
    }
    am_rig_bone_ends(rig, pose, NULL, tails);
    am_rig_bone_ends(rig, pose, heads, NULL);
    am_rig_rest_pose(rig, pose);
    AM_CHECK(maxdiff(pose, rig->rest_mat, 16 * B) == 0.0);
    am_rig_keypoints(rig, pose, joints);
    AM_CHECK(maxdiff(joints, rig->joint_rest, 3 * J) < 1e-12);
    /* Offsets use the true inverse. */
    for (size_t b = 0; b < B; b++) {
        double P[16], I[16];
        am_mat4_mul(rig->rest_mat + 16 * b, rig->rest_inv + 16 * b, P);
        am_mat4_identity(I);
        AM_CHECK(maxdiff(P, I, 16) < 1e-14);
    }
    AM_CHECK(maxdiff(rig->offset, rig->rest_mat, 16) == 0.0);
    am_rig_free(rig);
}

static void keypoint_rules(void)
{
    trig r;
    tr_default(&r);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    /* root: head of the root bone; shoulder_L: head of an unconnected child; paw_L: a tail. */
    int j = am_rig_find_joint(rig, "root");
    AM_CHECK(rig->kp_bone[j] == 0 && rig->kp_is_tail[j] == 0);
    j = am_rig_find_joint(rig, "shoulder_L");
    AM_CHECK(rig->kp_bone[j] == am_rig_find_bone(rig, "upperarm_L") && !rig->kp_is_tail[j]);
    j = am_rig_find_joint(rig, "elbow_L");
    AM_CHECK(rig->kp_bone[j] == am_rig_find_bone(rig, "upperarm_L") && rig->kp_is_tail[j]);
    j = am_rig_find_joint(rig, "fwd");
    AM_CHECK(rig->kp_bone[j] == am_rig_find_bone(rig, "nose_fwd") && rig->kp_is_tail[j]);
    am_rig_free(rig);
}

static void limits_stem_and_mirror(void)
{
    trig r;
    tr_default(&r);
    tr_bone(&r, "forearm", "elbow_L", "head", "upperarm_L"); /* unsided, named as the stem */
    const double stem[6] = {-150, 10, -20, 30, -10, 25};
    const double exact[6] = {-1, 1, -2, 2, -3, 3};
    tr_limit(&r, "forearm", stem);
    tr_limit(&r, "upperarm_L", exact);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    int fl = am_rig_find_bone(rig, "forearm_L"), fr = am_rig_find_bone(rig, "forearm_R");
    int fu = am_rig_find_bone(rig, "forearm"), ul = am_rig_find_bone(rig, "upperarm_L");
    int ur = am_rig_find_bone(rig, "upperarm_R");
    const double want_l[6] = {-150, 10, -20, 30, -10, 25};
    const double want_r[6] = {-150, 10, -30, 20, -25, 10};
    double got[6];
    AM_CHECK(rig->has_limit[fl] && rig->has_limit[fr] && rig->has_limit[fu] && rig->has_limit[ul]);
    AM_CHECK(!rig->has_limit[ur] && !rig->has_limit[0]);
    for (int i = 0; i < 6; i++) got[i] = AM_DEG(rig->limits[6 * (size_t)fl + (size_t)i]);
    AM_CHECK(maxdiff(got, want_l, 6) < 1e-12);
    for (int i = 0; i < 6; i++) got[i] = AM_DEG(rig->limits[6 * (size_t)fu + (size_t)i]);
    AM_CHECK(maxdiff(got, want_l, 6) < 1e-12);
    for (int i = 0; i < 6; i++) got[i] = AM_DEG(rig->limits[6 * (size_t)fr + (size_t)i]);
    AM_CHECK_MSG(maxdiff(got, want_r, 6) < 1e-12, "right side not mirrored");
    for (int i = 0; i < 6; i++) got[i] = AM_DEG(rig->limits[6 * (size_t)ul + (size_t)i]);
    AM_CHECK(maxdiff(got, exact, 6) < 1e-12);
    /* A free bone's range is +-pi. */
    AM_CHECK_NEAR(rig->limits[6 * (size_t)ur], -AM_PI, 0.0);
    AM_CHECK_NEAR(rig->limits[6 * (size_t)ur + 5], AM_PI, 0.0);
    /* Clamping. */
    double e[3] = {AM_RAD(20), AM_RAD(-25), AM_RAD(0)};
    am_rig_clamp_euler(rig, (size_t)fr, e);
    AM_CHECK_NEAR(e[0], AM_RAD(10), 1e-15);
    AM_CHECK_NEAR(e[1], AM_RAD(-25), 1e-15);
    AM_CHECK_NEAR(e[2], 0.0, 0.0);
    e[1] = AM_RAD(-40);
    e[2] = AM_RAD(-90);
    am_rig_clamp_euler(rig, (size_t)fr, e);
    AM_CHECK_NEAR(e[1], AM_RAD(-30), 1e-15);
    AM_CHECK_NEAR(e[2], AM_RAD(-25), 1e-15);
    double f[3] = {5, -5, 5};
    am_rig_clamp_euler(rig, (size_t)ur, f);
    AM_CHECK(f[0] == 5 && f[1] == -5 && f[2] == 5);
    am_rig_free(rig);

    /* An exact key beats the stem, for the right side too (no mirroring of exact keys). */
    tr_default(&r);
    tr_limit(&r, "forearm", stem);
    tr_limit(&r, "forearm_R", exact);
    rig = tr_build(&r);
    if (!rig) return;
    fr = am_rig_find_bone(rig, "forearm_R");
    for (int i = 0; i < 6; i++) got[i] = AM_DEG(rig->limits[6 * (size_t)fr + (size_t)i]);
    AM_CHECK(maxdiff(got, exact, 6) < 1e-12);
    am_rig_free(rig);
}

/* Independent FK: recursion by names over the file-order description, Gauss-Jordan inverse,
 * Euler from axis-angle quaternions. */
typedef struct naive_ctx {
    const trig *r;
    const double *euler_by_file; /* [B][3] in file order */
    double trans[3], rq[4];
} naive_ctx;

static int naive_inverse(const double A[16], double out[16])
{
    double m[4][8];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            m[i][j] = A[i * 4 + j];
            m[i][4 + j] = i == j;
        }
    }
    for (int c = 0; c < 4; c++) {
        int p = c;
        for (int i = c + 1; i < 4; i++) {
            if (fabs(m[i][c]) > fabs(m[p][c])) p = i;
        }
        if (m[p][c] == 0.0) return 0;
        for (int j = 0; j < 8; j++) {
            double t = m[c][j];
            m[c][j] = m[p][j];
            m[p][j] = t;
        }
        double k = 1.0 / m[c][c];
        for (int j = 0; j < 8; j++) m[c][j] *= k;
        for (int i = 0; i < 4; i++) {
            if (i == c) continue;
            double f = m[i][c];
            for (int j = 0; j < 8; j++) m[i][j] -= f * m[c][j];
        }
    }
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) out[i * 4 + j] = m[i][4 + j];
    }
    return 1;
}

static size_t naive_find(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0) return i;
    }
    return SIZE_MAX;
}

static void naive_rest(const trig *r, size_t f, double M[16])
{
    const double *h = r->jp + 3 * naive_find(r->jn, r->nj, r->bh[f]);
    const double *t = r->jp + 3 * naive_find(r->jn, r->nj, r->bt[f]);
    double R[9];
    am_bone_frame_roll0(h, t, R);
    am_mat4_from_rt(R, h, M);
}

static void naive_pose(const naive_ctx *c, size_t f, double P[16])
{
    const trig *r = c->r;
    double Mb[16];
    naive_rest(r, f, Mb);
    if (!r->bp[f]) {
        double Q[9], Rr[9], R[9];
        am_quat_to_mat3(c->rq, Q);
        am_mat4_get_rot(Mb, Rr);
        am_mat3_mul(Q, Rr, R);
        am_mat4_from_rt(R, c->trans, P);
        return;
    }
    size_t pf = naive_find(r->bn, r->nb, r->bp[f]);
    double Pp[16], Mp[16], Mpi[16], L[16], T[16];
    naive_pose(c, pf, Pp);
    naive_rest(r, pf, Mp);
    naive_inverse(Mp, Mpi);
    const double *e = c->euler_by_file + 3 * f;
    double ax[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, qx[4], qy[4], qz[4], q[4], R[9];
    am_quat_from_axis_angle(ax[0], e[0], qx);
    am_quat_from_axis_angle(ax[1], e[1], qy);
    am_quat_from_axis_angle(ax[2], e[2], qz);
    am_quat_mul(qy, qx, q);
    am_quat_mul(qz, q, q);
    am_quat_to_mat3(q, R);
    double zero[3] = {0, 0, 0};
    am_mat4_from_rt(R, zero, L);
    am_mat4_mul(Mpi, Mb, T);
    am_mat4_mul(T, L, T);
    am_mat4_mul(Pp, T, P);
}

static void naive_joint(const naive_ctx *c, size_t j, double out[3])
{
    const trig *r = c->r;
    const char *name = r->jn[j];
    size_t f = naive_find(r->bt, r->nb, name);
    int tail = f != SIZE_MAX;
    if (!tail) f = naive_find(r->bh, r->nb, name);
    double P[16];
    naive_pose(c, f, P);
    double len = am_vec3_dist(r->jp + 3 * naive_find(r->jn, r->nj, r->bh[f]),
                              r->jp + 3 * naive_find(r->jn, r->nj, r->bt[f]));
    double local[3] = {0, tail ? len : 0, 0};
    am_mat4_mul_point(P, local, out);
}

/* A random tree of n bones: joint 0 the root head, bone i ends at joint i + 1. A deep main
 * chain with side branches, so that FK depth exceeds any fixed cache. */
static char g_names[2][TR_MAX][24];

static void tr_random_tree(trig *r, size_t n)
{
    memset(r, 0, sizeof *r);
    for (size_t j = 0; j <= n; j++) {
        snprintf(g_names[0][j], sizeof g_names[0][j], "j%zu", j);
        r->jn[j] = g_names[0][j];
    }
    r->nj = n + 1;
    am_vec3_set(r->jp, 0, 0, 1);
    for (size_t i = 0; i < n; i++) {
        snprintf(g_names[1][i], sizeof g_names[1][i], "b%zu", i);
        size_t parent = i - 1;
        if (i == 0) {
            parent = SIZE_MAX;
        } else if (i % 7 == 3) {
            parent = (size_t)(ami_rand01() * (double)i); /* a side branch */
        } else if (i % 7 == 4 && i >= 2) {
            parent = i - 2; /* the main chain skips the side branch */
        }
        size_t head = parent == SIZE_MAX ? 0 : parent + 1;
        double dir[3] = {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
        am_vec3_normalize(dir, dir);
        am_vec3_madd(r->jp + 3 * head, ami_rand_range(0.05, 0.2), dir, r->jp + 3 * (i + 1));
        r->bn[i] = g_names[1][i];
        r->bh[i] = r->jn[head];
        r->bt[i] = r->jn[i + 1];
        r->bp[i] = parent == SIZE_MAX ? NULL : g_names[1][parent];
    }
    r->nb = n;
}

static void fk_compare_naive(const trig *r, int poses)
{
    am_rig *rig = tr_build(r);
    if (!rig) return;
    size_t B = rig->bone_count, J = rig->joint_count;
    double *euler = am_alloc_array(B * 3, sizeof *euler);
    double *euler_file = am_alloc_array(B * 3, sizeof *euler_file);
    double *pose = am_alloc_array(B * 16, sizeof *pose);
    double *joints = am_alloc_array(J * 3, sizeof *joints);
    AM_CHECK(euler && euler_file && pose && joints);
    if (!euler || !euler_file || !pose || !joints) goto done;
    am_test_diff diff = {0};
    for (int t = 0; t < poses; t++) {
        naive_ctx c = {r, euler_file, {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(0, 2)}, {0}};
        double q[4] = {ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
        am_quat_normalize(q, c.rq);
        for (size_t f = 0; f < B; f++) {
            for (int k = 0; k < 3; k++) euler_file[3 * f + (size_t)k] = ami_rand_range(-2, 2);
            int b = am_rig_find_bone(rig, r->bn[f]);
            memcpy(euler + 3 * (size_t)b, euler_file + 3 * f, 3 * sizeof *euler);
        }
        am_rig_fk(rig, c.trans, c.rq, euler, pose);
        am_rig_keypoints(rig, pose, joints);
        for (size_t j = 0; j < J; j++) {
            double want[3];
            naive_joint(&c, j, want);
            for (int k = 0; k < 3; k++) am_test_diff_add(&diff, joints[3 * j + (size_t)k], want[k]);
        }
    }
    AM_CHECK_MSG(diff.max < 1e-12, "FK vs naive: count %zu mean %g max %g", diff.count,
                 am_test_diff_mean(&diff), diff.max);
done:
    am_free(euler);
    am_free(euler_file);
    am_free(pose);
    am_free(joints);
    am_rig_free(rig);
}

static void fk_matches_naive_on_random_poses(void)
{
    trig r;
    tr_default(&r);
    fk_compare_naive(&r, 50);
    tr_random_tree(&r, 40);
    fk_compare_naive(&r, 5);
}

static void fk_rot_matches_fk_euler(void)
{
    trig r;
    tr_default(&r);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    double euler[3 * 8], rot[9 * 8], p1[16 * 8], p2[16 * 8];
    double tr[3] = {0.3, -0.2, 0.9}, q[4] = {0.9, 0.1, -0.3, 0.2};
    am_quat_normalize(q, q);
    for (int i = 0; i < 24; i++) euler[i] = ami_rand_range(-3, 3);
    for (size_t b = 0; b < 8; b++) am_euler_xyz_to_mat3(euler + 3 * b, rot + 9 * b);
    am_rig_fk(rig, tr, q, euler, p1);
    am_rig_fk_rot(rig, tr, q, rot, p2);
    AM_CHECK(maxdiff(p1, p2, 16 * 8) == 0.0);
    /* The root's entry is ignored; root_quat rotates the rest orientation in world space. */
    double e0[3] = {1, 2, 3};
    memcpy(euler, e0, sizeof e0);
    am_rig_fk(rig, tr, q, euler, p2);
    AM_CHECK(maxdiff(p1, p2, 16 * 8) == 0.0);
    double Q[9], Rw[9], R0[9];
    am_quat_to_mat3(q, Q);
    am_mat3_mul(Q, rig->rest_rot, Rw);
    am_mat4_get_rot(p1, R0);
    AM_CHECK(maxdiff(Rw, R0, 9) < 1e-15);
    AM_CHECK(p1[3] == tr[0] && p1[7] == tr[1] && p1[11] == tr[2]);
    am_rig_free(rig);
}

static void fk_clip_handles_many_bones(void)
{
    static trig r;
    tr_random_tree(&r, 300);
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    size_t B = rig->bone_count, J = rig->joint_count, T = 4;
    am_motion mo = {0};
    mo.frame_count = T;
    mo.bone_count = B;
    mo.fps = 30;
    mo.trans = am_alloc_array(T * 3, sizeof(double));
    mo.root_quat = am_alloc_array(T * 4, sizeof(double));
    mo.euler = am_alloc_array(T * B * 3, sizeof(double));
    double *joints = am_alloc_array(T * J * 3, sizeof(double));
    double *want = am_alloc_array(J * 3, sizeof(double));
    double *pose = am_alloc_array(B * 16, sizeof(double));
    AM_CHECK(mo.trans && mo.root_quat && mo.euler && joints && want && pose);
    if (mo.trans && mo.root_quat && mo.euler && joints && want && pose) {
        for (size_t t = 0; t < T; t++) {
            double q[4] = {1, ami_rand_range(-1, 1), ami_rand_range(-1, 1), ami_rand_range(-1, 1)};
            am_quat_normalize(q, mo.root_quat + 4 * t);
            am_vec3_set(mo.trans + 3 * t, ami_rand_range(-1, 1), ami_rand_range(-1, 1), 1);
            for (size_t i = 0; i < B * 3; i++) mo.euler[t * B * 3 + i] = t ? ami_rand_range(-0.5, 0.5) : 0.0;
        }
        am_vec3_set(mo.trans, 0, 0, 1);
        am_quat_identity(mo.root_quat);
        am_rig_fk_clip(rig, &mo, joints);
        AM_CHECK_MSG(maxdiff(joints, rig->joint_rest, J * 3) < 1e-12, "rest frame off by %g",
                     maxdiff(joints, rig->joint_rest, J * 3));
        double worst = 0.0;
        for (size_t t = 0; t < T; t++) {
            am_rig_fk(rig, mo.trans + 3 * t, mo.root_quat + 4 * t, mo.euler + t * B * 3, pose);
            am_rig_keypoints(rig, pose, want);
            worst = fmax(worst, maxdiff(joints + t * J * 3, want, J * 3));
        }
        AM_CHECK_MSG(worst < 1e-12, "fk_clip vs fk: %g", worst);
        /* Depth beyond 128 is really exercised. */
        size_t depth = 0;
        for (size_t b = 0; b < B; b++) {
            size_t d = 0;
            for (int32_t p = rig->parent[b]; p >= 0; p = rig->parent[p]) d++;
            if (d > depth) depth = d;
        }
        AM_CHECK(depth > 128);
    }
    am_free(mo.trans);
    am_free(mo.root_quat);
    am_free(mo.euler);
    am_free(joints);
    am_free(want);
    am_free(pose);
    am_rig_free(rig);
}

static void extra_json_copied(void)
{
    trig r;
    tr_default(&r);
    char extra[] = "{\"skin\": \"skin.npz\"}";
    r.extra = extra;
    am_rig *rig = tr_build(&r);
    if (!rig) return;
    extra[2] = 'X'; /* the rig owns its copy */
    AM_CHECK(rig->extra_json && strcmp(rig->extra_json, "{\"skin\": \"skin.npz\"}") == 0);
    am_rig_free(rig);
}

#define AM_TESTS(X)                                                                             \
    X(build_accepts_default) X(build_rejects_empty) X(build_rejects_unknown_names)              \
    X(build_rejects_duplicates) X(build_rejects_bad_roots) X(build_rejects_cycles)              \
    X(build_rejects_degenerate_and_nonfinite) X(build_rejects_unused_joint)                     \
    X(build_rejects_bad_limits) X(build_survives_allocation_failures)                           \
    X(bones_sorted_parents_first_from_shuffle) X(find_bone_and_joint)                           \
    X(frames_y_along_bone_and_mirror) X(frame_minus_y_branches) X(rest_fk_matches_joints)       \
    X(keypoint_rules) X(limits_stem_and_mirror) X(fk_matches_naive_on_random_poses)             \
    X(fk_rot_matches_fk_euler) X(fk_clip_handles_many_bones) X(extra_json_copied)
AM_TEST_MAIN(AM_TESTS)
