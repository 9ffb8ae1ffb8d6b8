/* --report / --render of the commands and `anymove report`: the library's am_pictures with the
 * CLI's context and the three.js package found beside the build. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "scene.h"

const char *am_cli_three_dir(char *buf, size_t size)
{
    struct stat st;
    const char *env = getenv("AM_THREE_DIR");
    if (env && stat(env, &st) == 0) return snprintf(buf, size, "%s", env) > 0 ? buf : NULL;
    /* the npm package scripts/deps.sh installs beside the build: <repo>/.deps/npm/node_modules/three */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash) break;
            *slash = '\0';
            snprintf(buf, size, "%s/.deps/npm/node_modules/three/build/three.module.js", exe);
            if (stat(buf, &st) == 0) {
                snprintf(buf, size, "%s/.deps/npm/node_modules/three", exe);
                return buf;
            }
        }
    }
    snprintf(buf, size, ".deps/npm/node_modules/three/build/three.module.js");
    if (stat(buf, &st) == 0) return snprintf(buf, size, ".deps/npm/node_modules/three") > 0 ? buf : NULL;
    return NULL;
}

/* The library's pictures with the CLI's context and the three.js it finds (a warning when none). */
static am_pictures ami_cli_pictures(const char *cmd, const am_cli_pictures *p, char *three, size_t size)
{
    am_pictures q = *p;
    q.ctx = am_cli_context();
    q.three_dir = p->report ? am_cli_three_dir(three, size) : NULL;
    if (p->report && !q.three_dir)
        am_cli_warn(cmd, "three.js is not installed (scripts/deps.sh puts it in .deps/npm): the report has no 3D viewer");
    return q;
}

am_status am_cli_html_report(const char *cmd, const am_cli_pictures *p, const char *glb_path, const char *html_path,
                             const char *script_path, am_error *err)
{
    char three[4096];
    am_pictures page = *p;
    page.report = true; /* `anymove report` writes the page whatever its flags say */
    am_pictures q = ami_cli_pictures(cmd, &page, three, sizeof three);
    return am_pictures_report(&q, glb_path, html_path, script_path, err);
}

void am_cli_picture_names(const am_cli_pictures *p, const char **names, size_t *count)
{
    am_pictures_names(p, names, count);
}

void am_cli_join_names(const char *const *names, size_t count, char *buf, size_t size)
{
    buf[0] = 0;
    for (size_t k = 0, used = 0; k < count && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? ", " : "", names[k]);
}

am_status am_cli_write_pictures(const char *cmd, const am_cli_pictures *p, am_outset *set, am_error *err)
{
    char three[4096];
    am_pictures q = ami_cli_pictures(cmd, p, three, sizeof three);
    return am_pictures_write(&q, set, err);
}
