"""Scenario compiler contract across the billing tasks: committed split bundles equal
on-demand compiles byte for byte, rebuilding them through Dagster gives the same bytes,
compiles are identical across processes and hash seeds, and schemas reject bad scenarios."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from clarus_env.scenario import canonical_json, compile_scenario, content_hash
from clarus_env.scenario_store import SCENARIO_BUNDLES
from clarus_env.schemas import ScenarioSchemaError, errors, validate_scenario
from clarus_env.splits import splits_for
from clarus_env.tasks import BILLING_TASKS, TASKS

REPO = Path(__file__).resolve().parents[1]


def read_split(task: str, split: str) -> pa.Table:
    return ipc.open_file(pa.memory_map(str(SCENARIO_BUNDLES / task / f"{split}.arrow"))).read_all()


@pytest.mark.parametrize("task", TASKS)
def test_bundled_splits_equal_on_demand_compiles(task: str) -> None:
    for split, seeds in splits_for(task).items():
        table = read_split(task, split)
        assert table.column("seed").to_pylist() == list(seeds), (task, split)
        rows = table.to_pylist()
        sample = rows if split != "train" else rows[::25]
        for row in sample:
            fresh = compile_scenario(task, row["seed"])
            assert row["scenario_json"] == canonical_json(fresh), (task, row["seed"])
            assert row["content_hash"] == content_hash(fresh)
            assert row["split"] == split and row["task"] == task


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_dagster_rebuild_is_byte_identical(task: str, tmp_path: Path) -> None:
    from dagster import DagsterInstance, MultiPartitionKey, materialize

    from clarus_env.reference import REPO_BUNDLES
    from pipelines.defs.scenarios.assets import ScenarioStore, scenario_splits

    key = MultiPartitionKey({"release": "2026C", "task": task})
    with DagsterInstance.ephemeral() as instance:
        result = materialize([scenario_splits], partition_key=key, instance=instance,
                             resources={"scenarios": ScenarioStore(
                                 reference_root=str(REPO_BUNDLES), root=str(tmp_path))})
    assert result.success
    for split in splits_for(task):
        built = (tmp_path / task / f"{split}.arrow").read_bytes()
        assert built == (SCENARIO_BUNDLES / task / f"{split}.arrow").read_bytes(), split


def test_compiles_are_identical_across_processes_and_hash_seeds() -> None:
    code = ("import json; from clarus_env.scenario import compile_scenario, content_hash; "
            "from clarus_env.tasks import TASKS; "
            "print(json.dumps({t: [content_hash(compile_scenario(t, s)) "
            "for s in (1001, 50000, 90249, 123456)] for t in TASKS}))")
    outs = []
    for hashseed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                             capture_output=True, text=True, check=True)
        outs.append(json.loads(out.stdout))
    here = {t: [content_hash(compile_scenario(t, s)) for s in (1001, 50000, 90249, 123456)]
            for t in TASKS}
    assert outs[0] == outs[1] == here


@pytest.mark.parametrize("task", BILLING_TASKS)
def test_no_outcome_field_is_predictable_from_the_task(task: str) -> None:
    table = read_split(task, "dev")
    expected = [json.loads(s)["expected"] for s in table.column("scenario_json").to_pylist()]
    for field in ("responsible_party", "resolution_type"):
        values = Counter(e[field] for e in expected)
        top, n = values.most_common(1)[0]
        assert n / len(expected) <= 0.60, (task, field, top, n)


@pytest.mark.parametrize("task", BILLING_TASKS)
def test_schema_rejects_broken_scenarios(task: str) -> None:
    good = compile_scenario(task, 50001)
    validate_scenario(good)
    assert errors("scenario.schema.json", good) == []
    breakages = {
        "emotional state": lambda s: s["case"].__setitem__("emotional_state", "ecstatic"),
        "artifact party": lambda s: s["artifacts"][0].__setitem__("party", "hacker"),
        "artifact type": lambda s: s["artifacts"][0].__setitem__("type", "tweet"),
        "missing expected": lambda s: s.pop("expected"),
        "unknown top-level": lambda s: s.__setitem__("answer", 1),
        "seed type": lambda s: s.__setitem__("seed", "1"),
    }
    for name, breaks in breakages.items():
        bad = copy.deepcopy(good)
        breaks(bad)
        assert errors("scenario.schema.json", bad), name
        with pytest.raises(ScenarioSchemaError):
            validate_scenario(bad)


def test_any_seed_compiles_on_demand() -> None:
    for task in TASKS:
        a = compile_scenario(task, 7_654_321)
        assert a["seed"] == 7_654_321 and a["scenario_id"] == f"{task}-7654321"
        with pytest.raises(ValueError):
            compile_scenario(task, -1)
