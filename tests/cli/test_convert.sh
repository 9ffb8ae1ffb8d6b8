#!/usr/bin/env bash
# The CLI convention on its inputs, tried as a new user would (issue 9): one --clip rule for
# convert and bake, --scale and body-size warnings, convert's outputs by extension, clear
# messages for a model without a skin and for a folder, info on BVH.
. "$(dirname "$0")/lib.sh"
D=$AM_SHARED/data
[ -d "$D/gltf" ] || { am_fail shared_data "missing $D (the shared data folder)"; am_done; exit 1; }
FOX=$D/gltf/khronos_fox/Fox.glb
QFOX=$D/gltf/quaternius/Fox.glb
SNAKE=$D/gltf/quaternius/Snake.glb
KNIGHT=$D/gltf/quaternius/KnightCharacter.glb
CMU=$D/bvh/cmu/08_01_trimmed.bvh

# ---- --clip: exact, without the armature prefix, an index, a unique ending; else the list ----
expect clip_exact 0 "clip 3 'SnakeArmature\|Snake_Walk'" -- "$AM_BIN" convert "$SNAKE" --clip 'SnakeArmature|Snake_Walk' -o "$TMP/s1"
expect clip_no_prefix 0 "clip 3 'SnakeArmature\|Snake_Walk'" -- "$AM_BIN" convert "$SNAKE" --clip Snake_Walk -o "$TMP/s2"
expect clip_suffix 0 "clip 3 'SnakeArmature\|Snake_Walk'" -- "$AM_BIN" convert "$SNAKE" --clip Walk -o "$TMP/s3"
expect clip_index 0 "clip 1 'SnakeArmature\|Snake_Idle'" -- "$AM_BIN" convert "$SNAKE" --clip 1 -o "$TMP/s4"
expect clip_default_first 0 "clip 0 'SnakeArmature\|Snake_Attack'" -- "$AM_BIN" convert "$SNAKE" -o "$TMP/s5"
# "Idle" is a whole name without the prefix, though Idle_swordLeft also starts with it
expect clip_whole_name_wins 0 "clip 1 'HumanArmature\|Idle'" -- "$AM_BIN" convert "$KNIGHT" --clip Idle -o "$TMP/k"
expect clip_unknown_lists 2 "Snake\.glb: error: unknown name \(no clip 'Fly'; the clips are 0 'SnakeArmature\|Snake_Attack', 1 " -- \
  "$AM_BIN" convert "$SNAKE" --clip Fly -o "$TMP/x"
expect clip_ambiguous 2 "clip 'k' could be 0 'SnakeArmature\|Snake_Attack', 3 'SnakeArmature\|Snake_Walk': give its full name or index" -- \
  "$AM_BIN" convert "$SNAKE" --clip k -o "$TMP/x"
expect clip_bake_same_rule 0 "clip 3 'SnakeArmature\|Snake_Walk'" -- "$AM_BIN" bake "$SNAKE" --clip Walk --fps 5 -o "$TMP/sb"
expect clip_list 0 '^3	SnakeArmature\|Snake_Walk	0\.833 s' -- "$AM_BIN" convert "$SNAKE" --list-clips
expect clip_on_bvh 2 '--clip picks a clip of a \.glb' -- "$AM_BIN" convert "$CMU" --clip Walk -o "$TMP/x"
[ ! -e "$TMP/x" ] && am_pass clip_errors_write_nothing || am_fail clip_errors_write_nothing "$TMP/x exists"

# ---- units: body size noted, implausible ones warned with the fix; --scale applies it -------
expect units_warn_cm 0 "warning: .*Fox\.glb: a body 130 m across is implausible in metres: is this centimetres\? --scale 0\.01" -- \
  "$AM_BIN" convert "$FOX" -o "$TMP/f1" -q
out=$("$AM_BIN" convert "$FOX" --scale 0.01 -o "$TMP/f2" 2>&1)
if printf '%s' "$out" | grep -q 'body size 1\.3 m' && ! printf '%s' "$out" | grep -q warning; then am_pass units_scale_fixes; else
  am_fail units_scale_fixes "$out"; fi
# the scaled rig really is 100 times smaller, and FK of it agrees with the scaled motion
/usr/bin/python3 - "$TMP/f1" "$TMP/f2" <<'PY' && am_pass units_scale_exact || am_fail units_scale_exact "see above"
import json, sys
a, b = (json.load(open(sys.argv[i] + "/rig.json")) for i in (1, 2))
ma, mb = (json.load(open(sys.argv[i] + "/motion.json")) for i in (1, 2))
err = max(abs(pa * 0.01 - pb) for k in a["joints"] for pa, pb in zip(a["joints"][k], b["joints"][k]))
assert err < 1e-9, err
err = max(abs(x * 0.01 - y) for fa, fb in zip(ma["joints"], mb["joints"]) for ja, jb in zip(fa, fb) for x, y in zip(ja, jb))
assert err < 1e-9, err
assert ma["euler"] == mb["euler"]
PY
expect units_bvh 0 'warning: .*08_01_trimmed\.bvh: .*is this centimetres\? --scale 0\.01' -- "$AM_BIN" convert "$CMU" -o "$TMP/b1" -q
expect units_bvh_scaled 0 'body size 2\.16 m' -- "$AM_BIN" convert "$CMU" --scale 0.01 -o "$TMP/b2"
expect units_ik 0 "warning: .*motion\.json: a body .* is this centimetres" -- "$AM_BIN" ik "$TMP/f1/motion.json" --rig "$TMP/f1/rig.json" -o "$TMP/ik1" -q
expect units_ik_scaled 0 'body size 1\.[0-9]+ m' -- "$AM_BIN" ik "$TMP/f2/motion.json" --rig "$TMP/f2/rig.json" -o "$TMP/ik2"
expect units_small 0 'warning: .*implausibly small for metres: another unit\? --scale 100' -- "$AM_BIN" convert "$FOX" --scale 0.0001 -o "$TMP/f3" -q
expect units_bad_scale 2 '--scale is metres per file unit' -- "$AM_BIN" convert "$FOX" --scale -1 -o "$TMP/x"
expect units_info 0 'body size 130\.3 m' -- "$AM_BIN" info "$FOX"
# BVH frame times: 1/120.00048 s is printed as the rate people know
expect fps_rounded 0 'motion\.json \(.* frames at 120 fps\)' -- "$AM_BIN" convert "$D/bvh/cmu/01_01.bvh" --scale 0.0254 -o "$TMP/b3"

# ---- outputs: -o a folder, or one file whose extension picks the format -----------------
expect out_bvh_to_glb 0 'wrote .*out\.glb' -- "$AM_BIN" convert "$CMU" -o "$TMP/out.glb"
if [ -f "$TMP/out.glb" ] && head -c 4 "$TMP/out.glb" | grep -q '^glTF$'; then am_pass out_glb_is_a_glb_file; else
  am_fail out_glb_is_a_glb_file "$(ls -ld "$TMP/out.glb")"; fi
expect out_glb_validates 0 '"errors":0' -- "$AM_VALIDATOR" "$TMP/out.glb"
expect out_glb_to_bvh 0 'wrote .*fox\.bvh' -- "$AM_BIN" convert "$QFOX" --clip Walk -o "$TMP/fox.bvh"
expect out_bvh_reads 0 'BVH, [0-9]+ joints' -- "$AM_BIN" info "$TMP/fox.bvh"
expect out_unknown_ext 2 "'\.fbx' is not one convert writes \(\.glb or \.bvh\)" -- "$AM_BIN" convert "$CMU" -o "$TMP/out.fbx"
expect out_motion_needs_file 2 'give a file name ending in \.glb or \.bvh' -- "$AM_BIN" convert "$TMP/f2/motion.json" --rig "$TMP/f2/rig.json" -o "$TMP/folder"

# ---- messages a new user needs ------------------------------------------------------------
expect no_skin 2 "Flamingo\.glb: error: empty input \(no skin, so no skeleton to convert; .*anymove bake .*Flamingo\.glb -o DIR && anymove rig DIR/tracks\.npz" -- \
  "$AM_BIN" convert "$D/gltf/Flamingo.glb" -o "$TMP/fl"
[ ! -e "$TMP/fl" ] && am_pass no_skin_writes_nothing || am_fail no_skin_writes_nothing "$TMP/fl exists"
expect folder_input 2 "'.*f2' is a folder; convert reads one file: MODEL\.glb, CLIP\.bvh, or a motion\.json with its rig \(anymove convert .*f2/motion\.json --rig .*f2/rig\.json -o OUT\.bvh\)" -- \
  "$AM_BIN" convert "$TMP/f2" -o "$TMP/x.bvh"
expect motion_needs_rig 2 'a motion needs the rig it animates: --rig rig\.json' -- "$AM_BIN" convert "$TMP/f2/motion.json" -o "$TMP/x.bvh"
expect unknown_input 2 'x\.txt: convert reads \.glb, \.gltf, \.bvh or a motion\.json' -- "$AM_BIN" convert "$TMP/x.txt" -o "$TMP/y"

# ---- info reads BVH --------------------------------------------------------------------------
expect info_bvh 0 '08_01_trimmed\.bvh: BVH, 43 joints \([0-9]+ End Sites\), [0-9]+ channels, [0-9]+ frames at 120 fps' -- "$AM_BIN" info "$CMU"
expect info_bvh_size 0 'body size [0-9.]+ m \(at 1 m per unit\)' -- "$AM_BIN" info "$CMU"
printf 'HIERARCHY\nROOT a\n{\n' > "$TMP/bad.bvh"
expect info_bvh_bad 2 'bad\.bvh:[0-9]+:[0-9]+: error' -- "$AM_BIN" info "$TMP/bad.bvh"
am_done
