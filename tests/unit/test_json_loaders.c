/* Malformed-input tests for the JSON loaders (rig.json, motion.json, creature.json) and the
 * shared helpers in src/io/json.c: exact status codes, locations for syntax errors, paths in
 * schema errors, truncation sweeps, allocation failures, and write -> parse round trips. */
#include <stdlib.h>
#include <string.h>

#include "am_test.h"
#include "anymove/math.h"
#include "anymove/io.h"
#include "io/json_internal.h"

/* A three-bone chain with a stem limit, small enough to mutate by hand. */
static const char chain_rig[] =
    "{\n"
    "  \"joints\": {\"a\": [0, 0, 0], \"b\": [0, 0, 1], \"c\": [0.2, 0, 1.5], \"d\": [-0.2, 0, 1.5]},\n"
    "  \"bones\": [[\"trunk\", \"a\", \"b\", null],\n"
    "            [\"arm_L\", \"b\", \"c\", \"trunk\"],\n"
    "            [\"arm_R\", \"b\", \"d\", \"trunk\"]],\n"
    "  \"limits_deg\": {\"arm\": [[-10, 20], [-30, 40], [-50, 60]]}\n"
    "}\n";

static const char chain_motion[] =
    "{\"fps\": 24, \"bones\": [\"arm_R\", \"trunk\", \"arm_L\"],\n"
    " \"trans\": [[0, 0, 0], [0.1, 0, 0]],\n"
    " \"root_quat\": [[1, 0, 0, 0], [2, 0, 0, 0]],\n"
    " \"euler\": [[[0.1, 0.2, 0.3], [0, 0, 0], [-0.1, 0, 0.5]],\n"
    "           [[0.2, 0.1, 0.0], [0, 0, 0], [0.4, -0.3, 0.2]]],\n"
    " \"reproj_px\": {\"front\": 5.9, \"side\": 8.0},\n"
    " \"contacts\": {\"c\": [[0, 14], [30, 44]]},\n"
    " \"sync\": {\"paw_agreement\": {\"c\": 1.0, \"d\": null}, \"time_warped\": false}}\n";

static const char wolf_creature[] =
    "{\"name\": \"wolf\",\n"
    " \"layout\": {\"W_FRONT\": 420, \"W_SIDE\": 860, \"GROUND_V\": 650, \"M_PER_PX\": 0.0026389},\n"
    " \"feet\": [\"fpaw_L\", \"fpaw_R\", \"hpaw_L\", \"hpaw_R\"],\n"
    " \"contacts\": [\"fpaw_L\", \"fpaw_R\"]}\n";

static am_rig *chain(void)
{
    am_rig *rig = NULL;
    am_error err = {0};
    AM_CHECK_OK(am_rig_parse(chain_rig, strlen(chain_rig), "chain.json", &rig, &err), &err);
    return rig;
}

/* ---- small helpers to assert one failure ---- */

static am_status rig_status(const char *text, am_error *err)
{
    am_rig *rig = NULL;
    memset(err, 0, sizeof *err);
    am_status s = am_rig_parse(text, strlen(text), "t.json", &rig, err);
    if (s == AM_OK) AM_CHECK(rig != NULL);
    else AM_CHECK(rig == NULL && err->code == s);
    am_rig_free(rig);
    return s;
}

static am_status motion_status(const char *text, const am_rig *rig, am_error *err)
{
    am_motion *mo = NULL;
    memset(err, 0, sizeof *err);
    am_status s = am_motion_parse(text, strlen(text), "m.json", rig, &mo, err);
    if (s == AM_OK) AM_CHECK(mo != NULL);
    else AM_CHECK(mo == NULL && err->code == s);
    am_motion_free(mo);
    return s;
}

static am_status creature_status(const char *text, am_error *err)
{
    am_creature *c = NULL;
    memset(err, 0, sizeof *err);
    am_status s = am_creature_parse(text, strlen(text), "c.json", &c, err);
    if (s != AM_OK) AM_CHECK(c == NULL && err->code == s);
    am_creature_free(c);
    return s;
}

#define EXPECT_RIG(text, code, info_part) \
    do { am_error e_; AM_CHECK_STATUS(rig_status((text), &e_), (code)); \
         AM_CHECK_MSG(strstr(e_.info, (info_part)), "info '%s' lacks '%s'", e_.info, (info_part)); \
    } while (0)
#define EXPECT_MOTION(text, rig, code, info_part) \
    do { am_error e_; AM_CHECK_STATUS(motion_status((text), (rig), &e_), (code)); \
         AM_CHECK_MSG(strstr(e_.info, (info_part)), "info '%s' lacks '%s'", e_.info, (info_part)); \
    } while (0)
#define EXPECT_CREATURE(text, code, info_part) \
    do { am_error e_; AM_CHECK_STATUS(creature_status((text), &e_), (code)); \
         AM_CHECK_MSG(strstr(e_.info, (info_part)), "info '%s' lacks '%s'", e_.info, (info_part)); \
    } while (0)

/* ---- shared helpers ---- */

static void json_format_double_is_shortest_roundtrip(void)
{
    static const double vals[] = {0.1, 1.0, -0.0, 30, 1e300, -1e-300, 5e-324, 1.0 / 3.0,
                                  0.9938837346736189, 123456789012345678.0, 2.5e-8};
    static const char *const want[] = {"0.1", "1.0", "-0.0", "30.0", "1e+300", "-1e-300",
                                       "4.94065645841247e-324", "0.3333333333333333",
                                       "0.9938837346736189", "1.2345678901234568e+17",
                                       "2.5e-08"};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        char buf[40];
        ami_json_format_double(vals[i], buf, sizeof buf);
        AM_CHECK_MSG(strcmp(buf, want[i]) == 0, "%.17g -> '%s', want '%s'", vals[i], buf,
                     want[i]);
        AM_CHECK(strtod(buf, NULL) == vals[i]);
    }
}

/* Write the test document of json_writer_escapes_and_layout with flags. */
static am_status ami_write_sample(unsigned flags, const double *rows, char **text, am_error *err)
{
    size_t shape[2] = {3, 3}, small[2] = {2, 2};
    am_buf b = {0};
    ami_jw w;
    ami_jw_begin(&w, &b, flags);
    ami_jw_object(&w, NULL);
    ami_jw_string(&w, "s", "q\"b\\n\n\t\x01\xc3\xa9");
    ami_jw_numbers(&w, "m", rows, 2, shape);
    ami_jw_array(&w, "e");
    ami_jw_close(&w);
    ami_jw_numbers(&w, "t", rows, 2, small);
    ami_jw_record(&w, "r");
    ami_jw_int(&w, "n", 3);
    ami_jw_bool(&w, "ok", true);
    ami_jw_number_or_null(&w, "x", NAN);
    ami_jw_close(&w);
    ami_jw_close(&w);
    return ami_jw_take_string(&w, text, err);
}

static void json_writer_escapes_and_layout(void)
{
    double rows[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    am_error err = {0};
    char *text = NULL;
    AM_CHECK_OK(ami_write_sample(AMI_JSON_PRETTY, rows, &text, &err), &err);
    static const char want[] = "{\n  \"s\": \"q\\\"b\\\\n\\n\\t\\u0001\xc3\xa9\",\n"
                               "  \"m\": [\n    [1.0, 2.0, 3.0],\n    [4.0, 5.0, 6.0],\n"
                               "    [7.0, 8.0, 9.0]\n  ],\n"
                               "  \"e\": [],\n  \"t\": [[1.0, 2.0], [3.0, 4.0]],\n"
                               "  \"r\": {\"n\": 3, \"ok\": true, \"x\": null}\n}\n";
    AM_CHECK_MSG(text && strcmp(text, want) == 0, "got:\n%s", text ? text : "(null)");
    am_free(text);
    AM_CHECK_OK(ami_write_sample(AMI_JSON_COMPACT, rows, &text, &err), &err);
    AM_CHECK(text && strcmp(text, "{\"s\":\"q\\\"b\\\\n\\n\\t\\u0001\xc3\xa9\",\"m\":[[1.0,2.0,3.0],"
                                  "[4.0,5.0,6.0],[7.0,8.0,9.0]],\"e\":[],"
                                  "\"t\":[[1.0,2.0],[3.0,4.0]],\"r\":{\"n\":3,\"ok\":true,\"x\":null}}") == 0);
    am_free(text);
    /* A tree goes through the same writer, with the same layout. */
    json_t *doc = NULL;
    AM_CHECK_OK(ami_json_parse(want, strlen(want), "t", &doc, &err), &err);
    AM_CHECK_OK(ami_json_dump_string(doc, AMI_JSON_PRETTY, &text, &err), &err);
    AM_CHECK_MSG(text && strcmp(text, want) == 0, "tree got:\n%s", text ? text : "(null)");
    am_free(text);
    json_decref(doc);
    /* Non-finite values are refused, naming the element; the writer stays failed. */
    rows[4] = NAN;
    AM_CHECK_STATUS(ami_write_sample(AMI_JSON_PRETTY, rows, &text, &err), AM_E_NONFINITE);
    AM_CHECK_MSG(strstr(err.info, "m[1][1]"), "info: %s", err.info);
    AM_CHECK(text == NULL);
}

/* The one escaper checks UTF-8: a name that is not valid UTF-8 never reaches a file. */
static void json_writer_refuses_invalid_utf8(void)
{
    static const char *const bad[] = {"\xff", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xe2\x82"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_buf b = {0};
        ami_jw w;
        am_error err = {0};
        ami_jw_begin(&w, &b, AMI_JSON_PRETTY);
        ami_jw_object(&w, NULL);
        ami_jw_row(&w, "bones");
        ami_jw_string(&w, NULL, "ok");
        ami_jw_string(&w, NULL, bad[i]);
        ami_jw_close(&w);
        ami_jw_close(&w);
        AM_CHECK_STATUS(ami_jw_finish(&w, &err), AM_E_UTF8);
        AM_CHECK_MSG(strstr(err.info, "bones[1]"), "info: %s", err.info);
        am_buf_free(&b);
    }
    /* Keys too. */
    am_buf b = {0};
    ami_jw w;
    am_error err = {0};
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    ami_jw_number(&w, "\xfe", 1);
    ami_jw_close(&w);
    AM_CHECK_STATUS(ami_jw_finish(&w, &err), AM_E_UTF8);
    am_buf_free(&b);
    /* Valid multi-byte names pass unchanged. */
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_row(&w, NULL);
    ami_jw_string(&w, NULL, "\xe6\x89\x8b\xf0\x9f\xa6\x8a");
    ami_jw_close(&w);
    AM_CHECK_OK(ami_jw_finish(&w, &err), &err);
    AM_CHECK(b.data && strcmp(b.data, "[\"\xe6\x89\x8b\xf0\x9f\xa6\x8a\"]") == 0);
    am_buf_free(&b);
}

static void json_numbers_name_the_bad_element(void)
{
    json_t *doc = NULL;
    am_error err = {0};
    static const char text[] = "{\"x\": [[1, 2], [3, \"4\"]], \"y\": [[1, 2], [3]]}";
    AM_CHECK_OK(ami_json_parse(text, strlen(text), "n.json", &doc, &err), &err);
    size_t shape[2] = {0, 0};
    double *out = NULL;
    AM_CHECK_STATUS(ami_json_numbers_alloc(json_object_get(doc, "x"), "x", 2, shape, &out, &err),
                    AM_E_SCHEMA);
    AM_CHECK_MSG(strstr(err.info, "x[1][1]: expected a number, got a string"), "%s", err.info);
    AM_CHECK(out == NULL);
    size_t shape2[2] = {0, 0};
    AM_CHECK_STATUS(ami_json_numbers_alloc(json_object_get(doc, "y"), "y", 2, shape2, &out, &err),
                    AM_E_SHAPE);
    AM_CHECK_MSG(strstr(err.info, "y[1]: expected 2 elements, got 1"), "%s", err.info);
    /* Keys with dots are quoted in paths. */
    AM_CHECK(strcmp(ami_json_path_key("limits_deg", "arm.L").s, "limits_deg[\"arm.L\"]") == 0);
    AM_CHECK(strcmp(ami_json_path_index(ami_json_path_key("", "bones").s, 3).s, "bones[3]") == 0);
    json_decref(doc);
}

static void json_parse_maps_jansson_errors(void)
{
    json_t *doc = NULL;
    am_error err = {0};
    AM_CHECK_STATUS(ami_json_parse("{\n  \"a\": [1,\n 2,]}", 17, "x.json", &doc, &err),
                    AM_E_SYNTAX);
    AM_CHECK(err.line == 3 && err.col >= 1 && strcmp(err.file, "x.json") == 0);
    char msg[600];
    am_error_format(msg, sizeof msg, &err);
    AM_CHECK_MSG(strncmp(msg, "x.json:3:", 9) == 0 && strstr(msg, "syntax error"), "%s", msg);
    AM_CHECK_STATUS(ami_json_parse("", 0, "x.json", &doc, &err), AM_E_EMPTY);
    AM_CHECK_STATUS(ami_json_parse(" \n\t ", 4, "x.json", &doc, &err), AM_E_EMPTY);
    AM_CHECK(err.line >= 1 && err.col >= 1);
    AM_CHECK_STATUS(ami_json_parse("{\"a\": \"\xc3\x28\"}", 11, NULL, &doc, &err), AM_E_UTF8);
    AM_CHECK(err.line == 1 && err.col >= 1);
    AM_CHECK_STATUS(ami_json_parse("{\"a\": 1, \"a\": 2}", 16, NULL, &doc, &err), AM_E_DUPLICATE);
    AM_CHECK(err.line == 1 && err.col >= 1);
    AM_CHECK_STATUS(ami_json_parse("[1e400]", 7, NULL, &doc, &err), AM_E_NONFINITE);
    AM_CHECK_STATUS(ami_json_parse("[-123456789012345678901234567890]", 33, NULL, &doc, &err),
                    AM_E_NONFINITE);
    AM_CHECK_STATUS(ami_json_parse("{\"a\": \"\\u0000\"}", 15, NULL, &doc, &err), AM_E_SYNTAX);
    AM_CHECK_STATUS(ami_json_parse("[1] [2]", 7, NULL, &doc, &err), AM_E_SYNTAX);
    AM_CHECK_STATUS(ami_json_parse("42", 2, NULL, &doc, &err), AM_E_SYNTAX);
    /* Nesting deeper than jansson's limit is a limit, not a crash. */
    size_t depth = 100000;
    char *deep = malloc(depth);
    memset(deep, '[', depth);
    AM_CHECK_STATUS(ami_json_parse(deep, depth, NULL, &doc, &err), AM_E_LIMIT);
    free(deep);
    /* A UTF-8 byte order mark is skipped; text need not be NUL-terminated. */
    AM_CHECK_OK(ami_json_parse("\xef\xbb\xbf{}", 5, NULL, &doc, &err), &err);
    json_decref(doc);
    doc = NULL;
    AM_CHECK_OK(ami_json_parse("[1]xxxx", 3, NULL, &doc, &err), &err);
    json_decref(doc);
}

/* ---- rig.json ---- */

static void rig_parse_accepts_chain_and_resolves_stems(void)
{
    am_rig *rig = chain();
    if (!rig) return;
    AM_CHECK(rig->bone_count == 3 && rig->joint_count == 4 && rig->name == NULL);
    int r = am_rig_find_bone(rig, "arm_R");
    AM_CHECK(r > 0 && rig->has_limit[r]);
    if (r > 0) {
        AM_CHECK_NEAR(AM_DEG(rig->limits[6 * r + 2]), -40, 1e-12);
        AM_CHECK_NEAR(AM_DEG(rig->limits[6 * r + 3]), 30, 1e-12);
    }
    am_rig_free(rig);
}

static void rig_rejects_wrong_shapes(void)
{
    EXPECT_RIG("[1, 2]", AM_E_SCHEMA, "document: expected an object");
    EXPECT_RIG("{\"bones\": []}", AM_E_SCHEMA, "missing key 'joints'");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0]}}", AM_E_SCHEMA, "missing key 'bones'");
    EXPECT_RIG("{\"joints\": [], \"bones\": []}", AM_E_SCHEMA, "joints: expected an object");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0]}, \"bones\": []}", AM_E_SHAPE,
               "joints.a: expected 3 elements, got 2");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,\"z\"]}, \"bones\": []}", AM_E_SCHEMA,
               "joints.a[2]: expected a number");
    EXPECT_RIG("{\"joints\": {\"a.L\": 1}, \"bones\": []}", AM_E_SCHEMA,
               "joints[\"a.L\"]: expected an array");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": {}}", AM_E_SCHEMA,
               "bones: expected an array");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]},"
               " \"bones\": [[\"x\", \"a\", \"b\", null], [\"y\", \"a\", \"b\", null],"
               " [\"z\", \"a\", \"b\", null], [\"w\", 7, \"b\", \"x\"]]}",
               AM_E_SCHEMA, "bones[3][1]: expected a string, got a number");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\"]]}",
               AM_E_SHAPE, "bones[0]: expected [name, head_joint, tail_joint, parent_or_null]");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [\"x\"]}", AM_E_SCHEMA,
               "bones[0]: expected an array, got a string");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", 0]]}",
               AM_E_SCHEMA, "bones[0][3]: expected a string");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"limits_deg\": {\"x\": [[0, 1], [0, 1]]}}",
               AM_E_SHAPE, "limits_deg.x: expected 3 elements, got 2");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"limits_deg\": {\"x\": [[0, 1], [0, 1], [0, \"1\"]]}}",
               AM_E_SCHEMA, "limits_deg.x[2][1]: expected a number");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"limits_deg\": [1]}",
               AM_E_SCHEMA, "limits_deg: expected an object");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"name\": 3}",
               AM_E_SCHEMA, "name: expected a string");
}

static void rig_rejects_bad_names_and_structure(void)
{
    am_error e;
    /* Name, structure and limit checks come from am_rig_build, with the file name attached. */
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]},"
                               " \"bones\": [[\"x\", \"a\", \"hed\", null]]}", &e), AM_E_NAME);
    AM_CHECK_MSG(strstr(e.info, "hed") && strcmp(e.file, "t.json") == 0, "%s", e.info);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1], \"c\": [0,0,2]},"
                               " \"bones\": [[\"x\", \"a\", \"b\", null], [\"x\", \"b\", \"c\", \"x\"]]}",
                               &e), AM_E_DUPLICATE);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1], \"c\": [0,0,2],"
                               " \"d\": [0,0,3]}, \"bones\": [[\"r\", \"a\", \"b\", null],"
                               " [\"x\", \"b\", \"c\", \"y\"], [\"y\", \"c\", \"d\", \"x\"]]}",
                               &e), AM_E_CYCLE);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1], \"c\": [0,0,2]},"
                               " \"bones\": [[\"x\", \"a\", \"b\", null], [\"y\", \"b\", \"c\", null]]}",
                               &e), AM_E_ROOT);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]},"
                               " \"bones\": [[\"x\", \"a\", \"b\", null]],"
                               " \"limits_deg\": {\"nosuch\": [[0,1],[0,1],[0,1]]}}", &e), AM_E_NAME);
    AM_CHECK_MSG(strstr(e.info, "nosuch"), "%s", e.info);
    AM_CHECK_STATUS(rig_status("{\"joints\": {}, \"bones\": []}", &e), AM_E_EMPTY);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,0]},"
                               " \"bones\": [[\"x\", \"a\", \"b\", null]]}", &e), AM_E_DEGENERATE);
}

static void rig_rejects_syntax_utf8_duplicates_and_huge_numbers(void)
{
    am_error e;
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0],\n \"a\": [0,0,1]}, \"bones\": []}", &e),
                    AM_E_DUPLICATE);
    AM_CHECK(e.line == 2 && e.col >= 1 && strcmp(e.file, "t.json") == 0);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,1e999]}, \"bones\": []}", &e),
                    AM_E_NONFINITE);
    AM_CHECK(e.line == 1 && e.col >= 1);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"\xe2\x82\": [0,0,0]}, \"bones\": []}", &e),
                    AM_E_UTF8);
    AM_CHECK(e.line == 1 && e.col >= 1);
    AM_CHECK_STATUS(rig_status("{\"joints\": {\"a\": [0,0,0],}, \"bones\": []}", &e), AM_E_SYNTAX);
    AM_CHECK(e.line == 1 && e.col >= 1);
    AM_CHECK_STATUS(rig_status("", &e), AM_E_EMPTY);
    /* Missing file: a read error naming the path. */
    am_rig *rig = NULL;
    AM_CHECK_STATUS(am_rig_load("/nonexistent/rig.json", &rig, &e), AM_E_READ);
    AM_CHECK(rig == NULL && strcmp(e.file, "/nonexistent/rig.json") == 0);
}

/* Every prefix of a valid file must fail cleanly (the whole file, and the file without its
 * trailing whitespace, parse). Syntax errors carry a 1-based line and column. */
typedef am_status (*parse_fn)(const char *text, size_t len, am_error *err);

static am_status parse_rig_n(const char *text, size_t len, am_error *err)
{
    am_rig *rig = NULL;
    am_status s = am_rig_parse(text, len, "p.json", &rig, err);
    am_rig_free(rig);
    return s;
}

static const am_rig *sweep_rig;
static am_status parse_motion_n(const char *text, size_t len, am_error *err)
{
    am_motion *mo = NULL;
    am_status s = am_motion_parse(text, len, "p.json", sweep_rig, &mo, err);
    am_motion_free(mo);
    return s;
}

static am_status parse_creature_n(const char *text, size_t len, am_error *err)
{
    am_creature *c = NULL;
    am_status s = am_creature_parse(text, len, "p.json", &c, err);
    am_creature_free(c);
    return s;
}

/* stride > 1 samples the middle of long files (every prefix near both ends is still tried):
 * jansson re-reads the whole prefix each time, so a full sweep is quadratic. */
static void sweep_prefixes(const char *what, const char *text, size_t len, parse_fn fn,
                           size_t stride)
{
    size_t end = len;
    while (end > 0 && strchr(" \n\r\t", text[end - 1])) end--;
    /* Parse from an exact-size heap copy so ASan sees any read past the given length. */
    size_t bad = 0;
    size_t tried = 0;
    for (size_t n = 0; n <= len; n += (n < 512 || n + 512 > len) ? 1 : stride) {
        tried++;
        char *copy = malloc(n ? n : 1);
        memcpy(copy, text, n);
        am_error err;
        memset(&err, 0, sizeof err);
        am_status s = fn(copy, n, &err);
        free(copy);
        bool want_ok = n >= end;
        if ((s == AM_OK) != want_ok) {
            if (bad++ < 5) am_test_fail(__FILE__, __LINE__, "%s: prefix %zu/%zu gave %s", what, n,
                                        len, am_status_name(s));
            continue;
        }
        if ((s == AM_E_SYNTAX || s == AM_E_EMPTY) && (err.line < 1 || err.col < 1 ||
                                                      strcmp(err.file, "p.json") != 0))
            if (bad++ < 5) am_test_fail(__FILE__, __LINE__, "%s: prefix %zu: no location", what, n);
    }
    printf("     %s: %zu of %zu prefixes\n", what, tried, len + 1);
}

static void truncated_files_fail_cleanly(void)
{
    sweep_prefixes("chain rig", chain_rig, strlen(chain_rig), parse_rig_n, 1);
    sweep_prefixes("wolf creature", wolf_creature, strlen(wolf_creature), parse_creature_n, 1);
    am_rig *rig = chain();
    sweep_rig = rig;
    sweep_prefixes("chain motion", chain_motion, strlen(chain_motion), parse_motion_n, 1);
    am_rig_free(rig);
    sweep_rig = NULL;

    char *text = NULL;
    size_t len = 0;
    am_error err = {0};
    AM_CHECK_OK(am_file_read(am_test_shared("golden/fk/testrig.json"), 0, &text, &len, &err), &err);
    if (text) sweep_prefixes("testrig.json", text, len, parse_rig_n, 1);
    am_free(text);
    text = NULL;
    am_rig *trig = NULL;
    AM_CHECK_OK(am_rig_load(am_test_shared("golden/fk/testrig.json"), &trig, &err), &err);
    AM_CHECK_OK(am_file_read(am_test_shared("golden/fk/testrig_motion.json"), 0, &text, &len, &err),
                &err);
    sweep_rig = trig;
    if (text && trig) sweep_prefixes("testrig_motion.json", text, len, parse_motion_n, 13);
    sweep_rig = NULL;
    am_free(text);
    am_rig_free(trig);
}

/* ---- motion.json ---- */

static void motion_parse_binds_to_rig_order(void)
{
    am_rig *rig = chain();
    am_motion *mo = NULL;
    am_error err = {0};
    if (!rig) return;
    AM_CHECK_OK(am_motion_parse(chain_motion, strlen(chain_motion), "m.json", rig, &mo, &err),
                &err);
    if (!mo) goto done;
    AM_CHECK(mo->frame_count == 2 && mo->bone_count == 3 && mo->fps == 24);
    int l = am_rig_find_bone(rig, "arm_L"), r = am_rig_find_bone(rig, "arm_R");
    AM_CHECK(strcmp(mo->bone_names[l], "arm_L") == 0 && strcmp(mo->bone_names[0], "trunk") == 0);
    AM_CHECK_NEAR(mo->euler[3 * (3 + (size_t)l) + 0], 0.4, 0);
    AM_CHECK_NEAR(mo->euler[3 * (size_t)r + 2], 0.3, 0);
    /* root_quat rows are normalized: [2, 0, 0, 0] -> identity. */
    AM_CHECK_NEAR(mo->root_quat[4], 1, 0);
    AM_CHECK(mo->quat == NULL && mo->joints == NULL && mo->joint_count == 0);
    AM_CHECK(mo->extra_json && strstr(mo->extra_json, "\"reproj_px\"") &&
             strstr(mo->extra_json, "\"contacts\":{\"c\":[[0,14],[30,44]]}"));
    /* Without a rig: file order. */
    am_motion *raw = NULL;
    AM_CHECK_OK(am_motion_parse(chain_motion, strlen(chain_motion), "m.json", NULL, &raw, &err),
                &err);
    AM_CHECK(raw && strcmp(raw->bone_names[0], "arm_R") == 0 && raw->euler[0] == 0.1);
    am_motion_free(raw);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

static void motion_rejects_bad_documents(void)
{
    am_rig *rig = chain();
    if (!rig) return;
    const char *base = "\"bones\": [\"trunk\", \"arm_L\"], \"trans\": [[0,0,0]], "
                       "\"root_quat\": [[1,0,0,0]]";
    char buf[1024];
#define M(fmt, ...) (snprintf(buf, sizeof buf, fmt, __VA_ARGS__), buf)
    EXPECT_MOTION(M("{%s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig, AM_E_SCHEMA,
                  "missing key 'fps'");
    EXPECT_MOTION(M("{\"fps\": 0, %s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig, AM_E_VALUE,
                  "fps: 0 is outside [0.001, 10000]");
    /* Positive is not enough: 1e-300 fps would ask for keyframe times no float holds. */
    EXPECT_MOTION(M("{\"fps\": 1e-300, %s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig,
                  AM_E_VALUE, "fps: 1e-300 is outside");
    EXPECT_MOTION(M("{\"fps\": 20000, %s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig,
                  AM_E_VALUE, "fps: 20000 is outside");
    EXPECT_MOTION(M("{\"fps\": -30, %s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig, AM_E_VALUE,
                  "fps");
    EXPECT_MOTION(M("{\"fps\": \"30\", %s, \"euler\": [[[0,0,0],[0,0,0]]]}", base), rig,
                  AM_E_SCHEMA, "fps: expected a number, got a string");
    EXPECT_MOTION(M("{\"fps\": 1e999, %s}", base), rig, AM_E_NONFINITE, "overflow");
    EXPECT_MOTION(M("{\"fps\": 30, %s}", base), rig, AM_E_SCHEMA, "needs 'euler' or 'quat'");
    EXPECT_MOTION("{\"fps\": 30, \"bones\": [\"trunk\"], \"trans\": [], \"root_quat\": [],"
                  " \"euler\": []}", rig, AM_E_EMPTY, "no frames");
    EXPECT_MOTION("{\"fps\": 30, \"bones\": [], \"trans\": [[0,0,0]], \"root_quat\": [[1,0,0,0]],"
                  " \"euler\": [[]]}", rig, AM_E_EMPTY, "bones");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]]}",
                    "\"bones\": [\"trunk\", \"hand_L\"], \"trans\": [[0,0,0]], "
                    "\"root_quat\": [[1,0,0,0]]"), rig, AM_E_NAME, "bone 'hand_L' is not in the rig");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]]}",
                    "\"bones\": [\"trunk\", \"trunk\"], \"trans\": [[0,0,0]], "
                    "\"root_quat\": [[1,0,0,0]]"), rig, AM_E_DUPLICATE, "bones[1]: 'trunk'");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]]}",
                    "\"bones\": [\"trunk\", \"arm_L\"], \"trans\": [[0,0,0]], "
                    "\"root_quat\": [[1,0,0,0], [1,0,0,0]]"), rig, AM_E_SHAPE,
                  "root_quat: expected 1 element, got 2");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0]]]}", base), rig, AM_E_SHAPE,
                  "euler[0][1]: expected 3 elements, got 2");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0]]]}", base), rig, AM_E_SHAPE,
                  "euler[0]: expected 2 elements, got 1");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,null,0]]]}", base), rig,
                  AM_E_SCHEMA, "euler[0][1][1]: expected a number, got null");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"quat\": [[[1,0,0,0],[0,0,0,0]]]}", base), rig,
                  AM_E_VALUE, "quat[0][1]: zero quaternion");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]]}",
                    "\"bones\": [\"trunk\", \"arm_L\"], \"trans\": [[0,0,0]], "
                    "\"root_quat\": [[0,0,0,0]]"), rig, AM_E_VALUE, "root_quat[0]: zero quaternion");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]], \"joints\": [[[0,0,0]]]}",
                    base), rig, AM_E_SCHEMA, "joints: needs 'joint_names'");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]], \"joint_names\": [\"zz\"],"
                    " \"joints\": [[[0,0,0]]]}", base), rig, AM_E_NAME, "joint 'zz' is not in the rig");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]], \"joint_names\": [\"a\"],"
                    " \"joints\": [[[0,0]]]}", base), rig, AM_E_SHAPE, "joints[0][0]");
    EXPECT_MOTION(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,0,0]]], \"fps\": 25}", base), rig,
                  AM_E_DUPLICATE, "duplicate");
    EXPECT_MOTION("{\"fps\": 30, \"bones\": [\"trunk\"], \"trans\": [[0,0,0]], \"root_quat\": "
                  "[[1,0,0,0]], \"euler\": [[[0,0,0]]], \"note\": \"\xc0\xaf\"}",
                  rig, AM_E_UTF8, "");
    /* A subset of the rig's bones is fine: the others keep the rest rotation. */
    am_error e;
    AM_CHECK_STATUS(motion_status(M("{\"fps\": 30, %s, \"euler\": [[[0,0,0],[0,1,0]]]}", base),
                                  rig, &e), AM_OK);
#undef M
    am_rig_free(rig);
}

static int cmp_arrays(const double *a, const double *b, size_t n)
{
    if (!a || !b) return a == b ? 0 : -1;
    int differ = 0;
    for (size_t i = 0; i < n; i++) differ += a[i] != b[i];
    return differ;
}

static void motion_roundtrip_is_exact(void)
{
    am_error err = {0};
    am_rig *rig = NULL;
    am_motion *mo = NULL, *back = NULL, *back2 = NULL;
    char *text = NULL, *text2 = NULL;
    AM_CHECK_OK(am_rig_load(am_test_shared("golden/fk/testrig.json"), &rig, &err), &err);
    if (!rig) return;
    AM_CHECK_OK(am_motion_load(am_test_shared("golden/fk/testrig_motion.json"), rig, &mo, &err),
                &err);
    if (!mo) goto done;
    /* Extras ride along verbatim. */
    mo->extra_json = am_strdup("{\"reproj_px\":{\"front\":5.9,\"front_x_only\":2.5},"
                               "\"sync\":{\"best_lag_frames\":0,\"time_warped\":false,"
                               "\"paw_agreement\":{\"fpaw_L\":1.0,\"hpaw_R\":null}}}");
    AM_CHECK_OK(am_motion_to_json(mo, &text, &err), &err);
    if (!text) goto done;
    AM_CHECK(strstr(text, "\"quat\"") && strstr(text, "\"euler\"") && strstr(text, "\"joints\""));
    AM_CHECK(strstr(text, "\"front_x_only\": 2.5") && strstr(text, "\"time_warped\": false") &&
             strstr(text, "\"hpaw_R\": null"));
    AM_CHECK_OK(am_motion_parse(text, strlen(text), "rt.json", rig, &back, &err), &err);
    if (!back) goto done;
    size_t T = mo->frame_count, B = mo->bone_count, J = mo->joint_count;
    AM_CHECK(back->frame_count == T && back->bone_count == B && back->joint_count == J);
    AM_CHECK(back->fps == mo->fps);
    AM_CHECK(cmp_arrays(back->trans, mo->trans, T * 3) == 0);
    AM_CHECK(cmp_arrays(back->root_quat, mo->root_quat, T * 4) == 0);
    AM_CHECK(cmp_arrays(back->euler, mo->euler, T * B * 3) == 0);
    AM_CHECK(cmp_arrays(back->joints, mo->joints, T * J * 3) == 0);
    AM_CHECK(back->quat != NULL);
    AM_CHECK(back->extra_json && strcmp(back->extra_json, mo->extra_json) == 0);
    /* Written quaternions agree with the Euler angles they came from. */
    double maxd = 0;
    for (size_t i = 0; back->quat && i < T * B; i++) {
        double q[4];
        am_euler_xyz_to_quat(mo->euler + 3 * i, q);
        for (int k = 0; k < 4; k++) maxd = fmax(maxd, fabs(q[k] - back->quat[4 * i + k]));
    }
    AM_CHECK(maxd == 0);
    /* Deterministic bytes, and the file writer says the same. */
    AM_CHECK_OK(am_motion_to_json(back, &text2, &err), &err);
    AM_CHECK(text2 && strcmp(text, text2) == 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/motion_rt.json", am_test_tmpdir());
    AM_CHECK_OK(am_motion_write(mo, path, &err), &err);
    AM_CHECK_OK(am_motion_load(path, rig, &back2, &err), &err);
    AM_CHECK(back2 && cmp_arrays(back2->euler, mo->euler, T * B * 3) == 0);
done:
    am_free(text);
    am_free(text2);
    am_motion_free(mo);
    am_motion_free(back);
    am_motion_free(back2);
    am_rig_free(rig);
}

static void motion_quat_only_matches_euler(void)
{
    am_error err = {0};
    am_rig *rig = chain();
    am_motion *mo = NULL, *qm = NULL;
    char *text = NULL;
    if (!rig) return;
    AM_CHECK_OK(am_motion_parse(chain_motion, strlen(chain_motion), "m.json", rig, &mo, &err),
                &err);
    if (!mo) goto done;
    /* Write, drop "euler" from the text, and read the quaternions back. */
    AM_CHECK_OK(am_motion_to_json(mo, &text, &err), &err);
    json_t *doc = NULL;
    AM_CHECK_OK(ami_json_parse(text, strlen(text), NULL, &doc, &err), &err);
    json_object_del(doc, "euler");
    am_free(text);
    text = NULL;
    AM_CHECK_OK(ami_json_dump_string(doc, AMI_JSON_COMPACT, &text, &err), &err);
    json_decref(doc);
    AM_CHECK_OK(am_motion_parse(text, strlen(text), "q.json", rig, &qm, &err), &err);
    if (!qm) goto done;
    AM_CHECK(qm->quat != NULL);
    size_t T = mo->frame_count, J = rig->joint_count;
    double *a = calloc(T * J * 3, sizeof *a), *b = calloc(T * J * 3, sizeof *b);
    am_rig_fk_clip(rig, mo, a);
    am_rig_fk_clip(rig, qm, b);
    am_test_diff d = {0};
    for (size_t i = 0; i < T * J * 3; i++) am_test_diff_add(&d, a[i], b[i]);
    AM_CHECK_MSG(d.max < 1e-12, "quat-only FK differs by %.3g", d.max);
    free(a);
    free(b);
done:
    am_free(text);
    am_motion_free(mo);
    am_motion_free(qm);
    am_rig_free(rig);
}

static void motion_create_and_compute_joints(void)
{
    am_error err = {0};
    am_rig *rig = chain();
    am_motion *mo = NULL;
    if (!rig) return;
    AM_CHECK_STATUS(am_motion_create(rig, 0, 30, &mo, &err), AM_E_EMPTY);
    AM_CHECK_STATUS(am_motion_create(rig, 3, 0, &mo, &err), AM_E_ARG);
    AM_CHECK_STATUS(am_motion_create(rig, 3, NAN, &mo, &err), AM_E_ARG);
    AM_CHECK_OK(am_motion_create(rig, 3, 30, &mo, &err), &err);
    if (!mo) goto done;
    AM_CHECK(mo->frame_count == 3 && mo->bone_count == 3 && mo->root_quat[8] == 1);
    /* Put the root at its rest head: FK then gives the rest joints. */
    for (size_t t = 0; t < 3; t++) memcpy(mo->trans + 3 * t, rig->joint_rest, 3 * sizeof(double));
    AM_CHECK_OK(am_motion_compute_joints(mo, rig, &err), &err);
    AM_CHECK(mo->joint_count == rig->joint_count && mo->joint_names);
    double maxd = 0;
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < rig->joint_count * 3; i++)
            maxd = fmax(maxd, fabs(mo->joints[t * rig->joint_count * 3 + i] - rig->joint_rest[i]));
    AM_CHECK_MSG(maxd < 1e-12, "rest FK off by %.3g", maxd);
    /* A NaN is refused by the writer, naming the element. */
    mo->trans[4] = NAN;
    char *text = NULL;
    AM_CHECK_STATUS(am_motion_to_json(mo, &text, &err), AM_E_NONFINITE);
    AM_CHECK_MSG(strstr(err.info, "trans[1][1]"), "%s", err.info);
    AM_CHECK(text == NULL);
    /* A motion bound to a different bone list is refused by compute_joints. */
    am_motion *raw = NULL;
    AM_CHECK_OK(am_motion_parse(chain_motion, strlen(chain_motion), "m.json", NULL, &raw, &err),
                &err);
    if (raw) AM_CHECK_STATUS(am_motion_compute_joints(raw, rig, &err), AM_E_ARG);
    am_motion_free(raw);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

/* ---- creature.json ---- */

static void creature_defaults_and_overrides(void)
{
    am_error err = {0};
    am_creature *c = NULL;
    am_layout def;
    am_layout_default(&def);
    AM_CHECK(def.w_front == 420 && def.w_side == 860 && def.ground_v == 650 &&
             def.m_per_px == 1.9 / 720 && def.front_cx == 210 && def.side_cx == 850);
    AM_CHECK_OK(am_creature_parse("{}", 2, "c.json", &c, &err), &err);
    AM_CHECK(c && !c->name && c->feet_count == 0 && c->contact_count == 0 &&
             memcmp(&c->layout, &def, sizeof def) == 0);
    am_creature_free(c);
    c = NULL;
    AM_CHECK_OK(am_creature_parse(wolf_creature, strlen(wolf_creature), "c.json", &c, &err), &err);
    AM_CHECK(c && strcmp(c->name, "wolf") == 0 && c->feet_count == 4 && c->contact_count == 2);
    AM_CHECK(c && c->layout.m_per_px == 0.0026389 && c->layout.front_cx == 210);
    am_creature_free(c);
    c = NULL;
    static const char t2[] = "{\"layout\": {\"W_FRONT\": 600, \"W_SIDE\": 400, \"SIDE_CX\": 700,"
                             " \"extra\": \"ignored\"}, \"feet\": [\"l\", \"r\"], \"colour\": 3}";
    AM_CHECK_OK(am_creature_parse(t2, strlen(t2), "c.json", &c, &err), &err);
    AM_CHECK(c && c->layout.front_cx == 300 && c->layout.side_cx == 700 &&
             c->layout.ground_v == 650);
    AM_CHECK(c && c->contact_count == 2 && strcmp(c->contacts[1], "r") == 0);
    am_creature_free(c);
    c = NULL;
    static const char t3[] = "{\"layout\": {\"W_FRONT\": 500}}";
    AM_CHECK_OK(am_creature_parse(t3, strlen(t3), "c.json", &c, &err), &err);
    AM_CHECK(c && c->layout.front_cx == 250 && c->layout.side_cx == 500 + 430);
    am_creature_free(c);
    am_creature_free(NULL);
}

static void creature_rejects_bad_documents(void)
{
    EXPECT_CREATURE("[]", AM_E_SCHEMA, "document: expected an object");
    EXPECT_CREATURE("{\"layout\": 3}", AM_E_SCHEMA, "layout: expected an object");
    EXPECT_CREATURE("{\"layout\": {\"W_FRONT\": \"420\"}}", AM_E_SCHEMA,
                    "layout.W_FRONT: expected a number");
    EXPECT_CREATURE("{\"layout\": {\"M_PER_PX\": 0}}", AM_E_VALUE, "layout.M_PER_PX");
    EXPECT_CREATURE("{\"layout\": {\"W_SIDE\": -1}}", AM_E_VALUE, "layout.W_SIDE");
    EXPECT_CREATURE("{\"layout\": {\"GROUND_V\": 1e400}}", AM_E_NONFINITE, "");
    EXPECT_CREATURE("{\"feet\": [\"a\", 2]}", AM_E_SCHEMA, "feet[1]: expected a string");
    EXPECT_CREATURE("{\"feet\": \"a\"}", AM_E_SCHEMA, "feet: expected an array");
    EXPECT_CREATURE("{\"contacts\": [null]}", AM_E_SCHEMA, "contacts[0]");
    EXPECT_CREATURE("{\"name\": [\"wolf\"]}", AM_E_SCHEMA, "name: expected a string");
    EXPECT_CREATURE("{\"name\": \"wolf\", \"name\": \"fox\"}", AM_E_DUPLICATE, "duplicate");
    EXPECT_CREATURE("{\"name\": \"w\xffolf\"}", AM_E_UTF8, "");
    EXPECT_CREATURE("{\"name\": \"wolf\"", AM_E_SYNTAX, "");
    EXPECT_CREATURE("", AM_E_EMPTY, "");
}

/* ---- allocation failures: every limit gives NOMEM or success, never a leak or crash ---- */

static void loaders_survive_allocation_failures(void)
{
    char *mtext = NULL;
    size_t mlen = 0;
    am_error err = {0};
    AM_CHECK_OK(am_file_read(am_test_shared("golden/fk/testrig_motion.json"), 0, &mtext, &mlen,
                             &err), &err);
    am_rig *rig = chain(), *trig = NULL;
    AM_CHECK_OK(am_rig_load(am_test_shared("golden/fk/testrig.json"), &trig, &err), &err);
    if (!rig || !trig || !mtext) goto done;
    int kinds_ok[3] = {0, 0, 0};
    for (uint64_t limit = 1; limit < 400; limit++) {
        for (int kind = 0; kind < 3; kind++) {
            am_test_alloc_limit(limit);
            am_status s;
            if (kind == 0) {
                am_rig *r = NULL;
                s = am_rig_parse(chain_rig, strlen(chain_rig), "a.json", &r, &err);
                am_rig_free(r);
            } else if (kind == 1) {
                am_motion *m = NULL;
                s = am_motion_parse(mtext, mlen, "a.json", trig, &m, &err);
                if (s == AM_OK) {
                    char *out = NULL;
                    s = am_motion_to_json(m, &out, &err);
                    am_free(out);
                }
                am_motion_free(m);
            } else {
                am_creature *c = NULL;
                s = am_creature_parse(wolf_creature, strlen(wolf_creature), "a.json", &c, &err);
                am_creature_free(c);
            }
            am_test_alloc_limit(0);
            AM_CHECK_MSG(s == AM_OK || s == AM_E_NOMEM, "kind %d limit %llu: %s", kind,
                         (unsigned long long)limit, am_status_name(s));
            if (s == AM_OK) kinds_ok[kind] = 1;
        }
    }
    AM_CHECK(kinds_ok[0] && kinds_ok[1] && kinds_ok[2]);
done:
    am_test_alloc_limit(0);
    am_free(mtext);
    am_rig_free(rig);
    am_rig_free(trig);
}

/* SPEC 2.1 helpers: read into is_helper, written back, checked by name. */
static void rig_helpers_round_trip(void)
{
    static const char text[] =
        "{\"joints\": {\"a\": [0, 0, 0], \"b\": [0, 0, 1], \"c\": [0.2, 0, 1.5], \"d\": [-0.2, 0, 1.5]},"
        " \"bones\": [[\"trunk\", \"a\", \"b\", null], [\"arm_L\", \"b\", \"c\", \"trunk\"],"
        " [\"ik.R\", \"b\", \"d\", \"trunk\"]], \"helpers\": [\"ik.R\"], \"skin\": \"skin.npz\"}";
    am_error err = {0};
    am_rig *rig = NULL, *back = NULL;
    char *out = NULL, *out2 = NULL;
    AM_CHECK_OK(am_rig_parse(text, strlen(text), "h.json", &rig, &err), &err);
    if (!rig) return;
    int h = am_rig_find_bone(rig, "ik.R"), a = am_rig_find_bone(rig, "arm_L");
    AM_CHECK(h > 0 && a > 0 && rig->is_helper[h] == 1 && rig->is_helper[a] == 0 && rig->is_helper[0] == 0);
    /* "helpers" is the format's own key now, not an extra one; other keys still ride along. */
    AM_CHECK(rig->extra_json && !strstr(rig->extra_json, "helpers") && strstr(rig->extra_json, "skin.npz"));
    AM_CHECK_OK(am_rig_to_json(rig, &out, &err), &err);
    AM_CHECK(out && strstr(out, "\"helpers\": [\"ik.R\"]") && strstr(out, "\"skin\": \"skin.npz\""));
    if (out) AM_CHECK_OK(am_rig_parse(out, strlen(out), "rt.json", &back, &err), &err);
    if (back) {
        AM_CHECK(back->is_helper[am_rig_find_bone(back, "ik.R")] == 1);
        AM_CHECK_OK(am_rig_to_json(back, &out2, &err), &err);
        AM_CHECK(out2 && strcmp(out, out2) == 0);
    }
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"helpers\": [\"y\"]}", AM_E_NAME, "helper 'y' is not a bone");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"helpers\": [\"x\", \"x\"]}", AM_E_DUPLICATE, "helper 'x' is listed twice");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"helpers\": \"x\"}", AM_E_SCHEMA, "helpers: expected an array");
    EXPECT_RIG("{\"joints\": {\"a\": [0,0,0], \"b\": [0,0,1]}, \"bones\": [[\"x\", \"a\", \"b\", null]],"
               " \"helpers\": [3]}", AM_E_SCHEMA, "helpers[0]");
    am_free(out);
    am_free(out2);
    am_rig_free(rig);
    am_rig_free(back);
}

/* loc (SPEC 4.3): bound to the rig's order like the rotations, the root's entry dropped,
 * written back bit-identical; absent means NULL. */
static void motion_loc_round_trip(void)
{
    static const char text[] =
        "{\"fps\": 24, \"bones\": [\"arm_R\", \"trunk\", \"arm_L\"],\n"
        " \"trans\": [[0, 0, 0], [0.1, 0, 0]], \"root_quat\": [[1, 0, 0, 0], [1, 0, 0, 0]],\n"
        " \"euler\": [[[0.1, 0.2, 0.3], [0, 0, 0], [-0.1, 0, 0.5]], [[0.2, 0.1, 0.0], [0, 0, 0], [0.4, -0.3, 0.2]]],\n"
        " \"loc\": [[[0.01, 0.02, 0.03], [9, 9, 9], [0, 0, 0]], [[0.1, 0.3333333333333333, 1e-17], [9, 9, 9], [0, -0.5, 0]]]}";
    am_error err = {0};
    am_rig *rig = chain();
    am_motion *mo = NULL, *back = NULL;
    char *out = NULL, *out2 = NULL;
    if (!rig) return;
    AM_CHECK_OK(am_motion_parse(text, strlen(text), "loc.json", rig, &mo, &err), &err);
    if (!mo) goto done;
    AM_CHECK(mo->loc != NULL);
    int r = am_rig_find_bone(rig, "arm_R"), l = am_rig_find_bone(rig, "arm_L");
    size_t B = mo->bone_count;
    AM_CHECK(mo->loc[3 * (size_t)r] == 0.01 && mo->loc[3 * (B + (size_t)r) + 1] == 0.3333333333333333);
    AM_CHECK(mo->loc[3 * (B + (size_t)l) + 1] == -0.5);
    AM_CHECK(mo->loc[0] == 0 && mo->loc[3 * B + 2] == 0); /* the root's entry */
    AM_CHECK_OK(am_motion_to_json(mo, &out, &err), &err);
    if (out) AM_CHECK_OK(am_motion_parse(out, strlen(out), "rt.json", rig, &back, &err), &err);
    if (back) {
        AM_CHECK(back->loc && cmp_arrays(back->loc, mo->loc, 2 * B * 3) == 0);
        AM_CHECK_OK(am_motion_to_json(back, &out2, &err), &err);
        AM_CHECK(out2 && strcmp(out, out2) == 0);
    }
    EXPECT_MOTION("{\"fps\": 24, \"bones\": [\"trunk\"], \"trans\": [[0,0,0]], \"root_quat\": [[1,0,0,0]],"
                  " \"euler\": [[[0,0,0]]], \"loc\": [[[0,0]]]}", rig, AM_E_SHAPE, "loc[0][0]");
    EXPECT_MOTION("{\"fps\": 24, \"bones\": [\"trunk\"], \"trans\": [[0,0,0]], \"root_quat\": [[1,0,0,0]],"
                  " \"euler\": [[[0,0,0]]], \"loc\": [[[0,0,\"x\"]]]}", rig, AM_E_SCHEMA, "loc[0][0][2]");
done:
    am_free(out);
    am_free(out2);
    am_motion_free(mo);
    am_motion_free(back);
    am_rig_free(rig);
}

/* A bone name that is not UTF-8 never reaches a file: AM_E_UTF8 naming it, nothing written. */
static void motion_write_refuses_invalid_utf8(void)
{
    am_error err = {0};
    am_rig *rig = chain();
    am_motion *mo = NULL;
    char *out = NULL;
    if (!rig) return;
    AM_CHECK_OK(am_motion_create(rig, 2, 30, &mo, &err), &err);
    if (!mo) goto done;
    am_free(mo->bone_names[1]);
    mo->bone_names[1] = am_strdup("arm\xc3");
    AM_CHECK_STATUS(am_motion_to_json(mo, &out, &err), AM_E_UTF8);
    AM_CHECK_MSG(strstr(err.info, "bones[1]"), "info: %s", err.info);
    AM_CHECK(out == NULL);
    char path[4200];
    snprintf(path, sizeof path, "%s/bad_utf8_motion.json", am_test_tmpdir());
    AM_CHECK_STATUS(am_motion_write(mo, path, &err), AM_E_UTF8);
    AM_CHECK(strstr(err.file, "bad_utf8_motion.json") != NULL);
    FILE *f = fopen(path, "rb");
    AM_CHECK(f == NULL);
    if (f) fclose(f);
    /* Rigs too: a joint name. */
    am_free(rig->joint_names[2]);
    rig->joint_names[2] = am_strdup("\xed\xa0\x80");
    AM_CHECK_STATUS(am_rig_to_json(rig, &out, &err), AM_E_UTF8);
done:
    am_motion_free(mo);
    am_rig_free(rig);
}

#define AM_TESTS(X) \
    X(json_format_double_is_shortest_roundtrip) X(json_writer_escapes_and_layout) X(json_writer_refuses_invalid_utf8) \
    X(json_numbers_name_the_bad_element) X(json_parse_maps_jansson_errors) \
    X(rig_parse_accepts_chain_and_resolves_stems) X(rig_rejects_wrong_shapes) \
    X(rig_rejects_bad_names_and_structure) X(rig_rejects_syntax_utf8_duplicates_and_huge_numbers) \
    X(truncated_files_fail_cleanly) X(motion_parse_binds_to_rig_order) \
    X(motion_rejects_bad_documents) X(motion_roundtrip_is_exact) X(motion_loc_round_trip) X(motion_write_refuses_invalid_utf8) X(rig_helpers_round_trip) X(motion_quat_only_matches_euler) \
    X(motion_create_and_compute_joints) X(creature_defaults_and_overrides) \
    X(creature_rejects_bad_documents) X(loaders_survive_allocation_failures)
AM_TEST_MAIN(AM_TESTS)
