"""Plan cost-sharing templates: authored, sourced facts (no file to fetch)."""


from collections.abc import Iterator
from typing import Any

from dagster import AssetExecutionContext, asset

from ...lib import plans
from ...lib.conform import conform
from ...lib.tables import TABLES
from ...resources import BundleStore
from ..common import CODE_VERSION, PARTITIONS, Normalized, emit, table_check_specs


@asset(
    name="plan_templates", group_name="plan_templates", partitions_def=PARTITIONS,
    code_version=CODE_VERSION,
    check_specs=table_check_specs("plan_templates", ("legal_limits",)),
    description=TABLES["plan_templates"].description,
)
def plan_templates(context: AssetExecutionContext, store: BundleStore) -> Iterator[Any]:
    df = plans.plan_templates()
    result = Normalized(conform(df, "plan_templates", "plan_templates"), {},
                        ["authored facts; each row's source column cites the regulation"])
    yield from emit(context, "plan_templates", result, store,
                    {"legal_limits": plans.limit_problems(df)})
