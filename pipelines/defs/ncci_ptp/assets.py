"""NCCI practitioner PtP edits: official quarterly parts and the complete derived copy.

The official layout is what a download brings; offline, the only complete table is a
derived 2024 Q3 export. Both are read: the bundle's table comes from the most complete
input, and the other is cross-checked against it so a drift is visible in the metadata.
"""


import polars as pl

from ...lib import ncci
from ...lib.conform import conform, typed
from ...lib.errors import SourceFormatError
from ...lib.fetch import Fetched
from ..common import Normalized, raw_asset, table_asset

ncci_ptp_raw = raw_asset("ncci_ptp", "ncci_ptp")
PARTS = ("ptp_f1", "ptp_f2", "ptp_f3", "ptp_f4")


def cross_check(base: pl.DataFrame, other: pl.DataFrame, label: str) -> str:
    """How many of ``other``'s pairs ``base`` has, and how many agree on indicator/rationale."""
    keys = ["column_1", "column_2"]
    o = other.select(*keys, "modifier_indicator", "rationale").unique(keys, keep="last")
    b = base.select(*keys, "modifier_indicator", "rationale").unique(keys, keep="last")
    joined = o.join(b, on=keys, how="left", suffix="_base")
    present = joined.filter(pl.col("modifier_indicator_base").is_not_null())
    agree = present.filter(
        (pl.col("modifier_indicator") == pl.col("modifier_indicator_base"))
        & (pl.col("rationale") == pl.col("rationale_base")))
    return (f"cross-check with {label}: {present.height:,} of {o.height:,} pairs present, "
            f"{agree.height:,} agree on modifier indicator and rationale")


def build_ncci_ptp(raw: dict[str, Fetched]) -> Normalized:
    official = [raw[p] for p in PARTS if p in raw]
    complete_official = len(official) == 4 and not any(f.excerpt for f in official)
    inputs: dict[str, int] = {}
    notes: list[str] = []
    derived = raw.get("ptp_complete")
    if complete_official:
        # one part at a time: each parsed frame (~110 B a row) is typed to its Arrow columns
        # (~70 B a row) and dropped before the next part is read
        parts = []
        for f in official:
            frame = ncci.parse_ptp_official(f.data, f.file)
            inputs[f.key] = frame.height
            parts.append(typed(frame, "ncci_ptp", f.file))
            del frame
        chosen = "official quarterly parts f1-f4"
        table = ncci.merge_ptp_parts(parts)
        del parts
        notes.append(f"table built from the {chosen}")
        return Normalized(table, inputs, notes, list(PARTS))
    frames = {f.key: ncci.parse_ptp_official(f.data, f.file) for f in official}
    inputs.update({k: v.height for k, v in frames.items()})
    if derived is None:
        missing = [p for p in PARTS if p not in raw]
        raise SourceFormatError(
            "ncci_ptp", "no complete PtP table: official parts missing or excerpts only",
            expected="all four official parts, or the complete derived copy",
            found=f"missing {', '.join(missing) or 'none'}; excerpts "
                  f"{', '.join(f.key for f in official if f.excerpt) or 'none'}",
        )
    df = ncci.parse_ptp_derived(derived.data, derived.file)
    inputs["ptp_complete"] = df.height
    chosen = f"complete derived copy {derived.file} (release {derived.release})"
    notes.append(f"table built from the {chosen}")
    if frames:
        notes.append(cross_check(df, pl.concat(list(frames.values())),
                                 "official " + ", ".join(f.file for f in official)))
    return Normalized(conform(df, "ncci_ptp", chosen), inputs, notes, ["ptp_complete"])


ncci_ptp = table_asset("ncci_ptp", "ncci_ptp", "ncci_ptp_raw", build_ncci_ptp)
