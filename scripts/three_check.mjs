// Loads a .glb with three.js's own GLTFLoader (as a web viewer or game would), plays its first
// animation with an AnimationMixer, and compares every bone's world position at every frame with
// the joint positions of `anymove fk` (converted from glTF's Y-up to our Z-up world). Bones are
// found under the names three gives nodes (PropertyBinding.sanitizeNodeName: "upperarm.L" is
// "upperarmL", "mixamorig:Hips" is "mixamorigHips").
// usage: node three_check.mjs FILE.glb RIG.json FK.json FPS [CLIP [SCALE]]  -> one JSON line; exit 1 if off.
// SCALE: metres per unit of the file (a character kept in centimetres under a rig scaled to metres).
import fs from 'fs';
import { THREE, loadGlb } from './three_load.mjs';

// Optional CLIP: the animation of that name (else the first, also when CLIP is ""); with it,
// the loop is checked too: the root-relative step from the last frame back to the first must be
// no bigger than twice the clip's mean root-relative step (a loop without a pop).
const [file, rigPath, fkPath, fpsArg, clipName, scaleArg] = process.argv.slice(2);
const scale = scaleArg ? Number(scaleArg) : 1;
const rig = JSON.parse(fs.readFileSync(rigPath, 'utf8'));
const fk = JSON.parse(fs.readFileSync(fkPath, 'utf8'));
const fps = Number(fpsArg);

const { gltf } = await loadGlb(file);
const scene = gltf.scene;
let skinned = 0;
scene.traverse((o) => { if (o.isSkinnedMesh) skinned++; });
const mixer = new THREE.AnimationMixer(scene);
const anim = clipName ? gltf.animations.find((a) => a.name === clipName) : gltf.animations[0];
if (anim) mixer.clipAction(anim).play();
// A looping action at t = duration is back at frame 0: the last frame is sampled just before.
const duration = anim ? anim.duration : 0;
const jointIndex = new Map(fk.joint_names.map((n, i) => [n, i]));
let maxErr = 0, count = 0, missing = [];
const rel = [];  // per frame, every bone head relative to the root's
const p = new THREE.Vector3();
for (let t = 0; t < fk.joints.length; t++) {
  mixer.setTime(Math.min(t / fps, duration - 1e-6));
  scene.updateMatrixWorld(true);
  for (const [bone, head] of rig.bones.map((b) => [b[0], b[1]])) {
    const node = scene.getObjectByName(THREE.PropertyBinding.sanitizeNodeName(bone));
    if (!node) { if (!missing.includes(bone)) missing.push(bone); continue; }
    node.getWorldPosition(p);
    if (!rel[t]) rel[t] = [];
    rel[t].push(p.clone());
    const want = fk.joints[t][jointIndex.get(head)];
    // glTF/three (x, y, z) is our (x, -z, y).
    const err = Math.hypot(scale * p.x - want[0], -scale * p.z - want[1], scale * p.y - want[2]);
    maxErr = Math.max(maxErr, err);
    count++;
  }
}
let seam = 0, meanStep = 0;
if (clipName && rel.length > 2) {
  const step = (a, b) => {
    let s = 0;
    for (let i = 0; i < a.length; i++)
      s += a[i].clone().sub(a[0]).distanceTo(b[i].clone().sub(b[0]));
    return s / a.length;
  };
  for (let t = 0; t + 1 < rel.length; t++) meanStep += step(rel[t], rel[t + 1]) / (rel.length - 1);
  seam = step(rel[rel.length - 1], rel[0]);
}
const loops = !clipName || seam <= 2 * meanStep + 1e-9;
const ok = skinned > 0 && !!anim && missing.length === 0 && maxErr < 1e-4 && loops;
console.log(JSON.stringify({ file, clip: anim ? anim.name : null, skinned_meshes: skinned,
  animations: gltf.animations.length, samples: count, max_error_m: maxErr, missing_bones: missing,
  seam_step_m: seam, mean_step_m: meanStep, ok }));
process.exitCode = ok ? 0 : 1;
