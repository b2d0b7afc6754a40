"""Benchmarks of the Python package, each beside its baseline in the same
run (the machine is noisy): BENCHMARKS.md keeps the figures and this
command.

    PYTHONPATH=python python python/bench/bench.py

Prints one line per measure: the median of 5 repeats of a timeit loop, in
microseconds of the thread's CPU time per call, and the range.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import timeit


def jax_table(inp: dict) -> dict:
    """JAX's __dlpack_device__ (jax@1e1c6a8fc0) written by hand in Python,
    reading the same input dict the rules read, as engine/switch_test.go
    writes it in Go: the baseline a decision is measured against."""
    platform = inp.get("platform")
    version = inp.get("platform_version") or ""
    pinned = inp.get("memory_kind") == "pinned_host"
    hw = inp.get("local_hardware_id")

    def raise_(rule: str, msg: str) -> dict:
        return {"error": {"type": "BufferError", "message": msg}, "rule": rule, "ruleset": "jax@v3"}

    def device(rule: str, name: str, code: int, i: int) -> dict:
        return {"device_type": name, "device_type_code": code, "device_id": i, "rule": rule, "ruleset": "jax@v3"}

    if inp.get("shards", 1) > 1:
        return raise_("sharded", "__dlpack__ only supported for unsharded arrays.")
    if platform == "cpu":
        return device("cpu", "kDLCPU", 1, 0)
    if platform == "gpu":
        if "cuda" in version:
            name, code = ("kDLCUDAHost", 3) if pinned else ("kDLCUDA", 2)
        elif "rocm" in version:
            name, code = ("kDLROCMHost", 11) if pinned else ("kDLROCM", 10)
        elif "oneapi" in version:
            name, code = "kDLOneAPI", 14
        else:
            return raise_("gpu-unknown-platform", "Unknown GPU platform for __dlpack__: " + version)
        if hw is None:
            return raise_("gpu-no-hardware-id", "Couldn't get local_hardware_id for __dlpack__")
        return device("gpu", name, code, hw)
    if platform == "tpu":
        if not pinned:
            return raise_("tpu-not-pinned-host", "__dlpack__ device only supported for TPU pinned host memory")
        return device("tpu-pinned-host", "kDLTPUHost", 20, hw)
    return raise_("unsupported-platform",
                  "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: " + str(platform))


def measure(name: str, stmt, number: int) -> float:
    # CPU time of this thread (time.thread_time), not the wall clock: the
    # machine's 2 cores are shared, and time spent waiting for one is not
    # the call's.
    runs = [t / number * 1e6 for t in timeit.repeat(stmt, number=number, repeat=5, timer=time.thread_time)]
    med = statistics.median(runs)
    print(f"{name:58s} {med:8.2f} us   ({min(runs):.2f}-{max(runs):.2f})", flush=True)
    return med


def routed_exchanges(rs) -> None:
    """A repeated routed exchange beside the consumer's own from_dlpack on
    the same array, numpy -> numpy and jax -> numpy; then the wrapper
    handed to the consumer, and the exchange decision remembered."""
    import numpy as np

    import dlroute
    from dlroute import arrays

    a = np.arange(16, dtype=np.float32)
    pairs = [("numpy -> numpy", a)]
    try:
        import jax.numpy as jnp
    except ImportError:
        print("jax is not installed: jax -> numpy is left out")
    else:
        pairs.append(("jax -> numpy", jnp.arange(16, dtype=jnp.float32)))
    for name, x in pairs:
        dlroute.from_dlpack(x, "numpy")
        own = measure(f"baseline: np.from_dlpack(x), {name}", lambda: np.from_dlpack(x), 100_000)
        routed = measure(f"dlroute.from_dlpack(x, 'numpy'), {name}, repeated", lambda: dlroute.from_dlpack(x, "numpy"),
                         100_000)
        print(f"{'  over the consumer own from_dlpack':58s} {routed - own:8.2f} us", flush=True)
    x = pairs[-1][1]
    measure(f"np.from_dlpack(dlroute.Routed(x)), {pairs[-1][0]}", lambda: np.from_dlpack(dlroute.Routed(x)), 20_000)
    ex = dlroute.load().ruleset("exchange")
    inp = dict(arrays.inputs_of(x), dl_device=None, copy=None, max_version=(1, 0), stream=None)
    ex.exchange(inp)
    measure("RuleSet.exchange(dict), memo hit", lambda: ex.exchange(inp), 100_000)
    measure("baseline: arrays.inputs_of(x)", lambda: arrays.inputs_of(x), 100_000)


def after_fork() -> None:
    """In a child forked after the library loaded: the parent's answer
    (a memo hit), the first new answer (the answerer starts), and a new
    answer once it runs."""
    code = ("import os, time, json, dlroute; rs = dlroute.load().ruleset('jax'); "
            "known = {'platform': 'cpu', 'platform_version': 'cpu', 'local_hardware_id': 0}; rs.resolve(known)\n"
            "r, w = os.pipe()\n"
            "if os.fork() == 0:\n"
            "    t = [time.perf_counter()]\n"
            "    for i in range(1000): rs.resolve(known)\n"
            "    t.append(time.perf_counter())\n"
            "    rs.resolve({'platform': 'gpu', 'platform_version': 'cuda 1', 'local_hardware_id': 0})\n"
            "    t.append(time.perf_counter())\n"
            "    for i in range(1000): rs.resolve_json('{\"platform\":\"gpu\",\"platform_version\":\"cuda %d\",\"local_hardware_id\":0}' % (i + 2))\n"
            "    t.append(time.perf_counter())\n"
            "    os.write(w, json.dumps([(t[1]-t[0])/1000*1e6, (t[2]-t[1])*1e3, (t[3]-t[2])/1000*1e6]).encode()); os._exit(0)\n"
            "os.wait(); print(os.read(r, 1000).decode())")
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
        runs.append(json.loads(out.stdout))
    for i, (name, unit) in enumerate([("after fork: the parent's answer (memo hit)", "us"),
                                      ("after fork: the first new answer (starts the answerer)", "ms"),
                                      ("after fork: a new answer, through the answerer", "us")]):
        col = [r[i] for r in runs]
        print(f"{name:58s} {statistics.median(col):8.2f} {unit}   ({min(col):.2f}-{max(col):.2f})", flush=True)


def first_decision() -> None:
    """Library load to first decision, in a fresh interpreter each time,
    and its parts: import dlroute, load the library (dlopen, the Go
    runtime starts) and open the embedded rules, compile jax (the
    embedded rules compile a version at a time), the first resolve."""
    code = ("import time; t0=time.perf_counter(); import dlroute; t1=time.perf_counter(); "
            "e=dlroute.load(); t2=time.perf_counter(); rs=e.ruleset('jax'); t3=time.perf_counter(); "
            "rs.resolve({'platform':'gpu','platform_version':'cuda 12030','local_hardware_id':0}); "
            "t4=time.perf_counter(); print(*[(b-a)*1e3 for a, b in ((t0,t4),(t0,t1),(t1,t2),(t2,t3),(t3,t4))])")
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
        runs.append([float(x) for x in out.stdout.split()])
    names = ["load to first decision (import, dlopen, open, resolve)", "  of which import dlroute",
             "  of which load() (dlopen, open the embedded rules)", "  of which ruleset('jax') (compile jax@v3)",
             "  of which the first resolve"]
    for i, name in enumerate(names):
        col = [r[i] for r in runs]
        print(f"{name:58s} {statistics.median(col):8.1f} ms   ({min(col):.1f}-{max(col):.1f})", flush=True)
    from dlroute import _build

    root = _build.source_root()
    if root is not None:
        runs = [t * 1e3 for t in timeit.repeat(lambda: _build.source_hash(root), number=1, repeat=5)]
        print(f"{'from a checkout without $DLROUTE_LIB: hashing its source':58s} {statistics.median(runs):8.1f} ms   "
              f"({min(runs):.1f}-{max(runs):.1f})", flush=True)


def main() -> None:
    import dlroute

    rs = dlroute.load().ruleset("jax")
    hit = {"platform": "gpu", "platform_version": "cuda 12030", "memory_kind": "device", "local_hardware_id": 0}
    rs.resolve(hit)
    assert jax_table(hit) == rs.resolve(hit)
    line = json.dumps(hit)
    rs.resolve_json(line)
    n = [0]

    def miss() -> dict:
        n[0] += 1
        return rs.resolve({"platform": "gpu", "platform_version": f"cuda {n[0]}", "local_hardware_id": 0})

    def miss_json() -> str:
        n[0] += 1
        return rs.resolve_json('{"platform":"gpu","platform_version":"cuda %d","local_hardware_id":0}' % n[0])

    print(f"python {sys.version.split()[0]}, libdlroute {dlroute.library_version()}")
    measure("baseline: the table as a plain Python function", lambda: jax_table(hit), 200_000)
    measure("resolve(dict), memo hit", lambda: rs.resolve(hit), 200_000)
    measure("resolve_json(line), memo hit", lambda: rs.resolve_json(line), 200_000)
    measure("resolve(dict), miss (a new platform_version each call)", miss, 20_000)
    measure("resolve_json(line), miss", miss_json, 20_000)
    try:
        import jax.numpy as jnp
    except ImportError:
        print("jax is not installed: the array measures are left out")
    else:
        from dlroute import arrays

        x = jnp.arange(16, dtype=jnp.float32)
        assert arrays.inputs_of(x)["platform"] == "cpu"

        def plain_from_array() -> dict:
            dev = next(iter(x.devices()))
            return jax_table({"platform": dev.platform, "platform_version": dev.client.platform_version,
                              "memory_kind": x.sharding.memory_kind, "local_hardware_id": dev.local_hardware_id,
                              "shards": len(x.addressable_shards)})

        measure("baseline: JAX's own x.__dlpack_device__() (CPU array)", x.__dlpack_device__, 50_000)
        measure("baseline: read the inputs from x, plain Python function", plain_from_array, 20_000)
        measure("arrays.inputs_of(x), then resolve (memo hit)", lambda: rs.resolve(arrays.inputs_of(x)), 20_000)
    routed_exchanges(rs)
    after_fork()
    first_decision()


if __name__ == "__main__":
    main()
