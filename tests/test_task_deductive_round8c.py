"""deductive_liability, issue 8 round 8c: the card log's base rates of a double charge, pinned
where they were closed.

Red team round 10 read the check-in records' base rates, not their evidence: a double charge
always had a visit-day check-in copay capture (94% over 3,000 fresh seeds, against 43-53%
elsewhere), two same-amount check-in captures that day (90% against 9-18%: its own second
swipe came on top of the refunded one every branch draws) and the ledger's visit-day payment
line (95% against 63-70%). The check-in and the terminal's second run are now drawn by one law
in every branch before the branch's records, and a double charge of the check-in copay is that
same second run left unrefunded; where the law gave this visit none, the double charge is a
statement payment (in full or in part) the portal ran twice. These checks run over fresh seeds
under a private salt and fail if those rates part again, or if the double charge stopped being
visible as two settled payments with no refund."""

from __future__ import annotations

import collections
import datetime as dt
import os
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import SALT_ENV, compile_scenario

TASK = "deductive_liability"
FRESH = range(961_000, 963_000)  # outside every split, compiled under a private salt


def _records(sc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}


def _when(ts: str) -> dt.datetime:
    return dt.datetime.fromisoformat(ts.rstrip("Z"))


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    old = os.environ.get(SALT_ENV)
    os.environ[SALT_ENV] = "round8c-ded3-7f21"
    try:
        ref = open_reference()
        return [compile_scenario(TASK, s, ref) for s in FRESH]
    finally:
        if old is None:
            del os.environ[SALT_ENV]
        else:
            os.environ[SALT_ENV] = old


def _visit_day(sc: dict[str, Any]) -> dict[str, bool]:
    """The three single-record readings the red team took: a visit-day check-in copay capture
    in the card log, two of them at one amount, and a patient payment dated that day on the
    ledger."""
    rec = _records(sc)
    dos = rec["eob"]["date_of_service"]
    caps = [t for t in rec["processor_log"]["transactions"]
            if t["type"] in ("capture", "sale") and t["status"] == "settled"
            and t["timestamp"][:10] == dos and "Copay" in t["description"]]
    amounts = collections.Counter(t["amount"] for t in caps)
    return {"capture": bool(caps), "two": max(amounts.values(), default=0) >= 2,
            "ledger": any(e["type"] == "patient_payment" and e["date"] == dos
                          for e in rec["payment_ledger"]["entries"])}


def test_check_in_base_rates_of_a_double_charge(fresh: list[dict[str, Any]]) -> None:
    """Round 8c: over 2,000 fresh seeds a double charge's visit-day check-in capture, its
    two same-amount captures that day and its ledger payment line that day come near every
    other branch's rates (before: 0.94, 0.90 and 0.95 against at most 0.53, 0.18, 0.70)."""
    share: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    n = collections.Counter()
    for sc in fresh:
        group = "dup" if sc["expected"]["finding"] == "duplicate_charge" else "other"
        n[group] += 1
        for k, v in _visit_day(sc).items():
            share[group][k] += v
    rate = {g: {k: share[g][k] / n[g] for k in ("capture", "two", "ledger")} for g in n}
    assert n["dup"] >= 150, n
    assert rate["dup"]["capture"] <= rate["other"]["capture"] + 0.2, rate
    assert rate["dup"]["two"] <= 0.5 and rate["other"]["two"] >= 0.08, rate
    assert rate["dup"]["ledger"] <= rate["other"]["ledger"] + 0.15, rate


def test_a_double_charge_is_one_law_second_run_left_unrefunded(
        fresh: list[dict[str, Any]]) -> None:
    """The double charge of a check-in copay is the terminal's second run (drawn as every
    refunded one is) with no refund; a statement payment run twice is in full or in part.
    Every double charge shows as two settled same-amount payments minutes apart that nothing
    refunds or voids, and no other finding has such a pair."""
    kinds = collections.Counter()
    for sc in fresh:
        rec = _records(sc)
        txns = rec["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns
                  if t["type"] in ("refund", "void")}
        live = [t for t in txns if t["type"] in ("capture", "sale")
                and t["status"] == "settled" and t["transaction_id"] not in undone]
        pairs = [(a, b) for i, a in enumerate(live) for b in live[i + 1:]
                 if a["amount"] == b["amount"]
                 and abs((_when(b["timestamp"]) - _when(a["timestamp"])).total_seconds()) <= 600]
        if sc["expected"]["finding"] != "duplicate_charge":
            assert not pairs, sc["seed"]
            continue
        assert len(pairs) == 1, sc["seed"]
        v = sc["variant"]
        kinds[(v["duplicate_of"], v["payment_state"])] += 1
    by_of = collections.Counter(k[0] for k in kinds.elements())
    assert by_of["checkin_copay"] >= 40 and by_of["statement_payment"] >= 40, kinds
    assert any(k == ("statement_payment", "part") for k in kinds), kinds
