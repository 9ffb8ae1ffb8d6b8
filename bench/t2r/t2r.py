#!/usr/bin/python3
"""Helpers of the Track2Rig benchmark (bench/rig.sh, issue 10). Bench code, not the product.

Debian's /usr/bin/python3 with numpy and scipy (the anchors' interpreter).

  t2r.py split OUT.txt NAME...          DEV / HELD-OUT of each clip name (sha1 of the name)
  t2r.py prep SRC_DIR DST_DIR [--max-points 1500] [--seed 0]
        merge coincident tracks (the seam copies of flat-shaded meshes move together), then
        subsample to at most --max-points (faces are dropped when points are: a subsampled
        mesh has no faces left); truth.npz follows (points, visible); body_size recomputed
  t2r.py wolf DST_DIR [--noise X --hidden H --seed S]
        the Hyperspectral wolf (../shared/data/meshes/wolf_gt): rest mesh + 6 poses = 7
        frames; truth joints = the TGF skeleton moved by the true per-bone transforms
  t2r.py sample DST_DIR                 Dem Bones' sample as tracks + truth (no true joints)
  t2r.py dump TRACKS.npz OUT.bin [--knn 8]
        Dem Bones' input (bench/t2r/dembones_run.cpp): points and the smoothness graph (mesh
        edges, or the k nearest neighbours at frame 0 when the tracks have no faces)
  t2r.py score --truth T --tracks X --recon R.npy --joints J.npy
        the anchor's SPEC 5 scorer (../shared/anchors/ssdr/score.py), also for clips with no
        true joints (then joint fields are null)
  t2r.py ours DIR TRUTH.npz             our written rig: `anymove score rig` JSON + the count
        of translating bones (motion.json `loc` above 1e-4 body sizes in some frame)
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("AM_SHARED", os.path.join(HERE, "..", "..", "..", "shared"))
sys.path.insert(0, os.path.join(SHARED, "anchors", "ssdr"))


def half(name):
    """The split, fixed before any result: the parity of the first byte of sha1(name)."""
    return "HELD-OUT" if hashlib.sha1(name.encode()).digest()[0] % 2 else "DEV"


def rank(name):
    return hashlib.sha1(("rank:" + name).encode()).hexdigest()


def group(name):
    """gltf:MODEL:CLIP -> gltf:MODEL; gen2:PLAN-GAIT-sS -> gen2:PLAN-GAIT; single:X -> itself."""
    kind, rest = name.split(":", 1)
    if kind == "gltf":
        return "gltf:" + rest.rsplit(":", 1)[0]
    if kind == "gen2":
        return "gen2:" + rest.rsplit("-", 1)[0]
    return name


def cmd_split(a):
    """Rule (fixed before any result): a clip of a group with one clip, or a single-clip set, is
    HELD-OUT (there is nothing to split); otherwise the parity of sha1(name)'s first byte. The
    benchmark runs the first --per-group HELD-OUT clips of each group in rank order."""
    per = {k: int(v) for k, v in (x.split("=") for x in a.per_group.split(","))}
    groups = {}
    for n in a.names:
        groups.setdefault(group(n), []).append(n)
    with open(a.out, "w") as f:
        f.write("# Track2Rig benchmark split (issue 10), written before any result was seen.\n"
                "# half: HELD-OUT if the clip is alone in its group (a model with one clip, a single-clip set),\n"
                "# else by the parity of the first byte of sha1(name) (odd = HELD-OUT). run: the first K HELD-OUT\n"
                "# clips of each group in the order of rank = sha1('rank:' + name); only those are benchmarked.\n"
                "# K per kind of group: %s\n# name half rank run\n" % a.per_group)
        for g, ns in groups.items():
            hs = {n: ("HELD-OUT" if len(ns) == 1 else half(n)) for n in ns}
            run = sorted([n for n in ns if hs[n] == "HELD-OUT"], key=rank)[:per[g.split(":")[0]]]
            for n in ns:
                f.write("%s %s %s %s\n" % (n, hs[n], rank(n)[:8], "run" if n in run else "-"))


def body_size(p0):
    p = p0[np.all(np.isfinite(p0), axis=1)]
    return float(np.linalg.norm(p.max(0) - p.min(0)))


def save_clip(dst, pts_noisy, vis, truth, faces=None, fps=30.0):
    os.makedirs(dst, exist_ok=True)
    P = np.where(vis[..., None], pts_noisy, np.nan).astype(np.float32)
    tr = dict(points=P, visible=vis.astype(bool), fps=np.float64(fps))
    if faces is not None and len(faces):
        tr["faces"] = np.asarray(faces, np.int32)
    np.savez(os.path.join(dst, "tracks.npz"), **tr)
    truth = dict(truth)
    truth["points"] = np.asarray(truth["points"], np.float32)
    truth["visible"] = vis.astype(bool)
    truth["body_size"] = np.float64(body_size(truth["points"][0]))
    truth["fps"] = np.float64(fps)
    np.savez(os.path.join(dst, "truth.npz"), **truth)


def cmd_prep(a):
    t = np.load(os.path.join(a.src, "tracks.npz"))
    u = dict(np.load(os.path.join(a.src, "truth.npz")))
    P = np.asarray(t["points"], np.float64)
    V = np.asarray(t["visible"]).astype(bool) if "visible" in t else np.all(np.isfinite(P), 2)
    C = np.asarray(u["points"], np.float64)
    T, N, _ = C.shape
    s = body_size(C[0])
    # coincident tracks: same clean position in every frame (to 1e-6 body sizes)
    key = np.round(C.transpose(1, 0, 2).reshape(N, -1) / (1e-6 * s)).astype(np.int64)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    keep = np.sort(first)
    faces = t["faces"] if "faces" in t else None
    if len(keep) > a.max_points:
        rng = np.random.default_rng(a.seed)
        keep = np.sort(rng.choice(keep, a.max_points, replace=False))
        faces = None
    elif faces is not None:
        # faces onto the merged vertices; drop the ones that collapse
        remap = np.full(N, -1)
        remap[keep] = np.arange(len(keep))
        f = remap[first[inv.ravel()][faces]]
        ok = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])
        faces = f[ok]
    u["points"] = C[:, keep]
    fps = float(t["fps"]) if "fps" in t else 30.0
    save_clip(a.dst, P[:, keep], V[:, keep], u, faces, fps)
    print("%s: %d -> %d points (%d unique), %d frames, %s faces" % (a.dst, N, len(keep), len(first), T,
          "no" if faces is None else len(faces)))


def read_obj(path):
    v, f = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith("v "):
                v.append([float(x) for x in line.split()[1:4]])
            elif line.startswith("f "):
                f.append([int(x.split("/")[0]) - 1 for x in line.split()[1:]])
    tri = []
    for p in f:
        for k in range(1, len(p) - 1):
            tri.append([p[0], p[k], p[k + 1]])
    return np.array(v), np.array(tri, np.int32)


def cmd_wolf(a):
    import gen2
    d = os.path.join(SHARED, "data", "meshes", "wolf_gt")
    rest, faces = read_obj(os.path.join(d, "wolf.obj"))
    joints, edges, part = [], [], 0
    for line in open(os.path.join(d, "wolf.tgf")):
        if line.startswith("#"):
            part += 1
            continue
        w = line.split()
        if not w:
            continue
        if part == 0:
            joints.append([float(x) for x in w[1:4]])
        elif part == 1:
            edges.append((int(w[0]) - 1, int(w[1]) - 1))
    joints = np.array(joints)
    vals = open(os.path.join(d, "wolf.DMAT")).read().split()
    cols, rows = int(vals[0]), int(vals[1])
    W = np.array(vals[2:], float).reshape(cols, rows).T            # column-major -> [N, bones]
    frames, mats = [rest], [np.tile(np.eye(4)[:3], (len(edges), 1, 1))]
    for k in range(1, 7):
        v, _ = read_obj(os.path.join(d, "poses-1", "wolf-%d.obj" % k))
        M = np.loadtxt(os.path.join(d, "poses-1", "wolf-%d.Tmat" % k)).reshape(len(edges), 4, 3).transpose(0, 2, 1)
        frames.append(v)
        mats.append(M)
    X = np.array(frames)                                            # [7, N, 3]
    M = np.array(mats)                                              # [7, B, 3, 4]
    # each joint moves with the bone it heads (the root joint and tails with their own bone)
    owner = {}
    for b, (p, c) in enumerate(edges):
        owner.setdefault(p, b)
    for b, (p, c) in enumerate(edges):
        owner.setdefault(c, b)
    Jt = np.zeros((len(X), len(joints), 3))
    for j in range(len(joints)):
        b = owner[j]
        Jt[:, j] = np.einsum("tij,j->ti", M[:, b, :, :3], joints[j]) + M[:, b, :, 3]
    lbs = np.einsum("nb,tbij,nj->tni", W, M[:, :, :, :3], rest) + np.einsum("nb,tbi->tni", W, M[:, :, :, 3])
    s = body_size(X[0])
    print("wolf: %d vertices, %d bones, %d frames; true LBS vs the posed meshes: mean %.4f%% of body size"
          % (len(rest), len(edges), len(X), 100 * np.linalg.norm(lbs - X, axis=2).mean() / s))
    parents = np.full(len(joints), -1)
    for p, c in edges:
        parents[c] = p
    truth = dict(points=X, joints=Jt.astype(np.float32), parents=parents.astype(np.int32),
                 bones=np.int64(len(edges)))
    rng = np.random.default_rng(a.seed)
    Pn, vis = gen2.degrade(X, None, rng, a.noise, a.hidden, "mixed", faces=faces)
    save_clip(a.dst, Pn, vis, truth, faces, 30.0)


def cmd_sample(a):
    t = np.load(os.path.join(SHARED, "data", "meshes", "dembones_sample", "bone_anim.tracks.npz"))
    P = np.asarray(t["points"], np.float64)
    T = len(P)
    truth = dict(points=P, joints=np.zeros((T, 0, 3), np.float32), parents=np.zeros(0, np.int32),
                 bones=np.int64(0))
    save_clip(a.dst, P, np.ones(P.shape[:2], bool), truth, t["faces"], float(t["fps"]))


def cmd_dump(a):
    t = np.load(a.tracks)
    P = np.asarray(t["points"], np.float32)
    if "visible" in t and not np.asarray(t["visible"]).all() or not np.isfinite(P).all():
        sys.exit("t2r dump: %s has hidden entries; Dem Bones runs on clean clips only" % a.tracks)
    T, N, _ = P.shape
    if "faces" in t and len(t["faces"]):
        f = np.asarray(t["faces"], np.int64)
        e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    else:
        from scipy.spatial import cKDTree
        k = min(a.knn, N - 1)
        _, idx = cKDTree(P[0]).query(P[0], k + 1)
        e = np.stack([np.repeat(np.arange(N), k), idx[:, 1:].ravel()], 1)
    e = np.unique(np.sort(e, 1), axis=0).astype(np.int32)
    with open(a.out, "wb") as fh:
        fh.write(b"AMDB")
        fh.write(np.array([T, N, len(e)], "<i4").tobytes())
        fh.write(P.astype("<f4").tobytes())
        fh.write(e.astype("<i4").tobytes())


def cmd_score(a):
    import score
    tr = dict(np.load(a.truth))
    d = np.load(a.tracks)
    vis = d["visible"] if "visible" in d else np.all(np.isfinite(d["points"]), axis=2)
    pj = np.load(a.joints)
    nojoints = tr["joints"].shape[1] == 0
    if nojoints:     # score.py needs true joints; score against a stand-in, then drop those fields
        tr["joints"] = pj[:, :1]
    out = score.score(tr, np.load(a.recon), pj, vis)
    if nojoints:
        for k in list(out):
            if k.startswith("joint_err"):
                out[k] = None
        out["J_true"] = 0
    if a.row:
        log = {}
        for fn in ("ssdr_log.json", "dembones_log.json"):
            f = os.path.join(os.path.dirname(a.recon), fn)
            if os.path.exists(f):
                log = json.load(open(f))
        bones = log.get("bones", pj.shape[1])
        if "ssdr_log.json" in os.listdir(os.path.dirname(a.recon)):
            rig = json.load(open(os.path.join(os.path.dirname(a.recon), "rig.json")))
            bones = rig["ssdr"]["bones_active"]
        # free bones: every bone has its own translation
        row(a, out["recon_err_pct"], out.get("recon_err_hidden_pct"), out["joint_err_pct"], bones, bones)
    print(json.dumps(out))


def row(a, rall, rhid, joint, bones, trans):
    """One CSV line: set,clip,method,bones_asked,bones,recon_all,recon_hidden,joint,translating,seconds."""
    f = lambda x: "" if x is None else "%.6g" % x     # noqa: E731
    with open(a.csv, "a") as fh:
        fh.write("%s,%s,%s,%s,%s,%s,%s\n" % (a.row, bones, f(rall), f(rhid), f(joint), trans, a.seconds))


def cmd_ours(a):
    anymove = os.environ.get("ANYMOVE", "build/anymove")
    r = subprocess.run([anymove, "score", "rig", "--truth", a.truth, a.dir], capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr.strip())
    out = json.loads(r.stdout)
    m = json.load(open(os.path.join(a.dir, "motion.json")))
    rig = json.load(open(os.path.join(a.dir, "rig.json")))
    s = out.get("body_size_m") or 1.0
    # translating bones: the roots (motion trans) and every bone with a loc channel that moves
    names = m.get("bones") or [b[0] if isinstance(b, list) else b.get("name") for b in rig["bones"]]
    par = {}
    for b in rig["bones"]:
        if isinstance(b, list):
            par[b[0]] = b[3]
        else:
            par[b.get("name")] = b.get("parent")
    moving = {n for n in names if par.get(n) is None}
    if "loc" in m:
        L = np.asarray(m["loc"], float)                          # [T,B,3]
        moving |= {names[k] for k in np.flatnonzero(np.abs(L).max(axis=(0, 2)) > 1e-4 * s)}
    out["translating_bones"] = len(moving)
    if a.row:
        row(a, out["recon_all_pct"], out["recon_hidden_pct"] if out.get("hidden_entries") else None,
            out["joint_error_pct"], out["bones"], out["translating_bones"])
    print(json.dumps(out))


def cmd_table(a):
    """Markdown: per set, the mean per method, ours vs SSDR, and a per-clip table."""
    import csv
    rows = [r for r in csv.reader(open(a.csv)) if r and not r[0].startswith("#")]
    sets = []
    for r in rows:
        if r[0] not in sets:
            sets.append(r[0])
    num = lambda x: float(x) if x not in ("", "FAIL") else None    # noqa: E731
    mean = lambda xs: sum(xs) / len(xs) if xs else None             # noqa: E731
    fmt = lambda x, d=3: "-" if x is None else ("%." + str(d) + "f") % x   # noqa: E731
    pct = lambda o, b: "-" if o is None or not b else "%+.1f%%" % (100 * (o / b - 1))   # noqa: E731
    for st in sets:
        rs = [r for r in rows if r[0] == st]
        clips = []
        for r in rs:
            if r[1] not in clips:
                clips.append(r[1])
        methods = []
        for r in rs:
            if r[2] not in methods:
                methods.append(r[2])
        by = {(r[1], r[2]): r for r in rs}
        print("\n#### %s (%d clips)\n" % (st, len(clips)))
        print("| method | clips | bones | recon all % | recon hidden % | joint % | translating bones | time s |")
        print("|---|---|---|---|---|---|---|---|")
        agg = {}
        for m in methods:
            ok = [by[(c, m)] for c in clips if (c, m) in by and by[(c, m)][5] not in ("", "FAIL")]
            fails = sum(1 for c in clips if (c, m) in by and by[(c, m)][5] == "FAIL")
            col = lambda k: [num(r[k]) for r in ok if num(r[k]) is not None]    # noqa: E731
            agg[m] = dict(n=len(ok), all=mean(col(5)), hid=mean(col(6)), joint=mean(col(7)), clips=[r[1] for r in ok])
            print("| %s | %d%s | %s | %s | %s | %s | %s | %s |" % (
                m, len(ok), " (%d failed)" % fails if fails else "", fmt(mean(col(4)), 1), fmt(agg[m]["all"]),
                fmt(agg[m]["hid"]), fmt(agg[m]["joint"], 2), fmt(mean(col(8)), 1), fmt(mean(col(9)), 2)))
        for anc in ("ssdr", "dembones"):
            if anc not in agg:
                continue
            for m in methods:
                if m.startswith("ours") and agg[m]["n"]:
                    # the comparison over the clips both finished
                    common = [c for c in clips if (c, m) in by and (c, anc) in by
                              and by[(c, m)][5] not in ("", "FAIL") and by[(c, anc)][5] not in ("", "FAIL")]

                    def cm(meth, k):
                        v = [num(by[(c, meth)][k]) for c in common if num(by[(c, meth)][k]) is not None]
                        return mean(v)
                    print("\n%s vs %s (%d clips, means): recon all %s, hidden %s, joint %s" % (
                        m, anc, len(common), pct(cm(m, 5), cm(anc, 5)), pct(cm(m, 6), cm(anc, 6)),
                        pct(cm(m, 7), cm(anc, 7))))
        # medians: a few blow-ups dominate the means on the degraded synthetic clips
        med = lambda xs: float(np.median(xs)) if xs else None    # noqa: E731
        print("\nmedians over clips (recon all / hidden / joint %): " + "; ".join(
            "%s %s / %s / %s" % (m, fmt(med([num(by[(c, m)][5]) for c in agg[m]["clips"]])),
                                 fmt(med([num(by[(c, m)][6]) for c in agg[m]["clips"] if num(by[(c, m)][6]) is not None])),
                                 fmt(med([num(by[(c, m)][7]) for c in agg[m]["clips"] if num(by[(c, m)][7]) is not None]), 2))
            for m in methods if agg[m]["n"]))
        bad = {m: sum(1 for c in agg[m]["clips"] if num(by[(c, m)][5]) > 5 or (num(by[(c, m)][7]) or 0) > 25)
               for m in methods}
        if any(bad.values()):
            print("\nclips with recon all > 5 % or joint > 25 % of body size: " +
                  ", ".join("%s %d" % (m, bad[m]) for m in methods))
        groups = []
        for c in clips:
            g = group(c) if ":" in c else c
            if g not in groups:
                groups.append(g)
        if len(groups) > 1:
            print("\n| group (mean over its clips) | clips | " + " | ".join(methods) + " |")
            print("|---|---|" + "---|" * len(methods))
            for g in groups:
                cs = [c for c in clips if (group(c) if ":" in c else c) == g]
                cells = []
                for m in methods:
                    ok = [by[(c, m)] for c in cs if (c, m) in by and by[(c, m)][5] not in ("", "FAIL")]
                    v = lambda k: mean([num(r[k]) for r in ok if num(r[k]) is not None])    # noqa: E731
                    cells.append("%s / %s / %s" % (fmt(v(5)), fmt(v(6)), fmt(v(7), 2)) if ok else "-")
                print("| %s | %d | %s |" % (g, len(cs), " | ".join(cells)))
        print("\n| clip | " + " | ".join(methods) + " |")
        print("|---|" + "---|" * len(methods))
        for c in clips:
            cells = []
            for m in methods:
                r = by.get((c, m))
                if not r:
                    cells.append("")
                elif r[5] in ("", "FAIL"):
                    cells.append("FAIL")
                else:
                    cells.append("%s / %s / %s (%s b, %s t)" % (fmt(num(r[5])), fmt(num(r[6])), fmt(num(r[7]), 2), r[4], r[8]))
            print("| %s | %s |" % (c, " | ".join(cells)))
        print("\n(cells: recon all / hidden / joint % of body size (b = bones, t = translating bones))")


def cmd_summary(a):
    """One headline table over sets: each method's means, ours vs the SSDR anchor, the 20 % target."""
    import csv
    rows = [r for r in csv.reader(open(a.csv)) if r and r[5] not in ("", "FAIL")]
    if a.drop:
        drop = set(open(a.drop).read().split())
        rows = [r for r in rows if r[1] not in drop]
    num = lambda x: float(x) if x not in ("",) else None    # noqa: E731
    mean = lambda xs: sum(xs) / len(xs) if xs else None     # noqa: E731
    fmt = lambda x, d=3: "-" if x is None else ("%." + str(d) + "f") % x   # noqa: E731
    sets, methods = [], []
    for r in rows:
        if r[0] not in sets:
            sets.append(r[0])
        if r[2] not in methods:
            methods.append(r[2])
    ours = [m for m in methods if m.startswith("ours")]
    print("| set | clips | " + " | ".join("%s all / hidden / joint" % m for m in methods) +
          " | " + " | ".join("%s vs ssdr: all / hidden / joint" % m for m in ours) + " |")
    print("|---|---|" + "---|" * (len(methods) + len(ours)))
    for st in sets:
        by = {(r[1], r[2]): r for r in rows if r[0] == st}
        clips = sorted({c for c, _ in by})
        cells, vs = [], []
        for m in methods:
            cs = [c for c in clips if (c, m) in by]
            v = [mean([num(by[(c, m)][k]) for c in cs if num(by[(c, m)][k]) is not None]) for k in (5, 6, 7)]
            cells.append("%s / %s / %s" % (fmt(v[0]), fmt(v[1]), fmt(v[2], 2)) if cs else "")
        for m in ours:
            common = [c for c in clips if (c, m) in by and (c, "ssdr") in by]
            out = []
            for k in (5, 6, 7):
                o = [num(by[(c, m)][k]) for c in common if num(by[(c, m)][k]) is not None and num(by[(c, "ssdr")][k]) is not None]
                b = [num(by[(c, "ssdr")][k]) for c in common if num(by[(c, m)][k]) is not None and num(by[(c, "ssdr")][k]) is not None]
                out.append("%+.0f%%" % (100 * (mean(o) / mean(b) - 1)) if o and mean(b) else "-")
            vs.append(" / ".join(out))
        print("| %s | %d | %s | %s |" % (st, len(clips), " | ".join(cells), " | ".join(vs)))


def cmd_pair(a):
    """Per model / plan: the means of every method on a clean set and its degraded twin."""
    import csv
    rows = [r for r in csv.reader(open(a.csv)) if r and r[5] not in ("", "FAIL")]
    num = lambda x: float(x) if x else None                 # noqa: E731
    mean = lambda xs: sum(xs) / len(xs) if xs else None     # noqa: E731
    fmt = lambda x, d=3: "-" if x is None else ("%." + str(d) + "f") % x   # noqa: E731
    cols = []
    for st in (a.clean, a.degraded):
        for r in rows:
            if r[0] == st and (st, r[2]) not in cols:
                cols.append((st, r[2]))
    groups = []
    for r in rows:
        if r[0] in (a.clean, a.degraded) and group(r[1]) not in groups:
            groups.append(group(r[1]))
    print("| model / plan | clips | " + " | ".join("%s %s" % c for c in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for g in groups:
        cells, n = [], 0
        for st, m in cols:
            rs = [r for r in rows if r[0] == st and r[2] == m and group(r[1]) == g]
            n = max(n, len(rs))
            v = [mean([num(r[k]) for r in rs if num(r[k]) is not None]) for k in (5, 6, 7)]
            cells.append(("%s / %s" % (fmt(v[0]), fmt(v[2], 2)) if st == a.clean else
                          "%s / %s / %s" % (fmt(v[0]), fmt(v[1]), fmt(v[2], 2))) if rs else "-")
        print("| %s | %d | %s |" % (g.split(":", 1)[1], n, " | ".join(cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    p = sp.add_parser("split")
    p.add_argument("out")
    p.add_argument("--per-group", default="gltf=1,gen2=1,single=1", help="clips run per group, by kind")
    p.add_argument("names", nargs="+")
    p = sp.add_parser("prep")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--max-points", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    p = sp.add_parser("wolf")
    p.add_argument("dst")
    p.add_argument("--noise", type=float, default=0.0)
    p.add_argument("--hidden", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p = sp.add_parser("sample")
    p.add_argument("dst")
    p = sp.add_parser("dump")
    p.add_argument("tracks")
    p.add_argument("out")
    p.add_argument("--knn", type=int, default=8)
    p = sp.add_parser("score")
    for k in ("--truth", "--tracks", "--recon", "--joints"):
        p.add_argument(k, required=True)
    p.add_argument("--row", help="SET,CLIP,METHOD,BONES_ASKED: append a CSV line to --csv")
    p.add_argument("--csv")
    p.add_argument("--seconds", default="")
    p = sp.add_parser("ours")
    p.add_argument("dir")
    p.add_argument("truth")
    p.add_argument("--row")
    p.add_argument("--csv")
    p.add_argument("--seconds", default="")
    p = sp.add_parser("table")
    p.add_argument("csv")
    p = sp.add_parser("summary")
    p.add_argument("csv")
    p.add_argument("--drop", help="a file of clip names to leave out")
    p = sp.add_parser("pair")
    p.add_argument("csv")
    p.add_argument("clean")
    p.add_argument("degraded")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    globals()["cmd_" + a.cmd](a)


if __name__ == "__main__":
    main()
