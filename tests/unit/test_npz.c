/* .npy / .npz / tracks.npz / det.npz: golden files written by numpy, round trips of every
 * dtype, truncation and allocation-failure sweeps, and hand-made malformed inputs. */
#include "am_test.h"

#include "anymove/io.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
    char *data = NULL;
    am_error err = {0};
    if (am_file_read(path, 0, &data, len, &err) != AM_OK) {
        char m[600];
        am_test_fail(__FILE__, __LINE__, "cannot read %s: %s", path,
                     am_error_format(m, sizeof m, &err));
        return NULL;
    }
    return data;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A hand-made .npy: magic, version, header (padded to 64 as numpy does), then data. */
static void make_npy(am_buf *b, int major, const char *header, const void *data, size_t len)
{
    size_t lensz = major == 1 ? 2 : 4;
    size_t hl = strlen(header) + 1;
    size_t pad = (64 - (6 + 2 + lensz + hl) % 64) % 64;
    size_t total = hl + pad;
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    for (size_t i = 0; i < lensz; i++) pre[8 + i] = (unsigned char)(total >> (8 * i));
    am_buf_append(b, pre, 8 + lensz);
    am_buf_append(b, header, hl - 1);
    for (size_t i = 0; i < pad; i++) am_buf_append(b, " ", 1);
    am_buf_append(b, "\n", 1);
    if (len) am_buf_append(b, data, len);
}

static am_status parse_hdr(int major, const char *header, const void *data, size_t len,
                           am_array *arr, am_error *err)
{
    am_buf b = {0};
    make_npy(&b, major, header, data, len);
    am_status s = am_npy_parse(b.data, b.len, NULL, arr, err);
    am_buf_free(&b);
    return s;
}

static double sum_f64(const am_array *a)
{
    double *v = malloc((a->count ? a->count : 1) * sizeof *v);
    double s = 0;
    if (am_array_to_f64(a, v, NULL) == AM_OK)
        for (size_t i = 0; i < a->count; i++) s += v[i];
    free(v);
    return s;
}

static double elem_f64(const am_array *a, size_t i)
{
    double *v = malloc((a->count ? a->count : 1) * sizeof *v);
    double r = NAN;
    if (am_array_to_f64(a, v, NULL) == AM_OK && i < a->count) r = v[i];
    free(v);
    return r;
}

static bool arrays_equal(const am_array *a, const am_array *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->count != b->count) return false;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return false;
    if (a->dtype == AM_DTYPE_STR) {
        for (size_t i = 0; i < a->count; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return false;
        return true;
    }
    return a->count == 0 || memcmp(a->data, b->data, a->count * am_dtype_size(a->dtype)) == 0;
}

/* Build a tiny zip by hand through libzip (for archives our writer refuses to make). */
static void write_zip(const char *path, const char *const *names, const am_buf *members,
                      size_t count)
{
    int ze = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    AM_CHECK(za != NULL);
    if (!za) return;
    for (size_t i = 0; i < count; i++) {
        zip_source_t *s = zip_source_buffer(za, members[i].data, members[i].len, 0);
        AM_CHECK(s && zip_file_add(za, names[i], s, 0) >= 0);
    }
    AM_CHECK(zip_close(za) == 0);
}

/* ---- golden files ------------------------------------------------------------------------ */

static am_dtype dtype_of(const char *descr)
{
    const char *k = descr + 1;
    if (strcmp(k, "f4") == 0) return AM_DTYPE_F32;
    if (strcmp(k, "f8") == 0) return AM_DTYPE_F64;
    if (strcmp(k, "i4") == 0) return AM_DTYPE_I32;
    if (strcmp(k, "i8") == 0) return AM_DTYPE_I64;
    if (strcmp(k, "u1") == 0) return AM_DTYPE_U8;
    if (strcmp(k, "b1") == 0) return AM_DTYPE_BOOL;
    if (k[0] == 'U') return AM_DTYPE_STR;
    return AM_DTYPE_COUNT;
}

static void flatten_numbers(json_t *v, double *out, size_t *n, size_t cap)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) flatten_numbers(e, out, n, cap);
    } else if (json_is_number(v) && *n < cap) {
        out[(*n)++] = json_number_value(v);
    }
}

static void check_array(const char *file, const char *name, const am_array *a, json_t *want)
{
    const char *descr = json_string_value(json_object_get(want, "dtype"));
    AM_CHECK_MSG(a->dtype == dtype_of(descr), "%s/%s: dtype %s, want %s", file, name,
                 am_dtype_name(a->dtype), descr);
    AM_CHECK_MSG(a->was_big_endian == (descr[0] == '>'), "%s/%s: big endian flag", file, name);
    json_t *shape = json_object_get(want, "shape");
    AM_CHECK_MSG(a->ndim == (int)json_array_size(shape), "%s/%s: ndim %d", file, name, a->ndim);
    size_t count = 1;
    for (size_t k = 0; k < json_array_size(shape) && k < AM_MAX_DIMS; k++) {
        size_t d = (size_t)json_integer_value(json_array_get(shape, k));
        AM_CHECK_MSG(a->shape[k] == d, "%s/%s: shape[%zu] = %zu, want %zu", file, name, k,
                     a->shape[k], d);
        count *= d;
    }
    AM_CHECK(a->count == count);
    json_t *v;
    if ((v = json_object_get(want, "fortran_order"))) AM_CHECK(a->was_fortran == json_is_true(v));
    if ((v = json_object_get(want, "sum"))) AM_CHECK_NEAR(sum_f64(a), json_number_value(v), 1e-4);
    if ((v = json_object_get(want, "value"))) {
        double s = NAN;
        AM_CHECK_OK(am_array_scalar(a, &s, NULL), NULL);
        AM_CHECK_NEAR(s, json_number_value(v), 1e-12);
    }
    json_t *first = json_object_get(want, "first");
    if (!first) first = json_object_get(want, "first_c_order");
    if (first) {
        for (size_t i = 0; i < json_array_size(first); i++)
            AM_CHECK_NEAR(elem_f64(a, i), json_number_value(json_array_get(first, i)), 1e-7);
    }
    if ((v = json_object_get(want, "true_count"))) {
        size_t n = 0;
        for (size_t i = 0; i < a->count; i++) n += ((const uint8_t *)a->data)[i] != 0;
        AM_CHECK_MSG(n == (size_t)json_integer_value(v), "%s/%s: true_count %zu", file, name, n);
    }
    if ((v = json_object_get(want, "values"))) {
        if (a->dtype == AM_DTYPE_STR) {
            AM_CHECK(json_array_size(v) == a->count);
            for (size_t i = 0; i < a->count && i < json_array_size(v); i++)
                AM_CHECK_MSG(strcmp(a->strings[i], json_string_value(json_array_get(v, i))) == 0,
                             "%s/%s[%zu] = '%s'", file, name, i, a->strings[i]);
        } else {
            double want_v[64];
            size_t n = 0;
            flatten_numbers(v, want_v, &n, 64);
            AM_CHECK(n == a->count);
            for (size_t i = 0; i < n; i++) AM_CHECK_NEAR(elem_f64(a, i), want_v[i], 0);
        }
    }
}

static am_status expected_error(const char *file)
{
    if (strcmp(file, "object.npz") == 0) return AM_E_UNSUPPORTED;
    if (strcmp(file, "truncated.npz") == 0) return AM_E_TRUNCATED;
    if (strcmp(file, "shape_lie.npz") == 0) return AM_E_SHAPE;
    if (strcmp(file, "not_zip.npz") == 0) return AM_E_FORMAT;
    return AM_E_INTERNAL;
}

static void golden_files_match_expected(void)
{
    json_error_t je;
    json_t *root = json_load_file(am_test_shared("golden/npz/EXPECTED.json"), 0, &je);
    AM_CHECK_MSG(root != NULL, "EXPECTED.json: %s", je.text);
    if (!root) return;
    const char *file;
    json_t *arrays;
    int files = 0;
    json_object_foreach(root, file, arrays) {
        char rel[256];
        snprintf(rel, sizeof rel, "golden/npz/%s", file);
        const char *path = am_test_shared(rel);
        am_npz *z = NULL;
        am_error err = {0};
        am_status s = am_npz_load(path, NULL, &z, &err);
        files++;
        if (json_object_get(arrays, "error")) {
            char m[600];
            am_error_format(m, sizeof m, &err);
            AM_CHECK_MSG(s == expected_error(file), "%s: got %s, want %s (%s)", file,
                         am_status_name(s), am_status_name(expected_error(file)), m);
            AM_CHECK_MSG(z == NULL, "%s: output set on failure", file);
            AM_CHECK_MSG(strstr(m, file) != NULL, "%s: message does not name the file: %s", file, m);
            if (s == AM_E_UNSUPPORTED) AM_CHECK(strstr(m, "pickle") != NULL);
            continue;
        }
        AM_CHECK_OK(s, &err);
        if (s != AM_OK) continue;
        AM_CHECK_MSG(z->count == json_object_size(arrays), "%s: %zu arrays", file, z->count);
        const char *name;
        json_t *want;
        json_object_foreach(arrays, name, want) {
            const am_array *a = am_npz_find(z, name);
            AM_CHECK_MSG(a != NULL, "%s: no array '%s'", file, name);
            if (a) check_array(file, name, a, want);
        }
        am_npz_free(z);
    }
    AM_CHECK(files == 10);
    json_decref(root);
}

/* The big-endian and Fortran goldens hold the same numbers as plain.npz. */
static void golden_bigendian_and_fortran_equal_plain(void)
{
    am_npz *plain = NULL, *big = NULL, *fort = NULL;
    AM_CHECK_OK(am_npz_load(am_test_shared("golden/npz/plain.npz"), NULL, &plain, NULL), NULL);
    AM_CHECK_OK(am_npz_load(am_test_shared("golden/npz/bigendian.npz"), NULL, &big, NULL), NULL);
    AM_CHECK_OK(am_npz_load(am_test_shared("golden/npz/fortran.npz"), NULL, &fort, NULL), NULL);
    if (plain && big && fort) {
        const am_array *p = am_npz_find(plain, "points");
        const am_array *b = am_npz_find(big, "points");
        const am_array *f = am_npz_find(fort, "points");
        AM_CHECK(p && b && f && arrays_equal(p, b) && arrays_equal(p, f));
        AM_CHECK(b && b->was_big_endian && f && f->was_fortran);
    }
    am_npz_free(plain);
    am_npz_free(big);
    am_npz_free(fort);
}

static void golden_errors_name_member_and_offset(void)
{
    am_npz *z = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_npz_load(am_test_shared("golden/npz/shape_lie.npz"), NULL, &z, &err),
                    AM_E_SHAPE);
    AM_CHECK(strstr(err.info, "points.npy") != NULL);
    AM_CHECK(strstr(err.info, "byte") != NULL);
    AM_CHECK_STATUS(am_npz_load(am_test_shared("golden/npz/object.npz"), NULL, &z, &err),
                    AM_E_UNSUPPORTED);
    AM_CHECK(strstr(err.info, "obj.npy") != NULL);
    AM_CHECK_STATUS(am_npz_load(am_test_tmp("does_not_exist.npz"), NULL, &z, &err), AM_E_READ);
    AM_CHECK(z == NULL);
}

/* ---- round trips ------------------------------------------------------------------------- */

#define RT_COUNT 10
typedef struct rt_data {
    float f32[2][3][4];
    double f64[5];
    int32_t i32[3][2];
    int64_t i64[4];
    uint8_t u8[7];
    uint8_t b[2][2];
    const char *strs[4];
    double scalar;
    am_array arrs[RT_COUNT];
} rt_data;

static void rt_build(rt_data *d)
{
    for (int i = 0; i < 24; i++) (&d->f32[0][0][0])[i] = (float)i * 0.25f - 3.0f;
    d->f32[1][2][3] = NAN;
    d->f32[0][0][1] = -INFINITY;
    for (int i = 0; i < 5; i++) d->f64[i] = 1.0 / (i + 1);
    for (int i = 0; i < 6; i++) (&d->i32[0][0])[i] = i * 1000003 - 2;
    int64_t big[4] = {INT64_MIN, -1, 0, INT64_MAX};
    memcpy(d->i64, big, sizeof big);
    for (int i = 0; i < 7; i++) d->u8[i] = (uint8_t)(i * 40);
    d->b[0][0] = 1;
    d->b[1][1] = 1;
    d->strs[0] = "hips";
    d->strs[1] = "";
    d->strs[2] = "h\xc3\xa9llo";       /* é: two UTF-8 bytes */
    d->strs[3] = "paw \xf0\x9f\x90\xbe"; /* U+1F43E: four bytes, one UTF-32 unit */
    d->scalar = 29.97;
    size_t s3[3] = {2, 3, 4}, s1[1] = {5}, s2[2] = {3, 2}, s4[1] = {4}, s7[1] = {7},
           sb[2] = {2, 2}, ss[1] = {4}, se[2] = {0, 3};
    int n = 0;
    d->arrs[n++] = am_array_view("f32", AM_DTYPE_F32, 3, s3, d->f32);
    d->arrs[n++] = am_array_view("f64", AM_DTYPE_F64, 1, s1, d->f64);
    d->arrs[n++] = am_array_view("i32", AM_DTYPE_I32, 2, s2, d->i32);
    d->arrs[n++] = am_array_view("i64", AM_DTYPE_I64, 1, s4, d->i64);
    d->arrs[n++] = am_array_view("u8", AM_DTYPE_U8, 1, s7, d->u8);
    d->arrs[n++] = am_array_view("b", AM_DTYPE_BOOL, 2, sb, d->b);
    d->arrs[n++] = am_array_view("names", AM_DTYPE_STR, 1, ss, d->strs);
    d->arrs[n++] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &d->scalar);
    d->arrs[n++] = am_array_view("empty", AM_DTYPE_F32, 2, se, NULL);
    d->arrs[n++] = am_array_view("d\xc3\xa9j\xc3\xa0", AM_DTYPE_U8, 1, s7, d->u8);
}

static void npz_roundtrip_every_dtype(void)
{
    rt_data d;
    memset(&d, 0, sizeof d);
    rt_build(&d);
    for (int compress = 0; compress < 2; compress++) {
        const char *path = am_test_tmp(compress ? "rt_deflate.npz" : "rt_stored.npz");
        am_error err = {0};
        AM_CHECK_OK(am_npz_write(path, d.arrs, RT_COUNT, compress != 0, &err), &err);
        am_npz *z = NULL;
        AM_CHECK_OK(am_npz_load(path, NULL, &z, &err), &err);
        if (!z) continue;
        AM_CHECK(z->count == RT_COUNT);
        for (int i = 0; i < RT_COUNT && i < (int)z->count; i++) {
            AM_CHECK_MSG(strcmp(z->arrays[i].name, d.arrs[i].name) == 0, "name %s",
                         z->arrays[i].name);
            AM_CHECK_MSG(arrays_equal(&z->arrays[i], &d.arrs[i]), "array %s differs (compress %d)",
                         d.arrs[i].name, compress);
        }
        const am_array *s = am_npz_find(z, "names");
        AM_CHECK(s && s->str_chars == 5); /* the widest: "h\u00e9llo" and "paw \U0001F43E" */
        /* the zip members are stored / deflated as asked (libzip tells us) */
        size_t len = 0;
        char *raw = read_all(path, &len);
        if (raw) {
            zip_source_t *src = zip_source_buffer_create(raw, len, 0, NULL);
            zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, NULL) : NULL;
            AM_CHECK(za != NULL);
            if (za) {
                zip_stat_t st;
                AM_CHECK(zip_stat_index(za, 0, 0, &st) == 0);
                AM_CHECK(st.comp_method == (compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE));
                AM_CHECK(strcmp(st.name, "f32.npy") == 0);
                zip_discard(za);
            } else {
                zip_source_free(src);
            }
            am_free(raw);
        }
        am_npz_free(z);
    }
}

static void npz_writer_is_deterministic(void)
{
    rt_data d;
    memset(&d, 0, sizeof d);
    rt_build(&d);
    const char *a = am_test_tmp("det_a.npz"), *b = am_test_tmp("det_b.npz");
    AM_CHECK_OK(am_npz_write(a, d.arrs, RT_COUNT, true, NULL), NULL);
    sleep(1); /* a timestamp taken from the clock would now differ */
    AM_CHECK_OK(am_npz_write(b, d.arrs, RT_COUNT, true, NULL), NULL);
    size_t la = 0, lb = 0;
    char *da = read_all(a, &la), *db = read_all(b, &lb);
    AM_CHECK(da && db && la == lb && memcmp(da, db, la) == 0);
    am_free(da);
    am_free(db);
}

static void npz_empty_archive_roundtrips(void)
{
    const char *path = am_test_tmp("empty_archive.npz");
    AM_CHECK_OK(am_npz_write(path, NULL, 0, true, NULL), NULL);
    am_npz *z = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_npz_load(path, NULL, &z, &err), &err);
    AM_CHECK(z && z->count == 0 && am_npz_find(z, "x") == NULL);
    am_npz_free(z);
}

static void npz_write_failure_leaves_nothing(void)
{
    rt_data d;
    memset(&d, 0, sizeof d);
    rt_build(&d);
    am_error err = {0};
    AM_CHECK_STATUS(am_npz_write(am_test_tmp("no/such/dir/x.npz"), d.arrs, 2, false, &err), AM_E_WRITE);
    /* a bad string fails during serialization: no file, no temporary */
    const char *bad[1] = {"\xff\xfe"};
    size_t s1[1] = {1};
    am_array arrs[2] = {d.arrs[0], am_array_view("bad", AM_DTYPE_STR, 1, s1, bad)};
    const char *path = am_test_tmp("bad_utf8.npz");
    AM_CHECK_STATUS(am_npz_write(path, arrs, 2, true, &err), AM_E_UTF8);
    AM_CHECK(!file_exists(path));
    AM_CHECK(!am_test_tmp_left(path));
    /* duplicate names are refused */
    am_array dup[2] = {d.arrs[1], d.arrs[1]};
    AM_CHECK_STATUS(am_npz_write(path, dup, 2, true, &err), AM_E_DUPLICATE);
    AM_CHECK(!file_exists(path));
}

static void npz_rejects_duplicate_members(void)
{
    double v = 1;
    am_array a = am_array_view("a", AM_DTYPE_F64, 0, NULL, &v);
    am_buf m[2] = {{0}, {0}};
    AM_CHECK_OK(am_npy_serialize(&a, &m[0], NULL), NULL);
    AM_CHECK_OK(am_npy_serialize(&a, &m[1], NULL), NULL);
    const char *names[2] = {"a.npy", "a"};
    const char *path = am_test_tmp("dup.npz");
    write_zip(path, names, m, 2);
    am_npz *z = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_npz_load(path, NULL, &z, &err), AM_E_DUPLICATE);
    /* a member that is not an npy names itself in the error */
    am_buf junk = {0};
    am_buf_append(&junk, "hello", 5);
    const char *jn[1] = {"readme.txt"};
    write_zip(path, jn, &junk, 1);
    AM_CHECK_STATUS(am_npz_load(path, NULL, &z, &err), AM_E_FORMAT);
    AM_CHECK(strstr(err.info, "readme.txt") != NULL);
    am_buf_free(&m[0]);
    am_buf_free(&m[1]);
    am_buf_free(&junk);
}

static void npz_crc_error_refused(void)
{
    size_t len = 0;
    char *data = read_all(am_test_shared("golden/npz/plain.npz"), &len);
    if (!data) return;
    /* plain.npz is stored: byte 300 lies in points.npy's float data (header ends at 30+10+128) */
    data[300] ^= 0x55;
    am_npz *z = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(am_npz_read_mem(data, len, "plain.npz", NULL, &z, &err), AM_E_FORMAT);
    AM_CHECK(z == NULL);
    am_free(data);
}

static void npz_zip_bomb_guard(void)
{
    /* 16 MiB of zeros deflate to a few KiB; a 1 MiB limit must refuse before inflating */
    size_t n = (size_t)16 << 20;
    uint8_t *zeros = calloc(n, 1);
    size_t shape[1] = {n};
    am_array a = am_array_view("z", AM_DTYPE_U8, 1, shape, zeros);
    const char *path = am_test_tmp("bomb.npz");
    AM_CHECK_OK(am_npz_write(path, &a, 1, true, NULL), NULL);
    free(zeros);
    struct stat st;
    AM_CHECK(stat(path, &st) == 0 && st.st_size < (1 << 20));
    am_npz_opts opts = {.max_bytes = 1 << 20};
    am_npz *z = NULL;
    am_error err = {0};
    am_test_alloc_limit(0);
    uint64_t before = am_test_alloc_count();
    AM_CHECK_STATUS(am_npz_load(path, &opts, &z, &err), AM_E_LIMIT);
    AM_CHECK(am_test_alloc_count() - before < 8); /* refused without a 16 MiB buffer */
    AM_CHECK_OK(am_npz_load(path, NULL, &z, &err), &err);
    am_npz_free(z);
}

/* ---- truncation sweeps ------------------------------------------------------------------- */

static void prefixes_refused(const char *what, const char *data, size_t len)
{
    int bad = 0;
    for (size_t n = 0; n < len; n++) {
        am_npz *z = NULL;
        am_error err = {0};
        am_status s = am_npz_read_mem(data, n, what, NULL, &z, &err);
        if (s >= 0 || z != NULL || err.info[0] == '\0') {
            if (bad++ < 5)
                am_test_fail(__FILE__, __LINE__, "%s: prefix of %zu bytes gave %s", what, n,
                             am_status_name(s));
            am_npz_free(z);
        }
    }
    am_npz *z = NULL;
    AM_CHECK_OK(am_npz_read_mem(data, len, what, NULL, &z, NULL), NULL);
    am_npz_free(z);
}

static void npz_every_prefix_refused(void)
{
    size_t len = 0;
    char *data = read_all(am_test_shared("golden/npz/plain.npz"), &len);
    if (data) prefixes_refused("plain.npz", data, len);
    am_free(data);
    rt_data d;
    memset(&d, 0, sizeof d);
    rt_build(&d);
    const char *path = am_test_tmp("prefix.npz");
    AM_CHECK_OK(am_npz_write(path, d.arrs, RT_COUNT, true, NULL), NULL);
    data = read_all(path, &len);
    if (data) prefixes_refused("ours.npz", data, len);
    am_free(data);
}

static void npy_every_prefix_refused(void)
{
    rt_data d;
    memset(&d, 0, sizeof d);
    rt_build(&d);
    for (int i = 0; i < RT_COUNT; i++) {
        if (d.arrs[i].count == 0) continue;
        am_buf b = {0};
        AM_CHECK_OK(am_npy_serialize(&d.arrs[i], &b, NULL), NULL);
        for (size_t n = 0; n < b.len; n++) {
            am_array a;
            am_error err = {0};
            am_status s = am_npy_parse(b.data, n, NULL, &a, &err);
            AM_CHECK_MSG(s < 0 && a.data == NULL && a.strings == NULL,
                         "%s: prefix %zu gave %s", d.arrs[i].name, n, am_status_name(s));
            AM_CHECK(err.offset != UINT64_MAX);
        }
        am_array a;
        AM_CHECK_OK(am_npy_parse(b.data, b.len, NULL, &a, NULL), NULL);
        AM_CHECK(arrays_equal(&a, &d.arrs[i]));
        am_array_clear(&a);
        am_buf_free(&b);
    }
}

/* ---- hand-made .npy -------------------------------------------------------------------- */

static void npy_header_versions_and_byte_orders(void)
{
    am_array a;
    am_error err = {0};
    const int32_t le[6] = {1, 2, 3, 4, 5, 6};
    for (int major = 1; major <= 3; major++) {
        AM_CHECK_OK(parse_hdr(major, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                              le, sizeof le, &a, &err), &err);
        AM_CHECK(a.count == 6 && memcmp(a.data, le, sizeof le) == 0);
        am_array_clear(&a);
    }
    /* double quotes, no trailing comma, keys in another order, Python 2 longs */
    AM_CHECK_OK(parse_hdr(1, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"=i4\"}",
                          le, sizeof le, &a, &err), &err);
    AM_CHECK(a.count == 6 && memcmp(a.data, le, sizeof le) == 0);
    am_array_clear(&a);
    /* big-endian int32 and float64 */
    const unsigned char be_i4[8] = {0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFE};
    AM_CHECK_OK(parse_hdr(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be_i4,
                          sizeof be_i4, &a, &err), &err);
    AM_CHECK(a.was_big_endian && ((int32_t *)a.data)[0] == 1 && ((int32_t *)a.data)[1] == -2);
    am_array_clear(&a);
    const unsigned char be_f8[8] = {0x3F, 0xF8, 0, 0, 0, 0, 0, 0}; /* 1.5 */
    AM_CHECK_OK(parse_hdr(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }", be_f8,
                          sizeof be_f8, &a, &err), &err);
    double v = 0;
    AM_CHECK_OK(am_array_scalar(&a, &v, NULL), NULL);
    AM_CHECK(v == 1.5 && a.ndim == 0);
    am_array_clear(&a);
    /* big-endian unicode */
    const unsigned char be_u[8] = {0, 0, 0, 'h', 0, 0, 0, 'i'};
    AM_CHECK_OK(parse_hdr(1, "{'descr': '>U2', 'fortran_order': False, 'shape': (1,), }", be_u,
                          sizeof be_u, &a, &err), &err);
    AM_CHECK(a.dtype == AM_DTYPE_STR && strcmp(a.strings[0], "hi") == 0);
    am_array_clear(&a);
}

static void npy_fortran_order_transposed(void)
{
    /* C array [[0,1,2],[3,4,5]] stored column-major: 0,3,1,4,2,5 */
    const int64_t f[6] = {0, 3, 1, 4, 2, 5};
    am_array a;
    am_error err = {0};
    AM_CHECK_OK(parse_hdr(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }", f,
                          sizeof f, &a, &err), &err);
    for (int i = 0; i < 6; i++) AM_CHECK(((int64_t *)a.data)[i] == i);
    AM_CHECK(a.was_fortran);
    am_array_clear(&a);
    /* strings in Fortran order: [["a","b"],["c","d"]] stored as a,c,b,d */
    const uint32_t s[4] = {'a', 'c', 'b', 'd'};
    AM_CHECK_OK(parse_hdr(1, "{'descr': '<U1', 'fortran_order': True, 'shape': (2, 2), }", s,
                          sizeof s, &a, &err), &err);
    AM_CHECK(a.strings && strcmp(a.strings[1], "b") == 0 && strcmp(a.strings[2], "c") == 0);
    am_array_clear(&a);
}

typedef struct bad_npy {
    const char *header;
    size_t data_len;
    am_status want;
    const char *info_has;
} bad_npy;

static void npy_rejects_malformed_headers(void)
{
    static const bad_npy cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", 0, AM_E_SHAPE, "negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 0,
         AM_E_LIMIT, "overflow"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
         0, AM_E_LIMIT, "overflow"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (65536, 65536, 65536), }", 0,
         AM_E_LIMIT, NULL},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, AM_E_LIMIT,
         "dimensions"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, AM_E_UNSUPPORTED, "pickle"},
        {"{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", 16, AM_E_DTYPE, "<c16"},
        {"{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", 2, AM_E_DTYPE, "<f2"},
        {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", 4, AM_E_DTYPE, "|f4"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, AM_E_DTYPE,
         "structured"},
        {"{'descr': '<f4', 'shape': (1,), }", 4, AM_E_FORMAT, "fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", 4, AM_E_FORMAT,
         "extra"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4,
         AM_E_FORMAT, "descr"},
        {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }", 4, AM_E_FORMAT, NULL},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk", 4, AM_E_FORMAT, "junk"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 7, }", 4, AM_E_FORMAT, NULL},
        {"['descr', '<f4']", 4, AM_E_FORMAT, NULL},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, AM_E_TRUNCATED, "only 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char data[16] = {0};
        am_array a;
        am_error err = {0};
        am_status s = parse_hdr(1, cases[i].header, data, cases[i].data_len, &a, &err);
        AM_CHECK_MSG(s == cases[i].want, "case %zu: %s, want %s (%s)", i, am_status_name(s),
                     am_status_name(cases[i].want), err.info);
        AM_CHECK_MSG(cases[i].info_has == NULL || strstr(err.info, cases[i].info_has),
                     "case %zu: info '%s' lacks '%s'", i, err.info, cases[i].info_has);
        AM_CHECK_MSG(err.offset != UINT64_MAX, "case %zu: no byte offset", i);
        AM_CHECK(a.data == NULL && a.strings == NULL);
    }
    /* not npy at all, unknown versions, header length past the end */
    am_array a;
    am_error err = {0};
    AM_CHECK_STATUS(am_npy_parse("PK\x03\x04 not an npy file", 20, NULL, &a, &err), AM_E_FORMAT);
    AM_CHECK(err.offset == 0);
    AM_CHECK_STATUS(am_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, NULL, &a, &err), AM_E_UNSUPPORTED);
    AM_CHECK_STATUS(am_npy_parse("\x93NUMPY\x01\x00\xff\xff{", 11, NULL, &a, &err), AM_E_TRUNCATED);
    AM_CHECK_STATUS(am_npy_parse("\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13, NULL, &a, &err),
                    AM_E_LIMIT);
    AM_CHECK_STATUS(am_npy_parse(NULL, 0, NULL, &a, &err), AM_E_TRUNCATED);
}

static void npy_respects_max_bytes(void)
{
    uint8_t data[64] = {0};
    am_buf b = {0};
    make_npy(&b, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (8,), }", data, 64);
    am_npz_opts opts = {.max_bytes = 32};
    am_array a;
    am_error err = {0};
    AM_CHECK_STATUS(am_npy_parse(b.data, b.len, &opts, &a, &err), AM_E_LIMIT);
    opts.max_bytes = 64;
    AM_CHECK_OK(am_npy_parse(b.data, b.len, &opts, &a, &err), &err);
    am_array_clear(&a);
    am_buf_free(&b);
}

static void npy_rejects_bad_utf32(void)
{
    const uint32_t surrogate[2] = {'a', 0xD800};
    const uint32_t too_big[2] = {0x110000, 0};
    const uint32_t nul_inside[3] = {'a', 0, 'b'};
    const uint32_t trailing[3] = {'o', 'k', 0};
    const char *hdr2 = "{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }";
    const char *hdr3 = "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }";
    am_array a;
    am_error err = {0};
    AM_CHECK_STATUS(parse_hdr(1, hdr2, surrogate, sizeof surrogate, &a, &err), AM_E_UTF8);
    AM_CHECK(strstr(err.info, "D800") != NULL && err.offset != UINT64_MAX);
    AM_CHECK_STATUS(parse_hdr(1, hdr2, too_big, sizeof too_big, &a, &err), AM_E_UTF8);
    AM_CHECK_STATUS(parse_hdr(1, hdr3, nul_inside, sizeof nul_inside, &a, &err), AM_E_UTF8);
    AM_CHECK_OK(parse_hdr(1, hdr3, trailing, sizeof trailing, &a, &err), &err);
    AM_CHECK(a.strings && strcmp(a.strings[0], "ok") == 0 && a.str_chars == 3);
    am_array_clear(&a);
}

static void npy_bool_bytes_normalised(void)
{
    const uint8_t raw[4] = {0, 1, 2, 255};
    am_array a;
    AM_CHECK_OK(parse_hdr(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", raw, 4,
                          &a, NULL), NULL);
    const uint8_t want[4] = {0, 1, 1, 1};
    AM_CHECK(a.data && memcmp(a.data, want, 4) == 0);
    am_array_clear(&a);
}

static void array_helpers_check_dtype_and_shape(void)
{
    AM_CHECK(strcmp(am_dtype_name(AM_DTYPE_F32), "float32") == 0);
    AM_CHECK(strcmp(am_dtype_name(AM_DTYPE_BOOL), "bool") == 0);
    AM_CHECK(am_dtype_size(AM_DTYPE_I64) == 8 && am_dtype_size(AM_DTYPE_STR) == 0);
    const char *s[1] = {"x"};
    size_t one[1] = {1}, two[1] = {2};
    am_array str = am_array_view("s", AM_DTYPE_STR, 1, one, s);
    double v[2];
    float f[2];
    AM_CHECK_STATUS(am_array_to_f64(&str, v, NULL), AM_E_DTYPE);
    AM_CHECK_STATUS(am_array_scalar(&str, v, NULL), AM_E_DTYPE);
    const int32_t iv[2] = {-7, 9};
    am_array ia = am_array_view("i", AM_DTYPE_I32, 1, two, iv);
    AM_CHECK_STATUS(am_array_scalar(&ia, v, NULL), AM_E_SHAPE);
    AM_CHECK_OK(am_array_to_f64(&ia, v, NULL), NULL);
    AM_CHECK_OK(am_array_to_f32(&ia, f, NULL), NULL);
    AM_CHECK(v[0] == -7 && v[1] == 9 && f[0] == -7.0f && f[1] == 9.0f);
    am_array_clear(NULL);
}

/* ---- tracks.npz ------------------------------------------------------------------------- */

static const char *write_arrays(const char *name, const am_array *arrs, size_t n)
{
    const char *path = am_test_tmp(name);
    am_error err = {0};
    AM_CHECK_OK(am_npz_write(path, arrs, n, false, &err), &err);
    return path;
}

static void tracks_roundtrip_and_golden(void)
{
    am_tracks *tr = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_tracks_load(am_test_shared("golden/npz/plain.npz"), &tr, &err), &err);
    if (!tr) return;
    AM_CHECK(tr->frame_count == 4 && tr->point_count == 7 && tr->face_count == 2);
    AM_CHECK(tr->fps == 30.0 && tr->faces[5] == 4);
    size_t vis = 0;
    for (size_t i = 0; i < 28; i++) {
        vis += tr->visible[i];
        if (!tr->visible[i]) AM_CHECK(isnan(tr->points[3 * i]));
    }
    AM_CHECK(vis == 19);
    const char *path = am_test_tmp("tracks_rt.npz");
    AM_CHECK_OK(am_tracks_write(path, tr, &err), &err);
    am_tracks *back = NULL;
    AM_CHECK_OK(am_tracks_load(path, &back, &err), &err);
    if (back) {
        AM_CHECK(back->frame_count == 4 && back->point_count == 7 && back->face_count == 2);
        AM_CHECK(memcmp(back->visible, tr->visible, 28) == 0);
        AM_CHECK(memcmp(back->faces, tr->faces, 6 * sizeof(int32_t)) == 0);
        for (size_t i = 0; i < 84; i++)
            AM_CHECK(back->points[i] == tr->points[i] ||
                     (isnan(back->points[i]) && isnan(tr->points[i])));
    }
    am_tracks_free(back);
    am_tracks_free(tr);
    /* compressed.npz: float64 points, uint8 visible, float32 fps, no faces */
    AM_CHECK_OK(am_tracks_load(am_test_shared("golden/npz/compressed.npz"), &tr, &err), &err);
    AM_CHECK(tr && tr->fps == 24.0 && tr->faces == NULL && tr->face_count == 0);
    am_tracks_free(tr);
    am_tracks_free(NULL);
}

static void tracks_rejects_malformed(void)
{
    float pts[2][3][3];
    for (int i = 0; i < 18; i++) (&pts[0][0][0])[i] = (float)i;
    uint8_t vis[2][3] = {{1, 1, 1}, {1, 0, 1}};
    int32_t faces[2][3] = {{0, 1, 2}, {2, 1, 0}};
    int64_t faces64[3] = {0, 1, 2};
    double fps = 30;
    size_t s_pts[3] = {2, 3, 3}, s_pts2[3] = {2, 3, 2}, s_vis[2] = {2, 3}, s_vis_bad[2] = {3, 2},
           s_faces[2] = {2, 3}, s_f1[2] = {1, 3};
    am_array points = am_array_view("points", AM_DTYPE_F32, 3, s_pts, pts);
    am_array visible = am_array_view("visible", AM_DTYPE_U8, 2, s_vis, vis);
    am_tracks *tr = NULL;
    am_error err = {0};

    /* NaN in a hidden entry is fine, in a visible one it is not */
    pts[1][1][0] = NAN;
    am_array ok[3] = {points, visible, am_array_view("faces", AM_DTYPE_I64, 2, s_f1, faces64)};
    AM_CHECK_OK(am_tracks_load(write_arrays("t_ok.npz", ok, 3), &tr, &err), &err);
    AM_CHECK(tr && tr->faces && tr->faces[2] == 2);
    am_tracks_free(tr);
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_nan.npz", &points, 1), &tr, &err),
                    AM_E_NONFINITE);
    AM_CHECK(strstr(err.info, "frame 1, point 1") != NULL && strstr(err.file, "t_nan.npz"));
    pts[1][1][0] = 0;

    am_array wrong[2] = {am_array_view("points", AM_DTYPE_F32, 3, s_pts2, pts)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_shape.npz", wrong, 1), &tr, &err), AM_E_SHAPE);
    AM_CHECK(strstr(err.info, "points has shape [2,3,2]") != NULL);

    am_array vis_bad[2] = {points, am_array_view("visible", AM_DTYPE_BOOL, 2, s_vis_bad, vis)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_vis.npz", vis_bad, 2), &tr, &err), AM_E_SHAPE);
    AM_CHECK(strstr(err.info, "visible has shape [3,2], expected [2,3] to match points") != NULL);

    am_array vis_dtype[2] = {points, am_array_view("visible", AM_DTYPE_F32, 2, s_vis, pts)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_visdt.npz", vis_dtype, 2), &tr, &err),
                    AM_E_DTYPE);

    faces[1][0] = 3;
    am_array face_bad[2] = {points, am_array_view("faces", AM_DTYPE_I32, 2, s_faces, faces)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_faces.npz", face_bad, 2), &tr, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.info, "faces[1][0] = 3") != NULL);
    faces[1][0] = -1;
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_faces2.npz", face_bad, 2), &tr, &err), AM_E_VALUE);

    am_array face_f[2] = {points, am_array_view("faces", AM_DTYPE_F32, 2, s_faces, pts)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_facesf.npz", face_f, 2), &tr, &err), AM_E_DTYPE);

    int32_t ipts[18] = {0};
    am_array int_pts = am_array_view("points", AM_DTYPE_I32, 3, s_pts, ipts);
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_int.npz", &int_pts, 1), &tr, &err), AM_E_DTYPE);

    am_array only_vis = visible;
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_none.npz", &only_vis, 1), &tr, &err),
                    AM_E_SCHEMA);

    fps = -1;
    am_array bad_fps[2] = {points, am_array_view("fps", AM_DTYPE_F64, 0, NULL, &fps)};
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_fps.npz", bad_fps, 2), &tr, &err), AM_E_VALUE);
    fps = 1e-300; /* positive, but no frame rate (am_fps_valid) */
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_fps_tiny.npz", bad_fps, 2), &tr, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.info, "fps = 1e-300") != NULL);

    size_t s_empty[3] = {0, 3, 3};
    am_array empty = am_array_view("points", AM_DTYPE_F32, 3, s_empty, pts);
    AM_CHECK_STATUS(am_tracks_load(write_arrays("t_empty.npz", &empty, 1), &tr, &err), AM_E_EMPTY);
    AM_CHECK(tr == NULL);
}

/* ---- det.npz ---------------------------------------------------------------------------- */

typedef struct det_fix {
    float fuv[2][3][2], suv[2][3][2], fc[2][3], sc[2][3];
    double fps, calib[6];
    const char *names[3];
    am_array arrs[7];
} det_fix;

static void det_build(det_fix *d)
{
    for (int i = 0; i < 12; i++) {
        (&d->fuv[0][0][0])[i] = 100.0f + (float)i;
        (&d->suv[0][0][0])[i] = 200.0f - (float)i;
    }
    for (int i = 0; i < 6; i++) {
        (&d->fc[0][0])[i] = 0.9f;
        (&d->sc[0][0])[i] = 0.5f;
    }
    d->fps = 25;
    for (int i = 0; i < 6; i++) d->calib[i] = i == 0 || i == 4 ? 2.0 : 0.5;
    d->names[0] = "hips";
    d->names[1] = "chest";
    d->names[2] = "head";
    size_t s_uv[3] = {2, 3, 2}, s_c[2] = {2, 3}, s_n[1] = {3}, s_cal[2] = {2, 3};
    d->arrs[0] = am_array_view("front_uv", AM_DTYPE_F32, 3, s_uv, d->fuv);
    d->arrs[1] = am_array_view("side_uv", AM_DTYPE_F32, 3, s_uv, d->suv);
    d->arrs[2] = am_array_view("front_conf", AM_DTYPE_F32, 2, s_c, d->fc);
    d->arrs[3] = am_array_view("side_conf", AM_DTYPE_F32, 2, s_c, d->sc);
    d->arrs[4] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &d->fps);
    d->arrs[5] = am_array_view("names", AM_DTYPE_STR, 1, s_n, d->names);
    d->arrs[6] = am_array_view("calib", AM_DTYPE_F64, 2, s_cal, d->calib);
}

static void det_roundtrip(void)
{
    det_fix d;
    memset(&d, 0, sizeof d);
    det_build(&d);
    am_det *det = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_det_load(write_arrays("det.npz", d.arrs, 7), &det, &err), &err);
    if (!det) return;
    AM_CHECK(det->frame_count == 2 && det->joint_count == 3 && det->fps == 25 && det->has_calib);
    AM_CHECK(strcmp(det->names[2], "head") == 0 && det->calib[4] == 2.0);
    AM_CHECK(memcmp(det->front_uv, d.fuv, sizeof d.fuv) == 0);
    const char *path = am_test_tmp("det_rt.npz");
    AM_CHECK_OK(am_det_write(path, det, &err), &err);
    am_det *back = NULL;
    AM_CHECK_OK(am_det_load(path, &back, &err), &err);
    if (back) {
        AM_CHECK(memcmp(back->side_uv, det->side_uv, sizeof d.suv) == 0);
        AM_CHECK(memcmp(back->side_conf, det->side_conf, sizeof d.sc) == 0);
        AM_CHECK(strcmp(back->names[0], "hips") == 0 && back->has_calib);
    }
    am_det_free(back);
    am_det_free(det);
    am_det_free(NULL);
    /* float64 pixels and no calib are fine too */
    double fuv64[12];
    for (int i = 0; i < 12; i++) fuv64[i] = 1.5 * i;
    size_t s_uv[3] = {2, 3, 2};
    d.arrs[0] = am_array_view("front_uv", AM_DTYPE_F64, 3, s_uv, fuv64);
    AM_CHECK_OK(am_det_load(write_arrays("det64.npz", d.arrs, 6), &det, &err), &err);
    AM_CHECK(det && !det->has_calib && det->front_uv[11] == 16.5f);
    am_det_free(det);
}

static void det_rejects_malformed(void)
{
    det_fix d;
    memset(&d, 0, sizeof d);
    det_build(&d);
    am_det *det = NULL;
    am_error err = {0};
    am_array a[7];

    memcpy(a, d.arrs, sizeof a);
    size_t s_c_bad[2] = {2, 2};
    a[2] = am_array_view("front_conf", AM_DTYPE_F32, 2, s_c_bad, d.fc);
    AM_CHECK_STATUS(am_det_load(write_arrays("d_shape.npz", a, 7), &det, &err), AM_E_SHAPE);
    AM_CHECK_MSG(strstr(err.info, "front_conf has shape [2,2], expected [2,3] to match front_uv"),
                 "%s", err.info);
    AM_CHECK(strstr(err.file, "d_shape.npz") != NULL);

    memcpy(a, d.arrs, sizeof a);
    size_t s_n_bad[1] = {2};
    a[5] = am_array_view("names", AM_DTYPE_STR, 1, s_n_bad, d.names);
    AM_CHECK_STATUS(am_det_load(write_arrays("d_names.npz", a, 7), &det, &err), AM_E_SHAPE);
    AM_CHECK(strstr(err.info, "names") != NULL);

    memcpy(a, d.arrs, sizeof a);
    AM_CHECK_STATUS(am_det_load(write_arrays("d_nonames.npz", a, 5), &det, &err), AM_E_SCHEMA);

    /* fps = 1e-300 passes "fps > 0" and then solves for nothing: the one range of every loader */
    d.fps = 1e-300;
    AM_CHECK_STATUS(am_det_load(write_arrays("d_fps.npz", d.arrs, 7), &det, &err), AM_E_VALUE);
    AM_CHECK_MSG(strstr(err.info, "fps = 1e-300") && strstr(err.file, "d_fps.npz"), "%s", err.info);
    d.fps = 25;
    d.names[2] = "hips"; /* a repeated joint name makes the binding ambiguous */
    AM_CHECK_STATUS(am_det_load(write_arrays("d_dup.npz", d.arrs, 7), &det, &err), AM_E_DUPLICATE);
    AM_CHECK_MSG(strstr(err.info, "names[2] = 'hips' repeats names[0]"), "%s", err.info);
    d.names[2] = "head";

    d.sc[1][2] = 1.5f;
    AM_CHECK_STATUS(am_det_load(write_arrays("d_conf.npz", d.arrs, 7), &det, &err), AM_E_VALUE);
    AM_CHECK(strstr(err.info, "side_conf[1][2]") != NULL);
    d.sc[1][2] = 0.5f;

    d.fuv[0][1][1] = NAN;
    AM_CHECK_STATUS(am_det_load(write_arrays("d_nan.npz", d.arrs, 7), &det, &err), AM_E_NONFINITE);
    d.fc[0][1] = 0; /* unseen: NaN allowed */
    AM_CHECK_OK(am_det_load(write_arrays("d_nan_ok.npz", d.arrs, 7), &det, &err), &err);
    am_det_free(det);

    memcpy(a, d.arrs, sizeof a);
    uint8_t u8[12] = {0};
    size_t s_uv[3] = {2, 3, 2};
    a[1] = am_array_view("side_uv", AM_DTYPE_U8, 3, s_uv, u8);
    AM_CHECK_STATUS(am_det_load(write_arrays("d_dtype.npz", a, 7), &det, &err), AM_E_DTYPE);
    AM_CHECK(det == NULL);
}

/* ---- joints.npz ------------------------------------------------------------------------- */

typedef struct joints_fix {
    double pos[2][3][3], conf[2][3], fps;
    float pos32[2][3][3];
    const char *names[3];
    am_array arrs[4];
} joints_fix;

static void joints_build(joints_fix *d)
{
    for (int i = 0; i < 18; i++) (&d->pos[0][0][0])[i] = 0.1 * i - 0.35;
    for (int i = 0; i < 6; i++) (&d->conf[0][0])[i] = 0.25 * (i % 5);
    d->fps = 60;
    d->names[0] = "hips";
    d->names[1] = "chest";
    d->names[2] = "head";
    size_t s_j[3] = {2, 3, 3}, s_n[1] = {3}, s_c[2] = {2, 3};
    d->arrs[0] = am_array_view("joints", AM_DTYPE_F64, 3, s_j, d->pos);
    d->arrs[1] = am_array_view("names", AM_DTYPE_STR, 1, s_n, d->names);
    d->arrs[2] = am_array_view("fps", AM_DTYPE_F64, 0, NULL, &d->fps);
    d->arrs[3] = am_array_view("conf", AM_DTYPE_F64, 2, s_c, d->conf);
}

/* Read, write, read: bit-identical, missing joints (NaN) and conf kept; float32 accepted. */
static void joints_roundtrip(void)
{
    joints_fix d;
    memset(&d, 0, sizeof d);
    joints_build(&d);
    d.pos[1][2][0] = d.pos[1][2][1] = d.pos[1][2][2] = NAN;
    d.conf[1][2] = NAN;
    am_joints *jt = NULL, *back = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_joints_load(write_arrays("joints.npz", d.arrs, 4), &jt, &err), &err);
    if (!jt) return;
    AM_CHECK(jt->frame_count == 2 && jt->joint_count == 3 && jt->fps == 60 && jt->conf);
    AM_CHECK(strcmp(jt->names[1], "chest") == 0 && jt->joints[4] == d.pos[0][1][1]);
    AM_CHECK(isnan(jt->joints[15]) && isnan(jt->conf[5]));
    const char *path = am_test_tmp("joints_rt.npz");
    AM_CHECK_OK(am_joints_write(path, jt, &err), &err);
    AM_CHECK_OK(am_joints_load(path, &back, &err), &err);
    if (back) {
        AM_CHECK(memcmp(back->joints, jt->joints, sizeof d.pos) == 0);
        AM_CHECK(memcmp(back->conf, jt->conf, sizeof d.conf) == 0);
        AM_CHECK(back->fps == 60 && strcmp(back->names[2], "head") == 0);
    }
    am_joints_free(back);
    /* Bound onto a rig: its joint order, 0 and not given where the file has nothing. */
    static const char rig_text[] =
        "{\"joints\": {\"head\": [0, 0, 2], \"tail\": [0, 1, 1], \"hips\": [0, 0, 0], \"chest\": [0, 0, 1]},"
        " \"bones\": [[\"spine\", \"hips\", \"chest\", null], [\"neck\", \"chest\", \"head\", \"spine\"],"
        " [\"tail\", \"chest\", \"tail\", \"spine\"]]}";
    am_rig *rig = NULL;
    AM_CHECK_OK(am_rig_parse(rig_text, strlen(rig_text), "r.json", &rig, &err), &err);
    if (rig) {
        double pos[2 * 4 * 3];
        uint8_t given[4];
        AM_CHECK_OK(am_joints_bind(jt, rig, pos, given, &err), &err);
        int h = am_rig_find_joint(rig, "head"), tl = am_rig_find_joint(rig, "tail"), c = am_rig_find_joint(rig, "chest");
        AM_CHECK(given[h] && given[c] && !given[tl]);
        AM_CHECK(pos[(4 + (size_t)c) * 3 + 1] == d.pos[1][1][1] && isnan(pos[(4 + (size_t)h) * 3]));
        AM_CHECK(pos[(size_t)tl * 3] == 0);
        jt->names[0][0] = 'X';
        AM_CHECK_STATUS(am_joints_bind(jt, rig, pos, given, &err), AM_E_NAME);
        AM_CHECK(strstr(err.info, "Xips") != NULL);
    }
    am_rig_free(rig);
    am_joints_free(jt);
    am_joints_free(NULL);
    for (int i = 0; i < 18; i++) (&d.pos32[0][0][0])[i] = (float)(0.5 * i);
    size_t s_j[3] = {2, 3, 3};
    d.arrs[0] = am_array_view("joints", AM_DTYPE_F32, 3, s_j, d.pos32);
    AM_CHECK_OK(am_joints_load(write_arrays("joints32.npz", d.arrs, 3), &jt, &err), &err);
    AM_CHECK(jt && !jt->conf && jt->joints[17] == 8.5);
    am_joints_free(jt);
}

static void joints_rejects_malformed(void)
{
    joints_fix d;
    memset(&d, 0, sizeof d);
    joints_build(&d);
    am_joints *jt = NULL;
    am_error err = {0};
    am_array a[4];
#define EXPECT_JOINTS(fname, n, code, info_part)                                                    \
    do {                                                                                           \
        AM_CHECK_STATUS(am_joints_load(write_arrays((fname), a, (n)), &jt, &err), (code));         \
        AM_CHECK_MSG(strstr(err.info, (info_part)), "%s: info '%s' lacks '%s'", (fname), err.info,  \
                     (info_part));                                                                 \
        AM_CHECK(jt == NULL && strstr(err.file, (fname)) != NULL);                                  \
        memcpy(a, d.arrs, sizeof a);                                                               \
    } while (0)
    memcpy(a, d.arrs, sizeof a);
    EXPECT_JOINTS("j_none.npz", 0, AM_E_SCHEMA, "missing array 'joints'");
    a[0] = am_array_view("joints", AM_DTYPE_STR, 1, (size_t[1]){3}, d.names);
    EXPECT_JOINTS("j_str.npz", 1, AM_E_DTYPE, "joints has dtype str");
    size_t s_bad[3] = {2, 3, 2}, s_2d[2] = {2, 9}, s_empty[3] = {0, 3, 3}, s_nj[3] = {2, 0, 3};
    a[0] = am_array_view("joints", AM_DTYPE_F64, 3, s_bad, d.pos);
    EXPECT_JOINTS("j_shape.npz", 3, AM_E_SHAPE, "joints has shape [2,3,2], expected [T,J,3]");
    a[0] = am_array_view("joints", AM_DTYPE_F64, 2, s_2d, d.pos);
    EXPECT_JOINTS("j_2d.npz", 3, AM_E_SHAPE, "joints has shape [2,9]");
    a[0] = am_array_view("joints", AM_DTYPE_F64, 3, s_empty, d.pos);
    EXPECT_JOINTS("j_t0.npz", 3, AM_E_EMPTY, "no frames");
    a[0] = am_array_view("joints", AM_DTYPE_F64, 3, s_nj, d.pos);
    EXPECT_JOINTS("j_j0.npz", 3, AM_E_EMPTY, "no joints");
    int32_t ints[18] = {0};
    size_t s_j[3] = {2, 3, 3};
    a[0] = am_array_view("joints", AM_DTYPE_I32, 3, s_j, ints);
    EXPECT_JOINTS("j_int.npz", 3, AM_E_DTYPE, "expected float32 or float64");
    EXPECT_JOINTS("j_nonames.npz", 1, AM_E_SCHEMA, "missing array 'names'");
    size_t s_n2[1] = {2};
    a[1] = am_array_view("names", AM_DTYPE_STR, 1, s_n2, d.names);
    EXPECT_JOINTS("j_names.npz", 3, AM_E_SHAPE, "names has shape [2], expected [3]");
    a[1] = am_array_view("names", AM_DTYPE_F64, 1, s_n2, d.pos);
    EXPECT_JOINTS("j_namesdt.npz", 3, AM_E_DTYPE, "names has dtype float64");
    d.names[2] = "hips";
    EXPECT_JOINTS("j_dup.npz", 3, AM_E_DUPLICATE, "names[2] = 'hips' repeats names[0]");
    d.names[2] = "";
    EXPECT_JOINTS("j_emptyname.npz", 3, AM_E_VALUE, "names[2] is empty");
    d.names[2] = "head";
    EXPECT_JOINTS("j_nofps.npz", 2, AM_E_SCHEMA, "missing array 'fps'");
    static const double bad_fps[] = {0, -30, 1e-300, 1e5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_fps / sizeof bad_fps[0]; i++) {
        d.fps = bad_fps[i];
        EXPECT_JOINTS("j_fps.npz", 3, AM_E_VALUE, "fps = ");
    }
    d.fps = 60;
    double two[2] = {30, 30};
    size_t s_two[1] = {2};
    a[2] = am_array_view("fps", AM_DTYPE_F64, 1, s_two, two);
    EXPECT_JOINTS("j_fps2.npz", 3, AM_E_SHAPE, "fps has dtype float64 and shape [2]");
    /* A missing joint is NaN in all three coordinates; half a NaN or an infinity is broken. */
    d.pos[1][0][1] = NAN;
    EXPECT_JOINTS("j_halfnan.npz", 3, AM_E_NONFINITE, "frame 1, joint 0");
    d.pos[1][0][1] = INFINITY;
    EXPECT_JOINTS("j_inf.npz", 3, AM_E_NONFINITE, "joints[1][0]");
    d.pos[1][0][1] = 0.5;
    d.conf[0][2] = 1.5;
    EXPECT_JOINTS("j_conf.npz", 4, AM_E_VALUE, "conf[0][2] = 1.5 is outside [0, 1]");
    d.conf[0][2] = NAN; /* the joint is there: its confidence must be a number */
    EXPECT_JOINTS("j_confnan.npz", 4, AM_E_NONFINITE, "conf[0][2]");
    d.conf[0][2] = 0.5;
    size_t s_c[2] = {3, 2};
    a[3] = am_array_view("conf", AM_DTYPE_F64, 2, s_c, d.conf);
    EXPECT_JOINTS("j_confshape.npz", 4, AM_E_SHAPE, "conf has shape [3,2], expected [2,3]");
#undef EXPECT_JOINTS
    /* The writer refuses what the reader would. */
    am_joints bad = {.frame_count = 2, .joint_count = 3, .joints = &d.pos[0][0][0], .fps = 1e9,
                     .names = (char **)(uintptr_t)d.names};
    AM_CHECK_STATUS(am_joints_write(am_test_tmp("j_w.npz"), &bad, &err), AM_E_VALUE);
    AM_CHECK(!file_exists(am_test_tmp("j_w.npz")));
    /* Every prefix of a valid file fails cleanly. */
    size_t len = 0;
    char *data = read_all(write_arrays("j_ok.npz", d.arrs, 4), &len);
    for (size_t n = 0; data && n < len; n++) {
        AM_CHECK(am_joints_read_mem(data, n, "prefix.npz", &jt, &err) < 0 && jt == NULL);
    }
    AM_CHECK_OK(am_joints_read_mem(data, len, "whole.npz", &jt, &err), &err);
    am_joints_free(jt);
    /* Under every allocation limit: AM_E_NOMEM or the file, never a crash or a leak. */
    bool ok = false;
    for (uint64_t limit = 1; limit < 500 && data && !ok; limit++) {
        am_test_alloc_limit(limit);
        am_status s = am_joints_read_mem(data, len, "limit.npz", &jt, NULL);
        am_test_alloc_limit(0);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        ok = s == AM_OK;
        am_joints_free(jt);
        jt = NULL;
    }
    AM_CHECK(ok);
    am_free(data);
}

/* ---- allocation failures ---------------------------------------------------------------- */

static void alloc_failure_sweep(void)
{
    size_t len = 0;
    char *data = read_all(am_test_shared("golden/npz/plain.npz"), &len);
    if (!data) return;
    int ok_at = 0;
    for (uint64_t limit = 1; limit < 500 && !ok_at; limit++) {
        am_test_alloc_limit(limit);
        am_npz *z = NULL;
        am_error err = {0};
        am_status s = am_npz_read_mem(data, len, "plain.npz", NULL, &z, &err);
        AM_CHECK_MSG(s == AM_OK || s == AM_E_NOMEM, "limit %d: %s", (int)limit, am_status_name(s));
        if (s == AM_OK) ok_at = (int)limit;
        AM_CHECK(s == AM_OK || z == NULL);
        am_npz_free(z);
    }
    am_test_alloc_limit(0);
    AM_CHECK(ok_at > 5);
    /* the typed loaders and the writer too; a failed write leaves no file */
    const char *path = am_test_tmp("alloc_det.npz");
    det_fix d;
    memset(&d, 0, sizeof d);
    det_build(&d);
    bool wrote = false, loaded = false;
    for (uint64_t limit = 1; limit < 500 && !(wrote && loaded); limit++) {
        remove(path);
        am_test_alloc_limit(limit);
        am_status s = am_npz_write(path, d.arrs, 7, true, NULL);
        am_test_alloc_limit(0);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        AM_CHECK(s == AM_OK ? file_exists(path) : !file_exists(path));
        if (s != AM_OK) continue;
        wrote = true;
        am_test_alloc_limit(limit);
        am_det *det = NULL;
        s = am_det_load(path, &det, NULL);
        am_test_alloc_limit(0);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        if (s == AM_OK) loaded = true;
        am_det_free(det);
    }
    AM_CHECK(wrote && loaded);
    for (uint64_t limit = 1; limit < 500; limit++) {
        am_test_alloc_limit(limit);
        am_tracks *tr = NULL;
        am_status s = am_tracks_load(am_test_shared("golden/npz/plain.npz"), &tr, NULL);
        am_test_alloc_limit(0);
        AM_CHECK(s == AM_OK || s == AM_E_NOMEM);
        am_tracks_free(tr);
        if (s == AM_OK) break;
    }
    am_free(data);
}

#define AM_TESTS(X)                                                                              \
    X(golden_files_match_expected)                                                               \
    X(golden_bigendian_and_fortran_equal_plain)                                                  \
    X(golden_errors_name_member_and_offset)                                                      \
    X(npz_roundtrip_every_dtype)                                                                 \
    X(npz_writer_is_deterministic)                                                               \
    X(npz_empty_archive_roundtrips)                                                              \
    X(npz_write_failure_leaves_nothing)                                                          \
    X(npz_rejects_duplicate_members)                                                             \
    X(npz_crc_error_refused)                                                                     \
    X(npz_zip_bomb_guard)                                                                        \
    X(npz_every_prefix_refused)                                                                  \
    X(npy_every_prefix_refused)                                                                  \
    X(npy_header_versions_and_byte_orders)                                                       \
    X(npy_fortran_order_transposed)                                                              \
    X(npy_rejects_malformed_headers)                                                             \
    X(npy_respects_max_bytes)                                                                    \
    X(npy_rejects_bad_utf32)                                                                     \
    X(npy_bool_bytes_normalised)                                                                 \
    X(array_helpers_check_dtype_and_shape)                                                       \
    X(tracks_roundtrip_and_golden)                                                               \
    X(tracks_rejects_malformed)                                                                  \
    X(det_roundtrip)                                                                             \
    X(det_rejects_malformed)                                                                     \
    X(joints_roundtrip)                                                                          \
    X(joints_rejects_malformed)                                                                  \
    X(alloc_failure_sweep)
AM_TEST_MAIN(AM_TESTS)
