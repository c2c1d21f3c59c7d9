"""The official payment file comparison, on small tables (the 2025D build runs it on 1.1M)."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from pipelines.lib.fee_checks import payment_mismatches

D = pa.decimal128(12, 2)


def _t(rows: list[tuple]) -> pa.Table:
    cols = list(zip(*rows, strict=True))
    return pa.table({
        "hcpcs": pa.array(cols[0], pa.string()), "modifier": pa.array(cols[1], pa.string()),
        "mac": pa.array(cols[2], pa.string()), "locality": pa.array(cols[3], pa.string()),
        "nonfac_amount": pa.array([None if v is None else Decimal(v) for v in cols[4]], D),
        "fac_amount": pa.array([None if v is None else Decimal(v) for v in cols[5]], D),
    })


FEES = _t([("99213", "", "04412", "18", "96.33", "58.85"),
           ("99213", "26", "04412", "18", "40.00", None),
           ("99214", "", "04412", "18", "130.10", "90.00")])


def test_equal_records_including_empty_amounts_pass() -> None:
    payment = _t([("99214", "", "04412", "18", "130.10", "90.00"),
                  ("99213", "26", "04412", "18", "40.00", None)])
    assert payment_mismatches(FEES, payment) == (2, [])
    # as parsed by polars: large strings, wider decimals
    wide = payment.cast(pa.schema([(f.name, pa.large_string()) if f.type == pa.string()
                                   else (f.name, pa.decimal128(18, 4)) for f in payment.schema]))
    assert payment_mismatches(FEES, wide) == (2, [])


def test_differences_and_missing_records_are_named_in_file_order() -> None:
    payment = _t([("99215", "", "04412", "18", "1.00", "1.00"),
                  ("99213", "", "04412", "18", "96.34", "58.85"),
                  ("99213", "26", "04412", "18", "40.00", "12.00")])
    n, problems = payment_mismatches(FEES, payment)
    assert n == 3
    assert problems == [
        "('99215', '', '04412', '18'): in the payment file, not in fee_schedule",
        "('99213', '', '04412', '18') nonfac_amount: fee_schedule 96.33, CMS 96.34",
        "('99213', '26', '04412', '18') fac_amount: fee_schedule None, CMS 12.00",
    ]
