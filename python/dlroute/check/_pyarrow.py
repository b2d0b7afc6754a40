"""The runner's pyarrow side (:mod:`dlroute.check`): ``pyarrow.Array``'s
``__dlpack_device__`` and ``__dlpack__`` on an array made as the case
describes (its Arrow type, dtype and nulls), and ``pa.Array.from_dlpack``
(pyarrow 26 on) of a recording producer or of a capsule made by hand.

Every pyarrow array here is a CPU array: a case on another device
(``pyarrow.cuda``) is not in the rules. pyarrow's own exception classes
(``ArrowTypeError``, ``ArrowInvalid``, ...) are compared by name.
"""

from __future__ import annotations

from typing import Any

from .._capsules import CapsuleProducer
from ._base import Checker, Outcome, Unreachable, case_capsule, raised

#: numpy's dtype letter of each DLPack code pyarrow makes arrays of.
_KINDS = {0: "i", 1: "u", 2: "f"}


def arrow_pointer(y: Any) -> int:
    """The address of a primitive pyarrow array's values (its data buffer,
    at the array's offset): what an in-place capsule points at."""
    return y.buffers()[1].address + y.offset * (y.type.bit_width // 8)


class PyarrowChecker(Checker):
    library = "pyarrow"
    rulesets = ("pyarrow",)

    def __init__(self) -> None:
        import numpy
        import pyarrow

        self.pa, self.np = pyarrow, numpy

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        """The pyarrow array the input describes: six values of its Arrow
        type (``arrow_type``, else the dtype facts), the last null where
        ``null_count`` says so, or none where its shape is empty."""
        pa, np = self.pa, self.np
        n = 0 if 0 in (inp.get("shape") or [1]) else 6
        mask = np.array([i >= n - inp.get("null_count", 0) for i in range(n)]) if inp.get("null_count") else None
        if inp.get("arrow_type"):
            return pa.array(np.arange(n), mask=mask).cast(pa.type_for_alias(inp["arrow_type"]), safe=False)
        code, bits = inp.get("dtype_code", dflt["dtype_code"]), inp.get("dtype_bits", dflt["dtype_bits"])
        if code == 6:
            return pa.array(np.arange(n) % 2 == 0, mask=mask)
        if code not in _KINDS:
            raise Unreachable(f"needs a pyarrow array of DLPack dtype code {code}, which Arrow has no type of")
        return pa.array(np.arange(n).astype(f"{_KINDS[code]}{bits // 8}"), mask=mask)

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        """A primitive array's values; 0 for a bit-packed or variable-width
        array, which has no values pointer (pyarrow refuses it)."""
        return arrow_pointer(x) if self.pa.types.is_integer(x.type) or self.pa.types.is_floating(x.type) else 0

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """pa.Array.from_dlpack of a capsule made by hand as the input
        describes (with a deleter: pyarrow calls it when it refuses)."""
        capsule, dev, pointer = case_capsule(inp, dflt, kind="dltensor_versioned", deleter=True)
        try:
            y = self.pa.Array.from_dlpack(CapsuleProducer(capsule, dev))
        except Exception as e:
            return raised(e)
        return {"device": [int(v) for v in y.__dlpack_device__()], "copy": arrow_pointer(y) != pointer}

    ARRAYS = ("pa.array(np.arange(6.0))", "pa.array(np.arange(6.0, dtype=np.float32))",
              "pa.array(np.arange(4, dtype=np.uint16))", "pa.array([True, False, True])",
              "pa.array([1.0, None, 3.0])", "pa.array(np.zeros(0))", "pa.array(np.arange(8.0))[2:6]")

    def namespace(self) -> dict[str, Any]:
        return {"pa": self.pa, "np": self.np}

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """pyarrow@'s inputs and the facts of the pyarrow array x: its type
        as a DLPack dtype (or ``arrow_type`` where DLPack has none), its
        null count, and a vector of its length, C-contiguous."""
        pa, t = self.pa, x.type
        out: dict[str, Any] = {"shape": [len(x)], "strides": None}
        if pa.types.is_boolean(t):
            out.update(dtype_code=6, dtype_bits=8)
        elif pa.types.is_integer(t) or pa.types.is_floating(t):
            out.update(dtype_code=0 if pa.types.is_signed_integer(t) else 1 if pa.types.is_integer(t) else 2,
                       dtype_bits=t.bit_width)
            address = arrow_pointer(x) if len(x) else 64
            out["data_alignment"] = next(a for a in (64, 32, 16, 8, 4, 2, 1) if address % a == 0)
        else:
            out["arrow_type"] = str(t)
        if x.null_count:
            out["null_count"] = x.null_count
        return out

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.pa.Array.from_dlpack(x, **kwargs)
