#!/usr/bin/env bash
# anymove takes recomputes the sync check from each take's det.npz (issue 14 item 4): on a wolf
# exam the paw agreement (score and per foot), lag and height gap equal what solve stored; a front
# view shifted by k frames gives lag k (and the verdict follows the recomputed agreement); an
# N-camera take's reprojection per camera equals solve --cameras' (its sync check does not
# apply); a det.npz that cannot be read, or of another length, exits 2 naming it, no takes.csv.
. "$(dirname "$0")/lib.sh"
am_need_tool /usr/bin/python3
W=$AM_SOURCE/examples/creatures/wolf
PY=/usr/bin/python3

# ---- two views: the recomputed numbers are solve's (--no-swap-repair: see test_solve.sh) ----
"$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed 3 --frames 45 --lag 2 -o "$TMP/e" -q
expect solve_wolf 0 '' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" --no-swap-repair -o "$TMP/runs/take" -q
cp "$TMP/e/det.npz" "$TMP/runs/take/det.npz"
expect takes_creature 0 '' -- "$AM_BIN" takes "$TMP/runs" --creature "$W/creature.json" -o "$TMP/a.csv" -q
# without --creature the feet are those solve checked (motion.json's sync.paw_agreement)
expect takes_no_creature 0 '' -- "$AM_BIN" takes "$TMP/runs" -o "$TMP/b.csv" -q
for csv in a b; do
  if out=$($PY - "$TMP/$csv.csv" "$TMP/runs/take/motion.json" <<'PY' 2>&1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
sy = json.load(open(sys.argv[2]))["sync"]
assert r["sync_source"] == "det" and r["reproj_source"] == "det", r
assert sy["time_warped"] and sy["best_lag_frames"] == 2, sy
assert int(r["lag_frames"]) == sy["best_lag_frames"], (r, sy)
pa = sy["paw_agreement"]
assert abs(float(r["paw_agreement"]) - pa["score"]) < 6e-4, (r, pa)
feet = [k for k in pa if k != "score"]
assert len(feet) == 4, pa
for f in feet:
    assert abs(float(r["paw_" + f]) - pa[f]) < 6e-4, (f, r, pa)
for k in ("mean", "worst"):
    assert abs(float(r["height_gap_%s_px" % k]) - sy["height_gap_px"][k]) < 6e-3, (k, r, sy)
print("paw %s lag %s gap %s/%s" % (r["paw_agreement"], r["lag_frames"], r["height_gap_mean_px"], r["height_gap_worst_px"]))
PY
); then am_pass "takes_sync_equals_solve_$csv: $out"; else am_fail "takes_sync_equals_solve_$csv" "$out"; fi
done

# ---- a front view shifted by k frames: lag k, the motion's paw agreement not used ----
"$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed 5 --frames 48 -o "$TMP/e0" -q
expect solve_lag0 0 '' -- "$AM_BIN" solve "$TMP/e0/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" --no-swap-repair -o "$TMP/shift/k0" -q
cp "$TMP/e0/det.npz" "$TMP/shift/k0/det.npz"
$PY - "$TMP/shift" <<'PY'
import numpy as np, shutil, sys, os
root = sys.argv[1]
d = dict(np.load(root + "/k0/det.npz"))
for k in (5, -3):
    x = dict(d)
    fu, fc = np.full_like(d["front_uv"], np.nan), np.zeros_like(d["front_conf"])
    # front(t) = front_as_read(t - k): the front view runs k frames late (early for k < 0)
    if k > 0: fu[k:], fc[k:] = d["front_uv"][:-k], d["front_conf"][:-k]
    else: fu[:k], fc[:k] = d["front_uv"][-k:], d["front_conf"][-k:]
    x["front_uv"], x["front_conf"] = fu, fc
    t = root + "/k%d" % k
    os.makedirs(t)
    shutil.copy(root + "/k0/motion.json", t + "/motion.json")
    np.savez(t + "/det.npz", **x)
PY
expect takes_shifted 0 '' -- "$AM_BIN" takes "$TMP/shift" --creature "$W/creature.json" -o "$TMP/shift.csv" -q
if out=$($PY - "$TMP/shift.csv" "$TMP/shift/k0/motion.json" <<'PY' 2>&1
import csv, json, sys
rows = {r["take"]: r for r in csv.DictReader(open(sys.argv[1]))}
sy = json.load(open(sys.argv[2]))["sync"]
assert sy["best_lag_frames"] == 0, sy
assert set(rows) == {"k0", "k5", "k-3"}, rows
for take, k in (("k0", 0), ("k5", 5), ("k-3", -3)):
    r = rows[take]
    assert r["sync_source"] == "det" and int(r["lag_frames"]) == k, (take, r)
# shifting moves the paws' rows out of step: the same motion.json, a lower recomputed agreement
p0, p5 = float(rows["k0"]["paw_agreement"]), float(rows["k5"]["paw_agreement"])
assert abs(p0 - sy["paw_agreement"]["score"]) < 6e-4 and p5 < p0 - 0.05, (p0, p5, sy)
assert float(rows["k5"]["height_gap_mean_px"]) > float(rows["k0"]["height_gap_mean_px"]), rows
print("lags 0/5/-3, paw %.3f -> %.3f (k=5)" % (p0, p5))
PY
); then am_pass "takes_shifted_front_lag: $out"; else am_fail takes_shifted_front_lag "$out"; fi

# The verdict is the recomputed agreement's: a motion.json claiming 0.99 over a det whose paws
# disagree (the front view's rows mirrored) is rerolled.
mkdir -p "$TMP/claim/t"
$PY - "$TMP/e0/det.npz" "$TMP/shift/k0/motion.json" "$TMP/claim/t" <<'PY'
import json, numpy as np, sys
d = dict(np.load(sys.argv[1]))
fu = d["front_uv"].copy(); fu[..., 1] = 2 * np.nanmean(fu[..., 1]) - fu[..., 1]
d["front_uv"] = fu
np.savez(sys.argv[3] + "/det.npz", **d)
m = json.load(open(sys.argv[2])); m["sync"]["paw_agreement"]["score"] = 0.99
json.dump(m, open(sys.argv[3] + "/motion.json", "w"))
PY
expect takes_claim 0 '' -- "$AM_BIN" takes "$TMP/claim" --creature "$W/creature.json" -o "$TMP/claim.csv" -q
expect takes_verdict_recomputed 0 '^t,reroll,-0\.[0-9]+,.*,det,' -- cat "$TMP/claim.csv"
rm "$TMP/claim/t/det.npz"
expect takes_claim_no_det 0 '' -- "$AM_BIN" takes "$TMP/claim" --creature "$W/creature.json" -o "$TMP/claim2.csv" -q
expect takes_verdict_motion 0 '^t,keep,0\.990,.*,motion,' -- cat "$TMP/claim2.csv"

# ---- N cameras: reprojection per camera recomputed, sync not applicable ----
# Two 3-camera takes with frame offsets: given in det.npz, and hidden (solve finds them and
# motion.json's time_offsets say where each camera was fitted). --no-swap-repair as above: a
# repaired swap edits the detections the fit saw.
"$AM_BIN" exam --rig "$W/rig.json" --cameras 3 --offsets 2 --seed 1 --frames 30 -o "$TMP/e3" -q
"$AM_BIN" exam --rig "$W/rig.json" --cameras 3 --offsets 2 --hide-offsets --seed 1 --frames 30 -o "$TMP/e3h" -q
expect solve_3_cameras 0 '' -- "$AM_BIN" solve "$TMP/e3/det.npz" --rig "$W/rig.json" --cameras "$TMP/e3/calibration.toml" --no-swap-repair -o "$TMP/mv/given" -q
expect solve_3_cameras_hidden 0 '' -- "$AM_BIN" solve "$TMP/e3h/det.npz" --rig "$W/rig.json" --cameras "$TMP/e3h/calibration.toml" --no-swap-repair -o "$TMP/mv/found" -q
cp "$TMP/e3/det.npz" "$TMP/e3/calibration.toml" "$TMP/mv/given/"
cp "$TMP/e3h/det.npz" "$TMP/e3h/calibration.toml" "$TMP/mv/found/"
expect takes_cameras 0 '' -- "$AM_BIN" takes "$TMP/mv" -o "$TMP/mv.csv" -q
if out=$($PY - "$TMP/mv.csv" "$TMP/mv" <<'PY' 2>&1
import csv, json, sys
rows = {r["take"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert set(rows) == {"given", "found"}, rows
said = []
for take, r in sorted(rows.items()):
    m = json.load(open(sys.argv[2] + "/" + take + "/motion.json"))
    rp = m["reproj_px"]
    assert m["swaps_repaired"] == 0 and m["time_offsets_found"] == (take == "found"), m["time_offsets"]
    assert any(v != 0 for v in m["time_offsets"].values()), m["time_offsets"]
    cams = sorted(k for k in rp if k.startswith("cam_"))
    assert len(cams) == 3, rp
    assert r["reproj_source"] == "det" and r["sync_source"] == "none", r
    assert r["paw_agreement"] == "" and r["lag_frames"] == "" and r["reproj_front_px"] == "", r
    for c in cams:
        assert abs(float(r["reproj_%s_px" % c]) - rp[c]) < 0.05, (take, c, r, rp)
    mean = sum(rp[c] for c in cams) / 3
    assert abs(float(r["reproj_mean_px"]) - mean) < 0.05, (r, rp)
    assert r["verdict"] == ("keep" if mean <= 8 else "look" if mean <= 15 else "reroll"), r
    said.append(take + " " + ", ".join("%s %s/%.3f" % (c, r["reproj_%s_px" % c], rp[c]) for c in cams))
print("; ".join(said))
PY
); then am_pass "takes_cameras_reproj_equals_solve: $out"; else am_fail takes_cameras_reproj_equals_solve "$out"; fi
# without the calibration the columns are motion.json's, per camera too
rm "$TMP/mv/given/calibration.toml" "$TMP/mv/found/calibration.toml"
expect takes_cameras_no_calibration 0 '' -- "$AM_BIN" takes "$TMP/mv" -o "$TMP/mv2.csv" -q
expect takes_cameras_motion 0 '^given,keep,,,,[0-9.]+,motion,.*,none,,,[0-9.]+,[0-9.]+,[0-9.]+$' -- cat "$TMP/mv2.csv"

# ---- bad det.npz: exit 2 naming the file, no takes.csv ----
bad_det() { # NAME PATTERN: takes on $TMP/runs (its det.npz made bad) exits 2 matching PATTERN
  expect "$1" 2 "$2" -- "$AM_BIN" takes "$TMP/runs" --creature "$W/creature.json" -o "$TMP/bad_$1.csv" -q
  if [ ! -e "$TMP/bad_$1.csv" ]; then am_pass "$1_no_output"; else am_fail "$1_no_output" "wrote $TMP/bad_$1.csv"; fi
}
printf 'not an npz' > "$TMP/runs/take/det.npz"
bad_det takes_det_not_npz 'take/det\.npz'
$PY - "$TMP/e/det.npz" "$TMP/runs/take/det.npz" <<'PY'
import numpy as np, sys
d = dict(np.load(sys.argv[1])); d["side_uv"] = d["side_uv"][:-1]; d["side_conf"] = d["side_conf"][:-1]
np.savez(sys.argv[2], **d)
PY
bad_det takes_det_views_disagree 'take/det\.npz.*(44|45)'
$PY - "$TMP/e/det.npz" "$TMP/runs/take/det.npz" <<'PY'
import numpy as np, sys
d = dict(np.load(sys.argv[1]))
for k in ("front_uv", "side_uv", "front_conf", "side_conf"): d[k] = d[k][:40]
np.savez(sys.argv[2], **d)
PY
bad_det takes_det_other_length 'take/det\.npz.*40 frames, but .*motion\.json has 45'
am_done
