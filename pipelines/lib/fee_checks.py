"""Independent checks of the vectorised fee schedule.

The fee table is computed with integer arithmetic in polars; these checks recompute a
deterministic sample with plain ``Decimal`` math and compare every row of an official CMS
payment file, so a bug in either path shows up as a named mismatch.
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

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
    """Compare with an official payment file; returns (records compared, problems)."""
    index = {(r["hcpcs"], r["modifier"], r["mac"], r["locality"]): r for r in fees.to_pylist()}
    problems = []
    rows = payment.to_pylist()
    for p in rows:
        key = (p["hcpcs"], p["modifier"], p["mac"], p["locality"])
        got = index.get(key)
        if got is None:
            problems.append(f"{key}: in the payment file, not in fee_schedule")
            continue
        for col in ("nonfac_amount", "fac_amount"):
            if got[col] != p[col]:
                problems.append(f"{key} {col}: fee_schedule {got[col]}, CMS {p[col]}")
    shown = problems[:MAX_SHOWN] + ([f"... {len(problems)} in all"]
                                    if len(problems) > MAX_SHOWN else [])
    return len(rows), shown
