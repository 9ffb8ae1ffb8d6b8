#!/usr/bin/env bash
# Fill the anchor cache for every clip of bench/solve.sh's side-by-side (both generators, every
# creature, SEEDS): hours of one nice'd core; run it in the background ahead of the bench.
#   bash bench/anchor_all.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
AM_BIN=${1:-build}/anymove
out=${OUT:-out/bench_solve}
. bench/clips.sh
. bench/anchor.sh
for s in ${SEEDS:-1 2 3 4 5}; do
  for c in $DEV_CREATURES $HELDOUT_CREATURES; do
    for kind in ours exampy; do
      d=$out/clips/$kind/$c-$s
      make_clip "$kind" "$c" "$s" "$d"
      anchor_solve "$d/det.npz" "examples/creatures/$c/rig.json" "examples/creatures/$c/creature.json" >/dev/null &&
        echo "$kind $c $s: $(cat "$(dirname "$(anchor_solve "$d/det.npz" x x)")/time.txt")"
    done
  done
done
