// three.js and its GLTFLoader from .deps, set up for Node, as a web viewer or a game would load
// a .glb. Textured models: Node has no DOM to decode images into, and the checks are about
// skeletons, meshes and animations, so images load as 1x1 placeholders (GLTFLoader reaches them
// through `self.URL` and THREE.ImageLoader).
// usage: const { THREE, gltf } = await loadGlb('file.glb');
import fs from 'fs';
import path from 'path';
import { fileURLToPath, pathToFileURL } from 'url';

const here = path.dirname(fileURLToPath(import.meta.url));
const three = path.join(here, '..', '.deps', 'npm', 'node_modules', 'three');
export const THREE = await import(pathToFileURL(path.join(three, 'build', 'three.module.js')).href);
const { GLTFLoader } = await import(pathToFileURL(path.join(three, 'examples', 'jsm', 'loaders', 'GLTFLoader.js')).href);

globalThis.self = globalThis;
THREE.ImageLoader.prototype.load = function (url, onLoad) {
  const image = { width: 1, height: 1 };
  if (onLoad) setTimeout(() => onLoad(image), 0);
  return image;
};

export async function loadGlb(file) {
  const data = fs.readFileSync(file);
  const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(buf, '', resolve, reject));
  return { THREE, gltf };
}
