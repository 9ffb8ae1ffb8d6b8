#!/usr/bin/env bash
# `make test` (the Makefile passes BUILD, ASAN_BUILD, RELEASE_BUILD, TSAN_BUILD, JOBS and
# CLANG_RELEASE_BUILD): what is missing installed (scripts/deps.sh), then the optimized build's
# tests, the ASan + UBSan build's, and the threaded tests under ThreadSanitizer.
#
# The builds whose tests come later or that only have to compile warning-free (gcc Release, the
# TSan build, and clang's Release when CLANG_RELEASE_BUILD names a folder, as in .ci/run) compile
# at nice 19 beside the rest, from the start: on 2 cores they take the CPU the foreground leaves
# idle (the serial tail of each build, the last long test of each ctest run, tests waiting on
# Chromium, Slurm or a sleep) and barely slow what runs at nice 0. Once the foreground is done they
# go back to nice 0 if this user may (root) and get the whole machine. Their output goes to
# <folder>/build.log, printed if the build fails; any failure fails `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BUILD:=build}" "${ASAN_BUILD:=build-asan}" "${RELEASE_BUILD:=build-release}"
: "${TSAN_BUILD:=build-tsan}" "${JOBS:=2}" "${CLANG_RELEASE_BUILD:=}"
export BUILD ASAN_BUILD RELEASE_BUILD TSAN_BUILD JOBS
cpu_file=$(mktemp)

# What the builds need first; the npm test tools download while they compile.
bash scripts/deps.sh debian
bash scripts/deps.sh npm &
npm_pid=$!

# in_background LOG CMD...: CMD at nice 19 in its own process group, output to LOG; sets bg_pid.
in_background() {
  local log=$1
  shift
  mkdir -p "$(dirname "$log")"
  # set -m: its own process group (renice -g and kill reach every compiler it starts), in this
  # session; a new one (setsid) would be its own autogroup, where nice 19 means nothing beside
  # the tests (Linux with sched_autogroup_enabled, as here, weighs sessions against each other)
  set -m
  nice -n 19 "$@" >"$log" 2>&1 </dev/null &
  bg_pid=$!
  set +m
}
bg_pids=()
bg_logs=()
bg_names=()
in_background "$RELEASE_BUILD/build.log" bash -c 'make release && make tsan-build'
bg_pids+=("$bg_pid"); bg_logs+=("$RELEASE_BUILD/build.log"); bg_names+=("gcc Release + TSan build")
if [ -n "$CLANG_RELEASE_BUILD" ]; then
  in_background "$CLANG_RELEASE_BUILD/build.log" env CC=clang make release RELEASE_BUILD="$CLANG_RELEASE_BUILD"
  bg_pids+=("$bg_pid"); bg_logs+=("$CLANG_RELEASE_BUILD/build.log"); bg_names+=("clang Release build")
fi
# a failing foreground phase stops the background builds too
trap 'kill "$npm_pid" 2>/dev/null || true; for p in "${bg_pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done; rm -f "$cpu_file"' EXIT

# phase NAME CMD...: CMD, then the wall and CPU seconds it took (the CPU of the processes it
# waited for, from bash's `times`, which must run in this shell: a $(...) would reset it; the
# background builds count once they are waited for)
cpu_now() { awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } print t }' "$cpu_file"; }
phase() {
  local name=$1 t0=$SECONDS c0
  shift
  times >"$cpu_file"
  c0=$(cpu_now)
  "$@"
  times >"$cpu_file"
  echo "== $name: $((SECONDS - t0)) s wall, $(awk -v a="$c0" -v b="$(cpu_now)" 'BEGIN { printf "%.0f", b - a }') s CPU"
}
run_ctest() { (cd "$1" && shift && ctest --output-on-failure -j "$JOBS" "$@"); }

phase "build ($BUILD)" make build
phase "ASan + UBSan build ($ASAN_BUILD)" make asan
wait "$npm_pid"
phase "tests ($BUILD)" run_ctest "$BUILD"
phase "tests under ASan + UBSan ($ASAN_BUILD)" run_ctest "$ASAN_BUILD"

status=0
for i in "${!bg_pids[@]}"; do
  renice -n 0 -g "${bg_pids[$i]}" >/dev/null 2>&1 || true
done
wait_background() {
for i in "${!bg_pids[@]}"; do
  if wait "${bg_pids[$i]}"; then
    echo "${bg_names[$i]}: ok (${bg_logs[$i]})"
  else
    echo "${bg_names[$i]}: FAILED (${bg_logs[$i]}):"
    tail -n 40 "${bg_logs[$i]}"
    status=1
  fi
done
}
phase "the rest of the background builds" wait_background
trap 'rm -f "$cpu_file"' EXIT
[ "$status" -eq 0 ] || exit 1
phase "tests under TSan ($TSAN_BUILD)" make tsan-test
