"""A small sentence grammar for clinical notes: several realizations per clinical fact.

Stock sentences let a memorizer key on whole lines and let a reader spot the generator; here each
fact (a data element of MDM, a risk decision, a problem's status, the visit time, social history,
vitals, a normal exam finding) has several realizations built from slots, with the abbreviations a
clinician uses (f/u, RTC, Rx, OTC, w/, h/o, CBC, CMP). Everything is drawn from the caller's
``random.Random``, so a case stays byte-identical in any process.

Age and sex constrain what can be said: no blood pressure under age 3 and child-range vitals
below 13, school/daycare instead of work and spouse for children, no "independent in ADLs" at 30.
An exam never asserts normal findings for an organ system a documented condition involves
(``blocked``), so an asthma exacerbation cannot read "lungs clear".

The MDM sentences state *elements* (what was reviewed, ordered, decided), never the level: the
level follows from them by :mod:`.em`.
"""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

from .em import Data


def pick(rng: random.Random, seq: Any) -> Any:
    """``rng.choice`` at a fraction of its cost (one ``random()`` draw): notes make ~150 draws,
    and compile speed is a benchmarked figure. Deterministic in any process."""
    return seq[int(rng.random() * len(seq))]


def randint(rng: random.Random, lo: int, hi: int) -> int:
    """``rng.randint`` by one ``random()`` draw, inclusive of both ends."""
    return lo + int(rng.random() * (hi - lo + 1))


def sample(rng: random.Random, seq: Any, k: int, *, owned: bool = False) -> list:
    """``rng.sample`` by one ``random()`` draw per item (the pools are small: a pop from a
    short list costs less than ``sample``'s set bookkeeping and ``getrandbits`` loop).
    ``owned``: ``seq`` is a list the caller built for this draw, so it is popped in place."""
    if k <= 0:
        return []
    if k == 1 and seq:  # the same draw as the general case, without the copy
        return [seq[int(rng.random() * len(seq))]]
    pool = seq if owned else list(seq)
    rand = rng.random
    return [pool.pop(int(rand() * len(pool))) for _ in range(min(k, len(pool)))]

def sample_excluding(rng: random.Random, seq: Any, excluded: set[int] | frozenset[int],
                     k: int) -> list:
    """``sample(rng, [x for n, x in enumerate(seq) if n not in excluded], k)`` -- the same
    draws and items -- without building the filtered list: each draw's index into the
    filtered list is mapped to ``seq`` by stepping over the excluded positions below it."""
    if k <= 0:
        return []
    skip = sorted(excluded)
    left = len(seq) - len(skip)
    rand = rng.random
    out = []
    for _ in range(min(k, left)):
        pos = int(rand() * left)
        at = 0
        for gone in skip:  # skip is sorted: every position at or below pos shifts it up
            if gone > pos:
                break
            pos += 1
            at += 1
        skip.insert(at, pos)
        left -= 1
        out.append(seq[pos])
    return out


# -- MDM data ------------------------------------------------------------------------------------
# Tests sent out (not performed and billed in the office), so ordering them is an MDM data element
# only: no CPT follows from these words. Every source, test, consultant and image belongs to a
# specialty (:data:`SPECIALTIES`), chosen from the ICD-10-CM codes of the problems addressed, so
# a migraine is never discussed with a dermatologist and dysmenorrhea never gets a rhythm strip.
GENERAL_LABS = (
    ("CBC", "complete blood count"),
    ("CMP", "comprehensive metabolic panel"),
    ("BMP", "basic metabolic panel"),
    ("urinalysis", "UA with microscopy"),
)
# panels that overlap: a CMP is a BMP plus liver tests, so no visit sends out both (the first
# one a visit's specialties name is kept)
_CONTAINS = {"BMP": ("CMP",), "CMP": ("BMP",)}
GENERAL_SOURCES = ("urgent care", "the emergency department", "the previous PCP",
                   "the outside hospital")
PEDIATRIC_SOURCES = ("urgent care", "the emergency department", "the school nurse",
                     "the previous pediatrician")


class Specialty:
    """What a data element may name for problems of one specialty: its consultant and clinic
    (for notes and discussions), tests a PCP sends out, and tests another physician performed
    that the PCP may interpret (none: no independent interpretation for this specialty)."""

    __slots__ = ("consultant", "clinic", "labs", "images", "pediatric")

    def __init__(self, consultant: str, clinic: str, labs: tuple, images: tuple = (),
                 pediatric: bool = True) -> None:
        self.consultant, self.clinic, self.labs, self.images = consultant, clinic, labs, images
        self.pediatric = pediatric


SPECIALTIES = {
    "cardiology": Specialty("cardiologist", "cardiology", (
        ("lipid panel", "fasting lipid panel"), ("BNP", "B-type natriuretic peptide"),
        ("TSH", "thyroid-stimulating hormone level"), ("BMP", "basic metabolic panel")),
        ("ECG tracing from the emergency department", "rhythm strip from the urgent care visit",
         "outside echocardiogram images")),
    "pulmonology": Specialty("pulmonologist", "pulmonology", (
        ("CBC", "complete blood count"), ("chest X-ray", "two-view chest radiograph"),
        ("spirometry", "pulmonary function testing")),
        ("outside chest X-ray images", "CT chest images from the outside hospital")),
    "ent": Specialty("otolaryngologist", "ENT", (
        ("audiogram", "formal hearing test"), ("CBC", "complete blood count")),
        ("CT sinus images from the outside hospital",)),
    "gastroenterology": Specialty("gastroenterologist", "gastroenterology", (
        ("liver panel", "hepatic function panel"), ("lipase", "serum lipase"),
        ("CBC", "complete blood count"), ("CMP", "comprehensive metabolic panel")),
        ("CT abdomen images from the outside hospital", "outside abdominal ultrasound images")),
    "nephrology": Specialty("nephrologist", "nephrology", (
        ("BMP", "basic metabolic panel"), ("urine albumin-creatinine ratio", "urine ACR"),
        ("urinalysis", "UA with microscopy")),
        ("outside renal ultrasound images",)),
    "urology": Specialty("urologist", "urology", (
        ("urinalysis", "UA with microscopy"), ("urine culture", "clean-catch urine culture"),
        ("PSA", "prostate-specific antigen")),
        ("outside renal ultrasound images", "CT urogram images from the outside hospital")),
    "gynecology": Specialty("gynecologist", "gynecology", (
        ("CBC", "complete blood count"), ("TSH", "thyroid-stimulating hormone level"),
        ("pelvic ultrasound", "transvaginal ultrasound")),
        ("outside pelvic ultrasound images",), pediatric=False),
    "orthopedics": Specialty("orthopedic surgeon", "orthopedics", (
        ("ESR", "sedimentation rate"), ("CRP", "C-reactive protein"),
        ("plain films of the affected area", "radiographs of the affected area")),
        ("outside X-ray images", "MRI images from the outside imaging center")),
    "dermatology": Specialty("dermatologist", "dermatology", (
        ("fungal culture", "skin scraping for fungal culture"),
        ("wound culture", "bacterial wound culture")), ()),
    "neurology": Specialty("neurologist", "neurology", (
        ("B12 level", "vitamin B12 level"), ("MRI brain", "brain MRI"),
        ("CMP", "comprehensive metabolic panel")),
        ("CT head images from the outside hospital", "outside EEG tracing")),
    "ophthalmology": Specialty("ophthalmologist", "ophthalmology", (
        ("HbA1c", "hemoglobin A1c"),), ("outside retinal photographs",)),
    "psychiatry": Specialty("psychiatrist", "behavioral health", (
        ("TSH", "thyroid-stimulating hormone level"), ("CBC", "complete blood count")), ()),
    "endocrinology": Specialty("endocrinologist", "endocrinology", (
        ("HbA1c", "hemoglobin A1c"), ("TSH", "thyroid-stimulating hormone level"),
        ("lipid panel", "fasting lipid panel"), ("vitamin D level", "25-OH vitamin D")), ()),
    "hematology": Specialty("hematologist", "hematology", (
        ("CBC", "complete blood count"), ("ferritin", "iron studies with ferritin"),
        ("B12 level", "vitamin B12 level")), ()),
    "infectious disease": Specialty("infectious disease specialist", "infectious disease", (
        ("CBC", "complete blood count"), ("CMP", "comprehensive metabolic panel"),
        ("blood cultures", "two sets of blood cultures")),
        ("outside chest X-ray images",)),
    "oncology": Specialty("oncologist", "oncology", (
        ("CBC", "complete blood count"), ("CMP", "comprehensive metabolic panel")),
        ("CT images from the outside hospital",)),
}
# ICD-10-CM code prefix -> specialty (first match; longest prefixes first)
SPECIALTY_BY_PREFIX = (
    ("E11.3", "ophthalmology"), ("E10.3", "ophthalmology"), ("E11.4", "neurology"),
    ("E11.2", "nephrology"), ("I12", "nephrology"), ("I13", "nephrology"),
    ("J0", "ent"), ("J3", "ent"), ("N18", "nephrology"), ("N0", "nephrology"),
    ("N1", "nephrology"), ("N2", "nephrology"), ("N3", "urology"), ("N4", "urology"),
    ("N5", "urology"), ("N6", "gynecology"), ("N7", "gynecology"), ("N8", "gynecology"),
    ("N9", "gynecology"), ("H6", "ent"), ("H7", "ent"), ("H8", "ent"), ("H9", "ent"),
    ("H", "ophthalmology"), ("B07", "dermatology"), ("B35", "dermatology"),
    ("B36", "dermatology"), ("B0", "dermatology"), ("B86", "dermatology"),
    ("D5", "hematology"), ("D6", "hematology"), ("D7", "hematology"), ("D0", "oncology"),
    ("D22", "dermatology"), ("D23", "dermatology"), ("D31", "ophthalmology"),
    ("D", "oncology"), ("C", "oncology"),
    ("I", "cardiology"), ("J", "pulmonology"), ("K", "gastroenterology"), ("L", "dermatology"),
    ("M", "orthopedics"), ("S", "orthopedics"), ("G", "neurology"), ("F", "psychiatry"),
    ("E", "endocrinology"), ("A", "infectious disease"), ("B", "infectious disease"),
    ("R00", "cardiology"), ("R01", "cardiology"), ("R07", "cardiology"),
    ("R0", "pulmonology"), ("R1", "gastroenterology"), ("R3", "urology"),
    ("R51", "neurology"), ("R55", "cardiology"), ("R42", "neurology"), ("R2", "dermatology"),
    ("R73", "endocrinology"), ("O", "gynecology"),
)


class PrefixTable:
    """The value of the first (prefix, value) pair, in table order, whose prefix starts a code
    -- by one dict probe per prefix length rather than a scan of the table: tier-2 cases bring
    codes never seen before, so the scan ran on most cases."""

    __slots__ = ("_by", "_lengths")

    def __init__(self, pairs: Any) -> None:
        by: dict[str, tuple[int, Any]] = {}
        for n, (prefix, value) in enumerate(pairs):
            by.setdefault(prefix, (n, value))
        self._by = by
        self._lengths = sorted({len(p) for p in by})

    def first(self, code: str, default: Any = None) -> Any:
        best = None
        by = self._by
        for k in self._lengths:
            if k > len(code):
                break
            hit = by.get(code[:k])
            if hit is not None and (best is None or hit[0] < best[0]):
                best = hit
        return default if best is None else best[1]


_SPECIALTY_TABLE = PrefixTable(SPECIALTY_BY_PREFIX)


def _specialty_of(code: str) -> str | None:
    got = _SPECIALTY_OF.get(code, "?")
    if got == "?":
        got = _SPECIALTY_OF[code] = _SPECIALTY_TABLE.first(code)
    return got


_SPECIALTY_OF: dict[str, str | None] = {}


def specialties_for(codes: list[str] | tuple[str, ...]) -> list[str]:
    """The specialties (in code order, deduplicated) whose problems ``codes`` are."""
    out: list[str] = []
    for code in codes:
        name = _specialty_of(code)
        if name and name not in out:
            out.append(name)
    return out


def can_interpret(specialties: list[str] | tuple[str, ...], age: int) -> bool:
    """Whether any specialty of the problems (that sees a patient of ``age``) has a test
    another physician performed."""
    return any(SPECIALTIES[s].images and (SPECIALTIES[s].pediatric or age >= 13)
               for s in specialties)


def _pick(rng: random.Random, pool: tuple, n: int) -> list:
    return sample(rng, pool, n)


_DATA_POOLS: dict[tuple[tuple[str, ...], bool], tuple[list, tuple, tuple]] = {}


def _data_pools(specialties: tuple[str, ...], child: bool) -> tuple[list, tuple, tuple]:
    """(specialties that see the patient, note sources, tests) for a visit, built once per
    (specialties, child)."""
    key = (specialties, child)
    got = _DATA_POOLS.get(key)
    if got is None:
        specs = [SPECIALTIES[s] for s in specialties if s in SPECIALTIES
                 and (SPECIALTIES[s].pediatric or not child)]
        sources = tuple(PEDIATRIC_SOURCES if child else GENERAL_SOURCES) + tuple(
            (f"pediatric {s.clinic}" if child else s.clinic) for s in specs)
        labs: list[tuple[str, str]] = []
        for lab in [t for s in specs for t in s.labs] + list(GENERAL_LABS):
            names = {x[0] for x in labs}
            if lab[0] not in names and not names.intersection(_CONTAINS.get(lab[0], ())):
                labs.append(lab)
        got = _DATA_POOLS[key] = (specs, sources, tuple(labs))
    return got


def data_sentences(rng: random.Random, d: Data, age: int, caregiver: str,
                   specialties: list[str] | tuple[str, ...] = (), *,
                   new: bool = False) -> tuple[list[str], list[str]]:
    """(HPI sentences, plan sentences) that document exactly the data elements of ``d``, each
    naming a source, test or consultant that fits the problems' ``specialties``; a new
    patient had no last visit here, so prior results are dated, never "from last visit"."""
    hpi: list[str] = []
    plan: list[str] = []
    child = age < 13
    specs, sources, labs = _data_pools(tuple(specialties), child)
    for src in _pick(rng, sources, d.external_notes):
        hpi.append(pick(rng, (
            f"Records from {src} reviewed.",
            f"I reviewed the note from {src}.",
            f"Outside records ({src}) reviewed today.",
        )))
    tests = _pick(rng, labs, d.results_reviewed + d.tests_ordered)
    reviewed, ordered = tests[: d.results_reviewed], tests[d.results_reviewed:]
    rand = rng.random  # below, only the wording drawn is joined and formatted
    if reviewed:
        names = [pick(rng, t) for t in reviewed]
        when = pick(rng, _WHEN_NEW if new else _WHEN)
        form = int(rand() * 3)
        plan.append(f"Reviewed prior results: {', '.join(names)} {when}." if form == 0 else
                    f"Prior {' and '.join(names)} ({when}) reviewed with the patient." if form == 1
                    else f"Results reviewed: {'; '.join(names)} {when}.")
    if ordered:
        names = [pick(rng, t) for t in ordered]
        form = int(rand() * 3)
        plan.append(f"Ordered {', '.join(names)} (sent to outside lab)." if form == 0 else
                    f"Tests ordered: {'; '.join(names)}, done at the reference lab." if form == 1
                    else f"Will obtain {' and '.join(names)} at the outside lab.")
    if d.independent_historian:
        hpi.append(pick(rng, (
            f"History obtained from {caregiver}, who serves as independent historian.",
            f"{caregiver.capitalize()} provides much of the history (independent historian).",
            f"Independent historian: {caregiver}.",
        )))
    if d.independent_interpretation:
        images = [i for s in specs for i in s.images]
        if not images:
            raise ValueError(f"no test to interpret for specialties {list(specialties)}")
        what = pick(rng, images)
        plan.append(pick(rng, (
            f"My independent interpretation of the {what}: consistent with today's exam.",
            f"Independently reviewed the {what}; findings agree with the assessment.",
        )))
    if d.discussion_external:
        who = (pick(rng, [s.consultant for s in specs]) if specs
               else "specialist who saw the patient last month")
        who = f"pediatric {who}" if child and specs else who
        plan.append(pick(rng, (
            f"Discussed management by phone with the patient's {who}.",
            f"Case discussed with the {who} today; agree with plan.",
        )))
    return hpi, plan


_WHEN = ("last month", "from 3 months ago", "from the spring", "from last visit")
_WHEN_NEW = _WHEN[:3]


def caregiver(rng: random.Random, age: int) -> str:
    if age < 18:
        return pick(rng, ("mother", "father", "grandmother", "the parent"))
    return pick(rng, ("spouse", "daughter", "son", "caregiver"))


# -- MDM risk ----------------------------------------------------------------------------------
class Focus:
    """What the management sentence must fit: the problem the plan is about (its words, MDM
    kind and ICD-10-CM codes), whether it is diagnosed today (no refills for a new diagnosis),
    and every code of the visit (NSAIDs are never suggested beside CKD, heart failure, an ulcer
    or anticoagulation)."""

    __slots__ = ("text", "kind", "codes", "new_dx", "all_codes")

    def __init__(self, text: str, kind: str, codes: tuple[str, ...] | list[str], new_dx: bool,
                 all_codes: tuple[str, ...] | list[str] = ()) -> None:
        self.text, self.kind, self.codes, self.new_dx = text, kind, tuple(codes), new_dx
        self.all_codes = tuple(all_codes) or self.codes


# conditions an NSAID would harm (KDIGO: avoid NSAIDs in CKD 3-5; HF, peptic ulcer,
# anticoagulation, pregnancy)
NSAID_UNSAFE = ("N18.3", "N18.4", "N18.5", "N18.6", "I12", "I13", "E11.22", "E10.22", "I50",
                "K25", "K26", "K27", "K28", "K92", "Z79.01", "O", "Z33", "Z34", "N17")
# conditions whose standard office treatment is a prescription (antibiotic, contraceptive,
# controller) -- never OTC or reassurance alone
NEEDS_RX = ("N39.0", "N30.0", "N30.9", "L03", "L01", "L02", "J18", "J15", "J02.0", "J03.0",
            "H66.0", "A", "B50", "B51", "B52", "B53", "B54", "Z30.01", "Z30.4", "N70", "N71",
            "N72", "N73", "N76.0", "B37.3", "A56", "A54", "J45.2", "J45.3", "J45.4", "J45.5",
            "J45.90", "J44.1", "J44.0", "I48", "E11.65", "E10.65")
# conditions whose office management is a procedure or a surgical referral, not a drug
SURGICAL = ("D0", "D1", "D2", "D3", "M2", "K40", "K41", "K42", "K43", "K80", "N43", "N83",
            "H25", "H26", "H02", "L72", "L91")
# abnormal findings and congenital anomalies: observed, worked up or referred, never given a
# drug or an OTC product at the visit that finds them
NO_DRUG = ("Q", "R7", "R8", "R9")
# (code prefixes, OTC products) for a low-risk plan that fits the problem; analgesics otherwise
OTC_BY_PREFIX = (
    (("B07",), ("salicylic acid 17% liquid", "salicylic acid wart pads")),
    (("B35", "B36", "B37.2"), ("clotrimazole cream", "terbinafine cream")),
    (("L20", "L23", "L24", "L25", "L30", "L29", "L28", "R21", "L50"),
     ("hydrocortisone 1% cream", "fragrance-free emollient", "cetirizine")),
    (("L",), ("fragrance-free emollient", "petrolatum ointment")),
    (("H10", "H04", "H11"), ("artificial tears", "preservative-free lubricating drops")),
    (("J30", "J31", "J32", "J34", "J00", "J01", "J06", "R09.8"),
     ("saline nasal spray", "saline nasal rinse")),
    (("R05",), ("honey at bedtime", "dextromethorphan")),
    (("K21", "K29", "K30", "R12", "R10.1"), ("famotidine", "calcium carbonate antacid")),
    (("K59.0", "K56.4"), ("polyethylene glycol", "fiber supplement")),
    (("K52", "A09", "R19.7"), ("oral rehydration solution", "loperamide")),
    (("H61.2",), ("carbamide peroxide ear drops",)),
    (("F51", "G47.0"), ("melatonin",)),
)
# problems threatening bodily function whose care is emergency surgery, not admission to medicine
EMERGENCY_SURGERY = ("H33", "H34", "H40.2", "N83.5", "N44", "K35", "K56", "K44.1", "K40.1",
                     "K40.4", "K41.1", "K41.4", "K42.1", "K43.1", "K43.4", "K43.7", "K45.1",
                     "K46.1", "K55.0", "K63.1", "K25.1", "K25.5", "K26.1", "K26.5", "I71.3",
                     "I71.1", "I71.0")
# problems for which rest and fluids is the care (self-limited infections, viral syndromes)
REST_FLUIDS = ("J0", "J10", "J11", "J20", "J21", "B34", "B08", "B09", "A08", "A09", "K52",
               "R50", "R05", "R11", "R19.7", "U07")


def starts(codes: tuple[str, ...] | list[str], prefixes: str | tuple[str, ...]) -> bool:
    """Whether any of ``codes`` starts with one of ``prefixes`` (a loop: ``any`` over a
    generator costs more than the checks on the one to four codes of a problem)."""
    for c in codes:  # noqa: SIM110 - the loop is the point (see above)
        if c.startswith(prefixes):
            return True
    return False


_starts = starts


def fit_risk(risk: int, focus: Focus, age: int) -> int:
    """The risk element a plan can honestly document for ``focus`` near ``risk``: a condition
    that needs a prescription gets one, a surgical problem gets a decision about surgery or
    nothing (no OTC), an abnormal finding or a congenital anomaly is observed or worked up,
    and hospital admission is discussed only for a worsening chronic or an
    acute systemic illness in the very young or old, or a problem threatening bodily function."""
    if focus.kind == "severe":
        return 3
    if risk == 3 and not (focus.kind in ("chronic_exacerbation", "acute_systemic", "undiagnosed")
                          and (age >= 65 or age < 2)):
        risk = 2
    if _starts(focus.codes, NEEDS_RX) or focus.kind == "chronic_exacerbation":
        risk = max(risk, 2)
    if _starts(focus.codes, SURGICAL) and risk == 1:
        risk = 0
    if _starts(focus.codes, NO_DRUG) and not _starts(focus.codes, NEEDS_RX):
        risk = 0
    return risk


def _otc(rng: random.Random, focus: Focus, age: int) -> str:
    for prefixes, products in OTC_BY_PREFIX:
        if _starts(focus.codes, prefixes):
            return pick(rng, products)
    if age < 1:
        return "infant acetaminophen"
    if age < 12 or _starts(focus.all_codes, NSAID_UNSAFE):
        return "acetaminophen"
    return pick(rng, ("acetaminophen", "ibuprofen", "acetaminophen or ibuprofen", "naproxen"))


def risk_sentence(rng: random.Random, risk: int, focus: Focus, age: int) -> str:
    """One plan sentence documenting the management option that sets the risk element, in
    words that fit the problem (see :func:`fit_risk`, which the caller applies first)."""
    problem = focus.text
    if risk == 0:
        if _starts(focus.codes, REST_FLUIDS):
            return pick(rng, (
                f"Supportive care for {problem}; reassurance given.",
                "Rest, fluids, return precautions reviewed.",
            ))
        if focus.codes and focus.codes[0][:1] in "ST":
            return pick(rng, ("Ice, elevation and relative rest; return precautions reviewed.",
                              f"Activity as tolerated for {problem}; precautions reviewed."))
        return pick(rng, (
            f"Watchful waiting for {problem}; no medication needed.",
            f"Observation only for {problem}, discussed with the patient; treatment not needed "
            "now.",
        ))
    if risk == 1:
        drug = _otc(rng, focus, age)
        return pick(rng, (
            f"OTC {drug} prn.",
            f"May use over-the-counter {drug}.",
            f"Recommend {drug} (OTC) for comfort.",
        ))
    if risk == 2:
        if _starts(focus.codes, SURGICAL) and not _starts(focus.codes, NEEDS_RX):
            return pick(rng, (
                f"Decision made for elective surgery for {problem}; surgical referral placed, "
                "risks discussed.",
                f"Elective surgical repair of {problem} discussed and chosen; referred to "
                "surgery.",
            ))
        if focus.new_dx or focus.kind in ("acute", "minor", "acute_systemic", "undiagnosed"):
            return pick(rng, (
                f"Rx sent to pharmacy for {problem}; side effects reviewed.",
                f"Started prescription therapy for {problem}, risks and benefits discussed.",
                f"New prescription for {problem} sent; how to take it reviewed.",
            ))
        if focus.kind == "chronic_exacerbation":
            return pick(rng, (
                f"Prescription medication for {problem} adjusted; dose change reviewed.",
                f"Rx for {problem} increased; side effects reviewed.",
            ))
        return pick(rng, (
            f"Prescription medication for {problem} adjusted; dose change reviewed.",
            f"Prescription drug management for {problem}: refills sent, dose unchanged.",
            f"Rx for {problem} renewed after reviewing adherence and side effects.",
        ))
    if focus.kind == "severe" and _starts(focus.codes, EMERGENCY_SURGERY):
        return pick(rng, (
            f"Same-day transfer to the surgical team: decision for emergency surgery for "
            f"{problem}.",
            f"Emergency surgery for {problem} arranged today with the on-call surgeon.",
        ))
    if focus.kind == "severe":
        return pick(rng, (
            f"Direct hospital admission arranged for {problem}; report called to the admitting "
            "team.",
            f"Sent to the emergency department for admission for {problem}; transfer arranged.",
        ))
    return pick(rng, (
        f"Hospital admission for {problem} considered and discussed; patient opts for outpatient "
        "management with close f/u.",
        f"Discussed direct admission for {problem}; decision made to treat as outpatient with "
        "recheck in 24 hours.",
    ))


# -- problem status ----------------------------------------------------------------------------
STATUS = {
    "minor": ("self-limited", "minor", "self-limiting"),
    "acute": ("acute, uncomplicated", "no complications noted"),
    "chronic_stable": ("stable", "unchanged"),
    "chronic_exacerbation": ("worsening", "flaring"),
    "acute_systemic": ("with systemic symptoms", "acute, with systemic symptoms"),
    "undiagnosed": ("undiagnosed new problem, prognosis uncertain",
                    "new problem of uncertain prognosis"),
    "severe": ("threat to bodily function", "acute, a threat to bodily function"),
}
STATUS_NEW = {"acute": ("new, uncomplicated",)}  # only where the problem is new today
STATUS_FOLLOW_UP = {"acute": ("improving, uncomplicated",)}
STATUS_TREATED = {"chronic_stable": ("stable on current regimen",),
                  "chronic_exacerbation": ("progressing despite treatment",)}
STATUS_MEASURED = {"chronic_stable": ("at goal",)}  # a target value exists (BP, A1c, LDL, TSH)
MEASURED = ("I10", "I11", "I12", "I13", "I15", "I16", "E10", "E11", "E78", "E03", "E05")
STATUS_WORDS = tuple(sorted({w for table in (STATUS, STATUS_NEW, STATUS_FOLLOW_UP,
                                             STATUS_TREATED, STATUS_MEASURED)
                             for ws in table.values() for w in ws}, key=len, reverse=True))


_STATUS_WORDS: dict[tuple[str, bool, bool, bool, bool, bool], tuple[str, ...]] = {}


def status_suffix(rng: random.Random, kind: str, *, new_today: bool = False,
                  follow_up: bool = False, treated: bool = False,
                  codes: tuple[str, ...] | list[str] = (), acuity_unsaid: bool = False) -> str:
    """The words that say how a problem stands (the MDM problem element), or '' -- only words
    the visit and the condition allow: "new" only for a problem that is new today, "improving"
    only at a follow-up, "on current regimen"/"despite treatment" only for a treated chronic
    condition, "at goal" only where a measured target exists, and never "acute" where the
    diagnosis is coded as not stated acute (``acuity_unsaid``: "bronchitis" is J40 only while
    nothing in the note calls it acute)."""
    if kind not in STATUS:
        return ""
    measured = treated and starts(codes, MEASURED)
    key = (kind, new_today, follow_up, treated, measured, acuity_unsaid)
    words = _STATUS_WORDS.get(key)
    if words is None:
        words = list(STATUS[kind])
        if new_today:
            words += STATUS_NEW.get(kind, ())
        if follow_up:
            words += STATUS_FOLLOW_UP.get(kind, ())
        if treated:
            words += STATUS_TREATED.get(kind, ())
        if measured:
            words += STATUS_MEASURED.get(kind, ())
        if acuity_unsaid:
            words = [w for w in words if "acute" not in w]
        words = _STATUS_WORDS[key] = tuple(words)
    rand = rng.random
    word = words[int(rand() * len(words))]
    form = int(rand() * 3)
    return f", {word}" if form == 0 else f" - {word}" if form == 1 else f" ({word})"


# -- time --------------------------------------------------------------------------------------
def time_sentence(rng: random.Random, minutes: int, procedure_day: bool) -> str:
    if procedure_day:
        return pick(rng, (
            f"Total time on the date of the encounter, excluding the separately reported "
            f"procedure: {minutes} minutes.",
            f"I spent {minutes} minutes on the E/M today, not counting time for the procedure.",
            f"E/M time {minutes} min (procedure time excluded).",
        ))
    return pick(rng, (
        f"Total time on the date of the encounter: {minutes} minutes.",
        f"I spent {minutes} minutes total on this visit today, including documentation.",
        f"Total practitioner time {minutes} min including chart review and counseling.",
        f"Time today: {minutes} minutes (history, exam, counseling, orders, documentation).",
        f"{minutes} minutes spent on the date of service (face-to-face and documentation).",
    ))


# -- social history ------------------------------------------------------------------------------
ROS_REST = ("All other systems", "Remainder of ROS", "Other systems", "Rest of the ROS",
            "10-point ROS otherwise", "Remaining systems")
ROS_NEGATIVE = ("negative.", "reviewed and negative.", "neg.", "reviewed, negative.")

# sentence -> (exclusive group, what it asserts). A note says at most one thing per group
# (nobody lives alone and with a spouse, works two jobs or is retired twice), and nothing a
# documented condition rules out (``avoid``: alcohol, tobacco, active, walks, independent,
# physical).
_SOCIAL = {
    "Occasional social EtOH.": ("alcohol", "alcohol"),
    "Drinks 1 glass of wine with dinner.": ("alcohol", "alcohol"),
    "Never smoker.": ("tobacco", "tobacco"),
    "Walks 30 min most days.": ("activity", "active"),
    "Plays soccer after school.": ("activity", "active"),
    "Plays on the school team.": ("activity", "active"),
    "Walks daily with a neighbour.": ("activity", "active"),
    "Uses a cane outdoors.": ("mobility", "walks"),
    "Lives with wife.": ("home", ""), "Lives with husband.": ("home", ""),
    "Lives alone.": ("home", "independent"),
    "Lives alone, independent in ADLs.": ("home", "independent"),
    "Lives with partner and kids.": ("home", ""),
    "Lives with parents.": ("home", ""), "Lives with mother and siblings.": ("home", ""),
    "Lives with parents and a younger sibling.": ("home", ""), "Lives with mother.": ("home", ""),
    "Home with grandparents during the day.": ("daycare", ""),
    "Attends daycare.": ("daycare", ""),
    "Works as a teacher.": ("work", ""), "Works in construction.": ("work", "physical"),
    "Office job.": ("work", ""), "Works night shifts as a nurse.": ("work", "physical"),
    "Part-time job on weekends.": ("work", ""),
    "Retired.": ("work", ""), "Retired accountant.": ("work", ""),
    "Daughter lives nearby and helps with shopping.": ("family", ""),
    "No smoke exposure at home.": ("smoke", ""),
}


def _social_pool(age: int, sex: str) -> list[str]:
    partner = "husband" if sex == "female" else "wife"
    if age < 5:
        return ["Lives with parents.", "Attends daycare.", "Lives with mother and siblings.",
                "No smoke exposure at home.", "Immunizations up to date per parent.",
                "Home with grandparents during the day."]
    if age < 13:
        grade = min(max(age - 5, 1), 7)
        return [f"In grade {grade}.", "Lives with parents and a younger sibling.",
                "Plays soccer after school.", "No smoke exposure at home.",
                "Immunizations up to date per parent.", "Lives with mother."]
    if age < 18:
        return ["High school student.", "Lives with parents.", "Plays on the school team.",
                "Denies tobacco, vaping or alcohol (interviewed alone).",
                "Part-time job on weekends."]
    if age < 65:
        return [f"Lives with {partner}.", "Lives alone.", "Works as a teacher.",
                "Works in construction.", "Office job.", "Drinks 2 cups of coffee a day.",
                "Walks 30 min most days.", "Occasional social EtOH.", "Has a dog at home.",
                "Never smoker.", "Works night shifts as a nurse.", "Lives with partner and kids."]
    return [f"Lives with {partner}.", "Lives alone, independent in ADLs.", "Retired.",
            "Retired accountant.", "Walks daily with a neighbour.",
            "Drinks 1 glass of wine with dinner.", "Uses a cane outdoors.",
            "Daughter lives nearby and helps with shopping."]


_ALLERGIES = ("NKDA.", "No known drug allergies.", "Allergies: none known.", "NKA.")
_TRAVEL = ("Denies recent travel.", "No recent travel.", "No travel in the past month.")
_SLEEP_ADULT = tuple(f"Sleeps about {h} hours a night." for h in (6, 7, 8))
_SLEEP_CHILD = ("Sleeps through the night.", "Sleeping well per parent.")
_SOCIAL_POOLS: dict[tuple[int, str, frozenset[str]], tuple[tuple[str, str], ...]] = {}


def social_history(rng: random.Random, age: int, sex: str, n: int,
                   avoid: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Up to ``n`` social-history sentences that fit the patient's age and sex, say at most one
    thing about home, work, activity and drinking, and contradict no documented condition
    (``avoid``: alcohol, tobacco, active, walks, independent, physical)."""
    bucket = age if age < 18 else 18 if age < 65 else 65
    key = (bucket, sex, frozenset(avoid))
    pool = _SOCIAL_POOLS.get(key)
    if pool is None:
        pool = _SOCIAL_POOLS[key] = tuple(
            (x, _SOCIAL.get(x, ("", ""))[0]) for x in _social_pool(age, sex)
            if _SOCIAL.get(x, ("", ""))[1] not in avoid)
    rand = rng.random
    common = (
        _ALLERGIES[int(rand() * 4)], _TRAVEL[int(rand() * 3)],
        _SLEEP_ADULT[int(rand() * 3)] if age >= 13 else _SLEEP_CHILD[int(rand() * 2)],
    )
    cands = [*pool, (common[0], ""), (common[1], ""), (common[2], "")]
    out: list[str] = []
    groups: set[str] = set()
    while len(out) < n and cands:
        x, group = cands.pop(int(rand() * len(cands)))
        if group:
            if group in groups:
                continue
            groups.add(group)
        out.append(x)
    return out


# -- vitals ---------------------------------------------------------------------------------------
# WHO child growth standards, weight-for-age median (kg) by month, boys and girls averaged; the
# 3rd-97th percentile band is roughly median x 0.80 .. x 1.22 over the first three years
_WEIGHT_MEDIAN = ((0, 3.3), (1, 4.3), (2, 5.4), (3, 6.2), (4, 6.8), (6, 7.6), (9, 8.6),
                  (12, 9.4), (18, 10.8), (24, 12.0), (30, 13.1), (36, 14.1))


def weight_for_age(rng: random.Random, age: int) -> float:
    """A weight in kg plausible for a child of ``age`` whole years under 3: a month of that
    year, the WHO median there, and a spread inside the 3rd-97th percentile band."""
    months = age * 12 + randint(rng, 0, 11)
    for (m0, w0), (m1, w1) in pairwise(_WEIGHT_MEDIAN):
        if m0 <= months <= m1:
            median = w0 + (w1 - w0) * (months - m0) / (m1 - m0)
            break
    else:
        median = _WEIGHT_MEDIAN[-1][1]
    return round(median * (0.86 + randint(rng, 0, 28) / 100), 1)


# (HR range, RR range) by the first age bound the patient is under
_HR_RR = ((1, (110, 150), (28, 44)), (6, (90, 130), (20, 30)), (13, (75, 115), (16, 24)),
          (999, (60, 100), (12, 20)))


def vitals(rng: random.Random, age: int, febrile: bool, hypertensive: bool) -> str:
    """Vital signs in the patient's age range; BP only from age 3 (not routinely taken before).
    (The draws are ``randint``'s, inlined, and only the wording drawn is formatted: every note
    has a vitals line, and compile speed is a benchmarked figure.)"""
    rand = rng.random
    temp = f"{(1004 + int(rand() * 22) if febrile else 976 + int(rand() * 15)) / 10:.1f}"
    (h0, h1), (r0, r1) = next((h, r) for bound, h, r in _HR_RR if age < bound)
    hr = h0 + int(rand() * (h1 - h0 + 1))
    rr = r0 + int(rand() * (r1 - r0 + 1))
    spo2 = 95 + int(rand() * 6)
    if age < 3:
        wt = weight_for_age(rng, age)
        if rand() < 0.5:
            return f"T {temp} F, HR {hr}, RR {rr}, SpO2 {spo2}%, wt {wt} kg."
        return f"Vitals: temp {temp}, pulse {hr}, RR {rr}, weight {wt} kg."
    if age < 13:
        sys_bp, dia = 90 + int(rand() * 23), 52 + int(rand() * 21)
    elif hypertensive:
        sys_bp, dia = 136 + int(rand() * 17), 84 + int(rand() * 11)
    else:
        sys_bp, dia = 108 + int(rand() * 25), 64 + int(rand() * 19)
    form = int(rand() * 4)
    if form == 0:
        return f"T {temp} F, HR {hr}, BP {sys_bp}/{dia}, RR {rr}, SpO2 {spo2}%."
    if form == 1:
        return f"Vitals: BP {sys_bp}/{dia}, pulse {hr}, temp {temp}, O2 sat {spo2}% RA."
    if form == 2:
        return f"BP {sys_bp}/{dia} | HR {hr} | Temp {temp} F | RR {rr}."
    return f"VS: {temp} F, {sys_bp}/{dia}, HR {hr}, RR {rr}, {spo2}% on room air."


# -- normal exam -----------------------------------------------------------------------------------
# (organ system, realizations). A system any documented condition involves is never asserted
# normal; the systems a condition involves come from its ICD-10-CM chapter (see notes.py).
NORMAL_EXAM = (
    ("general", ("Alert, oriented, no acute distress.", "Well-appearing.", "NAD.",
                 "Alert and interactive.", "Comfortable, in no distress.", "A&O x3, NAD.")),
    ("skin", ("Skin warm and dry.", "No rash.", "Skin intact, no lesions.", "Skin: normal color, "
              "no rash.", "Warm, well perfused.")),
    ("neuro", ("Speech fluent.", "CN II-XII grossly intact.", "Gait steady.", "Gait normal.",
               "Neuro: nonfocal.")),
    ("psych", ("Mood and affect appropriate.", "Normal mood and affect.", "Pleasant, cooperative.",
               "Affect full, thought process linear.", "Psych: appropriate.")),
    ("eye", ("Conjunctivae clear.", "PERRL, EOMI.", "Eyes: anicteric, no injection.",
             "Sclerae white, conjunctivae pink.")),
    ("ent", ("TMs clear bilaterally.", "Oropharynx clear.", "Neck supple.",
             "Pharynx without erythema.", "Nares patent, TMs pearly gray.")),
    ("lungs", ("Lungs clear to auscultation bilaterally.", "CTAB, no wheezes.",
               "Breath sounds normal, no crackles.", "Lungs: clear, good air movement.")),
    ("heart", ("RRR, no murmur.", "Heart regular, no murmurs.", "S1 S2 normal, regular rhythm.",
               "CV: regular rate and rhythm.")),
    ("abdomen", ("Abdomen soft, nontender.", "Abd soft, NT/ND.", "Abdomen benign.",
                 "Bowel sounds present, no tenderness.")),
    ("musculoskeletal", ("Full ROM all extremities.", "No joint swelling.",
                         "Extremities without deformity.", "MSK: normal strength and tone.")),
)
ADULT_ONLY = frozenset({"CN II-XII grossly intact."})
CHILD_ONLY = frozenset({"Alert and interactive."})


_EXAM_BY_AGE = {
    child: tuple((system, tuple(t for t in texts
                                if not ((t in ADULT_ONLY and child) or (t in CHILD_ONLY
                                                                         and not child))))
                 for system, texts in NORMAL_EXAM)
    for child in (False, True)
}


_EXAM_OPEN: dict[tuple[bool, frozenset[str]], list[tuple[str, ...]]] = {}


def normal_exam(rng: random.Random, age: int, blocked: set[str] | frozenset[str],
                n: int) -> list[str]:
    """``n`` normal findings from distinct systems not in ``blocked``, fitting the age (the
    systems left open are built once per (child, blocked))."""
    key = (age < 13, frozenset(blocked))
    systems = _EXAM_OPEN.get(key)
    if systems is None:
        systems = _EXAM_OPEN[key] = [texts for system, texts in _EXAM_BY_AGE[key[0]]
                                     if system not in blocked]
    rand = rng.random
    return [texts[int(rand() * len(texts))] for texts in sample(rng, systems, n)]
