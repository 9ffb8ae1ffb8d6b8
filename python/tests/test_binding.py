"""The binding against the CLI on the same inputs, its memory sharing, errors, warnings,
progress, threads and an offline install."""
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import anymove
from conftest import BIN, SHARED, SOURCE


def cli(*args, check=True):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"anymove {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r


def test_fk_equals_cli(walker):
    rig = anymove.load_rig(f"{walker}/rig.json")
    mot = anymove.load_motion(f"{walker}/walk.json", rig)
    J = anymove.fk(rig, mot)
    printed = json.loads(cli("fk", f"{walker}/rig.json", "--motion", f"{walker}/walk.json").stdout)
    assert printed["joint_names"] == rig.joint_names
    assert J.shape == (60, 24, 3) and J.dtype == np.float64
    assert np.array_equal(J, np.array(printed["joints"]))  # the CLI prints round-trip numbers
    rest = json.loads(cli("fk", f"{walker}/rig.json").stdout)
    assert np.array_equal(anymove.fk(rig), np.array(rest["joints"]))
    assert np.allclose(anymove.fk(rig)[0], rig.joint_rest, atol=1e-12)


def test_fk_of_a_gltf_skeleton_equals_cli(fox):
    rig = anymove.load_rig(fox, scale=0.01)
    printed = json.loads(cli("fk", fox, "--scale", "0.01").stdout)
    assert printed["joint_names"] == rig.joint_names
    assert np.array_equal(anymove.fk(rig), np.array(printed["joints"]))


def test_ik_equals_cli_byte_for_byte(walker, tmp_path):
    # anymove.ik is am_ik_run, the closed form: the CLI's --analytic (its default is the fit)
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))
    # the positions as a tracker would give them: another joint order, saved as joints.npz
    order = list(reversed(range(rig.joint_count)))
    names = [rig.joint_names[j] for j in order]
    np.savez(tmp_path / "joints.npz", joints=J[:, order], names=np.array(names), fps=np.array(30.0))
    cli("ik", "--analytic", tmp_path / "joints.npz", "--rig", f"{walker}/rig.json", "-o", tmp_path / "cli", "-q")
    res = anymove.ik(rig, J[:, order], names=names, fps=30.0)
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    report = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert res.report["joints_used"] == report["joints_used"]
    for k in ("mean_cm", "max_cm", "body_size_m"):
        assert res.report["fk_error"][k] == pytest.approx(report["fk_error"][k], rel=1e-12, abs=1e-15)
    assert res.joints.shape == J.shape
    assert np.abs(res.joints - J).max() < 1e-9  # this rig's motion is exactly reachable
    # options go through as the CLI's flags do
    cli("ik", "--analytic", tmp_path / "joints.npz", "--rig", f"{walker}/rig.json", "-o", tmp_path / "cli2", "-q",
        "--no-limits", "--temporal", "0.25", "--twist-weight", "3")
    res2 = anymove.ik(rig, J[:, order], names=names, limits=False, temporal=0.25, twist_weight=3)
    res2.motion.save(tmp_path / "py2.json")
    assert (tmp_path / "py2.json").read_bytes() == (tmp_path / "cli2" / "motion.json").read_bytes()


def test_ik_on_a_converted_gltf_clip_equals_cli(fox, tmp_path):
    cli("convert", fox, "--clip", "Walk", "--scale", "0.01", "-o", tmp_path / "fox", "-q")
    rig = anymove.load_rig(tmp_path / "fox" / "rig.json")
    truth = anymove.load_motion(tmp_path / "fox" / "motion.json")  # file order, with joints
    ref = anymove.load_motion(tmp_path / "fox" / "motion.json", rig)
    cli("ik", "--analytic", tmp_path / "fox" / "motion.json", "--rig", tmp_path / "fox" / "rig.json",
        "--reference", tmp_path / "fox" / "motion.json", "-o", tmp_path / "cli", "-q")
    res = anymove.ik(rig, truth.joints, names=truth.joint_names, fps=truth.fps, reference=ref)
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()


def test_fk_uses_numpy_arrays_in_place(walker):
    rig = anymove.load_rig(f"{walker}/rig.json")
    mot = anymove.load_motion(f"{walker}/walk.json", rig)
    euler = np.array(mot.euler)             # our own C-contiguous float64 arrays
    trans, root_quat = np.array(mot.trans), np.array(mot.root_quat)
    view = anymove.motion_from_arrays(rig, euler, trans=trans, root_quat=root_quat)
    # the motion the library reads points into the caller's buffers: no copy
    addr = lambda p: __import__("ctypes").cast(p, __import__("ctypes").c_void_p).value
    assert addr(view._c.euler) == euler.ctypes.data
    assert addr(view._c.trans) == trans.ctypes.data
    assert addr(view._c.root_quat) == root_quat.ctypes.data
    out = np.empty((mot.frame_count, rig.joint_count, 3))
    J = anymove.fk(rig, euler=euler, trans=trans, root_quat=root_quat, out=out)
    assert J is out and J.ctypes.data == out.ctypes.data
    assert np.array_equal(J, anymove.fk(rig, mot))
    # editing the buffers in place is what the next FK sees (they are shared, not copied)
    trans[:, 2] += 1.0
    moved = anymove.fk(rig, view)
    assert np.allclose(moved[..., 2] - J[..., 2], 1.0, atol=1e-12)
    # arrays read from a motion are views of the library's memory, alive with it
    e = mot.euler
    assert e.ctypes.data == addr(mot._c.euler) and not e.flags.owndata
    del mot
    assert np.isfinite(e).all()
    # other dtypes and layouts are converted once, with the same result
    J32 = anymove.fk(rig, euler=euler.astype(np.float32), trans=trans, root_quat=root_quat)
    assert np.abs(J32 - moved).max() < 1e-5
    Jf = anymove.fk(rig, euler=np.asfortranarray(euler), trans=trans, root_quat=root_quat)
    assert np.array_equal(Jf, moved)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ik_uses_positions_in_place_and_keeps_them(walker, dtype, monkeypatch):
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = np.ascontiguousarray(anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig)), dtype=dtype)
    before = J.copy()
    seen = {}
    real = anymove._capi.am_ik_run

    def spy(job, err):
        j = job._obj
        seen.update(positions=__import__("ctypes").cast(j.positions, __import__("ctypes").c_void_p).value,
                    data=j.points.data, dtype=j.points.dtype)
        return real(job, err)
    monkeypatch.setattr(anymove._capi, "am_ik_run", spy)
    res = anymove.ik(rig, J)  # names None: the rig's order, read in place by the library
    want = anymove._capi.AM_DTYPE_F32 if dtype == np.float32 else anymove._capi.AM_DTYPE_F64
    assert seen == {"positions": None, "data": J.ctypes.data, "dtype": want}
    assert np.array_equal(J, before)  # read, never written
    assert np.abs(res.joints - J).max() < (1e-9 if dtype == np.float64 else 1e-4)
    if dtype == np.float32:
        # the library widens each float32 exactly: the same solve as the float64 of those values
        r64 = anymove.ik(rig, J.astype(np.float64))
        assert np.array_equal(res.motion.euler, r64.motion.euler)
        assert np.array_equal(res.motion.trans, r64.motion.trans)
        assert res.report["fk_error"] == r64.report["fk_error"]


def test_ik_fit_equals_cli_byte_for_byte(walker, tmp_path):
    # method="fit" is am_fit, what `anymove ik` does without --analytic
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))[:24]
    rng = np.random.default_rng(7)
    noisy = J + rng.normal(0, 0.004, J.shape)  # a tracker's noise, a joint missing at times
    order = list(reversed(range(rig.joint_count)))
    names = [rig.joint_names[j] for j in order]
    pos = noisy[:, order]
    pos[5:9, 3] = np.nan
    conf = rng.uniform(0.5, 1.0, pos.shape[:2])
    np.savez(tmp_path / "joints.npz", joints=pos, names=np.array(names), fps=np.array(30.0), conf=conf)
    cli("ik", tmp_path / "joints.npz", "--rig", f"{walker}/rig.json", "-o", tmp_path / "cli", "-q")
    res = anymove.ik(rig, pos, names=names, fps=30.0, method="fit", conf=conf)
    res.motion.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli" / "motion.json").read_bytes()
    report = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert res.report["method"] == report["method"] == "fit"
    assert res.report["fit"] == report["fit"]
    assert res.report["joints_used"] == report["joints_used"]
    for k in ("mean_cm", "max_cm", "body_size_m"):
        assert res.report["fk_error"][k] == pytest.approx(report["fk_error"][k], rel=1e-12, abs=1e-15)
    assert res.report["per_joint_cm"] == pytest.approx(report["per_joint_cm"], rel=1e-12)
    # the fit's options as the CLI's flags
    cli("ik", tmp_path / "joints.npz", "--rig", f"{walker}/rig.json", "-o", tmp_path / "cli2", "-q",
        "--noise", "0.01", "--no-limits", "--twist-weight", "2")
    res2 = anymove.ik(rig, pos, names=names, method="fit", conf=conf, noise=0.01, limits=False, twist_weight=2)
    res2.motion.save(tmp_path / "py2.json")
    assert (tmp_path / "py2.json").read_bytes() == (tmp_path / "cli2" / "motion.json").read_bytes()
    assert json.loads((tmp_path / "cli2" / "report.json").read_text())["fit"] == res2.report["fit"]
    # a fixed smoothness as --smooth X; the default (auto) chose one by cross-validation
    cli("ik", tmp_path / "joints.npz", "--rig", f"{walker}/rig.json", "-o", tmp_path / "cli3", "-q", "--smooth", "2")
    res3 = anymove.ik(rig, pos, names=names, method="fit", conf=conf, smooth=2)
    res3.motion.save(tmp_path / "py3.json")
    assert (tmp_path / "py3.json").read_bytes() == (tmp_path / "cli3" / "motion.json").read_bytes()
    assert res3.report["fit"]["smooth"] == 2 and not res3.report["fit"]["smooth_auto"]
    assert res.report["fit"]["smooth_auto"]
    with pytest.raises(ValueError, match="smooth"):
        anymove.ik(rig, pos, names=names, method="fit", smooth=0)
    assert res2.report["fit"]["noise_m"] == 0.01 and not res2.report["fit"]["noise_estimated"]
    assert not np.array_equal(res2.joints, res.joints)
    with pytest.raises(ValueError, match="the fit's"):
        anymove.ik(rig, J, noise=0.01)
    with pytest.raises(ValueError, match="method"):
        anymove.ik(rig, J, method="lsq")


def test_build_rig_from_arrays_equals_rig_json(walker, tmp_path):
    doc = json.loads(open(f"{walker}/rig.json").read())
    bones = [tuple(b) for b in doc["bones"]]
    assert doc["limits_deg"]  # the limits go through too
    rig = anymove.build_rig(doc["joints"], bones, limits=doc["limits_deg"], name=doc["name"])
    ref = anymove.load_rig(f"{walker}/rig.json")
    assert rig.joint_names == ref.joint_names and rig.bone_names == ref.bone_names
    assert np.array_equal(rig.parent, ref.parent) and np.array_equal(rig.joint_rest, ref.joint_rest)
    mot = anymove.load_motion(f"{walker}/walk.json", rig)
    assert np.array_equal(anymove.fk(rig, mot), anymove.fk(ref, anymove.load_motion(f"{walker}/walk.json", ref)))
    rig.save(tmp_path / "rig.json")
    ref.save(tmp_path / "ref.json")
    assert (tmp_path / "rig.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    with pytest.raises(anymove.InputError) as e:
        anymove.build_rig(doc["joints"], bones + [("extra", "hips", "nosuchjoint", "spine")])
    assert e.value.name == "E_NAME" and "nosuchjoint" in e.value.message


def test_errors_carry_the_library_record(walker, tmp_path):
    bad = tmp_path / "rig.json"
    bad.write_text('{"joints": {"a": [0, 0, 0]},\n "bones": [\n}')
    with pytest.raises(anymove.InputError) as e:
        anymove.load_rig(bad)
    err = e.value
    assert isinstance(err, anymove.Error) and isinstance(err, ValueError)
    assert err.name == "E_SYNTAX" and err.code < 0 and err.file == str(bad)
    assert err.line == 3 and err.offset is None
    r = cli("fk", bad, check=False)
    assert r.returncode == 2 and str(err) in r.stderr  # the CLI's very message
    # a binary file: the byte offset
    glb = tmp_path / "cut.glb"
    data = open(os.path.join(SHARED, "data", "gltf", "khronos_fox", "Fox.glb"), "rb").read()
    glb.write_bytes(data[:100])
    with pytest.raises(anymove.InputError) as e:
        anymove.load_rig(glb)
    assert e.value.file == str(glb) and e.value.offset is not None
    r = cli("fk", glb, check=False)
    assert r.returncode == 2 and str(e.value) in r.stderr
    with pytest.raises(anymove.InputError) as e:
        anymove.load_motion(tmp_path / "absent.json")
    assert e.value.name == "E_READ" and e.value.file == str(tmp_path / "absent.json")
    # a motion of another rig is refused before the library sees it
    rig = anymove.load_rig(f"{walker}/rig.json")
    with pytest.raises(anymove.InputError) as e:
        anymove.load_motion(f"{walker}/walk.json", anymove.load_rig(os.path.join(SHARED, "data", "gltf", "khronos_fox", "Fox.glb")))
    assert e.value.name == "E_NAME"
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))
    J[7, 3] = np.nan
    with pytest.raises(anymove.InputError) as e:
        anymove.ik(rig, J)
    assert e.value.name == "E_NONFINITE" and "frame 7" in e.value.message
    with pytest.raises(anymove.InputError) as e:
        anymove.ik(rig, J[:, :3], names=["hips", "chest", "tail9"])
    assert e.value.name == "E_NAME" and "tail9" in str(e.value)


def test_library_warnings_are_python_warnings(tmp_path):
    src = open(os.path.join(SHARED, "data", "formats", "trc", "exampleFormat.trc")).read().split("\n")
    fields = src[2].split("\t")
    fields[2] = "9"  # NumFrames says 9; the file holds 5 rows
    src[2] = "\t".join(fields)
    (tmp_path / "short.trc").write_text("\n".join(src))
    with pytest.warns(anymove.AnymoveWarning, match="NumFrames says 9, the file holds 5") as rec:
        jt = anymove.load_joints(tmp_path / "short.trc")
    assert rec[0].message.kind == "MISSING_DATA"
    assert jt.joints.shape == (5, 3, 3) and jt.names == ["marker1", "marker2", "marker3"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        anymove.load_joints(os.path.join(SHARED, "data", "formats", "trc", "exampleFormat.trc"))


def test_joints_npz_round_trip(walker, tmp_path):
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))
    np.savez(tmp_path / "j.npz", joints=J, names=np.array(rig.joint_names), fps=np.array(25.0))
    jt = anymove.load_joints(tmp_path / "j.npz")
    assert jt.names == rig.joint_names and jt.fps == 25.0 and np.array_equal(jt.joints, J)


def test_progress_callback_and_cancel(walker):
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))
    seen = []
    anymove.ik(rig, J, progress=lambda stage, f, s: seen.append((stage, f, s)))
    assert seen and seen[-1][0] == "ik: solve frames" and seen[-1][1] == 1.0 and seen[-1][2] >= 0
    with pytest.raises(anymove.InputError) as e:
        anymove.ik(rig, J, progress=lambda stage, f, s: False)
    assert e.value.name == "E_CANCELLED"

    class Stop(Exception):
        pass

    def boom(stage, f, s):
        raise Stop(stage)
    with pytest.raises(Stop):
        anymove.ik(rig, J, progress=boom)


def test_two_solves_in_two_threads(walker):
    rig = anymove.load_rig(f"{walker}/rig.json")
    J = anymove.fk(rig, anymove.load_motion(f"{walker}/walk.json", rig))
    J2 = np.ascontiguousarray(J[::-1])  # another clip: the walk backwards
    alone = [anymove.ik(rig, J).motion.euler.copy(), anymove.ik(rig, J2).motion.euler.copy()]
    results = [None, None]
    errors = []
    barrier = threading.Barrier(2)

    def solve(k, pos):
        try:
            barrier.wait()
            for _ in range(20):
                results[k] = anymove.ik(rig, pos, progress=lambda *a: True).motion.euler.copy()
        except BaseException as exc:
            errors.append(exc)
    threads = [threading.Thread(target=solve, args=(0, J)), threading.Thread(target=solve, args=(1, J2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert np.array_equal(results[0], alone[0]) and np.array_equal(results[1], alone[1])


def test_struct_layouts_match_the_headers(tmp_path):
    """ctypes mirrors of the C structs: sizes and offsets from the compiler itself."""
    import ctypes
    from anymove import _capi as C
    structs = {"am_error": C.am_error, "am_context": C.am_context, "am_warning": C.am_warning,
               "am_scope": C.am_scope, "am_rig_desc": C.am_rig_desc, "am_rig": C.am_rig,
               "am_motion": C.am_motion, "am_joints": C.am_joints, "am_ik_opts": C.am_ik_opts,
               "am_ik_job": C.am_ik_job, "am_stats": C.am_stats, "am_gltf_opts": C.am_gltf_opts,
               "am_import_opts": C.am_import_opts, "am_progress": C.am_progress,
               "am_bvh": C.am_bvh_head, "am_bvh_opts": C.am_bvh_opts,
               "am_gltf_export": C.am_gltf_export, "am_mdet": C.am_mdet, "am_det": C.am_det,
               "am_gltf_animation": C.am_gltf_animation, "am_pictures": C.am_pictures,
               "am_calib_read_opts": C.am_calib_read_opts,
               "am_triangulate_opts": C.am_triangulate_opts,
               "am_triangulation": C.am_triangulation, "am_buf": C.am_buf,
               "am_capture_opts": C.am_capture_opts, "am_capture_sync": C.am_capture_sync,
               "am_capture_result": C.am_capture_result, "am_fit_opts": C.am_fit_opts,
               "am_fit_result": C.am_fit_result, "am_mv_solve_opts": C.am_mv_solve_opts,
               "am_mv_solve_result": C.am_mv_solve_result, "am_tracks": C.am_tracks,
               "am_decompose_opts": C.am_decompose_opts,
               "am_decomposition": C.am_decomposition, "am_bone_map": C.am_bone_map,
               "am_retarget_map": C.am_retarget_map,
               "am_retarget_map_opts": C.am_retarget_map_opts,
               "am_retarget_opts": C.am_retarget_opts,
               "am_retarget_report": C.am_retarget_report,
               "am_retarget_job": C.am_retarget_job, "am_reals": C.am_reals,
               "am_fit_input": C.am_fit_input,
               "am_decompose_report": C.am_decompose_report, "am_gltf_mesh_in": C.am_gltf_mesh_in,
               "am_array": C.am_array}
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "anymove/anymove.h"',
             'int main(void) {']
    for name, cls in structs.items():
        lines.append(f'printf("{name} %zu\\n", sizeof({name}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{name}.{field} %zu\\n", offsetof({name}, {field}));')
    lines.append('printf("am_creature.layout %zu\\n", offsetof(am_creature, layout));')
    lines.append('printf("am_gltf.warnings %zu\\n", offsetof(am_gltf, warnings)); return 0; }')
    (tmp_path / "layout.c").write_text("\n".join(lines))
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(SOURCE, "include"), "-o", tmp_path / "layout",
                    tmp_path / "layout.c"], check=True)
    got = dict(l.split() for l in subprocess.run([tmp_path / "layout"], capture_output=True,
                                                 text=True, check=True).stdout.splitlines())
    for name, cls in structs.items():
        assert int(got[name]) == ctypes.sizeof(cls), name
        for field, _ in cls._fields_:
            assert int(got[f"{name}.{field}"]) == getattr(cls, field).offset, f"{name}.{field}"
    assert int(got["am_gltf.warnings"]) == C.am_gltf_head.warnings.offset
    assert int(got["am_creature.layout"]) == C.CREATURE_LAYOUT_OFFSET


def test_pip_install_offline(tmp_path, walker):
    lib = os.path.realpath(anymove.LIBRARY_PATH)
    shutil.copytree(os.path.join(SOURCE, "python"), tmp_path / "src",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", tmp_path / "venv"], check=True)
    py = tmp_path / "venv" / "bin" / "python"
    env = dict(os.environ, ANYMOVE_LIBRARY=lib, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation",
                    tmp_path / "src"], check=True, env=env, cwd=tmp_path)
    env.pop("ANYMOVE_LIBRARY")
    env.pop("PYTHONPATH", None)
    code = ("import anymove, sys; r = anymove.load_rig(sys.argv[1]); "
            "print(anymove.LIBRARY_PATH); print(anymove.fk(r).shape)")
    out = subprocess.run([py, "-c", code, f"{walker}/rig.json"], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path).stdout.split("\n")
    assert out[0].startswith(str(tmp_path / "venv")) and out[1] == "(1, 24, 3)"


def test_gltf_clip_of_a_scaled_rig_equals_convert(fox, tmp_path):
    # load_rig(scale=) then load_motion of the same file: the clip is sampled in the file's units
    # and scaled, as `convert --scale` does (sampled on the scaled rig, the file's translations
    # were read as metres: the fox's root came out 100x off)
    cli("convert", fox, "--clip", "Walk", "--scale", "0.01", "-o", tmp_path / "cli", "-q")
    rig = anymove.load_rig(fox, scale=0.01)
    mot = anymove.load_motion(fox, rig, clip="Walk")
    mot.save(tmp_path / "motion.json")
    doc = json.loads((tmp_path / "cli" / "motion.json").read_text())
    assert mot.frame_count == len(doc["trans"])
    assert np.abs(np.array(mot.trans) - np.array(doc["trans"])).max() < 1e-12
    assert np.abs(np.array(mot.joints) - np.array(doc["joints"])).max() < 1e-12
