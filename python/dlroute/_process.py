"""The consumer's process facts (:class:`dlroute.ProcessFacts`) read from
the running interpreter, for :func:`dlroute.ask`: what each library's
``from_dlpack`` reads of the process, taken from the libraries already
imported (none is imported here; a library not imported leaves the rules'
defaults)."""

from __future__ import annotations

import sys
from typing import Any

from ._types import ProcessFacts

__all__ = ["facts_here", "FACTS"]

#: Every fact a :class:`~dlroute.ProcessFacts` may hold.
FACTS = frozenset(ProcessFacts.__annotations__)


def facts_here(library: str) -> ProcessFacts:
    """The facts of this process that ``library``'s ``from_dlpack`` reads
    (``"torch"``, ``"jax"``, ``"numpy"``), where it is imported."""
    if library == "torch":
        torch = sys.modules.get("torch")
        return {} if torch is None else _torch(torch)
    if library == "jax":
        jax = sys.modules.get("jax")
        return {} if jax is None else _jax(jax)
    if library == "numpy":
        return {"ml_dtypes": "ml_dtypes" in sys.modules}
    return {}


def _torch(torch: Any) -> ProcessFacts:
    hip = bool(getattr(torch.version, "hip", None))
    cuda = bool(getattr(torch.version, "cuda", None))
    xpu = getattr(torch, "xpu", None)
    backend = getattr(torch._C, "_get_privateuse1_backend_name", lambda: "privateuseone")()
    facts: ProcessFacts = {
        "gpu_build": cuda or hip,
        "git_build": getattr(torch.version, "git_version", "Unknown") != "Unknown",
        "xpu_build": bool(xpu is not None and getattr(xpu, "_is_compiled", lambda: False)()),
        "privateuse1_backend": backend != "privateuseone",
    }
    if cuda and not hip:
        # a CUDA build on a machine without a driver: every PyPI wheel on a CPU machine
        facts["cuda_driver"] = bool(torch.cuda.is_available())
    return facts


def _jax(jax: Any) -> ProcessFacts:
    from jax._src import xla_bridge  # jax is imported already: this costs nothing

    return {"backends": list(xla_bridge.backends()), "x64": bool(jax.config.read("jax_enable_x64"))}
