"""Scenarios for the env: from the frozen split bundles when the seed is in one, otherwise
compiled on demand (the two are byte-identical; a test holds them to it)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from .scenario import compile_scenario, scenario_salt
from .splits import split_of

SCENARIO_BUNDLES = Path(__file__).resolve().parents[1] / "bundles" / "scenarios"


@cache
def _split_index(path: str) -> dict[int, str]:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    table = ipc.open_file(pa.memory_map(path)).read_all()
    return dict(zip(table.column("seed").to_pylist(), table.column("scenario_json").to_pylist(),
                    strict=True))


def bundled_path(task: str, split: str, root: Path = SCENARIO_BUNDLES) -> Path:
    return root / task / f"{split}.arrow"


def load_scenario(task: str, seed: int, *, reference: Any = None,
                  bundle_dir: str | None = None, root: Path = SCENARIO_BUNDLES) -> dict[str, Any]:
    split = split_of(seed, task)
    # the committed splits are the unsalted scenarios; a salted run compiles every seed
    if split is not None and bundle_dir is None and not scenario_salt():
        index = _OPENED.get((task, split, root))
        if index is None:
            path = bundled_path(task, split, root)
            if path.is_file():  # looked for until found: a missing split is compiled instead
                index = _OPENED[(task, split, root)] = _split_index(str(path))
        if index is not None:
            text = index.get(seed)
            if text is not None:
                scenario = json.loads(text)
                # a split compiled from one reference release must not be played against
                # another release's fees and edits (a refresh without rebuilt splits)
                if reference is not None and scenario["reference_release"] != reference.release:
                    raise ValueError(
                        f"{bundled_path(task, split, root)} was compiled from reference release "
                        f"{scenario['reference_release']}, but this env reads {reference.release} "
                        f"({reference.path}); rebuild the splits for {reference.release} "
                        f"(scenario_splits partition {reference.release}|{task}) or open the "
                        f"{scenario['reference_release']} bundle")
                return scenario
    return compile_scenario(task, seed, reference)


# (task, split, root) -> its opened split file: the path is resolved and checked once, not
# once per episode (a stat and four path joins were ~5% of a full episode loop)
_OPENED: dict[tuple[str, str, Path], dict[int, str]] = {}
