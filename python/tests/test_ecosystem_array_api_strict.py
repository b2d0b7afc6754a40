"""array-api-strict's rule sets (rules/array-api-strict, numpy 2.5's part
imported from numpy@v2): the version each release gets, the exchanges
they chain, and, where array_api_strict is installed, its own functions
against every case (python -m dlroute check array_api_strict)."""

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


@pytest.mark.parametrize("release, want", [("2.1", "array-api-strict@v1"), ("2.3", "array-api-strict@v2"),
                                           ("2.6", "array-api-strict@v3"), ("2.6.1", "array-api-strict@v4")])
def test_each_release_gets_its_era(shipped: dlroute.Engine, release: str, want: str) -> None:
    assert shipped.ruleset(f"array-api-strict=={release}").ref == want


def test_array_api_strict_is_a_library_of_the_runner() -> None:
    assert "array_api_strict" in check.LIBRARIES


def test_a_device_that_is_no_device_of_the_namespace_is_refused(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "array-api-strict@v4", device="cpu")
    assert (cell.error_type, cell.error_message) == ("ValueError", "Unsupported device 'cpu'")


def test_copy_is_not_yet_implemented_before_2_6(shipped: dlroute.Engine) -> None:
    cell = shipped.interop("numpy@v2", "array-api-strict@v2", copy=True)
    assert (cell.error_type, cell.error_message) == (
        "NotImplementedError", "The copy argument to from_dlpack is not yet implemented")


def test_numpys_refusal_is_array_api_stricts(shipped: dlroute.Engine) -> None:
    # its __dlpack__ hands the stream to numpy 2.5, which refuses it
    d = shipped.ruleset("array-api-strict@v4").resolve({"call": "__dlpack__", "stream": 1, "keywords": ["stream"]})
    assert d["error"] == {"type": "ValueError", "message": "NumPy only supports stream=None."}


def test_float16_is_read_by_numpy_and_refused_by_the_namespace(shipped: dlroute.Engine) -> None:
    d = shipped.ruleset("array-api-strict@v4").resolve(
        {"call": "from_dlpack", "dtype_code": 2, "dtype_bits": 16, "shape": [4]})
    assert d["error"] == {"type": "TypeError",
                          "message": "The array_api_strict namespace does not support the dtype 'float16'"}


def test_2_6_labels_device1_as_cuda(shipped: dlroute.Engine) -> None:
    d = shipped.ruleset("array-api-strict@v3").resolve({"call": "__dlpack_device__", "array_device": "device1"})
    assert (d["device_type_code"], d["device_id"]) == (2, 0)


def test_the_installed_array_api_strict_agrees_with_its_rules() -> None:
    pytest.importorskip("array_api_strict")
    report = check.run(["array_api_strict"], rules=RULES, exchanges=False)
    assert report.targets[0].covered
    assert report.differences == 0, [r for r in report.results if r.status == "differ"]
    assert sum(r.status == "agree" for r in report.results) > 20


def test_its_exchanges_with_numpy_are_run() -> None:
    # the runner pairs libraries by library name, array_api_strict, whose
    # rule set is array-api-strict: its exchanges were once skipped unsaid;
    # then its values could not be read (bool() of an Array raised).
    pytest.importorskip("array_api_strict")
    report = check.run(["numpy", "array_api_strict"], rules=RULES)
    pairs = {r.library for r in report.results}
    assert {"numpy->array_api_strict", "array_api_strict->numpy"} <= pairs
    assert report.differences == 0, [r for r in report.results if r.status == "differ"]


def test_the_runner_reads_its_arrays_values() -> None:
    xp = pytest.importorskip("array_api_strict")
    import numpy as np

    from dlroute.check._base import values_difference

    assert values_difference(xp.asarray([1.0, 2.0]), np.array([1.0, 2.0])) is None
    assert "reads [-1.0, 2.0]" in values_difference(xp.asarray([1.0, 2.0]), np.array([-1.0, 2.0]))
    assert "reads [-1.0, 2.0]" in values_difference(np.array([1.0, 2.0]), xp.asarray([-1.0, 2.0]))


@pytest.mark.parametrize("release, rule, inp", [
    ("2.1", "numpy-refuses", {"call": "__dlpack__", "writeable": False}),
    ("2.6", "numpy-refuses", {"call": "__dlpack__", "writeable": False}),
    ("2.2", "numpy-refuses-TypeError", {"call": "__dlpack__", "max_version": [1], "keywords": ["max_version"]}),
    ("2.6.1", "numpy-refuses-TypeError", {"call": "__dlpack__", "max_version": [1], "keywords": ["max_version"]}),
])
def test_numpys_refusals_of_its_export_reach_the_user(shipped: dlroute.Engine, release: str, rule: str,
                                                      inp: dict) -> None:
    d = shipped.ruleset(f"array-api-strict=={release}").resolve(inp)
    assert d["rule"] == rule
    assert d["error"]["type"] == {"numpy-refuses": "BufferError", "numpy-refuses-TypeError": "TypeError"}[rule]


def test_2_1_never_asks_numpy_for_a_versioned_capsule(shipped: dlroute.Engine) -> None:
    # max_version is refused before numpy is called, whatever it is
    d = shipped.ruleset("array-api-strict==2.1").resolve(
        {"call": "__dlpack__", "max_version": [1, 0], "keywords": ["max_version"]})
    assert d["error"]["type"] == "NotImplementedError"


def test_the_runner_reads_where_a_read_only_array_lies() -> None:
    # its own read-only capsule is refused unversioned: the pointer is its
    # numpy array's
    xp = pytest.importorskip("array_api_strict")
    import numpy as np

    from dlroute.check._base import pointer

    a = np.arange(6.0)
    a.flags.writeable = False
    assert pointer(xp.from_dlpack(a)) == a.ctypes.data


def test_the_runner_says_whether_this_process_imported_ml_dtypes() -> None:
    # numpy beneath array_api_strict reads bfloat16 where it has, and the
    # namespace refuses it: a TypeError, not numpy's BufferError
    pytest.importorskip("array_api_strict")
    pytest.importorskip("ml_dtypes")
    from dlroute.check._array_api_strict import ArrayApiStrictChecker

    assert ArrayApiStrictChecker().consumer_inputs() == {"ml_dtypes": True}
