"""deductive_liability, issue 8 round 10: preconditions drawn by one law in every finding.

The audit's count and number learners (gb_counts, gb_counts_numbers) read findings from
structural priors that were preconditions of one finding, not its evidence: a visit-day
check-in capture sat in every copay never credited (which needs one) but in half of the other
findings' logs; an EOB without any coinsurance (a deductible left above the whole claim) was
drawn everywhere but where an error needed coinsurance (coinsurance on the billed charge and an
ignored cap: 100% coinsurance, others 85-90%, the stale deductible's EOB 70%). Each is now one
law: the desk collects a copay plan's visit copay at check-in in every branch, and a deductible
not met is partly met (some coinsurance is left) in every branch. (Not closed: a stale
deductible total close to the cap needs a plan whose copays filled the maximum, so the plan term
"copays count toward the deductible" reads 0.24 there against 0.40; drawing that member far
instead moved the branch's share of close members, which an older test pins.) These checks run
over 2,000 fresh salted seeds outside every split; each failed on the tree before round 10."""

from __future__ import annotations

import collections
import math
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_round7 import _records, _ref, salted_seeds
from tests.test_task_deductive_round7 import cents as _cents

TASK = "deductive_liability"
SALT = "round10-priors-c41d"
FRESH = salted_seeds(SALT)


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]



def _has_copay(rec: dict[str, Any]) -> bool:
    return _cents((rec["plan_document"].get("copays") or {}).get("primary_care", 0) or 0) > 0


def _flags(sc: dict[str, Any]) -> dict[str, bool | None]:
    """The per-scenario preconditions the learners read (None: not defined for this plan)."""
    rec = _records(sc)
    eob = rec["eob"]
    dos = eob["date_of_service"]
    copay = _has_copay(rec)
    return {
        "visit-day check-in capture": None if not copay else any(
            t["type"] == "capture" and t["status"] == "settled"
            and t["description"] == "Copay at check-in" and t["timestamp"][:10] == dos
            for t in rec["processor_log"]["transactions"]),
        "EOB coinsurance": any(_cents(ln.get("coinsurance", 0)) > 0 for ln in eob["lines"]),
    }


def _rates(fresh: list[dict[str, Any]]) -> dict[str, dict[str, list[bool]]]:
    out: dict[str, dict[str, list[bool]]] = collections.defaultdict(
        lambda: collections.defaultdict(list))
    for sc in fresh:
        f = sc["expected"]["finding"]
        for k, v in _flags(sc).items():
            if v is not None:
                out[k][f].append(bool(v))
    return out


@pytest.mark.slow
def test_preconditions_follow_one_law_in_every_finding(fresh: list[dict[str, Any]]) -> None:
    """Per precondition, each finding's rate is within three standard errors (of the
    difference, with a floor of 0.02) of the other findings' pooled rate."""
    bad = []
    for k, by in _rates(fresh).items():
        for f, vals in sorted(by.items()):
            rest = [v for g, vs in by.items() if g != f for v in vs]
            p, q = sum(vals) / len(vals), sum(rest) / len(rest)
            se = math.sqrt(p * (1 - p) / len(vals) + q * (1 - q) / len(rest))
            if abs(p - q) > max(3 * se, 0.02):
                bad.append((k, f, round(p, 3), round(q, 3), len(vals)))
    assert not bad, bad


@pytest.mark.slow
def test_every_copay_visit_collects_at_check_in_and_the_ledger_alone_tells_the_missing_credit(
        fresh: list[dict[str, Any]]) -> None:
    """A copay plan's visit copay is captured at check-in in every finding; it is credited by
    a ledger line citing it (or the visit day's deposit batch) in every finding but the copay
    never credited, where nothing credits it."""
    seen = collections.Counter()
    for sc in fresh:
        rec, f = _records(sc), sc["expected"]["finding"]
        if not _has_copay(rec):
            continue
        dos = rec["eob"]["date_of_service"]
        caps = [t for t in rec["processor_log"]["transactions"]
                if t["type"] == "capture" and t["description"] == "Copay at check-in"
                and t["timestamp"][:10] == dos]
        assert caps, (f, sc["seed"])
        entries = rec["payment_ledger"]["entries"]
        refs = {r.strip() for e in entries for r in str(e["reference"]).split(";")}
        batch = any("deposit batch" in e["description"] and e["date"] == dos for e in entries)
        credited = caps[0]["transaction_id"] in refs or batch
        if f == "copay_not_credited":
            assert caps[0]["transaction_id"] not in refs, sc["seed"]
        else:
            assert credited, (f, sc["seed"])
        seen[f] += 1
    assert seen["copay_not_credited"] > 50 and sum(seen.values()) > 1_500, seen
