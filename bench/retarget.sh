#!/usr/bin/env bash
# Retargeting (issue 13): closure, ground truth, cross-design transfers and speed.
# 1. Closure on every rig of $AM_SHARED/data (glTF characters and BVH, first clip): B = A with
#    every bone renamed and its limbs re-posed by 20-45 degrees (tests/cli/rig_variant.py):
#    A->B world joints against A's (--pose align), A->B->A local rotations (both pose modes);
#    for glTF characters also A onto A with every joint node renamed and its frame turned
#    (tests/cli/gltf_variant.py: roll and axis convention), through the GLB.
# 2. Ground truth: the Quaternius Fox and Husky carry the same clips made for each body:
#    Fox->Husky and Husky->Fox with the defaults against the target's own clip (mean joint error
#    in % of the target's body size), against the plain copy of local rotations with the root
#    scaled by the leg ratio (the baseline).
# 3. Across designs (no ground truth): Khronos Fox <-> Quaternius Fox and Husky, CMU and
#    AnimatedDrawings BVH -> the Knight: plants, foot slide, feet below the ground, chain
#    directions, from each run's report.json.
# 4. Speed: bench_retarget (1,000 frames onto a 60-bone character, one thread), and instruction
#    counts under callgrind when valgrind is there.
# Every GLB written is validated and played in three.js against our FK.
# Usage: bench/retarget.sh [BUILD_DIR]   (tables on stdout; raw rows in $OUT)
#        SECTIONS="2 3" bench/retarget.sh ...  runs only those sections (default "1 2 3 4");
#        BIN=path/anymove scores another binary (a build before a change) with this script.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
bin=${BIN:-$build/anymove}
sections=" ${SECTIONS:-1 2 3 4} "
run() { case "$sections" in *" $1 "*) return 0 ;; esac; return 1; }
data=${AM_SHARED:-../shared}/data
out=${OUT:-$(mktemp -d /tmp/am_bench_rt.XXXXXX)}
py=/usr/bin/python3
mkdir -p "$out"
echo "outputs in $out" >&2
failures=0
glb_check() { # GLB RIG MOTION FPS [SCALE]: validator + three.js (failures counted, not fatal)
  if ! bash scripts/gltf_validate.sh "$1" | grep -q '"errors":0,"warnings":0'; then
    echo "VALIDATOR FAILED: $1" >&2; failures=$((failures + 1)); fi
  "$bin" fk "$2" --motion "$3" -q > "$1.fk.json"
  if ! node scripts/three_check.mjs "$1" "$2" "$1.fk.json" "$4" "" "${5:-1}" > "$1.three.json"; then
    echo "THREE.JS FAILED: $1 $(cat "$1.three.json")" >&2; failures=$((failures + 1)); fi
  checked=$((checked + 1))
}
checked=0
axis_of() { awk -F'\t' -v f="$1" '$1 == f {print $2}' tests/data/shared_bvh_axes.tsv; }

models=$(find "$data/gltf" -name '*.glb' -o -name '*.gltf' | sort)
bvhs=$(find "$data/bvh" -name '*.bvh' | sort)
Q=$data/gltf/quaternius

# ---- 1. closure ----------------------------------------------------------------------------
if run 1; then
rows=$out/closure.tsv
: > "$rows"
for m in $models $bvhs; do
  name=$(basename "$m")
  d=$out/closure/$name
  mkdir -p "$d"
  case "$m" in
    *.bvh) up=$(axis_of "$name"); "$bin" convert "$m" --up "${up:-y}" -o "$d/a" -q 2>/dev/null || continue ;;
    *) "$bin" convert "$m" -o "$d/a" -q 2>/dev/null || continue ;;
  esac
  $py tests/cli/rig_variant.py "$bin" "$d/a/rig.json" "$d/b/rig.json" --seed 5 --prefix v
  "$bin" retarget "$d/a/motion.json" --source-rig "$d/a/rig.json" --to "$d/b/rig.json" --ik none -o "$d/ab" -q
  # the closure error, and its lower bound for any rotation-only motion of B (SPEC 2.2 frames
  # near -Y are not orthonormal: docs/retarget.md)
  read -r joints lbound lseg lrest < <($py bench/retarget_score.py bound "$d/a/motion.json" "$d/ab/motion.json" "$d/a/rig.json" "$d/b/rig.json" "$d/b/rename.json")
  rot_align=$("$bin" retarget "$d/ab/motion.json" --source-rig "$d/b/rig.json" --to "$d/a/rig.json" --ik none -o "$d/aba" -q &&
              $py bench/retarget_score.py rot "$d/a/motion.json" "$d/aba/motion.json" "$d/a/rig.json")
  "$bin" retarget "$d/a/motion.json" --source-rig "$d/a/rig.json" --to "$d/b/rig.json" --pose delta --ik none -o "$d/abd" -q
  rot_delta=$("$bin" retarget "$d/abd/motion.json" --source-rig "$d/b/rig.json" --to "$d/a/rig.json" --pose delta --ik none -o "$d/abad" -q &&
              $py bench/retarget_score.py rot "$d/a/motion.json" "$d/abad/motion.json" "$d/a/rig.json")
  roll=-
  case "$m" in
    *.glb)
      $py tests/cli/gltf_variant.py "$m" "$d/variant.glb" --seed 5 --prefix joint
      "$bin" retarget "$m" --fps 30 --to "$d/variant.glb" --ik none -o "$d/roll" -q
      roll=$($py bench/retarget_score.py match "$d/a/motion.json" "$d/roll/motion.json" "$d/a/rig.json")
      glb_check "$d/roll/animation.glb" "$d/roll/rig.json" "$d/roll/motion.json" 30 1 ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(jq '.bones | length' "$d/a/rig.json")" "$joints" "$lbound" "$lseg" "$lrest" "$rot_align" "$rot_delta" "$roll" >> "$rows"
done
echo "## closure (A -> B re-posed and renamed; world joints / body size; A->B->A max local rotation, rad)"
echo "| rig | bones | A->B joints (align) | lower bound (any rotations) | its segment | every other joint | A->B->A rot (align) | A->B->A rot (delta) | A onto its re-framed glTF: joints |"
echo "|---|---:|---:|---:|---|---:|---:|---:|---:|"
awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}' "$rows"

fi

# ---- 2. ground truth: Fox <-> Husky ------------------------------------------------------------
if run 2; then
gt=$out/gt.tsv
: > "$gt"
for pair in "Fox Husky" "Husky Fox"; do
  set -- $pair
  s=$1 t=$2
  for clip in Walk Gallop Idle Idle_2 Idle_2_HeadLow Gallop_Jump Jump_ToIdle Death Attack Eating Idle_HitReact_Left Idle_HitReact_Right; do
    d=$out/gt/${s}_${t}_$clip
    mkdir -p "$d"
    "$bin" convert "$Q/$s.glb" --clip "AnimalArmature|$clip" --fps 24 -o "$d/src" -q 2>/dev/null || continue
    "$bin" convert "$Q/$t.glb" --clip "AnimalArmature|$clip" --fps 24 -o "$d/own" -q 2>/dev/null || continue
    for mode in align delta; do
      "$bin" retarget "$Q/$s.glb" --clip "AnimalArmature|$clip" --fps 24 --to "$Q/$t.glb" --pose $mode -o "$d/$mode" -q
    done
    k=$(jq .root_motion.scale_horizontal "$d/align/report.json")
    $py bench/retarget_score.py baseline "$d/src/motion.json" "$d/src/rig.json" "$d/own/rig.json" "$k" "$d/base.json"
    "$bin" fk "$d/own/rig.json" --motion "$d/base.json" -q > "$d/base_fk.json"
    frames=$(jq '.trans | length' "$d/own/motion.json")
    sframes=$(jq '.trans | length' "$d/src/motion.json")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s->$t" "$clip" "$sframes/$frames" \
      "$($py bench/retarget_score.py gt "$d/align/motion.json" "$d/own/motion.json" "$d/own/rig.json")" \
      "$($py bench/retarget_score.py gt "$d/delta/motion.json" "$d/own/motion.json" "$d/own/rig.json")" \
      "$($py bench/retarget_score.py gt "$d/base_fk.json" "$d/own/motion.json" "$d/own/rig.json")" \
      "$(jq .foot_slide_mm.target_max "$d/align/report.json")" "$(jq .feet_below_ground_max_mm "$d/align/report.json")" >> "$gt"
    glb_check "$d/align/animation.glb" "$d/align/rig.json" "$d/align/motion.json" 24
  done
done
echo
echo "## ground truth (mean joint error, % of the target's body size; per joint / SPEC 5 chamfer)"
echo "| pair | clip | frames src/own | ours, defaults (align) | ours, --pose delta | baseline: local copy, root scaled | target slide max mm | below ground max mm |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %.3g | %.3g |\n", $1, $2, $3, $4, $5, $6, $7, $8}' "$gt"

fi

# ---- 3. across designs --------------------------------------------------------------------------
if run 3; then
cross=$out/cross.tsv
: > "$cross"
K=$data/gltf/khronos_fox/Fox.glb
run_cross() { # label SOURCE-ARGS... -- TARGET-ARGS...
  local label=$1 d=$out/cross/$1
  shift
  mkdir -p "$d"
  local src=() dst=()
  while [ "$1" != "--" ]; do src+=("$1"); shift; done
  shift
  dst=("$@")
  "$bin" retarget "${src[@]}" "${dst[@]}" -o "$d" -q
  "$bin" retarget "${src[@]}" "${dst[@]}" --print-map -q > "$d/printed_map.json"
  local fps scale=1
  fps=$(jq .fps "$d/motion.json")
  case " ${dst[*]} " in *" --target-scale 0.01 "*) scale=0.01 ;; esac
  glb_check "$d/animation.glb" "$d/rig.json" "$d/motion.json" "$fps" "$scale"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$(jq '.trans | length' "$d/motion.json")" \
    "$(jq .foot_slide_mm.plants "$d/report.json")" "$(jq .foot_slide_mm.source_mean "$d/report.json")" \
    "$(jq .foot_slide_mm.target_mean "$d/report.json")" "$(jq .foot_slide_mm.target_max "$d/report.json")" \
    "$(jq .feet_below_ground_max_mm "$d/report.json")" "$(jq .chain_direction_deg.mean "$d/report.json")" >> "$cross"
}
for clip in Survey Walk Run; do
  run_cross "KhronosFox_${clip}->QFox" "$K" --scale 0.01 --clip "$clip" -- --to "$Q/Fox.glb"
  run_cross "KhronosFox_${clip}->Husky" "$K" --scale 0.01 --clip "$clip" -- --to "$Q/Husky.glb"
done
for s in Fox Husky; do
  for clip in Walk Gallop Idle; do
    run_cross "Q${s}_${clip}->KhronosFox" "$Q/$s.glb" --clip "AnimalArmature|$clip" -- --to "$K" --target-scale 0.01
  done
done
for b in $bvhs; do
  name=$(basename "$b" .bvh)
  up=$(axis_of "$name.bvh")
  run_cross "${name}->Knight" "$b" --up "${up:-y}" --scale 0.01 -- --to "$Q/KnightCharacter.glb"
done
echo
echo "## across designs (defaults: align, root scaled, feet IK)"
echo "| transfer | frames | plants | source slide mean mm | target slide mean mm | target slide max mm | feet below ground max mm | chain direction mean deg |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
awk -F'\t' '{printf "| %s | %s | %s | %.3g | %.3g | %.3g | %.3g | %.2f |\n", $1, $2, $3, $4, $5, $6, $7, $8}' "$cross"

fi

echo
echo "GLBs written: $checked, each validated (0 errors, 0 warnings) and played in three.js against our FK: $failures failures"

# ---- 4. speed --------------------------------------------------------------------------------------
if run 4; then
echo
echo "## speed (bench_retarget: 1,000 frames onto a 60-bone character, one thread, best of 7)"
taskset -c 0 "$build/bench_retarget" "$data" 7
if command -v valgrind >/dev/null 2>&1; then
  for mode in transfer feet; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$mode" "$build/bench_retarget" "$data" 1 "$mode" > /dev/null 2> "$out/cg.$mode.log"
    echo "callgrind $mode: $(grep -E 'Collected' "$out/cg.$mode.log" | awk '{print $4}') instructions (setup included)"
  done
fi
fi
