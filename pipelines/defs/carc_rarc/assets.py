"""X12 CARC (with group codes) and RARC code lists."""


from collections.abc import Iterator
from typing import Any

from dagster import AssetExecutionContext, AssetIn, AssetOut, Output, multi_asset

from ...lib import carc as carclib
from ...lib.conform import conform
from ...lib.errors import SourceError
from ...lib.fetch import Fetched
from ...lib.tables import TABLES
from ...resources import BundleStore
from ..common import (
    CODE_VERSION,
    PARTITIONS,
    Normalized,
    fail,
    raw_asset,
    table_asset,
    table_check_specs,
)

carc_rarc_raw = raw_asset("carc_rarc", "carc_rarc")


def build_carc(raw: dict[str, Fetched]) -> tuple[Normalized, Normalized]:
    f = raw["carc"]
    codes, groups = carclib.parse_carc_html(f.data, f.file)
    return (Normalized(conform(codes, "carc", f.file), {"carc": codes.height}),
            Normalized(conform(groups, "carc_group", f.file), {"carc": groups.height}))


def build_rarc(raw: dict[str, Fetched]) -> Normalized:
    f = raw["rarc"]
    if f.data.lstrip()[:1] == b"<":
        df = carclib.parse_rarc_html(f.data, f.file)
    else:
        df = carclib.parse_rarc_csv(f.data, f.file)
    return Normalized(conform(df, "rarc", f.file), {"rarc": df.height})


@multi_asset(
    outs={"carc": AssetOut(group_name="carc_rarc", description=TABLES["carc"].description,
                           code_version=CODE_VERSION),
          "carc_group": AssetOut(group_name="carc_rarc", code_version=CODE_VERSION,
                                 description=TABLES["carc_group"].description)},
    ins={"raw": AssetIn("carc_rarc_raw")}, partitions_def=PARTITIONS,
    check_specs=table_check_specs("carc") + table_check_specs("carc_group"),
)
def carc_tables(context: AssetExecutionContext, store: BundleStore,
                raw: dict[str, Fetched]) -> Iterator[Any]:
    from ..common import emit

    try:
        codes, groups = build_carc(raw)
    except SourceError as exc:
        raise fail(exc) from None
    for name, result in (("carc", codes), ("carc_group", groups)):
        for event in emit(context, name, result, store):
            if isinstance(event, Output):
                event = Output(event.value, output_name=name, metadata=event.metadata)
            yield event


rarc = table_asset("rarc", "carc_rarc", "carc_rarc_raw", build_rarc)
