"""BVH / glTF I/O and triangulation through the binding against the CLI on the same inputs:
the files the binding writes are the CLI's bytes, the arrays its outputs' numbers."""
import ctypes
import json
import os
import warnings

import numpy as np
import pytest

import anymove
from conftest import SHARED, SOURCE
from test_binding import cli

DAB = os.path.join(SHARED, "data", "bvh", "animated_drawings", "dab.bvh")
CMU = os.path.join(SHARED, "data", "bvh", "cmu", "01_01.bvh")


def test_bvh_read_equals_convert(tmp_path):
    # `anymove convert CLIP.bvh --up z --scale 0.01 -o DIR` writes rig.json + motion.json
    cli("convert", DAB, "--up", "z", "--scale", "0.01", "-o", tmp_path / "cli", "-q")
    rig, mot = anymove.load_bvh(DAB, up="z", scale=0.01)
    rig.save(tmp_path / "rig.json")
    mot.save(tmp_path / "motion.json")
    assert (tmp_path / "rig.json").read_bytes() == (tmp_path / "cli" / "rig.json").read_bytes()
    assert (tmp_path / "motion.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    doc = json.loads((tmp_path / "cli" / "motion.json").read_text())
    assert mot.fps == doc["fps"] and mot.frame_count == len(doc["trans"])
    assert np.array_equal(mot.euler, np.array(doc["euler"]))  # numbers that read back exactly
    assert np.array_equal(mot.joints, np.array(doc["joints"]))
    # the joints of the motion are FK of the rig: the arrays agree with anymove.fk
    assert np.abs(anymove.fk(rig, mot) - mot.joints).max() < 1e-12
    # load_rig / load_motion take a .bvh too; with the rig, the motion binds to it
    r2 = anymove.load_rig(DAB, up="z", scale=0.01)
    assert r2.bone_names == rig.bone_names and np.array_equal(r2.joint_rest, rig.joint_rest)
    m2 = anymove.load_motion(DAB, r2, up="z", scale=0.01)
    assert m2.rig is r2 and np.array_equal(m2.euler, mot.euler)
    m3 = anymove.load_motion(DAB, up="z", scale=0.01)  # without: bound to the file's own rig
    assert m3.rig.bone_names == rig.bone_names and np.array_equal(m3.joints, mot.joints)
    # Y up is the default, as the CLI's
    cli("convert", CMU, "--scale", "0.01", "-o", tmp_path / "cmu", "-q")
    rig, mot = anymove.load_bvh(CMU, scale=0.01)
    mot.save(tmp_path / "cmu.json")
    assert (tmp_path / "cmu.json").read_bytes() == (tmp_path / "cmu" / "motion.json").read_bytes()


def test_save_motion_equals_export(walker, tmp_path):
    rig = anymove.load_rig(f"{walker}/rig.json")
    mot = anymove.load_motion(f"{walker}/walk.json", rig)
    for ext in ("bvh", "glb"):
        cli("export", f"{walker}/walk.json", "--rig", f"{walker}/rig.json", "-o", tmp_path / f"cli.{ext}", "-q")
        anymove.save_motion(rig, mot, tmp_path / f"py.{ext}", **({"names": ["walk"]} if ext == "glb" else {}))
        assert (tmp_path / f"py.{ext}").read_bytes() == (tmp_path / f"cli.{ext}").read_bytes(), ext
    # the .bvh reads back as the same motion: each BVH joint sits at its bone's head
    rig2, mot2 = anymove.load_bvh(tmp_path / "py.bvh")
    J, J2 = anymove.fk(rig, mot), anymove.fk(rig2, mot2)
    heads = [int(rig._c.head_joint[b]) for b in range(rig.bone_count)]
    back_idx = [rig2.joint_names.index(b) for b in rig.bone_names]
    assert np.abs(J2[:, back_idx] - J[:, heads]).max() < 1e-6  # the writer's "%.9g"
    # a .glb with two clips is `export A B --names`
    back = anymove.motion_from_arrays(rig, np.ascontiguousarray(mot.euler[::-1]),
                                      trans=np.ascontiguousarray(mot.trans[::-1]),
                                      root_quat=np.ascontiguousarray(mot.root_quat[::-1]))
    back.save(tmp_path / "back.json")
    cli("export", f"{walker}/walk.json", tmp_path / "back.json", "--rig", f"{walker}/rig.json",
        "--names", "fwd,back", "-o", tmp_path / "two.glb", "-q")
    anymove.save_motion(rig, [mot, back], tmp_path / "two_py.glb", names=["fwd", "back"])
    assert (tmp_path / "two_py.glb").read_bytes() == (tmp_path / "two.glb").read_bytes()
    with pytest.raises(ValueError, match="holds one motion"):
        anymove.save_motion(rig, [mot, back], tmp_path / "two.bvh")
    with pytest.raises(ValueError, match="extension"):
        anymove.save_motion(rig, mot, tmp_path / "x.fbx")
    with pytest.raises(anymove.InputError) as e:
        anymove.save_motion(rig, mot, tmp_path / "nodir" / "x.bvh")
    assert e.value.name == "E_WRITE"


def test_bvh_errors_and_warnings(tmp_path):
    text = open(DAB).read().split("\n")
    bad = tmp_path / "bad.bvh"
    bad.write_text("\n".join(text[:3] + ["  OFFSET 0 zero 0"] + text[4:]))
    with pytest.raises(anymove.InputError) as e:
        anymove.load_bvh(bad)
    assert e.value.file == str(bad) and e.value.line == 4 and e.value.name == "E_SYNTAX"
    r = cli("convert", bad, "-o", tmp_path / "out", check=False)
    assert r.returncode == 2 and str(e.value) in r.stderr
    with pytest.raises(ValueError, match="'y' or 'z'"):
        anymove.load_bvh(DAB, up="x")
    # fewer frame lines than Frames: says is an error; a clip that reads with warnings warns
    frames = next(i for i, l in enumerate(text) if l.lower().startswith("frames:"))
    cut = tmp_path / "cut.bvh"
    cut.write_text("\n".join(text[:frames + 3]) + "\n")
    with pytest.raises(anymove.InputError) as e:
        anymove.load_bvh(cut)
    assert e.value.name == "E_TRUNCATED" and e.value.file == str(cut)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean file warns nothing
        anymove.load_bvh(DAB, up="z", scale=0.01)


@pytest.fixture(scope="module")
def exam4(tmp_path_factory):
    d = tmp_path_factory.mktemp("exam4")
    cli("exam", "--rig", os.path.join(SOURCE, "examples", "creatures", "wolf", "rig.json"), "--cameras", "4",
        "--frames", "40", "--noise", "1", "--outliers", "0.02", "-o", d / "exam", "-q")
    return d


def _same_outputs(a, b):
    for f in ("joints.npz", "joints.trc", "triangulation.npz"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    # summary.json: the same but for the time the call took
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    assert sa.pop("seconds") >= 0 and sb.pop("seconds") >= 0
    assert sa == sb


def test_triangulate_equals_cli(exam4, tmp_path):
    det, cal = exam4 / "exam" / "det.npz", exam4 / "exam" / "calibration.toml"
    cli("triangulate", det, "--cameras", cal, "-o", tmp_path / "cli", "-q")
    tri = anymove.triangulate(det, cal)
    tri.save(tmp_path / "py")
    _same_outputs(tmp_path / "cli", tmp_path / "py")
    with np.load(tmp_path / "cli" / "joints.npz") as z:
        assert np.array_equal(tri.joints, z["joints"], equal_nan=True)
        assert tri.names == list(z["names"]) and tri.fps == float(z["fps"])
    with np.load(tmp_path / "cli" / "triangulation.npz") as z:
        assert np.array_equal(tri.reproj_px, z["reproj_px"], equal_nan=True)
        assert np.array_equal(tri.used, z["used"]) and tri.cameras == list(z["cameras"])
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert tri.joints.shape == (40, tri.joint_count, 3) and tri.joints.dtype == np.float64
    assert tri.camera_count == 4 and tri.triangulated <= tri.points == 40 * tri.joint_count
    assert isinstance(summary, dict) and 0 < tri.mean_px < 50
    assert tri.ransac_dropped > 0  # the outliers were seen
    # options go through as the CLI's flags
    rig = anymove.load_rig(os.path.join(SOURCE, "examples", "creatures", "wolf", "rig.json"))
    cli("triangulate", det, "--cameras", cal, "--no-ransac", "--min-conf", "0", "--refine",
        "--rig", os.path.join(SOURCE, "examples", "creatures", "wolf", "rig.json"), "-o", tmp_path / "cli2", "-q")
    tri2 = anymove.triangulate(det, cal, ransac=False, min_conf=0, refine=True, rig=rig)
    tri2.save(tmp_path / "py2")
    _same_outputs(tmp_path / "cli2", tmp_path / "py2")
    assert not np.array_equal(tri2.joints, tri.joints, equal_nan=True)
    names = tri.names
    cli("triangulate", det, "--cameras", cal, "--threshold", "4", "--edges", f"{names[0]}-{names[1]}",
        "--refine", "-o", tmp_path / "cli3", "-q")
    tri3 = anymove.triangulate(det, cal, threshold=4, refine=True, edges=[(names[0], names[1])])
    tri3.save(tmp_path / "py3")
    _same_outputs(tmp_path / "cli3", tmp_path / "py3")


def test_triangulate_save_pictures_equal_cli(exam4, tmp_path):
    det, cal = exam4 / "exam" / "det.npz", exam4 / "exam" / "calibration.toml"
    rig = os.path.join(SOURCE, "examples", "creatures", "wolf", "rig.json")
    cli("triangulate", det, "--cameras", cal, "--rig", rig, "--report", "--render", "-o", tmp_path / "cli", "-q")
    tri = anymove.triangulate(det, cal, rig=anymove.load_rig(rig))
    tri.save(tmp_path / "py", report=True, render=True)
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "py").iterdir()) and "render_cameras.png" in names
    import re
    for n in names:
        x, y = (tmp_path / "cli" / n).read_bytes(), (tmp_path / "py" / n).read_bytes()
        if n in ("summary.json", "report.html"):  # but for the seconds the call took
            x, y = (re.sub(rb'(seconds"|seconds&quot;): [0-9.e+-]+', rb'\1: _', v) for v in (x, y))
        assert x == y, n


def _det_arrays(det, dtype):
    with np.load(det) as z:
        arrays = {"uv": np.ascontiguousarray(z["uv"], dtype=dtype),
                  "conf": np.ascontiguousarray(z["conf"], dtype=dtype),
                  "cameras": [str(c) for c in z["cameras"]], "names": [str(n) for n in z["names"]],
                  "fps": float(z["fps"])}
        if "time_offset" in z:
            arrays["time_offset"] = z["time_offset"]
    return arrays


def _addr(p):
    import ctypes
    return ctypes.cast(p, ctypes.c_void_p).value


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_triangulate_from_arrays_in_place(exam4, tmp_path, dtype):
    det, cal = exam4 / "exam" / "det.npz", exam4 / "exam" / "calibration.toml"
    arrays = _det_arrays(det, dtype)  # float64: the file's float32 values, widened
    ref = anymove.triangulate(det, cal)
    tri = anymove.triangulate(arrays, cal)
    assert np.array_equal(tri.joints, ref.joints, equal_nan=True)
    assert np.array_equal(tri.reproj_px, ref.reproj_px, equal_nan=True)
    # the library read the caller's buffers, of either type, not copies
    v = tri._det.contents
    assert not v.uv and not v.conf  # no library-owned arrays: the views are all there is
    assert v.uv_view.data == arrays["uv"].ctypes.data and v.conf_view.data == arrays["conf"].ctypes.data
    want = anymove._capi.AM_DTYPE_F32 if dtype == np.float32 else anymove._capi.AM_DTYPE_F64
    assert v.uv_view.dtype == want and v.conf_view.dtype == want
    tri.save(tmp_path / "py")
    cli("triangulate", det, "--cameras", cal, "-o", tmp_path / "cli", "-q")
    _same_outputs(tmp_path / "cli", tmp_path / "py")
    # NaN pixels with a confidence are "not seen", as the loader makes them (arrays unchanged)
    hidden = dict(arrays, uv=arrays["uv"].copy(), conf=arrays["conf"].copy())
    hidden["uv"][0, 3] = np.nan
    conf_before = hidden["conf"].copy()
    t2 = anymove.triangulate(hidden, cal)
    np.savez(tmp_path / "hidden.npz", **{k: np.asarray(x) for k, x in hidden.items()})
    assert np.array_equal(t2.joints, anymove.triangulate(tmp_path / "hidden.npz", cal).joints, equal_nan=True)
    assert np.array_equal(hidden["conf"], conf_before)
    # other layouts are converted once, same result
    tf = anymove.triangulate(dict(arrays, uv=np.asfortranarray(arrays["uv"])), cal)
    assert np.array_equal(tf.joints, ref.joints, equal_nan=True)
    # bad values: am_mdet_validate's statuses, the loader's messages
    with pytest.raises(anymove.InputError, match=r"outside \[0, 1\]") as e:
        anymove.triangulate(dict(arrays, conf=arrays["conf"] * 2 + 0.5), cal)
    assert e.value.name == "E_VALUE"
    inf = arrays["uv"].copy()
    inf[1, 2, 3, 0] = np.inf
    with pytest.raises(anymove.InputError, match=r"uv\[1\]\[2\]\[3\] is infinite"):
        anymove.triangulate(dict(arrays, uv=inf), cal)
    with pytest.raises(anymove.InputError, match="appears twice") as e:
        anymove.triangulate(dict(arrays, names=[arrays["names"][0]] * len(arrays["names"])), cal)
    assert e.value.name == "E_DUPLICATE"
    with pytest.raises(ValueError, match="shape"):
        anymove.triangulate(dict(arrays, uv=arrays["uv"][..., :1]), cal)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_cameras_from_arrays_in_place(tmp_path, dtype, monkeypatch):
    cli("exam", "--rig", f"{WOLF}/rig.json", "--cameras", "3", "--frames", "32", "--offsets", "2",
        "--hide-offsets", "-o", tmp_path / "ex", "-q")
    det, cal = tmp_path / "ex" / "det.npz", tmp_path / "ex" / "calibration.toml"
    cli("solve", det, "--cameras", cal, "--rig", f"{WOLF}/rig.json", "--max-offset", "3", "-o", tmp_path / "cli", "-q")
    arrays = _det_arrays(det, dtype)
    seen = {}
    real = anymove._capi.am_mv_solve

    def spy(d, *rest):
        seen["uv"], seen["conf"] = d.contents.uv_view.data, d.contents.conf_view.data
        return real(d, *rest)
    monkeypatch.setattr(anymove._capi, "am_mv_solve", spy)
    res = anymove.solve(arrays, anymove.load_rig(f"{WOLF}/rig.json"), cameras=cal, max_offset=3)
    assert seen == {"uv": arrays["uv"].ctypes.data, "conf": arrays["conf"].ctypes.data}
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    with pytest.raises(ValueError, match="need cameras"):
        anymove.solve(arrays, f"{WOLF}/rig.json")


def test_triangulate_two_view_and_errors(tmp_path, exam4):
    # a two-view det.npz (SPEC 4.2) needs no calibration: SPEC 3's orthographic cameras
    cli("exam", "--rig", os.path.join(SOURCE, "examples", "creatures", "wolf", "rig.json"), "--frames", "30",
        "-o", tmp_path / "ex2", "-q")
    cli("triangulate", tmp_path / "ex2" / "det.npz", "-o", tmp_path / "cli", "-q")
    tri = anymove.triangulate(tmp_path / "ex2" / "det.npz")
    assert tri.cameras == ["front", "side"]
    tri.save(tmp_path / "py")
    _same_outputs(tmp_path / "cli", tmp_path / "py")
    det, cal = exam4 / "exam" / "det.npz", exam4 / "exam" / "calibration.toml"
    with pytest.raises(ValueError, match="give their calibration"):
        anymove.triangulate(det)
    text = cal.read_text()
    other = tmp_path / "other.toml"
    assert 'name = "cam_0"' in text
    other.write_text(text.replace('name = "cam_0"', 'name = "elsewhere"', 1))
    with pytest.raises(anymove.InputError) as e:  # a camera of the det not in the calibration
        anymove.triangulate(det, other)
    assert e.value.name == "E_NAME" and "cam_0" in str(e.value)
    r = cli("triangulate", det, "--cameras", other, "-o", tmp_path / "bad", check=False)
    assert r.returncode == 2 and str(e.value) in r.stderr and e.value.file
    broken = tmp_path / "broken.toml"
    broken.write_text(text.replace("matrix", "matrix = [[", 1))
    with pytest.raises(anymove.InputError) as e:
        anymove.triangulate(det, broken)
    assert e.value.file == str(broken) and e.value.line > 0
    with pytest.raises(anymove.InputError) as e:
        anymove.triangulate(tmp_path / "absent.npz", cal)
    assert e.value.name == "E_READ"
    seen = []
    anymove.triangulate(det, cal, refine=True, progress=lambda st, f, s: seen.append(st))
    assert seen
    with pytest.raises(anymove.InputError) as e:
        anymove.triangulate(det, cal, refine=True, progress=lambda *a: False)
    assert e.value.name == "E_CANCELLED"


WOLF = os.path.join(SOURCE, "examples", "creatures", "wolf")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_triangulate_two_view_creature_layout_from_arrays(tmp_path, dtype):
    # a creature whose layout is not the wolf's: the exam draws it there, --creature reads it back
    doc = json.loads(open(f"{WOLF}/creature.json").read())
    doc["layout"] = {"W_FRONT": 500, "W_SIDE": 780, "GROUND_V": 600, "M_PER_PX": 0.004}
    cr = tmp_path / "creature.json"
    cr.write_text(json.dumps(doc))
    cli("exam", "--rig", f"{WOLF}/rig.json", "--creature", cr, "--frames", "24", "--noise", "1", "-o", tmp_path / "ex", "-q")
    det = tmp_path / "ex" / "det.npz"
    cli("triangulate", det, "--creature", cr, "-o", tmp_path / "cli", "-q")
    cli("triangulate", det, "-o", tmp_path / "cli_wolf", "-q")
    # a det.npz path, and both array layouts, give the CLI's files byte for byte
    tri = anymove.triangulate(det, creature=cr)
    tri.save(tmp_path / "py")
    _same_outputs(tmp_path / "cli", tmp_path / "py")
    cams = _two_view_arrays(det, dtype, "cameras")
    t2 = anymove.triangulate(cams, creature=cr)
    v = t2._det.contents  # uv (2, T, J, 2) of the cameras front, side: read in place
    assert not v.uv and v.uv_view.data == cams["uv"].ctypes.data and v.conf_view.data == cams["conf"].ctypes.data
    want = anymove._capi.AM_DTYPE_F32 if dtype == np.float32 else anymove._capi.AM_DTYPE_F64
    assert v.uv_view.dtype == want and v.conf_view.dtype == want
    t2.save(tmp_path / "py2")
    _same_outputs(tmp_path / "cli", tmp_path / "py2")
    keys = _two_view_arrays(det, dtype, "keys")
    t3 = anymove.triangulate(keys, creature=cr)  # SPEC 4.2's keys: stacked once, same numbers
    assert t3._det.contents.uv_view.dtype == want
    t3.save(tmp_path / "py3")
    _same_outputs(tmp_path / "cli", tmp_path / "py3")
    assert t3.cameras == ["front", "side"]
    # the layout matters: the wolf's layout is another triangulation
    _same_outputs(tmp_path / "cli_wolf", (anymove.triangulate(keys).save(tmp_path / "py4"), tmp_path / "py4")[1])
    assert not np.array_equal(anymove.triangulate(keys).joints, t3.joints, equal_nan=True)
    # the loader's checks on the keys, before any stacking
    bad = dict(keys, front_conf=keys["front_conf"] * 3)
    with pytest.raises(anymove.InputError, match=r"front_conf\[\d+\]\[\d+\] = .* is outside \[0, 1\]"):
        anymove.triangulate(bad, creature=cr)
    with pytest.raises(ValueError, match="no use"):
        anymove.triangulate(det, tmp_path / "ex" / "none.toml", creature=cr)
    with pytest.raises(anymove.InputError) as e:
        anymove.triangulate(det, creature=tmp_path / "absent.json")
    assert e.value.name == "E_READ"


def _untimed(report):
    """report.txt but for the seconds the call took ("0.248 s")."""
    import re
    text, n = re.subn(r"\b\d+(\.\d+)? s\b", "_ s", report)
    assert n >= 1 and len(text) > 200
    return text


def test_solve_two_view_equals_cli(tmp_path):
    cli("exam", "--rig", f"{WOLF}/rig.json", "--seed", "3", "--frames", "40", "-o", tmp_path / "ex", "-q")
    det = tmp_path / "ex" / "det.npz"
    cli("solve", det, "--rig", f"{WOLF}/rig.json", "--creature", f"{WOLF}/creature.json", "-o", tmp_path / "cli", "-q")
    rig = anymove.load_rig(f"{WOLF}/rig.json")
    res = anymove.solve(det, rig, f"{WOLF}/creature.json")
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    assert _untimed(res.report) == _untimed((tmp_path / "cli" / "report.txt").read_text())
    doc = json.loads((tmp_path / "cli" / "motion.json").read_text())
    assert res.joints.shape == (40, rig.joint_count, 3)
    assert np.array_equal(res.joints, np.array(doc["joints"]))
    assert res.reproj_px["front"] == pytest.approx(doc["reproj_px"]["front"], rel=1e-12)
    assert res.contact.shape == (40, len(res.contact_names)) and res.contact_names
    # options as the CLI's flags
    cli("solve", det, "--rig", f"{WOLF}/rig.json", "--no-contacts", "--no-swap-repair", "--iterations", "1",
        "-o", tmp_path / "cli2", "-q")
    res2 = anymove.solve(det, f"{WOLF}/rig.json", contacts=False, swap_repair=False, iterations=1)
    res2.motion.save(tmp_path / "py2.json")
    assert (tmp_path / "py2.json").read_bytes() == (tmp_path / "cli2" / "motion.json").read_bytes()
    assert not np.array_equal(res2.joints, res.joints)


def _two_view_arrays(det, dtype, layout):
    """A two-view det.npz as arrays: SPEC 4.2's keys, or uv/conf of the cameras front, side."""
    with np.load(det) as z:
        names, fps = [str(n) for n in z["names"]], float(z["fps"])
        if layout == "keys":
            arrays = {k: np.ascontiguousarray(z[k], dtype=dtype)
                      for k in ("front_uv", "side_uv", "front_conf", "side_conf")}
        else:
            arrays = {"uv": np.ascontiguousarray(np.stack([z["front_uv"], z["side_uv"]]), dtype=dtype),
                      "conf": np.ascontiguousarray(np.stack([z["front_conf"], z["side_conf"]]), dtype=dtype),
                      "cameras": ["front", "side"]}
    return dict(arrays, names=names, fps=fps)


@pytest.fixture(scope="module")
def exam2(tmp_path_factory):
    d = tmp_path_factory.mktemp("exam2")
    cli("exam", "--rig", f"{WOLF}/rig.json", "--seed", "3", "--frames", "40", "-o", d / "ex", "-q")
    cli("solve", d / "ex" / "det.npz", "--rig", f"{WOLF}/rig.json", "--creature", f"{WOLF}/creature.json",
        "-o", d / "cli", "-q")
    return d


@pytest.mark.parametrize("layout", ["keys", "cameras"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_two_view_from_arrays_in_place(exam2, tmp_path, dtype, layout, monkeypatch):
    arrays = _two_view_arrays(exam2 / "ex" / "det.npz", dtype, layout)
    seen = {}
    real = anymove._capi.am_capture_solve

    def spy(d, *rest):
        v = ctypes.cast(d, ctypes.POINTER(anymove._capi.am_det)).contents
        assert not v.front_uv and not v.side_uv and not v.front_conf and not v.side_conf
        seen["uv"] = [v.uv_view[i].data for i in (0, 1)]
        seen["conf"] = [v.conf_view[i].data for i in (0, 1)]
        seen["dtype"] = {v.uv_view[i].dtype for i in (0, 1)} | {v.conf_view[i].dtype for i in (0, 1)}
        return real(d, *rest)
    monkeypatch.setattr(anymove._capi, "am_capture_solve", spy)
    res = anymove.solve(arrays, anymove.load_rig(f"{WOLF}/rig.json"), f"{WOLF}/creature.json")
    # the library read the caller's buffers (either dtype), not copies
    if layout == "keys":
        want_uv = [arrays["front_uv"].ctypes.data, arrays["side_uv"].ctypes.data]
        want_conf = [arrays["front_conf"].ctypes.data, arrays["side_conf"].ctypes.data]
    else:
        want_uv = [arrays["uv"].ctypes.data, arrays["uv"][1].ctypes.data]
        want_conf = [arrays["conf"].ctypes.data, arrays["conf"][1].ctypes.data]
    assert seen["uv"] == want_uv and seen["conf"] == want_conf
    want = anymove._capi.AM_DTYPE_F32 if dtype == np.float32 else anymove._capi.AM_DTYPE_F64
    assert seen["dtype"] == {want}
    # the CLI's outputs on the same det.npz, byte for byte
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (exam2 / "cli" / "motion.json").read_bytes()
    assert _untimed(res.report) == _untimed((exam2 / "cli" / "report.txt").read_text())


def test_solve_two_view_arrays_errors(exam2, tmp_path):
    arrays = _two_view_arrays(exam2 / "ex" / "det.npz", np.float64, "keys")
    rig = anymove.load_rig(f"{WOLF}/rig.json")
    # am_det_validate: the loader's checks and messages (the CLI's on the same det.npz)
    bad = dict(arrays, side_conf=arrays["side_conf"].copy())
    bad["side_conf"][2, 1] = 1.5
    np.savez(tmp_path / "bad.npz", **{k: np.asarray(v, dtype=np.float32) if k != "names" else np.asarray(v)
                                       for k, v in bad.items()})
    with pytest.raises(anymove.InputError) as e:
        anymove.solve(bad, rig)
    r = cli("solve", tmp_path / "bad.npz", "--rig", f"{WOLF}/rig.json", "-o", tmp_path / "o", check=False)
    assert e.value.name == "E_VALUE" and r.returncode == 2
    assert e.value.message == "side_conf[2][1] = 1.5 is outside [0, 1]" and e.value.message in r.stderr
    nan = dict(arrays, front_uv=arrays["front_uv"].copy())
    nan["front_uv"][0, 0, 0] = np.nan
    with pytest.raises(anymove.InputError, match=r"front_uv\[0\]\[0\] = \(nan, .*\) is not finite") as e:
        anymove.solve(nan, rig)
    assert e.value.name == "E_NONFINITE"
    with pytest.raises(anymove.InputError, match="appears twice"):
        anymove.solve(dict(arrays, names=[arrays["names"][0]] * len(arrays["names"])), rig)
    with pytest.raises(anymove.InputError, match="fps"):
        anymove.solve(dict(arrays, fps=0.0), rig)
    with pytest.raises(ValueError, match="to match front_uv"):
        anymove.solve(dict(arrays, side_conf=arrays["side_conf"][:-1]), rig)
    # a NaN pixel where the confidence is 0 is "not seen", as in a file: the same fit
    hidden = dict(arrays, front_uv=arrays["front_uv"].copy(), front_conf=arrays["front_conf"].copy())
    hidden["front_uv"][5, 3] = np.nan
    hidden["front_conf"][5, 3] = 0
    np.savez(tmp_path / "hidden.npz", **{k: np.asarray(v, dtype=np.float32) if k != "names" else np.asarray(v)
                                          for k, v in hidden.items()})
    a, b = anymove.solve(hidden, rig), anymove.solve(tmp_path / "hidden.npz", rig)
    assert np.array_equal(a.joints, b.joints)
    # other cameras than front and side want their calibration
    with pytest.raises(ValueError, match="need cameras"):
        anymove.solve(dict(uv=np.zeros((3, 4, 2, 2)), conf=np.zeros((3, 4, 2)), cameras=["a", "b", "c"],
                           names=["x", "y"]), rig)


def _same_solve_dirs(a, b):
    import re
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for n in names:
        x, y = (a / n).read_bytes(), (b / n).read_bytes()
        if n in ("report.txt", "report.html"):  # the same but for the seconds the solve took
            x, y = (re.sub(rb"\b\d+(\.\d+)? s\b", b"_ s", v) for v in (x, y))
        assert x == y, n
    return names


def test_solve_save_report_and_render_equal_cli(exam2, tmp_path):
    det = exam2 / "ex" / "det.npz"
    cli("solve", det, "--rig", f"{WOLF}/rig.json", "--creature", f"{WOLF}/creature.json", "--report", "--render",
        "-o", tmp_path / "cli", "-q")
    res = anymove.solve(det, anymove.load_rig(f"{WOLF}/rig.json"), f"{WOLF}/creature.json")
    res.save(tmp_path / "py", report=True, render=True)
    names = _same_solve_dirs(tmp_path / "cli", tmp_path / "py")
    assert {"report.html", "render_layout.png", "render_three_quarter.png", "angles.csv"} <= set(names)
    # without pictures: the CLI's plain output set
    res.save(tmp_path / "plain")
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == \
        ["angles.csv", "angles.mot", "animation.glb", "motion.json", "report.txt"]
    # arrays give the same renders (the library reads the det's views)
    ra = anymove.solve(_two_view_arrays(det, np.float64, "keys"), anymove.load_rig(f"{WOLF}/rig.json"),
                       f"{WOLF}/creature.json")
    ra.save(tmp_path / "arr", render=True)
    for n in ("render_layout.png", "render_three_quarter.png", "motion.json"):
        assert (tmp_path / "arr" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n


def test_solve_cameras_save_pictures_equal_cli(tmp_path):
    cli("exam", "--rig", f"{WOLF}/rig.json", "--cameras", "3", "--frames", "24", "-o", tmp_path / "ex", "-q")
    det, cal = tmp_path / "ex" / "det.npz", tmp_path / "ex" / "calibration.toml"
    cli("solve", det, "--cameras", cal, "--rig", f"{WOLF}/rig.json", "--report", "--render", "-o", tmp_path / "cli", "-q")
    res = anymove.solve(det, anymove.load_rig(f"{WOLF}/rig.json"), cameras=cal)
    res.save(tmp_path / "py", report=True, render=True)
    assert "render_cameras.png" in _same_solve_dirs(tmp_path / "cli", tmp_path / "py")


def test_solve_cameras_equals_cli(tmp_path):
    cli("exam", "--rig", f"{WOLF}/rig.json", "--cameras", "3", "--frames", "48", "--offsets", "2",
        "--hide-offsets", "-o", tmp_path / "ex", "-q")
    det, cal = tmp_path / "ex" / "det.npz", tmp_path / "ex" / "calibration.toml"
    cli("solve", det, "--cameras", cal, "--rig", f"{WOLF}/rig.json", "--max-offset", "4", "-o", tmp_path / "cli", "-q")
    rig = anymove.load_rig(f"{WOLF}/rig.json")
    stages = []
    res = anymove.solve(det, rig, cameras=cal, max_offset=4, progress=lambda st, f, s: stages.append(st))
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    assert _untimed(res.report) == _untimed((tmp_path / "cli" / "report.txt").read_text())
    assert sorted(res.reproj_px) == sorted(res.offsets) and len(res.offsets) == 3
    assert all(v < 20 for v in res.reproj_px.values())
    assert "solve: triangulate" in stages
    with pytest.raises(anymove.InputError) as e:
        anymove.solve(det, rig, cameras=cal, progress=lambda *a: False)
    assert e.value.name == "E_CANCELLED"
    with pytest.raises(ValueError, match="need cameras"):
        anymove.solve(det, rig, max_offset=3)
    # a det whose joints the rig lacks: the library's E_NAME naming the det
    other = anymove.load_rig(os.path.join(SOURCE, "examples", "walker", "rig.json"))
    with pytest.raises(anymove.InputError) as e:
        anymove.solve(det, other, cameras=cal)
    r = cli("solve", det, "--cameras", cal, "--rig", os.path.join(SOURCE, "examples", "walker", "rig.json"),
            "-o", tmp_path / "bad", check=False)
    assert e.value.name == "E_NAME" and r.returncode == 2 and str(e.value) in r.stderr


TRACKS = os.path.join(SOURCE, "examples", "tracks", "grison_walk.tracks.npz")


def test_rig_from_tracks_equals_cli(tmp_path):
    args = ("--bones", "6", "--iterations", "4", "--threads", "2")
    cli("rig", TRACKS, *args, "-o", tmp_path / "cli", "-q")
    stages = []
    d = anymove.rig_from_tracks(TRACKS, bones=6, iterations=4, threads=2,
                                progress=lambda st, f, s: stages.append(st))
    d.rig.save(tmp_path / "rig.json")
    d.motion.save(tmp_path / "motion.json")
    for f in ("rig.json", "motion.json"):
        assert (tmp_path / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    # save(): every file `anymove rig` writes, rig.glb and report.json included
    d.save(tmp_path / "py")
    for f in ("rig.json", "skin.npz", "motion.json", "rig.glb"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    _same_report(tmp_path / "py" / "report.json", tmp_path / "cli" / "report.json")
    with np.load(tmp_path / "cli" / "skin.npz") as z:
        assert np.array_equal(d.rest, z["rest"]) and d.rest.dtype == np.float32
        assert np.array_equal(d.bone_index, z["bone_index"]) and np.array_equal(d.weight, z["weight"])
    report = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert d.bone_count == 6 and d.rig.bone_count == 6 and d.point_count == 800
    assert d.xform.shape == (90, 6, 3, 4)
    assert np.allclose(d.weight.sum(axis=1), 1, atol=1e-5) and (d.weight >= 0).all()
    assert "rig: fit bones" in stages
    assert json.dumps(report)  # the CLI's report was written
    # the rig and motion live on without the decomposition
    rig, mot = d.rig, d.motion
    J = anymove.fk(rig, mot)
    del d
    assert np.abs(J - mot.joints).max() < 1e-9
    # arrays in, same result; float32 points used in place
    with np.load(TRACKS) as z:
        arrays = {"points": np.ascontiguousarray(z["points"], dtype=np.float32),
                  "visible": z["visible"], "fps": float(z["fps"])}
    d2 = anymove.rig_from_tracks(arrays, bones=6, iterations=4, threads=2)
    d2.rig.save(tmp_path / "rig2.json")
    assert (tmp_path / "rig2.json").read_bytes() == (tmp_path / "cli" / "rig.json").read_bytes()
    # --scale: of a file, and of arrays (never written into the caller's)
    cli("rig", TRACKS, *args, "--scale", "0.5", "-o", tmp_path / "cli_s", "-q")
    ds = anymove.rig_from_tracks(TRACKS, bones=6, iterations=4, threads=2, scale=0.5)
    ds.rig.save(tmp_path / "rig_s.json")
    assert (tmp_path / "rig_s.json").read_bytes() == (tmp_path / "cli_s" / "rig.json").read_bytes()
    before = arrays["points"].copy()
    da = anymove.rig_from_tracks(arrays, bones=6, iterations=4, threads=2, scale=0.5)
    assert np.array_equal(arrays["points"], before, equal_nan=True)
    da.rig.save(tmp_path / "rig_sa.json")
    assert (tmp_path / "rig_sa.json").read_bytes() == (tmp_path / "cli_s" / "rig.json").read_bytes()
    # options as the CLI's flags
    cli("rig", TRACKS, "--bones", "4", "--iterations", "3", "--threads", "1", "--method", "ssdr", "--rig",
        "articulated", "-o", tmp_path / "cli3", "-q")
    d3 = anymove.rig_from_tracks(TRACKS, bones=4, iterations=3, threads=1, method="ssdr", rig="articulated")
    d3.motion.save(tmp_path / "motion3.json")
    assert (tmp_path / "motion3.json").read_bytes() == (tmp_path / "cli3" / "motion.json").read_bytes()


def _same_report(a, b):
    """Two report.json equal but for the seconds they took."""
    def untimed(d):
        if isinstance(d, dict):
            return {k: untimed(v) for k, v in d.items() if "second" not in k and k != "timings_s"}
        return d
    ra, rb = (json.loads(p.read_text()) for p in (a, b))
    assert untimed(ra) == untimed(rb)
    return ra


def test_rig_from_tracks_save_with_faces_equals_cli(tmp_path):
    # a surface: the tracks' faces go into rig.glb's triangles and report.json's face count
    with np.load(TRACKS) as z:
        pts = np.ascontiguousarray(z["points"][:, :60], dtype=np.float32)
        vis = np.asarray(z["visible"])[:, :60].copy()
        fps = float(z["fps"])
    vis[3:6, 5] = False
    pts[~vis] = np.nan
    faces = np.array([[i, i + 1, i + 2] for i in range(0, 57, 3)], dtype=np.int32)
    np.savez(tmp_path / "t.npz", points=pts, visible=vis, faces=faces, fps=np.array(fps))
    cli("rig", tmp_path / "t.npz", "--bones", "3", "--iterations", "3", "--threads", "1", "-o", tmp_path / "cli", "-q")
    d = anymove.rig_from_tracks(tmp_path / "t.npz", bones=3, iterations=3, threads=1)
    d.save(tmp_path / "py")
    for f in ("rig.json", "skin.npz", "motion.json", "rig.glb"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    rep = _same_report(tmp_path / "py" / "report.json", tmp_path / "cli" / "report.json")
    assert rep  # the report was read back
    da = anymove.rig_from_tracks({"points": pts, "visible": vis, "faces": faces, "fps": fps}, bones=3,
                                 iterations=3, threads=1)
    da.save(tmp_path / "pa")
    for f in ("rig.json", "skin.npz", "motion.json", "rig.glb"):
        assert (tmp_path / "pa" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    _same_report(tmp_path / "pa" / "report.json", tmp_path / "cli" / "report.json")


def test_rig_from_tracks_errors(tmp_path):
    with pytest.raises(ValueError, match="bones must be"):
        anymove.rig_from_tracks(TRACKS, bones=0)
    with pytest.raises(ValueError, match=r"\(T, N, 3\)"):
        anymove.rig_from_tracks({"points": np.zeros((5, 4, 2), np.float32)})
    still = {"points": np.zeros((5, 20, 3), np.float32), "fps": 30.0}
    with pytest.raises(anymove.InputError) as e:  # nothing moves: the library's refusal
        anymove.rig_from_tracks(still, bones=2)
    np.savez(tmp_path / "still.npz", points=still["points"], fps=np.array(30.0))
    r = cli("rig", tmp_path / "still.npz", "--bones", "2", "-o", tmp_path / "out", check=False)
    assert r.returncode == 2 and e.value.message in r.stderr
    with pytest.raises(anymove.InputError) as e:
        anymove.rig_from_tracks(tmp_path / "still.npz", bones=2)
    assert e.value.file == str(tmp_path / "still.npz")
    with pytest.raises(anymove.InputError) as e:
        anymove.rig_from_tracks(TRACKS, bones=6, iterations=4, progress=lambda *a: False)
    assert e.value.name == "E_CANCELLED"


def test_retarget_equals_cli(walker, tmp_path):
    cli("retarget", DAB, "--up", "z", "--scale", "0.01", "--to", f"{walker}/rig.json", "-o", tmp_path / "cli", "-q")
    src_rig, src = anymove.load_bvh(DAB, up="z", scale=0.01)
    target = anymove.load_rig(f"{walker}/rig.json")
    res = anymove.retarget(src_rig, src, target)
    res.motion.save(tmp_path / "motion.json")
    assert (tmp_path / "motion.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    res.save_map(tmp_path / "map.json")
    assert (tmp_path / "map.json").read_bytes() == (tmp_path / "cli" / "map.json").read_bytes()
    doc = json.loads((tmp_path / "cli" / "map.json").read_text())
    assert res.map == doc["bones"] and res.rules == doc.get("rules", {})
    cli_report = json.loads((tmp_path / "cli" / "report.json").read_text())

    def untimed(d):
        return {k: (untimed(v) if isinstance(v, dict) else v) for k, v in d.items() if "seconds" not in k}
    assert untimed(res.report) == untimed(cli_report)
    assert res.joints.shape == (src.frame_count, target.joint_count, 3)
    assert res.motion.rig is target
    # options and a map file, as the CLI's flags
    cli("retarget", DAB, "--up", "z", "--scale", "0.01", "--to", f"{walker}/rig.json", "--pose", "delta",
        "--root", "keep", "--ik", "none", "--map", tmp_path / "map.json", "-o", tmp_path / "cli2", "-q")
    res2 = anymove.retarget(src_rig, src, target, pose="delta", root="keep", ik="none", map=tmp_path / "map.json")
    cli("retarget", DAB, "--up", "z", "--scale", "0.01", "--to", f"{walker}/rig.json", "--align-min", "0",
        "--root-scale", "0.5,2", "--ik", "feet+hands", "-o", tmp_path / "cli4", "-q")
    res4 = anymove.retarget(src_rig, src, target, align_min=0, root_scale=(0.5, 2), ik="feet+hands")
    res4.motion.save(tmp_path / "motion4.json")
    assert (tmp_path / "motion4.json").read_bytes() == (tmp_path / "cli4" / "motion.json").read_bytes()
    res2.motion.save(tmp_path / "motion2.json")
    assert (tmp_path / "motion2.json").read_bytes() == (tmp_path / "cli2" / "motion.json").read_bytes()
    assert not np.array_equal(res2.joints, res.joints)
    # errors: a map naming a bone the source lacks (the library's E_NAME, naming the map file)
    bad = tmp_path / "bad_map.json"
    bad.write_text('{"bones": {"nosuchbone": "hips"}}')
    with pytest.raises(anymove.InputError) as e:
        anymove.retarget(src_rig, src, target, map=bad)
    r = cli("retarget", DAB, "--up", "z", "--scale", "0.01", "--to", f"{walker}/rig.json", "--map", bad,
            "-o", tmp_path / "cli3", check=False)
    assert e.value.name == "E_NAME" and "nosuchbone" in str(e.value) and r.returncode == 2
    assert e.value.message in r.stderr
    with pytest.raises(ValueError, match="not bound"):
        anymove.retarget(target, src, target)


QUAT = os.path.join(SHARED, "data", "gltf", "quaternius")


def test_retarget_rig_json_and_all_clips_equal_cli(walker, tmp_path):
    """rig.json with the character's model path, and --all-clips, as the CLI writes them."""
    fox, husky = os.path.join(SHARED, "data", "gltf", "khronos_fox", "Fox.glb"), f"{QUAT}/Husky.glb"
    cli("retarget", fox, "--scale", "0.01", "--all-clips", "--to", husky, "--source-pose", "2",
        "-o", tmp_path / "cli", "-q")
    src_rig, target = anymove.load_rig(fox, scale=0.01), anymove.load_rig(husky)
    out = anymove.retarget(src_rig, None, target, all_clips=True, source_pose=2)
    assert isinstance(out, anymove.RetargetClips) and len(out.clips) == 3
    out.save(tmp_path / "py")
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "py").iterdir())
    assert sum(n.startswith("motion_") for n in names) == 3
    for n in names:
        if n != "report.json":
            assert (tmp_path / "py" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n

    def untimed(d):
        return {k: (untimed(v) if isinstance(v, dict) else v) for k, v in d.items() if "seconds" not in k}
    cli_report = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert untimed(json.loads((tmp_path / "py" / "report.json").read_text())) == untimed(cli_report)
    assert untimed(out.report) == untimed(cli_report) and list(cli_report["clips"]) == list(out.clips)
    rig_doc = json.loads((tmp_path / "cli" / "rig.json").read_text())
    assert rig_doc["model"] == os.path.realpath(husky)
    # the source pose is the first clip's frame 2 for every clip: without it, other motions
    plain = anymove.retarget(src_rig, None, target, all_clips=True)
    assert list(plain.clips) == list(out.clips)
    assert not np.array_equal(plain.clips["Walk"].joints, out.clips["Walk"].joints)
    # rig.json of a rig.json target has no model, as the CLI's
    cli("retarget", DAB, "--up", "z", "--scale", "0.01", "--to", f"{walker}/rig.json", "-o", tmp_path / "cli2", "-q")
    src2, mot2 = anymove.load_bvh(DAB, up="z", scale=0.01)
    anymove.retarget(src2, mot2, anymove.load_rig(f"{walker}/rig.json")).save(tmp_path / "py2")
    for n in ("rig.json", "motion.json", "animation.glb", "animation.bvh", "map.json"):
        assert (tmp_path / "py2" / n).read_bytes() == (tmp_path / "cli2" / n).read_bytes(), n
    with pytest.raises(ValueError, match="source=None"):
        anymove.retarget(src_rig, mot2, target, all_clips=True)
    with pytest.raises(ValueError, match="glb"):
        anymove.retarget(src2, None, target, all_clips=True)
    # load_rig of a glTF records the model, as `anymove convert X.glb` writes rig.json
    cli("convert", husky, "-o", tmp_path / "conv", "-q")
    anymove.load_rig(husky).save(tmp_path / "husky_rig.json")
    assert (tmp_path / "husky_rig.json").read_bytes() == (tmp_path / "conv" / "rig.json").read_bytes()


def test_retarget_character_mesh_and_poses_equal_cli(walker, tmp_path):
    """animation.glb with the target's character, and --source-pose / --target-pose, as the CLI."""
    fox, husky = f"{QUAT}/Fox.glb", f"{QUAT}/Husky.glb"
    cli("retarget", fox, "--clip", "Walk", "--to", husky, "-o", tmp_path / "cli", "-q")
    src_rig = anymove.load_rig(fox)
    src = anymove.load_motion(fox, src_rig, clip="Walk", fps=None)  # the clip's own rate, as the CLI
    target = anymove.load_rig(husky)
    res = anymove.retarget(src_rig, src, target)
    res.save(tmp_path / "py", clip_name="Walk")
    for f in ("motion.json", "rig.json", "map.json", "animation.glb", "animation.bvh"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f

    def untimed(d):
        return {k: (untimed(v) if isinstance(v, dict) else v) for k, v in d.items() if "seconds" not in k}
    assert untimed(json.loads((tmp_path / "py" / "report.json").read_text())) == \
        untimed(json.loads((tmp_path / "cli" / "report.json").read_text()))
    glb = (tmp_path / "py" / "animation.glb").read_bytes()
    res.save_animation(tmp_path / "shapes.glb", mesh=False, clip_name="Walk")  # --no-mesh
    cli("retarget", fox, "--clip", "Walk", "--to", husky, "--no-mesh", "-o", tmp_path / "cli_nm", "-q")
    assert (tmp_path / "shapes.glb").read_bytes() == (tmp_path / "cli_nm" / "animation.glb").read_bytes()
    assert (tmp_path / "shapes.glb").read_bytes() != glb
    # poses: a frame of the source, a frame of the glTF target's first clip, a motion.json
    cli("retarget", fox, "--clip", "Walk", "--to", husky, "--source-pose", "3", "--target-pose", "2",
        "-o", tmp_path / "cli_p", "-q")
    rp = anymove.retarget(src_rig, src, target, source_pose=3, target_pose=2)
    rp.motion.save(tmp_path / "p.json")
    assert (tmp_path / "p.json").read_bytes() == (tmp_path / "cli_p" / "motion.json").read_bytes()
    assert not np.array_equal(rp.joints, res.joints)
    src.save(tmp_path / "src_pose.json")
    cli("retarget", fox, "--clip", "Walk", "--to", husky, "--source-pose", tmp_path / "src_pose.json",
        "-o", tmp_path / "cli_f", "-q")
    rf = anymove.retarget(src_rig, src, target, source_pose=tmp_path / "src_pose.json")
    rf.motion.save(tmp_path / "f.json")
    assert (tmp_path / "f.json").read_bytes() == (tmp_path / "cli_f" / "motion.json").read_bytes()
    rm = anymove.retarget(src_rig, src, target, source_pose=(src, 0))  # the same pose as a Motion
    assert np.array_equal(rm.motion.euler, rf.motion.euler)
    with pytest.raises(ValueError, match="no clip to take it from"):
        anymove.retarget(src_rig, src, anymove.load_rig(f"{walker}/rig.json"), target_pose=1)
    with pytest.raises(ValueError, match="frames"):
        anymove.retarget(src_rig, src, target, source_pose=10**6)
