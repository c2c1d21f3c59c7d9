"""What a task supplies to the shared runtime: its generator, its checks, its limits, and the
oracle's script. Everything else (actions, rewards, budgets, the database) is shared."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..grader import Check

if TYPE_CHECKING:
    from ..reference import ReferenceBundle


class Generator(Protocol):
    def __call__(self, seed: int, rng: random.Random, ref: ReferenceBundle) -> dict[str, Any]:
        ...


class OracleScript(Protocol):
    def __call__(self, scenario: dict[str, Any]) -> list[dict[str, Any]]:
        ...


@dataclass(frozen=True)
class BillingTask:
    name: str
    difficulty: str
    api_call_budget: int
    cooldowns: dict[str, int]  # rate-limited tool -> steps it stays unavailable after a call
    generate: Generator
    checks: list[Check]
    oracle: OracleScript
    findings: tuple[str, ...]  # the task's vocabulary for write_diagnosis.finding
    appeal_reasons: tuple[str, ...] = ()
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_checks(self) -> int:
        return len(self.checks)
