/* Cameras: Rodrigues both ways, projection Jacobians against finite differences for every
 * model, undistortion inverting distortion, the SPEC 3 views as orthographic cameras, the TOML
 * reader (valid documents, malformed ones with line and column, every prefix), and the
 * calibration files (anipose, Pose2Sim samples; write -> read exact; scale; warnings). */
#include "am_test.h"

#include "anymove/camera.h"
#include "anymove/math.h"
#include "capture/capture_internal.h"
#include "io/toml_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *read_all(const char *path, size_t *len)
{
    char *data = NULL;
    am_error err = {0};
    if (am_file_read(path, 0, &data, len, &err) != AM_OK) {
        char m[600];
        am_test_fail(__FILE__, __LINE__, "cannot read %s: %s", path, am_error_format(m, sizeof m, &err));
        return NULL;
    }
    return data;
}

static void rodrigues_round_trip(void)
{
    const double cases[][3] = {{0, 0, 0},       {1e-9, -2e-9, 3e-9}, {0.3, -0.2, 0.1},
                               {0, 0, 3.14159}, {AM_PI, 0, 0},       {-1.2, 2.0, 0.4}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double R[9], r[3], R2[9];
        am_rodrigues_to_mat3(cases[k], R);
        AM_CHECK_NEAR(am_mat3_det(R), 1.0, 1e-12);
        am_rodrigues_from_mat3(R, r);
        am_rodrigues_to_mat3(r, R2);
        for (int i = 0; i < 9; i++) AM_CHECK_NEAR(R[i], R2[i], 1e-12);
        /* Angles below pi come back as the same vector. */
        if (am_vec3_norm(cases[k]) < 3.0)
            for (int i = 0; i < 3; i++) AM_CHECK_NEAR(r[i], cases[k][i], 1e-12);
    }
    /* Against the closed form: 90 degrees about z maps x to y. */
    double R[9];
    am_rodrigues_to_mat3((const double[3]){0, 0, AM_PI / 2}, R);
    AM_CHECK_NEAR(R[3], 1.0, 1e-15);
    AM_CHECK_NEAR(R[1], -1.0, 1e-15);
}

static am_camera test_camera(am_camera_model model)
{
    am_camera c;
    am_camera_look_at(&c, "c", (const double[3]){2.0, -3.0, 1.5}, (const double[3]){0.1, 0.2, 0.6},
                      (const double[3]){0, 0, 1}, 640, 512, AM_RAD(70));
    c.model = model;
    c.K[1] = 0.5; /* skew, so it is exercised */
    if (model == AM_CAMERA_PINHOLE) {
        const double d[5] = {-0.3437, 0.1788, 0.001, -0.002, -0.0527};
        memcpy(c.dist, d, sizeof d);
    } else if (model == AM_CAMERA_FISHEYE) {
        const double d[4] = {0.05, -0.01, 0.002, -0.0005};
        memcpy(c.dist, d, sizeof d);
    } else {
        c.K[0] = c.K[4] = 200.0;
    }
    return c;
}

static void projection_jacobian_matches_differences(void)
{
    for (int m = 0; m < AM_CAMERA_MODEL_COUNT; m++) {
        am_camera c = test_camera((am_camera_model)m);
        const double pts[][3] = {{0.1, 0.2, 0.6}, {0.5, -0.3, 1.2}, {-0.4, 0.6, 0.1}};
        for (size_t k = 0; k < 3; k++) {
            double uv[2], J[6];
            AM_CHECK(am_camera_project(&c, pts[k], uv, J));
            for (int d = 0; d < 3; d++) {
                double Xp[3], Xm[3], up[2], um[2], h = 1e-6;
                memcpy(Xp, pts[k], sizeof Xp);
                memcpy(Xm, pts[k], sizeof Xm);
                Xp[d] += h;
                Xm[d] -= h;
                am_camera_project(&c, Xp, up, NULL);
                am_camera_project(&c, Xm, um, NULL);
                for (int i = 0; i < 2; i++) {
                    double fd = (up[i] - um[i]) / (2 * h);
                    AM_CHECK_MSG(fabs(fd - J[3 * i + d]) < 1e-4 * (1 + fabs(fd)), "model %d point %zu: dJ[%d][%d] %g vs %g",
                                 m, k, i, d, J[3 * i + d], fd);
                }
            }
        }
        /* Behind a perspective camera: not seen. */
        double ctr[3], ax[3], behind[3], uv[2];
        am_camera_centre(&c, ctr);
        am_camera_axis(&c, ax);
        am_vec3_madd(ctr, -1.0, ax, behind);
        AM_CHECK(am_camera_project(&c, behind, uv, NULL) == (m == AM_CAMERA_ORTHOGRAPHIC));
    }
}

static void distortion_jacobian_matches_differences(void)
{
    for (int m = 0; m < 2; m++) {
        am_camera c = test_camera((am_camera_model)m);
        const double abs_[][2] = {{0.0, 0.0}, {0.3, -0.2}, {-0.5, 0.4}, {1e-9, 2e-9}};
        for (size_t k = 0; k < 4; k++) {
            double o[2], D[4];
            am_camera_distort(&c, abs_[k], o, D);
            for (int d = 0; d < 2; d++) {
                double ap[2] = {abs_[k][0], abs_[k][1]}, am_[2] = {abs_[k][0], abs_[k][1]}, op[2], om[2], h = 1e-6;
                ap[d] += h;
                am_[d] -= h;
                am_camera_distort(&c, ap, op, NULL);
                am_camera_distort(&c, am_, om, NULL);
                for (int i = 0; i < 2; i++) AM_CHECK_NEAR(D[2 * i + d], (op[i] - om[i]) / (2 * h), 1e-6);
            }
        }
    }
}

static void undistort_inverts_projection(void)
{
    for (int m = 0; m < AM_CAMERA_MODEL_COUNT; m++) {
        am_camera c = test_camera((am_camera_model)m);
        size_t n = 0;
        for (double u = 0; u <= 640; u += 32)
            for (double v = 0; v <= 512; v += 32) {
                double ab[2], uv2[2], xc[3];
                if (!am_camera_undistort(&c, (const double[2]){u, v}, ab)) continue;
                n++;
                /* Re-project the ray's point at depth 2. */
                double X[3], Rt[9];
                xc[0] = 2 * ab[0], xc[1] = 2 * ab[1], xc[2] = 2;
                if (m == AM_CAMERA_ORTHOGRAPHIC) xc[0] = ab[0], xc[1] = ab[1];
                double d[3] = {xc[0] - c.t[0], xc[1] - c.t[1], xc[2] - c.t[2]};
                am_mat3_transpose(c.R, Rt);
                am_mat3_mul_vec3(Rt, d, X);
                am_camera_project(&c, X, uv2, NULL);
                AM_CHECK_MSG(fabs(uv2[0] - u) < 1e-6 && fabs(uv2[1] - v) < 1e-6, "model %d (%g,%g) -> (%g,%g)", m, u,
                             v, uv2[0], uv2[1]);
            }
        /* The mouse rig's k1 = -0.34 folds before the corners; everything else inverts. */
        AM_CHECK_MSG(n >= (m == AM_CAMERA_PINHOLE ? 250u : 289u), "model %d: %zu of 289 grid pixels inverted", m, n);
    }
    /* A pixel past the fold of the radial polynomial is refused, not given a wrong ray. */
    am_camera c = test_camera(AM_CAMERA_PINHOLE);
    c.dist[0] = -0.6;
    c.dist[1] = c.dist[2] = c.dist[3] = c.dist[4] = 0;
    double ab[2];
    AM_CHECK(!am_camera_undistort(&c, (const double[2]){-3000, -3000}, ab));
}

static void layout_views_are_orthographic_cameras(void)
{
    am_calib *cal = NULL;
    am_error err = {0};
    am_layout L;
    am_layout_default(&L);
    AM_CHECK_OK(am_cameras_from_layout(&L, &cal, &err), &err);
    if (!cal) return;
    const double X[3] = {0.12, -0.4, 0.33};
    double f[2], s[2], u[2];
    ami_project_front(&L, X, f);
    ami_project_side(&L, X, s);
    AM_CHECK(am_camera_project(&cal->cameras[0], X, u, NULL));
    AM_CHECK_NEAR(u[0], f[0], 1e-9);
    AM_CHECK_NEAR(u[1], f[1], 1e-9);
    AM_CHECK(am_camera_project(&cal->cameras[1], X, u, NULL));
    AM_CHECK_NEAR(u[0], s[0], 1e-9);
    AM_CHECK_NEAR(u[1], s[1], 1e-9);
    AM_CHECK(strcmp(cal->cameras[0].name, "front") == 0 && strcmp(cal->cameras[1].name, "side") == 0);
    am_calib_free(cal);
}

/* ---- TOML ---- */
static void toml_reads_every_value_kind(void)
{
    const char *doc =
        "# comment\n"
        "title = \"a \\\"q\\\" \\u00e9 \\U0001F600\"\n"
        "lit = 'C:\\path'\n"
        "ml = \"\"\"\nline1\\\n   line2\"\"\"\n"
        "mll = '''\nraw\\n'''\n"
        "ints = [1, +2, -3, 1_000, 0xff, 0o17, 0b101,]\n"
        "floats = [1.5, -2e3, 6.02E+23, inf, -inf, nan, +nan, 1_0.5]\n"
        "bools = [true, false]\n"
        "nested = [ [1, 2,], [ 3,\n  # inside\n 4 ],\n ]\n"
        "inline = {a = 1, b.c = \"x\"}\n"
        "\"quoted key\" = 7\n"
        "dotted.key = 8\r\n"
        "[t.u]  # header\n"
        "v = 9\n"
        "[[arr]]\nx = 1\n[[arr]]\nx = 2\n";
    ami_toml *t = NULL;
    am_error err = {0};
    AM_CHECK_OK(ami_toml_parse(doc, strlen(doc), "t.toml", &t, &err), &err);
    if (!t) return;
    const ami_toml *v = ami_toml_get(t, "title");
    AM_CHECK(v && v->kind == AMI_TOML_STRING && strcmp(v->str, "a \"q\" \xc3\xa9 \xf0\x9f\x98\x80") == 0);
    AM_CHECK(strcmp(ami_toml_get(t, "lit")->str, "C:\\path") == 0);
    AM_CHECK(strcmp(ami_toml_get(t, "ml")->str, "line1line2") == 0);
    AM_CHECK(strcmp(ami_toml_get(t, "mll")->str, "raw\\n") == 0);
    v = ami_toml_get(t, "ints");
    const int64_t ints[] = {1, 2, -3, 1000, 255, 15, 5};
    AM_CHECK(v && v->count == 7);
    for (size_t k = 0; v && k < 7; k++) AM_CHECK(v->items[k].kind == AMI_TOML_INT && v->items[k].i == ints[k]);
    v = ami_toml_get(t, "floats");
    AM_CHECK(v && v->count == 8 && v->items[1].f == -2000.0 && isinf(v->items[3].f) && v->items[4].f < 0 &&
             isnan(v->items[5].f) && v->items[7].f == 10.5);
    v = ami_toml_get(t, "nested");
    AM_CHECK(v && v->count == 2 && v->items[1].count == 2 && v->items[1].items[1].i == 4);
    v = ami_toml_get(t, "inline");
    AM_CHECK(v && ami_toml_get(v, "a")->i == 1 && strcmp(ami_toml_get(ami_toml_get(v, "b"), "c")->str, "x") == 0);
    AM_CHECK(ami_toml_get(t, "quoted key")->i == 7);
    AM_CHECK(ami_toml_get(ami_toml_get(t, "dotted"), "key")->i == 8);
    AM_CHECK(ami_toml_get(ami_toml_get(ami_toml_get(t, "t"), "u"), "v")->i == 9);
    v = ami_toml_get(t, "arr");
    AM_CHECK(v && v->kind == AMI_TOML_ARRAY && v->count == 2 && ami_toml_get(&v->items[1], "x")->i == 2);
    ami_toml_free(t);
}

static void toml_refuses_malformed_with_line_and_column(void)
{
    const struct {
        const char *text;
        am_status code;
        uint32_t line, col;
    } cases[] = {
        {"a = 1\nb = \n", AM_E_SYNTAX, 2, 5},
        {"a = 1\na = 2\n", AM_E_DUPLICATE, 2, 1},
        {"[x]\n[x]\n", AM_E_DUPLICATE, 2, 1},
        {"a = [1, 2\n", AM_E_SYNTAX, 2, 1},
        {"a = \"open\n", AM_E_SYNTAX, 1, 10},
        {"a = 1 2\n", AM_E_SYNTAX, 1, 7},
        {"a = 01\n", AM_E_SYNTAX, 1, 5},
        {"a = 1__0\n", AM_E_SYNTAX, 1, 5},
        {"a = 99999999999999999999\n", AM_E_VALUE, 1, 5},
        {"a = 1979-05-27\n", AM_E_UNSUPPORTED, 1, 5},
        {"a = \"\\q\"\n", AM_E_SYNTAX, 1, 6},
        {"a = \"\xff\"\n", AM_E_UTF8, 1, 6},
        {"a = 1\rb = 2\n", AM_E_SYNTAX, 1, 6},
        {"[a\n", AM_E_SYNTAX, 1, 3},
        {"a = {b = 1,}\n", AM_E_SYNTAX, 1, 12},
        {"a.b = 1\na = 2\n", AM_E_DUPLICATE, 2, 1},
        {"= 1\n", AM_E_SYNTAX, 1, 1},
        {"a = tru\n", AM_E_SYNTAX, 1, 5},
        {"a = \"\"\"x\n", AM_E_SYNTAX, 1, 5},
        {"a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
         AM_E_LIMIT, 1, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ami_toml *t = NULL;
        am_error err = {0};
        am_status s = ami_toml_parse(cases[k].text, strlen(cases[k].text), "bad.toml", &t, &err);
        AM_CHECK_MSG(s == cases[k].code, "case %zu: got %s, want %s (%s)", k, am_status_name(s),
                     am_status_name(cases[k].code), err.info);
        AM_CHECK_MSG(err.line == cases[k].line && (cases[k].col == 0 || err.col == cases[k].col),
                     "case %zu: at %u:%u, want %u:%u (%s)", k, err.line, err.col, cases[k].line, cases[k].col, err.info);
        AM_CHECK(strcmp(err.file, "bad.toml") == 0);
        AM_CHECK(t == NULL);
        ami_toml_free(t);
    }
}

/* ---- calibrations ---- */
static void calib_reads_the_samples(void)
{
    am_calib *cal = NULL;
    am_error err = {0};
    const char *p = am_test_shared("data/formats/anipose/calibration_7cam-allen-mouse.toml");
    AM_CHECK_OK(am_calib_load(p, NULL, &cal, &err), &err);
    if (cal) {
        AM_CHECK(cal->camera_count == 7);
        AM_CHECK(strcmp(cal->cameras[0].name, "cam088") == 0 && strcmp(cal->cameras[6].name, "cam746") == 0);
        AM_CHECK(cal->cameras[1].width == 1440 && cal->cameras[1].height == 1080);
        AM_CHECK_NEAR(cal->cameras[1].K[0], 1935.9928441823383, 1e-12);
        AM_CHECK_NEAR(cal->cameras[1].dist[0], -0.31335387778001184, 1e-17);
        AM_CHECK_NEAR(cal->cameras[1].t[2], 1478.8177605708502, 1e-12);
        AM_CHECK(cal->meta_count == 2 && strcmp(cal->meta[0].key, "adjusted") == 0 &&
                 strcmp(cal->meta[0].value, "true") == 0);
        /* Millimetres read as metres: the cameras spread over kilometres, and it says so. */
        am_scope sc;
        am_context ctx = {0};
        am_scope_enter(&sc, &ctx);
        size_t n = am_calib_check(cal);
        am_warning_list w = {0};
        am_scope_leave(&sc, &w);
        AM_CHECK(n == 1 && w.count == 1 && w.data[0].kind == AM_WARN_UNITS && strstr(w.data[0].text, "--scale 0.001"));
        am_warning_list_free(&w);
    }
    am_calib_free(cal);
    cal = NULL;
    am_calib_read_opts ro = {.scale = 0.001};
    AM_CHECK_OK(am_calib_load(p, &ro, &cal, &err), &err);
    if (cal) {
        AM_CHECK_NEAR(cal->cameras[1].t[2], 1.4788177605708502, 1e-15);
        am_scope sc;
        am_context ctx = {0};
        am_scope_enter(&sc, &ctx);
        AM_CHECK(am_calib_check(cal) == 0);
        am_scope_leave(&sc, NULL);
    }
    am_calib_free(cal);
    cal = NULL;
    AM_CHECK_OK(am_calib_load(am_test_shared("data/formats/pose2sim_calib/Sports2D_Calib_demo.toml"), NULL, &cal, &err),
                &err);
    if (cal) {
        AM_CHECK(cal->camera_count == 1 && strcmp(cal->cameras[0].name, "demo") == 0);
        AM_CHECK(cal->cameras[0].model == AM_CAMERA_PINHOLE && cal->cameras[0].width == 1768);
        AM_CHECK_NEAR(cal->cameras[0].rvec[0], 1.2082126924727719, 1e-16);
    }
    am_calib_free(cal);
    cal = NULL;
    AM_CHECK_OK(am_calib_load(am_test_shared("data/multiview/aniposelib_mouse_outdoor_12cam/"
                                             "calibration_right_4_10_2026_adjusted.toml"),
                              NULL, &cal, &err),
                &err);
    AM_CHECK(cal && cal->camera_count == 12);
    am_calib_free(cal);
}

static void calib_write_read_is_exact(void)
{
    am_calib *cal = NULL, *back = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_calib_create(3, &cal, &err), &err);
    if (!cal) return;
    for (int m = 0; m < 3; m++) {
        cal->cameras[m] = test_camera((am_camera_model)m);
        snprintf(cal->cameras[m].name, sizeof cal->cameras[m].name, "cam \"%d\"", m);
        cal->cameras[m].t[0] += 0.1 * m;
    }
    const char *path = "calib_roundtrip.toml";
    AM_CHECK_OK(am_calib_write(cal, path, &err), &err);
    AM_CHECK_OK(am_calib_load(path, NULL, &back, &err), &err);
    if (back) {
        AM_CHECK(back->camera_count == 3);
        for (size_t c = 0; c < 3 && back->camera_count == 3; c++) {
            const am_camera *a = &cal->cameras[c], *b = &back->cameras[c];
            AM_CHECK(strcmp(a->name, b->name) == 0 && a->model == b->model);
            AM_CHECK(memcmp(a->K, b->K, sizeof a->K) == 0 && memcmp(a->dist, b->dist, sizeof a->dist) == 0);
            AM_CHECK(memcmp(a->rvec, b->rvec, sizeof a->rvec) == 0 && memcmp(a->t, b->t, sizeof a->t) == 0);
        }
    }
    am_calib_free(cal);
    am_calib_free(back);
}

static void calib_refuses_bad_cameras(void)
{
    const char *head = "[cam_0]\nname = \"a\"\nsize = [640, 480]\n";
    const char *good = "matrix = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]\ndistortions = [0.1]\n"
                       "rotation = [0, 0, 0]\ntranslation = [0, 0, 1]\n";
    const struct {
        const char *body;
        am_status code;
        uint32_t line;
    } cases[] = {
        {"matrix = [[500, 0, 320], [0, nan, 240], [0, 0, 1]]\ndistortions = []\nrotation = [0, 0, 0]\n"
         "translation = [0, 0, 1]\n",
         AM_E_NONFINITE, 4},
        {"matrix = [[500, 0, 320], [0, 500, 240]]\nrotation = [0, 0, 0]\ntranslation = [0, 0, 1]\n", AM_E_SHAPE, 4},
        {"matrix = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]\nrotation = [0, 0]\ntranslation = [0, 0, 1]\n",
         AM_E_SHAPE, 5},
        {"matrix = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]\nrotation = [0, 0, 0]\n", AM_E_SCHEMA, 1},
        {"matrix = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]\nrotation = [0, 0, \"x\"]\ntranslation = [0, 0, 1]\n",
         AM_E_SCHEMA, 5},
        {"matrix = [[-500, 0, 320], [0, 500, 240], [0, 0, 1]]\nrotation = [0, 0, 0]\ntranslation = [0, 0, 1]\n",
         AM_E_VALUE, 4},
        {"matrix = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]\ndistortions = [1, 2, 3, 4, 5, 6]\n"
         "rotation = [0, 0, 0]\ntranslation = [0, 0, 1]\n",
         AM_E_SHAPE, 5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", head, cases[k].body);
        am_calib *cal = NULL;
        am_error err = {0};
        am_status s = am_calib_parse(text, strlen(text), "c.toml", NULL, &cal, &err);
        AM_CHECK_MSG(s == cases[k].code && err.line == cases[k].line, "case %zu: %s at line %u (%s)", k,
                     am_status_name(s), err.line, err.info);
        am_calib_free(cal);
    }
    char text[1024];
    snprintf(text, sizeof text, "%s%s[cam_1]\nname = \"a\"\nsize = [640, 480]\n%s", head, good, good);
    am_calib *cal = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_calib_parse(text, strlen(text), "c.toml", NULL, &cal, &err), AM_E_DUPLICATE);
    AM_CHECK_STATUS(am_calib_parse("[metadata]\nx = 1\n", 17, "c.toml", NULL, &cal, &err), AM_E_EMPTY);
    snprintf(text, sizeof text, "%s%sfisheye = 1\n", head, good);
    AM_CHECK_STATUS(am_calib_parse(text, strlen(text), "c.toml", NULL, &cal, &err), AM_E_SCHEMA);
    snprintf(text, sizeof text, "%s%sfisheye = true\nmodel = \"pinhole\"\n", head, good);
    AM_CHECK_STATUS(am_calib_parse(text, strlen(text), "c.toml", NULL, &cal, &err), AM_E_VALUE);
}

/* Every prefix either parses (it ends where a camera table is complete) or is refused with a
 * located error; never a crash or leak (ASan build). */
static void calib_prefixes_are_refused_cleanly(void)
{
    size_t len = 0;
    char *text = read_all(am_test_shared("data/formats/anipose/calibration_7cam-allen-mouse.toml"), &len);
    if (!text) return;
    size_t ok = 0;
    for (size_t n = 0; n < len; n++) {
        am_calib *cal = NULL;
        am_error err = {0};
        am_status s = am_calib_parse(text, n, "p.toml", NULL, &cal, &err);
        if (s == AM_OK) {
            ok++;
            AM_CHECK(cal && cal->camera_count >= 1);
        } else {
            AM_CHECK_MSG(s == AM_E_SYNTAX || s == AM_E_SCHEMA || s == AM_E_SHAPE || s == AM_E_EMPTY ||
                             s == AM_E_VALUE,
                         "prefix %zu: %s", n, am_status_name(s));
            AM_CHECK_MSG(s == AM_E_EMPTY || err.line > 0, "prefix %zu: no line (%s)", n, err.info);
        }
        am_calib_free(cal);
    }
    /* The complete cameras 1..6 end in a few places each (after translation's ']' or newline,
     * and after the blank line); the metadata lines add more. */
    AM_CHECK_MSG(ok >= 6 && ok < 60, "%zu prefixes parsed", ok);
    am_free(text);
}

static void calib_survives_allocation_failures(void)
{
    size_t len = 0;
    char *text = read_all(am_test_shared("data/formats/anipose/calibration_7cam-allen-mouse.toml"), &len);
    if (!text) return;
    am_test_alloc_limit(0);
    am_calib *cal = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_calib_parse(text, len, "a.toml", NULL, &cal, &err), &err);
    am_calib_free(cal);
    uint64_t need = am_test_alloc_count();
    for (uint64_t k = 1; k < need; k++) {
        am_test_alloc_limit(k);
        cal = NULL;
        am_status s = am_calib_parse(text, len, "a.toml", NULL, &cal, &err);
        AM_CHECK_MSG(s == AM_E_NOMEM && !cal, "limit %llu: %s", (unsigned long long)k, am_status_name(s));
        am_calib_free(cal);
    }
    am_test_alloc_limit(0);
    am_free(text);
}

/* A table of 200,000 keys parses in linear time (each new key is looked up: pairwise, that was
 * 2e10 comparisons), every key found, a repeated one refused at its line, and a [big.sub]
 * header after the table finds it through the same index. */
static void toml_large_tables_by_hash(void)
{
    const size_t n = 200000;
    am_buf b = {0};
    am_buf_printf(&b, "[big]\n");
    for (size_t k = 0; k < n; k++) am_buf_printf(&b, "k%zu = %zu\n", k, k);
    am_buf_printf(&b, "[other]\nx = 1\n[big.sub]\ny = 2\n");
    AM_CHECK(!b.failed);
    ami_toml *t = NULL;
    am_error err = {0};
    clock_t t0 = clock();
    AM_CHECK_OK(ami_toml_parse(b.data, b.len, "big.toml", &t, &err), &err);
    double dt = (double)(clock() - t0) / CLOCKS_PER_SEC;
    AM_CHECK_MSG(dt < 20.0, "%.2f s CPU for %zu keys", dt, n);
    printf("     TOML table of %zu keys: %.3f s CPU\n", n, dt);
    const ami_toml *big = ami_toml_get(t, "big");
    AM_CHECK(big && big->count == n + 1);
    for (size_t k = 0; big && k < n; k += 9973) {
        char key[32];
        snprintf(key, sizeof key, "k%zu", k);
        const ami_toml *v = ami_toml_get(big, key);
        AM_CHECK_MSG(v && v->kind == AMI_TOML_INT && v->i == (int64_t)k, "%s", key);
    }
    AM_CHECK(big && ami_toml_get(ami_toml_get(big, "sub"), "y")->i == 2 && !ami_toml_get(big, "k200000"));
    ami_toml_free(t);
    am_buf_free(&b);
    /* the same key again, far into the table */
    am_buf c = {0};
    am_buf_printf(&c, "[big]\n");
    for (size_t k = 0; k < 1000; k++) am_buf_printf(&c, "k%zu = %zu\n", k, k);
    am_buf_printf(&c, "k517 = 0\n");
    t = NULL;
    AM_CHECK_STATUS(ami_toml_parse(c.data, c.len, "dup.toml", &t, &err), AM_E_DUPLICATE);
    AM_CHECK(t == NULL && err.line == 1002 && strcmp(err.file, "dup.toml") == 0);
    am_buf_free(&c);
}

#define AM_TESTS(X)                                                                                     \
    X(rodrigues_round_trip) X(projection_jacobian_matches_differences) X(distortion_jacobian_matches_differences) \
    X(undistort_inverts_projection) X(layout_views_are_orthographic_cameras) X(toml_reads_every_value_kind)       \
    X(toml_refuses_malformed_with_line_and_column) X(calib_reads_the_samples) X(calib_write_read_is_exact)        \
    X(calib_refuses_bad_cameras) X(calib_prefixes_are_refused_cleanly) X(calib_survives_allocation_failures) \
    X(toml_large_tables_by_hash)
AM_TEST_MAIN(AM_TESTS)
