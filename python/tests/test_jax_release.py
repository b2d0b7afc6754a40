"""The installed jax release against the rules for that release.

``jax==<jax.__version__>`` names the ``jax`` rule version whose manifest
says it covers the installed release. The conformance runner
(dlroute.check) runs the installed release's own
``ArrayImpl.__dlpack_device__`` (jax/_src/array.py, unchanged) on stand-in
arrays, over every case of that version and a generated space of
platforms, tricky ``platform_version`` strings, memory kinds, hardware ids
and shard counts; the rules must give the same device or the same
exception, type and message, on every one.
"""

from __future__ import annotations

import itertools

import jax
import pytest

import dlroute
from dlroute import check
from dlroute.check import _base
from dlroute.check._jax import MEMORY_KINDS, PLATFORM_VERSIONS, JaxChecker


@pytest.fixture(scope="module")
def release_rules() -> dlroute.RuleSet:
    return dlroute.load().ruleset_for_installed("jax")


def test_installed_release_has_its_version(release_rules: dlroute.RuleSet) -> None:
    cpu = {"platform": "cpu", "platform_version": "cpu"}
    ref = release_rules.resolve(cpu)["ruleset"]
    assert dlroute.load().ruleset(f"jax=={jax.__version__}").resolve(cpu)["ruleset"] == ref


def test_a_release_no_version_covers() -> None:
    with pytest.raises(dlroute.NoRuleSetError, match="older than every version: the oldest, jax@v0 covers"):
        dlroute.load().ruleset("jax==0.4.14")


def test_every_case_and_generated_input_matches_the_installed_jax(release_rules: dlroute.RuleSet) -> None:
    report = check.run(["jax"], exchanges=False)
    rows = [r for r in report.results if r.ref.startswith("jax@")]
    assert {r.ref for r in rows} == {release_rules.ref}
    generated = [r for r in rows if r.case.startswith("generated: ")]
    assert len(generated) == 6 * 16 * 5 * 3 * 3
    assert all(r.status != "unreachable" for r in rows), "stand-ins reach every case"
    diffs = [r for r in rows if r.status == "differ"]
    assert not diffs, f"{len(diffs)} of {len(rows)} differ; first: {[(r.case, r.want, r.got) for r in diffs[:3]]}"


def test_other_eras_differ_from_the_installed_release(release_rules: dlroute.RuleSet) -> None:
    """The comparison can fail: a neighbouring era's version disagrees with
    the installed jax on some generated input (CUDA pinned host memory, the
    oneAPI marker, the exception types)."""
    eng = dlroute.load()
    real = JaxChecker()
    for other in ("jax@v0", "jax@v1", "jax@v1.1", "jax@v3"):
        if other == release_rules.ref:
            continue
        rs = eng.ruleset(other)
        differs = any(
            _base.decided_device(rs.explain(inp)) != real.device(inp)
            for inp in ({"platform": p, "platform_version": pv, "memory_kind": mk, "local_hardware_id": 0,
                         "shards": 1} for p, pv, mk in itertools.product(["gpu", "tpu"], PLATFORM_VERSIONS,
                                                                        MEMORY_KINDS)))
        assert differs, f"{other} decides like jax {jax.__version__} ({release_rules.ref}) on every input"


def test_standin_answers_what_older_releases_read() -> None:
    """jax 0.4.20's __dlpack_device__ reads x.device(), 0.4.21-0.4.29's
    _get_device reads x.devices(): the stand-in answers both with its one
    device, as the sharding's device list does for newer releases."""
    from dlroute.check._jax import standin

    x = standin({"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 3})
    (device,) = x.sharding._internal_device_list
    assert x.device() is device
    assert list(x.devices()) == [device] and len(x.devices()) == 1
    assert next(iter(x.devices())).local_hardware_id == 3


def test_a_crash_in_a_case_is_its_result_and_the_run_goes_on() -> None:
    """jax-import@v0.4 (jax 0.4.31-0.4.34) says a float8 capsule is refused;
    a newer jax takes it, and a capsule made by hand has no deleter, which
    jax 0.7 to 0.10 abort the interpreter on freeing it
    (std::bad_function_call). The runner hands such capsules to a child:
    the crash (or, for a jax that survives it, what it did) is that case's
    result, and the run ends with its report, leaving no file or pipe of
    its children open (a ResourceWarning, under ``python -X dev``)."""
    import json

    from conftest import run_python

    code = ("import sys; from dlroute import check; "
            "sys.exit(check.main(['jax', '--no-exchanges', '--json', '--ruleset', 'jax-import@v0.4']))")
    got = run_python(code, env={"PYTHONWARNINGS": "default::ResourceWarning"}, timeout=300)
    assert got.returncode == 1, (got.returncode, got.stderr[-2000:])
    assert "ResourceWarning" not in got.stderr, got.stderr[-2000:]
    report = json.loads(got.stdout.splitlines()[-1])
    (case,) = [d for d in report["differences"] if d["case"].startswith("a float8 e4m3fn array is a code")]
    assert case["got"] in ({"raise": ["SIGABRT", "bad_function_call"]}, {"device": None}), case
    assert len([d for d in report["differences"] if d["ref"] == "jax-import@v0.4"]) > 1, "the cases after it were run"
