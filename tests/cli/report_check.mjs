// Opens a report.html from file:// in headless Chromium (playwright-core, Debian's chromium):
// no console error, the viewer's joints at three frames equal motion.json's joints (FK) to 1e-4
// of the body size, and a screenshot of the whole page (1100 px wide, device scale 1, the viewer
// stopped at frame 0, nothing animating, timings masked: "1.23 s" and report.json's timing keys) compared with GOLDEN.png: mean absolute
// difference <= 1 grey level and <= 6 in every tile of 32 x 32 page px (a rerun of the same solve
// gives 0; one plot without its lines gives 16 in its tile, plot lines 1 px thinner 21).
// AM_UPDATE_GOLDEN=1 writes GOLDEN.png instead (after a Chromium or font update moves the text).
// MOTION.json: motion.json, or {joint_names, joints} with null for a missing point
// (tests/cli/joints_json.py from a joints.npz: triangulate's points report).
// usage: node report_check.mjs REPORT.html MOTION.json SHOT.png GOLDEN.png
import fs from 'fs';
import path from 'path';
import { fileURLToPath, pathToFileURL } from 'url';
import { execFileSync } from 'child_process';

const here = path.dirname(fileURLToPath(import.meta.url));
const pw = path.join(here, '..', '..', '.deps', 'npm', 'node_modules', 'playwright-core', 'index.mjs');
const { chromium } = await import(pathToFileURL(pw).href);
const [html, motionPath, shot, goldenPath] = process.argv.slice(2);
const motion = JSON.parse(fs.readFileSync(motionPath, 'utf8'));
const profile = fs.mkdtempSync('/tmp/am_chromium_');
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: {width: 1100, height: 900},
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader']});
const page = await browser.newPage();
const errors = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', (e) => errors.push(e.message));
page.on('requestfailed', (r) => errors.push('request failed: ' + r.url()));
await page.goto(pathToFileURL(path.resolve(html)).href);
await page.waitForFunction(() => document.body.dataset.viewer, null, {timeout: 30000});
const state = await page.evaluate(() => document.body.dataset.viewer);
const J = motion.joints[0].length, T = motion.joints.length;
let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
for (const p of motion.joints[0]) if (p) for (let c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], p[c]); hi[c] = Math.max(hi[c], p[c]); }
const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
let worst = 0, compared = 0;
if (state === 'ready') {
  const names = await page.evaluate(() => window.anymoveViewer.names);
  for (const f of [0, Math.floor(T / 2), T - 1]) {
    const got = await page.evaluate((i) => { window.anymoveViewer.setFrame(i); return window.anymoveViewer.joints(); }, f);
    names.forEach((n, k) => {
      const j = motion.joint_names.indexOf(n);
      if (j < 0) return;
      const want = motion.joints[f][j];
      if (!want !== !got[k]) { worst = Infinity; return; } // a point shown where none is, or missing
      if (!want) return;
      worst = Math.max(worst, Math.hypot(got[k][0] - want[0], got[k][1] - want[1], got[k][2] - want[2]) / size);
      compared++;
    });
  }
}
// The picture: grey levels of the page halved, in steps of 8 (a golden of a few tens of KB that
// ffmpeg stores as an 8-bit grey PNG), compared in 16 x 16 tiles (32 x 32 page px) so that one
// plot without its lines fails even though the page's mean barely moves.
const SCALE = 2, STEP = 8, TILE = 16, MEAN_MAX = 1, TILE_MAX = 6;
let picture = {compared: false};
if (state === 'ready') {
  // Timings are the one thing a rerun changes: same-width placeholders before the shot.
  await page.evaluate(() => {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode())
      n.nodeValue = n.nodeValue.replace(/\b\d+\.\d+ s\b/g, (m) => m.replace(/\d/g, '#'))
        // report.json's timings (rig: timings_s {...}; ik: solve_ms, frames_per_s): one width
        .replace(/("(?:timings_s|[a-z_]*_ms|[a-z_]*per_s|[a-z_]*seconds)"\s*:\s*)(\{[^}]*\}|-?[0-9][0-9.eE+-]*)/g,
                 (m, k, v) => k + v.replace(/-?[0-9][0-9.eE+-]*/g, '#.###'));
    window.anymoveViewer.setFrame(0);
  });
  const png = await page.screenshot({path: shot, fullPage: true, animations: 'disabled', caret: 'hide'});
  const update = !!process.env.AM_UPDATE_GOLDEN;
  const golden = goldenPath && !update && fs.existsSync(goldenPath) ? fs.readFileSync(goldenPath) : null;
  const cmp = await browser.newPage();
  picture = await cmp.evaluate(async ([shotB64, goldB64, SCALE, STEP, TILE]) => {
    const load = (b64) => new Promise((res, rej) => { const im = new Image(); im.onload = () => res(im); im.onerror = () => rej(new Error('not a PNG')); im.src = 'data:image/png;base64,' + b64; });
    const pixels = (im, w, h, grey) => {
      const c = document.createElement('canvas'); c.width = w; c.height = h;
      const g = c.getContext('2d'); g.imageSmoothingQuality = 'high'; g.drawImage(im, 0, 0, w, h);
      const px = g.getImageData(0, 0, w, h);
      const d = px.data, out = new Uint8Array(w * h);
      for (let i = 0; i < out.length; i++) {
        const y = grey ? 0.299 * d[4 * i] + 0.587 * d[4 * i + 1] + 0.114 * d[4 * i + 2] : d[4 * i];
        out[i] = grey ? Math.min(255, Math.round(y / STEP) * STEP) : y;
        d[4 * i] = d[4 * i + 1] = d[4 * i + 2] = out[i]; d[4 * i + 3] = 255;
      }
      g.putImageData(px, 0, 0);
      return {c, out};
    };
    const im = await load(shotB64);
    const w = Math.floor(im.width / SCALE), h = Math.floor(im.height / SCALE);
    const a = pixels(im, w, h, true);
    const res = {width: w, height: h, png: a.c.toDataURL('image/png').split(',')[1], compared: false};
    if (!goldB64) return res;
    const gi = await load(goldB64);
    res.golden = [gi.width, gi.height];
    if (gi.width !== w || gi.height !== h) return res;
    const b = pixels(gi, w, h, false);
    const tw = Math.ceil(w / TILE), sums = new Float64Array(tw * Math.ceil(h / TILE)), counts = new Float64Array(sums.length);
    let total = 0;
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const d = Math.abs(a.out[y * w + x] - b.out[y * w + x]), t = Math.floor(y / TILE) * tw + Math.floor(x / TILE);
      total += d; sums[t] += d; counts[t]++;
    }
    let worstTile = 0, at = 0;
    for (let t = 0; t < sums.length; t++) if (sums[t] / counts[t] > worstTile) { worstTile = sums[t] / counts[t]; at = t; }
    return Object.assign(res, {compared: true, mean_abs: total / (w * h), worst_tile: worstTile,
                               worst_tile_at_px: [(at % tw) * TILE * SCALE, Math.floor(at / tw) * TILE * SCALE]});
  }, [png.toString('base64'), golden ? golden.toString('base64') : null, SCALE, STEP, TILE]);
  if (goldenPath && update) {
    const tmp = goldenPath + '.rgba.png';
    fs.writeFileSync(tmp, Buffer.from(picture.png, 'base64'));
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', tmp, '-pix_fmt', 'gray', '-compression_level', '100', goldenPath]);
    fs.rmSync(tmp);
  }
  delete picture.png;
}
await browser.close();
fs.rmSync(profile, {recursive: true, force: true});
const pictureOk = !goldenPath || !!process.env.AM_UPDATE_GOLDEN ||
  (picture.compared && picture.mean_abs <= MEAN_MAX && picture.worst_tile <= TILE_MAX);
const ok = state === 'ready' && errors.length === 0 && compared >= 3 * J && worst <= 1e-4 && pictureOk;
console.log(JSON.stringify({state, errors, compared, worst_rel_size: worst, picture, ok}));
process.exitCode = ok ? 0 : 1;
