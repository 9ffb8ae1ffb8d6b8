#!/usr/bin/env bash
# Hostile input (../shared/data/hostile and what its gen.py and gen2.py make): every malformed
# file gives exit 2 with a message naming it, in under 1 GB of memory and a few seconds, and
# leaves nothing behind; the large valid ones (100,000-bone rigs, a 50,000-deep BVH, a
# 100,000-node glTF chain) load and convert in linear time. Each file is fed to the command
# that reads it in its role (convert for models and clips, solve for det.npz, rig for
# tracks.npz, info for the rest). Memory is the peak RSS from /usr/bin/time.
. "$(dirname "$0")/lib.sh"
H=$AM_SHARED/data/hostile
PY=${AM_PYTHON:-/usr/bin/python3}
for need in "$H/README.md" "$H/gen.py" "$H/gen2.py" "$H/g26_anim_333000s.glb" "$H/p5_symlink.gltf"; do
  if [ ! -f "$need" ]; then
    echo "FAIL hostile inputs missing: $need (the shared folder is expected at $AM_SHARED)"
    exit 1
  fi
done
[ -x "$PY" ] || PY=python3
if [ ! -x /usr/bin/time ]; then echo "FAIL /usr/bin/time is needed to measure memory"; exit 1; fi

# Limits. A sanitizer build runs several times slower and holds more memory per allocation.
MAX_KB=$((1024 * 1024))
REFUSE_S=5
SCALE_S=10
if nm -an "$AM_BIN" 2>/dev/null | grep -q __asan_init; then
  REFUSE_S=20
  SCALE_S=60
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=16:malloc_context_size=4"
fi

# The generators' base files (gen.py reads them from /tmp/bad/base): a converted BVH clip,
# the det.npz of a wolf exam and the corpus tracks.
B=$TMP/base
"$AM_BIN" convert "$AM_SOURCE/fuzz/corpus/bvh/human.bvh" -o "$B/conv" --quiet >/dev/null 2>&1
"$AM_BIN" exam --rig "$AM_SOURCE/examples/creatures/wolf/rig.json" -o "$B/ex" --quiet >/dev/null 2>&1
cp "$AM_SOURCE/fuzz/corpus/npz/tracks.npz" "$B/tr.tracks.npz" 2>/dev/null
for f in conv/motion.json conv/rig.json ex/det.npz tr.tracks.npz; do
  if [ ! -s "$B/$f" ]; then echo "FAIL cannot build the generator's base file $B/$f"; exit 1; fi
done
G=$TMP/gen
sed "s#/tmp/bad/base#$B#g" "$H/gen.py" > "$TMP/gen.py"
if ! "$PY" "$TMP/gen.py" "$AM_SOURCE" "$G" >"$TMP/gen.log" 2>&1 ||
   ! "$PY" "$H/gen2.py" "$G/scale" >>"$TMP/gen.log" 2>&1; then
  echo "FAIL the hostile generators failed:"; cat "$TMP/gen.log"; exit 1
fi
n_gen=$(find "$G" -type f | wc -l)
if [ "$n_gen" -lt 60 ]; then echo "FAIL gen.py and gen2.py made only $n_gen files"; exit 1; fi

RIG_SMALL=$G/j_rig_small.json
WOLF=$AM_SOURCE/examples/creatures/wolf/rig.json
worst_kb=0
worst_s=0

# bounded NAME WANT FILE OUT -- command...: exit WANT (2: a message naming FILE), peak RSS
# under MAX_KB, CPU time under the limit, and for a refusal nothing left in OUT's folder.
bounded() {
  local name=$1 want=$2 file=$3 out=$4
  shift 5
  local run; run=$(dirname "$out")
  mkdir -p "$run"
  local limit=$REFUSE_S
  [ "$want" -eq 0 ] && limit=$SCALE_S
  /usr/bin/time -f "%U %S %e %M" -o "$TMP/time" timeout $((limit * 6)) "$@" >"$TMP/log" 2>&1
  local rc=$?
  local user sys wall kb secs
  read -r user sys wall kb < <(tail -n 1 "$TMP/time")
  kb=${kb:-0}
  # CPU seconds (user + system): a machine busy with other work does not fail the case
  secs=$(awk "BEGIN{print ${user:-0} + ${sys:-0}}")
  local base; base=$(basename "$file")
  if [ "$rc" -ne "$want" ]; then
    am_fail "$name" "exit $rc, want $want: $*" "$(head -n 3 "$TMP/log")"
  elif [ "$want" -eq 2 ] && ! grep -qF -- "$base" "$TMP/log"; then
    am_fail "$name" "the message does not name $base" "$(head -n 3 "$TMP/log")"
  elif grep -Eq "AddressSanitizer|runtime error|Segmentation" "$TMP/log"; then
    am_fail "$name" "sanitizer report" "$(head -n 8 "$TMP/log")"
  elif [ "$kb" -gt "$MAX_KB" ]; then
    am_fail "$name" "peak RSS $((kb / 1024)) MB, limit $((MAX_KB / 1024)) MB"
  elif awk "BEGIN{exit !($secs > $limit)}"; then
    am_fail "$name" "$secs s CPU, limit $limit s"
  elif [ "$want" -eq 2 ] && [ -n "$(ls -A "$run" 2>/dev/null)" ]; then
    am_fail "$name" "left behind: $(ls -A "$run")"
  else
    am_pass "$name ($secs s CPU, ${wall:-?} s wall, $((kb / 1024)) MB)"
  fi
  [ "$kb" -gt "$worst_kb" ] && worst_kb=$kb
  awk "BEGIN{exit !($secs > $worst_s)}" && worst_s=$secs
  return 0
}

# new_run: d = a fresh, empty folder for the next case's outputs
case_id=0
new_run() { case_id=$((case_id + 1)); d=$TMP/run/$case_id; mkdir -p "$d"; }

# ---- models (.glb/.gltf): convert; long clips also through bake ----
for f in "$G"/g*.glb "$G"/gsub/*.gltf "$H"/*.glb; do
  n=$(basename "$f")
  case $n in
    g00_valid.glb|g15_*|g16_*|g16b_*|g18_*) want=0 ;; # valid: a deep chain, a huge but finite matrix
    *) want=2 ;;
  esac
  new_run
  bounded "convert_$n" $want "$f" "$d/out" -- "$AM_BIN" convert "$f" -o "$d/out" --quiet
  if [ $want -eq 0 ] && [ ! -s "$d/out/rig.json" ]; then am_fail "convert_${n}_wrote" "no $d/out/rig.json"; fi
done
for f in "$H"/g26_anim_333000s.glb "$H"/timeout-*.glb; do
  new_run
  bounded "bake_$(basename "$f")" 2 "$f" "$d/out" -- "$AM_BIN" bake "$f" -o "$d/out" --quiet
done

# a buffer that is a symlink to /etc/passwd inside the model's folder
new_run
mkdir -p "$d/model"
cp "$H/p5_symlink.gltf" "$d/model/"
ln -s /etc/passwd "$d/model/link.bin"
bounded convert_p5_symlink 2 p5_symlink.gltf "$d/out/x" -- "$AM_BIN" convert "$d/model/p5_symlink.gltf" -o "$d/out/x" --quiet
expect p5_symlink_says_outside 2 'outside the folder' -- "$AM_BIN" info "$d/model/p5_symlink.gltf"
# the folder rule refuses only what resolves outside: a buffer beside the model, or a link to
# it inside the folder, reads normally
"$PY" - "$AM_SOURCE/fuzz/corpus/gltf/tiny_skin.gltf" "$d/model" <<'PY'
import base64, json, sys
doc = json.load(open(sys.argv[1]))
uri = doc["buffers"][0]["uri"]
open(sys.argv[2] + "/data.bin", "wb").write(base64.b64decode(uri.split(",", 1)[1]))
for name, target in (("beside.gltf", "data.bin"), ("alias.gltf", "alias.bin")):
    doc["buffers"][0]["uri"] = target
    json.dump(doc, open(sys.argv[2] + "/" + name, "w"))
PY
ln -s data.bin "$d/model/alias.bin"
expect gltf_buffer_beside_reads 0 'skin 0' -- "$AM_BIN" info "$d/model/beside.gltf"
expect gltf_buffer_link_inside_reads 0 'skin 0' -- "$AM_BIN" info "$d/model/alias.gltf"

# ---- JSON ----
for f in "$G"/j01_* "$G"/j02_* "$G"/j03_* "$G"/j04_* "$RIG_SMALL"; do
  n=$(basename "$f")
  case $n in j03_*|j04_*|j_rig_small.json) want=0 ;; *) want=2 ;; esac
  new_run
  bounded "info_$n" $want "$f" "$d/x" -- "$AM_BIN" info "$f" --quiet
done
for f in "$G"/j0[5-9]_* "$G"/j10_*; do
  new_run
  bounded "convert_$(basename "$f")" 2 "$f" "$d/out.bvh" -- "$AM_BIN" convert "$f" --rig "$RIG_SMALL" -o "$d/out.bvh" --quiet
done
for f in "$G"/scale/*.json; do
  new_run
  bounded "info_scale_$(basename "$f")" 0 "$f" "$d/x" -- "$AM_BIN" info "$f" --quiet
done

# ---- BVH ----
for f in "$G"/b0*.bvh "$G"/scale/*.bvh; do
  n=$(basename "$f")
  case $n in b03_*|bvh*) want=0 ;; *) want=2 ;; esac
  new_run
  bounded "convert_$n" $want "$f" "$d/out" -- "$AM_BIN" convert "$f" -o "$d/out" --quiet
  if [ $want -eq 0 ]; then
    # and back: the 50,000-deep motion to BVH text
    bounded "convert_back_$n" 0 "$f" "$d/back/x.bvh" -- "$AM_BIN" convert "$d/out/motion.json" \
      --rig "$d/out/rig.json" -o "$d/back/x.bvh" --quiet
  fi
done

# ---- npz: det files through solve, tracks through rig, the rest through info ----
for f in "$G"/n0[1-8]*.npz "$H"/n06b_*.npz; do
  new_run
  bounded "solve_$(basename "$f")" 2 "$f" "$d/out" -- "$AM_BIN" solve "$f" --rig "$WOLF" -o "$d/out" --quiet
done
expect solve_fps_named_at_load 2 'n06b_det_fps_1e-300\.npz.*fps = 1e-300' -- \
  "$AM_BIN" solve "$H/n06b_det_fps_1e-300.npz" --rig "$WOLF" -o "$TMP/run/solve_fps" --quiet
no_files solve_fps_writes_nothing "$TMP/run/solve_fps"
for f in "$G"/n09*.npz "$G"/n1[0-4]*.npz "$H"/n14_*.npz; do
  new_run
  bounded "rig_$(basename "$f")" 2 "$f" "$d/out" -- "$AM_BIN" rig "$f" -o "$d/out" --quiet
done
for f in "$H"/n14_*.npz "$H"/n15_*.npz; do
  new_run
  bounded "info_$(basename "$f")" 2 "$f" "$d/x" -- "$AM_BIN" info "$f" --quiet
done
# the npy fuzzer's finds, inside an npz: accepted (the reader and writer now agree on '<U0'
# and on a '<U859373932' of no elements), in bounded memory
for f in "$H"/crash-* "$H"/oom-*; do
  z="$TMP/$(basename "$f").npz"
  "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[2], "w").write(sys.argv[1], "names.npy")' "$f" "$z"
  new_run
  bounded "info_$(basename "$f" | cut -c1-12)" 0 "$z" "$d/x" -- "$AM_BIN" info "$z" --quiet
done

echo "     worst case: $worst_s s CPU, $((worst_kb / 1024)) MB peak RSS"
am_done
