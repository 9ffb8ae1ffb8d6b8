#!/usr/bin/env bash
# The output convention (README "Outputs"): a command's outputs appear together or not at all.
# A full disk and a read-only location exit 2, name the file, say why, and leave the previous
# set whole; the location is checked before any work; a kill -9 leaves temporaries that the
# next run into that folder removes; no temporary stays after a run. Needs root (CI runs as
# root) to mount small tmpfs file systems.
. "$(dirname "$0")/lib.sh"
WALK=$AM_SOURCE/examples/walker
FOX=$AM_SHARED/data/gltf/khronos_fox/Fox.glb
MOUNTS=()
trap 'for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# mount_tmpfs DIR OPTIONS: a tmpfs at DIR, or a failure that says why (never a silent skip).
mount_tmpfs() {
  mkdir -p "$1"
  if mount -t tmpfs -o "$2" tmpfs "$1" 2>"$TMP/mount.err"; then
    MOUNTS+=("$1")
    return 0
  fi
  am_fail "mount_$(basename "$1")" "cannot mount a tmpfs at $1 ($(cat "$TMP/mount.err")): this test needs root"
  return 1
}

# temporaries DIR: how many of our temporaries are in DIR.
temporaries() { find "$1" -maxdepth 1 -name '.anymove-tmp.*' | wc -l; }
no_temporaries() {
  local n
  n=$(temporaries "$2")
  if [ "$n" -eq 0 ]; then am_pass "$1"; else am_fail "$1" "$n temporaries left in $2: $(ls -A "$2")"; fi
}
same_files() { # same_files NAME SUMS_FILE DIR
  if (cd "$3" && sha256sum -c --quiet "$2" >/dev/null 2>&1); then am_pass "$1"; else am_fail "$1" "the old set changed"; fi
}

# ---- a full disk: a rerun that fails leaves the old set intact --------------------------
FULL=$TMP/full
if mount_tmpfs "$FULL" size=256k; then
  # The Walk clip's set (about 150 kB) fits; the Run clip's beside it does not.
  expect full_first_run 0 '' -- "$AM_BIN" convert "$FOX" --clip Walk -o "$FULL/fox" -q
  (cd "$FULL/fox" && sha256sum rig.json motion.json) > "$TMP/fox.sums"
  expect full_rerun_fails 2 'fox/motion\.json: error: cannot write output \(No space left on device\)' -- \
    "$AM_BIN" convert "$FOX" --clip Run -o "$FULL/fox" -q
  same_files full_old_set_whole "$TMP/fox.sums" "$FULL/fox"
  no_temporaries full_no_temporaries "$FULL/fox"
  no_temporaries full_no_temporaries_beside "$FULL"
  expect full_old_set_usable 0 '' -- "$AM_BIN" export "$FULL/fox/motion.json" --rig "$FULL/fox/rig.json" -o "$TMP/fox.glb" -q
  # A one-file output too: the old file stays as it was.
  rm -rf "$FULL/fox"
  head -c 240000 /dev/zero > "$FULL/ballast"
  printf 'old' > "$FULL/walk.glb"
  expect full_one_file 2 'walk\.glb: error: cannot write output \(No space left on device\)' -- \
    "$AM_BIN" export "$WALK/walk.json" --rig "$WALK/rig.json" -o "$FULL/walk.glb"
  [ "$(cat "$FULL/walk.glb")" = old ] && am_pass full_one_file_kept || am_fail full_one_file_kept "walk.glb changed"
  no_temporaries full_one_file_no_temporaries "$FULL"
  # npz through libzip: the same exit code and message
  expect full_npz 2 'e/det\.npz: error: cannot write output \(.*No space left on device\)' -- \
    "$AM_BIN" exam --rig "$AM_SOURCE/examples/creatures/wolf/rig.json" -o "$FULL/e" -q
  [ ! -e "$FULL/e" ] && am_pass full_npz_nothing || am_fail full_npz_nothing "$(ls -A "$FULL/e")"
  no_temporaries full_npz_no_temporaries "$FULL"
fi

# ---- a read-only location: refused before any work, exit 2 ------------------------------
RO=$TMP/ro
if mount_tmpfs "$RO" ro,size=64k; then
  out=$("$AM_BIN" rig "$AM_SOURCE/examples/tracks/grison_walk.tracks.npz" -o "$RO/rig" 2>&1)
  rc=$?
  if [ "$rc" -eq 2 ] && printf '%s' "$out" | grep -q "ro/rig: error: cannot write output (cannot write there: Read-only file system)"; then
    am_pass ro_refused; else am_fail ro_refused "exit $rc: $out"; fi
  # before the work: not even the tracks were read
  if ! printf '%s' "$out" | grep -q 'points x'; then am_pass ro_before_work; else am_fail ro_before_work "$out"; fi
  expect ro_one_file 2 'ro/w\.bvh: error: cannot write output.*Read-only' -- "$AM_BIN" export "$WALK/walk.json" --rig "$WALK/rig.json" -o "$RO/w.bvh"
fi
# A location that turns read-only after a first run: the old set stays, exit 2.
RW=$TMP/rw
if mount_tmpfs "$RW" size=1m; then
  expect rw_first_run 0 '' -- "$AM_BIN" exam --rig "$AM_SOURCE/examples/creatures/wolf/rig.json" --frames 10 -o "$RW/e" -q
  (cd "$RW/e" && sha256sum det.npz truth.npz) > "$TMP/e.sums"
  if mount -o remount,ro "$RW"; then
    expect ro_rerun 2 'rw/e: error: cannot write output' -- "$AM_BIN" exam --rig "$AM_SOURCE/examples/creatures/wolf/rig.json" --frames 12 --seed 4 -o "$RW/e" -q
    same_files ro_rerun_old_set_whole "$TMP/e.sums" "$RW/e"
  else
    am_fail ro_remount "cannot remount $RW read-only"
  fi
fi

# ---- output-location mistakes that need no mount -----------------------------------------
mkdir -p "$TMP/loc"
printf 'x' > "$TMP/loc/file"
expect loc_file_as_folder 2 'loc/file.*not a folder' -- "$AM_BIN" exam --rig "$AM_SOURCE/examples/creatures/wolf/rig.json" -o "$TMP/loc/file"
mkdir -p "$TMP/loc/d/motion.json"
expect loc_member_is_folder 2 'd/motion\.json: error: cannot write output \(exists and is not a file\)' -- \
  "$AM_BIN" convert "$FOX" -o "$TMP/loc/d"
mkdir -p "$TMP/loc/old.glb"
expect loc_folder_as_file 2 'loc/old\.glb: error: cannot write output \(is a folder' -- \
  "$AM_BIN" export "$WALK/walk.json" --rig "$WALK/rig.json" -o "$TMP/loc/old.glb"
no_temporaries loc_no_temporaries "$TMP/loc"

# ---- a failed rerun leaves no mixed set (issue 9: a new rig.json beside the old motion.json) --
expect set_first 0 '' -- "$AM_BIN" convert "$FOX" --clip Walk -o "$TMP/set" -q
(cd "$TMP/set" && sha256sum rig.json motion.json) > "$TMP/set.sums"
expect set_rerun_bad_clip 2 "no clip 'Jump'" -- "$AM_BIN" convert "$FOX" --clip Jump -o "$TMP/set" -q
same_files set_old_set_whole "$TMP/set.sums" "$TMP/set"
no_temporaries set_no_temporaries "$TMP/set"
# a set is the files of one run: a member the new run does not write goes with the old set
printf 'mine' > "$TMP/set/notes.txt"
expect set_rerun_bvh 0 '' -- "$AM_BIN" convert "$AM_SHARED/data/bvh/cmu/08_01_trimmed.bvh" -o "$TMP/set" -q
[ "$(cat "$TMP/set/notes.txt")" = mine ] && am_pass set_keeps_other_files || am_fail set_keeps_other_files "notes.txt changed"
expect set_rerun_consistent 0 '' -- "$AM_BIN" export "$TMP/set/motion.json" --rig "$TMP/set/rig.json" -o "$TMP/set.glb" -q

# ---- kill -9 leaves temporaries; the next run into that folder removes them ----------------
mkdir -p "$TMP/killed"
"$AM_BIN" synth tracks --plan quadruped --motion walk --seed 1 --points 20000 --frames 100 -o "$TMP/killed/big" -q &
pid=$!
for _ in $(seq 1 200); do [ "$(temporaries "$TMP/killed")" -gt 0 ] && break; sleep 0.02; done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
left=$(temporaries "$TMP/killed")
if [ "$left" -gt 0 ]; then am_pass "kill9_leaves_temporary ($left)"; else am_fail kill9_leaves_temporary "nothing to clean up: the run ended before the kill"; fi
[ ! -e "$TMP/killed/big" ] && am_pass kill9_no_output || am_fail kill9_no_output "a killed run left $TMP/killed/big"
expect kill9_next_run 0 '' -- "$AM_BIN" synth tracks --plan snake --motion idle --seed 2 --points 200 --frames 10 -o "$TMP/killed/small" -q
no_temporaries kill9_swept "$TMP/killed"
# a live run's temporaries are never touched
sleep 30 &
live=$!
mkdir "$TMP/killed/.anymove-tmp.$live.AbCdEf"
expect live_next_run 0 '' -- "$AM_BIN" synth tracks --plan snake --motion idle --seed 2 --points 200 --frames 10 -o "$TMP/killed/small" -q
[ -d "$TMP/killed/.anymove-tmp.$live.AbCdEf" ] && am_pass live_temporary_kept || am_fail live_temporary_kept "a live process's temporary was removed"
kill "$live"
rmdir "$TMP/killed/.anymove-tmp.$live.AbCdEf"

# ---- -o: a folder for several outputs, a format for one -----------------------------------
expect o_dir_with_extension 2 'synth writes several files \(tracks\.npz, truth\.npz\), so -o names a folder' -- \
  "$AM_BIN" synth tracks --plan snake --seed 1 -o "$TMP/o/x.npz"
expect o_unknown_format 2 "'\.fbx' is not one convert writes" -- "$AM_BIN" convert "$FOX" -o "$TMP/o/fox.fbx"
expect o_convert_json_refused 2 "'\.json' is not one convert writes" -- "$AM_BIN" convert "$FOX" -o "$TMP/o/fox.json"
[ ! -e "$TMP/o" ] && am_pass o_usage_errors_write_nothing || am_fail o_usage_errors_write_nothing "$(ls -A "$TMP/o")"
am_done
