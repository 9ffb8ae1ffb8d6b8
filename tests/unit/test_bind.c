/* Sparse Cholesky, OBJ reading and bone heat on small known cases. */
#include <math.h>
#include <string.h>

#include "am_test.h"
#include "anymove/bind.h"
#include "anymove/opt.h"

static void sparse_cholesky_solves_laplacian_plus_diagonal(void)
{
    /* a path graph Laplacian + I, both triangles given and repeats summed: x from a known solution */
    enum { N = 50 };
    int32_t r[4 * N], c[4 * N];
    double v[4 * N], x[2 * N], want[N];
    size_t k = 0;
    for (int i = 0; i < N; i++) r[k] = c[k] = i, v[k++] = 1.0;
    for (int i = 0; i + 1 < N; i++) {
        r[k] = i, c[k] = i, v[k++] = 1.0;
        r[k] = i + 1, c[k] = i + 1, v[k++] = 1.0;
        r[k] = i, c[k] = i + 1, v[k++] = -1.0; /* upper triangle: mirrored */
    }
    for (int i = 0; i < N; i++) want[i] = sin(0.3 * i);
    for (int i = 0; i < N; i++) {
        double deg = (i > 0) + (i + 1 < N);
        x[i] = (1 + deg) * want[i] - (i > 0 ? want[i - 1] : 0) - (i + 1 < N ? want[i + 1] : 0);
        x[N + i] = 2 * x[i];
    }
    am_sparse_chol *f = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_sparse_cholesky(N, k, r, c, v, &f, &err), &err);
    AM_CHECK_OK(am_sparse_cholesky_solve(f, 2, x, &err), &err);
    for (int i = 0; i < N; i++) {
        AM_CHECK_NEAR(x[i], want[i], 1e-12);
        AM_CHECK_NEAR(x[N + i], 2 * want[i], 1e-12);
    }
    am_sparse_cholesky_free(f);
    int32_t r2[2] = {0, 1}, c2[2] = {0, 1};
    double bad[2] = {1, -1};
    AM_CHECK_STATUS(am_sparse_cholesky(2, 2, r2, c2, bad, &f, &err), AM_E_DEGENERATE);
    int32_t out[1] = {5};
    AM_CHECK_STATUS(am_sparse_cholesky(2, 1, out, c2, bad, &f, &err), AM_E_VALUE);
}

static void obj_reads_polygons_and_refuses_garbage(void)
{
    static const char ok[] = "# a quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nf 1/1 2/1 3/1 -1/1\n";
    am_mesh *m = NULL;
    am_error err = {0};
    am_obj_opts zup = {.z_up = true};
    AM_CHECK_OK(am_obj_read_mem(ok, strlen(ok), "q.obj", &zup, &m, &err), &err);
    AM_CHECK(m->vertex_count == 4 && m->triangle_count == 2);
    AM_CHECK(m->triangles[3] == 0 && m->triangles[4] == 2 && m->triangles[5] == 3);
    am_mesh_free(m);
    /* v/vt/vn triples, v//vn and negative vt/vn indices are checked and give the position index */
    static const char tri[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0 0\nvn 0 0 1\n"
                              "f 1/1/1 2/-1/-1 3//1\nf -3/2 -2/-2 -1/1\n";
    AM_CHECK_OK(am_obj_read_mem(tri, strlen(tri), "t.obj", &zup, &m, &err), &err);
    AM_CHECK(m->triangle_count == 2 && m->triangles[2] == 2 && m->triangles[3] == 0 && m->triangles[5] == 2);
    am_mesh_free(m);
    /* Y up by default: file (x, y, z) is world (x, -z, y) */
    static const char one[] = "v 1 2 3\n";
    AM_CHECK_OK(am_obj_read_mem(one, strlen(one), "p.obj", NULL, &m, &err), &err);
    AM_CHECK(m->positions[0] == 1.0f && m->positions[1] == -3.0f && m->positions[2] == 2.0f);
    am_mesh_free(m);
    static const struct {
        const char *text;
        am_status want;
        uint32_t line;
    } bad[] = {{"v 0 0\n", AM_E_SYNTAX, 1}, {"v 0 0 0\nf 1 2 3\n", AM_E_VALUE, 2}, {"v 0 0 0\nf 1 1\n", AM_E_SYNTAX, 2},
               {"v 0 0 inf\n", AM_E_NONFINITE, 1}, {"# nothing\n", AM_E_EMPTY, 0}, {"v 0 0 0\nf 1 x 1\n", AM_E_SYNTAX, 2},
               /* texture coordinate / normal indices that name no `vt`/`vn` line, a NaN uv, a bad slash form */
               {"v 0 0 0\nvt 0 0\nf 1/2 1/1 1/1\n", AM_E_VALUE, 3}, {"v 0 0 0\nf 1/1 1/1 1/1\n", AM_E_VALUE, 2},
               {"v 0 0 0\nvt 0 0\nf 1/-2 1/1 1/1\n", AM_E_VALUE, 3}, {"v 0 0 0\nvn 0 0 1\nf 1//2 1//1 1//1\n", AM_E_VALUE, 3},
               {"v 0 0 0\nvt nan 0\n", AM_E_NONFINITE, 2}, {"v 0 0 0\nvn 0 1\n", AM_E_SYNTAX, 2},
               {"v 0 0 0\nvt 0 0\nf 1/1/ 1/1 1/1\n", AM_E_SYNTAX, 3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_status s = am_obj_read_mem(bad[i].text, strlen(bad[i].text), "bad.obj", NULL, &m, &err);
        AM_CHECK_MSG(s == bad[i].want && (bad[i].line == 0 || err.line == bad[i].line),
                     "case %zu: %s at line %u", i, am_status_name(s), err.line);
        AM_CHECK(m == NULL);
    }
}

/* A closed box 2 m along -Y (a tube of NY rings of NC, capped) and its two-bone chain. */
enum { BOX_NY = 21, BOX_NC = 8, BOX_V = BOX_NY * BOX_NC + 2, BOX_F = (BOX_NY - 1) * BOX_NC * 2 + BOX_NC * 2 };

static void box_mesh(float *pos, int32_t *tri, size_t *vn, size_t *fn)
{
    enum { NY = BOX_NY, NC = BOX_NC };
    size_t v = 0, f = 0;
    for (int y = 0; y < NY; y++)
        for (int k = 0; k < NC; k++) {
            double a = 2 * 3.14159265358979 * k / NC;
            pos[v * 3] = (float)(0.2 * cos(a)), pos[v * 3 + 1] = (float)(-2.0 * y / (NY - 1)), pos[v * 3 + 2] = (float)(0.5 + 0.2 * sin(a));
            v++;
        }
    for (int y = 0; y + 1 < NY; y++)
        for (int k = 0; k < NC; k++) {
            int32_t a = y * NC + k, b = y * NC + (k + 1) % NC, c = a + NC, d = b + NC;
            int32_t t[6] = {a, c, b, b, c, d};
            memcpy(tri + f * 3, t, sizeof t);
            f += 2;
        }
    /* caps */
    int32_t c0 = (int32_t)v, c1 = (int32_t)v + 1;
    pos[v * 3] = 0, pos[v * 3 + 1] = 0, pos[v * 3 + 2] = 0.5f, v++;
    pos[v * 3] = 0, pos[v * 3 + 1] = -2, pos[v * 3 + 2] = 0.5f, v++;
    for (int k = 0; k < NC; k++) {
        int32_t t[6] = {c0, k, (k + 1) % NC, c1, (NY - 1) * NC + (k + 1) % NC, (NY - 1) * NC + k};
        memcpy(tri + f * 3, t, sizeof t);
        f += 2;
    }
    *vn = v, *fn = f;
}

static am_rig *box_rig(void)
{
    static const char *const jn[] = {"a", "b", "c"}, *const bn[] = {"back", "front"}, *const bh[] = {"a", "b"},
                             *const bt[] = {"b", "c"}, *const bp[] = {NULL, "back"};
    double jp[9] = {0, -0.05, 0.5, 0, -1.0, 0.5, 0, -1.95, 0.5};
    am_rig_desc d = {.joint_count = 3, .joint_names = jn, .joint_pos = jp, .bone_count = 2, .bone_names = bn,
                     .bone_head = bh, .bone_tail = bt, .bone_parent = bp};
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_build(&d, &rig, &err), &err);
    return rig;
}

static double front_weight(const am_bind_result *r, size_t i)
{
    double w = 0;
    for (int k = 0; k < 4; k++) w += r->bone_index[i * 4 + k] == 1 ? r->weight[i * 4 + k] : 0;
    return w;
}

/* The weights of a mesh on the box's rig, each vertex's four summing to 1 (checked), or NULL. */
static am_bind_result *bind_on_box_rig(float *pos, size_t v, int32_t *tri, size_t f)
{
    am_mesh m = {.vertex_count = v, .triangle_count = f, .positions = pos, .triangles = tri};
    am_rig *rig = box_rig();
    am_error err = {0};
    am_bind_result *r = NULL;
    AM_CHECK_OK(am_bind_weights(&m, rig, NULL, &r, &err), &err);
    am_rig_free(rig);
    for (size_t i = 0; r && i < v; i++) {
        float sum = r->weight[i * 4] + r->weight[i * 4 + 1] + r->weight[i * 4 + 2] + r->weight[i * 4 + 3];
        AM_CHECK_NEAR(sum, 1.0, 1e-6);
    }
    return r;
}

/* A closed box 2 m along -Y on a two-bone chain: the front half follows the front bone. */
static void bone_heat_splits_a_box_between_two_bones(void)
{
    am_mesh m = {0};
    float pos[BOX_V * 3];
    int32_t tri[BOX_F * 3];
    size_t v = 0, f = 0;
    box_mesh(pos, tri, &v, &f);
    m.vertex_count = v, m.triangle_count = f, m.positions = pos, m.triangles = tri;
    am_rig *rig = box_rig();
    am_error err = {0};
    am_bind_result *r = NULL;
    AM_CHECK_OK(am_bind_weights(&m, rig, NULL, &r, &err), &err);
    for (size_t i = 0; i < v; i++) {
        float sum = r->weight[i * 4] + r->weight[i * 4 + 1] + r->weight[i * 4 + 2] + r->weight[i * 4 + 3];
        AM_CHECK_NEAR(sum, 1.0, 1e-6);
        double y = pos[i * 3 + 1], w_front = front_weight(r, i);
        if (y < -1.4) AM_CHECK_MSG(w_front > 0.9, "vertex %zu at y %.2f: front %.3f", i, y, w_front);
        if (y > -0.6) AM_CHECK_MSG(w_front < 0.1, "vertex %zu at y %.2f: front %.3f", i, y, w_front);
    }
    AM_CHECK(r->component_count == 1 && r->blind_count == 0);
    am_bind_result_free(r);
    /* rigid: one bone each */
    am_bind_opts rigid = {.flags = AM_BIND_RIGID};
    AM_CHECK_OK(am_bind_weights(&m, rig, &rigid, &r, &err), &err);
    for (size_t i = 0; i < v; i++) AM_CHECK(r->weight[i * 4] == 1.0f && r->weight[i * 4 + 1] == 0.0f);
    am_bind_result_free(r);
    /* the rig 10 m away does not overlap */
    am_rig_scale(rig, 1.0);
    for (size_t j = 0; j < 3; j++) rig->joint_rest[j * 3] += 10;
    AM_CHECK_STATUS(am_bind_weights(&m, rig, NULL, &r, &err), AM_E_VALUE);
    am_rig_free(rig);
}

/* The box with a sliver: a vertex M pushed 25 um out of the middle of a 10 cm edge, the edge
 * split there and the gap closed by a fin triangle (cotangents about 2000, 2000, -1000). Its
 * cotangent form is positive semi-definite only through the balance of the three: clamped one by
 * one at 1000 it was indefinite and the factorisation failed (as on the Trex); scaled together it
 * stays a triangle's form, and the sliver's vertex follows its neighbours. */
static void bone_heat_survives_a_sliver_triangle(void)
{
    float pos[(BOX_V + 1) * 3];
    int32_t tri[(BOX_F + 2) * 3];
    size_t v = 0, f = 0;
    box_mesh(pos, tri, &v, &f);
    /* the edge a-c of ring 4 (y -0.4 to -0.5, on the back bone) at angle 0 (+x), in the
     * triangles (a, c, b) and (a, c', c) */
    int32_t a = 4 * BOX_NC, b = a + 1, c = a + BOX_NC, mid = (int32_t)v;
    double h = 0.1 / 4000;
    pos[v * 3] = (float)(0.2 + h), pos[v * 3 + 1] = -0.45f, pos[v * 3 + 2] = 0.5f;
    v++;
    size_t found = 0;
    for (size_t i = 0; i < f; i++) {
        int32_t *t = tri + i * 3;
        if (t[0] == a && t[1] == c && t[2] == b) {
            t[1] = mid; /* (a, M, b) */
            int32_t t2[3] = {mid, c, b}, fin[3] = {a, c, mid};
            memcpy(tri + f * 3, t2, sizeof t2);
            memcpy(tri + (f + 1) * 3, fin, sizeof fin);
            found++;
        }
    }
    AM_CHECK(found == 1);
    f += 2;
    am_bind_result *r = bind_on_box_rig(pos, v, tri, f);
    if (r) {
        AM_CHECK(r->welded_count == v && r->component_count == 1);
        /* M and the edge's ends, all at y -0.4 to -0.5, follow the back bone as the ring does */
        AM_CHECK_NEAR(front_weight(r, (size_t)mid), front_weight(r, (size_t)a), 0.02);
        AM_CHECK_MSG(front_weight(r, (size_t)mid) < 0.1, "sliver vertex: front %.3f", front_weight(r, (size_t)mid));
        AM_CHECK_NEAR(front_weight(r, (size_t)c), front_weight(r, (size_t)c + 1), 0.02);
    }
    am_bind_result_free(r);
}

/* The box as meshes come from exporters: cut in two at ring 10 (the ring's vertices doubled, the
 * halves meeting at coincident positions, as a UV seam splits a glTF), a fin triangle on an edge
 * of ring 4 (that edge in three triangles: non-manifold) and a detached tetrahedron beside the
 * front bone (a second piece, as an eye or a belt). The weld joins the halves, the pieces are
 * counted, and each part follows its bone: the copies exactly as their twins. */
static void bone_heat_welds_seams_and_takes_pieces_and_fins(void)
{
    enum { NS = BOX_NC, EXTRA = NS + 1 + 4 };
    float pos[(BOX_V + EXTRA) * 3];
    int32_t tri[(BOX_F + 1 + 4) * 3];
    size_t v = 0, f = 0;
    box_mesh(pos, tri, &v, &f);
    const size_t box_v = v, seam0 = v;
    /* the seam: ring 10's copies take its place in the row of quads between rings 10 and 11 */
    for (int k = 0; k < NS; k++, v++) memcpy(pos + v * 3, pos + (10 * BOX_NC + k) * 3, 3 * sizeof *pos);
    for (size_t i = 0; i < f; i++) {
        int32_t *t = tri + i * 3;
        bool row10 = true;
        for (int c = 0; c < 3; c++) row10 = row10 && t[c] >= 10 * BOX_NC && t[c] < 12 * BOX_NC;
        for (int c = 0; row10 && c < 3; c++)
            if (t[c] < 11 * BOX_NC) t[c] = (int32_t)seam0 + (t[c] - 10 * BOX_NC);
    }
    /* the fin: edge (a, c) of ring 4 at +x, a vertex 5 cm outside its middle */
    int32_t a = 4 * BOX_NC, c = a + BOX_NC, fin = (int32_t)v;
    pos[v * 3] = 0.25f, pos[v * 3 + 1] = -0.45f, pos[v * 3 + 2] = 0.5f, v++;
    memcpy(tri + f * 3, (int32_t[3]){a, c, fin}, 3 * sizeof *tri), f++;
    /* the tetrahedron, 30 cm outside the box at y -1.7 (the front bone's half) */
    int32_t t0 = (int32_t)v;
    float tet[4][3] = {{0.5f, -1.65f, 0.45f}, {0.6f, -1.75f, 0.45f}, {0.5f, -1.75f, 0.55f}, {0.45f, -1.7f, 0.45f}};
    for (int k = 0; k < 4; k++, v++) memcpy(pos + v * 3, tet[k], sizeof tet[k]);
    int32_t tt[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    for (int k = 0; k < 4; k++, f++)
        for (int j = 0; j < 3; j++) tri[f * 3 + (size_t)j] = t0 + tt[k][j];
    am_bind_result *r = bind_on_box_rig(pos, v, tri, f);
    if (r) {
        AM_CHECK_MSG(r->welded_count == v - NS, "welded %zu of %zu", r->welded_count, v);
        AM_CHECK_MSG(r->component_count == 2, "%zu pieces", r->component_count);
        for (int k = 0; k < NS; k++)
            AM_CHECK_NEAR(front_weight(r, seam0 + (size_t)k), front_weight(r, 10 * BOX_NC + (size_t)k), 1e-6);
        for (size_t i = 0; i < box_v; i++) {
            double y = pos[i * 3 + 1], w = front_weight(r, i);
            if (y < -1.4) AM_CHECK_MSG(w > 0.9, "vertex %zu at y %.2f: front %.3f", i, y, w);
            if (y > -0.6) AM_CHECK_MSG(w < 0.1, "vertex %zu at y %.2f: front %.3f", i, y, w);
        }
        AM_CHECK_MSG(front_weight(r, (size_t)fin) < 0.1, "fin: front %.3f", front_weight(r, (size_t)fin));
        for (int k = 0; k < 4; k++)
            AM_CHECK_MSG(front_weight(r, (size_t)(t0 + k)) > 0.9, "tetrahedron %d: front %.3f", k,
                         front_weight(r, (size_t)(t0 + k)));
    }
    am_bind_result_free(r);
}

#define AM_TESTS(X) X(sparse_cholesky_solves_laplacian_plus_diagonal) X(obj_reads_polygons_and_refuses_garbage) \
    X(bone_heat_splits_a_box_between_two_bones) X(bone_heat_survives_a_sliver_triangle) \
    X(bone_heat_welds_seams_and_takes_pieces_and_fins)
AM_TEST_MAIN(AM_TESTS)
