#!/usr/bin/env bash
# Two-view capture, side by side with the seed's fit in PyTorch (issue 12), SPEC 5 metrics.
# - Side by side: every creature of bench/clips.sh (DEV chose settings, HELDOUT only report) x
#   SEEDS (1..5), clips of both generators (`anymove exam` and the seed fit's exam.py: 150 frames,
#   3 px noise, 2 % dropouts, 1 % front L/R swaps, front lag 0 / +3 / -5), solved by `anymove solve`
#   and by solve_torch.py (bench/anchor.sh: cached by det hash), both scored by
#   `anymove score solve` (per-joint error in % of body size, p95, foot slide over true plants).
# - Stress (ours only): dev creatures plus 3 % gross outliers and front heights squashed 15 %.
# - Speed: interleaved pairs on one core each (ours, then the anchor, SPEED_CLIPS clips x
#   SPEED_REPS), whole commands, CPU seconds (user + sys); the ratio is per pair.
# Usage: bench/solve.sh [BUILD_DIR]   (rows in $OUT/*.tsv; markdown on stdout)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
export AM_BIN=$build/anymove
bin=$AM_BIN
out=${OUT:-out/bench_solve}
seeds=${SEEDS:-"1 2 3 4 5"}
mkdir -p "$out"
. bench/clips.sh
. bench/anchor.sh
export OMP_NUM_THREADS=1
timefmt='%e %U %S %M'
group() { case " $DEV_CREATURES " in *" $1 "*) echo dev ;; *) echo held-out ;; esac; }
score_cols() { # truth motion -> mean_pct p95_pct slide_true_mm recall
  "$bin" score solve "$1" "$2" | jq -r '[.joint_error_pct_body.mean, .joint_error_pct_body.p95, .foot_slide_mm.mean,
    .contacts.recall] | map(if . == null then "nan" else . end) | @tsv'
}

side_by_side() {
  local rows=$out/side.tsv
  printf 'kind\tcreature\tgroup\tseed\tours_mean\tours_p95\tours_slide\tours_recall\tanchor_mean\tanchor_p95\tanchor_slide\tanchor_recall\tours_cpu\tanchor_cpu\n' > "$rows"
  for kind in ours exampy; do
    for c in $DEV_CREATURES $HELDOUT_CREATURES; do
      local C=examples/creatures/$c
      for s in $seeds; do
        local d=$out/clips/$kind/$c-$s
        make_clip "$kind" "$c" "$s" "$d"
        /usr/bin/time -f "$timefmt" -o "$d/ours_time.txt" "$bin" solve "$d/det.npz" --rig "$C/rig.json" \
          --creature "$C/creature.json" -o "$d/ours" -q
        local am
        am=$(anchor_solve "$d/det.npz" "$C/rig.json" "$C/creature.json")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$c" "$(group "$c")" "$s" \
          "$(score_cols "$d/truth.npz" "$d/ours/motion.json")" "$(score_cols "$d/truth.npz" "$am")" \
          "$(awk '{printf "%.3f", $2 + $3}' "$d/ours_time.txt")" \
          "$(awk '{printf "%.3f", $2 + $3}' "$(dirname "$am")/time.txt")" >> "$rows"
      done
    done
  done
  echo "#### side by side: per creature (means over seeds $seeds)"
  echo
  echo "| exam | creature | group | clips | ours mean % | ours p95 % | anchor mean % | anchor p95 % | ours / anchor | ours slide mm | anchor slide mm |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 { k = $1 "|" $2 "|" $3; n[k]++; om[k] += $5; op[k] += $6; os[k] += $7; am[k] += $9; ap[k] += $10; as[k] += $11 }
    END { for (k in n) { split(k, f, "|"); printf "| %s | %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n", f[1], f[2], f[3], n[k],
          om[k]/n[k], op[k]/n[k], am[k]/n[k], ap[k]/n[k], om[k]/am[k], os[k]/n[k], as[k]/n[k] } }' "$rows" | sort
  echo
  echo "| exam | group | clips | ours mean % | ours p95 % | anchor mean % | anchor p95 % | ours / anchor | worst creature (ours mean %) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for kind in ours exampy all; do
    for g in dev held-out all; do
      awk -F'\t' -v K="$kind" -v G="$g" 'NR > 1 && (K == "all" || $1 == K) && (G == "all" || $3 == G) {
          n++; om += $5; op += $6; am += $9; ap += $10; c[$2] += $5; cn[$2]++ }
        END { if (!n) exit; w = ""; wv = -1; for (k in c) if (c[k]/cn[k] > wv) { wv = c[k]/cn[k]; w = k }
              printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %s %.3f |\n", K, G, n, om/n, op/n, am/n, ap/n, om/am, w, wv }' "$out/side.tsv"
    done
  done
  echo
}

stress() {
  local rows=$out/stress.tsv
  printf 'creature\tseed\tmean_pct\tp95_pct\tslide_mm\trecall\n' > "$rows"
  for c in $DEV_CREATURES; do
    local C=examples/creatures/$c
    for s in $seeds; do
      local d=$out/stress/$c-$s
      make_clip ours "$c" "$s" "$d" --outliers 0.03 --squash 0.15
      "$bin" solve "$d/det.npz" --rig "$C/rig.json" --creature "$C/creature.json" -o "$d/ours" -q
      printf '%s\t%s\t%s\n' "$c" "$s" "$(score_cols "$d/truth.npz" "$d/ours/motion.json")" >> "$rows"
    done
  done
  echo "#### stress (ours, dev creatures, 3 % outliers, front squash 15 %)"
  echo
  awk -F'\t' 'NR > 1 { n[$1]++; m[$1] += $3; p[$1] += $4; N++; M += $3; P += $4 }
    END { for (k in n) printf "- %s: mean %.3f %%, p95 %.3f %%\n", k, m[k]/n[k], p[k]/n[k]; printf "- all: mean %.3f %%, p95 %.3f %%\n", M/N, P/N }' "$rows"
  echo
}

speed() {
  local rows=$out/speed.tsv reps=${SPEED_REPS:-2}
  printf 'clip\trep\tours_cpu\tanchor_cpu\tratio\n' > "$rows"
  for clip in ${SPEED_CLIPS:-"ours/wolf-1 ours/trex-2 exampy/hexapod-3"}; do
    local d=$out/clips/$clip c=${clip#*/}
    c=${c%-*}
    local C=examples/creatures/$c
    for r in $(seq 1 "$reps"); do
      taskset -c 0 /usr/bin/time -f "$timefmt" -o "$d/t_ours.txt" "$bin" solve "$d/det.npz" --rig "$C/rig.json" \
        --creature "$C/creature.json" -o "$d/speed" -q
      OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE taskset -c 0 /usr/bin/time -f "$timefmt" -o "$d/t_anchor.txt" \
        /usr/bin/python3 "$ANCHOR_DIR/solve_torch.py" "$d/det.npz" --rig "$C/rig.json" --creature "$C/creature.json" \
        -o "$d/speed_anchor.json" --threads 1 --quiet
      local a b
      a=$(awk '{printf "%.3f", $2 + $3}' "$d/t_ours.txt")
      b=$(awk '{printf "%.3f", $2 + $3}' "$d/t_anchor.txt")
      printf '%s\t%s\t%s\t%s\t%s\n' "$clip" "$r" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", b / a}')" >> "$rows"
    done
  done
  echo "#### speed: whole commands on core 0, interleaved (ours, then the anchor), CPU s"
  echo
  echo "| clip | rep | ours | anchor | anchor / ours |"
  echo "|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$rows"
  sort -t$'\t' -k5,5g <(tail -n +2 "$rows") | awk -F'\t' '{r[NR] = $5} END { printf "\nmedian anchor / ours: %.1fx over %d pairs\n\n", (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), NR }'
}

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "anymove $(git rev-parse --short HEAD 2>/dev/null || echo '?'), DEV: $DEV_CREATURES, HELDOUT: $HELDOUT_CREATURES"
  echo
  [ "${SIDE:-1}" = 1 ] && side_by_side
  [ "${STRESS:-1}" = 1 ] && stress
  [ "${SPEED:-1}" = 1 ] && speed
} | tee "$out/summary.md"
echo "raw rows and clips in $out" >&2
