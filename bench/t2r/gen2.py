#!/usr/bin/python3
"""A second synthetic Track2Rig generator, independent of `anymove synth` (issue 10, item 3).

  gen2.py --plan PLAN --gait GAIT --seed S -o DIR [--points 1500] [--frames 150] [--fps 30]
          [--noise X] [--hidden H] [--occlusion view|ground|limb|gaps|mixed]
  gen2.py --list

Writes DIR/tracks.npz (SPEC 4.1: points [T,N,3] with hidden entries NaN, visible, fps) and
DIR/truth.npz (points: clean [T,N,3]; joints [T,J,3] = bone heads and leaf tails; parents [J];
bones; fps; body_size; visible), the fields `anymove score rig` and the anchor's score.py read.

Different from `synth` on purpose, so that nothing tuned on one carries over for free:
- body plans synth does not have: a long-necked ungulate, a hopping macropod with a heavy tail,
  a radial octopod, a myriapod (a leg pair on every body segment), a laterally flattened fish,
  a flyer with flat wing segments; proportions jittered per seed (neck, legs, tail, segment
  counts, arm counts, girth);
- tapered, elliptical-section segments with end caps, surface points only (points inside
  another segment are dropped), sampled by area;
- skin weights by an inverse power of the normalised distance to each segment (power 3-6 per
  clip; top 4), not a Gaussian falloff;
- a corrective bulge: every point moves along its normal by a * r * (1 - cos theta) of the
  rotation of the bones it follows, so the clip is NOT exact linear blend skinning (a real
  mesh animation is not either);
- gaits: pace / gallop / graze, hop / idle, crawl / pulse, wave / turn, swim / c-start, flap /
  glide; forward travel, heading drift, bobbing;
- occlusion patterns of a single-view tracker: back-facing points from one camera (`view`),
  points near the ground (`ground`), a spatial blob lost for a long stretch (`limb`), tracks
  lost and re-acquired after 10-40 frames (`gaps`), or all four (`mixed`); noise is white
  Gaussian plus a slow per-track drift. Every track stays visible in at least 5 frames.
Defaults per seed: noise 0.1-0.5 % of body size, hidden 8-30 %, occlusion from the seed.
"""
import argparse
import os
import sys

import numpy as np

PLANS = {"ungulate": ("pace", "gallop", "graze"), "hopper": ("hop", "idle"), "octopod": ("crawl", "pulse"),
         "myriapod": ("wave", "turn"), "fish": ("swim", "cstart"), "flyer": ("flap", "glide")}


def rot(axis, ang):
    """Rotation matrices [T,3,3] about a unit axis by angles [T]."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    ang = np.asarray(ang, float)[..., None, None]
    return np.eye(3) + np.sin(ang) * K + (1 - np.cos(ang)) * (K @ K)


class Body:
    def __init__(self):
        self.bones = []          # dict(name, parent, head, tail, r0, r1, flat, up)

    def add(self, name, parent, head, tail, r0, r1, flat=1.0, up=(0, 0, 1)):
        self.bones.append(dict(name=name, parent=parent, head=np.array(head, float), tail=np.array(tail, float),
                               r0=r0, r1=r1, flat=flat, up=np.array(up, float)))
        return len(self.bones) - 1

    def chain(self, name, parent, start, dirs, lens, radii, flat=1.0, up=(0, 0, 1)):
        ids, p, h = [], parent, np.array(start, float)
        for k, (d, l) in enumerate(zip(dirs, lens)):
            d = np.array(d, float) / np.linalg.norm(d)
            t = h + l * d
            p = self.add("%s%d" % (name, k), p, h, t, radii[k], radii[k + 1], flat, up)
            ids.append(p)
            h = t
        return ids


def j(rng, x, f=0.15):
    """x jittered by a factor in [1 - f, 1 + f]."""
    return x * (1 + f * (2 * rng.random() - 1))


def build(plan, rng):
    b = Body()
    g = {}     # named groups of bone ids for the gaits
    if plan == "ungulate":
        lt, h, ln = j(rng, 1.0), j(rng, 1.1, 0.25), j(rng, 1.2, 0.35)
        r = j(rng, 0.16)
        sp = b.chain("spine", -1, (0, 0.5 * lt, h), [(0, -1, 0.05)] * 3, [lt / 3] * 3, [r, r * 1.1, r * 1.15, r * 1.1])
        chest = b.bones[sp[-1]]["tail"]
        nk = b.chain("neck", sp[-1], chest, [(0, -0.5, 1)] * 4, [ln / 4] * 4, [r * 0.7, r * 0.5, r * 0.4, r * 0.35, r * 0.3])
        hd = b.chain("head", nk[-1], b.bones[nk[-1]]["tail"], [(0, -1, -0.3)], [j(rng, 0.35)], [r * 0.35, r * 0.2])
        tl = b.chain("tail", sp[0], (0, 0.5 * lt, h), [(0, 1, -0.6), (0, 0.6, -1)], [j(rng, 0.3)] * 2, [r * 0.25, r * 0.15, r * 0.08])
        legs = {}
        for side, x in (("L", 1), ("R", -1)):
            for end, y, par in (("F", -0.45 * lt, sp[-1]), ("H", 0.45 * lt, sp[0])):
                legs[end + side] = b.chain("leg" + end + side, par, (x * 0.6 * r, y, h - 0.3 * r),
                                           [(0, 0, -1), (0, 0.05, -1), (0, -0.5, -1)],
                                           [0.45 * h, 0.42 * h, 0.1 * h], [r * 0.45, r * 0.3, r * 0.2, r * 0.15])
        g.update(spine=sp, neck=nk, head=hd, tail=tl, legs=legs)
    elif plan == "hopper":
        h, r = j(rng, 0.55, 0.25), j(rng, 0.14)
        pel = b.add("pelvis", -1, (0, 0.1, h), (0, -0.05, h + 0.25), r, r * 1.1)
        sp = b.chain("spine", pel, (0, -0.05, h + 0.25), [(0, -0.3, 1)] * 2, [j(rng, 0.2)] * 2, [r * 1.1, r * 0.9, r * 0.7])
        nk = b.chain("neck", sp[-1], b.bones[sp[-1]]["tail"], [(0, -0.4, 1)], [j(rng, 0.15)], [r * 0.45, r * 0.35])
        hd = b.chain("head", nk[-1], b.bones[nk[-1]]["tail"], [(0, -1, 0.1)], [j(rng, 0.18)], [r * 0.45, r * 0.2])
        tl = b.chain("tail", pel, (0, 0.15, h - 0.05), [(0, 1, -0.4), (0, 1, -0.5), (0, 1, -0.3)],
                     [j(rng, 0.3, 0.3)] * 3, [r * 0.6, r * 0.45, r * 0.3, r * 0.15])
        legs, arms = {}, {}
        for side, x in (("L", 1), ("R", -1)):
            legs[side] = b.chain("leg" + side, pel, (x * 0.7 * r, 0.05, h - 0.05),
                                 [(0, -0.5, -1), (0, 0.7, -1), (0, -1, -0.05)],
                                 [0.45 * h, 0.5 * h, 0.45 * h], [r * 0.55, r * 0.35, r * 0.2, r * 0.12])
            arms[side] = b.chain("arm" + side, sp[-1], (x * 0.6 * r, -0.15, h + 0.55),
                                 [(0.2 * x, -0.5, -1), (0, -0.6, -1)], [0.12, 0.12], [r * 0.2, r * 0.14, r * 0.1])
        g.update(spine=[pel] + sp, neck=nk, head=hd, tail=tl, legs=legs, arms=arms)
    elif plan == "octopod":
        n = int(rng.choice([5, 6, 8]))
        R, h, r = j(rng, 0.5, 0.3), j(rng, 0.15), j(rng, 0.12)
        m = b.add("mantle", -1, (0, 0, h), (0, 0.1 * R, h + 0.5 * R), 1.6 * r, 1.2 * r)
        arms = []
        for i in range(n):
            a = 2 * np.pi * i / n + 0.3 * rng.random()
            d = np.array([np.cos(a), np.sin(a), 0])
            arms.append(b.chain("arm%d_" % i, m, (0, 0, h) + 0.8 * r * d, [d + (0, 0, -0.3), d, d + (0, 0, 0.1)],
                                [R / 3] * 3, [r * 0.6, r * 0.4, r * 0.25, r * 0.1]))
        g.update(root=[m], arms=arms)
    elif plan == "myriapod":
        ns = int(rng.choice([5, 6, 7]))
        ls, r = j(rng, 0.06), j(rng, 0.025)
        h = 2.2 * r
        seg = b.chain("seg", -1, (0, -0.5 * ns * ls, h), [(0, 1, 0)] * ns, [ls] * ns, [r * 1.2] + [r] * (ns - 1) + [r * 0.6],
                      flat=0.6)
        legs = []
        for k, s in enumerate(seg):
            c = 0.5 * (b.bones[s]["head"] + b.bones[s]["tail"])
            pair = []
            for x in (1, -1):
                pair.append(b.chain("leg%d%s" % (k, "L" if x > 0 else "R"), s, c + (x * 0.8 * r, 0, 0),
                                    [(x, 0, 0.5), (x * 0.4, 0, -1)], [j(rng, 2.0 * r), j(rng, 2.6 * r)],
                                    [r * 0.35, r * 0.25, r * 0.12]))
            legs.append(pair)
        g.update(segs=seg, legs=legs)
    elif plan == "fish":
        L, r = j(rng, 0.6, 0.3), j(rng, 0.07)
        prof = [0.5, 0.9, 1.0, 0.8, 0.5, 0.25]
        sp = b.chain("spine", -1, (0, -0.45 * L, 0.4), [(0, 1, 0)] * 5, [0.15 * L] * 5, [r * p for p in prof], flat=0.45)
        fin = b.chain("caudal", sp[-1], b.bones[sp[-1]]["tail"], [(0, 1, 0.1)], [0.18 * L], [r * 0.25, r * 0.05], flat=4.0)
        pec = {}
        for side, x in (("L", 1), ("R", -1)):
            pec[side] = b.chain("pec" + side, sp[1], (x * 0.4 * r, -0.2 * L, 0.4 - 0.5 * r), [(x, 0.5, -0.2)], [0.12 * L],
                                [r * 0.3, r * 0.1], flat=0.3)
        g.update(spine=sp, fin=fin, pec=pec)
    elif plan == "flyer":
        r, span = j(rng, 0.05), j(rng, 0.45, 0.25)
        h = 0.6
        tor = b.chain("torso", -1, (0, 0.08, h), [(0, -1, 0.05)] * 2, [0.07, 0.07], [r * 0.9, r, r * 0.8])
        hd = b.chain("head", tor[-1], b.bones[tor[-1]]["tail"], [(0, -1, 0.1)], [0.05], [r * 0.6, r * 0.3])
        wings, legs = {}, {}
        for side, x in (("L", 1), ("R", -1)):
            wings[side] = b.chain("wing" + side, tor[-1], (x * 0.7 * r, -0.02, h), [(x, 0.1, 0), (x, 0.2, 0), (x, 0.4, 0)],
                                  [0.3 * span, 0.35 * span, 0.35 * span], [r * 0.5, r * 0.4, r * 0.3, r * 0.1],
                                  flat=0.15, up=(0, 1, 0))
            legs[side] = b.chain("leg" + side, tor[0], (x * 0.5 * r, 0.08, h - 0.3 * r), [(0.2 * x, 1, -0.5), (0, 1, -0.2)],
                                 [0.05, 0.05], [r * 0.25, r * 0.15, r * 0.08])
        g.update(torso=tor, head=hd, wings=wings, legs=legs)
    else:
        raise SystemExit("gen2: unknown plan %r (--list)" % plan)
    return b, g


def frame(bone):
    """Unit axis d and two section axes u, v of a bone (u along its 'up' hint)."""
    d = bone["tail"] - bone["head"]
    L = np.linalg.norm(d)
    d = d / L
    u = bone["up"] - np.dot(bone["up"], d) * d
    if np.linalg.norm(u) < 1e-6:
        u = np.cross(d, [1, 0, 0])
    u /= np.linalg.norm(u)
    return d, u, np.cross(d, u), L


def surface(b, n, rng):
    """Surface points [n,3], normals [n,3] and owning bone [n]."""
    P, Nm, own, area = [], [], [], []
    for bone in b.bones:
        d, u, v, L = frame(bone)
        area.append(L * (bone["r0"] + bone["r1"]) * (1 + bone["flat"]))
    area = np.array(area) / sum(area)
    want = np.maximum(8, np.round(area * n * 2.2)).astype(int)
    for k, bone in enumerate(b.bones):
        d, u, v, L = frame(bone)
        m = want[k]
        cap = 0.6 * max(bone["r0"], bone["r1"]) / L
        s = rng.uniform(-cap, 1 + cap, m)
        c = np.clip(s, 0, 1)
        rr = bone["r0"] + (bone["r1"] - bone["r0"]) * c
        e = np.where(s < 0, -s, np.where(s > 1, s - 1, 0)) / max(cap, 1e-9)
        rr = rr * np.sqrt(np.clip(1 - e ** 2, 0, 1))
        ph = rng.uniform(0, 2 * np.pi, m)
        ra, rb = rr, rr * bone["flat"]
        off = np.cos(ph)[:, None] * ra[:, None] * v + np.sin(ph)[:, None] * rb[:, None] * u
        p = bone["head"] + (s * L)[:, None] * d + off
        nrm = np.cos(ph)[:, None] * v / np.maximum(ra, 1e-9)[:, None] + np.sin(ph)[:, None] * u / np.maximum(rb, 1e-9)[:, None]
        nrm += (e * np.sign(s - 0.5))[:, None] * d / max(cap * L, 1e-9)
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        P.append(p)
        Nm.append(nrm)
        own.append(np.full(m, k))
    P, Nm, own = np.concatenate(P), np.concatenate(Nm), np.concatenate(own)
    inside = np.zeros(len(P), bool)
    for k in range(len(b.bones)):
        q = normdist(b.bones[k], P)
        inside |= (q < 0.97) & (own != k)
    keep = np.flatnonzero(~inside)
    keep = np.sort(rng.choice(keep, min(n, len(keep)), replace=False))
    return P[keep], Nm[keep], own[keep]


def normdist(bone, P):
    """Distance to the bone's axis segment over its (elliptical) radius there: < 1 = inside."""
    d, u, v, L = frame(bone)
    x = P - bone["head"]
    s = np.clip(x @ d / L, 0, 1)
    rad = x - (s * L)[:, None] * d
    rr = bone["r0"] + (bone["r1"] - bone["r0"]) * s
    a, c = rad @ v / rr, rad @ u / (rr * bone["flat"])
    axial = (x @ d / L - s) * L / rr
    return np.sqrt(a ** 2 + c ** 2 + axial ** 2)


def weights(b, P, rng):
    pw = rng.uniform(3, 6)
    Q = np.stack([normdist(bone, P) for bone in b.bones], 1)          # [N,B]
    W = 1.0 / (np.maximum(Q - 0.5, 0) + 0.1) ** pw
    idx = np.argsort(-W, 1)[:, :4]
    w = np.take_along_axis(W, idx, 1)
    w /= w.sum(1, keepdims=True)
    w[w < 0.01] = 0
    w /= w.sum(1, keepdims=True)
    return idx, w, pw


def motion(plan, gait, g, B, T, fps, rng, size):
    """Local rotations about each head in rest-world axes: list of (bone, axis, angles[T]);
    root translation [T,3]."""
    t = np.arange(T) / fps
    f = j(rng, {"graze": 0.25, "idle": 0.3, "glide": 0.4, "turn": 0.8, "cstart": 0.7, "pulse": 0.8}.get(gait, 1.2), 0.2)
    ph = 2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)
    A = j(rng, 1.0, 0.25)
    X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    rots = []
    speed = 0.0
    bob = np.zeros(T)
    add = lambda bone, ax, ang: rots.append((bone, ax, ang))     # noqa: E731
    if plan == "ungulate":
        if gait in ("pace", "gallop"):
            off = {"FL": 0, "HL": 0, "FR": 0.5, "HR": 0.5} if gait == "pace" else {"FL": 0, "FR": 0.1, "HR": 0.55, "HL": 0.65}
            for k, ids in g["legs"].items():
                p = ph + 2 * np.pi * off[k]
                add(ids[0], X, A * 0.45 * np.sin(p))
                add(ids[1], X, -A * 0.6 * np.maximum(0, np.sin(p + 0.8)))
                add(ids[2], X, A * 0.4 * np.sin(p + 1.5))
            for i, s in enumerate(g["spine"]):
                add(s, X, A * (0.12 if gait == "gallop" else 0.03) * np.sin(ph + i))
                add(s, Y, A * 0.04 * np.sin(ph))
            for i, n in enumerate(g["neck"]):
                add(n, X, A * 0.08 * np.sin(2 * ph + 0.5 * i))
            speed = (1.6 if gait == "pace" else 3.5) * size
            bob = 0.02 * size * np.sin(2 * ph)
        else:
            slow = 0.5 - 0.5 * np.cos(ph)
            for i, n in enumerate(g["neck"]):
                add(n, X, A * 0.35 * slow)
                add(n, Z, A * 0.2 * np.sin(0.7 * ph + i))
            add(g["head"][0], X, A * 0.4 * slow)
            for k, ids in g["legs"].items():
                add(ids[0], X, 0.05 * np.sin(0.5 * ph + len(k)))
        for i, s in enumerate(g["tail"]):
            add(s, Z, A * 0.5 * np.sin(1.7 * ph + i))
    elif plan == "hopper":
        if gait == "hop":
            for k, ids in g["legs"].items():
                c = np.sin(ph)
                add(ids[0], X, A * 0.6 * c)
                add(ids[1], X, -A * 0.8 * c)
                add(ids[2], X, A * 0.5 * c)
            for i, s in enumerate(g["tail"]):
                add(s, X, -A * 0.25 * np.sin(ph - 0.6 * i))
            add(g["spine"][0], X, A * 0.2 * np.sin(ph + 0.4))
            bob = 0.25 * size * np.abs(np.sin(0.5 * ph))
            speed = 2.5 * size
        else:
            add(g["spine"][1], X, A * 0.05 * np.sin(ph))
            add(g["head"][0], Z, A * 0.6 * np.sin(0.6 * ph))
            add(g["neck"][0], X, A * 0.2 * np.sin(0.4 * ph))
            for i, s in enumerate(g["tail"]):
                add(s, Z, A * 0.2 * np.sin(0.5 * ph + i))
        for k, ids in g["arms"].items():
            add(ids[0], X, A * 0.4 * np.sin(1.3 * ph + (k == "L")))
            add(ids[1], X, A * 0.3 * np.sin(1.3 * ph + 1))
    elif plan == "octopod":
        n = len(g["arms"])
        for i, ids in enumerate(g["arms"]):
            d = b_dir = None  # noqa: F841
            for k, s in enumerate(ids):
                if gait == "crawl":
                    p = ph + 2 * np.pi * i / n - 0.9 * k
                    add(s, Z, A * 0.35 * np.sin(p))
                    add(s, "lift", A * 0.3 * np.maximum(0, np.sin(p + 1)))
                else:
                    add(s, "lift", A * (0.25 + 0.15 * k) * (0.5 - 0.5 * np.cos(ph - 0.5 * k)))
        add(g["root"][0], Z, 0.3 * np.sin(0.3 * ph))
        if gait == "crawl":
            speed = 0.3 * size
        else:
            bob = 0.3 * size * (ph - np.sin(ph)) / (2 * np.pi) * 0.3
    elif plan == "myriapod":
        ns = len(g["segs"])
        for k, s in enumerate(g["segs"]):
            if gait == "wave":
                add(s, Z, A * 0.15 * np.sin(ph - 0.8 * k))
            else:
                add(s, Z, A * 0.12 * (0.5 + 0.5 * np.sin(0.3 * ph)) + 0.06 * np.sin(ph - 0.8 * k))
            for side, ids in enumerate(g["legs"][k]):
                p = ph - 1.1 * k + np.pi * side
                add(ids[0], Z, A * 0.45 * np.sin(p))
                add(ids[0], "lift", A * 0.35 * np.maximum(0, np.cos(p)))
                add(ids[1], "lift", -A * 0.25 * np.maximum(0, np.cos(p)))
        speed = (3.0 if gait == "wave" else 1.5) * size / ns * 2
    elif plan == "fish":
        for k, s in enumerate(g["spine"]):
            if gait == "swim":
                add(s, Z, A * (0.04 + 0.06 * k) * np.sin(ph - 1.0 * k))
            else:
                add(s, Z, A * 0.3 * np.exp(-((t - 0.3 * t[-1]) / 0.25) ** 2) * (1 if k else 0.5) * np.sign(k - 0.5))
        add(g["fin"][0], Z, A * 0.35 * np.sin(ph - 5.5))
        for k, ids in g["pec"].items():
            add(ids[0], Y, A * 0.5 * np.sin(1.5 * ph + (k == "L") * np.pi))
        speed = 1.2 * size if gait == "swim" else 0.4 * size
    elif plan == "flyer":
        flap = gait == "flap"
        for k, ids in g["wings"].items():
            sgn = 1 if k == "L" else -1
            for i, s in enumerate(ids):
                amp = (0.7, 0.35, 0.25)[i] if flap else (0.08, 0.05, 0.05)[i]
                add(s, Y, -sgn * A * amp * np.sin(ph - 0.5 * i))
                if flap:
                    add(s, Z, sgn * A * 0.15 * np.sin(ph - 0.5 * i + 1.5))
        for k, ids in g["legs"].items():
            add(ids[0], X, 0.2 * np.sin(0.5 * ph))
        add(g["head"][0], X, 0.2 * np.sin(0.3 * ph))
        add(g["torso"][0], X, 0.1 * np.sin(ph + (2 if flap else 0)))
        bob = (0.08 if flap else 0.02) * size * np.sin(ph + np.pi)
        speed = 2.0 * size
    heading = 0.3 * np.sin(2 * np.pi * t / max(t[-1], 1e-9) * rng.uniform(0.3, 1.0) + rng.uniform(0, 6))
    if plan == "myriapod" and gait == "turn":
        heading = 0.8 * t / max(t[-1], 1e-9)
    fwd = np.stack([np.sin(heading), -np.cos(heading), 0 * heading], 1)
    dist = np.cumsum(np.r_[0, np.full(T - 1, speed / fps)])
    trans = fwd * 0
    trans[1:] = np.cumsum(fwd[1:] * (speed / fps), 0)
    trans[:, 2] += bob - bob[0]
    return rots, trans, heading, dist


def fk(b, rots, trans, heading, T):
    """World 3x4 transforms of every bone [T,B,3,4] (rotations about each rest head)."""
    B = len(b.bones)
    local = np.tile(np.eye(3), (T, B, 1, 1))
    for bone, ax, ang in rots:
        if isinstance(ax, str):        # 'lift': about the horizontal axis normal to the bone
            d = b.bones[bone]["tail"] - b.bones[bone]["head"]
            ax = np.cross(d, (0, 0, 1))
            if np.linalg.norm(ax) < 1e-9:
                ax = np.array([1.0, 0, 0])
            ax = -ax / np.linalg.norm(ax)
        local[:, bone] = rot(ax, ang) @ local[:, bone]
    G = np.zeros((T, B, 3, 4))
    for k, bone in enumerate(b.bones):
        h = bone["head"]
        R = local[:, k]
        tl = h - R @ h
        if bone["parent"] < 0:
            Rh = rot((0, 0, 1), heading)
            R = Rh @ R
            tl = np.einsum("tij,tj->ti", Rh, tl) + (h - Rh @ h) + trans
        else:
            P = G[:, bone["parent"]]
            tl = np.einsum("tij,tj->ti", P[:, :, :3], tl) + P[:, :, 3]
            R = P[:, :, :3] @ R
        G[:, k, :, :3] = R
        G[:, k, :, 3] = tl
    return G, local


def degrade(X, normals, rng, noise, hidden, pattern, faces=None):
    """Noisy tracks and a visibility mask [T,N] with about `hidden` of the entries hidden."""
    T, N, _ = X.shape
    s = np.linalg.norm(X[0].max(0) - X[0].min(0))
    vis = np.ones((T, N), bool)
    if hidden > 0:
        pats = ["view", "ground", "limb", "gaps"] if pattern == "mixed" else [pattern]
        share = hidden / len(pats)
        for p in pats:
            vis &= ~occlude(p, X, normals, faces, share, rng)
        # a tracker reports no track it never saw: every track visible in >= 5 frames
        for n in np.flatnonzero(vis.sum(0) < 5):
            a = int(rng.integers(0, T - 5))
            vis[a:a + 5, n] = True
    Pn = X + rng.normal(0, noise * s, X.shape)
    if noise > 0:
        drift = np.cumsum(rng.normal(0, 1, (T, N, 3)), 0)
        drift -= drift.mean(0)
        drift /= max(np.abs(drift).max(), 1e-12)
        Pn += 0.5 * noise * s * drift
    return Pn, vis


def vertex_normals(X, faces):
    T, N, _ = X.shape
    nrm = np.zeros_like(X)
    a, b, c = X[:, faces[:, 0]], X[:, faces[:, 1]], X[:, faces[:, 2]]
    fn = np.cross(b - a, c - a)
    for k in range(3):
        np.add.at(nrm, (slice(None), faces[:, k]), fn)
    return nrm / np.maximum(np.linalg.norm(nrm, axis=2, keepdims=True), 1e-12)


def occlude(p, X, normals, faces, share, rng):
    T, N, _ = X.shape
    hid = np.zeros((T, N), bool)
    if p == "view":
        if normals is None:
            normals = vertex_normals(X, faces)
        az, el = rng.uniform(0, 2 * np.pi), rng.uniform(0.15, 0.6)
        cam = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        sc = normals @ cam
        hid = sc < np.quantile(sc, share)
    elif p == "ground":
        z = X[..., 2] - X[..., 2].min(1, keepdims=True)
        hid = z < np.quantile(z, share)
    elif p == "limb":
        dur = int(T * rng.uniform(0.4, 0.7))
        a = int(rng.integers(0, T - dur + 1))
        m = min(N, int(share * T * N / dur))
        c = X[0, rng.integers(N)]
        blob = np.argsort(np.linalg.norm(X[0] - c, axis=1))[:m]
        hid[a:a + dur, blob] = True
    elif p == "gaps":
        target = share * T * N
        while hid.sum() < target:
            n = int(rng.integers(N))
            ln = int(rng.integers(10, 41))
            a = int(rng.integers(0, max(1, T - ln)))
            hid[a:a + ln, n] = True
    return hid


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan")
    ap.add_argument("--gait")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out")
    ap.add_argument("--points", type=int, default=1500)
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--noise", type=float)
    ap.add_argument("--hidden", type=float)
    ap.add_argument("--occlusion", choices=["view", "ground", "limb", "gaps", "mixed"])
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for p, gs in PLANS.items():
            print(p, " ".join(gs))
        return
    if not a.plan or not a.gait or not a.out or a.gait not in PLANS.get(a.plan, ()):
        sys.exit("gen2: need --plan, a --gait of that plan (--list) and -o DIR")
    key = sum(ord(c) * (i + 1) for i, c in enumerate(a.plan + "/" + a.gait))
    rng = np.random.default_rng([a.seed, key])
    b, g = build(a.plan, rng)
    rest, nrm, own = surface(b, a.points, rng)
    idx, w, pw = weights(b, rest, rng)
    size = float(np.linalg.norm(rest.max(0) - rest.min(0)))
    T = a.frames
    rots, trans, heading, _ = motion(a.plan, a.gait, g, len(b.bones), T, a.fps, rng, size)
    G, local = fk(b, rots, trans, heading, T)
    # corrective bulge (not LBS): along the rest normal, by how far each bone has turned
    bulge = rng.uniform(0.0, 0.3)
    ang = np.arccos(np.clip((np.trace(local, axis1=2, axis2=3) - 1) / 2, -1, 1))    # [T,B]
    rr = np.array([0.5 * (bo["r0"] + bo["r1"]) for bo in b.bones])
    amt = (w[None] * (bulge * rr[idx] * (1 - np.cos(ang[:, idx])))).sum(2)           # [T,N]
    R0 = rest[None] + amt[..., None] * nrm[None]
    X = np.zeros((T, len(rest), 3))
    Nw = np.zeros_like(X)
    for k in range(4):
        Gk = G[:, idx[:, k]]                                                          # [T,N,3,4]
        X += w[None, :, k, None] * (np.einsum("tnij,tnj->tni", Gk[..., :3], R0) + Gk[..., 3])
        Nw += w[None, :, k, None] * np.einsum("tnij,nj->tni", Gk[..., :3], nrm)
    Nw /= np.maximum(np.linalg.norm(Nw, axis=2, keepdims=True), 1e-12)
    # truth joints: every head, and the tail of every leaf
    B = len(b.bones)
    kids = {k: [c for c in range(B) if b.bones[c]["parent"] == k] for k in range(B)}
    J, par = [], []
    for k, bo in enumerate(b.bones):
        J.append(np.einsum("tij,j->ti", G[:, k, :, :3], bo["head"]) + G[:, k, :, 3])
        par.append(bo["parent"])       # the head joint of bone k has index k
    for k, bo in enumerate(b.bones):
        if not kids[k]:
            J.append(np.einsum("tij,j->ti", G[:, k, :, :3], bo["tail"]) + G[:, k, :, 3])
            par.append(k)
    J = np.stack(J, 1)
    noise = a.noise if a.noise is not None else rng.uniform(0.001, 0.005)
    hidden = a.hidden if a.hidden is not None else rng.uniform(0.08, 0.30)
    occl = a.occlusion or ["view", "ground", "limb", "gaps", "mixed"][int(rng.integers(5))]
    Pn, vis = degrade(X, Nw, rng, noise, hidden, occl)
    os.makedirs(a.out, exist_ok=True)
    np.savez(os.path.join(a.out, "tracks.npz"), points=np.where(vis[..., None], Pn, np.nan).astype(np.float32),
             visible=vis, fps=np.float64(a.fps))
    np.savez(os.path.join(a.out, "truth.npz"), points=X.astype(np.float32), joints=J.astype(np.float32),
             parents=np.array(par, np.int32), bones=np.int64(B), fps=np.float64(a.fps),
             body_size=np.float64(np.linalg.norm(X[0].max(0) - X[0].min(0))), visible=vis)
    print("gen2 %s/%s seed %d: %d points x %d frames, %d bones, %d joints, noise %.4f, hidden %.3f (%s), "
          "weight power %.1f, bulge %.2f -> %s" % (a.plan, a.gait, a.seed, len(rest), T, B, J.shape[1], noise,
                                                   1 - vis.mean(), occl, pw, bulge, a.out))


if __name__ == "__main__":
    main()
