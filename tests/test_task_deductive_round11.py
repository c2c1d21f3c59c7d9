"""deductive_liability, issue 8 round 11: the open priors the audit's learners still read.

Round 10's ``--explain`` of gb_counts_numbers named single-record fields whose per-finding
means differed where no finding's evidence lies:

* the plan term "copays count toward the deductible" read 0.17 in deductible_already_met
  against 0.36-0.43 elsewhere (3,000 fresh seeds): a stale deductible total close to the cap
  was drawn only on plans whose copays, not counting toward the deductible, filled the maximum.
  A close member now has the deductible met on the plan of record on any plan, as in every
  branch; the claim the insurer's stale totals missed met it and carried coinsurance past it, so
  the EOB's OOP total lags the plan of record by at least the deductible dollars (the older
  test of the EOB's accumulators states this). Closeness itself is drawn as before
  (``test_member_states_are_drawn_alike_across_findings`` unchanged).
* ``claims_counted_ytd`` (the same cause: copays filling the maximum need many claims).
* domain review R5: part payments of $1-$5.

These checks run over 2,000 fresh salted seeds outside every split; the first and the last
failed on the tree before round 11."""

from __future__ import annotations

import collections
import datetime as dt
import math
import statistics
from typing import Any

import pytest

from clarus_env.scenario import compile_scenario
from clarus_env.tasks.deductive_liability import generator as G
from tests.test_task_deductive_round7 import _records, _ref, salted_seeds
from tests.test_task_deductive_round7 import cents as _cents

TASK = "deductive_liability"
SALT = "round11-priors-7e2a"
FRESH = salted_seeds(SALT)


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]


def _pooled_gap(by: dict[str, list[float]], f: str) -> tuple[float, float, float]:
    """This finding's mean, the other findings' pooled mean, and the standard error of their
    difference."""
    vals = by[f]
    rest = [v for g, vs in by.items() if g != f for v in vs]
    se = math.sqrt(statistics.pvariance(vals) / len(vals) + statistics.pvariance(rest) / len(rest))
    return statistics.fmean(vals), statistics.fmean(rest), se


@pytest.mark.slow
def test_plan_terms_and_claim_counts_follow_one_law_in_every_finding(
        fresh: list[dict[str, Any]]) -> None:
    """On copay plans, the share whose copays count toward the deductible; the plan of
    record's count of claims this year; and the share whose reading before processing has the
    deductible met (the ignored cap aside) are within three standard errors (floor 0.02 for a
    share) of the other findings' pooled value in every finding."""
    counts: dict[str, list[float]] = collections.defaultdict(list)
    claims: dict[str, list[float]] = collections.defaultdict(list)
    met: dict[str, list[float]] = collections.defaultdict(list)
    for sc in fresh:
        rec, f = _records(sc), sc["expected"]["finding"]
        plan = rec["plan_document"]
        acc = plan["member_accumulators"]
        before = acc["history"][-1] if "history" in acc else acc
        if f != "oop_max_exceeded":  # (close to the cap by definition: met more often)
            met[f].append(float(_cents(before["deductible_met_ytd"])
                                >= _cents(rec["eob"]["accumulators"]["deductible"])))
        if _cents((plan.get("copays") or {}).get("primary_care", 0) or 0) > 0:
            counts[f].append(float(bool(plan.get("copays_count_toward_deductible"))))
        claims[f].append(float(plan["member_accumulators"]["claims_counted_ytd"]))
    bad = []
    for name, by, floor in (("copays count", counts, 0.02), ("claims counted", claims, 0.0),
                            ("deductible met before the claim", met, 0.02)):
        for f in sorted(by):
            p, q, se = _pooled_gap(by, f)
            if abs(p - q) > max(3 * se, floor):
                bad.append((name, f, round(p, 3), round(q, 3), len(by[f])))
    assert len(counts) == 8 and not bad, bad


@pytest.mark.slow
def test_a_stale_deductible_total_close_to_the_cap_lags_by_the_claim_that_met_it(
        fresh: list[dict[str, Any]]) -> None:
    """Where the insurer's stale totals missed the claim that met the deductible, the plan of
    record has it met and the EOB applied some; its OOP total lags at least by the deductible
    dollars it missed (coinsurance past the deductible lags too). Such members are close to
    the cap on plans of every kind."""
    seen = collections.Counter()
    for sc in fresh:
        v = sc["variant"]
        if v["kind"] != "deductible_already_met":
            continue
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        acc = eob["accumulators"]
        ded_applied = sum(_cents(ln["deductible"]) for ln in eob["lines"])
        assert ded_applied > 0, sc["seed"]
        if v["close_to_cap"] and not G._copay_fill({
                "copay_primary_care": _cents((plan.get("copays") or {}).get("primary_care", 0)
                                             or 0),
                "copays_count_toward_deductible": bool(plan.get("copays_count_toward_deductible")),
                "deductible": _cents(acc["deductible"]),
                "oop_max": _cents(acc["out_of_pocket_max"])}):
            seen["close, deductible met on record"] += 1
            seen[f"copays count {bool(plan.get('copays_count_toward_deductible'))}"] += 1
    assert seen["close, deductible met on record"] > 40, seen
    assert seen["copays count True"] > 10, seen


@pytest.mark.slow
def test_part_payments_are_sums_a_patient_sends(fresh: list[dict[str, Any]]) -> None:
    """Domain review R5: a statement paid in part was paid at least ``PART_MIN`` in whole
    dollars, and only where the amount due was at least ``PART_DUE_MIN``."""
    n = 0
    for sc in fresh:
        v = sc["variant"]
        if v["payment_state"] != "part":
            continue
        paid = v["statement_paid_cents"]
        assert paid >= G.PART_MIN and paid % 100 == 0, (sc["seed"], paid)
        assert sc["expected"]["statement_balance_cents"] >= G.PART_DUE_MIN, sc["seed"]
        n += 1
    assert n > 500, n


@pytest.mark.slow
def test_an_item_bought_at_check_in_is_swiped_minutes_from_the_copay(
        fresh: list[dict[str, Any]]) -> None:
    """Domain review R4: a self-pay item bought at a check-in where the copay was swiped is
    captured within ten minutes of the copay (it was a median of three hours apart)."""
    gaps = []
    for sc in fresh:
        log = _records(sc)["processor_log"]["transactions"]
        caps = [t for t in log if t["type"] == "capture" and t["status"] == "settled"]
        for t in caps:
            if t["description"].endswith("at check-in") and not t["description"].startswith(
                    "Copay"):
                copays = [dt.datetime.fromisoformat(u["timestamp"][:19]) for u in caps
                          if u["description"] == "Copay at check-in"
                          and u["timestamp"][:10] == t["timestamp"][:10]]
                if copays:
                    at = dt.datetime.fromisoformat(t["timestamp"][:19])
                    gaps.append(min(abs((at - c).total_seconds()) for c in copays))
    assert len(gaps) > 300 and max(gaps) <= 600, (len(gaps), max(gaps, default=None))


@pytest.mark.slow
def test_deductible_left_runs_over_the_claims_coinsurance_lines(
        fresh: list[dict[str, Any]]) -> None:
    """Domain review R2: with deductible left, the EOB's deductible reaches past the first
    coinsurance line's share (over all of the claim's coinsurance-bearing lines, some
    coinsurance left on the last), not only under $148."""
    spans = 0
    for sc in fresh:
        lines = _records(sc)["eob"]["lines"]
        ded = [_cents(ln["deductible"]) for ln in lines]
        if sum(ded) and sum(d > 0 for d in ded) > 1:
            spans += 1
            assert _cents(lines[-1]["coinsurance"]) > 0, sc["seed"]
    assert spans >= 5, spans  # (none before round 11: the law stopped at the first line)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "round 11e reopened it (0.23 against 0.41 on these seeds; round 11c's 0.38 came from the "
    "1 in 4 stale EOBs near the cap on plans whose copays count toward the deductible or "
    "HDHPs - states no member can be in, domain review F1). A deductible applied near the cap "
    "needs copays outside the deductible filling the maximum, in every finding"))
def test_an_eob_applying_a_deductible_is_near_the_cap_alike_in_every_finding(
        fresh: list[dict[str, Any]]) -> None:
    """Among EOBs that applied a deductible (CARC 1, every stale deductible total's), the share
    whose OOP total leaves less room than five times the claim's share is within three
    standard errors (floor 0.03) of the other findings' pooled share - the ignored cap aside,
    close to the cap by definition. (Before round 11: 0.57 in deductible_already_met against
    0.34-0.43; ``STALE_FAR_EOB``.)"""
    near: dict[str, list[float]] = collections.defaultdict(list)
    for sc in fresh:
        f = sc["expected"]["finding"]
        eob = _records(sc)["eob"]
        if f == "oop_max_exceeded" or not any(_cents(ln["deductible"]) for ln in eob["lines"]):
            continue
        acc = eob["accumulators"]
        room = _cents(acc["out_of_pocket_max"]) - _cents(acc["oop_met_ytd"])
        near[f].append(float(room < 5 * _cents(eob["totals"]["patient_responsibility"])))
    p, q, se = _pooled_gap(near, "deductible_already_met")
    assert abs(p - q) <= max(3 * se, 0.03), (round(p, 3), round(q, 3), len(near[
        "deductible_already_met"]))


# -- round 11e: the focused domain review of round 11 (/tmp/rev13b, F1-F4) -------------------
# Fresh seeds of their own; each of the four tests failed on the round-11d tree (7521a7c).
SALT_E = "round11e-review-5c1d"


@pytest.fixture(scope="module")
def fresh_e() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in salted_seeds(SALT_E)]


def _eob_before(plan: dict[str, Any], eob: dict[str, Any]) -> tuple[int | None, int | None]:
    """The insurer's own deductible and OOP totals before this claim: its printed totals
    less what this claim applied (copays too, where they count toward the deductible); None
    where a total stops at its limit and this claim may have added nothing to it."""
    acc = eob["accumulators"]
    applied = sum(_cents(ln["deductible"]) for ln in eob["lines"])
    ded = applied
    if plan.get("copays_count_toward_deductible"):
        ded += sum(_cents(ln["copay"]) for ln in eob["lines"])
    after, oop_after = _cents(acc["deductible_met_ytd"]), _cents(acc["oop_met_ytd"])
    dm = None if after >= _cents(acc["deductible"]) and not applied else after - ded
    om = None if oop_after >= _cents(acc["out_of_pocket_max"]) else (
        oop_after - _cents(eob["totals"]["patient_responsibility"]))
    return dm, om


@pytest.mark.slow
def test_a_stale_eob_state_is_one_a_member_can_be_in(fresh_e: list[dict[str, Any]]) -> None:
    """F1: with the deductible not met on the EOB's own totals, the OOP dollars outside it come
    only from copays that do not count toward it (or other claims' small pharmacy copays,
    under $1,100 in every finding): none on an HSA-qualified HDHP (26 U.S.C. 223(c)(2)), at
    most that on a plan whose copays count toward the deductible. Round 11d: 26/167 such
    deductible_already_met EOBs held thousands (coinsurance paid after a deductible met)."""
    seen = collections.Counter()
    for sc in fresh_e:
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        dm, om = _eob_before(plan, eob)
        if dm is None or om is None or dm >= _cents(eob["accumulators"]["deductible"]):
            continue
        copays = plan.get("copays") or {}
        hdhp = not any(_cents(v or 0) for v in copays.values())
        if hdhp:
            seen["hdhp"] += 1
            assert om == dm, (sc["seed"], om, dm)
        elif plan.get("copays_count_toward_deductible"):
            seen[f"count {sc['expected']['finding'] == 'deductible_already_met'}"] += 1
            assert om - dm <= 110_000, (sc["seed"], sc["expected"]["finding"], om - dm)
    assert seen["count True"] > 50 and seen["hdhp"] > 5, seen


@pytest.mark.slow
def test_a_stale_total_never_falls_below_the_older_eobs(fresh_e: list[dict[str, Any]]) -> None:
    """F2: the older claim's EOB (a record the agent can fetch) printed the insurer's totals
    after it; this EOB's totals before the claim, stale or not, are never below them (a stale
    total misses claims processed since, not before). Round 11d: 21/472 below."""
    n = 0
    for sc in fresh_e:
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        dm, om = _eob_before(plan, eob)
        for a in sc["artifacts"]:
            d = a["data"]
            if a["type"] == "eob" and a["distractor"] and d["claim_id"] != eob["claim_id"] \
                    and d["processed_date"] < eob["processed_date"]:
                n += sc["expected"]["finding"] == "deductible_already_met"
                assert dm is None or _cents(d["accumulators"]["deductible_met_ytd"]) <= dm, \
                    sc["seed"]
                assert om is None or _cents(d["accumulators"]["oop_met_ytd"]) <= om, sc["seed"]
    assert n > 150, n


@pytest.mark.slow
def test_the_reading_before_processing_is_the_day_before(fresh_e: list[dict[str, Any]]) -> None:
    """F3: the plan of record's reading before this claim (its history, beside a snapshot
    taken after processing that may count a claim processed since) is dated the day before
    processing, so a claim it does not count came after it and the room it shows is the room
    this claim was adjudicated on. Round 11d: anywhere from the visit on (232/1500 close
    members with a binding cap and such a claim)."""
    n = 0
    for sc in fresh_e:
        rec = _records(sc)
        acc, eob = rec["plan_document"]["member_accumulators"], rec["eob"]
        if "history" not in acc:
            continue
        n += 1
        day = dt.date.fromisoformat(eob["processed_date"]) - dt.timedelta(days=1)
        assert [h["as_of"] for h in acc["history"]] == [day.isoformat()], sc["seed"]
        assert acc["as_of"] >= eob["processed_date"], sc["seed"]
    assert n > 1000, n


@pytest.mark.slow
def test_a_half_cent_coinsurance_is_accepted_rounded_either_way(
        fresh_e: list[dict[str, Any]]) -> None:
    """F4: where the correct share's coinsurance is exactly half a cent (round 11d: 11/1500,
    e.g. $21.285), the overcharge recomputed with it rounded half to even is accepted beside
    the half-up one. Recomputed from the records for a deductible applied after it was met:
    the plan of record's deductible left before processing, the EOB's lines."""
    ties = 0
    for sc in fresh_e:
        exp = sc["expected"]
        if exp["finding"] != "deductible_already_met":
            continue
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        acc = plan["member_accumulators"]
        before = acc["history"][-1] if "history" in acc else acc
        ded_left = _cents(plan["deductible"]) - _cents(before["deductible_met_ytd"])
        room = _cents(plan["out_of_pocket_max"]) - _cents(before["oop_met_ytd"])
        pct, down, total = plan["coinsurance_pct"], 0, 0
        for ln in eob["lines"]:
            allowed, copay = _cents(ln["allowed"]), _cents(ln["copay"])
            if copay:
                total += copay
                if plan.get("copays_count_toward_deductible"):
                    ded_left = max(0, ded_left - copay)
                continue
            d = min(ded_left, allowed)
            ded_left -= d
            exact = (allowed - d) * pct
            total += d + (exact + 50) // 100
            down += exact % 100 == 50 and (exact // 100) % 2 == 0
        if total > room:
            continue
        if down:
            ties += 1
            alt = exp["amount_cents"] + down
            assert f"claim_reprocessing:{alt}" in exp["amount_alternatives"], sc["seed"]
        else:
            assert not exp["amount_alternatives"], sc["seed"]
    assert ties > 0, ties


# -- round 11f: the broad domain review (/tmp/rev13_deductive_liability) --------------------
# Fresh seeds of their own; the first test failed on the round-11e tree (98ad489), the second
# on every tree before round 11f.
SALT_F = "round11f-review-a3b7"


@pytest.fixture(scope="module")
def fresh_f() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in salted_seeds(SALT_F)]


def _plan_ded_left(plan: dict[str, Any]) -> int:
    """The plan of record's deductible left before this claim (its reading before processing
    where it has one)."""
    acc = plan["member_accumulators"]
    before = acc["history"][-1] if "history" in acc else acc
    return _cents(plan["deductible"]) - _cents(before["deductible_met_ytd"])


@pytest.mark.slow
def test_the_plan_of_records_deductible_left_is_no_sliver(
        fresh_f: list[dict[str, Any]]) -> None:
    """Broad review: the plan of record's deductible left before the claim, where some is left,
    is under $5 (and exactly $1.00) in deductible_already_met as often as in the other findings,
    within three standard errors (floor 0.01). Round 11d-11e drew the insurer's stale total
    first and took the missed dollars off it with a $1 floor: under $2 left in 16/250 and
    exactly $1.00 in 5/250 against 0/2,270 elsewhere."""
    small: dict[str, list[float]] = collections.defaultdict(list)
    one: dict[str, list[float]] = collections.defaultdict(list)
    for sc in fresh_f:
        left = _plan_ded_left(_records(sc)["plan_document"])
        if left <= 0:
            continue
        f = sc["expected"]["finding"]
        small[f].append(float(left < 500))
        one[f].append(float(left == 100))
    assert len(small["deductible_already_met"]) > 80, len(small["deductible_already_met"])
    for by in (small, one):
        p, q, se = _pooled_gap(by, "deductible_already_met")
        assert abs(p - q) <= max(3 * se, 0.01), (round(p, 4), round(q, 4), round(se, 4))


@pytest.mark.slow
def test_every_plan_document_says_a_copay_counting_toward_the_deductible_is_credited_in_claim(
        fresh_f: list[dict[str, Any]]) -> None:
    """Broad review (contestable-not-accepted, 336/2,520 seeds): where copays count toward the
    deductible, the expected share credits a claim's copay to the deductible as its line is
    processed; every plan document states it, in the same words whatever the plan or finding
    (and only EOBs that follow it are printed: recomputed from the plan's terms, the EOB's
    lines and this rule, a correctly priced claim's EOB matches where the stated order alone
    was ambiguous)."""
    texts = collections.Counter()
    checked = differs = 0
    for sc in fresh_f:
        rec = _records(sc)
        plan, eob = rec["plan_document"], rec["eob"]
        order = plan["cost_sharing_order"]
        assert G.COPAY_CREDIT_NOTE in order, sc["seed"]
        texts[order] += 1
        if sc["expected"]["responsible_party"] == "insurer" or \
                not plan.get("copays_count_toward_deductible"):
            continue
        if not any(_cents(ln["copay"]) for ln in eob["lines"][:-1]):
            continue
        # an insurer that priced the claim right applied the plan of record's deductible left
        # (a lagging total of its own only where that leaves the claim's cost sharing as it is)
        left = plain = _plan_ded_left(plan)
        applied = plain_applied = 0
        for ln in eob["lines"]:
            copay = _cents(ln["copay"])
            if copay:
                left = max(0, left - copay)
                continue
            assert _cents(ln["deductible"]) == min(left, _cents(ln["allowed"])), sc["seed"]
            left -= _cents(ln["deductible"])
            applied += _cents(ln["deductible"])
            # (the other reading: the copay left out of the deductible within the claim)
            plain_applied += min(plain, _cents(ln["allowed"]))
            plain -= min(plain, _cents(ln["allowed"]))
        checked += 1
        differs += applied != plain_applied
    assert len(texts) == 1, texts
    assert checked > 100 and differs > 0, (checked, differs)
