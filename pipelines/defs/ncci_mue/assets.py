"""NCCI practitioner MUEs: the official CSV (Latin-1, quoted notice) and the complete copy."""


import polars as pl

from ...lib import ncci
from ...lib.conform import conform
from ...lib.errors import SourceFormatError
from ...lib.fetch import Fetched
from ..common import Normalized, raw_asset, table_asset

ncci_mue_raw = raw_asset("ncci_mue", "ncci_mue")


def build_mue(raw: dict[str, Fetched]) -> Normalized:
    official = raw.get("mue_official")
    derived = raw.get("mue_complete")
    inputs: dict[str, int] = {}
    notes: list[str] = []
    off_df = None
    if official is not None:
        off_df = ncci.parse_mue_official(official.data, official.file)
        inputs["mue_official"] = off_df.height
    if official is not None and not official.excerpt:
        df, chosen, sources = off_df, official.file, ["mue_official"]
    elif derived is not None:
        df = ncci.parse_mue_derived(derived.data, derived.file)
        inputs["mue_complete"] = df.height
        chosen = f"{derived.file} (release {derived.release})"
        sources = ["mue_complete"]
    else:
        raise SourceFormatError("mue", "no complete MUE table",
                                expected="the official file or the complete derived copy")
    notes.append(f"table built from {chosen}")
    if off_df is not None and df is not off_df:
        j = off_df.join(df, on="hcpcs", how="inner", suffix="_c")
        agree = j.filter((pl.col("mue_units") == pl.col("mue_units_c"))
                         & (pl.col("mai") == pl.col("mai_c")))
        notes.append(f"cross-check with {official.file}: {j.height} of {off_df.height} codes "
                     f"present, {agree.height} agree on units and MAI")
    return Normalized(conform(df, "mue", chosen), inputs, notes, sources)


mue = table_asset("mue", "ncci_mue", "ncci_mue_raw", build_mue)
