"""ASC Addendum AA → ``asc_rate``: ambulatory surgical center payment by HCPCS code.

Blocking checks beyond the common four: ``spot_check`` (rows read by hand from the release
file), ``conversion_factor`` (payment rate / weight is the published ASC factor on nearly
every weighted row), ``quarter`` (the payment columns are headed with the quarter the
release names) and ``mirror_copy`` (the mirror file is the one recorded in sources.py: the
mirror renamed every quarter to ``AA.csv``, so pins.json, keyed by name, cannot pin them).
"""


from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from dagster import AssetExecutionContext, AssetIn, asset

from ...lib import asc
from ...lib.checks import conversion_factor_check, spot_check_rows
from ...lib.conform import conform
from ...lib.errors import SourceError
from ...lib.fetch import Fetched
from ...lib.tables import TABLES
from ...resources import BundleStore
from ..common import CODE_VERSION, PARTITIONS, Normalized, emit, fail, raw_asset, table_check_specs
from ..opps.assets import mirror_copy_problems

asc_raw = raw_asset("asc", "asc")

KEY = "asc_addendum_aa"
EXTRA_CHECKS = ("spot_check", "conversion_factor", "quarter", "mirror_copy")

_D = Decimal
# Read from the raw file of each release (SOURCES.md §10b lists the same rows).
KNOWN: dict[str, dict[str, dict[str, object]]] = {
    "2026-04": {
        "29881": {"payment_indicator": "A2", "payment_rate": _D("1644.87")},
        "47562": {"payment_indicator": "G2", "payment_rate": _D("3030.97")},
        "27447": {"payment_indicator": "J8", "payment_rate": _D("9393.16")},
        "66984": {"payment_indicator": "A2", "payment_rate": _D("1255.73")},
        "45378": {"payment_indicator": "A2", "payment_rate": _D("510.49")},
        "G0105": {"payment_indicator": "A2", "payment_rate": _D("510.49"), "comment_flag": "**"},
        "53866": {"payment_indicator": "P3", "payment_weight": None,
                  "payment_rate": _D("91.64")},
        "0095T": {"payment_indicator": "N1", "payment_rate": None,
                  "multiple_procedure_discount": False},
    },
    "2025-01": {
        "29881": {"payment_indicator": "A2", "payment_rate": _D("1579.16")},
        "47562": {"payment_indicator": "G2", "payment_rate": _D("2860.32")},
        "27447": {"payment_indicator": "J8", "payment_rate": _D("9255.60")},
        "66984": {"payment_indicator": "A2", "payment_rate": _D("1214.31")},
        "45378": {"payment_indicator": "A2", "payment_rate": _D("489.47")},
        "43239": {"payment_indicator": "A2", "payment_rate": _D("503.39")},
    },
}
CONVERSION_FACTOR = {"2026-04": _D("56.322"), "2025-01": _D("54.895")}


def build_asc_rate(raw: dict[str, Fetched], *, complete: bool = True
                   ) -> tuple[Normalized, dict[str, list[str]]]:
    f = raw[KEY]
    df = asc.parse_addendum_aa(f.data, f.file)
    period = asc.addendum_aa_period(f.data, f.file)
    table = conform(df, "asc_rate", f.file)
    cf_note, cf_problems = conversion_factor_check(
        table, "asc_rate", "payment_rate", "payment_weight", CONVERSION_FACTOR.get(f.release))
    known = KNOWN.get(f.release)
    spot = (spot_check_rows(table, "asc_rate", known, complete=complete) if known is not None
            else [f"no spot values recorded for release {f.release}"] if complete else [])
    quarter = ([] if period == f.release else
               [f"{f.file}: payment columns are for {period or 'an unnamed quarter'}, the "
                f"release is {f.release}"])
    paid = table.num_rows - table.column("payment_rate").null_count
    notes = [f"ASC Addendum AA, payment columns for {period}: {table.num_rows:,} codes, {paid:,} "
             "with a national unadjusted payment rate", cf_note]
    checks = {"spot_check": spot, "conversion_factor": cf_problems, "quarter": quarter,
              "mirror_copy": mirror_copy_problems(f)}
    return Normalized(table, {KEY: table.num_rows}, notes), checks


@asset(
    name="asc_rate", group_name="asc", partitions_def=PARTITIONS, code_version=CODE_VERSION,
    ins={"raw": AssetIn("asc_raw")},
    check_specs=table_check_specs("asc_rate", EXTRA_CHECKS),
    description=TABLES["asc_rate"].description,
)
def asc_rate(context: AssetExecutionContext, store: BundleStore,
             raw: dict[str, Fetched]) -> Iterator[Any]:
    try:
        result, checks = build_asc_rate(raw, complete=store.enforce_row_ranges)
    except SourceError as exc:
        raise fail(exc) from None
    yield from emit(context, "asc_rate", result, store, checks)
