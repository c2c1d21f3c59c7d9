"""Scenario generator for ``deductive_liability``: one office claim, one planted billing error.

The patient's correct balance is an arithmetic chain: real 2026 MPFS non-facility fees at a
real locality are the contracted (allowed) amounts, the plan template's cost sharing turns
them into copay / deductible / coinsurance, payments come from the ledger and the processor
log. One error is planted somewhere in that chain and the expected outcome (who is
responsible, which filing, how much the patient was overcharged, to the cent) is derived
from the very numbers the artifacts show.

Findings (``variant.kind``; weights in ``KINDS``) and where the evidence lives:

* ``copay_not_credited`` — copay captured at check-in (processor log) never posted on the
  ledger/statement → provider; balance_correction where the open balance covers the
  overcharge, else refund_request (both, split, where a part payment left less open).
* ``duplicate_charge`` — the practice ran the card twice (check-in copay or online statement
  payment: two captures seconds apart, no void/refund). The practice holds the money, so the
  practice (``provider``) refunds it: refund_request, or balance_correction when the provider
  record's stated credit policy applies overpayments to an open balance and one is owed.
* ``duplicate_posting`` — one charge posted twice on the ledger, keyed at two units in one
  charge row: a claim line while the claim went out at one (perhaps with the CO-45 write-down
  of both units, so the patient is billed its allowed amount again), or, where the patient
  bought one at this check-in, the self-pay item whose sale the card paid once (round 13) →
  provider; the filing as for any practice overstatement.
* ``coinsurance_on_billed`` — coinsurance computed on the billed charge instead of the
  allowed amount, either on the EOB (insurer / claim_reprocessing) or on the provider's
  statement (provider / balance_correction or refund_request; ``balance_billing`` is accepted
  as the finding too).
* ``deductible_already_met`` — the EOB applied deductible although the plan's accumulator
  shows it met → insurer / claim_reprocessing.
* ``balance_billing`` — an in-network provider billed the CO-45 difference → provider /
  balance_correction or refund_request.
* ``oop_max_exceeded`` — the plan's accumulator leaves less out-of-pocket room than the
  claim's cost sharing, and the EOB ignored the cap → insurer / claim_reprocessing.
* ``no_error`` — the bill is right (perhaps surprisingly: deductible not yet met, coinsurance
  on a procedure, the OOP cap legitimately lowering the share, a refunded old double charge,
  a voided and re-run payment) → responsible party ``none``, resolution ``no_action``.

``expected.amount_cents`` is the overcharge: what the patient was asked to pay (or paid)
beyond what they truly owe — the refund, or the reduction of the balance. Where nothing is
wrong it is the patient's correct share of the visit, which the advocate confirms. Where the
practice's policy splits a duplicate payment between the open balance and a refund,
``amount_alternatives`` also accepts the part each filing covers.

No shortcut by construction (the red team's attacks, closed):

* The complaint is drawn from generic templates independently of the finding; the deadline
  references are the same two, worded the same way, in every scenario; every record id draws
  its own number, so distractors share the id shape of the case's records.
* Member states (issue 8: an outcome rests on a relation between fields, never on where one
  value falls): a member is close to the OOP maximum with the same probability
  (``CLOSE_SHARE``) in every branch (close to the cap the plan of record has the deductible
  met; an insurer's stale deductible total then still shows some left), with room left drawn
  in dollars independently of the claim
  (``CLOSE_ROOM``) — the cap binds only where that room is short of the claim's share, so an
  ignored cap differs from an honoured one only by room against share. An insurer's stale
  totals (an ignored cap, a deductible applied twice) are themselves ordinary member states,
  drawn as the plan's are; the stale deductible total lags the plan by what a claim processed
  elsewhere added (``STALE_LAG_MAX``), its OOP total by the same dollars; elsewhere the
  EOB's totals lag by the same law wherever that leaves this claim's cost sharing as it is
  (round 10b: a lag alone is no error). The statement is
  unpaid, paid in part or paid in full (``PAY_STATES``) in every branch; refund vs correction
  follows the open balance against the overcharge.
* Count signatures: a self-pay item bought at check-in (a second capture and a charge with its
  payment on the ledger), a charge entered twice and reversed, CO-45 posted per line, a
  statement paid in two parts, the older visit outside the ledger's export, a copay billed on
  the statement instead of collected: each occurs in every branch, so counts of captures,
  charges, adjustments or payments say nothing alone. A balance-billing practice wrote off
  nothing, or only one line's difference.
* Record fields: claim item 29 (amount paid) is drawn independently; one chargemaster per
  practice prices to the cent (no divisibility cue in coinsurance on billed).
* Citations: ``relevant_ids`` are the records that show this finding, and ``decisive_ids``
  (which the diagnosis must cite) the ones without which it cannot be seen.
* On dev and test the findings follow ``KINDS`` exactly (stratified), so no split drifts.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ...scenario import scenario_salt, side_stream
from ...splits import seeds, split_of
from .. import common as C
from ..common import weighted_choice as _weighted
from ..us_calendar import is_business_day, utc_offset

TASK = "deductive_liability"

# finding (and, for coinsurance on billed, whose document erred) -> weight
KINDS: tuple[tuple[str, int], ...] = (
    ("copay_not_credited", 4), ("duplicate_charge", 5), ("duplicate_posting", 4),
    ("coinsurance_on_billed:insurer", 6), ("coinsurance_on_billed:provider", 6),
    ("deductible_already_met", 5), ("balance_billing", 5), ("oop_max_exceeded", 5),
    ("no_error", 10),
)
_STRATA: dict[str, list[str]] = {}


def _stratum(seed: int) -> str | None:
    """On dev and test the findings follow ``KINDS`` exactly (largest-remainder quotas in a
    fixed shuffled order), so a small split cannot drift from the intended shares; train
    (and any seed outside the splits) draws them from the scenario's rng."""
    split = split_of(seed, TASK)
    if split not in ("dev", "test"):
        return None
    salt = scenario_salt()  # a salted (private) set is stratified in its own order
    key = f"{split}:salt:{salt}" if salt else split
    if key not in _STRATA:
        r = seeds(split, TASK)
        total = sum(w for _, w in KINDS)
        quota = {k: len(r) * w // total for k, w in KINDS}
        rest = sorted(KINDS, key=lambda kw: (-(len(r) * kw[1] % total), kw[0]))
        for k, _ in rest[:len(r) - sum(quota.values())]:
            quota[k] += 1
        seq = [k for k, _ in KINDS for _ in range(quota[k])]
        random.Random(f"{TASK}:{key}:strata").shuffle(seq)
        _STRATA[key] = seq
    return _STRATA[key][seed - seeds(split, TASK).start]
MARKUPS = (115, 120, 125, 130, 135, 140, 150, 165, 180)  # chargemaster = % of allowed
EM_NEW = ("99202", "99203", "99204", "99205")
EM_EST = ("99212", "99213", "99214", "99215")
# practice -> (specialty, copay benefit, procedures it performs, E/M diagnoses)
PRIMARY_DX = ("I10", "E11.9", "J06.9", "M54.50", "E78.5", "K21.9", "J01.90", "R05.1")
# established-visit levels a clinician would defend for the visit's diagnosis (CPT 2021+ MDM,
# DOMAIN.md §9): a self-limited problem (cold, cough, seborrheic keratosis, dermatitis) is
# straightforward or low (99212/99213); one stable chronic illness is low (99213); acute low
# back or knee pain with prescription management is low or moderate (99213/99214). No
# diagnosis here supports 99215.
DX_EM_LEVELS: dict[str, tuple[str, ...]] = {
    "I10": ("99213",), "E11.9": ("99213",), "E78.5": ("99213",), "K21.9": ("99213",),
    "M54.50": ("99213", "99214"),
    "J06.9": ("99212", "99213"), "J01.90": ("99212", "99213"), "R05.1": ("99212", "99213"),
    "M25.561": ("99213", "99214"), "M17.11": ("99213",), "M17.12": ("99213",),
    "L57.0": ("99212", "99213"), "L72.0": ("99212", "99213"), "L82.1": ("99212",),
    "L30.9": ("99212", "99213"),
}
NEW_FOR_EST = {"99212": "99202", "99213": "99203", "99214": "99204", "99215": "99205"}
PRACTICE_INFO: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "Riverside Family Medicine": ("family medicine", "primary_care",
                                  ("20610", "69210", "10060", "10061", "12001", "12002",
                                   "17110", "17000"),
                                  PRIMARY_DX),
    "Lakeview Orthopedics": ("orthopedic surgery", "specialist", ("20610", "20611"),
                             ("M25.561", "M17.11", "M17.12")),
    "Northside Internal Medicine": ("internal medicine", "primary_care",
                                    ("20610", "69210", "17000"), PRIMARY_DX),
    "Summit Dermatology": ("dermatology", "specialist",
                           ("11102", "11104", "17110", "17000", "17004", "10060", "10061"),
                           ("L57.0", "L72.0", "L82.1", "L30.9")),
    "Harbor Pediatrics & Adult Care": ("family medicine", "primary_care",
                                       ("69210", "12001", "12002", "17110"), PRIMARY_DX),
    "Cedar Grove Clinic": ("family medicine", "primary_care",
                           ("69210", "10060", "10061", "12001", "12002"),
                           PRIMARY_DX),
    "Metro Sports Medicine": ("sports medicine", "specialist", ("20610", "20611"),
                              ("M25.561", "M17.11", "M17.12")),
    "Prairie Health Associates": ("internal medicine", "primary_care",
                                  ("20610", "69210", "17110"), PRIMARY_DX),
    "Bayview Medical Group": ("family medicine", "primary_care",
                              ("10060", "10061", "12001", "12002", "17000"),
                              PRIMARY_DX),
    "Hillcrest Primary Care": ("family medicine", "primary_care", ("69210", "17110", "20610"),
                               PRIMARY_DX),
}
PROC_DX: dict[str, tuple[tuple[str, ...], ...]] = {
    "20610": (("M17.11",), ("M17.12",)),
    "20611": (("M17.11",), ("M17.12",)),  # the same injection under ultrasound guidance
    "69210": (("H61.21",), ("H61.22",)),
    "10060": (("L02.91",), ("L02.415",), ("L02.416",)),
    "10061": (("L02.91",), ("L02.415",), ("L02.416",)),  # complicated or multiple
    # 12001 repairs the scalp, neck, trunk or extremities (a face wound is 12011): the
    # diagnosis names the scalp, the repair's own site
    "12001": (("S01.01XA", "W19.XXXA"),),
    "12002": (("S01.01XA", "W19.XXXA"),),  # the same scalp wound, 2.6-7.5 cm
    "17110": (("B07.0",),),
    "17000": (("L57.0",),),
    "17004": (("L57.0",),),  # 15 or more actinic keratoses in one session
    "11102": (("D49.2",), ("L82.1",)),  # before pathology: unspecified behavior
    "11104": (("D49.2",), ("L82.1",)),  # a punch instead of a tangential biopsy
}
# a self-pay item sold at check-in, by specialty: (item, low, high) in cents; a pair of it is
# sold in ``PAIR_SHARE`` of sales (any branch)
PAIR_SHARE = 0.3
RETAIL = {
    "family medicine": ("Form completion fee", 1500, 3501),
    "internal medicine": ("Form completion fee", 1500, 3501),
    "orthopedic surgery": ("Knee brace", 3895, 8996),
    "sports medicine": ("Compression sleeve", 2450, 5496),
    "dermatology": ("Sunscreen SPF 50", 1850, 4201),
}
CARD_BRANDS = ("visa", "mastercard", "amex", "discover")
ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
# who must act: a duplicate card capture is the practice's (it ran the card twice and holds the
# money; the refund comes from the practice), not the processor's
ERROR_SIDE = {"copay_not_credited": "provider", "duplicate_charge": "provider",
              "duplicate_posting": "provider", "deductible_already_met": "insurer",
              "balance_billing": "provider", "oop_max_exceeded": "insurer", "no_error": "none"}
FINDINGS = ("copay_not_credited", "duplicate_charge", "duplicate_posting",
            "coinsurance_on_billed", "deductible_already_met", "balance_billing",
            "oop_max_exceeded", "no_error")
# both policies allocate payments oldest first, so a part payment clears a balance brought
# forward before this visit's charges: the visit's own open part is min(its amount due, the
# account's open balance), and a correction of this visit's overstatement is covered exactly
# where the account's open balance covers it (its overstatement never exceeds its amount due)
FINANCIAL_POLICY = {
    "apply": "Billing questions, balance corrections and refund requests are accepted within "
             "180 days of the statement date. Payments are applied to the oldest open charges "
             "first. Overpayments and duplicate payments are first applied to any open balance "
             "on the account; only a remaining credit is refunded to the original card. "
             "Self-pay items (not billed to insurance) are paid in full when sold.",
    "refund": "Billing questions, balance corrections and refund requests are accepted within "
              "180 days of the statement date. Payments are applied to the oldest open charges "
              "first. Overpayments and duplicate payments are refunded to the original card; "
              "they are not applied to other balances on the account. Self-pay items (not "
              "billed to insurance) are paid in full when sold.",
}
COMPLAINTS = (
    "I'm not sure the charges for {visit} add up.",
    "What I've been asked to pay for {visit} looks too high to me.",
    "I can't match what {practice} charged me with what my insurance says about {visit}.",
    "Could you check whether I was billed correctly for {visit}?",
    "My insurance paperwork and the practice's bill for {visit} confuse me.",
    "I thought my insurance would cover more of {visit} than it seems to.",
    "Between the practice's bill and my card statement I can't tell what {visit} really cost "
    "me.",
    "I want to be sure I'm paying only what I owe for {visit}.",
)
ASKS = (
    "Can you work out what I actually owe and whether anything needs fixing?",
    "Please check the numbers and tell me if something is wrong.",
    "I need someone to go through it and sort out anything that isn't right.",
    "Please find out whether I was overcharged and what I really owe.",
)

# -- per-process caches of what we derive from the bundle (keyed by id(ref)) ---------------
_CACHE: dict[int, dict[str, Any]] = {}


def _cache(ref: Any) -> dict[str, Any]:
    c = _CACHE.get(id(ref))
    if c is None:
        plans = []
        money = ("deductible", "copay_primary_care", "copay_specialist", "copay_urgent_care",
                 "copay_emergency", "oop_max")
        for p in sorted(ref.plans(), key=lambda p: p["plan_id"]):
            if p["coverage"] != "self_only":  # one member: no embedded family limits
                continue
            plans.append({k: (C.cents(v) if k in money else v) for k, v in p.items()})
        c = {"ref": ref, "plans": plans, "fee": {}, "desc": {}, "carc": {}, "coderef": {},
             "dx": {}}
        if len(_CACHE) > 8:  # bundles opened and dropped in a long-lived process
            _CACHE.clear()
        _CACHE[id(ref)] = c
    return c


def fee(ref: Any, code: str, loc: dict[str, Any]) -> int:
    """Non-facility MPFS amount in cents (POS 11), cached per (code, locality)."""
    c = _cache(ref)["fee"]
    k = (code, loc["mac"], loc["locality"])
    if k not in c:
        c[k] = C.fee_cents(ref, code, loc, facility=False)
    return c[k]


def _desc(ref: Any, code: str) -> str:
    c = _cache(ref)["desc"]
    if code not in c:
        c[code] = C.describe(ref, code)
    return c[code]


def _carc(ref: Any, code: str) -> str:
    c = _cache(ref)["carc"]
    if code not in c:
        c[code] = C.carc_text(ref, code)
    return c[code]


def _dx_desc(ref: Any, code: str) -> str:
    c = _cache(ref)["dx"]
    if code not in c:
        node = ref.icd10cm(code)
        if node is None or not node["billable"]:
            raise KeyError(f"ICD-10-CM {code} is not a billable code in the bundle")
        c[code] = node["description"]
    return c[code]


def _code_ref(ref: Any, code: str, loc: dict[str, Any]) -> dict[str, Any]:
    c = _cache(ref)["coderef"]
    k = (code, loc["mac"], loc["locality"])
    if k not in c:
        c[k] = C.code_reference(ref, code, loc, facility=False)
    r = c[k]  # two levels deep is all a code reference has; no shared mutable state
    return {**r, "data": {k2: (dict(v) if isinstance(v, dict) else v)
                          for k2, v in r["data"].items()}}


# -- arithmetic --------------------------------------------------------------------------
def billed_cents(allowed: int, markup_pct: int) -> int:
    """The practice's chargemaster price: allowed × markup, to the cent (half up)."""
    return (allowed * markup_pct + 50) // 100


def price_lines(lines: list[dict[str, Any]], plan: dict[str, Any], *, visit_copay: int,
                ded_left: int, oop_left: int) -> list[dict[str, int]]:
    """Cost sharing line by line in claim order (DOMAIN.md §2).

    An office visit whose benefit has a copay pays the copay only (deductible waived); every
    other line (procedures; visits on a plan without copays) goes to the remaining
    deductible and then coinsurance. Copays reduce the deductible only where the plan says
    they count toward it. Returns one dict per line: copay, deductible, coinsurance,
    patient, plan_paid.
    """
    out = []
    for ln in lines:
        if ln["benefit"] == "office_visit" and visit_copay > 0:
            cs = C.cost_share(ln["allowed"], copay=visit_copay, deductible_left=0,
                              coinsurance_pct=0, oop_left=oop_left)
        else:
            cs = C.cost_share(ln["allowed"], copay=0, deductible_left=ded_left,
                              coinsurance_pct=plan["coinsurance_pct"], oop_left=oop_left)
        used = cs["deductible"] + (cs["copay"] if plan["copays_count_toward_deductible"] else 0)
        ded_left = max(0, ded_left - used)
        oop_left -= cs["patient"]
        out.append(cs)
    return out


def half_even_total(lines: list[dict[str, Any]], plan: dict[str, Any], *, visit_copay: int,
                    ded_left: int, oop_left: int) -> int:
    """The patient's share of the claim with coinsurance rounded half to even (the claims
    here round half up). A coinsurance of exactly half a cent is rounded either way by real
    claims systems, so where the two differ an expert's recomputation may land on either
    (round 11e, domain review F4: 11/1500 reviewed scenarios, e.g. $21.285)."""
    total = 0
    for ln, cs in zip(lines, price_lines(lines, plan, visit_copay=visit_copay,
                                         ded_left=ded_left, oop_left=10 ** 12), strict=True):
        exact = (ln["allowed"] - cs["copay"] - cs["deductible"]) * plan["coinsurance_pct"]
        tie_down = cs["coinsurance"] > 0 and exact % 100 == 50 and (exact // 100) % 2 == 0
        patient = min(cs["patient"] - tie_down, max(oop_left, 0))
        oop_left -= patient
        total += patient
    return total


# Plan cost sharing drawn per plan (issue 8, round 6): with five fixed templates an absolute
# amount (an OOP total, a coinsurance dollar figure) stood in for "room against the cap" or
# "coinsurance on allowed vs billed". Each plan now has its own deductible, OOP maximum,
# coinsurance and copays, drawn from wide ranges per metal level that overlap, in whole
# dollars as real plans print them, within the 2026 self-only limits of 45 CFR 156.130(a)
# ($10,600; $8,500 for an HSA-qualified HDHP, IRS Rev. Proc. 2025-19, DOMAIN.md).
# metal structure -> (deductible range, OOP maximum low end, coinsurance % range,
# primary-care copay range), dollars
PLAN_RANGES: dict[str, tuple[tuple[int, int], int, tuple[int, int], tuple[int, int]]] = {
    "platinum": ((0, 1_500), 1_500, (5, 20), (5, 30)),
    "gold": ((250, 3_500), 3_000, (10, 30), (15, 45)),
    "silver": ((1_500, 6_500), 5_000, (15, 40), (25, 60)),
    "bronze": ((4_000, 9_000), 7_000, (25, 50), (35, 75)),
    "hdhp": ((3_000, 7_000), 5_000, (10, 40), (0, 0)),
}


def _draw_plan(rng: random.Random, tpl: dict[str, Any]) -> dict[str, Any]:
    """A self-only plan of the template's structure (copays or not; an HDHP without copays)
    with its own amounts: the deductible in $50 steps, the OOP maximum in $50 steps between
    the deductible (plus room for coinsurance) and the legal limit, an integer coinsurance
    rate, copays in $5 steps (specialist 1.5-2.5x primary care; office <= urgent care <=
    emergency, as plans tier them). Whether copays count toward the deductible is the plan's
    own term (drawn)."""
    hdhp = "hdhp" in tpl["plan_id"]
    key = "hdhp" if hdhp else tpl["metal_level"]
    (d_lo, d_hi), o_lo, (c_lo, c_hi), (p_lo, p_hi) = PLAN_RANGES[key]
    limit = 850_000 if hdhp else 1_060_000
    ded = 0 if key == "platinum" and rng.random() < 0.3 else \
        rng.randrange(d_lo // 50, d_hi // 50 + 1) * 5_000
    lo = max(o_lo * 100, ded + 100_000)
    oop = rng.randrange(lo // 5_000, limit // 5_000 + 1) * 5_000
    p = dict(tpl)
    p.update(deductible=ded, oop_max=oop, coinsurance_pct=rng.randrange(c_lo, c_hi + 1))
    if tpl["copay_primary_care"] > 0:
        pc = rng.randrange(p_lo // 5, p_hi // 5 + 1) * 500
        spec = max(pc + 500, round(pc * (1.5 + rng.random()) / 500) * 500)
        urgent = max(pc, round(spec * (0.8 + 0.4 * rng.random()) / 500) * 500)
        # a plan's emergency copay is never below its urgent-care copay, nor urgent care below
        # the office visit (domain review round 3: 5 of 300 plans printed an ER copay under
        # urgent care, which no marketed plan does); the ER copay is drawn above urgent care
        p.update(copay_primary_care=pc, copay_specialist=spec, copay_urgent_care=urgent,
                 copay_emergency=urgent + rng.randrange(0, 51) * 1_000,
                 copays_count_toward_deductible=rng.random() < 0.4)
    p["source"] = (
        "OOP max limit 2026: 45 CFR 156.130(a) ($10,600 self-only; 90 FR 27074, June 25, "
        "2025)" + ("; HSA-qualified HDHP OOP max $8,500 self-only (IRC 223(c)(2), IRS Rev. "
                   "Proc. 2025-19); all services except preventive care are subject to the "
                   "deductible, so there are no copays" if hdhp else "")
        + ". AV: 45 CFR 156.140(b) (nominal metal-level value). The deductible, coinsurance, "
        "copays and OOP maximum are this plan's own terms within these limits.")
    return p


# the share of members close to the out-of-pocket maximum, and their room left as a multiple
# of this claim's (uncapped) share, drawn log-uniformly in CLOSE_RATIO: below 1 the cap binds
# (half the close members), above it the room only comes near. Drawn jointly with the share
# (issue 8, round 6: a room drawn in dollars regardless of the claim made a binding cap a
# matter of a small absolute room); an ignored cap draws its ratio from the same law, below 1
CLOSE_SHARE = 0.5
CLOSE_RATIO = (0.2, 5.0)


def _room_draw(rng: random.Random, share: int, *, below: bool = False,
               above: bool = False) -> int:
    lo, hi = CLOSE_RATIO
    if below:
        hi = 1.0
    if above:
        lo = 1.0
    return round(share * lo * (hi / lo) ** rng.random())
# a balance brought forward from an earlier statement: none for this share of accounts, else
# drawn log-uniformly in this range (cents), in every branch alike (up to $2,500, an earlier
# procedure's deductible: issue 8, round 8, the amount due alone, at most $900 above this
# visit's part, told a line posted twice from a correct bill)
PRIOR_NONE = 0.3
PRIOR_RANGE = (1_500, 250_000)


def _prior_draw(rng: random.Random) -> int:
    lo, hi = PRIOR_RANGE
    return round(lo * (hi / lo) ** rng.random())


# the balance a part payment left open (cents, log-uniform, the same law in every branch)
OPEN_RANGE = (500, 40_000)


def _open_draw(rng: random.Random) -> int:
    lo, hi = OPEN_RANGE
    return round(lo * (hi / lo) ** rng.random())


def _part_draw(rng: random.Random, due: int) -> int:
    """A part payment of an amount due (cents): whole dollars, leaving open a balance drawn
    from ``OPEN_RANGE``'s law (redrawn while it leaves less than a dollar paid); where the
    amount due is too small for the law, a whole-dollar sum between a tenth and nine tenths
    of it."""
    for _ in range(20):
        part = (due - _open_draw(rng)) // 100 * 100
        if PART_MIN <= part < due:
            return part
    lo = max(PART_MIN // 100, due // 1_000)
    hi = max(lo, due * 9 // 1_000)
    return min(rng.randrange(lo, hi + 1) * 100, due - 1)


# the plan document's rule for a copay that counts toward the deductible within one claim
# (round 11f: every deductive plan document carries it, the same text on every plan)
COPAY_CREDIT_NOTE = ("Where copays count toward the deductible, a claim's copay is credited to "
                     "the deductible as its line is processed, so later lines of the same claim "
                     "meet that much less of it.")
# the least a patient pays on a statement in part, and the least amount due that is paid in
# part at all (cents; round 11, domain review R5: part payments of $1-$5 occurred, which no
# patient sends - below ``PART_DUE_MIN`` a statement is paid in full or not yet)
PART_MIN = 1_000
PART_DUE_MIN = 2_000


# how much of the statement the patient had paid when they complained (every branch)
PAY_STATES: tuple[tuple[str, int], ...] = (("none", 3), ("full", 2), ("part", 5))
# the card log's check-in copays per copay-plan account: 3-5 visits in every branch (issue 8,
# round 6), those beyond the branch's own from the previous plan year; and the share of logs
# with a declined or voided first swipe at the desk
COPAY_VISITS = (3, 6)
EARLIER_FROM = dt.date(2025, 2, 3)
EARLIER_SPAN = 300
# issue 8, round 7 (red team round 6: the count of this year's "Copay at check-in" captures
# read duplicate_charge and copay_not_credited, 0.328 / 0.300 passed; every extra copay was
# dated 2025): a copay plan's log holds check-in copays of visits in BOTH plan years, drawn on
# their own stream in every branch alike - this plan year's visits with a copay (the branch's
# own captures included: the older visit's, this visit's and the terminal's second capture
# where that is the error) number COPAY_VISITS_2026, the rest dated this year before the
# ledger's export opens (outside it, so captured and never posted in every branch, counted in
# the plan's accumulators as other claims); last year's number COPAY_VISITS_2025
COPAY_VISITS_2026 = (3, 7)
COPAY_VISITS_2025 = (0, 3)
EARLY_2026_FROM = dt.date(2026, 1, 5)
EARLY_2026_GAP = 30  # days before the older visit (the ledger opens at most 25 before it)
DESK_NOISE = 0.6
HDHP_REDRAW = 0.9
DESK_STYLE = 0.5
# the share of visits whose copay the desk collects at check-in (else billed on the statement),
# any branch. Issue 8, round 10: at 0.5 a visit-day check-in capture sat in every copay never
# credited (which needs one) and in half of every other finding's logs - the top feature of the
# audit's gb_counts_numbers (permutation drop 0.15 on 1,000 fresh seeds). The desk collects a
# copay plan's visit copay at check-in at every visit, as the log already shows for the older
# visit and this year's and last year's earlier ones (time-of-service collection); the copay
# never credited is then told only by the ledger: no line credits that capture
CHECKIN_SHARE = 1.0
DESK_LABEL = "Patient payment - front desk"
# issue 8, round 9 (red team round 10: a visit-day capture whose transaction id no ledger line
# cites read copay_not_credited): the share of practices, in every branch, whose system posts
# the desk's card payments of a day as one deposit-batch line citing the batch, not the card
# transactions - a missing credit is then found by amounts and dates
BATCH_SHARE = 0.3
# the share of claims whose item 29 (amount paid) carries the copay collected at check-in
ITEM29_SHARE = 0.3
# the deductible dollars (beyond a copay that counts toward it and $1) by which an insurer's
# stale total lags the plan of record: a claim processed elsewhere, $1 to this many
STALE_LAG_MAX = 150
# the OOP dollars outside the deductible by which a claims system's printed totals lag the plan
# of record (a claim processed elsewhere posting later): log-uniform $1 to this many, one law
# for the harmless lag of every finding, the copay a stale deductible total's missed claim may
# carry and the harmless part of the lag behind an ignored cap (issue 8, round 12: at $1-$150
# beside the ignored cap's lag of at least its shortfall, a plan-vs-EOB gap of $150-$500 read
# oop_max_exceeded 0.30 against 0.00 elsewhere, and one over $500 read deductible_already_met
# 0.32 against 0.00)
MISSED_CLAIM_MAX = 10_000


def _missed_claim(rng: random.Random, hi: int = 100 * MISSED_CLAIM_MAX) -> int:
    """A lag in cents from the missed-claim law, $1 to ``hi`` (a log-uniform law truncated is
    log-uniform on the interval: at most what there was to miss)."""
    hi = max(100, hi)
    return round(100 * (hi / 100) ** rng.random())


def _one_claim_copay(plan: dict[str, Any]) -> int:
    """The most OOP dollars outside the deductible one missed claim carries while the
    deductible is left: one copay, the plan's emergency copay or a pharmacy copay's top
    (round 12b, domain review round 11, flag B)."""
    return max(plan["copay_emergency"], RX_COPAY_MAX)


# the share of plan-of-record readings taken after processing that count a claim processed
# since (round 10b), in every branch
LATER_SHARE = 0.5
# the deductible before the claim, where the member is far from the OOP maximum (every branch)
DED_STATES: tuple[tuple[str, int], ...] = (("met", 2), ("partial", 6), ("not_met", 2))
# the share of accounts with an open balance of at least PLAN_MIN (cents) moved to a payment
# plan after the statement, in every branch
PLAN_SHARE = 0.4
PLAN_MIN = 5_000
# the share of claims with a line entered twice and reversed (or voided and rebilled), and of
# older visits at this visit's own code (the same fee), in every branch
REPOST_SHARE = 0.4
# issue 8, round 9 (red team round 10: a double charge had a visit-day check-in capture in 96%
# and two same-amount captures in 90% of scenarios, against 43-53% and 9-18% elsewhere; round
# 8c drew the desk's second run by one law but then made a statement paid twice 60% of double
# charges, and the count of settled online sales read the finding): every account's log holds
# one payment run twice, drawn by ONE law in every branch (``TWICE_SHARE`` of accounts; on the
# desk's card - this visit's check-in copay where it was collected, else the older claim's
# payment - or, ``PORTAL_SHARE`` of them, on the portal's run of this statement's latest
# online payment where the patient paid online). The practice refunded the second run in
# every branch but the double charge, where that same second run is the error.
# (round 9b, domain review: at 1.0 every account held a refunded second run - no real card log
# does - and a log without a refund row was a double charge's alone, 37/37 on 520 seeds; now
# a fifth of accounts in every branch hold a refunded second run, the double charge's drawn by
# the same law beside its unrefunded one, so the refund count is one law in every branch)
TWICE_SHARE = 0.2
# the day the practice's deposit batches are counted from (one batch a business day)
BATCH_EPOCH = dt.date(2025, 1, 1)
# an older double charge of the older claim's payment, refunded (any branch; round 9b: 0.3
# with ``TWICE_SHARE`` put a refunded double run in 44% of accounts, against 10-20% believable)
OLD_REFUNDED_SHARE = 0.15
PORTAL_SHARE = 0.5
OLDER_SAME_VISIT = 0.4
# the share of plan-of-record snapshots taken after this claim was processed (every branch)
SNAPSHOT_AFTER = 0.75
# close to the out-of-pocket maximum a member has usually met the deductible, but not where
# copays fill the maximum instead: on a copay plan whose copays do not count toward the
# deductible, copays (office visits elsewhere, specialty-tier prescriptions at a fixed copay a
# month) still count toward the annual limitation on cost sharing (45 CFR 156.130(a), cost
# sharing includes copayments; DOMAIN.md §2), so a member can reach the maximum with deductible
# left where the maximum exceeds the deductible by no more than this (cents, $500 a month)
COPAY_FILL_MAX = 600_000
# the office-visit copays a claims count assumes at most, and a pharmacy copay's top (cents)
OFFICE_COPAYS_MAX = 20
RX_COPAY_MAX = 50_000


def _copay_fill(p: dict[str, Any]) -> bool:
    """Can copays, rather than the deductible, have brought a member close to this plan's
    out-of-pocket maximum (so that, close to it, some deductible may still be left)?"""
    return (p["copay_primary_care"] > 0 and not p["copays_count_toward_deductible"]
            and p["deductible"] > 0 and p["oop_max"] - p["deductible"] <= COPAY_FILL_MAX)


def _bind_room(rng: random.Random, share: int, lo: int) -> int:
    """OOP room left where the cap binds, at least ``lo`` (above the claim's copays and
    deductible, so the cap cuts coinsurance only) and below the share: the close law below 1,
    drawn until it clears the floor, else uniform between the floor and the share (an ignored
    cap and an applied one alike, so no clamp piles rooms on the floor)."""
    for _ in range(60):
        room = _room_draw(rng, share, below=True)
        if lo <= room < share:
            return room
    # (where copays and deductible are nearly the whole share: uniform up to the share, not
    # to 85% of it, which left the floor - $1.00 of coinsurance - whenever the floor passed it)
    return rng.randrange(lo, max(lo + 1, share))


def _remaining_draw(rng: random.Random, state: str, first_allowed: int) -> int:
    """Deductible left before the claim for a drawn state (cents): nothing, a part of the
    first deductible-bearing line's allowed amount (coinsurance still applies to its rest), or
    more than the whole claim."""
    if state == "met":
        return 0
    if state == "partial":
        return rng.randrange(max(100, first_allowed * 5 // 100),
                             max(101, first_allowed * 90 // 100))
    return rng.randrange(40_000, 150_001)


def _capped(shares: list[dict[str, int]], oop_left: int) -> list[dict[str, int]]:
    """Line shares with the out-of-pocket cap applied in claim order, the way
    ``C.cost_share`` applies it (coinsurance cut first, then the rest)."""
    out = []
    for cs in shares:
        cs = dict(cs)
        allowed = cs["plan_paid"] + cs["patient"]
        if cs["patient"] > oop_left:
            cs["coinsurance"] = max(0, cs["coinsurance"] - (cs["patient"] - oop_left))
            cs["patient"] = min(oop_left, cs["copay"] + cs["deductible"] + cs["coinsurance"])
            cs["plan_paid"] = allowed - cs["patient"]
        oop_left -= cs["patient"]
        out.append(cs)
    return out


def _weekday(d: dt.date) -> dt.date:
    # the practice's desk is open on business days: no weekends and no federal holidays
    # (domain review round 6 found check-ins on Labor Day and July 4)
    while not is_business_day(d):
        d += dt.timedelta(days=1)
    return d


def _business(t: dt.datetime) -> dt.datetime:
    """A practice issues a refund on a business day (domain review round 8b, F5: 8 in 35
    refunds fell on a weekend): the same time of day, moved on to the next business day."""
    while not is_business_day(t.date()):
        t += dt.timedelta(days=1)
    return t


def _ts(d: dt.date, rng: random.Random, lo_h: int = 14, hi_h: int = 23) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day, rng.randrange(lo_h, hi_h), rng.randrange(60),
                       rng.randrange(60))


def _desk_ts(d: dt.date, state: str, rng: random.Random) -> dt.datetime:
    """A front-desk card payment in the practice's business hours, stored in UTC.

    Local 08:00 up to 17:00, but never so late that UTC has passed midnight (Hawaii's desk
    stops at 13:00, Alaska's at 15:00 in daylight time), so the UTC date stays the visit's:
    domain review round 4 found UTC 14:00-23:00 check-ins read 05:32-06:57 in Hawaii and
    Alaska. Three draws, as ``_ts`` makes."""
    off = utc_offset(state, d)
    local_h = rng.randrange(8, min(17, 23 + off))
    return dt.datetime(d.year, d.month, d.day, local_h - off, rng.randrange(60),
                       rng.randrange(60))


def _iso_z(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _c(amount: str) -> int:
    """An artifact's "123.45" back to cents."""
    return C.cents(amount)


def _chars(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(ALNUM, k=n))


def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randrange(10 ** (n - 1), 10 ** n))


# -- the generator -------------------------------------------------------------------------
def generate(seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
    """One scenario (case, artifacts, references, counters, expected, variant)."""
    cache = _cache(ref)
    D = C.dollars
    # the provider statement is the commoner place for coinsurance taken on the billed charge
    kind, _, coins_side = (_stratum(seed) or _weighted(rng, KINDS)).partition(":")
    side = coins_side or ERROR_SIDE[kind]
    # did the patient pay the statement already — in full, in part, or not yet? Drawn alike
    # in every branch: with the open balance left against the overcharge (two records) it
    # narrows the filing (refund vs correction) for a practice's error, never the finding
    pay_state = _weighted(rng, PAY_STATES)
    paid = pay_state == "full"
    # whether the desk collects the copay at check-in, and which payment the terminal or the
    # portal ran twice (``TWICE_SHARE``, ``PORTAL_SHARE``), are drawn on their own streams by
    # one law in every branch (issue 8, round 9); the double charge is that second run left
    # unrefunded, wherever the law put it (only a copay never credited needs the check-in)
    checkin_draw = side_stream(TASK, "checkin", seed).random() < CHECKIN_SHARE
    dbl = side_stream(TASK, "desk-double", seed)
    refund_run = dbl.random() < TWICE_SHARE  # a refunded second run, one law in every branch
    run_twice = refund_run or kind == "duplicate_charge"
    portal_pref = dbl.random() < PORTAL_SHARE
    duplicate_of = None
    # where the member stands against the out-of-pocket maximum, drawn alike in every branch
    # (an insurer ignoring the cap needs a binding cap, by definition): far from it, close to
    # it, or with less room left than this claim's cost sharing, where the cap binds. An
    # insurer that took coinsurance on the billed charge may still have applied the cap to
    # its wrong share; a stale deductible total is also a stale OOP total (the claims system
    # believed the member further from the cap), so that error is never capped.
    # A member close to the maximum has room left drawn as one fraction of this claim's share
    # in every branch (``CLOSE_ROOM``): below 1 the cap binds, above it the room only comes
    # near, so how close the member is says nothing alone; only the room against the share
    # (two records) decides whether the cap binds. A stale deductible total occurs close to
    # the cap as often (the plan of record has the deductible met there; the insurer's stale
    # total still shows some left, and its OOP total lags by those dollars, so the cap never
    # came into its share).
    close = kind == "oop_max_exceeded" or rng.random() < CLOSE_SHARE
    cap_state = "far" if not close else "close"  # bind or near: decided against the share
    policy = "apply" if rng.random() < 0.5 else "refund"  # what the practice does with credits

    loc = C.pick_locality(rng, ref)
    practice = rng.choice(sorted(PRACTICE_INFO))
    specialty, benefit, procs, em_dx = PRACTICE_INFO[practice]

    # established visit (the patient was seen here weeks ago) at a level the diagnosis
    # supports; the visit must be worth more than its copay, or collecting the copay would
    # itself overcharge the patient
    def em_levels(dx: str, copay: int) -> list[str]:
        return [c for c in DX_EM_LEVELS[dx] if fee(ref, c, loc) > copay + 1000]

    def plan_copay(p: dict[str, Any]) -> int:
        return p["copay_primary_care" if benefit == "primary_care" else "copay_specialist"]

    # plan: self-only template satisfying the kind's preconditions
    def plan_ok(p: dict[str, Any]) -> bool:
        if not any(em_levels(d, plan_copay(p)) for d in em_dx):
            return False
        has_copay = p["copay_primary_care"] > 0
        if kind == "copay_not_credited" or (kind == "duplicate_charge" and pay_state == "none"):
            return has_copay
        if kind == "deductible_already_met":
            # issue 8, round 8: a deductible applied next to an OOP total near the maximum
            # occurred only here (close members of every other branch had it met); close to
            # the maximum it now occurs wherever copays filled the maximum, in every branch,
            # and a stale deductible total close to the cap is drawn on such plans alone
            # (and a deductible above the visit copay that may count toward it: a stale
            # total must leave some deductible beyond it, seed 930980)
            # (round 10: this halves the branch's share of plans whose copays count toward
            # the deductible, 0.24 against 0.40 - a close member here needs a plan whose
            # copays filled the maximum; turning such members far instead moved the branch's
            # share of close members, 0.31 against 0.45-0.53, which
            # test_member_states_are_drawn_alike_across_findings pins: left as it is)
            # (round 11: that left the branch's share of plans whose copays count toward the
            # deductible at 0.17 against 0.36-0.43 on 3,000 fresh seeds. A close member on
            # any plan now has the deductible met on the plan of record, as in every branch;
            # the insurer's stale totals missed the claim processed elsewhere that met it,
            # which left its OOP total as far from the cap as any member with deductible
            # left - see ``stale_far`` below)
            # (round 11e, F2: where copays count toward it, the stale total has the older
            # visit's copay met besides, so the deductible clears two copays)
            return p["deductible"] > plan_copay(p) * (
                2 if p["copays_count_toward_deductible"] else 1) + 200
        return True

    # the two check-in errors need a copay plan; an HSA-qualified HDHP (no copays) is drawn
    # at a few percent in the other branches (issue 8, round 6: at 1 in 5 a plan without
    # copays, and so a card log without check-in copays, ruled both errors out for a fifth
    # of the other branches)
    for _ in range(200):
        tpl = rng.choice(cache["plans"])
        if "hdhp" in tpl["plan_id"] and rng.random() < HDHP_REDRAW:
            continue
        plan = _draw_plan(rng, tpl)
        if plan_ok(plan):
            break
    else:  # pragma: no cover - every metal level has copays a $10+ visit clears
        raise RuntimeError(f"deductive_liability seed {seed}: no plan fits {kind}")
    has_copay = plan["copay_primary_care"] > 0
    visit_copay = plan_copay(plan)

    # does the claim need a procedure line (deductible / coinsurance on a non-copay line)?
    need_proc = (
        (kind in ("coinsurance_on_billed", "deductible_already_met") and has_copay)
        or (kind == "duplicate_charge" and has_copay)
        or (kind == "oop_max_exceeded" and has_copay)
    )
    # a copay plan's visit always carries a procedure line (deductible and coinsurance then
    # apply in every branch, not only where an error needs them)
    with_proc = need_proc or has_copay or rng.random() < 0.8
    # a procedure for a separately identifiable problem (the -25 visit must not be for the
    # problem the procedure treats, nor for knee pain next to that knee's arthritis)
    # (nor for the other knee's arthritis next to an injection for one knee's: one problem,
    # osteoarthritis of the knees, managed at one visit; domain review round 7)
    def compatible(opts: tuple[tuple[str, ...], ...], dx: str) -> list[tuple[str, ...]]:
        return [o for o in opts if dx not in o
                and not (dx == "M25.561" and "M17.11" in o)
                and not (dx.startswith("M17.1") and any(d.startswith("M17.1") for d in o))]

    # (a visit with a procedure is for a problem some procedure of the practice leaves
    # separately identifiable)
    visit_dx = rng.choice([d for d in em_dx if em_levels(d, visit_copay) and (
        not with_proc or any(compatible(PROC_DX[p], d) for p in procs))])
    em = rng.choice(em_levels(visit_dx, visit_copay))

    proc = None
    proc_dx: tuple[str, ...] = ()
    if with_proc:
        proc = rng.choice([p for p in procs if compatible(PROC_DX[p], visit_dx)])
        proc_dx = rng.choice(compatible(PROC_DX[proc], visit_dx))

    # one chargemaster per practice: a single markup over the contracted rates, prices to the
    # cent (a coinsurance taken on the billed charge always stays below the allowed amount)
    markup = rng.choice(tuple(m for m in MARKUPS if plan["coinsurance_pct"] * m <= 7_000))
    lines: list[dict[str, Any]] = []
    dx_codes = [visit_dx]
    for d in proc_dx:
        if d not in dx_codes:
            dx_codes.append(d)
    for hcpcs, ben in ((em, "office_visit"), (proc, "office_procedure")):
        if hcpcs is None:
            continue
        allowed = fee(ref, hcpcs, loc)
        mods = ["25"] if (ben == "office_visit" and proc) else []
        pointers = ["A"] if ben == "office_visit" else [
            "ABCDEFGHIJKL"[dx_codes.index(d)] for d in proc_dx]
        lines.append({"line": len(lines) + 1, "hcpcs": hcpcs, "modifiers": mods,
                      "benefit": ben, "allowed": allowed, "markup_pct": markup,
                      "billed": billed_cents(allowed, markup), "pointers": pointers})
    coins_lines = [ln for ln in lines if not (ln["benefit"] == "office_visit" and visit_copay)]

    # deductible state before this claim (to the cent: accumulators add up allowed amounts)
    deductible = plan["deductible"]
    # a member at or near the out-of-pocket maximum has met the deductible (coinsurance, which
    # fills the rest of the maximum, only starts once it is met)
    # (the same draw in every branch; an error about the deductible or about coinsurance needs
    # deductible room short of the claim, so a deductible not met at all is partly met there)
    # (an ignored cap keeps the deductible met: its room must clear the claim's deductible and
    # copays, the cap cutting coinsurance only)
    # (issue 8, round 7: an ignored cap kept the deductible met even where copays filled the
    # maximum, so an EOB that applied deductible was never oop_max_exceeded, 0/61 on train;
    # it now draws the state as every close member does, its room still clearing the claim's
    # deductible and copays)
    if deductible == 0 or (cap_state != "far" and not _copay_fill(plan)):
        ded_state = "met"
    else:
        ded_state = _weighted(rng, DED_STATES)
        # issue 8, round 10: a deductible left above the whole claim (no coinsurance on the
        # EOB at all) was drawn only where no error needed coinsurance, so an EOB without
        # coinsurance ruled out coinsurance on the billed charge and an ignored cap (present
        # in 85-90% of the other findings' EOBs, 100% of theirs): the deductible is partly
        # met - some left, short of the first coinsurance line - wherever it is not met, in
        # every branch (in August-October, the visit's months, a member who has seen the
        # practice this year has usually paid into it)
        if ded_state == "not_met":
            ded_state = "partial"
    # (round 11, domain review R2: drawn against the first coinsurance line alone, a member
    # with deductible left had at most $148 of it left, median $38.56; the law now runs over
    # the claim's coinsurance-bearing lines together, so some coinsurance is still left on
    # the last of them, in every branch)
    first_allowed = sum(ln["allowed"] for ln in coins_lines)
    remaining = min(_remaining_draw(rng, ded_state, first_allowed), deductible)
    fl = coins_lines[0]

    def billed_coins_fits(left: int) -> bool:
        """Coinsurance taken on the billed charge leaves the plan something to pay on every
        line it falls on."""
        shares = price_lines(lines, plan, visit_copay=visit_copay, ded_left=left,
                             oop_left=10 ** 12)
        on = [(ln, cs) for ln, cs in zip(lines, shares, strict=True) if cs["coinsurance"] > 0]
        return bool(on) and all(
            cs["deductible"] + C.pct_of(ln["billed"] - cs["deductible"] - cs["copay"],
                                        plan["coinsurance_pct"]) < ln["allowed"] - 100
            for ln, cs in on)
    for _ in range(30):
        # coinsurance taken on the billed charge must leave the plan something to pay on that
        # line (a deductible and a billed-charge coinsurance together above the allowed amount
        # would be no bill at all): the same state is redrawn until it fits
        # (an ignored cap needs coinsurance for the cap to cut: the deductible left must leave
        # the claim at least $10 of it)
        if kind == "oop_max_exceeded":
            if remaining == 0 or sum(cs["coinsurance"] for cs in price_lines(
                    lines, plan, visit_copay=visit_copay, ded_left=remaining,
                    oop_left=10 ** 12)) >= 1_000:
                break
        elif kind != "coinsurance_on_billed" or billed_coins_fits(remaining):
            break
        remaining = min(_remaining_draw(rng, ded_state, first_allowed), deductible)
    else:
        remaining = 0 if kind == "oop_max_exceeded" else min(fl["allowed"] * 5 // 100,
                                                            deductible)
    counted = visit_copay if (visit_copay and plan["copays_count_toward_deductible"]) else 0
    stale_draw = None
    stale_far = False
    if kind == "deductible_already_met":
        # the plan of record's deductible left is drawn exactly as every branch draws a
        # member's (met as often as any member with some left has it met, else partly met by
        # the 5-90% law of the claim's deductible-bearing lines); the insurer's stale total is
        # that plus what a claim processed elsewhere added (a copay that counts toward the
        # deductible and $1-$150, drawn log-uniformly), so the EOB looks like any EOB and the
        # plan like any plan; only the two together show the member had less left
        # (round 11f, broad domain review: 11d drew the stale total first and subtracted the
        # lag from it, flooring the plan's left at $1 - under $2 left in 16/250 of these and
        # exactly $1.00 in 5/250 against 0/2,270 in every other finding)
        # (round 11) close to the cap on a plan whose copays could not have filled it, the
        # plan of record has the deductible met, as every branch's close member has: the claim
        # processed elsewhere that the insurer's totals missed met it (and carried coinsurance
        # beyond it, moving the member near the cap), so the stale totals read like any
        # member's with deductible left
        stale_far = close and not _copay_fill(plan)
        met = rng.random() < DED_STATES[0][1] / sum(w for _, w in DED_STATES) or stale_far
        # (the stale total keeps to the partial law's top, so the EOB leaves coinsurance on
        # the claim as any partly met member's does; round 11e, F2: at least the older visit's
        # copay that counts toward the deductible is met on the stale total too)
        # (where a copay counting toward it is most of the claim's deductible-bearing lines,
        # the partial law leaves no room above it: the stale total may then reach past them)
        top = min(deductible - counted, first_allowed * 90 // 100)
        if top - counted < 200:
            top = deductible - counted
        lag = round(100 * STALE_LAG_MAX ** rng.random())
        if met:
            # the missed claim met it: the stale total is any partly met member's state
            remaining = 0
            for _ in range(30):
                stale_draw = min(top, _remaining_draw(rng, "partial", first_allowed))
                if stale_draw > counted + 100:
                    break
            else:
                stale_draw = min(top, counted + 100 + first_allowed // 2)
        else:
            for _ in range(30):
                remaining = min(deductible, _remaining_draw(rng, "partial", first_allowed))
                if top - remaining - counted >= 100:
                    break
            else:
                remaining = min(_remaining_draw(rng, "partial", first_allowed),
                                max(100, (top - counted) // 2))
            room = top - remaining - counted
            # the missed dollars by their law, redrawn while they exceed the room left
            for _ in range(20):
                if lag <= room:
                    break
                lag = round(100 * STALE_LAG_MAX ** rng.random())
            else:
                lag = rng.randrange(100, room + 1)
            stale_draw = remaining + counted + lag
        ded_state = "met" if remaining == 0 else "partial"

    # the copay is collected at check-in when the patient can pay, else billed on the
    # statement (any branch; the two errors about a check-in payment need one)
    # (issue 8, round 7: at 70% a ledger without this visit's desk payment line was a
    # copay never credited 3 times in 10 - the count of "collected"/"front desk" lines read
    # it, importance 0.25 and 0.12 - so the desk collects it half the time)
    # (round 9: drawn above on its own stream, one law in every branch but the copay never
    # credited, which needs it; the draw formerly made here is kept so that no later record's
    # draw moves)
    rng.random()
    checkin = visit_copay if (has_copay and visit_copay > 0 and (
        kind == "copay_not_credited" or checkin_draw
        or (kind == "duplicate_charge" and pay_state == "none"))) else 0
    # the check-in copays of this plan year and last (``COPAY_VISITS_2026``/``_2025``, their
    # own stream): this year's visits before the older one pay copays that the plan's
    # accumulators count (OOP maximum; the deductible where copays count toward it)
    years = side_stream(TASK, "copay-years", seed)
    # a balance carried forward from an earlier statement (an older service's share still
    # owed), drawn alike in every branch: the statement's amount due and the ledger's balance
    # then say how much is owed on the account, and only this visit's part of it (the amount
    # due less the balance brought forward) compares with the patient's share. Drawn before
    # the older visit, which is a new patient's only without one (its own stream, so that
    # drawing it earlier moves no other record's draw)
    owed = side_stream(TASK, "prior-balance", seed)
    prior_bal = 0 if owed.random() < PRIOR_NONE else _prior_draw(owed)
    # the terminal's second run of a check-in copay, refunded (``DESK_DOUBLE``, its own
    # stream): on this visit's capture where the copay was collected at check-in, else on the
    # older visit's; counted among this year's captures like the branch's own, so their
    # number is one law in every branch (round 8b: on this visit's capture alone it added
    # 0.3 captures wherever the copay was collected at check-in, always so for a copay never
    # credited, 4.91 against 4.52 this year's captures over 3,000 fresh seeds)
    # (round 9: a desk capture run twice - ``run_twice`` on the desk, drawn above - is counted
    # the same way wherever the law put it; whether the portal or the desk ran it twice is
    # settled once the statement's payment is known, below, but a desk run is counted here
    # only where the portal cannot take it - an unpaid statement - or the law chose the desk)
    desk_counted = has_copay and run_twice and not (
        pay_state != "none" and (portal_pref or not (checkin_draw and checkin)))
    # (round 9b: a double charge's refunded second run, where the law drew one beside the
    # error, is on the desk - see ``refunded_of`` below - and counted alike)
    desk_counted += has_copay and kind == "duplicate_charge" and refund_run
    own_desk = (1 + bool(checkin) + desk_counted) if has_copay else 0
    early_2026 = max(years.randrange(*COPAY_VISITS_2026) - own_desk, 0) if has_copay else 0
    visits_2025 = years.randrange(*COPAY_VISITS_2025) if has_copay else 0
    early_copays = early_2026 * visit_copay

    # accumulators: the older claim in this plan year, then other claims, then this one
    insurer = rng.choice(C.INSURERS)
    oop_max = plan["oop_max"]
    prior_ded = deductible - remaining
    older_dx = rng.choice([d for d in em_dx if em_levels(d, visit_copay)])
    older_em = rng.choice(em_levels(older_dx, visit_copay))
    if rng.random() < OLDER_SAME_VISIT:
        # a follow-up of the same problem at the same level: two visits, the same fee (the
        # same charge amount twice on the ledger, under two claims; issue 8, round 8)
        older_dx, older_em = visit_dx, em
    elif not has_copay and not prior_bal and rng.random() < 0.5:
        # the first visit to this practice: a new-patient code - only where the card log
        # shows no check-in copays from last year (a patient seen within three years is
        # established: CPT E/M guidelines, Pub. 100-04 ch. 12 30.6.7; domain review round 6),
        # and only without a balance brought forward (an older service's share still owed
        # says the patient was seen before; domain review round 7)
        older_em = NEW_FOR_EST[older_em]
    older_allowed = fee(ref, older_em, loc)
    older_line = {"line": 1, "hcpcs": older_em, "modifiers": [], "benefit": "office_visit",
                  "allowed": older_allowed, "markup_pct": markup, "pointers": ["A"]}
    older_line["billed"] = billed_cents(older_allowed, markup)
    # what the older visit itself added to the deductible (its allowed amount, or a copay
    # that counts toward it), so that the accumulator before this claim is what was drawn
    older_rest = older_allowed if visit_copay == 0 else (
        visit_copay if plan["copays_count_toward_deductible"] else 0)
    # (this year's earlier copays are in it where copays count toward the deductible)
    early_ded = early_copays if plan["copays_count_toward_deductible"] else 0
    # (round 11e, domain review F2: the older claim's EOB prints its deductible total, and an
    # insurer's stale total fell below it in 21/472 deductible_already_met; a stale total only
    # misses claims processed since, so where it is the error the older claim fits under it,
    # as round 10b's harmless lag already keeps its lagged total above the older claim's)
    ded_cap = prior_ded if stale_draw is None else min(prior_ded, deductible - stale_draw)
    older_ded_before = rng.randrange(min(early_ded, ded_cap - older_rest),
                                     ded_cap - older_rest + 1) \
        if ded_cap > older_rest else 0
    # an HSA-qualified HDHP pays nothing before the deductible is met (preventive care
    # aside), so all cost sharing until then is deductible: other claims add to the OOP
    # total beyond the deductible only once it is met (26 U.S.C. 223(c)(2)(A), (C); IRS
    # Notice 2004-23; domain review round 4: 25/440 HDHP members with the deductible unmet
    # showed more OOP than deductible). The draw is made alike either way
    hdhp = "hdhp" in plan["plan_id"]
    # (what other claims added before the older visit includes this year's earlier copays)
    older_extra = max(rng.randrange(0, 30_000),
                      early_copays - min(early_ded, older_ded_before))
    older_oop_before = older_ded_before + (
        0 if hdhp and older_ded_before < deductible else older_extra)
    older_cs = price_lines([older_line], plan, visit_copay=visit_copay,
                           ded_left=deductible - older_ded_before,
                           oop_left=oop_max - older_oop_before)[0]
    older_ded_after = older_ded_before + older_cs["deductible"] + (
        older_cs["copay"] if plan["copays_count_toward_deductible"] else 0)
    older_ded_after = min(older_ded_after, deductible)
    older_oop_after = older_oop_before + older_cs["patient"]
    prior_ded = max(prior_ded, older_ded_after)
    remaining = deductible - prior_ded
    # other claims this year (other providers, pharmacy copays) add to the OOP total beyond the
    # deductible, whatever the deductible state. On a copay plan whose copays do not count
    # toward the deductible, a member with deductible left may have paid much more in copays
    # (office visits elsewhere, prescriptions), which still count toward the OOP maximum
    # (45 CFR 156.130; DOMAIN.md §2): up to $2,500, so that a high OOP total does not by
    # itself say the deductible is met (issue 8, round 6)
    base_oop = older_oop_after + (prior_ded - older_ded_after)
    extra_hi = 80_000
    if remaining > 0 and has_copay and not plan["copays_count_toward_deductible"]:
        extra_hi = max(80_000, min(250_000, (oop_max - base_oop) // 2))
    extra = rng.randrange(0, extra_hi)
    prior_oop = base_oop + (0 if hdhp and remaining > 0 else extra)
    # the copay is collected at check-in when the patient can pay, else billed on the
    # statement (any branch; the two errors about a check-in payment need one)
    uncapped = price_lines(lines, plan, visit_copay=visit_copay, ded_left=remaining,
                           oop_left=10 ** 12)
    pr_unc = sum(cs["patient"] for cs in uncapped)

    # what the insurer's EOB shows when the insurer erred (never near its own cap)
    stale_remaining = None
    eob_err: list[dict[str, int]] | None = None
    if kind == "deductible_already_met":
        # the insurer's stale accumulator: some deductible "left" before this claim (drawn
        # above; the older claim can only have lowered the plan's remaining since)
        assert stale_draw is not None
        stale_remaining = min(stale_draw, deductible - older_ded_after)
        assert stale_remaining > remaining + counted, (seed, stale_remaining, remaining)
        eob_err = price_lines(lines, plan, visit_copay=visit_copay, ded_left=stale_remaining,
                              oop_left=10 ** 12)
    elif side == "insurer" and kind == "coinsurance_on_billed":
        eob_err = [dict(cs) for cs in uncapped]
        for ln, cs in zip(lines, eob_err, strict=True):
            if cs["coinsurance"] > 0:
                wrong = C.pct_of(ln["billed"] - cs["deductible"] - cs["copay"],
                                 plan["coinsurance_pct"])
                cs["patient"] += wrong - cs["coinsurance"]
                cs["coinsurance"] = wrong
                cs["plan_paid"] = ln["allowed"] - cs["patient"]
                assert cs["plan_paid"] >= 0
    top = max(pr_unc, sum(cs["patient"] for cs in eob_err) if eob_err else 0)
    eob_capped = False
    oop_left = oop_max - prior_oop
    # other claims this year brought a close member near the OOP maximum: where the cap binds,
    # what is left is less than this claim's share, but more than the copay collected at
    # check-in and than the copays and deductible of the claim (the cap cuts coinsurance)
    fixed = sum(cs["copay"] + cs["deductible"] for cs in uncapped)
    lo = max(checkin + 100, pr_unc * 15 // 100, fixed + 100)
    room = _room_draw(rng, pr_unc, below=kind == "oop_max_exceeded") if close else 0
    if kind == "oop_max_exceeded" and not lo <= room < pr_unc:
        room = _bind_room(rng, pr_unc, lo)
    if close:
        cap_state = "bind" if (room < pr_unc and lo < pr_unc - 1) else "near"
        if kind == "deductible_already_met":
            # a stale claims-system total believed the member further from the cap, so the
            # cap never came into it: the room is above the insurer's share
            cap_state = "near"
        if cap_state == "bind" and not lo <= room < pr_unc:
            # (round 9b, domain review F2: clamping the room to ``lo`` left exactly $1.00 of
            # coinsurance in 12 of 120 scenarios) the room is redrawn by the law an ignored
            # cap's is, uniformly between the floor and the share where that law misses
            room = _bind_room(rng, pr_unc, lo)
    oop_bind = cap_state == "bind" and side != "insurer" or kind == "oop_max_exceeded"
    near_cap = cap_state == "near"
    if oop_bind:
        oop_left = room
        assert oop_left < pr_unc, (pr_unc, oop_left)
    elif cap_state == "bind" and eob_err is not None and top - pr_unc >= 300:
        # the insurer applied the cap, but to its wrong share: the room left lies between
        # the right share and the wrong one, so the EOB asks exactly the room
        oop_left = rng.randrange(pr_unc + 100, top - 100)
        eob_err = _capped(eob_err, oop_left)
        eob_capped = True
    elif cap_state != "far":
        # close, but with more room than this claim's (or the insurer's) share - and never
        # more than what the older visit and the deductible already paid leave (a room drawn
        # above it broke the accumulators' order; fresh seed 971233). A room drawn under the
        # larger share is redrawn by the near law above it, not clamped to it (round 10 domain
        # review, R1: a stale deductible total forced "near" piled the room at exactly $1.00
        # above the insurer's share, 11 of 48 deductible_already_met and no other finding)
        if room < top + 100:
            room = _room_draw(rng, top + 100, above=True)
        oop_left = max(top + 100, min(room, oop_max - base_oop))
    else:
        # far from the maximum: a member with the deductible met has paid coinsurance on
        # other claims since, anywhere up to where the room left is the top of the close law
        # (``CLOSE_RATIO``) times this claim's share, so the room against the share runs on
        # continuously from close to far and the OOP total alone does not say which (issue 8,
        # round 6: far members all sat just above the deductible, close ones at the maximum)
        base = older_oop_after + (prior_ded - older_ded_after)
        span = oop_max - round(CLOSE_RATIO[1] * top) - base
        if remaining == 0 and span > 0:
            oop_left = oop_max - base - rng.randrange(span)
        if oop_left <= top:  # (never more room than the OOP already met leaves)
            oop_left = top + rng.randrange(100, max(101, min(
                rng.choice((20_001, 60_001)), oop_max - base - top + 1)))
    prior_oop = oop_max - oop_left
    assert prior_oop >= older_oop_after + (prior_ded - older_ded_after), (prior_oop, oop_max)

    correct = price_lines(lines, plan, visit_copay=visit_copay, ded_left=remaining,
                          oop_left=oop_left)
    if kind == "oop_max_exceeded":
        eob_shares = [dict(cs) for cs in uncapped]
    elif eob_err is not None:
        eob_shares = eob_err
    else:
        eob_shares = [dict(cs) for cs in correct]
    if not (oop_bind or eob_capped):
        assert sum(cs["patient"] for cs in eob_shares) < oop_left, "OOP cap must not bite"
    # the insurer's own out-of-pocket total printed on the EOB after this claim: where it
    # ignored the cap its (stale) total stops at or below the maximum — that mismatch with
    # the plan of record is the insurer's error; elsewhere a claims system prints its
    # accumulator as of the processing date, so the EOB's total is the plan of record's
    # plus this claim (it never lags the member accumulator it was built from). Where the
    # insurer's stale deductible total is the error, its OOP total lags by the same dollars:
    # deductible dollars count toward the OOP maximum, so one stale claims-system total
    # misses both alike.
    pr_eob_total = sum(cs["patient"] for cs in eob_shares)
    stale_lag = 0 if stale_remaining is None else stale_remaining - remaining
    # (else the missed claim's deductible dollars alone lag, and the EOB reads as the plan of
    # record's state with that deductible left - close to the cap, a member whose copays filled it)
    # (round 11e, domain review F1: where the plan of record has the deductible met, its OOP
    # dollars outside the deductible include coinsurance paid after it was met, which no member
    # with the stale deductible left has paid; lagging the deductible dollars alone left EOBs
    # with the deductible unmet and thousands of OOP dollars beside it on plans whose copays
    # count toward the deductible and on HDHPs, 26 U.S.C. 223(c)(2) - never in another
    # finding. The EOB's stale totals are a state some member can be in: the missed claim's
    # coinsurance lags too wherever the plan of record has the deductible met, except close to
    # the cap on a plan whose copays, not counting toward the deductible, can fill the maximum
    # (``_copay_fill``): there copays carry the OOP total that far with deductible left. Round
    # 11c's 1-in-4 exception elsewhere was what kept such EOBs near the cap as often as in
    # the other findings; without it they are near less often - see the docs, round 11e)
    far_eob = stale_remaining is not None and remaining == 0 and not (close and _copay_fill(plan))
    assert not (stale_far and not far_eob), seed
    if far_eob:
        # (round 11) the missed claim met the deductible and carried coinsurance past it: the
        # insurer's OOP total before this claim is what a member with its stale deductible
        # left has paid - the deductible paid so far and other claims' copays, drawn as every
        # such member's is below (``extra_hi``) - so it lags the plan of record by at least the
        # deductible dollars it missed (its own stream; no other record's draw moves)
        far_rng = side_stream(TASK, "stale-far", seed)
        base_eob = older_oop_after + max(0, deductible - stale_remaining - older_ded_after)
        far_hi = 80_000
        if has_copay and not plan["copays_count_toward_deductible"]:
            far_hi = max(80_000, min(250_000, (oop_max - base_eob) // 2))
        far_extra = far_rng.randrange(0, far_hi)
        eob_prior = base_eob + (0 if hdhp else far_extra)
        stale_lag = max(stale_lag, prior_oop - eob_prior)
    elif stale_remaining is not None and remaining > 0:
        # (round 12b) with deductible left on the plan of record, the claim the stale totals
        # missed may have carried a copay outside the deductible as well: the OOP lag is the
        # harmless lag's law (one claim's copay at most, as elsewhere), never below the
        # deductible dollars missed. Drawn only as deductible dollars, this finding's lag with
        # deductible left was never $150-$500, against 0.31-0.52 elsewhere
        beyond = prior_oop - base_oop
        if beyond >= 100:
            law = min(_missed_claim(side_stream(TASK, "stale-copay-lag", seed)),
                      _one_claim_copay(plan))
            stale_lag += min(beyond, max(0, law - stale_lag))
    # (issue 8, round 10b) a claims system's printed totals lag the plan of record in every
    # branch, not only where the lag is the insurer's error: a claim processed elsewhere
    # posts to the EOB's totals later (the plan of record's note says so). Where the insurer
    # erred the lag is the error; elsewhere it is drawn by the same law (``STALE_LAG_MAX``,
    # its own stream) wherever it provably leaves this claim's adjudication as it is: the
    # cap does not bind (a lagged total only leaves more room), and either the dollars are
    # cost sharing outside the deductible (coinsurance after the deductible was met, copays
    # that do not count toward it) or the deductible left, lagged or not, is more than this
    # claim takes of it. Only an expert's step - does the difference change this claim's
    # cost sharing? - tells the two apart (red team rt12, cue 1: the plan ahead of the EOB
    # occurred in the two insurer errors alone).
    ded_lag = 0
    lag_rng = side_stream(TASK, "harmless-lag", seed)
    lag_draw = round(100 * STALE_LAG_MAX ** lag_rng.random())
    missed = _missed_claim(lag_rng)
    if stale_remaining is None and kind != "oop_max_exceeded" and not (oop_bind or eob_capped):
        # OOP dollars other claims added that went to no deductible (coinsurance after it was
        # met, copays and pharmacy copays outside it; an HDHP has none before it is met), by
        # the missed-claim law (round 12; at most what there is to miss)
        # (round 12b, domain review round 11, flag B: with the deductible left, the dollars
        # outside it are copays, and one claim missed carries one copay - at most the plan's
        # emergency copay or a pharmacy copay's top, never $1,800 of copays from one claim)
        beyond = prior_oop - base_oop
        if beyond >= 100:
            stale_lag = min(missed, beyond)
            if remaining > 0:
                stale_lag = min(stale_lag, _one_claim_copay(plan))
        elif prior_ded - lag_draw >= older_ded_after:
            # (a deductible lag: the older claim's EOB printed its total, so the lagged one
            # never falls below it)
            same = price_lines(lines, plan, visit_copay=visit_copay,
                               ded_left=remaining + lag_draw, oop_left=oop_left + lag_draw)
            same_unc = price_lines(lines, plan, visit_copay=visit_copay,
                                   ded_left=remaining + lag_draw, oop_left=10 ** 12)
            if same == correct and same_unc == uncapped:
                stale_lag = ded_lag = lag_draw
    if kind == "oop_max_exceeded":
        # the insurer's stale total missed a claim processed elsewhere (as a stale deductible
        # total does), by enough that this claim seemed to fit under the maximum: after it,
        # the EOB's total sits below the maximum by what a member who only comes near the cap
        # keeps (the "near" law of ``CLOSE_RATIO``), so the EOB reads like any near member's
        # and only the plan of record's room against the EOB's share shows the cap ignored.
        # (A stale total drawn far from the cap, below the plan's own, was a cue a forest
        # read from the two OOP totals' absolute values; issue 8, round 6.)
        # (round 12) The lag is the shortfall (the room the plan of record had short of the
        # share) plus the room the EOB leaves after the claim (12c, below), never below the
        # older EOB's total (round 11e, F2)
        room = oop_max - pr_eob_total - older_oop_after
        assert room >= 0, room
        # (round 12b, domain review round 11, flag A: the lag is OOP dollars outside the
        # deductible, so never more than there were since the older EOB - drawn to the ignored
        # cap's room alone, 16/333 EOBs printed an OOP total below their own deductible total)
        shortfall = prior_oop + pr_eob_total - oop_max
        beyond = prior_oop - base_oop
        assert 0 < shortfall <= beyond, (seed, shortfall, beyond)
        # (with the deductible left, as for the harmless lag, one claim's copay at most)
        top = min(shortfall + room, beyond)
        if prior_ded < deductible:
            top = min(top, max(shortfall, _one_claim_copay(plan)))
        # (round 12c, red team round 12: read above the shortfall, the lag left the EOB's room
        # after the claim under $100 in 0.48 of these against 0.05-0.07 elsewhere) the room the
        # EOB leaves is a close member's whose cap does not bind, in any finding: its room
        # beyond the share by the close law plus a harmless lag by the missed-claim law
        after = _room_draw(lag_rng, pr_eob_total, above=True) - pr_eob_total + _missed_claim(
            lag_rng, hi=max(100, min(100 * MISSED_CLAIM_MAX, beyond - shortfall)))
        lag = max(shortfall, min(top, shortfall + after))
        eob_oop_after = oop_max - (lag - shortfall)
    elif oop_bind or eob_capped:
        eob_oop_after = oop_max
    else:
        eob_oop_after = prior_oop - stale_lag + pr_eob_total
    # where a copay plan's deductible is not met, what the member paid beyond the deductible
    # is copays (no coinsurance before the deductible): the claims counted are at least that sum
    # over the plan's specialist copay (domain review round 8b, F2: $5,159.72 of copays in 4
    # claims, the largest copay $230)
    # (round 9b, domain review F3: at one office copay a claim the count reached 100-241 by
    # autumn) office-visit copays fill at most ``OFFICE_COPAYS_MAX`` claims, the rest being
    # pharmacy copays of up to ``RX_COPAY_MAX`` a fill (copays count toward the maximum:
    # 45 CFR 156.130(a), DOMAIN.md §2), so the count stays plausible
    copay_spend = prior_oop - prior_ded if (remaining > 0 and has_copay) else 0
    office = min(copay_spend, OFFICE_COPAYS_MAX * plan["copay_specialist"])
    other_claims = max(rng.randrange(2, 10), early_2026 + 1,
                       -(-office // max(1, plan["copay_specialist"]))
                       + -(-(copay_spend - office) // RX_COPAY_MAX))

    # what the provider's statement asks of the patient (itemized patient share)
    stmt_shares = [dict(cs) for cs in eob_shares]
    if side == "provider" and kind == "coinsurance_on_billed":
        for ln, cs in zip(lines, stmt_shares, strict=True):
            if cs["coinsurance"] > 0:
                wrong = C.pct_of(ln["billed"] - cs["deductible"] - cs["copay"],
                                 plan["coinsurance_pct"])
                cs["patient"] += wrong - cs["coinsurance"]
                cs["coinsurance"] = wrong

    pr_correct = sum(cs["patient"] for cs in correct)
    pr_eob = sum(cs["patient"] for cs in eob_shares)
    pr_stmt = sum(cs["patient"] for cs in stmt_shares)
    total_billed = sum(ln["billed"] for ln in lines)
    total_allowed = sum(ln["allowed"] for ln in lines)
    plan_paid = sum(cs["plan_paid"] for cs in eob_shares)
    co45 = total_billed - total_allowed
    copay_credited = kind != "copay_not_credited"
    dup_line = rng.choice(lines) if kind == "duplicate_posting" else None
    # the practice's system may have written the duplicate down to the contracted rate too
    # (its own CO-45 row): the patient is then billed the line's allowed amount again
    dup_adjusted = dup_line is not None and rng.random() < 0.5
    # the self-pay items bought at check-in (any branch; round 13: drawn here, on their own
    # stream, so that a duplicate posting can be one of them)
    # (domain review round 13: the practice's item has one price, in whole dollars, at both
    # visits; red team round 13: a sale keyed twice was above the item's price range in 0.88
    # of cases and no other charge ever was, so a patient buys two of it - sold and paid as
    # two - in ``PAIR_SHARE`` of sales, in every branch)
    items = side_stream(TASK, "retail-items", seed)
    item, lo_c, hi_c = RETAIL[specialty]
    price = items.randrange(lo_c // 100 + 1, hi_c // 100 + 1) * 100
    retail_buys: list[tuple[bool, int]] = []  # (at this visit?, units), each sold at ``price``
    for this_visit, p_item in ((False, 0.25), (True, 0.35)):
        if items.random() < p_item:
            retail_buys.append((this_visit, 2 if items.random() < PAIR_SHARE else 1))
    while {price * units for _, units in retail_buys} & {checkin, older_cs["copay"]}:
        price += 100  # never a copay's amount (the desk's two captures stay apart)
    # issue 8, round 13 (the audit's --explain and the red team: this visit's part of the
    # amount due was $89+ in 9 of 10 duplicate postings - a whole line's charge - against a
    # median of $25-$74 elsewhere, so its size alone read the finding, AUC 0.95): the charge
    # keyed at two units is this visit's self-pay item wherever the patient bought one (a
    # retail sale keyed twice at the desk; a single one - a pair keyed twice would be four
    # prices, above any sale), so the duplicate is as often a few dollars as any other
    # finding's overcharge. Only the row's amount against the card's capture (the practice's
    # policy: self-pay items are paid in full when sold) shows it
    dup_item = kind == "duplicate_posting" and (True, 1) in retail_buys
    if dup_item:
        dup_line, dup_adjusted = None, False
    # CO-45 posted per line or as one row (any branch); a balance-billing practice wrote off
    # nothing, only one line's difference (posted per line), or the difference to last
    # year's contracted rate (its fee schedule was not updated)
    per_line_adj = len(lines) > 1 and rng.random() < 0.5
    adj_rows: list[tuple[dict[str, Any] | None, int]]
    coins_debit = 0  # the practice's coinsurance above the plan's share, posted as a charge
    bb_mode = None
    if kind == "balance_billing":
        # (issue 8, round 7: a claim without any CO-45 row on the ledger was balance billing
        # alone - the count of "Contractual" rows read it, importance 0.38 - so a write-off
        # posted at all is the commoner failure; last year's rate posts per line where the
        # practice posts per line, the largest line short)
        bb_mode = _weighted(rng, (("none", 1), ("one_line", 3 if per_line_adj else 0),
                                  ("stale_rate", 4)))
        if bb_mode == "one_line":
            keep = rng.choice(lines)
            adj_rows = [(keep, keep["billed"] - keep["allowed"])]
        elif bb_mode == "stale_rate":
            delta = rng.randrange(300, max(301, min(co45, total_allowed) // 5))
            big = max(lines, key=lambda ln: (ln["billed"] - ln["allowed"], -ln["line"]))
            adj_rows = ([(ln, ln["billed"] - ln["allowed"] - (delta if ln is big else 0))
                         for ln in lines] if per_line_adj else [(None, co45 - delta)])
        else:
            adj_rows = []
    # what the practice wrote off per line (for its itemized statement)
    line_wo = {ln["line"]: ln["billed"] - ln["allowed"] for ln in lines}
    if bb_mode == "none":
        line_wo = dict.fromkeys(line_wo, 0)
    elif bb_mode == "one_line":
        line_wo = {k: (v if k == adj_rows[0][0]["line"] else 0) for k, v in line_wo.items()}
    elif bb_mode == "stale_rate":
        big = max(lines, key=lambda ln: (ln["billed"] - ln["allowed"], -ln["line"]))
        assert line_wo[big["line"]] > delta
        line_wo[big["line"]] -= delta
    elif side == "provider" and kind == "coinsurance_on_billed":
        # the practice wrote off only what its own (wrong) statement left unpaid
        if per_line_adj:
            adj_rows = [(ln, ln["billed"] - es["plan_paid"] - ss["patient"])
                        for ln, es, ss in zip(lines, eob_shares, stmt_shares, strict=True)]
        else:
            adj_rows = [(None, total_billed - plan_paid - pr_stmt)]
        if any(a < 0 for _, a in adj_rows):
            # where the plan's OOP cap cut the patient share, the practice's uncapped share
            # can exceed the charge less the plan's payment: a write-off is never negative
            # (DOMAIN.md §1d: CO-45 writes the charge down to the allowed amount), so the
            # practice writes off the contracted difference and posts its extra coinsurance
            # as a patient charge (domain review round 4: 84006, 84419 showed a negative
            # CO-45). The statement and the expected answer are unchanged
            coins_debit = co45 - sum(a for _, a in adj_rows)
            adj_rows = ([(ln, ln["billed"] - ln["allowed"]) for ln in lines] if per_line_adj
                        else [(None, co45)])
    elif per_line_adj:
        adj_rows = [(ln, ln["billed"] - ln["allowed"]) for ln in lines]
    else:
        adj_rows = [(None, co45)]
    adj_posted = sum(a for _, a in adj_rows)

    # the provider's statement balance (before any statement payment)
    if kind == "balance_billing":
        stmt_balance = total_billed - plan_paid - adj_posted - checkin
    else:
        stmt_balance = pr_stmt - (checkin if copay_credited else 0)
        if dup_line is not None:
            stmt_balance += dup_line["allowed"] if dup_adjusted else dup_line["billed"]
        elif dup_item:
            stmt_balance += price
    # (where the balance forward was drawn until round 7d: the same draws are made here, so
    # that every later record's draw stays as it was and the splits move no more than the
    # realism fixes need)
    if rng.random() >= PRIOR_NONE:
        _prior_draw(rng)
    due = stmt_balance + prior_bal
    if stmt_balance <= 0:  # nothing to pay for this visit (a copay-only visit)
        paid, pay_state = False, "none"
    if pay_state == "part" and due < PART_DUE_MIN:
        # (a double charge without a check-in copay is the statement's payment run twice:
        # a statement too small to pay in part was paid in full)
        if kind == "duplicate_charge" and not checkin:
            paid, pay_state = True, "full"
        else:
            pay_state = "none"
    if paid:
        assert due > 0
    # a part payment: some of the statement, by card online, the rest still open. What is
    # left open is drawn from one law in every branch (``OPEN_RANGE``, never all of the
    # statement), not as a fraction of the amount due: a fraction carried the finding's own
    # overstatement into the ledger balance, which alone then guessed refund vs correction;
    # now only the open balance against the overcharge does (issue 8, round 6)
    # (domain review round 8b, F3: the open part was capped at 90% of the amount due, so 12 in
    # 40 part payments were exactly a tenth of it; a patient pays a round sum, so the part paid
    # is whole dollars, and an open part too large for the statement is redrawn from the same
    # law, a tenth to nine tenths of the amount due in whole dollars only where none fits)
    paid_part = _part_draw(rng, due) if pay_state == "part" else 0
    paid_amount = due if paid else paid_part
    # the payment run twice (round 9, one law in every branch): the portal's run of this
    # statement's payment where the law chose the portal and the patient paid online, else
    # the desk's run of this visit's check-in copay, else of the older claim's payment
    # (on the check-in's draw, not on a check-in a copay never credited needs: the portal's
    # share is then one law in that branch too)
    portal_twice = run_twice and pay_state != "none" and (
        portal_pref or not (checkin_draw and checkin))
    desk_twice = run_twice and not portal_twice
    twice_of = ("statement_payment" if portal_twice else "checkin_copay" if desk_twice
                and checkin else "older_payment" if desk_twice else None)
    older_paid = older_cs["copay"] or older_cs["patient"]
    # a statement paid in full in two parts, days apart (any branch, its own stream; round 9:
    # drawn here, so that the portal's second run of the later part is known)
    parts = side_stream(TASK, "two-parts", seed)
    split_part = (parts.randrange(due // 400, due * 3 // 500) * 100
                  if paid and due >= 4000 and parts.random() < 0.3 else 0)
    twice_amount = {"statement_payment": due - split_part if paid else paid_part,
                    "checkin_copay": checkin,
                    "older_payment": older_paid, None: 0}[twice_of]
    # the second run the practice refunded: the law's in every branch but the double charge;
    # there (round 9b) the law's refunded run, where drawn, is on another desk payment - this
    # visit's check-in copay if the portal ran the statement twice, else the older claim's
    refunded_of = twice_of if kind != "duplicate_charge" else (
        None if not refund_run else "checkin_copay"
        if twice_of == "statement_payment" and checkin else "older_payment")
    if kind == "duplicate_charge":
        duplicate_of = twice_of
        assert twice_of != "older_payment", (seed, pay_state)
    correct_balance = prior_bal + pr_correct - checkin - paid_amount
    if kind == "duplicate_charge":
        dup_amount = twice_amount
        assert dup_amount > 0, (duplicate_of, pay_state)
        correct_balance -= dup_amount
        overcharge = dup_amount
    else:
        overcharge = stmt_balance - (pr_correct - checkin)
        assert pr_correct - checkin >= 0
    if kind == "no_error":
        assert overcharge == 0, overcharge
    else:
        assert overcharge > 0, (kind, overcharge)

    # the account's open balance (a credit goes against what is owed on the account)
    open_balance = due - paid_amount
    accepted_resolutions: list[str]
    # amounts an expert may file besides the overcharge: "resolution:cents"
    amount_alternatives: list[str] = []
    if side == "insurer":
        party, resolution = "insurer", "claim_reprocessing"
    elif side == "none":
        party, resolution = "none", "no_action"
    elif kind == "duplicate_charge":
        # the practice holds the duplicate payment; its stated policy says whether a credit
        # goes against an open balance first or back to the card
        party = "provider"
        if policy == "apply" and open_balance >= overcharge:
            resolution = "balance_correction"
        else:
            resolution = "refund_request"
    else:
        # a practice's overstatement: corrected on the open balance where that covers it,
        # refunded where the patient paid it
        party = "provider"
        resolution = "balance_correction" if open_balance >= overcharge else "refund_request"
    accepted_resolutions = [resolution]
    if side == "insurer":
        # (round 11e, F4) a half-cent coinsurance: the overcharge by the half-even share too
        even = half_even_total(lines, plan, visit_copay=visit_copay, ded_left=remaining,
                               oop_left=oop_left)
        if even != pr_correct:
            amount_alternatives = [f"{r}:{overcharge + pr_correct - even}"
                                   for r in ("claim_reprocessing", "appeal")]
        # an EOB that took too much cost sharing paid less than the plan owes: a reduction of
        # a benefit, so an adverse benefit determination the member may appeal as well as ask
        # the insurer to reprocess (these are individual-market plans: 45 CFR 147.136(b)(3),
        # which incorporates 29 CFR 2560.503-1(m)(4)) — most billers call for reprocessing
        # first, a written internal appeal is as right
        accepted_resolutions = ["claim_reprocessing", "appeal"]
    elif kind == "duplicate_charge" and resolution == "balance_correction":
        # a second capture of the same card payment is a processing error, not a voluntary
        # overpayment: the cardholder may insist on the money back on the card (card-network
        # duplicate-processing rules) whatever the practice's apply-first policy says, so a
        # refund of the whole duplicate is as defensible as the credit to the open balance
        accepted_resolutions = ["balance_correction", "refund_request"]
    elif kind == "duplicate_charge" and policy == "apply" and 0 < open_balance < overcharge:
        # part of the credit clears the balance, the rest is refunded: either filing is
        # right, for the whole duplicate or for the part that filing covers
        accepted_resolutions = ["refund_request", "balance_correction"]
        amount_alternatives = [f"balance_correction:{open_balance}",
                               f"refund_request:{overcharge - open_balance}"]
    elif side == "provider" and kind != "duplicate_charge" and 0 < open_balance < overcharge:
        # paid in part, and overstated by more than is still open: the balance is corrected to
        # nothing and the rest refunded — either filing is right, for the whole overcharge or
        # for the part that filing covers
        accepted_resolutions = ["refund_request", "balance_correction"]
        amount_alternatives = [f"balance_correction:{open_balance}",
                               f"refund_request:{overcharge - open_balance}"]
    # the finding a domain expert would sign; a provider statement that computes coinsurance
    # on the billed charge bills the patient above the EOB's responsibility, which is also
    # fairly called balance billing; a charge line entered twice is, in revenue-cycle usage,
    # also a "duplicate charge"
    accepted_findings = [kind]
    if kind == "coinsurance_on_billed" and side == "provider":
        accepted_findings.append("balance_billing")
    if kind == "duplicate_posting":
        accepted_findings.append("duplicate_charge")


    # -- dates --------------------------------------------------------------------------
    dos = _weekday(dt.date(2026, 8, 24) + dt.timedelta(days=rng.randrange(45)))
    submitted = dos + dt.timedelta(days=rng.randrange(1, 4))
    processed = submitted + dt.timedelta(days=rng.randrange(10, 26))
    era_posted = processed + dt.timedelta(days=rng.randrange(2, 5))
    stmt_date = era_posted + dt.timedelta(days=rng.randrange(3, 9))
    pay_date = stmt_date + dt.timedelta(days=rng.randrange(3, 15))
    today = (pay_date if paid_amount else stmt_date) + dt.timedelta(days=rng.randrange(7, 31))
    # the older visit was processed and paid off before this one (its EOB feeds the
    # accumulators as of the day before this visit)
    older_dos = _weekday(dos - dt.timedelta(days=rng.randrange(42, 55)))
    older_processed = older_dos + dt.timedelta(days=rng.randrange(12, 20))
    older_paid_date = older_processed + dt.timedelta(days=rng.randrange(8, 16))

    # -- ids ----------------------------------------------------------------------------
    case_id = f"CLR-{rng.randrange(10**5, 10**6)}-{_chars(rng, 4)}"  # never the seed
    patient = C.person(rng)
    claim_id = f"CLM-{_digits(rng, 8)}"
    older_claim_id = f"CLM-{_digits(rng, 8)}"
    plan_key = f"PLN-{insurer.split()[0][:3].upper()}-{plan['metal_level'][:3].upper()}-" \
               f"{_digits(rng, 5)}"
    account = f"ACCT-{_digits(rng, 7)}"
    member_id = f"M{_digits(rng, 9)}"
    prov_npi = C.npi(rng)
    # every record draws its own number: a distractor's id has the same shape as the case's
    # records and shares no suffix with them
    ids = {k: f"{prefix}-{_digits(rng, 6)}" for k, prefix in (
        ("claim", "CLMREC"), ("eob", "EOB"), ("provider", "PRV"), ("ledger", "LED"),
        ("plan", "PLAN"), ("plog", "PLOG"), ("old_eob", "EOB"), ("old_claim", "CLMREC"))}
    processor = rng.choice(C.PROCESSORS)
    card = (rng.choice(CARD_BRANDS), _digits(rng, 4))
    pricing_note = (f"Allowed amounts are the plan's contracted rates: 100% of the "
                    f"{ref.release} Medicare Physician Fee Schedule non-facility amount for "
                    f"{loc['locality_name'].title()} (MAC {loc['mac']}, locality "
                    f"{loc['locality']}).")

    # -- EOB lines ------------------------------------------------------------------------
    def eob_lines(lns: list[dict[str, Any]], shares: list[dict[str, int]],
                  date: dt.date) -> list[dict[str, Any]]:
        out = []
        for ln, cs in zip(lns, shares, strict=True):
            adj = [{"group": "CO", "carc": "45", "amount": D(ln["billed"] - ln["allowed"]),
                    "description": _carc(ref, "45")}]
            for carc, part in (("1", "deductible"), ("2", "coinsurance"), ("3", "copay")):
                if cs[part]:
                    adj.append({"group": "PR", "carc": carc, "amount": D(cs[part]),
                                "description": _carc(ref, carc)})
            out.append({"line": ln["line"], "hcpcs": ln["hcpcs"], "modifiers": ln["modifiers"],
                        "description": _desc(ref, ln["hcpcs"]), "date_of_service": C.iso(date),
                        "billed": D(ln["billed"]), "allowed": D(ln["allowed"]),
                        "deductible": D(cs["deductible"]), "coinsurance": D(cs["coinsurance"]),
                        "copay": D(cs["copay"]), "plan_paid": D(cs["plan_paid"]),
                        "patient_responsibility": D(cs["patient"]), "adjustments": adj,
                        "rarcs": []})
        return out

    ded_after_eob = eob_ded_before = (prior_ded - ded_lag if stale_remaining is None
                                      else deductible - stale_remaining)
    for cs in eob_shares:
        ded_after_eob += cs["deductible"] + (
            cs["copay"] if plan["copays_count_toward_deductible"] else 0)
    ded_after_eob = min(ded_after_eob, deductible)
    if hdhp and ded_after_eob < deductible:
        # a stale claims system that believes an HDHP's deductible unmet believes no
        # coinsurance paid either: its OOP total is its deductible total (26 U.S.C. 223(c)(2))
        eob_oop_after = ded_after_eob
    eob = {
        "claim_id": claim_id, "plan_id": plan_key, "insurer": insurer, "member_id": member_id,
        "patient_name": patient, "provider": {"name": practice, "npi": prov_npi},
        "network_status": "in-network", "claim_status": "processed as primary",
        "date_of_service": C.iso(dos), "processed_date": C.iso(processed),
        "lines": eob_lines(lines, eob_shares, dos),
        "totals": {"billed": D(total_billed), "allowed": D(total_allowed),
                   "plan_paid": D(plan_paid), "patient_responsibility": D(pr_eob)},
        "accumulators": {"deductible": D(deductible), "deductible_met_ytd": D(ded_after_eob),
                         "out_of_pocket_max": D(oop_max),
                         "oop_met_ytd": D(eob_oop_after),
                         "as_of": C.iso(processed)},
        "payment": {"method": "EFT", "trace_number": _digits(rng, 10),
                    "amount": D(plan_paid), "paid_to": practice},
        "pricing_note": pricing_note,
        "message": "The provider may bill you only the amount shown as your responsibility.",
    }
    older_eob = {
        "claim_id": older_claim_id, "plan_id": plan_key, "insurer": insurer,
        "member_id": member_id, "patient_name": patient,
        "provider": {"name": practice, "npi": prov_npi}, "network_status": "in-network",
        "claim_status": "processed as primary", "date_of_service": C.iso(older_dos),
        "processed_date": C.iso(older_processed),
        "lines": eob_lines([older_line], [older_cs], older_dos),
        "totals": {"billed": D(older_line["billed"]), "allowed": D(older_allowed),
                   "plan_paid": D(older_cs["plan_paid"]),
                   "patient_responsibility": D(older_cs["patient"])},
        "accumulators": {"deductible": D(deductible), "deductible_met_ytd": D(older_ded_after),
                         "out_of_pocket_max": D(oop_max), "oop_met_ytd": D(older_oop_after),
                         "as_of": C.iso(older_processed)},
        "payment": {"method": "EFT", "trace_number": _digits(rng, 10),
                    "amount": D(older_cs["plan_paid"]), "paid_to": practice},
        "pricing_note": pricing_note,
        "message": "The provider may bill you only the amount shown as your responsibility.",
    }

    # -- claim record -----------------------------------------------------------------------
    def claim_record(cid: str, lns: list[dict[str, Any]], dxs: list[str], date: dt.date,
                     sub: dt.date, paid_at_visit: int) -> dict[str, Any]:
        return {
            "claim_id": cid, "patient_id": case_id, "plan_id": plan_key, "insurer": insurer,
            "member_id": member_id,
            "provider": {"name": practice, "npi": prov_npi, "specialty": specialty},
            "place_of_service": "11", "date_of_service": C.iso(date),
            "submitted_date": C.iso(sub), "status": "processed",
            "diagnoses": [{"code": d, "description": _dx_desc(ref, d)} for d in dxs],
            "lines": [{"line": ln["line"], "hcpcs": ln["hcpcs"], "modifiers": ln["modifiers"],
                       "units": 1, "billed": D(ln["billed"]),
                       "diagnosis_pointers": ln["pointers"]} for ln in lns],
            "total_billed": D(sum(ln["billed"] for ln in lns)),
            "patient_amount_paid": D(paid_at_visit),
        }

    # item 29 (amount paid) as the practice's system filled it: many leave it blank; it is
    # drawn independently of what went wrong (round 9: filled at ``ITEM29_SHARE``; a filled
    # item 29 says the desk collected the copay, which a copay never credited always has, so
    # at one half it was blank in 48% of those against 74% elsewhere)
    claim = claim_record(claim_id, lines, dx_codes, dos, submitted,
                         checkin if rng.random() < ITEM29_SHARE else 0)
    older_claim = claim_record(older_claim_id, [older_line], [older_dx], older_dos,
                               older_dos + dt.timedelta(days=2), older_cs["copay"])

    # -- processor log ----------------------------------------------------------------------
    txns: list[dict[str, Any]] = []

    def txn(kind_: str, amount: int, when: dt.datetime, desc: str, *, status: str = "settled",
            auth: str | None = None, original: str | None = None) -> dict[str, Any]:
        t = {"transaction_id": f"TXN-{_chars(rng, 10)}", "type": kind_, "amount": D(amount),
             "currency": "USD", "timestamp": _iso_z(when), "card_brand": card[0],
             "last4": card[1], "auth_code": auth or _chars(rng, 6), "status": status,
             "merchant_reference": account, "description": desc}
        if original:
            t["original_transaction_id"] = original
        txns.append(t)
        return t

    # issue 8, round 6 (red team round 5: the number of "Copay at check-in" transactions read
    # duplicate_charge at AUC 0.96, the log's length at 0.82): a copay plan's log holds the
    # check-in copays of 3-5 visits in every branch - this visit's and the older visit's, the
    # terminal's second capture where that is the error, and the rest from visits in the
    # previous plan year (outside the ledger's export and the plan's accumulators), so the
    # count is drawn after the branch's own captures; only two settled captures on one auth
    # each, seconds apart, tell the double charge. In every branch alike (60%) one desk swipe
    # also left a non-charge event: a declined first swipe, or a duplicate authorization the
    # desk voided before capture (neither moves money, DOMAIN.md: only settled captures do)
    desk_noise = rng.choice(("declined", "voided")) if rng.random() < DESK_NOISE else None
    desk_events: list[int] = []  # which card_present call carries it, drawn below

    def card_present(amount: int, date: dt.date, desc: str,
                     after: dict[str, Any] | None = None) -> dict[str, Any]:
        when = _desk_ts(date, loc["state"], rng)
        if after is not None:
            # (round 11, domain review R4: an item bought at the same check-in was swiped at
            # its own time of day, a median of three hours from the copay) minutes after the
            # copay's capture, on its own stream so that no other draw moves
            # (before it where the desk's day would end first: business hours as ``_desk_ts``)
            copay_at = dt.datetime.fromisoformat(after["timestamp"][:-1])
            gap = dt.timedelta(seconds=same_desk.randrange(45, 480))
            off = utc_offset(loc["state"], date)
            closes = dt.datetime(date.year, date.month, date.day) + dt.timedelta(
                hours=min(17, 23 + off) - off)
            when = (copay_at + gap if copay_at + gap + dt.timedelta(minutes=4) < closes
                    else copay_at - gap - dt.timedelta(minutes=1))
        desk_events.append(len(desk_events))
        if desk_noise is not None and len(desk_events) - 1 == noisy_event:
            first_swipe, when = when, when + dt.timedelta(seconds=rng.randrange(20, 120))
            if desk_noise == "declined":
                txn("authorization", amount, first_swipe, desc, status="declined")
            else:
                v = txn("authorization", amount, first_swipe, desc, status="approved")
                txn("void", amount, first_swipe + dt.timedelta(seconds=rng.randrange(5, 15)),
                    "Void of duplicate submission", status="approved",
                    original=v["transaction_id"])
        a = txn("authorization", amount, when, desc, status="approved")
        return txn("capture", amount, when + dt.timedelta(seconds=rng.randrange(2, 40)), desc,
                   auth=a["auth_code"])

    assert not has_copay or older_cs["copay"]  # a copay plan's older visit paid its copay
    n_desk = (bool(older_cs["copay"]) + bool(checkin) + early_2026 + visits_2025)
    noisy_event = rng.randrange(n_desk) if n_desk else -1
    last_year: set[dt.date] = set()
    while len(last_year) < visits_2025:
        last_year.add(_weekday(EARLIER_FROM + dt.timedelta(days=rng.randrange(EARLIER_SPAN))))
    # this year's earlier visits: before the ledger's export opens (at most 25 days before
    # the older visit), so in every branch they were captured and are not on the ledger
    this_year: set[dt.date] = set()
    span = (older_dos - dt.timedelta(days=EARLY_2026_GAP) - EARLY_2026_FROM).days
    while len(this_year) < early_2026:
        day = _weekday(EARLY_2026_FROM + dt.timedelta(days=years.randrange(span)))
        if day < older_dos - dt.timedelta(days=EARLY_2026_GAP):
            this_year.add(day)
    for day in sorted(last_year) + sorted(this_year):
        card_present(visit_copay, day, "Copay at check-in")

    # older claim: paid in full (copay at check-in, or the statement online)
    if older_cs["copay"]:
        first = card_present(older_cs["copay"], older_dos, "Copay at check-in")
    else:
        first = txn("sale", older_cs["patient"], _ts(older_paid_date, rng),
                    f"Online statement payment {older_claim_id}")
    # an old double charge that WAS refunded (not an error now)
    old_noise = rng.random() < OLD_REFUNDED_SHARE
    # a refund is issued at its own time of the practice's business hours (round 9b, domain
    # review: 37 of 144 refunds carried the first run's time of day; its own stream)
    r_clock = side_stream(TASK, "refund-clock", seed)

    def refund_at(base: dt.datetime, days: int) -> dt.datetime:
        return _desk_ts(_weekday(base.date() + dt.timedelta(days=days)), loc["state"],
                        r_clock)

    if old_noise:
        again = txn("sale", _c(first["amount"]),
                    dt.datetime.fromisoformat(first["timestamp"][:-1])
                    + dt.timedelta(seconds=rng.randrange(5, 60)), first["description"])
        txn("refund", _c(first["amount"]), refund_at(
            dt.datetime.fromisoformat(first["timestamp"][:-1]), rng.randrange(1, 4)),
            "Refund of duplicate transaction", original=again["transaction_id"])
    checkin_txn = None
    if checkin:
        checkin_txn = card_present(checkin, dos, "Copay at check-in")
    # issue 8, round 8 (red team round 7, the audit's gb_counts: the number of this visit's
    # check-in copay captures read duplicate_charge, two of them its alone): in every branch,
    # 30% of terminals ran a check-in copay twice and the practice refunded the second capture
    # (not an error: DOMAIN.md, a refunded capture moves no money) - this visit's where the
    # copay was collected at check-in, else the older visit's (round 8b) - so two captures on
    # a visit day say nothing and only a second capture without its refund is a double charge
    # (its own stream: no other record's draw moves)
    # (round 9: the payment run twice is drawn by one law in every branch - ``twice_of``,
    # above: this visit's check-in copay, the older claim's payment, or this statement's
    # online payment - and refunded in every branch but the double charge, where that same
    # second run, left standing, is the error)
    def run_again(once: dict[str, Any], refund_twice: bool) -> None:
        """The terminal's (an authorization and a capture on their own approval) or the
        portal's (a second sale) second run of a payment, seconds later, and the practice's
        refund of it a few business days on unless it is the double charge."""
        base = dt.datetime.fromisoformat(once["timestamp"][:-1])
        a_when = base + dt.timedelta(seconds=dbl.randrange(8, 90))
        c_when = a_when + dt.timedelta(seconds=dbl.randrange(2, 20))
        r_days = dbl.randrange(1, 4)
        dbl.randrange(3600)  # (the former time-of-day draw, kept so no later draw moves)
        r_when = refund_at(base, r_days)
        auth2 = _chars(dbl, 6)
        runs = ((("authorization", a_when), ("capture", c_when)) if once["type"] == "capture"
                else (("sale", a_when),))
        cap_id = ""
        for typ, when in runs + ((("refund", r_when),) if refund_twice else ()):
            t = {"transaction_id": f"TXN-{_chars(dbl, 10)}", "type": typ,
                 "amount": once["amount"], "currency": "USD", "timestamp": _iso_z(when),
                 "card_brand": card[0], "last4": card[1],
                 "auth_code": _chars(dbl, 6) if typ == "refund" else auth2,
                 "status": "approved" if typ == "authorization" else "settled",
                 "merchant_reference": account,
                 "description": ("Refund of duplicate transaction" if typ == "refund"
                                 else once["description"])}
            if typ == "refund":
                t["original_transaction_id"] = cap_id
            cap_id = t["transaction_id"]
            txns.append(t)

    # (round 9b: the double charge's own run, unrefunded, and beside it the law's refunded
    # run where drawn)
    for of in dict.fromkeys((twice_of, refunded_of)):
        if of == "checkin_copay":
            run_again(checkin_txn, refund_twice=of == refunded_of)
        elif of == "older_payment":
            run_again(first, refund_twice=of == refunded_of)
    # a self-pay item bought at the same check-in (any branch): a second card capture that
    # day and a charge with its payment on the ledger, outside the claim
    # (and, independently, at the older visit's check-in)
    retail: list[tuple[dt.date, str, dict[str, Any], str]] = []
    same_desk = side_stream(TASK, "same-desk", seed)
    # (drawn above since round 13, ``retail_buys``)
    for this_visit, units in retail_buys:
        day, amt = (dos if this_visit else older_dos), price * units
        copay_then = checkin_txn if day == dos else first if older_cs["copay"] else None
        retail.append((day, item, card_present(amt, day, f"{item} at check-in",
                                               after=copay_then),
                       f"RTL-{_digits(rng, 6)}"))
    stmt_txns: list[dict[str, Any]] = []
    if paid:
        when = _ts(pay_date, rng)
        if rng.random() < 0.3:  # a first attempt voided and re-run: not an error
            # (domain review round 13, F2: the voided attempt is the run that follows it - in a
            # statement paid in two parts the later part, not the whole amount due)
            rerun = due - split_part if split_part else due
            v = txn("sale", rerun, when - dt.timedelta(minutes=rng.randrange(2, 9)),
                    f"Online statement payment {claim_id}", status="voided")
            txn("void", rerun, when - dt.timedelta(minutes=1),
                "Void of duplicate submission", status="approved",
                original=v["transaction_id"])
        if split_part:
            # paid in two parts, days apart: two payments of different amounts, not an error
            # (whole dollars, at its own time of day: domain review round 8b, F4 found the
            # two parts at the same second days apart)
            part = split_part
            # (domain review round 13, F1: 2-6 days back could fall on or before the statement
            # date, 0.8% of scenarios; the first part is paid after the statement went out)
            back = min(rng.randrange(2, 7), (pay_date - stmt_date).days - 1)
            first_day = (when - dt.timedelta(days=back)).date()
            stmt_txns.append(txn("sale", part, _ts(first_day, rng),
                                 f"Online statement payment {claim_id}"))
            stmt_txns.append(txn("sale", due - part, when,
                                 f"Online statement payment {claim_id}"))
        else:
            stmt_txns.append(txn("sale", due, when,
                                 f"Online statement payment {claim_id}"))
    elif paid_part:
        stmt_txns.append(txn("sale", paid_part, _ts(pay_date, rng),
                             f"Online statement payment {claim_id}"))
    if portal_twice:  # the portal ran this statement's (latest) online payment twice
        assert _c(stmt_txns[-1]["amount"]) == twice_amount
        run_again(stmt_txns[-1], refund_twice=twice_of == refunded_of)
    txns.sort(key=lambda t: (t["timestamp"], t["transaction_id"]))
    plog = {"patient_id": case_id, "merchant": practice, "processor": processor,
            "merchant_id": f"MID-{_digits(rng, 8)}", "transactions": txns,
            "dispute_policy": "Refunds of card payments are issued by the merchant. A "
                              "cardholder may also dispute an erroneous or duplicate "
                              "transaction through the card issuer within 120 days of the "
                              "transaction date.",
            "timezone_note": "Timestamps are UTC."}

    # -- ledger -----------------------------------------------------------------------------
    entries: list[dict[str, Any]] = []

    def post(date: dt.date, typ: str, desc: str, amount: int, reference: str) -> None:
        entries.append({"date": C.iso(date), "type": typ, "description": desc,
                        "amount": D(amount), "reference": reference})

    def post_claim(cid: str, lns: list[dict[str, Any]], shares: list[dict[str, int]],
                   date: dt.date, era: dt.date, adjs: list[tuple[dict[str, Any] | None, int]],
                   copay_txn: dict[str, Any] | None, dup: dict[str, Any] | None) -> None:
        for ln in lns:
            # a duplicate posting is the line keyed at two units in one charge row (issue 8,
            # round 8: a second unreversed charge row was one row more than any legitimate
            # posting leaves, read by counting rows); the claim went out at one unit (the
            # biller fixed the units on the claim before submission, never the ledger's
            # charge), so only the row's amount against the EOB's billed charge shows it
            post(date, "charge", f"{ln['hcpcs']} {_desc(ref, ln['hcpcs'])}",
                 ln["billed"] * (2 if dup is ln else 1), f"{cid} line {ln['line']}")
        if copay_txn is not None and batch_style:
            batched.setdefault(date, []).append(copay_txn)  # the day's deposit batch, below
        elif copay_txn is not None and date in desk_items:
            folded[date] = copay_txn  # posted with the item bought at that check-in, below
        elif copay_txn is not None:
            post(date, "patient_payment", DESK_LABEL if desk_style else
                 "Copay collected at check-in", _c(copay_txn["amount"]),
                 copay_txn["transaction_id"])
        # a re-entry copies the entry it repeats, a line keyed at two units included
        re_amt = 0 if reposted is None else reposted["billed"] * (2 if dup is reposted else 1)
        if reposted is not None and cid == claim_id and not rebilled:
            # a charge entered twice at posting and reversed by the biller: not an error
            post(date, "charge", f"{reposted['hcpcs']} {_desc(ref, reposted['hcpcs'])}",
                 re_amt, f"{cid} line {reposted['line']}")
            post(date + dt.timedelta(days=rng.randrange(1, 4)), "adjustment",
                 "Charge reversal - entered twice", re_amt,
                 f"{cid} line {reposted['line']}")
        elif reposted is not None and cid == claim_id:
            # the line voided and rebilled on a corrected claim before submission (a
            # diagnosis pointer or modifier fixed): the reversal and the rebilled charge of
            # the same amount both show, and the line is owed once
            day = date + dt.timedelta(days=rng.randrange(1, 3))
            post(day, "adjustment", "Charge reversal - voided for corrected claim",
                 re_amt, f"{cid} line {reposted['line']}")
            post(day, "charge", f"{reposted['hcpcs']} {_desc(ref, reposted['hcpcs'])} "
                 "(rebilled)", re_amt, f"{cid} line {reposted['line']}")
        post(era, "insurance_payment", f"{insurer} ERA payment",
             sum(cs["plan_paid"] for cs in shares), cid)
        # a duplicate the practice's system wrote down to the contracted rate too: its
        # CO-45 posting covers both units (the line's own row, or the claim's one row), so the
        # patient is billed the line's allowed amount again and no row is added
        dup_wo = dup["billed"] - dup["allowed"] if dup is not None and dup_adjusted else 0
        for ln, adj in adjs:
            if adj:
                post(era, "adjustment", "Contractual adjustment (CO-45)",
                     adj + (dup_wo if ln is None or ln is dup else 0),
                     cid if ln is None else f"{cid} line {ln['line']}")

    # the ledger export covers the plan year, or (any branch) only recent activity
    older_on_ledger = rng.random() < 0.7
    # issue 8, round 6 (red team round 5: the count of "Copay collected" ledger lines read
    # copay_not_credited): half the practices' systems post every front-desk card payment
    # as "Patient payment - front desk", one line per check-in - a copay and a self-pay item
    # paid at the same desk visit post as one line citing both card transactions - so the
    # number of copay lines says nothing; only matching the processor log's captures against
    # the ledger's references finds a copay never credited (any branch; the practice's style)
    # (its own stream, so the round-5 draws of every other record stay as they were)
    desk_style = side_stream(TASK, "desk-style", seed).random() < DESK_STYLE
    desk_items = {day for day, _, _, _ in retail
                  if desk_style and (day >= dos or older_on_ledger)}
    folded: dict[dt.date, dict[str, Any]] = {}
    # the practice posts the desk's card payments as end-of-day deposit batches (round 9,
    # ``BATCH_SHARE``, its own stream): one line per day for this patient's desk payments,
    # citing the batch number (the day's batches are numbered in order)
    batches = side_stream(TASK, "deposit-batch", seed)
    batch_style = batches.random() < BATCH_SHARE
    batched: dict[dt.date, list[dict[str, Any]]] = {}
    if prior_bal:  # the export opens with the balance brought forward from before it
        start = older_dos if older_on_ledger else dos
        # an export of recent activity opens after every payment it leaves out: a payment
        # settled after the balance-forward row but missing from the ledger would read as
        # never posted (DOMAIN.md §1d: every card payment posts as a credit), a provider
        # error the key does not hold (domain review round 4: the older visit's online
        # statement payment, 8-34 days before this visit, fell after the row in 5/440 seeds)
        hi_lag = 25
        if not older_on_ledger:
            paid_before = [dt.date.fromisoformat(t["timestamp"][:10]) for t in txns
                           if t["type"] in ("sale", "capture") and t["status"] != "voided"
                           and t["timestamp"][:10] < C.iso(dos)]
            hi_lag = min(hi_lag, (dos - max(paid_before)).days) if paid_before else hi_lag
        post(start - dt.timedelta(days=rng.randrange(3, hi_lag)), "charge",
             "Balance forward from prior statement", prior_bal, f"STMT-{_digits(rng, 6)}")
    # a line entered twice and reversed, or voided and rebilled: the same charge amount twice
    # (with its reversal) in every branch, a duplicate posting's too (issue 8, round 8: a
    # repeated charge amount was otherwise the duplicate posting's alone)
    reposted = rng.choice(lines) if rng.random() < REPOST_SHARE else None
    rebilled = reposted is not None and rng.random() < 0.5
    if older_on_ledger:
        older_copay_txn = first if older_cs["copay"] else None
        post_claim(older_claim_id, [older_line], [older_cs], older_dos,
                   older_processed + dt.timedelta(days=2),
                   [(None, older_line["billed"] - older_allowed)], older_copay_txn, None)
        if not older_cs["copay"]:
            post(older_paid_date, "patient_payment", "Patient payment - online portal",
                 older_cs["patient"], first["transaction_id"])
    post_claim(claim_id, lines, eob_shares, dos, era_posted, adj_rows,
               checkin_txn if copay_credited else None, dup_line)
    if coins_debit:
        post(era_posted, "charge", "Patient coinsurance per practice fee schedule",
             coins_debit, claim_id)
    for day, item, rtx, rref in retail:
        if day < dos and not older_on_ledger:
            continue
        # (round 13: a duplicate posting's item keyed at two units, its sale captured once)
        post(day, "charge", f"{item} (self-pay, not billed to insurance)",
             _c(rtx["amount"]) * (2 if dup_item and day == dos else 1), rref)
        if batch_style:
            batched.setdefault(day, []).append(rtx)
        elif desk_style:
            with_copay = [folded[day]] if day in folded else []
            post(day, "patient_payment", DESK_LABEL,
                 sum(_c(t["amount"]) for t in [*with_copay, rtx]),
                 "; ".join(t["transaction_id"] for t in [*with_copay, rtx]))
        else:
            post(day, "patient_payment", f"{item} paid at check-in", _c(rtx["amount"]),
                 rtx["transaction_id"])
    # one deposit batch a business day: the number is the batch of the year's first business
    # day plus the business days since (round 9b, domain review: numbers advanced by 3-40 a
    # batch, 4 in 38 business days - slower than one a day)
    batch_base = batches.randrange(1_000, 8_000)
    batches.randrange(3, 40)  # (the former step draw, kept so no later draw moves)
    for day in sorted(batched):
        batch_no = batch_base + sum(
            is_business_day(BATCH_EPOCH + dt.timedelta(days=i))
            for i in range((day - BATCH_EPOCH).days))
        post(day, "patient_payment", f"Front desk deposit batch B-{batch_no}",
             sum(_c(t["amount"]) for t in batched[day]), f"B-{batch_no}")
    for t in stmt_txns:
        post(dt.date.fromisoformat(t["timestamp"][:10]), "patient_payment",
             "Patient payment - online portal", _c(t["amount"]), t["transaction_id"])
    # the patient asked for a payment plan after the statement (any branch, at one rate for
    # every account with an open balance worth instalments): the practice moved the open
    # balance off the ledger into the plan, so the ledger reads zero while the statement still
    # shows the amount due. The balance is still owed (on the plan), so a correction goes
    # against it exactly as against an open ledger balance; only the statement and the
    # ledger's transfer together say what is open (issue 8, round 8: a zero ledger balance
    # never went with a balance correction, 0/226 on train)
    pay_plan = None
    if open_balance >= PLAN_MIN and rng.random() < PLAN_SHARE:
        base = pay_date if paid_part else stmt_date
        pay_plan = (f"PP-{_digits(rng, 6)}",
                    base + dt.timedelta(days=rng.randrange(1, (today - base).days + 1)))
        post(pay_plan[1], "adjustment", f"Balance transferred to payment plan {pay_plan[0]}",
             open_balance, pay_plan[0])
    entries.sort(key=lambda e: e["date"])  # stable: same-day entries keep posting order
    bal = 0
    for e in entries:
        amt = _c(e["amount"])
        bal += amt if e["type"] == "charge" else -amt
        e["balance_after"] = D(bal)
    ledger_balance = bal
    assert ledger_balance == (0 if pay_plan else due - paid_amount), (ledger_balance, due)
    ledger = {"patient_id": case_id, "account_id": account, "practice": practice,
              "patient_name": patient, "entries": entries, "balance": D(ledger_balance),
              "as_of": C.iso(today)}

    # -- provider record (with the statement) --------------------------------------------
    # itemized or not, independently of what went wrong; a balance-billing practice itemizes
    # the plan's cost sharing as the remittance gave it but asks for everything its ledger
    # leaves open (the write-off it failed to post included), so its itemized shares do not
    # add up to the amount due (issue 8, round 7: its line share printed as billed less the
    # plan's payment, a visit line's share far above any copay, read balance_billing at AUC
    # 0.85 from that one field; the amount due against the shares and the ledger's write-offs
    # against the EOB's CO-45 show it)
    share_items = None
    if rng.random() < 0.7:
        share_items = [{"line": ln["line"], "hcpcs": ln["hcpcs"], "copay": D(cs["copay"]),
                        "deductible": D(cs["deductible"]), "coinsurance": D(cs["coinsurance"]),
                        "patient_share": D(cs["patient"])}
                       for ln, cs in zip(lines, stmt_shares, strict=True)]
    # the statement states the amount due after insurance (and, often, the patient share per
    # line); the postings behind it — charges, insurance payments, write-offs, payments — are
    # the ledger's, where an agent must read them
    statement = {
        "statement_date": C.iso(stmt_date),
        "due_date": C.iso(stmt_date + dt.timedelta(days=30)),
        "date_of_service": C.iso(dos),
        "previous_balance": D(prior_bal),
        "balance_due": D(due),
    }
    if share_items is not None:
        statement["patient_share_lines"] = share_items
    statement["note"] = "Amount due after insurance."
    notes = [f"Claim {claim_id} submitted {C.iso(submitted)}; ERA posted {C.iso(era_posted)}."]
    if has_copay:
        notes.append("Front desk collects the plan copay at check-in when the patient can "
                     "pay; otherwise it is billed on the statement.")
    if paid:
        notes.append(f"Statement paid in full online on {C.iso(pay_date)}.")
    elif paid_part:
        notes.append(f"Statement paid in part online on {C.iso(pay_date)}; the rest is open.")
    if pay_plan is not None:
        notes.append(f"Open balance of ${D(open_balance)} moved to interest-free payment plan "
                     f"{pay_plan[0]} on {C.iso(pay_plan[1])} at the patient's request (monthly "
                     "instalments from next month); corrections reduce the plan balance.")
    provider_record = {
        "claim_id": claim_id, "provider": {"name": practice, "npi": prov_npi,
                                           "specialty": specialty},
        "patient_account": account, "patient_name": patient,
        "network_status": f"in-network (participating provider with {insurer})",
        "place_of_service": "11", "date_of_service": C.iso(dos),
        "lines": [{"line": ln["line"], "hcpcs": ln["hcpcs"], "modifiers": ln["modifiers"],
                   "description": _desc(ref, ln["hcpcs"]), "charge": D(ln["billed"])}
                  for ln in lines],
        "statement": statement, "notes": notes,
        "financial_policy": FINANCIAL_POLICY[policy],
    }

    # -- plan document (terms + the plan's own accumulator) -------------------------------
    plan_doc = C.plan_document(plan, plan_key, insurer)
    # (round 11f, broad domain review: where copays count toward the deductible the expected
    # share credits a claim's copay to the deductible as its line is processed, as the EOBs
    # do; the order of cost sharing did not say so, and the other reading changed the share in
    # 336/2,520 seeds - the sentence is on every plan document alike, whatever the finding)
    plan_doc["cost_sharing_order"] = plan_doc["cost_sharing_order"] + ". " + COPAY_CREDIT_NOTE
    plan_doc["benefits"] = {
        "office_visit": ({"copay_applies": True, "deductible_applies": False,
                          "coinsurance_applies": False,
                          "note": "Office visits: copay only (primary care or specialist); "
                                  "the deductible does not apply."}
                         if has_copay else
                         {"copay_applies": False, "deductible_applies": True,
                          "coinsurance_applies": True,
                          "note": "Office visits: deductible, then coinsurance."}),
        "office_procedure": {"copay_applies": False, "deductible_applies": True,
                             "coinsurance_applies": True,
                             "note": "Procedures in the office: deductible, then coinsurance "
                                     "of the allowed amount."},
    }
    plan_doc["network"] = ("In-network providers accept the plan's allowed amount as payment "
                           "in full and may not bill members the difference (CO-45).")
    # the plan of record's snapshot is dated: mostly (``SNAPSHOT_AFTER``, every branch alike)
    # it was taken after this claim was processed (a member portal shows current totals) and
    # already counts it, as the claim was processed (its
    # deductible and copays counted toward it, its patient share toward the OOP maximum). The
    # room before the claim is then the snapshot less this claim's own EOB amounts, so a
    # snapshot that shows less deductible room than the EOB applied is no error by itself
    # (issue 8, round 8: that disagreement occurred only where the deductible was stale); only
    # the snapshot's date against the EOB's processed date says which reading applies. Where
    # the insurer's claims system worked from a stale total (a deductible applied twice, a cap
    # ignored) the snapshot adds what the claim applied, but a real accumulator stops at its
    # limit (issue 8, round 8b, domain review F1: totals past the deductible or the maximum
    # occurred in the two insurer errors alone, 72/91, and gave them away), so the totals are
    # capped in every branch. The member's accumulator history then also shows the reading
    # before this claim was processed (dated as a snapshot before processing is, the same
    # law): only that reading against what the EOB applied shows a deductible applied after
    # it was met, or cost sharing past the maximum.
    snap_after = rng.random() < SNAPSHOT_AFTER
    snap_ded, snap_oop, counted_claims = prior_ded, prior_oop, other_claims + 1
    before_date = dos - dt.timedelta(days=1) + dt.timedelta(
        days=rng.randrange((processed - dos).days))
    if snap_after:
        snap_ded = min(deductible, prior_ded + (ded_after_eob - eob_ded_before))
        snap_oop = min(oop_max, prior_oop + pr_eob)
        counted_claims += 1
        snap_date = processed + dt.timedelta(days=rng.randrange((today - processed).days + 1))
        # (round 10b) a reading taken after processing counts the claims processed since as
        # well (a pharmacy fill, another provider's coinsurance), in every branch, by the law
        # of a claim processed elsewhere (``STALE_LAG_MAX``, its own stream), as cost sharing
        # outside the deductible (coinsurance once it is met, pharmacy copays; an HDHP has
        # none before it is met), so they add to the OOP total alone, up to the maximum: a
        # plan of record at the maximum beside an EOB below it is then not the ignored cap's
        # alone (red team rt12); only the reading before processing against the EOB's share
        # shows the cap ignored
        later = side_stream(TASK, "later-claims", seed)
        if later.random() < LATER_SHARE and (snap_ded == deductible or not hdhp) \
                and snap_date > processed:
            snap_oop = min(oop_max, snap_oop + round(100 * STALE_LAG_MAX ** later.random()))
            counted_claims += 1
    else:
        snap_date = before_date
    assert snap_ded <= deductible and snap_oop <= oop_max, (snap_ded, snap_oop)
    plan_doc["member_accumulators"] = {
        "member_id": member_id, "plan_year": "2026", "as_of": C.iso(snap_date),
        "deductible_met_ytd": D(snap_ded), "oop_met_ytd": D(snap_oop),
        "claims_counted_ytd": counted_claims,
        "note": "Plan-of-record accumulators as of the date shown: they count every claim "
                f"processed this plan year through that date ({counted_claims}, including "
                "other providers and pharmacy), each as it was processed, and stop at the "
                "plan's limits; claims processed elsewhere may post to the insurer's own EOB "
                "totals later.",
    }
    if snap_after:
        # (round 11e, domain review F3: dated anywhere from the visit to the day before
        # processing, the reading left a claim the later snapshot counts possibly processed
        # between it and this claim - 232/1500 close members, the answer resting on a
        # convention. It is the reading the day before processing: a claim it does not count
        # was processed on that day or later, so it is what this claim was adjudicated on)
        plan_doc["member_accumulators"]["history"] = [{
            "as_of": C.iso(processed - dt.timedelta(days=1)), "deductible_met_ytd": D(prior_ded),
            "oop_met_ytd": D(prior_oop), "claims_counted_ytd": other_claims + 1}]

    def art(key: str, typ: str, party: str, k: str, data: dict[str, Any],
            distractor: bool = False) -> dict[str, Any]:
        return {"artifact_id": ids[key], "type": typ, "party": party, "key": k,
                "distractor": distractor, "data": data}

    artifacts = [
        art("claim", "claim_record", "insurer", claim_id, claim),
        art("eob", "eob", "insurer", claim_id, eob),
        art("provider", "provider_record", "provider", claim_id, provider_record),
        art("ledger", "payment_ledger", "provider", case_id, ledger),
        art("plan", "plan_document", "insurer", plan_key, plan_doc),
        art("plog", "processor_log", "payment_processor", case_id, plog),
        art("old_eob", "eob", "insurer", older_claim_id, older_eob, distractor=True),
    ]
    if rng.random() < 0.5:
        artifacts.append(art("old_claim", "claim_record", "insurer", older_claim_id,
                             older_claim, distractor=True))

    # -- references -------------------------------------------------------------------------
    # the same two deadlines, worded the same way, in every scenario
    refund_dl = C.deadline("refund_request", stmt_date, 180, today,
                           "Practice financial policy: 180 days from the statement date "
                           "(stated in the provider record)",
                           f"{practice} patient financial policy")
    appeal_dl = C.deadline("internal_appeal", processed, 180, today,
                           "180 days from the adverse benefit determination (EOB processed "
                           "date used as the date of receipt)", "45 CFR 147.136(b)(3) "
                           "(incorporating 29 CFR 2560.503-1)")
    references = [_code_ref(ref, ln["hcpcs"], loc) for ln in lines]
    references += [C.regulation("cost_sharing"), C.regulation("appeal_rights"), appeal_dl,
                   refund_dl]
    assert appeal_dl["data"]["open"] and refund_dl["data"]["open"]

    # -- case --------------------------------------------------------------------------------
    complaint = _complaint(rng, practice=practice, claim_id=claim_id, dos=dos)
    case = {"case_id": case_id, "patient_id": case_id, "patient_name": patient,
            "patient_complaint": complaint,
            "emotional_state": rng.choice(("frustrated", "distressed")),
            "today": C.iso(today), "claim_id": claim_id, "plan_id": plan_key}

    # the records that show this finding (the ones a reviewer opens to confirm it): citation
    # precision is graded against ``relevant_ids``, and the diagnosis must cite every record
    # in ``decisive_ids`` (without which the finding cannot be seen)
    fkey = (f"{kind}:{side}" if kind == "coinsurance_on_billed"
            else f"{kind}:item" if dup_item else kind)
    evidence, decisive = {
        "copay_not_credited": (["plog", "ledger", "provider"], ["plog", "ledger"]),
        "duplicate_charge": (["plog", "ledger", "provider"], ["plog"]),
        # (the EOB too: since round 8 the two-unit row shows only against its billed charge;
        # domain review round 8b, F6)
        "duplicate_posting": (["ledger", "provider", "claim", "eob"], ["ledger"]),
        # (round 13: a self-pay item keyed twice shows against its card capture, under the
        # practice's paid-when-sold policy; the claim and its EOB say nothing of it)
        "duplicate_posting:item": (["ledger", "plog", "provider"], ["ledger"]),
        "coinsurance_on_billed:insurer": (["eob", "plan"], ["eob", "plan"]),
        "coinsurance_on_billed:provider": (["provider", "eob", "plan"], ["provider", "eob"]),
        "deductible_already_met": (["eob", "plan"], ["eob", "plan"]),
        "balance_billing": (["ledger", "eob", "provider"], ["ledger", "eob"]),
        "oop_max_exceeded": (["eob", "plan"], ["eob", "plan"]),
        "no_error": (["eob", "plan", "ledger", "provider"], ["eob", "plan"])}[fkey]
    # the amount at issue: the overcharge to the cent; where nothing is wrong, the share of
    # the visit the patient rightly owes (what the advocate confirms to the patient)
    amount = pr_correct if kind == "no_error" else overcharge
    expected = {
        "finding": kind, "responsible_party": party, "resolution_type": resolution,
        "amount_cents": amount, "overcharge_cents": overcharge,
        "relevant_ids": [ids[k] for k in evidence],
        "decisive_ids": [ids[k] for k in decisive],
        "amount_alternatives": amount_alternatives,
        "accepted_findings": accepted_findings,
        "accepted_resolutions": accepted_resolutions,
        "patient_share_cents": pr_correct,
        "correct_balance_cents": correct_balance,
        "patient_paid_statement": paid, "statement_balance_cents": due,
        "eob_artifact": ids["eob"], "ledger_artifact": ids["ledger"],
        "plan_artifact": ids["plan"], "provider_artifact": ids["provider"],
        "processor_log_artifact": ids["plog"], "claim_artifact": ids["claim"],
        "evidence_artifacts": [ids[k] for k in evidence],
    }
    variant = {
        "kind": kind, "error_side": side, "paid": paid, "duplicate_of": duplicate_of,
        "payment_state": pay_state, "statement_paid_cents": paid_amount,
        "plan_template": plan["plan_id"], "practice": practice, "benefit": benefit,
        "locality": {"mac": loc["mac"], "locality": loc["locality"]},
        "lines": [{"hcpcs": ln["hcpcs"], "markup_pct": ln["markup_pct"],
                   "benefit": ln["benefit"]} for ln in lines],
        "older_claim": {"hcpcs": older_em, "markup_pct": older_line["markup_pct"],
                        "deductible_met_before": older_ded_before,
                        "oop_met_before": older_oop_before},
        "deductible_state": ded_state, "prior_deductible_met": prior_ded,
        "prior_oop_met": prior_oop, "stale_deductible_remaining": stale_remaining,
        "duplicate_posted_line": dup_line["line"] if dup_line is not None else None,
        "duplicate_written_down": dup_adjusted,
        "duplicate_posted_item": dup_item,
        "old_refunded_duplicate": old_noise, "run_twice": twice_of,
        "refunded_run": refunded_of, "oop_binds": oop_bind,
        "near_cap": near_cap,
        "close_to_cap": close,
        "retail_item": any(day == dos for day, *_ in retail),
        "retail_units": next((units for here, units in retail_buys if here), 0),
        "reposted_reversed": reposted is not None, "rebilled": rebilled,
        "older_on_ledger": older_on_ledger, "per_line_co45": per_line_adj,
        "statement_payments": len(stmt_txns), "markup_pct": markup,
        "balance_billing_mode": bb_mode,
        "oop_remaining_before": oop_left, "credit_policy": policy,
        "open_balance_cents": open_balance, "previous_balance_cents": prior_bal,
        "snapshot_after_processing": snap_after, "payment_plan": pay_plan is not None,
    }
    return {"case": case, "artifacts": artifacts, "references": references, "counters": [],
            "expected": expected, "variant": variant}


def _complaint(rng: random.Random, *, practice: str, claim_id: str, dos: dt.date) -> str:
    """The patient's words: what any patient with a bill they doubt perceives. The wording is
    drawn independently of what (if anything) went wrong, so it predicts nothing."""
    when = f"{dos:%B} {dos.day}"
    visit = f"my visit to {practice} on {when} (claim {claim_id})"
    text = rng.choice(COMPLAINTS).format(visit=visit, practice=practice)
    return f"{text} {rng.choice(ASKS)}"
