"""torch's negated and conjugated views (issue 39): no capsule carries
either bit, so torch's own exchange hands a negated view's memory over
as it is (every consumer reads each value with its sign flipped) and
refuses a conjugated one. The rules predict the silent difference for
every consumer installed here, the runner sees it by comparing values,
and ``dlroute.from_dlpack`` and ``Routed`` resolve the view first."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

import dlroute  # noqa: E402
from dlroute import interop  # noqa: E402
from dlroute.arrays import facts_of  # noqa: E402
from dlroute.check._base import values_difference  # noqa: E402

#: The consumers installed here, by the name dlroute.from_dlpack takes.
CONSUMERS = ["numpy", "torch"] + (["jax"] if importlib.util.find_spec("jax") else [])

#: Views with a bit no capsule carries, and the values each reads.
VIEWS = {
    "torch._neg_view(t)": (lambda: torch._neg_view(torch.tensor([2.0, -4.0])), [-2.0, 4.0]),
    "t.conj().imag": (lambda: torch.tensor([1 + 2j, 3 - 4j]).conj().imag, [-2.0, 4.0]),
    "t.conj()": (lambda: torch.tensor([1 + 2j, 3 - 4j]).conj(), [1 - 2j, 3 + 4j]),
}


def _raw(consumer: str, x: object) -> object:
    """consumer's own from_dlpack of x, as a user calls it."""
    if consumer == "jax":
        import jax.numpy as jnp

        return jnp.from_dlpack(x)
    return {"numpy": np.from_dlpack, "torch": torch.from_dlpack}[consumer](x)


def _listed(y: object) -> list:
    return y.tolist()  # type: ignore[attr-defined]


def _ask(x: object, consumer: str, **kwargs: object) -> interop.Cell:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a release newer than those checked is answered all the same
        return interop.ask(x, consumer, **kwargs)


def test_a_negated_view_is_a_fact() -> None:
    assert facts_of(torch._neg_view(torch.arange(3.0)))["neg"] is True
    assert facts_of(torch.arange(3.0))["neg"] is False


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_negated_view_crosses_silently_different(consumer: str) -> None:
    make, reads = VIEWS["torch._neg_view(t)"]
    x = make()
    assert x.tolist() == reads
    cell = _ask(x, consumer)
    assert (cell.outcome, cell.error_type) == ("error", "SilentlyDifferent"), cell.json
    assert f"{consumer} reads every value with its sign flipped" in cell.error_message
    assert "x.resolve_neg()" in cell.error_message
    # what the rules say is what the consumer does: the memory, un-negated, and nothing raises
    assert _listed(_raw(consumer, x)) == [2.0, -4.0]
    assert values_difference(x, _raw(consumer, x)) is not None


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_conjugated_view_is_refused_by_torch(consumer: str) -> None:
    x = VIEWS["t.conj()"][0]()
    cell = _ask(x, consumer)
    assert cell.error_message == "Can't export tensors with the conjugate bit set", cell.json
    with pytest.raises(Exception, match="^Can't export tensors with the conjugate bit set$") as e:
        _raw(consumer, x)
    assert type(e.value).__name__ == cell.error_type


def test_a_copy_by_torch_holds_the_views_values() -> None:
    x = VIEWS["torch._neg_view(t)"][0]()
    cell = _ask(x, "numpy", copy=True)
    if cell.outcome != "producer_copy":
        pytest.skip(f"numpy {np.__version__} with torch {torch.__version__} does not ask torch for a copy")
    assert np.from_dlpack(x, copy=True).tolist() == [-2.0, 4.0]


@pytest.mark.parametrize("consumer", CONSUMERS)
@pytest.mark.parametrize("view", VIEWS)
def test_from_dlpack_returns_the_views_values(view: str, consumer: str) -> None:
    make, reads = VIEWS[view]
    x = make()
    y = dlroute.from_dlpack(x, consumer)
    assert _listed(y) == reads
    assert _listed(x) == reads  # the view itself is left as it was
    assert values_difference(x, y) is None


@pytest.mark.parametrize("view", VIEWS)
def test_from_dlpack_refuses_copy_false_for_a_view(view: str) -> None:
    with pytest.raises(BufferError, match="^copy=False, but a tensor with the (negative|conjugate) bit set"):
        dlroute.from_dlpack(VIEWS[view][0](), "numpy", copy=False)


def test_routed_exports_a_negated_view_resolved() -> None:
    x = VIEWS["torch._neg_view(t)"][0]()
    assert np.from_dlpack(dlroute.Routed(x)).tolist() == [-2.0, 4.0]
    assert torch.from_dlpack(dlroute.Routed(x)).tolist() == [-2.0, 4.0]


def test_an_ordinary_tensor_is_still_in_place() -> None:
    t = torch.arange(4.0)
    y = dlroute.from_dlpack(t, "numpy")
    assert y.ctypes.data == t.data_ptr()


@pytest.mark.parametrize(("x", "y", "why"), [
    (np.array([True, False]), np.array([1, 0], dtype=np.uint8), "reads uint8 where the producer holds bool"),
    (np.arange(3.0), np.arange(3.0).reshape(1, 3), "shape"),
    (np.array([1.0, np.nan]), np.array([1.0, -2.0]), "reads [1.0, -2.0]"),
])
def test_values_difference_says_how(x: object, y: object, why: str) -> None:
    got = values_difference(x, y)
    assert got is not None and why in got, got


@pytest.mark.parametrize(("x", "y"), [
    (np.array([1.0, np.nan]), np.array([1.0, np.nan], dtype=np.float32)),  # a NaN is a NaN; a narrower float
    (np.array([1 + 2j]), np.array([1 + 2j], dtype=np.complex64)),
    (np.array(3.0), np.array(3.0)),
])
def test_values_difference_none_where_alike(x: object, y: object) -> None:
    assert values_difference(x, y) is None


SILENT = {"raise": ["SilentlyDifferent", "the capsule holds the memory of a negated view ..."]}


@pytest.mark.parametrize(("want", "got", "agrees"), [
    (SILENT, {"device": [1, 0], "copy": False, "values": "the consumer reads [2.0] where ..."}, True),
    (SILENT, {"device": [1, 0], "copy": False}, False),  # decided different, read alike
    (SILENT, {"raise": ["BufferError", "..."]}, False),
    ({"device": [1, 0], "copy": False}, {"device": [1, 0], "copy": False, "values": "..."}, False),  # not decided
])
def test_the_runner_reads_a_silent_difference(want: dict, got: dict, agrees: bool) -> None:
    from dlroute.check._base import seen_as_decided

    assert (seen_as_decided(want, got) == want) is agrees
