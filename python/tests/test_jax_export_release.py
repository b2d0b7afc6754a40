"""The installed jax's own ``x.__dlpack__`` against ``jax-export`` for that
release.

``jax-export==<jax.__version__>`` is the version whose manifest covers the
installed release. Each call here is the real ``__dlpack__`` of a real CPU
array, over every combination of ``stream``, ``max_version``, ``dl_device``
and ``copy`` below; the rules get the facts the code reads from this very
process (the client's platform, the backends JAX has and those that failed
to start, the device's repr and str) and must answer the same: the
capsule's name, its device, whether the data was copied, or the exception,
type and message, byte for byte. Cases a CPU build cannot reach (a GPU
array, a stream on a GPU) are the version's own cases, from JAX's code.
"""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import xla_bridge

import dlroute
from dlpack_capsules import read_capsule

STREAMS = [None, 0, 1, -1]
MAX_VERSIONS = [None, (1, 0), (0, 5), (0, 4), (2, 0), (1,)]
DL_DEVICES = [None, (), (0, 0), (1, 0), (1, 1), (2, 0), (3, 0), (10, 0), (20, 0), (99, 0)]
COPIES = [None, True, False]


@pytest.fixture(scope="module")
def export_rules() -> dlroute.RuleSet:
    return dlroute.load().ruleset_for_installed("jax-export", package="jax")


def facts(x: jax.Array) -> dict[str, Any]:
    """What the export reads of x and of this process, as the rules'
    inputs name them."""
    (dev,) = x.devices()
    return {
        "client_platform": dev.client.platform,
        "memory_kind": x.sharding.memory_kind,
        "local_hardware_id": dev.local_hardware_id,
        "backends": list(xla_bridge.backends()),
        "backend_errors": dict(xla_bridge._backend_errors),
        "device_repr": repr(dev),
        "device_str": str(dev),
    }


def real(x: jax.Array, **kwargs: Any) -> tuple[str, Any]:
    try:
        capsule = x.__dlpack__(**kwargs)
    except Exception as e:  # the outcome compared is the exception itself
        return "raise", (type(e).__name__, str(e))
    c = read_capsule(capsule)
    return "capsule", (c["capsule"], c["device"], c["data"] != x.unsafe_buffer_pointer())


def decided(rules: dlroute.RuleSet, inputs: dict[str, Any]) -> tuple[str, Any]:
    d = rules.resolve(inputs)
    if "error" in d:
        return "raise", (d["error"]["type"], d["error"]["message"])
    return "capsule", (d["capsule"], (d["device_type_code"], d["device_id"]), bool(d.get("copy")))


def test_every_request_matches_the_installed_jax(export_rules: dlroute.RuleSet) -> None:
    x = jnp.arange(4.0)
    base = facts(x)
    assert base["client_platform"] == "cpu"
    mismatches, n = [], 0
    for stream, max_version, dl_device, copy in itertools.product(STREAMS, MAX_VERSIONS, DL_DEVICES, COPIES):
        kwargs = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        inputs = dict(base, stream=stream, copy=copy,
                      max_version=None if max_version is None else list(max_version),
                      dl_device=None if dl_device is None else list(dl_device))
        n += 1
        want, got = real(x, **kwargs), decided(export_rules, inputs)
        if got != want:
            mismatches.append((kwargs, want, got))
    assert n == len(STREAMS) * len(MAX_VERSIONS) * len(DL_DEVICES) * len(COPIES)
    assert not mismatches, f"{len(mismatches)} of {n} calls differ; first: {mismatches[:3]}"


def test_the_newest_version_differs_where_the_release_does(export_rules: dlroute.RuleSet) -> None:
    """The comparison can fail: jax-export@v1 (jax 0.11.0 on) and the
    installed release's version decide some request differently, unless
    the installed jax is itself covered by the newest."""
    newest = dlroute.load().ruleset("jax-export")
    ref = export_rules.resolve(dict(facts(jnp.arange(1.0))))["ruleset"]
    if ref == newest.resolve(dict(facts(jnp.arange(1.0))))["ruleset"]:
        pytest.skip(f"jax {jax.__version__} is decided by the newest version, {ref}")
    base = facts(jnp.arange(1.0))
    assert any(decided(newest, dict(base, dl_device=list(d))) != decided(export_rules, dict(base, dl_device=list(d)))
               for d in DL_DEVICES if d), f"{ref} and the newest version agree on every dl_device"
