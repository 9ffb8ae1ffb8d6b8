#!/usr/bin/env python3
"""Scores for bench/retarget.sh (numpy). Joints are motion.json "joints" (FK keypoints).

  closure A_MOTION B_MOTION A_RIG RENAME.json   worst |joint_A - joint_B| / body size (B renamed)
  rot A_MOTION B_MOTION A_RIG                   worst local (and root) rotation angle, radians
  match A_MOTION B_MOTION A_RIG                 worst joint distance / body size, joints paired by
                                                their position in frame 0 (names differ); bone
                                                heads only: a leaf's tail is the importer's guess
                                                along the node's own axes, not part of the skin
  bound A_MOTION B_MOTION A_RIG B_RIG RENAME.json
                                                "error bound segment rest": the closure error (as
                                                closure), a lower bound on it for any motion of
                                                B with rotations only (docs/retarget.md, "Frames
                                                that are not orthonormal"), the segment where it
                                                is, and the error at every joint but the far
                                                ends of segments with a bound above rounding
  baseline SRC_MOTION SRC_RIG DST_RIG K OUT     the plain copy of local rotations by bone name,
                                                root displacement times K from the target's rest
  gt OURS OWN OWN_RIG                           "per-joint % / chamfer %" of OURS against OWN
                                                (SPEC 5: % of the body size of OWN's frame 0)
Helper bones' joints are left out everywhere.
"""
import json
import os
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


# SPEC 2.2's roll-0 rest frame (columns X, Y, Z), the one the variant maker uses
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
from rig_variant import roll0  # noqa: E402


def qmat(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def ellipsoid_distance(N, u):
    """min over unit x of |N x - u| (Gauss-Newton on the sphere; N near a multiple of a rotation)."""
    x = np.linalg.solve(N, u)
    x /= np.linalg.norm(x)
    for _ in range(8):
        r = N @ x - u
        P = np.eye(3) - np.outer(x, x)
        dx = np.linalg.lstsq(N @ P, -r, rcond=None)[0]
        x = x + P @ dx
        x /= np.linalg.norm(x)
    return np.linalg.norm(N @ x - u)


def bound(a, b, arig, brig, ren):
    """SPEC 2.3's FK of B with the frames of SPEC 2.2, whatever the rotations: a bone's tail
    (or a child's head) sits at W_p R_rest (R x) from its head, for a unit x: on an ellipsoid.
    Rest frames within 6 degrees of -Y are not orthonormal, so the ellipsoid is not A's sphere
    and A's joints (A's own FK, which stretches through such frames too) can sit off it. With
    W_p the parent's exact map (B's FK of the motion), each segment's distance to its ellipsoid
    is at least the sum of its two joints' errors: half of it bounds the worst joint error of
    any motion of B with the same parent maps (for a parent chain of orthonormal frames, W_p is
    a rotation and the bound holds for every motion)."""
    bren, jren = ren["bones"], ren["joints"]
    helpers = set(arig.get("helpers", []))
    A = np.array(a["joints"])
    jiA = {n: i for i, n in enumerate(a["joint_names"])}
    Bj = np.array(b["joints"])
    jiB = {n: i for i, n in enumerate(b["joint_names"])}
    keep = body_joints(arig)
    ia = [jiA[n] for n in a["joint_names"] if n in keep]
    ib = [jiB[jren[n]] for n in a["joint_names"] if n in keep]
    size = np.linalg.norm(A[0][ia].max(0) - A[0][ia].min(0))
    err = np.linalg.norm(A[:, ia] - Bj[:, ib], axis=2).max() / size
    # B's exact world maps (SPEC 2.3, true inverses) for every frame
    J = {k: np.array(v, float) for k, v in brig["joints"].items()}
    bones = {x[0]: x for x in brig["bones"]}
    Rr = {n: roll0(J[x[1]], J[x[2]]) for n, x in bones.items()}
    idx = {n: i for i, n in enumerate(b["bones"])}
    T = len(b["trans"])
    quat = np.array(b["quat"])
    loc = np.array(b["loc"]) if "loc" in b else None
    W = {}
    order, done = [], set()
    while len(order) < len(bones):
        for n, x in bones.items():
            if n not in done and (x[3] is None or x[3] in done):
                done.add(n)
                order.append(n)
    for n in order:
        x = bones[n]
        if x[3] is None:
            W[n] = np.array([qmat(q) for q in b["root_quat"]])
        else:
            M = Rr[n] @ np.array([qmat(q) for q in quat[:, idx[n]]]) @ np.linalg.inv(Rr[n])
            W[n] = W[x[3]] @ M
    slides = {n for n in bones if loc is not None and np.abs(loc[:, idx[n]]).max() > 0}
    tails = {x[2] for x in brig["bones"]}
    inv = {v: k for k, v in bren.items()}
    jinv = {v: k for k, v in jren.items()}
    best = (0.0, "-")
    bounded = set()  # joints at the far end of a segment whose bound is above rounding
    for n, x in bones.items():
        if inv[n] in helpers or (n in slides and x[1] in tails):
            continue
        p = x[3]
        segs = [(x[2], (J[x[2]] - J[x[1]]))]
        for c in bones.values():
            if c[3] == n and inv[c[0]] not in helpers and c[0] not in slides and c[1] != x[2]:
                segs.append((c[1], None))
        for j1, d in segs:
            if d is None:  # a child's head: W_n d = W_p R_rest(n) (R R_rest(n)^-1 d)
                d = J[j1] - J[x[1]]
            # the root turns freely: a sphere; any other bone: W_p R_rest R x, |x| = |R_rest^-1 d|
            rad = np.linalg.norm(d) if p is None else np.linalg.norm(np.linalg.solve(Rr[n], d))
            if rad < 1e-12 * size:
                continue  # a child on the bone's head: nothing to stretch
            dmax = 0.0
            for t in range(T):
                N = rad * np.eye(3) if p is None else rad * W[p][t] @ Rr[n]
                u = A[t, jiA[jinv[j1]]] - A[t, jiA[jinv[x[1]]]]
                dmax = max(dmax, ellipsoid_distance(N, u))
            if dmax / 2 / size > 1e-12:
                bounded.add(jinv[j1])
            if dmax / 2 / size > best[0]:
                best = (dmax / 2 / size, "%s->%s" % (jinv[x[1]], jinv[j1]))
    # what is left once those joints are set aside: the error no bound explains
    names = [n for n in a["joint_names"] if n in keep]
    rest = [k for k, n in enumerate(names) if n not in bounded]
    left = np.linalg.norm(A[:, ia][:, rest] - Bj[:, ib][:, rest], axis=2).max() / size if rest else 0.0
    return err, best[0], best[1], left


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
    elif cmd == "bound":
        e, lb, seg, left = bound(load(args[0]), load(args[1]), load(args[2]), load(args[3]), load(args[4]))
        print("%.3g %.3g %s %.3g" % (e, lb, seg, left))
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
