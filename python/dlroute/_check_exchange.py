"""The runner's exchanges (:mod:`dlroute.check`): every ordered pair of
installed libraries, each real array the producer makes here into the
consumer's ``from_dlpack(x, copy=..., device=...)``, against the cell
``dlroute interop`` decides for the same array and arguments (the two rule
sets the runner checked, chained). Compared: the exception's type and
message, or the device of the array made and whether it shares the
producer's memory."""

from __future__ import annotations

import itertools
from typing import Any

from .check import Checker, Outcome, Result, raised
from .errors import DlrouteError

COPIES = [None, True, False]


def pointer(x: Any) -> int:
    """The address of x's data, however its library says it."""
    for read in (lambda: x.ctypes.data, lambda: x.data_ptr(), lambda: x.unsafe_buffer_pointer(),
                 lambda: x.data.ptr):
        try:
            return int(read())
        except (AttributeError, TypeError):
            continue
    raise TypeError(f"cannot read the data pointer of a {type(x).__qualname__}")


def _device(y: Any) -> list[int]:
    code, device_id = y.__dlpack_device__()
    return [int(code), int(device_id)]


def run_exchanges(engine: Any, checkers: dict[str, Checker], refs: dict[str, str], notes: list[str]) -> list[Result]:
    from .interop import array_of

    out: list[Result] = []
    for (p, producer), (c, consumer) in itertools.permutations(checkers.items(), 2):
        p_ref, c_ref = refs.get(p), refs.get(c)
        if p_ref is None or c_ref is None:
            continue
        label = f"{p}->{c}"
        for (what, x), copy, device in itertools.product(producer.arrays(), COPIES, consumer.devices()):
            kwargs = {k: v for k, v in (("copy", copy), ("device", device)) if v is not None}
            name = f"{c}.from_dlpack({what}{''.join(f', {k}={v!r}' for k, v in kwargs.items())})"
            try:
                cell = engine.interop(p_ref, c_ref, array=array_of(x)[1], copy=copy, device=device)
            except DlrouteError as e:
                notes.append(f"{label}: not asked: {str(e).splitlines()[0]}")
                break
            if device == "cuda" and not _has_cuda(consumer):
                out.append(Result(label, f"{p_ref} -> {c_ref}", name, "unreachable", "needs a CUDA device"))
                continue
            want: Outcome = ({"raise": [cell.error_type, cell.error_message]} if cell.outcome == "error"
                             else {"device": list(cell.device or ()), "copy": cell.copies})
            try:
                y = consumer.consume(x, kwargs)
                got: Outcome = {"device": _device(y), "copy": pointer(y) != pointer(x)}
            except Exception as e:
                got = raised(e)
            status = "agree" if want == got else "differ"
            out.append(Result(label, f"{p_ref} -> {c_ref}", name, status, None, want, got))
    return out


def _has_cuda(checker: Checker) -> bool:
    return bool(getattr(checker, "cuda", False))
