#!/usr/bin/env bash
# The seed's fit in PyTorch (../shared/anchors/seedfit/solve_torch.py), run beside `anymove solve`
# on the same clips (issue 12). 15-30 s a clip, so every result is cached under
# $ANCHOR_CACHE (default out/anchor/) by the SHA-256 of the det.npz it solved: rerunning a bench
# regenerates the clips (deterministic), finds their results and solves only what is new.
#   source bench/anchor.sh; anchor_solve DET.npz RIG.json CREATURE.json   # prints the motion.json path
#   bash bench/anchor.sh DET.npz RIG.json CREATURE.json                  # the same, as a command
# Each entry: motion.json, time.txt (/usr/bin/time: wall s, user s, sys s, max RSS KiB; one
# thread, OMP passive) and the det's path when it was solved. Run with nice: the machine is shared.
ANCHOR_DIR=${ANCHOR_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/anchors/seedfit}
ANCHOR_CACHE=${ANCHOR_CACHE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/out/anchor}
anchor_solve() { # DET RIG CREATURE
  local det=$1 rig=$2 cr=$3 key d
  key=$(sha256sum "$det" | cut -c1-20)
  d=$ANCHOR_CACHE/$key
  if [ ! -s "$d/motion.json" ]; then
    mkdir -p "$d"
    echo "$det" > "$d/source.txt"
    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE /usr/bin/time -f '%e %U %S %M' -o "$d/time.tmp" \
      nice -n 10 /usr/bin/python3 "$ANCHOR_DIR/solve_torch.py" "$det" --rig "$rig" --creature "$cr" \
      -o "$d/motion.tmp.json" --threads 1 --quiet >"$d/log.txt" 2>&1 || { echo "anchor failed on $det: $d/log.txt" >&2; return 1; }
    mv "$d/motion.tmp.json" "$d/motion.json"
    mv "$d/time.tmp" "$d/time.txt"
  fi
  echo "$d/motion.json"
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  anchor_solve "$@"
fi
