"""abductive_conflict, issue 8 round 9: the domain review's findings (salt billrev9-h11-5a1c07),
each pinned over scenarios outside every split.

- Contestable (7158, 8560): another practice's same-day namesake of the rendering clinician
  printed as "Dr. <surname>" at an office in the billing town under another kind of
  practice ("Hampton FM" beside the group's "Hampton Primary Care") read as the rendering
  clinician writing their own office loosely. A "Dr. <surname>" namesake now practises only
  in a town of none of the group's offices, while the namesake share (and so the chance
  reading of "surname in the entry and dated the date of service -> distinct") is kept.
- An abscess drained (10060) at a named site and side is coded there (L02.212, L02.41-),
  never L02.91.
- The complaint says the insurer "processed" the paid line (its plan payment may be $0.00,
  all to the deductible), and its verbs agree with plural lay words ("the stitches ...
  were denied").
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.tasks.abductive_conflict import catalog as cat
from clarus_env.tasks.abductive_conflict import generator as gen
from tests.test_task_abductive_round8c import STAMP, _provider

TASK = "abductive_conflict"
SEEDS = range(9_400_000, 9_406_000)


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    """6,000 scenarios outside every split (about 1,000 office visits)."""
    ref = open_reference()
    return [compile_scenario(TASK, seed, ref) for seed in SEEDS]


def _claim(s: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in s["artifacts"] if a["type"] == "claim_record")["data"]


def test_a_dr_surname_namesake_never_practises_in_a_town_of_the_group(
        scenarios: list[dict[str, Any]]) -> None:
    """Every same-day entry printed "Dr. <the rendering clinician's surname>" that the visit
    did not manage names an office in a town of none of the group's offices (the billing
    town included), so the office list tells it from the rendering clinician's own entry;
    a namesake printed with a first initial may still work in the billing town, and the
    group's own "Dr. <surname>" entries do."""
    dr_namesakes = own_dr = initial_in_town = 0
    for s in scenarios:
        if s["variant"]["family"] != "em":
            continue
        prov = _provider(s)
        note = next(n for n in prov["notes"] if re.match(r"Line \d \(992", n))
        m = STAMP.search(note)
        assert m, note
        same_day = dt.date(int(m[3]), int(m[1]), int(m[2])).isoformat() == \
            prov["date_of_service"]
        surname = prov["provider"]["rendering_clinician"].split(",")[0].split(" ", 1)[1]
        towns = {gen._place_kind(o)[0] for o in prov["provider"]["offices"]}
        in_town = any(m[5].startswith(t + " ") for t in towns)
        distinct = s["variant"]["distinct_documented"]
        if m[4] == f"Dr. {surname}":
            if same_day and not distinct:
                dr_namesakes += 1
                assert not in_town, (s["seed"], m[4], m[5], towns)
            else:
                own_dr += 1
                assert in_town, (s["seed"], m[4], m[5], towns)
        elif same_day and not distinct and surname in m[4] and in_town:
            initial_in_town += 1
    assert dr_namesakes > 10, dr_namesakes
    assert own_dr > 30, own_dr
    assert initial_in_town > 10, initial_in_town


def test_an_abscess_is_coded_at_its_documented_site_and_side(
        scenarios: list[dict[str, Any]]) -> None:
    """A drained abscess's diagnosis is the ICD-10-CM code of the site and side its note
    names (billable in the bundle, not a header), never L02.91 (unspecified)."""
    ref = open_reference()
    for code in set(cat.ABSCESS_DX.values()):
        node = ref.icd10cm(code)
        assert node is not None and node["billable"], code
        assert "abscess" in node["description"].lower(), node
    seen = 0
    for s in scenarios:
        if "10060" not in s["variant"]["pair"]:
            continue
        text = " ".join(_provider(s)["notes"])
        site = re.search(r"abscess on the ([a-z ]+?)(?:[;.,]| \()", text)
        assert site, text
        dxs = [d for d in _claim(s)["diagnoses"] if d.startswith("L02")]
        assert dxs == [cat.ABSCESS_DX[site[1]]], (s["seed"], site[1], dxs)
        seen += 1
    assert seen > 20, seen


def test_the_complaint_never_says_paid_for_and_agrees_in_number(
        scenarios: list[dict[str, Any]]) -> None:
    """No complaint says the insurer "paid for" a line (review: 21 of 160 said so where the
    plan paid $0.00), and a plural lay name takes "were"/"they", a singular "was"/"it"."""
    plural = singular = 0
    for s in scenarios:
        text = s["case"]["patient_complaint"]
        assert "paid for the" not in text, text
        m = re.search(r"The (.+?) I had on .+? (was|were) denied", text)
        if m:
            assert (m[2] == "were") is gen._plural(m[1]), text
            plural += m[2] == "were"
            singular += m[2] == "was"
        m = re.search(r"says the (.+?) from my .+? visit (was|were) 'bundled' and they paid "
                      r"nothing for (it|them)\.", text)
        if m:
            assert (m[2], m[3]) == (("were", "them") if gen._plural(m[1]) else ("was", "it"))
    assert plural > 5 and singular > 50, (plural, singular)
    assert gen._plural("stitches on my face") and gen._plural("trigger point injections")
    assert not gen._plural("paraffin bath") and not gen._plural("therapeutic exercise")
