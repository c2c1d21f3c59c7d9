"""schemas/coding_episode.schema.json: the compile-time check of every medical_coding scenario.

The schema writes its code patterns out in place (no ``$defs``/``$ref``: fastjsonschema turns a
``$ref`` into a call that formats its error path each time, which doubled validation cost), so
these tests pin what the shared definitions used to guarantee -- one ICD-10-CM and one CPT
pattern everywhere -- and that the fast validator the compiler runs and jsonschema itself give
the same verdict on real scenarios and on each kind of defect.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.schemas import SCHEMA_DIR, ScenarioSchemaError, validate_scenario

NAME = "coding_episode.schema.json"
ICD = "^[A-Z][0-9A-Z]{2}(\\.[0-9A-Z]{1,4})?$"
CPT = "^[0-9A-Z]{5}(-[0-9A-Z]{2})*$"


def _schema() -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / NAME).read_text())


def _patterns(node: Any, path: str = "") -> dict[str, str]:
    """Every ``pattern`` in the schema by the path of the schema node that holds it."""
    out: dict[str, str] = {}
    if isinstance(node, dict):
        if "pattern" in node:
            out[path] = node["pattern"]
        for k, v in node.items():
            out.update(_patterns(v, f"{path}/{k}"))
    elif isinstance(node, list):
        for n, v in enumerate(node):
            out.update(_patterns(v, f"{path}/{n}"))
    return out


def test_every_code_slot_carries_the_one_pattern_of_its_code_system() -> None:
    pats = _patterns(_schema())
    case = "/properties/cases/items/properties"
    icd_slots = {f"{case}/expected/properties/primary_icd10",
                 f"{case}/expected/properties/secondary_icd10s/items",
                 f"{case}/accept/properties/primary_icd10/items",
                 f"{case}/accept/properties/icd10/additionalProperties/items"}
    cpt_slots = {f"{case}/expected/properties/cpt_codes/items",
                 f"{case}/accept/properties/cpt/additionalProperties/items",
                 f"{case}/accept/properties/optional_cpt/items"}
    assert icd_slots <= pats.keys() and cpt_slots <= pats.keys()
    assert {pats[p] for p in icd_slots} == {ICD}
    assert {pats[p] for p in cpt_slots} == {CPT}
    others = {p: v for p, v in pats.items() if p not in icd_slots | cpt_slots}
    assert others == {"/properties/scenario_id": "^medical_coding-[0-9]+$",
                      f"{case}/accept/properties/optional_icd10/items": "^[A-Z][0-9A-Z]{2}"}
    assert not [p for p in _key_paths(_schema()) if p.endswith(("/$ref", "/$defs"))]


def _key_paths(node: Any, path: str = "") -> list[str]:
    """The path of every key in the schema."""
    if isinstance(node, dict):
        return [q for k, v in node.items()
                for q in [f"{path}/{k}", *_key_paths(v, f"{path}/{k}")]]
    if isinstance(node, list):
        return [q for n, v in enumerate(node) for q in _key_paths(v, f"{path}/{n}")]
    return []


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    """A compiled scenario whose cases carry accept alternatives of several kinds."""
    ref = open_reference()
    for seed in range(700_000, 700_400):
        sc = compile_scenario("medical_coding", seed, ref, validate=False)
        kinds = {k for c in sc["cases"] for k in c["accept"]}
        if {"cpt", "optional_icd10"} <= kinds:
            return sc
    raise AssertionError("no scenario in 400 seeds has cpt and optional_icd10 alternatives")


def _case_with(sc: dict[str, Any], key: str) -> dict[str, Any]:
    return next(c for c in sc["cases"] if key in c["accept"])


def _set(sc: dict[str, Any], edit: str) -> dict[str, Any]:
    """``sc`` with one defect of the kind ``edit`` names."""
    bad = copy.deepcopy(sc)
    c0 = bad["cases"][0]
    if edit == "primary lower case":
        c0["expected"]["primary_icd10"] = c0["expected"]["primary_icd10"].lower()
    elif edit == "primary without dot":
        c0["expected"]["primary_icd10"] = "E119X"
    elif edit == "secondary repeated":
        c0["expected"]["secondary_icd10s"] = ["I10", "I10"]
    elif edit == "secondary not a code":
        c0["expected"]["secondary_icd10s"] = ["hypertension"]
    elif edit == "cpt four digits":
        c0["expected"]["cpt_codes"] = ["9921"]
    elif edit == "cpt modifier of one character":
        c0["expected"]["cpt_codes"] = ["99213-2"]
    elif edit == "cpt repeated":
        c0["expected"]["cpt_codes"] = ["99213", "99213"]
    elif edit == "expected extra key":
        c0["expected"]["modifiers"] = []
    elif edit == "expected missing cpt":
        del c0["expected"]["cpt_codes"]
    elif edit == "accept cpt alternative bad":
        c = _case_with(bad, "cpt")
        key = next(iter(c["accept"]["cpt"]))
        c["accept"]["cpt"][key] = ["99213-"]
    elif edit == "accept icd10 alternative bad":
        c0["accept"]["icd10"] = {"E11.9": ["E11.9.1"]}
    elif edit == "accept primary not a list":
        c0["accept"]["primary_icd10"] = "I10"
    elif edit == "accept optional prefix bad":
        c = _case_with(bad, "optional_icd10")
        c["accept"]["optional_icd10"] = ["y92"]
    elif edit == "accept optional cpt bad":
        c0["accept"]["optional_cpt"] = ["J33O1X"]
    elif edit == "accept extra kind":
        c0["accept"]["modifiers"] = []
    elif edit == "age over 120":
        c0["patient_age"] = 121
    elif edit == "sex unknown":
        c0["patient_sex"] = "unknown"
    elif edit == "note too short":
        c0["clinical_note"] = "CC: cough."
    elif edit == "negated without code":
        c0["negated"] = [{"phrase": "fever"}]
    elif edit == "payer unknown":
        c0["payer"] = "medicaid"
    elif edit == "new_patient not boolean":
        c0["new_patient"] = "yes"
    elif edit == "two cases":
        bad["cases"] = bad["cases"][:2]
    elif edit == "order repeated":
        bad["order"] = ["easy", "easy", "hard"]
    elif edit == "top-level extra key":
        bad["answer"] = "I10"
    elif edit == "scenario id of another task":
        bad["scenario_id"] = "claim_denial-1"
    else:
        raise KeyError(edit)
    return bad


DEFECTS = ["primary lower case", "primary without dot", "secondary repeated",
           "secondary not a code", "cpt four digits", "cpt modifier of one character",
           "cpt repeated", "expected extra key", "expected missing cpt",
           "accept cpt alternative bad", "accept icd10 alternative bad",
           "accept primary not a list", "accept optional prefix bad", "accept optional cpt bad",
           "accept extra kind", "age over 120", "sex unknown", "note too short",
           "negated without code", "payer unknown", "new_patient not boolean", "two cases",
           "order repeated", "top-level extra key", "scenario id of another task"]


def test_compiled_scenarios_pass_both_validators(scenario: dict[str, Any]) -> None:
    ref = open_reference()
    reference = Draft202012Validator(_schema())
    for seed in [scenario["seed"], *range(700_400, 700_430)]:
        sc = compile_scenario("medical_coding", seed, ref, validate=False)
        validate_scenario(sc, NAME)
        assert list(reference.iter_errors(sc)) == [], seed


@pytest.mark.parametrize("edit", DEFECTS)
def test_each_defect_fails_both_validators_naming_the_place(scenario: dict[str, Any],
                                                            edit: str) -> None:
    bad = _set(scenario, edit)
    assert not Draft202012Validator(_schema()).is_valid(bad)
    with pytest.raises(ScenarioSchemaError) as exc:
        validate_scenario(bad, NAME)
    assert "medical_coding-" in str(exc.value) and NAME in str(exc.value)
