"""The conformance runner itself (dlroute.check, `python -m dlroute
check`): it finds a difference and exits 1 when the rules are wrong, it
counts a case this machine cannot reach with its reason, and it reads
release ranges as the manifests write them."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest

import dlroute
from dlroute import check
from dlroute.__main__ import main

RULES = Path(__file__).resolve().parent.parent.parent / "rules"


@pytest.fixture(scope="module")
def shipped() -> Iterator[dlroute.Engine]:
    """The engine of RULES, loaded once for the tests that ask it which
    version a release gets, where each loaded it again."""
    with dlroute.load(str(RULES)) as engine:
        yield engine


def test_a_wrong_message_in_the_rules_is_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A copy of the rules whose covering jax version words one error
    otherwise than the installed jax: the runner reports it, byte for byte,
    and exits 1 (the unaltered rules give 0:
    test_the_table_counts_and_names_the_reasons)."""
    pytest.importorskip("jax")
    rules = tmp_path / "rules"
    for name in ("jax", "jax-export", "jax-import"):  # what `check jax` runs; no other set is loaded again
        shutil.copytree(RULES / name, rules / name)
    ref, covered, _ = check.choose_version(rules, "jax", check.installed("jax") or "")
    assert covered
    path = rules / "jax" / ref.split("@")[1] / "rules.yaml"
    text = path.read_text()
    assert "'Unknown GPU platform for __dlpack__: '" in text
    path.write_text(text.replace("'Unknown GPU platform for __dlpack__: '", "'Unknown GPU platform: '"))
    (rules / "parsed.bin").unlink(missing_ok=True)

    assert main(["check", "jax", "--no-exchanges", "--json", "--rules", str(rules)]) == 1
    out = json.loads(capsys.readouterr().out)
    diffs = [d for d in out["differences"] if d["ref"] == ref]
    assert diffs and all(d["want"]["raise"][1].startswith("Unknown GPU platform: ") for d in diffs)
    assert all(d["got"]["raise"][1].startswith("Unknown GPU platform for __dlpack__: ") for d in diffs)
    row = next(r for r in out["summary"] if r["ref"] == ref)
    assert row["differ"] == len(diffs) > 0 and row["agree"] + row["differ"] == row["run"]


def test_a_case_that_needs_a_gpu_is_unreachable_with_its_reason(report: check.Report) -> None:
    """A torch case on a cuda tensor is counted, not run, where torch has
    no CUDA device, and so is a jax-export case for a cuda client."""
    if not report.targets:
        pytest.skip("neither torch nor jax is installed")
    away = [r for r in report.results if r.status == "unreachable"]
    if check.installed("jax"):
        assert any(r.ref.startswith("jax-export@") and r.why == "needs a jax cuda client (this jax's is cpu)"
                   for r in away)
    if check.installed("torch"):
        import torch

        if torch.cuda.is_available():
            pytest.skip("a CUDA device is here: the torch cuda cases run")
        assert any(r.ref.startswith("torch@") and r.why == "needs a CUDA device" for r in away)
    for row in report.counts():
        assert row["unreachable"] == sum(row["reasons"].values())


def test_the_table_counts_and_names_the_reasons(capsys: pytest.CaptureFixture) -> None:
    """The table of the shipped rules against the installed jax, which
    agree: the command exits 0."""
    pytest.importorskip("jax")
    assert main(["check", "jax", "--no-exchanges"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("0 differences")
    assert "library  rules" in out and "jax-export@" in out
    assert "cannot be reached here: needs a jax cuda client (this jax's is cpu)" in out


@pytest.mark.parametrize("release, want", [
    ("2.5.5", ("numpy@v2", True)),
    ("2.4.6", ("numpy@v1", True)),
    ("9.0.0", ("numpy@v2", False)),
])
def test_the_version_for_a_release(shipped: dlroute.Engine, release: str, want: tuple[str, bool]) -> None:
    ref, covered, _ = check.choose_version(RULES, "numpy", release, shipped)
    assert (ref, covered) == want


def test_a_local_build_is_read_by_its_base_release(shipped: dlroute.Engine) -> None:
    assert check.release_tuple("1.13.0a0+gitunknown") == (1, 13, 0)
    assert check.release_tuple("2.15.0+cu132") == (2, 15, 0)
    ref, covered, _ = check.choose_version(RULES, "torch", "1.13.0a0+gitunknown", shipped)
    assert ref == "torch@v1" and covered  # read as 1.13.0, which torch@v1 covers (1.13.0 to 1.13.1)


def test_an_unknown_library_is_refused(capsys: pytest.CaptureFixture) -> None:
    assert main(["check", "nosuchlib"]) == 2
    err = capsys.readouterr().err
    assert "dlroute check knows numpy, torch, jax, cupy, " in err and err.rstrip().endswith("not 'nosuchlib'")


def test_another_era_of_numpy_is_told_apart(shipped: dlroute.Engine, capsys: pytest.CaptureFixture) -> None:
    """--ruleset runs a version other than the covering one: numpy 2.4's
    and 2.5's exception types differ (PR #31000), so the other era's
    version differs from the installed numpy, and the command exits 1."""
    release = check.installed("numpy")
    if release is None:
        pytest.skip("numpy is not installed")
    ref, covered, _ = check.choose_version(RULES, "numpy", release, shipped)
    assert covered and ref in ("numpy@v1", "numpy@v2")
    other = "numpy@v2" if ref == "numpy@v1" else "numpy@v1"
    assert main(["check", "numpy", "--no-exchanges", "--ruleset", other]) == 1
    out = capsys.readouterr().out
    assert f"numpy {release}: numpy -> {other} was asked for (--ruleset)" in out
    assert f"DIFFERS {other}: " in out


def _broken_cupy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A cupy on sys.path whose import fails as a CuPy wheel's does on a
    machine without the CUDA runtime: the message the runner must print."""
    message = "libcudart.so.12: cannot open shared object file: No such file or directory"
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(f"raise ImportError({message!r})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    return message


def test_a_named_library_that_does_not_import_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    message = _broken_cupy(tmp_path, monkeypatch)
    assert main(["check", "cupy"]) == 2
    err = capsys.readouterr().err
    assert f"error: cupy was named but cannot be checked: its import raised ImportError: {message}" in err


def test_a_named_library_that_is_not_installed_exits_2(capsys: pytest.CaptureFixture) -> None:
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed here")
    assert main(["check", "cupy"]) == 2
    assert "error: cupy was named but cannot be checked: it is not installed here" in capsys.readouterr().err


def test_with_no_names_a_library_that_does_not_import_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """Without names the runner checks what is here: cupy that does not
    import is listed, with its reason, and the exit status is the cases'.
    The libraries it knows are jax and cupy here: numpy's and torch's
    cases, and every installed library's at once, are
    test_real_libraries.py's run."""
    message = _broken_cupy(tmp_path, monkeypatch)
    monkeypatch.setattr(check, "LIBRARIES", ("jax", "cupy"))
    assert main(["check", "--no-exchanges", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert f"cupy is not checked: its import raised ImportError: {message}" in out["notes"]
    assert "cupy" not in {t["library"] for t in out["targets"]}


def test_every_exchange_is_counted_even_where_the_engine_cannot_answer() -> None:
    """jax@v2 mirrors no release, so no jax-import pairs with it: each of
    numpy's arrays into jax's from_dlpack, with each copy= and device=, is
    a row (unreachable, with the engine's reason), not dropped after the
    first."""
    if not (check.installed("numpy") and check.installed("jax")):
        pytest.skip("needs numpy and jax")
    from dlroute.check._exchange import COPIES

    report = check.run(["numpy", "jax"], ruleset=["jax@v2"])
    checkers = {lib: check.CHECKERS[lib]() for lib in ("numpy", "jax")}
    for p, c in (("numpy", "jax"), ("jax", "numpy")):
        rows = [r for r in report.results if r.library == f"{p}->{c}"]
        assert len(rows) == len(checkers[p].arrays()) * len(COPIES) * len(checkers[c].devices())
        assert len({r.case for r in rows}) == len(rows)
    into_jax = [r for r in report.results if r.library == "numpy->jax"]
    assert all(r.status == "unreachable" and "jax@v2 cannot be a consumer" in (r.why or "") for r in into_jax)
    row = next(r for r in report.counts() if r["library"] == "numpy->jax")
    assert row["unreachable"] == len(into_jax) and row["run"] == 0


def test_jax_as_a_consumer_is_run(report: check.Report) -> None:
    """jax's from_dlpack is checked three ways, each agreeing on this
    release: jax-import's cases, real producers into jax.dlpack.from_dlpack
    and jnp.from_dlpack (numpy arrays 64-byte aligned and not, with every
    copy=, among them), and each of numpy's arrays exchanged into jax. The
    third is the exchanges of the same run (conftest.py's report), which
    test_real_libraries.py's test_exchanges_agree checks, and TestPython's
    check (e2e/python) finds every numpy->jax row of it agreeing."""
    if not (check.installed("numpy") and check.installed("jax")):
        pytest.skip("needs numpy and jax")
    target = next(t for t in report.targets if t.ruleset == "jax-import")
    assert target.covered and target.ref.startswith("jax-import@")
    rows = [r for r in report.results if r.ref == target.ref]
    run = [r for r in rows if r.status != "unreachable"]
    assert run and all(r.status == "agree" for r in run), [r for r in run if r.status != "agree"][:3]
    unaligned = [r for r in run if "16-byte aligned" in r.case and "copy=False" in r.case and "device=" not in r.case]
    assert unaligned and all(r.got and "not aligned to 64 bytes" in r.got["raise"][1] for r in unaligned)
    assert any(r.case.startswith("jnp.from_dlpack(") for r in run)


@pytest.mark.parametrize("release", ["2.15.0", "2.15.0+cpu", "2.15.0+cu132", "2.15"])
def test_how_a_release_was_checked_is_read_by_its_base_release(release: str) -> None:
    assert check.checked_as(RULES, "torch@v3", release) == "run"


def test_a_release_in_two_ranges_is_refused(tmp_path: Path) -> None:
    """Two versions whose releases overlap do not load: the engine refuses
    them at the newer one's range, naming the older, so the runner never
    has to pick one of two versions for a release."""
    import yaml

    from dlroute import LoadError

    for version in ("v1", "v2"):  # whole versions, which the engine loads
        shutil.copytree(RULES / "numpy" / version, tmp_path / "numpy" / version)
    path = tmp_path / "numpy" / "v1" / "manifest.yaml"
    manifest = yaml.safe_load(path.read_text())
    manifest["mirrors"]["releases"]["last"] = "2.5.1"
    manifest["mirrors"]["releases"]["checked"]["2.5.1"] = "source"
    path.write_text(yaml.safe_dump(manifest))
    with pytest.raises(LoadError) as refused:
        check.choose_version(tmp_path, "numpy", "2.5.1")
    (error,) = refused.value.errors
    assert error["code"] == "overlapping_releases"
    assert error["position"]["file"].endswith("numpy/v2/manifest.yaml")
    assert "numpy@v1" in error["message"]


def _torch_cases(report: check.Report) -> dict[str, tuple[dict, check.Result]]:
    ref = next(t.ref for t in report.targets if t.library == "torch")
    inputs = {c["name"]: c["input"] for c in check.load_cases(check.rules_dir(), ref)}
    return {r.case: (inputs[r.case], r) for r in report.results if r.ref == ref}


def test_a_torch_case_runs_where_its_build_facts_are_this_torchs(report: check.Report) -> None:
    """A case is unreachable only for a device or build this torch lacks:
    dl_device kDLCUDAHost is refused on any torch (no CUDA device needed),
    device='xpu' on a build without XPU runs on one, and a CPU-only build's
    answer to a CUDA target needs a CPU-only build, not a CUDA device."""
    if not check.installed("torch"):
        pytest.skip("torch is not installed")
    import torch

    cases = _torch_cases(report)
    host = [r for inp, r in cases.values() if inp.get("call") == "__dlpack__" and inp.get("dl_device") == [3, 0]]
    xpu = [r for inp, r in cases.values() if str(inp.get("device", "")).startswith("xpu")
           and inp.get("xpu_build") is False]
    cpu_build = [(inp, r) for inp, r in cases.values() if inp.get("gpu_build") is False]
    if not (host or xpu or cpu_build):
        pytest.skip("this torch's rules state no such case")
    assert all(r.status == "agree" for r in host), host
    xpu_build = hasattr(torch, "xpu") and torch.xpu._is_compiled()
    if not xpu_build:
        assert all(r.status == "agree" for r in xpu), xpu
    for inp, r in cpu_build:
        if torch.version.cuda or torch.version.hip:
            assert r.status == "unreachable" and r.why == "needs a CPU-only build of torch", (inp, r)
        else:
            assert r.status == "agree", (inp, r)
    assert not any(r.status == "unreachable" and r.why == "needs a CUDA device"
                   and inp.get("gpu_build") is False for inp, r in cases.values())


@pytest.mark.parametrize("versioned", [False, True])
def test_a_hand_made_capsule_has_a_deleter_that_frees_nothing(versioned: bool) -> None:
    """torch 1.12 and older call the deleter of a capsule they imported,
    without asking whether there is one, when the tensor is freed: a NULL
    deleter killed the runner there (a segmentation fault). Other
    consumers get none: torch 2.x calls the deleter of a capsule it
    refuses with its exception set, which a Python deleter turns into
    SystemError."""
    import ctypes

    from dlroute import _capsules

    name = b"dltensor_versioned" if versioned else b"dltensor"
    struct = _capsules.DLManagedTensorVersioned if versioned else _capsules.DLManagedTensor
    bare = _capsules.make_capsule((1, 0), versioned=versioned)
    assert not struct.from_address(_capsules._get_pointer(bare, name)).deleter
    capsule = _capsules.make_capsule((1, 0), versioned=versioned, deleter=True)
    managed = struct.from_address(_capsules._get_pointer(capsule, name))
    assert managed.deleter, "a NULL deleter"
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(managed.deleter)(ctypes.addressof(managed))
    assert _capsules.read_capsule(capsule)["device"] == (1, 0)


@pytest.mark.parametrize("versioned", [False, True])
def test_a_used_capsule_keeps_its_name(versioned: bool) -> None:
    """A capsule made as one a consumer has read is named used_dltensor
    (used_dltensor_versioned) for as long as it lives: the capsule holds a
    pointer to its name, so a name the runner built and dropped read as
    whatever the memory held next."""
    from dlroute import _capsules

    capsule = _capsules.make_capsule((1, 0), versioned=versioned, used=True)
    for i in range(2000):  # reuse the freed memory, as a run does
        bytes(range(i % 200)) * 3
    want = "used_dltensor_versioned" if versioned else "used_dltensor"
    assert _capsules._get_name(capsule).decode() == want


def test_a_meta_tensor_is_made_without_a_meta_arange() -> None:
    """torch 1.10 has no meta kernel for arange (NotImplementedError): the
    runner's meta tensor must not need one, or every meta case of torch
    1.10 ends as the runner's own failure."""
    from types import SimpleNamespace

    from dlroute.check._arrays import TorchChecker

    def arange(*args: object, device: str = "cpu") -> object:
        if device == "meta":
            raise NotImplementedError("Could not run 'aten::arange.start_out' with arguments from the 'Meta' backend")
        return SimpleNamespace(device=device)

    checker = TorchChecker.__new__(TorchChecker)
    checker.torch = SimpleNamespace(arange=arange, empty=lambda n, device="cpu": SimpleNamespace(device=device))
    assert checker.tensor({"call": "__dlpack__", "device_type": "meta"}).device == "meta"
