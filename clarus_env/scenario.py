"""Compiling scenarios: pure, seeded, byte-identical in any process.

A scenario's randomness comes only from its own ``random.Random`` seeded by a SHA-256 of
(task, seed), never from ``hash()`` or global state, so PYTHONHASHSEED and import order
cannot change a single byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from functools import cache
from typing import Any

SCENARIO_VERSION = 1


SALT_ENV = "CLARUS_SCENARIO_SALT"


def scenario_salt() -> str:
    """The private salt a benchmark operator sets to hold out scenarios nobody can compile.

    The compiler is public, so anyone can compile the public splits, seed by seed. An
    operator who runs a private leaderboard sets ``CLARUS_SCENARIO_SALT`` (a secret string)
    on the machine that serves or evaluates: every seed then compiles to a different
    scenario — same generators, same distribution, same checks — that no agent can
    reproduce without the salt. Unset (the default), seeds compile to the committed splits."""
    return os.environ.get(SALT_ENV, "")


def rng_for(task: str, seed: int) -> random.Random:
    salt = scenario_salt()
    key = f"clarus:{task}:{seed}" + (f":salt:{salt}" if salt else "")
    digest = hashlib.sha256(key.encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def side_stream(task: str, name: str, seed: int) -> random.Random:
    """A generator's own stream for one nuisance draw (a check-in, a refund's clock), apart
    from ``rng_for`` so that drawing it never shifts any other record's draw. Salted as
    ``rng_for`` is: under a private salt it shares nothing with the public splits' draw for
    the same seed number; unsalted it is the stream the committed splits were built with."""
    salt = scenario_salt()
    return random.Random(f"{task}-{name}-{seed}" + (f":salt:{salt}" if salt else ""))


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(scenario: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(scenario).encode()).hexdigest()


def compile_scenario(task: str, seed: int, reference: Any = None, *,
                     validate: bool = True) -> dict[str, Any]:
    """The scenario for ``(task, seed)``: public records, references, hidden expected outcome."""
    open_reference, get_task, validate_scenario = _runtime()
    t = get_task(task)
    ref = reference if reference is not None else open_reference()
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    scenario = t.generate(seed, rng_for(task, seed), ref)
    scenario = {"schema_version": SCENARIO_VERSION, "task": task, "seed": seed,
                "scenario_id": f"{task}-{seed}", "reference_release": ref.release, **scenario}
    if validate:
        validate_scenario(scenario, getattr(t, "schema", "scenario.schema.json"))
    return scenario


@cache
def _runtime() -> tuple[Any, Any, Any]:
    """(open_reference, get_task, validate_scenario), imported on the first compile rather
    than with this module (which the task generators import for ``rng_for``, and which must
    stay light), and not on every compile: three imports cost ~3 us a scenario."""
    from .reference import open_reference
    from .schemas import validate_scenario
    from .tasks import get_task

    return open_reference, get_task, validate_scenario
