"""anymove for Python: rigs, motions, forward and inverse kinematics over libanymove.so.

    import anymove
    rig = anymove.load_rig("rig.json")             # or a skinned .glb / .gltf
    mot = anymove.load_motion("motion.json", rig)  # bound to the rig: its bone order
    J = anymove.fk(rig, mot)                       # (T, J, 3) float64, metres, rig joint order
    res = anymove.ik(rig, J, names=rig.joint_names, fps=mot.fps)
    res.motion.save("solved.json")                 # the bytes `anymove ik` writes
    rig, mot = anymove.load_bvh("clip.bvh", up="z", scale=0.01)
    anymove.save_motion(rig, mot, "clip.glb")      # .glb, .bvh or .json, as `anymove export`
    tri = anymove.triangulate("det.npz", "calibration.toml")   # tri.joints (T, J, 3)
    res = anymove.solve("det.npz", rig, cameras="calibration.toml")  # res.motion, res.report
    d = anymove.rig_from_tracks("tracks.npz", bones=15)      # d.rig, d.motion, d.weight
    out = anymove.retarget(rig, mot, anymove.load_rig("Husky.glb"))  # out.motion, out.map

Arrays: C-contiguous float32 and float64 joints (ik) and detections (triangulate, solve) are
read in place by the library through its typed views (am_reals); the motion arrays of
motion_from_arrays / fk are used in place when C-contiguous float64; anything else (Fortran
order, slices, lists, other dtypes) is converted once. Arrays read from a Motion or Rig are
views of the library's memory, valid while that object lives.
Errors: the library's error record raises anymove.Error (code, name, file, line, col, offset,
message); InputError when the input is at fault (the CLI's exit 2), SystemFault otherwise.
Warnings: the library's non-fatal warnings are issued as anymove.AnymoveWarning.
Progress: calls taking `progress` call progress(stage, fraction, seconds) on the calling
thread; returning False cancels (anymove.InputError with name "E_CANCELLED").
Threads: every call releases the GIL while the library works; calls on different threads run
at once (each call has its own context); one Rig or Motion may be read by several at once.
"""
import contextlib
import ctypes
import time
import warnings as _warnings
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_uint8

import numpy as np

from . import _capi as C

__all__ = ["Error", "InputError", "SystemFault", "AnymoveWarning", "Rig", "Motion", "IKResult",
           "Joints", "Triangulation", "SolveResult", "Decomposition", "RetargetResult", "RetargetClips", "load_rig", "build_rig", "load_motion", "load_bvh", "save_motion",
           "load_joints", "motion_from_arrays", "fk", "ik", "triangulate", "solve", "rig_from_tracks",
           "retarget", "LIBRARY_PATH"]
__version__ = "0.1.0"
LIBRARY_PATH = C.LIBRARY_PATH


class Error(Exception):
    """A failed library call: the library's am_error record.

    code: int status (negative); name: "E_SYNTAX", ...; file: the input file ("" if none);
    line, col: 1-based text location or 0; offset: byte offset in a binary file or None;
    message: the detail ("bone 'neck': unknown joint 'hed'"); what: the status's message.
    str(error) is the library's formatted message (what the CLI prints).
    """

    def __init__(self, code, name, file, line, col, offset, message, what, text):
        super().__init__(text)
        self.code, self.name, self.file = code, name, file
        self.line, self.col, self.offset = line, col, offset
        self.message, self.what = message, what


class InputError(Error, ValueError):
    """The input, the arguments or the output location is at fault (CLI exit status 2)."""


class SystemFault(Error):
    """Out of memory or an internal error (CLI exit status 1)."""


class AnymoveWarning(UserWarning):
    """A non-fatal oddity the library noticed and worked around. kind: "IGNORED_NAME", ...;
    count: occurrences of this text."""

    def __init__(self, text, kind="", count=1):
        super().__init__(text)
        self.kind, self.count = kind, count


def _raise(status, err):
    e = err
    text = ctypes.create_string_buffer(1024)
    C.am_error_format(text, len(text), byref(e))
    offset = None if e.offset == 2**64 - 1 else int(e.offset)
    fault = C.am_status_fault(status)
    cls = InputError if fault == 1 else SystemFault
    raise cls(int(status), C.am_status_name(status).decode(), e.file.decode(errors="replace"),
              int(e.line), int(e.col), offset, e.info.decode(errors="replace"),
              (e.what or b"").decode(), text.value.decode(errors="replace"))


def _check(status, err):
    if status < 0:
        _raise(status, err)
    return status


def _emit_warnings(wl):
    try:
        for i in range(wl.count):
            w = wl.data[i]
            kind = C.am_warning_kind_name(w.kind).decode()
            text = w.text.decode(errors="replace")
            msg = f"anymove: {text}" + (f" (x{w.count})" if w.count > 1 else "")
            _warnings.warn(AnymoveWarning(msg, kind, int(w.count)), stacklevel=3)
    finally:
        C.am_warning_list_free(byref(wl))


class _Call:
    """One library call's context: its progress callback, and a scope collecting the warnings
    of the loaders, which take no options, and handing them to Python when it ends."""

    def __init__(self, progress=None):
        self.ctx = C.am_context()
        self.failure = None
        self._fn = None
        if progress is not None:
            def relay(_user, p):
                if self.failure is not None:
                    return False
                try:
                    go = progress(p.contents.stage.decode(), p.contents.fraction,
                                  p.contents.seconds)
                    return go is not False
                except BaseException as exc:  # re-raised in the caller once the call stopped
                    self.failure = exc
                    return False
            self._fn = C.am_progress_fn(relay)
            self.ctx.progress = self._fn

    def __enter__(self):
        self.scope = C.am_scope()
        C.am_scope_enter(byref(self.scope), byref(self.ctx))
        return self

    def __exit__(self, *exc):
        wl = C.am_warning_list()
        C.am_scope_leave(byref(self.scope), byref(wl))
        _emit_warnings(wl)
        if self.failure is not None:  # the progress callback raised: that is the error
            raise self.failure
        return False


class _View:
    """numpy's view of library memory that keeps the owning object alive (the array's base)."""

    def __init__(self, owner, address, shape, typestr):
        self.owner = owner
        self.__array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                    "data": (address, False), "version": 3}


def _array(owner, pointer, shape, typestr="<f8"):
    address = ctypes.cast(pointer, ctypes.c_void_p).value
    if not address:
        return None
    if 0 in shape:
        return np.zeros(shape, dtype=np.dtype(typestr))
    return np.asarray(_View(owner, address, shape, typestr))


def _strings(pointer, n):
    if not pointer:
        return None
    return [pointer[i].decode() for i in range(n)]


def _f64(a, shape_tail, what):
    """a as C-contiguous float64 (the same array when it already is one) of shape (..., *tail)."""
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim != 1 + len(shape_tail) or tuple(arr.shape[1:]) != tuple(shape_tail):
        raise ValueError(f"{what}: expected shape (T, {', '.join(map(str, shape_tail))}), "
                         f"got {arr.shape}")
    return arr


def _dptr(arr):
    return arr.ctypes.data_as(POINTER(c_double))


def _cstrings(names):
    encoded = [n.encode() if isinstance(n, str) else bytes(n) for n in names]
    return encoded, (c_char_p * max(len(encoded), 1))(*encoded)


class Rig:
    """A validated rig (rig.json, a glTF skin or arrays). Bones are parents first.

    joint_names: list of J names (rig.json order, the order `anymove fk` prints);
    bone_names: list of B names; parent: (B,) int32 (-1 for the root);
    joint_rest: (J, 3) float64 rest positions, metres; length: (B,) float64 metres.
    """

    def __init__(self, pointer):
        self._p = pointer
        self._c = pointer.contents
        self._joint_names = _strings(self._c.joint_names, self._c.joint_count)
        self._bone_names = _strings(self._c.bone_names, self._c.bone_count)
        self._loaded = (None, 1.0)  # (path, scale) of load_rig / load_bvh

    def __del__(self):
        if getattr(self, "_p", None):
            C.am_rig_free(self._p)
            self._p = None

    @property
    def joint_count(self):
        return int(self._c.joint_count)

    @property
    def bone_count(self):
        return int(self._c.bone_count)

    @property
    def joint_names(self):
        return list(self._joint_names)

    @property
    def bone_names(self):
        return list(self._bone_names)

    @property
    def parent(self):
        return _array(self, self._c.parent, (self.bone_count,), "<i4")

    @property
    def joint_rest(self):
        return _array(self, self._c.joint_rest, (self.joint_count, 3))

    @property
    def length(self):
        return _array(self, self._c.length, (self.bone_count,))

    @property
    def name(self):
        return self._c.name.decode() if self._c.name else None

    def save(self, path):
        """Write rig.json (atomically)."""
        err = C.am_error()
        with _Call():
            _check(C.am_rig_write(self._p, _path(path), byref(err)), err)

    def scale(self, s):
        """Multiply every length by s > 0 in place (units: metres per unit)."""
        if not s > 0:
            raise ValueError("scale must be positive")
        C.am_rig_scale(self._p, float(s))

    def __repr__(self):
        return f"<anymove.Rig {self.name or ''} {self.bone_count} bones, {self.joint_count} joints>"


class Motion:
    """A clip: per-frame root placement and every bone's local rotation (SPEC 4.3).

    frame_count T, bone_count B, fps; bone_names (B); trans (T, 3) root head, metres;
    root_quat (T, 4) (w, x, y, z); euler (T, B, 3) local Euler XYZ, radians; quat (T, B, 4)
    or None; loc (T, B, 3) local translations or None; joints (T, J, 3) FK keypoints or None;
    joint_names (J) or None. rig: the Rig it is bound to (its bone order), or None.
    """

    def __init__(self, pointer, rig, owned=True, keep=()):
        self._p = pointer
        self._c = pointer.contents
        self.rig = rig
        self._owned = owned
        self._keep = keep  # the arrays and strings a view motion points into

    def __del__(self):
        if getattr(self, "_owned", False) and self._p:
            C.am_motion_free(self._p)
            self._p = None

    frame_count = property(lambda self: int(self._c.frame_count))
    bone_count = property(lambda self: int(self._c.bone_count))
    joint_count = property(lambda self: int(self._c.joint_count))
    fps = property(lambda self: float(self._c.fps))
    bone_names = property(lambda self: _strings(self._c.bone_names, self.bone_count))
    joint_names = property(lambda self: _strings(self._c.joint_names, self.joint_count))
    trans = property(lambda self: _array(self, self._c.trans, (self.frame_count, 3)))
    root_quat = property(lambda self: _array(self, self._c.root_quat, (self.frame_count, 4)))
    euler = property(lambda self: _array(self, self._c.euler,
                                         (self.frame_count, self.bone_count, 3)))
    quat = property(lambda self: _array(self, self._c.quat,
                                        (self.frame_count, self.bone_count, 4)))
    loc = property(lambda self: _array(self, self._c.loc, (self.frame_count, self.bone_count, 3)))
    joints = property(lambda self: _array(self, self._c.joints,
                                          (self.frame_count, self.joint_count, 3)))

    def save(self, path):
        """Write motion.json (atomically; numbers that read back bit-identical)."""
        err = C.am_error()
        with _Call():
            _check(C.am_motion_write(self._p, _path(path), byref(err)), err)

    def __repr__(self):
        return f"<anymove.Motion {self.frame_count} frames, {self.bone_count} bones, {self.fps:g} fps>"


def _path(path):
    import os
    return os.fsencode(path)


def _is_gltf(path):
    p = str(path).lower()
    return p.endswith(".glb") or p.endswith(".gltf")


def _is_bvh(path):
    return str(path).lower().endswith(".bvh")


def _doc_warnings(wl, stacklevel=4):
    """Issue the warnings a document keeps in its own list (freed with the document)."""
    for i in range(wl.count):
        w = wl.data[i]
        text = w.text.decode(errors="replace")
        _warnings.warn(AnymoveWarning("anymove: " + text + (f" (x{w.count})" if w.count > 1 else ""),
                                      C.am_warning_kind_name(w.kind).decode(), int(w.count)),
                       stacklevel=stacklevel)


def _gltf_load(path, err):
    doc = POINTER(C.am_gltf_head)()
    opts = C.am_gltf_opts()
    _check(C.am_gltf_load(_path(path), byref(opts), byref(doc), byref(err)), err)
    wl = doc.contents.warnings  # the document's own list, freed with it
    for i in range(wl.count):
        w = wl.data[i]
        _warnings.warn(AnymoveWarning("anymove: " + w.text.decode(errors="replace"),
                                      C.am_warning_kind_name(w.kind).decode(), int(w.count)),
                       stacklevel=4)
    return doc


def load_rig(path, *, scale=1.0, up="y"):
    """Load a rig: rig.json, the skeleton of the first skin of a .glb / .gltf, or the skeleton
    of a .bvh (one bone per BVH joint, docs/bvh.md).

    scale: metres per unit of the file (0.01 for centimetres), as the CLI's --scale.
    up: a .bvh's up axis, "y" (the default) or "z" (`anymove convert --up`).
    Raises anymove.Error naming the file and the problem.
    """
    if _is_bvh(path):
        return load_bvh(path, scale=scale, up=up)[0]
    err = C.am_error()
    out = POINTER(C.am_rig)()
    with _Call():
        if _is_gltf(path):
            doc = _gltf_load(path, err)
            try:
                _check(C.am_rig_from_gltf(doc, -1, byref(out), byref(err)), err)
            finally:
                C.am_gltf_free(doc)
        else:
            _check(C.am_rig_load(_path(path), byref(out), byref(err)), err)
    rig = Rig(out)
    if scale != 1.0:
        rig.scale(scale)
    rig._loaded = (path, float(scale))  # a glTF character is read again to write its mesh
    if _is_gltf(path):
        _record_model(rig, path)
    return rig


def _record_model(rig, path):
    """rig.json's "model": the glTF file the rig is the skeleton of, as an absolute path (what
    `anymove convert X.glb` and `retarget --to X.glb` write)."""
    import os
    copy = C.am_strdup(os.fsencode(os.path.realpath(path)))
    if not copy:
        raise MemoryError("model path")
    field = ctypes.c_void_p.from_address(ctypes.addressof(rig._c) + C.am_rig.model.offset)
    if field.value:
        C.am_free(field.value)
    field.value = copy


def build_rig(joints, bones, *, limits=None, helpers=(), name=None):
    """Build a rig from arrays and names (what rig.json says, SPEC 2.1).

    joints: {name: (x, y, z)} rest positions, metres, in rig.json order (or a list of pairs);
    bones: list of (name, head_joint, tail_joint, parent_bone_or_None);
    limits: {bone_or_stem: (3, 2) degrees (min, max) per X, Y, Z}; helpers: bone names.
    """
    items = list(joints.items()) if hasattr(joints, "items") else list(joints)
    jn, jn_c = _cstrings([n for n, _ in items])
    pos = np.ascontiguousarray([p for _, p in items], dtype=np.float64).reshape(len(items), 3)
    bn, bn_c = _cstrings([b[0] for b in bones])
    hd, hd_c = _cstrings([b[1] for b in bones])
    tl, tl_c = _cstrings([b[2] for b in bones])
    par = [None if b[3] is None else b[3].encode() for b in bones]
    par_c = (c_char_p * max(len(par), 1))(*par)
    limits = dict(limits or {})
    lk, lk_c = _cstrings(list(limits))
    lim = np.ascontiguousarray([np.asarray(v, dtype=np.float64).reshape(3, 2)
                                for v in limits.values()], dtype=np.float64).reshape(-1, 3, 2)
    hl, hl_c = _cstrings(list(helpers))
    desc = C.am_rig_desc(joint_count=len(items), joint_names=jn_c, joint_pos=_dptr(pos),
                         bone_count=len(bones), bone_names=bn_c, bone_head=hd_c, bone_tail=tl_c,
                         bone_parent=par_c, limit_count=len(limits), limit_keys=lk_c,
                         limits_deg=_dptr(lim), helper_count=len(hl), helpers=hl_c,
                         extra_json=None, source=b"build_rig")
    err = C.am_error()
    out = POINTER(C.am_rig)()
    with _Call():
        _check(C.am_rig_build(byref(desc), byref(out), byref(err)), err)
    rig = Rig(out)
    if name is not None:  # what rig.json's loader does after building
        copy = C.am_strdup(name.encode())
        if not copy:
            raise MemoryError("rig name")
        ctypes.c_void_p.from_address(ctypes.addressof(rig._c) + C.am_rig.name.offset).value = copy
    return rig


def _gltf_motion(doc, rig, anim, rate, err):
    """Clip anim of a loaded glTF document as a Motion of rig (load_rig of the same file):
    sampled on the skeleton in the file's units and then scaled as the rig was loaded (the
    CLI's order: on the scaled rig the file's translations would be read as metres)."""
    scale = rig._loaded[1] if rig._loaded[0] is not None else 1.0
    on = rig
    if scale != 1.0:
        raw = POINTER(C.am_rig)()
        _check(C.am_rig_from_gltf(doc, -1, byref(raw), byref(err)), err)
        on = Rig(raw)
    out = POINTER(C.am_motion)()
    _check(C.am_motion_from_gltf(doc, -1, on._p, anim, rate, byref(out), byref(err)), err)
    m = Motion(out, rig)  # the same skin, so the same bones in the same order
    if scale != 1.0:
        C.am_motion_scale(m._p, scale)
    return m


def load_motion(path, rig=None, *, clip=None, fps=30.0, up="y", scale=1.0):
    """Load a motion: motion.json (bound to rig when given: bones reordered to its order;
    else file order), clip `clip` (name or index) of a .glb / .gltf sampled at fps (None: the
    clip's own key rate, what `anymove retarget` samples a glTF source at), which
    needs the rig load_rig made of the same file, or the clip of a .bvh (fps = 1 / its frame
    time), bound to rig (load_rig of the same file with the same up and scale) or, without
    one, to the rig of the file (motion.rig). up, scale: as load_rig's, for a .bvh."""
    if _is_bvh(path):
        if rig is None:
            return load_bvh(path, scale=scale, up=up)[1]
        return _bvh_read(path, scale, up, rig)[1]
    err = C.am_error()
    out = POINTER(C.am_motion)()
    with _Call():
        if _is_gltf(path):
            if rig is None:
                raise ValueError("load_motion: a glTF clip needs the rig load_rig made of it")
            doc = _gltf_load(path, err)
            try:
                index = c_int(-1)
                if clip is not None:
                    s = C.am_gltf_find_clip(doc, str(clip).encode(), byref(index), byref(err))
                    if s < 0:
                        err.file = _path(path)[:255]
                        _raise(s, err)
                elif doc.contents.animation_count:
                    index.value = 0
                rate = C.am_gltf_clip_rate(doc, index.value) if fps is None else float(fps)
                return _gltf_motion(doc, rig, index.value, rate, err)
            finally:
                C.am_gltf_free(doc)
        else:
            _check(C.am_motion_load(_path(path), rig._p if rig is not None else None,
                                    byref(out), byref(err)), err)
    return Motion(out, rig)


def motion_from_arrays(rig, euler=None, *, trans=None, root_quat=None, quat=None, loc=None,
                       fps=30.0):
    """A motion bound to rig that uses the given arrays in place (no copy for C-contiguous
    float64; others are converted once): euler (T, B, 3) radians or quat (T, B, 4) (w, x, y, z)
    local rotations, trans (T, 3) root head in metres (default: the rig's rest root head),
    root_quat (T, 4) (default identity), loc (T, B, 3) or None. The arrays must outlive no
    one: the motion keeps them. Editing them in place changes the motion."""
    B = rig.bone_count
    if euler is None and quat is None:
        raise ValueError("motion_from_arrays: give euler (T, B, 3) or quat (T, B, 4)")
    rot = _f64(euler, (B, 3), "euler") if euler is not None else None
    q = _f64(quat, (B, 4), "quat") if quat is not None else None
    T = (rot if rot is not None else q).shape[0]
    if T < 1:
        raise ValueError("motion_from_arrays: no frames")
    head = rig.joint_rest[rig._c.head_joint[0]]
    tr = _f64(trans, (3,), "trans") if trans is not None else np.tile(head, (T, 1))
    rq = (_f64(root_quat, (4,), "root_quat") if root_quat is not None
          else np.tile(np.array([1.0, 0, 0, 0]), (T, 1)))
    lc = _f64(loc, (B, 3), "loc") if loc is not None else None
    for a, what in ((tr, "trans"), (rq, "root_quat"), (q, "quat"), (lc, "loc")):
        if a is not None and a.shape[0] != T:
            raise ValueError(f"motion_from_arrays: {what} has {a.shape[0]} frames, not {T}")
    if not (1e-3 <= fps <= 1e4):
        raise ValueError("motion_from_arrays: fps must be in [1e-3, 1e4]")
    null = POINTER(c_double)()
    m = C.am_motion(frame_count=T, bone_count=B, joint_count=0, fps=float(fps),
                    bone_names=rig._c.bone_names, trans=_dptr(tr), root_quat=_dptr(rq),
                    euler=_dptr(rot) if rot is not None else null,
                    quat=_dptr(q) if q is not None else null,
                    loc=_dptr(lc) if lc is not None else null)
    return Motion(ctypes.pointer(m), rig, owned=False, keep=(m, rig, rot, q, tr, rq, lc))


def fk(rig, motion=None, *, out=None, **arrays):
    """Forward kinematics of a clip: joints (T, J, 3) float64, metres, in the rig's joint order
    (what `anymove fk RIG --motion M` prints). motion: a Motion bound to rig, or None with the
    arrays of motion_from_arrays (euler=..., trans=..., ...) used in place, or nothing at all
    for the rest pose as one frame. out: a C-contiguous float64 (T, J, 3) array to fill
    (returned); else a new one. The GIL is released while the library computes."""
    if motion is None and arrays:
        motion = motion_from_arrays(rig, **arrays)
    elif arrays:
        raise TypeError("fk: give a motion or arrays, not both")
    T = motion.frame_count if motion is not None else 1
    J = rig.joint_count
    if out is None:
        out = np.empty((T, J, 3))
    elif (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != (T, J, 3)
          or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError(f"fk: out must be a writable C-contiguous float64 array of shape {(T, J, 3)}")
    if motion is None:
        pose = np.empty((rig.bone_count, 16))
        C.am_rig_rest_pose(rig._p, _dptr(pose))
        C.am_rig_keypoints(rig._p, _dptr(pose), _dptr(out))
        return out
    _check_bound(rig, motion, "fk")
    with _Call():
        C.am_rig_fk_clip(rig._p, motion._p, _dptr(out))
    return out


def _check_bound(rig, motion, what):
    if motion.rig is not rig and motion.bone_names != rig._bone_names:
        raise ValueError(f"{what}: the motion is not bound to this rig (load it with "
                         f"load_motion(path, rig))")


class IKResult:
    """What ik returns. motion: the solved Motion bound to the rig (with joints);
    joints: (T, J, 3) its FK keypoints, metres; report: dict with frames, joints_used,
    reference, method ("analytic" or "fit"), fit {noise_m, noise_estimated, windows,
    lm_iterations, plants, smooth, smooth_auto} (method "fit"), solve_s, and fk_error {mean_cm, median_cm, p95_cm,
    max_cm, body_size_m} against the input positions and per_joint_cm (the figures of
    `anymove ik`'s report.json)."""

    def __init__(self, motion, report):
        self.motion, self.report = motion, report
        self.joints = motion.joints

    def __repr__(self):
        return f"<anymove.IKResult {self.motion!r} fk mean {self.report['fk_error']['mean_cm']:.3g} cm>"


def _real_array(a, shape_tail, what):
    """a as a C-contiguous float32 or float64 array (the same array when it already is one:
    the library reads both in place through am_reals), else converted once to float64."""
    arr = a if isinstance(a, np.ndarray) and a.dtype in (np.float32, np.float64) else np.asarray(a)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    arr = np.ascontiguousarray(arr)
    if arr.ndim != 1 + len(shape_tail) or tuple(arr.shape[1:]) != tuple(shape_tail):
        raise ValueError(f"{what}: expected shape (T, {', '.join(map(str, shape_tail))}), "
                         f"got {arr.shape}")
    return arr


def _ik_positions(rig, joints, names, fps, err):
    """(pos, given): the positions in the rig's joint order and the rig joints they give.
    Without names pos is the caller's array itself (float32 or float64, no copy); with names
    am_joints_bind gathers them into a new float64 array, as the CLI reads a file."""
    J = rig.joint_count
    if names is None:
        return _real_array(joints, (J, 3), "joints"), np.ones(J, dtype=np.uint8)
    src = _f64(joints, (len(names), 3), "joints")
    enc, enc_c = _cstrings(names)
    view = C.am_joints(frame_count=src.shape[0], joint_count=len(names), joints=_dptr(src),
                       names=enc_c, fps=float(fps))
    pos = np.empty((src.shape[0], J, 3))
    given = np.zeros(J, dtype=np.uint8)
    with _Call():
        _check(C.am_joints_bind(byref(view), rig._p, _dptr(pos),
                                given.ctypes.data_as(POINTER(c_uint8)), byref(err)), err)
    return pos, given


def ik(rig, joints, names=None, *, fps=30.0, method="analytic", mask=None, reference=None,
       temporal=None, twist_weight=None, twist=True, limits=True, temporal_prior=True,
       noise=None, smooth="auto", creature=None, conf=None, progress=None):
    """Inverse kinematics: joint positions -> every bone's local rotation, for any rig.

    joints: (T, N, 3) float64 or float32, metres, world axes. names: the N joint names (rig
    joints); None means the rig's joint order (N = J), and then a C-contiguous float32 or
    float64 array is read in place by the library (no copy, no conversion).
    method: "analytic" (am_ik_run, per frame: `anymove ik --analytic`; a joint it uses must
    be present in every frame) or "fit" (the rig fitted by least squares over the whole clip
    from the analytic start, am_fit: what `anymove ik` does by default; NaN x 3 = missing).
    fps: the frame rate of the motion. mask: (J,) bool, the rig joints to fit (default: those
    given, except joints only helper bones carry). reference: a Motion bound to rig whose frame 0
    holds the true rotations of frame 0 (default: rest pose priors). temporal [0, 1],
    twist_weight > 0: as `anymove ik --temporal/--twist-weight`; twist=False: --no-twist;
    limits=False: --no-limits; temporal_prior=False: --no-temporal.
    Fit only: noise: the positions' per-axis noise in metres (--noise; default estimated);
    smooth: "auto" (chosen per clip by cross-validation, as `anymove ik` does) or a positive
    multiplier of the temporal smoothness (--smooth X);
    creature: a creature.json path whose contact joints are planted and foot-locked
    (--creature); conf: (T, N) confidences in [0, 1] of the joints (a joints.npz's conf).
    progress(stage, fraction, seconds) -> False to cancel.
    Returns IKResult (motion, joints (T, J, 3), report)."""
    if method not in ("analytic", "fit"):
        raise ValueError(f"ik: method is analytic or fit, got {method!r}")
    if method == "analytic" and (noise is not None or creature is not None or conf is not None):
        raise ValueError("ik: noise, creature and conf are the fit's: not with method='analytic'")
    J = rig.joint_count
    err = C.am_error()
    pos, given = _ik_positions(rig, joints, names, fps, err)
    T = pos.shape[0]
    if mask is None:
        usable = np.zeros(J, dtype=np.uint8)
        C.am_ik_default_mask(rig._p, usable.ctypes.data_as(POINTER(c_uint8)))
        m = (given & usable).astype(np.uint8)
    else:
        m = np.ascontiguousarray(np.asarray(mask, dtype=bool).astype(np.uint8))
        if m.shape != (J,):
            raise ValueError(f"ik: mask must have shape ({J},)")
    used = m.astype(bool)
    if method == "analytic":
        bad = ~np.isfinite(pos).all(axis=2) & used
        if bad.any():
            t, j = np.argwhere(bad)[0]
            raise InputError(-14, "E_NONFINITE", "", 0, 0, None,
                             f"joint '{rig._joint_names[j]}' is missing at frame {t} (ik needs every "
                             f"joint it uses in every frame)", "NaN or infinite value",
                             f"error: NaN or infinite value (joint '{rig._joint_names[j]}' is missing "
                             f"at frame {t})")
    if reference is not None:
        _check_bound(rig, reference, "ik")
    opts = C.am_ik_opts()
    if temporal is not None:
        if not 0 <= temporal <= 1:
            raise ValueError("ik: temporal is in [0, 1]")
        opts.temporal = float(temporal)
        if temporal == 0:
            opts.flags |= C.AM_IK_NO_TEMPORAL
    if twist_weight is not None:
        if not twist_weight > 0:
            raise ValueError("ik: twist_weight must be positive")
        opts.twist_weight = float(twist_weight)
    if not twist:
        opts.flags |= C.AM_IK_NO_GRANDCHILD_TWIST
    if not limits:
        opts.flags |= C.AM_IK_NO_LIMITS
    if not temporal_prior:
        opts.flags |= C.AM_IK_NO_TEMPORAL
    if noise is not None and not noise > 0:
        raise ValueError("ik: noise must be positive (metres)")
    if smooth != "auto" and (isinstance(smooth, str) or not smooth > 0):
        raise ValueError(f"ik: smooth is 'auto' or a positive multiplier, got {smooth!r}")
    call = _Call(progress)
    opts.ctx = call.ctx
    fit = None
    with call:
        t0 = time.perf_counter()
        if method == "analytic":
            motion = _ik_analytic(rig, pos, m, reference, opts, fps, err)
        else:
            motion, fit = _ik_fit(rig, pos, m, names, conf, reference, opts, fps, noise, smooth,
                                  creature, limits, call, err)
        solve_s = time.perf_counter() - t0
        if method == "analytic":
            _check(C.am_motion_compute_joints(motion._p, rig._p, byref(err)), err)
        # the report's error figures take float64 positions (a float32 input is widened here,
        # after the solve, which read it in place)
        p64 = fit[1] if fit is not None else np.ascontiguousarray(pos, dtype=np.float64)
        per = np.empty(J)
        st = C.am_stats()
        mp = m.ctypes.data_as(POINTER(c_uint8))
        _check(C.am_joint_position_error(motion._c.joints, _dptr(p64), T, J, mp, _dptr(per),
                                         byref(st), byref(err)), err)
        size = C.am_body_size(_dptr(p64), J, mp)
    report = {"frames": T, "joints_used": int(st.count // max(T, 1)),
              "reference": reference is not None, "method": method}
    if fit is not None:
        report["fit"] = fit[0]
    report.update({"solve_s": solve_s,
                   "fk_error": {"mean_cm": 100 * st.mean, "median_cm": 100 * st.median,
                                "p95_cm": 100 * st.p95, "max_cm": 100 * st.max,
                                "body_size_m": size},
                   "per_joint_cm": {rig._joint_names[j]: 100 * per[j] for j in np.flatnonzero(used)}})
    return IKResult(motion, report)


def _ik_analytic(rig, pos, m, reference, opts, fps, err):
    out = POINTER(C.am_motion)()
    _check(C.am_motion_create(rig._p, pos.shape[0], float(fps), byref(out), byref(err)), err)
    motion = Motion(out, rig)
    wl = C.am_warning_list()
    job = C.am_ik_job(rig=rig._p, frame_count=pos.shape[0], points=C.reals(pos),
                      joint_mask=m.ctypes.data_as(POINTER(c_uint8)),
                      reference=reference._p if reference is not None else None,
                      opts=ctypes.pointer(opts), out=out, warnings=ctypes.pointer(wl))
    status = C.am_ik_run(byref(job), byref(err))
    _emit_warnings(wl)
    _check(status, err)
    return motion


def _ik_fit(rig, pos, m, names, conf, reference, opts, fps, noise, smooth, creature, limits, call,
            err):
    """am_fit as `anymove ik` runs it: the positions in the rig's order, the joints ik does not
    use missing (NaN), with the confidences where given. Returns (motion, (fit record, pos))."""
    T, J = pos.shape[:2]
    p = np.array(pos, dtype=np.float64)  # the fit's own input (unused joints become NaN)
    p[:, ~m.astype(bool)] = np.nan
    cf = None
    if conf is not None:
        src = np.asarray(conf, dtype=np.float64)
        n = len(names) if names is not None else J
        if src.shape != (T, n):
            raise ValueError(f"ik: conf must have shape {(T, n)}, got {src.shape}")
        cf = np.zeros((T, J))
        cols = (range(J) if names is None else [rig._joint_names.index(x) for x in names])
        for q, j in enumerate(cols):
            cf[:, j] = src[:, q]
    fo = C.am_fit_opts(ctx=call.ctx)
    if not limits:
        fo.flags |= C.AM_FIT_NO_LIMITS
    if noise is not None:
        fo.point_noise = float(noise)
    if smooth == "auto":
        fo.flags |= C.AM_FIT_SMOOTH_AUTO
    else:
        fo.smooth_points = float(smooth)
    cr = C._CR()
    res = POINTER(C.am_fit_result)()
    try:
        if creature is not None:
            _check(C.am_creature_load(_path(creature), byref(cr), byref(err)), err)
        fps_ok = 1e-3 <= fps <= 1e4
        view = C.am_joints(frame_count=T, joint_count=J, joints=_dptr(p), names=rig._c.joint_names,
                           fps=float(fps) if fps_ok else 30.0,
                           conf=_dptr(cf) if cf is not None else None)
        fin = C.am_fit_input(rig=rig._p, creature=cr, points=ctypes.pointer(view),
                             reference=reference._p if reference is not None else None,
                             start=ctypes.pointer(opts))
        s = C.am_fit(byref(fin), byref(fo), byref(res), byref(err))
        _check(s, err)
        f = res.contents
        _doc_warnings(f.warnings, stacklevel=4)
        record = {"noise_m": float(f.point_noise), "noise_estimated": bool(f.point_noise_estimated),
                  "windows": int(f.windows), "lm_iterations": int(f.lm_iterations),
                  "plants": int(f.plant_count), "smooth": float(f.smooth_points),
                  "smooth_auto": bool(f.smooth_auto)}
        motion = Motion(_detach(f.motion, C.am_motion), rig)
        f.motion = None
        return motion, (record, p)
    finally:
        if res:
            C.am_fit_result_free(res)
        if cr:
            C.am_creature_free(cr)


class Joints:
    """3D joints over time: joints (T, J, 3) float64 metres, world axes (NaN x 3 = missing);
    names (J); fps; conf (T, J) in [0, 1] or None. Arrays are views of library memory."""

    def __init__(self, pointer):
        self._p = pointer
        self._c = pointer.contents

    def __del__(self):
        if getattr(self, "_p", None):
            C.am_joints_free(self._p)
            self._p = None

    frame_count = property(lambda self: int(self._c.frame_count))
    joint_count = property(lambda self: int(self._c.joint_count))
    fps = property(lambda self: float(self._c.fps))
    names = property(lambda self: _strings(self._c.names, self.joint_count))
    joints = property(lambda self: _array(self, self._c.joints,
                                          (self.frame_count, self.joint_count, 3)))
    conf = property(lambda self: _array(self, self._c.conf, (self.frame_count, self.joint_count)))

    def __repr__(self):
        return f"<anymove.Joints {self.frame_count} frames, {self.joint_count} joints, {self.fps:g} fps>"


def load_joints(path, *, format="auto", fps=0.0, scale=0.0, up=None):
    """3D joints from joints.npz (SPEC 4.2.3) or a tracker's 3D file (`anymove import`): TRC,
    C3D, anipose CSV, sleap-anipose points3d.h5. format: "auto" (by name and first bytes),
    "trc", "c3d", "anipose", "points3d"; fps: frames per second when the file has none;
    scale: metres per file unit (0 = the file's units); up: "y" or "z" (default: the
    format's). Oddities of the file (e.g. a header's frame count that disagrees with its
    rows) are issued as AnymoveWarning."""
    err = C.am_error()
    out = POINTER(C.am_joints)()
    p = _path(path)
    if str(path).endswith(".npz") and format in ("auto", "npz"):
        with _Call():
            _check(C.am_joints_load(p, byref(out), byref(err)), err)
        return Joints(out)
    if format not in C.TRACK_FORMATS:
        raise ValueError(f"load_joints: unknown format {format!r} "
                         f"(one of {', '.join(C.TRACK_FORMATS)})")
    fmt = C.TRACK_FORMATS[format] or C.am_track_format_guess(p)
    if fmt and not C.am_track_format_is_3d(fmt):
        raise ValueError(f"load_joints: {path} is {C.am_track_format_name(fmt).decode()}, 2D")
    opts = C.am_import_opts(fps=float(fps), scale=float(scale),
                            up=(up or "\0").encode()[:1])
    call = _Call()
    opts.ctx = call.ctx
    with call:
        _check(C.am_import_3d(p, fmt, byref(opts), byref(out), byref(err)), err)
    return Joints(out)


# ---- BVH and glTF I/O (bvh.h, gltf.h) ----

def _bvh_opts(scale, up):
    if str(up).lower() not in C.AM_BVH_AXES:
        raise ValueError(f"up is 'y' or 'z', got {up!r}")
    if not scale > 0:
        raise ValueError("scale must be positive")
    return C.am_bvh_opts(axes=C.AM_BVH_AXES[str(up).lower()], scale=float(scale))


def _bvh_read(path, scale, up, rig=None):
    """(rig, motion) of a .bvh, as `anymove convert CLIP.bvh` reads it; the motion is bound to
    rig when given, else to the rig of the file."""
    bo = _bvh_opts(scale, up)
    err = C.am_error()
    doc = POINTER(C.am_bvh_head)()
    r = POINTER(C.am_rig)()
    m = POINTER(C.am_motion)()
    with _Call():
        try:
            s = C.am_bvh_load(_path(path), byref(bo), byref(doc), byref(err))
            if s >= 0:
                _doc_warnings(doc.contents.warnings, stacklevel=5)
                if rig is None:
                    s = C.am_rig_from_bvh(doc, byref(bo), byref(r), byref(err))
                    if s >= 0:
                        rig = Rig(r)
                        rig._loaded = (path, float(scale))
            if s >= 0:
                s = C.am_motion_from_bvh(doc, rig._p, byref(bo), byref(m), byref(err))
            if s < 0:
                C.am_error_set_file(byref(err), _path(path))
                _raise(s, err)
        finally:
            if doc:
                C.am_bvh_free(doc)
    return rig, Motion(m, rig)


def load_bvh(path, *, scale=1.0, up="y"):
    """Read a .bvh (what `anymove convert CLIP.bvh [--up z] [--scale S]` reads): returns
    (rig, motion), the rig one bone per BVH joint in world axes (Z up) and metres, the motion
    bound to it with trans (T, 3) metres, root_quat (T, 4), euler (T, B, 3) radians, quat,
    joints (T, J, 3) metres, loc (T, B, 3) where joints slide (else None), and fps =
    1 / Frame Time. scale: metres per file unit (0.01 for cm); up: "y" (default) or "z".
    Oddities of the file are issued as AnymoveWarning."""
    return _bvh_read(path, scale, up)


def save_motion(rig, motion, path, *, names=None):
    """Write motion(s) of rig to path, the format by its extension, as `anymove export` /
    `anymove convert` write them (atomically; the same bytes):

    .json: motion.json of one motion (Motion.save). .bvh: one motion, Y up, OFFSETs in metres
    (the rig's rest offsets), ZYX rotation channels, position channels for the root and the
    bones whose loc is not zero. .glb: an animated skeleton, one clip per motion (motion may be
    a list; names: the clip names, default "clip0", ...), with a skinned bone-shape mesh so any
    viewer shows it move. Every motion must be bound to rig (load_motion(path, rig))."""
    import os
    motions = list(motion) if isinstance(motion, (list, tuple)) else [motion]
    if not motions:
        raise ValueError("save_motion: no motion")
    for m in motions:
        _check_bound(rig, m, "save_motion")
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".json", ".bvh", ".glb"):
        raise ValueError(f"save_motion: {path}: the extension picks the format: .json, .bvh or .glb")
    if ext != ".glb" and len(motions) != 1:
        raise ValueError(f"save_motion: a {ext} holds one motion; write {len(motions)} to a .glb")
    if names is not None and (ext != ".glb" or len(names) != len(motions)):
        raise ValueError("save_motion: names go with a .glb, one per motion")
    if ext == ".json":
        motions[0].save(path)
        return
    err = C.am_error()
    with _Call():
        if ext == ".bvh":
            doc = POINTER(C.am_bvh_head)()
            bo = C.am_bvh_opts(axes=C.AM_BVH_AXES["y"])
            try:
                s = C.am_bvh_from_motion(rig._p, motions[0]._p, byref(bo), byref(doc), byref(err))
                if s >= 0:
                    s = C.am_bvh_write(doc, _path(path), byref(err))
                if doc:
                    _doc_warnings(doc.contents.warnings)
                _check(s, err)
            finally:
                if doc:
                    C.am_bvh_free(doc)
        else:
            clips = (POINTER(C.am_motion) * len(motions))(*[m._p for m in motions])
            enc, enc_c = _cstrings(names) if names is not None else (None, None)
            ex = C.am_gltf_export(rig=rig._p, clip_count=len(motions), clips=clips,
                                  clip_names=enc_c, source_skin=-1)
            _check(C.am_gltf_write(byref(ex), _path(path), byref(err)), err)


# ---- triangulation of N calibrated cameras (multiview.h) ----

class Triangulation:
    """What triangulate returns (`anymove triangulate`'s outputs, as arrays).

    joints: (T, J, 3) float64, metres, world axes, NaN x 3 where no position; names (J);
    fps; conf: (T, J) mean confidence of the cameras used; reproj_px: (T, J) float32 mean
    reprojection error over the cameras used, px (NaN = missing); cameras_used: (T, J) uint8;
    used: (C, T, J) uint8, 1 = camera c's detection was used; cameras: the C camera names;
    per_camera: {name: {seen, used, mean_px, p95_px, mean_all_px}}; mean_px, median_px,
    p95_px over the used detections; points (T * J), triangulated, undistort_failed,
    ransac_dropped, seconds. Arrays are views of the library's memory, alive with them.
    save(dir) writes joints.npz, joints.trc, triangulation.npz and summary.json."""

    def __init__(self, pointer, det, det_owned, keep=()):
        self._p = pointer
        self._c = pointer.contents
        self._det = det
        self._det_owned = det_owned
        self._keep = keep

    def __del__(self):
        if getattr(self, "_p", None):
            C.am_triangulation_free(self._p)
            self._p = None
        if getattr(self, "_det_owned", False) and self._det:
            C.am_mdet_free(self._det)
            self._det = None

    camera_count = property(lambda self: int(self._c.camera_count))
    frame_count = property(lambda self: int(self._c.frame_count))
    joint_count = property(lambda self: int(self._c.joint_count))
    names = property(lambda self: _strings(self._c.joints.contents.names, self.joint_count))
    cameras = property(lambda self: _strings(self._det.contents.cameras, self.camera_count))
    fps = property(lambda self: float(self._c.joints.contents.fps))
    joints = property(lambda self: _array(self, self._c.joints.contents.joints,
                                          (self.frame_count, self.joint_count, 3)))
    conf = property(lambda self: _array(self, self._c.joints.contents.conf,
                                        (self.frame_count, self.joint_count)))
    reproj_px = property(lambda self: _array(self, self._c.reproj_px,
                                             (self.frame_count, self.joint_count), "<f4"))
    cameras_used = property(lambda self: _array(self, self._c.cameras_used,
                                                (self.frame_count, self.joint_count), "|u1"))
    used = property(lambda self: _array(self, self._c.used, (self.camera_count, self.frame_count,
                                                             self.joint_count), "|u1"))
    mean_px = property(lambda self: float(self._c.mean_px))
    median_px = property(lambda self: float(self._c.median_px))
    p95_px = property(lambda self: float(self._c.p95_px))
    points = property(lambda self: int(self._c.points))
    triangulated = property(lambda self: int(self._c.triangulated))
    undistort_failed = property(lambda self: int(self._c.undistort_failed))
    ransac_dropped = property(lambda self: int(self._c.ransac_dropped))
    seconds = property(lambda self: float(self._c.seconds))

    @property
    def per_camera(self):
        c = self._c
        return {name: {"seen": int(c.cam_seen[i]), "used": int(c.cam_used[i]),
                       "mean_px": float(c.cam_mean_px[i]), "p95_px": float(c.cam_p95_px[i]),
                       "mean_all_px": float(c.cam_mean_all_px[i])}
                for i, name in enumerate(self.cameras)}

    def save(self, directory, *, report=False, render=False, three_dir=None):
        """Write what `anymove triangulate -o DIR [--report] [--render]` writes into directory,
        all together or nothing (an output set): joints.npz (SPEC 4.2.3), joints.trc (OpenSim,
        Y up, metres), triangulation.npz (reproj_px, cameras_used, used, cameras, names),
        summary.json, and with report=True report.html + report_three.js, with render=True
        render_cameras.png, drawn by the library's am_pictures_write (the CLI's code; three_dir
        as SolveResult.save's)."""
        err = C.am_error()
        inp = self._pictures
        pic = C.am_pictures(report=bool(report), render=bool(render), title=inp["title"],
                            points=self._c.joints, points_only=True, mdet=self._det,
                            cameras=inp["cameras"].p, edges=inp["edges"].ctypes.data_as(POINTER(ctypes.c_int32)),
                            edge_count=len(inp["edges"]))
        pic.three_dir = _three_dir(three_dir) if report else None
        with _picture_set(directory, ["joints.npz", "joints.trc", "triangulation.npz", "summary.json"],
                          pic, err) as (st, at):
            _check(C.am_joints_write(at("joints.npz"), self._c.joints, byref(err)), err)
            _check(C.am_trc_write(at("joints.trc"), self._c.joints, byref(err)), err)
            _check(C.am_triangulation_write(at("triangulation.npz"), self._p, self._det, byref(err)), err)
            _check(C.am_triangulation_summary_write(at("summary.json"), self._p, self._det, byref(err)), err)
            if report or render:
                with open(at("summary.json"), "rb") as f:  # the page shows it as written
                    summary = f.read()
                pic.gate_text = summary
                _check(C.am_pictures_write(byref(pic), st, byref(err)), err)

    def __repr__(self):
        return (f"<anymove.Triangulation {self.camera_count} cameras, {self.frame_count} frames, "
                f"{self.joint_count} joints, mean {self.mean_px:.3g} px>")


def _det_view(det, what="triangulate"):
    """An am_mdet over the caller's arrays: C-contiguous float32 or float64 uv and conf are
    read in place (am_reals views; anything else is converted once to float64), checked by
    am_mdet_validate as am_mdet_load checks a det.npz (a NaN pixel is not seen)."""
    uv = _real_array(det["uv"], np.shape(det["uv"])[1:], what + ": uv")
    conf = _real_array(det["conf"], np.shape(det["conf"])[1:], what + ": conf")
    if uv.ndim != 4 or uv.shape[3] != 2:
        raise ValueError(f"{what}: uv must have shape (C, T, J, 2), got {uv.shape}")
    Cn, T, J = uv.shape[:3]
    if conf.shape != (Cn, T, J):
        raise ValueError(f"{what}: conf must have shape {(Cn, T, J)}, got {conf.shape}")
    cams, names = list(det["cameras"]), list(det["names"])
    if len(cams) != Cn or len(names) != J:
        raise ValueError(f"{what}: cameras must be {Cn} names and names {J} joint names")
    off = det.get("time_offset")
    if off is not None:
        off = np.ascontiguousarray(off, dtype=np.float64)
        if off.shape != (Cn,):
            raise ValueError(f"{what}: time_offset must be {Cn} numbers")
    ce, ce_c = _cstrings(cams)
    ne, ne_c = _cstrings(names)
    m = C.am_mdet(camera_count=Cn, frame_count=T, joint_count=J, cameras=ce_c, names=ne_c,
                  fps=float(det.get("fps", 30.0)), time_offset=_dptr(off) if off is not None else None,
                  uv_view=C.reals(uv), conf_view=C.reals(conf))
    err = C.am_error()
    with _Call():
        _check(C.am_mdet_validate(byref(m), byref(err)), err)
    return ctypes.pointer(m), (m, uv, conf, off, ce, ce_c, ne, ne_c)


def _is_two_view(det):
    """A mapping of arrays in the two-view layout: SPEC 4.2's keys (front_uv, ...) or the
    N-camera layout of the cameras "front" and "side" (SPEC 3's views)."""
    return "front_uv" in det or ("uv" in det and [str(c) for c in det.get("cameras", ())] == ["front", "side"])


def _two_view_view(det, what):
    """An am_det over the caller's arrays, read in place by the library (am_reals views):
    front_uv / side_uv (T, J, 2), front_conf / side_conf (T, J), or uv (2, T, J, 2) and conf
    (2, T, J) of the cameras ["front", "side"] (views at its two halves); C-contiguous float32
    or float64 as they are, anything else converted once to float64. Checked by
    am_det_validate, the loader's checks and messages. Returns (pointer, kept objects)."""
    if "front_uv" in det:
        uvs = [_real_array(det[k], np.shape(det[k])[1:], f"{what}: {k}") for k in ("front_uv", "side_uv")]
        cfs = [_real_array(det[k], np.shape(det[k])[1:], f"{what}: {k}") for k in ("front_conf", "side_conf")]
        if uvs[0].ndim != 3 or uvs[0].shape[2] != 2:
            raise ValueError(f"{what}: front_uv must have shape (T, J, 2), got {uvs[0].shape}")
        T, J = uvs[0].shape[:2]
        for k, a in zip(("side_uv", "front_conf", "side_conf"), uvs[1:] + cfs):
            want = (T, J, 2) if k == "side_uv" else (T, J)
            if a.shape != want:
                raise ValueError(f"{what}: {k} must have shape {want} to match front_uv, got {a.shape}")
        uv_views = [C.reals(a) for a in uvs]
        conf_views = [C.reals(a) for a in cfs]
        arrays = uvs + cfs
    else:
        uv = _real_array(det["uv"], np.shape(det["uv"])[1:], what + ": uv")
        conf = _real_array(det["conf"], np.shape(det["conf"])[1:], what + ": conf")
        if uv.ndim != 4 or uv.shape[0] != 2 or uv.shape[3] != 2:
            raise ValueError(f"{what}: uv of the cameras front and side must have shape (2, T, J, 2), got {uv.shape}")
        T, J = uv.shape[1:3]
        if conf.shape != (2, T, J):
            raise ValueError(f"{what}: conf must have shape {(2, T, J)}, got {conf.shape}")
        uv_views = [C.am_reals(data=uv.ctypes.data + v * uv.strides[0], dtype=C.reals(uv).dtype) for v in (0, 1)]
        conf_views = [C.am_reals(data=conf.ctypes.data + v * conf.strides[0], dtype=C.reals(conf).dtype) for v in (0, 1)]
        arrays = [uv, conf]
    names = list(det["names"])
    if len(names) != J:
        raise ValueError(f"{what}: names must be {J} joint names")
    ne, ne_c = _cstrings(names)
    d = C.am_det(frame_count=T, joint_count=J, fps=float(det.get("fps", 30.0)), names=ne_c)
    d.uv_view[0], d.uv_view[1] = uv_views
    d.conf_view[0], d.conf_view[1] = conf_views
    err = C.am_error()
    with _Call():
        _check(C.am_det_validate(byref(d), byref(err)), err)
    return ctypes.pointer(d), (d, arrays, ne, ne_c)


def triangulate(det, cameras=None, *, scale=1.0, threshold=None, min_conf=None, ransac=True,
                refine=False, rig=None, edges=None, creature=None, progress=None):
    """Joints read in N calibrated cameras -> 3D joints (`anymove triangulate`).

    det: a det.npz path (SPEC 4.2.1, or a two-view SPEC 4.2 file), or a mapping of arrays:
    uv (C, T, J, 2) image pixels (NaN = not seen), conf (C, T, J) in [0, 1], cameras (C names
    of the calibration), names (J joint names), fps, time_offset (C,) frames or absent;
    C-contiguous float32 or float64 uv and conf are read in place by the library (no copy;
    other dtypes and layouts are converted once); bad values raise anymove.InputError. Two
    views as arrays: uv (2, T, J, 2) / conf of the cameras ["front", "side"] (in place), or
    SPEC 4.2's keys front_uv, side_uv (T, J, 2), front_conf, side_conf (T, J) (checked in
    place as the loader checks a file, then stacked once into one (2, T, J, 2) array).
    cameras: an anipose calibration.toml or Pose2Sim Calib*.toml path; None for a two-view
    det (the orthographic cameras of SPEC 3, on the layout of creature: a creature.json path,
    None = the wolf's; --creature). scale: calibration length unit in metres
    (0.001 for mm). threshold: RANSAC / camera-drop reprojection threshold, px (default 15);
    min_conf: detections below are ignored (default 0.1; 0 uses every one); ransac=False:
    every camera that sees a point (--no-ransac); refine=True: the whole-clip refinement,
    holding constant the lengths of rig's bones (a Rig) or of edges [(joint, joint), ...].
    progress(stage, fraction, seconds) -> False to cancel.
    Returns a Triangulation (joints (T, J, 3) float64 metres, reproj_px (T, J), ...)."""
    import os
    if rig is not None and edges is not None:
        raise ValueError("triangulate: give rig or edges, not both")
    opts = C.am_triangulate_opts()
    if threshold is not None:
        if not threshold > 0:
            raise ValueError("triangulate: threshold must be positive")
        opts.ransac_px = float(threshold)
    if min_conf is not None:
        opts.min_conf = -1.0 if min_conf == 0 else float(min_conf)
    if not ransac:
        opts.flags |= C.AM_TRI_NO_RANSAC
    if refine:
        opts.flags |= C.AM_TRI_REFINE
    if not scale > 0:
        raise ValueError("triangulate: scale must be positive")
    if scale != 1.0 and cameras is None:
        raise ValueError("triangulate: scale is the calibration's unit: it needs cameras")
    if creature is not None and cameras is not None:
        raise ValueError("triangulate: creature gives the two-view layout; with cameras it has no use")
    err = C.am_error()
    call = _Call(progress)
    opts.ctx = call.ctx
    d = POINTER(C.am_mdet)()
    cal = C._CAL()
    tri = POINTER(C.am_triangulation)()
    cr = C._CR()
    keep, owned = (), True
    det_is_path = isinstance(det, (str, bytes, os.PathLike))
    where = _path(cameras) if cameras is not None else (_path(det) if det_is_path else None)
    try:
        with call:
            if det_is_path:
                _check(C.am_mdet_load(_path(det), byref(d), byref(err)), err)
            else:
                if "front_uv" in det:  # SPEC 4.2's keys: checked in place, then one [C][T][J][2]
                    _, held = _two_view_view(det, "triangulate")
                    uv, conf = held[1][:2], held[1][2:]
                    det = dict(det, uv=np.stack(uv).astype(np.result_type(*uv), copy=False),
                               conf=np.stack(conf).astype(np.result_type(*conf), copy=False),
                               cameras=["front", "side"])
                d, keep = _det_view(det)
                owned = False
            two_view = d.contents.two_view or (not det_is_path and _is_two_view(det))
            if cameras is not None:
                ro = C.am_calib_read_opts(scale=float(scale))
                _check(C.am_calib_load(_path(cameras), byref(ro), byref(cal), byref(err)), err)
            elif two_view:
                layout = None
                if creature is not None:
                    _check(C.am_creature_load(_path(creature), byref(cr), byref(err)), err)
                    layout = ctypes.c_void_p(cr.value + C.CREATURE_LAYOUT_OFFSET)
                _check(C.am_cameras_from_layout(layout, byref(cal), byref(err)), err)
            else:
                raise ValueError(f"triangulate: the det holds {d.contents.camera_count} cameras: "
                                 f"give their calibration (cameras=)")
            names = _strings(d.contents.names, d.contents.joint_count)
            pairs = []
            if rig is not None:
                for b in range(rig.bone_count):
                    a = C.am_mdet_find_joint(d, rig._joint_names[rig._c.head_joint[b]].encode())
                    c = C.am_mdet_find_joint(d, rig._joint_names[rig._c.tail_joint[b]].encode())
                    if a >= 0 and c >= 0 and a != c:
                        pairs.append((a, c))
            elif edges is not None:
                for a, b in edges:
                    for n in (a, b):
                        if n not in names:
                            raise ValueError(f"triangulate: edges: '{n}' is not a joint of the det")
                    pairs.append((names.index(a), names.index(b)))
            e = np.ascontiguousarray(np.array(pairs, dtype=np.int32).reshape(-1, 2))
            opts.edges = e.ctypes.data_as(POINTER(ctypes.c_int32))
            opts.edge_count = len(pairs)
            C.am_calib_check(cal)  # its warnings join the call's
            s = C.am_triangulate(d, cal, byref(opts), byref(tri), byref(err))
            if s < 0:
                C.am_error_set_file(byref(err), where)
                _raise(s, err)
            _doc_warnings(tri.contents.warnings, stacklevel=3)
        result = Triangulation(tri, d, owned, keep)
        # what save(report=, render=) draws: the calibration and the edges, alive with it
        result._pictures = {"cameras": _Owned(cal, C.am_calib_free), "edges": e,
                            "title": _path(det) if det_is_path else b"arrays"}
        tri, d, cal = None, None, None  # the result owns them now
        return result
    finally:
        if tri:
            C.am_triangulation_free(tri)
        if owned and d:
            C.am_mdet_free(d)
        if cal:
            C.am_calib_free(cal)
        if cr:
            C.am_creature_free(cr)


# ---- solve: a rig fitted to 2D joints, two views (capture.h) or N cameras (multiview.h) ----

class _Owned:
    """A library result freed when the last view of it goes."""

    def __init__(self, pointer, free):
        self.p, self._free = pointer, free

    def __del__(self):
        if getattr(self, "p", None):
            self._free(self.p)
            self.p = None


class SolveResult:
    """What solve returns (`anymove solve`'s outputs).

    motion: the fitted Motion bound to the rig (euler (T, B, 3) radians, trans (T, 3) metres,
    ...; its save() writes the CLI's motion.json); joints: (T, J, 3) float64 metres, its FK
    keypoints; report: the text of report.txt (quality-gate verdicts); reproj_px: {view or
    camera: mean reprojection error, px}; offsets: {camera: frames added to its index} (N
    cameras) or None; contact_names (C) and contact (T, C) uint8, 1 = planted; seconds."""

    def __init__(self, owner, motion_ptr, rig, report, reproj_px, offsets, contact_names,
                 contact, seconds):
        self._owner = owner
        self.motion = Motion(motion_ptr, rig, owned=False, keep=(owner,))
        self.joints = self.motion.joints
        self.report, self.reproj_px, self.offsets = report, reproj_px, offsets
        self.contact_names, self.contact, self.seconds = contact_names, contact, seconds

    def save(self, directory, *, report=False, render=False, three_dir=None):
        """Write what `anymove solve -o DIR [--report] [--render]` writes into directory, all
        together or nothing (an output set): motion.json, animation.glb (clip "capture"),
        angles.csv, angles.mot, report.txt, and with report=True report.html + report_three.js,
        with render=True render_layout.png (N cameras: render_cameras.png) and
        render_three_quarter.png, drawn by the library's am_pictures_write, the CLI's code.
        three_dir: the npm package three for the report's viewer (default $AM_THREE_DIR, else
        .deps/npm/node_modules/three beside the library's build folder, as the CLI looks)."""
        rig, mo = self.motion.rig, self.motion
        inp = self._inputs
        pic = C.am_pictures(report=bool(report), render=bool(render), title=inp["title"],
                            rig=rig._p, motion=mo._p, glb=b"animation.glb",
                            through_cameras=inp.get("cameras") is not None,
                            det=inp.get("det"), mdet=inp.get("mdet"), cameras=inp.get("cameras"),
                            creature=inp["creature"].p if inp["creature"] else None)
        text = self.report.encode()
        pic.gate_text = text  # report.txt, shown as written
        pic.three_dir = _three_dir(three_dir) if report else None
        err = C.am_error()
        with _picture_set(directory, ["motion.json", "animation.glb", "angles.csv", "angles.mot", "report.txt"],
                          pic, err) as (st, at):
            _check(C.am_motion_write(mo._p, at("motion.json"), byref(err)), err)
            _check(C.am_angles_csv_write(at("angles.csv"), rig._p, mo._p, byref(err)), err)
            _check(C.am_angles_mot_write(at("angles.mot"), rig._p, mo._p, byref(err)), err)
            _write_clips_glb(rig, [mo], ["capture"], at("animation.glb"), mesh=False)
            _check(C.am_file_write(at("report.txt"), text, len(text), byref(err)), err)
            _check(C.am_pictures_write(byref(pic), st, byref(err)), err)

    def __repr__(self):
        px = ", ".join(f"{k} {v:.3g}" for k, v in self.reproj_px.items())
        return f"<anymove.SolveResult {self.motion.frame_count} frames, reprojection px: {px}>"


@contextlib.contextmanager
def _picture_set(directory, names, pic, err):
    """The output set of a result's files (names) and its pictures (the members pic adds),
    as the CLI's: yields (set, at), at(name) the path to write a member at; committed together
    when the block ends, aborted (nothing left in directory) when it raises."""
    extra = (c_char_p * 4)()
    n = ctypes.c_size_t(0)
    C.am_pictures_names(byref(pic), extra, byref(n))
    names = list(names) + [extra[i].decode() for i in range(n.value)]
    enc, enc_c = _cstrings(names)
    with _Call() as call:
        pic.ctx = call.ctx
        st = C._OS()
        _check(C.am_outset_open(_path(directory), enc_c, len(enc), byref(st), byref(err)), err)
        try:
            yield st, (lambda name: C.am_outset_path(st, name.encode()))
        except BaseException:
            C.am_outset_blame(st, byref(err))
            C.am_outset_abort(st)
            raise
        _check(C.am_outset_commit(st, byref(err)), err)


def _three_dir(given):
    """The npm package three the report's viewer embeds: given, $AM_THREE_DIR, or
    .deps/npm/node_modules/three up to three folders above the library (the CLI's lookup from
    its own binary), else None (the page says the viewer needs it)."""
    import os
    cands = [given] if given else []
    if os.environ.get("AM_THREE_DIR"):
        cands.append(os.environ["AM_THREE_DIR"])
    d = os.path.dirname(os.path.abspath(LIBRARY_PATH))
    for _ in range(3):
        cands.append(os.path.join(d, ".deps", "npm", "node_modules", "three"))
        d = os.path.dirname(d)
    for c in cands:
        if c and os.path.exists(os.path.join(c, "build", "three.module.js")):
            return os.fsencode(c)
    return None


def _report_text(fn, res):
    buf = C.am_buf()
    try:
        fn(res, byref(buf))
        if buf.failed:
            raise MemoryError("report")
        return ctypes.string_at(buf.data, buf.len).decode() if buf.data else ""
    finally:
        C.am_buf_free(byref(buf))


def solve(det, rig, creature=None, cameras=None, *, scale=1.0, max_offset=None, offsets=True,
          search_offsets=False, warp=True, swap_repair=True, contacts=True, foot_lock=True,
          iterations=None, window=None, progress=None):
    """Fit a rig to 2D joints (`anymove solve`): two views (det.npz of SPEC 4.2, the
    orthographic views of SPEC 3) or, with cameras, N calibrated cameras (SPEC 4.2.1).

    det: the det.npz path, or (N cameras) a mapping of arrays as triangulate takes them
    (uv, conf float32 or float64 read in place, cameras, names, fps); rig: a Rig (or a rig path); creature: a creature.json path (the
    layout of the two views, the contact joints), None = the wolf layout and no contacts.
    cameras: a calibration.toml path (N cameras); scale: its length unit in metres;
    max_offset: per-camera time offsets searched, +- frames (default 12); offsets=False:
    none searched (--no-offsets); search_offsets: even when the det carries time_offset.
    warp=False (two views): never time-warp the front view; swap_repair, contacts,
    foot_lock = False: the CLI's --no-swap-repair, --no-contacts, --no-foot-lock;
    iterations: LM iterations per stage (1..1000); window: frames per window (8..100000).
    progress(stage, fraction, seconds) -> False to cancel.
    Returns a SolveResult (motion, joints (T, J, 3) metres, report text, reproj_px, ...)."""
    import os
    if not isinstance(rig, Rig):
        rig = load_rig(rig)
    if iterations is not None and not 1 <= iterations <= 1000:
        raise ValueError("solve: iterations must be in 1..1000")
    if window is not None and not 8 <= window <= 100000:
        raise ValueError("solve: window must be in 8..100000 frames")
    if cameras is None and (scale != 1.0 or max_offset is not None or not offsets or search_offsets):
        raise ValueError("solve: scale and the offset options are for N cameras: they need cameras")
    if cameras is not None and not warp:
        raise ValueError("solve: warp is the two-view lag's; with cameras use offsets=False")
    if max_offset is not None and not 1 <= max_offset <= 1000:
        raise ValueError("solve: max_offset must be in 1..1000")
    if not scale > 0:
        raise ValueError("solve: scale must be positive")
    err = C.am_error()
    call = _Call(progress)
    cr = C._CR()
    det_is_path = isinstance(det, (str, bytes, os.PathLike))
    if not det_is_path and cameras is None and not _is_two_view(det):
        raise ValueError("solve: detections as arrays of other cameras than front and side need cameras "
                         "(their calibration)")
    det_path = _path(det) if det_is_path else det
    try:
        with call:
            if creature is not None:
                _check(C.am_creature_load(_path(creature), byref(cr), byref(err)), err)
            if cameras is None:
                res = _solve_two_view(det_path, rig, cr, call, warp, swap_repair, contacts,
                                      foot_lock, iterations, window)
            else:
                res = _solve_cameras(det_path, _path(cameras), scale, rig, cr, call, max_offset,
                                     offsets, search_offsets, swap_repair, contacts, foot_lock,
                                     iterations, window)
        # what save(report=, render=) draws: the inputs, alive with the result
        res._inputs["creature"] = _Owned(cr, C.am_creature_free) if cr else None
        res._inputs["title"] = os.fsencode(det) if det_is_path else b"arrays"
        cr = None
        return res
    finally:
        if cr:
            C.am_creature_free(cr)


def _solve_two_view(det_path, rig, cr, call, warp, swap_repair, contacts, foot_lock, iterations,
                    window):
    err = C.am_error()
    o = C.am_capture_opts(ctx=call.ctx)
    o.flags = ((0 if warp else C.AM_CAPTURE_NO_WARP) |
               (0 if swap_repair else C.AM_CAPTURE_NO_SWAP_REPAIR) |
               (0 if contacts else C.AM_CAPTURE_NO_CONTACTS) |
               (0 if foot_lock else C.AM_CAPTURE_NO_FOOT_LOCK))
    o.iterations = iterations or 0
    o.window = window or 0
    det = ctypes.c_void_p()
    res = POINTER(C.am_capture_result)()
    is_path = isinstance(det_path, bytes)
    keep = ()
    try:
        if is_path:
            _check(C.am_det_load(det_path, byref(det), byref(err)), err)
        else:  # the caller's arrays, read in place (am_det's views)
            view, keep = _two_view_view(det_path, "solve")
            det = ctypes.cast(view, ctypes.c_void_p)
        s = C.am_capture_solve(det, rig._p, cr, byref(o), byref(res), byref(err))
        if s < 0:
            C.am_error_set_file(byref(err), det_path if is_path else None)
            _raise(s, err)
        owner = _Owned(res, C.am_capture_result_free)
        res = None  # the owner frees it now
        r = owner.p.contents
        _doc_warnings(r.warnings, stacklevel=4)
        report = _report_text(C.am_capture_report, owner.p)
        names = _strings(r.contact_names, r.contact_count) or []
        T = r.motion.contents.frame_count
        contact = _array(owner, r.contact, (T, len(names)), "|u1") if names else np.zeros((T, 0), np.uint8)
        out = SolveResult(owner, r.motion, rig, report,
                          {"front": r.reproj_front, "front_x": r.reproj_front_x,
                           "side": r.reproj_side}, None, names, contact, r.seconds_total)
        out._inputs = {"det": det, "keep": (_Owned(det, C.am_det_free) if is_path else None, keep)}
        det = None  # the result holds it now
        return out
    finally:
        if res:
            C.am_capture_result_free(res)
        if det and is_path:
            C.am_det_free(det)


def _solve_cameras(det_path, cal_path, scale, rig, cr, call, max_offset, offsets, search_offsets,
                   swap_repair, contacts, foot_lock, iterations, window):
    err = C.am_error()
    mo = C.am_mv_solve_opts(ctx=call.ctx)
    mo.max_offset = -1 if not offsets else (max_offset or 0)
    mo.flags = C.AM_MV_SEARCH_OFFSETS if search_offsets else 0
    mo.fit.flags = ((0 if swap_repair else C.AM_FIT_NO_SWAP_REPAIR) |
                    (0 if foot_lock else C.AM_FIT_NO_FOOT_LOCK) |
                    (0 if contacts else C.AM_FIT_NO_CONTACTS))
    mo.fit.iterations = iterations or 0
    mo.fit.window = window or 0
    cal = C._CAL()
    det = POINTER(C.am_mdet)()
    res = POINTER(C.am_mv_solve_result)()
    is_path = True
    try:
        ro = C.am_calib_read_opts(scale=float(scale))
        _check(C.am_calib_load(cal_path, byref(ro), byref(cal), byref(err)), err)
        is_path = isinstance(det_path, bytes)
        if is_path:
            _check(C.am_mdet_load(det_path, byref(det), byref(err)), err)
        else:  # the caller's arrays, read in place
            det, keep = _det_view(det_path, "solve")
        s = C.am_mv_solve(det, cal, rig._p, cr, byref(mo), byref(res), byref(err))
        if s < 0:
            C.am_error_set_file(byref(err), det_path if is_path else None)
            _raise(s, err)
        owner = _Owned(res, C.am_mv_solve_result_free)
        res = None  # the owner frees it now
        r = owner.p.contents
        f = r.fit.contents
        _doc_warnings(r.warnings, stacklevel=4)
        cams = _strings(f.camera_names, f.camera_count)
        # report.txt as the CLI writes it: the fit's report and the offsets line
        report = _report_text(C.am_fit_report, r.fit)
        report += ("time offsets (frames added to each camera's index, %s):"
                   % ("found" if r.offsets_found else "as given"))
        for c in range(r.camera_count):
            report += " %s %+g" % (cams[c], r.offsets[c])
            if np.isfinite(r.gap_px[c]):
                report += " (gap %.1f px, %.1f unshifted)" % (r.gap_px[c], r.gap0_px[c])
        report += "\n"
        names = _strings(f.contact_names, f.contact_count) or []
        T = f.motion.contents.frame_count
        contact = _array(owner, f.contact, (T, len(names)), "|u1") if names else np.zeros((T, 0), np.uint8)
        out = SolveResult(owner, f.motion, rig, report,
                          {c: float(f.reproj_px[i]) for i, c in enumerate(cams)},
                          {c: float(r.offsets[i]) for i, c in enumerate(cams)}, names, contact,
                          f.seconds)
        out._inputs = {"mdet": det, "cameras": cal,
                       "keep": (_Owned(det, C.am_mdet_free) if is_path else keep,
                                _Owned(cal, C.am_calib_free))}
        det, cal = None, None  # the result holds them now
        return out
    finally:
        if res:
            C.am_mv_solve_result_free(res)
        if det and is_path:
            C.am_mdet_free(det)
        if cal:
            C.am_calib_free(cal)


# ---- Track2Rig: 3D point tracks -> bones, skin weights, a rig and its motion (decompose.h) ----

def _detach(field, cls):
    """A pointer of its own to what a struct's pointer field points at (the field read as is
    is a view of the struct, which changes when the field is cleared)."""
    return ctypes.cast(ctypes.c_void_p(ctypes.cast(field, ctypes.c_void_p).value), POINTER(cls))


class Decomposition:
    """What rig_from_tracks returns (`anymove rig`'s outputs, as arrays).

    rig: the articulated Rig (one bone per cluster; its save() writes the CLI's rig.json);
    motion: its Motion (with joints; save() writes motion.json); rest: (N, 3) float32 rest
    positions of the points, metres; bone_index: (N, 4) int32 and weight: (N, 4) float32 (>= 0,
    rows sum to 1), the skin (skin.npz); xform: (T, B, 3, 4) float64 skinning transforms rest ->
    frame t, [R | t]; translating: (B,) uint8, bones with translation channels; body_size
    (metres), err_visible, err_visible_free (% of body size), noise_floor, iterations,
    auto_err (error curve of --bones auto, or None). Arrays are views, alive with them."""

    def __init__(self, pointer):
        self._p = pointer
        self._c = pointer.contents
        # the rig and the motion become Python objects of their own (freed with them)
        self.rig = Rig(_detach(self._c.rig, C.am_rig))
        self.motion = Motion(_detach(self._c.motion, C.am_motion), self.rig)
        self._c.rig = None
        self._c.motion = None

    def __del__(self):
        if getattr(self, "_p", None):
            C.am_decomposition_free(self._p)
            self._p = None

    frame_count = property(lambda self: int(self._c.frame_count))
    point_count = property(lambda self: int(self._c.point_count))
    bone_count = property(lambda self: int(self._c.bone_count))
    fps = property(lambda self: float(self._c.fps))
    rest = property(lambda self: _array(self, self._c.rest, (self.point_count, 3), "<f4"))
    bone_index = property(lambda self: _array(self, self._c.bone_index, (self.point_count, 4), "<i4"))
    weight = property(lambda self: _array(self, self._c.weight, (self.point_count, 4), "<f4"))
    xform = property(lambda self: _array(self, self._c.xform,
                                         (self.frame_count, self.bone_count, 3, 4)))
    translating = property(lambda self: _array(self, self._c.translating, (self.bone_count,), "|u1"))
    body_size = property(lambda self: float(self._c.body_size))
    err_visible = property(lambda self: float(self._c.err_visible))
    err_visible_free = property(lambda self: float(self._c.err_visible_free))
    noise_floor = property(lambda self: float(self._c.noise_floor))
    iterations = property(lambda self: int(self._c.iterations))
    auto_err = property(lambda self: _array(self, self._c.auto_err, (int(self._c.auto_count),))
                        if self._c.auto_count else None)

    def save(self, directory):
        """Write what `anymove rig -o DIR` writes into directory (made if absent), each file
        atomically: rig.json, skin.npz (rest, bone_index, weight), motion.json, rig.glb (the
        points, or the surface when the tracks have faces, skinned and animated: clip
        "track2rig") and report.json (the CLI's but for the seconds it took)."""
        import os
        os.makedirs(directory, exist_ok=True)
        d = os.fsencode(directory)
        err = C.am_error()
        c = self._c
        N, K = self.point_count, 4
        t2 = time.perf_counter()
        with _Call():
            self.rig.save(os.path.join(directory, "rig.json"))
            s_rest, s_k = (ctypes.c_size_t * 2)(N, 3), (ctypes.c_size_t * 2)(N, K)
            skin = (C.am_array * 3)(C.am_array_view(b"rest", C.AM_DTYPE_F32, 2, s_rest, c.rest),
                                    C.am_array_view(b"bone_index", C.AM_DTYPE_I32, 2, s_k, c.bone_index),
                                    C.am_array_view(b"weight", C.AM_DTYPE_F32, 2, s_k, c.weight))
            _check(C.am_npz_write(os.path.join(d, b"skin.npz"), skin, 3, True, byref(err)), err)
            self.motion.save(os.path.join(directory, "motion.json"))
            faces = self._faces
            mesh = C.am_gltf_mesh_in(vertex_count=N, positions=c.rest,
                                     triangle_count=0 if faces is None else len(faces),
                                     triangles=(faces.ctypes.data_as(POINTER(ctypes.c_int32))
                                                if faces is not None and len(faces) else None),
                                     influences=K, bone_index=c.bone_index, weights=c.weight)
            clips = (POINTER(C.am_motion) * 1)(self.motion._p)
            names, names_c = _cstrings(["track2rig"])
            ex = C.am_gltf_export(rig=self.rig._p, clip_count=1, clips=clips, clip_names=names_c,
                                  mesh=ctypes.cast(ctypes.pointer(mesh), ctypes.c_void_p), source_skin=0)
            _check(C.am_gltf_write(byref(ex), os.path.join(d, b"rig.glb"), byref(err)), err)
            t3 = time.perf_counter()
            rep = C.am_decompose_report(result=self._p, opts=ctypes.pointer(self._opts),
                                        face_count=0 if faces is None else len(faces),
                                        hidden_share=self._hidden_share, seconds_load=self._seconds_load,
                                        seconds_write=t3 - t2, seconds_total=self._seconds_load + self._seconds_run + (t3 - t2))
            c.rig = self.rig._p  # the report names the rig's bones (lent back for the call)
            try:
                _check(C.am_decompose_report_write(byref(rep), os.path.join(d, b"report.json"),
                                                   byref(err)), err)
            finally:
                c.rig = None

    def __repr__(self):
        return (f"<anymove.Decomposition {self.bone_count} bones, {self.point_count} points, "
                f"error {self.err_visible:.3g}% of body size>")


def _tracks_view(tracks):
    """An am_tracks over the caller's arrays (float32 C-contiguous points used in place unless
    hidden entries must be set to NaN, as the loader does), checked as am_tracks_load checks."""
    pts = np.ascontiguousarray(tracks["points"], dtype=np.float32)
    if pts.ndim != 3 or pts.shape[2] != 3 or 0 in pts.shape:
        raise ValueError(f"rig_from_tracks: points must have shape (T, N, 3), got {pts.shape}")
    T, N = pts.shape[:2]
    vis = tracks.get("visible")
    vis = (np.isfinite(pts).all(axis=2) if vis is None else np.asarray(vis)).astype(np.uint8)
    vis = np.ascontiguousarray(vis)
    if vis.shape != (T, N):
        raise ValueError(f"rig_from_tracks: visible must have shape {(T, N)}, got {vis.shape}")
    if not np.isfinite(pts[vis.astype(bool)]).all():
        raise ValueError("rig_from_tracks: a visible point is NaN or infinite")
    hidden = ~vis.astype(bool)
    if hidden.any() and not np.isnan(pts[hidden]).all():
        pts = pts.copy()
        pts[hidden] = np.nan
    faces = tracks.get("faces")
    if faces is not None:
        faces = np.ascontiguousarray(faces, dtype=np.int32)
        if faces.ndim != 2 or faces.shape[1] != 3 or (faces.size and not (0 <= faces.min() and faces.max() < N)):
            raise ValueError("rig_from_tracks: faces must be (F, 3) point indices")
    fps = float(tracks.get("fps", 30.0))
    if not (1e-3 <= fps <= 1e4):
        raise ValueError("rig_from_tracks: fps must be in [1e-3, 1e4]")
    t = C.am_tracks(frame_count=T, point_count=N, face_count=0 if faces is None else len(faces),
                    points=pts.ctypes.data_as(C._fp),
                    visible=vis.ctypes.data_as(POINTER(ctypes.c_uint8)),
                    faces=faces.ctypes.data_as(POINTER(ctypes.c_int32)) if faces is not None else None,
                    fps=fps)
    return ctypes.pointer(t), (t, pts, vis, faces)


def rig_from_tracks(tracks, *, bones=None, method="ours", rig="auto", iterations=None,
                    max_bones=None, smooth=None, knn=None, threads=None, scale=1.0,
                    progress=None):
    """Track2Rig (`anymove rig`): 3D point tracks -> bones, sparse skin weights, per-frame bone
    transforms and an articulated rig with its motion.

    tracks: a tracks.npz path (SPEC 4.1) or a mapping of arrays: points (T, N, 3) metres (world
    axes; float32 C-contiguous is used in place), visible (T, N) bool (default: the finite
    points), faces (F, 3) or absent, fps. bones: the bone count (1..64), None = auto;
    method: "ours" or "ssdr" (the baseline); rig: "auto", "articulated", "hierarchical" or
    "free" (which bones translate); iterations (1..10000), max_bones (1..64), smooth (>= 0),
    knn (1..64), threads (1..8; results are deterministic for a given count): the CLI's
    options; scale: metres per unit of the tracks. progress(stage, fraction, seconds).
    Returns a Decomposition (rig, motion, rest, bone_index, weight, xform, ...)."""
    import os
    o = C.am_decompose_opts()
    if method not in C.DECOMPOSE_METHODS:
        raise ValueError(f"rig_from_tracks: method is ours or ssdr, got {method!r}")
    if rig not in C.RIG_MODES:
        raise ValueError(f"rig_from_tracks: rig is one of {', '.join(C.RIG_MODES)}, got {rig!r}")
    o.method, o.rig_mode = C.DECOMPOSE_METHODS[method], C.RIG_MODES[rig]
    for name, v, lo, hi in (("bones", bones, 1, 64), ("iterations", iterations, 1, 10000),
                            ("max_bones", max_bones, 1, 64), ("knn", knn, 1, 64),
                            ("threads", threads, 1, 8)):
        if v is not None:
            if not (isinstance(v, (int, np.integer)) and lo <= v <= hi):
                raise ValueError(f"rig_from_tracks: {name} must be an integer in {lo}..{hi}")
            setattr(o, name, int(v))
    if smooth is not None:
        if not smooth >= 0:
            raise ValueError("rig_from_tracks: smooth must be >= 0")
        o.smooth = float(smooth) if smooth > 0 else -1.0  # 0 = off (the default is 1)
    if not scale > 0:
        raise ValueError("rig_from_tracks: scale must be positive")
    err = C.am_error()
    call = _Call(progress)
    o.ctx = call.ctx
    tr = POINTER(C.am_tracks)()
    out = POINTER(C.am_decomposition)()
    owned, keep = True, ()
    is_path = isinstance(tracks, (str, bytes, os.PathLike))
    t0 = time.perf_counter()
    try:
        with call:
            if is_path:
                _check(C.am_tracks_load(_path(tracks), byref(tr), byref(err)), err)
            else:
                tr, keep = _tracks_view(tracks)
                owned = False
                if scale != 1.0:  # never the caller's array
                    pts = keep[1] * np.float32(scale) if keep[1] is not None else None
                    keep = (keep[0], pts) + keep[2:]
                    tr.contents.points = pts.ctypes.data_as(C._fp)
            if is_path and scale != 1.0:
                C.am_tracks_scale(tr, float(scale))
            t1 = time.perf_counter()
            tc = tr.contents
            n = tc.frame_count * tc.point_count
            hidden = n - int(np.count_nonzero(np.ctypeslib.as_array(tc.visible, (n,)))) if n else 0
            faces = (np.ctypeslib.as_array(tc.faces, (tc.face_count, 3)).copy()
                     if tc.face_count and tc.faces else None)
            s = C.am_decompose_run(tr, byref(o), byref(out), byref(err))
            if s < 0:
                if is_path:
                    C.am_error_set_file(byref(err), _path(tracks))
                _raise(s, err)
            _doc_warnings(out.contents.warnings, stacklevel=3)
        result = Decomposition(out)
        out = None
        result._opts, result._faces = o, faces
        result._hidden_share = hidden / n if n else 0.0
        result._seconds_load, result._seconds_run = t1 - t0, time.perf_counter() - t1
        return result
    finally:
        if out:
            C.am_decomposition_free(out)
        if owned and tr:
            C.am_tracks_free(tr)


# ---- retargeting: a motion of one rig onto another (retarget.h) ----

class RetargetResult:
    """What retarget returns (`anymove retarget`'s outputs). motion: the target's Motion
    (bound to the target rig, joints filled; save() writes the CLI's motion.json); joints:
    (T, J, 3) metres; map: {source bone: target bone or None} and rules: {target bone: how it
    got its driver} (map.json); report: report.json as a dict (factors, contacts, plants,
    chains, the seconds taken)."""

    def __init__(self, motion, bone_map, rules, report, names, report_text):
        self.motion, self.map, self.rules, self.report = motion, bone_map, rules, report
        self.joints = motion.joints
        self._names = names
        self._report_text = report_text

    def save_rig(self, path):
        """Write rig.json of the target rig as used (scaled as loaded; a glTF target's "model"
        the absolute path of its file), the CLI's rig.json."""
        self.motion.rig.save(path)

    def save_animation(self, path, *, mesh=True, clip_name="clip0"):
        """Write animation.glb as the CLI does: the target character of a skinned .glb / .gltf
        target (its mesh, materials and skin kept; mesh=False: bone shapes, --no-mesh) with the
        clip named clip_name (the CLI's name of a BVH or motion.json source's clip: "clip0";
        a glTF source's clip: its name, its last '|' part, other characters than [A-Za-z0-9_-]
        as '_'), else a skinned bone-shape mesh."""
        _write_clips_glb(self.motion.rig, [self.motion], [clip_name], path, mesh)

    def save(self, directory, *, mesh=True, clip_name="clip0"):
        """Write what `anymove retarget -o DIR` writes into directory (made if absent):
        motion.json, rig.json (save_rig), map.json, animation.glb (save_animation),
        animation.bvh and report.json (the CLI's bytes but for the seconds in report.json)."""
        import os
        os.makedirs(directory, exist_ok=True)
        self.motion.save(os.path.join(directory, "motion.json"))
        self.save_rig(os.path.join(directory, "rig.json"))
        self.save_map(os.path.join(directory, "map.json"))
        self.save_animation(os.path.join(directory, "animation.glb"), mesh=mesh, clip_name=clip_name)
        save_motion(self.motion.rig, self.motion, os.path.join(directory, "animation.bvh"))
        _write_text(os.path.join(directory, "report.json"), self._report_text)

    def save_map(self, path):
        """Write map.json as the CLI does; retarget(map=path) reads it back as overrides."""
        err = C.am_error()
        with _Call():
            _check(C.am_bone_map_write(self._names.p, _path(path), byref(err)), err)


class RetargetClips:
    """What retarget(..., all_clips=True) returns (`anymove retarget --all-clips`): clips, a
    dict {clip file name: RetargetResult} in the source's clip order (names as the CLI's
    files: am_clip_file_name); map, rules: the bone map all share; report: {"clips": {name:
    report.json of the clip}}. save(dir) writes the CLI's files."""

    def __init__(self, clips):
        self.clips = clips
        first = next(iter(clips.values()))
        self.map, self.rules, self.rig = first.map, first.rules, first.motion.rig
        self.report = {"clips": {k: r.report for k, r in clips.items()}}

    def save(self, directory, *, mesh=True):
        """motion_<clip>.json and animation_<clip>.bvh per clip, rig.json, animation.glb (every
        clip, named as its files, on the target's character unless mesh=False), map.json and
        report.json, as `anymove retarget --all-clips -o DIR` (its bytes but for the seconds)."""
        import os
        os.makedirs(directory, exist_ok=True)
        for name, r in self.clips.items():
            r.motion.save(os.path.join(directory, f"motion_{name}.json"))
            save_motion(self.rig, r.motion, os.path.join(directory, f"animation_{name}.bvh"))
        first = next(iter(self.clips.values()))
        first.save_rig(os.path.join(directory, "rig.json"))
        _write_clips_glb(self.rig, [r.motion for r in self.clips.values()], list(self.clips),
                         os.path.join(directory, "animation.glb"), mesh)
        first.save_map(os.path.join(directory, "map.json"))
        text = '{"clips": {' + "".join(f'{", " if i else ""}"{name}": {r._report_text}'
                                       for i, (name, r) in enumerate(self.clips.items())) + "}}\n"
        _write_text(os.path.join(directory, "report.json"), text)

    def __repr__(self):
        return f"<anymove.RetargetClips {', '.join(self.clips)}>"


def _write_text(path, text):
    import os
    tmp = os.path.join(os.path.dirname(path) or ".", "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _write_clips_glb(rig, motions, clip_names, path, mesh):
    """animation.glb of the CLI: the clips on the glTF character rig was loaded from (its mesh,
    materials and skin kept) unless mesh=False or rig came from elsewhere, else bone shapes."""
    src, scale = rig._loaded
    err = C.am_error()
    clips = (POINTER(C.am_motion) * len(motions))(*[m._p for m in motions])
    names, names_c = _cstrings(clip_names)
    doc = POINTER(C.am_gltf_head)()
    with _Call():
        try:
            if mesh and src is not None and _is_gltf(src):
                o = C.am_gltf_opts(flags=C.AM_GLTF_KEEP_SOURCE)
                _check(C.am_gltf_load(_path(src), byref(o), byref(doc), byref(err)), err)
            ex = C.am_gltf_export(rig=rig._p, clip_count=len(motions), clips=clips, clip_names=names_c,
                                  source=ctypes.cast(doc, ctypes.c_void_p) if doc else None,
                                  source_skin=-1)
            _check(C.am_gltf_write(byref(ex), _path(path), byref(err)), err)
        finally:
            if doc:
                C.am_gltf_free(doc)


def _retarget_pose(arg, rig, frames_of, what, keep):
    """--source-pose / --target-pose: (motion, frame). arg: a frame number of the clip at hand
    (frames_of), a Motion bound to rig (its frame 0, or (Motion, frame)), or a motion.json
    path of rig (scaled as the rig was loaded, as the CLI's --scale / --target-scale)."""
    if isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
        if frames_of is None:
            raise ValueError(f"{what}: pose frame {arg}: there is no clip to take it from "
                             f"(give a motion.json)")
        if not 0 <= arg < frames_of.frame_count:
            raise ValueError(f"{what}: pose frame {arg}: the clip has {frames_of.frame_count} frames")
        return frames_of, int(arg)
    frame = 0
    if isinstance(arg, tuple):
        arg, frame = arg
    if not isinstance(arg, Motion):
        arg = load_motion(arg, rig)
        if rig._loaded[1] != 1.0:
            C.am_motion_scale(arg._p, rig._loaded[1])
    _check_bound(rig, arg, what)
    if not 0 <= frame < arg.frame_count:
        raise ValueError(f"{what}: frame {frame}: the pose motion has {arg.frame_count} frames")
    keep.append(arg)
    return arg, frame


def _target_clip(rig):
    """The first clip of a glTF target at its own rate, scaled as the rig (the CLI's frames of
    --target-pose FRAME), or None."""
    src = rig._loaded[0]
    if src is None or not _is_gltf(src):
        return None
    err = C.am_error()
    with _Call():
        doc = _gltf_load(src, err)
        try:
            if not doc.contents.animation_count:
                return None
            return _gltf_motion(doc, rig, 0, C.am_gltf_clip_rate(doc, 0), err)
        finally:
            C.am_gltf_free(doc)


def _gltf_clips(rig, what):
    """Every clip of the glTF rig was loaded from, each at its own key rate and scaled as the
    rig (the rest pose, "rest", for a document without clips): {file name: Motion}, as
    `retarget --all-clips` reads its source."""
    src = rig._loaded[0]
    if src is None or not _is_gltf(src):
        raise ValueError(f"{what}: all_clips takes the clips of a .glb / .gltf source: load its rig "
                         f"with load_rig")
    err = C.am_error()
    clips = {}
    with _Call():
        doc = _gltf_load(src, err)
        try:
            n = doc.contents.animation_count
            anims = ctypes.cast(doc.contents.animations, POINTER(C.am_gltf_animation))
            for i in range(n or 1):
                anim = i if n else -1
                m = _gltf_motion(doc, rig, anim, C.am_gltf_clip_rate(doc, anim), err)
                buf = ctypes.create_string_buffer(96)
                name = C.am_clip_file_name(anims[anim].name if n else b"rest", i, buf, len(buf)).decode()
                if name in clips:
                    raise ValueError(f"{what}: two clips of {src} make the same file name {name}")
                clips[name] = m
        finally:
            C.am_gltf_free(doc)
    return clips


def retarget(source_rig, source, target_rig, *, map=None, pose="align", align_min=None,
             root="scale", root_scale=None, ik="feet", source_pose=None, target_pose=None,
             all_clips=False, progress=None):
    """Retarget (`anymove retarget`): the motion `source` of source_rig onto target_rig.

    source_rig, target_rig: Rigs (load_rig of rig.json, a skinned .glb or a .bvh, scaled to
    metres); source: a Motion bound to source_rig (load_motion(path, source_rig), load_bvh).
    map: a map.json path whose entries override the automatic bone map (--map); pose: "align"
    (limbs posed like the source's before deltas transfer) or "delta"; align_min: degrees in
    0..90, align re-aims a limb bone of another design only when that turns it this far or more
    (default 10; 0: every bone); root: "scale" (root
    motion scaled by the leg ratio) or "keep"; root_scale: h or (h, v) factors; ik: "feet",
    "feet+hands" or "none". source_pose: a pose of the source that matches the target's rest
    (--source-pose FILE|FRAME): a frame number of source, a motion.json path of source_rig (its
    frame 0), a Motion bound to source_rig or (Motion, frame); target_pose: a pose of the target
    that matches the source's rest (--target-pose): a motion.json path, a Motion or (Motion,
    frame) of target_rig, or a frame number of the first clip of the glTF target_rig was
    loaded from. progress(stage, fraction, seconds) -> False to cancel.
    all_clips=True (--all-clips): every clip of the glTF source_rig was loaded from (load_rig),
    each at its own rate and scaled as the rig; source must be None; a source_pose frame
    number is a frame of its first clip. Returns a RetargetClips then.
    Returns a RetargetResult (motion, joints (T, J, 3) metres, map, rules, report; save()
    and save_animation() write the CLI's files, the character's mesh included)."""
    import json as _json
    if all_clips:
        if source is not None:
            raise ValueError("retarget: all_clips reads the clips of source_rig's glTF: give source=None")
        clips = _gltf_clips(source_rig, "retarget")
        first = next(iter(clips.values()))
        if isinstance(source_pose, (int, np.integer)) and not isinstance(source_pose, bool):
            if not 0 <= source_pose < first.frame_count:
                raise ValueError(f"retarget: source_pose: pose frame {source_pose}: the clip has "
                                 f"{first.frame_count} frames")
            source_pose = (first, int(source_pose))
        return RetargetClips({name: retarget(source_rig, m, target_rig, map=map, pose=pose,
                                             align_min=align_min, root=root, root_scale=root_scale,
                                             ik=ik, source_pose=source_pose, target_pose=target_pose,
                                             progress=progress)
                              for name, m in clips.items()})
    _check_bound(source_rig, source, "retarget")
    if pose not in C.RETARGET_POSES:
        raise ValueError(f"retarget: pose is align or delta, got {pose!r}")
    if root not in C.RETARGET_ROOTS:
        raise ValueError(f"retarget: root is scale or keep, got {root!r}")
    flags = {"feet": 0, "feet+hands": C.AM_RETARGET_IK_HANDS, "none": C.AM_RETARGET_NO_IK}
    if ik not in flags:
        raise ValueError(f"retarget: ik is feet, feet+hands or none, got {ik!r}")
    ro = C.am_retarget_opts(pose=C.RETARGET_POSES[pose], root=C.RETARGET_ROOTS[root], flags=flags[ik])
    if align_min is not None:
        if not 0 <= align_min <= 90:
            raise ValueError("retarget: align_min is degrees in 0..90")
        ro.align_min_deg = float(align_min) if align_min > 0 else -1.0
    if root_scale is not None:
        h, v = (root_scale, root_scale) if np.isscalar(root_scale) else tuple(root_scale)
        if not (h > 0 and v > 0 and np.isfinite(h) and np.isfinite(v)):
            raise ValueError("retarget: root_scale wants positive factors h or (h, v)")
        ro.scale_horizontal, ro.scale_vertical = float(h), float(v)
    poses = []  # alive through the call
    if source_pose is not None:
        m, f = _retarget_pose(source_pose, source_rig, source, "retarget: source_pose", poses)
        ro.source_pose, ro.source_pose_frame = m._p, f
    if target_pose is not None:
        clip = _target_clip(target_rig) if isinstance(target_pose, (int, np.integer)) else None
        m, f = _retarget_pose(target_pose, target_rig, clip, "retarget: target_pose", poses)
        ro.target_pose, ro.target_pose_frame = m._p, f
    err = C.am_error()
    call = _Call(progress)
    ro.ctx = call.ctx
    user = POINTER(C.am_bone_map)()
    rmap = POINTER(C.am_retarget_map)()
    names = POINTER(C.am_bone_map)()
    rep = C.am_retarget_report()
    have_rep = False
    out = POINTER(C.am_motion)()
    wl = C.am_warning_list()
    try:
        with call:
            if map is not None:
                _check(C.am_bone_map_load(_path(map), byref(user), byref(err)), err)
            mo = C.am_retarget_map_opts(overrides=user)
            s = C.am_retarget_map_build(source_rig._p, target_rig._p, byref(mo), byref(rmap), byref(err))
            if s < 0:
                if map is not None:
                    C.am_error_set_file(byref(err), _path(map))
                _raise(s, err)
            _doc_warnings(rmap.contents.warnings, stacklevel=3)
            T, B = source.frame_count, target_rig.bone_count
            _check(C.am_motion_create(target_rig._p, T, source.fps, byref(out), byref(err)), err)
            motion = Motion(out, target_rig)
            q = C.am_alloc_array(T * B * 4, ctypes.sizeof(c_double))
            if not q:
                raise MemoryError("retarget: motion")
            out.contents.quat = ctypes.cast(q, POINTER(c_double))
            job = C.am_retarget_job(source_rig=source_rig._p, source=source._p,
                                    target_rig=target_rig._p, map=rmap, opts=ctypes.pointer(ro),
                                    out=out, report=ctypes.pointer(rep), warnings=ctypes.pointer(wl))
            s = C.am_retarget_run(byref(job), byref(err))
            have_rep = True
            _emit_warnings(wl)
            _check(s, err)
            _check(C.am_motion_compute_joints(out, target_rig._p, byref(err)), err)
            _check(C.am_retarget_map_names(rmap, source_rig._p, target_rig._p, byref(names),
                                           byref(err)), err)
            n = names.contents
            bone_map = {n.source[i].decode(): (n.target[i].decode() if n.target[i] else None)
                        for i in range(n.count)}
            rules = {n.rule_bone[i].decode(): n.rule_text[i].decode() for i in range(n.rule_count)}
            text = _report_text(
                lambda r, b: C.am_retarget_report_json(r, rmap, source_rig._p, target_rig._p, b),
                ctypes.pointer(rep))
            report = _json.loads(text)
        owner = _Owned(names, C.am_bone_map_free)
        names = None
        return RetargetResult(motion, bone_map, rules, report, owner, text)
    finally:
        if have_rep:
            C.am_retarget_report_free(byref(rep))
        if names:
            C.am_bone_map_free(names)
        if rmap:
            C.am_retarget_map_free(rmap)
        if user:
            C.am_bone_map_free(user)
