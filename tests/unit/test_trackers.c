/* Trackers' and mocap files: every sample of ../shared/data/formats loads with the right shapes,
 * names and values (each sample's edge case from its README), every prefix is refused cleanly
 * (or read as fewer frames), bad inputs are refused naming the file and the line, byte or
 * dataset; det.npz (N cameras and two-view), joints.npz and TRC round trips. */
#include "am_test.h"

#include "anymove/mocap.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU seconds a reader may take on a header of 100,000 names: linear code needs well under one
 * (a few under AddressSanitizer), the pairwise comparisons took minutes. CPU time, so a busy
 * machine does not fail the test. */
#define AMI_SCALE_SECONDS 20.0

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

static const char *fmt_path(const char *rel)
{
    static char bufs[4][1024];
    static int k;
    char *b = bufs[k++ % 4];
    snprintf(b, sizeof bufs[0], "data/formats/%s", rel);
    return am_test_shared(b);
}

static char *read_all(const char *path, size_t *len)
{
    char *data = NULL;
    am_error err = {0};
    if (am_file_read(path, 0, &data, len, &err) != AM_OK) {
        am_test_fail(__FILE__, __LINE__, "cannot read %s", path);
        return NULL;
    }
    return data;
}

static int name_index(char **names, size_t n, const char *want)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(names[k], want) == 0) return (int)k;
    return -1;
}

/* Load a 2D file in a scope that keeps its warnings; returns the count of warnings. */
static size_t load_2d(const char *path, const am_import_opts *o, am_mdet **d, am_status want)
{
    am_scope sc;
    am_context ctx = {0};
    am_scope_enter(&sc, &ctx);
    am_error err = {0};
    am_status s = am_import_2d(path, AM_TRACK_AUTO, o, d, &err);
    AM_CHECK_MSG(s == want, "%s: %s (%s)", path, am_status_name(s), err.info);
    am_warning_list w = {0};
    am_scope_leave(&sc, &w);
    size_t n = w.count;
    am_warning_list_free(&w);
    return n;
}

static void dlc_single_animal(void)
{
    am_mdet *d = NULL;
    am_import_opts o = {.fps = 25};
    load_2d(fmt_path("deeplabcut/deepof_single_topview_DLC_resnet50.csv"), &o, &d, AM_OK);
    if (!d) return;
    AM_CHECK(d->camera_count == 1 && d->frame_count == 97 && d->joint_count == 14 && d->fps == 25);
    AM_CHECK(strcmp(d->names[0], "Nose") == 0 && strcmp(d->names[13], "Right_fhip") == 0);
    AM_CHECK(strcmp(d->cameras[0], "deepof_single_topview_DLC_resnet50") == 0);
    /* Last row: 96,208.58868408203125,137.4907684326172,0.99999964,... (Nose first). */
    size_t i = 96 * 14;
    AM_CHECK_NEAR(d->uv[2 * i], 208.58868408203125, 1e-4);
    AM_CHECK_NEAR(d->uv[2 * i + 1], 137.4907684326172, 1e-4);
    AM_CHECK_NEAR(d->conf[i], 0.99999964, 1e-6);
    am_mdet_free(d);
}

static void dlc_multi_animal_empty_cells(void)
{
    am_mdet *d = NULL;
    load_2d(fmt_path("deeplabcut/deepof_madlc_topview_DLC_dlcrnetms5.csv"), NULL, &d, AM_OK);
    if (d) {
        AM_CHECK(d->frame_count == 901 && d->joint_count == 14);
        am_mdet_free(d);
    }
    am_import_opts o = {.individual = "mouse_black_tail"};
    d = NULL;
    load_2d(fmt_path("deeplabcut/deepof_madlc_topview_DLC_dlcrnetms5.csv"), &o, &d, AM_OK);
    if (d) {
        /* Row 0: Nose 188.547,379.996 (0.991); Left_ear empty cells with likelihood 0.0. */
        AM_CHECK_NEAR(d->uv[0], 188.547, 1e-4);
        AM_CHECK_NEAR(d->conf[0], 0.9909999966621399, 1e-6);
        AM_CHECK(isnan(d->uv[2]) && d->conf[1] == 0.0f);
        am_mdet_free(d);
    }
    o.individual = "nobody";
    d = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_import_2d(fmt_path("deeplabcut/deepof_madlc_topview_DLC_dlcrnetms5.csv"), AM_TRACK_AUTO, &o, &d, &err),
                    AM_E_NAME);
    AM_CHECK(strstr(err.info, "mouse_white_tail") != NULL);
}

static void dlc_labeled_data_short_row(void)
{
    am_mdet *d = NULL;
    am_import_opts o = {.individual = "Animal2", .fps = 30};
    size_t w = load_2d(fmt_path("deeplabcut/sleap_maudlc_testdata_v2_labeled.csv"), &o, &d, AM_OK);
    AM_CHECK_MSG(w == 1, "%zu warnings (the short row)", w);
    if (!d) return;
    AM_CHECK(d->frame_count == 4 && d->joint_count == 3 && strcmp(d->names[2], "C") == 0);
    /* img001: Animal2 A = 17,18; B empty; img002 (short row): all unseen; no likelihood -> 1. */
    AM_CHECK_NEAR(d->uv[(1 * 3 + 0) * 2], 17, 0);
    AM_CHECK(d->conf[1 * 3 + 0] == 1.0f && d->conf[1 * 3 + 1] == 0.0f);
    for (size_t j = 0; j < 3; j++) AM_CHECK(d->conf[2 * 3 + j] == 0.0f);
    am_mdet_free(d);
    o.individual = "single";
    d = NULL;
    load_2d(fmt_path("deeplabcut/sleap_maudlc_testdata_v2_labeled.csv"), &o, &d, AM_OK);
    AM_CHECK(d && d->joint_count == 2 && strcmp(d->names[0], "D") == 0);
    am_mdet_free(d);
}

static void dlc_refuses_bad_rows(void)
{
    const char *hdr = "scorer,s,s,s\nbodyparts,a,a,a\ncoords,x,y,likelihood\n";
    const struct {
        const char *rows;
        am_status code;
        uint32_t line;
    } cases[] = {
        {"0,1,2,0.5,9\n", AM_E_SHAPE, 4},  /* ragged: more cells than the header */
        {"0,1,2,0.5\n1,x,2,0.5\n", AM_E_SYNTAX, 5},
        {"0,1,inf,0.5\n", AM_E_NONFINITE, 4},
        {"", AM_E_EMPTY, 0},
        {"0,\"1,2,0.5\n", AM_E_SYNTAX, 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", hdr, cases[k].rows);
        am_mdet *d = NULL;
        am_error err = {0};
        am_status s = am_import_2d_mem(text, strlen(text), "bad.csv", AM_TRACK_DLC_CSV, NULL, &d, &err);
        AM_CHECK_MSG(s == cases[k].code && (cases[k].line == 0 || err.line == cases[k].line), "case %zu: %s line %u (%s)", k,
                     am_status_name(s), err.line, err.info);
        AM_CHECK(strcmp(err.file, "bad.csv") == 0 && !d);
    }
}

static void sleap_analysis_files(void)
{
    am_mdet *d = NULL;
    load_2d(fmt_path("sleap/small_robot.000_small_robot_3_frame.analysis.h5"), NULL, &d, AM_OK);
    if (d) {
        AM_CHECK(d->frame_count == 3 && d->joint_count == 3);
        AM_CHECK(strcmp(d->names[0], "top") == 0 && strcmp(d->names[1], "front") == 0 && strcmp(d->names[2], "rear") == 0);
        am_mdet_free(d);
    }
    d = NULL;
    load_2d(fmt_path("sleap/deepof_testDLC_sleap.analysis.h5"), NULL, &d, AM_OK);
    if (d) {
        AM_CHECK(d->frame_count == 101 && d->joint_count == 14);
        am_mdet_free(d);
    }
    /* Legacy: no point_scores (conf 1), two tracks; --track 2. */
    am_import_opts o = {.track = 2};
    d = NULL;
    load_2d(fmt_path("sleap/legacy_flies_2tracks_predictions.analysis.h5"), &o, &d, AM_OK);
    if (d) {
        AM_CHECK(d->frame_count == 3000 && d->joint_count == 13 && strcmp(d->names[0], "head") == 0 &&
                 strcmp(d->names[12], "eyeR") == 0);
        float c = 0;
        for (size_t i = 0; i < 3000 * 13; i++)
            if (d->conf[i] > c) c = d->conf[i];
        AM_CHECK(c == 1.0f);
        am_mdet_free(d);
    }
    o.track = 3;
    d = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_import_2d(fmt_path("sleap/legacy_flies_2tracks_predictions.analysis.h5"), AM_TRACK_AUTO, &o, &d, &err),
                    AM_E_VALUE);
}

/* A SLEAP-like file written with libhdf5: tracks of the given shape. */
static void write_h5(const char *path, const hsize_t *dims, int nd, bool with_names)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(nd, dims, NULL);
    hid_t ds = H5Dcreate2(f, "tracks", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    size_t n = 1;
    for (int k = 0; k < nd; k++) n *= dims[k];
    double *v = calloc(n + 1, sizeof *v);
    for (size_t k = 0; k < n; k++) v[k] = (double)k;
    if (n) H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    free(v);
    H5Dclose(ds);
    H5Sclose(sp);
    if (with_names) {
        hsize_t nn = dims[nd == 4 && dims[1] == 2 ? 2 : nd - 2];
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 4);
        char names[64][4];
        for (hsize_t k = 0; k < nn && k < 64; k++) snprintf(names[k], 4, "n%d", (int)k);
        hid_t s2 = H5Screate_simple(1, &nn, NULL);
        hid_t d2 = H5Dcreate2(f, "node_names", st, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d2, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names);
        H5Dclose(d2);
        H5Sclose(s2);
        H5Tclose(st);
    }
    H5Fclose(f);
}

static void sleap_refuses_bad_files(void)
{
    const char *p = am_test_tmp("zero_frames.analysis.h5");
    const hsize_t zero[4] = {1, 2, 3, 0};
    write_h5(p, zero, 4, true);
    am_mdet *d = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_import_2d(p, AM_TRACK_AUTO, NULL, &d, &err), AM_E_EMPTY);
    AM_CHECK(strstr(err.info, "'tracks'") && strstr(err.file, "zero_frames"));
    p = am_test_tmp("no_names.analysis.h5");
    const hsize_t ok[4] = {1, 2, 3, 5};
    write_h5(p, ok, 4, false);
    AM_CHECK_STATUS(am_import_2d(p, AM_TRACK_AUTO, NULL, &d, &err), AM_E_SCHEMA);
    AM_CHECK(strstr(err.info, "node_names") != NULL);
    p = am_test_tmp("bad_shape.analysis.h5");
    const hsize_t bad[3] = {2, 3, 5};
    write_h5(p, bad, 3, true);
    AM_CHECK_STATUS(am_import_2d(p, AM_TRACK_AUTO, NULL, &d, &err), AM_E_SHAPE);
    /* sleap-anipose points3d.h5: (frames, tracks, nodes, 3). */
    p = am_test_tmp("session_points3d.h5");
    const hsize_t p3[4] = {4, 1, 2, 3};
    write_h5(p, p3, 4, false);
    am_joints *j = NULL;
    am_import_opts o = {.scale = 0.001};
    AM_CHECK_OK(am_import_3d(p, AM_TRACK_AUTO, &o, &j, &err), &err);
    if (j) {
        AM_CHECK(j->frame_count == 4 && j->joint_count == 2 && strcmp(j->names[1], "node_1") == 0);
        AM_CHECK_NEAR(j->joints[(3 * 2 + 1) * 3 + 2], 0.001 * 23, 1e-12);
    }
    am_joints_free(j);
}

static void openpose_folder(void)
{
    am_mdet *d = NULL;
    load_2d(fmt_path("openpose/sign-language-sample"), NULL, &d, AM_OK);
    if (!d) return;
    AM_CHECK(d->frame_count == 9 && d->joint_count == 25);
    AM_CHECK(strcmp(d->names[0], "Nose") == 0 && strcmp(d->names[24], "RHeel") == 0);
    /* Frame 0: Nose 627.385, 245.392, 0.816087; keypoint 8 (MidHip) undetected (0, 0, 0). */
    AM_CHECK_NEAR(d->uv[0], 627.385, 1e-3);
    AM_CHECK_NEAR(d->conf[0], 0.816087, 1e-6);
    AM_CHECK(d->conf[8] == 0.0f && isnan(d->uv[16]));
    AM_CHECK(strcmp(d->cameras[0], "sign-language-sample") == 0);
    am_mdet_free(d);
    /* One frame from memory, and a malformed one. */
    const char *two = "{\"people\":[{\"pose_keypoints_2d\":[1,2,0.2,3,4,0.2]},{\"pose_keypoints_2d\":[5,6,0.9,7,8,0.9]}]}";
    am_error err = {0};
    AM_CHECK_OK(am_import_2d_mem(two, strlen(two), "f.json", AM_TRACK_OPENPOSE, NULL, &d, &err), &err);
    AM_CHECK(d && d->joint_count == 2 && d->uv[0] == 5.0f); /* the more confident person */
    am_mdet_free(d);
    am_import_opts o = {.person = 1};
    AM_CHECK_OK(am_import_2d_mem(two, strlen(two), "f.json", AM_TRACK_OPENPOSE, &o, &d, &err), &err);
    AM_CHECK(d && d->uv[0] == 1.0f);
    am_mdet_free(d);
    const char *bad = "{\"people\":[{\"pose_keypoints_2d\":[1,2]}]}";
    AM_CHECK_STATUS(am_import_2d_mem(bad, strlen(bad), "f.json", AM_TRACK_OPENPOSE, NULL, &d, &err), AM_E_SCHEMA);
}

static void mediapipe_landmarks(void)
{
    am_mdet *d = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_import_2d(fmt_path("mediapipe/pose_landmarks.pbtxt"), AM_TRACK_AUTO, NULL, &d, &err), AM_E_USAGE);
    am_import_opts o = {.width = 1000, .height = 500};
    const char *files[2] = {"mediapipe/pose_landmarks.pbtxt", "mediapipe/expected_pose_landmarks.prototxt"};
    for (int f = 0; f < 2; f++) {
        d = NULL;
        load_2d(fmt_path(files[f]), &o, &d, AM_OK);
        if (!d) continue;
        AM_CHECK(d->frame_count == 1 && d->joint_count == 33 && strcmp(d->names[32], "right_foot_index") == 0);
        AM_CHECK_NEAR(d->uv[0], 465.07242, 1e-3);
        AM_CHECK_NEAR(d->uv[1], 208.05152, 1e-3);
        AM_CHECK_NEAR(d->conf[0], 0.99998844, 1e-6);
        am_mdet_free(d);
    }
    const char *json = "[{\"landmark\": [{\"x\": 0.5, \"y\": 0.25, \"visibility\": 0.5}]},"
                       " [[{\"x\": 0.1, \"y\": 0.2}], [{\"x\": 0.9, \"y\": 0.9}]]]";
    AM_CHECK_OK(am_import_2d_mem(json, strlen(json), "m.json", AM_TRACK_MEDIAPIPE, &o, &d, &err), &err);
    if (d) {
        AM_CHECK(d->frame_count == 2 && d->joint_count == 1 && d->uv[0] == 500.0f && d->uv[1] == 125.0f &&
                 d->conf[0] == 0.5f && d->uv[2] == 100.0f && d->conf[1] == 1.0f);
        am_mdet_free(d);
    }
    const char *lng = "frame,landmark,x,y,z,visibility\n0,0,0.5,0.5,0,0.9\n0,1,0.1,0.1,0,0.8\n1,0,0.6,0.5,0,0.9\n";
    AM_CHECK_OK(am_import_2d_mem(lng, strlen(lng), "m.csv", AM_TRACK_MEDIAPIPE, &o, &d, &err), &err);
    if (d) {
        AM_CHECK(d->frame_count == 2 && d->joint_count == 33 && d->uv[2 * 33] == 600.0f && d->conf[33 + 1] == 0.0f);
        am_mdet_free(d);
    }
    const char *wide = "nose_x,nose_y,nose_visibility,hip_x,hip_y\n0.5,0.5,0.7,0.2,0.3\n";
    AM_CHECK_OK(am_import_2d_mem(wide, strlen(wide), "w.csv", AM_TRACK_MEDIAPIPE, &o, &d, &err), &err);
    if (d) {
        AM_CHECK(d->joint_count == 2 && strcmp(d->names[1], "hip") == 0 && d->uv[3] == 150.0f);
        am_mdet_free(d);
    }
    const char *bad = "landmark { x: 0.5 y: oops }";
    AM_CHECK_STATUS(am_import_2d_mem(bad, strlen(bad), "b.pbtxt", AM_TRACK_MEDIAPIPE, &o, &d, &err), AM_E_SYNTAX);
    AM_CHECK(err.line == 1 && err.col > 0);
}

static void trc_samples(void)
{
    am_joints *j = NULL;
    am_error err = {0};
    am_import_opts z = {.up = 'z'};
    AM_CHECK_OK(am_import_3d(fmt_path("trc/exampleFormat.trc"), AM_TRACK_AUTO, &z, &j, &err), &err);
    if (j) {
        /* 5 frames, 3 markers, m; frame 1 marker1 blank; "Nan/nan/NAN" in frame 3; no final newline. */
        AM_CHECK(j->frame_count == 5 && j->joint_count == 3 && j->fps == 100 && strcmp(j->names[2], "marker3") == 0);
        AM_CHECK(isnan(j->joints[0]) && isnan(j->joints[(2 * 3 + 1) * 3]));
        AM_CHECK_NEAR(j->joints[(4 * 3 + 2) * 3 + 2], -1.7, 1e-12);
        am_joints_free(j);
    }
    j = NULL;
    AM_CHECK_OK(am_import_3d(fmt_path("trc/dataWithNaNsOfDifferentCases.trc"), AM_TRACK_AUTO, &z, &j, &err), &err);
    if (j) {
        AM_CHECK(j->frame_count == 5 && j->joint_count == 14 && j->fps == 250 && strcmp(j->names[13], "lASIS") == 0);
        AM_CHECK_NEAR(j->joints[0], 0.175798014, 1e-12); /* mm -> m */
        am_joints_free(j);
    }
    j = NULL;
    AM_CHECK_OK(am_import_3d(fmt_path("trc/dataWithEformat.trc"), AM_TRACK_AUTO, NULL, &j, &err), &err);
    if (j) {
        AM_CHECK(j->frame_count == 5 && j->joint_count == 14);
        AM_CHECK_NEAR(j->fps, 119.88012, 1e-3);
        am_joints_free(j);
    }
}

/* The C3D and the TRC OpenSim wrote from it agree (OpenSim's own test: 1e-4). */
static void c3d_matches_its_trc(void)
{
    am_joints *c = NULL, *t = NULL;
    am_error err = {0};
    am_import_opts z = {.up = 'z'};
    AM_CHECK_OK(am_import_3d(fmt_path("c3d/walking5.c3d"), AM_TRACK_AUTO, &z, &c, &err), &err);
    AM_CHECK_OK(am_import_3d(fmt_path("trc/std_walking5_markers.trc"), AM_TRACK_AUTO, &z, &t, &err), &err);
    if (!c || !t) goto done;
    AM_CHECK(c->frame_count == 1103 && c->joint_count == 40 && c->fps == 250 && t->frame_count == 112);
    am_test_diff diff = {0};
    size_t both_missing = 0, mismatch = 0;
    for (size_t k = 0; k < t->frame_count; k++) {
        size_t fc = k < 111 ? 10 * k : 1102;
        for (size_t m = 0; m < t->joint_count; m++) {
            int q = name_index(c->names, c->joint_count, t->names[m]);
            AM_CHECK_MSG(q >= 0, "marker %s", t->names[m]);
            if (q < 0) continue;
            const double *a = t->joints + (k * t->joint_count + m) * 3, *b = c->joints + (fc * c->joint_count + (size_t)q) * 3;
            if (isnan(a[0]) || isnan(b[0])) {
                both_missing += isnan(a[0]) && isnan(b[0]);
                mismatch += isnan(a[0]) != isnan(b[0]);
                continue;
            }
            for (int d = 0; d < 3; d++) am_test_diff_add(&diff, a[d], b[d]);
        }
    }
    /* The TRC keeps 5 significant digits (1014.3 mm where the C3D holds 1014.25). */
    AM_CHECK_MSG(diff.count > 7000 && diff.max < 5.01e-5 && am_test_diff_mean(&diff) < 1e-5, "%zu coordinates, max diff %g m",
                 diff.count, diff.max);
    AM_CHECK_MSG(mismatch == 0, "%zu points missing in one file only (%zu in both)", mismatch, both_missing);
done:
    am_joints_free(c);
    am_joints_free(t);
    /* Optotrak: the header claims 1149 frames, the data holds 29. */
    c = NULL;
    am_scope sc;
    am_context ctx = {0};
    am_scope_enter(&sc, &ctx);
    AM_CHECK_OK(am_import_3d(fmt_path("c3d/Optotrak.c3d"), AM_TRACK_AUTO, NULL, &c, &err), &err);
    am_warning_list w = {0};
    am_scope_leave(&sc, &w);
    AM_CHECK(w.count == 1 && strstr(w.data[0].text, "1149"));
    am_warning_list_free(&w);
    AM_CHECK(c && c->frame_count == 29 && c->joint_count == 54 && c->fps == 30 && strcmp(c->names[53], "Marker_54") == 0);
    am_joints_free(c);
}

/* A small C3D written for each processor type and both storages, read back. */
typedef struct {
    unsigned char b[2048];
    int proc;
} c3d_img;

static void c3d_u16(c3d_img *m, size_t o, int v)
{
    uint16_t u = (uint16_t)v;
    if (m->proc == 86) m->b[o] = (unsigned char)(u >> 8), m->b[o + 1] = (unsigned char)u;
    else m->b[o] = (unsigned char)u, m->b[o + 1] = (unsigned char)(u >> 8);
}

static void c3d_f32(c3d_img *m, size_t o, double v)
{
    float f = (float)(m->proc == 85 ? v * 4.0 : v);
    uint32_t u;
    memcpy(&u, &f, 4);
    unsigned char t[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
    unsigned char *s = m->b + o;
    if (m->proc == 86) s[0] = t[3], s[1] = t[2], s[2] = t[1], s[3] = t[0];
    else if (m->proc == 85) s[0] = t[2], s[1] = t[3], s[2] = t[0], s[3] = t[1];
    else memcpy(s, t, 4);
}

static size_t c3d_write(c3d_img *m, int proc, bool is_float)
{
    memset(m, 0, sizeof *m);
    m->proc = proc;
    const int P = 2, N = 3;
    const double scale = is_float ? -0.1 : 0.5;
    m->b[0] = 2;
    m->b[1] = 0x50;
    c3d_u16(m, 2, P);
    c3d_u16(m, 4, 0);
    c3d_u16(m, 6, 1);
    c3d_u16(m, 8, N);
    c3d_f32(m, 12, scale);
    c3d_u16(m, 16, 3);
    c3d_f32(m, 20, 100.0);
    size_t p = 512;
    m->b[p + 1] = 0x50, m->b[p + 2] = 1, m->b[p + 3] = (unsigned char)proc;
    p += 4;
    /* group POINT */
    m->b[p] = 5, m->b[p + 1] = (unsigned char)-1;
    memcpy(m->b + p + 2, "POINT", 5);
    c3d_u16(m, p + 7, 3);
    p += 7 + 3;
    /* POINT:LABELS char [4][2] */
    m->b[p] = 6, m->b[p + 1] = 1;
    memcpy(m->b + p + 2, "LABELS", 6);
    c3d_u16(m, p + 8, 2 + 1 + 1 + 2 + 8 + 1);
    m->b[p + 10] = (unsigned char)-1, m->b[p + 11] = 2, m->b[p + 12] = 4, m->b[p + 13] = 2;
    memcpy(m->b + p + 14, "HIP KNEE", 8);
    p += 8 + 2 + 1 + 1 + 2 + 8 + 1;
    /* POINT:UNITS char [2] */
    m->b[p] = 5, m->b[p + 1] = 1;
    memcpy(m->b + p + 2, "UNITS", 5);
    c3d_u16(m, p + 7, 2 + 1 + 1 + 1 + 2 + 1);
    m->b[p + 9] = (unsigned char)-1, m->b[p + 10] = 1, m->b[p + 11] = 2;
    memcpy(m->b + p + 12, "mm", 2);
    p += 7 + 2 + 1 + 1 + 1 + 2 + 1;
    m->b[p] = 0;
    size_t d = 1024, es = is_float ? 4 : 2;
    for (int t = 0; t < N; t++)
        for (int j = 0; j < P; j++) {
            for (int k = 0; k < 4; k++) {
                /* Coordinates in mm: 100 j + 10 t + k; the residual word -1 marks a gap. */
                double v = k < 3 ? 100.0 * j + 10.0 * t + k : (t == 1 && j == 1 ? -1 : 0);
                size_t o = d + ((size_t)(t * P + j) * 4 + (size_t)k) * es;
                if (is_float) c3d_f32(m, o, v);
                else c3d_u16(m, o, k < 3 ? (int)(v / scale) : (int)v);
            }
        }
    return d + (size_t)(N * P * 4) * es;
}

static void c3d_every_processor_and_storage(void)
{
    const int procs[3] = {84, 85, 86};
    for (int q = 0; q < 3; q++)
        for (int fl = 0; fl < 2; fl++) {
            c3d_img m;
            size_t len = c3d_write(&m, procs[q], fl);
            am_joints *j = NULL;
            am_error err = {0};
            am_import_opts z = {.up = 'z'};
            AM_CHECK_OK(am_import_3d_mem(m.b, len, "s.c3d", AM_TRACK_C3D, &z, &j, &err), &err);
            if (!j) continue;
            AM_CHECK_MSG(j->frame_count == 3 && j->joint_count == 2 && j->fps == 100 && strcmp(j->names[1], "KNEE") == 0,
                         "proc %d float %d: %zu x %zu, %g fps", procs[q], fl, j->frame_count, j->joint_count, j->fps);
            for (size_t t = 0; t < 3 && j->frame_count == 3; t++)
                for (size_t k = 0; k < 2; k++) {
                    const double *p = j->joints + (t * 2 + k) * 3;
                    if (t == 1 && k == 1) {
                        AM_CHECK(isnan(p[0]));
                        continue;
                    }
                    for (int d = 0; d < 3; d++)
                        AM_CHECK_MSG(fabs(p[d] - 0.001 * (100.0 * (double)k + 10.0 * (double)t + d)) < 1e-9,
                                     "proc %d float %d: frame %zu point %zu axis %d = %g", procs[q], fl, t, k, d, p[d]);
                }
            am_joints_free(j);
        }
}

static void anipose_csv(void)
{
    const char *csv = "nose_x,nose_y,nose_z,nose_error,nose_ncams,nose_score,tail_x,tail_y,tail_z,tail_score,M_00,fnum\n"
                      "1,2,3,0.5,2,0.9,4,5,6,0.8,1,0\n"
                      ",,,,0,0,7,8,9,1.2,1,1\n";
    am_joints *j = NULL;
    am_error err = {0};
    am_import_opts o = {.scale = 0.001, .fps = 100};
    AM_CHECK_OK(am_import_3d_mem(csv, strlen(csv), "a.csv", AM_TRACK_ANIPOSE_CSV, &o, &j, &err), &err);
    if (j) {
        AM_CHECK(j->frame_count == 2 && j->joint_count == 2 && strcmp(j->names[1], "tail") == 0 && j->fps == 100);
        AM_CHECK_NEAR(j->joints[2], 0.003, 1e-15);
        AM_CHECK(isnan(j->joints[6]) && j->conf[2] == 0.0 && j->conf[3] == 1.0 && j->conf[0] == 0.9);
        am_joints_free(j);
    }
    const char *bad = "a_x,a_y,a_z\n1,2\n";
    AM_CHECK_STATUS(am_import_3d_mem(bad, strlen(bad), "a.csv", AM_TRACK_ANIPOSE_CSV, &o, &j, &err), AM_E_SHAPE);
    AM_CHECK(err.line == 2);
}

/* Prefixes: a text prefix may be a shorter valid file; a binary one must be refused or read as
 * fewer frames. Never a crash or a leak (the ASan build runs this too). */
static void prefixes_are_refused_cleanly(void)
{
    const struct {
        const char *rel;
        am_track_format fmt;
        bool is3d;
        size_t stride;
    } files[] = {
        {"deeplabcut/deepof_single_topview_DLC_resnet50.csv", AM_TRACK_DLC_CSV, false, 61},
        {"deeplabcut/sleap_maudlc_testdata_v2_labeled.csv", AM_TRACK_DLC_CSV, false, 1},
        {"openpose/sign-language-sample/video_000000000000_keypoints.json", AM_TRACK_OPENPOSE, false, 1},
        {"mediapipe/pose_landmarks.pbtxt", AM_TRACK_MEDIAPIPE, false, 1},
        {"sleap/small_robot.000_small_robot_3_frame.analysis.h5", AM_TRACK_SLEAP_H5, false, 29},
        {"trc/exampleFormat.trc", AM_TRACK_TRC, true, 1},
        {"trc/std_walking5_markers.trc", AM_TRACK_TRC, true, 89},
        {"c3d/Optotrak.c3d", AM_TRACK_C3D, true, 7},
    };
    am_import_opts o = {.width = 640, .height = 480, .fps = 30, .scale = 1};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len = 0;
        char *buf = read_all(fmt_path(files[f].rel), &len);
        if (!buf) continue;
        size_t ok = 0;
        for (size_t n = 0; n < len; n += (n < 600 ? 1 : files[f].stride)) {
            am_error err = {0};
            am_status s;
            am_scope sc;
            am_context ctx = {0};
            am_scope_enter(&sc, &ctx);
            if (files[f].is3d) {
                am_joints *j = NULL;
                s = am_import_3d_mem(buf, n, "prefix", files[f].fmt, &o, &j, &err);
                AM_CHECK((s == AM_OK) == (j != NULL));
                am_joints_free(j);
            } else {
                am_mdet *d = NULL;
                s = am_import_2d_mem(buf, n, "prefix", files[f].fmt, &o, &d, &err);
                AM_CHECK((s == AM_OK) == (d != NULL));
                am_mdet_free(d);
            }
            am_scope_leave(&sc, NULL);
            ok += s == AM_OK;
            AM_CHECK_MSG(s == AM_OK || (am_status_fault(s) == AM_FAULT_INPUT && strcmp(err.file, "prefix") == 0),
                         "%s prefix %zu: %s", files[f].rel, n, am_status_name(s));
        }
        /* Binary files never parse when cut before their data. */
        if (files[f].fmt == AM_TRACK_SLEAP_H5) AM_CHECK_MSG(ok == 0, "%s: %zu prefixes parsed", files[f].rel, ok);
        am_free(buf);
    }
}

static void det_files_round_trip(void)
{
    am_mdet *d = NULL, *back = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_mdet_create(3, 4, 2, &d, &err), &err);
    if (!d) return;
    const char *cams[3] = {"a", "b", "c"}, *names[2] = {"j0", "j1"};
    for (size_t c = 0; c < 3; c++) d->cameras[c] = am_strdup(cams[c]);
    for (size_t j = 0; j < 2; j++) d->names[j] = am_strdup(names[j]);
    for (size_t i = 0; i < 24; i++) {
        d->conf[i] = i % 5 ? 0.5f : 0.0f;
        if (d->conf[i] > 0) d->uv[2 * i] = (float)i, d->uv[2 * i + 1] = (float)(2 * i);
    }
    d->fps = 60;
    d->time_offset = am_alloc_array(3, sizeof(double));
    d->time_offset[1] = -2.5;
    const char *p = am_test_tmp("det_n.npz");
    AM_CHECK_OK(am_mdet_write(p, d, &err), &err);
    AM_CHECK_OK(am_mdet_load(p, &back, &err), &err);
    if (back) {
        AM_CHECK(back->camera_count == 3 && back->frame_count == 4 && back->joint_count == 2 && back->fps == 60);
        AM_CHECK(memcmp(back->conf, d->conf, 24 * sizeof(float)) == 0 && strcmp(back->cameras[2], "c") == 0);
        AM_CHECK(back->time_offset && back->time_offset[1] == -2.5 && !back->two_view);
        for (size_t i = 0; i < 24; i++) AM_CHECK(d->conf[i] == 0 ? isnan(back->uv[2 * i]) : back->uv[2 * i] == d->uv[2 * i]);
    }
    am_mdet_free(back);
    /* Stacking checks frames and joints; a camera from a file with other frames is refused. */
    am_mdet *one = NULL, *other = NULL, *st = NULL;
    AM_CHECK_OK(am_mdet_create(1, 4, 2, &one, &err), &err);
    AM_CHECK_OK(am_mdet_create(1, 5, 2, &other, &err), &err);
    if (one && other) {
        for (size_t j = 0; j < 2; j++) {
            one->names[j] = am_strdup(names[1 - j]);
            other->names[j] = am_strdup(names[j]);
        }
        one->cameras[0] = am_strdup("x");
        one->fps = other->fps = 60;
        other->cameras[0] = am_strdup("y");
        const am_mdet *parts[2] = {d, one};
        const char *src[2] = {"d.npz", "one.csv"};
        AM_CHECK_OK(am_mdet_stack(parts, src, 2, NULL, &st, &err), &err);
        AM_CHECK(st && st->camera_count == 4 && strcmp(st->cameras[3], "x") == 0);
        am_mdet_free(st);
        parts[1] = other;
        src[1] = "other.csv";
        AM_CHECK_STATUS(am_mdet_stack(parts, src, 2, NULL, &st, &err), AM_E_SHAPE);
        AM_CHECK(strcmp(err.file, "other.csv") == 0 && strstr(err.info, "d.npz"));
    }
    am_mdet_free(one);
    am_mdet_free(other);
    /* Bad files: NaN conf, wrong shapes. */
    d->conf[3] = NAN;
    AM_CHECK_OK(am_mdet_write(p, d, &err), &err);
    AM_CHECK_STATUS(am_mdet_load(p, &back, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.info, "conf[0][1][1]") != NULL);
    am_mdet_free(d);
}

static void two_view_det_loads_as_two_cameras(void)
{
    am_det det = {.frame_count = 2, .joint_count = 1, .fps = 30};
    float fuv[4] = {1, 2, 3, 4}, suv[4] = {5, 6, NAN, NAN}, fc[2] = {1, 0.5f}, sc[2] = {0.25f, 0};
    char *nm[1] = {"hip"};
    det.front_uv = fuv, det.side_uv = suv, det.front_conf = fc, det.side_conf = sc, det.names = nm;
    const char *p = am_test_tmp("det_two.npz");
    am_error err = {0};
    AM_CHECK_OK(am_det_write(p, &det, &err), &err);
    am_mdet *d = NULL;
    AM_CHECK_OK(am_mdet_load(p, &d, &err), &err);
    if (!d) return;
    AM_CHECK(d->two_view && d->camera_count == 2 && strcmp(d->cameras[1], "side") == 0);
    AM_CHECK(d->uv[2] == 3 && d->conf[2] == 0.25f && isnan(d->uv[6]) && d->conf[3] == 0);
    am_mdet_free(d);
}

static void joints_and_trc_round_trip(void)
{
    am_joints *j = NULL, *back = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_joints_create(3, 2, true, &j, &err), &err);
    if (!j) return;
    j->names[0] = am_strdup("hip");
    j->names[1] = am_strdup("knee");
    for (size_t i = 0; i < 18; i++) j->joints[i] = i == 4 ? NAN : 0.1 * (double)i - 0.333;
    for (size_t i = 0; i < 6; i++) j->conf[i] = 0.5;
    j->fps = 120;
    const char *p = am_test_tmp("j.npz");
    /* A missing joint is NaN in all three coordinates: the writer refuses half a point. */
    AM_CHECK_STATUS(am_joints_write(p, j, &err), AM_E_NONFINITE);
    j->joints[3] = j->joints[5] = NAN;
    AM_CHECK_OK(am_joints_write(p, j, &err), &err);
    AM_CHECK_OK(am_joints_load(p, &back, &err), &err);
    AM_CHECK(back && back->fps == 120 && back->conf && isnan(back->joints[3]) && isnan(back->joints[5]) &&
             memcmp(back->joints + 6, j->joints + 6, 12 * sizeof(double)) == 0);
    am_joints_free(back);
    back = NULL;
    const char *t = am_test_tmp("j.trc");
    AM_CHECK_OK(am_trc_write(t, j, &err), &err);
    AM_CHECK_OK(am_import_3d(t, AM_TRACK_AUTO, NULL, &back, &err), &err);
    if (back) {
        AM_CHECK(back->frame_count == 3 && back->joint_count == 2 && back->fps == 120 && strcmp(back->names[1], "knee") == 0);
        /* Written Y up, read Y up: exact, and the NaN's whole point is missing. */
        for (size_t i = 0; i < 18; i++)
            AM_CHECK_MSG(i / 3 == 1 ? isnan(back->joints[i]) : back->joints[i] == j->joints[i], "coordinate %zu: %g vs %g", i,
                         back->joints[i], j->joints[i]);
    }
    am_joints_free(back);
    am_joints_free(j);
}

static void name_maps_rename_and_drop(void)
{
    const char *p = am_test_tmp("map.json");
    const char *text = "{\"names\": {\"Nose\": \"head\", \"Tail_tip\": null, \"Nothing\": \"x\"}}";
    am_error err = {0};
    AM_CHECK_OK(am_file_write(p, text, strlen(text), &err), &err);
    am_name_map *m = NULL;
    AM_CHECK_OK(am_name_map_load(p, &m, &err), &err);
    am_mdet *d = NULL;
    am_import_opts o = {.fps = 25};
    load_2d(fmt_path("deeplabcut/deepof_single_topview_DLC_resnet50.csv"), &o, &d, AM_OK);
    if (m && d) {
        float x = d->uv[(1 * 14 + 10) * 2]; /* frame 1, Left_bhip (after Tail_tip) */
        am_scope sc;
        am_context ctx = {0};
        am_scope_enter(&sc, &ctx);
        AM_CHECK_OK(am_mdet_rename(d, m, &err), &err);
        am_warning_list w = {0};
        am_scope_leave(&sc, &w);
        AM_CHECK(w.count == 1 && strstr(w.data[0].text, "Nothing"));
        am_warning_list_free(&w);
        AM_CHECK(d->joint_count == 13 && strcmp(d->names[0], "head") == 0 && name_index(d->names, 13, "Tail_tip") < 0);
        AM_CHECK(name_index(d->names, 13, "Left_bhip") == 9 && d->uv[(1 * 13 + 9) * 2] == x);
    }
    am_mdet_free(d);
    am_name_map_free(m);
}

/* ---- bounded by construction ---- */

/* A scope of its own limit, whose peak bytes say what a call allocated. */
static void budget_begin(am_scope *sc, uint64_t max_bytes)
{
    am_scope_enter(sc, &(am_context){.max_bytes = max_bytes, .max_allocs = UINT64_MAX});
}

static uint64_t budget_end(am_scope *sc)
{
    uint64_t peak = am_scope_peak_bytes(sc);
    am_scope_leave(sc, NULL);
    return peak;
}

/* A TRC of M markers (names m0..) and `rows` rows of a frame number and a time only: each row
 * stands for M missing markers. */
static void trc_text(am_buf *b, size_t M, size_t rows)
{
    am_buf_printf(b, "PathFileType\t4\t(X/Y/Z)\twide.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n"
                     "100\t100\t%zu\t%zu\tm\nFrame#\tTime", rows, M);
    for (size_t m = 0; m < M; m++) am_buf_printf(b, "\tm%zu\t\t", m);
    am_buf_printf(b, "\n\t");
    for (size_t m = 0; m < M; m++) am_buf_printf(b, "\tX%zu\tY%zu\tZ%zu", m + 1, m + 1, m + 1);
    am_buf_printf(b, "\n\n");
    for (size_t t = 0; t < rows; t++) am_buf_printf(b, "%zu\t%g\n", t + 1, 0.01 * (double)t);
}

static void trc_short_rows_are_budgeted(void)
{
    /* 100,000 marker names (hashed) and rows of two cells, each 2.4 MB of points: refused from
     * the first row under a 64 MiB budget, without allocating the rows. */
    am_buf b = {0};
    trc_text(&b, 100000, 300);
    AM_CHECK(!b.failed);
    am_joints *j = NULL;
    am_error err = {0};
    am_scope sc;
    double t0 = cpu_now();
    budget_begin(&sc, (uint64_t)64 << 20);
    AM_CHECK_STATUS(am_import_3d_mem(b.data, b.len, "wide.trc", AM_TRACK_TRC, NULL, &j, &err), AM_E_LIMIT);
    uint64_t peak = budget_end(&sc);
    double dt = cpu_now() - t0;
    AM_CHECK(j == NULL && strcmp(err.file, "wide.trc") == 0 && strstr(err.info, "rows of") && err.line == 7);
    AM_CHECK_MSG(peak < ((uint64_t)64 << 20) && dt < AMI_SCALE_SECONDS, "%llu bytes, %.2f s", (unsigned long long)peak, dt);
    printf("     TRC of 100000 markers: names read and the rows refused in %.3f s CPU, %.1f MB\n", dt, (double)peak / 1e6);
    am_buf_free(&b);
    /* within the budget it reads: every point missing */
    am_buf c = {0};
    trc_text(&c, 2000, 3);
    AM_CHECK_OK(am_import_3d_mem(c.data, c.len, "wide.trc", AM_TRACK_TRC, NULL, &j, &err), &err);
    if (j) AM_CHECK(j->frame_count == 3 && j->joint_count == 2000 && isnan(j->joints[3 * 1999]) && j->fps == 100);
    am_joints_free(j);
    am_buf_free(&c);
}

static void dlc_padded_rows_are_budgeted(void)
{
    /* 100,000 bodyparts (300,001 columns, interned by hash) and rows of one cell, padded to
     * the header: refused under a 128 MiB budget before the rows are allocated. */
    const size_t P = 100000;
    am_buf b = {0};
    am_buf_printf(&b, "scorer");
    for (size_t k = 0; k < 3 * P; k++) am_buf_printf(&b, ",dlc");
    am_buf_printf(&b, "\nbodyparts");
    for (size_t k = 0; k < 3 * P; k++) am_buf_printf(&b, ",b%zu", k / 3);
    am_buf_printf(&b, "\ncoords");
    for (size_t k = 0; k < P; k++) am_buf_printf(&b, ",x,y,likelihood");
    am_buf_printf(&b, "\n");
    for (int t = 0; t < 300; t++) am_buf_printf(&b, "%d\n", t);
    AM_CHECK(!b.failed);
    am_mdet *d = NULL;
    am_error err = {0};
    am_import_opts o = {.fps = 30};
    am_scope sc;
    double t0 = cpu_now();
    budget_begin(&sc, (uint64_t)128 << 20);
    AM_CHECK_STATUS(am_import_2d_mem(b.data, b.len, "wide.csv", AM_TRACK_DLC_CSV, &o, &d, &err), AM_E_LIMIT);
    uint64_t peak = budget_end(&sc);
    double dt = cpu_now() - t0;
    AM_CHECK(d == NULL && strcmp(err.file, "wide.csv") == 0 && err.line == 4);
    AM_CHECK_MSG(peak < ((uint64_t)128 << 20) && dt < AMI_SCALE_SECONDS, "%llu bytes, %.2f s", (unsigned long long)peak,
                 dt);
    printf("     DeepLabCut CSV of 100000 bodyparts: header read and the rows refused in %.3f s CPU\n", dt);
    am_buf_free(&b);
}

static void anipose_and_mediapipe_rows_are_budgeted(void)
{
    /* anipose: 5,000 bodyparts, one row: read, and refused under 16 MiB */
    const size_t P = 5000;
    am_buf b = {0};
    for (size_t k = 0; k < P; k++) am_buf_printf(&b, "%sb%zu_x,b%zu_y,b%zu_z,b%zu_score", k ? "," : "", k, k, k, k);
    am_buf_printf(&b, ",fnum\n");
    for (size_t k = 0; k < 4 * P; k++) am_buf_printf(&b, "%s", k ? ",0.5" : "0.5");
    am_buf_printf(&b, ",0\n");
    am_joints *j = NULL;
    am_error err = {0};
    am_import_opts o = {.fps = 30, .scale = 1};
    AM_CHECK_OK(am_import_3d_mem(b.data, b.len, "pose.csv", AM_TRACK_ANIPOSE_CSV, &o, &j, &err), &err);
    if (j) AM_CHECK(j->joint_count == P && j->frame_count == 1 && strcmp(j->names[P - 1], "b4999") == 0);
    am_joints_free(j);
    j = NULL;
    am_scope sc;
    budget_begin(&sc, (uint64_t)16 << 20);
    AM_CHECK_STATUS(am_import_3d_mem(b.data, b.len, "pose.csv", AM_TRACK_ANIPOSE_CSV, &o, &j, &err), AM_E_LIMIT);
    budget_end(&sc);
    AM_CHECK(strcmp(err.file, "pose.csv") == 0 && err.line == 2);
    am_buf_free(&b);

    /* MediaPipe long CSV: a row of 12 bytes opens a frame of 33 landmarks */
    am_buf m = {0};
    am_buf_printf(&m, "frame,landmark,x,y\n");
    for (int t = 0; t < 3000; t++) am_buf_printf(&m, "%d,0,0.5,0.5\n", t);
    am_mdet *d = NULL;
    am_import_opts mo = {.width = 640, .height = 480, .fps = 30};
    AM_CHECK_OK(am_import_2d_mem(m.data, m.len, "lm.csv", AM_TRACK_MEDIAPIPE, &mo, &d, &err), &err);
    if (d) AM_CHECK(d->frame_count == 3000 && d->joint_count == 33 && d->uv[0] == 320.0f && isnan(d->uv[2]));
    am_mdet_free(d);
    d = NULL;
    budget_begin(&sc, (uint64_t)1 << 20);
    AM_CHECK_STATUS(am_import_2d_mem(m.data, m.len, "lm.csv", AM_TRACK_MEDIAPIPE, &mo, &d, &err), AM_E_LIMIT);
    uint64_t peak = budget_end(&sc);
    AM_CHECK(d == NULL && strcmp(err.file, "lm.csv") == 0 && err.line > 2 && peak < (1u << 20));
    am_buf_free(&m);
}

static void import_frame_rates_within_range(void)
{
    am_buf b = {0};
    trc_text(&b, 2, 3);
    am_joints *j = NULL;
    am_error err = {0};
    /* the caller's rate, used as given, must be one the writers take */
    const double bad[3] = {1e-300, 1e5, -30};
    for (int k = 0; k < 3; k++) {
        am_import_opts o = {.fps = bad[k]};
        AM_CHECK_STATUS(am_import_3d_mem(b.data, b.len, "r.trc", AM_TRACK_TRC, &o, &j, &err), AM_E_ARG);
        AM_CHECK(j == NULL && strstr(err.info, "fps"));
        am_mdet *d = NULL;
        AM_CHECK_STATUS(am_import_2d_mem("x", 1, "r.csv", AM_TRACK_DLC_CSV, &o, &d, &err), AM_E_ARG);
        AM_CHECK(d == NULL);
    }
    am_buf_free(&b);
    /* a C3D at 20 kHz: no joints.npz can hold its rate */
    c3d_img m;
    size_t len = c3d_write(&m, 84, false);
    c3d_f32(&m, 20, 20000.0);
    AM_CHECK_STATUS(am_import_3d_mem(m.b, len, "fast.c3d", AM_TRACK_C3D, NULL, &j, &err), AM_E_VALUE);
    AM_CHECK(j == NULL && strcmp(err.file, "fast.c3d") == 0 && strstr(err.info, "frame rate 20000"));
    c3d_f32(&m, 20, 10000.0);
    AM_CHECK_OK(am_import_3d_mem(m.b, len, "fast.c3d", AM_TRACK_C3D, NULL, &j, &err), &err);
    if (j) AM_CHECK(j->fps == 10000);
    am_joints_free(j);
}

static void hdf5_declared_dims_are_budgeted(void)
{
    /* 1.6 TB of tracks declared in chunks never written: a file of a few KiB */
    const char *p = am_test_tmp("huge.analysis.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[4] = {1, 2, 1000, 100000000}, chunk[4] = {1, 2, 10, 1000};
    hid_t sp = H5Screate_simple(4, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 4, chunk);
    hid_t ds = H5Dcreate2(f, "tracks", H5T_IEEE_F64LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    AM_CHECK(ds >= 0);
    H5Dclose(ds);
    H5Pclose(pl);
    H5Sclose(sp);
    H5Fclose(f);
    am_mdet *d = NULL;
    am_error err = {0};
    am_scope sc;
    double t0 = cpu_now();
    budget_begin(&sc, 0);
    AM_CHECK_STATUS(am_import_2d(p, AM_TRACK_AUTO, NULL, &d, &err), AM_E_LIMIT);
    uint64_t peak = budget_end(&sc);
    AM_CHECK(d == NULL && strstr(err.file, "huge.analysis.h5") && strstr(err.info, "'tracks'"));
    AM_CHECK_MSG(peak < (1u << 20) && cpu_now() - t0 < 1.0, "%llu bytes", (unsigned long long)peak);
}

#define AM_TESTS(X)                                                                                           \
    X(dlc_single_animal) X(dlc_multi_animal_empty_cells) X(dlc_labeled_data_short_row) X(dlc_refuses_bad_rows) \
    X(sleap_analysis_files) X(sleap_refuses_bad_files) X(openpose_folder) X(mediapipe_landmarks) X(trc_samples)  \
    X(c3d_matches_its_trc) X(c3d_every_processor_and_storage) X(anipose_csv) X(prefixes_are_refused_cleanly) X(det_files_round_trip)               \
    X(two_view_det_loads_as_two_cameras) X(joints_and_trc_round_trip) X(name_maps_rename_and_drop) \
    X(trc_short_rows_are_budgeted) X(dlc_padded_rows_are_budgeted) X(anipose_and_mediapipe_rows_are_budgeted)  \
    X(import_frame_rates_within_range) X(hdf5_declared_dims_are_budgeted)
AM_TEST_MAIN(AM_TESTS)
