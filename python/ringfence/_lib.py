# SPDX-License-Identifier: LGPL-2.1-or-later
"""ctypes declarations of libringfence's C API (include/ringfence.h).

ctypes rather than cffi: it ships with Python, needs no compiler at install
time and no build step, so `pip install --no-build-isolation ./python`
works offline. The price is that the struct layouts below must follow the
header by hand; tests/test_ringfence.py checks every one of them against
the library's own JSON output.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

c_char_pp = ctypes.POINTER(ctypes.c_char_p)


class RfStdio(ctypes.Structure):
    _fields_ = [("in_fd", ctypes.c_int), ("out_fd", ctypes.c_int), ("err_fd", ctypes.c_int)]


class RfStatus(ctypes.Structure):
    _fields_ = [
        ("exit_code", ctypes.c_int),
        ("signal", ctypes.c_int),
        ("exited", ctypes.c_bool),
        ("timed_out", ctypes.c_bool),
        ("oom_killed", ctypes.c_bool),
        ("pids_limit_hit", ctypes.c_bool),
        ("wall_seconds", ctypes.c_double),
        ("user_seconds", ctypes.c_double),
        ("sys_seconds", ctypes.c_double),
        ("peak_memory_bytes", ctypes.c_uint64),
        ("setup_error", ctypes.c_void_p),
        ("setup_hint", ctypes.c_void_p),
        ("memory_limit_bytes", ctypes.c_uint64),
        ("pids_limit", ctypes.c_uint64),
        ("cpu_limit", ctypes.c_double),
        ("timeout_seconds", ctypes.c_double),
        ("memory_how", ctypes.c_int),
        ("pids_how", ctypes.c_int),
        ("cpu_how", ctypes.c_int),
        ("network_json", ctypes.c_void_p),
        ("session", ctypes.c_void_p),
        ("sandbox", ctypes.c_void_p),     # the audit trail's and `ringfence ps`'s id
        ("audit_head", ctypes.c_void_p),  # the trail's hash after run.end, or NULL
        ("backend", ctypes.c_void_p),     # a static name: never freed
        ("weakenings", ctypes.c_void_p),  # char **, freed by rf_status_clear
    ]


class RfChange(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("path", ctypes.c_char_p),
        ("old_path", ctypes.c_char_p),
        ("type", ctypes.c_char),
        ("old_mode", ctypes.c_uint),
        ("new_mode", ctypes.c_uint),
        ("old_size", ctypes.c_longlong),
        ("new_size", ctypes.c_longlong),
        ("refused", ctypes.c_char_p),
    ]


class RfApplyReport(ctypes.Structure):
    _fields_ = [("applied", c_char_pp), ("conflicts", c_char_pp), ("refused", c_char_pp),
                ("failed", c_char_pp)]


class RfGuardVerdict(ctypes.Structure):
    _fields_ = [
        ("result", ctypes.c_int),
        ("message", ctypes.c_char_p),
        ("pattern", ctypes.c_char_p),
        ("detail", ctypes.c_char_p),
    ]


class RfInstanceOptions(ctypes.Structure):
    _fields_ = [
        ("target", ctypes.c_char_p),
        ("credentials", c_char_pp),
        ("copies", c_char_pp),
        ("ephemeral", ctypes.c_bool),
        ("profile", ctypes.c_char_p),
        ("home", ctypes.c_char_p),
        ("own_identity", ctypes.c_bool),
        ("network_of", ctypes.c_void_p),
    ]


_P = ctypes.c_void_p
_ERR = ctypes.POINTER(ctypes.c_void_p)
_I = ctypes.c_int
_S = ctypes.c_char_p

# name: (restype, argtypes). Functions that return malloc'd text return
# c_void_p so the caller can free the pointer after copying it.
_SIGNATURES = {
    "rf_version": (_S, []),
    "rf_error_message": (_S, [_P]),
    "rf_error_hint": (_S, [_P]),
    "rf_error_errno": (_I, [_P]),
    "rf_error_exit_code": (_I, [_P]),
    "rf_error_free": (None, [_P]),
    "rf_config_new": (_P, []),
    "rf_config_free": (None, [_P]),
    "rf_config_add_json": (_I, [_P, _S, _S, _ERR]),
    "rf_config_load_file": (_I, [_P, _S, _ERR]),
    "rf_config_select_agent": (_I, [_P, _S, _ERR]),
    "rf_policy_resolve": (_P, [_P, _P, _ERR]),
    "rf_policy_free": (None, [_P]),
    "rf_policy_to_json": (_P, [_P]),
    "rf_plan_build": (_P, [_P, c_char_pp, _ERR]),
    "rf_plan_build_shell": (_P, [_P, _S, ctypes.c_double, _ERR]),
    "rf_plan_free": (None, [_P]),
    "rf_plan_to_json": (_P, [_P]),
    "rf_plan_backend": (_S, [_P]),
    "rf_spawn": (_P, [_P, ctypes.POINTER(RfStdio), _ERR]),
    "rf_proc_pid": (_I, [_P]),
    "rf_proc_wait": (_I, [_P, ctypes.POINTER(RfStatus), _ERR]),
    "rf_proc_kill": (_I, [_P, _I]),
    "rf_proc_terminate": (_I, [_P]),
    "rf_proc_free": (None, [_P]),
    "rf_status_clear": (None, [ctypes.POINTER(RfStatus)]),
    "rf_status_to_json": (_P, [ctypes.POINTER(RfStatus)]),
    "rf_guard_new_for_policy": (_P, [_P, _ERR]),
    "rf_guard_new_for_shell": (_P, [_P, _ERR]),
    "rf_guard_check": (_I, [_P, _S, ctypes.POINTER(RfGuardVerdict), _ERR]),
    "rf_guard_verdict_clear": (None, [ctypes.POINTER(RfGuardVerdict)]),
    "rf_guard_free": (None, [_P]),
    "rf_instance_options_init": (None, [ctypes.POINTER(RfInstanceOptions)]),
    "rf_instance_create": (_P, [_S, _S, ctypes.POINTER(RfInstanceOptions), _ERR]),
    "rf_instance_open": (_P, [_S, _S, _ERR]),
    "rf_instance_name": (_S, [_P]),
    "rf_instance_dir": (_S, [_P]),
    "rf_instance_to_json": (_P, [_P]),
    "rf_instance_close": (None, [_P]),
    "rf_instance_remove": (_I, [_S, _S, ctypes.c_bool, _ERR]),
    "rf_policy_use_instance": (_I, [_P, _P, _ERR]),
    "rf_policy_instance_root": (_S, [_P]),
    "rf_session_open": (_P, [_S, _S, _ERR]),
    "rf_session_free": (None, [_P]),
    "rf_session_id": (_S, [_P]),
    "rf_session_workspace": (_S, [_P]),
    "rf_session_list": (c_char_pp, [_S, _ERR]),
    "rf_session_list_free": (None, [c_char_pp]),
    "rf_session_diff": (_P, [_P, _ERR]),
    "rf_changeset_count": (ctypes.c_size_t, [_P]),
    "rf_changeset_get": (ctypes.POINTER(RfChange), [_P, ctypes.c_size_t]),
    "rf_changeset_free": (None, [_P]),
    "rf_change_diff": (_P, [_P, ctypes.POINTER(RfChange), ctypes.c_bool, ctypes.POINTER(ctypes.c_size_t),
                            ctypes.POINTER(ctypes.c_size_t), _ERR]),
    "rf_session_apply": (_I, [_P, c_char_pp, ctypes.c_bool, ctypes.POINTER(RfApplyReport), _ERR]),
    "rf_apply_report_clear": (None, [ctypes.POINTER(RfApplyReport)]),
    "rf_session_discard": (_I, [_P, _ERR]),
}


def _find_library() -> str:
    """RINGFENCE_LIB names the library (a build tree's libringfence.so.0);
    otherwise the system's, as the dynamic loader finds it."""
    path = os.environ.get("RINGFENCE_LIB")
    if path:
        return path
    return ctypes.util.find_library("ringfence") or "libringfence.so.0"


def load() -> ctypes.CDLL:
    lib = ctypes.CDLL(_find_library(), use_errno=True)
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = load()
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


def take_string(ptr: int | None) -> str | None:
    """Copy a malloc'd C string the library returned, then free it."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        _libc.free(ptr)


def cstr(s: str | os.PathLike[str] | None) -> bytes | None:
    return None if s is None else os.fsencode(s)


def strv(items) -> ctypes.Array | None:
    """A NULL-terminated char *[] (kept alive by the returned array)."""
    if items is None:
        return None
    arr = (ctypes.c_char_p * (len(items) + 1))()
    for i, item in enumerate(items):
        arr[i] = os.fsencode(item)
    arr[len(items)] = None
    return arr
