"""Calls that may kill the interpreter, run in a child (for
:mod:`dlroute.check`): torch 1.13-2.13 abort the process (SIGABRT) when
``torch.from_dlpack`` meets a negative stride, so the runner makes such a
call in a fresh interpreter and reads what happened from its exit: the
outcome it printed, or the signal that ended it with the text the library
printed before (``what():  ...``), as ``{"raise": ["SIGABRT", text]}``.

``python -m dlroute.check._child SPEC`` runs one SPEC (JSON): ``{"kind":
"import", "library": ..., "inp": ..., "dflt": ...}``, a checker's
``import_`` of the capsule the case describes, or ``{"kind": "exchange",
"producer": ..., "expr": ..., "consumer": ..., "copy": ..., "device_at":
...}``, the consumer's ``from_dlpack`` of the producer's array that
``expr`` makes, with ``copy`` and the consumer's ``device_at``-th device
(``devices()``) where not None."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from ._base import consumed
from ._libraries import CHECKERS

#: How long a child may run: an import or an exchange of a small array
#: takes well under a second once the libraries are imported (torch's
#: import is the most of it).
TIMEOUT_S = 180


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The outcome of spec run in a child interpreter (this one's
    executable, the package on its path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                      env.get("PYTHONPATH")]))
    try:
        r = subprocess.run([sys.executable, "-W", "ignore", "-m", "dlroute.check._child", json.dumps(spec)],
                           capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"child": f"did not end within {TIMEOUT_S} s"}
    if r.returncode < 0:
        what = re.findall(r"what\(\):\s+(.*)", r.stderr)
        return {"raise": [signal.Signals(-r.returncode).name, what[-1].strip() if what else ""]}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        return {"child": f"exit {r.returncode}: {r.stderr.strip()[-600:]}"}
    return json.loads(lines[-1])


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
