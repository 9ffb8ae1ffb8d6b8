"""The C declarations of libanymove.so the binding calls (ctypes), mirroring include/anymove/.

Structures are declared field for field as the headers define them; tests/test_layout.py
compiles a C program that prints the headers' sizes and offsets and compares them with these,
so a header change that is not carried here fails the suite instead of corrupting memory.
"""
import ctypes
import os

import numpy as np
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_int,
                    c_int32, c_size_t, c_uint, c_uint8, c_uint32, c_uint64, c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_path():
    """ANYMOVE_LIBRARY, else the copy `pip install` put beside this file, else the build tree's."""
    env = os.environ.get("ANYMOVE_LIBRARY")
    if env:
        return env
    installed = os.path.join(_HERE, "libanymove.so")
    if os.path.exists(installed):
        return installed
    tree = os.path.join(_HERE, "..", "..", "build", "libanymove.so")
    if os.path.exists(tree):
        return os.path.abspath(tree)
    raise ImportError("anymove: libanymove.so not found: set ANYMOVE_LIBRARY, or `make build` "
                      "and then `pip install ./python`")


lib = ctypes.CDLL(_library_path())  # CDLL releases the GIL during every call
LIBRARY_PATH = lib._name


class am_error(Structure):
    _fields_ = [("code", c_int), ("what", c_char_p), ("file", c_char * 256),
                ("line", c_uint32), ("col", c_uint32), ("offset", c_uint64),
                ("src_line", c_uint32), ("src_file", c_char_p), ("info", c_char * 256)]


class am_allocator(Structure):
    _fields_ = [("alloc", c_void_p), ("realloc", c_void_p), ("free", c_void_p),
                ("user", c_void_p)]


class am_progress(Structure):
    _fields_ = [("stage", c_char_p), ("fraction", c_double), ("seconds", c_double)]


am_progress_fn = CFUNCTYPE(c_bool, c_void_p, POINTER(am_progress))


class am_context(Structure):
    _fields_ = [("allocator", am_allocator), ("max_bytes", c_uint64), ("max_allocs", c_uint64),
                ("progress", am_progress_fn), ("progress_user", c_void_p)]


class am_warning(Structure):
    _fields_ = [("kind", c_int), ("text", c_char * 240), ("count", c_size_t)]


class am_warning_list(Structure):
    _fields_ = [("data", POINTER(am_warning)), ("count", c_size_t)]


class am_scope(Structure):
    _fields_ = [("ctx", am_context), ("outer", c_void_p), ("counters", c_void_p),
                ("collector", c_void_p), ("live_bytes", c_uint64), ("peak_bytes", c_uint64),
                ("allocs", c_uint64), ("id", c_uint64), ("warnings", am_warning_list),
                ("spin", c_int), ("cancelled", c_int)]


_dp = POINTER(c_double)
_sp = POINTER(c_char_p)


class am_rig_desc(Structure):
    _fields_ = [("joint_count", c_size_t), ("joint_names", _sp), ("joint_pos", _dp),
                ("bone_count", c_size_t), ("bone_names", _sp), ("bone_head", _sp),
                ("bone_tail", _sp), ("bone_parent", _sp), ("limit_count", c_size_t),
                ("limit_keys", _sp), ("limits_deg", _dp), ("helper_count", c_size_t),
                ("helpers", _sp), ("extra_json", c_char_p), ("source", c_char_p)]


class am_rig(Structure):
    _fields_ = [("bone_count", c_size_t), ("joint_count", c_size_t), ("bone_names", _sp),
                ("joint_names", _sp), ("parent", POINTER(c_int32)),
                ("head_joint", POINTER(c_int32)), ("tail_joint", POINTER(c_int32)),
                ("joint_rest", _dp), ("length", _dp), ("rest_rot", _dp), ("rest_mat", _dp),
                ("rest_inv", _dp), ("offset", _dp), ("kp_bone", POINTER(c_int32)),
                ("kp_is_tail", POINTER(c_uint8)), ("has_limit", POINTER(c_uint8)),
                ("limits", _dp), ("is_helper", POINTER(c_uint8)), ("name", c_char_p),
                ("model", c_char_p), ("extra_json", c_char_p), ("lookup", c_void_p)]


class am_motion(Structure):
    _fields_ = [("frame_count", c_size_t), ("bone_count", c_size_t), ("joint_count", c_size_t),
                ("fps", c_double), ("bone_names", _sp), ("joint_names", _sp), ("trans", _dp),
                ("root_quat", _dp), ("euler", _dp), ("quat", _dp), ("loc", _dp),
                ("joints", _dp), ("extra_json", c_char_p)]


class am_joints(Structure):
    _fields_ = [("frame_count", c_size_t), ("joint_count", c_size_t), ("joints", _dp),
                ("names", _sp), ("fps", c_double), ("conf", _dp)]


class am_ik_opts(Structure):
    _fields_ = [("flags", c_uint32), ("temporal", c_double), ("twist_weight", c_double),
                ("ctx", am_context)]


class am_reals(Structure):
    """A typed view of a caller's contiguous reals (core.h): float32 or float64 in place."""
    _fields_ = [("data", c_void_p), ("dtype", c_int)]


AM_DTYPE_F32, AM_DTYPE_F64 = 0, 1


def reals(arr):
    """am_reals over a C-contiguous float32 / float64 numpy array (no copy)."""
    assert arr.flags.c_contiguous and arr.dtype in (np.float32, np.float64)
    return am_reals(data=arr.ctypes.data, dtype=AM_DTYPE_F32 if arr.dtype == np.float32 else AM_DTYPE_F64)


class am_ik_job(Structure):
    _fields_ = [("rig", POINTER(am_rig)), ("frame_count", c_size_t), ("positions", _dp),
                ("joint_mask", POINTER(c_uint8)), ("reference", POINTER(am_motion)),
                ("opts", POINTER(am_ik_opts)), ("out", POINTER(am_motion)),
                ("warnings", POINTER(am_warning_list)), ("points", am_reals)]


class am_stats(Structure):
    _fields_ = [("count", c_size_t), ("mean", c_double), ("median", c_double),
                ("p95", c_double), ("max", c_double)]


class am_gltf_opts(Structure):
    _fields_ = [("max_bytes", c_uint64), ("flags", c_uint), ("ctx", am_context)]


class am_gltf_head(Structure):
    """The leading fields of am_gltf, up to its warnings (the rest is not read here)."""
    _fields_ = [("node_count", c_size_t), ("skin_count", c_size_t), ("mesh_count", c_size_t),
                ("accessor_count", c_size_t), ("animation_count", c_size_t),
                ("nodes", c_void_p), ("skins", c_void_p), ("meshes", c_void_p),
                ("accessors", c_void_p), ("animations", c_void_p), ("node_order", c_void_p),
                ("scene", c_int32), ("generator", c_char_p), ("warnings", am_warning_list)]


AM_IK_NO_GRANDCHILD_TWIST = 1
AM_IK_NO_LIMITS = 2
AM_IK_NO_TEMPORAL = 4

_E = POINTER(am_error)
_R = POINTER(am_rig)
_M = POINTER(am_motion)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


am_status_name = _fn("am_status_name", c_char_p, c_int)
am_status_message = _fn("am_status_message", c_char_p, c_int)
am_status_fault = _fn("am_status_fault", c_int, c_int)
am_error_format = _fn("am_error_format", c_char_p, c_char_p, c_size_t, _E)
am_warning_kind_name = _fn("am_warning_kind_name", c_char_p, c_int)
am_warning_kind_message = _fn("am_warning_kind_message", c_char_p, c_int)
am_warning_list_free = _fn("am_warning_list_free", None, POINTER(am_warning_list))
am_scope_enter = _fn("am_scope_enter", None, POINTER(am_scope), POINTER(am_context))
am_scope_leave = _fn("am_scope_leave", None, POINTER(am_scope), POINTER(am_warning_list))
am_free = _fn("am_free", None, c_void_p)
am_strdup = _fn("am_strdup", c_void_p, c_char_p)

am_rig_load = _fn("am_rig_load", c_int, c_char_p, POINTER(_R), _E)
am_rig_build = _fn("am_rig_build", c_int, POINTER(am_rig_desc), POINTER(_R), _E)
am_rig_write = _fn("am_rig_write", c_int, _R, c_char_p, _E)
am_rig_free = _fn("am_rig_free", None, _R)
am_rig_find_joint = _fn("am_rig_find_joint", c_int, _R, c_char_p)
am_rig_scale = _fn("am_rig_scale", None, _R, c_double)
am_rig_fk_clip = _fn("am_rig_fk_clip", None, _R, _M, _dp)
am_rig_rest_pose = _fn("am_rig_rest_pose", None, _R, _dp)
am_rig_keypoints = _fn("am_rig_keypoints", None, _R, _dp, _dp)

am_motion_load = _fn("am_motion_load", c_int, c_char_p, _R, POINTER(_M), _E)
am_motion_write = _fn("am_motion_write", c_int, _M, c_char_p, _E)
am_motion_create = _fn("am_motion_create", c_int, _R, c_size_t, c_double, POINTER(_M), _E)
am_motion_compute_joints = _fn("am_motion_compute_joints", c_int, _M, _R, _E)
am_motion_free = _fn("am_motion_free", None, _M)

am_joints_bind = _fn("am_joints_bind", c_int, POINTER(am_joints), _R, _dp, POINTER(c_uint8), _E)
am_ik_run = _fn("am_ik_run", c_int, POINTER(am_ik_job), _E)
am_ik_default_mask = _fn("am_ik_default_mask", None, _R, POINTER(c_uint8))
am_joint_position_error = _fn("am_joint_position_error", c_int, _dp, _dp, c_size_t, c_size_t,
                              POINTER(c_uint8), _dp, POINTER(am_stats), _E)
am_body_size = _fn("am_body_size", c_double, _dp, c_size_t, POINTER(c_uint8))

am_gltf_load = _fn("am_gltf_load", c_int, c_char_p, POINTER(am_gltf_opts),
                   POINTER(POINTER(am_gltf_head)), _E)
am_gltf_free = _fn("am_gltf_free", None, POINTER(am_gltf_head))
am_gltf_find_clip = _fn("am_gltf_find_clip", c_int, POINTER(am_gltf_head), c_char_p,
                        POINTER(c_int), _E)
am_gltf_clip_rate = _fn("am_gltf_clip_rate", c_double, POINTER(am_gltf_head), c_int)
am_clip_file_name = _fn("am_clip_file_name", c_char_p, c_char_p, c_size_t, c_char_p, c_size_t)


class am_gltf_animation(Structure):
    _fields_ = [("name", c_char_p), ("channel_count", c_size_t), ("sampler_count", c_size_t),
                ("channels", c_void_p), ("samplers", c_void_p), ("t_min", c_double),
                ("t_max", c_double)]
AM_GLTF_KEEP_SOURCE = 1
am_rig_from_gltf = _fn("am_rig_from_gltf", c_int, POINTER(am_gltf_head), c_int, POINTER(_R), _E)
am_motion_from_gltf = _fn("am_motion_from_gltf", c_int, POINTER(am_gltf_head), c_int, _R, c_int,
                          c_double, POINTER(_M), _E)


class am_import_opts(Structure):
    _fields_ = [("individual", c_char_p), ("track", ctypes.c_long), ("person", ctypes.c_long),
                ("width", c_double), ("height", c_double), ("fps", c_double),
                ("scale", c_double), ("skeleton", c_char_p), ("up", c_char),
                ("ctx", am_context)]


TRACK_FORMATS = {"auto": 0, "dlc": 1, "sleap": 2, "openpose": 3, "mediapipe": 4, "trc": 5,
                 "c3d": 6, "anipose": 7, "points3d": 8}
am_track_format_guess = _fn("am_track_format_guess", c_int, c_char_p)
am_track_format_is_3d = _fn("am_track_format_is_3d", c_bool, c_int)
am_track_format_name = _fn("am_track_format_name", c_char_p, c_int)
am_import_3d = _fn("am_import_3d", c_int, c_char_p, c_int, POINTER(am_import_opts),
                   POINTER(POINTER(am_joints)), _E)
am_joints_load = _fn("am_joints_load", c_int, c_char_p, POINTER(POINTER(am_joints)), _E)
am_joints_free = _fn("am_joints_free", None, POINTER(am_joints))

# ---- BVH (bvh.h) and the glTF writer (gltf.h) ----
AM_BVH_AXES = {"y": 0, "z": 1}


class am_bvh_head(Structure):
    """am_bvh: the joints are not read here (opaque), only the counts and the warnings."""
    _fields_ = [("joint_count", c_size_t), ("joints", c_void_p), ("channel_count", c_size_t),
                ("frame_count", c_size_t), ("frame_time", c_double), ("frames", _dp),
                ("warnings", am_warning_list), ("source", c_char_p)]


class am_bvh_opts(Structure):
    _fields_ = [("axes", c_int), ("scale", c_double), ("max_bytes", c_uint64),
                ("like", POINTER(am_bvh_head)), ("ctx", am_context)]


class am_gltf_export(Structure):
    _fields_ = [("rig", _R), ("clip_count", c_size_t), ("clips", POINTER(_M)),
                ("clip_names", _sp), ("mesh", c_void_p), ("generator", c_char_p),
                ("source", c_void_p), ("source_skin", c_int), ("drop_attribute", c_char_p),
                ("remove_paint", c_bool), ("warnings", POINTER(am_warning_list)), ("ctx", am_context)]


_B = POINTER(am_bvh_head)
am_bvh_load = _fn("am_bvh_load", c_int, c_char_p, POINTER(am_bvh_opts), POINTER(_B), _E)
am_bvh_write = _fn("am_bvh_write", c_int, _B, c_char_p, _E)
am_bvh_free = _fn("am_bvh_free", None, _B)
am_rig_from_bvh = _fn("am_rig_from_bvh", c_int, _B, POINTER(am_bvh_opts), POINTER(_R), _E)
am_motion_from_bvh = _fn("am_motion_from_bvh", c_int, _B, _R, POINTER(am_bvh_opts), POINTER(_M), _E)
am_bvh_from_motion = _fn("am_bvh_from_motion", c_int, _R, _M, POINTER(am_bvh_opts), POINTER(_B), _E)
am_gltf_write = _fn("am_gltf_write", c_int, POINTER(am_gltf_export), c_char_p, _E)
am_motion_scale = _fn("am_motion_scale", None, _M, c_double)
am_error_set_file = _fn("am_error_set_file", None, _E, c_char_p)

# ---- N-camera detections, calibrations, triangulation (mocap.h, camera.h, multiview.h) ----
_fp = POINTER(ctypes.c_float)


class am_mdet(Structure):
    _fields_ = [("camera_count", c_size_t), ("frame_count", c_size_t), ("joint_count", c_size_t),
                ("uv", _fp), ("conf", _fp), ("cameras", _sp), ("names", _sp), ("fps", c_double),
                ("time_offset", _dp), ("two_view", c_bool), ("uv_view", am_reals),
                ("conf_view", am_reals)]


class am_calib_read_opts(Structure):
    _fields_ = [("scale", c_double), ("ctx", am_context)]


class am_triangulate_opts(Structure):
    _fields_ = [("flags", c_uint32), ("min_conf", c_double), ("ransac_px", c_double),
                ("max_pairs", c_size_t), ("refine_loss_px", c_double), ("w_smooth", c_double),
                ("w_bone", c_double), ("edge_count", c_size_t), ("edges", POINTER(c_int32)),
                ("refine_iterations", c_uint32), ("refine_window", c_size_t), ("ctx", am_context)]


class am_triangulation(Structure):
    _sz = POINTER(c_size_t)
    _fields_ = [("camera_count", c_size_t), ("frame_count", c_size_t), ("joint_count", c_size_t),
                ("joints", POINTER(am_joints)), ("reproj_px", _fp),
                ("cameras_used", POINTER(c_uint8)), ("used", POINTER(c_uint8)),
                ("cam_seen", _sz), ("cam_used", _sz), ("cam_mean_px", _dp), ("cam_p95_px", _dp),
                ("cam_mean_all_px", _dp), ("mean_px", c_double), ("median_px", c_double),
                ("p95_px", c_double), ("points", c_size_t), ("triangulated", c_size_t),
                ("undistort_failed", c_size_t), ("ransac_dropped", c_size_t),
                ("seconds", c_double), ("warnings", am_warning_list)]


AM_TRI_NO_RANSAC = 1
AM_TRI_REFINE = 2
_MD = POINTER(am_mdet)
_CAL = c_void_p  # am_calib: opaque here
_TRI = POINTER(am_triangulation)
am_mdet_load = _fn("am_mdet_load", c_int, c_char_p, POINTER(_MD), _E)
am_mdet_free = _fn("am_mdet_free", None, _MD)
am_mdet_validate = _fn("am_mdet_validate", c_int, _MD, _E)
am_mdet_find_joint = _fn("am_mdet_find_joint", c_int, _MD, c_char_p)
am_calib_load = _fn("am_calib_load", c_int, c_char_p, POINTER(am_calib_read_opts),
                    POINTER(_CAL), _E)
am_calib_free = _fn("am_calib_free", None, _CAL)
am_calib_check = _fn("am_calib_check", c_size_t, _CAL)
am_cameras_from_layout = _fn("am_cameras_from_layout", c_int, c_void_p, POINTER(_CAL), _E)
am_triangulate = _fn("am_triangulate", c_int, _MD, _CAL, POINTER(am_triangulate_opts),
                     POINTER(_TRI), _E)
am_triangulation_free = _fn("am_triangulation_free", None, _TRI)
am_triangulation_write = _fn("am_triangulation_write", c_int, c_char_p, _TRI, _MD, _E)
am_triangulation_summary_write = _fn("am_triangulation_summary_write", c_int, c_char_p, _TRI,
                                     _MD, _E)
am_joints_write = _fn("am_joints_write", c_int, c_char_p, POINTER(am_joints), _E)
am_trc_write = _fn("am_trc_write", c_int, c_char_p, POINTER(am_joints), _E)

# ---- the solves: two views (capture.h) and N cameras (fit.h, multiview.h) ----


class am_buf(Structure):
    _fields_ = [("data", c_void_p), ("len", c_size_t), ("cap", c_size_t), ("failed", c_bool)]


class am_capture_opts(Structure):
    _fields_ = [("flags", c_uint32), ("scale_start_px", c_double), ("scale_end_px", c_double),
                ("w_accel", c_double), ("w_accel_trans", c_double), ("w_vel", c_double),
                ("w_rest", c_double), ("w_ground", c_double), ("w_contact", c_double),
                ("front_v_weight", c_double), ("accel_huber_px", c_double), ("max_lag", c_int),
                ("window", c_size_t), ("iterations", c_uint32), ("ctx", am_context)]


class am_capture_sync(Structure):
    _fields_ = [("foot_count", c_size_t), ("feet", _sp), ("paw_agreement", _dp),
                ("paw_score", c_double), ("gap_mean_px", c_double), ("gap_worst_px", c_double),
                ("best_lag", c_int), ("gap_best_px", c_double), ("time_warped", c_bool),
                ("front_height_scale", c_double), ("height_rescaled", c_bool),
                ("swaps_repaired", c_size_t)]


class am_capture_result(Structure):
    _fields_ = [("motion", _M), ("sync", am_capture_sync), ("reproj_front", c_double),
                ("reproj_front_x", c_double), ("reproj_side", c_double),
                ("contact_count", c_size_t), ("contact_names", _sp),
                ("contact_joint", POINTER(c_int32)), ("contact", POINTER(c_uint8)),
                ("ground_vel", c_double * 3), ("plant_count", c_size_t),
                ("fit_slide_mean_mm", c_double), ("fit_slide_max_mm", c_double),
                ("slide_mean_mm", c_double), ("slide_max_mm", c_double),
                ("foot_locked", c_bool), ("lock_moved_mean_mm", _dp),
                ("lock_moved_max_mm", _dp), ("lm_iterations", c_uint32),
                ("seconds_fit", c_double), ("seconds_total", c_double),
                ("warnings", am_warning_list)]


class am_fit_opts(Structure):
    _fields_ = [("flags", c_uint32), ("scale_start_px", c_double), ("scale_end_px", c_double),
                ("w_accel", c_double), ("w_accel_trans", c_double), ("w_vel", c_double),
                ("w_rest", c_double), ("w_prior_points", c_double), ("w_ground", c_double),
                ("w_contact", c_double), ("accel_huber_px", c_double), ("conf_power", c_double),
                ("point_noise", c_double), ("point_px", c_double), ("smooth_points", c_double),
                ("iterations", c_uint32), ("window", c_size_t), ("window_stride", c_size_t),
                ("ctx", am_context)]


class am_fit_result(Structure):
    _fields_ = [("motion", _M), ("camera_count", c_size_t), ("camera_names", _sp),
                ("reproj_px", _dp), ("reproj_p95_px", _dp), ("points_mean_m", c_double),
                ("points_p95_m", c_double), ("point_noise", c_double),
                ("point_noise_estimated", c_bool), ("swaps_repaired", c_size_t),
                ("contact_count", c_size_t), ("contact_names", _sp),
                ("contact_joint", POINTER(c_int32)), ("contact", POINTER(c_uint8)),
                ("ground_vel", c_double * 3), ("plant_count", c_size_t),
                ("fit_slide_mean_mm", c_double), ("fit_slide_max_mm", c_double),
                ("slide_mean_mm", c_double), ("slide_max_mm", c_double),
                ("foot_locked", c_bool), ("lock_moved_mean_mm", _dp),
                ("lock_moved_max_mm", _dp), ("windows", c_size_t), ("lm_iterations", c_uint32),
                ("seconds", c_double), ("smooth_points", c_double), ("smooth_auto", c_bool),
                ("warnings", am_warning_list)]


class am_mv_solve_opts(Structure):
    _fields_ = [("flags", c_uint32), ("max_offset", c_int), ("tri", am_triangulate_opts),
                ("fit", am_fit_opts), ("ctx", am_context)]


class am_mv_solve_result(Structure):
    _fields_ = [("fit", POINTER(am_fit_result)), ("camera_count", c_size_t), ("offsets", _dp),
                ("offsets_found", c_bool), ("gap_px", _dp), ("gap0_px", _dp),
                ("warnings", am_warning_list)]


AM_CAPTURE_NO_WARP, AM_CAPTURE_NO_SWAP_REPAIR, AM_CAPTURE_NO_FOOT_LOCK, AM_CAPTURE_NO_CONTACTS = 1, 2, 4, 8
AM_FIT_NO_CONTACTS, AM_FIT_NO_FOOT_LOCK, AM_FIT_NO_SWAP_REPAIR = 1, 2, 4
AM_MV_SEARCH_OFFSETS = 1
class am_det(Structure):
    """The two-view det (io.h, SPEC 4.2); a caller's arrays go in uv_view / conf_view."""
    _fields_ = [("frame_count", c_size_t), ("joint_count", c_size_t), ("front_uv", _fp),
                ("side_uv", _fp), ("front_conf", _fp), ("side_conf", _fp), ("fps", c_double),
                ("names", _sp), ("has_calib", c_bool), ("calib", c_double * 6),
                ("uv_view", am_reals * 2), ("conf_view", am_reals * 2)]


am_det_validate = _fn("am_det_validate", c_int, POINTER(am_det), _E)
am_mdet_from_two_view = _fn("am_mdet_from_two_view", c_int, POINTER(am_det), POINTER(_MD), _E)
_CR = c_void_p  # am_creature: opaque here but for the offset of its layout (rig.h: after the name)
CREATURE_LAYOUT_OFFSET = ctypes.sizeof(c_char_p)
_CRES = POINTER(am_capture_result)
_MRES = POINTER(am_mv_solve_result)
am_buf_free = _fn("am_buf_free", None, POINTER(am_buf))
am_det_load = _fn("am_det_load", c_int, c_char_p, POINTER(c_void_p), _E)
am_det_free = _fn("am_det_free", None, c_void_p)
am_creature_load = _fn("am_creature_load", c_int, c_char_p, POINTER(_CR), _E)
am_creature_free = _fn("am_creature_free", None, _CR)
am_capture_solve = _fn("am_capture_solve", c_int, c_void_p, _R, _CR, POINTER(am_capture_opts),
                       POINTER(_CRES), _E)
am_capture_report = _fn("am_capture_report", None, _CRES, POINTER(am_buf))
am_capture_result_free = _fn("am_capture_result_free", None, _CRES)
am_mv_solve = _fn("am_mv_solve", c_int, _MD, _CAL, _R, _CR, POINTER(am_mv_solve_opts),
                  POINTER(_MRES), _E)
am_mv_solve_result_free = _fn("am_mv_solve_result_free", None, _MRES)
am_fit_report = _fn("am_fit_report", None, POINTER(am_fit_result), POINTER(am_buf))


class am_fit_input(Structure):
    _fields_ = [("rig", _R), ("creature", c_void_p), ("det", _MD), ("calib", c_void_p),
                ("v_weight", _dp), ("points", POINTER(am_joints)), ("init", POINTER(am_joints)),
                ("reference", _M), ("start", POINTER(am_ik_opts))]


AM_FIT_NO_LIMITS = 8
AM_FIT_SMOOTH_AUTO = 16
am_fit = _fn("am_fit", c_int, POINTER(am_fit_input), POINTER(am_fit_opts),
             POINTER(POINTER(am_fit_result)), _E)
am_fit_result_free = _fn("am_fit_result_free", None, POINTER(am_fit_result))

# ---- Track2Rig (decompose.h) ----


class am_tracks(Structure):
    _fields_ = [("frame_count", c_size_t), ("point_count", c_size_t), ("face_count", c_size_t),
                ("points", _fp), ("visible", POINTER(c_uint8)), ("faces", POINTER(c_int32)),
                ("fps", c_double)]


class am_decompose_opts(Structure):
    _fields_ = [("method", c_int), ("bones", c_size_t), ("max_bones", c_size_t),
                ("iterations", c_size_t), ("knn", c_size_t), ("smooth", c_double),
                ("huber", c_double), ("seed", c_uint32), ("flags", c_uint32),
                ("rig_mode", c_int), ("threads", c_size_t), ("ctx", am_context)]


class am_decomposition(Structure):
    _fields_ = [("frame_count", c_size_t), ("point_count", c_size_t), ("bone_count", c_size_t),
                ("fps", c_double), ("rest", _fp), ("bone_index", POINTER(c_int32)),
                ("weight", _fp), ("xform", _dp), ("rig", _R), ("motion", _M),
                ("body_size", c_double), ("err_visible", c_double),
                ("err_visible_free", c_double), ("err_visible_articulated", c_double),
                ("rig_mode", c_int), ("translating_count", c_size_t),
                ("translating", POINTER(c_uint8)), ("noise_floor", c_double),
                ("iterations", c_size_t), ("polish", c_int), ("auto_count", c_size_t), ("auto_err", _dp),
                ("time_init", c_double), ("time_solve", c_double), ("time_skeleton", c_double),
                ("warnings", am_warning_list)]


class am_decompose_report(Structure):
    _fields_ = [("result", POINTER(am_decomposition)), ("opts", POINTER(am_decompose_opts)),
                ("face_count", c_size_t), ("hidden_share", c_double), ("seconds_load", c_double),
                ("seconds_write", c_double), ("seconds_total", c_double)]


class am_gltf_mesh_in(Structure):
    _fields_ = [("vertex_count", c_size_t), ("positions", _fp), ("triangle_count", c_size_t),
                ("triangles", POINTER(c_int32)), ("influences", c_size_t),
                ("bone_index", POINTER(c_int32)), ("weights", _fp), ("colors", _fp),
                ("normals", _fp), ("texcoords", _fp), ("texcoords1", _fp), ("tangents", _fp), ("look", c_void_p), ("part_count", c_size_t),
                ("parts", c_void_p), ("node_count", c_size_t), ("nodes", c_void_p), ("base_colors", _fp),
                ("texcoord_extra_count", c_size_t), ("texcoords_extra", c_void_p)]


class am_array(Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("ndim", c_int), ("shape", c_size_t * 8),
                ("count", c_size_t), ("data", c_void_p), ("strings", _sp), ("str_chars", c_size_t),
                ("was_fortran", c_bool), ("was_big_endian", c_bool)]


AM_DTYPE_I32 = 2
am_array_view = _fn("am_array_view", am_array, c_char_p, c_int, c_int, POINTER(c_size_t), c_void_p)
am_npz_write = _fn("am_npz_write", c_int, c_char_p, POINTER(am_array), c_size_t, c_bool, _E)
am_decompose_report_write = _fn("am_decompose_report_write", c_int, POINTER(am_decompose_report),
                                c_char_p, _E)

DECOMPOSE_METHODS = {"ours": 0, "ssdr": 1}
RIG_MODES = {"auto": 0, "articulated": 1, "hierarchical": 2, "free": 3}
_TR = POINTER(am_tracks)
_DEC = POINTER(am_decomposition)
am_tracks_load = _fn("am_tracks_load", c_int, c_char_p, POINTER(_TR), _E)
am_tracks_free = _fn("am_tracks_free", None, _TR)
am_tracks_scale = _fn("am_tracks_scale", None, _TR, c_double)
am_decompose_run = _fn("am_decompose_run", c_int, _TR, POINTER(am_decompose_opts), POINTER(_DEC), _E)
am_decomposition_free = _fn("am_decomposition_free", None, _DEC)

# ---- retargeting (retarget.h) ----


class am_bone_map(Structure):
    _fields_ = [("count", c_size_t), ("source", _sp), ("target", _sp), ("rule_count", c_size_t),
                ("rule_bone", _sp), ("rule_text", _sp)]


class am_retarget_map(Structure):
    _fields_ = [("source_count", c_size_t), ("target_count", c_size_t),
                ("source", POINTER(c_int32)), ("source_b", POINTER(c_int32)), ("weight", _dp),
                ("head_bone", POINTER(c_int32)), ("head_point", _dp), ("rule", POINTER(c_int)),
                ("why", _sp), ("source_excluded", POINTER(c_uint8)),
                ("target_excluded", POINTER(c_uint8)), ("source_vparent", POINTER(c_int32)),
                ("target_vparent", POINTER(c_int32)), ("chain_count", c_size_t),
                ("chains", c_void_p), ("warnings", am_warning_list)]


class am_retarget_map_opts(Structure):
    _fields_ = [("overrides", POINTER(am_bone_map)), ("ctx", am_context)]


class am_retarget_opts(Structure):
    _fields_ = [("pose", c_int), ("root", c_int), ("flags", c_uint32),
                ("scale_horizontal", c_double), ("scale_vertical", c_double),
                ("align_min_deg", c_double), ("source_pose", _M), ("source_pose_frame", c_size_t), ("target_pose", _M),
                ("target_pose_frame", c_size_t), ("ctx", am_context)]


class am_retarget_report(Structure):
    _fields_ = [("pose", c_int), ("align_min_deg", c_double), ("root", c_int), ("flags", c_uint32),
                ("leg_source", c_double),
                ("leg_target", c_double), ("scale_horizontal", c_double),
                ("scale_vertical", c_double), ("contact_count", c_size_t),
                ("contact_source", POINTER(c_int32)), ("contact_target", POINTER(c_int32)),
                ("floor", _dp), ("below_max", _dp), ("plant_count", c_size_t),
                ("plants", c_void_p), ("ground_vel_source", c_double * 3),
                ("ground_vel_target", c_double * 3), ("chain_angle_mean_deg", c_double),
                ("chain_angle_max_deg", c_double), ("ik_frames", c_size_t),
                ("ik_residual_max", c_double), ("transfer_seconds", c_double),
                ("ik_seconds", c_double)]


class am_retarget_job(Structure):
    _fields_ = [("source_rig", _R), ("source", _M), ("target_rig", _R),
                ("map", POINTER(am_retarget_map)), ("opts", POINTER(am_retarget_opts)),
                ("out", _M), ("report", POINTER(am_retarget_report)),
                ("warnings", POINTER(am_warning_list))]


AM_RETARGET_NO_IK, AM_RETARGET_IK_HANDS = 1, 2
RETARGET_POSES = {"align": 0, "delta": 1}
RETARGET_ROOTS = {"scale": 0, "keep": 1}
_BM = POINTER(am_bone_map)
_RMAP = POINTER(am_retarget_map)
am_alloc_array = _fn("am_alloc_array", c_void_p, c_size_t, c_size_t)
am_bone_map_load = _fn("am_bone_map_load", c_int, c_char_p, POINTER(_BM), _E)
am_bone_map_write = _fn("am_bone_map_write", c_int, _BM, c_char_p, _E)
am_bone_map_free = _fn("am_bone_map_free", None, _BM)
am_retarget_map_build = _fn("am_retarget_map_build", c_int, _R, _R, POINTER(am_retarget_map_opts),
                            POINTER(_RMAP), _E)
am_retarget_map_free = _fn("am_retarget_map_free", None, _RMAP)
am_retarget_map_names = _fn("am_retarget_map_names", c_int, _RMAP, _R, _R, POINTER(_BM), _E)
am_retarget_run = _fn("am_retarget_run", c_int, POINTER(am_retarget_job), _E)
am_retarget_report_free = _fn("am_retarget_report_free", None, POINTER(am_retarget_report))
am_retarget_report_json = _fn("am_retarget_report_json", None, POINTER(am_retarget_report), _RMAP,
                              _R, _R, POINTER(am_buf))

# ---- output sets (core.h) and a result's pictures (render.h am_pictures) ----
_OS = c_void_p  # am_outset: opaque
am_outset_open = _fn("am_outset_open", c_int, c_char_p, POINTER(c_char_p), c_size_t, POINTER(_OS), _E)
am_outset_path = _fn("am_outset_path", c_char_p, _OS, c_char_p)
am_outset_blame = _fn("am_outset_blame", None, _OS, _E)
am_outset_commit = _fn("am_outset_commit", c_int, _OS, _E)
am_outset_abort = _fn("am_outset_abort", None, _OS)
am_file_write = _fn("am_file_write", c_int, c_char_p, c_void_p, c_size_t, _E)
am_angles_csv_write = _fn("am_angles_csv_write", c_int, c_char_p, _R, _M, _E)
am_angles_mot_write = _fn("am_angles_mot_write", c_int, c_char_p, _R, _M, _E)


class am_pictures(Structure):
    _fields_ = [("report", c_bool), ("render", c_bool), ("title", c_char_p), ("rig", _R),
                ("motion", _M), ("points", POINTER(am_joints)), ("edges", POINTER(c_int32)),
                ("edge_count", c_size_t), ("points_only", c_bool), ("det", c_void_p),
                ("mdet", _MD), ("cameras", c_void_p), ("through_cameras", c_bool),
                ("creature", c_void_p), ("truth", _dp), ("gate_text", c_char_p), ("glb", c_char_p),
                ("glb_path", c_char_p), ("mesh", c_void_p), ("mesh_doc", c_void_p), ("frame_layout", c_bool), ("three_dir", c_char_p),
                ("ctx", am_context)]


am_pictures_names = _fn("am_pictures_names", None, POINTER(am_pictures), POINTER(c_char_p),
                        POINTER(c_size_t))
am_pictures_write = _fn("am_pictures_write", c_int, POINTER(am_pictures), _OS, _E)
