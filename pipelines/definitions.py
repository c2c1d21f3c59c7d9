"""The Dagster code location: every source's assets, the bundle, and the resources."""

from __future__ import annotations

from dagster import Definitions, load_assets_from_modules

from .defs.asc import assets as asc_assets
from .defs.bundle import assets as bundle_assets
from .defs.carc_rarc import assets as carc_assets
from .defs.hcpcs import assets as hcpcs_assets
from .defs.icd10cm import assets as icd_assets
from .defs.mpfs import assets as mpfs_assets
from .defs.ncci_mue import assets as mue_assets
from .defs.ncci_ptp import assets as ptp_assets
from .defs.opps import assets as opps_assets
from .defs.pfs import assets as pfs_assets
from .defs.plan_templates import assets as plan_assets
from .resources import BundleStore, CmsSource

MODULES = [pfs_assets, mpfs_assets, ptp_assets, mue_assets, hcpcs_assets, icd_assets,
           carc_assets, plan_assets, opps_assets, asc_assets, bundle_assets]


def make_definitions(cms: CmsSource | None = None, store: BundleStore | None = None
                     ) -> Definitions:
    """Definitions with the given resources (tests point them at fixtures and temp dirs)."""
    return Definitions(
        assets=load_assets_from_modules(MODULES),
        resources={"cms": cms or CmsSource(), "store": store or BundleStore()},
    )


defs = make_definitions()
