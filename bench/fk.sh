#!/usr/bin/env bash
# FK throughput (frames x bones per second, one thread) and GLB export time for a 1,000-frame,
# 60-bone clip, plus the peak memory of the run. Medians over repeats; figures go to RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
cmake --build "$build" --target bench_fk >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for spec in "1000 60" "1000 20" "5000 60" "1000 200"; do
  set -- $spec
  /usr/bin/time -f "peak_rss_kb %M" taskset -c 0 "$build/bench_fk" "$1" "$2" 9 /tmp/am_bench_fk.glb 2>&1
done
