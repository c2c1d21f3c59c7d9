"""schemas/artifacts/*.schema.json against what the billing generators emit: every artifact in
every committed split bundle validates (fastjsonschema on whole scenarios, jsonschema on a
sample), each schema is valid 2020-12, and typical mistakes are rejected by both validators
with a message that names the offending path."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import fastjsonschema
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from jsonschema import Draft202012Validator

from clarus_env.scenario_store import SCENARIO_BUNDLES
from clarus_env.schemas import (
    SCHEMA_DIR,
    ScenarioSchemaError,
    errors,
    fast_validator,
    validate_scenario,
)
from clarus_env.splits import splits_for
from clarus_env.tasks import BILLING_TASKS

ARTIFACT_TYPES = sorted(p.name.removesuffix(".schema.json")
                        for p in (SCHEMA_DIR / "artifacts").glob("*.schema.json"))


@cache
def scenarios(task: str, split: str) -> tuple[dict[str, Any], ...]:
    path = SCENARIO_BUNDLES / task / f"{split}.arrow"
    table = ipc.open_file(pa.memory_map(str(path))).read_all()
    return tuple(json.loads(s) for s in table.column("scenario_json").to_pylist())


def records(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return scenario["artifacts"] + scenario["references"]


@cache
def sample_by_type() -> dict[str, dict[str, Any]]:
    """The first scenario-record of each artifact type, from the dev splits."""
    out: dict[str, dict[str, Any]] = {}
    for task in BILLING_TASKS:
        for sc in scenarios(task, "dev"):
            for rec in records(sc):
                out.setdefault(rec["type"], rec["data"])
    return out


def test_every_artifact_type_has_a_schema_and_samples() -> None:
    assert set(sample_by_type()) == set(ARTIFACT_TYPES)


@pytest.mark.parametrize("name", ARTIFACT_TYPES)
def test_artifact_schema_is_valid_2020_12(name: str) -> None:
    doc = json.loads((SCHEMA_DIR / "artifacts" / f"{name}.schema.json").read_text())
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"https://clarus.dev/schemas/artifacts/{name}.schema.json"
    Draft202012Validator.check_schema(doc)
    assert doc["type"] == "object" and doc["required"], "artifact data must require core fields"


@pytest.mark.parametrize("task", BILLING_TASKS)
@pytest.mark.parametrize("split", sorted(splits_for()))
def test_committed_bundle_validates_with_fastjsonschema(task: str, split: str) -> None:
    for sc in scenarios(task, split):
        validate_scenario(sc)  # raises ScenarioSchemaError naming the path


@pytest.mark.parametrize("task", BILLING_TASKS)
def test_committed_bundle_sample_validates_with_jsonschema(task: str) -> None:
    for split in sorted(splits_for()):
        rows = scenarios(task, split)
        for sc in rows[:: max(1, len(rows) // 40)]:
            assert errors("scenario.schema.json", sc) == [], (task, split, sc["seed"])
            for rec in records(sc):
                name = f"artifacts/{rec['type']}.schema.json"
                assert errors(name, rec["data"]) == [], (task, sc["seed"], rec["artifact_id"])


# -- negative cases ----------------------------------------------------------------------------
DROP = object()

# (artifact type, what is wrong, dotted path in data (integers index lists), new value or DROP)
NEGATIVE: list[tuple[str, str, str, Any]] = [
    ("claim_record", "money without cents", "total_billed", "12.5"),
    ("claim_record", "slash date", "date_of_service", "2026/01/02"),
    ("claim_record", "short HCPCS", "lines.0.hcpcs", "ABC"),
    ("claim_record", "bad ICD-10-CM", "diagnoses.0", "1234"),
    ("claim_record", "missing lines", "lines", DROP),
    ("claim_record", "unknown status", "status", "lost"),
    ("claim_record", "money as number", "lines.0.billed", 12.5),
    ("eob", "money with three decimals", "lines.0.allowed", "99.225"),
    ("eob", "CARC not a code", "lines.0.adjustments.0.carc", "CO-45"),
    ("eob", "unknown group code", "lines.0.adjustments.0.group", "XX"),
    ("eob", "extra key in a closed CAS adjustment", "lines.0.adjustments.0.ammount", "1.00"),
    ("eob", "missing totals", "totals", DROP),
    ("eob", "processed date not ISO", "processed_date", "09/14/2026"),
    ("provider_record", "charge with a dollar sign", "lines.0.charge", "$224.00"),
    ("provider_record", "missing statement", "statement", DROP),
    ("provider_record", "bad NPI", "provider.npi", "123"),
    ("payment_ledger", "unknown entry type", "entries.0.type", "credit"),
    ("payment_ledger", "month 13", "entries.0.date", "2026-13-01"),
    ("plan_document", "wrong metal level", "metal_level", "titanium"),
    ("plan_document", "copay without cents", "copays.primary_care", "25"),
    ("plan_document", "coinsurance as string", "coinsurance_pct", "20"),
    ("facility_record", "timestamp without Z", "portal_messages.0.timestamp",
     "2026-06-21T17:02:00"),
    ("facility_record", "missing npi", "npi", DROP),
    ("processor_log", "timestamp with offset", "transactions.0.timestamp",
     "2026-07-14T22:43:59+00:00"),
    ("processor_log", "unknown transaction type", "transactions.0.type", "chargeback"),
    ("processor_log", "last4 too long", "transactions.0.last4", "12345"),
    ("code_reference", "HCPCS with a suffix", "code", "99213a"),
    ("code_reference", "MUE adjudication indicator", "mue.mai", "4"),
    ("ncci_edit", "modifier indicator", "modifier_indicator", "2"),
    ("ncci_edit", "edit_exists as string", "edit_exists", "yes"),
    ("ncci_edit", "RARC-looking HCPCS", "column_2", "N20"),
    ("regulation", "unknown rule", "rule", "hipaa"),
    ("regulation", "extra key in a closed record", "note", "x"),
    ("deadline", "unknown deadline type", "deadline_type", "tomorrow"),
    ("deadline", "slash due date", "due_date", "2026/01/02"),
    ("deadline", "missing open", "open", DROP),
]
IDS = [f"{t}-{w.replace(' ', '_')}" for t, w, _, _ in NEGATIVE]


def mutate(data: dict[str, Any], path: str, value: Any) -> str:
    """Apply the mutation; return the path a validator should name ('/'-joined, '' = root):
    the value's own path, or its parent's for a missing or an unexpected key."""
    *parents, last = path.split(".")
    node: Any = data
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    key: Any = int(last) if isinstance(node, list) else last
    existed = isinstance(node, list) or key in node
    if value is DROP:
        del node[key]
    else:
        node[key] = value
    return "/".join(parents if value is DROP or not existed else [*parents, last])


def find(typ: str, path: str) -> tuple[dict[str, Any], str, int]:
    """A dev scenario holding a ``typ`` record that has ``path``'s first key (any ``typ``
    record when no record has it: the mutation adds an unexpected key): (scenario,
    'artifacts' or 'references', index)."""
    head = path.split(".")[0]
    for need_head in (True, False):
        for task in BILLING_TASKS:
            for sc in scenarios(task, "dev"):
                for group in ("artifacts", "references"):
                    for i, rec in enumerate(sc[group]):
                        if rec["type"] == typ and (head in rec["data"] or not need_head):
                            return sc, group, i
    raise AssertionError(f"no {typ} sample")


@pytest.mark.parametrize(("typ", "what", "path", "value"), NEGATIVE, ids=IDS)
def test_mistake_is_rejected_by_both_validators(typ: str, what: str, path: str,
                                                value: Any) -> None:
    name = f"artifacts/{typ}.schema.json"
    sc, group, i = find(typ, path)
    data = copy.deepcopy(sc[group][i]["data"])
    assert errors(name, data) == []
    where = mutate(data, path, value)

    problems = errors(name, data)
    assert [p for p in problems if p.split(": ", 1)[0] == (where or "(root)")], \
        (what, where, problems)

    with pytest.raises(fastjsonschema.JsonSchemaValueException) as exc:
        fast_validator(name)(data)
    assert "/".join(exc.value.path[1:]) == where, (what, exc.value.message)


@pytest.mark.parametrize(("typ", "what", "path", "value"), NEGATIVE[::3], ids=IDS[::3])
def test_mistake_inside_a_scenario_fails_compile_validation(typ: str, what: str, path: str,
                                                            value: Any) -> None:
    """Through the envelopes, as at compile time: the message names the artifact's path."""
    sc, group, i = find(typ, path)
    bad = copy.deepcopy(sc)
    where = mutate(bad[group][i]["data"], path, value)
    with pytest.raises(ScenarioSchemaError) as exc:
        validate_scenario(bad)
    assert f"{group}/{i}/data{'/' + where if where else ''}: " in str(exc.value), str(exc.value)
