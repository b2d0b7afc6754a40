"""The tests' name for :mod:`dlroute.testing`, the GPU stand-in that ships
with the package."""

from dlroute.testing import *  # noqa: F401,F403
from dlroute.testing import __all__  # noqa: F401
