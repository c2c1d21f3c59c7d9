"""Shared building blocks for billing scenarios: people, ids, dates, money, localities,
real MPFS fees, plan terms, CARC text, and the artifact shapes every task uses.

All randomness comes from the ``random.Random`` passed in (never module state), and money
is integer cents end to end, so the same (task, seed) compiles to the same bytes.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

FIRST = ("Ana", "Marcus", "Priya", "Daniel", "Grace", "Tomás", "Keisha", "Wei", "Fatima",
         "Robert", "Lena", "Omar", "Sofia", "Jamal", "Hannah", "Luis", "Mei", "Andre",
         "Olivia", "Samuel", "Nadia", "Ethan", "Carmen", "Victor", "Aisha", "Peter", "Rosa",
         "Kevin", "Yuki", "Diane")
LAST = ("Diaz", "Johnson", "Patel", "Nguyen", "Okafor", "Smith", "Garcia", "Kim", "Haddad",
        "Brown", "Rossi", "Walker", "Lopez", "Chen", "Williams", "Novak", "Ahmed", "Martin",
        "Reyes", "Kowalski", "Thompson", "Singh", "Murphy", "Alvarez", "Cohen", "Baker")
PRACTICES = ("Riverside Family Medicine", "Lakeview Orthopedics", "Northside Internal Medicine",
             "Summit Dermatology", "Harbor Pediatrics & Adult Care", "Cedar Grove Clinic",
             "Metro Sports Medicine", "Prairie Health Associates", "Bayview Medical Group",
             "Hillcrest Primary Care")
FACILITIES = ("St. Catherine Regional Hospital", "Mercy Ambulatory Surgery Center",
              "Valley General Hospital", "University Outpatient Pavilion",
              "Lakeshore Imaging Center", "Good Shepherd Medical Center")
INSURERS = ("Keystone Health Plan", "Blue Meridian Insurance", "Cascade Mutual Health",
            "Evergreen Benefit Co.", "Pioneer Health Alliance")
PROCESSORS = ("PayStream Merchant Services", "CardVault Payments", "ClearPay Health")
CENT = Decimal("0.01")


# -- money ------------------------------------------------------------------------------
def cents(amount: Decimal | str | int) -> int:
    """Dollars (Decimal/str) to integer cents, half-up like CMS."""
    return int((Decimal(str(amount)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def pct_of(amount_cents: int, pct: int) -> int:
    """``pct`` percent of an amount, to the cent, half-up."""
    return int((Decimal(amount_cents) * pct / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def dollars(amount_cents: int) -> str:
    """Cents to the '123.45' string artifacts show (negative amounts keep their sign)."""
    sign = "-" if amount_cents < 0 else ""
    return f"{sign}{abs(amount_cents) // 100}.{abs(amount_cents) % 100:02d}"


def weighted_choice(rng: random.Random, options: tuple[tuple[str, int], ...]) -> str:
    """One name from (name, integer weight) pairs with a single ``randrange`` draw, so a
    generator's byte output depends only on the weights, never on float rounding."""
    total = sum(w for _, w in options)
    x = rng.randrange(total)
    for name, w in options:
        if x < w:
            return name
        x -= w
    raise AssertionError("unreachable")


# -- people, ids, dates -----------------------------------------------------------------
def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def ident(rng: random.Random, prefix: str, digits: int = 6) -> str:
    return f"{prefix}-{rng.randrange(10 ** (digits - 1), 10 ** digits)}"


def npi(rng: random.Random) -> str:
    return str(rng.randrange(1_000_000_000, 2_000_000_000))


def day(rng: random.Random, start: dt.date, span_days: int) -> dt.date:
    return start + dt.timedelta(days=rng.randrange(span_days))


def iso(d: dt.date) -> str:
    return d.isoformat()


def add_business_days(d: dt.date, n: int) -> dt.date:
    """Mon–Fri business days (federal holidays not excluded; the scenarios say so)."""
    step = 1 if n >= 0 else -1
    left = abs(n)
    while left:
        d += dt.timedelta(days=step)
        if d.weekday() < 5:
            left -= 1
    return d


# -- reference data ---------------------------------------------------------------------
def pick_locality(rng: random.Random, ref: Any) -> dict[str, Any]:
    """A real Medicare locality (MAC, locality, name, state) from the bundle's GPCI table."""
    rows = _localities(ref)
    return rng.choice(rows)


_LOC_CACHE: dict[int, list[dict[str, Any]]] = {}


def _localities(ref: Any) -> list[dict[str, Any]]:
    key = id(ref)
    if key not in _LOC_CACHE:
        _LOC_CACHE[key] = sorted(ref.localities(), key=lambda r: (r["mac"], r["locality"]))
    return _LOC_CACHE[key]


def fee_cents(ref: Any, hcpcs: str, loc: dict[str, Any], *, facility: bool = False,
              modifier: str = "") -> int:
    """The real MPFS amount for a code at a locality, in cents (KeyError if not priced)."""
    amount = ref.fee(hcpcs, loc["mac"], loc["locality"], modifier=modifier, facility=facility)
    if amount is None:
        raise KeyError(f"{hcpcs}{'-' + modifier if modifier else ''} is not priced at "
                       f"{loc['mac']}/{loc['locality']}")
    return cents(amount)


def fee_basis(ref: Any, hcpcs: str, loc: dict[str, Any], *, facility: bool = False,
              modifier: str = "") -> dict[str, Any]:
    """How an allowed amount was derived, for the artifact that shows it."""
    rvu = ref.rvu(hcpcs, modifier)
    g = ref.locality(loc["mac"], loc["locality"])
    return {
        "schedule": f"Medicare Physician Fee Schedule {ref.release}",
        "hcpcs": hcpcs, "modifier": modifier, "setting": "facility" if facility else
        "non-facility", "mac": loc["mac"], "locality": loc["locality"],
        "locality_name": loc["locality_name"],
        "work_rvu": str(rvu["work_rvu"]), "pe_rvu": str(rvu["fac_pe_rvu" if facility else
                                                          "nonfac_pe_rvu"]),
        "mp_rvu": str(rvu["mp_rvu"]), "work_gpci": str(g["work_gpci"]),
        "pe_gpci": str(g["pe_gpci"]), "mp_gpci": str(g["mp_gpci"]),
        "conversion_factor": str(rvu["conversion_factor"]),
        "amount": dollars(fee_cents(ref, hcpcs, loc, facility=facility, modifier=modifier)),
    }


def describe(ref: Any, code: str) -> str:
    return ref.describe(code) or code


def carc_text(ref: Any, code: str) -> str:
    row = ref.carc(code)
    if row is None:
        raise KeyError(f"CARC {code} is not in the bundle")
    if row["stop_date"] is not None:
        raise ValueError(f"CARC {code} was stopped on {row['stop_date']}; do not use it")
    return row["description"].split(" Usage:")[0]


def rarc_text(ref: Any, code: str) -> str:
    row = ref.rarc(code)
    if row is None:
        raise KeyError(f"RARC {code} is not in the bundle")
    return row["description"]


def plan_terms(ref: Any, rng: random.Random, *, coverage: str = "self_only",
               metal: str | None = None) -> dict[str, Any]:
    """A plan template row (dollar fields as cents) chosen from the bundle."""
    rows = [p for p in ref.plans() if p["coverage"] == coverage and
            (metal is None or p["metal_level"] == metal)]
    rows.sort(key=lambda p: p["plan_id"])
    p = rng.choice(rows)
    money = ("deductible", "copay_primary_care", "copay_specialist", "copay_urgent_care",
             "copay_emergency", "oop_max")
    return {k: (cents(v) if k in money else v) for k, v in p.items()}


def plan_document(plan: dict[str, Any], plan_id: str, insurer: str) -> dict[str, Any]:
    return {
        "plan_id": plan_id, "insurer": insurer, "template_id": plan["plan_id"],
        "metal_level": plan["metal_level"], "coverage": plan["coverage"],
        "deductible": dollars(plan["deductible"]), "coinsurance_pct": plan["coinsurance_pct"],
        "copays": {"primary_care": dollars(plan["copay_primary_care"]),
                   "specialist": dollars(plan["copay_specialist"]),
                   "urgent_care": dollars(plan["copay_urgent_care"]),
                   "emergency": dollars(plan["copay_emergency"])},
        "copays_count_toward_deductible": plan["copays_count_toward_deductible"],
        "out_of_pocket_max": dollars(plan["oop_max"]),
        "cost_sharing_order": "allowed amount -> copay (if the benefit has one) -> remaining "
                              "deductible -> coinsurance % of the rest -> capped at the "
                              "remaining out-of-pocket maximum",
        "source": plan["source"],
    }


# -- cost sharing -----------------------------------------------------------------------
def cost_share(allowed: int, *, copay: int, deductible_left: int, coinsurance_pct: int,
               oop_left: int) -> dict[str, int]:
    """DOMAIN.md §2 order: copay → deductible → coinsurance on the rest → OOP cap (cents)."""
    copay_part = min(copay, allowed)
    rest = allowed - copay_part
    ded = min(deductible_left, rest)
    rest -= ded
    coins = pct_of(rest, coinsurance_pct)
    patient = copay_part + ded + coins
    if patient > oop_left:
        over = patient - oop_left
        coins = max(0, coins - over)
        patient = copay_part + ded + coins
        if patient > oop_left:  # cap also bites into deductible/copay
            patient = oop_left
    return {"copay": copay_part, "deductible": ded, "coinsurance": coins,
            "patient": patient, "plan_paid": allowed - patient}


# -- regulations --------------------------------------------------------------------------
REGULATIONS: dict[str, dict[str, str]] = {
    "ncci_ptp": {
        "title": "NCCI procedure-to-procedure edits",
        "citation": "CMS NCCI Policy Manual for Medicare Services, Ch. I; NCCI PtP edit tables",
        "summary": "When two codes of an active edit are billed by the same provider for the "
                   "same patient on the same date, the column 2 code is denied unless the edit's "
                   "modifier indicator is 1 and an NCCI-associated modifier (e.g. 25, 59, XS, "
                   "RT/LT) supported by the documentation is appended. Indicator 0: no modifier "
                   "can bypass the edit. A bundled (CO-97/236) amount is never the patient's.",
    },
    "nsa_good_faith_estimate": {
        "title": "Good faith estimate for uninsured or self-pay individuals",
        "citation": "45 CFR 149.610",
        "summary": "A provider must give a self-pay patient a GFE within 1 business day of "
                   "scheduling a service 3+ business days ahead (3 business days when scheduled "
                   "10+ business days ahead, or after a request). A GFE dated before the "
                   "scheduling event, or issued after the deadline, does not meet the rule.",
    },
    "nsa_dispute_resolution": {
        "title": "Patient-provider dispute resolution (PPDR)",
        "citation": "45 CFR 149.620",
        "summary": "A self-pay patient may dispute a bill when the total billed by a provider "
                   "is at least $400 more than that provider's expected charges on the GFE. "
                   "The request must be made within 120 calendar days of receiving the initial "
                   "bill; the administrative fee is $25. While the dispute is pending the "
                   "provider may not move the bill to collections or charge late fees.",
    },
    "nsa_balance_billing": {
        "title": "No Surprises Act balance-billing protections",
        "citation": "45 CFR 149.110, 149.410, 149.420",
        "summary": "Emergency services, and non-emergency services by out-of-network providers "
                   "at in-network facilities, are charged in-network cost sharing with no "
                   "balance bill. The emergency exception applies only to emergency services "
                   "(or post-stabilization care before notice-and-consent); a scheduled, "
                   "non-emergency service does not qualify.",
    },
    "appeal_rights": {
        "title": "Internal appeals and external review",
        "citation": "29 CFR 2560.503-1; 45 CFR 147.136",
        "summary": "An internal appeal may be filed within 180 days of receiving an adverse "
                   "benefit determination; post-service appeals are decided within 60 days. "
                   "External review may be requested within 4 months of the final internal "
                   "denial.",
    },
    "cost_sharing": {
        "title": "Cost sharing on the allowed amount",
        "citation": "45 CFR 147.200 (SBC Uniform Glossary); 45 CFR 156.130",
        "summary": "Copays, deductible and coinsurance apply to the allowed amount, never the "
                   "billed charge; an in-network provider may not bill the patient the "
                   "difference between billed and allowed (CO-45). Cost sharing stops at the "
                   "out-of-pocket maximum.",
    },
    "mue": {
        "title": "Medically unlikely edits",
        "citation": "CMS NCCI MUE tables",
        "summary": "Maximum units of a code per day per provider; a line over the MUE is "
                   "denied in full.",
    },
}


def regulation(rule: str) -> dict[str, Any]:
    """A regulation reference artifact (type 'regulation', keyed by its rule id)."""
    return {"artifact_id": f"RULE-{rule.upper().replace('_', '-')}", "type": "regulation",
            "party": "reference", "key": rule, "data": {"rule": rule, **REGULATIONS[rule]}}


def deadline(deadline_type: str, trigger: dt.date, days: int, today: dt.date,
             basis: str, citation: str) -> dict[str, Any]:
    """A deadline reference: trigger date + calendar days, and whether it is still open."""
    due = trigger + dt.timedelta(days=days)
    return {"artifact_id": f"DL-{deadline_type.upper().replace('_', '-')}", "type": "deadline",
            "party": "reference", "key": deadline_type,
            "data": {"deadline_type": deadline_type, "trigger_date": iso(trigger),
                     "days": days, "due_date": iso(due), "as_of": iso(today),
                     "open": today <= due, "days_left": (due - today).days, "basis": basis,
                     "citation": citation}}


def code_reference(ref: Any, code: str, loc: dict[str, Any], *, facility: bool = False
                   ) -> dict[str, Any]:
    """What lookup_procedure_code returns for a code on the claim (type 'code_reference')."""
    rvu = ref.rvu(code)
    mue = ref.mue(code)
    data: dict[str, Any] = {"code": code, "description": describe(ref, code)}
    if rvu is not None:
        data.update({"status": rvu["status"], "global_days": rvu["global_days"],
                     "pctc": rvu["pctc"], "work_rvu": str(rvu["work_rvu"])})
        amount = ref.fee(code, loc["mac"], loc["locality"], facility=facility)
        if amount is not None:
            data["fee"] = {"mac": loc["mac"], "locality": loc["locality"],
                           "setting": "facility" if facility else "non-facility",
                           "amount": str(amount), "schedule": f"MPFS {ref.release}"}
    if mue is not None:
        data["mue"] = {"units": mue["mue_units"], "mai": mue["mai"]}
    return {"artifact_id": f"CODE-{code}", "type": "code_reference", "party": "reference",
            "key": code, "data": data}


def ncci_reference(ref: Any, column_1: str, column_2: str) -> dict[str, Any]:
    """The NCCI PtP lookup for a pair (type 'ncci_edit'); says so when no edit is active."""
    edit = ref.ncci_edit(column_1, column_2)
    data: dict[str, Any] = {"column_1": column_1, "column_2": column_2,
                            "edit_exists": edit is not None,
                            "table": "NCCI practitioner PtP edits (2024 Q3, complete table)"}
    if edit is not None:
        data.update({"modifier_indicator": edit["modifier_indicator"],
                     "rationale": edit["rationale"],
                     "meaning": {"0": "no modifier can bypass this edit",
                                 "1": "an NCCI-associated modifier may bypass it when the "
                                      "documentation supports a distinct service",
                                 "9": "edit not applicable"}[edit["modifier_indicator"]]})
    return {"artifact_id": f"NCCI-{column_1}-{column_2}", "type": "ncci_edit",
            "party": "reference", "key": f"{column_1}/{column_2}", "data": data}
