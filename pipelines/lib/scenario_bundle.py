"""Frozen scenario splits as Arrow files: one row per scenario, the compiled JSON as text.

The compiler lives in ``clarus_env`` (so research code can compile any seed); this module
only runs it in bulk and writes the result deterministically and atomically.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from .bundle import table_bytes

SCHEMA = pa.schema([
    pa.field("task", pa.string(), nullable=False), pa.field("seed", pa.int64(), nullable=False),
    pa.field("split", pa.string(), nullable=False),
    pa.field("scenario_id", pa.string(), nullable=False),
    pa.field("content_hash", pa.string(), nullable=False),
    pa.field("scenario_json", pa.string(), nullable=False),
])


def compile_split(task: str, split: str, seeds: Iterable[int], reference: Any) -> pa.Table:
    from clarus_env.scenario import (
        SALT_ENV,
        canonical_json,
        compile_scenario,
        content_hash,
        scenario_salt,
    )

    if scenario_salt():  # the committed splits are the public, unsalted scenarios
        raise ValueError(f"{SALT_ENV} is set: refusing to write salted (private) scenarios "
                         f"into the public {task} {split} split; unset it to rebuild the splits")

    rows: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
    for seed in seeds:
        scenario = compile_scenario(task, seed, reference)
        rows["task"].append(task)
        rows["seed"].append(seed)
        rows["split"].append(split)
        rows["scenario_id"].append(scenario["scenario_id"])
        rows["content_hash"].append(content_hash(scenario))
        rows["scenario_json"].append(canonical_json(scenario))
    return pa.Table.from_pydict(rows, schema=SCHEMA)


def write_split(path: Path, table: pa.Table) -> int:
    """Write ``table`` to ``path`` via a temporary file and a rename; returns bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = table_bytes(table)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return len(data)
