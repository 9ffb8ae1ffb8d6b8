#!/usr/bin/env bash
# `anymove solve --window`: a clip solved in overlapping windows has no seam. 300 frames of the
# wolf exam, solved whole (one window) and in windows of 100 frames (commits every 75: seams
# after frames 74, 149, 224). At every seam the joints' acceleration (the jump in velocity
# between frames, mean over joints) must be what the whole-clip solve has there, and the
# windowed solve must be as accurate as the whole one against the truth.
. "$(dirname "$0")/lib.sh"
am_need_tool /usr/bin/python3 jq
W=$AM_SOURCE/examples/creatures/wolf
"$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed 3 --frames 300 -o "$TMP/ex" -q
expect whole 0 '' -- "$AM_BIN" solve "$TMP/ex/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/whole" -q
expect windowed 0 '' -- "$AM_BIN" solve "$TMP/ex/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" \
  --window 100 -o "$TMP/win" -q
if out=$(/usr/bin/python3 - "$TMP/whole/motion.json" "$TMP/win/motion.json" <<'PY' 2>&1
import json, sys, numpy as np
whole, win = (np.array(json.load(open(p))["joints"]) for p in sys.argv[1:3])
def acc(x):  # acc[t] at frame t + 1
    return np.linalg.norm(x[2:] - 2 * x[1:-1] + x[:-2], axis=2).mean(1)
# windows really were used: the two solves differ (each window has its own optimum)
assert np.abs(win - whole).max() > 1e-6, "the windowed solve equals the whole one: no windows?"
aw, af = acc(win), acc(whole)
med = np.median(af)
worst = 0.0
for seam in (75, 150, 225):
    for t in range(seam - 2, seam + 2):
        worst = max(worst, (aw[t - 1] - af[t - 1]) / med)
print("worst seam acceleration above the whole solve's: %.3f of its median" % worst)
sys.exit(0 if worst < 0.25 else 1)
PY
); then am_pass "seams ($out)"; else am_fail seams "$out"; fi
ew=$("$AM_BIN" score solve "$TMP/ex/truth.npz" "$TMP/whole/motion.json" | jq '.joint_error_pct_body.mean')
en=$("$AM_BIN" score solve "$TMP/ex/truth.npz" "$TMP/win/motion.json" | jq '.joint_error_pct_body.mean')
if awk -v a="$en" -v b="$ew" 'BEGIN { exit !(a <= 1.05 * b) }'; then am_pass "windowed as accurate ($en vs $ew %)"
else am_fail windowed_accuracy "windowed $en % vs whole $ew %"; fi
am_done
