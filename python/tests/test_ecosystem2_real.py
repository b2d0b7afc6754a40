"""Issue 39's libraries where they are installed (a venv beside numpy, as
rules/README.md's evidence runs are): each release against the version that
covers it, every case a CPU reaches, byte for byte. Skipped where the
library is absent (the Python tests' stacks install none of them)."""

from __future__ import annotations

import warnings

import pytest

from dlroute import check

OWN = ("tensorflow", "paddle", "mlx", "warp")


@pytest.mark.parametrize("library", OWN)
def test_installed_release_agrees_with_its_version(library: str) -> None:
    release, why = check.probe(library)
    if release is None:
        pytest.skip(f"{library}: {why}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check.run([library], exchanges=False)
    (target,) = report.targets
    assert target.covered, f"{library} {release}: no version covers it ({target.ref} is the nearest)"
    ran = [r for r in report.results if r.status != "unreachable"]
    diffs = [r for r in report.results if r.status == "differ"]
    assert ran, f"{target.ref}: no case ran on {library} {release}"
    assert not diffs, "\n".join(f"{r.case}\n  rules:   {r.want}\n  library: {r.got}" for r in diffs[:5])
