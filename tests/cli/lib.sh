# Shared by tests/cli/test_*.sh: tiny assertion helpers and the closing "N passed, N failed".
# Environment (set by CTest): AM_BIN (the CLI), AM_SHARED, AM_SOURCE, AM_VALIDATOR.
set -u
AM_BIN=${AM_BIN:-build/anymove}
AM_SHARED=${AM_SHARED:-../shared}
AM_SOURCE=${AM_SOURCE:-.}
AM_VALIDATOR=${AM_VALIDATOR:-$AM_SOURCE/scripts/gltf_validate.sh}
TMP=$(mktemp -d /tmp/am_cli_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
am_passed=0
am_failed=0

# am_need_shared REL...: the files of the shared folder this script reads. A missing one fails the
# script at once, naming it: a test that needs ../shared never passes by finding nothing (an
# exit-2 expectation would even pass on "no such file").
am_need_shared() {
  local rel missing=0
  for rel in "$@"; do
    if [ ! -e "$AM_SHARED/$rel" ]; then
      am_fail "shared_$rel" "$AM_SHARED/$rel is missing: these tests need the shared folder (../shared next to the sources, or AM_SHARED)"
      missing=1
    fi
  done
  if [ "$missing" -ne 0 ]; then am_done; exit 1; fi
}

# am_need_tool NAME...: programs this script runs (scripts/deps.sh installs them); a missing one
# fails the script, never skips its checks.
am_need_tool() {
  local t missing=0
  for t in "$@"; do
    if ! command -v "$t" >/dev/null 2>&1; then am_fail "tool_$t" "$t is not installed: run scripts/deps.sh"; missing=1; fi
  done
  if [ "$missing" -ne 0 ]; then am_done; exit 1; fi
}

am_pass() { am_passed=$((am_passed + 1)); echo "ok   $1"; }
am_fail() { am_failed=$((am_failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

# expect NAME CODE PATTERN -- command...: exit code CODE and stdout+stderr matching PATTERN (grep -E).
expect() {
  local name=$1 code=$2 pattern=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    am_fail "$name" "exit $rc, want $code: $*" "$(printf '%s' "$out" | head -n 5)"
  elif [ -n "$pattern" ] && ! printf '%s' "$out" | grep -Eq -- "$pattern"; then
    am_fail "$name" "output does not match /$pattern/" "$(printf '%s' "$out" | head -n 5)"
  elif printf '%s' "$out" | grep -Eq "AddressSanitizer|runtime error|Segmentation"; then
    am_fail "$name" "sanitizer report" "$(printf '%s' "$out" | head -n 8)"
  else
    am_pass "$name"
  fi
}

# no_files NAME DIR: nothing (no output, no temporary) left in DIR.
no_files() {
  if [ -z "$(ls -A "$2" 2>/dev/null)" ]; then am_pass "$1"; else am_fail "$1" "left: $(ls -A "$2")"; fi
}

am_done() {
  echo "$am_passed passed, $am_failed failed"
  [ "$am_failed" -eq 0 ]
}
