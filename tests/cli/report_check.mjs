// Opens a report.html from file:// in headless Chromium (playwright-core, Debian's chromium):
// no console error, and the viewer's joints at three frames equal motion.json's joints (FK) to
// 1e-4 of the body size. usage: node report_check.mjs REPORT.html MOTION.json SHOT.png
import fs from 'fs';
import path from 'path';
import { fileURLToPath, pathToFileURL } from 'url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pw = path.join(here, '..', '..', '.deps', 'npm', 'node_modules', 'playwright-core', 'index.mjs');
const { chromium } = await import(pathToFileURL(pw).href);
const [html, motionPath, shot] = process.argv.slice(2);
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
for (const p of motion.joints[0]) for (let c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], p[c]); hi[c] = Math.max(hi[c], p[c]); }
const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
let worst = 0, compared = 0;
if (state === 'ready') {
  const names = await page.evaluate(() => window.anymoveViewer.names);
  for (const f of [0, Math.floor(T / 2), T - 1]) {
    const got = await page.evaluate((i) => { window.anymoveViewer.setFrame(i); return window.anymoveViewer.joints(); }, f);
    names.forEach((n, k) => {
      const j = motion.joint_names.indexOf(n);
      if (j < 0 || !got[k]) return;
      const want = motion.joints[f][j];
      worst = Math.max(worst, Math.hypot(got[k][0] - want[0], got[k][1] - want[1], got[k][2] - want[2]) / size);
      compared++;
    });
  }
}
await page.screenshot({path: shot, fullPage: true});
await browser.close();
fs.rmSync(profile, {recursive: true, force: true});
const ok = state === 'ready' && errors.length === 0 && compared >= 3 * J && worst <= 1e-4;
console.log(JSON.stringify({state, errors, compared, worst_rel_size: worst, ok}));
process.exitCode = ok ? 0 : 1;
