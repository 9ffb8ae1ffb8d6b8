#!/usr/bin/env bash
# Python overhead (issue 16): anymove.ik on 1,000 frames of the 49-bone, 69-joint Husky rig
# (Idle sampled at 300 fps, as bench/ik.sh) against the same library work called from C
# (bench_ik ... full: a new motion, am_ik_run, FK of the result, the position error), both
# pinned to core 0, three alternating rounds of 15 solves; the best times of all rounds.
# Usage: bench/python_ik.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
data=${AM_SHARED:-../shared}/data
husky=$data/gltf/quaternius/Husky.glb
cmake --build "$build" --target bench_ik anymove_shared >/dev/null
d=$(mktemp -d /tmp/am_bench_pyik.XXXXXX)
"$build/anymove" convert "$husky" --clip Idle --fps 300 -o "$d/truth" -q
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2 3; do
  echo "C:      $(taskset -c 0 "$build/bench_ik" "$d/truth/rig.json" "$d/truth/motion.json" 15 0 full)"
  echo "Python: $(ANYMOVE_LIBRARY=$build/libanymove.so taskset -c 0 /usr/bin/python3 bench/python_ik.py "$d/truth/rig.json" "$d/truth/motion.json" 15)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$d"
