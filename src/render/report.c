/* The HTML report of a result: quality-gate verdicts, inline SVG plots and a three.js viewer,
 * one page that works from a file:// URL with no network. Chromium refuses ES modules and
 * fetches from file:// pages, so three.js's modules travel as strings in a classic script
 * beside the page (script_path) and are imported from blob: URLs, and the GLB is embedded. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anymove/math.h"
#include "anymove/metrics.h"
#include "core/internal.h"
#include "io/json_internal.h"
#include "render_internal.h"

static const char *const ami_palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                          "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
#define AMI_PALETTE 10

/* A line chart of n series over T frames (NaN = gap). */
static void ami_svg_lines(am_buf *b, const char *title, const char *ylabel, size_t T, size_t n,
                          const char *const *names, const double *values, const bool *dashed)
{
    const double W = 720, H = 220, l = 56, r = 150, t = 24, bo = 30;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n * T; i++)
        if (isfinite(values[i])) lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
    am_buf_printf(b, "<figure><svg class=\"plot\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\">", W, H, W, H);
    am_buf_printf(b, "<text x=\"%g\" y=\"16\" class=\"t\">", l);
    ami_buf_html(b, title);
    am_buf_printf(b, "</text>");
    if (!(hi >= lo)) {
        am_buf_printf(b, "<text x=\"%g\" y=\"%g\">no data</text></svg></figure>\n", l, H / 2);
        return;
    }
    if (hi - lo < 1e-9) lo -= 1, hi += 1;
    double pad = 0.05 * (hi - lo);
    lo -= pad, hi += pad;
    double xs = (W - l - r) / (T > 1 ? (double)(T - 1) : 1.0), ys = (H - t - bo) / (hi - lo);
    am_buf_printf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" class=\"frame\"/>", l, t, W - l - r, H - t - bo);
    for (int k = 0; k <= 4; k++) {
        double v = lo + (hi - lo) * k / 4.0, y = H - bo - (v - lo) * ys;
        am_buf_printf(b, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%g\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%.3g</text>",
                      l, W - r, y, y, l - 4, y + 4, v);
    }
    am_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"ax\">frame (0 .. %zu)</text>", l, H - 8, T ? T - 1 : 0);
    am_buf_printf(b, "<text x=\"12\" y=\"%g\" class=\"ax\" transform=\"rotate(-90 12 %g)\">", H / 2, H / 2);
    ami_buf_html(b, ylabel);
    am_buf_printf(b, "</text>");
    for (size_t s = 0; s < n; s++) {
        const char *col = ami_palette[s % AMI_PALETTE];
        am_buf_printf(b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s d=\"", col,
                      dashed && dashed[s] ? " stroke-dasharray=\"4 3\"" : "");
        bool pen = false;
        for (size_t f = 0; f < T; f++) {
            double v = values[s * T + f];
            if (!isfinite(v)) {
                pen = false;
                continue;
            }
            am_buf_printf(b, "%c%.1f %.1f", pen ? 'L' : 'M', l + f * xs, H - bo - (v - lo) * ys);
            pen = true;
        }
        am_buf_printf(b, "\"/><text x=\"%g\" y=\"%g\" class=\"ax\" fill=\"%s\">", W - r + 6, t + 12 + 13.0 * (double)s, col);
        ami_buf_html(b, names[s]);
        am_buf_printf(b, "</text>");
    }
    am_buf_printf(b, "</svg></figure>\n");
}

/* A horizontal bar chart. */
static void ami_svg_bars(am_buf *b, const char *title, const char *unit, size_t n, const char *const *labels,
                         const double *values)
{
    double hi = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(values[i])) hi = fmax(hi, values[i]);
    if (hi <= 0) hi = 1;
    const double W = 720, row = 16, l = 170, t = 24;
    double H = t + row * (double)n + 10;
    am_buf_printf(b, "<figure><svg class=\"plot\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\"><text x=\"%g\" y=\"16\" class=\"t\">", W, H, W, H, l);
    ami_buf_html(b, title);
    am_buf_printf(b, "</text>");
    for (size_t i = 0; i < n; i++) {
        double y = t + row * (double)i, w = isfinite(values[i]) ? (W - l - 90) * values[i] / hi : 0;
        am_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"ax\" text-anchor=\"end\">", l - 6, y + 12);
        ami_buf_html(b, labels[i]);
        am_buf_printf(b, "</text><rect x=\"%g\" y=\"%g\" width=\"%.1f\" height=\"%g\" fill=\"%s\"/><text x=\"%.1f\" y=\"%g\" class=\"ax\">%.3g %s</text>",
                      l, y + 2, w, row - 4, ami_palette[0], l + w + 4, y + 12, values[i], unit);
    }
    am_buf_printf(b, "</svg></figure>\n");
}

typedef struct {
    json_t *extra;           /* motion's extra keys, or NULL */
} ami_report_data;

static double ami_json_num(json_t *obj, const char *a, const char *b)
{
    json_t *v = obj ? json_object_get(obj, a) : NULL;
    if (v && b) v = json_object_get(v, b);
    return v && json_is_number(v) ? json_number_value(v) : NAN;
}

static void ami_gate_row(am_buf *b, const char *what, const char *value, const char *verdict, const char *cls)
{
    am_buf_printf(b, "<tr><td>");
    ami_buf_html(b, what); /* a camera's name comes from a file */
    am_buf_printf(b, "</td><td>%s</td><td class=\"%s\">%s</td></tr>\n", value, cls, verdict);
}

static void ami_gates(am_buf *b, const am_report_job *job, json_t *extra)
{
    am_buf_printf(b, "<section id=\"gates\"><h2>Quality gates</h2>\n");
    double paw = ami_json_num(extra, "sync", NULL);
    json_t *sync = extra ? json_object_get(extra, "sync") : NULL;
    json_t *pa = sync ? json_object_get(sync, "paw_agreement") : NULL;
    paw = pa ? ami_json_num(pa, "score", NULL) : NAN;
    json_t *rpx = extra ? json_object_get(extra, "reproj_px") : NULL;
    bool any = pa || (json_is_object(rpx) && json_object_size(rpx) > 0);
    if (any) {
        am_buf_printf(b, "<table class=\"gates\"><tr><th>gate</th><th>value</th><th>verdict</th></tr>\n");
        char v[64];
        if (pa) {
            if (isfinite(paw)) {
                snprintf(v, sizeof v, "%.2f", paw);
                if (paw >= 0.8) ami_gate_row(b, "paw agreement (views tell one story)", v, "keep", "ok");
                else if (paw >= 0.5) ami_gate_row(b, "paw agreement (views tell one story)", v, "look at showcase.mp4: often one limb is off", "look");
                else ami_gate_row(b, "paw agreement (views tell one story)", v, "reroll the clip: the views were animated differently", "bad");
            } else {
                ami_gate_row(b, "paw agreement", "null", "the feet barely move: judge by the reprojection error", "look");
            }
        }
        /* per view (front, side) or camera, as motion.json's reproj_px holds them */
        json_t *rp = extra ? json_object_get(extra, "reproj_px") : NULL;
        const char *key;
        json_t *val;
        /* two views: front and side only (not the solve's front_x_only diagnostic) */
        bool two = rp && (json_object_get(rp, "front") || json_object_get(rp, "side"));
        if (json_is_object(rp)) json_object_foreach(rp, key, val) {
            if (!json_is_number(val) || (two && strcmp(key, "front") != 0 && strcmp(key, "side") != 0)) continue;
            double e = json_number_value(val);
            snprintf(v, sizeof v, "%.2f px", e);
            char what[160];
            bool view = strcmp(key, "front") == 0 || strcmp(key, "side") == 0;
            snprintf(what, sizeof what, "reprojection error, %s%.100s%s", view ? "" : "camera ", key, view ? " view" : "");
            ami_gate_row(b, what, v, e <= 10 ? "good" : e <= 20 ? "look at the overlay" : "poor fit",
                         e <= 10 ? "ok" : e <= 20 ? "look" : "bad");
        }
        am_buf_printf(b, "</table>\n");
    }
    if (job->gate_text) {
        am_buf_printf(b, "<pre class=\"gate\">");
        ami_buf_html(b, job->gate_text);
        am_buf_printf(b, "</pre>\n");
    }
    if (!any && !job->gate_text) am_buf_printf(b, "<p>This result has no quality gates.</p>\n");
    am_buf_printf(b, "</section>\n");
}

static am_status ami_modules(const char *three_dir, const char *path, am_error *err)
{
    static const char *const keys[] = {"three", "GLTFLoader", "BufferGeometryUtils", "OrbitControls"};
    static const char *const files[] = {"build/three.module.js", "examples/jsm/loaders/GLTFLoader.js",
                                        "examples/jsm/utils/BufferGeometryUtils.js",
                                        "examples/jsm/controls/OrbitControls.js"};
    am_buf b = {0};
    ami_jw w;
    am_buf_printf(&b, "// three.js (MIT, npm package three) as module sources for a page opened from file://\nwindow.AM_MODULES = ");
    ami_jw_begin(&w, &b, AMI_JSON_COMPACT);
    ami_jw_object(&w, NULL);
    am_status s = AM_OK;
    for (int i = 0; i < 4 && s == AM_OK; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", three_dir, files[i]);
        char *text = NULL;
        size_t len = 0;
        s = am_file_read(p, 0, &text, &len, err);
        if (s == AM_OK) ami_jw_string_n(&w, keys[i], text, len);
        am_free(text);
    }
    ami_jw_close(&w);
    if (s == AM_OK) s = ami_jw_finish(&w, err);
    am_buf_printf(&b, ";\n");
    if (s == AM_OK) s = b.failed ? AM_FAIL(err, AM_E_NOMEM, "three.js modules") : am_file_write(path, b.data, b.len, err);
    am_buf_free(&b);
    return s;
}

static void ami_base64(am_buf *b, const uint8_t *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char line[77];
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        line[k++] = tab[v >> 18 & 63];
        line[k++] = tab[v >> 12 & 63];
        line[k++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        line[k++] = i + 2 < n ? tab[v & 63] : '=';
        if (k == 76) {
            line[k++] = '\n';
            am_buf_append(b, line, k);
            k = 0;
        }
    }
    am_buf_append(b, line, k);
}

static const char *const ami_viewer_js[] = {
    "const AM = JSON.parse(document.getElementById('am-data').textContent);\n",
    "const msg = (t) => { document.getElementById('vmsg').textContent = t; };\n",
    "async function viewer() {\n",
    "  const M = window.AM_MODULES;\n",
    "  if (!M) { msg('The 3D viewer needs three.js beside this page (' + AM.script + ').'); document.body.dataset.viewer = 'none'; return; }\n",
    "  const blob = (s) => URL.createObjectURL(new Blob([s], {type: 'text/javascript'}));\n",
    "  const three = blob(M.three);\n",
    "  const fix = (s) => s.replace(/from\\s*['\"]three['\"]/g, \"from '\" + three + \"'\");\n",
    "  const bgu = blob(fix(M.BufferGeometryUtils));\n",
    "  const gl = blob(fix(M.GLTFLoader).split(\"'../utils/BufferGeometryUtils.js'\").join(\"'\" + bgu + \"'\"));\n",
    "  const oc = blob(fix(M.OrbitControls));\n",
    "  const THREE = await import(three);\n",
    "  const { GLTFLoader } = await import(gl);\n",
    "  const { OrbitControls } = await import(oc);\n",
    "  const el = document.getElementById('glb');\n",
    "  if (!el && !AM.tracks) { msg('No animation.glb was given to this report.'); document.body.dataset.viewer = 'none'; return; }\n",
    "  const bin = el ? Uint8Array.from(atob(el.textContent.replace(/\\s+/g, '')), (c) => c.charCodeAt(0)) : null;\n",
    "  const gltf = bin ? await new Promise((res, rej) => new GLTFLoader().parse(bin.buffer, '', res, rej)) : {scene: new THREE.Group(), animations: []};\n",
    "  const canvas = document.getElementById('view');\n",
    "  const renderer = new THREE.WebGLRenderer({canvas, antialias: true, preserveDrawingBuffer: true});\n",
    "  renderer.setSize(canvas.width, canvas.height, false);\n",
    "  const scene = new THREE.Scene();\n",
    "  scene.background = new THREE.Color(128 / 255, 130 / 255, 134 / 255);\n",
    "  scene.add(new THREE.HemisphereLight(0xffffff, 0x505050, 2.2));\n",
    "  const sun = new THREE.DirectionalLight(0xffffff, 1.6); sun.position.set(-1, 2, 1.4); scene.add(sun);\n",
    "  const floor = new THREE.Mesh(new THREE.CircleGeometry(AM.size * 4, 48), new THREE.MeshBasicMaterial({color: new THREE.Color(152 / 255, 154 / 255, 158 / 255)}));\n",
    "  floor.rotation.x = -Math.PI / 2; floor.position.set(AM.centre[0], 0, AM.centre[2]); scene.add(floor);\n",
    "  scene.add(gltf.scene);\n",
    "  const mixer = new THREE.AnimationMixer(gltf.scene);\n",
    "  const clip = gltf.animations[0];\n",
    "  const duration = clip ? clip.duration : 0;\n",
    "  if (clip) mixer.clipAction(clip).play();\n",
    "  const pts = AM.tracks ? AM.names : null;\n",
    "  const nodes = pts ? pts.map(() => true) : AM.joints.map((j) => gltf.scene.getObjectByName(THREE.PropertyBinding.sanitizeNodeName(j.node)) || null);\n",
    "  if (clip) mixer.setTime(0);\n",
    "  gltf.scene.updateMatrixWorld(true);\n",
    "  const off = AM.joints.map((j, k) => (j.at0 && nodes[k] ? nodes[k].worldToLocal(new THREE.Vector3().fromArray(j.at0)) : null));\n",
    "  const lines = new THREE.LineSegments(new THREE.BufferGeometry(), new THREE.LineBasicMaterial({color: 0xff9a3c, depthTest: false}));\n",
    "  if (pts) { lines.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(AM.edges.length * 6), 3)); lines.renderOrder = 1; scene.add(lines); }\n",
    "  const markers = new THREE.Group();\n",
    "  const sg = new THREE.SphereGeometry(AM.size * 0.012, 10, 8);\n",
    "  const sm = new THREE.MeshBasicMaterial({color: 0xffffff, depthTest: false});\n",
    "  for (let i = 0; i < nodes.length; i++) { const m = new THREE.Mesh(sg, sm); m.renderOrder = 2; markers.add(m); }\n",
    "  scene.add(markers);\n",
    "  const camera = new THREE.PerspectiveCamera(40, canvas.width / canvas.height, AM.size * 0.01, AM.size * 50);\n",
    "  camera.position.set(AM.eye[0], AM.eye[1], AM.eye[2]);\n",
    "  const controls = new OrbitControls(camera, canvas);\n",
    "  controls.target.set(AM.centre[0], AM.centre[1], AM.centre[2]); controls.update();\n",
    "  const scrub = document.getElementById('scrub'), label = document.getElementById('fr');\n",
    "  const play = document.getElementById('play'), toggle = document.getElementById('joints');\n",
    "  const p = new THREE.Vector3();\n",
    "  const at = (k, out) => (pts ? (AM.tracks[frame][k] ? out.fromArray(AM.tracks[frame][k]) : null) : off[k] ? nodes[k].localToWorld(out.copy(off[k])) : nodes[k].getWorldPosition(out));\n",
    "  let frame = 0, playing = false, t0 = 0;\n",
    "  function setFrame(i) {\n",
    "    frame = Math.max(0, Math.min(AM.frames - 1, Math.round(i)));\n",
    "    if (clip) mixer.setTime(Math.min(frame / AM.fps, Math.max(0, duration - 1e-6)));\n",
    "    gltf.scene.updateMatrixWorld(true);\n",
    "    nodes.forEach((n, k) => { const ok = n && at(k, p); if (ok) markers.children[k].position.copy(p); markers.children[k].visible = !!ok; });\n",
    "    if (pts) { const a = lines.geometry.attributes.position; AM.edges.forEach(([i, j], e) => { const u = AM.tracks[frame][i], v = AM.tracks[frame][j]; a.array.set(u && v ? u.concat(v) : [0, 0, 0, 0, 0, 0], e * 6); }); a.needsUpdate = true; }\n",
    "    scrub.value = frame; label.textContent = 'frame ' + frame + ' / ' + (AM.frames - 1);\n",
    "    renderer.render(scene, camera);\n",
    "  }\n",
    "  function joints() { gltf.scene.updateMatrixWorld(true); return nodes.map((n, k) => { if (!n || !at(k, p)) return null; return [p.x, -p.z, p.y]; }); }\n",
    "  scrub.max = AM.frames - 1;\n",
    "  scrub.addEventListener('input', () => { playing = false; play.textContent = 'play'; setFrame(Number(scrub.value)); });\n",
    "  play.addEventListener('click', () => { playing = !playing; play.textContent = playing ? 'pause' : 'play'; t0 = performance.now() - frame / AM.fps * 1000; });\n",
    "  toggle.addEventListener('change', () => { markers.visible = lines.visible = toggle.checked; renderer.render(scene, camera); });\n",
    "  controls.addEventListener('change', () => renderer.render(scene, camera));\n",
    "  function tick(now) { if (playing) { const f = Math.floor((now - t0) / 1000 * AM.fps); if (f >= AM.frames) t0 = now; setFrame(f % AM.frames); } requestAnimationFrame(tick); }\n",
    "  setFrame(0);\n",
    "  requestAnimationFrame(tick);\n",
    "  window.anymoveViewer = {setFrame, joints, names: pts || AM.joints.map((j) => j.name), frames: AM.frames, fps: AM.fps, ready: true};\n",
    "  document.body.dataset.viewer = 'ready';\n",
    "}\n",
    "viewer().catch((e) => { msg('viewer: ' + e.message); document.body.dataset.viewer = 'failed'; });\n",
    NULL};

/* Reprojection error per frame and view or camera: the fit's joints through each camera (the
 * layout's two for a two-view det) against the seen detections, mean over joints. Camera c's
 * frame k is the fit's frame k + offset (motion.json's time_offsets, else the det's), the joints
 * interpolated between frames for a fractional offset. */
static am_status ami_reproj_plot(am_buf *b, const am_report_job *job, const am_layout *L, const double *joints, size_t T,
                                 const char *const *joint_names, size_t J, json_t *extra, am_error *err)
{
    am_mdet *own = NULL;
    am_calib *lay = NULL;
    const am_mdet *d = job->mdet;
    const am_calib *cal = job->cameras;
    if (job->det) {
        AMI_TRY(am_mdet_from_two_view(job->det, &own, err));
        am_status s = am_cameras_from_layout(L, &lay, err);
        if (s != AM_OK) {
            am_mdet_free(own);
            return s;
        }
        d = own, cal = lay;
    }
    size_t C = d->camera_count;
    double *series = am_alloc_array(C * T + 1, sizeof(double)), *mean = am_alloc_array(C + 1, sizeof(double)),
           *offv = am_alloc_array(C + 1, sizeof(double));
    const char **names = am_alloc_array(C + 1, sizeof(char *));
    am_status s = series && mean && offv && names ? AM_OK : AM_FAIL(err, AM_E_NOMEM, "report");
    json_t *offs = extra ? json_object_get(extra, "time_offsets") : NULL;
    for (size_t c = 0; s == AM_OK && c < C; c++) {
        names[c] = d->cameras[c];
        json_t *o = offs ? json_object_get(offs, d->cameras[c]) : NULL;
        offv[c] = o && json_is_number(o) ? json_number_value(o) : d->time_offset ? d->time_offset[c] : 0.0;
    }
    if (s == AM_OK) s = am_reproj_cameras(d, cal, joints, T, joint_names, J, offv, mean, series, err);
    if (s == AM_OK)
        ami_svg_lines(b, C == 2 && job->det ? "Reprojection error per frame" : "Reprojection error per frame and camera", "px",
                      T, C, names, series, NULL);
    am_free(series);
    am_free(names);
    am_free(mean);
    am_free(offv);
    am_mdet_free(own);
    am_calib_free(lay);
    return s;
}

am_status am_report_write(const am_report_job *job, am_error *err)
{
    am_scope scope;
    am_scope_enter(&scope, &job->ctx);
    ami_stage stage = ami_stage_begin("report");
    const am_rig *rig = job->rig;
    const am_motion *mo = rig ? job->motion : NULL;
    const am_joints *pts = rig ? NULL : job->points;
    if (!mo && !pts) {
        am_scope_leave(&scope, NULL);
        return AM_FAIL(err, AM_E_USAGE, "a report needs a rig with its motion, or points");
    }
    size_t T = mo ? mo->frame_count : pts->frame_count, J = rig ? rig->joint_count : pts->joint_count;
    size_t B = rig ? rig->bone_count : 0;
    const char *const *jnames = rig ? (const char *const *)rig->joint_names : (const char *const *)pts->names;
    double fps = mo ? mo->fps : pts->fps;
    am_layout L;
    if (job->layout) L = *job->layout;
    else am_layout_default(&L);
    am_status s = AM_OK;
    json_t *extra = NULL;
    if (mo && mo->extra_json) s = ami_json_parse(mo->extra_json, strlen(mo->extra_json), "motion.json", &extra, err);
    double *joints = am_alloc_array(T * J * 3 + 1, sizeof(double));
    double *series = am_alloc_array((T + 1) * (B + 2 * 4 + 8), sizeof(double));
    const char **names = am_alloc_array(B + 16, sizeof(char *));
    bool *dashed = am_alloc_array(B + 16, sizeof(bool));
    if (s == AM_OK && (!joints || !series || !names || !dashed)) s = AM_FAIL(err, AM_E_NOMEM, "report");
    if (s == AM_OK) {
        if (pts) memcpy(joints, pts->joints, T * J * 3 * sizeof(double));
        else if (mo->joints && mo->joint_count == J) memcpy(joints, mo->joints, T * J * 3 * sizeof(double));
        else am_rig_fk_clip(rig, mo, joints);
    }
    am_buf b = {0};
    if (s == AM_OK) {
        am_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
        ami_buf_html(&b, job->title ? job->title : "anymove report");
        am_buf_printf(&b,
                      "</title>\n<style>body{font:14px sans-serif;margin:24px;color:#222;max-width:1000px}"
                      "h2{margin-top:28px;border-bottom:1px solid #ccc}table.gates td,table.gates th{padding:3px 10px;text-align:left}"
                      ".ok{color:#176d25;font-weight:bold}.look{color:#9a6a00;font-weight:bold}.bad{color:#b01c1c;font-weight:bold}"
                      "pre.gate{background:#f4f4f4;padding:8px;overflow:auto}svg.plot{background:#fff}"
                      "svg .t{font-weight:bold;font-size:13px}svg .ax{font-size:11px}svg .grid{stroke:#e5e5e5}"
                      "svg .frame{fill:none;stroke:#999}figure{margin:8px 0}#view{border:1px solid #999}"
                      ".controls{margin:6px 0}</style>\n</head><body>\n<h1>");
        ami_buf_html(&b, job->title ? job->title : "anymove report");
        if (rig) am_buf_printf(&b, "</h1>\n<p>%zu frames at %g fps, %zu joints, %zu bones.</p>\n", T, fps, J, B);
        else am_buf_printf(&b, "</h1>\n<p>%zu frames at %g fps, %zu points, %zu edges.</p>\n", T, fps, J, job->edge_count);
        ami_gates(&b, job, extra);
        am_buf_printf(&b, "<section id=\"plots\"><h2>Plots</h2>\n");
        const am_det *det = job->det;
        /* reprojection per frame and view (the two views of SPEC 3) or camera */
        if (job->det || (job->mdet && job->cameras)) s = ami_reproj_plot(&b, job, &L, joints, T, jnames, J, extra, err);
        /* paw heights in both views */
        for (size_t f = 0; rig && f < job->feet_count; f++) {
            int rj = am_rig_find_joint(rig, job->feet[f]);
            if (rj < 0) continue;
            int dj = -1;
            for (size_t j = 0; det && j < det->joint_count; j++)
                if (strcmp(det->names[j], job->feet[f]) == 0) dj = (int)j;
            size_t n = 0;
            for (size_t t = 0; t < T; t++) series[t] = joints[(t * J + (size_t)rj) * 3 + 2] / L.m_per_px;
            names[n] = "fit", dashed[n++] = false;
            if (dj >= 0)
                for (int v = 0; v < 2; v++) {
                    for (size_t t = 0; t < T; t++) {
                        bool in = t < det->frame_count;
                        size_t i = t * det->joint_count + (size_t)dj;
                        double cf = in ? am_reals_at(am_det_conf(det, v), i) : 0;
                        series[n * T + t] = in && cf > 0 ? L.ground_v - am_reals_at(am_det_uv(det, v), 2 * i + 1) : NAN;
                    }
                    names[n] = v == 0 ? "front view" : "side view";
                    dashed[n++] = v == 0;
                }
            char title[160];
            snprintf(title, sizeof title, "Paw height of %s (px above the ground row)", job->feet[f]);
            ami_svg_lines(&b, title, "px", T, n, names, series, dashed);
        }
        /* contacts timeline */
        json_t *contacts = extra ? json_object_get(extra, "contacts") : NULL;
        if (contacts && json_is_object(contacts) && json_object_size(contacts) > 0) {
            size_t n = json_object_size(contacts);
            double W = 720, l = 110, row = 18, H = 30 + row * (double)n;
            am_buf_printf(&b, "<figure><svg class=\"plot\" id=\"contacts\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\"><text x=\"%g\" y=\"16\" class=\"t\">Contacts (planted frames)</text>", W, H, W, H, l);
            const char *key;
            json_t *iv;
            size_t k = 0;
            double xs = (W - l - 20) / (T > 1 ? (double)(T - 1) : 1.0);
            json_object_foreach(contacts, key, iv) {
                double y = 24 + row * (double)k;
                am_buf_printf(&b, "<text x=\"%g\" y=\"%g\" class=\"ax\" text-anchor=\"end\">", l - 6, y + 12);
                ami_buf_html(&b, key);
                am_buf_printf(&b, "</text><line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" class=\"grid\"/>", l, W - 20, y + 8, y + 8);
                for (size_t i = 0; json_is_array(iv) && i < json_array_size(iv); i++) {
                    json_t *pr = json_array_get(iv, i);
                    double a = json_number_value(json_array_get(pr, 0)), e = json_number_value(json_array_get(pr, 1));
                    am_buf_printf(&b, "<rect x=\"%.1f\" y=\"%g\" width=\"%.1f\" height=\"%g\" fill=\"%s\"/>", l + a * xs, y + 2,
                                  fmax(1.0, (e - a + 1) * xs), row - 6, ami_palette[k % AMI_PALETTE]);
                }
                k++;
            }
            am_buf_printf(&b, "</svg></figure>\n");
            /* foot slide per plant: the joint's horizontal drift over the plant, in the ground's
             * frame when the motion says the ground moves (ground_velocity, m/s: a treadmill or
             * an in-place clip, whose planted feet travel with it) */
            double gv[2] = {0, 0};
            json_t *gvj = json_object_get(extra, "ground_velocity");
            for (int c = 0; c < 2 && json_is_array(gvj); c++) {
                double v = json_number_value(json_array_get(gvj, (size_t)c));
                gv[c] = isfinite(v) && fps > 0 ? v / fps : 0;
            }
            size_t plants = 0;
            json_object_foreach(contacts, key, iv) plants += json_is_array(iv) ? json_array_size(iv) : 0;
            char **labels = am_alloc_array(plants + 1, sizeof(char *));
            double *slide = am_alloc_array(plants + 1, sizeof(double));
            size_t np = 0;
            json_object_foreach(contacts, key, iv) {
                int rj = am_rig_find_joint(rig, key);
                for (size_t i = 0; labels && slide && rj >= 0 && json_is_array(iv) && i < json_array_size(iv); i++) {
                    json_t *pr = json_array_get(iv, i);
                    double a = json_number_value(json_array_get(pr, 0)), e = json_number_value(json_array_get(pr, 1));
                    if (!(a >= 0 && e >= a && e < (double)T)) continue;
                    const double *p0 = joints + ((size_t)a * J + (size_t)rj) * 3;
                    double m = 0;
                    for (size_t t = (size_t)a; t <= (size_t)e; t++) {
                        const double *p = joints + (t * J + (size_t)rj) * 3;
                        double dt = (double)t - a;
                        m = fmax(m, hypot(p[0] - p0[0] - gv[0] * dt, p[1] - p0[1] - gv[1] * dt));
                    }
                    labels[np] = am_alloc(96);
                    if (!labels[np]) break;
                    snprintf(labels[np], 96, "%s %d-%d", key, (int)a, (int)e);
                    slide[np++] = 1000 * m;
                }
            }
            if (np) ami_svg_bars(&b, gv[0] || gv[1] ? "Foot slide per plant (largest horizontal drift on the moving ground)" : "Foot slide per plant (largest horizontal drift)", "mm", np, (const char *const *)labels, slide);
            for (size_t i = 0; labels && i < np; i++) am_free(labels[i]);
            am_free(labels);
            am_free(slide);
        }
        /* per-joint error against the truth */
        if (job->truth_joints) {
            double *e = am_alloc_array(J + 1, sizeof(double));
            for (size_t j = 0; e && j < J; j++) {
                double sum = 0;
                size_t n = 0;
                for (size_t t = 0; t < T; t++) {
                    double d = am_vec3_dist(joints + (t * J + j) * 3, job->truth_joints + (t * J + j) * 3);
                    if (isfinite(d)) sum += d, n++;
                }
                e[j] = n ? 100 * sum / (double)n : NAN;
            }
            if (e) ami_svg_bars(&b, "Per-joint error against the truth (mean)", "cm", J, jnames, e);
            am_free(e);
        }
        /* per-bone angles: each bone's rotation away from rest */
        size_t n = 0;
        double *pose = am_alloc_array(B * 16, sizeof(double));
        for (size_t bb = 1; pose && bb < B && n < B; bb++) {
            if (rig->is_helper[bb]) continue;
            for (size_t t = 0; t < T; t++) {
                double q[4], R[9];
                if (mo->euler) {
                    am_euler_xyz_to_mat3(mo->euler + (t * B + bb) * 3, R);
                    am_quat_from_mat3(R, q);
                } else if (mo->quat) {
                    memcpy(q, mo->quat + (t * B + bb) * 4, sizeof q);
                } else {
                    q[0] = 1, q[1] = q[2] = q[3] = 0;
                }
                series[n * T + t] = 2.0 * acos(fmin(1.0, fabs(q[0]))) * 180.0 / AM_PI;
            }
            names[n] = rig->bone_names[bb];
            dashed[n++] = false;
        }
        am_free(pose);
        if (n) ami_svg_lines(&b, "Per-bone angle from rest", "deg", T, n, names, series, dashed);
        am_buf_printf(&b, "</section>\n");
        /* the viewer */
        double box[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
        for (size_t i = 0; i < T * J; i++)
            for (int c = 0; c < 3; c++) box[c] = fmin(box[c], joints[i * 3 + c]), box[3 + c] = fmax(box[3 + c], joints[i * 3 + c]);
        double centre[3], size = fmax(1e-3, sqrt(pow(box[3] - box[0], 2) + pow(box[4] - box[1], 2) + pow(box[5] - box[2], 2)));
        for (int c = 0; c < 3; c++) centre[c] = 0.5 * (box[c] + box[3 + c]);
        am_camera eye;
        am_camera_three_quarter(&eye, box, NULL, 960, 540);
        double ec[3], gc[3], ge[3];
        am_camera_centre(&eye, ec);
        am_gltf_from_world(centre, gc);
        am_gltf_from_world(ec, ge);
        am_buf_printf(&b, "<section id=\"viewer-section\"><h2>3D viewer</h2>\n<canvas id=\"view\" width=\"960\" height=\"540\"></canvas>\n"
                          "<div class=\"controls\"><button id=\"play\">play</button> <input type=\"range\" id=\"scrub\" min=\"0\" max=\"0\" value=\"0\" style=\"width:600px\"> "
                          "<span id=\"fr\"></span> <label><input type=\"checkbox\" id=\"joints\" checked> joints</label></div>\n<p id=\"vmsg\"></p></section>\n");
        /* the viewer's data: each joint is the world origin of one node (a bone's head, or a
         * leaf's "<bone>_end" marker), or the tail of a bone with children, which has no node
         * of its own: at0, where it is at frame 0, fixed in the bone's node from then on (the
         * viewer takes the offset in that node at frame 0: a kept character's nodes need not
         * have Y along the bone nor unit scale, as the writer's own do) */
        am_buf jb = {0};
        ami_jw w;
        ami_jw_begin(&w, &jb, AMI_JSON_COMPACT);
        ami_jw_object(&w, NULL);
        ami_jw_number(&w, "fps", fps > 0 ? fps : 30);
        ami_jw_int(&w, "frames", (int64_t)T);
        ami_jw_number(&w, "size", size);
        ami_jw_numbers(&w, "centre", gc, 1, (const size_t[1]){3});
        ami_jw_numbers(&w, "eye", ge, 1, (const size_t[1]){3});
        const char *script_name = job->script_path ? strrchr(job->script_path, '/') : NULL;
        script_name = script_name ? script_name + 1 : job->script_path ? job->script_path : "";
        ami_jw_string(&w, "script", script_name);
        if (pts) {
            /* points: the viewer draws them (and the edges) from here, in glTF axes, null where missing */
            ami_jw_strings(&w, "names", jnames, J);
            ami_jw_array(&w, "edges");
            for (size_t e = 0; e < job->edge_count; e++) {
                ami_jw_row(&w, NULL);
                ami_jw_int(&w, NULL, job->edges[2 * e]);
                ami_jw_int(&w, NULL, job->edges[2 * e + 1]);
                ami_jw_close(&w);
            }
            ami_jw_close(&w);
            ami_jw_array(&w, "tracks");
            for (size_t t = 0; t < T; t++) {
                ami_jw_row(&w, NULL);
                for (size_t j = 0; j < J; j++) {
                    const double *q = joints + (t * J + j) * 3;
                    if (!isfinite(q[0] + q[1] + q[2])) {
                        ami_jw_null(&w, NULL);
                        continue;
                    }
                    double g[3];
                    am_gltf_from_world(q, g);
                    ami_jw_numbers(&w, NULL, g, 1, (const size_t[1]){3});
                }
                ami_jw_close(&w);
            }
            ami_jw_close(&w);
        }
        ami_jw_array(&w, "joints");
        char nb[512];
        for (size_t j = 0; rig && j < J; j++) {
            int head_of = -1, tail_of = -1;
            bool leaf = true;
            for (size_t bb = 0; bb < B; bb++) {
                if (rig->head_joint[bb] == (int32_t)j && head_of < 0) head_of = (int)bb;
                if (rig->tail_joint[bb] == (int32_t)j && tail_of < 0) tail_of = (int)bb;
            }
            for (size_t bb = 0; head_of < 0 && tail_of >= 0 && bb < B; bb++) leaf &= rig->parent[bb] != tail_of;
            if (head_of >= 0) snprintf(nb, sizeof nb, "%s", rig->bone_names[head_of]);
            else if (tail_of >= 0) snprintf(nb, sizeof nb, leaf ? "%s_end" : "%s", rig->bone_names[tail_of]);
            else continue;
            ami_jw_record(&w, NULL);
            ami_jw_string(&w, "name", rig->joint_names[j]);
            ami_jw_string(&w, "node", nb);
            if (head_of < 0 && !leaf) {
                double g[3];
                am_gltf_from_world(joints + j * 3, g);
                ami_jw_numbers(&w, "at0", g, 1, (const size_t[1]){3});
            }
            ami_jw_close(&w);
        }
        ami_jw_close(&w);
        ami_jw_close(&w);
        s = ami_jw_finish(&w, err);
        if (s == AM_OK) {
            /* '<' escaped so no name can close the script element */
            am_buf_printf(&b, "<script type=\"application/json\" id=\"am-data\">");
            for (size_t i = 0; i < jb.len; i++) {
                if (jb.data[i] == '<') am_buf_append(&b, "\\u003c", 6);
                else am_buf_append(&b, jb.data + i, 1);
            }
            am_buf_printf(&b, "</script>\n");
        }
        am_buf_free(&jb);
        if (job->glb) {
            am_buf_printf(&b, "<script type=\"application/octet-stream\" id=\"glb\">\n");
            ami_base64(&b, job->glb, job->glb_len);
            am_buf_printf(&b, "\n</script>\n");
        }
        if (job->script_path && job->three_dir) am_buf_printf(&b, "<script src=\"%s\"></script>\n", script_name);
        am_buf_printf(&b, "<script type=\"module\">\n");
        for (size_t i = 0; ami_viewer_js[i]; i++) am_buf_printf(&b, "%s", ami_viewer_js[i]);
        am_buf_printf(&b, "</script>\n</body></html>\n");
    }
    if (s == AM_OK && b.failed) s = AM_FAIL(err, AM_E_NOMEM, "report");
    if (s == AM_OK && job->script_path && job->three_dir) s = ami_modules(job->three_dir, job->script_path, err);
    if (s == AM_OK) s = am_file_write(job->html_path, b.data, b.len, err);
    if (s == AM_OK) ami_stage_end(&stage);
    am_buf_free(&b);
    json_decref(extra);
    am_free(joints);
    am_free(series);
    am_free(names);
    am_free(dashed);
    am_scope_leave(&scope, NULL);
    return s;
}
