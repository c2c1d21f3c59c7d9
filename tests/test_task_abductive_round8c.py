"""abductive_conflict, issue 8 round 8c: the relation cues round 8's independent red team
(rt10) read, each pinned over scenarios outside every split.

- Office visits: every other-practice assessor had another surname than the rendering
  clinician, so "the rendering clinician's surname in the entry and the entry dated the
  date of service -> distinct" read 1.000 of the office visits and the group's office list
  was never needed. Half of another practice's same-day assessors are now the rendering
  clinician's namesake (``generator.NAMESAKE_SHARE``), at an office not on the group's list.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.tasks.abductive_conflict import generator as gen
from clarus_env.tasks.abductive_conflict.heuristic import documented_distinct

TASK = "abductive_conflict"
STAMP = re.compile(r"(\d\d)/(\d\d)/(\d{4}) by (.+?), ([^,;]+);")
SEEDS = range(8_300_000, 8_304_000)


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    """4,000 scenarios outside every split."""
    ref = open_reference()
    return [compile_scenario(TASK, seed, ref) for seed in SEEDS]


def _provider(s: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in s["artifacts"]
                if a["type"] == "provider_record" and not a["distractor"])["data"]


def test_the_surname_and_date_rule_reads_chance_on_other_practice_visits(
        scenarios: list[dict[str, Any]]) -> None:
    """Among same-day office-visit entries that the visit did not manage (another practice's
    plan), "the rendering clinician's surname in the entry -> distinct" is right about half
    the time (it was always right), while the office against the group's list is always
    right; every namesake entry names an office off the group's list, under another first
    initial whenever it prints one."""
    hits = total = listed = namesakes = 0
    for s in scenarios:
        if s["variant"]["family"] != "em":
            continue
        prov = _provider(s)
        note = next(n for n in prov["notes"] if re.match(r"Line \d \(992", n))
        m = STAMP.search(note)
        assert m, note
        same_day = dt.date(int(m[3]), int(m[1]), int(m[2])).isoformat() == \
            prov["date_of_service"]
        distinct = s["variant"]["distinct_documented"]
        rendering = prov["provider"]["rendering_clinician"]
        first, surname = rendering.split(",")[0].split(" ", 1)
        offices = {gen.practice_short(o) for o in prov["provider"]["offices"]}
        assert distinct == (same_day and m[5] in offices), note
        if not same_day or distinct:
            continue
        total += 1
        rule = surname in m[4]
        hits += not rule
        listed += documented_distinct(prov) is False
        if rule:
            namesakes += 1
            assert m[5] not in offices
            assessor = m[4]
            if not assessor.startswith("Dr. "):  # "A. Rossi, NP" or "Rossi, Ana (DO)"
                initial = assessor[0] if assessor[1] == "." else assessor.split(", ")[1][0]
                assert initial != first[0], (assessor, rendering)
    assert total > 150, total
    assert 0.35 <= hits / total <= 0.65, hits / total
    assert listed == total
    assert namesakes > 50
