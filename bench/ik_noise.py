#!/usr/bin/env python3
"""Noisy joints for the IK bench (issue 12) and their score.

    ik_noise.py make TRUTH_MOTION.json RIG.json OUT.npz [--noise 0.01] [--missing 0.05] [--seed 1]
        joints.npz of the truth's joints (the joints `anymove ik` uses: heads and tails of
        non-helper bones) with Gaussian noise of NOISE x body size per axis (SPEC 5 body size: the
        diagonal of the true joints' box at frame 0) and a fraction MISSING of (frame, joint)
        entries set missing (NaN), drawn independently.
    ik_noise.py score TRUTH_MOTION.json RIG.json NOISY.npz FIT_MOTION.json
        one JSON line: mean per-joint error of the input (over the entries present) and of the fit
        (over every used joint and frame, and over the entries present), in cm and % of body size,
        and their ratio (output / input: SPEC 5's noise ratio).
"""
import json
import sys

import numpy as np


def used_joints(rig):
    helpers = set(rig.get("helpers") or [])
    used = set()
    for name, head, tail, _parent in rig["bones"]:
        if name in helpers:
            continue
        used.add(head)
        used.add(tail)
    return [n for n in rig["joints"] if n in used]


def load(truth_path, rig_path):
    mo = json.load(open(truth_path))
    rig = json.load(open(rig_path))
    names = used_joints(rig)
    idx = [mo["joint_names"].index(n) for n in names]
    J = np.asarray(mo["joints"], float)[:, idx]
    body = float(np.linalg.norm(J[0].max(0) - J[0].min(0)))
    return mo, names, J, body


def make(argv):
    truth, rig, out = argv[:3]
    opts = dict(zip(argv[3::2], argv[4::2]))
    noise = float(opts.get("--noise", 0.01))
    missing = float(opts.get("--missing", 0.05))
    rng = np.random.default_rng(int(opts.get("--seed", 1)))
    mo, names, J, body = load(truth, rig)
    X = J + rng.normal(0.0, noise * body, J.shape)
    X[rng.random(J.shape[:2]) < missing] = np.nan
    np.savez_compressed(out, joints=X, names=np.array(names), fps=np.float64(mo.get("fps", 30.0)))


def score(argv):
    truth, rig, noisy, fit = argv[:4]
    mo, names, J, body = load(truth, rig)
    X = np.load(noisy)["joints"]
    fm = json.load(open(fit))
    F = np.asarray(fm["joints"], float)[:, [fm["joint_names"].index(n) for n in names]]
    present = np.isfinite(X[..., 0])
    e_in = np.linalg.norm(X - J, axis=-1)[present].mean()
    e_all = np.linalg.norm(F - J, axis=-1)
    r = {"body_m": body, "input_cm": 100 * e_in, "fit_cm": 100 * e_all.mean(),
         "fit_present_cm": 100 * e_all[present].mean(), "fit_missing_cm": 100 * e_all[~present].mean() if (~present).any() else None,
         "input_pct": 100 * e_in / body, "fit_pct": 100 * e_all.mean() / body}
    r["ratio"] = r["fit_cm"] / r["input_cm"]
    print(json.dumps(r))


if __name__ == "__main__":
    {"make": make, "score": score}[sys.argv[1]](sys.argv[2:])
