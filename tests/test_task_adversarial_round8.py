"""adversarial_fabrication, issue 8 round 8: why the ``partial_processor_log`` agent sits above
the pass bar, measured, and pinned so a change that moves the floor shows up here.

``partial_processor_log`` (``clarus_env/audit.py``, ``PartialReasoner``) is the heuristic with
the processor log *hidden*: it works out the filing itself (the bill against the biller's own
GFE section and the 120-day window: resolution accuracy 0.98) and then answers the (finding,
party) most common on train for that filing. Its outcome is right exactly when that constant
answer is one the grader accepts, so its ceiling is, per filing cell, the share of scenarios
that accept the cell's best single answer. Three things fix that share from below:

* the grader's expert alternatives (each is a reading a billing expert would sign, so they
  stay): a backdated GFE also accepts ``gfe_issued_after_deadline`` against the scheduler; a
  late or backdated GFE under a PPDR-eligible bill (the ``nsa_dispute`` cell) also accepts
  ``billed_above_gfe`` against the biller; ``no_violation`` also accepts the convener;
* only two parties can be at fault (provider, facility);
* the timing is drawn independently of the filing (issue 8, round 3: when it was not, the
  filing told the timing).

So every ``nsa_dispute`` scenario accepts (billed_above_gfe, the biller's kind) — a floor of
1/2 in that cell —, a ``balance_correction`` scenario is one of four classes (timely or not ×
provider or facility: 1/4), a ``no_action`` one one of three (no violation, or a late GFE of
either party: at least 1/3, and at least the no_violation share). On the committed splits that
floor is 0.351 / 0.323 / 0.331 of train / dev / test and the train table's answer is right in
0.385 / 0.347 / 0.332; the audit measured the agent's outcome accuracy at 0.333 / 0.320 (dev /
test), on the floor, against a pass bar of 0.18 / 0.17. No timing mix gets it under ~0.34
(``test_no_timing_mix_reaches_the_bar``), so the floor is structural: closing it would need
the filing itself to depend on the processor log, which the records cannot do honestly (the
log is the scheduler's; the bill, its receipt and the GFE sections are the biller's).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from tests.test_task_adversarial_fabrication import _edit, failed, play, task

TASK = "adversarial_fabrication"
FRESH = range(940_000, 942_000)  # 2,000 seeds outside every split and earlier rounds' ranges
FINDINGS = ("gfe_issued_after_deadline", "billed_above_gfe", "gfe_backdated_before_scheduling",
            "no_violation")
PARTIES = ("provider", "facility", "none")
LATE = ("gfe_issued_after_deadline", "gfe_backdated_before_scheduling")
# the least share of a cell one answer must cover, from the classes above
CELL_FLOOR = {"balance_correction": 1 / 4, "no_action": 1 / 3, "nsa_dispute": 1 / 2}


@cache
def _ref() -> Any:
    return open_reference()


@cache
def _expected(seed: int) -> dict[str, Any]:
    return compile_scenario(TASK, seed, _ref())["expected"]


def _accepted(e: dict[str, Any]) -> set[tuple[str, str]]:
    """Every (finding, party) diagnosis the grader takes for this key, as a reader of
    ``checks.py``'s ``responsible_party_and_finding`` (the first test holds it to the grader)."""
    out = set()
    for f in FINDINGS:
        if f != e["finding"] and f not in (e.get("finding_alts") or []):
            continue
        for p in PARTIES:
            if f == "billed_above_gfe" and e["finding"] != "billed_above_gfe":
                ok = p == e["biller"]
            else:
                ok = p in (e["responsible_party"], e.get("responsible_party_alt"))
            if ok:
                out.add((f, p))
    return out


def _cells() -> dict[str, list[dict[str, Any]]]:
    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in FRESH:
        e = _expected(s)
        cells[e["resolution_type"]].append(e)
    return cells


def _best(es: list[dict[str, Any]]) -> float:
    c: Counter[tuple[str, str]] = Counter(a for e in es for a in _accepted(e))
    return c.most_common(1)[0][1] / len(es)


def test_accepted_answers_match_the_grader() -> None:
    """The floor below is computed from ``_accepted``: it must be what the grader does. Two
    fresh scenarios of every (finding, filing) pair, each diagnosed with all twelve (finding,
    party) answers on top of the oracle's episode."""
    seen: Counter[tuple[str, str]] = Counter()
    for seed in FRESH:
        e = _expected(seed)
        key = (e["finding"], e["resolution_type"])
        if seen[key] >= 2:
            continue
        seen[key] += 1
        s = compile_scenario(TASK, seed, _ref())
        a = task().oracle(s)
        want = _accepted(e)
        for f in FINDINGS:
            for p in PARTIES:
                got = "responsible_party_and_finding" not in failed(
                    play(s, _edit(a, "write_diagnosis", finding=f, responsible_party=p)))
                assert got == ((f, p) in want), (seed, key, f, p, sorted(want))
    # every pair the design allows turned up: both timing findings after each filing,
    # billed_above_gfe above the estimate (two filings), no_violation within it
    assert len(seen) == 2 * 3 + 2 + 1, seen


def test_the_alternatives_that_set_each_cells_floor() -> None:
    """The classes the floor counts: a PPDR filing accepts (billed_above_gfe, biller) after
    every timing; a backdated GFE accepts the late finding against the same party; a bill
    within the estimate after a timely GFE is the only no_violation."""
    for r, es in _cells().items():
        for e in es:
            acc = _accepted(e)
            if r == "nsa_dispute":
                assert ("billed_above_gfe", e["biller"]) in acc
            if e["finding"] == "gfe_backdated_before_scheduling":
                assert ("gfe_issued_after_deadline", e["responsible_party"]) in acc
            assert (e["finding"] == "no_violation") <= (r == "no_action")
            assert e["biller"] in ("provider", "facility")
            assert e["responsible_party"] in (("none",) if e["finding"] == "no_violation"
                                              else ("provider", "facility"))


def test_partial_reasoner_sits_on_the_structural_floor() -> None:
    """Per filing cell the best single answer covers at least the class bound (and the
    no_violation share in the no_action cell), and the generator leaves little slack above
    that bound (fresh seeds: 0.380 against 0.347): rebalancing the mix cannot bring the
    partial reasoner near the pass bar (modal whole answer + 0.05, about 0.17-0.18)."""
    cells = _cells()
    n = sum(len(v) for v in cells.values())
    nv = sum(e["finding"] == "no_violation" for e in cells["no_action"]) / n
    floor = (len(cells["balance_correction"]) / n * CELL_FLOOR["balance_correction"]
             + max(len(cells["no_action"]) / n * CELL_FLOOR["no_action"], nv)
             + len(cells["nsa_dispute"]) / n * CELL_FLOOR["nsa_dispute"])
    best = 0.0
    for r, es in cells.items():
        b = _best(es)
        assert b >= CELL_FLOOR[r] - 1e-9, (r, b)
        best += b * len(es) / n
    assert 0.30 <= floor <= best <= floor + 0.05, (floor, best)


def test_timing_is_drawn_alike_after_every_filing() -> None:
    """The third leg of the floor: the late-or-backdated share is the same in every filing
    cell (round 3). A timing that followed the filing could lower the partial reasoner's
    cells only by letting the filing tell the timing, which is the leak round 3 closed."""
    cells = _cells()
    n = sum(len(v) for v in cells.values())
    overall = sum(e["finding"] in LATE for es in cells.values() for e in es) / n
    for r, es in cells.items():
        share = sum(e["finding"] in LATE for e in es) / len(es)
        assert abs(share - overall) < 0.05, (r, share, overall)


@pytest.mark.parametrize("nsa", [0.05, 0.10, 0.15, 0.20])
def test_no_timing_mix_reaches_the_bar(nsa: float) -> None:
    """Over every timely share t and filing mix the task's rules allow (each filing at most
    half, no_violation 10-25% of all, providers and facilities at fault alike), the partial
    reasoner's best answer still covers bc·max(t, 1-t)/2 + na·max(t, (1-t)/2) + nsa/2 of the
    scenarios: never under 0.34, twice the bar."""
    lowest = 1.0
    for bc100 in range(10, 51):
        bc = bc100 / 100
        na = 1 - bc - nsa
        if not 0.05 <= na <= 0.5:
            continue
        for t100 in range(5, 96):
            t = t100 / 100
            if not 0.10 <= t * na <= 0.25:
                continue
            lowest = min(lowest, bc * max(t, 1 - t) / 2 + na * max(t, (1 - t) / 2) + nsa / 2)
    assert 0.34 <= lowest < 0.40, (nsa, lowest)


def test_reader_without_the_log_is_right_on_the_timely_and_the_ppdr_cases() -> None:
    """The ablation (heuristic without the processor log: 0.356 / 0.393 pass on test / dev,
    above the partial reasoner's 0.264 / 0.313): reading no timing, it answers "no timing
    violation" — (billed_above_gfe, biller) above the estimate, (no_violation, none) within
    it — and that answer is accepted on exactly the timely GFEs plus the late or backdated
    ones under a PPDR filing (the expert alternative). On fresh seeds that is ~0.50 of the
    scenarios; making it the partial reasoner's level would take timely GFEs down to ~28%
    (no_violation at its 10% minimum), which raises the partial reasoner's floor instead."""
    es = [e for v in _cells().values() for e in v]
    right = 0
    for e in es:
        ans = (("no_violation", "none") if e["resolution_type"] == "no_action"
               else ("billed_above_gfe", e["biller"]))
        ok = ans in _accepted(e)
        timely = e["finding"] not in LATE
        assert ok == (timely or e["resolution_type"] == "nsa_dispute"), e["finding"]
        right += ok
    assert 0.42 <= right / len(es) <= 0.58
