"""Clarus: agent arenas for US healthcare billing on real CMS data.

Importing the package is cheap on purpose (research loops import it in every worker):
heavy modules such as pyarrow load only when a bundle is first opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .tasks import TASKS

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .client import ClarusClient
    from .env import ClarusEnv, Observation, StepResult, make
    from .reference import ReferenceBundle, open_reference
    from .scenario import compile_scenario

__all__ = ["TASKS", "ClarusClient", "ClarusEnv", "Observation", "ReferenceBundle", "StepResult",
           "compile_scenario", "make", "open_reference", "__version__"]

_LAZY = {"ClarusClient": "client", "ReferenceBundle": "reference", "open_reference": "reference",
         "ClarusEnv": "env", "Observation": "env", "StepResult": "env", "make": "env",
         "compile_scenario": "scenario"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'clarus_env' has no attribute {name!r}")
