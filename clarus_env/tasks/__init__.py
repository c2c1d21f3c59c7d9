"""Task registry: one folder per task holding its generator, checks and oracle script."""

from __future__ import annotations

import importlib
from typing import Any

BILLING_TASKS = ("deductive_liability", "abductive_conflict", "adversarial_fabrication")
TASKS = (*BILLING_TASKS, "medical_coding")

_LOADED: dict[str, Any] = {}


def get_task(name: str) -> Any:
    """The task definition (``tasks/<name>/task.py``'s ``TASK``), imported on first use."""
    if name not in TASKS:
        raise KeyError(f"unknown task {name!r}; tasks: {', '.join(TASKS)}")
    if name not in _LOADED:
        try:
            module = importlib.import_module(f"{__name__}.{name}.task")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(f"{__name__}.{name}"):
                raise NotImplementedError(f"task {name!r} is not available yet") from None
            raise
        _LOADED[name] = module.TASK
    return _LOADED[name]
