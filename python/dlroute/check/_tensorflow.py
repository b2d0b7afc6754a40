"""The runner's tensorflow side (:mod:`dlroute.check`): rules/tensorflow.

TensorFlow's consumer, ``tf.experimental.dlpack.from_dlpack``, takes only a
capsule, so the rules answer, and the runner calls, what a user writes:
``tf.experimental.dlpack.from_dlpack(x.__dlpack__(), **kwargs)``. A tensor's
data pointer is read from the capsule TensorFlow exports of it (an
EagerTensor has no pointer attribute); a case that needs a GPU build with a
GPU is Unreachable.
"""

from __future__ import annotations

import os
from typing import Any

from .._capsules import CapsuleProducer, read_capsule
from ._base import Checker, Outcome, Recorder, Unreachable, case_capsule, exported_facts, raised, values


class TensorflowChecker(Checker):
    library = "tensorflow"
    rulesets = ("tensorflow",)

    def __init__(self) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's start-up lines are not the report's
        import tensorflow as tf

        self.tf = tf
        self.gpus = len(tf.config.list_physical_devices("GPU"))

    def release(self) -> str:
        return str(self.tf.__version__)

    def from_dlpack(self, x: Any, kwargs: dict[str, Any]) -> Any:
        """What a user writes: from_dlpack(x.__dlpack__(), **kwargs), the
        keywords in from_dlpack's order (device, then copy) as dlroute
        interop passes them."""
        ordered = {k: kwargs[k] for k in ("device", "copy") if k in kwargs}
        return self.tf.experimental.dlpack.from_dlpack(x.__dlpack__(), **ordered)

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        tf = self.tf
        if inp.get("tensor_device", "CPU") != "CPU":
            raise Unreachable("needs a TensorFlow GPU build with a GPU")
        if inp.get("variable"):
            return tf.Variable([0.0, 1.0, 2.0])
        return tf.constant([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        return 0 if inp.get("variable") else tensor_pointer(x)  # a Variable exports nothing

    def requested(self, inp: dict[str, Any], explanation: dict[str, Any],
                  dflt: dict[str, Any]) -> tuple[Outcome, Outcome]:
        """What from_dlpack(x.__dlpack__()) asks a recording producer."""
        vals = values(explanation)
        producer = Recorder()
        try:
            self.from_dlpack(producer, {})
            error: Outcome | None = None
        except Exception as e:
            error = raised(e)
        want: Outcome = {"calls_dlpack_device": bool(vals.get("calls_dlpack_device")),
                         "keywords": vals.get("request_keywords"), "kwargs": vals.get("request_kwargs")}
        got: Outcome = {"calls_dlpack_device": producer.device_calls > 0}
        if error is not None:
            got.update(error)
        else:
            call = producer.calls[0] if producer.calls else []
            got.update({"keywords": [k for k, _ in call], "kwargs": {k: v for k, v in call}})
        return want, got

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """from_dlpack(x.__dlpack__(), **kwargs) of a producer handing out
        the capsule the input describes, made by hand."""
        if inp.get("gpus", dflt.get("gpus", 0)) != self.gpus:
            raise Unreachable(f"needs a TensorFlow that sees {inp.get('gpus', 0)} GPUs")
        capsule, dev, pointer = case_capsule(inp, dflt)
        kwargs = {k: inp.get(k) for k in inp.get("keywords", []) if k in ("device", "copy")}
        try:
            y = self.from_dlpack(CapsuleProducer(capsule, dev), kwargs)
        except Exception as e:
            return raised(e)
        return {"device": tensor_device(y), "copy": pointer is not None and tensor_pointer(y) != pointer}

    ARRAYS = ("tf.constant([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])", "tf.constant([True, False, True])",
              "tf.cast(tf.range(4.0), tf.complex64)", "tf.cast(tf.range(4.0), tf.bfloat16)",
              "tf.cast(tf.range(4), tf.uint16)", "tf.constant(3.0)", "tf.zeros([0])",
              "tf.transpose(tf.reshape(tf.range(6.0), [2, 3]))")

    def namespace(self) -> dict[str, Any]:
        return {"tf": self.tf}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.from_dlpack(x, kwargs)

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """A tensor's facts, read from the capsule TensorFlow exports of it."""
        return {"tensor_device": "CPU" if tensor_device(x)[0] == 1 else "GPU", "tensor_device_id": tensor_device(x)[1],
                **exported_facts(self.tf.experimental.dlpack.to_dlpack(x))}


def tensor_device(y: Any) -> list[int]:
    """A tensor's device as DLPack writes it, read from its device name
    (``/job:localhost/replica:0/task:0/device:CPU:0``): TensorFlow 2.19 and
    older have no ``__dlpack_device__``."""
    kind, _, index = y.device.rsplit("/", 1)[-1].removeprefix("device:").partition(":")
    return [{"CPU": 1, "GPU": 2}.get(kind, -1), int(index or 0)]


def tensor_pointer(x: Any) -> int:
    """The address of an EagerTensor's data: its exported capsule's."""
    import tensorflow as tf

    return int(read_capsule(tf.experimental.dlpack.to_dlpack(x))["data"])
