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
