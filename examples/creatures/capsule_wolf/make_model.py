"""The capsule wolf: a raw 'model.obj' made of one closed capsule around each bone of the wolf
rig (separate, overlapping pieces, as kit-bashed models are), exported the way a modelling tool
would (Y up, facing +X, in centimetres, off the origin), so that `anymove bind` has to prepare
it (creature.json "prep") before the rig, authored on the prepared mesh (rig.json here), fits.

/usr/bin/python3 examples/creatures/capsule_wolf/make_model.py   (rewrites model.obj, rig.json)
"""
import json
import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
wolf = json.load(open(os.path.join(here, "..", "wolf", "rig.json")))
joints = {k: np.array(v, float) for k, v in wolf["joints"].items()}
radius = {"spine": 0.13, "neck": 0.08, "head": 0.085, "muzzle": 0.045, "ear": 0.025, "tail1": 0.045,
          "tail2": 0.035, "tail3": 0.025, "scapula": 0.07, "upperarm": 0.05, "forearm": 0.04, "hand": 0.03,
          "pelvis": 0.07, "thigh": 0.06, "shin": 0.04, "foot": 0.03}


def r_of(bone):
    for k, r in radius.items():
        if bone.startswith(k):
            return r
    return 0.04


def capsule(a, b, r, rings=6, seg=10):
    """A closed capsule from a to b: two hemispheres and a cylinder, outward triangles."""
    ax = b - a
    L = np.linalg.norm(ax)
    z = ax / L
    x = np.cross(z, [0.0, 0.0, 1.0] if abs(z[2]) < 0.9 else [1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    verts = [a - z * r]
    lat = [(-math.pi / 2 + math.pi / 2 * i / rings, 0.0) for i in range(1, rings + 1)]
    lat += [(math.pi / 2 * i / rings, L) for i in range(0, rings)]
    for phi, off in lat:
        for k in range(seg):
            t = 2 * math.pi * k / seg
            verts.append(a + z * (off + r * math.sin(phi)) + r * math.cos(phi) * (x * math.cos(t) + y * math.sin(t)))
    verts.append(b + z * r)
    n = len(lat)
    faces = []
    for k in range(seg):
        faces.append((0, 1 + (k + 1) % seg, 1 + k))
    for i in range(n - 1):
        for k in range(seg):
            p, q = 1 + i * seg + k, 1 + i * seg + (k + 1) % seg
            faces += [(p, q, q + seg), (p, q + seg, p + seg)]
    top = len(verts) - 1
    for k in range(seg):
        faces.append((top, 1 + (n - 1) * seg + k, 1 + (n - 1) * seg + (k + 1) % seg))
    return np.array(verts), faces


V, F = [], []
for name, head, tail, parent in wolf["bones"]:
    v, f = capsule(joints[head], joints[tail], r_of(name))
    base = len(V)
    V += list(v)
    F += [(a + base, b + base, c + base) for a, b, c in f]
V = np.array(V)
# prep's result: centred on x = y = 0, lowest point on z = 0; the rig follows the same shift
lo, hi = V.min(0), V.max(0)
shift = np.array([-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]])
# the raw export: turned to face +X (rotz -90 deg), centimetres, Y up (x, z, -y), off the origin
c, s = 0.0, -1.0
raw = (V + shift) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T * 100.0 + [40.0, -25.0, 3.0]
with open(os.path.join(here, "model.obj"), "w") as f:
    f.write("# capsule wolf (make_model.py): Y up, facing +X, centimetres\n")
    for p in raw:
        f.write("v %.5f %.5f %.5f\n" % (p[0], p[2], -p[1]))
    for a, b, cc in F:
        f.write("f %d %d %d\n" % (a + 1, b + 1, cc + 1))
rig = dict(wolf)
rig["name"] = "capsule_wolf"
rig["joints"] = {k: [round(float(x), 6) for x in (joints[k] + shift)] for k in wolf["joints"]}
json.dump(rig, open(os.path.join(here, "rig.json"), "w"), indent=1)
print("model.obj: %d vertices, %d triangles; extent along y %.4f m" % (len(V), len(F), hi[1] - lo[1]))
