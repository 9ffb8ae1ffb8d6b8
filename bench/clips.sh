#!/usr/bin/env bash
# The two-view exam clips of issue 12's side-by-side (sourced by bench/solve.sh and bench/anchor_all.sh).
# Two generators on the same creatures and settings (150 frames at 30 fps, 3 px noise, 2 %
# dropouts, 1 % front L/R swaps, a front lag of 0 / +3 / -5 frames by seed mod 3):
#   ours:   `anymove exam` (src/capture/exam.c)
#   exampy: the seed fit's own generator, ../shared/anchors/seedfit/exam.py (independent code)
# Creatures: DEV were used to choose settings; HELDOUT only to report (declared in
# bench/RESULTS.md before any result of the new fitter was looked at).
DEV_CREATURES="wolf dino spider"
HELDOUT_CREATURES="trex lizard bird hexapod snake"
clip_lag() { local l=(0 3 -5); echo "${l[$(($1 % 3))]}"; }
make_clip() { # KIND CREATURE SEED DIR [extra exam args]
  local kind=$1 c=$2 s=$3 d=$4 C
  shift 4
  C=${CREATURES_DIR:-examples/creatures}/$c
  [ -s "$d/det.npz" ] && [ -s "$d/truth.npz" ] && return 0
  mkdir -p "$d"
  if [ "$kind" = ours ]; then
    "${AM_BIN:-build/anymove}" exam --rig "$C/rig.json" --creature "$C/creature.json" --seed "$s" --frames 150 --noise 3 \
      --dropout 0.02 --swap 0.01 --lag "$(clip_lag "$s")" "$@" -o "$d" -q
  else
    nice -n 10 /usr/bin/python3 "${ANCHOR_DIR:-../shared/anchors/seedfit}/exam.py" --rig "$C/rig.json" \
      --creature "$C/creature.json" --seed "$s" --frames 150 --noise 3 --dropout 0.02 --swap-rate 0.01 \
      --lag "$(clip_lag "$s")" "$@" --out "$d" > "$d/exam.log"
  fi
}
