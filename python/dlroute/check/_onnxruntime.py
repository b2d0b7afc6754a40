"""The runner's onnxruntime side (:mod:`dlroute.check`): a CPU
``onnxruntime.OrtValue``'s ``__dlpack_device__`` and ``__dlpack__``, and
``OrtValue.from_dlpack`` (the public wrapper, 1.26 on) of a recording
producer or of a producer of a capsule made by hand.

Every OrtValue the CPU wheel makes is a CPU one; a capsule labelled with
a GPU device is read without touching the device (the OrtValue only
records it), so those cases run here too. A capsule of another name than
``dltensor`` is imported in a child interpreter: 1.26 to 1.30 crash on it.
"""

from __future__ import annotations

from typing import Any

from .._capsules import CapsuleProducer, read_capsule
from ._base import Checker, Outcome, Unreachable, case_capsule, raised, run_child

#: numpy's dtype letter of each DLPack code an OrtValue is made of here.
_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}


class OnnxruntimeChecker(Checker):
    library = "onnxruntime"
    rulesets = ("onnxruntime",)

    def __init__(self) -> None:
        import numpy
        import onnxruntime

        self.ort, self.np = onnxruntime, numpy

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        """The CPU OrtValue the input describes, made from a numpy array of
        its dtype and shape."""
        np = self.np
        code, bits = inp.get("dtype_code", dflt["dtype_code"]), inp.get("dtype_bits", dflt["dtype_bits"])
        if code not in _KINDS or bits % 8:
            raise Unreachable(f"needs an OrtValue of DLPack dtype {code}:{bits}, which numpy makes none of")
        shape = inp.get("shape", dflt.get("shape") or [8])
        a = (np.arange(int(np.prod(shape))) % 2).astype(f"{_KINDS[code]}{bits // 8}").reshape(shape)
        return self.ort.OrtValue.ortvalue_from_numpy(a)

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        if inp.get("capsule", dflt.get("capsule")) != "dltensor":
            # 1.26-1.30 read through the NULL pointer of a capsule of another name: in a child
            return run_child({"kind": "import", "library": self.library, "inp": inp, "dflt": dflt})
        return self.import_(inp, dflt)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """OrtValue.from_dlpack of a producer of a capsule made by hand as
        the input describes (with a deleter: the OrtValue calls it when
        it is freed)."""
        capsule, dev, pointer = case_capsule(inp, dflt, deleter=True)
        try:
            y = self.ort.OrtValue.from_dlpack(CapsuleProducer(capsule, dev))
        except Exception as e:
            return raised(e)
        return {"device": [int(v) for v in y.__dlpack_device__()], "copy": y.data_ptr() != pointer}

    ARRAYS = ("ort.OrtValue.ortvalue_from_numpy(np.arange(6.0, dtype=np.float32))",
              "ort.OrtValue.ortvalue_from_numpy(np.array([True, False, True]))",
              "ort.OrtValue.ortvalue_from_numpy(np.arange(4, dtype=np.uint16))",
              "ort.OrtValue.ortvalue_from_numpy(np.array(3.0))",
              "ort.OrtValue.ortvalue_from_numpy(np.zeros(0))",
              "ort.OrtValue.ortvalue_from_numpy(np.arange(6.0).reshape(2, 3))")

    def namespace(self) -> dict[str, Any]:
        return {"ort": self.ort, "np": self.np}

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """The facts of the CPU OrtValue x (always C-contiguous): its numpy
        view's dtype and shape, and the alignment of the data its capsule
        points at (ORT's buffer, which JAX refuses to view unless 64-byte
        aligned; an empty one's too)."""
        from ..arrays import facts_of

        facts = facts_of(x.numpy())
        out = {k: facts[k] for k in ("dtype_code", "dtype_bits", "dtype_lanes", "shape") if k in facts}
        address = int(read_capsule(x.__dlpack__())["data"])
        out["data_alignment"] = next(a for a in (64, 32, 16, 8, 4, 2, 1) if address % a == 0)
        return out

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.ort.OrtValue.from_dlpack(x, **kwargs)
