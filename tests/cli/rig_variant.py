#!/usr/bin/env python3
"""A variant B of a rig A for the SPEC 5 retarget closure: the same bones and lengths, every bone
and joint renamed, and the bind pose changed: the limbs (bones off the midline hanging from one
on it, and the next bone down each) turned by 20-45 degrees about random axes. B's joints are
A's forward kinematics in that pose (`anymove fk`), so nothing but the bind pose changes.

usage: rig_variant.py ANYMOVE A/rig.json B/rig.json [--seed N] [--prefix P]
Writes B/rig.json and B/rename.json ({"bones": {a: b}, "joints": {a: b}}).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def roll0(head, tail):
    """SPEC 2.2: the roll-0 rest frame of a bone (columns X, Y, Z)."""
    n = (tail - head) / np.linalg.norm(tail - head)
    x, y, z = n
    theta = 1 + y
    if theta > 6.1e-3 or x * x + z * z > 6.25e-8:
        if theta <= 6.1e-3:
            t = x * x + z * z
            theta = t / 2 + t * t / 8
        X = [1 - x * x / theta, -x, -x * z / theta]
        Z = [-x * z / theta, -z, 1 - z * z / theta]
        return np.array([X, [x, y, z], Z]).T
    return np.array([[-1, 0, 0], [0, -1, 0], [0, 0, 1]]).T


def euler_xyz(e):
    cx, sx, cy, sy, cz, sz = np.cos(e[0]), np.sin(e[0]), np.cos(e[1]), np.sin(e[1]), np.cos(e[2]), np.sin(e[2])
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def order(bones):
    """Parents first."""
    done, out = set(), []
    while len(out) < len(bones):
        for b in bones:
            if b[0] not in done and (b[3] is None or b[3] in done):
                done.add(b[0])
                out.append(b)
    return out


def main():
    anymove, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    prefix = sys.argv[sys.argv.index("--prefix") + 1] if "--prefix" in sys.argv else "v"
    rng = np.random.default_rng(seed)
    rig = json.load(open(src))
    joints = {k: np.array(v) for k, v in rig["joints"].items()}
    bones = rig["bones"]
    helpers = set(rig.get("helpers", []))
    size = np.linalg.norm(np.max(list(joints.values()), 0) - np.min(list(joints.values()), 0))
    by_name = {b[0]: b for b in bones}
    root = [b for b in bones if b[3] is None][0]
    x0 = joints[root[1]][0]
    side = lambda b: abs(joints[b[1]][0] - x0) > 0.01 * size
    children = {}
    for b in bones:
        if b[3]:
            children.setdefault(b[3], []).append(b[0])

    def subtree_joints(top):
        """The heads and tails of bone `top` and every bone below it."""
        stack, out = [top], set()
        while stack:
            x = stack.pop()
            out.update(by_name[x][1:3])
            stack.extend(children.get(x, []))
        return out

    # limb roots: off the midline, hanging from a bone on it; and the next bone down each
    turned = set()
    for b in bones:
        if b[3] is None or b[0] in helpers or not side(b) or side(by_name[b[3]]):
            continue
        turned.add(b[0])
        kids = [c for c in children.get(b[0], []) if c not in helpers]
        if len(kids) == 1:
            turned.add(kids[0])
    euler = {}
    for name in sorted(turned):  # sorted: a set's order changes with the hash seed
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        euler[name] = (axis * np.radians(rng.uniform(20, 45))).tolist()  # small: XYZ ~ rotation vector
    names = [b[0] for b in bones]
    pose = {"fps": 30, "bones": names, "trans": [joints[root[1]].tolist()], "root_quat": [[1, 0, 0, 0]],
            "euler": [[euler.get(n, [0, 0, 0]) for n in names]]}
    with tempfile.TemporaryDirectory() as tmp:
        pf = os.path.join(tmp, "pose.json")
        json.dump(pose, open(pf, "w"))
        out = subprocess.run([anymove, "fk", src, "--motion", pf, "-q"], check=True, capture_output=True, text=True)
    fk = json.loads(out.stdout)
    posed = {k: np.array(v) for k, v in zip(fk["joint_names"], fk["joints"][0])}
    # A foot parented to the body but sitting on a leg's end (IK-driven) moves with that leg:
    # the bind pose of such a rig keeps its feet where its legs put them. Each bone's world
    # delta G_b = G_parent R_rest(b) R(e_b) R_rest(b)^-1 (SPEC 2.2 frames, 2.3 FK) carries the
    # foot's joints rigidly with its leg.
    G = {}
    for b in order(bones):
        g = G[b[3]] if b[3] else np.eye(3)
        Rr = roll0(joints[b[1]], joints[b[2]])
        G[b[0]] = g @ Rr @ euler_xyz(euler.get(b[0], [0, 0, 0])) @ np.linalg.inv(Rr)
    leaves = [b for b in bones if not children.get(b[0])]
    for f in bones:
        if f[3] is None or f[0] in helpers:
            continue
        p = by_name[f[3]]
        h = joints[f[1]]
        length = lambda b: np.linalg.norm(joints[b[2]] - joints[b[1]])
        if np.linalg.norm(h - joints[p[2]]) < 0.05 * length(p) or np.linalg.norm(h - joints[p[1]]) < 0.05 * length(p):
            continue
        for c in leaves:
            if c[0] in (f[0], p[0]) or c[0] in helpers or np.linalg.norm(h - joints[c[2]]) >= 0.06 * length(c):
                continue
            # the foot rides on the leg, turned by its own turn relative to its parent
            head = posed[c[1]] + G[c[0]] @ (joints[f[1]] - joints[c[1]])
            moved = subtree_joints(f[0])
            carry = G[c[0]] @ np.linalg.inv(G[f[3]])
            old = {j: posed[j] for j in moved}
            for j in moved:
                # joints below the foot follow their own bones' turns as the FK gave them,
                # carried by the foot's change of parent
                posed[j] = head + carry @ (old[j] - old[f[1]])
            break
    # SPEC 5's B keeps A's lengths. A bone turned through a frame near -Y (SPEC 2.2, orthonormal
    # to 3e-5) comes out of the FK a little longer or shorter: the Knight's feet by 1e-8 m, which
    # the default --root scale read as a leg ratio of 1 + 3e-9 (every joint 1.4e-9 of the body
    # size off). Each tail goes back to A's length along the posed direction, the bones below
    # it moved with it.
    for b in order(bones):
        h, t = posed[b[1]], posed[b[2]]
        d = t - h
        fix = h + d / np.linalg.norm(d) * np.linalg.norm(joints[b[2]] - joints[b[1]]) - t
        if not fix.any():
            continue
        for j in subtree_joints(b[0]) - {b[1]}:
            posed[j] = posed[j] + fix
    posed = {k: v.tolist() for k, v in posed.items()}
    jren = {j: "%sj%03d" % (prefix, i) for i, j in enumerate(rig["joints"])}
    # end sites keep a name that says so (an end site is never mapped, on either rig)
    end = lambda n: n.lower().endswith(("end", "nub", "tip"))
    bren = {b[0]: "%sb%03d%s" % (prefix, i, "_end" if end(b[0]) else "") for i, b in enumerate(bones)}
    new = dict(rig)
    new["joints"] = {jren[j]: posed[j] for j in rig["joints"]}
    new["bones"] = [[bren[b[0]], jren[b[1]], jren[b[2]], bren[b[3]] if b[3] else None] + b[4:] for b in bones]
    if "helpers" in rig:
        new["helpers"] = [bren[h] for h in rig["helpers"]]
    if "limits_deg" in rig:
        new["limits_deg"] = {bren.get(k, k): v for k, v in rig["limits_deg"].items() if k in bren}
    new.pop("model", None)
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    json.dump(new, open(dst, "w"), indent=1)
    json.dump({"bones": bren, "joints": jren, "turned": sorted(turned)},
              open(os.path.join(os.path.dirname(os.path.abspath(dst)), "rename.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
