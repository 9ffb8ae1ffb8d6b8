#!/usr/bin/env python3
"""Writes rig.json and walk.json: the bundled example of `make demo` (a small quadruped
walking two strides). Standard library only; rerun to regenerate (the output is committed)."""
import json, math

J = {
    "hips": [0.0, 0.25, 0.55], "chest": [0.0, -0.22, 0.58], "neck": [0.0, -0.36, 0.72],
    "head": [0.0, -0.50, 0.76], "snout": [0.0, -0.66, 0.70],
    "tail1": [0.0, 0.45, 0.56], "tail2": [0.0, 0.65, 0.50], "tail3": [0.0, 0.82, 0.40],
}
for side, sx in (("L", 1.0), ("R", -1.0)):
    J.update({
        f"shoulder_{side}": [0.09 * sx, -0.20, 0.50], f"elbow_{side}": [0.10 * sx, -0.17, 0.30],
        f"wrist_{side}": [0.10 * sx, -0.20, 0.10], f"fpaw_{side}": [0.10 * sx, -0.25, 0.0],
        f"hip_{side}": [0.08 * sx, 0.24, 0.48], f"knee_{side}": [0.09 * sx, 0.18, 0.30],
        f"hock_{side}": [0.09 * sx, 0.30, 0.12], f"hpaw_{side}": [0.09 * sx, 0.25, 0.0],
    })
B = [["spine", "hips", "chest", None], ["neck", "chest", "neck", "spine"],
     ["head", "neck", "head", "neck"], ["snout", "head", "snout", "head"],
     ["tail_a", "hips", "tail1", "spine"], ["tail_b", "tail1", "tail2", "tail_a"],
     ["tail_c", "tail2", "tail3", "tail_b"]]
for side in ("L", "R"):
    B += [[f"upperarm_{side}", f"shoulder_{side}", f"elbow_{side}", "spine"],
          [f"forearm_{side}", f"elbow_{side}", f"wrist_{side}", f"upperarm_{side}"],
          [f"fpaw_{side}", f"wrist_{side}", f"fpaw_{side}", f"forearm_{side}"],
          [f"thigh_{side}", f"hip_{side}", f"knee_{side}", "spine"],
          [f"shin_{side}", f"knee_{side}", f"hock_{side}", f"thigh_{side}"],
          [f"hpaw_{side}", f"hock_{side}", f"hpaw_{side}", f"shin_{side}"]]
limits = {"neck": [[-45, 45], [-30, 30], [-45, 45]], "head": [[-40, 40], [-20, 20], [-40, 40]],
          "forearm": [[-10, 140], [-8, 8], [-8, 8]], "shin": [[-140, 10], [-8, 8], [-8, 8]],
          "upperarm": [[-70, 70], [-15, 15], [-20, 20]], "thigh": [[-70, 70], [-15, 15], [-20, 20]]}
rig = {"name": "walker", "joints": J, "bones": B, "limits_deg": limits}

fps, T = 30, 60
bones = [b[0] for b in B]
trans, root_quat, euler = [], [], []
for t in range(T):
    ph = 2 * math.pi * t / 30.0          # one stride a second
    trans.append([0.0, 0.25 - 0.9 * t / fps, 0.55 + 0.015 * math.cos(2 * ph)])
    yaw = 0.08 * math.sin(ph / 2)
    root_quat.append([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
    e = {b: [0.0, 0.0, 0.0] for b in bones}
    e["neck"] = [0.10 * math.sin(ph), 0.0, 0.05 * math.sin(ph / 2)]
    e["head"] = [-0.08 * math.sin(ph), 0.0, 0.0]
    e["tail_a"] = [0.1, 0.0, 0.25 * math.sin(ph)]
    e["tail_b"] = [0.0, 0.0, 0.25 * math.sin(ph - 0.6)]
    e["tail_c"] = [0.0, 0.0, 0.25 * math.sin(ph - 1.2)]
    for side, off in (("L", 0.0), ("R", math.pi)):
        for limb, lag in (("upperarm", 0.0), ("thigh", math.pi / 2)):
            e[f"{limb}_{side}"] = [0.45 * math.sin(ph + off + lag), 0.0, 0.0]
        e[f"forearm_{side}"] = [0.5 * max(0.0, math.sin(ph + off + 1.2)), 0.0, 0.0]
        e[f"shin_{side}"] = [-0.5 * max(0.0, math.sin(ph + off + math.pi / 2 + 1.2)), 0.0, 0.0]
    euler.append([[round(v, 6) for v in e[b]] for b in bones])
motion = {"fps": fps, "bones": bones, "trans": [[round(v, 6) for v in p] for p in trans],
          "root_quat": [[round(v, 9) for v in q] for q in root_quat], "euler": euler}
json.dump(rig, open("rig.json", "w"), indent=1)
json.dump(motion, open("walk.json", "w"), separators=(",", ":"))
