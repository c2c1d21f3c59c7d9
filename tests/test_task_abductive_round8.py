"""abductive_conflict, issue 8 round 8: the domain review's realism flags (F4-F8, answer-
neutral) and the therapy clock's residual printed-extent cue, each pinned over scenarios
outside every split (so a split's chance draw cannot hide a regression).

- F4: a flu vaccine was given in May, June and July (flu shots run September-March); out
  of season the vaccine administration (90471) is of a vaccine given all year.
- F5: a simple repair of a lesion's own wound was drawn over the whole repair code's range
  (a 7.1 cm repair closing a 1.4 cm excision, a 2.1 cm repair closing a 4 mm punch); it is
  now the length that wound needs, by one law in both stories.
- F6: a clinician of the billing group assessing at an office of another name read as one
  clinician at two groups; the provider record states one group under one taxpayer id.
- F7: "posterior aspect, 12 cm from the kneecap": each site is now measured from a
  landmark that lies on both of its aspects (the knee or the elbow joint line).
- F8: infusion series dated implausibly: "dose 2 of 3 ... the last dose tomorrow" and "the
  second day of IV hydration" beside an ordering visit 2-5 business days back, "dose 3 of 5"
  with no earlier dose in the account. A series now starts at its first dose after the
  ordering visit the account lists; the antibiotic is a single dose.
- The printed extent of a therapy session (latest printed clock time less the earliest):
  a separate session could not always print an overlapping one's extent (under 10 minutes
  in 10% of separate sessions against 20% of overlapping ones); a layout no separate one
  can match is now drawn again in both stories.
"""

from __future__ import annotations

import collections
import datetime as dt
import math
import re
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.tasks.abductive_conflict import catalog as cat
from clarus_env.tasks.abductive_conflict import generator as gen
from clarus_env.tasks.us_calendar import is_business_day
from tests.test_task_abductive_round7 import _interval

TASK = "abductive_conflict"


def _provider(s: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in s["artifacts"]
                if a["type"] == "provider_record" and not a["distractor"])["data"]


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    """4,000 scenarios outside every split."""
    ref = open_reference()
    return [compile_scenario(TASK, seed, ref) for seed in range(7_800_000, 7_804_000)]


def _within(k1: int, n1: int, k2: int, n2: int, sigmas: float = 3.0) -> bool:
    """Two shares equal within ``sigmas`` standard errors of their difference."""
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 1e-9) * (1 / n1 + 1 / n2))
    return abs(k1 / n1 - k2 / n2) <= sigmas * se


@pytest.mark.slow
def test_a_flu_vaccine_only_in_the_flu_season(fresh: list[dict[str, Any]]) -> None:
    """F4: the influenza vaccine only on a date of service in September-March; out of season
    the visit's vaccine, its reason and the complaint's lay words name a year-round one."""
    seen = collections.Counter()
    for s in fresh:
        prov = _provider(s)
        if "90471" not in {ln["hcpcs"] for ln in prov["lines"]}:
            continue
        month = dt.date.fromisoformat(prov["date_of_service"]).month
        text = " ".join(prov["notes"]) + " " + s["case"]["patient_complaint"]
        flu = bool(re.search(r"influenza|flu (shot|vaccine)", text, re.I))
        assert flu is (month in gen.FLU_SEASON), (s["seed"], month, text[:300])
        if not flu:
            assert any(v[0].lower() in text.lower() for v in gen.YEAR_ROUND_VACCINES), text
        seen[flu] += 1
    assert seen[True] > 5 and seen[False] > 5, seen


REPAIR = re.compile(r"Simple repair, ([\d.]+) cm, single-layer closure")
LESION_SIZE = re.compile(r"\(([\d.]+) cm\)|([\d.]+) cm with margins")


@pytest.mark.slow
def test_a_repair_is_as_long_as_the_lesion_wound_needs(fresh: list[dict[str, Any]]) -> None:
    """F5: beside a biopsy or an excision the repair is as long as the lesion's own wound
    needs (an excision's ellipse 2.5-3.5 times its width, a 4 mm punch 0.6-1.0 cm, a shave
    1-2 times its width), inside the repair code's range, and the ratio has one law in both
    stories (the laceration sutured instead is of that length)."""
    ratios: dict[bool, list[float]] = {True: [], False: []}
    for s in fresh:
        v = s["variant"]
        codes = v["pair"].split("/")
        rep = [c for c in codes if c in ("12001", "12002")]
        les = [c for c in codes if c in ("11102", "11104", "11400", "11401", "11402")]
        if not rep or not les:
            continue
        notes = {re.match(r"Line \d \((\w+)\)", n)[1]: n for n in _provider(s)["notes"]
                 if n.startswith("Line")}
        length = float(REPAIR.search(notes[rep[0]])[1])
        m = LESION_SIZE.search(notes[les[0]])
        size = float(m[1] or m[2])
        lo, hi = cat.SIZES[rep[0]]
        floor = 0.5 if rep[0] == "12001" else lo
        if les[0] in ("11400", "11401", "11402"):
            want = (2.5 * size, 3.5 * size)
        elif les[0] == "11104":
            want = (0.6, 1.0)
        else:
            want = (size, 2 * size)
        want = (min(hi, max(floor, want[0])), min(hi, max(floor, want[1])))
        assert want[0] - 0.051 <= length <= want[1] + 0.051, (s["seed"], les, size, length)
        ratios[bool(v["distinct_documented"])].append(length / size)
    assert len(ratios[True]) > 20 and len(ratios[False]) > 20, {k: len(x) for k, x in
                                                                 ratios.items()}
    mean = {b: sum(x) / len(x) for b, x in ratios.items()}
    var = {b: sum((r - mean[b]) ** 2 for r in x) / (len(x) - 1) for b, x in ratios.items()}
    se = math.sqrt(sum(var[b] / len(ratios[b]) for b in ratios))
    assert abs(mean[True] - mean[False]) <= 3 * se, (mean, se)


@pytest.mark.slow
def test_one_group_states_its_offices(fresh: list[dict[str, Any]]) -> None:
    """F6: every office-visit provider record states one group under one taxpayer id, and
    the same words in every branch."""
    n = 0
    for s in fresh:
        if s["variant"]["family"] != "em":
            continue
        provider = _provider(s)["provider"]
        assert re.fullmatch(r"\d\d-\d{7}", provider["tin"]), provider
        assert provider["group_practice"] == gen.GROUP_PRACTICE
        assert provider["name"] == provider["offices"][0]
        n += 1
    assert n > 300, n


@pytest.mark.slow
def test_landmarks_lie_on_both_aspects(fresh: list[dict[str, Any]]) -> None:
    """F7: no note measures a lesion from a landmark of one surface (the kneecap, the
    patella, the elbow crease); every measured place names its site's one landmark."""
    n = 0
    for s in fresh:
        text = " ".join(_provider(s)["notes"])
        assert not re.search(r"kneecap|patell|elbow crease|antecubital", text, re.I), text
        for site, anchor in re.findall(
                r"on the (?:one of them )?([^,;.]+?), [^,;.]+, (?:one of them )?\d+ [cm]m "
                r"from the ([a-z ]+)", text):
            key = next((k for k in gen.ANCHORS if k in site), None)
            if key is not None:
                assert anchor == gen.ANCHORS[key], (site, anchor)
                n += 1
    assert n > 100, n


@pytest.mark.slow
def test_a_series_starts_after_the_visit_that_ordered_it(fresh: list[dict[str, Any]]) -> None:
    """F8: a routine drug administration is never a later dose of a series (no "dose 2 of
    3", "dose 3 of 5", "second day", "last dose tomorrow"), and the previous visit that
    ordered it is in the account history, 2-5 business days before the date of service."""
    n = 0
    for s in fresh:
        prov = _provider(s)
        codes = {ln["hcpcs"] for ln in prov["lines"]}
        if not codes & {"96372", "96374", "96360", "96365"}:
            continue
        text = " ".join(prov["notes"])
        assert not re.search(r"dose [2-9] of|second day|third dose|second dose|"
                             r"last dose|tomorrow\b(?! as prescribed)", text), text
        assert "previous visit" in text
        dos = dt.date.fromisoformat(prov["date_of_service"])
        back = []
        for h in prov["statement"]["account_history"]:
            d = dt.date.fromisoformat(h["date_of_service"])
            days = [dos - dt.timedelta(days=k) for k in range(1, (dos - d).days + 1)]
            back.append(sum(is_business_day(x) for x in days) if d < dos else -1)
        assert any(2 <= b <= 5 for b in back), (s["seed"], back)
        n += 1
    assert n > 30, n


CLOCK = re.compile(r"\b(\d\d):(\d\d)\b")


@pytest.mark.slow
def test_the_printed_extent_has_one_law(fresh: list[dict[str, Any]]) -> None:
    """The minutes between the earliest and the latest clock time the two therapy notes
    print have one law in both stories (indicator-1 therapy): each 10-minute bucket's share
    within 3 s.e., and the best single threshold on the extent, fitted on these sessions,
    within 0.04 of chance, and a printed clock time in common within 3 s.e. (round 7's
    clock: under 10 minutes 0.10 separate against 0.20 overlapping, best threshold 0.555
    over 3,362 sessions)."""
    ext: dict[bool, list[int]] = {True: [], False: []}
    common = {True: 0, False: 0}  # the two notes print one clock time in common
    for s in fresh:
        v = s["variant"]
        if v["family"] != "therapy" or v["branch"] not in ("b", "c", "a1m", "a1n"):
            continue
        notes = [n.split(": ", 1)[1] for n in _provider(s)["notes"][:2]]
        times = [60 * int(h) + int(m) for n in notes for h, m in CLOCK.findall(n)]
        ext[bool(v["distinct_documented"])].append(max(times) - min(times))
        common[bool(v["distinct_documented"])] += bool(
            set(CLOCK.findall(notes[0])) & set(CLOCK.findall(notes[1])))
    n = {b: len(x) for b, x in ext.items()}
    assert min(n.values()) > 500, n
    for bucket in range(8):
        k = {b: sum(min(e // 10, 7) == bucket for e in x) for b, x in ext.items()}
        assert _within(k[True], n[True], k[False], n[False]), (bucket, k, n)
    # and a printed time in common (round 8's first fix matched the extent only: 0.121 of
    # separate sessions against 0.087 of overlapping ones over 3,362 fresh sessions)
    assert _within(common[True], n[True], common[False], n[False]), (common, n)
    best = 0.0
    for t in range(0, 120):
        right = (sum(e > t for e in ext[True]) + sum(e <= t for e in ext[False])) / sum(
            n.values())
        best = max(best, right, 1 - right)
    assert best <= 0.54, best


STAMP = re.compile(r"\d\d/\d\d/\d{4} by (.+?), ([^,;]+); [a-z' ]+note")


@pytest.mark.slow
def test_every_assessor_has_the_rendering_clinicians_credential(
        fresh: list[dict[str, Any]]) -> None:
    """Round 8: another practice's clinician has the rendering clinician's credential, so a
    credential word's count in the record says nothing about who assessed (drawn on its
    own, it matched the rendering clinician's in about a quarter of the other practices'
    entries and in all of this group's; gb_wordcounts_numbers read 0.577 of 402 fresh
    office visits). Only the name, and the office against the group's list, tell."""
    seen = collections.Counter()
    for s in fresh:
        if s["variant"]["family"] != "em":
            continue
        prov = _provider(s)
        cred = prov["provider"]["rendering_clinician"].rsplit(", ", 1)[1]
        note = next(n for n in prov["notes"] if re.match(r"Line \d \(992", n))
        who = STAMP.search(note)[1]
        m = re.fullmatch(r"(?:Dr\. \S+)|(?:.+, ([A-Z-]+))|(?:.+ \(([A-Z-]+)\))", who)
        assert m, who
        shown = m[1] or m[2]
        if shown is None:
            assert cred in ("MD", "DO"), (who, cred)
        else:
            assert shown == cred, (who, cred)
        seen[(bool(s["variant"]["distinct_documented"]), shown is None)] += 1
    assert len(seen) == 4 and min(seen.values()) > 20, seen


# -- domain review round 8b (salt billrev8-h10-e924d5, 40 fresh scenarios) -----------------
@pytest.mark.slow
def test_an_evaluation_overlapping_a_timed_service_shares_a_real_block(
        fresh: list[dict[str, Any]]) -> None:
    """Review round 8b, C1: beside an evaluation the overlap was drawn from 1 minute (17 of
    42 overlapping 1-2 minutes, seed 7007: re-evaluation 08:48-09:16, e-stim 09:14-09:36),
    which reads as a clock slip next to the separate story's 1-minute gap, so experts would
    appeal. Where the two overlap they now share 8+ minutes and at least half the timed
    service, which keeps 8+ of its own; the timed service has 16-22 minutes in every story."""
    seen = collections.Counter()
    for s in fresh:
        v, e = s["variant"], s["expected"]
        codes = (e["paid_code"], e["denied_code"])
        if v["family"] != "therapy" or not set(codes) & cat.EVALUATIONS \
                or set(codes) & set(cat.SITE_DECIDED):
            continue
        notes = {n.split("(")[1].split(")")[0]: n for n in _provider(s)["notes"][:2]}
        ev = next(c for c in codes if c in cat.EVALUATIONS)
        timed = next(c for c in codes if c != ev)
        (es, ee), (ts, te) = _interval(notes[ev]), _interval(notes[timed])
        overlap = min(ee, te) - max(es, ts)
        assert gen.EVAL_TIMED_MIN <= te - ts <= 22, (s["seed"], ts, te)
        if v["distinct_documented"]:
            assert overlap <= -1, (s["seed"], es, ee, ts, te)
        else:
            assert overlap >= 8 and 2 * overlap >= te - ts and te - ts - overlap >= 8, (
                s["seed"], es, ee, ts, te)
        seen[bool(v["distinct_documented"])] += 1
    assert min(seen.values()) > 20, seen


def _eob_lines(s: dict[str, Any]) -> list[dict[str, Any]]:
    return next(a for a in s["artifacts"]
                if a["type"] == "eob" and not a["distractor"])["data"]["lines"]


@pytest.mark.slow
def test_a_vaccine_line_has_no_cost_sharing(fresh: list[dict[str, Any]]) -> None:
    """Review round 8b, R1: the vaccine administration (90471, Z23) went to the deductible
    and coinsurance; an ACIP vaccine in network has no cost sharing (45 CFR 147.130,
    DOMAIN.md §9), in every branch."""
    n = 0
    for s in fresh:
        for line in _eob_lines(s):
            if line["hcpcs"] in gen.VACCINE_LINES:
                assert line["patient_responsibility"] == "0.00", s["seed"]
                assert line["deductible"] == line["coinsurance"] == line["copay"] == "0.00"
                assert not any(a["group"] == "PR" for a in line["adjustments"]), s["seed"]
                n += 1
    assert n > 10, n


@pytest.mark.slow
def test_a_lesion_wound_beside_a_repair_is_closed_by_its_own_procedure(
        fresh: list[dict[str, Any]]) -> None:
    """Review round 8b, S1: a 4.5-6.3 cm excision ellipse "closed with adhesive strips only"
    beside a sutured laceration, and a sutured shave-biopsy wound. Now the punch or excision
    note closes its own wound with simple sutures in both stories, nothing is strip-closed,
    and a shave biopsy is never beside a repair."""
    seen = collections.Counter()
    for s in fresh:
        prov = _provider(s)
        codes = {ln["hcpcs"] for ln in prov["lines"]}
        if not codes & set(cat.REPAIR_FITS):
            continue
        assert not codes & cat.SUTURED_NEVER, s["seed"]
        text = " ".join(prov["notes"])
        assert "adhesive strips" not in text, s["seed"]
        lesion = codes & set(gen.LESION_CLOSURE)
        if lesion:
            note = next(n for n in prov["notes"] if f"({next(iter(lesion))})" in n)
            assert gen.LESION_CLOSURE[next(iter(lesion))].strip() in note, note
            seen[bool(s["variant"]["distinct_documented"])] += 1
    assert min(seen.values()) > 10, seen


@pytest.mark.slow
def test_realism_fixes_of_review_round_8b(fresh: list[dict[str, Any]]) -> None:
    """S2: shoulder lesions up to 14 cm from the acromion; now at most 8. S3: IV hydration
    scheduled days after the visit for dehydration; now weekly saline for POTS (G90.A).
    R2: a punch biopsy of "an irregular pigmented lesion" then frozen as a wart; a biopsy
    beside wart destruction now names a verrucous papule (or "a lesion"). R3: thumb CMC
    osteoarthritis coded M19.04x; now M18.11/M18.12."""
    seen = collections.Counter()
    for s in fresh:
        prov = _provider(s)
        text = " ".join(prov["notes"])
        for d, unit in re.findall(r"(\d+) (cm|mm) from the acromion", text):
            assert int(d) // (10 if unit == "mm" else 1) <= 8, (s["seed"], text)
            seen["shoulder"] += 1
        codes = {ln["hcpcs"] for ln in prov["lines"]}
        if "96360" in codes:
            assert "dehydration" not in text and "G90.A" in prov["diagnoses"], s["seed"]
            seen["iv"] += 1
        if codes & cat.WART_CODES and codes & {"11102", "11104"}:
            assert "pigmented" not in text and "changing" not in text, (s["seed"], text)
            seen["wart"] += 1
        for ln, note in zip(prov["lines"], prov["notes"][:2], strict=True):
            if "CMC" not in note.split("History:")[0]:
                continue
            dxs = [prov["diagnoses"][ord(p) - ord("A")] for p in ln["diagnosis_pointers"]]
            own = note.split("History:")[0]
            side = "M18.11" if re.search(r"\b(right|R) thumb", own) else "M18.12"
            assert side in dxs, (s["seed"], note, dxs)  # (beside any pointers blurred on)
            seen["cmc"] += 1
    assert min(seen[k] for k in ("shoulder", "iv", "wart", "cmc")) > 5, seen
