"""A non-privileged keyword baseline for the ``medical_coding`` arena.

``HeuristicAgent`` reads only what the environment shows (the note, age and sex) and the public
code-set descriptions of the reference bundle, searched with the same functions the lookup actions
use (:mod:`.search`, called directly so they cost no budget). It never sees the authored catalog,
the note generator's data or the expected codes.

How it codes a note:

* split the note into its sections (CC, HPI, PMH, Meds, ROS, Exam, Assessment, Plan);
* cut the assessment into problem phrases; drop negated ("no ...", "denies ...") and uncertain
  ("probable", "rule out", ...) phrases; an uncertain diagnosis sends the coder back to the chief
  complaint and the positive symptoms of the HPI instead;
* expand a short list of common clinical abbreviations, rewrite history-of phrases as
  "personal history of ...", turn a medication-only mention into "long term use of ...";
* search the ICD-10-CM descriptions for each phrase and keep the best billable hit by token
  overlap, laterality agreement and a small penalty for unrequested specificity;
* the problem that best matches the chief complaint (and is not a past-history entry) is the
  primary diagnosis, the others are secondary;
* CPT: an office E/M from the MDM elements the note documents (problem status words, tests and
  records reviewed or ordered, independent historian/interpretation, discussion, the management
  decision) by the AMA 2021 2-of-3 table, or from the stated minutes when higher; preventive codes
  by age for a wellness visit, and a CPT description search for each procedure in the plan with
  RT/LT/50 from the side it names and modifier 25 on an E/M billed with a procedure.

It misses what keyword matching cannot see: combination codes (diabetes *with* CKD, hypertension
*with* heart failure), 7th characters and external-cause codes of injuries, most status/drug codes,
laceration-repair sizes and several procedure codes whose CMS descriptors share no words with the
note. That makes it a floor well above random and well below the oracle, lower on hard notes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from . import em, grammar
from .search import search_cpt, search_icd10, tokens

# -- note structure ----------------------------------------------------------------------------
_HEADERS = {
    "cc": ("cc", "chief complaint", "reason for visit"),
    "hpi": ("hpi", "history of present illness", "history"),
    "pmh": ("pmh", "past medical history", "medical history"),
    "meds": ("meds", "medications", "current medications"),
    "sh": ("sh", "social history", "social"),
    "ros": ("ros", "review of systems", "pertinent ros"),
    "exam": ("exam", "physical exam", "pe", "objective"),
    "assessment": ("assessment", "a", "impression", "diagnoses"),
    "plan": ("plan", "p", "plan/procedures"),
    "payer": ("insurance", "payer", "coverage"),
}
_HEADER_OF = {h: key for key, names in _HEADERS.items() for h in names}
_HEADER_RE = re.compile(
    r"^\s*("
    + "|".join(re.escape(h) for h in sorted(_HEADER_OF, key=len, reverse=True))
    + r")\s*:\s*",
    re.IGNORECASE,
)

# -- a small, generic clinical abbreviation / synonym list -------------------------------------
_ABBREV = [
    (r"\bhtn\b|\bhigh blood pressure\b", "hypertension"),
    (r"\bt2dm\b|\bdm2\b|\bdm ii\b|\btype ii diabetes\b|\bniddm\b", "type 2 diabetes mellitus"),
    (r"\bt1dm\b|\bdm1\b|\biddm\b", "type 1 diabetes mellitus"),
    (r"\bgerd\b|\bacid reflux\b", "gastro-esophageal reflux disease"),
    (r"\bckd\b", "chronic kidney disease"),
    (r"\besrd\b", "end stage renal disease"),
    (r"\bcopd\b", "chronic obstructive pulmonary disease"),
    (r"\baom\b", "acute otitis media"),
    (r"\buri\b", "acute upper respiratory infection"),
    (r"\buti\b", "urinary tract infection"),
    (r"\bchf\b", "congestive heart failure"),
    (r"\bhfpef\b", "diastolic heart failure"),
    (r"\bhfref\b", "systolic heart failure"),
    (r"\boa\b", "osteoarthritis"),
    (r"\bra\b", "rheumatoid arthritis"),
    (r"\bcad\b|\bascvd\b", "atherosclerotic heart disease coronary artery"),
    (r"\bhld\b", "hyperlipidemia"),
    (r"\bosa\b", "obstructive sleep apnea"),
    (r"\bbph\b", "benign prostatic hyperplasia"),
    (r"\bafib\b|\ba-fib\b|\baf\b", "atrial fibrillation"),
    (r"\bmdd\b", "major depressive disorder"),
    (r"\bgad\b", "generalized anxiety disorder"),
    (r"\bpre-?diabetes\b", "prediabetes"),
    (r"\bcts\b", "carpal tunnel syndrome"),
    (r"\bad\b", "atopic dermatitis"),
    (r"\bar\b", "allergic rhinitis"),
    (r"\bchickenpox\b", "varicella"),
    (r"\bbppv\b", "benign paroxysmal vertigo"),
    (r"\bha\b", "headache"),
    (r"\bsob\b", "shortness of breath"),
    (r"\blbp\b", "low back pain"),
    (r"\bn/v\b", "nausea vomiting"),
    (r"\bfx\b", "fracture"),
    (r"\blac\b", "laceration"),
    (r"\btemperature elevation\b|\bfebrile\b", "fever"),
    (r"\bwcc\b|\bwell[- ]child (check|visit|exam)\b", "routine child health examination"),
    (r"\bingrown\b", "ingrowing"),
    (r"\btoenail\b|\bfingernail\b", "nail"),
    (r"\bonychocryptosis\b", "ingrowing nail"),
    (r"\bgluteal\b", "buttock"),
    (r"\b(leg|thigh|calf)\b", "lower limb"),
    (r"\b(arm|forearm)\b", "upper limb"),
    (r"\bbilat\b|\bboth\b", "bilateral"),
    (r"\br\b", "right"),
    (r"\bl\b", "left"),
    (r"\bright-sided\b", "right"),
    (r"\bleft-sided\b", "left"),
]
_ABBREV_RE = [(re.compile(p, re.IGNORECASE), r) for p, r in _ABBREV]

_NEGATION = re.compile(r"^\s*(no|denies|negative for|without evidence of|not)\b", re.IGNORECASE)
_UNCERTAIN = re.compile(
    r"\b(probable|probably|suspected|suspect|suspicion|rule out|r/o|questionable|possible|"
    r"possibly|likely|presumed|concern for|versus|vs\.?|cannot exclude)\b",
    re.IGNORECASE,
)
_HISTORY = re.compile(r"^\s*(history of|hx of|h/o|s/p|status post)\b", re.IGNORECASE)
_FORMER_SMOKER = re.compile(r"\b(former|ex-?)\s*smoker\b|\bquit smoking\b", re.IGNORECASE)
_WELLNESS = re.compile(
    r"\b(annual|yearly|wellness|well[- ]child|well visit|physical exam(ination)?|annual physical|"
    r"check-?up|preventive|wcc|routine [a-z ]{0,20}(exam|check))",
    re.IGNORECASE,
)
_VACCINE = re.compile(r"\b(vaccin\w*|immuniz\w*|flu shot)\b", re.IGNORECASE)
_NEW_PATIENT = re.compile(r"\bnew (patient|pt|to (the|our) (practice|clinic))\b", re.IGNORECASE)
_MINUTES = re.compile(r"(\d+)\s*(?:minutes|mins?)\b", re.IGNORECASE)
_MDM = re.compile(
    r"\b(reviewed|ordered|labs ordered|will obtain|independent|discussed|rx|prescription|otc|"
    r"elective|over-the-counter|admission|emergency surgery|supportive care|watchful waiting|"
    r"recommend)\b",
    re.IGNORECASE,
)
# MDM elements as notes document them (AMA 2021 table, see .em)
_STATUS = [
    (re.compile(r"\b(severe exacerbation|threat to (life|bodily))\b", re.I), "severe"),
    (re.compile(r"\b(uncertain prognosis|prognosis uncertain|undiagnosed)\b", re.I),
     "undiagnosed"),
    (re.compile(r"\b(worsening|progressing|flaring|exacerbation)\b", re.I),
     "chronic_exacerbation"),
    (re.compile(r"\bsystemic\b", re.I), "acute_systemic"),
    (re.compile(r"\b(stable|unchanged|at goal)\b", re.I), "chronic_stable"),
    (re.compile(r"\b(self-limit\w*|minor)\b", re.I), "minor"),
]
# chronic diseases one assessment line may name together (hypertensive heart/kidney disease,
# diabetic CKD): the AMA table counts each chronic illness
_CHRONIC_DISEASES = [re.compile(p, re.I) for p in (
    r"\b(hypertension|HTN)\b",
    r"\b(CKD|ESRD|chronic kidney disease|end-stage renal disease|diabetic kidney disease)\b",
    r"\b(heart failure|HFrEF|HFpEF|CHF)\b",
    r"\b(diabetes|T2DM|T1DM|DM)\b",
)]
_STATUS_TAIL = re.compile(
    r"\s*(?:,|-|\()\s*(?:" + "|".join(re.escape(w) for w in grammar.STATUS_WORDS)
    + r")\)?\s*$",
    re.I,
)
_RECORDS = re.compile(r"\b(records? from|note from|outside records)\b", re.I)
_REVIEWED = re.compile(r"(?:reviewed prior results|results reviewed)\s*:\s*([^.]*)|"
                       r"\bprior ([^.(]*?)\s*\(", re.I)
_ORDERED = re.compile(r"(?:\bordered|(?:labs|tests) ordered\s*:|will obtain)\s+([^.]*)", re.I)
_HISTORIAN = re.compile(r"\bindependent historian\b", re.I)
_INTERPRETATION = re.compile(r"\bindependent(?:ly reviewed| interpretation)\b", re.I)
_DISCUSSION = re.compile(r"\b(discussed management|case discussed) (by phone )?with\b", re.I)
_RISK = [
    (re.compile(r"\badmission\b|\bemergency surgery\b", re.I), 3),
    (re.compile(r"\b(rx|prescription|elective surg\w*)\b", re.I), 2),
    (re.compile(r"\b(otc|over-the-counter)\b", re.I), 1),
]
_QUALIFIER = re.compile(
    r"\s*\b(confirmed|diagnosed|per|since|yesterday|today|seen at|at urgent care|on exam)\b.*$",
    re.IGNORECASE,
)
_SIDE = re.compile(r"\b(right|left|bilateral|both|bilat)\b", re.IGNORECASE)

# Preventive medicine codes by age band (new 9938x, established 9939x).
_PREVENTIVE_AGES = ((1, 1), (5, 2), (12, 3), (18, 4), (40, 5), (65, 6), (200, 7))

# Plan vocabulary -> a query in the CMS short-descriptor style, and whether the code is a
# procedure that makes a same-day E/M need modifier 25 (tests and vaccines do not).
_PROCEDURES = [
    (
        r"\b(joint|knee|shoulder|hip|bursa)\b.*\b(inject\w*)\b|\binject\w*\b.*\b(knee|shoulder|hip|"
        r"joint|bursa)",
        "drain inj joint bursa w/o us",
        True,
    ),
    (r"\btendon sheath\b|\binject\w* .*\bfinger\b", "njx tendon sheath ligament", True),
    (r"\b(cerumen|ear wax|wax|impaction)\b", "remove impacted ear wax", True),
    (r"\bwarts?\b", "destruction b9 les", True),
    (
        r"\bactinic|keratos[ie]s\b.*\b(destr|cryo|liquid nitrogen)|\bpremalignant\b",
        "destruct premalg lesion",
        True,
    ),
    (r"\bskin tags?\b", "rmvl skin tags", True),
    (r"\bshave biopsy\b|\btangential biopsy\b", "tangntl bx skin single les", True),
    (r"\bpunch biopsy\b", "punch bx skin single lesion", True),
    (r"\bnail\b.*\b(avulsion|remov\w*)|\bavulsion\b", "avulsion nail plate simple", True),
    (r"\bi&d\b|\bincision and drainage\b", "i&d abscess simple", True),
    (r"\biud\b|\bintrauterine\b", "insert intrauterine device", True),
    (r"\bstrep\b", "strep a assay w/optic", False),
    (r"\b(influenza|flu)\b.*\b(swab|antigen|test|assay)\b", "influenza assay w/optic", False),
    (r"\burine dip|\bua dip|\burinalysis\b", "urinalysis nonauto w/o scope", False),
    (r"\b(ecg|ekg|electrocardiogram)\b", "electrocardiogram complete", False),
    (r"\bsplint\b", "splint", True),
    (r"\bstrapping\b", "strapping", True),
    (
        r"\b(face|facial|forehead|cheek|lip|nose|ear|eyelid|chin)\b.*\b(sutures?|repair|closed)\b",
        "rpr f/e/e/n/l/m",
        True,
    ),
    (r"\b(sutures?|repair|laceration|wound closed)\b", "rpr s/n/ax/gen/trnk", True),
    (
        r"\b(im|intramuscular)\b.*\b(injection|given)\b|\binjection\b.*\b(im|intramuscular)\b",
        "ther proph diag inj sc im",
        False,
    ),
]
_PROCEDURES_RE = [(re.compile(p, re.IGNORECASE), q, m25) for p, q, m25 in _PROCEDURES]
_SIDE_MOD = {"right": "RT", "left": "LT", "bilateral": "50", "both": "50", "bilat": "50"}
_SIDES = ("right", "left", "bilateral")
_STOP_EXTRA = frozenset(("chronic", "acute", "disease", "disorder", "encounter", "stage"))


def _get(observation: Any, key: str, default: Any = None) -> Any:
    if isinstance(observation, dict):
        return observation.get(key, default)
    return getattr(observation, key, default)


def _sections(note: str) -> dict[str, str]:
    out: dict[str, str] = {}
    current = "preamble"
    for line in note.splitlines():
        m = _HEADER_RE.match(line)
        if m:
            current = _HEADER_OF[m.group(1).lower()]
            line = line[m.end() :]
        out[current] = (out.get(current, "") + "\n" + line).strip()
    return out


def _problems(text: str) -> list[str]:
    """The assessment as a list of problem phrases (bullets, numbers or semicolons)."""
    text = text.strip()
    if not text:
        return []
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if any(ln.startswith(("-", "*", "•")) for ln in lines):
        parts = [ln.lstrip("-*• ").strip() for ln in lines]
    elif re.match(r"^\d+[.)]\s", text):
        parts = re.split(r"(?:^|\s)\d+[.)]\s+", text)
    else:
        parts = re.split(r";\s*", text)
    return [p.strip().rstrip(".").strip() for p in parts if p.strip().rstrip(".").strip()]


def _split_list(text: str) -> list[str]:
    text = re.sub(r"\bnausea and vomiting\b", "nausea with vomiting", text, flags=re.IGNORECASE)
    parts = re.split(r";\s*|,\s*(?:and\s+)?|\s+and\s+(?=[a-z])", text.strip().rstrip("."))
    return [p.strip() for p in parts if p.strip()]


def _expand(phrase: str) -> str:
    out = phrase
    for pat, repl in _ABBREV_RE:
        out = pat.sub(repl, out)
    return out


def _words(text: str) -> set[str]:
    return set(tokens(_expand(text)))


class HeuristicAgent:
    """Keyword/synonym matching over the ICD-10-CM and CPT descriptions; one submission a note."""

    name = "heuristic"

    def __init__(self, reference: Any = None, bundle_dir: str | None = None) -> None:
        self._reference = reference
        self._bundle_dir = bundle_dir
        self._idf: dict[str, float] | None = None

    # -- agent API --------------------------------------------------------------------------
    def reset(self, observation: Any) -> None:
        """Nothing carries over between notes; each note is coded on its own."""

    def act(self, observation: Any) -> dict[str, Any]:
        note = _get(observation, "clinical_note", "") or ""
        age = _get(observation, "patient_age")
        try:
            params = self.code_note(note, age if isinstance(age, int) else None)
        except Exception:  # never let a parse problem end the episode without a submission
            params = {"primary_icd10": "", "secondary_icd10s": [], "cpt_codes": []}
        return {"action_type": "submit_codes", "parameters": params}

    # -- reference --------------------------------------------------------------------------
    @property
    def reference(self) -> Any:
        if self._reference is None:
            from ...reference import open_reference

            self._reference = open_reference(self._bundle_dir)
        return self._reference

    def _token_idf(self) -> dict[str, float]:
        if self._idf is None:
            descs = self.reference.table("icd10cm").column("description").to_pylist()
            df: Counter[str] = Counter()
            for d in descs:
                df.update(set(tokens(d)))
            n = max(1, len(descs))
            self._idf = {t: math.log(1 + n / c) for t, c in df.items()}
        return self._idf

    # -- ICD-10-CM --------------------------------------------------------------------------
    def best_icd10(self, phrase: str) -> str | None:
        query = _expand(_QUALIFIER.sub("", phrase) or phrase)
        q = tokens(query)
        if not q:
            return None
        # external-cause codes (V00-Y99) are never what a problem phrase names
        hits = [
            h
            for h in search_icd10(self.reference, query, 40)
            if h["billable"] and h["code"][:1] not in "VWXY"
        ]
        if not hits:
            return None
        idf = self._token_idf()
        qset = set(q)
        q_sides = {s for s in _SIDES if s in qset}
        best, best_score = None, -math.inf
        for rank, h in enumerate(hits):
            d = tokens(h["description"])
            dset = set(d)
            matched = sum(
                idf.get(t, 1.0)
                for t in qset
                if t in dset or any(x.startswith(t[:5]) for x in dset if len(t) >= 5)
            )
            extra = [
                t
                for t in dset
                if t not in qset and not any(t.startswith(x[:5]) for x in qset if len(x) >= 5)
            ]
            score = matched - 0.6 * len(extra) - 0.01 * rank
            d_sides = {s for s in _SIDES if s in dset}
            if q_sides and d_sides and not (q_sides & d_sides):
                score -= 6.0
            elif d_sides and not q_sides:
                score -= 1.5
            for word in ("sequela", "subsequent", "recurrent", "intractable"):
                if word in dset and word not in qset:
                    score -= 2.0
            q_low, d_low = query.lower(), h["description"].lower()
            if re.search(r"\bwith(out)?\b", q_low) and ("without" in q_low) != ("without" in d_low):
                score -= 1.0
            if score > best_score:
                best, best_score = h["code"], score
        return best

    # -- the note ---------------------------------------------------------------------------
    def code_note(self, note: str, age: int | None) -> dict[str, Any]:
        sec = _sections(note)
        cc = sec.get("cc", "")
        hpi = sec.get("hpi", "")
        plan = sec.get("plan", "")
        meds = [m for m in re.split(r";\s*", sec.get("meds", "").rstrip(".")) if m.strip()]
        pmh_words = _words(sec.get("pmh", ""))
        problems = _problems(sec.get("assessment", "")) or ([cc] if cc else [])
        preventive = bool(_WELLNESS.search(cc) or any(_WELLNESS.search(p) for p in problems))

        phrases: list[str] = []  # problem phrases, in note order
        status: list[str] = []  # medication / status phrases
        uncertain = False
        for raw in problems:
            p = _STATUS_TAIL.sub("", raw)
            for paren in re.findall(r"\(([^)]*)\)", raw):
                if any(paren.strip().lower() == m.strip().lower() for m in meds):
                    status.append(paren)
                    p = p.replace(f"({paren})", "").strip()
            if _NEGATION.match(p):
                continue
            if _UNCERTAIN.search(p):
                uncertain = True
                continue
            phrases.append(p)
        for m in meds:
            if m not in status:
                status.append(m)

        primary_phrase: str | None = None
        if preventive:
            abnormal = any("abnormal" in p.lower() for p in problems)
            primary_phrase = (
                "encounter for general adult medical examination"
                if age is None or age >= 18
                else "encounter for routine child health examination"
            )
            primary_phrase += (
                " with abnormal findings" if abnormal else " without abnormal findings"
            )
            phrases = [p for p in phrases if not _WELLNESS.search(p)]
        elif uncertain:
            primary_phrase = re.sub(r"^(acute|new|worsening)\s+", "", cc) if cc else None
            m = re.search(
                r"\b(?:reports|endorses|positive for|complains of)\s+([^.]*)", hpi, re.IGNORECASE
            )
            if m:
                phrases = _split_list(m.group(1)) + phrases
        else:
            primary_phrase = self._primary(phrases, cc, pmh_words)
            if primary_phrase is not None:
                phrases = [p for p in phrases if p is not primary_phrase]

        codes: list[str] = []
        if primary_phrase:
            code = self.best_icd10(self._rewrite(primary_phrase))
            if code:
                codes.append(code)
        for p in phrases:
            code = self.best_icd10(self._rewrite(p))
            if code and code not in codes:
                codes.append(code)
        for s in status:
            code = self.best_icd10("long term current use of " + s)
            if code and code.startswith("Z79") and code not in codes:
                codes.append(code)
        return {
            "primary_icd10": codes[0] if codes else "",
            "secondary_icd10s": codes[1:],
            "cpt_codes": self._cpt(note, plan, age, preventive),
        }

    @staticmethod
    def _rewrite(phrase: str) -> str:
        p = re.sub(r",\s*(no|not|without|denies)\b.*$", "", phrase, flags=re.IGNORECASE)
        if _FORMER_SMOKER.search(p):
            return "personal history of nicotine dependence"
        if _VACCINE.search(p):
            return "encounter for immunization"
        if _HISTORY.search(p):
            p = "personal history of " + _HISTORY.split(p, maxsplit=1)[-1].split(",")[0]
        return p

    @staticmethod
    def _primary(phrases: list[str], cc: str, pmh_words: set[str]) -> str | None:
        if not phrases:
            return None
        cc_words = _words(cc) - {"follow", "up", "visit", "procedure", "scheduled", "here"}

        def key(item: tuple[int, str]) -> tuple[int, float, int, int]:
            i, p = item
            w = _words(p)
            overlap = len(w & cc_words) + 0.5 * sum(
                1
                for a in w
                for b in cc_words
                if a != b and len(a) >= 4 and (a.startswith(b[:4]) or b.startswith(a[:4]))
            )
            in_pmh = int(bool(w) and w <= pmh_words)
            past = int(bool(_HISTORY.search(p) or _FORMER_SMOKER.search(p)))
            return (past, -overlap, in_pmh, i)

        return min(enumerate(phrases), key=key)[1]

    # -- CPT --------------------------------------------------------------------------------
    def _cpt(self, note: str, plan: str, age: int | None, preventive: bool) -> list[str]:
        new = bool(_NEW_PATIENT.search(note))
        medicare = bool(re.search(r"^(insurance|payer|coverage):.*\bmedicare\b", note,
                                  re.IGNORECASE | re.MULTILINE))
        procedures: list[tuple[str, bool]] = []
        for sentence in re.split(r"(?<=\.)\s+", plan):
            s = sentence.strip()
            if not s or "also evaluated" in s.lower() or _MINUTES.search(s) or _MDM.search(s):
                continue
            if _VACCINE.search(s):
                if re.search(r"\b(influenza|flu|iiv\d?)\b", s, re.IGNORECASE):
                    query = "iiv3 vacc no prsv 0.5 ml im"
                elif medicare:
                    query = "admin influenza virus vac"
                else:
                    query = "immunization admin"
                hits = search_cpt(self.reference, query, 1)
                if hits:
                    # NCCI pairs 90471 with the preventive visit (modifier 25); G0008 is unpaired
                    procedures.append((hits[0]["code"], hits[0]["code"] == "90471"))
                continue
            for pat, query, needs_25 in _PROCEDURES_RE:
                if not pat.search(s):
                    continue
                hits = search_cpt(self.reference, query, 1)
                if hits:
                    code = hits[0]["code"]
                    side = _SIDE.search(s) if needs_25 else None
                    if side:
                        code = f"{code}-{_SIDE_MOD[side.group(1).lower()]}"
                    procedures.append((code, needs_25))
                break
        out: list[str] = []
        if preventive:
            band = next(
                (i for top, i in _PREVENTIVE_AGES if (age if age is not None else 40) < top), 7
            )
            prev = f"99{'38' if new else '39'}{band}"
            out.append(prev + ("-25" if any(m25 for _, m25 in procedures) else ""))
        else:
            visit = self._em(_sections(note), new) if not self._procedure_only(plan) else None
            if visit and any(m25 for _, m25 in procedures):
                visit += "-25"
            if visit or not procedures:
                out.append(visit or ("99203" if new else "99213"))
        for code, _ in procedures:
            if code not in out:
                out.append(code)
        return out

    @staticmethod
    def _procedure_only(plan: str) -> bool:
        """A plan with no MDM element and no time documents no E/M (procedure-only visit)."""
        return not (_MDM.search(plan) or _MINUTES.search(plan))

    @staticmethod
    def _em(sec: dict[str, str], new: bool) -> str | None:
        """Office E/M level from the MDM elements the note documents (2 of 3), or total time
        when that is higher -- read with keyword rules, never from a stated level."""
        plan = sec.get("plan", "")
        text = " ".join(sec.get(k, "") for k in ("hpi", "plan"))
        kinds = []
        for phrase in _problems(sec.get("assessment", "")):
            kind = _problem_kind(phrase)
            kinds.append(kind)
            if kind == "chronic_stable":  # "HTN; ESRD on HD, stable": each disease counts
                kinds += [kind] * max(0, sum(1 for d in _CHRONIC_DISEASES if d.search(phrase)) - 1)
        data = em.Data(
            external_notes=len(_RECORDS.findall(text)),
            results_reviewed=_count_listed(_REVIEWED, plan),
            tests_ordered=_count_listed(_ORDERED, plan),
            independent_historian=bool(_HISTORIAN.search(text)),
            independent_interpretation=bool(_INTERPRETATION.search(plan)),
            discussion_external=bool(_DISCUSSION.search(plan)),
        )
        risk = next((lv for pat, lv in _RISK if pat.search(plan)), 0)
        level = em.em_level_from_mdm(
            em.mdm_level(em.problems_level(kinds), em.data_level(data), risk)
        )
        m = _MINUTES.search(plan)
        if m:
            level = max(level, em.em_level_from_time(int(m.group(1)), new) or 2)
        return em.em_code(level, new)


def _problem_kind(phrase: str) -> str:
    """The MDM problem kind an assessment line's status words give (acute when silent)."""
    if _NEGATION.match(phrase) or _HISTORY.search(phrase):
        return "history"
    for pat, kind in _STATUS:
        if pat.search(phrase):
            return kind
    return "acute"


def _count_listed(pattern: re.Pattern[str], text: str) -> int:
    """How many unique tests a "Reviewed ...: A, B" / "Ordered A and B" sentence names."""
    n = 0
    for m in pattern.finditer(text):
        listed = next((g for g in m.groups() if g), "")
        body = re.split(r"\s+(?:from|last|\(|sent|drawn|done|at the)\b", listed)[0]
        n += len([x for x in re.split(r",|;|\band\b", body) if x.strip()])
    return n
