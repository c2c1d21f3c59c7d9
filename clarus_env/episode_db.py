"""The per-episode SQLite database: what the agent did, and the facts the checks compare with.

One in-memory database per episode. The schema is built once per process into a template
and copied with SQLite's backup API, which is far cheaper than re-running DDL each reset.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

SCHEMA = """
CREATE TABLE steps(step INTEGER PRIMARY KEY, action_type TEXT, params TEXT, ok INTEGER,
                   error TEXT, reward REAL, authenticated INTEGER, api_call INTEGER);
CREATE TABLE artifacts(artifact_id TEXT PRIMARY KEY, type TEXT, party TEXT,
                       distractor INTEGER, key TEXT);
CREATE TABLE fetched(step INTEGER, artifact_id TEXT, type TEXT, duplicate INTEGER);
CREATE TABLE auth(step INTEGER, patient_id TEXT, ok INTEGER);
CREATE TABLE violations(step INTEGER, kind TEXT, detail TEXT);
CREATE TABLE diagnoses(step INTEGER, responsible_party TEXT, finding TEXT, amount_cents INTEGER,
                       summary TEXT);
CREATE TABLE drafts(step INTEGER, resolution_type TEXT, amount_cents INTEGER,
                    appeal_reason TEXT, body TEXT);
CREATE TABLE submissions(step INTEGER, draft_step INTEGER, resolution_type TEXT,
                         amount_cents INTEGER, appeal_reason TEXT);
CREATE TABLE citations(step INTEGER, kind TEXT, artifact_id TEXT, fetched INTEGER);
CREATE TABLE messages(step INTEGER, recipient TEXT, message_type TEXT, position TEXT,
                      body TEXT);
CREATE TABLE lookups(step INTEGER, kind TEXT, code_1 TEXT, code_2 TEXT, rule TEXT,
                     deadline_type TEXT, artifact_id TEXT);
CREATE TABLE counters(counter_id TEXT PRIMARY KEY, kind TEXT, arrived_step INTEGER);
CREATE TABLE counter_refutations(counter_id TEXT, artifact_id TEXT);
CREATE TABLE counter_responses(step INTEGER, counter_id TEXT, decision TEXT, rationale TEXT);
CREATE TABLE audit(step INTEGER, summary TEXT);
CREATE TABLE expected(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE state(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE emotions(step INTEGER, state TEXT, reason TEXT);
"""

_TEMPLATE: sqlite3.Connection | None = None


def new_episode_db() -> sqlite3.Connection:
    """A fresh in-memory database with the episode schema."""
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = sqlite3.connect(":memory:", check_same_thread=False)
        _TEMPLATE.executescript(SCHEMA)
    db = sqlite3.connect(":memory:", check_same_thread=False)
    _TEMPLATE.backup(db)
    return db


TABLES = tuple(line.split("(")[0].split()[-1] for line in SCHEMA.strip().splitlines()
               if line.startswith("CREATE TABLE"))


def clear(db: sqlite3.Connection) -> None:
    """Empty every table so the connection can hold the next episode.

    Reusing the connection (rather than opening a new database) keeps SQLite's prepared-
    statement cache warm: the checks and inserts are compiled once per env, not per episode.
    """
    for table in TABLES:
        db.execute(f"DELETE FROM {table}")


def expected_rows(expected: dict[str, Any]) -> list[tuple[str, str]]:
    """Flatten the expected outcome to key/value text rows the SQL checks can compare."""
    rows = []
    for k, v in sorted(expected.items()):
        if isinstance(v, str):
            rows.append((k, v))
        elif isinstance(v, bool):
            rows.append((k, "1" if v else "0"))
        elif isinstance(v, int | float):
            rows.append((k, str(v)))
        else:
            rows.append((k, json.dumps(v, sort_keys=True)))
    return rows


def load_scenario_facts(db: sqlite3.Connection, scenario: dict[str, Any]) -> None:
    db.executemany(
        "INSERT INTO artifacts VALUES (?,?,?,?,?)",
        [(a["artifact_id"], a["type"], a.get("party", "reference"), int(a.get("distractor", False)),
          a.get("key")) for a in (*scenario["artifacts"], *scenario.get("references", []))],
    )
    db.executemany("INSERT INTO expected VALUES (?,?)", expected_rows(scenario["expected"]))
    for c in scenario.get("counters", []):
        db.executemany("INSERT INTO counter_refutations VALUES (?,?)",
                       [(c["counter_id"], a) for a in c.get("refuted_by", [])])
