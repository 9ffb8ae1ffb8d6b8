#!/usr/bin/env bash
# IK accuracy and speed (issue 5). For every skinned, animated glTF model under
# $AM_SHARED/data/gltf (its first 3 clips, sampled at 30 fps) and every BVH under
# $AM_SHARED/data/bvh: the true motion's FK joints (helper joints left out) go through
# `anymove ik` with the reference (pose2rot protocol: true frame 0) and without, and
# `anymove score ik` reports pose2rot's geodesic error (first 48 frames, every bone with the
# root), the whole-clip error and the FK position error. Summaries per body-plan family.
# Noisy input (issue 12): the same joints with Gaussian noise of 1 % of the body size per axis
# and 5 % of the entries missing (bench/ik_noise.py, seed 1), fitted with the reference;
# the fit's joint error over the input's (SPEC 5 noise ratio; target <= 0.5 on every clip).
# IK=analytic runs `anymove ik --analytic` (the closed form alone) for the exact rows.
# Speed: 1,000 frames of the 49-joint Husky rig on one core, best of 5 solves.
# Usage: bench/ik.sh [BUILD_DIR]   (figures for bench/RESULTS.md; raw rows in $OUT/rows.tsv)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
bin=$build/anymove
data=${AM_SHARED:-../shared}/data
out=${OUT:-$(mktemp -d /tmp/am_bench_ik.XXXXXX)}
mkdir -p "$out"
rows=$out/rows.tsv
: > "$rows"
family() {
  case "$1" in
    *Spider*) echo spider ;; *Snake*) echo snake ;; *Dolphin*) echo fish ;; *Trex*) echo dinosaur ;;
    *Frog*) echo frog ;; *Knight*|*.bvh) echo human ;; *simple_skin*) echo minimal ;;
    *) echo quadruped ;;
  esac
}
score_row() { # fam name truthdir
  local fam=$1 name=$2 d=$3
  # ik solves the rotations of a rigid rig: the truth without loc (joints that slide, as IK
  # targets and a fox's back do, are not its to recover); joints are its FK (anymove fk).
  jq 'del(.loc, .joints, .joint_names)' "$d/truth/motion.json" > "$d/truth/rigid.json"
  "$bin" fk "$d/truth/rig.json" --motion "$d/truth/rigid.json" > "$d/truth/rigid_fk.json"
  jq -s '.[0] + {joints: .[1].joints, joint_names: .[1].joint_names}' "$d/truth/rigid.json" \
    "$d/truth/rigid_fk.json" > "$d/truth/motion.json"
  local how=""
  [ "${IK:-fit}" = analytic ] && how=--analytic
  "$bin" ik "$d/truth/motion.json" --rig "$d/truth/rig.json" --reference "$d/truth/motion.json" -o "$d/ref" -q $how
  "$bin" ik "$d/truth/motion.json" --rig "$d/truth/rig.json" --no-reference -o "$d/noref" -q $how
  /usr/bin/python3 bench/ik_noise.py make "$d/truth/motion.json" "$d/truth/rig.json" "$d/noisy.npz" --seed 1
  "$bin" ik "$d/noisy.npz" --rig "$d/truth/rig.json" --reference "$d/truth/motion.json" -o "$d/noisy" -q
  /usr/bin/python3 bench/ik_noise.py score "$d/truth/motion.json" "$d/truth/rig.json" "$d/noisy.npz" \
    "$d/noisy/motion.json" > "$d/score_noisy.json"
  "$bin" score ik "$d/truth/motion.json" "$d/ref/motion.json" > "$d/score_ref.json"
  "$bin" score ik "$d/truth/motion.json" "$d/noref/motion.json" > "$d/score_noref.json"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fam" "$name" \
    "$(jq .pose2rot.frames "$d/score_ref.json")" \
    "$(jq .pose2rot.mean_deg "$d/score_ref.json")" "$(jq .pose2rot.mean_deg "$d/score_noref.json")" \
    "$(jq .all_frames.mean_deg "$d/score_ref.json")" "$(jq .all_frames.mean_deg "$d/score_noref.json")" \
    "$(jq -r '[.position.max_rel_size] | max' "$d/score_ref.json" "$d/score_noref.json" | sort -g | tail -1)" \
    "$(jq .input_pct "$d/score_noisy.json")" "$(jq .fit_pct "$d/score_noisy.json")" "$(jq .ratio "$d/score_noisy.json")" >> "$rows"
}
while IFS= read -r m; do
  clips=$("$bin" convert "$m" --list-clips 2>/dev/null | head -3 | cut -f1) || true
  [ -n "$clips" ] || continue
  for c in $clips; do
    d=$out/$(basename "$(dirname "$m")")_$(basename "$m")_$c
    if ! "$bin" convert "$m" --clip "$c" -o "$d/truth" -q 2>"$d.err"; then
      echo "skipped $m clip $c: $(cat "$d.err")" >&2
      continue
    fi
    score_row "$(family "$m")" "$(basename "$(dirname "$m")")/$(basename "$m"):$c" "$d"
  done
done < <(find "$data/gltf" -name '*.glb' -o -name '*.gltf' | sort)
while IFS= read -r b; do
  d=$out/$(basename "$b")
  # BVH is read Y up unless told: the Z-up files are listed (as a user says --up z)
  up=$(awk -F'\t' -v f="$(basename "$b")" '$1 == f {print $2}' tests/data/shared_bvh_axes.tsv)
  "$bin" convert "$b" --up "${up:-y}" -o "$d/truth" -q
  score_row "$(family "$b")" "$(basename "$b")" "$d"
done < <(find "$data/bvh" -name '*.bvh' | sort)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| family | clips | pose2rot deg, ref | pose2rot deg, no ref | whole clip, ref | whole clip, no ref | worst FK error / size | noisy: input % body | fit % body | ratio mean | ratio worst |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' '{n[$1]++; a[$1]+=$4; b[$1]+=$5; c[$1]+=$6; d[$1]+=$7; if ($8+0 > w[$1]) w[$1]=$8+0;
             i[$1]+=$9; o[$1]+=$10; r[$1]+=$11; if ($11+0 > rw[$1]) rw[$1]=$11+0;
             N++; A+=$4; B+=$5; C+=$6; D+=$7; if ($8+0 > W) W=$8+0; I+=$9; O+=$10; R+=$11; if ($11+0 > RW) RW=$11+0}
     END {for (f in n) printf "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.1e | %.3f | %.3f | %.3f | %.3f |\n", f, n[f], a[f]/n[f], b[f]/n[f], c[f]/n[f], d[f]/n[f], w[f], i[f]/n[f], o[f]/n[f], r[f]/n[f], rw[f];
          printf "| **all** | %d | **%.2f** | **%.2f** | %.2f | %.2f | %.1e | %.3f | %.3f | **%.3f** | **%.3f** |\n", N, A/N, B/N, C/N, D/N, W, I/N, O/N, R/N, RW}' "$rows" | sort
echo
echo "per clip (family, clip, frames scored, ref, no ref, whole ref, whole no ref, FK/size, noisy input %, fit %, ratio):"
column -t -s $'\t' "$rows"

# speed: Husky "Idle" (3.33 s) sampled at 300 fps = 1,000 frames, 49 bones; am_ik_run alone
# (bench/bench_ik.c: no I/O), on core 0, best and median of 15 solves, wall and thread CPU.
husky=$data/gltf/quaternius/Husky.glb
if [ -f "$husky" ]; then
  cmake --build "$build" --target bench_ik >/dev/null 2>&1 || [ -x "$build/bench_ik" ]
  d=$out/speed
  "$bin" convert "$husky" --clip Idle --fps 300 -o "$d/truth" -q
  echo
  echo "speed (Husky Idle @300 fps, with reference): $(taskset -c 0 "$build/bench_ik" "$d/truth/rig.json" "$d/truth/motion.json" 15)"
  echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ -x "$(command -v node)" ] && [ -f scripts/gltf_validate.sh ]; then
  n=0; bad=0
  for g in "$out"/*/ref/animation.glb; do
    n=$((n + 1))
    bash scripts/gltf_validate.sh "$g" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "INVALID: $g"; }
  done
  echo "glTF validator: $n animation.glb checked, $bad with errors or warnings"
fi
echo "raw rows: $rows"
