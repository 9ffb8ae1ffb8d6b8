#!/usr/bin/env python3
"""An OBJ's look through `anymove bind` (tests/cli/test_bind_obj.sh).

make SRC.obj DIR: DIR/model.obj (SRC's positions and faces with one vn per face, so that every
    position has several corners; a planar vt per corner, the odd faces' squeezed, which splits
    the UVs too; every 7th face without vt and every 11th without vn; faces before any usemtl,
    then usemtl fur, eyes, fur again: grouped into one primitive each), DIR/model.mtl (fur: Kd, Ns, map_Kd skin.png with options,
    map_d; eyes: Kd, d, Ke) and DIR/skin.png (an 8x4 RGBA PNG written with zlib).
glb DIR/model.obj OUT.glb PREP.json: OUT.glb's mesh against the OBJ: per primitive (one per
    material, the default first, faces in file order), every corner's POSITION is the OBJ's
    position through the prep, TEXCOORD_0 is (u, 1 - v) ((0, 1) without vt), NORMAL is unit and,
    where the corner has a vn, that vn turned by the prep's rotation; baseColorFactor is Kd with
    d; the image is skin.png byte for byte, image/png; vertices at one position (the copies of a
    split) have identical JOINTS_0 and WEIGHTS_0, and there are such copies.
obj DIR/model.obj OUT.obj PREP.json: the prepared OBJ's corners against the OBJ's: vt equal,
    vn the turned ones, positions through the prep; usemtl groups and mtllib kept.
"""
import json
import struct
import sys
import zlib

import numpy as np

SQUEEZE, NO_VT, NO_VN, PLAIN = 2, 7, 11, 100


def png(path, w, h):
    rows = b"".join(b"\x00" + bytes(v for x in range(w) for v in ((x * 37) % 256, (y * 53) % 256, ((x + y) * 11) % 256, 255))
                    for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def make(src, out):
    V, F = [], []
    for line in open(src):
        p = line.split()
        if p and p[0] == "v":
            V.append([float(x) for x in p[1:4]])
        elif p and p[0] == "f":
            F.append([int(x.split("/")[0]) - 1 for x in p[1:]])
    V = np.array(V)
    lo, hi = V.min(0), V.max(0)
    png(out + "/skin.png", 8, 4)
    with open(out + "/model.obj", "w") as f:
        f.write("# made by obj_look.py\nmtllib model.mtl\no wolf\ns off\n")
        for v in V:
            f.write("v %.6f %.6f %.6f\n" % tuple(v))
        body = []
        nvt = nvn = 0
        for i, t in enumerate(F):
            a, b, c = V[t[0]], V[t[1]], V[t[2]]
            n = np.cross(b - a, c - a)
            n = n / (np.linalg.norm(n) + 1e-30)
            f.write("vn %.6f %.6f %.6f\n" % tuple(n))
            nvn += 1
            corners = []
            for k in t:
                u = (V[k][0] - lo[0]) / (hi[0] - lo[0])
                w = (V[k][1] - lo[1]) / (hi[1] - lo[1])
                if i % SQUEEZE:
                    u *= 0.5
                f.write("vt %.6f %.6f\n" % (u, w))
                nvt += 1
                vt = "" if i % NO_VT == 0 else str(nvt)
                vn = "" if i % NO_VN == 0 else str(nvn)
                corners.append("%d/%s/%s" % (k + 1, vt, vn) if vn else ("%d/%s" % (k + 1, vt) if vt else "%d" % (k + 1)))
            mat = None if i < PLAIN else ("eyes" if len(F) // 3 <= i < 2 * len(F) // 3 else "fur")
            body.append((mat, "f " + " ".join(corners) + "\n"))
        cur = None
        for mat, line in body:
            if mat != cur:
                f.write("usemtl %s\n" % mat)
                cur = mat
            f.write(line)
    open(out + "/model.mtl", "w").write(
        "# made by obj_look.py\nnewmtl eyes\nKd 0.1 0.2 0.3\nd 0.5\nKe 0.2 0.1 0\nillum 2\n\n"
        "newmtl fur\nNs 250\nKa 1 1 1\nKd 0.9 0.5 0.25\nmap_Kd -s 1 1 1 skin.png\nmap_d skin.png\n")


def read_obj(path):
    """positions, uvs, normals (file values) and faces [(material, [(p, t, n) 0-based or -1])]."""
    P, T, N, faces, mat, libs = [], [], [], [], None, []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            P.append([float(x) for x in p[1:4]])
        elif p[0] == "vt":
            T.append([float(x) for x in p[1:3]])
        elif p[0] == "vn":
            N.append([float(x) for x in p[1:4]])
        elif p[0] == "usemtl":
            mat = p[1]
        elif p[0] == "mtllib":
            libs.append(p[1])
        elif p[0] == "f":
            cs = []
            for c in p[1:]:
                s = (c.split("/") + ["", ""])[:3]
                cs.append((int(s[0]) - 1, int(s[1]) - 1 if s[1] else -1, int(s[2]) - 1 if s[2] else -1))
            faces.append((mat, cs))
    return np.array(P), np.array(T), np.array(N), faces, libs


def to_world(a):   # OBJ / glTF (Y up, front +Z) -> SPEC 1 (Z up, front -Y)
    return np.stack([a[..., 0], -a[..., 2], a[..., 1]], -1)


def from_world(a):
    return np.stack([a[..., 0], a[..., 2], -a[..., 1]], -1)


def prep(path):
    M = np.array(json.load(open(path))["prep"]["matrix"])
    s = np.linalg.norm(M[:3, 0])
    return M, M[:3, :3] / s


def grouped(faces):
    """faces in the order the model groups them: the default first, then materials by first use."""
    order = [None] + [m for m in dict.fromkeys(f[0] for f in faces) if m is not None]
    return order, {m: [f[1] for f in faces if f[0] == m] for m in order}


def read_glb(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<I", b, 12)[0]
    j = json.loads(b[20:20 + n])
    return j, b[20 + n + 8:]


def acc(j, binc, i):
    a = j["accessors"][i]
    dt = {5126: np.float32, 5125: np.uint32, 5123: np.uint16, 5121: np.uint8}[a["componentType"]]
    k = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
    v = j["bufferViews"][a["bufferView"]]
    assert v.get("byteStride", k * np.dtype(dt).itemsize) == k * np.dtype(dt).itemsize
    o = v.get("byteOffset", 0) + a.get("byteOffset", 0)
    return np.frombuffer(binc, dt, a["count"] * k, o).reshape(a["count"], k)


def check_glb(obj, glb, prep_json):
    P, T, N, faces, _ = read_obj(obj)
    M, R = prep(prep_json)
    j, binc = read_glb(glb)
    prims = j["meshes"][0]["primitives"]
    order, by = grouped(faces)
    order = [m for m in order if by[m]]
    names = [None if "material" not in p else j["materials"][p["material"]]["name"] for p in prims]
    assert names == order, "primitives %s, want %s" % (names, order)
    at = prims[0]["attributes"]
    pos, uv, nrm = acc(j, binc, at["POSITION"]), acc(j, binc, at["TEXCOORD_0"]), acc(j, binc, at["NORMAL"])
    jts, wts = acc(j, binc, at["JOINTS_0"]), acc(j, binc, at["WEIGHTS_0"])
    assert all(p["attributes"] == at for p in prims), "primitives do not share the vertices"
    ln = np.linalg.norm(nrm, axis=1)
    assert np.abs(ln - 1).max() < 1e-5, "NORMAL not unit: %g" % np.abs(ln - 1).max()
    want_p = from_world(to_world(P) @ M[:3, :3].T + M[:3, 3])
    wn = to_world(N / np.linalg.norm(N, axis=1, keepdims=True)) @ R.T
    want_n = from_world(wn / np.linalg.norm(wn, axis=1, keepdims=True))
    worst = {"pos": 0.0, "uv": 0.0, "n": 0.0}
    corners = 0
    for prim, m in zip(prims, order):
        idx = acc(j, binc, prim["indices"]).reshape(-1, 3)
        assert len(idx) == len(by[m]), "material %s: %d triangles, want %d" % (m, len(idx), len(by[m]))
        for tri, cs in zip(idx, by[m]):
            for v, (p, t, n) in zip(tri, cs):
                corners += 1
                worst["pos"] = max(worst["pos"], np.abs(pos[v] - want_p[p]).max())
                u = (T[t][0], 1 - T[t][1]) if t >= 0 else (0.0, 1.0)
                worst["uv"] = max(worst["uv"], np.abs(uv[v] - u).max())
                if n >= 0:
                    worst["n"] = max(worst["n"], np.abs(nrm[v] - want_n[n]).max())
    assert worst["pos"] < 1e-5 and worst["uv"] < 1e-6 and worst["n"] < 1e-5, worst
    # the vertices: one per distinct corner (no copy of a corner), copies of a position agree
    distinct = {c for f in faces for c in f[1]}
    used = {c[0] for c in distinct}
    assert len(pos) == len(distinct) + (len(P) - len(used)), "%d vertices for %d distinct corners" % (len(pos), len(distinct))
    groups = {}
    for i, p in enumerate(map(bytes, pos)):
        groups.setdefault(p, []).append(i)
    copies = [g for g in groups.values() if len(g) > 1]
    assert len(copies) > len(P) // 2, "only %d positions split" % len(copies)
    for g in copies:
        for i in g[1:]:
            assert (jts[i] == jts[g[0]]).all() and (wts[i] == wts[g[0]]).all(), "copies %d and %d differ" % (g[0], i)
    # materials and the embedded image
    mats = {m["name"]: m for m in j["materials"]}
    fur, eyes = mats["fur"]["pbrMetallicRoughness"], mats["eyes"]["pbrMetallicRoughness"]
    assert fur["baseColorFactor"] == [0.9, 0.5, 0.25, 1.0] and eyes["baseColorFactor"] == [0.1, 0.2, 0.3, 0.5]
    assert abs(fur["roughnessFactor"] - 0.5) < 1e-12 and fur["metallicFactor"] == 0
    assert mats["eyes"]["alphaMode"] == "BLEND" and mats["eyes"]["emissiveFactor"] == [0.2, 0.1, 0.0]
    tex = j["textures"][fur["baseColorTexture"]["index"]]
    im = j["images"][tex["source"]]
    assert "sampler" in tex and im["mimeType"] == "image/png" and "uri" not in im
    bv = j["bufferViews"][im["bufferView"]]
    data = binc[bv.get("byteOffset", 0):bv.get("byteOffset", 0) + bv["byteLength"]]
    want = open(obj.rsplit("/", 1)[0] + "/skin.png", "rb").read()
    assert data == want, "the image is not skin.png byte for byte"
    print("%d corners, %d vertices, %d positions split; worst %s" % (corners, len(pos), len(copies), worst))


def check_obj(obj, out, prep_json):
    P, T, N, faces, _ = read_obj(obj)
    P2, T2, N2, faces2, libs = read_obj(out)
    M, R = prep(prep_json)
    assert libs == [out.rsplit("/", 1)[1][:-4] + ".mtl"], libs
    order, by = grouped(faces)
    order2, by2 = grouped(faces2)
    assert [m for m in order if by[m]] == [m for m in order2 if by2[m]], (order, order2)
    wp = from_world(to_world(P) @ M[:3, :3].T + M[:3, 3])
    wn = to_world(N / np.linalg.norm(N, axis=1, keepdims=True)) @ R.T
    wn = from_world(wn / np.linalg.norm(wn, axis=1, keepdims=True))
    worst = {"pos": 0.0, "vt": 0.0, "vn": 0.0}
    for m in order:
        assert len(by[m]) == len(by2[m])
        for cs, cs2 in zip(by[m], by2[m]):
            for (p, t, n), (p2, t2, n2) in zip(cs, cs2):
                assert p2 == p and t2 >= 0 and n2 >= 0, "corner %s written as %s" % ((p, t, n), (p2, t2, n2))
                worst["pos"] = max(worst["pos"], np.abs(P2[p2] - wp[p]).max())
                worst["vt"] = max(worst["vt"], np.abs(T2[t2] - (T[t] if t >= 0 else (0, 0))).max())
                assert abs(np.linalg.norm(N2[n2]) - 1) < 1e-6
                if n >= 0:
                    worst["vn"] = max(worst["vn"], np.abs(N2[n2] - wn[n]).max())
    assert worst["pos"] < 1e-6 and worst["vt"] < 1e-6 and worst["vn"] < 1e-6, worst
    print("round trip worst %s" % worst)


def quat_matrix(q):   # glTF (x, y, z, w) -> 3x3
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def check_gltf_obj(glb, out, mtl, prep_json):
    """A glTF model's prepared OBJ (one mesh node under identity parents, as the Knight): every
    glTF vertex a v/vt/vn, positions and normals through the node and the prep, vt = (u, 1 - v),
    one usemtl block per primitive with its triangles, and the .mtl's Kd / d / Pr / Pm the
    materials' factors."""
    j, binc = read_glb(glb)
    node = [n for n in j["nodes"] if "mesh" in n]
    assert len(node) == 1, "the check handles one mesh node"
    node = node[0]
    L = quat_matrix(node.get("rotation", [0, 0, 0, 1])) * np.array(node.get("scale", [1, 1, 1]))
    prims = j["meshes"][node["mesh"]]["primitives"]
    pos = np.concatenate([acc(j, binc, p["attributes"]["POSITION"]) for p in prims]).astype(float)
    nrm = np.concatenate([acc(j, binc, p["attributes"]["NORMAL"]) for p in prims]).astype(float)
    uv = np.concatenate([acc(j, binc, p["attributes"]["TEXCOORD_0"]) for p in prims]).astype(float)
    P2, T2, N2, faces2, libs = read_obj(out)
    M, R = prep(prep_json)
    assert len(P2) == len(T2) == len(N2) == len(pos), (len(P2), len(T2), len(N2), len(pos))
    wp = from_world(to_world(pos @ L.T + node.get("translation", [0, 0, 0])) @ M[:3, :3].T + M[:3, 3])
    wn = to_world(nrm @ L.T)
    wn = from_world(wn / np.linalg.norm(wn, axis=1, keepdims=True) @ R.T)
    worst = {"pos": np.abs(P2 - wp).max(), "vt": np.abs(T2 - np.stack([uv[:, 0], 1 - uv[:, 1]], 1)).max(),
             "vn": np.abs(N2 - wn).max()}
    assert worst["pos"] < 1e-5 and worst["vt"] < 1e-6 and worst["vn"] < 1e-5, worst
    for mat, cs in faces2:
        assert all(p == t == n for p, t, n in cs), "corner %s" % (cs,)
    names = [m.get("name") for m in j["materials"]]
    order = list(dict.fromkeys(f[0] for f in faces2))
    want = [names[p["material"]] for p in prims]
    assert order == want, (order, want)
    counts = [sum(1 for f in faces2 if f[0] == m) for m in order]
    assert counts == [acc(j, binc, p["indices"]).size // 3 for p in prims], counts
    assert libs == [mtl.rsplit("/", 1)[-1]], libs
    got, cur = {}, None
    for line in open(mtl):
        p = line.split()
        if p and p[0] == "newmtl":
            cur = p[1]
            got[cur] = {}
        elif p and cur:
            got[cur][p[0]] = [float(x) for x in p[1:]]
    for m in j["materials"]:
        pbr, g = m["pbrMetallicRoughness"], got[m["name"]]
        base = pbr.get("baseColorFactor", [1, 1, 1, 1])
        assert np.abs(np.array(g["Kd"]) - base[:3]).max() < 1e-8, (m["name"], g)
        assert ("d" in g) == (base[3] < 1)
        assert abs(g["Pr"][0] - pbr.get("roughnessFactor", 1)) < 1e-8 and abs(g["Pm"][0] - pbr.get("metallicFactor", 1)) < 1e-8, g
    print("%d vertices, %d materials, worst %s" % (len(P2), len(got), {k: float("%.2g" % v) for k, v in worst.items()}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3])
    elif cmd == "glb":
        check_glb(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "obj":
        check_obj(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "gltf_obj":
        check_gltf_obj(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit("usage: obj_look.py make|glb|obj ...")
