"""The runner's array-api-strict side (:mod:`dlroute.check`): an
``array_api_strict`` Array's ``__dlpack_device__`` and ``__dlpack__``, and
``array_api_strict.from_dlpack`` of a recording producer or of a capsule
made by hand, each under the ``api_version`` flag the case names (set for
the case, reset after it).

Its arrays wrap numpy arrays and it hands DLPack to numpy, so a case's
numpy part is the numpy installed beside it (the rules import numpy@v2:
run beside numpy 2.5). A device the case names by its name
(``device1``) is passed as ``array_api_strict.Device(name)``; any other
value is passed as it is, a value that is no Device.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from .._capsules import CapsuleProducer
from ._base import Checker, Outcome, Unreachable, case_capsule, defaults, raised, run_child

#: The names of array_api_strict's devices (_devices.py, 2.6 on; before,
#: the last is absent, and a case naming it is refused as no Device).
DEVICE_NAMES = ("CPU_DEVICE", "device1", "device2", "no_float64")


class ArrayApiStrictChecker(Checker):
    library = "array_api_strict"
    rulesets = ("array-api-strict",)

    def __init__(self) -> None:
        import array_api_strict
        import numpy

        self.xp, self.np = array_api_strict, numpy

    def _device(self, value: Any) -> Any:
        """A Device for a device name this release has, else the value."""
        if isinstance(value, str) and value in DEVICE_NAMES:
            try:
                return self.xp.Device(value)
            except ValueError:  # a name this release lacks
                return value
        return value

    def _with_flags(self, inp: dict[str, Any], dflt: dict[str, Any], call: Callable[[], Any]) -> Any:
        """call() under the case's api_version, the flags reset after."""
        xp = self.xp
        want = inp.get("api_version", dflt.get("api_version"))
        if want is None or want == xp.get_array_api_strict_flags()["api_version"]:
            return call()
        xp.set_array_api_strict_flags(api_version=want)
        try:
            return call()
        finally:
            xp.reset_array_api_strict_flags()

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        if list(inp.get("origin_device", [1, 0])) != [1, 0]:
            raise Unreachable("needs an array_api_strict array on numpy memory of another device")
        # float32, the ordinary array, which every device has (no_float64 has no float64)
        x = self.xp.asarray(self.np.arange(6.0, dtype=self.np.float32),
                            device=self._device(inp.get("array_device", "CPU_DEVICE")))
        if not inp.get("writeable", True):
            x._array.flags.writeable = False
        return x

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        """Checker.run under the case's api_version flag."""
        return self._with_flags(inp, defaults(rs), lambda: super(ArrayApiStrictChecker, self).run(name, inp, rs))

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        if not inp.get("ml_dtypes", False) and "ml_dtypes" in sys.modules:
            # a process that has not imported ml_dtypes (this one has)
            return run_child({"kind": "import", "library": self.library, "inp": inp, "dflt": dflt})
        return self.import_(inp, dflt)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """array_api_strict.from_dlpack of a capsule made by hand as the
        input describes, ml_dtypes imported first where the case says so."""
        if inp.get("ml_dtypes"):
            try:
                import ml_dtypes  # noqa: F401  (registers its dtypes with numpy 2.5)
            except ImportError:
                raise Unreachable("needs ml_dtypes installed") from None
        capsule, dev, pointer = case_capsule(inp, dflt, kind="dltensor_versioned")
        try:
            # the producer's __dlpack_device__ (2.6 reads it) is the capsule's unless the case says
            producer = CapsuleProducer(capsule, tuple(inp.get("producer_device", dev)))
            kwargs = {"device": self._device(inp.get("device"))} if "device" in inp.get("keywords", []) else {}
            y = self._with_flags(inp, dflt, lambda: self.xp.from_dlpack(producer, **kwargs))
        except Exception as e:
            return raised(e)
        return {"device": [int(v) for v in y.__dlpack_device__()], "copy": y._array.ctypes.data != pointer}

    ARRAYS = ("xp.arange(6.0)", "xp.asarray([True, False, True])", "xp.arange(4, dtype=xp.uint16)",
              "xp.asarray(3.0)", "xp.zeros((0,))", "xp.reshape(xp.arange(6.0), (2, 3)).mT")

    def namespace(self) -> dict[str, Any]:
        return {"xp": self.xp}

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """The facts of the array_api_strict Array x: its numpy array's
        (numpy@v2's inputs are these rules' too)."""
        from ..arrays import facts_of

        return facts_of(x._array)

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        """from_dlpack(x, **kwargs), a device named by its name (a case's
        ``device1``) passed as that Device."""
        if "device" in kwargs:
            kwargs = {**kwargs, "device": self._device(kwargs["device"])}
        return self.xp.from_dlpack(x, **kwargs)

    def consumer_inputs(self) -> dict[str, Any]:
        """Whether this process imported ml_dtypes (numpy@v2's input, these
        rules' too): numpy beneath it then reads bfloat16, which the
        namespace refuses."""
        return {"ml_dtypes": "ml_dtypes" in sys.modules}
