/* Bounded by construction: inputs that promise gigabytes are refused from their headers before
 * anything is allocated (checked by the peak bytes of the call's scope), every reader accepts
 * only what its writer writes back equal, frame rates are sane, external buffers stay in
 * their folder, and rigs of 100,000 bones (star and chain), a 50,000-deep BVH and a
 * 100,000-node glTF chain load in linear time. The large inputs are generated here, at test
 * time; their time bounds are generous (the quadratic code took minutes) so a loaded machine
 * or a sanitizer build still passes. */
#include "am_test.h"

#include "anymove/bvh.h"
#include "anymove/gltf.h"
#include "anymove/io.h"
#include "anymove/opt.h"
#include "core/internal.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

/* CPU seconds a 100,000-element case may take: linear code needs about one (a few under
 * AddressSanitizer); the pairwise versions took 116 to over 200. CPU time, not wall time, so
 * a machine busy with other work does not fail the test. */
#define AMI_SCALE_SECONDS 20.0

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* ---- helpers ---------------------------------------------------------------------------- */

/* A scope with its own counters (a non-zero context never inherits the test's). */
static void meter_begin(am_scope *sc) { am_scope_enter(sc, &(am_context){.max_allocs = UINT64_MAX}); }

static uint64_t meter_end(am_scope *sc)
{
    uint64_t peak = am_scope_peak_bytes(sc);
    am_scope_leave(sc, NULL);
    return peak;
}

/* A .npy header as numpy writes it (padded to 64 bytes), then the data. */
static void npy_bytes(am_buf *b, const char *descr, const char *shape, const void *data,
                      size_t len)
{
    char h[256];
    int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
                     shape);
    size_t pad = (64 - (10 + (size_t)n + 1) % 64) % 64;
    size_t hl = (size_t)n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xFF),
                             (unsigned char)(hl >> 8)};
    am_buf_append(b, pre, sizeof pre);
    am_buf_append(b, h, (size_t)n);
    for (size_t i = 0; i < pad; i++) am_buf_append(b, " ", 1);
    am_buf_append(b, "\n", 1);
    if (len) am_buf_append(b, data, len);
}

/* Write members (deflated) into a zip at path. */
static void zip_members(const char *path, const char *const *names, am_buf *members, size_t n)
{
    int ze = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    AM_CHECK(za != NULL);
    if (!za) return;
    for (size_t i = 0; i < n; i++) {
        zip_source_t *s = zip_source_buffer(za, members[i].data, members[i].len, 0);
        zip_int64_t idx = s ? zip_file_add(za, names[i], s, 0) : -1;
        AM_CHECK(idx >= 0 && zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9) == 0);
    }
    AM_CHECK(zip_close(za) == 0);
}

static bool same_array(const am_array *a, const am_array *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->count != b->count) return false;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return false;
    if (a->dtype == AM_DTYPE_STR) {
        if (a->str_chars != b->str_chars) return false;
        for (size_t i = 0; i < a->count; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return false;
        return true;
    }
    return a->count == 0 || memcmp(a->data, b->data, a->count * am_dtype_size(a->dtype)) == 0;
}

/* ---- name maps --------------------------------------------------------------------------- */

static void names_map_finds_and_reports_duplicates(void)
{
    const char *names[] = {"hip", "knee", NULL, "hip.L", "knee"};
    ami_names m;
    size_t a = 0, b = 0;
    AM_CHECK_STATUS(ami_names_index(&m, names, 5, &a, &b), AM_E_DUPLICATE);
    AM_CHECK(a == 1 && b == 4);
    ami_names_free(&m);
    AM_CHECK_OK(ami_names_index(&m, names, 4, NULL, NULL), NULL);
    AM_CHECK(ami_names_find_str(&m, "hip") == 0 && ami_names_find_str(&m, "hip.L") == 3);
    AM_CHECK(ami_names_find(&m, "hip.L", 3) == 0); /* a prefix by length */
    AM_CHECK(ami_names_find_str(&m, "ankle") == -1 && ami_names_find_str(&m, NULL) == -1);
    ami_names_free(&m);
    /* growth keeps every entry */
    static char keys[20000][12];
    ami_names g = {0};
    for (int i = 0; i < 20000; i++) {
        snprintf(keys[i], sizeof keys[i], "b%d", i);
        int32_t prev;
        AM_CHECK_OK(ami_names_add(&g, keys[i], strlen(keys[i]), i, &prev), NULL);
        AM_CHECK(prev == -1);
    }
    int bad = 0;
    for (int i = 0; i < 20000; i++) bad += ami_names_find_str(&g, keys[i]) != i;
    AM_CHECK(bad == 0 && g.count == 20000 && g.cap >= 40000);
    ami_names_free(&g);
}

/* ---- scale: 100,000-bone rigs, a 50,000-deep BVH, a 100,000-node glTF chain -------------- */

/* rig.json as the hostile generator writes it: joints root, j0..j(n-1); bone b_i from the
 * previous joint (chain) or j0 (star) to j_i. */
static char *rig_json(size_t n, bool chain, size_t *len)
{
    am_buf b = {0};
    am_buf_printf(&b, "{\"name\": \"big\", \"joints\": {\"root\": [0, 0, 0]");
    for (size_t i = 0; i < n; i++) {
        double x = chain ? 0.001 * (double)(i + 1) : 0.1 * cos((double)i);
        double y = chain ? 0.0 : 0.1 * sin((double)i);
        double z = chain ? 0.001 * (double)(i + 1) : 0.2;
        am_buf_printf(&b, ", \"j%zu\": [%.17g, %.17g, %.17g]", i, x, y, z);
    }
    am_buf_printf(&b, "}, \"bones\": [");
    for (size_t i = 0; i < n; i++) {
        char head[32], parent[32];
        if (i == 0) snprintf(head, sizeof head, "root");
        else snprintf(head, sizeof head, "j%zu", chain ? i - 1 : 0);
        if (i == 0) snprintf(parent, sizeof parent, "null");
        else snprintf(parent, sizeof parent, "\"b%zu\"", chain ? i - 1 : 0);
        am_buf_printf(&b, "%s[\"b%zu\", \"%s\", \"j%zu\", %s]", i ? ", " : "", i, head, i, parent);
    }
    am_buf_printf(&b, "]}");
    AM_CHECK(!b.failed);
    *len = b.len;
    return b.data;
}

static void rig_of_100k_bones_builds_in_linear_time(void)
{
    const size_t n = 100000;
    for (int chain = 0; chain < 2; chain++) {
        size_t len = 0;
        char *text = rig_json(n, chain, &len);
        double t0 = cpu_now();
        am_rig *rig = NULL;
        am_error err = {0};
        AM_CHECK_OK(am_rig_parse(text, len, chain ? "chain.json" : "star.json", &rig, &err), &err);
        am_motion *mo = NULL;
        if (rig) AM_CHECK_OK(am_motion_create(rig, 2, 30, &mo, &err), &err);
        if (mo) AM_CHECK_OK(am_motion_compute_joints(mo, rig, &err), &err);
        double dt = cpu_now() - t0;
        AM_CHECK_MSG(dt < AMI_SCALE_SECONDS, "%s: %.2f s for %zu bones", chain ? "chain" : "star",
                     dt, n);
        if (rig && mo) {
            AM_CHECK(rig->bone_count == n && rig->joint_count == n + 1);
            /* parents-first file order is kept; lookups by name hit the right entries */
            AM_CHECK(am_rig_find_bone(rig, "b77777") == 77777);
            AM_CHECK(am_rig_find_joint(rig, "j77777") == 77778);
            AM_CHECK(rig->parent[77777] == (chain ? 77776 : 0));
            AM_CHECK(am_rig_find_bone(rig, "b100000") == -1);
            /* rest-pose FK of the last joint reproduces its position (chain: 100 m out) */
            const double *last = mo->joints + ((size_t)1 * rig->joint_count + n) * 3;
            const double *want = rig->joint_rest + 3 * n;
            for (int k = 0; k < 3; k++) AM_CHECK_NEAR(last[k], want[k], 1e-6 * (1 + fabs(want[k])));
        }
        printf("     %s rig of %zu bones: parse, build and FK of 2 frames %.3f s CPU\n",
               chain ? "chain" : "star", n, dt);
        am_motion_free(mo);
        am_rig_free(rig);
        am_free(text);
    }
}

static void fk_clip_of_deep_rig_matches_per_frame_fk(void)
{
    /* 300 bones: past the 128 poses kept on the stack */
    const size_t n = 300;
    size_t len = 0;
    char *text = rig_json(n, true, &len);
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    AM_CHECK_OK(am_rig_parse(text, len, "chain300.json", &rig, NULL), NULL);
    am_free(text);
    if (!rig) return;
    AM_CHECK_OK(am_motion_create(rig, 3, 30, &mo, NULL), NULL);
    if (!mo) return;
    for (size_t i = 0; i < 3 * n * 3; i++) mo->euler[i] = 0.01 * sin(0.7 * (double)i);
    for (size_t t = 0; t < 3; t++) mo->trans[3 * t] = 0.1 * (double)t;
    double *clip = malloc(3 * rig->joint_count * 3 * sizeof *clip);
    double *pose = malloc(n * 16 * sizeof *pose), *kp = malloc(rig->joint_count * 3 * sizeof *kp);
    am_rig_fk_clip(rig, mo, clip);
    int differ = 0;
    for (size_t t = 0; t < 3; t++) {
        am_rig_fk(rig, mo->trans + 3 * t, mo->root_quat + 4 * t, mo->euler + 3 * n * t, pose);
        am_rig_keypoints(rig, pose, kp);
        differ += memcmp(kp, clip + t * rig->joint_count * 3, rig->joint_count * 3 * sizeof *kp) != 0;
    }
    AM_CHECK_MSG(differ == 0, "%d of 3 frames differ from per-frame FK", differ);
    free(clip);
    free(pose);
    free(kp);
    am_motion_free(mo);
    am_rig_free(rig);
}

static void bvh_50000_deep_converts_in_linear_time(void)
{
    const size_t n = 50000;
    am_buf b = {0};
    am_buf_printf(&b, "HIERARCHY\nROOT J0\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition "
                      "Zposition Zrotation Xrotation Yrotation\n");
    for (size_t i = 1; i < n; i++)
        am_buf_printf(&b, "JOINT J%zu\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n", i);
    am_buf_printf(&b, "End Site\n{\nOFFSET 0 1 0\n}\n");
    for (size_t i = 0; i < n; i++) am_buf_append(&b, "}\n", 2);
    am_buf_printf(&b, "MOTION\nFrames: 1\nFrame Time: 0.0333\n");
    for (size_t i = 0; i < 6 + 3 * (n - 1); i++) am_buf_append(&b, i ? " 0" : "0", i ? 2 : 1);
    am_buf_append(&b, "\n", 1);
    AM_CHECK(!b.failed);

    double t0 = cpu_now();
    am_bvh *bvh = NULL, *back = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    am_buf out = {0};
    AM_CHECK_OK(am_bvh_parse(b.data, b.len, "deep.bvh", &bvh, &err), &err);
    if (bvh) AM_CHECK_OK(am_rig_from_bvh(bvh, NULL, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_bvh(bvh, rig, NULL, &mo, &err), &err);
    if (mo) AM_CHECK_OK(am_bvh_from_motion(rig, mo, NULL, &back, &err), &err);
    if (back) AM_CHECK_OK(am_bvh_to_buf(back, &out, &err), &err);
    double dt = cpu_now() - t0;
    AM_CHECK_MSG(dt < AMI_SCALE_SECONDS, "%.2f s for a %zu-deep BVH", dt, n);
    printf("     %zu-deep BVH: parse, rig, motion, back to BVH text %.3f s CPU\n", n, dt);
    if (mo) {
        /* the End Site of the last joint is n units up: world Z (the file is Y up) */
        int j = am_rig_find_joint(rig, "J49999_end");
        AM_CHECK(j >= 0 && rig->bone_count == n);
        if (j >= 0) AM_CHECK_NEAR(mo->joints[3 * (size_t)j + 2], (double)n, 1e-6 * (double)n);
    }
    /* indentation is capped: the text stays linear in the joints (full tabs: 1.25e9 bytes) */
    AM_CHECK_MSG(out.len < 40u << 20, "BVH text of %zu bytes", out.len);
    am_bvh_free(back);
    am_motion_free(mo);
    am_rig_free(rig);
    am_bvh_free(bvh);
    am_buf_free(&out);
    am_buf_free(&b);
}

static void gltf_100000_node_chain_rigs_in_linear_time(void)
{
    const size_t n = 100000;
    am_buf b = {0};
    am_buf_printf(&b, "{\"asset\": {\"version\": \"2.0\"}, \"scenes\": [{\"nodes\": [0]}], \"nodes\": [");
    for (size_t i = 0; i < n; i++) {
        am_buf_printf(&b, "%s{\"name\": \"b%zu\", \"translation\": [0, 0.01, 0]", i ? ", " : "", i);
        if (i + 1 < n) am_buf_printf(&b, ", \"children\": [%zu]", i + 1);
        am_buf_append(&b, "}", 1);
    }
    am_buf_printf(&b, "], \"skins\": [{\"joints\": [");
    for (size_t i = 0; i < n; i++) am_buf_printf(&b, "%s%zu", i ? ", " : "", i);
    am_buf_printf(&b, "]}]}");
    AM_CHECK(!b.failed);

    double t0 = cpu_now();
    am_gltf *doc = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_read_mem(b.data, b.len, "chain.gltf", NULL, NULL, &doc, &err), &err);
    if (doc) AM_CHECK_OK(am_rig_from_gltf(doc, 0, &rig, &err), &err);
    if (rig) AM_CHECK_OK(am_motion_from_gltf(doc, 0, rig, -1, 30, &mo, &err), &err);
    double dt = cpu_now() - t0;
    AM_CHECK_MSG(dt < AMI_SCALE_SECONDS, "%.2f s for a %zu-node chain", dt, n);
    printf("     %zu-node glTF chain: read, rig, rest motion %.3f s CPU\n", n, dt);
    if (mo) {
        AM_CHECK(rig->bone_count == n && rig->parent[n - 1] == (int32_t)n - 2);
        AM_CHECK(am_rig_find_bone(rig, "b99999") == (int)n - 1);
        /* no inverse bind matrices: every bind head at the origin, so each bone gets the
         * 1 cm fallback along its node's Y axis (glTF Y = world Z); the rest motion gives
         * every bone the loc of its node's 1 cm translation, so FK puts node i where the file
         * does, 1 cm x (i + 1) up, and the last bone's end 1 cm above node 99999 */
        int j = am_rig_find_joint(rig, "b99999_end");
        AM_CHECK(j >= 0 && rig->length[n - 1] > 0.0099 && rig->length[n - 1] < 0.0101);
        if (j >= 0) AM_CHECK_NEAR(mo->joints[3 * (size_t)j + 2], 0.01 * (double)n + 0.01, 1e-6);
    }
    am_motion_free(mo);
    am_rig_free(rig);
    am_gltf_free(doc);
    am_buf_free(&b);
}

/* ---- npy: the reader and the writer agree on every dtype --------------------------------- */

static int roundtrip_npy_file(const char *path)
{
    size_t len = 0;
    char *data = NULL;
    if (am_file_read(path, 0, &data, &len, NULL) != AM_OK) {
        am_test_fail(__FILE__, __LINE__, "cannot read %s", path);
        return 0;
    }
    am_array a, back;
    am_npz_opts opts = {.max_bytes = (uint64_t)256 << 20};
    int accepted = 0;
    if (am_npy_parse(data, len, &opts, &a, NULL) == AM_OK) {
        accepted = 1;
        am_buf out = {0};
        am_error err = {0};
        am_scope sc;
        meter_begin(&sc);
        am_status s = am_npy_serialize(&a, &out, &err);
        uint64_t peak = meter_end(&sc);
        AM_CHECK_MSG(s == AM_OK, "%s: accepted but not written back (%s)", path, err.info);
        /* the writer allocates its output, nothing of an item's width alone */
        AM_CHECK_MSG(peak <= 2 * out.cap + 4096, "%s: %llu bytes peak for %zu bytes of output",
                     path, (unsigned long long)peak, out.len);
        if (s == AM_OK) {
            s = am_npy_parse(out.data, out.len, &opts, &back, &err);
            AM_CHECK_MSG(s == AM_OK, "%s: written back, then refused (%s)", path, err.info);
            if (s == AM_OK) {
                AM_CHECK_MSG(same_array(&a, &back), "%s: read back different", path);
                am_array_clear(&back);
            }
        }
        am_buf_free(&out);
        am_array_clear(&a);
    }
    am_free(data);
    return accepted;
}

static int roundtrip_npz_file(const char *path)
{
    am_npz *z = NULL, *back = NULL;
    am_npz_opts opts = {.max_bytes = (uint64_t)256 << 20};
    if (am_npz_load(path, &opts, &z, NULL) != AM_OK) return 0;
    const char *copy = am_test_tmp("roundtrip.npz");
    am_error err = {0};
    am_status s = am_npz_write(copy, z->arrays, z->count, false, &err);
    AM_CHECK_MSG(s == AM_OK, "%s: accepted but not written back (%s)", path, err.info);
    if (s == AM_OK) {
        s = am_npz_load(copy, &opts, &back, &err);
        AM_CHECK_MSG(s == AM_OK, "%s: written back, then refused (%s)", path, err.info);
    }
    if (back) {
        AM_CHECK(back->count == z->count);
        for (size_t i = 0; i < z->count && i < back->count; i++)
            AM_CHECK_MSG(strcmp(z->arrays[i].name, back->arrays[i].name) == 0 &&
                             same_array(&z->arrays[i], &back->arrays[i]),
                         "%s: array '%s' read back different", path, z->arrays[i].name);
    }
    am_npz_free(back);
    am_npz_free(z);
    return 1;
}

/* Every regular file of dir through fn; returns (files, accepted). */
static void each_file(const char *dir, int (*fn)(const char *), int *files, int *accepted)
{
    DIR *d = opendir(dir);
    AM_CHECK_MSG(d != NULL, "missing folder %s", dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        (*files)++;
        *accepted += fn(p);
    }
    closedir(d);
}

static void npy_and_npz_corpora_roundtrip(void)
{
    int files = 0, accepted = 0;
    each_file(am_test_source("fuzz/corpus/npy"), roundtrip_npy_file, &files, &accepted);
    each_file(am_test_source("fuzz/crashes/npy"), roundtrip_npy_file, &files, &accepted);
    printf("     npy: %d files, %d accepted and round-tripped\n", files, accepted);
    AM_CHECK(files >= 20 && accepted >= 15);
    files = accepted = 0;
    each_file(am_test_source("fuzz/corpus/npz"), roundtrip_npz_file, &files, &accepted);
    printf("     npz: %d files, %d accepted and round-tripped\n", files, accepted);
    AM_CHECK(files >= 10 && accepted >= 5);
}

static void npy_u0_and_wide_empty_strings_roundtrip(void)
{
    /* the fuzzer's two finds, as files in the shared hostile folder */
    AM_CHECK(roundtrip_npy_file(am_test_shared("data/hostile/crash-8c75e4e69a92dbc3c7eed03abe5e2987f71ec979")));
    AM_CHECK(roundtrip_npy_file(am_test_shared("data/hostile/oom-76cb716e45f3a7e4bbcab0c6fe25bb8058a8b4b5")));
    /* '<U0' stays '<U0', every string empty */
    am_buf b = {0};
    npy_bytes(&b, "<U0", "(5,)", NULL, 0);
    am_array a;
    AM_CHECK_OK(am_npy_parse(b.data, b.len, NULL, &a, NULL), NULL);
    AM_CHECK(a.count == 5 && a.str_chars == 0 && a.strings && a.strings[4][0] == '\0');
    am_buf out = {0};
    AM_CHECK_OK(am_npy_serialize(&a, &out, NULL), NULL);
    AM_CHECK(out.data && strstr(out.data + 10, "'<U0'") != NULL);
    am_array_clear(&a);
    am_buf_free(&out);
    am_buf_free(&b);
}

/* ---- budgets: refused from the headers, before allocating -------------------------------- */

static void npy_strings_cost_what_decoding_allocates(void)
{
    /* 1e8 empty strings: no data bytes, ~7 GB of pointers and allocations */
    am_buf b = {0};
    npy_bytes(&b, "<U0", "(100000000,)", NULL, 0);
    am_buf m[1] = {b};
    const char *names[1] = {"names.npy"};
    const char *path = am_test_tmp("u0.npz");
    zip_members(path, names, m, 1);
    am_npz *z = NULL;
    am_error err = {0};
    am_scope sc;
    meter_begin(&sc);
    AM_CHECK_STATUS(am_npz_load(path, NULL, &z, &err), AM_E_LIMIT);
    uint64_t peak = meter_end(&sc);
    AM_CHECK(strstr(err.file, "u0.npz") && strstr(err.info, "names.npy"));
    AM_CHECK_MSG(peak < (1u << 20), "%llu bytes before refusing", (unsigned long long)peak);
    am_buf_free(&b);
}

static void npz_member_larger_than_its_header_is_not_inflated(void)
{
    /* a [30,300,3] float header in front of 64 MiB of zeros (deflated to ~64 KiB) */
    size_t big = (size_t)64 << 20;
    unsigned char *zeros = calloc(big, 1);
    am_buf pts = {0};
    npy_bytes(&pts, "<f4", "(30, 300, 3)", zeros, big);
    free(zeros);
    am_buf m[1] = {pts};
    const char *names[1] = {"points.npy"};
    const char *path = am_test_tmp("bomb.npz");
    zip_members(path, names, m, 1);
    am_buf_free(&pts);
    am_npz *z = NULL;
    am_error err = {0};
    am_scope sc;
    meter_begin(&sc);
    double t0 = cpu_now();
    AM_CHECK_STATUS(am_npz_load(path, NULL, &z, &err), AM_E_FORMAT);
    double dt = cpu_now() - t0;
    uint64_t peak = meter_end(&sc);
    AM_CHECK(strstr(err.file, "bomb.npz") && strstr(err.info, "promises"));
    AM_CHECK_MSG(peak < (1u << 20), "%llu bytes before refusing", (unsigned long long)peak);
    AM_CHECK_MSG(dt < 2.0, "%.2f s: the member was inflated", dt);
}

/* The npz fuzzer's find: a header shorter than the 12 bytes read to learn its length. */
static void npz_member_with_a_short_header_refused(void)
{
    am_buf m[1] = {{0}};
    am_buf_append(&m[0], "\x93NUMPY\x01\x00\x00\x00{}", 12);
    const char *names[1] = {"a.npy"};
    const char *path = am_test_tmp("short.npz");
    zip_members(path, names, m, 1);
    am_buf_free(&m[0]);
    am_npz *z = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_npz_load(path, NULL, &z, &err), AM_E_FORMAT);
    AM_CHECK(z == NULL && strstr(err.info, "a.npy"));
}

static void tracks_shapes_checked_before_any_member_is_inflated(void)
{
    /* points [200,20000,3] (48 MB of zeros) beside a visible of the wrong shape */
    size_t np = (size_t)200 * 20000 * 3 * 4;
    unsigned char *zeros = calloc(np, 1);
    am_buf m[2] = {{0}, {0}};
    npy_bytes(&m[0], "<f4", "(200, 20000, 3)", zeros, np);
    npy_bytes(&m[1], "|b1", "(30, 300)", zeros, 9000);
    free(zeros);
    const char *names[2] = {"points.npy", "visible.npy"};
    const char *path = am_test_tmp("mismatch.tracks.npz");
    zip_members(path, names, m, 2);
    am_buf_free(&m[0]);
    am_buf_free(&m[1]);
    am_tracks *tr = NULL;
    am_error err = {0};
    am_scope sc;
    meter_begin(&sc);
    AM_CHECK_STATUS(am_tracks_load(path, &tr, &err), AM_E_SHAPE);
    uint64_t peak = meter_end(&sc);
    AM_CHECK(strstr(err.file, "mismatch.tracks.npz") && strstr(err.info, "visible"));
    AM_CHECK_MSG(peak < (1u << 20), "%llu bytes before refusing", (unsigned long long)peak);
}

static void loaders_refuse_over_the_scope_budget_with_limit(void)
{
    /* a context's max_bytes turns into AM_E_LIMIT (the input's fault, naming it) before the
     * big allocation, not AM_E_NOMEM from inside it */
    am_scope sc;
    am_context ctx = {.max_bytes = 256u << 10};
    am_error err = {0};

    am_buf b = {0};
    am_buf_printf(&b, "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition "
                      "Zposition Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n"
                      "MOTION\nFrames: 20000\nFrame Time: 0.01\n");
    for (int t = 0; t < 20000; t++) am_buf_printf(&b, "0 0 0 0 0 0\n");
    am_bvh *bvh = NULL;
    am_scope_enter(&sc, &ctx);
    AM_CHECK_STATUS(am_bvh_parse(b.data, b.len, "long.bvh", &bvh, &err), AM_E_LIMIT);
    am_scope_leave(&sc, NULL);
    AM_CHECK(strcmp(err.file, "long.bvh") == 0 && strstr(err.info, "Frames: 20000"));
    AM_CHECK(err.line == 12);
    AM_CHECK_OK(am_bvh_parse(b.data, b.len, "long.bvh", &bvh, &err), &err);
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    if (bvh) AM_CHECK_OK(am_rig_from_bvh(bvh, NULL, &rig, &err), &err);
    if (rig) {
        am_scope_enter(&sc, &ctx);
        AM_CHECK_STATUS(am_motion_from_bvh(bvh, rig, NULL, &mo, &err), AM_E_LIMIT);
        am_scope_leave(&sc, NULL);
        AM_CHECK(strcmp(err.file, "long.bvh") == 0 && strstr(err.info, "20000 frames"));
        AM_CHECK(mo == NULL);
    }
    am_rig_free(rig);
    am_bvh_free(bvh);
    am_buf_free(&b);

    /* JSON: jansson's tree is estimated from the text */
    am_buf j = {0};
    am_buf_printf(&j, "{\"joints\": {\"a\": [0, 0, 0]}, \"bones\": [], \"pad\": [0");
    for (int i = 0; i < 20000; i++) am_buf_append(&j, ",0", 2);
    am_buf_printf(&j, "]}");
    am_scope_enter(&sc, &ctx);
    AM_CHECK_STATUS(am_rig_parse(j.data, j.len, "padded.json", &rig, &err), AM_E_LIMIT);
    am_scope_leave(&sc, NULL);
    AM_CHECK(strcmp(err.file, "padded.json") == 0);
    am_buf_free(&j);
}

static void gltf_clip_length_budgeted_before_sampling(void)
{
    /* one joint, one keyframe pair spanning 333,000 s */
    const char *gltf =
        "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [{\"name\": \"a\", \"children\": [1]},"
        " {\"name\": \"b\", \"translation\": [0, 1, 0]}], \"skins\": [{\"joints\": [0, 1]}],"
        " \"buffers\": [{\"byteLength\": 32, \"uri\": \"data:application/octet-stream;base64,"
        "AAAAAACZokgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}],"
        " \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 8}, {\"buffer\": 0, \"byteOffset\": 8,"
        " \"byteLength\": 24}],"
        " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 2, \"type\": \"SCALAR\","
        " \"min\": [0], \"max\": [333000]}, {\"bufferView\": 1, \"componentType\": 5126, \"count\": 2,"
        " \"type\": \"VEC3\"}],"
        " \"animations\": [{\"samplers\": [{\"input\": 0, \"output\": 1}],"
        " \"channels\": [{\"sampler\": 0, \"target\": {\"node\": 0, \"path\": \"translation\"}}]}]}";
    am_gltf *doc = NULL;
    am_rig *rig = NULL;
    am_motion *mo = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_gltf_read_mem(gltf, strlen(gltf), "long.gltf", NULL, NULL, &doc, &err), &err);
    if (doc) AM_CHECK_OK(am_rig_from_gltf(doc, 0, &rig, &err), &err);
    if (!rig) {
        am_gltf_free(doc);
        return;
    }
    AM_CHECK_NEAR(doc->animations[0].t_max, 333000.0, 1.0);
    am_scope sc;
    meter_begin(&sc);
    double t0 = cpu_now();
    AM_CHECK_STATUS(am_motion_from_gltf(doc, 0, rig, 0, 30, &mo, &err), AM_E_LIMIT);
    double dt = cpu_now() - t0;
    uint64_t peak = meter_end(&sc);
    AM_CHECK(strcmp(err.file, "long.gltf") == 0 && strstr(err.info, "9990001 frames"));
    AM_CHECK_MSG(peak < (1u << 20) && dt < 1.0, "%llu bytes, %.2f s before refusing",
                 (unsigned long long)peak, dt);
    /* the same clip at a frame rate no float time can step is an argument error */
    AM_CHECK_STATUS(am_motion_from_gltf(doc, 0, rig, 0, 1e-300, &mo, &err), AM_E_ARG);
    AM_CHECK_STATUS(am_motion_from_gltf(doc, 0, rig, 0, 1e5, &mo, &err), AM_E_ARG);
    /* 0.001 fps: 334 frames, fine */
    AM_CHECK_OK(am_motion_from_gltf(doc, 0, rig, 0, 1e-3, &mo, &err), &err);
    AM_CHECK(mo && mo->frame_count == 334);
    am_motion_free(mo);
    am_rig_free(rig);
    am_gltf_free(doc);

    /* within the byte budget (1.3e6 frames x 2 bones, loc counted) but 1.3e6 frames x 200 nodes
     * of work */
    am_buf b = {0};
    const char *nodes = strstr(gltf, "{\"name\": \"b\"");
    am_buf_append(&b, gltf, (size_t)(strchr(nodes, '}') + 1 - gltf));
    for (int i = 0; i < 198; i++) am_buf_printf(&b, ", {\"name\": \"filler%d\"}", i);
    am_buf_printf(&b, "%s", strchr(nodes, '}') + 1);
    mo = NULL;
    rig = NULL;
    AM_CHECK_OK(am_gltf_read_mem(b.data, b.len, "busy.gltf", NULL, NULL, &doc, &err), &err);
    if (doc) AM_CHECK_OK(am_rig_from_gltf(doc, 0, &rig, &err), &err);
    if (rig) {
        AM_CHECK(doc->node_count == 200);
        t0 = cpu_now();
        AM_CHECK_STATUS(am_motion_from_gltf(doc, 0, rig, 0, 4, &mo, &err), AM_E_LIMIT);
        AM_CHECK(strcmp(err.file, "busy.gltf") == 0 && strstr(err.info, "nodes to evaluate"));
        AM_CHECK(cpu_now() - t0 < 1.0);
    }
    am_rig_free(rig);
    am_gltf_free(doc);
    am_buf_free(&b);
}

/* ---- frame rates: 1e-3 to 1e4, checked at load ------------------------------------------- */

static void frame_rates_outside_range_refused_at_load(void)
{
    am_error err = {0};
    /* det.npz with fps 1e-300: solve used to run 14 s and then fail on its GLB. The writers
     * refuse what the readers refuse, so the file is assembled from its arrays. */
    float uv[3 * 2 * 2] = {0}, conf[3 * 2] = {0};
    const char *jn[2] = {"a", "b"};
    am_det det = {.frame_count = 3, .joint_count = 2, .front_uv = uv, .side_uv = uv,
                  .front_conf = conf, .side_conf = conf, .fps = 1e-300, .names = (char **)jn};
    const char *dp = am_test_tmp("slow.det.npz");
    AM_CHECK_STATUS(am_det_write(dp, &det, &err), AM_E_ARG);
    size_t s_uv[3] = {3, 2, 2}, s_conf[2] = {3, 2}, s_names[1] = {2};
    double slow = 1e-300;
    am_array arrs[6] = {am_array_view("front_uv", AM_DTYPE_F32, 3, s_uv, uv),
                        am_array_view("side_uv", AM_DTYPE_F32, 3, s_uv, uv),
                        am_array_view("front_conf", AM_DTYPE_F32, 2, s_conf, conf),
                        am_array_view("side_conf", AM_DTYPE_F32, 2, s_conf, conf),
                        am_array_view("fps", AM_DTYPE_F64, 0, NULL, &slow),
                        am_array_view("names", AM_DTYPE_STR, 1, s_names, jn)};
    AM_CHECK_OK(am_npz_write(dp, arrs, 6, false, &err), &err);
    am_det *d = NULL;
    AM_CHECK_STATUS(am_det_load(dp, &d, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.file, "slow.det.npz") && strstr(err.info, "fps = 1e-300"));
    det.fps = 30;
    AM_CHECK_OK(am_det_write(dp, &det, &err), &err);
    AM_CHECK_OK(am_det_load(dp, &d, &err), &err);
    am_det_free(d);

    float pts[2 * 1 * 3] = {0};
    am_tracks tr = {.frame_count = 2, .point_count = 1, .points = pts, .fps = 2e4};
    const char *tp = am_test_tmp("fast.tracks.npz");
    AM_CHECK_STATUS(am_tracks_write(tp, &tr, &err), AM_E_ARG);
    size_t s_pts[3] = {2, 1, 3};
    double fast = 2e4;
    am_array tarrs[2] = {am_array_view("points", AM_DTYPE_F32, 3, s_pts, pts),
                         am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fast)};
    AM_CHECK_OK(am_npz_write(tp, tarrs, 2, false, &err), &err);
    am_tracks *t = NULL;
    AM_CHECK_STATUS(am_tracks_load(tp, &t, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.info, "fps = 20000"));

    const char *bvh = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n"
                      "MOTION\nFrames: 1\nFrame Time: 1e-6\n\n";
    am_bvh *b = NULL;
    AM_CHECK_STATUS(am_bvh_parse(bvh, strlen(bvh), "fast.bvh", &b, &err), AM_E_VALUE);
    AM_CHECK(err.line == 13 && strstr(err.info, "Frame Time 1e-06"));
}

/* The BVH fuzzer's find: a joint name with a NUL byte was hashed past its copy's end. */
static void bvh_joint_name_with_nul_refused(void)
{
    static const char text[] = "HIERARCHY\nROOT Hi\0ps\n{\nOFFSET 0 0 0\nCHANNELS 0\n"
                               "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 1\n"
                               "Frame Time: 0.1\n\n";
    am_bvh *b = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_bvh_parse(text, sizeof text - 1, "nul.bvh", &b, &err), AM_E_SYNTAX);
    AM_CHECK(err.line == 2 && strstr(err.info, "NUL"));
}

/* ---- external files stay inside the document's folder ------------------------------------ */

static void files_are_read_only_inside_their_folder(void)
{
    char dir[600], inside[700], outside[700], link_out[700], link_in[700];
    snprintf(dir, sizeof dir, "%s/model", am_test_tmpdir());
    mkdir(dir, 0755);
    snprintf(inside, sizeof inside, "%s/data.bin", dir);
    snprintf(outside, sizeof outside, "%s/secret.txt", am_test_tmpdir());
    snprintf(link_out, sizeof link_out, "%s/link.bin", dir);
    snprintf(link_in, sizeof link_in, "%s/alias.bin", dir);
    AM_CHECK_OK(am_file_write(inside, "0123", 4, NULL), NULL);
    AM_CHECK_OK(am_file_write(outside, "secret", 6, NULL), NULL);
    unlink(link_out);
    unlink(link_in);
    AM_CHECK(symlink(outside, link_out) == 0 && symlink("data.bin", link_in) == 0);
    char *data = NULL;
    size_t len = 0;
    am_error err = {0};
    AM_CHECK_OK(ami_file_read_within(dir, inside, 0, &data, &len, &err), &err);
    AM_CHECK(len == 4);
    am_free(data);
    AM_CHECK_OK(ami_file_read_within(dir, link_in, 0, &data, &len, &err), &err);
    am_free(data);
    AM_CHECK_STATUS(ami_file_read_within(dir, link_out, 0, &data, &len, &err), AM_E_UNSUPPORTED);
    AM_CHECK(data == NULL && strstr(err.info, "outside") && strstr(err.file, "link.bin"));
    /* ".." through a real folder is resolved the same way */
    char up[800];
    snprintf(up, sizeof up, "%s/../secret.txt", dir);
    AM_CHECK_STATUS(ami_file_read_within(dir, up, 0, &data, &len, &err), AM_E_UNSUPPORTED);
    AM_CHECK_STATUS(ami_file_read_within(dir, "/nonexistent/x", 0, &data, &len, &err), AM_E_READ);
}


static void sparse_factor_counted_against_the_scope(void)
{
    /* CHOLMOD allocates with its own malloc; the factor's size (known after the symbolic
     * analysis) is charged to the call: a small max_bytes refuses it with AM_E_LIMIT before
     * the numeric work, a large one lets it through and its peak shows the factor */
    enum { N = 20000 };
    int32_t *r = malloc(sizeof(int32_t) * 2 * N), *c = malloc(sizeof(int32_t) * 2 * N);
    double *v = malloc(sizeof(double) * 2 * N);
    AM_CHECK(r && c && v);
    size_t k = 0;
    for (int i = 0; i < N; i++) {
        r[k] = c[k] = i, v[k++] = 3; /* 1D Laplacian + identity: positive definite */
        if (i + 1 < N) r[k] = i + 1, c[k] = i, v[k++] = -1;
    }
    am_sparse_chol *f = NULL;
    am_error err = {0};
    am_scope sc;
    am_context small = {.max_bytes = 256u << 10}, big = {.max_bytes = 256u << 20};
    am_scope_enter(&sc, &small);
    AM_CHECK_STATUS(am_sparse_cholesky(N, k, r, c, v, &f, &err), AM_E_LIMIT);
    am_scope_leave(&sc, NULL);
    AM_CHECK(f == NULL && strstr(err.info, "sparse Cholesky factor of 20000 x 20000"));
    am_scope_enter(&sc, &big);
    AM_CHECK_OK(am_sparse_cholesky(N, k, r, c, v, &f, &err), &err);
    uint64_t peak = am_scope_peak_bytes(&sc);
    am_sparse_cholesky_free(f);
    am_scope_leave(&sc, NULL);
    /* L alone: at least N diagonal and N-1 subdiagonal doubles */
    AM_CHECK(peak >= (uint64_t)(2 * N - 1) * sizeof(double));
    free(r), free(c), free(v);
}

#define AM_TESTS(X)                                                                              \
    X(names_map_finds_and_reports_duplicates)                                                    \
    X(rig_of_100k_bones_builds_in_linear_time)                                                   \
    X(fk_clip_of_deep_rig_matches_per_frame_fk)                                                  \
    X(bvh_50000_deep_converts_in_linear_time)                                                    \
    X(gltf_100000_node_chain_rigs_in_linear_time)                                                \
    X(npy_and_npz_corpora_roundtrip)                                                             \
    X(npy_u0_and_wide_empty_strings_roundtrip)                                                   \
    X(npy_strings_cost_what_decoding_allocates)                                                  \
    X(npz_member_larger_than_its_header_is_not_inflated)                                         \
    X(npz_member_with_a_short_header_refused)                                                    \
    X(tracks_shapes_checked_before_any_member_is_inflated)                                       \
    X(loaders_refuse_over_the_scope_budget_with_limit)                                           \
    X(gltf_clip_length_budgeted_before_sampling)                                                 \
    X(frame_rates_outside_range_refused_at_load)                                                 \
    X(bvh_joint_name_with_nul_refused)                                                           \
    X(files_are_read_only_inside_their_folder)                                                   \
    X(sparse_factor_counted_against_the_scope)
AM_TEST_MAIN(AM_TESTS)
