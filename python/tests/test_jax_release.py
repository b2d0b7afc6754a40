"""The installed jax release against the rules for that release.

``jax==<jax.__version__>`` names the ``jax`` rule version whose manifest
says it covers the installed release. Here the installed release's own
``ArrayImpl.__dlpack_device__`` (the function in jax/_src/array.py, called
unchanged) runs on stand-in arrays that answer exactly the attributes it
reads, over a generated space of platforms, tricky ``platform_version``
strings, memory kinds, hardware ids and shard counts; the rules must give
the same device or the same exception, type and message, on every one.
This checks one release against its real code: the other eras are checked
by their versions' cases, derived from JAX's history.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import jax
import pytest
from jax._src import array as jax_array

import dlroute

PLATFORMS = ["cpu", "gpu", "tpu", "METAL", "neuron", ""]
PLATFORM_VERSIONS = [
    "cpu", "cuda 12030", "rocm 60200", "oneapi 2026.0", "<unknown>", "", "CUDA 12", "ROCm",
    "nvfork 1.0", "HIP build, rocm 60200", "cuda-rocm", "xcudax", "rocmcuda", "PJRT C API\ncuda",
    "TFRT TPU v5 lite", "sycl oneapi",
]
MEMORY_KINDS = [None, "device", "pinned_host", "unpinned_host", "PINNED_HOST"]
HARDWARE_IDS = [None, 0, 3]
SHARDS = [0, 1, 2]


def standin(platform: str, platform_version: str, memory_kind: str | None, hw: int | None, shards: int) -> Any:
    """An object with what ArrayImpl.__dlpack_device__ reads: _arrays,
    platform(), sharding.memory_kind and sharding._internal_device_list
    (jax/_src/array.py's _get_device), whose device has client.platform_version
    and local_hardware_id."""
    device = SimpleNamespace(client=SimpleNamespace(platform_version=platform_version), local_hardware_id=hw)
    sharding = SimpleNamespace(memory_kind=memory_kind, _internal_device_list=[device])
    return SimpleNamespace(_arrays=[object()] * shards, platform=lambda: platform, sharding=sharding)


def real(x: Any) -> tuple[str, Any]:
    try:
        code, device_id = jax_array.ArrayImpl.__dlpack_device__(x)
    except Exception as e:  # the outcome compared is the exception itself
        return "raise", (type(e).__name__, str(e))
    return "device", (int(code), device_id)


def decided(rs: dlroute.RuleSet, inputs: dict[str, Any]) -> tuple[str, Any]:
    d = rs.resolve(inputs)
    if "error" in d:
        return "raise", (d["error"]["type"], d["error"]["message"])
    return "device", (d["device_type_code"], d["device_id"])


@pytest.fixture(scope="module")
def release_rules() -> dlroute.RuleSet:
    return dlroute.load().ruleset_for_installed("jax")


def test_installed_release_has_its_version(release_rules: dlroute.RuleSet) -> None:
    """The installed jax is covered by a version other than the newest, so
    the comparison below checks an era the default does not."""
    cpu = {"platform": "cpu", "platform_version": "cpu"}
    ref = release_rules.resolve(cpu)["ruleset"]
    assert dlroute.load().ruleset(f"jax=={jax.__version__}").resolve(cpu)["ruleset"] == ref
    newest = dlroute.load().ruleset("jax").resolve(cpu)["ruleset"]
    if ref == newest:
        pytest.skip(f"jax {jax.__version__} is decided by the newest version, {ref}: nothing older to check")


def test_a_release_no_version_covers() -> None:
    with pytest.raises(dlroute.NoRuleSetError, match="older than every version: the oldest, jax@v0 covers"):
        dlroute.load().ruleset("jax==0.4.14")


def test_every_generated_input_matches_the_installed_jax(release_rules: dlroute.RuleSet) -> None:
    mismatches = []
    n = 0
    for platform, pv, mk, hw, shards in itertools.product(PLATFORMS, PLATFORM_VERSIONS, MEMORY_KINDS,
                                                          HARDWARE_IDS, SHARDS):
        n += 1
        inputs = {"platform": platform, "platform_version": pv, "memory_kind": mk,
                  "local_hardware_id": hw, "shards": shards}
        want = real(standin(platform, pv, mk, hw, shards))
        got = decided(release_rules, inputs)
        if got != want:
            mismatches.append((inputs, want, got))
    assert n == len(PLATFORMS) * len(PLATFORM_VERSIONS) * len(MEMORY_KINDS) * len(HARDWARE_IDS) * len(SHARDS)
    assert not mismatches, f"{len(mismatches)} of {n} inputs differ; first: {mismatches[:3]}"


def test_other_eras_differ_from_the_installed_release(release_rules: dlroute.RuleSet) -> None:
    """The comparison can fail: a neighbouring era's version disagrees with
    the installed jax on some generated input (CUDA pinned host memory, the
    oneAPI marker, the exception types)."""
    eng = dlroute.load()
    ref = release_rules.resolve({"platform": "cpu", "platform_version": "cpu"})["ruleset"]
    for other in ("jax@v0", "jax@v1", "jax@v1.1", "jax@v3"):
        if other == ref:
            continue
        rs = eng.ruleset(other)
        differs = any(
            decided(rs, {"platform": p, "platform_version": pv, "memory_kind": mk, "local_hardware_id": 0,
                         "shards": 1}) != real(standin(p, pv, mk, 0, 1))
            for p, pv, mk in itertools.product(["gpu", "tpu"], PLATFORM_VERSIONS, MEMORY_KINDS))
        assert differs, f"{other} decides like jax {jax.__version__} ({ref}) on every input"
