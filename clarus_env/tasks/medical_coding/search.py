"""Lookup tools for an agentic coder: ranked description search over the real ICD-10-CM and
CPT/HCPCS code sets of the reference bundle, and ICD-10-CM node details.

A small inverted index (token -> rows) with IDF weighting is built once per bundle and process;
it needs no dependency beyond what the bundle loader already uses and answers in microseconds.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

TOKEN = re.compile(r"[a-z0-9]+")
STOP = frozenset(("a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is",
                  "of", "on", "or", "other", "than", "the", "to", "with", "without", "w", "wo",
                  "unspecified", "unsp"))
_INDEXES: dict[tuple[str, str], _Index] = {}


# CPT short descriptors are abbreviated ("Office o/p est low 20 min"); a query in plain words
# also searches for the abbreviations CMS uses.
ABBREVIATIONS = {"established": "est", "outpatient": "o p", "visit": "o p",
                 "injection": "inj", "removal": "rmvl", "destruction": "destruct",
                 "biopsy": "bx", "evaluation": "eval", "examination": "exam",
                 "preventive": "prev", "patient": "pt", "intramuscular": "im",
                 "subcutaneous": "sc", "aspiration": "aspir", "drainage": "drg",
                 "electrocardiogram": "ecg", "ultrasound": "us", "immunization": "imadm",
                 "administration": "admn"}


def tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if t not in STOP]


def query_tokens(query: str) -> list[str]:
    toks = tokens(query)
    return toks + [x for t in toks for x in tokens(ABBREVIATIONS.get(t, ""))]


class _Index:
    def __init__(self, rows: list[dict[str, Any]], text_key: str) -> None:
        self.rows = rows
        postings: dict[str, list[int]] = defaultdict(list)
        for i, row in enumerate(rows):
            for tok in set(tokens(row[text_key])):
                postings[tok].append(i)
        n = max(1, len(rows))
        self.postings = dict(postings)
        self.idf = {t: math.log(1 + n / len(p)) for t, p in self.postings.items()}
        self.lengths = [len(tokens(r[text_key])) or 1 for r in rows]

    def search(self, query: str, limit: int) -> list[tuple[float, int]]:
        q = query_tokens(query)
        scores: dict[int, float] = defaultdict(float)
        for tok in set(q):
            for prefix_tok in self._expand(tok):
                for i in self.postings[prefix_tok]:
                    scores[i] += self.idf[prefix_tok] * (1.0 if prefix_tok == tok else 0.6)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1] / (1 + 0.05 * self.lengths[kv[0]]),
                                                        kv[0]))
        return [(s, i) for i, s in ranked[:limit]]

    def _expand(self, tok: str) -> list[str]:
        if tok in self.postings:
            return [tok]
        if len(tok) < 4:
            return []  # "o", "p" and other short fragments only match exactly
        return sorted(t for t in self.postings if t.startswith(tok))[:20]


def _icd_index(ref: Any) -> _Index:
    key = (str(ref.path), "icd")
    if key not in _INDEXES:
        t = ref.table("icd10cm")
        rows = [{"code": c, "description": d, "billable": b}
                for c, d, b, k in zip(t.column("code").to_pylist(),
                                      t.column("description").to_pylist(),
                                      t.column("billable").to_pylist(),
                                      t.column("kind").to_pylist(), strict=True)
                if k not in ("chapter", "block")]
        _INDEXES[key] = _Index(rows, "description")
    return _INDEXES[key]


def _cpt_index(ref: Any) -> _Index:
    key = (str(ref.path), "cpt")
    if key not in _INDEXES:
        t = ref.table("hcpcs_rvu")
        rows = [{"code": c, "description": d, "status": s}
                for c, m, d, s in zip(t.column("hcpcs").to_pylist(),
                                      t.column("modifier").to_pylist(),
                                      t.column("description").to_pylist(),
                                      t.column("status").to_pylist(), strict=True)
                if m == "" and s not in ("D", "I")]
        _INDEXES[key] = _Index(rows, "description")
    return _INDEXES[key]


def search_icd10(ref: Any, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Billable codes first among equally good matches, then by relevance."""
    idx = _icd_index(ref)
    hits = idx.search(query, limit * 4)
    hits.sort(key=lambda si: (not idx.rows[si[1]]["billable"], -si[0], si[1]))
    return [{**idx.rows[i], "score": round(s, 3)} for s, i in hits[:limit]]


def search_cpt(ref: Any, query: str, limit: int = 10) -> list[dict[str, Any]]:
    idx = _cpt_index(ref)
    return [{**idx.rows[i], "score": round(s, 3)} for s, i in idx.search(query, limit)]


def get_icd10(ref: Any, code: str) -> dict[str, Any] | None:
    node = ref.icd10cm(code)
    if node is None:
        return None
    return {"code": node["code"], "title": node["description"], "kind": node["kind"],
            "billable": node["billable"], "parent": node["parent"],
            "chapter": node["chapter"], "block": node["block"], "category": node["category"],
            "includes": node["includes"], "excludes1": node["excludes1"],
            "excludes2": node["excludes2"]}
