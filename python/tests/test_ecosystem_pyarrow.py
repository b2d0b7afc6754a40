"""pyarrow's rule sets (rules/pyarrow): the version each release gets,
the exchanges they chain with numpy's, and, where pyarrow is installed,
its own functions against every case (python -m dlroute check pyarrow)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

import dlroute
from dlroute import check

RULES = Path(__file__).resolve().parent.parent.parent / "rules"


@pytest.fixture(scope="module")
def shipped() -> Iterator[dlroute.Engine]:
    with dlroute.load(str(RULES)) as engine:
        yield engine


@pytest.mark.parametrize("release, want", [("15.0.0", "pyarrow@v1"), ("25.0.1", "pyarrow@v1"),
                                           ("26.0.1", "pyarrow@v2")])
def test_each_release_gets_its_era(shipped: dlroute.Engine, release: str, want: str) -> None:
    assert shipped.ruleset(f"pyarrow=={release}").ref == want


def test_pyarrow_is_a_library_of_the_runner() -> None:
    assert "pyarrow" in check.LIBRARIES


def test_pyarrow_26_imports_numpys_versioned_capsule_in_place(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "pyarrow@v2")
    assert (cell.outcome, cell.device, cell.copies) == ("in_place", (1, 0), False)


def test_pyarrow_before_26_has_no_from_dlpack(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "pyarrow@v1")
    assert (cell.error_type, cell.error_message) == (
        "AttributeError", "type object 'pyarrow.lib.Array' has no attribute 'from_dlpack'")


def test_pyarrow_26_refuses_an_unversioned_producer(shipped: dlroute.Engine) -> None:
    # onnxruntime's __dlpack__ takes no max_version: pyarrow does not ask again
    cell = shipped.interop("onnxruntime@v2", "pyarrow@v2")
    assert (cell.error_type, cell.error_message) == (
        "TypeError", "OrtValue.__dlpack__() got an unexpected keyword argument 'max_version'")


def test_pyarrow_refuses_a_strided_numpy_array(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "pyarrow@v2", array={"shape": [4], "strides": [2], "dtype_bits": 64})
    assert cell.error_type == "ArrowInvalid"
    assert cell.error_message == ("Only contiguous one dimensional tensor can be imported as arrays. "
                                  "Try importing to Tensor first.")


def test_a_boolean_pyarrow_array_is_refused_by_its_own_export(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("pyarrow@v2", "numpy@v2", array={"dtype_code": 6, "dtype_bits": 8})
    assert (cell.error_type, cell.error_message) == (
        "ArrowTypeError", "Bit-packed boolean data type not supported by DLPack.")


def test_the_installed_pyarrow_agrees_with_its_rules() -> None:
    pytest.importorskip("pyarrow")
    report = check.run(["pyarrow"], rules=RULES, exchanges=False)
    assert report.targets[0].covered
    assert report.differences == 0, [r for r in report.results if r.status == "differ"]
    assert sum(r.status == "agree" for r in report.results) > 20


def test_the_runner_reads_a_pyarrow_arrays_values() -> None:
    # its values were once left uncompared unsaid: a pyarrow Array has no
    # dtype or shape of numpy's kind
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from dlroute.check._base import values_difference

    assert values_difference(pa.array([1.0, 2.0]), np.array([1.0, 2.0])) is None
    assert "reads [1.0, -2.0]" in values_difference(pa.array([1.0, 2.0]), np.array([1.0, -2.0]))
    assert "reads [1.0, -2.0]" in values_difference(np.array([1.0, 2.0]), pa.array([1.0, -2.0]))
    assert "reads uint8 where the producer holds bool" in values_difference(pa.array([True]), np.array([1], np.uint8))


def test_an_array_the_runner_cannot_read_is_a_difference() -> None:
    # a comparison that cannot be made is never counted as values alike
    import numpy as np

    from dlroute.check._base import values_difference

    class Opaque:
        pass

    assert values_difference(Opaque(), np.arange(3.0)).startswith("the producer's array cannot be read: TypeError")
    assert values_difference(np.arange(3.0), Opaque()).startswith("the consumer's array cannot be read: TypeError")


def test_an_empty_pyarrow_array_has_no_elements() -> None:
    # so whether it copied is not compared: its data pointer says nothing
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from dlroute.check._exchange import _size

    assert _size(pa.array(np.zeros(0))) == 0
    assert _size(pa.array(np.arange(8.0))[2:6]) == 4


def _capsule_strides(x: object) -> list[int] | None:
    """The strides a numpy array's unversioned capsule carries, None where
    they are C order's (as dlroute.arrays.facts_of says them)."""
    from dlroute import _capsules

    capsule = x.__dlpack__()
    t = _capsules.DLManagedTensor.from_address(_capsules._get_pointer(capsule, b"dltensor")).dl_tensor
    shape = [int(t.shape[i]) for i in range(t.ndim)]
    strides = [int(t.strides[i]) for i in range(t.ndim)]
    c = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        c[i] = c[i + 1] * shape[i + 1]
    return None if strides == c else strides


@pytest.mark.parametrize("expr", ["np.zeros((0,))", "np.zeros((0, 3))", "np.arange(8.0)[:0]", "np.arange(8.0)[::2][:1]",
                                  "np.arange(6.0).reshape(2, 3)[:, :1]", "np.arange(6.0)", "np.arange(8.0)[::2]"])
def test_numpys_facts_are_the_strides_its_capsule_carries(expr: str) -> None:
    # numpy's own empty array has stride 0 (numpy 1.24 on) and a slice of
    # one element keeps its step: pyarrow refuses both, and its rules can
    # say so only where the facts say the capsule's strides
    import numpy as np

    from dlroute.arrays import facts_of

    x = eval(expr)
    assert facts_of(x)["strides"] == _capsule_strides(x)


def test_numpys_empty_array_is_refused_as_pyarrow_refuses_it(shipped: dlroute.Engine) -> None:
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from dlroute.interop import array_of

    if not hasattr(pa.Array, "from_dlpack"):
        pytest.skip("pyarrow 26 on imports")
    x = np.zeros((0,))
    if x.strides != (0,):
        pytest.skip("this numpy's empty array has C strides")
    cell = shipped.interop("numpy@v2", "pyarrow@v2", array=array_of(x)[1])
    with pytest.raises(pa.ArrowInvalid) as e:
        pa.Array.from_dlpack(x)
    assert (cell.error_type, cell.error_message) == ("ArrowInvalid", str(e.value))
