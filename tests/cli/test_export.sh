#!/usr/bin/env bash
# anymove export: the golden motion becomes a validator-clean .glb; bad input exits 2 with a
# message naming the file and leaves neither the output nor its temporary behind.
. "$(dirname "$0")/lib.sh"
am_need_shared golden/fk/testrig.json golden/fk/testrig_motion.json
am_need_tool node
G=$AM_SHARED/golden/fk

# The golden rig + motion: written, clean under the Khronos validator, deterministic.
expect export_golden 0 'export' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/golden.glb"
expect export_validates 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$TMP/golden.glb"
expect export_quiet 0 '' -- "$AM_BIN" export "$G/testrig_motion.json" --rig="$G/testrig.json" --out "$TMP/again.glb" --quiet
if cmp -s "$TMP/golden.glb" "$TMP/again.glb"; then am_pass export_deterministic; else am_fail export_deterministic "two exports differ"; fi
quiet_err=$("$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/q.glb" --quiet 2>&1)
if [ -z "$quiet_err" ]; then am_pass export_quiet_silent; else am_fail export_quiet_silent "stderr: $quiet_err"; fi
if head -c 4 "$TMP/golden.glb" | grep -q '^glTF$'; then am_pass export_magic; else am_fail export_magic "no glTF magic"; fi
expect export_help 0 'usage: anymove export MOTION.json --rig RIG.json -o OUT.glb' -- "$AM_BIN" export --help

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

# An unwritable output location is the caller's to fix: exit 2, no temporary left.
expect export_unwritable 2 'nodir' -- "$AM_BIN" export "$G/testrig_motion.json" --rig "$G/testrig.json" -o "$TMP/out/nodir/a.glb"
no_files export_unwritable_no_output "$TMP/out"

am_done
