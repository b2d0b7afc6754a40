"""A user's program, for `mypy --strict` (tests/test_types.py): what the
top level's types say to a type checker. It also runs."""

from __future__ import annotations

from typing import Any, assert_type

import numpy as np

import dlroute

engine = dlroute.load()
jax_rules = engine.ruleset("jax")
d = jax_rules.resolve({"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0})
assert_type(d, dlroute.Decision)
if "error" in d:
    err: dlroute.DecidedException = d["error"]
    print(err["type"], err["message"])
else:
    name: dlroute.DeviceTypeName = d["device_type"]
    code: int = d["device_type_code"]
    print(name, code, d["rule"], d["ruleset"])

x = np.arange(4.0)
ex = dlroute.decide(x)
assert_type(ex.step, dlroute.Step)
assert_type(ex.decision, dlroute.Decision)
if ex.step == "copy_to_host":
    print("a host copy")

y = dlroute.from_dlpack(x, "numpy")
assert_type(y, np.ndarray[Any, Any])
print(y.sum())

cell = dlroute.ask(x, "numpy", copy=True)
assert_type(cell.outcome, dlroute.Outcome)
facts: dlroute.ProcessFacts = {"cuda_driver": False, "backends": ["cpu"]}
cell = engine.interop("jax", "torch", array={"platform": "gpu", "platform_version": "cuda 12030"}, process=facts)
cell = dlroute.ask(x, "torch", copy=None, process={"gpu_build": False})
print(cell.outcome, cell.error_type)
for r in engine.rulesets():
    assert_type(r, dlroute.RuleSetInfo)
    assert_type(r["default"], bool)

try:
    engine.ruleset("numpy@v9")
except dlroute.NoRuleSetError as e:
    assert_type(e.code, str)
    assert_type(e.hint, str | None)
