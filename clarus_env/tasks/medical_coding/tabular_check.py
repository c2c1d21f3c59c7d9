"""The catalog checks itself against the ICD-10-CM tabular: no synonym may belong to another code.

Every phrase a note can use for a condition (each synonym, rendered with each variant's phrases) is
compared with the words the tabular assigns to codes:

* the code titles (``Acute nasopharyngitis [common cold]`` gives both ``acute nasopharyngitis``
  and ``common cold``; a trailing ``, unspecified`` / ``NOS`` is dropped so ``Cough, unspecified``
  stands for plain "cough");
* the Includes notes printed at a node (``J32`` includes "sinus infection");
* the ``<inclusionTerm>`` lists (``L30.9`` "Eczema NOS", ``J40`` "Bronchitis NOS") -- from the
  bundle's ``icd10cm`` table when it carries them, else from the tabular XML the pipeline reads
  (``../shared/cms-data/raw/icd10cm/``), else not checked;
* the Excludes1 notes, whose terms belong to the code in parentheses (``W03`` excludes1
  "collision with another person without fall (W51)").

Words are compared as a bag of normalised tokens, so "impetigo, nonbullous" meets "Non-bullous
impetigo". A phrase that equals a term *owned by* codes fails when either no owner is the
condition's code or one of its ancestors (the words belong elsewhere), or a billable owner exists
that the condition does not emit ("cough" is the title of R05.9, so a row emitting R05.1 fails).

The check is exact-phrase, so it is conservative: it never flags a phrase the tabular does not
spell out. It returns human-readable problems (empty on a good catalog), like ``catalog_problems``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.parsers import expat

from .catalog import Catalog, load_catalog, with_seventh

RAW_TABULAR = (
    Path(__file__).resolve().parents[4] / "shared" / "cms-data" / "raw" / "icd10cm"
)
_TOKEN = re.compile(r"[a-z0-9]+")
SIDE_TOKENS = frozenset({"right", "left", "bilateral", "both", "r", "l", "b", "bilat", "sided",
                         "side"})
_CODE_IN_NOTE = re.compile(r"\(([A-Z][0-9A-Z]{2}(?:\.[0-9A-Z-]*)?)[^)]*\)\s*$")
_DROP = re.compile(r"(^unspecified\s+)|(,?\s+unspecified\b.*$)|(\bNOS\b)", re.IGNORECASE)


def words(text: str) -> tuple[str, ...]:
    """A sorted bag of lower-case tokens; ``non-bullous`` and ``nonbullous`` agree."""
    t = text.lower().replace("non-", "non").replace("'s", "")
    return tuple(sorted(_TOKEN.findall(t)))


def _term_variants(text: str, title: bool = False) -> list[str]:
    """``Acute nasopharyngitis [common cold]`` -> the title and, for a title ending in a
    bracket, the bracketed synonym alone; a bracket inside a term replaces the word before it
    (``Congenital varicella [chickenpox]`` -> ``Congenital chickenpox``)."""
    out = []
    base = re.sub(r"\s*\[[^\]]*\]", "", text)
    out.append(base)
    out.append(re.sub(r"\S+\s*\[([^\]]+)\]", r"\1", text))
    end = re.search(r"\[([^\]]+)\]\s*$", text)
    if title and end:
        out.append(end.group(1))
    stripped = []
    for t in out:
        t = re.sub(r"\([^)]*\)", "", t)  # nonessential modifiers
        s = _DROP.sub("", t).strip(" ,")
        stripped.append(t.strip(" ,"))
        if s:
            stripped.append(s)
    return [s for s in stripped if s]


def inclusion_terms_from_xml(path: Path | None = None) -> dict[str, list[str]]:
    """code -> its ``<inclusionTerm>`` notes, read from the CMS tabular XML ({} if absent)."""
    if path is None:
        found = sorted(RAW_TABULAR.glob("icd10c*-tabular-*.xml")) if RAW_TABULAR.is_dir() else []
        if not found:
            return {}
        path = found[-1]
    return _parse_inclusions(str(path))


@lru_cache(maxsize=2)
def _parse_inclusions(path: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    stack: list[str] = []  # element names
    codes: list[str | None] = []
    text: list[str] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        stack.append(name)
        if name == "diag":
            codes.append(None)
        text.clear()

    def end(name: str) -> None:
        body = "".join(text).strip()
        if name == "name" and len(stack) >= 2 and stack[-2] == "diag" and codes:
            codes[-1] = body
        if name == "note" and len(stack) >= 2 and stack[-2] == "inclusionTerm" and codes:
            code = codes[-1]
            if code:
                out.setdefault(code, []).append(body)
        if name == "diag":
            codes.pop()
        stack.pop()
        text.clear()

    def chars(data: str) -> None:
        text.append(data)

    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    with open(path, "rb") as fh:
        parser.ParseFile(fh)
    return out


_OWNERS: dict[tuple[str, int], dict[tuple[str, ...], set[str]]] = {}


def term_owners(ref: Any, inclusions: dict[str, list[str]] | None = None
                ) -> dict[tuple[str, ...], set[str]]:
    """bag of words -> the codes the tabular assigns those words to (cached per bundle)."""
    key = (str(getattr(ref, "path", id(ref))), id(inclusions) if inclusions is not None else 0)
    if key not in _OWNERS:
        _OWNERS[key] = _term_owners(ref, inclusions)
    return _OWNERS[key]


def _term_owners(ref: Any, inclusions: dict[str, list[str]] | None
                 ) -> dict[tuple[str, ...], set[str]]:
    table = ref.table("icd10cm")
    cols = {c: table.column(c).to_pylist()
            for c in ("code", "kind", "description", "includes", "excludes1")}
    has_incl = "inclusion_terms" in table.column_names
    incl_col = table.column("inclusion_terms").to_pylist() if has_incl else None
    if inclusions is None and not has_incl:
        inclusions = inclusion_terms_from_xml()
    owners: dict[tuple[str, ...], set[str]] = {}

    def add(term: str, code: str, title: bool = False) -> None:
        for t in _term_variants(term, title):
            w = words(t)
            if w:
                owners.setdefault(w, set()).add(code)

    for i, code in enumerate(cols["code"]):
        if cols["kind"][i] in ("chapter", "block"):
            continue
        add(cols["description"][i] or "", code, title=True)
        for line in (cols["includes"][i] or "").split("\n"):
            if line.strip():
                add(line, code)
        if incl_col is not None:
            for line in (incl_col[i] or "").split("\n"):
                if line.strip():
                    add(line, code)
    for code, terms in (inclusions or {}).items():
        for t in terms:
            add(t, code)
    return owners


def excludes1_terms(ref: Any, code: str) -> dict[tuple[str, ...], str]:
    """bag of words -> the code an Excludes1 note at ``code`` or an ancestor sends them to."""
    out: dict[tuple[str, ...], str] = {}
    for node in ref.icd10cm_ancestors(code):
        for line in (node.get("excludes1") or "").split("\n"):
            m = _CODE_IN_NOTE.search(line)
            if m:
                for t in _term_variants(line[: m.start()]):
                    out.setdefault(words(t), m.group(1))
    return out


def rendered_phrases(cat: Catalog, cond: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(phrase, codes) for every synonym x variant phrase of a condition (stems without 7th)."""
    out = []
    for v in cat.variants(cond):
        for syn in cond["synonyms"]:
            codes = cat.codes_for(cond, v, None, syn) if not cond.get("seventh") else v["codes"]
            for ph in v["phrases"]:
                text = syn.replace("{side}", ph).replace("{v}", ph)
                out.append((text, list(codes)))
    return out


def synonym_problems(ref: Any, catalog: Catalog | None = None,
                     inclusions: dict[str, list[str]] | None = None) -> list[str]:
    """Catalog phrases whose words the tabular gives to a code the row does not emit."""
    cat = catalog or load_catalog()
    owners = term_owners(ref, inclusions)
    out: list[str] = []
    for cond in cat.conditions:
        allowed = cond.get("tabular_ok", {})
        for phrase, codes in rendered_phrases(cat, cond):
            if phrase in allowed:
                continue
            full = [_full(ref, c) for c in codes]
            excluded = {}
            for c in full:
                excluded.update(excludes1_terms(ref, c))
            if words(phrase) in excluded:
                out.append(f"condition {cond['id']}: {phrase!r} -> {', '.join(codes)}, but an "
                           f"Excludes1 note sends these words to {excluded[words(phrase)]}")
                continue
            own = owners.get(words(phrase))
            sideless = False
            if not own and cond.get("variants") and any("side" in v for v in cond["variants"]):
                # "right conjunctivitis" is "conjunctivitis" (H10.9, no laterality) on a side;
                # an unspecified-side sibling (H61.20 for H61.21) is no objection
                own = owners.get(tuple(w for w in words(phrase) if w not in SIDE_TOKENS))
                sideless = True
            if not own:
                continue
            emitted: set[str] = set()
            for c in full:
                emitted.update(n["code"] for n in ref.icd10cm_ancestors(c))
            billable = sorted(
                o for o in own
                if (node := ref.icd10cm(o)) is not None and node["billable"])
            covered = any(o in emitted for o in own)
            if sideless:  # only an unspecified-side sibling may own the words without the side
                parents = {ref.icd10cm(c)["parent"] for c in full}
                billable = [b for b in billable if ref.icd10cm(b)["parent"] not in parents]
            if not covered or (billable and not any(b in full for b in billable)):
                out.append(f"condition {cond['id']}: {phrase!r} -> {', '.join(codes)}, but the "
                           f"tabular gives these words to {', '.join(sorted(own))}")
    return out


def _full(ref: Any, code: str) -> str:
    """A 7th-character stem (S93.401, S01.01X) is checked through its initial-encounter code."""
    node = ref.icd10cm(code)
    if node is not None and node["billable"]:
        return code
    return with_seventh(code, "A")
