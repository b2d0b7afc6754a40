"""The package's core over libdlroute: the contract other checks call
(load, ruleset, resolve_json, resolve, explain, exceptions with a code),
and what real Python programs do to a library: threads, fork, Ctrl-C,
loading twice, a missing library or one of another ABI version."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import dlroute
from conftest import ROOT, run_python

SEED = {"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0}


@pytest.fixture(scope="module")
def engine() -> dlroute.Engine:
    with dlroute.load() as e:
        yield e


def cli_lines(cli: Path, ref: str, lines: list[str], rules: str | None = None) -> list[str]:
    args = [str(cli), "resolve", "--json", "--ruleset", ref] + (["--rules", rules] if rules else [])
    done = subprocess.run(args, input="".join(l + "\n" for l in lines), capture_output=True, text=True)
    return done.stdout.splitlines()


LINES = [
    json.dumps(SEED),
    '{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}',
    '{"platform":"gpu","platform_version":"rocm 60300","memory_kind":"pinned_host","local_hardware_id":3}',
    '{"platform":"tpu","platform_version":"PJRT C API\\nTFRT TPU v5 lite","local_hardware_id":1,"shards":2}',
    '{"platform":"cpu","platform_version":"cpu","memory_kind":null,"local_hardware_id":null}',
    '{"platform":7}',
    '{"platform":"gpu","local_hardware_id":0,"extra":1}',
    "not json",
    "",
]


def alone(answer: str, n: int) -> str:
    """The command's answer to the n-th line of its input as it answers
    that line alone, the first: an error line names its line, which must
    be n."""
    for kind in ("input_error", "eval_error"):
        error = f'{{"{kind}":{{"line":'
        if answer.startswith(error):
            assert answer.startswith(f"{error}{n},"), f"the command's answer to line {n}: {answer}"
            return f"{error}1," + answer[len(f"{error}{n},"):]
    return answer


@pytest.mark.parametrize("ref", ["jax", "jax@v1", "jax@v2", "exchange", "exchange@v1"])
def test_resolve_json_is_the_commands_line(engine: dlroute.Engine, dlroute_cli: Path, ref: str) -> None:
    # One command for every line (each start loads every rule set), and
    # each line alone to resolve_json: the command's answer to line n is
    # the one it gives that line alone, but for the line an error names.
    rs = engine.ruleset(ref)
    answers = cli_lines(dlroute_cli, ref, LINES)
    assert len(answers) == len(LINES), answers
    for n, (line, answer) in enumerate(zip(LINES, answers), 1):
        assert rs.resolve_json(line) == alone(answer, n), line


def test_resolve_json_takes_bytes_that_are_not_utf8(engine: dlroute.Engine) -> None:
    out = json.loads(engine.ruleset("jax").resolve_json(b'{"platform":"gpu\xff"}'))
    assert out["input_error"]["code"] == "invalid_utf8"


def test_resolve_seed(engine: dlroute.Engine) -> None:
    d = engine.ruleset("jax").resolve(SEED)
    assert d == {"error": {"type": "BufferError", "message": "Unknown GPU platform for __dlpack__: <unknown>"},
                 "rule": "gpu-unknown-platform", "ruleset": "jax@v3"}


def test_resolve_returns_the_callers_own_dict(engine: dlroute.Engine) -> None:
    rs = engine.ruleset("jax")
    first = rs.resolve(SEED)
    first["error"]["message"] = "changed"
    first["rule"] = "changed"
    assert rs.resolve(SEED)["error"]["message"] == "Unknown GPU platform for __dlpack__: <unknown>"
    assert rs.resolve(SEED)["rule"] == "gpu-unknown-platform"


def test_resolve_tells_true_from_one(engine: dlroute.Engine) -> None:
    rs = engine.ruleset("exchange")
    base = {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0}
    assert rs.resolve({**base, "copy": True})["copy"] is True
    with pytest.raises(dlroute.InputError) as e:
        rs.resolve({**base, "copy": 1})  # 1 == True in Python: the memo must not answer it
    assert e.value.code == "wrong_type"


@pytest.mark.parametrize("input,code", [
    ({"platform": 7}, "wrong_type"),
    ({"platform": "gpu", "nope": 1}, "unknown_field"),
    ({"platform_version": "cuda"}, "missing_field"),
    ({"platform": "x" * 5000, "platform_version": "", "local_hardware_id": 0}, "too_long"),
])
def test_input_errors(engine: dlroute.Engine, input: dict, code: str) -> None:
    with pytest.raises(dlroute.InputError) as e:
        engine.ruleset("jax").resolve(input)
    assert e.value.code == code
    assert isinstance(e.value, ValueError)
    assert e.value.details["line"] == 1


def test_explain(engine: dlroute.Engine) -> None:
    x = engine.ruleset("jax").explain(SEED)
    assert x["decision"]["rule"] == "gpu-unknown-platform"
    tried = [r["rule"] for r in x["trace"]["rules"]]
    assert tried[-1] == "gpu-unknown-platform" and len(tried) > 1


def test_exchange_steps(engine: dlroute.Engine) -> None:
    rs = engine.ruleset("exchange")
    seed = rs.exchange({**SEED, "max_version": [1, 1]})
    assert seed.step == "copy_to_host"
    assert seed.decision["flags"] == ["DLPACK_FLAG_BITMASK_IS_COPIED"]
    assert seed.decision["capsule"] == "dltensor_versioned"
    cuda = {"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0}
    assert rs.exchange(cuda).step == "in_place"
    refused = rs.exchange({**SEED, "copy": False})
    assert refused.step == "raise" and refused.decision["error"]["type"] in ("BufferError", "ValueError")
    with pytest.raises(dlroute.HostError) as e:
        rs.exchange({**cuda, "copy": True})  # a copy onto the GPU: no host here makes one
    assert e.value.code == "no_copier" and not isinstance(e.value, dlroute.EvaluationError)


def test_rulesets(engine: dlroute.Engine) -> None:
    refs = {r["ref"]: r["default"] for r in engine.rulesets()}
    assert refs["jax@v3"] and not refs["jax@v1"] and "exchange@v2" in refs
    assert engine.ruleset("jax").ref == "jax@v3"
    assert engine.ruleset("jax") is engine.ruleset("jax")


def test_no_ruleset(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.NoRuleSetError) as e:
        engine.ruleset("jax@v99")
    assert e.value.code == "no_ruleset"


def broken_rules(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "jax", rules / "jax")
    f = rules / "jax" / "v3" / "rules.yaml"
    text = f.read_text()
    assert "platform == 'cpu'" in text
    f.write_text(text.replace("platform == 'cpu'", "platfrom == 'cpu'", 1))
    return rules


def test_rules_that_do_not_load(tmp_path: Path) -> None:
    rules = broken_rules(tmp_path)
    with pytest.raises(dlroute.LoadError) as e:
        dlroute.load(str(rules))
    first = e.value.errors[0]
    assert e.value.code == first["code"] == "cel_type"
    assert first["position"]["file"].endswith("jax/v3/rules.yaml") and first["position"]["line"] > 0
    assert "platfrom" in first["source"]
    assert "did you mean" in first["message"] or first.get("hint")


def test_rules_directory(tmp_path: Path, dlroute_cli: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "jax", rules / "jax")
    f = rules / "jax" / "v3" / "rules.yaml"
    f.write_text(f.read_text().replace("      - {marker: oneapi, device: kDLOneAPI}\n",
                                       "      - {marker: oneapi, device: kDLOneAPI}\n"
                                       "      - {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}\n", 1))
    fork = {"platform": "gpu", "platform_version": "nvfork 1.0", "local_hardware_id": 0}
    assert dlroute.load().ruleset("jax").resolve(fork)["error"]["type"] == "BufferError"
    with dlroute.load(str(rules)) as e:
        assert e.ruleset("jax").resolve(fork)["device_type"] == "kDLCUDA"
        assert [e.ruleset("jax").resolve_json(json.dumps(fork))] == cli_lines(dlroute_cli, "jax", [json.dumps(fork)],
                                                                              str(rules))


def test_signed_bundle(tmp_path: Path, dlroute_cli: Path) -> None:
    key = tmp_path / "rules.key"
    subprocess.run([str(dlroute_cli), "bundle", "keygen", "-o", str(key)], check=True, capture_output=True)
    other = tmp_path / "other.key"
    subprocess.run([str(dlroute_cli), "bundle", "keygen", "-o", str(other)], check=True, capture_output=True)
    bundle = tmp_path / "rules.tar.gz"
    subprocess.run([str(dlroute_cli), "bundle", "build", str(ROOT / "rules"), "-o", str(bundle), "--sign", str(key),
                    "--revision", "test.1"], check=True, capture_output=True)
    with dlroute.load(str(bundle), key=f"{key}.pub") as e:
        assert e.ruleset("jax").resolve(SEED)["rule"] == "gpu-unknown-platform"
    pub = Path(f"{key}.pub").read_text().strip()
    with dlroute.load(str(bundle), key=pub) as e:  # the key's text, not its file
        assert e.ruleset("jax").ref == "jax@v3"
    with pytest.raises(dlroute.LoadError) as err:
        dlroute.load(str(bundle), key=f"{other}.pub")
    assert "sign" in str(err.value)
    with pytest.raises(dlroute.LoadError):
        dlroute.load(str(ROOT / "rules"), key=f"{key}.pub")  # a directory is not signed
    tampered = tmp_path / "tampered.tar.gz"
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tampered.write_bytes(bytes(data))
    with pytest.raises(dlroute.LoadError):
        dlroute.load(str(tampered))


def test_closed_engine() -> None:
    e = dlroute.load()
    rs = e.ruleset("jax")
    e.close()
    e.close()  # twice: nothing
    with pytest.raises(dlroute.LibraryError) as err:
        rs.resolve_json(json.dumps({"platform": "cpu", "platform_version": "x", "local_hardware_id": 5}))
    assert err.value.code == "closed"


def test_loading_twice() -> None:
    a, b = dlroute.load(), dlroute.load()
    ra, rb = a.ruleset("jax"), b.ruleset("jax")
    a.close()
    assert rb.resolve(SEED)["rule"] == "gpu-unknown-platform"
    with pytest.raises(dlroute.LibraryError):
        ra.explain(SEED)
    b.close()


def test_threads(engine: dlroute.Engine) -> None:
    rs = engine.ruleset("jax")
    inputs = [dict(SEED, local_hardware_id=i) for i in range(64)]
    want = [rs.resolve_json(json.dumps(i)) for i in inputs]
    bad: list[str] = []

    def work(seed: int) -> None:
        for n in range(2000):
            i = (seed * 7 + n) % len(inputs)
            line = json.dumps(inputs[i]) if n % 2 else json.dumps(inputs[i]) + " "
            if rs.resolve_json(line) != want[i]:
                bad.append(line)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_ctrl_c_during_calls() -> None:
    code = textwrap.dedent("""
        import json, sys, dlroute
        rs = dlroute.load().ruleset("jax")
        print("ready", flush=True)
        n = 0
        try:
            while True:
                rs.resolve_json(json.dumps({"platform": "gpu", "platform_version": "cuda %d" % n, "local_hardware_id": 0}))
                n += 1
        except KeyboardInterrupt:
            pass
        print("interrupted", rs.resolve({"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0})["rule"], flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert out.strip() == "interrupted cpu", err
    assert p.returncode == 0


def test_missing_library() -> None:
    done = run_python("import dlroute\ntry:\n dlroute.load()\nexcept dlroute.LibraryError as e:\n print(e.code, e)",
                      env={"DLROUTE_LIB": "/nonexistent/libdlroute.so"})
    assert done.stdout.startswith("no_library "), done.stderr
    assert "DLROUTE_LIB" in done.stdout


def test_library_of_another_abi(tmp_path: Path) -> None:
    src = tmp_path / "old.c"
    src.write_text("unsigned dlroute_abi_version(void) { return 99; }\n")
    lib = tmp_path / "libold.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    done = run_python("import dlroute\ntry:\n dlroute.load()\nexcept dlroute.LibraryError as e:\n print(e.code, e)",
                      env={"DLROUTE_LIB": str(lib)})
    assert done.stdout.startswith("abi_version "), done.stderr
    assert "99" in done.stdout and "version 1" in done.stdout


def test_builds_its_own_library_from_the_checkout(tmp_path: Path) -> None:
    # The contract: from a clone with Go and gcc, the package needs no other
    # step. With no $DLROUTE_LIB and an empty cache it builds the library.
    env = {k: v for k, v in os.environ.items() if k != "DLROUTE_LIB"}
    env.update(DLROUTE_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "python"))
    code = "import dlroute; print(dlroute.load().ruleset('jax').resolve_json('{\"platform\":\"cpu\",\"platform_version\":\"cpu\",\"local_hardware_id\":0}'))"
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "building libdlroute" in first.stderr
    assert json.loads(first.stdout)["device_type"] == "kDLCPU"
    built = list((tmp_path / "cache").glob("libdlroute-py-*.so"))
    assert len(built) == 1 and not list((tmp_path / "cache").glob("build-*"))
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stderr == "" and again.stdout == first.stdout


def test_pip_install(tmp_path: Path) -> None:
    # The documented install: `pip install ./python` builds libdlroute into
    # a py3-none-<platform> wheel with the package's metadata, and the
    # installed package, outside the checkout, uses it.
    import sysconfig
    import zipfile

    from dlroute._version import __version__

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    build_env = {k: v for k, v in os.environ.items() if k != "DLROUTE_LIB"}  # built here, not copied
    # pip builds in the tree (setuptools' python/build and egg-info), so a
    # second run of these tests beside this one (the other Python stack)
    # waits for this build to end: a lock on the directory, which leaves
    # no file behind.
    tree = os.open(ROOT / "python", os.O_RDONLY)
    try:
        fcntl.flock(tree, fcntl.LOCK_EX)
        pip = subprocess.run([str(venv / "bin" / "pip"), "wheel", "--no-deps", "--quiet", "--disable-pip-version-check",
                              "-w", str(tmp_path / "dist"), str(ROOT / "python")], capture_output=True, text=True,
                             timeout=900, env=build_env)
    finally:
        os.close(tree)  # and the lock with it
    assert pip.returncode == 0, pip.stdout + pip.stderr
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheel = tmp_path / "dist" / f"dlroute-{__version__}-py3-none-{platform}.whl"
    assert [p.name for p in (tmp_path / "dist").iterdir()] == [wheel.name]
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(f"dlroute-{__version__}.dist-info/METADATA").decode()
        assert "dlroute/_lib/libdlroute.so" in z.namelist()
    for field in ("Author: The dlroute maintainers", "Project-URL: Source, https://github.com/dlroute/dlroute",
                  "Classifier: Programming Language :: Python :: 3 :: Only", "Classifier: Typing :: Typed",
                  f"Version: {__version__}", "Requires-Python: >=3.10"):
        assert field in meta, field
    outside = {k: v for k, v in os.environ.items() if k not in ("DLROUTE_LIB", "PYTHONPATH")}
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                          str(wheel)], capture_output=True, text=True, timeout=900, env=outside)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("DLROUTE_LIB", "PYTHONPATH")}
    code = ("import dlroute, dlroute._native as n; "
            "print(dlroute.load().ruleset('jax').resolve({'platform': 'gpu', 'platform_version': '<unknown>', "
            "'local_hardware_id': 0})['rule']); print(n.library_path())")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rule, lib = done.stdout.split()
    assert rule == "gpu-unknown-platform"
    assert lib.startswith(str(venv)) and lib.endswith("dlroute/_lib/libdlroute.so")
