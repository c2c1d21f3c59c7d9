"""deductive_liability, issue 8 round 7: the cues the round-6 red team and the audit's trees
read, each pinned where it was closed (the value is drawn by one law in every branch).

* The card log's check-in copays: every extra copay was dated last plan year, so the count of
  this year's captures was the branch's own captures (this visit's, the older visit's, the
  terminal's second one) and read ``duplicate_charge`` and ``copay_not_credited`` (red team
  round 6, 0.328 / 0.300 passed). Extra copays now come from both plan years in every branch,
  this year's dated before the ledger's export opens (captured, never posted, in every
  branch), and this year's count is drawn as a whole.
* An ignored out-of-pocket cap kept the deductible met, so an EOB that applied deductible was
  never ``oop_max_exceeded`` (0/61 on train).

The checks run over fresh seeds outside every split (the committed splits are checked by
``tests/test_scenarios.py``)."""

from __future__ import annotations

import collections
import hashlib
from functools import cache
from statistics import mean
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from tests.test_task_deductive_liability import _branch_means_agree as _apart

TASK = "deductive_liability"
# outside every split; 3,000 seeds (round 8b: at 1,000 a nine-way three-standard-error check
# flagged duplicate_posting's reversal rate by chance once the draws moved, 78 scenarios at
# 0.231 against 0.406, while 4,000 other fresh seeds give 0.421 against 0.410)
FRESH = range(930_000, 933_000)


@cache
def _ref() -> Any:
    return open_reference()


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [compile_scenario(TASK, s, _ref()) for s in FRESH]


def salted_seeds(salt: str, count: int = 2_000) -> list[int]:
    """``count`` seeds outside every split, spread by a hash of ``salt``: each later round's
    fresh-seed tests draw their own set, so a law pinned in one round is checked on seeds the
    generator's author never tuned on."""
    return sorted({3_000_000 + int(hashlib.sha256(f"{salt}-{i}".encode()).hexdigest()[:8], 16)
                   % 5_000_000 for i in range(count)})


def cents(value: Any) -> int:
    """A printed money amount ("12.34" or a number) in cents."""
    return round(float(value) * 100)


def _records(sc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["type"]: a["data"] for a in sc["artifacts"] if not a["distractor"]}


def _finding(sc: dict[str, Any]) -> str:
    f = sc["expected"]["finding"]
    return f"{f}:{sc['variant']['error_side']}" if f == "coinsurance_on_billed" else f


def _copay_captures(log: dict[str, Any], year: str) -> list[dict[str, Any]]:
    return [t for t in log["transactions"] if t["type"] == "capture"
            and t["description"] == "Copay at check-in" and t["timestamp"][:4] == year]


def test_this_years_check_in_copays_say_nothing_about_the_branch(
        fresh: list[dict[str, Any]]) -> None:
    """The number of this plan year's check-in copay captures (the red team's cue), of last
    year's, and of all of them are within three standard errors of the other findings' mean,
    per finding; so is the number of this year's days with a check-in copay, except where
    the terminal captured one visit's copay twice - that second capture on the visit's day is
    the evidence itself (it is counted in this year's captures, so their number is the same
    law in every branch)."""
    rows: dict[str, list[tuple[str, float]]] = collections.defaultdict(list)
    for sc in fresh:
        f, rec = _finding(sc), _records(sc)
        log = rec["processor_log"]
        this_year = _copay_captures(log, "2026")
        rows["2026"].append((f, len(this_year)))
        rows["2025"].append((f, len(_copay_captures(log, "2025"))))
        rows["both years"].append((f, len(this_year) + len(_copay_captures(log, "2025"))))
        # (round 9: the desk's second run of a copay, refunded or the double charge, is one
        # law in every branch - ``run_twice`` - and shares its visit's day)
        # (round 9b: so does a double charge's refunded run beside its own, ``refunded_run``)
        if not {sc["variant"]["run_twice"], sc["variant"]["refunded_run"]} & {
                "checkin_copay", "older_payment"}:
            rows["2026 visit days"].append((f, len({t["timestamp"][:10] for t in this_year})))
    bad = {k: _apart(v) for k, v in rows.items()}
    assert not any(bad.values()), bad


def test_extra_copays_of_both_plan_years_occur_in_every_branch(
        fresh: list[dict[str, Any]]) -> None:
    """On a copay plan, in every finding most logs show last year's check-in copays and this
    year's copays captured before the ledger's export opens and never posted on it (so a
    capture of this year without a posting is no error by itself; only one inside the
    ledger's period is)."""
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for sc in fresh:
        f, rec = _finding(sc), _records(sc)
        log, ledger = rec["processor_log"], rec["payment_ledger"]
        if not _copay_captures(log, "2026"):
            continue  # a plan without copays (an HDHP)
        opening = min(e["date"] for e in ledger["entries"])
        posted = {r.strip() for e in ledger["entries"] for r in e["reference"].split(";")}
        seen[f]["n"] += 1
        seen[f]["2025"] += bool(_copay_captures(log, "2025"))
        seen[f]["2026 unposted before opening"] += any(
            t["transaction_id"] not in posted and t["timestamp"][:10] < opening
            for t in _copay_captures(log, "2026"))
    assert set(seen) >= {"duplicate_charge", "copay_not_credited", "no_error"}, seen
    bad = {f: dict(c) for f, c in seen.items()
           if c["2025"] < 0.5 * c["n"] or c["2026 unposted before opening"] < 0.5 * c["n"]}
    assert not bad, bad


def test_this_years_early_copays_are_in_the_plans_accumulators(
        fresh: list[dict[str, Any]]) -> None:
    """Copays of this plan year's earlier visits count toward the OOP maximum (45 CFR
    156.130(a)): the insurer's OOP total as of the older visit is at least those copays, and
    the plan counts at least that many other claims."""
    bad = []
    for sc in fresh:
        arts = [a for a in sc["artifacts"]]
        rec = _records(sc)
        old_eob = next(a["data"] for a in arts if a["type"] == "eob" and a["distractor"])
        old_dos = old_eob["date_of_service"]
        early = [t for t in _copay_captures(rec["processor_log"], "2026")
                 if t["timestamp"][:10] < old_dos]
        paid = sum(int(round(float(t["amount"]) * 100)) for t in early)
        before_old = (int(round(float(old_eob["accumulators"]["oop_met_ytd"]) * 100))
                      - int(round(float(old_eob["totals"]["patient_responsibility"]) * 100)))
        counted = rec["plan_document"]["member_accumulators"]["claims_counted_ytd"]
        if before_old < paid or counted < len(early) + 1:
            bad.append((sc["case"]["case_id"], before_old, paid, counted, len(early)))
    assert not bad, bad[:5]


def test_an_eob_deductible_occurs_with_every_finding(fresh: list[dict[str, Any]]) -> None:
    """An EOB that applied deductible occurs in every finding (an ignored cap too, where the
    plan's copays filled the maximum), so the deductible's presence alone never rules a
    finding out; where an EOB applies it, it is on a line without a copay."""
    share: dict[str, list[bool]] = collections.defaultdict(list)
    misplaced = []
    for sc in fresh:
        eob = _records(sc)["eob"]
        share[_finding(sc)].append(any(float(ln["deductible"]) > 0 for ln in eob["lines"]))
        misplaced += [sc["case"]["case_id"] for ln in eob["lines"]
                      if float(ln["deductible"]) > 0 and float(ln["copay"]) > 0]
    low = {f: round(mean(v), 3) for f, v in share.items() if mean(v) < 0.1}
    assert not low and not misplaced, (low, misplaced[:5])


def test_an_itemized_share_is_the_remittances_but_where_the_practice_recomputed_it(
        fresh: list[dict[str, Any]]) -> None:
    """A balance-billing practice's itemized statement printed each line's share as the
    charge less the plan's payment (a visit line's share far above any copay: one field read
    balance_billing at AUC 0.85). Every itemized line share is now the EOB's patient
    responsibility for that line, except where the practice computed its own coinsurance on
    the billed charge (that statement's coinsurance is the error); a balance-billing
    statement's amount due still exceeds its itemized shares and the balance forward."""
    bad, over = [], []
    for sc in fresh:
        rec = _records(sc)
        stmt = rec["provider_record"]["statement"]
        if "patient_share_lines" not in stmt or _finding(sc) == "coinsurance_on_billed:provider":
            continue
        eob = {ln["line"]: ln["patient_responsibility"] for ln in rec["eob"]["lines"]}
        bad += [sc["case"]["case_id"] for it in stmt["patient_share_lines"]
                if it["patient_share"] != eob[it["line"]]]
        if _finding(sc) == "balance_billing":
            # (a copay collected at check-in is off the amount due: at most the line copays)
            cents = [round(float(it[k]) * 100) for it in stmt["patient_share_lines"]
                     for k in ("patient_share", "copay")]
            shares, copays = sum(cents[0::2]), sum(cents[1::2])
            visit_part = (round(float(stmt["balance_due"]) * 100)
                          - round(float(stmt["previous_balance"]) * 100))
            over.append(visit_part + copays > shares)
    assert not bad and over and all(over), (bad[:5], over.count(False))


def _ledger_counts(sc: dict[str, Any]) -> tuple[int, int, int]:
    """What a counter reads off the practice ledger without matching anything against the
    visit: the "line" words (every row that cites a claim line: charges, per-line write-offs,
    reversals, the older visit's rows), the "reversal" words, and the rows that cite a claim
    line as a charge less the reversals - each less the number of lines on this visit's EOB,
    which the counter reads too."""
    rec = _records(sc)
    entries = rec["payment_ledger"]["entries"]
    text = " ".join(f"{e['description']} {e['reference']}" for e in entries).lower()
    lines = len(rec["eob"]["lines"])
    reversals = text.count("reversal")
    charges = sum(e["type"] == "charge" and " line " in e["reference"] for e in entries)
    return text.count("line") - lines, reversals, charges - reversals - lines


def test_the_ledgers_reversal_count_says_nothing_about_the_branch(
        fresh: list[dict[str, Any]]) -> None:
    """A charge entered twice and reversed, or voided and rebilled, is posted at one rate in
    every branch (a duplicate posting's too): the number of "reversal" words on the ledger is
    within three standard errors of the other findings' mean, per finding."""
    rows = [(_finding(sc), _ledger_counts(sc)[1]) for sc in fresh]
    assert not _apart(rows), _apart(rows)


def test_the_ledgers_line_counts_say_nothing_about_the_branch(
        fresh: list[dict[str, Any]]) -> None:
    """The number of "line" words on the ledger and of line-charge rows less reversals (each
    less the EOB's lines) on a duplicate posting are within three standard errors of the other
    findings' mean: only matching a charge against the visit (same line, code, date and amount, not
    reversed) may show a duplicate posting, not counting rows. (Issue 8, round 8: closed by a
    duplicate that adds no row - the line keyed at two units in one charge row, its write-down
    in the line's own CO-45 row - where it was one more row than any legitimate posting.)"""
    counts = [(_finding(sc), _ledger_counts(sc)) for sc in fresh]
    # (balance billing's own line words - fewer per-line write-offs, the unposted write-off
    # being its evidence - are another law, followed by the audit, not pinned here)
    bad = {name: [r for r in _apart([(f, c[i]) for f, c in counts])
                  if r[0] == "duplicate_posting"]
           for i, name in ((0, "line words"), (2, "line charges less reversals"))}
    assert not any(bad.values()), bad


def _older_claims(sc: dict[str, Any]) -> list[dict[str, Any]]:
    """The claim records of visits before this one (the older visit's, where it is shown)."""
    own = _records(sc)["claim_record"]["claim_id"]
    return [a["data"] for a in sc["artifacts"]
            if a["type"] == "claim_record" and a["data"]["claim_id"] != own]


def test_the_visit_codes_are_ones_a_coder_would_sign(fresh: list[dict[str, Any]]) -> None:
    """Domain review round 7 (answer-neutral realism, issue 8 round 7d): a -25 visit next to a
    knee injection for one knee's osteoarthritis is never for the other knee's (one problem
    managed at one visit, not separately identifiable: 93 in 1000 fresh seeds before); a
    seborrheic keratosis visit is a straightforward one (99212 only: 13 at 99213 before); a
    new-patient code on the older visit only where the ledger brings no balance forward (a
    share still owed says the patient was seen before: 2 before)."""
    knee = sk = new_bf = 0
    for sc in fresh:
        claim = _records(sc)["claim_record"]
        dx = [d["code"] for d in claim["diagnoses"]]
        if (len(claim["lines"]) > 1 and dx[0].startswith("M17.1")
                and any(d.startswith("M17.1") for d in dx[1:])):
            knee += 1
        sk += dx[0] == "L82.1" and claim["lines"][0]["hcpcs"] != "99212"
        forward = any("Balance forward" in e["description"]
                      for e in _records(sc)["payment_ledger"]["entries"])
        new_bf += forward and any(ln["hcpcs"].startswith("9920")
                                  for c in _older_claims(sc) for ln in c["lines"])
    assert (knee, sk, new_bf) == (0, 0, 0), (knee, sk, new_bf)
