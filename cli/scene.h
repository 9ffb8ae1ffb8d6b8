/* What the picture commands (render, overlay, showcase, report, dataset) draw: a rig with its
 * motion and mesh, read from a rig.json (+ motion.json, + a model), a glTF, or a command's
 * output folder. */
#ifndef AM_CLI_SCENE_H
#define AM_CLI_SCENE_H

#include "anymove/render.h"
#include "cli.h"

typedef struct am_cli_scene {
    am_rig *rig;
    am_motion *motion;        /* NULL: the rest pose */
    am_gltf *doc;             /* the glTF the rig and mesh came from, or NULL */
    am_render_model *model;
    char glb[4096];           /* the GLB a viewer can play ("" if none) */
    char rig_path[4096];      /* the rig.json read ("" for a glTF) */
    char motion_path[4096];   /* the motion.json read ("" if none) */
} am_cli_scene;

typedef struct am_cli_scene_opts {
    const char *motion;       /* --motion, or NULL (a folder's motion.json) */
    const char *mesh;         /* --mesh MODEL.glb, or NULL (the model rig.json records) */
    const char *clip;         /* --clip for a glTF */
    const char *rig;          /* --rig: the rig of a folder that holds none (solve's output) */
    bool no_mesh;             /* bone shapes */
    double fps;               /* rate a glTF clip is sampled at; 0 = 30 */
} am_cli_scene_opts;

/* SCENE: a rig.json, a .glb/.gltf, or a folder holding rig.json (+ motion.json) or
 * animation.glb / rig.glb (solve, ik, rig, convert outputs). Errors name the file. */
am_status am_cli_scene_load(const char *cmd, const char *scene, const am_cli_scene_opts *opts,
                            am_cli_scene *out, am_error *err);
void am_cli_scene_free(am_cli_scene *sc);

/* --camera WORD, calib.toml:NAME or calib.toml (every camera: AM_VIEW_CAMERAS, *cam NULL) into
 * a job's view (and *cal, which holds the cameras; free it with am_calib_free). false after a usage message; exit code in *rc on a load failure. */
bool am_cli_camera(const char *cmd, const char *arg, am_view *view, am_calib **cal,
                   const am_camera **cam, int *rc);
/* --frames A:B (B exclusive, either may be left out); false after a usage message. */
bool am_cli_frames(const char *cmd, const char *arg, size_t *first, size_t *count);
/* The creature.json a scene folder or its neighbours hold, or NULL. */
const char *am_cli_find_file(const char *dir, const char *name, char *buf, size_t size);

/* The npm package three (AM_THREE_DIR, else .deps/npm/node_modules/three beside the build or
 * the working folder), or NULL. */
const char *am_cli_three_dir(char *buf, size_t size);
/* --report and --render of a pipeline command (solve, rig, ik, ...): the result's report.html
 * (with its report_three.js) and two renders of its middle frame, render_layout.png (SPEC 3's
 * front | side; render_cameras.png, a grid through the calibrated cameras, for N cameras) and
 * render_three_quarter.png, joints drawn over the mesh. */
typedef struct am_cli_pictures {
    bool report, render;
    const char *title;          /* the page's heading: the command's input */
    const am_rig *rig;          /* or NULL: points (triangulate) */
    const am_motion *motion;    /* bound to rig, with joints */
    const am_joints *points;    /* without a rig: the report's viewer moves them, and the render
                                   is render_cameras.png alone: the detections with the points
                                   reprojected through each camera (mdet, cameras needed) */
    const int32_t *edges;       /* [edge_count][2] point pairs drawn joined, or NULL */
    size_t edge_count;
    bool points_only;           /* a points result (set before am_cli_picture_names) */
    const am_det *det;          /* two-view detections, or NULL */
    const am_mdet *mdet;        /* or N cameras' detections, with */
    const am_calib *cameras;    /* their calibration: reprojection per camera */
    bool through_cameras;       /* render through the cameras (render_cameras.png, a grid) instead
                                   of the layout; set before am_cli_picture_names */
    const am_creature *creature;/* its layout and feet, or NULL */
    const double *truth;        /* [T][J][3] in the rig's joint order (NaN: unknown), or NULL */
    const char *gate_text;      /* the command's own report, shown as written, or NULL */
    const char *glb;            /* the output set's member the viewer plays, or NULL */
    const char *glb_path;       /* or a file outside the set (a temporary), or NULL */
    const am_render_mesh *mesh; /* the skinned surface to render, or NULL: bone shapes */
    const am_gltf *mesh_doc;    /* or the glTF character rig came from (am_rig_from_gltf(doc, -1)):
                                   its skinned mesh */
    bool frame_layout;          /* the layout render framed on the clip, not the creature's or
                                   the wolf's: results not captured through a layout (rig, ik) */
} am_cli_pictures;
/* Write report.html (and its three.js script beside it) for a result: glb_path the GLB the
 * viewer plays (NULL: none). */
am_status am_cli_html_report(const char *cmd, const am_cli_pictures *p, const char *glb_path, const char *html_path,
                             const char *script_path, am_error *err);
/* The members they add to the output set, appended to names (room for 4 more) at *count. */
void am_cli_picture_names(const am_cli_pictures *p, const char **names, size_t *count);
/* "a, b, c" of names for the command's last log line (cut at size). */
void am_cli_join_names(const char *const *names, size_t count, char *buf, size_t size);
/* Write them into the set (after the command's own files, the GLB among them). */
am_status am_cli_write_pictures(const char *cmd, const am_cli_pictures *p, am_outset *set, am_error *err);

/* -o of a picture command: a one-file set (a .png or video extension), else a folder of n
 * frame_%05d.png. *staged is where the job writes (the file, or the staging folder); 0 or the
 * exit code. */
int am_cli_picture_outputs(const char *cmd, const char *out, size_t n, am_outset **set, char *staged, size_t size);

#endif
