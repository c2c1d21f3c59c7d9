"""Tier 2: cases built from the ICD-10-CM tabular itself, for generalization the splits measure.

The curated catalog (:mod:`.catalog`) is the realism tier: a few hundred conditions with
findings, combination rules and procedures. A model can learn its phrases by heart, so the
splits also draw cases from thousands of billable codes *beyond* the catalog, across many
chapters, each worded by rephrasing its tabular title and inclusion terms into the words a
clinician writes ("Abscess of liver" -> "liver abscess", "..., unspecified" dropped, "due to" ->
"secondary to", HTN/DM/COPD abbreviations) -- never the title verbatim.

**Code-disjoint splits.** Every tier-2 code gets a role from a SHA-256 of the code: *test-only*
(30%), *dev-only* (10%) or *shared*. Held-out codes never occur in train; a shared code's
phrasings are partitioned by split, so no train phrasing of any code is seen in dev or test.

**Validation** (:func:`build` keeps a code only if all hold; :func:`problems` re-checks the
committed file): billable in the bundle; not a manifestation ("in diseases classified
elsewhere") and no ``codeFirst``/``useAdditionalCode``/``codeAlso``/7th-character note at the
code or an ancestor -- a 7th-character code from the code list included, by its prefixes --
(those need a second code or character the note could not support); never a code that is not
listed first (:data:`NEVER_FIRST`: coma scale, hypoglycemia level, cause of mortality); not in
the curated catalog; not an injury, external cause, encounter, history, pregnancy or perinatal
code; titles with "other"/"specified"/NEC or a mid-title "unspecified" are skipped (a note cannot
say "other"). Age/sex edits follow what the tabular states in the words of the title and its
ancestors (female/male organs, "senile", "juvenile", "postmenopausal", ...) and the code ranges
that fix them (genital-organ blocks, early congenital syphilis, adult RA, ...). Excludes1
conflicts with the other codes of a case are checked when the case is built
(:func:`excludes1_conflict`); a code the 'with' convention joins to diabetes never meets a
diabetes row (:data:`DIABETES_WITH`).

The pool is data (``catalog/tier2.json``), rebuilt with
``python -m clarus_env.tasks.medical_coding.tier2`` from the bundle and the CMS tabular XML, so
compiling a scenario never needs the raw XML and stays byte-identical on any machine.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.parsers import expat

from .catalog import CATALOG_DIR, load_catalog
from .tabular_check import RAW_TABULAR

TIER2_FILE = CATALOG_DIR / "tier2.json"
SPLIT_NAMES = ("train", "dev", "test")
TEST_ONLY, DEV_ONLY = 0.30, 0.10  # shares of tier-2 codes held out of train

ALLOWED_LETTERS = frozenset("ABDEFGHIJKLMNQR")
_SKIP_TITLE = re.compile(
    r"\b(other|others|specified|NEC|not elsewhere|elsewhere classified|classified elsewhere|"
    r"encounter|history|sequela|sequelae|subsequent|initial|pregnancy|puerperium|childbirth|"
    r"newborn|neonatal|perinatal|fetus|fetal|maternal|underdosing|poisoning|adverse effect|"
    r"without mention|in remission|status|complicating|delivery|gestation|trimester|"
    # chemotherapy anemia is coded after the neoplasm with T45.1X5- (guideline I.C.2.c.2),
    # which its tabular entry does not say: a lone sentence cannot carry it
    r"antineoplastic chemotherapy|"
    r"unspecified (site|side|part|eye|ear|limb|joint|hand|foot|region|organ|lobe|bone|type|"
    r"kidney|knee|hip|shoulder|elbow|wrist|ankle|finger|toe|breast|ovary|lung)|"
    r"or|and/or|not|no)\b",
    re.IGNORECASE,
)
_MID_UNSPEC = re.compile(r"\bunspecified\b(?!\s*$)", re.IGNORECASE)
_FEMALE = re.compile(r"\b(female|ovar\w*|uter\w*|vagin\w*|vulv\w*|cervi(x|cal uteri)|"
                     r"endometri\w*|fallopian|menstrua\w*|menopaus\w*|postmenopaus\w*|breast "
                     r"(lump|engorgement)|lactation|mammary|labia|bartholin\w*|"
                     r"dysmenorrh\w*|amenorrh\w*|oligomenorrh\w*)\b", re.IGNORECASE)
_MALE = re.compile(r"\b(male|prostat\w*|testi\w*|scrot\w*|penis|penile|epididym\w*|"
                   r"spermat\w*|seminal|vas deferens|hydrocele|orchitis|balan(itis|o\w+)|phimosis|"
                   r"paraphimosis)\b", re.IGNORECASE)
_AGE_WORDS = (
    (re.compile(r"\b(senile|age-related)\b", re.I), (60, 99)),
    (re.compile(r"\b(juvenile|childhood|infantile|of infancy|in children)\b", re.I), (1, 17)),
    (re.compile(r"\badolescent\b", re.I), (10, 19)),
    (re.compile(r"\bpostmenopausal\b", re.I), (50, 90)),
    (re.compile(r"\b(menopausal|perimenopausal)\b", re.I), (42, 60)),
    (re.compile(r"\b(adult|adult-onset)\b", re.I), (18, 94)),
)

# clinical abbreviations a note uses in place of tabular words
ABBREVIATIONS = (
    ("chronic obstructive pulmonary disease", "COPD"),
    ("gastro-esophageal reflux disease", "GERD"),
    ("urinary tract infection", "UTI"),
    ("type 2 diabetes mellitus", "T2DM"),
    ("type 1 diabetes mellitus", "T1DM"),
    ("diabetes mellitus", "DM"),
    ("hypertension", "HTN"),
    ("hypertensive", "hypertensive"),
    ("atrial fibrillation", "AFib"),
    ("rheumatoid arthritis", "RA"),
    ("osteoarthritis", "OA"),
    ("upper respiratory infection", "URI"),
    ("coronary artery disease", "CAD"),
    ("deep vein thrombosis", "DVT"),
    ("congestive heart failure", "CHF"),
    ("irritable bowel syndrome", "IBS"),
    ("benign prostatic hyperplasia", "BPH"),
    ("lower limb", "leg"),
    ("upper limb", "arm"),
    ("bilateral", "bilat"),
)
_DUE_TO = ("secondary to", "caused by", "from", "due to")


_ICD_STYLE = re.compile(r",|\(|\[|\bunspecified\b|\bwithout\b|\bother\b|\bNEC\b", re.I)


def title_style(title: str) -> bool:
    """A title in ICD style (comma, parentheses, 'unspecified', 'without', 4+ words), which a
    note must never copy verbatim; a short clinical name ("Plantar wart") is what one writes."""
    return bool(_ICD_STYLE.search(title)) or len(title.split()) >= 4


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _lower_first(text: str) -> str:
    """Lower-case the first word unless it is a name ("West Nile", "Bell's", "HIV")."""
    first, _, rest = text.partition(" ")
    if first.endswith("'s") or first[1:2].isupper() or rest[:1].isupper():
        return text
    return first[:1].lower() + first[1:] + (" " + rest if rest else "")


def rephrase(title: str) -> list[str]:
    """Clinical wordings of a tabular title (lower case), none equal to the title itself."""
    base = re.sub(r"\s*\[[^\]]*\]", "", title)
    base = re.sub(r"\s*\([^)]*\)", "", base)  # nonessential modifiers
    base = re.sub(r",\s*unspecified\s*$", "", base, flags=re.I)
    base = re.sub(r"^unspecified\s+", "", base, flags=re.I)
    base = _words(base).strip(" ,")
    if not base:
        return []
    out: list[str] = []

    def add(text: str) -> None:
        t = _words(text).strip(" ,")
        if t and t.lower() != title.lower() and t not in out:
            out.append(t)

    low = _lower_first(base)
    add(low)
    # "X of Y" -> "Y X" when Y is a short noun phrase
    m = re.match(r"^(.+?) of (?:the )?([a-z ]{3,30})$", low)
    if m and " and " not in m.group(2) and len(m.group(2).split()) <= 3:
        add(f"{m.group(2)} {m.group(1)}")
        add(f"{m.group(1)} of the {m.group(2)}")
    # "X, Y" (one qualifier) -> "Y X" and "X (Y)"
    m = re.match(r"^([^,]+), ([^,]+)$", low)
    if m:
        add(f"{m.group(2)} {m.group(1)}")
        add(f"{m.group(1)} ({m.group(2)})")
        add(f"{m.group(1)} - {m.group(2)}")
    if " due to " in low:
        for alt in _DUE_TO[:3]:
            add(low.replace(" due to ", f" {alt} ", 1))
    if " with " in low:
        add(low.replace(" with ", " w/ ", 1))
    if " without " in low:
        add(low.replace(" without ", " w/o ", 1))
    for long, short in ABBREVIATIONS:
        if long in low.lower() and short != long:
            add(re.sub(re.escape(long), short, low, flags=re.I))
    return out


def role_of(code: str) -> str:
    """test / dev (held out of train) or shared, from a SHA-256 of the code."""
    u = int.from_bytes(hashlib.sha256(f"tier2:{code}".encode()).digest()[:8], "big") / 2**64
    if u < TEST_ONLY:
        return "test"
    if u < TEST_ONLY + DEV_ONLY:
        return "dev"
    return "shared"


def partition(code: str, phrases: list[str]) -> dict[str, list[str]]:
    """Each phrasing goes to exactly one split: all to a held-out code's split, else dealt
    train, test, dev in SHA-256 order (so a code with two phrasings is in train and test)."""
    role = role_of(code)
    if role != "shared":
        return {role: list(phrases)}
    ranked = sorted(phrases, key=lambda p: hashlib.sha256(f"{code}:{p}".encode()).digest())
    out: dict[str, list[str]] = {}
    for i, p in enumerate(ranked):
        out.setdefault(("train", "test", "dev")[i % 3], []).append(p)
    return out


# Sex and age the classification itself fixes by where a code sits, when its words do not say:
# the chapter's blocks of female and male genital organs (and their neoplasms, congenital
# malformations and specimen findings), the sex-chromosome categories by phenotype, early
# (manifest before two years) vs late congenital syphilis, sexually transmitted infections,
# adult rheumatoid arthritis (M05/M06 Excludes1 juvenile, M08), the growth plate (physeal
# arrest), ovarian function cysts and degenerative arterial/spinal disease: ((first, last code
# prefix), (lowest, highest age))
_FEMALE_RANGES = (("C51", "C58"), ("D25", "D28"), ("N70", "N98"), ("Q50", "Q52"),
                  ("Q96", "Q97"), ("R87", "R87"), ("R92", "R92"))
_MALE_RANGES = (("C60", "C63"), ("D29", "D29"), ("N40", "N53"), ("Q53", "Q55"),
                ("Q98", "Q98"), ("R86", "R86"))
_AGE_RANGES = (
    (("A50.0", "A50.2"), (0, 1)), (("A50.3", "A50.7"), (2, 94)), (("A51", "A64"), (14, 94)),
    (("M05", "M06"), (18, 94)), (("M89.1", "M89.1"), (2, 17)), (("N83.0", "N83.1"), (13, 50)),
    (("M48.1", "M48.1"), (40, 94)), (("M47", "M47"), (30, 94)), (("M15", "M19"), (30, 94)),
    (("I65", "I67"), (30, 94)), (("I70", "I70"), (30, 94)),
    # substance use, eating disorders and abuse of non-dependence-producing substances: an
    # adolescent or adult's diagnoses (a young child's eating disorder is F98.2-)
    (("F10", "F19"), (13, 94)), (("F50", "F50"), (10, 94)), (("F55", "F55"), (13, 94)),
)


def _in_ranges(code: str, ranges: tuple[tuple[str, str], ...]) -> bool:
    return any(covered(code, lo.replace(".", ""), hi.replace(".", "")) for lo, hi in ranges)


def demographics(text: str, code: str = "") -> tuple[str, list[int]]:
    """(sex, [min age, max age]) the tabular words (and the code's place in the
    classification) imply; any / 0-94 when silent."""
    sex = "female" if _FEMALE.search(text) else "male" if _MALE.search(text) else "any"
    if code and _in_ranges(code, _FEMALE_RANGES):
        sex = "female"
    elif code and _in_ranges(code, _MALE_RANGES):
        sex = "male"
    age = [0, 94]
    for pat, (lo, hi) in _AGE_WORDS:
        if pat.search(text):
            age = [lo, hi]
            break
    for ranges, (lo, hi) in _AGE_RANGES:
        if code and _in_ranges(code, (ranges,)):
            age = [lo, hi]
            break
    if sex == "female" and age == [0, 94]:
        age = [14, 94]
    if sex == "male" and age == [0, 94]:
        age = [1, 94]
    return sex, age


# a condition posing a threat to life or bodily function (AMA: high-complexity problem): an office
# sees it the day it presents and sends the patient in
_SEVERE = re.compile(
    r"\b(\w*infarction|\w*embol(ism|us|ic)|hemorrhage|hemorrhagic|perforat\w*|gangrene|gangrenous|"
    r"hemoperitoneum|"
    r"necros\w*|necrotizing|sepsis|septic\w*|meningitis|encephalitis|meningoencephalitis|"
    r"encephalomyelitis|myelitis|cerebral (malaria|complications?)|torsion|detachment|"
    r"dissection|respiratory distress|respiratory failure|shock|coma|status epilepticus|"
    r"ileus|obstruction of (the )?(intestine|duodenum|bile duct)|intestinal obstruction|"
    r"intussusception|volvulus|strangulat\w*|incarcerat\w*|anaphyla\w*|ruptured aneurysm|"
    r"ketoacidosis|hyperosmolar|thrombosis|endocarditis|myocarditis|pericarditis|peritonitis|"
    r"tetanus|rabies|botulism|anthrax|plague|ebola|fulminant|eclampsia|acute kidney|"
    r"acute renal failure|acute hepatic failure|osteomyelitis|epiglottitis|"
    r"angle-closure glaucoma|central retinal artery|cardiac arrest|respiratory arrest|"
    r"brain abscess|abscess of brain|cerebral abscess|empyema|hernia with obstruction)\b",
    re.IGNORECASE)
# words that make a "severe" word describe a lasting or benign state: a scar after detachment
# surgery, the residual stage of a glaucoma, a hereditary telangiectasia, a torsion dystonia, a
# conjunctival (subconjunctival) hemorrhage, a necrotic tooth pulp or a perforated root canal
_NOT_SEVERE = re.compile(
    r"\b(chronic|late|old|sequela|sequelae|following|after|residual|scars?|hereditary|genetic|"
    r"essential|congenital|dystonia|conjunctival hemorrhage|pulp|root canal|emotional shock|"
    r"intermittent)\b", re.IGNORECASE)
# a condition that lasts (chronic, congenital, degenerative, structural): never "acute" or "new"
_CHRONIC = re.compile(
    r"\b(chronic|nodes|\w*plegia|paralysis|palsy|deformit\w*|contracture|congenital|hereditary|"
    r"familial|\w*dystroph\w*|\w*degenerat\w*|osteoarthritis|arthrosis|spondylo\w*|sclerosis|"
    r"stenosis|insufficiency|malformation|agenesis|aplasia|hypoplasia|atrophy|scar|scars|"
    r"syndrome|deficiency|myopia|glaucoma|cataract|trisomy|dementia|amyloidosis|albinism|"
    r"short stature|debility|loss of teeth|malocclusion|late|latent|in situ|benign neoplasm|"
    r"neoplasm of uncertain|nevi|nevus|polycythemia|immunodeficiency|anemia|lymphedema|"
    r"varicose|aneurysm|fibrosis|pneumoconiosis|keloid|psoriasis|endometriosis|infertility|"
    r"incontinence|prolapse|cyst|cysts|dysplasia|ankylosis|kyphosis|lordosis|scoliosis|"
    r"osteoporosis|osteopenia|hypertrophy|ectropion|entropion|ptosis|strabismus|"
    r"keratoconus|dependence|disorders? of \w+ metabolism|storage disease|\w+osis of lung|"
    r"lung disease|neuropathy|polyneuropathy|deformans|scleroderma|dermatomyositis|lupus|"
    r"hypertrichosis|fluorosis|staphyloma|synechiae|"
    r"recurrent|persistent|progressiva|progressive|tertiary|sequelae?|following|carrier|"
    r"hearing loss|deafness|elephantiasis|fibroplasia|leprosy|trachoma)\b",
    re.IGNORECASE)
_ACUTE = re.compile(r"\b(acute|acuta|subacute|intoxication|withdrawal|poisoning|transient|"
                    r"infection|infectious|abscess|cellulitis|furuncle|carbuncle)\b", re.I)
# outside the infection and symptom chapters a disease lasts unless it is one of these: an
# inflammation or infection that runs a course, a bleed, tear, rupture or stone, a burn or a
# contact rash, a postprocedural malfunction
_ACUTE_TERMS = re.compile(
    r"\b(\w*coccal|pyogenic|bacterial|viral|infective|conjunctivitis|\w*keratitis|"
    r"corneal ulcer|iridocyclitis|iritis|\w*uveitis|\w*scleritis|dacryo\w*itis|hordeolum|"
    r"otitis|myringitis|mastoiditis|labyrinthitis|salpingitis|tonsillitis|pharyngitis|"
    r"laryngitis|sinusitis|bronchitis|bronchiolitis|pneumonia|pneumonitis|lymphadenitis|"
    r"lymphangitis|mastitis|tendinitis|tenosynovitis|bursitis|synovitis|myositis|appendicitis|"
    r"cholecystitis|pancreatitis|gastroenteritis|enteritis|diverticulitis|cystitis|urethritis|"
    r"prostatitis|orchitis|epididymitis|vaginitis|vulvitis|cervicitis|endometritis|"
    r"pyelonephritis|optic neuritis|papillitis|phlebitis|thrombophlebitis|inflammation|"
    r"contact dermatitis|diaper dermatitis|dermatitis due to|urticaria|erythema multiforme|"
    r"sunburn|(?<!apocrine )miliaria|impetigo|paronychia|pyoderma(?! gangrenosum)|hyphema|"
    r"hemorrhage|hematoma|bleeding|epistaxis|tear|rupture|dislocation|sprain|foreign body|calculus|"
    r"fissure|impaction|retention|otalgia|otorrhagia|effusion|fever|febrile|syncope|"
    r"hypotension|pneumothorax|postprocedural|malfunction|complication|dilatation of stomach|"
    r"ischemia|hypopyon|\w*cyclitis|\w*neuritis|keratoconjunctivitis|periostitis|otorrhea|"
    r"hemothorax|transfusion|reaction|with partial obstruction|obstruction of gallbladder|"
    r"flail chest|fracture|allergic purpura)\b",
    re.IGNORECASE)
CHRONIC_LETTERS = frozenset("EFQ")  # endocrine/metabolic, mental and congenital chapters


def problem_kind(title: str, code: str = "", lineage: tuple[str, ...] | list[str] = ()) -> str:
    """The MDM problem kind a coder counts a tier-2 diagnosis as (AMA 2021: a chronic illness is
    expected to last a year or until death; an acute uncomplicated illness is expected to
    resolve), from its title, its chapter and its ancestors' titles (``lineage``: "Chagas'
    disease (chronic)" is said only by the category):

    * ``severe`` -- a threat to life or bodily function (hospital admission);
    * ``chronic_stable`` -- congenital, hereditary, degenerative, structural, neoplastic,
      long-standing: every disease outside the infection (A/B) and symptom (R) chapters unless
      its words make it an inflammation, infection, bleed, injury-like event or complication
      that runs a course;
    * ``acute`` -- infections and infestations (unless latent, late, tertiary, chronic),
      symptoms and findings, and those acute-course conditions.

    The note's status words follow the kind (:data:`.grammar.STATUS`), so a lifelong disease
    is never written "no complications noted" or "new, uncomplicated"."""
    lead = re.split(r"\bwithout\b", title, maxsplit=1)[0]
    if _SEVERE.search(lead) and not _NOT_SEVERE.search(title):
        return "severe"
    said_chronic = re.search(r"\bchronic\b", " ".join(lineage), re.I)
    if (said_chronic or re.search(r"\bchronic\b", title, re.I)) and not re.search(
            r"\bacute\b", title, re.I):
        return "chronic_stable"
    if _ACUTE.search(title):
        return "acute"
    if _CHRONIC.search(title) or code[:1] in CHRONIC_LETTERS:
        return "chronic_stable"
    if code[:1] == "R" and re.search(r"\bdisease\b", title, re.I):
        return "chronic_stable"
    if code[:1] in "ABR":
        return "acute"
    if _ACUTE_TERMS.search(title):
        return "acute"
    return "chronic_stable"


def lineage_titles(ref: Any, code: str) -> list[str]:
    """The titles of a code's ancestors below its chapter (subcategory, category, block)."""
    return [n["description"] for n in ref.icd10cm_ancestors(code)
            if n["code"] != code and n["kind"] != "chapter"]


# inclusion terms that are cross-references, not wording: code numbers, "classifiable to",
# "any condition in", "categories" -- a note can never say them
_CROSS_REFERENCE = re.compile(
    r"\b[A-Z]\d[0-9A-Z](\.[0-9A-Z-]+)?\b|\bclassifi(able|ed)\b|\bcategor(y|ies)\b|"
    r"\bany condition\b|\blisted (in|under)\b|\bmore than one of\b", re.IGNORECASE)


def is_cross_reference(phrase: str) -> bool:
    """A tabular term that points at codes ("any condition in I00 with myocarditis") rather
    than naming a condition a clinician writes."""
    return bool(_CROSS_REFERENCE.search(phrase))


# ---------------------------------------------------------------------------------------------
# building the pool (offline: needs the tabular XML)
# ---------------------------------------------------------------------------------------------
_NOTE_FLAGS = ("codeFirst", "useAdditionalCode", "codeAlso", "sevenChrDef")


def _parse_xml(path: Path) -> tuple[dict[str, list[str]], set[str]]:
    """code -> inclusion terms, and the codes with a code-first/use-additional/code-also or
    7th-character note at the code or an ancestor."""
    incl: dict[str, list[str]] = {}
    flagged: set[str] = set()
    stack: list[str] = []
    codes: list[str | None] = []
    flags: list[bool] = []
    text: list[str] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        stack.append(name)
        if name == "diag":
            codes.append(None)
            flags.append(bool(flags and flags[-1]))
        if name in _NOTE_FLAGS and flags:
            flags[-1] = True
        text.clear()

    def end(name: str) -> None:
        body = "".join(text).strip()
        if name == "name" and len(stack) >= 2 and stack[-2] == "diag" and codes:
            codes[-1] = body
        if (name == "note" and len(stack) >= 2 and stack[-2] == "inclusionTerm" and codes
                and codes[-1]):
            incl.setdefault(codes[-1], []).append(body)
        if name == "diag":
            code = codes.pop()
            if flags.pop() and code:
                flagged.add(code)
        stack.pop()
        text.clear()

    def chars(data: str) -> None:
        text.append(data)

    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    with open(path, "rb") as fh:
        parser.ParseFile(fh)
    return incl, flagged


def flagged_code(code: str, flagged: set[str]) -> bool:
    """Whether ``code`` or a code it extends carries a note in the XML. A 7th-character code
    (R40.2412) is not a ``<diag>`` of the XML but comes from the code list, so the notes on its
    parents (R40.24's 7th characters, R40.2's code-first) are found by its prefixes."""
    return any(code[:n].rstrip(".") in flagged for n in range(len(code), 2, -1))


# codes never listed first, whatever their own tabular entry says: the coma scale (I.C.18.e:
# sequenced after the diagnosis; its 7th characters mean "at arrival to the ED / at hospital
# admission"), the hypoglycemia level (E16.0-E16.2 and E1x.64- "use additional code for
# hypoglycemia level (E16.A-)"), cause of mortality (a living office patient), excessive
# crying of an infant (a symptom of age under one that the pool's age gate cannot hold)
NEVER_FIRST = ("R40.2", "E16.A", "R99", "R68.11")

# ICD-10-CM Index "Diabetes, with" subterms (the 'with' convention, I.A.15): beside a diabetes
# row these are coded as the combination (foot/skin ulcer E1x.621/.622 + L97/L98.4-/L98.A-,
# mononeuropathy .41, polyneuropathy .42, autonomic neuropathy / gastroparesis .43, angiopathy
# .51, Charcot joint .610, periodontal disease .630, osteomyelitis .69, cataract .36,
# retinopathy .31-, nephrosis .21, CKD .22), so a tier-2 case with one never draws diabetes
DIABETES_WITH = ("L97", "L98.4", "L98.A", "G56", "G57", "G58", "G59", "G62.9", "G63", "G90.0",
                 "G99.0", "K31.84", "I70.2", "I73.9", "M14.6", "K05", "M86", "H25", "H26",
                 "H28", "H35.0", "N04", "N08", "N18")


def diabetes_linked(code: str) -> bool:
    """A code the 'with' convention joins to diabetes (:data:`DIABETES_WITH`)."""
    return code.startswith(DIABETES_WITH)


# tier-2 categories that code a disease a catalog row also codes, by that row's clash group:
# rheumatoid arthritis with rheumatoid factor (M05), other (M06) and juvenile (M08) are one
# disease, so a tier-2 M05.312 beside the catalog's M06.9 would code it twice
SAME_DISEASE = (("ra", ("M05", "M06", "M08")),)


def clash_groups(code: str) -> list[str]:
    """The catalog clash groups a tier-2 code joins: ``dm`` for a code the diabetes 'with'
    convention links, and the group of a catalog row coding the same disease."""
    out = ["dm"] if diabetes_linked(code) else []
    return out + [group for group, prefixes in SAME_DISEASE if code.startswith(prefixes)]


def _xml_path() -> Path:
    found = sorted(RAW_TABULAR.glob("icd10c*-tabular-*.xml")) if RAW_TABULAR.is_dir() else []
    if not found:
        raise FileNotFoundError(f"no ICD-10-CM tabular XML under {RAW_TABULAR}")
    return found[-1]


def build(ref: Any, xml_path: Path | None = None) -> dict[str, Any]:
    """The tier-2 pool from the bundle's ``icd10cm`` table and the tabular XML's notes."""
    path = xml_path or _xml_path()
    incl, flagged = _parse_xml(path)
    curated = {c.split(".")[0] for c in load_catalog().all_icd10_codes()}
    table = ref.table("icd10cm")
    cols = {c: table.column(c).to_pylist() for c in ("code", "description", "billable")}
    titles = dict(zip(cols["code"], cols["description"], strict=True))
    entries = []
    for code, title, billable in zip(cols["code"], cols["description"], cols["billable"],
                                     strict=True):
        if not billable or code[0] not in ALLOWED_LETTERS or flagged_code(code, flagged):
            continue
        if code.startswith(NEVER_FIRST):
            continue
        if code.split(".")[0] in curated or ref.icd10cm(code) is None:
            continue
        lineage = [n["description"] for n in ref.icd10cm_ancestors(code)]
        if any(re.search(r"classified elsewhere", t, re.I) for t in lineage + [title]):
            continue
        if _SKIP_TITLE.search(title) or _MID_UNSPEC.search(title) or title.count(",") > 1:
            continue
        if len(title) > 80:
            continue
        phrases = rephrase(title)
        for term in incl.get(code, []):
            if term.lower() == title.lower() or _SKIP_TITLE.search(term) or "," in term:
                continue
            t = re.sub(r"\s*\([^)]*\)|\s*\bNOS\b", "", term).strip()
            t = _lower_first(t)
            if t and t.lower() not in (p.lower() for p in phrases) and \
                    t.lower() != title.lower():
                phrases.append(t)
        if title_style(title):
            phrases = [p for p in phrases if title.lower() not in p.lower()]
        phrases = [p for p in phrases if not is_cross_reference(p)]
        if not phrases:
            continue
        above = lineage_titles(ref, code)
        sex, age = demographics(" ".join([title, *above]), code)
        entries.append({
            "code": code,
            "title": title,
            "kind": problem_kind(title, code, above),
            "sex": sex,
            "age": age,
            "phrases": partition(code, phrases),
            "excludes1": _refs_list(ref, code),
        })
    curated_codes = sorted(load_catalog().all_icd10_codes())
    return {"source": {"reference_release": ref.release, "tabular": path.name,
                       "titles_checked": len(titles)},
            "codes": entries,
            # Excludes1 references of every curated code, so building a case never walks the
            # tabular tree
            "curated_excludes1": {c: _refs_list(ref, c) for c in curated_codes
                                  if ref.icd10cm(c) is not None}}


def _refs_list(ref: Any, code: str) -> list[list[str]]:
    return [list(x) for x in sorted(set(excluded_refs(ref, code)))]


def write(ref: Any, path: Path = TIER2_FILE) -> int:
    pool = build(ref)
    path.write_text(json.dumps(pool, indent=0, ensure_ascii=False, sort_keys=True) + "\n",
                    encoding="utf-8")
    return len(pool["codes"])


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The committed pool, indexed by split: split -> [(entry, phrases in that split)]."""
    data = json.loads(TIER2_FILE.read_text(encoding="utf-8"))
    by_split: dict[str, list[tuple[dict[str, Any], list[str]]]] = {s: [] for s in SPLIT_NAMES}
    for e in data["codes"]:
        for split, phrases in e["phrases"].items():
            by_split[split].append((e, phrases))
    excludes = {c: [tuple(x) for x in refs] for c, refs in data["curated_excludes1"].items()}
    excludes.update({e["code"]: [tuple(x) for x in e["excludes1"]] for e in data["codes"]})
    return {"codes": data["codes"], "by_split": by_split, "excludes1": excludes}


def problems(ref: Any) -> list[str]:
    """What is wrong with the committed pool against ``ref`` ([] when every entry holds)."""
    out = []
    curated = {c.split(".")[0] for c in load_catalog().all_icd10_codes()}
    seen: set[str] = set()
    for e in load()["codes"]:
        code = e["code"]
        node = ref.icd10cm(code)
        if node is None or not node["billable"]:
            out.append(f"tier2 {code}: not a billable code in {ref.release}")
            continue
        if node["description"] != e["title"]:
            out.append(f"tier2 {code}: title differs from the bundle")
        if code.split(".")[0] in curated:
            out.append(f"tier2 {code}: category is in the curated catalog")
        phrases = [p for ps in e["phrases"].values() for p in ps]
        if len(set(phrases)) != len(phrases):
            out.append(f"tier2 {code}: a phrasing is in two splits")
        if any(p.lower() == e["title"].lower() or (
                title_style(e["title"]) and e["title"].lower() in p.lower()) for p in phrases):
            out.append(f"tier2 {code}: the title is used verbatim")
        if any(is_cross_reference(p) for p in phrases):
            out.append(f"tier2 {code}: a phrasing is a cross-reference, not wording")
        if e["kind"] != problem_kind(e["title"], code, lineage_titles(ref, code)):
            out.append(f"tier2 {code}: problem kind differs from its title's")
        if role_of(code) != "shared" and "train" in e["phrases"]:
            out.append(f"tier2 {code}: held-out code has train phrasings")
        if [tuple(x) for x in e["excludes1"]] != sorted(set(excluded_refs(ref, code))):
            out.append(f"tier2 {code}: Excludes1 references differ from the bundle")
        if code.startswith(NEVER_FIRST):
            out.append(f"tier2 {code}: never a first-listed code")
        if code in seen:
            out.append(f"tier2 {code}: duplicate")
        seen.add(code)
    return out


_PAREN = re.compile(r"\(([^)]*)\)")
_REF = re.compile(r"\b([A-Z]\d[0-9A-Z](?:\.[0-9A-Z]{1,4})?)(?:\.?-)?"
                  r"(?:\s*-\s*([A-Z]\d[0-9A-Z](?:\.[0-9A-Z]{1,4})?))?")


def excluded_refs(ref: Any, code: str) -> list[tuple[str, str]]:
    """(low, high) code references of the Excludes1 notes at ``code`` and its ancestors; a
    single reference ``J44.-`` is (J44, J44), a range ``E10-E13`` is (E10, E13)."""
    out = []
    nodes = [*ref.icd10cm_ancestors(code)]
    own = ref.icd10cm(code)
    if own is not None:
        nodes.append(own)
    for node in nodes:
        for line in (node.get("excludes1") or "").split("\n"):
            for paren in _PAREN.findall(line):
                for m in _REF.finditer(paren):
                    lo = m.group(1).replace(".", "")
                    hi = (m.group(2) or m.group(1)).replace(".", "")
                    out.append((lo, hi))
    return out


def covered(code: str, lo: str, hi: str) -> bool:
    c = code.replace(".", "")
    if lo == hi:
        return c.startswith(lo)
    n = min(len(lo), len(hi))
    return lo[:n] <= c[:n] <= hi[:n]


def excludes1_conflict(ref: Any, a: str, b: str) -> bool:
    """True when an Excludes1 note at ``a`` (or an ancestor) names ``b``, or the reverse: the
    two may not be reported together."""
    return any(covered(b, lo, hi) for lo, hi in excluded_refs(ref, a)) or any(
        covered(a, lo, hi) for lo, hi in excluded_refs(ref, b))


if __name__ == "__main__":  # rebuild catalog/tier2.json
    from ...reference import open_reference

    n = write(open_reference())
    print(f"wrote {n} tier-2 codes to {TIER2_FILE}", file=sys.stderr)
