"""X12 CARC / RARC code lists and claim adjustment group codes.

The x12.org page is the only source that lists the alpha-prefixed CARCs (A0-A8, B1-B23, ...)
and the group codes; the CSV exports cover numeric CARCs 1-308 and the RARCs.  Both glue the
dates onto the description with no separator (``"Deductible AmountStart: 01/01/1995 | Last
Modified: ... | Stop: ...Notes: ..."``), so one splitter, :func:`split_dates`, serves all three
inputs: a code's stop date is what tells an arena that a denial code is no longer valid.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import date, datetime
from html.parser import HTMLParser

import polars as pl

from .errors import SourceFormatError

CODE_SCHEMA: dict[str, pl.DataType] = {
    "code": pl.String(), "description": pl.String(), "start_date": pl.Date(),
    "stop_date": pl.Date(), "last_modified": pl.Date(), "notes": pl.String(),
}
GROUP_SCHEMA: dict[str, pl.DataType] = {
    "code": pl.String(), "name": pl.String(), "description": pl.String(),
}

# Who bears a group's adjustment.  The page gives names only; these sentences paraphrase the X12
# usage notes as recorded in DOMAIN.md section 1c, and are what an arena needs to decide
# whether a patient may be billed.  A group code not listed here keeps just its page text.
GROUP_LIABILITY = {
    "CO": "Contractual obligation: the provider writes the amount off; the patient may not be "
          "billed for it.",
    "PR": "Patient responsibility: the patient (or a secondary insurer) owes the amount.",
    "OA": "Other adjustment: neither party by contract; informational (e.g. duplicates, prior "
          "payer impact).",
    "PI": "Payer-initiated reduction where no contract applies (e.g. medical/peer review); not "
          "patient liability.",
    "CR": "Corrections and reversals.",
}

_DATE = r"\d{1,2}/\d{1,2}/\d{4}"
_TRAILER = re.compile(
    rf"^Start:\s*(?P<start>{_DATE})(?P<fields>(?:\s*\|\s*(?:Last Modified|Stop):\s*{_DATE})*)"
    r"\s*(?:Notes:\s*(?P<notes>.*))?$", re.S)
_FIELD = re.compile(rf"(Last Modified|Stop):\s*({_DATE})")
_CARC_CODE = re.compile(r"^(?:[A-Z]\d{1,2}|\d{1,3})$")
_RARC_CODE = re.compile(r"^(?:M|MA|N)\d{1,4}$")


def _ws(text: str) -> str:
    return " ".join(text.split())


def _date(text: str, source: str, row: int | None, column: str) -> date:
    try:
        return datetime.strptime(text, "%m/%d/%Y").date()
    except ValueError:
        raise SourceFormatError(source, "invalid date", row=row, column=column,
                                expected="MM/DD/YYYY", found=text) from None


def split_dates(text: str, source: str, row: int | None, column: str = "description"
                ) -> tuple[str, date, date | None, date | None, str | None]:
    """Split ``"...textStart: MM/DD/YYYY | Stop: ... | Last Modified: ...Notes: ..."``.

    Returns (description, start, stop, last_modified, notes).  The split is on the *last*
    ``Start:`` because the marker has no separator before it; a row without it is rejected,
    since a code with unknown validity dates cannot be told apart from a current one.
    """
    at = text.rfind("Start:")
    if at < 0:
        raise SourceFormatError(source, "no 'Start:' date after the description", row=row,
                                column=column, expected="'<description>Start: MM/DD/YYYY'",
                                found=text[-80:])
    m = _TRAILER.match(text[at:].strip())
    if not m:
        raise SourceFormatError(source, "unrecognized date trailer", row=row, column=column,
                                expected="'Start: MM/DD/YYYY[ | Last Modified: MM/DD/YYYY]"
                                "[ | Stop: MM/DD/YYYY][Notes: ...]'", found=text[at:])
    seen: dict[str, date] = {}
    for label, value in _FIELD.findall(m.group("fields")):
        if label in seen:
            raise SourceFormatError(source, f"'{label}:' given twice", row=row, column=column,
                                    found=text[at:])
        seen[label] = _date(value, source, row, column)
    description = _ws(text[:at])
    if not description:
        raise SourceFormatError(source, "description is empty", row=row, column=column,
                                expected="text before 'Start:'", found=text)
    notes = _ws(m.group("notes") or "") or None
    return (description, _date(m.group("start"), source, row, column), seen.get("Stop"),
            seen.get("Last Modified"), notes)


def _frame(rows: list[tuple], source: str) -> pl.DataFrame:
    seen: dict[str, int | None] = {}
    for code, line, *_ in rows:
        if code in seen:
            raise SourceFormatError(source, f"code {code} appears twice (first at row "
                                    f"{seen[code]})", row=line, column="code",
                                    expected="each code once")
        seen[code] = line
    cols = list(CODE_SCHEMA)
    data: dict[str, list] = {c: [] for c in cols}
    for code, _line, desc, start, stop, modified, notes in rows:
        for c, v in zip(cols, (code, desc, start, stop, modified, notes), strict=True):
            data[c].append(v)
    return pl.DataFrame(data, schema=CODE_SCHEMA)


def _parse_code_csv(data: bytes, source: str, code_re: re.Pattern[str], what: str
                    ) -> pl.DataFrame:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceFormatError(source, "not UTF-8 text", expected="a UTF-8 CSV",
                                found=repr(data[max(0, exc.start - 20):exc.end + 20])) from None
    if not text.strip():
        raise SourceFormatError(source, "file is empty", row=1,
                                expected="a CSV with header 'code,description'")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader)]
    missing = [c for c in ("code", "description") if c not in header]
    if missing:
        raise SourceFormatError(source, "header lacks required columns", row=1,
                                column=", ".join(missing), expected="code, description",
                                found=",".join(header))
    ci, di = header.index("code"), header.index("description")
    rows: list[tuple] = []
    for record in reader:
        line = reader.line_num
        if not any(f.strip() for f in record):
            continue
        if len(record) != len(header):
            raise SourceFormatError(source, f"{len(record)} fields", row=line,
                                    expected=f"{len(header)} fields like the header",
                                    found=",".join(record))
        code = record[ci].strip()
        if not code_re.match(code):
            raise SourceFormatError(source, f"malformed {what} code", row=line, column="code",
                                    expected=code_re.pattern, found=code)
        rows.append((code, line, *split_dates(record[di], source, line)))
    if not rows:
        raise SourceFormatError(source, "no data rows after the header", row=2,
                                expected=f"one row per {what} code")
    return _frame(rows, source)


def parse_carc_csv(data: bytes, source: str) -> pl.DataFrame:
    """Parse the ``carc_codes.csv`` export (numeric CARCs only; use the HTML for alpha codes)."""
    return _parse_code_csv(data, source, _CARC_CODE, "CARC")


def parse_rarc_csv(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``rarc_codes.csv``.

    Its own ``last_modified`` column is the scrape timestamp, not X12's date, so it is ignored;
    the table's ``last_modified`` comes from the description's ``Last Modified:``.
    """
    return _parse_code_csv(data, source, _RARC_CODE, "RARC")


class _Tables(HTMLParser):
    """Collect every <table> as rows of cells, remembering cell classes and source lines.

    Inside a cell, text within ``<span class="dates">`` is kept apart from the description so
    the HTML's own markup, not the glued text, separates the two; ``<br>`` becomes a space.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self._open: list[dict] = []
        self._cell: dict | None = None
        self._span_depth = 0  # >0 while inside span.dates in the current cell

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        line = self.getpos()[0]
        if tag == "table":
            table = {"id": a.get("id"), "line": line, "rows": []}
            self.tables.append(table)
            self._open.append(table)
        elif not self._open:
            return
        elif tag == "tr":
            self._open[-1]["rows"].append({"line": line, "class": a.get("class") or "",
                                           "cells": []})
        elif tag in ("td", "th"):
            rows = self._open[-1]["rows"]
            if not rows:
                rows.append({"line": line, "class": "", "cells": []})
            self._cell = {"tag": tag, "class": a.get("class") or "", "text": [], "dates": []}
            rows[-1]["cells"].append(self._cell)
            self._span_depth = 0
        elif self._cell is not None:
            if tag == "span" and (self._span_depth or "dates" in (a.get("class") or "")):
                self._span_depth += 1
            elif tag == "br":
                self._add(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._open:
            self._open.pop()
            self._cell = None
        elif tag in ("td", "th"):
            self._cell = None
        elif tag == "span" and self._span_depth:
            self._span_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._add(data)

    def _add(self, text: str) -> None:
        assert self._cell is not None
        self._cell["dates" if self._span_depth else "text"].append(text)


def _feed(data: bytes, source: str, what: str) -> _Tables:
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise SourceFormatError(source, "file is empty", row=1, expected=f"the x12.org {what} page")
    # Count lines the way an editor does: the saved page mixes CRLF with bare CR.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parser = _Tables()
    parser.feed(text)
    parser.close()
    return parser


def _codelist(parser: _Tables, source: str, code_re: re.Pattern[str], what: str
              ) -> pl.DataFrame:
    """x12.org code-list pages share one template: ``<table id="codelist">`` with td.code and
    td.description (dates in span.dates), so CARC and RARC pages parse alike."""
    codelists = [t for t in parser.tables if t["id"] == "codelist"]
    if len(codelists) != 1:
        raise SourceFormatError(source, f"{len(codelists)} code-list tables", row=None,
                                column="table#codelist", expected="exactly one")
    rows: list[tuple] = []
    for tr in codelists[0]["rows"]:
        cells = {c["class"]: c for c in tr["cells"] if c["tag"] == "td"}
        if not cells:  # empty or header (th-only) row
            continue
        if "code" not in cells or "description" not in cells:
            raise SourceFormatError(source, "code-list row lacks a code or description cell",
                                    row=tr["line"], column="td.code/td.description",
                                    found=", ".join(c["class"] for c in tr["cells"]))
        code = _ws("".join(cells["code"]["text"]))
        if not code_re.match(code):
            raise SourceFormatError(source, f"malformed {what} code", row=tr["line"],
                                    column="td.code", expected=code_re.pattern, found=code)
        desc = "".join(cells["description"]["text"])
        dates = _ws("".join(cells["description"]["dates"]))
        # Dates normally sit in span.dates; fall back to the glued form if the span vanishes.
        parts = split_dates(f"{desc}{dates}", source, tr["line"], "td.description")
        rows.append((code, tr["line"], *parts))
    if not rows:
        raise SourceFormatError(source, "code-list table has no rows",
                                row=codelists[0]["line"], column="table#codelist")
    return _frame(rows, source)


def parse_rarc_html(data: bytes, source: str) -> pl.DataFrame:
    """The live x12.org RARC page (what a download brings; the mirror holds a CSV scrape)."""
    return _codelist(_feed(data, source, "RARC"), source, _RARC_CODE, "RARC")


def parse_carc_html(data: bytes, source: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Parse the saved x12.org CARC page into (``carc`` rows, ``carc_group`` rows).

    The CARC list is ``<table id="codelist">``; the group codes are the one table whose rows
    are exactly (two-letter code, name).  Other tables (pending change requests) are ignored.
    """
    parser = _feed(data, source, "CARC")
    carc = _codelist(parser, source, _CARC_CODE, "CARC")

    groups = [t for t in parser.tables if t["rows"] and all(
        len(r["cells"]) == 2 and re.fullmatch(r"[A-Z]{2}", _ws("".join(r["cells"][0]["text"])))
        for r in t["rows"])]
    if len(groups) != 1:
        raise SourceFormatError(source, f"{len(groups)} group-code tables", row=None,
                                column="table", expected="exactly one table of (two-letter "
                                "group code, name) rows")
    group_rows: dict[str, list[str]] = {c: [] for c in GROUP_SCHEMA}
    for tr in groups[0]["rows"]:
        code = _ws("".join(tr["cells"][0]["text"]))
        body = _ws("".join(tr["cells"][1]["text"]))
        name, _, note = body.partition(" Note:")
        name = name.strip()
        if not name:
            raise SourceFormatError(source, f"group code {code} has no name", row=tr["line"],
                                    column="td[2]", expected="a name")
        if code in group_rows["code"]:
            raise SourceFormatError(source, f"group code {code} appears twice", row=tr["line"],
                                    column="td[1]")
        liability = GROUP_LIABILITY.get(code, name + ".")
        description = f"{liability} Note: {note.strip()}" if note else liability
        for c, v in zip(GROUP_SCHEMA, (code, name, description), strict=True):
            group_rows[c].append(v)
    return carc, pl.DataFrame(group_rows, schema=GROUP_SCHEMA)
