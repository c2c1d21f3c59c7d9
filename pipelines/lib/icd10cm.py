"""ICD-10-CM tabular list -> the ``icd10cm`` table (a tree of chapters, blocks and codes).

Why the tabular XML and not the flat code list: billing arenas need the *hierarchy* (a claim
that uses ``E11`` or ``N18.3`` is an invalid-code error because those nodes have children) and
the Excludes1/Excludes2 notes; the flat list has neither.  The CMS order file is parsed too, as
an independent official source to cross-check billable flags and descriptions.

Conventions of the produced table (chosen here, relied on by the arenas):

* ``code`` carries the dot after the 3rd character (``E11.9``, ``S93.401A``).  Chapters use
  their number (``'4'``); blocks use ``first-last`` from the XML section id (``'E08-E13'``).
  A block that covers a single category (section id ``B10``) is written ``'B10-B10'`` so it
  never collides with the category ``B10`` in the unique ``code`` key.
* ``kind``: ``chapter``; ``block``; ``category`` = every 3-character code, billable or not
  (``I10`` is a billable category, ``E11`` is not); ``code`` = a billable leaf longer than 3
  characters, including every 7th-character expansion; ``subcategory`` = a non-billable node
  of 4-6 characters, including an XML leaf such as ``S93.401`` that only becomes billable once
  a 7th character is added.  So ``kind == 'code'`` implies ``billable``, but ``billable`` rows
  may also be 3-character categories.
* ``billable`` = the node is a leaf of the expanded tree (what CMS calls "valid for HIPAA").
* ``depth`` = level in the tree: chapter 1, block 2, category 3, each nested ``<diag>`` +1, a
  7th-character expansion one below the node it extends (``W19`` 3 -> ``W19.XXXA`` 4).
* ``chapter``/``block``/``category`` name the node's ancestor at that level, or the node itself
  when it *is* that level; ``block`` is null on chapter rows, ``category`` on chapter and block
  rows.
* ``includes``/``excludes1``/``excludes2`` hold only the notes printed at that node (joined with
  newlines); by ICD convention they also govern every descendant, so a reader walks ``parent``
  upward to collect them.  The same holds for the coder's other instructions, kept since bundle
  format 2 because a coder (and the arena's ``get_icd10``/``search_icd10``) needs them:
  ``inclusion_terms`` (``<inclusionTerm>``: synonyms coded here, e.g. "Streptococcal sore
  throat" at ``J02.0`` -- not "Includes" notes), ``use_additional_code``, ``code_first``,
  ``code_also``, ``notes`` (free-standing instructions such as "A fracture not indicated as
  open or closed should be coded to closed", and the 7th-character notes) and
  ``seventh_characters`` (the ``<sevenChrDef>`` printed at that node, one ``X: meaning`` per
  line, a ``<note>`` inside it appended to its character as ``(also: ...)``).  Rows produced by
  7th-character expansion carry none of these: they inherit them from the node they extend.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

import polars as pl

from .errors import SourceFormatError

_NODE_TAGS = frozenset({"chapter", "section", "diag"})
# XML note container -> column; every one is "notes printed at this node", newline-joined
_NOTE_COLUMNS = {"includes": "includes", "excludes1": "excludes1", "excludes2": "excludes2",
                 "inclusionTerm": "inclusion_terms", "useAdditionalCode": "use_additional_code",
                 "codeFirst": "code_first", "codeAlso": "code_also", "notes": "notes",
                 "sevenChrNote": "notes"}
_NOTE_TAGS = tuple(dict.fromkeys(_NOTE_COLUMNS.values()))
_CAPTURED_NOTES = tuple(_NOTE_COLUMNS)  # <notes> also carry 7th-character exceptions
_EXCEPTION_RE = re.compile(
    r"7th characters? (?P<chars>.+?) do(?:es)? not apply to codes in (?:sub)?category "
    r"(?P<cat>[A-Z][0-9A-Z]{2}(?:\.[0-9A-Z]+)?) with 6th character (?P<sixth>.+)$")
_CODE_RE = re.compile(r"^[A-Z][0-9A-Z][0-9A-Z](\.[0-9A-Z]{1,4})?$")
_ROOT = "ICD10CM.tabular"

SCHEMA: dict[str, pl.DataType] = {
    "code": pl.String(), "kind": pl.String(), "description": pl.String(),
    "parent": pl.String(), "chapter": pl.String(), "block": pl.String(),
    "category": pl.String(), "billable": pl.Boolean(), "depth": pl.Int8(),
    "includes": pl.String(), "excludes1": pl.String(), "excludes2": pl.String(),
    "inclusion_terms": pl.String(), "use_additional_code": pl.String(),
    "code_first": pl.String(), "code_also": pl.String(), "notes": pl.String(),
    "seventh_characters": pl.String(),
}


@dataclass
class _Node:
    tag: str
    line: int
    name: str | None = None
    desc: str | None = None
    notes: dict[str, list[str]] = field(default_factory=dict)
    seven: list[tuple[str, str]] | None = None
    seven_notes: dict[str, list[str]] = field(default_factory=dict)
    children: list[_Node] = field(default_factory=list)



def run_expat(parser: expat.XMLParserType, data: bytes, source: str, start: Callable[..., Any],
              end: Callable[..., Any], chars: Callable[[str], None]) -> None:
    """Feed ``data`` through ``parser`` with these handlers; malformed XML becomes a
    SourceFormatError naming the file, line and character (the CDC files are all parsed so)."""
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise SourceFormatError(
            source, f"malformed XML ({expat.ErrorString(exc.code)})", row=exc.lineno,
            column=f"char {exc.offset + 1}", expected="well-formed XML") from None

def _clean(text: str) -> str:
    return " ".join(text.split())


def dotted(code: str) -> str:
    """Insert the ICD-10-CM dot after the 3rd character (``E119`` -> ``E11.9``)."""
    return code if len(code) <= 3 else f"{code[:3]}.{code[3:]}"


def _read_tree(data: bytes, source: str) -> list[_Node]:
    """Build a light node tree keeping line numbers, which ElementTree drops and errors need."""
    if not data.strip():
        raise SourceFormatError(source, "file is empty", row=1, expected="ICD-10-CM tabular XML")
    parser = expat.ParserCreate()
    tags: list[str] = []
    nodes: list[_Node] = []
    chapters: list[_Node] = []
    buf: list[str] = []
    capture: list[str | None] = [None]  # what the current text buffer belongs to
    ext_char: list[str] = [""]

    def start(tag: str, attrs: dict[str, str]) -> None:
        line = parser.CurrentLineNumber
        parent_tag = tags[-1] if tags else None
        if not tags and tag != _ROOT:
            raise SourceFormatError(source, "unexpected root element", row=line,
                                    column=tag, expected=f"<{_ROOT}>")
        if tag in _NODE_TAGS:
            allowed = {"chapter": (_ROOT,), "section": ("chapter",),
                       "diag": ("section", "diag")}[tag]
            if parent_tag not in allowed:
                raise SourceFormatError(
                    source, f"<{tag}> in an unexpected place", row=line, column=tag,
                    expected=f"inside <{'> or <'.join(allowed)}>", found=f"inside <{parent_tag}>")
            node = _Node(tag, line)
            if tag == "section":
                node.name = (attrs.get("id") or "").strip() or None
            if tag == "chapter":
                chapters.append(node)
            else:
                nodes[-1].children.append(node)
            nodes.append(node)
        elif parent_tag in _NODE_TAGS and tag in ("name", "desc"):
            capture[0] = tag
            buf.clear()
        elif tag == "note" and parent_tag in _CAPTURED_NOTES and len(tags) >= 2 \
                and tags[-2] in _NODE_TAGS:
            capture[0] = _NOTE_COLUMNS[parent_tag]
            buf.clear()
        elif tag == "note" and parent_tag == "sevenChrDef" and tags[-2] in _NODE_TAGS \
                and nodes[-1].seven:
            capture[0] = "seven_note"  # "initial encounter for open fracture NOS" under B
            buf.clear()
        elif tag == "sevenChrDef" and parent_tag in _NODE_TAGS:
            nodes[-1].seven = []
        elif tag == "extension" and parent_tag == "sevenChrDef" and tags[-2] in _NODE_TAGS:
            char = (attrs.get("char") or "").strip()
            if not re.fullmatch(r"[0-9A-Z]", char):
                raise SourceFormatError(source, "bad 7th-character extension", row=line,
                                        column="extension/@char",
                                        expected="one letter or digit", found=char)
            ext_char[0] = char
            capture[0] = "extension"
            buf.clear()
        tags.append(tag)

    def end(tag: str) -> None:
        tags.pop()
        what = capture[0]
        if what is not None and tag in ("name", "desc", "note", "extension"):
            text = _clean("".join(buf))
            node = nodes[-1]
            if what == "name":
                node.name = text
            elif what == "desc":
                node.desc = text
            elif what == "extension":
                assert node.seven is not None
                node.seven.append((ext_char[0], text))
            elif what == "seven_note":
                assert node.seven
                node.seven_notes.setdefault(node.seven[-1][0], []).append(text)
            else:
                node.notes.setdefault(what, []).append(text)
            capture[0] = None
        elif tag in _NODE_TAGS:
            node = nodes.pop()
            if not node.name:
                what = "id attribute" if tag == "section" else "<name>"
                raise SourceFormatError(source, f"<{tag}> has no {what}", row=node.line,
                                        column=tag, expected=f"a non-empty {what}")
            if not node.desc:
                raise SourceFormatError(source, f"<{tag}> {node.name} has no <desc>",
                                        row=node.line, column=tag,
                                        expected="a non-empty <desc> child")

    def chars(text: str) -> None:
        if capture[0] is not None:
            buf.append(text)

    run_expat(parser, data, source, start, end, chars)
    if not chapters:
        raise SourceFormatError(source, "no <chapter> elements", row=1,
                                expected=f"<{_ROOT}> containing <chapter> elements")
    return chapters


@dataclass(frozen=True)
class _SevenException:
    """'7th characters D and S do not apply to codes in category S06 with 6th character 7/8'."""

    prefix: str  # code without dot
    sixth: frozenset[str]
    excluded: frozenset[str]


def _seven_exceptions(node: _Node, source: str) -> list[_SevenException]:
    """Read the prose 7th-character exceptions of a node's ``<notes>``.

    The XML states these only in prose (FY2026: one, in S06); without them the expansion
    invents 76 codes such as ``S06.1X7D`` that are not in the CMS code list.  A note that talks
    about 7th characters not applying but does not match the known wording is an error, so a
    new kind of exception cannot be silently ignored.
    """
    out = []
    for note in node.notes.get("notes", []):
        if "not apply" not in note:
            continue
        m = _EXCEPTION_RE.search(note)
        sixth = re.findall(r"(?:^|,? or |,\s*)([0-9A-Z]) - ", m.group("sixth")) if m else []
        chars = re.findall(r"\b([0-9A-Z])\b", m.group("chars")) if m else []
        if not m or not sixth or not chars:
            raise SourceFormatError(
                source, "unrecognized 7th-character exception note", row=node.line,
                column="notes/note", expected="'7th characters X and Y do not apply to codes in "
                "category C with 6th character N - ..., or M - ...'", found=note)
        out.append(_SevenException(m.group("cat").replace(".", ""), frozenset(sixth),
                                   frozenset(chars)))
    return out


def _seven_text(node: _Node) -> str | None:
    """The node's own ``<sevenChrDef>`` as ``A: initial encounter`` lines (None if it has none)."""
    if not node.seven:
        return None
    lines = []
    for char, text in node.seven:
        extra = node.seven_notes.get(char)
        lines.append(f"{char}: {text}" + (f" (also: {'; '.join(extra)})" if extra else ""))
    return "\n".join(lines)


def parse_icd10cm_tabular(data: bytes, source: str) -> pl.DataFrame:
    """Parse the CDC/CMS ``icd10cm-tabular-*.xml`` into ``icd10cm`` rows (see module docstring).

    7th characters are expanded here rather than left to readers because an arena must be able
    to say "``S93.401`` is not billable, ``S93.401A`` is" from the table alone; the definition
    used is the one on the nearest ancestor-or-self ``<diag>``, and codes shorter than 6
    characters are padded with the placeholder ``X`` first (ICD-10-CM guideline I.A.4).
    """
    chapters = _read_tree(data, source)
    cols: dict[str, list] = {k: [] for k in SCHEMA}
    seen: dict[str, int] = {}

    def emit(code: str, kind: str, desc: str, parent: str | None, chapter: str,
             block: str | None, category: str | None, billable: bool, depth: int,
             notes: dict[str, list[str]], line: int, seven: str | None = None) -> None:
        if code in seen:
            raise SourceFormatError(source, f"code {code} appears twice (first at line "
                                    f"{seen[code]})", row=line, column="name",
                                    expected="each code once")
        seen[code] = line
        for key, value in (("code", code), ("kind", kind), ("description", desc),
                           ("parent", parent), ("chapter", chapter), ("block", block),
                           ("category", category), ("billable", billable), ("depth", depth)):
            cols[key].append(value)
        for key in _NOTE_TAGS:
            cols[key].append("\n".join(notes[key]) if key in notes else None)
        cols["seventh_characters"].append(seven)

    def walk_diag(node: _Node, parent: str, parent_raw: str, chapter: str, block: str,
                  category: str | None, depth: int, seven: list[tuple[str, str]] | None,
                  exceptions: list[_SevenException]) -> None:
        code = node.name or ""
        if not _CODE_RE.match(code):
            raise SourceFormatError(source, "malformed ICD-10-CM code", row=node.line,
                                    column="diag/name", expected="e.g. E11 or E11.9",
                                    found=code)
        raw = code.replace(".", "")
        if category is None:
            if len(raw) != 3:
                raise SourceFormatError(source, "top-level <diag> is not a 3-character "
                                        "category", row=node.line, column="diag/name",
                                        found=code)
            category = code
        elif not raw.startswith(parent_raw) or len(raw) <= len(parent_raw):
            raise SourceFormatError(source, f"code does not extend its parent {parent}",
                                    row=node.line, column="diag/name", found=code)
        if node.seven is not None:
            seven = node.seven
        own_exceptions = _seven_exceptions(node, source)
        if own_exceptions:
            exceptions = exceptions + own_exceptions
        leaf = not node.children
        expand = leaf and bool(seven)
        billable = leaf and not expand
        kind = "category" if len(raw) == 3 else "code" if billable else "subcategory"
        emit(code, kind, node.desc or "", parent, chapter, block, category, billable, depth,
             node.notes, node.line, _seven_text(node))
        if expand:
            assert seven is not None
            if len(raw) > 6:
                raise SourceFormatError(source, "7th-character definition applies to a "
                                        "7-character code", row=node.line,
                                        column="diag/name", found=code)
            base = raw.ljust(6, "X")
            skip = {c for e in exceptions if base.startswith(e.prefix) and base[5] in e.sixth
                    for c in e.excluded}
            for char, text in seven:
                if char in skip:
                    continue
                emit(dotted(base + char), "code", f"{node.desc}, {text}", code, chapter,
                     block, category, True, depth + 1, {}, node.line)
        for child in node.children:
            walk_diag(child, code, raw, chapter, block, category, depth + 1, seven, exceptions)

    for chap in chapters:
        number = chap.name or ""
        emit(number, "chapter", chap.desc or "", None, number, None, None, False, 1,
             chap.notes, chap.line)
        for sec in chap.children:
            sid = sec.name or ""
            if not re.fullmatch(r"[A-Z][0-9A-Z][0-9A-Z](-[A-Z][0-9A-Z][0-9A-Z])?", sid):
                raise SourceFormatError(source, "malformed section id", row=sec.line,
                                        column="section/@id", expected="e.g. E08-E13 or B10",
                                        found=sid)
            block = sid if "-" in sid else f"{sid}-{sid}"
            emit(block, "block", sec.desc or "", number, number, block, None, False, 2,
                 sec.notes, sec.line)
            for diag in sec.children:
                walk_diag(diag, block, "", number, block, None, 3, None, [])
    return pl.DataFrame(cols, schema=SCHEMA)


_ORDER_SCHEMA: dict[str, pl.DataType] = {
    "order_number": pl.Int32(), "code": pl.String(), "billable": pl.Boolean(),
    "short_description": pl.String(), "long_description": pl.String(),
}


def parse_icd10cm_order(data: bytes, source: str) -> pl.DataFrame:
    """Parse the CMS ``icd10cm_order_YYYY.txt`` fixed-width file.

    Layout (CMS "order file" record): cols 1-5 order number, 7-13 code without dot, 15
    billable flag (1 = valid for HIPAA), 17-76 short description, 78- long description.
    Kept as a second official source: its flag and long description must agree with the XML.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise SourceFormatError(source, "file is empty", row=1,
                                expected="fixed-width ICD-10-CM order records")
    cols: dict[str, list] = {k: [] for k in _ORDER_SCHEMA}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line) < 78:
            raise SourceFormatError(source, "record too short", row=n, column="1-78",
                                    expected="at least 78 characters (through the long "
                                    "description)", found=line)
        order, code, flag = line[0:5], line[6:13].strip(), line[14]
        if not order.isdigit():
            raise SourceFormatError(source, "order number is not numeric", row=n,
                                    column="1-5", expected="5 digits", found=order)
        if not re.fullmatch(r"[A-Z][0-9A-Z][0-9A-Z][0-9A-Z]{0,4}", code):
            raise SourceFormatError(source, "malformed code", row=n, column="7-13",
                                    expected="an ICD-10-CM code without the dot", found=code)
        if flag not in "01":
            raise SourceFormatError(source, "billable flag is not 0/1", row=n, column="15",
                                    expected="0 or 1", found=flag)
        long_desc = line[77:].strip()
        if not long_desc:
            raise SourceFormatError(source, "long description is empty", row=n,
                                    column="78-", expected="a description")
        cols["order_number"].append(int(order))
        cols["code"].append(dotted(code))
        cols["billable"].append(flag == "1")
        cols["short_description"].append(line[16:76].strip())
        cols["long_description"].append(long_desc)
    return pl.DataFrame(cols, schema=_ORDER_SCHEMA)
