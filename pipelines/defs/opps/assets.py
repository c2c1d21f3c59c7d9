"""OPPS Addendum B → ``opps_rate``: hospital outpatient payment by HCPCS code.

Blocking checks beyond the common four: ``spot_check`` (rows read by hand from the release
file), ``conversion_factor`` (payment rate / relative weight is the published OPPS factor on
nearly every weighted row), ``addendum_a`` (every code's APC is listed in Addendum A and the
code is paid its APC's rate; Addendum A also gives ``apc_title``) and ``mirror_copy`` (the
mirror file is the one recorded).
"""


from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from dagster import AssetExecutionContext, AssetIn, asset

from ...lib import opps
from ...lib.checks import conversion_factor_check, spot_check_rows
from ...lib.conform import conform
from ...lib.errors import SourceError
from ...lib.fetch import Fetched
from ...lib.tables import TABLES
from ...resources import BundleStore
from ...sources import RELEASES
from ..common import CODE_VERSION, PARTITIONS, Normalized, emit, fail, raw_asset, table_check_specs

opps_raw = raw_asset("opps", "opps")

KEY = "opps_addendum_b"
KEY_A = "opps_addendum_a"
EXTRA_CHECKS = ("spot_check", "conversion_factor", "addendum_a", "mirror_copy")

# Read from the raw file of each release (SOURCES.md §10a lists the same rows).
KNOWN: dict[str, dict[str, dict[str, object]]] = {
    "CY2025-final": {
        "47562": {"status_indicator": "J1", "apc": "5361", "payment_rate": Decimal("5834.36"),
                  "apc_title": "Level 1 Laparoscopy and Related Services"},
        "29881": {"status_indicator": "J1", "apc": "5113", "payment_rate": Decimal("3244.61"),
                  "minimum_copay": Decimal("648.93")},
        "27447": {"status_indicator": "J1", "apc": "5115", "payment_rate": Decimal("12866.82"),
                  "adjusted_copay": Decimal("1632.00")},
        "71046": {"status_indicator": "Q3", "apc": "5521", "payment_rate": Decimal("88.05")},
        "G0463": {"status_indicator": "J2", "apc": "5012", "payment_rate": Decimal("128.87")},
        "99285": {"status_indicator": "J2", "apc": "5025", "payment_rate": Decimal("613.10")},
        "99213": {"status_indicator": "B", "apc": None, "payment_rate": None},
        "90371": {"status_indicator": "K", "apc": "1630", "payment_rate": Decimal("139.931")},
    },
}
CONVERSION_FACTOR = {"CY2025-final": Decimal("89.169")}


def mirror_copy_problems(f: Fetched) -> list[str]:
    """A mirror file whose sha256 is recorded in sources.py must still be that file."""
    rel = f.origin.removeprefix("mirror:")
    if rel == f.origin:
        return []  # downloaded: CMS's bytes, nothing recorded to compare with
    wants = sorted({s.mirror_sha256 for specs in RELEASES.values() for s in specs
                    if s.key == f.key and s.mirror_sha256 and rel in s.mirror})
    if wants and f.sha256 not in wants:
        return [f"{f.file} ({f.origin}): sha256 {f.sha256}, sources.py records {wants[0]}"]
    return []


def build_opps_rate(raw: dict[str, Fetched], *, complete: bool = True
                    ) -> tuple[Normalized, dict[str, list[str]]]:
    f = raw[KEY]
    a = raw.get(KEY_A)
    apcs = opps.parse_addendum_a(a.data, a.file) if a is not None else None
    df, a_note, a_problems = opps.join_addendum_a(opps.parse_addendum_b(f.data, f.file), apcs)
    table = conform(df, "opps_rate", f.file)
    cf_note, cf_problems = conversion_factor_check(
        table, "opps_rate", "payment_rate", "relative_weight", CONVERSION_FACTOR.get(f.release))
    known = KNOWN.get(f.release)
    spot = (spot_check_rows(table, "opps_rate", known, complete=complete) if known is not None
            else [f"no spot values recorded for release {f.release}"] if complete else [])
    paid = table.num_rows - table.column("payment_rate").null_count
    notes = [f"OPPS Addendum B release {f.release}: {table.num_rows:,} codes, {paid:,} with a "
             "national unadjusted payment rate", cf_note, a_note]
    checks = {"spot_check": spot, "conversion_factor": cf_problems, "addendum_a": a_problems,
              "mirror_copy": mirror_copy_problems(f)}
    inputs = {KEY: table.num_rows}
    if apcs is not None:
        inputs[KEY_A] = apcs.height
    return Normalized(table, inputs, notes, [KEY]), checks


@asset(
    name="opps_rate", group_name="opps", partitions_def=PARTITIONS, code_version=CODE_VERSION,
    ins={"raw": AssetIn("opps_raw")},
    check_specs=table_check_specs("opps_rate", EXTRA_CHECKS),
    description=TABLES["opps_rate"].description,
)
def opps_rate(context: AssetExecutionContext, store: BundleStore,
              raw: dict[str, Fetched]) -> Iterator[Any]:
    try:
        result, checks = build_opps_rate(raw, complete=store.enforce_row_ranges)
    except SourceError as exc:
        raise fail(exc) from None
    yield from emit(context, "opps_rate", result, store, checks)
