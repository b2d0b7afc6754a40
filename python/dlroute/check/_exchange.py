"""The runner's exchanges (:mod:`dlroute.check`): every ordered pair of
installed libraries, a library with itself too (torch's own
``torch.from_dlpack`` of a negated view reads it un-negated), each real
array the producer makes here into the consumer's ``from_dlpack(x,
copy=..., device=...)``, against the cell
``dlroute interop`` decides for the same array and arguments (the two rule
sets the runner checked, chained). Compared: the exception's type and
message, or the device of the array made, whether it shares the
producer's memory and whether it reads as the producer's does (values,
shape and dtype kind: ``_base.values_difference``); a silent difference
the rules decide (an error of type ``SilentlyDifferent``) is seen as an
import that succeeded with other values."""

from __future__ import annotations

import itertools
import math
from typing import Any

from ..errors import DlrouteError
from ._base import Checker, Outcome, Result, Unreachable, consumed, run_child, seen_as_decided

COPIES = [None, True, False]


def run_exchanges(engine: Any, checkers: dict[str, Checker], refs: dict[str, str]) -> list[Result]:
    out: list[Result] = []
    for (p, producer), (c, consumer) in itertools.product(checkers.items(), repeat=2):
        p_ref, c_ref = refs.get(p), refs.get(c)
        if p_ref is None or c_ref is None:
            continue
        label = f"{p}->{c}"
        devices = list(consumer.devices())
        for (what, x), copy, (at, device) in itertools.product(producer.arrays(), COPIES, enumerate(devices)):
            kwargs = {k: v for k, v in (("copy", copy), ("device", device)) if v is not None}
            name = f"{c}.from_dlpack({what}{''.join(f', {k}={v!r}' for k, v in kwargs.items())})"
            refs_label = f"{p_ref} -> {c_ref}"
            if isinstance(x, Unreachable):  # the producer could not make it here
                out.append(Result(label, refs_label, name, "unreachable", str(x)))
                continue
            if device == "cuda" and not _has_cuda(consumer) and not getattr(consumer, "no_driver", False):
                out.append(Result(label, refs_label, name, "unreachable", "needs a CUDA device"))
                continue
            try:
                cell = engine.interop(p_ref, c_ref, array=producer.array_inputs(x), process=consumer.consumer_inputs(),
                                      **kwargs)
            except DlrouteError as e:
                out.append(_unanswered(label, refs_label, name, e, lambda: consumed(consumer, x, kwargs)))
                continue
            want: Outcome = ({"raise": [cell.error_type, cell.error_message]} if cell.outcome == "error"
                             else {"device": list(cell.device or ()), "copy": cell.copies})
            if _may_abort(x) or cell.error_type == "SIGABRT":
                # the device by its place in the consumer's list: a JAX device is no JSON
                got = run_child({"kind": "exchange", "producer": p, "expr": what, "consumer": c,
                                 "copy": copy, "device_at": at})
            else:
                got = consumed(consumer, x, kwargs)
            got = seen_as_decided(want, got)
            if _size(x) == 0:  # an empty array's data pointer says nothing of a copy
                want.pop("copy", None)
                got.pop("copy", None)
            status = "agree" if want == got else "differ"
            out.append(Result(label, refs_label, name, status, None, want, got))
    return out


def _may_abort(x: Any) -> bool:
    """x has a negative stride, which torch 1.13-2.13 abort the
    interpreter on: its exchanges run in a child, whatever the rules say."""
    strides = getattr(x, "strides", None)
    return isinstance(strides, tuple) and any(s < 0 for s in strides)


def _size(x: Any) -> int:
    """How many elements x has: torch's and paddle's numel, numpy's, JAX's,
    MLX's, Warp's and array_api_strict's size, else its shape's product
    (TensorFlow's tensors have no size; an OrtValue's shape is a method),
    else its length (a pyarrow Array, a vector with no shape)."""
    numel = getattr(x, "numel", None)
    if callable(numel):
        return int(numel())
    size = getattr(x, "size", None)
    if isinstance(size, int):
        return size
    shape = getattr(x, "shape", None)
    if callable(shape):
        shape = shape()
    if shape is None:
        return len(x)
    return math.prod(int(n) for n in shape)


def _unanswered(label: str, refs: str, name: str, e: DlrouteError, consumed: Any) -> Result:
    """A combination the engine did not answer, counted, never dropped: a
    consumer version that declares no consumer side (``no_ruleset``) is
    unreachable, the engine's reason its why; any other error means the
    rules failed to answer a real exchange, a difference against what the
    consumer did."""
    why = str(e).splitlines()[0]
    if e.code == "no_ruleset":
        return Result(label, refs, name, "unreachable", f"the rules do not answer it: {why}")
    return Result(label, refs, name, "differ", None, {"rules_failed": why}, consumed())


def _has_cuda(checker: Checker) -> bool:
    return bool(getattr(checker, "cuda", False))
