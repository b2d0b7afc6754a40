"""A release no rule-set version was checked against: newer than every
version's range, or a pre-release or development build. The answer is the
version that stands in for it, with a ``dlroute.UncheckedReleaseWarning``
that says what that version was checked against; ``strict=True`` raises
instead. A release inside a range answers without a warning."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import dlroute


CPU = {"platform": "cpu", "platform_version": "cpu"}


@pytest.fixture(scope="module")
def engine() -> dlroute.Engine:
    with dlroute.load() as e:
        yield e


@pytest.mark.parametrize("ref, version, build, read_as, newer", [
    ("jax==9.0.0", "jax@v3", None, None, True),
    ("jax==0.11.0.dev20260801", "jax@v3", "development build", "0.11.0", False),
    ("jax==0.11.0rc1", "jax@v3", "pre-release", "0.11.0", False),
    ("numpy==9.1.0.dev0+local", "numpy@v2", "development build", "9.1.0", True),
])
def test_unchecked_release_warns(engine: dlroute.Engine, ref: str, version: str, build: str | None,
                                 read_as: str | None, newer: bool) -> None:
    for _ in range(2):  # remembered by ref, and it still warns
        with pytest.warns(dlroute.UncheckedReleaseWarning) as record:
            rs = engine.ruleset(ref)
        assert rs.ref == version
        w = record.pop(dlroute.UncheckedReleaseWarning)
        assert w.filename == __file__, "the warning points at the caller's line"
        msg = w.message
        assert isinstance(msg, UserWarning)
        assert (msg.code, msg.ref, msg.ruleset) == ("unchecked_release", ref, version)
        assert msg.details.get("build") == build and msg.details.get("read_as") == read_as
        assert msg.details["newer"] is newer
        checked = msg.details["releases"]["checked"]
        assert checked and set(checked.values()) <= {"run", "source"}
        assert "checked against" in str(msg) and ("newer than every release" in str(msg)) == newer


@pytest.mark.parametrize("ref", ["jax==9.0.0", "jax==0.11.0.dev20260801"])
def test_strict_refuses(engine: dlroute.Engine, ref: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(dlroute.NoRuleSetError) as info:
            engine.ruleset(ref, strict=True)
    assert info.value.code == "unchecked_release"
    assert info.value.message.startswith("refused (strict): ") and "checked against" in info.value.message
    assert "jax@v3" in (info.value.hint or "")


@pytest.mark.parametrize("ref, version", [
    ("jax==0.11.0", "jax@v3"), ("jax==0.10.2+cuda12", "jax@v1.1"), ("numpy==2.4.6", "numpy@v1"),
    ("torch==1.13.1+dfsg", "torch@v1"), ("jax@v3", "jax@v3"), ("numpy", "numpy@v2"),
])
def test_checked_release_does_not_warn(engine: dlroute.Engine, ref: str, version: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert engine.ruleset(ref, strict=True).ref == version


def test_older_or_gap_is_still_an_error(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.NoRuleSetError, match="older than every version") as info:
        engine.ruleset("jax==0.4.14")
    assert info.value.code == "no_ruleset"


def test_installed_release_warns(engine: dlroute.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ruleset_for_installed reads the installed version from its metadata:
    here a distribution that says 9.0.0, newer than every jax range."""
    info = tmp_path / "fakejax-9.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakejax\nVersion: 9.0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(dlroute.UncheckedReleaseWarning, match="jax 9.0.0 is newer than every release") as record:
        assert engine.ruleset_for_installed("jax", package="fakejax").ref == "jax@v3"
    assert record[0].filename == __file__
    with pytest.raises(dlroute.NoRuleSetError, match="refused"):
        engine.ruleset_for_installed("jax", package="fakejax", strict=True)


def test_interop_cell_says_what_was_checked(engine: dlroute.Engine) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both = engine.interop("jax==0.10.2", "numpy@v1", array=CPU)
    assert both.run and both.release_warnings == []
    assert [v["ruleset"] for v in both.checked["producer"]] == ["jax@v1.1", "jax-export@v0.10"]
    assert both.checked["consumer"][0]["checked"] == {f"2.4.{n}": "run" for n in range(7)}

    # jax 0.13.0 is newer than every release checked, on both of jax's sides.
    with pytest.warns(dlroute.UncheckedReleaseWarning, match="0.13.0 is newer than every release") as record:
        newer = engine.interop("jax==0.13.0", "numpy@v1", array=CPU)
    assert record[0].filename == __file__
    assert not newer.run and [w["ref"] for w in newer.release_warnings] == ["jax==0.13.0", "jax-export==0.13.0"]
    with pytest.raises(dlroute.NoRuleSetError, match="refused"):
        engine.interop("jax==0.13.0", "numpy@v1", array=CPU, strict=True)


def test_interop_matrix_warns_once(engine: dlroute.Engine) -> None:
    with pytest.warns(dlroute.UncheckedReleaseWarning) as record:
        cells = engine.interop_matrix(["numpy@v1"], ["numpy==9.1"])
    assert len(cells) > 1 and len(record) == 1
    assert all(not c.run and c.checked["consumer"][0]["ruleset"] == "numpy@v2" for c in cells)


@pytest.mark.parametrize("library", ["numpy", "torch", "jax"])
def test_installed_library_gets_its_version(engine: dlroute.Engine, library: str) -> None:
    """The numpy, torch and jax installed here resolve to a version: a
    release checked without a warning, a distribution's own build (Debian's
    torch reports 1.13.0a0+gitunknown) by its base release, with one."""
    import importlib.metadata

    installed = importlib.metadata.version(library)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rs = engine.ruleset_for_installed(library)
    warned = [w for w in record if issubclass(w.category, dlroute.UncheckedReleaseWarning)]
    assert rs.ref.startswith(library + "@")
    if re.search(r"\d(a|b|rc|\.?dev)\d*", installed.split("+")[0]):  # a pre-release number
        assert warned and "read as" in str(warned[0].message), installed
    else:
        assert not warned, f"{library} {installed}: {[str(w.message) for w in warned]}"


#: Every jax release since 0.4.20 that installs here (0.4.32 was yanked and
#: installs pinned; 0.11 and 0.12 need Python 3.12).
JAX_RELEASES = ["0.4.20", "0.4.21", "0.4.22", "0.4.23", "0.4.24", "0.4.25", "0.4.26", "0.4.27", "0.4.28", "0.4.29",
                "0.4.30", "0.4.31", "0.4.32", "0.4.33", "0.4.34", "0.4.35", "0.4.36", "0.4.37", "0.4.38", "0.5.0",
                "0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.6.1", "0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1",
                "0.8.2", "0.8.3", "0.9.0", "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
                "0.11.1", "0.11.2", "0.12.0", "0.12.0.1"]


@pytest.mark.parametrize("release", JAX_RELEASES)
def test_every_jax_release_since_0_4_20_was_run_on_each_side(engine: dlroute.Engine, release: str) -> None:
    """jax as a producer (jax, jax-export) and as a consumer (jax-import):
    each rule set's version for the release says it was run against it,
    and none warns or is refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cell = engine.interop(f"jax=={release}", f"jax=={release}", array=CPU, strict=True)
    sides = cell.checked["producer"] + cell.checked["consumer"]
    assert [s["ruleset"].split("@")[0] for s in sides] == ["jax", "jax-export", "jax-import"]
    assert all(s["checked"].get(release) == "run" for s in sides), sides
    assert cell.run


@pytest.mark.parametrize("release", ["0.4.20", "0.4.23", "0.4.26"])
def test_jax_before_0_4_27_takes_no_from_dlpack_keyword(engine: dlroute.Engine, release: str) -> None:
    """from_dlpack(external_array) of jax 0.4.20 to 0.4.26: copy or device,
    even passed as None, is Python's TypeError, named in from_dlpack's order;
    not passed, the array is taken in place."""
    consumer = f"jax=={release}"
    for kwargs, name in (({"copy": None}, "copy"), ({"device": None}, "device"), ({"copy": True}, "copy"),
                         ({"device": None, "copy": False}, "device")):
        cell = engine.interop("numpy", consumer, **kwargs)
        assert (cell.error_type, cell.error_message) == (
            "TypeError", f"from_dlpack() got an unexpected keyword argument '{name}'"), kwargs
    assert engine.interop("numpy", consumer).outcome == "in_place"


def test_jax_before_0_4_27_exports_with_stream_alone(engine: dlroute.Engine) -> None:
    """jax-export 0.4.20's __dlpack__(*, stream=None): copy=None passed is
    the TypeError, stream=None is taken."""
    rs = engine.ruleset("jax-export==0.4.20")
    here = {"client_platform": "cpu", "local_hardware_id": 0}
    assert rs.resolve(dict(here, keywords=["copy"]))["error"] == {
        "type": "TypeError", "message": "ArrayImpl.__dlpack__() got an unexpected keyword argument 'copy'"}
    assert rs.resolve(dict(here, keywords=["stream"]))["rule"] == "in-place"
