"""The runner's dispatch the libraries of issue 39 share (``Checker.run``
in dlroute/check/_base.py), run on a library made of numpy alone, and the
facts it reads of a capsule a library exports (``exported_facts``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dlroute._capsules import CapsuleProducer, make_capsule
from dlroute.check._base import Checker, Unreachable, case_capsule, exported_facts, raised

np = pytest.importorskip("numpy")


def rule_set(decision: dict[str, Any], values: dict[str, Any] | None = None) -> Any:
    """A rule set whose every case decides ``decision`` (and computes
    ``values``): what Checker.run reads of one."""
    trace = {"values": [{"name": k, "value": v} for k, v in (values or {}).items()]}
    return SimpleNamespace(inputs=[{"name": "capsule", "default": "dltensor_versioned"}],
                           explain=lambda inp: {"decision": decision, "trace": trace})


class NumpyOnly(Checker):
    """A library that gives only its own parts: numpy's array, export and
    import, with a refusal of a 0-d array of its own."""

    library = "numpy"

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        if inp.get("place") == "gpu":
            raise Unreachable("needs a GPU")
        return np.arange(6.0)

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return np.from_dlpack(x, **kwargs)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> dict[str, Any]:
        capsule, dev, pointer = case_capsule(inp, dflt)
        try:
            y = np.from_dlpack(CapsuleProducer(capsule, dev))
        except Exception as e:
            return raised(e)
        return {"device": list(y.__dlpack_device__()), "copy": y.ctypes.data != pointer}


CPU = {"device_type_code": 1, "device_id": 0}


def test_an_unknown_call_is_the_rules_own_refusal() -> None:
    with pytest.raises(Unreachable, match="unknown call"):
        NumpyOnly().run("numpy", {"call": "to_dlpack"}, rule_set(CPU))


def test_each_call_is_made_of_the_librarys_own_parts() -> None:
    c = NumpyOnly()
    # beside the device, the C exchange API of the array's type: numpy's has none
    none = {"device": [1, 0], "c_exchange_api": []}
    assert c.run("numpy", {"call": "__dlpack_device__"}, rule_set(CPU)) == (none, none)
    want, got = c.run("numpy", {"call": "__dlpack__"}, rule_set(CPU))
    assert got == {"device": [1, 0], "capsule": "dltensor", "copy": False}
    want, got = c.run("numpy", {"call": "from_dlpack"}, rule_set(CPU))
    assert want == got == {"device": [1, 0], "copy": False}
    want, got = c.run("numpy", {"call": "request"}, rule_set(CPU, {"request_keywords": ["max_version"]}))
    assert want["keywords"] == ["max_version"] and "max_version" in got["keywords"]


def test_a_used_capsule_is_refused_as_the_library_refuses_it() -> None:
    want, got = NumpyOnly().run("numpy", {"call": "from_dlpack", "capsule": "used_dltensor"}, rule_set(CPU))
    assert got["raise"][0] in ("ValueError", "TypeError"), got


def test_a_case_this_machine_cannot_make_stays_unreachable() -> None:
    with pytest.raises(Unreachable, match="needs a GPU"):
        NumpyOnly().run("numpy", {"call": "__dlpack_device__", "place": "gpu"}, rule_set(CPU))


def test_an_empty_array_is_not_asked_whether_it_copied() -> None:
    want, got = NumpyOnly().run("numpy", {"call": "from_dlpack", "shape": [0]}, rule_set(CPU))
    assert "copy" not in want and "copy" not in got


@pytest.mark.parametrize("shape, strides, read", [
    ([0], [0], [0]),          # an empty array's stride 0 is what a consumer reads
    ([1], [3], [3]),          # so is a size-1 dimension's step
    ([2, 3], None, None),     # no strides: C order
    ([2, 3], [3, 1], None),   # C order's exactly
    ([3, 2], [1, 3], [1, 3]),
    ([], None, None),
])
def test_exported_strides_are_the_capsules_own(shape: list[int], strides: Any, read: Any) -> None:
    capsule = make_capsule((1, 0), versioned=True, shape=shape, strides=strides, dtype=(2, 32, 1))
    assert exported_facts(capsule)["strides"] == read


@pytest.mark.parametrize("expr", ["np.zeros(0)", "np.arange(8.0)[::3][:1]", "np.array(3.0)",
                                  "np.arange(6.0).reshape(2, 3).T", "np.arange(6.0)"])
def test_exported_facts_read_a_capsule_as_facts_of_reads_numpys_array(expr: str) -> None:
    from dlroute.arrays import facts_of

    x = eval(expr)  # noqa: S307 - the test's own expressions
    facts = exported_facts(x.__dlpack__())
    assert {k: facts[k] for k in ("shape", "strides")} == {k: facts_of(x)[k] for k in ("shape", "strides")}


@pytest.mark.parametrize("device_id, none", [(None, True), (0, False)])
def test_exported_facts_say_a_device_id_of_none(device_id: Any, none: bool) -> None:
    """paddle's CPU tensor says (kDLCPU, None): the fact reaches torch's
    and JAX's from_dlpack, which refuse it (rules/README.md, "Array facts")."""
    capsule = make_capsule((1, 0), versioned=True, shape=[2], strides=None, dtype=(2, 32, 1))
    assert exported_facts(capsule, 1, device_id)["dlpack_device_id_none"] is none


def test_paddles_bfloat16_is_read_as_its_values_not_its_bits() -> None:
    """paddle's tolist() of a bfloat16 tensor gives its bits as uint16s;
    the runner compares the values (paddle -> numpy read them alike)."""
    paddle = pytest.importorskip("paddle")
    from dlroute.check._base import values_difference

    x = paddle.to_tensor([0.0, 1.0, 2.0]).astype("bfloat16")
    assert values_difference(x, np.array([0.0, 1.0, 2.0], dtype=np.float32)) is None


def test_an_ortvalues_alignment_is_its_capsules() -> None:
    """JAX views only 64-byte aligned data: an OrtValue's fact is where its
    own capsule points, not the default 64."""
    ort = pytest.importorskip("onnxruntime")
    from dlroute._capsules import read_capsule
    from dlroute.check._onnxruntime import OnnxruntimeChecker

    x = ort.OrtValue.ortvalue_from_numpy(np.arange(6.0, dtype=np.float32))
    address = read_capsule(x.__dlpack__())["data"]
    alignment = OnnxruntimeChecker().array_inputs(x)["data_alignment"]
    assert address % alignment == 0 and (alignment == 64 or address % (2 * alignment))
