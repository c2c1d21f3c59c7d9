"""Lookup tools for an agentic coder: ranked search over the real ICD-10-CM and CPT/HCPCS code
sets of the reference bundle, and ICD-10-CM node details with the coder's notes.

How a coder finds a code, and so how this ranks:

* **Where the words are.** ICD-10-CM titles alone miss most lay wording ("strep throat" is an
  inclusion term of ``J02.0``; "bitten by alligator" lives in the External Cause Index). Each
  ICD-10-CM node is indexed with its title, the inclusion terms and Includes notes printed at it
  and at its ancestors (they govern descendants), and every External Cause Index, Neoplasm Table
  and Drug Table entry that points at it or at an ancestor (a table entry reads e.g. "lung,
  malignant primary" or "acetaminophen, adverse effect").  A node that takes a 7th character is
  indexed once; the character is chosen from the query ("subsequent", "sequela", "nonunion"...;
  initial encounter otherwise), so results are distinct conditions, not 16 encounters of one.
* **What the coder typed.** Abbreviations and lay terms are expanded to the code set's words
  (:mod:`.search_terms`): "uti", "htn", "afib", "pink eye", "sob"; CPT short-descriptor
  abbreviations ("njx", "rpr", "b9") are expanded on both sides.
* **What a coder would pick.** Candidates come from SQLite FTS5 (bm25) and are re-ranked by how
  much of the query (IDF-weighted) the node covers, how completely one phrase of it says the
  query, and how many words the title adds that the query did not ask for -- so when nothing
  more is said the unspecified code wins ("pneumonia" -> J18.9), and a stated detail (side,
  organism, acuity) moves the code that has it to the top.

The index is built once per bundle and search code, not once per process: the first process
builds it (one pass over the bundle's tables, a few seconds) and writes it as one SQLite file --
the FTS5 table, every document and the IDF table -- to a content-addressed cache next to the
bundle (``<bundles>/.search-cache/<kind>-<key>.sqlite``, the key a SHA-256 of the bundle's
``manifest.json``, which holds every table's SHA-256, and of this module's and
:mod:`.search_terms`'s source; the user's cache directory when the bundle's is read-only;
``$CLARUS_SEARCH_CACHE`` names another directory). The file is
written to a temporary name and renamed into place, so a reader never sees half of it; every
later process opens it read-only and loads a document only when a query ranks it, so its first
answer takes tens of milliseconds. A missing, stale or unreadable cache file is rebuilt; where no
cache directory is writable the index lives in memory as before. ``benchmarks/search.py``
reports the per-query latency (and, as its "build" figure, the cache open once a cache
exists). The index is read-only once open, so concurrent sessions share it safely.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import marshal
import math
import os
import re
import sqlite3
import tempfile
import threading
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .search_terms import CPT_ABBREVIATIONS, CPT_LAY, CPT_QUERY_TERMS, LAY_TERMS

log = logging.getLogger(__name__)
TOKEN = re.compile(r"[a-z0-9]+")
# words that carry no meaning for matching (kept short: "other", "with", "without" DO matter)
STOP = frozenset(("a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is",
                  "of", "on", "or", "than", "the", "to", "w", "wo", "pt", "patient", "c", "o",
                  "dx", "diagnosis", "code", "icd", "s", "due"))
# words a title may carry without saying anything the coder did not ask for
NEUTRAL = frozenset(("unspecified", "unsp", "nos", "nec", "site", "type", "not", "specified",
                     "initial", "encounter", "elsewhere", "classified", "without"))
_INDEXES: dict[tuple[str, str], _Index] = {}
_LOCK = threading.Lock()
CANDIDATES = 100  # bm25 candidates scored by coverage
RERANK = 40  # of those, the best by coverage scored phrase by phrase
MAX_PHRASES = 48
ANSWERS = 4096  # remembered answers per index
# words that change what kind of code is meant: a history-of query wants a Z code even when
# the condition's own codes match every other word
PIVOTAL = {"history": 3.0, "family": 2.0, "screening": 2.0, "sequela": 2.0}


def _stem(tok: str) -> str:
    """Fold plurals so "warts", "lesions", "injuries" meet "wart", "lesion", "injury"."""
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is", "as")):
        return tok[:-1]
    return tok


_STEMS: dict[str, str] = {}


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stop words, plurals folded (public: the heuristic uses it)."""
    out = []
    for t in TOKEN.findall(text.lower().replace("-", " ")):
        if t in STOP:
            continue
        s = _STEMS.get(t)
        if s is None:
            s = _STEMS[t] = _stem(t)
        out.append(s)
    return out


def _phrase_re(table: dict[str, str]) -> re.Pattern[str]:
    keys = sorted(table, key=len, reverse=True)
    return re.compile(r"(?<![\w/&])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w/&])")


_LAY_RE = _phrase_re(LAY_TERMS)
_CPT_RE = _phrase_re(CPT_ABBREVIATIONS)


Group = tuple[tuple[str, ...], ...]  # alternatives, each a run of tokens; any one says it


def expand_icd_query(query: str) -> str:
    """The query in the code set's words ("uti" -> "urinary tract infection"); alternatives a
    lay term may stand for are separated by "|" ("leg" -> "leg|lower limb|lower extremity")."""
    q = query.lower().replace("\u2019", "'")
    q = re.sub(r"\b(\d)(st|nd|rd|th)\b", r"\1", q)
    return _LAY_RE.sub(lambda m: " {" + LAY_TERMS[m.group(1)] + "} ", q)


def query_groups(expanded: str) -> list[Group]:
    """Split an expanded query into groups: a plain word is a group of one; a lay term's
    expansion ``{a b|c}`` is one group whose alternatives are ``(a, b)`` and ``(c,)``."""
    groups: list[Group] = []
    for part in re.split(r"(\{[^}]*\})", expanded):
        if part.startswith("{"):
            alts = tuple(tuple(tokens(a)) for a in part[1:-1].split("|"))
            alts = tuple(a for a in alts if a)
            if alts:
                groups.append(alts)
        else:
            groups += [((t,),) for t in tokens(part)]
    seen, out = set(), []
    for g in groups:
        if g not in seen:
            seen.add(g)
            out.append(g)
    return out


_CPT_QUERY = {**CPT_ABBREVIATIONS, **CPT_QUERY_TERMS}
_CPT_QUERY_RE = _phrase_re(_CPT_QUERY)


def expand_cpt_text(text: str, query: bool = True) -> str:
    """CPT words and abbreviations in full ("njx tendon sheath" -> "injection tendon sheath");
    a query also gets the coder's words ("ear wax" -> "cerumen"), CMS's text only CMS's own
    abbreviations."""
    t = text.lower()
    t = re.sub(r"(\d)\s*(?:cm|centimeters?)\b", r"\1 cm", t)
    table, rx = (_CPT_QUERY, _CPT_QUERY_RE) if query else (CPT_ABBREVIATIONS, _CPT_RE)
    return rx.sub(lambda m: " " + table[m.group(1)] + " ", t)


@dataclass(frozen=True, eq=False)
class _Phrase:
    """One way the code set words a node: its title, an inclusion term, an index entry.
    Phrases are interned (``_phrase``), so identity is equality and hashing is cheap."""

    weight: float
    words: frozenset[str]
    essential: frozenset[str]  # words outside (nonessential modifiers) and [synonyms]
    loose: frozenset[str]  # the other words: nonessential here
    lead: str  # first essential word: the index's main term when the phrase reads like one
    nos: bool  # "... NOS" / "unspecified": the code to use when nothing more is said
    text: str


# nonessential in a phrase: (modifiers) and [synonyms]; what "not specified as ..." or
# "without ..." negates; the word "unspecified" qualifies inside a phrase ("Pneumonia,
# unspecified organism", "unspecified ear") -- but not a leading "Unspecified" (it qualifies
# the whole title: "Unspecified bacterial pneumonia" is still bacterial)
_NONESSENTIAL = re.compile(r"\([^)]*\)|\[[^\]]*\]|\bnot specified as [^,;]*|\bwithout [^,;]*"
                           r"|(?<=\S)\s*\bunspecified\s+\w+", re.IGNORECASE)
_PHRASES: dict[tuple[float, str], _Phrase] = {}


def _phrase(weight: float, text: str, match: str | None = None) -> _Phrase:
    """Tokenized once per distinct text (inherited notes repeat under every descendant);
    ``match`` is the text to tokenize when it differs from the one shown (CPT abbreviations
    spelled out)."""
    key = (weight, text)
    p = _PHRASES.get(key)
    if p is None:
        m = text if match is None else match
        toks = tokens(m)
        core = tokens(_NONESSENTIAL.sub(" ", m)) if _NONESSENTIAL.search(m) else toks
        essential = [t for t in core if t not in NEUTRAL]
        low = text.lower()
        words = frozenset(toks)
        p = _Phrase(weight, words, frozenset(essential), words - frozenset(essential),
                    essential[0] if essential else "",
                    low.endswith(" nos") or " nos " in low or "unspecified" in low
                    or "not specified" in low, text)
        _PHRASES[key] = p
    return p


@dataclass
class _Doc:
    code: str  # the node; for a 7th-character base, the node the character is added to
    description: str
    title: _Phrase
    title_extra: frozenset[str]  # title words a match must explain (see _title_extra)
    phrases: list[_Phrase]
    words: frozenset[str]  # every token of the doc
    seventh: list[tuple[str, str, frozenset[str]]] | None  # (char, code, tokens of its text)
    extra: dict[str, Any]


class _Index:
    """FTS5 over the docs for candidates; phrase-level re-ranking in Python."""

    def __init__(self, docs: list[_Doc] | _CachedDocs, db: sqlite3.Connection | None = None,
                 idf: dict[str, float] | None = None, vocab: list[str] | None = None) -> None:
        """Build over ``docs`` into ``db`` (a new in-memory database by default), or -- with
        ``idf`` and ``vocab`` -- wrap a cached database that already holds them."""
        self.docs = docs
        self.lock = threading.Lock()  # one sqlite connection, many event-loop callers
        self.answers: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self.db = db if db is not None else sqlite3.connect(":memory:", check_same_thread=False)
        if idf is not None and vocab is not None:
            self.idf, self.vocab = idf, vocab
            self.max_idf = math.log(1 + max(1, len(docs)))
            return
        self.db.execute("CREATE VIRTUAL TABLE d USING fts5(title, body, tokenize='unicode61')")
        self.db.executemany("INSERT INTO d(rowid, title, body) VALUES (?, ?, ?)",
                            ((i, " ".join(sorted(d.title.words)), " ".join(sorted(
                                d.words.union(*(m for _, _, m in d.seventh or ())))))
                             for i, d in enumerate(docs)))
        self.db.execute("INSERT INTO d(d) VALUES ('optimize')")
        df: dict[str, int] = {}
        for d in docs:
            for t in d.words:
                df[t] = df.get(t, 0) + 1
        n = max(1, len(docs))
        self.idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self.max_idf = math.log(1 + n)
        self.vocab = sorted(df)

    def candidates(self, groups: list[Group]) -> list[int]:
        """bm25 over the docs (title words weigh 4x) that hold every group (any alternative,
        all its words).  When that finds fewer than 10, each group in turn is left out (a
        stray or misspelt word narrows nothing instead of emptying the list), and only then
        any single word, rarest first -- an OR over common words ("right", "pain") would
        score thousands of rows."""
        exprs = []
        # a lay term with one wording is just its words: each may be left out on its own
        split = [w for g in groups for w in ([((t,),) for t in g[0]] if len(g) == 1 else [g])]
        for g in split:
            alts = [" AND ".join('"' + t + '"' for t in a) for a in g
                    if all(t in self.idf for t in a)]
            if alts:
                exprs.append("(" + " OR ".join(f"({a})" for a in alts) + ")")
        sql = "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d, 4.0, 1.0) LIMIT ?"
        rows: list[tuple[int]] = []
        with self.lock:
            if exprs:
                rows += self.db.execute(sql, (" AND ".join(exprs), CANDIDATES)).fetchall()
            if len(rows) < 10 and len(exprs) > 1:
                for i in range(len(exprs)):
                    rest = exprs[:i] + exprs[i + 1:]
                    rows += self.db.execute(sql, (" AND ".join(rest), CANDIDATES // 2)
                                            ).fetchall()
            if len(rows) < 10:
                words = sorted({t for g in groups for a in g for t in a if t in self.idf},
                               key=lambda t: (-self.idf[t], t))[:3]
                if words:
                    rows += self.db.execute(sql, (" OR ".join('"' + t + '"' for t in words),
                                                  CANDIDATES)).fetchall()
        return list(dict.fromkeys(r[0] for r in rows))

    def remember(self, key: tuple[Any, ...], compute: Any) -> list[dict[str, Any]]:
        """A bounded per-process answer cache (the index is read-only, so answers never go
        stale); the oldest answers are dropped first."""
        hit = self.answers.get(key)
        if hit is None:
            hit = compute()
            with self.lock:
                if len(self.answers) >= ANSWERS:
                    self.answers.pop(next(iter(self.answers)))
                self.answers[key] = hit
        return hit

    def weight(self, t: str) -> float:
        return self.idf.get(t, self.max_idf) * PIVOTAL.get(t, 1.0)

    def known(self, groups: list[Group]) -> list[Group]:
        """Query words the code set has; an unknown word of 5+ letters stands for the closest
        indexed word with the same first 3 letters (difflib ratio >= 0.75, the longest shared
        stem first: "ingrown" ->
        "ingrowing", "constipated" -> "constipation", "hypertriglyceridemia" ->
        "hyperglyceridemia"), or stays unknown."""
        return [tuple(tuple(self._known(t) for t in a) for a in g) for g in groups]

    def _known(self, t: str) -> str:
        if t in self.idf or len(t) < 5:
            return t
        lo = bisect_left(self.vocab, t[:3])
        near = []
        for v in self.vocab[lo:]:
            if not v.startswith(t[:3]):
                break
            near.append(v)
        close = difflib.get_close_matches(t, near, n=5, cutoff=0.75)
        if not close:
            return t

        def shared(v: str) -> int:
            n = 0
            while n < min(len(v), len(t)) and v[n] == t[n]:
                n += 1
            return n

        # the longest shared stem first ("constipated": constipation, not contaminated),
        # then difflib's own order (most similar first)
        return max(close, key=lambda v: (shared(v), -close.index(v)))

    def _weigh(self, groups: list[Group]) -> list[tuple[float, list[tuple[float,
                                                                    list[tuple[str, float]]]]]]:
        """Each group's weight (its first, canonical wording) and its alternatives' words
        with their weights, computed once per query."""
        out = []
        for g in groups:
            alts = [(sum(self.weight(t) for t in a), [(t, self.weight(t)) for t in a])
                    for a in g]
            out.append((alts[0][0], alts))
        return out

    @staticmethod
    def _said(weighed: list[tuple[float, list[tuple[float, list[tuple[str, float]]]]]],
              have: frozenset[str] | set[str]) -> tuple[float, int]:
        """(IDF-weighted share of the query ``have`` says, groups fully said).  A group counts
        by its best alternative; its weight is that of its first (canonical) wording."""
        got, total, full = 0.0, 0.0, 0
        for gw, alts in weighed:
            best = 0.0
            for aw, words in alts:
                if aw:
                    share = sum(w for t, w in words if t in have) / aw
                    if share > best:
                        best = share
            got += gw * best
            total += gw
            full += best >= 0.999
        return (got / total if total else 0.0), full

    def rank(self, groups: list[Group], limit: int, icd: bool,
             stated: dict[str, float] | None = None) -> list[tuple[float, _Doc, str, str]]:
        """Score = IDF-weighted share of the query the node says (x2; a lay term counts once,
        by its best synonym), minus what its title adds that the query did not ask for (ICD:
        0.12 a word; nonessential modifiers and bracketed synonyms are free), plus how well
        its best single phrase says the query (x0.3), with small bonuses for a phrase that
        leads with the query's main term and for the NOS/unspecified code, and penalties for
        "other specified" and manifestation ("in diseases classified elsewhere") codes the
        query did not ask for.  A node whose NOS inclusion term says the whole query is the
        tabular's own default, so its title's extra words cost nothing.  ``stated``
        quantities (CPT: wound length, age, lesion count) must fall in a code's range."""
        groups = self.known(groups)
        if not groups:
            return []
        qset = {t for g in groups for a in g for t in a}
        weighed = self._weigh(groups)
        first = []
        for n, i in enumerate(self.candidates(groups)):
            d = self.docs[i]
            code, seventh_words = d.code, frozenset()
            if d.seventh:
                code, seventh_words = _pick_seventh(d.seventh, qset)
            cover, _ = self._said(weighed, d.words | seventh_words if seventh_words
                                  else d.words)
            fit = _range_fit(d.extra.get("ranges"), stated) if stated else 0.0
            if icd:
                fit -= 0.12 * sum(1 for t in d.title_extra if t not in qset)
            first.append((2.0 * cover + fit, n, d, code))
        first.sort(key=lambda x: (-x[0], x[1]))
        out = []
        for base, _, d, code in first[:RERANK]:
            best, best_p, lead, default = -1.0, d.title, False, False
            for p in d.phrases:
                if not qset & p.words:
                    continue
                lead = lead or p.lead in qset
                extra = sum(1 for t in p.essential if t not in qset and not t.isdigit())
                share, full = self._said(weighed, p.words)
                sc = p.weight * share - 0.04 * extra
                if sc > best:
                    best, best_p = sc, p
                # "Influenza NOS" printed at J11.1: the tabular's own default for these words
                default = default or (p.nos and extra == 0 and full == len(groups))
            score = base + 0.3 * max(best, 0.0) + (0.05 if lead else 0.0)
            if icd:
                # among equals, the code whose title says least beyond the query is the one
                # a coder reaches first (M06.9 before M06.00 "... without rheumatoid factor")
                score -= 0.01 * len(d.title.words - qset)
                if default:  # the title's extra words are what NOS leaves unsaid
                    score += 0.12 * sum(1 for t in d.title_extra if t not in qset)
                if best_p.nos or d.title.nos:
                    score += 0.04
                if "other" in d.title.words and "other" not in qset:
                    score -= 0.05  # "other specified": the coder must have words for it
                if "elsewhere" in d.title.words and "elsewhere" not in qset:
                    score -= 0.5  # a manifestation code is never the condition itself
            else:
                if d.extra.get("status") == "M":
                    score -= 0.3  # a quality-measure code reports, not a service performed
                count = d.extra["ranges"].get("count")
                if count and count[0] > 1 and not (stated and "count" in stated):
                    score -= 0.05  # "15 or more", "each additional": only when stated
            out.append((score, d, code, best_p.text))
        out.sort(key=lambda x: (-x[0], x[2]))
        return out[:limit]


_RANGE_PATTERNS = (
    ("cm", re.compile(r"(\d+(?:\.\d+)?) cm or less"), lambda m: (0.0, float(m[1]))),
    ("cm", re.compile(r"(\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) cm"),
     lambda m: (float(m[1]), float(m[2]))),
    ("age", re.compile(r"under 1 year"), lambda m: (0.0, 0.99)),
    ("age", re.compile(r"age (\d+)-(\d+) years"), lambda m: (float(m[1]), float(m[2]) + 0.99)),
    ("age", re.compile(r"age (\d+) years and older"), lambda m: (float(m[1]), 200.0)),
    ("count", re.compile(r"up to (\d+)"), lambda m: (1.0, float(m[1]))),
    ("count", re.compile(r"(\d+) or more"), lambda m: (float(m[1]), 1e9)),
    ("count", re.compile(r"second through (\d+)"), lambda m: (2.0, float(m[1]))),
    ("count", re.compile(r"first lesion|single lesion|single|one ear"), lambda m: (1.0, 1.0)),
)


def _ranges(text: str) -> dict[str, tuple[float, float]]:
    """Quantities an authored CPT description bounds: wound length, age band, lesion count."""
    out: dict[str, tuple[float, float]] = {}
    for kind, rx, make in _RANGE_PATTERNS:
        m = rx.search(text)
        if m and kind not in out:
            out[kind] = make(m)
    return out


_STATED = (
    ("cm", re.compile(r"(\d+(?:\.\d+)?)\s*(?:cm|centimeters?)\b")),
    ("age", re.compile(r"\b(?:age[ds]?\s*)(\d+)\b|\b(\d+)\s*(?:yo|y/o|yrs?|years?)(?:[ -]old)?\b"
                       r"|\b(\d+)[ -](?:year|yr)[ -]old\b")),
    ("count", re.compile(r"\b(\d+)\s+(?:\w+\s+)?(?:warts?|lesions?|tags?|aks?|keratos[ie]s|"
                         r"nails?|les)\b")),
)


def stated_quantities(query: str) -> dict[str, float]:
    """Length in cm, age and count a CPT query states ("2 cm lac", "45 yo", "3 warts")."""
    out = {}
    for kind, rx in _STATED:
        m = rx.search(query.lower())
        if m:
            out[kind] = float(next(g for g in m.groups() if g))
    return out


def _range_fit(ranges: dict[str, tuple[float, float]] | None, stated: dict[str, float]
               ) -> float:
    if not ranges:
        return 0.0
    fit = 0.0
    for kind, value in stated.items():
        if kind in ranges:
            lo, hi = ranges[kind]
            fit += 0.3 if lo <= value <= hi else -0.3
    return fit


def _title_extra(phrases: list[_Phrase]) -> frozenset[str]:
    """Essential title words, less those the node's own notes print as nonessential:
    "Essential (primary) hypertension" is also "hypertension (essential)" in its Includes."""
    title = phrases[0].essential
    for p in phrases[1:]:
        if p.loose and title & p.loose:
            title = title - p.loose
    return title


def _pick_seventh(options: list[tuple[str, str, frozenset[str]]], q: set[str]
                  ) -> tuple[str, frozenset[str]]:
    """The 7th character whose meaning the query states best; the first listed (initial
    encounter, or closed fracture) when it states none."""
    best, best_hit = options[0], 0
    for opt in options:
        hit = len(q & opt[2])
        if hit > best_hit:
            best, best_hit = opt, hit
    return best[1], best[2]


# -- ICD-10-CM ----------------------------------------------------------------------------------

_NEOPLASM_LABELS = {"malignant_primary": "malignant primary neoplasm cancer",
                    "malignant_secondary": "malignant secondary neoplasm metastatic",
                    "ca_in_situ": "carcinoma in situ", "benign": "benign neoplasm",
                    "uncertain_behavior": "neoplasm of uncertain behavior",
                    "unspecified_behavior": "neoplasm of unspecified behavior"}
_DRUG_LABELS = {"poisoning_accidental": "poisoning accidental",
                "poisoning_intentional_self_harm": "poisoning intentional self-harm",
                "poisoning_assault": "poisoning assault",
                "poisoning_undetermined": "poisoning undetermined",
                "adverse_effect": "adverse effect", "underdosing": "underdosing"}


def _node_of(code: str) -> str:
    return code.rstrip("-").rstrip(".")


def _icd_docs(ref: Any) -> list[_Doc]:
    t = ref.table("icd10cm")
    wanted = ("code", "kind", "description", "parent", "billable", "inclusion_terms",
              "includes")
    cols = {c: t.column(c).to_pylist() for c in wanted if c in t.column_names}
    n = t.num_rows
    row_of = {c: i for i, c in enumerate(cols["code"])}
    # node -> (phrase, inherited by descendants?): tabular notes govern the codes below them;
    # an index entry names one node, or with a trailing "-" every code under a prefix
    own: dict[str, list[tuple[_Phrase, bool]]] = {}

    def add(node: str, weight: float, text: str, inherit: bool = True) -> None:
        own.setdefault(node, []).append((_phrase(weight, text), inherit))

    none = [None] * n  # a format-1 bundle has no inclusion_terms column
    for col, w in (("inclusion_terms", 1.0), ("includes", 0.95)):
        for code, text in zip(cols["code"], cols.get(col, none), strict=True):
            for line in (text or "").split("\n"):
                if line.strip():
                    add(code, w, line.strip())
    index_tables = [("icd10cm_eindex", {"code": ""}), ("icd10cm_neoplasm", _NEOPLASM_LABELS),
                    ("icd10cm_drug", _DRUG_LABELS)]
    for name, labels in index_tables:
        if name not in ref.table_names:
            continue
        it = ref.table(name)
        paths = it.column("path").to_pylist()
        nemods = it.column("nemod").to_pylist()
        entries = [_phrase(0.95, f"{p} {m}" if m else p) for p, m in zip(paths, nemods,
                                                                          strict=True)]
        for col, label in labels.items():
            lab = _phrase(0.95, label)
            for entry, code in zip(entries, it.column(col).to_pylist(), strict=True):
                if code:  # the entry's words and the column's, tokenized once each
                    phrase = _Phrase(0.95, entry.words | lab.words,
                                     entry.essential | lab.essential, entry.loose | lab.loose,
                                     entry.lead, False, f"{entry.text}, {label}".strip(", "))
                    own.setdefault(_node_of(code), []).append((phrase, code.endswith("-")))
    # 7th-character expansions: billable 7-character children of a non-billable node whose
    # title is the node's title + ", <meaning of the character>"
    sevenths: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
    expansion = set()
    for j in range(n):
        c, p = cols["code"][j], cols["parent"][j]
        if cols["kind"][j] != "code" or p is None or len(c) != 8 or p not in row_of:
            continue
        pj = row_of[p]
        head = cols["description"][pj] + ", "
        if not cols["billable"][pj] and cols["description"][j].startswith(head):
            expansion.add(j)
            meaning = _phrase(0.0, cols["description"][j][len(head):]).words
            sevenths.setdefault(p, []).append((c[-1], c, meaning))
    docs = []
    for i in range(n):
        kind, code = cols["kind"][i], cols["code"][i]
        if kind in ("chapter", "block") or i in expansion:
            continue
        children = sevenths.get(code)
        if not cols["billable"][i] and not children:
            continue  # an intermediate node: its words reach the codes below it
        desc = cols["description"][i]
        phrases = [_phrase(1.0, desc)]
        node: str | None = code
        while node is not None and node in row_of:
            phrases += [p for p, inherit in own.get(node, ()) if inherit or node == code]
            j = row_of[node]
            node = cols["parent"][j] if cols["kind"][j] not in ("block", "chapter") else None
        words = frozenset().union(*(p.words for p in phrases))
        # every phrase counts for coverage; the best-phrase score reads the first ones
        # (title, own notes, inherited notes, index entries): X58 alone has 1,000+ entries
        phrases = list(dict.fromkeys(phrases))[:MAX_PHRASES]
        docs.append(_Doc(code, desc, phrases[0], _title_extra(phrases), phrases, words,
                         children, {}))
    return docs


def _index(ref: Any, kind: str) -> _Index:
    key = (str(ref.path), kind)
    idx = _INDEXES.get(key)
    if idx is None:
        with _LOCK:
            idx = _INDEXES.get(key)
            if idx is None:
                idx = _open_or_build(ref, kind)
                _INDEXES[key] = idx
    return idx


def warm(ref: Any) -> None:
    """Open (or build and cache) both indexes now (a server calls this at startup, off the
    request path)."""
    _index(ref, "icd")
    _index(ref, "cpt")


# -- the on-disk cache ---------------------------------------------------------------------------

CACHE_FORMAT = 1
_SOURCES = ("search.py", "search_terms.py")


def cache_key(ref: Any, kind: str) -> str:
    """SHA-256 of what the index is a function of: the bundle (its ``manifest.json`` holds
    every table's SHA-256), the search code and the cache format."""
    h = hashlib.sha256(f"clarus-search:{CACHE_FORMAT}:{kind}\n".encode())
    h.update((Path(ref.path) / "manifest.json").read_bytes())
    here = Path(__file__).resolve().parent
    for name in _SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def cache_dirs(ref: Any) -> list[Path]:
    """Where the cache may live, first choice first: ``$CLARUS_SEARCH_CACHE`` alone when set;
    else ``.search-cache`` beside the bundle's release directory (outside the release itself,
    which stays immutable), then the user's cache directory for a read-only bundle."""
    env = os.environ.get("CLARUS_SEARCH_CACHE")
    if env:
        return [Path(env)]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "clarus" / "search"
    return [Path(ref.path).parent / ".search-cache", user]


def cache_path(ref: Any, kind: str, directory: Path | None = None) -> Path:
    """The cache file of ``kind`` for this bundle and search code in ``directory`` (default:
    the first choice of :func:`cache_dirs`)."""
    d = directory if directory is not None else cache_dirs(ref)[0]
    return d / f"{kind}-{cache_key(ref, kind)[:32]}.sqlite"


def _open_or_build(ref: Any, kind: str) -> _Index:
    """The cached index when a file is present and whole; else built now, and cached for the
    next process in the first cache directory that is writable."""
    key = cache_key(ref, kind)
    paths = [cache_path(ref, kind, d) for d in cache_dirs(ref)]
    for path in paths:
        if path.is_file():
            try:
                return _open_cached(path, key)
            except (sqlite3.Error, ValueError, EOFError, TypeError, KeyError, IndexError) as e:
                log.warning("search cache %s is unreadable (%s); rebuilding it", path, e)
    docs = _icd_docs(ref) if kind == "icd" else _cpt_docs(ref)
    for path in paths:
        try:
            return _build_cached(docs, path, key)
        except (OSError, sqlite3.Error) as e:  # a read-only checkout or volume
            log.warning("search cache %s not written (%s)", path, e)
    return _Index(docs)  # nowhere writable: the index lives in this process only


def _open_cached(path: Path, key: str) -> _Index:
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                         check_same_thread=False)
    try:
        meta = dict(db.execute("SELECT k, v FROM meta").fetchall())
        if meta.get("key") != key.encode() or meta.get("complete") != b"1":
            raise ValueError("cache key or completeness mark does not match")
        n = int(meta["docs"])
        idf, vocab = marshal.loads(meta["idf"]), marshal.loads(meta["vocab"])
        if not isinstance(idf, dict) or not isinstance(vocab, list):
            raise ValueError("idf/vocab blobs have the wrong type")
        (fts_rows,) = db.execute("SELECT count(*) FROM d").fetchone()
        if fts_rows != n:
            raise ValueError(f"{fts_rows} FTS rows for {n} documents")
    except BaseException:
        db.close()
        raise
    lock = threading.Lock()
    idx = _Index(_CachedDocs(db, n, lock), db, idf, vocab)
    idx.lock = lock  # documents and FTS share the one connection and its lock
    return idx


def _build_cached(docs: list[_Doc], path: Path, key: str) -> _Index:
    """Build the index into a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        db = sqlite3.connect(tmp, check_same_thread=False)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        idx = _Index(docs, db)
        db.execute("CREATE TABLE doc(id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        db.executemany("INSERT INTO doc(id, v) VALUES (?, ?)",
                       ((i, _dump_doc(d)) for i, d in enumerate(docs)))
        db.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, v BLOB NOT NULL)")
        db.executemany("INSERT INTO meta(k, v) VALUES (?, ?)", [
            ("key", key.encode()), ("docs", str(len(docs)).encode()),
            ("idf", marshal.dumps(idx.idf)), ("vocab", marshal.dumps(idx.vocab)),
            ("complete", b"1")])
        db.commit()
        db.close()
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from other users' processes
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # this process keeps its documents in memory; the FTS rows are read from the file
    idx.db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                             check_same_thread=False)
    return idx


def _dump_phrase(p: _Phrase) -> tuple:
    return (p.weight, p.words, p.essential, p.loose, p.lead, p.nos, p.text)


def _dump_doc(d: _Doc) -> bytes:
    """A document as core types only (``marshal``: no code runs when it is read back)."""
    return marshal.dumps((d.code, d.description, d.title_extra,
                          [_dump_phrase(p) for p in d.phrases], d.words, d.seventh, d.extra))


def _load_doc(blob: bytes) -> _Doc:
    code, description, title_extra, phrases, words, seventh, extra = marshal.loads(blob)
    ps = [_Phrase(*p) for p in phrases]
    return _Doc(code, description, ps[0], title_extra, ps, words, seventh, extra)


class _CachedDocs:
    """The documents of a cached index, read from its file the first time a query ranks
    them (a query touches ~100 of ~45,000)."""

    def __init__(self, db: sqlite3.Connection, n: int, lock: threading.Lock) -> None:
        self.db, self.n, self.lock = db, n, lock
        self.loaded: dict[int, _Doc] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> _Doc:
        d = self.loaded.get(i)
        if d is None:
            with self.lock:
                row = self.db.execute("SELECT v FROM doc WHERE id = ?", (i,)).fetchone()
            if row is None:
                raise IndexError(f"search cache has no document {i}")
            d = self.loaded.setdefault(i, _load_doc(row[0]))
        return d


def search_icd10(ref: Any, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Billable ICD-10-CM codes for a coder's query, best first.

    Each result: ``code``, ``description``, ``billable`` (always True: a 7th-character node
    is returned with the character the query implies), ``score`` and ``matched`` (the title,
    inclusion term or index entry that matched best).  Answers are remembered per process
    (agents repeat queries across episodes); callers get their own copies.
    """
    idx = _index(ref, "icd")
    return [dict(r) for r in idx.remember(("icd", query, limit),
                                          lambda: _search_icd10(ref, idx, query, limit))]


def _search_icd10(ref: Any, idx: _Index, query: str, limit: int) -> list[dict[str, Any]]:
    out = []
    for score, d, code, why in idx.rank(query_groups(expand_icd_query(query)), limit, icd=True):
        desc = d.description
        if code != d.code:
            node = ref.icd10cm(code)
            desc = node["description"] if node else desc
        out.append({"code": code, "description": desc, "billable": True,
                    "score": round(score, 3), "matched": why})
    return out


# -- CPT / HCPCS --------------------------------------------------------------------------------

def _cpt_docs(ref: Any) -> list[_Doc]:
    t = ref.table("hcpcs_rvu")
    level2: dict[str, str] = {}
    if "hcpcs_level2" in ref.table_names:
        h = ref.table("hcpcs_level2")
        for c, k, long in zip(h.column("code").to_pylist(), h.column("kind").to_pylist(),
                              h.column("long_description").to_pylist(), strict=True):
            if k == "code" and long:
                level2.setdefault(c, long)
    docs = []
    for c, m, d, s in zip(t.column("hcpcs").to_pylist(), t.column("modifier").to_pylist(),
                          t.column("description").to_pylist(), t.column("status").to_pylist(),
                          strict=True):
        if m != "" or s in ("D", "I"):
            continue
        phrases = [_phrase(1.0, d, expand_cpt_text(d, query=False))]
        if c in CPT_LAY:
            phrases.append(_phrase(1.0, CPT_LAY[c], expand_cpt_text(CPT_LAY[c], query=False)))
        if c in level2:
            phrases.append(_phrase(0.95, level2[c], expand_cpt_text(level2[c], query=False)))
        words = frozenset().union(*(p.words for p in phrases))
        docs.append(_Doc(c, d, phrases[0], frozenset(), phrases, words, None,
                         {"status": s, "ranges": _ranges(CPT_LAY.get(c, ""))}))
    return docs


def search_cpt(ref: Any, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Active CPT/HCPCS codes for a query, best first: ``code``, ``description`` (CMS short
    descriptor), ``status`` (PPRRVU), ``score`` and ``matched`` (the text that matched best:
    the short descriptor, an HCPCS Level II long description or the authored lay description).
    """
    idx = _index(ref, "cpt")
    return [dict(r) for r in idx.remember(("cpt", query, limit),
                                          lambda: _search_cpt(idx, query, limit))]


def _search_cpt(idx: _Index, query: str, limit: int) -> list[dict[str, Any]]:
    stated = stated_quantities(query)
    q = tokens(expand_cpt_text(query))
    if stated:  # a stated length or age is matched by range, not as a bare number
        q = [t for t in q if not t.replace(".", "").isdigit()]
    groups: list[Group] = [((t,),) for t in dict.fromkeys(q)]
    return [{"code": d.code, "description": d.description, "status": d.extra["status"],
             "score": round(score, 3), "matched": why}
            for score, d, _, why in idx.rank(groups, limit, icd=False, stated=stated)]


# -- details --------------------------------------------------------------------------------------

_NOTE_KEYS = ("inclusion_terms", "includes", "excludes1", "excludes2", "use_additional_code",
              "code_first", "code_also", "notes")


def get_icd10(ref: Any, code: str) -> dict[str, Any] | None:
    """A node with every note a coder must read before using it.

    ``includes``/``excludes1``/``excludes2`` and the other notes are the node's own; the same
    keys under ``inherited`` hold the notes printed at its ancestors, which govern it too
    (``{"S52": {"excludes1": [...]}}``); ``seventh_characters`` is the nearest definition
    (``{"A": "initial encounter for closed fracture", ...}``, empty when none applies) and
    ``seventh_character_from`` the node that defines it.
    """
    chain = ref.icd10cm_ancestors(code)
    if not chain:
        return None
    node = chain[0]

    def notes_of(n: dict[str, Any]) -> dict[str, list[str]]:
        return {k: [x for x in (n.get(k) or "").split("\n") if x.strip()] for k in _NOTE_KEYS
                if n.get(k)}

    seventh: dict[str, str] = {}
    seventh_from = None
    for n in chain:
        if n.get("seventh_characters"):
            for line in n["seventh_characters"].split("\n"):
                char, _, text = line.partition(": ")
                seventh[char] = text
            seventh_from = n["code"]
            break
    own = notes_of(node)
    inherited = {n["code"]: notes_of(n) for n in chain[1:] if notes_of(n)}
    return {"code": node["code"], "title": node["description"], "kind": node["kind"],
            "billable": node["billable"], "parent": node["parent"],
            "chapter": node["chapter"], "block": node["block"], "category": node["category"],
            "includes": node["includes"], "excludes1": node["excludes1"],
            "excludes2": node["excludes2"],
            "inclusion_terms": own.get("inclusion_terms", []),
            "use_additional_code": own.get("use_additional_code", []),
            "code_first": own.get("code_first", []), "code_also": own.get("code_also", []),
            "notes": own.get("notes", []), "inherited": inherited,
            "seventh_characters": seventh, "seventh_character_from": seventh_from}
