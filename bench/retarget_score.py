#!/usr/bin/env python3
"""Scores for bench/retarget.sh (numpy). Joints are motion.json "joints" (FK keypoints).

  closure A_MOTION B_MOTION A_RIG RENAME.json   worst |joint_A - joint_B| / body size (B renamed)
  rot A_MOTION B_MOTION A_RIG                   worst local (and root) rotation angle, radians
  match A_MOTION B_MOTION A_RIG                 worst joint distance / body size, joints paired by
                                                their position in frame 0 (names differ); bone
                                                heads only: a leaf's tail is the importer's guess
                                                along the node's own axes, not part of the skin
  baseline SRC_MOTION SRC_RIG DST_RIG K OUT     the plain copy of local rotations by bone name,
                                                root displacement times K from the target's rest
  gt OURS OWN OWN_RIG                           "per-joint % / chamfer %" of OURS against OWN
                                                (SPEC 5: % of the body size of OWN's frame 0)
Helper bones' joints are left out everywhere.
"""
import json
import sys

import numpy as np


def load(p):
    return json.load(open(p))


def body_joints(rig):
    helpers = set(rig.get("helpers", []))
    return {j for b in rig["bones"] if b[0] not in helpers for j in b[1:3]}


def closure(a, b, rig, ren):
    A, B = np.array(a["joints"]), np.array(b["joints"])
    bi = {n: i for i, n in enumerate(b["joint_names"])}
    keep = body_joints(rig)
    pairs = [(i, bi[ren["joints"][n]]) for i, n in enumerate(a["joint_names"]) if n in keep]
    ia, ib = [p[0] for p in pairs], [p[1] for p in pairs]
    size = np.linalg.norm(A[0][ia].max(0) - A[0][ia].min(0))
    return np.linalg.norm(A[:, ia] - B[:, ib], axis=2).max() / size


def qangle(p, q):
    """Angle of p^-1 q, from its vector part and w (arccos of a dot product cannot resolve
    angles under 1e-8)."""
    p = p / np.linalg.norm(p, axis=-1, keepdims=True)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w = np.sum(p * q, axis=-1)
    v = p[..., :1] * q[..., 1:] - q[..., :1] * p[..., 1:] - np.cross(p[..., 1:], q[..., 1:])
    return 2 * np.arctan2(np.linalg.norm(v, axis=-1), np.abs(w))


def rot(a, b, rig):
    helpers = set(rig.get("helpers", []))
    keep = [i for i, n in enumerate(a["bones"]) if i > 0 and n not in helpers]
    qa, qb = np.array(a["quat"])[:, keep], np.array(b["quat"])[:, keep]
    ra, rb = np.array(a["root_quat"]), np.array(b["root_quat"])
    return max(qangle(qa, qb).max(), qangle(ra, rb).max())


def match(a, b, rig):
    A, B = np.array(a["joints"]), np.array(b["joints"])
    helpers = set(rig.get("helpers", []))
    heads = {bone[1] for bone in rig["bones"] if bone[0] not in helpers}
    keep = [i for i, n in enumerate(a["joint_names"]) if n in heads]
    m = np.linalg.norm(A[0][keep][:, None] - B[0][None], axis=2).argmin(1)
    size = np.linalg.norm(A[0][keep].max(0) - A[0][keep].min(0))
    return np.abs(A[:, keep] - B[:, m]).max() / size


def baseline(sm, sr, dr, k):
    T = len(sm["trans"])
    dbones = [b[0] for b in dr["bones"]]
    sidx = {b: i for i, b in enumerate(sm["bones"])}
    q = np.zeros((T, len(dbones), 4))
    q[..., 0] = 1
    sq = np.array(sm["quat"])
    for j, b in enumerate(dbones):
        if b in sidx:
            q[:, j] = sq[:, sidx[b]]
    sroot = [b for b in sr["bones"] if b[3] is None][0]
    droot = [b for b in dr["bones"] if b[3] is None][0]
    S0, T0 = np.array(sr["joints"][sroot[1]]), np.array(dr["joints"][droot[1]])
    trans = T0 + k * (np.array(sm["trans"]) - S0)
    return {"fps": sm["fps"], "bones": dbones, "trans": trans.tolist(), "root_quat": sm["root_quat"], "quat": q.tolist()}


def gt(ours, own, rig):
    keep = body_joints(rig)
    names = own["joint_names"]
    idx = {n: i for i, n in enumerate(ours["joint_names"])}
    jo = [i for i, n in enumerate(names) if n in keep and n in idx]
    ju = [idx[names[i]] for i in jo]
    A, B = np.array(ours["joints"])[:, ju], np.array(own["joints"])[:, jo]
    T = min(len(A), len(B))
    A, B = A[:T], B[:T]
    size = np.linalg.norm(B[0].max(0) - B[0].min(0))
    per = np.linalg.norm(A - B, axis=2).mean() / size
    d = np.linalg.norm(A[:, :, None] - B[:, None], axis=3)
    chamfer = (0.5 * (d.min(1).mean(1) + d.min(2).mean(1))).mean() / size
    return "%.2f / %.2f" % (100 * per, 100 * chamfer)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "closure":
        print("%.3g" % closure(load(args[0]), load(args[1]), load(args[2]), load(args[3])))
    elif cmd == "rot":
        print("%.3g" % rot(load(args[0]), load(args[1]), load(args[2])))
    elif cmd == "match":
        print("%.3g" % match(load(args[0]), load(args[1]), load(args[2])))
    elif cmd == "baseline":
        json.dump(baseline(load(args[0]), load(args[1]), load(args[2]), float(args[3])), open(args[4], "w"))
    elif cmd == "gt":
        print(gt(load(args[0]), load(args[1]), load(args[2])))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
