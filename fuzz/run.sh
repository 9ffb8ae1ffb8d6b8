#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each on its corpus (fuzz/corpus/<fmt>);
# new crashes are written to fuzz/crashes/<fmt>/, which `make test` replays forever after.
set -uo pipefail
build="${1:-build-fuzz}"
seconds="${2:-60}"
cd "$(dirname "$0")/.."
status=0
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  fmt=${name#fuzz_}
  mkdir -p "fuzz/corpus/$fmt" "fuzz/crashes/$fmt"
  dict=""
  for d in "fuzz/$fmt.dict" "fuzz/json.dict"; do
    if [ -f "$d" ]; then dict="-dict=$d"; break; fi
  done
  case "$fmt" in rig|motion|creature|map) [ -f fuzz/json.dict ] && dict="-dict=fuzz/json.dict";; esac
  echo "== $name for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
       -artifact_prefix="fuzz/crashes/$fmt/" $dict "fuzz/corpus/$fmt" 2>"$build/$name.log"; then
    echo "   $name found a crash: see fuzz/crashes/$fmt/ and $build/$name.log"
    status=1
  fi
  tail -n 2 "$build/$name.log"
done
exit $status
