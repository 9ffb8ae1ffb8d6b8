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
# Names as Blender and Mixamo write them: three.js strips '.' and ':' from node names, so a
# checker that looked names up as written reported these bones missing (issue 9).
/usr/bin/python3 - "$rig" "$motion" "$TMP/dotted_rig.json" "$TMP/dotted_walk.json" <<'PY'
import json, re, sys
rename = lambda n: "mixamorig:Spine" if n == "spine" else re.sub(r"_([LR])$", r".\1", n)
rig, mo = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rig["bones"] = [[rename(b[0])] + b[1:3] + [rename(b[3]) if b[3] else None] + b[4:] for b in rig["bones"]]
if "limits_deg" in rig: rig["limits_deg"] = {rename(k): v for k, v in rig["limits_deg"].items()}
mo["bones"] = [rename(b) for b in mo["bones"]]
assert sum("." in b[0] for b in rig["bones"]) >= 8 and any(":" in b[0] for b in rig["bones"])
json.dump(rig, open(sys.argv[3], "w")); json.dump(mo, open(sys.argv[4], "w"))
PY
check_pair dotted "$TMP/dotted_rig.json" "$TMP/dotted_walk.json" 30
# The character kept (issue 9: convert -> export lost it): a real model's rig, whose rig.json
# records the model, exports as that model (meshes, materials, skin; bones like "Ear1.L")
# driven by the motion.
if "$AM_BIN" convert "$AM_SHARED/data/gltf/quaternius/Fox.glb" --clip Walk -o "$TMP/qfox" -q 2>"$TMP/err"; then
  check_pair character "$TMP/qfox/rig.json" "$TMP/qfox/motion.json" 30
  expect character_has_mesh 0 'mesh 0 Fox: 5 primitives, 3752 vertices' -- "$AM_BIN" info "$TMP/character.glb"
else
  am_fail character_convert "$(head -n 3 "$TMP/err")"
fi
am_done
