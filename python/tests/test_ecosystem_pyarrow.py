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
