"""Generate the action and observation JSON Schemas in ``schemas/`` from the runtime's own
specs, so the files a client reads and the validation the env applies cannot drift apart
(``python -m clarus_env.wire_schemas --write``; a test fails when the files are stale)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .actions import ACTIONS, CODING_ACTIONS, ActionSpec, action_schema
from .schemas import SCHEMA_DIR

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://clarus.dev/schemas/"


def action_envelope(specs: dict[str, ActionSpec] = ACTIONS, file: str = "action.schema.json",
                    title: str = "Billing-arena action") -> dict[str, Any]:
    return {
        "$schema": DRAFT, "$id": BASE + file,
        "title": title,
        "description": "Every action is {action_type, parameters}; parameters follow "
                       "actions/<action_type>.schema.json.",
        "type": "object", "required": ["action_type"], "additionalProperties": False,
        "properties": {"action_type": {"enum": sorted(specs)},
                       "parameters": {"type": "object"}},
        "allOf": [{"if": {"properties": {"action_type": {"const": name}}},
                   "then": {"properties": {"parameters": {
                       "$ref": f"actions/{name}.schema.json"}},
                       **({"required": ["parameters"]}
                          if any(p.required for p in specs[name].params) else {})}}
                  for name in sorted(specs)],
    }


def coding_observation_schema() -> dict[str, Any]:
    return {
        "$schema": DRAFT, "$id": BASE + "coding_observation.schema.json",
        "title": "Medical-coding observation",
        "type": "object", "additionalProperties": False,
        "required": ["task_name", "step_number", "api_calls_used", "api_call_budget",
                     "patient_age", "patient_sex", "clinical_note", "feedback",
                     "remaining_tasks", "last_action_type", "last_action_result",
                     "last_action_error", "step_reward", "done"],
        "properties": {
            "task_name": {"const": "medical_coding"},
            "step_number": {"type": "integer", "minimum": 0},
            "api_calls_used": {"type": "integer", "minimum": 0},
            "api_call_budget": {"type": "integer", "minimum": 1},
            "patient_age": {"type": ["integer", "null"], "minimum": 0},
            "patient_sex": {"enum": ["female", "male", None]},
            "clinical_note": {"type": "string"},
            "feedback": {"type": "string"},
            "remaining_tasks": {"type": "integer", "minimum": 0, "maximum": 3},
            "last_action_type": {"type": ["string", "null"]},
            "last_action_result": {"type": ["object", "null"]},
            "last_action_error": {"type": ["string", "null"]},
            "step_reward": {"description": "A submission's reward in [0, 1]; -0.02 for an "
                                           "invalid action (as in the billing env).",
                            "type": "number", "minimum": -0.02, "maximum": 1},
            "done": {"type": "boolean"},
        },
    }


def observation_schema() -> dict[str, Any]:
    nullable_obj = {"type": ["object", "null"]}
    return {
        "$schema": DRAFT, "$id": BASE + "observation.schema.json",
        "title": "Billing-arena observation",
        "type": "object", "additionalProperties": False,
        "required": ["task_name", "step_number", "api_calls_used", "api_call_budget",
                     "rate_limited_tools", "cooldown_steps", "case_id", "patient_complaint",
                     "patient_name", "patient_emotional_state", "last_action_type",
                     "last_action_result", "last_action_error", "action_log_summary",
                     "step_reward", "done"],
        "properties": {
            "task_name": {"type": "string"},
            "step_number": {"type": "integer", "minimum": 0},
            "api_calls_used": {"type": "integer", "minimum": 0},
            "api_call_budget": {"type": "integer", "minimum": 1},
            "rate_limited_tools": {"type": "array", "items": {"enum": sorted(ACTIONS)}},
            "cooldown_steps": {"type": "object",
                               "additionalProperties": {"type": "integer", "minimum": 0}},
            "case_id": {"type": "string"},
            "patient_complaint": {"type": "string"},
            "patient_name": {"type": "string"},
            "patient_emotional_state": {"enum": ["calm", "frustrated", "distressed"]},
            "last_action_type": {"type": ["string", "null"]},
            "last_action_result": nullable_obj,
            "last_action_error": {"type": ["string", "null"]},
            "action_log_summary": {"type": "array", "items": {"type": "string"}},
            "step_reward": {"type": "number"},
            "done": {"type": "boolean"},
        },
    }


def generated() -> dict[str, dict[str, Any]]:
    files = {f"actions/{name}.schema.json": action_schema(spec)
             for name, spec in sorted({**ACTIONS, **CODING_ACTIONS}.items())}
    files["action.schema.json"] = action_envelope()
    files["coding_action.schema.json"] = action_envelope(
        CODING_ACTIONS, "coding_action.schema.json", "Medical-coding action")
    files["observation.schema.json"] = observation_schema()
    files["coding_observation.schema.json"] = coding_observation_schema()
    return files


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def stale(root: Path = SCHEMA_DIR) -> list[str]:
    return [name for name, doc in generated().items()
            if not (root / name).is_file() or (root / name).read_text() != render(doc)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--write", action="store_true", help="rewrite the files")
    args = p.parse_args(argv)
    if args.write:
        for name, doc in generated().items():
            path = SCHEMA_DIR / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(doc))
        print(f"wrote {len(generated())} schema files under {SCHEMA_DIR}")
        return 0
    bad = stale()
    print("stale: " + ", ".join(bad) if bad else "schemas are up to date")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
