#!/usr/bin/env bash
# Our GLBs load in the consumers users run: three.js's GLTFLoader (as engines and web viewers
# load them) and Blender 3.4's importer (headless). Both play the animation and every bone's
# world position at every frame must match `anymove fk` to 0.1 mm.
. "$(dirname "$0")/lib.sh"
am_need_shared golden/fk/testrig.json golden/fk/testrig_motion.json
am_need_tool node
rig=$AM_SOURCE/examples/walker/rig.json
motion=$AM_SOURCE/examples/walker/walk.json
G=$AM_SHARED/golden/fk

check_pair() { # name rig motion fps
  local name=$1 r=$2 m=$3 fps=$4
  if ! "$AM_BIN" export "$m" --rig "$r" -o "$TMP/$name.glb" --quiet 2>"$TMP/err"; then
    am_fail "${name}_export" "$(head -n 3 "$TMP/err")"; return; fi
  "$AM_BIN" fk "$r" --motion "$m" > "$TMP/$name.fk.json"
  local out
  if out=$(node "$AM_SOURCE/scripts/three_check.mjs" "$TMP/$name.glb" "$r" "$TMP/$name.fk.json" "$fps" 2>&1); then
    am_pass "${name}_threejs"; else am_fail "${name}_threejs" "$out"; fi
  if command -v blender >/dev/null 2>&1; then
    if out=$(blender -b --factory-startup --python-exit-code 1 -P "$AM_SOURCE/scripts/blender_check.py" -- \
             "$TMP/$name.glb" "$r" "$TMP/$name.fk.json" "$fps" 2>&1 | grep -E '^\{|Error|error' | tail -n 5); \
       [ "${PIPESTATUS[0]}" -eq 0 ] && printf '%s' "$out" | grep -q '"ok": true'; then
      am_pass "${name}_blender"; else am_fail "${name}_blender" "$out"; fi
  else
    am_fail "${name}_blender" "blender is not installed: run scripts/deps.sh"
  fi
}
check_pair walker "$rig" "$motion" 30
check_pair golden "$G/testrig.json" "$G/testrig_motion.json" 30
am_done
