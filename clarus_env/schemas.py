"""JSON Schemas (draft 2020-12) from ``schemas/``: loading, and validating scenarios.

Validators are built once per process; a compiled scenario that does not match
``scenario.schema.json`` is a compiler bug and fails loudly at compile time.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
BASE_URI = "https://clarus.dev/schemas/"


class ScenarioSchemaError(ValueError):
    """A compiled scenario does not match its schema."""


@cache
def load(name: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / name).read_text())


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    resources = []
    for path in sorted(SCHEMA_DIR.rglob("*.json")):
        doc = json.loads(path.read_text())
        uri = doc.get("$id") or BASE_URI + path.relative_to(SCHEMA_DIR).as_posix()
        resources.append((uri, Resource.from_contents(doc)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())


def errors(name: str, instance: Any) -> list[str]:
    out = []
    for e in sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        out.append(f"{where}: {e.message}")
    return out


def _resolve(uri: str) -> dict[str, Any]:
    if not uri.startswith(BASE_URI):
        raise ValueError(f"schema reference outside schemas/: {uri}")
    return load(uri[len(BASE_URI):])


@cache
def fast_validator(name: str) -> Any:
    """The same schema compiled to Python by fastjsonschema: ~13x faster than jsonschema's
    interpreter, which is what lets every compiled scenario be validated without making the
    compiler the bottleneck. (Tests also run the files through jsonschema itself.)"""
    import fastjsonschema

    return fastjsonschema.compile(load(name), handlers={"https": _resolve})


# Envelopes whose ``allOf`` picks the data schema by the record's ``type`` (if/then chains).
_DISPATCHED = {"artifact.schema.json", "reference.schema.json"}


def _resolve_undispatched(uri: str) -> dict[str, Any]:
    doc = _resolve(uri)
    name = uri[len(BASE_URI):]
    if name in _DISPATCHED:
        return {k: v for k, v in doc.items() if k != "allOf"}
    return doc


@cache
def _dispatch_table(envelope: str) -> dict[str, str]:
    """type -> data schema file, read from the envelope's own if/then chain (so the fast path
    cannot drift from the file)."""
    table = {}
    for rule in load(envelope).get("allOf", []):
        kind = rule["if"]["properties"]["type"]["const"]
        ref = rule["then"]["properties"]["data"]["$ref"]
        table[kind] = ref
    return table


@cache
def _fast_undispatched(name: str) -> Any:
    import fastjsonschema

    return fastjsonschema.compile(load(name), handlers={"https": _resolve_undispatched})


def fast_validate(name: str, instance: dict[str, Any]) -> None:
    """``name`` validated like the full schema, but each record's ``data`` checked directly
    against its type's schema instead of through the envelope's if/then chain: fastjsonschema
    evaluates a failed ``if`` by raising, so the chain cost more than the checks it selects."""
    _fast_undispatched(name)(instance)
    for key, envelope in (("artifacts", "artifact.schema.json"),
                          ("references", "reference.schema.json")):
        table = _dispatch_table(envelope)
        for record in instance.get(key, ()):
            ref = table.get(record["type"])
            if ref is not None:
                fast_validator(ref)(record["data"])


def validate_scenario(scenario: dict[str, Any], name: str = "scenario.schema.json") -> None:
    import fastjsonschema

    try:
        fast_validate(name, scenario)
    except fastjsonschema.JsonSchemaException:
        problems = errors(name, scenario) or ["(fastjsonschema rejected it)"]
        raise ScenarioSchemaError(
            f"scenario {scenario.get('scenario_id')} does not match {name}: "
            + "; ".join(problems[:5])) from None
