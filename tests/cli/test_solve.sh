#!/usr/bin/env bash
# anymove exam / solve / score solve: a short wolf exam is solved end to end (motion.json,
# a validator-clean animation.glb, report.txt with the verdicts, a score), and bad det.npz
# input exits 2 with a message that says what is wrong.
. "$(dirname "$0")/lib.sh"
W=$AM_SOURCE/examples/creatures/wolf

expect exam_help 0 'usage: anymove exam' -- "$AM_BIN" exam --help
expect solve_help 0 'usage: anymove solve' -- "$AM_BIN" solve --help
expect score_solve_help 0 'usage: anymove score solve' -- "$AM_BIN" score solve --help
expect exam_no_rig 2 'missing --rig' -- "$AM_BIN" exam -o "$TMP/e"
expect solve_no_det 2 'missing DET' -- "$AM_BIN" solve --rig "$W/rig.json" -o "$TMP/s"
expect solve_bad_option 2 "unknown option.*'--frobnicate'" -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" -o "$TMP/s" --frobnicate

# A 45-frame exam with a lag of 2 frames: the lag is found, the glb validates.
expect exam_wolf 0 'exam: 45 frames' -- "$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed 3 --frames 45 --lag 2 -o "$TMP/e"
expect solve_wolf 0 'paw height agreement' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/s"
for f in motion.json animation.glb report.txt; do
  if [ -s "$TMP/s/$f" ]; then am_pass "solve_wrote_$f"; else am_fail "solve_wrote_$f" "missing $TMP/s/$f"; fi
done
expect solve_report_verdict 0 'verdict: (keep|look at it|reroll)' -- cat "$TMP/s/report.txt"
expect solve_motion_keys 0 '"paw_agreement"' -- grep -o '"reproj_px"\|"paw_agreement"\|"contacts"' "$TMP/s/motion.json"
expect solve_glb_validates 0 '"errors":0' -- "$AM_VALIDATOR" "$TMP/s/animation.glb"
expect score_solve 0 '"lag": \{"true": 2, "found": 2, "recovered": true\}' -- "$AM_BIN" score solve "$TMP/e/truth.npz" "$TMP/s/motion.json"
expect solve_quiet 0 '' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/s2" --quiet
quiet_out=$("$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/s3" --quiet 2>&1)
if [ -z "$quiet_out" ]; then am_pass solve_quiet_silent; else am_fail solve_quiet_silent "output: $quiet_out"; fi
# Which layout: named on stderr; the wolf default is a warning even with --quiet (issue 9: it
# was used silently).
expect solve_says_layout 0 'the layout of .*creature\.json: W_FRONT' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/s4"
expect solve_warns_default_layout 0 'warning: no --creature: the wolf layout of SPEC 3' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" -o "$TMP/s5" --quiet
# The report gives the fit's own slide before the lock and how far the lock moved each foot,
# and those numbers agree with the fit: the lock can only have moved a foot as far as the
# fit let it slide (issue 9: "foot slide 0.00 mm (locked)" while the truth said 3.9 mm).
expect solve_report_fit_slide 0 'fit before the foot lock: mean [0-9.]+ mm, max [0-9.]+ mm' -- cat "$TMP/s/report.txt"
expect solve_report_lock_moved 0 'foot lock moved each contact over its plant frames: fpaw_L mean [0-9.]+ mm, max [0-9.]+ mm; fpaw_R' -- cat "$TMP/s/report.txt"
/usr/bin/python3 - "$TMP/s/report.txt" "$TMP/s/motion.json" <<'PY' && am_pass solve_report_numbers_agree || am_fail solve_report_numbers_agree "see above"
import json, re, sys
rep = open(sys.argv[1]).read()
fit = re.search(r"fit before the foot lock: mean ([0-9.]+) mm, max ([0-9.]+) mm", rep)
after = re.search(r"after the lock: mean ([0-9.]+) mm, max ([0-9.]+) mm", rep)
moved = [float(m) for m in re.findall(r"max ([0-9.]+) mm", rep.split("foot lock moved")[1].split(chr(10))[0])]
fs = json.load(open(sys.argv[2]))["foot_slide_mm"]
assert float(fit.group(1)) > 0.5, "the fit of a noisy exam slides: %s" % fit.group(0)
assert float(after.group(2)) < 1.0, after.group(0)
assert max(moved) > 0.5 and max(moved) <= 2 * float(fit.group(2)) + 1e-6, (moved, fit.group(0))
assert abs(fs["before_lock_mean"] - float(fit.group(1))) < 0.01, fs
PY
expect solve_no_lock_report 0 'foot lock: off' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" --no-foot-lock -o "$TMP/s6"

# Bad det.npz files, written by hand (no numpy needed): npy v1.0 headers inside a zip.
mkdir -p "$TMP/bad"
python3 - "$TMP/bad" <<'PY'
import struct, sys, zipfile, math
out = sys.argv[1]
def npy(dtype, shape, data):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, "".join("%d," % s for s in shape))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + data
def strs(names):
    w = max(len(n) for n in names)
    return npy("<U%d" % w, [len(names)], b"".join(n.ljust(w, "\0").encode("utf-32-le") for n in names))
def f32(shape, vals): return npy("<f4", shape, struct.pack("<%df" % len(vals), *vals))
def det(path, T, names, conf=0.9, nan=False, side_J=None):
    J = len(names)
    uv = [200.0 + i % 7 for i in range(T * J * 2)]
    if nan: uv[5] = math.nan
    sj = side_J if side_J is not None else J
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("front_uv.npy", f32([T, J, 2], uv))
        z.writestr("side_uv.npy", f32([T, sj, 2], [600.0] * (T * sj * 2)))
        z.writestr("front_conf.npy", f32([T, J], [conf] * (T * J)))
        z.writestr("side_conf.npy", f32([T, sj], [conf] * (T * sj)))
        z.writestr("fps.npy", npy("<f8", [], struct.pack("<d", 30.0)))
        z.writestr("names.npy", strs(names))
ok = ["hips", "chest", "neck", "head"]
det(out + "/names.npz", 10, ["hips", "chest", "tentacle", "head"])
det(out + "/shape.npz", 10, ok, side_J=3)
det(out + "/zero.npz", 10, ok, conf=0.0)
det(out + "/short.npz", 2, ok)
det(out + "/nan.npz", 10, ok, nan=True)
PY
S=(--rig "$W/rig.json" --creature "$W/creature.json")
expect bad_names 2 "tentacle" -- "$AM_BIN" solve "$TMP/bad/names.npz" "${S[@]}" -o "$TMP/out1"
expect bad_shape 2 "shape|side" -- "$AM_BIN" solve "$TMP/bad/shape.npz" "${S[@]}" -o "$TMP/out2"
expect bad_all_conf_zero 2 "confidence.*zero|nothing was seen" -- "$AM_BIN" solve "$TMP/bad/zero.npz" "${S[@]}" -o "$TMP/out3"
expect bad_too_short 2 "at least 3" -- "$AM_BIN" solve "$TMP/bad/short.npz" "${S[@]}" -o "$TMP/out4"
expect bad_nan 2 "NaN|non-finite" -- "$AM_BIN" solve "$TMP/bad/nan.npz" "${S[@]}" -o "$TMP/out5"
for k in 1 2 3 4 5; do
  if [ ! -e "$TMP/out$k" ]; then am_pass "bad_input_no_output_$k"; else am_fail "bad_input_no_output_$k" "$TMP/out$k exists"; fi
done
expect score_wrong_truth 2 '' -- "$AM_BIN" score solve "$TMP/bad/names.npz" "$TMP/s/motion.json"
# exam --motion: a given clip (a synthetic trot, 5 cycles of 30 frames) is the truth, read in the
# two views like a random one; solved, it loops (shape --loop) with the truth's period and a seam
# below the clip's own mean frame-to-frame change (issue 14: shape on solved captures).
"$AM_BIN" synth gait --rig "$W/rig.json" --gait trot --frames 150 -o "$TMP/trot.json" -q
expect exam_given_motion 0 'exam: 150 frames' -- "$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --motion "$TMP/trot.json" --seed 1 -o "$TMP/gm"
"$AM_BIN" fk "$W/rig.json" --motion "$TMP/trot.json" > "$TMP/trot_fk.json"
if out=$(/usr/bin/python3 - "$TMP" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
z = np.load(d + "/gm/truth.npz")
fk = json.load(open(d + "/trot_fk.json"))
assert list(z["names"]) == fk["joint_names"], "joint order"
err = np.abs(z["joints"] - np.array(fk["joints"])).max()
assert err < 1e-12, "truth joints differ from FK of the given motion by %g m" % err
assert z["joints"].shape[0] == 150 and float(z["fps"]) == 30.0
print("truth = FK of the given motion to %.1e m" % err)
PY
); then am_pass "exam_given_truth_is_the_motion: $out"; else am_fail exam_given_truth_is_the_motion "$out"; fi
"$AM_BIN" solve "$TMP/gm/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" -o "$TMP/gms" -q
expect shape_solved_capture 0 'a loop' -- "$AM_BIN" shape "$TMP/gms/motion.json" --rig "$W/rig.json" --loop -o "$TMP/gms_loop.json"
if out=$(/usr/bin/python3 - "$TMP/gms_loop.shape_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["loop_error"]
assert r["period_frames"] == 30, "period %s, the truth's is 30" % r["period_frames"]
for k in ("position_jump_pct", "velocity_jump_pct"):
    assert e["after"][k] <= e["mean_step_pct"], "seam %s %.3f above the mean step %.3f" % (k, e["after"][k], e["mean_step_pct"])
print("period 30, seam %.3f / %.3f %% vs mean step %.3f %%" % (e["after"]["position_jump_pct"], e["after"]["velocity_jump_pct"], e["mean_step_pct"]))
PY
); then am_pass "shape_solved_capture_seam: $out"; else am_fail shape_solved_capture_seam "$out"; fi
expect exam_motion_not_with_cameras 2 '--motion is read in the two views only' -- "$AM_BIN" exam --rig "$W/rig.json" --motion "$TMP/trot.json" --cameras 3 -o "$TMP/gm2"
expect exam_motion_not_with_frames 2 '--motion gives the frames and fps' -- "$AM_BIN" exam --rig "$W/rig.json" --motion "$TMP/trot.json" --frames 20 -o "$TMP/gm2"
echo '{"fps": 30, "bones": ["nothing"], "trans": [[0,0,0]], "root_quat": [[1,0,0,0]], "euler": [[[0,0,0]]]}' > "$TMP/other.json"
expect exam_motion_of_another_rig 2 'other.json' -- "$AM_BIN" exam --rig "$W/rig.json" --motion "$TMP/other.json" -o "$TMP/gm2"
if [ ! -e "$TMP/gm2" ] || [ -z "$(ls -A "$TMP/gm2")" ]; then am_pass exam_motion_refusals_write_nothing; else am_fail exam_motion_refusals_write_nothing "$(ls "$TMP/gm2")"; fi

# takes recomputes each camera's reprojection from the take's det.npz (issue 14): for a solve
# without swap repair (which changes the detections the fit saw) it is what solve stored, the
# warped front's lag of 2 frames included; a det.npz that cannot be read stops with exit 2.
expect solve_no_swap 0 '' -- "$AM_BIN" solve "$TMP/e/det.npz" --rig "$W/rig.json" --creature "$W/creature.json" --no-swap-repair -o "$TMP/runs/take" -q
cp "$TMP/e/det.npz" "$TMP/runs/take/det.npz"
expect takes_reproj_det 0 '' -- "$AM_BIN" takes "$TMP/runs" --creature "$W/creature.json" -o "$TMP/takes.csv" -q
/usr/bin/python3 - "$TMP/takes.csv" "$TMP/runs/take/motion.json" <<'PY' && am_pass takes_reproj_equals_solve || am_fail takes_reproj_equals_solve "see above"
import csv, json, sys
row = list(csv.DictReader(open(sys.argv[1])))[0]
rp = json.load(open(sys.argv[2]))["reproj_px"]
assert row["reproj_source"] == "det", row
assert json.load(open(sys.argv[2]))["sync"]["time_warped"], "the test wants a warped front"
for v in ("front", "side"):
    assert abs(float(row["reproj_%s_px" % v]) - rp[v]) < 0.05, (v, row, rp)
assert abs(float(row["reproj_mean_px"]) - 0.5 * (rp["front"] + rp["side"])) < 0.05, (row, rp)
PY
rm "$TMP/runs/take/det.npz"
expect takes_reproj_motion 0 '' -- "$AM_BIN" takes "$TMP/runs" -o "$TMP/takes2.csv" -q
expect takes_reproj_motion_source 0 ',motion,' -- cat "$TMP/takes2.csv"
printf 'not an npz' > "$TMP/runs/take/det.npz"
expect takes_bad_det 2 'take/det.npz' -- "$AM_BIN" takes "$TMP/runs" -o "$TMP/takes3.csv" -q
if [ ! -e "$TMP/takes3.csv" ]; then am_pass takes_bad_det_no_output; else am_fail takes_bad_det_no_output "wrote $TMP/takes3.csv"; fi
am_done
