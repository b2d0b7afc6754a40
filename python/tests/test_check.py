"""The conformance runner itself (dlroute.check, `python -m dlroute
check`): it finds a difference and exits 1 when the rules are wrong, it
counts a case this machine cannot reach with its reason, and it reads
release ranges as the manifests write them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dlroute import check
from dlroute.__main__ import main

RULES = Path(__file__).resolve().parent.parent.parent / "rules"


def test_a_wrong_message_in_the_rules_is_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A copy of the rules whose covering jax version words one error
    otherwise than the installed jax: the runner reports it, byte for byte,
    and exits 1; the unaltered rules give 0."""
    pytest.importorskip("jax")
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
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

    assert main(["check", "jax", "--no-exchanges", "--rules", str(RULES)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("0 differences")


def test_a_case_that_needs_a_gpu_is_unreachable_with_its_reason() -> None:
    """A torch case on a cuda tensor is counted, not run, where torch has
    no CUDA device, and so is a jax-export case for a cuda client."""
    report = check.run([lib for lib in ("torch", "jax") if check.installed(lib)], exchanges=False)
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
    pytest.importorskip("jax")
    main(["check", "jax", "--no-exchanges"])
    out = capsys.readouterr().out
    assert "library  rules" in out and "jax-export@" in out
    assert "cannot be reached here: needs a jax cuda client (this jax's is cpu)" in out


@pytest.mark.parametrize("release, want", [
    ("2.5.5", ("numpy@v2", True)),
    ("2.4.6", ("numpy@v1", True)),
    ("9.0.0", ("numpy@v2", False)),
])
def test_the_version_for_a_release(release: str, want: tuple[str, bool]) -> None:
    ref, covered, _ = check.choose_version(RULES, "numpy", release)
    assert (ref, covered) == want


def test_a_local_build_is_read_by_its_base_release() -> None:
    assert check.release_tuple("1.13.0a0+gitunknown") == (1, 13, 0)
    assert check.release_tuple("2.15.0+cu132") == (2, 15, 0)
    ref, covered, _ = check.choose_version(RULES, "torch", "1.13.0a0+gitunknown")
    assert ref == "torch@v1" and not covered  # torch@v1 mirrors 1.13.1: the nearest


def test_an_unknown_library_is_refused(capsys: pytest.CaptureFixture) -> None:
    assert main(["check", "tensorflow"]) == 2
    assert "dlroute check knows numpy, torch, jax, cupy, not 'tensorflow'" in capsys.readouterr().err


def test_another_era_of_numpy_is_told_apart(capsys: pytest.CaptureFixture) -> None:
    """--ruleset runs a version other than the covering one: numpy 2.4's
    and 2.5's exception types differ (PR #31000), so the other era's
    version differs from the installed numpy, and the command exits 1."""
    release = check.installed("numpy")
    if release is None:
        pytest.skip("numpy is not installed")
    ref, covered, _ = check.choose_version(RULES, "numpy", release)
    assert covered and ref in ("numpy@v1", "numpy@v2")
    other = "numpy@v2" if ref == "numpy@v1" else "numpy@v1"
    assert main(["check", "numpy", "--no-exchanges", "--ruleset", other]) == 1
    out = capsys.readouterr().out
    assert f"numpy {release}: numpy -> {other} was asked for (--ruleset)" in out
    assert f"DIFFERS {other}: " in out
