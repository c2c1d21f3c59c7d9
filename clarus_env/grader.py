"""SQL checks over the episode database → the grade report and the episode score.

Each check is one query returning ``(passed, detail)``; the report lists every check so a
benchmark reader can see *why* a score is what it is, and re-running the queries on a stored
trajectory gives the same grade (``clarus regrade``).
"""

from __future__ import annotations

import re
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


# a quoted literal or identifier, a comment opener, a word, a run of spaces, or one character
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\]|--|/\*|\w+|\s+|.",
                    re.DOTALL)
_CLAUSE_END = frozenset(("FROM", "WHERE", "GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT"))
_RUN_SQL: dict[str, str] = {}


def _named_columns(sql: str) -> str:
    """``sql`` with an ``AS`` name after each result column, the same query otherwise: without
    one SQLite names a column by its expression's text, which Python's sqlite3 decodes into
    the cursor's ``description`` on every run (a check's expressions run to several KB: 40 KB
    a grade for adversarial_fabrication). The text comes back unchanged unless it has the
    plain shape read here for sure: one top-level SELECT (after an optional WITH), no
    compound SELECT or VALUES, no comment, no DISTINCT/ALL, no ``*``, no column named with
    AS. A column already named without AS (``expr name``) makes the named text a syntax
    error, never another query; ``grade`` then runs ``sql`` itself."""
    tokens = _TOKEN.findall(sql)
    depth, tops, start = 0, 0, -1
    for i, t in enumerate(tokens):
        if t in ("--", "/*", ";"):
            return sql
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif depth == 0 and t.upper() in ("SELECT", "UNION", "INTERSECT", "EXCEPT", "VALUES"):
            tops += 1
            start = i + 1 if t.upper() == "SELECT" else -1
    if tops != 1 or depth != 0 or start < 0:
        return sql
    ends: list[int] = []  # token index after each result column
    words: list[str] = []  # the column's top-level words so far
    for i in range(start, len(tokens) + 1):
        t = tokens[i] if i < len(tokens) else ","
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif depth == 0 and (t == "," or t.upper() in _CLAUSE_END):
            if not words or "AS" in words or (words[0] == "*" or "." in words[-2:-1]
                                               and words[-1] == "*"):
                return sql
            ends.append(i)
            words = []
            if t != ",":
                break
            continue
        if depth == 0 and not t.isspace():
            words.append(t.upper())
    if _first_word(tokens[start:]) in ("DISTINCT", "ALL"):
        return sql
    out, prev = [], 0
    for n, e in enumerate(ends):
        while e > prev and tokens[e - 1].isspace():  # the name goes before trailing space
            e -= 1
        out.append("".join(tokens[prev:e]) + f" AS _c{n}")
        prev = e
    return "".join(out) + "".join(tokens[prev:])


def _first_word(tokens: list[str]) -> str:
    return next((t.upper() for t in tokens if not t.isspace()), "")


def run_sql(sql: str) -> str:
    """The text ``grade`` runs for a check's ``sql``: ``_named_columns(sql)``, built once."""
    text = _RUN_SQL.get(sql)
    if text is None:
        text = _RUN_SQL[sql] = _named_columns(sql)
    return text


def _as_written(execute: Any, sql: str) -> Any:
    """The row of a check run as written, after its named form failed; its own error as the
    failed check's row when it fails too."""
    try:
        return execute(sql).fetchone()
    except sqlite3.Error as own:
        return (0, f"check query failed: {own}")


def grade(db: sqlite3.Connection, checks: list[Check]) -> dict[str, Any]:
    """Run every check on ``db``: the report (checks in order) and the episode score. Runs
    once per episode, so the loop keeps to locals and one cursor (``Connection.execute``
    makes one per query)."""
    rows = []
    passed = 0
    outcome_ok, outcome_seen = True, False
    execute = db.cursor().execute
    for c in checks:
        sql = c.sql
        text = _RUN_SQL.get(sql) or run_sql(sql)
        try:
            row = execute(text).fetchone()
        except sqlite3.Error as exc:  # a broken check is a bug, but never a crash mid-episode
            row = (_as_written(execute, sql) if text is not sql else
                   (0, f"check query failed: {exc}"))
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
