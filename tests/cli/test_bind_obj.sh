#!/usr/bin/env bash
# Issue 14: an OBJ model keeps its look through bind as a glTF one does: texture coordinates
# (glTF's (u, 1 - v)), normals (turned by the prep), MTL materials (Kd, d, Ke, Ns) and the map_Kd
# texture embedded byte for byte; one glTF vertex per distinct v/vt/vn corner, the copies of a
# position weighted identically; the prepared OBJ keeps vt, vn, usemtl and writes its .mtl (also
# for a glTF model: the Knight's UVs, normals and base colours); a
# missing .mtl or texture is a warning, a malformed .mtl exit 2 at its line and column.
. "$(dirname "$0")/lib.sh"
am_need_tool node /usr/bin/python3
PY=/usr/bin/python3
LOOK=$AM_SOURCE/tests/cli/obj_look.py
C=$AM_SOURCE/examples/creatures/capsule_wolf
M=$TMP/model
mkdir -p "$M"
$PY "$LOOK" make "$C/model.obj" "$M" || am_fail obj_make "obj_look.py make failed"

# ---- bound: validator-clean, the look in the GLB, the OBJ's map_d named in a warning ----
expect bind_obj_textured 0 'map_d is not carried over' -- "$AM_BIN" bind "$M/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/rigged.glb" -q
"$AM_BIN" bind "$M/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/rigged.glb" -q > "$TMP/rigged.json" 2>/dev/null
expect bind_obj_validator 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/rigged.glb"
if out=$($PY "$LOOK" glb "$M/model.obj" "$TMP/rigged.glb" "$TMP/rigged.json" 2>&1); then am_pass "bind_obj_look ($out)"; else am_fail bind_obj_look "$out"; fi

# ---- prepared OBJ: vt, vn, usemtl and model's .mtl beside it, the texture named from there ----
expect bind_obj_prepped 0 '"given": true' -- "$AM_BIN" bind "$M/model.obj" --creature "$C/creature.json" -o "$TMP/prep/wolf.obj" -q
"$AM_BIN" bind "$M/model.obj" --creature "$C/creature.json" -o "$TMP/prep/wolf.obj" -q > "$TMP/prep.json" 2>/dev/null
if out=$($PY "$LOOK" obj "$M/model.obj" "$TMP/prep/wolf.obj" "$TMP/prep.json" 2>&1); then am_pass "bind_obj_prepped_roundtrip ($out)"; else am_fail bind_obj_prepped_roundtrip "$out"; fi
expect bind_obj_prepped_mtl 0 '^map_Kd \.\./model/skin\.png$' -- grep -x 'map_Kd ../model/skin.png' "$TMP/prep/wolf.mtl"
expect bind_obj_prepped_kd 0 '' -- grep -qx 'Kd 0.9 0.5 0.25' "$TMP/prep/wolf.mtl"
[ "$(ls -A "$TMP/prep")" = "$(printf 'wolf.mtl\nwolf.obj')" ] && am_pass bind_obj_prepped_set || am_fail bind_obj_prepped_set "left: $(ls -A "$TMP/prep")"
# the prepared OBJ binds (no prep now) with the same look: its texture found through ../model/
echo '{}' > "$TMP/noprep.json"
"$AM_BIN" bind "$TMP/prep/wolf.obj" --rig "$C/rig.json" -o "$TMP/prep_rigged.glb" -q > "$TMP/prep_rigged.json" 2> "$TMP/prep_rigged.err"
expect bind_obj_prepped_rebind_validator 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/prep_rigged.glb"
[ ! -s "$TMP/prep_rigged.err" ] && am_pass bind_obj_prepped_rebind_quiet || am_fail bind_obj_prepped_rebind_quiet "$(head -3 "$TMP/prep_rigged.err")"
if out=$($PY - "$TMP/prep_rigged.glb" "$M/skin.png" <<'PY' 2>&1
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack_from('<I', b, 12)[0]
j = json.loads(b[20:20 + n]); binc = b[20 + n + 8:]
bv = j['bufferViews'][j['images'][0]['bufferView']]
assert binc[bv.get('byteOffset', 0):bv.get('byteOffset', 0) + bv['byteLength']] == open(sys.argv[2], 'rb').read()
assert sorted(m['name'] for m in j['materials']) == ['eyes', 'fur'], j['materials']
PY
); then am_pass bind_obj_prepped_rebind_look; else am_fail bind_obj_prepped_rebind_look "$out"; fi
# a prepared OBJ without materials leaves no .mtl (an old one of the set is removed)
"$AM_BIN" bind "$C/model.obj" --creature "$C/creature.json" -o "$TMP/prep/wolf.obj" -q > /dev/null 2>&1
[ -e "$TMP/prep/wolf.obj" ] && [ ! -e "$TMP/prep/wolf.mtl" ] && ! grep -q '^mtllib' "$TMP/prep/wolf.obj" && am_pass bind_obj_plain_no_mtl || am_fail bind_obj_plain_no_mtl "$(ls -A "$TMP/prep")"

# ---- what is missing: warnings naming the file, the geometry bound ----
mkdir -p "$TMP/nomtl" "$TMP/notex"
cp "$M/model.obj" "$TMP/nomtl/"
expect bind_obj_missing_mtl 0 'warning: .*nomtl/model\.mtl: cannot read the material library' -- "$AM_BIN" bind "$TMP/nomtl/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/nomtl.glb" -q
expect bind_obj_missing_mtl_validator 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/nomtl.glb"
cp "$M/model.obj" "$M/model.mtl" "$TMP/notex/"
expect bind_obj_missing_texture 0 'warning: .*notex/skin\.png: cannot read the texture' -- "$AM_BIN" bind "$TMP/notex/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/notex.glb" -q
expect bind_obj_missing_texture_validator 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/notex.glb"

# ---- a malformed .mtl: exit 2 at its line and column, no output ----
mkdir -p "$TMP/bad"
cp "$M/model.obj" "$M/skin.png" "$TMP/bad/"
sed 's/^Kd 0.9 0.5 0.25$/Kd 0.9 O.5 0.25/' "$M/model.mtl" > "$TMP/bad/model.mtl"
line=$(grep -n '^Kd 0.9 O.5' "$TMP/bad/model.mtl" | cut -d: -f1)
expect bind_obj_bad_mtl 2 "bad/model\.mtl:$line:8: error: .*'O\.5'" -- "$AM_BIN" bind "$TMP/bad/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/bad/out.glb" -q
expect bind_obj_bad_mtl_prepped 2 "bad/model\.mtl:$line:8" -- "$AM_BIN" bind "$TMP/bad/model.obj" --creature "$C/creature.json" -o "$TMP/bad/out/p.obj" -q
[ ! -e "$TMP/bad/out.glb" ] && [ ! -e "$TMP/bad/out/p.obj" ] && am_pass bind_obj_bad_mtl_no_output || am_fail bind_obj_bad_mtl_no_output "$(ls -A "$TMP/bad")"
# an unknown statement is no error (Blender skips them too)
printf 'newmtl fur\nKd 1 1 1\nsharpness 60\nPx whatever\n' > "$TMP/bad/model.mtl"
expect bind_obj_unknown_statement 0 '"method": "bone heat"' -- "$AM_BIN" bind "$TMP/bad/model.obj" --rig "$C/rig.json" --creature "$C/creature.json" -o "$TMP/bad/ok.glb" -q
am_done

# ---- a glTF model's prepared OBJ keeps its look too: vt, vn, usemtl per primitive, the .mtl
# with the materials' base colour, metallic and roughness (textures stay in the GLB) ----
am_need_shared data/gltf/quaternius/KnightCharacter.glb
KN=$AM_SHARED/data/gltf/quaternius/KnightCharacter.glb
echo '{"prep": {"length_m": 1.8, "rotz_deg": 90, "axis": "z"}}' > "$TMP/kn.json"
expect bind_gltf_prepped 0 '"given": true' -- "$AM_BIN" bind "$KN" --creature "$TMP/kn.json" -o "$TMP/knp/knight.obj" -q
"$AM_BIN" bind "$KN" --creature "$TMP/kn.json" -o "$TMP/knp/knight.obj" -q > "$TMP/knp.json" 2>/dev/null
if out=$($PY "$LOOK" gltf_obj "$KN" "$TMP/knp/knight.obj" "$TMP/knp/knight.mtl" "$TMP/knp.json" 2>&1); then am_pass "bind_gltf_prepped_look ($out)"; else am_fail bind_gltf_prepped_look "$out"; fi
[ "$(ls -A "$TMP/knp")" = "$(printf 'knight.mtl\nknight.obj')" ] && am_pass bind_gltf_prepped_set || am_fail bind_gltf_prepped_set "left: $(ls -A "$TMP/knp")"
