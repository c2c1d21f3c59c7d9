"""SQL fragments every billing task's checks share: expected values, the answer in force at
the first filing, and citation precision.

Two rules of the benchmark live here so that no task can drift from them:

- **An answer is graded as given at the first filing.** Counter-arguments and feedback
  arrive after ``submit_resolution``; an agent that re-diagnoses after reading them is graded
  on the diagnosis it filed on, and the change itself fails the hold checks.
- **Citations are graded for precision as well as recall.** A scenario lists, under the
  expected key ``relevant_ids``, every record that supports its finding (and, per counter,
  ``counter_refutations`` rows for the records that refute it). An action whose citations
  are mostly irrelevant — the "cite every id seen" strategy — fails its citation checks.
"""

from __future__ import annotations

MIN_PRECISION_NUM, MIN_PRECISION_DEN = 1, 2  # at least half of the cited ids must be relevant


def exp(key: str) -> str:
    """The scenario's expected value for ``key`` (text, as the ``expected`` table stores it)."""
    return f"(SELECT value FROM expected WHERE key='{key}')"


def exp_list(key: str) -> str:
    """The members of an expected JSON list, as a subquery usable after ``IN``."""
    return f"(SELECT value FROM json_each({exp(key)}))"


FIRST_AUTH = "(SELECT MIN(step) FROM auth)"
FIRST_FILING = ("(SELECT MIN(step) FROM submissions WHERE resolution_type <> "
                "'withdraw_dispute')")
# the diagnosis the first filing rests on: the latest one written before it (or, with
# nothing filed yet, the latest one at all)
DX_STEP_AT_FILING = ("(SELECT MAX(step) FROM diagnoses WHERE step < "
                     f"COALESCE({FIRST_FILING}, 1e18))")
# (the runtime records at most one diagnosis and one submission a step, so these hold one row
# at most without a LIMIT, which would keep SQLite from folding them into the outer query)
DX_AT_FILING = f"(SELECT * FROM diagnoses WHERE step = {DX_STEP_AT_FILING})"
FIRST_SUBMISSION = f"(SELECT * FROM submissions WHERE step = {FIRST_FILING})"
# a later diagnosis that names another finding or party than the one filed on. The one filed
# on is looked up only for a diagnosis after the filing (most episodes have none): joined
# with ``DX_AT_FILING`` as a FROM subquery, SQLite built that row on every run (~3 µs of the
# ~7, and adversarial_fabrication's grade reads this 14 times)
DX_FLIPPED = (f"EXISTS(SELECT 1 FROM diagnoses d WHERE d.step > {FIRST_FILING} AND EXISTS("
              f"SELECT 1 FROM diagnoses f WHERE f.step = {DX_STEP_AT_FILING} AND "
              "(d.finding <> f.finding OR d.responsible_party <> f.responsible_party)))")


def n_cited(kind: str, step: str) -> str:
    return f"(SELECT COUNT(*) FROM citations WHERE kind='{kind}' AND step={step})"


def is_listed(value: str, key: str) -> str:
    """SQL truth value: ``value`` (never NULL) is a member of the expected JSON list ``key``.

    The same as ``value IN exp_list(key)`` for a list of ids, but a correlated EXISTS over
    the few members: SQLite answers ``IN (subquery)`` by building a temporary b-tree for
    the list on every run of the statement, which costs more than the scan it saves."""
    return f"EXISTS(SELECT 1 FROM json_each({exp(key)}) j WHERE j.value = {value})"


def n_cited_relevant(kind: str, step: str, relevant: str = "relevant_ids") -> str:
    return (f"(SELECT COALESCE(SUM({is_listed('artifact_id', relevant)}), 0) FROM citations "
            f"WHERE kind='{kind}' AND step={step})")


def precise(kind: str, step: str, relevant: str = "relevant_ids") -> str:
    """SQL truth value: at least half of the ids the action at ``step`` cited (as ``kind``)
    support it. No citations at all is not precise (it is not evidence either).

    The runtime stores each id once per action, so plain counts are distinct counts; one
    scan with ``SUM(id listed)`` is an order of magnitude cheaper in SQLite than two
    ``COUNT(DISTINCT)`` subqueries side by side."""
    return (f"(SELECT COUNT(*) > 0 AND {MIN_PRECISION_DEN} * "
            f"COALESCE(SUM({is_listed('artifact_id', relevant)}), 0) >= "
            f"{MIN_PRECISION_NUM} * COUNT(*) FROM citations WHERE kind='{kind}' "
            f"AND step={step})")


def precision_detail(kind: str, step: str, relevant: str = "relevant_ids") -> str:
    """SQL text: 'k of n cited record(s) support it' (never names which ones)."""
    return (f"(SELECT COALESCE(SUM({is_listed('artifact_id', relevant)}), 0) || ' of ' || "
            f"COUNT(*) || ' cited record(s) support it' FROM citations WHERE kind='{kind}' "
            f"AND step={step})")


def counter_precise(counter_kind: str, step: str) -> str:
    """Precision for a counter rebuttal: at least half of what it cites refutes that counter
    (``counter_refutations`` lists every record that does)."""
    cid = f"(SELECT counter_id FROM counters WHERE kind='{counter_kind}')"
    return (f"(SELECT COUNT(*) > 0 AND {MIN_PRECISION_DEN} * COALESCE(SUM(artifact_id IN "
            f"(SELECT artifact_id FROM counter_refutations WHERE counter_id={cid})), 0) >= "
            f"{MIN_PRECISION_NUM} * COUNT(*) FROM citations WHERE kind='counter:' || {cid} "
            f"AND step={step})")


def one_of(expr: str, values: str) -> str:
    """SQL truth value ``expr IN (values)`` for a constant list ``values`` (SQL text: quoted
    literals separated by commas), written as ORed equalities: the same three-valued result
    (SQL defines the one by the other), but SQLite builds a temporary b-tree for a list of 3+
    constants on every run of the statement, which cost a check that reads it 2-4 µs a grade."""
    items = [v.strip() for v in values.split(",")]
    if not all(len(v) >= 2 and v[0] == v[-1] == "'" and "'" not in v[1:-1] for v in items):
        raise ValueError(f"one_of({expr!r}): expected quoted literals, got {values!r}")
    return "(" + " OR ".join(f"{expr} = {v}" for v in items) + ")"
