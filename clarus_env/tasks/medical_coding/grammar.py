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
from typing import Any

from .em import Data


def pick(rng: random.Random, seq: Any) -> Any:
    """``rng.choice`` at a fraction of its cost (one ``random()`` draw): notes make ~150 draws,
    and compile speed is a benchmarked figure. Deterministic in any process."""
    return seq[int(rng.random() * len(seq))]


def randint(rng: random.Random, lo: int, hi: int) -> int:
    """``rng.randint`` by one ``random()`` draw, inclusive of both ends."""
    return lo + int(rng.random() * (hi - lo + 1))

# -- MDM data ------------------------------------------------------------------------------------
# Tests sent out (not performed and billed in the office), so ordering them is an MDM data element
# only: no CPT follows from these words.
LAB_TESTS = (
    ("CBC", "complete blood count"),
    ("CMP", "comprehensive metabolic panel"),
    ("BMP", "basic metabolic panel"),
    ("lipid panel", "fasting lipid panel"),
    ("TSH", "thyroid-stimulating hormone level"),
    ("HbA1c", "hemoglobin A1c"),
    ("vitamin D level", "25-OH vitamin D"),
    ("ferritin", "iron studies with ferritin"),
    ("magnesium level", "serum magnesium"),
    ("liver panel", "hepatic function panel"),
)
NOTE_SOURCES = (
    "urgent care", "the emergency department", "cardiology", "the outside hospital",
    "the previous PCP", "orthopedics", "gastroenterology", "the visiting nurse",
)
PEDIATRIC_NOTE_SOURCES = ("urgent care", "the emergency department", "the school nurse",
                          "the previous pediatrician")
INTERPRETED = (
    "ECG tracing from the emergency department",
    "outside X-ray images",
    "CT images from the outside hospital",
    "rhythm strip from the urgent care visit",
)
CONSULTANTS = ("cardiologist", "nephrologist", "endocrinologist", "pulmonologist",
               "orthopedic surgeon", "dermatologist")
PEDIATRIC_CONSULTANTS = ("pediatric pulmonologist", "pediatric gastroenterologist",
                         "pediatric cardiologist")


def _pick(rng: random.Random, pool: tuple, n: int) -> list:
    return rng.sample(pool, min(n, len(pool)))


def data_sentences(rng: random.Random, d: Data, age: int,
                   caregiver: str) -> tuple[list[str], list[str]]:
    """(HPI sentences, plan sentences) that document exactly the data elements of ``d``."""
    hpi: list[str] = []
    plan: list[str] = []
    child = age < 13
    for src in _pick(rng, PEDIATRIC_NOTE_SOURCES if child else NOTE_SOURCES, d.external_notes):
        hpi.append(pick(rng, (
            f"Records from {src} reviewed.",
            f"I reviewed the note from {src}.",
            f"Outside records ({src}) reviewed today.",
        )))
    tests = _pick(rng, LAB_TESTS, d.results_reviewed + d.tests_ordered)
    reviewed, ordered = tests[: d.results_reviewed], tests[d.results_reviewed:]
    if reviewed:
        names = [pick(rng, t) for t in reviewed]
        when = pick(rng, ("last month", "from 3 months ago", "from the spring", "from last visit"))
        plan.append(pick(rng, (
            f"Reviewed prior results: {', '.join(names)} {when}.",
            f"Prior {' and '.join(names)} ({when}) reviewed with the patient.",
            f"Results reviewed: {'; '.join(names)} {when}.",
        )))
    if ordered:
        names = [pick(rng, t) for t in ordered]
        plan.append(pick(rng, (
            f"Ordered {', '.join(names)} (sent to outside lab).",
            f"Labs ordered: {'; '.join(names)}, drawn at the reference lab.",
            f"Will obtain {' and '.join(names)} at the outside lab.",
        )))
    if d.independent_historian:
        hpi.append(pick(rng, (
            f"History obtained from {caregiver}, who serves as independent historian.",
            f"{caregiver.capitalize()} provides much of the history (independent historian).",
            f"Independent historian: {caregiver}.",
        )))
    if d.independent_interpretation:
        what = pick(rng, INTERPRETED)
        plan.append(pick(rng, (
            f"My independent interpretation of the {what}: no acute change from prior.",
            f"Independently reviewed the {what}; no acute change from prior.",
        )))
    if d.discussion_external:
        who = pick(rng, PEDIATRIC_CONSULTANTS if child else CONSULTANTS)
        plan.append(pick(rng, (
            f"Discussed management by phone with the patient's {who}.",
            f"Case discussed with {who} today; agree with plan.",
        )))
    return hpi, plan


def caregiver(rng: random.Random, age: int) -> str:
    if age < 18:
        return pick(rng, ("mother", "father", "grandmother", "the parent"))
    return pick(rng, ("spouse", "daughter", "son", "caregiver"))


# -- MDM risk ----------------------------------------------------------------------------------
OTC = ("acetaminophen", "ibuprofen", "acetaminophen or ibuprofen", "naproxen")


def risk_sentence(rng: random.Random, risk: int, problem: str, age: int) -> str:
    """One plan sentence documenting the management option that sets the risk element."""
    if risk == 0:
        return pick(rng, (
            f"Supportive care for {problem}; reassurance given.",
            "Rest, fluids, return precautions reviewed.",
            "Watchful waiting; no medication needed.",
        ))
    if risk == 1:
        drug = pick(rng, OTC if age >= 12 else OTC[:3] if age >= 1 else ("infant acetaminophen",))
        return pick(rng, (
            f"OTC {drug} prn.",
            f"May use over-the-counter {drug}.",
            f"Recommend {drug} (OTC) for comfort.",
        ))
    if risk == 2:
        return pick(rng, (
            f"Rx sent to pharmacy for {problem}; side effects reviewed.",
            f"Prescription medication for {problem} adjusted; dose change reviewed.",
            f"Started prescription therapy for {problem}, risks and benefits discussed.",
            f"Prescription drug management for {problem}: refills sent, dose unchanged.",
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
    "acute": ("new, uncomplicated", "acute, uncomplicated", "no complications noted"),
    "chronic_stable": ("stable", "stable on current regimen", "unchanged", "at goal"),
    "chronic_exacerbation": ("worsening", "progressing despite treatment", "flaring"),
    "acute_systemic": ("with systemic symptoms", "acute, with systemic symptoms"),
    "undiagnosed": ("undiagnosed new problem, prognosis uncertain",
                    "new problem of uncertain prognosis"),
}


def status_suffix(rng: random.Random, kind: str) -> str:
    """The words that say how a problem stands (the MDM problem element), or ''."""
    word = pick(rng, STATUS.get(kind, ("",)))
    if not word:
        return ""
    return pick(rng, (f", {word}", f" - {word}", f" ({word})"))


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

_SOCIAL_TAGS = {
    "Occasional social EtOH.": "alcohol", "Drinks 1 glass of wine with dinner.": "alcohol",
    "Never smoker.": "tobacco", "Walks 30 min most days.": "active",
    "Plays soccer after school.": "active", "Plays on the school team.": "active",
    "Walks daily with a neighbour.": "active",
}


def social_history(rng: random.Random, age: int, sex: str, n: int,
                   avoid: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Up to ``n`` social-history sentences that fit the patient's age and sex and contradict
    no documented condition (``avoid``: alcohol, tobacco, active)."""
    if age < 5:
        pool = ["Lives with parents.", "Attends daycare.", "Lives with mother and siblings.",
                "No smoke exposure at home.", "Immunizations up to date per parent.",
                "Home with grandparents during the day."]
    elif age < 13:
        grade = min(max(age - 5, 1), 7)
        pool = [f"In grade {grade}.", "Lives with parents and a younger sibling.",
                "Plays soccer after school.", "No smoke exposure at home.",
                "Immunizations up to date per parent.", "Lives with mother."]
    elif age < 18:
        pool = ["High school student.", "Lives with parents.", "Plays on the school team.",
                "Denies tobacco, vaping or alcohol (interviewed alone).",
                "Part-time job on weekends."]
    elif age < 65:
        partner = "husband" if sex == "female" else "wife"
        pool = [f"Lives with {partner}.", "Lives alone.", "Works as a teacher.",
                "Works in construction.", "Office job.", "Drinks 2 cups of coffee a day.",
                "Walks 30 min most days.", "Occasional social EtOH.", "Has a dog at home.",
                "Never smoker.", "Works night shifts as a nurse.", "Lives with partner and kids."]
    else:
        partner = "husband" if sex == "female" else "wife"
        pool = [f"Lives with {partner}.", "Lives alone, independent in ADLs.", "Retired.",
                "Retired accountant.", "Walks daily with a neighbour.",
                "Drinks 1 glass of wine with dinner.", "Uses a cane outdoors.",
                "Daughter lives nearby and helps with shopping."]
    common = [
        pick(rng, ("NKDA.", "No known drug allergies.", "Allergies: none known.", "NKA.")),
        pick(rng, ("Denies recent travel.", "No recent travel.", "No travel in the past month.")),
        f"Sleeps about {pick(rng, (6, 7, 8))} hours a night." if age >= 13
        else pick(rng, ("Sleeps through the night.", "Sleeping well per parent.")),
    ]
    pool = [x for x in pool + common if _SOCIAL_TAGS.get(x) not in avoid]
    return rng.sample(pool, min(n, len(pool)))


# -- vitals ---------------------------------------------------------------------------------------
def vitals(rng: random.Random, age: int, febrile: bool, hypertensive: bool) -> str:
    """Vital signs in the patient's age range; BP only from age 3 (not routinely taken before)."""
    temp = randint(rng, 1004, 1025) / 10 if febrile else randint(rng, 976, 990) / 10
    if age < 1:
        hr, rr = randint(rng, 110, 150), randint(rng, 28, 44)
    elif age < 6:
        hr, rr = randint(rng, 90, 130), randint(rng, 20, 30)
    elif age < 13:
        hr, rr = randint(rng, 75, 115), randint(rng, 16, 24)
    else:
        hr, rr = randint(rng, 60, 100), randint(rng, 12, 20)
    spo2 = randint(rng, 95, 100)
    if age < 3:
        wt = round(3.5 + age * 2.5 + randint(rng, 0, 15) / 10, 1)
        return pick(rng, (
            f"T {temp:.1f} F, HR {hr}, RR {rr}, SpO2 {spo2}%, wt {wt} kg.",
            f"Vitals: temp {temp:.1f}, pulse {hr}, RR {rr}, weight {wt} kg.",
        ))
    if age < 13:
        sys_bp, dia = randint(rng, 90, 112), randint(rng, 52, 72)
    elif hypertensive:
        sys_bp, dia = randint(rng, 136, 152), randint(rng, 84, 94)
    else:
        sys_bp, dia = randint(rng, 108, 132), randint(rng, 64, 82)
    return pick(rng, (
        f"T {temp:.1f} F, HR {hr}, BP {sys_bp}/{dia}, RR {rr}, SpO2 {spo2}%.",
        f"Vitals: BP {sys_bp}/{dia}, pulse {hr}, temp {temp:.1f}, O2 sat {spo2}% RA.",
        f"BP {sys_bp}/{dia} | HR {hr} | Temp {temp:.1f} F | RR {rr}.",
        f"VS: {temp:.1f} F, {sys_bp}/{dia}, HR {hr}, RR {rr}, {spo2}% on room air.",
    ))


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


def normal_exam(rng: random.Random, age: int, blocked: set[str], n: int) -> list[str]:
    """``n`` normal findings from distinct systems not in ``blocked``, fitting the age."""
    systems = [(system, texts) for system, texts in NORMAL_EXAM if system not in blocked]
    out = []
    for _, texts in rng.sample(systems, min(n, len(systems))):
        fits = [t for t in texts
                if not ((t in ADULT_ONLY and age < 13) or (t in CHILD_ONLY and age >= 13))]
        out.append(pick(rng, fits))
    return out
