"""The shapes of decisions, for type checkers: what ``RuleSet.resolve``
returns and what an exchange's step is."""

from __future__ import annotations

import enum
import sys
from typing import TYPE_CHECKING, Literal, TypedDict

if sys.version_info >= (3, 11) or TYPE_CHECKING:
    from typing import NotRequired
# Python 3.10 (the last numpy 1.22 has wheels for) has no NotRequired: the
# annotations below are strings (the __future__ import), read by type
# checkers only, so the package imports there too.


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


class ProcessFacts(TypedDict, total=False):
    """What the consumer's process is, as its rule set reads it: the facts
    ``from_dlpack`` reads of the running interpreter, not of the array.
    Each consumer reads those its rule set declares (``dlroute rules``
    lists them) and the rules' default stands for any left out.

    Attributes:
        gpu_build: torch was built with CUDA or ROCm.
        cuda_driver: ``torch.cuda.is_available()`` on a CUDA build: an
            NVIDIA driver is there (every PyPI wheel is a CUDA build).
        git_build: ``torch.version.git_version`` names a commit, as in
            every PyPI wheel; False for a build from a source tarball
            (Debian's python3-torch), whose internal asserts print other
            paths.
        xpu_build: torch was built with XPU (``torch.xpu._is_compiled()``).
        privateuse1_backend: an out-of-tree PrivateUse1 backend is
            registered with torch.
        current_device: ``torch.cuda.current_device()``.
        current_stream: the consumer's current stream pointer on the
            producer's device (torch, CuPy); 0 is the default stream.
        xla_on_cuda: ``torch_xla.real_devices()[0]`` names a CUDA device.
        backends: the platforms of jax's backends (``["cpu"]``, ``["cpu",
            "cuda"]``), what ``jax.dlpack.from_dlpack`` can place an array
            on.
        x64: ``jax_enable_x64`` is on.
        ml_dtypes: the ml_dtypes module is imported (numpy 2.5 then reads
            bfloat16 and float8 capsules).
    """

    gpu_build: bool
    cuda_driver: bool
    git_build: bool
    xpu_build: bool
    privateuse1_backend: bool
    current_device: int
    current_stream: int
    xla_on_cuda: bool
    backends: list[str]
    x64: bool
    ml_dtypes: bool


class NotPassed(enum.Enum):
    """The default of an argument that is passed on only where given:
    ``copy=None`` is a keyword passed as None, which a library that has no
    such keyword refuses (torch 1.13's ``from_dlpack``), and not the same
    as leaving ``copy`` out."""

    NOT_PASSED = "not passed"

    # by identity, in C: Enum's own hash is a Python call, and the sentinel
    # is in the key of every from_dlpack plan
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "<not passed>"


#: The default of ``copy`` and ``device`` where an explicit None is not
#: the same as leaving the argument out.
NOT_PASSED = NotPassed.NOT_PASSED
