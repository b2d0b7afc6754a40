"""Issue 39's tensorflow, paddle, mlx and warp rule sets and their checkers, without
the libraries: the versions a release is answered by, the exchanges
dlroute interop decides with numpy (what a user of each pair sees), and
the checkers' own reading of what each library prints. The real releases
are run by test_ecosystem2_real.py where they are installed."""

from __future__ import annotations

import enum
from pathlib import Path
from types import SimpleNamespace

import pytest

from dlroute import check, load
from dlroute.check._libraries import CHECKERS
from dlroute.check._base import device_of
from dlroute.check._tensorflow import TensorflowChecker, tensor_device
from dlroute.check._warp import make_capsule

RULES = Path(__file__).resolve().parents[2] / "rules"


@pytest.fixture(scope="module")
def engine():
    e = load(str(RULES))
    yield e
    e.close()


@pytest.mark.parametrize("library", ["tensorflow", "paddle", "mlx", "warp"])
def test_the_runner_knows_the_library(library: str) -> None:
    assert library in check.LIBRARIES and library in CHECKERS


@pytest.mark.parametrize("ref, version", [("tensorflow==2.21.0", "tensorflow@v1"),
                                          ("tensorflow==2.20.0", "tensorflow@v1"),
                                          ("tensorflow==2.19.0", "tensorflow@v0"),
                                          ("tensorflow==2.18.0", "tensorflow@v0"),
                                          ("paddle==3.3.1", "paddle@v1"),
                                          ("mlx==0.32.4", "mlx@v1"),
                                          ("warp==1.19.0", "warp@v1")])
def test_a_release_is_answered_by_its_version(engine, ref: str, version: str) -> None:
    assert engine.ruleset(ref, strict=True).ref == version


def test_numpy_into_tensorflow_with_copy_is_a_type_error(engine) -> None:
    # tf.experimental.dlpack.from_dlpack(x.__dlpack__(), copy=True)
    cell = engine.interop("numpy", "tensorflow@v1", copy=True)
    assert (cell.error_type, cell.error_message) == ("TypeError", "from_dlpack() got an unexpected keyword argument 'copy'")


def test_numpy_into_tensorflow_crosses_in_place(engine) -> None:
    assert engine.interop("numpy", "tensorflow@v1").outcome == "in_place"


def test_a_strided_numpy_array_into_tensorflow_is_refused(engine) -> None:
    cell = engine.interop("numpy", "tensorflow@v1", array={"shape": [4], "strides": [2]})
    assert (cell.error_type, cell.error_message) == ("InvalidArgumentError", "Invalid strides array from DLPack")


def test_tensorflow_refuses_numpys_copy(engine) -> None:
    # np.from_dlpack(t, copy=True) asks __dlpack__(copy=True), which 2.21 refuses
    cell = engine.interop("tensorflow@v1", "numpy", copy=True)
    assert (cell.error_type, cell.error_message) == ("RuntimeError", "tf.Tensor does not support DLPack export with a copy=True")


def test_tensorflow_before_2_20_has_no_dlpack(engine) -> None:
    cell = engine.interop("tensorflow@v0", "numpy")
    assert cell.error_type == "AttributeError"
    assert cell.error_message == "'tensorflow.python.framework.ops.EagerTensor' object has no attribute '__dlpack__'"


def test_numpy_into_paddle_crosses_in_place(engine) -> None:
    assert engine.interop("numpy", "paddle@v1").outcome == "in_place"


def test_paddle_with_gradients_into_numpy_is_a_buffer_error(engine) -> None:
    cell = engine.interop("paddle@v1", "numpy", array={"requires_grad": True})
    assert cell.error_type == "BufferError"
    assert cell.error_message.startswith("Can't get __dlpack__ from Tensor that requires gradients.")


def test_paddle_copies_for_numpys_copy(engine) -> None:
    assert engine.interop("paddle@v1", "numpy", copy=True).outcome == "producer_copy"


def test_tensorflow_device_names_read_as_dlpack_devices() -> None:
    assert tensor_device(SimpleNamespace(device="/job:localhost/replica:0/task:0/device:CPU:0")) == [1, 0]
    assert tensor_device(SimpleNamespace(device="/job:localhost/replica:0/task:0/device:GPU:1")) == [2, 1]


def test_tensorflows_consumer_names_device_before_copy() -> None:
    """from_dlpack(x.__dlpack__(), device=, copy=): Python names the first
    keyword from_dlpack refuses, and the rules name device (dlroute interop
    passes them in from_dlpack's order)."""
    def from_dlpack(dlcapsule):  # tf.experimental.dlpack.from_dlpack's signature
        return dlcapsule

    checker = object.__new__(TensorflowChecker)
    checker.tf = SimpleNamespace(experimental=SimpleNamespace(dlpack=SimpleNamespace(from_dlpack=from_dlpack)))
    producer = SimpleNamespace(__dlpack__=lambda: "capsule")
    with pytest.raises(TypeError, match="unexpected keyword argument 'device'"):
        checker.from_dlpack(producer, {"copy": True, "device": "cpu"})


class _DLDeviceType(enum.IntEnum):
    kDLCPU = 1


def test_paddles_none_device_id_reads_as_0() -> None:
    assert device_of(SimpleNamespace(__dlpack_device__=lambda: (_DLDeviceType.kDLCPU, None))) == [1, 0]


def test_numpy_into_mlx_is_a_copy_mlx_makes(engine) -> None:
    assert engine.interop("numpy", "mlx@v1").outcome == "consumer_copy"


def test_numpy_into_mlx_without_a_copy_is_refused(engine) -> None:
    cell = engine.interop("numpy", "mlx@v1", copy=False)
    assert (cell.error_type, cell.error_message) == ("ValueError", "[convert] Cannot import a CPU array without a copy.")


def test_a_negative_stride_into_mlx_is_refused(engine) -> None:
    cell = engine.interop("numpy", "mlx@v1", array={"shape": [8], "strides": [-1]})
    assert cell.error_message == "Cannot convert DLPack arrays with negative strides to mlx array."


def test_warp_into_numpy_crosses_after_numpys_second_try(engine) -> None:
    """Warp's __dlpack__ takes stream only: numpy's first call (dl_device,
    copy, max_version) is a TypeError, its second (no keywords) crosses."""
    cell = engine.interop("warp@v1", "numpy")
    assert cell.outcome == "in_place"


def test_numpy_into_warp_with_copy_is_a_type_error(engine) -> None:
    cell = engine.interop("numpy", "warp@v1", copy=True)
    assert (cell.error_type, cell.error_message) == ("TypeError", "from_dlpack() got an unexpected keyword argument 'copy'")


def test_a_capsule_is_made_whatever_pythonapi_was_set_to() -> None:
    """Warp sets ctypes.pythonapi.PyCapsule_New's argument types on import;
    the runner's capsules are made all the same, and Warp's types kept."""
    import ctypes

    new = ctypes.pythonapi.PyCapsule_New
    saved = new.argtypes, new.restype
    destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    new.argtypes, new.restype = [ctypes.c_void_p, ctypes.c_char_p, destructor], ctypes.py_object
    try:
        capsule = make_capsule((1, 0), versioned=False)
        assert type(capsule).__name__ == "PyCapsule"
        assert new.argtypes[2] is destructor
    finally:
        new.argtypes, new.restype = saved


def test_numpy_uint16_into_paddle_is_silently_different(engine) -> None:
    cell = engine.interop("numpy", "paddle@v1", array={"dtype_code": 1, "dtype_bits": 16})
    assert cell.error_type == "SilentlyDifferent"
    assert "reads the capsule of uint16 as bfloat16" in cell.error_message


def test_a_negative_stride_into_paddle_is_silently_different(engine) -> None:
    cell = engine.interop("numpy", "paddle@v1", array={"shape": [8], "strides": [-1]})
    assert cell.error_type == "SilentlyDifferent"
    assert "np.ascontiguousarray(x)" in cell.error_message


@pytest.mark.parametrize("consumer", ["tensorflow@v1", "paddle@v1", "mlx@v1", "warp@v1"])
def test_a_negated_torch_view_crosses_silently_different(engine, consumer: str) -> None:
    cell = engine.interop("torch", consumer, array={"neg": True})
    assert cell.error_type == "SilentlyDifferent"
    assert cell.error_message.endswith("pass x.resolve_neg() (a copy) instead")


def test_a_consumer_array_that_cannot_be_read_reads_otherwise() -> None:
    """paddle's tensor of a negative-stride capsule raises MemoryError when
    read: the runner counts it as other values, not as values alike."""
    import numpy as np

    from dlroute.check._base import values_difference

    class Unreadable:
        dtype, shape = "float64", (8,)

        def tolist(self):
            raise MemoryError("(ResourceExhausted) Fail to alloc memory")

    assert values_difference(np.arange(8.0), Unreadable()) == "the consumer's array cannot be read: MemoryError"
