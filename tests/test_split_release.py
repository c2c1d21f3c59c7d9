"""Splits and reference releases stay paired: the scenarios location maps each
(release, task) split partition to its own release's bundle, and clarus_env refuses to play
a committed split against a different reference release."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from dagster import AssetKey, MultiPartitionKey

from clarus_env.scenario_store import load_scenario
from clarus_env.splits import splits_for


def test_split_from_another_release_is_refused() -> None:
    task = "deductive_liability"
    seed = next(iter(splits_for(task)["dev"]))
    other = SimpleNamespace(release="2026D", path=Path("/published/2026D"))
    with pytest.raises(ValueError) as err:
        load_scenario(task, seed, reference=other)
    msg = str(err.value)
    assert "compiled from reference release 2026C" in msg and "reads 2026D" in msg
    assert "dev.arrow" in msg and "2026D|deductive_liability" in msg


def test_scenario_location_shares_the_release_partitions() -> None:
    from pipelines.defs.common import PARTITIONS
    from pipelines.scenario_definitions import defs

    graph = defs.resolve_asset_graph()
    splits = graph.get(AssetKey("scenario_splits"))
    bundle = graph.get(AssetKey("reference_bundle"))
    assert bundle.partitions_def == PARTITIONS
    key = MultiPartitionKey({"release": "2025D", "task": "medical_coding"})
    parents = graph.get_parents_partitions(AssetKey("scenario_splits"), key)
    assert {p.partition_key for p in parents.parent_partitions} == {"2025D"}
    assert splits.code_version
