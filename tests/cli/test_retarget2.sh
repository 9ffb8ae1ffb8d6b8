#!/usr/bin/env bash
# `anymove retarget`, the bullets of issue 13 that test_retarget.sh leaves to a single run or
# to the unit tests (docs/retarget_checklist.md lists which test covers which bullet): a clip
# picked by index, every clip validator-clean, --root keep and the default leg ratio, A->B->C =
# A->C on a real rig, a standing clip's planted feet left where the transfer puts them, foot
# slide per plant on both rigs, and the across-design maps of docs/retarget.md.
. "$(dirname "$0")/lib.sh"
am_need_shared data/gltf/quaternius/Fox.glb data/gltf/quaternius/Husky.glb data/gltf/quaternius/KnightCharacter.glb \
  data/gltf/khronos_fox/Fox.glb data/bvh/animated_drawings/dab.bvh data/bvh/cmu/08_01_trimmed.bvh
am_need_tool /usr/bin/python3 jq
D=$AM_SHARED/data
Q=$D/gltf/quaternius
K=$D/gltf/khronos_fox/Fox.glb
PY=/usr/bin/python3

# --clip INDEX is the same clip as --clip NAME (Walk is animation 11 of the Quaternius Fox)
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --to "$Q/Husky.glb" --ik none -o "$TMP/byname" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip 11 --to "$Q/Husky.glb" --ik none -o "$TMP/byindex" -q 2>/dev/null
if [ -s "$TMP/byname/motion.json" ] && cmp -s "$TMP/byname/motion.json" "$TMP/byindex/motion.json"; then
  am_pass clip_by_index; else am_fail clip_by_index "--clip 11 and --clip Walk differ (or nothing written)"; fi
expect clip_index_out_of_range 2 'clip' -- "$AM_BIN" retarget "$Q/Fox.glb" --clip 12 --to "$Q/Husky.glb" -o "$TMP/bad/x"

# --all-clips: one animation per source clip in a validator-clean GLB, on the kept character
expect all_clips_run 0 '' -- "$AM_BIN" retarget "$K" --scale 0.01 --all-clips --to "$Q/Fox.glb" -o "$TMP/all" -q
expect all_clips_validator 0 '"errors":0,"warnings":0' -- bash "$AM_VALIDATOR" "$TMP/all/animation.glb"
n=$("$AM_BIN" info "$TMP/all/animation.glb" 2>/dev/null | grep -c '^  animation ')
m=$(ls "$TMP/all"/motion_*.json 2>/dev/null | wc -l)
if [ "$n" = 3 ] && [ "$m" = 3 ]; then am_pass "all_clips_three (3 animations, 3 motions)"
else am_fail all_clips_three "$n animations, $m motion files (the Khronos Fox has 3 clips)"; fi
expect all_clips_is_the_fox 0 'mesh 0' -- "$AM_BIN" info "$TMP/all/animation.glb"

# the root: --root keep moves the root's driver by the source's displacement as it is; the
# default scales it by the summed leg lengths' ratio, which the report gives
"$AM_BIN" convert "$Q/Fox.glb" --clip Walk --fps 24 -o "$TMP/fox" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$Q/Husky.glb" --root keep --ik none -o "$TMP/keep" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip Walk --fps 24 --to "$Q/Husky.glb" --ik none -o "$TMP/scaled" -q 2>/dev/null
root_check() { # OUT WANT-FACTOR(or "report"): the root's displacement from frame 0 against the source's
  $PY - "$TMP/fox/motion.json" "$1/motion.json" "$1/report.json" "$2" <<'PY'
import json, sys
import numpy as np
s, o, rep = (json.load(open(p)) for p in sys.argv[1:4])
rm = rep["root_motion"]
k = rm["leg_target_m"] / rm["leg_source_m"] if sys.argv[4] == "report" else float(sys.argv[4])
ds, do = np.array(s["trans"]) - s["trans"][0], np.array(o["trans"]) - o["trans"][0]
e = np.abs(do - k * ds).max()
f = (rm["scale_horizontal"], rm["scale_vertical"])
print("displacement off by %.3g m at factor %.6g (report: %s)," % (e, k, f), end=" ")
print("source moves %.3g m" % np.abs(ds).max())
sys.exit(0 if e < 1e-9 and abs(f[0] - k) < 1e-12 and abs(f[1] - k) < 1e-12 and np.abs(ds).max() > 0.01 else 1)
PY
}
if out=$(root_check "$TMP/keep" 1 2>&1); then am_pass "root_keep ($out)"; else am_fail root_keep "$out"; fi
if out=$(root_check "$TMP/scaled" report 2>&1) && ! grep -q 'factor 1 ' <<<"$out"; then am_pass "root_scale_leg_ratio ($out)"
else am_fail root_scale_leg_ratio "$out"; fi

# A->B->C = A->C on rotations, on a real rig: B and C are the Quaternius Fox re-posed and
# renamed two ways (tests/cli/rig_variant.py). --pose delta: every rotation. --pose align: the
# world joints, the rotation of every bone whose roll the joints fix (two or more directions
# from its head: its tail and children's heads off that line), and of every bone with one
# direction (47 of the Fox's 51: a leaf, or one child on its tail), whose twist the joints do
# not fix: it is the parent's alignment carried along each rig's own chain (docs/retarget.md).
# (The smallest swing from the parent's alignment, before, did not compose: 0.18 rad.)
"$AM_BIN" convert "$Q/Fox.glb" -o "$TMP/ca" -q 2>/dev/null
$PY "$AM_SOURCE/tests/cli/rig_variant.py" "$AM_BIN" "$TMP/ca/rig.json" "$TMP/cb/rig.json" --seed 5 --prefix b
$PY "$AM_SOURCE/tests/cli/rig_variant.py" "$AM_BIN" "$TMP/ca/rig.json" "$TMP/cc/rig.json" --seed 9 --prefix c
for mode in align delta; do
  "$AM_BIN" retarget "$TMP/ca/motion.json" --source-rig "$TMP/ca/rig.json" --to "$TMP/cb/rig.json" --pose $mode --ik none -o "$TMP/ab_$mode" -q 2>/dev/null
  "$AM_BIN" retarget "$TMP/ab_$mode/motion.json" --source-rig "$TMP/cb/rig.json" --to "$TMP/cc/rig.json" --pose $mode --ik none -o "$TMP/abc_$mode" -q 2>/dev/null
  "$AM_BIN" retarget "$TMP/ca/motion.json" --source-rig "$TMP/ca/rig.json" --to "$TMP/cc/rig.json" --pose $mode --ik none -o "$TMP/ac_$mode" -q 2>/dev/null
  if out=$($PY - "$TMP/ac_$mode/motion.json" "$TMP/abc_$mode/motion.json" "$TMP/cc/rig.json" "$TMP/ca/motion.json" $mode \
           "$AM_SOURCE/bench" <<'PY' 2>&1
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[6])
from retarget_score import qangle
ac, abc, rig, a = (json.load(open(p)) for p in sys.argv[1:5])
mode = sys.argv[5]
J = {k: np.array(v) for k, v in rig["joints"].items()}
def fixed(x):  # the joints fix the bone's roll: a second direction from its head off its axis
    u = (J[x[2]] - J[x[1]]) / np.linalg.norm(J[x[2]] - J[x[1]])
    return any(np.linalg.norm(np.cross(u, J[c[1]] - J[x[1]])) > 1e-6 * np.linalg.norm(J[x[2]] - J[x[1]])
               for c in rig["bones"] if c[3] == x[0])
idx = {n: i for i, n in enumerate(ac["bones"])}
e = qangle(np.array(ac["quat"]), np.array(abc["quat"])).max(0)
root = qangle(np.array(ac["root_quat"]), np.array(abc["root_quat"])).max()
two = [e[idx[x[0]]] for x in rig["bones"] if fixed(x)]
one = [e[idx[x[0]]] for x in rig["bones"] if not fixed(x)]
P, Q = np.array(ac["joints"]), np.array(abc["joints"])
size = np.linalg.norm(P[0].max(0) - P[0].min(0))
dj = np.linalg.norm(P - Q, axis=2).max() / size
# and not the identity: C's rotations differ from A's (the bind poses differ by tens of degrees)
moved = qangle(np.array(a["quat"]), np.array(ac["quat"])).max()
print("A->B->C vs A->C: joints %.3g of the body size, root %.3g rad, %d bones with their roll fixed %.3g rad, %d with one "
      "direction %.3g rad; A->C vs A %.3g rad" % (dj, root, len(two), max(two), len(one), max(one), moved))
# (delta's joints differ: its rotations are A's as they are on C's own bind pose, and the feet
# parented to the body follow their legs by translation, which differs with the bind pose)
ok = (dj < 1e-12 or mode == "delta") and root < 1e-9 and len(two) >= 4 and max(two) < 1e-9 and moved > 0.1
sys.exit(0 if ok and len(one) >= 40 and max(one) < 1e-9 else 1)
PY
  ); then am_pass "compose_$mode ($out)"; else am_fail "compose_$mode" "$out"; fi
done

# A standing clip: the Fox's Idle plants all four paws for the whole clip, its toe ends 4.6 cm
# over the ground (joints inside the paws), and the Husky's the same. The IK holds the plants
# still but must not pull them into the ground nor drop the pelvis: heights as the transfer
# (and the root) put them, within the 3 mm the transferred paws drift (the slide the IK takes
# out), the root untouched. (The plant's height was once measured over the contact's lowest
# point in the clip, the plant itself: paws 4.5 cm down, pelvis 2 cm.)
"$AM_BIN" retarget "$Q/Fox.glb" --clip Idle --fps 24 --to "$Q/Husky.glb" -o "$TMP/idle" -q 2>/dev/null
"$AM_BIN" retarget "$Q/Fox.glb" --clip Idle --fps 24 --to "$Q/Husky.glb" --ik none -o "$TMP/idle0" -q 2>/dev/null
if out=$($PY - "$TMP/idle" "$TMP/idle0" <<'PY' 2>&1
import json, sys
import numpy as np
ik, no = (json.load(open(d + "/motion.json")) for d in sys.argv[1:3])
rep = json.load(open(sys.argv[1] + "/report.json"))
n = ik["joint_names"]
J, J0 = np.array(ik["joints"]), np.array(no["joints"])
feet = [n.index(c["target"]) for c in rep["contacts"]]
dz = np.abs(J[:, feet, 2] - J0[:, feet, 2]).max()
droot = np.abs(np.array(ik["trans"]) - np.array(no["trans"])).max()
low = J[:, feet, 2].min()
slide = rep["foot_slide_mm"]
print("paws' height vs --ik none %.3g mm, root %.3g mm, lowest paw %.3f m, %d plants, target slide max %.3g mm (source %.3g)"
      % (1e3 * dz, 1e3 * droot, low, slide["plants"], slide["target_max"], slide["source_max"]))
sys.exit(0 if dz < 4e-3 and droot < 1e-9 and low > 0.04 and slide["plants"] == 4 and slide["target_max"] < 1 else 1)
PY
); then am_pass "standing_plants_stay ($out)"; else am_fail standing_plants_stay "$out"; fi

# foot slide per plant on source and target (report.json), feet above the ground, chain
# directions: AnimatedDrawings' dab onto the Knight; the GLB validator-clean
"$AM_BIN" retarget "$D/bvh/animated_drawings/dab.bvh" --up z --scale 0.01 --to "$Q/KnightCharacter.glb" -o "$TMP/dab" -q 2>/dev/null
if out=$(jq -e '(.plants | length) == .foot_slide_mm.plants and .foot_slide_mm.plants > 10 and
                ([.plants[] | select((.source_slide_mm | type) == "number" and (.target_slide_mm | type) == "number"
                                     and .target_slide_mm <= 1)] | length) == (.plants | length) and
                ([.plants[] | .source_slide_mm] | max) > 1 and
                .feet_below_ground_max_mm <= 1 and .chain_direction_deg.mean < 10' "$TMP/dab/report.json" 2>&1); then
  am_pass "dab_knight_plants ($(jq -c '[.foot_slide_mm.plants, .foot_slide_mm.source_max, .foot_slide_mm.target_max, .chain_direction_deg.mean]' "$TMP/dab/report.json"))"
else am_fail dab_knight_plants "$(jq -c '.foot_slide_mm, .feet_below_ground_max_mm, .chain_direction_deg' "$TMP/dab/report.json" 2>&1)"; fi
expect dab_knight_validator 0 '"errors":0,"warnings":0' -- bash "$AM_VALIDATOR" "$TMP/dab/animation.glb"

# the across-design maps of docs/retarget.md ("The maps the benchmarks chose"): every limb,
# the spine, the head (and the tail) onto their counterparts; thumbs onto thumbs by the side
# of X (the Knight's Thumb.R is on its left hand)
map_check() { # NAME JQ-CONDITION RETARGET-ARGS...
  local name=$1 cond=$2
  shift 2
  "$AM_BIN" retarget "$@" --print-map -q > "$TMP/$name.json" 2>/dev/null
  if jq -e ".bones | $cond" "$TMP/$name.json" > /dev/null 2>&1; then am_pass "$name"
  else am_fail "$name" "$(jq -c .bones "$TMP/$name.json" 2>&1 | head -c 900)"; fi
}
map_check map_dab_knight '.Hips == "Body" and .Spine3 == "Torso" and .Neck == "Neck" and .Head == "Head" and
  .LeftUpLeg == "UpperLeg.L" and .LeftLeg == "LowerLeg.L" and .LeftFoot == "Foot.L" and
  .RightUpLeg == "UpperLeg.R" and .RightLeg == "LowerLeg.R" and .RightFoot == "Foot.R" and
  .LeftShoulder == "Shoulder.L" and .LeftArm == "UpperArm.L" and .LeftForeArm == "LowerArm.L" and .LeftHand == "Palm.L" and
  .RightShoulder == "Shoulder.R" and .RightArm == "UpperArm.R" and .RightForeArm == "LowerArm.R" and .RightHand == "Palm.R" and
  .LeftHandThumb1 == "Thumb.R" and .RightHandThumb1 == "Thumb.L" and .LeftHandEnd == null and .RightHandEnd == null' \
  "$D/bvh/animated_drawings/dab.bvh" --up z --scale 0.01 --to "$Q/KnightCharacter.glb"
map_check map_cmu08_knight '.lThumb1 == "Thumb.R" and .rThumb1 == "Thumb.L" and .lIndex1 == "MiddleHand.L" and
  .rIndex1 == "MiddleHand.R" and .lHand == "Palm.L" and .rHand == "Palm.R"' \
  "$D/bvh/cmu/08_01_trimmed.bvh" --up y --scale 0.01 --to "$Q/KnightCharacter.glb"
map_check map_khronos_husky '.b_Hip_01 == "Back" and .b_Spine01_02 == "Torso" and .b_Spine02_03 == "Torso2" and
  .b_Head_05 == "Head" and .b_Tail01_012 == "Tail1" and .b_Tail03_014 == "Tail6" and
  .b_LeftLeg01_015 == "BackLeg.L" and .b_LeftLeg02_016 == "BackUpperLeg.L" and .b_LeftFoot01_017 == "BackLowerLeg.L" and
  .b_LeftFoot02_018 == "IKBackLeg.L" and .b_RightLeg01_019 == "BackLeg.R" and .b_RightFoot02_022 == "IKBackLeg.R" and
  .b_LeftUpperArm_09 == "FrontUpperLeg.L" and .b_LeftForeArm_010 == "FrontLowerLeg.L" and .b_LeftHand_011 == "IKFrontLeg.L" and
  .b_RightUpperArm_06 == "FrontUpperLeg.R" and .b_RightForeArm_07 == "FrontLowerLeg.R" and .b_RightHand_08 == "IKFrontLeg.R"' \
  "$K" --scale 0.01 --to "$Q/Husky.glb"
if jq -e '.rules.Neck1 | test("^chain: .*b_Neck_04")' "$TMP/map_khronos_husky.json" > /dev/null 2>&1; then
  am_pass map_khronos_husky_neck_chain; else am_fail map_khronos_husky_neck_chain "$(jq -c .rules.Neck1 "$TMP/map_khronos_husky.json")"; fi
# A glTF clip with no keyframes. glTF requires every accessor's count >= 1, so such a clip is
# not valid glTF, but files do come that way: the Walk's samplers given count 0 (every input
# and output accessor of that animation) -> exit 2 naming the clip, nothing written. A clip of
# one keyframe is valid (a pose): one frame, the full Walk's first frame exactly.
keys_glb() { # OUT N: the Quaternius Fox with every sampler of its Walk cut to N keyframes
  $PY - "$Q/Fox.glb" "$1" "$2" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", b, 12)[0]
doc, rest = json.loads(b[20:20 + n]), b[20 + n:]
an = next(a for a in doc["animations"] if a["name"].endswith("|Walk"))
k = int(sys.argv[3])
for s in an["samplers"]:
    for key in ("input", "output"):
        a = doc["accessors"][s[key]]
        a["count"] = k
        a.pop("min", None), a.pop("max", None)
    if k:
        doc["accessors"][s["input"]].update(min=[0.0], max=[0.0])
t = json.dumps(doc, separators=(",", ":")).encode()
t += b" " * (-len(t) % 4)
body = struct.pack("<II", len(t), 0x4E4F534A) + t + rest
open(sys.argv[2], "wb").write(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)
PY
}
keys_glb "$TMP/nokeys.glb" 0
keys_glb "$TMP/onekey.glb" 1
expect glb_clip_no_keyframes 2 "nokeys.glb.*animation 11 'AnimalArmature\|Walk' has a sampler with no keyframes" -- \
  "$AM_BIN" retarget "$TMP/nokeys.glb" --clip Walk --to "$Q/Husky.glb" -o "$TMP/nokeys/out"
no_files glb_clip_no_keyframes_nothing_written "$TMP/nokeys"
"$AM_BIN" retarget "$TMP/onekey.glb" --clip Walk --to "$Q/Husky.glb" --ik none -o "$TMP/onekey" -q 2>/dev/null
if out=$($PY - "$TMP/onekey/motion.json" "$TMP/byname/motion.json" <<'PY' 2>&1
import json, sys
import numpy as np
one, walk = (json.load(open(p)) for p in sys.argv[1:3])
d = max(np.abs(np.array(one[k][0]) - np.array(walk[k][0])).max() for k in ("quat", "root_quat", "trans"))
print("%d frame(s), %.3g from the Walk's first frame" % (len(one["quat"]), d))
sys.exit(0 if len(one["quat"]) == 1 and len(walk["quat"]) > 10 and d < 1e-12 else 1)
PY
); then am_pass "glb_clip_one_keyframe ($out)"; else am_fail glb_clip_one_keyframe "$out"; fi
am_done
