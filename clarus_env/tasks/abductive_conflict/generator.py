"""Scenarios for abductive_conflict: a claim with two codes on one date of service, one line
denied as bundled (CO-97 or CO-236 with a bundling RARC). The insurer's claim record and EOB
both say "bundled"; the NCCI PtP table and the provider's documentation decide whether that
is right.

Code pairs are drawn from the bundle's real practitioner PtP table: every pair of codes in
three families (an office visit with a same-day service, two procedures that can share a
site, two therapy services) is classified by the table — active edit with modifier indicator
0 or 1, deleted edit, or never listed — and assigned to a train/dev/test pool by a SHA-256
of the pair, so dev/test pairs never occur in train. The clinical notes are built from the
family templates in ``catalog.py`` (sites, measurements, diagnoses validated billable, E/M
level matched to what the visit managed).

Branches (what the agent must conclude, from the edit *and* the notes):

- ``a0`` active edit, indicator 0: no modifier can bypass it, so the denial is legitimate
  whatever the claim's modifiers or the notes say (an appended 59/25 is an unbundling attempt).
- ``b``  indicator 1, a bypass modifier on the claim, and the notes document a distinct
  service (another site/lesion/interval, or a visit that managed a separate problem): appeal
  ``modifier_bypass_documented`` (insurer).
- ``a1m`` indicator 1 and a bypass modifier, but the notes show the same site/lesion/interval
  or a visit that was only what the service includes (the evaluation before a minor procedure,
  a scheduled drug administration or test with no new complaints): the denial stands.
- ``c``  indicator 1, distinct service documented, no modifier: the provider must send a
  corrected claim (``missing_modifier``).
- ``a1n`` indicator 1, no modifier, nothing distinct: the denial stands.
- ``d``  no active edit (deleted or never listed): the insurer applied an edit that does not
  exist, appeal ``no_active_edit`` whatever the modifiers or notes.

Balance: the seeds of each split are ranked by a SHA-256 of the seed and the branches take
their exact shares (``SHARES``) in rank order (``_split_branches``): d and a0, which the lookup
alone decides, are small; the four indicator-1 cells are equal. No seed tells anything about
its neighbours and no visible id holds the seed. Every claim line points to every diagnosis;
the family drawn per branch follows ``BRANCH_FAMILIES``; in train, the paid and denied codes
of therapy pairs have the same distribution under every edit status (``_balanced``), so
neither the codes, the modifiers nor the pointers predict the outcome much better than the
modal class. Whether the notes document a distinct service is always a relation between two
fields written in one vocabulary (a date against the date of service, two distances from a
landmark, two sides, two clock intervals), never a word that only one story uses.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
import string
from typing import Any

from ...scenario import scenario_salt
from ...splits import seeds, split_of
from ..common import (
    INSURERS,
    carc_text,
    cents,
    code_reference,
    cost_share,
    deadline,
    describe,
    dollars,
    fee_basis,
    fee_cents,
    ident,
    iso,
    ncci_reference,
    npi,
    pct_of,
    person,
    pick_locality,
    plan_document,
    rarc_text,
    regulation,
)
from ..common import weighted_choice as _weighted
from ..us_calendar import is_business_day
from . import catalog as cat

TASK = "abductive_conflict"
BRANCHES = ("a0", "b", "a1m", "c", "a1n", "d")
FINDINGS = ("legitimate_denial", "modifier_bypass_ignored", "missing_modifier",
            "no_active_edit")
# the reason a filing states: an appeal's ground, or the corrected claim's missing modifier
APPEAL_REASONS = ("modifier_bypass_documented", "no_active_edit", "missing_modifier",
                  "medical_necessity")
OUTCOME = {  # branch -> (finding, responsible_party, resolution_type, appeal_reason)
    "a0": ("legitimate_denial", "none", "no_action", "none"),
    "a1m": ("legitimate_denial", "none", "no_action", "none"),
    "a1n": ("legitimate_denial", "none", "no_action", "none"),
    "b": ("modifier_bypass_ignored", "insurer", "appeal", "modifier_bypass_documented"),
    "c": ("missing_modifier", "provider", "corrected_claim_request", "missing_modifier"),
    "d": ("no_active_edit", "insurer", "appeal", "no_active_edit"),
}
# branch shares, in per mille. The edit alone decides d and a0, so they are kept small: an
# agent that reads only the NCCI lookup and the claim's modifiers beats the modal class
# (legitimate denial) by exactly d's share, in every outcome field and in the pass rate. The
# four indicator-1 cells (modifier on the claim yes/no x distinct service documented yes/no)
# are equal, so inside indicator 1 only the notes decide
# (round 5: an edit-only agent passes the modal share plus d's, and the pass bar is the modal
# share + 0.05: at d = 4% the boosted-tree shortcuts crossed the bar by chance alone (0.01 of
# headroom; 0.548-0.584 over four regenerations of test), so d is 3.2%, leaving about 0.02.
# Legitimate denial is a0 plus half of the rest, under half of every split only while a0 < d.
# So the lookup alone can decide at most ~6% of a split, and the heuristic without the NCCI
# lookup loses about that much whatever the generator does)
SHARES = (("b", 235), ("a1m", 235), ("c", 235), ("a1n", 235), ("d", 32), ("a0", 28))
STATUS = {"a0": "0", "b": "1", "a1m": "1", "c": "1", "a1n": "1", "d": "none"}
DENIALS = (("97", "M15"), ("97", "N19"), ("97", "N20"), ("236", "N20"), ("236", "M15"))
MARKUPS = (150, 175, 200, 225, 250, 300)  # chargemaster as % of the MPFS fee
DEDUCTIBLE_MET_PCT = (0, 30, 60, 100)
# the practice's name is drawn from its specialty (a dermatology name never bills an IV
# infusion, an internal-medicine name never does orthopedic injections)
PRACTICE_NAMES: dict[str, tuple[str, ...]] = {
    "family medicine": ("Riverside Family Medicine", "Hillcrest Primary Care",
                        "Cedar Grove Family Practice", "Prairie Family Health Associates"),
    "dermatology": ("Summit Dermatology", "Clearwater Skin & Dermatology",
                    "Northgate Dermatology Associates"),
    "orthopedics": ("Lakeview Orthopedics", "Granite Bone & Joint Orthopedics",
                    "Westfield Orthopedic Associates"),
    "sports medicine": ("Metro Sports Medicine", "Peak Sports Medicine Clinic",
                        "Eastside Sports Medicine Center"),
    "urgent care": ("Bayview Urgent Care", "Crossroads Urgent Care",
                    "Harbor Walk-In Urgent Care"),
    "podiatry": ("Stepwell Foot & Ankle Podiatry", "Meadowbrook Podiatry",
                 "Northside Foot & Ankle Center"),
    "pain medicine": ("Cornerstone Pain Management", "Valley Interventional Pain Medicine",
                      "Northside Pain & Spine Medicine"),
    "physical therapy": ("Keystone Physical Therapy", "Motion Rehab & Physical Therapy",
                         "Riverbend Spine and Sports Physical Therapy"),
}
# the earlier visit of the distractor claim, as the practice bills it: a physical therapist
# bills an evaluation or a treatment code, never an office E/M
PRIOR_CODES: dict[str, tuple[str, ...]] = {"physical therapy": ("97161", "97162", "97110")}
PRIOR_E_M = ("99212", "99213")
CODE_CHARS = string.ascii_uppercase + string.digits
PLAN_MONEY = ("deductible", "copay_primary_care", "copay_specialist", "copay_urgent_care",
              "copay_emergency", "oop_max")
PRICED_GLOBALS = ("000", "010", "XXX")  # no add-on (ZZZ) or major-surgery global codes
SPLIT_NAMES = ("train", "dev", "test")

# (the paid line is "processed", not "paid for": its plan payment may be $0.00, all of it
# applied to the deductible; domain review round 9, 21 of 160 complaints)
COMPLAINTS = (
    "My insurance statement for claim {claim} says the {denied} from my {dos} visit {was} "
    "'bundled' and they paid nothing for {it_obj}. {provider} says the insurance company got it "
    "wrong. I don't know who to believe or whether I'll end up owing ${billed}.",
    "I got an explanation of benefits for claim {claim} showing ${billed} denied for the "
    "{denied} on {dos}. It says {it_was} included in another service. Is that right? Am I "
    "going to be billed for it?",
    "Claim {claim}: my insurer processed the {paid} but denied the {denied} from {dos} as "
    "bundled. The doctor's office told me to call the insurer and the insurer told me to "
    "call the doctor's office. Can someone sort this out?",
    "The {denied} I had on {dos} {was} denied on claim {claim} with a code saying {it} "
    "not paid separately. {provider} says it was a separate service. I can't afford another "
    "${billed} bill.",
    "Why did {insurer} refuse to pay for part of my {dos} visit on claim {claim}? The "
    "statement shows ${billed} held for the {denied}. Do I owe this?",
)


def _plural(lay: str) -> bool:
    """Whether a service's lay words name a plural thing ("stitches on my face", "trigger
    point injections", "IV fluids", "therapeutic activities"), for the verb that agrees with
    them (domain review round 9: "the stitches I had ... was denied")."""
    head = lay.split(" on ")[0].split()[-1]
    return head.endswith("s") and not head.endswith("ss")


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _shares(options: tuple[tuple[str, int], ...], n: int) -> list[str]:
    """``n`` branches in the per-mille proportions of ``options`` (as exact as n allows),
    in option order."""
    total = sum(w for _, w in options)
    out: list[str] = []
    for j in range(n):
        x = (2 * j + 1) * total // (2 * n)
        for name, w in options:
            if x < w:
                out.append(name)
                break
            x -= w
    return out


def _split_branches(split: str) -> dict[int, str]:
    """The branch of every seed of ``split``: the seeds ranked by a SHA-256 of the seed, the
    branches taking their exact shares in rank order. So every split has the designed branch
    shares, and one seed's branch says nothing about its neighbours' (the ranking is a hash
    of each seed, not of its position)."""
    ranked = sorted(seeds(split, TASK), key=lambda s: _sha(_rank_key(s)))
    return dict(zip(ranked, _shares(SHARES, len(ranked)), strict=True))


_BRANCHES: dict[str, dict[int, str]] = {}
_LAYOUTS: dict[str, dict[int, tuple[str, bool]]] = {}


def _split_layout(split: str) -> dict[int, tuple[str, bool]]:
    """The family of every seed of ``split`` and whether its paid line is billed first: the
    seeds of each branch ranked by a second SHA-256, the families taking their exact shares
    (``BRANCH_FAMILIES``) in rank order and the line order alternating within each family.
    So the four indicator-1 cells hold the same families, each in both line orders, in every
    split: a table from the claim's family, modifiers and denied line to the answer has
    nothing to learn, not even a split's chance imbalance (round 3's red team: such a table
    passed 0.568 on test where the cells drew their families at random)."""
    out: dict[int, tuple[str, bool]] = {}
    by_branch: dict[str, list[int]] = {}
    for seed, branch in _split_branches(split).items():
        by_branch.setdefault(branch, []).append(seed)
    for branch, members in by_branch.items():
        ranked = sorted(members, key=lambda x: _sha(_rank_key(x) + ":family"))
        fams = _shares(BRANCH_FAMILIES[branch], len(ranked))
        count: dict[str, int] = {}
        for seed, fam in zip(ranked, fams, strict=True):
            count[fam] = count.get(fam, 0) + 1
            out[seed] = (fam, count[fam] % 2 == 1)
    return out


# the business days a date of service is drawn from (2026, after mid-February: every EOB,
# and the 180-day appeal window, fall inside the year)
SERVICE_DAYS = tuple(d for d in (dt.date(2026, 2, 16) + dt.timedelta(days=k) for k in range(150))
                     if is_business_day(d))
_SLOTS: dict[str, dict[int, tuple[int, int]]] = {}


def _date_slot(seed: int) -> tuple[int, int] | None:
    """The seed's rank and the count of seeds in its (branch, family) cell of its split,
    ranked by a third SHA-256; None outside every split. The date of service is drawn in the
    rank's share of ``SERVICE_DAYS`` (a stratified draw), so every cell spreads its dates of
    service alike over the months and the days of the month: a split's chance imbalance no
    longer lets a date of service's month or day stand in for the branch (round 7: train's
    office visits that were not distinct had 40 dates of service by the 10th against 29, and
    dev's and test's leaned the same way by chance; a (month, entry month) table learned it)."""
    split = split_of(seed, TASK)
    if split is None:
        return None
    key = f"{split}:{scenario_salt()}"
    if key not in _SLOTS:
        if key not in _BRANCHES:
            _BRANCHES[key] = _split_branches(split)
        if key not in _LAYOUTS:
            _LAYOUTS[key] = _split_layout(split)
        cells: dict[tuple[str, str], list[int]] = {}
        for s, branch in _BRANCHES[key].items():
            cells.setdefault((branch, _LAYOUTS[key][s][0]), []).append(s)
        slots: dict[int, tuple[int, int]] = {}
        for members in cells.values():
            ranked = sorted(members, key=lambda x: _sha(_rank_key(x) + ":date"))
            slots.update((s, (i, len(ranked))) for i, s in enumerate(ranked))
        _SLOTS[key] = slots
    return _SLOTS[key][seed]


def _service_date(seed: int, rng: random.Random) -> dt.date:
    """The date of service: a business day (no weekend or federal holiday: domain review),
    uniform over ``SERVICE_DAYS``; within a split, in the seed's stratum (``_date_slot``)."""
    slot = _date_slot(seed)
    if slot is None:
        return rng.choice(SERVICE_DAYS)
    i, n = slot
    return SERVICE_DAYS[min(len(SERVICE_DAYS) - 1,
                            int((i + rng.random()) * len(SERVICE_DAYS) / n))]


def layout_of(seed: int, rng: random.Random, branch: str) -> tuple[str, bool]:
    """The seed's family and line order: fixed by its split's layout (above); a seed outside
    every split draws both from ``rng``."""
    split = split_of(seed, TASK)
    if split is None:
        return _weighted(rng, BRANCH_FAMILIES[branch]), rng.random() < 0.5
    key = f"{split}:{scenario_salt()}"
    if key not in _LAYOUTS:
        _LAYOUTS[key] = _split_layout(split)
    return _LAYOUTS[key][seed]


def branch_of(seed: int, rng: random.Random) -> str:
    """The seed's branch: fixed by its split's ranking (above); a seed outside every split
    draws its branch from ``rng`` with the same shares."""
    split = split_of(seed, TASK)
    if split is None:
        return _weighted(rng, SHARES)
    key = f"{split}:{scenario_salt()}"
    if key not in _BRANCHES:
        _BRANCHES[key] = _split_branches(split)
    return _BRANCHES[key][seed]


def _rank_key(seed: int) -> str:
    """What a seed's rank hashes: with a private salt set, the salt too, so a salted set's
    branches cannot be read off the public splits seed by seed."""
    salt = scenario_salt()
    return f"{TASK}:half:{seed}" + (f":salt:{salt}" if salt else "")


def pair_split(index: int) -> str:
    """The split of the pair ranked ``index`` (by SHA-256 of the pair) in its pool: the
    first two go to test and dev so that every pool reaches both, then 4 of every 6 to
    train, one to dev, one to test."""
    if index < 2:
        return ("test", "dev")[index]
    r = (index - 2) % 6
    return "dev" if r == 4 else "test" if r == 5 else "train"
# -- bundle-derived data, cached per reference bundle ------------------------------------
_CACHE: dict[Any, dict[str, Any]] = {}


def _bundle_key(ref: Any) -> Any:
    """What identifies a bundle's content: its path and the sha256 of every table. Keyed by
    content rather than by ``id(ref)`` so that ``compile_scenario`` without a reference (a
    fresh ReferenceBundle per call) reuses the work and keeps one bundle object alive per
    content, not one per call."""
    outputs = getattr(ref, "manifest", {}).get("outputs")
    if not outputs:
        return ("object", id(ref))
    return (str(getattr(ref, "path", "")), getattr(ref, "release", ""),
            tuple(sorted((name, o.get("sha256")) for name, o in outputs.items())))


class _Memo:
    """A memoizing view of a ReferenceBundle for the few lookups this generator makes.

    Every row it returns is the bundle's own; it only remembers answers, so that compiling
    with a freshly opened bundle (``compile_scenario`` without a reference) never has to
    re-read a table this process has already read for the same bundle content."""

    def __init__(self, ref: Any) -> None:
        self._ref = ref
        self._memo: dict[tuple[Any, ...], Any] = {}
        self.release = ref.release
        # filled once per bundle by ``_build_pools``: every PtP row between two family codes
        # and every office fee of a family code, read in one vectorized pass each, so that
        # compiling an unseen seed never slices the big tables
        self.ptp_codes: frozenset[str] = frozenset()
        self.ptp_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.fee_codes: frozenset[str] = frozenset()
        self.fees: dict[tuple[str, str, str], Any] = {}

    def preload(self, codes: list[str], rows: dict[tuple[str, str], list[dict[str, Any]]]
                ) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self.ptp_codes, self.ptp_rows = frozenset(codes), rows
        table = self._ref.table("fee_schedule")
        mask = pc.and_(pc.is_in(table["hcpcs"], value_set=pa.array(sorted(codes))),
                       pc.equal(table["modifier"], ""))
        part = table.filter(mask).select(["hcpcs", "mac", "locality", "nonfac_amount"])
        self.fees = {(h, m, lo): amount for h, m, lo, amount in zip(
            *(part.column(c).to_pylist() for c in part.column_names), strict=True)}
        self.fee_codes = frozenset(codes)

    def _get(self, name: str, *args: Any, **kwargs: Any) -> Any:
        key = (name, args, tuple(sorted(kwargs.items())))
        if key not in self._memo:
            self._memo[key] = getattr(self._ref, name)(*args, **kwargs)
        return self._memo[key]

    def rvu(self, hcpcs: str, modifier: str = "") -> Any:
        return self._get("rvu", hcpcs, modifier)

    def fee(self, hcpcs: str, mac: str, locality: str, *, modifier: str = "",
            facility: bool = False) -> Any:
        if not modifier and not facility and hcpcs in self.fee_codes:
            return self.fees.get((hcpcs, mac.zfill(5), locality.zfill(2)))
        return self._get("fee", hcpcs, mac, locality, modifier=modifier, facility=facility)

    def locality(self, mac: str, locality: str) -> Any:
        return self._get("locality", mac, locality)

    def localities(self) -> Any:
        return self._get("localities")

    def describe(self, code: str) -> Any:
        return self._get("describe", code)

    def mue(self, hcpcs: str) -> Any:
        return self._get("mue", hcpcs)

    def carc(self, code: str) -> Any:
        return self._get("carc", code)

    def rarc(self, code: str) -> Any:
        return self._get("rarc", code)

    def icd10cm(self, code: str) -> Any:
        return self._get("icd10cm", code)

    def table(self, name: str) -> Any:
        return self._ref.table(name)

    def plans(self) -> Any:
        return self._get("plans")

    def ncci_edit(self, column_1: str, column_2: str) -> Any:
        rows = self.ncci_edits(column_1, column_2)
        return rows[-1] if rows else None

    def ncci_edits(self, column_1: str, column_2: str | None = None, *,
                   active_only: bool = True) -> Any:
        if column_2 is not None and {column_1, column_2} <= self.ptp_codes:
            rows = self.ptp_rows.get((column_1, column_2), [])
            return [r for r in rows if r["deletion_date"] is None or not active_only]
        return self._get("ncci_edits", column_1, column_2, active_only=active_only)




def _scan_ptp(ref: Any, codes: list[str]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every PtP row (active or deleted) between two of ``codes``: one vectorized pass over
    the table's two code columns, then only the matching rows are converted."""
    table = ref.table("ncci_ptp")
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pa.array(sorted(codes))
    mask = pc.and_(pc.is_in(table["column_1"], value_set=values),
                   pc.is_in(table["column_2"], value_set=values))
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in table.filter(mask).to_pylist():
        rows.setdefault((r["column_1"], r["column_2"]), []).append(r)
    return rows


def _classify(rows: dict[tuple[str, str], list[dict[str, Any]]], a: str, b: str,
              component: dict[str, float]) -> tuple[str, str, str] | None:
    """(column 1, column 2, status) for the unordered pair {a, b}: status "0"/"1" for an
    active edit (column order as the table has it), "none" when the pair has only deleted
    edits or was never listed. None for an active edit with indicator 9.

    Without an active edit the insurer's system made one up; it denies the code that real
    edits more often treat as the component (column 2), as a real edit would, so which
    line was denied says nothing about whether the edit exists."""
    for c1, c2 in ((a, b), (b, a)):
        active = [r for r in rows.get((c1, c2), []) if r["deletion_date"] is None]
        if active:
            ind = active[-1]["modifier_indicator"]
            return (c1, c2, ind) if ind in ("0", "1") else None
    lo, hi = sorted((a, b))
    if component.get(lo, 0.0) != component.get(hi, 0.0):
        return (hi, lo, "none") if component.get(lo, 0.0) > component.get(hi, 0.0) \
            else (lo, hi, "none")
    return (lo, hi, "none") if _sha(f"{TASK}:order:{lo}/{hi}")[0] & 1 else (hi, lo, "none")


def _component_share(rows: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, float]:
    """For each code, the share of its active edits (among the family codes) in which it is
    the column 2 (component) code."""
    c1: dict[str, int] = {}
    c2: dict[str, int] = {}
    for (a, b), rs in rows.items():
        if any(r["deletion_date"] is None for r in rs):
            c1[a] = c1.get(a, 0) + 1
            c2[b] = c2.get(b, 0) + 1
    return {c: c2.get(c, 0) / (c1.get(c, 0) + c2.get(c, 0)) for c in {*c1, *c2}}


def _usable(ref: Any, code: str) -> bool:
    row = ref.rvu(code)
    return (row is not None and row["status"] == "A" and not row["nonfac_na"]
            and row["global_days"] in PRICED_GLOBALS)


# procedures on the hand or wrist: the ones a median-nerve block at the wrist can anesthetize
HAND_KINDS = frozenset(("mid_joint", "small_joint", "tendon_sheath", "carpal"))


def _proc_pair_ok(a: str, b: str) -> bool:
    """Two procedures that can be done at one site (or one lesion) the same day, so that
    both a distinct and a same-site story exist; never two biopsies (a second lesion takes
    add-on 11103/11105) nor two different lesion types destroyed "on one lesion"."""
    pa_, pb = cat.PROCS[a], cat.PROCS[b]
    if "nerve" in (pa_.kind, pb.kind):  # a median-nerve block anesthetizes the hand and wrist
        return ({pa_.kind, pb.kind} - {"nerve"}) <= HAND_KINDS and pa_.kind != pb.kind
    if frozenset((pa_.kind, pb.kind)) not in cat.SAME_SITE_KINDS:
        return False
    roles = frozenset((pa_.role, pb.role))
    if roles not in cat.SAME_LESION_ROLES:
        return False
    if roles == frozenset(("destroy",)) and pa_.dx != pb.dx:
        return False
    for repair, other in ((a, b), (b, a)):
        if repair in cat.REPAIR_FITS and cat.PROCS[other].kind == "skin" \
                and other not in cat.REPAIR_FITS[repair]:
            return False
    return not (pa_.role == pb.role == "inject" and pa_.kind != pb.kind)


def _family_pairs(ref: Any) -> dict[str, list[tuple[str, str]]]:
    """Candidate unordered pairs per family (codes priced in the office, not add-ons)."""
    em_services = [c for c in sorted(cat.SERVICES) if _usable(ref, c)]
    em = [(s, e) for s in em_services for e in (*cat.EM_LEVELS, "99211") if _usable(ref, e)]
    procs = [c for c in sorted(cat.PROCS) if _usable(ref, c)]
    proc = [(a, b) for i, a in enumerate(procs) for b in procs[i + 1:] if _proc_pair_ok(a, b)]
    # two procedures on unrelated body areas (a knee injection and an earwax removal):
    # always at different sites, so they serve the branches where the notes document a
    # distinct service or do not matter
    apart = [(a, b) for i, a in enumerate(procs) for b in procs[i + 1:]
             if "nerve" not in (cat.PROCS[a].kind, cat.PROCS[b].kind)
             and frozenset((cat.PROCS[a].kind, cat.PROCS[b].kind)) not in cat.SAME_SITE_KINDS
             and not (cat.PROCS[a].role == cat.PROCS[b].role == "biopsy")]
    ther = [c for c in sorted(cat.THERAPY) if _usable(ref, c)]
    # never two evaluations the same day (mutually exclusive, and absurd as a story)
    therapy = [(a, b) for i, a in enumerate(ther) for b in ther[i + 1:]
               if not {a, b} <= cat.EVALUATIONS]
    return {"em": em, "proc": proc, "apart": apart, "therapy": therapy}


def _contested(fam: str, c1: str, c2: str, status: str) -> bool:
    """An indicator-1 therapy edit kept out: no same-site story
    (``catalog.CONTESTED_THERAPY``), or a service distinct only at another body site
    (``catalog.SITE_DECIDED``), whose notes would be decided by whether two site names agree —
    a relation that takes a handful of values, which a bag of words learns as a conjunction —
    where every other therapy pair is decided by the clock. (Such codes still occur without
    an edit or with indicator 0, where the lookup decides.)"""
    if fam != "therapy" or status != "1":
        return False
    return (frozenset((c1, c2)) in cat.CONTESTED_THERAPY
            or bool({c1, c2} & set(cat.SITE_DECIDED)))


def _one_nail_ok(pair: tuple[str, str]) -> bool:
    """An avulsion beside a debridement code of 6+ nails has no same-nail (not distinct)
    story: the avulsion covers only its own nail (CMS article A52998), so the other 5+ nails
    are separate structures and the denial would never be legitimate."""
    return not any(a in cat.ONE_NAIL and cat.COUNTS.get(b, (1, 1))[0] > 1
                   for a, b in (pair, pair[::-1]))


def _closable(pair: tuple[str, str]) -> bool:
    """Whether a repair beside this lesion code could have closed its wound (review round
    8b, S1: a shave biopsy's wound is never sutured, so no story of its pair with a repair
    is plausible)."""
    return not (set(pair) & cat.SUTURED_NEVER and set(pair) & set(cat.REPAIR_FITS))


def _build_pools(ref: Any) -> dict[str, dict[str, dict[str, list[tuple[str, str]]]]]:
    """pools[split][family][status] -> [(column 1, column 2)], from the bundle's PtP table."""
    for dx in cat.ALL_DX:  # fail loudly if a catalog diagnosis is not billable here
        node = ref.icd10cm(dx)
        if node is None or not node["billable"]:
            raise ValueError(f"catalog diagnosis {dx} is not a billable ICD-10-CM code")
    fams = _family_pairs(ref)
    codes = sorted({c for pairs in fams.values() for p in pairs for c in p} | {"99212", "99213"})
    rows = _scan_ptp(ref, codes)
    if isinstance(ref, _Memo):
        ref.preload(codes, rows)
    component = _component_share(rows)
    pools: dict[str, dict[str, dict[str, list[tuple[str, str]]]]] = {
        s: {f: {"0": [], "1": [], "none": []} for f in fams} for s in SPLIT_NAMES}
    for fam, pairs in fams.items():
        by_status: dict[str, list[tuple[str, str]]] = {"0": [], "1": [], "none": []}
        for a, b in pairs:
            got = _classify(rows, a, b, component)
            if got is None:
                continue
            c1, c2, status = got
            if _contested(fam, c1, c2, status):
                continue
            if fam == "em":
                em = c1 if c1.startswith("992") else c2
                # a nurse visit (99211) only in the indicator-0 edits it really has;
                # separately identifiable visits need a level with problems to manage
                if em == "99211" and status != "0":
                    continue
            by_status[status].append((c1, c2))
        for status, found in by_status.items():
            found.sort(key=lambda p: _sha(f"{TASK}:pair:{p[0]}/{p[1]}"))
            for i, pair in enumerate(found):
                if not _one_nail_ok(pair) or not _closable(pair):  # dropped after the
                    continue  # split draw, so every other pair keeps its split
                pools[pair_split(i)][fam][status].append(pair)
    return pools


FAMILIES = ("em", "proc", "apart", "therapy")
# which family each branch draws, per mille. What the real table allows: an office visit with
# a same-day service is always edited with indicator 1; two same-site procedures are edited
# (indicator 0 or 1), practically never without an edit; two procedures on unrelated areas
# are either unedited or edited with indicator 1, and are always distinct, so they are drawn
# only without an edit (with indicator 1 they would name b or c together with the modifier
# flag); therapy pairs have all three statuses. The four indicator-1 cells draw the same
# family weights, so no family with a modifier flag names the answer.
BRANCH_FAMILIES: dict[str, tuple[tuple[str, int], ...]] = {
    "b": (("em", 200), ("proc", 200), ("therapy", 600)),
    "c": (("em", 200), ("proc", 200), ("therapy", 600)),
    "a1m": (("em", 200), ("proc", 200), ("therapy", 600)),
    "a1n": (("em", 200), ("proc", 200), ("therapy", 600)),
    "a0": (("proc", 400), ("therapy", 600)),
    "d": (("apart", 200), ("therapy", 800)),
}


# families whose anchor codes must occur in another drawn status / whose code-family
# signature is drawn first (see ``_anchors`` and ``_common_sigs``)
CODE_BALANCED = frozenset(("proc", "apart", "therapy"))
SIG_BALANCED = frozenset(("apart", "therapy"))


def _anchors(pools: dict[str, dict[str, list[tuple[str, str]]]]
             ) -> dict[str, dict[str, dict[str, list[tuple[str, str, str]]]]]:
    """{status: {family: {code: [(column 1, column 2, family)]}}}: every usable pair filed
    under each of its non-E/M codes, so a draw picks a code first (uniformly) and then one
    of its pairs, and no code is drawn more often for one status than another."""
    out: dict[str, dict[str, dict[str, list[tuple[str, str, str]]]]] = {
        k: {f: {} for f in FAMILIES} for k in ("0", "1", "none")}
    for fam, by_status in pools.items():
        for status, pairs in by_status.items():
            for c1, c2 in pairs:
                for code in (c1, c2):
                    if not code.startswith("992"):
                        out[status][fam].setdefault(code, []).append((c1, c2, fam))
    # a pair without an edit is used only if its denied code is one that edited pairs of the
    # same family deny too: which line was denied must not tell an invented edit from a real one
    for f in FAMILIES:
        denied = {c2 for k in ("0", "1") for pairs in out[k][f].values() for _, c2, _ in pairs}
        out["none"][f] = {code: kept for code, pairs in out["none"][f].items()
                          if (kept := [p for p in pairs if p[1] in denied])}
    # only the statuses a branch draws the family for; and no code that only one of them ever
    # draws (a stop-smoking counseling code never edited, a nurse visit only with
    # indicator 0): such a code would name the status without the lookup
    drawn = {f: sorted({STATUS[b] for b, fams in BRANCH_FAMILIES.items()
                        if f in dict(fams)}) for f in FAMILIES}
    for f in FAMILIES:
        for k in ("0", "1", "none"):
            if k not in drawn[f]:
                out[k][f] = {}
        if len(drawn[f]) > 1 and f in CODE_BALANCED:
            # (indicator 0 is the rare branch: its codes must occur in another status, but a
            # code of another status need not occur with indicator 0)
            for k in drawn[f]:
                others = {c for k2 in drawn[f] if k2 not in (k, "0") or (k == "0" != k2)
                          for c in out[k2][f]}
                if others:
                    out[k][f] = {c: v for c, v in out[k][f].items() if c in others}
    return {k: {f: dict(sorted(codes.items())) for f, codes in fams_.items()}
            for k, fams_ in out.items()}


def _sig(c1: str, c2: str) -> tuple[str, str]:
    """What a claim shows of a pair without its exact codes: the two code families
    (first three characters), in sorted order."""
    return tuple(sorted((c1[:3], c2[:3])))  # type: ignore[return-value]


def _common_sigs(anchors: dict[str, dict[str, dict[str, list[tuple[str, str, str]]]]]
                 ) -> dict[str, list[tuple[str, str]]]:
    """Per family, the code-family signatures that every status the family is drawn for
    (but the rare indicator 0, which keeps its own) has pairs of: a draw picks one of them
    first (uniformly), so that the two code families on the claim are distributed alike
    whatever the edit status."""
    out: dict[str, list[tuple[str, str]]] = {}
    for f in FAMILIES:
        statuses = [k for k in ("1", "none", "0") if anchors[k][f]]
        main = [k for k in statuses if k != "0"] or statuses
        sets = [{_sig(c1, c2) for pairs in anchors[k][f].values() for c1, c2, _ in pairs}
                for k in main]
        common = set.intersection(*sets) if sets else set()
        out[f] = sorted(common) if len(main) > 1 and f in SIG_BALANCED else []
    return out


def _balanced(anchors: dict[str, dict[str, dict[str, list[tuple[str, str, str]]]]],
              rounds: int = 200) -> dict[str, dict[str, tuple[list[Any], list[float]]]]:
    """{family: {status: (pairs, weights)}} for the families drawn with more than one
    (main) status: pair weights fitted by iterative proportional fitting so that the paid
    code and the denied code have the same distribution whatever the status (a code that
    one status never bills in that role gets no weight). A table from either code to the
    answer then learns only the family's prior. Families where the fit leaves a status
    with fewer than 3 pairs (the small held-out pools) are left out (``_anchors`` draws)."""
    out: dict[str, dict[str, tuple[list[Any], list[float]]]] = {}
    for f in FAMILIES:
        main = [k for k in ("1", "none") if anchors[k][f]]
        if len(main) < 2:
            continue
        pairs = {k: sorted({p for ps in anchors[k][f].values() for p in ps}) for k in main}
        w = {k: [1.0] * len(pairs[k]) for k in main}
        for _ in range(rounds):
            for role in (0, 1):
                marg: dict[str, dict[str, float]] = {}
                for k in main:
                    tot = sum(w[k]) or 1.0
                    m: dict[str, float] = {}
                    for p, x in zip(pairs[k], w[k], strict=True):
                        m[p[role]] = m.get(p[role], 0.0) + x / tot
                    marg[k] = m
                codes = sorted(set.intersection(*(set(c for c, v in marg[k].items() if v > 0)
                                                  for k in main)))
                target = {c: 1.0 for c in codes}
                for c in codes:
                    for k in main:
                        target[c] *= marg[k][c] ** (1.0 / len(main))
                norm = sum(target.values()) or 1.0
                for k in main:
                    w[k] = [x * (target.get(p[role], 0.0) / norm) / marg[k][p[role]]
                            if marg[k].get(p[role]) else 0.0
                            for p, x in zip(pairs[k], w[k], strict=True)]
        kept = {k: [(p, x) for p, x in zip(pairs[k], w[k], strict=True) if x > 1e-9]
                for k in main}
        if all(len(v) >= 3 for v in kept.values()):
            out[f] = {k: ([p for p, _ in v], [x for _, x in v]) for k, v in kept.items()}
    return out


def _partner_weights(anchors: dict[str, dict[str, dict[str, list[tuple[str, str, str]]]]]
                     ) -> dict[str, dict[str, dict[str, list[float]]]]:
    """For each anchor's pairs, a weight 1 / (how many pairs of that status and group
    contain the partner code): a code that is the partner of almost every code (a nerve
    block, a re-evaluation, an office visit level) is then drawn about as often as any other
    instead of in a large share of the draws."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for k, groups in anchors.items():
        out[k] = {}
        for g, codes in groups.items():
            count: dict[str, int] = {}
            for pairs in codes.values():
                for c1, c2, _ in pairs:
                    for c in (c1, c2):
                        count[c] = count.get(c, 0) + 1
            out[k][g] = {code: [1.0 / count[c2 if c1 == code else c1] for c1, c2, _ in pairs]
                         for code, pairs in codes.items()}
    return out


def _derived(ref: Any) -> dict[str, Any]:
    """Pools of PtP pairs by split, family and status, the anchor index every draw goes
    through, and the memoizing view every later lookup uses (once per bundle content per
    process)."""
    key = _bundle_key(ref)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    memo = _Memo(ref)
    pools = _build_pools(memo)
    for code, rarc in DENIALS:  # fail loudly if a denial code was stopped in this bundle
        carc_text(memo, code)
        rarc_text(memo, rarc)
    anchors = {split: _anchors(pools[split]) for split in SPLIT_NAMES}
    for split, by_key in anchors.items():
        for k, groups in by_key.items():
            for g, codes in groups.items():
                if not codes and any(STATUS[b] == k and g in dict(f)
                                     for b, f in BRANCH_FAMILIES.items()):
                    raise ValueError(f"no {k!r} {g} pairs in the {split} pool of this bundle")
    balanced = {split: _balanced(anchors[split]) for split in SPLIT_NAMES}
    for split in SPLIT_NAMES:  # an indicator-0 code must be one the other statuses draw too
        for f, by_status in balanced[split].items():
            drawn = {c for pairs, _ in by_status.values() for p in pairs for c in p}
            zero = {c: v for c, v in anchors[split]["0"][f].items() if c in drawn}
            if zero:
                anchors[split]["0"][f] = zero
    data = {"pools": pools, "anchors": anchors,
            "sigs": {split: _common_sigs(anchors[split]) for split in SPLIT_NAMES},
            "balanced": balanced,
            "weights": {split: _partner_weights(anchors[split]) for split in SPLIT_NAMES},
            "fees": {}, "refs": {}, "texts": {}, "memo": memo}
    _CACHE[key] = data
    return data


def _fee(ref: Any, data: dict[str, Any], code: str, loc: dict[str, Any]) -> int:
    key = (code, loc["mac"], loc["locality"])
    fees = data["fees"]
    if key not in fees:
        fees[key] = fee_cents(ref, code, loc)
    return fees[key]


def _clone(obj: Any) -> Any:
    """Copy nested dicts/lists of plain values (several times cheaper than deepcopy)."""
    if isinstance(obj, dict):
        return {k: _clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clone(v) for v in obj]
    return obj


def _cached_ref(data: dict[str, Any], key: tuple[Any, ...], build: Any) -> dict[str, Any]:
    """A bundle-derived record built once per bundle, handed out as a fresh copy."""
    refs = data["refs"]
    if key not in refs:
        refs[key] = build()
    return _clone(refs[key])


def _text(ref: Any, data: dict[str, Any], kind: str, code: str) -> str:
    """Cached CARC/RARC text and code descriptions (each a table lookup otherwise)."""
    key = (kind, code)
    texts = data["texts"]
    if key not in texts:
        texts[key] = {"carc": carc_text, "rarc": rarc_text, "describe": describe}[kind](ref, code)
    return texts[key]


def _plan(ref: Any, data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``common.plan_terms(ref, rng, coverage="self_only")`` with the converted template rows
    cached: the same sorted rows and the same single ``rng.choice``, so the draw is identical
    (a test holds the two equal)."""
    if "plans" not in data:
        rows = sorted((p for p in ref.plans() if p["coverage"] == "self_only"),
                      key=lambda p: p["plan_id"])
        data["plans"] = [{k: (cents(v) if k in PLAN_MONEY else v) for k, v in p.items()}
                         for p in rows]
    return dict(rng.choice(data["plans"]))


def _ncci(ref: Any, column_1: str, column_2: str) -> dict[str, Any]:
    """The NCCI lookup for the pair as the insurer applied it, plus the table's history for
    the pair when no edit is active (a deleted edit shows its deletion date)."""
    out = ncci_reference(ref, column_1, column_2)
    d = out["data"]
    if d["edit_exists"]:
        d["status"] = "active"
        return out
    rows = [*ref.ncci_edits(column_1, column_2, active_only=False),
            *ref.ncci_edits(column_2, column_1, active_only=False)]
    d["status"] = "deleted" if rows else "never_listed"
    d["deleted_edits"] = [
        {"column_1": r["column_1"], "column_2": r["column_2"],
         "modifier_indicator": r["modifier_indicator"],
         "deletion_date": iso(r["deletion_date"]), "rationale": r["rationale"]}
        for r in sorted(rows, key=lambda r: (r["column_1"], r["deletion_date"]))]
    d["meaning"] = ("no active edit: the two codes are not bundled by NCCI and may be paid "
                    "separately on the same date")
    return out


# the vaccine lines (administration; the product is not on these claims) that ACA preventive
# coverage pays in full in network
VACCINE_LINES = frozenset(("90471", "90472", "90460", "90461"))


def patient_share(code: str, allowed: int, plan: dict[str, Any], deductible_left: int,
                  oop_left: int) -> dict[str, int]:
    """The plan's cost sharing on one paid line (cents), DOMAIN.md §2 order.

    An office visit (992xx) on a plan with a primary-care copay pays the copay only (no
    deductible on office visits, DOMAIN.md E1); everything else, and office visits on a
    plan without copays, goes deductible first, then coinsurance on the rest. A vaccine's
    administration (``VACCINE_LINES``) of an ACIP-recommended vaccine in network has no cost
    sharing at all (45 CFR 147.130(a)(1)(ii), DOMAIN.md §9; review round 8b, R1: the Z23
    line went to the deductible), in every branch."""
    if code in VACCINE_LINES:
        return cost_share(allowed, copay=0, deductible_left=0, coinsurance_pct=0,
                          oop_left=oop_left)
    copay = plan["copay_primary_care"] if code.startswith("992") else 0
    if copay > 0:
        return cost_share(allowed, copay=copay, deductible_left=0, coinsurance_pct=0,
                          oop_left=oop_left)
    return cost_share(allowed, copay=0, deductible_left=deductible_left,
                      coinsurance_pct=plan["coinsurance_pct"], oop_left=oop_left)


def deductible_credit(share: dict[str, int], plan: dict[str, Any], deductible_left: int
                      ) -> int:
    """What one line adds to the member's deductible accumulator: the deductible it paid,
    plus its copay when the plan document says copays count toward the deductible (never
    more than was left of it), so the EOB totals follow the plan's own stated rule."""
    copay = share["copay"] if plan["copays_count_toward_deductible"] else 0
    return min(deductible_left, share["deductible"] + copay)


def billed_cents(fee: int, markup_pct: int) -> int:
    """The provider's chargemaster price: markup % of the MPFS fee, up to whole dollars."""
    return -(-pct_of(fee, markup_pct) // 100) * 100




# the plan's own claim-editing policy: which bundling edits it applies, so that "no active
# edit" is a fact about the plan's stated table and not about a payer's unknown edits
CLAIM_EDITING = ("Bundling edits: this plan applies the CMS NCCI practitioner procedure-to-"
                 "procedure edits as loaded in its claims system (NCCI release 2024 Q3, "
                 "effective 2024-07-01; the same table the NCCI lookup shows) and no "
                 "proprietary bundling edits. Modifiers 59, XE, XP, XS, XU and 25, and the "
                 "anatomic modifiers E1-E4, FA, F1-F9, TA, T1-T9, LT, RT, LC, LD, RC, LM and "
                 "RI, bypass an edit with modifier indicator 1 when the records support them.")


# -- stories ----------------------------------------------------------------------------------
# the link words before the visit's other problem, one set for every branch
DISTINCT_LINKS = ("in addition,", "separately,", "also noted:", "other item:")
# when the other problem's assessment and plan were made: this date of service (the visit
# managed it: a separately identifiable E/M) or a prior visit's date (carried forward into
# today's note, not managed today). The same words either way; only the date against the
# date of service decides (AMA 2021: a problem is addressed when it is evaluated or treated
# at the encounter)
ASSESSED = ("assessment and plan dated {date}", "entry dated {date}",
            "assessed and plan recorded on {date}")
ASSESSED_SLOT = "{assessed}"
# the credentials that render each specialty's services: physical therapy (97xxx, incl. the
# 97164-GP re-evaluation) by a physical therapist (PT or DPT; CPT 97161-97164 are the
# therapist's evaluation codes, GP marks a PT plan of care), nail and foot procedures at a
# podiatry practice by a podiatrist (DPM); drawn by specialty, the same in every branch
CREDENTIALS = ("MD", "DO", "NP", "PA-C")
CREDENTIALS_BY_SPECIALTY = {"physical therapy": ("PT", "DPT"), "podiatry": ("DPM",)}
# the practices of an office visit's story: a family practice, or an urgent care for a
# visit that is not a scheduled routine service (an urgent care runs no infusion series). The
# other practice whose plan today's note records is drawn from the same pool as the billing
# one (minus it), so a practice word such as "Urgent Care" is as common on either side
# (round 4's red team: "Urgent Care" named only the other practice, 35 of 35 on train)
#
# Round 5's red team learned (billing practice, entry practice) tables from 7 names: the
# office-visit practices are now a place word and a kind of practice, drawn per scenario
# (90 x 6 = 540 names), so a pair seen on train rarely recurs on dev or test.
PLACES = ("Riverside", "Hillcrest", "Cedar Grove", "Prairie", "Bayview", "Crossroads",
          "Harbor", "Maple Ridge", "Oak Park", "Willow Creek", "Stonebridge", "Lakeside",
          "Pinecrest", "Fairview", "Brookside", "Elmwood", "Northgate", "Southpoint",
          "Westbrook", "Eastlake", "Millbrook", "Sunnyvale", "Clearwater", "Greenfield",
          "Highland", "Kingsport", "Lincoln Park", "Meadowview", "Mountain View", "Parkside",
          "Redwood", "Rosewood", "Sandy Hook", "Silver Lake", "Springdale", "Summit",
          "Timberline", "Valley View", "Westgate", "Woodland", "Ashford", "Bellmont",
          "Birchwood", "Briarcliff", "Cambridge Square", "Canyon", "Carrollton", "Chestnut Hill",
          "Cloverdale", "Coral Bay", "Deer Park", "Dogwood", "Eagle Rock", "Edgewater",
          "Fox Run", "Glenwood", "Golden Valley", "Grand Prairie", "Hampton", "Hawthorne",
          "Heritage", "Hidden Valley", "Holly Springs", "Ivy Hill", "Juniper", "Kensington",
          "Laurel", "Magnolia", "Marina", "Midtown", "Mission Hills", "Newport", "Oakmont",
          "Orchard", "Palisades", "Pleasant Hill", "Quail Ridge", "Ravenswood", "Ridgeway",
          "Riverbend", "Sagebrush", "Seaside", "Shady Grove", "Sterling", "Sycamore",
          "Tanglewood", "Twin Oaks", "Union Square", "Vista", "Walnut Creek")
# the acute problems an urgent care manages (``catalog.PROBLEMS``)
URGENT_CARE_DX = frozenset(("J06.9", "L25.9", "J01.90", "N39.0", "J20.9", "M54.50", "R07.9",
                            "I48.91"))
# planned, non-acute procedures an urgent care does not do (mycotic-nail debridement,
# destruction of actinic keratoses): such a visit bills at a family practice (review round 6,
# N2)
NOT_URGENT_CARE = frozenset(("11720", "17000"))
FAMILY_KINDS = ("Family Medicine", "Primary Care", "Family Practice", "Family Health Associates")
URGENT_KINDS = ("Urgent Care", "Walk-In Urgent Care")
EM_KINDS = (*FAMILY_KINDS, *URGENT_KINDS)
# the share of entries naming the billing group's *other* office (listed in the provider
# record), and the share of entries from another group that share the billing name's place
# word: equal, so that the place word alone agrees with "this group" as often in every branch
ALIAS_SHARE = 0.5
# how an entry names a practice: its short form (the place-name words and the kind of
# practice as initials), never the billing record's full name, so only reading the two
# forms as one practice links them (round 4's red team: the assessor and its practice were
# verbatim copies of the record's strings)
PRACTICE_KINDS = (("Walk-In Urgent Care", "Walk-In UC"), ("Family Health Associates", "FHA"),
                  ("Family Medicine", "FM"), ("Family Practice", "FP"),
                  ("Primary Care", "PC"), ("Urgent Care", "UC"))
# how the entry came into today's note: by a named scribe or medical assistant in a third of
# the visits of every branch, otherwise unattributed. Never by a clinician's name: naming
# the rendering clinician there added a second name only where another clinician assessed
# the problem, so the count of words in the entry hinted at the answer (round 5)
ENTERED = ("entered in today's note{by}", "copied into today's visit note{by}",
           "recorded in today's note{by}")
SCRIBES = ("medical scribe", "MA", "scribe")


# kinds of practice a coder reads as one name: "Southpoint FP" beside "Southpoint Family
# Medicine", "Harbor UC" beside "Harbor Walk-In Urgent Care" would be taken for the same
# office (review round 7). Two practices in one town, and a group's two offices there, are
# never of one class
KIND_CLASS = {"Family Medicine": "family", "Family Practice": "family",
              "Family Health Associates": "associates", "Primary Care": "primary",
              "Urgent Care": "urgent", "Walk-In Urgent Care": "urgent"}


def _unlike(kinds: tuple[str, ...], taken: set[str]) -> list[str]:
    """The kinds of ``kinds`` of no class of the kinds in ``taken`` (a name in the same
    town that no coder reads as one of those)."""
    classes = {KIND_CLASS[k] for k in taken}
    return [k for k in kinds if KIND_CLASS[k] not in classes]


def _place_kind(name: str) -> tuple[str, str]:
    kind = next(k for k in sorted(EM_KINDS, key=len, reverse=True) if name.endswith(k))
    return name[: -len(kind)].rstrip(), kind


# the share of groups that run a second office in their own town under another kind of
# practice (a family medicine group's urgent care down the street). It equals the share of
# another practice's entries that name a group in the billing name's town (1 - ALIAS_SHARE),
# so an entry naming the billing town under another kind of practice is this group's other
# office as often as another group's: round 6's red team read "another group in town" off
# the kind (the billing place word under another kind named only another practice, 31% of
# the visits that were not distinct against none of those that were)
SAME_TOWN_OFFICE = 0.5


GROUP_PRACTICE = ("one group practice under one taxpayer id: every office listed is the "
                  "group's, its clinicians see patients at any of them, and the group bills "
                  "all of them under its name")


def _group_offices(home: str, kinds: tuple[str, ...], rng: random.Random) -> list[str]:
    """The billing group's offices: its own name first, then one or two more offices, one of
    them in its own town under another kind of practice in ``SAME_TOWN_OFFICE`` of the
    groups, the others under other place words (a group often runs an office, or an urgent
    care, in the next town)."""
    place, home_kind = _place_kind(home)
    n = rng.choice((1, 2))
    others = [f"{p} {rng.choice(kinds)}"
              for p in rng.sample([p for p in PLACES if p != place], n)]
    if rng.random() < SAME_TOWN_OFFICE:
        others[rng.randrange(n)] = f"{place} {rng.choice(_unlike(kinds, {home_kind}))}"
    return [home, *others]


def practice_short(name: str) -> str:
    """A practice's short form as its own clinicians write it (``PRACTICE_KINDS``)."""
    for full, short in PRACTICE_KINDS:
        if name.endswith(full):
            return name[: -len(full)].rstrip() + " " + short
    return name


def _clinician(rng: random.Random, specialty: str = "") -> str:
    return f"{person(rng)}, {rng.choice(CREDENTIALS_BY_SPECIALTY.get(specialty, CREDENTIALS))}"


def _assessor_form(clinician: str, rng: random.Random) -> str:
    """How an entry names the clinician who assessed the problem: "Dr. Rossi" (a physician),
    "A. Rossi, NP" or "Rossi, Ana (DO)", never the roster's "Ana Rossi, DO" itself."""
    name, cred = clinician.rsplit(", ", 1)
    first, last = name.split(" ", 1)
    forms = [f"{first[0]}. {last}, {cred}", f"{last}, {first} ({cred})"]
    if cred in ("MD", "DO"):
        forms.append(f"Dr. {last}")
    return rng.choice(forms)


def _assessed_stamp(managed: bool, dos: dt.date, rendering: str, offices: list[str],
                    kinds: tuple[str, ...], rng: random.Random) -> tuple[str, dt.date | None]:
    """When, by whom and at which practice the visit's other problem was assessed, and how it
    came into today's note (a named scribe or MA, or unattributed, alike in every branch);
    and the earlier visit it came from, if any (the account history lists it).

    Managed at this visit (a separately identifiable E/M): on the date of service by the
    rendering clinician at one of the billing group's offices (``offices``: listed in the
    provider record; the group bills every office's encounters). Not managed, two ways:
    - by the rendering clinician at one of the group's offices at an earlier visit 2-5
      business days before (``RECENT_BUSINESS_DAYS``), carried forward (half of them);
    - on the date of service by a clinician of *another* practice, whose plan today's note
      only records (AMA 2021 E/M guidelines: a notation that another professional manages
      the problem, without additional assessment or care coordination documented, is not a
      problem addressed; Pub. 100-04 ch. 12 30.6.5 treats two clinicians as one physician
      only within one group, so another practice's visit is never this claim's).
    (The rendering clinician's own shift at another practice on the same day is no longer
    drawn: a domain review found one clinician at two family practices on one day
    implausible.)
    Hard cases at equal rates: an entry of this group names its other office (another place
    word, ``ALIAS_SHARE``), an entry of another practice shares the billing name's place word
    under another kind of practice (another group in the same town) as often. Earlier visits
    are drawn a few business days back, so neither the entry's month nor its day of the month
    says "not today" by itself; only the date against the date of service, the assessor
    against the rendering clinician and the office against the group's list decide together.
    (Round 5's red team: tables of (billing, entry) practice names from 7 names, and the
    entry's month, decided; round 6's: the entry's day of the month.)"""
    earlier = _recent_days(dos)
    kind = "managed" if managed else rng.choice(("earlier", "other"))
    by = rendering
    home_place, home_kind = _place_kind(offices[0])
    if kind in ("managed", "earlier"):
        # the group's other office: its office in its own town where it has one
        town = [o for o in offices[1:] if _place_kind(o)[0] == home_place]
        where = ((town[0] if town else rng.choice(offices[1:])) if rng.random() < ALIAS_SHARE
                 else offices[0])
    else:
        namesake = rng.random() < NAMESAKE_SHARE
        by = _other_clinician(rendering, rng, namesake)
        form = _assessor_form(by, rng)
        taken = {_place_kind(o)[0] for o in offices}
        # a namesake printed "Dr. <surname>" (no first name to tell them apart) only at an
        # office in a town of none of the group's offices: in the billing town under another
        # kind of practice ("Hampton FM" beside the group's "Hampton Primary Care") it read as
        # the rendering clinician writing their own office loosely (domain review round 9,
        # 7158/8560). Its town off the list still needs the list to read; the namesake share,
        # and so the surname-and-date rule's chance reading, is unchanged
        if (rng.random() < 1 - ALIAS_SHARE
                and not (namesake and form.startswith("Dr. "))):
            # another group in the billing name's town
            mine = {_place_kind(o)[1] for o in offices if _place_kind(o)[0] == home_place}
            where = f"{home_place} {rng.choice(_unlike(kinds, mine))}"
        else:
            where = f"{rng.choice([p for p in PLACES if p not in taken])} {rng.choice(kinds)}"
    if kind != "other":
        form = _assessor_form(by, rng)
    when = rng.choice(earlier) if kind == "earlier" else dos
    who = f" by {person(rng)}, {rng.choice(SCRIBES)}" if rng.random() < 1 / 3 else ""
    return (f"{rng.choice(ASSESSED).format(date=f'{when:%m/%d/%Y}')} by "
            f"{form}, {practice_short(where)}; "
            f"{rng.choice(ENTERED).format(by=who)}"), (when if kind == "earlier" else None)


# how far back the earlier visit of a carried-forward entry (and the account's recent visit
# in every office-visit scenario) lies: 2 to 5 business days before the date of service,
# in this month or the last. Round 6 kept it in the date of service's month (round 5's red
# team read "not today" off the entry's month), which put every carried-forward entry early
# in its month: the entry's day of the month alone told the branch (round 6's red team;
# entries dated the 10th or earlier: 62 of 112 not distinct against 29 of 112 on train). A
# date drawn a few business days back from a date of service spread over five months has
# the same day-of-month law as the date of service itself. The month then differs from the
# date of service's in about a sixth of the carried-forward entries (a twelfth of the visits
# that were not distinct), where another date than the date of service says "not today"
# anyway; the window is short so that a (month, month) table learns little from it (2-10
# business days back crossed a month in a third of them: that table passed 0.64 on dev's
# 28 visits against 0.50)
RECENT_BUSINESS_DAYS = range(2, 6)


def _recent_days(dos: dt.date) -> list[dt.date]:
    """The business days that lie ``RECENT_BUSINESS_DAYS`` business days before ``dos``."""
    out: list[dt.date] = []
    day = dos
    while len(out) < RECENT_BUSINESS_DAYS.stop - 1:
        day -= dt.timedelta(days=1)
        if is_business_day(day):
            out.append(day)
    return out[RECENT_BUSINESS_DAYS.start - 1:]


# the share of another practice's same-day assessors who are the rendering clinician's
# namesake (round 8c, the red team's relation cue: with every other-practice assessor of
# another surname, "the rendering clinician's surname in the entry and the entry dated the
# date of service -> distinct" read 1.000 of the office visits, so the group's office list
# was never needed). A namesake at another practice's office (never one on the group's
# list) leaves the office list, the group's own offices, as what tells the two apart; a
# surname is not an identity (two unrelated clinicians of one surname in one region are
# common), and whoever made it, an entry made at another practice is not this claim's visit
NAMESAKE_SHARE = 0.5


def _other_clinician(rendering: str, rng: random.Random, namesake: bool = False) -> str:
    """Another clinician with the rendering clinician's credential: of another surname, or
    (``namesake``) of the same surname under a first name of another initial, so that every
    print form other than "Dr. <surname>" shows another person.
    Round 8: drawn from the credential distribution on its own, the other practice's
    clinician printed the rendering clinician's credential in about a quarter of the
    entries and this group's in all of them, so how often a credential word ("MD", "Dr.")
    occurs in the provider record told the assessor apart without reading the names
    (boosted trees over word counts and numbers, fitted on train, read 0.577 of 402 fresh
    office visits against 0.50)."""
    name, cred = rendering.rsplit(", ", 1)
    first, last = name.split(" ", 1)
    if namesake:
        while (other := person(rng).split(" ", 1)[0])[0] == first[0]:
            pass
        return f"{other} {last}, {cred}"
    while (other := person(rng)).split(" ", 1)[1] == last:
        pass
    return f"{other}, {cred}"


# codes counting several lesions: never a second, separate lesion at the same named site
MULTI_LESION = frozenset(("17110", "17111", "17004", "11720", "11721"))
# therapy that can address gait, balance or whole-limb weakness rather than one body site
FUNCTIONAL = frozenset(("97110", "97112", "97116", "97530", "97535", "97750"))
# where on a limb or the trunk a lesion lies: every skin note of a two-skin-procedure story
# (and its repair's) measures it from the site's landmark, in every branch; two notes at one
# site describe one lesion when the distances agree and two lesions when they differ
# One landmark per site that lies on both of its aspects (review round 7, F7: "posterior
# aspect, 12 cm from the kneecap" named a front-of-the-knee landmark for the back of the
# thigh or calf, and the elbow crease is the front of the elbow): the knee and the elbow
# joint lines run round the limb, so a distance from them reads on either surface
ANCHORS = {"forearm": "elbow joint line", "upper arm": "elbow joint line",
           "thigh": "knee joint line", "lower leg": "knee joint line", "back": "spine",
           "shoulder": "acromion"}
# the two aspects of each site, each in two equivalent wordings (a lesion is on one surface
# of the limb or on one side of the spine)
ASPECTS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "forearm": (("dorsal aspect", "extensor surface"), ("volar aspect", "flexor surface")),
    "upper arm": (("anterior aspect", "front of the arm"),
                  ("posterior aspect", "back of the arm")),
    "thigh": (("anterior aspect", "front of the thigh"),
              ("posterior aspect", "back of the thigh")),
    "lower leg": (("anterior aspect", "shin side"), ("posterior aspect", "calf side")),
    # (not "paraspinal": lesions lie 2-14 cm from the spine, most beyond the paraspinal
    # strip; domain review)
    "back": (("left of midline", "left of the spine"),
             ("right of midline", "right of the spine")),
    "shoulder": (("anterior aspect", "front of the shoulder"),
                 ("posterior aspect", "back of the shoulder")),
}
# the farthest a lesion at a site is printed from its landmark (cm): 14 on a limb or the
# back, 8 from the acromion (a shoulder is not 14 cm across; review round 8b, S2), drawn
# by one law in every story
FARTHEST = {"shoulder": 8}


def _farthest(*sites: str) -> int:
    """The farthest printed distance (cm) that fits every one of ``sites``."""
    return min(FARTHEST.get(next(k for k in ANCHORS if k in site), 14) for site in sites)


SIDE_FLIP = {"RT": "LT", "LT": "RT", "T5": "TA", "TA": "T5", "T6": "T1", "T1": "T6"}


# the words a note may use for a procedure site, drawn per note in every branch: a joint,
# nerve, tendon sheath or nail is named in its catalog form or an equivalent clinicians use,
# so two notes at one site share their site words no more reliably than two notes at two
# sites share theirs; only reading both wordings as one structure tells (round 4's red team:
# the count of words two notes share was a site-equality test)
SITE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("wrist (median nerve)", ("wrist (median nerve)", "median nerve at the wrist")),
    ("thumb base (CMC joint)", ("thumb base (CMC joint)", "thumb CMC joint",
                                "first carpometacarpal joint")),
    ("index finger PIP joint", ("index finger PIP joint", "index PIP joint",
                                "second proximal interphalangeal joint")),
    ("thumb flexor tendon sheath", ("thumb flexor tendon sheath",
                                    "flexor tendon sheath of the thumb")),
    ("great toe", ("great toe", "hallux")),
    ("second toe", ("second toe", "2nd toe")),
    ("carpal tunnel", ("carpal tunnel", "carpal canal")),
)


def _site_words(site: str, rng: random.Random) -> str:
    """A site in one of its equivalent wordings (``SITE_WORDS``), drawn per note."""
    for name, wordings in SITE_WORDS:
        if name in site:
            return site.replace(name, rng.choice(wordings))
    return site


def _side_of(site: str) -> str:
    return site.split(" ", 1)[0] if site.startswith(("right ", "left ")) else ""


def _side_form(site: str, spelled: bool) -> str:
    """A site as one note writes it: the side spelled out (a third of the notes) or as R/L
    ("R knee"), drawn per note in every branch, so that whether two notes print the same
    side word says about as little for two sites on one side as on two sides; only reading
    R as right does (round 4's red team: differing left/right words decided the procedure
    branch)."""
    if spelled:
        return site
    return re.sub(r"\b(right|left) (?=[a-z])", lambda m: m[1][0].upper() + " ", site)
# what a note records about the other side, by the kind of site treated: a history item
# there or hand dominance ({s}: the other side, written as the note writes its own side;
# {part}: the site's body part). Never a finding today: the other note may treat that very
# side (distinct stories) or the note itself may span both (6-9 toenails), and "L hand
# without numbness" beside an L carpal-tunnel injection or "the other foot's nails without
# thickening" after debriding 7 nails contradicted it (review round 6, N3); a past item or
# dominance fits every story alike
CONTRALATERAL: dict[str, tuple[str, ...]] = {
    "skin": ("History: {s} {part} lesion biopsied in 2022, benign.",
             "History: lesion removed from the {s} {part} in 2023, benign."),
    "wound": ("History: {s} {part} abrasion in 2024, healed.",
              "History: prior laceration of the {s} {part}, healed."),
    "face": ("History: {s} {part} laceration repaired in 2022.",
             "History: {s} {part} lesion treated in 2024."),
    "major_joint": ("History: {s} {part} arthroscopy in 2021.",
                    "History: {s} {part} injection in 2024 with good relief."),
    "mid_joint": ("{S}-hand dominant.", "History: {s} {part} sprain in 2022, resolved."),
    "small_joint": ("{S}-hand dominant.", "History: {s} thumb CMC injection in 2024."),
    "tendon_sheath": ("{S}-hand dominant.", "History: {s} trigger thumb injection in 2023."),
    "tendon_origin": ("{S}-hand dominant.", "History: {s} {part} tendinitis in 2023, resolved."),
    "carpal": ("{S}-hand dominant.", "History: {s} wrist splinted for numbness in 2023."),
    "nerve": ("{S}-hand dominant.", "History: {s} wrist splinted for numbness in 2023."),
    "ear": ("History: {s} ear infection in 2024, treated.",
            "History: {s} ear wax removal in 2025."),
    "toe": ("History: {s} ingrown nail treated in 2023.",
            "History: {s} great toe nail avulsion in 2024."),
    "muscle": ("{S}-hand dominant.", "History: {s} shoulder strain in 2024, resolved."),
}
SIDE_WORD = re.compile(r"\b(right|left|R|L)\b")
# the body part each site kind's comparison names when the site itself names none
PART_BY_KIND = {"mid_joint": "wrist", "tendon_origin": "elbow", "muscle": "shoulder"}


def _note_side(note: str) -> str:
    """The first side a note names ("right"/"left"), or ""."""
    m = SIDE_WORD.search(note)
    return "" if m is None else {"R": "right", "L": "left"}.get(m[1], m[1])


def _contralateral(notes: dict[str, str], kinds: dict[str, str], spelled: dict[str, bool],
                   rng: random.Random) -> None:
    """Append to one or both sided notes (each a third of the time, both a third) a remark
    about the other side: a comparison exam, a history item or hand dominance. Drawn alike in
    every story, so that a right-word and a left-word occur together in the two notes of every
    story with a side, whether the two services were at one site or on both sides (round 5's
    red team: "both sides are mentioned" occurred only in distinct stories). Only the
    procedure sentence says where the service was done."""
    sided = [c for c in notes if _note_side(notes[c])]
    if not sided:
        return
    pick = rng.randrange(3)
    chosen = sided if len(sided) == 1 else (
        [sided[0]] if pick == 0 else [sided[1]] if pick == 1 else sided)
    dominance = False  # stated once per patient: two notes on two sides would contradict
    for code in chosen:
        side = _note_side(notes[code])
        other = "left" if side == "right" else "right"
        word = other if spelled.get(code, True) else other[0].upper()
        kind = kinds[code]
        part = PART_BY_KIND.get(kind, "")
        if not part:
            m = re.search(r"\b(?:right|left|R|L) ([a-z]+(?: [a-z]+)?)", notes[code])
            part = m[1] if m else "side"
            part = next((k for k in ("knee", "shoulder", "wrist", "ear", "forearm",
                                     "upper arm", "thigh", "lower leg", "cheek", "eyebrow",
                                     "hand", "foot") if re.search(rf"\b{k}\b", part)), part)
            if kind in ("skin", "wound", "face") and part in ("of midline", "of the", "side"):
                part = "side of the back"
        remark = rng.choice(CONTRALATERAL[kind])
        if "dominant" in remark and dominance:  # the other remark of this site kind
            remark = next(r for r in CONTRALATERAL[kind] if "dominant" not in r)
        dominance = dominance or "dominant" in remark
        text = remark.format(s=word, S=word[0].upper() + word[1:], part=part)
        notes[code] = f"{notes[code]} {text}"


# services whose lay words name one joint though the code covers several joints
SITE_NAMED_LAY = frozenset(("20610", "20605"))
PRE_PROCEDURE = ("focused history and exam of that problem, prior treatment reviewed, options "
                 "discussed and the {lay} chosen",
                 "examined; findings as expected for the problem, decision made to proceed "
                 "with the {lay} today",
                 "assessment of that problem and of the response to earlier treatment before "
                 "the {lay}, consent obtained")
# a routine service's visit (``catalog.Service.routine``): the patient came in for the
# scheduled service and nothing about it needed evaluating, written the same way in every
# branch; only the visit's other problem, by its date, can make the E/M distinct
ROUTINE = ("no new complaints about it and no evaluation of it needed today",
           "presents for it as scheduled with no new complaints about it; no separate "
           "evaluation before the {lay}",
           "no new symptoms related to it; the {lay} proceeded as ordered without a separate "
           "evaluation")
SITES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "skin": tuple((n, "", dx) for n, dx in cat.SKIN_SITES),
    "wound": tuple((n, "", dx) for n, dx in cat.SKIN_SITES),
    "face": tuple((n, "", dx) for n, dx in cat.FACE_SITES),
    "major_joint": cat.MAJOR_JOINTS, "mid_joint": cat.MID_JOINTS,
    "small_joint": cat.SMALL_JOINTS + cat.SMALL_JOINTS_MORE,
    "tendon_sheath": cat.TENDON_SHEATHS,
    "tendon_origin": cat.TENDON_ORIGINS, "carpal": cat.CARPAL, "ear": cat.EARS,
    "toe": cat.TOES + cat.TOES_MORE, "nerve": cat.NERVE_SITES,
}
SPECIALTY = {"skin": "dermatology", "wound": "urgent care", "face": "urgent care",
             "major_joint": "orthopedics", "mid_joint": "orthopedics",
             "small_joint": "orthopedics", "tendon_sheath": "orthopedics",
             "tendon_origin": "sports medicine", "carpal": "orthopedics",
             "muscle": "sports medicine", "ear": "family medicine", "toe": "podiatry",
             "nerve": "pain medicine"}
THERAPY_REGIONS = (("lumbar spine", "M54.50"), ("right knee", "M25.561"),
                   ("left shoulder", "M75.42"), ("cervical spine", "M54.2"),
                   ("both legs (generalized weakness)", "M62.81"),
                   ("gait and balance", "R26.89"))
# body sites for the services distinct only at another site (catalog.SITE_DECIDED)
SITE_REGIONS = dict((("lumbar spine", "M54.50"), ("right knee", "M25.561"),
                     ("left shoulder", "M75.42"), ("cervical spine", "M54.2"),
                     ("left hip", "M25.552"), ("right ankle", "M25.571"),
                     ("right hand and wrist", "M25.531"), ("left hand and wrist", "M25.532")))


class _Dx:
    """The claim's diagnosis list in pointer order (A, B, ...)."""

    def __init__(self) -> None:
        self.codes: list[str] = []

    def ptr(self, dx: str) -> str:
        if dx not in self.codes:
            self.codes.append(dx)
        return "ABCDEFGHIJKL"[self.codes.index(dx)]


def _story_em(paid: str, denied: str, distinct: bool, mod: bool, rng: random.Random
              ) -> dict[str, Any]:
    """An office visit and a same-day service. Every visit note holds why the patient came
    for the service and another problem with an assessment and plan (at the E/M level that
    problem supports). Distinct: that assessment is dated the date of service (the visit
    managed it). Not distinct: it is a prior visit's, carried forward, so the visit was only
    what the service itself includes: for a minor procedure (000/010 global) the evaluation
    that led to it, for a routine service (a scheduled drug administration, vaccine or
    ordered test) nothing at all, the patient having come for the scheduled service with no
    new complaints. A routine service is never told after an evaluation of a new problem:
    that evaluation would be a separately identifiable E/M whatever the other problem's
    date (CPT drug-administration guidelines)."""
    em = paid if paid.startswith("992") else denied
    s = denied if em == paid else paid
    svc = cat.SERVICES[s]
    site, _side, site_dx = rng.choice(svc.sites) if svc.sites else ("", "", "")
    s_dx = svc.dx or site_dx
    reason = svc.reason.format(site=site)
    dx = _Dx()
    s_ptr = dx.ptr(s_dx)
    # a minor procedure's visit evaluated the problem that led to it (part of the procedure's
    # global package); a routine service's visit was for the scheduled service only
    # a joint injection's words name the drawn joint (a 20610 may be of a shoulder or hip)
    lay = f"{site} injection" if s in SITE_NAMED_LAY else svc.lay
    pre = rng.choice(ROUTINE if svc.routine else PRE_PROCEDURE).format(lay=lay)
    hist = list(cat.HISTORY)
    rng.shuffle(hist)
    if rng.random() < 0.5:  # the service's own aftercare, in every branch
        pre += "; " + rng.choice(svc.aftercare).format(lay=lay,
                                                       weeks=rng.choice((2, 4, 6)))
    # the visit's other problem, at the level the claim bills, in every branch: whether the
    # visit managed it is the date of its assessment against the date of service
    # (``ASSESSED_SLOT``, filled in by ``generate`` once the date of service is drawn)
    # the billing practice: a family practice, or an urgent care for a visit that is not a
    # scheduled routine service (an urgent care runs no infusion series) nor a planned
    # non-acute procedure (``NOT_URGENT_CARE``), and whose other
    # problem is an acute one (an urgent care does not manage chronic disease: no
    # hypertension, diabetes, lipid, anxiety, migraine or heart-failure plan; domain review)
    problems = [p for p in cat.PROBLEMS if p.level == em and p.dx != s_dx]
    acute = [p for p in problems if p.dx in URGENT_CARE_DX]
    kinds = FAMILY_KINDS if svc.routine or s in NOT_URGENT_CARE or not acute else EM_KINDS
    home = f"{rng.choice(PLACES)} {rng.choice(kinds)}"
    urgent = home.endswith(URGENT_KINDS)
    prob = rng.choice(acute if urgent else problems)
    em_note = (f"{cat.EM_TEXT[em]}: seen for {reason}; {pre}; "
               f"{rng.choice(DISTINCT_LINKS)} {prob.text} ({ASSESSED_SLOT}).")
    em_ptr = [dx.ptr(prob.dx)]
    if rng.random() < 0.5:
        em_note += f" History: {hist[0][1]}."
        dx.ptr(hist[0][0])
    s_note = svc.text.format(site=site) + "; done at this visit."
    lay_em = "nurse visit" if em == "99211" else "office visit"
    return {"specialty": "urgent care" if urgent else "family medicine", "practice": home,
            "kinds": kinds, "level": em,
            "dxs": dx.codes, "assessed_today": distinct,
            "lines": {em: {"mods": ["25"] if mod else [], "ptr": em_ptr},
                      s: {"mods": [], "ptr": [s_ptr]}},
            "notes": {em: em_note[0].upper() + em_note[1:], s: s_note[0].upper() + s_note[1:]},
            "lay": {em: lay_em, s: svc.lay}}


def _measure(code: str, pair: tuple[str, str], rng: random.Random,
             taken: float = 0) -> dict[str, Any]:
    """Size (cm) and count for a procedure, inside its code's range; for a pair defined by
    a total (two repairs of one class, two nail counts) the parts add up inside the paid
    code's range, so the paid code alone is the correct coding."""
    paid, denied = pair
    total = cat.TOTALS.get(pair)
    out: dict[str, Any] = {}
    for key, table in (("size", cat.SIZES), ("n", cat.COUNTS)):
        if code not in table:
            continue
        lo, hi = table[code]
        if total is not None:
            hi = min(hi, total - table[denied][0]) if code == paid else min(hi, total - taken)
        if key == "size":
            out[key] = round(lo + rng.randrange(int(round((hi - lo) * 10)) + 1) / 10, 1)
        else:
            out[key] = rng.randint(lo, int(hi))
    return out


def _story_proc(paid: str, denied: str, distinct: bool, mod: bool, rng: random.Random
                ) -> dict[str, Any]:
    """Two procedures. Distinct: another site, side, lesion or muscle group. Not distinct:
    the same site (a biopsy of the lesion then destroyed or excised, the wound of a biopsy or
    excision closed, the same joint or ear treated twice, the block that anesthetized the
    other procedure)."""
    p = {paid: cat.PROCS[paid], denied: cat.PROCS[denied]}
    # the site-bearing code first: a repair or a nerve block follows the other procedure
    order = sorted((paid, denied), key=lambda c: (p[c].kind in ("nerve", "wound"), c != paid))
    first, second = order
    # a simple repair beside a punch biopsy or an excision: in every branch the patient has
    # that wound and a laceration, and the lesion's note closes its own wound with simple
    # sutures (part of the punch or excision, CPT). Distinct: the repair line sutured the
    # laceration (a separate wound, XS/59); not distinct: the repair line is the lesion
    # wound's own sutures billed again, and the laceration was only cleaned and dressed.
    # Only the repair's place, against the two wounds', tells which (review round 8b, S1:
    # a 4.5-6.3 cm excision ellipse "closed with adhesive strips only" beside a sutured
    # laceration, and a sutured shave-biopsy wound; shave biopsies are no longer paired
    # with a repair). The laceration's S-code is on the claim either way (round 7: it was
    # there only when the laceration was sutured).
    lacerated = p[first].kind == "skin" and p[second].kind == "wound"
    lac: tuple[str, str] = ("", "")
    told = distinct
    meas = {paid: _measure(paid, (paid, denied), rng)}
    meas[denied] = _measure(denied, (paid, denied), rng,
                            meas[paid].get("size", meas[paid].get("n", 0)))
    if lacerated:  # the sutured wound's length: what the lesion's own wound would need
        meas[second]["size"] = _closure_length(first, meas[first]["size"], second, rng)
    if {paid, denied} & cat.ONE_NAIL and "11720" in (paid, denied):
        meas["11720"]["n"] = 1  # only the avulsed (or the other toe's) nail, never several
    sites: dict[str, str] = {}
    sides: dict[str, str] = {}
    dxs: dict[str, str] = {}
    listed_dx = ""
    if p[first].kind == "muscle":
        pool = list(cat.MUSCLES)
        rng.shuffle(pool)
        n1 = meas[first].get("n", 1)
        sites[first] = ", ".join(sorted(pool[:n1]))
        if p[second].kind == "muscle":
            n2 = meas[second].get("n", 1)
            chosen = pool[n1:n1 + n2] if distinct else pool[:n2]
            sites[second] = ", ".join(sorted(chosen))
        elif distinct:
            sites[second], sides[second], dxs[second] = rng.choice(SITES[p[second].kind])
        else:
            sites[second] = sites[first]
    else:
        sites[first], sides[first], site_dx = rng.choice(SITES[p[first].kind])
        dxs[first] = site_dx
        kind2 = p[second].kind
        if lacerated:  # the laceration is placed as a distinct repair is, in every branch
            distinct, told = True, distinct
        if kind2 == "muscle":  # trigger points away from the other procedure's site
            muscles = list(cat.MUSCLES)
            rng.shuffle(muscles)
            sites[second] = ", ".join(sorted(muscles[:meas[second].get("n", 1)]))
        elif distinct and (p[first].kind == "skin" and kind2 in ("skin", "wound")
                           and not {first, second} & MULTI_LESION and rng.random() < 0.9):
            # a separate lesion (or laceration) at the same named site: distinct all the
            # same (NCCI: a separate lesion supports XS/59); only the two notes' distances
            # from the site's landmark say so. Never beside a code counting several lesions:
            # its note measures only one of them, so a lesion elsewhere at that site could
            # still be among those treated
            sites[second] = sites[first]
            dxs[second] = next(s[2] for s in SITES[kind2] if s[0] == sites[first])
        elif distinct:
            options = [s for s in SITES[kind2] if s[0] != sites[first]]
            if kind2 == "nerve" and sides.get(first):  # a block on the same side is the
                options = [s for s in options if s[1] != sides[first]]  # same hand's
            # another site on the same side about as often as one on the other side
            # (another joint, toe or lesion site of the same limb)
            side = _side_of(sites[first])
            same = [s for s in options if side and _side_of(s[0]) == side]
            other = [s for s in options if s not in same]
            if same and other:
                options = same if rng.random() < 0.5 else other
            sites[second], sides[second], dxs[second] = rng.choice(options)
        elif kind2 == "nerve":  # the block anesthetized the other procedure's hand
            sites[second], sides[second], dxs[second] = next(
                s for s in SITES["nerve"] if s[1] == sides[first])
        else:
            sites[second], sides[second] = sites[first], sides[first]
            same = [s for s in SITES[kind2] if s[0] == sites[first]]
            dxs[second] = same[0][2] if same and kind2 not in ("wound", "face") else ""
            # the claim still lists a diagnosis for the second line as if it were another
            # site (the billing office's view): only the notes show the site is the same
            phantom = [s for s in SITES[kind2] if s[0] != sites[first]]
            listed_dx = (rng.choice(p[second].dx) if p[second].dx
                         else "" if kind2 == "wound"  # no laceration the notes never show
                         else rng.choice(phantom)[2] if phantom else "")
        if lacerated:
            distinct = told
            lac = (sites[second], dxs[second])
            if not distinct:  # the sutures closed the biopsy or excision wound: the repair
                # treats the lesion, the claim still lists the laceration (cleaned, dressed)
                sites[second], dxs[second], listed_dx = sites[first], "", lac[1]
    # each lesion (and a repaired wound) measured from its site's landmark
    where: dict[str, str] = {}
    where_measured = p[first].kind == "skin" and p[second].kind in ("skin", "wound")
    a1 = a2 = 0  # which aspect of the site (two per site, ``ASPECTS``)
    dist: dict[str, str] = {}  # each lesion's printed distance from the landmark
    lac_at: tuple[int, str] = (0, "")  # the laceration's aspect and printed distance
    if lacerated:
        a1, a2, dist1, dist2, lac_at = _lacerated_where(sites[first] == lac[0], distinct, rng,
                                                        _farthest(sites[first], lac[0]))
        dist = {first: dist1, second: dist2}
    elif where_measured:
        a1 = rng.randrange(2)
        if sites[second] != sites[first]:
            a2 = rng.randrange(2)
            dist = {c: _distance(rng.randrange(2, _farthest(sites[c]) + 1),
                                 rng.random() < 0.5) for c in (first, second)}
        else:
            a2 = a1
            d1, d2, one_distance = _same_site_distances(distinct, rng,
                                                        _farthest(sites[first]))
            dist = {first: d1, second: d2}
            if distinct and one_distance:  # the same distance: a lesion on the site's
                a2 = 1 - a1  # other aspect (the opposite surface of the limb)
    # a lesion that could be the first note's (a biopsy then destroyed or excised): written
    # as "a lesion" in every branch, so the wording never tells whether it was the same one
    neutral = (p[first].kind == p[second].kind == "skin" and second in cat.LESION_TEXT
               and p[first].role != p[second].role)
    # each note spells its sides out (a third) or writes R/L, the site's and the aspect's
    spelled = {code: rng.random() < 1 / 3 for code in order}
    shown = {code: _side_form(_site_words(sites[code], rng), spelled[code]) for code in order}
    if where_measured:
        for code, a in ((first, a1), (second, a2)):
            anchor_key = next(k for k in ANCHORS if k in sites[code])
            anchor = ANCHORS[anchor_key]
            # several lesions are never all at one point: a multi-lesion note measures one
            # of them, so one lesion at the other note's distance was among those treated
            several = (code in MULTI_LESION and meas[code].get("n", 1) > 1
                       and not (neutral and code == second))
            # each note writes the aspect in one of two equivalent ways and the distance in
            # cm or mm, drawn on its own: equal strings then mean neither one lesion nor two
            # (round 3's red team: the same lesion always printed the same phrase)
            aspect = _side_form(ASPECTS[anchor_key][a][rng.randrange(2)], spelled[code])
            where[code] = (f"{shown[code]}, {aspect}, {'one of them ' if several else ''}"
                           f"{dist[code]} from the {anchor}")
    lac_where = ""
    if lacerated:  # the laceration as the repair's note writes it
        anchor_key = next(k for k in ANCHORS if k in lac[0])
        aspect = _side_form(ASPECTS[anchor_key][lac_at[0]][rng.randrange(2)], spelled[second])
        if lac[1] == "S21.219A":  # a back laceration is coded by its side of the spine
            sided = cat.BACK_LACERATION_BY_ASPECT[lac_at[0]]
            lac = (lac[0], sided)
            dxs = {c: sided if d == "S21.219A" else d for c, d in dxs.items()}
            listed_dx = sided if listed_dx == "S21.219A" else listed_dx
        lac_where = (f"{_side_form(_site_words(lac[0], rng), spelled[second])}, {aspect}, "
                     f"{lac_at[1]} from the {ANCHORS[anchor_key]}")
    dx = _Dx()
    lines: dict[str, Any] = {}
    notes: dict[str, str] = {}
    same_lesion = neutral and not distinct
    # a guided and an unguided injection of one kind of joint (20604/20600, 20606/20605,
    # 20611/20610): the unguided line's note names the joint and the drug and says nothing
    # about guidance, in every branch. At the same joint it is then the one guided injection
    # the other line documents, billed twice (NCCI ch. IV: one injection code per joint per
    # session); a note saying "without guidance", or repeating "under ultrasound guidance",
    # beside the guided one reads as the joint injected twice (billing reviews rounds 2, 3)
    guided = [c for c in order if "ultrasound" in p[c].text]
    plain_injection = next((c for c in order if c not in guided), "") if (
        p[first].role == p[second].role == "inject" and p[first].kind == p[second].kind
        and len(guided) == 1) else ""
    for code in order:
        proc = p[code]
        d = rng.choice(proc.dx) if proc.dx else dxs.get(code, "")
        if code in EAR_SIDED_DX:  # the ear the note names (H65.91 right, H65.92 left)
            d = EAR_SIDED_DX[code][sides[code]]
        if same_lesion and code == second:  # the lesion the first note described
            d = lines[first]["dx"]
        if code in cat.WART_BIOPSY_TEXT and {paid, denied} & cat.WART_CODES:
            proc = cat.Proc(proc.kind, proc.role, proc.lay, cat.WART_BIOPSY_TEXT[code])
        if neutral and code == second:
            proc = cat.Proc(proc.kind, proc.role, proc.lay, cat.LESION_TEXT[code])
        if not d:  # a repair or block at the other procedure's site treats what it treated
            other = order[0] if code == order[1] else order[1]
            d = lines[other]["dx"] if other in lines else "M79.2"
        n = meas[code].get("n", 1)
        if code == "11720" and n == 1:
            proc = cat.Proc(proc.kind, proc.role, proc.lay, cat.ONE_NAIL_TEXT)
        if code == plain_injection:
            proc = cat.Proc(proc.kind, proc.role, proc.lay,
                            proc.text.replace(" without imaging guidance", ""))
        text = proc.text.format(site=where.get(code, shown[code]),
                                size=meas[code].get("size", ""), n=n)
        notes[code] = text[0].upper() + text[1:] + "."
        if lacerated and code == first:  # its own closure, the same words in every story
            notes[code] += LESION_CLOSURE[code]
        if lacerated and code == second:  # which wound the sutures closed: only the
            # sutured wound's place, against the lesion's and the laceration's, says so
            notes[code] += (f" Wounds today: the {LESION_WOUND[p[first].role]} wound and a "
                            f"laceration on the {lac_where}, both cleaned and dressed.")
        lines[code] = {"dx": d, "mods": []}
    _contralateral(notes, {c: p[c].kind for c in order}, spelled, rng)
    for code in (paid, denied):
        lines[code]["ptr"] = [dx.ptr(lines[code]["dx"])]
    if not distinct and listed_dx:
        dx.ptr(listed_dx)
    if mod:
        # anatomic modifiers where both lines have a side, in every branch: on a same-side
        # story the biller's RT/LT contradicts the notes
        # (distinct: the two sides' own modifiers when the sides differ, a same-side pair
        # (two toes or joints of one limb) takes XS/59; not distinct: the other side's
        # modifier, about as often as distinct stories get anatomic ones)
        s1, s2 = sides.get(paid, ""), sides.get(denied, "")
        anatomic = s1 in SIDE_FLIP and bool(s2) and rng.random() < 0.35
        if anatomic and (SIDE_FLIP[s1] == s2 if distinct else rng.random() < 0.5):
            lines[paid]["mods"], lines[denied]["mods"] = [s1], [SIDE_FLIP[s1]]
        else:
            lines[denied]["mods"] = [rng.choice(("XS", "59"))]
    kinds = {SPECIALTY[p[c].kind] for c in (first, second)}
    # one specialty does both, or a family practice does two unrelated things
    specialty = SPECIALTY[p[first].kind] if len(kinds) == 1 or p[second].kind in (
        "nerve", "wound") else "family medicine"
    return {"specialty": specialty, "dxs": dx.codes,
            "lines": {c: {"mods": v["mods"], "ptr": v["ptr"]} for c, v in lines.items()},
            "notes": notes, "lay": {paid: p[paid].lay, denied: p[denied].lay}}


def _closure_length(lesion: str, size: float, repair: str, rng: random.Random) -> float:
    """The length (cm) of the simple repair beside a biopsy or an excision of ``size`` cm:
    the linear closure that lesion's own wound needs, inside the repair code's range (CPT
    12001 up to 2.5 cm, 12002 2.6-7.5 cm). An excision with margins is closed as an
    ellipse about three times as long as it is wide (2.5-3.5x); a 4 mm punch closes in a
    line of 0.6-1.0 cm; a shave biopsy's round wound along 1-2 times its width. The same
    law in every branch: where the sutures closed the laceration instead (distinct), the
    laceration is of that length (review round 7, F5: a 7.1 cm repair closing the wound of
    a 1.4 cm excision, a 2.1 cm repair closing a 4 mm punch)."""
    lo, hi = cat.SIZES[repair]
    if cat.PROCS[lesion].role == "excise":
        length = size * (2.5 + rng.random())
    elif lesion == "11104":
        length = 0.6 + rng.randrange(5) / 10
    else:
        length = size * (1 + rng.random())
    floor = 0.5 if repair == "12001" else lo  # 12001: any length up to 2.5 cm
    return round(min(hi, max(floor, length)), 1)


# how a punch biopsy's or an excision's note beside a repair closes its own wound, in every
# story (simple closure is part of these procedures; review round 8b, S1)
LESION_CLOSURE = {"11104": " Punch wound closed with one simple interrupted suture.",
                  "11400": " Excision wound closed with simple interrupted sutures.",
                  "11401": " Excision wound closed with simple interrupted sutures.",
                  "11402": " Excision wound closed with simple interrupted sutures."}


# the wound a biopsy or an excision leaves, as a repair's note names it
LESION_WOUND = {"biopsy": "biopsy", "excise": "excision"}


# a diagnosis coded by the ear its procedure note names (review round 7, F2)
EAR_SIDED_DX = {"92567": {"RT": "H65.91", "LT": "H65.92"}}


def _lacerated_where(one_site: bool, distinct: bool, rng: random.Random, far: int = 14
                     ) -> tuple[int, int, str, str, tuple[int, str]]:
    """Where the lesion's wound, the sutured wound and the laceration are printed in a
    repair-beside-a-lesion story: the lesion's aspect and distance, the sutured wound's, and
    the laceration's (aspect, distance).

    All three are printed at one distance from the landmark, each in cm or mm drawn on its
    own; at one named site the laceration is on the other aspect (the opposite surface of
    the limb, the other side of the spine). The sutured wound is on the laceration's aspect
    (distinct) or the lesion's (not distinct). So the printed numbers have one law whatever
    the branch (any two are equal exactly when their units are), and only the aspects,
    each written in either of its two wordings, tell which wound the sutures closed.
    (Drawing two wounds' distances apart, as two lesions' are, would make the sutured
    wound's number match the laceration's more often in one story than in the other.)"""
    d = rng.randrange(2, far + 1)
    a_les = rng.randrange(2)
    a_lac = 1 - a_les if one_site else rng.randrange(2)
    a_sut = a_lac if distinct else a_les
    les, sut, lac = (_distance(d, rng.random() < 0.5) for _ in range(3))
    return a_les, a_sut, les, sut, (a_lac, lac)


def _distance(cm: int, in_mm: bool) -> str:
    return f"{10 * cm} mm" if in_mm else f"{cm} cm"


def _same_site_distances(distinct: bool, rng: random.Random, far: int = 14
                         ) -> tuple[str, str, bool]:
    """The two printed distances of two skin notes at one named site, and whether they are
    one distance.

    One lesion: the same distance, in one unit (the same numeral) in half of the notes, and
    in cm in one note and mm in the other (N cm against 10N mm) in the other half. Two
    lesions: half at the same distance in one unit on the site's other aspect (the caller
    flips the aspect), half on one aspect at least 3 cm apart with one note in cm and the
    other in mm. So in both stories the numerals are equal exactly when the units are, in
    half of the notes; only converting and comparing the distances (with the aspects) tells
    one lesion from two. (Round 3's red team: the same lesion always printed the same
    phrase, two lesions never did. Review round 6, I2: two lesions printed N cm against
    N mm, so distances under 2 cm, "4 mm from the kneecap" on the calf side, came only in
    distinct stories; every distance is now 2-14 cm in either unit.)"""
    if not distinct or rng.random() < 0.5:  # one distance
        d = rng.randrange(2, far + 1)
        if distinct or rng.random() < 0.5:
            in_mm = rng.random() < 0.5
            return _distance(d, in_mm), _distance(d, in_mm), True
        units = (False, True) if rng.random() < 0.5 else (True, False)
        return _distance(d, units[0]), _distance(d, units[1]), True
    d1 = rng.randrange(2, far + 1)
    d2 = rng.choice([d for d in range(2, far + 1) if abs(d - d1) >= 3])
    in_mm = rng.random() < 0.5
    return _distance(d1, in_mm), _distance(d2, not in_mm), False


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


# Untimed therapy services (evaluations, range-of-motion measurement, supervised modalities)
# are billed once per session whatever their length; their minutes are drawn over the range a
# therapist spends on them. Timed services (15-minute units) are drawn in ``_therapy_minutes``.
UNTIMED_MINUTES = {"97161": (15, 30), "97162": (25, 40), "97163": (40, 60),
                   "97164": (15, 30), "95851": (8, 20), "97012": (10, 20), "97018": (10, 20),
                   "97022": (10, 25)}


def _therapy_minutes(paid: str, denied: str, rng: random.Random) -> tuple[int, int]:
    """Each service's minutes, drawn alike in every story and consistent with the one unit
    billed on each line. CMS counts timed minutes with the 8-minute rule over the session's
    total timed minutes (Pub. 100-04 ch. 5 §20.2): one unit is 8-22 minutes, two units are
    23-37, three are 38-52. A timed service billed at one unit therefore has 8-22 minutes of
    its own; two timed services billed at one unit each total 23-37 timed minutes (fewer than
    23 supports only one unit between them, more than 37 a third). Untimed services take
    their own range (``UNTIMED_MINUTES``). Round 5's red team read fixed per-code minutes
    by token position; now the minutes carry no code or branch."""
    timed = [c not in UNTIMED_MINUTES for c in (paid, denied)]
    if all(timed):
        # the paid line (NCCI column 1) has at least the denied line's minutes, in every
        # story: where they overlap the session makes one unit, and the 8-minute rule bills
        # it as the service with the most minutes (Pub. 100-04 ch. 5 20.2), so a shorter
        # paid line would make a corrected claim for the denied one as right as the denial
        pairs = [(a, b) for a in range(8, 23) for b in range(8, 23) if 23 <= a + b <= 37]
        a, b = rng.choice(pairs)
        return max(a, b), min(a, b)
    # beside an evaluation the timed service shares a real block with it in the story that
    # is not distinct (8+ minutes and half its own time or more) and keeps 8 of its own
    # (``_evaluation_clock``): 16-22 in every story
    low = EVAL_TIMED_MIN if {paid, denied} & cat.EVALUATIONS else 8
    return tuple(rng.randint(*UNTIMED_MINUTES[c]) if c in UNTIMED_MINUTES  # type: ignore
                 else rng.randint(low, 22) for c in (paid, denied))


def _story_therapy(paid: str, denied: str, distinct: bool, mod: bool, rng: random.Random
                   ) -> dict[str, Any]:
    """Two therapy services in one session. Distinct: separate, non-overlapping time
    intervals. Not distinct: the shorter service was done inside the longer one's time."""
    m1, m2 = _therapy_minutes(paid, denied, rng)
    # how each line's therapist wrote its time (``INTERVAL_FORMS``), drawn first: the clock
    # is placed knowing which times the notes print (``_therapy_clock``)
    forms = (rng.randrange(len(INTERVAL_FORMS)), rng.randrange(len(INTERVAL_FORMS)))
    if paid in cat.SITE_DECIDED or denied in cat.SITE_DECIDED:
        # (no active edit or indicator 0 only, see ``_contested``) distinct only at another
        # body site: one after the other in either story, on two sites both codes allow when
        # distinct, on one of them when not
        shared = _shared_sites(paid, denied)
        n1 = rng.choice(shared)
        n2 = rng.choice([r for r in shared if r != n1]) if distinct and len(shared) > 1 else n1
        if distinct and n2 == n1:  # no second shared site: each code at a site it allows
            n2 = rng.choice([r for r in cat.SITE_DECIDED.get(denied, tuple(SITE_REGIONS))
                             if r != n1])
        r1, r2 = (n1, SITE_REGIONS[n1]), (n2, SITE_REGIONS[n2])
        times = _therapy_clock(m1, m2, True, rng, forms)
        assert times is not None  # (not ``exact``: always a layout)
        t1, t2 = times
        return _therapy_notes(paid, denied, (t1, m1, r1), (t2, m2, r2), mod, rng,
                              ("59", "XS"), forms)
    # one region: only the clock decides (gait, balance or general weakness only for
    # services that train function, never for a modality or manual work)
    regions = (THERAPY_REGIONS if {paid, denied} <= FUNCTIONAL
               else [r for r in THERAPY_REGIONS if r[0] in SITE_REGIONS])
    r1 = r2 = rng.choice(regions)
    both_timed = paid not in UNTIMED_MINUTES and denied not in UNTIMED_MINUTES
    # the note forms and an overlapping layout whose printed extent a separate layout can
    # print exactly, drawn again in both stories until they are (``_matchable``)
    while True:
        if {paid, denied} & cat.EVALUATIONS:
            times = _evaluation_clock(m1, m2, paid in cat.EVALUATIONS, distinct, rng, forms,
                                      exact=True)
        else:
            times = _therapy_clock(m1, m2, distinct, rng, forms,
                                   span_cap=ONE_UNIT_MAX if both_timed else None, exact=True)
        if times is not None:
            break
        forms = (rng.randrange(len(INTERVAL_FORMS)), rng.randrange(len(INTERVAL_FORMS)))
    t1, t2 = times
    return _therapy_notes(paid, denied, (t1, m1, r1), (t2, m2, r2), mod, rng, ("59", "XU"),
                          forms)


# how often the two intervals share a printed clock time (a boundary), the same in both
# stories: back-to-back separate sessions share the boundary between them, overlapping ones
# share a start or an end. Two services of equal length never share one in either story (an
# identical interval would share both, which separate sessions cannot)
SHARED_BOUNDARY = 1 / 3


# minutes between two separate services: 1-45, any minute (the patient rests, changes rooms,
# or another patient is seen in between); 0 when they share the boundary
GAPS = range(1, 46)


# the most total timed minutes that still make one unit under the 8-minute rule (23 make two)
ONE_UNIT_MAX = 22


def _therapy_clock(m1: int, m2: int, distinct: bool, rng: random.Random,
                   forms: tuple[int, int] = (0, 0), span_cap: int | None = None,
                   exact: bool = False) -> tuple[int, int] | None:
    """The two services' start minutes (minutes after midnight). Distinct: separate
    intervals, 0-45 minutes apart. Not distinct: the shorter service has fewer than 8 minutes
    outside the longer one's time (wholly inside it, or overhanging one end by 1-7 minutes),
    so its own minutes cannot make a unit: CMS counts a timed service's minutes once (Pub.
    100-04 ch. 5 §20.2, the 8-minute rule) and NCCI ch. XI allows 59/XU only for services in
    separate intervals. ``forms``: each note's ``INTERVAL_FORMS`` entry.

    Whether the two printed intervals share a clock time is drawn first, at the same rate
    (``SHARED_BOUNDARY``) in both stories and only for services of unequal length, so the
    count of shared clock strings says nothing about the branch; only comparing the minutes
    does. (Round 3's red team: identical intervals for "same" made shared strings decide.)
    The clock times the two notes print lie as far apart in both stories: an overlapping
    layout is drawn in both, and a separate one is laid out (which service first, the gap)
    to print the extent, latest printed time less the earliest, that it would have printed,
    or as near as it can. The session is then placed with its last printed time at any
    minute of one window (``LAST_PRINTED``) in both stories, so whether the notes print an
    hour in common, and the minutes of the hour they print, have one law. (Round 7's red
    team: the session was placed from its first minute, and separate services spanned
    23-90 minutes against overlapping ones' at most 36, so "the notes print no hour in
    common -> distinct" passed 0.600 of test and 0.640 of dev, and a printed time after
    18:00 said distinct too. Drawing the hour relation at one rate and placing the session
    to match moved the cue into the printed minutes: the first printed minute at :45 or
    later said "not distinct".)

    ``exact``: only an overlapping layout some separate one prints exactly the extent of
    (``_matchable``), or None after ``EXTENT_TRIES`` draws (the caller draws the forms again).

    ``span_cap`` (two timed services): an overlapping session's distinct timed minutes, the
    longer service plus the overhang, stay at most this many. CMS counts the session's total
    timed minutes (§20.2), so with 23 or more the two units billed would be supported even
    though the intervals overlap, and the denial would be contestable (review round 6, C1)."""
    share = m1 != m2 and rng.random() < SHARED_BOUNDARY
    # the printed extent (latest printed time less the earliest) of an overlapping layout,
    # drawn in both stories; a separate layout prints as close an extent as it can
    gaps = (0,) if share else GAPS
    for _ in range(EXTENT_TRIES):
        t1, t2 = _overlap_layout(m1, m2, share, rng, span_cap)
        if not exact or _matchable(t1, t2, m1, m2, gaps, forms):
            break
    else:
        return None
    if distinct:
        t1, t2 = _separate_like(t1, t2, m1, m2, gaps, forms, rng)
    return _placed(t1, t2, m1, m2, forms, rng)


# Round 8: how many overlapping layouts are drawn for one pair of note forms before the
# forms are drawn again (``_story_therapy``), in both stories
EXTENT_TRIES = 12


def _matchable(t1: int, t2: int, m1: int, m2: int, gaps: Any, forms: tuple[int, int]) -> bool:
    """Whether some separate layout (``_separate_like``) prints exactly the extent the
    overlapping layout ``t1, t2`` prints. Round 8: where none could (both notes printing
    only their starts, or only their ends, put a separate session's printed times at least
    the first service's 8 minutes apart, while an overlap's starts lie 0-14 minutes apart),
    the separate story printed a longer extent: under 10 minutes in 10% of the separate
    sessions against 20% of the overlapping ones (0.555 for the best extent threshold over
    3,362 fresh sessions). A layout no separate one can match is now drawn again in both
    stories, so the printed extent has one law."""
    target = _print_key(t1, t2, m1, m2, forms)
    return any(_print_key(*lay, m1, m2, forms) == target
               for gap in gaps for lay in ((0, m1 + gap), (m2 + gap, 0)))


def _print_key(t1: int, t2: int, m1: int, m2: int, forms: tuple[int, int]
               ) -> tuple[int, bool]:
    """What a layout's printed times show without reading the minutes: their extent and
    whether the two notes print one clock time in common. Round 8: matching the extent
    alone left a printed time in common at 0.121 of separate sessions against 0.087 of
    overlapping ones (back-to-back sessions print their shared boundary under other forms
    than a flush overlap does)."""
    p1, p2 = _printed(t1, m1, forms[0]), _printed(t2, m2, forms[1])
    return max(p1 + p2) - min(p1 + p2), bool(set(p1) & set(p2))


def _separate_like(t1: int, t2: int, m1: int, m2: int, gaps: Any, forms: tuple[int, int],
                   rng: random.Random) -> tuple[int, int]:
    """A separate layout (which service first, a gap from ``gaps``) printing the extent the
    overlapping layout ``t1, t2`` prints, or as near to it as any can (``_therapy_clock``)."""
    cands = [lay for gap in gaps for lay in ((0, m1 + gap), (m2 + gap, 0))]
    key = _print_key(t1, t2, m1, m2, forms)
    exact = [lay for lay in cands if _print_key(*lay, m1, m2, forms) == key]
    if exact:  # (always, where the layout was drawn ``_matchable``)
        return rng.choice(exact)
    target = _extent(t1, t2, m1, m2, forms)
    best = min(abs(_extent(*lay, m1, m2, forms) - target) for lay in cands)
    return rng.choice([lay for lay in cands
                       if abs(_extent(*lay, m1, m2, forms) - target) == best])


def _placed(t1: int, t2: int, m1: int, m2: int, forms: tuple[int, int],
            rng: random.Random) -> tuple[int, int]:
    """The layout shifted so its last printed time falls at any minute of ``LAST_PRINTED``
    (one law in both stories, ``_therapy_clock``)."""
    p1, p2 = _printed(t1, m1, forms[0]), _printed(t2, m2, forms[1])
    residue = rng.randrange(60)
    last = max(p1 + p2)
    # the last printed time at any minute of the window (whole hours long, so every
    # minute of the hour and every hour of it are as likely)
    shifts = [x for x in range(LAST_PRINTED[0] - last, LAST_PRINTED[1] - last + 1)
              if x % 60 == residue]
    shift = rng.choice(shifts)
    return t1 + shift, t2 + shift


# the window of the session's last printed clock time: 08:00-18:59, eleven whole clock
# hours (so every hour of it is as likely, whatever minute of the hour the session ends)
LAST_PRINTED = (8 * 60, 19 * 60 - 1)


def _printed(t: int, m: int, form: int) -> tuple[int, ...]:
    """The clock times a note prints for a service from minute ``t`` for ``m`` minutes in
    ``INTERVAL_FORMS[form]``: start and end, the start, or the end."""
    return ((t, t + m), (t,), (t + m,))[form]


def _extent(t1: int, t2: int, m1: int, m2: int, forms: tuple[int, int]) -> int:
    """Minutes between the earliest and the latest clock time the two notes print."""
    printed = _printed(t1, m1, forms[0]) + _printed(t2, m2, forms[1])
    return max(printed) - min(printed)


def _overlap_layout(m1: int, m2: int, share: bool, rng: random.Random,
                    span_cap: int | None) -> tuple[int, int]:
    """Two overlapping services' starts relative to the session's first minute (0);
    ``share``: the two intervals share a boundary (see ``_therapy_clock``)."""
    long_first = m1 >= m2
    lo, sh = (m1, m2) if long_first else (m2, m1)
    if share:  # wholly inside, flush with the start or the end
        offset = rng.choice((0, lo - sh))
    else:  # wholly inside off both ends, or overhanging one end by 1-7 minutes
        offset = rng.choice([o for o in range(-7, lo - sh + 8) if o not in (0, lo - sh)
                             and (span_cap is None
                                  or lo + max(0, -o, o - (lo - sh)) <= span_cap)])
    t_long, t_short = max(0, -offset), max(0, offset)
    return (t_long, t_short) if long_first else (t_short, t_long)


# Review round 8b, C1: the fewest minutes a timed service beside an evaluation has, in every
# story; the fewest minutes it shares with the evaluation where they overlap
EVAL_TIMED_MIN = 16
EVAL_OVERLAP_MIN = 8


def _eval_overlap(m_timed: int) -> tuple[int, int]:
    """The minutes a timed service of ``m_timed`` minutes shares with an evaluation it
    overlaps (the story that is not distinct): at least ``EVAL_OVERLAP_MIN`` and at least
    half its own time, leaving it 8 or more minutes of its own."""
    return max(EVAL_OVERLAP_MIN, -(-m_timed // 2)), m_timed - 8


def _evaluation_clock(m1: int, m2: int, first_is_evaluation: bool, distinct: bool,
                      rng: random.Random, forms: tuple[int, int] = (0, 0),
                      exact: bool = False) -> tuple[int, int] | None:
    """The start minutes of an evaluation or re-evaluation (untimed, 97161-97164) and a timed
    service. Distinct: separate intervals, 1-45 minutes apart. Not distinct: the two overlap
    by 1 minute or more, and the timed service keeps 8 or more minutes outside the
    evaluation, so its one unit stands under the 8-minute rule (Pub. 100-04 ch. 5 20.2: an
    evaluation's minutes never count toward a timed code) while the evaluation, done during
    the treatment and not in a separate interval, has no NCCI bypass (ch. XI): the denial of
    the evaluation stands and nothing else was billable in its place. (Review round 7: with
    the timed service wholly inside the evaluation, fewer than 8 minutes of its own, the
    timed line was the one not billable, and a corrected claim for the evaluation was as
    defensible as the denial.) The shared block is a real one: 8 minutes or more and at
    least half the timed service (``_eval_overlap``; review round 8b, C1: an overlap drawn
    from 1 minute, 17 of 42 overlapping 1-2 minutes, read as a clock slip next to the
    separate story's 1-minute gap, and a reviewer would appeal). The two intervals never
    share a printed clock time in either story (an overlap flush with the evaluation's start
    or end would leave the timed service fewer than 8 minutes of its own), so a shared clock
    string says nothing here."""
    m_eval, m_timed = (m1, m2) if first_is_evaluation else (m2, m1)
    # the overlapping layout is drawn in both stories and a separate one laid out to print
    # as near its extent as it can, then placed by one law (as ``_therapy_clock`` does)
    for _ in range(EXTENT_TRIES):  # (``exact``: as in ``_therapy_clock``)
        overlap = rng.randint(*_eval_overlap(m_timed))
        if rng.random() < 0.5:  # the timed service first, running on into the evaluation
            t_timed, t_eval = 0, m_timed - overlap
        else:  # the evaluation first, the timed service starting before it ended
            t_eval, t_timed = 0, m_eval - overlap
        t1, t2 = (t_eval, t_timed) if first_is_evaluation else (t_timed, t_eval)
        if not exact or _matchable(t1, t2, m1, m2, GAPS, forms):
            break
    else:
        return None
    if distinct:
        t1, t2 = _separate_like(t1, t2, m1, m2, GAPS, forms, rng)
    return _placed(t1, t2, m1, m2, forms, rng)


# the three ways therapists write a service's time, each drawn per note: start and end,
# start and duration, duration and end (round 5's red team read a fixed token position as
# the same quantity in every note)
INTERVAL_FORMS = (("{a}–{b}", "from {a} to {b}"),
                  ("{a} for {m} min", "{m} min starting {a}"),
                  ("{m} min ending {b}", "{m} min, finished {b}"))


def _shared_sites(a: str, b: str) -> list[str]:
    """The body sites both therapy codes can be done at (``catalog.SITE_DECIDED``), or the
    first code's sites when they share none."""
    allowed = {c: cat.SITE_DECIDED.get(c, tuple(SITE_REGIONS)) for c in (a, b)}
    return [r for r in allowed[a] if r in allowed[b]] or list(allowed[a])


def _therapy_notes(paid: str, denied: str, one: tuple[int, int, tuple[str, str]],
                   two: tuple[int, int, tuple[str, str]], mod: bool, rng: random.Random,
                   bypass: tuple[str, str], forms: tuple[int, int]) -> dict[str, Any]:
    """The two lines' notes and modifiers; ``bypass``: the modifiers a biller appends
    (XS for another site, XU for another interval, or 59); ``forms``: each line's
    ``INTERVAL_FORMS`` entry, drawn per line (therapists write the clock in more than one
    way)."""
    (t1, m1, r1), (t2, m2, r2) = one, two
    dx = _Dx()
    notes, lines = {}, {}
    for code, t, m, region, form in ((paid, t1, m1, r1, forms[0]),
                                     (denied, t2, m2, r2, forms[1])):
        clock = rng.choice(INTERVAL_FORMS[form])
        when = clock.format(a=_clock(t), b=_clock(t + m), m=m)
        notes[code] = (f"{cat.THERAPY[code][1][0].upper()}{cat.THERAPY[code][1][1:]}, "
                       f"{when}, {region[0]}.")
        lines[code] = {"mods": ["GP"], "ptr": [dx.ptr(region[1])]}
    if mod:
        lines[denied]["mods"].append(rng.choice(bypass))
    return {"specialty": "physical therapy", "dxs": dx.codes, "lines": lines, "notes": notes,
            "lay": {paid: cat.THERAPY[paid][0], denied: cat.THERAPY[denied][0]}}


def _blur_pointers(story: dict[str, Any], paid: str, denied: str, family: str,
                   distinct: bool, rng: random.Random) -> None:
    """Every line points to every diagnosis on the claim (as many practices bill), in a
    shuffled diagnosis order: how many pointers a line has, and which, says nothing about
    whether the notes document a distinct service."""
    del family, distinct
    dxs = list(story["dxs"])
    others = [h for h, _ in cat.HISTORY if h not in dxs]
    rng.shuffle(others)
    dxs += others[:max(0, rng.choice((3, 4)) - len(dxs))]
    rng.shuffle(dxs)
    story["dxs"] = dxs
    letters = ["ABCDEFGHIJKL"[i] for i in range(len(dxs))]
    story["lines"][paid]["ptr"] = list(letters)
    story["lines"][denied]["ptr"] = list(letters)


STORIES = {"em": _story_em, "proc": _story_proc, "apart": _story_proc,
           "therapy": _story_therapy}


# the months a clinic gives the seasonal flu vaccine (CDC/ACIP: from September, through
# March at the latest in these practices; review round 7, F4: flu shots in May and June).
# Outside them the administration (90471, the same code for any vaccine) is of a vaccine
# given all year, drawn alike in every branch
FLU_SEASON = frozenset((9, 10, 11, 12, 1, 2, 3))
YEAR_ROUND_VACCINES = (
    ("Tdap vaccine", "the Tdap booster recommended at the previous visit (last tetanus "
     "shot over 10 years ago)", "Tdap shot"),
    ("pneumococcal conjugate vaccine (PCV20)", "the pneumococcal vaccine recommended at the "
     "previous visit", "pneumonia shot"),
)


def _vaccine_in_season(story: dict[str, Any], dos: dt.date, rng: random.Random) -> None:
    """A flu vaccine's visit out of the flu season (``FLU_SEASON``) gives a year-round
    vaccine instead: the notes and the lay words are rewritten in place."""
    if dos.month in FLU_SEASON or not any(
            "nfluenza vaccine" in t for t in story["notes"].values()):
        return
    name, reason, lay = rng.choice(YEAR_ROUND_VACCINES)
    for code, text in story["notes"].items():
        text = text.replace("the seasonal flu vaccine", reason)
        text = text.replace("Influenza vaccine", name[0].upper() + name[1:])
        story["notes"][code] = text.replace("influenza vaccine", name).replace("flu shot", lay)
    story["lay"] = {c: lay if v == "flu shot" else v for c, v in story["lay"].items()}


# -- the generator -------------------------------------------------------------------------
def generate(seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
    """One scenario: the half (appeal or not) from the seed pair, branch, family and pair from
    the rng within the seed's split, indicator and amounts from the bundle."""
    data = _derived(ref)
    ref = data["memo"]
    split = split_of(seed, TASK) or "train"
    branch = branch_of(seed, rng)
    status = STATUS[branch]
    family, paid_first = layout_of(seed, rng, branch)
    fitted = data["balanced"][split].get(family, {}).get(status)
    by_code = data["anchors"][split][status][family]
    weights = data["weights"][split][status][family]
    if fitted is not None:  # paid and denied codes distributed alike across statuses
        by_code, weights = {"": fitted[0]}, {"": fitted[1]}
    sigs = data["sigs"][split][family]
    if sigs and fitted is None:  # the code families first, alike for every status
        sig = rng.choice(sigs)
        keep = {code: [i for i, (c1, c2, _) in enumerate(pairs) if _sig(c1, c2) == sig]
                for code, pairs in by_code.items()}
        keep = {code: idx for code, idx in keep.items() if idx}
        if keep:
            by_code = {code: [by_code[code][i] for i in idx] for code, idx in keep.items()}
            weights = {code: [weights[code][i] for i in idx] for code, idx in keep.items()}
    anchor = rng.choice(list(by_code))
    paid, denied, family = rng.choices(by_code[anchor], weights=weights[anchor])[0]
    distinct = {"b": True, "c": True, "a1m": False, "a1n": False}.get(branch)
    if distinct is None:
        # no active edit: the notes always show a distinct service for a therapy pair (two
        # timed services cannot share minutes, edit or not); indicator 0: either
        # indicator 0: mostly a distinct service documented, which no modifier can unbundle
        # (NCCI: indicator 0 admits no bypass whatever the records), so an agent that reads
        # the notes but not the edit's indicator appeals or corrects these wrongly (round 4's
        # red team: without the lookup the heuristic lost only 0.056)
        distinct = (family == "apart" or (branch == "d" and family == "therapy")
                    or rng.random() < 0.8)
    mod = {"b": True, "a1m": True, "c": False, "a1n": False}.get(branch)
    if mod is None:
        mod = rng.random() < 0.5
    story = STORIES[family](paid, denied, distinct, mod, rng)
    _blur_pointers(story, paid, denied, family, distinct, rng)
    paid_mods = list(story["lines"][paid]["mods"])
    denied_mods = list(story["lines"][denied]["mods"])

    loc = pick_locality(rng, ref)
    plan = _plan(ref, data, rng)
    insurer = rng.choice(INSURERS)
    practice = story.get("practice") or rng.choice(PRACTICE_NAMES[story["specialty"]])
    patient = person(rng)
    case_id = (f"CLR-{rng.randrange(10**5, 10**6)}-"
               f"{''.join(rng.choice(CODE_CHARS) for _ in range(4))}")
    claim_id = ident(rng, "CLM", 8)
    plan_id = ident(rng, "PLN", 6)
    account = ident(rng, "ACCT", 7)
    provider = {"name": practice, "npi": npi(rng), "specialty": story["specialty"]}
    carc, rarc = rng.choice(DENIALS)
    markup = rng.choice(MARKUPS)
    emotional = rng.choice(("frustrated", "distressed"))

    # dates: service in 2026 after mid-February, EOB 2-5 weeks later, today well inside
    # the 180-day internal-appeal window
    # an office practice's business day (no weekend or federal holiday: domain review)
    dos = _service_date(seed, rng)
    _vaccine_in_season(story, dos, rng)
    submitted = dos + dt.timedelta(days=rng.randrange(1, 8))
    processed = submitted + dt.timedelta(days=rng.randrange(10, 29))
    today = processed + dt.timedelta(days=rng.randrange(12, 90))

    fee_paid = _fee(ref, data, paid, loc)
    fee_denied = _fee(ref, data, denied, loc)
    billed_paid = billed_cents(fee_paid, markup)
    billed_denied = billed_cents(fee_denied, markup)

    # an older, unrelated, fully processed office visit: the distractor, and what it put
    # toward this year's deductible and out-of-pocket maximum
    prior_code = rng.choice(PRIOR_CODES.get(story["specialty"], PRIOR_E_M))
    # (in January: the recent visit of an office-visit account lies from February 2 on)
    prior_dos = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randrange(25))
    prior_fee = _fee(ref, data, prior_code, loc)
    prior_share = patient_share(prior_code, prior_fee, plan, plan["deductible"], plan["oop_max"])
    prior_met = deductible_credit(prior_share, plan, plan["deductible"])
    prior = {"code": prior_code, "dos": prior_dos, "fee": prior_fee,
             "billed": billed_cents(prior_fee, markup), "share": prior_share,
             "deductible_met": prior_met, "claim_id": ident(rng, "CLM", 8),
             "processed": prior_dos + dt.timedelta(days=rng.randrange(10, 25))}
    met_before = prior_met
    oop_before = prior_share["patient"]
    extra_pct = rng.choice(DEDUCTIBLE_MET_PCT)
    extra = pct_of(plan["deductible"] - met_before, extra_pct)
    met_before += extra
    oop_before += extra
    share = patient_share(paid, fee_paid, plan, plan["deductible"] - met_before,
                          plan["oop_max"] - oop_before)

    # line order as the provider billed it: either way in every branch (``layout_of``)
    n_paid, n_denied = (1, 2) if paid_first else (2, 1)
    # the clinician who rendered (and signs) the claim's services, in every scenario
    provider["rendering_clinician"] = _clinician(rng, story["specialty"])
    recent = None  # a recent earlier visit at the group (office visits only)
    if "assessed_today" in story:  # the visit's other problem: who assessed it, and when
        provider["offices"] = _group_offices(practice, story["kinds"], rng)
        # one group under one taxpayer id, its offices under their own names (review round
        # 7, F6: a clinician of the billing practice assessing at an office of another name
        # read as one clinician at two groups); the same words in every scenario
        provider["tin"] = f"{rng.randrange(10, 100)}-{rng.randrange(10**6, 10**7)}"
        provider["group_practice"] = GROUP_PRACTICE
        stamp, cited = _assessed_stamp(story["assessed_today"], dos,
                                       provider["rendering_clinician"], provider["offices"],
                                       story["kinds"], rng)
        story["notes"] = {c: t.replace(ASSESSED_SLOT, stamp) for c, t in story["notes"].items()}
        # the account lists a recent earlier visit in every office-visit scenario: the
        # one a carried-forward entry came from (domain review: it was missing), otherwise
        # another drawn alike
        recent = cited or rng.choice(_recent_days(dos))
    # the claim lists the patient's other conditions too (3 or 4 diagnoses in all), so the
    # length of the list says nothing about how many problems the visit managed
    dxs = list(story["dxs"])
    ptr_paid = story["lines"][paid]["ptr"]
    ptr_denied = story["lines"][denied]["ptr"]

    carc_desc = _text(ref, data, "carc", carc)
    rarc_desc = _text(ref, data, "rarc", rarc)
    paid_adj = [{"group": "CO", "carc": "45", "amount": dollars(billed_paid - fee_paid),
                 "description": _text(ref, data, "carc", "45")}]
    for kind, carc_code in (("deductible", "1"), ("coinsurance", "2"), ("copay", "3")):
        if share[kind]:
            paid_adj.append({"group": "PR", "carc": carc_code, "amount": dollars(share[kind]),
                             "description": _text(ref, data, "carc", carc_code)})
    eob_paid = {"line": n_paid, "hcpcs": paid, "modifiers": paid_mods,
                "billed": dollars(billed_paid), "allowed": dollars(fee_paid),
                "deductible": dollars(share["deductible"]),
                "coinsurance": dollars(share["coinsurance"]), "copay": dollars(share["copay"]),
                "plan_paid": dollars(share["plan_paid"]),
                "patient_responsibility": dollars(share["patient"]), "adjustments": paid_adj,
                "rarcs": [],
                "allowed_basis": _cached_ref(
                    data, ("basis", paid, loc["mac"], loc["locality"]),
                    lambda: fee_basis(ref, paid, loc))}
    eob_denied = {"line": n_denied, "hcpcs": denied, "modifiers": denied_mods,
                  "billed": dollars(billed_denied), "allowed": "0.00", "deductible": "0.00",
                  "coinsurance": "0.00", "copay": "0.00", "plan_paid": "0.00",
                  "patient_responsibility": "0.00",
                  "adjustments": [{"group": "CO", "carc": carc, "amount": dollars(billed_denied),
                                   "description": carc_desc}],
                  "rarcs": [{"code": rarc, "description": rarc_desc}]}
    eob_lines = sorted((eob_paid, eob_denied), key=lambda r: r["line"])

    denial_note = (f"Line {n_denied} ({denied}) denied: included in line {n_paid} "
                   f"({paid}) under the NCCI procedure-to-procedure edit for this pair "
                   f"(CO-{carc}, {rarc}). Provider liability; not billable to the member.")
    claim_lines = []
    prov_lines = []
    for n, code, mods_, billed, ptr in sorted(
            ((n_paid, paid, paid_mods, billed_paid, ptr_paid),
             (n_denied, denied, denied_mods, billed_denied, ptr_denied))):
        desc = _text(ref, data, "describe", code)
        claim_lines.append({"line": n, "hcpcs": code, "modifiers": list(mods_), "units": 1,
                            "billed": dollars(billed), "diagnosis_pointers": list(ptr),
                            "description": desc})
        prov_lines.append({"line": n, "hcpcs": code, "modifiers": list(mods_), "units": 1,
                           "charge": dollars(billed), "diagnosis_pointers": list(ptr),
                           "description": desc})

    # every record draws its own number: no shared suffix tells a claim's own records from
    # the distractor (an EOB of another claim)
    ids = {k: f"{p}-{rng.randrange(10**6, 10**7)}"
           for k, p in (("claim", "CR"), ("eob", "EOB"), ("provider", "PRV"), ("plan", "PLAN"),
                        ("prior_eob", "EOB"))}
    claim_record = {
        "claim_id": claim_id, "patient_id": case_id, "plan_id": plan_id, "insurer": insurer,
        "provider": {"name": practice, "npi": provider["npi"]}, "place_of_service": "11",
        "date_of_service": iso(dos), "submitted_date": iso(submitted),
        "status": "partially_denied", "diagnoses": dxs, "lines": claim_lines,
        "total_billed": dollars(billed_paid + billed_denied),
        "adjudication": [
            {"line": n_paid, "status": "paid"},
            {"line": n_denied, "status": "denied", "group": "CO", "carc": carc, "rarc": rarc,
             "reason": "bundled"}],
        "adjudication_note": denial_note,
    }
    eob = {
        "claim_id": claim_id, "plan_id": plan_id, "insurer": insurer, "member": patient,
        "provider": practice, "date_of_service": iso(dos), "processed_date": iso(processed),
        "lines": eob_lines,
        "totals": {"billed": dollars(billed_paid + billed_denied), "allowed": dollars(fee_paid),
                   "plan_paid": dollars(share["plan_paid"]),
                   "patient_responsibility": dollars(share["patient"])},
        "accumulators": {"deductible_met_ytd": dollars(
                             met_before + deductible_credit(share, plan,
                                                            plan["deductible"] - met_before)),
                         "oop_met_ytd": dollars(oop_before + share["patient"]),
                         "deductible": dollars(plan["deductible"]),
                         "oop_max": dollars(plan["oop_max"])},
        "messages": [f"Line {n_denied}: this service is bundled into another service billed "
                     "the same day and is not paid separately. You are not responsible for "
                     "the denied amount."],
    }
    notes = [f"Line {n} ({code}): {story['notes'][code]}" for n, code in sorted(
        ((n_paid, paid), (n_denied, denied)))]
    notes.append(f"{insurer} denied line {n_denied} as bundled (CO-{carc}). Billing office "
                 f"position: {denied} was a separate service and should be paid; "
                 "balance held, not billed to the patient while this is open.")
    statement: dict[str, Any] = {
        "statement_date": iso(processed + dt.timedelta(days=5)),
        "charges": dollars(billed_paid + billed_denied),
        "insurance_paid": dollars(share["plan_paid"]),
        "contractual_adjustments": dollars(billed_paid - fee_paid),
        "held_pending_insurer": dollars(billed_denied),
        "patient_balance": dollars(share["patient"]),
        "account_history": [{
            "date_of_service": iso(prior["dos"]), "claim_id": prior["claim_id"],
            "description": _text(ref, data, "describe", prior["code"]), "balance": "0.00"}],
    }
    if recent is not None:
        # listed at the level of the problem the visit's plan manages, in every branch: a
        # carried-forward plan came from that visit, and a random lower level (chest pressure
        # with urgent stress testing as 99212) did not fit it (review round 6, I1)
        statement["account_history"].append({
            "date_of_service": iso(recent), "claim_id": ident(rng, "CLM", 8),
            "description": _text(ref, data, "describe", story["level"]),
            "balance": "0.00"})
    provider_record = {
        "claim_id": claim_id, "provider": provider, "patient_account": account,
        "patient_name": patient, "date_of_service": iso(dos), "place_of_service": "11",
        "diagnoses": dxs, "lines": prov_lines, "statement": statement, "notes": notes,
    }

    artifacts: list[dict[str, Any]] = [
        {"artifact_id": ids["claim"], "type": "claim_record", "party": "insurer",
         "key": claim_id, "distractor": False, "data": claim_record},
        {"artifact_id": ids["eob"], "type": "eob", "party": "insurer", "key": claim_id,
         "distractor": False, "data": eob},
        {"artifact_id": ids["provider"], "type": "provider_record", "party": "provider",
         "key": claim_id, "distractor": False, "data": provider_record},
        {"artifact_id": ids["plan"], "type": "plan_document", "party": "insurer",
         "key": plan_id, "distractor": False,
         "data": {**plan_document(plan, plan_id, insurer), "claim_editing": CLAIM_EDITING}},
        _prior_eob(ref, data, prior, ids["prior_eob"], plan_id, insurer, patient, practice),
    ]

    ncci_ref = _cached_ref(data, ("ncci", paid, denied), lambda: _ncci(ref, paid, denied))
    references = [
        _cached_ref(data, ("code", paid, loc["mac"], loc["locality"]),
                    lambda: code_reference(ref, paid, loc)),
        _cached_ref(data, ("code", denied, loc["mac"], loc["locality"]),
                    lambda: code_reference(ref, denied, loc)),
        ncci_ref,
        regulation("appeal_rights"),
        regulation("cost_sharing"),
        deadline("internal_appeal", processed, 180, today,
                 "180 calendar days from receipt of the adverse benefit determination "
                 "(the EOB's processed date)", "29 CFR 2560.503-1(h)(3)(i); 45 CFR "
                 "147.136(b)"),
    ]

    finding, party, resolution, reason = OUTCOME[branch]
    dos_text = f"{dos:%B} {dos.day}, {dos.year}"
    complaint = rng.choice(COMPLAINTS).format(
        claim=claim_id, denied=story["lay"][denied], paid=story["lay"][paid],
        was="were" if _plural(story["lay"][denied]) else "was",
        it="they are" if _plural(story["lay"][denied]) else "it is",
        it_was="they were" if _plural(story["lay"][denied]) else "it was",
        it_obj="them" if _plural(story["lay"][denied]) else "it",
        denied_code=denied, paid_code=paid, dos=dos_text, provider=practice,
        billed=dollars(billed_denied), insurer=insurer)
    indicator = ncci_ref["data"].get("modifier_indicator", "none")
    relevant = [ids["claim"], ids["provider"], ncci_ref["artifact_id"]]
    expected = {
        "finding": finding, "responsible_party": party,
        # a legitimate CO denial is the provider's write-off: naming the provider is as right
        "responsible_party_alt": "provider" if finding == "legitimate_denial" else party,
        "resolution_type": resolution,
        "appeal_reason": reason, "amount_cents": fee_denied,
        "denied_billed_cents": billed_denied, "modifier_indicator": indicator,
        "ncci_pair": f"{paid}/{denied}", "paid_code": paid, "denied_code": denied,
        "ncci_ref_id": ncci_ref["artifact_id"], "provider_record_id": ids["provider"],
        "claim_record_id": ids["claim"], "eob_id": ids["eob"],
        "deadline_type": "internal_appeal", "relevant_ids": relevant,
        "must_cite": [ids["provider"], ncci_ref["artifact_id"]],
    }
    variant = {
        "branch": branch, "family": family, "pair": f"{paid}/{denied}", "split_pool": split,
        "edit_status": ncci_ref["data"]["status"], "modifier_indicator": indicator,
        "distinct_documented": distinct, "claim_modifiers": {paid: paid_mods,
                                                             denied: denied_mods},
        "bypass_modifier_on_claim": mod,
        "denial": {"group": "CO", "carc": carc, "rarc": rarc}, "markup_pct": markup,
        "locality": {"mac": loc["mac"], "locality": loc["locality"]},
        "plan_template": plan["plan_id"], "deductible_met_extra_pct": extra_pct,
        "distractor": True,
    }
    case = {"case_id": case_id, "patient_id": case_id, "patient_name": patient,
            "patient_complaint": complaint, "emotional_state": emotional, "today": iso(today),
            "claim_id": claim_id, "plan_id": plan_id}
    return {"case": case, "artifacts": artifacts, "references": references, "counters": [],
            "expected": expected, "variant": variant}


def _prior_eob(ref: Any, data: dict[str, Any], prior: dict[str, Any], eob_id: str, plan_id: str,
               insurer: str, patient: str, practice: str) -> dict[str, Any]:
    """The distractor: an earlier, unrelated office visit, processed without any denial."""
    share = prior["share"]
    adj = [{"group": "CO", "carc": "45", "amount": dollars(prior["billed"] - prior["fee"]),
            "description": _text(ref, data, "carc", "45")}]
    for kind, carc_code in (("deductible", "1"), ("coinsurance", "2"), ("copay", "3")):
        if share[kind]:
            adj.append({"group": "PR", "carc": carc_code, "amount": dollars(share[kind]),
                        "description": _text(ref, data, "carc", carc_code)})
    line = {"line": 1, "hcpcs": prior["code"], "modifiers": [], "billed": dollars(prior["billed"]),
            "allowed": dollars(prior["fee"]), "deductible": dollars(share["deductible"]),
            "coinsurance": dollars(share["coinsurance"]), "copay": dollars(share["copay"]),
            "plan_paid": dollars(share["plan_paid"]),
            "patient_responsibility": dollars(share["patient"]), "adjustments": adj,
            "rarcs": []}
    eob = {"claim_id": prior["claim_id"], "plan_id": plan_id, "insurer": insurer,
            "member": patient, "provider": practice, "date_of_service": iso(prior["dos"]),
            "processed_date": iso(prior["processed"]), "lines": [line],
            "totals": {"billed": dollars(prior["billed"]), "allowed": dollars(prior["fee"]),
                       "plan_paid": dollars(share["plan_paid"]),
                       "patient_responsibility": dollars(share["patient"])},
            "accumulators": {"deductible_met_ytd": dollars(prior["deductible_met"]),
                             "oop_met_ytd": dollars(share["patient"])},
            "messages": []}
    return {"artifact_id": eob_id, "type": "eob", "party": "insurer",
            "key": prior["claim_id"], "distractor": True, "data": eob}
