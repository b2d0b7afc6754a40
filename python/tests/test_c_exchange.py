"""The C exchange API of an array's type, read as the producers' rule sets
state it (rules/README.md, "The C exchange lane"): dlroute.arrays.c_exchange_api_of."""

from __future__ import annotations

import ctypes
import importlib.util
from typing import Any

import pytest

from dlroute.arrays import c_exchange_api_of


class _Header(ctypes.Structure):
    """DLPackExchangeAPIHeader: the version, then prev_api."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p)]


_HEADER = _Header(1, 2, None)  # kept alive: the types below point at it


_NAMES: list[Any] = []  # a capsule keeps only a pointer to its name: the names live here


def _capsule(name: bytes, address: int) -> Any:
    buf = ctypes.create_string_buffer(name)
    _NAMES.append(buf)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    return new(address, ctypes.addressof(buf), None)


class _Standard:
    __dlpack_c_exchange_api__ = _capsule(b"dlpack_exchange_api", ctypes.addressof(_HEADER))


class _Both(_Standard):
    __c_dlpack_exchange_api__ = ctypes.addressof(_HEADER)


class _Misnamed:
    __dlpack_c_exchange_api__ = _capsule(b"other", ctypes.addressof(_HEADER))


class _Instance:
    def __init__(self) -> None:
        self.__dlpack_c_exchange_api__ = _capsule(b"dlpack_exchange_api", ctypes.addressof(_HEADER))


@pytest.mark.parametrize("x, want", [
    (_Standard(), [{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": [1, 2]}]),
    (_Both(), [{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": [1, 2]},
               {"attribute": "__c_dlpack_exchange_api__", "form": "int", "version": [1, 2]}]),
    (_Misnamed(), [{"attribute": "__dlpack_c_exchange_api__", "form": "capsule other"}]),
    (_Instance(), []),  # the API is the type's: an instance's attribute is not read
    (object(), []),
], ids=["standard", "both", "misnamed", "instance", "none"])
def test_c_exchange_api_of(x: Any, want: list[dict[str, Any]]) -> None:
    assert c_exchange_api_of(x) == want


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_torch_tensor() -> None:
    """torch 2.10 on: __dlpack_c_exchange_api__, a capsule of DLPack 1.3;
    before 2.10 none (torch 2.9's wheel has no such attribute)."""
    import torch

    release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    want = [{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": [1, 3]}] if release >= (2, 10) else []
    assert c_exchange_api_of(torch.arange(3.0)) == want


def test_numpy_array() -> None:
    np = pytest.importorskip("numpy")
    assert c_exchange_api_of(np.arange(3.0)) == []


class _FakeRuleSet:
    """A rule set that decides kDLCPU 0 and states c_exchange_api (or not)."""

    inputs: list[dict[str, Any]] = []

    def __init__(self, stated: list[dict[str, Any]] | None) -> None:
        self.stated = stated

    def explain(self, inp: dict[str, Any]) -> dict[str, Any]:
        values = [] if self.stated is None else [{"name": "c_exchange_api", "value": self.stated}]
        return {"decision": {"device_type_code": 1, "device_id": 0}, "trace": {"values": values}}


class _OnCPU(_Standard):
    def __dlpack_device__(self) -> tuple[int, None]:
        return 1, None  # as paddle's CPU tensor answers


STANDARD = [{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": [1, 2]}]


@pytest.mark.parametrize("stated, agree", [(STANDARD, True), (None, False)], ids=["stated", "unstated"])
def test_the_shared_dispatch_compares_the_types_c_exchange_api(stated: Any, agree: bool) -> None:
    """Checker.run's __dlpack_device__ case, which paddle, pyarrow, MLX, ...
    share, compares the API of the array's type with what the rules state:
    a type that exposes one its rules do not state differs."""
    from dlroute.check._base import Checker

    class _Checker(Checker):
        def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
            return _OnCPU()

    want, got = _Checker().run("fake", {"call": "__dlpack_device__"}, _FakeRuleSet(stated))
    assert got == {"device": [1, 0], "c_exchange_api": STANDARD}
    assert (want == got) is agree
