"""ctypes over libdlroute (libdlroute/dlroute.h): loading, the ABI check,
the fork guard, and one call shape for every entry.

ctypes releases the GIL around each call, so threads decide in parallel;
each thread has its own output buffer.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Any

from ._codes import *  # noqa: F403 (the statuses and steps of dlroute.h, generated from the Go constants)
from .errors import DlrouteError, ForkedError, LibraryError

ABI_VERSION = 1  # DLROUTE_ABI_VERSION of the header this package speaks

FORK_HINT = ("libdlroute was loaded before this process forked, and its Go runtime does not survive fork: "
             "use the 'spawn' or 'forkserver' start method of multiprocessing (torch DataLoader: "
             "multiprocessing_context='spawn') and load dlroute in the child")

_BUFFER = 1 << 16

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_lib_path: str | None = None
_loaded_pid: int | None = None
_local = threading.local()


def _mark_forked() -> None:
    # Runs in the child: every later call refuses before reaching the
    # library (whose C side would refuse too).
    global _lib
    _lib = None


os.register_at_fork(after_in_child=_mark_forked)


def library() -> ctypes.CDLL:
    """The loaded library, loading (and if need be building) it on first
    use. Raises LibraryError, or ForkedError in a forked child."""
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        if _loaded_pid is not None and _loaded_pid != os.getpid():
            raise ForkedError("forked", FORK_HINT)
        return _load(_find())


ENV_LIB = "DLROUTE_LIB"
LIB_NAME = "libdlroute.dylib" if os.uname().sysname == "Darwin" else "libdlroute.so"


def _find() -> str:
    """The library to load: $DLROUTE_LIB, or the one installed in the
    package when it is not in a checkout, without importing what a build
    needs; else _build's search (which builds from a checkout)."""
    named = os.environ.get(ENV_LIB)
    if named:
        if not os.path.isfile(named):
            raise LibraryError("no_library", f"${ENV_LIB} names {named}, which is not a file")
        return named
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "_lib", LIB_NAME)
    if os.path.isfile(installed) and not os.path.isfile(os.path.join(here, "..", "..", "go.mod")):
        return installed
    from . import _build

    return str(_build.find_library())


def _load(path: str) -> ctypes.CDLL:
    global _lib, _lib_path, _loaded_pid
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LibraryError("load_failed", f"loading {path}: {e}") from None
    try:
        lib.dlroute_abi_version.restype = c_uint32
        lib.dlroute_abi_version.argtypes = []
    except AttributeError:
        raise LibraryError("abi_version", f"{path} is not libdlroute: it has no dlroute_abi_version") from None
    got = lib.dlroute_abi_version()
    if got != ABI_VERSION:
        raise LibraryError("abi_version", f"{path} has ABI version {got}; this package speaks version {ABI_VERSION}: "
                           "rebuild the library from the same checkout as the package, or reinstall both")
    out = [c_void_p, c_size_t, POINTER(c_size_t)]
    sigs = {
        "dlroute_version": ([], c_char_p),
        "dlroute_open": ([c_char_p, c_size_t, c_char_p, c_size_t, POINTER(c_uint64)] + out, c_int),
        "dlroute_close": ([c_uint64], c_int),
        "dlroute_rulesets": ([c_uint64] + out, c_int),
        "dlroute_ruleset": ([c_uint64, c_char_p, c_size_t, POINTER(c_uint64)] + out, c_int),
        "dlroute_describe": ([c_uint64] + out, c_int),
        "dlroute_resolve_json": ([c_uint64, c_char_p, c_size_t] + out, c_int),
        "dlroute_explain_json": ([c_uint64, c_char_p, c_size_t] + out, c_int),
        "dlroute_resolve": ([c_uint64, c_char_p, c_size_t] + out, c_int),
        "dlroute_exchange_json": ([c_uint64, c_char_p, c_size_t, POINTER(c_int32)] + out, c_int),
        "dlroute_interop_json": ([c_uint64, c_char_p, c_size_t] + out, c_int),
        "dlroute_interop_matrix_json": ([c_uint64, c_char_p, c_size_t] + out, c_int),
    }
    for name, (args, res) in sigs.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryError("abi_version", f"{path} has no {name}: it was built from an older checkout "
                               "than the package; rebuild the library from the same checkout, or reinstall both") from None
        fn.argtypes, fn.restype = args, res
    _lib, _lib_path, _loaded_pid = lib, path, os.getpid()
    return lib


def library_path() -> str:
    library()
    assert _lib_path is not None
    return _lib_path


class _Buffer:
    """A thread's output buffer and length, grown when an answer does not
    fit."""

    def __init__(self) -> None:
        self.size = _BUFFER
        self.buf = ctypes.create_string_buffer(self.size)
        self.addr = ctypes.addressof(self.buf)
        self.len = c_size_t(0)
        self.len_ref = ctypes.byref(self.len)

    def grow(self, size: int) -> None:
        self.size = size
        self.buf = ctypes.create_string_buffer(size)
        self.addr = ctypes.addressof(self.buf)


def _buffer() -> _Buffer:
    b = getattr(_local, "buffer", None)
    if b is None:
        b = _local.buffer = _Buffer()
    return b


def call(name: str, *args: Any) -> tuple[int, bytes]:
    """Calls the entry name with args and the thread's output buffer; the
    status and the output's bytes. TOO_SMALL is retried with a buffer of
    the size asked for."""
    lib = _lib
    if lib is None:
        lib = library()
    fn = getattr(lib, name)
    b = _buffer()
    while True:
        status = fn(*args, b.addr, b.size, b.len_ref)
        n = b.len.value
        if status != TOO_SMALL:
            return status, ctypes.string_at(b.addr, n)
        b.grow(n)


def fail(status: int, out: bytes, what: str) -> DlrouteError:
    """The exception of a status that no caller handles itself; out is
    the library's error object, when it wrote one."""
    if status == FORKED:
        return ForkedError("forked", FORK_HINT)
    if status == BAD_HANDLE:
        return LibraryError("closed", f"{what}: the rules were closed")
    detail = parse(out) if out else None
    if not isinstance(detail, dict):
        detail = {}
    code = detail.get("code", STATUS_NAMES.get(status, f"status {status}"))
    message = detail.get("message", what)
    if status == INTERNAL:
        return LibraryError("internal", f"{what}: libdlroute failed inside (a bug; please report it): {message}", detail)
    return DlrouteError(code, message, detail or None)


def parse(out: bytes) -> Any:
    try:
        return json.loads(out)
    except ValueError:
        return None
