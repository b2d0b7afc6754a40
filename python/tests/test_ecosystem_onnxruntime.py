"""onnxruntime's rule sets (rules/onnxruntime): the version each release
gets, the exchanges they chain, and, where onnxruntime is installed, its
own functions against every case (python -m dlroute check onnxruntime)."""

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


@pytest.mark.parametrize("release, want", [("1.26.0", "onnxruntime@v1"), ("1.30.0", "onnxruntime@v1"),
                                           ("1.31.1", "onnxruntime@v1.1"), ("1.32.0", "onnxruntime@v2")])
def test_each_release_gets_its_era(shipped: dlroute.Engine, release: str, want: str) -> None:
    assert shipped.ruleset(f"onnxruntime=={release}").ref == want


def test_onnxruntime_is_a_library_of_the_runner() -> None:
    assert "onnxruntime" in check.LIBRARIES


def test_ortvalue_asks_nothing_and_reads_numpys_unversioned_capsule(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "onnxruntime@v2")
    assert (cell.outcome, cell.device, cell.copies) == ("in_place", (1, 0), False)


def test_from_dlpack_takes_no_copy(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "onnxruntime@v2", copy=True)
    assert (cell.error_type, cell.error_message) == (
        "TypeError", "OrtValue.from_dlpack() got an unexpected keyword argument 'copy'")


def test_a_versioned_capsule_crashes_1_26_to_1_30_and_is_refused_after(shipped: dlroute.Engine) -> None:
    inp = {"call": "from_dlpack", "capsule": "dltensor_versioned"}
    crash = shipped.ruleset("onnxruntime@v1").resolve(inp)["error"]
    refusal = shipped.ruleset("onnxruntime@v1.1").resolve(inp)["error"]
    assert crash["type"] == "SIGSEGV"
    assert refusal == {"type": "TypeError", "message": "from_dlpack expected a valid DLPack capsule named 'dltensor'"}


def test_kdlbool_is_read_from_1_32_on(shipped: dlroute.Engine) -> None:
    inp = {"call": "from_dlpack", "dtype_code": 6, "dtype_bits": 8, "shape": [4]}
    assert "error" in shipped.ruleset("onnxruntime@v1.1").resolve(inp)
    assert shipped.ruleset("onnxruntime@v2").resolve(inp)["device_type_code"] == 1


def test_a_transposed_numpy_array_is_refused(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "onnxruntime@v2", array={"shape": [3, 2], "strides": [1, 3]})
    assert cell.error_type == "RuntimeError"
    assert "IsContiguousTensor(dlpack->dl_tensor) was false" in (cell.error_message or "")


def test_the_installed_onnxruntime_agrees_with_its_rules() -> None:
    pytest.importorskip("onnxruntime")
    report = check.run(["onnxruntime"], rules=RULES, exchanges=False)
    assert report.targets[0].covered
    assert report.differences == 0, [r for r in report.results if r.status == "differ"]
    assert sum(r.status == "agree" for r in report.results) > 20


def test_the_runner_counts_and_reads_an_ortvalue() -> None:
    # an OrtValue's shape is a method: counting its elements once raised
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    from dlroute.check._base import values_difference
    from dlroute.check._exchange import _size

    assert _size(ort.OrtValue.ortvalue_from_numpy(np.zeros(0))) == 0
    assert _size(ort.OrtValue.ortvalue_from_numpy(np.zeros((2, 3)))) == 6
    x = ort.OrtValue.ortvalue_from_numpy(np.array([1.0, 2.0]))
    assert values_difference(x, np.array([1.0, 2.0])) is None
    assert "reads [1.0, -2.0]" in values_difference(x, np.array([1.0, -2.0]))


def test_the_runner_reads_a_bfloat16_ortvalue() -> None:
    # numpy has no bfloat16: OrtValue.numpy() raises, its bits are read
    ort = pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")

    from dlroute.check._base import values_difference

    x = torch.arange(4.0).to(torch.bfloat16)
    y = ort.OrtValue.from_dlpack(x)
    assert values_difference(x, y) is None
    assert "reads [0.0, 1.0, 2.0, 3.0] where the producer reads [-0.0, -1.0" in values_difference(-x, y)
