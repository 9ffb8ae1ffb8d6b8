#!/usr/bin/env bash
# `make demo`: the main jobs on the bundled examples. Outputs go to out/demo/.
set -euo pipefail
bin="${1:-build/anymove}"
cd "$(dirname "$0")/.."
out=out/demo
mkdir -p "$out"

echo "== export: the bundled walker's walk as an animated skeleton glTF"
"$bin" info examples/walker/rig.json | head -n 3
"$bin" export examples/walker/walk.json --rig examples/walker/rig.json -o "$out/walker_walk.glb"
"$bin" info "$out/walker_walk.glb"
echo "wrote $out/walker_walk.glb"

echo "== rig: Track2Rig on a bundled synthetic grison (mustelid) walk"
"$bin" rig examples/tracks/grison_walk.tracks.npz -o "$out/grison_rig" --bones 15
"$bin" score rig --truth examples/tracks/grison_walk.truth.npz "$out/grison_rig"
echo "wrote $out/grison_rig/rig.glb"

echo "== capture: a random wolf motion read in two views (exam), fitted back (solve), scored"
W=examples/creatures/wolf
"$bin" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed 1 --lag 3 -o "$out/wolf_exam"
"$bin" solve "$out/wolf_exam/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$out/wolf_solve" --report --render
"$bin" score solve "$out/wolf_exam/truth.npz" "$out/wolf_solve/motion.json"
echo "wrote $out/wolf_solve/{motion.json,animation.glb,report.txt}"
"$bin" showcase "$out/wolf_solve" --rig "$W/rig.json" --det "$out/wolf_exam/det.npz" --creature "$W/creature.json" -o "$out/wolf_solve/showcase.mp4"
echo "wrote $out/wolf_solve/showcase.mp4"
echo "report: $(pwd)/$out/wolf_solve/report.html"
