"""ICD-10-CM code set as a tree, from the tabular XML; the order file cross-checks it."""


import polars as pl

from ...lib import icd10cm
from ...lib.conform import conform
from ...lib.fetch import Fetched
from ..common import Normalized, raw_asset, table_asset

icd10cm_raw = raw_asset("icd10cm", "icd10cm")


def build_icd10cm(raw: dict[str, Fetched]) -> Normalized:
    f = raw["icd10cm_tabular"]
    df = icd10cm.parse_icd10cm_tabular(f.data, f.file)
    inputs = {"icd10cm_tabular": df.height}
    notes = [f"{df.filter(pl.col('billable')).height:,} billable codes"]
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
