"""ICD-10-CM: the code set as a tree from the tabular XML (the order file cross-checks it), and
the External Cause Index, Neoplasm Table and Table of Drugs and Chemicals, one table each.

The three index tables carry two blocking checks beyond the common four: ``codes_resolve``
(every code they name is a node of the tabular in the same bundle, or for a code ending in
``-`` the prefix of one -- they are FY2025 files next to an FY2026 tabular, so a code deleted
since would send a coder nowhere) and ``spot_check`` (entries read by hand from the files).
"""


from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
from dagster import AssetExecutionContext, AssetIn, asset

from ...lib import icd10cm, icd10cm_index
from ...lib.conform import conform
from ...lib.errors import SourceError
from ...lib.fetch import Fetched
from ...lib.tables import TABLES
from ...resources import BundleStore
from ..common import PARTITIONS, Normalized, emit, fail, raw_asset, table_asset, table_check_specs

icd10cm_raw = raw_asset("icd10cm", "icd10cm")

INDEX_CHECKS = ("codes_resolve", "spot_check")
# (path, column, code), read from the FY2025 files (SOURCES.md section 9b lists the same ones)
KNOWN: dict[str, list[tuple[str, str, str]]] = {
    "icd10cm_eindex": [("Bite, bitten by, alligator", "code", "W58.01"),
                       ("Accident", "code", "X58"),
                       ("Fall, falling, from, off, out of, building", "code", "W13.9")],
    "icd10cm_neoplasm": [("Neoplasm, neoplastic, lung", "malignant_primary", "C34.9-"),
                         ("Neoplasm, neoplastic, lung", "benign", "D14.3-"),
                         ("Neoplasm, neoplastic, colon", "malignant_primary", "C18.9")],
    "icd10cm_drug": [("Acetaminophen", "poisoning_accidental", "T39.1X1"),
                     ("Acetaminophen", "underdosing", "T39.1X6"),
                     ("Warfarin", "adverse_effect", "T45.515")],
}


def build_icd10cm(raw: dict[str, Fetched]) -> Normalized:
    f = raw["icd10cm_tabular"]
    df = icd10cm.parse_icd10cm_tabular(f.data, f.file)
    inputs = {"icd10cm_tabular": df.height}
    notes = [f"{df.filter(pl.col('billable')).height:,} billable codes",
             "coder's notes kept per node (bundle format 2): "
             + ", ".join(f"{c} on {df[c].drop_nulls().len():,}" for c in (
                 "inclusion_terms", "use_additional_code", "code_first", "code_also", "notes",
                 "seventh_characters"))]
    order = raw.get("icd10cm_order")
    if order is not None:
        o = icd10cm.parse_icd10cm_order(order.data, order.file)
        inputs["icd10cm_order"] = o.height
        j = o.join(df.select("code", "billable"), on="code", how="left", suffix="_xml")
        agree = j.filter(pl.col("billable") == pl.col("billable_xml")).height
        notes.append(f"cross-check with {order.file}: {agree} of {o.height} codes agree on the "
                     "billable flag")
    return Normalized(conform(df, "icd10cm", f.file), inputs, notes, ["icd10cm_tabular"])


icd10cm_table = table_asset("icd10cm", "icd10cm", "icd10cm_raw", build_icd10cm)

PARSERS: dict[str, Callable[[bytes, str], pl.DataFrame]] = {
    "icd10cm_eindex": icd10cm_index.parse_eindex,
    "icd10cm_neoplasm": icd10cm_index.parse_neoplasm_table,
    "icd10cm_drug": icd10cm_index.parse_drug_table,
}


def build_index_table(name: str, raw: dict[str, Fetched], tabular: Any, *,
                      complete: bool = True) -> tuple[Normalized, dict[str, list[str]]]:
    """One index table (the input key is the table name) and its extra check results.

    ``tabular`` is the ``icd10cm`` Arrow table of the same build; ``complete`` is False for
    fixture builds, whose tabular holds a handful of codes and whose index a handful of terms.
    """
    f = raw[name]
    df = PARSERS[name](f.data, f.file)
    table = conform(df, name, f.file)
    columns = icd10cm_index.code_columns(name)
    codes = [c for col in columns for c in df[col].drop_nulls().to_list()]
    known = set(tabular.column("code").to_pylist()) if tabular is not None else set()
    missing = icd10cm_index.unresolved_codes(codes, known)
    resolve = ([f"{name}: {len(missing):,} of {len(codes):,} codes are not in the tabular, "
                f"e.g. {', '.join(sorted(set(missing))[:5])}"] if missing and complete else [])
    spot = []
    if complete:
        rows = {}
        for r in df.select("path", *columns).to_dicts():
            rows.setdefault(r["path"], r)
        for path, column, code in KNOWN[name]:
            got = rows.get(path, {}).get(column)
            if got != code:
                spot.append(f"{name}: {path!r} {column} is {got!r}, the file says {code!r}")
    exact = sum(1 for c in codes if not c.endswith("-"))
    notes = [f"{f.release} {f.file}: {table.num_rows:,} terms, {len(codes):,} codes "
             f"({exact:,} exact, {len(codes) - exact:,} prefixes ending in '-'); "
             f"{len(codes) - len(missing):,} resolve in the icd10cm table"]
    return Normalized(table, {name: table.num_rows}, notes), {"codes_resolve": resolve,
                                                              "spot_check": spot}


def _index_asset(name: str) -> Any:
    @asset(
        name=name, group_name="icd10cm", partitions_def=PARTITIONS,
        ins={"raw": AssetIn("icd10cm_raw"), "tabular": AssetIn("icd10cm")},
        check_specs=table_check_specs(name, INDEX_CHECKS),
        description=TABLES[name].description,
    )
    def _table(context: AssetExecutionContext, store: BundleStore, raw: dict[str, Fetched],
               tabular: Normalized) -> Iterator[Any]:
        try:
            result, checks = build_index_table(name, raw, tabular.table,
                                               complete=store.enforce_row_ranges)
        except SourceError as exc:
            raise fail(exc) from None
        yield from emit(context, name, result, store, checks)

    return _table


icd10cm_eindex = _index_asset("icd10cm_eindex")
icd10cm_neoplasm = _index_asset("icd10cm_neoplasm")
icd10cm_drug = _index_asset("icd10cm_drug")
