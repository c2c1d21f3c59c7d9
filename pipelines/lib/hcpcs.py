"""Parsers for the HCPCS Level II quarterly alpha-numeric file (fixed-width TXT and XLSX).

CMS ships the same release twice. The TXT is the documented record layout
(``HCPC<year>_recordlayout.txt``) and splits long descriptions over continuation records; the
XLSX has one row per code with the description already joined. Both are parsed so a release can
be cross-checked, and both produce the ``hcpcs_level2`` table.
"""

from __future__ import annotations

import io
import re
from datetime import date

import polars as pl

from .errors import SourceFormatError

RECORD_WIDTH = 320
_MIN_WIDTH = 293  # through the action code; the trailing filler may be trimmed

# (name, 1-based begin, 1-based end) from the 2026 record layout.
_F = {
    "code": (1, 5),
    "modifier": (4, 5),
    "seq": (6, 10),
    "recid": (11, 11),
    "long": (12, 91),
    "short": (92, 119),
    "pricing": (120, 121),
    "coverage": (230, 230),
    "betos": (257, 259),
    "tos": (261, 261),
    "add_date": (269, 276),
    "action_eff": (277, 284),
    "term_date": (285, 292),
    "action": (293, 293),
}

HCPCS_COLUMNS = (
    "code", "kind", "long_description", "short_description", "pricing_ind", "coverage_code",
    "betos", "type_of_service", "add_date", "action_effective_date", "termination_date",
    "action_code",
)
_SCHEMA = {
    "code": pl.String, "kind": pl.String, "long_description": pl.String,
    "short_description": pl.String, "pricing_ind": pl.String, "coverage_code": pl.String,
    "betos": pl.String, "type_of_service": pl.String, "add_date": pl.Date,
    "action_effective_date": pl.Date, "termination_date": pl.Date, "action_code": pl.String,
}

_CODE_RE = re.compile(r"^[A-Z0-9]\d{3}[0-9A-Z]$|^[A-Z]\d{4}$")
_MOD_RE = re.compile(r"^[A-Z0-9]{2}$")


def _field(line: str, name: str) -> str:
    b, e = _F[name]
    return line[b - 1:e]


def _opt(text: str) -> str | None:
    text = text.strip()
    return text or None


def _date(text: str, source: str, row: int, column: str) -> date | None:
    text = text.strip()
    if text.endswith(".0"):  # a date cell Excel stored as a number
        text = text[:-2]
    if not text:
        return None
    if len(text) == 8 and text.isdigit():
        try:
            return date(int(text[:4]), int(text[4:6]), int(text[6:]))
        except ValueError:
            pass
    raise SourceFormatError(
        source, "bad date", row=row, column=column, expected="a date as YYYYMMDD or blank",
        found=text,
    )


def _pos(name: str) -> str:
    b, e = _F[name]
    return f"{name} (positions {b}-{e})" if b != e else f"{name} (position {b})"


def _frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=_SCHEMA, orient="row") if rows else pl.DataFrame(
        schema=_SCHEMA
    )


def _check_unique(rows: list[dict], lines: list[int], source: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for r, line in zip(rows, lines, strict=True):
        key = (r["code"], r["kind"])
        if key in seen:
            raise SourceFormatError(
                source, f"{r['kind']} listed twice (first on row {seen[key]})", row=line,
                column="HCPC", expected="each code once", found=r["code"],
            )
        seen[key] = line


def parse_hcpcs_txt(data: bytes, source: str) -> pl.DataFrame:
    """Parse the fixed-width HCPCS TXT, joining continuation records into the long description.

    Continuation text is joined exactly as CMS splits it (80-character slices, trailing blanks
    dropped, one space between slices). That reproduces the XLSX's long descriptions except
    where CMS split the text at a double space (15 codes in Jan 2026 differ by one space). Lines
    longer than 320 characters are accepted when the excess is blank (G9871 in Jan 2026), and an
    all-blank filler line is skipped, because both occur in real releases.
    """
    if not data.strip():
        raise SourceFormatError(source, "file is empty", expected="320-character HCPCS records")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    rows: list[dict] = []
    lines: list[int] = []
    long_parts: list[str] = []
    current: dict | None = None

    def close() -> None:
        if current is not None:
            current["long_description"] = " ".join(p for p in long_parts if p)

    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if len(line) > RECORD_WIDTH and line[RECORD_WIDTH:].strip():
            raise SourceFormatError(
                source, "text beyond the 320-character record", row=n,
                column=f"positions {RECORD_WIDTH + 1}-{len(line)}", expected="blanks",
                found=line[RECORD_WIDTH:].strip(),
            )
        recid = _field(line, "recid")
        if recid not in ("3", "4", "7", "8"):
            raise SourceFormatError(
                source, "unknown record identification code", row=n, column=_pos("recid"),
                expected="3, 4, 7 or 8", found=recid,
            )
        is_mod = recid in ("7", "8")
        code = _field(line, "modifier" if is_mod else "code").strip()
        if not (_MOD_RE if is_mod else _CODE_RE).match(code):
            raise SourceFormatError(
                source, "bad code", row=n, column=_pos("modifier" if is_mod else "code"),
                expected="a 2-character modifier" if is_mod else "a 5-character HCPCS code",
                found=_field(line, "code"),
            )
        kind = "modifier" if is_mod else "code"
        long_part = _field(line, "long").rstrip()
        if recid in ("4", "8"):
            if current is None or current["code"] != code or current["kind"] != kind:
                raise SourceFormatError(
                    source, "continuation record without its first line", row=n,
                    column=_pos("recid"),
                    expected=f"a {'7' if is_mod else '3'} record for {code} just before it",
                    found=recid,
                )
            long_parts.append(long_part)
            continue
        if len(line) < _MIN_WIDTH:
            raise SourceFormatError(
                source, "record is too short", row=n, expected=f"{RECORD_WIDTH} characters",
                found=f"{len(line)} characters",
            )
        close()
        short = _field(line, "short").rstrip()
        if not short:
            raise SourceFormatError(source, "empty short description", row=n,
                                    column=_pos("short"), expected="a short description")
        current = {
            "code": code,
            "kind": kind,
            "long_description": "",
            "short_description": short,
            "pricing_ind": _opt(_field(line, "pricing")),
            "coverage_code": _opt(_field(line, "coverage")),
            "betos": _opt(_field(line, "betos")),
            "type_of_service": _opt(_field(line, "tos")),
            "add_date": _date(_field(line, "add_date"), source, n, _pos("add_date")),
            "action_effective_date": _date(
                _field(line, "action_eff"), source, n, _pos("action_eff")
            ),
            "termination_date": _date(_field(line, "term_date"), source, n, _pos("term_date")),
            "action_code": _opt(_field(line, "action")),
        }
        long_parts = [long_part]
        rows.append(current)
        lines.append(n)
    close()
    if not rows:
        raise SourceFormatError(source, "no HCPCS records", expected="records with RECID 3 or 7")
    _check_unique(rows, lines, source)
    return _frame(rows)


# XLSX column -> output column.
XLSX_COLUMNS: dict[str, str] = {
    "HCPC": "code",
    "RECID": "recid",
    "LONG DESCRIPTION": "long_description",
    "SHORT DESCRIPTION": "short_description",
    "PRICE1": "pricing_ind",
    "COV": "coverage_code",
    "BETOS": "betos",
    "TOS1": "type_of_service",
    "ADD DT": "add_date",
    "ACT EFF DT": "action_effective_date",
    "TERM DT": "termination_date",
    "ACTION CD": "action_code",
}


def parse_hcpcs_xlsx(data: bytes, source: str) -> pl.DataFrame:
    """Parse the HCPCS XLSX (first sheet, 48 columns, one row per code or modifier).

    Every cell is read as text so codes like ``0001U`` and dates stay exactly as CMS wrote
    them; the first sheet is used because its name changes with every release.
    """
    if not data:
        raise SourceFormatError(source, "file is empty", expected="an .xlsx workbook")
    try:
        df = pl.read_excel(
            io.BytesIO(data), sheet_id=1, engine="calamine", infer_schema_length=0,
            raise_if_empty=False,
        )
    except Exception as exc:  # fastexcel raises its own, unexported error types
        raise SourceFormatError(
            source, f"cannot be read as an .xlsx workbook ({type(exc).__name__}: {exc})",
            expected="an .xlsx workbook",
        ) from None
    header = [str(c).strip() for c in df.columns]
    df.columns = header
    missing = [c for c in XLSX_COLUMNS if c not in header]
    if missing:
        raise SourceFormatError(
            source, "header lacks a required column", row=1, column=missing[0],
            expected=", ".join(XLSX_COLUMNS), found=", ".join(header),
        )
    df = df.select([pl.col(k).cast(pl.String).alias(v) for k, v in XLSX_COLUMNS.items()])
    rows: list[dict] = []
    lines: list[int] = []
    for i, rec in enumerate(df.iter_rows(named=True)):
        n = i + 2  # spreadsheet row: 1 is the header
        cells = {k: (v.strip() if isinstance(v, str) else v) for k, v in rec.items()}
        if not any(cells.values()):
            continue
        recid = cells.pop("recid") or ""
        if recid.endswith(".0"):
            recid = recid[:-2]
        if recid not in ("3", "7"):
            raise SourceFormatError(source, "unknown record identification code", row=n,
                                    column="RECID", expected="3 (code) or 7 (modifier)",
                                    found=recid)
        kind = "modifier" if recid == "7" else "code"
        code = cells["code"] or ""
        if not (_MOD_RE if kind == "modifier" else _CODE_RE).match(code):
            raise SourceFormatError(
                source, "bad code", row=n, column="HCPC",
                expected="a 2-character modifier" if kind == "modifier"
                else "a 5-character HCPCS code",
                found=code,
            )
        if not cells["short_description"]:
            raise SourceFormatError(source, "empty short description", row=n,
                                    column="SHORT DESCRIPTION", expected="a short description")
        out = {k: (v or None) for k, v in cells.items()}
        out["code"] = code
        out["kind"] = kind
        out["long_description"] = cells["long_description"] or ""
        for col, label in (("add_date", "ADD DT"), ("action_effective_date", "ACT EFF DT"),
                           ("termination_date", "TERM DT")):
            out[col] = _date(cells[col] or "", source, n, label)
        rows.append(out)
        lines.append(n)
    if not rows:
        raise SourceFormatError(source, "no HCPCS rows", row=2, expected="rows with RECID 3 or 7")
    _check_unique(rows, lines, source)
    return _frame(rows).select(HCPCS_COLUMNS)
