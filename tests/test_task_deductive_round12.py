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
def gaps() -> dict[str, list[tuple[int, float]]]:
    """Per finding, for EOBs below the maximum: (plan-vs-EOB OOP gap before the claim in
    cents, the EOB's room after the claim over its patient share), from the records an agent
    reads."""
    out: dict[str, list[tuple[int, float]]] = collections.defaultdict(list)
    for seed in salted_seeds(SALT):
        sc = compile_scenario(TASK, seed, _ref())
        rec = _records(sc)
        acc, eob = rec["plan_document"]["member_accumulators"], rec["eob"]
        ea = eob["accumulators"]
        oop_max, after = _cents(ea["out_of_pocket_max"]), _cents(ea["oop_met_ytd"])
        if after >= oop_max:
            continue
        share = max(1, _cents(eob["totals"]["patient_responsibility"]))
        before = _cents((acc.get("history") or [acc])[0]["oop_met_ytd"])
        out[sc["expected"]["finding"]].append((before - (after - share),
                                               (oop_max - after) / share))
    return out


def _rate_gap(by: dict[str, list[float]], f: str) -> tuple[float, float, float]:
    """This finding's rate, the other findings' pooled rate, and the standard error of their
    difference."""
    xs = by[f]
    rest = [x for g, v in by.items() if g != f for x in v]
    p = (sum(xs) + sum(rest)) / (len(xs) + len(rest))
    se = math.sqrt(p * (1 - p) * (1 / len(xs) + 1 / len(rest)))
    return sum(xs) / len(xs), sum(rest) / len(rest), se


def _band(gaps: dict[str, list[tuple[int, float]]], lo: int, hi: float) -> dict[str, list[float]]:
    return {f: [float(lo < g <= hi) for g, _ in v] for f, v in gaps.items()}


def test_a_lag_over_500_dollars_is_drawn_in_every_finding(gaps: dict) -> None:
    """P(gap > $500 | finding) is within 0.15 of the other findings' pooled rate in every
    finding, and at least 0.10 in each (before round 12: 0.32 in deductible_already_met,
    0.00-0.02 elsewhere; after, on these seeds, 0.37 against 0.22 pooled, and 0.29 against
    0.25 on 3,000 others - a harmless lag can miss only the OOP dollars outside the deductible
    there were to miss)."""
    by = _band(gaps, 50_000, math.inf)
    for f in by:
        p, q, _ = _rate_gap(by, f)
        assert p >= 0.10 and abs(p - q) <= 0.15, (f, round(p, 3), round(q, 3))


def test_the_ignored_caps_lag_is_the_harmless_law_above_its_shortfall(gaps: dict) -> None:
    """P($150 < gap <= $500 | oop_max_exceeded) is within three standard errors (floor 0.05)
    of the other findings' pooled rate (before round 12: 0.30 against 0.00), and its EOB
    leaves room of at least five times the share in at least a quarter of cases (before: none;
    0.60-0.71 elsewhere)."""
    by = _band(gaps, 15_000, 50_000)
    by.pop("deductible_already_met")  # the residual below
    p, q, se = _rate_gap(by, "oop_max_exceeded")
    assert abs(p - q) <= max(3 * se, 0.05), (round(p, 3), round(q, 3))
    far = [r >= 5 for _, r in gaps["oop_max_exceeded"]]
    assert sum(far) / len(far) >= 0.25, sum(far) / len(far)


@pytest.mark.xfail(strict=True, reason=(
    "residual of round 12: a stale deductible total lags by the few deductible dollars a "
    "partly met member's missed claim added, or by the whole coinsurance of the claim that "
    "met the deductible (round 11e, F1), so its gap is $150-$500 in about 0.03 against "
    "0.15-0.20 elsewhere"))
def test_a_stale_deductible_totals_lag_falls_in_every_band_alike(gaps: dict) -> None:
    """P($150 < gap <= $500 | deductible_already_met) within three standard errors (floor
    0.05) of the other findings' pooled rate."""
    by = _band(gaps, 15_000, 50_000)
    p, q, se = _rate_gap(by, "deductible_already_met")
    assert abs(p - q) <= max(3 * se, 0.05), (round(p, 3), round(q, 3))
