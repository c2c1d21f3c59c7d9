"""Compile each task's frozen train/dev/test splits into bundles/scenarios/<task>/."""

from pathlib import Path

from dagster import (
    AssetExecutionContext,
    AssetKey,
    ConfigurableResource,
    MetadataValue,
    StaticPartitionsDefinition,
    asset,
)
from pydantic import Field

from ...lib.scenario_bundle import compile_split, write_split
from ...resources import REPO

TASK_PARTITIONS = StaticPartitionsDefinition(
    ["abductive_conflict", "adversarial_fabrication", "deductive_liability", "medical_coding"])


class ScenarioStore(ConfigurableResource):
    """Which reference bundle the compiler reads, and where the splits are written."""

    reference_dir: str = Field(default=str(REPO / "bundles" / "reference" / "2026C"),
                               description="Reference bundle the scenarios are compiled from.")
    root: str = Field(default=str(REPO / "bundles" / "scenarios"),
                      description="Directory holding <task>/<split>.arrow.")


@asset(
    name="scenario_splits", group_name="scenarios", partitions_def=TASK_PARTITIONS,
    deps=[AssetKey("reference_bundle")],
    description="Frozen train/dev/test scenarios per task, compiled from the reference bundle.",
)
def scenario_splits(context: AssetExecutionContext, scenarios: ScenarioStore) -> dict:
    from clarus_env.reference import ReferenceBundle
    from clarus_env.splits import splits_for

    task = context.partition_key
    ref = ReferenceBundle(Path(scenarios.reference_dir))
    written = {}
    for split, seeds in splits_for(task).items():
        table = compile_split(task, split, seeds, ref)
        path = Path(scenarios.root) / task / f"{split}.arrow"
        size = write_split(path, table)
        written[split] = {"rows": table.num_rows, "bytes": size}
        context.log.info(f"{task}/{split}: {table.num_rows} scenarios, {size:,} bytes")
    context.add_output_metadata({"splits": MetadataValue.json(written),
                                 "reference_release": ref.release})
    return written
