"""Compiling scenarios: pure, seeded, byte-identical in any process.

A scenario's randomness comes only from its own ``random.Random`` seeded by a SHA-256 of
(task, seed), never from ``hash()`` or global state, so PYTHONHASHSEED and import order
cannot change a single byte.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

SCENARIO_VERSION = 1


def rng_for(task: str, seed: int) -> random.Random:
    digest = hashlib.sha256(f"clarus:{task}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(scenario: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(scenario).encode()).hexdigest()


def compile_scenario(task: str, seed: int, reference: Any = None, *,
                     validate: bool = True) -> dict[str, Any]:
    """The scenario for ``(task, seed)``: public records, references, hidden expected outcome."""
    from .reference import open_reference
    from .tasks import get_task

    t = get_task(task)
    ref = reference if reference is not None else open_reference()
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    scenario = t.generate(seed, rng_for(task, seed), ref)
    scenario = {"schema_version": SCENARIO_VERSION, "task": task, "seed": seed,
                "scenario_id": f"{task}-{seed}", "reference_release": ref.release, **scenario}
    if validate:
        from .schemas import validate_scenario

        validate_scenario(scenario, getattr(t, "schema", "scenario.schema.json"))
    return scenario
