#!/usr/bin/env bash
# `anymove solve --cameras CALIB`: a 3-camera exam solves, and the bad inputs of issue 12 exit 2
# with a message that names the joint, camera or calibration field, leaving no output behind:
# detections whose names match no joint of the rig, a camera that sees nothing (confidence 0, or
# coordinates NaN), every confidence 0, NaN in the calibration.
. "$(dirname "$0")/lib.sh"
am_need_tool /usr/bin/python3
W=$AM_SOURCE/examples/creatures/wolf
"$AM_BIN" exam --rig "$W/rig.json" --cameras 3 --seed 1 --frames 30 -o "$TMP/e3" -q
expect solve_3_cameras 0 '' -- "$AM_BIN" solve "$TMP/e3/det.npz" --rig "$W/rig.json" --cameras "$TMP/e3/calibration.toml" -o "$TMP/ok" -q
/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
tmp = sys.argv[1]
d = dict(np.load(tmp + "/e3/det.npz"))
def save(name, **change):
    x = dict(d); x.update(change); np.savez(tmp + "/" + name, **x)
save("nomatch.npz", names=np.array(["x%d" % i for i in range(len(d["names"]))]))
blind = d["conf"].copy(); blind[1] = 0; save("blind.npz", conf=blind)
save("zero.npz", conf=np.zeros_like(d["conf"]))
nan = d["uv"].copy(); nan[2] = np.nan; save("nanuv.npz", uv=nan)
lines = open(tmp + "/e3/calibration.toml").read().split("\n")
i = next(i for i, l in enumerate(lines) if l.startswith("translation"))
lines[i] = "translation = [ nan, 0.0, 1.0,]"
open(tmp + "/nan.toml", "w").write("\n".join(lines))
PY
C=$TMP/e3/calibration.toml
expect bad_names 2 "nomatch\.npz.*none of the 26 detected joint names is a joint of the rig \(e\.g\. 'x0'\)" -- \
  "$AM_BIN" solve "$TMP/nomatch.npz" --rig "$W/rig.json" --cameras "$C" -o "$TMP/bad"
expect bad_blind_camera 2 "blind\.npz.*camera 'cam_1' sees nothing" -- "$AM_BIN" solve "$TMP/blind.npz" --rig "$W/rig.json" --cameras "$C" -o "$TMP/bad"
expect bad_all_zero 2 "zero\.npz.*camera 'cam_0' sees nothing" -- "$AM_BIN" solve "$TMP/zero.npz" --rig "$W/rig.json" --cameras "$C" -o "$TMP/bad"
expect bad_nan_camera 2 "nanuv\.npz.*camera 'cam_2' sees nothing.*finite coordinates" -- \
  "$AM_BIN" solve "$TMP/nanuv.npz" --rig "$W/rig.json" --cameras "$C" -o "$TMP/bad"
expect bad_nan_calibration 2 "nan\.toml:7:[0-9]+: .*camera 'cam_0': translation\[0\] = nan" -- \
  "$AM_BIN" solve "$TMP/e3/det.npz" --rig "$W/rig.json" --cameras "$TMP/nan.toml" -o "$TMP/bad"
if [ -e "$TMP/bad" ]; then am_fail no_partial_output "$(ls "$TMP/bad")"; else am_pass no_partial_output; fi
am_done
