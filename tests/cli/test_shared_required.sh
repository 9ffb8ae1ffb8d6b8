#!/usr/bin/env bash
# Tests that need ../shared fail, loudly, when it is missing: a unit test (am_test_shared) and a
# CLI test (am_need_shared) run with AM_SHARED pointing nowhere must exit non-zero naming the
# missing path. (Run from the build folder, where the unit test executables are.)
. "$(dirname "$0")/lib.sh"
gone=$TMP/no_shared_here

expect_fails() { # NAME PATTERN -- command...
  local name=$1 pattern=$2 out rc
  shift 3
  out=$(AM_SHARED=$gone "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ]; then am_fail "$name" "passed without the shared folder: $*"
  elif ! printf '%s' "$out" | grep -Eq -- "$pattern"; then
    am_fail "$name" "no message naming the missing path" "$(printf '%s' "$out" | tail -n 3)"
  else am_pass "$name"; fi
}

[ -x ./test_bvh ] || { am_fail unit_binaries "./test_bvh not found: run from the build folder"; am_done; exit 1; }
expect_fails unit_bvh_without_shared "$gone/data/bvh: missing" -- ./test_bvh bvh_shared_data_roundtrips
expect_fails unit_fk_golden_without_shared "$gone/golden/fk/testrig.json: missing" -- ./test_fk_golden
expect_fails cli_export_without_shared "$gone/golden/fk/testrig.json is missing" -- bash "$(dirname "$0")/test_export.sh"
am_done
