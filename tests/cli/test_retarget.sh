#!/usr/bin/env bash
# `anymove retarget` end to end on real characters: the outputs, validator-clean GLBs that keep
# the character and play in three.js and Blender as our FK says, the map printed and overridden,
# a renamed and re-framed (bone roll, axis convention) copy of a glTF character as the target,
# and the bad inputs of issue 13 (exit 2, naming the bones, nothing written).
. "$(dirname "$0")/lib.sh"
am_need_shared data/gltf/quaternius/Fox.glb data/gltf/quaternius/Husky.glb data/gltf/quaternius/KnightCharacter.glb \
  data/bvh/cmu/01_01.bvh data/bvh/cmu/08_01_trimmed.bvh data/gltf/khronos_fox/Fox.glb \
  data/bvh/animated_drawings/dab.bvh
am_need_tool node /usr/bin/python3 jq ffmpeg ffprobe chromium
D=$AM_SHARED/data
Q=$D/gltf/quaternius

# Fox -> Husky with the defaults: every file, the Husky itself in the GLB, plants held
expect fox_husky 0 'plants held' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" -o "$TMP/fh"
for f in motion.json rig.json animation.glb animation.bvh map.json report.json; do
  if [ -s "$TMP/fh/$f" ]; then am_pass "fox_husky_$f"; else am_fail "fox_husky_$f" "missing"; fi
done
expect fox_husky_validator 0 '"errors":0,"warnings":0' -- bash "$AM_VALIDATOR" "$TMP/fh/animation.glb"
expect fox_husky_is_the_husky 0 'mesh 0 Cube: 5 primitives, 3900 vertices' -- "$AM_BIN" info "$TMP/fh/animation.glb"
if out=$(jq -e '.foot_slide_mm.plants > 4 and .foot_slide_mm.target_max < 1 and .feet_below_ground_max_mm < 1
                and .foot_slide_mm.source_max > 10 and .map.name > 30' "$TMP/fh/report.json" 2>&1); then
  am_pass fox_husky_report; else am_fail fox_husky_report "$(jq -c '.foot_slide_mm, .map' "$TMP/fh/report.json")"; fi
expect fox_husky_rules 0 '"Tail3": "chain: ' -- cat "$TMP/fh/map.json"
expect fox_husky_model 0 'Husky.glb' -- jq -r .model "$TMP/fh/rig.json"
# ground truth: the Husky's own Walk (the artist's version of the clip for that body) against the
# Fox's Walk retargeted onto it, mean joint distance in % of the Husky's body size. The default
# --align-min 10 leaves the small rest differences of two designs alone (1.12 %); re-aiming every
# limb bone (--align-min 0, the behaviour before) turned proportion into pose (1.53 %)
"$AM_BIN" convert "$Q/Husky.glb" --clip Walk --fps 24 -o "$TMP/hown" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$Q/Husky.glb" -o "$TMP/fh24" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$Q/Husky.glb" --align-min 0 -o "$TMP/fh24a0" -q 2>/dev/null
expect align_min_reported 0 '"align_min_deg": 10' -- cat "$TMP/fh24/report.json"
# (scored by bench/retarget_score.py gt, the benchmark's own scorer: "per joint % / chamfer %")
e=$(/usr/bin/python3 "$AM_SOURCE/bench/retarget_score.py" gt "$TMP/fh24/motion.json" "$TMP/hown/motion.json" "$TMP/hown/rig.json" | cut -d' ' -f1)
e0=$(/usr/bin/python3 "$AM_SOURCE/bench/retarget_score.py" gt "$TMP/fh24a0/motion.json" "$TMP/hown/motion.json" "$TMP/hown/rig.json" | cut -d' ' -f1)
if awk -v e="$e" -v z="$e0" 'BEGIN { exit !(e < 1.25 && z > e + 0.2) }'; then
  am_pass "ground_truth_walk (Fox Walk onto the Husky vs its own Walk: $e %, every bone re-aimed: $e0 %)"
else am_fail ground_truth_walk "$e % (every bone re-aimed: $e0 %)"; fi
expect align_min_range 2 'align-min is degrees' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --align-min 95 -o "$TMP/bad/x"
# the showcase after a retarget: source | result | the source see-through over the result, one
# frame per clip frame; the third panel is the second with the source drawn over it
expect showcase_source 0 '' -- "$AM_BIN" showcase "$TMP/fh" --source "$Q/Fox.glb" --source-clip Walk --height 180 -o "$TMP/fh_sc.mp4" -q
frames=$(jq '.trans | length' "$TMP/fh/motion.json")
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,nb_read_frames -of csv=p=0 "$TMP/fh_sc.mp4")
if [ "$got" = "960,$frames" ]; then am_pass "showcase_source_frames ($got)"; else am_fail showcase_source_frames "ffprobe says '$got', want 960,$frames"; fi
ffmpeg -v error -y -i "$TMP/fh_sc.mp4" -vf "select=eq(n\,5)" -vframes 1 -f rawvideo -pix_fmt rgb24 "$TMP/fh_sc5.rgb"
if out=$(/usr/bin/python3 - "$TMP/fh_sc5.rgb" <<'PY' 2>&1
import sys, numpy as np
img = np.fromfile(sys.argv[1], np.uint8).reshape(180, 960, 3).astype(float)
p1, p2, p3 = img[30:, 0:320], img[30:, 320:640], img[30:, 640:960]
def figure(p):  # share of pixels away from the panel's backdrop (its median colour per row)
    return (np.abs(p - np.median(p, axis=1, keepdims=True)).sum(2) > 40).mean()
d = (np.abs(p3 - p2).sum(2) > 40).mean()
print("figure share: source %.3f, result %.3f; panel 3 differs from 2 on %.3f" % (figure(p1), figure(p2), d))
sys.exit(0 if figure(p1) > 0.005 and figure(p2) > 0.005 and d > 0.003 else 1)
PY
); then am_pass "showcase_source_panels ($out)"; else am_fail showcase_source_panels "$out"; fi
expect showcase_source_no_motion 2 'rig.json.*no motion' -- "$AM_BIN" showcase "$TMP/fh" --source "$TMP/fh/rig.json" -o "$TMP/x.mp4"
expect showcase_source_with_det 2 'takes no --det' -- "$AM_BIN" showcase "$TMP/fh" --source "$Q/Fox.glb" --det x.npz -o "$TMP/x.mp4"
# the written motion reads back bound to the rig, and the BVH converts
expect fox_husky_motion_binds 0 '49 bones' -- "$AM_BIN" convert "$TMP/fh/motion.json" --rig "$TMP/fh/rig.json" -o "$TMP/fh_again.glb"
expect fox_husky_bvh_reads 0 'frames' -- "$AM_BIN" info "$TMP/fh/animation.bvh"
# consumers: three.js and Blender play the character's clip as our FK says
"$AM_BIN" fk "$TMP/fh/rig.json" --motion "$TMP/fh/motion.json" > "$TMP/fh_fk.json"
fps=$(jq .fps "$TMP/fh/motion.json")
if out=$(node "$AM_SOURCE/scripts/three_check.mjs" "$TMP/fh/animation.glb" "$TMP/fh/rig.json" "$TMP/fh_fk.json" "$fps" 2>&1); then
  am_pass fox_husky_threejs; else am_fail fox_husky_threejs "$out"; fi
if command -v blender >/dev/null 2>&1; then
  if out=$(blender -b --factory-startup --python-exit-code 1 -P "$AM_SOURCE/scripts/blender_check.py" -- \
           "$TMP/fh/animation.glb" "$TMP/fh/rig.json" "$TMP/fh_fk.json" "$fps" 2>&1 | grep -E '^\{|Error|error' | tail -n 5); \
     [ "${PIPESTATUS[0]}" -eq 0 ] && printf '%s' "$out" | grep -q '"ok": true'; then
    am_pass fox_husky_blender; else am_fail fox_husky_blender "$out"; fi
else
  am_fail fox_husky_blender "blender is not installed: run scripts/deps.sh"
fi

# --print-map: the map on stdout, nothing written; CMU's names onto the Knight's
expect print_map 0 '"LeftUpLeg": "UpperLeg.L"' -- "$AM_BIN" retarget "$D/bvh/cmu/01_01.bvh" --scale 0.01 \
  --to "$Q/KnightCharacter.glb" --print-map -q
# the Knight's "Thumb.R" sits on its left hand: the side of X wins over the name
expect print_map_side 0 '"LThumb": "Thumb.R"' -- "$AM_BIN" retarget "$D/bvh/cmu/01_01.bvh" --scale 0.01 \
  --to "$Q/KnightCharacter.glb" --print-map -q
# helpers and end sites never map: AnimatedDrawings' RightHandEnd/LeftHandEnd (end-site bones of
# the BVH) drive nothing, the Knight's pole targets (helpers) are excluded, not driven
"$AM_BIN" retarget "$D/bvh/animated_drawings/dab.bvh" --up z --scale 0.01 --to "$Q/KnightCharacter.glb" --print-map -q \
  > "$TMP/dab_map.json" 2>/dev/null
if out=$(jq -e '([.bones | to_entries[] | select(.key | test("End$")) | select(.value != null)] | length == 0) and
                ([.bones[] | select(. != null) | select(test("Pole"))] | length == 0) and
                ([.rules | to_entries[] | select(.key | test("PoleTarget")) | .value | test("^excluded")] | length == 2 and all)' \
         "$TMP/dab_map.json" 2>&1); then am_pass helpers_and_ends_unmapped
else am_fail helpers_and_ends_unmapped "$(jq -c '.bones, .rules' "$TMP/dab_map.json" | head -c 600)"; fi
grep -q 'JOINT RightHandEnd' "$D/bvh/animated_drawings/dab.bvh" || am_fail helpers_and_ends_source "dab.bvh has no RightHandEnd"
# a map file overrides entries; the map written says so
printf '{"bones": {"Tail8": null, "Tail7": "Tail6"}}' > "$TMP/ov.json"
expect map_override 0 '' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --map "$TMP/ov.json" --ik none -o "$TMP/ov" -q
expect map_override_used 0 '"Tail6": "map file"' -- cat "$TMP/ov/map.json"
expect map_override_bones 0 '"Tail7": "Tail6"' -- cat "$TMP/ov/map.json"
# our own map.json read back gives the same map
expect map_reread 0 '' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --map "$TMP/fh/map.json" -o "$TMP/fh2" -q
if cmp -s <(jq -S .bones "$TMP/fh/map.json") <(jq -S .bones "$TMP/fh2/map.json"); then am_pass map_reread_same; else am_fail map_reread_same "bones differ"; fi

# a target that is the Fox renamed with every joint frame turned (roll, axes): the same
# skeleton to our importer, so the retarget is the Fox's own motion, through a character whose
# nodes all differ from ours
/usr/bin/python3 "$AM_SOURCE/tests/cli/gltf_variant.py" "$Q/Fox.glb" "$TMP/foxv.glb" --seed 7 --prefix joint
expect variant_retarget 0 '' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$TMP/foxv.glb" --ik none -o "$TMP/fv" -q
expect variant_validator 0 '"errors":0,"warnings":0' -- bash "$AM_VALIDATOR" "$TMP/fv/animation.glb"
"$AM_BIN" convert "$Q/Fox.glb" --clip Walk --fps 24 -o "$TMP/fox" -q
if out=$(/usr/bin/python3 - "$TMP/fox/motion.json" "$TMP/fv/motion.json" <<'PY' 2>&1
import json, sys, numpy as np
a, b = (json.load(open(p)) for p in sys.argv[1:3])
A, B = np.array(a["joints"]), np.array(b["joints"])
# joints matched by their rest position (the names differ)
m = np.linalg.norm(A[0][:, None] - B[0][None], axis=2).argmin(1)
size = np.linalg.norm(A[0].max(0) - A[0].min(0))
err = np.abs(A - B[:, m]).max() / size
print("worst joint %.2g of the body size" % err)
sys.exit(0 if err < 1e-6 else 1)
PY
); then am_pass "variant_closure ($out)"; else am_fail variant_closure "$out"; fi
# and the character with its turned nodes plays it in three.js as our FK says
"$AM_BIN" fk "$TMP/fv/rig.json" --motion "$TMP/fv/motion.json" > "$TMP/fv_fk.json"
if out=$(node "$AM_SOURCE/scripts/three_check.mjs" "$TMP/fv/animation.glb" "$TMP/fv/rig.json" "$TMP/fv_fk.json" 24 2>&1); then
  am_pass variant_threejs; else am_fail variant_threejs "$out"; fi

# SPEC 5 closure on real rigs (B = A re-posed and renamed, tests/cli/rig_variant.py, first clip):
# exact where every bone can follow A, at the proven bound where SPEC 2.2's frames near -Y make it
# impossible (docs/retarget.md, "Frames that are not orthonormal"). The Quaternius Fox has a torso
# 3 degrees off -Y in both rigs and IK feet 1e-7 off their legs: 1e-15. The Knight's feet point
# 1.9 degrees off -Y in A only (CMU 08_01's rFoot too): A's own FK stretches them and B, rigid
# there, cannot follow (the bound, 7e-9 of the body size); on the way back (B's motion onto A) A's
# FK cannot keep their length. Our error must be within 3 times the bound, the bound above the
# issue's 1e-9 (the limit shown, not assumed), and A->B->A within 1e-9 rad. CMU's renamed hand
# (a turned arm) also checks that fingers map by their place on the hand, not by world direction.
closure_case() { # NAME FILE [CONVERT-ARGS]: prints "error bound segment rest aba back_error back_bound back_rest"
  local d=$TMP/clo_$1 f=$2 score=$AM_SOURCE/bench/retarget_score.py
  shift 2
  "$AM_BIN" convert "$f" "$@" -o "$d/a" -q 2>/dev/null
  /usr/bin/python3 "$AM_SOURCE/tests/cli/rig_variant.py" "$AM_BIN" "$d/a/rig.json" "$d/b/rig.json" --seed 5 --prefix v
  "$AM_BIN" retarget "$d/a/motion.json" --source-rig "$d/a/rig.json" --to "$d/b/rig.json" --ik none -o "$d/ab" -q 2>/dev/null
  "$AM_BIN" retarget "$d/ab/motion.json" --source-rig "$d/b/rig.json" --to "$d/a/rig.json" --ik none -o "$d/aba" -q 2>/dev/null
  jq '{bones: (.bones | to_entries | map({key: .value, value: .key}) | from_entries),
       joints: (.joints | to_entries | map({key: .value, value: .key}) | from_entries)}' "$d/b/rename.json" > "$d/b/back.json"
  local fwd back
  fwd=$(/usr/bin/python3 "$score" bound "$d/a/motion.json" "$d/ab/motion.json" "$d/a/rig.json" "$d/b/rig.json" "$d/b/rename.json")
  back=$(/usr/bin/python3 "$score" bound "$d/ab/motion.json" "$d/aba/motion.json" "$d/b/rig.json" "$d/a/rig.json" "$d/b/back.json")
  local b=($back)
  echo "$fwd $(/usr/bin/python3 "$score" rot "$d/a/motion.json" "$d/aba/motion.json" "$d/a/rig.json") ${b[0]} ${b[1]} ${b[3]}"
}
read -r e lb seg rest aba e2 lb2 rest2 < <(closure_case fox "$Q/Fox.glb")
if awk -v e="$e" -v a="$aba" -v f="$e2" 'BEGIN { exit !(e + 0 < 1e-13 && a + 0 < 1e-12 && f + 0 < 1e-13) }'; then
  am_pass "closure_exact_fox (A->B joints $e of the body size, bound $lb; B->A $e2; A->B->A $aba rad)"
else am_fail closure_exact_fox "A->B joints '$e' (bound $lb at $seg), B->A '$e2', A->B->A '$aba' rad"; fi
for c in knight cmu; do
  if [ $c = knight ]; then read -r e lb seg rest aba e2 lb2 rest2 < <(closure_case knight "$Q/KnightCharacter.glb")
  else read -r e lb seg rest aba e2 lb2 rest2 < <(closure_case cmu "$D/bvh/cmu/08_01_trimmed.bvh" --up y); fi
  # and nothing beyond the bound: every joint but the far end of a bounded segment is exact, and
  # that end is off by the segment's whole length gap (twice the bound: its head is kept exact)
  if awk -v e="$e" -v b="$lb" -v a="$aba" -v f="$e2" -v g="$lb2" -v r="$rest" -v s="$rest2" \
       'BEGIN { exit !(b + 0 > 1e-9 && e + 0 <= 2.05 * b && g + 0 > 1e-9 && f + 0 <= 2.05 * g && a + 0 < 1e-9 &&
                       r != "" && r + 0 < 1e-13 && s != "" && s + 0 < 1e-13) }'; then
    am_pass "closure_bound_$c (A->B joints $e of the body size, lower bound $lb at $seg, every other joint $rest; B->A $e2, bound $lb2, others $rest2; A->B->A $aba rad)"
  else am_fail "closure_bound_$c" "A->B joints '$e', lower bound '$lb' at $seg, others '$rest'; B->A '$e2', bound '$lb2', others '$rest2'; A->B->A '$aba' rad"; fi
done

# the Khronos Fox has no `_end` nodes: a leaf's tail is our importer's guess along the node's own
# axis, which the re-framed copy turns, so only bone heads (the skin's joints) must agree; they
# once looked 0.147 body sizes off because the tails were compared too
KF=$(dirname "$Q")/khronos_fox/Fox.glb
/usr/bin/python3 "$AM_SOURCE/tests/cli/gltf_variant.py" "$KF" "$TMP/kfoxv.glb" --seed 5 --prefix joint
expect variant_khronos_retarget 0 '' -- "$AM_BIN" retarget "$KF" --fps 30 --to "$TMP/kfoxv.glb" --ik none -o "$TMP/kfv" -q
"$AM_BIN" convert "$KF" --fps 30 -o "$TMP/kfox" -q 2>/dev/null
# (bench/retarget_score.py match: bone heads paired by their rest position, helpers left out)
err=$(/usr/bin/python3 "$AM_SOURCE/bench/retarget_score.py" match "$TMP/kfox/motion.json" "$TMP/kfv/motion.json" "$TMP/kfox/rig.json")
if awk -v e="$err" 'BEGIN { exit !(e != "" && e + 0 < 1e-6) }'; then am_pass "variant_khronos_closure (worst bone head $err of the body size)"
else am_fail variant_khronos_closure "worst bone head '$err' of the body size"; fi

# bad inputs: exit 2, the message names the bones, no output left
mkdir -p "$TMP/bad"
printf '{"bones": {"Tail1": "Tail1", "Nope": "Tail2", "Tail3": "Gone"}}' > "$TMP/unknown.json"
expect map_unknown_bones 2 "'Nope'.*'Gone'|'Gone'.*'Nope'" -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" \
  --map "$TMP/unknown.json" -o "$TMP/bad/out"
printf '{"bones": {"Tail1": "Tail2", "Tail3": "Tail2"}}' > "$TMP/twice.json"
expect map_two_to_one 2 "'Tail1' and 'Tail3' both drive target bone 'Tail2'" -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk \
  --to "$Q/Husky.glb" --map "$TMP/twice.json" -o "$TMP/bad/out"
# a fan of midline bones named like nothing: no bone in common, nothing to match the legs and arms
/usr/bin/python3 - "$TMP/fan.json" <<'PY'
import json, math, sys
joints = {"a": [0, 0, 0], "b": [0, 0, 0.5]}
bones = [["base", "a", "b", None]]
for k in range(8):
    t = math.pi * k / 7
    joints["t%d" % k] = [0, 0.3 * math.cos(t), 0.5 + 0.3 * math.sin(t)]
    bones.append(["p%d" % k, "b", "t%d" % k, "base"])
json.dump({"joints": joints, "bones": bones}, open(sys.argv[1], "w"))
PY
expect no_usable_topology 2 'shares no bone name or role.*target bones: base p0' -- "$AM_BIN" retarget "$D/bvh/cmu/01_01.bvh" \
  --scale 0.01 --to "$TMP/fan.json" -o "$TMP/bad/out"
# a source clip of 0 frames
jq '.trans = [] | .root_quat = [] | .quat = [] | .euler = [] | del(.joints, .loc)' "$TMP/fh/motion.json" > "$TMP/empty.json"
expect empty_clip 2 '0 frames|empty' -- "$AM_BIN" retarget "$TMP/empty.json" --source-rig "$TMP/fh/rig.json" --to "$Q/Fox.glb" -o "$TMP/bad/out"
printf 'HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 0\nFrame Time: 0.033\n' > "$TMP/empty.bvh"
expect empty_bvh 2 'empty' -- "$AM_BIN" retarget "$TMP/empty.bvh" --to "$Q/Fox.glb" -o "$TMP/bad/out"
no_files bad_inputs_leave_nothing "$TMP/bad"
# usage
expect usage_no_target 2 'missing --to' -- "$AM_BIN" retarget "$Q/Fox.glb" -o "$TMP/x"
expect usage_motion_needs_rig 2 'needs its rig' -- "$AM_BIN" retarget "$TMP/fh/motion.json" --to "$Q/Fox.glb" -o "$TMP/x"
expect usage_pose 2 '--pose is align or delta' -- "$AM_BIN" retarget "$Q/Fox.glb" --to "$Q/Fox.glb" --pose t -o "$TMP/x"
expect usage_out_file 2 'names a folder' -- "$AM_BIN" retarget "$Q/Fox.glb" --to "$Q/Fox.glb" -o "$TMP/x.glb"

# every clip at once, a rig.json target, poses given
expect all_clips 0 '' -- "$AM_BIN" retarget "$D/gltf/khronos_fox/Fox.glb" --scale 0.01 --all-clips --to "$TMP/fh/rig.json" --no-mesh -o "$TMP/all" -q
expect all_clips_files 0 'animation_Walk.bvh' -- ls "$TMP/all"
expect all_clips_glb 0 'animation 2 Run' -- "$AM_BIN" info "$TMP/all/animation.glb"
expect all_clips_report 0 '"Survey"' -- jq -c '.clips | keys' "$TMP/all/report.json"
expect source_pose_frame 0 '' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --source-pose 0 --target-pose 0 -o "$TMP/sp" -q
# an explicit matching pose of either rig: the source's pose comes out as the target's, exactly, in
# both modes (FILE: a motion.json's frame 0; FRAME: a frame of the source clip)
"$AM_BIN" convert "$Q/Husky.glb" --clip Walk --fps 24 -o "$TMP/husky_walk" -q
pose_check() { # OUT FRAME: OUT's frame FRAME against the Husky's Walk frame 0, every rotation
  /usr/bin/python3 - "$1/motion.json" "$2" "$TMP/husky_walk/motion.json" "$AM_SOURCE/bench" <<'PY'
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[4])
from retarget_score import qangle
o, t, h = json.load(open(sys.argv[1])), int(sys.argv[2]), json.load(open(sys.argv[3]))
assert o["bones"] == h["bones"]
q = qangle(np.array(o["quat"][t]), np.array(h["quat"][0])).max()
r = qangle(np.array(o["root_quat"][t]), np.array(h["root_quat"][0]))
print("%.3g" % max(q, r))
sys.exit(0 if max(q, r) < 1e-9 else 1)
PY
}
for mode in align delta; do
  "$AM_BIN" retarget "$TMP/fox/motion.json" --source-rig "$TMP/fox/rig.json" --to "$TMP/husky_walk/rig.json" --pose $mode \
    --source-pose "$TMP/fox/motion.json" --target-pose "$TMP/husky_walk/motion.json" --ik none -o "$TMP/pf_$mode" -q 2>/dev/null
  if out=$(pose_check "$TMP/pf_$mode" 0 2>&1); then am_pass "pose_files_$mode (frame 0 is the target pose to $out rad)"
  else am_fail "pose_files_$mode" "$out"; fi
  "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$TMP/husky_walk/rig.json" --pose $mode --source-pose 7 \
    --target-pose "$TMP/husky_walk/motion.json" --ik none -o "$TMP/pn_$mode" -q 2>/dev/null
  if out=$(pose_check "$TMP/pn_$mode" 7 2>&1); then am_pass "pose_frame_$mode (frame 7 is the target pose to $out rad)"
  else am_fail "pose_frame_$mode" "$out"; fi
done
# --root-scale H,V: the root's displacement from frame 0 is the source's times H across and V up
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$Q/Husky.glb" --root-scale 2,0.5 --ik none -o "$TMP/rs" -q 2>/dev/null
if out=$(/usr/bin/python3 - "$TMP/fox/motion.json" "$TMP/rs/motion.json" "$TMP/rs/report.json" <<'PY' 2>&1
import json, sys
import numpy as np
s, o, rep = (json.load(open(p)) for p in sys.argv[1:4])
# the root's driver is the Husky's Body (root) driven by the Fox's: heads are trans
ds, do = np.array(s["trans"]) - s["trans"][0], np.array(o["trans"]) - o["trans"][0]
e = max(np.abs(do[:, :2] - 2 * ds[:, :2]).max(), np.abs(do[:, 2] - 0.5 * ds[:, 2]).max())
f = (rep["root_motion"]["scale_horizontal"], rep["root_motion"]["scale_vertical"])
print("displacement off by %.3g m, factors %s" % (e, f))
sys.exit(0 if e < 1e-9 and f == (2, 0.5) else 1)
PY
); then am_pass "root_scale ($out)"; else am_fail root_scale "$out"; fi
expect delta_keep 0 'root x1' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --pose delta --root keep -o "$TMP/dk"
# --report --render (issue 15): report.html of the target's motion loads in headless Chromium with
# no console error, its viewer on the kept Husky (nodes scaled, not Y along the bone) puts the
# joints where motion.json's FK does to 1e-4 of the body size, the screenshot matches its golden
# (tests/cli/report_check.mjs; relative paths, so the title names no folder of this machine); the
# page plots the plants report.json holds, with the same foot slide; the renders are the Husky
ln -s "$Q/Fox.glb" "$TMP/Fox.glb"
ln -s "$Q/Husky.glb" "$TMP/Husky.glb"
expect retarget_report_render 0 "" -- bash -c "cd '$TMP' && '$AM_BIN' retarget Fox.glb --clip Walk --to Husky.glb -o rr --report --render -q"
miss=""
for f in motion.json animation.glb report.json report.html report_three.js render_layout.png render_three_quarter.png; do
  [ -s "$TMP/rr/$f" ] || miss="$miss $f"; done
if [ -z "$miss" ]; then am_pass retarget_pictures_written; else am_fail retarget_pictures_written "missing:$miss"; fi
if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/rr/report.html" "$TMP/rr/motion.json" "$TMP/rr_shot.png" "$AM_SOURCE/tests/data/render/report_retarget.png" 2>&1); then
  am_pass "retarget_report_in_chromium: $out"; else am_fail retarget_report_in_chromium "$out"; fi
if out=$(/usr/bin/python3 - "$TMP/rr/report.html" "$TMP/rr/report.json" <<'PY' 2>&1
import json, re, sys
html, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
i = html.index("Foot slide per plant")
cells = re.findall(r">([^<]*)</text>", html[i:html.index("</svg>", i)])
page = {cells[k]: float(cells[k + 1].split()[0]) for k in range(0, len(cells) - 1, 2)}
want = {"%s %d-%d" % (p["contact"], p["first"], p["last"]): p["target_slide_mm"] for p in rep["plants"]}
off = max(abs(page[k] - v) for k, v in want.items()) if set(page) == set(want) else float("inf")
print("%d plants, page vs report.json %.3g mm, contacts plot %s" % (len(want), off, 'id="contacts"' in html))
# the page's slide is horizontal, report.json's 3D: equal to well under a millimetre here
sys.exit(0 if len(want) > 4 and off < 0.01 and 'id="contacts"' in html and "Per-bone angle from rest" in html else 1)
PY
); then am_pass "retarget_report_plants ($out)"; else am_fail retarget_report_plants "$out"; fi
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$TMP/rr/render_three_quarter.png")
if [ "$got" = "1280,720" ]; then am_pass retarget_render_size; else am_fail retarget_render_size "ffprobe says '$got'"; fi
# the character is drawn, not its bone shapes: the two renders differ where the mesh is
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --no-mesh -o "$TMP/rrb" --render -q
if ! cmp -s "$TMP/rr/render_layout.png" "$TMP/rrb/render_layout.png" && [ ! -e "$TMP/rrb/report.html" ]; then
  am_pass retarget_render_mesh; else am_fail retarget_render_mesh "the Husky render equals the bone shapes', or --render wrote a report"; fi
# an unwritable output: exit 2 naming it, nothing written
: > "$TMP/plainfile"
expect retarget_report_unwritable 2 "plainfile" -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" -o "$TMP/plainfile/rr" --report --render
if [ -f "$TMP/plainfile" ] && [ ! -s "$TMP/plainfile" ]; then am_pass retarget_report_unwritable_nothing; else am_fail retarget_report_unwritable_nothing "plainfile changed"; fi
mkdir -p "$TMP/ro" && chmod 555 "$TMP/ro"
if [ "$(id -u)" -ne 0 ]; then
  expect retarget_report_readonly 2 "ro" -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" -o "$TMP/ro/rr" --report
  no_files retarget_report_readonly_nothing "$TMP/ro"
fi
expect retarget_report_print_map 2 "go with -o DIR" -- "$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --print-map --report
am_done
