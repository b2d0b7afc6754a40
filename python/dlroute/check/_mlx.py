"""The runner's mlx side (:mod:`dlroute.check`): rules/mlx, on the Linux
CPU wheel (mlx[cpu]).

A case becomes a real call: ``x.__dlpack_device__()`` and
``x.__dlpack__(**keywords)`` on an mlx array, ``mx.from_dlpack`` of a
producer that records how it is asked, or of a producer handing out a
capsule made by hand. An mlx array's data pointer is read from the capsule
it exports (it has no pointer attribute).
"""

from __future__ import annotations

import builtins
from typing import Any

from .._capsules import CapsuleProducer, make_capsule, read_capsule
from ._arrays import capsule_facts, defaults, dlpack_kwargs, empty_aware, export, negated_import, request
from ._base import (Checker, Outcome, Unreachable, decided_device, decided_export, decided_import, exported_facts,
                    raised, values)


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

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        mx = self.mx
        call = inp.get("call")
        if call not in ("__dlpack_device__", "__dlpack__", "request", "from_dlpack"):
            raise Unreachable("not a call of the library: the rules' own refusal of an unknown call")
        explanation = rs.explain(inp)
        if call == "__dlpack_device__":
            return decided_device(explanation), {"device": [int(v) for v in mx.arange(6.0).__dlpack_device__()]}
        if call == "__dlpack__":
            x = mx.arange(6.0)
            return decided_export(explanation), export(x, dlpack_kwargs(inp), array_pointer(x))
        if call == "request":
            if inp.get("failed_type", "TypeError") not in ("", "TypeError"):
                return self.request_after(inp, explanation)
            return request(mx.from_dlpack, inp, explanation)
        negated = negated_import(mx.from_dlpack, inp, decided_import(explanation))
        if negated is not None:
            return decided_import(explanation), negated
        return empty_aware(inp, decided_import(explanation), self.import_(inp, defaults(rs)))

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

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """mx.from_dlpack of a producer handing out the capsule the input
        describes, made by hand (a capsule read already: read once by
        numpy, which renames it)."""
        dev = tuple(inp.get("capsule_device", dflt.get("capsule_device") or [1, 0]))
        name = inp.get("capsule", dflt.get("capsule") or "dltensor")
        used = name.startswith("used_")
        versioned = name.removeprefix("used_") == "dltensor_versioned"
        version = tuple(inp.get("capsule_version", dflt.get("capsule_version") or [1, 0]))
        capsule = make_capsule(dev, versioned=versioned, version=version, **capsule_facts(inp, dflt))
        if used:
            import numpy as np

            np.from_dlpack(CapsuleProducer(capsule, dev))
        pointer = None if used else read_capsule(capsule)["data"]
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
