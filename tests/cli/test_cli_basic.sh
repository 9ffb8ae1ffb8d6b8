#!/usr/bin/env bash
# The CLI's contract: --version, --help on every command, fk and info on real files, and
# bad input -> exit 2 with a message naming the file, never a crash.
. "$(dirname "$0")/lib.sh"
am_need_shared golden/fk/testrig.json golden/fk/testrig_motion.json golden/npz/plain.npz \
  golden/npz/object.npz golden/npz/truncated.npz data/gltf/khronos_fox/Fox.glb data/gltf/Flamingo.glb \
  data/gltf/khronos_simpleskin/simple_skin.gltf
am_need_tool python3
G=$AM_SHARED/golden

expect version 0 '^anymove [0-9]+\.[0-9]+' -- "$AM_BIN" --version
expect help 0 'commands:' -- "$AM_BIN" --help
expect no_command 2 'usage' -- "$AM_BIN"
expect unknown_command 2 "unknown command 'frobnicate'" -- "$AM_BIN" frobnicate
for verb in $("$AM_BIN" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  expect "help_$verb" 0 "usage: anymove $verb" -- "$AM_BIN" "$verb" --help
done

# fk: rest pose without a motion; the golden motion with one.
expect fk_rest 0 '"joint_names": \["root", "chest"' -- "$AM_BIN" fk "$G/fk/testrig.json"
"$AM_BIN" fk "$G/fk/testrig.json" --motion "$G/fk/testrig_motion.json" > "$TMP/fk.json" 2>/dev/null
if python3 - "$TMP/fk.json" "$G/fk/testrig_motion.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1])); want = json.load(open(sys.argv[2]))
assert got["joint_names"] == want["joint_names"]
err = max(abs(a - b) for fa, fb in zip(got["joints"], want["joints"])
          for ja, jb in zip(fa, fb) for a, b in zip(ja, jb))
assert len(got["joints"]) == len(want["joints"]) == 6, len(got["joints"])
assert err < 1e-6, err
PY
then am_pass fk_golden_motion; else am_fail fk_golden_motion "CLI fk differs from the golden joints"; fi
expect fk_gltf_rig 0 '"joint_names": \[' -- "$AM_BIN" fk "$AM_SHARED/data/gltf/khronos_fox/Fox.glb"
expect fk_gltf_no_skin 2 'Flamingo\.glb' -- "$AM_BIN" fk "$AM_SHARED/data/gltf/Flamingo.glb"
expect fk_missing_rig 2 'nope\.json' -- "$AM_BIN" fk "$TMP/nope.json"
expect fk_no_args 2 'missing RIG' -- "$AM_BIN" fk
expect fk_bad_option 2 "unknown option '--frobnicate'" -- "$AM_BIN" fk "$G/fk/testrig.json" --frobnicate

# Malformed rigs: message names the file and the problem.
head -c 200 "$G/fk/testrig.json" > "$TMP/truncated.json"
expect rig_truncated 2 'truncated\.json:[0-9]+:[0-9]+' -- "$AM_BIN" fk "$TMP/truncated.json"
printf '{"joints": {"a": [0,0,0], "b": [0,1,0]}, "bones": [["x", "a", "c", null]]}' > "$TMP/unknown.json"
expect rig_unknown_joint 2 "unknown\.json.*'c'" -- "$AM_BIN" fk "$TMP/unknown.json"
printf '{"joints": {"a": [0,0,0], "b": [0,1,0]}, "bones": [["x", "a", "b", "y"], ["y", "b", "a", "x"]]}' > "$TMP/cycle.json"
expect rig_cycle 2 'cycle|root' -- "$AM_BIN" fk "$TMP/cycle.json"
printf '{"joints": {"a": [0,0,0], "b": [0,0,0]}, "bones": [["x", "a", "b", null]]}' > "$TMP/zero.json"
expect rig_zero_length 2 "zero.json.*'x'" -- "$AM_BIN" fk "$TMP/zero.json"
printf '{"joints": {"a": [0,0,0], "b": [0,1,0]}, "bones": [["x", "a", "b", null]], "limits_deg": {"x": [[10, -10], [0, 0], [0, 0]]}}' > "$TMP/limits.json"
expect rig_bad_limits 2 "limits.json" -- "$AM_BIN" fk "$TMP/limits.json"
printf '\xff\xfe{"joints": {}}' > "$TMP/badutf8.json"
expect rig_bad_utf8 2 'badutf8\.json' -- "$AM_BIN" fk "$TMP/badutf8.json"
printf '{"joints": [1, 2], "bones": []}' > "$TMP/shape.json"
expect rig_wrong_shape 2 'shape\.json' -- "$AM_BIN" fk "$TMP/shape.json"

# info on every kind of file.
expect info_rig 0 '16 bones' -- "$AM_BIN" info "$G/fk/testrig.json"
expect info_motion 0 '6 frames at 30 fps' -- "$AM_BIN" info "$G/fk/testrig_motion.json"
expect info_npz 0 'points +float32 +\[4, 7, 3\]' -- "$AM_BIN" info "$G/npz/plain.npz"
expect info_npz_object 2 'object\.npz' -- "$AM_BIN" info "$G/npz/object.npz"
expect info_npz_truncated 2 'truncated\.npz' -- "$AM_BIN" info "$G/npz/truncated.npz"
expect info_glb 0 'skin 0.*24 joints' -- "$AM_BIN" info "$AM_SHARED/data/gltf/khronos_fox/Fox.glb"
expect info_gltf 0 'glTF 2.0' -- "$AM_BIN" info "$AM_SHARED/data/gltf/khronos_simpleskin/simple_skin.gltf"
printf '{"layout": {"W_FRONT": 400}, "feet": ["a"]}' > "$TMP/creature.json"
expect info_creature 0 'W_FRONT 400 W_SIDE 860' -- "$AM_BIN" info "$TMP/creature.json"
printf 'hello' > "$TMP/x.txt"
expect info_unknown_kind 2 'x\.txt' -- "$AM_BIN" info "$TMP/x.txt"
am_done
