"""Write joints.npz (joints [T,J,3] f8, names [J] <U, fps) from a motion.json, without numpy.
usage: ik_npz.py MOTION.json OUT.npz [nan|empty]  (test helper for tests/cli/test_ik.sh)"""
import json, struct, sys, zipfile

def npy(descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % n for n in shape) if len(shape) != 1 else "%d," % shape[0])
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload

m = json.load(open(sys.argv[1]))
joints, names = m["joints"], m["joint_names"]
mode = sys.argv[3] if len(sys.argv) > 3 else ""
if mode == "nan":
    joints[1][2][0] = float("nan")
if mode == "empty":
    joints = []
T, J = len(joints), len(names)
flat = [c for fr in joints for p in fr for c in p]
width = max(len(n) for n in names)
with zipfile.ZipFile(sys.argv[2], "w") as z:
    z.writestr("joints.npy", npy("<f8", (T, J, 3), struct.pack("<%dd" % len(flat), *flat)))
    z.writestr("names.npy", npy("<U%d" % width, (J,),
               b"".join(n.ljust(width, "\0").encode("utf-32-le") for n in names)))
    z.writestr("fps.npy", npy("<f8", (), struct.pack("<d", m.get("fps", 30))))
