"""An exchange that aborts the interpreter is a decision (issue 27): the
real torch is run in a subprocess on a negative-stride numpy array and
seen to abort (SIGABRT, returncode -6) where its rules say so, or raise
the RuntimeError they say; then dlroute's routed call, which never hands
it such an array, returns the right tensor."""

from __future__ import annotations

import inspect
import signal
import warnings

import pytest

from conftest import run_python

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

import dlroute  # noqa: E402
from dlroute import interop  # noqa: E402
from dlroute.routing import Routed, from_dlpack  # noqa: E402

RAW = "import warnings; warnings.simplefilter('ignore'); import numpy as np, torch; torch.from_dlpack({expr})"

ARRAYS = ["np.arange(8.0)[::-1]", "np.arange(8.0).reshape(2, 4)[:, ::-1]"]


def _decided(expr: str) -> dict:
    x = eval(expr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cell = interop.ask(x, "torch")
    return {"type": cell.error_type, "message": cell.error_message, "outcome": cell.outcome}


@pytest.mark.parametrize("expr", ARRAYS)
def test_the_raw_exchange_is_as_decided(expr: str) -> None:
    want = _decided(expr)
    got = run_python(RAW.format(expr=expr))
    if want["type"] == "SIGABRT":
        assert got.returncode == -signal.SIGABRT, (got.returncode, got.stderr[-2000:])
        assert f"what():  {want['message']}" in got.stderr
    else:
        assert want["type"] == "RuntimeError", want
        assert got.returncode == 1 and got.stderr.rstrip().endswith(f"RuntimeError: {want['message']}"), got.stderr


@pytest.mark.parametrize("expr", ARRAYS)
@pytest.mark.parametrize("kwargs", [{}, {"copy": True}], ids=["copy not passed", "copy=True"])
def test_routed_never_aborts(expr: str, kwargs: dict) -> None:
    x = eval(expr)
    if _decided(expr)["type"] != "SIGABRT":
        pytest.skip(f"torch {torch.__version__} raises here rather than aborting: nothing to route around")
    if kwargs and "copy" not in inspect.signature(torch.from_dlpack).parameters:
        # torch 1.13 takes no copy: its own TypeError, as torch.from_dlpack(x, copy=True) raises
        with pytest.raises(TypeError, match=r"^from_dlpack\(\) got an unexpected keyword argument 'copy'$"):
            from_dlpack(x, consumer="torch", **kwargs)
        return
    y = from_dlpack(x, consumer="torch", **kwargs)
    assert y.tolist() == x.tolist()
    assert y.data_ptr() != x.ctypes.data  # a host copy, contiguous
    assert y.is_contiguous()


def test_routed_with_copy_false_raises_torch_2_15s_error() -> None:
    x = np.arange(8.0)[::-1]
    if _decided("np.arange(8.0)[::-1]")["type"] != "SIGABRT":
        pytest.skip(f"torch {torch.__version__} raises this itself")
    with pytest.raises(RuntimeError, match=r"^Storage size calculation overflowed with sizes=\[8\] and strides=\[-1\]\nhint: "):
        torch.from_dlpack(Routed(x, copy=False, consumer="torch"))


def test_an_ordinary_array_stays_in_place() -> None:
    x = np.arange(8.0)
    y = from_dlpack(x, consumer="torch")
    assert y.data_ptr() == x.ctypes.data


def test_the_matrix_shows_the_abort() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cell = dlroute.load().interop("numpy", "torch@v1", array={"strides": [-1], "dtype_bits": 64})
    assert (cell.error_type, cell.error_message) == ("SIGABRT", "Storage size calculation overflowed with sizes=[8] and strides=[-1]")


@pytest.mark.parametrize("expr, want", [
    ("np.arange(8.0)[::-1]", {"dtype_code": 2, "dtype_bits": 64, "shape": [8], "strides": [-1], "dlpack_device_enum": False}),
    ("np.arange(6.0).reshape(2, 3).T", {"shape": [3, 2], "strides": [1, 3]}),
    ("np.array([True])", {"dtype_code": 6, "dtype_bits": 8, "strides": None}),
    ("np.array(3.0)", {"shape": [], "strides": None}),
    ("np.arange(6.0).reshape(2, 3)[:0]", {"shape": [0, 3], "strides": None}),
    ("np.arange(8.0)[::2][:1]", {"shape": [1], "strides": [2]}),  # as its capsule says (test_ecosystem_pyarrow.py)
    ("np.arange(4.0).astype(np.complex64)", {"dtype_code": 5, "dtype_bits": 64}),
    ("torch.arange(6.0).reshape(2, 3).T", {"dtype_code": 2, "dtype_bits": 32, "strides": [1, 3], "dlpack_device_enum": True}),
    ("torch.tensor([True])", {"dtype_code": 6, "dtype_bits": 8}),
    ("torch.arange(3.0).to(torch.bfloat16)", {"dtype_code": 4, "dtype_bits": 16}),
])
def test_facts_of_real_arrays(expr: str, want: dict) -> None:
    from dlroute.arrays import facts_of

    got = facts_of(eval(expr))
    assert {k: got.get(k) for k in want} == want


def test_a_read_only_array_is_not_writeable() -> None:
    from dlroute.arrays import facts_of

    x = np.arange(3.0)
    x.flags.writeable = False
    assert facts_of(x)["writeable"] is False
