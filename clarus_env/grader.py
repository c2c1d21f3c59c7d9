"""SQL checks over the episode database → the grade report and the episode score.

Each check is one query returning ``(passed, detail)``; the report lists every check so a
benchmark reader can see *why* a score is what it is, and re-running the queries on a stored
trajectory gives the same grade (``clarus regrade``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

FAMILIES = ("process", "evidence", "outcome", "hygiene")


@dataclass(frozen=True)
class Check:
    """One graded property of an episode. ``family`` says what kind of property it is;
    ``outcome`` checks are the ones that compare the agent's answer with the scenario's
    expected outcome, and "all outcome checks passed" is the benchmark's headline metric
    (outcome accuracy), reported ahead of the seed's Laplace score."""

    id: str
    description: str
    sql: str  # one row: (passed 0/1, detail text)
    family: str = "process"

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"check {self.id}: family must be one of {FAMILIES}, "
                             f"got {self.family!r}")


def score(passed: int, total: int) -> float:
    """The seed's Laplace-smoothed score, strictly inside (0, 1)."""
    return (passed + 0.5) / (total + 1.0)


def grade(db: sqlite3.Connection, checks: list[Check]) -> dict[str, Any]:
    """Run every check on ``db``: the report (checks in order) and the episode score. Runs
    once per episode, so the loop keeps to locals and one cursor (``Connection.execute``
    makes one per query)."""
    rows = []
    passed = 0
    outcome_ok, outcome_seen = True, False
    execute = db.cursor().execute
    for c in checks:
        try:
            row = execute(c.sql).fetchone()
        except sqlite3.Error as exc:  # a broken check is a bug, but never a crash mid-episode
            row = (0, f"check query failed: {exc}")
        ok = bool(row and row[0])
        detail = row[1] if row and len(row) > 1 else None
        if detail is None:
            detail = "passed" if ok else "failed"
        passed += ok
        if c.family == "outcome":
            outcome_seen = True
            outcome_ok = outcome_ok and ok
        rows.append({"id": c.id, "description": c.description, "family": c.family,
                     "passed": ok, "detail": str(detail)})
    return {"score": round(score(passed, len(rows)), 6), "passed": passed, "total": len(rows),
            "outcome_correct": outcome_seen and outcome_ok, "checks": rows}
