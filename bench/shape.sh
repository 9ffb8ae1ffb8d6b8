#!/usr/bin/env bash
# Shape loops (issue 14): every walk, run and gallop of the quaternius models, converted
# (anymove convert) and looped (anymove shape --loop): seam position and velocity jump after
# (and before) the blend against the clip's own mean frame-to-frame change (% of body size per
# frame); and the in-place root motion re-integrated against the travelling root (max, mm).
# Usage: bench/shape.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${BUILD:-build}}/anymove
data=${AM_SHARED:-../shared}/data
out=${OUT:-$(mktemp -d /tmp/am_bench_shape.XXXXXX)}
echo "| clip | frames | period | seam pos / vel jump after % | before % | clip mean step % | root motion re-integrated mm |"
echo "|---|---|---|---|---|---|---|"
for m in "$data"/gltf/quaternius/*.glb; do
  for c in $("$bin" convert "$m" --list-clips 2>/dev/null | cut -f2 | grep -Ei 'walk$|run$|gallop$' || true); do
    n=$(basename "$m" .glb)_${c##*|}
    "$bin" convert "$m" --clip "$c" -o "$out/$n" -q 2>/dev/null || continue
    "$bin" shape "$out/$n/motion.json" --rig "$out/$n/rig.json" --loop -o "$out/$n/bone.json" -q || continue
    "$bin" shape "$out/$n/motion.json" --rig "$out/$n/rig.json" --loop --root-motion inplace -o "$out/$n/ip.json" -q
    /usr/bin/python3 - "$out/$n" "$n" <<'PY'
import json, sys
import numpy as np
d, n = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/bone.shape_report.json"))
e = r["loop_error"]
b, ip = json.load(open(d + "/bone.json")), json.load(open(d + "/ip.json"))
t = np.array(ip["trans"]); t[:, :2] += np.array(ip["root_motion"])
mm = 1000 * np.abs(t - np.array(b["trans"])).max()
print("| %s | %d | %d | %.3f / %.3f | %.3f / %.3f | %.3f | %.2g |" % (n, r["input_frames"], r["period_frames"],
      e["after"]["position_jump_pct"], e["after"]["velocity_jump_pct"], e["before"]["position_jump_pct"],
      e["before"]["velocity_jump_pct"], e["mean_step_pct"], mm))
PY
  done
done
