#!/usr/bin/env bash
# docs/ARCHITECTURE.md's layer table is the law: every #include of src/, cli/ and
# include/anymove/ points to its own layer or a lower one, and no two folders include each other.
. "$(dirname "$0")/lib.sh"
am_need_tool python3
if out=$(python3 - "$AM_SOURCE" <<'PY' 2>&1
import os, re, sys
root = sys.argv[1]
rank, header_owner = {}, {}
for line in open(os.path.join(root, "docs/ARCHITECTURE.md")):
    m = re.match(r"^\| (\d+) \w+ \| ([^|]+) \| ([^|]+) \|", line)
    if not m:
        continue
    r = int(m.group(1))
    folders = m.group(2).split()
    for f in folders:
        rank[f] = r
    for h in m.group(3).split():
        # a header belongs to its row's folder, or in a row of several to the one named like it
        named = "src/" + os.path.splitext(h)[0]
        owner = folders[0] if len(folders) == 1 else named if named in folders else None
        if owner is None:
            sys.exit("docs/ARCHITECTURE.md: %s is in a row of several folders, none named like it" % h)
        header_owner["anymove/" + h] = owner
if len(rank) < 6:
    sys.exit("could not read the layer table of docs/ARCHITECTURE.md")

def unit_of(path):
    """The folder of a file (src/io, cli) or, for a public header, its owning folder."""
    if path.startswith("include/"):
        return header_owner.get("anymove/" + os.path.basename(path))
    return os.path.dirname(path)

def target_of(src_unit, inc):
    if inc in header_owner:
        return header_owner[inc]
    if "/" in inc:
        return "src/" + inc.split("/")[0]
    return src_unit  # a header beside the file

problems, edges = [], set()
for top in ("src", "cli", "include/anymove"):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".def")):
                continue
            path = os.path.relpath(os.path.join(d, f), root)
            unit = unit_of(path)
            if unit not in rank:
                problems.append("%s: its folder is in no layer of docs/ARCHITECTURE.md" % path)
                continue
            for n, line in enumerate(open(os.path.join(root, path)), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                tgt = target_of(unit, m.group(1))
                if tgt == unit:
                    continue
                if tgt not in rank:
                    problems.append("%s:%d: includes %s, which is in no layer" % (path, n, m.group(1)))
                elif rank[tgt] > rank[unit]:
                    problems.append("%s:%d: %s (layer %d) includes %s of %s (layer %d)" %
                                    (path, n, unit, rank[unit], m.group(1), tgt, rank[tgt]))
                else:
                    edges.add((unit, tgt))
for a, b in sorted(edges):
    if (b, a) in edges and a < b:
        problems.append("%s and %s include each other" % (a, b))
print("\n".join(problems) if problems else "%d folders, %d include edges, all downwards" % (len(rank), len(edges)))
sys.exit(1 if problems else 0)
PY
); then am_pass "layers ($out)"; else am_fail layers "$out"; fi

[ "${1:-}" = --inner ] && { am_done; exit; }
# The check itself: copies of the tree with one bad include planted each must fail.
plant() { # NAME FILE INCLUDE
  local t=$TMP/$1
  mkdir -p "$t"
  cp -r "$AM_SOURCE/docs" "$AM_SOURCE/src" "$AM_SOURCE/cli" "$AM_SOURCE/include" "$AM_SOURCE/tests" "$t/"
  printf '#include "%s"\n' "$3" >> "$t/$2"
  if AM_SOURCE=$t bash "$0" --inner >/dev/null 2>&1; then am_fail "$1" "$2 including $3 passed"
  else am_pass "$1"; fi
}
plant catches_rig_including_io src/rig/fk.c anymove/gltf.h
plant catches_stage_circle src/capture/kin.c anymove/metrics.h
am_done
