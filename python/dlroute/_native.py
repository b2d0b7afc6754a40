"""ctypes over libdlroute (libdlroute/dlroute.h): loading, the ABI check,
one call shape for every entry, and what answers after fork.

ctypes releases the GIL around each call, so threads decide in parallel;
each thread has its own output buffer.

**After fork.** The library runs a Go runtime, which does not survive
``fork()``. In a child forked after the library loaded, every entry is
answered by an answerer: a fresh interpreter (``python -m
dlroute._answerer``) started on the first call that needs the library,
which loads the same library, opens the same rules and answers over a
pipe (_answerer.py). The objects the parent made keep working: their
handles are opened again in the answerer from what opened them (the
rules' path and key, the rule set's ref), and the answers the parent
remembered (RuleSet's memos) are used as they are, without a call.
ForkedError remains only where no answerer can be started.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

from ._codes import *  # noqa: F403 (the statuses and steps of dlroute.h, generated from the Go constants)
from .errors import DlrouteError, ForkedError, LibraryError

if TYPE_CHECKING:
    from . import _remote

ABI_VERSION = 1  # DLROUTE_ABI_VERSION of the header this package speaks

FORK_HINT = ("libdlroute was loaded before this process forked, and its Go runtime does not survive fork; "
             "a forked child's calls are answered by a fresh interpreter (python -m dlroute._answerer), "
             "which could not be started here: use the 'spawn' or 'forkserver' start method of multiprocessing "
             "(torch DataLoader: multiprocessing_context='spawn') and load dlroute in the child")

_BUFFER = 1 << 16
# How often a call is asked again with the larger buffer the library
# asked for (TOO_SMALL): an answer never grows between two asks of the
# same input, so more means a bug; the Node client stops at 3 too.
MAX_TOO_SMALL_RETRIES = 3

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_lib_path: str | None = None
_local = threading.local()
# True in a child forked after the library loaded: the entries go to the
# answerer (_remote) instead of the library.
_forked = False
# handle -> what opened it: ("open", rules path, key) or ("ruleset",
# engine handle, ref); kept across fork so a child can open it again.
_recipes: dict[int, tuple[Any, ...]] = {}


# In a forked child: the answerer, started on first need; each handle's
# counterpart in it; the next handle for what the child opens itself.
_answerer: _remote.Answerer | None = None
_theirs: dict[int, int] = {}
_next_handle = 1 << 48
_answerer_lock = threading.Lock()


def _mark_forked() -> None:
    # Runs in the child: the library's Go runtime is gone; the answerer
    # of a parent that was itself a forked child is the parent's, not ours.
    global _lib, _forked, _answerer, _answerer_lock
    if _lib is not None or _forked:
        _lib, _forked, _answerer = None, True, None
        _theirs.clear()
        _answerer_lock = threading.Lock()


os.register_at_fork(after_in_child=_mark_forked)


def library() -> ctypes.CDLL:
    """The loaded library, loading (and if need be building) it on first
    use. Raises LibraryError, or ForkedError in a forked child (whose
    calls go to the answerer instead)."""
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        if _forked:
            raise ForkedError("forked", FORK_HINT)
        from . import _build

        return _load(str(_build.find_library()))


def _load(path: str) -> ctypes.CDLL:
    global _lib, _lib_path
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
    _lib, _lib_path = lib, path
    return lib


def library_path() -> str:
    """The path of the library loaded (in a forked child: the parent's,
    which its answerer loads)."""
    if not _forked:
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


def _call_local(name: str, *args: Any) -> tuple[int, bytes]:
    """Calls the entry name of the loaded library with args and the
    thread's output buffer: the status and the output's bytes. TOO_SMALL
    is asked again with a buffer of the size asked for, at most
    MAX_TOO_SMALL_RETRIES times."""
    lib = _lib
    if lib is None:
        lib = library()
    fn = getattr(lib, name)
    b = _buffer()
    for _ in range(MAX_TOO_SMALL_RETRIES + 1):
        status = fn(*args, b.addr, b.size, b.len_ref)
        n = b.len.value
        if status != TOO_SMALL:
            return status, ctypes.string_at(b.addr, n)
        b.grow(n)
    raise LibraryError("internal", f"{name}: libdlroute asked for a larger buffer {MAX_TOO_SMALL_RETRIES + 1} times "
                       f"(last {n} bytes); a bug, please report it")


def call(name: str, handle: int, data: bytes | None = None) -> tuple[int, bytes]:
    """Calls the entry name on handle (an engine's or a rule set's), with
    data (an input line) where the entry takes one: the status and the
    output's bytes."""
    if _forked:
        status, out = _ask("call", name, _their(handle), data)
        return status, out
    if data is None:
        return _call_local(name, handle)
    return _call_local(name, handle, data, len(data))


def open_rules(path: bytes, key: bytes) -> tuple[int, bytes, int]:
    """dlroute_open: the status, the output and the engine's handle."""
    recipe = ("open", os.path.abspath(path) if path else b"", os.path.abspath(key) if os.path.isfile(key) else key)
    if _forked:
        status, out, theirs = _ask("open", recipe[1], recipe[2])
        return status, out, _ours(theirs, recipe) if status == OK else 0
    handle = c_uint64(0)
    status, out = _call_local("dlroute_open", path, len(path), key, len(key), byref(handle))
    if status == OK:
        _recipes[handle.value] = recipe
    return status, out, handle.value


def ruleset(engine: int, ref: bytes) -> tuple[int, bytes, int]:
    """dlroute_ruleset: the status, the output and the rule set's handle."""
    if _forked:
        status, out, theirs = _ask("ruleset", _their(engine), ref)
        return status, out, _ours(theirs, ("ruleset", engine, ref)) if status == OK else 0
    handle = c_uint64(0)
    status, out = _call_local("dlroute_ruleset", engine, ref, len(ref), byref(handle))
    if status == OK:
        _recipes[handle.value] = ("ruleset", engine, ref)
    return status, out, handle.value


def exchange(handle: int, data: bytes) -> tuple[int, bytes, int]:
    """dlroute_exchange_json: the status, the output and the step."""
    if _forked:
        status, out, step = _ask("exchange", _their(handle), data)
        return status, out, step
    step = c_int32(0)
    status, out = _call_local("dlroute_exchange_json", handle, data, len(data), byref(step))
    return status, out, step.value


def close(handle: int) -> None:
    """dlroute_close; nothing where the library is not loaded here."""
    if _forked:
        theirs = _theirs.pop(handle, None)
        if theirs is not None and _answerer is not None:
            _ask("close", theirs)
    elif _lib is not None:
        _lib.dlroute_close(handle)


def version() -> str:
    """dlroute_version."""
    if _forked:
        return str(_ask("version"))
    return str(library().dlroute_version().decode())


def _ask(*request: Any) -> Any:
    """The answerer's reply to request, starting it on first need. Raises
    ForkedError, with the reason, where it cannot be started or dies."""
    global _answerer
    with _answerer_lock:
        if _answerer is None:
            from . import _remote

            if _lib_path is None:
                raise ForkedError("forked", FORK_HINT + ": the parent's library path is not known")
            try:
                _answerer = _remote.Answerer(_lib_path)
            except OSError as e:
                raise ForkedError("forked", f"{FORK_HINT}: {e}") from None
        try:
            return _answerer.ask(request)
        except OSError as e:
            _answerer = None
            _theirs.clear()
            raise ForkedError("forked", f"{FORK_HINT}: the answerer stopped ({e})") from None


def _their(handle: int) -> int:
    """The answerer's handle for ours, opening it there first from what
    opened it here (an engine before its rule sets)."""
    theirs = _theirs.get(handle)
    if theirs is not None:
        return theirs
    recipe = _recipes.get(handle)
    if recipe is None:
        return 0  # never opened: the library answers BAD_HANDLE
    if recipe[0] == "open":
        status, out, theirs = _ask("open", recipe[1], recipe[2])
    else:
        status, out, theirs = _ask("ruleset", _their(recipe[1]), recipe[2])
    if status != OK:
        raise fail(status, out, "reopening in the answerer after fork")
    _theirs[handle] = theirs
    return int(theirs)


def _ours(theirs: int, recipe: tuple[Any, ...]) -> int:
    """A handle for one the answerer opened for this child, numbered
    apart from the parent's."""
    global _next_handle
    with _lock:
        handle = _next_handle
        _next_handle += 1
    _recipes[handle] = recipe
    _theirs[handle] = theirs
    return handle


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
