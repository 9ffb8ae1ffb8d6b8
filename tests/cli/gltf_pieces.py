#!/usr/bin/env python3
"""Variants of a GLB for bind's test: several mesh nodes (the shared models have one each),
more UV sets, an unmarked bound character:

  split IN.glb OUT.glb   every primitive of the first mesh node becomes its own mesh node
                         ("<node>_<k>", mesh "<mesh>_<k>", same skin and transform)
  twin IN.glb OUT.glb    a second node of the first mesh ("<node>_twin"), beside the first with
                         its own transform (turned 90 degrees about Y, scaled 0.5, moved along
                         X); a camera node and an empty node are added too
  uvs IN.glb OUT.glb     every primitive given TEXCOORD_1 and TEXCOORD_2 = its TEXCOORD_0
  unmark IN.glb OUT.glb  a bound character as bind wrote it before the paint marks: every
                         primitive without its extras and COLOR_1

Only the JSON changes (accessors are shared); GLB in and out. (Python 3, no numpy.)"""
import json
import struct
import sys


def read_glb(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<I", b, 12)[0]
    return json.loads(b[20:20 + n]), b[20 + n:]


def write_glb(path, doc, rest):
    t = json.dumps(doc, separators=(",", ":")).encode()
    t += b" " * (-len(t) % 4)
    body = struct.pack("<II", len(t), 0x4E4F534A) + t + rest
    open(path, "wb").write(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)


def main():
    mode, src, out = sys.argv[1:4]
    doc, rest = read_glb(src)
    nodes = doc["nodes"]
    ni = next(i for i, n in enumerate(nodes) if "mesh" in n)
    node = nodes[ni]
    parent = next((i for i, n in enumerate(nodes) if ni in n.get("children", [])), None)
    roots = doc["scenes"][doc.get("scene", 0)]["nodes"]
    siblings = nodes[parent]["children"] if parent is not None else roots
    if mode == "split":
        mesh = doc["meshes"][node["mesh"]]
        for k, prim in enumerate(mesh["primitives"]):
            piece = dict(mesh, name="%s_%d" % (mesh.get("name", "mesh"), k), primitives=[prim])
            doc["meshes"].append(piece)
            extra = dict(node, name="%s_%d" % (node.get("name", "node"), k), mesh=len(doc["meshes"]) - 1)
            nodes.append(extra)
            siblings.append(len(nodes) - 1)
        siblings.remove(ni)
        node.pop("mesh")
        node.pop("skin", None)
        node["name"] = node.get("name", "node") + "_empty"
    elif mode == "twin":
        lo = doc["accessors"][doc["meshes"][node["mesh"]]["primitives"][0]["attributes"]["POSITION"]]
        span = lo["max"][0] - lo["min"][0]
        twin = {k: v for k, v in node.items() if k not in ("matrix", "children")}
        twin.update(name=node.get("name", "node") + "_twin", rotation=[0, 0.7071067811865476, 0, 0.7071067811865476],
                    scale=[0.5, 0.5, 0.5], translation=[1.2 * span, 0, 0])
        nodes.append(twin)
        siblings.append(len(nodes) - 1)
        doc.setdefault("cameras", []).append({"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}})
        nodes.append({"name": "Camera", "camera": 0, "translation": [0, 1, 10]})
        roots.append(len(nodes) - 1)
        nodes.append({"name": "Empty", "translation": [0, 2, 0]})
        roots.append(len(nodes) - 1)
    elif mode in ("uvs", "unmark"):
        for m in doc["meshes"]:
            for p in m["primitives"]:
                at = p["attributes"]
                if mode == "uvs":
                    at["TEXCOORD_1"] = at["TEXCOORD_2"] = at["TEXCOORD_0"]
                else:
                    p.pop("extras", None)
                    at.pop("COLOR_1", None)
    else:
        sys.exit("mode: split, twin, uvs or unmark")
    write_glb(out, doc, rest)


main()
