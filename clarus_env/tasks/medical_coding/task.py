"""The medical_coding task: three seeded cases per episode, graded by the deterministic reward."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from . import notes

DESCRIPTION = ("Read clinical notes and assign ICD-10-CM (primary + secondary) and CPT codes; "
               "three cases (easy, medium, hard) per episode in seeded random order.")


@dataclass(frozen=True)
class CodingTask:
    name: str = "medical_coding"
    kind: str = "coding"
    difficulty: str = "mixed"
    schema: str = "coding_episode.schema.json"
    api_call_budget: int = 33  # 3 submissions + up to 30 lookups
    description: str = DESCRIPTION
    n_checks: int = 3  # one per case: exact match

    def generate(self, seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
        """The episode's cases, drawn from ``rng`` -- ``compile_scenario``'s fresh
        ``rng_for(task, seed)``, the stream ``notes.generate_episode(seed, ref)`` seeds itself."""
        episode = notes.generate_episode(seed, ref, rng)
        return {"order": episode["order"], "cases": episode["cases"]}

    def oracle(self, scenario: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"action_type": "submit_codes", "parameters": dict(c["expected"])}
                for c in scenario["cases"]]


TASK = CodingTask()
