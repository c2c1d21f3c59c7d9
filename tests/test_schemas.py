"""schemas/ against the runtime: generated files are current, every schema is valid 2020-12,
and the env's action validation accepts exactly what action.schema.json accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from clarus_env.actions import ACTIONS, ActionError, validate
from clarus_env.schemas import SCHEMA_DIR, errors
from clarus_env.wire_schemas import stale


def test_generated_schema_files_are_current() -> None:
    assert stale() == [], "run: python -m clarus_env.wire_schemas --write"


@pytest.mark.parametrize("path", sorted(p.relative_to(SCHEMA_DIR).as_posix()
                                        for p in SCHEMA_DIR.rglob("*.json")))
def test_every_schema_is_valid_2020_12(path: str) -> None:
    doc = json.loads((SCHEMA_DIR / path).read_text())
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)
    assert doc["$id"].endswith(path)


def _valid_example(name: str) -> dict:
    params: dict = {}
    for p in ACTIONS[name].params:
        if p.type == "string":
            params[p.name] = p.enum[0] if p.enum else "X-1"
        elif p.type == "string_list":
            params[p.name] = ["A-1"]
        else:
            params[p.name] = "12.50"
    return {"action_type": name, "parameters": params}


CASES = [_valid_example(n) for n in sorted(ACTIONS)] + [
    {"action_type": "fetch_eob", "parameters": {}},
    {"action_type": "fetch_eob", "parameters": {"claim_id": ""}},
    {"action_type": "fetch_eob", "parameters": {"claim_id": "   "}},
    {"action_type": "fetch_eob", "parameters": {"claim_id": 7}},
    {"action_type": "fetch_eob", "parameters": {"claim_id": "C1", "x": 1}},
    {"action_type": "fetch_eob"},
    {"action_type": "nope", "parameters": {}},
    {"parameters": {}},
    {"action_type": "close_case", "parameters": {}, "extra": True},
    {"action_type": "check_deadline", "parameters": {"deadline_type": "tomorrow"}},
    {"action_type": "write_audit_entry", "parameters": {"summary": "x" * 4001}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": "EOB-1"}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": [1]}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": [], "amount": 12.5}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": [],
        "amount": "12.345"}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": [],
        "amount": "twelve"}},
    {"action_type": "write_diagnosis", "parameters": {
        "responsible_party": "insurer", "finding": "f", "cited_artifacts": [], "amount": True}},
    {"action_type": "draft_resolution", "parameters": {
        "resolution_type": "appeal", "cited_artifacts": ["A"] * 51}},
]


@pytest.mark.parametrize("action", CASES, ids=lambda a: json.dumps(a)[:60])
def test_runtime_and_schema_agree(action: dict) -> None:
    schema_ok = not errors("action.schema.json", action)
    try:
        validate(action)
        runtime_ok = True
    except ActionError:
        runtime_ok = False
    assert schema_ok == runtime_ok, (schema_ok, runtime_ok)


def test_observation_schema_matches_runtime_fields() -> None:
    from dataclasses import fields

    from clarus_env.env import Observation

    doc = json.loads((SCHEMA_DIR / "observation.schema.json").read_text())
    assert sorted(doc["required"]) == sorted(f.name for f in fields(Observation))


def test_schema_dir_is_the_repo_folder() -> None:
    assert Path(__file__).resolve().parents[1] / "schemas" == SCHEMA_DIR
