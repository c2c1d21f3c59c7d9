"""Parsers for the Medicare Physician Fee Schedule relative value release (RVUyyX zip).

Every parser is a pure function of ``(data: bytes, source: str)`` so it can be tested on a
handful of authored rows and reused on any quarterly release; ``source`` only appears in
error messages. Output frames carry decimals as ``pl.Decimal`` (never floats) because a fee
computed from a float RVU can be off by a cent, and they pass
:func:`pipelines.lib.conform.conform` for tables ``hcpcs_rvu``, ``gpci``,
``locality_county``, ``anes_cf`` and ``opps_cap``.

CMS republishes the same content as CSV, fixed-width text and Excel, and the CSV layouts
drift between years (2026 added ``PRIC IND``; some years drop leading zeros). The parsers
therefore find columns by header name and fail with a :class:`SourceFormatError` naming
the file, line, column and expectation rather than guessing.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from dataclasses import dataclass
from decimal import Decimal

import polars as pl

from .errors import SourceFormatError

__all__ = [
    "anes_national_cf",
    "parse_anes",
    "parse_gpci",
    "parse_gpci_txt",
    "parse_locco",
    "parse_oppscap",
    "parse_pprrvu",
    "parse_pprrvu_txt",
]

# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------

_LINE = "_line"  # 1-based line number of each record, kept so later checks can name the row


def _decode(data: bytes, source: str) -> str:
    """Decode a CMS file; they are ASCII in practice but Excel exports may be cp1252."""
    if not data or not data.strip():
        raise SourceFormatError(source, "file is empty", expected="a CMS release file")
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _csv_rows(text: str) -> list[tuple[int, list[str]]]:
    """Rows with the 1-based line each starts on (quoted cells may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    out: list[tuple[int, list[str]]] = []
    prev = 0
    for row in reader:
        out.append((prev + 1, row))
        prev = reader.line_num
    return out


def _blank(row: list[str]) -> bool:
    return all(not c.strip() for c in row)


def _norm(name: str) -> str:
    return " ".join(name.upper().split())


def _decimal_pattern(precision: int, scale: int) -> str:
    ints = precision - scale
    return rf"^-?(\d{{1,{ints}}}(\.\d{{0,{scale}}})?|\.\d{{1,{scale}}})$"


def _decimal(
    df: pl.DataFrame,
    col: str,
    precision: int,
    scale: int,
    *,
    source: str,
    label: str,
    nullable: bool = False,
) -> pl.Expr:
    """Validate a string column as an exact decimal and return the cast expression.

    ``str -> Decimal`` casts in polars silently truncate extra digits, so the format is
    checked first: a value CMS wrote as ``0.125`` in a 2-decimal column is a layout error,
    not something to round.
    """
    s = pl.col(col).str.strip_chars()
    ok = s.str.contains(_decimal_pattern(precision, scale))
    if nullable:
        ok = ok | (s == "") | s.is_null()
    bad = df.filter(~ok.fill_null(False))
    if bad.height:
        first = bad.row(0, named=True)
        raise SourceFormatError(
            source,
            "value is not a number",
            row=first[_LINE],
            column=label,
            expected=f"a decimal with at most {scale} places"
            + (" or an empty cell" if nullable else ""),
            found=first[col] if first[col] is not None else "",
        )
    return (
        pl.when(s == "").then(None).otherwise(s).cast(pl.Decimal(precision, scale)).alias(col)
    )


def _pad_code(
    df: pl.DataFrame, col: str, width: int, *, source: str, label: str
) -> pl.Expr:
    """Zero-pad numeric codes (MAC, locality) that spreadsheet exports stripped of zeros."""
    s = pl.col(col).str.strip_chars()
    bad = df.filter(~s.str.contains(rf"^\d{{1,{width}}}$").fill_null(False))
    if bad.height:
        first = bad.row(0, named=True)
        raise SourceFormatError(
            source, "code is not numeric", row=first[_LINE], column=label,
            expected=f"1 to {width} digits", found=first[col] or "",
        )
    return s.str.zfill(width).alias(col)


def _find_header(
    rows: list[tuple[int, list[str]]], source: str, test, expected: str
) -> int:
    for i, (_, row) in enumerate(rows):
        if row and test(_norm(row[0])):
            _no_data_above(rows[:i], source, expected)
            return i
    raise SourceFormatError(source, "header row not found", expected=expected)


_CODE_CELL = re.compile(r"[0-9A-Z]{5}|\d{1,5}")


def _no_data_above(rows: list[tuple[int, list[str]]], source: str, expected: str) -> None:
    """A code-like row above the header means the header moved down: those rows would be
    silently dropped, so refuse instead."""
    for line, row in rows:
        if row and _CODE_CELL.fullmatch(row[0].strip()):
            raise SourceFormatError(
                source, "a data row appears above the header (header shifted?)", row=line,
                column=expected, expected="the header before the first data row",
                found=",".join(row[:4]),
            )


@dataclass(frozen=True)
class _Col:
    field: str  # output column (hcpcs_rvu schema name)
    header: str  # normalised stacked CSV header
    kind: str  # "str", "dec", "na", "opt" (nullable string)
    required: bool = True
    precision: int = 9
    scale: int = 2
    txt: tuple[int, int] | None = None  # 1-based inclusive positions in the .txt layout


def _match_columns(
    names: list[str], spec: list[_Col], source: str, header_line: int
) -> dict[str, int]:
    """Map each spec column to its index, failing on the first required header missing."""
    index: dict[str, int] = {}
    for pos, name in enumerate(names):
        if name and name not in index:
            index[name] = pos
    found: dict[str, int] = {}
    for col in spec:
        if col.header in index:
            found[col.field] = index[col.header]
        elif col.required:
            near = difflib.get_close_matches(col.header, [n for n in names if n], n=1, cutoff=0.5)
            raise SourceFormatError(
                source,
                "required column not found in the stacked header (renamed, missing or a "
                "header line shifted)",
                row=header_line,
                column=col.header,
                expected=f"a column headed {col.header!r}",
                found=f"closest header {near[0]!r}" if near else ", ".join(n for n in names if n),
            )
    return found


# ---------------------------------------------------------------------------------------------
# PPRRVU
# ---------------------------------------------------------------------------------------------

_PPRRVU: list[_Col] = [
    _Col("hcpcs", "HCPCS", "str", txt=(1, 5)),
    _Col("modifier", "MOD", "str", txt=(6, 7)),
    _Col("description", "DESCRIPTION", "str", txt=(8, 57)),
    _Col("status", "STATUS CODE", "str", txt=(58, 58)),
    _Col("work_rvu", "WORK RVU", "dec", txt=(60, 65)),
    _Col("nonfac_pe_rvu", "NON-FAC PE RVU", "dec", txt=(67, 72)),
    _Col("nonfac_na", "NON-FAC NA INDICATOR", "na", txt=(73, 74)),
    _Col("fac_pe_rvu", "FACILITY PE RVU", "dec", txt=(76, 81)),
    _Col("fac_na", "FACILITY NA INDICATOR", "na", txt=(82, 83)),
    _Col("mp_rvu", "MP RVU", "dec", txt=(85, 89)),
    _Col("nonfac_total_rvu", "NON-FACILITY TOTAL", "dec", txt=(91, 96)),
    _Col("fac_total_rvu", "FACILITY TOTAL", "dec", txt=(97, 102)),
    _Col("pctc", "PCTC IND", "str", txt=(103, 103)),
    _Col("global_days", "GLOB DAYS", "str", txt=(104, 106)),
    _Col("mult_proc", "MULT PROC", "str", txt=(116, 116)),
    _Col("bilat_surg", "BILAT SURG", "str", txt=(117, 117)),
    _Col("asst_surg", "ASST SURG", "str", txt=(118, 118)),
    _Col("co_surg", "CO- SURG", "str", txt=(119, 119)),
    _Col("team_surg", "TEAM SURG", "str", txt=(120, 120)),
    # 2026 added PRIC IND; 2025 (CSV and the documented .txt layout) has none -> null.
    _Col("pricing_ind", "PRIC IND", "opt", required=False),
    _Col("endo_base", "ENDO BASE", "opt", txt=(128, 132)),
    _Col("conversion_factor", "CONV FACTOR", "dec", precision=9, scale=4, txt=(133, 140)),
    _Col(
        "phys_supervision", "PHYSICIAN SUPERVISION OF DIAGNOSTIC PROCEDURES", "opt",
        txt=(142, 143),
    ),
    _Col("diag_imaging_family", "DIAGNOSTIC IMAGING FAMILY INDICATOR", "opt", txt=(146, 147)),
    _Col(
        "opps_nonfac_pe_rvu", "NON-FACILITY PE USED FOR OPPS PAYMENT AMOUNT", "optdec",
        txt=(152, 157),
    ),
    _Col(
        "opps_fac_pe_rvu", "FACILITY PE USED FOR OPPS PAYMENT AMOUNT", "optdec",
        txt=(159, 164),
    ),
    _Col("opps_mp_rvu", "MP USED FOR OPPS PAYMENT AMOUNT", "optdec", txt=(166, 171)),
]
_PPRRVU_FIELDS = [c.field for c in _PPRRVU]
_HEADER_DEPTH = 6  # most header lines stacked above the HCPCS row that are considered
_PREAMBLE_COLS = 3  # preamble text sits here; header lines above HCPCS leave these empty


def _finish_pprrvu(raw: pl.DataFrame, source: str, labels: dict[str, str]) -> pl.DataFrame:
    """Validate and type the string frame shared by the CSV and fixed-width readers."""
    if raw.height == 0:
        raise SourceFormatError(source, "no data rows after the header", expected="PPRRVU rows")
    bad = raw.filter(~pl.col("hcpcs").str.contains(r"^[A-Z0-9]{5}$").fill_null(False))
    if bad.height:
        first = bad.row(0, named=True)
        raise SourceFormatError(
            source, "invalid HCPCS code", row=first[_LINE], column=labels["hcpcs"],
            expected="5 letters or digits", found=first["hcpcs"] or "",
        )
    exprs: list[pl.Expr] = []
    for col in _PPRRVU:
        label = labels[col.field]
        if col.kind in ("dec", "optdec"):
            exprs.append(
                _decimal(
                    raw, col.field, col.precision, col.scale, source=source, label=label,
                    nullable=col.kind == "optdec",
                )
            )
        elif col.kind == "na":
            s = pl.col(col.field).str.strip_chars().str.to_uppercase()
            bad = raw.filter(~s.is_in(["", "NA"]).fill_null(False))
            if bad.height:
                first = bad.row(0, named=True)
                raise SourceFormatError(
                    source, "unexpected NA indicator", row=first[_LINE], column=label,
                    expected="'NA' or blank", found=first[col.field] or "",
                )
            exprs.append((s == "NA").alias(col.field))
        elif col.kind == "opt":
            s = pl.col(col.field).str.strip_chars()
            exprs.append(pl.when(s == "").then(None).otherwise(s).alias(col.field))
        else:
            exprs.append(pl.col(col.field).str.strip_chars().fill_null("").alias(col.field))
    return raw.select(exprs)


def parse_pprrvu(data: bytes, source: str) -> pl.DataFrame:
    """Parse a PPRRVU CSV (any year / QPP variant) into ``hcpcs_rvu`` columns.

    The CSV's header is five stacked lines (``STATUS`` over ``CODE`` ...); columns are
    matched on the stacked name so an added column (2026's ``PRIC IND``) moves nothing.
    The stack is the lines above the row whose first cell is ``HCPCS``, up to the first line
    that is blank or has text in the HCPCS/MOD/DESCRIPTION columns: CMS writes the preamble
    (title, copyright, ``RELEASED mm/dd/yyyy``) there, and those three headers are one line.
    """
    text = _decode(data, source)
    rows = _csv_rows(text)
    h = _find_header(
        rows, source, lambda c: c == "HCPCS", "a header row whose first cell is 'HCPCS'"
    )
    header_line, header = rows[h]
    width = len(header)
    block: list[list[str]] = []
    for _, row in reversed(rows[max(0, h - _HEADER_DEPTH):h]):
        if _blank(row) or not _blank(row[:_PREAMBLE_COLS]):
            break
        block.insert(0, row)
    names = [
        _norm(" ".join(r[j] for r in [*block, header] if j < len(r) and r[j].strip()))
        for j in range(width)
    ]
    found = _match_columns(names, _PPRRVU, source, header_line)

    lines: list[int] = []
    cols: dict[str, list[str]] = {f: [] for f in found}
    for line, row in rows[h + 1:]:
        if _blank(row):
            continue
        if len(row) != width:
            raise SourceFormatError(
                source, "row has a different number of cells than the header", row=line,
                expected=f"{width} cells (header on row {header_line})", found=f"{len(row)} cells",
            )
        lines.append(line)
        for f, j in found.items():
            cols[f].append(row[j])
    raw = pl.DataFrame(
        {_LINE: lines, **cols}, schema={_LINE: pl.Int64, **{f: pl.String for f in cols}}
    )
    missing = [f for f in _PPRRVU_FIELDS if f not in found]
    if missing:
        raw = raw.with_columns(pl.lit(None, pl.String).alias(f) for f in missing)
    labels = {c.field: c.header for c in _PPRRVU}
    return _finish_pprrvu(raw, source, labels)


def parse_pprrvu_txt(data: bytes, source: str) -> pl.DataFrame:
    """Parse the fixed-width PPRRVU ``.txt`` (positions from the RVUyyX record layout).

    ``HDR`` copyright lines are skipped. The documented layout has no pricing-indicator
    field, so ``pricing_ind`` is null, exactly as in the CSV of the same (2025) release.
    """
    text = _decode(data, source)
    need = max(c.txt[1] for c in _PPRRVU if c.txt)
    lines: list[int] = []
    recs: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("HDR"):
            continue
        if len(line) < need:
            raise SourceFormatError(
                source, "record is shorter than the fixed-width layout", row=n,
                column=f"positions 1-{need}", expected=f"{need} characters",
                found=f"{len(line)} characters",
            )
        lines.append(n)
        recs.append(line)
    if not recs:
        raise SourceFormatError(source, "no data records", expected="PPRRVU fixed-width records")
    rec = pl.Series("rec", recs, dtype=pl.String)
    cols: dict[str, pl.Series] = {_LINE: pl.Series(_LINE, lines, dtype=pl.Int64)}
    labels: dict[str, str] = {}
    for c in _PPRRVU:
        if c.txt is None:
            cols[c.field] = pl.Series(c.field, [None] * len(recs), dtype=pl.String)
            labels[c.field] = c.header
            continue
        a, b = c.txt
        cols[c.field] = rec.str.slice(a - 1, b - a + 1).alias(c.field)
        labels[c.field] = f"positions {a}-{b} ({c.header})"
    return _finish_pprrvu(pl.DataFrame(cols), source, labels)


# ---------------------------------------------------------------------------------------------
# GPCI (Addendum E)
# ---------------------------------------------------------------------------------------------

_GPCI_COLS = [
    ("mac", lambda n: n.startswith("MEDICARE ADMIN"), "'Medicare Administrative Contractor'"),
    ("state", lambda n: n == "STATE", "'State'"),
    ("locality", lambda n: n.startswith("LOCALITY NUMBER"), "'Locality Number'"),
    ("locality_name", lambda n: n == "LOCALITY NAME", "'Locality Name'"),
    ("work_gpci", lambda n: "PW GPCI" in n, "'<year> PW GPCI'"),
    ("pe_gpci", lambda n: "PE GPCI" in n, "'<year> PE GPCI'"),
    ("mp_gpci", lambda n: "MP GPCI" in n, "'<year> MP GPCI'"),
]


def _header_map(
    header: list[str], cols, source: str, line: int
) -> dict[str, int]:
    names = [_norm(c) for c in header]
    out: dict[str, int] = {}
    for field, test, label in cols:
        hit = [j for j, n in enumerate(names) if test(n)]
        if not hit:
            raise SourceFormatError(
                source, "required column not found in the header", row=line, column=label,
                expected=f"a column headed {label}", found=", ".join(n for n in names if n),
            )
        out[field] = hit[0]
    return out


def _data_rows(
    rows: list[tuple[int, list[str]]], start: int, is_data, *, skip_blank: bool
) -> list[tuple[int, list[str]]]:
    """Rows from ``start`` up to the first non-data row (footnotes follow the data)."""
    out = []
    for line, row in rows[start:]:
        if _blank(row):
            if skip_blank:
                continue
            break
        if not is_data(row):
            break
        out.append((line, row))
    return out


def _frame(
    data_rows: list[tuple[int, list[str]]], colmap: dict[str, int]
) -> pl.DataFrame:
    cols: dict[str, list[str]] = {f: [] for f in colmap}
    for _, row in data_rows:
        for f, j in colmap.items():
            cols[f].append(row[j] if j < len(row) else "")
    return pl.DataFrame(
        {_LINE: [n for n, _ in data_rows], **cols},
        schema={_LINE: pl.Int64, **{f: pl.String for f in cols}},
    )


def _is_code_row(row: list[str]) -> bool:
    return bool(row) and re.fullmatch(r"\s*\d{1,5}\s*", row[0]) is not None


def _finish_gpci(raw: pl.DataFrame, source: str, labels: dict[str, str]) -> pl.DataFrame:
    if raw.height == 0:
        raise SourceFormatError(source, "no locality rows", expected="GPCI rows")
    return raw.select(
        _pad_code(raw, "mac", 5, source=source, label=labels["mac"]),
        pl.col("state").str.strip_chars(),
        _pad_code(raw, "locality", 2, source=source, label=labels["locality"]),
        pl.col("locality_name").str.replace_all("*", "", literal=True).str.strip_chars(),
        *(
            _decimal(raw, c, 6, 3, source=source, label=labels[c])
            for c in ("work_gpci", "pe_gpci", "mp_gpci")
        ),
    )


def parse_gpci(data: bytes, source: str) -> pl.DataFrame:
    """Parse Addendum E (``GPCIyyyy.csv``) into the ``gpci`` table.

    Excel exports drop trailing zeros (``1`` for 1.000) and may drop leading zeros, so codes
    are re-padded; ``*``/``**`` footnote markers are removed from names, and reading stops at
    the first row that is not a locality (the footnotes).
    """
    rows = _csv_rows(_decode(data, source))
    h = _find_header(
        rows, source, lambda c: c.startswith("MEDICARE ADMIN"),
        "a header row starting 'Medicare Administrative Contractor'",
    )
    line, header = rows[h]
    colmap = _header_map(header, _GPCI_COLS, source, line)
    raw = _frame(_data_rows(rows, h + 1, _is_code_row, skip_blank=False), colmap)
    names = {f: _norm(header[j]) for f, j in colmap.items()}
    return _finish_gpci(raw, source, names)


_GPCI_TXT = re.compile(
    r"^\s*(\d{1,5})\s+([A-Z]{2})\s+(\d{1,2})\s+(\S.*?)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)


def parse_gpci_txt(data: bytes, source: str) -> pl.DataFrame:
    """Parse the fixed-width ``GPCIyyyy.txt`` twin of Addendum E.

    Its column starts are not documented, so records are split on runs of spaces (the
    locality name is the only field with inner spaces); footnotes end the data.
    """
    text = _decode(data, source)
    lines = text.splitlines()
    h = next((i for i, s in enumerate(lines) if _norm(s).startswith("MEDICARE ADMI")), None)
    if h is None:
        raise SourceFormatError(
            source, "header row not found", expected="a line starting 'Medicare Admi'"
        )
    recs: list[tuple[int, list[str]]] = []
    for n, s in enumerate(lines[h + 1:], start=h + 2):
        if not s.strip():
            if recs:
                break
            continue
        if not re.match(r"^\s*\d", s):
            break
        m = _GPCI_TXT.match(s)
        if m is None:
            raise SourceFormatError(
                source, "locality record does not split into 7 fields", row=n,
                expected="MAC, state, locality, name, PW, PE and MP GPCI", found=s.strip(),
            )
        recs.append((n, list(m.groups())))
    fields = ["mac", "state", "locality", "locality_name", "work_gpci", "pe_gpci", "mp_gpci"]
    raw = _frame(recs, {f: i for i, f in enumerate(fields)})
    return _finish_gpci(raw, source, {f: f for f in fields})


# ---------------------------------------------------------------------------------------------
# LOCCO (county crosswalk)
# ---------------------------------------------------------------------------------------------

_LOCCO_COLS = [
    ("mac", lambda n: n.startswith("MEDICARE ADM"), "'Medicare Administrative Contractor'"),
    ("locality", lambda n: n.startswith("LOCALITY"), "'Locality Number'"),
    ("state", lambda n: n == "STATE", "'State'"),
    ("fee_schedule_area", lambda n: n.startswith("FEE SCHEDULE AREA"), "'Fee Schedule Area'"),
    ("counties", lambda n: n == "COUNTIES", "'Counties'"),
]


def parse_locco(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``yyLOCCO.csv`` into ``locality_county``.

    The state is printed only on a state's first row, so it is carried down. The 2025 file
    lists MAC 05302 locality 99 (Missouri rest of state) twice, identical but for trailing
    spaces; exact duplicates are dropped because (mac, locality, counties) is the table key.
    """
    rows = _csv_rows(_decode(data, source))
    h = _find_header(
        rows, source, lambda c: c.startswith("MEDICARE ADM"),
        "a header row starting 'Medicare Administrative Contractor'",
    )
    line, header = rows[h]
    colmap = _header_map(header, _LOCCO_COLS, source, line)
    raw = _frame(_data_rows(rows, h + 1, _is_code_row, skip_blank=True), colmap)
    if raw.height == 0:
        raise SourceFormatError(source, "no locality rows", expected="LOCCO rows")
    labels = {f: _norm(header[j]) for f, j in colmap.items()}
    state = pl.col("state").str.strip_chars()
    out = raw.with_columns(
        pl.when(state == "").then(None).otherwise(state).forward_fill().alias("state")
    )
    if out["state"][0] is None:
        raise SourceFormatError(
            source, "first locality row has no state", row=int(raw[_LINE][0]),
            column=labels["state"], expected="a state name",
        )
    out = out.select(
        _pad_code(raw, "mac", 5, source=source, label=labels["mac"]),
        _pad_code(raw, "locality", 2, source=source, label=labels["locality"]),
        pl.col("state"),
        pl.col("fee_schedule_area").str.replace_all("*", "", literal=True).str.strip_chars(),
        pl.col("counties").str.strip_chars(),
    )
    return out.unique(maintain_order=True)


# ---------------------------------------------------------------------------------------------
# Anesthesia conversion factors, OPPS cap
# ---------------------------------------------------------------------------------------------

_ANES_COLS = [
    ("mac", lambda n: n in ("CONTRACTOR", "CARRIER") or n.startswith("MEDICARE ADM"),
     "'Contractor'"),
    ("locality", lambda n: n.startswith("LOCALITY") and "NAME" not in n, "'Locality'"),
    ("locality_name", lambda n: n == "LOCALITY NAME", "'Locality Name'"),
    ("anes_cf", lambda n: "ANES CF" in n, "'National Anes CF of <cf>'"),
]


def _anes_header(data: bytes, source: str) -> tuple[list[tuple[int, list[str]]], int]:
    rows = _csv_rows(_decode(data, source))
    h = _find_header(
        rows, source, lambda c: c in ("CONTRACTOR", "CARRIER") or c.startswith("MEDICARE ADM"),
        "a header row starting 'Contractor'",
    )
    return rows, h


def anes_national_cf(data: bytes, source: str) -> Decimal:
    """The national anesthesia CF, which ANESyyyy.csv prints only inside a header cell."""
    rows, h = _anes_header(data, source)
    line, header = rows[h]
    for cell in header:
        if "ANES CF" in _norm(cell):
            m = re.search(r"(\d+\.\d+)", cell)
            if m:
                return Decimal(m.group(1))
            raise SourceFormatError(
                source, "national anesthesia CF not in header", row=line, column=cell.strip(),
                expected="'National Anes CF of <dd.dddd>'", found=cell,
            )
    raise SourceFormatError(
        source, "national anesthesia CF column not found", row=line,
        expected="a header cell 'National Anes CF of <dd.dddd>'", found=",".join(header),
    )


def parse_anes(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``ANESyyyy.csv`` (locality anesthesia CFs) into ``anes_cf``.

    The national CF lives in the last header cell; get it with :func:`anes_national_cf`.
    """
    rows, h = _anes_header(data, source)
    line, header = rows[h]
    colmap = _header_map(header, _ANES_COLS, source, line)
    raw = _frame(_data_rows(rows, h + 1, _is_code_row, skip_blank=False), colmap)
    if raw.height == 0:
        raise SourceFormatError(source, "no locality rows", expected="anesthesia CF rows")
    labels = {f: header[j].strip() for f, j in colmap.items()}
    return raw.select(
        _pad_code(raw, "mac", 5, source=source, label=labels["mac"]),
        _pad_code(raw, "locality", 2, source=source, label=labels["locality"]),
        pl.col("locality_name").str.replace_all("*", "", literal=True).str.strip_chars(),
        _decimal(raw, "anes_cf", 12, 2, source=source, label=labels["anes_cf"]),
    )


_OPPS_COLS = [
    ("hcpcs", lambda n: n == "HCPCS", "'HCPCS'"),
    ("modifier", lambda n: n in ("MOD", "MODIFIER"), "'MOD'"),
    ("status", lambda n: n in ("PROCSTAT", "STATUS"), "'PROCSTAT'"),
    ("mac", lambda n: n in ("CARRIER", "MAC", "CONTRACTOR"), "'CARRIER'"),
    ("locality", lambda n: n == "LOCALITY", "'LOCALITY'"),
    ("fac_price", lambda n: n == "FACILITY PRICE", "'FACILITY PRICE'"),
    # CMS spells it NON-FACILTY; accept the correct spelling too.
    ("nonfac_price", lambda n: n in ("NON-FACILTY PRICE", "NON-FACILITY PRICE"),
     "'NON-FACILTY PRICE'"),
]


def parse_oppscap(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``OPPSCAP_*.csv``: per-locality OPPS-capped imaging prices (DRA 2005 §5102(b))."""
    rows = _csv_rows(_decode(data, source))
    h = _find_header(rows, source, lambda c: c == "HCPCS", "a header row starting 'HCPCS'")
    line, header = rows[h]
    colmap = _header_map(header, _OPPS_COLS, source, line)
    raw = _frame(
        _data_rows(rows, h + 1, lambda r: bool(r[0].strip()), skip_blank=False), colmap
    )
    if raw.height == 0:
        raise SourceFormatError(source, "no data rows", expected="OPPS cap rows")
    labels = {f: header[j].strip() for f, j in colmap.items()}
    return raw.select(
        pl.col("hcpcs").str.strip_chars(),
        pl.col("modifier").str.strip_chars(),
        pl.col("status").str.strip_chars(),
        _pad_code(raw, "mac", 5, source=source, label=labels["mac"]),
        _pad_code(raw, "locality", 2, source=source, label=labels["locality"]),
        _decimal(raw, "fac_price", 12, 2, source=source, label=labels["fac_price"]),
        _decimal(raw, "nonfac_price", 12, 2, source=source, label=labels["nonfac_price"]),
    )
