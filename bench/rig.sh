#!/usr/bin/env bash
# Track2Rig benchmark (issue 10): `anymove rig` side by side with two independent anchors on data
# the method was not designed on. Not a timed test; figures go to bench/RESULTS.md.
#   bash bench/rig.sh [BIN] [OUT]            (defaults: build/anymove, out/bench-rig)
#
# Methods, per clip, all given the same bone count:
#   ours-MODE  `BIN rig TRACKS --bones B [--rig MODE] --threads 1`, scored by `BIN score rig
#              --truth` (SPEC 5 on the written rig.json + skin.npz + motion.json)
#   ssdr       ../shared/anchors/ssdr/ssdr.py (plain SSDR, Le & Deng 2012 on visible entries, a
#              Le & Deng 2014 skeleton), 30 iterations, scored by its score.py on its recon.npy
#              (its free bones) and pred_joints.npy
#   dembones   EA's Dem Bones through bench/t2r/dembones_run.cpp (clean clips only: it has no
#              notion of hidden entries), scored by the same score.py
# Anchor outputs do not depend on our code: they are cached under OUT/runs/CLIP/{ssdr,dembones}
# (delete them to recompute); ours is rerun every time.
#
# Data (bench/t2r/split.txt fixes DEV / HELD-OUT and which clips run; it was written before any
# result was seen). Sets (RIG_SETS, default all):
#   sample         Dem Bones' sample (../shared/data/meshes/dembones_sample), 5 / 10 / 20 bones
#   wolf wolf-deg  Hyperspectral wolf poses (true skeleton and weights), clean / degraded
#   flamingo flamingo-deg   the Flamingo (morph targets, no true joints), 10 bones
#   gltf gltf-deg  every skinned glTF model in ../shared/data/gltf, `anymove bake` clean /
#                  degraded (--noise 0.003 --hidden 0.15 --seed 8), one held-out clip per model
#   gen2 gen2-clean   bench/t2r/gen2.py (not `anymove synth`): one held-out clip per plan and
#                  gait, with its seeded degradations / with none
# Clips are merged (coincident seam vertices) and subsampled to RIG_MAX_POINTS (1500).
#
# Env: RIG_SETS, RIG_HALF (HELD-OUT, or DEV to run ours alone on the development half),
#      RIG_MODES (ours' --rig modes, e.g. "auto free"; default "default" = no --rig flag),
#      RIG_ANCHORS=0 skips the anchors, RIG_SPEED=1 adds the speed / memory table (ours vs
#      Dem Bones, interleaved, RIG_REPEAT runs each, default 3, median; RIG_SPEED_BASE=BIN2 times a
#      second anymove, e.g. an earlier build, in the same interleaving), RIG_MAX_POINTS.
#
# Bench-only dependencies (not in scripts/deps.sh, no test needs them): Debian python3-numpy
# python3-scipy (/usr/bin/python3, the anchors' interpreter), libeigen3-dev and g++ for Dem Bones,
# and Dem Bones itself fetched OUTSIDE the repo:
#   git clone https://github.com/electronicarts/dem-bones /work/ext/dembones   (or DEMBONES=DIR)
# Without it the Dem Bones column is skipped with a message.
set -uo pipefail
BIN=${1:-build/anymove}
OUT=${2:-out/bench-rig}
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${AM_SHARED:-$HERE/../../shared}
PY=/usr/bin/python3
T2R="$PY $HERE/t2r/t2r.py"
SSDR=$SHARED/anchors/ssdr
DEMBONES=${DEMBONES:-/work/ext/dembones}
SETS=${RIG_SETS:-sample wolf wolf-deg flamingo flamingo-deg gltf gltf-deg gen2 gen2-clean}
HALF=${RIG_HALF:-HELD-OUT}
MODES=${RIG_MODES:-default}
MAXPTS=${RIG_MAX_POINTS:-1500}
CSV=$OUT/results.csv
export ANYMOVE=$BIN AM_SHARED=$SHARED
# one thread everywhere (2-core machine shared with others; the anchors are not timed targets)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$OUT/clips" "$OUT/runs" "$OUT/bin"
: > "$CSV.tmp"

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc --all) cores;" \
  "load at start $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%F %H:%M UTC'); $("$BIN" --version 2>&1 | head -1);" \
  "commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null)"

# ---- Dem Bones driver (compiled here against the fetched headers; never committed) ----
DB=""
if [ "${RIG_ANCHORS:-1}" != 0 ]; then
  if [ -f "$DEMBONES/include/DemBones/DemBonesExt.h" ] && [ -d /usr/include/eigen3 ]; then
    DB=$OUT/bin/dembones_run
    if [ ! -x "$DB" ] || [ "$HERE/t2r/dembones_run.cpp" -nt "$DB" ]; then
      log "building the Dem Bones driver"
      nice -n 10 g++ -std=c++17 -O3 -march=native -DNDEBUG -w -I/usr/include/eigen3 -I"$DEMBONES/include" \
        "$HERE/t2r/dembones_run.cpp" -o "$DB" || DB=""
    fi
    echo "Dem Bones: $(git --git-dir="$DEMBONES/.git" rev-parse --short HEAD 2>/dev/null || echo "sources in $DEMBONES")," \
      "driver bench/t2r/dembones_run.cpp, g++ -O3 -march=native, one thread, its defaults (nnz 8, 30 iterations, bindUpdate 2)"
  else
    echo "Dem Bones: skipped ($DEMBONES/include/DemBones/DemBonesExt.h or /usr/include/eigen3 missing; see the header of bench/rig.sh)"
  fi
fi

# the clips of the split to run: names of the given group prefix, this half, marked run
clips_of() { awk -v p="$1" -v h="$HALF" '!/^#/ && index($0, p) == 1 && $(NF-2) == h && ($NF == "run" || h == "DEV") {
  $NF = ""; $(NF-1) = ""; $(NF-2) = ""; sub(/ +$/, ""); print }' "$HERE/t2r/split.txt"; }

# prepare CLIPDIR from a baked/generated RAW dir (merge seams, subsample)
prep() { [ -f "$2/truth.npz" ] || $T2R prep "$1" "$2" --max-points "$MAXPTS" >&2; }

# run_clip SET CLIP DIR BONES [clean]: every method on one clip
run_clip() {
  local set=$1 name=$2 dir=$3 bones=$4 clean=${5:-} id r t0 t1 m flag
  id=$(safe "$set-$name")-b$bones
  r=$OUT/runs/$id
  mkdir -p "$r"
  for m in $MODES; do
    flag=(); [ "$m" = default ] || flag=(--rig "$m")
    t0=$(date +%s.%N)
    if "$BIN" rig "$dir/tracks.npz" -o "$r/ours-$m" --bones "$bones" "${flag[@]}" --threads 1 -q 2> "$r/ours-$m.err"; then
      t1=$(date +%s.%N)
      $T2R ours "$r/ours-$m" "$dir/truth.npz" --row "$set,$name,ours-$m,$bones" --csv "$CSV.tmp" \
        --seconds "$(echo "$t1 - $t0" | bc)" > "$r/ours-$m.json" || echo "$set,$name,ours-$m,$bones,,FAIL,,,," >> "$CSV.tmp"
    else
      log "ours-$m failed on $name: $(tail -1 "$r/ours-$m.err")"
      echo "$set,$name,ours-$m,$bones,,FAIL,,,," >> "$CSV.tmp"
    fi
  done
  [ "${RIG_ANCHORS:-1}" != 0 ] && [ "$HALF" = HELD-OUT ] || return 0
  if [ ! -f "$r/ssdr/recon.npy" ]; then
    log "ssdr on $name ($bones bones)"
    t0=$(date +%s.%N)
    nice -n 10 $PY "$SSDR/ssdr.py" "$dir/tracks.npz" --bones "$bones" --iters 30 -o "$r/ssdr" -q 2> "$r/ssdr.err" ||
      log "ssdr failed on $name: $(tail -1 "$r/ssdr.err")"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc > "$r/ssdr.seconds"
  fi
  if [ -f "$r/ssdr/recon.npy" ]; then
    $T2R score --truth "$dir/truth.npz" --tracks "$dir/tracks.npz" --recon "$r/ssdr/recon.npy" \
      --joints "$r/ssdr/pred_joints.npy" --row "$set,$name,ssdr,$bones" --csv "$CSV.tmp" \
      --seconds "$(cat "$r/ssdr.seconds" 2>/dev/null)" > "$r/ssdr.json"
  else
    echo "$set,$name,ssdr,$bones,,FAIL,,,," >> "$CSV.tmp"
  fi
  [ -n "$clean" ] && [ -n "$DB" ] || return 0
  if [ ! -f "$r/dembones/recon.npy" ]; then
    log "dembones on $name ($bones bones)"
    mkdir -p "$r/dembones"
    $T2R dump "$dir/tracks.npz" "$r/dembones/in.bin" &&
      nice -n 10 "$DB" "$r/dembones/in.bin" "$r/dembones" "$bones" 2> "$r/dembones.err" ||
      log "dembones failed on $name: $(tail -1 "$r/dembones.err")"
    rm -f "$r/dembones/in.bin"
  fi
  if [ -f "$r/dembones/recon.npy" ]; then
    $T2R score --truth "$dir/truth.npz" --tracks "$dir/tracks.npz" --recon "$r/dembones/recon.npy" \
      --joints "$r/dembones/pred_joints.npy" --row "$set,$name,dembones,$bones" --csv "$CSV.tmp" \
      --seconds "$(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$r/dembones/dembones_log.json")" > "$r/dembones.json"
  else
    echo "$set,$name,dembones,$bones,,FAIL,,,," >> "$CSV.tmp"
  fi
}

bones_of() { $PY -c "import numpy as np,sys; print(int(np.load(sys.argv[1])['bones']))" "$1"; }

for set in $SETS; do
  log "set $set"
  case $set in
    sample)
      [ "$HALF" = HELD-OUT ] || continue
      c=$OUT/clips/dembones_sample
      [ -f "$c/truth.npz" ] || $T2R sample "$c"
      for b in 5 10 20; do run_clip sample "dembones_sample@$b" "$c" "$b" clean; done ;;
    wolf|wolf-deg)
      [ "$HALF" = HELD-OUT ] || continue
      c=$OUT/clips/$set
      if [ "$set" = wolf ]; then [ -f "$c/truth.npz" ] || $T2R wolf "$c" >&2; cl=clean
      else [ -f "$c/truth.npz" ] || $T2R wolf "$c" --noise 0.003 --hidden 0.15 --seed 8 >&2; cl=""; fi
      run_clip "$set" wolf "$c" 21 $cl ;;
    flamingo|flamingo-deg)
      [ "$HALF" = HELD-OUT ] || continue
      raw=$OUT/clips/raw-$set; c=$OUT/clips/$set
      if [ "$set" = flamingo ]; then deg=(); cl=clean; else deg=(--noise 0.003 --hidden 0.15 --seed 8); cl=""; fi
      [ -f "$raw/truth.npz" ] || "$BIN" bake "$SHARED/data/gltf/Flamingo.glb" "${deg[@]}" -o "$raw" -q
      prep "$raw" "$c"
      run_clip "$set" flamingo "$c" 10 $cl ;;
    gltf|gltf-deg)
      while IFS= read -r name; do
        rest=${name#gltf:}; model=${rest%%:*}; clip=${rest#*:}
        f=$(ls "$SHARED/data/gltf/${model%%-*}/${model#*-}".gl* 2>/dev/null | head -1)
        [ -n "$f" ] || { log "no file for $name"; continue; }
        [ "${clip:0:1}" = "#" ] && clip=${clip:1}
        raw=$OUT/clips/raw-$set-$(safe "$name"); c=$OUT/clips/$set-$(safe "$name")
        if [ "$set" = gltf ]; then deg=(); cl=clean; else deg=(--noise 0.003 --hidden 0.15 --seed 8); cl=""; fi
        [ -f "$raw/truth.npz" ] || "$BIN" bake "$f" --clip "$clip" "${deg[@]}" -o "$raw" -q || continue
        prep "$raw" "$c"
        run_clip "$set" "$name" "$c" "$(bones_of "$c/truth.npz")" $cl
      done < <(clips_of "gltf:") ;;
    gen2|gen2-clean)
      while IFS= read -r name; do
        spec=${name#gen2:}; seed=${spec##*-s}; pg=${spec%-s*}; plan=${pg%%-*}; gait=${pg#*-}
        c=$OUT/clips/$set-$(safe "$name")
        if [ "$set" = gen2 ]; then deg=(); cl=""; else deg=(--noise 0 --hidden 0); cl=clean; fi
        [ -f "$c/truth.npz" ] || $PY "$HERE/t2r/gen2.py" --plan "$plan" --gait "$gait" --seed "$seed" \
          --points "$MAXPTS" --frames 150 "${deg[@]}" -o "$c" >&2
        run_clip "$set" "$name" "$c" "$(bones_of "$c/truth.npz")" $cl
      done < <(clips_of "gen2:") ;;
    *) log "unknown set $set" ;;
  esac
done
mv "$CSV.tmp" "$CSV"
echo "half: $HALF; load at end $(cut -d' ' -f1-3 /proc/loadavg); results: $CSV"
$T2R table "$CSV"

# ---- speed and memory: the whole command, one thread, ours and Dem Bones interleaved ----
if [ "${RIG_SPEED:-0}" != 0 ]; then
  REPEAT=${RIG_REPEAT:-3}
  median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
  echo
  echo "### Speed (no hidden entries, noise 0.3%; whole \`rig\` command vs the Dem Bones driver reading a raw dump; median of $REPEAT, interleaved)"
  echo "| N | T | bones | ours wall s | ours user s | ours peak MB | Dem Bones wall s | Dem Bones user s | Dem Bones peak MB | Dem Bones / ours (wall) | input arrays MB | ours RSS / input |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for cfg in "5000 200 6" "20000 300 8"; do
    set -- $cfg
    c=$OUT/clips/speed-$1-$2
    [ -f "$c/tracks.npz" ] || "$BIN" synth tracks --plan quadruped --motion walk --seed 77 --points "$1" --frames "$2" --hidden 0 -o "$c" -q
    [ -z "$DB" ] || [ -f "$c/db.bin" ] || $T2R dump "$c/tracks.npz" "$c/db.bin"
    : > "$OUT/t.ours"; : > "$OUT/t.db"; : > "$OUT/t.base"
    for ((k = 0; k < REPEAT; k++)); do
      /usr/bin/time -f "%e %U %M" -a -o "$OUT/t.ours" "$BIN" rig "$c/tracks.npz" -o "$OUT/runs/speed" --bones "$3" --threads 1 -q
      [ -z "${RIG_SPEED_BASE:-}" ] || /usr/bin/time -f "%e %U %M" -a -o "$OUT/t.base" "$RIG_SPEED_BASE" rig "$c/tracks.npz" -o "$OUT/runs/speed-base" --bones "$3" --threads 1 -q
      [ -z "$DB" ] || { mkdir -p "$OUT/runs/speed-db"; /usr/bin/time -f "%e %U %M" -a -o "$OUT/t.db" "$DB" "$c/db.bin" "$OUT/runs/speed-db" "$3" 2>/dev/null; }
    done
    ow=$(cut -d' ' -f1 "$OUT/t.ours" | median); ou=$(cut -d' ' -f2 "$OUT/t.ours" | median); om=$(cut -d' ' -f3 "$OUT/t.ours" | median)
    if [ -n "$DB" ]; then
      dw=$(cut -d' ' -f1 "$OUT/t.db" | median); du=$(cut -d' ' -f2 "$OUT/t.db" | median); dm=$(cut -d' ' -f3 "$OUT/t.db" | median)
      ratio=$(echo "scale=1; $dw / $ow" | bc); dmb=$(echo "scale=1; $dm / 1024" | bc)
    else dw=-; du=-; dmb=-; ratio=-; fi
    in=$(echo "scale=1; $1 * $2 * 13 / 1000000" | bc)
    echo "| $1 | $2 | $3 | $ow | $ou | $(echo "scale=1; $om / 1024" | bc) | $dw | $du | $dmb | $ratio | $in | $(echo "scale=2; $om / 1024 / $in" | bc) |"
    if [ -n "${RIG_SPEED_BASE:-}" ]; then
      bw=$(cut -d' ' -f1 "$OUT/t.base" | median); bu=$(cut -d' ' -f2 "$OUT/t.base" | median); bm=$(cut -d' ' -f3 "$OUT/t.base" | median)
      br=-; [ -z "$DB" ] || br=$(echo "scale=1; $dw / $bw" | bc)
      echo "| $1 | $2 | $3 | base: $bw | $bu | $(echo "scale=1; $bm / 1024" | bc) | $dw | $du | $dmb | $br | $in | $(echo "scale=2; $bm / 1024 / $in" | bc) |"
    fi
  done
fi
