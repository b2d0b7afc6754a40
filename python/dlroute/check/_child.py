"""Calls that may kill the interpreter, run in a child (for
:mod:`dlroute.check`): torch 1.13-2.13 abort the process (SIGABRT) when
``torch.from_dlpack`` meets a negative stride, so the runner makes such a
call in a fresh interpreter and reads what happened from its exit: the
outcome it printed, or the signal that ended it with the text the library
printed before (``what():  ...``), as ``{"raise": ["SIGABRT", text]}``.

``_base.run_child(SPEC)`` starts ``python -m dlroute.check._child SPEC``,
which runs one SPEC (JSON): ``{"kind":
"import", "library": ..., "inp": ..., "dflt": ...}``, a checker's
``import_`` of the capsule the case describes, or ``{"kind": "exchange",
"producer": ..., "expr": ..., "consumer": ..., "copy": ..., "device_at":
...}``, the consumer's ``from_dlpack`` of the producer's array that
``expr`` makes, with ``copy`` and the consumer's ``device_at``-th device
(``devices()``) where not None."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from ._base import consumed
from ._libraries import CHECKERS


def _main(spec: dict[str, Any]) -> dict[str, Any]:
    warnings.simplefilter("ignore")
    checkers = CHECKERS
    if spec["kind"] == "import":
        return checkers[spec["library"]]().import_(spec["inp"], spec["dflt"])
    producer = checkers[spec["producer"]]()
    consumer = producer if spec["consumer"] == spec["producer"] else checkers[spec["consumer"]]()
    device = list(consumer.devices())[spec["device_at"]]
    kwargs = {k: v for k, v in (("copy", spec["copy"]), ("device", device)) if v is not None}
    return consumed(consumer, producer.make(spec["expr"]), kwargs)


if __name__ == "__main__":
    print(json.dumps(_main(json.loads(sys.argv[1]))))
