"""Seeded clinical notes with their expected ICD-10-CM and CPT codes.

A case is built from the catalog, never from free text, so its expected codes follow from what the
note says by rules a coder can name:

* **Primary** (first-listed) diagnosis = the reason for the visit, named by the chief complaint and
  HPI (ICD-10-CM IV.A/IV.G); the assessment lists problems in seeded random order, so sequencing
  has to be read from the note, not from the list position.
* **Secondary** codes = every other condition the assessment addresses, history-of (Z85/Z86/Z87)
  and status (Z79/Z95/Z96) codes, and external-cause codes (never first-listed).
* Symptoms integral to a confirmed diagnosis are written in the HPI but not coded; negated findings
  ("denies chest pain", "no fever") are never coded; an uncertain diagnosis ("probable",
  "suspected", "rule out") is not coded, its documented symptoms are (IV.H).
* Injuries carry laterality and the 7th character of the encounter (A initial, D subsequent);
  external causes repeat that 7th character.
* CPT: a problem visit gets one office E/M whose level follows from what the note documents --
  each problem's status, the data reviewed/ordered and the management decision -- by the AMA 2021
  MDM table (:mod:`.em`), or from the total time it states when that is higher; the level itself
  is never written. A visit only for a procedure gets the procedure alone; a procedure plus a
  separately identifiable problem gets the procedure and the E/M with modifier 25 when NCCI
  pairs them
  (``em_needs_modifier_25``); procedures on a paired organ carry RT/LT, or 50 when bilateral.
  Preventive visits use 9938x/9939x by age and new/established status; with a same-day vaccine
  the visit carries modifier 25 (NCCI pairs 90471 with 99381-99397, indicator 1).
* **Payer**: every note ends with the payer it bills (Medicare from age 65, else a commercial
  plan); Medicare takes G0008 for influenza vaccine administration (not paired with the visit).
* **Acceptable alternatives** (``accept``, hidden like ``expected``): codes a competent coder may
  defensibly submit instead -- a sequencing-free first-listed code, an equivalent code the note's
  wording supports, payer- and modifier-dependent CPT forms (QW, GY, digit modifiers, 69210
  without 50) and optional families (Y92/Y93/Y99 on injuries, a drug supply documented by dose)
  that neither add nor cost. See :func:`.reward.apply_accept`.

* **Tiers**: 45% of cases are tier 2 (:mod:`.tier2`): a billable code from the tabular, worded
  with its split's phrasings, held out of train for 40% of codes; the rest come from the curated
  catalog. The seed's split (:func:`clarus_env.splits.split_of`) picks the pool.

Cases are plain dicts so they serialize as they are. Everything derived from the catalog is built
once per process (:func:`_pools`); generating an episode is then pure ``random.Random`` calls and
string joins.
"""

from __future__ import annotations

import random
import re
import zlib
from itertools import pairwise
from typing import Any

from ...scenario import rng_for
from ...splits import split_of
from . import em, grammar, tier2
from .catalog import Catalog, load_catalog, with_seventh
from .grammar import pick, randint

TASK = "medical_coding"
DIFFICULTIES = ("easy", "medium", "hard")
COMBINATION_IDS = (
    "htn_hf",
    "htn_ckd",
    "htn_esrd",
    "htn_hf_ckd",
    "hf_alone",
    "t2dm_ckd",
    "t2dm_htn_ckd",
    "t2dm_hyperglycemia",
    "t2dm_neuropathy",
    "t2dm_foot_ulcer",
    "obesity",
    "ckd_alone",
    "bph",
    "copd",
    "asthma_intermittent",
    "asthma_moderate",
)
LATERAL_PROC_IDS = ("knee_oa", "cerumen", "shoulder_bursitis", "trigger_finger")
EASY_PROCS = frozenset(
    {
        "joint_injection_major",
        "tendon_injection",
        "cerumen_instrument",
        "cerumen_irrigation",
        "wart_destruction",
        "ak_destruction",
        "shave_biopsy",
        "skin_tag_removal",
        "nail_avulsion",
        "incision_drainage",
        "im_injection_patient_supplied",
        "iud_insertion",
    }
)
SIDE_WORDS = {"right": ("right", "R"), "left": ("left", "L"), "bilateral": ("both", "bilateral")}
SIDE_MOD = {"right": "RT", "left": "LT", "bilateral": "50"}

HEADERS = {
    "cc": ("CC:", "Chief complaint:", "Reason for visit:", "Chief Complaint:"),
    "hpi": ("HPI:", "History of present illness:", "History:"),
    "pmh": ("PMH:", "Past medical history:", "Medical history:"),
    "meds": ("Meds:", "Medications:", "Current medications:"),
    "sh": ("SH:", "Social history:", "Social:"),
    "ros": ("ROS:", "Review of systems:", "Pertinent ROS:"),
    "exam": ("Exam:", "Physical exam:", "PE:", "Objective:"),
    "assessment": ("Assessment:", "A:", "Impression:", "Diagnoses:"),
    "plan": ("Plan:", "P:", "Plan/Procedures:"),
}
ORDERS = (
    ("cc", "hpi", "pmh", "meds", "sh", "ros", "exam", "assessment", "plan"),
    ("cc", "hpi", "ros", "pmh", "sh", "meds", "exam", "assessment", "plan"),
    ("cc", "hpi", "pmh", "ros", "exam", "meds", "sh", "assessment", "plan"),
    ("cc", "hpi", "ros", "exam", "pmh", "meds", "sh", "assessment", "plan"),
    ("assessment", "cc", "hpi", "pmh", "meds", "sh", "ros", "exam", "plan"),
    ("cc", "hpi", "pmh", "sh", "meds", "ros", "exam", "assessment", "plan"),
    ("cc", "hpi", "meds", "pmh", "sh", "exam", "ros", "assessment", "plan"),
)
MEDICARE_AGE = 65
PAYER_LINES = {
    "medicare": tuple(
        f"{head} {body}"
        for head in ("Insurance:", "Payer:", "Coverage:")
        for body in ("Medicare Part B.", "Medicare (traditional, Part B).", "Original Medicare.",
                     "traditional Medicare, Part B.", "Medicare fee-for-service.",
                     "Medicare FFS, Part B.")
    ),
    "commercial": tuple(
        f"{head} {kind} {plan}."
        for head in ("Insurance:", "Payer:", "Coverage:")
        for kind in ("commercial", "private", "employer-sponsored")
        for plan in ("PPO", "HMO", "EPO", "POS plan")
    ),
}
OPTIONAL_EXTERNAL_CAUSE = ("Y92", "Y93", "Y99")
UNCERTAIN_PLANS = (
    "diagnosis not yet established",
    "not confirmed at this visit",
    "will reassess at f/u",
    "to be clarified",
)


# --------------------------------------------------------------------------------------------
# per-process pools
# --------------------------------------------------------------------------------------------
class _Pools:
    def __init__(self, cat: Catalog, ref: Any = None) -> None:
        self.cat = cat
        conds = cat.conditions
        by = cat.by_id
        self.symptoms = [c for c in conds if c["kind"] == "symptom" and "variants" not in c]
        # what a note may deny (an elevated BP reading never), and where each id and code is
        self.negatable = [c for c in self.symptoms if c["id"] != "sx_elevated_bp"]
        at_code: dict[str, list[int]] = {}
        for n, c in enumerate(self.negatable):
            at_code.setdefault(c["codes"][0], []).append(n)
        self.negatable_at = ({c["id"]: n for n, c in enumerate(self.negatable)}, at_code)
        self.easy_acute = [
            c
            for c in conds
            if c["kind"] in ("acute", "minor") or (c["kind"] == "symptom" and "variants" in c)
        ]
        self.easy_proc = [
            c
            for c in conds
            if EASY_PROCS.intersection(c.get("procedures", [])) and not c.get("seventh")
        ]
        self.solo = [c for c in conds if c.get("solo")]
        self.chronic = [c for c in conds if c["kind"] == "chronic" and not c.get("solo")]
        self.reason = [c for c in conds if c["kind"] in ("acute", "minor", "chronic")]
        self.reason_not_minor = [c for c in self.reason
                                 if c["kind"] != "minor" and c["problem"] != "minor"]
        self.reason_problem_not_minor = [c for c in self.reason if c["problem"] != "minor"]
        self.reason_acute = [c for c in self.reason if c["kind"] == "acute"]
        self.history = [c for c in conds if c["kind"] == "history"]
        self.history_like = self.history + [
            c for c in conds if c["kind"] == "status" and not c.get("requires_any")
        ]
        self.status = [c for c in conds if c["kind"] == "status"]
        self.injury = [c for c in conds if c["kind"] == "injury"]
        self.sequela = [c for c in conds if c["kind"] == "sequela"]
        self.uncertain = [c for c in conds if c.get("uncertain")]
        self.combination = [by[i] for i in COMBINATION_IDS]
        self.lateral_proc = [by[i] for i in LATERAL_PROC_IDS]
        self.screen = [c for c in conds if c.get("screening_finding")]
        self.procs = cat.procedures_by_id
        self.em = {
            (p["kind"], p.get("level")): p
            for p in cat.procedures
            if p["kind"] in ("em_new", "em_est")
        }
        self.preventive = [p for p in cat.procedures if p["kind"].startswith("preventive")]
        # what can carry an acceptable alternative (see _accept), so most cases skip it fast
        self.alt_conditions = frozenset(
            c["id"]
            for c in conds
            if c.get("alternatives") or c.get("sequence_free") or c.get("digit_modifiers")
        )
        # external-cause stem -> [(mechanism phrases, stems a coder may use instead)]
        self.cause_alternatives: dict[str, list[tuple[list[str], list[str]]]] = {}
        for cause in cat.external_causes:
            for alt in cause.get("alternatives", ()):
                self.cause_alternatives.setdefault(cause["stem"], []).append(
                    (alt["phrases"], alt["accept"]))
        self.ref = ref
        self.chronic_12 = [c for c in self.chronic if c["age"][0] >= 12]
        # candidates that fit (age, sex), per pool list the pools own (stable ids): built here
        # for every age, since a first compile of each (pool, age, sex) scanned the whole pool
        self._fitting = {id(x): _fitting_by_age(x) for x in (
            self.chronic, self.chronic_12, self.history_like, self.screen, self.reason,
            self.reason_not_minor, self.reason_problem_not_minor)}
        self._neg_words: dict[str, list[str]] = {}
        self._excl: dict[str, list[tuple[str, str]]] = {}
        self._excl_pair: dict[tuple[str, str], bool] = {}
        self._t2: dict[str, tuple[list, list]] = {}
        self.prepared: dict[str, _Prepared] = {}
        self.synonyms: dict[str, list[str]] = {}
        self.phrases: dict[tuple[str, str], list[str]] = {}
        self.titles: set[str] = set()
        if ref is not None:
            self._drop_title_synonyms(ref)
            for split in tier2.SPLIT_NAMES:  # built once per process, not on a first case
                self.tier2_split(split)
        self.phrase_ids = {cid for cid, _ in self.phrases}
        self.alt_procedures = {
            p["cpt"]: p
            for p in cat.procedures
            if p.get("clia_waived")
            or p.get("bilateral_without_50")
            or p.get("optional_supply")
            or p["kind"].startswith("preventive")
        }

    def fitting(self, pool: list[dict[str, Any]], age: int, sex: str) -> list[dict[str, Any]]:
        """The conditions of ``pool`` that fit the patient (precomputed for the pools' own
        lists)."""
        table = self._fitting.get(id(pool))
        if table is not None and sex in table and 0 <= age <= MAX_AGE:
            return table[sex][age]
        return [c for c in pool if _fits(c, age, sex)]

    def negation_words(self, c: dict[str, Any]) -> list[str]:
        if c["id"] not in self._neg_words:
            self._neg_words[c["id"]] = _negation_words(self, c)
        return self._neg_words[c["id"]]

    def tier2_split(self, split: str) -> tuple[list, list]:
        """(held-out entries, shared entries) of the tier-2 pool for ``split``; train has no
        held-out codes (its own-only codes are shared codes with a single phrasing)."""
        if split not in self._t2:
            entries = tier2.load()["by_split"][split]
            held = [(e, p) for e, p in entries if tier2.role_of(e["code"]) == split]
            shared = [(e, p) for e, p in entries if tier2.role_of(e["code"]) == "shared"]
            self._t2[split] = (held, shared)
        return self._t2[split]

    def excludes1(self, a: str, b: str) -> bool:
        """An Excludes1 note at either code (or an ancestor) names the other."""
        got = self._excl_pair.get((a, b))
        if got is None:
            got = self._excl_pair[(a, b)] = self._excludes1(a, b)
        return got

    def _excludes1(self, a: str, b: str) -> bool:
        if self.ref is None:
            return False
        known = tier2.load()["excludes1"]  # precomputed for every tier-2 and curated code
        for x in (a, b):
            if x not in self._excl:
                self._excl[x] = known[x] if x in known else tier2.excluded_refs(self.ref, x)
        return (_covers(self._excl[a], b.replace(".", ""))
                or _covers(self._excl[b], a.replace(".", "")))

    def is_title(self, text: str) -> bool:
        return text.lower() in self.titles

    def _drop_title_synonyms(self, ref: Any) -> None:
        """Variant phrases and synonyms that render to an ICD-style title of a code they emit
        are not drawn (a note quoting "alcohol abuse, uncomplicated" reads as a code list, not
        documentation); a row left with no other wording keeps its own."""
        cat = self.cat
        for cond in cat.conditions:
            if cond.get("seventh"):
                continue
            titles = {
                node["description"].lower()
                for v in cat.variants(cond)
                for code in v["codes"]
                if (node := ref.icd10cm(code)) is not None and _title_style(node["description"])
            }
            self.titles |= titles
            if not titles:
                continue
            phrases: dict[str, list[str]] = {}
            for v in cat.variants(cond):
                ok = [ph for ph in v["phrases"] if not any(t in ph.lower() for t in titles)]
                phrases[v.get("id", "")] = ok or v["phrases"]
                if ok and len(ok) < len(v["phrases"]):
                    self.phrases[(cond["id"], v.get("id", ""))] = ok
            keep = [
                syn for syn in cond["synonyms"]
                if not any(
                    t in syn.replace("{side}", ph).replace("{v}", ph).lower()
                    for v in cat.variants(cond) for ph in phrases[v.get("id", "")]
                    for t in titles
                )
            ]
            if keep and len(keep) < len(cond["synonyms"]):
                self.synonyms[cond["id"]] = keep


_title_style = tier2.title_style


def _covers(ranges: list[tuple[str, str]], plain: str) -> bool:
    """``tier2.covered`` over a code's Excludes1 ranges, for a code already without its dot."""
    for lo, hi in ranges:
        if lo == hi:
            if plain.startswith(lo):
                return True
        else:
            n = min(len(lo), len(hi))
            if lo[:n] <= plain[:n] <= hi[:n]:
                return True
    return False


_POOLS: dict[str, _Pools] = {}


def _pools(ref: Any) -> _Pools:
    """Pools per reference release: built once per process (synonyms are checked against the
    release's ICD-10-CM titles)."""
    key = str(getattr(ref, "release", ""))
    if key not in _POOLS:
        _POOLS[key] = _Pools(load_catalog(), ref)
    return _POOLS[key]


# --------------------------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------------------------
def _fits(c: dict[str, Any], age: int, sex: str) -> bool:
    return c["age"][0] <= age <= c["age"][1] and c["sex"] in ("any", sex)


MAX_AGE = 120  # the schema's bound on patient_age


def _fitting_by_age(pool: list[dict[str, Any]]) -> dict[str, list[list[dict[str, Any]]]]:
    """sex -> age -> the conditions of ``pool`` that fit, in pool order. Membership changes
    only where some condition's age range starts or ends, so one list is built per stretch
    between those ages and shared by every age in it."""
    cuts = sorted({0, MAX_AGE + 1, *(c["age"][0] for c in pool),
                   *(c["age"][1] + 1 for c in pool)})
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for sex in ("female", "male"):
        table: list[list[dict[str, Any]]] = []
        for lo, hi in pairwise(cuts):
            if lo > MAX_AGE:
                break
            members = [c for c in pool if _fits(c, lo, sex)]
            table.extend([members] * (min(hi, MAX_AGE + 1) - lo))
        out[sex] = table
    return out


def _patient(rng: random.Random, c: dict[str, Any]) -> tuple[int, str]:
    lo, hi = c["age"]
    age = randint(rng, lo, min(hi, 94))
    sex = c["sex"] if c["sex"] != "any" else pick(rng, ("female", "male"))
    return age, sex


class _Item:
    """One documented condition: its variant, encounter character and rendered phrase."""

    __slots__ = (
        "cond", "variant", "seventh", "text", "codes", "side", "role", "status_text", "synonym",
        "counted", "em_alt", "problem", "_systems", "status_codes", "prep",
    )

    def __init__(
        self,
        pools: _Pools,
        rng: random.Random,
        cond: dict[str, Any],
        *,
        seventh: str | None = None,
        variant: dict[str, Any] | None = None,
        allow_bilateral: bool = True,
    ) -> None:
        self.cond = cond
        self.prep = prep = _prepared(pools, cond)
        if variant is None:
            choices = prep.variants if allow_bilateral else prep.unilateral
            variant = choices[int(rng.random() * len(choices))]
            phrases = prep.phrases[id(variant)] if prep.phrases else None
        else:
            phrases = pools.phrases.get((cond["id"], variant.get("id", "")))
        self.variant = variant
        if prep.sevenths and seventh is None:
            seventh = pick(rng, prep.sevenths)
        self.seventh = seventh
        self.side = variant.get("side")
        synonyms = prep.synonyms
        self.synonym = synonym = synonyms[int(rng.random() * len(synonyms))]
        self.codes = (list(variant["codes"]) if prep.plain_codes
                      else pools.cat.codes_for(cond, variant, seventh, synonym))
        self.text = _render(rng, synonym, variant, phrases)
        self.role = ""
        self.status_text = ""
        self.counted = False  # a problem the E/M addresses: its status is written
        self.em_alt: tuple[str, str] | None = None  # (expected E/M, the other defensible one)
        self.problem: str = variant.get("problem", cond["problem"])
        self._systems: frozenset[str] | None = None
        self.status_codes: list[str] = []  # its status item's codes (Z79.01 on an AF line)

    @property
    def systems(self) -> frozenset[str]:
        """The organ systems the item's codes involve (computed once)."""
        if self._systems is None:
            codes = self.codes
            self._systems = (_code_systems(codes[0], self.problem) if len(codes) == 1
                             else _systems_of(tuple(codes), self.problem))
        return self._systems


class _Prepared:
    """What every item of one condition reads, looked up once per condition instead of per
    item: its variants (all, and without a bilateral one), their phrase lists after title
    filtering, its synonyms, its 7th characters, whether its codes are the variant's own (no
    7th character, no synonym-specific codes), the symptoms it keeps a note from denying and
    its clash groups."""

    __slots__ = ("cond", "variants", "unilateral", "phrases", "sevenths", "synonyms",
                 "plain_codes", "unsaid", "groups")

    def __init__(self, pools: _Pools, cond: dict[str, Any]) -> None:
        self.cond = cond
        self.variants = variants = pools.cat.variants(cond)
        self.unilateral = (variants if len(variants) == 1 and "side" not in variants[0]
                           else [v for v in variants if v.get("side") != "bilateral"])
        # variant id -> its title-filtered phrases, only for conditions that have some
        self.phrases = ({id(v): pools.phrases.get((cond["id"], v.get("id", "")))
                         for v in variants} if cond["id"] in pools.phrase_ids else None)
        self.sevenths = cond.get("seventh")
        self.synonyms = pools.synonyms.get(cond["id"]) or cond["synonyms"]
        self.plain_codes = not self.sevenths and not cond.get("synonym_codes")
        # symptoms a note with this condition never denies: integral to it, or left uncertain
        self.unsaid = (*cond.get("integral", ()),
                       *(cond.get("uncertain") or {}).get("symptoms", ()))
        self.groups = _groups(cond)


def _prepared(pools: _Pools, cond: dict[str, Any]) -> _Prepared:
    got = pools.prepared.get(cond["id"])
    if got is None or got.cond is not cond:
        got = pools.prepared[cond["id"]] = _Prepared(pools, cond)
    return got


def _render(rng: random.Random, template: str, variant: dict[str, Any],
            phrases: list[str] | None = None) -> str:
    out = template
    pool = phrases or variant["phrases"]
    if "{side}" in out:
        out = out.replace("{side}", pick(rng, pool))
    if "{v}" in out:
        out = out.replace("{v}", pick(rng, pool))
    return out


def _site_text(rng: random.Random, item: _Item) -> str:
    site = item.cond.get("site", "")
    if item.side == "bilateral":
        return f"{pick(rng, SIDE_WORDS['bilateral'])} {site}s"
    return f"{SIDE_WORDS[item.side][0] if item.side else ''} {site}".strip()


def _proc_text(rng: random.Random, proc: dict[str, Any], item: _Item | None) -> str:
    text = pick(rng, proc["synonyms"])
    if "{site}" in text:
        text = text.replace("{site}", _site_text(rng, item) if item else "site")
    if "{size}" in text:
        lo, hi = proc["size_cm"]
        text = text.replace("{size}", f"{randint(rng, int(lo * 10), int(hi * 10)) / 10:.1f}")
    if "{n}" in text:
        lo, hi = proc.get("count", [1, 14])
        text = text.replace("{n}", str(randint(rng, lo, hi)))
    return text


def _proc_code(proc: dict[str, Any], item: _Item | None) -> str:
    if proc.get("laterality_modifiers") and item is not None and item.side:
        return f"{proc['cpt']}-{SIDE_MOD[item.side]}"
    return proc["cpt"]


def _compatible(items: list[_Item], cond: dict[str, Any]) -> bool:
    groups = _groups(cond)
    for i in items:  # noqa: SIM110 - a loop costs less than all() over a generator
        if not groups.isdisjoint(i.prep.groups):
            return False
    return True


_GROUPS: dict[str, tuple[list[str], frozenset[str]]] = {}


def _groups(cond: dict[str, Any]) -> frozenset[str]:
    """A condition's clash groups as a set, built once per condition."""
    got = _GROUPS.get(cond["id"])
    if got is None or got[0] is not cond["groups"]:
        got = _GROUPS[cond["id"]] = (cond["groups"], frozenset(cond["groups"]))
    return got[1]


def _add_coexisting(
    pools: _Pools,
    rng: random.Random,
    items: list[_Item],
    age: int,
    sex: str,
    n: int,
    pool: list[dict[str, Any]],
    *,
    besides: str = "",
) -> None:
    """Add up to n conditions from pool that fit the patient and clash with no group
    (``besides``: the id of one condition to leave out, as if not in the pool)."""
    cands = pools.fitting(pool, age, sex)
    if besides:
        cands = [c for c in cands if c["id"] != besides]
    for _ in range(n * 4):
        if n <= 0 or not cands:
            break
        c = pick(rng, cands)
        if _compatible(items, c):
            it = _Item(pools, rng, c)
            it.role = "coexisting"
            items.append(it)
            n -= 1


def _add_status(pools: _Pools, rng: random.Random, items: list[_Item], age: int, sex: str) -> None:
    present = {i.cond["id"] for i in items}
    for c in pools.status:
        req = c.get("requires_any")
        if (
            req
            and present.intersection(req)
            and _fits(c, age, sex)
            and _compatible(items, c)
            and rng.random() < 0.7
        ):
            it = _Item(pools, rng, c)
            it.role = "status"
            owner = next(i for i in items if i.cond["id"] in req)
            owner.status_text = it.text
            owner.status_codes = it.codes
            items.append(it)


def _em(
    pools: _Pools,
    rng: random.Random,
    items: list[_Item],
    new: bool,
    age: int,
    hpi: list[str],
    *,
    procedure_day: bool = False,
    undiagnosed: bool = False,
) -> tuple[dict[str, Any], str]:
    """The office E/M for the problems addressed, and the plan sentences that document it.

    The note documents the three MDM elements -- each problem's status (written on its
    assessment line by :func:`_build_note`), the data reviewed/ordered (plan and HPI, via
    ``hpi``) and the management decision that sets the risk -- and the level follows from them
    by the AMA 2021 table (:func:`.em.mdm_level`). Some notes also state total time on the date
    of the encounter (without the separately reported procedure on a procedure day): the level
    is then the higher of time and MDM (the other is accepted: a coder may select by either).
    """
    addressed: list[_Item] = []
    problems: list[str] = []
    codes: list[str] = []
    for i in items:
        codes += i.codes
        codes += i.status_codes
        if i.problem in em.PROBLEM_KINDS:
            addressed.append(i)
            problems.append(i.problem)
            i.counted = True
            more = i.cond.get("illnesses")
            if more:  # "HTN; ESRD on HD" names two chronic illnesses: a coder counts each
                problems += ["chronic_stable"] * (more - 1)
    if undiagnosed:
        problems.append("undiagnosed")
    kinds = tuple(problems)
    p = _PROBLEMS_LEVEL.get(kinds)
    if p is None:
        p = _PROBLEMS_LEVEL[kinds] = em.problems_level(kinds)
    all_codes = tuple(codes)
    if undiagnosed:
        focus = grammar.Focus("the presenting symptoms", "undiagnosed", all_codes, True, all_codes)
    elif addressed:
        top = (addressed[0] if len(addressed) == 1
               else max(addressed, key=lambda i: em.PROBLEM_KINDS[i.problem]))
        # a new patient's drugs were prescribed elsewhere: no "refills sent, dose unchanged"
        focus = grammar.Focus(top.text, top.problem, top.codes,
                              new or top.problem not in ("chronic_stable",
                                                         "chronic_exacerbation"),
                              all_codes)
    else:
        focus = grammar.Focus("today's problem", "minor", (), True, all_codes)
    risk = grammar.fit_risk(pick(rng, _RISK_CHOICES[p]), focus, age)
    specialties, interpret = _specialties(focus.codes, all_codes, age < 13)
    d_target = pick(rng, _DATA_CHOICES[p])
    data = _draw_data(rng, d_target, age, interpret)
    key = (p, data, risk)
    level = _MDM_LEVEL.get(key)
    if level is None:
        level = _MDM_LEVEL[key] = em.em_level_from_mdm(em.mdm_level(p, em.data_level(data), risk))
    d_hpi, d_plan = grammar.data_sentences(rng, data, age, grammar.caregiver(rng, age),
                                           specialties, new=new)
    hpi.extend(d_hpi)
    lines = [*d_plan, grammar.risk_sentence(rng, risk, focus, age)]
    if rng.random() < 0.35:
        t_level = min(5, max(2, level + pick(rng, (-1, 0, 1))))
        lo, hi = em.time_range(t_level, new)
        minutes = randint(rng, lo, hi)
        lines.append(grammar.time_sentence(rng, minutes, procedure_day))
        if t_level != level and addressed:
            # a coder may select the level by MDM or by time (AMA 2021): the higher is
            # expected, the other is accepted as well
            kind = "em_new" if new else "em_est"
            addressed[0].em_alt = (pools.em[(kind, max(level, t_level))]["cpt"],
                                   pools.em[(kind, min(level, t_level))]["cpt"])
        level = max(level, t_level)
    proc = pools.em[("em_new" if new else "em_est", level)]
    return proc, " ".join(lines)


# the AMA table's answers by their inputs (a few hundred combinations: looked up, not re-derived)
_PROBLEMS_LEVEL: dict[tuple[str, ...], int] = {}
_MDM_LEVEL: dict[tuple[int, em.Data, int], int] = {}

# risk element (0 minimal .. 3 high) by problem level: minor problems rarely get a prescription;
# what the focus problem allows is applied after the draw (grammar.fit_risk)
_RISK_CHOICES = {0: (0, 0, 1, 1), 1: (0, 1, 1, 2, 2, 2), 2: (1, 2, 2, 2, 3), 3: (2, 3, 3)}
_DATA_CHOICES = {0: (0, 0, 0, 1, 2), 1: (0, 0, 1, 1, 2, 3), 2: (0, 1, 1, 2, 2, 3),
                 3: (1, 2, 3, 3)}


_INTERPRET: dict[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], bool]] = {}


def _specialties(focus: tuple[str, ...], codes: tuple[str, ...],
                 child: bool) -> tuple[tuple[str, ...], bool]:
    """(the specialties data elements may name -- the focus problem's, else any addressed
    problem's -- and whether one has a test to interpret). Worked out per code (memoized
    per code) and per specialty list: a memo per pair of code tuples missed on most visits."""
    specs = tuple(grammar.specialties_for(focus) or grammar.specialties_for(codes))
    key = (specs, child)
    got = _INTERPRET.get(key)
    if got is None:
        got = _INTERPRET[key] = (specs, grammar.can_interpret(specs, 5 if child else 40))
    return got


def _draw_data(rng: random.Random, target: int, age: int, interpret: bool = True) -> em.Data:
    """A set of data elements whose AMA category level is ``target``; ``interpret``: the
    problems' specialty has a test another physician performed (else a discussion stands in
    for the independent interpretation)."""
    historian = age < 12 and rng.random() < 0.7
    if target == 0:
        return em.Data(tests_ordered=pick(rng, (0, 1)) if not historian else 0,
                       independent_historian=False)
    if target == 1:
        if historian:
            return em.Data(independent_historian=True, tests_ordered=pick(rng, (0, 1)))
        a = pick(rng, (0, 1, 2))
        b = pick(rng, (0, 1, 2 - a)) if a < 2 else 0
        return em.Data(tests_ordered=a, results_reviewed=b, external_notes=2 - a - b)
    cat1 = pick(rng, (0, 1, 2, 3))
    split = [0, 0, 0]
    for _ in range(cat1):
        split[int(rng.random() * 3)] += 1
    if target == 2:
        kind = pick(rng, ("cat1", "cat1", "interp", "discuss"))
        if kind == "interp" and not interpret:
            kind = "discuss"
        if kind == "cat1":
            need = 3 - int(historian)
            split = [0, 0, 0]
            for _ in range(need):
                split[int(rng.random() * 3)] += 1
            return em.Data(tests_ordered=split[0], results_reviewed=split[1],
                           external_notes=split[2], independent_historian=historian)
        # one category only: Cat 1 kept below three items
        small = min(cat1, 2 - int(historian)) if historian else min(cat1, 2)
        return em.Data(tests_ordered=small, independent_historian=historian,
                       independent_interpretation=kind == "interp",
                       discussion_external=kind == "discuss")
    need = 3 - int(historian)
    split = [0, 0, 0]
    for _ in range(need):
        split[int(rng.random() * 3)] += 1
    both = rng.random() < 0.3
    interp = (both or rng.random() < 0.5) and interpret
    both = both and interpret
    return em.Data(tests_ordered=split[0], results_reviewed=split[1], external_notes=split[2],
                   independent_historian=historian, independent_interpretation=interp,
                   discussion_external=both or not interp)


def _preventive_code(pools: _Pools, age: int, new: bool) -> dict[str, Any]:
    kind = "preventive_new" if new else "preventive_est"
    return next(
        p for p in pools.preventive if p["kind"] == kind and p["age"][0] <= age <= p["age"][1]
    )


# --------------------------------------------------------------------------------------------
# the note
# --------------------------------------------------------------------------------------------
# how a note's HPI names the patient by (child, female), and new/established status
_SEX_WORDS = {(True, True): ("girl", "female child", "F"),
              (True, False): ("boy", "male child", "M"),
              (False, True): ("woman", "female", "F"),
              (False, False): ("man", "male", "M")}
_STATUS_NEW = ("new patient", "new to the practice", "new pt")
_STATUS_EST = ("established patient", "est. patient", "returning patient")


_SYSTEMS_BY_PREFIX = (
    ("I", ("heart", "lungs", "musculoskeletal")),
    ("J0", ("ent", "lungs")), ("J3", ("ent",)), ("J", ("lungs", "ent")),
    ("H6", ("ent",)), ("H7", ("ent",)), ("H8", ("ent", "neuro")), ("H9", ("ent",)),
    ("H", ("eye",)), ("L", ("skin",)), ("B08", ("skin", "ent")), ("B0", ("skin",)),
    ("B3", ("skin",)), ("B8", ("skin",)), ("A", ("skin",)), ("U07", ("lungs", "ent", "general")),
    ("M", ("musculoskeletal", "neuro")), ("S", ("musculoskeletal", "skin", "neuro")),
    ("T", ("skin", "musculoskeletal")), ("K", ("abdomen",)), ("N", ("abdomen",)),
    ("O", ("abdomen",)), ("F", ("psych",)), ("G", ("neuro", "musculoskeletal")),
    ("E11.4", ("neuro",)), ("E11.6", ("skin",)), ("E", ("general",)),
    ("R00", ("heart",)), ("R01", ("heart",)), ("R0", ("lungs", "ent")),
    ("R1", ("abdomen",)), ("R2", ("skin", "neuro")), ("R3", ("abdomen",)),
    ("R4", ("neuro", "psych", "general")), ("R5", ("general", "neuro", "heart")),
    ("R6", ("general", "musculoskeletal", "skin")), ("R7", ("general",)),
    ("D", ("general", "skin")), ("C", ("general", "skin", "abdomen")),
)


_SYSTEMS_TABLE = grammar.PrefixTable(_SYSTEMS_BY_PREFIX)


# social-history facts a documented condition would contradict
_PARALYSIS = ("G80", "G81", "G82", "G83", "Z99.3", "Z89.4", "Z89.5", "Z89.6")
_SOCIAL_CONFLICTS = (
    ("alcohol", ("F10",)), ("tobacco", ("F17", "Z72.0", "Z87.891")),
    ("active", ("M", "S", "I50", "J44", *_PARALYSIS)),
    ("walks", _PARALYSIS), ("physical", _PARALYSIS),
    ("independent", (*_PARALYSIS, "F01", "F02", "F03", "G30", "R54", "F84", "Q90")),
)
_NORMAL_FINDING = (
    ("lungs", re.compile(r"\blungs? (are )?clear|clear to auscultation", re.I)),
    ("skin", re.compile(r"\bno rash\b|skin (is )?(clear|intact)", re.I)),
    ("heart", re.compile(r"\bregular rhythm\b|\bRRR\b", re.I)),
    ("abdomen", re.compile(r"abdomen (is )?soft, nontender", re.I)),
)
_VITAL_FINDING = re.compile(r"\b(temperature|temp|BP|febrile)\b.*\d|\bfebrile\b", re.IGNORECASE)


def _code_systems(code: str, problem: str) -> frozenset[str]:
    """The organ systems a code involves, so the exam never calls them normal."""
    key = (code, problem)
    got = _SYSTEMS_MEMO.get(key)
    if got is None:
        got = _SYSTEMS_MEMO[key] = frozenset(_code_systems_uncached(code, problem))
    return got


_SYSTEMS_MEMO: dict[tuple[str, str], frozenset[str]] = {}
_SYSTEMS_OF: dict[tuple[tuple[str, ...], str], frozenset[str]] = {}


def _systems_of(codes: tuple[str, ...], problem: str) -> frozenset[str]:
    key = (codes, problem)
    got = _SYSTEMS_OF.get(key)
    if got is None:
        got = _SYSTEMS_OF[key] = frozenset().union(*(_code_systems(c, problem) for c in codes))
    return got


def _code_systems_uncached(code: str, problem: str) -> set[str]:
    out = set(_SYSTEMS_TABLE.first(code, ()))
    if problem in ("acute_systemic", "chronic_exacerbation", "severe"):
        out.add("general")
    return out


_FINDING_KIND: dict[str, tuple[str | None, bool]] = {}
# one search that any normal-finding or vital-sign pattern needs to match first
_FINDING_ANY = re.compile("|".join(p.pattern for _, p in _NORMAL_FINDING)
                          + "|" + _VITAL_FINDING.pattern, re.IGNORECASE)
_PLAIN_FINDING = (None, False)
# a word every alternative of _FINDING_ANY contains: an ASCII text with none of them cannot
# match, and most findings (every tier-2 one is new to the process) are decided without the
# case-insensitive search, which costs ~9 us a text
_FINDING_WORDS = ("lung", "clear", "rash", "skin", "rhythm", "rrr", "abdomen", "temp", "bp",
                  "febrile")


def _finding_kind(finding: str) -> tuple[str | None, bool]:
    """(the system a finding calls normal or None, whether it is a vital sign), per text."""
    got = _FINDING_KIND.get(finding)
    if got is None:
        if not _may_match(finding, _FINDING_WORDS) or not _FINDING_ANY.search(finding):
            got = _FINDING_KIND[finding] = _PLAIN_FINDING
        else:
            normal = next((sys for sys, pat in _NORMAL_FINDING if pat.search(finding)), None)
            got = _FINDING_KIND[finding] = (normal, bool(_VITAL_FINDING.search(finding)))
    return got


_AVOID: dict[str, frozenset[str]] = {}


def _social_avoid(codes: list[str] | tuple[str, ...]) -> frozenset[str]:
    """The social-history tags the documented codes rule out (memoized per code)."""
    out: frozenset[str] = frozenset()
    for c in codes:
        got = _AVOID.get(c)
        if got is None:
            got = _AVOID[c] = frozenset(
                tag for tag, pre in _SOCIAL_CONFLICTS if c.startswith(pre))
        if got:
            out = out | got
    return out


def _join(rng: random.Random, parts: list[str]) -> str:
    """Positive findings: "a, b and c" or "a, b, c"."""
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return pick(rng, (", ".join(parts[:-1]) + " and " + parts[-1], ", ".join(parts)))


def _join_negated(rng: random.Random, parts: list[str]) -> str:
    """Negated findings joined by "or" ("No a, b or c"), never by ";" or "and", so no reader
    takes the last one for a positive ("No wheezing; abd pain.")."""
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} or {parts[1]}"
    return ", ".join(parts[:-1]) + pick(rng, (" or ", ", or ")) + parts[-1]


_FOLLOW_UP_CC = re.compile(r"\b(f/u|follow-up|recheck|check|establishing care|referred|"
                           r"transfer|here for procedure|scheduled)\b", re.IGNORECASE)


# a word every alternative of _FOLLOW_UP_CC contains (see _FINDING_WORDS)
_FOLLOW_UP_WORDS = ("f/u", "follow-up", "check", "establishing care", "referred", "transfer",
                    "here for procedure", "scheduled")


def _may_match(text: str, words: tuple[str, ...]) -> bool:
    """False when ``text`` is ASCII and holds none of ``words`` (lower case), which every
    alternative of the case-insensitive pattern they stand for needs: the search is skipped."""
    if not text.isascii():
        return True
    low = text.lower()
    for word in words:  # noqa: SIM110 - a loop costs less than any() over a generator
        if word in low:
            return True
    return False


def _follow_up_cc(cc: str) -> bool:
    """Whether the complaint names a follow-up, referral or scheduled visit."""
    return _may_match(cc, _FOLLOW_UP_WORDS) and bool(_FOLLOW_UP_CC.search(cc))


_FOLLOW_UP = re.compile(r"^(follow-up of|f/u|recheck of)\s+|\s+follow-up$", re.IGNORECASE)
_FOLLOW_UP_OPEN = ("follow-up", "f/u", "recheck of")
_NOT_NOUNS = frozenset({"febrile", "short of breath"})  # read wrong after "Reports ..."


def _symptom_word(rng: random.Random, pools: _Pools, cond: dict[str, Any]) -> str:
    words = pools.synonyms.get(cond["id"]) or cond["synonyms"]
    return pick(rng, [s for s in words if s not in _NOT_NOUNS])


def _build_note(
    rng: random.Random,
    pools: _Pools,
    *,
    age: int,
    sex: str,
    new: bool,
    cc: str,
    items: list[_Item],
    hpi_extra: list[str],
    positives: list[dict[str, Any]],
    negated: list[dict[str, Any]],
    uncertain: list[str],
    plan: list[str],
    encounter_line: str,
    distractors: int,
    hidden: tuple[str, ...] = (),
) -> str:
    """``hidden``: ids of coded symptoms left out of the assessment list, whose evidence the
    note must still carry (an elevated BP in the vitals line)."""
    # pick()'s draws, inlined: a note makes ~45 of them, and only the wording drawn
    # is formatted
    rand = rng.random
    sex_words = _SEX_WORDS[(age < 13, sex == "female")]
    if rand() < 0.5:
        who = f"{age}-year-old {sex_words[int(rand() * 3)]}"
    elif rand() < 0.5:
        who = f"{age} y/o {sex_words[int(rand() * 3)]}"
    else:
        who = f"{age}yo {sex_words[int(rand() * 3)]}"
    status = _STATUS_NEW[int(rand() * 3)] if new else _STATUS_EST[int(rand() * 3)]
    sections: dict[str, str] = {"cc": cc}
    form = int(rand() * 3)
    hpi = [f"{who}, {status}, presents with {cc}." if form == 0 else
           f"{who} ({status}) here for {cc}." if form == 1 else
           f"Patient is a {who}, {status}, seen today for {cc}."]
    if encounter_line:
        hpi.append(encounter_line)
    hpi.extend(hpi_extra)
    if positives:
        hpi.append(
            pick(rng, ("Reports ", "Endorses ", "Positive for "))
            + _join(rng, [_symptom_word(rng, pools, c) for c in positives])
            + "."
        )
    neg_words = [n["phrase"] for n in negated]
    neg_in_hpi = rng.random() < 0.4
    if negated and neg_in_hpi:
        hpi.append(pick(rng, ("Denies ", "No ", "Negative for "))
                   + _join_negated(rng, neg_words) + ".")
    # what the note's sections read off its items, gathered in one pass (no draws)
    all_codes: list[str] = []
    pmh: list[str] = []
    meds: list[str] = []
    involved: list[frozenset[str]] = []
    hypertensive = "sx_elevated_bp" in hidden
    for i in items:
        all_codes += i.codes
        if i.role in ("coexisting", "history"):
            pmh.append(i.text)
        if i.status_text:
            meds.append(i.status_text)
        involved.append(i.systems)
        if not hypertensive:
            hypertensive = i.cond["id"] == "sx_elevated_bp" or grammar.starts(i.codes, "I1")
    avoid = _social_avoid(all_codes)
    extras = grammar.social_history(rng, age, sex, distractors, avoid)
    sections["hpi"] = " ".join(hpi)
    sections["pmh"] = (
        "; ".join(pmh) if pmh else pick(rng, ("none", "noncontributory", "unremarkable"))
    )
    if meds:
        sections["meds"] = "; ".join(meds)
    ros = []
    if negated and not neg_in_hpi:
        ros.append(pick(rng, ("Denies ", "Negative for ", "No "))
                   + _join_negated(rng, neg_words) + ".")
    ros.append(f"{grammar.ROS_REST[int(rand() * 6)]} {grammar.ROS_NEGATIVE[int(rand() * 4)]}")
    if extras:
        sections["sh"] = " ".join(extras)
    sections["ros"] = " ".join(ros)
    febrile = False
    for p in positives:
        if p["id"] == "sx_fever":
            febrile = True
            break
    findings = []
    for c in positives:
        involved.append(_code_systems(c["codes"][0], c.get("problem", "")))
    blocked = frozenset().union(*involved)
    for i in items:
        if i.role == "status":
            continue
        found = i.cond["findings"]
        finding = found[int(rand() * len(found))].rstrip(".")
        normal, vital = _finding_kind(finding)
        if normal and normal in blocked and normal not in i.systems:
            continue  # "lungs clear" for an old pneumonia, beside a COPD exacerbation
        if vital:
            # a temperature or BP belongs in the vitals line, where it must agree with the rest
            febrile = febrile or "temp" in finding.lower() or "febrile" in finding.lower()
            continue
        findings.append(finding[:1].upper() + finding[1:] + ".")
    exam = [grammar.vitals(rng, age, febrile, hypertensive), *findings]
    exam.extend(grammar.normal_exam(rng, age, blocked, (1, 1, 2, 3)[int(rand() * 4)]))
    sections["exam"] = " ".join(exam)
    lines = []
    follow_cc = _follow_up_cc(cc) or not items or items[0].seventh == "D"
    for n, i in enumerate(items):
        if i.role == "status":
            continue
        kind = i.cond["kind"]
        status = (
            grammar.status_suffix(
                rng, i.problem,
                new_today=n == 0 and not follow_cc and kind != "chronic",
                follow_up=(n == 0 and follow_cc) or i.seventh == "D",
                treated=kind == "chronic" and not i.cond["id"].startswith("t2:"),
                codes=i.codes,
                acuity_unsaid=i.synonym in i.cond.get("synonym_codes", ()))
            if i.counted and kind != "symptom"
            else ""
        )
        lines.append(f"{i.text} ({i.status_text}){status}" if i.status_text
                     else i.text + status)
    lines.extend(uncertain)
    lines = grammar.sample(rng, lines, len(lines))
    style = int(rand() * 3)
    if style == 0:
        sections["assessment"] = " ".join(f"{n}. {line}." for n, line in enumerate(lines, 1))
    elif style == 1:
        sections["assessment"] = "; ".join(lines) + "."
    else:
        sections["assessment"] = "\n" + "\n".join(f"- {line}" for line in lines)
    sections["plan"] = " ".join(p.rstrip(".") + "." for p in plan)
    out = []
    for key in ORDERS[int(rand() * len(ORDERS))]:
        body = sections.get(key)
        if body is not None:
            heads = HEADERS[key]
            out.append(f"{heads[int(rand() * len(heads))]} {body}")
    return "\n".join(out)


def _negations(
    rng: random.Random,
    pools: _Pools,
    items: list[_Item],
    expected: set[str],
    mentioned: set[str],
    n: int,
) -> list[dict[str, Any]]:
    if n <= 0:
        return []
    # the positions of pools.negatable a note may not deny: what it mentions, what its
    # conditions make integral or leave uncertain, what it codes
    at_id, at_code = pools.negatable_at
    off = {at_id[x] for x in mentioned if x in at_id}
    for i in items:
        for x in i.prep.unsaid:
            if x in at_id:
                off.add(at_id[x])
    for code in expected:
        if code in at_code:
            off.update(at_code[code])
    chosen = grammar.sample_excluding(rng, pools.negatable, off, n)
    return [
        {
            "id": c["id"],
            "phrase": pick(rng, pools.negation_words(c)),
            "code": c["codes"][0],
        }
        for c in chosen
    ]


def _negation_words(pools: _Pools, c: dict[str, Any]) -> list[str]:
    """Lower-case wordings of a symptom for "denies ..." (no ICD-style title)."""
    words = [c["name"], *(pools.synonyms.get(c["id"]) or c["synonyms"])]
    ok = [s for s in words if s not in _NOT_NOUNS and not pools.is_title(s)]
    return [s for s in ok if s[:1].islower()] or ok or words


def _dedupe(codes: list[str]) -> list[str]:
    return list(dict.fromkeys(codes))


# --------------------------------------------------------------------------------------------
# case templates
# --------------------------------------------------------------------------------------------
def _case_easy(rng: random.Random, pools: _Pools) -> dict[str, Any]:
    roll = rng.random()
    new = rng.random() < 0.25
    plan: list[str] = []
    hpi_extra: list[str] = []
    cpt: list[str] = []
    rules = []
    if roll < 0.55:
        cond = pick(rng, pools.easy_acute)
        age, sex = _patient(rng, cond)
        item = _Item(pools, rng, cond)
        items = [item]
        em, doc = _em(pools, rng, items, new, age, hpi_extra)
        tests = [
            pools.procs[p] for p in cond.get("procedures", []) if pools.procs[p]["kind"] == "test"
        ]
        if tests and rng.random() < 0.5:
            t = pick(rng, tests)
            plan.append(_proc_text(rng, t, item))
            cpt.append(t["cpt"])
        plan.append(
            pick(rng,
                (
                    "Return precautions given.",
                    "Treatment plan reviewed with patient.",
                    "Questions answered; RTC if not improving.",
                    "F/u as needed.",
                )
            )
        )
        plan.append(doc)
        cpt.insert(0, em["cpt"])
        cc = pick(rng, cond["complaints"])
        rules.append(cond["rule"])
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            items,
            cpt,
            rules,
            plan,
            difficulty="easy",
            negations=pick(rng, (0, 0, 1)),
            hpi_extra=hpi_extra,
        )
    if roll < 0.75:
        cond = pick(rng, pools.easy_proc)
        age, sex = _patient(rng, cond)
        procs = [
            pools.procs[p]
            for p in cond["procedures"]
            if p in EASY_PROCS and _fits(pools.procs[p], age, sex)
        ]
        if not procs:
            return _case_easy(rng, pools)
        proc = pick(rng, procs)
        allow_bi = "50" in proc.get("laterality_modifiers", ["50"])
        item = _Item(pools, rng, cond, allow_bilateral=allow_bi)
        plan.append(_proc_text(rng, proc, item))
        plan.append(
            pick(rng, ("Tolerated well.", "No complications.", "Aftercare instructions given."))
        )
        cc = pick(rng, (f"scheduled procedure for {item.text}", f"procedure visit: {item.text}"))
        rules.append("procedure-only visit: no separate E/M")
        if proc.get("laterality_modifiers"):
            rules.append("procedure laterality modifier")
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            [item],
            [_proc_code(proc, item)],
            rules,
            plan,
            difficulty="easy",
            negations=0,
            procedure_only=True,
        )
    if roll < 0.9:
        adult = rng.random() < 0.6
        cond = pools.cat.by_id["wellness_adult" if adult else "wellness_child"]
        age, sex = _patient(rng, cond)
        item = _Item(pools, rng, cond)
        prev = _preventive_code(pools, age, new)
        plan.append(
            pick(rng,
                (
                    "Age-appropriate counseling and anticipatory guidance provided.",
                    "Screening recommendations reviewed; no abnormal findings.",
                    "Healthy lifestyle counseling given; exam normal.",
                )
            )
        )
        cc = pick(rng, cond["complaints"] + cond["synonyms"])
        rules.append("preventive visit code by age and new/established status")
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            [item],
            [prev["cpt"]],
            rules,
            plan,
            difficulty="easy",
            negations=pick(rng, (0, 1)),
            preventive=True,
        )
    cond = pick(rng, pools.solo)
    age, sex = _patient(rng, cond)
    item = _Item(pools, rng, cond)
    procs = [pools.procs[p] for p in cond.get("procedures", [])]
    if procs:
        plan.append(_proc_text(rng, procs[0], item))
        cpt = [procs[0]["cpt"]]
        rules.append("procedure-only visit: no separate E/M")
    else:
        em, doc = _em(pools, rng, [item], new, age, hpi_extra)
        plan.append(doc)
        cpt = [em["cpt"]]
    rules.append(cond["rule"])
    return _finish(
        rng,
        pools,
        age,
        sex,
        new,
        pick(rng, cond["complaints"]),
        [item],
        cpt,
        rules,
        plan,
        difficulty="easy",
        negations=0,
        procedure_only=bool(procs),
        hpi_extra=hpi_extra,
    )


def _case_medium(rng: random.Random, pools: _Pools) -> dict[str, Any]:
    new = rng.random() < 0.2
    rules = ["primary = reason for visit; coexisting conditions secondary"]
    plan: list[str] = []
    hpi_extra: list[str] = []
    cpt: list[str] = []
    if rng.random() < 0.15:
        cond = pools.cat.by_id["wellness_adult"]
        age, sex = _patient(rng, cond)
        items = [_Item(pools, rng, cond)]
        vac = _Item(pools, rng, pools.cat.by_id["flu_vaccination"])
        vac.role = "encounter"
        items.append(vac)
        prev = _preventive_code(pools, age, new)
        plan.append(_proc_text(rng, pools.procs["flu_vaccine_product"], None))
        admin = pools.procs["vaccine_admin"]
        plan.append(_proc_text(rng, admin, None))
        if payer_for(age) == "medicare":
            # Medicare pays flu administration under G0008, which NCCI does not pair with the
            # preventive visit: no modifier 25
            cpt = [prev["cpt"], admin["medicare"], "90656"]
            rules.append("Medicare: influenza vaccine administration is G0008")
        else:
            # NCCI pairs 90471 with 99381-99397 (modifier indicator 1): the visit carries 25
            cpt = [
                f"{prev['cpt']}-25" if admin["em_needs_modifier_25"] else prev["cpt"],
                admin["cpt"],
                "90656",
            ]
            rules.append("modifier 25 on a preventive visit with a same-day vaccine administration")
        rules.append("immunization: Z23 + administration + vaccine product")
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            pick(rng, ("annual physical", "yearly checkup")),
            items,
            cpt,
            rules,
            plan,
            difficulty="medium",
            negations=pick(rng, (0, 1)),
            preventive=True,
        )
    cond = pick(rng, pools.reason)
    age, sex = _patient(rng, cond)
    main = _Item(pools, rng, cond)
    main.role = "primary"
    items = [main]
    pool = pools.chronic_12 if age >= 12 else pools.chronic
    _add_coexisting(pools, rng, items, age, sex, pick(rng, (1, 2, 2, 3)), pool)
    _add_status(pools, rng, items, age, sex)
    em, doc = _em(pools, rng, [i for i in items if i.role != "status"], new, age, hpi_extra)
    cpt.append(em["cpt"])
    tests = [pools.procs[p] for p in cond.get("procedures", []) if pools.procs[p]["kind"] == "test"]
    if tests and rng.random() < 0.6:
        t = pick(rng, tests)
        plan.append(_proc_text(rng, t, main))
        cpt.append(t["cpt"])
    plan.append(
        pick(rng,
            (
                "Medication list reconciled.",
                "Problem list updated.",
                "Med rec done; allergies reviewed.",
                "Allergies and med list reviewed.",
                "Meds reconciled today.",
                "Problem list and medications reviewed.",
            )
        )
    )
    plan.append(doc)
    cc = pick(rng, cond["complaints"])
    if cond["kind"] == "chronic" and not new and rng.random() < 0.5:
        cc = pick(rng, (f"follow-up of {main.text}", f"f/u {main.text}",
                         f"recheck of {main.text}"))
    rules.append(cond["rule"])
    return _finish(
        rng,
        pools,
        age,
        sex,
        new,
        cc,
        items,
        cpt,
        rules,
        plan,
        difficulty="medium",
        negations=pick(rng, (0, 1, 2)),
        hpi_extra=hpi_extra,
    )


def _case_hard(rng: random.Random, pools: _Pools) -> dict[str, Any]:
    kind = pick(rng,
        (
            "combination",
            "combination",
            "injury",
            "injury",
            "uncertain",
            "uncertain",
            "procedure_em",
            "preventive_abnormal",
            "sequela",
            "history",
        )
    )
    new = rng.random() < 0.2
    plan: list[str] = []
    cpt: list[str] = []
    rules: list[str] = []
    hpi_extra: list[str] = []
    encounter_line = ""
    uncertain_lines: list[str] = []
    positives_extra: list[dict[str, Any]] = []
    if kind == "combination":
        cond = pick(rng, pools.combination)
        age, sex = _patient(rng, cond)
        main = _Item(pools, rng, cond)
        main.role = "primary"
        items = [main]
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (1, 2)), pools.chronic)
        _add_status(pools, rng, items, age, sex)
        if rng.random() < 0.5:
            _add_coexisting(pools, rng, items, age, sex, 1, pools.history_like)
        em, doc = _em(pools, rng, [i for i in items if i.role != "status"], new, age, hpi_extra)
        cpt.append(em["cpt"])
        plan.append(doc)
        cc = pick(rng, cond["complaints"])
        rules.append(cond["rule"])
    elif kind == "injury":
        cond = pick(rng, pools.injury)
        age, sex = _patient(rng, cond)
        seventh = pick(rng, cond["seventh"])
        procs = [pools.procs[p] for p in cond.get("procedures", [])] if seventh == "A" else []
        proc = pick(rng, procs) if procs and rng.random() < 0.8 else None
        allow_bi = False
        main = _Item(pools, rng, cond, seventh=seventh, allow_bilateral=allow_bi)
        main.role = "primary"
        items = [main]
        cause_codes = []
        if cond.get("external_causes"):
            cause = pools.cat.causes_by_id[pick(rng, cond["external_causes"])]
            cause_codes.append(with_seventh(cause["stem"], seventh))
            hpi_extra.append(pick(rng, ("Mechanism: {}.", "Per the patient: {}.",
                                        "How it happened: {}.")).format(
                pick(rng, cause["phrases"])))
            rules.append("external cause code, same 7th character, never primary")
        days = randint(rng, 0, 2) if seventh == "A" else randint(rng, 10, 42)
        when = ("today", "yesterday", "2 days ago")[days] if days <= 2 else f"{days} days ago"
        encounter_line = (
            pick(rng,
                (
                    f"Initial visit for this injury, sustained {when}; "
                    "active treatment today.",
                    f"First evaluation of the injury (sustained {when}).",
                )
            )
            if seventh == "A"
            else pick(rng,
                (
                    f"Follow-up visit {days} days after the injury; routine healing, "
                    "no new problems.",
                    f"Here for subsequent care of the injury from {days} days ago, "
                    "healing as expected.",
                )
                if not new
                else (
                    f"Injury {days} days ago, initially treated at urgent care; here to "
                    "continue routine healing care, no new problems.",
                    f"Seen in the ED {days} days ago for the injury; establishing care here "
                    "while it heals.",
                )
            )
        )
        rules.append(
            f"7th character {seventh} ({'initial' if seventh == 'A' else 'subsequent'} encounter)"
        )
        separate = rng.random() < 0.5
        if separate:
            _add_coexisting(
                pools,
                rng,
                items,
                age,
                sex,
                1,
                pools.reason_not_minor,
            )
        evaluated = list(items)
        if proc is not None:
            plan.append(_proc_text(rng, proc, main))
            cpt.append(_proc_code(proc, main))
            if proc.get("laterality_modifiers"):
                rules.append("procedure laterality modifier")
            if len(items) > 1:
                em, doc = _em(pools, rng, items[1:], new, age, hpi_extra, procedure_day=True)
                cpt.append(f"{em['cpt']}-25" if proc["em_needs_modifier_25"] else em["cpt"])
                plan.append(doc)
                plan.append("Separately identifiable E/M for the additional problem.")
                rules.append(
                    "modifier 25 on a separately identifiable E/M with a same-day procedure"
                )
            else:
                plan.append("Visit limited to evaluation and treatment of the injury.")
        else:
            em, doc = _em(pools, rng, evaluated, new, age, hpi_extra)
            cpt.append(em["cpt"])
            plan.append(doc)
        cc = pick(rng, cond["complaints"])
        items_codes_extra = cause_codes
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            items,
            cpt,
            rules,
            plan,
            difficulty="hard",
            negations=pick(rng, (1, 2, 3)),
            extra_codes=items_codes_extra,
            hpi_extra=hpi_extra,
            encounter_line=encounter_line,
            procedure_only=proc is not None and len(items) == 1,
        )
    elif kind == "uncertain":
        cond = pick(rng, pools.uncertain)
        age, sex = _patient(rng, cond)
        syms = [pools.cat.by_id[s] for s in cond["uncertain"]["symptoms"]]
        items = []
        for s in syms:
            it = _Item(pools, rng, s)
            it.role = "symptom"
            items.append(it)
        items[0].role = "primary"
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (0, 1, 2)), pools.chronic)
        positives_extra = syms
        term = pick(rng, cond["uncertain"]["terms"])
        uncertain_lines.append(
            f"{term}{grammar.status_suffix(rng, 'undiagnosed')}, {pick(rng, UNCERTAIN_PLANS)}"
        )
        em, doc = _em(pools, rng, [i for i in items if i.role != "symptom"], new, age, hpi_extra,
                      undiagnosed=True)
        cpt.append(em["cpt"])
        plan.append(doc)
        cc = pick(rng, syms[0]["synonyms"])
        rules.append("uncertain dx codes symptoms")
        # the symptom items are coded but written only as complaints, not as assessed diagnoses
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            items,
            cpt,
            rules,
            plan,
            difficulty="hard",
            negations=pick(rng, (1, 2, 3)),
            uncertain=uncertain_lines,
            positives_extra=positives_extra,
            symptoms_in_assessment=rng.random() < 0.5,
        )
    elif kind == "procedure_em":
        cond = pick(rng, pools.lateral_proc)
        age, sex = _patient(rng, cond)
        proc = pools.procs[
            pick(rng,
                [p for p in cond["procedures"] if pools.procs[p].get("laterality_modifiers")]
            )
        ]
        main = _Item(pools, rng, cond, allow_bilateral="50" in proc["laterality_modifiers"])
        main.role = "primary"
        items = [main]
        _add_coexisting(
            pools,
            rng,
            items,
            age,
            sex,
            1,
            pools.reason_problem_not_minor,
            besides=cond["id"],
        )
        if len(items) == 1:
            _add_coexisting(pools, rng, items, age, sex, 1, pools.chronic)
        other = items[1:]
        em, doc = _em(pools, rng, other, new, age, hpi_extra, procedure_day=True)
        plan.append(_proc_text(rng, proc, main))
        plan.append(
            f"Also evaluated: {', '.join(i.text for i in other)}; "
            "separately identifiable from the procedure."
        )
        plan.append(doc)
        cpt = [
            _proc_code(proc, main),
            f"{em['cpt']}-25" if proc["em_needs_modifier_25"] else em["cpt"],
        ]
        rules += [
            "procedure laterality modifier",
            "modifier 25 on a separately identifiable E/M with a same-day procedure",
        ]
        cc = pick(rng,
            (
                f"{pick(rng, cond['complaints'])}, here for procedure",
                f"scheduled treatment of {main.text}",
            )
        )
    elif kind == "preventive_abnormal":
        cond = pools.cat.by_id["wellness_adult_abnormal"]
        age, sex = _patient(rng, cond)
        main = _Item(pools, rng, cond)
        main.role = "primary"
        items = [main]
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (1, 1, 2)), pools.screen)
        for i in items[1:]:
            i.role = "finding"
        prev = _preventive_code(pools, age, new)
        cpt = [prev["cpt"]]
        plan.append("New finding(s) identified at this preventive exam; follow-up arranged.")
        rules += [
            "preventive encounter with abnormal finding (+ code the finding)",
            "preventive visit code by age and new/established status",
        ]
        cc = pick(rng, ("annual physical", "yearly wellness exam"))
        return _finish(
            rng,
            pools,
            age,
            sex,
            new,
            cc,
            items,
            cpt,
            rules,
            plan,
            difficulty="hard",
            negations=pick(rng, (1, 2)),
            preventive=True,
        )
    elif kind == "sequela":
        cond = pick(rng, pools.sequela)
        age, sex = _patient(rng, cond)
        main = _Item(pools, rng, cond)
        main.role = "primary"
        items = [main]
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (0, 1)), pools.chronic)
        em, doc = _em(pools, rng, items, new, age, hpi_extra)
        cpt.append(em["cpt"])
        plan.append(doc)
        hpi_extra.append(
            "The original injury healed months ago; today's concern is the residual effect."
        )
        rules.append(cond["rule"])
        cc = pick(rng, cond["complaints"])
    else:  # history vs current
        cond = pick(rng, pools.reason_acute)
        age, sex = _patient(rng, cond)
        main = _Item(pools, rng, cond)
        main.role = "primary"
        items = [main]
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (1, 2)), pools.history_like)
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (0, 1)), pools.chronic)
        em, doc = _em(pools, rng, [i for i in items if i.role != "history"], new, age, hpi_extra)
        cpt.append(em["cpt"])
        plan.append(doc)
        rules.append("history of vs current")
        cc = pick(rng, cond["complaints"])
    for i in items:
        if i.role == "coexisting" and i.cond["kind"] in ("history", "status"):
            i.role = "history"
    return _finish(
        rng,
        pools,
        age,
        sex,
        new,
        cc,
        items,
        cpt,
        rules,
        plan,
        difficulty="hard",
        negations=pick(rng, (1, 2, 3)),
        hpi_extra=hpi_extra,
        encounter_line=encounter_line,
    )


def _finish(
    rng: random.Random,
    pools: _Pools,
    age: int,
    sex: str,
    new: bool,
    cc: str,
    items: list[_Item],
    cpt: list[str],
    rules: list[str],
    plan: list[str],
    *,
    difficulty: str,
    negations: int,
    extra_codes: list[str] | None = None,
    hpi_extra: list[str] | None = None,
    encounter_line: str = "",
    uncertain: list[str] | None = None,
    positives_extra: list[dict[str, Any]] | None = None,
    procedure_only: bool = False,
    preventive: bool = False,
    symptoms_in_assessment: bool = False,
) -> dict[str, Any]:
    codes: list[str] = []
    for i in items:
        codes.extend(i.codes)
    codes.extend(extra_codes or [])
    codes = _dedupe(codes)
    expected = set(codes)
    if "{" in cc:  # a complaint written with the primary condition's variant words
        cc = _render(rng, cc, items[0].variant)
    if new and _may_match(cc, _FOLLOW_UP_OPEN):  # a new patient establishes care: nothing
        m = _FOLLOW_UP.search(cc)  # to follow up here
        if m:
            rest = (cc[: m.start()] + cc[m.end():]).strip()
            cc = f"establishing care for {rest}"
    positives: list[dict[str, Any]] = list(positives_extra or [])
    for i in items[:1]:
        for sid in i.cond.get("integral", []):
            s = pools.cat.by_id[sid]
            if (all(s is not p for p in positives) and s["codes"][0] not in expected
                    and rng.random() < 0.6):
                positives.append(s)
    note_items = []
    hidden = []
    for it in items:
        if (
            it.cond["kind"] == "symptom"
            and "variants" not in it.cond
            and not symptoms_in_assessment
            # a coder codes an elevated reading only from the provider's statement of it,
            # never from a vitals line: it stays in the assessment
            and it.cond["id"] != "sx_elevated_bp"
        ):
            it.role = "symptom_hidden"
            hidden.append(it.cond["id"])
        else:
            note_items.append(it)
    mentioned = {p["id"] for p in positives}
    negated = _negations(rng, pools, items, expected, mentioned, negations)
    note = _build_note(
        rng,
        pools,
        age=age,
        sex=sex,
        new=new,
        cc=cc,
        items=note_items,
        hpi_extra=hpi_extra or [],
        positives=positives,
        negated=negated,
        uncertain=uncertain or [],
        plan=plan,
        encounter_line=encounter_line,
        distractors=randint(rng, 0, 3),
        hidden=tuple(hidden),
    )
    payer = payer_for(age)
    lines = PAYER_LINES[payer]  # a checksum of the note picks the wording: no rng draw
    note += "\n" + lines[zlib.crc32(note.encode()) % len(lines)]
    cpt_codes = _dedupe(cpt)
    accept = _accept(pools, items, codes, cpt_codes, note, payer)
    rules_out = rules + [i.cond["rule"] for i in items if i.role != "primary"]
    if negated:
        rules_out.append("negated findings are not coded")
    if positives:
        integral = {s for i in items for s in i.cond.get("integral", ())}
        if any(p["id"] in integral for p in positives):
            rules_out.append("symptom integral to dx not coded")
    return {
        "patient_age": age,
        "patient_sex": sex,
        "clinical_note": note,
        "difficulty": difficulty,
        "expected": {
            "primary_icd10": codes[0],
            "secondary_icd10s": codes[1:],
            "cpt_codes": cpt_codes,
        },
        "accept": accept,
        "rules": _dedupe(rules_out),
        "negated": [{"phrase": n["phrase"], "code": n["code"]} for n in negated],
        "new_patient": new,
        "visit": "procedure" if procedure_only else "preventive" if preventive else "problem",
        "payer": payer,
    }


def payer_for(age: int) -> str:
    """The payer the note states: Medicare from 65, a commercial plan below."""
    return "medicare" if age >= MEDICARE_AGE else "commercial"


def _accept(
    pools: _Pools,
    items: list[_Item],
    codes: list[str],
    cpt: list[str],
    note: str,
    payer: str,
) -> dict[str, Any]:
    """The codes a competent coder may defensibly submit instead of the expected ones.

    ``primary_icd10``: codes any of which may be listed first (a sequencing-free pair), the
    expected primary included; ``icd10``/``cpt``: expected code -> equivalent codes that score as
    it; ``optional_icd10`` (code prefixes) and ``optional_cpt``: codes that neither add nor cost.
    Only the kinds that apply are present ({} for most cases).
    """
    out: dict[str, Any] = {}
    present = frozenset(codes)
    alt_ids = pools.alt_conditions
    for n, it in enumerate(items):
        cond = it.cond
        if cond["id"] not in alt_ids:
            continue
        free = cond.get("sequence_free")
        if n == 0 and free and codes[0] in free:
            out["primary_icd10"] = [c for c in free if c in present]
        for alt in cond.get("alternatives", ()):
            if alt["code"] in it.codes and (
                not alt.get("phrases") or it.synonym in alt["phrases"]
            ):
                extra = [a for a in alt["accept"] if a not in present]
                if extra:
                    out.setdefault("icd10", {}).setdefault(alt["code"], []).extend(extra)
        digits = cond.get("digit_modifiers")
        if digits and it.side in digits:
            own = {pools.procs[p]["cpt"] for p in cond.get("procedures", [])}
            mod, digit = SIDE_MOD[it.side], digits[it.side]
            for code in cpt:
                base, *mods = code.split("-")
                if base in own and mod in mods:
                    swapped = "-".join([base, *[digit if m == mod else m for m in mods]])
                    out.setdefault("cpt", {}).setdefault(code, []).append(swapped)
    if grammar.starts(codes, ("S", "T")):
        out["optional_icd10"] = list(OPTIONAL_EXTERNAL_CAUSE)  # place, activity, status (I.C.20)
        for code in codes:  # an External Cause Index path the mechanism's words also fit
            for phrases, stems in pools.cause_alternatives.get(code[:-1], ()):
                extra = [x for x in (with_seventh(s, code[-1]) for s in stems)
                         if x not in present]
                if extra and any(ph in note for ph in phrases):
                    out.setdefault("icd10", {}).setdefault(code, []).extend(extra)
    for it in items:  # an E/M whose level time and MDM set differently: either is right
        if it.em_alt is not None:
            em_code, other = it.em_alt
            for code in cpt:
                base, *mods = code.split("-")
                if base == em_code:
                    out.setdefault("cpt", {}).setdefault(code, []).append(
                        "-".join([other, *mods]))
    alt_cpt = pools.alt_procedures
    for code in cpt:
        proc = alt_cpt.get(code.partition("-")[0])
        if proc is None:
            continue
        base, *mods = code.split("-")
        forms = []
        if proc.get("clia_waived"):
            forms.append("-".join([base, *sorted({*mods, "QW"})]))
        if proc.get("bilateral_without_50") and "50" in mods:
            forms.append("-".join([base, *[m for m in mods if m != "50"]]))
        elif proc.get("bilateral_without_50") and ("RT" in mods or "LT" in mods):
            # bilateral indicator 2: the RVUs already cover one side or both, so a side
            # modifier is informational and the plain code is as defensible
            forms.append("-".join([base, *[m for m in mods if m not in ("RT", "LT")]]))
        if payer == "medicare" and proc["kind"].startswith("preventive"):
            forms.append("-".join([base, *sorted({*mods, "GY"})]))
        if forms:
            out.setdefault("cpt", {}).setdefault(code, []).extend(forms)
        supply = proc.get("optional_supply")
        if supply and supply["when"] in note and supply["code"] not in out.get("optional_cpt", ()):
            out.setdefault("optional_cpt", []).append(supply["code"])
    return out


_BUILDERS = {"easy": _case_easy, "medium": _case_medium, "hard": _case_hard}


def generate_case(
    rng: random.Random, ref: Any, difficulty: str, split: str = "train"
) -> dict[str, Any]:
    """One case of ``difficulty`` drawn with ``rng`` (the only source of randomness).

    With probability :data:`TIER2_SHARE` the case is a tier-2 case (:mod:`.tier2`) whose
    primary code and wording come from ``split``'s share of the tabular pool; otherwise a
    curated-catalog case. ``split`` is train/dev/test (seeds outside the splits use train)."""
    if difficulty not in _BUILDERS:
        raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {difficulty!r}")
    if split not in tier2.SPLIT_NAMES:
        raise ValueError(f"split must be one of {tier2.SPLIT_NAMES}, got {split!r}")
    pools = _pools(ref)
    if rng.random() < TIER2_SHARE:
        case = _case_tier2(rng, pools, difficulty, split)
        case["tier"] = 2
    else:
        case = _BUILDERS[difficulty](rng, pools)
        case["tier"] = 1
    return case


def generate_episode(seed: int, ref: Any, rng: random.Random | None = None) -> dict[str, Any]:
    """Three cases (easy, medium, hard) in a seeded random order, byte-identical in any process.

    ``rng``: the episode's stream when the caller already seeded it (``compile_scenario``'s
    fresh ``rng_for(task, seed)`` is the same stream, so it is not seeded twice); default
    ``rng_for(TASK, seed)``."""
    if rng is None:
        rng = rng_for(TASK, seed)
    order = grammar.sample(rng, DIFFICULTIES, 3)
    split = split_of(seed, TASK) or "train"
    return {"seed": seed, "order": order,
            "cases": [generate_case(rng, ref, d, split) for d in order]}


# --------------------------------------------------------------------------------------------
# tier 2: codes from the tabular
# --------------------------------------------------------------------------------------------
TIER2_SHARE = 0.45  # share of cases built from the tabular pool
TIER2_HELD_OUT = 0.8  # share of dev/test tier-2 cases whose code never occurs in train
# complaints by (problem kind, new patient): a chronic condition comes to a new practice already
# diagnosed (referred, establishing care); a condition threatening bodily function is a same-day
# presentation, never a routine follow-up
_T2_CC = {
    ("acute", True): ("evaluation of {p}", "new diagnosis: {p}"),
    ("acute", False): ("{p}", "f/u {p}", "recheck of {p}", "{p} check"),
    ("chronic_stable", True): ("{p}, referred for management", "establishing care for {p}"),
    ("chronic_stable", False): ("f/u {p}", "recheck of {p}", "{p} check"),
    ("severe", True): ("evaluation of {p}", "same-day visit for {p}"),
    ("severe", False): ("same-day visit for {p}", "urgent visit: {p}"),
}
_T2_FINDINGS = ("findings consistent with {p}", "exam supports {p}",
                "documented findings of {p}", "objective findings c/w {p}")


_T2_CONDITIONS: dict[tuple[str, int], dict[str, Any]] = {}


def _t2_condition(entry: dict[str, Any], phrases: list[str]) -> dict[str, Any]:
    """A catalog-shaped condition for one tier-2 code and its phrasings in this split (built
    once per process; read-only like the catalog's own conditions)."""
    key = (entry["code"], id(phrases))
    got = _T2_CONDITIONS.get(key)
    if got is None or got["synonyms"] is not phrases:
        got = _T2_CONDITIONS[key] = _t2_condition_uncached(entry, phrases)
    return got


def _t2_condition_uncached(entry: dict[str, Any], phrases: list[str]) -> dict[str, Any]:
    code = entry["code"]
    return {
        "id": f"t2:{code}",
        "name": phrases[0],
        "kind": "chronic" if entry["kind"] == "chronic_stable" else "acute",
        "codes": [code],
        "synonyms": phrases,
        "findings": [f.replace("{p}", p) for f in _T2_FINDINGS for p in phrases],
        "rule": "tier 2: code found from the tabular (title or inclusion term)",
        "sex": entry["sex"],
        "age": entry["age"],
        # a code the 'with' convention joins to diabetes clashes with every diabetes row, and
        # one coding a catalog row's disease (M05 beside the catalog's M06.9) with that row
        "groups": [f"t2:{code}", *tier2.clash_groups(code)],
        "problem": entry["kind"],
        "complaints": [],
    }


def _case_tier2(rng: random.Random, pools: _Pools, difficulty: str, split: str) -> dict[str, Any]:
    held, shared = pools.tier2_split(split)
    pool = held if held and (not shared or rng.random() < TIER2_HELD_OUT) else shared
    entry, phrases = pick(rng, pool)
    cond = _t2_condition(entry, phrases)
    age, sex = _patient(rng, cond)
    new = rng.random() < 0.25
    main = _Item(pools, rng, cond)
    main.role = "primary"
    items = [main]
    cc = pick(rng, _T2_CC.get((entry["kind"], new), _T2_CC[("acute", new)])).replace(
        "{p}", main.text)
    rules = [cond["rule"]]
    hpi_extra: list[str] = []
    if difficulty != "easy":
        rules.append("primary = reason for visit; coexisting conditions secondary")
        chronic = pools.chronic_12 if age >= 12 else pools.chronic
        _add_coexisting(pools, rng, items, age, sex, pick(rng, (1, 2)), chronic)
        if difficulty == "hard":
            _add_status(pools, rng, items, age, sex)
            _add_coexisting(pools, rng, items, age, sex, 1, pools.history_like)
        # Excludes1: a coexisting code the tabular says may not be reported with the primary
        items = [main] + [
            i for i in items[1:]
            if not any(pools.excludes1(main.codes[0], c) for c in i.codes)
        ]
        owners = {i.cond["id"] for i in items}
        items = [i for i in items
                 if i.role != "status" or owners.intersection(i.cond.get("requires_any", ()))]
        for i in items:
            if i.role == "coexisting" and i.cond["kind"] in ("history", "status"):
                i.role = "history"
    em_proc, doc = _em(pools, rng, [i for i in items if i.role not in ("status", "history")],
                       new, age, hpi_extra)
    plan = [doc]
    return _finish(rng, pools, age, sex, new, cc, items, [em_proc["cpt"]], rules, plan,
                   difficulty=difficulty, negations=pick(rng, (0, 1, 2)), hpi_extra=hpi_extra)
