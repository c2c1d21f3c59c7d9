"""The MPFS fee schedule, computed from PPRRVU × GPCI × conversion factor (and OPPS caps)."""


from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import polars as pl
import pyarrow.compute as pc
from dagster import AssetExecutionContext, AssetIn, asset

from ...lib import fees as feelib
from ...lib.conform import conform
from ...lib.errors import SourceError
from ...lib.fee_checks import payment_mismatches, spot_check
from ...lib.fetch import Fetched
from ...lib.tables import TABLES
from ...resources import BundleStore
from ..common import CODE_VERSION, PARTITIONS, Normalized, emit, fail, table_check_specs


def conversion_factor(rvu: Any) -> Decimal:
    """The single CF printed on every PPRRVU row (a file with two is a broken release)."""
    cfs = pc.unique(rvu.column("conversion_factor")).to_pylist()
    if len(cfs) != 1:
        raise SourceError(f"PPRRVU has {len(cfs)} different conversion factors: {cfs[:5]}")
    return cfs[0]


def build_fee_schedule(hcpcs_rvu: Normalized, gpci: Normalized, opps_cap: Normalized
                       ) -> tuple[Normalized, dict[str, list[str]]]:
    cf = conversion_factor(hcpcs_rvu.table)
    cap = pl.from_arrow(opps_cap.table) if opps_cap.table is not None else None
    df = feelib.compute_fee_schedule(pl.from_arrow(hcpcs_rvu.table), pl.from_arrow(gpci.table),
                                     cf, cap)
    table = conform(df, "fee_schedule", "fee_schedule")
    notes = [f"conversion factor {cf}",
             "OPPS imaging cap applied" if cap is not None else "no OPPS imaging cap applied"]
    checks = {"formula_spot_check": spot_check(table, hcpcs_rvu.table, gpci.table, cf)}
    sources = ["pprrvu", "gpci"] + (["oppscap"] if cap is not None else [])
    return Normalized(table, {}, notes, sources), checks


@asset(
    name="fee_schedule", group_name="mpfs", partitions_def=PARTITIONS, code_version=CODE_VERSION,
    ins={"hcpcs_rvu": AssetIn("hcpcs_rvu"), "gpci": AssetIn("gpci"),
         "opps_cap": AssetIn("opps_cap"), "pfs_raw": AssetIn("pfs_raw")},
    check_specs=table_check_specs("fee_schedule", ("formula_spot_check", "payment_file")),
    description=TABLES["fee_schedule"].description,
)
def fee_schedule(context: AssetExecutionContext, store: BundleStore, hcpcs_rvu: Normalized,
                 gpci: Normalized, opps_cap: Normalized, pfs_raw: dict[str, Fetched]
                 ) -> Iterator[Any]:
    try:
        result, checks = build_fee_schedule(hcpcs_rvu, gpci, opps_cap)
        payment = pfs_raw.get("payment")
        if payment is None:
            checks["payment_file"] = []
            result.notes.append("no official payment file for this release to compare with")
        else:
            official = conform_payment(payment)
            n, problems = payment_mismatches(result.table, official)
            checks["payment_file"] = problems
            result.inputs["payment"] = n
            result.notes.append(f"{n:,} records of {payment.file} compared to the cent: "
                                f"{'all equal' if not problems else 'MISMATCHES'}")
    except SourceError as exc:
        raise fail(exc) from None
    yield from emit(context, "fee_schedule", result, store, checks)


def conform_payment(payment: Fetched) -> Any:
    df = feelib.parse_payment_file(payment.data, payment.file)
    return df.select("hcpcs", "modifier", "mac", "locality", "nonfac_amount",
                     "fac_amount").to_arrow()
