"""abductive_conflict, issue 8 round 7: the office-visit cues round 6's red team read, each
pinned by its law over scenarios outside every split (so a split's chance draw cannot hide
a regression).

- The carried-forward entry's day of the month: round 6 kept the earlier visit in the date
  of service's month, so every carried-forward entry was dated early in its month (62 of 112
  entries of the visits that were not distinct dated the 10th or earlier on train, against
  29 of 112). Earlier visits are now 2-5 business days back, in this month or the last.
- "Another group in town": the billing name's place word under another kind of practice
  named only another group (31% of the visits that were not distinct, none of the others).
  Half of the groups now run an office in their own town under another kind, and an entry of
  this group naming another office names that one where it exists.
- Domain review round 7: an evaluation beside a timed service, not distinct, left the timed
  service under 8 minutes of its own (a corrected claim for the evaluation was as right as
  the denial); another practice's name in the billing town was a synonym of the billing
  office's ("Southpoint FP" beside "Southpoint Family Medicine").
"""

from __future__ import annotations

import collections
import datetime as dt
import math
import random
import re
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.scenario_store import load_scenario
from clarus_env.splits import seeds
from clarus_env.tasks.abductive_conflict import generator as gen
from clarus_env.tasks.us_calendar import is_business_day

TASK = "abductive_conflict"
# the E/M entry's stamp: date, assessor, practice (as in test_task_abductive_conflict.STAMP)
STAMP = re.compile(r"(\d\d)/(\d\d)/(\d{4}) by (.+?), ([^,;]+); [a-z' ]+note(?: by ([^)]+))?\)")


@pytest.fixture(scope="module")
def visits() -> list[dict[str, Any]]:
    """Every office-visit scenario among 3,000 seeds outside every split: its date of
    service, the entry's date, whether the entry is the rendering clinician's (this group)
    and where it was made, against the billing practice and its offices."""
    ref = open_reference()
    out = []
    for seed in range(7_100_000, 7_103_000):
        s = compile_scenario(TASK, seed, ref)
        if s["variant"]["family"] != "em":
            continue
        prov = next(a for a in s["artifacts"]
                    if a["type"] == "provider_record" and not a["distractor"])["data"]
        note = next(n for n in prov["notes"] if re.match(r"Line \d \(992", n))
        m = STAMP.search(note)
        assert m, note
        rendering = prov["provider"]["rendering_clinician"]
        surname = rendering.split(",")[0].split(" ", 1)[1]
        out.append({"dos": dt.date.fromisoformat(prov["date_of_service"]),
                    "entry": dt.date(int(m[3]), int(m[1]), int(m[2])),
                    "distinct": s["variant"]["distinct_documented"],
                    # this group's entry: made at an office on its list (round 8c: another
                    # practice's assessor may be the rendering clinician's namesake)
                    "mine": m[5] in {gen.practice_short(o) for o in prov["provider"]["offices"]},
                    "surname_in": surname in m[4], "where": m[5],
                    "billing": prov["provider"]["name"],
                    "history": {h["date_of_service"]
                                for h in prov["statement"]["account_history"]}})
    assert len(out) > 500, len(out)
    return out


def _within(k1: int, n1: int, k2: int, n2: int, sigmas: float = 3.0) -> bool:
    """Two shares equal within ``sigmas`` standard errors of their difference."""
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 1e-9) * (1 / n1 + 1 / n2))
    return abs(k1 / n1 - k2 / n2) <= sigmas * se


def test_the_entry_day_of_the_month_has_one_law(visits: list[dict[str, Any]]) -> None:
    """The entry's day of the month is drawn alike whether the visit managed the problem or
    not: the share dated in each third of the month agrees within 3 s.e., and so does the
    carried-forward entries' (the earlier visit's) with the dates of service's. Each
    carried-forward entry is 2-5 business days back and in the account history."""
    back = [v for v in visits if v["entry"] != v["dos"]]
    assert len(back) > 100, len(back)
    for v in back:
        assert not v["distinct"] and v["mine"]
        business = [d for d in (v["dos"] - dt.timedelta(days=k) for k in range(1, 15))
                    if is_business_day(d)]
        assert v["entry"] in business[1:5], (v["dos"], v["entry"])
        assert v["entry"].isoformat() in v["history"]
    for lo, hi in ((1, 10), (11, 20), (21, 31)):
        def count(rows: list[dict[str, Any]], key: str) -> int:
            return sum(lo <= r[key].day <= hi for r in rows)  # noqa: B023
        yes = [v for v in visits if v["distinct"]]
        no = [v for v in visits if not v["distinct"]]
        assert _within(count(yes, "entry"), len(yes), count(no, "entry"), len(no)), (lo, hi)
        assert _within(count(back, "entry"), len(back), count(visits, "dos"), len(visits)), \
            (lo, hi, count(back, "entry") / len(back))


def test_an_office_in_the_billing_town_is_as_often_this_groups(
        visits: list[dict[str, Any]]) -> None:
    """Among entries that do not name the billing office itself, the share naming the
    billing name's town under another kind of practice is the same for this group's entries
    (its office in its own town) as for another practice's (another group in that town),
    within 3 s.e. Such an office is never the billing office, and another practice's entry
    never names an office of the group's list."""
    counts = {True: [0, 0], False: [0, 0]}
    for v in visits:
        home = gen.practice_short(v["billing"])
        if v["where"] == home:
            assert v["mine"]
            continue
        place = gen._place_kind(v["billing"])[0]
        town = v["where"].startswith(place + " ")
        counts[v["mine"]][0] += town
        counts[v["mine"]][1] += 1
    (k1, n1), (k2, n2) = counts[True], counts[False]
    assert n1 > 100 and n2 > 100, (n1, n2)
    assert _within(k1, n1, k2, n2), (k1 / n1, k2 / n2)
    assert 0.35 <= k1 / n1 <= 0.65, k1 / n1


def test_another_practice_never_takes_a_group_office_name() -> None:
    """A group's office in its own town is of another kind than the billing office (one
    name, one office), and an entry of another practice never names one of the group's
    offices, while this group's entries always do (and are the rendering clinician's)."""
    rng = random.Random(7)
    dos = dt.date(2026, 4, 15)
    rendering = "Dana Reyes, DO"
    for _ in range(3000):
        home = f"{rng.choice(gen.PLACES)} {rng.choice(gen.EM_KINDS)}"
        offices = gen._group_offices(home, gen.EM_KINDS, rng)
        assert len({gen._place_kind(o) for o in offices}) == len(offices), offices
        stamp, _ = gen._assessed_stamp(rng.random() < 0.5, dos, rendering, offices,
                                       gen.EM_KINDS, rng)
        m = STAMP.search(f"({stamp})")
        assert m, stamp
        # this group's entries are the rendering clinician's; another practice's assessor
        # may be a namesake (round 8c), never of the same first initial
        if m[5] in {gen.practice_short(o) for o in offices}:
            assert m[4] in ("D. Reyes, DO", "Reyes, Dana (DO)", "Dr. Reyes"), stamp
        else:
            assert m[4] not in ("D. Reyes, DO", "Reyes, Dana (DO)"), stamp


def test_dates_of_service_are_spread_alike_in_every_cell() -> None:
    """The date of service is a stratified draw within each (branch, family) cell of a split
    (``generator._date_slot``): in every split and family, the indicator-1 scenarios that
    document a distinct service and those that do not have about as many dates of service in
    each month (within 4; two cells a side, each within one of its share). Round 6's train
    split drew them at random: its office visits that were not distinct had 16 April dates
    against 28."""
    for split in ("train", "dev", "test"):
        months: dict[tuple[str, bool], collections.Counter[str]] = collections.defaultdict(
            collections.Counter)
        for seed in seeds(split, TASK):
            s = load_scenario(TASK, seed)
            v = s["variant"]
            if v["branch"] not in ("b", "c", "a1m", "a1n"):
                continue
            claim = next(a for a in s["artifacts"]
                         if a["type"] == "claim_record" and not a["distractor"])["data"]
            months[(v["family"], v["distinct_documented"])][claim["date_of_service"][5:7]] += 1
        for fam in ("em", "proc", "therapy"):
            yes, no = months[(fam, True)], months[(fam, False)]
            assert sum(yes.values()) > 10, (split, fam)
            for m in set(yes) | set(no):
                assert abs(yes[m] - no[m]) <= 4, (split, fam, m, yes[m], no[m])


# a biopsy or an excision beside a simple repair of a wound (the lesion-and-repair stories)
LESION_CODES = frozenset(c for codes in gen.cat.REPAIR_FITS.values() for c in codes)
REPAIRS = frozenset(gen.cat.REPAIR_FITS)


@pytest.fixture(scope="module")
def repair_stories() -> list[dict[str, Any]]:
    """Every lesion-and-repair scenario among 6,000 seeds outside every split: whether the
    repair was distinct, the claim's diagnoses and the repair line's note."""
    ref = open_reference()
    out = []
    for seed in range(7_200_000, 7_206_000):
        s = compile_scenario(TASK, seed, ref)
        if s["variant"]["family"] != "proc":
            continue
        prov = next(a for a in s["artifacts"]
                    if a["type"] == "provider_record" and not a["distractor"])["data"]
        codes = {ln["hcpcs"] for ln in prov["lines"]}
        repair = codes & REPAIRS
        if not repair or not codes & LESION_CODES:
            continue
        claim = next(a for a in s["artifacts"]
                     if a["type"] == "claim_record" and not a["distractor"])["data"]
        note = next(n for n in prov["notes"] if n.startswith("Line ")
                    and f"({next(iter(repair))})" in n)
        out.append({"distinct": s["variant"]["distinct_documented"],
                    "dxs": list(claim["diagnoses"]), "note": note})
    assert sum(r["distinct"] for r in out) > 60 and sum(not r["distinct"] for r in out) > 60
    return out


@pytest.mark.slow
def test_a_laceration_is_on_the_claim_in_both_repair_stories(
        repair_stories: list[dict[str, Any]]) -> None:
    """Round 7's last cue: a repair of a separate laceration put its S-code (initial
    encounter) on the claim and a repair of the excision's own wound put none, so an S-code
    said "distinct" without reading the notes (95 of 550 distinct procedure stories against
    0 of 552). Both stories now have a laceration and the biopsy or excision wound (round
    8b: the lesion's wound sutured by its own procedure, the repair line on one of the two),
    and the claim lists the laceration in both:
    the share of claims with an S-code, and the number of diagnoses, have one law."""
    by = {b: [r for r in repair_stories if r["distinct"] is b] for b in (True, False)}
    lac = {b: sum(any(d.startswith("S") for d in r["dxs"]) for r in rs)
           for b, rs in by.items()}
    assert lac[True] == len(by[True]) and lac[False] == len(by[False]), lac
    for n in range(2, 6):
        k = {b: sum(len(r["dxs"]) == n for r in rs) for b, rs in by.items()}
        assert _within(k[True], len(by[True]), k[False], len(by[False])), (n, k)


@pytest.mark.slow
def test_the_repair_note_has_one_vocabulary(repair_stories: list[dict[str, Any]]) -> None:
    """Which wound the sutures closed is told only by where the repair was done, against the
    lesion's and the laceration's places: no word of the repair line's note occurs in one
    story only (beyond the odd word of a drawn site or history remark), and the note names
    the laceration and its dressing in both (round 8b: no wound is strip-closed)."""
    words = {b: collections.Counter() for b in (True, False)}
    count = {True: 0, False: 0}
    for r in repair_stories:
        assert "laceration on the" in r["note"] and "cleaned and dressed" in r["note"], r
        count[r["distinct"]] += 1
        words[r["distinct"]].update(set(re.findall(r"[a-z]+", r["note"].lower())))
    for word in set(words[True]) | set(words[False]):
        assert _within(words[True][word], count[True], words[False][word], count[False],
                       sigmas=4.0), (word, words[True][word], words[False][word], count)


# -- domain review round 7 ------------------------------------------------------------------
def _interval(note: str) -> tuple[int, int]:
    """A therapy line's (start, end) minute, from any of its three written forms."""
    m = re.search(r"(\d\d):(\d\d)(?:–| to )(\d\d):(\d\d)", note)
    if m:
        h1, m1, h2, m2 = map(int, m.groups())
        return h1 * 60 + m1, h2 * 60 + m2
    m = re.search(r"(\d\d):(\d\d) for (\d+) min|(\d+) min starting (\d\d):(\d\d)", note)
    if m:
        g = [int(x) for x in m.groups() if x is not None]
        hh, mm, n = (g[0], g[1], g[2]) if m.group(1) else (g[1], g[2], g[0])
        return hh * 60 + mm, hh * 60 + mm + n
    m = re.search(r"(\d+) min(?: ending|, finished) (\d\d):(\d\d)", note)
    assert m, note
    n, hh, mm = map(int, m.groups())
    return hh * 60 + mm - n, hh * 60 + mm


@pytest.fixture(scope="module")
def round7_fresh() -> list[dict[str, Any]]:
    """2,000 scenarios outside every split."""
    ref = open_reference()
    return [compile_scenario(TASK, seed, ref) for seed in range(7_300_000, 7_302_000)]


@pytest.mark.slow
def test_an_evaluation_beside_a_timed_service_leaves_it_its_unit(
        round7_fresh: list[dict[str, Any]]) -> None:
    """Review round 7: an evaluation (97161-97164, untimed) with a timed service wholly
    inside it left the timed service fewer than 8 minutes of its own, so under the 8-minute
    rule (Pub. 100-04 ch. 5 20.2) the paid timed line was the one not billable and a
    corrected claim for the evaluation was as defensible as "legitimate denial". Now, in
    every story that is not distinct, the two overlap and the timed service keeps 8+ minutes
    outside the evaluation (its unit stands; the evaluation had no separate interval, so the
    NCCI denial stands); distinct stories are separate intervals. Neither story shares a
    printed clock time."""
    seen = collections.Counter()
    for s in round7_fresh:
        v, e = s["variant"], s["expected"]
        codes = (e["paid_code"], e["denied_code"])
        if v["family"] != "therapy" or not set(codes) & gen.cat.EVALUATIONS \
                or set(codes) & set(gen.cat.SITE_DECIDED):
            continue
        prov = next(a for a in s["artifacts"]
                    if a["type"] == "provider_record" and not a["distractor"])["data"]
        notes = {n.split("(")[1].split(")")[0]: n for n in prov["notes"][:2]}
        evaluation = next(c for c in codes if c in gen.cat.EVALUATIONS)
        timed = next(c for c in codes if c != evaluation)
        (es, ee), (ts, te) = _interval(notes[evaluation]), _interval(notes[timed])
        overlap = min(ee, te) - max(es, ts)
        assert not {es, ee} & {ts, te}, s["seed"]
        if v["distinct_documented"]:
            assert overlap < 0, s["seed"]
        else:
            assert overlap >= 1 and (te - ts) - overlap >= 8, (s["seed"], es, ee, ts, te)
            if v["modifier_indicator"] == "1":
                assert e["finding"] == "legitimate_denial"
        seen[(v["branch"], v["distinct_documented"])] += 1
    assert sum(n for (b, d), n in seen.items() if b in ("a1m", "a1n")) >= 20, seen
    assert sum(n for (b, d), n in seen.items() if b in ("b", "c")) >= 20, seen
    rng = random.Random(11)  # the clock itself, over many draws
    for _ in range(20000):
        m1, m2 = gen._therapy_minutes("97124", "97164", rng)
        forms = (rng.randrange(len(gen.INTERVAL_FORMS)), rng.randrange(len(gen.INTERVAL_FORMS)))
        t1, t2 = gen._evaluation_clock(m1, m2, False, False, rng, forms)
        overlap = min(t1 + m1, t2 + m2) - max(t1, t2)
        assert overlap >= 1 and m1 - overlap >= 8, (m1, m2, t1, t2)


def _same_class(a: str, b: str) -> bool:
    return gen.KIND_CLASS[gen._place_kind(a)[1]] == gen.KIND_CLASS[gen._place_kind(b)[1]]


def test_no_two_practices_in_one_town_are_of_synonymous_kinds(
        visits: list[dict[str, Any]]) -> None:
    """Review round 7: "Southpoint FP" in an entry beside the billing "Southpoint Family
    Medicine", "Oakmont FM" beside "Oakmont Family Practice", "Harbor UC" beside "Harbor
    Walk-In Urgent Care" read as one office. Another practice, or the group's own office, in
    the billing town is of another class of practice (``KIND_CLASS``): over fresh office
    visits and over 3,000 draws of a group's offices and an entry, for every set of kinds."""
    shorts = {gen.practice_short(f"X {k}").removeprefix("X "): k for k in gen.EM_KINDS}
    for v in visits:
        place, kind = gen._place_kind(v["billing"])
        if v["where"] == gen.practice_short(v["billing"]) or \
                not v["where"].startswith(place + " "):
            continue
        other = shorts[v["where"].removeprefix(place + " ")]
        assert gen.KIND_CLASS[other] != gen.KIND_CLASS[kind], (v["billing"], v["where"])
    rng = random.Random(5)
    dos = dt.date(2026, 4, 15)
    for _ in range(3000):
        kinds = rng.choice((gen.EM_KINDS, gen.FAMILY_KINDS))
        home = f"{rng.choice(gen.PLACES)} {rng.choice(kinds)}"
        offices = gen._group_offices(home, kinds, rng)
        place = gen._place_kind(home)[0]
        town = [o for o in offices if gen._place_kind(o)[0] == place]
        assert all(not _same_class(a, b) for a in town for b in town if a != b), offices
        stamp, _ = gen._assessed_stamp(False, dos, "Dana Reyes, DO", offices, kinds, rng)
        m = STAMP.search(f"({stamp})")
        assert m, stamp
        if m[5].startswith(place + " ") and "Reyes" not in m[4]:
            kind = shorts[m[5].removeprefix(place + " ")]
            assert all(gen.KIND_CLASS[kind] != gen.KIND_CLASS[gen._place_kind(o)[1]]
                       for o in town), (stamp, offices)


@pytest.mark.slow
def test_record_fixes_of_review_round_7(round7_fresh: list[dict[str, Any]]) -> None:
    """F1 hand dominance is stated once per patient; F2 tympanometry's otitis media is coded
    by the ear the note names; F3 a back laceration beside a lesion by its side of the
    spine; F9 contact dermatitis is L25.9."""
    ears = backs = 0
    for s in round7_fresh:
        prov = next(a for a in s["artifacts"]
                    if a["type"] == "provider_record" and not a["distractor"])["data"]
        claim = next(a for a in s["artifacts"]
                     if a["type"] == "claim_record" and not a["distractor"])["data"]
        text = " ".join(prov["notes"])
        dxs = claim["diagnoses"]
        assert len(re.findall(r"-hand dominant", text)) <= 1, text
        assert "L30.9" not in dxs
        if "contact dermatitis" in text:
            assert "L25.9" in dxs
        tymp = next((n for n in prov["notes"] if "(92567)" in n), "")
        if tymp:
            side = re.search(r"[Tt]ympanometry, [^:]*?\b(right|left|R|L)\b", tymp)
            assert side, tymp
            want = "H65.91" if side[1] in ("right", "R") else "H65.92"
            assert want in dxs, (tymp, dxs)
            ears += 1
        lac = re.search(r"a laceration on the (?:upper|mid) back, (right|left|R|L) of", text)
        if lac:
            want = "S21.211A" if lac[1] in ("right", "R") else "S21.212A"
            assert want in dxs and "S21.219A" not in dxs, (lac[0], dxs)
            backs += 1
    assert ears >= 1 and backs >= 5, (ears, backs)  # 92567 pairs are rare (2 in 2,000)
# a printed clock time, read from the digit runs as a red team reads them
CLOCK_RUNS = re.compile(r"\b(\d\d):(\d\d)\b")


@pytest.fixture(scope="module")
def therapy_clocks() -> list[dict[str, Any]]:
    """Every therapy scenario among 4,000 seeds outside every split: whether the second
    service was distinct, and each line note's digit runs and printed clock times."""
    ref = open_reference()
    out = []
    for seed in range(7_300_000, 7_304_000):
        s = compile_scenario(TASK, seed, ref)
        if s["variant"]["family"] != "therapy":
            continue
        prov = next(a for a in s["artifacts"]
                    if a["type"] == "provider_record" and not a["distractor"])["data"]
        notes = [n.split(": ", 1)[1] for n in prov["notes"][:2]]
        out.append({"distinct": bool(s["variant"]["distinct_documented"]),
                    "runs": [set(re.findall(r"\d+", n)) for n in notes],
                    "clocks": [[60 * int(h) + int(m) for h, m in CLOCK_RUNS.findall(n)]
                               for n in notes]})
    assert sum(r["distinct"] for r in out) > 100 and sum(not r["distinct"] for r in out) > 100
    return out


# the residual difference a share may show between the stories (over 20,000 draws of two
# timed services: a printed hour in common 0.878 against 0.914): an overlap can print two
# times under 6 minutes apart, which no separate layout prints (start-only notes are at
# least the first service's 8+ minutes apart), 15% of overlaps against 4% of separate ones
RESIDUAL = 0.05


@pytest.mark.slow
def test_the_therapy_clock_hours_have_one_law(therapy_clocks: list[dict[str, Any]]) -> None:
    """Round 7's red team: "the two therapy notes print no clock hour in common -> distinct"
    passed 0.600 of test (bar 0.546): overlapping services fit inside one hour (89% shared
    an hour) and separate ones spanned 23-90 minutes (57%); separate sessions also ran later
    (a printed time at 18:00 or after: 7% against 3%). Read from the notes' digit runs (not
    whole "HH:MM" strings), each of these has one law in both stories, within 3 s.e.: a
    printed hour in common, any digit run in common, the hours between the earliest and the
    latest printed time (0, 1, 2+), the latest printed time's hour, and the quarter of the
    hour of the earliest and of the latest printed time (or within ``RESIDUAL``; round 7's
    clock: no hour in common 0.43 against 0.10, the first try's earliest quarter 0.31
    against 0.13)."""
    by = {b: [r for r in therapy_clocks if r["distinct"] is b] for b in (True, False)}

    def hours(r: dict[str, Any], i: int) -> set[int]:
        return {t // 60 for t in r["clocks"][i]}

    features = {
        "shared hour": lambda r: bool(hours(r, 0) & hours(r, 1)),
        "shared digit run": lambda r: bool(r["runs"][0] & r["runs"][1]),
        "hour difference": lambda r: min(2, max(hours(r, 0) | hours(r, 1))
                                         - min(hours(r, 0) | hours(r, 1))),
        "latest hour": lambda r: max(hours(r, 0) | hours(r, 1)),
        # the quarter of the hour of the earliest and of the latest printed time (drawing
        # the hour relation first and placing the session to match moved the cue here:
        # overlaps crossing an o'clock began late in the hour)
        "earliest quarter": lambda r: min(r["clocks"][0] + r["clocks"][1]) % 60 // 15,
        "latest quarter": lambda r: max(r["clocks"][0] + r["clocks"][1]) % 60 // 15,
    }
    for name, f in features.items():
        counts = {b: collections.Counter(map(f, rs)) for b, rs in by.items()}
        for value in set(counts[True]) | set(counts[False]):
            k = (counts[True][value], counts[False][value])
            assert (_within(k[0], len(by[True]), k[1], len(by[False]))
                    or abs(k[0] / len(by[True]) - k[1] / len(by[False])) <= RESIDUAL), (
                name, value, k)
    # and the late day, as the red team cut it
    late = {b: sum(max(hours(r, 0) | hours(r, 1)) >= 18 for r in rs) for b, rs in by.items()}
    assert _within(late[True], len(by[True]), late[False], len(by[False])), late
