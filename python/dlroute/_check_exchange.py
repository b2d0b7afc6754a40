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


def run_exchanges(engine: Any, checkers: dict[str, Checker], refs: dict[str, str]) -> list[Result]:
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
            refs_label = f"{p_ref} -> {c_ref}"
            if device == "cuda" and not _has_cuda(consumer):
                out.append(Result(label, refs_label, name, "unreachable", "needs a CUDA device"))
                continue
            try:
                cell = engine.interop(p_ref, c_ref, array=array_of(x)[1], copy=copy, device=device)
            except DlrouteError as e:
                out.append(_unanswered(label, refs_label, name, e, lambda: _consumed(consumer, x, kwargs)))
                continue
            want = _with_facts(engine, cell, x) or (
                {"raise": [cell.error_type, cell.error_message]} if cell.outcome == "error"
                else {"device": list(cell.device or ()), "copy": cell.copies})
            got = _consumed(consumer, x, kwargs)
            status = "agree" if want == got else "differ"
            out.append(Result(label, refs_label, name, status, None, want, got))
    return out


#: The array facts of issue 27's contract that a consumer's import reads
#: from the capsule (jax-import's).
FACTS = ("dtype_code", "dtype_bits", "shape", "strides", "data_alignment")


def _with_facts(engine: Any, cell: Any, x: Any) -> Outcome | None:
    """The cell's outcome with its import decided again from the capsule
    the producer makes here, where the import's rule set reads array facts
    (dtype, shape, strides, alignment) that the cell's input left at their
    defaults; None where it reads none or has them all. The capsule is the
    one the cell's last request asks ``__dlpack__`` for, made by x itself.
    (Until ``dlroute interop`` passes the producer's array facts to the
    consumer, issue 27, this is where the exchange's import reads them.)"""
    from ._check_jax_import import capsule_facts

    if cell.outcome == "error" and cell.decider["call"] != "from_dlpack":
        return None
    imp = next((st for st in reversed(cell.steps) if st["call"] == "from_dlpack"), None)
    export = next((st for st in reversed(cell.steps) if st["call"] == "__dlpack__"), None)
    if imp is None or export is None:
        return None
    rs = engine.ruleset(imp["decision"]["ruleset"])
    declared = {i["name"] for i in rs.inputs}
    missing = [k for k in FACTS if k in declared and k not in imp["input"]]
    if not missing:
        return None
    req = next(st for st in reversed(cell.steps) if st["call"] == "request")
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in (req.get("kwargs") or {}).items()}
    try:
        facts = capsule_facts(x.__dlpack__(**kw))
    except Exception:
        return None
    d = rs.explain(dict(imp["input"], **{k: facts[k] for k in missing}))["decision"]
    if "error" in d:
        return {"raise": [d["error"]["type"], d["error"]["message"]]}
    return {"device": [d["device_type_code"], d["device_id"]],
            "copy": bool(export["decision"].get("copy")) or bool(d.get("copy"))}


def _consumed(consumer: Checker, x: Any, kwargs: dict[str, Any]) -> Outcome:
    """What the consumer's from_dlpack made of x: its device and whether it
    shares x's memory, or the exception."""
    try:
        y = consumer.consume(x, kwargs)
        return {"device": _device(y), "copy": pointer(y) != pointer(x)}
    except Exception as e:
        return raised(e)


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
