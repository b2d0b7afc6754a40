"""The runner's warp side (:mod:`dlroute.check`): rules/warp, NVIDIA Warp
on a CPU.

A case becomes a real call: ``x.__dlpack_device__()`` and
``x.__dlpack__(**keywords)`` on a Warp array, ``wp.from_dlpack`` of a
producer that records how it is asked, or of a capsule made by hand
(taken as it is, as from_dlpack takes a capsule). Importing warp sets
``ctypes.pythonapi.PyCapsule_New``'s argument types for its own capsules,
so the runner's capsules are made with the types they need, and Warp's
given back. wp.init() runs when the
checker is made; the case of a process that has not run it runs in a
fresh interpreter.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .. import _capsules
from ._base import TIMEOUT_S, Checker, Outcome, Unreachable, case_capsule, exported_facts, raised


def make_capsule(*args: Any, **kwargs: Any) -> Any:
    """_capsules.make_capsule, with PyCapsule_New's argument types as it
    needs them for the call (Warp's own restored after)."""
    new = ctypes.pythonapi.PyCapsule_New
    saved = new.argtypes, new.restype
    new.argtypes, new.restype = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p], ctypes.py_object
    try:
        return _capsules.make_capsule(*args, **kwargs)
    finally:
        new.argtypes, new.restype = saved


class WarpChecker(Checker):
    library = "warp"
    rulesets = ("warp",)

    def __init__(self, init: bool = True) -> None:
        import warp

        self.wp = warp
        if init:
            warp.config.log_level = warp.LOG_WARNING  # no greeting on stdout, where --json writes
            warp.init()
            self.cuda_devices = int(warp.get_cuda_device_count())

    def release(self) -> str:
        return str(self.wp.__version__)

    def reachable(self, inp: dict[str, Any], dflt: dict[str, Any]) -> None:
        if inp.get("pinned") and not self.cuda_devices:
            raise Unreachable("needs CUDA for a pinned Warp array")
        if inp.get("cuda_devices", dflt.get("cuda_devices", 0)) != self.cuda_devices:
            raise Unreachable(f"needs {inp.get('cuda_devices')} CUDA devices")

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        return self.wp.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], dtype=self.wp.float32, device="cpu")

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        return int(x.ptr)

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        if not inp.get("initialized", True):
            return uninitialized_import(inp, dflt)
        return self.import_(inp, dflt)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """wp.from_dlpack of the capsule the input describes, made by hand."""
        capsule, _, pointer = case_capsule(inp, dflt, make=make_capsule)
        try:
            y = self.wp.from_dlpack(capsule)  # the capsule itself: the import, after any request
        except Exception as e:
            return raised(e)
        return {"device": [int(v) for v in y.__dlpack_device__()],
                "copy": pointer is not None and int(y.ptr) != pointer}

    ARRAYS = ("wp.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], dtype=wp.float32)", "wp.array([True, False], dtype=wp.bool)",
              "wp.array([1, 2], dtype=wp.uint16)", "wp.zeros(0, dtype=wp.float32)", "wp.zeros((2, 3), dtype=wp.float32)",
              "wp.zeros(2, dtype=wp.vec3)")

    def namespace(self) -> dict[str, Any]:
        return {"wp": self.wp}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.wp.from_dlpack(x, **kwargs)

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """An array's facts, read from the capsule Warp exports of it."""
        return {"pinned": bool(x.pinned), **exported_facts(x.__dlpack__(), x.__dlpack_device__()[0])}


def uninitialized_import(inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
    """import_ in a fresh interpreter that imports warp and never runs
    wp.init(): what a process that has made no Warp array sees."""
    code = ("import json, sys; from dlroute.check._warp import WarpChecker; "
            "c = WarpChecker(init=False); print(json.dumps(c.import_(*json.loads(sys.argv[1]))))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                     os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code, json.dumps([inp, dflt])], capture_output=True,
                       text=True, timeout=TIMEOUT_S, env=env)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        return {"child": f"exit {r.returncode}: {r.stderr.strip()[-600:]}"}
    return json.loads(lines[-1])
