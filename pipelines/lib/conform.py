"""Turn a parser's polars frame into the bundle's exact Arrow table.

Casting here (rather than trusting each parser) is what makes a layout drift fail at build
time with the table and column named, instead of surfacing later as a wrong fee.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .errors import SourceFormatError
from .tables import TABLES


def conform(df: pl.DataFrame, table: str, source: str = "<parsed>") -> pa.Table:
    """Return ``df`` as an Arrow table with ``TABLES[table]``'s schema, sorted by its key."""
    spec = TABLES[table]
    missing = [f.name for f in spec.schema if f.name not in df.columns]
    if missing:
        raise SourceFormatError(
            source, f"table {table!r} is missing columns", expected=", ".join(missing),
            found=", ".join(df.columns),
        )
    df = df.select([f.name for f in spec.schema])
    # One column at a time (convert, cast, check, reorder), so a 10M-row table is never held
    # as the frame plus a cast copy plus a sorted copy at once (4x NCCI peaked at 4.2 GB).
    casted: dict[str, pa.ChunkedArray] = {}

    def cast(f: pa.Field) -> pa.ChunkedArray:
        col = df.select(f.name).to_arrow().column(0)
        try:
            col = col.cast(f.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise SourceFormatError(
                source, f"table {table!r} cannot be stored as {f.type}", column=f.name,
                found=str(exc),
            ) from None
        if not f.nullable and col.null_count:
            raise SourceFormatError(
                source, f"table {table!r} has {col.null_count} empty values", column=f.name,
                expected="a value on every row",
            )
        return col

    fields = {f.name: f for f in spec.schema}
    for k in spec.key:
        casted[k] = cast(fields[k])
    keys = pa.table({k: casted[k] for k in spec.key})
    order = pc.sort_indices(keys, sort_keys=[(k, "ascending", "at_start") for k in spec.key])
    del keys
    cols = []
    for f in spec.schema:
        col = casted.pop(f.name) if f.name in casted else cast(f)
        col = col.take(order)
        cols.append(col.combine_chunks() if col.num_chunks != 1 else col.chunk(0))
        del col
    return pa.Table.from_arrays(cols, schema=spec.schema)
