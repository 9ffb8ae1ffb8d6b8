# Imports a .glb with Blender's own glTF importer (headless) and compares every pose bone's head
# at every frame with the joint positions of `anymove fk`. Blender's world is ours (Z up).
# usage: blender -b --factory-startup --python-exit-code 1 -P blender_check.py -- FILE.glb RIG.json FK.json FPS [CLIP]
# With CLIP, the action of that name (the importer names it after the animation) is the one played.
import json, sys
import bpy

args = sys.argv[sys.argv.index("--") + 1:]
file, rig_path, fk_path, fps = args[:4]
clip = args[4] if len(args) > 4 else None
fps = float(fps)
rig = json.load(open(rig_path))
fk = json.load(open(fk_path))
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = int(round(fps))
scene.render.fps_base = scene.render.fps / fps
# Debian's numpy crashes the default shading path; SMOOTH avoids it.
bpy.ops.import_scene.gltf(filepath=file, import_shading='SMOOTH')
arms = [o for o in scene.objects if o.type == 'ARMATURE']
meshes = [o for o in scene.objects if o.type == 'MESH']
assert arms, "no armature imported"
arm = arms[0]
if clip is not None:
    actions = [a for a in bpy.data.actions if a.name == clip or a.name.startswith(clip + "_")]
    assert actions, "no action named %s among %s" % (clip, [a.name for a in bpy.data.actions])
    arm.animation_data.action = actions[0]
joint_index = {n: i for i, n in enumerate(fk["joint_names"])}
max_err, count, missing = 0.0, 0, []
for t in range(len(fk["joints"])):
    scene.frame_set(t)
    for name, head, *_ in rig["bones"]:
        pb = arm.pose.bones.get(name)
        if pb is None:
            missing.append(name)
            continue
        p = arm.matrix_world @ pb.head
        w = fk["joints"][t][joint_index[head]]
        max_err = max(max_err, ((p.x - w[0]) ** 2 + (p.y - w[1]) ** 2 + (p.z - w[2]) ** 2) ** 0.5)
        count += 1
ok = bool(meshes) and not missing and max_err < 1e-4
print(json.dumps({"file": file, "armatures": len(arms), "meshes": len(meshes), "samples": count,
                  "max_error_m": max_err, "missing_bones": sorted(set(missing)), "ok": ok}))
sys.exit(0 if ok else 1)
