"""Turn a parser's polars frame into the bundle's exact Arrow table.

Casting here (rather than trusting each parser) is what makes a layout drift fail at build
time with the table and column named, instead of surfacing later as a wrong fee.

Tables are sorted by their key, but most inputs (the NCCI parts, the fee schedule) already
come in that order; a table that is already strictly increasing by its key is kept as it is
without sorting it, which a linear comparison of neighbouring rows proves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .errors import SourceFormatError
from .tables import TABLES


def typed(df: pl.DataFrame | pa.Table, table: str, source: str = "<parsed>") -> pa.Table:
    """``df`` with exactly ``TABLES[table]``'s columns and types, rows in input order.

    One column at a time (convert, cast, check), so a 10M-row table is never held as the
    frame plus a cast copy of all of it.
    """
    spec = TABLES[table]
    have = df.columns if isinstance(df, pl.DataFrame) else df.column_names
    missing = [f.name for f in spec.schema if f.name not in have]
    if missing:
        raise SourceFormatError(
            source, f"table {table!r} is missing columns", expected=", ".join(missing),
            found=", ".join(have),
        )
    cols = []
    for f in spec.schema:
        col = (df.select(f.name).to_arrow().column(0) if isinstance(df, pl.DataFrame)
               else df.column(f.name))
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
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=spec.schema)


def _neighbours(table: pa.Table, key: Sequence[str]) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """For rows 1..n-1: (row's key > previous row's key, row's key == previous row's key),
    in the order ``sort_by_key`` uses (ascending, nulls first)."""
    n = table.num_rows
    greater = equal = None
    for name in reversed(key):
        col = table.column(name)
        prev, cur = col.slice(0, n - 1), col.slice(1)
        prev_null, cur_null = pc.is_null(prev), pc.is_null(cur)
        eq = pc.or_(pc.fill_null(pc.equal(cur, prev), False), pc.and_(prev_null, cur_null))
        gt = pc.or_(pc.fill_null(pc.greater(cur, prev), False),
                    pc.and_(prev_null, pc.invert(cur_null)))
        if greater is None:
            greater, equal = gt, eq
        else:
            greater = pc.or_(gt, pc.and_(eq, greater))
            equal = pc.and_(eq, equal)
    return greater, equal


def strictly_increasing(table: pa.Table, key: Sequence[str]) -> bool:
    """True when every row's key is greater than the previous row's: sorted and unique."""
    if table.num_rows < 2:
        return True
    greater, _ = _neighbours(table, key)
    return greater.null_count == 0 and pc.all(greater).as_py()


def repeated_rows(table: pa.Table, key: Sequence[str]) -> pa.Array:
    """Indices of rows whose key equals the previous row's (meaningful on a sorted table)."""
    if table.num_rows < 2:
        return pa.array([], pa.int64())
    _, equal = _neighbours(table, key)
    return pc.add(pc.indices_nonzero(equal), 1)


def key_order(table: pa.Table, key: Sequence[str]) -> pa.Array:
    """Row order that sorts ``table`` by ``key`` (stable). A table already sorted with no
    repeated key (checked in one linear pass) gets the identity order without a sort."""
    if strictly_increasing(table, key):
        return pa.array(np.arange(table.num_rows, dtype=np.uint64))
    keys = table.select(list(key))
    return pc.sort_indices(keys, sort_keys=[(k, "ascending", "at_start") for k in key])


def take_columns(columns: list[pa.ChunkedArray], order: pa.Array,
                 schema: pa.Schema) -> pa.Table:
    """The table of ``columns`` reordered by ``order``, one contiguous chunk per column.

    ``columns`` is consumed: each reordered copy replaces its source in the list before the
    next is made, so when the caller holds no other reference only one column is ever held
    twice. Every column goes through ``take`` even when the order is the identity, because
    the bundle's bytes have always been written from ``take`` output (its buffers, validity
    bitmap included, serialize differently from a cast's), and a rebuild must stay
    byte-identical.
    """
    for i in range(len(columns)):
        col = columns[i].take(order)
        columns[i] = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        del col
    out = pa.Table.from_arrays(columns, schema=schema)
    columns.clear()
    pa.default_memory_pool().release_unused()  # the sources are gone: give their pages back
    return out


def sort_by_key(table: pa.Table, name: str, order: pa.Array | None = None) -> pa.Table:
    """``table`` in ``TABLES[name]``'s key order, one contiguous chunk per column."""
    if order is None:
        order = key_order(table, TABLES[name].key)
    return take_columns(list(table.columns), order, table.schema)


def conform(df: pl.DataFrame | pa.Table, table: str, source: str = "<parsed>") -> pa.Table:
    """Return ``df`` as an Arrow table with ``TABLES[table]``'s schema, sorted by its key."""
    return sort_by_key(typed(df, table, source), table)
