# Imports a .glb with Blender's glTF importer (headless) and prints (one JSON line) its mesh
# objects: name, whether an armature deforms it, its shape keys and colour attributes, and the
# actions. usage: blender -b --factory-startup -P blender_meshes.py -- FILE.glb
import json
import sys

import bpy

file = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_factory_settings(use_empty=True)
# Debian's numpy crashes the default shading path; SMOOTH avoids it.
bpy.ops.import_scene.gltf(filepath=file, import_shading='SMOOTH')
out = []
for o in bpy.context.scene.objects:
    if o.type != 'MESH':
        continue
    keys = o.data.shape_keys.key_blocks if o.data.shape_keys else []
    out.append({"name": o.name, "armature": any(m.type == 'ARMATURE' and m.object for m in o.modifiers),
                "shape_keys": [k.name for k in keys][1:],  # the first is the basis
                "colors": [c.name for c in o.data.color_attributes]})
print(json.dumps({"meshes": sorted(out, key=lambda m: m["name"]), "actions": sorted(a.name for a in bpy.data.actions)}))
