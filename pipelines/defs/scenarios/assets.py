"""Compile each task's frozen train/dev/test splits from one reference release.

Partitioned by (release, task) with the reference location's release partitions, and tied to
``reference_bundle`` by a partition mapping on the release dimension: after a 2026D refresh
Dagster shows the 2026D splits as missing rather than the 2026C ones as current, and each
split is compiled from the bundle of its own release (never "the newest one").
"""

from pathlib import Path

from dagster import (
    AssetDep,
    AssetExecutionContext,
    ConfigurableResource,
    Failure,
    MetadataValue,
    MultiPartitionsDefinition,
    MultiToSingleDimensionPartitionMapping,
    StaticPartitionsDefinition,
    asset,
)
from pydantic import Field

from ...lib.scenario_bundle import compile_split, write_split
from ..common import CODE_VERSION, PARTITIONS

TASK_PARTITIONS = StaticPartitionsDefinition(
    ["abductive_conflict", "adversarial_fabrication", "deductive_liability", "medical_coding"])
SCENARIO_PARTITIONS = MultiPartitionsDefinition({"release": PARTITIONS, "task": TASK_PARTITIONS})


class ScenarioStore(ConfigurableResource):
    """Which reference releases the compiler reads, and where the splits are written."""

    reference_root: str = Field(
        description="Root holding <release>/ reference bundles (the reference location's "
                    "CLARUS_BUNDLE_ROOT, or the checkout's bundles/reference).")
    root: str = Field(description="Directory holding <task>/<split>.arrow.")


@asset(
    name="scenario_splits", group_name="scenarios", partitions_def=SCENARIO_PARTITIONS,
    code_version=CODE_VERSION,
    deps=[AssetDep("reference_bundle", partition_mapping=MultiToSingleDimensionPartitionMapping(
        partition_dimension_name="release"))],
    description="Frozen train/dev/test scenarios per task, compiled from the reference bundle "
                "of the partition's release.",
)
def scenario_splits(context: AssetExecutionContext, scenarios: ScenarioStore) -> dict:
    from clarus_env.reference import BundleError, ReferenceBundle
    from clarus_env.splits import splits_for

    keys = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
    release, task = keys["release"], keys["task"]
    try:
        ref = ReferenceBundle(Path(scenarios.reference_root) / release)
    except BundleError as exc:
        raise Failure(description=f"no reference bundle for {release}: {exc}") from None
    if ref.release != release:
        raise Failure(description=f"{ref.path} holds release {ref.release}, not {release}")
    written = {}
    for split, seeds in splits_for(task).items():
        table = compile_split(task, split, seeds, ref)
        path = Path(scenarios.root) / task / f"{split}.arrow"
        size = write_split(path, table)
        written[split] = {"rows": table.num_rows, "bytes": size}
        context.log.info(f"{task}/{split}: {table.num_rows} scenarios, {size:,} bytes")
    context.add_output_metadata({"splits": MetadataValue.json(written),
                                 "reference_release": ref.release,
                                 "reference_dir": str(ref.path)})
    return written
