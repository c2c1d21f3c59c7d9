"""Parser for ASC Addendum AA (ambulatory surgical center covered surgical procedures).

CMS publishes Addendum AA every quarter as a "508 Version" CSV (``January 2026 ASC Addenda -
Addendum AA.12.xx.25.csv``). It opens with a title (a quoted cell that spans two lines in
2026), the AMA/ADA copyright line and a blank line; the 4th record is the header::

    HCPCS Code,,Short Descriptor,Subject to Multiple Procedure Discounting,
    April 2026 Payment Indicator,April 2026  Payment Weight  ,April 2026 Payment Rate

The unnamed second column holds a comment flag (``*`` = "office-based" designation is
temporary, ``**`` = preventive service, coinsurance waived). After the code rows come
``NOTE 1:`` ... ``NOTE 3:`` footnotes. Packaged procedures (payment indicator N1) have no
weight and no rate; office-based ones (P2/P3) are paid at the MPFS amount and have a rate
but no weight. Rates look like ``"$1,644.87 "`` (CMS's trailing blank).

:func:`addendum_aa_period` reads the quarter the payment columns are for (``2026-04``).
"""

from __future__ import annotations

import re

import polars as pl

from .errors import SourceFormatError
from .opps import (
    cell,
    check_unique,
    code,
    data_rows,
    decode,
    find_header,
    header_index,
    money,
    norm,
    records,
    weight,
)

__all__ = ["ADDENDUM_AA_COLUMNS", "addendum_aa_period", "parse_addendum_aa"]

ADDENDUM_AA_COLUMNS = (
    "hcpcs", "description", "comment_flag", "multiple_procedure_discount", "payment_indicator",
    "payment_weight", "payment_rate",
)
_SCHEMA = {
    "hcpcs": pl.String, "description": pl.String, "comment_flag": pl.String,
    "multiple_procedure_discount": pl.Boolean, "payment_indicator": pl.String,
    "payment_weight": pl.Decimal(9, 4), "payment_rate": pl.Decimal(12, 2),
}
_MONTHS = ("JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST",
           "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER")
_PERIOD = r"(?:(" + "|".join(_MONTHS) + r") (\d{4}) )?"
_COLS = [
    ("hcpcs", lambda n: n == "HCPCS CODE", "HCPCS Code", True),
    ("description", lambda n: n == "SHORT DESCRIPTOR", "Short Descriptor", True),
    ("multiple_procedure_discount",
     lambda n: n == "SUBJECT TO MULTIPLE PROCEDURE DISCOUNTING",
     "Subject to Multiple Procedure Discounting", True),
    ("payment_indicator", lambda n: re.fullmatch(_PERIOD + "PAYMENT INDICATOR", n) is not None,
     "<Month YYYY> Payment Indicator", True),
    ("payment_weight", lambda n: re.fullmatch(_PERIOD + "PAYMENT WEIGHT", n) is not None,
     "<Month YYYY> Payment Weight", True),
    ("payment_rate", lambda n: re.fullmatch(_PERIOD + "PAYMENT RATE", n) is not None,
     "<Month YYYY> Payment Rate", True),
]
_PI_RE = re.compile(r"[A-Z][0-9]")
_FLAGS = {"": None, "*": "*", "**": "**"}


def _header(data: bytes, source: str) -> tuple[list[tuple[int, list[str]]], int]:
    rows = records(decode(data, source, "ASC Addendum AA (a header row starting 'HCPCS Code')"),
                   ",")
    return rows, find_header(rows, source, "HCPCS CODE")


def addendum_aa_period(data: bytes, source: str) -> str | None:
    """``YYYY-MM`` of the quarter named in the payment column headers (None if unnamed)."""
    rows, h = _header(data, source)
    line, header = rows[h]
    periods = set()
    for c in header:
        m = re.fullmatch(_PERIOD + "PAYMENT (INDICATOR|WEIGHT|RATE)", norm(c))
        if m and m.group(1):
            periods.add(f"{m.group(2)}-{_MONTHS.index(m.group(1)) + 1:02d}")
    if len(periods) > 1:
        raise SourceFormatError(source, "payment columns name different quarters", row=line,
                                column="Payment Indicator/Weight/Rate",
                                expected="one month and year", found=", ".join(sorted(periods)))
    return periods.pop() if periods else None


def parse_addendum_aa(data: bytes, source: str) -> pl.DataFrame:
    """Parse ASC Addendum AA (508 CSV) into ``asc_rate`` rows."""
    rows, h = _header(data, source)
    line, header = rows[h]
    idx = header_index(header, line, source, _COLS)
    # the comment flag sits in the one unnamed column between the code and the descriptor
    unnamed = [j for j in range(idx["hcpcs"] + 1, idx["description"]) if not header[j].strip()]
    flag_col = unnamed[0] if len(unnamed) == 1 else None
    label = {f: header[j].strip() for f, j in idx.items()}
    out: dict[str, list[object]] = {c: [] for c in ADDENDUM_AA_COLUMNS}
    lines: list[int] = []
    for n, row in data_rows(rows, h + 1, source, label["hcpcs"]):
        def get(field: str, row: list[str] = row) -> str:
            return cell(row, idx.get(field))

        lines.append(n)
        out["hcpcs"].append(code(get("hcpcs"), source, n, label["hcpcs"]))
        desc = get("description").strip()
        if not desc:
            raise SourceFormatError(source, "empty short descriptor", row=n,
                                    column=label["description"], expected="a description")
        out["description"].append(desc)
        flag = cell(row, flag_col).strip()
        if flag not in _FLAGS:
            raise SourceFormatError(source, "bad comment flag", row=n,
                                    column=f"column {flag_col + 1 if flag_col is not None else 2}"
                                    " (unnamed)", expected="'*', '**' or an empty cell",
                                    found=flag)
        out["comment_flag"].append(_FLAGS[flag])
        mpd = get("multiple_procedure_discount").strip().upper()
        if mpd not in ("Y", "N"):
            raise SourceFormatError(source, "bad multiple procedure discounting flag", row=n,
                                    column=label["multiple_procedure_discount"],
                                    expected="Y or N", found=mpd)
        out["multiple_procedure_discount"].append(mpd == "Y")
        pi = get("payment_indicator").strip()
        if not _PI_RE.fullmatch(pi):
            raise SourceFormatError(source, "bad payment indicator", row=n,
                                    column=label["payment_indicator"],
                                    expected="a letter and a digit, e.g. A2", found=pi)
        out["payment_indicator"].append(pi)
        out["payment_weight"].append(
            weight(get("payment_weight"), source, n, label["payment_weight"]))
        out["payment_rate"].append(money(get("payment_rate"), source, n, label["payment_rate"]))
    if not lines:
        raise SourceFormatError(source, "no code rows below the header", row=line,
                                expected="one row per HCPCS code")
    check_unique(out["hcpcs"], lines, source, label["hcpcs"])  # type: ignore[arg-type]
    return pl.DataFrame(out, schema=_SCHEMA)
