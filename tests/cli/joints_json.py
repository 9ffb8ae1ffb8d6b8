"""joints.npz (SPEC 4.2.3) as the JSON report_check.mjs compares a viewer with: {"joint_names",
"joints": [T][J][3] with null for a missing point}. usage: joints_json.py JOINTS.npz OUT.json"""
import json
import sys

import numpy as np

z = np.load(sys.argv[1])
names = [str(x) for x in z["names"]]
joints = [[[float(v) for v in p] if np.all(np.isfinite(p)) else None for p in f] for f in z["joints"]]
with open(sys.argv[2], "w") as f:
    json.dump({"joint_names": names, "joints": joints}, f)
