"""Independent checks of the vectorised fee schedule.

The fee table is computed with integer arithmetic in polars; these checks recompute a
deterministic sample with plain ``Decimal`` math and compare every row of an official CMS
payment file, so a bug in either path shows up as a named mismatch.
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from .fees import fee

MAX_SHOWN = 5


def spot_check(fees: pa.Table, rvu: pa.Table, gpci: pa.Table, cf: Decimal,
               samples: int = 500) -> list[str]:
    """Recompute every ``len/samples``-th fee row from its RVUs and GPCIs with Decimal math."""
    if fees.num_rows == 0:
        return ["fee_schedule is empty"]
    rvus = {(r["hcpcs"], r["modifier"]): r for r in rvu.to_pylist()}
    gpcis = {(g["mac"], g["locality"]): g for g in gpci.to_pylist()}
    step = max(1, fees.num_rows // samples)
    problems = []
    for row in fees.take(list(range(0, fees.num_rows, step))).to_pylist():
        r = rvus[(row["hcpcs"], row["modifier"])]
        g = gpcis[(row["mac"], row["locality"])]
        for setting, pe in (("nonfac_amount", r["nonfac_pe_rvu"]), ("fac_amount", r["fac_pe_rvu"])):
            got = row[setting]
            if got is None or row["opps_capped"]:
                continue
            want = fee(r["work_rvu"], pe, r["mp_rvu"], g["work_gpci"], g["pe_gpci"],
                       g["mp_gpci"], cf)
            if got != want:
                problems.append(f"{row['hcpcs']}-{row['modifier'] or 'global'} at "
                                f"{row['mac']}/{row['locality']} {setting}: table {got}, "
                                f"formula {want}")
    return problems[:MAX_SHOWN] + ([f"... {len(problems)} in all"] if len(problems) > MAX_SHOWN
                                   else [])


def payment_mismatches(fees: pa.Table, payment: pa.Table) -> tuple[int, list[str]]:
    """Compare with an official payment file; returns (records compared, problems).

    A hash join in Arrow: only the payment records (1.5k) and the rows that differ become
    Python objects, not the whole 1.1M-row fee table (that cost 3.8 s and 1.2 GB).
    """
    keys = ["hcpcs", "modifier", "mac", "locality"]
    cols = ["nonfac_amount", "fac_amount"]
    # the payment file is parsed by polars (large strings, its own decimal scale): both sides
    # are compared as plain strings and wide decimals, so no value is rounded on the way
    want = pa.schema([(k, pa.string()) for k in keys] + [(c, pa.decimal128(38, 10)) for c in cols])
    left = payment.select(keys + cols).cast(want).append_column(
        "_row", pa.array(range(payment.num_rows), pa.int64()))
    # only the fee rows of codes the payment file names take part in the join
    right = fees.filter(pc.is_in(fees.column("hcpcs"), pc.unique(payment.column("hcpcs"))))
    right = right.select(keys + cols).cast(want).rename_columns(
        keys + [f"_fee_{c}" for c in cols])
    right = right.append_column("_hit", pa.array([True] * right.num_rows, pa.bool_()))
    joined = left.join(right, keys=keys, join_type="left outer", use_threads=False)
    joined = joined.sort_by("_row")
    bad = pc.invert(pc.fill_null(joined.column("_hit"), False))
    for c in cols:
        a, b = joined.column(c), joined.column(f"_fee_{c}")
        same = pc.or_(pc.and_(pc.is_null(a), pc.is_null(b)), pc.fill_null(pc.equal(a, b), False))
        bad = pc.or_(bad, pc.invert(same))
    problems = []
    for r in joined.filter(bad).to_pylist():
        key = tuple(r[k] for k in keys)
        if not r["_hit"]:
            problems.append(f"{key}: in the payment file, not in fee_schedule")
            continue
        for c in cols:
            if r[f"_fee_{c}"] != r[c]:
                problems.append(f"{key} {c}: fee_schedule {_shown(r[f'_fee_{c}'], fees, c)}, "
                                f"CMS {_shown(r[c], payment, c)}")
    shown = problems[:MAX_SHOWN] + ([f"... {len(problems)} in all"]
                                    if len(problems) > MAX_SHOWN else [])
    return payment.num_rows, shown


def _shown(value: Decimal | None, table: pa.Table, column: str) -> str:
    """A compared (widened) amount printed at its own table's scale."""
    scale = getattr(table.schema.field(column).type, "scale", None)
    if value is None or scale is None:
        return str(value)
    return str(value.quantize(Decimal(1).scaleb(-scale)))
