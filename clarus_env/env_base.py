"""What the billing and coding envs share: construction, the lazily opened reference bundle,
and picking the scenario an episode plays (bundled split row or on-demand compile)."""

from __future__ import annotations

import os
import random
from typing import Any

from .splits import seeds
from .tasks import get_task


class EnvBase:
    task_name: str

    def __init__(self, task: str, *, bundle_dir: str | None = None, split: str = "train",
                 reference: Any = None) -> None:
        self.task = get_task(task)
        self.task_name = task
        self.split = split
        seeds(split, task)  # validates the split name early
        self._bundle_dir = bundle_dir
        self._reference = reference
        self._draw = random.Random()
        self.scenario: dict[str, Any] | None = None
        self._done = True
        self._steps = 0

    @property
    def reference(self) -> Any:
        if self._reference is None:
            from .reference import open_reference

            self._reference = open_reference(self._bundle_dir)
        return self._reference

    def _begin(self, seed: int | None, scenario: dict[str, Any] | None) -> dict[str, Any]:
        """Load the episode's scenario (None seed: a random seed of the env's split)."""
        if scenario is None:
            if seed is None:
                seed = self._draw.choice(seeds(self.split, self.task_name))
            from .scenario_store import load_scenario

            scenario = load_scenario(self.task_name, seed, reference=self.reference,
                                     bundle_dir=self._bundle_dir)
        self.scenario = scenario
        self.seed = scenario["seed"]
        self.episode_id = episode_id()
        return scenario


# the version (4) and variant (10) bits of a random UUID, as ``uuid.uuid4`` sets them
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def episode_id() -> str:
    """A fresh episode id: ``uuid.uuid4().hex``, the same 122 random bits and format, without
    building a ``UUID`` object (its constructor's checks were ~1% of a full episode loop)."""
    return "%032x" % (int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET)
