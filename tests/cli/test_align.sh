#!/usr/bin/env bash
# Issue 10 item 5: `anymove align` puts a tracker's tracks (here a synthetic walk moved into a
# Y-up, millimetre tracker's frame with a random rotation about its up and an offset) back into
# SPEC 1's world: the transform in ALIGNED.align.json undoes the move within 1 degree and 1 %,
# the aligned points match the originals; without --height the scale stays 1 and the units
# warning says so; bad input (every point hidden, a static clip, a swimming dolphin with no
# ground contact) exits 2 naming the file, and writes nothing.
. "$(dirname "$0")/lib.sh"
am_need_tool /usr/bin/python3
am_need_shared data/gltf/quaternius/Dolphin.glb
PY=/usr/bin/python3

"$AM_BIN" synth tracks --plan quadruped --motion walk --seed 5 --points 500 --frames 90 -o "$TMP/walk" -q
# the tracker's frame: Y up, millimetres, rotated 37 degrees about its up, offset
$PY - "$TMP/walk/tracks.npz" "$TMP/moved.npz" <<'PY'
import sys, numpy as np
z = np.load(sys.argv[1]); p = z["points"].astype(np.float64); v = z["visible"]
a = np.radians(37.0)
to_yup = np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]], float)        # world Z -> tracker +Y
spin = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
M = 1000.0 * spin @ to_yup
q = p @ M.T + np.array([120.0, -40.0, 900.0])
q[~v] = np.nan
np.savez(sys.argv[2], points=q.astype(np.float32), visible=v, fps=np.float64(30))
np.save(sys.argv[2] + ".M.npy", M)
PY
# --length (the median over frames of the extent along forward, -Y in the truth); --height is
# off by the tracker's noise over the body's height (2.4 % on this clip, docs/align.md)
L=$($PY -c "
import numpy as np; z=np.load('$TMP/walk/tracks.npz'); p=z['points']; v=z['visible']
l=[np.ptp(p[t][v[t]][:,1]) for t in range(len(p)) if v[t].any()]; print(np.median(l))")
expect align_runs 0 'up from given, forward from travel' -- "$AM_BIN" align "$TMP/moved.npz" --up +y --length "$L" -o "$TMP/aligned.npz"
if out=$($PY - "$TMP/aligned.align.json" "$TMP/moved.npz.M.npy" "$TMP/walk/tracks.npz" "$TMP/aligned.npz" <<'PY' 2>&1
import sys, json, numpy as np
j = json.load(open(sys.argv[1])); M = np.load(sys.argv[2])
A = j["scale"] * np.array(j["rotation"])
C = A @ M                                    # should be the identity similarity
s = np.cbrt(np.linalg.det(C)); R = C / s
ang = np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))
assert abs(s - 1) < 0.01 and ang < 1.0, (s, ang)
assert j["cues"] == {"up": "given", "forward": "travel", "forward_sign": "travel"}, j["cues"]
assert np.allclose(np.array(j["matrix"])[:3, :3], A)
z = np.load(sys.argv[3]); a = np.load(sys.argv[4]); v = z["visible"]
assert a["points"].shape == z["points"].shape and (a["visible"] == v).all()
d = a["points"][v] - z["points"][v]
d[:, :2] -= d[:, :2].mean(0)                 # the origin moves to under the body at frame 0
size = np.linalg.norm(z["points"][0][v[0]].max(0) - z["points"][0][v[0]].min(0))
print("rotation error %.3f deg, scale error %.3f %%, max point error %.4f body sizes" % (ang, 100 * abs(s - 1), np.abs(d).max() / size))
assert np.abs(d).max() < 0.02 * size and np.isnan(a["points"][~v]).all()
PY
); then am_pass align_undoes_the_move "$out"; echo "     $out"; else am_fail align_undoes_the_move "$out"; fi
# no --height: scale 1, and the body (1000x in mm) is flagged
expect align_units_warning 0 'implausible in metres' -- "$AM_BIN" align "$TMP/moved.npz" --up +y -o "$TMP/mm.npz" -q
expect align_keeps_scale 0 '"scale": 1\.0,' -- cat "$TMP/mm.align.json"

# bad input: exit 2, the file named, nothing written
mkdir -p "$TMP/bad"
$PY - "$TMP" <<'PY'
import sys, numpy as np
t = sys.argv[1]; rng = np.random.default_rng(3)
np.savez(t + "/hidden.npz", points=np.full((20, 30, 3), np.nan, np.float32), visible=np.zeros((20, 30), bool))
body = rng.random((200, 3)) * [1, 2, 0.5]
np.savez(t + "/static.npz", points=(body[None] + 0.001 * rng.standard_normal((60, 200, 3))).astype(np.float32))
PY
expect align_all_hidden 2 'hidden.npz.*every point is hidden' -- "$AM_BIN" align "$TMP/hidden.npz" -o "$TMP/bad/out.npz"
expect align_static 2 'static.npz.*static clip' -- "$AM_BIN" align "$TMP/static.npz" -o "$TMP/bad/out.npz"
"$AM_BIN" bake "$AM_SHARED/data/gltf/quaternius/Dolphin.glb" -o "$TMP/dolphin" -q
expect align_no_ground 2 'dolphin/tracks.npz.*no ground contact' -- "$AM_BIN" align "$TMP/dolphin/tracks.npz" -o "$TMP/bad/out.npz"
expect align_no_ground_asked 2 'no ground contact' -- "$AM_BIN" align "$TMP/dolphin/tracks.npz" --up ground -o "$TMP/bad/out.npz"
no_files align_no_partial_output "$TMP/bad"
expect align_wants_npz 2 'align' -- "$AM_BIN" align "$TMP/moved.npz" -o "$TMP/bad/out.json"
expect align_height_and_length 2 'not both' -- "$AM_BIN" align "$TMP/moved.npz" --height 1 --length 1 -o "$TMP/bad/out.npz"
expect align_bad_up 2 'up must be' -- "$AM_BIN" align "$TMP/moved.npz" --up sideways -o "$TMP/bad/out.npz"
no_files align_no_output_on_usage "$TMP/bad"
am_done
