"""deductive_liability, issue 8 round 10b: a harmless accumulator lag in every finding.

The red team (rt12, cue 1) found the plan of record's OOP total ahead of the EOB's printed
total (the plan's reading before processing plus this claim's share against the EOB's total
after it) in the two insurer errors alone: a non-error EOB printed the plan of record plus the
claim, never lagging, while a stale deductible total and an ignored cap lag by construction. So
"any lag means an insurer error" read those findings without the expert's step: does the
difference change THIS claim's cost sharing? A claims system's totals lag ordinarily (a claim
processed elsewhere posts later), so the EOB now lags in every branch by the same law wherever
the lag provably leaves the claim's adjudication as it is. Residual, named: where the plan of
record's cap binds on this claim (``oop_binds`` outside the ignored cap, or the insurer
capped its own wrong share) any lag would have moved the cap, so none is drawn there; P(lag)
is compared among the members whose cap does not bind, and the binding share is pinned by
older tests; an HSA-qualified HDHP whose claim meets the deductible has no harmless lag
either (about 4% of the rest). A plan-of-record reading taken after
processing also counts a claim processed since (OOP dollars outside the deductible), in every
branch, so "plan at the maximum, EOB below it" is no longer the ignored cap's alone. These
checks run over 2,000 fresh salted seeds outside every split; each failed on the tree before
round 10b."""

from __future__ import annotations

import collections
import math
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_round7 import _records, _ref, salted_seeds
from tests.test_task_deductive_round7 import cents as _cents

TASK = "deductive_liability"
SALT = "round10b-lag-7e2a"
FRESH = salted_seeds(SALT)
INSURER_LAGS = ("deductible_already_met", "oop_max_exceeded")


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]



def _totals(sc: dict[str, Any]) -> tuple[int, int, int]:
    """(plan of record's OOP total after this claim, the EOB's printed total, the maximum):
    the plan's reading before processing (its history, where the reading is dated after) plus
    the EOB's patient share, stopping at the maximum."""
    rec = _records(sc)
    eob, acc = rec["eob"], rec["plan_document"]["member_accumulators"]
    oop_max = _cents(eob["accumulators"]["out_of_pocket_max"])
    before = acc["history"][-1] if acc.get("history") else acc
    assert before["as_of"] < eob["processed_date"]
    plan_after = min(oop_max, _cents(before["oop_met_ytd"])
                     + _cents(eob["totals"]["patient_responsibility"]))
    return plan_after, _cents(eob["accumulators"]["oop_met_ytd"]), oop_max


def test_the_eob_lags_the_plan_of_record_alike_in_every_finding(fresh: list) -> None:
    """P(plan of record ahead of the EOB | finding) is one rate (within 3 s.e. of the insurer
    errors' pooled rate) among members whose cap does not bind on this claim (neither in the
    plan of record's view nor on the EOB: an insurer that capped its wrong share); over all
    members every other finding lags at least 60% of the time (0% before round 10b)."""
    ahead: dict[str, list[bool]] = collections.defaultdict(list)
    free: dict[str, list[bool]] = collections.defaultdict(list)
    for sc in fresh:
        plan_after, eob_total, oop_max = _totals(sc)
        kind = sc["variant"]["kind"]
        ahead[kind].append(plan_after > eob_total)
        if not sc["variant"]["oop_binds"] and eob_total < oop_max:
            free[kind].append(plan_after > eob_total)
    for kind in INSURER_LAGS:
        assert all(ahead[kind]), kind  # the error is the lag
    ref = free["deductible_already_met"]
    for kind, xs in free.items():
        if kind in INSURER_LAGS:
            continue
        assert len(xs) >= 80, (kind, len(xs))
        p = (sum(xs) + sum(ref)) / (len(xs) + len(ref))
        se = math.sqrt(p * (1 - p) * (1 / len(xs) + 1 / len(ref)))
        gap = sum(ref) / len(ref) - sum(xs) / len(xs)
        assert abs(gap) <= 3 * se, (kind, gap, se)
        assert sum(ahead[kind]) / len(ahead[kind]) >= 0.6, kind


def test_the_lag_never_changes_the_claims_cost_sharing(fresh: list) -> None:
    """Where the EOB lags without an insurer error, the EOB's share is the plan of record's
    (no error is still no error; a provider's error is the provider's), and the lag is one a
    claim processed elsewhere leaves (at most ``MISSED_CLAIM_MAX`` dollars, round 12)."""
    from clarus_env.tasks.deductive_liability.generator import MISSED_CLAIM_MAX

    lagged = collections.Counter()
    for sc in fresh:
        kind = sc["variant"]["kind"]
        if kind in INSURER_LAGS or sc["variant"]["error_side"] == "insurer":
            continue
        plan_after, eob_total, _ = _totals(sc)
        if plan_after > eob_total:
            lagged[kind] += 1
            assert plan_after - eob_total <= 100 * MISSED_CLAIM_MAX, sc["seed"]
            eob = _records(sc)["eob"]
            assert _cents(eob["totals"]["patient_responsibility"]) == \
                sc["expected"]["patient_share_cents"], sc["seed"]
    assert lagged["no_error"] >= 100, lagged


def test_plan_at_the_maximum_beside_an_eob_below_it_is_not_the_ignored_caps_alone(
        fresh: list) -> None:
    """The plan of record's own reading at the maximum while the EOB prints less occurs
    outside the ignored cap too (a claim processed since filled the maximum)."""
    seen = collections.Counter()
    for sc in fresh:
        acc = _records(sc)["plan_document"]["member_accumulators"]
        _, eob_total, oop_max = _totals(sc)
        if _cents(acc["oop_met_ytd"]) >= oop_max > eob_total:
            seen[sc["variant"]["kind"]] += 1
    others = sum(n for k, n in seen.items() if k != "oop_max_exceeded")
    assert others >= 15 and len([k for k in seen if k not in INSURER_LAGS]) >= 3, seen


def test_no_room_sits_exactly_one_dollar_above_the_share(fresh: list[dict[str, Any]]) -> None:
    """Round 10's domain review (R1): where a close member's cap does not bind, the room the
    plan of record leaves before this claim is drawn by the near law above the EOB's share in
    every finding. A room clamped to the larger share + $1.00 put the plan's room exactly $1.00
    above the EOB's share in 11 of 48 deductible_already_met scenarios and in no other finding
    (and "OOP met = maximum - $1.00" on the plan)."""
    hits: collections.Counter[str] = collections.Counter()
    n: collections.Counter[str] = collections.Counter()
    for sc in fresh:
        rec = _records(sc)
        eob, acc = rec["eob"], rec["plan_document"]["member_accumulators"]
        before = acc["history"][-1] if acc.get("history") else acc
        room = _cents(eob["accumulators"]["out_of_pocket_max"]) - _cents(before["oop_met_ytd"])
        finding = sc["expected"]["finding"]
        n[finding] += 1
        hits[finding] += room - _cents(eob["totals"]["patient_responsibility"]) == 100
    rates = {f: hits[f] / n[f] for f in n}
    assert min(n.values()) >= 100, n
    assert max(rates.values()) <= 0.02, rates
