"""The medical-coding catalog: size, structure, and every code valid in the committed bundle."""

from __future__ import annotations

import pytest

from clarus_env import open_reference
from clarus_env.tasks.medical_coding.catalog import (
    catalog_problems,
    load_catalog,
    procedure_statuses,
    with_seventh,
)


@pytest.fixture(scope="module")
def ref():
    return open_reference()


def test_catalog_is_valid_against_the_bundle(ref) -> None:
    assert catalog_problems(ref) == []


def test_catalog_size() -> None:
    cat = load_catalog()
    assert len({c["id"] for c in cat.conditions}) >= 150
    assert len({p["cpt"] for p in cat.procedures}) >= 40


def test_statuses_reported_and_mostly_payable(ref) -> None:
    statuses = procedure_statuses(ref)
    assert not {"D", "I", "?"} & set(statuses.values())
    assert sum(s == "A" for s in statuses.values()) >= 30


def test_seventh_character_padding() -> None:
    assert with_seventh("S93.401", "A") == "S93.401A"
    assert with_seventh("S01.01X", "D") == "S01.01XD"
    assert with_seventh("W19", "A") == "W19.XXXA"
    assert with_seventh("S06.0X0", "S") == "S06.0X0S"


def test_validator_catches_bad_codes(ref) -> None:
    cat = load_catalog()
    broken = dict(cat.conditions[0], id="broken", codes=["E11"])  # category, not billable
    bogus = dict(cat.procedures[0], id="bogus", cpt="00000")
    from dataclasses import replace

    bad = replace(
        cat,
        conditions=[*cat.conditions, broken],
        procedures=[*cat.procedures, bogus],
        by_id={**cat.by_id, "broken": broken},
        procedures_by_id={**cat.procedures_by_id, "bogus": bogus},
    )
    problems = catalog_problems(ref, bad)
    assert any("E11" in p and "not billable" in p for p in problems)
    assert any("00000" in p for p in problems)


def test_rules_and_constraints_cover_the_guidelines() -> None:
    cat = load_catalog()
    rules = " ".join(c["rule"] for c in cat.conditions)
    for needle in (
        "combination",
        "laterality",
        "7th character",
        "external cause",
        "history of vs current",
        "uncertain dx codes symptoms",
        "symptom integral",
        "sequela",
    ):
        assert needle in rules, needle
    sexes = {c["sex"] for c in cat.conditions}
    assert sexes == {"any", "female", "male"}
    for c in cat.conditions:
        if any(
            code.startswith(("O", "Z3A", "Z34")) for v in cat.variants(c) for code in v["codes"]
        ):
            assert c["sex"] == "female", c["id"]


def test_modifier_25_flags_match_ncci(ref) -> None:
    """Flagged as needing -25 on a same-day E/M <=> an NCCI edit pairs it with 99213."""
    for p in load_catalog().procedures:
        if p["kind"] not in ("procedure", "test", "vaccine"):
            continue
        edit = ref.ncci_edit(p["cpt"], "99213") or ref.ncci_edit("99213", p["cpt"])
        assert bool(edit) == p["em_needs_modifier_25"], p["id"]


# -- the catalog checks itself against the tabular (issue 9, item 1) ---------------------------
def test_no_synonym_belongs_to_another_code(ref) -> None:
    """Titles, Includes notes, inclusion terms and Excludes1 notes: a phrase the tabular gives
    to another code fails the build (e.g. 'sinus infection' is J32 by J32's Includes note)."""
    from clarus_env.tasks.medical_coding.tabular_check import synonym_problems

    assert synonym_problems(ref) == []


def _with(cat, cid: str, **changes):  # noqa: ANN001, ANN202
    from dataclasses import replace

    cond = {**cat.by_id[cid], **changes}
    conds = [cond if c["id"] == cid else c for c in cat.conditions]
    return replace(cat, conditions=conds, by_id={**cat.by_id, cid: cond})


@pytest.mark.parametrize(
    ("cid", "phrase", "wrong_code"),
    [
        ("sx_cough", "cough", "R05.1"),
        ("impetigo", "impetigo, nonbullous", "L01.00"),
        ("psoriasis", "psoriasis", "L40.0"),
        ("acute_sinusitis", "sinus infection", "J01.90"),
        ("acute_maxillary_sinusitis", "maxillary sinusitis", "J01.00"),
        ("atopic_dermatitis", "eczema", "L20.9"),
        ("sx_nausea_vomiting", "vomiting", "R11.2"),
        ("acute_bronchitis", "bronchitis", "J20.9"),
        ("uri", "common cold", "J06.9"),
        ("epidermal_cyst", "sebaceous cyst", "L72.0"),
        ("acne", "acne", "L70.0"),
        ("tinea_corporis", "ringworm", "B35.4"),
        ("sx_sob", "dyspnea", "R06.02"),
        ("sx_edema", "edema", "R60.0"),
    ],
)
def test_the_self_check_catches_each_reviewed_row(ref, cid: str, phrase: str,
                                                  wrong_code: str) -> None:
    """Put a reviewer's finding back (the phrase coded as before) and the check fails on it."""
    from clarus_env.tasks.medical_coding.tabular_check import synonym_problems

    cat = load_catalog()
    cond = cat.by_id[cid]
    special = {k: v for k, v in cond.get("synonym_codes", {}).items() if k != phrase}
    synonyms = cond["synonyms"] if phrase in cond["synonyms"] else [*cond["synonyms"], phrase]
    bad = _with(cat, cid, codes=[wrong_code], synonyms=synonyms, synonym_codes=special)
    problems = synonym_problems(ref, bad)
    assert any(p.startswith(f"condition {cid}: {phrase!r}") for p in problems), problems


def test_reviewed_rows_now_code_as_the_tabular_says() -> None:
    cat = load_catalog()
    by = cat.by_id

    def code(cid: str, synonym: str) -> list[str]:
        cond = by[cid]
        assert synonym in cond["synonyms"], (cid, synonym)
        return cat.codes_for(cond, cat.variants(cond)[0], None, synonym)

    # a symptom's words are drawn again for the CC, HPI and negations, so every synonym of a
    # symptom carries one code: the rows whose words meant another code were reworded
    assert code("sx_cough", "cough") == ["R05.9"]
    for cid, gone in (("sx_cough", "acute cough"), ("sx_nausea_vomiting", "vomiting"),
                      ("sx_sob", "dyspnea"), ("sx_dysuria", "painful urination"),
                      ("sx_edema", "edema"), ("sx_epigastric_pain", "upper abdominal pain"),
                      ("sx_sore_throat", "sore throat"), ("sx_chest_pain", "chest discomfort")):
        assert gone not in by[cid]["synonyms"] and not by[cid].get("synonym_codes"), cid
    assert code("impetigo", "impetigo, nonbullous") == ["L01.01"]
    assert code("psoriasis", "psoriasis") == ["L40.9"]
    assert code("psoriasis", "plaque psoriasis") == ["L40.0"]
    assert code("acute_sinusitis", "sinus infection") == ["J32.9"]
    assert code("acute_maxillary_sinusitis", "maxillary sinusitis") == ["J32.0"]
    assert code("atopic_dermatitis", "eczema") == ["L30.9"]
    assert code("acute_bronchitis", "bronchitis") == ["J40"]
    assert code("uri", "common cold") == ["J00"]
    assert code("contact_dermatitis", "irritant dermatitis") == ["L24.9"]
    assert code("epidermal_cyst", "sebaceous cyst") == ["L72.3"]
    # rows rewritten instead of re-coded
    assert not any("boil" in s for c in ("abscess_axilla", "abscess_leg")
                   for s in by[c]["synonyms"])  # a boil is a furuncle (L02.42-)
    assert not any("impaired fasting" in s for s in by["prediabetes"]["synonyms"])  # R73.01
    assert all("chronic" in s.lower() for s in by["hf_alone"]["synonyms"])  # I50.22 is chronic
    # W03 is a fall due to a collision; a collision without a fall is W51 (W03 Excludes1)
    collision = cat.causes_by_id["sports_collision"]
    assert collision["stem"].startswith("W03")
    assert all("fell" in p or "to the ground" in p for p in collision["phrases"])


def test_preventive_visit_with_vaccine_needs_modifier_25_by_ncci(ref) -> None:
    """90471 is paired with every preventive visit (indicator 1): the visit carries 25;
    Medicare's G0008 is not paired with them."""
    cat = load_catalog()
    admin = cat.procedures_by_id["vaccine_admin"]
    assert admin["em_needs_modifier_25"]
    for p in cat.procedures:
        if p["kind"].startswith("preventive"):
            edit = ref.ncci_edit(admin["cpt"], p["cpt"])
            assert edit is not None and edit["modifier_indicator"] == "1", p["cpt"]
            assert ref.ncci_edit(admin["medicare"], p["cpt"]) is None
            assert ref.ncci_edit(p["cpt"], admin["medicare"]) is None


def test_alternative_flags_match_the_bundle(ref) -> None:
    cat = load_catalog()
    for p in cat.procedures:
        if p.get("bilateral_without_50"):
            assert ref.rvu(p["cpt"])["bilat_surg"] == "2", p["id"]
        if p.get("medicare"):
            assert ref.rvu(p["medicare"])["status"] not in ("D", "I")
    # status N preventive codes are the ones a Medicare note may carry GY on
    assert ref.rvu("99397")["status"] == "N" and ref.rvu("99387")["status"] == "N"


def test_the_self_check_reads_a_side_off_before_comparing(ref) -> None:
    """'right conjunctivitis' is conjunctivitis NOS (H10.9, which has no side) on the right:
    coding it H10.31 (acute) fails; 'right carpal tunnel syndrome' (G56.00 is only the
    unspecified-side sibling) does not."""
    from clarus_env.tasks.medical_coding.tabular_check import synonym_problems

    cat = load_catalog()
    cond = cat.by_id["conjunctivitis"]
    bad = _with(cat, "conjunctivitis", synonyms=[*cond["synonyms"], "{side} conjunctivitis"])
    problems = synonym_problems(ref, bad)
    assert any("'right conjunctivitis' -> H10.31" in p and "H10.9" in p for p in problems)
    assert not any("carpal_tunnel" in p for p in problems)
