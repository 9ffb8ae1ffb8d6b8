#!/usr/bin/env bash
# Bind accuracy and speed (issue 14). Every quaternius model in $AM_SHARED/data/gltf/quaternius
# re-bound from its own skeleton by our bone heat and by Blender 3.4's automatic weights
# (bench/blender_autoweights.py, headless); both skinned over every clip of the model at 30 fps
# against the artist's weights: % of body size, mean and p95 over vertices and frames
# (bench/bench_bind.c). Speed: a 10,000-vertex tube on a 40-bone chain, best of 3.
# Usage: bench/bind.sh [BUILD_DIR]   (figures for bench/RESULTS.md; rows in $OUT/rows.jsonl)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
data=${AM_SHARED:-../shared}/data
out=${OUT:-$(mktemp -d /tmp/am_bench_bind.XXXXXX)}
mkdir -p "$out"
rows=$out/rows.jsonl
: > "$rows"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for m in "$data"/gltf/quaternius/*.glb; do
  n=$(basename "$m" .glb)
  blender -b --factory-startup -P bench/blender_autoweights.py -- "$m" "$out/$n.blender.json" > "$out/$n.blender.log" 2>&1
  "$build/bench_bind" "$m" "$out/$n.blender.json" >> "$rows" 2> "$out/$n.err"
done
"$build/bench_bind" --tube 10000 40 >> "$rows"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$rows" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | vertices (welded) | deform bones | frames | ours mean / p95 % | Blender mean / p95 % | ours s | Blender s |")
print("|---|---|---|---|---|---|---|---|")
so = sb = 0.0
n = 0
for r in rows:
    if "tube" in r:
        t = r["tube"]
        tube = t
        continue
    n += 1
    so += r["ours"]["mean_pct"]; sb += r["blender"]["mean_pct"]
    print("| %s | %d (%d) | %d | %d | %.3f / %.3f | %.3f / %.3f | %.3f | %.3f |" % (
        r["model"], r["vertices"], r["welded"], r["deform_bones"], r["frames"], r["ours"]["mean_pct"],
        r["ours"]["p95_pct"], r["blender"]["mean_pct"], r["blender"]["p95_pct"], r["seconds"], r["blender_seconds"]))
print("| **average** | | | | **%.3f** | **%.3f** | | |" % (so / n, sb / n))
# the dev / held-out halves of bench/bind_split.txt (rules are chosen on dev only)
half = {}
for l in open("bench/bind_split.txt"):
    if l.strip() and not l.startswith("#"):
        h, m = l.split()
        half[m] = h
for h in ("dev", "heldout"):
    rs = [r for r in rows if "tube" not in r and half.get(r["model"].replace(".glb", "")) == h]
    if rs:
        print("| **%s mean** (%d) | | | | **%.3f** / %.3f | **%.3f** / %.3f | | |" % (h, len(rs),
              sum(r["ours"]["mean_pct"] for r in rs) / len(rs), sum(r["ours"]["p95_pct"] for r in rs) / len(rs),
              sum(r["blender"]["mean_pct"] for r in rs) / len(rs), sum(r["blender"]["p95_pct"] for r in rs) / len(rs)))
print()
print("speed: %d vertices, %d bones: best of 3 %.3f s (visibility %.3f s, solve %.3f s)" % (
    tube["vertices"], tube["bones"], tube["best_of_3_s"], tube["visibility_s"], tube["solve_s"]))
PY
