"""The package as a Python user meets it: the top level, from_dlpack by
consumer name, the library's own copy semantics, errors in Python's words,
and the install's first message."""

from __future__ import annotations

import ast
import ctypes
import os
import pickle
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

import dlroute
from dlroute import _native, routing
from dlroute.testing import GpuArray
from conftest import ROOT

np = pytest.importorskip("numpy")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")


def test_dir_is_all() -> None:
    assert dir(dlroute) == sorted(dlroute.__all__)
    public = {k for k, v in vars(dlroute).items() if not k.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(dlroute.__all__)
    for name in ("from_dlpack", "Routed", "ask", "load"):
        assert name in dlroute.__all__


def test_names_of_0_1_still_answer_with_a_warning() -> None:
    # EvalError and RulesError took the Node package's names; code written
    # for 0.1 keeps working, and is told where it uses an old name.
    import dlroute.errors

    for module in (dlroute, dlroute.errors):
        for old, new in (("EvalError", dlroute.EvaluationError), ("RulesError", dlroute.LoadError)):
            with pytest.warns(DeprecationWarning, match=f"dlroute.{old} is now dlroute.{new.__name__}") as w:
                assert getattr(module, old) is new
            assert w[0].filename == __file__
    with pytest.raises(AttributeError, match="has no attribute 'EvalErrors'"):
        dlroute.EvalErrors  # noqa: B018


def test_consumer_positional_or_keyword() -> None:
    a = np.arange(4.0)
    for out in (dlroute.from_dlpack(a, "numpy"), dlroute.from_dlpack(a, consumer="numpy")):
        assert np.shares_memory(out, a)
    assert dlroute.from_dlpack(a, "torch").data_ptr() == a.ctypes.data
    with pytest.raises(TypeError):
        dlroute.from_dlpack(a)  # type: ignore[call-overload]


def test_every_shipped_library_is_a_consumer_by_name() -> None:
    libraries = {r["name"] for r in dlroute.load().rulesets()} - {"exchange", "jax-export", "jax-import"}
    assert set(routing._CONSUMERS) == libraries
    for name in libraries:
        try:
            out = dlroute.from_dlpack(np.arange(3.0), name)
        except ModuleNotFoundError as e:  # a library not installed in this stack
            assert e.name == routing._CONSUMERS[name][0].split(".")[0]
            continue
        assert out.tolist() == [0.0, 1.0, 2.0]


def test_a_repeated_exchange_does_what_the_first_did() -> None:
    """The remembered plan: in place hands the array itself to the
    consumer; a host copy stays a copy; copy=True stays a copy."""
    a = np.arange(5.0)
    for _ in range(3):
        assert np.shares_memory(dlroute.from_dlpack(a, "numpy"), a)
        assert not np.shares_memory(dlroute.from_dlpack(a, "numpy", copy=True), a)
        x = GpuArray(np.arange(4.0), "<unknown>")
        y = dlroute.from_dlpack(x, "numpy")
        assert not np.shares_memory(y, x.data) and y.tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(BufferError, match="Unknown GPU platform"):
            dlroute.from_dlpack(x, "numpy", copy=False)


def _own_error(f):  # the exception the library's own call raises
    with pytest.raises(Exception) as e:
        f()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("copy", [None, True])
def test_torch_refusals_follow_torch(copy) -> None:
    # (a conjugated view is resolved instead: test_views.py)
    t = torch.ones(3, requires_grad=True)
    want = _own_error(lambda: np.from_dlpack(t))
    assert _own_error(lambda: dlroute.from_dlpack(t, "numpy", copy=copy)) == want
    # Asked otherwise, as torch's message says.
    plain = t.detach()
    assert dlroute.from_dlpack(plain, "numpy", copy=copy).tolist() == plain.tolist()


def test_legacy_capsules_go_where_the_consumer_takes_them() -> None:
    t = torch.arange(4.0)
    out = dlroute.from_dlpack(torch.utils.dlpack.to_dlpack(t), "torch")
    assert out.data_ptr() == t.data_ptr() and out.tolist() == t.tolist()
    assert _own_error(lambda: dlroute.from_dlpack(torch.utils.dlpack.to_dlpack(t), "numpy")) == \
        _own_error(lambda: np.from_dlpack(torch.utils.dlpack.to_dlpack(t)))


def test_errors_speak_python() -> None:
    engine = dlroute.load()
    with pytest.raises(dlroute.NoRuleSetError) as e:
        engine.ruleset("torch==not-a-release")
    assert not str(e.value).startswith("no_ruleset")
    assert 'engine.ruleset("torch@<version>")' in e.value.hint and "engine.rulesets()" in e.value.hint
    assert "--" not in str(e.value)
    with pytest.raises(dlroute.InputError) as e2:
        engine.ruleset("jax").resolve({"platform": 7})
    assert e2.value.code == "wrong_type" and not str(e2.value).startswith("wrong_type")
    with pytest.raises(dlroute.NoRuleSetError) as e3:
        engine.ruleset_for_installed("numpy", "dlroute-no-such-package")
    assert "pip install dlroute-no-such-package" in e3.value.hint
    again = pickle.loads(pickle.dumps(e2.value))
    assert (type(again), again.code, str(again), again.details) == (type(e2.value), "wrong_type", str(e2.value),
                                                                    e2.value.details)


def test_too_small_is_asked_again_at_most_3_times(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def always_too_small(*args):
        calls.append(args)
        _native._buffer().len.value = 2 * len(calls)  # always a little more than last time
        return _native.TOO_SMALL

    monkeypatch.setattr(_native, "_lib", types.SimpleNamespace(dlroute_describe=always_too_small))
    with pytest.raises(dlroute.LibraryError, match="larger buffer 4 times"):
        _native.call("dlroute_describe", 1)
    assert len(calls) == 4
    monkeypatch.undo()
    _native._buffer().grow(1 << 16)


def test_one_library_finder_and_no_import_loop() -> None:
    def imports(module: str) -> set[str]:
        tree = ast.parse((ROOT / "python" / "dlroute" / f"{module}.py").read_text())
        return {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module is None
                for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1
                                      and n.module}
    assert "_native" not in imports("_build")
    assert "DLROUTE_LIB" not in (ROOT / "python" / "dlroute" / "_native.py").read_text()


def test_install_says_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "only-go").mkdir()
    go = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True).stdout.strip()
    os.symlink(Path(go) / "bin" / "go", tmp_path / "only-go" / "go")
    for path, want in ((str(tmp_path), "Go 1.26 or newer is not on PATH"),
                       (str(tmp_path / "only-go"), "no C compiler is on PATH")):
        env = {k: v for k, v in os.environ.items() if k not in ("DLROUTE_LIB", "CC")}
        env["PATH"] = path
        done = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT / "python", env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert want in done.stderr and "Go 1.26" in done.stderr and "C compiler" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.startswith("error: ")


def test_the_gpu_stand_in_ships() -> None:
    x = GpuArray(np.arange(6.0), platform_version="<unknown>")
    with pytest.raises(BufferError, match="Unknown GPU platform for __dlpack__: <unknown>"):
        torch.from_dlpack(x)  # torch asks __dlpack_device__ first, where JAX raises
    with pytest.raises((BufferError, RuntimeError), match=r"^Unsupported device in DLTensor\.$"):
        np.from_dlpack(x)  # JAX's __dlpack__ exports kDLCUDA, whatever the platform_version
    assert dlroute.Routed(x).__dlpack_device__() == (1, 0)
    assert dlroute.from_dlpack(x, "torch").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert "testing" not in dir(dlroute)


def test_rules_closed_after_an_exchange_refuse_the_next() -> None:
    engine = dlroute.load()
    a = np.arange(3.0)
    assert np.shares_memory(dlroute.from_dlpack(a, "numpy", rules=engine), a)
    engine.close()
    with pytest.raises(dlroute.LibraryError) as e:
        dlroute.from_dlpack(a, "numpy", rules=engine)
    assert e.value.code == "closed"
