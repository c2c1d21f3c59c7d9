"""Deterministic reward for one coded case, with hierarchical partial credit.

The reward is a pure function of (expected codes, submitted codes, reference bundle): no
randomness, no dependence on order, and a perfect answer is exactly 1.0 in every case.

Normalisation
-------------
ICD-10-CM codes are upper-cased, stripped of spaces and dots and re-dotted after the third
character (``e119`` -> ``E11.9``). CPT codes are ``CODE`` or ``CODE-MOD[-MOD]`` (``20610-RT``,
``99213-25``; ``"99213 25"`` and ``"9921325"`` are read the same way); modifiers are a set.
After normalisation duplicates count once.

Validity
--------
An ICD-10-CM code is valid only if it is a billable leaf of the bundle's code set; a CPT/HCPCS code
only if PPRRVU lists it with a status other than D (deleted) and every modifier is a known one.
Invalid codes earn nothing but still count as submitted, so they cost like any wrong code.

Acceptable alternatives
-----------------------
A case may carry ``accept`` (built by the note generator from the catalog): codes a competent
coder may defensibly submit instead of the expected ones. Before scoring, :func:`apply_accept`
rewrites an accepted equivalent into the expected code it stands for (``E78.00`` for ``E78.5``
when the note says "high cholesterol", ``87880-QW`` for ``87880``, ``20550-F6`` for
``20550-RT``, ``69210`` for ``69210-50``, ``99397-GY`` for ``99397`` under Medicare), lets a
sequencing-free code be first-listed (``I12.9`` or ``E11.22`` for diabetes + hypertension + CKD;
the other moves to the secondaries), and drops optional codes that are not expected
(``Y92``/``Y93``/``Y99`` place, activity and status codes on an injury, ICD-10-CM I.C.20; a
``J3301`` drug supply the note documents by dose), so they neither add nor cost. An accepted
answer therefore scores exactly 1.0, like the expected one.

Similarity of two valid codes
-----------------------------
ICD-10-CM, by the depth ``d`` of their nearest common ancestor in the tabular tree (chapter 1,
block 2, category 3, then one level per extra character)::

    identical                           1.0
    clinically false sibling            0.2      (same category; wrong side or 7th character)
    common ancestor at depth d >= 3     min(0.4 + 0.1 * (d - 3), 0.8)
    common block only (d = 2)           0.1      (I10 vs I12.9)
    otherwise                           0.0

A *clinically false sibling* states something untrue about the documented condition: the same
6-character code with another 7th character (S93.401D for S93.401A: subsequent for initial
encounter) or a code whose title names another side (M17.12 for M17.11, H66.93 for H66.91). It
scores 0.2, below every true but less specific code of the same category (>= 0.4), so guessing a
side never pays better than leaving it unspecified.
e.g. E11.22 vs E11.21 (E11.2, d=4) = 0.5; E11.22 vs E11.9 (E11, d=3) = 0.4;
S93.401A vs S93.409A (S93.40, d=5) = 0.6; S93.401A vs S93.401D = 0.2; S93.401A vs S93.402A = 0.2.

CPT: ``base similarity x modifier factor``. Base similarity: same code 1.0; same E/M family
(99202-99205, 99211-99215, 99381-99387, 99391-99397) one level apart 0.5, further apart 0.25;
the sibling family at the same level (99203 vs 99213, 99386 vs 99396) 0.25; other codes sharing
their first four characters (12001 vs 12002) 0.25; otherwise 0. Modifiers are scored by kind,
and the factors multiply:

    equal modifier sets                                     1.0
    laterality (RT/LT/50, F*/T*/E* digit and eyelid):
        the other side (RT for LT, F6 for F1, 50 for RT)    0.2   clinically false
        side missing, or one given where none was due       0.6   less specific
        same side, another site modifier (F7 for RT)        0.6
    distinct-service (25, 57) missing or extra              0.5   the E/M is denied
    any other modifier (QW, GY, 59, X{EPSU}, ...) differs   0.8

So ``99213`` for ``99213-25`` scores 0.5, ``20610`` for ``20610-RT`` 0.6, ``20610-LT`` for
``20610-RT`` 0.2, and ``99214-25`` for ``99213-25`` 0.5.

Components
----------
* primary (weight 0.5): the similarity of the submitted primary to the expected one (0 if empty
  or invalid). Sequencing matters: the right code submitted as a secondary does not count here.
* secondary ICD-10-CM codes (weight 0.25) and CPT codes (weight 0.25): a soft F1. Pairs are
  matched one-to-one greedily by descending similarity (ties broken by code text, so the result
  is deterministic); with ``M`` the summed similarity of matched pairs, ``E`` the expected and
  ``S`` the submitted (deduplicated, invalid included) counts, ``F1 = 2M / (E + S)``. Extra and
  invalid codes raise ``S``, so they cost; missing codes lower ``M``.
* A component that is empty in both expected and submitted is *inactive*: it is left out and the
  weights of the others are re-normalised. It is not scored 1.0, which would pay an empty
  submission; it is not scored 0, which would cap a perfect answer below 1.0.

``reward = sum(w_c * score_c) / sum(w_c)`` over active components, rounded to 6 decimals.

Worked examples (expected ``J02.0`` / no secondaries / ``99213``):

1. ``J02.0`` / [] / ``99213`` -> secondary inactive; (0.5*1 + 0.25*1)/0.75 = **1.0**.
2. ``J02.9`` / [] / ``99213`` -> primary in the same category J02 (d=3):
   0.4; (0.5*0.4 + 0.25)/0.75 = **0.6**.
3. ``J02.0`` / [``R07.0``] / ``99213`` -> secondary active, E=0, S=1: 0;
   (0.5 + 0 + 0.25)/1 = **0.75**.
4. ``J02.0`` / [] / ``99214`` -> CPT one level off: 0.5; (0.5 + 0.125)/0.75 = **0.833333**.
5. empty submission -> primary 0, CPT 0 -> **0.0** (always: a primary is always expected).

Worked example with secondaries (expected ``E11.22`` / [``I12.9``, ``N18.31``] / [``99214``]),
submitted ``E11.22`` / [``N18.30``, ``I10``, ``I10``, ``E11``] / [``99214``]: ``I10`` counts once,
``E11`` is a non-billable category (invalid), so S=3. Matches: N18.31~N18.30 (N18.3, d=4) 0.5,
I12.9~I10 (block I10-I1A) 0.1 -> M=0.6, F1 = 1.2/5 = 0.24;
reward = 0.5 + 0.25*0.24 + 0.25 = **0.81**.
"""

from __future__ import annotations

import re
from typing import Any

WEIGHTS = {"primary": 0.5, "secondary": 0.25, "cpt": 0.25}
KNOWN_MODIFIERS = frozenset(
    {
        "25",
        "26",
        "24",
        "50",
        "51",
        "52",
        "57",
        "59",
        "76",
        "77",
        "79",
        "91",
        "95",
        "TC",
        "RT",
        "LT",
        "XE",
        "XP",
        "XS",
        "XU",
        "QW",
        "GA",
        "GY",
        "GZ",
        "GT",
        "CR",
        "KX",
        "33",
        "E1",
        "E2",
        "E3",
        "E4",
        "F1",
        "F2",
        "F3",
        "F4",
        "F5",
        "F6",
        "F7",
        "F8",
        "F9",
        "FA",
        "TA",
        "T1",
        "T2",
        "T3",
        "T4",
        "T5",
        "T6",
        "T7",
        "T8",
        "T9",
        "LC",
        "LD",
        "RC",
        "AI",
        "SA",
        "FS",
        "JW",
        "JZ",
    }
)
EM_FAMILIES = (
    ("office_new", [f"9920{i}" for i in (2, 3, 4, 5)], "office"),
    ("office_est", [f"9921{i}" for i in (2, 3, 4, 5)], "office"),
    ("prev_new", [f"9938{i}" for i in range(1, 8)], "preventive"),
    ("prev_est", [f"9939{i}" for i in range(1, 8)], "preventive"),
)
_EM_INDEX: dict[str, tuple[str, int, str]] = {
    code: (fam, i, group) for fam, codes, group in EM_FAMILIES for i, code in enumerate(codes)
}
_EM_INDEX["99211"] = ("office_est", -1, "office")
_CPT_RE = re.compile(r"^([0-9A-Z]{5})([0-9A-Z]*)$")

_CACHE: dict[tuple[str, str, str], Any] = {}
FALSE_SIBLING = 0.2  # below every true, less specific code of the same category (>= 0.4)
MOD_WRONG_SIDE = 0.2  # RT for LT, F6 for F1, 50 for RT: the claim states the wrong side
MOD_MISSING_SIDE = 0.6  # no side where one was due (or one where none was): less specific
MOD_DISTINCT = 0.5  # 25/57 missing or extra: the E/M is denied (or unbundling is asserted)
MOD_OTHER = 0.8  # informational / payment modifiers (QW, GY, 59, X{EPSU}, ...)
DISTINCT_MODIFIERS = frozenset({"25", "57"})


# --------------------------------------------------------------------------------------------
# normalisation and validity
# --------------------------------------------------------------------------------------------
def normalize_icd(code: Any) -> str:
    """``' e11.9 '`` -> ``E11.9``; non-strings become ''."""
    if not isinstance(code, str):
        return ""
    c = re.sub(r"[\s.]", "", code).upper()
    return c if len(c) <= 3 else f"{c[:3]}.{c[3:]}"


def normalize_cpt(code: Any) -> str:
    """``'99213 25'``/``'9921325'``/``'99213-25'`` -> ``99213-25``; modifiers sorted."""
    if not isinstance(code, str):
        return ""
    parts = [p for p in re.split(r"[\s\-:,/]+", code.strip().upper()) if p]
    if not parts:
        return ""
    head = parts[0]
    mods = parts[1:]
    m = _CPT_RE.match(head)
    if m and m.group(2):
        rest = m.group(2)
        head = m.group(1)
        mods = [rest[i : i + 2] for i in range(0, len(rest), 2)] + mods
    return "-".join([head, *sorted(set(mods))])


def _cached(kind: str, ref: Any, key: str, fn: Any) -> Any:
    k = (kind, str(getattr(ref, "release", id(ref))), key)
    if k not in _CACHE:
        if len(_CACHE) > 200_000:
            _CACHE.clear()
        _CACHE[k] = fn()
    return _CACHE[k]


def icd_valid(code: str, ref: Any) -> bool:
    """A billable leaf of the bundle's ICD-10-CM (``code`` already normalised)."""

    def look() -> bool:
        node = ref.icd10cm(code) if code else None
        return bool(node and node["billable"] and node["code"] == code)

    return _cached("icd_valid", ref, code, look)


def cpt_valid(code: str, ref: Any) -> bool:
    """Base code in PPRRVU with status other than D, and only known modifiers."""

    def look() -> bool:
        if not code:
            return False
        base, *mods = code.split("-")
        if len(base) != 5 or any(m not in KNOWN_MODIFIERS for m in mods):
            return False
        row = ref.rvu(base)
        return bool(row and row["status"] != "D")

    return _cached("cpt_valid", ref, code, look)


def _ancestors(code: str, ref: Any) -> dict[str, int]:
    return _cached(
        "anc", ref, code, lambda: {n["code"]: int(n["depth"]) for n in ref.icd10cm_ancestors(code)}
    )


# --------------------------------------------------------------------------------------------
# similarity
# --------------------------------------------------------------------------------------------
_SIDE_WORDS = {"right": "R", "left": "L", "bilateral": "B"}
_WORD = re.compile(r"[a-z]+")


def _sides(code: str, ref: Any) -> frozenset[str]:
    def look() -> frozenset[str]:
        node = ref.icd10cm(code)
        words = _WORD.findall((node["description"] if node else "").lower())
        return frozenset(_SIDE_WORDS[w] for w in words if w in _SIDE_WORDS)

    return _cached("sides", ref, code, look)


def false_sibling(expected: str, submitted: str, ref: Any) -> str:
    """Why ``submitted`` says something clinically false about the expected condition, or ''.

    Asked only of two codes of the same category (common ancestor at depth >= 3): codes of
    different categories are simply different conditions and score by the tree.

    A different 7th character of the same 6-character code (initial vs subsequent encounter,
    sequela) and a code naming the other side (right vs left vs bilateral) are false statements,
    not less specific ones.
    """
    a, b = expected.replace(".", ""), submitted.replace(".", "")
    if len(a) == len(b) == 7 and a[:6] == b[:6] and a[6] != b[6]:
        return "wrong_7th_character"
    sa, sb = _sides(expected, ref), _sides(submitted, ref)
    if sa and sb and sa != sb:
        return "wrong_side"
    return ""


def icd_similarity(expected: str, submitted: str, ref: Any) -> tuple[float, str]:
    """(credit, level) for two valid normalised ICD-10-CM codes; see the module docstring."""
    if expected == submitted:
        return 1.0, "exact"
    a = _ancestors(expected, ref)
    b = _ancestors(submitted, ref)
    common = [d for c, d in a.items() if c in b]
    depth = max(common, default=0)
    if depth >= 3:
        why = false_sibling(expected, submitted, ref)  # only within the same category
        if why:
            return FALSE_SIBLING, why
        return round(min(0.4 + 0.1 * (depth - 3), 0.8), 6), (
            "category" if depth == 3 else "subcategory"
        )
    if depth == 2:
        return 0.1, "block"
    return 0.0, "none"


def _cpt_base_similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    ea, eb = _EM_INDEX.get(a), _EM_INDEX.get(b)
    if ea and eb:
        if ea[0] == eb[0]:
            return 0.5 if abs(ea[1] - eb[1]) == 1 else 0.25
        if ea[2] == eb[2] and ea[1] == eb[1]:
            return 0.25
        return 0.0
    if ea or eb:
        return 0.0
    return 0.25 if a[:4] == b[:4] else 0.0


def _modifier_side(mod: str) -> str:
    if mod in ("RT", "E3", "E4") or (len(mod) == 2 and mod[0] in "FT" and mod[1] in "56789"):
        return "R"
    if mod in ("LT", "E1", "E2", "FA", "TA") or (
        len(mod) == 2 and mod[0] in "FT" and mod[1] in "01234"
    ):
        return "L"
    return "B" if mod == "50" else ""


def modifier_factor(expected: list[str], submitted: list[str]) -> float:
    """Credit factor for the modifiers of two codes, by kind (see the module docstring)."""
    ea, sa = set(expected), set(submitted)
    if ea == sa:
        return 1.0
    factor = 1.0
    side_e = {_modifier_side(m) for m in ea} - {""}
    side_s = {_modifier_side(m) for m in sa} - {""}
    lat = {m for m in ea | sa if _modifier_side(m)}
    if side_e != side_s:
        factor *= MOD_WRONG_SIDE if side_e and side_s else MOD_MISSING_SIDE
    elif (ea & lat) != (sa & lat):
        factor *= MOD_MISSING_SIDE  # same side, another digit/site modifier
    if (ea & DISTINCT_MODIFIERS) != (sa & DISTINCT_MODIFIERS):
        factor *= MOD_DISTINCT
    if (ea - lat - DISTINCT_MODIFIERS) != (sa - lat - DISTINCT_MODIFIERS):
        factor *= MOD_OTHER
    return factor


def cpt_similarity(expected: str, submitted: str) -> float:
    """Credit for two valid normalised CPT codes (base similarity x modifier factor)."""
    ea, *ma = expected.split("-")
    sa, *ms = submitted.split("-")
    base = _cpt_base_similarity(ea, sa)
    return base * modifier_factor(ma, ms)


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------
def _dedupe(codes: Any, norm: Any) -> tuple[list[str], int]:
    out: list[str] = []
    seen: set[str] = set()
    dups = 0
    for c in codes if isinstance(codes, list | tuple) else []:
        n = norm(c)
        if not n:
            continue
        if n in seen:
            dups += 1
            continue
        seen.add(n)
        out.append(n)
    return out, dups


def _soft_f1(
    expected: list[str], submitted: list[str], valid: dict[str, bool], sim: Any
) -> dict[str, Any]:
    exact = sorted(set(expected) & {s for s in submitted if valid[s]})
    rest_e = [e for e in expected if e not in exact]
    rest_s = [s for s in submitted if s not in exact and valid[s]]
    pairs = sorted(
        ((sim(e, s), e, s) for e in rest_e for s in rest_s), key=lambda p: (-p[0], p[1], p[2])
    )
    used_e: set[str] = set()
    used_s: set[str] = set()
    partial = 0
    total = float(len(exact))
    for score, e, s in pairs:
        if score <= 0 or e in used_e or s in used_s:
            continue
        used_e.add(e)
        used_s.add(s)
        total += score
        partial += 1
    n_e, n_s = len(expected), len(submitted)
    active = bool(n_e or n_s)
    f1 = (2 * total / (n_e + n_s)) if active else None
    return {
        "active": active,
        "score": f1,
        "expected_count": n_e,
        "submitted_count": n_s,
        "exact": len(exact),
        "partial": partial,
        "matched_credit": round(total, 6),
        "missing": n_e - len(exact) - partial,
        "extra": n_s - len(exact) - partial,
        "invalid": [s for s in submitted if not valid[s]],
    }


def apply_accept(
    accept: dict[str, Any] | None,
    expected: tuple[str, list[str], list[str]],
    submitted: tuple[str, list[str], list[str]],
) -> tuple[tuple[str, list[str], list[str]], tuple[str, list[str], list[str]], list[str]]:
    """Rewrite a normalised, deduplicated submission by the case's acceptable alternatives.

    ``expected``/``submitted`` are (primary, secondaries, cpt codes). An accepted equivalent
    becomes the expected code it stands for (unless that code was submitted too); a
    sequencing-free primary swaps places with the expected primary; optional codes (external-
    cause place/activity/status families, an optional drug supply) that are not expected are
    dropped, so they neither add nor cost. The case's ``accept`` holds canonical codes (the
    generator writes them normalised). Returns (expected, submitted, notes).
    """
    if not accept or not any(accept.values()):
        return expected, submitted, []
    notes: list[str] = []
    e_primary, e_sec, e_cpt = expected
    primary, secs, cpts = submitted
    all_icd = [e_primary, *e_sec]
    icd_alias = {a: e for e, alts in accept.get("icd10", {}).items() for a in alts}
    cpt_alias = {a: e for e, alts in accept.get("cpt", {}).items() for a in alts}
    if icd_alias:
        given = {primary, *secs}

        def icd(c: str) -> str:
            e = icd_alias.get(c)
            if e and e not in given:
                notes.append(f"{c} accepted as an equivalent code")
                return e
            return c

        primary, secs = icd(primary), [icd(c) for c in secs]
    if cpt_alias:
        given_cpt = set(cpts)

        def cpt(c: str) -> str:
            e = cpt_alias.get(c)
            if e and e not in given_cpt:
                notes.append(f"{c} accepted as an equivalent code")
                return e
            return c

        cpts = [cpt(c) for c in cpts]
    free = accept.get("primary_icd10", [])
    if primary != e_primary and primary in free and primary in all_icd:
        notes.append(f"{primary} accepted as first-listed (sequencing is not fixed)")
        e_sec = [e_primary] + [c for c in all_icd[1:] if c != primary]
        e_primary = primary
    prefixes = tuple(p.replace(".", "") for p in accept.get("optional_icd10", []))
    if prefixes:
        keep = []
        for c in secs:
            if c not in all_icd and c.replace(".", "").startswith(prefixes):
                notes.append(f"{c} is optional (neither adds nor costs)")
                continue
            keep.append(c)
        secs = keep
    optional_cpt = set(accept.get("optional_cpt", []))
    if optional_cpt:
        kept = []
        for c in cpts:
            if c.split("-")[0] in optional_cpt and c not in e_cpt:
                notes.append(f"{c} is optional (neither adds nor costs)")
                continue
            kept.append(c)
        cpts = kept
    return (e_primary, e_sec, e_cpt), (primary, secs, cpts), notes


def resolve_submission(
    expected: dict[str, Any], submitted: dict[str, Any], accept: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(expected, submitted) as the reward sees them after the acceptable alternatives:
    normalised, deduplicated, equivalents rewritten, a free primary swapped, optional codes
    dropped. For metrics beside the reward (micro-F1) that must credit what the reward credits."""
    sub = submitted if isinstance(submitted, dict) else {}
    e = (normalize_icd(expected["primary_icd10"]),
         _dedupe(list(expected.get("secondary_icd10s", [])), normalize_icd)[0],
         _dedupe(list(expected.get("cpt_codes", [])), normalize_cpt)[0])
    s = (normalize_icd(sub.get("primary_icd10", "")),
         _dedupe(sub.get("secondary_icd10s", []), normalize_icd)[0],
         _dedupe(sub.get("cpt_codes", []), normalize_cpt)[0])
    e, s, _ = apply_accept(accept, e, s)
    keys = ("primary_icd10", "secondary_icd10s", "cpt_codes")
    return dict(zip(keys, e, strict=True)), dict(zip(keys, s, strict=True))


def score_submission(
    expected: dict[str, Any],
    submitted: dict[str, Any],
    ref: Any,
    accept: dict[str, Any] | None = None,
) -> tuple[float, dict[str, Any]]:
    """(reward in [0, 1], breakdown) for one case; see the module docstring for the formula.

    ``accept`` is the case's acceptable alternatives (:func:`apply_accept`); without it only
    the expected codes score in full.
    """
    sub = submitted if isinstance(submitted, dict) else {}
    exp_primary = normalize_icd(expected["primary_icd10"])
    got_primary = normalize_icd(sub.get("primary_icd10", ""))
    exp_sec, _ = _dedupe(list(expected.get("secondary_icd10s", [])), normalize_icd)
    got_sec, dup_sec = _dedupe(sub.get("secondary_icd10s", []), normalize_icd)
    exp_cpt, _ = _dedupe(list(expected.get("cpt_codes", [])), normalize_cpt)
    got_cpt, dup_cpt = _dedupe(sub.get("cpt_codes", []), normalize_cpt)
    (exp_primary, exp_sec, exp_cpt), (got_primary, got_sec, got_cpt), accepted = apply_accept(
        accept, (exp_primary, exp_sec, exp_cpt), (got_primary, got_sec, got_cpt)
    )
    # primary
    if not got_primary:
        primary = {"score": 0.0, "status": "missing", "level": "none", "code": ""}
    elif not icd_valid(got_primary, ref):
        node = ref.icd10cm(got_primary)
        primary = {
            "score": 0.0,
            "status": "invalid",
            "level": "none",
            "code": got_primary,
            "reason": "not billable" if node else "not in ICD-10-CM",
        }
    else:
        s, level = icd_similarity(exp_primary, got_primary, ref)
        primary = {
            "score": s,
            "status": "exact" if s == 1.0 else "partial" if s > 0 else "wrong",
            "level": level,
            "code": got_primary,
        }
    # secondaries
    valid_sec = {c: icd_valid(c, ref) for c in got_sec}
    secondary = _soft_f1(exp_sec, got_sec, valid_sec, lambda e, s: icd_similarity(e, s, ref)[0])
    secondary["duplicates"] = dup_sec
    # cpt
    valid_cpt = {c: cpt_valid(c, ref) for c in got_cpt}
    cpt = _soft_f1(exp_cpt, got_cpt, valid_cpt, cpt_similarity)
    cpt["duplicates"] = dup_cpt

    num = WEIGHTS["primary"] * primary["score"]
    den = WEIGHTS["primary"]
    for name, comp in (("secondary", secondary), ("cpt", cpt)):
        if comp["active"]:
            num += WEIGHTS[name] * comp["score"]
            den += WEIGHTS[name]
    reward = round(num / den, 6)
    reward = min(1.0, max(0.0, reward))
    breakdown = {
        "reward": reward,
        "weights": dict(WEIGHTS),
        "primary": primary,
        "secondary": secondary,
        "cpt": cpt,
        "accepted": accepted,
    }
    return reward, breakdown


def _component_text(label: str, comp: dict[str, Any]) -> str:
    if not comp["active"]:
        return f"{label}: none expected, none submitted (not scored)."
    parts = [
        f"{label}: {comp['exact']} exact, {comp['partial']} partial"
        f" of {comp['expected_count']} expected"
    ]
    if comp["missing"]:
        parts.append(f"{comp['missing']} missing")
    if comp["extra"]:
        parts.append(f"{comp['extra']} extra or wrong")
    if comp["invalid"]:
        parts.append("invalid: " + ", ".join(comp["invalid"]))
    if comp["duplicates"]:
        parts.append(f"{comp['duplicates']} duplicate(s) ignored")
    return "; ".join(parts) + f" (score {comp['score']:.2f})."


def feedback_text(breakdown: dict[str, Any]) -> str:
    """What was right and wrong, by counts and by the submitted codes only (no expected codes)."""
    p = breakdown["primary"]
    if p["status"] == "exact":
        head = "Primary diagnosis: exact match."
    elif p["status"] == "partial":
        head = (
            f"Primary diagnosis: partially correct ({p['level']}-level match,"
            f" credit {p['score']:.2f})."
        )
    elif p["status"] == "invalid":
        head = f"Primary diagnosis: {p['code']} is invalid ({p['reason']})."
    elif p["status"] == "missing":
        head = "Primary diagnosis: missing."
    else:
        head = f"Primary diagnosis: {p['code']} is incorrect."
    return " ".join(
        [
            head,
            _component_text("Secondary ICD-10-CM", breakdown["secondary"]),
            _component_text("CPT", breakdown["cpt"]),
            *(["Accepted: " + "; ".join(breakdown["accepted"]) + "."]
              if breakdown.get("accepted") else []),
            f"Reward {breakdown['reward']:.3f}.",
        ]
    )
