"""Second code location: scenario splits, partitioned by (release, task).

Kept apart from the reference location so its heavy compile stays out of the refresh; it
shares that location's release partitions and sees ``reference_bundle`` as an external,
release-partitioned asset, so each split partition maps to the bundle of its own release.
"""

from dagster import AssetSpec, Definitions, EnvVar, in_process_executor

from .defs.common import PARTITIONS
from .defs.scenarios.assets import ScenarioStore, scenario_splits
from .storage import ArrowIOManager


def make_definitions(store: ScenarioStore | None = None) -> Definitions:
    return Definitions(
        assets=[AssetSpec("reference_bundle", group_name="bundle", partitions_def=PARTITIONS,
                          description="Published by the pipelines.definitions location."),
                scenario_splits],
        resources={"scenarios": store or ScenarioStore(
                       reference_root=EnvVar("CLARUS_BUNDLE_ROOT"),
                       root=EnvVar("CLARUS_SCENARIO_ROOT")),
                   "io_manager": ArrowIOManager()},
        executor=in_process_executor,
    )


defs = make_definitions()
