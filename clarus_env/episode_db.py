"""The per-episode SQLite database: what the agent did, and the facts the checks compare with.

One in-memory database per episode. The schema is built once per process into a template
and copied with SQLite's backup API, which is far cheaper than re-running DDL each reset.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

SQLITE_CONFIG_MEMSTATUS = 9


def _without_memory_statistics() -> bool:
    """Turn off SQLite's memory statistics (``SQLITE_CONFIG_MEMSTATUS``), which SQLite's own
    list of recommended compile-time options turns off too: with them on, every allocation
    SQLite makes takes a global mutex and updates counters, ~5% of an episode here (a grade
    runs a few thousand allocations). Nothing in Python reads them (``sqlite3`` exposes no
    ``sqlite3_status`` or soft heap limit). SQLite takes configuration only before it is
    initialized, and importing Python's ``sqlite3`` initializes it, so this runs before
    that import and does nothing when ``sqlite3`` is already loaded; the library is opened
    by the soname ``_sqlite3`` links to, and if that were another copy it would only
    configure that copy. True when SQLite accepted the setting."""
    if "_sqlite3" in sys.modules or sys.platform != "linux":
        return False
    import ctypes

    try:
        lib = ctypes.CDLL("libsqlite3.so.0")
        return int(lib.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0))) == 0
    except (OSError, AttributeError):  # no shared libsqlite3 (Python's own copy is used)
        return False


MEMSTATUS_OFF = _without_memory_statistics()

import sqlite3  # noqa: E402  (after the configuration above, which must come first)

# ``expected`` and ``counters`` are WITHOUT ROWID: the checks read them by key dozens of
# times a grade, and a rowid table with a text key pays two b-tree searches a read (index,
# then row), these one (each ~7-10% of an adversarial grade). ``expected`` is written in
# key order anyway; ``counters`` now lists in counter_id order, not arrival order
# (``arrived_step`` holds that)
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
CREATE TABLE counters(counter_id TEXT PRIMARY KEY, kind TEXT, arrived_step INTEGER) WITHOUT ROWID;
CREATE TABLE counter_refutations(counter_id TEXT, artifact_id TEXT);
CREATE TABLE counter_responses(step INTEGER, counter_id TEXT, decision TEXT, rationale TEXT);
CREATE TABLE audit(step INTEGER, summary TEXT);
CREATE TABLE expected(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE state(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE emotions(step INTEGER, state TEXT, reason TEXT);
"""

_TEMPLATE: sqlite3.Connection | None = None
# The server resets episodes from a thread pool. Built lazily without a lock, two first resets
# in a fresh worker could both see no template, and one could copy from a template the other is
# still building (no tables yet: an OperationalError, a 500) — the likely cause of one 500 seen
# when a replacement worker took over a killed one's sessions. One lock around building and
# copying; uncontended it costs well under a microsecond of a ~30 µs reset.
_TEMPLATE_LOCK = threading.Lock()

# ``json.dumps(v, sort_keys=True)``, byte for byte, without building an encoder per call
canonical = json.JSONEncoder(sort_keys=True).encode


# 1 KiB pages: an episode writes a few rows to each of a dozen tables, and SQLite copies every
# page a transaction first touches into the rollback journal (and back on ROLLBACK); at the
# default 4 KiB most of each copy is empty page (~10% of an episode's writes)
PAGE_SIZE = 1024


def new_episode_db() -> sqlite3.Connection:
    """A fresh in-memory database with the episode schema."""
    global _TEMPLATE
    # room for the checks and every multi-row INSERT text in the prepared-statement cache
    db = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=512)
    # the checks' DISTINCT, IN (subquery) and json_each steps build ephemeral b-trees; kept
    # in memory SQLite gives each a small page cache, where the default (temp files, opened
    # lazily) allocates ~80 KB per b-tree: a check holding 4+ of them open at once had glibc
    # return and re-fault that memory on every run (60-80 page faults, ~150 µs a check)
    db.execute("PRAGMA temp_store=MEMORY")
    with _TEMPLATE_LOCK:
        if _TEMPLATE is None:
            _TEMPLATE = sqlite3.connect(":memory:", check_same_thread=False)
            _TEMPLATE.execute(f"PRAGMA page_size={PAGE_SIZE}")
            _TEMPLATE.executescript(SCHEMA)
        _TEMPLATE.backup(db)
    return db


TABLES = tuple(line.split("(")[0].split()[-1] for line in SCHEMA.strip().splitlines()
               if line.startswith("CREATE TABLE"))


# table -> (how its rows are written, columns per row)
_VERB = {"state": "INSERT OR REPLACE"}  # state is key -> value: a later row replaces
COLUMNS = {line.split("(")[0].split()[-1]: line.split("(", 1)[1].count(",") + 1
           for line in " ".join(SCHEMA.split()).replace("; ", ";\n").splitlines()
           if line.startswith("CREATE TABLE")}
_CHUNK = 64  # rows per statement at most (64 x 8 columns is far below SQLite's 32766)


def _values_sql(table: str, n: int) -> str:
    row = f"({','.join('?' * COLUMNS[table])})"
    return f"{_VERB.get(table, 'INSERT')} INTO {table} VALUES {','.join([row] * n)}"


_SQL: dict[tuple[Any, ...], str] = {}


def insert_rows(db: sqlite3.Connection | sqlite3.Cursor, table: str,
                rows: list[tuple[Any, ...]]) -> None:
    """Write ``rows`` in order as multi-row INSERTs: one statement runs many rows for
    roughly the cost of one, where ``executemany`` pays a statement's overhead per row. One
    statement per table (up to 64 rows): a text per row count is compiled once per
    connection and stays in its prepared-statement cache, where splitting counts into powers
    of two cost a second statement in about half the writes."""
    i, n = 0, len(rows)
    while i < n:
        k = min(_CHUNK, n - i)
        sql = _SQL.get((table, k))
        if sql is None:
            sql = _SQL[(table, k)] = _values_sql(table, k)
        db.execute(sql, [v for row in rows[i:i + k] for v in row])
        i += k


# a ``steps`` row as the runtime records it: (step, action_type, params, ok, error, reward,
# authenticated, api_call). ``ok`` is always ``error IS NULL`` and ``api_call`` always 1, so
# SQL derives them from one bound ``error`` (numbered parameters let a row use it twice):
# each bound value costs Python's sqlite3 ~0.1-0.3 µs, a None the most
def _steps_sql(n: int) -> str:
    rows = []
    for j in range(n):
        a = j * 6
        rows.append(f"(?{a + 1},?{a + 2},?{a + 3},?{a + 4} IS NULL,?{a + 4},?{a + 5},?{a + 6},1)")
    return f"INSERT INTO steps VALUES {','.join(rows)}"


def insert_steps(db: sqlite3.Connection | sqlite3.Cursor, rows: list[tuple[Any, ...]]) -> None:
    """Write recorded ``steps`` rows (parameters already JSON) in order."""
    for i in range(0, len(rows), _CHUNK):
        chunk = rows[i:i + _CHUNK]
        key = ("steps", len(chunk))
        sql = _SQL.get(key)
        if sql is None:
            sql = _SQL[key] = _steps_sql(len(chunk))
        db.execute(sql, [v for r in chunk for v in (r[0], r[1], r[2], r[4], r[5], r[6])])


# -- grading writes only the columns some check names ---------------------------------------
COLUMN_NAMES = {line.split("(")[0].split()[-1]:
                tuple(c.split()[0] for c in line.split("(", 1)[1].rsplit(")", 1)[0].split(","))
                for line in " ".join(SCHEMA.split()).replace("; ", ";\n").splitlines()
                if line.startswith("CREATE TABLE")}
# written whole: keyed tables without rowid (``expected``, ``counters``) and ``state``,
# whose INSERT OR REPLACE may replace a row (a rowid-addressed fill-in needs plain inserts)
_WHOLE = frozenset(t for t in COLUMN_NAMES if t in _VERB or
                   re.search(rf"CREATE TABLE {t}\([^;]*\) WITHOUT ROWID", SCHEMA))
# SQL that may read a row's columns without naming them: then every column is written
_UNNAMED = re.compile(r"\b(UNION|EXCEPT|INTERSECT|NATURAL)\b|DISTINCT\s+\*|\w\.\*|"
                      r"\b(ORDER|GROUP)\s+BY\s+\d", re.IGNORECASE)
_STAR = re.compile(r"SELECT\s+\*", re.IGNORECASE)
# ``SELECT *`` from one table (then that table is written whole); any other is _UNNAMED
_STAR_FROM = re.compile(r"SELECT\s+\*\s+FROM\s+(\w+)(?:\s+(?:AS\s+)?\w+)?\s*"
                        r"(?:WHERE\b|LIMIT\b|ORDER\b|\)|$)", re.IGNORECASE)


def graded_columns(sqls: list[str]) -> dict[str, tuple[int, ...]]:
    """table -> the positions of the columns the checks ``sqls`` name, for every table where
    grading may leave the other columns NULL (filled in for a reader of the database).

    Binding a value is most of what a row costs Python's sqlite3, and many columns are never
    graded (message bodies, lookups' codes, steps' rewards, artifacts' types). A column is
    read when its name appears as a word in any check; a table read by ``SELECT * FROM
    table`` keeps every column, as does every table when a check could reach columns
    unnamed any other way (``t.*``, ``SELECT *`` over a join or subquery, set operations,
    NATURAL joins, ``DISTINCT *``, ``ORDER/GROUP BY <n>``)."""
    text = " ".join(sqls)
    starred = [m.group(1) for m in _STAR_FROM.finditer(text)]
    if _UNNAMED.search(text) or len(starred) != len(_STAR.findall(text)):
        return {}
    plan: dict[str, tuple[int, ...]] = {}
    for table, names in COLUMN_NAMES.items():
        if table in _WHOLE or table in starred:
            continue
        keep = tuple(i for i, name in enumerate(names)
                     if i == 0 or re.search(rf"\b{name}\b", text))
        if len(keep) < len(names):
            plan[table] = keep
    return plan


def insert_columns(db: sqlite3.Cursor, table: str, rows: list[tuple[Any, ...]],
                   keep: tuple[int, ...]) -> list[int]:
    """Write ``rows`` with only the columns at ``keep`` (NULL in the others); the rowids
    they got, in order (a multi-row INSERT numbers its rows consecutively)."""
    rowids: list[int] = []
    width = len(COLUMN_NAMES[table])
    for i in range(0, len(rows), _CHUNK):
        chunk = rows[i:i + _CHUNK]
        key = (table, keep, len(chunk))
        sql = _SQL.get(key)
        if sql is None:
            row = f"({','.join('?' if j in keep else 'NULL' for j in range(width))})"
            sql = _SQL[key] = f"INSERT INTO {table} VALUES {','.join([row] * len(chunk))}"
        db.execute(sql, [r[j] for r in chunk for j in keep])
        last = db.lastrowid
        rowids.extend(range(last - len(chunk) + 1, last + 1))
    return rowids


def fill_columns(db: sqlite3.Cursor, table: str, rows: list[tuple[Any, ...]],
                 rowids: list[int], keep: tuple[int, ...]) -> None:
    """Write the columns ``insert_columns`` left NULL: the rows become what a whole-row
    INSERT would have written."""
    names = COLUMN_NAMES[table]
    rest = [j for j in range(len(names)) if j not in keep]
    sets = ", ".join(f"{names[j]} = ?" for j in rest)
    db.executemany(f"UPDATE {table} SET {sets} WHERE rowid = ?",
                   [(*[r[j] for j in rest], rowid) for r, rowid in zip(rows, rowids, strict=True)])


def clear(db: sqlite3.Connection) -> None:
    """Empty every table so the connection can hold the next episode.

    Reusing the connection (rather than opening a new database) keeps SQLite's prepared-
    statement cache warm: the checks and inserts are compiled once per env, not per episode.
    """
    for table in TABLES:
        db.execute(f"DELETE FROM {table}")


def expected_rows(expected: dict[str, Any], keys: frozenset[str] | None = None
                  ) -> list[tuple[str, str]]:
    """Flatten the expected outcome to key/value text rows the SQL checks can compare (only
    ``keys``' rows when given)."""
    rows = []
    # only the asked-for keys are sorted (a grade reads ~15 of a scenario's ~40)
    items = sorted(expected.items() if keys is None else
                   [(k, expected[k]) for k in keys if k in expected])
    for k, v in items:
        if isinstance(v, str):
            rows.append((k, v))
        elif isinstance(v, bool):
            rows.append((k, "1" if v else "0"))
        elif isinstance(v, int | float):
            rows.append((k, str(v)))
        else:
            rows.append((k, canonical(v)))
    return rows


def fact_rows(scenario: dict[str, Any], table: str, keys: frozenset[str] | None = None
              ) -> list[tuple[Any, ...]]:
    """The rows of one of the scenario's tables (artifacts, expected, counter_refutations);
    ``keys`` limits ``expected`` to those keys."""
    if table == "artifacts":
        return [(a["artifact_id"], a["type"], a.get("party", "reference"),
                 int(a.get("distractor", False)), a.get("key"))
                for a in (*scenario["artifacts"], *scenario.get("references", []))]
    if table == "expected":
        return expected_rows(scenario["expected"], keys)
    if table == "counter_refutations":
        return [(c["counter_id"], a) for c in scenario.get("counters", [])
                for a in c.get("refuted_by", [])]
    raise KeyError(f"{table} is not a scenario table")


def load_scenario_facts(db: sqlite3.Connection, scenario: dict[str, Any]) -> None:
    for table in ("artifacts", "expected", "counter_refutations"):
        insert_rows(db, table, fact_rows(scenario, table))
