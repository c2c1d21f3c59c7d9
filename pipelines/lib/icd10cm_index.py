"""CDC's ICD-10-CM index XMLs -> the ``icd10cm_eindex``, ``icd10cm_neoplasm`` and
``icd10cm_drug`` tables.

Why they are in the bundle: a coder does not find ``W58.01`` from the tabular's title
("Bitten by alligator") but from the External Cause Index ("Bite, alligator"), and picks a
neoplasm or poisoning code from a *table* whose columns are the behaviour (malignant primary,
benign ...) or the intent (accidental, self-harm, adverse effect ...).  The coding arena's
``search_icd10`` reads these tables.

All three files share one layout (``icd10cm-index-2025.xsd`` / ``icd-10-cm-drug-neoplasm-
2025.xsd``): ``<letter>`` > ``<mainTerm>`` > nested ``<term level="n">``, each with a
``<title>`` (its ``<nemod>`` child holds the nonessential modifiers, printed in parentheses),
and optionally ``<see>``, ``<seeAlso>``, ``<code>``/``<subcat>``/``<seecat>`` (the index) or
``<cell col="2..7">`` (the tables, headed by ``<indexHeading>``).

Conventions of the produced tables (one row per mainTerm or term, in document order):

* ``seq`` -- 1-based position in the file, the key: the index's order is the coder's order
  and paths are not unique (the Drug Table lists "Pentazocine" twice).
* ``level`` -- 0 for a mainTerm, else the term's ``level``; ``title`` without its nemod,
  ``nemod`` the modifiers as printed (``(in transit) (powered)``), whitespace collapsed.
* ``path`` -- the titles from the mainTerm down, joined with ", " the way the index's own
  cross-references are written ("Accident, boat, boating, striking swimmer, powered").
* a code that ends in ``-`` is a prefix: the tabular gives the remaining characters.  The
  Drug Table's codes are 5-6 characters (T58.11, T39.1X1); a 7th (A/D/S) is always added.
* the tables' "-"/"--" cells (no such code) are null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

import polars as pl

from .errors import SourceFormatError
from .icd10cm import run_expat

_ROOT = "ICD10CM.index"
_CODE_RE = re.compile(r"^[A-Z][0-9A-Z]{2}(\.[0-9A-Z]{0,4})?-?$")
_EMPTY_CELLS = frozenset({"", "-", "--"})

EINDEX_TITLE = "ICD-10-CM EXTERNAL CAUSE of INJURIES INDEX"
# column number -> (expected heading, column name); checked against <indexHeading>
NEOPLASM_COLUMNS = {
    2: ("Malignant Primary", "malignant_primary"),
    3: ("Malignant Secondary", "malignant_secondary"),
    4: ("Ca in situ", "ca_in_situ"),
    5: ("Benign", "benign"),
    6: ("Uncertain Behavior", "uncertain_behavior"),
    7: ("Unspecified Behavior", "unspecified_behavior"),
}
DRUG_COLUMNS = {
    2: ("Poisoning Accidental (unintentional)", "poisoning_accidental"),
    3: ("Poisoning Intentional self-harm", "poisoning_intentional_self_harm"),
    4: ("Poisoning Assault", "poisoning_assault"),
    5: ("Poisoning Undetermined", "poisoning_undetermined"),
    6: ("Adverse effect", "adverse_effect"),
    7: ("Underdosing", "underdosing"),
}
_FIRST_HEAD = {"neoplasm": "Neoplasm", "drug": "Substance"}

_COMMON: dict[str, pl.DataType] = {
    "seq": pl.Int32(), "letter": pl.String(), "level": pl.Int8(), "title": pl.String(),
    "nemod": pl.String(), "path": pl.String(), "see": pl.String(), "see_also": pl.String(),
}
EINDEX_SCHEMA: dict[str, pl.DataType] = {**_COMMON, "code": pl.String(),
                                         "see_category": pl.String()}
NEOPLASM_SCHEMA: dict[str, pl.DataType] = {
    **_COMMON, **{name: pl.String() for _, name in NEOPLASM_COLUMNS.values()}}
DRUG_SCHEMA: dict[str, pl.DataType] = {
    **_COMMON, **{name: pl.String() for _, name in DRUG_COLUMNS.values()}}


@dataclass
class _Entry:
    line: int
    letter: str
    level: int
    title: list[str] = field(default_factory=list)
    nemod: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)  # see, seeAlso, code, subcat, seecat
    cells: dict[int, str] = field(default_factory=dict)


@dataclass
class _Doc:
    title: str | None
    heads: dict[int, str]
    entries: list[_Entry]


def _clean(text: str) -> str:
    return " ".join(text.split())


def _read(data: bytes, source: str) -> _Doc:
    """One pass of expat over an index file, keeping each entry's line for error messages."""
    if not data.strip():
        raise SourceFormatError(source, "file is empty", row=1,
                                expected="ICD-10-CM index XML")
    parser = expat.ParserCreate()
    tags: list[str] = []
    stack: list[_Entry] = []  # open mainTerm/term entries
    entries: list[_Entry] = []
    heads: dict[int, str] = {}
    doc_title: list[str] = []
    letter: list[str] = [""]
    buf: list[str] = []
    col: list[int] = [0]

    def start(tag: str, attrs: dict[str, str]) -> None:
        line = parser.CurrentLineNumber
        parent = tags[-1] if tags else None
        if parent is None and tag != _ROOT:
            raise SourceFormatError(source, "unexpected root element", row=line, column=tag,
                                    expected=f"<{_ROOT}>")
        if tag == "mainTerm":
            if parent != "letter":
                raise SourceFormatError(source, "<mainTerm> outside a <letter>", row=line,
                                        column=tag, found=f"inside <{parent}>")
            entry = _Entry(line, letter[0], 0)
            stack.append(entry)
            entries.append(entry)
        elif tag == "term":
            if parent not in ("mainTerm", "term"):
                raise SourceFormatError(source, "<term> outside a <mainTerm>", row=line,
                                        column=tag, found=f"inside <{parent}>")
            level = attrs.get("level", "")
            if not level.isdigit() or int(level) != stack[-1].level + 1:
                raise SourceFormatError(
                    source, "term level does not follow its parent", row=line,
                    column="term/@level", expected=str(stack[-1].level + 1), found=level)
            entry = _Entry(line, letter[0], int(level))
            stack.append(entry)
            entries.append(entry)
        elif tag in ("cell", "head"):
            c = attrs.get("col", "")
            if not c.isdigit() or not 1 <= int(c) <= 9:
                raise SourceFormatError(source, f"<{tag}> has a bad column number", row=line,
                                        column=f"{tag}/@col", expected="1..9", found=c)
            col[0] = int(c)
            buf.clear()
        elif tag in ("title", "see", "seeAlso", "code", "subcat", "seecat", "manif"):
            buf.clear()
        elif tag == "nemod" and parent == "title" and stack and tags[-2] in ("mainTerm",
                                                                               "term"):
            stack[-1].title.append("".join(buf))  # the title's text before its nemod
            buf.clear()
        tags.append(tag)

    def end(tag: str) -> None:
        tags.pop()
        parent = tags[-1] if tags else None
        text = _clean("".join(buf))
        if tag in ("mainTerm", "term"):
            entry = stack.pop()
            if not "".join(entry.title).strip():
                raise SourceFormatError(source, f"<{tag}> has no <title>", row=entry.line,
                                        column=tag, expected="a non-empty <title>")
        elif tag == "nemod" and parent == "title" and stack and tags[-2] in ("mainTerm",
                                                                             "term"):
            stack[-1].nemod.append(text)
        elif tag == "title":
            if parent in ("mainTerm", "term"):
                stack[-1].title.append(text)
            elif parent == "letter":
                letter[0] = text
            elif parent == _ROOT:
                doc_title.append(text)
        elif tag in ("see", "seeAlso", "code", "subcat", "seecat") and parent in (
                "mainTerm", "term"):
            stack[-1].fields[tag] = text
        elif tag == "cell" and parent in ("mainTerm", "term"):
            if col[0] in stack[-1].cells:
                raise SourceFormatError(source, f"column {col[0]} given twice",
                                        row=parser.CurrentLineNumber, column="cell/@col")
            stack[-1].cells[col[0]] = text
        elif tag == "head":
            heads[col[0]] = text
        buf.clear()

    def chars(text: str) -> None:
        buf.append(text)

    run_expat(parser, data, source, start, end, chars)
    if not entries:
        raise SourceFormatError(source, "no <mainTerm> elements", row=1,
                                expected=f"<{_ROOT}> with <letter> and <mainTerm> elements")
    return _Doc(doc_title[0] if doc_title else None, heads, entries)


def _title_parts(entry: _Entry) -> tuple[str, str | None]:
    """Title text outside <nemod> (the title's text arrives in pieces around it)."""
    title = _clean(" ".join(entry.title))
    return title, (_clean(" ".join(entry.nemod)) or None)


def _check_code(code: str, entry: _Entry, source: str, column: str) -> str:
    if not _CODE_RE.match(code):
        raise SourceFormatError(source, "malformed ICD-10-CM code", row=entry.line,
                                column=column, expected="e.g. W58.01, C34.9- or T39.1X1",
                                found=code)
    return code


def _common_columns(doc: _Doc) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in _COMMON}
    path: list[str] = []
    for seq, entry in enumerate(doc.entries, start=1):
        title, nemod = _title_parts(entry)
        del path[entry.level:]
        path.append(title)
        for key, value in (("seq", seq), ("letter", entry.letter), ("level", entry.level),
                           ("title", title), ("nemod", nemod), ("path", ", ".join(path)),
                           ("see", entry.fields.get("see")),
                           ("see_also", entry.fields.get("seeAlso"))):
            cols[key].append(value)
    return cols


def parse_eindex(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``icd-10-cm-eindex-YYYY.xml`` (External Cause of Injuries Index) into rows.

    ``code`` is the entry's ``<code>`` or ``<subcat>`` (both name a code or code prefix);
    ``see_category`` the rare ``<seecat>`` ("see category Y36").
    """
    doc = _read(data, source)
    if doc.title is not None and doc.title.upper() != EINDEX_TITLE.upper():
        raise SourceFormatError(source, "not the External Cause Index", row=1,
                                column="ICD10CM.index/title", expected=EINDEX_TITLE,
                                found=doc.title)
    if doc.heads:
        raise SourceFormatError(source, "the External Cause Index has no table columns",
                                row=1, column="indexHeading",
                                expected="no <indexHeading> (is this the Neoplasm or Drug "
                                "Table?)")
    cols = _common_columns(doc)
    cols["code"], cols["see_category"] = [], []
    for entry in doc.entries:
        code = entry.fields.get("code") or entry.fields.get("subcat")
        cols["code"].append(_check_code(code, entry, source, "code") if code else None)
        cols["see_category"].append(entry.fields.get("seecat"))
    return pl.DataFrame(cols, schema=EINDEX_SCHEMA)


def _parse_table(data: bytes, source: str, kind: str,
                 columns: dict[int, tuple[str, str]], schema: dict[str, pl.DataType]
                 ) -> pl.DataFrame:
    doc = _read(data, source)
    expected = {1: _FIRST_HEAD[kind], **{c: h for c, (h, _) in columns.items()}}
    if doc.heads != expected:
        found = "; ".join(f"{c}={h}" for c, h in sorted(doc.heads.items())) or "none"
        raise SourceFormatError(
            source, f"column headings are not the {kind} table's", row=1,
            column="indexHeading",
            expected="; ".join(f"{c}={h}" for c, h in sorted(expected.items())), found=found)
    cols = _common_columns(doc)
    for _, name in columns.values():
        cols[name] = []
    for entry in doc.entries:
        extra = set(entry.cells) - set(columns)
        if extra:
            raise SourceFormatError(source, "cell in a column the table does not have",
                                    row=entry.line, column="cell/@col",
                                    expected="2..7", found=str(min(extra)))
        for c, (_, name) in columns.items():
            value = entry.cells.get(c, "")
            cols[name].append(None if value in _EMPTY_CELLS
                              else _check_code(value, entry, source, f"cell col={c}"))
    return pl.DataFrame(cols, schema=schema)


def parse_neoplasm_table(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``icd-10-cm-neoplasm-YYYY.xml`` (Neoplasm Table: one code column per behaviour)."""
    return _parse_table(data, source, "neoplasm", NEOPLASM_COLUMNS, NEOPLASM_SCHEMA)


def parse_drug_table(data: bytes, source: str) -> pl.DataFrame:
    """Parse ``icd-10-cm-drug-YYYY.xml`` (Table of Drugs and Chemicals: a column per intent)."""
    return _parse_table(data, source, "drug", DRUG_COLUMNS, DRUG_SCHEMA)


def code_columns(table: str) -> tuple[str, ...]:
    """The columns of ``table`` that hold ICD-10-CM codes."""
    return {"icd10cm_eindex": ("code",),
            "icd10cm_neoplasm": tuple(n for _, n in NEOPLASM_COLUMNS.values()),
            "icd10cm_drug": tuple(n for _, n in DRUG_COLUMNS.values())}[table]


def unresolved_codes(codes: list[str], tabular_codes: set[str]) -> list[str]:
    """Index codes the tabular does not have: exact codes must exist as nodes, a code ending
    in ``-`` must be the prefix of some node (the index sends the coder to the tabular)."""
    nodes = sorted(tabular_codes)
    out = []
    from bisect import bisect_left

    for code in codes:
        if code.endswith("-"):
            stem = code[:-1].rstrip(".")
            i = bisect_left(nodes, stem)
            if i < len(nodes) and nodes[i].startswith(stem):
                continue
        elif code in tabular_codes:
            continue
        out.append(code)
    return out
