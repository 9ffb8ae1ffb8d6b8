// Loads a .glb with three.js's GLTFLoader and prints (one JSON line) what a game would find of
// its meshes: every skinned mesh with the name of the node it came from (a node of several
// primitives is a Group of meshes, named after the node), its morph target names, whether it has
// vertex colours and how many, and the names of the animations.
// usage: node three_meshes.mjs FILE.glb
import fs from 'fs';
import path from 'path';
import { fileURLToPath, pathToFileURL } from 'url';

const here = path.dirname(fileURLToPath(import.meta.url));
const three = path.join(here, '..', '..', '.deps', 'npm', 'node_modules', 'three');
const THREE = await import(pathToFileURL(path.join(three, 'build', 'three.module.js')).href);
const { GLTFLoader } = await import(pathToFileURL(path.join(three, 'examples', 'jsm', 'loaders', 'GLTFLoader.js')).href);
globalThis.self = globalThis;
THREE.ImageLoader.prototype.load = function (url, onLoad) {
  const image = { width: 1, height: 1 };
  if (onLoad) setTimeout(() => onLoad(image), 0);
  return image;
};
const data = fs.readFileSync(process.argv[2]);
const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(buf, '', resolve, reject));
const meshes = [];
gltf.scene.traverse((o) => {
  if (!o.isSkinnedMesh) return;
  const node = o.parent && o.parent.isGroup && !o.parent.isScene && o.parent.children.every((c) => c.isMesh)
    ? o.parent.name : o.name;
  meshes.push({ node, morphs: Object.keys(o.morphTargetDictionary || {}),
    colors: o.geometry.getAttribute('color') ? o.geometry.getAttribute('color').count : 0,
    vertex_colors: !!(o.material && o.material.vertexColors) });
});
console.log(JSON.stringify({ meshes, animations: gltf.animations.map((a) => a.name) }));
