"""Inputs a JSON line cannot hold, and the limits of the library: every
bad input is an InputError with the code the JSON path gives (never a raw
TypeError or UnicodeEncodeError), and the library's open rules stop at
DLROUTE_MAX_OPEN with a status of their own."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

import pytest

import dlroute
from dlroute import _native
from conftest import ROOT

JAX = {"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0}


class Opaque:
    """An object of the caller's, which no JSON can hold."""


@pytest.fixture(scope="module")
def engine() -> dlroute.Engine:
    with dlroute.load() as e:
        yield e


# (ref, fields over JAX's, code, words of the message)
BAD_FIELDS = [
    ("jax", {"platform_version": "cuda \ud800"}, "invalid_utf8", "input platform_version is not valid UTF-8"),
    ("jax", {"platform_version": "\udcff"}, "invalid_utf8", "lone surrogate (U+DCFF at index 0)"),
    ("jax", {"platform_version": b"cuda 12030"}, "wrong_type", "input platform_version is a Python bytes; want string"),
    ("jax", {"platform_version": bytearray(b"cuda")}, "wrong_type", "is a Python bytearray; want string"),
    ("jax", {"memory_kind": Opaque()}, "wrong_type", "input memory_kind is a Python Opaque; want string or null"),
    ("jax", {"memory_kind": {1, 2}}, "wrong_type", "input memory_kind is a Python set"),
    ("jax", {"local_hardware_id": float("nan")}, "wrong_type", "input local_hardware_id is nan"),
    ("jax", {"local_hardware_id": float("-inf")}, "wrong_type", "is -inf, which JSON has no number for; want int or null"),
    ("jax", {"local_hardware_id": 1j}, "wrong_type", "is a Python complex; want int or null"),
    ("jax", {"shards": object}, "wrong_type", "input shards is a Python type; want int"),
    ("jax", {("platform",): "gpu"}, "unknown_field", "is a Python tuple, not a field name"),
    ("jax", {"platform\ud800": "gpu"}, "invalid_utf8", "the name holds a lone surrogate"),
    ("exchange", {"dl_device": [1, b"0"]}, "wrong_type", "input dl_device holds a Python bytes at [1]; want list(int) or null"),
    ("exchange", {"dl_device": [1, float("nan")]}, "wrong_type", "input dl_device holds nan at [1]"),
    ("exchange", {"max_version": ["\ud800"]}, "invalid_utf8", "input max_version is not valid UTF-8"),
    ("exchange", {"max_version": {Opaque(): 1}}, "wrong_type", "has a key that is a Python Opaque"),
]


@pytest.mark.parametrize("entry", ["resolve", "explain", "exchange"])
@pytest.mark.parametrize("ref,fields,code,words", BAD_FIELDS)
def test_a_field_json_cannot_hold_is_an_input_error(engine: dlroute.Engine, entry: str, ref: str,
                                                     fields: dict[Any, Any], code: str, words: str) -> None:
    if entry == "exchange" and ref != "exchange":
        ref = "exchange"  # the exchange rule set takes jax's inputs too
    rs = engine.ruleset(ref)
    with pytest.raises(dlroute.InputError) as e:
        getattr(rs, entry)({**JAX, **fields})
    assert e.value.code == code, e.value
    assert words in e.value.message
    assert e.value.details == {"code": code, "message": e.value.message}
    assert isinstance(e.value, ValueError)


def test_a_nested_value_that_holds_itself(engine: dlroute.Engine) -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(dlroute.InputError) as e:
        engine.ruleset("exchange").resolve({**JAX, "dl_device": loop})
    assert e.value.code == "wrong_type" and "holds itself" in e.value.message


@pytest.mark.parametrize("fields,code", [
    ({"memory_kind": 7}, "wrong_type"),
    ({"local_hardware_id": 1.5}, "wrong_type"),
    ({"nope": 1}, "unknown_field"),
])
def test_fields_json_holds_keep_the_librarys_answer(engine: dlroute.Engine, fields: dict, code: str) -> None:
    """What JSON can hold still goes to the library, which answers with its
    own line's error (with "line")."""
    with pytest.raises(dlroute.InputError) as e:
        engine.ruleset("jax").resolve({**JAX, **fields})
    assert e.value.code == code and e.value.details["line"] == 1


def test_resolve_json_of_a_lone_surrogate_is_the_invalid_utf8_line(engine: dlroute.Engine) -> None:
    """A str line with a lone surrogate is the line of the bytes it would be
    (resolve_json never raises for a bad input): the JSON path's
    invalid_utf8, as for bytes that are not UTF-8."""
    rs = engine.ruleset("jax")
    line = rs.resolve_json('{"platform":"gpu","platform_version":"\ud800"}')
    assert '"code":"invalid_utf8"' in line and line.startswith('{"input_error":')
    assert line == rs.resolve_json(b'{"platform":"gpu","platform_version":"\xed\xa0\x80"}')


@pytest.mark.parametrize("line", [5, None, ["{}"]])
def test_resolve_json_of_no_line_is_a_type_error(engine: dlroute.Engine, line: Any) -> None:
    with pytest.raises(TypeError, match="a line is a str or bytes"):
        engine.ruleset("jax").resolve_json(line)


@pytest.mark.parametrize("kwargs,code,words", [
    ({"array": {"platform": "gpu", "platform_version": b"x"}}, "wrong_type",
     "the array: input platform_version is a Python bytes"),
    ({"array": {"platform": "gpu", "platform_version": "\ud800"}}, "invalid_utf8",
     "the array: input platform_version is not valid UTF-8"),
    ({"array": {(1,): "gpu"}}, "unknown_field", "is a Python tuple, not a field name"),
    ({"array": {1: "gpu"}}, "unknown_field", "unknown input \"1\""),  # JSON holds it as "1": the library says
    ({"device": Opaque()}, "wrong_type", "from_dlpack's device is a Python Opaque"),
    ({"device": float("nan")}, "wrong_type", "from_dlpack's device is nan"),
])
def test_interop_fields_json_cannot_hold(engine: dlroute.Engine, kwargs: dict, code: str, words: str) -> None:
    with pytest.raises(dlroute.InputError) as e:
        engine.interop("jax", "torch", **kwargs)
    assert e.value.code == code and words in e.value.message


def test_interop_matrix_fields_json_cannot_hold(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.InputError) as e:
        engine.interop_matrix(["jax"], ["torch"], device=Opaque())
    assert e.value.code == "wrong_type" and "from_dlpack's device is a Python Opaque" in e.value.message


def test_interop_ref_with_a_lone_surrogate(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.InputError) as e:
        engine.interop("jax\ud800", "torch")
    assert e.value.code == "invalid_utf8"


def test_ruleset_refs(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.NoRuleSetError):
        engine.ruleset("jax\ud800")
    with pytest.raises(TypeError, match="a rule-set ref is a str"):
        engine.ruleset(None)  # type: ignore[arg-type]


def test_load_paths(tmp_path: Path) -> None:
    with pytest.raises(dlroute.LoadError) as e:
        dlroute.load(str(tmp_path / "\ud800"))
    assert e.value.code == "read_error" and "no file name here" in e.value.message
    with pytest.raises(dlroute.LoadError) as e:
        dlroute.load(bytes(tmp_path / "missing") + b"\xff")  # bytes go as they are
    assert e.value.code == "read_error" and "missing" in e.value.message
    with pytest.raises(TypeError, match="rules is a path"):
        dlroute.load(7)  # type: ignore[arg-type]


def test_too_many_open_rules() -> None:
    """Rules never closed stop at DLROUTE_MAX_OPEN (64) with code
    too_many_open and a hint; closing makes room."""
    max_open = int(re.search(r"#define DLROUTE_MAX_OPEN (\d+)", (ROOT / "libdlroute" / "dlroute.h").read_text())[1])
    opened: list[dlroute.Engine] = []
    try:
        with pytest.raises(dlroute.DlrouteError) as e:
            for _ in range(max_open + 1):
                opened.append(dlroute.load())
        assert e.value.code == "too_many_open" and e.value.hint and "close" in e.value.hint
        assert 0 < len(opened) <= max_open
        opened.pop().close()
        opened.append(dlroute.load())
    finally:
        for eng in opened:
            eng.close()


def test_status_table_is_the_librarys() -> None:
    """_native's statuses are the header's, named as the library names
    them."""
    lib = _native.library()
    lib.dlroute_status_name.restype = ctypes.c_char_p
    lib.dlroute_status_name.argtypes = [ctypes.c_int]
    header = (ROOT / "libdlroute" / "dlroute.h").read_text()
    block = header[header.index("/* Statuses."):header.index("/* Steps of an exchange")]
    statuses = {int(n): name for name, n in re.findall(r"#define DLROUTE_([A-Z_]+) (\d+)", block)}
    assert set(statuses) == set(_native.STATUS_NAMES)
    for n, name in _native.STATUS_NAMES.items():
        assert lib.dlroute_status_name(n).decode() == name == statuses[n].lower()
