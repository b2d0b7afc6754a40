"""The numpy, torch and jax installed here against their rule sets, by the
conformance runner the package ships (dlroute.check, `python -m dlroute
check`): every case of the version that covers each installed release is
run on that release's own functions, and the exchanges between each pair,
and must agree byte for byte. A case this machine cannot reach is counted
with its reason (a CUDA tensor without a CUDA device), never run.

An installed release that no version covers yet is run against the
nearest: where it holds, it must keep holding; where it differs, it is
reported, not failed: extending a range is a measured step, taken when the
runner shows no difference. (Debian's torch says 1.13.0a0+gitunknown, read
as 1.13.0, which torch@v1 covers.)
"""

from __future__ import annotations

import pytest

from dlroute import check

pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")

INSTALLED = [lib for lib in check.LIBRARIES if check.installed(lib)]

# report, the runner's run over INSTALLED, is conftest.py's: one run for
# this file and test_check.py.


def test_something_is_installed() -> None:
    assert {"numpy", "jax"} <= set(INSTALLED), "the Python tests' stacks install numpy and jax"


@pytest.mark.parametrize("library", INSTALLED)
def test_installed_release_agrees_with_its_version(report: check.Report, library: str) -> None:
    targets = [t for t in report.targets if t.library == library]
    assert targets, f"{library} has no rule set the runner checks"
    for t in targets:
        rows = [r for r in report.results if r.ref == t.ref and r.library == library]
        ran = [r for r in rows if r.status != "unreachable"]
        diffs = [r for r in rows if r.status == "differ"]
        assert ran, f"{t.ref}: no case of it could run on {library} {t.release}"
        assert all(r.why for r in rows if r.status == "unreachable"), "an unreachable case says why"
        if not t.covered and diffs:
            pytest.skip(f"{library} {t.release} is covered by no version yet; the nearest, {t.ref}, "
                        f"differs in {len(diffs)} of {len(ran)} cases")
        assert not diffs, f"{t.ref} differs from {library} {t.release} in {len(diffs)} of {len(ran)}:\n" + \
            "\n".join(f"{r.case}\n  rules:   {r.want}\n  library: {r.got}" for r in diffs[:5])


def test_exchanges_agree(report: check.Report) -> None:
    covered = {t.ref for t in report.targets if t.covered}
    pairs = [r for r in report.results if "->" in r.library]
    if len(INSTALLED) > 1:
        assert pairs, "two libraries are installed and no exchange ran"
    diffs = [r for r in pairs if r.status == "differ" and all(ref in covered for ref in r.ref.split(" -> "))]
    assert not diffs, "\n".join(f"{r.case}: rules {r.want}, library {r.got}" for r in diffs[:5])
