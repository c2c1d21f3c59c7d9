"""Scenarios for abductive_conflict: a claim with two codes on one date of service, one line
denied as bundled (CO-97 or CO-236 with a bundling RARC). The insurer's claim record and EOB
both say "bundled"; the provider record and the NCCI PtP table decide whether that is right.

Which branch a scenario falls in is read from the bundle, never from a hand-kept answer:
the catalog below only pairs two codes with a clinical story, and the NCCI table says
whether the pair has an active edit and with which modifier indicator.

- ``a`` indicator 0: no modifier can bypass the edit, so the denial is legitimate (even when
  the provider appended 59/25 and insists it was separate); nothing to appeal, the patient
  owes nothing for the CO amount.
- ``b`` indicator 1 and the claim carries the NCCI-associated modifier, with documentation of
  a distinct service: the insurer ignored a valid bypass, appeal (modifier_bypass_documented).
- ``c`` indicator 1 but the claim has no modifier: the provider must send a corrected claim.
- ``d`` no active edit for the pair (deleted, or never an edit): the insurer applied an edit
  that does not exist, appeal (no_active_edit).
"""

from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass
from typing import Any

from ..common import (
    INSURERS,
    PRACTICES,
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

BRANCHES = ("a", "b", "c", "d")
FINDINGS = ("legitimate_denial", "modifier_bypass_ignored", "missing_modifier",
            "no_active_edit")
APPEAL_REASONS = ("modifier_bypass_documented", "no_active_edit", "medical_necessity")
OUTCOME = {  # branch -> (finding, responsible_party, resolution_type, appeal_reason)
    "a": ("legitimate_denial", "none", "no_action", "none"),
    "b": ("modifier_bypass_ignored", "insurer", "appeal", "modifier_bypass_documented"),
    "c": ("missing_modifier", "provider", "corrected_claim_request", "none"),
    "d": ("no_active_edit", "insurer", "appeal", "no_active_edit"),
}
DENIALS = (("97", "M15"), ("97", "N19"), ("97", "N20"), ("236", "N20"), ("236", "M15"))
MARKUPS = (150, 175, 200, 225, 250, 300)  # chargemaster as % of the MPFS fee
DEDUCTIBLE_MET_PCT = (0, 30, 60, 100)
PT_PRACTICES = ("Keystone Physical Therapy", "Motion Rehab & Physical Therapy",
                "Riverbend Spine and Sports PT")
CODE_CHARS = string.ascii_uppercase + string.digits
PLAN_MONEY = ("deductible", "copay_primary_care", "copay_specialist", "copay_urgent_care",
              "copay_emergency", "oop_max")


@dataclass(frozen=True)
class PairStory:
    """Two codes billed the same day and what the provider documented about them.

    ``mods`` are (paid-line, denied-line) modifier options: for an indicator-1 pair the
    NCCI-associated bypass, for an indicator-0 pair the modifier a provider appends trying
    to defeat the edit, for a pair without an edit whatever the practice habitually adds."""

    paid: str
    denied: str
    specialty: str
    dx_paid: str
    dx_denied: str
    paid_lay: str
    denied_lay: str
    note_paid: str
    note_denied: str
    distinct: str
    mods: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    base_mods: tuple[str, ...] = ()


def _s(paid: str, denied: str, specialty: str, dx: tuple[str, str], lay: tuple[str, str],
       notes: tuple[str, str, str], mods: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...],
       base: tuple[str, ...] = ()) -> PairStory:
    return PairStory(paid, denied, specialty, dx[0], dx[1], lay[0], lay[1], notes[0], notes[1],
                     notes[2], mods, base)


EM25 = (((), ("25",)),)
XS = (((), ("XS",)), ((), ("59",)))
M59 = (((), ("59",)),)
MXS = (((), ("XS",)),)

CATALOG: tuple[PairStory, ...] = (
    # -- pairs the 2024 Q3 table lists with modifier indicator 0 --------------------------
    _s("96372", "99211", "family medicine", ("D51.9", "I10"), ("B12 injection", "nurse visit"),
       ("Nurse administered cyanocobalamin 1,000 mcg IM, left deltoid, for B12 deficiency "
        "anemia; tolerated well.",
        "Nurse visit the same morning: blood pressure recheck 138/86, home log reviewed; no "
        "physician involvement.",
        "The blood-pressure recheck was a separate reason for the visit, so the nurse visit "
        "was billed with modifier 25."), (((), ("25",)),)),
    _s("12002", "12001", "urgent care", ("S51.812A", "S61.411A"),
       ("repair of the forearm cut", "repair of the hand cut"),
       ("Simple repair of a 3.4 cm laceration of the left forearm, single-layer closure.",
        "Simple repair of a 1.8 cm laceration of the right hand, single-layer closure.",
        "Two separate wounds on different limbs, so the hand repair was billed separately "
        "with modifier 59."), M59),
    _s("11104", "11102", "dermatology", ("D48.5", "L98.9"), ("punch biopsy", "second biopsy"),
       ("Punch biopsy (4 mm) of a changing pigmented lesion, upper back; sent to pathology.",
        "Tangential (shave) biopsy of a scaly papule, right forearm; sent to pathology.",
        "A separate lesion at a separate site, so the shave biopsy was billed with modifier "
        "XS."), MXS),
    _s("17111", "17110", "dermatology", ("B07.8", "B07.0"),
       ("wart treatment on my hands", "wart treatment on my foot"),
       ("Cryotherapy destruction of 16 common warts, both hands.",
        "Cryotherapy destruction of 4 plantar warts, right foot.",
        "The plantar warts are a separate anatomic site, billed with modifier XS."), MXS),
    _s("94060", "94010", "family medicine", ("J45.909", "R06.2"),
       ("breathing test with an inhaler", "breathing test"),
       ("Spirometry before and after albuterol: FEV1 improved 14% after the bronchodilator.",
        "Baseline spirometry earlier in the same visit for wheezing.",
        "The baseline spirometry was a separate test, billed with modifier 59."), M59),
    _s("20553", "20552", "family medicine", ("M79.18", "M62.838"),
       ("trigger point injections", "more trigger point injections"),
       ("Trigger point injections, both trapezius muscles and left levator scapulae "
        "(3 muscles).",
        "Trigger point injections, right rhomboid and right infraspinatus (2 muscles).",
        "Different muscles, so the second group was billed with modifier 59."), M59),
    _s("11721", "11720", "podiatry", ("B35.1", "L60.0"),
       ("toenail care", "fingernail care"),
       ("Debridement of 6 mycotic toenails, both feet.",
        "Debridement of 2 thickened fingernails, left hand.",
        "Fingernails and toenails are separate sites, billed with modifier 59."), M59),
    _s("17004", "17000", "dermatology", ("L57.0", "L57.0"),
       ("treatment of precancerous spots", "treatment of one more spot"),
       ("Cryodestruction of 17 actinic keratoses, scalp and face.",
        "Cryodestruction of 1 actinic keratosis, back of the left hand.",
        "The hand lesion is a separate site, billed with modifier XS."), MXS),
    _s("99407", "99406", "family medicine", ("F17.210", "F17.210"),
       ("stop-smoking counseling", "second counseling session"),
       ("Tobacco cessation counseling by the physician, 14 minutes; varenicline discussed.",
        "Tobacco cessation counseling by the nurse, 5 minutes, quit-line information.",
        "Counseling by two different staff members, so the second session was billed with "
        "modifier 59."), M59),
    # -- pairs with modifier indicator 1 ---------------------------------------------------
    _s("20610", "99213", "family medicine", ("M17.11", "I10"), ("knee injection", "office visit"),
       ("Corticosteroid injection, right knee, for primary osteoarthritis; consent obtained.",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: BP 162/98 on two readings with new headaches; essential "
        "hypertension diagnosed, amlodipine 5 mg started, labs ordered, recheck in 4 weeks. "
        "This is beyond the pre-injection assessment."), EM25),
    _s("20610", "99214", "family medicine", ("M17.12", "E11.65"), ("knee injection",
                                                                    "office visit"),
       ("Corticosteroid injection, left knee, for primary osteoarthritis; consent obtained.",
        "Established-patient office visit, moderate medical decision making.",
        "Separately identifiable E/M: type 2 diabetes with hyperglycemia (A1c 9.1%); metformin "
        "increased, glipizide added, foot exam done, retinal exam referral. Beyond the "
        "pre-injection assessment."), EM25),
    _s("96372", "99213", "family medicine", ("D51.9", "J01.90"), ("B12 injection",
                                                                   "office visit"),
       ("Cyanocobalamin 1,000 mcg IM for B12 deficiency anemia (scheduled monthly dose).",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: 9 days of facial pain and purulent nasal discharge; "
        "acute sinusitis diagnosed, amoxicillin-clavulanate prescribed. Unrelated to the "
        "scheduled injection."), EM25),
    _s("96372", "99214", "family medicine", ("D51.9", "K21.9"), ("B12 injection",
                                                                  "office visit"),
       ("Cyanocobalamin 1,000 mcg IM for B12 deficiency anemia (scheduled monthly dose).",
        "Established-patient office visit, moderate medical decision making.",
        "Separately identifiable E/M: worsening reflux with night symptoms; PPI changed, "
        "diet plan, red-flag review. Unrelated to the scheduled injection."), EM25),
    _s("90471", "99213", "family medicine", ("Z23", "E78.5"), ("flu shot", "office visit"),
       ("Influenza vaccine administered IM by the nurse (vaccine supplied by the practice).",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: hyperlipidemia follow-up, lipid panel reviewed (LDL "
        "168), atorvastatin started, recheck in 6 weeks."), EM25),
    _s("17110", "99213", "family medicine", ("B07.8", "K21.9"), ("wart treatment",
                                                                  "office visit"),
       ("Cryotherapy destruction of 3 common warts, left hand.",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: 6 weeks of heartburn and regurgitation; GERD diagnosed, "
        "omeprazole started, lifestyle counseling."), EM25),
    _s("11102", "99213", "family medicine", ("D48.5", "I10"), ("skin biopsy", "office visit"),
       ("Tangential biopsy of a changing lesion, left shoulder; sent to pathology.",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: hypertension follow-up, home readings reviewed, "
        "lisinopril increased to 20 mg."), EM25),
    _s("69210", "99213", "family medicine", ("H61.21", "J01.90"), ("earwax removal",
                                                                    "office visit"),
       ("Removal of impacted cerumen, right ear, with a curette under direct visualization.",
        "Established-patient office visit, low medical decision making.",
        "Separately identifiable E/M: sinus pressure and fever for 10 days; acute sinusitis "
        "diagnosed, antibiotic prescribed."), EM25),
    _s("17110", "11102", "dermatology", ("B07.0", "D48.5"), ("wart treatment", "skin biopsy"),
       ("Cryotherapy destruction of 2 plantar warts, right foot.",
        "Tangential biopsy of an irregular pigmented lesion, mid back; sent to pathology.",
        "The biopsied lesion (mid back) is a different lesion at a different anatomic site "
        "from the treated warts (right foot)."), XS),
    _s("11102", "17000", "dermatology", ("D48.5", "L57.0"), ("skin biopsy",
                                                              "precancer treatment"),
       ("Tangential biopsy of a changing lesion, right cheek; sent to pathology.",
        "Cryodestruction of 1 actinic keratosis, left forearm.",
        "The treated actinic keratosis (left forearm) is a separate lesion from the biopsied "
        "lesion (right cheek)."), XS),
    _s("20611", "20610", "orthopedics", ("M19.011", "M17.12"),
       ("ultrasound-guided shoulder injection", "knee injection"),
       ("Ultrasound-guided corticosteroid injection, right shoulder joint; images recorded.",
        "Corticosteroid injection without imaging, left knee.",
        "Two different joints were injected: the right shoulder (with ultrasound) and the "
        "left knee (without)."), ((("RT",), ("LT",)),)),
    _s("69210", "69209", "family medicine", ("H61.21", "H61.22"),
       ("earwax removal", "ear flushing"),
       ("Removal of impacted cerumen with a curette, right ear.",
        "Removal of impacted cerumen by irrigation, left ear.",
        "Each ear was treated once: instruments on the right, irrigation on the left."),
       ((("RT",), ("LT",)),)),
    # -- pairs without an active edit (deleted, or never listed) ---------------------------
    _s("97140", "97530", "physical therapy", ("M54.50", "M62.838"),
       ("manual therapy", "therapeutic activities"),
       ("Manual therapy, lumbar soft-tissue mobilization, 15 minutes.",
        "Therapeutic activities, lifting mechanics and functional training, 15 minutes.",
        "The two services were performed in separate, non-overlapping time intervals."),
       (((), ()), ((), ("59",))), ("GP",)),
    _s("97110", "97140", "physical therapy", ("M54.50", "M54.50"),
       ("therapeutic exercise", "manual therapy"),
       ("Therapeutic exercise, core stabilization program, 15 minutes.",
        "Manual therapy, thoracolumbar joint mobilization, 15 minutes.",
        "The two services were performed in separate, non-overlapping time intervals."),
       (((), ()), ((), ("59",))), ("GP",)),
    _s("99213", "93000", "family medicine", ("R00.2", "R00.2"), ("office visit", "EKG"),
       ("Established-patient office visit for intermittent palpitations; exam and medication "
        "review.",
        "12-lead EKG with interpretation and report: sinus rhythm, occasional PVCs.",
        "The EKG was ordered, performed and interpreted during the visit."),
       (((), ()), (("25",), ()))),
    _s("99214", "93000", "family medicine", ("R07.9", "R07.9"), ("office visit", "EKG"),
       ("Established-patient office visit for chest pain; moderate medical decision making.",
        "12-lead EKG with interpretation and report: no acute ST changes.",
        "The EKG was ordered, performed and interpreted during the visit."),
       (((), ()), (("25",), ()))),
    _s("99213", "96127", "family medicine", ("F41.1", "F41.1"),
       ("office visit", "anxiety questionnaire"),
       ("Established-patient office visit for anxiety follow-up; sertraline adjusted.",
        "GAD-7 standardized instrument administered and scored (score 14).",
        "The questionnaire was a separately scored standardized instrument."),
       (((), ()), ((), ("59",)))),
    _s("99213", "99406", "family medicine", ("I10", "F17.210"),
       ("office visit", "stop-smoking counseling"),
       ("Established-patient office visit for hypertension; amlodipine continued.",
        "Tobacco cessation counseling, 7 minutes, separate from the blood-pressure "
        "management.",
        "The counseling time was separate from the blood-pressure visit."),
       (((), ()), (("25",), ()))),
)

COMPLAINTS = (
    "My insurance statement for claim {claim} says the {denied} from my {dos} visit was "
    "'bundled' and they paid nothing for it. {provider} says the insurance company got it "
    "wrong. I don't know who to believe or whether I'll end up owing ${billed}.",
    "I got an explanation of benefits for claim {claim} showing ${billed} denied for the "
    "{denied} on {dos}. It says it was included in another service. Is that right? Am I "
    "going to be billed for it?",
    "Claim {claim}: my insurer paid for the {paid} but denied the {denied} from {dos} as "
    "bundled. The doctor's office told me to call the insurer and the insurer told me to "
    "call the doctor's office. Can someone sort this out?",
    "The {denied} I had on {dos} was denied on claim {claim} with a code saying it is not "
    "paid separately. {provider} says it was a separate service. I can't afford another "
    "${billed} bill.",
)


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

    def _get(self, name: str, *args: Any, **kwargs: Any) -> Any:
        key = (name, args, tuple(sorted(kwargs.items())))
        if key not in self._memo:
            self._memo[key] = getattr(self._ref, name)(*args, **kwargs)
        return self._memo[key]

    def rvu(self, hcpcs: str, modifier: str = "") -> Any:
        return self._get("rvu", hcpcs, modifier)

    def fee(self, hcpcs: str, mac: str, locality: str, *, modifier: str = "",
            facility: bool = False) -> Any:
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

    def plans(self) -> Any:
        return self._get("plans")

    def ncci_edit(self, column_1: str, column_2: str) -> Any:
        return self._get("ncci_edit", column_1, column_2)

    def ncci_edits(self, column_1: str, column_2: str | None = None, *,
                   active_only: bool = True) -> Any:
        return self._get("ncci_edits", column_1, column_2, active_only=active_only)


def _derived(ref: Any) -> dict[str, Any]:
    """Pools of catalog pairs by branch, classified by the bundle's NCCI table, and the
    memoizing view every later lookup goes through (once per bundle content per process:
    about 30 edit lookups, so compiling stays in the microseconds)."""
    key = _bundle_key(ref)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    ref = _Memo(ref)
    pools: dict[str, list[tuple[PairStory, dict[str, Any] | None]]] = {"0": [], "1": [],
                                                                          "none": []}
    for story in CATALOG:
        for code in (story.paid, story.denied):
            row = ref.rvu(code)
            if row is None or row["status"] != "A" or row["nonfac_na"]:
                break
        else:
            if not all(ref.icd10cm(dx) and ref.icd10cm(dx)["billable"]
                       for dx in (story.dx_paid, story.dx_denied)):
                continue
            edit = ref.ncci_edit(story.paid, story.denied)
            reverse = ref.ncci_edit(story.denied, story.paid)
            if edit is None and reverse is None:
                pools["none"].append((story, None))
            elif edit is not None and edit["modifier_indicator"] in ("0", "1"):
                pools[edit["modifier_indicator"]].append((story, edit))
    for code, rarc in DENIALS:  # fail loudly if a denial code was stopped in this bundle
        carc_text(ref, code)
        rarc_text(ref, rarc)
    data = {"pools": pools, "fees": {}, "refs": {}, "texts": {}, "memo": ref}
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


def patient_share(code: str, allowed: int, plan: dict[str, Any], deductible_left: int,
                  oop_left: int) -> dict[str, int]:
    """The plan's cost sharing on one paid line (cents), DOMAIN.md §2 order.

    An office visit (992xx) on a plan with a primary-care copay pays the copay only (no
    deductible on office visits, DOMAIN.md E1); everything else, and office visits on a
    plan without copays, goes deductible first, then coinsurance on the rest."""
    copay = plan["copay_primary_care"] if code.startswith("992") else 0
    if copay > 0:
        return cost_share(allowed, copay=copay, deductible_left=0, coinsurance_pct=0,
                          oop_left=oop_left)
    return cost_share(allowed, copay=0, deductible_left=deductible_left,
                      coinsurance_pct=plan["coinsurance_pct"], oop_left=oop_left)


def billed_cents(fee: int, markup_pct: int) -> int:
    """The provider's chargemaster price: markup % of the MPFS fee, up to whole dollars."""
    return -(-pct_of(fee, markup_pct) // 100) * 100


# -- the generator -------------------------------------------------------------------------
def generate(seed: int, rng: random.Random, ref: Any) -> dict[str, Any]:
    """One scenario: branch and pair from the rng, indicator and amounts from the bundle."""
    data = _derived(ref)
    ref = data["memo"]
    pools = data["pools"]
    branch = rng.choice(BRANCHES)
    pool = {"a": pools["0"], "b": pools["1"], "c": pools["1"], "d": pools["none"]}[branch]
    story, edit = rng.choice(pool)
    if branch == "a":
        mods = rng.choice(story.mods) if rng.random() < 0.5 else ((), ())
    elif branch == "c":
        mods = ((), ())
    else:
        mods = rng.choice(story.mods)
    paid_mods = [*story.base_mods, *mods[0]]
    denied_mods = [*story.base_mods, *mods[1]]

    loc = pick_locality(rng, ref)
    plan = _plan(ref, data, rng)
    insurer = rng.choice(INSURERS)
    practice = rng.choice(PT_PRACTICES if story.specialty == "physical therapy" else PRACTICES)
    patient = person(rng)
    case_id = f"CLR-{seed}-{''.join(rng.choice(CODE_CHARS) for _ in range(4))}"
    claim_id = ident(rng, "CLM", 8)
    plan_id = ident(rng, "PLN", 6)
    account = ident(rng, "ACCT", 7)
    provider = {"name": practice, "npi": npi(rng), "specialty": story.specialty}
    carc, rarc = rng.choice(DENIALS)
    markup = rng.choice(MARKUPS)
    emotional = rng.choice(("frustrated", "distressed"))

    # dates: service in 2026 after mid-February, EOB 2-5 weeks later, today well inside
    # the 180-day internal-appeal window
    dos = dt.date(2026, 2, 16) + dt.timedelta(days=rng.randrange(150))
    submitted = dos + dt.timedelta(days=rng.randrange(1, 8))
    processed = submitted + dt.timedelta(days=rng.randrange(10, 29))
    today = processed + dt.timedelta(days=rng.randrange(12, 90))

    fee_paid = _fee(ref, data, story.paid, loc)
    fee_denied = _fee(ref, data, story.denied, loc)
    billed_paid = billed_cents(fee_paid, markup)
    billed_denied = billed_cents(fee_denied, markup)

    # an older, unrelated, fully processed office visit: the distractor, and what it put
    # toward this year's deductible and out-of-pocket maximum
    has_distractor = rng.random() < 0.8
    prior: dict[str, Any] | None = None
    met_before = oop_before = 0
    if has_distractor:
        prior_code = rng.choice(("99212", "99213"))
        prior_dos = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randrange(30))
        prior_fee = _fee(ref, data, prior_code, loc)
        prior_share = patient_share(prior_code, prior_fee, plan, plan["deductible"],
                                    plan["oop_max"])
        prior = {"code": prior_code, "dos": prior_dos, "fee": prior_fee,
                 "billed": billed_cents(prior_fee, markup), "share": prior_share,
                 "claim_id": ident(rng, "CLM", 8), "eob_id": ident(rng, "EOB", 7),
                 "processed": prior_dos + dt.timedelta(days=rng.randrange(10, 25))}
        met_before = prior_share["deductible"]
        oop_before = prior_share["patient"]
    extra_pct = rng.choice(DEDUCTIBLE_MET_PCT)
    extra = pct_of(plan["deductible"] - met_before, extra_pct)
    met_before += extra
    oop_before += extra
    share = patient_share(story.paid, fee_paid, plan, plan["deductible"] - met_before,
                          plan["oop_max"] - oop_before)

    # line order as the provider billed it (E/M first when there is one)
    first_paid = not story.denied.startswith("992") or story.paid.startswith("992")
    if rng.random() < 0.25:
        first_paid = not first_paid
    n_paid, n_denied = (1, 2) if first_paid else (2, 1)
    dxs = list(dict.fromkeys((story.dx_paid, story.dx_denied)))
    ptr_paid = ["A"]
    ptr_denied = ["A" if story.dx_denied == story.dx_paid else "B"]

    carc_desc = _text(ref, data, "carc", carc)
    rarc_desc = _text(ref, data, "rarc", rarc)
    paid_adj = [{"group": "CO", "carc": "45", "amount": dollars(billed_paid - fee_paid),
                 "description": _text(ref, data, "carc", "45")}]
    for kind, carc_code in (("deductible", "1"), ("coinsurance", "2"), ("copay", "3")):
        if share[kind]:
            paid_adj.append({"group": "PR", "carc": carc_code, "amount": dollars(share[kind]),
                             "description": _text(ref, data, "carc", carc_code)})
    eob_paid = {"line": n_paid, "hcpcs": story.paid, "modifiers": paid_mods,
                "billed": dollars(billed_paid), "allowed": dollars(fee_paid),
                "deductible": dollars(share["deductible"]),
                "coinsurance": dollars(share["coinsurance"]), "copay": dollars(share["copay"]),
                "plan_paid": dollars(share["plan_paid"]),
                "patient_responsibility": dollars(share["patient"]), "adjustments": paid_adj,
                "rarcs": [],
                "allowed_basis": _cached_ref(
                    data, ("basis", story.paid, loc["mac"], loc["locality"]),
                    lambda: fee_basis(ref, story.paid, loc))}
    eob_denied = {"line": n_denied, "hcpcs": story.denied, "modifiers": denied_mods,
                  "billed": dollars(billed_denied), "allowed": "0.00", "deductible": "0.00",
                  "coinsurance": "0.00", "copay": "0.00", "plan_paid": "0.00",
                  "patient_responsibility": "0.00",
                  "adjustments": [{"group": "CO", "carc": carc, "amount": dollars(billed_denied),
                                   "description": carc_desc}],
                  "rarcs": [{"code": rarc, "description": rarc_desc}]}
    eob_lines = sorted((eob_paid, eob_denied), key=lambda r: r["line"])

    denial_note = (f"Line {n_denied} ({story.denied}) denied: included in line {n_paid} "
                   f"({story.paid}) under the NCCI procedure-to-procedure edit for this pair "
                   f"(CO-{carc}, {rarc}). Provider liability; not billable to the member.")
    claim_lines = []
    prov_lines = []
    for n, code, mods_, billed, ptr in sorted(
            ((n_paid, story.paid, paid_mods, billed_paid, ptr_paid),
             (n_denied, story.denied, denied_mods, billed_denied, ptr_denied))):
        desc = _text(ref, data, "describe", code)
        claim_lines.append({"line": n, "hcpcs": code, "modifiers": list(mods_), "units": 1,
                            "billed": dollars(billed), "diagnosis_pointers": list(ptr),
                            "description": desc})
        prov_lines.append({"line": n, "hcpcs": code, "modifiers": list(mods_), "units": 1,
                           "charge": dollars(billed), "diagnosis_pointers": list(ptr),
                           "description": desc})

    n = rng.randrange(10**6, 10**7)
    ids = {"claim": f"CR-{n}", "eob": f"EOB-{n}", "provider": f"PRV-{n}", "plan": f"PLAN-{n}"}
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
        "accumulators": {"deductible_met_ytd": dollars(met_before + share["deductible"]),
                         "oop_met_ytd": dollars(oop_before + share["patient"]),
                         "deductible": dollars(plan["deductible"]),
                         "oop_max": dollars(plan["oop_max"])},
        "messages": [f"Line {n_denied}: this service is bundled into another service billed "
                     "the same day and is not paid separately. You are not responsible for "
                     "the denied amount."],
    }
    notes = [f"Line {n} ({code}): {note}" for n, code, note in sorted(
        ((n_paid, story.paid, story.note_paid), (n_denied, story.denied, story.note_denied)))]
    if branch in ("b", "c", "d") or (branch == "a" and mods[1] + mods[0]):
        notes.append(story.distinct)
    if any(m in ("25", "59", "XS", "RT", "LT") for m in (*mods[0], *mods[1])):
        tagged = ", ".join(f"{code}-{m}" for code, ms in ((story.paid, mods[0]),
                                                           (story.denied, mods[1]))
                           for m in ms)
        notes.append(f"Modifiers appended on the claim: {tagged}.")
    notes.append(f"{insurer} denied line {n_denied} as bundled (CO-{carc}). Billing office "
                 f"position: {story.denied} was a separate service and should be paid; "
                 "balance held, not billed to the patient while this is open.")
    statement: dict[str, Any] = {
        "statement_date": iso(processed + dt.timedelta(days=5)),
        "charges": dollars(billed_paid + billed_denied),
        "insurance_paid": dollars(share["plan_paid"]),
        "contractual_adjustments": dollars(billed_paid - fee_paid),
        "held_pending_insurer": dollars(billed_denied),
        "patient_balance": dollars(share["patient"]),
    }
    if prior is not None:
        statement["account_history"] = [{
            "date_of_service": iso(prior["dos"]), "claim_id": prior["claim_id"],
            "description": _text(ref, data, "describe", prior["code"]),
            "balance": "0.00"}]
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
         "data": plan_document(plan, plan_id, insurer)},
    ]
    if prior is not None:
        artifacts.append(_prior_eob(ref, data, prior, plan_id, insurer, patient, practice))

    ncci_ref = _cached_ref(data, ("ncci", story.paid, story.denied),
                           lambda: _ncci(ref, story.paid, story.denied))
    references = [
        _cached_ref(data, ("code", story.paid, loc["mac"], loc["locality"]),
                    lambda: code_reference(ref, story.paid, loc)),
        _cached_ref(data, ("code", story.denied, loc["mac"], loc["locality"]),
                    lambda: code_reference(ref, story.denied, loc)),
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
        claim=claim_id, denied=story.denied_lay, paid=story.paid_lay, dos=dos_text,
        provider=practice, billed=dollars(billed_denied))
    indicator = edit["modifier_indicator"] if edit is not None else "none"
    expected = {
        "finding": finding, "responsible_party": party, "resolution_type": resolution,
        "appeal_reason": reason, "amount_cents": fee_denied,
        "denied_billed_cents": billed_denied, "modifier_indicator": indicator,
        "ncci_pair": f"{story.paid}/{story.denied}", "paid_code": story.paid,
        "denied_code": story.denied, "ncci_ref_id": ncci_ref["artifact_id"],
        "provider_record_id": ids["provider"], "claim_record_id": ids["claim"],
        "eob_id": ids["eob"], "deadline_type": "internal_appeal",
        "must_cite": [ids["provider"], ncci_ref["artifact_id"]],
    }
    variant = {
        "branch": branch, "pair": f"{story.paid}/{story.denied}",
        "edit_status": ncci_ref["data"]["status"], "modifier_indicator": indicator,
        "claim_modifiers": {story.paid: paid_mods, story.denied: denied_mods},
        "bypass_modifier_on_claim": bool(mods[0] or mods[1]),
        "denial": {"group": "CO", "carc": carc, "rarc": rarc}, "markup_pct": markup,
        "locality": {"mac": loc["mac"], "locality": loc["locality"]},
        "plan_template": plan["plan_id"], "deductible_met_extra_pct": extra_pct,
        "distractor": has_distractor,
    }
    case = {"case_id": case_id, "patient_id": case_id, "patient_name": patient,
            "patient_complaint": complaint, "emotional_state": emotional, "today": iso(today),
            "claim_id": claim_id, "plan_id": plan_id}
    return {"case": case, "artifacts": artifacts, "references": references, "counters": [],
            "expected": expected, "variant": variant}


def _prior_eob(ref: Any, data: dict[str, Any], prior: dict[str, Any], plan_id: str,
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
            "accumulators": {"deductible_met_ytd": dollars(share["deductible"]),
                             "oop_met_ytd": dollars(share["patient"])},
            "messages": []}
    return {"artifact_id": prior["eob_id"], "type": "eob", "party": "insurer",
            "key": prior["claim_id"], "distractor": True, "data": eob}
