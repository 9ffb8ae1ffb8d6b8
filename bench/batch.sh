#!/usr/bin/env bash
# Batch speed-up (issue 16): 32 exam takes (the wolf, 60 frames, seeds 1-32) through solve with
# `anymove batch -j 1` and then `-j 2` into fresh RUNS folders; wall times, their ratio and the
# load average (other work on the machine shares its cores). The outputs of both runs are
# compared byte for byte.
# Usage: bench/batch.sh [BUILD_DIR] [TAKES]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-${BUILD:-build}}/anymove")
n=${2:-32}
w=$PWD/examples/creatures/wolf
d=$(mktemp -d /tmp/am_bench_batch.XXXXXX)
cd "$d"
echo "take,command,args" > takes.csv
for i in $(seq 1 "$n"); do
  "$bin" exam --rig "$w/rig.json" --creature "$w/creature.json" --seed "$i" --frames 60 -o "ex$i" -q
  echo "take$i,solve,ex$i/det.npz --rig $w/rig.json --creature $w/creature.json" >> takes.csv
done
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N); "$bin" batch takes.csv -o j1 -j 1 -q; t1=$(date +%s.%N)
echo "load average between: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" batch takes.csv -o j2 -j 2 -q; t2=$(date +%s.%N)
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
same=yes
for i in $(seq 1 "$n"); do cmp -s "j1/take$i/motion.json" "j2/take$i/motion.json" || same=no; done
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" -v s="$same" 'BEGIN {
  printf "%d takes: -j 1 %.2f s, -j 2 %.2f s, speed-up %.2fx; outputs identical: %s\n", n, b - a, c - b, (b - a) / (c - b), s }'
rm -rf "$d"
