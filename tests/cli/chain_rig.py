"""A chain rig for a prepared OBJ (bind -o PREPPED.obj): bones along the mesh's longest horizontal
axis through the centroids of its vertices in slices of equal counts, for models that come without one
(the Flamingo). Usage: chain_rig.py PREPPED.obj BONES OUT_RIG.json"""
import json
import sys

import numpy as np

obj, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
v = np.array([[float(x) for x in l.split()[1:4]] for l in open(obj) if l.startswith("v ")])
w = np.stack([v[:, 0], -v[:, 2], v[:, 1]], 1)            # the OBJ is Y up, front +Z: world axes
ax = int(np.argmax(np.ptp(w[:, :2], 0)))
order = w[np.argsort(w[:, ax], kind="stable")]
heads = [s.mean(0).tolist() for s in np.array_split(order, n + 1)]
joints = {"j%d" % i: heads[i] for i in range(n + 1)}
bones = [["b%d" % i, "j%d" % i, "j%d" % (i + 1), "b%d" % (i - 1) if i else None] for i in range(n)]
json.dump({"name": "chain", "joints": joints, "bones": bones}, open(out, "w"), indent=1)
