"""The runner's mlx side (:mod:`dlroute.check`): rules/mlx, on the Linux
CPU wheel (mlx[cpu]).

A case becomes a real call: ``x.__dlpack_device__()`` and
``x.__dlpack__(**keywords)`` on an mlx array, ``mx.from_dlpack`` of a
producer that records how it is asked, or of a producer handing out a
capsule made by hand. An mlx array's data pointer is read from the capsule
it exports (it has no pointer attribute).

A case whose producer is a torch tensor (``producer_type`` torch.Tensor)
is run on one: a request's, with torch.Tensor.__dlpack__ replaced for the
call by one that raises the case's exception and records each call (what
nanobind does next, torch.utils.dlpack.to_dlpack, is torch's own); a
fallback import's (``fallback``), on the tensor whose own ``__dlpack__``
raises the case's message: one that requires grad, a conjugate view with
imaginary parts, a sparse tensor.
"""

from __future__ import annotations

import builtins
from typing import Any, Callable

from .._capsules import CapsuleProducer, read_capsule
from ._base import Checker, Outcome, Unreachable, case_capsule, consumed, exported_facts, raised, values

#: The torch tensors whose __dlpack__ raises each message a fallback case
#: names (torch 2.15's), by the message's start.
TORCH_REFUSED: dict[str, Callable[[Any], Any]] = {
    "Can't export tensors that require gradient": lambda torch: torch.arange(1.0, 7.0).requires_grad_(),
    "Can't export tensors with the conjugate bit set":
        lambda torch: torch.complex(torch.arange(1.0, 4.0), torch.arange(1.0, 4.0)).conj(),
    "Can't export tensors with layout other than torch.strided": lambda torch: torch.arange(1.0, 7.0).to_sparse(),
}


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise Unreachable("needs torch: the case's producer is a torch tensor") from None
    return torch


class _Failing:
    """A producer whose first __dlpack__ raises failure, the second hands
    out a numpy capsule; it records each call's keywords."""

    def __init__(self, failure: Exception) -> None:
        self.failure, self.calls = failure, []  # type: ignore[var-annotated]

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        import numpy as np

        self.calls.append(list(kwargs.items()))
        if len(self.calls) == 1:
            raise self.failure
        return np.arange(6.0).__dlpack__()


def array_pointer(x: Any) -> int:
    """The address of an mlx array's data: its exported capsule's."""
    return int(read_capsule(x.__dlpack__())["data"])


class MlxChecker(Checker):
    library = "mlx"
    rulesets = ("mlx",)

    def __init__(self) -> None:
        import mlx.core

        self.mx = mlx.core

    def release(self) -> str:
        return str(self.mx.__version__)

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        return self.mx.arange(6.0)

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        return array_pointer(x)

    def requested(self, inp: dict[str, Any], explanation: dict[str, Any],
                  dflt: dict[str, Any]) -> tuple[Outcome, Outcome]:
        if str(inp.get("producer_type", "")).startswith("torch"):
            return self.request_of_torch(inp, explanation)
        if inp.get("failed_type", "TypeError") not in ("", "TypeError"):
            return self.request_after(inp, explanation)
        return super().requested(inp, explanation, dflt)

    def request_after(self, inp: dict[str, Any], explanation: dict[str, Any]) -> tuple[Outcome, Outcome]:
        """What mx.from_dlpack asks on attempt 2 of a producer whose first
        __dlpack__ raised the builtin exception failed_type (a BufferError,
        a RuntimeError), or the exception it raises instead."""
        failure = getattr(builtins, inp["failed_type"])
        producer = _Failing(failure(inp.get("failed_message", "")))
        try:
            self.mx.from_dlpack(producer)
            got: Outcome = {"keywords": [k for k, _ in producer.calls[-1]], "calls": len(producer.calls)}
        except Exception as e:
            got = {**raised(e), "calls": len(producer.calls)}
        d, vals = explanation["decision"], values(explanation)
        if "error" in d:
            return {"raise": [d["error"]["type"], d["error"]["message"]], "calls": 1}, got
        return {"keywords": vals.get("request_keywords"), "calls": 2}, got

    def request_of_torch(self, inp: dict[str, Any], explanation: dict[str, Any]) -> tuple[Outcome, Outcome]:
        """What mx.from_dlpack does with a torch tensor whose __dlpack__
        raises failed_type(failed_message) on each of the attempt - 1 calls
        before the case's: ask again (the keywords of call ``attempt``), go
        on without it (``fallback``: the import succeeded after attempt - 1
        calls), or raise."""
        torch = _torch()
        attempt = inp.get("attempt", 1)
        failure = getattr(builtins, inp.get("failed_type") or "TypeError")
        real, calls = torch.Tensor.__dlpack__, []  # type: ignore[var-annotated]

        def failing(x: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(list(kwargs))
            if len(calls) < attempt:
                raise failure(inp.get("failed_message", ""))
            return real(x, *args, **kwargs)

        torch.Tensor.__dlpack__ = failing
        try:
            self.mx.from_dlpack(torch.arange(6.0))
            got: Outcome = {"fallback": len(calls) < attempt, "calls": len(calls)}
            if len(calls) >= attempt:
                got["keywords"] = calls[attempt - 1]
        except Exception as e:
            got = {**raised(e), "calls": len(calls)}
        finally:
            torch.Tensor.__dlpack__ = real
        d, vals = explanation["decision"], values(explanation)
        if "error" in d:
            return {"raise": [d["error"]["type"], d["error"]["message"]], "calls": attempt - 1}, got
        if vals.get("request_fallback"):
            return {"fallback": True, "calls": attempt - 1}, got
        return {"fallback": False, "calls": attempt, "keywords": vals.get("request_keywords")}, got

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """A fallback case's import of the real torch tensor (values
        compared), else :meth:`import_`."""
        if not inp.get("fallback"):
            return self.import_(inp, dflt)
        if list(inp.get("producer_device", [1, 0])) != [1, 0]:
            raise Unreachable("needs a torch tensor on another device than the CPU")
        torch, message = _torch(), inp.get("failed_message", "")
        make = next((f for start, f in TORCH_REFUSED.items() if message.startswith(start)), None)
        if make is None:
            raise Unreachable(f"no torch tensor here whose __dlpack__ raises {message!r}")
        x = make(torch)
        try:
            x.__dlpack__()
            return {"failed_message": None}  # torch exported it: the case's premise fails
        except Exception as e:
            if str(e) != message:
                return {"failed_message": str(e)}
        kwargs = {k: inp.get(k) for k in inp.get("keywords", []) if k == "copy"}
        return consumed(self, x, kwargs)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """mx.from_dlpack of a producer handing out the capsule the input
        describes, made by hand."""
        capsule, dev, pointer = case_capsule(inp, dflt)
        kwargs = {k: inp.get(k) for k in inp.get("keywords", []) if k == "copy"}
        try:
            y = self.mx.from_dlpack(CapsuleProducer(capsule, dev), **kwargs)
            self.mx.eval(y)
        except Exception as e:
            return raised(e)
        return {"device": [int(v) for v in y.__dlpack_device__()],
                "copy": pointer is not None and array_pointer(y) != pointer}

    ARRAYS = ("mx.arange(6.0)", "mx.array([True, False, True])", "mx.arange(4.0).astype(mx.complex64)",
              "mx.arange(4.0).astype(mx.bfloat16)", "mx.arange(4).astype(mx.uint16)", "mx.array(3.0)",
              "mx.zeros((0,))", "mx.arange(8.0)[::2]", "mx.arange(6.0).reshape(2, 3).T", "mx.arange(8.0)[::-1]")

    def namespace(self) -> dict[str, Any]:
        return {"mx": self.mx}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.mx.from_dlpack(x, **kwargs)

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """An array's facts, read from the capsule MLX exports of it."""
        return exported_facts(x.__dlpack__(), x.__dlpack_device__()[0])
