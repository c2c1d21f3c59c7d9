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
    # what each finding and filing reason means, in words an agent reads (the prompt, the MCP
    # tool descriptions, /metadata): a vocabulary of bare names leaves a client that is not
    # the Python package to guess, or to learn it from its own invalid actions
    finding_meanings: dict[str, str] = field(default_factory=dict)
    appeal_reason_meanings: dict[str, str] = field(default_factory=dict)
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_checks(self) -> int:
        return len(self.checks)

    def vocabulary(self) -> dict[str, dict[str, str]]:
        """write_diagnosis.finding and draft_resolution.appeal_reason names, each with what it
        means, in the order the task lists them."""
        return {"finding": {f: self.finding_meanings[f] for f in self.findings},
                "appeal_reason": {r: self.appeal_reason_meanings.get(r, "")
                                  for r in self.appeal_reasons}}


def vocabulary_text(vocab: dict[str, str]) -> str:
    """``name: meaning; ...`` - how prompts and tool descriptions print a vocabulary."""
    return "; ".join(f"{k}: {v}" if v else k for k, v in vocab.items())
