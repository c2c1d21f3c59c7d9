"""deductive_liability, issue 8 round 9: the card log's base rates, pinned where they were closed.

Red team round 10 read the findings from base rates that differed by branch without being
evidence: a double charge had a visit-day check-in capture in 93% of scenarios (others 42-50%)
and a same-amount second capture always (others about half); round 8c closed those but left a
statement paid twice in 60% of double charges, so the count of settled online sales read the
finding. A payment run twice is drawn by one law in every branch (refunded in every branch
but the double charge; round 9b: a fifth of accounts, the double charge's refunded run drawn by
the same law beside its unrefunded one), the check-in is drawn on its own stream, 30% of
practices post the desk's card payments as deposit batches, and item 29 is filled at 30%.
These checks run over 2,000 fresh salted seeds outside every split and fail if one of those
gaps comes back, or if the double charge stopped being the one second run left unrefunded.
The double charge's own pair (the evidence) raises its same-amount pairs and, where the portal
ran it, its settled sales: those counts are exempt for it."""

from __future__ import annotations

import collections
from statistics import mean
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_round7 import _records, _ref, salted_seeds
from tests.test_task_deductive_round7 import cents as _cents

TASK = "deductive_liability"
SALT = "round9-cardlog-7f3e"
FRESH = salted_seeds(SALT)


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]



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
# (round 9b: a double charge's unrefunded pair is its evidence - a refunded pair elsewhere is in
# a fifth of accounts - so the pair counts are exempt for it)
EVIDENCE = {"visit-day check-in": {"copay_not_credited"},
            "same-day same-amount pairs": {"duplicate_charge"},
            "online sale pairs": {"duplicate_charge"},
            "settled sales": {"duplicate_charge"},
            "visit-day capture no line cites": {"copay_not_credited", "duplicate_charge"},
            "item 29 blank": {"copay_not_credited"}}
# the counts the double charge's own pair raises are left out of the other findings' mean too
# (a copay never credited, which has no pair, is not compared with the pair's evidence)
PAIR_EVIDENCE = {k: {"duplicate_charge"} for k in (
    "same-day same-amount pairs", "online sale pairs", "settled sales",
    "visit-day capture no line cites")}


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
            b = mean(v for g, v in vals if g != f and g not in PAIR_EVIDENCE.get(k, set()))
            if abs(a - b) > TOL[k]:
                bad.append((k, f, round(a, 3), round(b, 3)))
    assert not bad, bad
    cnc = mean(v for f, v in rows["visit-day capture no line cites"] if f == "copay_not_credited")
    assert cnc >= 1, cnc


def test_the_double_charge_is_the_one_second_run_left_unrefunded(
        fresh: list[dict[str, Any]]) -> None:
    """A payment run twice (two settled runs of one amount within minutes on one card) is in
    some accounts of every finding; only in a double charge is one such run neither refunded nor
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
        assert f != "duplicate_charge" or v["run_twice"] is not None, sc["seed"]
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


# -- round 9b: the domain review's findings (F1 refunds, F2 the $1.00 clamp, F3 claim counts),
# the refund's time of day and the deposit batches' numbering -----------------------------------
def _refunds(sc: dict[str, Any]) -> int:
    return sum(t["type"] == "refund" for t in _records(sc)["processor_log"]["transactions"])


def test_refunds_follow_one_law_and_do_not_name_the_double_charge(
        fresh: list[dict[str, Any]]) -> None:
    """Round 9b, F1: with a refunded second run in every account, a log without a refund was
    a double charge's alone (precision 1.000, recall 0.745 on 2,000 fresh seeds). Refunded
    runs are now in a fifth to two fifths of accounts, the share of logs without a refund is
    within 0.08 in every finding, and "no refund" names a double charge no better than twice
    its base rate."""
    zero: dict[str, list[bool]] = collections.defaultdict(list)
    for sc in fresh:
        zero[sc["expected"]["finding"]].append(_refunds(sc) == 0)
    rates = {f: mean(v) for f, v in zero.items()}
    assert max(rates.values()) - min(rates.values()) <= 0.08 * 2, rates
    every = [v for vs in zero.values() for v in vs]
    with_refund = 1 - mean(every)
    assert 0.15 <= with_refund <= 0.40, with_refund
    base = len(zero["duplicate_charge"]) / len(every)
    precision = sum(zero["duplicate_charge"]) / max(1, sum(every))
    assert precision <= 2 * base, (precision, base)


def test_refunds_are_issued_at_their_own_time_of_day(fresh: list[dict[str, Any]]) -> None:
    """Round 9b: a refund carried the first run's time of day (37 of 144 to the second, the
    rest within the hour after it); it is now at its own time in business hours, so it shares
    the run's minute of the day no oftener than chance."""
    same = total = 0
    for sc in fresh:
        txns = _records(sc)["processor_log"]["transactions"]
        by_id = {t["transaction_id"]: t for t in txns}
        for t in txns:
            o = by_id.get(t.get("original_transaction_id") or "")
            if t["type"] == "refund" and o is not None:
                total += 1
                same += t["timestamp"][11:16] == o["timestamp"][11:16]
    assert total > 200 and same <= 0.02 * total, (same, total)


def test_deposit_batches_are_numbered_one_a_business_day(fresh: list[dict[str, Any]]) -> None:
    """Round 9b: batch numbers advanced by 3-40 a batch, slower than one batch a business day;
    between two of an account's batches they now advance by the business days between."""
    import datetime as dt

    from clarus_env.tasks.us_calendar import is_business_day
    pairs = 0
    for sc in fresh:
        ents = _records(sc)["payment_ledger"]["entries"]
        b = sorted((dt.date.fromisoformat(e["date"]), int(e["reference"][2:])) for e in ents
                   if e["description"].startswith("Front desk deposit batch"))
        for (d1, n1), (d2, n2) in zip(b, b[1:], strict=False):
            days = sum(is_business_day(d1 + dt.timedelta(days=i)) for i in range((d2 - d1).days))
            assert n2 - n1 == days, (sc["seed"], d1, n1, d2, n2)
            pairs += 1
    assert pairs > 100, pairs


def test_a_binding_cap_leaves_no_pile_of_one_dollar_coinsurance(
        fresh: list[dict[str, Any]]) -> None:
    """Round 9b, F2: the room under a binding cap was clamped to its floor, leaving exactly
    $1.00 of coinsurance on the EOB in 240 of 541 practice-side binding caps; the room is
    now redrawn, so $1.00 exactly is as rare as any other cent amount."""
    binds = ones = 0
    for sc in fresh:
        if not sc["variant"]["oop_binds"] or sc["expected"]["finding"] == "oop_max_exceeded":
            continue
        binds += 1
        lines = _records(sc)["eob"]["lines"]
        ones += sum(_cents(ln.get("coinsurance") or "0") for ln in lines) == 100
    assert binds > 200 and ones <= 0.02 * binds, (ones, binds)


def test_claims_counted_stay_plausible(fresh: list[dict[str, Any]]) -> None:
    """Round 9b, F3: copays filling the OOP total at one office copay a claim made the plan
    count 100-571 claims by autumn; office copays now fill at most 20 claims and pharmacy
    copays (up to $500 a fill) the rest, so no count passes 45."""
    counts = [_records(sc)["plan_document"]["member_accumulators"]["claims_counted_ytd"]
              for sc in fresh]
    assert max(counts) <= 45, max(counts)
