/* Outputs of the CLI convention (README "Outputs"): -o is a folder for commands that write
 * several files and one file, whose extension picks the format, for the others; the set is
 * staged and committed by the library's am_outset, checked before any work. */
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "anymove/bvh.h"
#include "cli.h"
#include "core/internal.h"

static const char *const ami_ext_names[AM_CLI_FMT_COUNT] = {
    [AM_CLI_FMT_GLB] = ".glb",  [AM_CLI_FMT_BVH] = ".bvh",  [AM_CLI_FMT_JSON] = ".json",
    [AM_CLI_FMT_NPZ] = ".npz",  [AM_CLI_FMT_OBJ] = ".obj",  [AM_CLI_FMT_CSV] = ".csv",
    [AM_CLI_FMT_TRC] = ".trc",  [AM_CLI_FMT_TOML] = ".toml"};

const char *am_cli_ext(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base && dot[1] ? dot : NULL;
}

am_cli_format am_cli_format_of(const char *path)
{
    const char *ext = am_cli_ext(path);
    for (int f = 1; ext && f < AM_CLI_FMT_COUNT; f++)
        if (strcasecmp(ext, ami_ext_names[f]) == 0) return (am_cli_format)f;
    return AM_CLI_FMT_NONE;
}

static void ami_ext_list(unsigned allowed, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int f = 1; f < AM_CLI_FMT_COUNT; f++)
        if (allowed & (1u << f)) {
            int n = snprintf(buf + used, size - used, "%s%s", used ? " or " : "", ami_ext_names[f]);
            if (n < 0 || (size_t)n >= size - used) return;
            used += (size_t)n;
        }
}

am_cli_format am_cli_out_file(const char *cmd, const char *path, unsigned allowed)
{
    am_cli_format f = am_cli_format_of(path);
    if (f != AM_CLI_FMT_NONE && (allowed & (1u << f))) return f;
    char list[64];
    ami_ext_list(allowed, list, sizeof list);
    const char *ext = am_cli_ext(path);
    if (ext)
        am_cli_usage(cmd, "-o %s: the extension picks the format and '%s' is not one %s writes (%s)", path, ext, cmd,
                     list);
    else
        am_cli_usage(cmd, "-o %s: give a file name ending in %s (the extension picks the format)", path, list);
    return AM_CLI_FMT_NONE;
}

bool am_cli_out_dir(const char *cmd, const char *path, const char *writes)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return true;
    if (am_cli_format_of(path) == AM_CLI_FMT_NONE) return true;
    am_cli_usage(cmd, "-o %s: %s writes several files (%s), so -o names a folder, not a %s file", path, cmd,
                 writes, am_cli_ext(path));
    return false;
}

int am_cli_outputs(const char *cmd, const char *target, const char *const *names, size_t count, am_outset **set)
{
    am_error err = {0};
    if (am_outset_open(target, names, count, set, &err) != AM_OK) return am_cli_fail(cmd, &err);
    return 0;
}

int am_cli_fail_out(const char *cmd, am_outset *set, am_error *err)
{
    am_outset_blame(set, err);
    am_outset_abort(set);
    return am_cli_fail(cmd, err);
}

int am_cli_commit(const char *cmd, am_outset *set)
{
    am_error err = {0};
    if (am_outset_commit(set, &err) != AM_OK) return am_cli_fail(cmd, &err);
    return 0;
}

am_status am_cli_write_animation(am_cli_format fmt, const am_rig *rig, const am_motion *const *clips,
                                 const char *const *names, size_t count, const am_gltf *source, const char *path,
                                 am_error *err)
{
    if (fmt == AM_CLI_FMT_GLB) {
        am_gltf_export ex = {.rig = rig, .clip_count = count, .clips = clips, .clip_names = names,
                             .source = source, .source_skin = -1};
        return am_gltf_write(&ex, path, err);
    }
    AMI_CHECK(err, !source, AM_E_USAGE, "a .bvh has no mesh");
    AMI_CHECK(err, fmt == AM_CLI_FMT_BVH && count == 1, AM_E_USAGE, "a .bvh holds one motion");
    am_bvh *bvh = NULL;
    am_bvh_opts bo = {.axes = AM_BVH_AXES_Y_UP};
    am_status s = am_bvh_from_motion(rig, clips[0], &bo, &bvh, err);
    if (s == AM_OK) s = am_bvh_write(bvh, path, err);
    /* the writer's warnings join the command's scope, which main.c prints */
    if (bvh) ami_warn_list(&bvh->warnings);
    am_bvh_free(bvh);
    return s;
}
