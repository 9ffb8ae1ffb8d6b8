#!/usr/bin/env bash
# Writes bench/t2r/split.txt: every candidate clip of the Track2Rig benchmark (issue 10) and its
# half. Run once, before any result was seen (2026-12-02 04:55 UTC); the committed file is the
# split, this script only records how it was made. A clip without a name is its index (#0).
#   bash bench/t2r/make_split.sh [BIN]
set -euo pipefail
BIN=${1:-build/anymove}
HERE=$(cd "$(dirname "$0")" && pwd)
D=${AM_SHARED:-$HERE/../../../shared}/data/gltf
PY=/usr/bin/python3
names=()
for f in "$D"/quaternius/*.glb "$D"/khronos_fox/Fox.glb "$D"/khronos_simpleskin/simple_skin.gltf; do
  m=$(basename "$(dirname "$f")")-$(basename "${f%.*}")
  while IFS= read -r line; do
    i=$(printf '%s' "$line" | cut -f1); c=$(printf '%s' "$line" | cut -f2)
    [ -n "$c" ] || c="#$i"
    names+=("gltf:$m:${c##*|}")
  done < <("$BIN" bake "$f" --list-clips)
done
while read -r p gaits; do
  for g in $gaits; do for s in 1 2 3 4; do names+=("gen2:$p-$g-s$s"); done; done
done < <($PY "$HERE/gen2.py" --list)
names+=(single:dembones_sample single:wolf single:flamingo)
# K raised from gltf=1,gen2=1 to 3 and 2 at 04:45 UTC, once the first run showed the anchors take
# seconds on these clips (before any glTF or gen2 result was looked at); the halves did not change.
$PY "$HERE/t2r.py" split "$HERE/split.txt" --per-group gltf=3,gen2=2,single=1 "${names[@]}"
