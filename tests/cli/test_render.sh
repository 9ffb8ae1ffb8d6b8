#!/usr/bin/env bash
# render, overlay, showcase and report from the command line: videos decode in FFmpeg with the
# frames and rate written, bad inputs exit 2 and leave nothing, the report loads in headless
# Chromium with no console error, its viewer's joints equal motion.json's to 1e-4 of the body
# size and its screenshot matches tests/data/render/report_solve.png (tests/cli/report_check.mjs).
. "$(dirname "$0")/lib.sh"
am_need_tool ffprobe ffmpeg node chromium jq /usr/bin/python3
W="$AM_SOURCE/examples/creatures/wolf"
WK="$AM_SOURCE/examples/walker"

expect render_mp4 0 "" -- "$AM_BIN" render "$WK/rig.json" --motion "$WK/walk.json" --frames 0:20 --fps 24 -o "$TMP/walk.mp4" -q
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,r_frame_rate -of csv=p=0 "$TMP/walk.mp4")
if [ "$got" = "24/1,20" ]; then am_pass ffprobe_frames_and_rate; else am_fail ffprobe_frames_and_rate "ffprobe says '$got', want 24/1,20"; fi

# a file where a folder should be: unwritable even for root
: > "$TMP/plain"
expect unwritable_output 2 "plain" -- "$AM_BIN" render "$WK/rig.json" -o "$TMP/plain/sub/x.png"
cat > "$TMP/cal.toml" <<'TOML'
[cam_0]
name = "left"
size = [640, 480]
matrix = [[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]]
distortions = [0.0, 0.0, 0.0, 0.0, 0.0]
rotation = [1.5708, 0.0, 0.0]
translation = [0.0, 0.5, 4.0]
TOML
expect unknown_camera 2 "no camera 'right'.*left" -- "$AM_BIN" render "$WK/rig.json" --camera "$TMP/cal.toml:right" -o "$TMP/c.png"
expect calibrated_camera 0 "" -- "$AM_BIN" render "$WK/rig.json" --camera "$TMP/cal.toml:left" -o "$TMP/c.png" -q
expect render_bad_ext 2 "not a format" -- "$AM_BIN" render "$WK/rig.json" -o "$TMP/x.fbx"

"$AM_BIN" exam --rig "$W/rig.json" --seed 5 --frames 12 -o "$TMP/ex" -q
ffmpeg -v error -f lavfi -i color=c=gray:s=1000x700:r=30 -frames:v 12 -y "$TMP/odd.mp4"
mkdir -p "$TMP/none"
expect overlay_clip_mismatch 2 "odd.mp4.*1000 x 700.*calib" -- "$AM_BIN" overlay "$TMP/ex/det.npz" --video "$TMP/odd.mp4" -o "$TMP/none/ov.mp4"
no_files overlay_mismatch_leaves_nothing "$TMP/none"
ffmpeg -v error -f lavfi -i color=c=gray:s=640x360:r=30 -frames:v 12 -y "$TMP/half.mp4"
expect overlay_scaled_clip 0 "" -- "$AM_BIN" overlay "$TMP/ex/det.npz" --video "$TMP/half.mp4" -o "$TMP/ov.mp4" -q
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,width,height -of csv=p=0 "$TMP/ov.mp4")
if [ "$got" = "1280,720,12" ]; then am_pass overlay_frames; else am_fail overlay_frames "ffprobe says '$got'"; fi

# relative paths: the report's title is the det file as given, and the screenshot's golden has it
(cd "$TMP" && "$AM_BIN" solve ex/det.npz --rig "$W/rig.json" --creature "$W/creature.json" -o so --report -q >/dev/null)
expect showcase 0 "" -- "$AM_BIN" showcase "$TMP/so" --rig "$W/rig.json" --det "$TMP/ex/det.npz" -o "$TMP/sc.mp4" -q
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,width -of csv=p=0 "$TMP/sc.mp4")
if [ "$got" = "1920,12" ]; then am_pass showcase_frames; else am_fail showcase_frames "ffprobe says '$got'"; fi

if [ -f "$TMP/so/report.html" ] && [ -f "$TMP/so/report_three.js" ]; then am_pass solve_report_written; else am_fail solve_report_written "no report.html + report_three.js"; fi
if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/so/report.html" "$TMP/so/motion.json" "$TMP/shot.png" "$AM_SOURCE/tests/data/render/report_solve.png" 2>&1); then
  am_pass "report_in_chromium: $out"; else am_fail report_in_chromium "$out"; fi
# rig and ik: --report and --render add their pictures to the set; the viewer plays rig.glb /
# animation.glb with the joints of motion.json (FK) to 1e-4 of the body size, and each page's
# screenshot matches its golden (relative paths, so the titles do not name this machine's folders)
ln -s "$AM_SOURCE/examples/tracks/grison_walk.tracks.npz" "$TMP/grison.tracks.npz"
expect rig_report_render 0 "" -- bash -c "cd '$TMP' && '$AM_BIN' rig grison.tracks.npz --bones 15 -o rg --report --render -q"
expect ik_report_render 0 "" -- bash -c "cd '$TMP' && '$AM_BIN' ik rg/motion.json --rig rg/rig.json -o ik --report --render -q"
for d in rg ik; do
  miss=""
  for f in report.html report_three.js render_layout.png render_three_quarter.png; do [ -s "$TMP/$d/$f" ] || miss="$miss $f"; done
  if [ -z "$miss" ]; then am_pass "${d}_pictures_written"; else am_fail "${d}_pictures_written" "missing:$miss"; fi
  if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/$d/report.html" "$TMP/$d/motion.json" "$TMP/${d}_shot.png" "$AM_SOURCE/tests/data/render/report_$d.png" 2>&1); then
    am_pass "${d}_report_in_chromium: $out"; else am_fail "${d}_report_in_chromium" "$out"; fi
done

# N cameras: solve --cameras --report --render plots the reprojection per frame and camera and
# renders through every calibrated camera in a grid (render_cameras.png) and in 3/4
"$AM_BIN" exam --rig "$W/rig.json" --cameras 4 --frames 30 --seed 3 -o "$TMP/ex4" -q
expect solve_cameras_report_render 0 "" -- bash -c "cd '$TMP' && '$AM_BIN' solve ex4/det.npz --cameras ex4/calibration.toml --rig '$W/rig.json' -o so4 --report --render -q"
miss=""
for f in report.html report_three.js render_cameras.png render_three_quarter.png; do [ -s "$TMP/so4/$f" ] || miss="$miss $f"; done
if [ -z "$miss" ] && [ ! -e "$TMP/so4/render_layout.png" ]; then am_pass solve_cameras_pictures_written; else am_fail solve_cameras_pictures_written "missing:$miss"; fi
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$TMP/so4/render_cameras.png")
if [ "$got" = "1280,720" ]; then am_pass render_cameras_grid_2x2; else am_fail render_cameras_grid_2x2 "ffprobe says '$got'"; fi
if grep -q "Reprojection error per frame and camera" "$TMP/so4/report.html" && grep -q "camera cam_3" "$TMP/so4/report.html"; then
  am_pass solve_cameras_report_per_camera; else am_fail solve_cameras_report_per_camera "no per-camera plot or gate"; fi
if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/so4/report.html" "$TMP/so4/motion.json" "$TMP/so4_shot.png" "$AM_SOURCE/tests/data/render/report_solve_cameras.png" 2>&1); then
  am_pass "solve_cameras_report_in_chromium: $out"; else am_fail solve_cameras_report_in_chromium "$out"; fi
expect render_camera_grid 0 "cameras view" -- "$AM_BIN" render "$TMP/so4" --camera "$TMP/ex4/calibration.toml" --frames 3:5 -o "$TMP/grid.mp4"
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,width,height -of csv=p=0 "$TMP/grid.mp4")
if [ "$got" = "1280,720,2" ]; then am_pass render_camera_grid_frames; else am_fail render_camera_grid_frames "ffprobe says '$got'"; fi

# triangulate --report --render: no rig, so the page's viewer moves the points themselves (equal
# to joints.npz's, missing ones hidden) joined by the rig's bones; render_cameras.png is the middle
# frame's detections with the points reprojected through each camera
expect triangulate_report_render 0 "" -- bash -c "cd '$TMP' && '$AM_BIN' triangulate ex4/det.npz --cameras ex4/calibration.toml --rig '$W/rig.json' -o tri --report --render -q"
miss=""
for f in joints.npz report.html report_three.js render_cameras.png; do [ -s "$TMP/tri/$f" ] || miss="$miss $f"; done
if [ -z "$miss" ]; then am_pass triangulate_pictures_written; else am_fail triangulate_pictures_written "missing:$miss"; fi
got=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$TMP/tri/render_cameras.png")
if [ "$got" = "1280,720" ]; then am_pass triangulate_render_grid; else am_fail triangulate_render_grid "ffprobe says '$got'"; fi
/usr/bin/python3 "$AM_SOURCE/tests/cli/joints_json.py" "$TMP/tri/joints.npz" "$TMP/tri_points.json"
if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/tri/report.html" "$TMP/tri_points.json" "$TMP/tri_shot.png" "$AM_SOURCE/tests/data/render/report_triangulate.png" 2>&1); then
  am_pass "triangulate_report_in_chromium: $out"; else am_fail triangulate_report_in_chromium "$out"; fi

# dataset: the meta's layout pixels are SPEC 3's projection of its true joints, each picture shows
# the pose its meta records (tests/cli/dataset_check.py), and one seed gives the same files
expect dataset 0 "" -- "$AM_BIN" dataset --rig "$W/rig.json" --creature "$W/creature.json" --count 3 --seed 4 -o "$TMP/ds" -q
if out=$(python3 "$AM_SOURCE/tests/cli/dataset_check.py" "$TMP/ds" 3 2>&1); then am_pass "dataset_meta_matches_pictures: $out"
else am_fail dataset_meta_matches_pictures "$out"; fi
"$AM_BIN" dataset --rig "$W/rig.json" --creature "$W/creature.json" --count 3 --seed 4 -o "$TMP/ds2" -q
if diff -r "$TMP/ds" "$TMP/ds2" >/dev/null; then am_pass dataset_same_seed_same_files; else am_fail dataset_same_seed_same_files "two runs with --seed 4 differ"; fi
"$AM_BIN" dataset --rig "$W/rig.json" --creature "$W/creature.json" --count 1 --seed 5 -o "$TMP/ds3" -q
if ! cmp -s "$TMP/ds/0_meta.json" "$TMP/ds3/0_meta.json"; then am_pass dataset_seed_changes_pose; else am_fail dataset_seed_changes_pose "--seed 5 gave --seed 4's pose"; fi
# rig-from-points --report --render: RIG.json and its pictures as one set; the page's viewer plays
# the rig fitted through the points, whose joints are `anymove ik`'s on the same points to 1e-4
# of the body size; its screenshot matches report_rig_from_points.png; an unwritable output exits
# 2 with nothing written
"$AM_BIN" exam --rig "$W/rig.json" --cameras 4 --seed 2 --frames 30 -o "$TMP/rfp/ex" -q
"$AM_BIN" triangulate "$TMP/rfp/ex/det.npz" --cameras "$TMP/rfp/ex/calibration.toml" -o "$TMP/rfp/tri" -q
E=$(jq -r '[.bones[] | select(.[2] != null) | "\(.[1])-\(.[2])"] | join(",")' "$W/rig.json")
expect rig_from_points_report 0 "" -- bash -c "cd '$TMP/rfp' && '$AM_BIN' rig-from-points tri/joints.npz --edges '$E' -o rr/rig.json --report --render -q"
miss=""
for f in rig.json report.html report_three.js render_layout.png render_three_quarter.png; do [ -s "$TMP/rfp/rr/$f" ] || miss="$miss $f"; done
if [ -z "$miss" ]; then am_pass rig_from_points_pictures_written; else am_fail rig_from_points_pictures_written "missing:$miss"; fi
"$AM_BIN" ik "$TMP/rfp/tri/joints.npz" --rig "$TMP/rfp/rr/rig.json" -o "$TMP/rfp/ik" -q
if out=$(node "$AM_SOURCE/tests/cli/report_check.mjs" "$TMP/rfp/rr/report.html" "$TMP/rfp/ik/motion.json" "$TMP/rfp_shot.png" "$AM_SOURCE/tests/data/render/report_rig_from_points.png" 2>&1); then
  am_pass "rig_from_points_report_in_chromium: $out"; else am_fail rig_from_points_report_in_chromium "$out"; fi
: > "$TMP/rfp/plain"
expect rig_from_points_report_unwritable 2 "plain" -- "$AM_BIN" rig-from-points "$TMP/rfp/tri/joints.npz" --edges "$E" -o "$TMP/rfp/plain/rig.json" --report
if [ ! -s "$TMP/rfp/plain" ]; then am_pass rig_from_points_unwritable_nothing; else am_fail rig_from_points_unwritable_nothing "plain changed"; fi

am_done
