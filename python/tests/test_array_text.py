"""The array's text reaches the consumer whose error prints it: jax's
from_dlpack raises ``TypeError: Array passed to from_dlpack is on
unsupported device type (DLDeviceType: 3, array: [0. 1. 2.]`` for a device
type it does not take, the array as ``f"{x}"`` prints it (jax-import's
input ``array_str``). Before, the rules' message stopped at ``array: ``
(9 differences of numpy -> jax 0.10.1 in ``python -m dlroute check``)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import dlroute
from dlroute.arrays import MAX_ARRAY_TEXT, array_text

np = pytest.importorskip("numpy")

UNSUPPORTED = "Array passed to from_dlpack is on unsupported device type (DLDeviceType: 3, array: "


@pytest.fixture(scope="module")
def eng() -> Any:
    with dlroute.load() as e:
        yield e


def _cell(eng: Any, producer: str, consumer: str, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dlroute.UncheckedReleaseWarning)
        return eng.interop(producer, consumer, **kw)


@pytest.mark.parametrize("consumer", ["jax==0.5.1", "jax==0.10.1"])
def test_interop_prints_the_array_text_given(eng: Any, consumer: str) -> None:
    c = _cell(eng, "numpy", consumer, array={"origin_device": [3, 0], "array_str": "[0. 1. 2.]"})
    assert (c.error_type, c.error_message) == ("TypeError", UNSUPPORTED + "[0. 1. 2.]")


def test_a_consumer_that_prints_no_array_is_not_given_the_text(eng: Any) -> None:
    c = _cell(eng, "numpy", "torch", array={"origin_device": [1, 0], "array_str": "[0. 1. 2.]"})
    assert c.outcome == "in_place"


def test_the_text_is_a_string(eng: Any) -> None:
    with pytest.raises(TypeError, match="array_str is the array's text"):
        _cell(eng, "numpy", "jax==0.10.1", array={"array_str": 3})


class Counted(np.ndarray):
    """A numpy array that counts how often it is printed."""

    printed = 0

    def __str__(self) -> str:
        type(self).printed += 1
        return super().__str__()


def _on_cuda_host() -> Any:
    from dlroute.check._arrays import NumpyChecker
    from dlroute.check._base import Unreachable

    try:
        return NumpyChecker().imported((3, 0))
    except Unreachable as e:
        pytest.skip(str(e))


def test_ask_prints_the_real_array_where_jax_raises() -> None:
    x = _on_cuda_host()
    assert tuple(x.__dlpack_device__()) == (3, 0)
    c = dlroute.ask(x, "jax==0.10.1")
    assert (c.error_type, c.error_message) == ("TypeError", UNSUPPORTED + str(x))


def test_ask_reads_the_text_only_for_an_exception_that_prints_it() -> None:
    Counted.printed = 0
    c = dlroute.ask(np.arange(3.0).view(Counted), "jax==0.10.1")
    assert c.outcome != "error" and Counted.printed == 0, "str(x) reads an array's values: only an error prints them"
    x = _on_cuda_host().view(Counted)
    c = dlroute.ask(x, "torch==2.15.0")
    assert (c.error_type, Counted.printed) == ("BufferError", 0), "torch's message prints no array"
    c = dlroute.ask(x, "jax==0.10.1")
    assert (c.error_message, Counted.printed) == (UNSUPPORTED + "[0. 1. 2. 3. 4. 5.]", 1)


def test_array_text_is_cut_at_the_engine_limit(eng: Any) -> None:
    with np.printoptions(threshold=10**6):
        x = np.arange(2000.0)
        text = array_text(x)
        assert len(str(x).encode()) > MAX_ARRAY_TEXT
        assert str(x).startswith(text) and len(text.encode()) == MAX_ARRAY_TEXT
    c = _cell(eng, "numpy", "jax==0.10.1", array={"origin_device": [3, 0], "array_str": text})
    assert c.error_message == UNSUPPORTED + text, "a text at the limit is taken, not refused (too_long)"


def test_array_text_cuts_at_a_character_end() -> None:
    class Wide:
        def __str__(self) -> str:
            return "é" * 3000  # 2 bytes each

    text = array_text(Wide())
    assert text == "é" * (MAX_ARRAY_TEXT // 2)
    assert array_text(np.arange(3.0)) == str(np.arange(3.0))
