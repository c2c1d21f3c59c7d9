"""deductive_liability, issue 8 round 9: the card log's base rates, pinned where they were closed.

Red team round 10 read the findings from base rates that differed by branch without being
evidence: a double charge had a visit-day check-in capture in 93% of scenarios (others 42-50%)
and a same-amount second capture always (others about half); round 8c closed those but left a
statement paid twice in 60% of double charges, so the count of settled online sales read the
finding. Every account's log now holds one payment run twice by one law (refunded in every
branch but the double charge), the check-in is drawn on its own stream, 30% of practices post
the desk's card payments as deposit batches, and item 29 is filled at 30%. These checks run
over 2,000 fresh salted seeds outside every split and fail if one of those gaps comes back, or
if the double charge stopped being the one second run left unrefunded."""

from __future__ import annotations

import collections
import hashlib
from statistics import mean
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_round7 import _records, _ref

TASK = "deductive_liability"
SALT = "round9-cardlog-7f3e"
FRESH = sorted({3_000_000 + int(hashlib.sha256(f"{SALT}-{i}".encode()).hexdigest()[:8], 16)
                % 5_000_000 for i in range(2_000)})


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]


def _cents(v: str) -> int:
    return round(float(v) * 100)


def _card_counts(sc: dict[str, Any]) -> dict[str, float]:
    """The card log's counts the red team and the audit's count trees read."""
    rec = _records(sc)
    dos = rec["eob"]["date_of_service"]
    txns = rec["processor_log"]["transactions"]
    settled = [t for t in txns if t["type"] in ("capture", "sale") and t["status"] == "settled"]
    same = collections.Counter((t["timestamp"][:10], t["amount"]) for t in settled)
    refs = {r.strip() for e in rec["payment_ledger"]["entries"] for r in e["reference"].split(";")}
    visit_caps = [t for t in txns if t["type"] == "capture" and t["timestamp"][:10] == dos]
    return {
        "settled sales": sum(t["type"] == "sale" for t in settled),
        "online sale pairs": sum(n - 1 for (d, a), n in collections.Counter(
            (t["timestamp"][:10], t["amount"]) for t in settled if t["type"] == "sale").items()),
        "voids": sum(t["type"] == "void" for t in txns),
        "same-day same-amount pairs": sum(n - 1 for n in same.values()),
        "visit-day check-in": any(t["description"] == "Copay at check-in" for t in visit_caps),
        "visit-day capture no line cites": sum(t["transaction_id"] not in refs
                                               for t in visit_caps),
        "item 29 blank": _cents(rec["claim_record"]["patient_amount_paid"]) == 0,
    }


# how far a finding's mean may sit from the other findings' (HEAD before round 9: pairs 1.41
# vs 0.51-0.62, visit-day check-in 0.93 vs 0.42-0.50, uncited visit-day capture 0.90 / 1.27 vs
# 0.10-0.17, item 29 blank 0.48 vs 0.74; round 8c: settled sales 1.65 vs 1.01-1.16)
TOL = {"settled sales": 0.15, "online sale pairs": 0.12, "voids": 0.1,
       "same-day same-amount pairs": 0.15, "visit-day check-in": 0.15,
       "visit-day capture no line cites": 0.3, "item 29 blank": 0.2}
# a copay never credited needs the check-in it never credited: its visit-day capture, an
# uncited one at that, and a filled item 29 where one is filled, are its evidence or follow it
EVIDENCE = {"visit-day check-in": {"copay_not_credited"},
            "visit-day capture no line cites": {"copay_not_credited"}}


def test_card_log_counts_follow_one_law_in_every_finding(fresh: list[dict[str, Any]]) -> None:
    """Per finding, each count's mean is within its tolerance of the other findings' mean
    (the copay never credited exempt where the count is its own evidence); the uncited
    visit-day capture, its evidence, still stands apart from the rest there."""
    rows: dict[str, list[tuple[str, float]]] = collections.defaultdict(list)
    for sc in fresh:
        f = sc["expected"]["finding"]
        for k, v in _card_counts(sc).items():
            rows[k].append((f, float(v)))
    bad = []
    for k, vals in rows.items():
        for f in sorted({f for f, _ in vals} - EVIDENCE.get(k, set())):
            a = mean(v for g, v in vals if g == f)
            b = mean(v for g, v in vals if g != f)
            if abs(a - b) > TOL[k]:
                bad.append((k, f, round(a, 3), round(b, 3)))
    assert not bad, bad
    cnc = mean(v for f, v in rows["visit-day capture no line cites"] if f == "copay_not_credited")
    assert cnc >= 1, cnc


def test_the_double_charge_is_the_one_second_run_left_unrefunded(
        fresh: list[dict[str, Any]]) -> None:
    """Every account's log holds a payment run twice (two settled runs of one amount within
    minutes on one card); only in a double charge is one such run neither refunded nor
    voided, and it is the expected amount; the double charge's run falls on this visit's
    check-in copay or this statement's online payment, never on the older visit's."""
    where = collections.Counter()
    for sc in fresh:
        f, v = sc["expected"]["finding"], sc["variant"]
        txns = _records(sc)["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns
                  if t["type"] in ("refund", "void")}
        kept = [t for t in txns if t["type"] in ("capture", "sale")
                and t["status"] == "settled" and t["transaction_id"] not in undone]
        groups = collections.Counter((t["timestamp"][:10], t["amount"]) for t in kept)
        doubled = [a for (d, a), n in groups.items() if n > 1]
        assert v["run_twice"] is not None, sc["seed"]
        if f == "duplicate_charge":
            assert [_cents(a) for a in doubled] == [sc["expected"]["overcharge_cents"]], sc["seed"]
            assert v["duplicate_of"] in ("checkin_copay", "statement_payment"), sc["seed"]
            where[v["duplicate_of"]] += 1
        else:
            assert not doubled, (f, sc["seed"])
    assert min(where.values()) >= 0.25 * sum(where.values()), where


def test_deposit_batches_occur_in_every_finding(fresh: list[dict[str, Any]]) -> None:
    """About 30% of practices post the desk's card payments as one deposit-batch line per
    day, in every finding, and each batch line is exactly the day's credited desk payments;
    where the copay was never credited the visit day's batch (if any) leaves it out."""
    share: dict[str, list[bool]] = collections.defaultdict(list)
    for sc in fresh:
        f, rec = sc["expected"]["finding"], _records(sc)
        ents = rec["payment_ledger"]["entries"]
        batches = [e for e in ents if e["description"].startswith("Front desk deposit batch")]
        share[f].append(bool(batches))
        if not batches:
            continue
        txns = rec["processor_log"]["transactions"]
        undone = {t.get("original_transaction_id") for t in txns
                  if t["type"] in ("refund", "void")}
        dos = rec["eob"]["date_of_service"]
        for e in batches:
            day_caps = [t for t in txns if t["type"] == "capture" and t["status"] == "settled"
                        and t["transaction_id"] not in undone
                        and t["timestamp"][:10] == e["date"]]
            total = sum(_cents(t["amount"]) for t in day_caps)
            short = (f == "copay_not_credited"
                     or sc["variant"]["duplicate_of"] == "checkin_copay")
            if short and e["date"] == dos:
                assert _cents(e["amount"]) < total, (f, sc["seed"])
            else:
                assert _cents(e["amount"]) == total, (f, sc["seed"], e)
    rates = {f: mean(v) for f, v in share.items()}
    assert all(0.18 <= r <= 0.42 for r in rates.values()), rates
