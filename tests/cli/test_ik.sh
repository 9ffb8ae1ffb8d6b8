#!/usr/bin/env bash
# anymove convert / ik / score ik: BVH and glTF in, motion.json + rig.json out, positions back to
# rotations (exact FK, low geodesic error with the reference), BVH and glTF out, bad input -> 2.
. "$(dirname "$0")/lib.sh"
am_need_shared data/gltf/quaternius/Fox.glb
am_need_tool node jq python3
C=$AM_SOURCE/fuzz/corpus/bvh
D=$AM_SHARED/data

# BVH -> rig.json + motion.json -> ik (with / without reference) -> score
expect convert_bvh 0 'rig.json' -- "$AM_BIN" convert "$C/human.bvh" -o "$TMP/h"
expect ik_bvh_ref 0 'FK error' -- "$AM_BIN" ik "$TMP/h/motion.json" --rig "$TMP/h/rig.json" --reference "$TMP/h/motion.json" -o "$TMP/h_ik"
for f in motion.json animation.glb animation.bvh report.json; do
  if [ -s "$TMP/h_ik/$f" ]; then am_pass "ik_writes_$f"; else am_fail "ik_writes_$f" "missing"; fi
done
expect ik_fk_exact 0 '"max_rel_size": [0-9.]+e-(0[7-9]|[1-9][0-9])' -- cat "$TMP/h_ik/report.json"
expect score_ik_ref 0 '"pose2rot": \{"frames": 2, "count": [0-9]+, "mean_deg": [0-4]\.' -- "$AM_BIN" score ik "$TMP/h/motion.json" "$TMP/h_ik/motion.json"
expect score_ik_variants 0 '"no_leaves_all_frames".*' -- "$AM_BIN" score ik "$TMP/h/motion.json" "$TMP/h_ik/motion.json" --rig "$TMP/h/rig.json" --frames 1
expect ik_bvh_noref 0 '' -- "$AM_BIN" ik "$TMP/h/motion.json" --rig "$TMP/h/rig.json" --no-reference -o "$TMP/h_ik2" -q
expect ik_bvh_out_parses 0 'rig.json' -- "$AM_BIN" convert "$TMP/h_ik/animation.bvh" --up y -o "$TMP/h_back"
expect ik_glb_validates 0 '"errors":0' -- "$AM_VALIDATOR" "$TMP/h_ik/animation.glb"

# motion.json + rig -> BVH and glTF
expect convert_to_bvh 0 '' -- "$AM_BIN" convert "$TMP/h/motion.json" --rig "$TMP/h/rig.json" -o "$TMP/h.bvh" -q
expect convert_to_glb 0 '' -- "$AM_BIN" convert "$TMP/h/motion.json" --rig "$TMP/h/rig.json" -o "$TMP/h.glb" -q
expect convert_bvh_reads_back 0 '' -- "$AM_BIN" convert "$TMP/h.bvh" -o "$TMP/h2" -q
# the round trip keeps every joint: same rig.json joints
if [ "$(jq -c '.joints | keys' "$TMP/h/rig.json")" = "$(jq -c '.joints | keys' "$TMP/h2/rig.json")" ]; then
  am_pass convert_bvh_roundtrip_joints; else am_fail convert_bvh_roundtrip_joints "joint sets differ"; fi

# glTF: a skinned model's clip, helper bones listed, ik reproduces its positions
expect convert_glb_clips 0 'Walk' -- "$AM_BIN" convert "$D/gltf/quaternius/Fox.glb" --list-clips
expect convert_glb 0 '' -- "$AM_BIN" convert "$D/gltf/quaternius/Fox.glb" --clip Walk -o "$TMP/fox" -q
expect convert_glb_helpers 0 'PoleTarget' -- jq -c .helpers "$TMP/fox/rig.json"
expect convert_glb_loc 0 '"loc"' -- grep -o '"loc"' "$TMP/fox/motion.json"
# ik solves the rotations of a rigid rig; the fox's back and IK-driven feet also slide
# (motion.json "loc"). On the clip without its loc (joints by fk) ik is exact.
jq 'del(.loc, .joints, .joint_names)' "$TMP/fox/motion.json" > "$TMP/fox_rigid0.json"
"$AM_BIN" fk "$TMP/fox/rig.json" --motion "$TMP/fox_rigid0.json" > "$TMP/fox_rigid_fk.json"
jq -s '.[0] + {joints: .[1].joints, joint_names: .[1].joint_names}' "$TMP/fox_rigid0.json" "$TMP/fox_rigid_fk.json" > "$TMP/fox_rigid.json"
expect ik_glb_ref 0 '' -- "$AM_BIN" ik "$TMP/fox_rigid.json" --rig "$TMP/fox/rig.json" --reference "$TMP/fox_rigid.json" -o "$TMP/fox_ik" -q
expect ik_glb_fk_exact 0 '"max_rel_size": [0-9.]+e-(0[7-9]|[1-9][0-9])' -- cat "$TMP/fox_ik/report.json"
expect score_glb_under_5deg 0 '"pose2rot": \{"frames": [0-9]+, "count": [0-9]+, "mean_deg": [0-4]\.' -- "$AM_BIN" score ik "$TMP/fox_rigid.json" "$TMP/fox_ik/motion.json" --rig "$TMP/fox/rig.json"
# Noisy input (issue 12): 1 % of the body per axis and 5 % missing come back at most half as
# noisy (SPEC 5 noise ratio), missing joints filled by the rig. This clip with the fixed
# multiplier (0.41 when written; the default's cross-validation is tested below on the Khronos
# Fox, 16 fits of this rig cost ~100 s under ASan).
/usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" make "$TMP/fox_rigid.json" "$TMP/fox/rig.json" "$TMP/fox_noisy.npz" --seed 1
expect ik_glb_noisy 0 '' -- "$AM_BIN" ik "$TMP/fox_noisy.npz" --rig "$TMP/fox/rig.json" --reference "$TMP/fox_rigid.json" --smooth 1 -o "$TMP/fox_noisy_ik" -q
expect ik_glb_noisy_ratio_under_half 0 '"ratio": 0\.[0-4]' -- /usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" score \
  "$TMP/fox_rigid.json" "$TMP/fox/rig.json" "$TMP/fox_noisy.npz" "$TMP/fox_noisy_ik/motion.json"
expect ik_noisy_smooth_fixed 0 '"smooth":1,"smooth_auto":false' -- jq -c .fit "$TMP/fox_noisy_ik/report.json"
# On exact input there is nothing to choose and the fixed multiplier stands.
expect ik_exact_smooth_fixed 0 '"smooth":1,"smooth_auto":false' -- jq -c .fit "$TMP/fox_ik/report.json"
# --smooth auto against the motion: the Khronos Fox walk at 30 fps moves fast against 1 %
# noise and is smoothed less than the default (0.63 when written); the same walk sampled at
# 60 fps moves half as much per frame against the same noise per entry, and is smoothed more
# (1.53; 120 fps chose 5.1 but cost 3x the CV fits). There, auto is no worse than the fixed
# default (0.338 against 0.359 when written). At 30 fps without --smooth: the default is auto,
# the report says so, and the walk comes back under half the noise.
for fps in 30 60; do
  k=$TMP/kfox$fps
  "$AM_BIN" convert "$D/gltf/khronos_fox/Fox.glb" --clip Walk --fps $fps -o "$k" -q 2>/dev/null
  jq 'del(.loc, .joints, .joint_names)' "$k/motion.json" > "$k/rigid0.json"
  "$AM_BIN" fk "$k/rig.json" --motion "$k/rigid0.json" > "$k/fk.json" 2>/dev/null
  jq -s '.[0] + {joints: .[1].joints, joint_names: .[1].joint_names}' "$k/rigid0.json" "$k/fk.json" > "$k/rigid.json"
  /usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" make "$k/rigid.json" "$k/rig.json" "$k/noisy.npz" --seed 1
  how=(--smooth auto)
  [ $fps = 30 ] && how=()
  expect ik_smooth_auto_$fps 0 '' -- "$AM_BIN" ik "$k/noisy.npz" --rig "$k/rig.json" --reference "$k/rigid.json" "${how[@]}" -o "$k/auto" -q
done
expect ik_noisy_smooth_auto 0 '"smooth_auto": true' -- cat "$TMP/kfox30/auto/report.json"
expect ik_noisy_auto_ratio_under_half 0 '"ratio": 0\.[0-4]' -- /usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" score \
  "$TMP/kfox30/rigid.json" "$TMP/kfox30/rig.json" "$TMP/kfox30/noisy.npz" "$TMP/kfox30/auto/motion.json"
expect ik_smooth_fixed_60 0 '' -- "$AM_BIN" ik "$TMP/kfox60/noisy.npz" --rig "$TMP/kfox60/rig.json" --reference "$TMP/kfox60/rigid.json" --smooth 1 -o "$TMP/kfox60/fixed" -q
expect ik_smooth_auto_fast_clip_less 0 'true' -- jq '.fit.smooth_auto and .fit.smooth < 1' "$TMP/kfox30/auto/report.json"
expect ik_smooth_auto_slow_clip_more 0 'true' -- jq '.fit.smooth_auto and .fit.smooth > 1.2' "$TMP/kfox60/auto/report.json"
k=$TMP/kfox60
ra=$(/usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" score "$k/rigid.json" "$k/rig.json" "$k/noisy.npz" "$k/auto/motion.json" | jq .ratio)
rf=$(/usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" score "$k/rigid.json" "$k/rig.json" "$k/noisy.npz" "$k/fixed/motion.json" | jq .ratio)
if [ -n "$ra" ] && [ -n "$rf" ] && awk -v a="$ra" -v f="$rf" 'BEGIN {exit !(a <= f)}'; then
  am_pass ik_smooth_auto_no_worse; else am_fail ik_smooth_auto_no_worse "auto ratio $ra > fixed $rf"; fi
# A fast strike (issue 12): the Quaternius Snake's Attack (21 frames at 30 fps), noised as above.
# One smoothness for the whole clip flattens the strike's two frames (ratio 0.529 with the
# cross-validated multiplier alone); the smoothness lowered where the first fit's residuals
# exceed the noise gives 0.520 when written.
if [ -e "$D/gltf/quaternius/Snake.glb" ]; then
  k=$TMP/snake
  "$AM_BIN" convert "$D/gltf/quaternius/Snake.glb" --clip 0 -o "$k" -q 2>/dev/null
  jq 'del(.loc, .joints, .joint_names)' "$k/motion.json" > "$k/rigid0.json"
  "$AM_BIN" fk "$k/rig.json" --motion "$k/rigid0.json" > "$k/fk.json" 2>/dev/null
  jq -s '.[0] + {joints: .[1].joints, joint_names: .[1].joint_names}' "$k/rigid0.json" "$k/fk.json" > "$k/rigid.json"
  /usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" make "$k/rigid.json" "$k/rig.json" "$k/noisy.npz" --seed 1
  expect ik_strike_auto 0 '' -- "$AM_BIN" ik "$k/noisy.npz" --rig "$k/rig.json" --reference "$k/rigid.json" -o "$k/auto" -q
  rs=$(/usr/bin/python3 "$AM_SOURCE/bench/ik_noise.py" score "$k/rigid.json" "$k/rig.json" "$k/noisy.npz" "$k/auto/motion.json" | jq .ratio)
  if [ -n "$rs" ] && awk -v a="$rs" 'BEGIN {exit !(a < 0.525)}'; then
    am_pass ik_strike_smoothed_less_there; else am_fail ik_strike_smoothed_less_there "strike ratio $rs >= 0.525"; fi
else
  am_fail shared_snake "$D/gltf/quaternius/Snake.glb is missing"
fi
expect ik_smooth_bad 2 'auto or a positive' -- "$AM_BIN" ik "$TMP/fox_noisy.npz" --rig "$TMP/fox/rig.json" --smooth 0 -o "$TMP/x"
expect ik_smooth_analytic 2 'not with --analytic' -- "$AM_BIN" ik "$TMP/fox_noisy.npz" --rig "$TMP/fox/rig.json" --smooth auto --analytic -o "$TMP/x"
expect ik_glb_walk 0 '' -- "$AM_BIN" ik "$TMP/fox/motion.json" --rig "$TMP/fox/rig.json" --reference "$TMP/fox/motion.json" -o "$TMP/fox_walk_ik" -q
expect score_glb_walk_under_5deg 0 '"pose2rot": \{"frames": [0-9]+, "count": [0-9]+, "mean_deg": [0-4]\.' -- "$AM_BIN" score ik "$TMP/fox/motion.json" "$TMP/fox_walk_ik/motion.json"
expect convert_glb_bad_clip 2 "no clip 'Sleep'" -- "$AM_BIN" convert "$D/gltf/quaternius/Fox.glb" --clip Sleep -o "$TMP/x"

# joints.npz input (written without numpy by ik_npz.py)
python3 "$(dirname "$0")/ik_npz.py" "$TMP/h/motion.json" "$TMP/j.npz"
expect ik_npz 0 '' -- "$AM_BIN" ik "$TMP/j.npz" --rig "$TMP/h/rig.json" --reference "$TMP/h/motion.json" -o "$TMP/npz_ik" -q
expect ik_npz_fk_exact 0 '"max_rel_size": [0-9.]+e-(0[7-9]|[1-9][0-9])' -- cat "$TMP/npz_ik/report.json"
python3 "$(dirname "$0")/ik_npz.py" "$TMP/h/motion.json" "$TMP/nan.npz" nan
expect ik_npz_nan 2 "nan\.npz: error: NaN or infinite value \(.*frame 1" -- "$AM_BIN" ik "$TMP/nan.npz" --rig "$TMP/h/rig.json" -o "$TMP/x"
python3 "$(dirname "$0")/ik_npz.py" "$TMP/h/motion.json" "$TMP/empty.npz" empty
expect ik_npz_empty 2 'empty input' -- "$AM_BIN" ik "$TMP/empty.npz" --rig "$TMP/h/rig.json" -o "$TMP/x"

# Bad input: exit 2 with the place named.
printf 'HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n' > "$TMP/nomotion.bvh"
expect bvh_missing_motion 2 'nomotion\.bvh:11:1: error: syntax error.*MOTION' -- "$AM_BIN" convert "$TMP/nomotion.bvh" -o "$TMP/x"
expect bvh_short_frame 2 'short_frame\.bvh:15:2: error: wrong array shape' -- "$AM_BIN" convert "$C/short_frame.bvh" -o "$TMP/x"
expect bvh_nan 2 'nan\.bvh:10:1: error: NaN' -- "$AM_BIN" convert "$C/nan.bvh" -o "$TMP/x"
sed 's/Frames: 2/Frames: 0/' "$C/human.bvh" > "$TMP/t0.bvh"
expect bvh_zero_frames 2 't0\.bvh:[0-9]+:[0-9]+: error: empty input' -- "$AM_BIN" convert "$TMP/t0.bvh" -o "$TMP/x"
sed 's/CHANNELS 3 Zrotation Xrotation Yrotation/CHANNELS 3 Zrotation Xrotation/' "$C/human.bvh" > "$TMP/ch.bvh"
expect bvh_channel_count 2 'ch\.bvh:[0-9]+:[0-9]+: error: syntax error' -- "$AM_BIN" convert "$TMP/ch.bvh" -o "$TMP/x"
sed 's/"Spine"/"Spline"/g' "$TMP/h/motion.json" > "$TMP/badnames.json"
expect ik_unknown_name 2 "Spline" -- "$AM_BIN" ik "$TMP/badnames.json" --rig "$TMP/h/rig.json" -o "$TMP/x"
jq '.joints = [] | .quat = [] | .euler = [] | .trans = [] | .root_quat = []' "$TMP/h/motion.json" > "$TMP/empty.json"
expect ik_zero_frames 2 'error' -- "$AM_BIN" ik "$TMP/empty.json" --rig "$TMP/h/rig.json" -o "$TMP/x"
jq '.joints.Spine = .joints.Hips' "$TMP/h/rig.json" > "$TMP/zero_rig.json"
expect ik_zero_length_bone 2 'zero|degenerate|length' -- "$AM_BIN" ik "$TMP/h/motion.json" --rig "$TMP/zero_rig.json" -o "$TMP/x"
if [ ! -e "$TMP/x" ]; then am_pass bad_input_writes_nothing; else am_fail bad_input_writes_nothing "$TMP/x exists"; fi
expect ik_usage 2 'missing --rig' -- "$AM_BIN" ik "$TMP/h/motion.json" -o "$TMP/x"
expect ik_ref_conflict 2 'exclude' -- "$AM_BIN" ik "$TMP/h/motion.json" --rig "$TMP/h/rig.json" --reference "$TMP/h/motion.json" --no-reference -o "$TMP/x"
expect score_unknown 2 "unknown score 'dance'" -- "$AM_BIN" score dance
expect score_help 0 'ik' -- "$AM_BIN" score --help
am_done
