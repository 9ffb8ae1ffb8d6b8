#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am_test.h"
#include "core/internal.h"

static void status_table_is_consistent(void)
{
    AM_CHECK(AM_STATUS_COUNT >= 20);
    AM_CHECK(strcmp(am_status_name(AM_E_SYNTAX), "E_SYNTAX") == 0);
    AM_CHECK(strcmp(am_status_message(AM_OK), "success") == 0);
    AM_CHECK(am_status_fault(AM_OK) == AM_FAULT_NONE);
    AM_CHECK(am_status_fault(AM_NOT_CONVERGED) == AM_FAULT_NONE);
    AM_CHECK(am_status_fault(AM_E_NOMEM) == AM_FAULT_SYSTEM);
    AM_CHECK(am_status_fault(AM_E_WRITE) == AM_FAULT_INPUT);
    AM_CHECK(am_status_fault(AM_E_SYNTAX) == AM_FAULT_INPUT);
    AM_CHECK(am_status_fault(AM_E_NAME) == AM_FAULT_INPUT);
    AM_CHECK(strcmp(am_status_message((am_status)-999), "unknown status") == 0);
    AM_CHECK(am_status_fault((am_status)-999) == AM_FAULT_SYSTEM);
}

static void error_format_names_file_and_location(void)
{
    am_error err;
    char buf[512];
    am_status s = AM_FAIL_AT(&err, AM_E_SYNTAX, "rig.json", 3, 14, "expected '%c'", '{');
    AM_CHECK(s == AM_E_SYNTAX);
    AM_CHECK(err.src_line > 0);
    am_error_format(buf, sizeof buf, &err);
    AM_CHECK_MSG(strcmp(buf, "rig.json:3:14: error: syntax error (expected '{')") == 0, "got %s", buf);

    AM_FAIL_OFS(&err, AM_E_TRUNCATED, "a.npz", 1234, "member points.npy");
    am_error_format(buf, sizeof buf, &err);
    AM_CHECK_MSG(strcmp(buf, "a.npz: byte 1234: error: truncated input (member points.npy)") == 0,
                 "got %s", buf);

    AM_FAIL(&err, AM_E_NAME, "bone 'x'");
    am_error_set_file(&err, "m.json");
    am_error_format(buf, sizeof buf, &err);
    AM_CHECK_MSG(strcmp(buf, "m.json: error: unknown name (bone 'x')") == 0, "got %s", buf);
    AM_CHECK(AM_FAIL(NULL, AM_E_VALUE, "no error struct") == AM_E_VALUE);
}

static void alloc_checks_overflow_and_limits(void)
{
    AM_CHECK(am_alloc_array(SIZE_MAX / 2, 4) == NULL);
    void *p = am_alloc_array(10, 8);
    AM_CHECK(p != NULL);
    am_free(p);
    am_test_alloc_limit(2);
    void *a = am_alloc(8), *b = am_alloc(8), *c = am_alloc(8);
    AM_CHECK(a && b && !c);
    am_free(a);
    am_free(b);
    am_test_alloc_limit(0);
    char *s = am_strndup("skeleton", 4);
    AM_CHECK(s && strcmp(s, "skel") == 0);
    am_free(s);
}

static void atomic_write_leaves_no_partial_file(void)
{
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/out.txt", am_test_tmpdir());
    am_error err = {0};
    AM_CHECK_OK(am_file_write(path, "hello", 5, &err), &err);
    char *data = NULL;
    size_t len = 0;
    AM_CHECK_OK(am_file_read(path, 0, &data, &len, &err), &err);
    AM_CHECK(len == 5 && memcmp(data, "hello", 5) == 0 && data[5] == '\0');
    am_free(data);
    AM_CHECK(!am_test_tmp_left(path));
    /* Every call gets its own temporary name: concurrent writers of one path never share one. */
    char tmp2[600];
    am_tmp_path(tmp, sizeof tmp, path);
    am_tmp_path(tmp2, sizeof tmp2, path);
    char want[600];
    snprintf(want, sizeof want, "%s/.anymove-tmp.%ld.", am_test_tmpdir(), (long)getpid());
    AM_CHECK_MSG(strncmp(tmp, want, strlen(want)) == 0, "got %s", tmp);
    AM_CHECK(strcmp(tmp, tmp2) != 0);
    /* A directory that does not exist: failure, and nothing left behind. */
    AM_CHECK_STATUS(am_file_write("/nonexistent-dir/x.txt", "a", 1, &err), AM_E_WRITE);
    AM_CHECK(strstr(err.file, "/nonexistent-dir/x.txt") != NULL);
    AM_CHECK_STATUS(am_file_read("/nonexistent-dir/x.txt", 0, &data, &len, &err), AM_E_READ);
    AM_CHECK_STATUS(am_file_read(am_test_tmpdir(), 0, &data, &len, &err), AM_E_READ);
    AM_CHECK_STATUS(am_file_read(path, 3, &data, &len, &err), AM_E_LIMIT);
}

static void buf_grows_and_formats(void)
{
    am_buf b = {0};
    for (int i = 0; i < 1000; i++) am_buf_printf(&b, "%d,", i);
    AM_CHECK(!b.failed);
    AM_CHECK(strncmp(b.data, "0,1,2,", 6) == 0);
    AM_CHECK(b.data[b.len] == '\0');
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t before = b.len;
    am_buf_printf(&b, "%s", big);
    AM_CHECK(b.len == before + sizeof big - 1);
    am_buf_free(&b);
    AM_CHECK(b.data == NULL && b.len == 0);
}

#define AM_TESTS(X) \
    X(status_table_is_consistent) \
    X(error_format_names_file_and_location) \
    X(alloc_checks_overflow_and_limits) \
    X(atomic_write_leaves_no_partial_file) \
    X(buf_grows_and_formats)
AM_TEST_MAIN(AM_TESTS)
