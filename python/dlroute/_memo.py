"""The one memo of the package: a bounded dict of answers remembered in
front of the library (a rule set's decisions, an engine's interop cells,
from_dlpack's plans), so a repeated question costs a dictionary lookup."""

from __future__ import annotations

import threading
from typing import TypeVar

__all__ = ["Memo", "MEMO_SIZE"]

#: How many answers one memo holds. A process sees a handful of devices
#: and arrays, so a hit is the common case; the bound keeps a stream of
#: unique inputs from growing memory (python/RATIONALE.md, "Why are the Python
#: package's memos and retries bounded?").
MEMO_SIZE = 4096

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """Remembered answers by key, at most ``size``: a lookup is a dict's
    (``memo.get(key)``, ``memo[key]``); :meth:`put` starts again from empty
    when the memo is full, rather than grow. Safe across threads: a dict's
    read is atomic, and puts hold the memo's lock."""

    __slots__ = ("size", "_lock")

    def __init__(self, size: int = MEMO_SIZE) -> None:
        super().__init__()
        self.size = size
        self._lock = threading.Lock()

    def put(self, key: K, value: V) -> V:
        """Remembers value for key and returns it."""
        with self._lock:
            if len(self) >= self.size:
                self.clear()  # a stream of unique keys: start again rather than grow
            self[key] = value
        return value
