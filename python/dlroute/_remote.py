"""The pipe to an answerer (_answerer.py), for a child forked after the
library loaded: requests and replies as length-prefixed pickles.

The answerer is this package in a fresh interpreter (``-I -S``: nothing
from the environment or site-packages, the package's own directory on
its path), loading the library the parent loaded. It ends when the pipe
closes, that is when the child that started it ends.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
from typing import Any

_HEADER = struct.Struct(">I")


class Answerer:
    """A running answerer. ``ask`` is not thread-safe: the caller holds a
    lock. Raises OSError where the interpreter cannot be started, or a
    reply cannot be read (the answerer died)."""

    def __init__(self, lib_path: str) -> None:
        if not sys.executable:
            raise OSError("this interpreter does not know its own executable (sys.executable is empty)")
        package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        code = f"import sys; sys.path.insert(0, {package_parent!r}); from dlroute import _answerer; _answerer.main()"
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", code, lib_path],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._to, self._from = self._proc.stdin, self._proc.stdout

    def ask(self, request: tuple[Any, ...]) -> Any:
        write(self._to, request)
        reply = read(self._from)
        if reply is None:
            code = self._proc.poll()
            raise OSError(f"it exited with status {code}" if code is not None else "it closed its pipe")
        kind, value = reply
        if kind == "raise":
            raise value
        return value

    def __del__(self) -> None:
        try:
            self._to.close()
            self._proc.returncode = self._proc.poll()  # no "still running" warning: it ends at the close
        except Exception:
            pass


def write(stream: Any, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read(stream: Any) -> Any:
    """The next value, or None at the end of the stream."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)
