"""The runner on a numpy that raises where the runner's own code once
called it (issue 38): numpy 1.22 has no ``np.from_dlpack`` (only
``np._from_dlpack``), and numpy before 2.1 neither reads a versioned
capsule nor takes ``__dlpack__(max_version=...)``. A stand-in numpy with
those refusals, over the installed one, runs numpy@v0.1's cases: every
case ends as a result or an unreachable case, none as a traceback."""

from __future__ import annotations

import ctypes
import sys
import types
from typing import Any

import numpy as real
import pytest

from dlroute import check
from dlroute.check._arrays import NumpyChecker
from dlroute.check._base import Recorder
from dlroute._capsules import read_capsule

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype, _name.argtypes = ctypes.c_char_p, [ctypes.py_object]


class _OldArray(real.ndarray):
    """An array whose __dlpack__ takes stream only, as numpy's before 2.1."""

    def __dlpack__(self, *, stream: Any = None) -> Any:
        return real.asarray(self).__dlpack__(stream=stream)


def _from_dlpack(x: Any) -> Any:
    """numpy 1.22's np._from_dlpack: an unversioned capsule only."""
    capsule = x.__dlpack__(stream=None)
    if _name(capsule) != b"dltensor":
        raise ValueError("PyCapsule_GetPointer called with incorrect name")

    class Once:
        def __dlpack__(self, **kwargs: Any) -> Any:
            return capsule

        def __dlpack_device__(self) -> Any:
            return x.__dlpack_device__()

    return real.from_dlpack(Once())


@pytest.fixture
def numpy_1_22(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A numpy without from_dlpack, whose arrays take no max_version and
    whose _from_dlpack refuses versioned capsules, as ``import numpy``
    gives it to the runner."""
    def getattr_(name: str) -> Any:
        if name == "from_dlpack":
            raise AttributeError("module 'numpy' has no attribute 'from_dlpack'")
        if name == "arange":
            return lambda *a, **k: real.arange(*a, **k).view(_OldArray)
        return getattr(real, name)

    fake = types.ModuleType("numpy")
    fake.__getattr__ = getattr_  # type: ignore[method-assign]
    fake._from_dlpack = _from_dlpack  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "numpy", fake)
    return fake


def test_every_case_of_numpy_1_22_ends_as_a_result(numpy_1_22: types.ModuleType) -> None:
    report = check.run(["numpy"], ruleset=["numpy@v0.1"], exchanges=False)
    by_case = {r.case: r for r in report.results}
    assert len(by_case) == len(report.results) > 20
    assert not [r for r in report.results if r.got and "runner_failed" in r.got]
    # np.from_dlpack is looked up as a user's call looks it up: its AttributeError is the outcome
    request = by_case["np.from_dlpack(x) is an AttributeError, before any call"]
    assert request.status == "agree"
    assert request.got == {"calls_dlpack_device": False, "calls": 0,
                           "raise": ["AttributeError", "module 'numpy' has no attribute 'from_dlpack'"]}
    # arrays on other devices are imported from unversioned capsules by np._from_dlpack
    host = by_case["an array from a kDLCUDAHost capsule keeps its device (dlpack.c:86-108@v1.22.4)"]
    assert (host.status, host.got) == ("agree", {"device": [3, 0]})
    managed = by_case["an array from a kDLCUDAManaged capsule keeps its id (dlpack.c:86-108@v1.22.4)"]
    assert (managed.status, managed.got) == ("agree", {"device": [13, 1]})
    assert [r.why for r in report.results if r.status == "unreachable"] == [
        "not a call of the library: the rules' own refusal of an unknown call"]


def test_the_exchange_arrays_are_made_from_unversioned_capsules(numpy_1_22: types.ModuleType) -> None:
    made = dict(NumpyChecker().arrays())
    assert not [e for e, x in made.items() if isinstance(x, Exception)]
    assert made["_imported((3, 0))"].__dlpack_device__() == (3, 0)


def test_the_recorder_asks_numpy_without_max_version(numpy_1_22: types.ModuleType) -> None:
    capsule = Recorder().__dlpack__(max_version=(1, 0))
    assert read_capsule(capsule)["capsule"] == "dltensor"


def test_an_array_the_producer_cannot_make_is_unreachable_with_its_reason(
        numpy_1_22: types.ModuleType) -> None:
    checker = NumpyChecker()
    checker.ARRAYS = ("np.from_dlpack(_capsule())",)
    [(expr, x)] = checker.arrays()
    assert isinstance(x, check._base.Unreachable)
    assert str(x) == "numpy cannot make it here: AttributeError: module 'numpy' has no attribute 'from_dlpack'"


def test_a_dlpack_case_exports_an_array_of_the_dtype_it_names() -> None:
    x = NumpyChecker().array({"call": "__dlpack__", "dtype_code": 6, "dtype_bits": 8})
    assert x.dtype == real.bool_


def test_an_exception_the_runner_did_not_expect_is_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: NumpyChecker, name: str, inp: dict[str, Any], rs: Any) -> Any:
        raise KeyError("origin_device")

    monkeypatch.setattr(NumpyChecker, "run", broken)
    report = check.run(["numpy"], exchanges=False)
    assert report.differences == len(report.results) > 0
    assert report.results[0].got == {"runner_failed": "KeyError: 'origin_device'"}
