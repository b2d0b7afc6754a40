"""The runner's libraries by name: each one's :class:`~dlroute.check._base.Checker`."""

from __future__ import annotations

from typing import Callable

from ._arrays import CupyChecker, NumpyChecker, TorchChecker
from ._base import Checker
from ._jax import JaxChecker
from ._array_api_strict import ArrayApiStrictChecker
from ._onnxruntime import OnnxruntimeChecker
from ._pyarrow import PyarrowChecker
from ._mlx import MlxChecker
from ._paddle import PaddleChecker
from ._tensorflow import TensorflowChecker
from ._warp import WarpChecker

#: The checker of each library :data:`~dlroute.check.LIBRARIES` names.
CHECKERS: dict[str, Callable[[], Checker]] = {"numpy": NumpyChecker, "torch": TorchChecker, "jax": JaxChecker,
                                              "cupy": CupyChecker,
                                              "pyarrow": PyarrowChecker,
                                              "array_api_strict": ArrayApiStrictChecker,
                                              "onnxruntime": OnnxruntimeChecker,
                                              "tensorflow": TensorflowChecker,
                                              "paddle": PaddleChecker,
                                              "mlx": MlxChecker,
                                              "warp": WarpChecker}
