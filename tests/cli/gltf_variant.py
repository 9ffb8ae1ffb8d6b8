#!/usr/bin/env python3
"""A variant of a skinned glTF character for retargeting closure: the same skeleton and the
same skinned result, with every joint node renamed and its local frame turned (bone roll and
axis convention: each joint's frame is post-multiplied by a rotation R_k of 30-150 degrees
about a random axis). Nodes' rest TRS, the skin's inverse bind matrices and every animation key
are rewritten so that the mesh deforms exactly as before:

    W'_k = W_k R_k,  L'_k = R_parent^-1 L_k R_k,  IBM'_k = R_k^-1 IBM_k.

usage: gltf_variant.py IN.glb OUT.glb [--seed N] [--prefix P]   (numpy; GLB in and out)
"""
import json
import struct
import sys

import numpy as np


def read_glb(path):
    data = open(path, "rb").read()
    magic, version, length = struct.unpack_from("<III", data, 0)
    assert magic == 0x46546C67, "not a GLB"
    off, doc, binc = 12, None, b""
    while off < length:
        clen, ctype = struct.unpack_from("<II", data, off)
        chunk = data[off + 8 : off + 8 + clen]
        if ctype == 0x4E4F534A:
            doc = json.loads(chunk.decode("utf-8"))
        elif ctype == 0x004E4942:
            binc = bytes(chunk)
        off += 8 + clen
    return doc, bytearray(binc)


def write_glb(path, doc, binc):
    js = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    js += b" " * ((4 - len(js) % 4) % 4)
    binc += b"\0" * ((4 - len(binc) % 4) % 4)
    doc_len = 12 + 8 + len(js) + 8 + len(binc)
    out = struct.pack("<III", 0x46546C67, 2, doc_len) + struct.pack("<II", len(js), 0x4E4F534A) + js
    out += struct.pack("<II", len(binc), 0x004E4942) + bytes(binc)
    open(path, "wb").write(out)


COMP = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def read_accessor(doc, binc, i):
    a = doc["accessors"][i]
    assert a["componentType"] == 5126 and "sparse" not in a, "float, dense accessors only"
    bv = doc["bufferViews"][a["bufferView"]]
    n, c = a["count"], COMP[a["type"]]
    stride = bv.get("byteStride", 4 * c)
    base = bv.get("byteOffset", 0) + a.get("byteOffset", 0)
    out = np.zeros((n, c))
    for k in range(n):
        out[k] = struct.unpack_from("<%df" % c, binc, base + k * stride)
    return out


def add_accessor(doc, binc, values, kind):
    values = np.asarray(values, dtype="<f4")
    while len(binc) % 4:
        binc.append(0)
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(binc), "byteLength": values.nbytes})
    binc += values.tobytes()
    acc = {"bufferView": len(doc["bufferViews"]) - 1, "componentType": 5126, "count": len(values), "type": kind}
    if kind in ("VEC3", "VEC4"):
        acc["min"] = values.min(0).tolist()
        acc["max"] = values.max(0).tolist()
    doc["accessors"].append(acc)
    doc["buffers"][0]["byteLength"] = len(binc)
    return len(doc["accessors"]) - 1


def q2m(q):  # glTF (x, y, z, w)
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def m2q(m):
    t = np.trace(m)
    if t > 0:
        s = np.sqrt(t + 1) * 2
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = np.sqrt(1 + m[i, i] - m[j, j] - m[k, k]) * 2
        q = [0.0] * 4
        q[i] = s / 4
        q[j] = (m[j, i] + m[i, j]) / s
        q[k] = (m[k, i] + m[i, k]) / s
        q[3] = (m[k, j] - m[j, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q)


def axis_angle(axis, a):
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(a) * K + (1 - np.cos(a)) * K @ K


def node_local(n):
    if "matrix" in n:
        return np.array(n["matrix"]).reshape(4, 4).T
    M = np.eye(4)
    R = q2m(n.get("rotation", [0, 0, 0, 1]))
    S = np.diag(n.get("scale", [1, 1, 1]))
    M[:3, :3] = R @ S
    M[:3, 3] = n.get("translation", [0, 0, 0])
    return M


def main():
    src, dst = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    prefix = sys.argv[sys.argv.index("--prefix") + 1] if "--prefix" in sys.argv else "v"
    rng = np.random.default_rng(seed)
    doc, binc = read_glb(src)
    nodes = doc["nodes"]
    skin = doc["skins"][0]
    joints = skin["joints"]
    parent = {}
    for i, n in enumerate(nodes):
        for c in n.get("children", []):
            parent[c] = i
    R = {k: np.eye(3) for k in range(len(nodes))}
    for j in joints:
        R[j] = axis_angle(rng.normal(size=3), rng.uniform(np.radians(30), np.radians(150)))
    # rest TRS: L' = Rp^-1 L R (scale kept only when it is uniform)
    for j in joints:
        n = nodes[j]
        L = node_local(n)
        Rp = R[parent[j]] if j in parent else np.eye(3)
        sc = np.linalg.norm(L[:3, :3], axis=0)
        assert np.allclose(sc, sc[0], rtol=1e-4), "non-uniform scale on joint %s" % n.get("name")
        rot = Rp.T @ (L[:3, :3] / sc[0]) @ R[j]
        n.pop("matrix", None)
        n["rotation"] = m2q(rot).tolist()
        n["translation"] = (Rp.T @ L[:3, 3]).tolist()
        if sc[0] != 1:
            n["scale"] = [sc[0]] * 3
    # children of joints that are not joints (end nodes, meshes) keep their world placement
    for i, n in enumerate(nodes):
        p = parent.get(i)
        if i in joints or p is None or p not in joints:
            continue
        L = node_local(n)
        n.pop("matrix", None)
        Rp = R[p]
        sc = np.linalg.norm(L[:3, :3], axis=0)
        n["rotation"] = m2q(Rp.T @ (L[:3, :3] / sc)).tolist()
        n["translation"] = (Rp.T @ L[:3, 3]).tolist()
    # inverse bind matrices: IBM' = R^-1 IBM
    if "inverseBindMatrices" in skin:
        ibm = read_accessor(doc, binc, skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
        for k, j in enumerate(joints):
            M = np.eye(4)
            M[:3, :3] = R[j].T
            ibm[k] = M @ ibm[k]
        skin["inverseBindMatrices"] = add_accessor(doc, binc, ibm.transpose(0, 2, 1).reshape(-1, 16), "MAT4")
    else:
        raise SystemExit("skin without inverseBindMatrices")
    # animation keys of joint nodes
    for an in doc.get("animations", []):
        for ch in an["channels"]:
            j = ch["target"].get("node")
            if j not in joints:
                continue
            smp = an["samplers"][ch["sampler"]]
            assert smp.get("interpolation", "LINEAR") != "CUBICSPLINE", "cubic splines not handled"
            path = ch["target"]["path"]
            Rp = R[parent[j]] if j in parent else np.eye(3)
            vals = read_accessor(doc, binc, smp["output"])
            if path == "rotation":
                vals = np.array([m2q(Rp.T @ q2m(q / np.linalg.norm(q)) @ R[j]) for q in vals])
                # keep the hemisphere from key to key (LINEAR slerps the short way anyway)
                for k in range(1, len(vals)):
                    if vals[k] @ vals[k - 1] < 0:
                        vals[k] = -vals[k]
                smp["output"] = add_accessor(doc, binc, vals, "VEC4")
            elif path == "translation":
                vals = vals @ Rp
                smp["output"] = add_accessor(doc, binc, vals, "VEC3")
    # names
    for k, j in enumerate(joints):
        nodes[j]["name"] = "%s%03d" % (prefix, k)
    doc.setdefault("asset", {})["generator"] = "gltf_variant.py"
    write_glb(dst, doc, binc)


if __name__ == "__main__":
    main()
