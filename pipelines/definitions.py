"""The Dagster code location: every source's assets, the bundle, and the resources.

Configuration is explicit and read through ``EnvVar`` when a run starts (not when the code
loads): ``CLARUS_CMS_MIRROR`` (a mirror directory, or empty to download from cms.gov) and
``CLARUS_BUNDLE_ROOT`` (where releases are published). Nothing defaults to the package's
install location. The graph is ~30 small steps, so runs execute in-process: one process
instead of one subprocess per step.
"""

from __future__ import annotations

from typing import Any

from dagster import (
    AssetsDefinition,
    Definitions,
    EnvVar,
    define_asset_job,
    in_process_executor,
    load_assets_from_modules,
)

from .defs.asc import assets as asc_assets
from .defs.bundle import assets as bundle_assets
from .defs.carc_rarc import assets as carc_assets
from .defs.common import CODE_VERSION
from .defs.hcpcs import assets as hcpcs_assets
from .defs.icd10cm import assets as icd_assets
from .defs.mpfs import assets as mpfs_assets
from .defs.ncci_mue import assets as mue_assets
from .defs.ncci_ptp import assets as ptp_assets
from .defs.opps import assets as opps_assets
from .defs.pfs import assets as pfs_assets
from .defs.plan_templates import assets as plan_assets
from .resources import BundleStore, CmsSource
from .storage import ArrowIOManager

MODULES = [pfs_assets, mpfs_assets, ptp_assets, mue_assets, hcpcs_assets, icd_assets,
           carc_assets, plan_assets, opps_assets, asc_assets, bundle_assets]


def _versioned(assets: list[Any]) -> list[Any]:
    """Give every asset a code_version (assets declared without one get the shared
    ``CODE_VERSION``), so Dagster can tell a stale partition from an unchanged one."""
    return [a.map_asset_specs(lambda s: s if s.code_version else
                              s.replace_attributes(code_version=CODE_VERSION))
            if isinstance(a, AssetsDefinition) else a for a in assets]


def make_definitions(cms: CmsSource | None = None, store: BundleStore | None = None,
                     io_manager: ArrowIOManager | None = None) -> Definitions:
    """Definitions with the given resources (tests point them at fixtures and temp dirs)."""
    return Definitions(
        assets=_versioned(list(load_assets_from_modules(MODULES))),
        resources={
            "cms": cms or CmsSource(mirror_dir=EnvVar("CLARUS_CMS_MIRROR")),
            "store": store or BundleStore(root=EnvVar("CLARUS_BUNDLE_ROOT")),
            "io_manager": io_manager or ArrowIOManager(),
        },
        executor=in_process_executor,
    )


defs = make_definitions()


def refresh_job() -> Any:
    """The whole graph as one job, for ``dagster.execute_job`` (``pipelines.refresh``).

    ``materialize`` keeps every step's output in memory until the run ends (its result
    offers them); for a 10M-row NCCI quarter that is the raw parts and the table, 1.4 GB of
    a 3.6 GB peak. ``execute_job`` needs a reconstructable job, hence this function.
    """
    return Definitions(assets=defs.assets, resources=defs.resources,
                       jobs=[define_asset_job("refresh")],
                       executor=in_process_executor).get_job_def("refresh")
