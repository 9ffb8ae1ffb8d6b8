#!/usr/bin/env bash
# Multi-view benchmarks (issue 11): the N-view exam on several creatures and camera counts,
# RANSAC on / off; aniposelib's 12-camera mouse data; the speed of 1 min of 4 cameras x 20
# joints at 60 fps. Prints markdown tables for bench/RESULTS.md.
#   bash bench/multiview.sh [build/anymove] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B="$(realpath "${1:-build/anymove}")"
W="${2:-$(mktemp -d /tmp/anymove-multiview.XXXXXX)}"
S=../shared/data
PY=/usr/bin/python3
mkdir -p "$W"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "anymove $(git rev-parse --short HEAD 2>/dev/null || echo '?'), work dir $W"
echo

# Creatures: the example rigs, a human walker, and two glTF animals never used by capture before.
declare -A RIG
RIG[wolf]=examples/creatures/wolf/rig.json
RIG[spider]=examples/creatures/spider/rig.json
RIG[walker]=examples/walker/rig.json
for m in Frog Husky; do
  "$B" convert "$S/gltf/quaternius/$m.glb" -o "$W/conv_$m" -q >/dev/null 2>&1
  RIG[$m]="$W/conv_$m/rig.json"
done

num() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(d$2)" "$1"; }
echo "### N-view exam: 150 frames at 30 fps, 3 px noise, 2 % dropouts, 2 % outliers (20-80 px), seed 0"
echo
echo "| creature | joints | body (m) | C | RANSAC | joint error mean (cm) | (% body) | p95 (% body) | missing % | reproj mean px (per camera) | s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for cr in wolf spider walker Frog Husky; do
  for C in 2 3 4 8; do
    E="$W/exam_${cr}_$C"
    "$B" exam --rig "${RIG[$cr]}" --cameras $C --noise 3 --dropout 0.02 --outliers 0.02 --swap 0 -o "$E" -q 2>/dev/null
    for r in on off; do
      flag=""; [ $r = off ] && flag="--no-ransac"
      T="$E/tri_$r"
      "$B" triangulate "$E/det.npz" --cameras "$E/calibration.toml" -o "$T" $flag -q 2>/dev/null
      "$B" score triangulate "$E/truth.npz" "$T/joints.npz" > "$T/score.json"
      $PY - "$T/score.json" "$T/summary.json" "$cr" "$C" "$r" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
cams = ' / '.join('%.2f' % c['mean_px'] if c['mean_px'] is not None else '-' for c in m['per_camera'])
print('| %s | %d | %.2f | %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %.3f |' % (
    sys.argv[3], m['joints'], s['body_size_m'], sys.argv[4], sys.argv[5], s['joint_mean_cm'], s['joint_mean_pct'],
    s['joint_p95_pct'], s['missing_pct'], cams, m['seconds']))
PYEOF
    done
  done
done
echo

echo "### Refinement and harder readings (wolf, 4 cameras, 150 frames)"
echo
echo "| reading | method | joint error mean (cm) | (% body) | p95 (% body) | missing % |"
echo "|---|---|---|---|---|---|"
E="$W/exam_hard"
"$B" exam --rig "${RIG[wolf]}" --cameras 4 --noise 3 --dropout 0.02 --outliers 0.02 --swap 0.01 --occlusion -o "$E" -q 2>/dev/null
for m in "all cameras|--no-ransac" "RANSAC|" "RANSAC + refine|--refine" "RANSAC + refine + bones|--refine --rig ${RIG[wolf]}"; do
  name="${m%%|*}"; flag="${m#*|}"
  "$B" triangulate "$E/det.npz" --cameras "$E/calibration.toml" -o "$E/t" $flag -q 2>/dev/null
  "$B" score triangulate "$E/truth.npz" "$E/t/joints.npz" | $PY -c "
import json,sys; s=json.load(sys.stdin)
print('| noise 3 px, 2 %% drop, 2 %% outliers, 1 %% L/R swaps, body occlusion | %s | %.2f | %.2f | %.2f | %.2f |' % ('$name', s['joint_mean_cm'], s['joint_mean_pct'], s['joint_p95_pct'], s['missing_pct']))"
done
echo

echo "### aniposelib mouse-outdoor, 12 cameras, 176,868 points (76 % of detections missing)"
echo
M="$S/multiview/aniposelib_mouse_outdoor_12cam"
CAL="$M/calibration_right_4_10_2026_adjusted.toml"
$PY bench/multiview_ref.py det-from-p2d "$M/points_right_4_10_2026_sub.npz" "$CAL" "$W/mouse_det.npz"
for r in on off; do
  flag=""; [ $r = off ] && flag="--no-ransac"
  /usr/bin/time -f "%e s wall, %U s CPU, %M KiB" "$B" triangulate "$W/mouse_det.npz" --cameras "$CAL" -o "$W/mouse_$r" $flag -q 2> "$W/time_$r.txt"
  echo "- anymove, RANSAC $r: $(num "$W/mouse_$r/summary.json" "['seconds']" ) s triangulating ($(tail -1 "$W/time_$r.txt") for the whole command); $($PY bench/multiview_ref.py reproj "$M/points_right_4_10_2026_sub.npz" "$CAL" "$W/mouse_$r/joints.npz")"
done
echo "- $($PY bench/multiview_ref.py dlt "$M/points_right_4_10_2026_sub.npz" "$CAL")"
echo
echo "### aniposelib mouse after camera adjustment (all points, and fitted on half a / scored on half b)"
echo
$PY bench/multiview_ref.py split "$M/points_right_4_10_2026_sub.npz" "$W/mouse_half_"
for h in a b; do $PY bench/multiview_ref.py det-from-p2d "$W/mouse_half_$h.npz" "$CAL" "$W/mouse_det_$h.npz"; done
score() { # P2D DET CALIB LABEL
  "$B" triangulate "$2" --cameras "$3" -o "$W/mouse_s" -q 2>/dev/null
  echo "- $4, RANSAC: $($PY bench/multiview_ref.py reproj "$1" "$3" "$W/mouse_s/joints.npz" 2>/dev/null)"
  "$B" triangulate "$2" --cameras "$3" --no-ransac -o "$W/mouse_s" -q 2>/dev/null
  echo "- $4, no RANSAC: $($PY bench/multiview_ref.py reproj "$1" "$3" "$W/mouse_s/joints.npz" 2>/dev/null)"
  echo "- $4, $($PY bench/multiview_ref.py dlt "$1" "$3" 2>/dev/null)"
}
score "$W/mouse_half_b.npz" "$W/mouse_det_b.npz" "$CAL" "half b, cameras as stored"
for mode in extrinsics intrinsics; do
  f=""; [ $mode = intrinsics ] && f="--focal --distortion"
  /usr/bin/time -f "%U s CPU, %e s wall, %M KiB" "$B" cameras adjust "$W/mouse_det.npz" --cameras "$CAL" -o "$W/mouse_adj_$mode.toml" $f 2> "$W/adj_$mode.txt"
  echo "- $mode fitted on all: $(grep 'median per-point' "$W/adj_$mode.txt" | sed 's/.*cameras: //'); $(tail -1 "$W/adj_$mode.txt")"
  score "$M/points_right_4_10_2026_sub.npz" "$W/mouse_det.npz" "$W/mouse_adj_$mode.toml" "$mode fitted on all, scored on all"
  /usr/bin/time -f "%U s CPU, %e s wall, %M KiB" "$B" cameras adjust "$W/mouse_det_a.npz" --cameras "$CAL" -o "$W/mouse_adja_$mode.toml" $f 2> "$W/adja_$mode.txt"
  echo "- $mode fitted on half a: $(grep 'median per-point' "$W/adja_$mode.txt" | sed 's/.*cameras: //'); $(tail -1 "$W/adja_$mode.txt")"
  score "$W/mouse_half_b.npz" "$W/mouse_det_b.npz" "$W/mouse_adja_$mode.toml" "$mode fitted on half a, scored on half b"
done
echo

echo "### Speed: 1 minute of 4 cameras x 20 joints at 60 fps (3,600 frames, 72,000 points, RANSAC on)"
echo
E="$W/speed"
"$B" exam --rig "${RIG[wolf]}" --cameras 4 --frames 3600 --fps 60 --noise 3 --dropout 0.02 --outliers 0.02 --swap 0 -o "$E" -q 2>/dev/null
$PY bench/multiview_ref.py cut-joints "$E/det.npz" 20 "$E/det20.npz"
for k in 1 2 3; do
  /usr/bin/time -f "%U" -o "$E/cpu.txt" "$B" triangulate "$E/det20.npz" --cameras "$E/calibration.toml" -o "$E/t" -q 2>/dev/null
  echo "- run $k: $(num "$E/t/summary.json" "['seconds']") s in am_triangulate, whole command $(cat "$E/cpu.txt") s CPU ($(num "$E/t/summary.json" "['triangulated']") points, reprojection mean $(num "$E/t/summary.json" "['reproj_px']['mean']") px)"
done
