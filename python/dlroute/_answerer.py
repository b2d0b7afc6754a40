"""The answerer of a forked child (_remote.py): runs the library's entries
for it, in a fresh interpreter whose Go runtime is its own.

Started as ``python -I -S -c ... LIBRARY``; reads requests on stdin and
writes replies on stdout until stdin closes. Anything else that would
write to stdout goes to stderr, so nothing but replies is on the pipe.
Ctrl-C is the child's to handle: the answerer ignores SIGINT and ends with
its pipe.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from . import _native, _remote


def answer(request: tuple[Any, ...]) -> Any:
    op, *args = request
    if op == "call":
        name, handle, data = args
        return _native.call(name, handle, data)
    if op == "open":
        return _native.open_rules(*args)
    if op == "ruleset":
        return _native.ruleset(*args)
    if op == "exchange":
        return _native.exchange(*args)
    if op == "close":
        return _native.close(*args)
    if op == "version":
        return _native.version()
    raise ValueError(f"the answerer has no request {op!r}")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _native._load(sys.argv[1])
    while True:
        request = _remote.read(requests)
        if request is None:
            return
        try:
            reply: tuple[str, Any] = ("ok", answer(request))
        except Exception as e:  # the child raises it as its own
            reply = ("raise", e)
        _remote.write(replies, reply)


if __name__ == "__main__":
    main()
