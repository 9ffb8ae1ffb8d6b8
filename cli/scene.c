/* Scenes for the picture commands: rig + motion + mesh from whatever a user points at. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "scene.h"

static bool ami_is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool ami_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *am_cli_find_file(const char *dir, const char *name, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    return n > 0 && (size_t)n < size && ami_exists(buf) ? buf : NULL;
}

void am_cli_scene_free(am_cli_scene *sc)
{
    am_render_model_free(sc->model);
    am_motion_free(sc->motion);
    am_rig_free(sc->rig);
    am_gltf_free(sc->doc);
    memset(sc, 0, sizeof *sc);
}

static am_status ami_scene_gltf(const char *cmd, const char *path, const am_cli_scene_opts *o, am_cli_scene *sc,
                                am_error *err)
{
    am_gltf_opts go = {.ctx = am_cli_context()};
    AMI_TRY(am_gltf_load(path, &go, &sc->doc, err));
    am_cli_print_warnings(cmd, &sc->doc->warnings);
    am_status s = am_rig_from_gltf(sc->doc, -1, &sc->rig, err);
    int anim = -1;
    if (s == AM_OK) s = am_cli_pick_clip(sc->doc, path, o->clip, &anim, err);
    if (s == AM_OK && anim >= 0) s = am_motion_from_gltf(sc->doc, -1, sc->rig, anim, o->fps > 0 ? o->fps : 30.0, &sc->motion, err);
    if (s == AM_OK)
        s = o->no_mesh ? am_render_model_create(sc->rig, NULL, &sc->model, err)
                       : am_render_model_from_gltf(sc->doc, sc->rig, &sc->model, err);
    if (s != AM_OK && !err->file[0]) am_error_set_file(err, path);
    snprintf(sc->glb, sizeof sc->glb, "%s", path);
    return s;
}

static am_status ami_scene_rig(const char *cmd, const char *rig_path, const char *motion_path,
                               const am_cli_scene_opts *o, am_cli_scene *sc, am_error *err)
{
    AMI_TRY(am_rig_load(rig_path, &sc->rig, err));
    snprintf(sc->rig_path, sizeof sc->rig_path, "%s", rig_path);
    if (motion_path) {
        AMI_TRY(am_motion_load(motion_path, sc->rig, &sc->motion, err));
        snprintf(sc->motion_path, sizeof sc->motion_path, "%s", motion_path);
    }
    const char *mesh = o->mesh ? o->mesh : o->no_mesh ? NULL : sc->rig->model;
    if (mesh && !o->mesh && !ami_exists(mesh)) {
        am_cli_warn(cmd, "%s records the model %s, which is not there: bone shapes (--mesh MODEL.glb)", rig_path, mesh);
        mesh = NULL;
    }
    if (!mesh) return am_render_model_create(sc->rig, NULL, &sc->model, err);
    am_gltf_opts go = {.ctx = am_cli_context()};
    AMI_TRY(am_gltf_load(mesh, &go, &sc->doc, err));
    am_cli_print_warnings(cmd, &sc->doc->warnings);
    am_status s = am_render_model_from_gltf(sc->doc, sc->rig, &sc->model, err);
    /* a model whose skeleton is not this rig names the model */
    if (s != AM_OK) am_error_set_file(err, mesh);
    return s;
}

am_status am_cli_scene_load(const char *cmd, const char *scene, const am_cli_scene_opts *opts, am_cli_scene *out,
                            am_error *err)
{
    memset(out, 0, sizeof *out);
    am_cli_scene_opts o = {0};
    if (opts) o = *opts;
    am_status s;
    char a[4096], b[4096];
    if (ami_is_dir(scene)) {
        const char *rig = o.rig ? o.rig : am_cli_find_file(scene, "rig.json", a, sizeof a);
        const char *mo = o.motion ? o.motion : am_cli_find_file(scene, "motion.json", b, sizeof b);
        if (rig) {
            s = ami_scene_rig(cmd, rig, mo, &o, out, err);
            char g[4096];
            const char *glb = am_cli_find_file(scene, "animation.glb", g, sizeof g);
            if (!glb) glb = am_cli_find_file(scene, "rig.glb", g, sizeof g);
            if (glb) snprintf(out->glb, sizeof out->glb, "%s", glb);
        } else {
            const char *glb = am_cli_find_file(scene, "animation.glb", a, sizeof a);
            if (!glb) glb = am_cli_find_file(scene, "rig.glb", a, sizeof a);
            if (!glb)
                return AM_FAIL_AT(err, AM_E_READ, scene, 0, 0,
                                  "the folder holds no rig.json, animation.glb or rig.glb to draw");
            s = ami_scene_gltf(cmd, glb, &o, out, err);
            /* solve writes no rig.json: its motion.json still carries what the report reads */
            if (s == AM_OK && mo) {
                am_motion *m2 = NULL;
                if (am_motion_load(mo, out->rig, &m2, err) == AM_OK) {
                    am_motion_free(out->motion);
                    out->motion = m2;
                    snprintf(out->motion_path, sizeof out->motion_path, "%s", mo);
                } else {
                    /* bone names of the GLB's skeleton differ from the motion's: keep the GLB's clip */
                    memset(err, 0, sizeof *err);
                }
            }
        }
    } else {
        const char *ext = am_cli_ext(scene);
        if (ext && (strcasecmp(ext, ".glb") == 0 || strcasecmp(ext, ".gltf") == 0))
            s = ami_scene_gltf(cmd, scene, &o, out, err);
        else
            s = ami_scene_rig(cmd, scene, o.motion, &o, out, err);
        /* a rig.json's folder may hold the GLB a viewer plays */
        char g[4096], d[4096];
        const char *slash = strrchr(scene, '/');
        snprintf(d, sizeof d, "%.*s", slash ? (int)(slash - scene) : 1, slash ? scene : ".");
        if (s == AM_OK && !out->glb[0] && !(ext && (strcasecmp(ext, ".glb") == 0 || strcasecmp(ext, ".gltf") == 0))) {
            const char *glb = am_cli_find_file(d, "animation.glb", g, sizeof g);
            if (glb) snprintf(out->glb, sizeof out->glb, "%s", glb);
        }
    }
    if (s != AM_OK) am_cli_scene_free(out);
    return s;
}

bool am_cli_camera(const char *cmd, const char *arg, am_view *view, am_calib **cal, const am_camera **cam, int *rc)
{
    *rc = 0;
    if (am_view_parse(arg, view)) return true;
    const char *colon = strrchr(arg, ':');
    size_t len = strlen(arg);
    bool grid = !colon && len > 5 && strcasecmp(arg + len - 5, ".toml") == 0;
    if (!grid && (!colon || colon == arg)) {
        *rc = am_cli_usage(cmd, "--camera %s: one of layout, front, side, three-quarter, CALIB.toml:NAME or CALIB.toml (all its cameras)", arg);
        return false;
    }
    char path[4096];
    snprintf(path, sizeof path, "%.*s", grid ? (int)len : (int)(colon - arg), arg);
    am_error err = {0};
    if (am_calib_load(path, NULL, cal, &err) != AM_OK) {
        *rc = am_cli_fail(cmd, &err);
        return false;
    }
    if (grid) {
        *view = AM_VIEW_CAMERAS;
        *cam = NULL;
        return true;
    }
    int i = am_calib_find(*cal, colon + 1);
    if (i < 0) {
        char list[1024] = "";
        size_t used = 0;
        for (size_t c = 0; c < (*cal)->camera_count && used + 4 < sizeof list; c++) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", (*cal)->cameras[c].name);
            if (n < 0) break;
            used += (size_t)n;
        }
        am_error_set(&err, AM_E_NAME, path, 0, 0, UINT64_MAX, __FILE__, __LINE__, "no camera '%s' (the calibration has %s)",
                     colon + 1, list);
        *rc = am_cli_fail(cmd, &err);
        am_calib_free(*cal);
        *cal = NULL;
        return false;
    }
    *view = AM_VIEW_CAMERA;
    *cam = &(*cal)->cameras[i];
    return true;
}

bool am_cli_frames(const char *cmd, const char *arg, size_t *first, size_t *count)
{
    const char *colon = strchr(arg, ':');
    char *end = NULL;
    long a = 0, b = -1;
    if (!colon) {
        a = strtol(arg, &end, 10);
        if (end == arg || *end || a < 0) goto bad;
        *first = (size_t)a;
        *count = 1;
        return true;
    }
    if (colon != arg) {
        a = strtol(arg, &end, 10);
        if (end != colon || a < 0) goto bad;
    }
    if (colon[1]) {
        b = strtol(colon + 1, &end, 10);
        if (*end || b <= a) goto bad;
    }
    *first = (size_t)a;
    *count = b < 0 ? 0 : (size_t)(b - a);
    return true;
bad:
    am_cli_usage(cmd, "--frames %s: give A:B (frames A to B-1), A: (to the end) or one frame A", arg);
    return false;
}

int am_cli_picture_outputs(const char *cmd, const char *out, size_t n, am_outset **set, char *staged, size_t size)
{
    if (am_cli_ext(out)) {
        int rc = am_cli_outputs(cmd, out, NULL, 0, set);
        if (!rc) snprintf(staged, size, "%s", am_outset_path(*set, NULL));
        return rc;
    }
    char **names = am_alloc_array(n ? n : 1, sizeof *names);
    size_t k = 0;
    for (; names && k < n; k++) {
        names[k] = am_alloc(32);
        if (!names[k]) break;
        snprintf(names[k], 32, "frame_%05zu.png", k);
    }
    int rc = 1;
    if (names && k == n) {
        rc = am_cli_outputs(cmd, out, (const char *const *)names, n, set);
        if (!rc) {
            snprintf(staged, size, "%s", am_outset_path(*set, names[0]));
            char *slash = strrchr(staged, '/');
            if (slash) *slash = '\0';
        }
    } else {
        fprintf(stderr, "anymove %s: out of memory\n", cmd);
    }
    for (size_t i = 0; i < k; i++) am_free(names[i]);
    am_free(names);
    return rc;
}
