"""Blender's automatic weights (bone heat) on a skinned glTF, as the anchor of bench/bind.sh.

blender -b --factory-startup -P bench/blender_autoweights.py -- MODEL.glb OUT.json [--no-merge]

Imports the model, marks the bones that carry none of the artist's weight as non-deforming (the
IK and pole targets our bind leaves out too), throws the artist's weights away, merges vertices
by distance (1e-4 of the mesh's size, as our weld; a glTF splits every UV seam, and Blender's bone
heat fails on the cut-up surface: "failed to find solution for one or more bones"; --no-merge
keeps them) and parents the meshes to the armature again with
`parent_set(type='ARMATURE_AUTO')` in the rest pose. Writes
per vertex its world position (Z up, as our world) and its (bone, weight) pairs, the seconds
the parenting took, and each deforming bone's segment (head, tail) as Blender's heat used it.
"""
import json
import sys
import time

import bpy

args = sys.argv[sys.argv.index("--") + 1:]
src, out = args[0], args[1]
merge = "--no-merge" not in args
bpy.ops.wm.read_factory_settings(use_empty=True)
# 'SMOOTH': the NORMALS path of Debian's 3.4 importer calls np.bool, which numpy 1.24 removed
bpy.ops.import_scene.gltf(filepath=src, import_shading='SMOOTH')
arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
arm = arms[0]
deforming = set()
for m in meshes:
    names = {g.index: g.name for g in m.vertex_groups}
    for v in m.data.vertices:
        for g in v.groups:
            if g.weight > 0:
                deforming.add(names[g.group])
for b in arm.data.bones:
    b.use_deform = b.name in deforming
arm.data.pose_position = "REST"
for m in meshes:
    for mod in list(m.modifiers):
        if mod.type == "ARMATURE":
            m.modifiers.remove(mod)
    m.vertex_groups.clear()
    if merge:
        import bmesh
        bm = bmesh.new()
        bm.from_mesh(m.data)
        lo = [min(v.co[k] for v in bm.verts) for k in range(3)]
        hi = [max(v.co[k] for v in bm.verts) for k in range(3)]
        size = sum((hi[k] - lo[k]) ** 2 for k in range(3)) ** 0.5
        bmesh.ops.remove_doubles(bm, verts=bm.verts, dist=1e-4 * size)
        bm.to_mesh(m.data)
        bm.free()
# Unparent first, keeping where the mesh is: parent_set on a mesh that already has this parent
# resets its parent inverse, which moved the quaternius meshes (x100 armature) off their bones.
bpy.ops.object.select_all(action="DESELECT")
for m in meshes:
    m.select_set(True)
bpy.context.view_layer.objects.active = meshes[0]
bpy.ops.object.parent_clear(type="CLEAR_KEEP_TRANSFORM")
before = [m.matrix_world.copy() for m in meshes]
arm.select_set(True)
bpy.context.view_layer.objects.active = arm
t0 = time.time()
bpy.ops.object.parent_set(type="ARMATURE_AUTO")
seconds = time.time() - t0
for m, mw in zip(meshes, before):
    d = max(abs(a - b) for ra, rb in zip(m.matrix_world, mw) for a, b in zip(ra, rb))
    assert d < 1e-4 * max(abs(x) for r in mw for x in r), "parent_set moved %s" % m.name
verts, groups = [], []
for m in meshes:
    names = {g.index: g.name for g in m.vertex_groups}
    mw = m.matrix_world
    for v in m.data.vertices:
        p = mw @ v.co
        verts.append([p.x, p.y, p.z])
        groups.append([[names[g.group], g.weight] for g in v.groups if g.weight > 0])
# the bone segments Blender's heat used (world space, deforming bones): the importer guesses
# tails (leaf bones especially), so a gap between the two binds can be read against these
aw = arm.matrix_world
bones = {b.name: [list(aw @ b.head_local), list(aw @ b.tail_local)] for b in arm.data.bones if b.use_deform}
with open(out, "w") as f:
    json.dump({"model": src, "seconds": seconds, "vertices": verts, "groups": groups, "bones": bones}, f)
print("blender_autoweights: %d vertices, %.3f s" % (len(verts), seconds))
