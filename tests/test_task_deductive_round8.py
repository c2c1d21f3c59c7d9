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
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_liability import _branch_means_agree as _apart
from tests.test_task_deductive_round7 import _records, _ref

TASK = "deductive_liability"
FRESH = range(950_000, 950_600)  # outside every split


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]


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
        if f == "duplicate_posting" and sc["variant"]["duplicate_posted_item"]:
            # (round 13: a self-pay item keyed twice; the claim's lines are as billed)
            assert exact, (f, sc["case"]["case_id"])
        elif f == "duplicate_posting":
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


# -- round 8b: the domain review's findings (salt billrev8-h10-780cc4), pinned over fresh seeds

def test_accumulators_stop_at_their_limits_and_keep_the_reading_before(
        fresh: list[dict[str, Any]]) -> None:
    """F1: the plan of record's totals ran past the deductible in 32/44 stale deductibles and
    past the OOP maximum in 40/47 ignored caps, never elsewhere. Every printed total (the plan
    of record's, its history's, each EOB's) now stops at its limit in every branch; a snapshot
    taken after the EOB's processing carries the reading before it, dated before processing,
    and the insurer's error shows only there: the deductible met before the claim leaves less
    room than the EOB applied, or the OOP room before is short of the EOB's share."""
    shown = collections.Counter()
    for sc in fresh:
        rec, f = _records(sc), sc["expected"]["finding"]
        plan, eob = rec["plan_document"], rec["eob"]
        acc = plan["member_accumulators"]
        ded, oop = _cents(plan["deductible"]), _cents(plan["out_of_pocket_max"])
        for a in (acc, *acc.get("history", []), eob["accumulators"]):
            assert _cents(a["deductible_met_ytd"]) <= ded, (f, sc["seed"])
            assert _cents(a["oop_met_ytd"]) <= oop, (f, sc["seed"])
        after = acc["as_of"] >= eob["processed_date"]
        assert after == ("history" in acc), sc["seed"]
        prior = acc["history"][-1] if after else acc
        assert prior["as_of"] < eob["processed_date"]
        counts = plan["copays_count_toward_deductible"]
        applied = sum(_cents(ln["deductible"]) for ln in eob["lines"])
        copays = sum(_cents(ln["copay"]) for ln in eob["lines"]) if counts else 0
        room = ded - _cents(prior["deductible_met_ytd"])
        over_ded = applied > 0 and applied > max(0, room - copays)
        over_oop = _cents(eob["totals"]["patient_responsibility"]) > oop - _cents(
            prior["oop_met_ytd"])
        if f == "deductible_already_met":
            assert over_ded, sc["seed"]
        elif f == "oop_max_exceeded":
            assert over_oop, sc["seed"]
        elif not (f == "coinsurance_on_billed" and sc["variant"]["error_side"] == "insurer"):
            assert not over_ded and not over_oop, (f, sc["seed"])
        shown[f] += 1
    assert shown["deductible_already_met"] >= 20 and shown["oop_max_exceeded"] >= 20, shown


def test_a_duplicate_posting_cites_the_eob(fresh: list[dict[str, Any]]) -> None:
    """F6: the two-unit row shows only against the EOB's billed charge, so the EOB is among
    the records that show a duplicate posting (citation precision is graded against them)."""
    n = 0
    for sc in fresh:
        e = sc["expected"]
        if e["finding"] == "duplicate_posting" and not sc["variant"]["duplicate_posted_item"]:
            n += 1
            assert e["eob_artifact"] in e["relevant_ids"], sc["seed"]
            assert set(e["decisive_ids"]) <= set(e["relevant_ids"])
    assert n >= 20


def test_part_payments_are_whole_dollars_and_spread(fresh: list[dict[str, Any]]) -> None:
    """F3: 12/40 part payments were exactly a tenth of the amount due (the open part's 90%
    ceiling). A part payment is whole dollars, below the amount due, and none is that tenth
    unless the amount due is too small for the open-balance law (at most 1 in 20)."""
    parts, tenth = 0, 0
    for sc in fresh:
        v = sc["variant"]
        if v["payment_state"] != "part":
            continue
        paid, due = v["statement_paid_cents"], sc["expected"]["statement_balance_cents"]
        parts += 1
        assert paid % 100 == 0 and 0 < paid < due, (sc["seed"], paid, due)
        tenth += abs(paid - due / 10) < 100
    assert parts >= 100 and tenth <= parts / 20, (parts, tenth)


def test_payment_times_and_refund_days(fresh: list[dict[str, Any]]) -> None:
    """F4: a statement paid in two parts days apart had both at the same second of the day;
    F5: 8/35 refunds fell on a weekend. The two parts have their own times of day (at most
    1 in 20 the same minute by chance) and every refund is dated on a business day."""
    from datetime import date

    from clarus_env.tasks.us_calendar import is_business_day
    pairs, same, refunds = 0, 0, 0
    for sc in fresh:
        rec = _records(sc)
        txns = rec["processor_log"]["transactions"]
        for t in txns:
            if t["type"] == "refund":
                refunds += 1
                assert is_business_day(date.fromisoformat(t["timestamp"][:10])), sc["seed"]
        if sc["variant"]["statement_payments"] == 2 and sc["variant"]["duplicate_of"] is None:
            cid = rec["eob"]["claim_id"]
            # (round 9: the portal's refunded second run of a payment is no part)
            undone = {t.get("original_transaction_id") for t in txns}
            sales = [t for t in txns if t["type"] == "sale" and t["status"] == "settled"
                     and t["description"] == f"Online statement payment {cid}"
                     and t["transaction_id"] not in undone]
            assert len(sales) == 2 and sales[0]["timestamp"][:10] != sales[1]["timestamp"][:10]
            assert all(_cents(t["amount"]) % 100 == 0 for t in sales[:1]), sc["seed"]
            pairs += 1
            same += sales[0]["timestamp"][11:16] == sales[1]["timestamp"][11:16]
    assert pairs >= 20 and same <= pairs / 20 and refunds >= 100, (pairs, same, refunds)


def test_claims_counted_cover_the_copays_paid(fresh: list[dict[str, Any]]) -> None:
    """F2: 4 claims with $5,159.72 of copays (the largest copay $230). Where a copay plan's
    deductible is not met before the claim, what the member paid beyond it is copays: the
    claims counted before it cover that: office copays (at most 20 claims' worth, at the plan's
    specialist copay; round 9b, F3: the count reached 100-571 otherwise) and pharmacy copays
    of at most $500 a fill for the rest."""
    checked = 0
    for sc in fresh:
        plan = _records(sc)["plan_document"]
        acc = plan["member_accumulators"]
        prior = acc["history"][-1] if "history" in acc else acc
        spec = _cents(plan["copays"]["specialist"] or "0")
        met = _cents(prior["deductible_met_ytd"])
        if spec == 0 or met >= _cents(plan["deductible"]):
            continue
        spend = _cents(prior["oop_met_ytd"]) - met
        checked += spend > 0
        office = min(spend, 20 * spec)
        need = -(-office // spec) + -(-(spend - office) // 50_000)
        assert prior["claims_counted_ytd"] >= need, (sc["seed"], spend, spec)
    assert checked >= 50, checked


def test_a_close_member_room_never_exceeds_what_the_year_left() -> None:
    """Fresh seed 971233 (no_error, close to the maximum): a room drawn above what the older
    visit and the deductible left broke the accumulators' order and the generator's own
    assertion; the room is now clamped to it, so the seed compiles with ordered totals."""
    sc = compile_scenario(TASK, 971_233, _ref())
    rec = _records(sc)
    acc = rec["plan_document"]["member_accumulators"]
    prior = acc["history"][-1] if "history" in acc else acc
    old = next(a["data"] for a in sc["artifacts"] if a["type"] == "eob" and a["distractor"])
    assert _cents(prior["oop_met_ytd"]) >= _cents(old["accumulators"]["oop_met_ytd"])
    assert _cents(prior["oop_met_ytd"]) <= _cents(rec["plan_document"]["out_of_pocket_max"])
