"""The shapes of decisions, for type checkers: what ``RuleSet.resolve``
returns and what an exchange's step is."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


#: A DLPack device type, as dlpack.h names it.
DeviceTypeName = Literal[
    "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", "kDLVulkan", "kDLMetal", "kDLVPI", "kDLROCM",
    "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged", "kDLOneAPI", "kDLWebGPU", "kDLHexagon", "kDLMAIA",
    "kDLTrn", "kDLTPU", "kDLTPUHost", "kDLAscend",
]

#: What carrying out an exchange decision takes: export the producer's
#: buffer as it is, copy it into host memory and export the copy, or raise
#: the decided exception.
Step = Literal["in_place", "copy_to_host", "raise"]

#: A capsule's kind: ``dltensor`` (DLPack 0.x, which every consumer reads)
#: or ``dltensor_versioned`` (DLPack 1.x, with flags).
CapsuleKind = Literal["dltensor", "dltensor_versioned"]


class DecidedException(TypedDict):
    """An exception the rules decide: its Python type's name
    (``"BufferError"``) and its exact message."""

    type: str
    message: str


class Decision(TypedDict):
    """A decision, as ``dlroute resolve --json`` writes it: a device
    (``device_type``, ``device_type_code``, ``device_id``) or an exception
    (``error``), and the rule and rule set that decided. Exchange
    decisions add ``copy``, ``capsule`` and ``flags`` (dlpack.h names, such
    as ``"DLPACK_FLAG_BITMASK_IS_COPIED"``) where the rules decide them."""

    device_type: NotRequired[DeviceTypeName]
    device_type_code: NotRequired[int]
    device_id: NotRequired[int]
    copy: NotRequired[bool]
    capsule: NotRequired[CapsuleKind]
    flags: NotRequired[list[str]]
    error: NotRequired[DecidedException]
    rule: str
    ruleset: str


class RuleSetInfo(TypedDict):
    """One rule-set version of an engine (``Engine.rulesets()``)."""

    ref: str
    name: str
    version: str
    default: bool
