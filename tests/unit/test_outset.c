/* Output sets (src/core/outset.c): outputs appear together or not at all, temporaries of dead
 * runs are swept, errors name the final file. Disk-full and read-only mounts are exercised by
 * tests/cli/test_outputs.sh (they need root to mount). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "am_test.h"

static const char *ami_dir(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", am_test_tmpdir(), name);
    return buf[k];
}

static char *ami_read(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (am_file_read(path, 0, &data, &len, NULL) != AM_OK) return NULL;
    return data;
}

static bool ami_has(const char *path, const char *text)
{
    char *d = ami_read(path);
    bool ok = d && strcmp(d, text) == 0;
    am_free(d);
    return ok;
}

/* Entries of a folder whose name starts with prefix. */
static size_t ami_count(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static am_status ami_put(const am_outset *set, const char *name, const char *text, am_error *err)
{
    return am_file_write(am_outset_path(set, name), text, strlen(text), err);
}

static const char *const names2[] = {"rig.json", "motion.json"};

static void outset_new_folder_appears_whole(void)
{
    const char *dir = ami_dir("new/a/b");
    am_error err = {0};
    am_outset *set = NULL;
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    struct stat st;
    AM_CHECK_MSG(stat(dir, &st) != 0, "the folder exists before commit");
    AM_CHECK_OK(ami_put(set, "rig.json", "R1", &err), &err);
    AM_CHECK_OK(ami_put(set, "motion.json", "M1", &err), &err);
    AM_CHECK(strstr(am_outset_final(set, "rig.json"), "new/a/b/rig.json") != NULL);
    AM_CHECK_OK(am_outset_commit(set, &err), &err);
    char p[1100];
    snprintf(p, sizeof p, "%s/rig.json", dir);
    AM_CHECK(ami_has(p, "R1"));
    snprintf(p, sizeof p, "%s/motion.json", dir);
    AM_CHECK(ami_has(p, "M1"));
    AM_CHECK(ami_count(dir, "") == 2);
    AM_CHECK(ami_count(am_test_tmpdir(), ".anymove-tmp") == 0);
}

static void outset_failed_rerun_keeps_old_set(void)
{
    const char *dir = ami_dir("rerun");
    am_error err = {0};
    am_outset *set = NULL;
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    AM_CHECK_OK(ami_put(set, "rig.json", "old rig", &err), &err);
    AM_CHECK_OK(ami_put(set, "motion.json", "old motion", &err), &err);
    AM_CHECK_OK(am_outset_commit(set, &err), &err);
    char keep[1100];
    snprintf(keep, sizeof keep, "%s/notes.txt", dir);
    AM_CHECK_OK(am_file_write(keep, "mine", 4, &err), &err);

    /* The second run writes a new rig, then fails: the old rig and motion stay. */
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    AM_CHECK_OK(ami_put(set, "rig.json", "new rig", &err), &err);
    am_outset_abort(set);
    char p[1100];
    snprintf(p, sizeof p, "%s/rig.json", dir);
    AM_CHECK(ami_has(p, "old rig"));
    snprintf(p, sizeof p, "%s/motion.json", dir);
    AM_CHECK(ami_has(p, "old motion"));
    AM_CHECK(ami_count(dir, ".anymove-tmp") == 0);

    /* A run that writes only the rig removes the old motion (it belongs to the old rig) and
     * leaves the user's own file alone. */
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    AM_CHECK_OK(ami_put(set, "rig.json", "newer rig", &err), &err);
    AM_CHECK_OK(am_outset_commit(set, &err), &err);
    snprintf(p, sizeof p, "%s/rig.json", dir);
    AM_CHECK(ami_has(p, "newer rig"));
    snprintf(p, sizeof p, "%s/motion.json", dir);
    AM_CHECK(access(p, F_OK) != 0);
    AM_CHECK(ami_has(keep, "mine"));
    AM_CHECK(ami_count(dir, "") == 2);
}

static void outset_one_file(void)
{
    const char *dir = ami_dir("single");
    char target[1100];
    snprintf(target, sizeof target, "%s/sub/out.glb", dir);
    am_error err = {0};
    am_outset *set = NULL;
    AM_CHECK_OK(am_outset_open(target, NULL, 0, &set, &err), &err);
    AM_CHECK(strcmp(am_outset_final(set, NULL), target) == 0);
    AM_CHECK_OK(ami_put(set, NULL, "v1", &err), &err);
    AM_CHECK_OK(am_outset_commit(set, &err), &err);
    AM_CHECK(ami_has(target, "v1"));
    AM_CHECK_OK(am_outset_open(target, NULL, 0, &set, &err), &err);
    AM_CHECK_OK(ami_put(set, NULL, "v2", &err), &err);
    AM_CHECK_OK(am_outset_commit(set, &err), &err);
    AM_CHECK(ami_has(target, "v2"));
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    AM_CHECK(ami_count(sub, "") == 1);

    /* A folder where the file should go, a file where the folder should go: refused up front. */
    AM_CHECK_STATUS(am_outset_open(sub, NULL, 0, &set, &err), AM_E_WRITE);
    AM_CHECK(set == NULL && strstr(err.file, "sub") != NULL);
    AM_CHECK_STATUS(am_outset_open(target, names2, 2, &set, &err), AM_E_WRITE);
    char under[1200];
    snprintf(under, sizeof under, "%s/deeper/x.bvh", target);
    AM_CHECK_STATUS(am_outset_open(under, NULL, 0, &set, &err), AM_E_WRITE);
    AM_CHECK_MSG(strstr(err.info, "not a folder") != NULL, "info: %s", err.info);
}

static void outset_member_that_is_a_folder_is_refused(void)
{
    const char *dir = ami_dir("clash");
    char p[1100];
    snprintf(p, sizeof p, "%s/motion.json", dir);
    am_error err = {0};
    AM_CHECK_OK(am_mkdir_p(p, &err), &err);
    am_outset *set = NULL;
    AM_CHECK_STATUS(am_outset_open(dir, names2, 2, &set, &err), AM_E_WRITE);
    AM_CHECK(strcmp(err.file, p) == 0);
    AM_CHECK(ami_count(dir, ".anymove-tmp") == 0);
}

static void outset_blame_names_the_final_file(void)
{
    const char *dir = ami_dir("blame");
    am_error err = {0};
    am_outset *set = NULL;
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    am_error e2 = {0};
    (void)am_error_set(&e2, AM_E_WRITE, am_outset_path(set, "motion.json"), 0, 0, UINT64_MAX, __FILE__, __LINE__, "disk full");
    am_outset_blame(set, &e2);
    AM_CHECK_MSG(strcmp(e2.file, am_outset_final(set, "motion.json")) == 0, "file %s", e2.file);
    (void)am_error_set(&e2, AM_E_SYNTAX, "input.json", 1, 1, UINT64_MAX, __FILE__, __LINE__, "x");
    am_outset_blame(set, &e2);
    AM_CHECK(strcmp(e2.file, "input.json") == 0);
    am_outset_abort(set);
}

static long ami_dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    int status;
    waitpid(pid, &status, 0);
    return (long)pid;
}

static void outset_sweeps_dead_runs_temporaries(void)
{
    const char *dir = ami_dir("stale");
    am_error err = {0};
    AM_CHECK_OK(am_mkdir_p(dir, &err), &err);
    long dead = ami_dead_pid();
    char p[1200];
    /* What a kill -9 leaves: a staging folder with a file, and an atomic write's temporary. */
    snprintf(p, sizeof p, "%s/.anymove-tmp.%ld.Ab12Cd", dir, dead);
    AM_CHECK_OK(am_mkdir_p(p, &err), &err);
    snprintf(p, sizeof p, "%s/.anymove-tmp.%ld.Ab12Cd/rig.json", dir, dead);
    AM_CHECK_OK(am_file_write(p, "x", 1, &err), &err);
    snprintf(p, sizeof p, "%s/.anymove-tmp.%ld.3.motion.json", dir, dead);
    AM_CHECK_OK(am_file_write(p, "x", 1, &err), &err);
    /* A live process's temporary (pid 1 always runs) and look-alikes that are not ours stay. */
    snprintf(p, sizeof p, "%s/.anymove-tmp.1.7.rig.json", dir);
    AM_CHECK_OK(am_file_write(p, "x", 1, &err), &err);
    snprintf(p, sizeof p, "%s/.anymove-tmp.notapid", dir);
    AM_CHECK_OK(am_file_write(p, "x", 1, &err), &err);
    snprintf(p, sizeof p, "%s/rig.json.tmp.%ld", dir, dead);
    AM_CHECK_OK(am_file_write(p, "x", 1, &err), &err);
    AM_CHECK(ami_count(dir, "") == 5);

    am_outset *set = NULL;
    AM_CHECK_OK(am_outset_open(dir, names2, 2, &set, &err), &err);
    am_outset_abort(set);
    AM_CHECK_MSG(ami_count(dir, "") == 3, "%zu entries left", ami_count(dir, ""));
    snprintf(p, sizeof p, "%s/.anymove-tmp.1.7.rig.json", dir);
    AM_CHECK(access(p, F_OK) == 0);
}

static void tmp_path_is_beside_and_recognisable(void)
{
    char a[256], b[256];
    am_tmp_path(a, sizeof a, "out/dir/rig.json");
    am_tmp_path(b, sizeof b, "out/dir/rig.json");
    char want[64];
    snprintf(want, sizeof want, "out/dir/.anymove-tmp.%ld.", (long)getpid());
    AM_CHECK_MSG(strncmp(a, want, strlen(want)) == 0, "got %s", a);
    AM_CHECK(strcmp(a, b) != 0);
    AM_CHECK(strlen(a) > 9 && strcmp(a + strlen(a) - 9, ".rig.json") == 0);
    am_tmp_path(a, sizeof a, "plain.npz");
    snprintf(want, sizeof want, ".anymove-tmp.%ld.", (long)getpid());
    AM_CHECK_MSG(strncmp(a, want, strlen(want)) == 0, "got %s", a);
}

static void outset_out_of_memory_leaves_nothing(void)
{
    const char *dir = ami_dir("oom");
    am_error err = {0};
    AM_CHECK_OK(am_mkdir_p(dir, &err), &err);
    bool succeeded = false;
    for (uint64_t k = 1; k < 200 && !succeeded; k++) {
        am_test_alloc_limit(k);
        am_outset *set = NULL;
        am_status s = am_outset_open(dir, names2, 2, &set, &err);
        if (s == AM_OK) {
            s = ami_put(set, "rig.json", "r", &err);
            if (s == AM_OK) s = ami_put(set, "motion.json", "m", &err);
            if (s == AM_OK) s = am_outset_commit(set, &err);
            else am_outset_abort(set);
        }
        am_test_alloc_limit(0);
        AM_CHECK_MSG(s == AM_OK || s == AM_E_NOMEM, "limit %llu: %s", (unsigned long long)k, am_status_name(s));
        AM_CHECK_MSG(ami_count(dir, ".anymove-tmp") == 0, "limit %llu left a temporary", (unsigned long long)k);
        succeeded = s == AM_OK;
    }
    AM_CHECK(succeeded);
}

#define AM_TESTS(X)                                                                                 \
    X(outset_new_folder_appears_whole) X(outset_failed_rerun_keeps_old_set) X(outset_one_file)      \
    X(outset_member_that_is_a_folder_is_refused) X(outset_blame_names_the_final_file)               \
    X(outset_sweeps_dead_runs_temporaries) X(tmp_path_is_beside_and_recognisable)                   \
    X(outset_out_of_memory_leaves_nothing)
AM_TEST_MAIN(AM_TESTS)
