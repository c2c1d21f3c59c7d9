"""deductive_liability, issue 8 round 13: a duplicate posting is not told by its size.

The audit's ``--explain`` (``n:provider_record.statement.balance_due``, drop 0.068) and the
round-12 red team read a duplicate posting from the statement alone: a charge line keyed at two
units bills the patient a whole line's charge (or allowed amount) again, so this visit's part
of the amount due (the amount due less the balance brought forward) was $89 or more in 9 of 10
duplicate postings against a median of $25-$74 in every other finding; ranked against them it
separated the finding with an AUC of 0.95. Since round 13 the charge keyed twice is this
visit's self-pay item wherever the patient bought one at check-in (the same law in every
branch, ``retail-items`` stream), a few dollars like any other finding's overcharge; the
practice's financial policy says self-pay items are paid in full when sold, so only the item's
charge against its card capture shows it. These checks run over fresh salted seeds outside
every split; the first failed on the tree before round 13 (c327e27: AUC 0.952).
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from clarus_env.env import ClarusEnv
from clarus_env.scenario import compile_scenario
from clarus_env.tasks.deductive_liability.generator import RETAIL
from clarus_env.tasks.deductive_liability.heuristic import HeuristicAgent
from tests.test_task_deductive_liability import _grade_of
from tests.test_task_deductive_round7 import _records, _ref, cents, salted_seeds
from tests.test_task_deductive_round12 import _alike

TASK = "deductive_liability"
SALT = "round13-dup-size-5c1e"
SELF_PAY = " (self-pay, not billed to insurance)"


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in salted_seeds(SALT, 1_500)]


def _auc(pos: list[int], neg: list[int]) -> float:
    """P(a positive ranks above a negative), ties counted half."""
    ranked = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        rank_sum += sum(lab for _, lab in ranked[i:j]) * (i + j + 1) / 2
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def test_auc_helper_ranks_ties_half() -> None:
    assert _auc([3, 4], [1, 2]) == 1.0
    assert _auc([1], [1]) == 0.5
    assert _auc([1, 2], [3, 4]) == 0.0


def _this_visit_due(sc: dict[str, Any]) -> int:
    st = _records(sc)["provider_record"]["statement"]
    return cents(st["balance_due"]) - cents(st.get("previous_balance") or "0")


def test_this_visits_amount_due_does_not_read_a_duplicate_posting(
        fresh: list[dict[str, Any]]) -> None:
    """Ranked by this visit's part of the amount due, a duplicate posting stands above the
    other findings with an AUC under 0.92 (0.952 before round 13, 0.895 after on 2,000 seeds:
    the two-unit claim line still bills a whole line again where no single item was bought)."""
    by: dict[str, list[int]] = collections.defaultdict(list)
    for sc in fresh:
        by[sc["expected"]["finding"]].append(_this_visit_due(sc))
    pos = by.pop("duplicate_posting")
    assert len(pos) >= 100, len(pos)
    auc = _auc(pos, [v for vs in by.values() for v in vs])
    assert auc < 0.92, round(auc, 3)


def _item_rows(sc: dict[str, Any]) -> list[tuple[int, int | None]]:
    """Per self-pay charge on the visit day: (its amount, the card's capture for that item
    that day, or None)."""
    rec = _records(sc)
    dos = rec["eob"]["date_of_service"]
    caps: dict[str, int] = {}
    for t in rec["processor_log"]["transactions"]:
        if (t["type"] in ("capture", "sale") and t["status"] == "settled"
                and t["timestamp"][:10] == dos and t["description"].endswith(" at check-in")
                and not t["description"].startswith("Copay")):
            caps[t["description"][:-len(" at check-in")]] = cents(t["amount"])
    return [(cents(e["amount"]), caps.get(e["description"][:-len(SELF_PAY)]))
            for e in rec["payment_ledger"]["entries"]
            if e["type"] == "charge" and e["date"] == dos and e["description"].endswith(SELF_PAY)]


def test_a_self_pay_item_keyed_twice_is_the_duplicate_posting(
        fresh: list[dict[str, Any]]) -> None:
    """Where the duplicate posting is the item, its charge is twice the card's capture for
    it, the overcharge is that capture, and the records that show it are the ledger (decisive),
    the card log and the provider record (the paid-when-sold policy); in every other scenario
    each self-pay charge equals its capture, and every practice states the policy."""
    seen = collections.Counter()
    for sc in fresh:
        e, v = sc["expected"], sc["variant"]
        rec = _records(sc)
        assert "Self-pay items (not billed to insurance) are paid in full when sold." in (
            rec["provider_record"]["financial_policy"])
        rows = _item_rows(sc)
        assert all(cap is not None for _, cap in rows), sc["seed"]
        if e["finding"] == "duplicate_posting" and v["duplicate_posted_item"]:
            seen["item"] += 1
            (amount, cap), = rows
            assert amount == 2 * cap and e["overcharge_cents"] == cap, sc["seed"]
            assert v["duplicate_posted_line"] is None and not v["duplicate_written_down"]
            assert e["decisive_ids"] == [e["ledger_artifact"]]
            assert set(e["relevant_ids"]) == {e["ledger_artifact"], e["processor_log_artifact"],
                                              e["provider_artifact"]}
        else:
            seen["line" if e["finding"] == "duplicate_posting" else "other"] += 1
            assert all(amount == cap for amount, cap in rows), sc["seed"]
    # wherever the patient bought an item at this visit, the duplicate is the item
    assert seen["item"] >= 30 and seen["line"] >= 60, seen


def test_an_item_at_this_visit_is_drawn_alike_in_every_finding(
        fresh: list[dict[str, Any]]) -> None:
    """The self-pay item bought at this check-in (the duplicate posting's item form needs one)
    is as common in every finding: within three standard errors (floor 0.06) of the others'
    pooled rate (findings with 30 or more such scenarios)."""
    by: dict[str, list[bool]] = collections.defaultdict(list)
    for sc in fresh:
        by[sc["expected"]["finding"]].append(sc["variant"]["retail_item"])
    _alike(by, 0.06)


def test_the_heuristic_finds_an_item_keyed_twice(fresh: list[dict[str, Any]]) -> None:
    """The observation-only heuristic reads the item's charge against its capture and passes
    every item-form duplicate posting, the amount to the cent."""
    env = ClarusEnv(TASK, reference=_ref())
    cases = [sc for sc in fresh if sc["variant"]["duplicate_posted_item"]][:25]
    assert len(cases) >= 20
    for sc in cases:
        agent = HeuristicAgent()
        g = _grade_of(env, sc, agent)
        assert g["passed"] == g["total"], (sc["seed"], agent.decision, sc["expected"]["finding"])
        assert agent.decision["amount_cents"] == sc["expected"]["overcharge_cents"]


def test_a_charge_above_an_items_price_range_is_no_duplicate_by_itself(
        fresh: list[dict[str, Any]]) -> None:
    """Red team round 13: a sale keyed twice lay above the item's price range in 0.88 of cases
    and no other self-pay charge ever did (precision 1.00). A patient buys a pair in
    ``PAIR_SHARE`` of sales in every finding (charge = capture = two prices), so a self-pay
    charge above the range is a duplicate posting in well under half of the scenarios that
    show one. The item has one price at both visits, in whole dollars (the domain review)."""
    top = {item: hi for item, _, hi in RETAIL.values()}
    above = collections.Counter()
    for sc in fresh:
        rec = _records(sc)
        prices = set()
        for t in rec["processor_log"]["transactions"]:
            desc = t["description"]
            if desc.endswith(" at check-in") and not desc.startswith("Copay") and (
                    t["type"] in ("capture", "sale")):
                assert cents(t["amount"]) % 100 == 0, sc["seed"]
                prices.add(desc[:-len(" at check-in")])
        assert len(prices) <= 1, (sc["seed"], prices)
        for e in rec["payment_ledger"]["entries"]:
            if e["type"] == "charge" and e["description"].endswith(SELF_PAY):
                item = e["description"][:-len(SELF_PAY)]
                if cents(e["amount"]) > top[item]:
                    above[bool(sc["variant"]["duplicate_posted_item"])] += 1
    assert above[False] >= 50, above
    assert above[True] / (above[True] + above[False]) < 0.5, above


def test_a_pair_is_sold_alike_in_every_finding(fresh: list[dict[str, Any]]) -> None:
    """Where an item was bought at this visit, two of it were sold as often in every finding
    (within three standard errors, floor 0.08); a duplicate posting keys a single item twice
    and never a pair (a pair keyed twice would be four prices, above any sale)."""
    by: dict[str, list[bool]] = collections.defaultdict(list)
    for sc in fresh:
        rows = _item_rows(sc)
        if not rows:
            continue
        (amount, cap), = rows
        pair = sc["variant"]["retail_units"] == 2
        assert sc["variant"]["retail_units"] in (1, 2)
        by[sc["expected"]["finding"]].append(pair)
        if sc["variant"]["duplicate_posted_item"]:
            assert not pair and amount == 2 * cap
    _alike(by, 0.08)



# -- the domain review of round 13 (flags F1 and F2; each failed on cc5ac66) ------------------
def test_a_statement_is_paid_after_it_went_out(fresh: list[dict[str, Any]]) -> None:
    """F1: a statement paid in two parts dated its first part 2-6 days before the last, which
    fell 3-14 days after the statement: on or before the statement date in 38 of 4,497
    scenarios, so the amount due ignored a payment the ledger had already posted."""
    n = 0
    for sc in fresh:
        rec = _records(sc)
        stmt = rec["provider_record"]["statement"]["statement_date"]
        for t in rec["processor_log"]["transactions"]:
            if t["description"] == f"Online statement payment {rec['eob']['claim_id']}":
                n += 1
                assert t["timestamp"][:10] > stmt, (sc["seed"], t["timestamp"], stmt)
    assert n >= 300, n


def test_a_void_of_a_duplicate_submission_is_the_run_that_follows(
        fresh: list[dict[str, Any]]) -> None:
    """F2: the voided online attempt was the whole amount due even where the run after it was a
    two-part payment's last part (24 of 92): a void of a duplicate submission voids the amount
    that is then run again."""
    n = 0
    for sc in fresh:
        txns = _records(sc)["processor_log"]["transactions"]
        by_id = {t["transaction_id"]: t for t in txns}
        for t in txns:
            if t["type"] == "void" and t["description"] == "Void of duplicate submission":
                voided = by_id[t["original_transaction_id"]]
                if voided["type"] != "sale":
                    continue  # (a desk authorization voided before its capture)
                after = [u for u in txns if u["type"] == "sale" and u["status"] == "settled"
                         and u["timestamp"] > voided["timestamp"]
                         and u["description"] == voided["description"]]
                assert after, sc["seed"]
                rerun = min(after, key=lambda u: u["timestamp"])
                assert cents(rerun["amount"]) == cents(voided["amount"]) == cents(t["amount"]), (
                    sc["seed"])
                n += 1
    assert n >= 30, n
