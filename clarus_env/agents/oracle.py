"""The oracle: reads the expected outcome through a privileged path and plays the task's
intended path. It is the benchmark's ceiling and the proof that every check is passable."""

from __future__ import annotations

from typing import Any

from ..scenario_store import load_scenario
from ..tasks import get_task


class OracleAgent:
    privileged = True

    def __init__(self, task: str) -> None:
        self.task = task
        self._plan: list[dict[str, Any]] = []

    def reset(self, observation: Any, *, seed: int, scenario: dict[str, Any] | None = None
              ) -> None:
        scenario = scenario or load_scenario(self.task, seed)
        self._plan = list(get_task(self.task).oracle(scenario))

    def act(self, observation: Any) -> dict[str, Any]:
        if self._plan:
            return self._plan.pop(0)
        return {"action_type": "close_case", "parameters": {}}
