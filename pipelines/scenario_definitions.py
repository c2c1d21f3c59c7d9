"""Second code location: scenario splits, partitioned by task.

Kept apart from the reference location because its partitions are tasks, not releases:
`--select '*' --partition 2026C` on the reference location stays valid, and this location
depends on the published reference bundle through an external asset spec.
"""

from dagster import AssetSpec, Definitions

from .defs.scenarios.assets import ScenarioStore, scenario_splits


def make_definitions(store: ScenarioStore | None = None) -> Definitions:
    return Definitions(
        assets=[AssetSpec("reference_bundle", group_name="bundle",
                          description="Published by the pipelines.definitions location."),
                scenario_splits],
        resources={"scenarios": store or ScenarioStore()},
    )


defs = make_definitions()
