"""The runner's paddle side (:mod:`dlroute.check`): rules/paddle.

A case becomes a real call of PaddlePaddle: ``x.__dlpack_device__()`` and
``x.__dlpack__(**keywords)`` on a tensor made as the input describes,
``paddle.from_dlpack`` of a producer that records how it is asked, or of a
capsule made by hand. A CPU or pinned tensor's ``__dlpack_device__`` id is
None, which the rules write 0 (their device ids are ints) and the runner
reads as 0; the array fact ``dlpack_device_id_none`` carries it to the
consumers that read it (torch's and JAX's from_dlpack). A request that kills the interpreter (a CUDA producer asked of
the CPU wheel) runs in a child, whose signal is the outcome.
"""

from __future__ import annotations

import math
from typing import Any

from .._capsules import CapsuleProducer
from ._base import (Checker, Outcome, Recorder, Unreachable, case_capsule, decided_device, device_of, exported_facts, raised,
                    run_child, values_difference)


def numpy_dtype(inp: dict[str, Any]) -> str | None:
    """The numpy dtype of a case on kDLCPU whose array facts numpy can make
    (a dtype it has, any shape and strides), so that its values can be
    compared; None for any other case (a capsule made by hand)."""
    names = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
             (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
             (2, 64): "float64", (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}
    plain = all(k in ("call", "dtype_code", "dtype_bits", "shape", "strides") for k in inp)
    if not plain or not any(k in inp for k in ("dtype_code", "strides")):
        return None
    return names.get((inp.get("dtype_code", 2), inp.get("dtype_bits", 32)))


class PaddleChecker(Checker):
    library = "paddle"
    rulesets = ("paddle",)

    def __init__(self) -> None:
        import paddle
        import paddle.utils.dlpack  # noqa: F401

        self.paddle = paddle
        self.gpu_build = bool(paddle.is_compiled_with_cuda())
        self.gpus = paddle.device.cuda.device_count() if self.gpu_build else 0

    def release(self) -> str:
        return str(self.paddle.__version__)

    def reachable(self, inp: dict[str, Any], dflt: dict[str, Any]) -> None:
        if bool(inp.get("gpu_build", dflt.get("gpu_build"))) != self.gpu_build:
            raise Unreachable("needs a CUDA build of paddle" if inp.get("gpu_build") else "needs the CPU wheel of paddle")

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        paddle = self.paddle
        place = inp.get("place", "cpu")
        if place != "cpu":
            raise Unreachable(f"needs a paddle tensor on {place}, which needs a GPU build with a GPU")
        x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], place=paddle.CPUPlace(),
                             stop_gradient=not inp.get("requires_grad", False))
        if inp.get("sparse"):
            x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]], place=paddle.CPUPlace()).to_sparse_coo(2)
        return x

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        return 0 if inp.get("sparse") else int(x.data_ptr())

    def requested(self, inp: dict[str, Any], explanation: dict[str, Any],
                  dflt: dict[str, Any]) -> tuple[Outcome, Outcome]:
        if inp.get("producer_device", [1, 0])[0] == 2 and not self.gpus:
            # asks the current CUDA stream: the CPU wheel dies of it
            return decided_device(explanation), run_child({"kind": "import", "library": "paddle", "inp": inp,
                                                           "dflt": dflt})
        return super().requested(inp, explanation, dflt)

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """import_values for a case numpy can make the array of, else import_."""
        return self.import_values(inp) if numpy_dtype(inp) is not None else self.import_(inp, dflt)

    def import_values(self, inp: dict[str, Any]) -> Outcome:
        """paddle.from_dlpack of a numpy array of the case's dtype, shape and
        strides (a view of 1, 2, 3, ...), with the values compared: where
        paddle reads them otherwise (uint16 as bfloat16, a negative stride),
        ``"values"`` says how."""
        import numpy as np

        dtype = np.dtype(numpy_dtype(inp))
        shape = list(inp.get("shape", [8]))
        strides = inp.get("strides")
        if strides is None:  # C-contiguous
            strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        base = np.arange(1, 129) % 2 == 1 if dtype == np.bool_ else np.arange(1, 129).astype(dtype)
        start = 64 if any(st < 0 for st in strides) else 0  # room before it for negative strides
        x = np.lib.stride_tricks.as_strided(base[start:], shape, [st * dtype.itemsize for st in strides])
        try:
            y = self.paddle.utils.dlpack.from_dlpack(x)
        except Exception as e:
            return raised(e)
        got: Outcome = {"device": device_of(y), "copy": int(y.data_ptr()) != x.ctypes.data}
        difference = values_difference(x, y)
        if difference:
            got["values"] = difference
        return got

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """paddle.from_dlpack of the capsule the input describes, made by
        hand (handed out by a producer where from_dlpack is given device=
        or copy=); in a child, a request of a producer on the device the
        input says (what from_dlpack did, where it did not die)."""
        paddle = self.paddle
        if inp.get("call") == "request":
            producer = Recorder(device=tuple(inp.get("producer_device", [1, 0])))
            try:
                paddle.utils.dlpack.from_dlpack(producer)
            except Exception as e:
                return raised(e)
            return {"calls": len(producer.calls)}
        capsule, dev, pointer = case_capsule(inp, dflt, kind="dltensor_versioned", version=(1, 3))
        kwargs = {k: inp.get(k) for k in inp.get("keywords", []) if k in ("device", "copy")}
        source: Any = CapsuleProducer(capsule, dev) if kwargs else capsule
        try:
            y = paddle.utils.dlpack.from_dlpack(source, **kwargs)
        except Exception as e:
            return raised(e)
        return {"device": device_of(y), "copy": pointer is not None and int(y.data_ptr()) != pointer}

    ARRAYS = ("paddle.to_tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])", "paddle.to_tensor([True, False, True])",
              "paddle.to_tensor([0.0, 1.0, 2.0]).astype('complex64')",
              "paddle.to_tensor([0.0, 1.0, 2.0]).astype('bfloat16')", "paddle.to_tensor(3.0)",
              "paddle.zeros([0])", "paddle.to_tensor([1.0, 2.0], stop_gradient=False)")

    def namespace(self) -> dict[str, Any]:
        return {"paddle": self.paddle}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.paddle.utils.dlpack.from_dlpack(x, **kwargs)

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """A tensor's inputs (its place, whether it requires gradients),
        with the facts of the capsule paddle exports of it (of a detached
        view where it requires gradients: paddle exports none of it)."""
        place = "cpu" if x.place.is_cpu_place() else "gpu_pinned" if x.place.is_cuda_pinned_place() else "gpu"
        inputs = {"place": place, "requires_grad": not x.stop_gradient, "sparse": bool(x.is_sparse())}
        if not x.is_sparse():
            inputs.update(exported_facts(x.detach().__dlpack__(), *x.__dlpack_device__()))
        return inputs

    def devices(self) -> list[Any]:
        return [None, "cpu"]
