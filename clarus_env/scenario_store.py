"""Scenarios for the env: from the frozen split bundles when the seed is in one, otherwise
compiled on demand (the two are byte-identical; a test holds them to it)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from .scenario import compile_scenario, scenario_salt
from .splits import split_of

SCENARIO_BUNDLES = Path(__file__).resolve().parents[1] / "bundles" / "scenarios"


# bytes -> b"1" for an ASCII digit, b"0" otherwise: a run of 19 or more digits is an
# integer orjson could not return exactly (past 64 bits it gives a float where ``json.loads``
# gives the int) — or digits inside a string; either way such a text goes to the stdlib
_DIGIT_MAP = bytes(0x31 if 0x30 <= i <= 0x39 else 0x30 for i in range(256))
_LONG_RUN = b"1" * 19


@cache
def _split_index(path: str) -> dict[int, tuple[bytes, bool]]:
    """seed -> (scenario JSON as UTF-8 bytes, whether orjson may decode it). Reading the
    column as bytes skips building a ``str`` per scenario (several times faster to open),
    and the long-digit scan is done here, once per text, not on every reset."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    table = ipc.open_file(pa.memory_map(path)).read_all()
    # a zero-copy view of the UTF-8 column as binary (a ``cast`` would import
    # pyarrow.compute, ~0.14 s of every fresh worker's start)
    texts = [t for chunk in table.column("scenario_json").chunks
             for t in chunk.view(pa.binary()).to_pylist()]
    return {seed: (text, _LONG_RUN not in text.translate(_DIGIT_MAP))
            for seed, text in zip(table.column("seed").to_pylist(), texts, strict=True)}


def decode(text: str | bytes, fast: bool = True) -> dict[str, Any]:
    """``json.loads(text)``, the same value, at orjson's speed (about twice the stdlib's on a
    scenario, which every reset decodes) where orjson provably gives it: ``fast`` says the
    text holds no long digit run, and anything orjson refuses (NaN, Infinity, 1e400, lone
    surrogate escapes) is decoded by the stdlib, which then answers as it always did."""
    if fast:
        try:
            return orjson.loads(text)  # type: ignore[no-any-return]
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)  # type: ignore[no-any-return]


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
            entry = index.get(seed)
            if entry is not None:
                scenario = decode(*entry)
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
_OPENED: dict[tuple[str, str, Path], dict[int, tuple[bytes, bool]]] = {}
