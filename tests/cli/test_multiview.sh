#!/usr/bin/env bash
# Issue 11 from the command line: cameras info/convert, import of every tracker sample, the
# N-view exam -> triangulate -> score chain, and the bad inputs of the issue (exit 2 naming the
# file and the line, byte or dataset).
. "$(dirname "$0")/lib.sh"
F=$AM_SHARED/data/formats
R=$AM_SOURCE/examples/creatures/wolf/rig.json

# Cameras.
expect cameras_info 0 'cam091 +pinhole +1440x1080 +\(-0\.083, 0\.122, 1\.499\)' -- "$AM_BIN" cameras info "$F/anipose/calibration_7cam-allen-mouse.toml" --scale 0.001
expect cameras_info_mm_warning 0 'is this calibration in millimetres\? \(--scale 0\.001\)' -- "$AM_BIN" cameras info "$F/anipose/calibration_7cam-allen-mouse.toml"
expect cameras_convert 0 'cameras: 1 cameras' -- "$AM_BIN" cameras convert "$F/pose2sim_calib/Sports2D_Calib_demo.toml" -o "$TMP/demo.toml"
expect cameras_convert_reads_back 0 'demo +pinhole +1768x994' -- "$AM_BIN" cameras info "$TMP/demo.toml"
printf '[cam_0]\nname = "a"\nsize = [640, 480]\nmatrix = [[500, 0, 320], [0, nan, 240], [0, 0, 1]]\nrotation = [0, 0, 0]\ntranslation = [0, 0, 1]\n' > "$TMP/nan.toml"
expect cameras_nan_matrix 2 'nan\.toml:4:30: error: NaN or infinite value \(camera .a.: matrix\[1\]\[1\]' -- "$AM_BIN" cameras info "$TMP/nan.toml"
expect cameras_layout 0 'cameras: 2 cameras' -- "$AM_BIN" cameras layout -o "$TMP/layout.toml"

# Import: every 2D sample to det.npz, every 3D one to joints.npz.
expect import_dlc 0 '1 camera, 97 frames, 14 joints' -- "$AM_BIN" import "$F/deeplabcut/deepof_single_topview_DLC_resnet50.csv" --fps 25 -o "$TMP/dlc.npz"
expect import_madlc 0 "took individual 'mouse_white_tail'" -- "$AM_BIN" import "$F/deeplabcut/deepof_madlc_topview_DLC_dlcrnetms5.csv" -o "$TMP/madlc.npz"
expect import_labeled 0 'shorter than the header' -- "$AM_BIN" import "$F/deeplabcut/sleap_maudlc_testdata_v2_labeled.csv" --individual Animal2 -o "$TMP/lab.npz"
expect import_sleap 0 '3000 frames, 13 joints' -- "$AM_BIN" import "$F/sleap/legacy_flies_2tracks_predictions.analysis.h5" --track 2 -o "$TMP/sleap.npz"
expect import_openpose 0 '9 frames, 25 joints' -- "$AM_BIN" import "$F/openpose/sign-language-sample" -o "$TMP/op.npz"
expect import_mediapipe 0 '1 frames, 33 joints' -- "$AM_BIN" import "$F/mediapipe/pose_landmarks.pbtxt" --size 1280 720 -o "$TMP/mp.npz"
expect import_mediapipe_needs_size 2 'pose_landmarks\.pbtxt.*--size W H' -- "$AM_BIN" import "$F/mediapipe/pose_landmarks.pbtxt" -o "$TMP/mp2.npz"
expect import_trc 0 '112 frames, 40 joints' -- "$AM_BIN" import "$F/trc/std_walking5_markers.trc" -o "$TMP/trc.npz"
expect import_c3d 0 '1103 frames, 40 joints.*250 fps' -- "$AM_BIN" import "$F/c3d/walking5.c3d" -o "$TMP/c3d.npz"
expect import_c3d_truncated 0 'claims 1149 frames, the data holds 29' -- "$AM_BIN" import "$F/c3d/Optotrak.c3d" -o "$TMP/opto.npz"
expect info_reads_joints 0 'joints' -- "$AM_BIN" info "$TMP/c3d.npz"

# Bad inputs of the issue.
printf 'scorer,s,s,s\nbodyparts,a,a,a\ncoords,x,y,likelihood\n0,1,2,0.5\n1,1,2,0.5,7\n' > "$TMP/ragged.csv"
expect bad_dlc_ragged_row 2 'ragged\.csv:5: error: wrong array shape \(row has 5 cells, the header 4' -- "$AM_BIN" import "$TMP/ragged.csv" -o "$TMP/x.npz"
expect bad_sleap_zero_frames 2 "zero_frames\.h5: error: empty input \(dataset 'tracks' holds 0 frames" -- "$AM_BIN" import "$AM_SOURCE/fuzz/corpus/sleap/zero_frames.h5" -o "$TMP/x.npz"
head -30 "$F/deeplabcut/deepof_single_topview_DLC_resnet50.csv" > "$TMP/cam_b.csv"
expect bad_frame_counts 2 'cam_b\.csv: error: wrong array shape \(27 frames, but .*deepof_single_topview_DLC_resnet50\.csv has 97' -- "$AM_BIN" import "$F/deeplabcut/deepof_single_topview_DLC_resnet50.csv" "$TMP/cam_b.csv" -o "$TMP/x.npz"
expect bad_import_unknown_camera 2 "camera 'cam_b' is not in the calibration" -- "$AM_BIN" import "$TMP/cam_b.csv" --cameras "$TMP/demo.toml" -o "$TMP/x.npz"
expect import_camera_name 0 '1 camera, 27 frames' -- "$AM_BIN" import --camera demo="$TMP/cam_b.csv" --cameras "$TMP/demo.toml" -o "$TMP/named.npz"
if [ -e "$TMP/x.npz" ]; then am_fail no_partial_output "x.npz written by a failed import"; else am_pass no_partial_output; fi

# The N-view exam -> triangulate -> score.
expect exam_cameras 0 'exam: 4 cameras, 60 frames, 26 joints' -- "$AM_BIN" exam --rig "$R" --cameras 4 --frames 60 --noise 2 --outliers 0.02 --occlusion --offsets 2 -o "$TMP/ex"
expect triangulate 0 'triangulate: 4 cameras, 60 frames, 26 joints' -- "$AM_BIN" triangulate "$TMP/ex/det.npz" --cameras "$TMP/ex/calibration.toml" -o "$TMP/tri"
for f in joints.npz joints.trc triangulation.npz summary.json; do
  if [ -s "$TMP/tri/$f" ]; then am_pass "triangulate_wrote_$f"; else am_fail "triangulate_wrote_$f" "missing"; fi
done
"$AM_BIN" score triangulate "$TMP/ex/truth.npz" "$TMP/tri/joints.npz" > "$TMP/score.json" 2>/dev/null
if python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['joint_mean_pct'] < 2.5 and s['missing_pct'] < 8, s" "$TMP/score.json"; then
  am_pass triangulate_accuracy; else am_fail triangulate_accuracy "$(cat "$TMP/score.json")"; fi
expect triangulate_refine 0 'refine' -- "$AM_BIN" triangulate "$TMP/ex/det.npz" --cameras "$TMP/ex/calibration.toml" --refine --rig "$R" -o "$TMP/trir"
expect import_own_trc 0 '60 frames, 26 joints' -- "$AM_BIN" import "$TMP/tri/joints.trc" -o "$TMP/back.npz"
# The two-view det of the classic exam triangulates through the same path (no --cameras).
expect exam_two_view 0 'exam:' -- "$AM_BIN" exam --rig "$R" --frames 30 -o "$TMP/ex2"
expect triangulate_two_view 0 '2 cameras, 30 frames' -- "$AM_BIN" triangulate "$TMP/ex2/det.npz" -o "$TMP/tri2"
# A calibration without a camera the detections name.
expect bad_calibration_missing_camera 2 "camera 'cam_0' of the detections is not in the calibration \(it has 'demo'\)" -- "$AM_BIN" triangulate "$TMP/ex/det.npz" --cameras "$TMP/demo.toml" -o "$TMP/tri3"
expect bad_triangulate_no_cameras 2 'give their calibration with --cameras' -- "$AM_BIN" triangulate "$TMP/ex/det.npz" -o "$TMP/tri4"

# ---- the CLI convention (README): -o rules, checks before the work, whole output sets ------
DLC=$F/deeplabcut/deepof_single_topview_DLC_resnet50.csv
expect o_import_2d_trc 2 "'\.trc' is not one import writes \(\.npz\)" -- "$AM_BIN" import "$DLC" -o "$TMP/o/x.trc"
expect o_import_no_ext 2 'give a file name ending in \.npz or \.trc' -- "$AM_BIN" import "$F/c3d/walking5.c3d" -o "$TMP/o/x"
expect o_import_two_3d 2 'is imported alone' -- "$AM_BIN" import "$F/c3d/walking5.c3d" "$F/trc/std_walking5_markers.trc" -o "$TMP/o/x.npz"
expect o_import_3d_cameras 2 '3D points: --cameras and --camera are for 2D' -- "$AM_BIN" import "$F/c3d/walking5.c3d" --cameras "$TMP/demo.toml" -o "$TMP/o/x.npz"
expect o_import_2d_scale 2 '--scale of 2D detections is the calibration' -- "$AM_BIN" import "$DLC" --scale 0.001 -o "$TMP/o/x.npz"
expect o_triangulate_file 2 'triangulate writes several files .*so -o names a folder' -- "$AM_BIN" triangulate "$TMP/ex/det.npz" --cameras "$TMP/ex/calibration.toml" -o "$TMP/o/t.npz"
expect o_cameras_json 2 "'\.json' is not one cameras writes \(\.toml\)" -- "$AM_BIN" cameras convert "$TMP/demo.toml" -o "$TMP/o/c.json"
expect o_cameras_info_no_o 2 'info prints on stdout' -- "$AM_BIN" cameras info "$TMP/demo.toml" -o "$TMP/o/c.toml"
expect o_exam_cameras_count 2 '--cameras N needs 2 to 64 cameras' -- "$AM_BIN" exam --rig "$R" --cameras 1 -o "$TMP/o/e"
expect o_exam_lag_with_cameras 2 '--lag is the two-view exam' -- "$AM_BIN" exam --rig "$R" --cameras 3 --lag 2 -o "$TMP/o/e"
expect o_exam_occlusion_alone 2 '--occlusion needs --cameras' -- "$AM_BIN" exam --rig "$R" --occlusion -o "$TMP/o/e"
[ ! -e "$TMP/o" ] && am_pass o_usage_errors_write_nothing || am_fail o_usage_errors_write_nothing "$(ls -A "$TMP/o")"
# 3D points to an OpenSim TRC by the extension, read back the same.
expect import_c3d_to_trc 0 '1103 frames, 40 joints.*-> .*w5\.trc' -- "$AM_BIN" import "$F/c3d/walking5.c3d" -o "$TMP/w5.trc"
expect import_trc_back 0 '1103 frames, 40 joints, 54\.5 % present, 250 fps' -- "$AM_BIN" import "$TMP/w5.trc" -o "$TMP/w5.npz"
expect import_body_size 0 'walking5\.c3d: body size 1\.7[0-9] m' -- "$AM_BIN" import "$F/c3d/walking5.c3d" -o "$TMP/w5b.npz"
# A failed rerun leaves the previous set whole (here: a calibration without the det's cameras).
(cd "$TMP/tri" && sha256sum joints.npz joints.trc triangulation.npz summary.json) > "$TMP/tri.sums"
expect tri_rerun_fails 2 "calibration" -- "$AM_BIN" triangulate "$TMP/ex/det.npz" --cameras "$TMP/demo.toml" -o "$TMP/tri"
if (cd "$TMP/tri" && sha256sum -c --quiet "$TMP/tri.sums" >/dev/null 2>&1); then am_pass tri_old_set_whole; else am_fail tri_old_set_whole "the old set changed"; fi
[ -z "$(find "$TMP/tri" "$TMP" -maxdepth 1 -name '.anymove-tmp.*')" ] && am_pass tri_no_temporaries || am_fail tri_no_temporaries "$(ls -A "$TMP/tri")"
cp "$TMP/named.npz" "$TMP/named.keep"
expect import_rerun_fails 2 'ragged\.csv:5' -- "$AM_BIN" import "$TMP/ragged.csv" -o "$TMP/named.npz"
cmp -s "$TMP/named.npz" "$TMP/named.keep" && am_pass import_old_file_kept || am_fail import_old_file_kept "named.npz changed"
# Both exams write one set: a two-view run into an N-camera exam's folder leaves no calibration.toml.
expect exam_two_view_over_cameras 0 'exam: 20 frames' -- "$AM_BIN" exam --rig "$R" --frames 20 -o "$TMP/ex"
[ ! -e "$TMP/ex/calibration.toml" ] && [ -e "$TMP/ex/det.npz" ] && am_pass exam_set_replaced_whole || am_fail exam_set_replaced_whole "$(ls -A "$TMP/ex")"
# Progress: one line per finished stage (not a terminal), and the units check of the result.
"$AM_BIN" exam --rig "$R" --cameras 3 --frames 40 -o "$TMP/exp" -q
"$AM_BIN" triangulate "$TMP/exp/det.npz" --cameras "$TMP/exp/calibration.toml" --refine --rig "$R" -o "$TMP/trip" 2> "$TMP/trip.err"
for stage in triangulate refine; do
  n=$(grep -Ec "^anymove: $stage +[0-9]+\.[0-9]{3} s$" "$TMP/trip.err")
  [ "$n" -eq 1 ] && am_pass "progress_line: $stage" || am_fail "progress_line: $stage" "$n lines" "$(cat "$TMP/trip.err")"
done
grep -q 'det\.npz: body size [0-9.]* m' "$TMP/trip.err" && am_pass triangulate_body_size || am_fail triangulate_body_size "$(cat "$TMP/trip.err")"
# A calibration in millimetres read as metres: the triangulated body is implausible and says so.
"$AM_BIN" exam --rig "$R" --cameras 3 --frames 10 -o "$TMP/exmm" -q
/usr/bin/python3 - "$TMP/exmm/calibration.toml" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
s = re.sub(r"translation = \[([^\]]*)\]", lambda m: "translation = [%s]" % ", ".join(repr(1000 * float(v)) for v in m.group(1).split(",")), s)
open(p, "w").write(s)
PY
expect triangulate_mm_warning 0 'det\.npz: a body 1\.9[0-9]e\+03 m across is implausible in metres' -- "$AM_BIN" triangulate "$TMP/exmm/det.npz" --cameras "$TMP/exmm/calibration.toml" --threshold 1e6 -o "$TMP/trimm"
# Camera adjustment: a calibration with cam_1 shifted 20 cm and turned 3 degrees; the adjusted one
# reprojects as the true one does, better than the shifted one.
"$AM_BIN" exam --rig "$R" --cameras 4 --frames 60 --noise 2 --outliers 0.02 -o "$TMP/exa" -q 2>/dev/null
/usr/bin/python3 - "$TMP/exa/calibration.toml" "$TMP/shifted.toml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
head, rest = s.split("[cam_1]", 1)
rest = re.sub(r"translation = \[([^\],]*),", lambda m: "translation = [%r," % (float(m.group(1)) + 0.2), rest, count=1)
rest = re.sub(r"rotation = \[([^\],]*),", lambda m: "rotation = [%r," % (float(m.group(1)) + 0.05), rest, count=1)
open(sys.argv[2], "w").write(head + "[cam_1]" + rest)
PY
expect cameras_adjust 0 'median per-point reprojection error [0-9.]+ px -> [0-9.]+ px' -- "$AM_BIN" cameras adjust "$TMP/exa/det.npz" --cameras "$TMP/shifted.toml" -o "$TMP/adjusted.toml"
"$AM_BIN" cameras adjust "$TMP/exa/det.npz" --cameras "$TMP/shifted.toml" -o "$TMP/adjusted2.toml" 2> "$TMP/adj.log"
"$AM_BIN" cameras adjust "$TMP/exa/det.npz" --cameras "$TMP/exa/calibration.toml" -o "$TMP/adjusted3.toml" 2> "$TMP/adj_true.log"
before=$(sed -n 's/.*reprojection error \([0-9.]*\) px -> \([0-9.]*\) px.*/\1/p' "$TMP/adj.log")
after=$(sed -n 's/.*reprojection error \([0-9.]*\) px -> \([0-9.]*\) px.*/\2/p' "$TMP/adj.log")
truth=$(sed -n 's/.*reprojection error \([0-9.]*\) px -> .*/\1/p' "$TMP/adj_true.log")
if awk -v b="$before" -v a="$after" -v t="$truth" 'BEGIN { exit !(b > 1.5 * t && a < 1.05 * t) }'; then
  am_pass cameras_adjust_recovers; else am_fail cameras_adjust_recovers "shifted $before px -> $after px, true calibration $truth px"; fi
if cmp -s "$TMP/adjusted.toml" "$TMP/adjusted2.toml"; then am_pass cameras_adjust_reproducible; else am_fail cameras_adjust_reproducible "two runs differ"; fi
expect cameras_adjust_reads_back 0 'cam_1 +pinhole' -- "$AM_BIN" cameras info "$TMP/adjusted.toml"
expect bad_adjust_missing_camera 2 "demo\.toml: error: .*camera 'cam_0' of the detections is not in the calibration" -- "$AM_BIN" cameras adjust "$TMP/exa/det.npz" --cameras "$TMP/demo.toml" -o "$TMP/adj_bad.toml"
expect bad_adjust_not_npz 2 'shifted\.toml: error' -- "$AM_BIN" cameras adjust "$TMP/shifted.toml" --cameras "$TMP/shifted.toml" -o "$TMP/adj_bad.toml"
expect bad_adjust_needs_cameras 2 'adjust needs --cameras' -- "$AM_BIN" cameras adjust "$TMP/exa/det.npz" -o "$TMP/adj_bad.toml"
expect bad_adjust_output_format 2 'adj_bad\.json' -- "$AM_BIN" cameras adjust "$TMP/exa/det.npz" --cameras "$TMP/shifted.toml" -o "$TMP/adj_bad.json"
expect bad_adjust_option_elsewhere 2 'are for adjust' -- "$AM_BIN" cameras info "$TMP/shifted.toml" --focal
if [ -e "$TMP/adj_bad.toml" ]; then am_fail adjust_no_partial_output "adj_bad.toml written by a failed adjust"; else am_pass adjust_no_partial_output; fi
am_done
