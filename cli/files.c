/* Output folders of the CLI, shared by every command that writes a DIR. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/internal.h"

am_status am_cli_mkdir_p(const char *dir, am_error *err)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return AM_FAIL(err, AM_E_ARG, "bad directory name '%s'", dir);
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        struct stat st;
        if (stat(buf, &st) != 0 && mkdir(buf, 0777) != 0 && errno != EEXIST)
            return AM_FAIL(err, AM_E_WRITE, "cannot create directory '%s': %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return AM_FAIL(err, AM_E_WRITE, "'%s' exists and is not a directory", dir);
    return AM_OK;
}
