#!/usr/bin/env bash
# Issue 14 items 1 and 3: bind keeps a glTF model's pieces and pack carries them to the game.
# The Flamingo (14 morph targets, its own COLOR_0) twinned into two mesh nodes (the second
# turned, scaled and moved; a camera and an empty beside them), bound to a chain rig authored on
# the prepared mesh: mesh nodes, names, morph targets (deltas through the node and the prep),
# default weights, target names and colours kept, the paint as COLOR_0 and the Flamingo's
# colours as COLOR_1; packed: the paint gone and COLOR_0 the Flamingo's own again. Two
# Quaternius models bound from their own rig (the Husky split into one mesh node per primitive,
# each with its material; the Frog as it is), a clip of each shaped and packed. Every file
# validator-clean (0 errors, 0 warnings); three.js and Blender load the packs with their mesh
# nodes, morph targets, colours and clip names, and play the clips.
. "$(dirname "$0")/lib.sh"
am_need_tool node blender /usr/bin/python3
am_need_shared data/gltf/Flamingo.glb data/gltf/quaternius/Husky.glb data/gltf/quaternius/Frog.glb
PY=/usr/bin/python3
T=$AM_SOURCE/tests/cli
FL=$AM_SHARED/data/gltf/Flamingo.glb
Q=$AM_SHARED/data/gltf/quaternius

# glb_json FILE: the JSON chunk of a GLB
glb_json() { $PY -c "import json,struct,sys; b=open(sys.argv[1],'rb').read(); n=struct.unpack_from('<I',b,12)[0]; print(b[20:20+n].decode())" "$1"; }
# validator FILE NAME: 0 errors and 0 warnings
validator() { expect "$2" 0 '"errors":0,"warnings":0' -- "$AM_VALIDATOR" "$1"; }

# ---- the Flamingo: two mesh nodes with morph targets and colours ----
$PY "$T/gltf_pieces.py" twin "$FL" "$TMP/fl2.glb" || am_fail flamingo_twin "gltf_pieces.py failed"
validator "$TMP/fl2.glb" flamingo_twin_source_validator
cat > "$TMP/fl.json" <<'JSON'
{"prep": {"length_m": 1.2, "rotz_deg": 90, "axis": "y"},
 "paint": {"front": {"color": "#e03c3c", "bones": ["b0", "b1"]}, "back": {"color": "#3c78e0", "bones": ["b4", "b5"]}}}
JSON
expect flamingo_prepped 0 '"given": true' -- "$AM_BIN" bind "$TMP/fl2.glb" --creature "$TMP/fl.json" -o "$TMP/fl2p.obj" -q
$PY "$T/chain_rig.py" "$TMP/fl2p.obj" 6 "$TMP/flrig.json" || am_fail flamingo_rig "chain_rig.py failed"
expect flamingo_bind 0 '"morph_targets": 28,' -- "$AM_BIN" bind "$TMP/fl2.glb" --rig "$TMP/flrig.json" --creature "$TMP/fl.json" -o "$TMP/fl_rigged.glb" -q
validator "$TMP/fl_rigged.glb" flamingo_bind_validator
# a clip of the chain: each bone bends about Z, one cycle in 30 frames
$PY - "$TMP/flrig.json" "$TMP/sway.json" <<'PY' || am_fail flamingo_clip "could not write the clip"
import json, math, sys
r = json.load(open(sys.argv[1])); B = len(r["bones"]); T = 31
eul = [[[0.0, 0.0, 0.3 * math.sin(2 * math.pi * t / (T - 1) + b) if b else 0.0] for b in range(B)] for t in range(T)]
h = r["joints"][r["bones"][0][1]]
json.dump({"fps": 30, "bones": [b[0] for b in r["bones"]], "trans": [h] * T, "root_quat": [[1, 0, 0, 0]] * T,
           "euler": eul}, open(sys.argv[2], "w"))
PY
expect flamingo_pack 0 'wrote .*flamingo.glb: 1 clip, [0-9]+ bytes, paint removed' -- \
  "$AM_BIN" pack "$TMP/sway.json" --rig "$TMP/flrig.json" --mesh "$TMP/fl_rigged.glb" --names Sway -o "$TMP/flpack/flamingo.glb"
validator "$TMP/flpack/flamingo.glb" flamingo_pack_validator
if out=$($PY - "$TMP/fl2.glb" "$TMP/fl_rigged.glb" "$TMP/flpack/flamingo.glb" <<'PY' 2>&1
import json, struct, sys
import numpy as np
def load(f):
    b = open(f, "rb").read()
    n = struct.unpack_from("<I", b, 12)[0]
    return json.loads(b[20:20 + n]), b[20 + n + 8:]
def acc(doc, b, i):
    a = doc["accessors"][i]; v = doc["bufferViews"][a["bufferView"]]
    dt = {5126: np.float32, 5123: np.uint16, 5121: np.uint8}[a["componentType"]]
    k = {"VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
    x = np.frombuffer(b, dt, a["count"] * k, v.get("byteOffset", 0) + a.get("byteOffset", 0)).reshape(-1, k).astype(float)
    return x / np.iinfo(dt).max if a.get("normalized") else x
def quat_mat(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
(s, sb), (r, rb), (k, kb) = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
src_nodes = [n for n in s["nodes"] if "mesh" in n]
for doc in (r, k):                       # mesh nodes and names kept, no camera, no empty
    mn = [n for n in doc["nodes"] if "mesh" in n]
    assert [n.get("name") for n in mn] == [n.get("name") for n in src_nodes], [n.get("name") for n in mn]
    assert all(n.get("skin") == 0 for n in mn) and len(doc["skins"]) == 1
    assert [doc["meshes"][n["mesh"]].get("name") for n in mn] == [s["meshes"][n["mesh"]].get("name") for n in src_nodes]
    assert "cameras" not in doc and not any(n.get("name") in ("Camera", "Empty") for n in doc["nodes"])
sm = s["meshes"][0]; sp = sm["primitives"][0]
names = sm["extras"]["targetNames"]
P0 = acc(s, sb, sp["attributes"]["POSITION"]); N0 = acc(s, sb, sp["attributes"]["NORMAL"])
C0 = acc(s, sb, sp["attributes"]["COLOR_0"])
worst = {"pos": 0.0, "nrm": 0.0}
for ni, node in enumerate(src_nodes):
    A = np.diag(node.get("scale", [1, 1, 1])) if "scale" in node else np.eye(3)
    A = quat_mat(node.get("rotation", [0, 0, 0, 1])) @ A
    t = np.array(node.get("translation", [0, 0, 0]))
    rn = [n for n in r["nodes"] if "mesh" in n][ni]
    for doc, b, packed in ((r, rb, False), (k, kb, True)):
        me = doc["meshes"][[n for n in doc["nodes"] if "mesh" in n][ni]["mesh"]]
        assert me["extras"]["targetNames"] == names and me["weights"] == sm["weights"], me.get("extras")
        pr = me["primitives"][0]; at = pr["attributes"]
        assert len(pr["targets"]) == len(sp["targets"]) == 14
        # colours: the paint as COLOR_0 and the Flamingo's as COLOR_1 in the bound file, marked;
        # the Flamingo's as COLOR_0 after pack, no COLOR_1, no marks
        if packed:
            assert "COLOR_1" not in at and "extras" not in pr, (sorted(at), pr.get("extras"))
            assert np.abs(acc(doc, b, at["COLOR_0"]) - C0).max() < 1e-6, "COLOR_0 is not the Flamingo's"
        else:
            assert pr["extras"] == {"anymove_paint": "COLOR_0", "anymove_colors": "COLOR_1"}, pr.get("extras")
            assert np.abs(acc(doc, b, at["COLOR_1"]) - C0).max() < 1e-6, "COLOR_1 is not the Flamingo's"
            paint = acc(doc, b, at["COLOR_0"])
            assert np.abs(paint - C0).max() > 0.1, "COLOR_0 is not the paint"
        # the node and the prep are one similarity Q = c R (A p + t) + u of the base positions;
        # every morph delta must follow its linear part (positions) or its rotation (normals)
        Q = acc(doc, b, at["POSITION"]); X = P0 @ A.T + t
        Xc, Qc = X - X.mean(0), Q - Q.mean(0)
        U, S, Vt = np.linalg.svd(Qc.T @ Xc)
        R = U @ np.diag([1, 1, np.linalg.det(U @ Vt)]) @ Vt
        c = S.sum() / (Xc ** 2).sum()
        size = np.linalg.norm(Q.max(0) - Q.min(0))
        assert np.abs(c * Xc @ R.T - Qc).max() < 1e-5 * size, "base positions are not one similarity away"
        Ninv = np.linalg.inv(A).T
        nl = np.linalg.norm(N0 @ Ninv.T, axis=1)
        for ti, tg in enumerate(pr["targets"]):
            st = sp["targets"][ti]
            dp, dn = acc(s, sb, st["POSITION"]), acc(s, sb, st["NORMAL"])
            assert "min" in doc["accessors"][tg["POSITION"]], "POSITION deltas without min/max"
            e = np.abs(c * dp @ A.T @ R.T - acc(doc, b, tg["POSITION"])).max() / size
            worst["pos"] = max(worst["pos"], e)
            e = np.abs((dn @ Ninv.T / nl[:, None]) @ R.T - acc(doc, b, tg["NORMAL"])).max()
            worst["nrm"] = max(worst["nrm"], e)
        moved = max(np.abs(acc(s, sb, st["POSITION"])).max() for st in sp["targets"])
        assert moved > 0.01, "the Flamingo's targets do not move"
assert worst["pos"] < 1e-6 and worst["nrm"] < 1e-5, worst
print("2 mesh nodes, 14 targets each, colours kept; worst delta error", worst)
PY
); then am_pass "flamingo_nodes_morphs_colours ($out)"; else am_fail flamingo_nodes_morphs_colours "$out"; fi

# without paint the Flamingo's colours stay COLOR_0 and pack keeps them; a character bound before
# the marks (no extras, no COLOR_1) loses its COLOR_0 (the paint) in pack, as it used to
echo '{"prep": {"length_m": 1.2, "rotz_deg": 90, "axis": "y"}}' > "$TMP/fl_nopaint.json"
expect flamingo_bind_no_paint 0 '"paint": false' -- "$AM_BIN" bind "$TMP/fl2.glb" --rig "$TMP/flrig.json" --creature "$TMP/fl_nopaint.json" -o "$TMP/fl_plain.glb" -q
expect flamingo_pack_no_paint 0 '' -- "$AM_BIN" pack "$TMP/sway.json" --rig "$TMP/flrig.json" --mesh "$TMP/fl_plain.glb" --names Sway -o "$TMP/flpack2/flamingo.glb" -q
$PY "$T/gltf_pieces.py" unmark "$TMP/fl_rigged.glb" "$TMP/fl_old.glb" || am_fail flamingo_old_make "gltf_pieces.py failed"
expect flamingo_pack_old 0 '' -- "$AM_BIN" pack "$TMP/sway.json" --rig "$TMP/flrig.json" --mesh "$TMP/fl_old.glb" --names Sway -o "$TMP/flpack3/flamingo.glb" -q
validator "$TMP/flpack2/flamingo.glb" flamingo_pack_no_paint_validator
validator "$TMP/flpack3/flamingo.glb" flamingo_pack_old_validator
if out=$($PY - "$TMP/fl_plain.glb" "$TMP/flpack2/flamingo.glb" "$TMP/flpack3/flamingo.glb" <<'PY' 2>&1
import json, struct, sys
def prims(f):
    b = open(f, 'rb').read()
    j = json.loads(b[20:20 + struct.unpack_from('<I', b, 12)[0]])
    return [p for m in j['meshes'] for p in m['primitives']]
plain, kept, old = (prims(f) for f in sys.argv[1:4])
assert all(p['extras'] == {'anymove_colors': 'COLOR_0'} and 'COLOR_1' not in p['attributes'] for p in plain), plain[0]
assert all(p['attributes']['COLOR_0'] == q['attributes']['COLOR_0'] and 'extras' not in q for p, q in zip(plain, kept)), kept[0]
assert all('COLOR_0' not in p['attributes'] for p in old), old[0]
PY
); then am_pass pack_colours_without_paint_and_unmarked; else am_fail pack_colours_without_paint_and_unmarked "$out"; fi

# ---- two Quaternius models from their own rigs: the Husky in one mesh node per primitive ----
$PY "$T/gltf_pieces.py" split "$Q/Husky.glb" "$TMP/husky5.glb" || am_fail husky_split "gltf_pieces.py failed"
expect husky_rig 0 '' -- "$AM_BIN" convert "$TMP/husky5.glb" --clip Walk -o "$TMP/hurig" -q
expect frog_rig 0 '' -- "$AM_BIN" convert "$Q/Frog.glb" --clip Frog_Jump -o "$TMP/frrig" -q
expect husky_bind 0 '"method": "bone heat"' -- "$AM_BIN" bind "$TMP/husky5.glb" --rig "$TMP/hurig/rig.json" -o "$TMP/husky_rigged.glb" -q
expect frog_bind 0 '"method": "bone heat"' -- "$AM_BIN" bind "$Q/Frog.glb" --rig "$TMP/frrig/rig.json" -o "$TMP/frog_rigged.glb" -q
validator "$TMP/husky_rigged.glb" husky_bind_validator
validator "$TMP/frog_rigged.glb" frog_bind_validator
expect husky_shape 0 '' -- "$AM_BIN" shape "$TMP/hurig/motion.json" --rig "$TMP/hurig/rig.json" --loop -o "$TMP/huclips/Walk.json" -q
expect frog_shape 0 '' -- "$AM_BIN" shape "$TMP/frrig/motion.json" --rig "$TMP/frrig/rig.json" --range 0:20 -o "$TMP/frclips/Jump.json" -q
expect husky_pack 0 'wrote .*husky.glb: 1 clip' -- "$AM_BIN" pack "$TMP/huclips/Walk.json" --rig "$TMP/hurig/rig.json" --mesh "$TMP/husky_rigged.glb" -o "$TMP/hupack/husky.glb"
expect frog_pack 0 'wrote .*frog.glb: 1 clip' -- "$AM_BIN" pack "$TMP/frclips/Jump.json" --rig "$TMP/frrig/rig.json" --mesh "$TMP/frog_rigged.glb" -o "$TMP/frpack/frog.glb"
validator "$TMP/hupack/husky.glb" husky_pack_validator
validator "$TMP/frpack/frog.glb" frog_pack_validator
if out=$($PY - "$TMP/husky5.glb" "$TMP/husky_rigged.glb" "$TMP/hupack/husky.glb" "$Q/Frog.glb" "$TMP/frog_rigged.glb" "$TMP/frpack/frog.glb" <<'PY' 2>&1
import json, struct, sys
def load(f):
    b = open(f, "rb").read()
    return json.loads(b[20:20 + struct.unpack_from("<I", b, 12)[0]])
def pieces(doc):
    return [(n.get("name"), doc["meshes"][n["mesh"]].get("name"), [p.get("material") for p in doc["meshes"][n["mesh"]]["primitives"]])
            for n in doc["nodes"] if "mesh" in n]
for src, *outs in (sys.argv[1:4], sys.argv[4:7]):
    s = load(src)
    want = pieces(s)
    for o in outs:
        d = load(o)
        assert pieces(d) == want, (o, pieces(d), want)
        assert d["materials"] == s["materials"], o
        assert all(n.get("skin") == 0 for n in d["nodes"] if "mesh" in n)
    print(len(want), "mesh nodes", end="; ")
PY
); then am_pass "quaternius_pieces_kept ($out)"; else am_fail quaternius_pieces_kept "$out"; fi

# ---- three.js and Blender: mesh nodes, morph targets, colours, clip names, the clips played ----
if out=$(node "$T/three_meshes.mjs" "$TMP/flpack/flamingo.glb" 2>&1) &&
   printf '%s' "$out" | $PY -c "
import json, sys
j = json.load(sys.stdin)
names = ['target_%d' % i for i in range(14)]
assert [m['node'] for m in j['meshes']] == ['Object_0', 'Object_0_twin'], j
assert all(m['morphs'] == names and m['colors'] == 1626 and m['vertex_colors'] for m in j['meshes']), j
assert j['animations'] == ['Sway'], j"; then am_pass three_flamingo_meshes
else am_fail three_flamingo_meshes "$out"; fi
if out=$(node "$T/three_meshes.mjs" "$TMP/hupack/husky.glb" 2>&1) &&
   printf '%s' "$out" | $PY -c "
import json, sys
j = json.load(sys.stdin)
assert [m['node'] for m in j['meshes']] == ['Cube_%d' % i for i in range(5)], j
assert j['animations'] == ['Walk'], j"; then am_pass three_husky_meshes
else am_fail three_husky_meshes "$out"; fi
"$AM_BIN" fk "$TMP/flrig.json" --motion "$TMP/sway.json" > "$TMP/sway.fk.json" 2>/dev/null
"$AM_BIN" fk "$TMP/hurig/rig.json" --motion "$TMP/huclips/Walk.json" > "$TMP/walk.fk.json" 2>/dev/null
"$AM_BIN" fk "$TMP/frrig/rig.json" --motion "$TMP/frclips/Jump.json" > "$TMP/jump.fk.json" 2>/dev/null
for c in "flpack/flamingo.glb flrig.json sway.fk.json Sway" "hupack/husky.glb hurig/rig.json walk.fk.json Walk" \
         "frpack/frog.glb frrig/rig.json jump.fk.json Jump"; do
  set -- $c
  if out=$(node "$AM_SOURCE/scripts/three_check.mjs" "$TMP/$1" "$TMP/$2" "$TMP/$3" 30 "$4" 2>&1); then
    am_pass "three_plays_$4"
  elif [ "$4" = Jump ] && printf '%s' "$out" | $PY -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if j['clip']=='Jump' and j['max_error_m']<1e-4 and not j['missing_bones'] else 1)"; then
    am_pass "three_plays_$4 (the joints; a jump is no loop)"
  else am_fail "three_plays_$4" "$out"; fi
  if out=$(blender -b --factory-startup --python-exit-code 1 -P "$AM_SOURCE/scripts/blender_check.py" -- \
           "$TMP/$1" "$TMP/$2" "$TMP/$3" 30 "$4" 2>&1 | grep -E '^\{|Error|error' | tail -n 3) &&
     printf '%s' "$out" | grep -q '"ok": true'; then am_pass "blender_plays_$4"
  else am_fail "blender_plays_$4" "$out"; fi
done
if out=$(blender -b --factory-startup -P "$T/blender_meshes.py" -- "$TMP/flpack/flamingo.glb" 2>&1 | grep '^{') &&
   printf '%s' "$out" | $PY -c "
import json, sys
j = json.load(sys.stdin)
names = ['target_%d' % i for i in range(14)]
assert [m['name'] for m in j['meshes']] == ['Object_0', 'Object_0_twin'], j
assert all(m['armature'] and m['shape_keys'] == names and len(m['colors']) == 1 for m in j['meshes']), j
assert [a for a in j['actions'] if a.startswith('Sway')], j"; then am_pass blender_flamingo_meshes
else am_fail blender_flamingo_meshes "$out"; fi
am_done
