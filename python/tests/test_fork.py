"""After fork: a child forked after the library loaded keeps deciding.

The library's Go runtime does not survive fork(); the child's answers come
from what the parent remembered, and new ones from an answerer, a fresh
interpreter started on first need (dlroute/_native.py). Each test runs a
script in a fresh interpreter under a timeout, so a hang is a failure that
shows each process's Python stacks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT

CPU = {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0}


# Put first in every script: SIGUSR1 makes each of its processes, and
# each child it forks, write every thread's Python stack to a file of its
# own, stacks.<pid>.txt, which a timeout sends before it kills them, so
# that a hang says where it is.
STACKS_ON_SIGUSR1 = """\
import faulthandler as _faulthandler, os as _os, signal as _signal
def _stacks_on_sigusr1():
    global _stacks
    _stacks = open(f"stacks.{_os.getpid()}.txt", "w")
    _faulthandler.register(_signal.SIGUSR1, file=_stacks, all_threads=True)
_stacks_on_sigusr1()
_os.register_at_fork(after_in_child=_stacks_on_sigusr1)
"""


def run_script(tmp_path: Path, code: str, timeout: float = 240) -> list[str]:
    script = tmp_path / "script.py"
    script.write_text(STACKS_ON_SIGUSR1 + textwrap.dedent(code))
    proc = subprocess.Popen([sys.executable, str(script)], env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGUSR1)
        time.sleep(2)  # for each process to write its stacks
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        stacks = "\n".join(f"process {f.name.split('.')[1]}:\n{f.read_text()}" for f in sorted(tmp_path.glob("stacks.*.txt")))
        pytest.fail(f"the script (process {proc.pid}) had not ended after {timeout} s; the Python stacks of its "
                    f"processes then:\n{stacks}\nits output:\n{out}{err}")
    assert proc.returncode == 0, out + err
    return out.splitlines()


def test_a_script_that_hangs_fails_with_each_process_stacks(tmp_path: Path) -> None:
    # run_script's own timeout: the script and the child it forked, each
    # stopped where it waits.
    with pytest.raises(pytest.fail.Exception) as failed:
        run_script(tmp_path, """
            import multiprocessing as mp, time
            def child():
                time.sleep(1000)
            if __name__ == "__main__":
                p = mp.get_context("fork").Process(target=child)
                p.start()
                p.join()
        """, timeout=3)
    said = str(failed.value)
    assert "had not ended after 3 s" in said and said.count("\nprocess ") == 2, said
    assert " in child\n" in said and " in join\n" in said, said


def test_a_forked_child_decides_with_the_parents_memo_and_an_answerer(tmp_path: Path) -> None:
    lines = run_script(tmp_path, """
        import json, multiprocessing as mp, numpy as np, dlroute
        from dlroute import _native
        from dlroute.testing import GpuArray

        rs = dlroute.load().ruleset("jax")
        known = {"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0}
        new = {"platform": "gpu", "platform_version": "rocm 60342", "local_hardware_id": 3}
        rs.resolve(known)
        dlroute.from_dlpack(np.arange(3.0), "numpy")

        def answers():
            out = {"known": rs.resolve(known), "answerer_after_memo_hit": _native._answerer is not None}
            out["new"] = rs.resolve(new)
            out["answerer_after_new"] = _native._answerer is not None
            out["line"] = rs.resolve_json('{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}')
            out["opened"] = dlroute.load().ruleset("jax@v2").resolve(new)
            out["copy"] = dlroute.from_dlpack(GpuArray(np.arange(4.0), "<unknown>"), "numpy").tolist()
            out["ask"] = dlroute.ask(np.arange(3.0), "numpy", copy=True).outcome
            try:
                rs.resolve({"platform": 7})
            except dlroute.InputError as e:
                out["input_error"] = [type(e).__name__, e.code]
            return out

        def child(q):
            q.put(json.dumps(answers()))

        def fresh(q):
            import dlroute
            q.put(dlroute.load().ruleset("jax").resolve(known)["rule"])

        if __name__ == "__main__":
            for method, target in (("fork", child), ("spawn", fresh), ("forkserver", fresh)):
                ctx = mp.get_context(method)
                q = ctx.Queue()
                p = ctx.Process(target=target, args=(q,))
                p.start()
                print(method, q.get(timeout=120))
                p.join(60)
                assert p.exitcode == 0, (method, p.exitcode)
            print("parent", json.dumps(answers()))
    """)
    assert [line.split(" ", 1)[0] for line in lines] == ["fork", "spawn", "forkserver", "parent"]
    child, parent = json.loads(lines[0].split(" ", 1)[1]), json.loads(lines[3].split(" ", 1)[1])
    assert child["answerer_after_memo_hit"] is False  # the parent's answer, with no call
    assert child["answerer_after_new"] is True
    assert parent["answerer_after_new"] is False  # the parent never needs one
    for k in ("known", "new", "line", "opened", "copy", "ask", "input_error"):
        assert child[k] == parent[k], k
    assert child["new"]["device_type"] == "kDLROCM" and child["copy"] == [0.0, 1.0, 2.0, 3.0]
    assert child["input_error"] == ["InputError", "wrong_type"]
    assert lines[1:3] == ["spawn gpu", "forkserver gpu"]


def test_forked_error_only_where_no_answerer_can_start(tmp_path: Path) -> None:
    lines = run_script(tmp_path, """
        import os, sys, dlroute
        rs = dlroute.load().ruleset("jax")
        rs.resolve({"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0})
        pid = os.fork()
        if pid == 0:
            sys.executable = os.path.join(os.getcwd(), "no-python-here")
            try:
                rs.resolve({"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 5})
                print("answered", flush=True)
            except dlroute.ForkedError as e:
                print(e.code, str(e).splitlines()[0], flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        print("parent", rs.resolve({"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 5})["rule"])
    """)
    assert lines[0].startswith("forked ") and "spawn" in lines[0] and "no-python-here" in lines[0], lines
    assert lines[1] == "parent cpu"


def test_dataloader_workers_route_arrays(tmp_path: Path) -> None:
    """torch's DataLoader with 2 workers on the default start method
    (fork, on Linux), after dlroute was used in the parent: every worker
    routes its arrays."""
    pytest.importorskip("torch")
    lines = run_script(tmp_path, """
        import json, numpy as np, torch, dlroute
        from torch.utils.data import DataLoader, Dataset, get_worker_info
        from dlroute.testing import GpuArray

        print(torch.multiprocessing.get_start_method(), flush=True)
        dlroute.from_dlpack(np.arange(2.0), "torch")  # the library is loaded before the workers fork

        class Arrays(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                x = GpuArray(np.arange(4.0) + i, "<unknown>")   # torch.from_dlpack(x) raises for it
                t = dlroute.from_dlpack(x, "torch")
                rule = dlroute.load().ruleset("jax").resolve(
                    {"platform": "gpu", "platform_version": "cuda %d" % i, "local_hardware_id": i})["rule"]
                return t, get_worker_info().id, rule

        if __name__ == "__main__":
            seen = []
            for t, worker, rule in DataLoader(Arrays(), batch_size=None, num_workers=2):
                seen.append([t.tolist(), int(worker), rule])
            print(json.dumps(seen))
    """)
    assert lines[0] == "fork"
    seen = json.loads(lines[1])
    assert [s[0] for s in seen] == [[i + 0.0, i + 1.0, i + 2.0, i + 3.0] for i in range(8)]
    assert {s[1] for s in seen} == {0, 1}
    assert {s[2] for s in seen} == {"gpu"}
