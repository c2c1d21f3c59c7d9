"""deductive_liability, issue 8 round 8: the ledger cue of a duplicate posting, pinned where it
was closed.

A duplicate posting was a second unreversed charge row on a claim line: one row more than any
legitimate posting leaves, so counting the ledger's line-charge rows less its reversals read
the finding (the audit's word-count trees, the round-7 red team's row counts). The duplicate
now adds no row: the line is keyed at two units in its one charge row (the claim went out at
one), and where the practice wrote it down, its CO-45 row covers both units. These checks run
over fresh seeds outside every split and fail if the row cue comes back, or if the duplicate
stopped being visible by matching the ledger's amounts against the EOB."""

from __future__ import annotations

import collections
from functools import cache
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_liability import _branch_means_agree as _apart

TASK = "deductive_liability"
FRESH = range(950_000, 950_600)  # outside every split


@cache
def _ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]


def _records(sc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}


def _cents(v: str) -> int:
    return round(float(v) * 100)


def _own_line_rows(sc: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """This visit's claim-line rows on the ledger: the charge rows less the reversals (each
    less the EOB's lines), and per line reference the unreversed charge total (cents)."""
    rec = _records(sc)
    prefix = f"{rec['eob']['claim_id']} line "
    rows = [e for e in rec["payment_ledger"]["entries"] if e["reference"].startswith(prefix)]
    charges = [e for e in rows if e["type"] == "charge"]
    reversals = [e for e in rows if e["type"] == "adjustment"
                 and "reversal" in e["description"].lower()]
    net: dict[str, int] = collections.Counter()
    for e in charges:
        net[e["reference"]] += _cents(e["amount"])
    for e in reversals:
        net[e["reference"]] -= _cents(e["amount"])
    return len(charges) - len(reversals) - len(rec["eob"]["lines"]), dict(net)


def test_a_duplicate_posting_adds_no_ledger_row(fresh: list[dict[str, Any]]) -> None:
    """Per finding, the mean number of this visit's line-charge rows less reversals less EOB
    lines, and of all ledger rows, is within three standard errors of the other findings'
    (a duplicate posting was +1 row in every scenario before)."""
    rows = [(sc["expected"]["finding"], _own_line_rows(sc)[0]) for sc in fresh]
    assert not _apart(rows), _apart(rows)
    assert {v for _, v in rows} == {0}, collections.Counter(rows)
    n_rows = [(sc["expected"]["finding"], len(_records(sc)["payment_ledger"]["entries"]))
              for sc in fresh]
    assert not [r for r in _apart(n_rows) if r[0] == "duplicate_posting"], _apart(n_rows)


def test_a_duplicate_posting_shows_by_matching_amounts_only(
        fresh: list[dict[str, Any]]) -> None:
    """The evidence stays: on a duplicate posting one line's unreversed charges total twice
    the EOB's billed charge for it; on every other finding each line's total is the EOB's
    billed charge exactly."""
    seen = collections.Counter()
    for sc in fresh:
        rec = _records(sc)
        billed = {f"{rec['eob']['claim_id']} line {ln['line']}": _cents(ln["billed"])
                  for ln in rec["eob"]["lines"]}
        net = _own_line_rows(sc)[1]
        doubled = [r for r, b in billed.items() if net.get(r) == 2 * b]
        exact = all(net.get(r) == b for r, b in billed.items())
        f = sc["expected"]["finding"]
        seen[f] += 1
        if f == "duplicate_posting":
            line = sc["variant"]["duplicate_posted_line"]
            assert doubled == [f"{rec['eob']['claim_id']} line {line}"], sc["case"]["case_id"]
        else:
            assert exact, (f, sc["case"]["case_id"])
    assert seen["duplicate_posting"] >= 30, seen


def _visit_day_copays(sc: dict[str, Any]) -> tuple[int, int]:
    """This visit's check-in copay captures on the card log, and those of them not refunded."""
    rec = _records(sc)
    txns = rec["processor_log"]["transactions"]
    dos = rec["eob"]["date_of_service"]
    refunded = {t.get("original_transaction_id") for t in txns if t["type"] == "refund"}
    caps = [t for t in txns if t["type"] == "capture" and t["status"] == "settled"
            and t["description"] == "Copay at check-in" and t["timestamp"][:10] == dos]
    return len(caps), sum(t["transaction_id"] not in refunded for t in caps)


def test_two_visit_day_copay_captures_are_no_double_charge_by_themselves(
        fresh: list[dict[str, Any]]) -> None:
    """Issue 8, round 8 (gb_counts, red team round 7: two check-in copay captures on the visit
    day were duplicate_charge's alone): a terminal that ran the card twice and refunded the
    second occurs in every branch that collected the copay (30%), so other findings show two
    such captures more often than the double charge does (85 against 59 in these seeds; it
    was 0 against all before); only a second capture without its refund is one."""
    two = collections.Counter()
    for sc in fresh:
        n, kept = _visit_day_copays(sc)
        f = sc["expected"]["finding"]
        if n >= 2:
            two["duplicate_charge" if f == "duplicate_charge" else "other"] += 1
        if f == "duplicate_charge" and sc["variant"].get("duplicate_of") == "checkin_copay":
            assert kept == 2, sc["case"]["case_id"]
        else:
            assert kept <= 1, (f, sc["case"]["case_id"])
    assert two["other"] >= 1.2 * two["duplicate_charge"] > 0, two
