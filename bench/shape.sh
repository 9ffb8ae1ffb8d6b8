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

echo
echo "Solved captures (exam --motion of synth gait clips, then solve, then shape --loop):"
echo
echo "| creature | gait | seed | solve error % | period (truth 30) | seam pos / vel after % | before % | mean step % | truth clip's seam after % | root motion re-integrated mm |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for cr in ${CAPTURE_CREATURES:-wolf lizard}; do
  C=examples/creatures/$cr
  for g in ${CAPTURE_GAITS:-walk trot pace canter gallop}; do
    for seed in ${CAPTURE_SEEDS:-1 2}; do
      d=$out/cap_${cr}_${g}_$seed
      mkdir -p "$d"
      "$bin" synth gait --rig "$C/rig.json" --gait "$g" --frames 150 -o "$d/truth.json" -q
      "$bin" exam --rig "$C/rig.json" --creature "$C/creature.json" --motion "$d/truth.json" --seed "$seed" -o "$d/ex" -q
      "$bin" solve "$d/ex/det.npz" --rig "$C/rig.json" --creature "$C/creature.json" -o "$d/so" -q
      "$bin" score solve "$d/ex/truth.npz" "$d/so/motion.json" > "$d/score.json"
      "$bin" shape "$d/truth.json" --rig "$C/rig.json" --loop -o "$d/truth_loop.json" -q
      "$bin" shape "$d/so/motion.json" --rig "$C/rig.json" --loop -o "$d/bone.json" -q
      "$bin" shape "$d/so/motion.json" --rig "$C/rig.json" --loop --root-motion inplace -o "$d/ip.json" -q
      /usr/bin/python3 - "$d" "$cr" "$g" "$seed" <<'PY'
import json, sys
import numpy as np
d, cr, g, seed = sys.argv[1:5]
r = json.load(open(d + "/bone.shape_report.json"))
tr = json.load(open(d + "/truth_loop.shape_report.json"))
e = r["loop_error"]
sc = json.load(open(d + "/score.json"))
b, ip = json.load(open(d + "/bone.json")), json.load(open(d + "/ip.json"))
t = np.array(ip["trans"]); t[:, :2] += np.array(ip["root_motion"])
mm = 1000 * np.abs(t - np.array(b["trans"])).max()
print("| %s | %s | %s | %.3f | %d | %.3f / %.3f | %.3f / %.3f | %.3f | %.3f / %.3f | %.2g |" % (cr, g, seed,
      sc["joint_error_pct_body"]["mean"], r["period_frames"], e["after"]["position_jump_pct"],
      e["after"]["velocity_jump_pct"], e["before"]["position_jump_pct"], e["before"]["velocity_jump_pct"],
      e["mean_step_pct"], tr["loop_error"]["after"]["position_jump_pct"], tr["loop_error"]["after"]["velocity_jump_pct"], mm))
PY
    done
  done
done
