"""Calls that may kill the interpreter, run in a child (for
:mod:`dlroute.check`): torch 1.13-2.13 abort the process (SIGABRT) when
``torch.from_dlpack`` meets a negative stride, so the runner makes such a
call in a child interpreter and reads what happened from its exit: the
outcome it printed, or the signal that ended it with the text the library
printed before (``what():  ...``), as ``{"raise": ["SIGABRT", text]}``.

``python -m dlroute.check._child SPEC`` runs one SPEC (JSON): ``{"kind":
"import", "library": ..., "inp": ..., "dflt": ...}``, a checker's
``import_`` of the capsule the case describes, or ``{"kind": "exchange",
"producer": ..., "expr": ..., "consumer": ..., "copy": ..., "device_at":
...}``, the consumer's ``from_dlpack`` of the producer's array that
``expr`` makes, with ``copy`` and the consumer's ``device_at``-th device
(``devices()``) where not None, or ``{"kind": "method", "library": ...,
"method": ..., "args": [...]}``, a checker's own method.

``python -m dlroute.check._child --serve`` runs one SPEC per line of stdin,
one after another in one interpreter, and prints each outcome on a line
that starts with :data:`MARK` (a library may print on stdout too): the
runner's calls go there (``_base.run_child``, one child for a run), and a
call that kills the interpreter is that call's outcome; the next starts
another (``_base.Child``)."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from ._base import Checker, consumed
from ._libraries import CHECKERS

#: What starts each outcome line of ``--serve``.
MARK = "\x1edlroute-child "


def _main(spec: dict[str, Any], made: dict[str, Checker] | None = None) -> dict[str, Any]:
    warnings.simplefilter("ignore")
    checkers = CHECKERS
    if spec["kind"] == "method":
        made = {} if made is None else made
        if spec["library"] not in made:
            made[spec["library"]] = checkers[spec["library"]]()
        out: dict[str, Any] = getattr(made[spec["library"]], spec["method"])(*spec["args"])
        return out
    if spec["kind"] == "import":
        return checkers[spec["library"]]().import_(spec["inp"], spec["dflt"])
    producer = checkers[spec["producer"]]()
    consumer = producer if spec["consumer"] == spec["producer"] else checkers[spec["consumer"]]()
    device = list(consumer.devices())[spec["device_at"]]
    kwargs = {k: v for k, v in (("copy", spec["copy"]), ("device", device)) if v is not None}
    return consumed(consumer, producer.make(spec["expr"]), kwargs)


def _serve() -> None:
    """One spec per line of stdin until it ends; a runner error in one is
    its outcome (``{"child": ...}``), and the next is run."""
    made: dict[str, Checker] = {}
    for line in sys.stdin:
        try:
            out = _main(json.loads(line), made)
        except Exception as e:  # the runner's own failure, reported as the case's
            out = {"child": f"{type(e).__name__}: {e}"}
        print(MARK + json.dumps(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        _serve()
    else:
        print(json.dumps(_main(json.loads(sys.argv[1]))))
