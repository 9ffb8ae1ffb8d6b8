// Loads a .glb with three.js's GLTFLoader and prints (one JSON line) what a game would find of
// its meshes: every skinned mesh with the name of the node it came from (a node of several
// primitives is a Group of meshes, named after the node), its morph target names, whether it has
// vertex colours and how many, and the names of the animations.
// usage: node three_meshes.mjs FILE.glb
import { loadGlb } from '../../scripts/three_load.mjs';

const { gltf } = await loadGlb(process.argv[2]);
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
