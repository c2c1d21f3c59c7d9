"""Parser for OPPS Addendum B (hospital outpatient payment by HCPCS code).

CMS publishes Addendum B with every OPPS rule (``2025 NFRM Addendum B.11122024.txt``,
tab-delimited) and every quarter (``2026 January Web Addendum B.12.29.25.csv``, the "508"
CSV). Both open with a few notice lines (title, AMA/ADA copyright, coverage disclaimer,
rounding note) whose first cell is usually empty, then one header row starting
``HCPCS Code``, then one row per code. The parser finds that header, maps columns by name
(CMS pads some header cells: `` SI``, `` APC ``), and reads every row strictly:

- money is ``$5,834.36``, ``"$1,026.047"`` (drugs carry a third decimal), ``2082.24`` or
  empty; a lone ``.`` in a copayment cell means "no value" (CMS's own convention);
- a code cell may carry CMS's trailing blank (``0526U ``) or a stray ``0xFF`` byte
  (``A4341ÿ`` in the CY2025 final rule): both are removed, anything else that is not five
  characters 0-9/A-Z is an error;
- every failure is a :class:`SourceFormatError` naming the file, the 1-based line and the
  header of the column.

The helpers here are shared with :mod:`pipelines.lib.asc` (ASC Addendum AA uses the same
money format and notice-line preamble).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from decimal import Decimal

import polars as pl

from .errors import SourceFormatError

__all__ = ["ADDENDUM_A_COLUMNS", "ADDENDUM_B_COLUMNS", "join_addendum_a", "parse_addendum_a",
           "parse_addendum_b"]

_CODE_RE = re.compile(r"[0-9A-Z]{4}[0-9A-Z]")
_CODE_JUNK = " \t\u00a0\u00ff\ufffd"  # blanks, CMS's stray 0xFF, and its UTF-8 mangling
_MONEY_RE = re.compile(r"\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")
_WEIGHT_RE = re.compile(r"(\d+)(?:\.(\d+))?")
_PCT_RE = re.compile(r"(\d{1,3})(?:\.(\d+))?%")
_NOTE_RE = re.compile(r"(?i)^\s*(note\b|\*)")

Row = tuple[int, list[str]]  # (1-based line the record starts on, cells)


# -- helpers shared with asc.py ------------------------------------------------------------
def decode(data: bytes, source: str, expected: str) -> str:
    """CMS addenda are Latin-1/cp1252 with the odd byte; a UTF-8 copy is accepted too."""
    if not data or not data.strip():
        raise SourceFormatError(source, "file is empty", expected=expected)
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def records(text: str, delimiter: str) -> list[Row]:
    """CSV/TSV records with the line each starts on (a quoted title may span two lines)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out: list[Row] = []
    prev = 0
    for row in reader:
        out.append((prev + 1, row))
        prev = reader.line_num
    return out


def sniff(text: str, first: str) -> str:
    """Tab when the header line is tab-delimited (the rule's .txt), else comma (508 CSV)."""
    for raw in text.splitlines():
        if norm(raw).lstrip("\t ,\"").startswith(first):
            return "\t" if "\t" in raw else ","
    return "\t" if "\t" in text else ","  # no header: read it anyway to say where data starts


def norm(cell: str) -> str:
    return " ".join(cell.upper().split())


def blank(row: list[str]) -> bool:
    return all(not c.strip() for c in row)


def find_header(rows: list[Row], source: str, first: str, label: str = "HCPCS Code") -> int:
    """Index of the header row: the first row whose first non-empty cell is ``first``.

    Notice lines above it are skipped; a row that looks like data (a code in its first
    cell) above the header means the layout moved, and is refused rather than dropped.
    """
    for i, (line, row) in enumerate(rows):
        cells = [c for c in row if c.strip()]
        if cells and norm(cells[0]) == first:
            return i
        if row and _CODE_RE.fullmatch(row[0].strip(_CODE_JUNK)):
            raise SourceFormatError(
                source, "a data row appears above the header (header missing or shifted?)",
                row=line, column=label, expected=f"a header row starting {label!r} before the "
                "first code", found="\t".join(row[:4]),
            )
    raise SourceFormatError(source, "header row not found",
                            expected=f"a row starting {label!r}")


def header_index(header: list[str], line: int, source: str,
                 columns: list[tuple[str, Callable[[str], bool], str, bool]]
                 ) -> dict[str, int]:
    """Map output fields to header positions; ``columns`` = (field, test, label, required)."""
    names = [norm(c) for c in header]
    found: dict[str, int] = {}
    for field, test, label, required in columns:
        hits = [j for j, n in enumerate(names) if test(n)]
        if len(hits) > 1:
            raise SourceFormatError(
                source, "several columns match one field", row=line, column=label,
                expected="one column", found=", ".join(header[j].strip() for j in hits),
            )
        if hits:
            found[field] = hits[0]
        elif required:
            raise SourceFormatError(
                source, "required column not found in the header", row=line, column=label,
                expected=f"a column headed {label!r}",
                found=", ".join(h.strip() for h in header if h.strip()),
            )
    return found


def code(cell: str, source: str, line: int, label: str) -> str:
    value = cell.strip(_CODE_JUNK)
    if not _CODE_RE.fullmatch(value):
        raise SourceFormatError(source, "bad HCPCS code", row=line, column=label,
                                expected="5 characters 0-9/A-Z", found=cell)
    return value


def money(cell: str, source: str, line: int, label: str, *, scale: int = 2,
          dot_is_empty: bool = False) -> Decimal | None:
    """``$1,234.56`` / ``1234.56`` / empty (→ None); no rounding, ever."""
    value = cell.strip()
    if not value or (dot_is_empty and value == "."):
        return None
    m = _MONEY_RE.fullmatch(value)
    if not m or len(m.group(2) or "") > scale:
        raise SourceFormatError(
            source, "bad amount", row=line, column=label,
            expected=f"dollars like $1,234.56 (at most {scale} decimals) or an empty cell"
            + (" or '.'" if dot_is_empty else ""), found=cell,
        )
    return Decimal(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))


def weight(cell: str, source: str, line: int, label: str, *, scale: int = 4
           ) -> Decimal | None:
    value = cell.strip()
    if not value:
        return None
    m = _WEIGHT_RE.fullmatch(value)
    if not m or len(m.group(2) or "") > scale:
        raise SourceFormatError(source, "bad relative weight", row=line, column=label,
                                expected=f"a decimal with at most {scale} places or an empty "
                                "cell", found=cell)
    return Decimal(value)


def check_unique(codes: list[str], lines: list[int], source: str, label: str) -> None:
    seen: dict[str, int] = {}
    for c, line in zip(codes, lines, strict=True):
        if c in seen:
            raise SourceFormatError(source, f"code listed twice (first on row {seen[c]})",
                                    row=line, column=label, expected="each code once", found=c)
        seen[c] = line


def data_rows(rows: list[Row], start: int, source: str, label: str) -> list[Row]:
    """Rows after the header: blank rows and trailing NOTE/asterisk footnotes are skipped,
    every other row must start with a code (checked by the caller via :func:`code`)."""
    out = []
    notes = False
    for line, row in rows[start:]:
        if blank(row):
            continue
        first = row[0] if row else ""
        if _NOTE_RE.match(first):
            notes = True
            continue
        if notes:
            raise SourceFormatError(source, "a row follows the footnotes", row=line,
                                    column=label, expected="only footnotes after the notes",
                                    found=first)
        out.append((line, row))
    return out


def cell(row: list[str], j: int | None) -> str:
    return row[j] if j is not None and j < len(row) else ""


# -- Addendum B ----------------------------------------------------------------------------
ADDENDUM_B_COLUMNS = (
    "hcpcs", "description", "comment_indicator", "status_indicator", "apc", "relative_weight",
    "payment_rate", "national_copay", "minimum_copay", "ira_coinsurance_pct", "adjusted_copay",
    "pass_through_expires", "note",
)
_B_SCHEMA = {
    "hcpcs": pl.String, "description": pl.String, "comment_indicator": pl.String,
    "status_indicator": pl.String, "apc": pl.String, "relative_weight": pl.Decimal(9, 4),
    "payment_rate": pl.Decimal(12, 3), "national_copay": pl.Decimal(12, 2),
    "minimum_copay": pl.Decimal(12, 2), "ira_coinsurance_pct": pl.Decimal(6, 3),
    "adjusted_copay": pl.Decimal(12, 2), "pass_through_expires": pl.Boolean,
    "note": pl.String,
}
_B_COLS: list[tuple[str, Callable[[str], bool], str, bool]] = [
    ("hcpcs", lambda n: n == "HCPCS CODE", "HCPCS Code", True),
    ("description", lambda n: n == "SHORT DESCRIPTOR", "Short Descriptor", True),
    ("comment_indicator", lambda n: n == "CI", "CI", False),
    ("status_indicator", lambda n: n == "SI", "SI", True),
    ("apc", lambda n: n == "APC", "APC", True),
    ("relative_weight", lambda n: n == "RELATIVE WEIGHT", "Relative Weight", True),
    ("payment_rate", lambda n: n == "PAYMENT RATE", "Payment Rate", True),
    ("national_copay", lambda n: n == "NATIONAL UNADJUSTED COPAYMENT",
     "National Unadjusted Copayment", True),
    ("minimum_copay", lambda n: n == "MINIMUM UNADJUSTED COPAYMENT",
     "Minimum Unadjusted Copayment", True),
    ("ira_coinsurance_pct", lambda n: n.startswith("IRA COINSURANCE"),
     "IRA Coinsurance percentage", False),
    ("adjusted_copay", lambda n: n == "ADJUSTED BENEFICIARY COPAYMENT",
     "Adjusted Beneficiary Copayment", False),
    ("pass_through_expires", lambda n: n.startswith("DRUG AND DEVICE PASS-THROUGH EXPIRATION"),
     "Drug and Device Pass-Through Expiration during Calendar Year", False),
    ("note", lambda n: n == "NOTE", "Note", False),
]
_SI_RE = re.compile(r"[A-Z][0-9]?")
_APC_RE = re.compile(r"\d{4}")


def parse_addendum_b(data: bytes, source: str) -> pl.DataFrame:
    """Parse OPPS Addendum B (tab-delimited .txt or the 508 .csv) into ``opps_rate`` rows."""
    text = decode(data, source, "OPPS Addendum B (a header row starting 'HCPCS Code')")
    delimiter = sniff(text, "HCPCS CODE")
    rows = records(text, delimiter)
    h = find_header(rows, source, "HCPCS CODE")
    line, header = rows[h]
    idx = header_index(header, line, source, _B_COLS)
    label = {f: header[j].strip() for f, j in idx.items()}
    out: dict[str, list[object]] = {c: [] for c in ADDENDUM_B_COLUMNS}
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
        out["comment_indicator"].append(get("comment_indicator").strip() or None)
        si = get("status_indicator").strip()
        if not _SI_RE.fullmatch(si):
            raise SourceFormatError(source, "bad status indicator", row=n,
                                    column=label["status_indicator"],
                                    expected="a letter, optionally followed by a digit", found=si)
        out["status_indicator"].append(si)
        apc = get("apc").strip()
        if apc and not _APC_RE.fullmatch(apc):
            raise SourceFormatError(source, "bad APC", row=n, column=label["apc"],
                                    expected="4 digits or an empty cell", found=apc)
        out["apc"].append(apc or None)
        out["relative_weight"].append(
            weight(get("relative_weight"), source, n, label["relative_weight"]))
        out["payment_rate"].append(
            money(get("payment_rate"), source, n, label["payment_rate"], scale=3))
        for f in ("national_copay", "minimum_copay", "adjusted_copay"):
            out[f].append(money(get(f), source, n, label.get(f, f), dot_is_empty=True))
        pct = get("ira_coinsurance_pct").strip()
        m = _PCT_RE.fullmatch(pct)
        if pct and (not m or len(m.group(2) or "") > 3):
            raise SourceFormatError(source, "bad percentage", row=n,
                                    column=label["ira_coinsurance_pct"],
                                    expected="a percentage like 20.000% or an empty cell",
                                    found=pct)
        out["ira_coinsurance_pct"].append(Decimal(pct[:-1]) if pct else None)
        flag = get("pass_through_expires").strip()
        if flag not in ("", "*"):
            raise SourceFormatError(source, "bad pass-through expiration flag", row=n,
                                    column=label["pass_through_expires"],
                                    expected="'*' or an empty cell", found=flag)
        out["pass_through_expires"].append(flag == "*")
        out["note"].append(" ".join(get("note").split()) or None)
    if not lines:
        raise SourceFormatError(source, "no code rows below the header", row=line,
                                expected="one row per HCPCS code")
    check_unique(out["hcpcs"], lines, source, label["hcpcs"])  # type: ignore[arg-type]
    return pl.DataFrame(out, schema=_B_SCHEMA)


# -- Addendum A ----------------------------------------------------------------------------
ADDENDUM_A_COLUMNS = ("apc", "group_title", "status_indicator", "relative_weight",
                      "payment_rate")
_A_SCHEMA = {"apc": pl.String, "group_title": pl.String, "status_indicator": pl.String,
             "relative_weight": pl.Decimal(9, 4), "payment_rate": pl.Decimal(12, 3)}
_A_COLS: list[tuple[str, Callable[[str], bool], str, bool]] = [
    ("apc", lambda n: n == "APC", "APC", True),
    ("group_title", lambda n: n == "GROUP TITLE", "Group Title", True),
    ("status_indicator", lambda n: n == "SI", "SI", True),
    ("relative_weight", lambda n: n == "RELATIVE WEIGHT", "Relative Weight", True),
    ("payment_rate", lambda n: n == "PAYMENT RATE", "Payment Rate", True),
]


def parse_addendum_a(data: bytes, source: str) -> pl.DataFrame:
    """Parse OPPS Addendum A (payment by APC): the title of each APC and its rate.

    Addendum B's rate for a code is its APC's rate here, so the two cross-check each other;
    the CY2025 file has a stray quote before some titles (``1482<TAB>"<TAB>Darbepoetin ..."``),
    which the CSV reader turns into a title with a leading tab, stripped here.
    """
    text = decode(data, source, "OPPS Addendum A (a header row starting 'APC')")
    rows = records(text, sniff(text, "APC"))
    h = find_header(rows, source, "APC", label="APC")
    line, header = rows[h]
    idx = header_index(header, line, source, _A_COLS)
    label = {f: header[j].strip() for f, j in idx.items()}
    out: dict[str, list[object]] = {c: [] for c in ADDENDUM_A_COLUMNS}
    lines: list[int] = []
    for n, row in data_rows(rows, h + 1, source, label["apc"]):
        apc = cell(row, idx["apc"]).strip()
        if not _APC_RE.fullmatch(apc):
            raise SourceFormatError(source, "bad APC", row=n, column=label["apc"],
                                    expected="4 digits", found=apc)
        lines.append(n)
        out["apc"].append(apc)
        out["group_title"].append(" ".join(cell(row, idx["group_title"]).split()))
        si = cell(row, idx["status_indicator"]).strip()
        if not _SI_RE.fullmatch(si):
            raise SourceFormatError(source, "bad status indicator", row=n,
                                    column=label["status_indicator"],
                                    expected="a letter, optionally followed by a digit", found=si)
        out["status_indicator"].append(si)
        out["relative_weight"].append(weight(cell(row, idx["relative_weight"]), source, n,
                                             label["relative_weight"]))
        out["payment_rate"].append(money(cell(row, idx["payment_rate"]), source, n,
                                         label["payment_rate"], scale=3))
    if not lines:
        raise SourceFormatError(source, "no APC rows below the header", row=line,
                                expected="one row per APC")
    check_unique(out["apc"], lines, source, label["apc"])  # type: ignore[arg-type]
    return pl.DataFrame(out, schema=_A_SCHEMA)


def join_addendum_a(b: pl.DataFrame, a: pl.DataFrame | None, *, shown: int = 5
                    ) -> tuple[pl.DataFrame, str, list[str]]:
    """Addendum B rows with their APC's title (``apc_title``) from Addendum A, cross-checked.

    Returns (frame, note, problems): a code's APC missing from Addendum A, or a code whose rate
    is not its APC's rate, is a problem (a shifted column or a mismatched pair of files).
    """
    if a is None:
        return (b.with_columns(pl.lit(None, pl.String).alias("apc_title")),
                "no Addendum A: APC titles empty, rates not cross-checked", [])
    titles = a.select("apc", pl.col("group_title").alias("apc_title"),
                      pl.col("payment_rate").alias("_apc_rate"), pl.lit(True).alias("_in_a"))
    j = b.join(titles, on="apc", how="left")
    problems = []
    missing = j.filter(pl.col("apc").is_not_null() & pl.col("_in_a").is_null())
    if missing.height:
        problems.append(f"{missing.height} codes have an APC that Addendum A does not list, e.g. "
                        + ", ".join(f"{c} (APC {p})" for c, p in
                                    missing.select("hcpcs", "apc").head(shown).rows()))
    priced = j.filter(pl.col("payment_rate").is_not_null() & pl.col("_in_a").is_not_null())
    differ = priced.filter(pl.col("payment_rate") != pl.col("_apc_rate"))
    if differ.height:
        problems.append(f"{differ.height} codes are not paid their APC's Addendum A rate, e.g. "
                        + ", ".join(f"{c} APC {p}: {r} vs {ar}" for c, p, r, ar in differ.select(
                            "hcpcs", "apc", "payment_rate", "_apc_rate").head(shown).rows()))
    note = (f"cross-check with Addendum A ({a.height:,} APCs): {priced.height - differ.height:,} "
            f"of {priced.height:,} codes with an APC and a rate are paid their APC's rate")
    return j.drop("_apc_rate", "_in_a"), note, problems
