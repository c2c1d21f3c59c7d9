"""deductive_liability, issue 8 round 12: one law for a claims system's lag in every finding.

The round-11 red team (``lag2.py``) and this round's check of it found the size of the gap
between the plan of record's OOP total before processing and the insurer's (its printed total
less this claim's share) drawn by a different law in the two insurer errors:

* a harmless lag elsewhere was $1-$150 (``STALE_LAG_MAX``);
* an ignored cap's lag is at least its shortfall and was the shortfall plus a near member's
  room: $150-$500 in 0.30 of oop_max_exceeded against 0.00 elsewhere, and its EOB's room after
  the claim under five times the share in every case (0.29-0.40 elsewhere);
* a stale deductible total that missed the claim meeting the deductible lags by that claim's
  coinsurance too (round 11e, F1): over $500 in 0.32 of deductible_already_met against 0.00.

Every lag of OOP dollars outside the deductible is now drawn from one missed-claim law
(``MISSED_CLAIM_MAX``, log-uniform); the ignored cap's is that law read above its shortfall.
These checks run over 2,000 fresh salted seeds outside every split; each failed on the tree
before round 12 (97b0dec). Residual, named in the strict xfail below: a stale deductible
total's lag is either the few deductible dollars a partly met member's missed claim added or
the whole coinsurance of the claim that met it, so it falls between $150 and $500 less often.
"""

from __future__ import annotations

import collections
import math

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_round7 import _records, _ref, salted_seeds
from tests.test_task_deductive_round7 import cents as _cents

TASK = "deductive_liability"
SALT = "round12-lag-law-3b9d"


@pytest.fixture(scope="module")
def gaps() -> dict[str, list[tuple[int, float, bool, bool]]]:
    """Per finding, for EOBs below the maximum: (plan-vs-EOB OOP gap before the claim in
    cents, the EOB's room after the claim over its patient share, whether the plan of record's
    reading before processing has the deductible met, whether that reading leaves room under
    five times the share), from the records an agent reads."""
    out: dict[str, list[tuple[int, float, bool, bool]]] = collections.defaultdict(list)
    for seed in salted_seeds(SALT):
        sc = compile_scenario(TASK, seed, _ref())
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        acc, ea = plan["member_accumulators"], eob["accumulators"]
        oop_max, after = _cents(ea["out_of_pocket_max"]), _cents(ea["oop_met_ytd"])
        if after >= oop_max:
            continue
        share = max(1, _cents(eob["totals"]["patient_responsibility"]))
        before = (acc.get("history") or [acc])[0]
        b_oop = _cents(before["oop_met_ytd"])
        out[sc["expected"]["finding"]].append((
            b_oop - (after - share), (oop_max - after) / share,
            _cents(before["deductible_met_ytd"]) >= _cents(plan["deductible"]),
            oop_max - b_oop < 5 * share))
    return out


def _rate_gap(by: dict[str, list[float]], f: str) -> tuple[float, float, float]:
    """This finding's rate, the other findings' pooled rate, and the standard error of their
    difference."""
    xs = by[f]
    rest = [x for g, v in by.items() if g != f for x in v]
    p = (sum(xs) + sum(rest)) / (len(xs) + len(rest))
    se = math.sqrt(p * (1 - p) * (1 / len(xs) + 1 / len(rest)))
    return sum(xs) / len(xs), sum(rest) / len(rest), se


def _band(gaps: dict, lo: int, hi: float, keep=lambda row: True) -> dict[str, list[float]]:
    return {f: [float(lo < row[0] <= hi) for row in v if keep(row)] for f, v in gaps.items()}


def _alike(by: dict[str, list[float]], floor: float) -> None:
    for f, xs in by.items():
        if len(xs) < 30:
            continue
        p, q, se = _rate_gap(by, f)
        assert abs(p - q) <= max(3 * se, floor), (f, round(p, 3), round(q, 3), len(xs))


def test_a_lag_of_150_to_500_dollars_is_drawn_alike_in_every_finding(gaps: dict) -> None:
    """P($150 < gap <= $500 | finding) is within three standard errors (floor 0.06) of the
    other findings' pooled rate in every finding but the ignored cap, and within 0.15 there
    (before round 12: 0.30 in oop_max_exceeded, 0.04 in deductible_already_met, 0.00
    elsewhere). The ignored cap's lag is its shortfall plus the room a close member's EOB
    leaves (round 12c, below), so it runs larger: 0.39 against 0.27 on these seeds."""
    by = _band(gaps, 15_000, 50_000)
    p, q, _ = _rate_gap(by, "oop_max_exceeded")
    assert abs(p - q) <= 0.15, (round(p, 3), round(q, 3))
    by.pop("oop_max_exceeded")
    _alike(by, 0.06)


def test_a_lag_over_500_dollars_is_drawn_alike_where_the_deductible_is_left(gaps: dict) -> None:
    """With the plan of record's deductible left before the claim (OOP dollars outside it are
    then copays, one claim's at most), P(gap > $500 | finding) is alike in every finding (floor
    0.05); over all members it is at least 0.10 in every finding (before round 12: 0.32 in
    deductible_already_met, 0.00-0.02 elsewhere)."""
    _alike(_band(gaps, 50_000, math.inf, keep=lambda row: not row[2]), 0.05)
    for f, xs in _band(gaps, 50_000, math.inf).items():
        assert sum(xs) / len(xs) >= 0.10, (f, sum(xs) / len(xs))


def test_the_ignored_caps_eob_leaves_the_room_a_close_members_does(gaps: dict) -> None:
    """Among members the plan of record has close to the cap (room under five times the
    share) whose EOB prints a total below the maximum, the EOB's room after the claim is under
    the share, and under three times it, as often in oop_max_exceeded as in the other findings
    pooled (three standard errors, floor 0.06; deductible_already_met aside, the residual
    below). Round 12c (red team round 12): read above the shortfall, the ignored cap's lag left
    room under $100 in 0.48 of its EOBs against 0.05-0.07 elsewhere, under the share in 0.58
    of close ones against 0.10-0.20; before round 12 its EOB was always within five shares."""
    close = {f: [r for _, r, _, near in v if near] for f, v in gaps.items()
             if f != "deductible_already_met"}
    for k in (1, 3):
        _alike({f: [float(r < k) for r in v] for f, v in close.items()}, 0.06)


@pytest.mark.xfail(strict=True, reason=(
    "residual of round 12: where the plan of record has the deductible met close to the cap, "
    "the claim the stale totals missed met the deductible and carried its coinsurance, so the "
    "EOB - showing the deductible unmet - lags by at least that coinsurance (round 11e, F1): "
    "over $500 in about 0.83 of those deductible_already_met against 0.24-0.37 elsewhere. "
    "Among plan-met members only this finding's EOB applies a deductible, the evidence itself"))
def test_a_lag_over_500_dollars_is_drawn_alike_where_the_deductible_is_met(gaps: dict) -> None:
    """With the plan of record's deductible met and room under five times the share, P(gap >
    $500 | finding) within three standard errors (floor 0.05) of the others' pooled rate."""
    _alike(_band(gaps, 50_000, math.inf, keep=lambda row: row[2] and row[3]), 0.05)


# -- round 12b: the domain review of round 12 (flags A and B; each failed on 78a28bb) --------
SALT_B = "round12b-review-81fe"


@pytest.fixture(scope="module")
def fresh_b() -> list[dict]:
    return [compile_scenario(TASK, s, _ref()) for s in salted_seeds(SALT_B)]


def test_an_eobs_oop_total_never_trails_its_deductible_total(fresh_b: list[dict]) -> None:
    """Deductible dollars count toward the OOP maximum (45 CFR 156.130(a)), so the insurer's
    OOP total is at least its deductible total on every EOB, and since the older claim's EOB it
    grew at least as much. Flag A: the ignored cap's lag, drawn to the room alone, printed
    OOP below the deductible in 15 of 333 oop_max_exceeded (0 elsewhere)."""
    seen = 0
    for sc in fresh_b:
        eobs = sorted((a["data"] for a in sc["artifacts"] if a["type"] == "eob"),
                      key=lambda d: d["processed_date"])
        for d in eobs:
            acc = d["accumulators"]
            assert _cents(acc["oop_met_ytd"]) >= _cents(acc["deductible_met_ytd"]), sc["seed"]
        claim = _records(sc)["eob"]
        older = [d for d in eobs if d["processed_date"] < claim["processed_date"]]
        if older:
            seen += 1
            a, b = older[-1]["accumulators"], claim["accumulators"]
            assert (_cents(b["oop_met_ytd"]) - _cents(a["oop_met_ytd"])
                    >= _cents(b["deductible_met_ytd"]) - _cents(a["deductible_met_ytd"])), \
                sc["seed"]
    assert seen > 1000, seen


def test_a_lag_with_the_deductible_left_is_one_claims_copay(fresh_b: list[dict]) -> None:
    """Where the plan of record has deductible left before the claim, the OOP dollars outside
    it are copays, and a harmless lag (one claim processed elsewhere) is at most one copay: the
    plan's emergency copay or a pharmacy copay's top (the ignored cap's: or its shortfall).
    Flag B: up to $1,827 (258 of 3,600)."""
    from clarus_env.tasks.deductive_liability.generator import RX_COPAY_MAX

    n = 0
    for sc in fresh_b:
        if sc["expected"]["finding"] == "deductible_already_met":
            continue  # the deductible dollars missed come on top (at most $150)
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        acc, ea = plan["member_accumulators"], eob["accumulators"]
        before = (acc.get("history") or [acc])[0]
        if _cents(before["deductible_met_ytd"]) >= _cents(plan["deductible"]) \
                or _cents(ea["oop_met_ytd"]) >= _cents(ea["out_of_pocket_max"]):
            continue
        gap = _cents(before["oop_met_ytd"]) - (
            _cents(ea["oop_met_ytd"]) - _cents(eob["totals"]["patient_responsibility"]))
        top = max(_cents((plan.get("copays") or {}).get("emergency") or 0), RX_COPAY_MAX)
        if sc["expected"]["finding"] == "oop_max_exceeded":  # at least its shortfall
            top = max(top, _cents(before["oop_met_ytd"]) + _cents(
                eob["totals"]["patient_responsibility"]) - _cents(ea["out_of_pocket_max"]))
        n += gap > 0
        assert gap <= top, (sc["seed"], gap, top)
    assert n > 300, n
