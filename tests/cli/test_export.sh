#!/usr/bin/env bash
# anymove export: the golden motion becomes a validator-clean .glb; bad input exits 2 with a
# message naming the file and leaves neither the output nor its temporary behind.
. "$(dirname "$0")/lib.sh"
am_need_shared golden/fk/testrig.json golden/fk/testrig_motion.json
am_need_tool node
G=$AM_SHARED/golden/fk

# The golden rig + motion: written, clean under the Khronos validator, deterministic.
expect export_golden 0 'wrote .*golden\.glb' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/golden.glb"
expect export_validates 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/golden.glb"
expect export_quiet 0 '' -- "$AM_BIN" export "$G/testrig_motion.json" --rig="$G/testrig.json" --out "$TMP/again.glb" --quiet
if cmp -s "$TMP/golden.glb" "$TMP/again.glb"; then am_pass export_deterministic; else am_fail export_deterministic "two exports differ"; fi
quiet_err=$("$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/q.glb" --quiet 2>&1)
if [ -z "$quiet_err" ]; then am_pass export_quiet_silent; else am_fail export_quiet_silent "stderr: $quiet_err"; fi
if head -c 4 "$TMP/golden.glb" | grep -q '^glTF$'; then am_pass export_magic; else am_fail export_magic "no glTF magic"; fi
expect export_help 0 'usage: anymove export MOTION.json \[MOTION.json...\] --rig RIG.json -o OUT.glb\|OUT.bvh' -- "$AM_BIN" export --help

# Usage errors.
expect export_no_args 2 'missing MOTION' -- "$AM_BIN" export
expect export_no_rig 2 'missing --rig' -- "$AM_BIN" export "$G/testrig_motion.json" -o "$TMP/x.glb"
expect export_no_out 2 'missing -o' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json"
expect export_bad_option 2 "unknown option.*'--frobnicate'" -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/x.glb" --frobnicate

# Bad input: exit 2, the message names the offending file, nothing is left in the output dir.
mkdir -p "$TMP/out" "$TMP/in"
expect export_missing_motion 2 'nope\.json' -- "$AM_BIN" export "$TMP/in/nope.json" --rig "$G/testrig.json" -o "$TMP/out/a.glb"
no_files export_missing_motion_no_output "$TMP/out"
expect export_missing_rig 2 'norig\.json' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$TMP/in/norig.json" -o "$TMP/out/a.glb"
no_files export_missing_rig_no_output "$TMP/out"

head -c 300 "$G/testrig_motion.json" > "$TMP/in/truncated.json"
expect export_truncated_motion 2 'truncated\.json' -- "$AM_BIN" export "$TMP/in/truncated.json" --rig "$G/testrig.json" -o "$TMP/out/a.glb"
no_files export_truncated_no_output "$TMP/out"

sed 's/"tail_tip"/"no_such_bone"/' "$G/testrig_motion.json" > "$TMP/in/unknown_bone.json"
expect export_unknown_bone 2 "unknown_bone\.json.*no_such_bone" -- "$AM_BIN" export "$TMP/in/unknown_bone.json" --rig "$G/testrig.json" -o "$TMP/out/a.glb"
no_files export_unknown_bone_no_output "$TMP/out"

# An unwritable output location is the caller's to fix: exit 2, no temporary left (read-only
# and full disks: test_outputs.sh). A missing folder is created.
printf 'x' > "$TMP/out/afile"
expect export_unwritable 2 'afile.*not a folder' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/out/afile/a.glb"
rm "$TMP/out/afile"
no_files export_unwritable_no_output "$TMP/out"
expect export_creates_folder 0 'wrote' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/new/sub/a.glb"
[ -f "$TMP/new/sub/a.glb" ] && am_pass export_created_folder_holds_it || am_fail export_created_folder_holds_it "no $TMP/new/sub/a.glb"

# The extension of -o picks the format; an unknown one is a usage error (issue 9: GLB bytes
# used to land in a .bvh).
expect export_bvh 0 'wrote .*w\.bvh' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/w.bvh"
if head -n 1 "$TMP/w.bvh" | grep -q '^HIERARCHY'; then am_pass export_bvh_is_bvh; else am_fail export_bvh_is_bvh "$(head -c 20 "$TMP/w.bvh" | od -c | head -2)"; fi
expect export_bvh_reads_back 0 'BVH, 16 joints' -- "$AM_BIN" info "$TMP/w.bvh"
expect export_unknown_ext 2 "'\.fbx' is not one export writes \(\.glb or \.bvh\)" -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/out/w.fbx"
expect export_no_ext 2 'ending in \.glb or \.bvh' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/out/w"
no_files export_bad_ext_no_output "$TMP/out"

# A motion must cover the rig (issue 9: 3 of 19 bones went through without a word).
/usr/bin/python3 - "$G/testrig_motion.json" "$TMP/in/partial.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keep = [i for i, b in enumerate(d["bones"]) if b in ("spine", "neck", "head")]
d["bones"] = [d["bones"][i] for i in keep]
d["euler"] = [[f[i] for i in keep] for f in d["euler"]]
del d["joints"], d["joint_names"]
json.dump(d, open(sys.argv[2], "w"))
PY
expect export_partial_refused 2 'partial\.json.*animates 3 of the 16 bones.*--allow-partial' -- "$AM_BIN" export "$TMP/in/partial.json" --rig "$G/testrig.json" -o "$TMP/out/p.glb"
no_files export_partial_no_output "$TMP/out"
expect export_partial_allowed 0 'warning: .*partial\.json animates 3 of the 16 bones.*held at rest' -- "$AM_BIN" export "$TMP/in/partial.json" --rig "$G/testrig.json" -o "$TMP/p.glb" --allow-partial --quiet

# Several motions: one clip each, named after the files or --names.
cp "$G/testrig_motion.json" "$TMP/in/walk.json"
expect export_clips 0 '2 clips' -- "$AM_BIN" export "$TMP/in/walk.json" "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/two.glb"
expect export_clip_names 0 'animation 0 walk:.*animation 1 testrig_motion:' -- sh -c "'$AM_BIN' info '$TMP/two.glb' | tr '\n' ' '"
expect export_clips_validate 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/two.glb"
expect export_names 0 '' -- "$AM_BIN" export "$TMP/in/walk.json" "$TMP/in/walk.json" --rig "$G/testrig.json" --names trot,gallop -o "$TMP/named.glb" -q
expect export_names_read 0 'animation 0 trot:.*animation 1 gallop:' -- sh -c "'$AM_BIN' info '$TMP/named.glb' | tr '\n' ' '"
expect export_same_names 0 'animation 1 walk_2:' -- sh -c "'$AM_BIN' export '$TMP/in/walk.json' '$TMP/in/walk.json' --rig '$G/testrig.json' -o '$TMP/same.glb' -q && '$AM_BIN' info '$TMP/same.glb' | tr '\n' ' '"
expect export_names_count 2 '--names wants 2' -- "$AM_BIN" export "$TMP/in/walk.json" "$TMP/in/walk.json" --rig "$G/testrig.json" --names one -o "$TMP/x.glb"
expect export_bvh_one_motion 2 'a \.bvh holds one motion' -- "$AM_BIN" export "$TMP/in/walk.json" "$TMP/in/walk.json" --rig "$G/testrig.json" -o "$TMP/x.bvh"

# Keep the character: the model convert recorded in rig.json, or --mesh; --no-mesh for bones.
Q=$AM_SHARED/data/gltf/quaternius/Fox.glb
expect char_convert 0 '' -- "$AM_BIN" convert "$Q" --clip Walk -o "$TMP/qw" -q
expect char_records_model 0 '"model": ".*/quaternius/Fox\.glb"' -- cat "$TMP/qw/rig.json"
expect char_default 0 'the character of .*Fox\.glb \(recorded in rig\.json' -- "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/qw/rig.json" -o "$TMP/c1.glb"
expect char_default_mesh 0 'mesh 0 Fox: 5 primitives' -- "$AM_BIN" info "$TMP/c1.glb"
expect char_validates 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/c1.glb"
expect char_no_mesh 0 '' -- "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/qw/rig.json" --no-mesh -o "$TMP/c2.glb" -q
expect char_no_mesh_bones 0 'mesh 0 [^:]*: 1 primitives' -- "$AM_BIN" info "$TMP/c2.glb"
expect char_mesh_flag 0 'the character of .*Fox\.glb$' -- "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/qw/rig.json" --mesh "$Q" -o "$TMP/c3.glb"
if cmp -s "$TMP/c1.glb" "$TMP/c3.glb"; then am_pass char_mesh_same_as_recorded; else am_fail char_mesh_same_as_recorded "the files differ"; fi
expect char_wrong_model 2 'Husky\.glb: error: wrong array shape \(skin 0 has 49 joints, the rig 51 bones\)' -- "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/qw/rig.json" --mesh "$AM_SHARED/data/gltf/quaternius/Husky.glb" -o "$TMP/c4.glb"
[ ! -e "$TMP/c4.glb" ] && am_pass char_wrong_model_nothing || am_fail char_wrong_model_nothing "c4.glb written"
expect char_mesh_bvh 2 '--mesh goes with a \.glb' -- "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/qw/rig.json" --mesh "$Q" -o "$TMP/c.bvh"
sed 's#"model": "[^"]*"#"model": "/nonexistent/Fox.glb"#' "$TMP/qw/rig.json" > "$TMP/moved_rig.json"
expect char_model_gone 0 'warning: .*moved_rig\.json records the model /nonexistent/Fox\.glb, which is not there: bone shapes' -- \
  "$AM_BIN" export "$TMP/qw/motion.json" --rig "$TMP/moved_rig.json" -o "$TMP/c5.glb" -q
expect char_two_clips 0 'animation 0 walk:.*animation 1 again:' -- sh -c "'$AM_BIN' export '$TMP/qw/motion.json' '$TMP/qw/motion.json' --rig '$TMP/qw/rig.json' --names walk,again -o '$TMP/c6.glb' -q && '$AM_BIN' info '$TMP/c6.glb' | tr '\n' ' '"
am_done
